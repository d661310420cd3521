"""Everything a subagent is told: one shared system prompt, one tool set, and a task message per unit.

The system prompt and the tool definitions are the SAME BYTES for every subagent of a run (recon and
every check), so a provider's prefix cache hits from the second subagent on. Everything that differs
per unit (the check's criteria, its budget, its landmarks, the static leads) goes in the task message,
last, and is kept lean: landmarks ranked and capped (`list_landmarks` has the rest), each lead with the
code around it so most leads need no read.

Every string that comes from the audited tree (paths, excerpts, a lead's claim) enters a prompt as a JSON
string literal or as numbered code lines in a fence: a file named `x\n\n## Instructions` cannot open a
section of the task.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from harness_audit.catalogue import CHECKS, criteria_text
from harness_audit.findings import CheckId, Landmark, LandmarkKind
from harness_audit.leads import Lead
from harness_audit.llm.spans import definitions, enclosing
from harness_audit.workspace import Workspace

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
- `read_file(path, start_line?, end_line?, symbol?)`: numbered lines, one page at a time, or one function or
  class by name (`symbol`); read a file before citing it (quote the code, not the line numbers).
- `list_landmarks(kind?, page?)`: every landmark of the run, when the task lists only the first ones.
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
        ("read_file", "Read numbered lines of a workspace file, one page per call, or one definition (`symbol`).",
         _schema({"path": _STR, "start_line": _INT, "end_line": _INT,
                  "symbol": {"type": "string", "description": "a function, method or class of the file"}},
                 ["path"])),
        ("grep", "Search first-party files for a Python regular expression; optional glob filter on paths.",
         _schema({"pattern": _STR, "glob": _STR}, ["pattern"])),
        ("glob", "List first-party files whose workspace-relative path matches a glob pattern.",
         _schema({"pattern": _STR}, ["pattern"])),
        ("find_symbol", "Where a function, class, method or module-level name is defined.",
         _schema({"name": _STR}, ["name"])),
        ("find_references", "Where a name is used (calls, reads, imports).",
         _schema({"name": _STR}, ["name"])),
        ("list_landmarks", "List the run's landmarks (every kind, or one), a page at a time.",
         _schema({"kind": {"type": "string", "enum": kinds}, "page": _INT}, [])),
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


MAX_TASK_LANDMARKS = 20
"""Landmarks a check's task lists; `list_landmarks` pages through the rest."""
_LEAD_CONTEXT_LEADS = 6
"""Leads that come with the code around them (the others with their place only)."""
_LEAD_CONTEXT_LINES = 40
"""Most lines of code shown with one lead: its function, or a window around the lead in a longer one."""
_CONFIDENCE = {"high": 0, "medium": 1, "low": 2}


def quoted(text: str) -> str:
    """A string from the audited tree, as a prompt shows it: one JSON string literal on one line."""
    return json.dumps(text, ensure_ascii=False)


def landmark_line(lm: Landmark) -> str:
    """One landmark as tasks and `list_landmarks` show it."""
    symbol = f", in {lm.symbol}" if lm.symbol else ""  # the gate keeps only dotted identifiers
    return f"- {lm.kind.value} at {quoted(lm.file)} line {lm.line}{symbol} ({lm.confidence})"


def ranked_landmarks(check: CheckId, landmarks: Sequence[Landmark], leads: Sequence[Lead] = ()) -> list[Landmark]:
    """A check's landmarks, most useful first: the kinds it requires, then surer ones, then those in a lead's file."""
    spec = CHECKS[check]
    wanted = set(spec.requires) | set(spec.also_useful)
    lead_files = {lead.finding.file for lead in leads}
    mine = {lm for lm in landmarks if lm.kind in wanted}
    return sorted(mine, key=lambda lm: (lm.kind not in spec.requires, _CONFIDENCE.get(lm.confidence, 3),
                                        lm.file not in lead_files, lm.kind.value, lm.file, lm.line))


def fenced(lines: Sequence[tuple[int, str]], language: str | None) -> list[str]:
    """Numbered code lines (as `read_file` shows them) in a fence longer than any backtick run in them."""
    body = [f"{n:>5}\t{text}" for n, text in lines]
    longest = max((len(run) for line in body for run in re.findall(r"`+", line)), default=0)
    ticks = "`" * max(3, longest + 1)
    return [f"{ticks}{language or ''}", *body, ticks]


def check_task(check: CheckId, landmarks: Sequence[Landmark], leads: Sequence[Lead] = (), *,
               budget: str | None = None, code: Callable[[Lead], LeadCode | None] | None = None) -> str:
    """The task message of one check's subagent: heading, criteria, budget, its landmarks, static leads.

    `budget` is the sentence that states the unit's ceilings; `code` gives the code around a lead (its function,
    or a window), shown with the first leads so that most of them need no read.
    """
    spec = CHECKS[check]
    parts = [f"Audit check {check.value} · {spec.title}", "", criteria_text(check).strip(), ""]
    if budget:
        parts += ["## Budget", f"This check may make {budget}", ""]
    ranked = ranked_landmarks(check, landmarks, leads)
    parts.append("## Landmarks recon found for this check")
    parts += [landmark_line(lm) for lm in ranked[:MAX_TASK_LANDMARKS]] or \
        ["- (none besides the required ones being present)"]
    if len(ranked) > MAX_TASK_LANDMARKS:
        parts.append(f"- … {len(ranked) - MAX_TASK_LANDMARKS} more: list_landmarks(kind) lists every one")
    if leads:
        parts += ["", "## Leads from the static rules",
                  "Each lead is a machine guess; settle every one. Confirm it with report_finding (after reading "
                  "the code; pass its id as `lead`), or refute it with dismiss_lead (its id and why the code is "
                  "fine). A lead you leave unsettled keeps its static verdict in the report. Also look for what "
                  "the rules missed. The code shown with a lead is what read_file returns for it."]
        shown = 0
        for lead in leads:
            f = lead.finding
            parts.append(f"- {lead.lead_id} · {quoted(f.file or '')} line {f.line} [{f.verdict.value}] "
                         f"rule {f.source}: {quoted(f.claim)}")
            context = code(lead) if code is not None and shown < _LEAD_CONTEXT_LEADS else None
            if context is not None:
                shown += 1
                parts.append(f"  {context.header}")
                parts += ["  " + line for line in fenced(context.lines, f.language)]
    parts += ["", f"Report findings for {check.value} only. Read before you cite."]
    return "\n".join(parts) + "\n"


@dataclass(frozen=True, slots=True)
class LeadCode:
    """The code shown with a lead: a header naming it and its numbered lines."""

    header: str
    """`function Agent.run, lines 20-58` or `lines 12-40 of a longer function Agent.run`."""
    lines: tuple[tuple[int, str], ...]
    """(line number, text) pairs."""


def lead_code(ws: Workspace, lead: Lead, max_lines: int = _LEAD_CONTEXT_LINES) -> LeadCode | None:
    """The function around a lead's line (a window of it when longer than `max_lines`), or a window alone."""
    f = lead.finding
    if f.file is None or f.line is None:
        return None
    lines = ws.lines(f.file)
    if not lines or not 1 <= f.line <= len(lines):
        return None
    span = enclosing(definitions(ws, f.file), f.line)
    if span is not None and span.last - span.first + 1 <= max_lines:
        first, last, header = span.first, span.last, f"function {span.name}, lines {span.first}-{span.last}"
    else:
        half = max_lines // 2
        first = max(1, f.line - half, span.first if span else 1)
        last = min(len(lines), first + max_lines - 1, span.last if span else len(lines))
        where = f" of a longer function {span.name} ({span.first}-{span.last})" if span else ""
        header = f"lines {first}-{last}{where}"
    return LeadCode(header=header, lines=tuple((n, lines[n - 1]) for n in range(first, last + 1)))


def recon_task(kinds: Sequence[LandmarkKind], static: Sequence[Landmark] = (), *, budget: str | None = None) -> str:
    """The task message of the recon subagent: which kinds to locate, starting from what static recon found.

    Static recon's landmarks are already in the run; the model confirms those that matter and adds what static
    analysis missed, a few per kind, instead of reporting "every place" of a large tree.
    """
    found = {k: [lm for lm in static if lm.kind is k] for k in kinds}
    parts = [RECON_HEADING, ""]
    if static:
        parts.append("Static analysis of the code already located the landmarks listed below; they are part of the "
                     "run. For each kind: confirm the places that matter most with report_landmark (after reading "
                     "them; at most 3 a kind), and report the places static analysis missed (at most 5 a kind), "
                     "first the kinds it found none of. Report nothing you have not read.")
    else:
        parts.append("Locate these landmarks in the workspace and report each with report_landmark (file, line of "
                     "the defining statement, enclosing symbol, confidence): the places that matter most, at most 5 "
                     "a kind. Report nothing you have not read.")
    if budget:
        parts += ["", "## Budget", f"Recon may make {budget}"]
    parts += ["", "## Kinds to locate"]
    parts += [f"- {k.value}: {LANDMARK_GUIDE[k]}" + (f" (static analysis: {len(found[k])} found)" if static else "")
              for k in kinds]
    if static:
        listed = sorted(static, key=lambda lm: (_CONFIDENCE.get(lm.confidence, 3), lm.kind.value, lm.file, lm.line))
        parts += ["", f"## Found by static analysis ({min(len(listed), MAX_TASK_LANDMARKS)} of {len(listed)}"
                      + ("; list_landmarks shows the rest)" if len(listed) > MAX_TASK_LANDMARKS else ")")]
        parts += [landmark_line(lm) for lm in listed[:MAX_TASK_LANDMARKS]]
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
