"""C9 · Idempotency: a retried region reaches an effect on the world with no idempotency key."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import ir
from harness_audit.static.sem.facts import expr_chain
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.summaries import HTTP_SEND, SIDE_EFFECTS

_WHAT = {HTTP_SEND: "sends a request that changes something", "spawn": "runs a process",
         "fs-write": "writes a file", "fs-rename": "moves a file"}


@query(CheckId.C9, name="retried-side-effect-without-key")
def retried_side_effect(ctx: Context) -> Iterator[Report]:
    """A retry (decorator, retry loop, or a function re-entering itself from its handler) wraps a region that
    reaches a non-idempotent effect, and nothing in the region carries an idempotency key."""
    for site, region in ctx.roles.retry_regions:
        effects = ctx.sums.near(site.fn, region)
        for kind in (HTTP_SEND, "spawn", "fs-write"):
            eff = effects.get(kind)
            if eff is None or eff.by_name or _keyed(region) or _key_from_callers(ctx, site):
                continue
            if kind == "fs-write" and not _appends(eff.call):
                continue  # writing the same file again is idempotent; appending is not
            if _fresh_target(region, eff.call):
                continue
            yield Report(
                site=site, also_at=(ir_site(eff),),
                claim=f"This retry re-runs a region that {_WHAT[kind]} (`{eff.fn.name}`, line {eff.call.line}) "
                      "with no idempotency key.",
                consequence="When the effect commits but the reply is lost (a timeout after sending), the retry "
                            "does it again: a message sent twice, a command run twice.",
                direction="Retry only the idempotent transport, reuse an idempotency key across attempts, or check "
                          "whether the effect happened before retrying.")
            break


def ir_site(eff):  # noqa: ANN001, ANN201 - an Effect's origin as a Site
    from harness_audit.static.sem.roles import Site

    return Site(eff.fn, eff.call)


def _key_from_callers(ctx: Context, site) -> bool:  # noqa: ANN001 - a Site
    """The retried function is handed its idempotency key by its callers (made once, outside the retry)."""
    if not isinstance(site.node, ir.Call | ir.Name | ir.Attr) or site.node.line > site.fn.line + len(site.fn.decorators):
        return False
    callers = ctx.facts.callers(site.fn)
    return bool(callers) and all(_keyed(list(ir.walk_block(caller.body))) for caller, _ in callers)


_FRESH = frozenset({"uuid4", "uuid1", "randomUUID", "mkdtemp", "mkstemp", "mkdtempSync", "token_hex", "nanoid"})
_REMOVE = frozenset({"rmtree", "rm", "rmSync", "unlink", "unlinkSync", "remove", "rmdir", "rmdirSync"})


def _fresh_target(region: list[ir.Node], call: ir.Call) -> bool:
    """The effect acts on a target named afresh in each attempt (`d = tmp / f"box-{uuid4().hex}"` inside the
    retried region) that the region's failure handler removes (`shutil.rmtree(d)`): a failed attempt leaves
    nothing behind and the next builds a new target, so nothing is done twice."""
    if not any(n is call for n in region):
        return False
    fresh = {t.id for n in region if isinstance(n, ir.Assign) and n.value is not None and any(
        isinstance(c, ir.Call) and expr_chain(c.func).rsplit(".", 1)[-1] in _FRESH for c in ir.walk(n.value))
        for t in n.targets if isinstance(t, ir.Name)}
    used = {n.id for n in ir.walk(call) if isinstance(n, ir.Name)} & fresh
    if not used:
        return False
    return any(isinstance(c, ir.Call) and expr_chain(c.func).rsplit(".", 1)[-1] in _REMOVE and
               any(isinstance(a, ir.Name) and a.id in used for a in c.args)
               for h in region if isinstance(h, ir.Handler) for c in ir.walk_block(h.body))


def _appends(call: ir.Call) -> bool:
    mode = call.args[1] if len(call.args) > 1 else call.keyword("mode")
    if isinstance(mode, ir.Lit) and isinstance(mode.value, str) and "a" in mode.value:
        return True
    return isinstance(call.func, ir.Attr) and call.func.name in ("appendFile", "appendFileSync", "write_all")


def _keyed(region: list[ir.Node]) -> bool:
    for node in region:
        if isinstance(node, ir.Lit) and isinstance(node.value, str) and "idempotency" in node.value.lower():
            return True
        if isinstance(node, ir.Obj) and any(isinstance(k, str) and ("idempotency" in k.lower() or "dedup" in k.lower())
                                            for k, _ in node.items):
            return True
        if isinstance(node, ir.Name | ir.Attr):
            name = node.id if isinstance(node, ir.Name) else node.name
            if "idempotency" in name.lower() or "dedup" in name.lower():
                return True
    return False


__all__ = ["SIDE_EFFECTS"]
