"""C4 · Model output parsing.

- tool-call arguments decoded with nothing to catch a malformed reply;
- a reply converted into the agent's own form with a finish reason made up from literals, the reply's own
  termination (finish or stop reason, status) never read, so a reply cut at the token limit reads as complete;
- a tool call's id accumulated like a fragment of text (`call.id += delta.id`, id parts joined);
- a stream item that starts a tool call pushes a new entry without looking its id up (a repeated start
  event makes two calls with one id);
- streamed tool-call deltas indexed into a list by the index they carry (`calls[tc.index]` on a `[]`);
- tool calls accumulated from a stream and used after it ends, with the stream's finish reason never read.
"""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.facts import expr_chain
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.roles import Site

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


@query(CheckId.C4, name="finish-reason-invented")
def finish_reason_invented(ctx: Context) -> Iterator[Report]:
    """A function that reads a model reply writes its finish or stop reason from literals that can only say
    'ended normally' (`"tool_calls" if calls else "stop"`) and reads no termination field of the reply: a reply
    cut at the token limit, filtered or incomplete is passed on as complete."""
    streams = ctx.roles.streams
    for fn in ctx.facts.functions:
        sites = list(streams.invented_finishes(fn))
        if not sites or streams.reads_termination(fn) or not streams.reads_reply(fn):
            continue
        for site in sites:
            yield Report(
                site=site,
                claim="The finish reason of a converted model reply is made up here from literals; the reply's own "
                      "finish reason or status is never read.",
                consequence="A reply cut at the token limit (or filtered, or incomplete) is reported as a normal "
                            "stop, so truncated text or half-written tool calls are committed as complete.",
                direction="Map the reply's own termination (finish_reason / stop_reason / status and "
                          "incomplete_details) to the finish reason, and keep 'length' distinct from 'stop'.")


@query(CheckId.C4, name="tool-call-id-concatenated")
def tool_call_id_concatenated(ctx: Context) -> Iterator[Report]:
    """A tool call's id is accumulated like its arguments: added onto the id held so far, or pushed onto a list
    of parts later joined into one string. A provider that repeats the whole id on every delta produces
    `call_1call_1`, and the tool result no longer matches its call."""
    streams = ctx.roles.streams
    for fn in ctx.facts.functions:
        for site in streams.id_concatenations(fn):
            yield Report(
                site=site,
                claim="A tool call's id is concatenated here as if it arrived in fragments.",
                consequence="Providers that send the complete id again on later deltas produce a doubled id; the "
                            "tool result is then sent under an id the model never issued and the next request "
                            "is rejected or the result is lost.",
                direction="Take the id once, when the call first appears (keep the first non-empty id per call "
                          "index); concatenate only the argument text.")


@query(CheckId.C4, name="duplicate-tool-call-id-appended")
def duplicate_tool_call_id(ctx: Context) -> Iterator[Report]:
    """In a loop over a streamed reply, an item that starts a tool call pushes a new entry with the item's id,
    and nothing before the push looks that id (or the call's index) up: a start event sent twice (a retried or
    resumed stream, a provider quirk) leaves two calls with one id in the turn."""
    for fn in ctx.facts.functions:
        for entry in ctx.roles.streams.unchecked_call_entries(fn):
            yield Report(
                site=Site(fn, entry.push),
                claim=f"A new tool-call entry is pushed for `{entry.id_chain}` without checking whether that id is "
                      "already in this turn.",
                consequence="A repeated start event or delta for the same call adds a second call with the same "
                            "id; the saved assistant message then carries duplicate ids and the next request is "
                            "rejected ('tool_use ids must be unique'), or the call runs twice.",
                direction="Key the turn's calls by id (or provider index) and look the id up before adding an "
                          "entry; ignore or merge a repeated start.",
                also_at=(entry.branch, entry.loop) if entry.branch is not None else (entry.loop,))


@query(CheckId.C4, name="tool-call-index-into-list")
def tool_call_index_into_list(ctx: Context) -> Iterator[Report]:
    """A list is indexed by the index a streamed tool-call delta carries: the code assumes the provider numbers
    the turn's calls 0, 1, 2 … contiguously and in order. An index that starts at 1, skips one or arrives out of
    order raises `IndexError` (Python) or leaves a hole (TS), losing or misplacing a call."""
    streams = ctx.roles.streams
    for fn in ctx.facts.functions:
        for site in streams.lists_indexed_by_call(fn):
            yield Report(
                site=site,
                claim="Streamed tool-call deltas are placed into a list by the index the provider gives them.",
                consequence="A provider whose indices do not start at 0 or have gaps (several OpenAI-compatible "
                            "servers, parallel calls) makes this raise IndexError or leave a hole, and the turn's "
                            "calls are lost or misattributed.",
                direction="Accumulate into a dict (Map) keyed by the delta's index or id, and order the calls when "
                          "the stream ends.")


@query(CheckId.C4, name="stream-end-unchecked")
def stream_end_unchecked(ctx: Context) -> Iterator[Report]:
    """A loop over a streamed reply accumulates the tool calls its items carry, and after the loop the calls
    are used (returned, stored, executed), while nothing in the function, or in what the loop hands its items
    to, reads how the stream ended (finish or stop reason, status). A stream cut at the token limit or dropped
    mid-call commits half-written calls as complete."""
    streams = ctx.roles.streams
    for loop in streams.call_stream_loops:
        if streams.forwards_items(loop):
            continue
        uses = list(streams.committed_calls(loop))
        if not uses or streams.consults_termination(loop, uses):
            continue
        yield Report(
            site=uses[0],
            claim="Tool calls accumulated from a streamed reply are used here, and the stream's finish reason is "
                  "never read.",
            consequence="A stream that ends at the token limit (finish_reason 'length', stop_reason 'max_tokens') "
                        "or without its terminal event leaves a half-written call whose truncated arguments are "
                        "executed or stored as complete.",
            direction="Keep the finish reason of the last chunk and, unless it says the reply ended normally, "
                      "discard or re-request the partial calls instead of committing them.",
            also_at=(loop, *uses[1:]))


@query(CheckId.C4, name="unparsed-tool-call-dropped")
def unparsed_tool_call_dropped(ctx: Context) -> Iterator[Report]:
    """A parser turns malformed tool-call arguments into nothing (`catch { return null }`), and its caller acts
    only when a call came back (`if (parsed) { … }`, no else, the result used nowhere else): a malformed call is
    dropped without a result or an error, and the turn waits on it or goes on as if it had not been made."""
    quiet = _null_on_bad_arguments(ctx)
    calls = {call: fn for f in ctx.facts.functions if f.index in quiet for fn, call in ctx.facts.callers(f)}
    for call, fn in calls.items():
        for node in ir.nodes_of(fn.body, ir.Assign):
            if not (isinstance(node, ir.Assign) and node.op == "=" and len(node.targets) == 1 and
                    isinstance(node.targets[0], ir.Name) and node.value is not None and
                    (node.value.value if isinstance(node.value, ir.Await) else node.value) is call):
                continue
            guard = _only_guard(ctx, fn, node.targets[0].id, node)
            if guard is not None:
                yield Report(
                    site=Site(fn, node),
                    claim="A tool call whose arguments fail to parse comes back as nothing here, and only the "
                          "success case is handled.",
                    consequence="A malformed call is silently dropped: it gets no result and no error, so the "
                                "model is never told and the turn can hang on the unanswered call.",
                    direction="Handle the failed parse: answer the call with an error result the model can read "
                              "(or raise), instead of skipping it.",
                    also_at=(Site(fn, guard),))


def _null_on_bad_arguments(ctx: Context) -> set[int]:
    """Functions that turn a failed decode of tool-call arguments into an absent result (a decode in a `try`
    whose handler returns nothing), and those that return what such a function returns."""
    out: set[int] = set()
    for site in ctx.roles.decodes:  # few: the project's JSON.parse / json.loads calls
        fn, call = site.fn, site.node
        assert isinstance(call, ir.Call)
        if not call.args or not _model_arguments(ctx, fn, call.args[0]):
            continue
        for t in ir.nodes_of(fn.body, ir.Try):
            if isinstance(t, ir.Try) and any(n is call for s in t.body for n in ir.walk(s)) and \
                    any(_returns_nothing(h.body) for h in t.handlers):
                out.add(fn.index)
    frontier = [f for f in ctx.facts.functions if f.index in out]
    for _ in range(2):  # `return this.parseToolCall(...)`: a wrapper hands the nothing on
        nxt: list[ir.Function] = []
        for f in frontier:
            for caller, c in ctx.facts.callers(f):
                if caller.index not in out and any(
                        isinstance(r, ir.Return) and r.value is not None and _is_result_of(ctx, caller, r.value, c)
                        for r in ir.nodes_of(caller.body, ir.Return)):
                    out.add(caller.index)
                    nxt.append(caller)
        frontier = nxt
    return out


def _is_result_of(ctx: Context, fn: ir.Function, e: ir.Expr, call: ir.Call) -> bool:
    """`e` is what `call` returned: the call itself or a local bound to it."""
    e = e.value if isinstance(e, ir.Await) else e
    if e is call:
        return True
    return isinstance(e, ir.Name) and any(
        b.kind == "value" and b.expr is not None and (b.expr.value if isinstance(b.expr, ir.Await) else b.expr) is call
        for b in ctx.facts.bindings(fn).get(e.id, []))


def _returns_nothing(block: ir.Block) -> bool:
    return any(isinstance(n, ir.Return) and (n.value is None or (isinstance(n.value, ir.Lit) and n.value.value is None)
                                             or (isinstance(n.value, ir.Name) and n.value.id == "undefined"))
               for n in ir.walk_block(block))


def _only_guard(ctx: Context, fn: ir.Function, name: str, bound: ir.Assign) -> ir.If | None:
    """The `if` that acts on `name` only when it holds something, with no else, when every other use of
    `name` after `bound` is inside it."""
    rebound = [b.line for b in ctx.facts.bindings(fn).get(name, []) if b.line > bound.line]
    until = min(rebound) if rebound else fn.end + 1  # a block-scoped name bound again further on is another value
    guards = [n for n in ir.nodes_of(fn.body, ir.If) if isinstance(n, ir.If) and bound.line < n.line < until and
              _tests_present(n.test, name)]
    if len(guards) != 1 or guards[0].orelse:
        return None
    guard = guards[0]
    inside = {id(n) for n in ir.walk(guard)}
    uses = [n for n in ir.walk_block(fn.body) if isinstance(n, ir.Name) and n.id == name and
            bound.line < n.line < until]
    return guard if uses and all(id(u) in inside for u in uses) else None


def _tests_present(test: ir.Expr, name: str) -> bool:
    """`if (x)`, `if x is not None`, `if (x !== null)`, `if (x != undefined)`."""
    if isinstance(test, ir.Name):
        return test.id == name
    return isinstance(test, ir.Op) and test.op in ("is not", "!==", "!=") and len(test.operands) == 2 and \
        isinstance(test.operands[0], ir.Name) and test.operands[0].id == name and \
        ((isinstance(test.operands[1], ir.Lit) and test.operands[1].value is None) or
         (isinstance(test.operands[1], ir.Name) and test.operands[1].id == "undefined"))
