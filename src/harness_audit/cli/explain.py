"""`harness-audit explain C8 [C9 …]`: a check's criteria and its static rules (or one rule, by its id)."""

from __future__ import annotations

import argparse

from harness_audit.catalogue import CHECKS, criteria_text, parse_selection, rule_index
from harness_audit.messages import resolve_language, t
from harness_audit.static.registry import all_rules


def make_parser() -> argparse.ArgumentParser:
    """Parser of `harness-audit explain`."""
    from harness_audit.cli import ArgParser

    p = ArgParser(prog="harness-audit explain", description="Print a check's criteria and its static rules.",
                  epilog="Accepts what a check selection accepts: C8, c08, 'C1 C9', C1,C9, p1, all, and rule ids "
                         "such as C8/parallel-batch-all-or-nothing (that rule only).")
    p.add_argument("check", nargs="+", metavar="CHECK", help="check ids, a preset or rule ids, e.g. C8 or C1,C9")
    p.add_argument("--language", choices=["auto", "en", "zh"], help="language of the fixed text")
    return p


def run(ns: argparse.Namespace) -> int:
    """Print the criteria and each rule's docstring; a rule id prints that rule alone."""
    checks = parse_selection(ns.check, origin="`explain`")
    wanted_rules = {r for token in ns.check for r in token.replace(",", " ").split() if r in rule_index()}
    rules = all_rules()
    if wanted_rules and len(wanted_rules) == len([w for t in ns.check for w in t.replace(",", " ").split()]):
        for r in rules:
            if r.rule_id in wanted_rules:
                print(f"# `{r.rule_id}` ({r.lang})\n\n{' '.join(r.doc.split())}\n")
        return 0
    lang = resolve_language(ns.language)
    for check in checks:
        spec = CHECKS[check]
        if lang != "en":  # the criteria prose is written once, in English; the check's own words come first
            print(f"# {check} · {t(f'check.{check}', lang)}\n\n{spec.gloss(lang)}\n\n{t('explain.criteria_en', lang)}\n")
        print(criteria_text(check).rstrip())
        print(f"\n## {t('explain.rules', lang)}\n")
        for r in (r for r in rules if r.check == check):
            print(f"- `{r.rule_id}` ({r.lang}): {' '.join(r.doc.split())}")
        print()
    return 0
