from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from pathlib import Path
from xml.etree import ElementTree

import httpx
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from .errors import ToolError, ToolErrorCode, classify_http_status

NOTES_DIR = Path(os.environ.get("RESEARCH_NOTES_DIR", "./workspace/notes"))
REPORT_WEBHOOK = os.environ.get("REPORT_WEBHOOK_URL", "")
ARXIV_API = "https://export.arxiv.org/api/query"
ARXIV_BUDGET_S = 20.0
UA = {"User-Agent": "research-agent/0.4 (+https://example.org/bot)"}


async def web_fetch(url: str, max_chars: int = 40_000) -> str:
    async with httpx.AsyncClient(timeout=10.0, follow_redirects=True, headers=UA) as client:
        resp = await client.get(url)
        resp.raise_for_status()
    return resp.text[:max_chars]


async def fetch_many(urls: list[str], max_chars: int = 8_000) -> str:
    results = await asyncio.gather(*(web_fetch(u, max_chars) for u in urls), return_exceptions=True)
    sections, ok = [], 0
    for url, res in zip(urls, results):
        if isinstance(res, BaseException):
            sections.append(f"## {url}\n[not fetched: {type(res).__name__}: {res}]")
        else:
            ok += 1
            sections.append(f"## {url}\n{res}")
    return f"Fetched {ok} of {len(urls)} sources.\n\n" + "\n\n".join(sections)


def _atom_entries(xml_text: str) -> str:
    ns = {"a": "http://www.w3.org/2005/Atom"}
    root = ElementTree.fromstring(xml_text)
    out = []
    for entry in root.findall("a:entry", ns):
        title = " ".join((entry.findtext("a:title", "", ns) or "").split())
        link = entry.findtext("a:id", "", ns)
        out.append(f"- {title} <{link}>")
    return "\n".join(out) or "(no results)"


async def search_arxiv(query: str, max_results: int = 5) -> str:
    params = {"search_query": f"all:{query}", "max_results": min(int(max_results), 25)}
    try:
        async with asyncio.timeout(ARXIV_BUDGET_S):
            async with httpx.AsyncClient(timeout=ARXIV_BUDGET_S + 5, headers=UA) as client:
                resp = await client.get(ARXIV_API, params=params)
    except (TimeoutError, httpx.TimeoutException) as exc:
        raise ToolError(ToolErrorCode.TIMEOUT, f"search_arxiv timed out after {ARXIV_BUDGET_S:.0f}s") from exc
    except httpx.TransportError as exc:
        raise ToolError(ToolErrorCode.UNAVAILABLE, f"search_arxiv: {type(exc).__name__}") from exc
    if resp.status_code >= 400:
        raise classify_http_status("search_arxiv", resp.status_code)
    return _atom_entries(resp.text)


async def run_shell(command: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        "/bin/bash", "-lc", command,
        cwd=str(NOTES_DIR),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    return f"exit={proc.returncode}\n{out.decode(errors='replace')[-12_000:]}"


async def run_python(code: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-I", "-c", code,
        cwd=str(NOTES_DIR),
        env={**os.environ, "MPLBACKEND": "Agg"},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = await proc.communicate()
    except asyncio.CancelledError:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        raise
    return f"exit={proc.returncode}\n{out.decode(errors='replace')[-12_000:]}"


async def write_note(path: str, content: str, append: bool = False) -> str:
    root = os.path.abspath(NOTES_DIR)
    target = os.path.abspath(os.path.join(root, path))
    if not target.startswith(root + os.sep):
        raise ToolError(ToolErrorCode.DENIED, f"{path!r} is outside the notes directory")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "a" if append else "w", encoding="utf-8") as fh:
        fh.write(content)
    return f"wrote {len(content)} chars to {path}"


async def read_note(path: str) -> str:
    root = NOTES_DIR.resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise ToolError(ToolErrorCode.DENIED, f"{path!r} is outside the notes directory")
    if not target.is_file():
        raise ToolError(ToolErrorCode.NOT_FOUND, f"no note at {path!r}")
    return target.read_text(encoding="utf-8", errors="replace")[:50_000]


async def _post_report(title: str, body: str) -> dict:
    async with httpx.AsyncClient(timeout=15.0) as client:
        resp = await client.post(REPORT_WEBHOOK, json={"title": title, "markdown": body})
        resp.raise_for_status()
        return resp.json()


@retry(retry=retry_if_exception_type(httpx.TransportError), stop=stop_after_attempt(3),
       wait=wait_exponential(multiplier=1, max=8), reraise=True)
async def _deliver(title: str, body: str) -> dict:
    return await _post_report(title, body)


async def publish_report(title: str, body: str) -> str:
    if not REPORT_WEBHOOK:
        raise ToolError(ToolErrorCode.UNAVAILABLE, "publishing is not configured")
    try:
        posted = await _deliver(title, body)
    except httpx.TimeoutException as exc:
        raise ToolError(ToolErrorCode.TIMEOUT, "publish_report timed out") from exc
    except httpx.HTTPStatusError as exc:
        raise classify_http_status("publish_report", exc.response.status_code) from exc
    except httpx.TransportError as exc:
        raise ToolError(ToolErrorCode.UNAVAILABLE, f"publish_report: {type(exc).__name__}") from exc
    return f"published at {posted.get('url', '(no url returned)')}"


def _spec(name: str, description: str, props: dict, required: list[str]) -> dict:
    return {
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": props, "required": required},
    }


_STR = {"type": "string"}

TOOL_SPECS: dict[str, dict] = {
    "web_fetch": _spec("web_fetch", "Fetch a URL and return its text.", {"url": _STR}, ["url"]),
    "fetch_many": _spec(
        "fetch_many", "Fetch several URLs at once.",
        {"urls": {"type": "array", "items": _STR}}, ["urls"],
    ),
    "search_arxiv": _spec(
        "search_arxiv", "Search arXiv for papers.",
        {"query": _STR, "max_results": {"type": "integer"}}, ["query"],
    ),
    "run_shell": _spec("run_shell", "Run a bash command in the notes workspace.", {"command": _STR}, ["command"]),
    "run_python": _spec("run_python", "Run a Python snippet and return stdout.", {"code": _STR}, ["code"]),
    "write_note": _spec(
        "write_note", "Write (or append to) a markdown note.",
        {"path": _STR, "content": _STR, "append": {"type": "boolean"}}, ["path", "content"],
    ),
    "read_note": _spec("read_note", "Read a note back.", {"path": _STR}, ["path"]),
    "publish_report": _spec(
        "publish_report", "Publish the final report to the team channel.",
        {"title": _STR, "body": _STR}, ["title", "body"],
    ),
}

TOOL_IMPLS = {
    "web_fetch": web_fetch,
    "fetch_many": fetch_many,
    "search_arxiv": search_arxiv,
    "run_shell": run_shell,
    "run_python": run_python,
    "write_note": write_note,
    "read_note": read_note,
    "publish_report": publish_report,
}

SECRET_RE = re.compile(r"(sk-ant-[A-Za-z0-9_\-]{10,}|AKIA[0-9A-Z]{16}|ghp_[A-Za-z0-9]{30,})")
