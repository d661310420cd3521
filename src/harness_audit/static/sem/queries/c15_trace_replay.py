"""C15 · Trace completeness: one return path of a model response drops the usage the others carry; a cancelled
call recorded as a success."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import ir
from harness_audit.static.sem.flow import CANCEL, Flow
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.roles import Site

_USAGE = frozenset({"usage", "usageMetadata", "usage_metadata", "token_usage", "tokenUsage"})


@query(CheckId.C15, name="usage-dropped-on-one-path")
def usage_dropped(ctx: Context) -> Iterator[Report]:
    """A function returns the same kind of record on several paths (streamed and not, one provider and
    another) and only some of them carry the token usage."""
    for fn in ctx.facts.functions:
        records = [r for r in ir.walk_block(fn.body) if isinstance(r, ir.Return) and isinstance(r.value, ir.Obj)]
        if len(records) < 2:
            continue
        with_usage = [r for r in records if _keys(r.value) & _USAGE]
        if not with_usage:
            continue
        shared = set.intersection(*(_keys(r.value) - _USAGE for r in with_usage))
        for r in records:
            if r in with_usage or not shared or len(_keys(r.value) & shared) < max(1, len(shared) // 2):
                continue
            yield Report(
                site=Site(fn, r), end=r.end, also_at=tuple(Site(fn, w) for w in with_usage[:1]),
                claim="This return path builds the same response record as the others but leaves out the token "
                      "usage they carry.",
                consequence="Requests that take this path (e.g. streamed ones) are recorded with no token counts, "
                            "so cost and usage are silently under-reported.",
                direction="Carry the usage on every path (read it from the final chunk or the aggregated "
                          "response).")


def _keys(e: ir.Expr | None) -> set[str]:
    if not isinstance(e, ir.Obj):
        return set()
    return {k for k, _ in e.items if isinstance(k, str)}


@query(CheckId.C15, name="cancellation-recorded-as-success")
def cancellation_recorded_as_success(ctx: Context) -> Iterator[Report]:
    """A coroutine's `try` records its outcome in `finally`, handing on an error that only its `except` clauses
    set (`except Exception as e: error = e` … `finally: end_span(result, error)`); a cancellation, which `except
    Exception` does not take, reaches the `finally` by the control flow's cancellation edge with the error unset,
    so the cancelled call is recorded as one that succeeded."""
    for fn in ctx.facts.functions:
        if fn.module.lang != "python" or not fn.is_async:
            continue
        flow: Flow | None = None
        for t in ir.nodes_of(fn.body, ir.Try):
            assert isinstance(t, ir.Try)
            kept = _errors_kept(t)
            if not t.final or not kept:
                continue
            report = next((n for n in ir.walk_block(t.final) if isinstance(n, ir.Call) and any(
                isinstance(a, ir.Name) and a.id in kept for a in (*n.args, *(v for _, v in n.kw)))), None)
            if report is None:
                continue
            flow = flow or Flow(fn)
            final = flow.finals.get(id(t))
            inside = {flow.node(n) for n in ir.walk_block(t.body) if isinstance(n, ir.Stmt)}
            if final is None or not any(nxt == final and kind == CANCEL for src in inside if src is not None
                                        for nxt, kind in flow.succ[src]):
                continue
            name, handler = next(iter(kept.items()))
            yield Report(
                site=Site(fn, handler), end=handler.line, also_at=(Site(fn, report),),
                claim=f"`{name}` is set only by this handler, which a cancellation does not enter (`CancelledError` "
                      f"is not an `Exception`), and `finally` records the outcome with it (line {report.line}).",
                consequence="A cancelled call reaches the `finally` with no error and no result and is recorded "
                            "as a success: traces and callbacks show a stopped step as one that completed.",
                direction="Catch `BaseException` (or add `except asyncio.CancelledError as e`) to keep the error, "
                          "then re-raise it with a bare `raise`.")


def _errors_kept(t: ir.Try) -> dict[str, ir.Handler]:
    """Locals that a handler of `t` sets to the error it caught (`error = e`), with the handler."""
    out: dict[str, ir.Handler] = {}
    for h in t.handlers:
        if not h.name:
            continue
        for node in ir.walk_block(h.body):
            if isinstance(node, ir.Assign) and isinstance(node.value, ir.Name) and node.value.id == h.name:
                out.update((tg.id, h) for tg in node.targets if isinstance(tg, ir.Name) and tg.id not in out)
    return out
