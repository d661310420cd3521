"""C12 · Loop and budget limits — Python rules.

Shapes detected:
- `unbounded-turn-loop`: `while True` (or a condition that never counts turns) around a model call.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static import idioms
from harness_audit.static.lang.python import PyModule, PyProject
from harness_audit.static.registry import Hit, rule


def _is_forever(test: ast.expr) -> bool:
    return isinstance(test, ast.Constant) and bool(test.value) is True


@rule(CheckId.C12, lang="python", name="unbounded-turn-loop")
def unbounded_turn_loop(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a `while True` loop whose body calls the model: the only way out is the model ceasing to call tools."""
    for loop in mod.nodes(ast.While):
        if not _is_forever(loop.test):
            continue
        calls_model = any(isinstance(n, ast.Call) and idioms.is_model_call(mod, n) for n in mod.walk_body(loop.body))
        if not calls_model:
            continue
        yield Hit(
            node=loop,
            claim="the agent loop has no ceiling on turns: it runs until the model stops calling tools",
            consequence="a model that keeps calling tools runs forever and cost climbs until someone notices",
            direction="iterate `for turn in range(max_turns)` and end with an explicit budget-exhausted status",
        )
