"""The hostile suite's runner and its one verdict on a run (issue 14, "Keep it this way").

Every family feeds generated inputs to `run_cli` (in this process, or as a subprocess for what must not touch
the test process) and hands the result to `assert_sane`, which asserts what must hold for ANY input:

- the run ends (a deadline; in this process an address-space ceiling too, so a regression that reads without
  limit fails the test instead of the machine);
- the exit code is 0 or 1 with parseable reports, or 2 with exactly one error line on stderr (after progress
  lines, if any); 3 only for an empty audit (0 files analysed, or no check ran: issue 13's rule), with its
  reports and its one-line reason;
- no "internal error" and no traceback;
- every input the generator made unreadable is listed in the report (skipped or unparsed);
- no credential-looking string reaches a report.

`record(family)` counts each input; `conftest.py` prints the counts per family at the end of the session.
Families of other engineers use the same four names: `record`, `hostile_settings`, `run_cli`, `assert_sane`.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from hypothesis import HealthCheck, currently_in_test_context, settings
from hypothesis import event as _event

from harness_audit.redaction import looks_like_secret

FAMILIES = ("workspaces", "config", "cli-arguments", "trace-files", "pytest-plugin", "ledgers", "model-replies")
"""The seven families of the issue, in the order the summary prints them."""

TRIED: Counter[str] = Counter()
"""Inputs tried per family in this session."""

DEFAULT_TIMEOUT_S = 30.0
"""A run that takes longer is a hang: every hostile input here audits a handful of small files."""
DEFAULT_MEMORY_MB = 1024
"""Address space a run may add to the test process (or use, as a subprocess) before it counts as exhaustion."""


def event(text: str) -> None:
    """A hypothesis event (`--hypothesis-show-statistics`), when a hypothesis test is running."""
    if currently_in_test_context():
        _event(text)


def record(family: str, n: int = 1) -> None:
    """Count `n` inputs tried for `family` (one of `FAMILIES`)."""
    assert family in FAMILIES, f"unknown hostile family {family!r}; add it to FAMILIES"
    TRIED[family] += n


def hostile_settings(max_examples: int) -> settings:
    """Hypothesis settings of the suite: seeded (derandomized), no example database, no deadline."""
    return settings(max_examples=max_examples, derandomize=True, database=None, deadline=None, print_blob=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                           HealthCheck.data_too_large, HealthCheck.filter_too_much,
                                           HealthCheck.large_base_example])


class Hung(BaseException):
    """Raised in this process when a run passes its deadline (a BaseException: no `except Exception` eats it)."""


@dataclass(frozen=True, slots=True)
class CliRun:
    """What one run of the CLI did."""

    args: tuple[str, ...]
    """The arguments it was given."""
    code: int
    """Exit code."""
    out: str
    """Standard output."""
    err: str
    """Standard error."""
    hung: bool = False
    """True when it passed its deadline (`code` is then meaningless)."""
    reports: tuple[Path, ...] = field(default=())
    """Report files the run printed (with `-q`, one path a line; otherwise `report: PATH`)."""


def _vm_bytes() -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


@contextlib.contextmanager
def bounded(timeout_s: float, memory_mb: int) -> Iterator[None]:
    """Run the body with a deadline (SIGALRM raises `Hung`) and at most `memory_mb` more address space."""

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        raise Hung(f"no result after {timeout_s:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    old_limit = resource.getrlimit(resource.RLIMIT_AS)
    vm = _vm_bytes()
    if vm is not None:
        ceiling = vm + memory_mb * 1024 * 1024
        hard = old_limit[1]
        resource.setrlimit(resource.RLIMIT_AS, (ceiling if hard == resource.RLIM_INFINITY else min(ceiling, hard),
                                                hard))
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, old_limit)


def _printed_reports(out: str) -> tuple[Path, ...]:
    paths: list[Path] = []
    for line in out.splitlines():
        text = line.strip().removeprefix("report: ")
        if text.endswith((".md", ".json", ".sarif")) and os.path.isabs(text):
            paths.append(Path(text))
    return tuple(paths)


def run_cli(args: Sequence[str], *, cwd: Path | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
            memory_mb: int = DEFAULT_MEMORY_MB, subprocess_: bool = False, stdin: str = "") -> CliRun:
    """Run `harness-audit ARGS` and return what it did; never raises for what the CLI does.

    In this process by default (`cli.main`, output captured, stdin empty and not a terminal), bounded by
    `bounded`; as a subprocess (`python -m harness_audit`) with the same bounds as `timeout` and `RLIMIT_AS`
    when `subprocess_` is set: for inputs that could otherwise hang or exhaust the test process itself.
    """
    argv = tuple(args)
    if subprocess_:
        return _run_subprocess(argv, cwd, timeout_s, memory_mb, stdin)
    from harness_audit.cli import main

    out, err = io.StringIO(), io.StringIO()
    old_cwd = os.getcwd()
    old_stdin = sys.stdin
    code, hung = -1, False
    try:
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = io.StringIO(stdin)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), bounded(timeout_s, memory_mb):
            code = main(list(argv))
    except Hung:
        hung = True
    finally:
        sys.stdin = old_stdin
        os.chdir(old_cwd)
    text = out.getvalue()
    return CliRun(argv, code, text, err.getvalue(), hung, _printed_reports(text))


def _run_subprocess(argv: tuple[str, ...], cwd: Path | None, timeout_s: float, memory_mb: int, stdin: str) -> CliRun:
    limit = memory_mb * 1024 * 1024 + 512 * 1024 * 1024  # the interpreter and its imports, then the allowance

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    try:
        done = subprocess.run([sys.executable, "-m", "harness_audit", *argv], cwd=cwd, input=stdin,
                              capture_output=True, text=True, timeout=timeout_s, preexec_fn=limits, check=False,
                              errors="replace")
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout if isinstance(exc.stdout, str) else ""
        return CliRun(argv, -1, out, "", hung=True)
    return CliRun(argv, done.returncode, done.stdout, done.stderr, False, _printed_reports(done.stdout))


@dataclass(frozen=True, slots=True)
class Reports:
    """The parsed reports of one run."""

    json: dict[str, Any] | None
    """The JSON report, when one was written."""
    texts: dict[str, str]
    """Report text per suffix (`.md`, `.json`, `.sarif`)."""

    def listed(self) -> set[str]:
        """Paths the report lists as skipped or unparsed (a trace's unreadable lines count as its path)."""
        if self.json is None:
            return set()
        return {str(e["path"]) for key in ("skipped_files", "unparsed_files") for e in self.json[key]}


def assert_sane(run: CliRun, *, unreadable: Iterable[str] = (), secrets: Iterable[str] = (),
                allowed: Iterable[int] = (0, 1, 2, 3), family: str = "", reports: bool = True) -> Reports:
    """Assert what must hold for any input (see the module docstring); returns the parsed reports.

    `reports=False` for a command that prints instead of writing reports (`checks`, `explain`, `--help`).
    """
    where = f"[{family}] harness-audit {' '.join(map(repr, run.args))}"
    event(f"exit {run.code}")  # `pytest --hypothesis-show-statistics` shows how the inputs ended
    assert not run.hung, f"{where}: did not end (hung or ran past its deadline)"
    assert run.code in set(allowed), f"{where}: exit code {run.code}; stderr: {run.err[-2000:]!r}"
    assert "internal error" not in run.err, f"{where}: {run.err.strip()[-2000:]}"
    assert "Traceback" not in run.err and "Traceback" not in run.out, f"{where}: printed a traceback"
    if run.code == 2:
        # progress lines (stderr, without -q) may come before; the error is one line, the last
        lines = run.err.strip().splitlines()
        errors = [line for line in lines if line.startswith("harness-audit: ")]
        assert len(errors) == 1 and lines[-1] == errors[0], f"{where}: exit 2 must end with one error line: {run.err!r}"
        assert not looks_like_secret(errors[0]), f"{where}: the error line shows a credential: {errors[0]!r}"
        event(f"exit 2: {errors[0][len('harness-audit: '):][:48]}")
        return Reports(None, {})
    if run.code == 3:
        # only an empty audit (0 files, or every check not covered) may end 3 here: one line saying so
        lines = [line for line in run.err.strip().splitlines() if line.startswith("harness-audit: ")]
        assert len(lines) == 1, f"{where}: exit 3 without its one-line reason: {run.err!r}"
    texts: dict[str, str] = {}
    for path in run.reports:
        texts[path.suffix] = path.read_text(encoding="utf-8")
    if not reports:
        assert not looks_like_secret(run.out), f"{where}: credential-looking text printed"
        return Reports(None, texts)
    assert texts, f"{where}: exit {run.code} without a report path printed; stdout: {run.out[-2000:]!r}"
    data = json.loads(texts[".json"]) if ".json" in texts else None
    if ".sarif" in texts:
        json.loads(texts[".sarif"])
    if run.code == 3 and data is not None:
        meta = data["meta"]
        empty = meta["files_scanned"] == 0 or not meta["ran_checks"]
        assert meta["state"] == "complete" and empty, f"{where}: exit 3 on an audit that was not empty: {meta}"
    parsed = Reports(data, texts)
    missing = set(unreadable) - parsed.listed()
    assert not missing, f"{where}: unreadable inputs not listed in the report: {sorted(missing)}"
    for suffix, text in texts.items():
        leaked = [s for s in secrets if s in text]
        assert not leaked, f"{where}: secret {leaked[0]!r} reached the {suffix} report"
        assert not looks_like_secret(text), f"{where}: credential-looking text in the {suffix} report"
    return parsed


def raises_clearly(call: Callable[[], object], *, names: Sequence[str] = ()) -> BaseException | None:
    """Run `call`; None if it returned. An exception must be one a user can read: an `AssertionError` (a real
    failing check), or a `TypeError`/`ValueError` naming one of `names`; anything else fails the test."""
    try:
        call()
    except AssertionError as exc:
        return exc
    except (TypeError, ValueError) as exc:
        text = str(exc)
        assert not names or any(n in text for n in names), f"{type(exc).__name__} names none of {names}: {text!r}"
        return exc
    return None
