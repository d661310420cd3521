"""Speed and memory of the semantic layer, phase by phase, on one tree.

    python benchmarks/sem_speed.py TREE [--runs N] [--exclude NAME…] [--check-bounds] [--profile OUT]

The layer runs as `--preview` runs it (files from `Workspace.discover`, the collector paused), in a child
process per run, so its peak memory is the layer's own: the interpreter, the imports, the parse trees and
the IR, facts, summaries and roles of the whole tree. Phases, each forced in order:

- lowering: `SemProject.build` (read, parse and lower every Python and TS/JS file);
- facts+summaries: the effect summaries of every function (`Summaries.of_fn`), which resolve every call
  they need;
- roles: recon's landmarks (`landmarks`), every role they read;
- queries: `run_queries` for all fifteen checks;
- release: `SemProject.close` and one collection, what freeing the project costs the audit afterwards.

Each phase prints CPU seconds (`time.process_time`), wall seconds, its own peak RSS (the kernel's high-water
mark is reset at the start of each phase, Linux only) and the RSS it leaves held. The total's CPU and peak come
from `os.wait4` on the child (imports included). With `--runs N` the run with the least total CPU is shown and
the largest peak is kept. The machine's load average is printed: the machine is shared, so judge CPU seconds,
which other work inflates less than wall seconds.

Before timing, the package's bytecode is compiled (as `pip install` does), so no run recompiles the checkout.

`--check-bounds` exits 1 unless total CPU and peak RSS stay within bounds scaled from the targets of the three
trees the layer is tuned against: Python 1.5 s and 250 MB at 136k lines (openai-agents), 10 s and 400 MB at
609k lines (agno), linear between and beyond, never below the first (when the tree has Python); TS/JS 3 s per
116k lines (@openai/agents-core's dist) added to the CPU bound. The bounds are on the whole child process (imports
and discovery included), so they are a little stricter than the targets, which count the layer alone.

    python -m venv /tmp/oa && /tmp/oa/bin/pip install openai-agents
    .venv/bin/python benchmarks/sem_speed.py /tmp/oa/lib/python3.11/site-packages/agents --runs 3 --check-bounds
    mkdir /tmp/tsreal && cd /tmp/tsreal && npm install @openai/agents-core
    .venv/bin/python benchmarks/sem_speed.py /tmp/tsreal/node_modules/@openai/agents-core/dist --check-bounds
"""

from __future__ import annotations

import argparse
import compileall
import gc
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PHASES = ("lowering", "facts+summaries", "roles", "queries", "release")
PY_ANCHORS = ((136_000, 1.5, 250.0), (609_000, 10.0, 400.0))
"""(Python lines, CPU s, peak MB) of openai-agents and agno: the targets the bounds interpolate."""
TS_CPU_PER_LINE = 3.0 / 116_000
"""CPU seconds per TS/JS line: the target on @openai/agents-core's dist."""


def _hwm_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
            f.write("5")
    except OSError:
        return False
    return True


def child(tree: Path, excludes: tuple[str, ...] | None, profile: Path | None) -> None:
    """Run the layer on `tree` and print one JSON line of per-phase figures."""
    import cProfile

    from harness_audit.catalogue import CHECKS
    from harness_audit.static import no_gc_pauses
    from harness_audit.static.sem.engine import SemProject, landmarks, run_queries
    from harness_audit.workspace import Workspace

    ws = Workspace.open(tree) if excludes is None else Workspace.open(tree, excludes=excludes)
    files = ws.discover().files
    lines = {"python": 0, "ts": 0}
    for f in files:
        text = ws.text(f.path)
        if text is None or f.language not in ("python", "typescript", "javascript"):
            continue
        lines["python" if f.language == "python" else "ts"] += text.count("\n") + 1
    checks = list(CHECKS)
    phases: list[dict[str, Any]] = []
    state: dict[str, Any] = {}

    def lowering() -> None:
        state["project"] = SemProject.build(ws, files)

    def summaries() -> None:
        project = state["project"]
        if project.facts.functions:
            project.sums.of_fn(project.facts.functions[0])

    def roles() -> None:
        state["landmarks"] = landmarks(state["project"])

    def queries() -> None:
        state["candidates"], state["errors"] = run_queries(state["project"], checks)

    def release() -> None:
        project = state.pop("project")
        state["counts"] = (len(project.modules), len(project.facts.functions))
        project.close()
        del project
        gc.collect()

    prof = cProfile.Profile() if profile is not None else None
    with no_gc_pauses():
        for name, step in zip(PHASES, (lowering, summaries, roles, queries, release), strict=True):
            per_phase = _reset_hwm()
            cpu, wall = time.process_time(), time.perf_counter()
            if prof is not None:
                prof.enable()
            step()
            if prof is not None:
                prof.disable()
            phases.append({"phase": name, "cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall,
                           "peak_mb": _hwm_mb() if per_phase else None, "held_mb": _rss_mb()})
    if prof is not None and profile is not None:
        prof.dump_stats(str(profile))
    files_lowered, functions = state["counts"]
    print(json.dumps({
        "files": files_lowered, "functions": functions, "lines": lines,
        "phases": phases, "landmarks": len(state["landmarks"]),
        "candidates": sum(len(v) for v in state["candidates"].values()), "errors": len(state["errors"]),
    }))


def run_once(tree: Path, excludes: list[str] | None, profile: Path | None) -> dict[str, Any]:
    """One child run: its JSON line plus its total CPU and peak RSS from `os.wait4`."""
    cmd = [sys.executable, __file__, str(tree), "--child"]
    for e in excludes if excludes is not None else []:
        cmd += ["--exclude", e]
    if profile is not None:
        cmd += ["--profile", str(profile)]
    wall = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"the layer failed on {tree} (exit {os.waitstatus_to_exitcode(status)})")
    result = json.loads(out.strip().splitlines()[-1])
    result["total"] = {"cpu_s": usage.ru_utime + usage.ru_stime, "wall_s": time.perf_counter() - wall,
                       "peak_mb": usage.ru_maxrss / 1024}
    return result


def bounds(lines: dict[str, int]) -> tuple[float, float]:
    """(CPU s, peak MB) allowed for a tree of these lines."""
    (l0, c0, m0), (l1, c1, m1) = PY_ANCHORS
    py = lines["python"]
    frac = max(0.0, (py - l0) / (l1 - l0))
    py_cpu = c0 + frac * (c1 - c0) if py else 0.0  # a TS/JS-only tree is held to the TS/JS rate alone
    return py_cpu + lines["ts"] * TS_CPU_PER_LINE, m0 + frac * (m1 - m0)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tree", type=Path)
    p.add_argument("--runs", type=int, default=1, help="runs; the least total CPU is shown (default 1)")
    p.add_argument("--exclude", action="append", default=None,
                   help='excluded directory names instead of the defaults ("" for none); repeatable')
    p.add_argument("--check-bounds", action="store_true", help="exit 1 unless CPU and peak stay within bounds")
    p.add_argument("--profile", type=Path, help="write cProfile stats of the phases (one run) to this file")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if not args.tree.is_dir():
        p.error(f"not a directory: {str(args.tree)!r}")
    excludes = None if args.exclude is None else tuple(e for e in args.exclude if e)
    if args.child:
        child(args.tree, excludes, args.profile)
        return 0
    compileall.compile_dir(str(ROOT / "src" / "harness_audit"), quiet=1)
    load = os.getloadavg()
    results = [run_once(args.tree, args.exclude, args.profile if i == 0 else None) for i in range(max(1, args.runs))]
    best = min(results, key=lambda r: r["total"]["cpu_s"])
    peak = max(r["total"]["peak_mb"] for r in results)
    lines = best["lines"]
    print(f"{args.tree}: {best['files']} files ({lines['python']:,} lines of Python, {lines['ts']:,} of TS/JS), "
          f"{best['functions']:,} functions; {best['landmarks']} landmarks, {best['candidates']} candidates, "
          f"{best['errors']} query errors")
    print(f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after; {len(results)} run(s), the least CPU shown")
    print(f"{'phase':<16} {'CPU s':>7} {'wall s':>7} {'peak MB':>8} {'held MB':>8}")
    for ph in best["phases"]:
        peak_s = f"{ph['peak_mb']:.0f}" if ph["peak_mb"] is not None else "-"
        print(f"{ph['phase']:<16} {ph['cpu_s']:>7.2f} {ph['wall_s']:>7.2f} {peak_s:>8} {ph['held_mb']:>8.0f}")
    layer = sum(ph["cpu_s"] for ph in best["phases"])
    print(f"{'layer':<16} {layer:>7.2f} {sum(ph['wall_s'] for ph in best['phases']):>7.2f}")
    print(f"{'process':<16} {best['total']['cpu_s']:>7.2f} {best['total']['wall_s']:>7.2f} {peak:>8.0f}"
          "   (imports and discovery included; peak of all runs)")
    if not args.check_bounds:
        return 0
    cpu_bound, mb_bound = bounds(lines)
    ok = best["total"]["cpu_s"] <= cpu_bound and peak <= mb_bound
    print(f"bounds: CPU {best['total']['cpu_s']:.2f} s of {cpu_bound:.2f} s, peak {peak:.0f} MB of {mb_bound:.0f} MB: "
          f"{'within' if ok else 'EXCEEDED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
