"""Functions nothing refers to: code that cannot run, so a defect in it is not one a user of the harness meets.

A top-level function, or a method of a top-level class, is unreferenced when its name appears nowhere in the
audited tree but where it is defined: no call, no import, no registration, no string that names it (a
`getattr(obj, "name")`, a `"module:name"` entry point in `pyproject.toml` or `package.json`), no comment. The test
is the name as a word in every file, so anything that could reach the function by name keeps it; what it cannot
see is a name built at run time (`getattr(self, f"on_{kind}")`), which is why some functions are never judged:

- a public top-level function outside an application (a package whose `package.json` says `"private": true`):
  it is a library's API, called by code outside the tree;
- decorated ones (a decorator registers: `@tool`, `@app.post(...)`, `@register`);
- methods of a class that extends another or is decorated (the base, possibly a library's, calls what it
  overrides), and dunder / framework entry names (`__call__`, `main`, `GET`, `default`, `constructor`, …);
- the functions of a file a framework loads by its path (`route.ts`, `page.tsx`, `middleware.ts`, `conftest.py`,
  `__main__.py`, `manage.py`), and of a module another re-exports whole (`export * from "./agent"`).

A line inside a nested function belongs to the top-level function or method around it. Blind reviews 12, 14 and
16 judged seven findings in such functions false ("dead code": nothing imports or calls it); `runtime_code_only`
drops a finding whose function is unreferenced. Only the functions that hold a finding are judged, so the cost
is one parse of those files and one scan of the tree for their names.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from harness_audit.static.sem import ir

_ENTRY_NAMES = frozenset({
    "main", "run", "default", "handler", "constructor", "render", "setup", "teardown", "app", "cli",
    "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "loader", "action", "middleware",
    "getServerSideProps", "getStaticProps", "generateMetadata", "activate", "deactivate",
})
"""Names a framework or runtime calls by convention."""
_ENTRY_FILES = re.compile(r"(^|/)(route|page|layout|middleware|loading|error|not-found|template|instrumentation|"
                          r"server|worker|sw|conftest|__main__|manage|setup|wsgi|asgi)\.\w+$")
"""Files a framework loads by path (Next.js app router, service workers, pytest, `python -m`)."""
_MANIFESTS = ("pyproject.toml", "setup.cfg", "setup.py", "package.json")
"""Files at the root that name entry points (`[project.scripts]`, `"bin"`, `"main"`)."""
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_PRIVATE = re.compile(r'"private"\s*:\s*true')


@dataclass(frozen=True, slots=True)
class Def:
    """A top-level function or a method of a top-level class, as either front end sees it."""

    path: str
    name: str
    line: int
    end: int
    method: bool
    """A method (else a module-level function)."""
    fixed: bool
    """Something other than its name may call it: it is decorated, or its class extends another or is decorated."""


def defs_of_ir(mod: ir.Module) -> list[Def]:
    """The top-level functions and methods of a lowered module."""
    out: list[Def] = []
    for fn in mod.functions:
        if fn.kind not in ("function", "method") or fn.parent is None or fn.parent.kind != "module":
            continue
        cls = fn.cls
        if cls is not None and "." in cls.qualname:
            continue
        fixed = bool(fn.decorators) or cls is not None and bool(cls.bases or cls.decorators)
        out.append(Def(mod.path, fn.name, fn.line, fn.end, cls is not None, fixed))
    return out


def defs_of_python(path: str, text: str) -> list[Def] | None:
    """The same for a Python file read with the host's parser (fast), or None where it cannot parse the file
    (newer syntax: the caller lowers it with the front end instead)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    out: list[Def] = []

    def add(fn: ast.stmt, cls: ast.ClassDef | None) -> None:
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            fixed = bool(fn.decorator_list) or cls is not None and bool(cls.bases or cls.keywords or
                                                                        cls.decorator_list)
            out.append(Def(path, fn.name, fn.lineno, fn.end_lineno or fn.lineno, cls is not None, fixed))

    for stmt in tree.body:
        add(stmt, None)
        if isinstance(stmt, ast.ClassDef):
            for inner in stmt.body:
                add(inner, stmt)
    return out


def _judged(d: Def, app: bool) -> bool:
    """Whether `d` may be called unreferenced only by name: see the module's list of exceptions."""
    name = d.name
    if d.fixed or not _WORD.fullmatch(name) or name.startswith("__") or name in _ENTRY_NAMES:
        return False
    return d.method or app or name.startswith("_")


def _in_app(path: str, text_of: Callable[[str], str | None]) -> bool:
    """The nearest `package.json` above `path` (inside the tree) says `"private": true`: an application, which
    nobody installs to call its functions."""
    parts = path.split("/")[:-1]
    for i in range(len(parts), -1, -1):
        manifest = text_of("/".join([*parts[:i], "package.json"]))
        if manifest is not None:
            return _PRIVATE.search(manifest) is not None
    return False


def holding(defs: Iterable[Def], lines: Iterable[int]) -> Iterator[Def]:
    """The defs that hold one of `lines`."""
    wanted = sorted(set(lines))
    for d in defs:
        if any(d.line <= line <= d.end for line in wanted):
            yield d


def unreferenced(defs: Iterable[Def], text_of: Callable[[str], str | None],
                 paths: Iterable[str]) -> list[Def]:
    """Those of `defs` nothing refers to; `paths` are every file of the tree whose text can refer to them,
    `text_of` reads one. Copies of one function (a `v1/` and a `v2/` tree) do not refer to each other."""
    defs = list(defs)
    texts = [t for t in (text_of(p) for p in [*paths, *_MANIFESTS]) if t]
    open_files: dict[str, bool] = {}  # path → whether its functions may be judged at all (one test per file)
    judged: list[Def] = []
    for d in defs:
        if d.path not in open_files:
            stem = d.path.rsplit("/", 1)[-1].split(".", 1)[0]
            open_files[d.path] = not _ENTRY_FILES.search(d.path) and not _reexported(stem, texts)
        if open_files[d.path] and _judged(d, not d.path.endswith(".py") and _in_app(d.path, text_of)):
            judged.append(d)
    if not judged:
        return []
    names = sorted({d.name for d in judged}, key=len, reverse=True)
    word = re.compile(r"(?<![\w$])(?:" + "|".join(map(re.escape, names)) + r")(?![\w$])")
    counts: Counter[str] = Counter()
    for text in texts:
        if any(n in text for n in names):
            counts.update(word.findall(text))
    defined = Counter(d.name for d in defs)
    return [d for d in judged if counts[d.name] <= defined[d.name]]


def _reexported(stem: str, texts: list[str]) -> bool:
    pattern = re.compile(r"export\s*\*[^;\n]*['\"][^'\"]*\b" + re.escape(stem) + r"(\.\w+)?['\"]|"
                         r"from\s+\S*\b" + re.escape(stem) + r"\s+import\s+\*")
    return any(pattern.search(t) for t in texts if stem in t)
