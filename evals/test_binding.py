"""Eval: each subagent's report tools are bound to it (its own check; recon reports landmarks only)."""

from __future__ import annotations

from pathlib import Path

from evals.harness import DONE, Scenario, finding, landmark, reply, run_scenario
from evals.targets import AGENT_LOOP, C1_EVIDENCE, C12_EVIDENCE, LOOP, line_of, recon_script, tree

C1_LINE = line_of(AGENT_LOOP, "except Exception:")
C12_LINE = line_of(AGENT_LOOP, "while True:")


def test_report_tools_are_bound_to_their_subagent(tmp_path: Path) -> None:
    """Risk: a subagent reports outside its assignment (another check's finding, recon a finding, a check
    a landmark), so a finding escapes the criteria and landmarks it was judged against."""
    recon = recon_script()
    scenario = Scenario(
        name="tools-bound-to-subagent",
        risk="a subagent reports findings for a check it was not given, or recon reports findings",
        files=tree(),
        checks=("C1", "C12"),
        script={
            "recon": [recon[0], reply(finding("C1", LOOP, C1_LINE, C1_EVIDENCE, call_id="recon-finding")),
                      *recon[1:]],
            "C1": [reply(finding("C12", LOOP, C12_LINE, C12_EVIDENCE, call_id="other-check"),
                         landmark("retry", LOOP, C1_LINE, "agent_loop", call_id="check-landmark")),
                   reply(finding("C1", LOOP, C1_LINE, C1_EVIDENCE, call_id="own-check")),
                   DONE],
            "C12": [DONE],
        },
    )
    run = run_scenario(scenario, tmp_path)

    recon_results, c1_results = run.tool_results("recon"), run.tool_results("C1")
    assert recon_results["recon-finding"].startswith(
        "Refused (check-not-assigned): you were assigned no check (recon reports landmarks only)")
    assert c1_results["other-check"].startswith("Refused (check-not-assigned): you were assigned C1")
    assert c1_results["check-landmark"].startswith("Not accepted: landmarks are reported by the recon subagent only")
    assert c1_results["own-check"] == f"Accepted: C1 confirmed at {LOOP}:{C1_LINE}."
    # ledger and report: two refusals, both check-not-assigned; only C1's own finding; no retry landmark
    assert [(r["unit"], r["reason"]) for r in run.refusals()] == [
        ("recon", "check-not-assigned"), ("C1", "check-not-assigned")]
    counts = run.report.refusal_counts
    assert counts["check-not-assigned"] == 2 and sum(counts.values()) == 2
    assert [(f.check.value, f.line) for f in run.report.findings] == [("C1", C1_LINE)]
    assert sorted(lm.kind.value for lm in run.report.landmarks if lm.source == "llm:recon") == [
        "agent-loop", "history-append", "tool-execution"]
    assert run.events("landmark", "C1") == [] and run.outcome("C12") == "ran"
