"""Tools exposed to the model. Each handler takes (root, args) and returns text."""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import requests

MAX_OUTPUT = 20_000


def _clip(text: str) -> str:
    if len(text) <= MAX_OUTPUT:
        return text
    return text[:MAX_OUTPUT] + f"\n... [{len(text) - MAX_OUTPUT} more characters]"


def read_file(root: Path, args: dict) -> str:
    target = os.path.normpath(os.path.join(str(root), args["path"]))
    if not target.startswith(str(root)):
        return "Error: path is outside the workspace"
    try:
        with open(target, encoding="utf-8", errors="replace") as fh:
            return _clip(fh.read())
    except OSError as e:
        return f"Error: {e}"


def write_file(root: Path, args: dict) -> str:
    base = root.resolve()
    target = (base / args["path"]).resolve()
    if not target.is_relative_to(base):
        return "Error: path is outside the workspace"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(args["content"], encoding="utf-8")
    return f"wrote {len(args['content'])} bytes to {target.relative_to(base)}"


def bash(root: Path, args: dict) -> str:
    last_error = ""
    for attempt in range(3):
        try:
            proc = subprocess.run(
                args["command"],
                shell=True,
                cwd=root,
                capture_output=True,
                text=True,
                timeout=args.get("timeout", 120),
            )
            return _clip(f"exit={proc.returncode}\n{proc.stdout}{proc.stderr}")
        except subprocess.TimeoutExpired as e:
            last_error = f"timed out after {e.timeout}s"
            time.sleep(1 + attempt)
    return f"Error: {last_error}"


def fetch_url(root: Path, args: dict) -> str:
    resp = requests.get(args["url"], headers={"User-Agent": "coder/0.3"})
    if resp.status_code >= 400:
        return f"Error: HTTP {resp.status_code}"
    return _clip(resp.text)


TOOLS: dict[str, dict] = {
    "read_file": {
        "description": "Read a UTF-8 file relative to the workspace root.",
        "schema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        "handler": read_file,
    },
    "write_file": {
        "description": "Create or overwrite a file relative to the workspace root.",
        "schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
        },
        "handler": write_file,
    },
    "bash": {
        "description": "Run a shell command in the workspace and return its output.",
        "schema": {
            "type": "object",
            "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}},
            "required": ["command"],
        },
        "handler": bash,
    },
    "fetch_url": {
        "description": "Fetch a URL over HTTP(S) and return the body as text.",
        "schema": {"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]},
        "handler": fetch_url,
    },
}
