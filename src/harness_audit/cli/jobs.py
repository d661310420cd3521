"""`harness-audit jobs` and `harness-audit job-output ID [--follow]`: background audits (`--background`)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from harness_audit.cli._helpers import cwd_output_dir, output_dir_default
from harness_audit.messages import t


def make_parser(name: str, lang: str = "en") -> argparse.ArgumentParser:
    """Parser of `jobs` or `job-output`, its help in `lang`."""
    from harness_audit.cli import ArgParser

    def h(key: str, **values: object) -> str:
        return t(f"help.{key}", lang, **values)

    if name == "jobs":
        p = ArgParser(prog="harness-audit jobs", lang=lang, description=h("jobs.description"))
    else:
        p = ArgParser(prog="harness-audit job-output", lang=lang, description=h("job_output.description"))
        p.add_argument("job_id", metavar="ID", help=h("job_output.id"))
        p.add_argument("-f", "--follow", action="store_true", help=h("job_output.follow"))
        p.add_argument("--timeout", type=float, metavar="S", help=h("job_output.timeout"))
    p.add_argument("--output-dir", metavar="DIR", help=h("jobs.output_dir", default=output_dir_default(lang, in_path=False)))
    p.add_argument("--json", action="store_true", help=h("jobs.json"))
    return p


def _pad(text: str, width: int) -> str:
    """`text` padded to `width` terminal columns (a CJK character takes two)."""
    from harness_audit.messages import pad

    return pad(text, width)


def output_dir_of(ns: argparse.Namespace) -> Path:
    """`--output-dir` (against the current directory) or the default."""
    return Path(ns.output_dir).expanduser().absolute() if ns.output_dir else cwd_output_dir()


def run(name: str, ns: argparse.Namespace) -> int:
    """List the jobs, or print one job's output; exit 0, or 3 when a followed job did not complete."""
    from harness_audit import jobs

    out = output_dir_of(ns)
    lang = ns.lang
    if name == "jobs":
        listed = jobs.list_jobs(out)
        if ns.json:
            print(json.dumps([j.to_json() for j in listed], indent=1))
        elif not listed:
            print(t("jobs.none", lang, path=out))
        for job in [] if ns.json else listed:
            print(f"{job.job_id}  {_pad(job.state_text(lang), 10)}  {job.started_at}  {','.join(job.checks):<20}  "
                  f"{job.progress_text(lang)}  {job.target}")
        return 0
    job_dir = jobs.find(ns.job_id, out)
    since = 0
    deadline = None if ns.timeout is None else time.monotonic() + ns.timeout
    while True:
        lines, since, job = jobs.output(job_dir, since=since, lang=lang)
        if not ns.json:
            for line in lines:
                print(line, flush=True)
        over = job.state in jobs.TERMINAL
        if over or not ns.follow or (deadline is not None and time.monotonic() >= deadline):
            break
        time.sleep(0.2)
    if ns.json:
        print(json.dumps({**job.to_json(), "lines": [jobs.describe(t, e) for t, e in jobs.events(job_dir)]},
                         indent=1))
    elif over:
        for line in jobs.final_lines(job, lang):
            print(line)
    else:
        print(f"{job.job_id} {job.state_text(lang)}{t('jobs.line.because', lang, detail=job.progress_text(lang))}")
    return 0 if not ns.follow or job.state in ("complete", "incomplete") else 3
