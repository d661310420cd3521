"""C13 · Context management and truncation boundaries — Python rules.

Shapes detected:
- `count-cut-splits-tool-pair`: history cut by count alone (`messages[-N:]`, `history.pop(0)`, `del messages[:n]`,
  `deque(maxlen=N)`) with no check that a tool result keeps its call.
- `compaction-without-size-recheck`: `if tokens(messages) > limit: summarise(...)` and then send without re-checking.
- `tool-output-pushed-whole`: a tool result enters history with no bound on its size.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from harness_audit.findings import CheckId, Verdict
from harness_audit.static import idioms
from harness_audit.static.lang.python import FunctionNode, PyModule, PyProject, later_siblings, subtree
from harness_audit.static.registry import Hit, rule

_HISTORY = re.compile(r"(messages|history|conversation|transcript|msgs|chat_log|dialog|dialogue)$", re.I)
_PAIR_STRINGS = {"tool", "tool_result", "tool_use", "function", "function_call_output", "function_call",
                 "tool_calls", "tool_call_id", "tool_use_id", "call_id", "ipython"}
_PAIR_NAME = re.compile(r"(tool_?call|tool_?use|tool_?result|toolmessage|toolreturn|function_?(call|execution|result)|"
                        r"pair|orphan|boundary|dangling|unanswered|safe_?cut|safe_?split)", re.I)
_TOOLISH = {"tool_calls", "tool_call_id", "tool_use_id", "tool_use", "tool_result", "function_call_output"}
_TOOLISH_OR_ROLE = _TOOLISH | {"assistant", "tool"}
_MEASURE = re.compile(r"(token|size|length|count_chars|num_chars|char_count|estimate)", re.I)
_COMPACT = re.compile(r"(summar|compact|condens|compress)", re.I)
_BOUND_CALL = re.compile(r"(truncat|clip|limit|shorten|cap_|_cap|trim|summar|head|tail|spill|abbrev|preview|"
                         r"ellipsi|elide|max_len|max_chars|offload)", re.I)
_TRIMMER = re.compile(r"(trim|truncat|window|compact|prune|fit|shrink|cut|evict|limit|cap|clip|recent|last_n)",
                      re.I)
_TOOL_CALL = re.compile(r"^_?a?(run|call|execute|exec|invoke|dispatch|handle)_?(tool|function|command|action|shell|"
                        r"bash|cmd)s?"
                        r"(_call)?$|^_?a?(run|execute|dispatch)$", re.I)
_KEEP_KWARGS = {"messages", "history", "input", "contents", "conversation", "chat_history", "prompt"}
_RESULT_ROLES = {("role", "tool"), ("type", "tool_result"), ("type", "function_call_output"),
                 ("role", "function")}
_RESULT_ROLE_VALUES = {v for _, v in _RESULT_ROLES}
_RESULT_CTORS = {"ToolMessage", "FunctionMessage", "ToolResultBlockParam", "ToolReturnPart"}


def _last_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _is_history(mod: PyModule, expr: ast.AST) -> bool:
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
        return isinstance(expr.slice.value, str) and bool(_HISTORY.search(expr.slice.value))
    dotted = mod.dotted(expr)
    return bool(dotted) and "()" not in (dotted or "") and bool(_HISTORY.search(idioms.last(dotted or "")))


class _ToolsUsed:
    """Whether the project's history can hold tool calls at all (computed once per project)."""

    project: PyProject | None = None
    value: bool = False


def _project_uses_tools(project: PyProject) -> bool:
    if _ToolsUsed.project is project:
        return _ToolsUsed.value
    used = False
    for mod in project.modules.values():
        if any(a.attr in _TOOLISH for a in mod.nodes(ast.Attribute, any_order=True)) or \
                any(isinstance(c.value, str) and c.value in _TOOLISH for c in mod.nodes(ast.Constant, any_order=True)):
            used = True
            break
    _ToolsUsed.project, _ToolsUsed.value = project, used
    return used


def _module_speaks_llm(mod: PyModule) -> bool:
    """Whether this module handles model messages itself: tool-call fields, an `assistant`/`tool` role, a model call."""
    if any(a.attr in _TOOLISH for a in mod.nodes(ast.Attribute, any_order=True)):
        return True
    if any(isinstance(c.value, str) and c.value in _TOOLISH_OR_ROLE for c in mod.nodes(ast.Constant, any_order=True)):
        return True
    return any(idioms.is_model_call(mod, c) for c in mod.calls())


def _mentions_pairing(mod: PyModule, node: ast.AST) -> bool:
    for sub in subtree(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and sub.value in _PAIR_STRINGS:
            return True
        if isinstance(sub, ast.Attribute) and (sub.attr in _PAIR_STRINGS or _PAIR_NAME.search(sub.attr)):
            return True
        if isinstance(sub, ast.Name) and _PAIR_NAME.search(sub.id):
            return True
    return False


def _refers(mod: PyModule, node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name | ast.Attribute) and (mod.dotted(n) or "") in names for n in subtree(node))


def _pair_checks(mod: PyModule, project: PyProject, stmts: list[ast.stmt], names: set[str]) -> bool:
    """Whether statements test the pairing of the cut list itself: `msgs[0]["role"] == "tool"`,
    `[m for m in msgs if m.role != "tool"]`, `drop_orphans(msgs)`, or a helper given the list that does so.
    """
    for node in mod.walk_body(stmts, into_functions=True):
        test: ast.AST | None = None
        if isinstance(node, ast.Compare | ast.comprehension):
            test = node
        elif isinstance(node, ast.If | ast.While | ast.IfExp):
            test = node.test
        if test is not None and _mentions_pairing(mod, test) and _refers(mod, test, names):
            return True
        if not isinstance(node, ast.Call) or not _refers(mod, node, names):
            continue
        name = mod.call_name(node) or ""
        if _PAIR_NAME.search(idioms.last(name)) or (name == "isinstance" and _mentions_pairing(mod, node)):
            return True
        if _MEASURE.search(idioms.last(name)):
            continue  # a size measure reads `tool_calls` to count them; it does not move the cut
        for ref in project.resolve_call(mod, node):
            if any(_acts_on_pair(ref.module, n) for n in ref.module.walk(ref.node)):
                return True
    return False


def _acts_on_pair(mod: PyModule, node: ast.AST) -> bool:
    """A pairing test that changes what is kept: a `while` over tool results, a filtering comprehension, or an
    `if` that moves the cut (`cut += 1`), skips, drops or leaves; not one that only reads `tool_calls` to count.
    """
    if isinstance(node, ast.While | ast.comprehension):
        test: ast.AST = node.test if isinstance(node, ast.While) else ast.Tuple(elts=list(node.ifs), ctx=ast.Load())
        return _mentions_pairing(mod, test)
    if not isinstance(node, ast.If) or not _mentions_pairing(mod, node.test):
        return False
    for sub in mod.walk_body(node.body):
        if isinstance(sub, ast.Continue | ast.Break | ast.Return | ast.Delete | ast.Raise):
            return True
        if isinstance(sub, ast.AugAssign) and isinstance(sub.value, ast.Constant):
            return True  # `start += 1`: the cut index advances past the tool result
        if isinstance(sub, ast.Call) and _last_name(sub) in {"pop", "popleft", "remove", "insert"}:
            return True
    return False


def _statement(mod: PyModule, node: ast.AST) -> ast.stmt | None:
    cur: ast.AST | None = node
    while cur is not None and not isinstance(cur, ast.stmt):
        cur = mod.parent(cur)
    return cur


def _rest_of_function(mod: PyModule, stmt: ast.stmt) -> list[ast.stmt]:
    """The statement, everything after it up to the end of its function, and the tests of the blocks around it."""
    out: list[ast.stmt] = [stmt]
    child: ast.AST = stmt
    for anc in mod.ancestors(stmt):
        out.extend(later_siblings(anc, child) or [])
        if isinstance(anc, ast.If | ast.While):
            out.append(ast.Expr(value=anc.test))
        if isinstance(anc, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module):
            break
        child = anc
    return out


def _trimmer(mod: PyModule, node: ast.AST) -> FunctionNode | None:
    """The outermost enclosing function named for trimming (a nested helper belongs to its trimmer)."""
    found: FunctionNode | None = None
    for anc in mod.ancestors(node):
        if isinstance(anc, ast.FunctionDef | ast.AsyncFunctionDef) and _TRIMMER.search(anc.name):
            found = anc
    return found


def _replaces_head(mod: PyModule, stmts: list[ast.stmt], names: set[str]) -> bool:
    """`history[0] = notice`: after the cut, the first (possibly orphaned) message is overwritten."""
    for node in mod.walk_body(stmts, into_functions=True):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and (mod.dotted(target.value) or "") in names and \
                        isinstance(target.slice, ast.Constant) and target.slice.value == 0:
                    return True
    return False


def _cut_names(mod: PyModule, node: ast.AST) -> set[str]:
    """The list that is cut and the names the cut result is stored in."""
    names: set[str] = set()
    base = node.value if isinstance(node, ast.Subscript) else node.func.value if isinstance(node, ast.Call) and \
        isinstance(node.func, ast.Attribute) else None
    if isinstance(node, ast.Delete):
        base = next((t.value for t in node.targets if isinstance(t, ast.Subscript)), None)
    if base is not None:
        names.add(mod.dotted(base) or "")
    stmt = _statement(mod, node)
    if isinstance(stmt, ast.Assign | ast.AnnAssign):
        for target in _targets_of(mod, stmt, node):
            names.add(mod.dotted(target) or "")
    names.discard("")
    return names


def _handles_pairs(mod: PyModule, project: PyProject, node: ast.AST, names: set[str]) -> bool:
    """Whether the cut list is checked for pairing after the cut (in the function, or in its trimming helper)."""
    stmt = _statement(mod, node)
    if stmt is None:
        return False
    trimmer = _trimmer(mod, node)
    region = list(trimmer.body) if trimmer is not None else _rest_of_function(mod, stmt)
    return _pair_checks(mod, project, region, names) or _replaces_head(mod, region, names)


_SEND_NAME = re.compile(r"(chat|complet|generat|invoke|request|create|send|ask|query|run|step|llm|model|respond|"
                        r"predict|call)", re.I)
_HISTORY_FN = re.compile(r"((get|build|prepare|load|fetch|make|assemble|compose)_?\w*(messages|history|context|"
                         r"prompt|conversation|input)|trim|truncat|window|compact|prune|fit|shrink|evict)", re.I)


def _is_send(mod: PyModule, call: ast.Call) -> bool:
    return idioms.is_model_call(mod, call) or bool(_SEND_NAME.search(_last_name(call)))


def _reaches_model(mod: PyModule, sub: ast.Subscript) -> bool:
    """Whether the cut list is what the model is sent: passed to a request, returned by a history builder, or
    stored back into a persistent history; not a slice shown in a UI or returned by a listing API.
    """
    stmt = _statement(mod, sub)
    fn = mod.enclosing_function(sub)
    builder = fn is not None and bool(_HISTORY_FN.search(fn.name))
    if isinstance(stmt, ast.Return):
        return builder and not _wrapped_in_call(mod, sub, stmt)
    for anc in mod.ancestors(sub):
        if isinstance(anc, ast.keyword):
            call = mod.parent(anc)
            return isinstance(call, ast.Call) and _is_send(mod, call)
        if isinstance(anc, ast.stmt):
            break
    if not isinstance(stmt, ast.Assign | ast.AnnAssign):
        return False
    keys = {mod.dotted(t) or "" for t in _targets_of(mod, stmt, sub)} - {""}
    if any(k.startswith("self.") for k in keys):
        return True
    for later in _rest_of_function(mod, stmt)[1:]:
        for node in mod.walk_body([later]):
            if isinstance(node, ast.Call) and _is_send(mod, node) and any(
                    _refers(mod, arg, keys) for arg in [*node.args, *(kw.value for kw in node.keywords)]):
                return True
            if isinstance(node, ast.Return) and node.value is not None and builder and \
                    _refers(mod, node.value, keys) and not isinstance(node.value, ast.Call):
                return True
    return False


def _wrapped_in_call(mod: PyModule, node: ast.AST, stop: ast.AST) -> bool:
    """Whether `node` reaches `stop` through a call (`json.dumps(msgs[-5:])` is text, not a message list)."""
    for anc in mod.ancestors(node):
        if anc is stop:
            return False
        if isinstance(anc, ast.Call) and _last_name(anc) not in {"list", "deque"}:
            return True
    return False


def _is_tail_slice(mod: PyModule, sub: ast.Subscript) -> bool:
    """`x[-N:]` / `x[-self.k:]` / `x[len(x) - n:]`: keep the last N by count (not `x[-1:]`, the last item)."""
    sl = sub.slice
    if not isinstance(sl, ast.Slice) or sl.upper is not None or sl.step is not None or sl.lower is None:
        return False
    low = sl.lower
    if isinstance(low, ast.UnaryOp) and isinstance(low.op, ast.USub):
        return not (isinstance(low.operand, ast.Constant) and low.operand.value == 1)
    if isinstance(low, ast.Constant) and isinstance(low.value, int):
        return low.value < -1
    if isinstance(low, ast.BinOp) and isinstance(low.op, ast.Sub) and isinstance(low.left, ast.Call):
        return mod.call_name(low.left) == "len"
    return False


def _kept_as_history(mod: PyModule, node: ast.AST) -> bool:
    """Whether the cut value becomes the history: assigned, returned or sent, not only read or printed."""
    for anc in mod.ancestors(node):
        if isinstance(anc, ast.BinOp | ast.List | ast.Tuple | ast.Starred | ast.IfExp):
            continue
        if isinstance(anc, ast.Call):
            name = idioms.last(mod.call_name(anc)) if mod.call_name(anc) else ""
            if name in {"list", "deque"}:
                continue
            return False
        if isinstance(anc, ast.keyword):
            return anc.arg in _KEEP_KWARGS
        if isinstance(anc, ast.Assign | ast.AnnAssign):
            targets = _targets_of(mod, anc, node)
            if any(_is_history(mod, t) or _is_keep_name(t) for t in targets):
                return True
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            return bool(names) and _returned_as_list(mod, anc, names)
        return isinstance(anc, ast.Return)
    return False


def _targets_of(mod: PyModule, stmt: ast.Assign | ast.AnnAssign, node: ast.AST) -> list[ast.expr]:
    """The targets that receive `node`: in `head, tail = xs[:-k], xs[-k:]` the slice `xs[-k:]` goes to `tail`."""
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    out: list[ast.expr] = []
    for target in targets:
        if isinstance(target, ast.Tuple | ast.List) and isinstance(stmt.value, ast.Tuple | ast.List) and \
                len(target.elts) == len(stmt.value.elts):
            for elt, val in zip(target.elts, stmt.value.elts, strict=True):
                if any(sub is node for sub in subtree(val)):
                    out.append(elt)
        else:
            out.append(target)
    return out


def _returned_as_list(mod: PyModule, stmt: ast.stmt, names: set[str]) -> bool:
    """Whether a later `return` of the function hands one of `names` back as (part of) the message list:
    `return [summary] + tail`, `return [first, *tail]`; not `return len(tail)`."""
    for later in _rest_of_function(mod, stmt)[1:]:
        for ret in mod.walk_body([later]):
            if not isinstance(ret, ast.Return) or ret.value is None:
                continue
            for sub in subtree(ret.value):
                if isinstance(sub, ast.Name) and sub.id in names and not _wrapped_in_call(mod, sub, ret):
                    return True
    return False


def _is_keep_name(target: ast.expr) -> bool:
    return isinstance(target, ast.Name) and bool(re.search(r"(trimmed|window|recent|kept|truncated|context)",
                                                           target.id, re.I))


def _cut_sites(mod: PyModule) -> Iterator[tuple[ast.AST, str]]:
    """Every count-only cut of a history list in `mod`, with a short description of it."""
    for sub in mod.nodes(ast.Subscript):
        if isinstance(sub.slice, ast.Slice) and isinstance(sub.ctx, ast.Load) and _is_tail_slice(mod, sub) \
                and _is_history(mod, sub.value) and _kept_as_history(mod, sub) and _reaches_model(mod, sub):
            yield sub, mod.segment(sub)
    for call in mod.calls_to(("deque", "pop", "popleft")):  # the only names the loop body acts on
        func = call.func
        if not isinstance(func, ast.Attribute):
            if isinstance(func, ast.Name) and func.id == "deque":
                yield from _deque_cut(mod, call)
            continue
        if func.attr == "deque":
            yield from _deque_cut(mod, call)
            continue
        if func.attr not in {"pop", "popleft"} or not isinstance(mod.parent(call), ast.Expr):
            continue  # `x = queue.popleft()` consumes a queue; a trim throws the message away
        head_pop = func.attr == "pop" and len(call.args) == 1 and isinstance(call.args[0], ast.Constant) \
            and call.args[0].value in (0, 1)
        if (head_pop or (func.attr == "popleft" and not call.args)) and _is_history_copy(mod, func.value, call) \
                and _size_guarded(mod, call):
            yield call, mod.segment(call)
    for stmt in mod.nodes(ast.Delete):
        for target in stmt.targets:
            if not isinstance(target, ast.Subscript) or not _is_history(mod, target.value):
                continue
            sl = target.slice
            head_slice = isinstance(sl, ast.Slice) and sl.upper is not None and (
                sl.lower is None or (isinstance(sl.lower, ast.Constant) and sl.lower.value in (0, 1)))
            head_item = isinstance(sl, ast.Constant) and sl.value in (0, 1) and _size_guarded(mod, stmt)
            if head_slice or head_item:
                yield stmt, f"del {mod.segment(target)}"


def _is_history_copy(mod: PyModule, expr: ast.AST, at: ast.AST) -> bool:
    """A history list, or a local copy of one: `body = list(messages[1:])`, `msgs = history.copy()`."""
    if _is_history(mod, expr):
        return True
    fn = mod.enclosing_function(at)
    if fn is None or not isinstance(expr, ast.Name):
        return False
    for node in mod.walk(fn):
        if not isinstance(node, ast.Assign) or not any(isinstance(t, ast.Name) and t.id == expr.id
                                                       for t in node.targets):
            continue
        value = node.value
        if isinstance(value, ast.Call) and _last_name(value) in {"list", "copy"}:
            value = value.args[0] if value.args else value.func.value if isinstance(value.func, ast.Attribute) \
                else value
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice):
            value = value.value
        if _is_history(mod, value):
            return True
    return False


_SIZE_NAME = re.compile(r"(token|limit|max|size|length|budget|window|capacity|context)", re.I)


def _size_guarded(mod: PyModule, node: ast.AST) -> bool:
    """Whether a head removal runs because the history is too big (a size test around it, or a trimming function):
    the same call elsewhere consumes a queue (`unsent_messages.popleft()` after sending).
    """
    fn = mod.enclosing_function(node)
    if fn is not None and _TRIMMER.search(fn.name):
        return True
    for anc in mod.ancestors(node):
        if isinstance(anc, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return False
        if not isinstance(anc, ast.If | ast.While):
            continue
        for sub in subtree(anc.test):
            if not isinstance(sub, ast.Compare):
                continue
            for operand in subtree(sub):
                if isinstance(operand, ast.Call) and (_last_name(operand) == "len" or
                                                      _MEASURE.search(_last_name(operand))):
                    return True
                if isinstance(operand, ast.Name | ast.Attribute) and \
                        _SIZE_NAME.search(idioms.last(mod.dotted(operand) or "")):
                    return True
    return False


def _deque_cut(mod: PyModule, call: ast.Call) -> Iterator[tuple[ast.AST, str]]:
    """`history = deque(maxlen=N)`: the deque itself drops the oldest message by count."""
    if mod.keyword(call, "maxlen") is None:
        return
    parent = mod.parent(call)
    if isinstance(parent, ast.AnnAssign) and _scalar_items(mod, parent.annotation):
        return  # a deque of strings or ids (loop detection, dedupe), not of messages
    if isinstance(parent, ast.Assign | ast.AnnAssign):
        targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
        if any(_declared_scalar_items(mod, t) for t in targets):
            return  # `self.recent = deque(maxlen=n)` where the class declares `recent: deque[str]`
        if any(_is_history(mod, t) for t in targets):
            yield parent, mod.segment(call)


def _scalar_items(mod: PyModule, annotation: ast.expr) -> bool:
    """`deque[str]`, `list[int]`: a container annotated to hold strings or numbers, which holds no tool call."""
    return isinstance(annotation, ast.Subscript) and (mod.dotted(annotation.slice) or "") in {"str", "int", "bytes"}


def _declared_scalar_items(mod: PyModule, target: ast.expr) -> bool:
    """For `self.x`, whether the enclosing class declares `x` as a container of strings or numbers."""
    if not (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"):
        return False
    cls = mod.enclosing_class(target)
    return cls is not None and any(
        isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == target.attr
        and _scalar_items(mod, stmt.annotation) for stmt in cls.body)


@rule(CheckId.C13, lang="python", name="count-cut-splits-tool-pair")
def count_cut_splits_tool_pair(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a history cut chosen by message count alone (`messages[-N:]`, `history.pop(0)`, `del messages[:n]`,
    `deque(maxlen=N)`) in a function that never looks at tool calls or results: the boundary can fall between
    a tool call and its result and leave an orphan the provider rejects. A deque declared to hold strings or numbers
    (`recent: deque[str]`) holds no tool calls and is not flagged.
    """
    seen: set[tuple[int, str]] = set()
    for node, text in _cut_sites(mod):
        fn = mod.enclosing_function(node)
        key = (id(fn), text.split("[")[0].split(".pop")[0].removeprefix("del "))
        if key in seen or _handles_pairs(mod, project, node, _cut_names(mod, node)):
            continue
        seen.add(key)
        speaks = _module_speaks_llm(mod)
        if not speaks and not (key[1].startswith("self.") and _project_uses_tools(project)):
            continue  # no sign that this list is a model history that can hold tool calls
        yield Hit(
            node=node,
            verdict=Verdict.CONFIRMED if speaks else Verdict.SUSPECTED,
            claim=f"`{text}` chooses the history cut by count alone; nothing checks that a tool result is not "
                  "left without its tool call (or a call without its result)",
            consequence="once the history is long enough to be cut, the next request can start with an orphaned "
                        "tool result and the provider rejects it (HTTP 400), ending the session",
            direction="move the cut forward past leading tool results (and drop a trailing call without its "
                      "results), or cut only at user-turn boundaries so call/result pairs stay together",
            confirm_hint="" if speaks else "verify that this history is sent to the model and can hold tool calls "
                                           "and results; if it can, the cut can separate a pair",
        )


def _measure_of_history(mod: PyModule, expr: ast.AST) -> bool:
    """A size measure of the history: `count_tokens(messages)`, `len(json.dumps(history))`, `tokens(msgs) > N`."""
    for sub in subtree(expr):
        if not isinstance(sub, ast.Call):
            continue
        name = mod.call_name(sub) or ""
        args = [*sub.args, *(kw.value for kw in sub.keywords)]
        on_history = any(_is_history(mod, a) or any(_is_history(mod, n) for n in subtree(a)) for a in args)
        if not on_history:
            if isinstance(sub.func, ast.Attribute) and _is_history(mod, sub.func.value) and \
                    _MEASURE.search(sub.func.attr):
                return True
            continue
        if name == "len":
            # `len(messages)` counts messages (a count cut); `len(str(messages))` measures size
            return bool(sub.args) and not _is_history(mod, sub.args[0])
        if _MEASURE.search(idioms.last(name)):
            return True
    return False


def _size_test(mod: PyModule, test: ast.expr) -> bool:
    return any(isinstance(c, ast.Compare) and _measure_of_history(mod, c) for c in subtree(test))


def _rechecks(mod: PyModule, project: PyProject, stmts: list[ast.stmt]) -> bool:
    for node in mod.walk_body(stmts):
        if isinstance(node, ast.Raise):
            return True
        if isinstance(node, ast.If | ast.While | ast.Assert) and _size_test(mod, node.test):
            return True
    return False


def _after(mod: PyModule, stmt: ast.stmt) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    child: ast.AST = stmt
    for anc in mod.ancestors(stmt):
        out.extend(later_siblings(anc, child) or [])
        if isinstance(anc, ast.FunctionDef | ast.AsyncFunctionDef | ast.Module):
            break
        child = anc
    return out


def _size_guards(mod: PyModule) -> list[ast.If]:
    """`if` statements whose test measures the history's size (found from the measuring calls, not every `if`)."""
    out: dict[int, ast.If] = {}
    for call in mod.calls_to([n for n in mod.called_names() if n == "len" or _MEASURE.search(n)]):
        for anc in mod.ancestors(call):
            if isinstance(anc, ast.stmt):
                if isinstance(anc, ast.If) and id(anc) not in out and _size_test(mod, anc.test):
                    out[id(anc)] = anc
                break
    return sorted(out.values(), key=lambda n: n.lineno)


@rule(CheckId.C13, lang="python", name="compaction-without-size-recheck")
def compaction_without_size_recheck(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags `if tokens(messages) > limit:` that summarises or compacts once and then goes on to send, with no
    second measurement, loop or error: when the summary plus the kept messages is still too large, the request
    fails at the context limit anyway.
    """
    if not any(_COMPACT.search(name) for name in mod.called_names()):
        return
    for node in _size_guards(mod):
        compaction = next((c for c in mod.walk_body(node.body) if isinstance(c, ast.Call)
                           and _COMPACT.search(idioms.last(mod.call_name(c) or "") or "")), None)
        if compaction is None:
            continue
        if any(isinstance(loop, ast.While) and _size_test(mod, loop.test) for loop in mod.enclosing_loops(node)):
            continue
        if _rechecks(mod, project, node.body) or _rechecks(mod, project, _after(mod, node)):
            continue
        helpers = project.resolve_call(mod, compaction)
        if any(_rechecks(ref.module, project, ref.node.body) for ref in helpers):
            continue
        yield Hit(
            node=node,
            verdict=Verdict.SUSPECTED,
            claim=f"`{mod.segment(node.test)}` triggers one `{mod.segment(compaction.func)}` and the history is "
                  "then used without measuring it again",
            consequence="when the summary plus the kept messages still exceeds the window, the request fails at "
                        "the context limit and the session dies",
            direction="re-measure after compaction and loop (or fall back to a hard cut at a pair boundary, or "
                      "raise a clear context-exhausted error) until the history fits",
            confirm_hint="verify that the compacted history is always below the limit (summary size is bounded "
                         "and the kept tail cannot exceed the window on its own)",
        )


def _result_value(mod: PyModule, node: ast.AST) -> ast.expr | None:
    """The content of a tool-result message literal (`{"role": "tool", "content": X}`, `ToolMessage(X)`)."""
    if isinstance(node, ast.Dict):
        if not any(isinstance(v, ast.Constant) and v.value in _RESULT_ROLE_VALUES for v in node.values):
            return None
        pairs = {k.value: v for k, v in zip(node.keys, node.values, strict=True)
                 if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        if not any(isinstance(pairs.get(k), ast.Constant) and pairs[k].value == v  # type: ignore[union-attr]
                   for k, v in _RESULT_ROLES):
            return None
        return pairs.get("content") or pairs.get("output")
    if isinstance(node, ast.Call) and _last_name(node) in _RESULT_CTORS:
        return mod.keyword(node, "content") or (node.args[0] if node.args else None)
    return None


def _bounded_expr(mod: PyModule, expr: ast.AST) -> bool:
    """A slice that caps the size (`out[:N]`, `out[-N:]`) or a call that truncates, summarises or spills."""
    for sub in subtree(expr):
        if isinstance(sub, ast.Subscript) and isinstance(sub.slice, ast.Slice) and (
                sub.slice.upper is not None or isinstance(sub.slice.lower, ast.UnaryOp)):
            return True
        if isinstance(sub, ast.Call) and _BOUND_CALL.search(idioms.last(mod.call_name(sub) or "") or ""):
            return True
    return False


def _bounded_in(mod: PyModule, fn: FunctionNode, names: set[str]) -> bool:
    """Whether `fn` bounds one of `names`: a slice with an upper bound, a truncating call, a length test."""
    for node in mod.walk(fn):
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            hit = any(isinstance(t, ast.Name) and t.id in names for t in targets)
            if hit and node.value is not None and _bounded_expr(mod, node.value):
                return True
        if isinstance(node, ast.Compare):
            for sub in subtree(node):
                if isinstance(sub, ast.Call) and mod.call_name(sub) == "len" and sub.args and \
                        isinstance(sub.args[0], ast.Name) and sub.args[0].id in names:
                    return True
    return False


def _producer_bounds(mod: PyModule, project: PyProject, fn: FunctionNode, names: set[str]) -> bool:
    """Whether a project function that produced one of `names` bounds its own output."""
    for node in mod.walk(fn):
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call | ast.Await):
            continue
        if not any(isinstance(t, ast.Name) and t.id in names for t in node.targets):
            continue
        call = node.value.value if isinstance(node.value, ast.Await) else node.value
        if not isinstance(call, ast.Call):
            continue
        for ref in project.resolve_call(mod, call):
            if any(isinstance(r, ast.Return) and r.value is not None and _bounded_expr(ref.module, r.value)
                   for r in ref.module.walk(ref.node)):
                return True
    return False


_CAP_FN = re.compile(r"((truncat|clip|cap|limit|shorten|trim|spill|offload|elide)\w*(output|result|observation|"
                     r"content|response)|(output|result|observation)\w*(truncat|clip|limit|cap|spill|trim))", re.I)


class _Caps:
    """Whether the project has an output-capping function it calls (computed once per project)."""

    project: PyProject | None = None
    value: bool = False


def _project_caps_outputs(project: PyProject) -> bool:
    """A pass like `truncate_tool_outputs(messages)` may bound every result before the request; the rule
    cannot place it on the path, so it stays silent rather than guess."""
    if _Caps.project is project:
        return _Caps.value
    names = {fn.name for mod in project.modules.values() for fn in mod.functions() if _CAP_FN.search(fn.name)}
    used = bool(names) and any(not names.isdisjoint(mod.called_names()) for mod in project.modules.values())
    _Caps.project, _Caps.value = project, used
    return used


def _is_tool_invocation(mod: PyModule, call: ast.Call) -> bool:
    """A call that runs a tool: `TOOLS[name](**args)`, `run_tool(...)`, `tool.invoke(...)`, a process spawn."""
    if isinstance(call.func, ast.Subscript):
        registry = idioms.last(mod.dotted(call.func.value) or "")
        return bool(re.search(r"(tool|handler|func|function|registry|dispatch|command|action)s?(_?map|_?table)?$",
                              registry, re.I))
    name = mod.call_name(call) or ""
    if not name:
        return False
    meth, recv = idioms.last(name), idioms.receiver(name)
    if _TOOL_CALL.search(meth) or idioms.is_spawn(mod, call):
        return True
    return bool(re.search(r"(tool|handler|func|fn)s?$", idioms.last(recv), re.I)) and \
        meth in {"run", "arun", "invoke", "ainvoke", "call", "acall", "execute", "__call__", "forward"}


def _tool_output_names(mod: PyModule, fn: FunctionNode) -> set[str]:
    """Local names that hold a tool's raw output (assigned from a tool invocation, or from such a name)."""
    names: set[str] = set()
    for node in mod.walk(fn):
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        if _carries_tool_output(mod, node.value, names):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _carries_tool_output(mod: PyModule, expr: ast.AST, names: set[str]) -> bool:
    for sub in subtree(expr):
        if isinstance(sub, ast.Call) and _is_tool_invocation(mod, sub):
            return True
        if isinstance(sub, ast.Name) and sub.id in names:
            return True
    return False


@rule(CheckId.C13, lang="python", name="tool-output-pushed-whole")
def tool_output_pushed_whole(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a tool-result message whose content is the tool's raw output with no size bound anywhere on the
    way (no slice, truncation, spill to storage or length test): one large output fills the context window.
    """
    seen: set[int] = set()
    candidates = [n for n in [*mod.nodes(ast.Dict), *mod.calls_to(_RESULT_CTORS)] if _result_value(mod, n) is not None]
    if not candidates or _project_caps_outputs(project):
        return
    for node in candidates:
        value = _result_value(mod, node)
        if value is None or isinstance(value, ast.Constant | ast.JoinedStr) and not any(
                isinstance(n, ast.FormattedValue) for n in subtree(value)):
            continue
        fn = mod.enclosing_function(node)
        if fn is None or id(fn) in seen or _bounded_expr(mod, value) or isinstance(mod.parent(node), ast.Attribute):
            continue
        outputs = _tool_output_names(mod, fn)
        if not _carries_tool_output(mod, value, outputs):
            continue  # converters and error messages: the raw output entered history elsewhere, if at all
        names = {n.id for n in subtree(value) if isinstance(n, ast.Name)} & outputs
        if _bounded_in(mod, fn, names) or _producer_bounds(mod, project, fn, names):
            continue
        seen.add(id(fn))
        yield Hit(
            node=node,
            verdict=Verdict.SUSPECTED,
            claim=f"the tool result `{mod.segment(value)}` enters history whole; nothing bounds its size",
            consequence="one large tool output (a big file, a verbose command) fills the context window; the next "
                        "request fails or pushes out everything before it",
            direction="cap tool output before it enters history (truncate with a marker, or spill it to storage "
                      "and put a reference plus a preview in the message)",
            confirm_hint=f"verify that every tool behind `{mod.segment(value)}` returns a bounded amount of text "
                         "(no unbounded file reads, command output or HTTP bodies)",
        )
