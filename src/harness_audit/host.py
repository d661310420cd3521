"""Host-model audits: the agent host's own model is the auditor, behind our gate.

One protocol, three faces (the MCP tools of `harness-audit mcp`, the `harness-audit host …` shell verbs and
the SKILL.md that teaches them): `begin` → `report_landmark`… / `dismiss_landmark`… → `next_check` →
`report_finding`… / `dismiss_lead`… → `next_check` … → `finish`, with `status` at any time.

A run IS its ledger, `<output_dir>/runs/<run-id>/ledger.jsonl`, written in the model engine's event form
(`run-start`, `static-landmarks`, `landmark`, `finding`, `refusal`, `recon-end`, `unit-start`, `unit-end`,
`run-end`, plus `static-leads`, `lead-dismissed` and `landmark-dismissed`). Every step reads the ledger back
under a lock before it acts, so a host that restarts, or any new process, continues where the run stood; `harness-audit replay`
re-renders a host run like any other. Everything a host sends goes through the same gate as the model engine
(`gate.validate`, `gate.validate_landmark`) with the same refusals; `finish` is the shared pipeline tail
(`pipeline.finish`): pure-code aggregation and the md/json/sarif reports.

Bounds: each unit (recon, each check) may make at most `max_tool_calls_per_check` protocol calls; the host
names files only through the gate, which reads nothing outside the workspace; a run id is checked against the
run-id pattern before it becomes a path; nothing is written outside the output directory.
"""

from __future__ import annotations

import dataclasses
import fcntl
import json
import re
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from harness_audit import __version__
from harness_audit.api import resolve_root
from harness_audit.catalogue import CHECKS, criteria_text, parse_selection, shared_rules
from harness_audit.config import AuditConfig, build_config
from harness_audit.errors import FailureCode, UsageError
from harness_audit.findings import (
    Candidate,
    CheckId,
    CheckOutcome,
    Finding,
    Landmark,
    LandmarkCandidate,
    LandmarkKind,
    Language,
    OutcomeStatus,
    Refusal,
    Usage,
    Verdict,
)
from harness_audit.gate import GateContext, validate, validate_landmark
from harness_audit.leads import (
    MIN_REASON_WORDS,
    Lead,
    LeadOutcome,
    LeadStatus,
    gate_leads,
    named_leads,
    settle_leads,
)
from harness_audit.llm.ledger import LEDGER_NAME, LEDGER_VERSION, Ledger, read_ledger
from harness_audit.messages import Msg, localize, t
from harness_audit.pipeline import STATIC_LANGUAGES, PhaseResult, finish, new_run_id, output_dir_of, run_static
from harness_audit.report import (
    DismissedLandmark,
    LandmarkCounts,
    LandmarkKey,
    landmark_counts,
    landmark_key,
    split_dismissed,
)
from harness_audit.static import is_example_file, is_test_file
from harness_audit.workspace import LANGUAGE_BY_SUFFIX, Workspace

ENGINE = "host"
"""The engine name host runs carry in their ledger and report."""
RECON = "recon"
"""The unit name of recon, as in the model engine's ledger."""
_RUN_ID = re.compile(r"^\d{8}T\d{6}-[0-9a-f]{8}$")
_LOCK_NAME = "host.lock"
_SOURCE = "host"
_UNKNOWN = Usage(known=False)

Face = Literal["mcp", "shell", "plain"]
"""How the host calls the protocol: the hints in each answer name the MCP tools or the shell verbs."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Caller:
    """Who calls the protocol, so every answer names the next step the way that caller can make it."""

    face: Face = "plain"
    """MCP tools, shell verbs, or neutral step names."""
    output_dir_flag: str = ""
    """For shell verbs: ` --output-dir DIR` when the run is not under the caller's default output directory."""
    lang: str = "en"
    """The language of the answers' own text (`en` or `zh`): the shell verbs follow the command line's; the MCP
    server's reader is a model and gets English. The criteria a check shows follow it too."""

    def field(self, text: str) -> str:
        """`text` with the gate's field names (`confirm_hint`, `file`…) spelled as this caller passes them."""
        if self.face != "shell":
            return text
        return re.sub(r"`(confirm_hint|file|line|evidence|claim|consequence|direction|check|verdict)`",
                      lambda m: f"`--{m.group(1).replace('_', '-')}`", text)

    def step(self, name: str, run_id: str, args: str = "") -> str:
        """How to make protocol step `name` (`landmark`, `dismiss-landmark`, `next`, `report`, `dismiss`, `finish`,
        `status`)."""
        if self.face == "shell":
            return f"harness-audit host {name} {run_id}{self.output_dir_flag}" + (f" {args}" if args else "")
        tool = {"landmark": "report_landmark", "next": "next_check", "report": "report_finding",
                "dismiss": "dismiss_lead", "dismiss-landmark": "dismiss_landmark", "finish": "finish_host_audit" if self.face == "mcp" else "finish",
                "status": "host_audit_status" if self.face == "mcp" else "status"}[name]
        return f"`{tool}`" + (f" ({args})" if args else "")


@dataclass(frozen=True, slots=True, kw_only=True)
class StepResult:
    """What one protocol step answers: `text` for a model to read, `data` for a machine."""

    ok: bool
    """False when the call was refused (by the gate, the budget or the run's phase); nothing else changed then."""
    text: str
    """Plain text for the host's model: the outcome and the next thing to do."""
    data: dict[str, Any]
    """The same as JSON data (`run_id` always included)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StaticLead:
    """A static candidate offered to the host as a lead to confirm (by reporting it) or dismiss (with a reason).

    The ledger keeps it ungated, as the model engine does; it is gated when handed out and when the run finishes
    (`harness_audit.leads`), so a lead the gate refuses is never shown and never settled.
    """

    lead_id: str
    """`C1-1`, `C1-2`… in the order the static rules produced them."""
    candidate: Candidate
    """The static rule's candidate, ungated."""


@dataclass(slots=True)
class _Run:
    """A host run as its ledger holds it; built afresh by every step."""

    run_dir: Path
    start: dict[str, Any]
    static_landmarks: list[LandmarkCandidate] = field(default_factory=list[LandmarkCandidate])
    leads: dict[CheckId, list[StaticLead]] = field(default_factory=dict[CheckId, list[StaticLead]])
    units: dict[str, list[tuple[str, Candidate | LandmarkCandidate, str | None]]] = field(default_factory=dict)
    """Per unit, every gated submission in order: (`finding` | `refusal` | `landmark`, candidate, lead it named)."""
    calls: Counter[str] = field(default_factory=Counter[str])
    dismissed: dict[str, tuple[str, str]] = field(default_factory=dict[str, tuple[str, str]])
    """Lead id → (the host's reason, the unit that dismissed it)."""
    dismissed_landmarks: dict[LandmarkKey, tuple[str, str]] = field(default_factory=dict[LandmarkKey, tuple[str, str]])
    """(kind, file, line) of a landmark recon dismissed → (the host's reason, `host:recon`)."""
    recon_done: bool = False
    current: CheckId | None = None
    task: str = ""
    """The text `next` handed out for the current check (`status --task` prints it again)."""
    ended: dict[CheckId, dict[str, Any]] = field(default_factory=dict[CheckId, dict[str, Any]])
    started_t: dict[CheckId, float] = field(default_factory=dict[CheckId, float])
    """When each check was handed out (ledger time), for its duration."""
    recon_t: tuple[float, float | None] = (0.0, None)
    """When recon began (the run's start) and ended (`recon-end`), ledger time."""
    end: dict[str, Any] | None = None

    @property
    def run_id(self) -> str:
        return str(self.start["run_id"])

    @property
    def checks(self) -> tuple[CheckId, ...]:
        return tuple(CheckId(c) for c in self.start["checks"])

    @property
    def config(self) -> AuditConfig:
        return AuditConfig.model_validate(self.start["config"])

    @property
    def root(self) -> Path:
        return Path(self.start["root"])

    @property
    def output_dir(self) -> Path:
        return self.run_dir.parent.parent

    def workspace(self) -> Workspace:
        config = self.config
        if not self.root.is_dir():
            raise UsageError("err.host.root_gone", root=str(self.root), run_id=self.run_id)
        return Workspace.open(self.root, excludes=config.excludes, max_file_bytes=config.max_file_bytes)

    def landmark_candidates(self) -> list[LandmarkCandidate]:
        # refused ones too: re-gated, they are refused again and counted in the report like the model engine's
        host = [c for _, c, _ in self.units.get(RECON, []) if isinstance(c, LandmarkCandidate)]
        return [*self.static_landmarks, *host]

    def budget(self) -> int:
        return self.config.max_tool_calls_per_check


def _load(run_dir: Path) -> _Run:
    read = read_ledger(run_dir / LEDGER_NAME)
    starts = read.of("run-start")
    if not starts or starts[0].get("engine") != ENGINE:
        raise UsageError("err.host.not_host_run", name=run_dir.name)
    run = _Run(run_dir=run_dir, start=starts[0], recon_t=(float(starts[0].get("t", 0.0)), None))
    for e in read.events:
        kind, unit = e.get("event"), str(e.get("unit", ""))
        if kind == "static-landmarks":
            run.static_landmarks = [LandmarkCandidate(**c) for c in e["candidates"]]
        elif kind == "static-leads":
            run.leads = {CheckId(check): [StaticLead(lead_id=lead["id"], candidate=Candidate(**lead["candidate"]))
                                          for lead in leads] for check, leads in e["leads"].items()}
        elif kind in ("finding", "refusal", "landmark"):
            cand = e["candidate"]
            value = LandmarkCandidate(**cand) if "kind" in cand else Candidate(**cand)
            run.units.setdefault(unit, []).append((str(kind), value, e.get("lead")))
            run.calls[unit] += 1
        elif kind == "lead-dismissed":
            run.dismissed[str(e["lead"])] = (str(e["reason"]), f"{_SOURCE}:{unit}")
            run.calls[unit] += 1
        elif kind == "landmark-dismissed":
            run.dismissed_landmarks[(str(e["kind"]), str(e["file"]), int(e["line"]))] = (str(e["reason"]),
                                                                                       f"{_SOURCE}:{unit}")
            run.calls[unit] += 1
        elif kind == "recon-end":
            run.recon_done = True
            run.recon_t = (run.recon_t[0], float(e.get("t", run.recon_t[0])))
        elif kind == "unit-start" and unit in CheckId.__members__:
            run.current = CheckId(unit)
            run.task = str(e.get("task", ""))
            run.started_t[run.current] = float(e.get("t", 0.0))
        elif kind == "unit-end" and unit in CheckId.__members__:
            run.ended[CheckId(unit)] = e
            if run.current == CheckId(unit):
                run.current = None
        elif kind == "run-end":
            run.end = e
    return run


@contextmanager
def _locked(run_dir: Path) -> Iterator[None]:
    """One step at a time per run, across processes: a host may fire calls in parallel."""
    with (run_dir / _LOCK_NAME).open("a") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def find_run(run_id: str, output_dir: Path) -> Path:
    """The run directory of `run_id` under `output_dir`; a malformed or unknown id is a `UsageError`."""
    if not _RUN_ID.fullmatch(run_id.strip()):
        raise UsageError("err.host.bad_run_id", run_id=run_id)
    run_dir = output_dir / "runs" / run_id.strip()
    if not (run_dir / LEDGER_NAME).is_file():
        raise UsageError("err.host.unknown_run", run_id=run_id.strip(), path=str(output_dir))
    return run_dir


@dataclass(frozen=True, slots=True, kw_only=True)
class HostSpend:
    """What a host run really spent, as its ledger shows it: the host's own model's tokens are not visible to us."""

    calls: dict[str, int]
    """Protocol calls each unit made (`recon`, check ids): landmarks, reports and dismissals, accepted or refused."""
    durations: dict[str, float]
    """Wall time of recon and of each check that was handed out and ended, from the ledger's timestamps."""


def _host_spend(run: _Run) -> HostSpend:
    durations = {check.value: max(float(run.ended[check].get("t", t0)) - t0, 0.0)
                 for check, t0 in run.started_t.items() if check in run.ended}
    start, end = run.recon_t
    if end is not None:
        durations[RECON] = max(end - start, 0.0)
    return HostSpend(calls={unit: n for unit, n in run.calls.items()}, durations=durations)


def host_spend(run_dir: Path) -> HostSpend:
    """What the host run in `run_dir` spent (protocol calls and wall time per unit); `replay` re-renders with it."""
    return _host_spend(_load(run_dir))


# ------------------------------------------------------------------------------------------------- texts
def _rules_text(lang: str = "en") -> str:
    """The evidence and verdict rules every auditor works under, from the shared criteria file."""
    shared = shared_rules(lang)
    # the first paragraph addresses a subagent given one check; the host gets the rest verbatim
    return shared[shared.index("\n## ") + 1:].rstrip()


SHOWN_PER_KIND = 8
"""Landmarks of one kind listed in a step's text; the rest are counted and kept in the run's landmark file."""
LANDMARK_FILE = "landmarks.txt"
"""Every landmark in use, one per line, in the run's directory (rewritten at `begin` and each `next`)."""
_CONFIDENCE_RANK = {"high": 0, "medium": 1, "low": 2}


def _landmark_line(lm: Landmark, lang: str = "en", sources: str | None = None, nested: bool = False) -> str:
    """`- agent-loop: loop.py:12 in `run` (high, static:recon)`; nested under its kind's heading, without the kind."""
    head = f"  - {lm.file}:{lm.line}" if nested else f"- {lm.kind.value}: {lm.file}:{lm.line}"
    return head + (t("host.landmark.in", lang, symbol=lm.symbol) if lm.symbol else "") + \
        f" ({lm.confidence}, {sources or lm.source})"


def _merged(landmarks: Iterable[Landmark]) -> list[tuple[Landmark, str]]:
    """One entry per place and kind (static recon and the semantic roles often find the same one), with every
    source that found it, the most confident first."""
    at: dict[tuple[str, str, int], list[Landmark]] = {}
    for lm in landmarks:
        at.setdefault((lm.kind.value, lm.file, lm.line), []).append(lm)
    out: list[tuple[Landmark, str]] = []
    for same in at.values():
        same.sort(key=lambda lm: _CONFIDENCE_RANK.get(lm.confidence, 3))
        out.append((same[0], "+".join(dict.fromkeys(lm.source for lm in same))))
    return out


def _landmark_digest(landmarks: Sequence[Landmark], kinds: Iterable[LandmarkKind], listing: Path,
                     lang: str = "en") -> list[str]:
    """The landmarks of `kinds`, grouped by kind: at most `SHOWN_PER_KIND` each, the most confident first, the
    rest counted; every one is in `listing`. Test and example code is shown only for a kind with no landmark in
    the harness's own code (a fake loop in a test is not what a check reads); otherwise it is counted apart."""
    merged = _merged(landmarks)
    out: list[str] = []
    for kind in kinds:
        mine = [(lm, src) for lm, src in merged if lm.kind is kind]
        if not mine:
            continue
        mine.sort(key=lambda e: (_CONFIDENCE_RANK.get(e[0].confidence, 3), e[0].file, e[0].line))
        own = [e for e in mine if not (is_test_file(e[0].file) or is_example_file(e[0].file))]
        shown = own or mine
        out.append(t("host.landmarks.kind", lang, kind=kind.value, n=len(mine)))
        out += [_landmark_line(lm, lang, src, nested=True) for lm, src in shown[:SHOWN_PER_KIND]]
        if len(shown) > SHOWN_PER_KIND:
            out.append(t("host.landmarks.more", lang, n=len(shown) - SHOWN_PER_KIND, file=listing))
        if own and len(own) < len(mine):
            out.append(t("host.landmarks.more_in_tests", lang, n=len(mine) - len(own), file=listing))
    return out


def _write_landmark_list(run: _Run, landmarks: Sequence[Landmark]) -> Path:
    """Every landmark in use, sorted by kind, file and line, in the run's directory; returns its path."""
    path = run.run_dir / LANDMARK_FILE
    order = {k: i for i, k in enumerate(LandmarkKind)}
    lines = [_landmark_line(lm, sources=src) for lm, src in
             sorted(_merged(landmarks), key=lambda e: (order[e[0].kind], e[0].file, e[0].line))]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _gated_landmarks(run: _Run, ws: Workspace) -> tuple[list[Landmark], list[Refusal]]:
    """The landmarks in use (accepted by the gate and not dismissed), and the refused ones."""
    kept, refused, _ = _all_landmarks(run, ws)
    return kept, refused


def _all_landmarks(run: _Run, ws: Workspace) -> tuple[list[Landmark], list[Refusal], list[DismissedLandmark]]:
    """The landmarks in use, the refused ones and the dismissed ones, as the report will list them: a landmark
    reported twice is one landmark, so accepted = in use + dismissed everywhere these counts are said."""
    ctx = GateContext(workspace=ws, checks_in_run=run.checks, recon=True)
    accepted: dict[Landmark, None] = {}
    refused: list[Refusal] = []
    for cand in run.landmark_candidates():
        gated = validate_landmark(cand, ctx)
        if isinstance(gated, Landmark):
            accepted.setdefault(gated)
        else:
            refused.append(gated)
    kept, dismissed = split_dismissed(accepted, run.dismissed_landmarks)
    return kept, refused, dismissed


def _counts_json(counts: LandmarkCounts | None) -> dict[str, int] | None:
    return None if counts is None else {"accepted": counts.accepted, **dataclasses.asdict(counts),
                                        "from_host": counts.accepted - counts.from_static}


def _tally_text(counts: LandmarkCounts, lang: str) -> str:
    """`landmarks: 21 accepted by the gate (16 from static recon, 5 from the host) = 19 in use + 2 dismissed;
    1 refused`: the same numbers, under the same names, in `status`, `finish` and the report's landmark appendix."""
    refused = (t("host.landmarks.refused_static", lang, n=counts.refused, m=counts.refused_static)
               if counts.refused_static else t("host.landmarks.refused", lang, n=counts.refused))
    return t("host.landmarks", lang, accepted=counts.accepted, static=counts.from_static,
             host=counts.accepted - counts.from_static, in_use=counts.in_use, dismissed=counts.dismissed,
             refused=refused)


def _missing(checks: Sequence[CheckId], found: set[LandmarkKind]) -> dict[LandmarkKind, list[CheckId]]:
    """Required landmark kinds not found yet, with the checks that need them."""
    missing: dict[LandmarkKind, list[CheckId]] = {}
    for check in checks:
        for kind in CHECKS[check].requires:
            if kind not in found:
                missing.setdefault(kind, []).append(check)
    return missing


def _recon_text(run: _Run, landmarks: Sequence[Landmark], caller: Caller) -> str:
    lang = caller.lang
    found = {lm.kind for lm in landmarks}
    missing = _missing(run.checks, found)
    parts = [t("host.recon.title", lang), ""]
    if landmarks:
        listing = _write_landmark_list(run, landmarks)
        used = _used_kinds(run.checks)
        unused = sum(1 for lm, _ in _merged(landmarks) if lm.kind not in used)
        parts += [t("host.recon.accepted", lang, n=len(landmarks), places=len(_merged(landmarks)), file=listing),
                  *_landmark_digest(landmarks, used, listing, lang),
                  *([t("host.recon.unused", lang, n=unused, file=listing)] if unused else []), ""]
    if missing:
        parts += [t("host.recon.missing", lang)]
        parts += [t("host.recon.missing_line", lang, kind=k.value, checks=", ".join(c.value for c in cs),
                    guide=t(f"landmark.{k.value}", lang)) for k, cs in missing.items()]
    else:
        parts += [t("host.recon.all_found", lang)]
    thin = _thin_kinds(run.checks, landmarks)
    if thin:
        parts += [t("host.recon.thin", lang)]
        parts += [t("host.recon.thin_line", lang, kind=k.value, users=_users(run.checks, k, lang),
                    why=t("host.recon.thin_tests" if tests_only else "host.recon.thin_none", lang))
                  for k, tests_only in thin]
    landmark_args = t("host.args.landmark_shell" if caller.face == "shell" else "host.args.landmark", lang)
    dismiss_args = ("--kind KIND --file PATH --line N --reason WHY" if caller.face == "shell"
                    else t("host.args.dismiss_landmark", lang))
    parts += ["", t("host.recon.kinds", lang),
              *[t("host.recon.kind_line", lang, kind=k.value, users=_users(run.checks, k, lang),
                  guide=t(f"landmark.{k.value}", lang)) for k in LandmarkKind], "",
              t("host.recon.report", lang, step=caller.step("landmark", run.run_id, landmark_args)),
              t("host.recon.dismiss", lang, step=caller.step("dismiss-landmark", run.run_id, dismiss_args)),
              t("host.recon.budget", lang, n=run.budget()),
              t("host.recon.done", lang, step=caller.step("next", run.run_id))]
    return "\n".join(parts)


def _thin_kinds(checks: Sequence[CheckId], landmarks: Sequence[Landmark]) -> list[tuple[LandmarkKind, bool]]:
    """Kinds the checks need or use with no landmark in the harness's own code: (kind, whether test or example
    code has some). A required kind with none at all is already said missing; a kind found only in a test or a
    demo, or a useful kind not found, is where static recon most often missed the harness's own place."""
    own: set[LandmarkKind] = set()
    elsewhere: set[LandmarkKind] = set()
    for lm in landmarks:
        (elsewhere if is_test_file(lm.file) or is_example_file(lm.file) else own).add(lm.kind)
    return [(kind, kind in elsewhere) for kind in _used_kinds(checks)
            if kind not in own and (kind in elsewhere or any(kind in CHECKS[c].also_useful for c in checks))]


def _used_kinds(checks: Sequence[CheckId]) -> list[LandmarkKind]:
    """The landmark kinds some check of `checks` needs or uses, in the kinds' order."""
    return [k for k in LandmarkKind if any(k in CHECKS[c].requires or k in CHECKS[c].also_useful for c in checks)]


def _users(checks: Sequence[CheckId], kind: LandmarkKind, lang: str = "en") -> str:
    need = [c.value for c in checks if kind in CHECKS[c].requires]
    use = [c.value for c in checks if kind in CHECKS[c].also_useful]
    said = ([t("host.users.need", lang, checks=", ".join(need))] if need else []) + \
        ([t("host.users.use", lang, checks=", ".join(use))] if use else [])
    return t("host.users.sep", lang).join(said) or t("host.users.none", lang)


def _gated_leads(run: _Run, ws: Workspace, check: CheckId) -> list[Lead]:
    """The leads of `check` through the gate (the ones it refuses are never shown, dismissed or settled)."""
    numbered = {check: [(lead.lead_id, lead.candidate) for lead in run.leads.get(check, [])]}
    return gate_leads(ws, run.checks, numbered, []).get(check, [])


def _regated(run: _Run, ws: Workspace, unit: str) -> tuple[list[tuple[Finding, str | None]], list[Refusal]]:
    """A check unit's submissions through the gate again, as `finish` takes them: each accepted finding with the
    lead it named, and the refusals."""
    ctx = GateContext(workspace=ws, checks_in_run=run.checks, assigned=CheckId(unit))
    reported: list[tuple[Finding, str | None]] = []
    refused: list[Refusal] = []
    for _, cand, named in run.units.get(unit, []):
        assert isinstance(cand, Candidate)
        gated = validate(cand, ctx)
        if isinstance(gated, Finding):
            reported.append((gated, named))
        else:
            refused.append(gated)
    return reported, refused


def _offered(run: _Run, ws: Workspace, check: CheckId) -> list[StaticLead]:
    """The leads of `check` the gate accepts: the only ones a host is shown, may dismiss or has settled."""
    accepted = {lead.lead_id for lead in _gated_leads(run, ws, check)}
    return [lead for lead in run.leads.get(check, []) if lead.lead_id in accepted]


def _lead_line(lead: StaticLead, dismissed: dict[str, tuple[str, str]], lang: str = "en",
               same_place: str | None = None, landmark_reason: str | None = None) -> str:
    c = lead.candidate
    state = t("host.check.lead_dismissed", lang, reason=dismissed[lead.lead_id][0]) if lead.lead_id in dismissed else ""
    if same_place is not None:
        state += t("host.check.lead_same_place", lang, lead=same_place)
    if landmark_reason is not None:
        state += t("host.check.lead_on_dismissed_landmark", lang, reason=landmark_reason)
    return t("host.check.lead_line", lang, lead=lead.lead_id, where=f"{c.file}:{c.line}", verdict=c.verdict,
             claim=c.claim, rule=c.source, state=state)


def _first_at_place(leads: Sequence[StaticLead]) -> dict[str, str]:
    """Lead id → the first lead at the same file and line (two rules flagging one place), for the leads after it."""
    first: dict[tuple[str | None, int | None], str] = {}
    out: dict[str, str] = {}
    for lead in leads:
        place = (lead.candidate.file, lead.candidate.line)
        if place in first:
            out[lead.lead_id] = first[place]
        else:
            first[place] = lead.lead_id
    return out


def _check_text(run: _Run, check: CheckId, landmarks: Sequence[Landmark], leads: Sequence[StaticLead],
                caller: Caller, refused: int = 0) -> str:
    spec = CHECKS[check]
    wanted = set(spec.requires) | set(spec.also_useful)
    kinds = [k for k in LandmarkKind if k in wanted]
    listing = _write_landmark_list(run, landmarks)
    lang = caller.lang
    report_args = t("host.args.report_shell", lang, check=check.value) if caller.face == "shell" \
        else t("host.args.report", lang)
    dismiss_args = "LEAD --reason WHY" if caller.face == "shell" else t("host.args.dismiss", lang)
    # the criteria open with the check's own heading (`# C1 · Title`)
    parts = [criteria_text(check, lang).strip(), "",
             t("host.check.landmarks", lang, check=check.value), *_landmark_digest(landmarks, kinds, listing, lang), ""]
    twins = _first_at_place(leads)
    # a lead where the host dismissed a landmark in recon: say so, the host has read that line already
    gone: dict[tuple[str | None, int | None], str] = {(k[1], k[2]): why for k, (why, _) in run.dismissed_landmarks.items()}
    if leads:
        parts += [t("host.check.leads", lang),
                  t("host.check.leads_intro", lang, step=caller.step("dismiss", run.run_id, dismiss_args)),
                  *[_lead_line(lead, run.dismissed, lang, twins.get(lead.lead_id),
                               gone.get((lead.candidate.file, lead.candidate.line))) for lead in leads], ""]
    else:
        parts += [t("host.check.no_leads", lang, check=check.value), ""]
    if refused:
        parts += [t("host.check.leads_refused", lang, n=refused, check=check.value), ""]
    parts += [t("host.check.reporting", lang),
              t("host.check.report", lang, check=check.value, step=caller.step("report", run.run_id, report_args)),
              t("host.check.budget", lang, n=run.budget()),
              t("host.check.done", lang, step=caller.step("next", run.run_id))]
    return "\n".join(parts)


# ------------------------------------------------------------------------------------------------- steps
def output_dir_for(path: str | Path, overrides: dict[str, Any] | None = None) -> Path:
    """The output directory a run of `path` would use (its configuration, then `overrides`)."""
    root = resolve_root(path)
    config, _ = build_config(root, overrides)
    out = Path(config.output_dir)
    return out if out.is_absolute() else root / out


def begin(path: str | Path, selection: Sequence[str] | str, *, overrides: dict[str, Any] | None = None,
          caller: Caller = Caller()) -> StepResult:
    """Start a host-model run: static recon and leads, the run's ledger, and the recon instructions.

    `selection` uses the CLI's syntax (`C1,C9`, `p1`, `all`); anything unparsable is a `UsageError` with the
    CLI's message, as is a missing path or a bad configuration.
    """
    tokens = [selection] if isinstance(selection, str) else list(selection)
    checks = parse_selection(tokens)
    root = resolve_root(path)
    config, _ = build_config(root, overrides)
    started = datetime.now().astimezone()
    ws = Workspace.open(root, excludes=config.excludes, max_file_bytes=config.max_file_bytes)
    output_dir = output_dir_of(ws, config)
    discovery = ws.discover(STATIC_LANGUAGES)
    static, _, _, _ = run_static(ws, discovery, checks, output_dir, config, config.cache)
    run_id = new_run_id(started)
    run_dir = output_dir / "runs" / run_id
    leads = {check.value: [{"id": f"{check.value}-{i}", "candidate": dataclasses.asdict(cand)}
                           for i, cand in enumerate(static.candidates.get(check, []), start=1)] for check in checks}
    with Ledger(run_dir / LEDGER_NAME) as ledger:
        ledger.write("run-start", version=LEDGER_VERSION, run_id=run_id, tool_version=__version__, root=str(root),
                     started_at=started.isoformat(timespec="seconds"), engine=ENGINE, model=None, base_url=None,
                     checks=[c.value for c in checks], config=config.model_dump(mode="json"), prefix=None,
                     resumed=[])
        ledger.write("static-landmarks", candidates=[dataclasses.asdict(c) for c in static.landmarks])
        ledger.write("static-leads", leads={k: v for k, v in leads.items() if v})
    run = _load(run_dir)
    landmarks, _ = _gated_landmarks(run, ws)
    lang = caller.lang
    # `run: ID` and `output-dir: DIR` stay as they are in every language: hosts and SKILL.md read them off these lines
    head = [f"run: {run_id}", t("host.head.workspace", lang, root=root),
            t("host.head.checks", lang, checks=" ".join(c.value for c in checks)),
            t("host.head.leads", lang, counts=", ".join(f"{k} {len(v)}" for k, v in leads.items())),
            f"output-dir: {output_dir}", _where_text(caller), ""]
    text = "\n".join([*head, _recon_text(run, landmarks, caller), "", t("host.how_to_cite", lang), "",
                      t("host.scope", lang), t("host.lines", lang), _rules_text(lang)]) + "\n"
    return StepResult(ok=True, text=text, data={
        "run_id": run_id, "root": str(root), "checks": [c.value for c in checks], "output_dir": str(output_dir),
        "run_dir": str(run_dir), "landmarks": [_landmark_json(lm) for lm in landmarks],
        "missing": {k.value: [c.value for c in cs] for k, cs in _missing(checks, {lm.kind for lm in landmarks}).items()},
        "leads": sum(len(v) for v in leads.values()), "calls_per_unit": config.max_tool_calls_per_check,
    })


def _where_text(caller: Caller) -> str:
    """What the output directory holds, and whether the commands printed to this caller name it."""
    said = t("host.where", caller.lang)
    if caller.face != "shell":
        return said
    return said + t("host.where.named" if caller.output_dir_flag else "host.where.default", caller.lang)


def _landmark_json(lm: Landmark) -> dict[str, Any]:
    return {"kind": lm.kind.value, "file": lm.file, "line": lm.line, "symbol": lm.symbol,
            "confidence": lm.confidence, "source": lm.source}


def _refused(run: _Run, text: str, **data: Any) -> StepResult:
    """A refused call: `text` (already in the caller's language) and the data that says why."""
    return StepResult(ok=False, text=text, data={"run_id": run.run_id, "accepted": False, **data})


def _open_step(run_dir: Path) -> _Run:
    run = _load(run_dir)
    if run.end is not None:
        paths = ", ".join(run.end.get("reports", [])) or Msg("host.reports_none")
        raise UsageError("err.host.finished", run_id=run.run_id, paths=paths)
    return run


def _spend(run: _Run, unit: str, ledger: Ledger, caller: Caller) -> StepResult | None:
    """Count one protocol call of `unit`; past the ceiling the unit ends as `failed:budget-exhausted`."""
    if run.calls[unit] < run.budget():
        return None
    if unit in CheckId.__members__ and CheckId(unit) not in run.ended:
        ledger.write("unit-end", unit=unit, status=OutcomeStatus.FAILED.value,
                     failure=FailureCode.BUDGET_EXHAUSTED.value,
                     error=str(Msg("note.protocol_limit", n=run.budget())), usage=dataclasses.asdict(_UNKNOWN))
    return _refused(run, t("host.refused.budget", caller.lang, unit=unit, n=run.budget(),
                           step=caller.step("next", run.run_id)), reason="budget-exhausted")


def report_landmark(run_dir: Path, *, kind: str, file: str, line: int | None, symbol: str | None = None,
                    confidence: str = "medium", evidence: str = "", caller: Caller = Caller()) -> StepResult:
    """Gate one landmark of recon; refused ones carry the gate's reason and remedy."""
    with _locked(run_dir):
        run = _open_step(run_dir)
        if run.recon_done:
            return _refused(run, t("host.refused.recon_over_landmark", caller.lang), reason="recon-over")
        conf = confidence if confidence in ("high", "medium", "low") else "medium"
        cand = LandmarkCandidate(kind=kind, file=file, line=line or 0, symbol=symbol or None, confidence=conf,
                                 evidence=evidence, source=f"{_SOURCE}:{RECON}",  # type: ignore[arg-type]
                                 language=_language(file))
        with Ledger(run_dir / LEDGER_NAME) as ledger:
            spent = _spend(run, RECON, ledger, caller)
            if spent is not None:
                return spent
            gated = validate_landmark(cand, GateContext(workspace=run.workspace(), checks_in_run=run.checks,
                                                        recon=True))
            return _record(run, ledger, RECON, cand, gated, caller)


def dismiss_landmark(run_dir: Path, *, kind: str, file: str, line: int, reason: str, also_at: Sequence[str] = (),
                     caller: Caller = Caller()) -> StepResult:
    """Dismiss one accepted landmark during recon, with the reason it is wrong, or several of one kind wrong for
    one reason (`also_at`: more `FILE:LINE` places), all or none, each counting as a protocol call.

    A dismissed landmark is not shown to any check and does not count for coverage (a check whose only landmark of
    a required kind is dismissed is not covered); the report lists it with the reason. Landmarks only guide the
    checks: a wrong one never becomes a finding, so dismissing is for one that would mislead a check or coverage.
    """
    with _locked(run_dir):
        run = _open_step(run_dir)
        if run.recon_done:
            return _refused(run, t("host.refused.recon_over_dismiss", caller.lang), reason="recon-over")
        in_use, _ = _gated_landmarks(run, run.workspace())
        kind = kind.strip()
        keys = list(dict.fromkeys([(kind, file.strip().removeprefix("./"), line),
                                   *(_place_key(kind, at) for part in also_at for at in re.split(r"[\s,]+", part)
                                     if at)]))
        known_keys = {landmark_key(lm) for lm in in_use}
        unknown = [k for k in keys if k not in known_keys]
        if unknown:
            same = [f"{lm.file}:{lm.line}" for lm in in_use if lm.kind.value == kind]
            near = sorted(same, key=lambda w: (w.rpartition(":")[0] != unknown[0][1], w))[:_KNOWN_SHOWN]
            known = (", ".join(near) + (t("host.more_in_listing", caller.lang, n=len(same) - len(near),
                                          file=run.run_dir / LANDMARK_FILE) if len(same) > len(near) else "")
                     ) or t("host.none", caller.lang)
            return _refused(run, t("host.refused.unknown_landmark", caller.lang, kind=kind,
                                   where=", ".join(f"{k[1]}:{k[2]}" for k in unknown), known=known),
                            reason="unknown-landmark")
        if len(reason.split()) < MIN_REASON_WORDS:
            return _refused(run, t("host.refused.landmark_reason", caller.lang), reason="reason-too-short")
        left_before = run.budget() - run.calls[RECON]
        if len(keys) > 1 and left_before < len(keys):
            return _refused(run, t("host.refused.bulk_budget_landmarks", caller.lang, n=len(keys), left=left_before),
                            reason="budget-exhausted")
        with Ledger(run_dir / LEDGER_NAME) as ledger:
            spent = _spend(run, RECON, ledger, caller)
            if spent is not None:
                return spent
            for key in keys:
                ledger.write("landmark-dismissed", unit=RECON, kind=key[0], file=key[1], line=key[2],
                             reason=reason.strip())
        for key in keys:
            run.dismissed_landmarks[key] = (reason.strip(), f"{_SOURCE}:{RECON}")
        left_of_kind = [lm for lm in in_use if lm.kind.value == kind and landmark_key(lm) not in keys]
        needs = [c.value for c in run.checks if kind in {k.value for k in CHECKS[c].requires}]
        where = ", ".join(f"{k[1]}:{k[2]}" for k in keys)
        text = t("host.dismissed_landmark", caller.lang, kind=kind, where=where, reason=reason.strip(),
                 left=_left(left_before - len(keys), RECON, caller.lang))
        if not left_of_kind and needs:
            text += "\n" + t("host.no_landmark_left", caller.lang, kind=kind, checks=", ".join(needs))
        places = [{"kind": k[0], "file": k[1], "line": k[2]} for k in keys]
        return StepResult(ok=True, text=text, data={
            "run_id": run.run_id, "accepted": True, "landmark": places[0] if len(places) == 1 else places,
            "calls_left": left_before - len(keys), "left_of_kind": len(left_of_kind)})


_KNOWN_SHOWN = 10
"""How many landmarks of the kind a refused dismissal names (those in the same file first); the rest are counted."""


def _place_key(kind: str, at: str) -> tuple[str, str, int]:
    """`FILE:LINE` as a landmark key of `kind`; a place that does not parse names line 0, which no landmark has."""
    file, _, line = at.strip().rpartition(":")
    return kind, file.removeprefix("./"), int(line) if line.isdigit() else 0


def _record(run: _Run, ledger: Ledger, unit: str, cand: Candidate | LandmarkCandidate,
            gated: Finding | Landmark | Refusal, caller: Caller, lead: str | None = None) -> StepResult:
    """Write the gate's answer to the ledger (the model engine's event form) and say it to the host."""
    left = run.budget() - run.calls[unit] - 1
    lang = caller.lang
    if isinstance(gated, Refusal):
        ledger.write("refusal", unit=unit, subject=gated.subject, reason=gated.reason.value, message=gated.message,
                     candidate=dataclasses.asdict(cand))
        message = caller.field(localize(gated.message, lang, "gate."))
        return _refused(run, t("host.refused.gate", lang, reason=gated.reason.value, message=message,
                               left=_left(left, unit, lang)),
                        reason=gated.reason.value, message=gated.message, calls_left=left)
    moved = t("host.moved", lang, line=cand.line) if cand.line and gated.line != cand.line else ""
    if isinstance(gated, Landmark):
        ledger.write("landmark", unit=unit, candidate=dataclasses.asdict(cand))
        text = t("host.accepted_landmark", lang, kind=gated.kind.value, where=f"{gated.file}:{gated.line}", moved=moved,
                 left=_left(left, unit, lang))
        return StepResult(ok=True, text=text, data={"run_id": run.run_id, "accepted": True, "calls_left": left,
                                                    "landmark": _landmark_json(gated)})
    ledger.write("finding", unit=unit, candidate=dataclasses.asdict(cand), fingerprint=gated.fingerprint,
                 line=gated.line, **({"lead": lead} if lead else {}))
    where = f"{gated.file}:{gated.line}{moved}" if gated.located else t("host.check_level", lang)
    text = t("host.accepted_finding", lang, check=gated.check.value, verdict=t(f"verdict.{gated.verdict.value}", lang),
             where=where, left=_left(left, unit, lang))
    return StepResult(ok=True, text=text, data={
        "run_id": run.run_id, "accepted": True, "calls_left": left,
        "finding": {"check": gated.check.value, "verdict": gated.verdict.value, "file": gated.file,
                    "line": gated.line, "fingerprint": gated.fingerprint}})


def _left(left: int, unit: str, lang: str = "en") -> str:
    return t("host.left_one", lang, unit=unit) if left == 1 else t("host.left", lang, n=left, unit=unit)


def next_check(run_dir: Path, *, nothing_found: bool = False, caller: Caller = Caller()) -> StepResult:
    """End recon or the current check, settle checks without landmarks as not covered, hand out the next one.

    A check cannot be closed unexamined by accident: when the host made no call for it (no finding reported, no
    lead dismissed), `next` is turned away until it says so with `nothing_found` (`next --nothing-found`), because
    a closed check reads "ran, nothing found" in every report and cannot be reopened.
    """
    with _locked(run_dir):
        run = _open_step(run_dir)
        if run.current is not None and not nothing_found and run.calls[run.current.value] == 0:
            check = run.current.value
            args = "--nothing-found" if caller.face == "shell" else "nothing_found=true"
            return _refused(run, t("host.next.nothing_yet", caller.lang, check=check,
                                   step=caller.step("next", run.run_id, args)), check=check)
        ws = run.workspace()
        landmarks, _ = _gated_landmarks(run, ws)
        found = {lm.kind for lm in landmarks}
        skipped: list[str] = []
        with Ledger(run_dir / LEDGER_NAME) as ledger:
            if not run.recon_done:
                ledger.write("recon-end", status=OutcomeStatus.RAN.value, usage=dataclasses.asdict(_UNKNOWN),
                             landmarks=len(landmarks))
            closed = [t("host.next.closed", caller.lang, check=run.current.value)] if run.current is not None \
                else [t("host.next.recon_closed", caller.lang)] if not run.recon_done else []
            if run.current is not None:
                ledger.write("unit-end", unit=run.current.value, status=OutcomeStatus.RAN.value, failure=None,
                             error=None, usage=dataclasses.asdict(_UNKNOWN))
                run.ended[run.current] = {"status": OutcomeStatus.RAN.value}
            for check in run.checks:
                if check in run.ended:
                    continue
                missing = _missing_kinds(check, found)
                if missing:
                    skipped.append(_not_covered(run, ledger, check, missing, caller.lang))
                    continue
                offered = _offered(run, ws, check)
                task = _check_text(run, check, landmarks, offered, caller,
                                   refused=len(run.leads.get(check, [])) - len(offered))
                ledger.write("unit-start", unit=check.value, task=task)
                text = "\n".join([*closed, *skipped, *([""] if closed or skipped else []), task, "",
                                  t("host.next.now", caller.lang, check=check.value)]) + "\n"
                return StepResult(ok=True, text=text, data={
                    "run_id": run.run_id, "check": check.value, "title": t(f"check.{check}", caller.lang),
                    "criteria": criteria_text(check, caller.lang), "task": task, "not_covered": skipped,
                    "landmarks": [_landmark_json(lm) for lm in landmarks
                                  if lm.kind in (*CHECKS[check].requires, *CHECKS[check].also_useful)],
                    "leads": [{"id": lead.lead_id, "file": lead.candidate.file, "line": lead.candidate.line,
                               "verdict": str(lead.candidate.verdict), "claim": lead.candidate.claim,
                               "rule": lead.candidate.source} for lead in offered],
                    "calls": run.budget()})
        text = "\n".join([*closed, *skipped, *([""] if closed or skipped else []),
                          t("host.finish_now", caller.lang, step=caller.step("finish", run.run_id))])
        return StepResult(ok=True, text=text + "\n", data={"run_id": run.run_id, "check": None, "next": "finish",
                                                           "not_covered": skipped})


def _missing_kinds(check: CheckId, found: set[LandmarkKind]) -> list[LandmarkKind]:
    """The landmark kinds `check` requires that recon did not find: with any, the check is not covered."""
    return [k for k in CHECKS[check].requires if k not in found]


def _not_covered(run: _Run, ledger: Ledger, check: CheckId, missing: Sequence[LandmarkKind], lang: str = "en") -> str:
    """End `check` as not covered for want of `missing` landmarks; the line that says so."""
    ledger.write("unit-end", unit=check.value, status=OutcomeStatus.NOT_COVERED.value,
                 missing=[k.value for k in missing])
    run.ended[check] = {"status": OutcomeStatus.NOT_COVERED.value, "missing": [k.value for k in missing]}
    return t("host.not_covered", lang, check=check.value, kinds=", ".join(k.value for k in missing))


def _settle_not_covered(run: _Run, ledger: Ledger, found: set[LandmarkKind]) -> None:
    """End every check not handed out yet whose landmarks are missing as not covered, as `next_check` would:
    finishing right after the last check is handed out never turns those into 'not audited'."""
    for check in run.checks:
        missing = _missing_kinds(check, found)
        if check not in run.ended and check != run.current and missing:
            _not_covered(run, ledger, check, missing)


def _checks_left(run: _Run) -> list[CheckId]:
    """The checks `next_check` would still hand out (not ended, every required landmark found)."""
    pending = [c for c in run.checks if c not in run.ended and c != run.current]
    if not pending:
        return []
    landmarks, _ = _gated_landmarks(run, run.workspace())
    found = {lm.kind for lm in landmarks}
    return [c for c in pending if not _missing_kinds(c, found)]


def _language(file: str | None) -> Language | None:
    """The language of a cited file by its suffix, as discovery names it (the reports' code fences use it)."""
    return LANGUAGE_BY_SUFFIX.get(Path(file).suffix.lower()) if file else None


def _current(run: _Run) -> CheckId | None:
    return run.current if run.current is not None and run.current not in run.ended else None


def report_finding(run_dir: Path, *, check: str, verdict: str, file: str | None, line: int | None, evidence: str,
                   claim: str, consequence: str, direction: str = "", confirm_hint: str = "", lead: str = "",
                   caller: Caller = Caller()) -> StepResult:
    """Gate one finding of the current check; refused ones carry the gate's reason and remedy.

    `lead` names the static lead the finding confirms (`C1-2`), or several it is the one root cause of (`C1-2,C1-5`:
    all must be leads of the current check); without it a finding at a lead's place confirms that lead.
    """
    with _locked(run_dir):
        run = _open_step(run_dir)
        current = _current(run)
        if current is None:
            return _refused(run, t("host.refused.no_check", caller.lang, step=caller.step("next", run.run_id)),
                            reason="no-current-check")
        cand = Candidate(check=check, verdict=verdict, file=file or None, line=line, evidence=evidence, claim=claim,
                         consequence=consequence, direction=direction, confirm_hint=confirm_hint,
                         source=f"{_SOURCE}:{current.value}", language=_language(file))
        ws = run.workspace()
        wanted = list(dict.fromkeys(named_leads(lead)))
        offered = {lead_.lead_id for lead_ in _offered(run, ws, current)}
        unknown = [x for x in wanted if x not in offered]
        if unknown:
            return _refused(run, t("host.refused.not_a_lead", caller.lang, lead=", ".join(unknown), check=current.value),
                            reason="unknown-lead")
        named = ",".join(wanted) or None
        with Ledger(run_dir / LEDGER_NAME) as ledger:
            spent = _spend(run, current.value, ledger, caller)
            if spent is not None:
                return spent
            ctx = GateContext(workspace=ws, checks_in_run=run.checks, assigned=current)
            return _record(run, ledger, current.value, cand, validate(cand, ctx), caller, lead=named)


def dismiss_lead(run_dir: Path, *, lead: str | Sequence[str], reason: str, caller: Caller = Caller()) -> StepResult:
    """Dismiss one lead of the current check, or several with one reason (`C7-1 C7-2`, `C7-1,C7-2`), saying why they
    are wrong; the reason goes into the report beside each. Several are taken all or none, and each one counts as a
    protocol call, as one dismissal would."""
    wanted = [x for part in ([lead] if isinstance(lead, str) else lead) for x in re.split(r"[\s,]+", part) if x]
    with _locked(run_dir):
        run = _open_step(run_dir)
        current = _current(run)
        if current is None:
            return _refused(run, t("host.refused.no_check_dismiss", caller.lang, step=caller.step("next", run.run_id)),
                            reason="no-current-check")
        ids = [lead_.lead_id for lead_ in _offered(run, run.workspace(), current)]
        unknown = [x for x in wanted if x not in ids]
        if unknown or not wanted:
            known = ", ".join(ids) or t("host.none", caller.lang)
            return _refused(run, t("host.refused.unknown_lead", caller.lang, lead=", ".join(unknown) or repr(lead),
                                   check=current.value, known=known), reason="unknown-lead")
        if len(reason.split()) < MIN_REASON_WORDS:
            return _refused(run, t("host.refused.lead_reason", caller.lang), reason="reason-too-short")
        wanted = list(dict.fromkeys(wanted))
        left_before = run.budget() - run.calls[current.value]
        if len(wanted) > 1 and left_before < len(wanted):
            return _refused(run, t("host.refused.bulk_budget", caller.lang, n=len(wanted), left=left_before),
                            reason="budget-exhausted")
        with Ledger(run_dir / LEDGER_NAME) as ledger:
            spent = _spend(run, current.value, ledger, caller)
            if spent is not None:
                return spent
            for one in wanted:
                ledger.write("lead-dismissed", unit=current.value, lead=one, reason=reason.strip())
        n_left = left_before - len(wanted)
        left = _left(n_left, current.value, caller.lang)
        return StepResult(ok=True, text=t("host.dismissed_lead", caller.lang, lead=", ".join(wanted),
                                          reason=reason.strip(), left=left),
                          data={"run_id": run.run_id, "accepted": True, "lead": wanted[0] if len(wanted) == 1 else wanted,
                                "calls_left": n_left})


def _outcome(check: CheckId, end: dict[str, Any] | None, duration: float) -> CheckOutcome:
    if end is None:
        return CheckOutcome(check=check, status=OutcomeStatus.INCOMPLETE, usage=_UNKNOWN,
                            error=str(Msg("note.host_not_audited")))
    status = OutcomeStatus(end["status"])
    if status is OutcomeStatus.NOT_COVERED:
        return CheckOutcome(check=check, status=status, missing_landmarks=tuple(LandmarkKind(k) for k in end["missing"]))
    return CheckOutcome(check=check, status=status, failure_code=end.get("failure"), usage=_UNKNOWN,
                        error=end.get("error"), duration_s=duration)


def finish_run(run_dir: Path, *, caller: Caller = Caller()) -> StepResult:
    """End the run: the pipeline's own aggregation over re-gated submissions, md/json/sarif reports, the summary."""
    with _locked(run_dir):
        run = _open_step(run_dir)
        ws = run.workspace()
        config = run.config
        landmarks, refusals, dismissed_landmarks = _all_landmarks(run, ws)
        reported: list[tuple[Finding, str | None]] = []
        for unit in run.units:
            if unit in CheckId.__members__:
                accepted, refused = _regated(run, ws, unit)
                reported += accepted
                refusals += refused
        findings = [f for f, _ in reported]
        # the model engine's rule: every lead handed out ends confirmed, dismissed (with the host's reason) or
        # unaddressed, and an unaddressed one stays a finding with its static verdict
        numbered = {c: [(lead.lead_id, lead.candidate) for lead in leads] for c, leads in run.leads.items()}
        gated_leads = gate_leads(ws, run.checks, numbered, refusals)
        handed = [lead for c in run.checks if c in run.started_t for lead in gated_leads.get(c, [])]
        lead_outcomes, kept = settle_leads(handed, reported, run.dismissed,
                                           settled_by={c: f"{_SOURCE}:{c.value}" for c in run.checks})
        findings.extend(kept)
        with Ledger(run_dir / LEDGER_NAME) as ledger:
            current = _current(run)
            if current is not None:
                ledger.write("unit-end", unit=current.value, status=OutcomeStatus.RAN.value, failure=None, error=None,
                             usage=dataclasses.asdict(_UNKNOWN))
                run.ended[current] = {"status": OutcomeStatus.RAN.value}
            _settle_not_covered(run, ledger, {lm.kind for lm in landmarks})
            spent = host_spend(run_dir)  # read back: the times the ledger holds, as a replay will read them
            outcomes = [_outcome(c, run.ended.get(c), spent.durations.get(c.value, 0.0)) for c in run.checks]
            state = "incomplete" if any(o.status in (OutcomeStatus.FAILED, OutcomeStatus.INCOMPLETE)
                                        for o in outcomes) else "complete"
            started = datetime.fromisoformat(run.start["started_at"])
            elapsed = (datetime.now().astimezone() - started).total_seconds()
            notes = [str(Msg("note.host_cost"))]
            phase = PhaseResult(landmarks=landmarks, findings=findings, refusals=refusals, outcomes=outcomes,
                                unparsed=[], state=state, recon_usage=_UNKNOWN, leads=lead_outcomes,
                                dismissed_landmarks=dismissed_landmarks,
                                extra={"engine": ENGINE, "ledger": str(run_dir / LEDGER_NAME), "notes": tuple(notes),
                                       "protocol_calls": spent.calls, "recon_duration_s": spent.durations.get(RECON)})
            discovery = ws.discover(STATIC_LANGUAGES)
            result = finish(ws, discovery, run.checks, config, phase, run_id=run.run_id, started=started,
                            t0=time.perf_counter() - elapsed, output_dir=run.output_dir, write=True)
            paths = [str(p) for p in result.paths]
            ledger.write("run-end", state=state, outcomes={o.check.value: o.status_text for o in outcomes},
                         findings=len(result.report.findings), refusals=len(refusals), reports=paths,
                         meta={"files_scanned": len(discovery.files), "excluded_dirs": discovery.excluded_dirs,
                               "notes": notes, "skipped": [{"path": s.path, "reason": s.reason}
                                                           for s in discovery.skipped]})
        report = result.report
        counts = Counter(f.verdict.value for f in report.findings)
        refused_findings = [r for r in report.refusals if r.subject == "finding"]  # landmarks: on their own line
        lang = caller.lang
        lines = [t("host.finished", lang, run_id=run.run_id, state=t(f"jobs.state.{state}", lang)),
                 t("host.finished_counts", lang, confirmed=counts.get("confirmed", 0),
                   suspected=counts.get("suspected", 0), not_implemented=counts.get("not-implemented", 0),
                   refused=len(refused_findings))]
        static_refused = sum(1 for r in refused_findings if r.source.startswith("static:"))
        if static_refused:
            lines.append(t("host.finished_static_refused", lang, n=static_refused,
                           yours=len(refused_findings) - static_refused))
        lines.append(_tally_text(report.landmark_counts, lang))
        if report.leads:
            by = Counter(lead.status for lead in report.leads)
            as_suspected = sum(1 for lead in report.leads if _by_suspected(lead))
            confirmed = (t("host.leads.confirmed_some_suspected", lang, n=by[LeadStatus.CONFIRMED], m=as_suspected)
                         if as_suspected else t("host.leads.confirmed", lang, n=by[LeadStatus.CONFIRMED]))
            lines.append(t("host.finished_leads", lang, confirmed=confirmed,
                           dismissed=by[LeadStatus.DISMISSED], unaddressed=by[LeadStatus.UNADDRESSED]))
        else:
            lines.append(t("host.finished_no_leads", lang))
        lines += [f"- {f.check.value} {t(f'verdict.{f.verdict.value}', lang)} "
                  f"{f'{f.file}:{f.line}' if f.located else '(' + t('host.check_level', lang) + ')'} {f.claim}"
                  for f in report.findings]
        lines += [f"- {o.check.value} {o.status_text}" + (f": {localize(o.error, lang)}" if o.error else "") +
                  (t("host.finished_missing", lang, kinds=", ".join(k.value for k in o.missing_landmarks))
                   if o.missing_landmarks else "")
                  for o in report.outcomes if o.status is not OutcomeStatus.RAN]
        lines += [t("summary.report", lang, path=p) for p in paths]
        from harness_audit.render.json_report import report_dict

        return StepResult(ok=True, text="\n".join(lines) + "\n", data={
            "run_id": run.run_id, "state": state, "reports": paths, "summary": report_dict(report)["meta"],
            "findings": len(report.findings), "refusals": len(report.refusals),
            "landmarks": _counts_json(report.landmark_counts)})


def _by_suspected(lead: LeadOutcome) -> bool:
    """A lead settled by a finding the host reported as suspected (it counts as confirmed: the host took it up)."""
    return lead.status is LeadStatus.CONFIRMED and lead.confirmed_by is not None and \
        lead.confirmed_by.verdict is Verdict.SUSPECTED


def _lead_states(run: _Run, ws: Workspace, check: CheckId) -> dict[str, str]:
    """What `finish` would make of each lead of `check` now: `confirmed`, `confirmed-suspected` (taken up by a
    suspected finding), `dismissed`, or `open` (left so, it stays a finding with its static verdict), by the one
    settlement rule `finish` applies."""
    outcomes, _ = settle_leads(_gated_leads(run, ws, check), _regated(run, ws, check.value)[0], run.dismissed)
    return {o.lead_id: "open" if o.status is LeadStatus.UNADDRESSED
            else "confirmed-suspected" if _by_suspected(o) else o.status.value for o in outcomes}


def status(run_dir: Path, *, task: bool = False, caller: Caller = Caller()) -> StepResult:
    """Where the run stands: its phase, each check's state, what was accepted and refused, what to do next."""
    with _locked(run_dir):
        run = _load(run_dir)
    accepted = Counter(unit for unit, subs in run.units.items() for kind, _, _ in subs if kind in ("finding", "landmark"))
    refused = Counter(unit for unit, subs in run.units.items() for kind, _, _ in subs if kind == "refusal")
    current = _current(run)
    lang = caller.lang
    # `phase` is data (English identifiers); `said` is how the text says it
    if run.end is not None:
        phase, said = "finished", t("host.phase.finished", lang)
        hint = t("host.hint.reports", lang, paths=", ".join(run.end.get("reports", [])))
    elif not run.recon_done:
        phase, said = "recon", t("host.phase.recon", lang)
        hint = t("host.hint.recon", lang, step=caller.step("next", run.run_id))
    elif current is not None:
        phase, said = f"checking {current.value}", t("host.phase.checking", lang, check=current.value)
        hint = t("host.hint.checking", lang, check=current.value, step=caller.step("next", run.run_id))
    elif _checks_left(run):
        phase, said, hint = "between checks", t("host.phase.between", lang), caller.step("next", run.run_id)
    else:
        # what `next` answers now: the checks left are done or not covered, so the run only needs finishing
        phase, said = "checks done", t("host.phase.done", lang)
        hint = t("host.hint.finish", lang, step=caller.step("finish", run.run_id))
    checks = {c.value: (str(run.ended[c].get("status")) if c in run.ended
                        else "incomplete" if run.end is not None  # finished before it was audited, as the report says
                        else "current" if c == current else "pending")
              for c in run.checks}
    unit = current.value if current is not None else RECON
    ws = run.workspace() if run.root.is_dir() else None
    tally = landmark_counts(*_all_landmarks(run, ws)) if ws is not None else None
    lead_states = _lead_states(run, ws, current) if ws is not None and current is not None and run.end is None else {}

    def state(value: str) -> str:
        key = f"host.check_state.{value}"
        return t(key, lang) if key in _CHECK_STATES else value

    lines = [t("host.status.run", lang, run_id=run.run_id),
             t("host.status.phase", lang, phase=said),
             t("host.status.checks", lang, checks=", ".join(f"{c} {state(s)}" for c, s in checks.items())),
             _tally_text(tally, lang) if tally else t("host.landmarks_unknown", lang),
             t("host.status.findings", lang, accepted=sum(v for k, v in accepted.items() if k != RECON),
               refused=sum(v for k, v in refused.items() if k != RECON)),
             t("host.status.leads", lang, n=len(run.dismissed))]
    if lead_states:
        lines.append(t("host.status.lead_states", lang, check=unit, states=", ".join(
            f"{lead} {t(f'host.lead_state.{s}', lang)}" for lead, s in lead_states.items())))
    elif current is not None and run.end is None:
        lines.append(t("host.check.no_leads", lang, check=unit))
    mine = _regated(run, ws, current.value)[0] if ws is not None and current is not None and run.end is None else []
    if mine:  # what the gate took for the open check, as finish will: hosts recounted their own reports by hand
        lines.append(t("host.status.accepted_here", lang, check=unit))
        lines += [f"  - {f.file}:{f.line} {t(f'verdict.{f.verdict.value}', lang)}"
                  + (f" ({named})" if named else "") + f" {f.claim[:80]}" if f.located
                  else f"  - ({t('host.check_level', lang)}) {t(f'verdict.{f.verdict.value}', lang)} {f.claim[:80]}"
                  for f, named in mine]
    if run.end is None and (current is not None or not run.recon_done):
        lines.append(t("host.status.calls", lang, unit=unit, n=max(run.budget() - run.calls[unit], 0)))
    lines.append(t("host.status.next", lang, hint=hint))
    if current is not None and run.end is None:
        # the open check's text again, for a host whose own output filter ate `next`'s answer
        lines += ["", run.task] if task else [t("host.status.task_hint", lang, step=caller.step(
            "status", run.run_id, "--task" if caller.face == "shell" else "task=true"))]
    return StepResult(ok=True, text="\n".join(lines) + "\n", data={
        "run_id": run.run_id, "phase": phase, "checks": checks, "current": current.value if current else None,
        "findings": sum(v for k, v in accepted.items() if k != RECON),
        "refusals": sum(refused.values()), "dismissed": dict(run.dismissed), "landmarks": _counts_json(tally),
        "finished": run.end is not None, "leads": lead_states, **({"task": run.task} if task and current else {}),
        "reports": list(run.end.get("reports", [])) if run.end else [],
        "calls_left": max(run.budget() - run.calls[unit], 0)})


_CHECK_STATES = {f"host.check_state.{s}" for s in ("current", "pending", "ran", "not-covered", "failed", "incomplete")}
"""The check states `status` shows with a catalogue entry."""


def to_json(result: StepResult) -> str:
    """A step's answer as one JSON document (`--json`, MCP structured content)."""
    return json.dumps({"ok": result.ok, **result.data, "text": result.text}, ensure_ascii=False, indent=2)
