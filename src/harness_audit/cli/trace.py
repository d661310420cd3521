"""`harness-audit trace FILE… [--input-format F] [--checks C1,C2…] [--format md,json] [-o DIR|-] [-q]`: check traces."""

from __future__ import annotations

import argparse
from typing import Any

from harness_audit.api import trace
from harness_audit.config import FORMATS as REPORT_FORMATS
from harness_audit.config import build_config
from harness_audit.errors import UsageError
from harness_audit.messages import resolve_language, t


def make_parser(lang: str = "en") -> argparse.ArgumentParser:
    """Parser of `harness-audit trace`, its help in `lang`."""
    from harness_audit.cli import ArgParser
    from harness_audit.trace import FORMATS

    def h(key: str) -> str:
        return t(f"help.{key}", lang)

    p = ArgParser(prog="harness-audit trace", lang=lang, description=h("trace.description"),
                  epilog=h("trace.epilog"))
    p.add_argument("files", nargs="+", metavar="FILE", help=h("trace.files"))
    p.add_argument("--input-format", dest="trace_format", choices=list(FORMATS), help=h("trace.input_format"))
    p.add_argument("-c", "--checks", "--check", dest="selection", action="append", metavar="IDS",
                   help=h("trace.checks"))
    p.add_argument("-o", "--output-dir", metavar="DIR", help=h("trace.output_dir"))
    p.add_argument("--format", dest="report_format", metavar="FMTS", help=h("trace.format"))
    p.add_argument("--fail-on", choices=["confirmed", "suspected", "never"], help=h("fail_on"))
    p.add_argument("--baseline", metavar="OLD.json", help=h("trace.baseline"))
    p.add_argument("--allow-empty", action="store_true", default=None, help=h("trace.allow_empty"))
    p.add_argument("-q", "--quiet", action="store_true", help=h("quiet"))
    p.add_argument("--verbose", action="store_true", help=h("verbose"))
    return p


def run(ns: argparse.Namespace) -> int:
    """Check the traces, print, return the exit code."""
    from harness_audit.baseline import known_findings
    from harness_audit.cli.audit import baseline_counts, deliver, exit_code, output_dir_flag, stdout_format
    from harness_audit.trace_run import resolve_traces, trace_root

    if ns.selection is not None and any(not s.strip() for s in ns.selection):
        raise UsageError("err.trace.empty_checks_flag")
    overrides: dict[str, Any] = {"output_dir": output_dir_flag(ns.output_dir), "fail_on": ns.fail_on,
                                 "allow_empty": ns.allow_empty}
    if ns.report_format is not None:
        formats = [f.strip() for f in ns.report_format.split(",") if f.strip()]
        bad = [f for f in formats if f not in REPORT_FORMATS]
        if bad or not formats:
            raise UsageError("err.format.unknown_trace", bad=", ".join(map(repr, bad)) or repr(ns.report_format),
                             formats=", ".join(REPORT_FORMATS))
        overrides["formats"] = formats
    config, _ = build_config(trace_root(resolve_traces(ns.files)), overrides)
    fmt = stdout_format(ns, list(config.formats))
    result = trace(ns.files, ns.selection, overrides=overrides, fmt=ns.trace_format, write=fmt is None)
    ns.lang = language = resolve_language(ns.language or config.language)
    baseline = known_findings(ns.baseline) if ns.baseline else None
    deliver(result.report, list(result.paths), fmt=fmt, quiet=ns.quiet, language=language,
            baseline=baseline_counts(result.report, baseline))
    return exit_code(result.report, config.fail_on, allow_empty=config.allow_empty, language=language,
                     baseline=baseline)
