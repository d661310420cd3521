"""HTTP and artifact tools, and the registry the graph binds to the model."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from functools import partial
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Awaitable, Callable

import aiohttp

from .errors import ToolError, ToolErrorCode
from .sandbox import CommandRunner, run_python, shell_tool

TRACKER_URL = os.environ.get("GW_TRACKER_URL", "https://tracker.internal")
ARTIFACT_ROOT = Path(os.environ.get("GW_ARTIFACTS", "/srv/worker/artifacts")).resolve()
# Connection-level backstop; per-tool budgets in ToolSpec are tighter.
BACKSTOP = aiohttp.ClientTimeout(total=90, connect=10)

_session: aiohttp.ClientSession | None = None


async def http() -> aiohttp.ClientSession:
    global _session
    if _session is None or _session.closed:
        _session = aiohttp.ClientSession(timeout=BACKSTOP, raise_for_status=False)
    return _session


def _auth() -> dict[str, str]:
    return {"Authorization": f"token {os.environ.get('GW_TRACKER_TOKEN', '')}"}


async def fetch_page(url: str, max_chars: int = 20_000) -> str:
    s = await http()
    try:
        async with s.get(url) as resp:
            if resp.status == 404:
                raise ToolError(ToolErrorCode.NOT_FOUND, f"{url} returned 404")
            if resp.status >= 400:
                raise ToolError(ToolErrorCode.UPSTREAM, f"{url} returned HTTP {resp.status}")
            text = await resp.text(errors="replace")
    except aiohttp.ClientConnectionError as exc:
        raise ToolError(ToolErrorCode.UPSTREAM, f"could not reach {url}: {exc}") from exc
    return text[:max_chars]


async def fetch_many(urls: list[str], max_chars: int = 6_000) -> str:
    pages: dict[str, str] = {}

    async def grab(u: str) -> None:
        pages[u] = await fetch_page(u, max_chars)

    async with asyncio.TaskGroup() as tg:
        for url in urls:
            tg.create_task(grab(url))
    return "\n\n".join(f"## {u}\n{pages[u]}" for u in urls)


async def create_ticket(title: str, body: str, labels: list[str] | None = None) -> str:
    s = await http()
    payload = {"title": title, "body": body, "labels": labels or []}
    last: BaseException | None = None
    for attempt in range(4):
        try:
            async with s.post(f"{TRACKER_URL}/api/v1/issues", json=payload, headers=_auth()) as resp:
                resp.raise_for_status()
                data = await resp.json()
            return f"Created ticket #{data['number']}: {data['html_url']}"
        except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
            last = exc
            await asyncio.sleep(0.5 * 2**attempt)
    raise ToolError(ToolErrorCode.UPSTREAM, f"tracker unavailable after retries: {last}")


async def read_artifact(path: str, max_chars: int = 50_000) -> str:
    target = (ARTIFACT_ROOT / path).resolve()
    if not target.is_relative_to(ARTIFACT_ROOT):
        raise ToolError(ToolErrorCode.DENIED, f"{path!r} is outside the artifact store")
    if not target.is_file():
        raise ToolError(ToolErrorCode.NOT_FOUND, f"no artifact named {path!r}")
    text = await asyncio.to_thread(target.read_text, encoding="utf-8", errors="replace")
    return text[:max_chars]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., Awaitable[str]]
    timeout_s: float = 30.0
    serial: bool = False

    def schema(self) -> dict[str, Any]:
        return {"type": "function",
                "function": {"name": self.name, "description": self.description,
                             "parameters": self.parameters}}


def _obj(required: list[str], **props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


def load_tools(runner: CommandRunner) -> dict[str, ToolSpec]:
    s = {"type": "string"}
    builtin = [
        ToolSpec("fetch_page", "Fetch a web page as text.", _obj(["url"], url=s), fetch_page),
        ToolSpec("fetch_many", "Fetch several pages at once.",
                 _obj(["urls"], urls={"type": "array", "items": s}), fetch_many, timeout_s=60),
        ToolSpec("create_ticket", "Open a ticket in the tracker.",
                 _obj(["title", "body"], title=s, body=s, labels={"type": "array", "items": s}),
                 create_ticket, timeout_s=45, serial=True),
        ToolSpec("read_artifact", "Read a file from the job's artifact store.",
                 _obj(["path"], path=s), read_artifact),
        ToolSpec("run_shell", "Run a shell command in the job's working copy.",
                 _obj(["command"], command=s), partial(shell_tool, runner),
                 timeout_s=300, serial=True),
        ToolSpec("run_python", "Run a short Python snippet in isolation.",
                 _obj(["code"], code=s), run_python, timeout_s=30),
    ]
    registry = {spec.name: spec for spec in builtin}
    for ep in entry_points(group="gworker.tools"):
        spec = ep.load()()
        registry[spec.name] = spec
    return registry
