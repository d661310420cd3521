"""The trace checker: runtime checks over recorded provider traffic of any harness.

`check_files` reads each trace (format detected from content), normalises every model exchange
into one event model, splits it into conversations and runs the graders, yielding `Candidate`s
that cite the trace file and the record's line. It never gates, aggregates or renders: the
pipeline does that, exactly as for code audits. No provider SDK is imported.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness_audit.findings import Candidate, CheckId
from harness_audit.messages import Msg
from harness_audit.trace.checker import TRACE_CHECKS, Checker, Coverage, Options
from harness_audit.trace.dialects import normalise_record
from harness_audit.trace.evidence import Quoter
from harness_audit.trace.model import Exchange, Malformed
from harness_audit.trace.readers import FORMATS, Format, NotATrace, detect, read

__all__ = ["FORMATS", "TRACE_CHECKS", "CheckResult", "FileResult", "Format", "NotATrace", "Options", "TraceResult",
           "check_files", "detect"]

_WHY_NOT = frozenset({CheckId.C3, CheckId.C5, CheckId.C6, CheckId.C7, CheckId.C8, CheckId.C9, CheckId.C10,
                      CheckId.C11})
"""Checks provider traffic cannot show; each has its reason, `note.trace.cannot_show.<check>`, in the catalogue."""


@dataclass(frozen=True, slots=True, kw_only=True)
class FileResult:
    """What one trace file held."""

    path: str
    """Path relative to the workspace root."""
    format: Format
    """Detected or forced format."""
    records: int
    """Records read."""
    exchanges: int
    """Model requests checked."""
    ignored: int
    """Records that were not model traffic."""
    conversations: int
    """Conversations the splitter found."""
    malformed: tuple[tuple[int, str], ...]
    """(line, reason) of each record that could not be read."""
    suppressed: dict[str, int]
    """Findings per rule beyond the cap, counted but not listed."""
    coverage: Coverage
    """What the graders could see."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    """Whether a check could run on the traces, and why not."""

    ran: bool
    """True when at least one trace gave the check something to look at."""
    reason: str = ""
    """Why it could not run (not-covered)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceResult:
    """Candidates and facts of one trace run."""

    candidates: tuple[Candidate, ...]
    """Every finding proposed, ungated."""
    files: tuple[FileResult, ...]
    """Per-file facts."""
    checks: dict[CheckId, CheckResult] = field(default_factory=dict[CheckId, CheckResult])
    """Outcome facts per requested check."""


def _outcomes(checks: Sequence[CheckId], files: Sequence[FileResult]) -> dict[CheckId, CheckResult]:
    cov = Coverage()
    for f in files:
        for name in ("requests", "responses", "full_histories", "compared", "partial", "conversations"):
            setattr(cov, name, getattr(cov, name) + getattr(f.coverage, name))
    out: dict[CheckId, CheckResult] = {}
    for check in checks:
        # reasons are stored in English (`note.trace.*`) and shown in the reader's language by the renderers
        if check in _WHY_NOT:
            out[check] = CheckResult(ran=False, reason=str(Msg(f"note.trace.cannot_show.{check.value}")))
        elif cov.requests == 0:
            out[check] = CheckResult(ran=False, reason=str(Msg("note.trace.no_request")))
        elif check in (CheckId.C2, CheckId.C14) and cov.compared == 0:
            key = "note.trace.no_pair_partial" if cov.partial else "note.trace.no_pair"
            out[check] = CheckResult(ran=False, reason=str(Msg(key)))
        elif check in (CheckId.C4, CheckId.C15) and cov.responses == 0:
            out[check] = CheckResult(ran=False, reason=str(Msg("note.trace.no_responses")))
        else:
            out[check] = CheckResult(ran=True)
    return out


def exchanges_of(path: Path, fmt: Format | None = None, *, name: str | None = None) -> Iterator[Exchange | Malformed | None]:
    """Each record of a trace file as an exchange, `Malformed` (with its line and why), or None (a record that is
    no model exchange). The one reading loop of the checker and the pytest plugin."""
    for raw in read(path, fmt, name=name):
        yield raw if isinstance(raw, Malformed) else normalise_record(raw)


def check_file(path: Path, rel: str, options: Options, fmt: Format | None = None) -> tuple[list[Candidate], FileResult]:
    """Check one trace file. Raises `NotATrace` when it is not one."""
    checker = Checker(rel, Quoter(path), options)
    records = exchanges = ignored = 0
    malformed: list[tuple[int, str]] = []
    detected = fmt or detect(path)[0]
    for ex in exchanges_of(path, fmt, name=rel):  # a file that does not read at all raises NotATrace naming `rel`
        records += 1
        if ex is None:
            ignored += 1
        elif isinstance(ex, Malformed):
            malformed.append((ex.source.line, ex.reason))
        else:
            exchanges += ex.request is not None
            checker.feed(ex)
    checker.finish()
    if records and not exchanges and not ignored and len(malformed) == records:
        raise NotATrace("err.trace.all_malformed", name=rel, records=records, line=malformed[0][0],
                        reason=malformed[0][1])
    result = FileResult(path=rel, format=detected, records=records, exchanges=exchanges, ignored=ignored,
                        conversations=checker.coverage.conversations, malformed=tuple(malformed),
                        suppressed=dict(checker.suppressed), coverage=checker.coverage)
    return checker.candidates, result


def check_files(files: Sequence[tuple[Path, str]], checks: Sequence[CheckId], options: Options | None = None,
                fmt: Format | None = None) -> TraceResult:
    """Check trace files given as (path, path relative to the workspace root)."""
    opts = options or Options()
    wanted = frozenset(c for c in checks if c in TRACE_CHECKS)
    opts = Options(checks=wanted, max_turns=opts.max_turns, max_tool_calls=opts.max_tool_calls,
                   max_identical_calls=opts.max_identical_calls, max_findings_per_rule=opts.max_findings_per_rule,
                   max_open_conversations=opts.max_open_conversations, max_open_sessions=opts.max_open_sessions)
    candidates: list[Candidate] = []
    results: list[FileResult] = []
    for path, rel in files:
        found, result = check_file(path, rel, opts, fmt)
        candidates += found
        results.append(result)
    return TraceResult(candidates=tuple(candidates), files=tuple(results), checks=_outcomes(checks, results))
