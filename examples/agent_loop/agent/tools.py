"""Tools the model may call."""

import os
import subprocess

import requests
from tenacity import retry, stop_after_attempt

WORKSPACE = "/srv/agent-workspace"
TICKETS_URL = "https://tickets.example.com/api/tickets"


def read_file(path: str) -> str:
    full = os.path.abspath(os.path.join(WORKSPACE, path))
    if not full.startswith(WORKSPACE):
        return "error: path outside workspace"
    with open(full, encoding="utf-8") as fh:
        return fh.read()


def run_shell(command: str) -> str:
    proc = subprocess.run(command, shell=True, capture_output=True, text=True)
    return proc.stdout + proc.stderr


@retry(stop=stop_after_attempt(3))
def create_ticket(title: str, body: str) -> str:
    resp = requests.post(TICKETS_URL, json={"title": title, "body": body})
    resp.raise_for_status()
    return resp.json()["id"]


TOOLS = {"read_file": read_file, "run_shell": run_shell, "create_ticket": create_ticket}

TOOL_SPECS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in {"read_file", "run_shell", "create_ticket"}
]
