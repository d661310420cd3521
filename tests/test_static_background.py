"""The static engine's background job: recon and a few checks in a forked child give exactly the inline results."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import harness_audit.static as static_engine
from harness_audit.catalogue import CHECKS
from harness_audit.findings import Candidate, CheckId, LandmarkCandidate
from harness_audit.static import BackgroundJob, BackgroundResult, ParsedProject, parse_python, recon, run_rules
from harness_audit.workspace import Workspace

CORPUS = Path(__file__).parent / "bench_corpus"

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the background job forks")


def _parsed() -> ParsedProject:
    ws = Workspace.open(CORPUS)
    return parse_python(ws, ws.discover(["python"]).files)


def _inline(parsed: ParsedProject,
            checks: tuple[CheckId, ...]) -> tuple[list[LandmarkCandidate], dict[CheckId, list[Candidate]]]:
    landmarks = recon(parsed)
    return landmarks, {check: run_rules(parsed, [check]).candidates[check] for check in checks}


def test_forked_child_returns_the_inline_results(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(static_engine, "_worth_forking", lambda parsed: True)
    parsed = _parsed()
    job = BackgroundJob(parsed, tuple(CHECKS))
    assert job.offloaded, "the job should have forked a child"
    done = job.result()
    assert job.child_peak_kb is not None
    landmarks, rules = _inline(parsed, job.offloaded)
    assert done.landmarks == landmarks
    assert {check: done.rules.candidates[check] for check in job.offloaded} == rules
    assert set(done.timings) == set(job.offloaded)


def test_failed_child_is_replaced_by_the_same_work_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(static_engine, "_worth_forking", lambda parsed: True)
    parent = os.getpid()
    work = BackgroundJob._work  # pyright: ignore[reportPrivateUsage]

    def fail_in_child(self: BackgroundJob) -> BackgroundResult:
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return work(self)

    monkeypatch.setattr(BackgroundJob, "_work", fail_in_child)
    parsed = _parsed()
    job = BackgroundJob(parsed, tuple(CHECKS))
    done = job.result()
    landmarks, rules = _inline(parsed, job.offloaded)
    assert done.landmarks == landmarks
    assert {check: done.rules.candidates[check] for check in job.offloaded} == rules


def test_small_project_runs_inline_without_a_child() -> None:
    job = BackgroundJob(_parsed(), tuple(CHECKS))
    assert job.offloaded == ()
    assert job.result().rules.candidates == {}
    assert job.child_peak_kb is None
