"""Value types shared by every engine: candidates, gated findings, refusals, landmarks, outcomes.

Engines can only build a `Candidate` (or a `LandmarkCandidate`). A `Finding` is made
by `gate.validate` alone; aggregation and rendering accept only `Finding`s, so
"nothing reaches a report without passing the gate" holds by construction.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Literal

Confidence = Literal["high", "medium", "low"]
Language = Literal["python", "typescript", "javascript", "trace"]


class CheckId(StrEnum):
    """The fifteen check ids, spelled as users and machines see them."""

    C1 = "C1"
    C2 = "C2"
    C3 = "C3"
    C4 = "C4"
    C5 = "C5"
    C6 = "C6"
    C7 = "C7"
    C8 = "C8"
    C9 = "C9"
    C10 = "C10"
    C11 = "C11"
    C12 = "C12"
    C13 = "C13"
    C14 = "C14"
    C15 = "C15"

    @property
    def number(self) -> int:
        """The check's number, 1–15."""
        return int(self.value[1:])


class Verdict(StrEnum):
    """How certain a finding is."""

    CONFIRMED = "confirmed"
    SUSPECTED = "suspected"
    NOT_IMPLEMENTED = "not-implemented"

    @property
    def certainty(self) -> int:
        """Rank used by dedupe: the LEAST certain verdict of duplicates wins."""
        return {Verdict.SUSPECTED: 0, Verdict.NOT_IMPLEMENTED: 1, Verdict.CONFIRMED: 2}[self]


class LandmarkKind(StrEnum):
    """The eleven landmark kinds recon locates."""

    AGENT_LOOP = "agent-loop"
    REQUEST_ASSEMBLY = "request-assembly"
    SYSTEM_PROMPT_BUILD = "system-prompt-build"
    TOOL_REGISTRY = "tool-registry"
    TOOL_EXECUTION = "tool-execution"
    HISTORY_APPEND = "history-append"
    STREAM_PARSE = "stream-parse"
    RETRY = "retry"
    TRUNCATION = "truncation"
    PROCESS_SPAWN = "process-spawn"
    HTTP_CALL = "http-call"


class OutcomeStatus(StrEnum):
    """Closed set of check outcomes; everything but `ran` is listed under "Not covered"."""

    RAN = "ran"
    INCOMPLETE = "incomplete"
    NOT_COVERED = "not-covered"
    FAILED = "failed"
    CANCELLED = "cancelled"


class RefusalReason(StrEnum):
    """Why the gate refused a submission, in the order the gate tests them."""

    CHECK_NOT_IN_RUN = "check-not-in-run"
    CHECK_NOT_ASSIGNED = "check-not-assigned"
    BAD_VERDICT = "bad-verdict"
    MISSING_CONFIRM_HINT = "missing-confirm-hint"
    FILE_NOT_FOUND = "file-not-found"
    FILE_OUTSIDE_WORKSPACE = "file-outside-workspace"
    OUT_OF_SCOPE_PATH = "out-of-scope-path"
    LINE_OUT_OF_RANGE = "line-out-of-range"
    EVIDENCE_NOT_FOUND = "evidence-not-found"
    EVIDENCE_TOO_THIN = "evidence-too-thin"


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """A finding as an engine proposes it, before the gate has looked at it."""

    check: CheckId | str
    """The check it is reported against (a string when it came from a model and is not validated yet)."""
    verdict: Verdict | str
    """`confirmed`, `suspected` or `not-implemented` (a string until the gate validates it)."""
    file: str | None
    """The path as submitted; any spelling, the gate canonicalises it. None for a check-level verdict."""
    line: int | None
    """1-based line as submitted; None for a check-level verdict."""
    evidence: str
    """Excerpt quoted from the file (or, check-level, what was looked for and where)."""
    claim: str
    """One sentence: what is wrong."""
    consequence: str
    """What a user of the harness will see because of it."""
    direction: str = ""
    """How to fix it."""
    confirm_hint: str = ""
    """For `suspected`: exactly what a human must verify."""
    source: str
    """The rule or engine that produced it, e.g. `static:C1/except-continue-skips-result`."""
    language: Language | None = None
    """Source language of the cited file."""
    also_at: tuple[str, ...] = ()
    """`file:line` of the other places the same defect involves (the sink, the loop, the caller); the gate keeps
    those that name a first-party line."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """A candidate that passed the gate. Constructed only by `gate.validate`."""

    check: CheckId
    """The check."""
    verdict: Verdict
    """The verdict, never upgraded after the gate."""
    file: str | None
    """Canonical path relative to the audited root (POSIX, no `./`, no `..`)."""
    line: int | None
    """The line at which the evidence actually matched."""
    cited_line: int | None
    """The line the submitter cited (may differ from `line` by up to 3)."""
    evidence: str
    """The quoted excerpt."""
    claim: str
    """What is wrong."""
    consequence: str
    """What a user sees because of it."""
    direction: str
    """How to fix it."""
    confirm_hint: str
    """What a human must verify (suspected findings)."""
    source: str
    """The rule or engine that produced it."""
    language: Language | None
    """Source language of the cited file."""
    file_sha256: str | None
    """Hash of the cited file's bytes when the finding was gated."""
    fingerprint: str
    """Stable across unrelated edits: does not depend on the line number."""
    also_at: tuple[str, ...] = ()
    """`file:line` of the other places the same defect involves (the sink, the loop, the caller), and of the same
    code in other build outputs of one source (ESM/CJS, bundles, shipped `src/`), folded in by aggregation."""
    lead: str | None = None
    """The static lead (`C1-2`) this finding stands for in a run that handed out leads (hybrid, host): the lead
    it confirmed (named, or reported at the lead's place), or the lead itself when the model left it unaddressed.
    Set by aggregation from the run's lead outcomes; None when no lead is involved."""

    @property
    def located(self) -> bool:
        """Whether the finding points at a file and line (check-level verdicts do not)."""
        return self.file is not None and self.line is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class Refusal:
    """A submission the gate refused, with the reason and what to do about it."""

    reason: RefusalReason
    """The first rule of the gate that failed."""
    subject: Literal["finding", "landmark"]
    """What was refused."""
    check: str | None
    """The check it was reported against (as submitted); None for landmarks."""
    source: str
    """Who submitted it."""
    file: str | None
    """The path as submitted."""
    line: int | None
    """The line as submitted."""
    message: str
    """Why, and the remedy the submitter can act on."""


@dataclass(frozen=True, slots=True, kw_only=True)
class LandmarkCandidate:
    """A landmark as recon proposes it."""

    kind: LandmarkKind | str
    """One of the eleven kinds (a string until validated)."""
    file: str
    """The path as submitted."""
    line: int
    """1-based line."""
    symbol: str | None = None
    """Enclosing function or class, dotted."""
    confidence: Confidence = "medium"
    """How sure recon is."""
    evidence: str = ""
    """The source line it points at (checked like a finding's excerpt when given)."""
    source: str = "static"
    """Who found it."""
    language: Language | None = None
    """Source language."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Landmark:
    """A landmark that passed the gate."""

    kind: LandmarkKind
    """The kind."""
    file: str
    """Canonical relative path."""
    line: int
    """1-based line."""
    symbol: str | None
    """Enclosing symbol."""
    confidence: Confidence
    """How sure recon is."""
    source: str
    """Who found it."""
    language: Language | None
    """Source language."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token usage of one unit. `known=False` renders as "unknown", never as zero."""

    input_tokens: int = 0
    """Prompt tokens."""
    output_tokens: int = 0
    """Completion tokens."""
    cache_read_tokens: int = 0
    """Prompt tokens served from the provider's prefix cache."""
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's prefix cache."""
    reasoning_tokens: int = 0
    """Hidden reasoning tokens, where reported."""
    requests: int = 0
    """Model requests made."""
    known: bool = True
    """False when the provider reported no usage."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            requests=self.requests + other.requests,
            known=self.known and other.known,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckOutcome:
    """What happened to one check in one run."""

    check: CheckId
    """The check."""
    status: OutcomeStatus
    """Closed set; everything but `ran` is listed under "Not covered"."""
    failure_code: str | None = None
    """A `FailureCode` value when status is `failed`."""
    missing_landmarks: tuple[LandmarkKind, ...] = ()
    """Required landmark kinds recon did not find (status `not-covered`)."""
    usage: Usage = field(default_factory=Usage)
    """Tokens spent (zero, known, for the static engine)."""
    duration_s: float = 0.0
    """Wall time of the unit."""
    error: str | None = None
    """One line saying what went wrong, for failed or incomplete units."""

    @property
    def status_text(self) -> str:
        """`failed:<code>` for failures, the plain status otherwise."""
        if self.status is OutcomeStatus.FAILED and self.failure_code:
            return f"failed:{self.failure_code}"
        return self.status.value


def fingerprint(check: str, file: str | None, source: str, evidence: str) -> str:
    """A finding identity that survives unrelated edits: no line number in it."""
    norm = " ".join(evidence.split())
    digest = hashlib.sha256(f"{check}\0{file or ''}\0{source}\0{norm}".encode()).hexdigest()
    return digest[:20]


MIN_CODE_CHARS = 8
"""A quoted line must have at least this many non-space characters to count as code."""
_COMMENT_STARTS = ("#", "//", "/*", "* ", "*/", "<!--")
_CODE_MARK = re.compile(r"[()\[\]{}=<>+\-*/%:]|\w\s+\w")


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """Split like Python's tokenizer (only \\n, \\r\\n, \\r end a line), so line numbers match the AST.

    `str.splitlines` also breaks on form feeds and Unicode separators, which would shift every
    later line number of a file that contains one.
    """
    lines = _LINE_BREAK.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def normalise_lines(text: str) -> list[str]:
    """Trim each line, collapse whitespace runs, drop blank lines (how the gate compares excerpts)."""
    out: list[str] = []
    for raw in split_lines(text):
        line = " ".join(raw.split())
        if line:
            out.append(line)
    return out


def evidence_is_thin(excerpt_lines: list[str]) -> bool:
    """True when no quoted line carries real code (a call, an assignment, a condition; >= 8 characters)."""
    for raw in excerpt_lines:
        if raw.lstrip().startswith(_COMMENT_STARTS):
            continue  # a comment is text about code, and text in audited files may be written to mislead
        line = code_part(raw)
        compact = "".join(line.split())
        if len(compact) >= MIN_CODE_CHARS and _CODE_MARK.search(line):
            return False
    return True


def code_part(line: str) -> str:
    """`line` without a trailing `#` or `//` comment (quotes are respected; a URL's `//` is not a comment)."""
    quote = ""
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch == "#" or (ch == "/" and line.startswith("//", i) and (i == 0 or line[i - 1] != ":")):
            return line[:i]
        i += 1
    return line
