from __future__ import annotations

import itertools
import json
import logging
import threading
from dataclasses import dataclass
from datetime import datetime, timezone

from .client import ChatClient
from .context import ContextOverflow, fit_context
from .events import EventLog, read_events
from .registry import ToolRegistry

log = logging.getLogger("opsrun.loop")

SYSTEM_PROMPT = """You are opsrun, the platform team's operations assistant.
You can inspect hosts, read logs and run remediation playbooks.
Prefer read-only tools. Only run a playbook when the evidence clearly calls
for it, and page on-call if you are not confident. Be brief."""

MAX_TOOL_OUTPUT = 16_000


@dataclass
class RunResult:
    status: str
    answer: str
    turns: int
    tool_calls: int


def _tool_msg(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


class Runner:
    def __init__(self, client: ChatClient, registry: ToolRegistry, events: EventLog, *,
                 max_turns: int = 25, max_tool_calls: int = 60, context_tokens: int = 100_000):
        self.client = client
        self.registry = registry
        self.events = events
        self.max_turns = max_turns
        self.max_tool_calls = max_tool_calls
        self.context_tokens = context_tokens
        self.cancel = threading.Event()
        self.tool_calls_used = 0

    def run(self, task: str) -> RunResult:
        stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        user = f"{task}\n\n(Current time: {stamp})"
        self.events.emit("task", content=user)
        messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]
        return self._drive(messages, first_turn=0)

    def _invoke(self, name: str, args: dict) -> str:
        tool = self.registry.get(name)
        if tool is None:
            raise LookupError(f"no tool named {name!r}")
        if tool.cancellable:
            args = {**args, "cancel": self.cancel}
        return tool.fn(**args)

    def _run_calls(self, calls: list[dict], messages: list[dict]) -> bool:
        """Execute one batch of tool calls. Returns True when the tool budget ran out."""
        for i, call in enumerate(calls):
            if self.tool_calls_used >= self.max_tool_calls:
                for rest in calls[i:]:
                    messages.append(_tool_msg(rest["id"], "not run: this session's tool-call budget is used up"))
                return True
            self.tool_calls_used += 1
            name = call["function"]["name"]
            self.events.emit("tool_call", id=call["id"], name=name, arguments=call["function"]["arguments"])
            output = ""
            try:
                args = json.loads(call["function"]["arguments"] or "{}")
                output = self._invoke(name, args)
            except json.JSONDecodeError as exc:
                output = f"arguments were not valid JSON ({exc.msg} at char {exc.pos}); resend the call"
            except Exception as exc:
                output = f"error: {exc}"
            finally:
                output = str(output)[:MAX_TOOL_OUTPUT]
                messages.append(_tool_msg(call["id"], output))
                self.events.emit("tool_result", name=name, output=output)
        return False

    def _drive(self, messages: list[dict], first_turn: int) -> RunResult:
        tools = self.registry.schemas()
        answer, turn = "", first_turn
        for turn in itertools.count(first_turn):
            if turn >= self.max_turns:
                log.warning("stopping after %d turns", turn)
                break
            self.events.emit("turn_start", turn=turn)
            try:
                window = fit_context(messages, self.context_tokens)
            except ContextOverflow as exc:
                self.events.emit("context_overflow", turn=turn, detail=str(exc))
                return RunResult("context_exhausted", "", turn, self.tool_calls_used)

            res = self.client.stream_chat(window, tools)
            self.events.emit("completion", turn=turn, finish=res.finish_reason, usage=res.usage, attempts=res.attempts)
            if res.finish_reason == "length":
                log.warning("turn %d: completion stopped at max_tokens", turn)

            msg: dict = {"role": "assistant", "content": res.content or None}
            if res.tool_calls:
                msg["tool_calls"] = res.tool_calls
            messages.append(msg)
            self.events.emit("assistant", turn=turn, message=msg)
            if not res.tool_calls:
                answer = res.content
                break
            # some self-hosted backends stream tool calls without ids
            for n, tc in enumerate(messages[-1]["tool_calls"]):
                if not tc.get("id"):
                    tc["id"] = f"call_{turn}_{n}"
            if self._run_calls(res.tool_calls, messages):
                return RunResult("tool_budget_exhausted", "", turn + 1, self.tool_calls_used)
        return RunResult("completed", answer, turn + 1, self.tool_calls_used)

    def resume(self, log_path: str) -> RunResult:
        messages: list[dict] = []
        pending: list[dict] = []
        turn = 0
        for ev in read_events(log_path):
            kind = ev["type"]
            if kind == "task":
                messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": ev["content"]}]
            elif kind == "assistant":
                messages.append(ev["message"])
                pending = list(ev["message"].get("tool_calls") or [])
                turn = ev["turn"] + 1
            elif kind == "tool_result" and pending:
                messages.append(_tool_msg(pending.pop(0)["id"], ev["output"]))
        if pending:
            log.info("resuming: %d tool call(s) from the last turn have no result, running them now", len(pending))
            self._run_calls(pending, messages)
        return self._drive(messages, first_turn=turn)
