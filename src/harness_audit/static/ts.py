"""The TypeScript/JavaScript side of the static engine: parse once, recon, run the TS rules.

Rules registered with `lang="typescript"` run on every TS and JS module. tree-sitter recovers from
syntax errors, so a broken file is analysed as far as it parses and listed as partially parsed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from harness_audit.findings import Candidate, CheckId, LandmarkCandidate
from harness_audit.static.lang import TreeTooDeep
from harness_audit.static.lang.typescript import TsModule, TsProject
from harness_audit.static.registry import Hit, Rule, rules_for
from harness_audit.workspace import SourceFile, Workspace

TS_LANGUAGES = ("typescript", "javascript")


@dataclass(frozen=True, slots=True)
class TsNote:
    """A TS/JS file the engine could not fully use."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class TsParsed:
    """The TS/JS side of a workspace, parsed."""

    project: TsProject
    unparsed: tuple[TsNote, ...]
    """Files that could not be read at all."""
    partial: tuple[TsNote, ...]
    """Files tree-sitter parsed with recovered syntax errors (still analysed)."""


def parse_typescript(ws: Workspace, files: Iterable[SourceFile]) -> TsParsed:
    """Parse every TS/JS file once; unreadable files are listed, broken ones parsed as far as possible."""
    modules: dict[str, TsModule] = {}
    unparsed: list[TsNote] = []
    partial: list[TsNote] = []
    for f in files:
        if f.language not in TS_LANGUAGES:
            continue
        text = ws.text(f.path)
        if text is None:
            unparsed.append(TsNote(f.path, "not readable as UTF-8 text"))
            continue
        try:
            mod = TsModule.parse(f.path, text)
        except TreeTooDeep as exc:
            unparsed.append(TsNote(f.path, str(exc)))
            continue
        except (ValueError, RecursionError, MemoryError) as exc:  # isolation boundary of the parser
            unparsed.append(TsNote(f.path, f"{type(exc).__name__}: {exc}"))
            continue
        modules[f.path] = mod
        if mod.partial:
            partial.append(TsNote(f.path, f"partially parsed: syntax error near line {mod.first_error_line() or '?'}"))
    return TsParsed(TsProject(modules), tuple(unparsed), tuple(partial))


def ts_recon(parsed: TsParsed) -> list[LandmarkCandidate]:
    """Static landmark candidates of the TS/JS modules, deduplicated on (kind, file, line)."""
    from harness_audit.static.recon_ts import find_ts_landmarks

    seen: set[tuple[str, str, int]] = set()
    out: list[LandmarkCandidate] = []
    for lm in find_ts_landmarks(parsed.project):
        key = (str(lm.kind), lm.file, lm.line)
        if key not in seen:
            seen.add(key)
            out.append(lm)
    return out


def ts_hit_to_candidate(rule: Rule, mod: TsModule, hit: Hit) -> Candidate:
    """A TS rule's `Hit` as a gate-ready `Candidate` quoting the cited source."""
    where = hit.module if isinstance(hit.module, TsModule) else mod
    if hit.node is not None and not hasattr(hit.node, "lineno"):
        node = hit.node
        line, end = where.line(node), where.end_line(node)  # type: ignore[arg-type]
    else:
        line, end = hit.line or 1, None
    evidence = hit.evidence if hit.evidence is not None else where.excerpt(line, min(end or line, line + 2))
    return Candidate(
        check=rule.check, verdict=hit.verdict, file=where.path, line=line, evidence=evidence, claim=hit.claim,
        consequence=hit.consequence, direction=hit.direction, confirm_hint=hit.confirm_hint,
        source=f"static:{rule.rule_id}", language=where.language,
    )


def run_ts_rules(parsed: TsParsed, checks: Iterable[CheckId]) -> tuple[dict[CheckId, list[Candidate]], dict[CheckId, str]]:
    """Every TS rule of `checks` over every TS/JS module: candidates per check, and crashed checks."""
    wanted = list(checks)
    candidates: dict[CheckId, list[Candidate]] = {c: [] for c in wanted}
    errors: dict[CheckId, str] = {}
    for rule in rules_for(wanted, "typescript"):
        bucket = candidates[rule.check]
        for mod in parsed.project.modules.values():
            try:
                bucket.extend(ts_hit_to_candidate(rule, mod, hit) for hit in rule.func(mod, parsed.project))
            except Exception as exc:  # noqa: BLE001  # isolation boundary of a check unit: record, go on
                errors.setdefault(rule.check, f"{rule.rule_id} crashed on {mod.path}: {type(exc).__name__}: {exc}")
    return candidates, errors
