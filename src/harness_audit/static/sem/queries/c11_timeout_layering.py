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
            what = "process" if kind == apis.SPAWN else "request"
            yield Report(
                site=site,
                claim=f"This {what}, made for a tool, has no timeout and no time budget around it.",
                consequence=f"A hung {'command' if what == 'process' else 'server'} holds the tool call (and the "
                            "agent loop) forever, and the user never learns which tool is stuck.",
                direction="Give the call a timeout below the tool's budget and turn its expiry into the tool's "
                          "classified timeout result.")


def _has_timeout(ctx: Context, fn: ir.Function, call: ir.Call) -> bool:
    if any(k in _TIMEOUT_KEYS for k, _ in call.kw):
        return True
    if any(isinstance(a, ir.Obj) and any(isinstance(k, str) and k in _TIMEOUT_KEYS for k, _ in a.items)
           for a in call.args):
        return True
    for v in ctx.facts.eval(fn, call.func):
        if isinstance(v, Ext) and v.module in _DEFAULT_TIMEOUT:
            return True
    return any(isinstance(a, ir.Spread) or (isinstance(a, ir.Obj) and any(k is None for k, _ in a.items))
               for a in call.args)


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
