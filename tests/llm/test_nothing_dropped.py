"""Nothing silently dropped (issue 15): each case exits non-zero and names what was dropped.

- a hybrid model that only answers "Done." (or declines a lead in prose): the leads stay findings (exit 1);
- a recon that reports nothing: a failed unit named in the report, the checks run on static landmarks (exit 3);
- a lead the model dismisses: listed with its reason (test_engine.py, every format);
- a run whose checks all failed, or were all not covered: never exit 0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_audit.cli import main
from tests.llm.conftest import cli_args, json_report, markdown_report
from tests.llm.fake_openai import ScriptedOpenAI, error, reply


def _printed(text: str) -> list[Path]:
    return [Path(line) for line in text.splitlines() if line.endswith((".json", ".md"))]


@pytest.mark.parametrize("answer", ["Done.", "C1-1 is a false positive: the exception is logged upstream."],
                         ids=["lazy", "declined-in-prose"])
def test_leads_a_model_leaves_alone_keep_their_static_verdict(
        harness: Path, out: Path, capsys: pytest.CaptureFixture[str], answer: str) -> None:
    with ScriptedOpenAI({"C1": [reply(text=answer)]}) as server:
        code = main(cli_args(server, harness, "C1", out, "--engine", "hybrid"))
    paths = _printed(capsys.readouterr().out)
    assert code == 1
    data = json_report(paths)
    assert [(lead["id"], lead["status"]) for lead in data["leads"]] == [("C1-1", "unaddressed")]
    assert [f["source"] for f in data["findings"]] == ["static:C1/except-continue-skips-result"]
    assert "1 unaddressed" in markdown_report(paths)


def test_a_run_whose_checks_all_failed_never_exits_0(harness: Path, out: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with ScriptedOpenAI({"C1": [error(503)] * 2, "C12": [error(400)]}) as server:
        code = main(cli_args(server, harness, "C1,C12", out, "--engine", "hybrid"))
    paths = _printed(capsys.readouterr().out)
    assert code == 3
    data = json_report(paths)
    assert data["meta"]["state"] == "incomplete"
    assert [o["status"] for o in data["outcomes"]] == ["failed:provider-unavailable", "failed:provider-error"]
    md = markdown_report(paths)
    assert "| C1 · Tool-call pairing completeness | failed:provider-unavailable |" in md
    # the static leads were handed to units that failed: none is dropped, each keeps its static verdict
    assert [(lead["id"], lead["status"]) for lead in data["leads"]] == [("C1-1", "unaddressed"),
                                                                        ("C12-1", "unaddressed")]
    assert sorted(f["check"] for f in data["findings"]) == ["C1", "C12"]


def test_a_run_whose_checks_were_all_not_covered_never_exits_0(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.py").write_text("VERSION = '1.0'\n", encoding="utf-8")
    out = tmp_path / "out"
    with ScriptedOpenAI({"recon": [reply(text="Nothing here.")]}) as server:
        code = main(cli_args(server, root, "C1,C12", out))
    captured = capsys.readouterr()
    assert code == 3
    assert "every selected check is not covered (C1, C12)" in captured.err
