"""The check picker, driven through a real pseudo-terminal: Enter, arrows and space, Esc, q and Ctrl-D."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness_audit.catalogue import CHECKS, P1

EXAMPLE = Path(__file__).parent.parent / "examples" / "agent_loop"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class Terminal:
    """`harness-audit` on the slave side of a pty; the test types on the master side."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        self.master, slave = pty.openpty()
        cmd = [sys.executable, "-c", "from harness_audit.cli import console_main; console_main()", *args]
        self.proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                                     env={**os.environ, "LANG": "en_US.UTF-8", **(env or {})})
        os.close(slave)
        self.screen = ""

    def read_until(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        while text not in _ANSI.sub("", self.screen):
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; screen:\n{_ANSI.sub('', self.screen)}")
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.screen += os.read(self.master, 4096).decode("utf-8", "replace")
                except OSError:  # the child closed the terminal
                    break
        return _ANSI.sub("", self.screen)

    def type(self, keys: str, pause: float = 0.15) -> None:
        os.write(self.master, keys.encode())
        time.sleep(pause)

    def finish(self, timeout: float = 60.0) -> int:
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.screen += os.read(self.master, 4096).decode("utf-8", "replace")
                except OSError:
                    break
        code = self.proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        while select.select([self.master], [], [], 0.2)[0]:  # what the child wrote just before it exited
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                break
            if not chunk:
                break
            self.screen += chunk.decode("utf-8", "replace")
        os.close(self.master)
        return code


def _start(tmp_path: Path) -> Terminal:
    term = Terminal([str(EXAMPLE), "-o", str(tmp_path / "out"), "--format", "json", "--no-cache"])
    term.read_until("C15")
    return term


def _requested(tmp_path: Path) -> list[str]:
    (report,) = (tmp_path / "out").glob("report-*.json")
    return json.loads(report.read_text())["meta"]["requested_checks"]


def test_the_checklist_lists_the_catalogue_in_order_with_the_legend(tmp_path: Path) -> None:
    term = _start(tmp_path)
    screen = term.read_until("C15")
    ids = re.findall(r"\] (C\d+)\s", screen)
    assert ids == [c.value for c in CHECKS]  # C1…C15, never re-sorted
    assert "★ priority 1" in screen and "p1" in screen and "all fifteen checks" in screen
    for check in P1:
        assert re.search(rf"\] {check.value}\s+★", screen)
    assert "Every tool call gets exactly one result" in screen  # the glosses
    term.type("q")
    assert term.finish() == 130


def test_enter_on_nothing_runs_p1(tmp_path: Path) -> None:
    term = _start(tmp_path)
    term.type("\r")
    assert term.finish() in (0, 1)
    assert "running: p1" in _ANSI.sub("", term.screen)
    assert _requested(tmp_path) == [c.value for c in P1]


def test_arrows_and_space_tick_checks(tmp_path: Path) -> None:
    term = _start(tmp_path)
    term.type("\x1b[B\x1b[B")  # past p1 and all, onto C1
    term.type(" ")
    term.type("j" * 7)  # C8
    term.type(" ")
    term.type("\r")
    assert term.finish() in (0, 1)
    assert _requested(tmp_path) == ["C1", "C8"]


@pytest.mark.parametrize("key", ["\x1b", "q", "\x04"], ids=["esc", "q", "ctrl-d"])
def test_cancel_exits_130_and_writes_no_report(tmp_path: Path, key: str) -> None:
    term = _start(tmp_path)
    term.type(key, pause=0.3)
    assert term.finish() == 130
    assert "cancelled at the check picker; no report was written" in _ANSI.sub("", term.screen)
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").glob("report-*"))
    assert "Traceback" not in term.screen


def test_without_a_terminal_and_no_configuration_it_says_how_to_choose(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "harness_audit", str(EXAMPLE), "-o", str(tmp_path)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "pass ids (C1,C9), `p1` or `all`, or set `checks`" in proc.stderr
