"""System prompt assembly."""

from __future__ import annotations

import os
import platform
from datetime import datetime

BASE_INSTRUCTIONS = """\
You are Coda, a careful software engineer pairing with the user inside their
repository. Prefer small, verifiable steps. Read files before editing them,
keep edits minimal, and run the project's tests after non-trivial changes.

Tools:
- read_file: read a file (line-numbered). Use offset/limit for big files.
- write_file: create or overwrite a file.
- edit_file: replace an exact snippet in a file.
- run_shell: run a shell command in the repository root.

When you are done, reply with a short summary of what changed and why.
"""

_IGNORED = {".git", "node_modules", "__pycache__", ".venv", ".mypy_cache"}


def _top_level_listing(root: str, limit: int = 40) -> str:
    entries: list[str] = []
    for name in os.listdir(root):
        if name in _IGNORED or name.startswith("."):
            continue
        suffix = "/" if os.path.isdir(os.path.join(root, name)) else ""
        entries.append(f"- {name}{suffix}")
        if len(entries) >= limit:
            entries.append("- ...")
            break
    return "\n".join(entries)


def build_system_prompt(root: str, project_notes: str | None = None) -> str:
    sections = [BASE_INSTRUCTIONS]
    sections.append(
        f"Environment: {platform.system()} {platform.release()}, "
        f"local time {datetime.now().strftime('%Y-%m-%d %H:%M:%S')}"
    )
    sections.append(f"Repository root: {root}\nTop-level entries:\n{_top_level_listing(root)}")
    if project_notes:
        sections.append("Project notes (from CODA.md):\n" + project_notes.strip())
    return "\n\n".join(sections)


def load_project_notes(root: str) -> str | None:
    path = os.path.join(root, "CODA.md")
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read(8_000)
    except FileNotFoundError:
        return None
