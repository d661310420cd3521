"""The deterministic engine: parse each file once, run recon and the rules of the selected checks."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from harness_audit.findings import Candidate, CheckId, LandmarkCandidate
from harness_audit.static.lang.python import PyModule, PyProject
from harness_audit.static.recon import find_landmarks
from harness_audit.static.registry import Hit, Rule, rules_for
from harness_audit.workspace import SourceFile, Workspace

__all__ = ["ParsedProject", "StaticResult", "UnparsedFile", "hit_to_candidate", "parse_python", "run_rules"]


@dataclass(frozen=True, slots=True)
class UnparsedFile:
    """A file that could not be parsed; the audit goes on without it."""

    path: str
    """Canonical relative path."""
    reason: str
    """The parser's message, with the line."""


@dataclass(frozen=True, slots=True)
class ParsedProject:
    """The Python side of a workspace, parsed."""

    project: PyProject
    """Parsed modules."""
    unparsed: tuple[UnparsedFile, ...]
    """Files with syntax errors."""


@dataclass(slots=True)
class StaticResult:
    """What the static engine proposes, before the gate."""

    landmarks: list[LandmarkCandidate] = field(default_factory=list[LandmarkCandidate])
    """Landmark candidates from recon."""
    candidates: dict[CheckId, list[Candidate]] = field(default_factory=dict[CheckId, "list[Candidate]"])
    """Finding candidates per check."""
    errors: dict[CheckId, str] = field(default_factory=dict[CheckId, str])
    """Checks whose rules crashed, with one line saying where."""


@contextmanager
def no_gc_pauses() -> Iterator[None]:
    """Suspend the cyclic collector while millions of AST nodes are allocated and walked.

    Parsing allocates no garbage cycles worth collecting mid-run, and the collector's repeated
    full passes over a large heap more than double the parse time; it is restored afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_python(ws: Workspace, files: Iterable[SourceFile]) -> ParsedProject:
    """Parse every Python file once. A file that does not parse is listed, never fatal."""
    modules: dict[str, PyModule] = {}
    unparsed: list[UnparsedFile] = []
    for f in files:
        if f.language != "python":
            continue
        text = ws.text(f.path)
        if text is None:
            unparsed.append(UnparsedFile(f.path, "not readable as UTF-8 text"))
            continue
        try:
            modules[f.path] = PyModule.parse(f.path, text)
        except SyntaxError as exc:
            unparsed.append(UnparsedFile(f.path, f"syntax error at line {exc.lineno}: {exc.msg}"))
        except (ValueError, RecursionError, MemoryError) as exc:
            # isolation boundary of the parser: one hostile file never stops the audit
            unparsed.append(UnparsedFile(f.path, f"{type(exc).__name__}: {exc}"))
    return ParsedProject(PyProject(modules), tuple(unparsed))


def recon(parsed: ParsedProject) -> list[LandmarkCandidate]:
    """Static landmark candidates, deduplicated on (kind, file, line)."""
    seen: set[tuple[str, str, int]] = set()
    out: list[LandmarkCandidate] = []
    for lm in find_landmarks(parsed.project):
        key = (str(lm.kind), lm.file, lm.line)
        if key not in seen:
            seen.add(key)
            out.append(lm)
    return out


def hit_to_candidate(rule: Rule, mod: PyModule, hit: Hit) -> Candidate:
    """Turn a rule's `Hit` into a gate-ready `Candidate` quoting the cited source."""
    where = hit.module or mod
    if hit.node is not None:
        line = getattr(hit.node, "lineno", 1)
        end = getattr(hit.node, "end_lineno", None)
    else:
        line, end = hit.line or 1, None
    evidence = hit.evidence if hit.evidence is not None else where.excerpt(line, end)
    return Candidate(
        check=rule.check, verdict=hit.verdict, file=where.path, line=line, evidence=evidence, claim=hit.claim,
        consequence=hit.consequence, direction=hit.direction, confirm_hint=hit.confirm_hint,
        source=f"static:{rule.rule_id}", language="python",
    )


def run_rules(parsed: ParsedProject, checks: Iterable[CheckId]) -> StaticResult:
    """Run every Python rule of `checks` over every module."""
    result = StaticResult()
    for check in checks:
        result.candidates.setdefault(check, [])
    for rule in rules_for(result.candidates, "python"):
        bucket = result.candidates[rule.check]
        for mod in parsed.project.modules.values():
            try:
                bucket.extend(hit_to_candidate(rule, mod, hit) for hit in rule.func(mod, parsed.project))
            except Exception as exc:  # noqa: BLE001  # isolation boundary of a check unit: record, go on
                result.errors.setdefault(rule.check, f"{rule.rule_id} crashed on {mod.path}: "
                                                     f"{type(exc).__name__}: {exc}")
    return result
