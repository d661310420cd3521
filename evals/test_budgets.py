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
    """Requests C1 makes before the ceiling stops it."""
    error: str


_GREP = call("grep", pattern="messages")
BUDGETS = [
    Budget(name="turns", overrides={"max_turns_per_check": 3},
           steps=[reply(finding("C1", LOOP, C1_LINE, C1_EVIDENCE)), Repeat(reply(_GREP))],
           requests=3, error="turn limit 3 reached"),
    Budget(name="tool-calls", overrides={"max_tool_calls_per_check": 4},
           steps=[reply(finding("C1", LOOP, C1_LINE, C1_EVIDENCE)), Repeat(reply(_GREP, _GREP))],
           requests=3, error="tool-call limit 4 reached"),
    # 10k per request: the second brings C1 to its 20k ceiling exactly, so no third request may be sent
    Budget(name="tokens", overrides={"max_tokens_per_check": 20_000},
           steps=[reply(finding("C1", LOOP, C1_LINE, C1_EVIDENCE), usage=(9_000, 1_000)),
                  Repeat(reply(_GREP, usage=(9_000, 1_000)))],
           requests=2, error="token limit 20000 reached (20000 spent)"),
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
    assert run.outcome("C1") == "failed:budget-exhausted"
    c1 = next(o for o in run.report.outcomes if o.check.value == "C1")
    assert c1.error == budget.error and c1.usage.requests == budget.requests
    assert run.report.meta.state == "incomplete"
    (end,) = run.events("unit-end", "C1")
    assert (end["status"], end["failure"]) == ("failed", "budget-exhausted")
    # findings gated before the limit are kept; the other check is untouched
    assert sorted(f.check.value for f in run.report.findings) == ["C1", "C12"]
    assert run.outcome("C12") == "ran"
    data = run.json_report()
    assert data["meta"]["state"] == "incomplete" and data["meta"]["ran_checks"] == ["C12"]
    md = run.rendered(".md")
    assert "**INCOMPLETE** — partial results" in md
    assert "| C1 · Tool-call pairing completeness | failed:budget-exhausted |" in md
    assert "Every requested check ran to completion." not in md
    if "max_tokens_per_check" in budget.overrides:  # the ceiling is hard, not advisory
        assert c1.usage.input_tokens + c1.usage.output_tokens <= budget.overrides["max_tokens_per_check"]


@pytest.mark.parametrize("budget", [pytest.param(b, id=b.name) for b in BUDGETS])
def test_budget_exhaustion_leaves_every_call_answered_in_the_ledger(tmp_path: Path, budget: Budget) -> None:
    """Risk: the ledger of a unit stopped by its budget shows a tool call with no result, so a replay or
    an audit of the run cannot tell what the model was told."""
    run = run_scenario(_budget_scenario(budget), tmp_path)
    assert run.outcome("C1") == "failed:budget-exhausted"
    assert {u: run.unpaired_calls(u) for u in ("recon", "C1", "C12")} == {"recon": [], "C1": [], "C12": []}
