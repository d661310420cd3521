"""The trace phase: trace checker → the same evidence gate → the same report tail as code audits.

`run_trace` is `harness-audit trace FILE…`; `trace_phase` is also merged into a code audit by
`pipeline.run_audit(..., traces=...)` so both land in one report.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from harness_audit.config import AuditConfig
from harness_audit.errors import UsageError
from harness_audit.findings import CheckId, CheckOutcome, Finding, OutcomeStatus, Refusal
from harness_audit.gate import GateContext, validate
from harness_audit.messages import Msg
from harness_audit.pipeline import AuditRun, PhaseResult, finish, new_run_id, output_dir_of
from harness_audit.render import prepare_output_dir
from harness_audit.report import FileNote
from harness_audit.trace import Format, Options, check_files
from harness_audit.workspace import Discovery, SourceFile, Workspace, user_path, user_path_mode


def resolve_traces(paths: Sequence[str | Path]) -> list[Path]:
    """Existing trace files, absolute and symlink-resolved; a missing path or a directory is a usage error."""
    if not paths:
        raise UsageError("err.trace.none_given")
    out: list[Path] = []
    for p in paths:
        path = user_path(p, Msg("what.trace"))
        if not stat.S_ISREG(user_path_mode(path, Msg("what.trace"), Msg("err.trace.missing", path=str(p)))):
            raise UsageError("err.trace.not_a_file", path=str(p))
        out.append(Path(os.path.realpath(path)))
    return out


def trace_root(files: Sequence[Path]) -> Path:
    """The common parent directory of the trace files: the workspace root of a trace run."""
    return Path(os.path.commonpath([str(f.parent) for f in files]))


def _options(config: AuditConfig, checks: Sequence[CheckId]) -> Options:
    return Options(checks=frozenset(checks), max_turns=config.trace_max_turns,
                   max_tool_calls=config.trace_max_tool_calls, max_identical_calls=config.trace_max_identical_calls)


def trace_phase(ws: Workspace, files: Sequence[Path], checks: Sequence[CheckId], config: AuditConfig,
                fmt: Format | None = None) -> PhaseResult:
    """Check the traces and gate every candidate (trace files are read a window at a time by the gate)."""
    rels = [(f, f.relative_to(ws.root).as_posix()) for f in files]
    t0 = time.perf_counter()
    result = check_files(rels, checks, _options(config, checks), fmt)
    elapsed = time.perf_counter() - t0
    ctx = GateContext(workspace=ws, checks_in_run=checks)
    findings: list[Finding] = []
    refusals: list[Refusal] = []
    for cand in result.candidates:
        gated = validate(cand, ctx)
        (findings if isinstance(gated, Finding) else refusals).append(gated)  # pyright: ignore[reportArgumentType]
    outcomes = [CheckOutcome(check=c, status=OutcomeStatus.RAN if r.ran else OutcomeStatus.NOT_COVERED,
                             error=None if r.ran else r.reason, duration_s=elapsed / max(len(checks), 1))
                for c, r in result.checks.items()]
    unparsed = [FileNote(path=f.path, reason=f"line {line}: {why}") for f in result.files for line, why in f.malformed]
    notes: list[str] = []
    for f in result.files:
        # notes are stored in English (`note.trace.*`) and shown in the reader's language by the renderers
        notes.append(str(Msg("note.trace.file", path=f.path, format=f.format, requests=f.exchanges,
                             conversations=f.conversations, ignored=f.ignored, unreadable=len(f.malformed))))
        notes += [str(Msg("note.trace.more", path=f.path, n=n, rule=rule)) for rule, n in sorted(f.suppressed.items())]
        if f.coverage.unverifiable:
            notes.append(str(Msg("note.trace.unverifiable", path=f.path, n=f.coverage.unverifiable)))
    return PhaseResult(landmarks=[], findings=findings, refusals=refusals, outcomes=outcomes, unparsed=unparsed,
                       extra={"engine": "trace", "notes": tuple(notes)})


def run_trace(paths: Sequence[str | Path], checks: Sequence[CheckId], config: AuditConfig, *,
              fmt: Format | None = None, write: bool = True) -> AuditRun:
    """`harness-audit trace FILE…`: check traces and write the usual reports."""
    t0 = time.perf_counter()
    started = datetime.now().astimezone()
    files = resolve_traces(paths)
    ws = Workspace.open(trace_root(files), excludes=())  # the given files are in scope whatever their folder
    if write:
        prepare_output_dir(output_dir_of(ws, config))
    phase = trace_phase(ws, files, checks, config, fmt)
    discovery = Discovery(files=tuple(SourceFile(f.relative_to(ws.root).as_posix(), "trace") for f in files),
                          skipped=(), excluded_dirs=0)
    return finish(ws, discovery, checks, config, phase, run_id=new_run_id(started), started=started, t0=t0,
                  output_dir=output_dir_of(ws, config), write=write)


def merge_traces(phase: PhaseResult, root: Path, paths: Sequence[str | Path], checks: Sequence[CheckId],
                 config: AuditConfig) -> PhaseResult:
    """Add a trace phase to a code audit's phase: one report for both.

    Trace findings are relative to the audited root when the traces are inside it, else to the traces'
    own folder (said in the notes). A check that ran on either side counts as ran.
    """
    files = resolve_traces(paths)
    inside = all(f.is_relative_to(root) for f in files)
    ws = Workspace.open(root if inside else trace_root(files), excludes=())
    traced = trace_phase(ws, files, checks, config)
    by_check = {o.check: o for o in traced.outcomes}
    outcomes: list[CheckOutcome] = []
    notes = list(phase.extra.get("notes", ())) + list(traced.extra.get("notes", ()))
    if not inside:
        notes.append(str(Msg("note.trace.elsewhere", root=ws.root)))
    for o in phase.outcomes:
        t = by_check.get(o.check)
        if t is not None and t.status is OutcomeStatus.RAN and o.status is not OutcomeStatus.RAN and not o.failure_code:
            outcomes.append(t)
            notes.append(str(Msg("note.trace.covered", check=o.check, status=o.status_text)))
        else:
            outcomes.append(o)
    extra = {**phase.extra, "notes": tuple(notes)}
    return PhaseResult(landmarks=phase.landmarks, findings=[*phase.findings, *traced.findings],
                       refusals=[*phase.refusals, *traced.refusals], outcomes=outcomes,
                       unparsed=[*phase.unparsed, *traced.unparsed], cache_hit=phase.cache_hit, state=phase.state,
                       recon_usage=phase.recon_usage, analysis=phase.analysis, analysis_usage=phase.analysis_usage,
                       extra=extra)
