"""A model run on the terminal: the run directory first, per-check lines with tokens and cost, the final line."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_audit.cli import main
from tests.llm.conftest import C12_FINDING, MODEL, recon_steps, tool_step
from tests.llm.fake_openai import ScriptedOpenAI, call, reply, usage


def test_a_model_run_prints_its_run_directory_first_and_ends_with_the_cost(
        harness: Path, out: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (harness / ".harness-audit.toml").write_text(f'[prices."{MODEL}"]\ninput = 2.0\noutput = 8.0\n')
    script = {"recon": recon_steps("agent-loop", usages=(usage(500, 20), usage(600, 2))),
              "C12": [tool_step(call("g1", "report_finding", C12_FINDING), usage=usage(1000, 50)),
                      reply(text="Done.", usage=usage(1100, 5))]}
    with ScriptedOpenAI(script) as server:
        code = main([str(harness), "C12", "--engine", "llm", "--model", MODEL, "--base-url", server.base_url,
                     "-o", str(out), "--format", "json"])
    assert code == 1
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert err[0].startswith(f"run directory: {out / 'runs'}")
    assert "C12 done · 1 found · 0 refused · 2,155 tokens · $0.0046" in captured.err  # 2100 in x $2, 55 out x $8
    last = captured.out.strip().splitlines()[-1]
    assert last.startswith("1 found") and "cost $0.0" in last and " tokens" in last
