"""Export the pre-fix and fix trees of the real-bug corpus from local git mirrors into a cache.

    .venv/bin/python scripts/realbugs_export.py [--cases benchmarks/realbugs/cases.json]
        [--mirrors /work/.mirror] [--trees ~/.cache/harness-audit/realbugs]

A mirror is a bare clone with history at MIRRORS/<owner>+<name>/repo (what the session tools' `fetch`
brings, or `git clone --mirror https://github.com/OWNER/NAME MIRRORS/OWNER+NAME/repo`). Only each
case's package root is exported; trees already exported are kept. Then score with
`harness-audit bench benchmarks/realbugs/cases.json --trees DIR` (benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness_audit.bench.realbugs import export, load_cases


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", type=Path, default=Path("benchmarks/realbugs/cases.json"))
    p.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    p.add_argument("--trees", type=Path, default=Path.home() / ".cache" / "harness-audit" / "realbugs")
    ns = p.parse_args()
    cases = load_cases(ns.cases)
    problems = export(cases, ns.mirrors, ns.trees)
    for line in problems:
        print(line, file=sys.stderr)
    print(f"{len(cases) - len({p.split(':')[0] for p in problems})}/{len(cases)} cases exported to {ns.trees}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
