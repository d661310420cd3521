"""A language-neutral symbol index: where names are defined and where they are used.

Each language contributes one indexer that walks a parse tree and reports definitions and
references through an `_Emitter`; the index itself knows nothing about any language. Python is
indexed from `ast`. References are matched by name, never type-resolved: `Agent.run` finds every
`run` used as a name, an attribute or an import, whatever its receiver.
"""

from __future__ import annotations

import ast
import gc
import warnings
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal, NamedTuple

from harness_audit.findings import Language
from harness_audit.workspace import SourceFile, Workspace

__all__ = ["ParseFailure", "Reference", "Symbol", "SymbolIndex", "SymbolKind", "UnindexedFile", "indexed_languages"]

SymbolKind = Literal["function", "class", "method", "variable"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Symbol:
    """A definition found in a parse tree."""

    name: str
    """The bare name (`run`)."""
    qualname: str
    """Dotted name inside its file (`Agent.run`; a nested function is `outer.inner`)."""
    kind: SymbolKind
    """What kind of definition it is."""
    file: str
    """Canonical path relative to the root."""
    line: int
    """1-based line of the `def`/`class` keyword or of the assignment."""
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
    """A file of an indexed language that could not be parsed; it is left out of the index."""

    path: str
    """Canonical relative path."""
    reason: str
    """The parser's message, with the line where it has one."""


class ParseFailure(Exception):
    """Raised by an indexer when a file cannot be parsed; the file is listed, never fatal."""


class _Emitter:
    """What an indexer reports into: definitions as `Symbol`s, references as compact triples."""

    __slots__ = ("file", "file_id", "language", "symbols", "refs")

    def __init__(self, file: str, file_id: int, language: Language) -> None:
        self.file = file
        self.file_id = file_id
        self.language: Language = language
        self.symbols: list[Symbol] = []
        self.refs: dict[str, array[int]] = defaultdict(lambda: array("l"))

    def definition(self, name: str, qualname: str, kind: SymbolKind, line: int) -> None:
        self.symbols.append(Symbol(name=name, qualname=qualname, kind=kind, file=self.file, line=line,
                                   language=self.language))

    def reference(self, name: str, line: int, column: int) -> None:
        """`column` is 1-based, in characters."""
        self.refs[name].extend((self.file_id, line, column))


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
                out.definition(name, prefix + name, "variable", stmt.lineno)
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
        elif isinstance(node, ast.ImportFrom | ast.Import):
            for alias in node.names:
                if alias.name != "*":
                    out.reference(alias.name, alias.lineno, _char_column(lines, alias.lineno, alias.col_offset))


def _char_column(lines: list[str], line: int, byte_offset: int) -> int:
    """`ast` counts columns in UTF-8 bytes; a reader counts characters."""
    if 0 < line <= len(lines):
        text = lines[line - 1]
        if not text.isascii():
            return len(text.encode("utf-8")[:byte_offset].decode("utf-8", errors="ignore")) + 1
    return byte_offset + 1


_INDEXERS: dict[Language, Indexer] = {"python": _index_python}
"""One indexer per language; TypeScript and JavaScript sit beside Python here."""


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
    """`pkg/agent/loop.py` → `pkg.agent.loop` (a package's `__init__` is the package)."""
    stem = path.rsplit(".", 1)[0] if "." in path.rsplit("/", 1)[-1] else path
    parts = stem.split("/")
    if parts[-1] in {"__init__", "index"} and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


class _RefBlock(NamedTuple):
    """The references of one file to one spelling of a name, as (file id, line, column) triples."""

    name: str
    triples: array[int]


class SymbolIndex:
    """Definitions and references of a set of files, built once from their parse trees."""

    __slots__ = ("_ws", "_files", "_by_name", "_refs", "symbols", "unparsed", "languages", "files")

    def __init__(self, ws: Workspace, files: tuple[str, ...], symbols: list[Symbol],
                 refs: dict[str, list[_RefBlock]], unparsed: list[UnindexedFile],
                 languages: frozenset[Language]) -> None:
        self._ws = ws
        self._files = files
        self._refs = refs
        self.symbols: tuple[Symbol, ...] = tuple(sorted(symbols, key=lambda s: (s.file, s.line, s.qualname)))
        """Every definition, sorted by file, line and qualified name."""
        self.unparsed: tuple[UnindexedFile, ...] = tuple(sorted(unparsed, key=lambda u: u.path))
        """Files of an indexed language that did not parse, sorted by path."""
        self.languages = languages
        """Languages this index covers; files of other languages are not in it."""
        self.files: tuple[str, ...] = files
        """Paths of the files that were indexed, sorted."""
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
                paths.append(f.path)
                symbols.extend(out.symbols)
                for name, triples in out.refs.items():
                    refs[_last_segment(name)].append(_RefBlock(name, triples))
        return cls(ws, tuple(paths), symbols, dict(refs), unparsed, indexed_languages())

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
