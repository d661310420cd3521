from __future__ import annotations

import argparse
import logging
import os
import signal
import sys

from .builtin_tools import BUILTINS
from .client import ChatClient
from .events import EventLog
from .loop import Runner
from .registry import ToolRegistry


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="opsrun")
    ap.add_argument("task", nargs="?")
    ap.add_argument("--resume", metavar="EVENTS_JSONL")
    ap.add_argument("--plugins", default=os.environ.get("OPSRUN_PLUGINS", "/etc/opsrun/plugins"))
    ap.add_argument("--events", default="./opsrun-events.jsonl")
    ap.add_argument("--max-turns", type=int, default=25)
    ns = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")

    registry = ToolRegistry()
    for tool in BUILTINS:
        registry.register(tool)
    if os.path.isdir(ns.plugins):
        registry.discover(ns.plugins)

    client = ChatClient(
        os.environ.get("OPSRUN_BASE_URL", "http://localhost:8000"),
        os.environ["OPSRUN_API_KEY"],
        os.environ.get("OPSRUN_MODEL", "qwen2.5-72b-instruct"),
    )
    runner = Runner(client, registry, EventLog(ns.resume or ns.events), max_turns=ns.max_turns)
    signal.signal(signal.SIGINT, lambda *_: runner.cancel.set())

    try:
        result = runner.resume(ns.resume) if ns.resume else runner.run(ns.task or sys.stdin.read())
    finally:
        client.close()
    print(f"[{result.status}] turns={result.turns} tool_calls={result.tool_calls}")
    print(result.answer)
    return 0 if result.status == "completed" else 1


if __name__ == "__main__":
    sys.exit(main())
