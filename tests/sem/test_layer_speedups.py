"""The semantic layer's shortcuts answer exactly what the plain computations they replace answer.

Speed and memory are measured in `benchmarks/sem_speed.py`; `scripts/sem_snapshot.py` compares whole trees before
and after a change. These tests pin each shortcut against the plain version on the fixtures.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness_audit.findings import CheckId
from harness_audit.static.sem import ir
from harness_audit.static.sem.engine import SemProject, landmarks, run_queries
from harness_audit.static.sem.front_python import _parser, line_table  # pyright: ignore[reportPrivateUsage]
from harness_audit.static.sem.summaries import Summaries, Summary
from harness_audit.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
TREES = [ROOT / "examples" / "agent_loop", *sorted(p for p in (ROOT / "tests" / "fixtures" / "sem").iterdir())]


def _project(tree: Path) -> SemProject:
    ws = Workspace.open(tree)
    return SemProject.build(ws, ws.discover().files)


def _plain_walk(node: ir.Node) -> Iterator[ir.Node]:
    yield node
    for child in node.children():
        yield from _plain_walk(child)


@pytest.mark.parametrize("tree", TREES, ids=lambda p: p.name)
def test_a_kept_walk_of_a_body_is_the_walk_of_its_statements(tree: Path) -> None:
    """Risk: the walk a body keeps drifts from the nodes below its statements (a query would miss a call)."""
    for mod in _project(tree).modules:
        for fn in mod.functions:
            plain = [n for stmt in fn.body for n in _plain_walk(stmt)]
            assert list(ir.walk_block(fn.body)) == plain
            assert list(ir.walk_block(fn.body)) == plain  # the kept list, read again
            for kind in (ir.Call, (ir.Loop, ir.Call, ir.Comp), (ir.Call, ir.Assign)):
                assert ir.nodes_of(fn.body, kind) == [n for n in plain if isinstance(n, kind)]
                assert ir.nodes_of(fn.body, kind) == [n for n in plain if isinstance(n, kind)]  # kept, read again
            for node in plain:
                if isinstance(node, ir.Loop | ir.If):
                    assert list(ir.walk_block(node.body)) == [n for s in node.body for n in _plain_walk(s)]


@pytest.mark.parametrize("source", [
    b"", b"x = 1", b"x = 1\n", b"a = 1\r\nb = 2\r\n", b"a = 1\rb = 2\n", b"s = '''\n\n'''\nf(s)\n",
    "t = '\u00e9\u00e9'\nu = 2\n".encode(), b"\n\n\ndef f():\n    return (\n        1)\n",
])
def test_line_table_gives_tree_sitter_rows(source: bytes) -> None:
    """Risk: a line read off byte offsets disagrees with the parser's rows (CRLF, a lone CR, multi-byte text)."""
    rows = line_table(source)
    assert len(rows) == len(source) + 1
    stack = [_parser().parse(source).root_node]
    while stack:
        node = stack.pop()
        assert rows[node.start_byte] == node.start_point[0] + 1
        assert rows[node.end_byte] == node.end_point[0] + 1
        stack.extend(node.children)


def _plain_fixpoint(sums: Summaries) -> dict[int, Summary]:
    """Every function's summary by plain rounds over every edge, as the fixpoint computed it before."""
    facts = sums.facts
    summaries: dict[int, Summary] = {}
    edges: dict[int, list[int]] = {}
    for fn in facts.functions:
        own: Summary = {}
        targets: list[int] = []
        for call, callees in facts.calls(fn):
            for e in sums.direct(fn, call):
                own.setdefault(e.kind, e)
            targets.extend(c.index for c in callees if isinstance(c, ir.Function))
            targets.extend(f.index for f in sums._callbacks(fn, call))  # pyright: ignore[reportPrivateUsage]
        targets.extend(n.fn.index for n in ir.walk_block(fn.body) if isinstance(n, ir.FuncExpr))
        summaries[fn.index] = own
        edges[fn.index] = targets
    changed = True
    rounds = 0
    while changed and rounds < 50:
        changed = False
        rounds += 1
        for fn in facts.functions:
            mine = summaries[fn.index]
            for t in edges[fn.index]:
                for kind, e in summaries.get(t, {}).items():
                    if kind not in mine:
                        mine[kind] = e
                        changed = True
    return summaries


_CHAIN = """\
import subprocess
import requests


def first(x):
    second(x)
    return third(x)


def second(x):
    fourth(lambda: third(x))


def third(x):
    return fourth(x)


def fourth(x):
    requests.post("https://example.com", json=x)
    if x:
        return first(x)
    subprocess.run(["ls"])
"""
"""Callers before their callees, a cycle, a callback: effects need several rounds to reach `first`."""


@pytest.mark.parametrize("tree", [*TREES, None], ids=lambda p: p.name if p else "chain")
def test_fixpoint_that_skips_settled_functions_equals_plain_rounds(tree: Path | None, tmp_path: Path) -> None:
    """Risk: passing over a function whose callees did not grow loses an effect, or cites another origin."""
    if tree is None:
        (tmp_path / "chain.py").write_text(_CHAIN)
        tree = tmp_path
    project = _project(tree)
    got = {fn.index: project.sums.of_fn(fn) for fn in project.facts.functions}
    # the same project: what the plain rounds read (calls, callees, effects) is what the fixpoint read
    plain = _plain_fixpoint(project.sums)
    for fn in project.facts.functions:
        want = plain[fn.index]
        assert [(k, e.kind, e.detail, e.fn.key, e.call.line) for k, e in got[fn.index].items()] == \
            [(k, e.kind, e.detail, e.fn.key, e.call.line) for k, e in want.items()], fn.key


def test_a_closed_project_is_freed_without_the_collector() -> None:
    """Risk: the IR's cycles (function and module, method and class) leave a dead project to the cyclic collector,
    whose next pass walks every node once more (about a second on 136k lines)."""
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        project = _project(ROOT / "examples" / "agent_loop")
        landmarks(project)
        run_queries(project, list(CheckId))
        made = sum(len(m.functions) for m in project.modules)
        project.close()
        del project
        # a module outliving the project would keep its whole IR; a recursive helper closure made by a query may
        # keep one function it looked at until the collector runs, nothing more
        assert not [o for o in gc.get_objects() if isinstance(o, ir.Module)]
        assert len([o for o in gc.get_objects() if isinstance(o, ir.Function)]) < made / 4
    finally:
        if was_enabled:
            gc.enable()


@pytest.mark.parametrize("name", ["agent.py", "agent.ts", "agent.js"])
def test_a_lowered_module_is_freed_without_the_collector(name: str) -> None:
    """Risk: the lowering leaves a cycle holding the module (a lowerer's dispatch table of its own bound methods),
    so every file's IR, source and text cache stay held until the collector's next pass walks them all."""
    from harness_audit.static.sem.front_python import parse as parse_py
    from harness_audit.static.sem.front_typescript import parse as parse_ts

    source = ("def run(client):\n    return client.chat.completions.create(model='m')\n" if name.endswith(".py")
              else "export async function run(client) {\n  return client.chat.completions.create({model: 'm'});\n}\n")
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        mod = (parse_py if name.endswith(".py") else parse_ts)(name, source)
        assert mod.error is None and len(mod.functions) == 2
        for fn in mod.functions:  # the module's own cycles, as SemProject.close breaks them
            fn.parent = None
            del fn.module
        del mod, fn
        assert not [o for o in gc.get_objects() if isinstance(o, ir.Module)]
    finally:
        if was_enabled:
            gc.enable()
