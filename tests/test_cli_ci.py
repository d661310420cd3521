"""What a CI gate relies on: exit codes that never go green on nothing, and pipes that never crash."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness_audit.cli import main
from tests.conftest import MakeTree

EXAMPLE = Path(__file__).parent.parent / "examples" / "agent_loop"
CLEAN = "def add(a, b):\n    return a + b\n"


def test_an_empty_directory_exits_3_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main([str(empty), "all", "-q", "--output-dir", str(tmp_path / "out")]) == 3
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "0 files analysed" in err[0] and "--allow-empty" in err[0]


def test_excluding_everything_exits_3(tmp_path: Path, make_tree: MakeTree, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_tree({"src/m.py": CLEAN})
    assert main([str(root), "all", "-q", "--extend-exclude", "src", "--output-dir", str(tmp_path / "o")]) == 3
    assert "0 files analysed" in capsys.readouterr().err


def test_every_check_not_covered_exits_3(tmp_path: Path, make_tree: MakeTree,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    root = make_tree({"m.py": CLEAN})  # no agent loop, no tool execution: nothing a check can look at
    assert main([str(root), "C1,C12", "-q", "--output-dir", str(tmp_path / "o")]) == 3
    assert "every selected check is not covered (C1, C12)" in capsys.readouterr().err


def test_allow_empty_opts_out(tmp_path: Path, make_tree: MakeTree, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_tree({"m.py": CLEAN})
    assert main([str(root), "C1,C12", "-q", "--allow-empty", "--output-dir", str(tmp_path / "o")]) == 0
    cfg = make_tree({"m.py": CLEAN, ".harness-audit.toml": "allow_empty = true\n"})
    assert main([str(cfg), "C1", "-q", "--output-dir", str(tmp_path / "o")]) == 0


def test_a_partly_covered_audit_is_not_empty(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(EXAMPLE), "C1,C12", "-q", "--fail-on", "never", "--output-dir", str(tmp_path)]) == 0


@pytest.mark.parametrize("args", [["explain", "C8"], ["checks"], [str(EXAMPLE), "all", "--no-cache"]])
def test_a_closed_pipe_is_not_a_crash(tmp_path: Path, args: list[str]) -> None:
    cmd = [sys.executable, "-c", "from harness_audit.cli import console_main; console_main()", *args]
    if "all" in args:
        cmd += ["--output-dir", str(tmp_path)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # what `| head -0` does: closed before the first write, so every write meets EPIPE
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=60)
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err
    assert code == 141
