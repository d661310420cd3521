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
        if op.kind == "cut":
            yield op.site.fn, op.site.node, op.store.name
    for fn in ctx.facts.functions:
        params = ctx.roles.history_params(fn)
        if not params:
            continue
        for node in ir.walk_block(fn.body):
            if isinstance(node, ir.Index) and isinstance(node.key, ir.Slice) and _drops_head(node.key) and \
                    expr_chain(node.obj) in params:
                yield fn, node, expr_chain(node.obj)
            elif isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and node.func.name in ("slice", "splice") \
                    and expr_chain(node.func.obj) in params and node.args and not _zero(node.args[0]):
                yield fn, node, expr_chain(node.func.obj)


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
        if isinstance(node, ir.Loop | ir.If) and node.test is not None and any(n is cut for n in ir.walk_block(node.body)):
            roots.append((fn, node.test))
    seen: set[int] = set()
    todo = list(roots)
    while todo and len(seen) < 60:
        cur_fn, cur = todo.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        for node in ir.walk(cur):
            if _pairing_word(node):
                return True
            if isinstance(node, ir.Name) and node.id != store:
                for b in ctx.facts.bindings(cur_fn).get(node.id, []):
                    if b.expr is not None:
                        todo.append((cur_fn, b.expr))
            elif isinstance(node, ir.Call):
                for c in ctx.facts.callees(cur_fn, node):
                    if isinstance(c, ir.Function) and c.kind != "module":
                        todo.extend((c, s) for s in c.body)
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
