"""Speed and memory of a cold and a warm static audit, side by side with semgrep on the same tree.

    python benchmarks/speed.py TREE [--semgrep EXE] [--rules RULES.yml] [--check-bounds]

Each tool runs as its own process; wall time and that process's peak RSS are measured with
`os.wait4`. The warm run reuses the result cache of the cold run (nothing changed in TREE).
With --check-bounds the exit code is 1 unless cold ≥ 3× and warm ≥ 10× faster than semgrep
and our peak memory stays under 250 MB.
"""

from __future__ import annotations

import argparse
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
    """Run `cmd`, discard its output, return wall time and peak RSS of that process tree's main process."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Measure(wall, usage.ru_maxrss / 1024, proc.returncode)


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
    args = p.parse_args()
    ours = [sys.executable, "-m", "harness_audit"]
    files, lines = count_lines(args.tree)
    print(f"tree: {args.tree} — {files} Python files, {lines:,} lines")
    with tempfile.TemporaryDirectory() as out:
        cmd = [*ours, str(args.tree), "all", "--exclude", "", "--output-dir", out, "--format", "json", "-q",
               "--fail-on", "never"]
        cold = measure(cmd)
        warm = measure(cmd)
    print(f"harness-audit cold: {cold.wall_s:6.2f} s, peak {cold.peak_mb:6.1f} MB (exit {cold.returncode})")
    print(f"harness-audit warm: {warm.wall_s:6.2f} s, peak {warm.peak_mb:6.1f} MB (exit {warm.returncode})")
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
