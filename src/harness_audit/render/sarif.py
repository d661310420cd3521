"""SARIF 2.1.0 for code scanning: one rule per check, level from the verdict."""

from __future__ import annotations

import json
from typing import Any

from harness_audit.catalogue import CHECKS, criteria_text
from harness_audit.findings import CheckId, Finding, Verdict
from harness_audit.leads import LeadOutcome, LeadStatus
from harness_audit.report import Report, Suppressed

_LEVEL = {Verdict.CONFIRMED: "error", Verdict.SUSPECTED: "warning", Verdict.NOT_IMPLEMENTED: "note"}


def page_name(check: CheckId) -> str:
    """The check's documentation page, `c08-partial-success.md` (docs/checks/, generated)."""
    return f"c{check.number:02d}-{CHECKS[check].slug}.md"


def _section(check: CheckId, heading: str) -> str:
    """One `## heading` section of the check's criteria prose (empty when it has none)."""
    out: list[str] = []
    inside = False
    for line in criteria_text(check).splitlines():
        if line.startswith("## "):
            inside = line[3:].strip().lower().startswith(heading.lower())
            continue
        if inside:
            out.append(line)
    return "\n".join(out).strip()


def _rule(check: CheckId, docs_url: str | None) -> dict[str, Any]:
    """A SARIF rule: the check, its help in markdown (what it means and what the fix looks like), its page."""
    s = CHECKS[check]
    fix = _section(check, "Correct shapes")
    markdown = f"**{check} · {s.title}**\n\n{s.gloss_en}\n\n" + (f"**What correct code does**\n\n{fix}\n\n"
                                                                    if fix else "")
    markdown += f"`harness-audit explain {check}` prints the full criteria and the rules behind them."
    rule: dict[str, Any] = {
        "id": check.value, "name": s.slug,
        "shortDescription": {"text": s.title},
        "fullDescription": {"text": s.gloss_en},
        "help": {"text": f"{s.gloss_en} Run `harness-audit explain {check}` for the criteria.", "markdown": markdown},
        "defaultConfiguration": {"level": "error" if s.priority == 1 else "warning"},
        "properties": {"priority": s.priority, "group": s.group.title, "tags": ["agent-harness", "robustness"]},
    }
    if docs_url:
        rule["helpUri"] = docs_url + page_name(check)
    return rule


def _message(f: Finding, text: str) -> dict[str, Any]:
    """The result message: the claim, and in markdown the consequence and the fix where code scanning shows it."""
    md = [text, "", f"**Consequence.** {f.consequence}"]
    if f.direction:
        md += ["", f"**Fix.** {f.direction}"]
    return {"text": text + (f" Fix: {f.direction}" if f.direction else ""), "markdown": "\n".join(md)}


def sarif_dict(r: Report) -> dict[str, Any]:
    """The report as a SARIF log."""
    rules = [_rule(c, r.meta.docs_url) for c in CHECKS]
    index = {c.value: i for i, c in enumerate(CHECKS)}
    results: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    leads = {lead.lead_id: lead for lead in r.leads}
    for f in r.findings:
        text = f.claim + (f" To confirm: {f.confirm_hint}" if f.verdict is Verdict.SUSPECTED else "")
        lead = leads.get(f.lead) if f.lead else None
        if lead is not None and lead.status is LeadStatus.UNADDRESSED:
            text += f" (static lead {lead.lead_id}: the model neither confirmed nor dismissed it)"
        if not f.located:
            notes.append({"level": "note", "message": {"text": f"{f.check} not implemented: {f.claim}"},
                          "descriptor": {"id": f.check.value}})
            continue
        result: dict[str, Any] = {
            "ruleId": f.check.value, "ruleIndex": index[f.check.value], "level": _LEVEL[f.verdict],
            "message": _message(f, text),
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": f.file, "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": f.line, "snippet": {"text": f.evidence}},
            }}],
            "partialFingerprints": {"harnessAudit/v1": f.fingerprint},
            "properties": {"verdict": f.verdict.value, "source": f.source, "consequence": f.consequence,
                           "direction": f.direction},
        }
        if f.also_at:
            result["relatedLocations"] = [_related(n, where) for n, where in enumerate(f.also_at, 1)]
        if lead is not None:
            result["properties"]["lead"] = {"id": lead.lead_id, "status": lead.status.value,
                                            **({"settled_by": lead.by} if lead.by else {})}
        results.append(result)
    for lead in r.leads_with(LeadStatus.DISMISSED):
        results.append(_dismissed(lead, index[lead.check.value]))
    for x in r.suppressed:
        results.append(_suppressed(x, index[x.finding.check.value]))
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "harness-audit", "version": r.meta.tool_version, "rules": rules,
                                **({"informationUri": r.meta.docs_url} if r.meta.docs_url else {})}},
            "automationDetails": {"id": f"harness-audit/{r.meta.engine}/{r.meta.run_id}"},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": "file://" + r.meta.root.rstrip("/") + "/"}},
            "invocations": [{"executionSuccessful": r.meta.state == "complete",
                             "toolExecutionNotifications": notes}],
            "results": results,
        }],
    }


def _suppressed(x: Suppressed, rule_index: int) -> dict[str, Any]:
    """A finding suppressed inline: a SARIF result with an in-source suppression carrying the marker's reason."""
    f = x.finding
    return {
        "ruleId": f.check.value, "ruleIndex": rule_index, "level": _LEVEL[f.verdict],
        "message": _message(f, f.claim),
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": f.file, "uriBaseId": "%SRCROOT%"},
                                            "region": {"startLine": f.line, "snippet": {"text": f.evidence}}}}],
        "partialFingerprints": {"harnessAudit/v1": f.fingerprint},
        "suppressions": [{"kind": "inSource", "justification": x.reason}],
        "properties": {"verdict": f.verdict.value, "source": f.source, "marker_line": x.marker_line,
                       **({"lead": {"id": f.lead}} if f.lead else {})},
    }


def _dismissed(lead: LeadOutcome, rule_index: int) -> dict[str, Any]:
    """A static lead the model dismissed: a suppressed result, the model's reason as the justification."""
    f = lead.finding
    result: dict[str, Any] = {
        "ruleId": f.check.value, "ruleIndex": rule_index, "level": _LEVEL[f.verdict],
        "message": {"text": f"{f.claim} (static lead {lead.lead_id}, dismissed by the model)"},
        "partialFingerprints": {"harnessAudit/v1": f.fingerprint},
        "suppressions": [{"kind": "external", "status": "accepted", "justification": lead.reason or ""}],
        "properties": {"verdict": f.verdict.value, "source": f.source,
                       "lead": {"id": lead.lead_id, "status": "dismissed", "settled_by": lead.by}},
    }
    if f.located:
        result["locations"] = [{"physicalLocation": {
            "artifactLocation": {"uri": f.file, "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": f.line, "snippet": {"text": f.evidence}},
        }}]
    return result


def _related(n: int, where: str) -> dict[str, Any]:
    """A `file:line` of the same code in another build output, as a SARIF related location."""
    file, _, line = where.rpartition(":")
    return {"id": n, "message": {"text": "the same code in another build of this source"},
            "physicalLocation": {"artifactLocation": {"uri": file, "uriBaseId": "%SRCROOT%"},
                                 "region": {"startLine": int(line)}}}


def render_sarif(r: Report) -> str:
    """SARIF JSON text."""
    return json.dumps(sarif_dict(r), indent=2, ensure_ascii=False) + "\n"
