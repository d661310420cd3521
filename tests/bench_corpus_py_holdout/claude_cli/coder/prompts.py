"""System prompt assembly."""
from __future__ import annotations

import os
import platform
from datetime import datetime
from pathlib import Path

BASE = """You are a careful coding assistant working inside a user's repository.
Prefer small, reviewable edits. Run the test suite after changing code.
Use the tools provided; never invent file contents."""


def build_system_prompt(root: Path) -> str:
    listing = "\n".join(os.listdir(root)[:200])
    return (
        f"{BASE}\n\n"
        f"Current time: {datetime.now().isoformat(timespec='seconds')}\n"
        f"OS: {platform.system()}\n"
        f"Workspace: {root}\n"
        f"Top-level files:\n{listing}\n"
    )


def tool_specs(registry: dict) -> list[dict]:
    return [
        {"name": name, "description": spec["description"], "input_schema": spec["schema"]}
        for name, spec in sorted(registry.items())
    ]
