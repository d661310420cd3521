"""`resume`, `replay` and `cancel`: what can be done with a model run's directory (`<output_dir>/runs/<run-id>`)."""

from __future__ import annotations

import argparse
import os
import stat
from pathlib import Path

from harness_audit.errors import UsageError, path_error
from harness_audit.workspace import user_path


def make_parser(name: str) -> argparse.ArgumentParser:
    from harness_audit.cli import ArgParser

    helps = {
        "resume": "continue a cancelled or crashed llm/hybrid run: finished checks are kept, the rest run again",
        "replay": "re-render a run's report from its ledger; with --rerun, re-run the engine on the recorded "
                  "responses (no provider)",
        "cancel": "stop a background job (job-…) or a running llm/hybrid audit (its run directory); it writes a "
                  "partial report marked cancelled",
    }
    p = ArgParser(prog=f"harness-audit {name}", description=helps[name])
    if name == "cancel":
        p.add_argument("run_dir", metavar="ID|RUN_DIR", help="a job id, or the run directory holding ledger.jsonl")
        p.add_argument("--output-dir", metavar="DIR",
                       help="where the job lives (default: the output directory configured for .)")
    else:
        p.add_argument("run_dir", metavar="RUN_DIR", help="the run directory holding ledger.jsonl")
    if name == "replay":
        p.add_argument("--rerun", action="store_true", help="re-run the engine against a replay model")
    if name == "resume":
        p.add_argument("--base-url", metavar="URL",
                       help="send the remaining requests to this endpoint instead (the same provider protocol)")
    if name in ("replay", "resume"):
        p.add_argument("--root", metavar="PATH",
                       help="the audited directory (default: the one holding the run's output directory; the path "
                            "a ledger names is never trusted)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only the report paths")
    return p


def _run_dir(raw: str) -> Path:
    path = user_path(raw, "a run directory")
    try:
        if path.name == "ledger.jsonl" and stat.S_ISREG(os.stat(path).st_mode):
            path = path.parent
        if not stat.S_ISREG(os.stat(path / "ledger.jsonl").st_mode):
            raise FileNotFoundError
        return path.resolve()
    except FileNotFoundError:
        raise UsageError(f"{raw!r} is not a run directory (no ledger.jsonl in it); model runs are kept under "
                         "<output_dir>/runs/<run-id>") from None
    except (OSError, ValueError, RuntimeError) as exc:
        raise path_error("a run directory", raw, exc) from None


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
            raise path_error("the run directory to cancel", run_dir, exc) from None
        print(f"cancel requested for {run_dir.name}; the run stops its requests and writes a partial report")
        return 0
    from harness_audit.llm.replay import load_run, replay_run, rerender, resume_run

    root = user_path(ns.root, "the audited directory") if ns.root else None
    if name == "replay" and not ns.rerun:
        report, paths = rerender(run_dir, root=root)
    elif name == "replay":
        report, paths = replay_run(run_dir, root=root)
    else:
        report, paths = resume_run(run_dir, root=root, base_url=ns.base_url)
    from harness_audit.messages import resolve_language

    print_result(report, paths, quiet=ns.quiet, language=resolve_language(getattr(ns, "language", None)))
    return exit_code(report, load_run(run_dir).config.fail_on)


def _cancel_job(ns: argparse.Namespace) -> int:
    from harness_audit import jobs
    from harness_audit.cli.jobs import output_dir_of

    job = jobs.cancel(jobs.find(ns.run_dir, output_dir_of(ns)))
    if job.state in jobs.TERMINAL:
        print(f"{job.job_id} is already over ({job.state}); nothing to cancel")
    else:
        print(f"cancel requested for {job.job_id}; it stops and writes a partial report marked cancelled "
              f"(harness-audit job-output {job.job_id} --follow)")
    return 0
