"""`harness-audit diff OLD.json NEW.json`: new, fixed and unchanged findings, and verdict changes."""

from __future__ import annotations

import argparse
import json
from typing import Any

from harness_audit.baseline import compare, load_report
from harness_audit.messages import resolve_language, t


def make_parser(lang: str = "en") -> argparse.ArgumentParser:
    """Parser of `harness-audit diff`, its help in `lang`."""
    from harness_audit.cli import ArgParser

    def h(key: str) -> str:
        return t(f"help.{key}", lang)

    p = ArgParser(prog="harness-audit diff", lang=lang, description=h("diff.description"), epilog=h("diff.epilog"))
    p.add_argument("old", metavar="OLD.json", help=h("diff.old"))
    p.add_argument("new", metavar="NEW.json", help=h("diff.new"))
    p.add_argument("--format", choices=["text", "json"], default="text", help=h("format_text_json"))
    p.add_argument("--fail-on", choices=["confirmed", "suspected", "never"], default="confirmed",
                   help=h("diff.fail_on"))
    return p


def _verdict(f: dict[str, Any], lang: str) -> str:
    v = str(f.get("verdict"))
    return t(f"verdict.{v}", lang) if v in ("confirmed", "suspected", "not-implemented") else v


def _line(f: dict[str, Any], lang: str) -> str:
    where = f"{f.get('file')}:{f.get('line')}" if f.get("file") else t("summary.check_level", lang)
    return f"  {f.get('check', '?'):>3} {_verdict(f, lang)}  {where}  {f.get('claim', '')}"


def run(ns: argparse.Namespace) -> int:
    """Print the difference and return whether anything new crosses --fail-on."""
    old, new = load_report(ns.old, role="old"), load_report(ns.new, role="new")
    d = compare(old["findings"], new["findings"])
    lang = resolve_language(ns.language) if ns.language else ns.lang
    if ns.format == "json":
        print(json.dumps({"new": list(d.new), "fixed": list(d.fixed), "unchanged": len(d.unchanged),
                          "verdict_changed": [{"old": o, "new": n} for o, n in d.verdict_changed]}, indent=2,
                         ensure_ascii=False))
    elif not ns.quiet:
        for key, items in (("diff.new", d.new), ("diff.fixed", d.fixed)):
            print(t(key, lang, n=len(items)))
            print("\n".join(_line(f, lang) for f in items) or f"  {t('diff.none', lang)}")
        print(t("diff.changed", lang, n=len(d.verdict_changed)))
        for o, n in d.verdict_changed:
            print(f"{_line(n, lang)}  ({_verdict(o, lang)} → {_verdict(n, lang)})")
        if not d.verdict_changed:
            print(f"  {t('diff.none', lang)}")
        print(t("diff.unchanged", lang, n=len(d.unchanged)))
    if ns.format == "text":
        print(t("diff.summary", lang, new=len(d.new), fixed=len(d.fixed), changed=len(d.verdict_changed),
                unchanged=len(d.unchanged)))
    levels = {"confirmed": {"confirmed"}, "suspected": {"confirmed", "suspected"}, "never": set[str]()}[ns.fail_on]
    moved = [n for _, n in d.verdict_changed]
    return 1 if any(f.get("verdict") in levels for f in (*d.new, *moved)) else 0
