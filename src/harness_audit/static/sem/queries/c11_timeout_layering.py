"""C11 · Timeout layering: a tool's process or network call with no timeout and no budget around it."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.facts import Ext, expr_chain
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.roles import Site
from harness_audit.static.sem.summaries import HTTP_GET, HTTP_SEND

_TIMEOUT_KEYS = frozenset({"timeout", "timeout_ms", "timeoutMs", "signal", "deadline", "request_timeout"})
_BUDGETS = frozenset({"wait_for", "timeout", "fail_after", "move_on_after", "timeout_at", "with_timeout",
                      "withTimeout", "race", "pTimeout", "p-timeout", "AbortSignal.timeout"})
_DEFAULT_TIMEOUT = ("httpx",)
"""Clients with a finite default timeout (httpx: 5 s)."""


@query(CheckId.C11, name="tool-call-without-timeout")
def call_without_timeout(ctx: Context) -> Iterator[Report]:
    """A process or network call made for a tool has no timeout of its own and no time budget around it (in
    its function or its callers), so a hung command or a silent server holds the tool call forever."""
    reach = ctx.roles.tool_reach
    for kind in (apis.SPAWN, HTTP_SEND, HTTP_GET):
        for site in ctx.roles.effect_sites(kind):
            fn, call = site.fn, site.node
            assert isinstance(call, ir.Call)
            if fn.index not in reach or _has_timeout(ctx, fn, call) or _budgeted(ctx, fn, set()):
                continue
            if kind == apis.SPAWN and (_never_waited(ctx, fn, call) or _session_timed(fn, call)):
                continue
            what = "process" if kind == apis.SPAWN else "request"
            yield Report(
                site=site,
                claim=f"This {what}, made for a tool, has no timeout and no time budget around it.",
                consequence=f"A hung {'command' if what == 'process' else 'server'} holds the tool call (and the "
                            "agent loop) forever, and the user never learns which tool is stuck.",
                direction="Give the call a timeout below the tool's budget and turn its expiry into the tool's "
                          "classified timeout result.")


_STARTS = frozenset({"Popen", "spawn", "fork", "create_subprocess_exec", "create_subprocess_shell"})
_HANDLE_ONLY = frozenset({"pid", "poll", "kill", "terminate", "unref", "send_signal", "returncode", "killed"})


def _never_waited(ctx: Context, fn: ir.Function, call: ir.Call) -> bool:
    """A process started in the background (`Popen`, `spawn`) that the tool never waits for: the handle is
    dropped, only its pid is read or it is signalled, or it is kept in a list whose elements are only polled
    (a reaper). Such a process cannot hold the tool call; one whose output is read, that is waited for,
    returned or handed on anywhere else can."""
    name = expr_chain(call.func).rsplit(".", 1)[-1]
    if name not in _STARTS:
        return False
    holder = ""
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Assign) and node.value is not None and any(
                n is call for n in ir.walk(node.value)):
            if len(node.targets) != 1 or not isinstance(node.targets[0], ir.Name):
                return False
            holder = node.targets[0].id
    if not holder:
        return not _used_as_value(fn, call)
    kept_in = [c.func.obj for c in ir.walk_block(fn.body) if isinstance(c, ir.Call) and isinstance(c.func, ir.Attr)
               and c.func.name == "append" and len(c.args) == 1 and isinstance(c.args[0], ir.Name)
               and c.args[0].id == holder]
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Attr) and isinstance(node.obj, ir.Name) and node.obj.id == holder:
            if node.name not in _HANDLE_ONLY:
                return False
        elif isinstance(node, ir.Name) and node.id == holder and not _read_for_member(fn, node) and not any(
                isinstance(c, ir.Call) and c.args and c.args[0] is node and c.func.obj is k  # type: ignore[union-attr]
                for k in kept_in for c in ir.walk_block(fn.body)):
            return False
    return all(_only_polled(ctx, fn.module, expr_chain(k)) for k in kept_in)


def _only_polled(ctx: Context, module: ir.Module, store: str) -> bool:
    """Every loop of the module over `store` (`for p in list(_REAPABLE)`) uses its element as a handle only."""
    if not store:
        return False
    for f in ctx.facts.functions:
        if f.module is not module:
            continue
        for loop in ir.walk_block(f.body):
            if not (isinstance(loop, ir.Loop) and loop.iter is not None and isinstance(loop.target, ir.Name)
                    and any(expr_chain(n) == store for n in ir.walk(loop.iter) if isinstance(n, ir.Name | ir.Attr))):
                continue
            element = loop.target.id
            for node in ir.walk_block(loop.body):
                if isinstance(node, ir.Attr) and isinstance(node.obj, ir.Name) and node.obj.id == element and \
                        node.name not in _HANDLE_ONLY:
                    return False
                if isinstance(node, ir.Call) and not (isinstance(node.func, ir.Attr) and
                                                      expr_chain(node.func.obj) == store) and any(
                        isinstance(a, ir.Name) and a.id == element for a in node.args):
                    return False  # handed to something other than the list itself
    return True


_TIMERS = frozenset({"setTimeout", "call_later", "Timer"})
_KILLS = frozenset({"kill", "terminate"})


def _session_timed(fn: ir.Function, call: ir.Call) -> bool:
    """A long-lived process kept in a field of its class (`this.proc = spawn("bash")`, a shell session) where a
    method of the class arms a timer around each use whose callback kills that process (`setTimeout(() =>
    this.stop(), limit)` with `stop` killing `this.proc`): every command sent to it has a time budget."""
    cls = fn.cls
    field = ""
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Assign) and node.value is not None and any(n is call for n in ir.walk(node.value)) \
                and len(node.targets) == 1 and isinstance(node.targets[0], ir.Attr) and \
                expr_chain(node.targets[0].obj) in ("this", "self"):
            field = node.targets[0].name
    if not field or cls is None:
        return False
    killers = {name for name, m in cls.methods.items() if _kills_field(_nodes_within(m), field)}
    for method in cls.methods.values():
        for node in _nodes_within(method):
            if not (isinstance(node, ir.Call) and expr_chain(node.func).rsplit(".", 1)[-1] in _TIMERS):
                continue
            for arg in node.args:
                if not isinstance(arg, ir.FuncExpr):
                    continue
                body = _nodes_within(arg.fn)
                if _kills_field(body, field) or any(
                        isinstance(c, ir.Call) and isinstance(c.func, ir.Attr) and c.func.name in killers and
                        expr_chain(c.func.obj) in ("this", "self") for c in body):
                    return True
    return False


def _kills_field(nodes: list[ir.Node], field: str) -> bool:
    return any(isinstance(c, ir.Call) and isinstance(c.func, ir.Attr) and c.func.name in _KILLS and
               isinstance(c.func.obj, ir.Attr) and c.func.obj.name == field for c in nodes)


def _nodes_within(fn: ir.Function) -> list[ir.Node]:
    """Every node of `fn`, including those of the callbacks it defines (a timer armed inside `new Promise(...)`)."""
    out: list[ir.Node] = []
    pending = [fn]
    while pending:
        cur = pending.pop()
        for node in ir.walk_block(cur.body):
            out.append(node)
            if isinstance(node, ir.FuncExpr):
                pending.append(node.fn)
    return out


def _used_as_value(fn: ir.Function, call: ir.Call) -> bool:
    """Whether the call's result is awaited, returned or passed on (anything but a statement of its own)."""
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Return | ir.Await | ir.Call) and node is not call and any(
                n is call for n in ir.walk(node)):
            return True
    return False


def _read_for_member(fn: ir.Function, name: ir.Name) -> bool:
    """`name` is the object of a member read (`proc.pid`) or the target it was bound to, not a value passed on."""
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Attr) and node.obj is name:
            return True
        if isinstance(node, ir.Assign) and any(t is name for t in node.targets):
            return True
    return False


def _has_timeout(ctx: Context, fn: ir.Function, call: ir.Call) -> bool:
    if any(k in _TIMEOUT_KEYS for k, _ in call.kw):
        return True
    if any(_options_with_timeout(ctx, fn, a) for a in call.args):
        return True
    for v in ctx.facts.eval(fn, call.func):
        if isinstance(v, Ext) and v.module in _DEFAULT_TIMEOUT:
            return True
    return any(isinstance(a, ir.Spread) or (isinstance(a, ir.Obj) and any(k is None for k, _ in a.items))
               for a in call.args)


def _options_with_timeout(ctx: Context, fn: ir.Function, arg: ir.Expr) -> bool:
    """The argument is an options object with a timeout or abort signal: written at the call, or a local
    name every binding of which is such an object (`const init = { method, signal }; fetch(url, init)`)."""
    if isinstance(arg, ir.Obj):
        return any(isinstance(k, str) and k in _TIMEOUT_KEYS for k, _ in arg.items)
    if not isinstance(arg, ir.Name):
        return False
    binds = ctx.facts.bindings(fn).get(arg.id, [])
    values = [b for b in binds if b.kind != "ann"]
    return bool(values) and all(b.kind == "value" and isinstance(b.expr, ir.Obj) and
                                _options_with_timeout(ctx, fn, b.expr) for b in values)


def _budgeted(ctx: Context, fn: ir.Function, seen: set[int], depth: int = 0) -> bool:
    """`fn` runs inside a time budget: it uses one itself, or every caller wraps it in one (three levels up)."""
    if fn.index in seen or depth > 3:
        return False
    seen.add(fn.index)
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Call | ir.With):
            name = expr_chain(node.func) if isinstance(node, ir.Call) else \
                " ".join(expr_chain(v.func) if isinstance(v, ir.Call) else expr_chain(v) for v, _ in node.items)
            if any(b in name for b in _BUDGETS):
                return True
    callers = ctx.facts.callers(fn)
    return bool(callers) and all(_budgeted(ctx, c, seen, depth + 1) for c, _ in callers)


__all__ = ["Site"]
