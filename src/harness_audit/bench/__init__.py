"""Benchmark: score an engine (or the semgrep baseline) against a corpus with an out-of-band answer key.

The corpus is a directory of projects plus `answers.json` (or several `answers*.json`) beside
them, outside the source any engine reads. Each defect names its project, check, file, line
window and verdict; each control names a window and the checks that must stay silent there.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import subprocess
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness_audit.errors import UsageError
from harness_audit.findings import CheckId, OutcomeStatus, Verdict


class Defect(BaseModel):
    """A planted defect."""

    model_config = ConfigDict(extra="allow")
    project: str
    check: CheckId
    file: str | None = None
    lines: tuple[int, int] | None = None
    verdict: Verdict = Verdict.CONFIRMED
    note: str = ""


class Control(BaseModel):
    """Correct code that must stay silent for `checks`."""

    model_config = ConfigDict(extra="allow")
    project: str
    file: str
    lines: tuple[int, int]
    checks: list[CheckId]
    note: str = ""


class AnswerKey(BaseModel):
    """The whole answer key of a corpus."""

    defects: list[Defect] = Field(default_factory=list[Defect])
    controls: list[Control] = Field(default_factory=list[Control])

    @property
    def projects(self) -> list[str]:
        """Projects named by the key, sorted."""
        return sorted({d.project for d in self.defects} | {c.project for c in self.controls})


@dataclass(frozen=True, slots=True)
class Hit:
    """One reported finding, reduced to what scoring needs."""

    project: str
    check: CheckId
    file: str | None
    line: int | None
    verdict: Verdict
    source: str


@dataclass(slots=True)
class EngineRun:
    """What one engine reported over the whole corpus."""

    name: str
    hits: list[Hit] = field(default_factory=list[Hit])
    not_covered: set[tuple[str, CheckId]] = field(default_factory=set[tuple[str, CheckId]])
    refusals: int = 0
    seconds: float = 0.0
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class CheckScore:
    """Detection and false positives of one check."""

    check: CheckId
    defects: int
    detected: int
    verdict_mismatches: int
    control_windows: int
    false_positives: int


@dataclass(frozen=True, slots=True)
class Score:
    """An engine's score on a corpus."""

    engine: str
    per_check: tuple[CheckScore, ...]
    missed: tuple[Defect, ...]
    found: tuple[tuple[Defect, tuple[str, ...]], ...]
    """Each defect found and the sources (rules, queries) whose findings matched it: which of them a detection
    depends on."""
    false_positives: tuple[tuple[Control, Hit], ...]
    unmatched: tuple[Hit, ...]
    refusals: int
    seconds: float
    tokens: int

    @property
    def defects(self) -> int:
        """Planted defects."""
        return sum(c.defects for c in self.per_check)

    @property
    def detected(self) -> int:
        """Planted defects found."""
        return sum(c.detected for c in self.per_check)

    @property
    def detection(self) -> float:
        """Share of planted defects found."""
        return self.detected / self.defects if self.defects else 1.0


def load_answers(corpus: Path) -> AnswerKey:
    """Merge every `answers*.json` at the corpus root."""
    files = sorted(corpus.glob("answers*.json"))
    if not files:
        raise UsageError("err.bench.no_answers", corpus=str(corpus))
    key = AnswerKey()
    for f in files:
        try:
            part = AnswerKey.model_validate_json(f.read_text(encoding="utf-8"))
        except ValidationError as exc:
            first = exc.errors()[0]
            raise UsageError("err.bench.bad_answers", name=f.name, loc=".".join(map(str, first["loc"])),
                             detail=first["msg"]) from None
        key.defects.extend(part.defects)
        key.controls.extend(part.controls)
    return key


def _in(window: tuple[int, int] | None, line: int | None) -> bool:
    return window is not None and line is not None and window[0] <= line <= window[1]


def score(run: EngineRun, key: AnswerKey) -> Score:
    """Match hits to defects (same project, check, file, line in window) and to control windows."""
    by_project: dict[str, list[Hit]] = defaultdict(list)
    for h in run.hits:
        by_project[h.project].append(h)
    used: set[int] = set()
    missed: list[Defect] = []
    found: list[tuple[Defect, tuple[str, ...]]] = []
    detected: dict[CheckId, int] = defaultdict(int)
    mismatched: dict[CheckId, int] = defaultdict(int)
    for d in key.defects:
        cands = [h for h in by_project[d.project] if h.check == d.check and (
            (d.lines is None and (h.verdict is Verdict.NOT_IMPLEMENTED or h.file is None))
            or (h.file == d.file and _in(d.lines, h.line)))]
        if not cands and d.lines is None and (d.project, d.check) in run.not_covered:
            detected[d.check] += 1
            found.append((d, ()))
            continue
        if not cands:
            missed.append(d)
            continue
        detected[d.check] += 1
        found.append((d, tuple(sorted({h.source for h in cands}))))
        used.update(id(h) for h in cands)
        if not any(h.verdict == d.verdict for h in cands):
            mismatched[d.check] += 1
    fps: list[tuple[Control, Hit]] = []
    windows: dict[CheckId, int] = defaultdict(int)
    for c in key.controls:
        for check in c.checks:
            windows[check] += 1
        for h in by_project[c.project]:
            if h.check in c.checks and h.file == c.file and _in(c.lines, h.line) and id(h) not in used:
                fps.append((c, h))
                used.add(id(h))
    per_check = tuple(
        CheckScore(check=ch, defects=sum(1 for d in key.defects if d.check == ch), detected=detected[ch],
                   verdict_mismatches=mismatched[ch], control_windows=windows[ch],
                   false_positives=sum(1 for _, h in fps if h.check == ch))
        for ch in CheckId
    )
    unmatched = tuple(h for h in run.hits if id(h) not in used)
    return Score(engine=run.name, per_check=per_check, missed=tuple(missed), found=tuple(found),
                 false_positives=tuple(fps), unmatched=unmatched, refusals=run.refusals, seconds=run.seconds,
                 tokens=run.tokens)


def run_engine(corpus: Path, key: AnswerKey, *, preview: bool = False) -> EngineRun:
    """Run harness-audit's static engine on every project of the corpus (all checks, no cache, no files); with
    `preview`, the semantic layer's queries too."""
    from harness_audit.api import audit

    run = EngineRun(name="harness-audit --preview" if preview else "harness-audit")
    for project in key.projects:
        root = corpus / project
        if not root.is_dir():
            raise UsageError("err.bench.project_not_dir", project=project, root=str(root))
        t = time.perf_counter()
        result = audit(root, ["all"], overrides={"cache": False, "preview": preview}, write=False)
        run.seconds += time.perf_counter() - t
        rep = result.report
        run.refusals += len(rep.refusals)
        run.tokens += rep.total_usage.input_tokens + rep.total_usage.output_tokens
        run.hits.extend(Hit(project, f.check, f.file, f.line, f.verdict, f.source) for f in rep.findings)
        run.not_covered.update((project, o.check) for o in rep.outcomes if o.status is OutcomeStatus.NOT_COVERED)
    return run


_RULE_ID = re.compile(r"(?:^|\.)(C\d{1,2})$")


def semgrep_hits(project: str, data: dict[str, object], root: Path | None = None) -> list[Hit]:
    """Map semgrep JSON results to hits: the check is the rule id's last part (`…​.C9` → C9)."""
    hits: list[Hit] = []
    results = data.get("results", [])
    assert isinstance(results, list)
    for r in results:
        if not isinstance(r, dict):
            continue
        m = _RULE_ID.search(str(r.get("check_id", "")))
        if not m or m.group(1) not in CheckId.__members__:
            continue
        path = Path(str(r.get("path", "")))
        if root is not None and path.is_absolute():
            path = path.relative_to(root)
        elif root is not None and not path.is_absolute():
            with contextlib.suppress(ValueError):  # a path outside the root keeps its own form
                path = (Path.cwd() / path).resolve().relative_to(root.resolve())
        start = r.get("start", {})
        line = start.get("line") if isinstance(start, dict) else None
        hits.append(Hit(project, CheckId(m.group(1)), path.as_posix(), line if isinstance(line, int) else None,
                        Verdict.CONFIRMED, f"semgrep:{r.get('check_id')}"))
    return hits


def find_semgrep() -> str | None:
    """The semgrep executable, if installed."""
    return shutil.which("semgrep")


def run_semgrep(corpus: Path, key: AnswerKey, config: Path, exe: str) -> EngineRun:
    """Run the semgrep baseline on every project and map its results to check ids."""
    run = EngineRun(name="semgrep baseline")
    for project in key.projects:
        # semgrep's default ignores skip anything under a `tests/` directory (where corpora usually live),
        # so it scans a copy of the project in a neutral place
        with tempfile.TemporaryDirectory(prefix="ha-bench-") as tmp:
            root = Path(tmp) / project
            shutil.copytree(corpus / project, root)
            t = time.perf_counter()
            proc = subprocess.run(
                [exe, "scan", "--config", str(config.resolve()), "--json", "--metrics", "off", "--quiet",
                 "--disable-version-check", str(root)],
                capture_output=True, text=True, timeout=600, check=False, env=_semgrep_env(),
            )
            run.seconds += time.perf_counter() - t
            try:
                data = json.loads(proc.stdout)
            except ValueError:
                raise UsageError("err.bench.semgrep_no_json", project=project,
                                 detail=proc.stderr.strip()[:300]) from None
            run.hits.extend(semgrep_hits(project, data, root.resolve()))
    return run


def _semgrep_env() -> dict[str, str]:
    import os

    keep = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")
    return {k: v for k, v in os.environ.items() if k in keep} | {"SEMGREP_SEND_METRICS": "off"}


def score_table(scores: Iterable[Score], lang: str = "en") -> list[str]:
    """A plain-text table: detection and false positives per check, one column pair per engine."""
    from harness_audit.messages import pad, t

    scores = list(scores)
    head = pad(t("bench.check", lang), 6) + "".join(f"| {s.engine[:18]:>18} {pad(t('bench.det_fp', lang), 8)}"
                                                      for s in scores)
    lines = [head, "-" * len(head)]
    for i, ch in enumerate(CheckId):
        row = f"{ch.value:<6}"
        for s in scores:
            c = s.per_check[i]
            row += f"| {c.detected:>3}/{c.defects:<3}{'':>12}{c.false_positives:>3}  "
        lines.append(row)
    lines.append("-" * len(head))
    total = pad(t("bench.total", lang), 6)
    for s in scores:
        fp = len(s.false_positives)
        total += f"| {s.detected:>3}/{s.defects:<3} {s.detection:>6.1%}{'':>5}{fp:>3}  "
    lines.append(total)
    for s in scores:
        lines.append(t("bench.engine_line", lang, engine=s.engine, seconds=f"{s.seconds:.2f}", refusals=s.refusals,
                       tokens=s.tokens, outside=len(s.unmatched)))
    return lines
