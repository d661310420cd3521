"""`harness-audit trace` and `harness-audit PATH C1 --trace FILE`: the same gate, pipeline and reports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness_audit.cli import SUBCOMMANDS, main
from tests.trace._run import DATA

MADE = DATA / "made"


def _report(out: Path) -> dict[str, object]:
    (path,) = out.glob("report-*.json")
    return json.loads(path.read_text())


def test_trace_is_a_subcommand() -> None:
    assert "trace" in SUBCOMMANDS


def test_findings_give_exit_1_and_all_three_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = shutil.copy(MADE / "c01_unanswered_call.jsonl", tmp_path / "run.jsonl")
    out = tmp_path / "out"
    assert main(["trace", str(trace), "--output-dir", str(out), "-q"]) == 1
    assert sorted(p.suffix for p in out.glob("report-*")) == [".json", ".md", ".sarif"]
    printed = capsys.readouterr().out.split()
    assert len(printed) == 3
    report = _report(out)
    meta = report["meta"]
    assert isinstance(meta, dict) and meta["engine"] == "trace"
    findings = report["findings"]
    assert isinstance(findings, list)
    assert [(f["check"], f["file"], f["line"], f["language"]) for f in findings] == [("C1", "run.jsonl", 2, "trace")]
    sarif = json.loads(next(out.glob("*.sarif")).read_text())
    assert sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] == 2


def test_clean_trace_exits_0(tmp_path: Path) -> None:
    trace = shutil.copy(MADE / "clean_anthropic.jsonl", tmp_path / "a.jsonl")
    assert main(["trace", str(trace), "--output-dir", str(tmp_path / "o"), "-q", "--format", "json"]) == 0
    assert [p.suffix for p in (tmp_path / "o").glob("report-*")] == [".json"]


def test_checks_and_forced_format(tmp_path: Path) -> None:
    trace = shutil.copy(MADE / "c01_calls_dropped.jsonl", tmp_path / "x.log")
    out = tmp_path / "o"
    assert main(["trace", str(trace), "--input-format", "jsonl", "--checks", "C2", "--output-dir", str(out), "-q"]) == 1
    report = _report(out)
    assert [f["check"] for f in report["findings"]] == ["C2"]  # type: ignore[index,union-attr]
    assert report["meta"]["requested_checks"] == ["C2"]  # type: ignore[index]


def test_several_files_share_the_common_parent_as_root(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b" / ".harness-audit").mkdir(parents=True)
    one = shutil.copy(MADE / "c04_duplicate_ids.jsonl", tmp_path / "a" / "one.jsonl")
    # a trace inside an excluded-by-default folder is still checked: excludes do not apply to given files
    two = shutil.copy(MADE / "c13_starts_with_result.jsonl", tmp_path / "b" / ".harness-audit" / "two.jsonl")
    out = tmp_path / "o"
    assert main(["trace", str(one), str(two), "--output-dir", str(out), "-q"]) == 1
    files = sorted(f["file"] for f in _report(out)["findings"])  # type: ignore[union-attr]
    assert files == ["a/one.jsonl", "b/.harness-audit/two.jsonl"]


def _harness(root: Path) -> None:
    (root / "agent.py").write_text(
        "import json\n\n\ndef loop(client, tools, messages):\n    while True:\n"
        "        reply = client.chat(messages)\n        messages.append(reply)\n"
        "        for call in reply.tool_calls:\n            try:\n"
        "                out = tools[call.name](**json.loads(call.arguments))\n"
        "            except Exception:\n                continue\n"
        "            messages.append({'role': 'tool', 'tool_call_id': call.id, 'content': out})\n")


def test_code_audit_and_trace_in_one_report(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    (root / "traces").mkdir(parents=True)
    _harness(root)
    shutil.copy(MADE / "c01_unanswered_call.jsonl", root / "traces" / "run.jsonl")
    out = tmp_path / "o"
    code = main([str(root), "C1", "--trace", str(root / "traces" / "run.jsonl"), "--output-dir", str(out), "-q"])
    assert code == 1
    report = _report(out)
    found = {(f["file"], f["source"].split(":")[0]) for f in report["findings"]}  # type: ignore[union-attr,index]
    assert ("traces/run.jsonl", "trace") in found
    assert report["meta"]["engine"] == "static"  # type: ignore[index]


def test_trace_outside_the_audited_root_is_said_in_the_notes(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    root.mkdir()
    _harness(root)
    elsewhere = tmp_path / "logs"
    elsewhere.mkdir()
    trace = shutil.copy(MADE / "c01_unanswered_call.jsonl", elsewhere / "run.jsonl")
    out = tmp_path / "o"
    main([str(root), "C1", "--trace", str(trace), "--output-dir", str(out), "-q"])
    report = _report(out)
    assert any(f["file"] == "run.jsonl" for f in report["findings"])  # type: ignore[union-attr,index]
    assert any("not to the audited root" in n for n in report["meta"]["notes"])  # type: ignore[index,union-attr]


def test_the_trace_notes_read_in_chinese(tmp_path: Path) -> None:
    """Kept in English in the JSON report (above), shown in the reader's language in the Markdown one."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "agent.py").write_text("x = 1\n", encoding="utf-8")  # no tool execution: C1 is not covered in the code
    elsewhere = tmp_path / "logs"
    elsewhere.mkdir()
    trace = shutil.copy(MADE / "c01_unanswered_call.jsonl", elsewhere / "run.jsonl")
    out = tmp_path / "o"
    main([str(root), "C1", "--trace", str(trace), "--output-dir", str(out), "-q", "--language", "zh"])
    notes = _report(out)["meta"]["notes"]  # type: ignore[index]
    assert any("not covered in the code" in n for n in notes)  # type: ignore[union-attr]
    md = (out / "latest.md").read_text(encoding="utf-8")
    assert "追踪的发现是相对于" in md and "C1:代码里未覆盖" in md and "段对话里有" in md
