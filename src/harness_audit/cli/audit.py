"""`harness-audit [PATH] [SELECTION…] [flags]`: the audit itself."""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness_audit.api import audit, dropped_checks, output_dir, resolve_checks, resolve_root
from harness_audit.baseline import known_findings
from harness_audit.catalogue import parse_selection
from harness_audit.cli._helpers import cwd_output_dir, output_dir_default, output_dir_option
from harness_audit.config import FORMATS, AuditConfig, build_config
from harness_audit.errors import UsageError, path_error
from harness_audit.findings import CheckId, Finding, OutcomeStatus, Verdict
from harness_audit.messages import Msg, resolve_language, t
from harness_audit.progress import NO_PROGRESS, Progress
from harness_audit.report import Report
from harness_audit.workspace import user_path

if TYPE_CHECKING:
    from rich.console import Console

    from harness_audit.cli.live import TerminalProgress



PICKER_CANCELLED = 130
"""Exit status when the picker was cancelled (what a shell reports for Ctrl-C): no audit ran, no report."""


def make_parser(lang: str = "en") -> argparse.ArgumentParser:
    """Parser of the audit command, its help in `lang`."""
    from harness_audit.cli import ArgParser

    def h(key: str, **values: object) -> str:
        return t(f"help.{key}", lang, **values)

    p = ArgParser(prog="harness-audit", lang=lang, description=h("audit.description"), epilog=h("audit.epilog"))
    p.add_argument("targets", nargs="*", metavar="[PATH] [SELECTION] [FILE…]", help=h("audit.targets"))
    p.add_argument("-c", "--checks", "--check", dest="selection", action="append", metavar="IDS",
                   help=h("audit.checks"))
    p.add_argument("--engine", choices=["static", "llm", "hybrid"], help=h("audit.engine"))
    p.add_argument("--model", metavar="PROVIDER:NAME", help=h("audit.model"))
    p.add_argument("--base-url", metavar="URL", help=h("audit.base_url"))
    p.add_argument("--stream", action="store_true", default=None, help=h("audit.stream"))
    p.add_argument("--estimate", action="store_true", help=h("audit.estimate"))
    p.add_argument("--concurrency", type=int, metavar="N", help=h("audit.concurrency"))
    p.add_argument("--exclude", action="append", metavar="DIRS", help=h("audit.exclude"))
    p.add_argument("--extend-exclude", action="append", metavar="DIRS", help=h("audit.extend_exclude"))
    p.add_argument("-o", "--output-dir", metavar="DIR", help=h("audit.output_dir", default=output_dir_default(lang, in_path=True)))
    p.add_argument("--format", metavar="FMTS", help=h("audit.format"))
    p.add_argument("--fail-on", choices=["confirmed", "suspected", "never"], help=h("fail_on"))
    p.add_argument("--baseline", metavar="OLD.json", help=h("audit.baseline"))
    p.add_argument("--no-suppressions", dest="suppressions", action="store_false", default=None,
                   help=h("audit.no_suppressions"))
    p.add_argument("--allow-empty", action="store_true", default=None, help=h("audit.allow_empty"))
    p.add_argument("--preview", action="store_true", default=None, help=h("audit.preview"))
    p.add_argument("--min-precision", choices=["low", "medium", "high"], help=h("audit.min_precision"))
    p.add_argument("--priority-floor", type=int, choices=[1, 2], help=h("audit.priority_floor"))
    p.add_argument("--max-file-bytes", type=int, metavar="N", help=h("audit.max_file_bytes"))
    p.add_argument("--language", choices=["auto", "en", "zh"], help=h("language"))
    p.add_argument("--no-cache", action="store_true", help=h("audit.no_cache"))
    p.add_argument("--trace", dest="traces", action="append", metavar="FILE", help=h("audit.trace"))
    p.add_argument("--background", action="store_true", default=None, help=h("audit.background"))
    p.add_argument("-q", "--quiet", action="store_true", help=h("quiet"))
    p.add_argument("--verbose", action="store_true", help=h("verbose"))
    return p


def _reads_as_selection(token: str) -> bool:
    try:
        parse_selection([token])
    except UsageError:
        return False
    return True


def _file_arguments(targets: list[str]) -> tuple[list[str], list[Path]]:
    """Split off the positionals that are files (a pre-commit hook passes the changed files)."""
    files: list[Path] = []
    rest: list[str] = []
    for target in targets:
        try:
            is_file = not _reads_as_selection(target) and Path(target).is_file()
        except (OSError, ValueError):
            is_file = False
        (files.append(Path(target)) if is_file else rest.append(target))  # type: ignore[func-returns-value]
    return rest, files


def _only_files(report: Report, root: Path, files: list[Path]) -> Report:
    """The report as far as `files` go: the whole tree is analysed, only findings in these files count."""
    import dataclasses

    wanted: set[str] = set()
    for f in files:
        resolved = f.resolve()
        if not resolved.is_relative_to(root):
            raise UsageError("err.audit.file_outside", file=str(f), root=str(root))
        wanted.add(resolved.relative_to(root).as_posix())
    return dataclasses.replace(report, findings=tuple(f for f in report.findings if f.file in wanted),
                               withheld=tuple(w for w in report.withheld if w.finding.file in wanted))


def _split_targets(targets: list[str]) -> tuple[str, list[str]]:
    """First positional is PATH unless it reads as a selection and no such path exists."""
    if not targets:
        return ".", []
    first, rest = targets[0], targets[1:]
    if _reads_as_selection(first) and not Path(first).exists():  # parsed first: `exists` raises on a 5,000-char path
        return ".", targets
    return first, rest


def _list(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [v.strip() for raw in values for v in raw.split(",") if v.strip()]


def _overrides(ns: argparse.Namespace) -> dict[str, Any]:
    formats = _list([ns.format]) if ns.format is not None else None
    if formats is not None:
        bad = [f for f in formats if f not in FORMATS]
        if bad or not formats:
            raise UsageError("err.format.unknown", bad=", ".join(map(repr, bad)) or repr(ns.format),
                             formats=", ".join(FORMATS))
    return {
        "engine": ns.engine, "concurrency": ns.concurrency, "exclude_paths": _list(ns.exclude),
        "extend_exclude_paths": _list(ns.extend_exclude), "output_dir": output_dir_flag(ns.output_dir),
        "formats": formats,
        "fail_on": ns.fail_on, "priority_floor": ns.priority_floor, "max_file_bytes": ns.max_file_bytes,
        "language": ns.language, "cache": False if ns.no_cache else None,
        "model": ns.model, "base_url": ns.base_url, "stream": ns.stream, "allow_empty": ns.allow_empty,
        "preview": ns.preview, "min_precision": ns.min_precision,
        "suppressions": ns.suppressions,
    }


def output_dir_flag(value: str | None) -> str | None:
    """`--output-dir` as given on the command line: relative to the working directory, like every path flag."""
    if value is None or value == "-":
        return None
    try:
        return str(user_path(value, Msg("what.output_dir")).resolve())
    except (OSError, ValueError, RuntimeError) as exc:
        raise path_error(Msg("what.output_dir"), value, exc) from None


def stdout_format(ns: argparse.Namespace, formats: list[str]) -> str | None:
    """The one format to write to stdout for `-o -`, or None when reports go to files."""
    if ns.output_dir != "-":
        return None
    if len(formats) != 1:
        raise UsageError("err.format.stdout_one", n=len(formats), formats=", ".join(formats))
    return formats[0]


def deliver(report: Report, paths: list[Path], *, fmt: str | None, quiet: bool, language: str = "en",
            **final: Any) -> None:
    """The report on stdout (`-o -`, the summary then goes to stderr), or the report paths and a summary."""
    if fmt is None:
        print_result(report, paths, quiet=quiet, language=language, **final)
        return
    from harness_audit.render import RENDERERS

    sys.stdout.write(RENDERERS[fmt](report))
    sys.stdout.flush()
    if not quiet:
        from harness_audit.cli._helpers import console
        from harness_audit.cli.live import print_summary

        print_summary(console(stderr=True, highlight=False), report, [], language, **final)


def progress_display(ns: argparse.Namespace, checks: tuple[CheckId, ...] | None, config: AuditConfig,
                     language: str) -> TerminalProgress | None:
    """The live progress display, unless `-q`, `--no-progress` or nothing is selected yet."""
    if ns.quiet or getattr(ns, "no_progress", False) or not checks:
        return None
    from harness_audit.cli.live import TerminalProgress
    from harness_audit.llm.run import price_of

    return TerminalProgress(checks, engine=config.engine, language=language, price=price_of(config))


def _console() -> Console:
    from harness_audit.cli._helpers import console

    return console(stderr=False, highlight=False)


def print_result(report: Report, paths: list[Path], *, quiet: bool, language: str = "en", **final: Any) -> None:
    """The report paths (quiet), or a terminal summary of the report ending with the final line."""
    if quiet:
        for p in paths:
            print(p)
    else:
        from harness_audit.cli.live import print_summary

        print_summary(_console(), report, paths, language, **final)


def empty_reason(report: Report, language: str = "en") -> str | None:
    """Why nothing was audited (0 files analysed, or every selected check not covered), or None."""
    from harness_audit.messages import t

    if report.meta.files_scanned == 0:
        return t("exit.no_files", language, root=report.meta.root)
    if report.outcomes and all(o.status is OutcomeStatus.NOT_COVERED for o in report.outcomes):
        return t("exit.all_not_covered", language, checks=", ".join(o.check.value for o in report.outcomes))
    return None


def gated(report: Report, baseline: dict[str, str] | None) -> list[Finding]:
    """The findings that decide the exit code: all, or with a baseline those not in it or whose verdict moved."""
    if baseline is None:
        return list(report.findings)
    return [f for f in report.findings if baseline.get(f.fingerprint) != f.verdict.value]


def exit_code(report: Report, fail_on: str, *, allow_empty: bool = True, language: str = "en",
              baseline: dict[str, str] | None = None) -> int:
    """0 clean, 1 findings at/above `fail_on`, 3 when the run did not complete or (unless allowed) audited nothing.

    An empty audit prints its one-line reason on stderr: a CI gate must not go green on nothing. With a
    `baseline` (fingerprint → verdict of an earlier report), only new findings and moved verdicts count.
    """
    if report.meta.state != "complete":
        return 3
    if not allow_empty and (reason := empty_reason(report, language)) is not None:
        print(f"harness-audit: {reason}", file=sys.stderr)
        return 3
    if fail_on == "never":
        return 0
    levels = {Verdict.CONFIRMED} if fail_on == "confirmed" else {Verdict.CONFIRMED, Verdict.SUSPECTED}
    return 1 if any(f.verdict in levels for f in gated(report, baseline)) else 0


def run(ns: argparse.Namespace, *, progress: Progress = NO_PROGRESS, in_job: bool = False) -> int:
    """Resolve path, selection and config; audit (or start a background job); print; return the exit code.

    `in_job`: this process is the background job itself, which already holds the output directory's lock.
    """
    targets, files = _file_arguments(ns.targets)
    path, positional = _split_targets(targets)
    tokens = [*positional, *(ns.selection or [])]
    if ns.selection is not None and any(not s.strip() for s in ns.selection):
        raise UsageError("err.audit.empty_checks_flag")
    overrides = _overrides(ns)
    root = resolve_root(path)
    if not tokens:
        config, _ = build_config(root, overrides)
        ns.lang = language = resolve_language(config.language)
        if resolve_checks(None, config) is None:
            if not (sys.stdin.isatty() and sys.stderr.isatty()):
                raise UsageError("exit.no_selection")
            from harness_audit.cli.picker import PickerCancelled, pick

            try:
                tokens = pick(language)
            except PickerCancelled:
                print(f"harness-audit: {t('exit.picker_cancelled', language)}", file=sys.stderr)
                return PICKER_CANCELLED
    if ns.estimate:
        from harness_audit.llm.estimate import estimate, render_estimate

        config, _ = build_config(root, overrides)
        ns.lang = resolve_language(config.language)
        checks = resolve_checks(tokens or None, config)
        if checks is None:
            raise UsageError("err.audit.estimate_needs_selection")
        print(render_estimate(estimate(root, checks, config)))
        return 0
    config, _ = build_config(root, overrides)
    ns.lang = language = resolve_language(config.language)
    if (ns.background or (config.background and ns.background is None)) and not in_job:
        return _start_job(ns, root, tokens, config)
    from harness_audit.jobs import audit_lock

    fmt = stdout_format(ns, list(config.formats))
    baseline = known_findings(ns.baseline) if ns.baseline else None
    for check, why in dropped_checks(tokens or None, config):
        print(f"harness-audit: {t('summary.dropped', language, check=check, why=why)}", file=sys.stderr)
    display = None if in_job else progress_display(ns, resolve_checks(tokens or None, config), config, language)
    # the caller's observers (a background job's log) hear the same events as the terminal display
    observers = Progress([*([display] if display else []), progress.emit])
    with display or contextlib.nullcontext(), contextlib.nullcontext() if in_job else audit_lock(
            output_dir(root, config)):
        result = audit(root, tokens or None, overrides=overrides, traces=ns.traces or (), write=fmt is None,
                       progress=observers)
    # file arguments (a pre-commit hook): the tree is analysed whole, the changed files decide the outcome
    report = _only_files(result.report, root, files) if files else result.report
    deliver(report, list(result.paths), fmt=fmt, quiet=ns.quiet, language=language,
            baseline=baseline_counts(report, baseline))
    return exit_code(report, config.fail_on, allow_empty=config.allow_empty, language=language,
                     baseline=baseline)


def baseline_counts(report: Report, baseline: dict[str, str] | None) -> tuple[int, int] | None:
    """(new, already known) findings against a baseline, for the final line."""
    if baseline is None:
        return None
    new = len(gated(report, baseline))
    return new, len(report.findings) - new


def _start_job(ns: argparse.Namespace, root: Path, tokens: list[str], config: AuditConfig) -> int:
    """Check what the job will need, start it detached, print its id and how to follow it."""
    from harness_audit import jobs

    checks = resolve_checks(tokens or None, config)
    if checks is None:
        raise UsageError("err.audit.background_needs_selection")
    out = output_dir(root, config)
    # the job runs in the current directory: relative paths in its command line mean what they mean here
    argv = [a for a in ns.argv if a != "--background"]
    job = jobs.start(argv, cwd=Path.cwd(), output_dir=out, target=root, checks=[c.value for c in checks],
                     engine=config.engine)
    flag = output_dir_option(out, cwd_output_dir())
    lang = ns.lang
    print(f"job: {job.job_id}")
    if not ns.quiet:
        print(t("jobs.started", lang, engine=config.engine, root=root, checks=", ".join(c.value for c in checks)))
        print(t("jobs.follow", lang, command=f"harness-audit job-output {job.job_id}{flag} --follow"))
        print(t("jobs.cancel", lang, command=f"harness-audit cancel {job.job_id}{flag}"))
    return 0


def parse_job_line(argv: list[str]) -> argparse.Namespace:
    """A background job's command line (as `harness-audit` got it, less `--background`), parsed as `main` would."""
    import dataclasses

    from harness_audit.cli import _apply_globals, split_command_line

    line = split_command_line(argv)
    # nobody watches a job's terminal: its progress goes to the job's log through the progress stream
    options = dataclasses.replace(line.options, no_progress=True)
    ns = _apply_globals(make_parser().parse_intermixed_args(line.args), options)
    ns.argv = list(argv)
    return ns


def write_cancelled(argv: list[str], progress: Progress) -> list[str]:
    """For a background job cancelled inside the static engine: the report with every check cancelled."""
    from harness_audit.api import write_cancelled as cancelled_report

    ns = parse_job_line(argv)
    path, positional = _split_targets(ns.targets)
    tokens = [*positional, *(ns.selection or [])]
    result = cancelled_report(path, tokens or None, overrides=_overrides(ns), progress=progress)
    return [str(p) for p in result.paths]


def selected(ns: argparse.Namespace) -> tuple[CheckId, ...]:
    """The explicit selection of a parsed command line (for tests)."""
    _, positional = _split_targets(ns.targets)
    return parse_selection([*positional, *(ns.selection or [])])
