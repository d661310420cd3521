"""The JSON report: a versioned schema with stable finding fingerprints."""

from __future__ import annotations

import json
from typing import Any

from harness_audit.catalogue import CHECKS
from harness_audit.findings import Finding, Usage
from harness_audit.report import Report

SCHEMA_VERSION = "1.3"


def usage_dict(u: Usage) -> dict[str, Any]:
    """Usage as JSON; unknown usage is `null` counts, never zero."""
    if not u.known:
        return {"known": False, "input_tokens": None, "output_tokens": None, "cache_read_tokens": None,
                "cache_write_tokens": None, "reasoning_tokens": None, "requests": u.requests}
    return {"known": True, "input_tokens": u.input_tokens, "output_tokens": u.output_tokens,
            "cache_read_tokens": u.cache_read_tokens, "cache_write_tokens": u.cache_write_tokens,
            "reasoning_tokens": u.reasoning_tokens, "requests": u.requests}


def report_dict(r: Report) -> dict[str, Any]:
    """The report as plain JSON data."""
    m = r.meta
    ran = [o.check.value for o in r.outcomes if o.status.value == "ran"]
    return {
        "schema_version": SCHEMA_VERSION,
        "meta": {
            "tool": "harness-audit", "tool_version": m.tool_version, "run_id": m.run_id,
            "started_at": m.started_at, "finished_at": m.finished_at, "duration_s": round(m.duration_s, 3),
            "root": m.root, "commit": m.commit, "dirty": m.dirty, "engine": m.engine, "state": m.state,
            "requested_checks": [c.value for c in m.requested], "ran_checks": ran,
            "skipped_checks": [o.check.value for o in r.outcomes if o.status.value != "ran"],
            "refusals_by_reason": r.refusal_counts, "files_scanned": m.files_scanned,
            "excluded_dirs": m.excluded_dirs, "cache_hit": m.cache_hit,
            "usage": usage_dict(r.total_usage),
            "recon_usage": None if r.recon_usage is None else usage_dict(r.recon_usage),
            "analysis_usage": None if r.analysis_usage is None else usage_dict(r.analysis_usage),
            "model": m.model, "base_url": m.base_url, "resumed_checks": [c.value for c in m.resumed],
            "ledger": m.ledger, "notes": list(m.notes),
            "cost_usd": None if m.price is None else _money(m.price.cost(r.total_usage)),
            "protocol_calls": None if m.protocol_calls is None else dict(m.protocol_calls),
            "recon_duration_s": None if m.recon_duration_s is None else round(m.recon_duration_s, 3),
        },
        "summary": [
            {"group": g.group, "title": g.title, "checks": [c.value for c in g.checks], "confirmed": g.confirmed,
             "suspected": g.suspected, "not_implemented": g.not_implemented,
             "not_covered": [c.value for c in g.not_covered]}
            for g in r.groups
        ],
        "landmarks": [
            {"kind": lm.kind.value, "file": lm.file, "line": lm.line, "symbol": lm.symbol,
             "confidence": lm.confidence, "language": lm.language, "source": lm.source}
            for lm in r.landmarks
        ],
        "dismissed_landmarks": [
            {"kind": d.landmark.kind.value, "file": d.landmark.file, "line": d.landmark.line,
             "symbol": d.landmark.symbol, "confidence": d.landmark.confidence, "language": d.landmark.language,
             "source": d.landmark.source, "reason": d.reason, "dismissed_by": d.by}
            for d in r.dismissed_landmarks
        ],
        "findings": [_finding(f, r) for f in r.findings],
        "outcomes": [
            {"id": o.check.value, "title": CHECKS[o.check].title, "priority": CHECKS[o.check].priority,
             "status": o.status_text, "missing_landmarks": [k.value for k in o.missing_landmarks],
             "finding_count": r.findings_for(o.check), "rejection_count": r.refusals_for(o.check),
             "usage": usage_dict(o.usage), "duration_s": round(o.duration_s, 3), "error": o.error,
             "cost_usd": None if m.price is None else _money(m.price.cost(o.usage)),
             "resumed": o.check in m.resumed}
            for o in r.outcomes
        ],
        "rejections": [
            {"reason": x.reason.value, "subject": x.subject, "check": x.check, "source": x.source, "file": x.file,
             "line": x.line, "message": x.message}
            for x in r.refusals
        ],
        "leads": [
            {"id": lead.lead_id, "check": lead.check.value, "status": lead.status.value,
             "static_verdict": lead.finding.verdict.value, "file": lead.finding.file, "line": lead.finding.line,
             "claim": lead.finding.claim, "source": lead.finding.source, "fingerprint": lead.finding.fingerprint,
             "reason": lead.reason, "settled_by": lead.by}
            for lead in r.leads
        ],
        "skipped_files": [{"path": s.path, "reason": s.reason} for s in r.skipped_files],
        "unparsed_files": [{"path": s.path, "reason": s.reason} for s in r.unparsed_files],
        "analysis": None if r.analysis is None else {"text": r.analysis, "validated": False},
        "suppressions_applied": r.suppressions_applied,
        "suppressed": [{**_finding(x.finding, r), "suppression": {"reason": x.reason, "marker_line": x.marker_line}}
                       for x in r.suppressed],
        "suppression_problems": list(r.suppression_problems),
        "min_precision": r.min_precision,
        "withheld": [{**_finding(x.finding, r), "precision": {
            "rule": x.precision.rule, "tier": x.precision.tier.value, "estimate": round(x.precision.estimate, 3),
            "true": x.precision.true, "judged": x.precision.judged, "check_true": x.precision.check_true,
            "check_judged": x.precision.check_judged}} for x in r.withheld],
    }


def _finding(f: Finding, r: Report) -> dict[str, Any]:
    snippet = r.snippets.get(f.fingerprint)
    return {
        "check": f.check.value, "title": CHECKS[f.check].title, "verdict": f.verdict.value, "file": f.file,
        "line": f.line, "cited_line": f.cited_line, "claim": f.claim, "evidence": f.evidence,
        "consequence": f.consequence, "direction": f.direction, "confirm_hint": f.confirm_hint or None,
        "source": f.source, "language": f.language, "file_sha256": f.file_sha256, "fingerprint": f.fingerprint,
        "also_at": list(f.also_at),
        "context": None if snippet is None else {"first_line": snippet.first, "lines": list(snippet.lines)},
        "same_site": list(r.same_site.get(f.fingerprint, ())),
        "lead": f.lead,
    }


def _money(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def render_json(r: Report) -> str:
    """Pretty, stable JSON text."""
    return json.dumps(report_dict(r), indent=2, ensure_ascii=False) + "\n"
