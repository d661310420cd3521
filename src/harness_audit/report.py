"""The aggregated, render-ready result of one audit run."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from harness_audit.findings import CheckId, CheckOutcome, Finding, Landmark, Refusal, RefusalReason, Usage


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
        total = Usage()
        for o in self.outcomes:
            total = total + o.usage
        return total
