"""Shared helpers of the trace tests: run the checker through the gate, as the CLI does."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from harness_audit.api import trace
from harness_audit.report import Report

DATA = Path(__file__).parent / "data"

Found = list[tuple[str, str, int]]


def gated(paths: list[Path], selection: list[str] | None = None, **overrides: Any) -> Report:
    """The report of `harness-audit trace` over `paths` (nothing written)."""
    return trace(paths, selection, overrides=overrides or None, write=False).report


def findings(report: Report) -> Found:
    """(check, rule, line) of every finding, sorted."""
    return sorted((f.check.value, f.source.split("/", 1)[1], f.line or 0) for f in report.findings)


def copy(src: Path, tmp_path: Path) -> Path:
    """A copy of a recording under `tmp_path` (tests never check a file in place)."""
    dst = tmp_path / src.name
    shutil.copyfile(src, dst)
    return dst
