"""`idioms.reached_only_from_initialisers`: a function is set-up code only when every call chain into it starts in
a constructor; an unknown, module-level or tool caller keeps it a possible turn."""

from __future__ import annotations

import ast

import pytest

from harness_audit.static import idioms
from harness_audit.static.lang.python import PyModule, PyProject

_CLIENT = """\
class SpecClient:
    def _call(self, path):
        return path

    def spec(self):
        return self._call("/spec")


class Toolset:
    def __init__(self):
        client = SpecClient()
        self.ops = client.spec()
"""


@pytest.mark.parametrize(("extra", "expected"), [
    ("", True),
    ("\n\ndef run_tool():\n    client = SpecClient()\n    return client.spec()\n", False),
])
def test_every_chain_must_start_in_a_constructor(extra: str, expected: bool) -> None:
    mod = PyModule.parse("m.py", _CLIENT + extra)
    project = PyProject({"m.py": mod})
    target = next(f for f in mod.nodes(ast.FunctionDef) if f.name == "_call")
    assert idioms.reached_only_from_initialisers(project, mod, target) is expected


_FETCH = "def fetch():\n    return 1\n\n\nclass T:\n    def __init__(self):\n        self.x = fetch()\n"


@pytest.mark.parametrize(("extra", "expected"), [("", True), ("\n\nX = fetch()\n", False)])
def test_a_module_level_caller_is_not_set_up(extra: str, expected: bool) -> None:
    mod = PyModule.parse("m.py", _FETCH + extra)
    target = next(f for f in mod.nodes(ast.FunctionDef) if f.name == "fetch")
    assert idioms.reached_only_from_initialisers(PyProject({"m.py": mod}), mod, target) is expected


def test_a_function_nobody_calls_or_a_cycle_is_not_set_up() -> None:
    source = "def lone():\n    return 1\n\n\ndef a(n):\n    return b(n)\n\n\ndef b(n):\n    return a(n - 1)\n"
    mod = PyModule.parse("m.py", source)
    project = PyProject({"m.py": mod})
    fns = {f.name: f for f in mod.nodes(ast.FunctionDef)}
    assert not idioms.reached_only_from_initialisers(project, mod, fns["lone"])
    assert not idioms.reached_only_from_initialisers(project, mod, fns["a"])
