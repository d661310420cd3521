"""Small projects for the semantic layer's tests: one file written, discovered and lowered as an audit would."""

from __future__ import annotations

from pathlib import Path

from harness_audit.static.sem import ir
from harness_audit.static.sem.engine import SemProject
from harness_audit.workspace import Workspace


def project_of(tmp_path: Path, name: str, text: str) -> SemProject:
    """The project of one file `name` holding `text`."""
    (tmp_path / name).write_text(text)
    ws = Workspace.open(tmp_path)
    return SemProject.build(ws, ws.discover().files)


def function_named(project: SemProject, name: str) -> ir.Function:
    """The first function of the project called `name`."""
    return next(f for f in project.facts.functions if f.name == name)
