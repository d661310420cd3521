"""Tool implementations for the support-ops agent."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import requests
from tenacity import retry, stop_after_attempt, wait_fixed

WORKSPACE = os.environ.get("AGENT_WORKSPACE", "/var/lib/agent/ws")
TICKETS_API = os.environ.get("TICKETS_API", "https://tickets.internal/api")
SANDBOX_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/var/lib/agent/home", "LANG": "C.UTF-8"}


def read_log(path: str, tail: int = 200) -> str:
    with open(os.path.join(WORKSPACE, path), errors="replace") as fh:
        lines = fh.readlines()
    return "".join(lines[-tail:])


def list_dir(path: str = ".") -> str:
    root = os.path.realpath(WORKSPACE)
    target = os.path.realpath(os.path.join(root, path))
    if os.path.commonpath([root, target]) != root:
        return "refused: outside workspace"
    return "\n".join(sorted(os.listdir(target)))


def run_script(command: str, timeout: int = 120) -> str:
    proc = subprocess.Popen(
        command,
        shell=True,
        cwd=WORKSPACE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=os.environ.copy(),
    )
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        return f"timed out after {timeout}s\n{out}"
    return f"exit={proc.returncode}\n{out[-10000:]}"


def disk_usage(path: str = ".") -> str:
    out = subprocess.run(
        ["du", "-sh", "--", path],
        cwd=WORKSPACE,
        capture_output=True,
        text=True,
        timeout=30,
        env=SANDBOX_ENV,
    )
    return out.stdout or out.stderr


@retry(stop=stop_after_attempt(3), wait=wait_fixed(2))
def create_ticket(title: str, body: str, priority: str = "p3") -> str:
    resp = requests.post(
        f"{TICKETS_API}/tickets",
        json={"title": title, "body": body, "priority": priority},
        timeout=20,
    )
    resp.raise_for_status()
    return f"created ticket {resp.json()['id']}"


def lookup_customer(email: str) -> str:
    resp = requests.get(f"{TICKETS_API}/customers", params={"email": email})
    resp.raise_for_status()
    return resp.text


TOOLS = {
    "read_log": (read_log, {"path": {"type": "string"}, "tail": {"type": "integer"}}, ["path"]),
    "list_dir": (list_dir, {"path": {"type": "string"}}, []),
    "run_script": (run_script, {"command": {"type": "string"}, "timeout": {"type": "integer"}}, ["command"]),
    "disk_usage": (disk_usage, {"path": {"type": "string"}}, []),
    "create_ticket": (
        create_ticket,
        {"title": {"type": "string"}, "body": {"type": "string"}, "priority": {"type": "string"}},
        ["title", "body"],
    ),
    "lookup_customer": (lookup_customer, {"email": {"type": "string"}}, ["email"]),
}


def tool_config() -> dict:
    specs = []
    for name in sorted(TOOLS):
        _, props, required = TOOLS[name]
        specs.append({"toolSpec": {
            "name": name,
            "description": (TOOLS[name][0].__doc__ or name).strip(),
            "inputSchema": {"json": {"type": "object", "properties": props, "required": required}},
        }})
    return {"tools": specs}
