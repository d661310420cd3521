"""C12 · Loop and budget limits: an agent loop with no ceiling, and a ceiling's counter reset on failure."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from harness_audit.findings import CheckId
from harness_audit.static.sem import ir
from harness_audit.static.sem.facts import expr_chain
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.roles import Site

_COMPARE = frozenset({"<", "<=", ">", ">=", "==", "!=", "===", "!==", "not in", "in"})


@query(CheckId.C12, name="agent-loop-without-ceiling")
def loop_without_ceiling(ctx: Context) -> Iterator[Report]:
    """An agent loop (a loop or a self-recursive function that reaches a model request) whose only way out is
    the model's answer: no count of turns, tool calls or time is compared against a limit on any path."""
    for site in ctx.roles.agent_loops:
        if not _driven_by_tool_calls(ctx, site) or _goes_round_on_flag(ctx, site):
            continue  # a wrapper that goes round on a hook's or a retry's say, not on the model's tool calls
        if isinstance(site.node, ir.Loop):
            loop = site.node
            if loop.kind == "for":
                continue  # a counted loop: `range(max_turns)` is a ceiling
            if _bounded(loop.test) or any(_limit_check(n) for n in ir.walk_block(loop.body)):
                continue
            yield Report(
                site=site, end=loop.line,
                claim="This agent loop runs until the model stops asking for tools: no turn, tool-call or time "
                      "ceiling is checked on any path through it.",
                consequence="A model that keeps calling tools (or repeats one call) loops and bills until someone "
                            "kills the process.",
                direction="Bound the loop (`for turn in range(max_turns)` / a counter compared each turn) and end "
                          "with a distinct status such as `max_turns_exceeded`, not the normal return.")
        else:
            fn = site.fn
            if any(_limit_check(n) for n in ir.walk_block(fn.body)) or _counts_turns(fn, site.node):
                continue
            yield Report(
                site=site,
                claim=f"`{fn.name}` runs the next turn by calling itself, with no turn counter compared against a "
                      "limit: its only exit is a model reply without tool calls.",
                consequence="A model that keeps calling tools recurses and bills until the stack or the budget "
                            "gives out.",
                direction="Pass a turn counter into the recursive call and stop with a distinct status when it "
                          "reaches the configured maximum.")


@query(CheckId.C12, name="ceiling-counter-reset-on-failure")
def counter_reset_on_failure(ctx: Context) -> Iterator[Report]:
    """A counter that a ceiling compares against a limit is set back to zero inside an `except`/`catch`:
    the failures it is meant to count are exactly what resets it."""
    for fn in ctx.facts.functions:
        compared = _compared_counters(fn)
        if not compared:
            continue
        loops = [n for n in ir.walk_block(fn.body) if isinstance(n, ir.Loop)]
        for node in ir.walk_block(fn.body):
            if not isinstance(node, ir.Handler):
                continue
            for stmt in ir.walk_block(node.body):
                if isinstance(stmt, ir.Assign) and stmt.op == "=" and isinstance(stmt.value, ir.Lit) and \
                        stmt.value.value == 0 and not stmt.decl:  # `let retries = 0`: a new count, not a reset
                    for t in stmt.targets:
                        if expr_chain(t) in compared and (not isinstance(t, ir.Name) or
                                                          _goes_back_to_compare(loops, node, expr_chain(t))):
                            yield Report(
                                site=Site(fn, stmt),
                                claim=f"`{expr_chain(t)}` is the counter a ceiling compares against its limit, and "
                                      "this failure handler resets it to 0.",
                                consequence="A run that keeps failing this way never reaches the limit, so the "
                                            "ceiling never trips and the agent retries forever.",
                                direction="Reset the counter only on success; count this failure (or give it its "
                                          "own limit) instead of clearing the count.")


_DONE_FIELDS = frozenset({"finish_reason", "stop_reason", "finishReason", "stopReason", "done", "is_done"})


def _driven_by_tool_calls(ctx: Context, site: Site) -> bool:
    """The loop goes round because the model asked for tools (or has not said it is done): its body (or the
    recursive function) reads the reply's tool calls or stop reason."""
    fn = site.fn
    nodes = list(ir.walk_block(site.node.body)) if isinstance(site.node, ir.Loop) else list(ir.walk_block(fn.body))
    return _reads_turn_signal(ctx, fn, nodes)


def _goes_round_on_flag(ctx: Context, site: Site) -> bool:
    """A `while` whose body never runs off its end (it ends in a `return` or `throw`, in every branch) goes
    round only at its `continue`s. When every one of them sits under an `if` and none of those tests reads the
    reply's tool calls or stop reason, the loop runs one turn (or one model call) per pass and repeats only when a
    hook or a retry sets a flag: a resume or retry wrapper around the agent loop, not the loop itself."""
    loop = site.node
    if not isinstance(loop, ir.Loop) or loop.kind != "while" or not _never_falls_through(loop.body):
        return False
    guarded: list[list[ir.Expr]] = []
    _continues(loop, loop.body, [], guarded)
    return bool(guarded) and all(tests and not _reads_turn_signal(ctx, site.fn, [n for t in tests for n in ir.walk(t)])
                                 for tests in guarded)


def _never_falls_through(block: Sequence[ir.Node]) -> bool:
    """Whether control never runs off the end of the block: it ends in a `return`, `raise`/`throw`, `break` or
    `continue`, or in an `if` / `try` every branch (and handler) of which does."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, ir.Return | ir.Raise | ir.Jump):
        return True
    if isinstance(last, ir.If):
        return _never_falls_through(last.body) and _never_falls_through(last.orelse)
    if isinstance(last, ir.Try):
        return _never_falls_through(last.orelse or last.body) and \
            all(_never_falls_through(h.body) for h in last.handlers)
    return False


def _continues(loop: ir.Loop, nodes: Sequence[ir.Node], tests: list[ir.Expr], out: list[list[ir.Expr]]) -> None:
    """The `if` tests above each `continue` of `loop` (not of a nested loop, unless it names `loop`'s label)."""
    for node in nodes:
        if isinstance(node, ir.Jump):
            if node.kind == "continue" and (node.label is None or node.label == loop.label):
                out.append(tests)
        elif isinstance(node, ir.If):
            _continues(loop, node.body, [*tests, node.test], out)
            _continues(loop, node.orelse, [*tests, node.test], out)
        elif isinstance(node, ir.Loop):
            if loop.label is not None:
                _labelled_continues(loop, node.body, tests, out)
        elif isinstance(node, ir.Stmt) and not isinstance(node, ir.Def):
            _continues(loop, [c for c in node.children() if isinstance(c, ir.Stmt | ir.Handler)], tests, out)
        elif isinstance(node, ir.Handler):
            _continues(loop, node.body, tests, out)


def _labelled_continues(loop: ir.Loop, nodes: Sequence[ir.Node], tests: list[ir.Expr],
                        out: list[list[ir.Expr]]) -> None:
    """`continue outer` inside a nested loop still goes round `loop`."""
    for node in nodes:
        for n in ir.walk(node):
            if isinstance(n, ir.Jump) and n.kind == "continue" and n.label == loop.label:
                out.append([])  # not traced through the nested loop's tests: counted as unguarded


def _reads_turn_signal(ctx: Context, fn: ir.Function, nodes: Sequence[ir.Node]) -> bool:
    """Whether the nodes read the reply's tool calls or its stop reason."""
    for node in nodes:
        if isinstance(node, ir.Attr) and (node.name in _DONE_FIELDS or ctx.roles.is_tool_calls(fn, node)):
            return True
        if isinstance(node, ir.Lit) and node.value in ("tool_use", "tool_calls", "tool-calls", "function_call",
                                                       "toolUse", "tool-call"):
            return True
        if isinstance(node, ir.Name) and ctx.roles.is_tool_calls(fn, node):
            return True
    return False


def _bounded(test: ir.Expr | None) -> bool:
    """A comparison of a count (turns, steps, tokens, time) against a limit; not an emptiness test
    (`len(calls) == 0`, `calls.length === 0`: that is the model saying it is done)."""
    if test is None or (isinstance(test, ir.Lit) and test.value in (True, 1)):
        return False
    for n in ir.walk(test):
        if isinstance(n, ir.Op) and n.op in _COMPARE and len(n.operands) == 2:
            a, b = n.operands
            if _limit_name(a) or _limit_name(b):
                return True
            if any(_size_of(o) for o in (a, b)):
                continue
            if any(isinstance(o, ir.Lit) and isinstance(o.value, int | float) and not isinstance(o.value, bool)
                   and o.value not in (0, 1) for o in (a, b)):
                return True
    return _mentions_limit(test)


def _limit_name(e: ir.Expr) -> bool:
    chain = expr_chain(e).lower()
    return bool(chain) and any(w in chain for w in ("max", "limit", "budget", "remaining", "ceiling", "deadline",
                                                     "timeout"))


def _size_of(e: ir.Expr) -> bool:
    """`len(x)`, `x.length`, `x.size`: how many items something holds."""
    if isinstance(e, ir.Call) and expr_chain(e.func) == "len":
        return True
    return isinstance(e, ir.Attr) and e.name in ("length", "size")


def _numberish(e: ir.Expr) -> bool:
    if isinstance(e, ir.Lit) and isinstance(e.value, int | float) and not isinstance(e.value, bool):
        return True
    chain = expr_chain(e).lower()
    return any(w in chain for w in ("max", "limit", "budget", "remaining", "ceiling", "deadline", "timeout"))


def _mentions_limit(e: ir.Expr) -> bool:
    return any(_limit_name(n) for n in ir.walk(e) if isinstance(n, ir.Name | ir.Attr))


def _limit_check(node: ir.Node) -> bool:
    """`if turns >= max_turns: break/raise/return`: a comparison against a number or a limit that leaves."""
    if isinstance(node, ir.If) and _bounded(node.test):
        return any(isinstance(s, ir.Raise | ir.Return) or (isinstance(s, ir.Jump) and s.kind == "break")
                   for s in ir.walk_block(node.body))
    if isinstance(node, ir.Call) and any(_numberish(a) for a in node.args):
        name = expr_chain(node.func).lower()
        return any(w in name for w in ("budget", "limit", "ceiling", "max_turns", "check_turn"))
    return False


def _counts_turns(fn: ir.Function, call: ir.Node) -> bool:
    """A recursive call that passes a count one higher (`turn + 1`) is counting turns."""
    if not isinstance(call, ir.Call):
        return False
    return any(isinstance(n, ir.Op) and n.op == "+" and any(isinstance(o, ir.Lit) and o.value == 1 for o in n.operands)
               for n in ir.walk(call))


def _goes_back_to_compare(loops: list[ir.Loop], handler: ir.Handler, counter: str) -> bool:
    """A local counter reset in `handler` is read again by the ceiling only when the handler lies inside a loop
    that compares it: set to 0 before a loop of its own inside the handler, it starts a new count (a health poll
    after a failed restart), it resets nothing."""
    for loop in loops:
        body = list(ir.walk_block(loop.body))
        if any(n is handler for n in body) and any(
                isinstance(n, ir.Op) and n.op in ("<", "<=", ">", ">=") and len(n.operands) == 2 and
                any(expr_chain(x) == counter for x in n.operands)
                for n in (*(ir.walk(loop.test) if loop.test is not None else ()), *body)):
            return True
    return False


def _compared_counters(fn: ir.Function) -> set[str]:
    """Counters compared against a limit in `fn` (`n < self.max_requeries`, `count >= limit`): names and fields
    that `fn` also counts up (`n += 1`)."""
    counted = {expr_chain(t) for node in ir.walk_block(fn.body) if isinstance(node, ir.Assign) and node.op == "+="
               for t in node.targets}
    out: set[str] = set()
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Op) and node.op in ("<", "<=", ">", ">=") and len(node.operands) == 2:
            a, b = node.operands
            for x, y in ((a, b), (b, a)):
                chain = expr_chain(x)
                if chain and isinstance(x, ir.Name | ir.Attr) and _numberish(y) and not _numberish(x) and \
                        chain in counted:
                    out.add(chain)
    return out
