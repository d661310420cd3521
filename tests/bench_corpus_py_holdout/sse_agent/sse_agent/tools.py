"""Async tool implementations."""
from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import httpx

ROOT = os.path.realpath(os.environ.get("AGENT_ROOT", os.getcwd()))
TOOL_BUDGET_S = 90
SHELL_TIMEOUT_S = 60


async def sh(command: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        "bash", "-c", command,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout=SHELL_TIMEOUT_S)
    except asyncio.CancelledError:
        return "cancelled"
    return out.decode(errors="replace")


async def python(code: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        "python3", "-I", "-c", code,
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"},
        start_new_session=True,
    )
    try:
        out, _ = await proc.communicate()
    except asyncio.CancelledError:
        os.killpg(proc.pid, signal.SIGTERM)
        await proc.wait()
        raise
    return out.decode(errors="replace")[-20_000:]


async def cat(path: str) -> str:
    full = os.path.abspath(os.path.join(ROOT, path))
    if not full.startswith(ROOT + os.sep):
        raise PermissionError(f"{path} is outside {ROOT}")
    return Path(full).read_text(errors="replace")


async def edit(path: str, old: str, new: str) -> str:
    real = Path(ROOT, path).resolve()
    if not real.is_relative_to(ROOT):
        raise PermissionError(f"{path} is outside {ROOT}")
    text = real.read_text()
    if text.count(old) != 1:
        raise ValueError(f"expected exactly one match for `old` in {path}, found {text.count(old)}")
    real.write_text(text.replace(old, new))
    return f"edited {path}"


async def http_get(url: str) -> str:
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=5.0)) as client:
        resp = await client.get(url)
    return f"HTTP {resp.status_code}\n{resp.text[:10_000]}"


async def run_tool(name: str, args: dict) -> str:
    fn = REGISTRY[name]
    try:
        return await asyncio.wait_for(fn(**args), timeout=TOOL_BUDGET_S)
    except asyncio.TimeoutError:
        return "cancelled"


REGISTRY = {"sh": sh, "python": python, "cat": cat, "edit": edit, "http_get": http_get}

SCHEMAS = {
    "sh": {"command": {"type": "string"}},
    "python": {"code": {"type": "string"}},
    "cat": {"path": {"type": "string"}},
    "edit": {"path": {"type": "string"}, "old": {"type": "string"}, "new": {"type": "string"}},
    "http_get": {"url": {"type": "string"}},
}


def tool_defs(enabled: set[str]) -> list[dict]:
    return [
        {"type": "function", "function": {
            "name": name,
            "parameters": {"type": "object", "properties": SCHEMAS[name], "required": list(SCHEMAS[name])},
        }}
        for name in enabled
    ]
