"""C10 · Cancellation propagation — Python rules.

Shapes detected:
- `cancelled-error-swallowed`: `except asyncio.CancelledError` (or `suppress(CancelledError)`) that never re-raises.
- `catch-all-swallows-cancellation`: `except BaseException` / bare `except` around an await that never re-raises.
- `spawn-without-cancel-kill`: an asyncio subprocess (or a new-session Popen) with no kill in `finally` or on cancel.
- `kill-spares-process-group`: a shell spawn stopped by `proc.kill()` / `terminate()` alone: its children live on.
- `blocking-call-in-coroutine`: sync `requests` / `urlopen` / `subprocess.run` in `async def`: cancel cannot reach it.

`spawn-without-cancel-kill` also covers a plain `Popen` whose output is read in a loop (a blocking read).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from harness_audit.findings import CheckId, Verdict
from harness_audit.static import idioms
from harness_audit.static.lang.python import FunctionNode, LoopNode, PyModule, PyProject, subtree
from harness_audit.static.registry import Hit, rule

_CANCEL_NAMES = {"CancelledError", "Cancelled", "get_cancelled_exc_class()"}
_CATCH_ALL = {"BaseException"}
_LOG_NAMES = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "print"}
_ASYNC_SPAWNS = {"asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell"}
_KILL_METHODS = {"kill", "terminate", "send_signal"}
_GROUP_KILLS = {"os.killpg", "os.kill"}
_BLOCKING_SPAWNS = {"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
                    "subprocess.getoutput", "subprocess.getstatusoutput", "os.system"}
_SYNC_HTTP_MODULES = ("requests.", "httpx.", "urllib.request.", "urllib3.")
_SPAWN_SHORT = {"create_subprocess_exec", "create_subprocess_shell", "Popen"}
_BLOCKING_SHORT = {"run", "call", "check_call", "check_output", "getoutput", "getstatusoutput", "system", "urlopen",
                   *idioms.HTTP_METHODS}
# ---------------------------------------------------------------- shared helpers
def _text(node: ast.AST, limit: int = 60) -> str:
    """Short source-like text of a node for a claim (unparsed: cheap, unlike slicing the whole file)."""
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short_name(call: ast.Call) -> str:
    """The called name's last part, read straight off the AST (a cheap filter before `call_name`)."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _has_await(mod: PyModule, stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Await | ast.AsyncFor | ast.AsyncWith) for n in mod.walk_body(stmts))


def _raises(mod: PyModule, stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Raise) for n in mod.walk_body(stmts))


def _cancelled_receivers(mod: PyModule, fn: FunctionNode) -> set[str]:
    """Names whose `.cancel()` the function calls (and the collections their loop variables come from)."""
    out: set[str] = set()
    for node in mod.walk(fn):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "cancel"):
            continue
        recv = mod.dotted(node.func.value)
        if not recv:
            continue
        out.add(recv)
        for loop in mod.enclosing_loops(node):
            if isinstance(loop, ast.For | ast.AsyncFor) and mod.dotted(loop.target) == recv:
                iterable = mod.dotted(loop.iter)
                if iterable:
                    out.add(iterable)
    return out


def _awaits_cancelled_child(mod: PyModule, fn: FunctionNode, body: list[ast.stmt]) -> bool:
    """Whether `body` reaps a task (one this function cancelled, a shielded one, an existing task object)."""
    cancelled = _cancelled_receivers(mod, fn)
    awaits: list[ast.Await] = []
    for node in mod.walk_body(body):
        if isinstance(node, ast.Call) and mod.call_name(node) == "asyncio.shield":
            return True  # shielded work is protected on purpose
        if isinstance(node, ast.Await):
            awaits.append(node)
    return bool(awaits) and all(_reaps(mod, a, cancelled) for a in awaits)


def _reaps(mod: PyModule, node: ast.Await, cancelled: set[str]) -> bool:
    """Awaiting an existing task or future (not starting new work), or one this function cancelled."""
    if isinstance(node.value, ast.Name | ast.Attribute):
        return True
    return any(isinstance(sub, ast.Name | ast.Attribute) and mod.dotted(sub) in cancelled
               for sub in subtree(node.value))


def _in_cleanup(mod: PyModule, node: ast.AST) -> bool:
    """Whether `node` runs in an except handler or a `finally` of an enclosing try (unwinding already)."""
    return any(part in {"handler", "finally"} for _, part in mod.enclosing_trys(node))


def _keeps_exception(mod: PyModule, fn: FunctionNode, handler: ast.ExceptHandler) -> bool:
    """Whether the handler hands the exception on (stores or passes it) or sets a flag read later."""
    for node in mod.walk_body(handler.body):
        if isinstance(node, ast.Call) and _short_name(node) in {"exc_info", "set_exception", "throw"}:
            return True
    if handler.name:
        for node in mod.walk_body(handler.body):
            if not (isinstance(node, ast.Name) and node.id == handler.name):
                continue
            parent = mod.parent(node)
            if isinstance(parent, ast.Call) and idioms.last(mod.call_name(parent)) in _LOG_NAMES:
                continue
            if isinstance(parent, ast.keyword):
                continue
            return True
    flags = {t.id for n in mod.walk_body(handler.body) if isinstance(n, ast.Assign)
             for t in n.targets if isinstance(t, ast.Name)}
    flags |= {n.target.id for n in mod.walk_body(handler.body)
              if isinstance(n, ast.AnnAssign | ast.AugAssign) and isinstance(n.target, ast.Name)}
    if not flags:
        return False
    end = getattr(handler, "end_lineno", handler.lineno)
    return any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in flags and n.lineno > end
               for n in mod.walk(fn))


def _stmt_list_of(parent: ast.AST, child: ast.AST) -> list[ast.stmt] | None:
    for field in ("body", "orelse", "finalbody", "handlers"):
        stmts = getattr(parent, field, None)
        if isinstance(stmts, list) and child in stmts:
            return stmts  # type: ignore[return-value]  # the AST field lists hold statements
    return None


def _work_follows(mod: PyModule, fn: FunctionNode, stmt: ast.stmt) -> bool:
    """Whether the function goes on doing something after `stmt` (a loop iterates again, code follows)."""
    child: ast.AST = stmt
    for anc in mod.ancestors(stmt):
        if isinstance(anc, ast.For | ast.AsyncFor | ast.While):
            return True
        stmts = _stmt_list_of(anc, child)
        if stmts is not None:
            after = stmts[stmts.index(child) + 1:]  # type: ignore[arg-type]  # child is in the list
            if any(not _is_trivial_exit(s) for s in after):
                return True
        if anc is fn:
            return False
        child = anc
    return False


def _waits_until_done(loop: ast.AST) -> bool:
    test = loop.test if isinstance(loop, ast.While) else None
    return test is not None and any(isinstance(n, ast.Attribute) and n.attr in {"done", "cancelled"}
                                    for n in subtree(test))


def _is_trivial_exit(stmt: ast.stmt) -> bool:
    if isinstance(stmt, ast.Pass):
        return True
    return isinstance(stmt, ast.Return) and (stmt.value is None or
                                             (isinstance(stmt.value, ast.Constant) and stmt.value.value is None))


_TASK_SPAWNERS = {"create_task", "ensure_future", "start_soon", "run_coroutine_threadsafe", "spawn", "start"}
_usage_cache: dict[int, tuple[PyProject, dict[str, set[str]]]] = {}


def _coroutine_usage(project: PyProject) -> dict[str, set[str]]:
    """Function name → how the project uses its calls: `awaited` directly and/or started as a `task`."""
    hit = _usage_cache.get(id(project))
    if hit is not None and hit[0] is project:
        return hit[1]
    usage: dict[str, set[str]] = {}
    for mod in project.modules.values():
        for call in mod.calls():
            short = _short_name(call)
            if short in _TASK_SPAWNERS or "spawn" in short:
                for arg in call.args:  # `start_soon(worker, ...)`: the coroutine function passed by reference
                    ref = arg.attr if isinstance(arg, ast.Attribute) else arg.id if isinstance(arg, ast.Name) else None
                    if ref:
                        usage.setdefault(ref, set()).add("task")
            func = call.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
            if name is None:
                continue
            parent = mod.parent(call)
            if isinstance(parent, ast.Await):
                usage.setdefault(name, set()).add("awaited")
            elif isinstance(parent, ast.Call) and idioms.last(mod.call_name(parent)) in _TASK_SPAWNERS:
                usage.setdefault(name, set()).add("task")
    _usage_cache.clear()
    _usage_cache[id(project)] = (project, usage)
    return usage


def _left_at(tr: ast.stmt, body: list[ast.stmt], loops: list[LoopNode]) -> ast.stmt:
    """Where control goes on from when the handler `body` runs: after the enclosing loop when the handler ends in
    `break` (`except CancelledError: break` leaves the reconnect loop), otherwise after the `try`."""
    if body and isinstance(body[-1], ast.Break) and loops:
        return loops[0]
    return tr


def _callers_end_after(mod: PyModule, project: PyProject, fn: FunctionNode) -> bool:
    """Whether the project calls `fn` somewhere and every call it finds is an `await` after which the caller
    does nothing more (the awaiting coroutine ends with it)."""
    callers = idioms.callers_of(project, fn, mod)
    if not callers:
        return False
    for cmod, call in callers:
        stmt = cmod.parent(call)
        if not isinstance(stmt, ast.Await):
            return False
        stmt = cmod.parent(stmt)
        caller = cmod.enclosing_function(call)
        if not isinstance(stmt, ast.Expr) or caller is None or _work_follows(cmod, caller, stmt):
            return False
    return True


def _swallow_verdict(mod: PyModule, project: PyProject, fn: FunctionNode, tr: ast.stmt,
                     body: list[ast.stmt]) -> tuple[Verdict, str] | None:
    """Confirmed when work goes on after the swallowed cancel or an awaiting caller goes on; None for a task root."""
    last_stmt = body[-1] if body else None
    returns = [n for n in mod.walk_body(body) if isinstance(n, ast.Return)]
    leaves = bool(returns) or any(isinstance(n, ast.Break | ast.Raise) for n in mod.walk_body(body))
    loops = mod.enclosing_loops(tr)
    if loops and _waits_until_done(loops[0]):
        return None  # `while not fut.done():` keeps waiting on purpose until the awaited work has finished
    if isinstance(last_stmt, ast.Continue) or (not leaves and loops):
        return Verdict.CONFIRMED, "the loop carries on with its next iteration"
    usage = _coroutine_usage(project).get(fn.name, set())
    if usage == {"task"}:
        return None  # a task's root: ending it (after cleanup) does stop the work
    if any(not _is_trivial_exit(r) for r in returns):
        return Verdict.CONFIRMED, "the coroutine returns a value as if the operation had completed"
    if not returns and _work_follows(mod, fn, _left_at(tr, body, loops)):
        return Verdict.CONFIRMED, "the coroutine carries on with the code after the try"
    if "awaited" in usage and _callers_end_after(mod, project, fn):
        return None  # the coroutine ends, and so does every caller awaiting it: nothing runs on after the stop
    if "awaited" in usage:
        return Verdict.CONFIRMED, f"the caller awaiting `{fn.name}` carries on as if it had completed"
    if "task" in usage:
        return None  # the coroutine is a task's root: ending it quietly does stop the work
    return Verdict.SUSPECTED, "the coroutine ends normally instead of as cancelled"


# ---------------------------------------------------------------- swallowed cancellation
@rule(CheckId.C10, lang="python", name="cancelled-error-swallowed")
def cancelled_error_swallowed(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags `except CancelledError` (or `suppress(CancelledError)`) in a coroutine that never re-raises it.

    Swallowing the cancellation makes the task look finished and lets its caller continue, so a
    stop request is lost. Reaping a child task the function itself cancelled is the exempt idiom, and so is a
    handler that leaves (`break` out of a reconnect loop) when nothing follows in the coroutine and every caller
    found awaiting it ends there too.
    """
    if idioms.is_test_module(mod):
        return
    if "Cancel" not in mod.source:
        return
    for tr in mod.trys():
        if not any(mod.handler_names(h) & _CANCEL_NAMES for h in tr.handlers):
            continue
        fn = mod.enclosing_function(tr)
        if not isinstance(fn, ast.AsyncFunctionDef) or not _has_await(mod, tr.body) or _in_cleanup(mod, tr):
            continue
        for handler in tr.handlers:
            if not mod.handler_names(handler) & _CANCEL_NAMES:
                continue
            if _raises(mod, handler.body) or _keeps_exception(mod, fn, handler):
                continue
            if _awaits_cancelled_child(mod, fn, tr.body):
                continue
            found = _swallow_verdict(mod, project, fn, tr, handler.body)
            if found is None:
                continue
            verdict, after = found
            yield _swallow_hit(handler, "`except CancelledError`", verdict, after)
    for with_node in mod.nodes(ast.With):
        if not any(isinstance(i.context_expr, ast.Call) and _short_name(i.context_expr) == "suppress"
                   for i in with_node.items):
            continue
        fn = mod.enclosing_function(with_node)
        if not isinstance(fn, ast.AsyncFunctionDef) or _in_cleanup(mod, with_node):
            continue
        for item in with_node.items:
            ctx = item.context_expr
            if not (isinstance(ctx, ast.Call) and idioms.last(mod.call_name(ctx)) == "suppress"):
                continue
            if not any(idioms.last(mod.dotted(a) or "") in _CANCEL_NAMES for a in ctx.args):
                continue
            if not _has_await(mod, with_node.body) or _awaits_cancelled_child(mod, fn, with_node.body):
                continue
            found = _swallow_verdict(mod, project, fn, with_node, [])
            if found is None:
                continue
            verdict, after = found
            yield _swallow_hit(with_node, "`suppress(CancelledError)`", verdict, after)


def _swallow_hit(node: ast.AST, what: str, verdict: Verdict, after: str) -> Hit:
    return Hit(
        node=node, verdict=verdict,
        claim=f"{what} swallows the cancellation without re-raising it; {after}",
        consequence="pressing stop does not stop this task: its caller sees a normal result and keeps going",
        direction="do the cleanup, then `raise` (or re-raise after a flag); only swallow when reaping a task "
                  "this code cancelled itself",
        confirm_hint="" if verdict is Verdict.CONFIRMED else
        "verify whether a caller awaits this coroutine and must stop when the run is cancelled; if so the "
        "swallowed CancelledError lets it continue",
    )


@rule(CheckId.C10, lang="python", name="catch-all-swallows-cancellation")
def catch_all_swallows_cancellation(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags `except BaseException` or a bare `except:` around an await in a coroutine, with no re-raise.

    `CancelledError` is a `BaseException`, so such a handler eats the stop request together with
    real errors; the task carries on as if nothing had been asked of it.
    """
    if idioms.is_test_module(mod):
        return
    if "BaseException" not in mod.source and "except:" not in mod.source:
        return
    for tr in mod.trys():
        if not any(h.type is None or mod.handler_names(h) & _CATCH_ALL for h in tr.handlers):
            continue
        fn = mod.enclosing_function(tr)
        if not isinstance(fn, ast.AsyncFunctionDef) or not _has_await(mod, tr.body) or _in_cleanup(mod, tr):
            continue
        for handler in tr.handlers:
            names = mod.handler_names(handler)
            if handler.type is not None and not names & _CATCH_ALL:
                continue
            if any(mod.handler_names(h) & _CANCEL_NAMES for h in tr.handlers):
                continue  # a dedicated CancelledError clause comes first and is judged by its own rule
            if _raises(mod, handler.body) or _keeps_exception(mod, fn, handler):
                continue
            if _awaits_cancelled_child(mod, fn, tr.body):
                continue
            found = _swallow_verdict(mod, project, fn, tr, handler.body)
            if found is None:
                continue
            verdict, after = found
            what = "bare `except:`" if handler.type is None else "`except BaseException`"
            yield Hit(
                node=handler, verdict=verdict,
                claim=f"{what} around an await also catches CancelledError and never re-raises it; {after}",
                consequence="pressing stop while this await is pending is swallowed: the task keeps going",
                direction="catch `Exception` instead, or re-raise `asyncio.CancelledError` before handling the rest",
                confirm_hint="" if verdict is Verdict.CONFIRMED else
                "verify whether a caller awaits this coroutine and must stop when the run is cancelled",
            )


# ---------------------------------------------------------------- processes
def _handle_name(mod: PyModule, spawn: ast.Call) -> str | None:
    """The local name the spawned process is bound to (`proc = await create_subprocess_exec(...)`)."""
    node: ast.AST = spawn
    parent = mod.parent(node)
    if isinstance(parent, ast.Await):
        node, parent = parent, mod.parent(parent)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        return parent.targets[0].id
    if isinstance(parent, ast.AnnAssign) and isinstance(parent.target, ast.Name):
        return parent.target.id
    if isinstance(parent, ast.withitem) and isinstance(parent.optional_vars, ast.Name):
        return parent.optional_vars.id
    return None


def _handle_escapes(mod: PyModule, fn: FunctionNode, name: str) -> bool:
    """Whether the process handle leaves the function (returned, stored, passed on): its lifetime is owned elsewhere."""
    for node in mod.walk(fn, into_functions=True):
        if not (isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load)):
            continue
        parent = mod.parent(node)
        if isinstance(parent, ast.Return | ast.Yield | ast.Call | ast.keyword | ast.Tuple | ast.List | ast.Dict):
            return True
        if isinstance(parent, ast.Assign | ast.AnnAssign) and parent.value is node:
            return True
    return False


def _kill_calls(mod: PyModule, fn: FunctionNode, name: str) -> list[ast.Call]:
    out: list[ast.Call] = []
    for node in mod.walk(fn, into_functions=True):
        if not isinstance(node, ast.Call):
            continue
        group_kill = mod.call_name(node) in _GROUP_KILLS and any(
            name in {n.id for n in subtree(a) if isinstance(n, ast.Name)} for a in node.args)
        own_kill = isinstance(node.func, ast.Attribute) and node.func.attr in _KILL_METHODS and \
            mod.dotted(node.func.value) == name
        if group_kill or own_kill:
            out.append(node)
    return out


def _on_cancel_path(mod: PyModule, node: ast.AST) -> bool:
    """Whether `node` runs when the function is cancelled: a `finally`, or a handler catching cancellation."""
    for tr, part in mod.enclosing_trys(node):
        if part == "finally":
            return True
        if part != "handler":
            continue
        for handler in tr.handlers:
            if handler.lineno <= getattr(node, "lineno", 0) <= (handler.end_lineno or handler.lineno):
                names = mod.handler_names(handler)
                if handler.type is None or names & (_CANCEL_NAMES | _CATCH_ALL):
                    return True
    return False


def _awaits_after(mod: PyModule, fn: FunctionNode, node: ast.AST) -> bool:
    line = getattr(node, "lineno", 0)
    return any(isinstance(n, ast.Await) and n.lineno > line for n in mod.walk(fn))


def _new_session(mod: PyModule, spawn: ast.Call) -> bool:
    for kw in ("start_new_session", "process_group", "preexec_fn"):
        value = mod.keyword(spawn, kw)
        if value is not None and not (isinstance(value, ast.Constant) and value.value in (False, None)):
            return True
    return False


def _reads_in_loop(mod: PyModule, fn: FunctionNode, name: str) -> bool:
    """Whether `fn` reads the process's output in a loop (`for line in proc.stdout`, `proc.stdout.readline()` in
    a `while`): a read that blocks while the process is quiet, so stop must kill the process to end it."""
    pipes = {f"{name}.stdout", f"{name}.stderr"}
    for loop in mod.loops():
        if mod.enclosing_function(loop) is not fn:
            continue
        if isinstance(loop, ast.For | ast.AsyncFor) and mod.dotted(loop.iter) in pipes:
            return True
        if isinstance(loop, ast.While) and any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "readline" and
                mod.dotted(n.func.value) in pipes for n in mod.walk_body(loop.body)):
            return True
    return False


@rule(CheckId.C10, lang="python", name="spawn-without-cancel-kill")
def spawn_without_cancel_kill(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a spawned process that nothing kills when the surrounding task is cancelled.

    An asyncio subprocess outlives the cancelled coroutine that awaited it; a `Popen` in a new
    session does not even get the terminal's Ctrl-C. Without a kill in `finally` (or in a
    CancelledError / BaseException handler) the process keeps running after stop.
    """
    if idioms.is_test_module(mod):
        return
    if "subprocess" not in mod.source:
        return
    for call in mod.calls():
        if _short_name(call) not in _SPAWN_SHORT:
            continue
        callee = mod.call_name(call)
        fn = mod.enclosing_function(call)
        # a Popen awaited around in a coroutine is as exposed to cancellation as an asyncio process
        is_async = callee in _ASYNC_SPAWNS or (callee == "subprocess.Popen" and isinstance(fn, ast.AsyncFunctionDef)
                                               and _awaits_after(mod, fn, call))
        name = _handle_name(mod, call)
        reads = callee == "subprocess.Popen" and fn is not None and name is not None and _reads_in_loop(mod, fn, name)
        if not is_async and not reads and not (callee == "subprocess.Popen" and _new_session(mod, call)):
            continue
        if fn is None or (is_async and not isinstance(fn, ast.AsyncFunctionDef)):
            continue
        if name is None or _handle_escapes(mod, fn, name):
            continue
        kills = _kill_calls(mod, fn, name)
        if any(_on_cancel_path(mod, k) for k in kills):
            continue
        only = " (it is killed only on a timeout or an ordinary error)" if kills else ""
        yield Hit(
            node=call,
            claim=f"process `{name}` is spawned with no kill registered for cancellation{only}",
            consequence="when the run is cancelled the child process (and its children) keeps running",
            direction="wrap the wait in `try/except asyncio.CancelledError` (or `finally`) that kills the process "
                      "group (`start_new_session=True` + `os.killpg`) and re-raises",
        )


@rule(CheckId.C10, lang="python", name="kill-spares-process-group")
def kill_spares_process_group(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags `proc.kill()` / `terminate()` on a shell spawn that has no session of its own.

    The direct child is the shell; the commands it started are grandchildren that a signal to
    the shell alone does not reach, so they survive the stop.
    """
    if idioms.is_test_module(mod):
        return
    if "shell" not in mod.source:
        return
    for call in mod.calls():
        if _short_name(call) not in _SPAWN_SHORT:
            continue
        callee = mod.call_name(call)
        shell = callee == "asyncio.create_subprocess_shell" or (
            callee in {"subprocess.Popen", "asyncio.create_subprocess_exec"}
            and isinstance(mod.keyword(call, "shell"), ast.Constant)
            and getattr(mod.keyword(call, "shell"), "value", False) is True
        )
        if not shell or _new_session(mod, call):
            continue
        fn = mod.enclosing_function(call)
        name = _handle_name(mod, call)
        if fn is None or name is None:
            continue
        kills = _kill_calls(mod, fn, name)
        if not kills or any(mod.call_name(k) in _GROUP_KILLS for k in kills):
            continue
        first = kills[0]
        yield Hit(
            node=first,
            claim=f"`{_text(first.func)}()` signals only the shell started at line {call.lineno}; "
                  "the commands it launched are not in a group of their own",
            consequence="after stop, the shell dies but its child commands keep running",
            direction="spawn with `start_new_session=True` and stop with `os.killpg(proc.pid, signal.SIGTERM)`",
        )


# ---------------------------------------------------------------- blocking calls
def _session_names(mod: PyModule) -> set[str]:
    """Names bound to a `requests.Session()` in this module (`session`, `self.session`)."""
    out: set[str] = set()
    for node in mod.nodes(ast.Assign):
        value = node.value
        if isinstance(value, ast.Call) and mod.call_name(value) in {"requests.Session", "requests.session"}:
            out.update(d for d in (mod.dotted(t) for t in node.targets) if d)
    return out


def _blocking_kind(mod: PyModule, call: ast.Call, sessions: set[str]) -> str | None:
    if _short_name(call) not in _BLOCKING_SHORT or isinstance(mod.parent(call), ast.Await):
        return None
    dotted = mod.dotted(call.func) or ""
    head = dotted.split(".")[0]
    if head not in mod.imports and not (sessions and idioms.receiver(dotted) in sessions):
        return None  # a local (`requests: asyncio.Queue`) shadows nothing we know
    callee = mod.call_name(call)
    if callee in _BLOCKING_SPAWNS:
        return "process"
    if callee == "urllib.request.urlopen":
        return "request"
    verb = idioms.last(callee)
    if verb not in idioms.HTTP_METHODS:
        return None
    if callee.startswith(_SYNC_HTTP_MODULES) and callee.count(".") == 1:
        return "request"
    if idioms.receiver(callee) in sessions:
        return "request"
    return None


@rule(CheckId.C10, lang="python", name="blocking-call-in-coroutine")
def blocking_call_in_coroutine(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a synchronous request or process run directly inside `async def`.

    Cancellation is delivered at an await; a blocking `requests.get` or `subprocess.run` has
    none, so stop waits for it to finish (and the whole event loop stalls meanwhile).
    """
    if idioms.is_test_module(mod):
        return
    if not any(m in mod.source for m in ("requests", "httpx", "urllib", "subprocess", "os.system")):
        return
    sessions = _session_names(mod)
    for call in mod.calls():
        kind = _blocking_kind(mod, call, sessions)
        fn = mod.enclosing_function(call) if kind else None
        if kind is None or not isinstance(fn, ast.AsyncFunctionDef):
            continue
        params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
        if (mod.dotted(call.func) or "").split(".")[0] in params:
            continue
        callee = mod.call_name(call)
        yield Hit(
            node=call,
            claim=f"blocking `{callee}` runs directly in coroutine `{fn.name}`; no await can deliver the cancel",
            consequence="pressing stop waits for this " + kind + " to finish, and the event loop is frozen meanwhile",
            direction="use an async client (httpx.AsyncClient, asyncio.create_subprocess_exec with a kill on "
                      "cancel) or run it in a worker that can be abandoned",
        )
