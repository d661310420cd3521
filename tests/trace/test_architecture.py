"""The trace engine is static: no model SDK, and (like every engine) it never gates, aggregates or renders."""

from __future__ import annotations

import ast
from pathlib import Path

TRACE = Path(__file__).resolve().parents[2] / "src" / "harness_audit" / "trace"
FORBIDDEN = ("pydantic_ai", "openai", "anthropic", "harness_audit.gate", "harness_audit.aggregate",
             "harness_audit.render", "harness_audit.pipeline", "harness_audit.api", "harness_audit.cli",
             "harness_audit.llm")


def test_trace_imports_no_model_sdk_and_no_pipeline_stage() -> None:
    files = sorted(TRACE.rglob("*.py"))
    assert files
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                assert not any(name == f or name.startswith(f + ".") for f in FORBIDDEN), f"{path.name} imports {name}"
