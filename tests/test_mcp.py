"""`harness-audit mcp`, started as a subprocess and driven with the official MCP client over stdio."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from harness_audit.cli import main
from tests.host_scenario import FIRST_HALF, SECOND_HALF, SELECTION, assert_host_report, make_workspace
from tests.llm.fake_openai import ScriptedOpenAI
from tests.test_jobs import gated_script

TOOLS = {"begin_host_audit", "report_landmark", "dismiss_landmark", "next_check", "report_finding", "dismiss_lead",
         "finish_host_audit", "host_audit_status", "start_audit", "job_output", "cancel_audit", "list_checks"}
_STEP_TOOLS = {"landmark": "report_landmark", "dismiss-landmark": "dismiss_landmark", "next": "next_check",
               "report": "report_finding", "dismiss": "dismiss_lead", "finish": "finish_host_audit",
               "status": "host_audit_status"}


class Session:
    """A client session with the notifications the server sent."""

    def __init__(self, session: ClientSession, logs: list[str]) -> None:
        self.session, self.logs = session, logs

    async def call(self, tool: str, args: dict[str, Any],
                   progress: list[tuple[float, float | None, str | None]] | None = None) -> tuple[bool, str]:
        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            if progress is not None:
                progress.append((done, total, message))

        result = await self.session.call_tool(tool, args, read_timeout_seconds=120, progress_callback=on_progress)
        assert isinstance(result, types.CallToolResult)
        text = "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))
        return not result.is_error, text


def with_server(cwd: Path, body: Callable[[Session], Awaitable[None]]) -> None:
    """Start `harness-audit mcp` in `cwd` and run `body` against it."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    params = StdioServerParameters(command=sys.executable, args=["-m", "harness_audit", "mcp"], cwd=str(cwd), env=env)

    async def run() -> None:
        logs: list[str] = []

        async def on_log(params: types.LoggingMessageNotificationParams) -> None:
            logs.append(str(params.data))

        with (cwd / "server-stderr.log").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), \
                    ClientSession(read, write, logging_callback=on_log) as session:
                await session.initialize()
                await body(Session(session, logs))

    anyio.run(run)


def test_lists_the_tools_and_the_prompt_with_its_selection_argument(tmp_path: Path) -> None:
    async def body(s: Session) -> None:
        tools = {t.name: t for t in (await s.session.list_tools()).tools}
        assert set(tools) == TOOLS
        assert set(tools["report_finding"].input_schema["required"]) >= {"run_id", "check", "verdict", "evidence"}
        (prompt,) = (await s.session.list_prompts()).prompts
        assert prompt.name == "harness-audit"
        assert [(a.name, a.required) for a in prompt.arguments or []] == [("checks", False)]
        got = await s.session.get_prompt("harness-audit", {"checks": "C1,C9"})
        text = got.messages[0].content
        assert isinstance(text, types.TextContent) and "begin_host_audit(checks='C1,C9')" in text.text
        ok, checks = await s.call("list_checks", {})
        assert ok and checks.startswith("C1 (p1) Tool-call pairing completeness")

    with_server(tmp_path, body)


def test_a_complete_host_model_run_over_mcp(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_workspace(tmp_path)
    reports: list[str] = []

    async def body(s: Session) -> None:
        ok, text = await s.call("begin_host_audit", {"checks": SELECTION, "path": str(root)})
        assert ok, text
        run_id = re.search(r"^run: (\S+)$", text, re.M).group(1)  # type: ignore[union-attr]
        assert "`report_landmark`" in text and "truncation (needed by C13)" in text
        bad_ok, bad = await s.call("begin_host_audit", {"checks": "C16", "path": str(root)})
        assert not bad_ok and "unknown check 'C16'" in bad
        for call in (*FIRST_HALF, *SECOND_HALF):
            ok, text = await s.call(_STEP_TOOLS[call.step], {"run_id": run_id, **call.args})
            assert ok is call.accepted and call.says in text, (call, text)
        ok, status = await s.call("host_audit_status", {"run_id": run_id, "path": str(root)})
        assert ok and "phase: finished" in status
        reports.extend(line.removeprefix("next: reports: ").split(", ")
                       for line in status.splitlines() if line.startswith("next: reports: "))
        outside_ok, outside = await s.call("next_check", {"run_id": "../../etc", "path": str(root)})
        assert not outside_ok and "is not a run id" in outside

    with_server(tmp_path, body)
    (paths,) = reports
    (report_json,) = [Path(p) for p in paths if p.endswith(".json")]
    assert main([str(root), SELECTION, "--output-dir", str(tmp_path / "cli"), "--format", "json", "-q",
                 "--no-cache"]) in (0, 1)
    capsys.readouterr()
    (cli_json,) = (tmp_path / "cli").glob("report-*.json")
    assert_host_report(report_json, cli_json)


def test_start_audit_runs_a_background_job_followed_to_the_end(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)

    async def body(s: Session) -> None:
        ok, started = await s.call("start_audit", {"checks": "C1,C12,C13", "path": str(root)})
        assert ok, started
        job_id = re.search(r"^job: (\S+)$", started, re.M).group(1)  # type: ignore[union-attr]
        progress: list[tuple[float, float | None, str | None]] = []
        ok, output = await s.call("job_output", {"job_id": job_id, "wait_s": 90}, progress)
        assert ok, output
        lines = output.splitlines()
        assert any(x.startswith("recon done") for x in lines) and "C13 not covered: no truncation landmark" in lines
        assert f"{job_id} complete" in lines and sum(x.startswith("report: ") for x in lines) == 3
        assert [m for _, _, m in progress][:2] == lines[:2]
        assert progress[-1][1] == 3.0 and progress[-1][0] == 3.0  # three checks settled of three
        assert any("C1 done" in log for log in s.logs)
        ok, again = await s.call("cancel_audit", {"job_id": job_id})
        assert ok and "already over (complete)" in again

    with_server(tmp_path, body)


def test_cancel_audit_stops_a_model_job_with_a_partial_report(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    go = threading.Event()
    go.set()
    with ScriptedOpenAI(gated_script(go, c12_hangs=True)) as server:
        (root / ".harness-audit.toml").write_text(
            f'model = "openai:m"\nbase_url = "{server.base_url}"\nconcurrency = 1\nformats = ["md", "json"]\n',
            encoding="utf-8")

        async def body(s: Session) -> None:
            ok, started = await s.call("start_audit", {"checks": "C1,C12", "path": str(root), "engine": "llm"})
            assert ok, started
            job_id = re.search(r"^job: (\S+)$", started, re.M).group(1)  # type: ignore[union-attr]
            with anyio.fail_after(60):
                while not [r for r in server.requests if r.key == "C12"]:
                    await anyio.sleep(0.05)
            ok, cancelled = await s.call("cancel_audit", {"job_id": job_id})
            assert ok and "cancel requested" in cancelled
            ok, output = await s.call("job_output", {"job_id": job_id, "wait_s": 60})
            assert ok and f"{job_id} cancelled" in output and "C12 cancelled" in output, output
            (report,) = [x.removeprefix("report: ") for x in output.splitlines()
                         if x.startswith("report: ") and x.endswith(".json")]
            data = json.loads(Path(report).read_text(encoding="utf-8"))
            assert data["meta"]["state"] == "cancelled"
            assert [(o["id"], o["status"]) for o in data["outcomes"]] == [("C1", "ran"), ("C12", "cancelled")]

        with_server(tmp_path, body)


def test_a_bad_host_gets_a_tool_error_never_a_crash(tmp_path: Path) -> None:
    async def body(s: Session) -> None:
        for tool, args, needle in (
            ("start_audit", {"checks": "p1", "path": str(tmp_path / "missing")}, "does not exist"),
            ("start_audit", {"checks": "p1", "path": str(tmp_path), "engine": "llm"}, "needs a `model`"),
            ("job_output", {"job_id": "job-../../x"}, "is not a job id"),
            ("begin_host_audit", {"checks": "p1", "path": "/"}, "outside the server's root"),
            ("start_audit", {"checks": "p1", "path": "../.."}, "outside the server's root"),
            ("host_audit_status", {"run_id": "20260101T000000-deadbeef"}, "no run"),
        ):
            ok, text = await s.call(tool, args)
            assert not ok and needle in text, (tool, text)

    with_server(tmp_path, body)


def test_streamable_http_serves_the_same_tools_on_loopback_only(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    import socket
    import subprocess
    import time

    from mcp.client.streamable_http import streamable_http_client

    assert main(["mcp", "--http", "--host", "0.0.0.0"]) == 2
    assert "not a loopback address" in capsys.readouterr().err
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    server = subprocess.Popen([sys.executable, "-m", "harness_audit", "mcp", "--http", "--port", str(port)],
                              cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with socket.socket() as s, contextlib.suppress(OSError):
                s.connect(("127.0.0.1", port))
                break
            time.sleep(0.1)

        async def run() -> set[str]:
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                return {t.name for t in (await session.list_tools()).tools}

        assert anyio.run(run) == TOOLS
    finally:
        server.terminate()
        server.wait(10)
