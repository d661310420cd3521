"""The run ledger: append-only lines, a torn last line detected, no secret ever written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_audit.api import audit
from harness_audit.cli import main
from harness_audit.llm.ledger import Ledger, read_ledger
from tests.llm.fake_openai import ScriptedOpenAI, call, reply, usage

SECRET = "sk-test-DO-NOT-LEAK-4242"


def test_lines_are_whole_objects_and_seq_continues_after_reopen(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    with Ledger(path) as ledger:
        ledger.write("a", n=1)
        ledger.write("b", text="line\nbreak")
    with Ledger(path) as ledger:
        ledger.write("c")
    read = read_ledger(path)
    assert [e["event"] for e in read.events] == ["a", "b", "c"]
    assert [e["seq"] for e in read.events] == [1, 2, 3]
    assert read.events[1]["text"] == "line\nbreak"
    assert not read.torn


def test_a_torn_last_line_is_detected_dropped_and_closed_on_reopen(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    with Ledger(path) as ledger:
        ledger.write("a")
    with path.open("ab") as fh:
        fh.write(b'{"seq":2,"event":"respo')  # a crash in the middle of a write
    read = read_ledger(path)
    assert read.torn and [e["event"] for e in read.events] == ["a"]
    with Ledger(path) as ledger:
        ledger.write("b")
    again = read_ledger(path)
    assert not again.torn
    assert [e["event"] for e in again.events] == ["a", "b"]
    assert again.events[-1]["seq"] == 2 and again.skipped == [2]


def test_a_missing_ledger_is_a_usage_error(tmp_path: Path) -> None:
    assert main(["replay", str(tmp_path)]) == 2


def _tree(root: Path) -> Path:
    root.mkdir()
    (root / "agent.py").write_text(
        "import json\n\n\ndef run_tool(call, tools):\n    args = json.loads(call.arguments)\n"
        "    return tools[call.name](**args)\n", encoding="utf-8")
    return root


def test_no_key_and_no_url_credentials_reach_ledger_or_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    root = _tree(tmp_path / "target")
    script = {
        "recon": [reply(tool_calls=[call("l1", "report_landmark", {"kind": "tool-execution", "file": "agent.py",
                                                                   "line": 6, "confidence": "high"})],
                        usage=usage(50, 5)),
                  reply(text="done", usage=usage(60, 2))],
        "C4": [reply(text="nothing to add", usage=usage(70, 3))],
    }
    with ScriptedOpenAI(script) as server:
        clean = server.base_url
        url = clean.replace("http://", f"http://user:{SECRET}@")
        run = audit(root, ["C4"], overrides={"engine": "llm", "model": "openai:m", "base_url": url,
                                             "output_dir": str(tmp_path / "out")})
        assert not server.exhausted
    assert [o.status_text for o in run.report.outcomes] == ["not-covered"]  # C4 needs stream-parse
    ledger = Path(run.report.meta.ledger or "")
    written = [ledger, *run.paths]
    for path in written:
        assert SECRET not in path.read_text(encoding="utf-8"), path
    start = read_ledger(ledger).of("run-start")[0]
    assert start["base_url"] == clean
    assert json.loads(run.paths[1].read_text())["meta"]["base_url"] == clean
