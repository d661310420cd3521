"""C12 · Loop and budget limits — Python rules.

Shapes detected:
- `unbounded-turn-loop`: `while True` / `while not done` around a model call (direct or in a helper) with no ceiling.
- `turn-budget-exhaustion-reads-as-success`: `for turn in range(max_turns)` whose exhaustion returns like success.
- `unbounded-subagent-recursion`: an agent function that delegates to itself with no depth limit.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from harness_audit.findings import CheckId, Verdict
from harness_audit.static import idioms
from harness_audit.static.lang.python import (
    FuncRef,
    FunctionNode,
    LoopNode,
    PyModule,
    PyProject,
    child_nodes,
    later_siblings,
    subtree,
)
from harness_audit.static.registry import Hit, rule

_COUNTER = re.compile(
    r"(turn|step|iter|round|count|attempt|depth|budget|limit|max|cycle|hop|token|usage|cost|spent|elapsed|"
    r"deadline|remaining|tries|loops|^n_|^num_|^i$|^n$|calls_made|call_count|num_calls|total_calls)",
    re.I,
)
_LIMIT_CALL = re.compile(r"(limit|budget|quota|deadline)", re.I)
_LIMIT_EXC = re.compile(r"(maxturns|maxsteps|limit|budget|exceeded|toomany|exhaust)", re.I)
_TIME_CALLS = {"time.time", "time.monotonic", "time.perf_counter", "loop.time", "datetime.datetime.now"}
_CALL_ATTRS = {"tool_calls", "tool_use", "function_call", "tool_call"}
_CALL_CONSTANTS = {"tool_use", "tool_calls", "tool", "tool_result", "function_call", "function_call_output"}
_TOOL_ATTRS = _CALL_ATTRS | {"stop_reason", "finish_reason"}
_TOOL_EXEC = re.compile(r"(execute|run|call|invoke|dispatch|handle)_?(tool|function|action)s?|tool_?(call|exec|dispatch)",
                        re.I)
_HUMAN_INPUT = {"input", "readline", "receive", "receive_text", "receive_json", "receive_bytes", "recv", "ask",
                "get_user_input", "wait_for_message", "read_input"}
_QUEUE_RECV = re.compile(r"(queue|inbox|channel|mailbox)$", re.I)
_STATUS_WORDS = re.compile(
    r"(max[_ ]?turn|max[_ ]?step|max[_ ]?iter|exhaust|limit|budget|incomplete|truncat|exceed|status|stopped|stop_reason|"
    r"error|fail|unfinished|timeout|timed_out|reached|partial)",
    re.I,
)
_DEPTH_NAME = re.compile(r"(depth|level|nesting|hops|remaining|budget|max_|parent|recursion)", re.I)
_MAX_DEPTH = 2


@dataclass(frozen=True, slots=True)
class _Drive:
    """How a loop reaches the model: the call in its body and, if through helpers, the helper chain."""

    call: ast.Call
    """The call in the loop body (the model call itself, or the call into the helper)."""
    helpers: tuple[FuncRef, ...]
    """Project functions on the way to the model call (empty for a direct call)."""


_MODEL_LAST = {
    "create", "parse", "stream", "generate_content", "generate_content_async", "acreate", "completion",
    "acompletion", "chat", "generate", "invoke", "ainvoke", "astream", "agenerate", "complete", "acomplete",
    "achat", "urlopen", *idioms.HTTP_METHODS,
}
_MODEL_WRAPPER_METHODS = {"query", "aquery", "get_response", "get_completion", "chat_completion"}
_MODEL_WRAPPER_RECEIVER = re.compile(r"(^|_)(llm|model|lm)$", re.I)
_MODEL_SHORT = _MODEL_LAST | _MODEL_WRAPPER_METHODS
"""The called names `_is_model_call` can accept."""


def _last_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


_RAW_RESPONSE = re.compile(r"\.with_(raw|streaming)_response(?=\.)")
_SDK_SUFFIXES = ("messages.create", "messages.stream", "chat.completions.create", "responses.create",
                 "responses.stream")


def _is_model_call(mod: PyModule, call: ast.Call) -> bool:
    """`idioms.is_model_call` behind a cheap name filter (it runs on every call of the project), plus the SDKs'
    `.with_raw_response.create(...)` spelling."""
    last = _last_name(call)
    if last in _MODEL_WRAPPER_METHODS and isinstance(call.func, ast.Attribute):
        # a project's own model wrapper: `self.model.query(messages)`, `llm.get_response(...)`
        return bool(_MODEL_WRAPPER_RECEIVER.search(idioms.last(mod.dotted(call.func.value) or "")))
    if last not in _MODEL_LAST:
        return False
    if idioms.is_model_call(mod, call):
        return True
    name = mod.call_name(call)
    return "_response." in name and _RAW_RESPONSE.sub("", name).endswith(_SDK_SUFFIXES)


class _Index:
    """Per-project index of the calls that reach the model, built once (a project is audited as a whole)."""

    project: PyProject | None = None
    drivers: dict[str, list[_Drive]] = {}
    """Module path → calls that reach the model, directly or through up to two project functions."""
    direct_fns: list[FuncRef] = []
    """Functions that call the model directly."""


def _index(project: PyProject) -> type[_Index]:
    if _Index.project is project:
        return _Index
    drivers: dict[str, list[_Drive]] = {}
    paths: dict[int, tuple[FuncRef, ...]] = {}
    direct_fns: list[FuncRef] = []
    for mod in project.modules.values():
        for call in mod.calls_to(_MODEL_SHORT):
            if _is_model_call(mod, call):
                drivers.setdefault(mod.path, []).append(_Drive(call, ()))
                fn = mod.enclosing_function(call)
                if fn is not None and id(fn) not in paths:
                    ref = FuncRef(mod, fn)
                    paths[id(fn)] = (ref,)
                    direct_fns.append(ref)
    frontier = dict(paths)
    defined: dict[str, int] = {}
    for mod in project.modules.values():
        for fn in mod.functions():
            defined[fn.name] = defined.get(fn.name, 0) + 1
    for _ in range(_MAX_DEPTH):
        names = {path[0].node.name for path in frontier.values()}
        nxt: dict[int, tuple[FuncRef, ...]] = {}
        for mod in project.modules.values():
            for call in mod.calls_to(names):
                for target in project.resolve_call(mod, call) or _unique_method(call, frontier, defined):
                    path = frontier.get(id(target.node))
                    if path is None:
                        continue
                    drivers.setdefault(mod.path, []).append(_Drive(call, path))
                    fn = mod.enclosing_function(call)
                    if fn is not None and id(fn) not in paths and id(fn) not in nxt:
                        nxt[id(fn)] = (FuncRef(mod, fn), *path)
                    break
        paths.update(nxt)
        frontier = nxt
    _Index.project, _Index.drivers, _Index.direct_fns = project, drivers, direct_fns
    return _Index


def _unique_method(call: ast.Call, frontier: dict[int, tuple[FuncRef, ...]],
                   defined: dict[str, int]) -> list[FuncRef]:
    """`self.client.stream_chat(...)` on an attribute whose type the resolver cannot see: the method the project
    defines exactly once under that name (a generic name like `run` or `create` is never guessed)."""
    if not isinstance(call.func, ast.Attribute) or not isinstance(call.func.value, ast.Attribute):
        return []
    name = call.func.attr
    if defined.get(name) != 1 or name.startswith("__") or name in _MODEL_LAST or "_" not in name.strip("_"):
        return []
    return [path[0] for path in frontier.values() if path[0].node.name == name][:1]


def _walk_loop_body(mod: PyModule, stmts: list[ast.stmt]) -> Iterator[ast.AST]:
    """Nodes of a loop body in its own scope; nested `while` loops are their own turn loops and are skipped."""
    stack: list[ast.AST] = list(reversed(stmts))
    while stack:
        cur = stack.pop()
        yield cur
        if isinstance(cur, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef | ast.While):
            continue
        stack.extend(reversed(child_nodes(cur)))


def _driven_loops(mod: PyModule, project: PyProject) -> list[tuple[LoopNode, _Drive]]:
    """Loops of `mod` whose own body reaches the model (a nested `while` counts for itself, not its parents)."""
    out: dict[int, tuple[LoopNode, _Drive]] = {}
    for drive in _index(project).drivers.get(mod.path, []):
        for loop in mod.enclosing_loops(drive.call):
            key = id(loop)
            # a direct model call is the better evidence when a loop reaches the model both ways
            if key not in out or (out[key][1].helpers and not drive.helpers):
                out[key] = (loop, drive)
            if isinstance(loop, ast.While):
                break
    return sorted(out.values(), key=lambda pair: pair[0].lineno)


def _is_human_driven(mod: PyModule, stmts: list[ast.stmt]) -> bool:
    """Whether each iteration waits for a person or an inbound message (a chat REPL, a server loop)."""
    for node in _walk_loop_body(mod, stmts):
        if not isinstance(node, ast.Call):
            continue
        name = mod.call_name(node)
        meth = idioms.last(name) if name else ""
        if meth in _HUMAN_INPUT or name.startswith("sys.stdin"):
            return True
        if meth in {"get", "get_nowait"} and _QUEUE_RECV.search(idioms.receiver(name) or ""):
            return True
    return False


def _is_turn_like(mod: PyModule, stmts: list[ast.stmt], *, tools_only: bool = False) -> bool:
    """Evidence that the body drives agent turns: history grows, tool calls are read or dispatched.

    With `tools_only`, only tool calls count: a loop that re-asks the model after a bad answer grows the
    history too, but it is a retry, not an agent's turn budget.
    """
    attrs = _CALL_ATTRS if tools_only else _TOOL_ATTRS
    constants = attrs | _CALL_CONSTANTS
    for node in _walk_loop_body(mod, stmts):
        if isinstance(node, ast.Attribute) and node.attr in attrs:
            return True
        if isinstance(node, ast.Constant) and node.value in constants:
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if not tools_only and node.func.attr in {"append", "extend", "add_message", "add_messages"} and \
                    idioms.is_message_list(mod, node.func.value):
                return True
            if _TOOL_EXEC.search(node.func.attr):
                return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and _TOOL_EXEC.search(node.func.id):
            return True
        if not tools_only and isinstance(node, ast.AugAssign) and idioms.is_message_list(mod, node.target):
            return True
    return False


def _counter_like(mod: PyModule, expr: ast.expr) -> bool:
    for sub in subtree(expr):
        if isinstance(sub, ast.Name | ast.Attribute):
            dotted = mod.dotted(sub) or ""
            if dotted and _COUNTER.search(idioms.last(dotted)):
                return True
        if isinstance(sub, ast.Call):
            name = mod.call_name(sub)
            if name in _TIME_CALLS or _LIMIT_CALL.search(name):
                return True
            if name == "len" and sub.args and idioms.is_message_list(mod, sub.args[0]):
                return True
    return False


def _is_counter_compare(mod: PyModule, test: ast.expr) -> bool:
    """A comparison that bounds a count, a size, a clock or a budget (`turn >= max_turns`, `time() > deadline`)."""
    for sub in subtree(test):
        if not isinstance(sub, ast.Compare):
            continue
        operands = [sub.left, *sub.comparators]
        if any(isinstance(o, ast.Constant) and isinstance(o.value, str) for o in operands):
            continue
        ordering = any(isinstance(op, ast.Lt | ast.LtE | ast.Gt | ast.GtE | ast.Eq) for op in sub.ops)
        if ordering and any(_counter_like(mod, o) for o in operands):
            return True
    return False


def _holds_counter_compare(mod: PyModule, test: ast.expr) -> bool:
    """`if over_limit:` where every value the function assigns to `over_limit` is a counter comparison
    (`over_limit = polls > MAX_POLLS`): the ceiling, tested through a name."""
    if not isinstance(test, ast.Name):
        return False
    fn = mod.enclosing_function(test)
    values = idioms.assigned_values(mod, fn).get(test.id, []) if fn is not None else []
    return bool(values) and all(isinstance(v, ast.expr) and _is_counter_compare(mod, v) for v in values)


def _exits(stmts: list[ast.stmt]) -> bool:
    return any(isinstance(n, ast.Break | ast.Raise | ast.Return) for s in stmts for n in subtree(s))


def _is_ceiling(mod: PyModule, node: ast.AST) -> bool:
    """A statement that enforces a ceiling: a counter test that leaves, a limit check, a limit raise."""
    if isinstance(node, ast.If):
        return (_is_counter_compare(mod, node.test) or _holds_counter_compare(mod, node.test)) and _exits(node.body)
    if isinstance(node, ast.While | ast.Assert):
        return _is_counter_compare(mod, node.test)
    if isinstance(node, ast.Call):
        return bool(_LIMIT_CALL.search(mod.call_name(node)))
    if isinstance(node, ast.Raise) and node.exc is not None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        return bool(_LIMIT_EXC.search(mod.dotted(exc) or ""))
    return False


def _ceiling_in(mod: PyModule, stmts: list[ast.stmt]) -> bool:
    return any(_is_ceiling(mod, node) for node in _walk_loop_body(mod, stmts))


def _has_ceiling(mod: PyModule, loop: LoopNode, drive: _Drive) -> bool:
    if isinstance(loop, ast.While) and _is_counter_compare(mod, loop.test):
        return True
    return _ceiling_in(mod, loop.body) or any(_ceiling_in(ref.module, ref.node.body) for ref in drive.helpers)


def _turn_like(mod: PyModule, loop: LoopNode, drive: _Drive, *, tools_only: bool = False) -> bool:
    if _is_turn_like(mod, loop.body, tools_only=tools_only):
        return True
    return any(_is_turn_like(ref.module, ref.node.body, tools_only=tools_only) for ref in drive.helpers)


def _is_flag_test(mod: PyModule, test: ast.expr, body: list[ast.stmt]) -> bool:
    """`while not done` / `while msg.tool_calls` / `while resp.stop_reason == "tool_use"`: a flag the body sets,
    or the model's own wish to call tools."""
    inner = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else test
    if isinstance(inner, ast.Attribute) and inner.attr in _TOOL_ATTRS:
        return True
    if isinstance(inner, ast.Compare) and isinstance(inner.left, ast.Attribute) and inner.left.attr in _TOOL_ATTRS \
            and all(isinstance(c, ast.Constant) and isinstance(c.value, str) for c in inner.comparators):
        return True  # `while resp.stop_reason == "tool_use"`
    if not isinstance(inner, ast.Name):
        return False
    for node in _walk_loop_body(mod, body):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == inner.id for t in targets):
                return True
    return False


def _following(mod: PyModule, stmt: ast.stmt) -> list[ast.stmt]:
    """The statements after `stmt` in its block, continuing outwards to the end of the function."""
    out: list[ast.stmt] = []
    child: ast.AST = stmt
    for anc in mod.ancestors(stmt):
        out.extend(later_siblings(anc, child) or [])
        if isinstance(anc, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module | ast.For | ast.AsyncFor | ast.While):
            break
        child = anc
    return out


def _marks_status(mod: PyModule, stmts: list[ast.stmt]) -> bool:
    """Whether statements make the ceiling visible: a raise, a status or a flag named for it, a message saying so."""
    for node in mod.walk_body(stmts):
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _STATUS_WORDS.search(node.value):
            return True
        if isinstance(node, ast.Name | ast.Attribute | ast.keyword):
            name = node.arg if isinstance(node, ast.keyword) else (mod.dotted(node) or "")
            if name and _STATUS_WORDS.search(idioms.last(name)):
                return True
        if isinstance(node, ast.If) and _is_counter_compare(mod, node.test):
            return True
    return False


def _success_return(stmts: list[ast.stmt]) -> ast.Return | ast.Yield | None:
    """The `return value` (or, in a generator, the final `yield value`) the statements after a loop end in."""
    for stmt in stmts:
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            none = isinstance(stmt.value, ast.Constant) and stmt.value.value is None
            return None if none else stmt  # `return None` is a signal a caller can test
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield) and stmt.value.value is not None \
                and stmt is stmts[-1]:
            return stmt.value
        if not isinstance(stmt, ast.Expr | ast.Assign | ast.AnnAssign | ast.AugAssign):
            return None
    return None


def _assigned_names(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, ast.Assign):
        return {t.id for t in stmt.targets if isinstance(t, ast.Name)}
    if isinstance(stmt, ast.AnnAssign | ast.AugAssign) and isinstance(stmt.target, ast.Name):
        return {stmt.target.id}
    return set()


def _sentinel_on_exhaustion(mod: PyModule, loop: LoopNode, ret: ast.Return | ast.Yield) -> bool:
    """Whether the result carries a local that tells exhaustion from a finish: set to a constant before the
    loop (`final = "<no_answer>"`) and reassigned in the loop only in a block that then leaves it
    (`final = answer; break`), so running out returns the constant and a finished run returns something else."""
    value = ret.value
    elts = value.elts if isinstance(value, ast.Tuple) else [value]
    names = {e.id for e in elts if isinstance(e, ast.Name)}
    fn = mod.enclosing_function(loop)
    if not names or fn is None:
        return False
    for name in names:
        before: list[ast.stmt] = []
        in_loop: list[ast.stmt] = []
        for node in mod.walk_body(fn.body):
            if isinstance(node, ast.stmt) and name in _assigned_names(node):
                (in_loop if loop in mod.ancestors(node) else before).append(node)
            elif isinstance(node, ast.For | ast.AsyncFor | ast.With | ast.AsyncWith | ast.NamedExpr) \
                    and name in {n.id for n in ast.walk(getattr(node, "target", node)) if isinstance(n, ast.Name)}:
                before.append(node)  # bound some other way: not a plain sentinel
        if not in_loop or len(before) != 1:
            continue
        init = before[0]
        if not (isinstance(init, ast.Assign | ast.AnnAssign) and isinstance(init.value, ast.Constant)
                and init.lineno < loop.lineno):
            continue
        if all(_leaves_loop_after(mod, loop, a) for a in in_loop):
            return True
    return False


def _leaves_loop_after(mod: PyModule, loop: LoopNode, stmt: ast.stmt) -> bool:
    """Whether `stmt` sits directly in `loop` (no inner loop) and its block then breaks or returns."""
    parent = mod.parent(stmt)
    rest = later_siblings(parent, stmt) if parent is not None else None
    return bool(rest) and mod.enclosing_loops(stmt)[:1] == [loop] \
        and any(isinstance(s, ast.Break | ast.Return) for s in rest or [])


def _result_text(mod: PyModule, ret: ast.Return | ast.Yield) -> str:
    keyword = "return" if isinstance(ret, ast.Return) else "yield"
    text = " ".join(mod.segment(ret.value).split()) if ret.value is not None else ""
    return f"{keyword} {text[:80]}{'…' if len(text) > 80 else ''}"


@rule(CheckId.C12, lang="python", name="unbounded-turn-loop")
def unbounded_turn_loop(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a `while True` / `while not done` agent loop that calls the model (directly or in a helper) and
    counts nothing: no turn counter, clock, token or budget check leaves the loop, so the only way out is
    the model ceasing to call tools. A check through a name counts (`over = polls > MAX_POLLS` then `if over:
    raise`).
    """
    for loop, drive in _driven_loops(mod, project):
        if not isinstance(loop, ast.While):
            continue
        forever = isinstance(loop.test, ast.Constant) and bool(loop.test.value) is True
        if not forever and not _is_flag_test(mod, loop.test, loop.body):
            continue
        if not _turn_like(mod, loop, drive):
            continue
        if _is_human_driven(mod, loop.body) or _has_ceiling(mod, loop, drive):
            continue
        via = f" through `{drive.helpers[0].symbol}`" if drive.helpers else ""
        head = "while True" if forever else f"while {mod.segment(loop.test)}"
        yield Hit(
            node=loop,
            claim=f"the agent loop `{head}` calls the model{via} with no ceiling on turns, tool calls or time: "
                  "it ends only when the model stops calling tools",
            consequence="a model that keeps calling tools runs forever and cost climbs until someone notices",
            direction="iterate `for turn in range(max_turns)` and end with an explicit budget-exhausted status "
                      "(raise `MaxTurnsExceeded` or return `status=\"budget_exhausted\"`)",
        )


@rule(CheckId.C12, lang="python", name="turn-budget-exhaustion-reads-as-success")
def turn_budget_exhaustion_reads_as_success(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags `for turn in range(max_turns)` (or `while turn < max_turns`) agent loops with no `else:` whose
    exhaustion falls through to an ordinary `return` of the last message: running out of turns looks
    exactly like a finished run. A returned local set to a constant before the loop and replaced only where the
    loop is left (`answer = "<no_answer>"` ... `answer = reply; break`) tells the two apart.
    """
    for loop, drive in _driven_loops(mod, project):
        bounded_for = isinstance(loop, ast.For | ast.AsyncFor) and isinstance(loop.iter, ast.Call) \
            and mod.call_name(loop.iter) == "range"
        bounded_while = isinstance(loop, ast.While) and _is_counter_compare(mod, loop.test)
        if not (bounded_for or bounded_while) or loop.orelse or not _turn_like(mod, loop, drive, tools_only=True):
            continue
        if not any(isinstance(n, ast.Return | ast.Break) for n in _walk_loop_body(mod, loop.body)):
            continue  # no early finish: every run uses all turns, nothing to confuse
        if any(isinstance(n, ast.If) and _is_counter_compare(mod, n.test) and _exits(n.body)
               for n in _walk_loop_body(mod, loop.body)):
            continue  # an explicit in-loop ceiling: a different question (how its exit is reported)
        after = _following(mod, loop)
        ret = _success_return(after)
        if ret is None or _marks_status(mod, after) or _sentinel_on_exhaustion(mod, loop, ret):
            continue
        header = mod.segment(loop.iter) if isinstance(loop, ast.For | ast.AsyncFor) else mod.segment(loop.test)
        yield Hit(
            node=loop,
            claim=f"when `{header}` runs out the agent loop falls through to `{_result_text(mod, ret)}`, the same "
                  "result a finished run returns",
            consequence="a run that exhausted its turn budget mid-task is reported as a finished answer",
            direction="add an `else:` (or code after the loop) that raises `MaxTurnsExceeded` or returns "
                      "`status=\"budget_exhausted\"`",
        )


def _self_recursion(mod: PyModule, project: PyProject, fn: FunctionNode) -> ast.Call | None:
    """A call inside `fn` that reaches `fn` again, directly or through one project function."""
    for node in mod.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        for target in project.resolve_call(mod, node):
            if target.node is fn:
                return node
            if any(c.node is fn for c in project.callees(target)):
                return node
    return None


@rule(CheckId.C12, lang="python", name="unbounded-subagent-recursion")
def unbounded_subagent_recursion(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags an agent function that calls the model and, as delegation, calls itself again (directly or through
    a tool handler) with no depth parameter compared anywhere: the model decides how deep sub-agents nest.
    """
    for ref in _index(project).direct_fns:
        if ref.module is not mod:
            continue
        fn = ref.node
        params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]} - {"self", "cls"}
        if not _is_turn_like(mod, fn.body):
            continue
        recursion = _self_recursion(mod, project, fn)
        if recursion is None:
            continue
        guarded = False
        for node in mod.walk(fn):
            if isinstance(node, ast.Compare):
                names = {n.id for n in subtree(node) if isinstance(n, ast.Name)}
                dotted = {mod.dotted(n) or "" for n in subtree(node) if isinstance(n, ast.Attribute)}
                if names & params or any(_DEPTH_NAME.search(n) for n in names | dotted):
                    guarded = True
                    break
        if guarded:
            continue
        yield Hit(
            node=recursion,
            verdict=Verdict.SUSPECTED,
            claim=f"`{fn.name}` calls the model and re-enters itself as a sub-agent with no depth limit",
            consequence="a model that keeps delegating nests agents without end; cost and stack depth grow "
                        "until the process fails",
            direction="pass a `depth` (or remaining budget) into the nested run and refuse delegation past a "
                      "fixed maximum",
            confirm_hint=f"verify that the nested `{fn.name}` run cannot delegate again (e.g. the sub-agent is "
                         "not offered the delegating tool); if it can, nesting depth is unbounded",
        )
