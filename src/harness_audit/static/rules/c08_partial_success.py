"""C8 · Partial success — Python rules.

Shapes detected:
- `parallel-batch-all-or-nothing`: `results = await asyncio.gather(*batch)` without `return_exceptions=True`.
- `task-group-cancels-siblings`: tasks started in a loop inside `asyncio.TaskGroup` / `anyio.create_task_group()`.
- `executor-map-stops-at-first-error`: `list(executor.map(fn, items))` (or a loop over it): the first raise ends it.
- `future-results-unguarded`: `[f.result() for f in futures]` / `for f in as_completed(fs): out.append(f.result())`.
- `batch-try-discards-partial-results`: one `try` around a loop that collects results, whose handler drops them.
- `send-loop-aborts-unrecorded`: a loop of sends with no per-item `try`, recording deliveries it reports only after.

Every rule judges what the batch runs: a batch of tool calls is confirmed, a batch of other
requests (fetches, searches, embeddings) is suspected, and a batch of anything else (callbacks,
pure composition, a generic combinator over the caller's awaitables) is not reported.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from harness_audit.findings import CheckId, Verdict
from harness_audit.static import idioms
from harness_audit.static.lang.python import FunctionNode, PyModule, PyProject, subtree
from harness_audit.static.registry import Hit, rule

_GATHER = {"asyncio.gather"}
_TASK_GROUPS = {"asyncio.TaskGroup", "anyio.create_task_group", "trio.open_nursery"}
_TASK_STARTERS = {"create_task", "start_soon", "start"}
_TASK_WRAPPERS = {"create_task", "ensure_future", "run_coroutine_threadsafe", "to_thread"}
_SUBMITTERS = {"submit", "apply_async", "create_task", "ensure_future", "run_coroutine_threadsafe"}
_EXECUTOR_NAME = re.compile(r"(executor|pool)$", re.I)
_EXECUTOR_CLASSES = {"concurrent.futures.ThreadPoolExecutor", "concurrent.futures.ProcessPoolExecutor",
                     "multiprocessing.Pool", "multiprocessing.pool.ThreadPool"}
_CONSUMERS = {"list", "tuple", "set", "dict", "sorted", "zip", "enumerate", "sum", "any", "all"}
_FUTURES_NAME = re.compile(r"(futures?|futs?|tasks?|jobs?|pending|done|finished|completed)$", re.I)
_AWAITABLES_NAME = re.compile(r"^_*(coros?|coroutines|awaitables?|aws|tasks|futures|futs|jobs)$", re.I)
_CATCH_ALL = {"Exception", "BaseException"}
_TOOL_SOURCE = re.compile(r"(tool_?calls?|tool_?uses?|function_?calls?|parallel_calls|\bcalls\b|\bactions\b)", re.I)
_TOOL_NAME = re.compile(r"tool", re.I)
_IO_NAME = re.compile(r"(fetch|download|upload|request|send|post|embed|search|query|invoke|execute|complete|"
                      r"generate|scrape|crawl|browse|call_api|run_agent|subagent|sub_agent)", re.I)

BatchKind = Literal["tool", "io"]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Batch:
    """What a batch runs per item and what it iterates."""

    items: list[ast.expr] = field(default_factory=list[ast.expr])
    """Per-item calls (`run_tool(c)`) or worker references (`run_one` in `executor.map(run_one, xs)`)."""
    sources: list[ast.expr] = field(default_factory=list[ast.expr])
    """The collections the batch walks (`tool_calls`)."""


# ---------------------------------------------------------------- shared helpers
def _text(node: ast.AST, limit: int = 60) -> str:
    """Short source-like text of a node for a claim (unparsed: cheap, unlike slicing the whole file)."""
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _short_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _resolve_ref(mod: PyModule, project: PyProject, expr: ast.expr, near: ast.AST) -> list[FunctionNode]:
    """Definitions a call or function reference may reach (`self._run_one`, `run_one`, an imported helper)."""
    if isinstance(expr, ast.Call):
        expr = expr.func
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id in {"self", "cls"}:
        cls = mod.enclosing_class(near)
        method = mod.method(cls.name, expr.attr) if cls is not None else None
        return [method] if method is not None else []
    if isinstance(expr, ast.Name):
        for scope in mod.ancestors(near):
            if isinstance(scope, FunctionNode):
                nested = [f for f in mod.local_functions(expr.id) if mod.enclosing_function(f) is scope]
                if nested:
                    return nested
        top = [f for f in mod.local_functions(expr.id) if isinstance(mod.parent(f), ast.Module)]
        if top:
            return top
        target = mod.imports.get(expr.id, "")
        owner, _, name = target.rpartition(".")
        other = project.module(owner) if owner else None
        return other.local_functions(name) if other is not None else []
    return []


def _worker(item: ast.expr) -> ast.expr:
    """What an item really runs: unwraps `await`, `create_task(f(x))`, `submit(ctx.run, f, x)`, `partial(f, x)`."""
    while True:
        if isinstance(item, ast.Await):
            item = item.value
            continue
        if isinstance(item, ast.Call) and item.args:
            short = _short_name(item)
            if short in _TASK_WRAPPERS or short == "partial":
                item = item.args[0]
                continue
            if short == "run" and len(item.args) > 1 and "ctx" in (ast.unparse(item.func).lower()):
                item = item.args[0]
                continue
        if isinstance(item, ast.Attribute) and item.attr == "run" and "ctx" in ast.unparse(item.value).lower():
            return item  # `ctx.run` itself: the caller passes the real worker next
        return item


def _handles_own_errors(mod: PyModule, fn: FunctionNode) -> bool:
    """Whether `fn` turns failures into results itself: a catch-all handler (or `suppress`) that does not re-raise."""
    for node in mod.walk(fn):
        if isinstance(node, ast.ExceptHandler) and (node.type is None or mod.handler_names(node) & _CATCH_ALL) \
                and not any(isinstance(n, ast.Raise) for n in mod.walk_body(node.body)):
            return True
        if isinstance(node, ast.withitem) and isinstance(node.context_expr, ast.Call) and \
                _short_name(node.context_expr) == "suppress" and \
                any(idioms.last(mod.dotted(a) or "") in _CATCH_ALL for a in node.context_expr.args):
            return True
    return False


def _is_parameter(fn: FunctionNode | None, expr: ast.expr) -> bool:
    if fn is None or not isinstance(expr, ast.Name):
        return False
    args = fn.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    if args.vararg is not None:
        names.add(args.vararg.arg)
    return expr.id in names


def _loop_source(expr: ast.expr) -> ast.expr:
    """`enumerate(xs)` / `zip(xs, ys)` / `xs.items()` → `xs`."""
    if isinstance(expr, ast.Call) and _short_name(expr) in {"enumerate", "zip", "list", "sorted"} and expr.args:
        return _loop_source(expr.args[0])
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and \
            expr.func.attr in {"items", "values", "keys"}:
        return expr.func.value
    return expr


def _is_generic(mod: PyModule, fn: FunctionNode | None, batch: _Batch) -> bool:
    """Whether the batch is only the awaitables a caller passed in: a combinator, judged at its call sites."""
    for source in batch.sources:
        src = _loop_source(source)
        if not _is_parameter(fn, src) or not isinstance(src, ast.Name):
            continue
        vararg = fn.args.vararg if fn is not None else None
        if (vararg is not None and vararg.arg == src.id) or _AWAITABLES_NAME.search(src.id):
            return True
    return False


def _batch_kind(mod: PyModule, project: PyProject, batch: _Batch, near: ast.AST) -> BatchKind | None:
    """`tool` for a batch of tool calls, `io` for other requests, None for anything else."""
    if any(_TOOL_SOURCE.search(ast.unparse(s)) for s in batch.sources):
        return "tool"
    kind: BatchKind | None = None
    for item in batch.items:
        work = _worker(item)
        callee = work.func if isinstance(work, ast.Call) else work
        name = mod.dotted(callee) or ""
        if _TOOL_NAME.search(name):
            return "tool"
        if _IO_NAME.search(name) or (isinstance(work, ast.Call) and _io_call(mod, work)):
            kind = "io"
        for fn in _resolve_ref(mod, project, work, near):
            if idioms.TOOL_DISPATCH_NAME.search(fn.name) or \
                    (idioms.is_agent_project(project) and idioms.is_tool_function(mod, fn, project)):
                return "tool"
            for node in mod.walk(fn):
                if isinstance(node, ast.Call) and _TOOL_NAME.search(mod.dotted(node.func) or ""):
                    return "tool"
                if isinstance(node, ast.Call) and _io_call(mod, node):
                    kind = "io"
    return kind


def _io_call(mod: PyModule, call: ast.Call) -> bool:
    return bool(_IO_NAME.search(mod.dotted(call.func) or "")) or idioms.is_http_call(mod, call) or \
        idioms.is_model_call(mod, call) or idioms.is_spawn(mod, call)


def _items_cannot_fail(mod: PyModule, project: PyProject, batch: _Batch, near: ast.AST) -> bool:
    fns = [fn for item in batch.items for fn in _resolve_ref(mod, project, _worker(item), near)]
    return bool(fns) and all(_handles_own_errors(mod, fn) for fn in fns)


def _judge(mod: PyModule, project: PyProject, fn: FunctionNode | None, batch: _Batch,
           near: ast.AST) -> BatchKind | None:
    """The batch's kind when it deserves a finding, None when it does not (combinator, safe items, no operation)."""
    if _is_generic(mod, fn, batch) or _items_cannot_fail(mod, project, batch, near):
        return None
    return _batch_kind(mod, project, batch, near)


def _inside_library_internals(mod: PyModule, fn: FunctionNode | None) -> bool:
    """A fan-out inside one storage/embedding operation (`abatch`, `_embed…`), not a batch of independent work.

    Such helpers return one combined result with no per-item slot, so a caller has nothing partial to keep.
    """
    if fn is None:
        return False
    name = fn.name.lower()
    return any(w in name for w in ("batch", "embed", "index", "_store", "_prepare")) or \
        "store" in mod.module_name.split(".")


def _verdict(kind: BatchKind) -> Verdict:
    return Verdict.CONFIRMED if kind == "tool" else Verdict.SUSPECTED


def _hint(kind: BatchKind, line: int) -> str:
    if kind == "tool":
        return ""
    return (f"verify that the operations batched at line {line} are independent and that the caller could use the "
            "results of those that succeeded when one fails")


def _loop_sources(mod: PyModule, node: ast.AST, stop: ast.AST | None) -> list[ast.expr]:
    """The iterables of the loops and comprehensions around `node`, up to `stop` or the function."""
    out: list[ast.expr] = []
    for anc in mod.ancestors(node):
        if anc is stop or isinstance(anc, FunctionNode | ast.Lambda | ast.ClassDef):
            break
        if isinstance(anc, ast.For | ast.AsyncFor):
            out.append(anc.iter)
        elif isinstance(anc, ast.ListComp | ast.GeneratorExp | ast.SetComp | ast.DictComp):
            out.extend(g.iter for g in anc.generators)
    return out


_CONSEQUENCE = "one failed operation turns the whole batch into a failure and the results that succeeded are discarded"


# ---------------------------------------------------------------- gather
def _gather_batch(mod: PyModule, fn: FunctionNode | None, expr: ast.expr) -> _Batch:
    """Per-item expressions of `*expr`: a comprehension's element, or what a loop appends to a named list."""
    batch = _Batch()
    if isinstance(expr, ast.ListComp | ast.GeneratorExp | ast.SetComp):
        batch.items.append(expr.elt)
        batch.sources.extend(g.iter for g in expr.generators)
        return batch
    if not (isinstance(expr, ast.Name) and fn is not None):
        return batch
    if _is_parameter(fn, expr):
        batch.sources.append(expr)
    for node in mod.walk(fn):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == expr.id for t in node.targets):
            if isinstance(node.value, ast.ListComp | ast.GeneratorExp | ast.SetComp):
                batch.items.append(node.value.elt)
                batch.sources.extend(g.iter for g in node.value.generators)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in {"append", "add"} and mod.dotted(node.func.value) == expr.id and node.args:
            batch.items.append(node.args[0])
            batch.sources.extend(_loop_sources(mod, node, fn))
    return batch


def _same_callee(mod: PyModule, args: list[ast.expr]) -> bool:
    """`gather(run_tool(a), run_tool(b), run_tool(c))`: several calls of one function are a batch too."""
    calls = [_worker(a) for a in args]
    names = {mod.dotted(c.func) for c in calls if isinstance(c, ast.Call)}
    return len(args) >= 2 and len(names) == 1 and None not in names and all(isinstance(c, ast.Call) for c in calls)


def _result_is_used(mod: PyModule, node: ast.AST) -> bool:
    """Whether the value of `node` is kept (assigned, returned, passed on), through `await` and wrappers."""
    parent = mod.parent(node)
    while isinstance(parent, ast.Await) or (isinstance(parent, ast.Call) and _short_name(parent) in
                                             {"wait_for", "shield", "ensure_future", "create_task"}):
        parent = mod.parent(parent)
    return not isinstance(parent, ast.Expr)


@rule(CheckId.C8, lang="python", name="parallel-batch-all-or-nothing")
def parallel_batch_all_or_nothing(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags `results = await asyncio.gather(*batch)` over tool calls or requests, with no `return_exceptions=True`.

    The first item to raise makes the whole `gather` raise; the results of the items that
    succeeded are never returned, so one failure throws the whole batch away.
    """
    if idioms.is_test_module(mod) or "gather" not in mod.source:
        return
    for call in mod.calls():
        if _short_name(call) != "gather" or mod.call_name(call) not in _GATHER:
            continue
        flag = mod.keyword(call, "return_exceptions")
        if mod.has_kwargs_splat(call) or (flag is not None and not (isinstance(flag, ast.Constant) and not flag.value)):
            continue
        starred = [a.value for a in call.args if isinstance(a, ast.Starred)]
        if not (starred or _same_callee(mod, call.args)) or not _result_is_used(mod, call):
            continue
        fn = mod.enclosing_function(call)
        batch = _Batch(items=[] if starred else list(call.args))
        for expr in starred:
            part = _gather_batch(mod, fn, expr)
            batch.items.extend(part.items)
            batch.sources.extend(part.sources)
        kind = _judge(mod, project, fn, batch, call)
        if kind is None or (kind != "tool" and _inside_library_internals(mod, fn)):
            continue
        shown = f"*{_text(starred[0], 40)}" if starred else f"{_text(call.args[0], 30)}, ..."
        yield Hit(
            node=call, verdict=_verdict(kind),
            claim=f"`asyncio.gather({shown})` has no `return_exceptions=True`: the first failing "
                  f"{'tool call' if kind == 'tool' else 'item'} raises and the results of the others are lost",
            consequence=_CONSEQUENCE,
            direction="pass `return_exceptions=True` and handle each result (value or exception) on its own",
            confirm_hint=_hint(kind, call.lineno),
        )


# ---------------------------------------------------------------- task groups
def _in_loop_within(mod: PyModule, node: ast.AST, outer: ast.AST) -> bool:
    for anc in mod.ancestors(node):
        if anc is outer:
            return False
        if isinstance(anc, ast.For | ast.AsyncFor | ast.While | ast.comprehension | ast.ListComp | ast.GeneratorExp):
            return True
    return False


def _started_item(start: ast.Call) -> ast.expr | None:
    """`tg.create_task(f(x))` runs `f(x)`; `tg.start_soon(f, x)` runs `f(x)`, rebuilt here for resolution."""
    if not start.args:
        return None
    if isinstance(start.func, ast.Attribute) and start.func.attr == "start_soon":
        fake = ast.Call(func=start.args[0], args=list(start.args[1:]), keywords=[])
        return ast.copy_location(fake, start)
    return start.args[0]


@rule(CheckId.C8, lang="python", name="task-group-cancels-siblings")
def task_group_cancels_siblings(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a task group (`asyncio.TaskGroup`, anyio, trio) that starts one task per tool call or request.

    The first task to fail cancels every sibling still running, so the batch's independent
    results are lost together with the one that failed.
    """
    if idioms.is_test_module(mod) or not any(k in mod.source for k in ("TaskGroup", "task_group", "nursery")):
        return
    for node in mod.nodes(ast.AsyncWith):
        for item in node.items:
            ctx = item.context_expr
            if not (isinstance(ctx, ast.Call) and mod.call_name(ctx) in _TASK_GROUPS):
                continue
            group = mod.dotted(item.optional_vars) if item.optional_vars is not None else None
            if group is None:
                continue
            starts = [n for n in mod.walk_body(node.body) if isinstance(n, ast.Call)
                      and isinstance(n.func, ast.Attribute) and n.func.attr in _TASK_STARTERS
                      and mod.dotted(n.func.value) == group and _in_loop_within(mod, n, node)]
            started = _started_item(starts[0]) if starts else None
            if started is None:
                continue
            batch = _Batch(items=[started], sources=_loop_sources(mod, starts[0], node))
            fn = mod.enclosing_function(node)
            kind = _judge(mod, project, fn, batch, starts[0])
            if kind is None:
                continue
            yield Hit(
                node=ctx, verdict=_verdict(kind),
                claim=f"one task per {'tool call' if kind == 'tool' else 'item'} is started in `{_text(ctx)}`: the "
                      "first failure cancels every sibling and their results are lost",
                consequence=_CONSEQUENCE,
                direction="catch each item's exception inside the task and record it as that item's outcome, or "
                          "use `asyncio.gather(..., return_exceptions=True)`",
                confirm_hint=_hint(kind, starts[0].lineno),
            )


# ---------------------------------------------------------------- executor.map
def _executor_names(mod: PyModule, fn: FunctionNode | None) -> set[str]:
    """Names bound to an executor or pool in `fn` (`with ThreadPoolExecutor() as ex`, `pool = Pool()`)."""
    out: set[str] = set()
    if fn is None:
        return out
    for node in mod.walk(fn):
        if isinstance(node, ast.withitem) and isinstance(node.context_expr, ast.Call) and \
                mod.call_name(node.context_expr) in _EXECUTOR_CLASSES and node.optional_vars is not None:
            out.add(mod.dotted(node.optional_vars) or "")
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                mod.call_name(node.value) in _EXECUTOR_CLASSES:
            out.update(mod.dotted(t) or "" for t in node.targets)
    return out


def _is_consumed(mod: PyModule, call: ast.Call) -> bool:
    """Whether a lazy `map` result is iterated: `list(...)`, `[*...]`, a `for` or a comprehension over it."""
    parent = mod.parent(call)
    if isinstance(parent, ast.Call) and _short_name(parent) in _CONSUMERS:
        return True
    if isinstance(parent, ast.Starred):
        return True
    return isinstance(parent, ast.For | ast.comprehension) and parent.iter is call


@rule(CheckId.C8, lang="python", name="executor-map-stops-at-first-error")
def executor_map_stops_at_first_error(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags iterating `executor.map(fn, items)` (thread/process pools) over tool calls or requests.

    The iterator re-raises the first item's exception where it is consumed; the results of the
    items that finished, and of every later item, are lost with it.
    """
    if idioms.is_test_module(mod) or ".map(" not in mod.source:
        return
    for call in mod.calls():
        if _short_name(call) != "map" or not isinstance(call.func, ast.Attribute) or len(call.args) < 2:
            continue
        recv = mod.dotted(call.func.value) or ""
        fn = mod.enclosing_function(call)
        if not (_EXECUTOR_NAME.search(idioms.last(recv)) or recv in _executor_names(mod, fn)):
            continue
        if not _is_consumed(mod, call):
            continue
        kind = _judge(mod, project, fn, _Batch(items=[call.args[0]], sources=list(call.args[1:])), call)
        if kind is None:
            continue
        yield Hit(
            node=call, verdict=_verdict(kind),
            claim=f"`{recv}.map({_text(call.args[0], 40)}, ...)` is consumed in order: the first item that raises "
                  "ends the iteration and the other items' results are lost",
            consequence=_CONSEQUENCE,
            direction="submit each item and read `as_completed` futures with a `try` around each `.result()`, or make "
                      "the worker return an error value instead of raising",
            confirm_hint=_hint(kind, call.lineno),
        )


# ---------------------------------------------------------------- future.result() loops
def _futures_iterable(mod: PyModule, expr: ast.expr) -> bool:
    if isinstance(expr, ast.Call):
        name = _short_name(expr)
        if name == "as_completed":
            return True
        if name in {"list", "sorted", "tuple"} and expr.args:
            return _futures_iterable(mod, expr.args[0])
        return False
    dotted = mod.dotted(expr)
    return bool(dotted) and bool(_FUTURES_NAME.search(idioms.last(dotted)))


def _submitted_batch(mod: PyModule, fn: FunctionNode) -> _Batch:
    """What the function submits to an executor or the loop (`executor.submit(worker, item)` in a loop)."""
    batch = _Batch()
    for node in mod.walk(fn):
        if not (isinstance(node, ast.Call) and _short_name(node) in _SUBMITTERS and node.args):
            continue
        sources = _loop_sources(mod, node, fn)
        if not sources:
            continue
        first = node.args[0]
        if _short_name(node) == "submit":
            if isinstance(first, ast.Attribute) and first.attr == "run" and len(node.args) > 1:
                first = node.args[1]  # `submit(ctx.run, worker, item)`
            batch.items.append(ast.copy_location(ast.Call(func=first, args=[], keywords=[]), node))
        else:
            batch.items.append(first)
        batch.sources.extend(sources)
    return batch


def _guarded_within(mod: PyModule, node: ast.AST, outer: ast.AST) -> bool:
    """Whether a `try` body between `outer` and `node` protects `node`."""
    for anc in mod.ancestors(node):
        if anc is outer:
            return False
        if isinstance(anc, ast.Try) and any(node is n for n in mod.walk_body(anc.body)):
            return True
    return False


def _checks_outcome(mod: PyModule, body: list[ast.AST], target: str) -> bool:
    """Whether the loop inspects each future first (`f.exception()`, `f.cancelled()`)."""
    for stmt in body:
        for n in [stmt, *mod.walk(stmt)]:
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and \
                    n.func.attr in {"exception", "cancelled"} and mod.dotted(n.func.value) == target:
                return True
    return False


def _owning_iteration(mod: PyModule, call: ast.Call,
                      target: str) -> tuple[ast.AST, ast.expr, list[ast.AST]] | None:
    """The comprehension or `for` loop whose variable is `target`, with its iterable and body."""
    for anc in mod.ancestors(call):
        if isinstance(anc, FunctionNode | ast.Lambda | ast.ClassDef):
            return None
        if isinstance(anc, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            for gen in anc.generators:
                if mod.dotted(gen.target) == target:
                    return anc, gen.iter, [anc]
        if isinstance(anc, ast.For | ast.AsyncFor) and mod.dotted(anc.target) == target:
            return anc, anc.iter, list(anc.body)
    return None


def _collects(mod: PyModule, call: ast.Call, loop: ast.AST) -> bool:
    """Whether the loop keeps the result (assigns, appends or yields it), so there is something to lose."""
    for anc in mod.ancestors(call):
        if anc is loop:
            return False
        if isinstance(anc, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Return | ast.Yield):
            return True
        if isinstance(anc, ast.Call) and _short_name(anc) in {"append", "extend", "add", "update", "put"}:
            return True
    return False


@rule(CheckId.C8, lang="python", name="future-results-unguarded")
def future_results_unguarded(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags collecting `f.result()` over futures of submitted tool calls or requests with no per-future `try`.

    `.result()` re-raises the item's exception, which ends the comprehension or loop: the
    results already collected, and those of the futures not yet read, are dropped.
    """
    if idioms.is_test_module(mod) or ".result(" not in mod.source:
        return
    for call in mod.calls():
        if _short_name(call) != "result" or not isinstance(call.func, ast.Attribute) or \
                any(kw.arg != "timeout" for kw in call.keywords) or len(call.args) > 1:
            continue
        target = mod.dotted(call.func.value)
        found = _owning_iteration(mod, call, target) if target else None
        fn = mod.enclosing_function(call) if found else None
        if found is None or fn is None or target is None:
            continue
        owner, iterable, body = found
        if not _futures_iterable(mod, iterable) or _checks_outcome(mod, body, target):
            continue
        if isinstance(owner, ast.For | ast.AsyncFor) and (_guarded_within(mod, call, owner)
                                                         or not _collects(mod, call, owner)):
            continue
        kind = _judge(mod, project, fn, _submitted_batch(mod, fn), call)
        if kind is None:
            continue
        yield Hit(
            node=call, verdict=_verdict(kind),
            claim=f"`{target}.result()` is read for each of `{_text(iterable, 40)}` with no per-future `try`: the "
                  "first failed future raises and the other results are dropped",
            consequence=_CONSEQUENCE,
            direction=f"wrap `{target}.result()` in a `try` per future and record the exception as that item's "
                      "outcome",
            confirm_hint=_hint(kind, call.lineno),
        )


# ---------------------------------------------------------------- one try around a batch loop
_TOOL_RUN = re.compile(r"(^|[._])(a?run|a?invoke|a?call|execute|dispatch)_?tools?($|_)|tools?\.(a?run|a?invoke|"
                       r"a?call|execute)$|(^|[._])(fetch|download|upload|send)", re.I)


_SEND_OP = re.compile(r"^_*(send|post|publish|notify|deliver|dispatch|charge|close|open|create|delete|update|"
                      r"submit|upload|cancel|archive|assign)(_|$)", re.I)
_op_cache: dict[int, tuple[PyProject, dict[int, bool]]] = {}


def _does_io(project: PyProject, mod: PyModule, call: ast.Call) -> bool:
    """Whether a project function the call reaches (two hops) makes a request or runs a command (cached)."""
    hit = _op_cache.get(0)
    if hit is None or hit[0] is not project:
        hit = (project, {})
        _op_cache[0] = hit
    refs = project.resolve_call(mod, call)
    found = False
    for ref in [*refs, *project.reachable(refs, depth=1)] if refs else []:
        key = id(ref.node)
        if key not in hit[1]:
            hit[1][key] = any(isinstance(n, ast.Call) and (idioms.is_http_call(ref.module, n) or
                                                           idioms.is_spawn(ref.module, n))
                              for n in ref.module.walk(ref.node))
        found = found or hit[1][key]
    return found


def _operation_in(mod: PyModule, expr: ast.AST, item: set[str],
                  project: PyProject | None = None) -> ast.Call | ast.Await | None:
    """The per-item operation inside `expr`: an await, request, spawn or tool run that takes the loop variable
    (given the project, also a call named for an effect, or a project function that makes a request)."""
    for n in [expr, *mod.walk(expr)]:
        call = n.value if isinstance(n, ast.Await) else n
        if not isinstance(call, ast.Call):
            continue
        if not any(isinstance(a, ast.Name) and a.id in item for a in subtree(call)):
            continue
        if isinstance(n, ast.Await) or idioms.is_http_call(mod, call) or idioms.is_spawn(mod, call) or \
                _TOOL_RUN.search(mod.dotted(call.func) or ""):
            return n
        if project is not None and isinstance(call.func, ast.Attribute | ast.Name) and (
                _SEND_OP.search(idioms.last(mod.dotted(call.func) or "")) or _does_io(project, mod, call)):
            return n
    return None


def _accumulator(mod: PyModule, loop: ast.For | ast.AsyncFor,
                 project: PyProject | None = None) -> tuple[str, ast.Call | ast.Await] | None:
    """The list a loop appends per-item results to, and the operation whose result it appends (given the project,
    also the item itself appended after a per-item operation: `op(item); done.append(item)`)."""
    item = {n.id for n in subtree(loop.target) if isinstance(n, ast.Name)}
    for node in mod.walk_body(loop.body):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in {"append", "extend"} and node.args:
            name = mod.dotted(node.func.value)
            op = _operation_in(mod, node.args[0], item)
            if op is None and project is not None and any(isinstance(a, ast.Name) and a.id in item
                                                          for a in subtree(node.args[0])):
                op = next((o for st in loop.body if st.lineno < node.lineno
                           for o in [_operation_in(mod, st, item, project)] if o is not None), None)
            if name and op is not None:
                return name, op
    return None


def _handler_drops(mod: PyModule, handler: ast.ExceptHandler, acc: str) -> bool:
    """Whether the handler returns a failure without using the accumulated results."""
    if not handler.body or not isinstance(handler.body[-1], ast.Return):
        return False
    head = acc.split(".")[0]
    return not any(isinstance(n, ast.Name | ast.Attribute) and (mod.dotted(n) or "").split(".")[0] == head
                   for n in mod.walk_body(handler.body))


@rule(CheckId.C8, lang="python", name="batch-try-discards-partial-results")
def batch_try_discards_partial_results(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags one `try` around a loop that collects per-item results, whose handler returns a failure without them.

    A single failing item jumps out of the loop into the handler, which reports the batch as
    failed; everything already collected is thrown away.
    """
    if idioms.is_test_module(mod):
        return
    for tr in mod.trys():
        if not any(h.body and isinstance(h.body[-1], ast.Return) for h in tr.handlers):
            continue
        for loop in (s for s in tr.body if isinstance(s, ast.For | ast.AsyncFor)):
            if any(isinstance(n, ast.Try) for n in mod.walk_body(loop.body)):
                continue
            found = _accumulator(mod, loop, project)
            if found is None:
                continue
            acc, op = found
            dropping = [h for h in tr.handlers if _handler_drops(mod, h, acc)]
            if not dropping:
                continue
            yield Hit(
                node=dropping[0],
                verdict=Verdict.SUSPECTED,
                claim=f"one `try` wraps the whole loop over `{_text(loop.iter, 40)}`; this handler returns without "
                      f"the results already collected in `{acc}`",
                consequence=_CONSEQUENCE,
                direction="move the `try` inside the loop and record each item's success or failure separately",
                confirm_hint=f"verify that the items at line {loop.lineno} are independent (the operation at line "
                             f"{op.lineno} does not need earlier items to have succeeded)",
            )


# ---------------------------------------------------------------- a loop of sends with no per-item handling
_SEND_ONLY = re.compile(r"^_*(send|post|publish|notify|deliver|charge)(_|$)", re.I)


def _unprotected(mod: PyModule, loop: ast.For | ast.AsyncFor, fn: FunctionNode) -> bool:
    """No `try` inside the loop, and none around it in its function."""
    if any(isinstance(n, ast.Try) for n in mod.walk_body(loop.body)):
        return False
    return not any(isinstance(anc, ast.Try) for anc in mod.ancestors(loop) if anc is not fn and
                   any(n is fn for n in mod.ancestors(anc)))


def _sends_catch_per_item(mod: PyModule, project: PyProject, sends: list[ast.Call]) -> bool:
    """Whether every send is a project function that turns its own failure into a result (`_send_file` catching
    and returning False): the failing item is then recorded and the loop goes on."""
    for send in sends:
        targets = _resolve_ref(mod, project, send, send)
        if not targets or not all(_handles_own_errors(mod, t) for t in targets):
            return False
    return True


@rule(CheckId.C8, lang="python", name="send-loop-aborts-unrecorded")
def send_loop_aborts_unrecorded(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a loop that sends each item (`mail.send(item)`), records the delivered ones in a list it only
    reports after the loop, and handles no per-item failure.

    The first failing send raises out of the loop: the deliveries that already happened are neither
    returned nor saved, so the caller sees one failure for the whole batch. A send through a project function that
    catches its own failure and returns a result is handled per item.
    """
    if idioms.is_test_module(mod):
        return
    by_loop: dict[int, tuple[ast.For | ast.AsyncFor, list[ast.Call]]] = {}
    for call in mod.calls_to([n for n in mod.called_names() if _SEND_ONLY.search(n)]):
        if not isinstance(call.func, ast.Attribute):
            continue
        loop = next((a for a in mod.ancestors(call) if isinstance(a, ast.For | ast.AsyncFor | FunctionNode)), None)
        if isinstance(loop, ast.For | ast.AsyncFor):
            by_loop.setdefault(id(loop), (loop, []))[1].append(call)
    for loop, candidates in by_loop.values():
        fn = mod.enclosing_function(loop)
        if fn is None:
            continue
        item = {n.id for n in subtree(loop.target) if isinstance(n, ast.Name)}
        sends = [n for n in candidates if any(isinstance(a, ast.Name) and a.id in item for a in subtree(n))]
        found = _accumulator(mod, loop, project) if sends else None
        if found is None or not _unprotected(mod, loop, fn) or _sends_catch_per_item(mod, project, sends):
            continue
        acc, _op = found
        after = [n for n in mod.walk(fn) if isinstance(n, ast.Name) and n.id == acc and n.lineno > loop.end_lineno]
        if not after or "." in acc:
            continue
        yield Hit(
            node=sends[0], verdict=Verdict.SUSPECTED,
            claim=f"each item of `{_text(loop.iter, 40)}` is sent here with no per-item `try`; the deliveries "
                  f"recorded in `{acc}` are only returned or saved after the loop",
            consequence="the first failing send aborts the loop: the items already delivered are neither reported "
                        "nor saved, and the whole batch looks failed (and may be sent again)",
            direction="handle each send's failure inside the loop (record it per item), or save the delivered items "
                      "before re-raising",
            confirm_hint=f"verify that the items of the loop at line {loop.lineno} are independent and that no caller "
                         "records the partial deliveries",
        )
