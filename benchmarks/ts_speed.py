"""Speed and memory of a cold fifteen-check static audit of a TypeScript/JavaScript tree.

    python benchmarks/ts_speed.py TREE [--runs N] [--phases] [--check-bounds] [--no-bytecode]

The audit runs as its own process, exactly as a user runs it:

    python -m harness_audit TREE all --exclude "" --format json -q --fail-on never --no-cache --output-dir TMP

(`--exclude ""` because published packages keep their code under `dist/`, which is excluded by default).
Wall time, CPU time and peak RSS come from `os.wait4`, whose peak is the largest of the process and the
children it waited for. Each run is cold (`--no-cache`); with `--runs N` the best wall time and the
largest peak count, since other work on the machine only ever makes a run slower.

The files and lines reported are those the audit reads: the TS/JS files `Workspace.discover` finds with
no excluded directories (every suffix of `LANGUAGE_BY_SUFFIX`, `.gitignore` honoured). Declaration files
(`.d.ts`, `.d.mts`, `.d.cts`) end in a TypeScript suffix, so discovery keeps them and they are parsed and
audited like any module; their share is printed separately.

`--phases` adds an in-process breakdown in a second child: reading the files, tree-sitter parsing alone
(trees kept, no Python-side index), the full `parse_typescript` (trees plus the per-module node index),
recon, loading the rule modules, and the rules, with the RSS each step adds.

The default tree (~100k lines of real TS/JS harness code, 155k with its declaration files)::

    mkdir /tmp/tsreal && cd /tmp/tsreal && npm install @openai/agents-core@0.20.0
    .venv/bin/python benchmarks/ts_speed.py /tmp/tsreal/node_modules/@openai/agents-core --runs 2 --check-bounds

Larger or different trees come with the same `npm install`: `ai`, `@modelcontextprotocol/sdk`,
`@anthropic-ai/sdk` (each under `node_modules/<name>`).

With --check-bounds the exit code is 1 unless the best wall time is under 10 s and the peak RSS under 500 MB.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from speed import compile_bytecode  # the same bytecode preparation as the Python benchmark

WALL_BOUND_S = 10.0
PEAK_BOUND_MB = 500.0
DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")


@dataclass(frozen=True)
class Run:
    wall_s: float
    cpu_s: float
    peak_mb: float
    returncode: int


def measure(cmd: list[str]) -> Run:
    """Run `cmd`, discard its output; wall time, CPU time (user + system) and the peak RSS of its largest process."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status))


@dataclass(frozen=True)
class TreeSize:
    files: int
    lines: int
    declaration_files: int
    declaration_lines: int


def count_audited(tree: Path) -> TreeSize:
    """Files and lines of the TS/JS the audit discovers (no excluded directories), declaration files apart."""
    from harness_audit.workspace import Workspace

    discovery = Workspace.open(tree, excludes=()).discover(("typescript", "javascript"))
    files = lines = dfiles = dlines = 0
    for f in discovery.files:
        with (Path(tree) / f.path).open("rb") as fh:
            n = sum(1 for _ in fh)
        files, lines = files + 1, lines + n
        if f.path.endswith(DECLARATION_SUFFIXES):
            dfiles, dlines = dfiles + 1, dlines + n
    return TreeSize(files, lines, dfiles, dlines)


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # not Linux: the peak so far


def phases(tree: Path) -> None:
    """The in-process breakdown `--phases` prints (runs in its own child process)."""
    from harness_audit.catalogue import parse_selection
    from harness_audit.static.lang.typescript import dialect_of, parse_source
    from harness_audit.static.registry import rules_for
    from harness_audit.static.ts import TS_LANGUAGES, parse_typescript, run_ts_rules, ts_recon
    from harness_audit.workspace import Workspace

    def step(label: str, started: float, before: float, note: str = "") -> float:
        now = _rss_mb()
        print(f"  {label:<36} {time.perf_counter() - started:6.2f} s  {now - before:+7.1f} MB  {note}")
        return now

    for dialect in ("typescript", "tsx", "javascript"):
        parse_source(dialect, b"")  # load the grammars before measuring
    rss = _rss_mb()
    print(f"phases (in-process; interpreter, package and grammars: {rss:.0f} MB RSS)")
    t = time.perf_counter()
    ws = Workspace.open(tree, excludes=())
    files = [f for f in ws.discover(("typescript", "javascript")).files if f.language in TS_LANGUAGES]
    rss = step("discover", t, rss, f"{len(files)} files")
    t = time.perf_counter()
    sources = [(f.path, (ws.text(f.path) or "").encode("utf-8")) for f in files]
    rss = step("read", t, rss, f"{sum(len(s) for _, s in sources) / 2**20:.1f} MB of source")
    t = time.perf_counter()
    trees = [parse_source(dialect_of(path), src) for path, src in sources]
    nodes = sum(tree.root_node.descendant_count for tree in trees)
    grown = _rss_mb() - rss
    rss = step("tree-sitter parse alone", t, rss, f"{nodes:,} nodes, {grown * 2**20 / max(nodes, 1):.0f} B/node")
    del trees
    rss = _rss_mb()  # what freeing the trees gave back, if anything
    t = time.perf_counter()
    parsed = parse_typescript(ws, files)  # the audit's own parse: read, trees again, plus the node index
    rss = step("parse_typescript (read+parse+index)", t, rss)
    t = time.perf_counter()
    landmarks = ts_recon(parsed)
    rss = step("recon", t, rss, f"{len(landmarks)} landmarks")
    checks = list(parse_selection(["all"]))
    t = time.perf_counter()
    rules = list(rules_for(checks, "typescript"))
    rss = step("load the rule modules", t, rss, f"{len(rules)} rules")
    t = time.perf_counter()
    candidates, errors = run_ts_rules(parsed, checks)
    found = sum(len(c) for c in candidates.values())
    step("rules", t, rss, f"{found} candidates, {len(errors)} checks crashed")
    print(f"  peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tree", type=Path)
    p.add_argument("--runs", type=int, default=1, help="cold runs; the best wall time counts (default 1)")
    p.add_argument("--phases", action="store_true", help="add the in-process per-phase breakdown")
    p.add_argument("--check-bounds", action="store_true", help="exit 1 unless the targets are met")
    p.add_argument("--no-bytecode", action="store_true", help="do not compile our bytecode first (see speed.py)")
    p.add_argument("--phases-child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.phases_child:
        phases(args.tree)
        return 0
    size = count_audited(args.tree)
    print(f"tree: {args.tree} — {size.files} TS/JS files, {size.lines:,} lines "
          f"(of which {size.declaration_files} declaration files, {size.declaration_lines:,} lines; "
          f"{size.lines - size.declaration_lines:,} lines without them)")
    if not args.no_bytecode:
        package = compile_bytecode()
        print(f"bytecode: compiled as an install would, in {package}" if package else "bytecode: package not found")
    runs: list[Run] = []
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "harness_audit", str(args.tree), "all", "--exclude", "", "--format", "json",
               "-q", "--fail-on", "never", "--no-cache", "--output-dir", out]
        for i in range(max(args.runs, 1)):
            run = measure(cmd)
            runs.append(run)
            print(f"harness-audit cold #{i + 1}: {run.wall_s:6.2f} s wall, {run.cpu_s:6.2f} s CPU, "
                  f"peak {run.peak_mb:6.1f} MB (exit {run.returncode})")
    best = min(r.wall_s for r in runs)
    peak = max(r.peak_mb for r in runs)
    print(f"best wall {best:.2f} s (target < {WALL_BOUND_S:g} s), peak {peak:.1f} MB (target < {PEAK_BOUND_MB:g} MB); "
          f"{size.lines / best:,.0f} lines/s")
    if args.phases:
        subprocess.run([sys.executable, __file__, str(args.tree), "--phases-child"], check=False)
    ok = all(r.returncode == 0 for r in runs) and best < WALL_BOUND_S and peak < PEAK_BOUND_MB
    print("bounds met" if ok else "bounds NOT met")
    return 0 if ok or not args.check_bounds else 1


if __name__ == "__main__":
    sys.exit(main())
