"""C2 · History is append-only: a message already in the conversation is changed in place."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem.queries import Context, Report, query


@query(CheckId.C2, name="history-message-mutated")
def message_mutated(ctx: Context) -> Iterator[Report]:
    """An element of the conversation history is overwritten or edited in place (`messages[-1]["content"] +=`,
    `history[i] = …`, `messages.insert(0, …)`, `sort`) outside a compaction step (a function that also cuts the
    same history is the compaction step, judged under C13)."""
    ops = ctx.roles.history_ops
    compacting = {(op.site.fn.index, op.store) for op in ops if op.kind == "cut"}
    for op in ops:
        if op.kind != "mutate" or (op.site.fn.index, op.store) in compacting or not _kept(op):
            continue
        yield Report(
            site=op.site,
            claim=f"A message already in `{op.store.name}` is changed in place here ({op.detail}).",
            consequence="What the model was sent no longer matches the recorded history: replays diverge, "
                        "debugging reads a conversation that never happened, and the provider's cached prefix "
                        "after this message is invalidated.",
            direction="Append a new message instead of editing an old one; if a message must be replaced, do it "
                      "in one explicit compaction step.")


def _kept(op) -> bool:  # noqa: ANN001 - a HistoryOp
    """The history outlives this function: a field, or a list the caller handed in. A request payload built and
    sent inside one function is not history yet; adjusting it before sending is not rewriting the past."""
    if op.store.kind == "field":
        return True
    fn = op.site.fn
    return op.store.owner == fn.key and any(op.store.name in p.names for p in fn.params)
