"""`harness-audit checks`: the fifteen checks as a table."""

from __future__ import annotations

import argparse

from rich.table import Table

from harness_audit.catalogue import CHECKS
from harness_audit.cli._helpers import console


def make_parser() -> argparse.ArgumentParser:
    """Parser of `harness-audit checks`."""
    from harness_audit.cli import ArgParser

    p = ArgParser(prog="harness-audit checks", description="List the fifteen checks.")
    p.add_argument("--language", choices=["auto", "en", "zh"], default="auto",
                   help="language of the gloss column (auto follows LANG)")
    return p


def run(ns: argparse.Namespace) -> int:
    """Print the table."""
    table = Table(title="harness-audit checks (★ = p1)", show_lines=False)
    for col in ("id", "name", "group", "prio", "requires", "what it checks"):
        table.add_column(col, overflow="fold")
    for check, s in CHECKS.items():
        gloss = s.gloss(ns.language)
        table.add_row(check.value + (" ★" if s.priority == 1 else ""), s.title, f"{s.group.value}. {s.group.title}",
                      str(s.priority), ", ".join(k.value for k in s.requires), gloss)
    console(width=160).print(table)
    return 0
