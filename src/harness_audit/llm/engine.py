"""The model engine: a recon subagent (or static recon), then one subagent per check, all behind the gate.

`run_model_phase` is called by the pipeline with the workspace and the checks; it returns gated
landmarks, findings, refusals and one outcome per check. Every report a model makes is gated the
moment it is made, and the gate's answer is the tool result the model sees.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.messages import TextPart
from pydantic_ai.models import Model

from harness_audit.catalogue import CHECKS
from harness_audit.errors import FailureCode
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
from harness_audit.leads import MIN_REASON_WORDS, Lead, LeadOutcome, settle_leads
from harness_audit.llm.ledger import Ledger
from harness_audit.llm.loop import Budget, Compaction, Subagent, UnitResult, tool_definitions
from harness_audit.llm.prompts import (
    ANALYSIS_HEADING,
    check_task,
    landmark_line,
    lead_code,
    recon_task,
    system_prompt,
    tool_schemas,
)
from harness_audit.llm.tools import NavigationTools, ToolRefusal, ToolRefusalReason, refusal_text
from harness_audit.progress import NO_PROGRESS, Progress, ProgressEvent, ProgressKind, outcome_event
from harness_audit.report import Price
from harness_audit.workspace import Workspace

REPORT_TOOLS: dict[str, frozenset[str]] = {
    "check": frozenset({"report_finding", "dismiss_lead"}),
    "recon": frozenset({"report_landmark"}),
}
"""The tools of a unit's reporting turn (the cross-check analysis has none: it reports nothing)."""

CANCEL_FILE = "CANCEL"
"""A file of this name in the run directory asks a running audit to stop (`harness-audit cancel`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class EngineSettings:
    """What the model phase needs beyond the workspace and the checks."""

    engine: str
    """`llm` or `hybrid`."""
    concurrency: int = 3
    budget: Budget = field(default_factory=Budget)
    run_deadline_s: float | None = None
    """Overall wall clock for the model phase."""
    stream: bool = False
    cross_check: bool = False
    """Ask for the optional analysis of interactions between findings (inference, never gated)."""
    model_settings: dict[str, Any] = field(default_factory=dict[str, Any])
    """Provider settings for every request (prompt caching); see `providers.cache_settings`."""
    compaction: Compaction = field(default_factory=Compaction)


@dataclass(slots=True)
class ModelPhase:
    """What the model phase produced; everything in it has passed the gate."""

    landmarks: list[Landmark] = field(default_factory=list[Landmark])
    findings: list[Finding] = field(default_factory=list[Finding])
    refusals: list[Refusal] = field(default_factory=list[Refusal])
    outcomes: dict[CheckId, CheckOutcome] = field(default_factory=dict[CheckId, CheckOutcome])
    recon_usage: Usage = field(default_factory=lambda: Usage(known=True))
    recon_status: str = "skipped"
    recon_failure: CheckOutcome | None = None
    """Set when the recon subagent failed: checks left without landmarks fail with its code, not "not covered"."""
    recon_error: str | None = None
    """Why recon failed, when it failed without a provider error (it reported nothing where there is something)."""
    cancelled: bool = False
    navigation_degraded: bool = False
    analysis: str | None = None
    analysis_usage: Usage | None = None
    leads: list[LeadOutcome] = field(default_factory=list[LeadOutcome])
    """How every static lead handed to a check ended (hybrid); unaddressed ones are also in `findings`."""


@dataclass(slots=True)
class Prior:
    """What an earlier run of the same audit finished (for `resume`)."""

    landmarks: list[LandmarkCandidate] | None
    """Landmark candidates of a finished recon, or None when recon must run again."""
    recon_usage: Usage
    done: dict[CheckId, tuple[CheckOutcome, list[tuple[Candidate, str | None]]]]
    """Checks that finished, with their outcome and the candidates they reported (each with the lead it named)."""
    dismissed: dict[str, tuple[str, str]] = field(default_factory=dict[str, tuple[str, str]])
    """Leads the finished checks dismissed: lead id to (reason, unit)."""
    spent: dict[str, Usage] = field(default_factory=dict[str, Usage])
    """What each unit spent before (`recon`, `C3`): added to its usage when it runs again, so a report carries
    the cost of every attempt."""


class Canceller:
    """One switch for Ctrl-C, `harness-audit cancel` (a file in the run directory) and the API."""

    def __init__(self, run_dir: Path | None = None, event: threading.Event | None = None) -> None:
        self.event = event or threading.Event()
        self.run_dir = run_dir
        self._tasks: list[asyncio.Task[Any]] = []

    def requested(self) -> bool:
        if not self.event.is_set() and self.run_dir is not None and (self.run_dir / CANCEL_FILE).exists():
            self.event.set()
        return self.event.is_set()

    def track(self, task: asyncio.Task[Any]) -> None:
        self._tasks.append(task)

    def cancel_now(self) -> None:
        self.event.set()
        for t in self._tasks:
            t.cancel()

    async def watch(self, poll_s: float = 0.1) -> None:
        while not self.requested():
            await asyncio.sleep(poll_s)
        self.cancel_now()


_LANDMARKS_PAGE = 50


def list_landmarks(landmarks: Sequence[Landmark], kind: object = None, page: object = 1) -> str:
    """The run's landmarks as `list_landmarks` shows them: by kind, file and line, a page at a time."""
    if kind is not None and kind not in LandmarkKind.__members__.values():
        raise ToolRefusal(ToolRefusalReason.BAD_ARGUMENT, f"`kind` {kind!r} is not a landmark kind",
                          f"pass one of {', '.join(k.value for k in LandmarkKind)}, or leave it out")
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        raise ToolRefusal(ToolRefusalReason.BAD_ARGUMENT, f"`page` must be a positive integer, got {page!r}",
                          "pass page=1 for the first page")
    chosen = sorted({lm for lm in landmarks if kind is None or lm.kind == kind},
                    key=lambda lm: (lm.kind.value, lm.file, lm.line))
    if not chosen:
        return f"no landmarks{f' of kind {kind}' if kind else ''} in this run"
    shown = chosen[(page - 1) * _LANDMARKS_PAGE: page * _LANDMARKS_PAGE]
    if not shown:
        return f"page {page} is past the end: {len(chosen)} landmarks, {_LANDMARKS_PAGE} a page"
    out = [f"{len(chosen)} landmarks{f' of kind {kind}' if kind else ''}; page {page}:",
           *(landmark_line(lm) for lm in shown)]
    if page * _LANDMARKS_PAGE < len(chosen):
        out.append(f"… call list_landmarks(page={page + 1}) for more")
    return "\n".join(out)


def _handler(tools: NavigationTools, report: Callable[[dict[str, Any]], str],
             landmark: Callable[[dict[str, Any]], str],
             dismiss: Callable[[dict[str, Any]], str],
             landmarks: Callable[[], Sequence[Landmark]]) -> Callable[[str, dict[str, Any]], str]:
    nav: dict[str, Callable[..., str]] = {
        "read_file": tools.read_file, "grep": tools.grep, "glob": tools.glob,
        "find_symbol": tools.find_symbol, "find_references": tools.find_references,
        "list_landmarks": lambda **args: list_landmarks(landmarks(), **args),
    }

    def handle(name: str, args: dict[str, Any]) -> str:
        if name == "report_finding":
            return report(args)
        if name == "report_landmark":
            return landmark(args)
        if name == "dismiss_lead":
            return dismiss(args)
        try:
            return nav[name](**args)
        except ToolRefusal as refusal:
            return refusal_text(refusal)
        except TypeError as exc:  # missing or unknown argument names
            return f"Not executed: bad arguments for {name} ({exc}). See the tool's schema."
    return handle


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: `1e400` or an infinity
        return None


def _text(args: dict[str, Any], key: str) -> str:
    value = args.get(key)
    return "" if value is None else str(value)


class _Units:
    """The gate-backed report tools of every unit of one run, and what they accepted."""

    def __init__(self, ws: Workspace, checks: Sequence[CheckId], ledger: Ledger, phase: ModelPhase) -> None:
        self.ws, self.checks, self.ledger, self.phase = ws, checks, ledger, phase
        self.candidates: dict[str, list[Candidate]] = {}
        self.landmark_candidates: list[LandmarkCandidate] = []
        self.leads: dict[CheckId, list[Lead]] = {}
        """The static leads of each check (hybrid), gated."""
        self.reported: list[tuple[Finding, str | None]] = []
        """Every finding a check's model had accepted, with the lead id it named."""
        self.dismissed: dict[str, tuple[str, str]] = {}
        """Lead id to (reason, unit) for every lead a model dismissed."""

    def finding_tool(self, unit: str) -> Callable[[dict[str, Any]], str]:
        # recon and the cross-check analysis are assigned no check: they may report no finding
        assigned = CheckId(unit) if unit in CheckId.__members__ else None
        ctx = GateContext(workspace=self.ws, checks_in_run=self.checks, assigned=assigned, recon=assigned is None)

        def report(args: dict[str, Any]) -> str:
            cand = Candidate(
                check=_text(args, "check"), verdict=_text(args, "verdict"), file=args.get("file") or None,
                line=_int_or_none(args.get("line")), evidence=_text(args, "evidence"), claim=_text(args, "claim"),
                consequence=_text(args, "consequence"), direction=_text(args, "direction"),
                confirm_hint=_text(args, "confirm_hint"), source=f"llm:{unit}",
            )
            named = _text(args, "lead").strip() or None
            if named is not None and assigned is not None and named not in self.lead_ids(assigned):
                return (f"Not accepted: {named!r} is not one of your leads ({self.known_leads(assigned)}); "
                        "leave `lead` out when the finding is not one of them.")
            return self.accept_finding(cand, ctx, unit, lead=named)
        return report

    def lead_ids(self, check: CheckId) -> list[str]:
        """The ids of `check`'s leads."""
        return [lead.lead_id for lead in self.leads.get(check, [])]

    def known_leads(self, check: CheckId) -> str:
        """`check`'s lead ids for a message, or `none`."""
        return ", ".join(self.lead_ids(check)) or "none"

    def dismiss_tool(self, unit: str) -> Callable[[dict[str, Any]], str]:
        assigned = CheckId(unit) if unit in CheckId.__members__ else None

        def dismiss(args: dict[str, Any]) -> str:
            if assigned is None:
                return "Not accepted: only a check's subagent settles its leads."
            named, reason = _text(args, "lead").strip(), " ".join(_text(args, "reason").split())
            if named not in self.lead_ids(assigned):
                return f"Not accepted: {named!r} is not one of your leads ({self.known_leads(assigned)})."
            if len(reason.split()) < MIN_REASON_WORDS:
                return ("Not accepted: say in a sentence why the lead is wrong (what the code does instead); "
                        "the reason is shown in the report.")
            self.dismissed[named] = (reason, f"llm:{unit}")
            self.ledger.write("lead-dismissed", unit=unit, lead=named, reason=reason)
            return f"Dismissed {named}; the report lists it with your reason."
        return dismiss

    def accept_finding(self, cand: Candidate, ctx: GateContext, unit: str, *, lead: str | None = None) -> str:
        gated = validate(cand, ctx)
        if isinstance(gated, Refusal):
            self.phase.refusals.append(gated)
            self.ledger.write("refusal", unit=unit, subject="finding", reason=gated.reason.value,
                              message=gated.message, candidate=dataclasses.asdict(cand))
            return f"Refused ({gated.reason.value}): {gated.message}. Correct it and resubmit, or drop it."
        self.phase.findings.append(gated)
        self.candidates.setdefault(unit, []).append(cand)
        self.reported.append((gated, lead))
        self.ledger.write("finding", unit=unit, candidate=dataclasses.asdict(cand), fingerprint=gated.fingerprint,
                          line=gated.line, **({"lead": lead} if lead else {}))
        return f"Accepted: {gated.check.value} {gated.verdict.value} at {gated.file}:{gated.line}."

    def landmark_tool(self, unit: str) -> Callable[[dict[str, Any]], str]:
        ctx = GateContext(workspace=self.ws, checks_in_run=self.checks, recon=True)

        def landmark(args: dict[str, Any]) -> str:
            if unit != "recon":
                return "Not accepted: landmarks are reported by the recon subagent only; report findings instead."
            conf = _text(args, "confidence") or "medium"
            lang = args.get("language") if args.get("language") in ("python", "typescript", "javascript") else None
            cand = LandmarkCandidate(kind=_text(args, "kind"), file=_text(args, "file"),
                                     line=_int_or_none(args.get("line")) or 0, symbol=args.get("symbol") or None,
                                     confidence=conf if conf in ("high", "medium", "low") else "medium",  # type: ignore[arg-type]
                                     source="llm:recon", language=lang)
            return self.accept_landmark(cand, ctx)
        return landmark

    def accept_landmark(self, cand: LandmarkCandidate, ctx: GateContext, *, write: bool = True) -> str:
        gated = validate_landmark(cand, ctx)
        if isinstance(gated, Refusal):
            self.phase.refusals.append(gated)
            if write:
                self.ledger.write("refusal", unit="recon", subject="landmark", reason=gated.reason.value,
                                  message=gated.message, candidate=dataclasses.asdict(cand))
            return f"Refused ({gated.reason.value}): {gated.message}. Correct it and resubmit, or drop it."
        self.phase.landmarks.append(gated)
        if write:
            self.landmark_candidates.append(cand)
            self.ledger.write("landmark", unit="recon", candidate=dataclasses.asdict(cand))
        return f"Accepted: {gated.kind.value} at {gated.file}:{gated.line}."


async def _analyse(phase: ModelPhase, subagent: Callable[[str, str], Subagent]) -> None:
    """One extra unit that may only write text: how the gated findings interact."""
    lines = [f"- {f.check.value} {f.verdict.value} {f.file}:{f.line}: {f.claim}" for f in phase.findings]
    task = "\n".join([ANALYSIS_HEADING, "", "These findings passed the evidence gate. In at most 200 words, say which "
                      "of them interact (one makes another worse, or one fix covers several) and in which order to "
                      "fix them. Use no tool and report nothing; answer in plain text.", "", *lines]) + "\n"
    sub = subagent("analysis", task)
    sub.handler = lambda name, args: "Not available in the analysis step: answer in plain text."
    task_ = asyncio.create_task(sub.run())
    await asyncio.gather(task_, return_exceptions=True)
    phase.analysis_usage = sub.result.usage
    if sub.result.status is OutcomeStatus.RAN:
        texts = [p.content for m in sub.result.messages[-1:] for p in getattr(m, "parts", ()) if isinstance(p, TextPart)]
        phase.analysis = "".join(texts).strip() or None


def outcome_of(check: CheckId, result: UnitResult) -> CheckOutcome:
    """A check's outcome from how its subagent ended."""
    return CheckOutcome(check=check, status=result.status,
                        failure_code=result.failure.value if result.status is OutcomeStatus.FAILED and result.failure
                        else None,
                        usage=result.usage, duration_s=result.duration_s, error=result.error)


def needed_kinds(checks: Sequence[CheckId]) -> list[LandmarkKind]:
    """Landmark kinds the checks require or can use, in catalogue order."""
    wanted = {k for c in checks for k in (*CHECKS[c].requires, *CHECKS[c].also_useful)}
    return [k for k in LandmarkKind if k in wanted]


async def run_model_phase(
    *,
    ws: Workspace,
    checks: Sequence[CheckId],
    model: Model,
    settings: EngineSettings,
    ledger: Ledger,
    navigation: NavigationTools,
    static_landmarks: Sequence[Landmark] = (),
    static_leads: dict[CheckId, list[Lead]] | None = None,
    prior: Prior | None = None,
    canceller: Canceller | None = None,
    sleep: Callable[[float], Any] = asyncio.sleep,
    progress: Progress = NO_PROGRESS,
    price: Price | None = None,
) -> ModelPhase:
    """Recon, then every check's subagent (at most `concurrency` at once), gated as they report.

    `progress` hears recon's end and each check's start and end; `price` turns a unit's usage into its cost.
    """
    def check_ended(check: CheckId) -> None:
        outcome = phase.outcomes[check]
        findings = sum(1 for f in phase.findings if f.check == check)
        refused = sum(1 for r in phase.refusals if r.check == check)
        progress.emit(outcome_event(outcome, findings=findings, refusals=refused,
                                  cost=price.cost(outcome.usage) if price is not None else None))
    phase = ModelPhase(landmarks=list(static_landmarks))
    units = _Units(ws, checks, ledger, phase)
    units.leads = {c: list(v) for c, v in (static_leads or {}).items() if v}
    handed: list[CheckId] = []
    """Checks whose unit started (or finished in the resumed run): their leads are settled at the end."""
    canceller = canceller or Canceller()
    deadline = None if settings.run_deadline_s is None else time.monotonic() + settings.run_deadline_s
    tools = tool_definitions(tool_schemas())
    system = system_prompt()

    def retried(unit: str) -> Callable[[str], None]:
        check = CheckId(unit) if unit in CheckId.__members__ else None
        return lambda detail: progress.emit(ProgressEvent(kind=ProgressKind.REQUEST_RETRY, check=check,
                                                          detail=detail))

    def answered(unit: str) -> Callable[[Usage], None]:
        check = CheckId(unit) if unit in CheckId.__members__ else None
        return lambda spent: progress.emit(ProgressEvent(
            kind=ProgressKind.REQUEST_DONE, check=check, usage=spent,
            cost=price.cost(spent) if price is not None else None))

    def subagent(unit: str, task: str) -> Subagent:
        report = REPORT_TOOLS.get("check" if unit in CheckId.__members__ else unit, frozenset())
        return Subagent(unit=unit, model=model, system=system, task=task, tools=tools,
                        handler=_handler(navigation, units.finding_tool(unit), units.landmark_tool(unit),
                                         units.dismiss_tool(unit), lambda: phase.landmarks),
                        ledger=ledger, budget=settings.budget, deadline=deadline, stream=settings.stream, sleep=sleep,
                        report_tools=report, settings=settings.model_settings or None, on_retry=retried(unit),
                        on_response=answered(unit),
                        compaction=settings.compaction)

    watcher = asyncio.create_task(canceller.watch())
    try:
        # ---------------------------------------------------------------- recon
        if prior is not None and prior.landmarks is not None:
            ctx = GateContext(workspace=ws, checks_in_run=checks, recon=True)
            for cand in prior.landmarks:
                units.accept_landmark(cand, ctx, write=False)  # already in the ledger: written once
            phase.recon_usage, phase.recon_status = prior.recon_usage, "resumed"
        else:
            static_found = list(phase.landmarks)
            found = {lm.kind for lm in static_found}
            required = {k for c in checks for k in CHECKS[c].requires}
            if settings.engine == "llm" or not required <= found:
                kinds = [k for k in needed_kinds(checks) if settings.engine == "llm" or k not in found]
                if canceller.requested():
                    phase.cancelled = True
                else:
                    sub = subagent("recon", recon_task(kinds, static_found, budget=settings.budget.describe()))
                    task = asyncio.create_task(sub.run())
                    canceller.track(task)
                    await asyncio.gather(task, return_exceptions=True)  # a cancel is recorded in sub.result
                    result = sub.result
                    earlier = prior.spent.get("recon", Usage()) if prior is not None else Usage()
                    phase.recon_usage, phase.recon_status = earlier + result.usage, result.status.value
                    if result.status is OutcomeStatus.CANCELLED:
                        phase.cancelled = True
                    elif result.status is OutcomeStatus.FAILED:
                        phase.recon_failure = outcome_of(CheckId.C1, result)
                    elif settings.engine == "llm" and static_found and not units.landmark_candidates:
                        # a recon model that reports nothing where the code has landmarks did not do its unit: it
                        # fails, named, and the checks still run on what static recon found
                        phase.recon_status = "failed"
                        phase.recon_error = (f"{FailureCode.EMPTY_RESULT.value}: the recon model reported no "
                                             f"landmark although static recon found {len(static_found)}; the checks "
                                             "ran on those")
            else:
                phase.recon_status = "static"
            ledger.write("recon-end", status=phase.recon_status, usage=dataclasses.asdict(phase.recon_usage),
                         landmarks=len(phase.landmarks))
        progress.emit(ProgressEvent(kind=ProgressKind.RECON_DONE, landmarks=len(phase.landmarks),
                                    usage=phase.recon_usage if phase.recon_usage.requests else None))
        found = {lm.kind for lm in phase.landmarks}

        # ---------------------------------------------------------------- checks
        sem = asyncio.Semaphore(settings.concurrency)

        async def one(check: CheckId) -> None:
            async with sem:
                if canceller.requested():
                    phase.outcomes[check] = CheckOutcome(check=check, status=OutcomeStatus.CANCELLED,
                                                         error="cancelled before it started")
                    return
                leads = units.leads.get(check, [])
                sub = subagent(check.value, check_task(check, phase.landmarks, leads, budget=settings.budget.describe(),
                                                       code=lambda lead: lead_code(ws, lead)))
                handed.append(check)
                progress.emit(ProgressEvent(kind=ProgressKind.CHECK_STARTED, check=check))
                try:
                    await sub.run()
                finally:  # cancelled or not, the outcome is what the unit reached
                    outcome = outcome_of(check, sub.result)
                    if prior is not None and check.value in prior.spent:
                        outcome = dataclasses.replace(outcome, usage=prior.spent[check.value] + outcome.usage)
                    phase.outcomes[check] = outcome
                    check_ended(check)

        pending: list[asyncio.Task[None]] = []
        for check in checks:
            if prior is not None and check in prior.done:
                outcome, cands = prior.done[check]
                ctx = GateContext(workspace=ws, checks_in_run=checks, assigned=check)
                for cand, lead in cands:
                    units.accept_finding(cand, ctx, check.value, lead=lead)
                for lead_id in units.lead_ids(check):
                    if lead_id in prior.dismissed:
                        reason, unit = prior.dismissed[lead_id]
                        units.dismissed[lead_id] = (reason, unit)
                        ledger.write("lead-dismissed", unit=check.value, lead=lead_id, reason=reason)
                phase.outcomes[check] = outcome
                handed.append(check)
                continue
            missing = tuple(k for k in CHECKS[check].requires if k not in found)
            if missing and (phase.cancelled or canceller.requested()):
                # recon was stopped before it looked: the check was cancelled, its landmarks were never missing
                phase.outcomes[check] = CheckOutcome(check=check, status=OutcomeStatus.CANCELLED,
                                                     error="cancelled before recon finished")
                check_ended(check)
                continue
            if missing and phase.recon_failure is not None:
                phase.outcomes[check] = dataclasses.replace(
                    phase.recon_failure, check=check, usage=Usage(), duration_s=0.0,
                    error=f"recon failed ({phase.recon_failure.error}); missing {', '.join(k.value for k in missing)}")
                continue
            if missing:
                phase.outcomes[check] = CheckOutcome(check=check, status=OutcomeStatus.NOT_COVERED,
                                                     missing_landmarks=missing)
                ledger.write("unit-end", unit=check.value, status="not-covered",
                             missing=[k.value for k in missing])
                check_ended(check)
                continue
            if phase.cancelled:
                phase.outcomes[check] = CheckOutcome(check=check, status=OutcomeStatus.CANCELLED,
                                                     error="cancelled before it started")
                check_ended(check)
                continue
            task = asyncio.create_task(one(check))
            canceller.track(task)
            pending.append(task)
        for outcome in await asyncio.gather(*pending, return_exceptions=True):
            if isinstance(outcome, BaseException) and not isinstance(outcome, asyncio.CancelledError):
                raise outcome
        for check in checks:
            if check not in phase.outcomes:  # cancelled while waiting for the semaphore
                phase.outcomes[check] = CheckOutcome(check=check, status=OutcomeStatus.CANCELLED,
                                                     error="cancelled before it started")
        phase.cancelled = phase.cancelled or canceller.requested()
        if phase.cancelled:
            progress.emit(ProgressEvent(kind=ProgressKind.CANCELLED, detail="cancelled; finished checks are kept"))
        settled = [lead for check in checks if check in handed for lead in units.leads.get(check, [])]
        phase.leads, kept = settle_leads(settled, units.reported, units.dismissed,
                                         settled_by={c: f"llm:{c.value}" for c in checks})
        phase.findings.extend(kept)
        if settings.cross_check and len(phase.findings) >= 2 and not phase.cancelled:
            await _analyse(phase, subagent)
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
    phase.navigation_degraded = navigation.degraded
    return phase

