"""Evals of what the gate does with a model's findings: fabricated evidence, suspected verdicts."""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.messages import ModelMessage, ModelResponse

from evals.harness import DONE, Scenario, call, finding, last_tool_results, reply, run_scenario, text
from evals.targets import AGENT_LOOP, C1_EVIDENCE, LOOP, line_of, recon_script, tree

C1_LINE = line_of(AGENT_LOOP, "except Exception:")
PARAPHRASE = "except Exception: pass  # the result is dropped"
"""What a model "remembers" instead of copying: not in the file."""


def _correct_after_refusal(messages: list[ModelMessage]) -> ModelResponse:
    """Resubmit with the real lines only if the gate said the evidence was not found; else give up."""
    results = last_tool_results(messages)
    if any(r.startswith("Refused (evidence-not-found)") for r in results):
        return reply(call("read_file", path=LOOP, start_line=C1_LINE - 2, end_line=C1_LINE + 2))
    return text("The gate did not refuse; nothing to correct.")


def _resubmit(messages: list[ModelMessage]) -> ModelResponse:
    return reply(finding("C1", LOOP, C1_LINE, C1_EVIDENCE, claim="a raising tool gets no result"))


def test_fabricated_evidence_is_refused_then_corrected_and_accepted(tmp_path: Path) -> None:
    """Risk: a finding whose quoted code is not in the file reaches the report (a made-up defect), or the
    refusal does not tell the model enough to correct it, so a real defect is lost."""
    scenario = Scenario(
        name="fabricated-evidence-corrected",
        risk="fabricated evidence reaches the report, or a refused model cannot recover a real finding",
        files=tree(),
        script={
            "recon": recon_script(),
            "C1": [
                reply(finding("C1", LOOP, C1_LINE, PARAPHRASE, claim="a raising tool gets no result (paraphrased)")),
                _correct_after_refusal,
                _resubmit,
                DONE,
            ],
        },
    )
    run = run_scenario(scenario, tmp_path)

    # the model saw the refusal with its reason and a remedy, then the acceptance
    results = list(run.tool_results("C1").values())
    assert results[0].startswith("Refused (evidence-not-found): the excerpt does not occur in agent/loop.py")
    assert "Correct it and resubmit" in results[0]
    assert results[-1] == f"Accepted: C1 confirmed at {LOOP}:{C1_LINE}."
    # ledger: one refusal, one finding, in that order
    refusal, kept = run.refusals(unit="C1"), run.events("finding", "C1")
    assert [r["reason"] for r in refusal] == ["evidence-not-found"]
    assert len(kept) == 1 and kept[0]["seq"] > refusal[0]["seq"]
    # report: only the corrected finding; the refusal counted once
    assert [(f.check.value, f.file, f.line, f.evidence) for f in run.report.findings] == [
        ("C1", LOOP, C1_LINE, C1_EVIDENCE)]
    assert PARAPHRASE not in run.rendered(".md") and PARAPHRASE not in run.rendered(".json")
    counts = run.report.refusal_counts
    assert counts["evidence-not-found"] == 1 and sum(counts.values()) == 1
    assert run.json_report()["meta"]["refusals_by_reason"]["evidence-not-found"] == 1
    assert run.outcome("C1") == "ran" and run.report.meta.state == "complete"
    assert run.scripted is not None and run.scripted.left() == {} and not run.scripted.overruns


SUSPECT_LINE = line_of(AGENT_LOOP, "result = run_tool(call)")
SUSPECT_EVIDENCE = "result = run_tool(call)"
HINT = "check whether the tool lookup can raise for an unknown tool name"


def test_suspected_finding_stays_suspected_and_needs_a_confirm_hint(tmp_path: Path) -> None:
    """Risk: an unverified suspicion is shown as a confirmed defect (the summary over-claims), or a
    suspicion without a way to verify it reaches the reader."""
    scenario = Scenario(
        name="suspected-stays-suspected",
        risk="a suspected finding is upgraded to confirmed, or lacks the hint that lets a human verify it",
        files=tree(),
        script={
            "recon": recon_script(),
            "C1": [
                # no confirm_hint: refused
                reply(finding("C1", LOOP, SUSPECT_LINE, SUSPECT_EVIDENCE, verdict="suspected")),
                reply(finding("C1", LOOP, SUSPECT_LINE, SUSPECT_EVIDENCE, verdict="suspected", confirm_hint=HINT)),
                # the same place again, now claimed as confirmed: the least certain verdict must win
                reply(finding("C1", LOOP, SUSPECT_LINE, SUSPECT_EVIDENCE, verdict="confirmed")),
                DONE,
            ],
        },
    )
    run = run_scenario(scenario, tmp_path)

    first = list(run.tool_results("C1").values())[0]
    assert first.startswith("Refused (missing-confirm-hint)")
    assert [r["reason"] for r in run.refusals()] == ["missing-confirm-hint"]
    assert run.report.refusal_counts["missing-confirm-hint"] == 1
    # one finding at that place, still suspected, with the hint a human needs
    assert [(f.verdict.value, f.line, f.confirm_hint) for f in run.report.findings] == [
        ("suspected", SUSPECT_LINE, HINT)]
    (group,) = [g for g in run.report.groups if "C1" in g.checks]
    assert (group.confirmed, group.suspected) == (0, 1)
    (row,) = [g for g in run.json_report()["summary"] if "C1" in g["checks"]]
    assert (row["confirmed"], row["suspected"]) == (0, 1)
    md = run.rendered(".md")
    assert "## Confirmed (0)" in md and "## Suspected (1)" in md
    assert f"**To confirm.** {HINT}" in md
