"""Functions nothing refers to: code that cannot run, so a defect in it is not one a user of the harness meets.

A top-level function, or a method of a top-level class, is unreferenced when its name appears nowhere in the
audited tree but where it is defined: no call, no import, no registration, no string that names it (a
`getattr(obj, "name")`, a `"module:name"` entry point in `pyproject.toml` or `package.json`), no comment. The test
is the name as a word in every file, so anything that could reach the function by name keeps it; what it cannot
see is a name built at run time (`getattr(self, f"on_{kind}")`), which is why some functions are never judged:

- a public top-level function outside an application (a package whose `package.json` says `"private": true`):
  it is a library's API, called by code outside the tree;
- decorated ones (a decorator registers: `@tool`, `@app.post(...)`, `@register`);
- methods of a class that extends another (the base, possibly a library's, calls what it overrides), and
  dunder / framework entry names (`__call__`, `main`, `GET`, `default`, `constructor`, `render`, …);
- the functions of a file a framework loads by its path (`route.ts`, `page.tsx`, `middleware.ts`, `conftest.py`,
  `__main__.py`, `manage.py`) and nested functions (their outer function is judged).

Blind reviews 12, 14 and 16 judged seven findings in such functions false ("dead code": nothing imports or
calls it); `runtime_code_only` drops a finding whose innermost named function is unreferenced.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable

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


def _judged(fn: ir.Function, app: bool) -> bool:
    """Whether `fn` may be called unreferenced only by name: see the module's list of exceptions. A public
    top-level function is a library's API, called by its users: it is judged only in an application (`app`)."""
    if fn.kind not in ("function", "method") or fn.parent is not None and fn.parent.kind != "module":
        return False
    name = fn.name
    if not _WORD.fullmatch(name) or name.startswith("__") or name in _ENTRY_NAMES or fn.decorators:
        return False
    cls = fn.cls
    if cls is None:
        return app or name.startswith("_")
    return not cls.bases and not cls.decorators and "." not in cls.qualname


def _in_app(path: str, text_of: Callable[[str], str | None]) -> bool:
    """The nearest `package.json` above `path` (inside the tree) says `"private": true`: an application, which
    nobody installs to call its functions."""
    parts = path.split("/")[:-1]
    for i in range(len(parts), -1, -1):
        manifest = text_of("/".join([*parts[:i], "package.json"]))
        if manifest is not None:
            return _PRIVATE.search(manifest) is not None
    return False


def unreferenced(modules: Iterable[ir.Module], text_of: Callable[[str], str | None],
                 paths: Iterable[str]) -> dict[str, list[tuple[int, int]]]:
    """Line spans (first, last) of the unreferenced functions of `modules`, by path; `paths` are every file of
    the tree whose text can refer to them, `text_of` reads one. A module that another re-exports whole
    (`export * from "./agent"`, `from .agent import *`) is API: its functions are not judged."""
    texts = [t for t in (text_of(p) for p in [*paths, *_MANIFESTS]) if t]
    candidates: list[ir.Function] = []
    for mod in modules:
        stem = mod.path.rsplit("/", 1)[-1].split(".", 1)[0]
        if _ENTRY_FILES.search(mod.path) or _reexported(stem, texts):
            continue
        app = mod.lang != "python" and _in_app(mod.path, text_of)
        candidates.extend(fn for fn in mod.functions if _judged(fn, app))
    if not candidates:
        return {}
    names = sorted({fn.name for fn in candidates}, key=len, reverse=True)
    word = re.compile(r"(?<![\w$])(?:" + "|".join(map(re.escape, names)) + r")(?![\w$])")
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(word.findall(text))
    defined = Counter(fn.name for fn in candidates)  # copies of one function (a v1/ and a v2/ tree) refer to none
    out: dict[str, list[tuple[int, int]]] = {}
    for fn in candidates:
        if counts[fn.name] <= defined[fn.name]:
            out.setdefault(fn.module.path, []).append((fn.line, fn.end))
    return out


def _reexported(stem: str, texts: list[str]) -> bool:
    pattern = re.compile(r"export\s*\*[^;\n]*['\"][^'\"]*\b" + re.escape(stem) + r"(\.\w+)?['\"]|"
                         r"from\s+\S*\b" + re.escape(stem) + r"\s+import\s+\*")
    return any(pattern.search(t) for t in texts if stem in t)
