"""TypeScript and JavaScript, parsed once with tree-sitter: the node index rules and recon read.

Grammars come from the registry's wheels (`tree-sitter-typescript`, `tree-sitter-javascript`); nothing
is compiled or downloaded at run time. tree-sitter recovers from syntax errors, so a broken file is
still indexed as far as it parses and is listed as partially parsed.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import PurePosixPath
from typing import Literal, TypeVar

from tree_sitter import Language as TsLanguage
from tree_sitter import Node, Parser, Tree

from harness_audit.static.lang import TreeTooDeep

MAX_TREE_DEPTH = 400
"""Deepest TS/JS syntax tree analysed (`TreeTooDeep`): tree-sitter spends about two levels per chained call, and
real code stays under 40 (the deepest of our TS corpora: 34)."""

Dialect = Literal["typescript", "tsx", "javascript"]
_T = TypeVar("_T")

DIALECT_BY_SUFFIX: dict[str, Dialect] = {
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
}

_LOOP_OR_SWITCH = frozenset({"for_statement", "for_in_statement", "while_statement", "do_statement",
                             "switch_statement"})
FUNCTION_TYPES = frozenset({
    "function_declaration", "function_expression", "arrow_function", "method_definition",
    "generator_function_declaration", "generator_function",
})
"""Node types that open a function scope."""

LOOP_TYPES = frozenset({"for_statement", "for_in_statement", "while_statement", "do_statement"})

INDEXED_TYPES = frozenset({
    *FUNCTION_TYPES, *LOOP_TYPES, "call_expression", "new_expression", "class_declaration", "class",
    "try_statement", "catch_clause", "import_statement", "variable_declarator", "assignment_expression",
    "augmented_assignment_expression", "await_expression", "return_statement", "throw_statement",
    "if_statement", "switch_statement", "template_string", "object", "array", "pair", "spread_element",
    "public_field_definition", "field_definition", "export_statement", "break_statement", "continue_statement",
    "ERROR",
})
"""Node types kept in the per-module index (everything else is reached through children and parents)."""


_CALLBACK_CALLEES = frozenset({"map", "forEach", "flatMap", "filter", "reduce", "some", "every", "find", "then",
                                "all", "allSettled", "race", "any", "from"})
"""Callees whose callback runs as part of the calling statement (its errors surface there)."""


def _relative_specs(mod: TsModule) -> set[str]:
    """Relative module specifiers a module imports: `import`/`export ... from`, `require("./x")`, `import("./x")`."""
    specs: set[str] = set()
    for node in mod.nodes("import_statement", "export_statement"):
        src = node.child_by_field_name("source")
        if src is not None:
            specs.add(mod.node_text(src).strip("'\"`"))
    for needle in (b"require(", b"import("):
        at = mod.source.find(needle)
        while at >= 0:
            end = at + len(needle)
            quote = mod.source[end:end + 1]
            if quote in (b"'", b'"', b"`"):
                close = mod.source.find(quote, end + 1, end + 300)
                if close > 0:
                    specs.add(mod.source[end + 1:close].decode("utf-8", errors="replace"))
            at = mod.source.find(needle, end)
    return {s for s in specs if s.startswith(".")}


@cache
def _parser(dialect: Dialect) -> Parser:
    if dialect == "javascript":
        import tree_sitter_javascript

        return Parser(TsLanguage(tree_sitter_javascript.language()))
    import tree_sitter_typescript

    grammar = tree_sitter_typescript.language_tsx() if dialect == "tsx" else tree_sitter_typescript.language_typescript()
    return Parser(TsLanguage(grammar))


def dialect_of(path: str) -> Dialect:
    """The grammar for a file, from its suffix (`.jsx` parses with the JavaScript grammar, which has JSX)."""
    return DIALECT_BY_SUFFIX.get(PurePosixPath(path).suffix.lower(), "typescript")


@dataclass(slots=True)
class TsModule:
    """One parsed TS/JS file with the lookups every rule shares."""

    path: str
    """Canonical relative path."""
    text: str
    """Source text."""
    source: bytes
    """UTF-8 bytes the tree's offsets refer to."""
    tree: Tree
    """The tree-sitter tree."""
    dialect: Dialect
    """Which grammar parsed it."""
    _index: dict[str, list[Node]] = field(default_factory=dict[str, "list[Node]"], repr=False)
    _lines: list[str] | None = field(default=None, repr=False)
    _bindings: dict[int, dict[str, list[Node]]] = field(default_factory=dict[int, "dict[str, list[Node]]"],
                                                        repr=False)
    _merged: dict[tuple[str, ...], list[Node]] = field(default_factory=dict[tuple[str, ...], "list[Node]"],
                                                       repr=False)
    _starts: dict[int, tuple[list[Node], list[int] | None]] = field(
        default_factory=dict[int, "tuple[list[Node], list[int] | None]"], repr=False)
    _imports: dict[str, str] | None = field(default=None, repr=False)

    @classmethod
    def parse(cls, path: str, text: str) -> TsModule:
        dialect = dialect_of(path)
        source = text.encode("utf-8")
        tree = _parser(dialect).parse(source)
        mod = cls(path=path, text=text, source=source, tree=tree, dialect=dialect)
        mod._build_index()
        return mod

    @property
    def language(self) -> Literal["typescript", "javascript"]:
        """`typescript` or `javascript`, as findings and landmarks carry it."""
        return "javascript" if self.dialect == "javascript" else "typescript"

    @property
    def partial(self) -> bool:
        """True when tree-sitter had to recover from syntax errors."""
        return self.tree.root_node.has_error

    def first_error_line(self) -> int | None:
        """1-based line of the first ERROR or MISSING node, for the report."""
        stack = [self.tree.root_node]
        while stack:
            node = stack.pop()
            if node.type == "ERROR" or node.is_missing:
                return node.start_point.row + 1
            if node.has_error:
                stack.extend(reversed(node.children))
        return None

    # ------------------------------------------------------------------ index
    def _build_index(self) -> None:
        index: dict[str, list[Node]] = {t: [] for t in INDEXED_TYPES}
        cursor = self.tree.walk()
        wanted = INDEXED_TYPES
        depth = 0  # kept on the way: a tree deeper than the analysis can walk is refused here (`TreeTooDeep`)
        while True:
            node = cursor.node
            if node is not None and node.type in wanted:
                index[node.type].append(node)
            if cursor.goto_first_child():
                depth += 1
                if depth > MAX_TREE_DEPTH:
                    raise TreeTooDeep(f"nested more than {MAX_TREE_DEPTH} levels deep: too deep to analyse")
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    self._index = index
                    return
                depth -= 1

    def nodes(self, *types: str) -> list[Node]:
        """Indexed nodes of these types, in source order per type."""
        if len(types) == 1:
            return self._index.get(types[0], [])
        return list(self._merged_nodes(types))  # a copy: callers may extend or re-sort what they get

    def _merged_nodes(self, types: tuple[str, ...]) -> list[Node]:
        """`nodes(*types)` for several types, sorted once and kept (never hand this list itself to a caller)."""
        merged = self._merged.get(types)
        if merged is None:
            merged = [n for t in types for n in self._index.get(t, [])]
            merged.sort(key=lambda n: n.start_byte)
            self._merged[types] = merged
        return merged

    def calls(self) -> list[Node]:
        """Every call expression."""
        return self._index["call_expression"]

    def functions(self) -> list[Node]:
        """Every function-like node, in source order."""
        return self.nodes(*FUNCTION_TYPES)

    # ------------------------------------------------------------------ text and lines
    def node_text(self, node: Node | None) -> str:
        """The source text of a node ("" for None)."""
        if node is None:
            return ""
        return self.source[node.start_byte:node.end_byte].decode("utf-8", errors="replace")

    @staticmethod
    def line(node: Node) -> int:
        """1-based first line of a node."""
        return node.start_point.row + 1

    @staticmethod
    def end_line(node: Node) -> int:
        """1-based last line of a node."""
        return node.end_point.row + 1

    def lines(self) -> list[str]:
        """The file's lines (split like the workspace splits them)."""
        if self._lines is None:
            from harness_audit.findings import split_lines

            self._lines = split_lines(self.text)
        return self._lines

    def excerpt(self, line: int, end: int | None = None) -> str:
        """Lines `line`..`end` (at most five) as evidence, verbatim."""
        lines = self.lines()
        last = min(end or line, line + 4, len(lines))
        return "\n".join(lines[line - 1:last])

    # ------------------------------------------------------------------ names
    def call_name(self, call: Node) -> str:
        """Dotted callee of a call or `new` (`client.chat.completions.create`, `fetch`, `new AbortController`).

        Calls inside the chain keep `()` (`this.client().send`); anything else collapses to `?`.
        """
        fn = call.child_by_field_name("function") if call.type == "call_expression" else \
            call.child_by_field_name("constructor")
        return self.dotted(fn)

    def dotted(self, node: Node | None) -> str:
        """A member chain as dotted text; `this` stays `this`; optional chaining reads as a plain dot."""
        parts: list[str] = []
        while node is not None:
            kind = node.type
            if kind in ("identifier", "property_identifier", "this", "super", "private_property_identifier",
                        "shorthand_property_identifier"):
                parts.append(self.node_text(node))
                break
            if kind == "member_expression":
                parts.append(self.node_text(node.child_by_field_name("property")))
                node = node.child_by_field_name("object")
            elif kind == "call_expression":
                parts.append("()")
                node = node.child_by_field_name("function")
            elif kind in ("parenthesized_expression", "non_null_expression", "await_expression", "as_expression"):
                node = node.named_children[0] if node.named_children else None
            elif kind == "subscript_expression":
                parts.append("[]")
                node = node.child_by_field_name("object")
            else:
                parts.append("?")
                break
        out = ""
        for p in reversed(parts):
            out = (out + p) if p in ("()", "[]") else (f"{out}.{p}" if out else p)
        return out

    def arguments(self, call: Node) -> list[Node]:
        """The argument nodes of a call or `new`, without punctuation."""
        args = call.child_by_field_name("arguments")
        return [] if args is None else [a for a in args.named_children if a.type != "comment"]

    def object_keys(self, obj: Node) -> dict[str, Node]:
        """`{key: value}` pairs of an object literal (shorthand `{signal}` maps to itself)."""
        out: dict[str, Node] = {}
        for child in obj.named_children:
            if child.type == "pair":
                key = child.child_by_field_name("key")
                value = child.child_by_field_name("value")
                if key is not None and value is not None:
                    out[self.node_text(key).strip("'\"`")] = value
            elif child.type == "shorthand_property_identifier":
                out[self.node_text(child)] = child
        return out

    # ------------------------------------------------------------------ structure
    @staticmethod
    def ancestors(node: Node) -> Iterator[Node]:
        """Parents from the nearest up to the root."""
        parent = node.parent
        while parent is not None:
            yield parent
            parent = parent.parent

    def enclosing_function(self, node: Node) -> Node | None:
        """The nearest function-like ancestor."""
        return next((a for a in self.ancestors(node) if a.type in FUNCTION_TYPES), None)

    def function_name(self, fn: Node) -> str:
        """A function's name: its own, the variable or property it is assigned to, or `<anonymous>`."""
        name = fn.child_by_field_name("name")
        if name is not None:
            return self.node_text(name)
        parent = fn.parent
        if parent is not None and parent.type == "variable_declarator":
            return self.node_text(parent.child_by_field_name("name"))
        if parent is not None and parent.type == "pair":
            return self.node_text(parent.child_by_field_name("key"))
        if parent is not None and parent.type in ("public_field_definition", "field_definition"):
            return self.node_text(parent.child_by_field_name("name") or parent.child_by_field_name("property"))
        return "<anonymous>"

    def symbol_of(self, node: Node) -> str | None:
        """`Class.method` or `function` enclosing `node`, for landmarks."""
        fn = self.enclosing_function(node) if node.type not in FUNCTION_TYPES else node
        if fn is None:
            return None
        name = self.function_name(fn)
        cls = next((a for a in self.ancestors(fn) if a.type in ("class_declaration", "class")), None)
        if cls is not None and cls.child_by_field_name("name") is not None:
            return f"{self.node_text(cls.child_by_field_name('name'))}.{name}"
        return name

    def within(self, node: Node, container: Node) -> bool:
        """True when `node` lies inside `container` (inclusive)."""
        return container.start_byte <= node.start_byte and node.end_byte <= container.end_byte

    def inside(self, nodes: Iterable[Node], container: Node) -> list[Node]:
        """The nodes of `nodes` that lie inside `container`."""
        start, end = container.start_byte, container.end_byte
        starts = self._sorted_starts(nodes)
        if starts is None:
            return [n for n in nodes if start <= n.start_byte and n.end_byte <= end]
        # one of the module's own index lists, in source order: only the stretch starting inside `container`
        assert isinstance(nodes, list)
        out: list[Node] = []
        for i in range(bisect_left(starts, start), len(starts)):
            if starts[i] > end:
                break
            node = nodes[i]
            if node.end_byte <= end:
                out.append(node)
        return out

    def _sorted_starts(self, nodes: Iterable[Node]) -> list[int] | None:
        """Start bytes of `nodes` when it is one of this module's index lists (`calls()`, `nodes(t)`) and long
        enough for a binary search to pay; None otherwise."""
        if not isinstance(nodes, list) or len(nodes) < 16:
            return None
        hit = self._starts.get(id(nodes))
        if hit is None:
            if not any(nodes is lst for lst in (*self._index.values(), *self._merged.values())):
                return None
            starts = [n.start_byte for n in nodes]
            ordered = starts == sorted(starts)
            hit = self._starts[id(nodes)] = (nodes, starts if ordered else None)
        return hit[1] if hit[0] is nodes else None

    # ------------------------------------------------------------------ scopes and bindings
    def enclosing_loops(self, node: Node) -> list[Node]:
        """Loops around `node` inside its own function, nearest first."""
        out: list[Node] = []
        for anc in self.ancestors(node):
            if anc.type in FUNCTION_TYPES:
                break
            if anc.type in LOOP_TYPES:
                out.append(anc)
        return out

    def enclosing_trys(self, node: Node) -> list[tuple[Node, Literal["body", "handler", "finalizer"]]]:
        """`(try_statement, part)` around `node` inside its own function, nearest first; `part` says whether
        `node` is in the `try` block, the `catch` clause or the `finally` clause."""
        out: list[tuple[Node, Literal["body", "handler", "finalizer"]]] = []
        child = node
        for anc in self.ancestors(node):
            if anc.type in FUNCTION_TYPES:
                break
            if anc.type == "try_statement":
                part: Literal["body", "handler", "finalizer"] = (
                    "handler" if child.type == "catch_clause" else "finalizer" if child.type == "finally_clause"
                    else "body")
                out.append((anc, part))
            child = anc
        return out

    def params(self, fn: Node) -> dict[str, Node]:
        """Names a function's parameters bind (destructured ones included) -> the parameter node."""
        out: dict[str, Node] = {}
        single = fn.child_by_field_name("parameter")
        if single is not None:
            out[self.node_text(single)] = single
        params = fn.child_by_field_name("parameters")
        for param in params.named_children if params is not None else []:
            for ident in self.pattern_names(param):
                out[self.node_text(ident)] = param
        return out

    def pattern_names(self, pattern: Node) -> list[Node]:
        """The identifiers a binding pattern introduces (`x`, `{a, b: c}`, `[d, ...e]`, `x = 1`, `x: T`)."""
        out: list[Node] = []
        stack = [pattern]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind in ("identifier", "shorthand_property_identifier_pattern"):
                out.append(node)
            elif kind in ("required_parameter", "optional_parameter"):
                inner = node.child_by_field_name("pattern")
                if inner is not None:
                    stack.append(inner)
            elif kind in ("assignment_pattern", "object_assignment_pattern"):
                inner = node.child_by_field_name("left")
                if inner is not None:
                    stack.append(inner)
            elif kind == "pair_pattern":
                inner = node.child_by_field_name("value")
                if inner is not None:
                    stack.append(inner)
            elif kind in ("object_pattern", "array_pattern", "rest_pattern"):
                stack.extend(reversed(node.named_children))
        return out

    def bindings(self, fn: Node | None) -> dict[str, list[Node]]:
        """Name -> values bound to it directly in `fn` (at module level when None), in source order.

        Covers `const x = v`, `x = v` and destructuring (`const {path} = args` binds `path` to `args`); nested
        functions keep their own bindings. Cached per function.
        """
        key = fn.id if fn is not None else 0
        hit = self._bindings.get(key)
        if hit is not None:
            return hit
        out: dict[str, list[Node]] = {}
        scope = fn if fn is not None else self.tree.root_node
        scope_id = scope.id
        # the indexed declarators and assignments inside `scope`, in tree order (an enclosing node first), kept where
        # no nested function lies between them and `scope`: what a walk of the subtree stopping at functions finds
        found = self.inside(self._merged_nodes(("variable_declarator", "assignment_expression")), scope)
        found.sort(key=lambda n: (n.start_byte, -n.end_byte))
        for node in found:
            if node.id != scope_id:
                anc = node.parent
                while anc is not None and anc.id != scope_id and anc.type not in FUNCTION_TYPES:
                    anc = anc.parent
                if anc is None or anc.id != scope_id:
                    continue
            if node.type == "variable_declarator":
                target, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            else:
                target, value = node.child_by_field_name("left"), node.child_by_field_name("right")
            if target is not None and value is not None:
                for ident in self.pattern_names(target) if target.type != "identifier" else [target]:
                    out.setdefault(self.node_text(ident), []).append(value)
        self._bindings[key] = out
        return out

    def identifiers(self, node: Node) -> list[Node]:
        """Every `identifier` in `node`'s subtree (for short expressions; it walks the subtree)."""
        out: list[Node] = []
        stack = [node]
        while stack:
            cur = stack.pop()
            if cur.type in ("identifier", "shorthand_property_identifier"):
                out.append(cur)
            stack.extend(reversed(cur.named_children))
        return out

    def derivation_text(self, fn: Node | None, expr: Node, depth: int = 3) -> str:
        """`expr`'s text followed by the texts of the values bound to the names it reads, `depth` hops back."""
        parts = [self.node_text(expr)[:400]]
        seen: set[str] = set()
        frontier = [expr]
        scope = self.bindings(fn)
        for _ in range(depth):
            nxt: list[Node] = []
            for cur in frontier:
                for ident in self.identifiers(cur):
                    name = self.node_text(ident)
                    if name in seen:
                        continue
                    seen.add(name)
                    for value in scope.get(name, []):
                        parts.append(self.node_text(value)[:400])
                        nxt.append(value)
            frontier = nxt
            if not frontier:
                break
        return "\n".join(parts)

    def rethrows(self, catch: Node) -> bool:
        """Whether a `catch (e)` clause always throws the caught error again: `throw e` as one of its own
        statements (a `throw e` under an `if` re-throws only some errors and keeps the others)."""
        param = catch.child_by_field_name("parameter")
        body = catch.child_by_field_name("body")
        if param is None or param.type != "identifier" or body is None:
            return False
        name = self.node_text(param)
        for stmt in body.named_children:
            if stmt.type == "if_statement" and self._leaves(stmt):
                return False  # `if (retries > 0) return this.retry(...); throw e`: some errors are handled
            if stmt.type == "throw_statement":
                value = next((c for c in stmt.named_children if c.type != "comment"), None)
                if value is not None and self.node_text(value) == name:
                    return True
        return False

    def _leaves(self, stmt: Node) -> bool:
        """Whether a statement can leave its block by `return`, `continue` or `break` (not in a nested function)."""
        stack = [(c, False) for c in stmt.named_children]
        while stack:
            n, in_loop = stack.pop()
            if n.type == "return_statement" or n.type in ("continue_statement", "break_statement") and not in_loop:
                return True
            if n.type not in FUNCTION_TYPES and n.type != "class_body":
                inner = in_loop or n.type in _LOOP_OR_SWITCH
                stack.extend((c, inner) for c in n.named_children)
        return False

    def guarded(self, node: Node) -> bool:
        """Whether an error thrown at `node` is caught and not re-thrown: a `try` whose `catch` keeps it, or a
        `.catch(...)` on the promise, looking through callbacks of `map`/`forEach`/`then`/`Promise.all` into the
        function that awaits them."""
        cur = node
        for _ in range(4):
            for tr, part in self.enclosing_trys(cur):
                handler = tr.child_by_field_name("handler")
                if part == "body" and handler is not None and not self.rethrows(handler):
                    return True
            if self._promise_caught(cur):
                return True
            fn = self.enclosing_function(cur)
            if fn is None or not self.iteration_callback(fn):
                return False
            cur = fn
        return False

    def _promise_caught(self, node: Node) -> bool:
        """`f(x).catch(...)`, `await p.catch(...)`, `Promise.all(xs.map(cb)).catch(...)` around `node`'s statement."""
        cur = node
        synchronous = False  # an argument is evaluated before the promise exists: its throw is not a rejection
        in_async = False  # inside an async callback, a throw rejects the promise the callee collects
        for parent in self.ancestors(node):
            kind = parent.type
            if kind == "member_expression" and parent.child_by_field_name("object") == cur:
                prop = self.node_text(parent.child_by_field_name("property"))
                call = parent.parent
                if call is not None and call.type == "call_expression" and not synchronous and (
                        prop == "catch" or prop == "then" and len(self.arguments(call)) > 1):
                    return True
            elif kind == "arguments":
                synchronous = synchronous or not in_async
            elif kind in FUNCTION_TYPES:
                if not self.iteration_callback(parent):
                    return False
                in_async = self.node_text(parent).startswith("async")
                synchronous = not in_async
            elif kind not in ("call_expression", "await_expression", "parenthesized_expression", "member_expression",
                              "non_null_expression", "as_expression", "array", "spread_element"):
                return False
            cur = parent
        return False

    def iteration_callback(self, fn: Node) -> bool:
        """A function passed to `map`/`forEach`/`then`/`Promise.all`-style calls, or called in place."""
        parent = fn.parent
        if parent is not None and parent.type == "parenthesized_expression":
            grand = parent.parent
            return grand is not None and grand.type == "call_expression"
        if parent is None or parent.type != "arguments" or parent.parent is None:
            return False
        callee = self.call_name(parent.parent).rsplit(".", 1)[-1]
        return callee in _CALLBACK_CALLEES

    @staticmethod
    def string_value(node: Node | None) -> str | None:
        """The content of a string literal (or a template without substitutions); None for anything else."""
        if node is None or node.type not in ("string", "template_string"):
            return None
        if any(c.type == "template_substitution" for c in node.named_children):
            return None
        raw = node.text.decode("utf-8", errors="replace") if node.text is not None else ""
        return raw[1:-1]

    # ------------------------------------------------------------------ imports
    def imports(self) -> dict[str, str]:
        """Local name -> module specifier, from `import` statements and `require(...)` declarations.

        `import OpenAI from "openai"` -> {"OpenAI": "openai"}; `import {spawn as sp} from "node:child_process"`
        -> {"sp": "node:child_process#spawn"}; `const cp = require("child_process")` -> {"cp": "child_process"}.
        Computed once: every call returns the same dict, which callers read and never change.
        """
        if self._imports is None:
            self._imports = self._read_imports()
        return self._imports

    def _read_imports(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for imp in self.nodes("import_statement"):
            src = imp.child_by_field_name("source")
            if src is None:
                continue
            module = self.node_text(src).strip("'\"`")
            for clause in (c for c in imp.named_children if c.type == "import_clause"):
                for item in clause.named_children:
                    if item.type == "identifier":
                        out[self.node_text(item)] = module
                    elif item.type == "namespace_import":
                        ident = next((c for c in item.named_children if c.type == "identifier"), None)
                        if ident is not None:
                            out[self.node_text(ident)] = module
                    elif item.type == "named_imports":
                        for spec in item.named_children:
                            if spec.type != "import_specifier":
                                continue
                            name = spec.child_by_field_name("name")
                            alias = spec.child_by_field_name("alias") or name
                            out[self.node_text(alias)] = f"{module}#{self.node_text(name)}"
        for decl in self.nodes("variable_declarator"):
            value = decl.child_by_field_name("value")
            if value is None or value.type != "call_expression" or self.call_name(value) != "require":
                continue
            args = self.arguments(value)
            if not args or args[0].type != "string":
                continue
            module = self.node_text(args[0]).strip("'\"`")
            target = decl.child_by_field_name("name")
            if target is None:
                continue
            if target.type == "identifier":
                out[self.node_text(target)] = module
            elif target.type == "object_pattern":
                for prop in target.named_children:
                    if prop.type == "shorthand_property_identifier_pattern":
                        out[self.node_text(prop)] = f"{module}#{self.node_text(prop)}"
                    elif prop.type == "pair_pattern":
                        key = prop.child_by_field_name("key")
                        val = prop.child_by_field_name("value")
                        if key is not None and val is not None:
                            out[self.node_text(val)] = f"{module}#{self.node_text(key)}"
        return out


@dataclass(slots=True)
class TsProject:
    """Every parsed TS/JS module of the workspace."""

    modules: dict[str, TsModule]
    """By canonical relative path."""
    _imports: dict[str, dict[str, str]] = field(default_factory=dict[str, "dict[str, str]"], repr=False)
    _functions: dict[str, dict[str, list[Node]]] = field(default_factory=dict[str, "dict[str, list[Node]]"],
                                                         repr=False)
    _calls: dict[str, dict[str, list[Node]]] = field(default_factory=dict[str, "dict[str, list[Node]]"], repr=False)
    _importers: dict[str, list[TsModule]] | None = field(default=None, repr=False)
    _memo: dict[tuple[str, str], object] = field(default_factory=dict[tuple[str, str], object], repr=False)
    _resolved: dict[tuple[str, str], TsModule | None] = field(
        default_factory=dict[tuple[str, str], "TsModule | None"], repr=False)

    def memo(self, key: str, mod: TsModule, build: Callable[[], _T]) -> _T:
        """`build()` once per project, module and `key`: per-module facts that several rules share (a cache that
        lives as long as the project, so it never outgrows one audit)."""
        slot = (key, mod.path)
        if slot not in self._memo:
            self._memo[slot] = build()
        return self._memo[slot]  # type: ignore[return-value]  # stored by `build` for this key

    # Symbol navigation stays within a module and the modules linked to it by relative imports: a project-wide
    # search per name would make every lookup cost the whole workspace.
    def imports_of(self, mod: TsModule) -> dict[str, str]:
        """`mod.imports()`, computed once per module."""
        hit = self._imports.get(mod.path)
        if hit is None:
            hit = self._imports[mod.path] = mod.imports()
        return hit

    def functions_in(self, mod: TsModule, name: str) -> list[Node]:
        """Functions, methods and function-valued variables/properties of `mod` called `name` (indexed per module)."""
        index = self._functions.get(mod.path)
        if index is None:
            index = self._functions[mod.path] = {}
            for fn in mod.functions():
                fname = mod.function_name(fn)
                if fname != "<anonymous>":
                    index.setdefault(fname, []).append(fn)
        return index.get(name, [])

    def calls_in(self, mod: TsModule, name: str) -> list[Node]:
        """Calls of `mod` whose callee's last part is `name` (`run(...)`, `this.run(...)`, `x.run(...)`)."""
        index = self._calls.get(mod.path)
        if index is None:
            index = self._calls[mod.path] = {}
            for call in mod.calls():
                callee = call.child_by_field_name("function")
                if callee is not None and callee.type == "member_expression":
                    callee = callee.child_by_field_name("property")
                if callee is not None and callee.type in ("identifier", "property_identifier",
                                                          "private_property_identifier"):
                    index.setdefault(mod.node_text(callee), []).append(call)
        return index.get(name, [])

    def importers(self, mod: TsModule) -> list[TsModule]:
        """Modules that import `mod` by a relative specifier (`import ... from "./x"`, `export ... from "./x"`,
        `require("../x")`, `import("./x")`), indexed once per project."""
        if self._importers is None:
            index: dict[str, dict[str, TsModule]] = {}
            for other in self.modules.values():
                for spec in _relative_specs(other):
                    target = self._resolve_spec(other.path, spec)
                    if target is not None and target is not other:
                        index.setdefault(target.path, {})[other.path] = other
            self._importers = {path: list(found.values()) for path, found in index.items()}
        return self._importers.get(mod.path, [])

    def _resolve_spec(self, path: str, spec: str) -> TsModule | None:
        """`resolve_import` for a module path (it runs for every import of the project): the same candidates."""
        modules = self.modules
        return next((modules[c] for c in source_candidates(path, spec) if c in modules), None)

    def resolve_call(self, mod: TsModule, call: Node) -> list[tuple[TsModule, Node]]:
        """Project functions a call reaches, by name and imports: `f()` defined in this module or imported from a
        project module (`import {f} from "./x"`), `this.f()` / `super.f()` in this module, `ns.f()` where `ns` imports a
        project module. Anything else (a method of an unknown object, a package) is unresolved: empty."""
        callee = mod.call_name(call)
        receiver, _, name = callee.rpartition(".")
        if not name or name in ("()", "?", "[]") or not all(c.isalnum() or c in "_$#" for c in name):
            return []
        if receiver in ("this", "super"):
            return [(mod, f) for f in self.functions_in(mod, name)]
        imports = self.imports_of(mod)
        if not receiver:
            local = [(mod, f) for f in self.functions_in(mod, name) if f.type != "method_definition"]
            if local:
                return local
            source = imports.get(name, "")
        elif "." not in receiver and receiver in imports and "#" not in imports[receiver]:
            source = imports[receiver]
        else:
            return []
        spec = source.split("#", 1)[0]
        target = self._resolve_spec(mod.path, spec) if spec.startswith(".") else None
        if target is None:
            return []
        exported = source.split("#", 1)[1] if "#" in source else name
        return [(target, f) for f in self.functions_in(target, exported) if f.type != "method_definition"]

    def callers_of(self, mod: TsModule, fn: Node) -> list[tuple[TsModule, Node]]:
        """Calls in `mod` and in the modules importing it that `resolve_call` maps to `fn` (recursion excluded)."""
        name = mod.function_name(fn)
        if name == "<anonymous>":
            return []
        out: list[tuple[TsModule, Node]] = []
        for other in (mod, *self.importers(mod)):
            names = {name} | {local for local, src in self.imports_of(other).items() if src.endswith(f"#{name}")}
            for local in sorted(names):
                for call in self.calls_in(other, local):
                    if other is mod and mod.within(call, fn):
                        continue
                    if any(m is mod and f == fn for m, f in self.resolve_call(other, call)):
                        out.append((other, call))
        out.sort(key=lambda mc: (mc[0].path, mc[1].start_byte))
        return out

    def occurrences(self, mod: TsModule, name: str) -> Iterator[Node]:
        """Nodes of `mod` spelling exactly `name` (identifiers, property names), found by a byte search."""
        raw = name.encode("utf-8")
        if not name or any(c in name for c in ".()[] "):
            return
        source = mod.source
        at = source.find(raw)
        while at >= 0:
            start, at = at, source.find(raw, at + len(raw))
            node = mod.tree.root_node.descendant_for_byte_range(start, start + len(raw))
            if node is not None and node.start_byte == start and node.end_byte == start + len(raw):
                yield node

    def resolve_import(self, mod: TsModule, spec: str) -> TsModule | None:
        """The module a relative specifier (`./tools`, `../lib/run.js`) names, if it is in the project."""
        if not spec.startswith("."):
            return None
        slot = (mod.path, spec)
        if slot in self._resolved:  # rules resolve the same few imports over and over
            return self._resolved[slot]
        found = self._resolve_import(mod, spec)
        self._resolved[slot] = found
        return found

    def _resolve_import(self, mod: TsModule, spec: str) -> TsModule | None:
        return self._resolve_spec(mod.path, spec)


# ---------------------------------------------------------------- shared with the symbol index
def grammar(dialect: Dialect) -> TsLanguage:
    """The tree-sitter language of `dialect`: the one its cached parser holds, so queries never load a grammar again."""
    language = _parser(dialect).language
    assert language is not None  # `_parser` always builds its parser with a language
    return language


def parse_source(dialect: Dialect, source: bytes) -> Tree:
    """`source` parsed by the same cached parser `TsModule.parse` uses (no lookup index is built)."""
    return _parser(dialect).parse(source)


DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")
"""Type declaration files, tried after every source candidate (a `.d.ts` may be all a package ships)."""


def _relative_target(path: str, spec: str) -> tuple[str, str]:
    """(the joined path, the same without a source suffix) of a relative specifier of the module at `path`.
    String work, no `pathlib` and no file system (it runs for every import of a project): `a/./b` and `a/../b`
    normalised, `..` above the root stays at the root; the suffix is what `PurePosixPath(target).suffix` gives."""
    parts: list[str] = []
    for part in [*path.split("/")[:-1], *spec.split("/")]:
        if part == "..":
            if parts:
                parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    target = "/".join(parts)
    name = target[target.rfind("/") + 1:]
    dot = name.rfind(".")
    suffix = name[dot:] if 0 < dot < len(name) - 1 else ""
    return target, target[:len(target) - len(suffix)] if suffix in DIALECT_BY_SUFFIX else target


def source_candidates(path: str, spec: str) -> list[str]:
    """The paths a relative specifier may name, in lookup order: `./x` as written, `./x.js` for `x.ts` (every
    source suffix), then `./x/index.*`."""
    target, no_ext = _relative_target(path, spec)
    return [target, *(no_ext + s for s in DIALECT_BY_SUFFIX), *(f"{target}/index{s}" for s in DIALECT_BY_SUFFIX)]


def resolve_relative(path: str, spec: str, known: Container[str]) -> str | None:
    """The path a relative specifier of the module at `path` names, among `known` paths: the candidates of
    `TsProject.resolve_import`, then declaration files (`x.d.ts`, `x/index.d.ts`)."""
    if not spec.startswith("."):
        return None
    target, no_ext = _relative_target(path, spec)
    declarations = (*(no_ext + s for s in DECLARATION_SUFFIXES), *(f"{target}/index{s}" for s in DECLARATION_SUFFIXES))
    return next((c for c in (*source_candidates(path, spec), *declarations) if c in known), None)
