"""C8 · Partial success: independent outcomes collapsed into one failure."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.facts import Ext, Fn, expr_chain
from harness_audit.static.sem.flow import catches_everything
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.roles import Site, walk_into_callbacks


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
        if _each_guarded(call) or not _items_may_fail(ctx, fn, call) or _reduced_to_one(fn, call) or \
                not _batch_acts(ctx, fn, call):
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
    for v in ctx.facts.values(fn, call.func):
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


_REDUCERS = frozenset({"any", "all", "sum", "max", "min", "join", "some", "every", "reduce"})


def _reduced_to_one(fn: ir.Function, call: ir.Call) -> bool:
    """The batch's results are bound to a local that is only ever reduced to one value (`any(r.flagged for r in
    results)`, `results.some(...)`, `"".join(results)`): the items are parts of one answer, and a failed part fails
    that answer by design, so no independent outcome is lost."""
    assigns = [n for n in ir.nodes_of(fn.body, ir.Assign) if isinstance(n, ir.Assign)]
    local = ""
    for node in assigns:
        value = node.value.value if isinstance(node.value, ir.Await) else node.value
        if value is call and len(node.targets) == 1 and isinstance(node.targets[0], ir.Name):
            local = node.targets[0].id
    if not local:
        return False
    uses = {id(n) for n in ir.walk_block(fn.body) if isinstance(n, ir.Name) and n.id == local}
    reduced: set[int] = set()
    for node in ir.nodes_of(fn.body, ir.Call):
        if not isinstance(node, ir.Call) or expr_chain(node.func).rsplit(".", 1)[-1] not in _REDUCERS:
            continue
        if isinstance(node.func, ir.Attr) and isinstance(node.func.obj, ir.Name) and node.func.obj.id == local:
            reduced.add(id(node.func.obj))  # `results.some(...)`
        for a in node.args:  # `any(... for r in results)`, `"".join(results)`
            reduced.update(id(n) for n in ir.walk(a) if isinstance(n, ir.Name) and n.id == local)
    targets = {id(t) for node in assigns for t in node.targets if isinstance(t, ir.Name) and t.id == local}
    return bool(reduced) and uses - targets <= reduced


def _each_guarded(call: ir.Call) -> bool:
    """Every operation's promise catches its own rejection (`items.map((i) => run(i).catch(() => null))`)."""
    return any(isinstance(n, ir.Call) and isinstance(n.func, ir.Attr) and n.func.name == "catch"
               for a in call.args for n in walk_into_callbacks(a))


def _items_may_fail(ctx: Context, fn: ir.Function, call: ir.Call) -> bool:
    """Whether one item of the batch may fail: the operation run for each item (the mapped callback, a function
    handed to `.map` by name, the call a comprehension makes) may raise by the may-raise summary (`flow.Raising`).
    A batch whose items all turn their own failures into values (`try: … except Exception: return None`) loses
    nothing when it is run as one. When the operations cannot be told (`gather(*tasks)`), they may."""
    ops: list[ir.Function] = []
    for a in call.args:
        inner = a.value if isinstance(a, ir.Spread) else a
        if isinstance(inner, ir.Call) and isinstance(inner.func, ir.Attr) and inner.func.name in ("map", "flatMap"):
            for x in inner.args[:1]:
                if isinstance(x, ir.FuncExpr):
                    ops.append(x.fn)
                    continue
                named = [v.fn for v in ctx.facts.values(fn, x) if isinstance(v, Fn)]
                if not named:
                    return True
                ops.extend(named)
        elif isinstance(inner, ir.Comp):
            elt = inner.elt.value if isinstance(inner.elt, ir.Await) else inner.elt
            if not isinstance(elt, ir.Call):
                return True
            callees = ctx.facts.callees(fn, elt)
            if (not callees or not all(isinstance(c, ir.Function) for c in callees)) and \
                    ctx.sums.raising.call_raises(fn, elt):
                return True  # reaches something outside the project
            ops.extend(c for c in callees if isinstance(c, ir.Function))
        else:
            return True
    return not all(_keeps_own_failure(ctx, op) for op in ops)


def _keeps_own_failure(ctx: Context, op: ir.Function, depth: int = 0) -> bool:
    """An item's operation cannot fail the batch: it may not raise, or its work sits in a `try` whose handler
    takes every exception and does not re-raise (what the handler does to record the failure, build a result or
    log, is bookkeeping, not the item's failure), or it only hands the item to project functions that are such."""
    if not ctx.sums.raising.may_raise(op):
        return True
    if any(isinstance(stmt, ir.Try) and any(
            catches_everything(h, op.module.lang) and not (h.body and isinstance(h.body[-1], ir.Raise))
            for h in stmt.handlers) for stmt in op.body):
        return True
    if depth >= 2 or len(op.body) != 1 or not isinstance(op.body[0], ir.Return | ir.ExprStmt):
        return False
    calls = [n for n in ir.walk(op.body[0]) if isinstance(n, ir.Call)]  # `(x) => run(x)`: a callback handing on
    callees = [c for call in calls for c in ctx.facts.callees(op, call)]
    return bool(callees) and all(isinstance(c, ir.Function) and _keeps_own_failure(ctx, c, depth + 1)
                                 for c in callees)


def _collected(loop: ir.Loop) -> str:
    for node in ir.walk_block(loop.body):
        if isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and node.func.name in ("append", "push") \
                and isinstance(node.func.obj, ir.Name | ir.Attr):
            return expr_chain(node.func.obj)
    return ""


def _mentions(block: ir.Block, chain: str) -> bool:
    return any(isinstance(n, ir.Name | ir.Attr) and expr_chain(n) == chain for n in ir.walk_block(block))
