"""Real-bug benchmark: bug-fix commits from public agent harnesses, audited before and after the fix.

Each case names a repository, the fix commit and its first parent, the defective lines at the parent
and the corresponding lines at the fix, and the check the bug violates. An engine *detects* a case
when, auditing the parent's package root with that check, it reports a finding at the cited lines
(±3) or at one of the case's agreed alternative sites; a detected case is *still flagged* when the
same audit of the fix commit reports a finding at the fixed lines (±3).

Trees are exported from local git mirrors (`<mirrors>/<owner>+<name>/repo`, a bare repository with
history) into a cache outside the project; engines run as subprocesses (any `harness-audit`
executable, so today's engine and an older checkout can be compared on the same cases), and the
semgrep baseline runs the same way; audits made elsewhere (a host-model audit) are read from their reports.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness_audit.bench import semgrep_hits
from harness_audit.errors import UsageError
from harness_audit.findings import CheckId

WINDOW = 3
"""A finding within this many lines of the cited range counts as at the cited lines."""

RECON_NEAR = 30
"""A landmark within this many lines of a bug's site counts as recon having located the bug's place."""

Split = Literal["study", "heldout"]


class Site(BaseModel):
    """An agreed alternative place to cite the same defect (at the pre-fix commit)."""

    model_config = ConfigDict(extra="forbid")
    file: str
    lines: tuple[int, int]
    why: str = ""


class Case(BaseModel):
    """One verified real bug."""

    model_config = ConfigDict(extra="forbid")
    id: str
    repo: str
    language: Literal["python", "typescript", "javascript"]
    license: str
    fix_commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    pre_commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    fix_date: str = ""
    check: CheckId
    also_checks: list[CheckId] = Field(default_factory=list[CheckId])
    file: str
    lines: tuple[int, int]
    evidence_excerpt: str
    fix_file: str
    fix_lines: tuple[int, int]
    alt_sites: list[Site] = Field(default_factory=list[Site])
    root: str = ""
    summary: str
    diff: str
    how_found: str = ""
    static_visible: Literal["yes", "partly", "no"]
    notes: str = ""
    split: Split
    draw: int = Field(default=1, ge=1)

    @field_validator("root")
    @classmethod
    def _root(cls, v: str) -> str:
        return v.strip("/")

    @property
    def checks(self) -> tuple[CheckId, ...]:
        """The check and any other check the same bug violates."""
        return (self.check, *self.also_checks)

    @property
    def lang_group(self) -> str:
        """`python` or `ts/js`: how results are reported."""
        return "python" if self.language == "python" else "ts/js"

    def rel(self, path: str) -> str | None:
        """`path` (repo-relative) relative to the audited root, or None when it lies outside it."""
        if not self.root:
            return path
        prefix = self.root + "/"
        return path[len(prefix):] if path.startswith(prefix) else None


class Corpus(BaseModel):
    """The case file."""

    model_config = ConfigDict(extra="forbid")
    version: int = 1
    note: str = ""
    cases: list[Case]


def load_cases(path: Path) -> list[Case]:
    """Read and validate a case file; duplicate ids are refused."""
    try:
        corpus = Corpus.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError("err.bench.cases_unreadable", path=str(path), detail=exc.strerror or str(exc)) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UsageError("err.bench.bad_case", name=path.name, loc=".".join(map(str, first["loc"])),
                         detail=first["msg"]) from None
    seen: set[str] = set()
    for c in corpus.cases:
        if c.id in seen:
            raise UsageError("err.bench.duplicate_case", name=path.name, case=c.id)
        seen.add(c.id)
    return corpus.cases


def mirror_of(mirrors: Path, repo: str) -> Path:
    """The bare git mirror of `owner/name`."""
    return mirrors / repo.replace("/", "+") / "repo"


def tree_of(trees: Path, case: Case, commit: str) -> Path:
    """Where the exported package root of `case` at `commit` lies."""
    base = trees / case.repo.replace("/", "+") / commit
    return base / case.root if case.root else base


def export(cases: Iterable[Case], mirrors: Path, trees: Path) -> list[str]:
    """Export the package root of every case at its pre and fix commits; return what could not be exported."""
    problems: list[str] = []
    for case in cases:
        mirror = mirror_of(mirrors, case.repo)
        if not mirror.is_dir():
            problems.append(f"{case.id}: no mirror at {mirror} (fetch github:{case.repo} first)")
            continue
        for commit in (case.pre_commit, case.fix_commit):
            try:
                _export_one(mirror, commit, case.root, trees / case.repo.replace("/", "+") / commit)
            except (OSError, subprocess.CalledProcessError) as exc:
                problems.append(f"{case.id}: cannot export {commit[:12]}:{case.root or '.'}: {exc}")
    return problems


def _export_one(mirror: Path, commit: str, root: str, dest: Path) -> None:
    """Write the files under `root` at `commit` into `dest` (only regular files; blobs a partial mirror lacks,
    its largest files, are left out: the audit skips such files anyway)."""
    done = dest / ".export-complete" / (root.replace("/", "+") or "_")
    if done.is_file():
        return
    listing = subprocess.run(["git", "-C", str(mirror), "ls-tree", "-r", "-z", commit, "--", root or "."],
                             capture_output=True, check=True).stdout
    entries: list[tuple[str, str]] = []
    for record in listing.split(b"\0"):
        if not record:
            continue
        meta, _, path = record.partition(b"\t")
        mode, kind, sha = meta.split(b" ")
        if kind == b"blob" and mode in (b"100644", b"100755"):
            entries.append((sha.decode(), path.decode("utf-8", errors="surrogateescape")))
    with tempfile.TemporaryDirectory(dir=dest.parent if dest.parent.exists() else None, prefix=".export-") as tmp:
        staging = Path(tmp)
        batch = subprocess.Popen(["git", "-C", str(mirror), "cat-file", "--batch"], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE)
        assert batch.stdin is not None and batch.stdout is not None
        try:
            for sha, path in entries:
                batch.stdin.write(sha.encode() + b"\n")
                batch.stdin.flush()
                header = batch.stdout.readline().split()
                if len(header) < 3 or header[1] != b"blob":
                    continue  # missing in this mirror
                data = batch.stdout.read(int(header[2]))
                batch.stdout.read(1)
                target = staging / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        finally:
            batch.stdin.close()
            batch.wait()
        dest.mkdir(parents=True, exist_ok=True)
        src = staging / root if root else staging
        target_root = dest / root if root else dest
        target_root.parent.mkdir(parents=True, exist_ok=True)
        if target_root.exists():
            shutil.rmtree(target_root)
        if src.exists():
            src.rename(target_root)
        else:
            target_root.mkdir(parents=True)
    done.parent.mkdir(parents=True, exist_ok=True)
    done.touch()


@dataclass(frozen=True, slots=True)
class Flag:
    """One finding an engine reported, reduced to what scoring needs."""

    check: str
    file: str
    line: int
    source: str = ""
    """The engine's name for what reported it (`static:C1/except-continue-skips-result`), where it gives one."""


@dataclass(frozen=True, slots=True)
class Place:
    """One landmark an audit located, reduced to what scoring recon needs."""

    kind: str
    file: str
    line: int


@dataclass(slots=True)
class Audit:
    """What one audit of one tree reported: its findings and, where the engine has a recon, its landmarks."""

    flags: list[Flag]
    landmarks: list[Place] | None = None
    """None for an engine without landmarks (the semgrep baseline)."""


Recon = Literal["", "at", "file", "elsewhere", "none"]
"""Where the pre-fix audit located the case's required landmark kind: within `RECON_NEAR` lines of the bug (or an
alternative site), elsewhere in the bug's file, only in other files, nowhere (the check is then not covered and no
engine looks); empty for an engine without landmarks."""


@dataclass(slots=True)
class CaseResult:
    """How one engine did on one case."""

    case: Case
    engine: str
    detected: bool = False
    still_flagged: bool = False
    fix_unaudited: bool = False
    """Detected, but no audit of the fix tree exists (a reports folder without its `fix/` report)."""
    error: str = ""
    seconds: float = 0.0
    pre_flags: list[Flag] = field(default_factory=list[Flag])
    recon: Recon = ""


def _near(flags: Sequence[Flag], checks: Sequence[CheckId], file: str | None, lines: tuple[int, int]) -> bool:
    if file is None:
        return False
    wanted = {c.value for c in checks}
    return any(f.check in wanted and f.file == file and lines[0] - WINDOW <= f.line <= lines[1] + WINDOW
               for f in flags)


def detected(case: Case, flags: Sequence[Flag]) -> bool:
    """A finding of the case's check(s) at the cited lines or an alternative site (pre-fix tree)."""
    sites = [(case.rel(case.file), case.lines), *((case.rel(s.file), s.lines) for s in case.alt_sites)]
    return any(_near(flags, case.checks, f, lines) for f, lines in sites)


def recon_at(case: Case, landmarks: Sequence[Place]) -> Recon:
    """Where `landmarks` (the pre-fix audit's) put the case's required landmark kind relative to the bug."""
    from harness_audit.catalogue import spec

    wanted = {str(k) for c in case.checks for k in spec(c).requires}
    found = [lm for lm in landmarks if lm.kind in wanted]
    if not found:
        return "none"
    sites = [(case.rel(case.file), case.lines), *((case.rel(s.file), s.lines) for s in case.alt_sites)]
    if any(lm.file == f and lines[0] - RECON_NEAR <= lm.line <= lines[1] + RECON_NEAR
           for lm in found for f, lines in sites):
        return "at"
    if any(lm.file == f for lm in found for f, _ in sites):
        return "file"
    return "elsewhere"


def still_flagged(case: Case, flags: Sequence[Flag]) -> bool:
    """A finding of the case's check(s) at the fixed lines (fix tree)."""
    return _near(flags, case.checks, case.rel(case.fix_file), case.fix_lines)


class Engine:
    """Something that audits a tree for some checks and returns flags."""

    name: str

    def run(self, root: Path, checks: Sequence[CheckId]) -> Audit:  # pragma: no cover - interface
        raise NotImplementedError

    def audit(self, case: Case, side: Literal["pre", "fix"], root: Path) -> Audit:
        """The audit of one side of `case`, whose tree is `root`: by default, an audit of the tree."""
        return self.run(root, case.checks)


@dataclass(slots=True)
class HarnessAuditEngine(Engine):
    """A `harness-audit` executable run as a subprocess, JSON report: the static engine unless `extra` names
    another (`--engine hybrid --model …`)."""

    exe: str
    name: str = "harness-audit"
    timeout: float = 600.0
    extra: tuple[str, ...] = ()
    """More flags for this executable (`--preview`)."""

    def run(self, root: Path, checks: Sequence[CheckId]) -> Audit:
        with tempfile.TemporaryDirectory(prefix="ha-realbugs-") as out:
            proc = subprocess.run(
                [self.exe, str(root), ",".join(c.value for c in checks), "--engine", "static", "--format", "json",
                 "--output-dir", out, "--fail-on", "never", "--no-cache", "-q", *self.extra],
                capture_output=True, text=True, timeout=self.timeout, check=False)
            reports = sorted(Path(out).glob("report-*.json"))
            if proc.returncode == 3 and "not covered" in proc.stderr:
                return Audit([], [])  # every selected check was not covered: an audit that found nothing to look at (its
                # report, written all the same, says so)
            if proc.returncode not in (0, 1) or not reports:
                raise RuntimeError(f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-300:]}")
            data = json.loads(reports[-1].read_text(encoding="utf-8"))
        return audit_of_report(data)


def flags_of_report(data: dict[str, object]) -> list[Flag]:
    """The flags of a harness-audit JSON report: each finding's place and every place in its `also_at`."""
    flags: list[Flag] = []
    findings = data.get("findings")
    for f in findings if isinstance(findings, list) else []:
        if isinstance(f, dict) and f.get("file") and f.get("line"):
            source = str(f.get("source") or "")
            flags.append(Flag(str(f["check"]), str(f["file"]), int(f["line"]), source))
            for extra in f.get("also_at", []) or []:
                file, _, line = str(extra).rpartition(":")
                if file and line.isdigit():
                    flags.append(Flag(str(f["check"]), file, int(line), source))
    return flags


def audit_of_report(data: dict[str, object]) -> Audit:
    """A harness-audit JSON report's findings (`flags_of_report`) and the landmarks it kept."""
    kept = data.get("landmarks")
    landmarks = [Place(str(lm["kind"]), str(lm["file"]), int(lm["line"])) for lm in kept if isinstance(lm, dict)
                 and lm.get("kind") and lm.get("file") and isinstance(lm.get("line"), int)] \
        if isinstance(kept, list) else None
    return Audit(flags_of_report(data), landmarks)


class NoReport(RuntimeError):
    """A reports folder holds no report for one side of a case."""


@dataclass(slots=True)
class ReportsEngine(Engine):
    """Reports another engine already wrote, one folder per case: `DIR/<case id>/` holds the audit of the
    pre-fix tree, `DIR/<case id>/fix/` the audit of the fix tree (optional). A host-model audit or a hybrid
    run with a real model is scored this way, on the same cases and by the same rule as the static engine.
    A folder's report is its newest `report-*.json`, else its `latest.json`."""

    folder: Path
    name: str = "reports"

    def audit(self, case: Case, side: Literal["pre", "fix"], root: Path) -> Audit:
        where = self.folder / case.id / ("fix" if side == "fix" else "")
        found = sorted(where.glob("report-*.json")) or sorted(where.glob("latest.json"))
        if not found:
            raise NoReport(f"no {side}-fix report in {where}")
        try:
            data = json.loads(found[-1].read_text(encoding="utf-8"))
        except ValueError as exc:
            raise RuntimeError(f"{found[-1]}: not a JSON report ({exc})") from None
        if not isinstance(data, dict):
            raise RuntimeError(f"{found[-1]}: not a harness-audit JSON report")
        return audit_of_report(data)


@dataclass(slots=True)
class SemgrepEngine(Engine):
    """The semgrep baseline ruleset; a rule's check is the last part of its id."""

    exe: str
    config: Path
    name: str = "semgrep baseline"
    timeout: float = 600.0

    def run(self, root: Path, checks: Sequence[CheckId]) -> Audit:
        from harness_audit.bench import _semgrep_env

        proc = subprocess.run(
            [self.exe, "scan", "--config", str(self.config.resolve()), "--json", "--metrics", "off", "--quiet",
             "--disable-version-check", str(root)],
            capture_output=True, text=True, timeout=self.timeout, check=False, env=_semgrep_env())
        try:
            data = json.loads(proc.stdout)
        except ValueError:
            raise RuntimeError(f"semgrep produced no JSON: {proc.stderr.strip()[-300:]}") from None
        wanted = {c for c in checks}
        return Audit([Flag(h.check.value, h.file or "", h.line or 0) for h in semgrep_hits("", data, root.resolve())
                      if h.check in wanted and h.file and h.line])


def run_case(case: Case, engine: Engine, trees: Path) -> CaseResult:
    """Audit the pre and (when detected) the fix tree of one case."""
    res = CaseResult(case=case, engine=engine.name)
    pre, fix = tree_of(trees, case, case.pre_commit), tree_of(trees, case, case.fix_commit)
    if not pre.is_dir() or not fix.is_dir():
        res.error = "tree not exported (run the export first)"
        return res
    t = time.perf_counter()
    try:
        before = engine.audit(case, "pre", pre)
        res.pre_flags = before.flags
        res.detected = detected(case, res.pre_flags)
        if before.landmarks is not None:
            res.recon = recon_at(case, before.landmarks)
        if res.detected:
            try:
                res.still_flagged = still_flagged(case, engine.audit(case, "fix", fix).flags)
            except NoReport:
                res.fix_unaudited = True
    except (RuntimeError, OSError, subprocess.TimeoutExpired, ValueError) as exc:
        res.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    res.seconds = time.perf_counter() - t
    return res


@dataclass(frozen=True, slots=True)
class Tally:
    """Counts for one engine over one group of cases."""

    cases: int
    detected: int
    still_flagged: int
    errors: int
    fix_unaudited: int = 0
    recon: dict[str, int] = field(default_factory=dict[str, int])
    """Cases per `Recon` place (`at`, `file`, `elsewhere`, `none`); empty for an engine without landmarks."""

    @property
    def rate(self) -> float:
        """Detected share."""
        return self.detected / self.cases if self.cases else 0.0

    def cell(self, lang: str = "en") -> str:
        """`7/20 35% (1 at fix)`."""
        from harness_audit.messages import t

        err = t("bench.cell_errors", lang, n=self.errors) if self.errors else ""
        fix = (t("bench.fix_unaudited", lang, n=self.still_flagged, m=self.fix_unaudited) if self.fix_unaudited
               else t("bench.at_fix", lang, n=self.still_flagged))
        return t("bench.cell", lang, ratio=f"{self.detected:>3}/{self.cases:<3}", rate=f"{self.rate:>4.0%}",
                 fix=fix, err=err)


def tally(results: Iterable[CaseResult]) -> Tally:
    """Sum a group of results."""
    rs = list(results)
    placed = [r.recon for r in rs if r.recon]
    recon = {where: placed.count(where) for where in ("at", "file", "elsewhere", "none")} if placed else {}
    return Tally(len(rs), sum(r.detected for r in rs), sum(r.still_flagged for r in rs), sum(bool(r.error) for r in rs),
                 sum(r.fix_unaudited for r in rs), recon)


def table(results: Sequence[CaseResult], engines: Sequence[str], lang: str = "en") -> list[str]:
    """Detection per language and split, one column per engine."""
    from harness_audit.messages import pad, t

    groups = [(group, split) for group in ("python", "ts/js") for split in ("study", "heldout")]
    head = pad(t("bench.group", lang), 16) + "".join(f"| {e[:30]:<30} " for e in engines)
    lines = [head, "-" * len(head)]
    for group, split in [*groups, ("all", "study"), ("all", "heldout")]:
        row = pad(f"{t(f'bench.group.{group}', lang)} {t(f'bench.split.{split}', lang)}", 16)
        for e in engines:
            sel = [r for r in results if r.engine == e and r.case.split == split
                   and (group == "all" or r.case.lang_group == group)]
            row += f"| {pad(tally(sel).cell(lang), 30)} "
        lines.append(row)
    recon = {e: {split: tally(r for r in results if r.engine == e and r.case.split == split).recon
                 for split in ("study", "heldout")} for e in engines}
    if any(by_split["study"] or by_split["heldout"] for by_split in recon.values()):
        lines += ["", t("bench.recon_head", lang)]
        for e in engines:
            for split, counts in recon[e].items():
                if counts:
                    lines.append(f"  {e[:30]:<30} {pad(t(f'bench.split.{split}', lang), 8)} "
                                 f"{t('bench.recon_cell', lang, **counts)}")
    return lines
