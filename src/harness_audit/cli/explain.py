"""`harness-audit explain C8 [C9 …]`: a check's criteria and its static rules (or one rule, by its id)."""

from __future__ import annotations

import argparse

from harness_audit.catalogue import CHECKS, criteria_text, parse_selection, rule_index
from harness_audit.messages import Msg, resolve_language, t
from harness_audit.static.registry import all_rules


def make_parser(lang: str = "en") -> argparse.ArgumentParser:
    """Parser of `harness-audit explain`, its help in `lang`."""
    from harness_audit.cli import ArgParser

    p = ArgParser(prog="harness-audit explain", lang=lang, description=t("help.explain.description", lang),
                  epilog=t("help.explain.epilog", lang))
    p.add_argument("check", nargs="+", metavar="CHECK", help=t("help.explain.check", lang))
    p.add_argument("--language", choices=["auto", "en", "zh"], help=t("help.language", lang))
    return p


def run(ns: argparse.Namespace) -> int:
    """Print the criteria and each rule's docstring; a rule id prints that rule alone."""
    checks = parse_selection(ns.check, origin=Msg("origin.explain"))
    wanted_rules = {r for token in ns.check for r in token.replace(",", " ").split() if r in rule_index()}
    rules = all_rules()
    if wanted_rules and len(wanted_rules) == len([w for t in ns.check for w in t.replace(",", " ").split()]):
        for r in rules:
            if r.rule_id in wanted_rules:
                print(f"# `{r.rule_id}` ({r.lang})\n\n{' '.join(r.doc.split())}\n")
        return 0
    lang = resolve_language(ns.language) if ns.language else ns.lang
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
