"""Discovery scope: per-segment excludes, .gitignore, skipped files; unparsable files never stop an audit."""

from __future__ import annotations

from harness_audit.static import parse_python
from harness_audit.workspace import Workspace
from tests.conftest import MakeTree


def test_discovery_scope(make_tree: MakeTree) -> None:
    root = make_tree({
        "agent/loop.py": "x = 1\n",
        ".venv/lib/site.py": "x = 1\n",
        "pkg/node_modules/dep.py": "x = 1\n",
        "buildings/ok.py": "x = 1\n",
        "ignored/thing.py": "x = 1\n",
        "gen.py": "x = 1\n",
        ".gitignore": "ignored/\ngen.py\n!keep.py\n",
        "keep.py": "x = 1\n",
        "sub/.gitignore": "local_*.py\n",
        "sub/local_a.py": "x = 1\n",
        "sub/real.py": "x = 1\n",
        "bin.py": b"\x00\x01binary",
        "latin.py": "caf\xe9 = 1\n".encode("latin-1"),
        "big.py": "x = 1\n" * 1000,
        "notes.txt": "hello",
    })
    d = Workspace.open(root, max_file_bytes=3000).discover(["python"])
    assert [f.path for f in d.files] == ["agent/loop.py", "buildings/ok.py", "keep.py", "sub/real.py"]
    assert {(s.path, s.reason) for s in d.skipped} == {("bin.py", "binary"), ("latin.py", "undecodable"),
                                                      ("big.py", "too-large")}


def test_minified_js_is_skipped_and_listed_but_long_written_code_is_not(make_tree: MakeTree) -> None:
    bundle = "var a=" + ";".join(f"function f{i}(x){{return x+{i}}}" for i in range(4000)) + "\n"
    written = "".join(f"export const value{i} = compute({i}, 'a longer argument string');\n" for i in range(800))
    root = make_tree({"public/app.min.js": bundle, "src/values.ts": written, "src/tiny.js": "let x=1;" * 40})
    d = Workspace.open(root).discover()
    assert [f.path for f in d.files] == ["src/tiny.js", "src/values.ts"]
    assert [(s.path, s.reason) for s in d.skipped] == [("public/app.min.js", "minified")]


def test_empty_excludes_audit_vendored_code(make_tree: MakeTree) -> None:
    root = make_tree({"site-packages/lib.py": "x = 1\n"})
    assert [f.path for f in Workspace.open(root, excludes=()).discover().files] == ["site-packages/lib.py"]
    assert Workspace.open(root).discover().files == ()


def test_syntax_error_is_listed_and_the_rest_is_parsed(make_tree: MakeTree) -> None:
    root = make_tree({"bad.py": "def broken(:\n", "good.py": "x = 1\n", "nul.py": "x = '\x00'\n"})
    ws = Workspace.open(root)
    parsed = parse_python(ws, ws.discover().files)
    assert list(parsed.project.modules) == ["good.py"]
    assert [u.path for u in parsed.unparsed] == ["bad.py"]
    assert "line 1" in parsed.unparsed[0].reason
