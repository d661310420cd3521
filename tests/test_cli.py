"""`main(argv) -> int`: selection forms, exit codes and error messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_audit.cli import main
from tests.conftest import MakeTree

EXAMPLE = Path(__file__).parent.parent / "examples" / "agent_loop"
CLEAN = "def add(a, b):\n    return a + b\n"


def run_json(capsys: pytest.CaptureFixture[str], args: list[str]) -> tuple[int, dict[str, object]]:
    code = main([*args, "--format", "json", "-q"])
    out = capsys.readouterr().out.strip().splitlines()
    return code, json.loads(Path(out[-1]).read_text())


@pytest.mark.parametrize("selection", [["C1"], ["c1"], ["C1,C9"], ["C1", "C9"], ["--checks", "C1"],
                                       ["--check", "c2"], ["-c", "C1"], ["p1"], ["all"]])
def test_selection_forms(tmp_path: Path, capsys: pytest.CaptureFixture[str], selection: list[str]) -> None:
    code, rep = run_json(capsys, [str(EXAMPLE), *selection, "--output-dir", str(tmp_path)])
    assert code in (0, 1)
    assert rep["meta"]["requested_checks"]  # type: ignore[index]


def test_path_defaults_to_cwd(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                              make_tree: MakeTree) -> None:
    root = make_tree({"m.py": CLEAN})
    monkeypatch.chdir(root)
    code, rep = run_json(capsys, ["C1", "--allow-empty", "--output-dir", str(tmp_path)])
    assert code == 0 and rep["meta"]["root"] == str(root.resolve())  # type: ignore[index]


def test_check_flag_before_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, rep = run_json(capsys, ["--check", "c12", str(EXAMPLE), "--output-dir", str(tmp_path)])
    assert rep["meta"]["requested_checks"] == ["C12"] and code == 1  # type: ignore[index]


@pytest.mark.parametrize(("args", "named"), [
    (["C99"], "C99"), (["X1"], "X1"), (["p1", "C1"], "p1"), (["--checks"], "--checks"),
    (["--check", ""], "empty"), (["C1", "--format", "pdf"], "pdf"), (["C1", "--concurrency", "0"], "concurrency"),
    (["C1", "--fail-on", "maybe"], "maybe"),
])
def test_bad_input_exits_2_and_names_it(capsys: pytest.CaptureFixture[str], args: list[str], named: str) -> None:
    assert main([str(EXAMPLE), *args]) == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err


def test_missing_path_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main([str(tmp_path / "nope"), "C1"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_no_selection_without_terminal_is_refused(capsys: pytest.CaptureFixture[str], make_tree: MakeTree) -> None:
    root = make_tree({"m.py": CLEAN})
    assert main([str(root)]) == 2
    assert "no checks selected" in capsys.readouterr().err


def test_configured_checks_respect_floor_but_explicit_ids_do_not(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_tree: MakeTree
) -> None:
    root = make_tree({"m.py": CLEAN, ".harness-audit.toml": 'checks = ["C1", "C2"]\npriority_floor = 1\n'})
    _, rep = run_json(capsys, [str(root), "--output-dir", str(tmp_path)])
    assert rep["meta"]["requested_checks"] == ["C1"]  # type: ignore[index]
    _, rep = run_json(capsys, [str(root), "C2", "--output-dir", str(tmp_path)])
    assert rep["meta"]["requested_checks"] == ["C2"]  # type: ignore[index]


@pytest.mark.parametrize(("toml", "named"), [
    ("chekcs = ['C1']\n", "chekcs"), ("concurrency = 40\n", "concurrency"), ("priority_floor = 3\n", "priority_floor"),
    ("max_tokens_per_check = 5\n", "max_tokens_per_check"), ("checks = ['C77']\n", "C77"),
    ("language = 'fr'\n", "language"), ("engine = 'magic'\n", "engine"), ("exclude_paths = ['a/b']\n", "a/b"),
    ("checks = [", "TOML"),
])
def test_bad_config_exits_2_naming_the_key(capsys: pytest.CaptureFixture[str], make_tree: MakeTree, toml: str,
                                           named: str) -> None:
    root = make_tree({"m.py": CLEAN, ".harness-audit.toml": toml})
    assert main([str(root), "C1"]) == 2
    assert named in capsys.readouterr().err


def test_pyproject_table_is_read(capsys: pytest.CaptureFixture[str], make_tree: MakeTree) -> None:
    root = make_tree({"m.py": CLEAN, "pyproject.toml": "[tool.harness-audit]\nconcurency = 2\n"})
    assert main([str(root), "C1"]) == 2
    assert "concurency" in capsys.readouterr().err


def test_fail_on_drives_exit_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(EXAMPLE), "C12", "--output-dir", str(tmp_path), "-q"]) == 1
    assert main([str(EXAMPLE), "C12", "--output-dir", str(tmp_path), "-q", "--fail-on", "never"]) == 0
    capsys.readouterr()


def test_checks_and_explain(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["checks"]) == 0
    out = capsys.readouterr().out
    assert "C15" in out and "Tool-call pairing" in out
    assert main(["explain", "c12"]) == 0
    assert "unbounded-turn-loop" in capsys.readouterr().out
    assert main(["explain", "C16"]) == 2


def test_syntax_error_file_is_listed_and_audit_completes(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         make_tree: MakeTree) -> None:
    root = make_tree({"bad.py": "def f(:\n", "m.py": CLEAN})
    code, rep = run_json(capsys, [str(root), "all", "--allow-empty", "--output-dir", str(tmp_path)])
    assert code == 0
    assert rep["unparsed_files"][0]["path"] == "bad.py"  # type: ignore[index]
