"""The ledger's one schema: every event a model run writes, validated when written and when read back.

A ledger is input like any other once it is on disk: `replay`, `resume` and re-rendering read it,
and a hand-edited or damaged one must give one clear line, never a `KeyError` or a page of pydantic
errors. `parse_event` validates one decoded line against the model of its `event` kind; `Ledger.write`
validates what the engine writes with the same models, so writer and reader cannot drift apart.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError
from pydantic import field_validator as _field_validator

from harness_audit.errors import FailureCode
from harness_audit.findings import (
    Candidate,
    CheckId,
    LandmarkCandidate,
    OutcomeStatus,
    RefusalReason,
    Usage,
)
from harness_audit.report import Price

__all__ = ["EVENT_KINDS", "BadEvent", "LedgerEvent", "parse_event"]

Count = Annotated[StrictInt, Field(ge=0)]
"""A token or item count: an integer, never a float, a bool or a negative number."""
Positive = Annotated[StrictInt, Field(ge=1)]
Unit = Annotated[StrictStr, Field(pattern=r"^(recon|analysis|C(1[0-5]|[1-9]))$")]
"""`recon`, `analysis` or a check id."""
Text = StrictStr
Line = StrictInt
"""A line as submitted (the gate judges its range): any integer, never a float or a bool."""


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


_LATEST = 1e11
"""Seconds since 1970 of the latest time a ledger may hold (the year 5138): beyond it a date cannot be shown."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UsageData(_Strict):
    """A unit's or a request's tokens (`harness_audit.findings.Usage`)."""

    input_tokens: Count = 0
    output_tokens: Count = 0
    cache_read_tokens: Count = 0
    cache_write_tokens: Count = 0
    reasoning_tokens: Count = 0
    requests: Count = 0
    known: StrictBool = True

    def value(self) -> Usage:
        """As our value type."""
        return Usage(**self.model_dump())


class CandidateData(_Strict):
    """A finding as it was submitted (`harness_audit.findings.Candidate`); the gate judges it again."""

    check: Text
    verdict: Text
    file: Text | None
    line: Line | None
    evidence: Text
    claim: Text
    consequence: Text
    direction: Text = ""
    confirm_hint: Text = ""
    source: Text
    language: Literal["python", "typescript", "javascript", "trace"] | None = None
    also_at: tuple[Text, ...] = ()

    def value(self) -> Candidate:
        """As our value type."""
        return Candidate(**self.model_dump())


class LandmarkData(_Strict):
    """A landmark as it was submitted (`harness_audit.findings.LandmarkCandidate`)."""

    kind: Text
    file: Text
    line: Line
    symbol: Text | None = None
    confidence: Literal["high", "medium", "low"] = "medium"
    evidence: Text = ""
    source: Text = "static"
    language: Literal["python", "typescript", "javascript", "trace"] | None = None

    def value(self) -> LandmarkCandidate:
        """As our value type."""
        return LandmarkCandidate(**self.model_dump())


class _Event(_Strict):
    seq: Positive
    t: StrictFloat | StrictInt

    @_field_validator("t")
    @classmethod
    def _a_time(cls, value: float) -> float:
        value = _finite(float(value))
        if not 0 <= value <= _LATEST:
            raise ValueError("is not a time (seconds since 1970)")
        return value


class _UnitEvent(_Event):
    unit: Unit


# ---------------------------------------------------------------- messages (harness_audit.llm.canonical)

class SystemMessage(_Strict):
    role: Literal["system"]
    content: Text


class UserMessage(_Strict):
    role: Literal["user"]
    content: Text


class ToolMessage(_Strict):
    role: Literal["tool"]
    call_id: Text
    name: Text
    content: Text


class OtherMessage(_Strict):
    role: Literal["other"]
    kind: Text


class TextPart(_Strict):
    type: Literal["text", "thinking"]
    text: Text


class CallPart(_Strict):
    type: Literal["tool-call"]
    id: Text
    name: Text
    arguments: dict[str, Any] | None = None
    arguments_raw: Text | None = None


class OtherPart(_Strict):
    type: Literal["other"]
    kind: Text


class AssistantMessage(_Strict):
    role: Literal["assistant"]
    parts: list[Annotated[TextPart | CallPart | OtherPart, Field(discriminator="type")]]


Message = Annotated[SystemMessage | UserMessage | ToolMessage | OtherMessage | AssistantMessage,
                    Field(discriminator="role")]


# ---------------------------------------------------------------- events

class PriceData(_Strict):
    """Dollars per million tokens (`harness_audit.report.Price`)."""

    input: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    cached_input: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    output: Annotated[float, Field(ge=0, allow_inf_nan=False)]
    cache_write: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None
    source: Text = "config"

    def value(self) -> Price:
        """As our value type."""
        return Price(**self.model_dump())


class RunStart(_Event):
    event: Literal["run-start"]
    version: StrictInt
    run_id: Annotated[StrictStr, Field(min_length=1, max_length=200)]
    tool_version: Text
    root: Text
    """Where the audit ran, as a fact about the run: a reader re-gates against the tree it is given."""
    started_at: Text
    engine: Literal["llm", "hybrid", "host"]

    @_field_validator("started_at")
    @classmethod
    def _iso_time(cls, value: str) -> str:
        try:
            datetime.fromisoformat(value)
        except ValueError:
            raise ValueError("is not an ISO 8601 time") from None
        return value
    model: Text | None
    base_url: Text | None
    checks: Annotated[list[CheckId], Field(min_length=1, max_length=15)]
    config: dict[str, Any]
    prefix: Text | None
    """Digest of the shared prompt prefix (None for a host run, whose prompts are the host's)."""
    resumed: list[CheckId] = Field(default_factory=list[CheckId])
    price: PriceData | None = None
    """The price the run used (configured or from the table), so a re-rendered report shows the same money."""


class StaticLandmarks(_Event):
    event: Literal["static-landmarks"]
    candidates: list[LandmarkData]


class LeadData(_Strict):
    """One static lead handed to a check, with the id a model names it by (`C1-2`)."""

    id: Annotated[StrictStr, Field(pattern=r"^C(1[0-5]|[1-9])-[1-9][0-9]*$")]
    candidate: CandidateData


class StaticLeads(_Event):
    event: Literal["static-leads"]
    leads: dict[CheckId, list[LeadData]]


class LeadDismissed(_UnitEvent):
    event: Literal["lead-dismissed"]
    lead: Text
    reason: Text


class LandmarkDismissed(_UnitEvent):
    """A host run's recon judged an accepted landmark wrong: it is not used and the report lists it with why."""

    event: Literal["landmark-dismissed"]
    kind: Text
    file: Text
    line: Line
    reason: Text


class UnitStart(_UnitEvent):
    event: Literal["unit-start"]
    task: Text


class Request(_UnitEvent):
    event: Literal["request"]
    turn: Positive
    attempt: Positive
    messages: list[Message]
    tools: list[Text] | None = None


class Response(_UnitEvent):
    event: Literal["response"]
    turn: Positive
    finish_reason: Literal["stop", "length", "tool-call", "content-filter", "error", "unknown"] | None
    usage: UsageData
    message: AssistantMessage


class RequestError(_UnitEvent):
    event: Literal["request-error"]
    turn: Positive
    attempt: Positive
    failure: FailureCode
    error: Text


class ToolCall(_UnitEvent):
    event: Literal["tool-call"]
    id: Text
    tool: Text
    args: dict[str, Any] | Text | None
    valid: StrictBool | None
    executed: StrictBool = True
    result: Text


class RenamedCallIds(_UnitEvent):
    event: Literal["renamed-call-ids"]
    renamed: list[tuple[Text, Text]]


class Nudge(_UnitEvent):
    event: Literal["nudge"]
    text: Text


class ContextCut(_UnitEvent):
    event: Literal["context-cut"]
    turn: Positive
    call_ids: list[Text]
    """The calls whose output was replaced by a stub before this turn's request."""


class FindingAccepted(_UnitEvent):
    event: Literal["finding"]
    candidate: CandidateData
    fingerprint: Text
    line: Line | None
    lead: Text | None = None
    """The static lead the finding confirms, when the model named one."""


class Refused(_UnitEvent):
    event: Literal["refusal"]
    subject: Literal["finding", "landmark"]
    reason: RefusalReason
    message: Text
    candidate: CandidateData | LandmarkData


class LandmarkAccepted(_UnitEvent):
    event: Literal["landmark"]
    candidate: LandmarkData


class ReconEnd(_Event):
    event: Literal["recon-end"]
    status: Literal["ran", "failed", "cancelled", "static", "resumed", "skipped", "incomplete", "not-covered"]
    usage: UsageData
    landmarks: Count


class UnitEnd(_UnitEvent):
    event: Literal["unit-end"]
    status: OutcomeStatus
    failure: FailureCode | None = None
    error: Text | None = None
    usage: UsageData = Field(default_factory=UsageData)
    turns: Count = 0
    tool_calls: Count = 0
    duration_s: StrictFloat | StrictInt = 0.0
    missing: list[Text] = Field(default_factory=list[str])

    @_field_validator("duration_s")
    @classmethod
    def _finite_duration(cls, value: float) -> float:
        return _finite(float(value))


class FileNoteData(_Strict):
    path: Text
    reason: Text


class RunMetaData(_Strict):
    commit: Text | None = None
    dirty: StrictBool | None = None
    files_scanned: Count = 0
    excluded_dirs: Count = 0
    notes: list[Text] = Field(default_factory=list[str])
    skipped: list[FileNoteData] = Field(default_factory=list[FileNoteData])
    unparsed: list[FileNoteData] = Field(default_factory=list[FileNoteData])


class RunEnd(_Event):
    event: Literal["run-end"]
    state: Literal["complete", "cancelled", "incomplete"]
    outcomes: dict[CheckId, Text]
    findings: Count
    refusals: Count
    reports: list[Text] = Field(default_factory=list[str])
    meta: RunMetaData = Field(default_factory=RunMetaData)


LedgerEvent = Annotated[
    RunStart | StaticLandmarks | StaticLeads | LeadDismissed | UnitStart | Request | Response | RequestError
    | ToolCall | RenamedCallIds | Nudge | ContextCut | FindingAccepted | Refused | LandmarkAccepted
    | LandmarkDismissed | ReconEnd | UnitEnd | RunEnd,
    Field(discriminator="event"),
]
"""Any event of a ledger."""

_EVENTS: dict[str, type[_Event]] = {
    "run-start": RunStart, "static-landmarks": StaticLandmarks, "static-leads": StaticLeads,
    "lead-dismissed": LeadDismissed, "unit-start": UnitStart, "request": Request, "response": Response,
    "request-error": RequestError, "tool-call": ToolCall, "renamed-call-ids": RenamedCallIds, "nudge": Nudge,
    "context-cut": ContextCut, "finding": FindingAccepted, "refusal": Refused, "landmark": LandmarkAccepted,
    "landmark-dismissed": LandmarkDismissed, "recon-end": ReconEnd, "unit-end": UnitEnd, "run-end": RunEnd,
}

EVENT_KINDS: tuple[str, ...] = tuple(_EVENTS)
"""Every event kind, in the order a run writes them."""


class BadEvent(ValueError):
    """One ledger line that is not a valid event; the message is one line naming the field."""


def parse_event(data: object) -> _Event:
    """Validate one decoded ledger line; raises `BadEvent` with one line saying what is wrong."""
    if not isinstance(data, dict):
        raise BadEvent(f"not a JSON object but {type(data).__name__}")
    kind = data.get("event")  # pyright: ignore[reportUnknownMemberType]
    model = _EVENTS.get(kind) if isinstance(kind, str) else None
    if model is None:
        shown = repr(kind)[:60]
        raise BadEvent(f"unknown event {shown}; expected one of {', '.join(EVENT_KINDS)}")
    try:
        return model.model_validate(data)
    except ValidationError as err:
        errors = err.errors()
        missing = [".".join(str(p) for p in e["loc"]) for e in errors if e["type"] == "missing"]
        if missing:
            raise BadEvent(f"`{kind}` event: missing {', '.join(f'`{m}`' for m in missing[:6])}") from None
        first = errors[0]
        where = ".".join(str(p) for p in first["loc"]) or "event"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        msg = " ".join(str(first["msg"]).split())[:200]
        raise BadEvent(f"`{kind}` event: {where}: {msg}{more}") from None
