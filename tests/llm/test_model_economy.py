"""The model-economy benchmark's smoke run: the bundled example, two checks, every engine, workload and style.

The full benchmark (a 136k-line tree) is run by hand (`benchmarks/README.md`); this keeps its script working and
holds the same bars on a small tree: every check finishes with the reader's finding under the default budgets.
"""

from __future__ import annotations

import pytest

from tests.llm.conftest import benchmark_module


def test_the_benchmark_runs_on_a_small_tree_and_every_check_finishes(capsys: pytest.CaptureFixture[str]) -> None:
    with benchmark_module("model_economy") as module:
        assert module.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    assert out.count("targets: met") == 8 and "every target met" in out
    for engine in ("llm", "hybrid"):
        for workload in ("A", "B"):
            for style in ("openai", "anthropic"):
                assert f"## {engine} · workload {workload} · {style}-style caching" in out
