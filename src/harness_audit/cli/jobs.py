"""`harness-audit jobs` and `harness-audit job-output ID [--follow]`: background audits (`--background`)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from harness_audit.cli._helpers import OUTPUT_DIR_DEFAULT, cwd_output_dir


def make_parser(name: str) -> argparse.ArgumentParser:
    """Parser of `jobs` or `job-output`."""
    from harness_audit.cli import ArgParser

    if name == "jobs":
        p = ArgParser(prog="harness-audit jobs",
                      description="list background audits: id, target, checks, state, progress, start time")
    else:
        p = ArgParser(prog="harness-audit job-output",
                      description="print a background audit's progress; when it is over, its state and reports")
        p.add_argument("job_id", metavar="ID", help="the job id `--background` printed (job-…)")
        p.add_argument("-f", "--follow", action="store_true", help="keep printing until the job is over")
        p.add_argument("--timeout", type=float, metavar="S", help="with --follow: give up after S seconds (exit 3)")
    p.add_argument("--output-dir", metavar="DIR",
                   help="the output directory the audit was started with, relative to the working directory "
                        f"(default: {OUTPUT_DIR_DEFAULT} in the working directory)")
    p.add_argument("--json", action="store_true", help="print JSON")
    return p


def output_dir_of(ns: argparse.Namespace) -> Path:
    """`--output-dir` (against the current directory) or the default."""
    return Path(ns.output_dir).expanduser().absolute() if ns.output_dir else cwd_output_dir()


def run(name: str, ns: argparse.Namespace) -> int:
    """List the jobs, or print one job's output; exit 0, or 3 when a followed job did not complete."""
    from harness_audit import jobs

    out = output_dir_of(ns)
    if name == "jobs":
        listed = jobs.list_jobs(out)
        if ns.json:
            print(json.dumps([j.to_json() for j in listed], indent=1))
        elif not listed:
            print(f"no background audits under {out}")
        for job in [] if ns.json else listed:
            print(f"{job.job_id}  {job.state:<10}  {job.started_at}  {','.join(job.checks):<20}  {job.progress}  "
                  f"{job.target}")
        return 0
    job_dir = jobs.find(ns.job_id, out)
    since = 0
    deadline = None if ns.timeout is None else time.monotonic() + ns.timeout
    while True:
        lines, since, job = jobs.output(job_dir, since=since)
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
        for line in jobs.final_lines(job):
            print(line)
    else:
        print(f"{job.job_id} {job.state}: {job.progress}")
    return 0 if not ns.follow or job.state in ("complete", "incomplete") else 3
