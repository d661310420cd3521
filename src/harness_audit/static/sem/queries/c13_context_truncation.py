"""C13 · Context truncation boundaries: history cut by position with no look at tool-call pairing."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.facts import expr_chain
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.roles import Site

_PAIRING_WORDS = (*apis.TOOL_CALL_FIELDS, *apis.TOOL_RESULT_FIELDS, "tool_result", "tool-result", "tool",
                  "function", "FunctionCallContent", "FunctionResultContent", "ToolMessage", "ToolCall")


@query(CheckId.C13, name="history-cut-without-pairing")
def cut_without_pairing(ctx: Context) -> Iterator[Report]:
    """Messages are dropped from the conversation by position (a slice, `pop(0)`, `splice`, `shift`), and the
    function choosing the cut never looks at tool calls or tool results, so the cut can fall between a call
    and its result."""
    for fn, node, subject in _cuts(ctx):
        if _cut_consults_pairing(ctx, fn, node, subject):
            continue
        yield Report(
            site=Site(fn, node),
            claim=f"`{subject}` is cut by position here, and nothing in `{fn.name}` looks at tool calls or tool "
                  "results when choosing the cut.",
            consequence="When the cut falls between an assistant message with tool calls and its tool results, "
                        "the next request carries an orphaned result (or an unanswered call) and the provider "
                        "rejects it with HTTP 400.",
            direction="Move the cut to a message boundary where no tool call is left without its result (step "
                      "back over tool results, or drop a call together with its results).")


def _cuts(ctx: Context) -> Iterator[tuple[ir.Function, ir.Node, str]]:
    """History cuts: operations on history stores that drop messages, and slices of a function's history
    parameter that the function returns or stores."""
    for op in ctx.roles.history_ops:
        if op.kind == "cut" and not _empties(op.site.node):
            yield op.site.fn, op.site.node, op.store.name
    stores = ctx.roles.history_stores
    for fn in ctx.facts.functions:
        # a slice of a history store that becomes what is sent (`window = history.slice(-20)`)
        for node in ir.walk_block(fn.body):
            if isinstance(node, ir.Assign) and node.value is not None and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ir.Name) and ctx.roles.store_of(fn, node.targets[0]) not in stores:
                sliced = _slice_of(ctx, fn, node.value, stores)
                if sliced and _sent(ctx, fn, node.targets[0].id):
                    yield fn, node, sliced
        params = ctx.roles.history_params(fn)
        if not params:
            continue
        kept = _kept_values(fn)
        for node in ir.walk_block(fn.body):
            if not any(node is k for k in kept):
                continue
            if isinstance(node, ir.Index) and isinstance(node.key, ir.Slice) and _drops_head(node.key) and \
                    expr_chain(node.obj) in params:
                yield fn, node, expr_chain(node.obj)
            elif isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and node.func.name in ("slice", "splice") \
                    and expr_chain(node.func.obj) in params and node.args and not _zero(node.args[0]):
                yield fn, node, expr_chain(node.func.obj)


def _empties(node: ir.Node) -> bool:
    """`history.clear()`: a cut that keeps nothing cannot leave half of a pair behind."""
    return any(isinstance(n, ir.Call) and isinstance(n.func, ir.Attr) and n.func.name == "clear" and not n.args
               for n in ir.walk(node))


def _kept_values(fn: ir.Function) -> list[ir.Expr]:
    """Expressions whose value the function keeps: what it returns, and what it assigns to a local it returns
    (not what it only iterates over or peeks at)."""
    returned = {n.id for r in ir.walk_block(fn.body) if isinstance(r, ir.Return) and r.value is not None
                for n in _parts(r.value) if isinstance(n, ir.Name)}
    out: list[ir.Expr] = [p for r in ir.walk_block(fn.body) if isinstance(r, ir.Return) and r.value is not None
                          for p in _parts(r.value)]
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Assign) and node.value is not None and any(
                isinstance(t, ir.Name) and t.id in returned or isinstance(t, ir.Attr) for t in node.targets):
            out.extend(_parts(node.value))
    return out


def _parts(e: ir.Expr) -> list[ir.Expr]:
    """The pieces a list value is made of: itself, the items of a literal, the operands of `+`, spreads, a tuple's
    members (not what a call or a generator computes from it)."""
    if isinstance(e, ir.Seq):
        return [p for item in e.items for p in _parts(item)]
    if isinstance(e, ir.Op) and e.op == "+":
        return [p for o in e.operands for p in _parts(o)]
    if isinstance(e, ir.Spread):
        return _parts(e.value)
    return [e]


def _slice_of(ctx: Context, fn: ir.Function, e: ir.Expr, stores: set) -> str:  # noqa: ANN001
    """The history store `e` takes a positional part of (`h[-20:]`, `h.slice(-20)`), or ''."""
    if isinstance(e, ir.Index) and isinstance(e.key, ir.Slice) and _drops_head(e.key) and \
            ctx.roles.store_of(fn, e.obj) in stores:
        return expr_chain(e.obj)
    if isinstance(e, ir.Call) and isinstance(e.func, ir.Attr) and e.func.name == "slice" and e.args and \
            not _zero(e.args[0]) and ctx.roles.store_of(fn, e.func.obj) in stores:
        return expr_chain(e.func.obj)
    return ""


def _sent(ctx: Context, fn: ir.Function, name: str) -> bool:
    """Whether local `name` is handed to a model request in `fn`."""
    for call, _ in ctx.facts.calls(fn):
        if ctx.roles.reaches_model(fn, call) and any(
                isinstance(n, ir.Name) and n.id == name for a in (*call.args, *(v for _, v in call.kw))
                for n in ir.walk(a)):
            return True
    return False


def _drops_head(s: ir.Slice) -> bool:
    """`[k:]`, `[-n:]`: a slice that starts past the first message."""
    return s.lo is not None and not _zero(s.lo)


def _zero(e: ir.Expr) -> bool:
    return isinstance(e, ir.Lit) and e.value == 0


def _cut_consults_pairing(ctx: Context, fn: ir.Function, cut: ir.Node, store: str) -> bool:
    """Whether choosing this cut looks at tool calls or results: the cut's bounds, what they are computed from
    (locals, helpers), and the tests of the loops and branches around it (the history itself is not followed:
    what it holds says nothing about how the cut is chosen)."""
    roots: list[tuple[ir.Function, ir.Node]] = [(fn, b) for b in _bounds(cut)]
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Loop | ir.If) and any(n is cut for n in ir.walk_block(node.body)):
            if node.test is not None:
                roots.append((fn, node.test))
            if isinstance(node, ir.Loop):
                # a repair step on the same history beside the cut (drop the results left without their call)
                roots.extend((fn, inner.test) for inner in ir.walk_block(node.body)
                             if isinstance(inner, ir.Loop | ir.If) and inner.test is not None
                             and _mentions_name(inner.test, store))
    # a loop that then trims what the cut produced (`while (w[0].role === "tool") w = w.slice(1)`)
    if isinstance(cut, ir.Assign):
        names = {t.id for t in cut.targets if isinstance(t, ir.Name)}
        for loop in ir.walk_block(fn.body):
            if isinstance(loop, ir.Loop) and loop.test is not None and any(
                    isinstance(a, ir.Assign) and any(isinstance(t, ir.Name) and t.id in names for t in a.targets)
                    for a in ir.walk_block(loop.body)):
                roots.append((fn, loop.test))
    # the cut is moved to a message boundary in the same function (`while (w[0].role !== "user")`,
    # `findIndex((m) => m.role === "user")`)
    if _aligns_to_user_turn(ctx, fn) or any(_turn_start(ctx, fn, b) for b in _bounds(cut)):
        return True
    seen: set[int] = set()
    todo = [(f, n, False) for f, n in roots]
    while todo and len(seen) < 60:
        cur_fn, cur, measure = todo.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        sizes = _compared_sizes(cur)
        for node in ir.walk(cur):
            if _pairing_word(node):
                return True
            # a size compared with a limit (`tokens >= budget`) says how much to cut, not where a pair ends:
            # what it is computed from is followed through locals, never into the helpers that measure it
            quantity = measure or id(node) in sizes
            if isinstance(node, ir.Name) and node.id != store:
                for b in ctx.facts.bindings(cur_fn).get(node.id, []):
                    if b.expr is not None:
                        todo.append((cur_fn, b.expr, quantity))
                # a loop that moves this index decides the cut too: its test (`while m[i]["role"] == "tool"`)
                for loop in ir.walk_block(cur_fn.body):
                    if isinstance(loop, ir.Loop) and loop.test is not None and any(
                            isinstance(a, ir.Assign) and any(isinstance(t, ir.Name) and t.id == node.id
                                                             for t in a.targets)
                            for a in ir.walk_block(loop.body)):
                        todo.append((cur_fn, loop.test, False))
            elif isinstance(node, ir.Call) and not quantity:
                for c in ctx.facts.callees(cur_fn, node):
                    if isinstance(c, ir.Function) and c.kind != "module":
                        todo.extend((c, s, False) for s in c.body)
            elif isinstance(node, ir.FuncExpr) and not quantity:
                todo.extend((node.fn, s, False) for s in node.fn.body)
    return False


_ORDERING = frozenset({"<", "<=", ">", ">="})


def _compared_sizes(e: ir.Node) -> set[int]:
    """Ids of the nodes inside the operands of an ordering comparison in `e` (`count >= limit`)."""
    out: set[int] = set()
    for node in ir.walk(e):
        if isinstance(node, ir.Op) and node.op in _ORDERING:
            out.update(id(n) for o in node.operands for n in ir.walk(o))
    return out


def _mentions_name(e: ir.Expr, name: str) -> bool:
    return any(isinstance(n, ir.Name | ir.Attr) and expr_chain(n).split(".")[-1] == name.split(".")[-1]
               for n in ir.walk(e))


def _aligns_to_user_turn(ctx: Context, fn: ir.Function) -> bool:
    """`m.role !== "user"`, `msg["role"] == "user"` in the function or its callbacks: a cut moved to the start
    of a user turn leaves no tool result without its call."""
    for f in (fn, *ctx.facts.nested(fn)):
        for node in ir.walk_block(f.body):
            if isinstance(node, ir.Op) and node.op in ("==", "!=", "===", "!==", "is", "is not") and any(
                    isinstance(o, ir.Lit) and o.value == "user" for o in node.operands) and any(
                    "role" in expr_chain(o) or (isinstance(o, ir.Index) and isinstance(o.key, ir.Lit)
                                                and o.key.value == "role")
                    for o in node.operands):
                return True
    return False


_TURN_ROLES = frozenset({"user", "assistant"})


def _turn_start(ctx: Context, fn: ir.Function, bound: ir.Node) -> bool:
    """The kept part starts exactly at a message found by testing its role for a turn that opens a pair
    (`history[i:]` where `i` is the index of an assistant or user message): every tool result kept after it is
    kept with its call. `i + 1`, the message right after an assistant turn, is where its tool results are."""
    if not isinstance(bound, ir.Name):
        return False
    found = [b.expr for b in ctx.facts.bindings(fn).get(bound.id, []) if b.expr is not None
             and not (isinstance(b.expr, ir.Lit) and b.expr.value is None)]
    return bool(found) and all(_role_test(ctx, fn, e) for e in found)


def _role_test(ctx: Context, fn: ir.Function, e: ir.Expr) -> bool:
    """`e` picks an index by testing a message's role against turn-opening roles only (in a callback too:
    `findLastIndex((m) => m.role === "assistant")`)."""
    nodes = list(ir.walk(e))
    for f in nodes:
        if isinstance(f, ir.FuncExpr):
            nodes.extend(ir.walk_block(f.fn.body))
    for node in nodes:
        if isinstance(node, ir.Op) and node.op in ("==", "===", "in") and len(node.operands) == 2:
            subject, role = node.operands
            if _is_role_field(subject) and _turn_roles(ctx, fn, role):
                return True
    return False


def _is_role_field(e: ir.Expr) -> bool:
    return expr_chain(e).split(".")[-1] == "role" or (
        isinstance(e, ir.Index) and isinstance(e.key, ir.Lit) and e.key.value == "role")


def _turn_roles(ctx: Context, fn: ir.Function, e: ir.Expr, depth: int = 0) -> bool:
    """`"assistant"`, `Role.USER`, or a set or local made only of such."""
    if isinstance(e, ir.Lit):
        return isinstance(e.value, str) and e.value.lower() in _TURN_ROLES
    if isinstance(e, ir.Attr):
        return e.name.lower() in _TURN_ROLES
    if isinstance(e, ir.Seq):
        return bool(e.items) and all(_turn_roles(ctx, fn, i, depth) for i in e.items)
    if isinstance(e, ir.Name) and depth < 3:
        exprs = [b.expr for b in ctx.facts.bindings(fn).get(e.id, []) if b.expr is not None]
        return bool(exprs) and all(_turn_roles(ctx, fn, x, depth + 1) for x in exprs)
    return False


def _bounds(cut: ir.Node) -> list[ir.Node]:
    """What decides where a cut falls: a slice's bounds, the arguments of `pop`/`splice`/`slice`."""
    out: list[ir.Node] = []
    for node in ir.walk(cut):
        if isinstance(node, ir.Slice):
            out.extend(p for p in (node.lo, node.hi, node.step) if p is not None)
        elif isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and \
                node.func.name in ("pop", "splice", "slice", "shift", "remove", "drop"):
            out.extend(node.args)
    return out


def _pairing_word(node: ir.Node) -> bool:
    if isinstance(node, ir.Attr):
        return node.name in _PAIRING_WORDS
    if isinstance(node, ir.Lit):
        return isinstance(node.value, str) and node.value in _PAIRING_WORDS
    if isinstance(node, ir.Name):
        return node.id in _PAIRING_WORDS
    return False
