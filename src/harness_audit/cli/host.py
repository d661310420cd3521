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

from harness_audit.cli._helpers import cwd_output_dir, output_dir_default, output_dir_option
from harness_audit.errors import UsageError, path_error
from harness_audit.findings import LandmarkKind
from harness_audit.messages import Msg, t
from harness_audit.workspace import user_path

VERBS = ("begin", "landmark", "dismiss-landmark", "next", "report", "dismiss", "finish", "status")


def make_parser(lang: str = "en") -> argparse.ArgumentParser:
    """Parser of `harness-audit host VERB …`, its help in `lang`."""
    from harness_audit.cli import ArgParser

    def h(key: str, **values: object) -> str:
        return t(f"help.host.{key}", lang, **values)

    p = ArgParser(prog="harness-audit host", lang=lang, description=h("description"))
    verbs = p.add_subparsers(dest="verb", metavar="VERB", parser_class=ArgParser, help=h("verb"))
    verbs.required = True

    def verb(name: str, *, run: bool = True) -> argparse.ArgumentParser:
        help_text = h(name.replace("-", "_"))
        sub = verbs.add_parser(name, help=help_text, description=help_text, lang=lang)
        if run:
            sub.add_argument("run_id", metavar="RUN", help=h("run"))
            sub.add_argument("--output-dir", metavar="DIR",
                             help=h("output_dir_later", default=output_dir_default(lang, in_path=False)))
        else:
            sub.add_argument("--output-dir", metavar="DIR",
                             help=h("output_dir_begin", default=output_dir_default(lang, in_path=True)))
        sub.add_argument("--json", action="store_true", help=t("help.json", lang))
        return sub

    b = verb("begin", run=False)
    b.add_argument("path", metavar="PATH", help=h("begin.path"))
    b.add_argument("selection", nargs="+", metavar="SELECTION", help=h("begin.selection"))
    lm = verb("landmark")
    lm.add_argument("--kind", required=True, help=h("landmark.kind", kinds=", ".join(k.value for k in LandmarkKind)))
    lm.add_argument("--file", required=True, help=h("file"))
    lm.add_argument("--line", required=True, type=_line, help=h("line"))
    lm.add_argument("--symbol", help=h("symbol"))
    lm.add_argument("--confidence", choices=["high", "medium", "low"], default="medium", help=h("confidence"))
    lm.add_argument("--evidence", default="", help=h("landmark.evidence"))
    dl = verb("dismiss-landmark")
    dl.add_argument("--kind", required=True, help=h("dismiss_landmark.kind"))
    dl.add_argument("--file", required=True, help=h("dismiss_landmark.file"))
    dl.add_argument("--line", required=True, type=_line, help=h("dismiss_landmark.line"))
    dl.add_argument("--also-at", action="append", default=[], metavar="FILE:LINE", help=h("dismiss_landmark.also_at"))
    dl.add_argument("--reason", required=True, help=h("dismiss_landmark.reason"))
    nx = verb("next")
    nx.add_argument("--nothing-found", action="store_true", help=h("next.nothing_found"))
    r = verb("report")
    r.add_argument("--check", required=True, help=h("report.check"))
    r.add_argument("--verdict", required=True, help=h("report.verdict"))
    r.add_argument("--file", help=h("report.file"))
    r.add_argument("--line", type=_line, help=h("report.line"))
    r.add_argument("--evidence", required=True, help=h("report.evidence"))
    r.add_argument("--claim", required=True, help=h("report.claim"))
    r.add_argument("--consequence", required=True, help=h("report.consequence"))
    r.add_argument("--direction", default="", help=h("report.direction"))
    r.add_argument("--confirm-hint", default="", help=h("report.confirm_hint"))
    r.add_argument("--lead", default="", help=h("report.lead"))
    d = verb("dismiss")
    d.add_argument("lead", metavar="LEAD", nargs="+", help=h("dismiss.lead"))
    d.add_argument("--reason", required=True, help=h("dismiss.reason"))
    verb("finish")
    st = verb("status")
    st.add_argument("--task", action="store_true", help=h("status.task"))
    return p


def _line(raw: str) -> int:
    # the refusal travels as argparse's English text; `cli.argparse_message` finds its `arg.*` message again
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(str(Msg("arg.line_not_int", value=repr(raw)))) from None
    if value < 1:
        raise argparse.ArgumentTypeError(str(Msg("arg.line_below_one", value=repr(raw))))
    return value


def _output_dir(value: str) -> Path:
    """`--output-dir` against the working directory, normalised (no `..`): what every printed command names."""
    try:
        return user_path(value, Msg("what.output_dir")).resolve()
    except (OSError, ValueError, RuntimeError) as exc:
        raise path_error(Msg("what.output_dir"), value, exc) from None


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
                            caller=host.Caller(face="shell", output_dir_flag=flag, lang=ns.lang))
        return _print(result, ns.json)
    out_dir = given or default_dir
    run_dir = host.find_run(ns.run_id, out_dir)
    caller = host.Caller(face="shell", output_dir_flag=output_dir_option(out_dir, default_dir), lang=ns.lang)
    if ns.verb == "landmark":
        result = host.report_landmark(run_dir, kind=ns.kind, file=ns.file, line=ns.line, symbol=ns.symbol,
                                      confidence=ns.confidence, caller=caller,
                                      evidence=sys.stdin.read() if ns.evidence == "-" else ns.evidence or "")
    elif ns.verb == "dismiss-landmark":
        result = host.dismiss_landmark(run_dir, kind=ns.kind, file=ns.file, line=ns.line, reason=ns.reason,
                                       also_at=ns.also_at,
                                       caller=caller)
    elif ns.verb == "next":
        result = host.next_check(run_dir, nothing_found=ns.nothing_found, caller=caller)
    elif ns.verb == "report":
        evidence = sys.stdin.read() if ns.evidence == "-" else ns.evidence
        if not evidence.strip():
            raise UsageError("err.host.empty_evidence")
        result = host.report_finding(run_dir, check=ns.check, verdict=ns.verdict, file=ns.file, line=ns.line,
                                     evidence=evidence, claim=ns.claim, consequence=ns.consequence,
                                     direction=ns.direction, confirm_hint=ns.confirm_hint, lead=ns.lead,
                                     caller=caller)
    elif ns.verb == "dismiss":
        result = host.dismiss_lead(run_dir, lead=ns.lead, reason=ns.reason, caller=caller)
    elif ns.verb == "finish":
        result = host.finish_run(run_dir, caller=caller)
    else:
        result = host.status(run_dir, task=ns.task, caller=caller)
    return _print(result, ns.json)


def _print(result: object, as_json: bool) -> int:
    from harness_audit import host

    assert isinstance(result, host.StepResult)
    print(host.to_json(result) if as_json else result.text.rstrip("\n"))
    return 0 if result.ok else 2
