"""The evidence gate: the single door into a report, used by every engine.

`validate` turns a `Candidate` into a `Finding` or a `Refusal`; `validate_landmark` does the
same for landmarks. The refusal reasons are tested in the order of `RefusalReason`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection
from dataclasses import dataclass, replace

from harness_audit.findings import MIN_CODE_CHARS as _MIN_CODE_CHARS
from harness_audit.findings import (
    Candidate,
    CheckId,
    Finding,
    Landmark,
    LandmarkCandidate,
    LandmarkKind,
    Refusal,
    RefusalReason,
    Verdict,
    evidence_is_thin,
    fingerprint,
    normalise_lines,
    split_lines,
)
from harness_audit.workspace import LineWindow, Workspace

WINDOW = 3
"""The excerpt must match within this many lines of the cited line."""

_MIN_HINT_WORDS = 3
_SYMBOL = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$<>][\w$<>]*){0,8}")


@dataclass(frozen=True, slots=True, kw_only=True)
class GateContext:
    """What the gate needs to know about the run and the submitter."""

    workspace: Workspace
    """The audited tree."""
    checks_in_run: Collection[CheckId]
    """Checks selected for this run."""
    assigned: CheckId | None = None
    """The one check a subagent was given; None for a static engine that may report any check in the run."""
    recon: bool = False
    """True for a recon submitter, which may report no finding at all."""


def _refuse(reason: RefusalReason, c: Candidate | LandmarkCandidate, message: str) -> Refusal:
    if isinstance(c, Candidate):
        return Refusal(reason=reason, subject="finding", check=str(c.check), source=c.source, file=c.file,
                       line=c.line, message=message)
    return Refusal(reason=reason, subject="landmark", check=None, source=c.source, file=c.file, line=c.line,
                   message=message)


@dataclass(frozen=True, slots=True)
class _Norm:
    text: str
    starts: list[int]
    """Char offset where each kept line starts in `text`."""
    numbers: list[int]
    """Original 1-based line number of each kept line."""


_norm_cache: dict[tuple[str, str], _Norm] = {}


def _normalised_file(ws: Workspace, rel: str, lines: list[str]) -> _Norm:
    # content-addressed, so a changed file or another workspace can never hit a stale entry
    key = (rel, ws.sha256(rel) or "")
    hit = _norm_cache.get(key)
    if hit is not None:
        return hit
    kept: list[str] = []
    starts: list[int] = []
    numbers: list[int] = []
    offset = 0
    for number, raw in enumerate(lines, start=1):
        line = " ".join(raw.split())
        if not line:
            continue
        kept.append(line)
        starts.append(offset)
        numbers.append(number)
        offset += len(line) + 1
    norm = _Norm("\n".join(kept), starts, numbers)
    if len(_norm_cache) > 4096:
        _norm_cache.clear()
    _norm_cache[key] = norm
    return norm


def _occurrences(norm: _Norm, needle: str) -> list[tuple[int, int]]:
    """(first line, last line) of every occurrence of `needle` in the normalised file."""
    found: list[tuple[int, int]] = []
    start = norm.text.find(needle)
    while start != -1:
        first = bisect.bisect_right(norm.starts, start) - 1
        last = bisect.bisect_right(norm.starts, start + len(needle) - 1) - 1
        found.append((norm.numbers[first], norm.numbers[last]))
        start = norm.text.find(needle, start + 1)
    return found


def _locate(
    c: Candidate | LandmarkCandidate, ws: Workspace, line: int | None
) -> tuple[str, list[str] | LineWindow, int] | Refusal:
    """Rules 5–8: the file exists, is inside, is in scope, and the line is in it."""
    if c.file is None or not str(c.file).strip():
        return _refuse(RefusalReason.FILE_NOT_FOUND, c, "a located finding needs `file`; give the workspace-relative path")
    resolved = ws.resolve(str(c.file))
    if resolved.status == "not-found":
        return _refuse(RefusalReason.FILE_NOT_FOUND, c,
                       f"no readable file at {c.file!r}; cite a workspace-relative path that exists (list or glob first)")
    if resolved.status == "outside":
        return _refuse(RefusalReason.FILE_OUTSIDE_WORKSPACE, c,
                       f"{c.file!r} resolves outside the audited root (after symlinks); only first-party files count")
    if resolved.status == "excluded":
        return _refuse(RefusalReason.OUT_OF_SCOPE_PATH, c,
                       f"{resolved.path!r} is under excluded directory {resolved.detail!r}; audit first-party code only")
    if resolved.status == "credential":
        # refused before its text is read: an accept/refuse answer must not tell a model what the file holds
        return _refuse(RefusalReason.OUT_OF_SCOPE_PATH, c,
                       f"{c.file!r} may hold credentials and is never cited; cite the code that loads the setting")
    rel = resolved.path
    assert rel is not None
    if getattr(c, "language", None) == "trace":
        return _locate_window(c, ws, rel, line)
    lines = ws.lines(rel)
    if lines is None:
        return _refuse(RefusalReason.FILE_NOT_FOUND, c, f"{rel!r} cannot be read as UTF-8 text")
    if line is None or line < 1 or line > len(lines):
        return _refuse(RefusalReason.LINE_OUT_OF_RANGE, c,
                       f"line {line} is not in {rel!r}, which has {len(lines)} lines; re-read the file and cite a real line")
    return rel, lines, line


def _locate_window(c: Candidate | LandmarkCandidate, ws: Workspace, rel: str, line: int | None,
                   ) -> tuple[str, LineWindow, int] | Refusal:
    """Rule 8 for a trace (of any size): only the cited line's window is read, never the whole file."""
    if line is None or line < 1:
        return _refuse(RefusalReason.LINE_OUT_OF_RANGE, c, f"line {line} is not in {rel!r}; cite the record's line")
    window = ws.line_window(rel, line - WINDOW, line + WINDOW)
    if window is None:
        return _refuse(RefusalReason.FILE_NOT_FOUND, c, f"{rel!r} cannot be read as UTF-8 text")
    if line > window.total:
        return _refuse(RefusalReason.LINE_OUT_OF_RANGE, c,
                       f"line {line} is not in {rel!r}, which has {window.total} lines; cite the record's line")
    return rel, window, line


def _near_occurrences(lines: list[str], needle: str, count: int, line: int) -> list[tuple[int, int]]:
    """The occurrences of `needle` (`count` normalised lines) that reach within ±WINDOW of `line`.

    Exactly those `_occurrences` finds in the whole normalised file, without normalising the whole file: an
    occurrence near `line` spans `count` consecutive kept lines, at least one of them inside the window, so it
    lies within the window's kept lines plus `count - 1` kept lines on each side.
    """
    low, high = max(line - WINDOW, 1), min(line + WINDOW, len(lines))
    before: list[int] = []
    number = low - 1
    while number >= 1 and len(before) < count - 1:
        if lines[number - 1].strip():  # a line the normalisation keeps
            before.append(number)
        number -= 1
    after: list[int] = []
    number = high + 1
    while number <= len(lines) and len(after) < count - 1:
        if lines[number - 1].strip():
            after.append(number)
        number += 1
    first = before[-1] if before else low
    last = after[-1] if after else high
    window = _window_norm(LineWindow(first=first, lines=tuple(lines[first - 1:last]), total=len(lines)))
    return [(a, b) for a, b in _occurrences(window, needle) if a - WINDOW <= line and b + WINDOW >= line]


def _window_norm(window: LineWindow) -> _Norm:
    kept: list[str] = []
    starts: list[int] = []
    numbers: list[int] = []
    offset = 0
    for number, raw in enumerate(window.lines, start=window.first):
        text = " ".join(raw.split())
        if not text:
            continue
        kept.append(text)
        starts.append(offset)
        numbers.append(number)
        offset += len(text) + 1
    return _Norm("\n".join(kept), starts, numbers)


def _match_evidence(
    c: Candidate | LandmarkCandidate, ws: Workspace, rel: str, lines: list[str] | LineWindow, line: int
) -> int | Refusal:
    """Rules 9–10: the excerpt is in the window (returns the matched line) and is not thin."""
    excerpt = normalise_lines(c.evidence)
    if not excerpt:
        return _refuse(RefusalReason.EVIDENCE_TOO_THIN, c, "the excerpt is empty; quote the line(s) of code you cite")
    if isinstance(lines, LineWindow):
        # a trace: only the ±WINDOW lines were read, so "elsewhere in the file" cannot be named
        hits = _occurrences(_window_norm(lines), "\n".join(excerpt))
        near = [first for first, last in hits if first - WINDOW <= line and last + WINDOW >= line]
        if not near:
            return _refuse(RefusalReason.EVIDENCE_NOT_FOUND, c,
                           f"the excerpt does not occur within ±{WINDOW} lines of {rel}:{line}; quote the record's "
                           "own line")
        if evidence_is_thin(excerpt):
            return _refuse(RefusalReason.EVIDENCE_TOO_THIN, c,
                           "the excerpt is only punctuation, a keyword or a name; quote a line of real content "
                           f"(at least {_MIN_CODE_CHARS} characters)")
        return min(near, key=lambda first: (abs(first - line), first))
    needle = "\n".join(excerpt)
    near = _near_occurrences(lines, needle, len(excerpt), line)
    if not near:
        hits = _occurrences(_normalised_file(ws, rel, lines), needle)
        if hits:
            where = ", ".join(str(first) for first, _ in hits[:5])
            msg = (f"the excerpt is not within ±{WINDOW} lines of {rel}:{line}; it occurs at line(s) {where}: "
                   "cite the line where it actually is")
        else:
            msg = f"the excerpt does not occur in {rel}; copy it from the file instead of paraphrasing"
        return _refuse(RefusalReason.EVIDENCE_NOT_FOUND, c, msg)
    first, last = min(near, key=lambda span: (abs(span[0] - line), span[0]))
    # the quote and the file lines it came from must both be code: a quote cut out of a comment is not evidence
    if evidence_is_thin(excerpt) or evidence_is_thin(lines[first - 1:last]):
        return _refuse(RefusalReason.EVIDENCE_TOO_THIN, c,
                       "the excerpt is only punctuation, a keyword, a name or a comment; quote a line of real code "
                       f"(a call, an assignment or a condition, at least {_MIN_CODE_CHARS} characters)")
    # the cited line inside the quote is the defect's own line (a quote may start at its statement or a comment)
    return line if first <= line <= last else first


_NUMBERED = re.compile(r"^\s*(\d{1,7})(?:\t| ?[|│:] ?)")
"""A line-number column as `read_file` shows it (`  27\tcode`) or as editors copy it (`27 | code`, `27: code`)."""


def without_line_numbers(text: str) -> str | None:
    """`text` without a leading line-number column on every line, or None when it has none.

    A model often copies `read_file`'s numbered lines as they are. The column is dropped only when every
    non-blank line has one and the numbers increase, so code that merely starts with a number stays as it is.
    """
    out: list[str] = []
    numbers: list[int] = []
    for row in split_lines(text):
        if not row.strip():
            out.append("")
            continue
        m = _NUMBERED.match(row)
        if m is None:
            return None
        numbers.append(int(m.group(1)))
        out.append(row[m.end():])
    if not numbers or any(b <= a for a, b in zip(numbers, numbers[1:], strict=False)):
        return None
    return "\n".join(out)


def _match_quoted(c: Candidate | LandmarkCandidate, ws: Workspace, rel: str, lines: list[str] | LineWindow,
                  line: int) -> tuple[int | Refusal, str]:
    """`_match_evidence`, then again without a copied line-number column; returns the matched line (or the
    refusal) and the excerpt as it matched."""
    matched = _match_evidence(c, ws, rel, lines, line)
    if not isinstance(matched, Refusal) or matched.reason is not RefusalReason.EVIDENCE_NOT_FOUND:
        return matched, c.evidence
    bare = without_line_numbers(c.evidence)
    if bare is None:
        return matched, c.evidence
    again = _match_evidence(replace(c, evidence=bare), ws, rel, lines, line)
    if isinstance(again, Refusal) and again.reason is RefusalReason.EVIDENCE_NOT_FOUND:
        why = again.message.split("; ", 1)
        return replace(again, message=f"{why[0]} (after dropping the line-number column the excerpt was copied "
                                      f"with); {why[1] if len(why) > 1 else 'copy the code lines only'}"), bare
    return again, bare


def validate(c: Candidate, ctx: GateContext) -> Finding | Refusal:
    """Gate one candidate. Returns the `Finding` to keep or the first `Refusal` that applies."""
    raw_check = str(c.check).strip().upper()
    check = CheckId(raw_check) if raw_check in CheckId.__members__ else None
    if check is None or check not in ctx.checks_in_run:
        return _refuse(RefusalReason.CHECK_NOT_IN_RUN, c,
                       f"check {str(c.check)!r} is not part of this run ({', '.join(ctx.checks_in_run)})")
    if ctx.recon or (ctx.assigned is not None and check != ctx.assigned):
        given = "no check (recon reports landmarks only)" if ctx.recon else str(ctx.assigned)
        return _refuse(RefusalReason.CHECK_NOT_ASSIGNED, c, f"you were assigned {given}; report only that")
    if c.verdict not in Verdict.__members__.values():
        return _refuse(RefusalReason.BAD_VERDICT, c,
                       f"verdict {str(c.verdict)!r} is not one of confirmed, suspected, not-implemented")
    verdict = Verdict(c.verdict)
    if verdict is Verdict.SUSPECTED and len(c.confirm_hint.split()) < _MIN_HINT_WORDS:
        return _refuse(RefusalReason.MISSING_CONFIRM_HINT, c,
                       "a suspected finding must say exactly what a human has to verify (`confirm_hint`)")
    if verdict is Verdict.NOT_IMPLEMENTED and c.file is None and c.line is None:
        if evidence_is_thin(normalise_lines(c.evidence)) and len(c.evidence.split()) < _MIN_HINT_WORDS:
            return _refuse(RefusalReason.EVIDENCE_TOO_THIN, c,
                           "a check-level not-implemented verdict must say what was looked for and where")
        return Finding(
            check=check, verdict=verdict, file=None, line=None, cited_line=None, evidence=c.evidence.strip(),
            claim=c.claim, consequence=c.consequence, direction=c.direction, confirm_hint=c.confirm_hint,
            source=c.source, language=c.language, file_sha256=None,
            fingerprint=fingerprint(check, None, c.source, c.claim),
        )
    located = _locate(c, ctx.workspace, c.line)
    if isinstance(located, Refusal):
        return located
    rel, lines, line = located
    matched, evidence = _match_quoted(c, ctx.workspace, rel, lines, line)
    if isinstance(matched, Refusal):
        return matched
    return Finding(
        check=check, verdict=verdict, file=rel, line=matched, cited_line=line, evidence=evidence.strip("\n"),
        claim=c.claim, consequence=c.consequence, direction=c.direction, confirm_hint=c.confirm_hint,
        source=c.source, language=c.language, file_sha256=ctx.workspace.sha256(rel),
        fingerprint=fingerprint(check, rel, c.source, evidence), also_at=_sites(c.also_at, ctx.workspace),
    )


def _sites(sites: tuple[str, ...], ws: Workspace) -> tuple[str, ...]:
    """The `file:line` entries that name a line of a first-party file, canonicalised."""
    kept: list[str] = []
    for site in sites:
        file, _, num = site.rpartition(":")
        resolved = ws.resolve(file) if file and num.isdigit() else None
        if resolved is None or resolved.status != "ok" or resolved.path is None:
            continue
        lines = ws.lines(resolved.path)
        if lines is not None and 0 < int(num) <= len(lines):
            kept.append(f"{resolved.path}:{int(num)}")
    return tuple(dict.fromkeys(kept))


def validate_landmark(c: LandmarkCandidate, ctx: GateContext) -> Landmark | Refusal:
    """Gate one landmark: a real kind, a real first-party file and line, and the excerpt if one is given."""
    if c.kind not in LandmarkKind.__members__.values():
        return _refuse(RefusalReason.BAD_VERDICT, c,
                       f"landmark kind {str(c.kind)!r} is not one of {', '.join(k.value for k in LandmarkKind)}")
    located = _locate(c, ctx.workspace, c.line)
    if isinstance(located, Refusal):
        return located
    rel, lines, line = located
    if c.evidence.strip():
        matched, _ = _match_quoted(c, ctx.workspace, rel, lines, line)
        if isinstance(matched, Refusal):
            return matched
        line = matched
    # the symbol is shown to other subagents and in reports: only a (dotted) identifier is kept, never free text
    symbol = c.symbol if c.symbol and _SYMBOL.fullmatch(c.symbol) else None
    return Landmark(kind=LandmarkKind(c.kind), file=rel, line=line, symbol=symbol, confidence=c.confidence,
                    source=c.source, language=c.language)
