"""`harness-audit trace FILE… [--format F] [--checks C1,C2…] [--output-dir D] [-q]`: check recorded traces."""

from __future__ import annotations

import argparse
from typing import Any

from harness_audit.api import trace
from harness_audit.config import FORMATS as REPORT_FORMATS
from harness_audit.config import build_config
from harness_audit.errors import UsageError


def make_parser() -> argparse.ArgumentParser:
    """Parser of `harness-audit trace`."""
    from harness_audit.cli import ArgParser
    from harness_audit.trace import FORMATS

    p = ArgParser(
        prog="harness-audit trace",
        description="Check recorded provider traffic of any harness (JSONL request logs, VCR cassettes, HAR, "
                    "OpenTelemetry GenAI spans, harness-audit ledgers) for tool-call pairing, append-only history, "
                    "duplicate ids, prefix stability, limits, truncation boundaries and recorded usage.",
        epilog="Default checks: C1 C2 C4 C12 C13 C14 C15 (what a trace can show). "
               "Exit codes: 0 clean, 1 findings at/above --fail-on, 2 usage error or not a trace, 3 incomplete.",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="trace files")
    p.add_argument("--format", dest="trace_format", choices=list(FORMATS),
                   help="trace format (default: detected from content)")
    p.add_argument("-c", "--checks", "--check", dest="selection", action="append", metavar="IDS",
                   help="checks to run, e.g. C1,C14 (default: every check a trace can speak to)")
    p.add_argument("--output-dir", metavar="DIR", help="where reports go (default: .harness-audit beside the traces)")
    p.add_argument("--report-format", metavar="FMTS", help="comma-separated: md,json,sarif (default: all three)")
    p.add_argument("--fail-on", choices=["confirmed", "suspected", "never"], help="exit 1 at/above this verdict")
    p.add_argument("--allow-empty", action="store_true", default=None,
                   help="exit 0 even when no selected check could be checked on these traces")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the report paths")
    p.add_argument("--verbose", action="store_true", help="show tracebacks of internal errors")
    return p


def run(ns: argparse.Namespace) -> int:
    """Check the traces, print, return the exit code."""
    from harness_audit.cli.audit import exit_code, print_result
    from harness_audit.trace_run import resolve_traces, trace_root

    if ns.selection is not None and any(not s.strip() for s in ns.selection):
        raise UsageError("--checks was given an empty value; expected ids like C1,C14")
    overrides: dict[str, Any] = {"output_dir": ns.output_dir, "fail_on": ns.fail_on, "allow_empty": ns.allow_empty}
    if ns.report_format is not None:
        formats = [f.strip() for f in ns.report_format.split(",") if f.strip()]
        bad = [f for f in formats if f not in REPORT_FORMATS]
        if bad or not formats:
            raise UsageError(f"unknown report format {', '.join(map(repr, bad)) or repr(ns.report_format)} in "
                             f"--report-format; expected a comma-separated list of {', '.join(REPORT_FORMATS)}")
        overrides["formats"] = formats
    result = trace(ns.files, ns.selection, overrides=overrides, fmt=ns.trace_format)
    print_result(result.report, list(result.paths), quiet=ns.quiet)
    config, _ = build_config(trace_root(resolve_traces(ns.files)), overrides)
    return exit_code(result.report, config.fail_on, allow_empty=config.allow_empty)
