"""Speed and memory of a cold and a warm static audit, side by side with semgrep on the same tree.

    python benchmarks/speed.py TREE [--semgrep EXE] [--rules RULES.yml] [--check-bounds] [--no-bytecode]

Each tool runs as its own process; wall time and peak RSS are measured with `os.wait4`, whose peak is
the largest of the process and the children it waited for (harness-audit forks one on a large tree).
The warm run reuses the result cache of the cold run (nothing changed in TREE). A third, untimed cold
run samples the memory of our whole process tree (Linux only): the summed RSS counts the pages a child
shares copy-on-write with its parent twice, the summed PSS splits them and is the memory really used.

Before timing, our package's bytecode is compiled the way `pip install` compiles it (semgrep's and every
installed dependency's already is): an editable checkout under PYTHONDONTWRITEBYTECODE=1 would otherwise
recompile ~15k lines on every run, which no installed copy does. `--no-bytecode` measures the checkout as
it is.

With --check-bounds the exit code is 1 unless cold ≥ 3× and warm ≥ 10× faster than semgrep
and our peak memory stays under 250 MB.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_RULES = ROOT.parent / "shared" / "baselines" / "semgrep-harness.yml"


@dataclass(frozen=True)
class Measure:
    wall_s: float
    peak_mb: float
    returncode: int


def measure(cmd: list[str]) -> Measure:
    """Run `cmd`, discard its output, return wall time and the peak RSS of its largest process."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Measure(wall, usage.ru_maxrss / 1024, proc.returncode)


@dataclass(frozen=True)
class TreeMemory:
    main_mb: float
    child_mb: float
    sum_rss_mb: float
    sum_pss_mb: float


def _rss_pss_kb(pid: int) -> tuple[int, int] | None:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            fields = dict(line.split()[:2] for line in fh if line.startswith(("Rss:", "Pss:")))
    except (OSError, ValueError):
        return None
    return int(fields.get("Rss:", 0)), int(fields.get("Pss:", 0))


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def tree_memory(cmd: list[str], every_s: float = 0.05) -> TreeMemory | None:
    """Run `cmd` and sample the RSS and PSS of its process and children; None where /proc cannot tell."""
    if not Path("/proc/self/smaps_rollup").exists():
        return None
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    main = child = sum_rss = sum_pss = 0
    while proc.poll() is None:
        rss_total = pss_total = 0
        for i, pid in enumerate([proc.pid, *_children(proc.pid)]):
            sample = _rss_pss_kb(pid)
            if sample is None:
                continue
            if i == 0:
                main = max(main, sample[0])
            else:
                child = max(child, sample[0])
            rss_total += sample[0]
            pss_total += sample[1]
        sum_rss, sum_pss = max(sum_rss, rss_total), max(sum_pss, pss_total)
        time.sleep(every_s)
    return TreeMemory(main / 1024, child / 1024, sum_rss / 1024, sum_pss / 1024)


def compile_bytecode() -> Path | None:
    """Compile the imported `harness_audit` package's bytecode where it is missing or stale; its directory."""
    spec = importlib.util.find_spec("harness_audit")
    if spec is None or spec.origin is None:
        return None
    package = Path(spec.origin).parent
    compileall.compile_dir(package, quiet=1)
    return package


def count_lines(tree: Path) -> tuple[int, int]:
    files = lines = 0
    for path in tree.rglob("*.py"):
        files += 1
        with path.open("rb") as fh:
            lines += sum(1 for _ in fh)
    return files, lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("tree", type=Path)
    p.add_argument("--semgrep", default=shutil.which("semgrep"), help="semgrep executable (default: on PATH)")
    p.add_argument("--rules", type=Path, default=DEFAULT_RULES, help="semgrep ruleset")
    p.add_argument("--check-bounds", action="store_true", help="exit 1 unless the targets are met")
    p.add_argument("--no-bytecode", action="store_true", help="do not compile our bytecode first (see above)")
    args = p.parse_args()
    ours = [sys.executable, "-m", "harness_audit"]
    files, lines = count_lines(args.tree)
    print(f"tree: {args.tree} — {files} Python files, {lines:,} lines")
    if not args.no_bytecode:
        package = compile_bytecode()
        print(f"bytecode: compiled as an install would, in {package}" if package else "bytecode: package not found")
    with tempfile.TemporaryDirectory() as out:
        cmd = [*ours, str(args.tree), "all", "--exclude", "", "--output-dir", out, "--format", "json", "-q",
               "--fail-on", "never"]
        cold = measure(cmd)
        warm = measure(cmd)
        memory = tree_memory([*cmd, "--no-cache"])
    print(f"harness-audit cold: {cold.wall_s:6.2f} s, peak {cold.peak_mb:6.1f} MB (exit {cold.returncode})")
    print(f"harness-audit warm: {warm.wall_s:6.2f} s, peak {warm.peak_mb:6.1f} MB (exit {warm.returncode})")
    if memory is not None:
        print(f"cold, sampled:      main {memory.main_mb:6.1f} MB, forked child {memory.child_mb:6.1f} MB; "
              f"together {memory.sum_rss_mb:6.1f} MB RSS, {memory.sum_pss_mb:6.1f} MB PSS")
    ok = cold.returncode == 0 and warm.returncode == 0 and cold.peak_mb < 250
    if args.semgrep:
        sg = measure([args.semgrep, "scan", "--config", str(args.rules), "--json", "--metrics", "off", "--quiet",
                      "--disable-version-check", str(args.tree)])
        print(f"semgrep:            {sg.wall_s:6.2f} s, peak {sg.peak_mb:6.1f} MB (exit {sg.returncode})")
        cold_ratio, warm_ratio = sg.wall_s / cold.wall_s, sg.wall_s / warm.wall_s
        print(f"speed-up vs semgrep: cold {cold_ratio:.1f}x (target 3x), warm {warm_ratio:.1f}x (target 10x)")
        ok = ok and cold_ratio >= 3 and warm_ratio >= 10
    else:
        print("semgrep not found: pass --semgrep or `pip install semgrep` to compare")
    print("bounds met" if ok else "bounds NOT met")
    return 0 if ok or not args.check_bounds else 1


if __name__ == "__main__":
    sys.exit(main())
