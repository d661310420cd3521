"""Static landmark finders for Python: the eleven kinds, from the parsed tree."""

from __future__ import annotations

import ast
import bisect
import functools
import re
from collections.abc import Iterator
from typing import NamedTuple

from harness_audit.findings import Confidence, LandmarkCandidate, LandmarkKind
from harness_audit.static import idioms
from harness_audit.static.lang.python import FunctionNode, PyModule, PyProject, subtree

K = LandmarkKind

_TOOL_EXEC_NAME = re.compile(r"(execute|exec|run|call|invoke|dispatch|handle|process|perform)_?"
                             r"(tool|function|action|call)s?|tool_?(call|exec|dispatch|runner|node)|^_?(execute|dispatch)$",
                             re.I)
_REGISTRY_HOLDER = re.compile(r"(tools|tool_map|registry|handlers|functions|toolbox|dispatch|actions|_TOOLS)$", re.I)
_TOOL_RECEIVER = re.compile(r"(^|_)(tool|handler|fn|func|impl|action)$", re.I)
_TOOL_INVOKE_METHODS = {"run", "arun", "invoke", "ainvoke", "execute", "aexecute", "call", "acall", "forward", "fn",
                        "func", "handler", "__call__"}
_PARSE_KEYS = {"tool_calls", "delta", "finish_reason", "stop_reason", "arguments", "function_call", "tool_use",
               "partial_json", "input_json_delta"}
_TOOL_CALLS_ATTR = {"tool_calls", "tool_use", "function_call", "tool_call", "calls", "actions"}
_REGISTRY_NAME = re.compile(r"(tools|tool_map|registry|handlers|functions|tool_funcs|tool_table|toolbox|TOOLS)", re.I)
_TRUNC_NAME = re.compile(r"(trim|truncat|compact|summari[sz]|prune|window|fit_|shrink|condens|evict|squash)", re.I)
_SYSTEM_NAME = re.compile(r"(system_?prompt|system_?message|instructions|preamble|^_?system$)", re.I)
"""A system prompt by name: `system_prompt`, `build_system_message`, `INSTRUCTIONS`, a bare `SYSTEM`; not every
name that holds the word (`SYSTEM_ALREADY_INITIALIZED`, `file_system`)."""
_REQUEST_NAME = re.compile(r"(build|make|prepare|assemble|create|compose)_?(request|payload|messages|body|params|prompt)",
                           re.I)
_TOOL_DECORATORS = {"tool", "function_tool", "agent.tool", "agent.tool_plain", "register_tool", "mcp.tool", "tool_plain"}
_STREAM_ATTRS = {"delta", "tool_calls", "finish_reason", "stop_reason", "arguments", "partial_json"}


def _lm(mod: PyModule, kind: LandmarkKind, node: ast.AST, confidence: Confidence = "high") -> LandmarkCandidate:
    if not isinstance(node, ast.stmt):
        # cite the statement holding an expression: an argument line on its own can be too thin to quote
        node = next((a for a in mod.ancestors(node) if isinstance(a, ast.stmt)), node)
    line = getattr(node, "lineno", 1)
    return LandmarkCandidate(kind=kind, file=mod.path, line=line, symbol=mod.symbol(node), confidence=confidence,
                             evidence=mod.excerpt(line, getattr(node, "end_lineno", None)), source="static:recon",
                             language="python")


class _ModelFunctions(NamedTuple):
    ids: set[int]
    """Ids of functions that call a model directly."""
    names: set[str]
    """Their names: a call whose name matches none cannot resolve to one of them."""


def _model_functions(project: PyProject) -> _ModelFunctions:
    """Functions that call a model directly."""
    direct = _ModelFunctions(set(), set())
    for mod in project.modules.values():
        for call in mod.calls():
            if idioms.is_model_call(mod, call):
                fn = mod.enclosing_function(call)
                if fn is not None:
                    direct.ids.add(id(fn))
                    direct.names.add(fn.name)
    return direct


@functools.lru_cache(maxsize=1 << 16)
def _named(pattern: re.Pattern[str], name: str) -> bool:
    """Whether `pattern` occurs in `name`, cached: the same few thousand names recur across a large tree."""
    return pattern.search(name) is not None

def find_landmarks(project: PyProject) -> Iterator[LandmarkCandidate]:
    """Every landmark recon can see in the project's Python modules."""
    model_fns = _model_functions(project)
    for mod in project.modules.values():
        yield from _module_landmarks(mod, project, model_fns)


def _model_call_lines(mod: PyModule, project: PyProject, model_fns: _ModelFunctions) -> list[int]:
    """Sorted lines of calls that reach a model, directly or through a project function."""
    lines: list[int] = []
    for call in mod.calls():
        if idioms.is_model_call(mod, call) or (
                _may_name(mod, call, model_fns.names)
                and any(id(ref.node) in model_fns.ids for ref in project.resolve_call(mod, call))):
            lines.append(call.lineno)
    return lines


def _may_name(mod: PyModule, call: ast.Call, names: set[str]) -> bool:
    """Whether `PyProject.resolve_call` could find a function named one of `names` (it resolves by name, so a
    call that names none of them is skipped without resolving it)."""
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in names or idioms.last(mod.imports.get(func.id, "")) in names
    return isinstance(func, ast.Attribute) and func.attr in names


def _loop_calls_model(loop: ast.For | ast.AsyncFor | ast.While, model_lines: list[int]) -> bool:
    """Whether a model-reaching call lies inside the loop's line span (its body, by position)."""
    end = loop.end_lineno or loop.lineno
    i = bisect.bisect_right(model_lines, loop.lineno)  # the header line holds the iterable, not the body
    return i < len(model_lines) and model_lines[i] <= end


def _module_landmarks(mod: PyModule, project: PyProject, model_fns: _ModelFunctions) -> Iterator[LandmarkCandidate]:
    for call in mod.calls():
        name = mod.call_name(call)
        if idioms.is_model_call(mod, call):
            yield _lm(mod, K.REQUEST_ASSEMBLY, call)
            for kw in call.keywords:
                if kw.arg in {"system", "instructions", "system_instruction"}:
                    yield _lm(mod, K.SYSTEM_PROMPT_BUILD, kw.value, "medium")
                if kw.arg == "stream" and isinstance(kw.value, ast.Constant) and kw.value.value is True:
                    yield _lm(mod, K.STREAM_PARSE, call, "medium")
        if idioms.is_http_call(mod, call):
            yield _lm(mod, K.HTTP_CALL, call)
        if idioms.is_spawn(mod, call):
            yield _lm(mod, K.PROCESS_SPAWN, call)
        if name in idioms.RETRY_ITERATORS:
            yield _lm(mod, K.RETRY, call)
        if mod.keyword(call, "max_retries") is not None:
            yield _lm(mod, K.RETRY, call, "medium")
        meth = idioms.last(name) if name else ""
        if meth in {"append", "extend", "add_message", "add_messages", "append_message", "insert"} and isinstance(
            call.func, ast.Attribute
        ) and idioms.is_message_list(mod, call.func.value):
            yield _lm(mod, K.HISTORY_APPEND, call)
        if meth in {"loads", "parse_raw", "model_validate_json", "from_json", "parse_obj_as", "literal_eval"} and any(
                isinstance(a, ast.Attribute) and a.attr in {"arguments", "input", "args", "partial_json"}
                or isinstance(a, ast.Subscript) and isinstance(a.slice, ast.Constant)
                and a.slice.value in {"arguments", "input", "args"} for a in call.args):
            yield _lm(mod, K.STREAM_PARSE, call)
        if (meth in {"trim_messages", "count_tokens", "num_tokens_from_messages"} or _named(_TRUNC_NAME, meth)) \
                and isinstance(call.func, ast.Name | ast.Attribute) and not meth.startswith("str"):
            yield _lm(mod, K.TRUNCATION, call, "medium")
        if meth == "pop" and isinstance(call.func, ast.Attribute) and idioms.is_message_list(mod, call.func.value):
            yield _lm(mod, K.TRUNCATION, call, "medium")
    for call in mod.calls():
        if _is_dynamic_tool_call(mod, call):
            yield _lm(mod, K.TOOL_EXECUTION, call)
    for sub in mod.nodes(ast.Subscript):
        if isinstance(sub.slice, ast.Constant) and sub.slice.value in _PARSE_KEYS and isinstance(sub.ctx, ast.Load):
            yield _lm(mod, K.STREAM_PARSE, sub, "low")
    for attr in mod.nodes(ast.Attribute):
        if attr.attr in {"tool_calls", "finish_reason", "stop_reason"} and isinstance(attr.ctx, ast.Load):
            yield _lm(mod, K.STREAM_PARSE, attr, "low")
    for cmp in mod.nodes(ast.Compare):
        consts = {c.value for c in [cmp.left, *cmp.comparators] if isinstance(c, ast.Constant)}
        if consts & {"tool_use", "function_call", "tool_calls", "content_block_delta", "input_json_delta"}:
            yield _lm(mod, K.STREAM_PARSE, cmp, "medium")
    for fn in mod.functions():
        fname = fn.name
        dec_names = {idioms.decorator_name(mod, d) for d in fn.decorator_list}
        if idioms.retry_decorator(mod, fn) is not None:
            yield _lm(mod, K.RETRY, fn)
        if dec_names & _TOOL_DECORATORS or any(idioms.last(d) in {"tool", "tool_plain", "function_tool"}
                                               for d in dec_names):
            yield _lm(mod, K.TOOL_REGISTRY, fn, "medium")
            yield _lm(mod, K.TOOL_EXECUTION, fn, "medium")
        if _named(_TOOL_EXEC_NAME, fname):
            yield _lm(mod, K.TOOL_EXECUTION, fn)
        if _named(_TRUNC_NAME, fname) and ("message" in fname.lower() or "history" in fname.lower()
                                          or "context" in fname.lower() or "conversation" in fname.lower()
                                          or _slices_messages(mod, fn)):
            yield _lm(mod, K.TRUNCATION, fn)
        if _named(_SYSTEM_NAME, fname):
            yield _lm(mod, K.SYSTEM_PROMPT_BUILD, fn, "medium")
        if _named(_REQUEST_NAME, fname):
            yield _lm(mod, K.REQUEST_ASSEMBLY, fn, "medium")
    model_lines: list[int] | None = None
    for loop in mod.loops():
        it = loop.iter if isinstance(loop, ast.For | ast.AsyncFor) else None
        if isinstance(it, ast.Call) and mod.call_name(it) in {"enumerate", "zip", "list", "sorted", "reversed"} \
                and it.args:
            it = it.args[0]
        if it is not None:
            d = mod.dotted(it) or ""
            if idioms.last(d) in _TOOL_CALLS_ATTR or (isinstance(it, ast.Subscript) and isinstance(it.slice, ast.Constant)
                                                       and it.slice.value in _TOOL_CALLS_ATTR):
                yield _lm(mod, K.TOOL_EXECUTION, loop)
                yield _lm(mod, K.STREAM_PARSE, loop, "low")
            if (isinstance(loop, ast.AsyncFor) or re.search(r"(stream|chunk|event|response|resp|lines)", d, re.I)) \
                    and any(isinstance(n, ast.Attribute) and n.attr in _STREAM_ATTRS for n in mod.walk_body(loop.body)):
                yield _lm(mod, K.STREAM_PARSE, loop)
        if _is_retry_loop(mod, loop):
            yield _lm(mod, K.RETRY, loop)
        if model_lines is None:
            model_lines = _model_call_lines(mod, project, model_fns)
        if _loop_calls_model(loop, model_lines):
            yield _lm(mod, K.AGENT_LOOP, loop)
    for assign in [*mod.nodes(ast.Assign), *mod.nodes(ast.AnnAssign)]:
        targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]
        value = assign.value
        for t in targets:
            tname = idioms.target_name(mod, t)
            if value is not None and _named(_SYSTEM_NAME, idioms.last(tname)):
                yield _lm(mod, K.SYSTEM_PROMPT_BUILD, assign, "medium")
            if value is not None and _named(_REGISTRY_NAME, idioms.last(tname)) and _is_registry_value(value):
                yield _lm(mod, K.TOOL_REGISTRY, assign)
            if isinstance(t, ast.Subscript) and _named(_REGISTRY_NAME, mod.dotted(t.value) or ""):
                yield _lm(mod, K.TOOL_REGISTRY, assign, "medium")
            if value is not None and idioms.is_message_list(mod, t) and any(
                isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Slice) and idioms.is_message_list(mod, n.value)
                for n in subtree(value)
            ):
                yield _lm(mod, K.TRUNCATION, assign)
    for aug in mod.nodes(ast.AugAssign):
        if isinstance(aug.op, ast.Add) and idioms.is_message_list(mod, aug.target):
            yield _lm(mod, K.HISTORY_APPEND, aug)
    for d in mod.nodes(ast.Delete):
        if any(isinstance(t, ast.Subscript) and idioms.is_message_list(mod, t.value) for t in d.targets):
            yield _lm(mod, K.TRUNCATION, d)
    for dct in mod.nodes(ast.Dict):
        keys = {k.value for k in dct.keys if isinstance(k, ast.Constant)}
        if {"role", "content"} <= keys:
            role = next((v for k, v in zip(dct.keys, dct.values, strict=True)
                         if isinstance(k, ast.Constant) and k.value == "role"), None)
            if isinstance(role, ast.Constant) and role.value == "system":
                yield _lm(mod, K.SYSTEM_PROMPT_BUILD, dct, "medium")
            if isinstance(role, ast.Constant) and role.value == "tool":
                yield _lm(mod, K.HISTORY_APPEND, dct, "low")
        if "model" in keys and ("messages" in keys or "input" in keys or "contents" in keys):
            yield _lm(mod, K.REQUEST_ASSEMBLY, dct)
        if "type" in keys and "tool_result" in {v.value for v in dct.values if isinstance(v, ast.Constant)}:
            yield _lm(mod, K.HISTORY_APPEND, dct, "low")
    for ret in mod.nodes(ast.Return):
        if isinstance(ret.value, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "messages"
                                                   for k in ret.value.keys):
            yield _lm(mod, K.HISTORY_APPEND, ret, "medium")


_RETRY_VAR = re.compile(r"(attempt|retry|retries|tries|try_)", re.I)


def _is_retry_loop(mod: PyModule, loop: ast.For | ast.AsyncFor | ast.While) -> bool:
    """A hand-written retry: a counted or open loop whose `try` swallows the failure and goes round again."""
    if isinstance(loop, ast.For | ast.AsyncFor):
        it = loop.iter
        name = mod.call_name(it) if isinstance(it, ast.Call) else ""
        if name in idioms.RETRY_ITERATORS:
            return True
        if idioms.last(name) not in {"range", "count"} or any(
            isinstance(a, ast.Call) and mod.call_name(a) == "len" for a in getattr(it, "args", [])
        ):
            return False
        named_retry = bool(_RETRY_VAR.search(mod.dotted(loop.target) or ""))
    else:
        named_retry = bool(_RETRY_VAR.search(mod.segment(loop.test)))
    for stmt in loop.body:
        if not isinstance(stmt, ast.Try):
            continue
        swallows = [h for h in stmt.handlers if h.body and not isinstance(h.body[-1], ast.Raise | ast.Return | ast.Break)]
        if not swallows:
            continue
        success = [*stmt.body, *stmt.orelse, *loop.body[loop.body.index(stmt) + 1:]]
        if named_retry or any(isinstance(n, ast.Break | ast.Return) for n in mod.walk_body(success)):
            return True
    return False


def _is_dynamic_tool_call(mod: PyModule, call: ast.Call) -> bool:
    """`TOOLS[name](**args)`, `self.registry[name](...)`, `getattr(self, name)(...)`, `tool.run(args)`."""
    func = call.func
    if isinstance(func, ast.Subscript) and not isinstance(func.slice, ast.Constant):
        holder = mod.dotted(func.value) or ""
        return bool(_REGISTRY_HOLDER.search(holder.rsplit(".", 1)[-1]))
    if isinstance(func, ast.Call) and mod.call_name(func) == "getattr" and len(func.args) >= 2 \
            and not isinstance(func.args[1], ast.Constant):
        return True
    if isinstance(func, ast.Attribute) and func.attr in _TOOL_INVOKE_METHODS:
        recv = mod.dotted(func.value) or ""
        return bool(_TOOL_RECEIVER.search(recv.rsplit(".", 1)[-1]))
    # `handler(**args)`
    return isinstance(func, ast.Name) and bool(_TOOL_RECEIVER.search(func.id)) and any(
        kw.arg is None for kw in call.keywords)


def _is_registry_value(value: ast.expr) -> bool:
    if isinstance(value, ast.Dict):
        return bool(value.values) and all(isinstance(v, ast.Name | ast.Attribute | ast.Lambda | ast.Call)
                                          for v in value.values)
    if isinstance(value, ast.List | ast.Tuple):
        return bool(value.elts) and all(isinstance(e, ast.Name | ast.Call | ast.Dict) for e in value.elts)
    return isinstance(value, ast.Call)


def _slices_messages(mod: PyModule, fn: FunctionNode) -> bool:
    for node in mod.walk(fn):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and idioms.is_message_list(mod, node.value):
            return True
    return False
