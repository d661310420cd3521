"""A language-neutral symbol index: where names are defined, where they are used, what an import names.

Each language contributes one indexer that walks a parse tree and reports definitions, references and the
names a file imports and exports through an `_Emitter`, and one `_Linker` that says which indexed file a
module source (`./tools`, `pkg.tools`) names; the index itself knows nothing about any language. Python is
indexed from `ast`; TypeScript and JavaScript from the tree-sitter trees the static engine parses with, read by
one query per file. References are matched by name, never type-resolved: `Agent.run` finds every `run` used
as a name, an attribute or an import, whatever its receiver. `SymbolIndex.resolve` follows a name through the
file's imports (re-exports and barrel files included) to the definition in another module.
"""

from __future__ import annotations

import ast
import gc
import re
import warnings
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Literal, NamedTuple

from harness_audit.findings import Language
from harness_audit.workspace import SourceFile, Workspace

if TYPE_CHECKING:
    from tree_sitter import Node, Query

    from harness_audit.static.lang.typescript import Dialect

__all__ = ["ModuleLocator", "ParseFailure", "Reference", "Symbol", "SymbolIndex", "SymbolKind", "UnindexedFile", "indexed_languages"]

SymbolKind = Literal["function", "class", "method", "variable", "interface", "type", "enum", "namespace"]
"""`interface`, `enum` and `namespace` come from TypeScript only; `type` is a type alias in either language."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Symbol:
    """A definition found in a parse tree."""

    name: str
    """The bare name (`run`)."""
    qualname: str
    """Dotted name inside its file (`Agent.run`; a nested function is `outer.inner`; a function assigned to a
    variable or an object key is named after it: `const tools = { run() {} }` gives `tools.run`)."""
    kind: SymbolKind
    """What kind of definition it is."""
    file: str
    """Canonical path relative to the root."""
    line: int
    """1-based line of the `def`/`class` keyword or of the assignment (in TS/JS, of the defined name)."""
    language: Language
    """Source language of the file."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Reference:
    """A use of a name: a load, an attribute, an imported name (a call site is one of these)."""

    name: str
    """The name as written (an `import a.b` gives `a.b`)."""
    file: str
    """Canonical path relative to the root."""
    line: int
    """1-based line of the name itself (for `x.y` split over lines, the line of `y`)."""
    column: int
    """1-based column of the name's first character, counted in characters."""
    text: str
    """The source line, stripped."""


@dataclass(frozen=True, slots=True)
class UnindexedFile:
    """A file of an indexed language that did not parse (left out of the index), or parsed only in part."""

    path: str
    """Canonical relative path."""
    reason: str
    """The parser's message, with the line where it has one."""
    partial: bool = False
    """True when the parser recovered: the file is indexed as far as it parsed, and may lack some names."""


class ParseFailure(Exception):
    """Raised by an indexer when a file cannot be parsed; the file is listed, never fatal."""


class _Link(NamedTuple):
    """What a name of a file stands for: `name` in the module `source` names, or, when `source` is None, the
    name `name` of the same file. `name` is `*` for the module itself and `default` for its default export."""

    source: str | None
    name: str


class _Emitter:
    """What an indexer reports into: definitions as `Symbol`s, references as compact triples, module links."""

    __slots__ = ("file", "file_id", "language", "symbols", "refs", "imports", "exports", "stars", "partial")

    def __init__(self, file: str, file_id: int, language: Language) -> None:
        self.file = file
        self.file_id = file_id
        self.language: Language = language
        self.symbols: list[Symbol] = []
        self.refs: dict[str, array[int]] = defaultdict(lambda: array("l"))
        self.imports: dict[str, _Link] = {}
        """Local name -> what it imports."""
        self.exports: dict[str, _Link] = {}
        """Exported name -> what it stands for, where the file says so (every top-level definition is exported
        too, without an entry here)."""
        self.stars: list[str] = []
        """Module sources whose names the file re-exports wholesale (`export * from`, `from x import *`)."""
        self.partial: str | None = None
        """Why the file is indexed only as far as it parsed, if it is."""

    def definition(self, name: str, qualname: str, kind: SymbolKind, line: int) -> None:
        self.symbols.append(Symbol(name=name, qualname=qualname, kind=kind, file=self.file, line=line,
                                   language=self.language))

    def reference(self, name: str, line: int, column: int) -> None:
        """`column` is 1-based, in characters."""
        self.refs[name].extend((self.file_id, line, column))

    def imported(self, local: str, source: str, name: str) -> None:
        """`local` is bound to `name` of module `source` (`*`: the module; the first binding of a name wins)."""
        self.imports.setdefault(local, _Link(source, name))

    def exported(self, exported: str, source: str | None, name: str) -> None:
        """`exported` stands for `name` of module `source`, or for the file's own `name` when `source` is None."""
        self.exports.setdefault(exported, _Link(source, name))


Indexer = Callable[[str, list[str], _Emitter], None]
"""An indexer gets a file's text and lines, and reports into the emitter; `ParseFailure` if it cannot parse."""


# ---------------------------------------------------------------- Python

_BLOCK_FIELDS = ("body", "orelse", "finalbody")
_TYPE_ALIAS: type[ast.stmt] | None = getattr(ast, "TypeAlias", None)


def _index_python(text: str, lines: list[str], out: _Emitter) -> None:
    try:
        with warnings.catch_warnings():
            # invalid escape sequences in the audited code are its business, not noise on our stderr
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=out.file)
        _python_definitions(tree.body, "", "module", out)
        _python_references(tree, lines, out)
    except SyntaxError as exc:
        raise ParseFailure(f"syntax error at line {exc.lineno}: {exc.msg}") from exc
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ParseFailure(f"{type(exc).__name__}: {exc}") from exc


def _python_definitions(stmts: list[ast.stmt], prefix: str, scope: Literal["module", "class", "function"],
                        out: _Emitter) -> None:
    """Functions, classes and methods at any depth; assignments at module and class level."""
    for stmt in stmts:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            out.definition(stmt.name, prefix + stmt.name, "method" if scope == "class" else "function", stmt.lineno)
            _python_definitions(stmt.body, f"{prefix}{stmt.name}.", "function", out)
        elif isinstance(stmt, ast.ClassDef):
            out.definition(stmt.name, prefix + stmt.name, "class", stmt.lineno)
            _python_definitions(stmt.body, f"{prefix}{stmt.name}.", "class", out)
        elif isinstance(stmt, ast.Assign | ast.AnnAssign):
            if scope != "function":
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                for name in _assigned_names(targets):
                    out.definition(name, prefix + name, "variable", stmt.lineno)
        elif _TYPE_ALIAS is not None and isinstance(stmt, _TYPE_ALIAS):
            if scope != "function":
                name = stmt.name.id  # type: ignore[attr-defined]  # ast.TypeAlias exists from Python 3.12
                out.definition(name, prefix + name, "type", stmt.lineno)
        else:
            # if/try/with/for/while/match blocks at this level define names at this level too
            for field_name in _BLOCK_FIELDS:
                block: object = getattr(stmt, field_name, None)
                if isinstance(block, list):
                    _python_definitions(block, prefix, scope, out)  # type: ignore[arg-type]
            for handler in getattr(stmt, "handlers", ()):
                _python_definitions(handler.body, prefix, scope, out)
            for case in getattr(stmt, "cases", ()):
                _python_definitions(case.body, prefix, scope, out)


def _assigned_names(targets: Iterable[ast.expr]) -> Iterator[str]:
    for target in targets:
        if isinstance(target, ast.Name):
            yield target.id
        elif isinstance(target, ast.Tuple | ast.List):
            yield from _assigned_names(target.elts)
        elif isinstance(target, ast.Starred):
            yield from _assigned_names([target.value])


def _python_references(tree: ast.Module, lines: list[str], out: _Emitter) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                out.reference(node.id, node.lineno, _char_column(lines, node.lineno, node.col_offset))
        elif isinstance(node, ast.Attribute):
            # the attribute name ends the node; its own position is not recorded by `ast`
            line = node.end_lineno or node.lineno
            end = node.end_col_offset if node.end_col_offset is not None else node.col_offset
            out.reference(node.attr, line, _char_column(lines, line, end - len(node.attr.encode("utf-8"))))
        elif isinstance(node, ast.ImportFrom):
            source = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    out.stars.append(source)
                    continue
                out.reference(alias.name, alias.lineno, _char_column(lines, alias.lineno, alias.col_offset))
                out.imported(alias.asname or alias.name, source, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                out.reference(alias.name, alias.lineno, _char_column(lines, alias.lineno, alias.col_offset))
                # `import a.b` binds `a`; `import a.b as m` binds `m` to `a.b`
                bound = alias.asname or alias.name.split(".", 1)[0]
                out.imported(bound, alias.name if alias.asname else bound, "*")


def _char_column(lines: list[str], line: int, byte_offset: int) -> int:
    """`ast` and tree-sitter count columns in UTF-8 bytes; a reader counts characters."""
    if 0 < line <= len(lines):
        text = lines[line - 1]
        if not text.isascii():
            return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1
    return byte_offset + 1


def _python_file(stem: str, paths: frozenset[str]) -> str | None:
    """The module file or package `__init__` at `stem` (`pkg/tools`), if indexed."""
    base = f"{stem}/" if stem else ""
    for candidate in (f"{stem}.py", f"{stem}.pyi", f"{base}__init__.py", f"{base}__init__.pyi"):
        if candidate in paths:
            return candidate
    return None


def root_package(root_name: str, paths: Iterable[str]) -> str:
    """The package the audited root itself is (`nanobot` for an audit of `…/nanobot/` holding `__init__.py`), so
    that the project's own absolute imports (`nanobot.utils.x`) resolve; "" when the root is not a package."""
    if not root_name.isidentifier() or not any(p in ("__init__.py", "__init__.pyi") for p in paths):
        return ""
    return root_name


def _locate_python(origin: str, source: str, files: _ModuleFiles) -> str | None:
    """`from .tools import x` in `pkg/agent.py` -> `pkg/tools.py`; an absolute `pkg.tools` is looked up at the
    root, beside `origin` (a script's own directory is on its path), then as the shortest path ending with it
    (`src/` layouts)."""
    level = len(source) - len(source.lstrip("."))
    parts = [p for p in source[level:].split(".") if p]
    directory = origin.split("/")[:-1]
    if level:
        if level - 1 > len(directory):
            return None
        stem = "/".join(directory[:len(directory) - (level - 1)] + parts)
        if not parts:  # `from . import x`: the package itself
            init = f"{stem}/__init__.py" if stem else "__init__.py"
            return init if init in files.paths else None
        return _python_file(stem, files.paths)
    if not parts:
        return None
    rel = "/".join(parts)
    own = files.package and parts[0] == files.package  # the audited root's own package, named absolutely
    return (_python_file(rel, files.paths) or (own and _python_file("/".join(parts[1:]), files.paths) or None)
            or _python_file("/".join([*directory, *parts]), files.paths) or files.python_tail(rel))


def _python_submodule(source: str, name: str) -> str:
    """`from pkg import tools` may import the module `pkg.tools`."""
    return source + name if source.endswith(".") else f"{source}.{name}"


# ---------------------------------------------------------------- TypeScript and JavaScript

_TS_NAMES = ("identifier", "property_identifier", "private_property_identifier", "type_identifier",
             "shorthand_property_identifier", "shorthand_property_identifier_pattern")
"""Leaf nodes that spell a name; every one is a reference unless a `@bound` pattern says otherwise."""

_TS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "generator_function"})
_TS_DECLARED = ("function_declaration", "generator_function_declaration", "function_expression", "generator_function",
                "function_signature", "class_declaration", "abstract_class_declaration", "class",
                "interface_declaration", "type_alias_declaration", "enum_declaration", "internal_module")
_TS_TYPE_KINDS: dict[str, SymbolKind] = {"interface_declaration": "interface", "type_alias_declaration": "type",
                                         "enum_declaration": "enum"}

_TS_PATTERNS: tuple[str, ...] = (
    *(f"({kind}) @ref" for kind in _TS_NAMES),
    # a name that is bound (a store, as Python's side counts it), declared or only a key is no reference
    "(variable_declarator name: (identifier) @bound)",
    "(pair_pattern value: (identifier) @bound)",
    "(array_pattern (identifier) @bound)",
    "(rest_pattern (identifier) @bound)",
    "(assignment_pattern left: (identifier) @bound)",
    "(required_parameter pattern: (identifier) @bound)",
    "(optional_parameter pattern: (identifier) @bound)",
    "(formal_parameters (identifier) @bound)",
    "(arrow_function parameter: (identifier) @bound)",
    "(catch_clause parameter: (identifier) @bound)",
    "(for_in_statement left: (identifier) @bound)",
    "(assignment_expression left: (identifier) @bound)",
    "(augmented_assignment_expression left: (identifier) @bound)",
    "(import_specifier alias: (_) @bound)",
    "(export_specifier alias: (_) @bound)",
    "(namespace_export (_) @bound)",
    "(type_parameter name: (_) @bound)",
    "(mapped_type_clause name: (_) @bound)",
    "(infer_type (type_identifier) @bound)",
    "(index_signature name: (identifier) @bound)",
    "(pair key: (_) @bound)",
    "(jsx_attribute (property_identifier) @bound)",
    "(enum_body name: (_) @bound)",
    "(enum_assignment name: (_) @bound)",
    "(method_signature name: (_) @bound)",
    "(property_signature name: (_) @bound)",
    "(abstract_method_signature name: (_) @bound)",
    "(method_definition name: (_) @bound)",
    "(public_field_definition name: (_) @bound)",
    "(field_definition property: (_) @bound)",
    *(f"({kind} name: (_) @bound)" for kind in _TS_DECLARED),
    # definitions and the scopes that name what they hold, sorted by position afterwards
    *(f"({kind}) @def" for kind in (
        "function_declaration", "generator_function_declaration", "function_signature", "arrow_function",
        "function_expression", "generator_function", "class_declaration", "abstract_class_declaration", "class",
        "method_definition", "abstract_method_signature", "public_field_definition", "field_definition",
        "variable_declarator", "interface_declaration", "type_alias_declaration", "enum_declaration",
        "internal_module", "class_static_block")),
    "(pair value: [(arrow_function) (function_expression) (generator_function) (class) (object)]) @def",
    "(assignment_expression left: (member_expression) right: [(arrow_function) (function_expression)"
    " (generator_function) (class) (identifier) (object)]) @def",
    '(call_expression function: (member_expression object: (identifier) @_object (#eq? @_object "Object")'
    ' property: (property_identifier) @_method (#eq? @_method "defineProperty"))) @def',
    # links between modules
    "(import_statement) @import",
    "(export_statement) @export",
    '(call_expression function: (identifier) @_require (#eq? @_require "require")'
    " arguments: (arguments . (string))) @require",
)
"""One query per grammar reads a whole file: names (`@ref` less `@bound`), definitions, imports and exports.
A pattern naming a node type the grammar lacks (TypeScript's types, in JavaScript) is left out of that
grammar's query."""


class _TsQuery(NamedTuple):
    """The symbol query of one grammar."""

    query: Query
    patterns: tuple[str, ...]
    """The patterns of `_TS_PATTERNS` it holds, one a line."""


@cache
def _ts_query(dialect: Dialect) -> _TsQuery:
    from tree_sitter import Query, QueryError

    from harness_audit.static.lang.typescript import grammar

    language = grammar(dialect)
    kept = [p for p in _TS_PATTERNS
            if all(k == "_" or language.id_for_node_kind(k, True) is not None for k in _PATTERN_KINDS.findall(p))
            and all(language.field_id_for_name(f) is not None for f in _PATTERN_FIELDS.findall(p))]
    for _ in range(len(kept)):
        try:
            return _TsQuery(Query(language, "\n".join(kept)), tuple(kept))
        except QueryError as exc:
            # a pattern whose types all exist can still never match in this grammar (a bare `identifier` among
            # TypeScript's parameters); one pattern a line, so the row names the pattern to leave out
            row = re.search(r"\brow (\d+)", str(exc))
            if row is None or int(row.group(1)) >= len(kept):
                raise
            del kept[int(row.group(1))]
    raise AssertionError(f"no pattern of the symbol query fits the {dialect} grammar")


_PATTERN_KINDS = re.compile(r"\((\w+)")
_PATTERN_FIELDS = re.compile(r"(\w+):")
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*\Z")
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\Z")
_MODULE_VALUE = re.compile(rb"(?:await\s+)?(?:[\w$.]+\()?(?:require|import)\s*\(")
"""A declarator's value that is a module (`require("x")`, `__importStar(require("x"))`, `await import("x")`)."""
_TS_NAMED = frozenset({"identifier", "property_identifier", "private_property_identifier", "type_identifier",
                       "shorthand_property_identifier_pattern", "nested_identifier"})
_TS_WRAPPERS = frozenset({"parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression"})


def _index_typescript(text: str, lines: list[str], out: _Emitter) -> None:
    from tree_sitter import QueryCursor

    from harness_audit.static.lang.typescript import TsModule, dialect_of, parse_source

    dialect = dialect_of(out.file)
    query = _ts_query(dialect).query
    source = text.encode("utf-8")
    try:
        tree = parse_source(dialect, source)
        captures = QueryCursor(query).captures(tree.root_node)
        _ts_references(captures.get("ref", []), captures.get("bound", []), source, lines, out)
        _TsDefinitions(source, out).run(captures.get("def", []))
        _ts_links(captures, source, out)
    except (ValueError, RecursionError, MemoryError) as exc:
        raise ParseFailure(f"{type(exc).__name__}: {exc}") from exc
    if tree.root_node.has_error:
        line = TsModule(path=out.file, text=text, source=source, tree=tree, dialect=dialect).first_error_line()
        out.partial = f"partially parsed: syntax error near line {line or '?'}"


def _ts_references(names: list[Node], bound: list[Node], source: bytes, lines: list[str], out: _Emitter) -> None:
    # names are leaves, so a start offset identifies one; zero-width ones are tree-sitter's MISSING repairs
    skip = {n.start_byte for n in bound if n.end_byte > n.start_byte}
    spelled: dict[bytes, str] = {}
    refs, file_id, count = out.refs, out.file_id, len(lines)
    for node in names:  # the hot loop of a TS/JS build: one pass, no calls it can do without
        start, end = node.start_byte, node.end_byte
        if start == end or start in skip:
            continue
        raw = source[start:end]
        name = spelled.get(raw)
        if name is None:
            name = spelled[raw] = raw.decode("utf-8", errors="replace")
        row, column = node.start_point
        column = _char_column(lines, row + 1, column) if row < count and not lines[row].isascii() else column + 1
        refs[name].extend((file_id, row + 1, column))


def _ts_text(source: bytes, node: Node) -> str:
    return source[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def _ts_string(source: bytes, node: Node | None) -> str | None:
    """The content of a plain string literal; None for anything else."""
    if node is None or node.type != "string":
        return None
    return _ts_text(source, node)[1:-1]


def _ts_unwrap(node: Node | None) -> Node | None:
    """`(f)`, `f as T`, `f satisfies T`, `f!` -> `f`."""
    while node is not None and node.type in _TS_WRAPPERS and node.named_children:
        node = node.named_children[0]
    return node


def _ts_pattern_names(pattern: Node) -> Iterator[Node]:
    """The identifiers a destructuring pattern binds (`{a, b: c}`, `[d, ...e]`, `f = 1`)."""
    stack = [pattern]
    while stack:
        node = stack.pop()
        kind = node.type
        if kind in ("identifier", "shorthand_property_identifier_pattern"):
            yield node
        elif kind == "pair_pattern":
            stack.extend(c for c in (node.child_by_field_name("value"),) if c is not None)
        elif kind in ("assignment_pattern", "object_assignment_pattern"):
            stack.extend(c for c in (node.child_by_field_name("left"),) if c is not None)
        elif kind in ("object_pattern", "array_pattern", "rest_pattern"):
            stack.extend(reversed(node.named_children))


def _ts_returned(fn: Node) -> Node | None:
    """What a getter returns: an arrow's expression body, or the value of the body's first `return`."""
    body = fn.child_by_field_name("body")
    if body is None or body.type != "statement_block":
        return body
    ret = next((c for c in body.named_children if c.type == "return_statement"), None)
    return next((c for c in ret.named_children if c.type != "comment"), None) if ret is not None else None


class _Frame(NamedTuple):
    """A range of the file whose definitions share a qualified-name prefix."""

    end: int
    """Byte offset where the range ends."""
    prefix: str
    """`Agent.` inside class `Agent`; empty at module level."""
    scope: Literal["module", "class", "function"]
    """What kind of scope holds the range: variables are definitions only outside functions, as in Python."""
    quiet: bool
    """Inside `Object.defineProperty(exports, …)`, whose getter functions are plumbing, not definitions."""


class _TsDefinitions:
    """Definitions from the `@def` captures in source order, with a stack of the frames enclosing them.

    A declarator, key, field or export assignment names the function, class or object it holds
    (`const run = () => …`, `{ run() {} }`, `exports.run = function …`); the function itself, met next, is then
    not anonymous. Anything defined inside a named value is named after it (`tools.run`).
    """

    __slots__ = ("source", "out", "stack", "named")

    def __init__(self, source: bytes, out: _Emitter) -> None:
        self.source = source
        self.out = out
        self.stack: list[_Frame] = [_Frame(1 << 62, "", "module", False)]
        self.named: set[int] = set()
        """Ids of function and class nodes already named by the declarator, key or field holding them."""

    def run(self, nodes: list[Node]) -> None:
        nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))
        stack = self.stack
        for node in nodes:
            start = node.start_byte
            while len(stack) > 1 and stack[-1].end <= start:
                stack.pop()
            self._visit(node, stack[-1])

    def _visit(self, node: Node, frame: _Frame) -> None:
        kind = node.type
        if kind in _TS_FUNCTION_VALUES:
            if node.id not in self.named:
                self._scope(node, node.child_by_field_name("name"), "function", frame)
        elif kind in ("function_declaration", "generator_function_declaration"):
            self._scope(node, node.child_by_field_name("name"), "function", frame)
        elif kind in ("class_declaration", "abstract_class_declaration", "class"):
            if node.id not in self.named:
                self._scope(node, node.child_by_field_name("name"), "class", frame)
        elif kind == "method_definition":
            self._scope(node, node.child_by_field_name("name"), "method", frame)
        elif kind in ("function_signature", "abstract_method_signature"):
            self._define(node.child_by_field_name("name"), "function" if kind == "function_signature" else "method",
                         frame)
        elif kind in ("public_field_definition", "field_definition"):
            name = node.child_by_field_name("name" if kind == "public_field_definition" else "property")
            self._holder(name, node.child_by_field_name("value"), "method", True, frame)
        elif kind == "variable_declarator":
            self._declarator(node, frame)
        elif kind == "pair":
            self._holder(node.child_by_field_name("key"), node.child_by_field_name("value"), "method", False, frame)
        elif kind == "assignment_expression":
            self._assignment(node, frame)
        elif kind in _TS_TYPE_KINDS:
            qual = self._define(node.child_by_field_name("name"), _TS_TYPE_KINDS[kind], frame)
            body = node.child_by_field_name("body")
            if qual is not None and body is not None and kind == "enum_declaration":
                member_frame = frame._replace(prefix=qual + ".")
                for member in body.named_children:
                    target = member.child_by_field_name("name") if member.type == "enum_assignment" else member
                    self._define(target, "variable", member_frame)
        elif kind == "internal_module":
            self._scope(node, node.child_by_field_name("name"), "namespace", frame)
        elif kind == "class_static_block":
            self.stack.append(_Frame(node.end_byte, frame.prefix, "function", frame.quiet))
        elif kind == "call_expression":
            self._define_property(node)
            self.stack.append(_Frame(node.end_byte, frame.prefix, frame.scope, True))

    def _name(self, node: Node | None) -> str | None:
        if node is None or node.end_byte == node.start_byte:
            return None
        if node.type in _TS_NAMED:
            return _ts_text(self.source, node)
        inner = _ts_string(self.source, node)
        return inner if inner is not None and _IDENTIFIER.match(inner) else None

    def _define(self, name_node: Node | None, kind: SymbolKind, frame: _Frame) -> str | None:
        """Report a definition named by `name_node` under `frame`; its qualified name, or None if it has none."""
        name = self._name(name_node)
        if name is None or name_node is None:
            return None
        qual = frame.prefix + name
        if not frame.quiet:
            self.out.definition(name.rsplit(".", 1)[-1], qual, kind, name_node.start_point.row + 1)
        return qual

    def _scope(self, node: Node, name_node: Node | None, kind: SymbolKind, frame: _Frame) -> None:
        qual = self._define(name_node, kind, frame)
        scope = "class" if kind == "class" else "module" if kind == "namespace" else "function"
        self.stack.append(_Frame(node.end_byte, frame.prefix if qual is None else qual + ".", scope, frame.quiet))

    def _holder(self, name_node: Node | None, value: Node | None, function_kind: SymbolKind, plain: bool,
                frame: _Frame) -> None:
        """A name holding `value`: a function or class defined under that name, else a variable when `plain`;
        either way the frame over `value` carries the name."""
        value = _ts_unwrap(value)
        if value is not None and value.type in _TS_FUNCTION_VALUES:
            kind: SymbolKind = function_kind
            scope: Literal["module", "class", "function"] = "function"
        elif value is not None and value.type == "class":
            kind, scope = "class", "class"
        else:
            if plain:
                qual = self._define(name_node, "variable", frame)
            else:
                name = self._name(name_node)
                qual = None if name is None else frame.prefix + name
            if value is not None and qual is not None:
                self.stack.append(_Frame(value.end_byte, qual + ".", frame.scope, frame.quiet))
            return
        qual = self._define(name_node, kind, frame)
        if qual is not None:
            self.named.add(value.id)
            self.stack.append(_Frame(value.end_byte, qual + ".", scope, frame.quiet))

    def _declarator(self, node: Node, frame: _Frame) -> None:
        target = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if target is None:
            return
        # an imported module bound to a name is an import, as Python's `import x` is, not a definition
        plain = frame.scope != "function" and (value is None or not _MODULE_VALUE.match(
            self.source, value.start_byte, min(value.end_byte, value.start_byte + 120)))
        if target.type == "identifier":
            self._holder(target, value, "function", plain, frame)
        elif plain:
            for ident in _ts_pattern_names(target):
                self._define(ident, "variable", frame)

    def _assignment(self, node: Node, frame: _Frame) -> None:
        """`exports.run = …` / `module.exports = {…}` (CommonJS exports) and `Agent.prototype.run = function …`."""
        left = node.child_by_field_name("left")
        right = _ts_unwrap(node.child_by_field_name("right"))
        if left is None or right is None:
            return
        dotted = _ts_text(self.source, left)
        if not _DOTTED.match(dotted):
            return
        parts = dotted.split(".")
        if parts[:2] == ["module", "exports"]:
            parts = ["exports", *parts[2:]]
        if parts[0] == "exports":
            self._commonjs_export(parts[1:], left, right, frame)
            return
        if frame.scope == "function" or parts[0] == "this" or right.type not in (*_TS_FUNCTION_VALUES, "class"):
            return  # `el.onclick = () => …` inside a function is no definition
        kind: SymbolKind = "method" if "prototype" in parts else "class" if right.type == "class" else "function"
        qual = frame.prefix + ".".join(p for p in parts if p != "prototype")
        prop = left.child_by_field_name("property")
        if not frame.quiet and prop is not None:
            self.out.definition(parts[-1], qual, kind, prop.start_point.row + 1)
        self.named.add(right.id)
        self.stack.append(_Frame(right.end_byte, qual + ".", "class" if kind == "class" else "function", frame.quiet))

    def _commonjs_export(self, rest: list[str], left: Node, right: Node, frame: _Frame) -> None:
        out, source = self.out, self.source
        if not rest:  # module.exports = …
            if right.type == "identifier":
                out.exported("default", None, _ts_text(source, right))
            elif right.type == "object":
                for child in right.named_children:
                    if child.type == "shorthand_property_identifier":
                        out.exported(_ts_text(source, child), None, _ts_text(source, child))
                    elif child.type == "pair":
                        key = self._name(child.child_by_field_name("key"))
                        value = _ts_unwrap(child.child_by_field_name("value"))
                        if key is not None and value is not None and value.type == "identifier":
                            out.exported(key, None, _ts_text(source, value))
            return
        if len(rest) != 1:
            return
        if right.type == "identifier":
            out.exported(rest[0], None, _ts_text(source, right))
        else:
            self._holder(left.child_by_field_name("property"), right, "function", frame.scope != "function", frame)

    def _define_property(self, call: Node) -> None:
        """`Object.defineProperty(exports, "run", { get: function () { return tools_1.run; } })`: how compiled
        CommonJS re-exports a name."""
        args = call.child_by_field_name("arguments")
        items = [a for a in args.named_children if a.type != "comment"] if args is not None else []
        if len(items) < 3 or _ts_text(self.source, items[0]) not in ("exports", "module.exports"):
            return
        exported = _ts_string(self.source, items[1])
        descriptor = _ts_unwrap(items[2])
        if not exported or exported == "__esModule" or descriptor is None or descriptor.type != "object":
            return
        for prop in descriptor.named_children:
            expr: Node | None = None
            if prop.type == "pair":
                key = self._name(prop.child_by_field_name("key"))
                value = _ts_unwrap(prop.child_by_field_name("value"))
                if key == "value":
                    expr = value
                elif key == "get" and value is not None and value.type in _TS_FUNCTION_VALUES:
                    expr = _ts_returned(value)
            elif prop.type == "method_definition" and self._name(prop.child_by_field_name("name")) == "get":
                expr = _ts_returned(prop)
            if expr is not None and _DOTTED.match(local := _ts_text(self.source, expr)):
                self.out.exported(exported, None, local)


def _ts_links(captures: dict[str, list[Node]], source: bytes, out: _Emitter) -> None:
    """Imports and exports: ES modules, TypeScript's `import x = require()`, and CommonJS `require`."""
    for node in captures.get("import", ()):
        spec = _ts_string(source, node.child_by_field_name("source"))
        for child in node.named_children:
            if child.type == "import_clause" and spec is not None:
                for item in child.named_children:
                    if item.type == "identifier":
                        out.imported(_ts_text(source, item), spec, "default")
                    elif item.type == "namespace_import":
                        for ident in item.named_children:
                            out.imported(_ts_text(source, ident), spec, "*")
                    elif item.type == "named_imports":
                        for imp in item.named_children:
                            name = imp.child_by_field_name("name")
                            if imp.type == "import_specifier" and name is not None:
                                alias = imp.child_by_field_name("alias") or name
                                out.imported(_ts_text(source, alias).strip("'\""), spec,
                                             _ts_text(source, name).strip("'\""))
            elif child.type == "import_require_clause":
                required = _ts_string(source, child.child_by_field_name("source"))
                ident = next((c for c in child.named_children if c.type == "identifier"), None)
                if required is not None and ident is not None:
                    out.imported(_ts_text(source, ident), required, "*")
    for node in captures.get("export", ()):
        _ts_export(node, source, out)
    for call in captures.get("require", ()):
        _ts_require(call, source, out)


def _ts_export(node: Node, source: bytes, out: _Emitter) -> None:
    spec = _ts_string(source, node.child_by_field_name("source"))
    listed = False
    for child in node.named_children:
        if child.type == "export_clause":
            listed = True
            for item in child.named_children:
                name = item.child_by_field_name("name")
                if item.type == "export_specifier" and name is not None:
                    alias = item.child_by_field_name("alias") or name
                    out.exported(_ts_text(source, alias).strip("'\""), spec, _ts_text(source, name).strip("'\""))
        elif child.type == "namespace_export" and spec is not None:
            listed = True
            for ident in child.named_children:
                out.exported(_ts_text(source, ident).strip("'\""), spec, "*")
    if spec is not None:
        if not listed:
            out.stars.append(spec)
        return
    tokens = {c.type for c in node.children if not c.is_named}
    if "default" in tokens:
        declaration = node.child_by_field_name("declaration")
        value = node.child_by_field_name("value")
        target = declaration.child_by_field_name("name") if declaration is not None else value
        if target is not None and target.type in _TS_NAMED:
            out.exported("default", None, _ts_text(source, target))
    elif "=" in tokens:  # TypeScript's `export = Agent`
        value = next((c for c in node.named_children if c.type == "identifier"), None)
        if value is not None:
            out.exported("default", None, _ts_text(source, value))


def _ts_require(call: Node, source: bytes, out: _Emitter) -> None:
    """`const x = require("./x")`, `const {a, b: c} = require(…)`, `const y = require(…).y`, compiled
    `__importStar(require(…))` and `__exportStar(require(…), exports)`, `module.exports = require(…)`."""
    args = call.child_by_field_name("arguments")
    spec = _ts_string(source, args.named_children[0]) if args is not None and args.named_children else None
    parent = call.parent
    if spec is None or parent is None:
        return
    member: str | None = None
    if parent.type == "arguments" and parent.parent is not None:
        helper = _ts_text(source, parent.parent.child_by_field_name("function") or parent).rsplit(".", 1)[-1]
        if helper in ("__exportStar", "__export"):
            out.stars.append(spec)
            return
        if helper not in ("__importStar", "__importDefault", "__toESM", "_interopRequireWildcard",
                          "_interopRequireDefault"):
            return
        parent = parent.parent.parent
    elif parent.type == "member_expression":
        prop = parent.child_by_field_name("property")
        member = _ts_text(source, prop) if prop is not None else None
        parent = parent.parent
    elif parent.type == "assignment_expression":
        left = parent.child_by_field_name("left")
        if left is not None and _ts_text(source, left) == "module.exports":
            out.stars.append(spec)
        return
    if parent is None or parent.type != "variable_declarator":
        return
    target = parent.child_by_field_name("name")
    if target is None:
        return
    if target.type == "identifier":
        out.imported(_ts_text(source, target), spec, member or "*")
    elif target.type == "object_pattern" and member is None:
        for prop in target.named_children:
            if prop.type == "shorthand_property_identifier_pattern":
                out.imported(_ts_text(source, prop), spec, _ts_text(source, prop))
            elif prop.type == "pair_pattern":
                key = prop.child_by_field_name("key")
                local = next(_ts_pattern_names(prop), None)
                if key is not None and local is not None:
                    out.imported(_ts_text(source, local), spec, _ts_text(source, key))


def _locate_node(origin: str, source: str, files: _ModuleFiles) -> str | None:
    """A relative specifier (`./tools`, `../lib/run.js`, `./dir` for `./dir/index.ts`); packages are not indexed."""
    from harness_audit.static.lang.typescript import resolve_relative

    return resolve_relative(origin, source, files.paths)


def _no_submodule(source: str, name: str) -> None:
    return None


# ---------------------------------------------------------------- languages

class _Linker(NamedTuple):
    """How a language's files name other modules."""

    locate: Callable[[str, str, _ModuleFiles], str | None]
    """(importing file, module source as written, the indexed files) -> the indexed file it names, if any."""
    submodule: Callable[[str, str], str | None]
    """(module source, name) -> the source of a module `name` inside that package, where a name imported from a
    package may be a module (Python's `from pkg import tools`)."""


_INDEXERS: dict[Language, Indexer] = {"python": _index_python, "typescript": _index_typescript,
                                      "javascript": _index_typescript}
"""One indexer per language."""

_NODE_LINKER = _Linker(_locate_node, _no_submodule)
_LINKERS: dict[Language, _Linker] = {"python": _Linker(_locate_python, _python_submodule),
                                     "typescript": _NODE_LINKER, "javascript": _NODE_LINKER}
"""One linker per indexed language."""


class ModuleLocator:
    """Which file of a set a module source names, as an import in a given file spells it (`.tools`,
    `pkg.tools`, `./tools`, `../lib/run.js`); None for a package outside the set."""

    __slots__ = ("_files",)

    def __init__(self, paths: Iterable[str], package: str = "") -> None:
        self._files = _ModuleFiles(frozenset(paths), package)

    def locate(self, language: Language, origin: str, source: str) -> str | None:
        """The file `source`, imported from `origin`, names."""
        linker = _LINKERS.get(language)
        return linker.locate(origin, source, self._files) if linker else None

    def submodule(self, language: Language, source: str, name: str) -> str | None:
        """The source of a module `name` inside package `source`, where the language has such modules."""
        linker = _LINKERS.get(language)
        return linker.submodule(source, name) if linker else None


def indexed_languages() -> frozenset[Language]:
    """The languages an index can cover in this build."""
    return frozenset(_INDEXERS)


# ---------------------------------------------------------------- the index

@contextmanager
def _no_gc_pauses() -> Iterator[None]:
    # the collector's full passes over millions of fresh AST nodes dominate the build time otherwise
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _last_segment(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _module_path(path: str) -> str:
    """`pkg/agent/loop.py` → `pkg.agent.loop` (a package's `__init__` or `index` is the package; `x.d.ts` is `x`)."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    stem = stem.removesuffix(".d")
    parts = stem.split("/")
    if parts[-1] in {"__init__", "index"} and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


@dataclass(slots=True)
class _ModuleFiles:
    """The indexed paths, as linkers look modules up in them."""

    paths: frozenset[str]
    """Every indexed path."""
    package: str = ""
    """The package the audited root itself is (`root_package`), or ""."""
    _tails: dict[str, str] | None = field(default=None, repr=False)

    def python_tail(self, rel: str) -> str | None:
        """The shortest Python module path ending with the module `rel` (`pkg/tools`), built once."""
        if self._tails is None:
            tails: dict[str, str] = {}
            for path in sorted(self.paths, key=lambda p: (len(p), p)):
                stem, dot, suffix = path.rpartition(".")
                if not dot or suffix not in ("py", "pyi"):
                    continue
                stem = stem.removesuffix("/__init__") if stem != "__init__" else ""
                parts = stem.split("/")
                for k in range(1, len(parts) + 1):
                    tails.setdefault("/".join(parts[-k:]), path)
            self._tails = tails
        return self._tails.get(rel)


class _RefBlock(NamedTuple):
    """The references of one file to one spelling of a name, as (file id, line, column) triples."""

    name: str
    triples: array[int]


class _Links(NamedTuple):
    """What a file imports and exports (see `_Emitter`)."""

    language: Language
    imports: dict[str, _Link]
    exports: dict[str, _Link]
    stars: tuple[str, ...]


_SELF_NAMES = frozenset({"this", "self", "super", "cls"})


class SymbolIndex:
    """Definitions and references of a set of files, built once from their parse trees."""

    __slots__ = ("_ws", "_files", "_by_name", "_refs", "_links", "_modules", "symbols", "unparsed", "languages",
                 "files")

    def __init__(self, ws: Workspace, files: tuple[str, ...], symbols: list[Symbol],
                 refs: dict[str, list[_RefBlock]], unparsed: list[UnindexedFile],
                 languages: frozenset[Language], links: dict[str, _Links] | None = None) -> None:
        self._ws = ws
        self._files = files
        self._refs = refs
        self._links: dict[str, _Links] = links or {}
        self._modules = _ModuleFiles(frozenset(files), root_package(ws.root.name, files))
        self.symbols: tuple[Symbol, ...] = tuple(sorted(symbols, key=lambda s: (s.file, s.line, s.qualname)))
        """Every definition, sorted by file, line and qualified name."""
        self.unparsed: tuple[UnindexedFile, ...] = tuple(sorted(unparsed, key=lambda u: u.path))
        """Files of an indexed language that did not parse (not indexed) or parsed in part (`partial`, indexed as
        far as they parsed), sorted by path."""
        self.languages = languages
        """Languages this index covers; files of other languages are not in it."""
        self.files: tuple[str, ...] = files
        """Paths of the files that were indexed (partially parsed ones included), sorted."""
        self._by_name: dict[str, list[Symbol]] = defaultdict(list)
        for sym in self.symbols:
            self._by_name[sym.name].append(sym)

    @classmethod
    def build(cls, ws: Workspace, files: Iterable[SourceFile]) -> SymbolIndex:
        """Index `files` (normally `ws.discover().files`); files of unindexed languages are ignored."""
        chosen = sorted((f for f in files if f.language in _INDEXERS), key=lambda f: f.path)
        paths: list[str] = []
        symbols: list[Symbol] = []
        refs: dict[str, list[_RefBlock]] = defaultdict(list)
        unparsed: list[UnindexedFile] = []
        links: dict[str, _Links] = {}
        with _no_gc_pauses():
            for f in chosen:
                lines = ws.lines(f.path)
                text = ws.text(f.path)
                if text is None or lines is None:
                    unparsed.append(UnindexedFile(f.path, "not readable as UTF-8 text"))
                    continue
                out = _Emitter(f.path, len(paths), f.language)
                try:
                    _INDEXERS[f.language](text, lines, out)
                except ParseFailure as exc:
                    unparsed.append(UnindexedFile(f.path, str(exc)))
                    continue
                if out.partial is not None:
                    unparsed.append(UnindexedFile(f.path, out.partial, partial=True))
                paths.append(f.path)
                symbols.extend(out.symbols)
                for name, triples in out.refs.items():
                    refs[_last_segment(name)].append(_RefBlock(name, triples))
                if out.imports or out.exports or out.stars:
                    links[f.path] = _Links(f.language, out.imports, out.exports, tuple(out.stars))
            return cls(ws, tuple(paths), symbols, dict(refs), unparsed, indexed_languages(), links)

    def definitions(self, name: str) -> tuple[Symbol, ...]:
        """Definitions whose bare name is `name`, or whose dotted name ends with it (`Agent.run`, `loop.Agent.run`).

        The dotted name is the file's module path followed by the qualified name, so
        `agent.loop.Agent.run` and `loop.Agent.run` match a method `run` of `Agent` in `agent/loop.py`.
        """
        name = name.strip().strip(".")
        out: list[Symbol] = []
        for sym in self._by_name.get(_last_segment(name), ()):
            full = f"{_module_path(sym.file)}.{sym.qualname}"
            if name in {sym.name, sym.qualname, full} or full.endswith("." + name):
                out.append(sym)
        return tuple(out)

    def references(self, name: str) -> tuple[Reference, ...]:
        """Uses of `name`, matched on its last dotted segment (receivers are not resolved), sorted."""
        last = _last_segment(name.strip().strip("."))
        found: list[tuple[str, int, int, str]] = []
        for block in self._refs.get(last, ()):
            triples = block.triples
            for i in range(0, len(triples), 3):
                found.append((self._files[triples[i]], triples[i + 1], triples[i + 2], block.name))
        found.sort()
        out: list[Reference] = []
        seen: set[tuple[str, int, int]] = set()
        for file, line, column, written in found:
            if (file, line, column) in seen:
                continue
            seen.add((file, line, column))
            lines = self._ws.lines(file) or []
            text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
            out.append(Reference(name=written, file=file, line=line, column=column, text=text))
        return tuple(out)

    # ------------------------------------------------------------ following imports
    def resolve(self, file: str, name: str) -> tuple[Symbol, ...]:
        """The definitions `name`, as written in `file`, stands for: how a rule follows a call to its definition.

        `name` is a name or a dotted name as the code spells it (`runTool`, `tools.runTool`, `Agent.run`,
        `this.run`). A definition of `file` with that qualified name comes first; else the first segment is
        followed through the file's imports, or its exports (`export { run } from "./run"`), into the indexed
        module they name, through re-exports, barrel files (`export * from`) and compiled CommonJS (`require`,
        `exports.x =`, `Object.defineProperty(exports, …)`), to where it is defined. A name of an
        unindexed package resolves to nothing. Receivers other than imports are not typed: `this.run` and
        `self.run` give the members `run` of every class (and object literal) of `file`, and a bare name with no
        other answer gives the definitions of that name nested anywhere in `file`.
        """
        name = name.strip().strip(".")
        head, _, rest = name.partition(".")
        if not name or not head:
            return ()
        if head in _SELF_NAMES and rest:
            last = _last_segment(rest)
            return tuple(s for s in self._by_name.get(last, ())
                         if s.file == file and s.kind in ("method", "variable") and "." in s.qualname)
        seen: set[tuple[str, str]] = set()
        found = self._local(file, name, seen) or self._members(self._export(file, head, seen), rest)
        if found or rest:
            return found
        return tuple(s for s in self._by_name.get(name, ()) if s.file == file)

    def _top(self, file: str, qualname: str) -> tuple[Symbol, ...]:
        return tuple(s for s in self._by_name.get(_last_segment(qualname), ())
                     if s.file == file and s.qualname == qualname)

    def _local(self, file: str, dotted: str, seen: set[tuple[str, str]]) -> tuple[Symbol, ...]:
        """`dotted` as a name of `file`: its own definition, or what its import of the first segment names."""
        found = self._top(file, dotted)
        if found:
            return found
        links = self._links.get(file)
        head, _, rest = dotted.partition(".")
        link = links.imports.get(head) if links is not None else None
        if link is None or link.source is None:
            return ()
        if link.name == "*":
            return self._in_module(file, link.source, rest, seen)
        return self._in_module(file, link.source, f"{link.name}.{rest}" if rest else link.name, seen)

    def _in_module(self, origin: str, source: str, dotted: str, seen: set[tuple[str, str]]) -> tuple[Symbol, ...]:
        """`dotted` exported by the module `source` names from `origin` (the default export when `dotted` is empty,
        as a CommonJS `require` returns it)."""
        links = self._links.get(origin)
        linker = _LINKERS.get(links.language) if links is not None else None
        if linker is None:
            return ()
        head, _, rest = dotted.partition(".")
        target = linker.locate(origin, source, self._modules)
        if target is not None:
            found = self._export(target, head or "default", seen)
            if found:
                return self._members(found, rest)
        sub = linker.submodule(source, head) if head else None
        return self._in_module(origin, sub, rest, seen) if sub is not None and rest else ()

    def _export(self, file: str, name: str, seen: set[tuple[str, str]]) -> tuple[Symbol, ...]:
        """What `file` exports as `name`: an explicit export, a top-level definition or import, a star re-export."""
        if (file, name) in seen:
            return ()
        seen.add((file, name))
        links = self._links.get(file)
        link = links.exports.get(name) if links is not None else None
        if link is not None:
            if link.source is None:
                return self._local(file, link.name, seen)
            return self._in_module(file, link.source, link.name, seen) if link.name != "*" else ()
        found = self._local(file, name, seen)
        if found or links is None:
            return found
        for star in links.stars:
            found = self._in_module(file, star, name, seen)
            if found:
                return found
        return ()

    def _members(self, found: tuple[Symbol, ...], rest: str) -> tuple[Symbol, ...]:
        """`Agent` + `run` -> the definitions `Agent.run` beside each of `found`."""
        if not rest:
            return found
        return tuple(m for s in found for m in self._top(s.file, f"{s.qualname}.{rest}"))
