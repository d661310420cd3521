"""Local console for poking at the support agent.

    python main.py --session demo --customer-id 4411
"""
from __future__ import annotations

import argparse
import logging
import uuid

from agent.loop import SupportAgent
from agent.store import SessionStore


def _console_confirm(name: str, args: dict) -> bool:
    answer = input(f"[operator] allow {name}({args})? [y/N] ")
    return answer.strip().lower() in {"y", "yes"}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--session", default=None)
    ap.add_argument("--customer-id", required=True)
    ap.add_argument("--store", default="./sessions")
    ap.add_argument("-v", "--verbose", action="store_true")
    ns = ap.parse_args()

    logging.basicConfig(level=logging.DEBUG if ns.verbose else logging.INFO)
    session_id = ns.session or uuid.uuid4().hex
    agent = SupportAgent(SessionStore(ns.store), confirm=_console_confirm)
    customer = {"id": ns.customer_id, "name": "Console User", "plan": "pro"}

    print(f"session {session_id}; Ctrl-D to quit")
    while True:
        try:
            line = input("you> ")
        except EOFError:
            break
        if not line.strip():
            continue
        if line.startswith("/note "):
            agent.add_operator_note(session_id, line[len("/note "):])
            continue
        print("aria>", agent.handle(session_id, line, customer))


if __name__ == "__main__":
    main()
