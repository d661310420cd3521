"""The semantic layer (`--preview`) forked beside the rules gives exactly what it gives inline."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness_audit import pipeline
from harness_audit.catalogue import CHECKS
from harness_audit.static import StaticResult
from harness_audit.workspace import Workspace

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the semantic job forks")

CORPORA = [Path(__file__).parent / "bench_corpus", Path(__file__).parent / "bench_corpus_ts"]


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Fork whatever the project's size and the number of cores."""
    monkeypatch.setattr(pipeline, "can_fork", lambda: True)
    monkeypatch.setattr(pipeline, "_SEMANTIC_FORK_MIN_BYTES", 0)
    return monkeypatch


def _collect(job: pipeline._SemanticJob) -> StaticResult:  # pyright: ignore[reportPrivateUsage]
    static = StaticResult()
    job.add_to(static, {})
    return static


@pytest.mark.parametrize("corpus", CORPORA, ids=lambda p: p.name)
def test_forked_layer_gives_the_inline_result(forking: pytest.MonkeyPatch, corpus: Path) -> None:
    """Risk: results depend on where the layer ran (lost candidates, reordered landmarks, a failure dropped)."""
    ws = Workspace.open(corpus)
    discovery = ws.discover()
    checks = tuple(CHECKS)
    found, candidates, errors = pipeline._semantic(ws, discovery.files, checks)  # pyright: ignore[reportPrivateUsage]
    assert found and any(candidates.values()), "the corpus should give the layer something to find"
    job = pipeline._SemanticJob(ws, discovery, checks)  # pyright: ignore[reportPrivateUsage]
    assert job._child is not None, "the job should have forked"  # pyright: ignore[reportPrivateUsage]
    forked = _collect(job)
    assert forked.landmarks == found
    assert {c: v for c, v in forked.candidates.items() if v} == {c: v for c, v in candidates.items() if v}
    assert forked.errors == errors


def test_failed_child_is_replaced_by_the_same_work_here(forking: pytest.MonkeyPatch) -> None:
    """Risk: a child that dies (killed, out of memory, an unpicklable result) silently drops the layer's findings."""
    ws = Workspace.open(CORPORA[0])
    discovery = ws.discover()
    checks = tuple(CHECKS)
    expected = pipeline._semantic(ws, discovery.files, checks)  # pyright: ignore[reportPrivateUsage]
    parent, real = os.getpid(), pipeline._semantic  # pyright: ignore[reportPrivateUsage]

    def fail_in_child(*args: object) -> object:
        if os.getpid() != parent:
            raise RuntimeError("the child fails")
        return real(*args)  # type: ignore[arg-type]

    forking.setattr(pipeline, "_semantic", fail_in_child)
    job = pipeline._SemanticJob(ws, discovery, checks)  # pyright: ignore[reportPrivateUsage]
    assert job._child is not None  # pyright: ignore[reportPrivateUsage]
    forked = _collect(job)
    assert forked.landmarks == expected[0]
    assert {c: v for c, v in forked.candidates.items() if v} == {c: v for c, v in expected[1].items() if v}


def test_small_tree_runs_the_layer_here(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "can_fork", lambda: True)
    ws = Workspace.open(Path(__file__).parents[1] / "examples" / "agent_loop")
    job = pipeline._SemanticJob(ws, ws.discover(), tuple(CHECKS))  # pyright: ignore[reportPrivateUsage]
    assert job._child is None  # pyright: ignore[reportPrivateUsage]
    assert _collect(job).landmarks
