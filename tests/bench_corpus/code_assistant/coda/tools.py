"""File and shell tools, plus the registry that exposes them to the model."""

from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass
from subprocess import PIPE, STDOUT, Popen, TimeoutExpired
from typing import Any, Callable

log = logging.getLogger(__name__)

MAX_READ_CHARS = 200_000
MAX_TOOL_OUTPUT = 20_000
SHELL_TIMEOUT_S = 30.0


def _clip(text: str, limit: int = MAX_TOOL_OUTPUT) -> str:
    if len(text) <= limit:
        return text
    head = text[: limit // 2]
    tail = text[-limit // 2 :]
    return f"{head}\n... [{len(text) - limit} characters omitted] ...\n{tail}"


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    fn: Callable[..., str]

    def schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} registered twice")
        self._tools[tool.name] = tool

    def has(self, name: str) -> bool:
        return name in self._tools

    def names(self) -> list[str]:
        return sorted(self._tools)

    def schemas(self) -> list[dict[str, Any]]:
        ordered = sorted(self._tools.values(), key=lambda t: t.name)
        return [tool.schema() for tool in ordered]

    def invoke(self, name: str, args: dict[str, Any]) -> str:
        tool = self._tools[name]
        try:
            return tool.fn(**args)
        except Exception as exc:
            log.debug("tool %s raised", name, exc_info=True)
            return f"Error: {exc}"


class Workspace:
    def __init__(self, root: str, shell_timeout: float = SHELL_TIMEOUT_S) -> None:
        self.root = os.path.realpath(root)
        self.shell_timeout = shell_timeout

    # -- reading -----------------------------------------------------------
    def read_file(self, path: str, offset: int = 0, limit: int | None = None) -> str:
        full = os.path.normpath(os.path.join(self.root, path))
        if not full.startswith(self.root):
            raise PermissionError(f"{path} is outside the repository")
        with open(full, encoding="utf-8", errors="replace") as fh:
            text = fh.read(MAX_READ_CHARS)
        lines = text.splitlines()
        stop = None if limit is None else offset + limit
        numbered = [
            f"{n:>6}\t{line}" for n, line in enumerate(lines[offset:stop], start=offset + 1)
        ]
        return "\n".join(numbered) if numbered else "(empty file)"

    # -- writing -----------------------------------------------------------
    def write_file(self, path: str, content: str) -> str:
        target = os.path.abspath(os.path.join(self.root, path))
        if not target.startswith(self.root + os.sep):
            raise PermissionError(f"refusing to write outside the repository: {path}")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as fh:
            fh.write(content)
        return f"Wrote {len(content)} characters to {path}"

    def _inside(self, path: str) -> str:
        candidate = os.path.realpath(os.path.join(self.root, path))
        if os.path.commonpath([candidate, self.root]) != self.root:
            raise PermissionError(f"{path} resolves outside the repository")
        return candidate

    def edit_file(self, path: str, old: str, new: str, count: int = 1) -> str:
        real = self._inside(path)
        with open(real, encoding="utf-8") as fh:
            original = fh.read()
        hits = original.count(old)
        if hits == 0:
            return f"The snippet was not found in {path}; re-read the file and try again."
        if count and hits > count:
            return f"The snippet occurs {hits} times in {path}; include more context."
        updated = original.replace(old, new, count or -1)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(real), prefix=".coda-edit-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(updated)
        os.replace(tmp, real)
        return f"Edited {path} ({min(hits, count or hits)} replacement(s))"

    # -- shell -------------------------------------------------------------
    def run_shell(self, command: str) -> str:
        proc = Popen(command, shell=True, cwd=self.root, text=True,
                     stdout=PIPE, stderr=STDOUT)
        try:
            out, _ = proc.communicate(timeout=self.shell_timeout)
        except TimeoutExpired:
            proc.kill()
            proc.wait()
            raise
        return f"{_clip(out or '')}\n[exit status {proc.returncode}]"


def build_registry(ws: Workspace) -> ToolRegistry:
    reg = ToolRegistry()
    reg.add(Tool(
        "read_file",
        "Read a UTF-8 text file relative to the repository root.",
        {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "offset": {"type": "integer", "minimum": 0},
                "limit": {"type": "integer", "minimum": 1},
            },
            "required": ["path"],
        },
        ws.read_file,
    ))
    reg.add(Tool(
        "write_file",
        "Create or overwrite a file with the given content.",
        {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
        ws.write_file,
    ))
    reg.add(Tool(
        "edit_file",
        "Replace an exact snippet of text in a file.",
        {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "old": {"type": "string"},
                "new": {"type": "string"},
                "count": {"type": "integer", "minimum": 0},
            },
            "required": ["path", "old", "new"],
        },
        ws.edit_file,
    ))
    reg.add(Tool(
        "run_shell",
        "Run a shell command in the repository root and return its output.",
        {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
        ws.run_shell,
    ))
    return reg
