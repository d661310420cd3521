"""C1 · Tool-call pairing completeness — Python rules.

Shapes detected:
- `except-continue-skips-result`: in a loop over tool calls, an `except` that `continue`s / `break`s / `return`s
  before the loop records the call's result.
- `except-swallows-result`: in a loop over tool calls, the result is recorded inside the `try` and the `except`
  neither records one nor re-raises.
- `early-exit-skips-result`: in a loop over tool calls, a denial / unknown-tool / validation / budget check that
  leaves the iteration before any result is recorded.
- `parallel-batch-all-or-nothing`: tool calls dispatched with `asyncio.gather` without `return_exceptions=True`,
  or inside an `asyncio.TaskGroup` / anyio task group, with a per-call coroutine that can raise.
- `executor-map-stops-at-first-error`: tool calls run with `Executor.map` (raises at the first failed item while
  consuming in order) or collected with `future.result()` in an `as_completed` loop with no per-future `try`.
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from harness_audit.findings import CheckId, Verdict
from harness_audit.static import idioms
from harness_audit.static.lang.python import FuncRef, FunctionNode, PyModule, PyProject, subtree
from harness_audit.static.registry import Hit, rule

_CALLS_ITER = re.compile(
    r"(tool_?calls?|function_?calls?|tool_?uses?|tool_?use_?blocks?|tool_?requests?|tool_?invocations?"
    r"|(^|_)calls)$", re.I)
"""Last dotted part of an iterable that holds the model's tool calls."""
_CALL_TARGET = re.compile(
    r"^(tool_?call|call|tc|tool_?use|fc|func_?call|function_?call|tool_?request|invocation|(tool_?)?call_?part)$",
    re.I)
"""Loop variable names that hold one tool call."""
_SINK = re.compile(
    r"(messages|history|conversation|transcript|msgs|results?|outputs?|responses?|observations?|returns?|parts"
    r"|items|replies|contents?|blocks)$", re.I)
"""Receivers that collect tool results."""
_SINK_METHODS = {"append", "extend", "put", "put_nowait", "appendleft", "add_message", "add_messages"}
_RECORD_FUNC = re.compile(
    r"(add|append|record|push|emit|save|store|put|set|send)_?\w*(result|message|response|output|observation|"
    r"return|reply|error)s?$", re.I)
"""Helpers whose name says they record a result (`add_tool_result`, `append_message`)."""
_RESULT_WORD = re.compile(r"(result|return|output|response|observation|reply|message|error)", re.I)
_CALL_OBJECT = re.compile(r"(ToolCall|FunctionCall|ToolUse)", re.I)
_RESULT_OBJECT = re.compile(r"(Output|Result|Return|Observation)", re.I)
_LOG_RECEIVER = re.compile(r"(^|\.)(_?log|_?logger|logging|console|warnings|traceback|span|_?tracer)$", re.I)
_LOG_FUNCS = {"print", "logging.info", "logging.debug", "logging.warning", "logging.error", "logging.exception",
              "warnings.warn", "traceback.print_exc"}

_DENIAL = re.compile(
    r"(approv|allow|permit|permission|\bdeni|\bdeny|reject|confirm|consent|authori[sz]|forbid|blocked|policy)",
    re.I)
_UNKNOWN = re.compile(r"(unknown|not\s+in\s+[\w.]*(tool|function|registry|handler)|(tool|registry)\w*\.get\()",
                      re.I)
_VALIDATION = re.compile(r"(valid|schema|malformed|parse_?error)", re.I)
_BUDGET = re.compile(r"(budget|limit|max_|exceed|quota|cancel|abort|interrupt|deadline|stop_?event|signal)", re.I)
_MISSING_IMPL = re.compile(r"^(tool|func|fn|handler|impl|function|callable_?tool|tool_?fn|tool_?func)$", re.I)
_TOOL_WORD = re.compile(
    r"(tool_?calls?|function_?calls?|tool_?uses?|(call|run|execute|exec|invoke|dispatch|handle|process)_?(single_?)?"
    r"tool|tool_?(run|exec|invoke|call)|(^|[^a-z_])calls\b)", re.I)
"""Text that says an expression is about tool CALLS (not a `tools/` directory or a tool definition)."""

_GATHER = {"asyncio.gather"}
_TASK_GROUPS = {"asyncio.TaskGroup", "anyio.create_task_group", "trio.open_nursery"}
_BROAD = {"Exception", "BaseException"}


# ---------------------------------------------------------------- what a loop over tool calls looks like
def _text(node: ast.AST) -> str:
    """The node's code without comments (names are matched against it); long expressions are cut short."""
    try:
        return ast.unparse(node)[:400]
    except (ValueError, RecursionError):  # a malformed or pathologically deep expression
        return ""


def _iter_base(expr: ast.expr) -> ast.expr:
    """The collection a `for` iterates, seen through `enumerate(...)`, `list(...)`, `x or []`, `x[i:]`, `await`."""
    cur = expr
    for _ in range(4):
        if isinstance(cur, ast.Call) and isinstance(cur.func, ast.Name) and cur.args and cur.func.id in {
                "enumerate", "list", "sorted", "reversed", "tuple", "zip", "iter"}:
            cur = cur.args[0]
        elif isinstance(cur, ast.Call) and isinstance(cur.func, ast.Attribute) and cur.func.attr in {
                "values", "items", "copy"}:
            cur = cur.func.value
        elif isinstance(cur, ast.BoolOp) and cur.values:
            cur = cur.values[0]
        elif isinstance(cur, ast.Subscript) and isinstance(cur.slice, ast.Slice) or isinstance(cur, ast.Await):
            cur = cur.value
        else:
            break
    return cur


def _loop_target(loop: ast.For | ast.AsyncFor) -> str | None:
    target = loop.target
    if isinstance(target, ast.Tuple) and target.elts:
        target = target.elts[-1]
    return target.id if isinstance(target, ast.Name) else None


def _tool_loop(mod: PyModule, loop: ast.AST) -> tuple[str, bool] | None:
    """(description, strong) when `loop` iterates tool calls; strong when the collection's name says so."""
    if not isinstance(loop, ast.For | ast.AsyncFor):
        return None
    base = mod.dotted(_iter_base(loop.iter)) or ""
    tail = idioms.last(base) if base else ""
    if tail and _CALLS_ITER.search(tail):
        return base, True
    target = _loop_target(loop)
    if target and _CALL_TARGET.match(target):
        return base or target, False
    return None


@dataclass(frozen=True, slots=True)
class _ToolLoop:
    """A `for` over tool calls that records results."""

    loop: ast.For | ast.AsyncFor
    """The loop."""
    what: str
    """The iterated collection, as written."""
    strong: bool
    """Whether the collection's name (not only the loop variable's) says it holds tool calls."""
    records: list[ast.AST]
    """Nodes in the body that record a result."""
    target: str | None
    """The loop variable holding one call."""


def _tool_loops(mod: PyModule, project: PyProject) -> list[_ToolLoop]:
    """Loops over tool calls whose body records results, computed once per module."""
    memo = _memo(project)
    key = ("loops", id(mod))
    hit = memo.get(key)
    if isinstance(hit, list):
        return hit  # pyright: ignore[reportUnknownVariableType]
    out: list[_ToolLoop] = []
    for loop in mod.loops():
        shape = _tool_loop(mod, loop)
        if shape is None or not isinstance(loop, ast.For | ast.AsyncFor):
            continue
        records = [n for n in mod.walk_body(loop.body) if _is_record(mod, n)]
        if records:
            out.append(_ToolLoop(loop, shape[0], shape[1], records, _loop_target(loop)))
    memo[key] = out
    return out


def _is_log_call(mod: PyModule, call: ast.Call) -> bool:
    name = mod.call_name(call)
    return name in _LOG_FUNCS or bool(_LOG_RECEIVER.search(idioms.receiver(name)))


def _is_record(mod: PyModule, node: ast.AST) -> bool:
    """Whether `node` records a result: an append to a result sink, a recording helper, a `yield`, `out[k] = v`."""
    if isinstance(node, ast.Yield | ast.YieldFrom):
        # a yielded "call started" event is not the call's result
        value = node.value.func if isinstance(node.value, ast.Call) else node.value
        name = mod.dotted(value) if value is not None else None
        return bool(name) and bool(_RESULT_WORD.search(idioms.last(name or "")))
    if isinstance(node, ast.Assign | ast.AugAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return any(isinstance(t, ast.Subscript) and _sink_name(mod, t.value) for t in targets)
    if not isinstance(node, ast.Call) or _is_log_call(mod, node):
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        if func.attr in _SINK_METHODS and _sink_name(mod, func.value):
            return not (node.args and _builds_call_object(mod, node.args[0]))
        return bool(_RECORD_FUNC.search(func.attr))
    return isinstance(func, ast.Name) and bool(_RECORD_FUNC.search(func.id))


def _builds_call_object(mod: PyModule, expr: ast.expr) -> bool:
    """Whether `expr` constructs the tool CALL itself (`ToolCallPart(...)`), not its result: parsing, not answering."""
    if not isinstance(expr, ast.Call):
        return False
    name = idioms.last(mod.call_name(expr))
    return bool(_CALL_OBJECT.search(name)) and not _RESULT_OBJECT.search(name)


def _sink_name(mod: PyModule, expr: ast.AST) -> bool:
    if idioms.is_message_list(mod, expr):
        return True
    dotted = mod.dotted(expr)
    return bool(dotted) and bool(_SINK.search(idioms.last(dotted)))


_MEMO: list[tuple[PyProject, dict[tuple[str, int], object]]] = []
"""The last project's memo (one project at a time, so nothing outlives the next audit)."""


def _memo(project: PyProject) -> dict[tuple[str, int], object]:
    """Per-project memo keyed by (what, id of a node or module); ids are stable while the project is alive."""
    if not _MEMO or _MEMO[0][0] is not project:
        _MEMO[:] = [(project, {})]
    entry = _MEMO[0]
    return entry[1]


def _function_records(project: PyProject, ref: FuncRef, depth: int = 2) -> bool:
    """Whether a project function (or one it calls, `depth` hops) records a result; cached per definition."""
    memo = _memo(project)
    key = ("records", id(ref.node))
    hit = memo.get(key)
    if isinstance(hit, bool):
        return hit
    memo[key] = False  # recursion guard
    found = any(_is_record(ref.module, n) for n in ref.module.walk(ref.node))
    if not found and depth > 0:
        found = any(_function_records(project, callee, depth - 1) for callee in project.callees(ref))
    memo[key] = found
    return found


def _block_records(mod: PyModule, project: PyProject, stmts: list[ast.stmt]) -> bool:
    """Whether a block records a result directly or through a project helper it calls."""
    for node in mod.walk_body(stmts):
        if _is_record(mod, node):
            return True
        if (isinstance(node, ast.Call) and not _is_log_call(mod, node)
                and any(_function_records(project, ref) for ref in project.resolve_call(mod, node))):
            return True
    return False


def _passes_call_to_helper(mod: PyModule, stmts: list[ast.stmt], target: str | None) -> str | None:
    """An unresolved, non-logging call in `stmts` that is handed the loop's call (it may record the result)."""
    if target is None:
        return None
    for node in mod.walk_body(stmts):
        if not isinstance(node, ast.Call) or _is_log_call(mod, node):
            continue
        args = [*node.args, *(kw.value for kw in node.keywords)]
        if any(isinstance(n, ast.Name) and n.id == target for a in args for n in subtree(a)):
            return mod.call_name(node) or "a helper"
    return None


def _exit_of(stmts: list[ast.stmt]) -> ast.Continue | ast.Break | ast.Return | None:
    for stmt in stmts:
        if isinstance(stmt, ast.Continue | ast.Break | ast.Return):
            return stmt
    return None


def _raises(mod: PyModule, stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Raise) for n in mod.walk_body(stmts))


def _own_loop(mod: PyModule, node: ast.AST, loop: ast.AST) -> bool:
    loops = mod.enclosing_loops(node)
    return bool(loops) and loops[0] is loop


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    start, end = getattr(outer, "lineno", 0), getattr(outer, "end_lineno", 0) or 0
    line = getattr(node, "lineno", -1)
    return start <= line <= end


def _exit_word(stmt: ast.stmt) -> str:
    return "continue" if isinstance(stmt, ast.Continue) else "break" if isinstance(stmt, ast.Break) else "return"


# ---------------------------------------------------------------- sequential dispatch
def _loop_trys(mod: PyModule, tl: _ToolLoop) -> Iterator[ast.Try | ast.TryStar]:
    """`try` statements directly in the loop (not in a nested loop or function)."""
    for kind in (ast.Try, ast.TryStar):
        for tr in _in_range(mod, kind, tl.loop):
            if isinstance(tr, ast.Try | ast.TryStar) and _own_loop(mod, tr, tl.loop):
                yield tr


def _verdict(tl: _ToolLoop, helper: str | None) -> Verdict:
    return Verdict.CONFIRMED if tl.strong and helper is None else Verdict.SUSPECTED


def _loop_hint(tl: _ToolLoop, helper: str | None) -> str:
    if tl.strong and helper is None:
        return ""
    if helper:
        return f"verify that `{helper}` records a result for the call it is handed"
    return (f"verify that `{tl.what}` holds the model's tool calls and that nothing before the next request "
            "answers the skipped call")


@rule(CheckId.C1, lang="python", name="except-continue-skips-result")
def except_continue_skips_result(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags an `except` inside a loop over tool calls that `continue`s, `break`s or `return`s while the result is
    recorded later in the loop. The failed call gets no result, so the next request carries an unanswered call and
    the provider rejects it."""
    for tl in _tool_loops(mod, project):
        for tr in _loop_trys(mod, tl):
            if _block_records(mod, project, tr.finalbody):
                continue
            for handler in tr.handlers:
                exit_stmt = _exit_of(handler.body)
                if exit_stmt is None or _raises(mod, handler.body) or _block_records(mod, project, handler.body):
                    continue
                later = [r for r in tl.records if r.lineno > tr.lineno and not _inside(r, handler)]
                if not later:
                    continue
                helper = _passes_call_to_helper(mod, handler.body, tl.target)
                caught = ", ".join(sorted(mod.handler_names(handler))) or "every exception"
                yield Hit(
                    node=handler,
                    verdict=_verdict(tl, helper),
                    claim=f"in the loop over `{tl.what}`, the handler for {caught} runs `{_exit_word(exit_stmt)}` "
                          f"before the call's result is recorded (line {later[0].lineno}), so the failed call gets "
                          "no result",
                    consequence="the next request carries a tool call with no result and the provider rejects it "
                                "(HTTP 400), or the model never learns the call failed",
                    direction="record an error result for the call inside the handler (or in `finally`) before "
                              "leaving the iteration",
                    confirm_hint=_loop_hint(tl, helper),
                )


@rule(CheckId.C1, lang="python", name="except-swallows-result")
def except_swallows_result(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a loop over tool calls whose only result record sits inside a `try` whose `except` neither records a
    result nor re-raises. When the tool fails, the handler swallows the error and the call is left unanswered."""
    for tl in _tool_loops(mod, project):
        for tr in _loop_trys(mod, tl):
            in_body = [r for r in tl.records if any(_inside(r, s) for s in tr.body)]
            if not in_body or len(in_body) != len([r for r in tl.records if r.lineno >= tr.lineno]):
                continue
            first = min(r.lineno for r in in_body)
            risky = any(isinstance(n, ast.Call) and n.lineno < first and not _is_log_call(mod, n)
                        for n in mod.walk_body(tr.body))
            if not risky or _block_records(mod, project, tr.finalbody):
                continue
            for handler in tr.handlers:
                if _exit_of(handler.body) is not None or _raises(mod, handler.body):
                    continue
                if _block_records(mod, project, handler.body):
                    continue
                helper = _passes_call_to_helper(mod, handler.body, tl.target)
                caught = ", ".join(sorted(mod.handler_names(handler))) or "every exception"
                yield Hit(
                    node=handler,
                    verdict=_verdict(tl, helper),
                    claim=f"in the loop over `{tl.what}`, the result is recorded only inside the `try` (line "
                          f"{first}); the handler for {caught} swallows the error without recording one",
                    consequence="a failing tool leaves its call unanswered: the next request is rejected by the "
                                "provider, or the model waits for a result that never comes",
                    direction="append an error result for the call in the handler, or record the result in "
                              "`finally`",
                    confirm_hint=_loop_hint(tl, helper),
                )


def _early_exit_reason(mod: PyModule, test: ast.expr) -> str | None:
    text = _text(test)
    if _DENIAL.search(text):
        return "approval/permission"
    if _UNKNOWN.search(text):
        return "unknown tool"
    inner = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    if isinstance(inner, ast.Name) and _MISSING_IMPL.match(inner.id) and inner is not test:
        return "unknown tool"
    if (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and _MISSING_IMPL.match(test.left.id)
            and isinstance(test.ops[0], ast.Is) and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None):
        return "unknown tool"
    if _VALIDATION.search(text):
        return "argument validation"
    if _BUDGET.search(text):
        return "budget/cancellation"
    return None


@rule(CheckId.C1, lang="python", name="early-exit-skips-result")
def early_exit_skips_result(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a denial, unknown-tool, validation or budget check inside a loop over tool calls that `continue`s,
    `break`s or `return`s before the loop records a result. That call (and, for `break`/`return`, every later call
    of the batch) is left unanswered before the next model request."""
    for tl in _tool_loops(mod, project):
        normal = [r for r in tl.records if not any(part == "handler" for _, part in mod.enclosing_trys(r))]
        for node in _in_range(mod, ast.If, tl.loop):
            if not isinstance(node, ast.If) or not _own_loop(mod, node, tl.loop):
                continue
            if any(part == "handler" for _, part in mod.enclosing_trys(node)):
                continue
            exit_stmt = _exit_of(node.body)
            if exit_stmt is None or _raises(mod, node.body) or _block_records(mod, project, node.body):
                continue
            if not any(r.lineno > (node.end_lineno or node.lineno) for r in normal):
                continue
            reason = _early_exit_reason(mod, node.test)
            if reason is None:
                continue
            if not isinstance(exit_stmt, ast.Continue) and _answers_after_loop(mod, project, tl.loop):
                continue
            helper = _passes_call_to_helper(mod, node.body, tl.target)
            rest = "" if isinstance(exit_stmt, ast.Continue) else " and every later call of the batch"
            yield Hit(
                node=node,
                verdict=_verdict(tl, helper),
                claim=f"in the loop over `{tl.what}`, the {reason} check runs `{_exit_word(exit_stmt)}` before a "
                      f"result is recorded, leaving this call{rest} without a result",
                consequence="the next request carries unanswered tool calls and the provider rejects it (HTTP 400); "
                            "the model is never told the call was refused",
                direction="record a synthetic result (\"denied\", \"unknown tool\", \"invalid arguments\", "
                          "\"cancelled\") for every call skipped here before leaving",
                confirm_hint=_loop_hint(tl, helper),
            )


def _answers_after_loop(mod: PyModule, project: PyProject, loop: ast.AST) -> bool:
    """Whether the code right after `loop` in its block records results (synthetic answers for skipped calls)."""
    parent = mod.parent(loop)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and loop in block:
            after: list[ast.stmt] = block[block.index(loop) + 1:]  # pyright: ignore[reportUnknownVariableType]
            return _block_records(mod, project, after)
    return False


# ---------------------------------------------------------------- parallel dispatch
def _in_range(mod: PyModule, kind: type[ast.AST], scope: ast.AST) -> list[ast.AST]:
    """Nodes of one type inside `scope`'s lines, from the module index (no walk of the scope)."""
    nodes = mod.nodes(kind)
    start, end = getattr(scope, "lineno", 0), getattr(scope, "end_lineno", 0) or 0
    lo = bisect.bisect_left(nodes, start, key=lambda n: getattr(n, "lineno", 0))
    hi = bisect.bisect_right(nodes, end, key=lambda n: getattr(n, "lineno", 0))
    return nodes[lo:hi]


def _comprehends_calls(expr: ast.AST) -> bool:
    """`[pool.submit(run, call) for call in batch]`: a comprehension whose variable holds one tool call."""
    return isinstance(expr, ast.ListComp | ast.GeneratorExp | ast.SetComp) and any(
        isinstance(g.target, ast.Name) and _CALL_TARGET.match(g.target.id) for g in expr.generators)


def _tool_ish(mod: PyModule, fn: FunctionNode | None, expr: ast.AST) -> bool:
    """Whether an expression (or, for a bare name, what is assigned or appended to it) is about tool calls."""
    if _TOOL_WORD.search(_text(expr)) or _comprehends_calls(expr):
        return True
    if fn is None or not isinstance(expr, ast.Name):
        return False
    name = expr.id
    for node in _in_range(mod, ast.Assign, fn):
        assert isinstance(node, ast.Assign)
        if (any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
                and (_TOOL_WORD.search(_text(node.value)) or _comprehends_calls(node.value))):
            return True
    for node in _in_range(mod, ast.Call, fn):
        assert isinstance(node, ast.Call)
        if not (isinstance(node.func, ast.Attribute) and node.func.attr in {"append", "extend"}
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name):
            continue
        if _TOOL_WORD.search(_text(node)):
            return True
        loop = next(iter(mod.enclosing_loops(node)), None)
        if loop is not None and _tool_loop(mod, loop) is not None:
            return True
    return False


_RESULT_KEYS = {"tool_result", "tool_use_id", "tool_call_id", "function_call_output"}


def _answers_calls(project: PyProject, refs: list[FuncRef]) -> bool:
    """Whether the per-item function builds a tool result (`{"type": "tool_result", "tool_use_id": ...}`): whatever
    its items are named, each one is a tool call being answered."""
    return any(isinstance(n, ast.Constant) and n.value in _RESULT_KEYS for r in refs for n in r.module.walk(r.node))


def _broad(mod: PyModule, handler: ast.ExceptHandler) -> bool:
    names = mod.handler_names(handler)
    return not names or bool(names & _BROAD)


def _catches_all(mod: PyModule, fn: FunctionNode) -> bool:
    """Whether `fn`'s body is wrapped in a `try` whose broad handler does not re-raise (it cannot fail)."""
    for stmt in fn.body:
        if not isinstance(stmt, ast.Try | ast.TryStar):
            continue
        if any(_broad(mod, h) and not _raises(mod, h.body) for h in stmt.handlers):
            return True
    return False


def _catches_some(project: PyProject, ref: FuncRef) -> bool:
    """Whether `ref` or a function it calls directly turns some broad failures into results (raising on others)."""
    for r in [ref, *project.callees(ref)]:
        for node in r.module.walk(r.node):
            if isinstance(node, ast.Try | ast.TryStar) and any(_broad(r.module, h) for h in node.handlers):
                return True
    return False


def _item_functions(mod: PyModule, project: PyProject, exprs: list[ast.expr]) -> list[FuncRef]:
    """Project functions that the items of a parallel batch call (`run(c) for c in calls`, `tg.start_soon(run, c)`)."""
    refs: list[FuncRef] = []
    for expr in exprs:
        for node in [expr, *subtree(expr)]:
            if isinstance(node, ast.Call):
                refs.extend(project.resolve_call(mod, node))
            elif isinstance(node, ast.Name | ast.Attribute) and node is expr:
                refs.extend(project.resolve_call(mod, ast.Call(func=node, args=[], keywords=[])))
    return refs


def _batch_verdict(mod: PyModule, project: PyProject, items: list[ast.expr]) -> tuple[Verdict, str] | None:
    """None when every per-call function catches everything; otherwise the verdict and the function's name."""
    refs = _item_functions(mod, project, items)
    if refs and all(_catches_all(r.module, r.node) for r in refs):
        return None
    raising = [r for r in refs if not _catches_all(r.module, r.node)]
    if not raising:
        return Verdict.SUSPECTED, ""
    if any(_catches_some(project, r) for r in raising):
        # errors become results under some condition (often configuration): the batch fails only otherwise
        return Verdict.SUSPECTED, raising[0].symbol
    return Verdict.CONFIRMED, raising[0].symbol


def _answered_by_handler(mod: PyModule, project: PyProject, node: ast.AST) -> bool:
    """Whether `node` sits in a `try` body whose handler records results (error results for the whole batch)."""
    for tr, part in mod.enclosing_trys(node):
        if part == "body" and any(_block_records(mod, project, h.body) for h in tr.handlers):
            return True
    return False


@rule(CheckId.C1, lang="python", name="parallel-batch-all-or-nothing")
def parallel_batch_all_or_nothing(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags tool calls run in parallel with `asyncio.gather` lacking `return_exceptions=True`, or inside an
    `asyncio.TaskGroup` / anyio task group, when the per-call coroutine can raise. One failing call raises out of the
    batch (and a task group cancels its siblings), so the results of the other calls are lost."""
    for call in idioms.calls_named(mod, project, ("gather",)):
        if mod.call_name(call) not in _GATHER:
            continue
        flag = mod.keyword(call, "return_exceptions")
        if flag is not None and not (isinstance(flag, ast.Constant) and flag.value is False):
            continue
        if mod.has_kwargs_splat(call) or not call.args:
            continue
        fn = mod.enclosing_function(call)
        items = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
        if not any(_tool_ish(mod, fn, a) for a in items) and not _answers_calls(project, _item_functions(
                mod, project, items)):
            continue
        if _answered_by_handler(mod, project, call):
            continue
        verdict = _batch_verdict(mod, project, _expand_items(mod, fn, items))
        if verdict is None:
            continue
        yield _parallel_hit(call, "`asyncio.gather` without `return_exceptions=True`", *verdict)
    for with_node in [*mod.nodes(ast.AsyncWith), *mod.nodes(ast.With)]:
        for item in with_node.items:
            ctx = item.context_expr
            if not isinstance(ctx, ast.Call) or mod.call_name(ctx) not in _TASK_GROUPS:
                continue
            fn = mod.enclosing_function(with_node)
            spawns = [n for n in mod.walk_body(with_node.body) if isinstance(n, ast.Call)
                      and isinstance(n.func, ast.Attribute) and n.func.attr in {"create_task", "start_soon", "start"}]
            args = [a for s in spawns for a in s.args]
            if not spawns or not any(_tool_ish(mod, fn, s) for s in spawns):
                continue
            if _answered_by_handler(mod, project, with_node):
                continue
            verdict = _batch_verdict(mod, project, args)
            if verdict is None:
                continue
            yield _parallel_hit(ctx, f"`{mod.call_name(ctx)}` (the first error cancels the sibling calls)", *verdict)


def _expand_items(mod: PyModule, fn: FunctionNode | None, items: list[ast.expr]) -> list[ast.expr]:
    """Gathered expressions plus, for a bare list name, what was appended to or assigned into it."""
    out = list(items)
    names = {i.id for i in items if isinstance(i, ast.Name)}
    if fn is None or not names:
        return out
    for node in mod.walk(fn):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in names for t in node.targets):
            out.append(node.value)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
              and isinstance(node.func.value, ast.Name) and node.func.value.id in names and node.args):
            out.append(node.args[0])
    return out


def _raise_note(verdict: Verdict, func: str) -> str:
    if not func:
        return ""
    if verdict is Verdict.CONFIRMED:
        return f" (`{func}` does not catch its errors)"
    return f" (`{func}` turns only some errors into results)"


def _raise_hint(verdict: Verdict, func: str, what: str) -> str:
    if verdict is Verdict.CONFIRMED:
        return ""
    if func:
        return f"verify under which settings `{func}` re-raises a tool's error instead of returning an error result"
    return f"verify that the {what} can raise instead of returning an error result"


def _parallel_hit(node: ast.AST, how: str, verdict: Verdict, func: str) -> Hit:
    return Hit(
        node=node,
        verdict=verdict,
        claim=f"tool calls are dispatched with {how}: one failing call raises out of the batch"
              + _raise_note(verdict, func),
        consequence="the results of the calls that succeeded are lost and every call of the batch is left "
                    "unanswered; the next request is rejected or the run dies",
        direction="pass `return_exceptions=True` (or catch inside each call) and turn every exception into that "
                  "call's error result",
        confirm_hint=_raise_hint(verdict, func, "per-call coroutine"),
    )


@rule(CheckId.C1, lang="python", name="executor-map-stops-at-first-error")
def executor_map_stops_at_first_error(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags tool calls run with `Executor.map` (iterating the results raises at the first failed call and drops the
    rest) and `future.result()` read in an `as_completed` loop with no per-future `try`. One failing tool loses the
    results of every call not yet collected."""
    for call in idioms.calls_named(mod, project, ("map",)):
        func = call.func
        if not isinstance(func, ast.Attribute) or len(call.args) < 2:
            continue
        recv = mod.dotted(func.value) or ""
        if not re.search(r"(executor|pool)", idioms.last(recv) if recv else "", re.I):
            continue
        fn = mod.enclosing_function(call)
        if not any(_tool_ish(mod, fn, a) for a in call.args):
            continue
        if _answered_by_handler(mod, project, call):
            continue
        verdict = _batch_verdict(mod, project, [call.args[0]])
        if verdict is None:
            continue
        yield Hit(
            node=call,
            verdict=verdict[0],
            claim=f"tool calls run with `{recv}.map`: consuming its results raises at the first failed call"
                  + _raise_note(verdict[0], verdict[1]),
            consequence="the results of every later call are discarded and those calls are left unanswered",
            direction="submit each call and collect with `as_completed`, turning each exception into that "
                      "call's error result",
            confirm_hint=_raise_hint(verdict[0], verdict[1], "mapped function"),
        )
    for loop in mod.loops():
        if not isinstance(loop, ast.For | ast.AsyncFor) or not isinstance(loop.iter, ast.Call):
            continue
        func = loop.iter.func
        if not (isinstance(func, ast.Attribute) and func.attr == "as_completed"
                or isinstance(func, ast.Name) and func.id == "as_completed"):
            continue
        fn = mod.enclosing_function(loop)
        futures = loop.iter.args[0] if loop.iter.args else None
        if futures is None or not _tool_ish(mod, fn, futures):
            continue
        for node in mod.walk_body(loop.body):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "result" and not node.args):
                continue
            if any(part == "body" for _, part in mod.enclosing_trys(node)):
                continue
            submitted = _submitted_functions(mod, project, fn)
            if submitted and all(_catches_all(r.module, r.node) or _catches_some(project, r) for r in submitted):
                continue  # the tool's own failures already become results; what is left to raise is not shown
            yield Hit(
                node=node,
                verdict=Verdict.SUSPECTED,
                claim=f"`{mod.dotted(node.func)}()` in the `as_completed` loop over tool calls has no per-future `try`: "
                      "the first failed call raises out of the loop",
                consequence="results of the calls still running or not yet collected are lost, and the batch "
                            "is reported as one failure",
                direction="wrap `future.result()` in `try` and turn the exception into that call's error result",
                confirm_hint="verify that the submitted tool function can raise and that the calls not yet "
                             "collected are then left without a result",
            )


def _submitted_functions(mod: PyModule, project: PyProject, fn: FunctionNode | None) -> list[FuncRef]:
    """Project functions handed to `executor.submit(...)` in the function that collects the futures."""
    scope: ast.AST = fn if fn is not None else mod.tree
    refs: list[FuncRef] = []
    for node in mod.walk(scope):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "submit":
            for arg in node.args[:2]:
                if isinstance(arg, ast.Name | ast.Attribute):
                    refs.extend(project.resolve_call(mod, ast.Call(func=arg, args=[], keywords=[])))
    return refs


_NAME_LOOKUP = re.compile(r"\.(has|has_tool|exists|contains|is_registered|supports|get)\(", re.I)


def _skip_reason(mod: PyModule, test: ast.expr, loop: ast.AST | None = None) -> str | None:
    """Why a check skips a call: a denial, unknown-tool or validation test, also as one part of an `or`/`and`, or
    a negated lookup of the call's name (`not registry.has(call.name)`, `name not in tools`).

    With `loop`, a bare `fn is None` / `not fn` test counts only when `fn` was looked up in the loop (a registry
    `get`, a subscript, `getattr`): `fn = node.child("function")` then `if fn is None` is no tool filter."""
    parts = test.values if isinstance(test, ast.BoolOp) else []
    for part in [test, *parts]:
        if loop is not None and not _tests_a_lookup(mod, part, loop):
            continue
        reason = _early_exit_reason(mod, part)
        if reason is not None and reason != "budget/cancellation":
            return reason
        inner = part.operand if isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.Not) else None
        if inner is not None and _NAME_LOOKUP.search(_text(inner)) and "name" in _text(inner):
            return "unknown tool"
    return None


_LOOKUP_CALL = re.compile(r"(^|\.)(get|lookup|find|resolve|get_tool|getattr)$")


def _tests_a_lookup(mod: PyModule, test: ast.expr, loop: ast.AST) -> bool:
    """False only for a bare name test (`x is None`, `not x`) whose value in the loop came from no lookup."""
    inner = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    if isinstance(inner, ast.Compare) and isinstance(inner.left, ast.Name):
        inner = inner.left
    if not isinstance(inner, ast.Name):
        return True
    for node in mod.walk_body(getattr(loop, "body", [])):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == inner.id for t in node.targets):
            value = node.value
            if isinstance(value, ast.Subscript):
                return True
            if isinstance(value, ast.Call):
                return bool(_LOOKUP_CALL.search(mod.call_name(value) or ""))
            return False
    return True  # assigned outside the loop: judge the test by its words as before


def _appends_target(mod: PyModule, loop: ast.For | ast.AsyncFor, target: str) -> ast.Call | None:
    """`runnable.append(call)` in the loop body: the loop filters calls into another list."""
    for node in mod.walk_body(loop.body):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append"
                and node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == target):
            return node
    return None


@rule(CheckId.C1, lang="python", name="filtered-call-never-answered")
def filtered_call_never_answered(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a loop that filters the model's tool calls into a to-run list and `continue`s past a call on an
    unknown-tool, denial or validation check without recording a result for it. Only the kept calls are run and
    answered later, so the skipped call id never gets a result."""
    for loop in mod.loops():
        shape = _tool_loop(mod, loop)
        if shape is None or not isinstance(loop, ast.For | ast.AsyncFor):
            continue
        target = _loop_target(loop)
        if target is None or _appends_target(mod, loop, target) is None:
            continue
        if any(_is_record(mod, n) for n in mod.walk_body(loop.body)):
            continue  # answered in the loop: the other C1 rules judge it
        for node in _in_range(mod, ast.If, loop):
            if not isinstance(node, ast.If) or not _own_loop(mod, node, loop):
                continue
            if not isinstance(_exit_of(node.body), ast.Continue) or _raises(mod, node.body):
                continue
            if _block_records(mod, project, node.body) or _passes_call_to_helper(mod, node.body, target):
                continue
            reason = _skip_reason(mod, node.test, loop)
            if reason is None:
                continue
            if _answers_after_loop(mod, project, loop) and not _later_loop_over_kept(mod, loop):
                continue
            yield Hit(
                node=node,
                verdict=Verdict.CONFIRMED if shape[1] else Verdict.SUSPECTED,
                claim=f"while filtering `{shape[0]}` into the calls to run, the {reason} check `continue`s past "
                      "the call without recording a result; only the kept calls are answered",
                consequence="the skipped call id has no result in history: the next request is rejected by the "
                            "provider (HTTP 400) and the model never learns why the tool did not run",
                direction="record an error result (\"unknown tool\", \"denied\") for the skipped call before "
                          "`continue`",
                confirm_hint="" if shape[1] else f"verify that `{shape[0]}` holds the model's tool calls and that "
                                                  "nothing answers the skipped ones before the next request",
            )


def _later_loop_over_kept(mod: PyModule, loop: ast.AST) -> bool:
    """Whether the results recorded after the filter loop come from a loop (i.e. per kept call only)."""
    parent = mod.parent(loop)
    for field in ("body", "orelse", "finalbody"):
        block = getattr(parent, field, None)
        if isinstance(block, list) and loop in block:
            after: list[ast.stmt] = block[block.index(loop) + 1:]  # pyright: ignore[reportUnknownVariableType]
            return any(isinstance(n, ast.For | ast.AsyncFor) for s in after for n in subtree(s))
    return False
