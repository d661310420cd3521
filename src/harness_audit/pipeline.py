"""The only module that knows the order: discover → recon → fan-out → gate → aggregate."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import subprocess
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from harness_audit import __version__
from harness_audit.aggregate import build_report
from harness_audit.catalogue import CHECKS
from harness_audit.catalogue.precision import Tier, withholds
from harness_audit.config import AuditConfig
from harness_audit.errors import FailureCode, UsageError, path_error
from harness_audit.findings import (
    Candidate,
    CheckId,
    CheckOutcome,
    Finding,
    Landmark,
    LandmarkCandidate,
    LandmarkKind,
    OutcomeStatus,
    Refusal,
    Usage,
)
from harness_audit.gate import GateContext, validate, validate_landmark
from harness_audit.leads import LeadOutcome
from harness_audit.messages import Msg, resolve_language
from harness_audit.progress import NO_PROGRESS, Progress, ProgressEvent, ProgressKind, outcome_event
from harness_audit.render import prepare_output_dir, write_reports
from harness_audit.report import DismissedLandmark, FileNote, Report, RunMeta
from harness_audit.static import (
    FORK_MIN_SOURCE,
    BackgroundJob,
    ForkedCall,
    StaticResult,
    can_fork,
    no_gc_pauses,
    parse_python,
    run_rules,
    runtime_code_only,
)
from harness_audit.workspace import Discovery, SourceFile, Workspace, printable_path

_CACHE_VERSION = "2"
STATIC_LANGUAGES = ("python", "typescript", "javascript")
"""Languages the static engine reads."""
_GIT_ENV_KEYS = ("PATH", "HOME", "LANG", "LC_ALL", "SYSTEMROOT")


@dataclass(frozen=True, slots=True)
class AuditRun:
    """A finished audit: the report and the files written for it."""

    report: Report
    """The aggregated report."""
    paths: tuple[Path, ...]
    """Report files written (empty when writing was not asked for)."""


def _git(root: Path, *args: str) -> str | None:
    # a minimal environment and a timeout: this runs on the user's tree, not on model input
    env = {k: v for k, v in os.environ.items() if k in _GIT_ENV_KEYS}
    try:
        out = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=10,
                             env=env, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout if out.returncode == 0 else None


def git_state(root: Path) -> tuple[str | None, bool | None]:
    """HEAD commit of the repository holding `root` and whether its tree under `root` is dirty."""
    head = _git(root, "rev-parse", "HEAD")
    if head is None:
        return None, None
    status = _git(root, "status", "--porcelain", "--", ".")
    return head.strip(), bool(status and status.strip())


def _rules_digest() -> str:
    """Hash of the static engine's own source, so a changed rule invalidates cached results."""
    pkg = Path(__file__).parent / "static"
    h = hashlib.sha256(__version__.encode())
    for path in sorted(pkg.rglob("*.py")):
        h.update(path.relative_to(pkg).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _cache_key(ws: Workspace, discovery: Discovery, checks: Sequence[CheckId], preview: bool = False) -> str:
    h = hashlib.sha256(f"{_CACHE_VERSION}\0{_rules_digest()}\0{','.join(checks)}\0{preview}".encode())
    for f in discovery.files:
        h.update(f"{f.path}\0{ws.sha256(f.path) or ''}\n".encode())
    return h.hexdigest()[:32]


def _cache_load(path: Path) -> tuple[StaticResult, list[FileNote]] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    try:
        result = StaticResult(
            landmarks=[LandmarkCandidate(**lm) for lm in data["landmarks"]],
            candidates={CheckId(k): [Candidate(**{**c, "also_at": tuple(c.get("also_at", ()))}) for c in v]
                        for k, v in data["candidates"].items()},
            errors={CheckId(k): v for k, v in data["errors"].items()},
        )
        unparsed = [FileNote(**u) for u in data["unparsed"]]
    except (KeyError, TypeError, ValueError):
        return None
    return result, unparsed


def _cache_store(path: Path, result: StaticResult, unparsed: list[FileNote]) -> None:
    from harness_audit.render import write_atomic

    data: dict[str, Any] = {
        "landmarks": [asdict(lm) for lm in result.landmarks],
        "candidates": {k.value: [asdict(c) for c in v] for k, v in result.candidates.items()},
        "errors": {k.value: v for k, v in result.errors.items()},
        "unparsed": [asdict(u) for u in unparsed],
    }
    # a cache that cannot be written only costs speed next time
    with contextlib.suppress(OSError):
        write_atomic(path, json.dumps(data))


@dataclass(slots=True)
class PhaseResult:
    """What an engine hands to the shared tail of the pipeline: gated data only."""

    landmarks: list[Landmark]
    findings: list[Finding]
    refusals: list[Refusal]
    outcomes: list[CheckOutcome]
    unparsed: list[FileNote]
    cache_hit: bool = False
    state: str = "complete"
    recon_usage: Usage | None = None
    analysis: str | None = None
    analysis_usage: Usage | None = None
    leads: list[LeadOutcome] = field(default_factory=list[LeadOutcome])
    """How each static lead handed to a model ended (hybrid, host); unaddressed ones are also in `findings`."""
    dismissed_landmarks: list[DismissedLandmark] = field(default_factory=list[DismissedLandmark])
    """Landmarks the auditing model dismissed in recon, with its reasons (host runs); not in `landmarks`."""
    extra: dict[str, Any] = field(default_factory=dict[str, Any])
    """RunMeta fields the engine fills (model, base_url, resumed, ledger, notes, price)."""


def docs_url(configured: str | None) -> str | None:
    """Where the check pages are: configured, the GitHub Action's own copy, or this checkout's `docs/checks/`.

    The Action sets `HARNESS_AUDIT_DOCS_URL` to the pages in its repository at its ref; an install from a
    checkout points at the checkout's pages (a `file:` URI); otherwise there is no page to link.
    """
    base = configured or os.environ.get("HARNESS_AUDIT_DOCS_URL")
    if base:
        return base.rstrip("/") + "/"
    local = Path(__file__).resolve().parents[2] / "docs" / "checks"
    return local.as_uri() + "/" if local.is_dir() else None


def new_run_id(started: datetime) -> str:
    """Sortable, unique run id: local start time plus a random suffix."""
    return f"{started.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:8]}"


def output_dir_of(ws: Workspace, config: AuditConfig) -> Path:
    """The configured output directory, relative paths taken from the audited root."""
    out = Path(config.output_dir)
    return out if out.is_absolute() else ws.root / out


def run_static(
    ws: Workspace, discovery: Discovery, checks: Sequence[CheckId], output_dir: Path, config: AuditConfig,
    use_cache: bool, progress: Progress = NO_PROGRESS,
) -> tuple[StaticResult, list[FileNote], bool, dict[CheckId, float]]:
    """Parse, recon and run the rules of `checks`, or load the same from the result cache."""
    cache_path = output_dir / "cache" / f"static-{_cache_key(ws, discovery, checks, config.preview)}.json" if use_cache else None
    cached = _cache_load(cache_path) if cache_path is not None and cache_path.is_file() else None
    timings: dict[CheckId, float] = {}
    if cached is not None:
        return cached[0], cached[1], True, timings
    semantic = _SemanticJob(ws, discovery, checks) if config.preview else None
    try:
        static, unparsed = _run_rules_and_typescript(ws, discovery, checks, timings, progress)
        if semantic is not None:
            semantic.add_to(static, timings)
        runtime_code_only(static, ws.text, [f.path for f in discovery.files])
    finally:
        if semantic is not None:
            semantic.cancel()
    if cache_path is not None:
        _cache_store(cache_path, static, unparsed)
    return static, unparsed, False, timings


def _run_rules_and_typescript(
    ws: Workspace, discovery: Discovery, checks: Sequence[CheckId], timings: dict[CheckId, float], progress: Progress,
) -> tuple[StaticResult, list[FileNote]]:
    """The rules of `checks`, Python (recon and a share of the checks on the second core) then TS/JS."""
    with no_gc_pauses():
        parsed = parse_python(ws, discovery.files)
        # the trees live until the rules are done: keep the collector off them, not off the rules' garbage;
        # frozen before the collector is back on, whose first pass would otherwise walk every node
        gc.freeze()
    # on a large tree, recon and a share of the checks run on the second core while the other checks run here
    background = BackgroundJob(parsed, checks)
    try:
        unparsed = [FileNote(path=u.path, reason=u.reason) for u in parsed.unparsed]
        here = StaticResult()
        for check in background.checks_here():
            progress.emit(ProgressEvent(kind=ProgressKind.CHECK_STARTED, check=check))
            t = time.perf_counter()
            one = run_rules(parsed, [check])
            here.candidates[check] = one.candidates.get(check, [])
            here.errors.update(one.errors)
            timings[check] = time.perf_counter() - t
        done = background.result()
    finally:
        background.cancel()
        del parsed
        gc.unfreeze()
    timings.update(done.timings)
    static = StaticResult(landmarks=done.landmarks)
    for check in checks:
        part = here if check in here.candidates else done.rules
        static.candidates[check] = part.candidates.get(check, [])
        if check in part.errors:
            static.errors[check] = part.errors[check]
    unparsed += _run_typescript(ws, discovery, checks, static, timings)
    return static, unparsed


_SemOutcome = tuple[list[LandmarkCandidate], dict[CheckId, list[Candidate]], dict[CheckId, str]]
"""The semantic layer's landmarks, candidates per check, and per-check failures."""

_SEMANTIC_FORK_MIN_BYTES = FORK_MIN_SOURCE
"""The one threshold both forked jobs use (`static.FORK_MIN_SOURCE`), as this module reads it."""


def _semantic(ws: Workspace, files: Sequence[SourceFile], checks: Sequence[CheckId]) -> _SemOutcome:
    """The semantic layer's queries and roles over `files`."""
    from harness_audit.static.sem.engine import SemProject, landmarks, run_queries

    try:
        with no_gc_pauses():
            project = SemProject.build(ws, files)
            try:
                found = landmarks(project)
                candidates, errors = run_queries(project, checks)
            finally:
                project.close()  # freed now, not walked by the collector's next pass
    except (RecursionError, MemoryError, ValueError, TypeError, AttributeError, KeyError, IndexError) as exc:
        # isolation boundary of the preview engine: the rules' results stand, the preview's failure is said per check
        return [], {}, {c: f"semantic layer failed: {type(exc).__name__}: {exc}" for c in checks}
    return found, candidates, errors


class _SemanticJob:
    """The semantic layer (`--preview`), started before the rules so that, on a large tree with a spare core,
    it runs in its own forked process beside them; otherwise it runs here when its result is asked for. The
    layer parses with its own front ends and shares nothing with the rules, so where it runs changes only the
    time an audit takes and which process holds its memory, never what it finds."""

    def __init__(self, ws: Workspace, discovery: Discovery, checks: Sequence[CheckId]) -> None:
        self._ws, self._files, self._checks = ws, list(discovery.files), tuple(checks)
        self._child = ForkedCall(lambda: _semantic(ws, self._files, self._checks)) if self._worth_forking() else None

    def _worth_forking(self) -> bool:
        if not can_fork():
            return False
        total = 0
        for f in self._files:
            with contextlib.suppress(OSError):
                total += (self._ws.root / f.path).stat().st_size
            if total >= _SEMANTIC_FORK_MIN_BYTES:
                return True
        return False

    def add_to(self, static: StaticResult, timings: dict[CheckId, float]) -> None:
        """Wait for the layer (or run it now) and add its landmarks, candidates and failures into `static`."""
        started = time.perf_counter()
        outcome = self._child.result() if self._child is not None else None
        if outcome is None:  # not forked, or the child failed: the same work, here
            outcome = _semantic(self._ws, self._files, self._checks)
        self._child = None
        found, candidates, errors = outcome
        if any(lm.kind == LandmarkKind.AGENT_LOOP and lm.confidence != "low" for lm in found):
            # where the roles located the agent loop, recon's guesses of it by name and shape are kept with low
            # confidence, listed after the roles' (blind reviews on fresh trees: 6 of 34 of the guesses true,
            # 16 of 23 of the roles' own; benchmarks/README.md); a place both name stays as the roles rate it
            static.landmarks[:] = [replace(lm, confidence="low")
                                   if lm.kind == LandmarkKind.AGENT_LOOP and lm.source == "static:recon" else lm
                                   for lm in static.landmarks]
        static.landmarks.extend(found)
        for check in self._checks:
            static.candidates.setdefault(check, []).extend(candidates.get(check, []))
            if check in errors and check not in static.errors:
                static.errors[check] = errors[check]
        # the time the layer kept the audit waiting (run here, or waited for beside the rules), shared out
        spent = time.perf_counter() - started
        for check in self._checks:
            timings[check] = timings.get(check, 0.0) + spent / max(1, len(self._checks))

    def cancel(self) -> None:
        if self._child is not None:
            self._child.cancel()
            self._child = None


def _run_typescript(ws: Workspace, discovery: Discovery, checks: Sequence[CheckId], static: StaticResult,
                    timings: dict[CheckId, float]) -> list[FileNote]:
    """The TS/JS half of the static engine, added into `static`; returns the files it could not fully use."""
    if all(f.language == "python" for f in discovery.files):
        return []  # imported only when needed: the TS engine (and tree-sitter) would cost every Python-only audit
    from harness_audit.static.ts import TS_LANGUAGES, parse_typescript, run_ts_rules, ts_recon

    files = [f for f in discovery.files if f.language in TS_LANGUAGES]
    if not files:
        return []
    t = time.perf_counter()
    parsed = parse_typescript(ws, files)
    static.landmarks.extend(ts_recon(parsed))
    candidates, errors = run_ts_rules(parsed, checks)
    for check in checks:
        static.candidates.setdefault(check, []).extend(candidates.get(check, []))
        if check in errors and check not in static.errors:
            static.errors[check] = errors[check]
    share = (time.perf_counter() - t) / max(len(checks), 1)
    for check in checks:
        timings[check] = timings.get(check, 0.0) + share
    return [FileNote(path=n.path, reason=n.reason) for n in (*parsed.unparsed, *parsed.partial)]


def gate_landmarks(ws: Workspace, checks: Sequence[CheckId], candidates: Sequence[LandmarkCandidate],
                   refusals: list[Refusal]) -> list[Landmark]:
    """Landmark candidates through the gate; refusals are appended to `refusals`."""
    ctx = GateContext(workspace=ws, checks_in_run=checks, recon=True)
    landmarks: list[Landmark] = []
    for lm in candidates:
        gated = validate_landmark(lm, ctx)
        if isinstance(gated, Landmark):
            landmarks.append(gated)
        else:
            refusals.append(gated)
    return landmarks


def _static_phase(ws: Workspace, discovery: Discovery, checks: Sequence[CheckId], output_dir: Path,
                  config: AuditConfig, use_cache: bool, progress: Progress = NO_PROGRESS) -> PhaseResult:
    static, unparsed, cache_hit, timings = run_static(ws, discovery, checks, output_dir, config, use_cache, progress)
    refusals: list[Refusal] = []
    landmarks = gate_landmarks(ws, checks, static.landmarks, refusals)
    progress.emit(ProgressEvent(kind=ProgressKind.RECON_DONE, landmarks=len(landmarks)))
    found_kinds = {lm.kind for lm in landmarks}
    ctx = GateContext(workspace=ws, checks_in_run=checks)
    floor = Tier(config.min_precision)
    findings: list[Finding] = []
    outcomes: list[CheckOutcome] = []
    for check in checks:
        missing = tuple(k for k in CHECKS[check].requires if k not in found_kinds)
        if missing:
            outcomes.append(CheckOutcome(check=check, status=OutcomeStatus.NOT_COVERED, missing_landmarks=missing))
            progress.emit(ProgressEvent(kind=ProgressKind.NOT_COVERED, check=check, missing=missing))
            continue
        kept, refused = len(findings), len(refusals)
        for cand in static.candidates.get(check, []):
            gated = validate(cand, ctx)
            if isinstance(gated, Finding):
                findings.append(gated)
            else:
                refusals.append(gated)
        error = static.errors.get(check)
        outcomes.append(CheckOutcome(
            check=check,
            status=OutcomeStatus.FAILED if error else OutcomeStatus.RAN,
            failure_code=FailureCode.INTERNAL_ERROR.value if error else None,
            duration_s=timings.get(check, 0.0), error=error,
        ))
        # the count a reader will find in the report: findings the run's precision floor withholds are not in it
        reported = sum(withholds(f.source, floor) is None for f in findings[kept:])
        progress.emit(outcome_event(outcomes[-1], findings=reported, refusals=len(refusals) - refused))
    state = "incomplete" if any(o.status is OutcomeStatus.FAILED for o in outcomes) else "complete"
    return PhaseResult(landmarks=landmarks, findings=findings, refusals=refusals, outcomes=outcomes,
                       unparsed=unparsed, cache_hit=cache_hit, state=state)


def run_audit(
    root: Path,
    checks: Sequence[CheckId],
    config: AuditConfig,
    *,
    write: bool = True,
    use_cache: bool | None = None,
    model_options: Any = None,
    traces: Sequence[str | Path] = (),
    progress: Progress = NO_PROGRESS,
    notes: Sequence[str] = (),
) -> AuditRun:
    """Run the configured engine on `root` for `checks` and (optionally) write the reports.

    `notes`: statements about the run made before it started (checks the configuration dropped), for the report.

    `traces`: recorded traces checked in the same run and reported together (`--trace FILE`).
    `progress`: observers of the run's progress events (recon done, each check, reports written).

    `model_options` (a `harness_audit.llm.run.ModelOptions`) carries what only the model engines need:
    a model object for tests, a canceller, a run to resume.
    """
    t0 = time.perf_counter()
    started = datetime.now().astimezone()
    ws = Workspace.open(root, excludes=config.excludes, max_file_bytes=config.max_file_bytes)
    output_dir = output_dir_of(ws, config)
    if write:
        prepare_output_dir(output_dir)  # a bad --output-dir is a usage error before any work, not after it
    discovery = ws.discover(STATIC_LANGUAGES)
    run_id = new_run_id(started)
    if config.engine == "static":
        use_cache = config.cache if use_cache is None else use_cache
        phase = _static_phase(ws, discovery, checks, output_dir, config, use_cache, progress)
    else:
        try:
            from harness_audit.llm.run import model_phase
        except ImportError as exc:
            raise UsageError("err.engine.llm_missing", engine=config.engine, missing=exc.name or str(exc)) from exc
        phase = model_phase(ws, discovery, checks, config, output_dir=output_dir, run_id=run_id,
                            options=model_options, progress=progress)
    if traces:
        from harness_audit.trace_run import merge_traces

        phase = merge_traces(phase, ws.root, traces, checks, config)
    if notes:
        phase.extra["notes"] = (*notes, *phase.extra.get("notes", ()))
    return finish(ws, discovery, checks, config, phase, run_id=run_id, started=started, t0=t0,
                  output_dir=output_dir, write=write, progress=progress)


def finish(
    ws: Workspace, discovery: Discovery, checks: Sequence[CheckId], config: AuditConfig, phase: PhaseResult, *,
    run_id: str, started: datetime, t0: float, output_dir: Path, write: bool, progress: Progress = NO_PROGRESS,
) -> AuditRun:
    """The shared tail of every engine: run facts, aggregation, reports."""
    commit, dirty = git_state(ws.root)
    finished = datetime.now().astimezone()
    meta = RunMeta(
        tool_version=__version__, run_id=run_id,
        started_at=started.isoformat(timespec="seconds"), finished_at=finished.isoformat(timespec="seconds"),
        duration_s=time.perf_counter() - t0, root=printable_path(str(ws.root)), commit=commit, dirty=dirty,
        engine=str(phase.extra.get("engine", config.engine)),
        requested=tuple(checks), files_scanned=len(discovery.files), excluded_dirs=discovery.excluded_dirs,
        cache_hit=phase.cache_hit, state=phase.state, language=resolve_language(config.language),
        docs_url=docs_url(config.docs_url),
        **{k: v for k, v in phase.extra.items() if k != "engine"},
    )
    report = build_report(
        meta=meta, findings=phase.findings, outcomes=phase.outcomes, refusals=phase.refusals,
        landmarks=phase.landmarks, skipped_files=[FileNote(path=s.path, reason=s.reason) for s in discovery.skipped],
        unparsed_files=phase.unparsed, recon_usage=phase.recon_usage, analysis=phase.analysis,
        analysis_usage=phase.analysis_usage, context=ws.context, leads=phase.leads, window=ws.line_window,
        suppressions=config.suppressions, min_precision=config.min_precision, dismissed_landmarks=phase.dismissed_landmarks,
    )
    try:
        paths = write_reports(report, output_dir, config.formats, started) if write else []
    except OSError as exc:  # checked writable before the audit; gone since (removed, full, read-only)
        raise path_error(Msg("what.output_dir"), output_dir, exc) from None
    progress.emit(ProgressEvent(kind=ProgressKind.REPORTS_WRITTEN, detail=report.meta.state,
                                paths=tuple(str(p) for p in paths)))
    return AuditRun(report, tuple(paths))
