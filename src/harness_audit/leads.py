"""Static leads handed to a model (hybrid engine, host audits): every lead ends confirmed, dismissed or unaddressed.

A lead is a static candidate that passed the gate, given to the check's model to confirm, refute or extend.
Nothing a model does (or fails to do) can make one vanish:

- **confirmed**: the model reported a finding of the same check at the lead's place (same file, within the
  gate's window of its line) or naming its id; the model's finding stands in the report.
- **dismissed**: the model called `dismiss_lead` with a reason; the lead and the reason are listed in every
  report format, so an injected instruction that talks a model out of a finding is visible, never silent.
- **unaddressed**: neither; the lead keeps its static verdict and stays a finding (exit code included).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from harness_audit.findings import Candidate, CheckId, Finding, Refusal
from harness_audit.gate import WINDOW, GateContext, validate
from harness_audit.workspace import Workspace

__all__ = ["Lead", "LeadOutcome", "LeadStatus", "gate_leads", "lead_id", "link_leads", "settle_leads"]

MIN_REASON_WORDS = 3
"""A dismissal must say in a sentence why the lead is wrong; a word or two is not accepted."""


class LeadStatus(StrEnum):
    """How a static lead ended."""

    CONFIRMED = "confirmed"
    DISMISSED = "dismissed"
    UNADDRESSED = "unaddressed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Lead:
    """A gated static finding handed to a check's model, with the id the model names it by."""

    lead_id: str
    """`C1-2`: the check and the lead's number within it."""
    finding: Finding
    """The static finding as the gate accepted it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LeadOutcome:
    """How one lead ended, for the report."""

    lead_id: str
    """`C1-2`."""
    check: CheckId
    """The check the lead was handed to."""
    status: LeadStatus
    """Confirmed, dismissed or unaddressed."""
    finding: Finding
    """The static finding (its verdict is the static verdict)."""
    reason: str | None = None
    """Why the model dismissed it (dismissed only)."""
    by: str | None = None
    """Who settled it: the model's unit (`llm:C1`, `host:C1`); None when unaddressed."""
    confirmed_by: Finding | None = None
    """The model's finding that confirmed it (the one naming it, else the first at its place); confirmed only."""


def lead_id(check: CheckId, number: int) -> str:
    """The id of the `number`-th (1-based) lead of `check`."""
    return f"{check.value}-{number}"


def gate_leads(ws: Workspace, checks: Sequence[CheckId], numbered: Mapping[CheckId, Sequence[tuple[str, Candidate]]],
               refusals: list[Refusal]) -> dict[CheckId, list[Lead]]:
    """The static candidates of each check, each with its lead id, through the gate; refusals are appended to
    `refusals` (a lead the gate refuses is never handed to a model)."""
    ctx = GateContext(workspace=ws, checks_in_run=checks)
    out: dict[CheckId, list[Lead]] = {}
    for check, items in numbered.items():
        for number, cand in items:
            gated = validate(cand, ctx)
            if isinstance(gated, Finding):
                out.setdefault(check, []).append(Lead(lead_id=number, finding=gated))
            else:
                refusals.append(gated)
    return out


def named_leads(named: str | None) -> tuple[str, ...]:
    """The lead ids a finding names: one (`C1-2`), or several it is the one root cause of (`C1-2,C1-5`)."""
    return tuple(x for x in re.split(r"[\s,]+", named) if x) if named else ()


def _confirms(lead: Lead, f: Finding, named: str | None) -> bool:
    if named is not None:
        return lead.lead_id in named_leads(named)
    s = lead.finding
    return (f.check == s.check and f.file is not None and f.file == s.file and f.line is not None
            and s.line is not None and abs(f.line - s.line) <= WINDOW)


def settle_leads(leads: Sequence[Lead], reported: Iterable[tuple[Finding, str | None]],
                 dismissed: Mapping[str, tuple[str, str]], *, settled_by: Mapping[CheckId, str] | None = None,
                 ) -> tuple[list[LeadOutcome], list[Finding]]:
    """How each lead ended, and the findings unaddressed leads add to the report.

    `reported` holds the model's gated findings, each with the lead id(s) it named (or None); `dismissed` maps a
    lead id to (reason, unit). A finding that names the lead confirms it; otherwise a dismissal stands, even
    beside a finding at the same place (the model said that place is not this defect).
    `settled_by` names the unit of each check for confirmations (`llm:C1`).
    """
    found = list(reported)
    outcomes: list[LeadOutcome] = []
    kept: list[Finding] = []
    for lead in leads:
        check = lead.finding.check
        by = (settled_by or {}).get(check)
        named = any(lead.lead_id in named_leads(name) for _, name in found)
        if lead.lead_id in dismissed and not named:
            reason, unit = dismissed[lead.lead_id]
            outcomes.append(LeadOutcome(lead_id=lead.lead_id, check=check, status=LeadStatus.DISMISSED,
                                        finding=lead.finding, reason=reason, by=unit))
        elif named or any(_confirms(lead, f, name) for f, name in found):
            by_name = [f for f, name in found if lead.lead_id in named_leads(name)]
            confirming = by_name[0] if by_name else next(f for f, name in found if _confirms(lead, f, name))
            outcomes.append(LeadOutcome(lead_id=lead.lead_id, check=check, status=LeadStatus.CONFIRMED,
                                        finding=lead.finding, by=by, confirmed_by=confirming))
        else:
            outcomes.append(LeadOutcome(lead_id=lead.lead_id, check=check, status=LeadStatus.UNADDRESSED,
                                        finding=lead.finding))
            kept.append(lead.finding)
    return outcomes, kept


def link_leads(findings: Iterable[Finding], leads: Iterable[LeadOutcome]) -> list[Finding]:
    """`findings` with `lead` set on each one that stands for a lead: the finding that confirmed it, or the static
    finding an unaddressed lead kept; the report then says which lead every such finding settled."""
    of: dict[Finding, str] = {}
    for lead in leads:
        if lead.status is LeadStatus.CONFIRMED and lead.confirmed_by is not None:
            of.setdefault(lead.confirmed_by, lead.lead_id)
        elif lead.status is LeadStatus.UNADDRESSED:
            of.setdefault(lead.finding, lead.lead_id)
    return [replace(f, lead=of[f]) if f.lead is None and f in of else f for f in findings]
