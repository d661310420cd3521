"""C1 · Tool-call pairing: exits from tool execution that leave a call without its result."""

from __future__ import annotations

import re
from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.facts import expr_chain
from harness_audit.static.sem.flow import CANCELLED, RAISED, Flow, header
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.roles import LOOKUPS, TOOL_NAME_FIELDS, HistoryOp, Site


@query(CheckId.C1, name="tool-loop-exit-skips-result")
def exit_skips_result(ctx: Context) -> Iterator[Report]:
    """Inside a loop over a reply's tool calls that records a result for each call, a branch leaves the
    iteration (`continue`, `break`, `return`) without recording one for this call."""
    for site in ctx.roles.tool_loops:
        loop = site.node
        if not isinstance(loop, ir.Loop) or not ctx.roles.executes_tools(site) or \
                not _records_results(ctx, site.fn, loop.body):
            continue
        for owner, branch, jump in _leaving_branches(loop.body):
            if _records_results(ctx, site.fn, branch) or _pauses(jump):
                continue
            what = {"continue": "skips to the next call", "break": "leaves the loop",
                    "return": "returns"}[jump.kind if isinstance(jump, ir.Jump) else "return"]
            yield Report(
                site=Site(site.fn, owner), end=jump.line, also_at=(site, Site(site.fn, jump)),
                claim=f"This branch {what} without recording a result for the current tool call (and, for "
                      "`break`/`return`, for the calls after it).",
                consequence="The next request carries a tool call with no result, and the provider rejects it "
                            "(HTTP 400: tool_use ids without tool_result / tool_calls must be followed by tool "
                            "messages).",
                direction="Record a result for every call on every path: an error or 'skipped'/'denied' result "
                          "before `continue`, and synthetic results for the remaining calls before `break`.")


@query(CheckId.C1, name="tool-error-escapes-without-result")
def error_escapes(ctx: Context) -> Iterator[Report]:
    """Where one tool call is executed, a failure is caught and re-raised without a result being recorded,
    and no caller turns it into one: the call stays unanswered and the whole turn fails."""
    for fn in ctx.roles.tool_executors:
        if _callers_catch(ctx, fn):
            continue
        for node in ir.walk_block(fn.body):
            if not isinstance(node, ir.Try):
                continue
            for h in node.handlers:
                if not h.body or not isinstance(h.body[-1], ir.Raise) or _records_results(ctx, fn, h.body):
                    continue
                yield Report(
                    site=Site(fn, h.body[-1]),
                    claim=f"When the tool fails, `{fn.name}` re-raises the error instead of recording it as this "
                          "call's result, and no caller records one either.",
                    consequence="One failing tool aborts the whole turn: the call (and its parallel siblings) get "
                                "no result, the model never sees the error, and the next request is rejected.",
                    direction="Catch the failure where the call is executed and record it as the call's result "
                              "(an error message is a result); re-raise only cancellation.")


@query(CheckId.C1, name="tool-call-unanswered-on-exit")
def unanswered_on_exit(ctx: Context) -> Iterator[Report]:
    """A function records a reply carrying tool calls into a history that outlives it, then runs the tools; a
    tool's failure (or, in async Python, a cancellation while a tool is awaited) can leave the function on a
    path that records no result: the history keeps calls without results. Read off the function's control
    flow, where a call raises only if what it reaches may (`flow.Raising`)."""
    by_fn: dict[int, list[tuple[Site, str]]] = {}
    for site, store in _call_records(ctx):
        by_fn.setdefault(site.fn.index, []).append((site, store))
    for records in by_fn.values():
        fn = records[0][0].fn
        flow = ctx.sums.raising.flow(fn)
        runs = _tool_runs(ctx, fn, flow)
        if not runs:
            continue
        answers = [i for i, n in enumerate(flow.nodes)
                   if isinstance(n, ir.Stmt) and _records_results(ctx, fn, list(header(n)))]
        for recorded, store in records:
            start = flow.node_of(recorded.node)
            if start is None:
                continue
            path = flow.escape(start, avoid=answers, exits=(RAISED, CANCELLED), through=runs,
                               raise_from=runs.__contains__)
            if path is None:
                continue
            where = flow.nodes[next(i for i in reversed(path) if i in runs)]  # the run whose failure leaves
            assert isinstance(where, ir.Stmt)
            cancelled = path[-1] == CANCELLED
            how = ("is cancelled while the tool is awaited (`CancelledError` is not an `Exception`: no handler "
                   "here takes it)" if cancelled else "raises")
            yield Report(
                site=Site(fn, where), also_at=(recorded,),
                claim=f"If running the tool here {how}, `{fn.name}` is left after the reply's tool calls were "
                      f"recorded in `{store}` (line {recorded.line}) and before any result is recorded.",
                consequence="The history keeps tool calls without results; the next request built from it is "
                            "rejected (HTTP 400: tool_use ids without tool_result / tool_calls must be followed "
                            "by tool messages).",
                direction="Record a result for every recorded call on every way out: catch the failure where the "
                          "tool runs and record it as the result, and in `finally` (or on cancellation) record a "
                          "synthetic 'interrupted' result for each call still unanswered.")
            break


def _outlives(op: HistoryOp) -> bool:
    """The store lives beyond the function: a field, a parameter (the caller's list), or an enclosing scope's
    local."""
    store, fn = op.store, op.site.fn
    if store.kind == "field":
        return True
    if store.owner != fn.key:
        return True
    return any(store.name in p.names for p in fn.params)


def _call_records(ctx: Context) -> Iterator[tuple[Site, str]]:
    """Where a reply that may carry tool calls is recorded in a history that outlives the function, with the
    store's name: the append itself, or a call handing the reply to a helper that appends what it is given to
    such a history (`self._add_message(reply)`)."""
    helpers: dict[int, tuple[ir.Function, set[str], str]] = {}
    for op in ctx.roles.history_ops:
        if op.kind != "append" or not _outlives(op):
            continue
        added = _added(op.site.node)
        if _carries_calls(ctx, op.site.fn, added):
            yield op.site, op.store.name
        params = {n for p in op.site.fn.params for n in p.names}
        given = {e.id for e in added if isinstance(e, ir.Name) and e.id in params}
        if given:
            helpers.setdefault(op.site.fn.index, (op.site.fn, set(), op.store.name))[1].update(given)
    for helper, names, store in helpers.values():
        positions = [i for i, p in enumerate(p for p in helper.params if p.name not in ("self", "this"))
                     if p.name in names]
        for caller, call in ctx.facts.callers(helper):
            handed = [call.args[i] for i in positions if i < len(call.args)]
            handed += [v for k, v in call.kw if k in names]
            if _carries_calls(ctx, caller, handed):
                yield Site(caller, call), store


def _added(node: ir.Node) -> list[ir.Expr]:
    """What an append op adds: the call's arguments, or an assignment's value."""
    if isinstance(node, ir.Call):
        return list(node.args)
    if isinstance(node, ir.Assign) and node.value is not None:
        return [node.value]
    return []


def _carries_calls(ctx: Context, fn: ir.Function, added: list[ir.Expr]) -> bool:
    """What is added is a reply that may carry tool calls: a model reply's message, or a message built with a
    tool-call field."""
    for e in added:
        for sub in ir.walk(e):
            if isinstance(sub, ir.Obj) and any(isinstance(k, str) and k in apis.TOOL_CALL_FIELDS for k, _ in sub.items):
                return True
            if isinstance(sub, ir.Call) and any(k in apis.TOOL_CALL_FIELDS for k, _ in sub.kw):
                return True
        if isinstance(e, ir.Spread):
            e = e.value
        if isinstance(e, ir.Name | ir.Attr | ir.Index) and ctx.roles.model_output(fn, e):
            return True
        if isinstance(e, ir.Obj) and _role_is(e, "assistant") and any(  # {"role": "assistant", "content":
                isinstance(v, ir.Name | ir.Attr | ir.Index) and ctx.roles.model_output(fn, v)  # response.content}
                for _, v in e.items):
            return True
    return False


def _tool_runs(ctx: Context, fn: ir.Function, flow: Flow) -> set[int]:
    """The nodes of `fn` that run a tool: a call reaching a tool function or a function with a loop that runs a
    reply's tool calls, or, inside such a loop of `fn`, a call handed the loop's tool call."""
    runners = {f.index for f in ctx.roles.tool_functions}
    runners.update(s.fn.index for s in ctx.roles.executing_tool_loops)
    handed: set[int] = set()
    for site in ctx.roles.executing_tool_loops:
        if site.fn is fn and isinstance(site.node, ir.Loop):
            names = ctx.roles.loop_elements(fn, site.node)
            for node in ir.walk_block(site.node.body):
                if isinstance(node, ir.Call) and expr_chain(node.func).rsplit(".", 1)[-1] not in LOOKUPS and \
                        _handed_more_than_name(node, names):
                    handed.add(id(node))  # not a lookup or check of the call's name: that runs nothing
    out: set[int] = set()
    for i, n in enumerate(flow.nodes):
        if not isinstance(n, ir.Stmt):
            continue
        for part in header(n):
            for sub in ir.walk(part):
                if isinstance(sub, ir.Call) and (id(sub) in handed or any(
                        isinstance(c, ir.Function) and c.index in runners and c is not fn
                        for c in ctx.facts.callees(fn, sub))):
                    out.add(i)
    return out


def _handed_more_than_name(call: ir.Call, names: set[str]) -> bool:
    """Whether `call` is handed a tool call (`execute(call)`, `tools[call.name](call.arguments)`) beyond its name
    alone (`needs_approval(call.name)`)."""
    for part in (call.func, *call.args, *(v for _, v in call.kw)):
        inner: set[int] = set()
        for n in ir.walk(part):  # outermost chains first: `call.function.name`, not its `call.function`
            if id(n) in inner or not isinstance(n, ir.Attr | ir.Name):
                continue
            inner.update(id(sub) for sub in ir.walk(n))
            chain = expr_chain(n)
            if chain.split(".")[0] in names and (part is call.func or chain.rsplit(".", 1)[-1] not in TOOL_NAME_FIELDS):
                return True
    return False


def _records_results(ctx: Context, fn: ir.Function, block: ir.Block) -> bool:
    """Whether a block records a tool result: appends or yields a message carrying a tool-result field or the
    `tool` role, or calls a project function that does."""
    for node in ir.walk_block(block):
        if isinstance(node, ir.Obj) and (any(isinstance(k, str) and k in apis.TOOL_RESULT_FIELDS for k, _ in node.items)
                                         or _role_is(node, "tool", "function")):
            return True
        if isinstance(node, ir.Call):
            if any(k in apis.TOOL_RESULT_FIELDS for k, _ in node.kw):
                return True
            if (isinstance(node.func, ir.Attr) and node.func.name in ("append", "push", "add", "extend", "put")
                    and any(isinstance(a, ir.Name | ir.Call | ir.Obj) for a in node.args)):
                return True
            for c in ctx.facts.callees(fn, node):
                if isinstance(c, ir.Function) and c is not fn and _creates_result(c):
                    return True
        if isinstance(node, ir.Op) and node.op in ("yield", "yield from"):
            return True
    return False


def _creates_result(fn: ir.Function) -> bool:
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Obj) and (any(isinstance(k, str) and k in apis.TOOL_RESULT_FIELDS for k, _ in node.items)
                                         or _role_is(node, "tool", "function")):
            return True
        if isinstance(node, ir.Call) and any(k in apis.TOOL_RESULT_FIELDS for k, _ in node.kw):
            return True
    return False


def _role_is(obj: ir.Obj, *roles: str) -> bool:
    role = obj.get("role")
    return isinstance(role, ir.Lit) and role.value in roles


_PAUSE_KEY = re.compile(r"waiting|interrupt|paused|requires_?action|awaiting", re.IGNORECASE)


def _pauses(jump: ir.Stmt) -> bool:
    """A `return` that hands back a paused run (`{ isWaitingForHumanInput: true }`, `{"interrupted": True}`): the
    calls left are answered when the run resumes, the human-in-the-loop shape, not dropped."""
    value = jump.value if isinstance(jump, ir.Return) else None
    return isinstance(value, ir.Obj) and any(
        isinstance(k, str) and _PAUSE_KEY.search(k) and not (isinstance(v, ir.Lit) and v.value is False)
        for k, v in value.items)


def _leaving_branches(body: ir.Block) -> Iterator[tuple[ir.Node, ir.Block, ir.Stmt]]:
    """(the `if`/`except` it ends, the block leading to it, the statement) for each `continue`/`break`/`return`
    that ends an `if` branch or an `except` handler directly inside the loop body (not in a nested loop)."""
    for stmt in body:
        yield from _branches(stmt)


def _branches(stmt: ir.Stmt) -> Iterator[tuple[ir.Node, ir.Block, ir.Stmt]]:
    if isinstance(stmt, ir.If):
        for block in (stmt.body, stmt.orelse):
            if block and isinstance(block[-1], ir.Jump | ir.Return):
                yield stmt, block, block[-1]
            for inner in block:
                yield from _branches(inner)
    elif isinstance(stmt, ir.Try):
        for h in stmt.handlers:
            if h.body and isinstance(h.body[-1], ir.Jump | ir.Return):
                yield h, h.body, h.body[-1]
        for inner in (*stmt.body, *stmt.orelse):
            yield from _branches(inner)
    elif isinstance(stmt, ir.With):
        for inner in stmt.body:
            yield from _branches(inner)


def _callers_catch(ctx: Context, fn: ir.Function) -> bool:
    """Whether every caller of `fn` calls it inside a `try` whose handler does not re-raise."""
    callers = ctx.facts.callers(fn)
    if not callers:
        return False
    for caller, call in callers:
        if not any(_guarded(node, call) for node in ir.walk_block(caller.body) if isinstance(node, ir.Try)):
            return False
    return True


def _guarded(tr: ir.Try, call: ir.Call) -> bool:
    if not any(n is call for n in ir.walk_block(tr.body)):
        return False
    return any(not (h.body and isinstance(h.body[-1], ir.Raise)) for h in tr.handlers)
