"""`harness-audit explain C8`: a check's criteria and its static rules."""

from __future__ import annotations

import argparse

from harness_audit.catalogue import criteria_text, parse_selection
from harness_audit.static.registry import all_rules


def make_parser() -> argparse.ArgumentParser:
    """Parser of `harness-audit explain`."""
    from harness_audit.cli import ArgParser

    p = ArgParser(prog="harness-audit explain", description="Print a check's criteria and its static rules.")
    p.add_argument("check", help="a check id, e.g. C8")
    return p


def run(ns: argparse.Namespace) -> int:
    """Print the criteria and each rule's docstring."""
    checks = parse_selection([ns.check], origin="`explain`")
    for check in checks:
        print(criteria_text(check).rstrip())
        print("\n## Static rules\n")
        for r in (r for r in all_rules() if r.check == check):
            print(f"- `{r.rule_id}` ({r.lang}): {' '.join(r.doc.split())}")
        print()
    return 0
