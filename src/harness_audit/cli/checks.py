"""`harness-audit checks`: the fifteen checks as a table."""

from __future__ import annotations

import argparse

from rich.table import Table

from harness_audit.catalogue import CHECKS
from harness_audit.cli._helpers import console
from harness_audit.messages import resolve_language, t


def make_parser(lang: str = "en") -> argparse.ArgumentParser:
    """Parser of `harness-audit checks`, its help in `lang`."""
    from harness_audit.cli import ArgParser

    p = ArgParser(prog="harness-audit checks", lang=lang, description=t("help.checks.description", lang))
    p.add_argument("--language", choices=["auto", "en", "zh"], help=t("help.language", lang))
    return p


def run(ns: argparse.Namespace) -> int:
    """Print the table, its fixed text in the chosen language."""
    lang = resolve_language(ns.language) if ns.language else ns.lang
    table = Table(title=t("checks.title", lang), show_lines=False)
    for col in ("id", "name", "group", "prio", "requires", "what"):
        table.add_column(t(f"checks.col.{col}", lang), overflow="fold")
    for check, s in CHECKS.items():
        table.add_row(check.value + (" ★" if s.priority == 1 else ""), t(f"check.{check}", lang),
                      f"{s.group.value}. {t(f'group.{s.group.value}', lang)}", str(s.priority),
                      ", ".join(k.value for k in s.requires), s.gloss(lang))
    console(width=160).print(table)
    return 0
