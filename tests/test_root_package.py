"""An audit of a package's own directory (`…/nanopkg/`, holding `__init__.py`) resolves the package's absolute
imports of itself (`from nanopkg.tools import run_tool`) in the semantic facts and the symbol index, as it does
from the directory above. (The shape rules do not: see `parse_python`.)"""

from __future__ import annotations

from pathlib import Path

from harness_audit.static.sem.engine import SemProject
from harness_audit.symbols import SymbolIndex, root_package
from harness_audit.workspace import Workspace

AGENT = "from nanopkg.tools import run_tool\nfrom nanopkg import tools\n\n\ndef step(call):\n" \
        "    run_tool(call)\n    return tools.run_tool(call)\n"
TOOLS = "def run_tool(call):\n    return call\n"


def _package(tmp_path: Path, name: str = "nanopkg", init: bool = True) -> Workspace:
    root = tmp_path / name
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "loop.py").write_text(AGENT)
    (root / "tools.py").write_text(TOOLS)
    if init:
        (root / "__init__.py").write_text("")
    return Workspace.open(root)


def test_root_package_needs_an_init_and_an_identifier() -> None:
    assert root_package("nanopkg", ["__init__.py", "tools.py"]) == "nanopkg"
    assert root_package("nanopkg", ["tools.py"]) == ""  # not a package: its name is only a folder's
    assert root_package("3f2a9c", ["__init__.py"]) == ""  # a checkout named by a commit is no package name


def test_symbol_index_follows_the_root_packages_absolute_imports(tmp_path: Path) -> None:
    ws = _package(tmp_path)
    index = SymbolIndex.build(ws, ws.discover().files)
    assert [(s.file, s.qualname) for s in index.resolve("agent/loop.py", "run_tool")] == [("tools.py", "run_tool")]


def test_semantic_facts_resolve_calls_through_the_root_packages_absolute_imports(tmp_path: Path) -> None:
    ws = _package(tmp_path)
    project = SemProject.build(ws, ws.discover().files)
    step = next(f for f in project.facts.functions if f.name == "step")
    targets = {getattr(c, "name", None) or str(c) for _, callees in project.facts.calls(step) for c in callees}
    assert any("run_tool" in t for t in targets), targets
    resolved = [c for _, callees in project.facts.calls(step) for c in callees if type(c).__name__ != "Ext"]
    assert len(resolved) == 2, "both spellings (`run_tool`, `tools.run_tool`) should reach tools.py"
