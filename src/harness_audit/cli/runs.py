"""`resume`, `replay` and `cancel`: what can be done with a model run's directory (`<output_dir>/runs/<run-id>`)."""

from __future__ import annotations

import argparse
import os
import stat
from pathlib import Path

from harness_audit.errors import UsageError, path_error
from harness_audit.messages import Msg, t
from harness_audit.workspace import user_path


def make_parser(name: str, lang: str = "en") -> argparse.ArgumentParser:
    """Parser of `resume`, `replay` or `cancel`, its help in `lang`."""
    from harness_audit.cli import ArgParser
    from harness_audit.cli._helpers import output_dir_default

    def h(key: str, **values: object) -> str:
        return t(f"help.{key}", lang, **values)

    p = ArgParser(prog=f"harness-audit {name}", lang=lang, description=h(f"{name}.description"))
    if name == "cancel":
        p.add_argument("run_dir", metavar="ID|RUN_DIR", help=h("cancel.target"))
        p.add_argument("--output-dir", metavar="DIR", help=h("cancel.output_dir", default=output_dir_default(lang, in_path=False)))
    else:
        p.add_argument("run_dir", metavar="RUN_DIR", help=h("runs.run_dir"))
    if name == "replay":
        p.add_argument("--rerun", action="store_true", help=h("replay.rerun"))
    if name == "resume":
        p.add_argument("--base-url", metavar="URL", help=h("resume.base_url"))
    if name in ("replay", "resume"):
        p.add_argument("--root", metavar="PATH", help=h("runs.root"))
    p.add_argument("-q", "--quiet", action="store_true", help=h("quiet"))
    return p


def _run_dir(raw: str) -> Path:
    path = user_path(raw, Msg("what.run_dir"))
    try:
        if path.name == "ledger.jsonl" and stat.S_ISREG(os.stat(path).st_mode):
            path = path.parent
        if not stat.S_ISREG(os.stat(path / "ledger.jsonl").st_mode):
            raise FileNotFoundError
        return path.resolve()
    except FileNotFoundError:
        raise UsageError("err.runs.not_run_dir", path=raw) from None
    except (OSError, ValueError, RuntimeError) as exc:
        raise path_error(Msg("what.run_dir"), raw, exc) from None


def run(name: str, ns: argparse.Namespace) -> int:
    from harness_audit.cli.audit import exit_code, print_result

    if name == "cancel":
        from harness_audit.jobs import is_job_id

        if is_job_id(ns.run_dir) and not Path(ns.run_dir).exists():
            return _cancel_job(ns)
    run_dir = _run_dir(ns.run_dir)
    if name == "cancel":
        from harness_audit.llm.engine import CANCEL_FILE

        try:
            (run_dir / CANCEL_FILE).write_text("cancel requested\n", encoding="utf-8")
        except OSError as exc:
            raise path_error(Msg("what.cancel_dir"), run_dir, exc) from None
        print(t("runs.cancel_requested", ns.lang, name=run_dir.name))
        return 0
    from harness_audit.llm.replay import load_run, replay_run, rerender, resume_run

    root = user_path(ns.root, Msg("what.audited_dir")) if ns.root else None
    if name == "replay" and not ns.rerun:
        report, paths = rerender(run_dir, root=root)
    elif name == "replay":
        report, paths = replay_run(run_dir, root=root)
    else:
        report, paths = resume_run(run_dir, root=root, base_url=ns.base_url)
    from harness_audit.messages import resolve_language

    language = resolve_language(ns.language) if getattr(ns, "language", None) else ns.lang
    print_result(report, paths, quiet=ns.quiet, language=language)
    return exit_code(report, load_run(run_dir).config.fail_on, language=language)


def _cancel_job(ns: argparse.Namespace) -> int:
    from harness_audit import jobs
    from harness_audit.cli.jobs import output_dir_of

    job = jobs.cancel(jobs.find(ns.run_dir, output_dir_of(ns)))
    if job.state in jobs.TERMINAL:
        print(t("runs.job_over", ns.lang, job_id=job.job_id, state=job.state_text(ns.lang)))
    else:
        print(t("runs.job_cancel_requested", ns.lang, job_id=job.job_id))
    return 0
