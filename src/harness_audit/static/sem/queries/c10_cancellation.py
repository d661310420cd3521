"""C10 · Cancellation propagation: kills that miss the process group, signals not passed on, cancellation
swallowed."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from harness_audit.findings import CheckId, Verdict
from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.facts import expr_chain
from harness_audit.static.sem.flow import CANCEL, CATCH_CANCEL, Flow, caught_names
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.roles import Site
from harness_audit.static.sem.summaries import HTTP_GET, HTTP_SEND

_KILLS = frozenset({"kill", "terminate", "send_signal", "cancel"})
_GROUP_KW = frozenset({"start_new_session", "process_group", "preexec_fn", "creationflags", "detached"})
_GROUP_CALLS = ("killpg", "tree-kill", "treeKill", "kill_process_tree", "killProcessTree", "taskkill", "pkill")


@query(CheckId.C10, name="kill-misses-process-group")
def kill_misses_group(ctx: Context) -> Iterator[Report]:
    """A spawned process is stopped with a signal to the direct child only, and it was not started in a group
    of its own, so the shell's children (a dev server, a build) keep running after the stop."""
    reach = ctx.roles.tool_reach
    for spawn in ctx.roles.spawns:
        fn, call = spawn.fn, spawn.node
        assert isinstance(call, ir.Call)
        if _starts_group(call) or _kills_groups(fn):
            continue
        if fn.index not in reach and not _shell(call):
            continue  # a helper process of the harness itself (a UI, a server) is not a command the user stops
        names = _bound_to(ctx, fn, call)
        for node in ir.walk_block(fn.body):
            if isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and node.func.name in _KILLS and \
                    expr_chain(node.func.obj) in names:
                yield Report(
                    site=Site(fn, node), also_at=(spawn,),
                    claim=f"`{expr_chain(node.func)}` signals only the direct child; the process was not started "
                          "in its own group, so what it started is not stopped.",
                    consequence="When the user stops a command, the shell's children (a dev server, a watcher, a "
                                "build) keep running and holding ports, files and CPU.",
                    direction="Start the process in its own group (`start_new_session=True` / `detached: true`) "
                              "and signal the group (`os.killpg(proc.pid, SIGTERM)` / `process.kill(-child.pid)`).")


def _shell(call: ir.Call) -> bool:
    """The process is a shell running a command line (`shell=True`, `create_subprocess_shell`, `exec`, `bash -c`)."""
    if isinstance(call.keyword("shell"), ir.Lit) and call.keyword("shell").value is True:  # type: ignore[union-attr]
        return True
    name = expr_chain(call.func)
    if name.endswith(("create_subprocess_shell", "exec", "execSync", "system")):
        return True
    return any(isinstance(a, ir.Lit) and a.value in ("bash", "sh", "-c", "zsh", "cmd", "powershell")
               for a in call.args) or any(isinstance(a, ir.Seq) and any(
                   isinstance(i, ir.Lit) and i.value in ("bash", "sh", "-c") for i in a.items) for a in call.args)


def _starts_group(call: ir.Call) -> bool:
    if any(k in _GROUP_KW for k, _ in call.kw):
        return True
    return any(isinstance(a, ir.Obj) and any(k in _GROUP_KW for k, _ in a.items if isinstance(k, str))
               for a in call.args)


def _kills_groups(fn: ir.Function) -> bool:
    text = fn.module.text
    return any(word in text for word in _GROUP_CALLS) or "kill(-" in text.replace(" ", "")


def _bound_to(ctx: Context, fn: ir.Function, call: ir.Call) -> set[str]:
    """Names and fields the result of `call` is stored in."""
    out: set[str] = set()
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Assign) and node.value is not None:
            value = node.value.value if isinstance(node.value, ir.Await) else node.value
            if value is call:
                out.update(expr_chain(t) for t in node.targets if expr_chain(t))
    return out


@query(CheckId.C10, name="signal-not-passed-on")
def signal_not_passed(ctx: Context) -> Iterator[Report]:
    """A function holds a cancellation signal (an `AbortSignal`, a cancellation token) and makes a request — to
    a model or over HTTP, itself or through a project function that takes a signal — without passing it."""
    for fn in ctx.facts.functions:
        if fn.module.lang == "python":
            continue  # Python's cancellation reaches awaited requests through the task; signals are TS/JS
        signals = ctx.roles.signals_in_scope(fn)
        if not signals:
            continue
        for call, callees in ctx.facts.calls(fn):
            effects = ctx.sums.of_call(fn, call)
            if not (apis.MODEL in effects or HTTP_SEND in effects or HTTP_GET in effects):
                continue
            if _passes_signal(call, signals) or _passes_derived_signal(ctx, fn, call, signals) or \
                    not _accepts_signal(ctx, fn, call, callees) or _signal_slot(callees, call) is not None:
                continue  # a project callee with a signal slot: `signal-left-out-of-call` reads the slot
            yield Report(
                site=Site(fn, call),
                claim=f"`{fn.name}` holds a cancellation signal (`{signals[0]}`) but this request is made "
                      "without it.",
                consequence="When the user stops the run, this request (and whatever it streams or runs) goes on "
                            "in the background: the model keeps generating, the connection stays open.",
                direction=f"Pass the signal on (`{{ signal: {signals[0]} }}` or the callee's signal parameter).",
                verdict=Verdict.CONFIRMED)


def _passes_signal(call: ir.Call, signals: list[str]) -> bool:
    return _carries_signal((node for node in ir.walk(call) if node is not call.func), signals)


def _carries_signal(nodes: Iterable[ir.Node], signals: list[str], spread: bool = True) -> bool:
    """Whether `nodes` name a held signal, or an option that carries one (`signal`, `abortSignal`; a spread, unless
    `spread` is false)."""
    tails = {s.rsplit(".", 1)[-1] for s in signals}
    for node in nodes:
        if isinstance(node, ir.Name) and (node.id in tails or node.id in signals):
            return True
        if isinstance(node, ir.Attr) and (node.name in tails or node.name in ("signal", "abortSignal",
                                                                               "cancellationToken", "token")):
            return True
        if isinstance(node, ir.Obj) and any(isinstance(k, str) and k in ("signal", "abortSignal",
                                                                          "cancellationToken", *tails)
                                            for k, _ in node.items):
            return True
        if spread and isinstance(node, ir.Spread):
            return True  # `{...options}` may carry it: not provably dropped
    return False


def _passes_derived_signal(ctx: Context, fn: ir.Function, call: ir.Call, signals: list[str]) -> bool:
    """A local handed to the call was built from a held signal (`const cancel = AbortSignal.any([own.signal,
    externalSignal])`, `external ?? own.signal`): the request gets it, combined."""
    for node in ir.walk(call):
        if node is call.func or not isinstance(node, ir.Name):
            continue
        scope: ir.Function | None = fn  # the local may be bound in an enclosing function (a callback's closure)
        while scope is not None:
            binds = ctx.facts.bindings(scope).get(node.id)
            if binds:
                if any(b.expr is not None and _carries_signal(ir.walk(b.expr), signals, spread=False) for b in binds):
                    return True
                break
            scope = scope.parent
    return False


def _accepts_signal(ctx: Context, fn: ir.Function, call: ir.Call, callees: tuple) -> bool:
    """Whether the callee can take a signal: an external request API (fetch, an SDK call), or a project
    function with a signal among its parameters."""
    for c in callees:
        if isinstance(c, ir.Function):
            if ctx.roles.signals_in_scope(c) and any(
                    p.name in ctx.roles.signals_in_scope(c) or set(p.names) & set(ctx.roles.signals_in_scope(c))
                    for p in c.params):
                return True
        elif any(e.kind in (apis.MODEL, HTTP_SEND, HTTP_GET) for e in ctx.sums.direct(fn, call)):
            return True
    return False


@query(CheckId.C10, name="signal-left-out-of-call")
def signal_left_out(ctx: Context) -> Iterator[Report]:
    """A function holds a cancellation signal and calls a project function that takes one and uses it (reads
    the parameter, or the options field that carries it), leaving that slot empty: the argument is missing, or the
    options object handed there has no signal field. Whatever the callee cancels with its signal (a request, a
    tool run, the next turn) can no longer be stopped from here. In Python too: an explicit token or event
    (`cancellation_token`, `cancel_event`) does not travel with the task as `CancelledError` does."""
    for fn in ctx.facts.functions:
        # the signals the function was handed or made: a controller kept in a field is the object's own (a timer
        # loop's, a shutdown's), and a callee could read the field itself
        signals = [s for s in ctx.roles.signals_in_scope(fn) if not s.startswith(("this.", "self."))
                   and not _function_typed(fn, s)]
        if not signals or _listens_for_abort(fn, signals):
            continue
        for call, callees in ctx.facts.calls(fn):
            if call.new:
                continue  # a new source or object taking a parent signal links, a different question
            slot = _signal_slot(callees, call)
            if slot is None or _fills(call, *slot[1]):
                continue
            callee, (_, param, field) = slot
            # what the callee would cancel must matter: a request, a process, or the run's own next turn (a call
            # back into the cycle the caller lies on); a prompt renderer's or a formatter's token does not
            cycle = ctx.sums.cycle_of(fn)
            if not (_CANCELLABLE & set(ctx.sums.of_call(fn, call)) or
                    (cycle is not None and cycle == ctx.sums.cycle_of(callee))):
                continue
            taken = f"`{param}.{field}`" if field and field not in param else f"`{field or param}`"
            yield Report(
                site=Site(fn, call),
                claim=f"`{fn.name}` holds a cancellation signal (`{signals[0]}`) and calls `{callee.name}`, which "
                      f"takes one ({taken}) and uses it, without handing it on.",
                consequence=f"When the user stops the run, what `{callee.name}` would have cancelled with its signal "
                            "(a request, a tool run, the next turn) goes on in the background.",
                direction=f"Hand the signal on (`{field or param}: {signals[0]}` or the matching argument).")


_CANCELLABLE = frozenset({apis.MODEL, HTTP_SEND, HTTP_GET, apis.SPAWN})
"""Effects a dropped signal leaves running: a model request, an HTTP request, a child process."""


def _function_typed(fn: ir.Function, name: str) -> bool:
    """`name` is a parameter (of `fn` or an enclosing function) declared as a function (`callback: (token:
    CancellationToken) => Promise<T>`): it takes a signal, it does not hold one."""
    scope: ir.Function | None = fn
    while scope is not None:
        for p in scope.params:
            if p.name == name:
                return bool(p.type and "=>" in p.type)
        scope = scope.parent
    return False


def _listens_for_abort(fn: ir.Function, signals: list[str]) -> bool:
    """`fn` (or the function it is nested in) reacts to the abort itself (`signal.addEventListener("abort", …)`,
    `signal.onabort = …`): what it starts is released by its own handler."""
    tails = {s.rsplit(".", 1)[-1] for s in signals}
    scope: ir.Function | None = fn
    while scope is not None and scope.kind != "module":
        for n in _walk_deep(scope):
            if isinstance(n, ir.Call) and isinstance(n.func, ir.Attr) and n.func.name == "addEventListener" and \
                    n.args and isinstance(n.args[0], ir.Lit) and n.args[0].value == "abort" and \
                    set(expr_chain(n.func.obj).split(".")) & (tails | {"signal"}):
                return True
            if isinstance(n, ir.Assign) and any(isinstance(t, ir.Attr) and t.name == "onabort" for t in n.targets):
                return True
        scope = scope.parent
    return False


def _signal_slot(callees: tuple, call: ir.Call) -> tuple[ir.Function, tuple[int, str, str | None]] | None:
    """A project function `call` reaches, with where it takes a signal it uses: (argument index, parameter name,
    options field or None), from a parameter that is a signal or an options parameter whose declared type has a
    signal field. Through dispatch (an interface's implementations) every target with a body must take and read
    one in the same slot. None when the call reaches no project function, or one takes no signal, or never reads
    the one it takes. The slot, not the names around the call, says whether a signal is handed on: `options.messages`
    passes a piece of the options, not their signal."""
    bodied = [c for c in callees if isinstance(c, ir.Function) and c.body]
    slots = [_slot_in(c, call) for c in bodied]
    if not slots or any(s is None for s in slots) or len({(s[0], s[2]) for s in slots if s is not None}) > 1:
        return None
    assert slots[0] is not None
    return bodied[0], slots[0]


def _slot_in(callee: ir.Function, call: ir.Call) -> tuple[int, str, str | None] | None:
    params = list(callee.params)
    if params and callee.module.lang == "python" and callee.cls is not None and params[0].name in ("self", "cls") \
            and isinstance(call.func, ir.Attr):
        params = params[1:]  # a bound method: the receiver fills the first parameter
    for i, p in enumerate(params):
        if p.kind in ("star", "kw"):
            return None  # `*args`/`**kw`: where the call's arguments land cannot be told
        if p.kind != "pattern" and _signal_param(p, callee.module.lang):
            if _reads_name(callee, p.name):
                return i, p.name, None
            continue
        for name in (p.names if p.kind == "pattern" else ()):
            if _SIGNAL_PARAM.fullmatch(name) and _reads_name(callee, name):
                return i, p.name, name
        if p.kind != "pattern" and p.type:
            for field in _signal_fields(p.type):
                if _reads_field(callee, p.name, field):
                    return i, p.name, field
    return None


def _signal_param(p: ir.Param, lang: str) -> bool:
    """A parameter that takes a cancellation signal: declared as one (`token?: CancellationToken`), an event named
    for stopping (`cancel_event: asyncio.Event`), or named as one (`abortSignal`, `cancellation_token`; `signal`
    only outside Python, where it is as often an OS signal number; never a bare `token`, as often a credential)."""
    declared = (p.type or "").split("|")[0].strip().rstrip("?")
    if _SIGNAL_WORD.fullmatch(declared):
        return True
    if _EVENT_WORD.fullmatch(declared):
        return bool(_STOPPING.search(p.name))
    return bool(_SIGNAL_PARAM.fullmatch(p.name)) and not (lang == "python" and p.name == "signal")


_SIGNAL_WORD = re.compile(r"AbortSignal|CancellationToken|CancelToken")
"""A parameter's whole declared type that is a signal (`signal: AbortSignal`, `token?: CancellationToken`)."""
_EVENT_WORD = re.compile(r"(?:asyncio\.|threading\.)?Event")
"""An event type: a signal only when named for stopping (a DOM `Event`, a "ready" event are not)."""
_STOPPING = re.compile(r"(?i)cancel|stop|abort|shutdown|interrupt")
_SIGNAL_PARAM = re.compile(r"signal|abortSignal|cancellationToken|cancelToken|cancel_event|cancel_token|stop_event|"
                           r"abort_signal|cancellation_token")
"""Parameter names that hold a signal whatever their type says."""


def _signal_fields(type_text: str) -> list[str]:
    """Fields of an object type's text declared with a signal type (`{ rawRequest: R; abortSignal?: AbortSignal }`)."""
    return re.findall(r"([A-Za-z_$][\w$]*)\??\s*:\s*(?:AbortSignal|CancellationToken)\b", type_text)


def _reads_name(fn: ir.Function, name: str) -> bool:
    return any(isinstance(n, ir.Name) and n.id == name for n in _walk_deep(fn))


def _walk_deep(fn: ir.Function) -> Iterator[ir.Node]:
    """Every node of `fn`, the bodies of the functions defined in it included (a callback reading the signal)."""
    todo = [fn]
    while todo:
        for n in ir.walk_block(todo.pop().body):
            yield n
            if isinstance(n, ir.FuncExpr):
                todo.append(n.fn)


def _reads_field(fn: ir.Function, param: str, field: str) -> bool:
    """`param.field` is read in `fn`, or `param` is handed on whole (to a call that may read it)."""
    for n in _walk_deep(fn):
        if isinstance(n, ir.Attr) and n.name == field and isinstance(n.obj, ir.Name) and n.obj.id == param:
            return True
        if isinstance(n, ir.Call) and any(isinstance(a, ir.Name) and a.id == param for a in n.args):
            return True
        if isinstance(n, ir.Assign) and isinstance(n.value, ir.Name) and n.value.id == param and any(
                isinstance(t, ir.Obj) for t in n.targets):
            return True  # `const { abortSignal } = options`
    return False


def _fills(call: ir.Call, index: int, param: str, field: str | None) -> bool:
    """Whether `call` puts something in the callee's signal slot (a spread or `**kw` may, and counts as filling)."""
    if any(isinstance(a, ir.Spread) for a in call.args) or any(k == "**" for k, _ in call.kw):
        return True
    if field is None:
        return len(call.args) > index or call.keyword(param) is not None
    arg = call.args[index] if len(call.args) > index else call.keyword(param)
    if arg is None:
        return False
    if not isinstance(arg, ir.Obj):
        return True  # an options object built elsewhere may carry it
    return any(k is None or isinstance(k, ir.Expr) or k == field for k, _ in arg.items)


@query(CheckId.C10, name="cancellation-token-dropped")
def token_dropped(ctx: Context) -> Iterator[Report]:
    """A call is given an explicit "never cancelled" token (`CancellationToken.None`) while the function holds
    the real one."""
    for fn in ctx.facts.functions:
        signals = ctx.roles.signals_in_scope(fn)
        if not signals:
            continue
        for call, _ in ctx.facts.calls(fn):
            for arg in (*call.args, *(v for _, v in call.kw)):
                if isinstance(arg, ir.Attr) and arg.name == "None" and "Cancel" in expr_chain(arg.obj):
                    yield Report(
                        site=Site(fn, call),
                        claim=f"This call is given `{expr_chain(arg)}` although `{fn.name}` holds the request's "
                              f"token (`{signals[0]}`).",
                        consequence="Pressing stop does not cancel what this call runs: it goes on to the end.",
                        direction=f"Pass the token in scope (`{signals[0]}`) instead of a token that never fires.")


@query(CheckId.C10, name="cancellation-swallowed")
def cancellation_swallowed(ctx: Context) -> Iterator[Report]:
    """Inside a loop of a coroutine, an `except` that can receive the task's cancellation (a cancellation edge of
    the function's control flow reaches it: one of the `await`s it guards is where `CancelledError` arrives, and it
    catches `CancelledError`, `BaseException` or everything) goes round again (`continue`, or an empty handler),
    so the cancelled task carries on. A handler that does more (keeps the error for later, hands it to a future)
    is not judged here: the paths back round the loop alone do not tell a swallow from a deferred re-raise."""
    for fn in ctx.facts.functions:
        if fn.module.lang != "python" or not fn.is_async:
            continue
        loops = [n for n in ir.walk_block(fn.body) if isinstance(n, ir.Loop)]
        if not loops or not any(isinstance(h, ir.Handler) and (
                not h.types or caught_names(h) & CATCH_CANCEL) for h in ir.walk_block(fn.body)):
            continue
        flow = Flow(fn, raises=_never)  # the cancellation edges and the normal paths are all this needs
        cancelled = {nxt for succ in flow.succ for nxt, kind in succ if kind == CANCEL}
        for loop in loops:
            if any(isinstance(n, ir.Call) and expr_chain(n.func).endswith("shield") for n in ir.walk_block(loop.body)):
                continue  # waiting out a shielded task before honouring the cancel is the correct shape
            for node in _same_loop_nodes(loop):
                at = flow.node(node) if isinstance(node, ir.Handler) else None
                if at is None or at not in cancelled or not _goes_round(node):
                    continue
                yield Report(
                    site=Site(fn, node), end=node.line,
                    claim="This handler catches the coroutine's cancellation inside a loop and goes round again "
                          "instead of re-raising it.",
                    consequence="Cancelling the task (the user's stop, a timeout) is swallowed: the loop keeps "
                                "running as if nothing happened, and the stop never takes effect.",
                    direction="Re-raise `asyncio.CancelledError` (catch `Exception` for errors, or add "
                              "`except asyncio.CancelledError: raise` first).")


def _goes_round(handler: ir.Handler) -> bool:
    """The handler's body is empty or ends with `continue`, and nothing in it re-raises or returns."""
    body = handler.body
    goes_on = not body or (isinstance(body[-1], ir.Jump) and body[-1].kind == "continue")
    return goes_on and not any(isinstance(s, ir.Raise | ir.Return) for s in ir.walk_block(body))


def _never(_parts: object) -> bool:
    return False


def _same_loop_nodes(loop: ir.Loop) -> Iterator[ir.Node]:
    from harness_audit.static.sem.roles import same_loop

    return same_loop(loop.body)
