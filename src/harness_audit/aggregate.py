"""Pure aggregation: dedupe (least certain verdict wins), order, summarise. Code, never a model."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace

from harness_audit.catalogue import CHECKS, Group
from harness_audit.findings import CheckOutcome, Finding, Landmark, LandmarkKind, OutcomeStatus, Refusal, Usage, Verdict
from harness_audit.report import FileNote, GroupSummary, Report, RunMeta

_KIND_ORDER = {k: i for i, k in enumerate(LandmarkKind)}


def dedupe(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per (check, file, line); duplicates keep the LEAST certain verdict (never upgrade)."""
    best: dict[tuple[str, str | None, int | None, str], Finding] = {}
    for f in findings:
        # check-level verdicts have no line; dedupe them by their claim instead
        key = (f.check.value, f.file, f.line, "" if f.located else f.claim)
        cur = best.get(key)
        if cur is None or f.verdict.certainty < cur.verdict.certainty:
            best[key] = f
    return list(best.values())


def order(findings: Iterable[Finding]) -> list[Finding]:
    """Priority, check, verdict (confirmed, suspected, not-implemented), file, line."""
    verdict_rank = {Verdict.CONFIRMED: 0, Verdict.SUSPECTED: 1, Verdict.NOT_IMPLEMENTED: 2}
    return sorted(findings, key=lambda f: (CHECKS[f.check].priority, f.check.number, verdict_rank[f.verdict],
                                            f.file or "", f.line or 0, f.source))


def _unique_fingerprints(findings: list[Finding]) -> list[Finding]:
    """Suffix repeated fingerprints (same evidence quoted twice in one file) in order of appearance."""
    seen: dict[str, int] = defaultdict(int)
    out: list[Finding] = []
    for f in findings:
        seen[f.fingerprint] += 1
        n = seen[f.fingerprint]
        out.append(f if n == 1 else replace(f, fingerprint=f"{f.fingerprint}-{n}"))
    return out


def summarise(findings: list[Finding], outcomes: list[CheckOutcome]) -> list[GroupSummary]:
    """One summary line per group that has a requested check; every count derived from the final data."""
    by_check = {o.check: o for o in outcomes}
    out: list[GroupSummary] = []
    for group in Group:
        checks = tuple(c for c, s in CHECKS.items() if s.group is group and c in by_check)
        if not checks:
            continue
        mine = [f for f in findings if f.check in checks]
        out.append(GroupSummary(
            group=group.value, title=group.title, checks=checks,
            confirmed=sum(f.verdict is Verdict.CONFIRMED for f in mine),
            suspected=sum(f.verdict is Verdict.SUSPECTED for f in mine),
            not_implemented=sum(f.verdict is Verdict.NOT_IMPLEMENTED for f in mine),
            not_covered=tuple(c for c in checks if by_check[c].status is not OutcomeStatus.RAN),
        ))
    return out


def build_report(
    *,
    meta: RunMeta,
    findings: Iterable[Finding],
    outcomes: Iterable[CheckOutcome],
    refusals: Iterable[Refusal],
    landmarks: Iterable[Landmark],
    skipped_files: Iterable[FileNote] = (),
    unparsed_files: Iterable[FileNote] = (),
    recon_usage: Usage | None = None,
    analysis: str | None = None,
    analysis_usage: Usage | None = None,
) -> Report:
    """Assemble the final report from gated data."""
    outs = sorted(outcomes, key=lambda o: o.check.number)
    final = _unique_fingerprints(order(dedupe(findings)))
    lms = sorted(set(landmarks), key=lambda m: (_KIND_ORDER[m.kind], m.file, m.line, m.symbol or ""))
    return Report(
        meta=meta, findings=tuple(final), outcomes=tuple(outs), refusals=tuple(refusals), landmarks=tuple(lms),
        groups=tuple(summarise(final, outs)), skipped_files=tuple(sorted(skipped_files, key=lambda f: f.path)),
        unparsed_files=tuple(sorted(unparsed_files, key=lambda f: f.path)),
        recon_usage=recon_usage, analysis=analysis, analysis_usage=analysis_usage,
    )
