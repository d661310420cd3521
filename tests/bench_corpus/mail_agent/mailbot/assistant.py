"""The assistant loop."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable
from zoneinfo import ZoneInfo

from litellm import completion
from pydantic import ValidationError

from .approval import ConsoleApprover, Decision
from .audit import AuditLog, Outbox, SessionStore
from .models import ARG_MODELS, History, Message
from .tools import Toolbox, tool_definitions

log = logging.getLogger("mailbot")

SYSTEM_PROMPT = """\
You are mailbot, an assistant that handles a user's email, Slack and calendar.
Draft carefully and confirm recipients. Outbound messages are shown to the user
for approval before they are sent; if a send is declined, ask what to change.
Use find_free_time before proposing meeting slots. Never invent addresses.
"""

NEEDS_APPROVAL = frozenset({"send_email", "post_slack", "broadcast_slack"})


class ContextOverflow(RuntimeError):
    pass


def estimate_tokens(messages: list[Message]) -> int:
    chars = 0
    for m in messages:
        chars += len(m.content or "")
        chars += sum(len(c["function"]["arguments"]) + 32 for c in m.tool_calls)
    return chars // 4 + 4 * len(messages)


def trim_history(messages: list[Message], budget: int,
                 count: Callable[[list[Message]], int] = estimate_tokens) -> list[Message]:
    """Drop the oldest whole exchanges until the transcript fits.

    Cuts only where a user message starts, so an assistant tool call is never
    separated from its results.
    """
    if count(messages) <= budget:
        return messages
    starts = [i for i, m in enumerate(messages) if m.role == "user" and i > 0]
    for start in starts:
        candidate = messages[start:]
        if count(candidate) <= budget:
            return candidate
    raise ContextOverflow(f"latest exchange alone exceeds the {budget}-token budget")


@dataclass
class RunResult:
    status: str  # "completed" | "max_turns" | "context_overflow"
    reply: str | None
    turns: int


class Assistant:
    def __init__(self, toolbox: Toolbox, *, model: str = "anthropic/claude-sonnet-4-5",
                 enabled_tools: list[str] | None = None, approver: Any = None,
                 max_turns: int = 12, context_budget: int = 120_000,
                 tz: str = "Europe/Berlin", session_id: str | None = None,
                 notify: Callable[[str], None] = print) -> None:
        self.toolbox = toolbox
        self.handlers = toolbox.handlers()
        self.model = model
        self.tools = tool_definitions(enabled_tools or self.handlers.keys())
        self.approver = approver or ConsoleApprover(reviewer="console")
        self.max_turns = max_turns
        self.context_budget = context_budget
        self.tz = ZoneInfo(tz)
        self.session_id = session_id or uuid.uuid4().hex
        self.audit = AuditLog(self.session_id)
        self.sessions = SessionStore()
        self.history = History(Message("system", SYSTEM_PROMPT))
        self.notify = notify

    # -- request -----------------------------------------------------------
    def _user_message(self, text: str) -> Message:
        now = datetime.now(self.tz)
        return Message.user(f"{text}\n\n(Current time for the user: {now:%A %d %B %Y, %H:%M %Z})")

    def _request(self) -> list[dict[str, Any]]:
        kept = trim_history(self.history.snapshot(), self.context_budget)
        return [self.history.system.to_api(), *(m.to_api() for m in kept)]

    # -- loop --------------------------------------------------------------
    def run(self, text: str) -> RunResult:
        self.history.append(self._user_message(text))
        for turn in range(1, self.max_turns + 1):
            try:
                request = self._request()
            except ContextOverflow as exc:
                self.audit.event("context_overflow", detail=str(exc))
                return RunResult("context_overflow", None, turn)
            resp = completion(model=self.model, messages=request, tools=self.tools,
                              tool_choice="auto", timeout=90, num_retries=2)
            choice = resp.choices[0]
            self.audit.model_call(turn, resp.model, resp.usage, choice.finish_reason)
            msg = Message.from_api(choice.message)
            if choice.finish_reason == "length" and msg.tool_calls:
                self.history.append(Message("assistant", choice.message.content))
                self.history.append(Message.user("(Your reply was cut off mid tool call. Retry in smaller steps.)"))
                continue
            self.history.append(msg)
            self._persist()
            if not msg.tool_calls:
                return RunResult("completed", msg.content, turn)
            self._handle_tool_calls(choice.message.tool_calls)
            self._persist()
        self.audit.event("max_turns", turns=self.max_turns)
        return RunResult("max_turns", None, self.max_turns)

    def _persist(self) -> None:
        self.sessions.save(self.session_id, [m.to_api() for m in self.history])

    # -- tools -------------------------------------------------------------
    def _handle_tool_calls(self, tool_calls: list[Any]) -> None:
        for call in tool_calls:
            name = call.function.name
            self.audit.tool_call(call.id, name, call.function.arguments)
            if name in NEEDS_APPROVAL:
                decision: Decision = self.approver.review(call)
                self.audit.approval(call.id, name, decision.approved, decision.reviewer)
                if not decision.approved:
                    self.notify(f"Not sent: {decision.reason or 'declined'}")
                    return
            result = self._execute(call)
            self.audit.tool_result(call.id, name, result)
            self.history.append(Message.tool(call.id, result))

    def _execute(self, call: Any) -> str:
        name = call.function.name
        handler = self.handlers.get(name)
        if handler is None:
            return f"Unknown tool {name!r}; available: {', '.join(sorted(self.handlers))}"
        try:
            args = ARG_MODELS[name].model_validate_json(call.function.arguments or "{}")
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            return f"Arguments for {name} were rejected: {problems}. Fix them and call again."
        try:
            return handler(args, call_id=call.id)
        except Exception as exc:
            log.warning("tool %s failed: %s", name, exc)
            return f"Tool failed: {exc}"

    def flush_scheduled(self, outbox: Outbox) -> None:
        for item_id in outbox.flush_due(self.toolbox.mail):
            self.audit.event("outbox_sent", item=item_id)
