"""The symbol index: definitions, references and imports from Python parse trees (TS/JS: test_symbols_ts.py)."""

from __future__ import annotations

from harness_audit.symbols import SymbolIndex, indexed_languages
from harness_audit.workspace import Workspace
from tests.conftest import MakeTree

AGENT = '''\
"""An agent."""
import json
from tools import run_tool as execute, Registry

MAX_TURNS = 8
a, (b, *rest) = 1, (2, 3)
if True:
    FALLBACK: str = "x"


class Agent:
    retries = 3

    def run(self, message):
        def step():
            return execute(message)
        return self.history.append(step())

    class Inner:
        async def run(self):
            return None


def run(agent):
    return agent.run("hi")
'''

TOOLS = '''\
import os.path


def run_tool(call):
    return call


class Registry:
    pass


x = run_tool(
    1)
y = (Registry()
     .tools
     .run_tool)
'''


def _index(make_tree: MakeTree, files: dict[str, str | bytes]) -> SymbolIndex:
    ws = Workspace.open(make_tree(files))
    return SymbolIndex.build(ws, ws.discover().files)


def test_definitions_of_functions_classes_methods_and_variables(make_tree: MakeTree) -> None:
    index = _index(make_tree, {"pkg/agent.py": AGENT, "tools.py": TOOLS})
    got = {(s.qualname, s.kind, s.file, s.line) for s in index.symbols if s.file == "pkg/agent.py"}
    assert got == {
        ("MAX_TURNS", "variable", "pkg/agent.py", 5),
        ("a", "variable", "pkg/agent.py", 6),
        ("b", "variable", "pkg/agent.py", 6),
        ("rest", "variable", "pkg/agent.py", 6),
        ("FALLBACK", "variable", "pkg/agent.py", 8),
        ("Agent", "class", "pkg/agent.py", 11),
        ("Agent.retries", "variable", "pkg/agent.py", 12),
        ("Agent.run", "method", "pkg/agent.py", 14),
        ("Agent.run.step", "function", "pkg/agent.py", 15),
        ("Agent.Inner", "class", "pkg/agent.py", 19),
        ("Agent.Inner.run", "method", "pkg/agent.py", 20),
        ("run", "function", "pkg/agent.py", 24),
    }
    assert all(s.language == "python" for s in index.symbols)


def test_find_by_bare_name_and_dotted_suffix(make_tree: MakeTree) -> None:
    index = _index(make_tree, {"pkg/agent.py": AGENT, "tools.py": TOOLS})
    assert [s.qualname for s in index.definitions("run")] == ["Agent.run", "Agent.Inner.run", "run"]
    assert [s.qualname for s in index.definitions("Agent.run")] == ["Agent.run"]
    assert [s.qualname for s in index.definitions("Inner.run")] == ["Agent.Inner.run"]
    assert [s.qualname for s in index.definitions("agent.Agent.run")] == ["Agent.run"]
    assert [s.qualname for s in index.definitions("pkg.agent.run")] == ["run"]
    assert [(s.file, s.kind) for s in index.definitions("run_tool")] == [("tools.py", "function")]
    assert index.definitions("gent.run") == ()
    assert index.definitions("nothing") == ()


def test_references_across_files(make_tree: MakeTree) -> None:
    index = _index(make_tree, {"pkg/agent.py": AGENT, "tools.py": TOOLS})
    refs = [(r.file, r.line, r.column, r.text) for r in index.references("run_tool")]
    assert refs == [
        ("pkg/agent.py", 3, 19, "from tools import run_tool as execute, Registry"),
        ("tools.py", 12, 5, "x = run_tool("),
        ("tools.py", 16, 7, ".run_tool)"),
    ]
    # a method is found by name at its call sites, whatever the receiver
    assert [(r.file, r.line, r.column) for r in index.references("Agent.run")] == [("pkg/agent.py", 25, 18)]
    assert [(r.file, r.line) for r in index.references("Registry")] == [("pkg/agent.py", 3), ("tools.py", 14)]
    assert [r.name for r in index.references("path")] == ["os.path"]
    # stores and definitions are not references
    assert index.references("MAX_TURNS") == ()


def test_columns_count_characters_not_bytes(make_tree: MakeTree) -> None:
    index = _index(make_tree, {"u.py": 'x = "éé" + émoji.call\n'})
    (ref,) = index.references("call")
    assert (ref.line, ref.column) == (1, 18)
    assert 'x = "éé" + émoji.call'[ref.column - 1:].startswith("call")


def test_unparsable_files_are_listed_and_skipped(make_tree: MakeTree) -> None:
    index = _index(make_tree, {"bad.py": "def broken(:\n", "good.py": "def ok():\n    pass\n",
                               "web/app.ts": "export function ok() {}\n"})
    assert [(u.path, u.partial) for u in index.unparsed] == [("bad.py", False)]
    assert "line 1" in index.unparsed[0].reason
    assert index.files == ("good.py", "web/app.ts")
    assert [s.file for s in index.definitions("ok")] == ["good.py", "web/app.ts"]
    assert index.languages == indexed_languages() == frozenset({"python", "typescript", "javascript"})


def test_resolves_python_imports_to_their_definitions(make_tree: MakeTree) -> None:
    index = _index(make_tree, {"pkg/agent.py": AGENT, "tools.py": TOOLS, "pkg/__init__.py": "from .agent import *\n",
                               "main.py": "import pkg\nfrom pkg import Agent as A\n"})
    assert [(s.file, s.qualname) for s in index.resolve("pkg/agent.py", "execute")] == [("tools.py", "run_tool")]
    assert [(s.file, s.qualname) for s in index.resolve("pkg/agent.py", "Registry")] == [("tools.py", "Registry")]
    assert [(s.file, s.qualname) for s in index.resolve("main.py", "A.run")] == [("pkg/agent.py", "Agent.run")]
    assert [(s.file, s.qualname) for s in index.resolve("main.py", "pkg.MAX_TURNS")] == [("pkg/agent.py",
                                                                                          "MAX_TURNS")]
    assert [s.qualname for s in index.resolve("pkg/agent.py", "self.run")] == ["Agent.run", "Agent.Inner.run"]
    assert index.resolve("pkg/agent.py", "json.dumps") == ()  # the standard library is not indexed


def test_build_is_deterministic(make_tree: MakeTree) -> None:
    root = make_tree({"pkg/agent.py": AGENT, "tools.py": TOOLS})
    ws = Workspace.open(root)
    files = ws.discover().files
    first = SymbolIndex.build(ws, files)
    second = SymbolIndex.build(Workspace.open(root), reversed(files))
    assert first.symbols == second.symbols
    assert first.references("run") == second.references("run")
