"""Functions nothing refers to (`sem.unused`), and the audit dropping findings inside them."""

from __future__ import annotations

from pathlib import Path

from harness_audit.api import audit
from harness_audit.findings import CheckId
from harness_audit.static.sem.engine import front_end_of
from harness_audit.static.sem.unused import Def, defs_of_ir, defs_of_python, holding, unreferenced
from tests.conftest import MakeTree


def _spans(files: dict[str, str], judged: tuple[str, ...] | None = None,
           parser: str = "front end") -> dict[str, list[tuple[int, int]]]:
    """The unreferenced functions of `judged` (every file by default), through the front ends or `ast`."""
    defs: list[Def] = []
    for path in judged or tuple(files):
        if parser == "ast" and path.endswith(".py"):
            found = defs_of_python(path, files[path])
            assert found is not None
        else:
            parse = front_end_of(path)
            assert parse is not None
            found = defs_of_ir(parse(path, files[path]))
        defs.extend(found)
    out: dict[str, list[tuple[int, int]]] = {}
    for d in unreferenced(defs, files.get, list(files)):
        out.setdefault(d.path, []).append((d.line, d.end))
    return out


def test_a_private_function_no_file_names_is_unreferenced_and_a_called_one_or_a_librarys_api_is_not() -> None:
    files = {
        "agent.py": "def used():\n    return 1\n\n\ndef _forgotten():\n    return 2\n\n\ndef api():\n    return 3\n",
        "main.py": "from agent import used\n\nprint(used())\n",
    }
    assert _spans(files, ("agent.py",)) == {"agent.py": [(5, 6)]}
    assert _spans(files, ("agent.py",), parser="ast") == {"agent.py": [(5, 6)]}


def test_a_method_of_a_plain_class_nothing_calls_is_unreferenced() -> None:
    files = {"store.py": "class Store:\n    def keep(self):\n        pass\n\n    def replace_at(self, i):\n"
                         "        pass\n\n\nStore().keep()\n"}
    assert _spans(files) == {"store.py": [(5, 6)]}
    assert _spans(files, parser="ast") == {"store.py": [(5, 6)]}


def test_copies_of_one_function_in_two_trees_do_not_refer_to_each_other() -> None:
    body = "class Agent:\n    def replace_message_at(self, i):\n        pass\n"
    files = {"v1/agent.py": body, "v2/agent.py": body}
    assert _spans(files) == {"v1/agent.py": [(2, 3)], "v2/agent.py": [(2, 3)]}


def test_what_a_name_in_any_file_or_manifest_can_reach_stays() -> None:
    files = {
        "tools.py": "def lookup(q):\n    return q\n\n\ndef entry():\n    pass\n",
        "registry.py": "TOOLS = {'lookup': __import__('tools')}\n",
        "pyproject.toml": "[project.scripts]\nrun-it = 'tools:entry'\n",
    }
    assert _spans(files, ("tools.py",)) == {}


def test_decorated_overriding_entry_and_nested_functions_are_not_judged() -> None:
    files = {"hooks.py": (
        "import functools\nfrom lib import Base\n\n\n@functools.cache\ndef registered():\n    pass\n\n\n"
        "class Adapter(Base):\n    def completion(self):\n        pass\n\n\n"
        "def main():\n    def inner():\n        pass\n    return 0\n")}
    assert _spans(files) == {}
    assert _spans(files, parser="ast") == {}


def test_a_line_in_a_nested_function_belongs_to_the_function_around_it() -> None:
    text = "def _outer():\n    def inner():\n        return 1\n    return inner\n\n\ndef _other():\n    pass\n"
    found = defs_of_python("m.py", text)
    assert found is not None
    assert [(d.name, d.line, d.end) for d in holding(found, [3])] == [("_outer", 1, 4)]
    parse = front_end_of("m.py")
    assert parse is not None
    assert [(d.name, d.line, d.end) for d in holding(defs_of_ir(parse("m.py", text)), [3, 8])] == [
        ("_outer", 1, 4), ("_other", 7, 8)]


def test_files_a_framework_loads_by_path_and_modules_reexported_whole_are_not_judged() -> None:
    files = {
        "app/api/chat/route.ts": "export async function handleChat(req: Request) {\n  return req;\n}\n",
        "lib/agent.ts": "export async function performResearch(q: string) {\n  return q;\n}\n",
        "index.ts": "export * from './lib/agent';\n",
        "package.json": '{"name": "researcher", "private": true}\n',
    }
    assert _spans(files, ("app/api/chat/route.ts", "lib/agent.ts")) == {}
    del files["index.ts"]
    assert _spans(files, ("lib/agent.ts",)) == {"lib/agent.ts": [(1, 3)]}
    files["package.json"] = '{"name": "researcher", "main": "index.js"}\n'  # a library: the function is its API
    assert _spans(files, ("lib/agent.ts",)) == {}


_DEAD_RETRY = """\
import { createOrder } from "./shop";

export async function neverCalled(items: string[]) {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return await createOrder(items);
    } catch (e) {
      continue;
    }
  }
}
"""


def test_the_audit_drops_a_finding_inside_an_unreferenced_function(make_tree: MakeTree, tmp_path: Path) -> None:
    shop = "export async function createOrder(items: string[]) {\n" \
           "  return fetch('https://shop.example/orders', { method: 'POST', body: JSON.stringify(items) });\n}\n"
    called = _DEAD_RETRY.replace("neverCalled", "placeOrder") + "\nplaceOrder(['a']);\n"
    root = make_tree({"src/retry.ts": called, "src/shop.ts": shop, "package.json": '{"private": true}\n'})
    report = audit(root, ["C9"], overrides={"output_dir": str(tmp_path / "a")}, write=False).report
    assert [(f.file, f.check) for f in report.findings] == [("src/retry.ts", CheckId.C9)]
    (root / "src/retry.ts").write_text(_DEAD_RETRY)
    report = audit(root, ["C9"], overrides={"output_dir": str(tmp_path / "b")}, write=False).report
    assert not report.findings
