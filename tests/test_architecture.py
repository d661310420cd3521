"""Import direction and the single Finding factory, checked on the source."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "harness_audit"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return {m for m in out if m.startswith("harness_audit")}


_CATALOGUE = {"harness_audit.messages", "harness_audit.messages._cli", "harness_audit.messages._errors",
              "harness_audit.messages._help", "harness_audit.messages._host"}
"""The message catalogue: the one internal module the leaves may use (it imports nothing else of ours)."""


@pytest.mark.parametrize(("package", "forbidden"), [
    ("findings.py", {"harness_audit."}),
    ("errors.py", {"harness_audit."}),  # but the catalogue: an error is a message id and its values
    ("messages", {"harness_audit."}),
    ("static", {"harness_audit.gate", "harness_audit.aggregate", "harness_audit.render", "harness_audit.pipeline",
                "harness_audit.api", "harness_audit.cli"}),
    ("gate.py", {"harness_audit.static", "harness_audit.render", "harness_audit.aggregate"}),
    ("aggregate.py", {"harness_audit.static", "harness_audit.gate", "harness_audit.render"}),
    ("render", {"harness_audit.static", "harness_audit.gate", "harness_audit.pipeline"}),
])
def test_import_direction(package: str, forbidden: set[str]) -> None:
    target = SRC / package
    files = [target] if target.is_file() else sorted(target.rglob("*.py"))
    for path in files:
        bad = {m for m in _imports(path) - _CATALOGUE if any(m == f.rstrip(".") or m.startswith(f) for f in forbidden)}
        assert not bad, f"{path.relative_to(SRC)} imports {bad}"


def test_findings_are_made_only_by_the_gate() -> None:
    for path in SRC.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        makes = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
                 and n.func.id == "Finding"]
        if path.name != "gate.py":
            assert not makes, f"{path.relative_to(SRC)} constructs Finding at lines {makes}"
