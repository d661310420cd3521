"""Command line: `main(argv) -> int` dispatches to one module per subcommand and maps errors to exit codes."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, NoReturn

from harness_audit.errors import HarnessAuditError, UsageError

SUBCOMMANDS = ("audit", "checks", "explain", "diff", "bench", "resume", "replay", "cancel", "trace", "host",
               "jobs", "job-output", "mcp")
RUN_COMMANDS = ("resume", "replay", "cancel")
JOB_COMMANDS = ("jobs", "job-output")


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


GLOBAL_FLAGS = ("-q", "--quiet", "--verbose", "--language", "-V", "--version", "--no-progress")
"""Flags every subcommand takes, accepted anywhere on the line (before or after the subcommand)."""
_LANGUAGES = ("auto", "en", "zh")


@dataclass(frozen=True, slots=True, kw_only=True)
class GlobalOptions:
    """The global flags, taken out of the command line wherever they stood."""

    quiet: bool = False
    """`-q`: print only the report paths (or nothing but the report on `-o -`)."""
    verbose: bool = False
    """`--verbose`: tracebacks of internal errors."""
    language: str | None = None
    """`--language auto|en|zh`, None when not given."""
    version: bool = False
    """`-V`: print the version."""
    no_progress: bool = False
    """`--no-progress`: no live progress on stderr."""


class CommandLine(NamedTuple):
    """A command line split into the global flags, the subcommand and the subcommand's own arguments."""

    options: GlobalOptions
    name: str
    args: list[str]


def split_command_line(argv: Sequence[str]) -> CommandLine:
    """Take the global flags out of `argv` wherever they stand; the first remaining word names the subcommand.

    `harness-audit -q checks`, `harness-audit checks -q` and `harness-audit --language zh explain C1` all work.
    Everything after `--` is left alone. A first word that is no subcommand starts an audit (`audit` may be
    written out to audit a directory named like a subcommand).
    """
    found: dict[str, Any] = {}
    rest: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        arg = items[i]
        if arg == "--":
            rest.extend(items[i:])
            break
        if arg in ("-q", "--quiet"):
            found["quiet"] = True
        elif arg == "--verbose":
            found["verbose"] = True
        elif arg in ("-V", "--version"):
            found["version"] = True
        elif arg == "--no-progress":
            found["no_progress"] = True
        elif arg == "--language" or arg.startswith("--language="):
            if arg == "--language":
                if i + 1 >= len(items):
                    raise UsageError("--language needs a value: auto, en or zh")
                i += 1
                value = items[i]
            else:
                value = arg.split("=", 1)[1]
            if value not in _LANGUAGES:
                raise UsageError(f"unknown language {value!r} in --language; expected auto, en or zh")
            found["language"] = value
        else:
            rest.append(arg)
        i += 1
    name = rest[0] if rest and rest[0] in SUBCOMMANDS else "audit"
    if rest and rest[0] == name:
        rest = rest[1:]
    return CommandLine(GlobalOptions(**found), name, rest)


def _apply_globals(ns: argparse.Namespace, options: GlobalOptions) -> argparse.Namespace:
    """Global flags win over (or fill in) what the subcommand's parser set."""
    ns.quiet = options.quiet or bool(getattr(ns, "quiet", False))
    ns.verbose = options.verbose or bool(getattr(ns, "verbose", False))
    ns.no_progress = options.no_progress
    if options.language is not None or not hasattr(ns, "language"):
        ns.language = options.language
    return ns


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code: 0 clean, 1 findings at/above --fail-on, 2 usage, 3 incomplete."""
    from harness_audit.messages import resolve_language, t

    raw = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in raw
    lang = resolve_language("auto")
    try:
        line = split_command_line(raw)
        lang = resolve_language(line.options.language)
        if line.options.version:
            from harness_audit import __version__

            print(f"harness-audit {__version__}")
            return 0
        name, args = line.name, line.args
        if name in RUN_COMMANDS:
            from harness_audit.cli import runs

            return runs.run(name, _apply_globals(runs.make_parser(name).parse_args(args), line.options))
        if name in JOB_COMMANDS:
            from harness_audit.cli import jobs

            return jobs.run(name, _apply_globals(jobs.make_parser(name).parse_args(args), line.options))
        # only the chosen subcommand is imported: the others pull in what an audit never needs (rich tables)
        module = importlib.import_module(f"harness_audit.cli.{name}")
        parser = module.make_parser()
        ns = parser.parse_intermixed_args(args) if name == "audit" else parser.parse_args(args)
        ns.argv = raw  # a background job re-runs the same command line
        return module.run(_apply_globals(ns, line.options))
    except _Exit as exc:
        return exc.status
    except UsageError as exc:
        print(f"harness-audit: {t('exit.error', lang, error=_one_line(exc))}", file=sys.stderr)
        return exc.exit_code
    except HarnessAuditError as exc:
        print(f"harness-audit: {t('exit.incomplete', lang, error=_one_line(exc))}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        # the reader went away (`explain C8 | head`): not an error of ours, and nothing more can be shown
        _silence_stdout()
        return SIGPIPE_EXIT
    except KeyboardInterrupt:
        print(f"harness-audit: {t('exit.interrupted', lang)}", file=sys.stderr)
        return 3
    except Exception as exc:  # isolation boundary of the CLI: an internal error is one line, not a traceback
        error = _one_line(f"{type(exc).__name__}: {exc}")
        print(f"harness-audit: {t('exit.internal', lang, error=error)}", file=sys.stderr)
        if verbose:
            traceback.print_exc()
        return 3


def _one_line(error: object) -> str:
    """An error as the one line the CLI prints: line breaks folded, other control characters escaped (`\\x85`
    and `\\u2028` end a line too), credential-looking text masked (a config value or an argument may be a key;
    the terminal and CI logs are no place for it)."""
    from harness_audit.redaction import mask_secrets

    text = " ".join(str(error).split("\n"))
    return mask_secrets("".join(c if c.isprintable() else c.encode("unicode_escape", "backslashreplace").decode()
                                for c in text))


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
