"""Shell and git tools."""
from __future__ import annotations

import asyncio
import os
import signal

from ..registry import Tool

WORKDIR = os.environ.get("AGENT_WORKDIR", "/srv/agent/work")


async def run_shell(command: str) -> str:
    proc = await asyncio.create_subprocess_shell(
        command,
        cwd=WORKDIR,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "TERM": "dumb", "PAGER": "cat"},
    )
    out, _ = await proc.communicate()
    return f"[exit {proc.returncode}]\n" + out.decode(errors="replace")[-15_000:]


async def git_status(repo: str = ".") -> str:
    proc = await asyncio.create_subprocess_exec(
        "git", "-C", repo, "status", "--porcelain=v1",
        cwd=WORKDIR,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={"PATH": "/usr/bin:/bin", "HOME": WORKDIR, "GIT_TERMINAL_PROMPT": "0"},
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), timeout=20)
    except (asyncio.TimeoutError, asyncio.CancelledError):
        os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()
        raise
    return (out or err).decode(errors="replace")


SHELL = Tool(
    name="shell",
    description="Run a shell command in the agent work directory.",
    parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
    handler=run_shell,
    timeout=300,
)

GIT_STATUS = Tool(
    name="git_status",
    description="Show `git status` for a repository under the work directory.",
    parameters={"type": "object", "properties": {"repo": {"type": "string"}}},
    handler=git_status,
    timeout=15,
)
