"""C15 · Trace completeness: one return path of a model response drops the usage the others carry."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import ir
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
