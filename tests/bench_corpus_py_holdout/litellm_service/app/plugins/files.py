"""Read-only file access under the shared reports directory."""
from __future__ import annotations

import os
from pathlib import Path

from ..registry import Tool

REPORTS = Path(os.environ.get("REPORTS_DIR", "/srv/agent/reports"))


async def read_report(path: str) -> str:
    real = (REPORTS / path).resolve()
    if not str(real).startswith(str(REPORTS.resolve())):
        return "refused: outside the reports directory"
    return real.read_text(errors="replace")[:30_000]


async def list_reports() -> str:
    return "\n".join(sorted(p.name for p in REPORTS.iterdir() if p.is_file()))


READ_REPORT = Tool(
    name="read_report",
    description="Read a report file by relative path.",
    parameters={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
    handler=read_report,
)

LIST_REPORTS = Tool(
    name="list_reports",
    description="List the available report files.",
    parameters={"type": "object", "properties": {}},
    handler=list_reports,
)
