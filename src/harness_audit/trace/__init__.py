"""The trace checker: runtime checks over recorded provider traffic of any harness.

`check_files` reads each trace (format detected from content), normalises every model exchange
into one event model, splits it into conversations and runs the graders, yielding `Candidate`s
that cite the trace file and the record's line. It never gates, aggregates or renders: the
pipeline does that, exactly as for code audits. No provider SDK is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness_audit.findings import Candidate, CheckId
from harness_audit.trace.checker import TRACE_CHECKS, Checker, Coverage, Options
from harness_audit.trace.dialects import normalise_record
from harness_audit.trace.evidence import Quoter
from harness_audit.trace.model import Malformed
from harness_audit.trace.readers import FORMATS, Format, NotATrace, detect, read

__all__ = ["FORMATS", "TRACE_CHECKS", "CheckResult", "FileResult", "Format", "NotATrace", "Options", "TraceResult",
           "check_files", "detect"]

_WHY_NOT = {
    CheckId.C3: "crash and checkpoint semantics are not visible in provider traffic",
    CheckId.C5: "path and sandbox boundaries are not visible in provider traffic",
    CheckId.C6: "secrets and the process environment are not visible in provider traffic",
    CheckId.C7: "the error taxonomy lives in the harness code, not in its requests",
    CheckId.C8: "partial success of tool batches is decided in the harness code",
    CheckId.C9: "side effects of tools are not visible in provider traffic",
    CheckId.C10: "cancellation propagation is not visible in provider traffic",
    CheckId.C11: "timeout layering is not visible in provider traffic",
}


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
        if check in _WHY_NOT:
            out[check] = CheckResult(ran=False, reason=f"a recorded trace cannot show this: {_WHY_NOT[check]}; "
                                                       "audit the code for it")
        elif cov.requests == 0:
            out[check] = CheckResult(ran=False, reason="the traces hold no model request")
        elif check in (CheckId.C2, CheckId.C14) and cov.compared == 0:
            why = "no conversation in the traces has two consecutive requests with their full history"
            if cov.partial:
                why += (" (a harness-audit ledger or an OpenHands event stream records only the messages new since "
                        "the previous response)")
            out[check] = CheckResult(ran=False, reason=why)
        elif check in (CheckId.C4, CheckId.C15) and cov.responses == 0:
            out[check] = CheckResult(ran=False, reason="the traces record no responses")
        else:
            out[check] = CheckResult(ran=True)
    return out


def check_file(path: Path, rel: str, options: Options, fmt: Format | None = None) -> tuple[list[Candidate], FileResult]:
    """Check one trace file. Raises `NotATrace` when it is not one."""
    checker = Checker(rel, Quoter(path), options)
    records = exchanges = ignored = 0
    malformed: list[tuple[int, str]] = []
    detected = fmt or detect(path)[0]
    for raw in read(path, fmt, name=rel):  # a file that does not read at all raises NotATrace naming `rel`
        records += 1
        if isinstance(raw, Malformed):
            malformed.append((raw.source.line, raw.reason))
            continue
        ex = normalise_record(raw)
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
