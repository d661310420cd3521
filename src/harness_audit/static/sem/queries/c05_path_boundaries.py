"""C5 · Path and sandbox boundaries: a model-supplied path joined onto a root with no resolve-then-contain."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import ir
from harness_audit.static.sem.facts import Ext, expr_chain
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.roles import Site

_RESOLVERS = frozenset({"resolve", "realpath", "realpathSync", "readlink", "canonicalize"})
_CONTAINS = frozenset({"is_relative_to", "commonpath", "relative_to", "relative", "startswith", "startsWith",
                       "isRelative", "contains", "is_within", "isWithin", "within"})
_JOINS = frozenset({"join", "resolve", "joinpath"})
_NOT_PATHS = frozenset({"self", "cls", "ctx", "context", "run_context", "config", "options", "signal", "state",
                        "agent", "session", "tool_context", "wrapper"})


@query(CheckId.C5, name="model-path-joined-unchecked")
def path_joined_unchecked(ctx: Context) -> Iterator[Report]:
    """A tool's path argument (from the model) is joined onto a directory, and the tool resolves symlinks and
    checks containment nowhere, so `../../.ssh/id_rsa` or an absolute path walks out of the workspace."""
    for fn in ctx.roles.tool_functions:
        params = {n for p in fn.params if p.kind != "kw" for n in p.names if n not in _NOT_PATHS}
        if not params or _checks_containment(ctx, fn):
            continue
        for node in ir.walk_block(fn.body):
            joined = _joined_param(ctx, fn, node, params)
            if joined:
                yield Report(
                    site=Site(fn, node),
                    claim=f"The model-supplied `{joined}` is joined onto a directory here, and this tool neither "
                          "resolves symlinks nor checks that the result stays inside that directory.",
                    consequence="A path such as `../../.ssh/id_rsa`, an absolute path, or a symlink inside the "
                                "workspace reads or writes files outside it.",
                    direction="Resolve the joined path (`Path.resolve()` / `fs.realpath`), check it with "
                              "`is_relative_to(root.resolve())` / `path.relative` not starting with `..`, and use "
                              "that same checked value.")
                break


def _joined_param(ctx: Context, fn: ir.Function, node: ir.Node, params: set[str]) -> str:
    """The parameter (or its field) joined onto a path at `node`, or ''."""
    parts: list[ir.Expr] = []
    if isinstance(node, ir.Op) and node.op == "/" and len(node.operands) == 2 and fn.module.lang == "python" and \
            _is_path(ctx, fn, node.operands[0]):
        parts = [node.operands[1]]
    elif isinstance(node, ir.Call) and isinstance(node.func, ir.Attr | ir.Name):
        name = expr_chain(node.func)
        last = name.rsplit(".", 1)[-1]
        if last in _JOINS and (name.startswith(("os.path", "path", "posixpath")) or last == "joinpath" or
                               _is_path_api(ctx, fn, node)) and len(node.args) >= 2:
            parts = node.args[1:]
    for p in parts:
        chain = expr_chain(p)
        if chain and chain.split(".")[0] in params:
            return chain
    return ""


def _is_path(ctx: Context, fn: ir.Function, e: ir.Expr) -> bool:
    """A `pathlib.Path` (or something we cannot type: `root / name` in Python is a path join far more often than
    a division)."""
    vals = ctx.facts.eval(fn, e)
    if any(isinstance(v, Ext) and v.module == "pathlib" for v in vals):
        return True
    return not any(isinstance(v, Ext) and v.module == "builtins" for v in vals) and not any(
        isinstance(n, ir.Lit) and isinstance(n.value, int | float) for n in ir.walk(e))


def _is_path_api(ctx: Context, fn: ir.Function, call: ir.Call) -> bool:
    return any(isinstance(v, Ext) and v.module in ("path", "node:path", "os.path", "posixpath", "pathlib")
               for v in ctx.facts.eval(fn, call.func))


def _checks_containment(ctx: Context, fn: ir.Function) -> bool:
    """The tool (or a helper it calls) resolves symlinks and checks containment."""
    resolved = contained = False
    todo, seen = [fn], set()
    while todo and len(seen) < 10:
        cur = todo.pop()
        if cur.index in seen:
            continue
        seen.add(cur.index)
        for node in ir.walk_block(cur.body):
            if isinstance(node, ir.Call) and isinstance(node.func, ir.Attr | ir.Name):
                last = expr_chain(node.func).rsplit(".", 1)[-1]
                resolved |= last in _RESOLVERS
                contained |= last in _CONTAINS
                todo.extend(c for c in ctx.facts.callees(cur, node) if isinstance(c, ir.Function))
    return resolved and contained
