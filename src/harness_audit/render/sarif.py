"""SARIF 2.1.0 for code scanning: one rule per check, level from the verdict.

The rules' help (title, gloss, what correct code does) and the fixed words of each result are in the report's
language, the Chinese criteria included; findings keep their own words.
"""

from __future__ import annotations

import json
from typing import Any

from harness_audit.catalogue import CHECKS, CRITERIA_HEADINGS, criteria_section
from harness_audit.findings import CheckId, Finding, Verdict
from harness_audit.leads import LeadOutcome, LeadStatus
from harness_audit.messages import t
from harness_audit.report import Report, Suppressed, Withheld

_LEVEL = {Verdict.CONFIRMED: "error", Verdict.SUSPECTED: "warning", Verdict.NOT_IMPLEMENTED: "note"}


def page_name(check: CheckId) -> str:
    """The check's documentation page, `c08-partial-success.md` (docs/checks/, generated)."""
    return f"c{check.number:02d}-{CHECKS[check].slug}.md"


_CORRECT_SHAPES = CRITERIA_HEADINGS["en"].index("Correct shapes (no finding)")


def _rule(check: CheckId, docs_url: str | None, lang: str = "en") -> dict[str, Any]:
    """A SARIF rule: the check, its help in markdown (what it means and what the fix looks like), its page."""
    s = CHECKS[check]
    title, gloss = t(f"check.{check}", lang), s.gloss(lang)
    fix = criteria_section(check, _CORRECT_SHAPES, lang)
    markdown = f"**{check} · {title}**\n\n{gloss}\n\n" + (f"**{t('sarif.correct', lang)}**\n\n{fix}\n\n"
                                                            if fix else "")
    markdown += t("sarif.explain", lang, check=check)
    rule: dict[str, Any] = {
        "id": check.value, "name": s.slug,
        "shortDescription": {"text": title},
        "fullDescription": {"text": gloss},
        "help": {"text": f"{gloss} {t('sarif.explain_short', lang, check=check)}", "markdown": markdown},
        "defaultConfiguration": {"level": "error" if s.priority == 1 else "warning"},
        "properties": {"priority": s.priority, "group": t(f"group.{s.group.value}", lang),
                       "tags": ["agent-harness", "robustness"]},
    }
    if docs_url:
        rule["helpUri"] = docs_url + page_name(check)
    return rule


def _message(f: Finding, text: str, lang: str = "en") -> dict[str, Any]:
    """The result message: the claim, and in markdown the consequence and the fix where code scanning shows it."""
    md = [text, "", f"**{t('md.consequence', lang)}** {f.consequence}"]
    if f.direction:
        md += ["", f"**{t('sarif.fix', lang)}** {f.direction}"]
    fix = t("sarif.fix_inline", lang, direction=f.direction) if f.direction else ""
    return {"text": text + fix, "markdown": "\n".join(md)}


def sarif_dict(r: Report) -> dict[str, Any]:
    """The report as a SARIF log, its fixed text in the report's language."""
    lang = r.meta.language
    rules = [_rule(c, r.meta.docs_url, lang) for c in CHECKS]
    index = {c.value: i for i, c in enumerate(CHECKS)}
    results: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    leads = {lead.lead_id: lead for lead in r.leads}
    for f in r.findings:
        text = f.claim + (t("sarif.to_confirm", lang, hint=f.confirm_hint) if f.verdict is Verdict.SUSPECTED else "")
        lead = leads.get(f.lead) if f.lead else None
        if lead is not None and lead.status is LeadStatus.UNADDRESSED:
            text += t("sarif.lead_unaddressed", lang, lead=lead.lead_id)
        if not f.located:
            notes.append({"level": "note", "message": {"text": t("sarif.not_implemented", lang, check=f.check,
                                                                 claim=f.claim)},
                          "descriptor": {"id": f.check.value}})
            continue
        result: dict[str, Any] = {
            "ruleId": f.check.value, "ruleIndex": index[f.check.value], "level": _LEVEL[f.verdict],
            "message": _message(f, text, lang),
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": f.file, "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": f.line, "snippet": {"text": f.evidence}},
            }}],
            "partialFingerprints": {"harnessAudit/v1": f.fingerprint},
            "properties": {"verdict": f.verdict.value, "source": f.source, "consequence": f.consequence,
                           "direction": f.direction},
        }
        if f.also_at:
            result["relatedLocations"] = [_related(n, where, lang) for n, where in enumerate(f.also_at, 1)]
        if lead is not None:
            result["properties"]["lead"] = {"id": lead.lead_id, "status": lead.status.value,
                                            **({"settled_by": lead.by} if lead.by else {})}
        results.append(result)
    for lead in r.leads_with(LeadStatus.DISMISSED):
        results.append(_dismissed(lead, index[lead.check.value], lang))
    for x in r.suppressed:
        results.append(_suppressed(x, index[x.finding.check.value], lang))
    for w in r.withheld:
        results.append(_withheld(w, index[w.finding.check.value], lang))
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


def _suppressed(x: Suppressed, rule_index: int, lang: str = "en") -> dict[str, Any]:
    """A finding suppressed inline: a SARIF result with an in-source suppression carrying the marker's reason."""
    f = x.finding
    return {
        "ruleId": f.check.value, "ruleIndex": rule_index, "level": _LEVEL[f.verdict],
        "message": _message(f, f.claim, lang),
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": f.file, "uriBaseId": "%SRCROOT%"},
                                            "region": {"startLine": f.line, "snippet": {"text": f.evidence}}}}],
        "partialFingerprints": {"harnessAudit/v1": f.fingerprint},
        "suppressions": [{"kind": "inSource", "justification": x.reason}],
        "properties": {"verdict": f.verdict.value, "source": f.source, "marker_line": x.marker_line,
                       **({"lead": {"id": f.lead}} if f.lead else {})},
    }


def _located(result: dict[str, Any], f: Finding) -> dict[str, Any]:
    """`result` with the finding's location, when it has one (a check-level verdict has none)."""
    if f.located:
        result["locations"] = [{"physicalLocation": {
            "artifactLocation": {"uri": f.file, "uriBaseId": "%SRCROOT%"},
            "region": {"startLine": f.line, "snippet": {"text": f.evidence}},
        }}]
    return result


def _withheld(w: Withheld, rule_index: int, lang: str = "en") -> dict[str, Any]:
    """A finding of a rule below the run's precision floor: a result suppressed externally, the rule's record as
    the justification (code scanning lists it as dismissed, never as an open alert)."""
    f, p = w.finding, w.precision
    result: dict[str, Any] = {
        "ruleId": f.check.value, "ruleIndex": rule_index, "level": _LEVEL[f.verdict],
        "message": _message(f, f.claim, lang),
        "partialFingerprints": {"harnessAudit/v1": f.fingerprint},
        "suppressions": [{"kind": "external", "status": "accepted",
                          "justification": t("md.withheld_why", lang, rule=p.rule, true=p.true, judged=p.judged,
                                             estimate=p.percent, tier=p.tier.value)}],
        "properties": {"verdict": f.verdict.value, "source": f.source, "precision": p.tier.value},
    }
    return _located(result, f)


def _dismissed(lead: LeadOutcome, rule_index: int, lang: str = "en") -> dict[str, Any]:
    """A static lead the model dismissed: a suppressed result, the model's reason as the justification."""
    f = lead.finding
    result: dict[str, Any] = {
        "ruleId": f.check.value, "ruleIndex": rule_index, "level": _LEVEL[f.verdict],
        "message": {"text": f.claim + t("sarif.lead_dismissed", lang, lead=lead.lead_id)},
        "partialFingerprints": {"harnessAudit/v1": f.fingerprint},
        "suppressions": [{"kind": "external", "status": "accepted", "justification": lead.reason or ""}],
        "properties": {"verdict": f.verdict.value, "source": f.source,
                       "lead": {"id": lead.lead_id, "status": "dismissed", "settled_by": lead.by}},
    }
    return _located(result, f)


def _related(n: int, where: str, lang: str = "en") -> dict[str, Any]:
    """A `file:line` of the same code in another build output, as a SARIF related location."""
    file, _, line = where.rpartition(":")
    return {"id": n, "message": {"text": t("sarif.related", lang)},
            "physicalLocation": {"artifactLocation": {"uri": file, "uriBaseId": "%SRCROOT%"},
                                 "region": {"startLine": int(line)}}}


def render_sarif(r: Report) -> str:
    """SARIF JSON text."""
    return json.dumps(sarif_dict(r), indent=2, ensure_ascii=False) + "\n"
