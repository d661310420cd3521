"""TypeScript and JavaScript, parsed once with tree-sitter: the node index rules and recon read.

Grammars come from the registry's wheels (`tree-sitter-typescript`, `tree-sitter-javascript`); nothing
is compiled or downloaded at run time. tree-sitter recovers from syntax errors, so a broken file is
still indexed as far as it parses and is listed as partially parsed.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import PurePosixPath
from typing import Literal

from tree_sitter import Language as TsLanguage
from tree_sitter import Node, Parser, Tree

Dialect = Literal["typescript", "tsx", "javascript"]

DIALECT_BY_SUFFIX: dict[str, Dialect] = {
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "tsx",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
}

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
        while True:
            node = cursor.node
            if node is not None and node.type in wanted:
                index[node.type].append(node)
            if cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    self._index = index
                    return

    def nodes(self, *types: str) -> list[Node]:
        """Indexed nodes of these types, in source order per type."""
        if len(types) == 1:
            return self._index.get(types[0], [])
        out = [n for t in types for n in self._index.get(t, [])]
        out.sort(key=lambda n: n.start_byte)
        return out

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
        return [n for n in nodes if self.within(n, container)]

    # ------------------------------------------------------------------ imports
    def imports(self) -> dict[str, str]:
        """Local name -> module specifier, from `import` statements and `require(...)` declarations.

        `import OpenAI from "openai"` -> {"OpenAI": "openai"}; `import {spawn as sp} from "node:child_process"`
        -> {"sp": "node:child_process#spawn"}; `const cp = require("child_process")` -> {"cp": "child_process"}.
        """
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

    def resolve_import(self, mod: TsModule, spec: str) -> TsModule | None:
        """The module a relative specifier (`./tools`, `../lib/run.js`) names, if it is in the project."""
        if not spec.startswith("."):
            return None
        base = PurePosixPath(mod.path).parent
        stem = PurePosixPath(*(base / spec).parts)
        raw = str(stem)
        # normalise `a/./b` and `a/../b` without touching the file system
        parts: list[str] = []
        for part in raw.split("/"):
            if part == "..":
                if parts:
                    parts.pop()
            elif part not in (".", ""):
                parts.append(part)
        target = "/".join(parts)
        no_ext = target.rsplit(".", 1)[0] if PurePosixPath(target).suffix in DIALECT_BY_SUFFIX else target
        for candidate in (target, *(no_ext + s for s in DIALECT_BY_SUFFIX), *(f"{target}/index{s}" for s in
                                                                             DIALECT_BY_SUFFIX)):
            if candidate in self.modules:
                return self.modules[candidate]
        return None
