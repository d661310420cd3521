"""`harness-audit explain C8 [C9 …]`: a check's criteria and its static rules (or one rule, by its id)."""

from __future__ import annotations

import argparse

from harness_audit.catalogue import criteria_text, parse_selection, rule_index
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
    """Print the criteria and each rule's docstring; a rule id prints that rule alone.

    In Chinese the criteria are the Chinese version; the rules' descriptions are written once, in English, beside
    their code, so a Chinese reader gets the rule ids and the command that shows a rule's description.
    """
    checks = parse_selection(ns.check, origin=Msg("origin.explain"))
    wanted_rules = {r for token in ns.check for r in token.replace(",", " ").split() if r in rule_index()}
    rules = all_rules()
    lang = resolve_language(ns.language) if ns.language else ns.lang
    if wanted_rules and len(wanted_rules) == len([w for t in ns.check for w in t.replace(",", " ").split()]):
        for r in rules:
            if r.rule_id in wanted_rules:
                label = f" · {t('explain.rule_doc_en', lang)}" if lang != "en" else ""
                print(f"# `{r.rule_id}` ({r.lang}){label}\n\n{' '.join(r.doc.split())}\n")
        return 0
    for check in checks:
        print(criteria_text(check, lang).rstrip())
        print(f"\n## {t('explain.rules', lang)}\n")
        for r in (r for r in rules if r.check == check):
            print(f"- `{r.rule_id}` ({r.lang})" + (f": {' '.join(r.doc.split())}" if lang == "en" else ""))
        if lang != "en":
            print(f"\n{t('explain.rule_docs_where', lang, example=next((r.rule_id for r in rules if r.check == check), check))}")
        print()
    return 0
