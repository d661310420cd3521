"""C13 · Context truncation boundaries: history cut by position with no look at tool-call pairing."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.facts import expr_chain
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.roles import Site, keeps_all, linear_index, list_pieces

_PAIRING_WORDS = (*apis.TOOL_CALL_FIELDS, *apis.TOOL_RESULT_FIELDS, "tool_result", "tool-result", "tool",
                  "function", "FunctionCallContent", "FunctionResultContent", "ToolMessage", "ToolCall")


@query(CheckId.C13, name="history-cut-without-pairing")
def cut_without_pairing(ctx: Context) -> Iterator[Report]:
    """Messages are dropped from the conversation by position (a slice, `pop(0)`, `splice`, `shift`), and the
    function choosing the cut never looks at tool calls or tool results, so the cut can fall between a call
    and its result. A cut whose bound is a parameter (`_trim(num)`) is chosen by its callers: each caller that
    computes the bound without looking at pairing is reported where it computes it, the cut in `also_at`."""
    for fn, node, subject, sends in _cuts(ctx):
        bounds = _bounds(ctx, fn, node)
        if _cut_consults_pairing(ctx, fn, node, subject, bounds) or _sent_without_tools(ctx, sends):
            continue
        chosen = _chosen_by_callers(ctx, fn, _bounds(ctx, fn, node, _POSITIONAL))
        if chosen:
            for caller, call, arg in chosen:
                if _cut_consults_pairing(ctx, caller, call, subject, [arg]):
                    continue
                where = _computed_at(ctx, caller, call, arg)
                yield Report(
                    site=Site(caller, where),
                    claim=f"`{caller.name}` chooses where `{subject}` is cut (`{fn.name}` drops the messages before "
                          "the index it is handed), and nothing in choosing that index looks at tool calls or tool "
                          "results.",
                    consequence=_CONSEQUENCE, direction=_DIRECTION,
                    also_at=(*((Site(caller, call),) if where is not call else ()), Site(fn, node)))
            continue
        yield Report(
            site=Site(fn, node),
            claim=f"`{subject}` is cut by position here, and nothing in `{fn.name}` looks at tool calls or tool "
                  "results when choosing the cut.",
            consequence=_CONSEQUENCE, direction=_DIRECTION)


_CONSEQUENCE = ("When the cut falls between an assistant message with tool calls and its tool results, the next "
                "request carries an orphaned result (or an unanswered call) and the provider rejects it with HTTP "
                "400.")
_DIRECTION = ("Move the cut to a message boundary where no tool call is left without its result (step back over "
              "tool results, or drop a call together with its results).")


def _chosen_by_callers(ctx: Context, fn: ir.Function, bounds: list[ir.Node]) -> list[tuple[ir.Function, ir.Call,
                                                                                             ir.Expr]]:
    """(caller, call, argument) for each call that hands `fn` the bound of its cut, when that bound is a parameter
    `fn` uses as it is (`h = [h[0]] + h[num:]`)."""
    binds = ctx.facts.bindings(fn)
    out: list[tuple[ir.Function, ir.Call, ir.Expr]] = []
    for b in bounds:
        if not isinstance(b, ir.Name) or [x.kind for x in binds.get(b.id, [])] != ["param"]:
            continue
        param = binds[b.id][0].param
        if param is None or param.name != b.id:
            continue
        calls = ctx.facts.callers(fn)
        for caller, arg in ctx.facts.arguments_for(fn, param):
            call = next((c for f, c in calls if f is caller and any(a is arg for a in (*c.args, *(v for _, v in c.kw)))),
                        None)
            if call is not None:
                out.append((caller, call, arg))
    return out


def _computed_at(ctx: Context, fn: ir.Function, call: ir.Call, arg: ir.Expr) -> ir.Node:
    """Where a caller last sets the index it hands over before the call (the call itself when it is not a local)."""
    if not isinstance(arg, ir.Name):
        return call
    last: ir.Node = call
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Assign) and node.line < call.line and node.line >= (last.line if last is not call
                                                                                   else 0) and \
                any(isinstance(t, ir.Name) and t.id == arg.id for t in node.targets):
            last = node
    return last


def _cuts(ctx: Context) -> Iterator[tuple[ir.Function, ir.Node, str, list[tuple[ir.Function, ir.Call]]]]:
    """History cuts: operations on history stores that drop messages, and slices of a function's history
    parameter that the function returns or stores; each with where what is cut is handed to a model request
    (known for a store and a sent slice of one, not for a parameter)."""
    for op in ctx.roles.history_ops:
        if op.kind == "cut" and not _empties(op.site.node):
            reads = [(r.site.fn, r.site.node) for r in ctx.roles.history_ops if r.kind == "read" and r.store == op.store]
            yield op.site.fn, op.site.node, op.store.name, [(f, c) for f, c in reads if isinstance(c, ir.Call)]
    stores = ctx.roles.history_stores
    for fn in ctx.facts.functions:
        # a slice of a history store that becomes what is sent (`window = history.slice(-20)`)
        for node in ir.walk_block(fn.body):
            if isinstance(node, ir.Assign) and node.value is not None and len(node.targets) == 1 and \
                    isinstance(node.targets[0], ir.Name) and ctx.roles.store_of(fn, node.targets[0]) not in stores:
                sliced = _slice_of(ctx, fn, node.value, stores)
                sends = _sends(ctx, fn, node.targets[0].id) if sliced else []
                if sends:
                    yield fn, node, sliced, sends
        params = ctx.roles.history_params(fn)
        if not params:
            continue
        kept = _kept_values(ctx, fn, params)
        for node in ir.walk_block(fn.body):
            if not any(node is k for k in kept):
                continue
            if isinstance(node, ir.Index) and isinstance(node.key, ir.Slice) and _drops_head(node.key) and \
                    expr_chain(node.obj) in params:
                yield fn, node, expr_chain(node.obj), []
            elif isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and node.func.name in ("slice", "splice") \
                    and expr_chain(node.func.obj) in params and node.args and not _zero(node.args[0]):
                yield fn, node, expr_chain(node.func.obj), []


def _empties(node: ir.Node) -> bool:
    """`history.clear()`: a cut that keeps nothing cannot leave half of a pair behind."""
    return any(isinstance(n, ir.Call) and isinstance(n.func, ir.Attr) and n.func.name == "clear" and not n.args
               for n in ir.walk(node))


def _kept_values(ctx: Context, fn: ir.Function, params: set[str]) -> list[ir.Expr]:
    """Expressions whose value the function keeps: what it returns, and what it assigns to a local it returns
    (not what it only iterates over or peeks at), leaving out lists that keep every message of a history
    parameter while swapping or inserting some (`[...h.slice(0, i), merged, ...h.slice(i + 1)]`)."""
    wholes = [r.value for r in ir.walk_block(fn.body) if isinstance(r, ir.Return) and r.value is not None]
    returned = {n.id for w in wholes for n in list_pieces(w) if isinstance(n, ir.Name)}
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Assign) and node.value is not None and any(
                isinstance(t, ir.Name) and t.id in returned or isinstance(t, ir.Attr) for t in node.targets):
            wholes.append(node.value)
    out: list[ir.Expr] = []
    binds = ctx.facts.bindings(fn)
    for w in wholes:
        if any(keeps_all(w, h) for h in params):
            continue
        for p in list_pieces(w):
            out.append(p)
            if isinstance(p, ir.Name):  # `second = h.slice(k); return [...first, ...second]`
                got = [b for b in binds.get(p.id, []) if b.kind != "ann"]
                if len(got) == 1 and got[0].kind == "value" and got[0].expr is not None:
                    out.extend(list_pieces(got[0].expr))
    return out


def _slice_of(ctx: Context, fn: ir.Function, e: ir.Expr, stores: set) -> str:  # noqa: ANN001
    """The history store `e` takes a positional part of (`h[-20:]`, `h.slice(-20)`), or ''."""
    if isinstance(e, ir.Index) and isinstance(e.key, ir.Slice) and _drops_head(e.key) and \
            ctx.roles.store_of(fn, e.obj) in stores:
        return expr_chain(e.obj)
    if isinstance(e, ir.Call) and isinstance(e.func, ir.Attr) and e.func.name == "slice" and e.args and \
            not _zero(e.args[0]) and ctx.roles.store_of(fn, e.func.obj) in stores:
        return expr_chain(e.func.obj)
    return ""


def _sends(ctx: Context, fn: ir.Function, name: str) -> list[tuple[ir.Function, ir.Call]]:
    """The calls in `fn` that hand local `name` to a model request."""
    return [(fn, call) for call, _ in ctx.facts.calls(fn) if ctx.roles.reaches_model(fn, call) and any(
        isinstance(n, ir.Name) and n.id == name for a in (*call.args, *(v for _, v in call.kw)) for n in ir.walk(a))]


def _sent_without_tools(ctx: Context, sends: list[tuple[ir.Function, ir.Call]]) -> bool:
    """Every model request the history is sent to (those found within four calls of where it is handed on)
    offers the model no tools: its replies carry no tool calls, so no cut can separate a call from its result.
    False when no request is found, or one may offer tools (an options object built elsewhere, `**kwargs`)."""
    found = False
    for fn, call in sends:
        for request in _requests_reached(ctx, fn, call):
            found = True
            if _offers_tools(request):
                return False
    return found


def _requests_reached(ctx: Context, fn: ir.Function, call: ir.Call, depth: int = 4) -> Iterator[ir.Call]:
    """The calls that send a model request themselves, reached from `call` at most `depth` calls down."""

    def requests(cur: ir.Function, node: ir.Call) -> bool:
        return any(e.kind == apis.MODEL for e in ctx.sums.direct(cur, node))

    for cur, node in ctx.sums.reached_calls(fn, [call], depth, stop=requests):
        if requests(cur, node):
            yield node


_TOOL_OPTIONS = frozenset({"tools", "functions", "tool_choice", "toolChoice", "function_call", "toolConfig",
                           "tool_config", "functionDeclarations", "function_declarations"})
"""Where a request offers the model tools (OpenAI, Anthropic, Gemini, the AI SDK)."""


def _offers_tools(request: ir.Call) -> bool:
    """Whether a model request may offer tools: it names a tool option, or passes options it does not spell out
    (`**params`, an object built elsewhere, a body serialised from one)."""
    parts: list[tuple[str | None, ir.Expr]] = [(None, a) for a in request.args] + list(request.kw)
    return any(_may_hold_tools(key, value) for key, value in parts)


def _may_hold_tools(key: str | None, value: ir.Expr) -> bool:
    if key == "**" or key in _TOOL_OPTIONS or isinstance(value, ir.Spread):
        return True
    if isinstance(value, ir.Obj):
        return any(not isinstance(k, str) or _may_hold_tools(k, v) for k, v in value.items)
    # an argument given whole (`create(params)`), or a body (`json=payload`, `body: JSON.stringify(req)`), may
    # carry tools; a named option (`model=`, `messages=`, `temperature=`) holds only itself
    return key is None or key in ("json", "data", "body", "payload", "params", "options", "config", "request")


def _drops_head(s: ir.Slice) -> bool:
    """`[k:]`, `[-n:]`: a slice that starts past the first message."""
    return s.lo is not None and not _zero(s.lo)


def _zero(e: ir.Expr) -> bool:
    return isinstance(e, ir.Lit) and e.value == 0


def _cut_consults_pairing(ctx: Context, fn: ir.Function, cut: ir.Node, store: str, bounds: list[ir.Node]) -> bool:
    """Whether choosing this cut looks at tool calls or results: the cut's bounds, what they are computed from
    (locals, helpers), and the tests of the loops and branches around it (the history itself is not followed:
    what it holds says nothing about how the cut is chosen); or whether the bound is made to land where a turn
    starts."""
    if _starts_a_turn(ctx, fn, bounds, cut.line):
        return True
    roots: list[tuple[ir.Function, ir.Node]] = [(fn, b) for b in bounds]
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
    # a repair step after the cut on what it produced (`if (kept[0].role === "user") { … drop its tool_result
    # blocks … }`): the tests of the branches and loops that read it, and of those nested in them
    produced = _produced_by(fn, cut)
    if produced:
        for node in ir.walk_block(fn.body):
            if isinstance(node, ir.Loop | ir.If) and node.line > cut.line and node.test is not None and any(
                    isinstance(n, ir.Name) and n.id in produced for n in ir.walk(node.test)):
                roots.append((fn, node.test))
                roots.extend((fn, inner.test) for inner in ir.walk_block(node.body)
                             if isinstance(inner, ir.Loop | ir.If) and inner.test is not None)
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


def _produced_by(fn: ir.Function, cut: ir.Node) -> set[str]:
    """The locals holding what a cut produced: the assignment's targets (the one whose value holds the cut when
    the cut is an expression), and the locals built from them after it."""
    out: set[str] = set()
    assigns = [n for n in ir.walk_block(fn.body) if isinstance(n, ir.Assign) and n.value is not None]
    for a in assigns:
        if a is cut or any(n is cut for n in ir.walk(a.value)):  # type: ignore[union-attr]
            out.update(t.id for t in a.targets if isinstance(t, ir.Name))
    if not out:
        return out
    for a in assigns:
        if a.line > cut.line and any(isinstance(n, ir.Name) and n.id in out for n in ir.walk(a.value)):  # type: ignore[arg-type]
            out.update(t.id for t in a.targets if isinstance(t, ir.Name))
    return out


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


_TURN_ROLES = ("user", "assistant")
"""Roles that open a turn: a cut that starts at one leaves no tool result before its call."""


def _starts_a_turn(ctx: Context, fn: ir.Function, bounds: list[ir.Node], before: int) -> bool:
    """The cut starts at an index the code has just made land on a user or assistant message: a loop that steps
    until it reaches one (`while m[i].role != "user": i += 1`), an index found by a test for one
    (`findIndex((m) => m.role === "user")`, `next(i for i … if m[i].role == "user")`, `if m.role == "user":
    start = i`). Whatever sets the index after that (`i += 1`, `i = j`) undoes it, and so does a cut one past it
    (`m[i + 1:]`)."""
    names = [b.id for b in bounds if isinstance(b, ir.Name)]
    names.extend(_spliced_to(ctx, fn, bounds))
    for name in names:
        settles = [n.end for n in ir.walk_block(fn.body) if n.line < before and _lands_on_turn(ctx, fn, n, name)]
        if not settles:
            continue
        last = max(settles)
        if not any(n.line > last and n.line < before for n in _setters(fn.body, name)):
            return True
    return False


def _spliced_to(ctx: Context, fn: ir.Function, bounds: list[ir.Node]) -> list[str]:
    """The index the kept part starts at after `splice(start, count)` (`splice(1, cut - 1)` keeps from `cut`),
    when it is a local: the count is read through the local it was computed in."""
    if len(bounds) < 2 or not isinstance(bounds[0], ir.Expr) or not isinstance(bounds[1], ir.Expr):
        return []
    count: ir.Expr = bounds[1]
    if isinstance(count, ir.Name):
        binds = [b for b in ctx.facts.bindings(fn).get(count.id, []) if b.kind != "ann"]
        if len(binds) == 1 and binds[0].kind == "value" and binds[0].expr is not None:
            count = binds[0].expr
    start, n = linear_index(bounds[0]), linear_index(count)
    if start is None or n is None or start[0] or not n[0] or start[1] + n[1] != 0:
        return []
    return [n[0]] if "." not in n[0] else []


def _setters(block: ir.Block, name: str) -> Iterator[ir.Node]:
    """What sets local `name` in a block: assignments (augmented, nested in an expression) and loop targets."""
    for node in ir.walk_block(block):
        if (isinstance(node, ir.Assign) and any(isinstance(t, ir.Name) and t.id == name for t in node.targets)) or \
                (isinstance(node, ir.Op) and node.op in (":=", "=", "+=", "-=", "++", "--") and node.operands and
                 isinstance(node.operands[0], ir.Name) and node.operands[0].id == name) or \
                (isinstance(node, ir.Loop) and node.target is not None and
                 any(isinstance(n, ir.Name) and n.id == name for n in ir.walk(node.target))):
            yield node


def _lands_on_turn(ctx: Context, fn: ir.Function, node: ir.Node, name: str) -> bool:
    """Whether `node` leaves index `name` on a message that opens a turn."""
    if isinstance(node, ir.Loop) and node.kind in ("while", "do") and node.test is not None:
        return any(_role_test(ctx, fn, c, {name}, positive=False) for c in _conjuncts(node.test)) and \
            any(True for _ in _setters(node.body, name))
    if isinstance(node, ir.Loop) and node.kind == "for" and node.target is not None and \
            isinstance(node.target, ir.Name) and node.target.id == name:
        # `for start in [i for i, m in enumerate(h) if m.role == "user"]` (through a local too)
        it = node.iter
        if isinstance(it, ir.Name):
            binds = [b for b in ctx.facts.bindings(fn).get(it.id, []) if b.kind != "ann"]
            it = binds[0].expr if len(binds) == 1 and binds[0].kind == "value" else None
        if it is not None and isinstance(it, ir.Comp) and _found_by_turn_test(ctx, fn, it):
            return True
        # `for i in range(...): if m[i].role == "user": break`
        return any(isinstance(s, ir.If) and s.body and isinstance(s.body[-1], ir.Jump) and s.body[-1].kind == "break"
                   and _role_test(ctx, fn, s.test, {name}, positive=True) for s in ir.walk_block(node.body))
    if isinstance(node, ir.Assign) and node.value is not None and node.op == "=" and any(
            isinstance(t, ir.Name) and t.id == name for t in node.targets):
        if _found_by_turn_test(ctx, fn, node.value):
            return True
        # `if m[i].role == "user": start = i` (or `for i, m in enumerate(h): if m.role == "user": start = i`)
        if isinstance(node.value, ir.Name):
            for test, positive in _tests_around(fn, node):
                if _role_test(ctx, fn, test, _same_index(fn, node.value.id), positive=positive):
                    return True
    return False


def _tests_around(fn: ir.Function, node: ir.Node) -> Iterator[tuple[ir.Expr, bool]]:
    """The tests of the branches `node` sits in: (test, True) in the body, (test, False) in the else branch."""
    for br in ir.walk_block(fn.body):
        if isinstance(br, ir.If):
            if any(n is node for n in ir.walk_block(br.body)):
                yield br.test, True
            elif any(n is node for n in ir.walk_block(br.orelse)):
                yield br.test, False


def _same_index(fn: ir.Function, name: str) -> set[str]:
    """`name` and the element bound beside it by `enumerate` (`for i, m in enumerate(h)`: `m` is `h[i]`)."""
    out = {name}
    for node in ir.walk_block(fn.body):
        pairs = [(node.target, node.iter)] if isinstance(node, ir.Loop) and node.target is not None else \
            list(node.targets) if isinstance(node, ir.Comp) else []
        for target, it in pairs:
            if isinstance(target, ir.Seq) and len(target.items) == 2 and isinstance(it, ir.Call) and \
                    expr_chain(it.func) == "enumerate" and isinstance(target.items[0], ir.Name) and \
                    target.items[0].id == name and isinstance(target.items[1], ir.Name):
                out.add("=" + target.items[1].id)
    return out


def _found_by_turn_test(ctx: Context, fn: ir.Function, value: ir.Expr) -> bool:
    """`h.findIndex((m) => m.role === "user")`, `next(i for i, m in enumerate(h) if m.role == "user")`,
    `next(i for i in range(n) if h[i].role in TURN_ROLES)`: the index of a message that opens a turn."""
    if isinstance(value, ir.Call) and isinstance(value.func, ir.Attr) and value.func.name in (
            "findIndex", "findLastIndex") and value.args and isinstance(value.args[0], ir.FuncExpr):
        cb = value.args[0].fn
        names = {"=" + n for p in cb.params for n in p.names}
        return any(isinstance(r, ir.Return) and r.value is not None and
                   any(_role_test(ctx, cb, c, names, positive=True) for c in _conjuncts(r.value))
                   for r in ir.walk_block(cb.body))
    comp = value.args[0] if isinstance(value, ir.Call) and expr_chain(value.func) == "next" and value.args else value
    # `next(i for …)`, or `[i for i, m in enumerate(h) if m.role == "user"]`
    if isinstance(comp, ir.Comp) and isinstance(comp.elt, ir.Name):
        idx = {comp.elt.id}
        for target, it in comp.targets:
            if isinstance(target, ir.Seq) and len(target.items) == 2 and isinstance(it, ir.Call) and \
                    expr_chain(it.func) == "enumerate" and isinstance(target.items[1], ir.Name) and \
                    isinstance(target.items[0], ir.Name) and target.items[0].id == comp.elt.id:
                idx.add("=" + target.items[1].id)
        return any(_role_test(ctx, fn, c, idx, positive=True) for part in comp.parts for c in _conjuncts(part))
    return False


def _conjuncts(e: ir.Expr) -> list[ir.Expr]:
    if isinstance(e, ir.Op) and e.op in ("and", "&&"):
        return [c for o in e.operands for c in _conjuncts(o)]
    return [e]


def _role_test(ctx: Context, fn: ir.Function, e: ir.Expr, index: set[str], *, positive: bool) -> bool:
    """`e` holds exactly when (`positive`) or exactly unless (not `positive`) the message at `index` opens a turn:
    `h[i].role == "user"`, `m["role"] in ("user", "assistant")`, `h[i].role !== "user"`, `not (…)`. `index` holds
    index names, and `=m` for an element variable that stands for the message itself."""
    if isinstance(e, ir.Op) and e.op in ("not", "!") and len(e.operands) == 1:
        return _role_test(ctx, fn, e.operands[0], index, positive=not positive)
    if not isinstance(e, ir.Op) or len(e.operands) != 2:
        return False
    eq, ne = ("==", "===", "is", "in"), ("!=", "!==", "is not", "not in")
    if e.op not in (eq if positive else ne):
        return False
    left, right = e.operands
    if _turn_value(ctx, fn, left):
        left, right = right, left
    return _turn_value(ctx, fn, right) and _role_of(left, index)


def _role_of(e: ir.Expr, index: set[str]) -> bool:
    """`h[i].role`, `h[i]["role"]`, `m.role` for `=m`, `h[i].role.value`."""
    if isinstance(e, ir.Attr) and e.name == "value":
        e = e.obj
    if not (isinstance(e, ir.Attr) and e.name == "role" or
            isinstance(e, ir.Index) and isinstance(e.key, ir.Lit) and e.key.value == "role"):
        return False
    msg = e.obj
    if isinstance(msg, ir.Name):
        return "=" + msg.id in index
    return isinstance(msg, ir.Index) and isinstance(msg.key, ir.Name) and msg.key.id in index


def _turn_value(ctx: Context, fn: ir.Function, e: ir.Expr, depth: int = 0) -> bool:
    """`"user"`, `"assistant"`, `Role.USER`, `MessageRole.assistant.value`, a set or tuple of them, or a local
    bound to one."""
    if isinstance(e, ir.Lit):
        return e.value in _TURN_ROLES
    if isinstance(e, ir.Attr):
        name = e.obj.name if e.name == "value" and isinstance(e.obj, ir.Attr) else e.name
        return name.lower() in _TURN_ROLES
    if isinstance(e, ir.Seq):
        return bool(e.items) and all(_turn_value(ctx, fn, i, depth) for i in e.items)
    if isinstance(e, ir.Name) and depth < 2:
        binds = ctx.facts.bindings(fn).get(e.id, [])
        return bool(binds) and all(b.kind == "value" and b.expr is not None and
                                   _turn_value(ctx, fn, b.expr, depth + 1) for b in binds)
    return False


_POSITIONAL = ("pop", "splice", "slice", "shift", "drop")
"""Calls whose arguments are positions (`remove(message)` is handed a message)."""


def _bounds(ctx: Context, fn: ir.Function, cut: ir.Node,
            methods: tuple[str, ...] = (*_POSITIONAL, "remove")) -> list[ir.Node]:
    """What decides where a cut falls: a slice's bounds, the arguments of `pop`/`splice`/`slice` (in what an
    assignment stores, seen through the local it was built in)."""
    out: list[ir.Node] = []
    value = ctx.roles.assigned_value(fn, cut) if isinstance(cut, ir.Assign) else None
    for node in ir.walk(cut if value is None else value):
        if isinstance(node, ir.Slice):
            out.extend(p for p in (node.lo, node.hi, node.step) if p is not None)
        elif isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and \
                node.func.name in methods:
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
