"""C8 · Partial success: independent outcomes collapsed into one failure."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.facts import Ext, expr_chain
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.roles import Site


@query(CheckId.C8, name="batch-all-or-nothing")
def all_or_nothing(ctx: Context) -> Iterator[Report]:
    """Independent operations run together (`asyncio.gather` without `return_exceptions=True`,
    `Promise.all`, a `TaskGroup`) so one failure discards the others' results."""
    for site in ctx.roles.effect_sites(apis.GATHER):
        fn, call = site.fn, site.node
        assert isinstance(call, ir.Call)
        api = _api(ctx, fn, call)
        if api in ("gather",) and _true(call.keyword("return_exceptions")):
            continue
        if api not in ("gather", "all", "TaskGroup") or not _independent(call):
            continue
        if _each_guarded(ctx, fn, call) or not _batch_acts(ctx, fn, call):
            continue
        yield Report(
            site=site,
            claim=f"`{expr_chain(call.func)}` runs independent operations as one: the first failure raises and the "
                  "results of the others are lost.",
            consequence="Four of five operations succeed, the batch is reported as one failure and their results "
                        "are discarded (for tool calls: the successful calls get no result either).",
            direction="Collect outcomes per item (`gather(..., return_exceptions=True)` / `Promise.allSettled`) and "
                      "report each failure next to the successes.")


@query(CheckId.C8, name="loop-error-discards-earlier-results")
def loop_error_discards(ctx: Context) -> Iterator[Report]:
    """A loop runs one operation per item and collects the results, and its `except` re-raises: a failure at
    item k throws away the results of the k-1 items already done."""
    for fn in ctx.facts.functions:
        for loop in ir.walk_block(fn.body):
            if not isinstance(loop, ir.Loop) or loop.kind != "for":
                continue
            collected = _collected(loop)
            if not collected or not _acts(ctx, fn, loop):
                continue
            for node in ir.walk_block(loop.body):
                if isinstance(node, ir.Try):
                    for h in node.handlers:
                        if h.body and isinstance(h.body[-1], ir.Raise) and not _mentions(h.body, collected):
                            yield Report(
                                site=Site(fn, h.body[-1]), also_at=(Site(fn, loop),),
                                claim=f"A failure of one item re-raises out of the loop, discarding the results "
                                      f"already collected in `{collected}`.",
                                consequence="The operations that already succeeded (and their effects) are reported "
                                            "as one failure; the caller never learns what was done.",
                                direction="Record the failure as this item's result and go on, or return the results "
                                          "collected so far together with the error.")


def _batch_acts(ctx: Context, fn: ir.Function, call: ir.Call) -> bool:
    """The batched operations are the agent's work: tool calls, model requests, requests or commands that act on
    the world (setup steps that must all succeed are not partial successes to keep)."""
    if any(ctx.roles.is_tool_calls(fn, a.value if isinstance(a, ir.Spread) else a) for a in call.args):
        return True
    effects = ctx.sums.near(fn, list(ir.walk(call)), depth=3)
    if any(k in effects for k in (apis.MODEL, apis.SPAWN, "http-send", "http-get")):
        return True
    tools = {f.index for f in ctx.roles.tool_functions}
    return any(isinstance(c, ir.Function) and c.index in tools for node in ir.walk(call) if isinstance(node, ir.Call)
               for c in ctx.facts.callees(fn, node))


def _acts(ctx: Context, fn: ir.Function, loop: ir.Loop) -> bool:
    """Each item is an operation whose result matters: it runs a tool, asks a model, or acts on the world."""
    effects = ctx.sums.near(fn, list(ir.walk_block(loop.body)), depth=2)
    if any(k in effects for k in (apis.MODEL, apis.SPAWN, "http-send")):
        return True
    tools = {f.index for f in ctx.roles.tool_functions}
    return any(isinstance(c, ir.Function) and c.index in tools
               for node in ir.walk_block(loop.body) if isinstance(node, ir.Call)
               for c in ctx.facts.callees(fn, node))


def _api(ctx: Context, fn: ir.Function, call: ir.Call) -> str:
    for v in ctx.facts.eval(fn, call.func):
        if isinstance(v, Ext):
            return v.plain.rsplit(".", 1)[-1]
    return ""


def _true(e: ir.Expr | None) -> bool:
    return isinstance(e, ir.Lit) and e.value is True or (e is not None and not isinstance(e, ir.Lit))


def _independent(call: ir.Call) -> bool:
    """The operations come from one comprehension or `.map` (one per item), not a fixed pair that belongs
    together."""
    for a in call.args:
        inner = a.value if isinstance(a, ir.Spread) else a
        if isinstance(inner, ir.Comp):
            return True
        if isinstance(inner, ir.Call) and isinstance(inner.func, ir.Attr) and inner.func.name in ("map", "flatMap"):
            return True
        if isinstance(a, ir.Spread) and isinstance(inner, ir.Name):
            return True  # `gather(*tasks)`: a list built elsewhere, one task per item
    return False


def _each_guarded(ctx: Context, fn: ir.Function, call: ir.Call) -> bool:
    """Every operation catches its own errors (the mapped callback or called function wraps its body in a
    `try` whose last handler does not re-raise)."""
    for a in call.args:
        inner = a.value if isinstance(a, ir.Spread) else a
        targets: list[ir.Function] = []
        if isinstance(inner, ir.Call) and isinstance(inner.func, ir.Attr):
            targets.extend(x.fn for x in inner.args if isinstance(x, ir.FuncExpr))
        if isinstance(inner, ir.Comp) and any(isinstance(n, ir.Call) and isinstance(n.func, ir.Attr)
                                              and n.func.name == "catch" for n in ir.walk(inner.elt)):
            return True
        for node in ir.walk(inner):
            if isinstance(node, ir.Call):
                targets.extend(c for c in ctx.facts.callees(fn, node) if isinstance(c, ir.Function))
        if any(_catches_own_errors(t) for t in targets):
            return True
    return False


def _catches_own_errors(fn: ir.Function) -> bool:
    for node in ir.walk_block(fn.body):  # `run(item).catch(() => undefined)`: the item's failure stays its own
        if isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and node.func.name == "catch":
            return True
    for stmt in fn.body:
        if isinstance(stmt, ir.Try) and stmt.handlers:
            last = stmt.handlers[-1].body
            if not (last and isinstance(last[-1], ir.Raise)):
                return True
    return False


def _collected(loop: ir.Loop) -> str:
    for node in ir.walk_block(loop.body):
        if isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and node.func.name in ("append", "push") \
                and isinstance(node.func.obj, ir.Name | ir.Attr):
            return expr_chain(node.func.obj)
    return ""


def _mentions(block: ir.Block, chain: str) -> bool:
    return any(isinstance(n, ir.Name | ir.Attr) and expr_chain(n) == chain for n in ir.walk_block(block))
