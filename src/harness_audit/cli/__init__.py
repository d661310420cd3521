"""Command line: `main(argv) -> int` dispatches to one module per subcommand and maps errors to exit codes."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from harness_audit.errors import HarnessAuditError, UsageError

SUBCOMMANDS = ("audit", "checks", "explain", "bench", "resume", "replay", "cancel", "trace", "host")
RUN_COMMANDS = ("resume", "replay", "cancel")


class ArgParser(argparse.ArgumentParser):
    """argparse that raises `UsageError` instead of exiting, so `main` always returns a code."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise _Exit(status)


class _Exit(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code: 0 clean, 1 findings at/above --fail-on, 2 usage, 3 incomplete."""
    args = list(sys.argv[1:] if argv is None else argv)
    name = args[0] if args and args[0] in SUBCOMMANDS else "audit"
    if args and args[0] == name:
        args = args[1:]
    if name == "audit" and args and args[0] in {"-V", "--version"}:
        from harness_audit import __version__

        print(f"harness-audit {__version__}")
        return 0
    verbose = "--verbose" in args
    try:
        if name in RUN_COMMANDS:
            from harness_audit.cli import runs

            return runs.run(name, runs.make_parser(name).parse_args(args))
        # only the chosen subcommand is imported: the others pull in what an audit never needs (rich tables)
        module = importlib.import_module(f"harness_audit.cli.{name}")
        parser = module.make_parser()
        ns = parser.parse_intermixed_args(args) if name == "audit" else parser.parse_args(args)
        return module.run(ns)
    except _Exit as exc:
        return exc.status
    except UsageError as exc:
        print(f"harness-audit: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except HarnessAuditError as exc:
        print(f"harness-audit: the audit could not complete: {exc}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        # the reader went away (`explain C8 | head`): not an error of ours, and nothing more can be shown
        _silence_stdout()
        return SIGPIPE_EXIT
    except KeyboardInterrupt:
        print("harness-audit: interrupted; no report was written", file=sys.stderr)
        return 3
    except Exception as exc:  # isolation boundary of the CLI: an internal error is one line, not a traceback
        print(f"harness-audit: internal error: {type(exc).__name__}: {exc} (rerun with --verbose for details)",
              file=sys.stderr)
        if verbose:
            traceback.print_exc()
        return 3


SIGPIPE_EXIT = 141
"""Exit status when the reader of our output closed the pipe (128 + SIGPIPE, what a shell reports for it)."""


def _silence_stdout() -> None:
    """Point stdout at the null device, so the interpreter's last flush cannot fail on the closed pipe again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (a test's capture): nothing to flush into a closed pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)


def console_main() -> NoReturn:
    """Entry point of the `harness-audit` console script.

    Exits without interpreter teardown (as mypy does): freeing millions of parsed-tree objects with
    parent links one by one takes seconds and changes nothing, since every report is already written
    atomically and the output streams are flushed here.
    """
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            _silence_stdout()
            code = code or SIGPIPE_EXIT
    os._exit(code)
