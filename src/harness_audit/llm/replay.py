"""Reading a run back from its ledger: re-render its report, re-run it on recorded responses, resume it.

- `rerender(run_dir)`: the report again, from the ledger alone (every recorded report re-gated
  against the tree, so a file that changed since is refused, not trusted).
- `ReplayModel`: a pydantic-ai model that serves each unit's recorded responses (and transport
  errors) in order; the engine re-runs on it with no provider and reaches the same report.
- `load_prior(run_dir)`: what a cancelled or crashed run finished, for `resume`.
"""

from __future__ import annotations

import asyncio
import os
from collections import defaultdict, deque
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path, PurePath
from typing import Any

from pydantic import ValidationError
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelResponse, UserPromptPart
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.settings import ModelSettings

from harness_audit import __version__
from harness_audit.aggregate import build_report
from harness_audit.config import AuditConfig
from harness_audit.errors import UsageError
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
from harness_audit.leads import gate_leads, settle_leads
from harness_audit.llm.canonical import CanonicalMessage, request_messages, response_from
from harness_audit.llm.engine import CANCEL_FILE, Prior
from harness_audit.llm.events import (
    BadEvent,
    CandidateData,
    FindingAccepted,
    LandmarkAccepted,
    LandmarkDismissed,
    LeadDismissed,
    ReconEnd,
    Refused,
    Request,
    RequestError,
    Response,
    RunEnd,
    RunMetaData,
    RunStart,
    StaticLandmarks,
    StaticLeads,
    UnitEnd,
    UnitStart,
    UsageData,
    parse_event,
)
from harness_audit.llm.ledger import LEDGER_NAME, LEDGER_VERSION, LedgerRead, read_ledger
from harness_audit.llm.prompts import unit_of
from harness_audit.messages import Msg, resolve_language
from harness_audit.pipeline import docs_url as _docs_url
from harness_audit.render import write_reports
from harness_audit.report import FileNote, LandmarkKey, Report, RunMeta, split_dismissed
from harness_audit.workspace import Workspace


@dataclass(slots=True)
class _UnitRecord:
    """Everything the ledger holds about one unit's LAST attempt."""

    end: UnitEnd | None = None
    findings: list[tuple[Candidate, str | None]] = field(default_factory=list[tuple[Candidate, str | None]])
    """Accepted reports, each with the static lead it named."""
    dismissed: dict[str, str] = field(default_factory=dict[str, str])
    """Lead id to the reason the unit gave for dismissing it."""
    refused: list[Candidate] = field(default_factory=list[Candidate])
    landmarks: list[LandmarkCandidate] = field(default_factory=list[LandmarkCandidate])
    refused_landmarks: list[LandmarkCandidate] = field(default_factory=list[LandmarkCandidate])
    attempts: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    """`request`, `response` and `request-error` events (validated) of the last attempt, in order."""
    earlier: Usage = field(default_factory=Usage)
    """What the unit's earlier attempts spent (a unit run again after a cancel or a crash)."""

    @property
    def last(self) -> Usage:
        """What the last attempt spent: the usage of its responses."""
        total = Usage()
        for a in self.attempts:
            if a["event"] == "response":
                total = total + Usage(**a["usage"])
        return total

    @property
    def spent(self) -> Usage:
        """What every attempt of the unit spent, in all runs the ledger holds."""
        return self.earlier + self.last


@dataclass(slots=True)
class RunRecord:
    """A ledger, validated and grouped by unit."""

    run_dir: Path
    """The directory the ledger is in."""
    start: RunStart
    config: AuditConfig
    end: RunEnd | None
    units: dict[str, _UnitRecord]
    recon_end: ReconEnd | None
    static_landmarks: list[LandmarkCandidate]
    leads: dict[CheckId, list[tuple[str, Candidate]]]
    """The static leads of each check (hybrid), numbered, as handed out."""
    torn: bool
    dismissed_landmarks: dict[LandmarkKey, tuple[str, str]] = field(default_factory=dict[LandmarkKey, tuple[str, str]])
    """(kind, file, line) of each landmark recon dismissed (host runs) → (reason, unit)."""

    @property
    def checks(self) -> tuple[CheckId, ...]:
        """The checks of the run, in its order."""
        return tuple(self.start.checks)


def _usage(data: UsageData | None) -> Usage:
    return data.value() if data is not None else Usage()


def _validated(path: Path, read: LedgerRead) -> list[tuple[int, dict[str, Any], Any]]:
    """Every event of `read` checked against the schema; the first bad line is a `UsageError` naming it."""
    if read.skipped:
        raise UsageError("err.ledger.not_object", path=str(path), line=read.skipped[0])
    out: list[tuple[int, dict[str, Any], Any]] = []
    for number, raw in zip(read.numbers, read.events, strict=True):
        try:
            out.append((number, raw, parse_event(raw)))
        except BadEvent as exc:
            raise UsageError("err.ledger.bad_event", path=str(path), line=number, detail=str(exc)) from None
    return out


def load_run(run_dir: Path) -> RunRecord:
    """Validate a run's ledger and group it by unit; only each unit's last attempt (after its last
    `unit-start`) counts. A ledger that is not valid is a `UsageError` naming its first bad line."""
    path = run_dir / LEDGER_NAME if run_dir.is_dir() else run_dir
    read: LedgerRead = read_ledger(path)
    events = _validated(path, read)
    starts = [(n, e) for n, _, e in events if isinstance(e, RunStart)]
    if not starts:
        raise UsageError("err.ledger.no_start", path=str(path))
    number, start = starts[-1]
    if start.version != LEDGER_VERSION:
        raise UsageError("err.ledger.version", path=str(path), version=start.version, supported=LEDGER_VERSION)
    try:
        config = AuditConfig.model_validate(start.config)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "config"
        raise UsageError("err.ledger.bad_config", path=str(path), line=number, where=where,
                         detail=" ".join(str(first["msg"]).split())[:200]) from None
    units: dict[str, _UnitRecord] = defaultdict(_UnitRecord)
    recon_end: ReconEnd | None = None
    run_end: RunEnd | None = None
    static: list[LandmarkCandidate] = []
    leads: dict[CheckId, list[tuple[str, Candidate]]] = {}
    dismissed_landmarks: dict[LandmarkKey, tuple[str, str]] = {}
    for _, raw, e in events:
        if isinstance(e, UnitStart):
            before = units.get(e.unit)
            units[e.unit] = _UnitRecord(earlier=before.spent if before is not None else Usage())
        elif isinstance(e, UnitEnd):
            units[e.unit].end = e
        elif isinstance(e, Request | Response | RequestError):
            units[e.unit].attempts.append(raw)  # served as recorded; the schema has vouched for its shape
        elif isinstance(e, FindingAccepted):
            units[e.unit].findings.append((e.candidate.value(), e.lead))
        elif isinstance(e, LeadDismissed):
            units[e.unit].dismissed[e.lead] = e.reason
        elif isinstance(e, LandmarkDismissed):
            dismissed_landmarks[(e.kind, e.file, e.line)] = (e.reason, f"{start.engine}:{e.unit}")
        elif isinstance(e, StaticLeads):
            leads = {check: [(lead.id, lead.candidate.value()) for lead in items] for check, items in e.leads.items()}
        elif isinstance(e, LandmarkAccepted):
            units[e.unit].landmarks.append(e.candidate.value())
        elif isinstance(e, Refused) and isinstance(e.candidate, CandidateData):
            units[e.unit].refused.append(e.candidate.value())
        elif isinstance(e, Refused):
            units[e.unit].refused_landmarks.append(e.candidate.value())
        elif isinstance(e, ReconEnd):
            recon_end = e
        elif isinstance(e, StaticLandmarks):
            static = [c.value() for c in e.candidates]
        elif isinstance(e, RunEnd):
            run_end = e
    return RunRecord(run_dir=path.parent, start=start, config=config, end=run_end, units=dict(units),
                     recon_end=recon_end, static_landmarks=static, leads=leads, torn=read.torn,
                     dismissed_landmarks=dismissed_landmarks)


def audited_root(rec: RunRecord, given: Path | None = None) -> Path:
    """The tree a run's findings are re-gated against: `given`, or the directory the ledger lives beside.

    The `root` a ledger names is a claim, never read: a ledger could name `/etc`. Without `given`, the
    root is the directory holding the run's output directory (`<root>/<output_dir>/runs/<run-id>`),
    accepted only when the recorded layout says the output directory sat directly inside the root;
    otherwise the user names the tree with `--root`.
    """
    if given is not None:
        if not given.is_dir():
            raise UsageError("err.root_not_dir", root=str(given))
        return given.resolve()
    out = rec.run_dir.parent.parent
    recorded_root = PurePath(rec.start.root)
    recorded_out = PurePath(os.path.normpath(recorded_root / rec.config.output_dir))
    if rec.run_dir.parent.name == "runs" and recorded_out.parent == recorded_root and recorded_out.name == out.name \
            and out.parent.is_dir():
        return out.parent.resolve()
    raise UsageError("err.ledger.which_root", run_id=rec.start.run_id, root=rec.start.root)


def _outcome(check: CheckId, rec: _UnitRecord | None, *, interrupted: bool) -> CheckOutcome:
    end = rec.end if rec else None
    if end is None:
        status = OutcomeStatus.CANCELLED if interrupted else OutcomeStatus.FAILED
        return CheckOutcome(check=check, status=status, error=str(Msg("note.ended_before_check")))
    missing = tuple(LandmarkKind(k) for k in end.missing if k in LandmarkKind.__members__.values())
    assert rec is not None
    # the spend of every attempt: a check cancelled, then resumed, cost both attempts
    usage = rec.spent if rec.spent.requests or not rec.spent.known else _usage(end.usage)
    return CheckOutcome(check=check, status=end.status, failure_code=end.failure.value if end.failure else None,
                        missing_landmarks=missing, usage=usage, duration_s=float(end.duration_s), error=end.error)


def _recon_usage(rec: RunRecord) -> Usage:
    """What recon cost over every attempt (the recon-end event of a resumed run repeats an earlier total)."""
    recon = rec.units.get("recon")
    if recon is not None and (recon.spent.requests or not recon.spent.known):
        return recon.spent
    return _usage(rec.recon_end.usage) if rec.recon_end else Usage()


def _analysis(ur: _UnitRecord | None) -> tuple[str | None, Usage | None]:
    """The cross-check analysis a run recorded: the text of its last reply when the unit ran, and its usage."""
    if ur is None or ur.end is None:
        return None, None
    responses = [a for a in ur.attempts if a["event"] == "response"]
    text = None
    if ur.end.status is OutcomeStatus.RAN and responses:
        parts = responses[-1]["message"].get("parts", [])
        text = "".join(str(p.get("text", "")) for p in parts if p.get("type") == "text").strip() or None
    return text, _usage(ur.end.usage)


def rerender(run_dir: Path, *, root: Path | None = None, write: bool = True) -> tuple[Report, list[Path]]:
    """The run's report rebuilt from its ledger, every report re-gated against the audited tree (see
    `audited_root`); written next to the original reports when `write`."""
    from harness_audit.llm.run import price_of

    rec = load_run(run_dir)
    config = rec.config
    ws = Workspace.open(audited_root(rec, root), excludes=config.excludes, max_file_bytes=config.max_file_bytes)
    checks = rec.checks
    refusals: list[Refusal] = []
    landmarks: list[Landmark] = []
    recon_ctx = GateContext(workspace=ws, checks_in_run=checks, recon=True)
    recon = rec.units.get("recon", _UnitRecord())
    for lm in [*rec.static_landmarks, *recon.landmarks, *recon.refused_landmarks]:
        gated = validate_landmark(lm, recon_ctx)
        (landmarks if isinstance(gated, Landmark) else refusals).append(gated)  # type: ignore[arg-type]
    landmarks, dismissed_landmarks = split_dismissed(landmarks, rec.dismissed_landmarks)
    findings: list[Finding] = []
    reported: list[tuple[Finding, str | None]] = []
    for unit, ur in rec.units.items():
        assigned = CheckId(unit) if unit in CheckId.__members__ else None  # recon and analysis: no check
        ctx = GateContext(workspace=ws, checks_in_run=checks, assigned=assigned, recon=assigned is None)
        for cand, lead in [*ur.findings, *((c, None) for c in ur.refused)]:
            gated = validate(cand, ctx)
            if isinstance(gated, Finding):
                findings.append(gated)
                reported.append((gated, lead))
            else:
                refusals.append(gated)
    leads = gate_leads(ws, checks, rec.leads, refusals)
    handed = [lead for c in checks if c.value in rec.units for lead in leads.get(c, [])]
    by = "host" if rec.start.engine == "host" else "llm"  # who settled the leads: the host's model or ours
    dismissed = {lead: (reason, f"{by}:{unit}") for unit, ur in rec.units.items() for lead, reason in ur.dismissed.items()}
    lead_outcomes, kept = settle_leads(handed, reported, dismissed, settled_by={c: f"{by}:{c.value}" for c in checks})
    findings.extend(kept)
    interrupted = rec.end is None
    outcomes = [_outcome(c, rec.units.get(c.value), interrupted=interrupted) for c in checks]
    host_run: dict[str, Any] = {}
    if rec.start.engine == "host":  # what a host run spent is its protocol calls and their times, not our requests
        from harness_audit.host import host_spend

        spent = host_spend(rec.run_dir)
        outcomes = [replace(o, duration_s=spent.durations.get(o.check.value, o.duration_s))
                    for o in outcomes]
        host_run = {"protocol_calls": spent.calls, "recon_duration_s": spent.durations.get("recon")}
    state = rec.end.state if rec.end else "cancelled"
    started = datetime.fromisoformat(rec.start.started_at)
    finished = datetime.fromtimestamp((rec.end or rec.start).t).astimezone()
    extra = rec.end.meta if rec.end else RunMetaData()
    meta = RunMeta(
        tool_version=__version__, run_id=rec.start.run_id, started_at=started.isoformat(timespec="seconds"),
        finished_at=finished.isoformat(timespec="seconds"), duration_s=max((finished - started).total_seconds(), 0.0),
        root=str(ws.root), commit=extra.commit, dirty=extra.dirty, engine=rec.start.engine,
        requested=checks, state=state, files_scanned=extra.files_scanned,
        excluded_dirs=extra.excluded_dirs, model=rec.start.model,
        base_url=rec.start.base_url, resumed=tuple(rec.start.resumed),
        ledger=str(rec.run_dir / LEDGER_NAME),
        notes=(*extra.notes, str(Msg("note.rerendered"))),
        price=rec.start.price.value() if rec.start.price is not None else price_of(config),
        language=resolve_language(config.language), docs_url=_docs_url(config.docs_url), **host_run,
    )
    analysis, analysis_usage = _analysis(rec.units.get("analysis"))
    recon_usage = _recon_usage(rec) if rec.recon_end and rec.recon_end.status != "static" else None
    report = build_report(
        meta=meta, findings=findings, outcomes=outcomes, refusals=refusals, landmarks=landmarks,
        skipped_files=[FileNote(path=n.path, reason=n.reason) for n in extra.skipped],
        unparsed_files=[FileNote(path=n.path, reason=n.reason) for n in extra.unparsed], recon_usage=recon_usage,
        analysis=analysis, analysis_usage=analysis_usage, context=ws.context, leads=lead_outcomes,
        window=ws.line_window, suppressions=config.suppressions, dismissed_landmarks=dismissed_landmarks,
    )
    out_dir = rec.run_dir / "replay"
    paths = write_reports(report, out_dir, config.formats, started) if write else []
    return report, paths


class ReplayModel(Model):
    """Serves the recorded responses of a run, unit by unit, in the order they were received.

    A unit whose recording ends on a request that never got an answer, in a run that was cancelled, was waiting
    when the cancel came: the replay waits there until every other unit has been served, then cancels the run
    through `canceller`, so `replay --rerun` of a cancelled run reproduces "cancelled".
    """

    def __init__(self, rec: RunRecord, canceller: Any = None) -> None:
        super().__init__()
        self._queues: dict[str, deque[dict[str, Any]]] = {u: deque(r.attempts) for u, r in rec.units.items()}
        self._name = rec.start.model or "replay"
        self._canceller = canceller
        cancelled = rec.end is None or rec.end.state == "cancelled"
        self._cut = {u for u, r in rec.units.items() if cancelled and r.attempts
                     and r.attempts[-1]["event"] == "request"
                     and (r.end is None or r.end.status is OutcomeStatus.CANCELLED)}
        """Units whose recording ends where the cancel found them."""

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def system(self) -> str:
        return "replay"

    async def request(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                      model_request_parameters: ModelRequestParameters) -> ModelResponse:
        unit = unit_of(_first_user_text(messages))
        queue = self._queues.get(unit)
        if not queue:
            raise ModelHTTPError(status_code=400, model_name=self._name,
                                 body=f"replay diverged: no recorded response left for unit {unit!r}")
        event = queue.popleft()
        if event["event"] == "request":
            recorded: list[CanonicalMessage] = event["messages"]
            sent = request_messages(messages[-1:])  # what the ledger records of a request: its newest message
            if recorded != sent:
                self._queues[unit] = deque()  # everything after a divergence would answer another conversation
                raise ModelHTTPError(status_code=400, model_name=self._name,
                                     body=f"replay diverged in unit {unit!r}: {_first_difference(recorded, sent)}")
            if not queue and unit in self._cut and self._canceller is not None:
                await self._cancel_here(unit)
            if not queue:
                raise ModelHTTPError(status_code=400, model_name=self._name,
                                     body=f"replay diverged: the recording of unit {unit!r} ends with a request")
            event = queue.popleft()
        if event["event"] == "request-error":
            if event.get("failure") == "timeout":
                raise TimeoutError(event.get("error", "timeout"))
            status = 429 if event.get("failure") == "rate-limited" else 503
            raise ModelHTTPError(status_code=status, model_name=self._name, body=event.get("error"))
        return response_from(event["message"], usage=Usage(**event["usage"]),
                             finish_reason=event.get("finish_reason"), model_name=self._name)

    async def _cancel_here(self, unit: str) -> None:
        """Wait (a few seconds at most) until every other unit's recording is served, then cancel the run."""
        for _ in range(_CANCEL_WAIT_STEPS):
            if all(not q or u in self._cut for u, q in self._queues.items() if u != unit):
                break
            await asyncio.sleep(0.01)
        self._canceller.cancel_now()
        await asyncio.sleep(_CANCEL_WAIT_STEPS)  # the cancel ends this request


_CANCEL_WAIT_STEPS = 500
"""Polls of 10 ms a replayed cancel waits for the other units (5 s), and seconds it then waits to be cancelled."""


def _first_difference(recorded: list[CanonicalMessage], sent: list[CanonicalMessage]) -> str:
    """The first message that differs between a recorded request and the one sent now, named by role and key."""
    for i, (a, b) in enumerate(zip(recorded, sent, strict=False)):
        if a != b:
            key = next((k for k in sorted({*a, *b}) if a.get(k) != b.get(k)), "message")
            return (f"message {i + 1} ({a.get('role')}) differs in {key}: recorded {str(a.get(key))[:80]!r}, "
                    f"now {str(b.get(key))[:80]!r}")
    return f"the request has {len(sent)} new messages; the recording has {len(recorded)}"


def _first_user_text(messages: list[ModelMessage]) -> str:
    for msg in messages:
        for part in getattr(msg, "parts", ()):
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                return part.content
    return ""


def load_prior(rec: RunRecord) -> Prior:
    """What `rec` finished: recon's landmarks if recon ended, every check whose unit ran to its end, and what
    every unit has spent so far (a unit run again carries its earlier attempts' cost)."""
    recon_status = rec.recon_end.status if rec.recon_end is not None else None
    recon_done = recon_status in ("ran", "resumed")  # a static recon is simply run again
    recon = rec.units.get("recon", _UnitRecord())
    done: dict[CheckId, tuple[CheckOutcome, list[tuple[Candidate, str | None]]]] = {}
    dismissed: dict[str, tuple[str, str]] = {}
    for check in rec.checks:
        ur = rec.units.get(check.value)
        if ur is not None and ur.end is not None and ur.end.status is OutcomeStatus.RAN:
            done[check] = (_outcome(check, ur, interrupted=False), list(ur.findings))
            dismissed.update({lead: (reason, f"llm:{check.value}") for lead, reason in ur.dismissed.items()})
    return Prior(landmarks=list(recon.landmarks) if recon_done else None,
                 recon_usage=_recon_usage(rec), done=done, dismissed=dismissed,
                 spent={unit: ur.spent for unit, ur in rec.units.items()})


async def _no_wait(_: float) -> None:
    return None


def replay_run(run_dir: Path, *, root: Path | None = None) -> tuple[Report, list[Path]]:
    """Re-run the engine of a recorded run against `ReplayModel`; reports go to `<run_dir>/replay`."""
    from harness_audit.llm.engine import Canceller
    from harness_audit.llm.run import ModelOptions
    from harness_audit.pipeline import run_audit

    rec = load_run(run_dir)
    config = rec.config.model_copy(update={"output_dir": str(rec.run_dir / "replay")})
    canceller = Canceller()
    # each unit re-runs its last attempt; what its earlier attempts spent (before a cancel and a resume) is added
    earlier = Prior(landmarks=None, recon_usage=Usage(), done={},
                    spent={unit: ur.earlier for unit, ur in rec.units.items()})
    result = run_audit(audited_root(rec, root), rec.checks, config,
                       model_options=ModelOptions(model=ReplayModel(rec, canceller), sleep=_no_wait,
                                                  canceller=canceller, prior=earlier,
                                                  extra_notes=[str(Msg("note.replayed", run_id=rec.start.run_id))]))
    return result.report, list(result.paths)


def resume_run(run_dir: Path, *, root: Path | None = None, base_url: str | None = None) -> tuple[Report, list[Path]]:
    """Continue a run: finished checks are kept (findings re-gated, costs carried), the rest run again."""
    from harness_audit.llm.run import ModelOptions
    from harness_audit.pipeline import run_audit

    rec = load_run(run_dir)
    if rec.end is not None and rec.end.state == "complete":
        raise UsageError("err.ledger.nothing_to_resume", run_id=rec.start.run_id)
    tree = audited_root(rec, root)
    prior = load_prior(rec)
    # the request that stopped the interrupted run must not stop this one the moment it starts
    (rec.run_dir / CANCEL_FILE).unlink(missing_ok=True)
    config = rec.config if base_url is None else rec.config.model_copy(update={"base_url": base_url})
    result = run_audit(tree, rec.checks, config,
                       model_options=ModelOptions(prior=prior, run_dir=rec.run_dir,
                                                  extra_notes=[str(Msg("note.resumed", run_id=rec.start.run_id))]))
    return result.report, list(result.paths)
