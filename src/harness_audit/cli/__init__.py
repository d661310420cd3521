"""Command line: `main(argv) -> int` dispatches to one module per subcommand and maps errors to exit codes."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

from harness_audit.errors import HarnessAuditError, UsageError
from harness_audit.messages import Msg, match_stored, t

SUBCOMMANDS = ("audit", "checks", "explain", "diff", "bench", "resume", "replay", "cancel", "trace", "host",
               "jobs", "job-output", "mcp")
RUN_COMMANDS = ("resume", "replay", "cancel")
JOB_COMMANDS = ("jobs", "job-output")


_WRAP_UNIT = re.compile(r"\s+|[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]"
                        r"[\u3000-\u303f\uff01\uff09\uff0c\uff1a\uff1b\uff1f,:;!?)]*|"
                        r"[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef\u3000-\u303f]+")
"""What a line may break between: spaces, each CJK character (with the closing punctuation after it, full-width or
ASCII, so no line starts with `:` or `,`), and runs of anything else (a word, a flag, a path)."""


def _columns(text: str) -> int:
    from harness_audit.messages import columns

    return columns(text)


def wrap_wide(text: str, width: int) -> list[str]:
    """`text` wrapped to `width` terminal columns, breaking between CJK characters as well as at spaces (textwrap
    breaks only at spaces and counts a CJK character as one column, so Chinese lines ran past the terminal)."""
    lines: list[str] = []
    line, used, space = "", 0, False
    for unit in _WRAP_UNIT.findall(" ".join(text.split())):
        if unit.isspace():
            space = bool(line)
            continue
        size = _columns(unit)
        gap = 1 if space else 0
        if line and used + gap + size > width:
            lines.append(line)
            line, used = unit, size
        else:
            line += " " * gap + unit
            used += gap + size
        space = False
    if line:
        lines.append(line)
    return lines


class WideTextHelpFormatter(argparse.HelpFormatter):
    """argparse's help layout with `wrap_wide` for descriptions, epilogs and option help (Chinese text)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return wrap_wide(text, width)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(indent + line for line in wrap_wide(text, width - len(indent)))


class ArgParser(argparse.ArgumentParser):
    """argparse that raises `UsageError` instead of exiting, so `main` always returns a code, and speaks `lang`.

    Every help text, description and epilog comes from the catalogue (`messages._help`); so do the section titles,
    `-h`'s own help and argparse's error messages. The usage line stays as argparse writes it.
    """

    def __init__(self, *args: Any, lang: str = "en", **kwargs: Any) -> None:
        if lang == "zh":
            kwargs.setdefault("formatter_class", WideTextHelpFormatter)
        super().__init__(*args, add_help=False, **kwargs)
        self.lang = lang
        """The language of the help and the errors."""
        self._positionals.title = t("help.section.positionals", lang)
        self._optionals.title = t("help.section.options", lang)
        self.add_argument("-h", "--help", action="help", default=argparse.SUPPRESS, help=t("help.h", lang))

    def error(self, message: str) -> NoReturn:
        raise UsageError("err.usage", detail=argparse_message(message), prog=self.prog)

    def add_subparsers(self, **kwargs: Any) -> Any:
        kwargs.setdefault("title", t("help.section.verbs", self.lang))
        return super().add_subparsers(**kwargs)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            sys.stderr.write(message)
        raise _Exit(status)


class _Exit(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


_ARGPARSE_OUTER = (
    (re.compile(r"the following arguments are required: (?P<args>.+)", re.S), "argparse.required"),
    (re.compile(r"unrecognized arguments: (?P<args>.+)", re.S), "argparse.unrecognized"),
    (re.compile(r"one of the arguments (?P<args>.+) is required", re.S), "argparse.one_of"),
    (re.compile(r"ambiguous option: (?P<option>\S+) could match (?P<matches>.+)", re.S), "argparse.ambiguous"),
)
_ARGPARSE_INNER = (
    (re.compile(r"invalid choice: (?P<value>.+) \(choose from (?P<choices>.+)\)", re.S), "argparse.invalid_choice"),
    (re.compile(r"invalid (?P<type>\w+) value: (?P<value>.+)", re.S), "argparse.invalid_value"),
    (re.compile(r"expected one argument"), "argparse.expected_one"),
    (re.compile(r"expected at most one argument"), "argparse.expected_at_most_one"),
    (re.compile(r"expected at least one argument"), "argparse.expected_at_least_one"),
    (re.compile(r"expected (?P<n>\d+) arguments?"), "argparse.expected_n"),
    (re.compile(r"not allowed with argument (?P<other>.+)", re.S), "argparse.not_allowed_with"),
    (re.compile(r"ignored explicit argument (?P<value>.+)", re.S), "argparse.ignored_explicit"),
)
"""argparse's own error messages (Python 3.11–3.13), so they reach the user in the chosen language."""


def argparse_message(message: str) -> Msg | str:
    """An argparse error message as a catalogue message; one we do not know stays as argparse wrote it."""
    for pattern, key in _ARGPARSE_OUTER:
        if m := pattern.fullmatch(message):
            return Msg(key, **m.groupdict())
    if m := re.fullmatch(r"argument (?P<name>[^:]+): (?P<inner>.+)", message, re.S):
        inner: Msg | str = m.group("inner")
        for pattern, key in _ARGPARSE_INNER:
            if n := pattern.fullmatch(m.group("inner")):
                inner = Msg(key, **n.groupdict())
                break
        else:
            inner = match_stored(m.group("inner"), "arg.") or inner  # our own `type=` functions' refusals
        return Msg("argparse.argument", name=m.group("name"), message=inner)
    return message


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
                    raise UsageError("err.language.missing")
                i += 1
                value = items[i]
            else:
                value = arg.split("=", 1)[1]
            if value not in _LANGUAGES:
                raise UsageError("err.language.unknown", value=value)
            found["language"] = value
        else:
            rest.append(arg)
        i += 1
    name = rest[0] if rest and rest[0] in SUBCOMMANDS else "audit"
    if rest and rest[0] == name:
        rest = rest[1:]
    return CommandLine(GlobalOptions(**found), name, rest)


def _apply_globals(ns: argparse.Namespace, options: GlobalOptions, lang: str = "en") -> argparse.Namespace:
    """Global flags win over (or fill in) what the subcommand's parser set; `ns.lang` is the command line's
    language (`cli_language`), which a subcommand may refine (an audit, from its configuration)."""
    ns.quiet = options.quiet or bool(getattr(ns, "quiet", False))
    ns.verbose = options.verbose or bool(getattr(ns, "verbose", False))
    ns.no_progress = options.no_progress
    if options.language is not None or not hasattr(ns, "language"):
        ns.language = options.language
    ns.lang = lang
    return ns


def _run_language(ns: argparse.Namespace | None, fallback: str) -> str:
    """The language a subcommand settled on (`ns.lang`), else `fallback`."""
    lang = getattr(ns, "lang", None)
    return lang if isinstance(lang, str) else fallback


def cli_language(options: GlobalOptions, cwd: Path | None = None) -> str:
    """The language of the command line's own text (help, errors, the subcommands' output): `--language`, else the
    `language` configured for the working directory, else the locale, else English.

    An audit then follows its audited directory's configuration (`cli.audit`); a configuration that cannot be read
    here is ignored, since the command itself reports it.
    """
    from harness_audit.messages import LANGUAGES, resolve_language

    if options.language is not None:
        return resolve_language(options.language)
    from harness_audit.config import load_file_config

    try:
        configured = load_file_config(cwd or Path.cwd())[0].get("language")
    except (HarnessAuditError, OSError, ValueError, RuntimeError):
        configured = None
    return resolve_language(configured if configured in LANGUAGES else "auto")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code: 0 clean, 1 findings at/above --fail-on, 2 usage, 3 incomplete.

    Errors are printed by one printer, in the language of the run: the audit's (from its configuration and flags)
    once known, else the command line's (`cli_language`).
    """
    from harness_audit.messages import resolve_language

    raw = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in raw
    lang = resolve_language("auto")
    ns: argparse.Namespace | None = None
    try:
        line = split_command_line(raw)
        lang = cli_language(line.options)
        if line.options.version:
            from harness_audit import __version__

            print(f"harness-audit {__version__}")
            return 0
        name, args = line.name, line.args
        if name in RUN_COMMANDS:
            from harness_audit.cli import runs

            ns = _apply_globals(runs.make_parser(name, lang).parse_args(args), line.options, lang)
            return runs.run(name, ns)
        if name in JOB_COMMANDS:
            from harness_audit.cli import jobs

            ns = _apply_globals(jobs.make_parser(name, lang).parse_args(args), line.options, lang)
            return jobs.run(name, ns)
        # only the chosen subcommand is imported: the others pull in what an audit never needs (rich tables)
        module = importlib.import_module(f"harness_audit.cli.{name}")
        parser = module.make_parser(lang)
        parsed = parser.parse_intermixed_args(args) if name == "audit" else parser.parse_args(args)
        parsed.argv = raw  # a background job re-runs the same command line
        ns = _apply_globals(parsed, line.options, lang)
        return module.run(ns)
    except _Exit as exc:
        return exc.status
    except UsageError as exc:
        lang = _run_language(ns, lang)
        print(f"harness-audit: {t('exit.error', lang, error=_one_line(exc.message(lang)))}", file=sys.stderr)
        return exc.exit_code
    except HarnessAuditError as exc:
        lang = _run_language(ns, lang)
        print(f"harness-audit: {t('exit.incomplete', lang, error=_one_line(exc.message(lang)))}", file=sys.stderr)
        return exc.exit_code
    except BrokenPipeError:
        # the reader went away (`explain C8 | head`): not an error of ours, and nothing more can be shown
        _silence_stdout()
        return SIGPIPE_EXIT
    except KeyboardInterrupt:
        print(f"harness-audit: {t('exit.interrupted', _run_language(ns, lang))}", file=sys.stderr)
        return 3
    except Exception as exc:  # isolation boundary of the CLI: an internal error is one line, not a traceback
        error = _one_line(f"{type(exc).__name__}: {exc}")
        print(f"harness-audit: {t('exit.internal', _run_language(ns, lang), error=error)}", file=sys.stderr)
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
