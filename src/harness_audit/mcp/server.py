"""The MCP server: thin adapters over `harness_audit.host` (host-model audits) and `harness_audit.jobs`.

Tools: `begin_host_audit`, `report_landmark`, `dismiss_landmark`, `next_check`, `report_finding`, `dismiss_lead`,
`finish_host_audit`, `host_audit_status` (one host-model run, the host's model as the auditor), and
`start_audit`, `job_output`, `cancel_audit`, `list_checks` (our own engines as background jobs). A prompt
`harness-audit` takes a check selection (`/harness-audit C1,C9`). A refused report or a bad call comes back as
a tool error whose text says why and what to do; nothing here decides anything about findings.

Over stdio nothing may be printed to standard output: it carries the protocol. Paths a host passes are taken
from the server's working directory (`--root`); run and job ids are checked before they become paths.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from harness_audit import __version__, host, jobs
from harness_audit.catalogue import CHECKS, P1
from harness_audit.errors import HarnessAuditError
from harness_audit.progress import ProgressKind

_CALLER = host.Caller(face="mcp")
_SETTLED = (ProgressKind.CHECK_DONE, ProgressKind.NOT_COVERED, ProgressKind.CHECK_FAILED, ProgressKind.CANCELLED)
_FOLLOW_CAP_S = 300.0

INSTRUCTIONS = """harness-audit audits the robustness of an LLM agent harness (its turn loop, tool dispatch, history,
retries, cancellation, truncation, prompt caching) and refuses every finding it cannot back with code evidence.

Two ways to use it:
- Host-model audit (you are the auditor): begin_host_audit(checks), then report_landmark for what recon missed
  (dismiss_landmark, with a reason, for a listed one that is wrong), then next_check / report_finding / dismiss_lead until next_check says "finish", then finish_host_audit.
  Every report goes through an evidence gate: cite a workspace-relative file, a line, and lines copied exactly.
  Run each check in a fresh subagent where you can.
- Our engines as a background job: start_audit(checks, engine) returns a job id at once; follow it with
  job_output(job_id), stop it with cancel_audit(job_id).
Selections: C1..C15 (C1,C9), p1 (the seven priority-1 checks) or all; list_checks() explains each check."""


def _refusal(exc: HarnessAuditError) -> ToolError:
    return ToolError(f"Not executed: {exc}")


def build_server(root: Path | None = None) -> MCPServer:
    """The server, with every tool and the prompt registered; `root` is where relative paths start."""
    base = (root or Path.cwd()).resolve()
    app = MCPServer("harness-audit", instructions=INSTRUCTIONS, version=__version__, log_level="WARNING")
    runs: dict[str, Path] = {}
    started: dict[str, Path] = {}

    def where(path: str) -> Path:
        """A host's path, confined to the server's root: a host audits (and writes the reports of) only that tree."""
        p = Path(path).expanduser()
        resolved = (p if p.is_absolute() else base / p).resolve()
        if not resolved.is_relative_to(base):
            raise HarnessAuditError("err.mcp.outside_root", path=path, root=str(base))
        return resolved

    def run_dir(run_id: str, path: str) -> Path:
        known = runs.get(run_id.strip())
        return known if known is not None else host.find_run(run_id, host.output_dir_for(where(path)))

    def job_dir(job_id: str, path: str) -> Path:
        known = started.get(job_id.strip())
        if known is not None:
            return known
        from harness_audit.api import output_dir, resolve_root
        from harness_audit.config import build_config

        root_ = resolve_root(where(path))
        return jobs.find(job_id, output_dir(root_, build_config(root_)[0]))

    def step(call: Callable[[], host.StepResult]) -> str:
        try:
            result = call()
        except HarnessAuditError as exc:
            raise _refusal(exc) from None
        if not result.ok:
            raise ToolError(result.text)
        return result.text

    # ------------------------------------------------------------------ host-model run
    @app.tool(name="begin_host_audit", description=(
        "Start a host-model audit of `path` (default: the project) for `checks` (C1,C9 / p1 / all). Returns the "
        "run id (`run: ID`), the landmarks static recon found, those still missing, and how to cite."))
    def begin_host_audit(checks: str, path: str = ".") -> str:
        def go() -> host.StepResult:
            result = host.begin(where(path), checks, caller=_CALLER)
            runs[result.data["run_id"]] = Path(result.data["run_dir"])
            return result
        return step(go)

    @app.tool(name="report_landmark", description=(
        "Recon: report one landmark (kind, workspace-relative file, 1-based line, enclosing symbol, confidence) "
        "after reading it. Refused ones say why."))
    def report_landmark(run_id: str, kind: str, file: str, line: int, symbol: str = "", confidence: str = "medium",
                        path: str = ".") -> str:
        return step(lambda: host.report_landmark(run_dir(run_id, path), kind=kind, file=file, line=line,
                                                 symbol=symbol or None, confidence=confidence, caller=_CALLER))

    @app.tool(name="dismiss_landmark", description=(
        "Recon: dismiss one listed landmark that is wrong (kind, workspace-relative file and line as the recon list "
        "shows them) with the reason; the report lists it and no check uses it. Landmarks only guide the checks and "
        "are never findings. also_at: more places of the same kind wrong for the same reason ('FILE:LINE, "
        "FILE:LINE'), all or none, each a protocol call."))
    def dismiss_landmark(run_id: str, kind: str, file: str, line: int, reason: str, path: str = ".",
                         also_at: str = "") -> str:
        return step(lambda: host.dismiss_landmark(run_dir(run_id, path), kind=kind, file=file, line=line,
                                                  reason=reason, also_at=(also_at,), caller=_CALLER))

    @app.tool(name="next_check", description=(
        "End recon or the current check and get the next check: its criteria, landmarks, static leads and how to "
        "report. Checks whose landmarks are missing are listed as not covered. Says `finish` when none is left. "
        "Closing a check for which you reported nothing and dismissed no lead needs nothing_found=true: a closed "
        "check reads 'ran, nothing found' in the report and cannot be reopened."))
    def next_check(run_id: str, path: str = ".", nothing_found: bool = False) -> str:
        return step(lambda: host.next_check(run_dir(run_id, path), nothing_found=nothing_found, caller=_CALLER))

    @app.tool(name="report_finding", description=(
        "Report one finding for the current check: verdict confirmed|suspected|not-implemented, workspace-relative "
        "file, line, evidence copied exactly from the file, claim, consequence, direction; confirm_hint is required "
        "for suspected; lead names the static lead it confirms, or several it is the one root cause of (C1-2,C1-5; "
        "optional). The evidence gate accepts it or says "
        "why not."))
    def report_finding(run_id: str, check: str, verdict: str, claim: str, evidence: str, consequence: str,
                       file: str = "", line: int | None = None, direction: str = "", confirm_hint: str = "",
                       lead: str = "", path: str = ".") -> str:
        return step(lambda: host.report_finding(
            run_dir(run_id, path), check=check, verdict=verdict, file=file or None, line=line, evidence=evidence,
            claim=claim, consequence=consequence, direction=direction, confirm_hint=confirm_hint, lead=lead,
            caller=_CALLER))

    @app.tool(name="dismiss_lead", description=(
        "Dismiss one static lead of the current check (e.g. C1-2) with the reason it is wrong, or several that are "
        "wrong for the same reason ('C7-1, C7-2, C7-5'); the reason goes into the report beside each, and each "
        "counts as one call."))
    def dismiss_lead(run_id: str, lead: str, reason: str, path: str = ".") -> str:
        return step(lambda: host.dismiss_lead(run_dir(run_id, path), lead=lead, reason=reason, caller=_CALLER))

    @app.tool(name="finish_host_audit", description=(
        "End the run: aggregate what the gate accepted and write the md/json/sarif reports; returns the summary."))
    def finish_host_audit(run_id: str, path: str = ".") -> str:
        return step(lambda: host.finish_run(run_dir(run_id, path), caller=_CALLER))

    @app.tool(name="host_audit_status", description=(
        "Where a host-model run stands and what to do next; task=true also returns the open check's text again."))
    def host_audit_status(run_id: str, path: str = ".", task: bool = False) -> str:
        return step(lambda: host.status(run_dir(run_id, path), task=task, caller=_CALLER))

    # ------------------------------------------------------------------ background jobs
    @app.tool(name="start_audit", description=(
        "Run our own engine (static by default; llm or hybrid use the project's configured model) on `path` for "
        "`checks` as a background job. Returns the job id at once; follow it with job_output."))
    def start_audit(checks: str, path: str = ".", engine: str = "static") -> str:
        from harness_audit.api import output_dir, resolve_checks, resolve_root
        from harness_audit.config import build_config

        try:
            root_ = resolve_root(where(path))
            config, _ = build_config(root_, {"engine": engine})
            chosen = resolve_checks([checks], config) or ()
            if config.engine != "static" and not config.model:
                raise HarnessAuditError("err.mcp.needs_model", engine=engine)
            job = jobs.start([str(root_), checks, "--engine", engine, "-q"], cwd=root_,
                             output_dir=output_dir(root_, config), target=root_, checks=[c.value for c in chosen],
                             engine=engine)
        except HarnessAuditError as exc:
            raise _refusal(exc) from None
        started[job.job_id] = job.job_dir
        return (f"job: {job.job_id}\nstarted {engine} audit of {root_} for {', '.join(c.value for c in chosen)}\n"
                f"follow: job_output(job_id={job.job_id!r}, wait_s=60)")

    @app.tool(name="job_output", description=(
        "A background audit's progress lines; when it is over, its state and report paths. With wait_s, waits up "
        "to that many seconds for it to end, sending progress notifications as checks finish."))
    async def job_output(job_id: str, ctx: Context, path: str = ".", wait_s: float = 0.0) -> str:
        try:
            directory = job_dir(job_id, path)
        except HarnessAuditError as exc:
            raise _refusal(exc) from None
        deadline = time.monotonic() + min(max(wait_s, 0.0), _FOLLOW_CAP_S)
        lines: list[str] = []
        settled = 0
        since = 0
        while True:
            jobs.reap()
            job = jobs.load(directory)  # first: every event written before a final state is then read below
            seen = jobs.events(directory)
            for t, event in seen[since:]:
                line = jobs.describe(t, event)
                settled += event.kind in _SETTLED and event.check is not None
                await ctx.report_progress(progress=settled, total=max(len(job.checks), 1), message=line)
                await ctx.info(f"{job.job_id}: {line}")
                lines.append(line)
            since = len(seen)
            if job.state in jobs.TERMINAL or time.monotonic() >= deadline:
                break
            await asyncio.sleep(0.2)
        tail = jobs.final_lines(job) if job.state in jobs.TERMINAL else [f"{job.job_id} {job.state}: {job.progress}"]
        return "\n".join([*lines, *tail])

    @app.tool(name="cancel_audit", description=(
        "Cancel a background audit; it stops and writes a partial report marked cancelled."))
    def cancel_audit(job_id: str, path: str = ".") -> str:
        try:
            job = jobs.cancel(job_dir(job_id, path))
        except HarnessAuditError as exc:
            raise _refusal(exc) from None
        if job.state in jobs.TERMINAL:
            return f"{job.job_id} is already over ({job.state})"
        return f"cancel requested for {job.job_id}; follow it with job_output to see the partial report"

    @app.tool(name="list_checks", description="The fifteen checks: id, priority, title and what each guards.")
    def list_checks() -> str:
        return "\n".join(f"{c.value} (p{s.priority}) {s.title}: {s.gloss('en')}" for c, s in CHECKS.items()) + \
            f"\np1 = {','.join(c.value for c in P1)}; all = C1..C15"

    # ------------------------------------------------------------------ the prompt
    @app.prompt(name="harness-audit", description=(
        "Audit this project's agent harness with your own model behind harness-audit's evidence gate. Argument: "
        "the checks (C1,C9 / p1 / all)."))
    def harness_audit_prompt(checks: str = "p1") -> str:
        return (f"Audit this project's agent harness for {checks} with the harness-audit MCP tools.\n"
                f"1. Call begin_host_audit(checks={checks!r}). Keep the run id it prints.\n"
                "2. Recon: read the code for every landmark it lists as missing and report each with "
                "report_landmark; dismiss_landmark (with the reason) a listed one that is wrong. Then call "
                "next_check.\n"
                "3. For each check next_check hands out (best in a fresh subagent given only that text and the run "
                "id): read the code, report each defect with report_finding (evidence copied exactly from the file, "
                "covering the line you cite), confirm or dismiss_lead each static lead, then call next_check "
                "again.\n"
                "4. When next_check says finish, call finish_host_audit and show the summary and report paths.\n"
                "A refused report says why: fix it and resubmit, or drop it. Never invent code or lines.")

    return app


def serve(*, root: Path | None = None, http: bool = False, host_name: str = "127.0.0.1", port: int = 8765) -> None:
    """Run the server over stdio, or streamable HTTP on `host_name:port` (loopback only)."""
    app = build_server(root)
    if http:
        app.run("streamable-http", host=host_name, port=port)
    else:
        app.run()


