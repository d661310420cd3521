"""SARIF 2.1.0 for code scanning: one rule per check, level from the verdict."""

from __future__ import annotations

import json
from typing import Any

from harness_audit.catalogue import CHECKS
from harness_audit.findings import Verdict
from harness_audit.report import Report

_LEVEL = {Verdict.CONFIRMED: "error", Verdict.SUSPECTED: "warning", Verdict.NOT_IMPLEMENTED: "note"}
_INFO_URI = "https://pypi.org/project/harness-audit/"


def sarif_dict(r: Report) -> dict[str, Any]:
    """The report as a SARIF log."""
    rules = [
        {
            "id": c.value, "name": s.slug,
            "shortDescription": {"text": s.title},
            "fullDescription": {"text": s.gloss_en},
            "help": {"text": s.gloss_en},
            "defaultConfiguration": {"level": "error" if s.priority == 1 else "warning"},
            "properties": {"priority": s.priority, "group": s.group.title, "tags": ["agent-harness", "robustness"]},
        }
        for c, s in CHECKS.items()
    ]
    index = {c.value: i for i, c in enumerate(CHECKS)}
    results: list[dict[str, Any]] = []
    notes: list[dict[str, Any]] = []
    for f in r.findings:
        text = f.claim + (f" To confirm: {f.confirm_hint}" if f.verdict is Verdict.SUSPECTED else "")
        if not f.located:
            notes.append({"level": "note", "message": {"text": f"{f.check} not implemented: {f.claim}"},
                          "descriptor": {"id": f.check.value}})
            continue
        result: dict[str, Any] = {
            "ruleId": f.check.value, "ruleIndex": index[f.check.value], "level": _LEVEL[f.verdict],
            "message": {"text": text},
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
        results.append(result)
    return {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "harness-audit", "version": r.meta.tool_version,
                                "informationUri": _INFO_URI, "rules": rules}},
            "automationDetails": {"id": f"harness-audit/{r.meta.engine}/{r.meta.run_id}"},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": "file://" + r.meta.root.rstrip("/") + "/"}},
            "invocations": [{"executionSuccessful": r.meta.state == "complete",
                             "toolExecutionNotifications": notes}],
            "results": results,
        }],
    }


def _related(n: int, where: str) -> dict[str, Any]:
    """A `file:line` of the same code in another build output, as a SARIF related location."""
    file, _, line = where.rpartition(":")
    return {"id": n, "message": {"text": "the same code in another build of this source"},
            "physicalLocation": {"artifactLocation": {"uri": file, "uriBaseId": "%SRCROOT%"},
                                 "region": {"startLine": int(line)}}}


def render_sarif(r: Report) -> str:
    """SARIF JSON text."""
    return json.dumps(sarif_dict(r), indent=2, ensure_ascii=False) + "\n"
