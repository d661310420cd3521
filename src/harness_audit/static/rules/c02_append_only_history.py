"""C2 · History is append-only — Python rules.

Shapes detected:
- `history-message-mutated`: a message already in history written in place: `messages[-1]["content"] += chunk`,
  `self.history[i].content = ...`, `last = messages[-1]; last["x"] = ...`, `for m in self.messages: m.content = ...`,
  element writes through a shallow copy (`list(self.messages)`), or a helper doing it to the history it is handed
  (also a conversation the caller appends to each turn), parts of a message iterated (`for tc in
  messages[-1]["tool_calls"]`, `for block in msg["content"]`), `last = H[-1] if H else None`.
- `history-list-rewritten`: the history list itself rewritten outside compaction: `messages[i] = ...`,
  `del messages[i]`, `messages.insert(...)`, `messages.pop(i)` (`pop(-1)` only suspected; replacing `[-1]` is not
  flagged: it is how the newest, possibly unsent, message is finalised).
- `appended-message-mutated`: a message object written after it was appended (`self.messages.append(msg)` then
  `msg["content"] += delta` while streaming).
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from enum import StrEnum

from harness_audit.findings import CheckId, Verdict
from harness_audit.static import idioms
from harness_audit.static.lang.python import FunctionNode, PyModule, PyProject
from harness_audit.static.registry import Hit, rule

_HISTORY = re.compile(
    r"^_*(\w+_)?(messages|message_history|history|chat_history|conversation|transcript|msgs|dialog(ue)?)$",
    re.I)
"""Last name of an expression that holds the conversation."""
_PAYLOAD = re.compile(
    r"^_*(openai|anthropic|gemini|google|vertex|bedrock|mistral|cohere|groq|ollama|litellm|hf|mcp|sampling|api|"
    r"request|req|converted|formatted|processed|payload|prompt|wire|sdk|raw|provider|clean|cleaned|new|result|"
    r"out|output|merged|filtered|final|display|ui|rendered|chatbot|gradio|streamlit|pending|queued|"
    r"tmp|temp|local|copied|copy|trimmed|truncated|compacted)_", re.I)
"""Prefixes of lists built for one request or one view, not the history itself."""
_COMPACTION = re.compile(
    r"(compact|summar|trim|truncat|prune|shrink|compress|window|evict|condens|(^|_)fit(_|$)|rewind|rollback|undo|"
    r"repair|orphan|broken|dangling|heal)", re.I)
"""Names of the isolated steps allowed to rewrite history (judged under C13)."""
_ELEMENT_METHODS = {"append", "extend", "insert", "update", "pop", "remove", "clear", "setdefault", "popitem"}
_LIST_METHODS = {"insert", "pop", "sort", "reverse"}
_STATE_ROOT = re.compile(r"^(ctx|context|\w+_context|state|\w+_state|agent|session|memory|run|\w+_run|thread|chat)$")
"""Parameter names whose attributes are long-lived run state (`ctx.state.message_history`)."""


class _Origin(StrEnum):
    """Where a history expression comes from, as far as the enclosing function shows."""

    LIVE = "live"
    """Object state (`self.messages`, `ctx.state.message_history`) or an alias of it."""
    PARAM = "param"
    """A parameter: the caller's list."""
    SHALLOW = "shallow"
    """A shallow copy of live history: a new list holding the same message objects."""
    LOCAL = "local"
    """A list built in this function (a request payload), or something this rule cannot place."""


@dataclass(frozen=True, slots=True)
class _Place:
    """A history expression and what it is."""

    origin: _Origin
    """Where it comes from."""
    name: str
    """How it is written in the code."""
    via: str = ""
    """For a shallow copy or an alias, the live history it came from."""


def _history_name(mod: PyModule, expr: ast.AST) -> str | None:
    """The expression as written when it names a conversation history (and not a request payload)."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, str):
        key = expr.slice.value
        base = mod.dotted(expr.value)
        if base and _HISTORY.match(key) and not _PAYLOAD.match(key):
            return f"{base}[{key!r}]"
        return None
    dotted = mod.dotted(expr)
    if not dotted or "()" in dotted:
        return None
    tail = idioms.last(dotted)
    return dotted if _HISTORY.match(tail) and not _PAYLOAD.match(tail) else None


def _params(fn: FunctionNode) -> set[str]:
    a = fn.args
    return {p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]} | (
        {a.vararg.arg} if a.vararg else set()) | ({a.kwarg.arg} if a.kwarg else set())


_MEMO: list[tuple[PyProject, dict[tuple[str, int], object]]] = []
"""The last project's memo (one project at a time, so nothing outlives the next audit)."""


def _memo(project: PyProject) -> dict[tuple[str, int], object]:
    """Per-project memo keyed by (what, id of a module); ids are stable while the project is alive."""
    if not _MEMO or _MEMO[0][0] is not project:
        _MEMO[:] = [(project, {})]
    entry = _MEMO[0]
    return entry[1]


_Bindings = dict[str, list[ast.expr]]
_BINDING_KINDS = (ast.Assign, ast.AnnAssign, ast.NamedExpr)


def _bound_names(node: ast.AST) -> list[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
    return [t.id for t in targets if isinstance(t, ast.Name)]


@dataclass(frozen=True, slots=True)
class _Ctx:
    """The module under analysis, its project, and name bindings computed per function on demand."""

    mod: PyModule
    """The module."""
    project: PyProject
    """The whole project (callers of helpers)."""
    element_names: frozenset[str]
    """Names ever bound to one message of a history-named list (`m = messages[-1]`, `for m in history`)."""
    scopes: dict[int, _Bindings]
    """id of a function (0: module level) → name → values bound to it there; filled lazily."""
    writes: list[tuple[ast.stmt, ast.Attribute | ast.Subscript]]
    """(statement, target) for every assignment, augmented assignment and `del` into an attribute or item."""

    @classmethod
    def of(cls, mod: PyModule, project: PyProject) -> _Ctx:
        """The context of `mod`, built once per project."""
        memo = _memo(project)
        key = ("ctx", id(mod))
        hit = memo.get(key)
        if isinstance(hit, _Ctx):
            return hit
        elements: set[str] = set()
        for kind in _BINDING_KINDS:
            for node in mod.nodes(kind):
                value = _unwrap_ifexp(getattr(node, "value", None))
                if not isinstance(value, ast.Subscript):
                    continue
                base = _element_base(value)
                if base is not None and base[0] is value and _history_name(mod, base[1]):
                    elements.update(_bound_names(node))
        loops = [*mod.nodes(ast.For), *mod.nodes(ast.AsyncFor)]
        for _ in range(2):  # a loop over the parts of a message (`for block in msg["content"]`) is nested once
            for loop in loops:
                if _history_name(mod, _strip_enumerate(loop.iter)) or _part_of_element(mod, loop.iter, elements):
                    targets = loop.target.elts if isinstance(loop.target, ast.Tuple) else [loop.target]
                    elements.update(t.id for t in targets if isinstance(t, ast.Name))
        writes: list[tuple[ast.stmt, ast.Attribute | ast.Subscript]] = []
        for kind in (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete):
            for node in mod.nodes(kind):
                assert isinstance(node, ast.stmt)
                for target in _write_targets(node):
                    for t in target.elts if isinstance(target, ast.Tuple) else [target]:
                        if isinstance(t, ast.Attribute | ast.Subscript):
                            writes.append((node, t))
        cx = cls(mod, project, frozenset(elements), {}, writes)
        memo[key] = cx
        return cx

    def assigned(self, fn: FunctionNode | None, name: str) -> list[ast.expr]:
        """Values bound to `name` directly in `fn` (module level when `fn` is None)."""
        key = id(fn) if fn is not None else 0
        scope = self.scopes.get(key)
        if scope is None:
            scope = {}
            for kind in _BINDING_KINDS:
                nodes = self.mod.nodes(kind) if fn is None else _in_range(self.mod, kind, fn)
                for node in nodes:
                    value = getattr(node, "value", None)
                    if isinstance(value, ast.expr) and self.mod.enclosing_function(node) is fn:
                        for bound in _bound_names(node):
                            scope.setdefault(bound, []).append(value)
            self.scopes[key] = scope
        return scope.get(name, [])


def _in_range(mod: PyModule, kind: type[ast.AST], scope: ast.AST) -> list[ast.AST]:
    """Nodes of one type inside `scope`'s lines, from the module index (no walk of the scope)."""
    nodes = mod.nodes(kind)
    start, end = getattr(scope, "lineno", 0), getattr(scope, "end_lineno", 0) or 0
    lo = bisect.bisect_left(nodes, start, key=lambda n: getattr(n, "lineno", 0))
    hi = bisect.bisect_right(nodes, end, key=lambda n: getattr(n, "lineno", 0))
    return nodes[lo:hi]


def _is_shallow_copy(mod: PyModule, value: ast.expr) -> ast.expr | None:
    """The copied list when `value` is `list(x)`, `x.copy()`, `x[:]` or `[*x]` (same message objects)."""
    if isinstance(value, ast.Call) and mod.call_name(value) == "list" and len(value.args) == 1:
        return value.args[0]
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "copy" \
            and not value.args:
        return value.func.value
    if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice) and value.slice.lower is None \
            and value.slice.upper is None:
        return value.value
    if isinstance(value, ast.List) and len(value.elts) == 1 and isinstance(value.elts[0], ast.Starred):
        return value.elts[0].value
    return None


def _place(cx: _Ctx, fn: FunctionNode | None, expr: ast.AST, depth: int = 0) -> _Place | None:
    """Classify a history expression: live object state, a parameter, a shallow copy, or a local payload."""
    mod = cx.mod
    name = _history_name(mod, expr)
    if name is None:
        return None
    root = expr
    while isinstance(root, ast.Attribute | ast.Subscript):
        root = root.value
    if not isinstance(root, ast.Name):
        return _Place(_Origin.LOCAL, name)
    chained = root is not expr
    if root.id in {"self", "cls"}:
        return _Place(_Origin.LIVE, name)
    values = cx.assigned(fn, root.id) if fn is not None else []
    if values:
        for value in values:
            if chained or depth >= 2:
                break
            copied = _is_shallow_copy(mod, value)
            src = _place(cx, fn, copied, depth + 1) if copied is not None else None
            if src is not None and src.origin is _Origin.LIVE:
                return _Place(_Origin.SHALLOW, name, src.name)
            src = _place(cx, fn, value, depth + 1) if isinstance(value, ast.Attribute | ast.Subscript) else None
            if src is not None and src.origin is _Origin.LIVE:
                return _Place(_Origin.LIVE, name, src.name)
        return _Place(_Origin.LOCAL, name)
    if fn is not None and root.id in _params(fn):
        if not chained:
            return _Place(_Origin.PARAM, name)
        return _Place(_Origin.LIVE if _STATE_ROOT.match(root.id) else _Origin.LOCAL, name)
    if cx.assigned(None, root.id) and (chained or _history_name(mod, root)):
        return _Place(_Origin.LIVE, name)  # a module-level history list used from functions
    return _Place(_Origin.LOCAL, name)


def _compaction(mod: PyModule, fn: FunctionNode | None) -> bool:
    """Whether `fn`, or a function it is nested in, is a compaction step (a helper inside `truncate` counts)."""
    while fn is not None:
        if _COMPACTION.search(fn.name):
            return True
        fn = mod.enclosing_function(fn)
    return False


# ---------------------------------------------------------------- callers of helpers that rewrite a parameter
def _live_caller(cx: _Ctx, fn: FunctionNode, param: str) -> str | None:
    """`file:line` of a call that hands live history to `fn`'s parameter `param`, if the project has one."""
    a = fn.args
    positional = [p.arg for p in [*a.posonlyargs, *a.args]]
    if param not in positional and param not in {p.arg for p in a.kwonlyargs}:
        return None
    is_method = isinstance(cx.mod.parent(fn), ast.ClassDef)
    for other, call in idioms.callers_of(cx.project, fn):
        arg: ast.expr | None = other.keyword(call, param)
        if arg is None and param in positional:
            index = positional.index(param) - (1 if is_method and isinstance(call.func, ast.Attribute) else 0)
            arg = call.args[index] if 0 <= index < len(call.args) else None
        if arg is None:
            continue
        place = _place(_Ctx.of(other, cx.project), other.enclosing_function(call), arg)
        if place is not None and place.origin is _Origin.LIVE:
            return f"{other.path}:{call.lineno} passes `{place.name}`"
        caller = other.enclosing_function(call)
        if isinstance(arg, ast.Name) and caller is not None and _conversation(other, caller, arg.id):
            return f"{other.path}:{call.lineno} passes `{arg.id}`, the conversation `{caller.name}` grows"
    return None


def _conversation(mod: PyModule, fn: FunctionNode, name: str) -> bool:
    """Whether `fn` grows the list `name` turn by turn: it appends to it and requests the model, or appends an
    assistant message to it (the running conversation, even when it was loaded from a store)."""
    appends = [c for c in _in_range(mod, ast.Call, fn) if isinstance(c, ast.Call)
               and isinstance(c.func, ast.Attribute) and c.func.attr in {"append", "extend"}
               and isinstance(c.func.value, ast.Name) and c.func.value.id == name and c.args]
    if not appends:
        return False
    if any(isinstance(c, ast.Call) and idioms.is_model_call(mod, c) for c in _in_range(mod, ast.Call, fn)):
        return True
    for c in appends:
        arg = c.args[0]
        values = [arg] if not isinstance(arg, ast.Name) else [v for v in _assigned_in(mod, fn, arg.id)]
        if any(_assistant_dict(v) for v in values):
            return True
    return False


def _assigned_in(mod: PyModule, fn: FunctionNode, name: str) -> list[ast.expr]:
    out: list[ast.expr] = []
    for kind in _BINDING_KINDS:
        for node in _in_range(mod, kind, fn):
            value = getattr(node, "value", None)
            if isinstance(value, ast.expr) and name in _bound_names(node):
                out.append(value)
    return out


def _assistant_dict(value: ast.AST) -> bool:
    return isinstance(value, ast.Dict) and any(
        isinstance(k, ast.Constant) and k.value == "role" and isinstance(v, ast.Constant) and v.value == "assistant"
        for k, v in zip(value.keys, value.values, strict=True))


# ---------------------------------------------------------------- shared judgement
@dataclass(frozen=True, slots=True)
class _Judged:
    """Whether and how certainly a write into `place` hits live history."""

    verdict: Verdict
    """Confirmed when the list is live history."""
    where: str
    """What the list is, for the claim."""
    hint: str
    """What a human must verify, for suspected findings."""


def _judge(cx: _Ctx, fn: FunctionNode | None, place: _Place, *, element: bool) -> _Judged | None:
    """None when the write cannot touch live history (a local payload, or a list rewrite on a copy)."""
    if place.origin is _Origin.LIVE:
        where = f"`{place.name}`" + (f" (an alias of `{place.via}`)" if place.via else "")
        return _Judged(Verdict.CONFIRMED, where, "")
    if place.origin is _Origin.SHALLOW:
        if not element:
            return None
        return _Judged(Verdict.CONFIRMED, f"`{place.name}`, a shallow copy of `{place.via}` that shares its "
                                          "message objects", "")
    if place.origin is _Origin.PARAM and fn is not None:
        caller = _live_caller(cx, fn, place.name)
        if caller is not None:
            return _Judged(Verdict.SUSPECTED, f"`{place.name}`, the history handed in ({caller})",
                           f"verify that `{fn.name}` is not the one compaction step and that the callers hand it "
                           "the live history rather than a copy")
        if _conversation(cx.mod, fn, place.name):
            return _Judged(Verdict.SUSPECTED, f"`{place.name}`, the conversation `{fn.name}` appends to",
                           f"verify that `{place.name}` is the conversation kept across turns and not a request "
                           "copy rebuilt each turn")
    return None


def _newest_only(index: ast.expr) -> bool:
    """`[-1]`: the newest message, which may still be the request being assembled."""
    return isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub) and isinstance(index.operand, ast.Constant) \
        and index.operand.value == 1


_INDEX_NAME = re.compile(r"^(i|j|k|n|idx|index|pos|position|last|first|\w*_(i|idx|index|pos|position|at))$", re.I)


def _is_index(expr: ast.expr) -> bool:
    """Whether a subscript looks like a list position (`-1`, `i`, `idx`, `len(m) - 1`), not a dict key."""
    if isinstance(expr, ast.Constant):
        return isinstance(expr.value, int) and not isinstance(expr.value, bool)
    if isinstance(expr, ast.UnaryOp):
        return _is_index(expr.operand)
    if isinstance(expr, ast.BinOp):
        return _is_index(expr.left) or _is_index(expr.right) or isinstance(expr.left, ast.Call)
    if isinstance(expr, ast.Name):
        return bool(_INDEX_NAME.match(expr.id))
    return isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "len"


def _element_base(node: ast.AST) -> tuple[ast.Subscript, ast.expr] | None:
    """For a chain like `H[i]["content"]` or `H[-1].parts`, the `H[i]` subscript and `H` (a position, not a key)."""
    cur = node
    found: tuple[ast.Subscript, ast.expr] | None = None
    while isinstance(cur, ast.Attribute | ast.Subscript):
        if isinstance(cur, ast.Subscript) and _is_index(cur.slice):
            found = (cur, cur.value)
        cur = cur.value
    return found


def _root_name(node: ast.AST) -> ast.Name | None:
    root = node
    while isinstance(root, ast.Attribute | ast.Subscript):
        root = root.value
    return root if isinstance(root, ast.Name) and root is not node else None


def _write_targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign | ast.Delete):
        return list(node.targets)
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    return []


# ---------------------------------------------------------------- rules
@rule(CheckId.C2, lang="python", name="history-message-mutated")
def history_message_mutated(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags writes into a message that is already in history: `messages[-1]["content"] += chunk`, an alias of an
    element (`last = self.messages[-1]`), a loop variable over history, or a shallow copy's elements. Outside one
    compaction step such a write makes replays lie and invalidates every cached prefix after it."""
    if idioms.is_test_module(mod):
        return
    cx = _Ctx.of(mod, project)
    found: list[tuple[tuple[int, str], Hit]] = []
    for stmt, target in cx.writes:
        if not isinstance(stmt, ast.Delete):
            hit = _element_write(cx, stmt, target)
            if hit is not None:
                found.append(hit)
    for call in idioms.calls_named(mod, project, _ELEMENT_METHODS):
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr not in _ELEMENT_METHODS:
            continue
        if isinstance(func.value, ast.Attribute | ast.Subscript):
            hit = _element_write(cx, call, func.value, method=func.attr)
            if hit is not None:
                found.append(hit)
    yield from _first_per_function(found)


def _first_per_function(found: list[tuple[tuple[int, str], Hit]]) -> Iterator[Hit]:
    """One finding per (function, history list): the first write, with how many more the function makes."""
    groups: dict[tuple[int, str], list[Hit]] = {}
    for key, hit in sorted(found, key=lambda kh: getattr(kh[1].node, "lineno", 0)):
        groups.setdefault(key, []).append(hit)
    for hits in groups.values():
        first = hits[0]
        if len(hits) > 1:
            lines = ", ".join(str(getattr(h.node, "lineno", "?")) for h in hits[1:6])
            first = replace(first, claim=f"{first.claim} (the same function does so again at line(s) {lines})")
        yield first


def _element_write(cx: _Ctx, node: ast.AST, target: ast.expr,
                   method: str | None = None) -> tuple[tuple[int, str], Hit] | None:
    mod = cx.mod
    base = _element_base(target)
    through_index = base is not None and base[0] is not target
    if through_index and base is not None and not _history_name(mod, base[1]):
        return None
    if not through_index:
        root = _root_name(target)
        if root is None or root.id not in cx.element_names:
            return None
    fn = mod.enclosing_function(node)
    if _compaction(mod, fn):
        return None
    if through_index and base is not None:
        if _replaced_before(mod, fn, base[0], node):
            return None  # the new element is being built; its replacement is history-list-rewritten's finding
        place = _place(cx, fn, base[1])
        what = "an element of {where}"
    else:
        place, what = _element_alias(cx, fn, target)
    if place is None:
        return None
    judged = _judge(cx, fn, place, element=True)
    if judged is None:
        return None
    action = f"`.{method}(...)` on" if method else "a write into"
    return (id(fn) if fn is not None else 0, place.name), Hit(
        node=node,
        verdict=judged.verdict,
        claim=f"{action} {what.format(where=judged.where)} changes a message already in history",
        consequence="the recorded conversation no longer matches what was sent, replays diverge, and every cached "
                    "prompt prefix after this message is invalidated",
        direction="build the complete message first (accumulate in a local) and append it once; keep any "
                  "rewrite of history inside one explicit compaction step",
        confirm_hint=judged.hint,
    )


def _replaced_before(mod: PyModule, fn: FunctionNode | None, element: ast.Subscript, node: ast.AST) -> bool:
    """The same element (`H[i]`, written alike) was assigned a new value earlier in a block that holds the write:
    `H[i] = {...}` then `H[i]["content"].append(...)` fills in the message that replaced the old one."""
    if fn is None:
        return False
    text = ast.unparse(element)
    holders = {id(a) for a in mod.ancestors(node)}
    line = getattr(node, "lineno", 0)
    for stmt in mod.walk(fn):
        if not (isinstance(stmt, ast.Assign) and stmt.lineno < line):
            continue
        parent = mod.parent(stmt)
        if parent is None or id(parent) not in holders:
            continue
        if any(isinstance(t, ast.Subscript) and ast.unparse(t) == text for t in stmt.targets):
            return True
    return False


def _element_alias(cx: _Ctx, fn: FunctionNode | None, target: ast.expr,
                   depth: int = 0) -> tuple[_Place | None, str]:
    """For a write to `m.x` / `m["x"]`: `m` bound from `H[i]`, or the loop variable of `for m in H`."""
    root = _root_name(target)
    if root is None or fn is None:
        return None, ""
    line = getattr(target, "lineno", 0)
    before = [v for v in cx.assigned(fn, root.id) if v.lineno < line]
    nearest = max(before, key=lambda v: v.lineno, default=None)
    if nearest is not None:
        value = _unwrap_ifexp(nearest)
        base = _element_base(value) if isinstance(value, ast.expr) else None
        if base is not None and base[0] is value:
            place = _place(cx, fn, base[1])
            if place is not None:
                return place, f"`{root.id}`, an element of {{where}}"
    loop = _loop_binding(cx.mod, root.id, target)
    if loop is not None and not (nearest is not None and nearest.lineno > loop.lineno):
        it = _strip_enumerate(loop.iter)
        place = _place(cx, fn, it)
        if place is not None:
            return place, f"`{root.id}`, a message of {{where}} being iterated"
        base = _element_base(it)
        if base is not None and depth < 2:  # `for tc in messages[-1]["tool_calls"]`
            place = _place(cx, fn, base[1])
            if place is not None:
                return place, f"`{root.id}`, a part of a message of {{where}}"
        if isinstance(it, ast.Attribute | ast.Subscript) and depth < 2:  # `for block in msg["content"]`
            place, _ = _element_alias(cx, fn, it, depth + 1)
            if place is not None:
                return place, f"`{root.id}`, a part of a message of {{where}} being iterated"
    return None, ""


def _unwrap_ifexp(value: ast.AST | None) -> ast.AST | None:
    """`H[-1] if H else None`: the element the name is bound to when it is bound at all."""
    return value.body if isinstance(value, ast.IfExp) else value


def _part_of_element(mod: PyModule, it: ast.expr, elements: set[str]) -> bool:
    """Whether a loop iterates the parts of one message: `H[-1]["tool_calls"]`, `msg["content"]` (msg an element)."""
    it = _strip_enumerate(it)
    if not isinstance(it, ast.Attribute | ast.Subscript):
        return False
    base = _element_base(it)
    if base is not None and base[0] is not it and _history_name(mod, base[1]):
        return True
    root = _root_name(it)
    return root is not None and root is not it and root.id in elements


def _strip_enumerate(expr: ast.expr) -> ast.expr:
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id in {"enumerate", "reversed"} \
            and expr.args:
        return expr.args[0]
    return expr


def _loop_binding(mod: PyModule, name: str, node: ast.AST) -> ast.For | ast.AsyncFor | None:
    for loop in mod.enclosing_loops(node):
        if not isinstance(loop, ast.For | ast.AsyncFor):
            continue
        target = loop.target
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        if any(isinstance(n, ast.Name) and n.id == name for n in names):
            return loop
    return None


@rule(CheckId.C2, lang="python", name="history-list-rewritten")
def history_list_rewritten(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags `messages[i] = ...`, `del messages[i]`, `messages.insert(...)` and `messages.pop(i)` on live history
    outside a compaction function. History must only grow at its end; anything else rewrites a past the provider
    already saw and breaks prompt caching from that point. Replacing `h[0]` right after testing that it is the system
    message (`assert h[0].role == Role.SYSTEM`) touches no turn and is not flagged."""
    if idioms.is_test_module(mod):
        return
    cx = _Ctx.of(mod, project)
    found: list[tuple[tuple[int, str], Hit]] = []
    for stmt, target in cx.writes:
        if not isinstance(target, ast.Subscript) or not _is_index(target.slice):
            continue
        if not isinstance(stmt, ast.Delete) and _newest_only(target.slice):
            # replacing `[-1]` is how a harness finalises the newest message before it is sent (a streamed reply,
            # a request being assembled); static analysis cannot tell it from rewriting a sent one, so stay silent
            continue
        fn = mod.enclosing_function(stmt)
        if _compaction(mod, fn) or _replaces_system_entry(mod, stmt, target):
            continue
        place = _place(cx, fn, target.value)
        judged = _judge(cx, fn, place, element=False) if place is not None else None
        if judged is None:
            continue
        action = "`del` removes" if isinstance(stmt, ast.Delete) else "an assignment replaces"
        found.append(((id(fn) if fn is not None else 0, place.name if place else ""),
                      _list_hit(stmt, judged, f"{action} an element of {judged.where}",
                                newest=_newest_only(target.slice))))
    for call in idioms.calls_named(mod, project, _LIST_METHODS):
        func = call.func
        if not isinstance(func, ast.Attribute):
            continue
        if func.attr == "pop" and not (call.args and _is_index(call.args[0])):
            continue  # dropping the newest message (a retry's rollback) is not a rewrite of the past
        fn = mod.enclosing_function(call)
        if _compaction(mod, fn):
            continue
        place = _place(cx, fn, func.value)
        judged = _judge(cx, fn, place, element=False) if place is not None else None
        if judged is None:
            continue
        newest = func.attr == "pop" and _newest_only(call.args[0])
        found.append(((id(fn) if fn is not None else 0, place.name if place else ""),
                      _list_hit(call, judged, f"`.{func.attr}(...)` rewrites {judged.where} in place", newest=newest)))
    yield from _first_per_function(found)


def _system_role_test(mod: PyModule, test: ast.expr, entry: str) -> bool | None:
    """True when `test` holds exactly when `entry` (`h[0]`) is the system message (`h[0].role == Role.SYSTEM`,
    `h[0]["role"] == "system"`), False when exactly when it is not, None when it says nothing about that."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _system_role_test(mod, test.operand, entry)
        return None if inner is None else not inner
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq | ast.NotEq)):
        return None
    sides = [test.left, test.comparators[0]]
    role = next((x for x in sides if isinstance(x, ast.Attribute) and x.attr == "role"
                 or isinstance(x, ast.Subscript) and isinstance(x.slice, ast.Constant) and x.slice.value == "role"),
                None)
    other = sides[1] if role is sides[0] else sides[0]
    system = isinstance(other, ast.Constant) and other.value == "system" or \
        isinstance(other, ast.Attribute) and other.attr.lower() == "system"
    if role is None or not system or ast.unparse(role.value) != entry:
        return None
    return isinstance(test.ops[0], ast.Eq)


def _replaces_system_entry(mod: PyModule, stmt: ast.stmt, target: ast.Subscript) -> bool:
    """`assert h[0].role == Role.SYSTEM; h[0] = build_system_message()`: the write replaces the system entry at the
    front, which the code has just tested to be the system message; no turn of the conversation is touched (what the
    new system text says is a prompt-prefix question, not a history edit)."""
    if not (isinstance(stmt, ast.Assign) and isinstance(target.slice, ast.Constant) and target.slice.value == 0):
        return False
    entry = ast.unparse(target)
    child: ast.AST = stmt
    for anc in mod.ancestors(stmt):
        if isinstance(anc, ast.If) and _system_role_test(mod, anc.test, entry) is (child in anc.body):
            return True
        for field in ("body", "orelse"):
            block = getattr(anc, field, None)
            if not isinstance(block, list) or child not in block:
                continue
            for prev in block[:block.index(child)]:
                if isinstance(prev, ast.Assert) and _system_role_test(mod, prev.test, entry) is True:
                    return True
        if isinstance(anc, FunctionNode | ast.ClassDef | ast.Module):
            return False
        child = anc
    return False


def _list_hit(node: ast.AST, judged: _Judged, what: str, *, newest: bool) -> Hit:
    verdict, hint = judged.verdict, judged.hint
    if newest and verdict is Verdict.CONFIRMED:
        verdict = Verdict.SUSPECTED
        hint = "verify that the newest message (`[-1]`) was already sent to the provider when it is replaced here"
    return Hit(
        node=node,
        verdict=verdict,
        claim=f"{what} outside a compaction step: history is edited, not appended to",
        consequence="earlier turns change after the provider saw them: replays diverge and the cached prompt "
                    "prefix is invalidated from the edited position on",
        direction="append new messages only; move any deliberate rewrite into the one compaction function",
        confirm_hint=hint,
    )


@rule(CheckId.C2, lang="python", name="appended-message-mutated")
def appended_message_mutated(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a message object that is written after it was appended to history in the same function (typically
    streaming back-fill: append an empty assistant message, then `msg["content"] += delta`). The history entry
    changes after the fact, so what was recorded and what was sent disagree."""
    if idioms.is_test_module(mod):
        return
    cx = _Ctx.of(mod, project)
    for call in idioms.calls_named(mod, project, ("append",)):
        func = call.func
        if not isinstance(func, ast.Attribute) or len(call.args) != 1:
            continue
        msg = call.args[0]
        if not isinstance(msg, ast.Name):
            continue
        fn = mod.enclosing_function(call)
        if fn is None or _compaction(mod, fn):
            continue
        place = _place(cx, fn, func.value)
        judged = _judge(cx, fn, place, element=True) if place is not None else None
        if judged is None:
            continue
        write = _later_write(cx, fn, msg.id, call)
        if write is None:
            continue
        yield Hit(
            node=write,
            verdict=judged.verdict,
            claim=f"`{msg.id}` is written after it was appended to {judged.where} (line {call.lineno})",
            consequence="the message in history changes after it was recorded: partial stream state can be "
                        "committed, replays diverge, and the cached prefix is invalidated",
            direction=f"finish building `{msg.id}` (accumulate deltas in a local) and append it once complete",
            confirm_hint=judged.hint,
        )


def _later_write(cx: _Ctx, fn: FunctionNode, name: str, after: ast.Call) -> ast.AST | None:
    """The first write into `name.x` / `name[k]` (or a mutating method on it) after `after`, unless rebound first."""
    rebound = min((v.lineno for v in cx.assigned(fn, name) if v.lineno > after.lineno), default=10**9)
    for node in cx.mod.walk(fn):
        line = getattr(node, "lineno", 0)
        if line <= after.lineno or line >= rebound:
            continue
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign | ast.AugAssign):
            targets = _write_targets(node)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in _ELEMENT_METHODS and isinstance(node.func.value, ast.Attribute | ast.Subscript):
            targets = [node.func.value]
        for t in targets:
            root = _root_name(t)
            if root is not None and root.id == name:
                return node
    return None
