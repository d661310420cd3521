"""`harness-audit host …`: the host-model protocol as shell verbs, for agent hosts that run commands but speak no MCP.

`host begin PATH SELECTION` prints `run: ID` and `output-dir: DIR`; `host landmark|next|report|dismiss|finish|status
RUN …` find the run by that id under `--output-dir`. A run's state (`runs/ID/ledger.jsonl`) and, at `finish`, its
reports go to one output directory: `begin --output-dir DIR` (relative to the working directory), else the configured
`output_dir`, else `.harness-audit` in PATH. The later verbs look under their own `--output-dir`, else the working
directory's default (the configured `output_dir`, else `.harness-audit`, in the working directory), so every command
printed back names the run's output directory as an absolute path whenever it is not that default. Each prints plain
text for a model to read, or JSON with `--json`. A bad call exits 2 with a one-line reason; a refused report also
exits 2 and prints the refusal reason and its fix. Nothing here decides anything: every step is `harness_audit.host`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness_audit.cli._helpers import OUTPUT_DIR_DEFAULT, cwd_output_dir, output_dir_option
from harness_audit.errors import UsageError, path_error
from harness_audit.findings import LandmarkKind
from harness_audit.workspace import user_path

_WHERE = ("A run's state and, at `finish`, its md/json/sarif reports go to one output directory: `begin "
          "--output-dir DIR`, else the configured `output_dir`, else .harness-audit in PATH. The later verbs look "
          "under their --output-dir, else the working directory's default; the commands each verb prints carry "
          "--output-dir whenever the run is elsewhere.")
"""Where a host run's files go, as every help of `host` says it (SKILL.md and docs/host.md say the same)."""

VERBS = ("begin", "landmark", "dismiss-landmark", "next", "report", "dismiss", "finish", "status")


def make_parser() -> argparse.ArgumentParser:
    """Parser of `harness-audit host VERB …`."""
    from harness_audit.cli import ArgParser

    p = ArgParser(prog="harness-audit host",
                  description="Host-model audit, one protocol step per call: begin, then landmark… next, "
                              "report…/dismiss… next … finish. The host's own model is the auditor; every report "
                              "goes through the evidence gate. " + _WHERE)
    verbs = p.add_subparsers(dest="verb", metavar="VERB", parser_class=ArgParser)
    verbs.required = True

    def verb(name: str, help_text: str, *, run: bool = True) -> argparse.ArgumentParser:
        sub = verbs.add_parser(name, help=help_text, description=help_text)
        if run:
            sub.add_argument("run_id", metavar="RUN", help="the run id `host begin` printed (`run: ID`)")
            sub.add_argument("--output-dir", metavar="DIR",
                             help="the run's output directory, as `begin` printed it on its `output-dir:` line; "
                                  "relative to the working directory "
                                  f"(default: {OUTPUT_DIR_DEFAULT} in the working directory). The commands `begin` "
                                  "and each verb print carry it whenever the run is elsewhere")
        else:
            sub.add_argument("--output-dir", metavar="DIR",
                             help="where the run's state and, at `finish`, its reports go; relative to the working "
                                  f"directory (default: {OUTPUT_DIR_DEFAULT} in PATH). Pass it to have the reports "
                                  "somewhere particular")
        sub.add_argument("--json", action="store_true", help="print JSON instead of text")
        return sub

    b = verb("begin", "start a run: static recon and leads, then the recon instructions; prints `run: ID` and "
                      "`output-dir: DIR`", run=False)
    b.add_argument("path", metavar="PATH", help="directory to audit")
    b.add_argument("selection", nargs="+", metavar="SELECTION", help="check ids (C1,C9), p1 or all")
    lm = verb("landmark", "report one landmark (recon, before the first `next`)")
    lm.add_argument("--kind", required=True,
                    help=f"one of the eleven landmark kinds: {', '.join(k.value for k in LandmarkKind)}")
    lm.add_argument("--file", required=True, help="workspace-relative path")
    lm.add_argument("--line", required=True, type=_line, help="1-based line")
    lm.add_argument("--symbol", help="enclosing function or class, dotted")
    lm.add_argument("--confidence", choices=["high", "medium", "low"], default="medium")
    lm.add_argument("--evidence", default="",
                    help="the line's code, copied exactly: the gate checks it like a finding's excerpt and records "
                         "the landmark at the line where it starts")
    dl = verb("dismiss-landmark", "dismiss one landmark recon listed that is wrong, with the reason (recon only; "
                                  "the report lists it, no check uses it)")
    dl.add_argument("--kind", required=True, help="the landmark's kind, as the recon list shows it")
    dl.add_argument("--file", required=True, help="its workspace-relative path, as the recon list shows it")
    dl.add_argument("--line", required=True, type=_line, help="its line, as the recon list shows it")
    dl.add_argument("--reason", required=True, help="why it is wrong: what the code there is instead (goes into "
                                                    "the report)")
    verb("next", "end recon or the current check and get the next check (or `finish`)")
    r = verb("report", "report one finding for the current check")
    r.add_argument("--check", required=True, help="the current check, e.g. C1")
    r.add_argument("--verdict", required=True, help="confirmed, suspected or not-implemented")
    r.add_argument("--file", help="workspace-relative path (none for a check-level not-implemented)")
    r.add_argument("--line", type=_line, help="1-based line of the defect")
    r.add_argument("--evidence", required=True,
                   help="lines copied exactly from the file ('-' reads them from standard input)")
    r.add_argument("--claim", required=True, help="one sentence: what is wrong")
    r.add_argument("--consequence", required=True, help="what a user of the harness sees because of it")
    r.add_argument("--direction", default="", help="how to fix it")
    r.add_argument("--confirm-hint", default="", help="for suspected: exactly what a human must verify")
    r.add_argument("--lead", default="", help="the static lead this finding confirms, e.g. C1-2 (optional)")
    d = verb("dismiss", "dismiss one static lead of the current check, with the reason it is wrong")
    d.add_argument("lead", metavar="LEAD", help="the lead id, e.g. C1-2")
    d.add_argument("--reason", required=True, help="why the lead is wrong (goes into the report)")
    verb("finish", "end the run: aggregate, write the md/json/sarif reports into the run's output directory, "
                   "print the summary and their paths")
    verb("status", "where the run stands and what to do next")
    return p


def _line(raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a line number; give a 1-based integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a line number; lines start at 1")
    return value


def _output_dir(value: str) -> Path:
    """`--output-dir` against the working directory, normalised (no `..`): what every printed command names."""
    try:
        return user_path(value, "the output directory").resolve()
    except (OSError, ValueError, RuntimeError) as exc:
        raise path_error("the output directory", value, exc) from None


def run(ns: argparse.Namespace) -> int:
    """Run one protocol step; 0 when it was accepted, 2 when it was refused."""
    from harness_audit import host

    default_dir = cwd_output_dir()
    given = _output_dir(ns.output_dir) if ns.output_dir else None
    if ns.verb == "begin":
        overrides = {"output_dir": str(given)} if given is not None else None
        out_dir = host.output_dir_for(ns.path, overrides)
        flag = output_dir_option(out_dir, default_dir)
        # the later verbs look under the default of the directory they run in: every hint names the run's
        result = host.begin(ns.path, ns.selection, overrides=overrides,
                            caller=host.Caller(face="shell", output_dir_flag=flag))
        return _print(result, ns.json)
    out_dir = given or default_dir
    run_dir = host.find_run(ns.run_id, out_dir)
    caller = host.Caller(face="shell", output_dir_flag=output_dir_option(out_dir, default_dir))
    if ns.verb == "landmark":
        result = host.report_landmark(run_dir, kind=ns.kind, file=ns.file, line=ns.line, symbol=ns.symbol,
                                      confidence=ns.confidence, evidence=ns.evidence, caller=caller)
    elif ns.verb == "dismiss-landmark":
        result = host.dismiss_landmark(run_dir, kind=ns.kind, file=ns.file, line=ns.line, reason=ns.reason,
                                       caller=caller)
    elif ns.verb == "next":
        result = host.next_check(run_dir, caller=caller)
    elif ns.verb == "report":
        evidence = sys.stdin.read() if ns.evidence == "-" else ns.evidence
        if not evidence.strip():
            raise UsageError("--evidence is empty; copy the line(s) of code you cite from the file")
        result = host.report_finding(run_dir, check=ns.check, verdict=ns.verdict, file=ns.file, line=ns.line,
                                     evidence=evidence, claim=ns.claim, consequence=ns.consequence,
                                     direction=ns.direction, confirm_hint=ns.confirm_hint, lead=ns.lead,
                                     caller=caller)
    elif ns.verb == "dismiss":
        result = host.dismiss_lead(run_dir, lead=ns.lead, reason=ns.reason, caller=caller)
    elif ns.verb == "finish":
        result = host.finish_run(run_dir, caller=caller)
    else:
        result = host.status(run_dir, caller=caller)
    return _print(result, ns.json)


def _print(result: object, as_json: bool) -> int:
    from harness_audit import host

    assert isinstance(result, host.StepResult)
    print(host.to_json(result) if as_json else result.text.rstrip("\n"))
    return 0 if result.ok else 2
