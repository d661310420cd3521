"""Evals of what a check costs: nothing without its landmarks, never more than its budget."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evals.harness import DONE, Repeat, Scenario, Step, call, finding, reply, run_scenario
from evals.targets import AGENT_LOOP, C1_EVIDENCE, C12_EVIDENCE, LOOP, line_of, recon_script, tree

C1_LINE = line_of(AGENT_LOOP, "except Exception:")
C12_LINE = line_of(AGENT_LOOP, "while True:")


def test_check_without_its_landmarks_spends_no_request(tmp_path: Path) -> None:
    """Risk: a check runs (and is billed) on a tree where the code it audits was never found, and its
    silence reads as "clean" instead of "not looked at"."""
    scenario = Scenario(
        name="missing-landmarks-cost-nothing",
        risk="a check without its required landmarks spends tokens and reports a clean pass",
        files=tree(),
        checks=("C1", "C13"),  # C13 requires a truncation landmark; recon finds none
        script={
            "recon": recon_script(),
            "C1": [reply(finding("C1", LOOP, C1_LINE, C1_EVIDENCE)), DONE],
            "C13": [reply(call("read_file", path=LOOP)), DONE],
        },
    )
    run = run_scenario(scenario, tmp_path)

    assert run.scripted is not None
    assert run.scripted.calls("C13") == 0 and run.scripted.left() == {"C13": 2}
    assert run.events("unit-start", "C13") == [] and run.events("request", "C13") == []
    (end,) = run.events("unit-end", "C13")
    assert (end["status"], end["missing"]) == ("not-covered", ["truncation"])
    c13 = next(o for o in run.report.outcomes if o.check.value == "C13")
    assert (c13.status_text, [k.value for k in c13.missing_landmarks]) == ("not-covered", ["truncation"])
    assert c13.usage.requests == 0 and c13.usage.input_tokens == 0
    md = run.rendered(".md")
    assert "| C13 · Context management and truncation boundaries | not-covered | missing landmarks: truncation |" in md
    # the other check is not affected
    assert run.outcome("C1") == "ran" and [f.check.value for f in run.report.findings] == ["C1"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """One way to run out, and what it must cost exactly."""

    name: str
    overrides: dict[str, Any]
    steps: list[Step]
    requests: int
    """Requests C1 makes: the last one is its reporting turn."""
    error: str


_GREP = call("grep", pattern="messages")
BUDGETS = [
    Budget(name="turns", overrides={"max_turns_per_check": 3},
           steps=[reply(finding("C1", LOOP, C1_LINE, C1_EVIDENCE)), Repeat(reply(_GREP))],
           requests=3, error="turn limit 3 reached"),
    Budget(name="tool-calls", overrides={"max_tool_calls_per_check": 4},
           steps=[reply(finding("C1", LOOP, C1_LINE, C1_EVIDENCE)), Repeat(reply(_GREP, _GREP))],
           requests=4, error="tool-call limit 4 reached"),
    # 9k in + 1k out a request, output at 4x: 13k a request; a fourth would pass the 40k ceiling, so the third is
    # the reporting turn
    Budget(name="tokens", overrides={"max_tokens_per_check": 40_000},
           steps=[reply(finding("C1", LOOP, C1_LINE, C1_EVIDENCE), usage=(9_000, 1_000)),
                  Repeat(reply(_GREP, usage=(9_000, 1_000)))],
           requests=3, error="token limit 40,000 reached"),
]


def _budget_scenario(budget: Budget) -> Scenario:
    return Scenario(
        name=f"budget-exhausted-{budget.name}",
        risk="a check stopped by its budget is reported as a clean pass, or its findings are lost",
        files=tree(),
        checks=("C1", "C12"),
        overrides=budget.overrides,
        script={
            "recon": recon_script(),
            "C1": budget.steps,  # a model that never stops calling tools
            "C12": [reply(finding("C12", LOOP, C12_LINE, C12_EVIDENCE)), DONE],
        },
    )


@pytest.mark.parametrize("budget", BUDGETS, ids=lambda b: b.name)
def test_budget_exhaustion_is_reported_as_such_never_as_a_clean_pass(tmp_path: Path, budget: Budget) -> None:
    """Risk: a model that never stops either runs up an unbounded bill, or is cut off and then shown as
    "ran" with whatever it found so far, which reads as a complete audit of that check."""
    run = run_scenario(_budget_scenario(budget), tmp_path)

    assert run.scripted is not None and run.scripted.calls("C1") == budget.requests
    assert run.outcome("C1") == "incomplete"
    c1 = next(o for o in run.report.outcomes if o.check.value == "C1")
    assert c1.error is not None and c1.error.startswith(budget.error), c1.error
    assert "stopped after its reporting turn" in c1.error and c1.usage.requests == budget.requests
    assert run.report.meta.state == "incomplete"
    (end,) = run.events("unit-end", "C1")
    assert (end["status"], end["failure"]) == ("incomplete", "budget-exhausted")
    # the last request offered the report tools only, and said so
    last = run.scripted.requests("C1")[-1]
    assert sorted(t.name for t in last.info.function_tools) == ["dismiss_lead", "report_finding"]
    assert "This is your last turn" in str(last.messages[-1].parts[-1].content)  # type: ignore[union-attr]
    # findings gated before the limit are kept; the other check is untouched
    assert sorted(f.check.value for f in run.report.findings) == ["C1", "C12"]
    assert run.outcome("C12") == "ran"
    data = run.json_report()
    assert data["meta"]["state"] == "incomplete" and data["meta"]["ran_checks"] == ["C12"]
    md = run.rendered(".md")
    assert "**INCOMPLETE** — partial results" in md
    assert "| C1 · Tool-call pairing completeness | incomplete |" in md
    assert "Every requested check ran to completion." not in md
    if "max_tokens_per_check" in budget.overrides:  # the ceiling is hard, at billed weights
        assert c1.usage.input_tokens + 4 * c1.usage.output_tokens <= budget.overrides["max_tokens_per_check"]


@pytest.mark.parametrize("budget", [pytest.param(b, id=b.name) for b in BUDGETS])
def test_budget_exhaustion_leaves_every_call_answered_in_the_ledger(tmp_path: Path, budget: Budget) -> None:
    """Risk: the ledger of a unit stopped by its budget shows a tool call with no result, so a replay or
    an audit of the run cannot tell what the model was told."""
    run = run_scenario(_budget_scenario(budget), tmp_path)
    assert run.outcome("C1") == "incomplete"
    assert {u: run.unpaired_calls(u) for u in ("recon", "C1", "C12")} == {"recon": [], "C1": [], "C12": []}


def test_the_task_states_the_budget_and_a_nudge_comes_at_70_percent(tmp_path: Path) -> None:
    """Risk (issue 15): nothing told the model that a budget exists, so every check on a large tree read until
    the ceiling cut it off and lost what it had not reported yet."""
    reads = [reply(call("read_file", path=LOOP)) for _ in range(7)]
    scenario = Scenario(
        name="budget-known", risk="the model cannot plan with a budget it is never told",
        files=tree(), checks=("C1",), overrides={"max_turns_per_check": 10},
        script={"recon": recon_script(), "C1": [*reads, reply(finding("C1", LOOP, C1_LINE, C1_EVIDENCE)), DONE]},
    )
    run = run_scenario(scenario, tmp_path)
    assert run.scripted is not None
    first = run.scripted.requests("C1")[0]
    assert "## Budget\nThis check may make at most 10 model turns, 120 tool calls and 120,000 tokens" in first.task
    nudges = [e["text"] for e in run.events("nudge", "C1")]
    assert len(nudges) == 1 and nudges[0].startswith("Budget: 70% of this unit's turns are used")
    # the nudge went with the seventh turn's request, after its tool results
    seventh = run.scripted.requests("C1")[6].messages[-1]
    assert str(seventh.parts[-1].content) == nudges[0]  # type: ignore[union-attr]
    assert run.outcome("C1") == "ran" and [f.check.value for f in run.report.findings] == ["C1"]


def test_a_model_that_reports_in_its_reporting_turn_keeps_those_findings(tmp_path: Path) -> None:
    """Risk (issue 15): a check that ran out of budget lost what it had found but not yet reported."""
    scenario = Scenario(
        name="reporting-turn", risk="findings not yet reported are lost when the budget runs out",
        files=tree(), checks=("C1",), overrides={"max_turns_per_check": 3},
        script={"recon": recon_script(),
                "C1": [reply(call("read_file", path=LOOP)), reply(call("grep", pattern="except")),
                       reply(finding("C1", LOOP, C1_LINE, C1_EVIDENCE), call("read_file", path=LOOP))]},
    )
    run = run_scenario(scenario, tmp_path)
    assert run.outcome("C1") == "incomplete"
    assert [(f.check.value, f.line) for f in run.report.findings] == [("C1", C1_LINE)]
    results = list(run.tool_results("C1").values()) if run.scripted else []
    assert not any("reporting turn" in r for r in results)  # results of the last turn are never sent back
    calls = [e for e in run.events("tool-call", "C1") if not e.get("executed", True)]
    assert [(e["tool"], e["result"]) for e in calls] == [
        ("read_file", "Not executed: this was the reporting turn; only the report tools run now.")]
