"""Process sandbox used by the shell and python tools."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import sys
import tempfile
from asyncio.subprocess import PIPE, STDOUT
from dataclasses import dataclass

from .errors import ToolError, ToolErrorCode

OUTPUT_LIMIT = 16_000


@dataclass
class SandboxResult:
    status: str  # "ok" | "cancelled"
    exit_code: int | None
    output: str

    def render(self) -> str:
        text = self.output
        if len(text) > OUTPUT_LIMIT:
            text = text[:OUTPUT_LIMIT] + f"\n[... {len(self.output) - OUTPUT_LIMIT} chars truncated]"
        return f"{text}\n[exit {self.exit_code}]"


class CommandRunner:
    """Runs shell commands in the job's working copy.

    `stop()` is wired to the dashboard's stop button.
    """

    def __init__(self, workdir: str, deadline_s: float = 60.0) -> None:
        self.workdir = workdir
        self.deadline_s = deadline_s
        self._stop = asyncio.Event()

    def stop(self) -> None:
        self._stop.set()

    async def run(self, command: str) -> SandboxResult:
        proc = await asyncio.create_subprocess_shell(
            command, cwd=self.workdir, stdout=PIPE, stderr=STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "TERM": "dumb"},
        )
        deadline = asyncio.get_running_loop().call_later(self.deadline_s, self._stop.set)
        output = asyncio.ensure_future(proc.communicate())
        stopped = asyncio.ensure_future(self._stop.wait())
        done, _ = await asyncio.wait({output, stopped}, return_when=asyncio.FIRST_COMPLETED)
        deadline.cancel()
        if output in done:
            stopped.cancel()
            out, _ = output.result()
            return SandboxResult("ok", proc.returncode, out.decode(errors="replace"))
        proc.terminate()
        await proc.wait()
        output.cancel()
        self._stop.clear()
        return SandboxResult("cancelled", None, "")


async def shell_tool(runner: CommandRunner, command: str) -> str:
    result = await runner.run(command)
    if result.status == "cancelled":
        raise ToolError(ToolErrorCode.CANCELLED, f"command was stopped: {command[:80]}")
    return result.render()


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


async def run_python(code: str, timeout_s: float = 20.0) -> str:
    workdir = tempfile.mkdtemp(prefix="gw-py-")
    script = os.path.join(workdir, "snippet.py")
    with open(script, "w", encoding="utf-8") as fh:
        fh.write(code)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": workdir, "LANG": "C.UTF-8"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-I", script, cwd=workdir, env=env,
        stdout=PIPE, stderr=STDOUT, start_new_session=True,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout_s)
    except asyncio.TimeoutError:
        _kill_group(proc)
        await proc.wait()
        raise ToolError(ToolErrorCode.TIMEOUT, f"python snippet ran longer than {timeout_s:.0f}s")
    except asyncio.CancelledError:
        _kill_group(proc)
        raise
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return SandboxResult("ok", proc.returncode, out.decode(errors="replace")).render()
