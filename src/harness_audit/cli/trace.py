"""`harness-audit trace FILE… [--input-format F] [--checks C1,C2…] [--format md,json] [-o DIR|-] [-q]`: check traces."""

from __future__ import annotations

import argparse
from typing import Any

from harness_audit.api import trace
from harness_audit.config import FORMATS as REPORT_FORMATS
from harness_audit.config import build_config
from harness_audit.errors import UsageError
from harness_audit.messages import resolve_language


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
    p.add_argument("--input-format", dest="trace_format", choices=list(FORMATS),
                   help="the traces' format (default: detected from content)")
    p.add_argument("-c", "--checks", "--check", dest="selection", action="append", metavar="IDS",
                   help="checks to run, e.g. C1,C14 (default: every check a trace can speak to)")
    p.add_argument("-o", "--output-dir", metavar="DIR",
                   help="where reports go, relative to the working directory (default: .harness-audit beside the "
                        "traces); `-` writes the one --format to stdout instead")
    p.add_argument("--format", dest="report_format", metavar="FMTS",
                   help="output formats, comma-separated: md,json,sarif (default: all three)")
    p.add_argument("--fail-on", choices=["confirmed", "suspected", "never"], help="exit 1 at/above this verdict")
    p.add_argument("--baseline", metavar="OLD.json",
                   help="a JSON report of an earlier run: only findings not in it set the exit code")
    p.add_argument("--allow-empty", action="store_true", default=None,
                   help="exit 0 even when no selected check could be checked on these traces")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the report paths")
    p.add_argument("--verbose", action="store_true", help="show tracebacks of internal errors")
    return p


def run(ns: argparse.Namespace) -> int:
    """Check the traces, print, return the exit code."""
    from harness_audit.baseline import known_findings
    from harness_audit.cli.audit import baseline_counts, deliver, exit_code, output_dir_flag, stdout_format
    from harness_audit.trace_run import resolve_traces, trace_root

    if ns.selection is not None and any(not s.strip() for s in ns.selection):
        raise UsageError("--checks was given an empty value; expected ids like C1,C14")
    overrides: dict[str, Any] = {"output_dir": output_dir_flag(ns.output_dir), "fail_on": ns.fail_on,
                                 "allow_empty": ns.allow_empty}
    if ns.report_format is not None:
        formats = [f.strip() for f in ns.report_format.split(",") if f.strip()]
        bad = [f for f in formats if f not in REPORT_FORMATS]
        if bad or not formats:
            raise UsageError(f"unknown format {', '.join(map(repr, bad)) or repr(ns.report_format)} in --format "
                             f"(the output format; --input-format names the traces'); expected a comma-separated "
                             f"list of {', '.join(REPORT_FORMATS)}")
        overrides["formats"] = formats
    config, _ = build_config(trace_root(resolve_traces(ns.files)), overrides)
    fmt = stdout_format(ns, list(config.formats))
    result = trace(ns.files, ns.selection, overrides=overrides, fmt=ns.trace_format, write=fmt is None)
    language = resolve_language(ns.language or config.language)
    baseline = known_findings(ns.baseline) if ns.baseline else None
    deliver(result.report, list(result.paths), fmt=fmt, quiet=ns.quiet, language=language,
            baseline=baseline_counts(result.report, baseline))
    return exit_code(result.report, config.fail_on, allow_empty=config.allow_empty, language=language,
                     baseline=baseline)
