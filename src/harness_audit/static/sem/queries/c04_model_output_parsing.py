"""C4 · Model output parsing: tool-call arguments decoded with nothing to catch a malformed reply."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.facts import expr_chain
from harness_audit.static.sem.queries import Context, Report, query

_ARG_FIELDS = frozenset({"arguments", "args", "input", "partial_json", "argumentsText", "inputText", "argsText"})


@query(CheckId.C4, name="tool-arguments-decoded-unguarded")
def arguments_unguarded(ctx: Context) -> Iterator[Report]:
    """The JSON of a tool call's arguments (text the model wrote) is decoded with no `try`/`catch` around it
    here or in any caller, so one malformed or truncated reply raises out of the loop."""
    for site in ctx.roles.decodes:
        fn, call = site.fn, site.node
        assert isinstance(call, ir.Call)
        if not call.args or not _model_arguments(ctx, fn, call.args[0]):
            continue
        if _guarded_in(fn, call) or _callers_guard(ctx, fn):
            continue
        yield Report(
            site=site,
            claim="Tool-call arguments written by the model are decoded here with no error handling on this path.",
            consequence="Malformed or truncated arguments (a reply cut at the token limit, a model slip) raise out "
                        "of the agent loop instead of going back to the model as an error result.",
            direction="Decode inside try/except (JSONDecodeError / SyntaxError) and return the parse error to the "
                      "model as the tool call's result.")


def _model_arguments(ctx: Context, fn: ir.Function, e: ir.Expr, depth: int = 0) -> bool:
    chain = expr_chain(e)
    if chain:
        parts = [p.rstrip("()[]") for p in chain.split(".")]
        if parts[-1] in _ARG_FIELDS and (len(parts) > 1 and (set(parts) & apis.TOOL_CALL_FIELDS or
                                                             parts[-2] in ("function", "function_call", "functionCall",
                                                                           "tool_call", "toolCall", "call", "tc",
                                                                           "block", "delta", "part"))):
            return True
    if isinstance(e, ir.Name) and depth < 3:
        return any(b.expr is not None and b.kind == "value" and _model_arguments(ctx, fn, b.expr, depth + 1)
                   for b in ctx.facts.bindings(fn).get(e.id, []))
    return False


def _guarded_in(fn: ir.Function, call: ir.Call) -> bool:
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Try) and node.handlers and any(n is call for n in ir.walk_block(node.body)):
            return True
    return False


def _callers_guard(ctx: Context, fn: ir.Function) -> bool:
    callers = ctx.facts.callers(fn)
    return bool(callers) and all(
        any(isinstance(t, ir.Try) and t.handlers and any(n is call for n in ir.walk_block(t.body))
            for t in ir.walk_block(caller.body)) for caller, call in callers)
