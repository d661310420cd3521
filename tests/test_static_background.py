"""The static engine's background job: recon and a share of the checks in a forked child give the inline results."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import harness_audit.static as static_engine
from harness_audit.catalogue import CHECKS
from harness_audit.findings import Candidate, CheckId
from harness_audit.static import BackgroundJob, BackgroundResult, ParsedProject, parse_python, recon, run_rules
from harness_audit.workspace import Workspace

CORPUS = Path(__file__).parent / "bench_corpus"

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the background job forks")


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Fork whatever the project's size and the number of cores."""

    def always(parsed: ParsedProject) -> bool:
        return True

    monkeypatch.setattr(static_engine, "_worth_forking", always)
    return monkeypatch


def _parsed() -> ParsedProject:
    ws = Workspace.open(CORPUS)
    return parse_python(ws, ws.discover(["python"]).files)


def _run(job: BackgroundJob, parsed: ParsedProject) -> tuple[dict[CheckId, list[Candidate]], BackgroundResult]:
    """What the pipeline does: the checks claimed here, then the job's result."""
    here = {check: run_rules(parsed, [check]).candidates[check] for check in job.checks_here()}
    return here, job.result()


def _assert_same_as_inline(parsed: ParsedProject, here: dict[CheckId, list[Candidate]], done: BackgroundResult) -> None:
    assert not set(here) & set(done.rules.candidates), "a check ran in both processes"
    assert set(here) | set(done.rules.candidates) == set(CHECKS), "a check ran nowhere"
    inline_landmarks = recon(parsed)
    inline = {check: run_rules(parsed, [check]).candidates[check] for check in CHECKS}
    assert done.landmarks == inline_landmarks
    assert {**here, **done.rules.candidates} == inline


def test_forked_child_shares_the_checks_and_returns_the_inline_results(forking: pytest.MonkeyPatch) -> None:
    parsed = _parsed()
    job = BackgroundJob(parsed, tuple(CHECKS))
    here, done = _run(job, parsed)
    assert job.child_peak_kb is not None, "the job should have forked a child"
    assert set(done.timings) == set(done.rules.candidates)
    _assert_same_as_inline(parsed, here, done)


def test_failed_child_is_replaced_by_the_same_work_here(forking: pytest.MonkeyPatch) -> None:
    parent = os.getpid()
    work = BackgroundJob._work  # pyright: ignore[reportPrivateUsage]

    def fail_in_child(self: BackgroundJob, checks: object) -> BackgroundResult:
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return work(self, checks)  # type: ignore[arg-type]  # the iterable of checks, passed through

    forking.setattr(BackgroundJob, "_work", fail_in_child)
    parsed = _parsed()
    here, done = _run(BackgroundJob(parsed, tuple(CHECKS)), parsed)
    _assert_same_as_inline(parsed, here, done)


@pytest.mark.skipif(not hasattr(os, "waitid"), reason="waits for the child without reaping it")
def test_checks_a_failed_child_claimed_are_run_here(forking: pytest.MonkeyPatch) -> None:
    parent = os.getpid()

    def fail_in_child(parsed: ParsedProject, checks: list[CheckId]) -> static_engine.StaticResult:
        if os.getpid() != parent:
            raise RuntimeError("the child fails after claiming a check")
        return run_rules(parsed, checks)

    forking.setattr(static_engine, "run_rules", fail_in_child)
    parsed = _parsed()
    job = BackgroundJob(parsed, tuple(CHECKS))
    assert job._child is not None  # pyright: ignore[reportPrivateUsage]
    child = job._child.pid  # pyright: ignore[reportPrivateUsage]
    assert child is not None
    # wait (without reaping it) until the child has claimed its first check and died with it
    os.waitid(os.P_PID, child, os.WEXITED | os.WNOWAIT)
    here, done = _run(job, parsed)
    assert len(here) == len(CHECKS) - 1, "the child should have claimed one check"
    _assert_same_as_inline(parsed, here, done)


def test_small_project_runs_every_check_here_in_order() -> None:
    parsed = _parsed()
    job = BackgroundJob(parsed, tuple(CHECKS))
    assert list(job.checks_here()) == list(CHECKS)
    assert job.result().rules.candidates == {}
    assert job.child_peak_kb is None
