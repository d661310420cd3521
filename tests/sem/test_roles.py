"""Roles over small projects: what the role finders must survive (their detection is tested by the query fixtures)."""

from __future__ import annotations

from pathlib import Path

from harness_audit.findings import LandmarkKind
from harness_audit.static.sem.engine import SemProject, landmarks
from harness_audit.workspace import Workspace


def test_tool_loop_survives_locals_bound_through_each_other(tmp_path: Path) -> None:
    """Risk: following `a = pick(b)`, `b = pick(a)` for a tool name recursed until the stack overflowed (agno),
    and the preview lost every check of the audit."""
    (tmp_path / "loop.py").write_text(
        "def run(msg, tools):\n"
        "    for call in msg.tool_calls:\n"
        "        a = pick(b)\n"
        "        b = pick(a)\n"
        "        tools.get(a)(call)\n"
    )
    ws = Workspace.open(tmp_path)
    project = SemProject.build(ws, ws.discover().files)
    assert [(m.kind, m.line) for m in landmarks(project)] == [(LandmarkKind.TOOL_EXECUTION, 2)]
