"""Inline suppressions: `# harness-audit: ignore[C8] reason` (or `//`) on or just above the cited line.

A marker names check ids or rule ids in the selection grammar (`ignore[C8]`, `ignore[C8,C11]`,
`ignore[C8/parallel-batch-all-or-nothing]`) and must give a reason: one without a reason, or naming no check
we know, suppresses nothing and is listed as a problem. It applies to a finding whose cited line carries it as a
trailing comment, or whose cited line sits right under a block of comment lines that holds it. Pure functions
over the lines around a finding; aggregation applies them, and `--no-suppressions` skips them so that audited code
cannot hide a third-party audit.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from harness_audit.catalogue import parse_selection
from harness_audit.errors import UsageError
from harness_audit.findings import Finding
from harness_audit.messages import Msg

MARKER = re.compile(r"(?:#|//)\s*harness-audit:\s*ignore\[(?P<ids>[^\]]*)\](?P<reason>[^\n]*)$")
"""The marker, anywhere in a comment at the end of a line."""
LOOK_ABOVE = 5
"""How many lines above the cited line a comment block holding a marker may start."""
_COMMENT_LINE = re.compile(r"^\s*(#|//)")


@dataclass(frozen=True, slots=True, kw_only=True)
class Marker:
    """A suppression marker as written."""

    line: int
    """1-based line of the marker."""
    ids: tuple[str, ...]
    """What it names, as written (check ids or rule ids)."""
    reason: str
    """Why, as written (empty when missing)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """What the markers around one finding decide."""

    marker: Marker | None = None
    """The marker that suppresses the finding, or None."""
    problem: str | None = None
    """Why a marker that names this finding was not applied (no reason, unknown id)."""


def markers_near(lines: Sequence[str], first: int, cited: int) -> list[Marker]:
    """Markers on the cited line and in the comment block directly above it (`lines[0]` is line `first`)."""
    out: list[Marker] = []
    candidates = [cited]
    n = cited - 1
    while n >= first and cited - n <= LOOK_ABOVE and _COMMENT_LINE.match(lines[n - first]):
        candidates.append(n)
        n -= 1
    for number in candidates:
        if not 0 <= number - first < len(lines):
            continue
        m = MARKER.search(lines[number - first])
        if m:
            ids = tuple(i.strip() for i in m.group("ids").split(",") if i.strip())
            out.append(Marker(line=number, ids=ids, reason=m.group("reason").strip(" -—:")))
    return out


def _names(marker_id: str, finding: Finding) -> bool | None:
    """Whether one id of a marker names this finding; None when the id is not one we know."""
    if "/" in marker_id:
        try:
            parse_selection([marker_id], origin=Msg("origin.suppression"))
        except UsageError:
            return None
        check, _, rule = marker_id.partition("/")
        return finding.source.endswith(f":C{int(check[1:])}/{rule}")
    try:
        return finding.check in parse_selection([marker_id], origin=Msg("origin.suppression"))
    except UsageError:
        return None


def decide(finding: Finding, lines: Sequence[str], first: int) -> Verdict:
    """Whether `finding` is suppressed by a marker near its cited line, or why a marker naming it was refused."""
    if not finding.located or finding.line is None:
        return Verdict()
    problem: str | None = None
    for marker in markers_near(lines, first, finding.line):
        named = [_names(i, finding) for i in marker.ids]
        unknown = [i for i, n in zip(marker.ids, named, strict=True) if n is None]
        if not marker.ids or unknown:
            # stored in English (reports, JSON); renderers show it in the report's language (`localize`)
            problem = (str(Msg("note.suppression_unknown", where=f"{finding.file}:{marker.line}",
                                   ids=", ".join(map(repr, unknown))))
                       if unknown else str(Msg("note.suppression_no_ids", where=f"{finding.file}:{marker.line}")))
            continue
        if not any(named):
            continue
        if not marker.reason:
            problem = str(Msg("note.suppression_no_reason", where=f"{finding.file}:{marker.line}",
                              check=finding.check))
            continue
        return Verdict(marker=marker)
    return Verdict(problem=problem)
