"""Eval: a recorded transcript (a ledger under `evals/recorded/`) replays to the same report, with no model.

This is how a bad real run becomes a regression test: its ledger is the transcript, `ReplayModel`
serves the recorded responses unit by unit, and the engine (tools, gate, aggregation) runs again for
real on the same tree. See `evals/README.md`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evals.harness import EvalRun, replay_scenario, run_scenario
from evals.recordings import C1_LINE, C12_LINE, RECORDED, RECORDINGS, TWO_CHECKS
from evals.targets import LOOP
from harness_audit.llm.ledger import read_ledger
from harness_audit.report import Report

LEDGER = RECORDED / "two_checks.ledger.jsonl"


def _essence(report: Report) -> dict[str, Any]:
    """What a replay must reproduce exactly: findings, outcomes, refusals, usage (not times or ids)."""
    return {
        "state": report.meta.state,
        "findings": [(f.check.value, f.verdict.value, f.file, f.line, f.evidence, f.claim, f.fingerprint)
                     for f in report.findings],
        "outcomes": [(o.check.value, o.status_text, o.usage) for o in report.outcomes],
        "recon_usage": report.recon_usage,
        "refusals": [(r.reason.value, r.subject, r.check, r.file, r.line, r.message) for r in report.refusals],
        "landmarks": [(lm.kind.value, lm.file, lm.line, lm.symbol) for lm in report.landmarks],
    }


def _gate_answers(events: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [(e["unit"], e["tool"], e["result"]) for e in events
            if e.get("event") == "tool-call" and e["tool"] in ("report_finding", "report_landmark")]


@pytest.mark.parametrize("name", sorted(RECORDINGS))
def test_every_recording_is_committed(name: str) -> None:
    assert (RECORDED / name).is_file(), f"run `.venv/bin/python -m evals.recordings` to record {name}"


def test_recorded_ledger_replays_to_the_recorded_report(tmp_path: Path) -> None:
    """Risk: a run cannot be reproduced from its ledger, so a bad real run cannot become a regression test,
    or the engine silently changes what the same model answers produce (findings, refusals, costs)."""
    recorded = read_ledger(LEDGER)
    run = replay_scenario(TWO_CHECKS, LEDGER, tmp_path)
    report = run.report

    assert report.meta.state == "complete"
    assert {o.check.value: o.status_text for o in report.outcomes} == {"C1": "ran", "C12": "ran"}
    assert [(f.check.value, f.verdict.value, f.file, f.line) for f in report.findings] == [
        ("C1", "confirmed", LOOP, C1_LINE), ("C12", "confirmed", LOOP, C12_LINE)]
    counts = {k: v for k, v in report.refusal_counts.items() if v}
    assert counts == {"line-out-of-range": 1, "evidence-not-found": 1}
    # every recorded response was served, in order, and nothing else was asked of the (absent) model
    for unit in ("recon", "C1", "C12"):
        was = [e["message"]["parts"] for e in recorded.events if e.get("event") == "response" and e["unit"] == unit]
        now = [e["message"]["parts"] for e in run.events("response", unit)]
        assert now == was, unit
    # usage is the recorded usage, exactly: 100 in / 10 out per recorded response
    per_unit = {o.check.value: (o.usage.requests, o.usage.input_tokens, o.usage.output_tokens)
                for o in report.outcomes}
    assert per_unit == {"C1": (4, 400, 40), "C12": (3, 300, 30)}
    assert report.recon_usage is not None and report.recon_usage.requests == 4
    # the gate gave the same answers to the same reports
    assert _gate_answers(run.ledger.events) == _gate_answers(recorded.events)


def test_recording_still_matches_its_script(tmp_path: Path) -> None:
    """Risk: the committed ledger and the scenario it came from drift apart, so the replay eval checks a
    transcript nobody can regenerate."""
    scripted: EvalRun = run_scenario(TWO_CHECKS, tmp_path / "scripted")
    replayed = replay_scenario(TWO_CHECKS, LEDGER, tmp_path / "replayed")
    assert _essence(replayed.report) == _essence(scripted.report)


def test_replay_on_a_changed_tree_reports_the_divergence(tmp_path: Path) -> None:
    """Risk: a regression eval "passes" on a transcript that no longer matches the code it replays, or a
    replayed report is trusted although its requests differ from what the model actually answered."""
    changed = dict(TWO_CHECKS.files)
    changed[LOOP] = "# one line added since the recording\n" + str(changed[LOOP])
    scenario = type(TWO_CHECKS)(name="changed-tree", risk=TWO_CHECKS.risk, files=changed,
                                checks=TWO_CHECKS.checks, script=TWO_CHECKS.script)
    report = replay_scenario(scenario, LEDGER, tmp_path).report
    diverged = report.meta.state != "complete" or any(o.status_text != "ran" for o in report.outcomes) \
        or any("diverge" in n for n in report.meta.notes)
    assert diverged, _essence(report)
