"""The Python API: what the CLI, the MCP server and the benchmark call."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness_audit.catalogue import CHECKS, parse_selection
from harness_audit.config import AuditConfig, build_config
from harness_audit.errors import UsageError, path_error
from harness_audit.findings import CheckId
from harness_audit.messages import Msg
from harness_audit.pipeline import AuditRun, run_audit
from harness_audit.progress import NO_PROGRESS, Progress
from harness_audit.workspace import user_path, user_path_mode

__all__ = ["AuditRun", "audit", "dropped_checks", "output_dir", "resolve_checks", "resolve_root", "trace",
           "write_cancelled"]


def resolve_root(path: str | Path) -> Path:
    """The audited root; a missing path or a file is a usage error."""
    what = Msg("what.audit_dir")
    root = user_path(path, what)
    mode = user_path_mode(root, what, Msg("err.audit.path_missing", path=str(path)))
    if not stat.S_ISDIR(mode):
        raise UsageError("err.audit.path_is_file", path=str(path))
    try:
        os.scandir(root).close()  # a directory that cannot be listed audits nothing: say so instead
        return root.resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on the way (`Path.resolve`)
        raise path_error(what, path, exc) from None


def output_dir(root: Path, config: AuditConfig) -> Path:
    """Where the reports of an audit of `root` go: `output_dir`, relative paths taken from the audited root."""
    out = Path(config.output_dir).expanduser()
    return out if out.is_absolute() else root / out


def resolve_checks(selection: Sequence[str] | None, config: AuditConfig) -> tuple[CheckId, ...] | None:
    """Explicit selection wins (ignoring the priority floor); else configured `checks` filtered by the floor.

    Returns None when nothing is selected anywhere: the caller must ask, never assume "everything".
    """
    if selection:
        return parse_selection(selection)
    if config.checks:
        chosen = parse_selection(config.checks, origin=Msg("origin.configured_checks"))
        kept = tuple(c for c in chosen if CHECKS[c].priority <= config.priority_floor)
        if not kept:
            raise UsageError("err.audit.all_above_floor", checks=config.checks, floor=config.priority_floor)
        return kept
    return None


def dropped_checks(selection: Sequence[str] | None, config: AuditConfig) -> tuple[tuple[CheckId, Msg], ...]:
    """The configured checks that will not run, each with why (today: above `priority_floor`).

    An explicit selection drops nothing: it ignores the floor. Every dropped check is said, never silent.
    """
    if selection or not config.checks:
        return ()
    chosen = parse_selection(config.checks, origin=Msg("origin.configured_checks"))
    return tuple((c, Msg("summary.floor", priority=CHECKS[c].priority, floor=config.priority_floor))
                 for c in chosen if CHECKS[c].priority > config.priority_floor)


def audit(
    path: str | Path = ".",
    selection: Sequence[str] | None = None,
    *,
    overrides: dict[str, Any] | None = None,
    write: bool = True,
    model_options: Any = None,
    traces: Sequence[str | Path] = (),
    progress: Progress = NO_PROGRESS,
) -> AuditRun:
    """Audit `path` for the selected checks and write the configured reports.

    `traces`: recorded traces (`harness-audit trace` formats) checked in the same run, same report.
    `progress`: observers of the run's progress events (`harness_audit.progress`).

    Raises `UsageError` (or `ConfigError`) for user mistakes, including an empty selection.
    `model_options` (`harness_audit.llm.run.ModelOptions`) is for the llm and hybrid engines: a ready model,
    a canceller, a run to resume.
    """
    root = resolve_root(path)
    config, _ = build_config(root, overrides)
    checks = resolve_checks(selection, config)
    if checks is None:
        raise UsageError("exit.no_selection")
    # notes are stored as English text (reports, ledgers); renderers show them in the report's language
    notes = [str(Msg("note.dropped", check=check, priority=CHECKS[check].priority, floor=config.priority_floor))
             for check, _ in dropped_checks(selection, config)]
    return run_audit(root, checks, config, write=write, model_options=model_options, traces=traces,
                     progress=progress, notes=notes)


def trace(
    files: Sequence[str | Path],
    selection: Sequence[str] | None = None,
    *,
    overrides: dict[str, Any] | None = None,
    fmt: str | None = None,
    write: bool = True,
) -> AuditRun:
    """Check recorded traces (`harness-audit trace FILE…`) and write the configured reports.

    The workspace root is the common parent directory of the files; its configuration applies. With no
    selection, every check a trace can speak to runs (C1 C2 C4 C12 C13 C14 C15). `fmt` forces the format
    (`jsonl`, `vcr`, `har`, `otel`, `ledger`). Raises `UsageError` for a missing file or one that is not a trace.
    """
    from harness_audit.trace import FORMATS, TRACE_CHECKS
    from harness_audit.trace_run import resolve_traces, run_trace, trace_root

    if fmt is not None and fmt not in FORMATS:
        raise UsageError("err.trace.unknown_format", fmt=fmt, formats=", ".join(FORMATS))
    root = trace_root(resolve_traces(files))
    config, _ = build_config(root, overrides)
    checks = parse_selection(selection) if selection else TRACE_CHECKS
    return run_trace(files, checks, config, fmt=fmt, write=write)  # pyright: ignore[reportArgumentType]


def write_cancelled(
    path: str | Path, selection: Sequence[str] | None, *, overrides: dict[str, Any] | None = None,
    progress: Progress = NO_PROGRESS,
) -> AuditRun:
    """The report of an audit cancelled before any check finished: every check listed as cancelled.

    What a cancelled static run leaves (its checks run together, so none is kept part-way).
    """
    import time
    from datetime import datetime

    from harness_audit.findings import CheckOutcome, OutcomeStatus
    from harness_audit.pipeline import STATIC_LANGUAGES, PhaseResult, finish, new_run_id
    from harness_audit.workspace import Workspace

    root = resolve_root(path)
    config, _ = build_config(root, overrides)
    checks = resolve_checks(selection, config) or ()
    started = datetime.now().astimezone()
    ws = Workspace.open(root, excludes=config.excludes, max_file_bytes=config.max_file_bytes)
    outcomes = [CheckOutcome(check=c, status=OutcomeStatus.CANCELLED, error=str(Msg("note.cancelled_early")))
                for c in checks]
    phase = PhaseResult(landmarks=[], findings=[], refusals=[], outcomes=outcomes, unparsed=[], state="cancelled")
    return finish(ws, ws.discover(STATIC_LANGUAGES), checks, config, phase, run_id=new_run_id(started),
                  started=started, t0=time.perf_counter(), output_dir=output_dir(root, config), write=True, progress=progress)
