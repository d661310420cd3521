"""One progress event stream: what an audit tells its observers as it goes. Nothing here renders.

The pipeline (and the model engine inside it) calls `Progress.emit`; observers decide what to do with
each `ProgressEvent`: a terminal renders it, a background job appends it to its log for `job-output`,
the MCP server turns it into progress notifications. An observer that raises never stops the audit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from enum import StrEnum
from typing import Any

from harness_audit.findings import CheckId, CheckOutcome, LandmarkKind, OutcomeStatus, Usage


class ProgressKind(StrEnum):
    """What happened."""

    RUN_DIR = "run-dir"
    """The run's directory (ledger, reports of a model run) is known: `path`."""
    RECON_DONE = "recon-done"
    """Landmarks are located: `landmarks` counts them."""
    CHECK_STARTED = "check-started"
    """A check's unit began."""
    CHECK_DONE = "check-done"
    """A check's unit ran to its end: `findings`, `refusals`, `usage`, `cost`."""
    NOT_COVERED = "not-covered"
    """A check was skipped: `missing` lists the landmark kinds recon did not find."""
    CHECK_FAILED = "check-failed"
    """A check's unit failed: `detail` is `failed:<code>` and why."""
    CANCELLED = "cancelled"
    """The run was cancelled; what finished is kept, the rest is listed as cancelled."""
    REQUEST_DONE = "request-done"
    """A model request was answered: `usage` is what its unit (`check`, or recon when None) has spent so far,
    `cost` that in dollars when the model is priced."""
    REQUEST_RETRY = "request-retry"
    """A model request failed and is retried after a wait: `detail` says why and how long (a user sees why
    nothing moves while a provider hangs)."""
    REPORTS_WRITTEN = "reports-written"
    """The run is over: `paths` are the reports, `detail` the run's state."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ProgressEvent:
    """One step of an audit, as observers see it."""

    kind: ProgressKind
    """What happened."""
    check: CheckId | None = None
    """The check it is about, if any."""
    findings: int = 0
    """Findings the check's unit had accepted by the gate."""
    refusals: int = 0
    """Reports the gate refused for the check."""
    landmarks: int = 0
    """Landmarks located (`recon-done`)."""
    usage: Usage | None = None
    """Tokens the unit spent; None for the static engine."""
    cost: float | None = None
    """Dollars, when the configuration has a price for the model."""
    missing: tuple[LandmarkKind, ...] = ()
    """Required landmark kinds not found (`not-covered`)."""
    detail: str | None = None
    """One line: the failure (`check-failed`), the run's state (`reports-written`)."""
    paths: tuple[str, ...] = ()
    """The run directory (`run-dir`) or the report files (`reports-written`)."""

    def to_json(self) -> dict[str, Any]:
        """The event as plain JSON data (empty fields left out)."""
        data: dict[str, Any] = {"kind": self.kind.value}
        if self.check is not None:
            data["check"] = self.check.value
        for key in ("findings", "refusals", "landmarks"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        if self.usage is not None:
            data["usage"] = asdict(self.usage)
        if self.cost is not None:
            data["cost"] = self.cost
        if self.missing:
            data["missing"] = [k.value for k in self.missing]
        if self.detail:
            data["detail"] = self.detail
        if self.paths:
            data["paths"] = list(self.paths)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProgressEvent:
        """Read back what `to_json` wrote; raises `ValueError`/`KeyError`/`TypeError` on anything else."""
        usage = data.get("usage")
        return cls(
            kind=ProgressKind(data["kind"]), check=CheckId(data["check"]) if data.get("check") else None,
            findings=int(data.get("findings", 0)), refusals=int(data.get("refusals", 0)),
            landmarks=int(data.get("landmarks", 0)), usage=Usage(**usage) if isinstance(usage, dict) else None,
            cost=float(data["cost"]) if data.get("cost") is not None else None,
            missing=tuple(LandmarkKind(k) for k in data.get("missing", ())),
            detail=str(data["detail"]) if data.get("detail") else None,
            paths=tuple(str(p) for p in data.get("paths", ())),
        )


def outcome_event(outcome: CheckOutcome, *, findings: int, refusals: int, cost: float | None = None) -> ProgressEvent:
    """The progress event that says how a check's unit ended."""
    if outcome.status is OutcomeStatus.NOT_COVERED:
        return ProgressEvent(kind=ProgressKind.NOT_COVERED, check=outcome.check, missing=outcome.missing_landmarks)
    kind = {OutcomeStatus.FAILED: ProgressKind.CHECK_FAILED,
            OutcomeStatus.CANCELLED: ProgressKind.CANCELLED}.get(outcome.status, ProgressKind.CHECK_DONE)
    detail = outcome.status_text + (f": {outcome.error}" if outcome.error else "") \
        if kind is not ProgressKind.CHECK_DONE else None
    return ProgressEvent(kind=kind, check=outcome.check, findings=findings, refusals=refusals,
                         usage=outcome.usage if outcome.usage.requests or not outcome.usage.known else None,
                         cost=cost, detail=detail)


UNIT_PROGRESS = frozenset({ProgressKind.REQUEST_DONE, ProgressKind.REQUEST_RETRY})
"""Events about a unit still running: they settle nothing."""

Observer = Callable[[ProgressEvent], None]
"""Receives every event of a run, in order, on the thread that emits it."""


class Progress:
    """The run's fan-out to its observers. `Progress()` with no observer costs nothing."""

    def __init__(self, observers: Iterable[Observer] = ()) -> None:
        self._observers = tuple(observers)

    def emit(self, event: ProgressEvent) -> None:
        """Hand `event` to every observer; a failing observer is ignored, the audit goes on."""
        for observer in self._observers:
            # an observer is a display or a log: losing one line of progress must never lose the audit
            with contextlib.suppress(Exception):
                observer(event)

    def __bool__(self) -> bool:
        return bool(self._observers)


NO_PROGRESS = Progress()
"""The stream nobody watches."""
