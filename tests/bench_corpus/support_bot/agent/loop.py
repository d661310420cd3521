from __future__ import annotations

import json
import logging
import re
from typing import Callable

from openai import OpenAI

from .prompts import build_system_prompt, tool_schemas
from .store import SessionStore
from .tools import NEEDS_CONFIRMATION, TOOLS

log = logging.getLogger("support_bot.loop")

MODEL = "gpt-4o-2024-08-06"
MAX_MESSAGES = 40
TICKET_RE = re.compile(r"#(\d{4,})")

Confirm = Callable[[str, dict], bool]


def _note_ticket_ref(history: list[dict], tool_output: str) -> None:
    """Make the ticket number visible in the assistant turn that created it."""
    m = TICKET_RE.search(tool_output)
    if not m:
        return
    for msg in reversed(history):
        if msg.get("role") == "assistant":
            msg["content"] = (msg.get("content") or "") + f"\n(ref: ticket #{m.group(1)})"
            return


class SupportAgent:
    def __init__(self, store: SessionStore, client: OpenAI | None = None, confirm: Confirm | None = None):
        self.client = client or OpenAI()
        self.store = store
        self.confirm = confirm or (lambda name, args: True)

    def _window(self, history: list[dict]) -> list[dict]:
        if len(history) <= MAX_MESSAGES:
            return history
        return history[-MAX_MESSAGES:]

    def _request_messages(self, state: dict) -> list[dict]:
        system = {"role": "system", "content": build_system_prompt(state.get("customer"))}
        return [system] + self._window(state["messages"])

    def _trace(self, session_id: str, turn: int, name: str, args: dict, output: str) -> None:
        log.info(
            "session=%s turn=%d tool=%s args=%s output=%r",
            session_id, turn, name, json.dumps(args)[:300], output[:200],
        )

    def _new_state(self, customer: dict | None) -> dict:
        return {"customer": customer, "messages": []}

    def add_operator_note(self, session_id: str, note: str) -> None:
        state = self.store.load(session_id)
        if state is None:
            raise KeyError(session_id)
        state["messages"].append(
            {"role": "system", "content": f"Note from the human supervisor: {note.strip()}"}
        )
        self.store.save(session_id, state)

    def handle(self, session_id: str, user_text: str, customer: dict | None = None) -> str:
        state = self.store.load(session_id) or self._new_state(customer)
        history: list[dict] = state["messages"]
        history.append({"role": "user", "content": user_text})

        turn = 0
        while True:
            turn += 1
            resp = self.client.chat.completions.create(
                model=MODEL,
                messages=self._request_messages(state),
                tools=tool_schemas(),
                temperature=0.2,
            )
            choice = resp.choices[0]
            msg = choice.message

            if choice.finish_reason == "length":
                log.warning("session=%s turn=%d: reply truncated, asking for a shorter one", session_id, turn)
                history.append({"role": "user", "content": "(Your last reply was cut off. Please be briefer.)"})
                continue

            history.append(msg.model_dump(exclude_none=True))
            if not msg.tool_calls:
                self.store.save(session_id, state)
                return msg.content or ""

            for call in msg.tool_calls:
                name = call.function.name
                args = json.loads(call.function.arguments)

                if name in NEEDS_CONFIRMATION and not self.confirm(name, args):
                    self.store.save(session_id, state)
                    return "No problem, I've left that ticket open. Anything else I can help with?"

                try:
                    output = TOOLS[name]["fn"](**args)
                except Exception:
                    log.exception("tool %s failed in session %s", name, session_id)
                    continue

                self._trace(session_id, turn, name, args, output)
                history.append({"role": "tool", "tool_call_id": call.id, "content": output})
                if name == "open_ticket":
                    _note_ticket_ref(history, output)
