"""C3 · Crash and checkpoint semantics: the conversation is saved over its only copy."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.roles import Site


@query(CheckId.C3, name="history-saved-in-place")
def saved_in_place(ctx: Context) -> Iterator[Report]:
    """Run state (the conversation history) is written over its file in place — no temporary file and
    rename, no append-only log — so a crash mid-write leaves a truncated file that reads as the state."""
    stores = ctx.roles.history_stores
    for site in ctx.roles.effect_sites(apis.FS_WRITE):
        fn, call = site.fn, site.node
        assert isinstance(call, ir.Call)
        if _appends(call) or apis.FS_RENAME in ctx.sums.of_fn(fn):
            continue
        if not _writes_history(ctx, fn, call, stores):
            continue
        yield Report(
            site=site,
            claim="The conversation is written over its file in place, with no temporary file and atomic rename.",
            consequence="A crash or a concurrent save mid-write leaves a truncated or corrupt file; on restart the "
                        "run resumes from it (or fails to load) as if it were the saved state.",
            direction="Write to a temporary file in the same directory, fsync, then rename it over the old file "
                      "(`os.replace` / `fs.rename`); or append records to a log that detects a torn last line.")


def _appends(call: ir.Call) -> bool:
    mode = call.args[1] if len(call.args) > 1 else call.keyword("mode")
    if isinstance(mode, ir.Lit) and isinstance(mode.value, str) and "a" in mode.value:
        return True
    return isinstance(call.func, ir.Attr) and call.func.name in ("appendFile", "appendFileSync")


def _writes_history(ctx: Context, fn: ir.Function, call: ir.Call, stores: set) -> bool:  # noqa: ANN001
    """The written data is (a serialisation of) a history store or a parameter that receives one."""
    params = ctx.roles.history_params(fn)
    texts: list[ir.Expr] = [*call.args, *(v for _, v in call.kw)]
    # `with open(p, "w") as f: json.dump(messages, f)`: the data goes to a later call on the handle
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Call) and any(e.kind == apis.FS_WRITE for e in ctx.sums.direct(fn, node)) or isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and node.func.name in ("write", "dump"):
            texts.extend(node.args)
    for e in texts:
        for sub in ir.walk(e):
            if isinstance(sub, ir.Name | ir.Attr):
                if ctx.roles.store_of(fn, sub) in stores:
                    return True
                if isinstance(sub, ir.Name) and sub.id in params:
                    return True
    return False


__all__ = ["Site"]
