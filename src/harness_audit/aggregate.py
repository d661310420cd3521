"""Pure aggregation: dedupe (least certain verdict wins), order, summarise. Code, never a model."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Protocol

from harness_audit.catalogue import CHECKS, Group
from harness_audit.catalogue.precision import Tier, withholds
from harness_audit.findings import (
    CheckOutcome,
    Finding,
    Landmark,
    LandmarkKind,
    OutcomeStatus,
    Refusal,
    Usage,
    Verdict,
    code_part,
)
from harness_audit.leads import LeadOutcome, link_leads
from harness_audit.redaction import mask_value
from harness_audit.report import (
    DismissedLandmark,
    FileNote,
    GroupSummary,
    Report,
    RunMeta,
    Snippet,
    Suppressed,
    Withheld,
)
from harness_audit.suppressions import LOOK_ABOVE, decide

_KIND_ORDER = {k: i for i, k in enumerate(LandmarkKind)}


def dedupe(findings: Iterable[Finding]) -> list[Finding]:
    """One finding per (check, file, line); duplicates keep the LEAST certain verdict (never upgrade)."""
    best: dict[tuple[str, str | None, int | None, str], Finding] = {}
    for f in findings:
        # check-level verdicts have no line; dedupe them by their claim instead
        key = (f.check.value, f.file, f.line, "" if f.located else f.claim)
        cur = best.get(key)
        if cur is None or f.verdict.certainty < cur.verdict.certainty:
            # the lead a duplicate settled stays with the finding that stands for it
            best[key] = f if cur is None or f.lead or not cur.lead else replace(f, lead=cur.lead)
        elif f.lead and not cur.lead:
            best[key] = replace(cur, lead=f.lead)
    return list(best.values())


_BUILD_DIRS = frozenset({
    "cjs", "esm", "mjs", "commonjs", "module", "modules", "es", "es5", "es6", "esnext", "es2015", "es2017", "es2018",
    "es2019", "es2020", "es2022", "umd", "browser", "node", "dist", "build", "lib", "src", "out", "compiled", "bundle",
})
"""Directory names that say which build (or the shipped source) a file belongs to, not what the file is."""
_OUTPUT_DIRS = _BUILD_DIRS - {"src"}
_JS_SUFFIX = re.compile(r"\.[cm]?[jt]sx?$")
_CJS_CALL = re.compile(r"\(0,\s*[\w$]+(?:\.[\w$]+)*\.([\w$]+)\)")
"""`(0, fs_1.readFileSync)(...)` / `(0, import_fs.readFileSync)(...)`: how compilers to CommonJS call an import."""
_CJS_NAMESPACE = re.compile(r"\b(?:[\w$]+_\d+|import_[\w$]+)\.(?=[\w$])")
"""`fs_1.x` (tsc) and `import_fs.x` (esbuild): an import rewritten to a namespace object."""
_DECLARATOR = re.compile(r"\b(?:const|let|var)\b")

ContextReader = Callable[[str, int], "str | None"]
"""`(file, line)` -> the few lines around it, as the audited file has them (`Workspace.context`)."""


class _Window(Protocol):
    @property
    def first(self) -> int: ...
    @property
    def lines(self) -> Sequence[str]: ...


WindowReader = Callable[[str, int, int], "_Window | None"]
"""`(file, first, last)` -> those lines of the audited file (`Workspace.line_window`)."""
SNIPPET_RADIUS = 2
"""Lines shown before and after a finding's cited line (five in all)."""


def _same_code(text: str) -> str:
    """Text compared across build outputs: compiler rewrites of imports and declarations undone, spacing dropped."""
    text = _CJS_NAMESPACE.sub("", _CJS_CALL.sub(r"\1", text))
    return "".join(_DECLARATOR.sub("var", text).replace(";", "").split())


def _build_stem(path: str) -> str:
    """`dist/cjs/lib/x.js`, `dist/esm/lib/x.mjs` and `src/lib/x.ts` all give `x` under the same other folders."""
    *dirs, name = path.split("/")
    return "/".join([d for d in dirs if d not in _BUILD_DIRS] + [_JS_SUFFIX.sub("", name)])


def _copy_rank(f: Finding) -> tuple[int, int, int, int, str, int]:
    """Which copy stands for the others: the least certain verdict, then TypeScript source, ESM, the shortest path."""
    path = f.file or ""
    cjs = "/cjs/" in f"/{path}" or "/commonjs/" in f"/{path}" or path.endswith((".cjs", ".cts"))
    return (f.verdict.certainty, f.language != "typescript", cjs, len(path), path, f.line or 0)


def fold_build_copies(findings: Iterable[Finding], context: ContextReader | None) -> list[Finding]:
    """Report a TS/JS defect once when a package ships the same source several times.

    Packages publish one source as ESM and CommonJS builds, as bundles beside per-module files, and often with
    their `src/` too: the same defect then appears in every copy. Two TS/JS findings are copies when they have the
    same check, rule and quoted code (compiler rewrites of imports undone) and either the same path once build
    folders and the extension are dropped, or, both in build output folders, the same surrounding lines. One
    stands for the group; the others are kept in its `also_at`, so no location is lost. Nothing else is folded:
    Python findings, source files that repeat each other and distinct code stay separate findings.
    """
    items = list(findings)
    groups: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    for i, f in enumerate(items):
        if f.located and f.language in ("typescript", "javascript"):
            groups[(f.check.value, f.source, _same_code(f.evidence))].append(i)
    parent = list(range(len(items)))
    around: dict[int, str] = {}

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for members in groups.values():
        if len(members) < 2:
            continue
        first_by: dict[tuple[str, str], int] = {}
        for i in members:
            f = items[i]
            keys = [("stem", _build_stem(f.file or ""))]
            # the same surrounding lines fold only build outputs (a bundle beside per-module files), never two
            # source files that happen to repeat each other
            built = any(d in _OUTPUT_DIRS for d in (f.file or "").split("/")[:-1])
            text = context(f.file or "", f.line or 0) if context is not None and built else None
            if text is not None:
                around[i] = _same_code(text)
                keys.append(("context", around[i]))
            for key in keys:
                j = first_by.setdefault(key, i)
                if find(j) != find(i):
                    parent[find(i)] = find(j)
    clusters: dict[int, list[int]] = defaultdict(list)
    for i in range(len(items)):
        clusters[find(i)].append(i)
    out: list[Finding] = []
    for members in clusters.values():
        members.sort(key=lambda i: _copy_rank(items[i]))
        head_file = items[members[0]].file
        # several sites in the representative's file are distinct defects; a copy joins the site whose surrounding
        # lines it shares, the one in the same position in its file when several do
        heads = sorted((i for i in members if items[i].file == head_file), key=lambda i: items[i].line or 0)
        copies: dict[int, list[str]] = {h: [] for h in heads}
        in_file: dict[str | None, list[int]] = defaultdict(list)
        for i in sorted(members, key=lambda i: items[i].line or 0):
            if i not in copies:
                in_file[items[i].file].append(i)
        for same_file in in_file.values():
            for k, i in enumerate(same_file):
                fits = [h for h in heads if i in around and around.get(h) == around[i]] or heads
                home = heads[k] if k < len(heads) and heads[k] in fits else fits[0]
                copies[home].append(f"{items[i].file}:{items[i].line}")
        out.extend(replace(items[h], also_at=tuple(dict.fromkeys([*items[h].also_at, *sorted(copies[h])])))
                   if copies[h] else items[h] for h in heads)
    return out


def order(findings: Iterable[Finding]) -> list[Finding]:
    """Priority, check, verdict (confirmed, suspected, not-implemented), file, line."""
    verdict_rank = {Verdict.CONFIRMED: 0, Verdict.SUSPECTED: 1, Verdict.NOT_IMPLEMENTED: 2}
    return sorted(findings, key=lambda f: (CHECKS[f.check].priority, f.check.number, verdict_rank[f.verdict],
                                            f.file or "", f.line or 0, f.source))


def _unique_fingerprints(findings: list[Finding], context: ContextReader | None) -> list[Finding]:
    """Suffix fingerprints that repeat (the same code quoted twice in a file by one rule) by content, not order.

    Copies are numbered in the order of the lines around them (then of their line), so the numbers do not move
    when lines are inserted elsewhere or when findings arrive in another order; a baseline keeps matching.
    """
    groups: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(findings):
        groups[f.fingerprint].append(i)
    out = list(findings)
    for members in groups.values():
        if len(members) < 2:
            continue

        def around(i: int) -> tuple[str, int]:
            f = findings[i]
            text = context(f.file, f.line) if context is not None and f.file and f.line else None
            return (" ".join((text or "").split()), f.line or 0)

        for n, i in enumerate(sorted(members, key=around), 1):
            if n > 1:
                out[i] = replace(findings[i], fingerprint=f"{findings[i].fingerprint}-{n}")
    return out


def apply_suppressions(findings: list[Finding], window: WindowReader | None,
                       ) -> tuple[list[Finding], list[Suppressed], list[str]]:
    """Split off the findings an inline marker suppresses; also say which markers were refused and why."""
    kept: list[Finding] = []
    suppressed: list[Suppressed] = []
    problems: list[str] = []
    for f in findings:
        win = window(f.file, f.line - LOOK_ABOVE, f.line) if window is not None and f.file and f.line else None
        if win is None:
            kept.append(f)
            continue
        verdict = decide(f, list(win.lines), win.first)
        if verdict.marker is not None:
            suppressed.append(Suppressed(finding=f, reason=verdict.marker.reason, marker_line=verdict.marker.line))
            continue
        kept.append(f)
        if verdict.problem and verdict.problem not in problems:
            problems.append(verdict.problem)
    return kept, suppressed, problems


def withhold(findings: list[Finding], min_precision: Tier) -> tuple[list[Finding], list[Withheld]]:
    """Split off the findings of static rules whose measured precision is below `min_precision`."""
    kept: list[Finding] = []
    withheld: list[Withheld] = []
    for f in findings:
        record = withholds(f.source, min_precision)
        if record is None:
            kept.append(f)
        else:
            withheld.append(Withheld(finding=f, precision=record))
    return kept, withheld


def snippets(findings: Iterable[Finding], window: WindowReader | None) -> dict[str, Snippet]:
    """The lines around each located finding, for renderers (a few lines of code, not one), comments dropped."""
    out: dict[str, Snippet] = {}
    if window is None:
        return out
    for f in findings:
        if f.file and f.line:
            win = window(f.file, f.line - SNIPPET_RADIUS, f.line + SNIPPET_RADIUS)
            if win is None or not win.lines:
                continue
            quoted = " ".join(f.evidence.split())
            # a line is shown whole only where the gate-checked quote holds it whole; comments elsewhere are text
            # of the audited code, which may be written to steer a reader, so the other lines show their code
            lines = tuple(line if line.strip() and " ".join(line.split()) in quoted else code_part(line).rstrip()
                          for line in win.lines)
            out[f.fingerprint] = Snippet(first=win.first, lines=lines)
    return out


def same_site(findings: Sequence[Finding]) -> dict[str, tuple[str, ...]]:
    """Findings of different checks at provably the same site, shown as one: the first in report order stands.

    The same site is the same file and line, or the same file with the same quoted excerpt starting within the
    excerpt's own lines (two checks quoting one statement). Findings of one check are never folded here; the
    static engine already reports one finding per root cause with `also_at`.
    """
    head_of: dict[tuple[str, int], int] = {}
    by_excerpt: dict[tuple[str, str], list[int]] = defaultdict(list)
    out: dict[str, list[str]] = defaultdict(list)
    for i, f in enumerate(findings):
        if not f.located or f.file is None or f.line is None:
            continue
        excerpt = " ".join(f.evidence.split())
        span = max(1, len([x for x in f.evidence.splitlines() if x.strip()]))
        head = head_of.get((f.file, f.line))
        if head is None:
            head = next((j for j in by_excerpt.get((f.file, excerpt), ())
                         if abs((findings[j].line or 0) - f.line) < span), None)
        if head is not None and findings[head].check != f.check and f.check not in {
                findings[k].check for k in range(len(findings)) if findings[k].fingerprint in out[findings[head].fingerprint]}:
            out[findings[head].fingerprint].append(f.fingerprint)
            continue
        head_of.setdefault((f.file, f.line), i)
        by_excerpt[(f.file, excerpt)].append(i)
    return {k: tuple(v) for k, v in out.items() if v}


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
    context: ContextReader | None = None,
    leads: Iterable[LeadOutcome] = (),
    window: WindowReader | None = None,
    suppressions: bool = True,
    min_precision: str = "low",
    dismissed_landmarks: Iterable[DismissedLandmark] = (),
) -> Report:
    """Assemble the final report from gated data.

    `context` (the audited files' lines) lets build copies fold and numbers repeated fingerprints by content;
    `window` reads the lines around each finding for inline suppressions and code snippets; `suppressions=False`
    ignores inline markers (`--no-suppressions`); findings of rules below `min_precision` are withheld after the
    markers are applied (a marker's reason outranks a rule's record). Every report passes here, so this is where credential-looking
    text is masked, once, after the gate has matched the real text (`redaction.mask_value`).
    """
    outs = sorted(outcomes, key=lambda o: o.check.number)
    leads = tuple(leads)
    final = _unique_fingerprints(order(fold_build_copies(dedupe(link_leads(findings, leads)), context)), context)
    suppressed: list[Suppressed] = []
    problems: list[str] = []
    if suppressions:
        final, suppressed, problems = apply_suppressions(final, window)
    final, withheld = withhold(final, Tier(min_precision))
    lms = sorted(set(landmarks), key=lambda m: (_KIND_ORDER[m.kind], m.file, m.line, m.symbol or ""))
    gone = sorted(dismissed_landmarks, key=lambda d: (_KIND_ORDER[d.landmark.kind], d.landmark.file, d.landmark.line))
    return mask_value(Report(
        meta=meta, findings=tuple(final), outcomes=tuple(outs), refusals=tuple(refusals), landmarks=tuple(lms),
        dismissed_landmarks=tuple(gone), groups=tuple(summarise(final, outs)), skipped_files=tuple(sorted(skipped_files, key=lambda f: f.path)),
        unparsed_files=tuple(sorted(unparsed_files, key=lambda f: f.path)),
        recon_usage=recon_usage, analysis=analysis, analysis_usage=analysis_usage,
        leads=tuple(sorted(leads, key=_lead_order)),
        suppressed=tuple(suppressed), suppression_problems=tuple(problems), suppressions_applied=suppressions,
        withheld=tuple(withheld), min_precision=min_precision,
        snippets=snippets([*final, *(x.finding for x in (*suppressed, *withheld))], window), same_site=same_site(final),
    ))


def _lead_order(lead: LeadOutcome) -> tuple[int, int]:
    number = lead.lead_id.rpartition("-")[2]
    return lead.check.number, int(number) if number.isdigit() else 0
