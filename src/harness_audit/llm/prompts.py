"""Everything a subagent is told: one shared system prompt, one tool set, and a task message per unit.

The system prompt and the tool definitions are the SAME BYTES for every subagent of a run (recon and
every check), so a provider's prefix cache hits from the second subagent on. Everything that differs
per unit (the check's criteria, its landmarks, the static leads) goes in the task message, last.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from harness_audit.catalogue import CHECKS, criteria_text
from harness_audit.findings import CheckId, Landmark, LandmarkKind
from harness_audit.leads import Lead

RECON_HEADING = "Recon · locate landmarks"
ANALYSIS_HEADING = "Cross-check analysis"

LANDMARK_GUIDE: dict[LandmarkKind, str] = {
    LandmarkKind.AGENT_LOOP: "the loop that calls the model, runs tools and calls the model again",
    LandmarkKind.REQUEST_ASSEMBLY: "where the request body (messages, tools, system) is put together",
    LandmarkKind.SYSTEM_PROMPT_BUILD: "where the system prompt text is built",
    LandmarkKind.TOOL_REGISTRY: "where the tools offered to the model are defined or listed",
    LandmarkKind.TOOL_EXECUTION: "where a tool call from the model is dispatched and run",
    LandmarkKind.HISTORY_APPEND: "where messages, tool calls or tool results are added to the history",
    LandmarkKind.STREAM_PARSE: "where model output is decoded into text and tool calls (streamed or not)",
    LandmarkKind.RETRY: "a retry of model requests or tool calls (library or hand-written)",
    LandmarkKind.TRUNCATION: "where history is cut, summarised or compacted to fit the context",
    LandmarkKind.PROCESS_SPAWN: "where a child process or shell command is started",
    LandmarkKind.HTTP_CALL: "an outbound HTTP request (model API or tool)",
}

_SCOPE_AND_TOOLS = """
## Scope
Only first-party files of the workspace are audited. Dependency and build directories
(`node_modules`, `.venv`, `site-packages`, `vendor`, `dist`, `build`, ...) are out of scope and the
tools refuse them. Paths are workspace-relative.

## Tools
- `glob(pattern)`, `grep(pattern, glob?)`: find files and lines (Python regular expressions).
- `find_symbol(name)`, `find_references(name)`: where a function, class or method is defined and used.
- `read_file(path, start_line?, end_line?)`: numbered lines, one page at a time; read a file before citing it.
- `report_landmark(...)`: recon only, one landmark per call.
- `report_finding(...)`: check subagents only, one finding per call, for your assigned check only.
- `dismiss_lead(lead, reason)`: check subagents only, to refute a static lead handed to you.
Every report goes through the evidence gate; its answer tells you "accepted" or why it was refused and
what to do. Fix and resubmit a refused report, or drop it if the code does not support it.
No tool writes, runs code or reaches the network.

## Finishing
When you have reported everything the code supports, reply with one short sentence and no tool call.
Text outside `report_finding`/`report_landmark` never reaches the report.
"""


@cache
def system_prompt() -> str:
    """The shared system prompt: auditing rules, scope, tool guide. Identical for every subagent."""
    shared = resources.files("harness_audit.catalogue.criteria").joinpath("_shared.md").read_text(encoding="utf-8")
    return shared.rstrip() + "\n" + _SCOPE_AND_TOOLS


def _schema(properties: dict[str, Any], required: Sequence[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


_STR = {"type": "string"}
_INT = {"type": "integer", "minimum": 1}


@cache
def tool_schemas() -> tuple[tuple[str, str, str], ...]:
    """(name, description, JSON schema as canonical text) of every tool, in a fixed order."""
    kinds = [k.value for k in LandmarkKind]
    checks = [c.value for c in CheckId]
    specs: list[tuple[str, str, dict[str, Any]]] = [
        ("read_file", "Read numbered lines of a workspace file, one page per call.",
         _schema({"path": _STR, "start_line": _INT, "end_line": _INT}, ["path"])),
        ("grep", "Search first-party files for a Python regular expression; optional glob filter on paths.",
         _schema({"pattern": _STR, "glob": _STR}, ["pattern"])),
        ("glob", "List first-party files whose workspace-relative path matches a glob pattern.",
         _schema({"pattern": _STR}, ["pattern"])),
        ("find_symbol", "Where a function, class, method or module-level name is defined.",
         _schema({"name": _STR}, ["name"])),
        ("find_references", "Where a name is used (calls, reads, imports).",
         _schema({"name": _STR}, ["name"])),
        ("report_landmark", "Recon only: report one landmark with its file, line and enclosing symbol.",
         _schema({"kind": {"type": "string", "enum": kinds}, "file": _STR, "line": _INT, "symbol": _STR,
                  "confidence": {"type": "string", "enum": ["high", "medium", "low"]},
                  "language": {"type": "string", "enum": ["python", "typescript", "javascript"]}},
                 ["kind", "file", "line", "confidence"])),
        ("report_finding", "Check subagents only: report one finding for your assigned check, with evidence.",
         _schema({"check": {"type": "string", "enum": checks},
                  "verdict": {"type": "string", "enum": ["confirmed", "suspected", "not-implemented"]},
                  "file": _STR, "line": _INT, "claim": _STR,
                  "evidence": {"type": "string", "description": "lines copied exactly from the file"},
                  "consequence": _STR, "direction": _STR,
                  "confirm_hint": {"type": "string", "description": "required for suspected"},
                  "lead": {"type": "string", "description": "the id of the static lead this confirms, if any"}},
                 ["check", "verdict", "claim", "evidence", "consequence"])),
        ("dismiss_lead", "Check subagents only: refute one static lead of your check, saying why the code is fine.",
         _schema({"lead": _STR, "reason": _STR}, ["lead", "reason"])),
    ]
    return tuple((name, desc, json.dumps(schema, sort_keys=True)) for name, desc, schema in specs)


def _landmark_lines(landmarks: Sequence[Landmark]) -> list[str]:
    ordered = sorted(landmarks, key=lambda lm: (lm.kind.value, lm.file, lm.line))
    return [f"- {lm.kind.value}: {lm.file}:{lm.line}" + (f" in `{lm.symbol}`" if lm.symbol else "")
            + f" ({lm.confidence})" for lm in ordered]


def check_task(check: CheckId, landmarks: Sequence[Landmark], leads: Sequence[Lead] = ()) -> str:
    """The task message of one check's subagent: heading, criteria, its landmarks, static leads."""
    spec = CHECKS[check]
    wanted = set(spec.requires) | set(spec.also_useful)
    parts = [f"Audit check {check.value} · {spec.title}", "", criteria_text(check).strip(), "",
             "## Landmarks recon found for this check"]
    mine = [lm for lm in landmarks if lm.kind in wanted]
    parts += _landmark_lines(mine) or ["- (none besides the required ones being present)"]
    if leads:
        parts += ["", "## Leads from the static rules",
                  "Each lead is a machine guess; settle every one. Confirm it with report_finding (after reading "
                  "the code; pass its id as `lead`), or refute it with dismiss_lead (its id and why the code is "
                  "fine). A lead you leave unsettled keeps its static verdict in the report. Also look for what "
                  "the rules missed."]
        for lead in leads:
            f = lead.finding
            parts.append(f"- {lead.lead_id} · {f.file}:{f.line} [{f.verdict.value}] {f.claim} (rule {f.source})")
    parts += ["", f"Report findings for {check.value} only. Read before you cite."]
    return "\n".join(parts) + "\n"


def recon_task(kinds: Sequence[LandmarkKind]) -> str:
    """The task message of the recon subagent: which landmark kinds to locate."""
    parts = [RECON_HEADING, "", "Locate these landmarks in the workspace and report each with report_landmark "
             "(file, line of the defining statement, enclosing symbol, confidence). Report every place that "
             "matters, not only the first; report nothing you have not read.", ""]
    parts += [f"- {k.value}: {LANDMARK_GUIDE[k]}" for k in kinds]
    return "\n".join(parts) + "\n"


def unit_of(first_user_text: str) -> str:
    """The unit a task message belongs to: `C<n>`, `recon`, or `default`."""
    head = first_user_text.split("\n", 1)[0]
    if head.startswith("Audit check C"):
        return head.split()[2]
    if head.startswith(RECON_HEADING.split(" ", 1)[0]):
        return "recon"
    if head.startswith(ANALYSIS_HEADING):
        return "analysis"
    return "default"
