"""One CLI grammar: selections everywhere, --format always the output, global flags anywhere, paths from the cwd."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_audit.cli import main, split_command_line
from tests.conftest import MakeTree

EXAMPLE = Path(__file__).parent.parent / "examples" / "agent_loop"
MADE = Path(__file__).parent / "trace" / "data" / "made"
CLEAN = "def add(a, b):\n    return a + b\n"


@pytest.mark.parametrize("argv", [["-q", "checks"], ["checks", "-q"], ["--language", "zh", "checks"],
                                  ["checks", "--language=en"], ["--verbose", "explain", "C1"],
                                  ["explain", "C1", "--verbose", "-q"]])
def test_global_flags_work_before_or_after_the_subcommand(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 0
    assert capsys.readouterr().out.strip()


def test_split_command_line_takes_globals_out_wherever_they_stand() -> None:
    line = split_command_line(["-q", "--language", "zh", "explain", "C1", "--verbose"])
    assert (line.name, line.args, line.options.quiet, line.options.verbose, line.options.language) == (
        "explain", ["C1"], True, True, "zh")
    assert split_command_line(["audit", "checks"]).name == "audit"  # a directory named like a subcommand
    assert split_command_line(["x", "--", "-q"]).args == ["x", "--", "-q"]


def test_a_bad_global_value_is_refused_by_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--language", "fr", "checks"]) == 2
    assert "'fr'" in capsys.readouterr().err


@pytest.mark.parametrize("args", [["C1", "C2"], ["c01"], ["C1,C2"], ["C1 C2"], ["p1"], ["C12/unbounded-turn-loop"]])
def test_explain_takes_what_a_selection_takes(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", *args]) == 0
    out = capsys.readouterr().out
    assert "C1" in out or "C12" in out


def test_explain_of_a_rule_id_prints_that_rule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "C12/unbounded-turn-loop"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# `C12/unbounded-turn-loop`") and "## Static rules" not in out


@pytest.mark.parametrize("bad", ["C99", "C8/no-such-rule", "X1"])
def test_explain_refuses_what_it_cannot_read(bad: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", bad]) == 2
    assert bad in capsys.readouterr().err


@pytest.mark.parametrize("selection", [["C1 C9"], ["c01,c09"], ["C1", "C9"], ["C09/retry-loop-repeats-side-effect"]])
def test_audit_takes_the_forms_help_offers(selection: list[str], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    code = main([str(EXAMPLE), *selection, "-o", "-", "--format", "json", "-q"])
    rep = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and "C9" in rep["meta"]["requested_checks"]


def test_json_and_sarif_go_to_stdout_with_o_dash(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main([str(EXAMPLE), "C1", "-o", "-", "--format", "sarif"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["version"] == "2.1.0"
    assert "1 confirmed" in captured.err  # the summary goes to stderr, stdout stays the report


def test_o_dash_needs_one_format(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(EXAMPLE), "C1", "-o", "-", "--format", "md,json"]) == 2
    assert "one report" in capsys.readouterr().err


def test_output_dir_is_relative_to_the_working_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert main([str(EXAMPLE), "C1", "--output-dir", "reports", "--format", "json", "-q"]) == 1
    written = Path(capsys.readouterr().out.split()[0])
    assert written.parent == tmp_path / "reports"


def test_trace_format_is_the_output_and_input_format_names_the_trace(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = MADE / "c01_unanswered_call.jsonl"
    assert main(["trace", str(trace), "--input-format", "jsonl", "--format", "json", "-o", "-", "-q"]) == 1
    assert json.loads(capsys.readouterr().out)["findings"][0]["check"] == "C1"
    assert main(["trace", str(trace), "--format", "jsonl", "-o", str(tmp_path)]) == 2
    assert "--input-format" in capsys.readouterr().err


def test_bench_format_json(capsys: pytest.CaptureFixture[str]) -> None:
    corpus = Path(__file__).parent / "bench_corpus"
    assert main(["bench", str(corpus), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["engine"]


def test_every_dropped_check_is_said_with_its_reason(tmp_path: Path, make_tree: MakeTree,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    root = make_tree({"m.py": CLEAN, ".harness-audit.toml": 'checks = ["C1", "C2", "C3"]\npriority_floor = 1\n'})
    main([str(root), "-o", "-", "--format", "json", "--allow-empty"])
    captured = capsys.readouterr()
    assert "C2 not run: priority 2 is above priority_floor = 1" in captured.err
    assert "C3 not run" in captured.err
    rep = json.loads(captured.out)
    assert rep["meta"]["requested_checks"] == ["C1"]
    assert any("C2 not run" in n for n in rep["meta"]["notes"])
