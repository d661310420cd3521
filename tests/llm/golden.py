"""The golden ledger: what the engine records for one fixed wire exchange, kept under `tests/llm/golden/`.

The exchange is served by real HTTP servers on 127.0.0.1 speaking each provider's wire format, and
read by the provider SDKs through pydantic-ai, exactly as in production. Everything a dependency
shapes is kept: replies (text, calls, raw arguments), finish reasons, usage with cache and reasoning
tokens, transport errors. What only our own code writes (the prompts, tool results) is replaced by
placeholders, so editing a prompt never touches this file; a dependency upgrade that changes what we
record does, and `tests/llm/test_canonical.py` fails on it.

Regenerate after a deliberate change of the canonical form (then review the diff and commit it)::

    .venv/bin/python -m tests.llm.golden
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from pydantic_ai.models import override_allow_model_requests

from tests.llm.conftest import LOOP_PY, TOOLS_PY, audit_over, ledger_of
from tests.llm.fake_openai import ScriptedOpenAI, call, error, reply, usage

GOLDEN = Path(__file__).resolve().parent / "golden"

_KEPT = ("request", "response", "request-error", "tool-call", "renamed-call-ids", "unit-end")
_VOLATILE = ("seq", "t", "duration_s")


def openai_script() -> dict[str, list[Any]]:
    """One check's exchange: parallel calls with a cached-token usage, bad JSON and a repeated id, an error,
    a reply cut off at the output limit, and a plain text end with reasoning tokens."""
    return {
        "C1": [
            reply(text="Reading first.", tool_calls=[call("a1", "read_file", {"path": "agent/loop.py"}),
                                                     call("a2", "grep", {"pattern": "except"})],
                  usage=usage(1200, 40, cached=1024)),
            reply(tool_calls=[call("b1", "glob", "{not json"), call("a1", "glob", {"pattern": "*.py"})],
                  usage=usage(1500, 30, cached=1024)),
            error(503, "overloaded"),
            reply(text="I will report", finish_reason="length", usage=usage(1600, 8)),
            reply(text="Nothing more to report.", usage=usage(1700, 12, cached=1536, reasoning=5)),
        ],
    }


def normalise(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events a dependency can shape, with our own prompt and tool-result texts replaced by placeholders."""
    out: list[dict[str, Any]] = []
    for e in events:
        if e.get("event") not in _KEPT:
            continue
        e = {k: v for k, v in e.items() if k not in _VOLATILE}
        if e["event"] == "request":
            e["messages"] = [_placeholder(m) for m in e["messages"]]
        if e["event"] == "tool-call":
            e["result"] = "<result>"
        out.append(e)
    return out


def _placeholder(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("role") in ("system", "user", "tool"):
        return {**message, "content": f"<{message['role']}>"}
    return message


def _tree(root: Path) -> Path:
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "loop.py").write_text(LOOP_PY, encoding="utf-8")
    (root / "agent" / "tools.py").write_text(TOOLS_PY, encoding="utf-8")
    return root


def openai_events(tmp: Path, *, stream: bool) -> list[dict[str, Any]]:
    """The normalised ledger events of the OpenAI exchange."""
    with ScriptedOpenAI(openai_script()) as server, override_allow_model_requests(True):
        run = audit_over(server, _tree(tmp / "ws"), ["C1"], tmp / "out", engine="hybrid", stream=stream,
                         transport_retries=1)
    return normalise(ledger_of(run).events)


def lines(events: list[dict[str, Any]]) -> str:
    """The events as the golden file holds them: one canonical JSON object per line."""
    return "".join(json.dumps(e, sort_keys=True, ensure_ascii=False) + "\n" for e in events)


def main() -> int:
    """Write every golden file anew."""
    GOLDEN.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = GOLDEN / "openai_chat.ledger.jsonl"
        path.write_text(lines(openai_events(Path(tmp), stream=False)), encoding="utf-8")
        print(f"{path}: written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
