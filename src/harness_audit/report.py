"""The aggregated, render-ready result of one audit run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from harness_audit.catalogue.precision import RulePrecision
from harness_audit.findings import CheckId, CheckOutcome, Finding, Landmark, Refusal, RefusalReason, Usage
from harness_audit.leads import LeadOutcome, LeadStatus


@dataclass(frozen=True, slots=True, kw_only=True)
class FileNote:
    """A file left out of the audit (skipped or unparsed), with why."""

    path: str
    """Relative path."""
    reason: str
    """Why it was left out."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunMeta:
    """Facts about the run itself."""

    tool_version: str
    """harness-audit version."""
    run_id: str
    """Unique id of the run."""
    started_at: str
    """ISO 8601 local time with offset."""
    finished_at: str
    """ISO 8601 local time with offset."""
    duration_s: float
    """Wall time."""
    root: str
    """Absolute path of the audited root."""
    commit: str | None
    """Git commit of the root, if it is in a repository."""
    dirty: bool | None
    """Whether the work tree had uncommitted changes (None outside git)."""
    engine: str
    """`static`, `llm`, `hybrid` or `host`."""
    requested: tuple[CheckId, ...]
    """Checks the user selected."""
    state: str = "complete"
    """`complete`, `cancelled` or `incomplete`."""
    files_scanned: int = 0
    """First-party files analysed."""
    excluded_dirs: int = 0
    """Directories pruned by excludes or `.gitignore`."""
    cache_hit: bool = False
    """Whether the static result came from the result cache."""
    model: str | None = None
    """`provider:name` of the model engine's model (None for the static engine)."""
    base_url: str | None = None
    """The OpenAI-compatible endpoint, credentials removed."""
    resumed: tuple[CheckId, ...] = ()
    """Checks whose results were carried over from the run this one resumed."""
    ledger: str | None = None
    """Path of the run's ledger, when the engine keeps one."""
    notes: tuple[str, ...] = ()
    """Plain statements about how the run went (e.g. navigation fell back to text search)."""
    price: Price | None = None
    """Price per million tokens of `model`, when known (configured, or from the genai-prices table)."""
    language: str = "en"
    """Language of the report's fixed text (`en` or `zh`); findings keep their own words."""
    docs_url: str | None = None
    """Where the check pages live (`…/docs/checks/`), for SARIF `helpUri`; None when unknown."""
    protocol_calls: Mapping[str, int] | None = None
    """Host runs: the protocol calls each unit made (`recon`, check ids), from the ledger; None for the engines
    whose auditor we run (what they spent is `usage`). The host's own model's tokens are not visible to us."""
    recon_duration_s: float | None = None
    """Wall time of recon when the engine measured it (host runs: from the ledger's timestamps); None otherwise."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Price:
    """Dollars per million tokens; a kind whose price is not known makes any cost that needs it unknown."""

    input: float
    """Uncached input tokens."""
    cached_input: float | None = None
    """Input tokens read from the provider's cache (None: unknown)."""
    output: float
    """Output tokens (reasoning included)."""
    cache_write: float | None = None
    """Input tokens written to the provider's cache (None: unknown)."""
    source: str = "config"
    """Where the price came from: `config` (the `prices` setting) or `genai-prices` (the bundled table)."""

    def cost(self, u: Usage) -> float | None:
        """Dollars for `u`, or None when the usage, or the price of a kind of token it holds, is unknown."""
        if not u.known:
            return None
        if (u.cache_read_tokens and self.cached_input is None) or (u.cache_write_tokens and self.cache_write is None):
            return None
        fresh = max(u.input_tokens - u.cache_read_tokens - u.cache_write_tokens, 0)
        return (fresh * self.input + u.cache_read_tokens * (self.cached_input or 0.0)
                + u.cache_write_tokens * (self.cache_write or 0.0) + u.output_tokens * self.output) / 1e6


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSummary:
    """One line per group."""

    group: int
    """Group number (report order)."""
    title: str
    """Group title."""
    checks: tuple[CheckId, ...]
    """Checks of the group that were requested."""
    confirmed: int
    """Confirmed findings."""
    suspected: int
    """Suspected findings."""
    not_implemented: int
    """Not-implemented verdicts."""
    not_covered: tuple[CheckId, ...]
    """Requested checks of the group whose outcome is not `ran`."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Suppressed:
    """A gated finding that an inline `harness-audit: ignore[...]` marker suppressed, with the marker's reason."""

    finding: Finding
    """The finding, as the gate made it."""
    reason: str
    """The reason written in the marker."""
    marker_line: int
    """Line of the marker in the finding's file."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Withheld:
    """A gated finding of a static rule whose measured precision is below the run's `min_precision`."""

    finding: Finding
    """The finding, as the gate made it."""
    precision: RulePrecision
    """What the reviews say about its rule."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DismissedLandmark:
    """A landmark the auditing model judged wrong during recon, with its reason: not used, listed for the reader."""

    landmark: Landmark
    """The landmark as the gate accepted it."""
    reason: str
    """Why the model judged it wrong."""
    by: str
    """Who dismissed it (`host:recon`)."""


LandmarkKey = tuple[str, str, int]
"""`(kind, file, line)` of a gated landmark: how a dismissal names the landmark it removes."""


def landmark_key(lm: Landmark) -> LandmarkKey:
    """The key a dismissal names `lm` by."""
    return (lm.kind.value, lm.file, lm.line)


def split_dismissed(landmarks: Iterable[Landmark], dismissals: Mapping[LandmarkKey, tuple[str, str]],
                    ) -> tuple[list[Landmark], list[DismissedLandmark]]:
    """The landmarks still in use, and those a dismissal (key → (reason, by)) removed, with its reason."""
    kept: list[Landmark] = []
    dismissed: list[DismissedLandmark] = []
    for lm in landmarks:
        if landmark_key(lm) in dismissals:
            reason, by = dismissals[landmark_key(lm)]
            dismissed.append(DismissedLandmark(landmark=lm, reason=reason, by=by))
        else:
            kept.append(lm)
    return kept, dismissed


@dataclass(frozen=True, slots=True, kw_only=True)
class LandmarkCounts:
    """How a run's landmarks ended, named so a reader can add them up: accepted = in use + dismissed."""

    in_use: int
    """Accepted by the gate and not dismissed: the landmarks the checks were shown."""
    dismissed: int
    """Accepted by the gate, then dismissed in recon by the auditing model (with a reason)."""
    refused: int
    """Refused by the gate."""
    from_static: int
    """Of the accepted ones, how many static recon located (the rest the auditing model reported)."""
    refused_static: int = 0
    """Of the refused ones, how many static recon proposed (the auditing model made no call for them)."""

    @property
    def accepted(self) -> int:
        """Accepted by the gate: in use plus dismissed."""
        return self.in_use + self.dismissed


def landmark_counts(in_use: Iterable[Landmark], refusals: Iterable[Refusal],
                    dismissed: Iterable[DismissedLandmark]) -> LandmarkCounts:
    """The counts of `LandmarkCounts`; a landmark given twice is one landmark, as the report lists it once."""
    kept = set(in_use)
    gone = [d.landmark for d in dismissed]
    return LandmarkCounts(in_use=len(kept), dismissed=len(gone),
                          refused=sum(1 for r in refusals if r.subject == "landmark"),
                          from_static=sum(1 for lm in (*kept, *gone) if lm.source.startswith("static")),
                          refused_static=sum(1 for r in refusals
                                             if r.subject == "landmark" and r.source.startswith("static")))


@dataclass(frozen=True, slots=True, kw_only=True)
class Snippet:
    """The lines around a finding's cited line, as the audited file had them."""

    first: int
    """1-based number of `lines[0]`."""
    lines: tuple[str, ...]
    """A few lines before and after the cited line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteBlocks:
    """How the human reports show findings of several checks at one site: one block per verdict.

    Findings at one site with the same verdict are one block under that verdict's heading (one root cause shown
    once); a finding with another verdict keeps its own block under its own heading, so every heading's count is
    what the reader sees under it, and each block names the other verdicts' blocks at the same site.
    """

    folded: Mapping[str, tuple[Finding, ...]]
    """Fingerprint of a block's first finding → the other findings shown inside its block (same site, same
    verdict, other checks), in report order."""
    elsewhere: Mapping[str, tuple[Finding, ...]]
    """Fingerprint of a block's first finding → the first findings of the other blocks at the same site (other
    verdicts), in report order."""
    inside: frozenset[str]
    """Fingerprints of findings shown inside another finding's block (never as blocks of their own)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """Everything a renderer needs; built only by `aggregate.build_report`."""

    meta: RunMeta
    """Run facts."""
    findings: tuple[Finding, ...]
    """Gated, deduplicated, ordered findings."""
    outcomes: tuple[CheckOutcome, ...]
    """One per requested check, in catalogue order."""
    refusals: tuple[Refusal, ...]
    """Every refusal of the run."""
    landmarks: tuple[Landmark, ...]
    """Gated landmarks, ordered by kind, file, line."""
    groups: tuple[GroupSummary, ...]
    """Summary per group."""
    skipped_files: tuple[FileNote, ...]
    """Files skipped by discovery."""
    unparsed_files: tuple[FileNote, ...]
    """Files that did not parse."""
    recon_usage: Usage | None = None
    """Tokens of the recon subagent; None when recon was static."""
    analysis: str | None = None
    """Model-written cross-check analysis: inference, NOT validated by the gate."""
    analysis_usage: Usage | None = None
    """Tokens of the cross-check analysis request, when one was made."""
    leads: tuple[LeadOutcome, ...] = ()
    """Static leads handed to a model (hybrid, host), each confirmed, dismissed (with the model's reason) or
    unaddressed (then also in `findings`, with its static verdict); empty for engines that hand out none."""
    suppressed: tuple[Suppressed, ...] = ()
    """Findings suppressed inline (not in `findings`, not counted, listed in an appendix)."""
    withheld: tuple[Withheld, ...] = ()
    """Findings of rules below the run's `min_precision` (not in `findings`, not counted, listed in an appendix)."""
    min_precision: str = "low"
    """The run's `min_precision`: `low` reports every rule's findings."""
    suppression_problems: tuple[str, ...] = ()
    """Suppression markers that were not applied, each with why (no reason, unknown check)."""
    suppressions_applied: bool = True
    """False when the run ignored inline suppressions (`--no-suppressions`)."""
    snippets: Mapping[str, Snippet] = field(default_factory=dict[str, Snippet])
    """Lines around each located finding, by fingerprint (empty when the files were not at hand)."""
    dismissed_landmarks: tuple[DismissedLandmark, ...] = ()
    """Landmarks the auditing model dismissed in recon (host runs), with its reasons; not in `landmarks`, never
    used to hand out a check."""
    same_site: Mapping[str, tuple[str, ...]] = field(default_factory=dict[str, "tuple[str, ...]"])
    """One root cause, one finding: fingerprint of a finding → fingerprints of other checks' findings at the same
    site (same file and line, or the same excerpt over the same lines); `site_blocks` says how renderers show
    them."""

    def site_blocks(self) -> SiteBlocks:
        """The blocks `same_site` makes in the human reports (see `SiteBlocks`)."""
        by_fp = {f.fingerprint: f for f in self.findings}
        position = {f.fingerprint: i for i, f in enumerate(self.findings)}
        folded: dict[str, tuple[Finding, ...]] = {}
        elsewhere: dict[str, tuple[Finding, ...]] = {}
        inside: set[str] = set()
        for head, others in self.same_site.items():
            site = sorted((by_fp[fp] for fp in (head, *others) if fp in by_fp), key=lambda f: position[f.fingerprint])
            firsts: list[Finding] = []
            for f in site:
                first = next((b for b in firsts if b.verdict is f.verdict), None)
                if first is None:
                    firsts.append(f)
                else:
                    folded[first.fingerprint] = (*folded.get(first.fingerprint, ()), f)
                    inside.add(f.fingerprint)
            for first in firsts:
                others_here = tuple(b for b in firsts if b is not first)
                if others_here:
                    elsewhere[first.fingerprint] = others_here
        return SiteBlocks(folded=folded, elsewhere=elsewhere, inside=frozenset(inside))

    @property
    def landmark_counts(self) -> LandmarkCounts:
        """Accepted = in use + dismissed, and refused: the landmark appendix's counts."""
        return landmark_counts(self.landmarks, self.refusals, self.dismissed_landmarks)

    def leads_with(self, status: LeadStatus) -> tuple[LeadOutcome, ...]:
        """The leads that ended with `status`, in report order."""
        return tuple(lead for lead in self.leads if lead.status is status)

    @property
    def refusal_counts(self) -> dict[str, int]:
        """Refusals per reason, every reason present (zero included), in gate order."""
        counts = Counter(r.reason for r in self.refusals)
        return {reason.value: counts.get(reason, 0) for reason in RefusalReason}

    def refusals_for(self, check: CheckId) -> int:
        """Refusals of findings reported against `check`."""
        return sum(1 for r in self.refusals if r.check == check)

    def findings_for(self, check: CheckId) -> int:
        """Findings of `check` after dedupe."""
        return sum(1 for f in self.findings if f.check == check)

    @property
    def total_usage(self) -> Usage:
        """Usage summed over every unit."""
        total = (self.recon_usage or Usage()) + (self.analysis_usage or Usage(requests=0))
        for o in self.outcomes:
            total = total + o.usage
        return total
