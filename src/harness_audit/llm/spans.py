"""Where functions and classes start and end, so a model can read one definition instead of a whole page.

`read_file(path, symbol=...)` shows one definition; a hybrid lead comes with the text of the function
around it. Python is parsed with `ast`, TypeScript/JavaScript with the static engine's tree-sitter front
end; a file that does not parse simply has no spans (the model pages through it instead).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import lru_cache

from harness_audit.workspace import Workspace

__all__ = ["Span", "definitions", "enclosing", "named"]

_PYTHON = (".py", ".pyi")
_SCRIPT = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")


@dataclass(frozen=True, slots=True)
class Span:
    """One function, method or class: its dotted name and its lines (decorators included)."""

    name: str
    """`Agent.run`, `run_tool`, `<anonymous>` for an unnamed function."""
    first: int
    """1-based first line."""
    last: int
    """1-based last line."""
    function: bool
    """False for a class."""


def definitions(ws: Workspace, rel: str) -> tuple[Span, ...]:
    """Every definition of a first-party file, in source order (empty when it is not Python/TS/JS or does not parse)."""
    lines = ws.lines(rel)
    if lines is None:
        return ()
    return _spans(rel, ws.sha256(rel) or "", "\n".join(lines))


@lru_cache(maxsize=512)
def _spans(rel: str, digest: str, text: str) -> tuple[Span, ...]:
    # keyed by content: an edited file never reuses another version's spans
    if rel.endswith(_PYTHON):
        return _python(text)
    if rel.endswith(_SCRIPT):
        return _script(rel, text)
    return ()


def _python(text: str) -> tuple[Span, ...]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    out: list[Span] = []

    def walk(nodes: list[ast.stmt], prefix: str) -> None:
        for node in nodes:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{node.name}"
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                out.append(Span(name, first, node.end_lineno or node.lineno, not isinstance(node, ast.ClassDef)))
                walk(node.body, f"{name}.")
            else:  # definitions inside if/try/with blocks at the same level
                for field in ("body", "orelse", "finalbody", "handlers"):
                    inner = getattr(node, field, None)
                    if isinstance(inner, list):
                        walk([n for n in inner if isinstance(n, ast.stmt)], prefix)  # pyright: ignore[reportUnknownVariableType]
                for handler in getattr(node, "handlers", ()):
                    walk(handler.body, prefix)

    try:
        walk(tree.body, "")
    except RecursionError:
        return tuple(out)
    return tuple(sorted(out, key=lambda s: (s.first, -s.last)))


def _script(rel: str, text: str) -> tuple[Span, ...]:
    # the TS front end is imported only when a TS/JS span is asked for: tree-sitter costs a Python-only audit
    from harness_audit.static.lang.typescript import TsModule

    try:
        mod = TsModule.parse(rel, text)
    except (ValueError, RecursionError, MemoryError):
        return ()
    out = [Span(mod.symbol_of(fn) or mod.function_name(fn), mod.line(fn), mod.end_line(fn), True)
           for fn in mod.functions()]
    for cls in mod.nodes("class_declaration", "class"):
        name = cls.child_by_field_name("name")
        out.append(Span(mod.node_text(name) if name is not None else "<anonymous>", mod.line(cls), mod.end_line(cls),
                        False))
    return tuple(sorted(out, key=lambda s: (s.first, -s.last)))


def enclosing(spans: tuple[Span, ...], line: int) -> Span | None:
    """The innermost function around `line` (a class only when no function holds it)."""
    around = [s for s in spans if s.first <= line <= s.last]
    functions = [s for s in around if s.function]
    pool = functions or around
    return min(pool, key=lambda s: s.last - s.first) if pool else None


def named(spans: tuple[Span, ...], name: str) -> list[Span]:
    """The definitions whose dotted name is `name` or ends with `.name` (`run` finds `Agent.run`)."""
    return [s for s in spans if s.name == name or s.name.endswith(f".{name}")]
