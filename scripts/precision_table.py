"""Write src/harness_audit/catalogue/precision.json: each rule's and each check's verdict counts from the reviews.

    python scripts/precision_table.py           # write it
    python scripts/precision_table.py --check   # exit 1 when the file is stale (the tests run this)
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REVIEWS = ROOT / "benchmarks" / "precision" / "reviews.json"
TABLE = ROOT / "src" / "harness_audit" / "catalogue" / "precision.json"
RETIRED = frozenset({"C4/chunk-lines-split-without-carry", "C15/stream-event-usage-dropped",
                     "C15/tool-event-without-call-id"})
"""Rules deleted since they were judged (2026-12-07: none of them fired on 109 real trees): their verdicts still
count toward their check, and they have no row of their own."""


def build(reviews: dict) -> str:
    """The table's text from the reviews' verdicts."""
    true: Counter[str] = Counter()
    judged: Counter[str] = Counter()
    for review in reviews["reviews"]:
        for f in review["findings"]:
            if f["verdict"] == "disputed":  # two reviewers disagreed: neither verdict counts
                continue
            for key in (f["rule"], f["rule"].split("/", 1)[0]):
                if key in RETIRED:
                    continue
                judged[key] += 1
                true[key] += f["verdict"] == "true"

    def rows(keys: list[str]) -> dict[str, dict[str, int]]:
        return {k: {"true": true[k], "judged": judged[k]} for k in keys}

    checks = sorted((k for k in judged if "/" not in k), key=lambda c: int(c[1:]))
    table = {
        "generated_by": "scripts/precision_table.py from benchmarks/precision/reviews.json; do not edit",
        "reviews": [r["review"] for r in reviews["reviews"]],
        "checks": rows(checks),
        "rules": rows(sorted(k for k in judged if "/" in k)),
    }
    def block(rows_: dict[str, dict[str, int]]) -> str:
        return "{\n" + ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in rows_.items()) + "\n }"

    head = json.dumps({k: table[k] for k in ("generated_by", "reviews")}, indent=1)[:-2]
    return f'{head},\n "checks": {block(table["checks"])},\n "rules": {block(table["rules"])}\n}}\n'


def main(argv: list[str]) -> int:
    text = build(json.loads(REVIEWS.read_text(encoding="utf-8")))
    if "--check" in argv:
        current = TABLE.read_text(encoding="utf-8") if TABLE.is_file() else ""
        if current != text:
            print(f"{TABLE.relative_to(ROOT)} is stale: run python scripts/precision_table.py", file=sys.stderr)
            return 1
        return 0
    TABLE.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
