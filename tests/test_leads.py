"""How leads end, and how the report ties each finding to the lead it settled (`Finding.lead`)."""

from __future__ import annotations

import json

from harness_audit.aggregate import build_report
from harness_audit.findings import CheckId, CheckOutcome, Finding, OutcomeStatus, Verdict
from harness_audit.leads import Lead, LeadOutcome, LeadStatus, settle_leads
from harness_audit.render import render_json, render_sarif
from harness_audit.report import Report
from tests.test_render import finding, sample


def lead(number: int, line: int, **kw: object) -> Lead:
    return Lead(lead_id=f"C1-{number}", finding=finding(line=line, fingerprint=f"static-{number}", **kw))


def model_finding(line: int, fingerprint: str) -> Finding:
    return finding(line=line, source="llm:C1", fingerprint=fingerprint, claim="the model's words")


def report_of(findings: list[Finding], leads: list[LeadOutcome]) -> Report:
    return build_report(meta=sample().meta, findings=findings, leads=leads, refusals=[], landmarks=[],
                        outcomes=[CheckOutcome(check=CheckId.C1, status=OutcomeStatus.RAN)])


def test_each_finding_names_the_lead_it_settled() -> None:
    leads = [lead(1, 10), lead(2, 40), lead(3, 70), lead(4, 100)]
    named = model_finding(12, "named")          # names C1-1 (and sits near it)
    at_place = model_finding(41, "at-place")    # names nothing, reported at C1-2's place
    beside = model_finding(70, "beside")        # at C1-3's place, but the model dismissed C1-3
    own = model_finding(200, "own")             # no lead near it
    reported = [(named, "C1-1"), (at_place, None), (beside, None), (own, None)]
    outcomes, kept = settle_leads(leads, reported, {"C1-3": ("the handler appends the result", "llm:C1")},
                                  settled_by={CheckId.C1: "llm:C1"})
    assert [(o.lead_id, o.status, o.confirmed_by) for o in outcomes] == [
        ("C1-1", LeadStatus.CONFIRMED, named), ("C1-2", LeadStatus.CONFIRMED, at_place),
        ("C1-3", LeadStatus.DISMISSED, None), ("C1-4", LeadStatus.UNADDRESSED, None)]
    report = report_of([named, at_place, beside, own, *kept], outcomes)
    assert {f.fingerprint: f.lead for f in report.findings} == {
        "named": "C1-1", "at-place": "C1-2", "beside": None, "own": None, "static-4": "C1-4"}
    data = json.loads(render_json(report))
    assert {f["fingerprint"]: f["lead"] for f in data["findings"]} == {
        "named": "C1-1", "at-place": "C1-2", "beside": None, "own": None, "static-4": "C1-4"}
    sarif = json.loads(render_sarif(report))
    props = {r["partialFingerprints"]["harnessAudit/v1"]: r["properties"].get("lead")
             for r in sarif["runs"][0]["results"] if "suppressions" not in r}
    assert props["named"] == {"id": "C1-1", "status": "confirmed", "settled_by": "llm:C1"}
    assert props["static-4"] == {"id": "C1-4", "status": "unaddressed"}
    assert props["own"] is None


def test_a_duplicate_keeps_the_lead_its_twin_settled() -> None:
    confirmed = model_finding(10, "a")
    suspected = finding(line=10, verdict=Verdict.SUSPECTED, confirm_hint="whether the caller retries",
                        fingerprint="b")
    outcomes, _ = settle_leads([lead(1, 10)], [(confirmed, "C1-1"), (suspected, None)], {})
    report = report_of([confirmed, suspected], outcomes)
    # dedupe keeps the least certain of the two; the lead the other settled goes with it
    assert [(f.verdict, f.lead) for f in report.findings] == [(Verdict.SUSPECTED, "C1-1")]
