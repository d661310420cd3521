"""The subagents' navigation tools: confined, paged, capped, deterministic."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness_audit.llm.tools import NavigationTools, ToolRefusal, ToolRefusalReason, glob_matcher, refusal_text
from harness_audit.symbols import SymbolIndex
from harness_audit.workspace import Workspace
from tests.conftest import MakeTree

LOOP = '''\
from agent.tools import execute


class Agent:
    def run(self, message):
        result = execute(message)
        return result


def main():
    return Agent().run("hi")
'''

TOOLS = '''\
def execute(call):
    return call
'''

TS = '''\
export function execute(call: string) {
  return call;
}
'''


def _tree(make_tree: MakeTree, extra: dict[str, str | bytes] | None = None) -> Path:
    files: dict[str, str | bytes] = {
        "agent/loop.py": LOOP,
        "agent/tools.py": TOOLS,
        "web/run.ts": TS,
        "big.py": "".join(f"line_{n} = {n}\n" for n in range(1, 451)),
        "node_modules/dep/index.js": "module.exports = 1;\n",
        "data.bin.py": b"\x00\x01\x02",
        "README.md": "hello\n",
    }
    files.update(extra or {})
    return make_tree(files)


def _tools(root: Path, *, indexed: bool = True, **kwargs: int) -> NavigationTools:
    ws = Workspace.open(root)
    index = SymbolIndex.build(ws, ws.discover().files) if indexed else None
    return NavigationTools(ws, index, **kwargs)


def _refused(call: object, *args: object, **kwargs: object) -> ToolRefusal:
    assert callable(call)
    with pytest.raises(ToolRefusal) as info:
        call(*args, **kwargs)
    return info.value


# ---------------------------------------------------------------- read_file

def test_read_numbers_lines_and_pages(make_tree: MakeTree) -> None:
    tools = _tools(_tree(make_tree))
    first = tools.read_file("big.py").splitlines()
    assert first[0] == "   1\tline_1 = 1"
    assert first[199] == " 200\tline_200 = 200"
    assert len(first) == 201
    assert first[-1] == "… file has 450 lines; call read_file('big.py', start_line=201) for more"
    last = tools.read_file("big.py", start_line=401).splitlines()
    assert last[0] == " 401\tline_401 = 401"
    assert last[-1] == " 450\tline_450 = 450"
    window = tools.read_file("./agent/../big.py", start_line=10, end_line=12).splitlines()
    assert window == ["  10\tline_10 = 10", "  11\tline_11 = 11", "  12\tline_12 = 12",
                      "… file has 450 lines; call read_file('big.py', start_line=13) for more"]
    # a requested range longer than a page is cut to a page
    assert len(tools.read_file("big.py", start_line=1, end_line=450).splitlines()) == 201
    assert tools.read_file("agent/tools.py") == "   1\tdef execute(call):\n   2\t    return call"


def test_read_caps_output_at_a_line_boundary(make_tree: MakeTree) -> None:
    tools = _tools(_tree(make_tree), max_chars=300)
    out = tools.read_file("big.py")
    assert len(out) <= 300
    lines = out.splitlines()
    assert all("\t" in line for line in lines[:-1])
    kept = int(lines[-2].split("\t")[0])
    assert lines[-1] == (f"… output cut at 300 characters after line {kept}; file has 450 lines; "
                         f"call read_file('big.py', start_line={kept + 1}) for more")


def test_read_refuses_bad_line_arguments(make_tree: MakeTree) -> None:
    tools = _tools(_tree(make_tree))
    for kwargs in ({"start_line": 0}, {"start_line": "x"}, {"start_line": True}, {"start_line": 500},
                   {"start_line": 5, "end_line": 4}):
        err = _refused(tools.read_file, "big.py", **kwargs)
        assert err.reason is ToolRefusalReason.BAD_ARGUMENT, kwargs
    assert tools.read_file("big.py", start_line="3", end_line=3.0).startswith("   3\tline_3 = 3")  # type: ignore[arg-type]


@pytest.mark.parametrize("path", ["../../etc/passwd", "agent/../../x.py", ".."])
def test_refuses_parent_escapes(make_tree: MakeTree, path: str) -> None:
    err = _refused(_tools(_tree(make_tree)).read_file, path)
    assert err.reason is ToolRefusalReason.FILE_OUTSIDE_WORKSPACE
    assert "/etc" not in err.remedy


def test_refuses_absolute_paths_even_inside_the_root(make_tree: MakeTree) -> None:
    root = _tree(make_tree)
    tools = _tools(root)
    assert _refused(tools.read_file, "/etc/passwd").reason is ToolRefusalReason.FILE_OUTSIDE_WORKSPACE
    inside = _refused(tools.read_file, str(root / "agent" / "loop.py"))
    assert inside.reason is ToolRefusalReason.FILE_OUTSIDE_WORKSPACE
    assert "'agent/loop.py'" in inside.remedy


def test_refuses_a_symlink_out_of_the_workspace(make_tree: MakeTree, tmp_path: Path) -> None:
    secret = tmp_path / "outside" / "secret.py"
    secret.parent.mkdir()
    secret.write_text("TOKEN = 'do-not-read'\n", encoding="utf-8")
    root = _tree(make_tree)
    os.symlink(secret, root / "agent" / "link.py")
    os.symlink(secret.parent, root / "escape")
    tools = _tools(root)
    for path in ("agent/link.py", "escape/secret.py"):
        err = _refused(tools.read_file, path)
        assert err.reason is ToolRefusalReason.FILE_OUTSIDE_WORKSPACE
        assert "do-not-read" not in refusal_text(err)
    assert tools.grep("TOKEN").startswith("no matches for 'TOKEN'")
    assert "link" not in tools.glob("**")


def test_refuses_excluded_directories_naming_the_segment(make_tree: MakeTree) -> None:
    root = _tree(make_tree)
    os.symlink(root / "node_modules" / "dep" / "index.js", root / "agent" / "dep.js")
    tools = _tools(root)
    for path in ("node_modules/dep/index.js", "node_modules/missing.js", "agent/dep.js"):
        err = _refused(tools.read_file, path)
        assert err.reason is ToolRefusalReason.OUT_OF_SCOPE_PATH, path
        assert "'node_modules'" in err.message
    assert "node_modules" not in tools.glob("**")
    assert "node_modules" not in tools.grep("module")


def test_missing_file_points_to_glob(make_tree: MakeTree) -> None:
    tools = _tools(_tree(make_tree))
    err = _refused(tools.read_file, "agent/nope.py")
    assert err.reason is ToolRefusalReason.FILE_NOT_FOUND
    assert "glob(" in err.remedy
    folder = _refused(tools.read_file, "agent")
    assert folder.reason is ToolRefusalReason.FILE_NOT_FOUND
    assert "glob('agent/**')" in folder.remedy


def test_refuses_binary_and_credential_files(make_tree: MakeTree) -> None:
    tools = _tools(_tree(make_tree, {".env": "API_KEY=sk-123\n", ".env.example": "API_KEY=\n"}))
    assert _refused(tools.read_file, "data.bin.py").reason is ToolRefusalReason.NOT_TEXT
    assert _refused(tools.read_file, ".env").reason is ToolRefusalReason.OUT_OF_SCOPE_PATH
    assert tools.read_file(".env.example") == "   1\tAPI_KEY="
    assert tools.read_file("README.md") == "   1\thello"


def test_refusal_text_gives_reason_and_remedy(make_tree: MakeTree) -> None:
    err = _refused(_tools(_tree(make_tree)).read_file, "../../etc/passwd")
    assert refusal_text(err) == ("Refused (file-outside-workspace): '../../etc/passwd' leaves the audited workspace\n"
                                 "Remedy: pass a path inside the workspace, as `glob` lists them")


# ---------------------------------------------------------------- grep and glob

def test_grep_lists_sorted_matches_with_a_glob_filter(make_tree: MakeTree) -> None:
    tools = _tools(_tree(make_tree))
    assert tools.grep(r"execute\(").splitlines() == [
        "agent/loop.py:6: result = execute(message)",
        "agent/tools.py:1: def execute(call):",
        "web/run.ts:1: export function execute(call: string) {",
    ]
    assert tools.grep(r"execute\(", glob="agent/*.py").splitlines() == [
        "agent/loop.py:6: result = execute(message)",
        "agent/tools.py:1: def execute(call):",
    ]
    assert tools.grep(r"execute\(", glob="**/*.ts") == "web/run.ts:1: export function execute(call: string) {"
    assert tools.grep("nothing-like-this").startswith("no matches for 'nothing-like-this' in ")


def test_grep_caps_matches_and_says_how_many_more(make_tree: MakeTree) -> None:
    tools = _tools(_tree(make_tree), max_results=5)
    lines = tools.grep(r"^line_\d+", glob="big.py").splitlines()
    assert lines[:5] == [f"big.py:{n}: line_{n} = {n}" for n in range(1, 6)]
    assert lines[5] == "… 445 more matches not shown; narrow the pattern or pass a glob"
    capped = _tools(_tree(make_tree), max_chars=200).grep("line_", glob="big.py")
    assert len(capped) <= 200
    assert capped.splitlines()[-1].startswith("… output cut at 200 characters;")


def test_grep_refuses_invalid_and_explosive_patterns(make_tree: MakeTree) -> None:
    tools = _tools(_tree(make_tree))
    err = _refused(tools.grep, "def (")
    assert err.reason is ToolRefusalReason.BAD_ARGUMENT
    assert "missing )" in err.message
    assert _refused(tools.grep, r"(\w+\s?)+:").reason is ToolRefusalReason.BAD_ARGUMENT
    assert _refused(tools.grep, "").reason is ToolRefusalReason.BAD_ARGUMENT
    assert tools.grep(r"from \w+(?:\.\w+)* import") == "agent/loop.py:1: from agent.tools import execute"


def test_grep_skips_very_long_lines(make_tree: MakeTree) -> None:
    tools = _tools(_tree(make_tree, {"min.js": "var a=1;" * 400 + "\nvar target = 1;\n"}))
    out = tools.grep("var", glob="min.js").splitlines()
    assert out == ["min.js:2: var target = 1;",
                   "note: 1 lines longer than 2000 characters were not searched"]


def test_glob_lists_discovered_files(make_tree: MakeTree) -> None:
    tools = _tools(_tree(make_tree))
    assert tools.glob("**/*.py").splitlines() == ["agent/loop.py", "agent/tools.py", "big.py"]
    assert tools.glob("*.py") == tools.glob("**/*.py")
    assert tools.glob("agent/*") == "agent/loop.py\nagent/tools.py"
    assert tools.glob("**/*.{ts,js}") == "web/run.ts"
    assert tools.glob("*.md").startswith("no files match '*.md'")
    assert _tools(_tree(make_tree), max_results=1).glob("**").splitlines() == [
        "agent/loop.py", "… 3 more files not shown; narrow the pattern"]


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("*.py", "a/b/c.py", True),
    ("a/*.py", "a/b/c.py", False),
    ("a/**/*.py", "a/c.py", True),
    ("a/**/*.py", "a/b/c.py", True),
    ("a/**", "a/b/c.py", True),
    ("a/", "a/b/c.py", True),
    ("loop.py", "agent/loop.py", True),
    ("agent/loop.py", "x/agent/loop.py", False),
    ("[ab].py", "b.py", True),
    ("[!ab].py", "b.py", False),
    ("?.py", "ab.py", False),
])
def test_glob_semantics(pattern: str, path: str, expected: bool) -> None:
    assert glob_matcher(pattern)(path) is expected


# ---------------------------------------------------------------- symbols

def test_find_symbol_function_method_and_suffix(make_tree: MakeTree) -> None:
    tools = _tools(make_tree({"agent/loop.py": LOOP, "agent/tools.py": TOOLS}))
    assert tools.find_symbol("execute").splitlines() == [
        "definitions of 'execute' (symbol index): 1",
        "agent/tools.py:1: function execute: def execute(call):",
    ]
    assert tools.find_symbol("Agent.run").splitlines()[1] == "agent/loop.py:5: method Agent.run: def run(self, message):"
    assert tools.find_symbol("loop.Agent").splitlines()[1] == "agent/loop.py:4: class Agent: class Agent:"
    assert tools.find_symbol("Nothing").startswith("no definition of 'Nothing'")
    assert not tools.degraded


def test_find_references_across_files(make_tree: MakeTree) -> None:
    tools = _tools(make_tree({"agent/loop.py": LOOP, "agent/tools.py": TOOLS,
                              "worker.py": "from agent import tools\n\ntools.execute(1)\n"}))
    assert tools.find_references("execute").splitlines() == [
        "references to 'execute' (symbol index): 3",
        "agent/loop.py:1:25: from agent.tools import execute",
        "agent/loop.py:6:18: result = execute(message)",
        "worker.py:3:7: tools.execute(1)",
    ]
    assert "references to 'run'" in tools.find_references("Agent.run")
    assert tools.find_references("Agent.run").splitlines()[1] == 'agent/loop.py:11:20: return Agent().run("hi")'
    assert not tools.degraded


def test_unparsed_files_degrade_to_text_search_and_say_so(make_tree: MakeTree) -> None:
    tools = _tools(_tree(make_tree, {"agent/broken.py": "def execute(:\n"}))
    assert not tools.degraded
    out = tools.find_symbol("execute").splitlines()
    assert out[0].startswith("degraded: not in the symbol index (python or unparsed files)")
    assert "agent/tools.py:1: function execute: def execute(call):" in out
    assert "web/run.ts:1: function execute: export function execute(call: string) {" in out
    assert out[-1] == "agent/broken.py:1: def execute(:"
    assert tools.degraded


def test_no_index_degrades_every_lookup(make_tree: MakeTree) -> None:
    tools = _tools(_tree(make_tree), indexed=False)
    out = tools.find_references("Agent.run").splitlines()
    assert out[0].startswith("degraded: no symbol index; text search for the word 'run'")
    assert out[1:] == ["agent/loop.py:5: def run(self, message):", 'agent/loop.py:11: return Agent().run("hi")']
    assert tools.degraded
    assert _refused(tools.find_symbol, "not a name").reason is ToolRefusalReason.BAD_ARGUMENT


def test_outputs_are_deterministic(make_tree: MakeTree) -> None:
    root = _tree(make_tree)
    calls = [("read_file", ("big.py", 100)), ("grep", ("execute|run",)), ("glob", ("**",)),
             ("find_symbol", ("run",)), ("find_references", ("execute",))]
    a, b = _tools(root), _tools(root)
    for name, args in calls:
        assert getattr(a, name)(*args).encode() == getattr(b, name)(*args).encode() == getattr(a, name)(*args).encode()


def test_paging_advances_when_one_line_exceeds_the_cap(make_tree: MakeTree) -> None:
    tools = _tools(make_tree({"wide.py": "x = '" + "a" * 500 + "'\ny = 2\n"}), max_chars=200)
    out = tools.read_file("wide.py").splitlines()
    assert out[0].startswith("   1\tx = 'aaa")
    assert out[-1].endswith("call read_file('wide.py', start_line=2) for more")
    assert tools.read_file("wide.py", start_line=2) == "   2\ty = 2"
    only = _tools(make_tree({"one.py": "x = '" + "a" * 500 + "'\n"}), max_chars=200).read_file("one.py")
    assert len(only) <= 200
    assert only.splitlines()[-1] == "… output cut at 200 characters; line 1, the last, is longer than that"
