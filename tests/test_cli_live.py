"""The terminal face: live rows on a terminal, plain lines elsewhere, and the final line every run ends with."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest

from harness_audit.api import audit
from harness_audit.cli import main
from harness_audit.cli.live import TerminalProgress, final_line
from harness_audit.findings import CheckId, LandmarkKind, Usage
from harness_audit.progress import ProgressEvent, ProgressKind
from harness_audit.report import Price

EXAMPLE = Path(__file__).parent.parent / "examples" / "agent_loop"


def test_plain_lines_per_check_then_the_final_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(EXAMPLE), "C1,C8", "--no-cache", "-o", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "C1 done · 1 found · 0 refused" in captured.err
    assert " C8 done · 0 found · 0 refused" in captured.err
    last = captured.out.strip().splitlines()[-1]
    assert last.startswith("1 found (1 confirmed, 0 suspected, 0 not implemented)")
    assert "0 not covered" in last and "0 files skipped" in last and "cost $0.0000" in last


def test_no_progress_and_quiet_keep_stderr_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main([str(EXAMPLE), "C1", "--no-progress", "-o", str(tmp_path)])
    assert capsys.readouterr().err == ""
    main(["-q", str(EXAMPLE), "C1", "-o", str(tmp_path)])
    captured = capsys.readouterr()
    assert captured.err == "" and all(line.endswith((".md", ".json", ".sarif")) for line in captured.out.split())


def test_live_rows_show_state_findings_refusals_tokens_and_cost() -> None:
    out = io.StringIO()
    display = TerminalProgress((CheckId.C1, CheckId.C8, CheckId.C12), engine="llm", language="en",
                               price=Price(input=2.0, cached_input=0.5, output=8.0), stream=out, live=True)
    with display:
        display(ProgressEvent(kind=ProgressKind.RUN_DIR, paths=("/runs/r1",)))
        display(ProgressEvent(kind=ProgressKind.CHECK_STARTED, check=CheckId.C1))
        display(ProgressEvent(kind=ProgressKind.CHECK_DONE, check=CheckId.C1, findings=2, refusals=1,
                              usage=Usage(input_tokens=1000, output_tokens=100, requests=3)))
        display(ProgressEvent(kind=ProgressKind.NOT_COVERED, check=CheckId.C8, missing=(LandmarkKind.TOOL_EXECUTION,)))
    text = out.getvalue()
    assert "run directory: /runs/r1" in text and "harness-audit cancel /runs/r1" in text
    final = text[text.rindex("check"):]  # the last drawing of the table
    rows = {line.split()[0]: line.split() for line in final.splitlines()[1:] if line.strip()}
    assert rows["C1"][1:] == ["done", "2", "1", "1,100", "$0.0028"]
    assert rows["C8"][1:3] == ["not", "covered"]
    assert rows["C12"][1:] == ["queued"]


def test_final_line_says_cancelled_and_clean(tmp_path: Path) -> None:
    report = audit(EXAMPLE, ["C8"], overrides={"output_dir": str(tmp_path)}, write=False).report
    assert final_line(report, "en").startswith("clean · 0 not covered · 0 files skipped")
    cancelled = dataclasses.replace(report, meta=dataclasses.replace(report.meta, state="cancelled"))
    assert final_line(cancelled, "en").startswith("CANCELLED · clean")
    assert final_line(cancelled, "zh").startswith("已取消(CANCELLED) · 未发现问题")


def test_counts_of_one_are_singular(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`1 check`, `1 file skipped`, never `1 checks`; Chinese has no plural and says the same in both cases."""
    from harness_audit.report import FileNote

    report = audit(EXAMPLE, ["C8"], overrides={"output_dir": str(tmp_path)}, write=False).report
    one = dataclasses.replace(report, skipped_files=(FileNote(path="big.py", reason="too large"),))
    assert " · 1 file skipped · " in final_line(one, "en") and " · 跳过 1 个文件 · " in final_line(one, "zh")
    assert main([str(EXAMPLE), "C8", "-o", str(tmp_path), "--format", "json", "--language", "en"]) == 0
    header = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("harness-audit "))
    assert " · 1 check · 4 files · " in header
