"""Python: parse once per file, index the nodes rules need, resolve names through imports.

`PyModule` is the per-file semantic context (ruff's `SemanticModel`, bandit's `Context`);
`PyProject` ties the modules of one audit together so rules can follow a call to its
definition in the same module or another module of the project.
"""

from __future__ import annotations

import ast
import itertools
import operator
import re
from array import array
from collections import defaultdict, deque
from collections.abc import Iterable, Iterator, KeysView
from dataclasses import dataclass, field
from typing import TypeVar

from harness_audit.findings import evidence_is_thin, normalise_lines, split_lines
from harness_audit.static.lang import TreeTooDeep

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef
LoopNode = ast.For | ast.AsyncFor | ast.While
TryNode = ast.Try | ast.TryStar
ScopeNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef | ast.Module
_SCOPE_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_FUNCTION_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)

_N = TypeVar("_N", bound=ast.AST)

MAX_TREE_DEPTH = 200
"""Deepest Python syntax tree analysed (`TreeTooDeep`); Python's own parser stops nested brackets at 200."""

_POSITION = operator.attrgetter("lineno", "col_offset")
_LINE_END = re.compile(r"\r\n|\r|\n")
_SCALAR_FIELDS = frozenset({
    "id", "attr", "arg", "asname", "module", "level", "is_async", "conversion", "kind", "type_comment", "tag",
    "rest", "kwd_attrs", "simple",
})
"""Fields that hold identifiers, numbers or strings, never a node (`name` too, see `_node_fields`)."""
_SCALAR_FIELDS_OF: dict[str, frozenset[str]] = {
    "Constant": frozenset({"value"}), "MatchSingleton": frozenset({"value"}),
    "Global": frozenset({"names"}), "Nonlocal": frozenset({"names"}), "TypeIgnore": frozenset({"lineno"}),
}
_LEAF_FIELDS = frozenset({"ctx", "op", "ops"})
"""Fields that hold context and operator singletons: walked, but neither indexed nor given a parent."""
_WALK_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}
_WALK_FIELDS_REVERSED: dict[type[ast.AST], tuple[str, ...]] = {}
_CHILD_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}

# The walkers below read only the fields that can hold nodes, from these per-class tables, instead of testing
# every field of every node as `ast.iter_child_nodes` does: they visit millions of nodes per audit.


def _node_fields(cls: type[ast.AST]) -> tuple[str, ...]:
    """The fields of `cls` that can hold nodes, in `_fields` order (so in `ast.iter_child_nodes` order)."""
    scalar = _SCALAR_FIELDS | _SCALAR_FIELDS_OF.get(cls.__name__, frozenset())
    if cls.__name__ != "TypeAlias":  # `name` is an identifier everywhere but in 3.12's `type X = ...`
        scalar |= {"name"}
    fields = tuple(f for f in cls._fields if f not in scalar)
    _WALK_FIELDS[cls] = fields
    _WALK_FIELDS_REVERSED[cls] = fields[::-1]
    _CHILD_FIELDS[cls] = tuple(f for f in fields if f not in _LEAF_FIELDS)
    return fields


def _child_fields(cls: type[ast.AST]) -> tuple[str, ...]:
    _node_fields(cls)
    return _CHILD_FIELDS[cls]


def _walk_fields_reversed(cls: type[ast.AST]) -> tuple[str, ...]:
    _node_fields(cls)
    return _WALK_FIELDS_REVERSED[cls]


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """`list(ast.iter_child_nodes(node))`, faster."""
    out: list[ast.AST] = []
    fields = _WALK_FIELDS.get(node.__class__)
    if fields is None:
        fields = _node_fields(node.__class__)
    for name in fields:
        value = getattr(node, name, None)
        if isinstance(value, list):
            out.extend(item for item in value if isinstance(item, ast.AST))  # pyright: ignore[reportUnknownVariableType]
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def subtree(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and all its descendants, breadth-first: exactly what `ast.walk` yields, in its order, faster."""
    todo = deque([node])
    pop, push = todo.popleft, todo.append
    table = _WALK_FIELDS
    while todo:
        cur = pop()
        fields = table.get(cur.__class__)
        if fields is None:
            fields = _node_fields(cur.__class__)
        for name in fields:
            value = getattr(cur, name, None)
            if isinstance(value, list):
                # a node's list fields hold nodes (or None in `Dict.keys`)
                for item in value:  # pyright: ignore[reportUnknownVariableType]
                    if isinstance(item, ast.AST):
                        push(item)
            elif isinstance(value, ast.AST):
                push(value)
        yield cur


@dataclass(frozen=True, slots=True)
class FuncRef:
    """A function definition somewhere in the project."""

    module: PyModule
    """The module that defines it."""
    node: FunctionNode
    """Its definition."""

    @property
    def symbol(self) -> str:
        """Dotted name inside its module (`Agent.run`)."""
        return self.module.symbol(self.node) or self.node.name


class PyModule:
    """One parsed Python file with indexes built in a single walk of the tree."""

    __slots__ = ("path", "source", "_lines", "_bounds", "tree", "module_name", "imports", "_by_type",
                 "_sorted", "_defs", "_methods", "_mentions", "_calls_by_name")

    def __init__(self, path: str, source: str, tree: ast.Module) -> None:
        self.path = path
        """Canonical path relative to the root."""
        self.source = source
        """The file's text."""
        self._lines: list[str] | None = None
        self._bounds: array[int] | None = None
        self.tree = tree
        """The parsed module."""
        self.module_name = _module_name(path)
        """Dotted module name derived from the path (`agent/loop.py` → `agent.loop`)."""
        self.imports: dict[str, str] = {}
        """Local name → qualified name, from every import statement in the file."""
        self._by_type: dict[type[ast.AST], list[ast.AST]] = defaultdict(list)
        self._sorted: set[type[ast.AST]] = set()
        self._mentions: dict[tuple[str, ...], bool] = {}
        self._calls_by_name: dict[str, list[int]] | None = None
        self._defs: dict[str, list[FunctionNode]] = defaultdict(list)
        self._methods: dict[tuple[str, str], FunctionNode] = {}
        self._index()

    @property
    def lines(self) -> list[str]:
        """The file's lines, split on first use (most modules of a large tree never need them)."""
        if self._lines is None:
            self._lines = split_lines(self.source)
        return self._lines

    @classmethod
    def parse(cls, path: str, source: str) -> PyModule:
        """Parse `source`; raises `SyntaxError` (or `ValueError` for NUL bytes) on bad input."""
        return cls(path, source, ast.parse(source, filename=path, type_comments=False))

    def _index(self) -> None:
        by_type = self._by_type
        level: list[ast.AST] = [self.tree]
        child_fields = _CHILD_FIELDS
        depth = 0
        # this loop visits every node of every file once and dominates indexing time: it reads only the
        # fields that can hold child nodes (a per-class table) instead of testing every field of every node.
        # It goes one generation at a time, so the tree's depth is known for free: a tree deeper than the
        # analysis can recurse (`x = f()()()…` a thousand calls long) is refused here, before any rule sees it.
        while level:
            depth += 1
            if depth > MAX_TREE_DEPTH:
                raise TreeTooDeep(f"nested more than {MAX_TREE_DEPTH} levels deep: too deep to analyse")
            below: list[ast.AST] = []
            push = below.append
            for node in level:
                cls = node.__class__
                by_type[cls].append(node)
                fields = child_fields.get(cls)
                if fields is None:
                    fields = _child_fields(cls)
                for name in fields:
                    value = getattr(node, name, None)
                    if value is None:
                        continue
                    if value.__class__ is list:
                        for item in value:
                            if item is not None:  # `Dict.keys` holds None for `**spread`
                                # an attribute on the node costs a fraction of a node→parent dict on large trees
                                item._ha_parent = node
                                push(item)
                    elif isinstance(value, ast.AST):
                        value._ha_parent = node  # type: ignore[attr-defined]
                        push(value)
            level = below
        for imp in self.nodes(ast.Import):
            for alias in imp.names:
                if alias.asname:
                    self.imports[alias.asname] = alias.name
                else:
                    top = alias.name.split(".")[0]
                    self.imports[top] = top
        for imp in self.nodes(ast.ImportFrom):
            base = self._absolute_from(imp)
            for alias in imp.names:
                if alias.name != "*":
                    self.imports[alias.asname or alias.name] = f"{base}.{alias.name}" if base else alias.name
        for fn in self.functions():
            self._defs[fn.name].append(fn)
            owner = _parent_of(fn)
            if isinstance(owner, ast.ClassDef):
                self._methods[(owner.name, fn.name)] = fn

    def _absolute_from(self, imp: ast.ImportFrom) -> str:
        if not imp.level:
            return imp.module or ""
        package = self.module_name.split(".")
        # a module's package is its name minus the last part; `__init__` already is the package
        base = package[: len(package) - imp.level] if not self.path.endswith("__init__.py") else \
            package[: len(package) - imp.level + 1]
        return ".".join([*base, imp.module] if imp.module else base)

    # ------------------------------------------------------------ node access
    def nodes(self, kind: type[_N], *, any_order: bool = False) -> list[_N]:
        """Every node of exactly this type, in source order.

        With `any_order`, in whatever order the index holds them: for scans whose outcome does not depend on
        the order (`any(...)`, building a set), which then skip sorting the largest lists (names, constants).
        """
        found = self._by_type.get(kind)
        if found is None:
            return []
        if not any_order and kind not in self._sorted:
            # sorted on first use: most kinds (names, constants) are never asked for; the sort is stable, so
            # nodes at one position (a call and its callee chain) keep the walk's order
            if "lineno" in kind._attributes:
                found.sort(key=_POSITION)
            self._sorted.add(kind)
        return found  # type: ignore[return-value]  # the index is keyed by type

    def calls(self) -> list[ast.Call]:
        """Every call expression, in source order."""
        return self.nodes(ast.Call)

    def _call_index(self) -> dict[str, list[int]]:
        """Called name's last part → positions in `calls()`, built on first use."""
        if self._calls_by_name is None:
            index: dict[str, list[int]] = {}
            for i, call in enumerate(self.calls()):
                func = call.func
                short = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
                if short:
                    index.setdefault(short, []).append(i)
            self._calls_by_name = index
        return self._calls_by_name

    def called_names(self) -> KeysView[str]:
        """Every called name's last part (`post` for `self.client.post(...)`) in the module."""
        return self._call_index().keys()

    def calls_to(self, names: Iterable[str]) -> list[ast.Call]:
        """Calls whose called name's last part is one of `names`, in `calls()` order (ties included)."""
        index = self._call_index()
        calls = self.calls()
        if isinstance(names, tuple) and len(names) == 1:  # the common lookup of one name: already in order
            return [calls[i] for i in index.get(names[0], ())]
        positions = [i for name in names for i in index.get(name, ())]
        positions.sort()
        return [calls[i] for i in positions]

    def functions(self) -> list[FunctionNode]:
        """Every function and method definition, in source order."""
        fns: list[FunctionNode] = [*self.nodes(ast.FunctionDef), *self.nodes(ast.AsyncFunctionDef)]
        fns.sort(key=lambda n: n.lineno)
        return fns

    def loops(self) -> list[LoopNode]:
        """Every `for`, `async for` and `while`, in source order."""
        loops: list[LoopNode] = [*self.nodes(ast.For), *self.nodes(ast.AsyncFor), *self.nodes(ast.While)]
        loops.sort(key=lambda n: n.lineno)
        return loops

    def trys(self) -> list[TryNode]:
        """Every `try` statement, in source order."""
        trys: list[TryNode] = [*self.nodes(ast.Try), *self.nodes(ast.TryStar)]
        trys.sort(key=lambda n: n.lineno)
        return trys

    # ------------------------------------------------------------ tree navigation
    def parent(self, node: ast.AST) -> ast.AST | None:
        """The node's parent (None for the module)."""
        return _parent_of(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        """Parents from the nearest outwards."""
        cur = getattr(node, "_ha_parent", None)
        while cur is not None:
            yield cur
            cur = getattr(cur, "_ha_parent", None)

    def enclosing_function(self, node: ast.AST) -> FunctionNode | None:
        """The innermost function or method around `node`."""
        # a plain loop over the parent links: rules ask this of most calls in the project
        cur = getattr(node, "_ha_parent", None)
        while cur is not None:
            if isinstance(cur, _FUNCTION_DEFS):
                return cur  # type: ignore[return-value]  # checked just above
            cur = getattr(cur, "_ha_parent", None)
        return None

    def enclosing_class(self, node: ast.AST) -> ast.ClassDef | None:
        """The innermost class around `node`."""
        cur = getattr(node, "_ha_parent", None)
        while cur is not None:
            if isinstance(cur, ast.ClassDef):
                return cur
            cur = getattr(cur, "_ha_parent", None)
        return None

    def symbol(self, node: ast.AST) -> str | None:
        """Dotted name of the innermost function/class containing `node` (or `node` itself if it is one)."""
        names: list[str] = []
        chain = [node, *self.ancestors(node)]
        for anc in chain:
            if isinstance(anc, FunctionNode | ast.ClassDef):
                names.append(anc.name)
        return ".".join(reversed(names)) or None

    def enclosing_loops(self, node: ast.AST) -> list[LoopNode]:
        """Loops around `node` in its own function, nearest first (a `def` ends the search)."""
        out: list[LoopNode] = []
        child = node
        for anc in self.ancestors(node):
            if isinstance(anc, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                break
            if isinstance(anc, LoopNode) and child not in anc.orelse:
                out.append(anc)
            child = anc
        return out

    def enclosing_trys(self, node: ast.AST) -> list[tuple[TryNode, str]]:
        """Try statements around `node` in its own function, nearest first, with the part it is in.

        The part is `body`, `handler`, `orelse` or `finally`.
        """
        out: list[tuple[TryNode, str]] = []
        child = node
        for anc in self.ancestors(node):
            if isinstance(anc, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                break
            if isinstance(anc, TryNode):
                if child in anc.body:
                    out.append((anc, "body"))
                elif child in anc.orelse:
                    out.append((anc, "orelse"))
                elif child in anc.finalbody:
                    out.append((anc, "finally"))
                else:
                    out.append((anc, "handler"))
            child = anc
        return out

    def guarded_by(self, node: ast.AST, exceptions: set[str]) -> bool:
        """Whether `node` sits in a `try` body whose handlers catch one of `exceptions` (or catch all).

        Names are compared by their last dotted part (`json.JSONDecodeError` ≈ `JSONDecodeError`).
        """
        wanted = {e.rsplit(".", 1)[-1] for e in exceptions}
        for tr, part in self.enclosing_trys(node):
            if part != "body":
                continue
            for handler in tr.handlers:
                caught = self.handler_names(handler)
                if not caught or caught & wanted:
                    return True
        return False

    def handler_names(self, handler: ast.ExceptHandler) -> set[str]:
        """Last-part names an `except` clause catches; empty for a bare `except:`."""
        if handler.type is None:
            return set()
        elts = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if len(elts) == 1 and isinstance(elts[0], ast.Name):
            elts = self._exception_tuple(elts[0].id) or elts
        names: set[str] = set()
        for e in elts:
            dotted = self.dotted(e)
            if dotted:
                names.add(dotted.rsplit(".", 1)[-1])
        return names

    def _exception_tuple(self, name: str) -> list[ast.expr]:
        """The items of a module-level tuple of exceptions bound once to `name` (`_ERRORS = (ValueError,
        KeyError)`), so `except _ERRORS:` is read as the exceptions it names; empty when `name` is anything else."""
        bound = [s.value for s in self.tree.body if isinstance(s, ast.Assign) and len(s.targets) == 1
                 and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
        bound += [s.value for s in self.tree.body if isinstance(s, ast.AnnAssign) and s.value is not None
                  and isinstance(s.target, ast.Name) and s.target.id == name]
        if len(bound) != 1 or not isinstance(bound[0], ast.Tuple):
            return []
        return list(bound[0].elts)

    def walk(self, node: ast.AST, *, into_functions: bool = False) -> Iterator[ast.AST]:
        """Descendants of `node` (not `node` itself); nested defs/lambdas/classes skipped unless asked."""
        # depth-first in `ast.iter_child_nodes` order: children are pushed last-first onto the stack
        stack: list[ast.AST] = []
        pop, push = stack.pop, stack.append
        table = _WALK_FIELDS_REVERSED
        cur = node
        while True:
            fields = table.get(cur.__class__)
            if fields is None:
                fields = _walk_fields_reversed(cur.__class__)
            for name in fields:
                value = getattr(cur, name, None)
                if isinstance(value, list):
                    # a node's list fields hold nodes (or None in `Dict.keys`)
                    for item in reversed(value):  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
                        if isinstance(item, ast.AST):
                            push(item)
                elif isinstance(value, ast.AST):
                    push(value)
            while True:
                if not stack:
                    return
                cur = pop()
                yield cur
                if into_functions or not isinstance(cur, _SCOPE_DEFS):
                    break

    def walk_body(self, stmts: list[ast.stmt], *, into_functions: bool = False) -> Iterator[ast.AST]:
        """Every node inside a list of statements (the statements included)."""
        for stmt in stmts:
            yield stmt
            yield from self.walk(stmt, into_functions=into_functions)

    # ------------------------------------------------------------ names
    def dotted(self, expr: ast.AST | None) -> str | None:
        """`a.b.c` for a Name/Attribute chain (calls in the chain are written `f()`), without import resolution."""
        parts: list[str] = []
        cur = expr
        while True:
            if isinstance(cur, ast.Attribute):
                parts.append(cur.attr)
                cur = cur.value
            elif isinstance(cur, ast.Call):
                inner = self.dotted(cur.func)
                if inner is None:
                    return None
                parts.append(inner + "()")
                break
            elif isinstance(cur, ast.Name):
                parts.append(cur.id)
                break
            else:
                return None
        return ".".join(reversed(parts))

    def qualname(self, expr: ast.AST | None) -> str | None:
        """Like `dotted`, with the first name replaced through the imports (`sp.run` → `subprocess.run`)."""
        dotted = self.dotted(expr)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        target = self.imports.get(head)
        if target is None:
            return dotted
        return f"{target}.{rest}" if rest else target

    def call_name(self, call: ast.Call) -> str:
        """Qualified name of what is called, or `""` when it is not a plain name chain (memoised on the node)."""
        name: str | None = getattr(call, "_ha_qn", None)
        if name is None:
            name = self.qualname(call.func) or ""
            call._ha_qn = name  # type: ignore[attr-defined]
        return name

    @staticmethod
    def keyword(call: ast.Call, name: str) -> ast.expr | None:
        """The value of keyword argument `name`, if passed explicitly."""
        for kw in call.keywords:
            if kw.arg == name:
                return kw.value
        return None

    @staticmethod
    def has_kwargs_splat(call: ast.Call) -> bool:
        """Whether the call passes `**kwargs` (so any keyword may be present)."""
        return any(kw.arg is None for kw in call.keywords)

    # ------------------------------------------------------------ source text
    def _line_bounds(self) -> array[int]:
        # start and end offset of every line, packed: a fraction of the memory of a list of line strings,
        # which matters when every module of a large tree is held at once
        if self._bounds is None:
            source = self.source
            if "\r" in source:
                bounds = array("I")
                start = 0
                for m in _LINE_END.finditer(source):
                    bounds.append(start)
                    bounds.append(m.start())
                    start = m.end()
                if start < len(source):
                    bounds.append(start)
                    bounds.append(len(source))
            else:
                # the common case, without a per-line Python loop: lines end at "\n" only
                parts = source.split("\n")
                if parts[-1] == "":
                    parts.pop()  # no line after a final newline (nor in an empty file)
                lengths = list(map(len, parts))
                starts = list(itertools.accumulate(map((1).__add__, lengths), initial=0))[:-1]
                ends = list(map(operator.add, starts, lengths))
                bounds = array("I", itertools.chain.from_iterable(zip(starts, ends, strict=True)))
            self._bounds = bounds
        return self._bounds

    @property
    def line_count(self) -> int:
        """Number of lines, counted as the tokenizer does."""
        return len(self._line_bounds()) // 2

    def line(self, lineno: int) -> str:
        """The text of a 1-based line (empty when out of range)."""
        if self._lines is not None:
            return self._lines[lineno - 1] if 1 <= lineno <= len(self._lines) else ""
        bounds = self._line_bounds()
        if not 1 <= lineno <= len(bounds) // 2:
            return ""
        return self.source[bounds[2 * lineno - 2]:bounds[2 * lineno - 1]]

    def excerpt(self, line: int, end: int | None = None) -> str:
        """The cited line, extended by following lines of the same node (at most five) until it carries real code."""
        last = min(end or line, line + 5, self.line_count)
        chosen = [self.line(line)]
        n = line
        while evidence_is_thin(normalise_lines("\n".join(chosen))) and n < last:
            n += 1
            chosen.append(self.line(n))
        return "\n".join(s.strip() for s in chosen if s.strip())

    def mentions(self, words: tuple[str, ...]) -> bool:
        """Whether any of `words` occurs in the file's text (memoised per tuple).

        An exact pre-test for a pattern every match of which contains one of `words`: when the file has none,
        no node's text matches, and the per-node search (much slower than a substring test) can be skipped.
        """
        found = self._mentions.get(words)
        if found is None:
            found = self._mentions[words] = any(word in self.source for word in words)
        return found

    def segment(self, node: ast.AST) -> str:
        """The exact source text of a node (from the cached lines: `ast.get_source_segment` re-splits the file)."""
        try:
            first, last = node.lineno - 1, node.end_lineno  # type: ignore[attr-defined]
            start, end = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
        except AttributeError:
            return ""
        if last is None or end is None or first < 0 or last > self.line_count:
            return ""
        chunk = [self.line(n).encode("utf-8") for n in range(first + 1, last + 1)]
        if not chunk:
            return ""
        # AST column offsets count UTF-8 bytes, not characters
        if len(chunk) == 1:
            return chunk[0][start:end].decode("utf-8", "replace")
        chunk[0] = chunk[0][start:]
        chunk[-1] = chunk[-1][:end]
        return b"\n".join(chunk).decode("utf-8", "replace")

    # ------------------------------------------------------------ definitions
    def local_functions(self, name: str) -> list[FunctionNode]:
        """Functions and methods defined in this module with this name."""
        return self._defs.get(name, [])

    def method(self, cls: str, name: str) -> FunctionNode | None:
        """Method `name` of class `cls` defined in this module."""
        return self._methods.get((cls, name))


def later_siblings(parent: ast.AST, child: ast.AST) -> list[ast.stmt] | None:
    """The statements after `child` in the block of `parent` that holds it; None when no block holds it."""
    for name in ("body", "orelse", "finalbody"):
        block: object = getattr(parent, name, None)
        if not isinstance(block, list):
            continue
        stmts = [s for s in block if isinstance(s, ast.stmt)]  # pyright: ignore[reportUnknownVariableType]
        for i, stmt in enumerate(stmts):
            if stmt is child:
                return stmts[i + 1:]
    return None


def _parent_of(node: ast.AST) -> ast.AST | None:
    return getattr(node, "_ha_parent", None)


def _module_name(path: str) -> str:
    parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    if parts and parts[0] == "src":
        parts = parts[1:]
    return ".".join(parts)


@dataclass
class PyProject:
    """All parsed Python modules of one audit, with cross-module call resolution."""

    modules: dict[str, PyModule]
    """Canonical path → module."""
    _by_name: dict[str, PyModule] = field(default_factory=dict[str, PyModule], repr=False)
    _callees: dict[int, list[FuncRef]] = field(default_factory=dict[int, "list[FuncRef]"], repr=False)

    def __post_init__(self) -> None:
        for mod in self.modules.values():
            self._by_name[mod.module_name] = mod
            # let `from agent import loop` work for a project rooted above `src/` or at a package root
            tail = mod.module_name.split(".")
            for i in range(1, len(tail)):
                self._by_name.setdefault(".".join(tail[i:]), mod)

    def module(self, name: str) -> PyModule | None:
        """A project module by dotted name (suffix matches allowed)."""
        return self._by_name.get(name)

    def resolve_call(self, mod: PyModule, call: ast.Call) -> list[FuncRef]:
        """Project functions a call may reach: local defs, `self.method`, imported project functions."""
        func = call.func
        if isinstance(func, ast.Name):
            local = mod.local_functions(func.id)
            if local:
                # a bare name reaches a module-level def or one nested in a function enclosing the call,
                # never a same-named helper nested inside some unrelated function
                scopes = {id(a) for a in mod.ancestors(call) if isinstance(a, FunctionNode)}
                visible = [f for f in local if isinstance(mod.parent(f), ast.Module) or id(mod.parent(f)) in scopes]
                if visible:
                    return [FuncRef(mod, f) for f in visible]
            target = mod.imports.get(func.id)
            if target and "." in target:
                owner, _, name = target.rpartition(".")
                other = self.module(owner)
                if other is not None:
                    return [FuncRef(other, f) for f in other.local_functions(name)
                            if not isinstance(other.parent(f), ast.ClassDef)]
            return []
        if isinstance(func, ast.Attribute):
            base = func.value
            if isinstance(base, ast.Name) and base.id in {"self", "cls"}:
                cls = mod.enclosing_class(call)
                if cls is not None:
                    m = mod.method(cls.name, func.attr)
                    if m is not None:
                        return [FuncRef(mod, m)]
                return [FuncRef(mod, f) for f in mod.local_functions(func.attr)
                        if isinstance(mod.parent(f), ast.ClassDef)][:1]
            dotted = mod.qualname(base)
            if dotted:
                other = self.module(dotted)
                if other is not None:
                    return [FuncRef(other, f) for f in other.local_functions(func.attr)
                            if not isinstance(other.parent(f), ast.ClassDef)]
        return []

    def callees(self, ref: FuncRef) -> list[FuncRef]:
        """Project functions called directly from the body of `ref` (cached)."""
        key = id(ref.node)
        hit = self._callees.get(key)
        if hit is not None:
            return hit
        out: list[FuncRef] = []
        seen: set[int] = set()
        for node in ref.module.walk(ref.node):
            if isinstance(node, ast.Call):
                for target in self.resolve_call(ref.module, node):
                    if id(target.node) not in seen and target.node is not ref.node:
                        seen.add(id(target.node))
                        out.append(target)
        self._callees[key] = out
        return out

    def reachable(self, roots: list[FuncRef], depth: int = 3) -> list[FuncRef]:
        """Functions reachable from `roots` through project calls, up to `depth` hops (roots excluded)."""
        seen: set[int] = {id(r.node) for r in roots}
        frontier = list(roots)
        out: list[FuncRef] = []
        for _ in range(depth):
            nxt: list[FuncRef] = []
            for ref in frontier:
                for callee in self.callees(ref):
                    if id(callee.node) not in seen:
                        seen.add(id(callee.node))
                        out.append(callee)
                        nxt.append(callee)
            frontier = nxt
            if not frontier:
                break
        return out
