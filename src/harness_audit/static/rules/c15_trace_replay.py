"""C15 · Trace completeness and replay — Python rules.

Shapes detected:
- `tool-log-without-call-id`: in a project with no tracing integration, tool execution logged by name with no
  call id anywhere in the executing function, or in a `_trace(...)` helper called for each tool call.
- `usage-never-recorded`: model responses consumed while no module of the project ever reads token usage.
- `response-usage-dropped`: a model response used only for its content inside one function (never stored, passed
  on or returned), so its `usage` is dropped at that line.
- `stream-usage-not-requested`: an OpenAI-style `stream=True` request without
  `stream_options={"include_usage": True}`, so the stream never carries usage (also when no module reads usage
  and the stream is handed to a consumer, where `usage-never-recorded` cannot see it).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from harness_audit.findings import CheckId, Verdict
from harness_audit.static import idioms
from harness_audit.static.lang.python import FunctionNode, PyModule, PyProject
from harness_audit.static.registry import Hit, rule

_ID_WORD = re.compile(r"(^|_)(id|ids|call_?id|tool_?call_?id|tool_?use_?id|span_?id|trace_?id|correlation_?id)$",
                      re.I)
_ID_ATTR = re.compile(r"^(id|call_id|tool_call_id|tool_use_id|toolCallId|callId)$")
_TOOL_WORD = re.compile(r"(tool|function_?call)", re.I)
_LOG_METHODS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}
_LOG_RECEIVER = re.compile(r"(^|\.)(_?log|_?logger|logging|console)$", re.I)
_TRACING_MODULES = ("opentelemetry", "langfuse", "langsmith", "logfire", "openinference", "agentops", "weave",
                    "braintrust", "mlflow", "wandb", "phoenix", "arize", "traceloop", "helicone", "openlit",
                    "laminar", "lmnr", "literalai", "promptlayer", "humanloop", "sentry_sdk", "ddtrace")
_FIRST_PARTY_TRACING = re.compile(r"(^|/)(tracing|telemetry|observability|instrumentation|otel|spans?)(/|\.py$)")
"""A project module that is itself a tracing layer (its spans, not log lines, are the record)."""
_USAGE_ATTRS = {"usage", "usage_metadata", "token_usage", "prompt_tokens", "completion_tokens", "input_tokens",
                "output_tokens", "total_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
                "prompt_token_count", "candidates_token_count", "total_token_count", "prompt_eval_count",
                "eval_count", "response_metadata", "llm_output"}
_CONTENT_ATTRS = {"choices", "content", "output_text", "text", "message", "output", "candidates", "tool_calls",
                  "stop_reason", "finish_reason", "parsed", "output_parsed"}
_CALLS_ITER = re.compile(r"(tool_?calls?|function_?calls?|tool_?uses?|tool_?requests?|(^|_)calls)$", re.I)
_TOOL_FUNC = re.compile(r"((execute|run|call|invoke|dispatch|handle|process)_?\w*tool|tool_?\w*(call|exec|run))",
                        re.I)


def _text(node: ast.AST | None) -> str:
    if node is None:
        return ""
    try:
        return ast.unparse(node)[:400]
    except (ValueError, RecursionError):  # a malformed or pathologically deep expression
        return ""


# ---------------------------------------------------------------- project facts (computed once per project)
_MEMO: list[tuple[PyProject, dict[str, object]]] = []
"""The last project's memo (one project at a time, so nothing outlives the next audit)."""


@dataclass(frozen=True, slots=True)
class _Facts:
    """What the whole project shows about tracing and usage."""

    tracing: str | None
    """An imported tracing / observability package, if any."""
    reads_usage: bool
    """Whether any module reads token usage (`.usage`, `["usage"]`, `input_tokens`, …)."""


def _facts(project: PyProject) -> _Facts:
    if not _MEMO or _MEMO[0][0] is not project:
        _MEMO[:] = [(project, {})]
    entry = _MEMO[0]
    hit = entry[1].get("facts")
    if isinstance(hit, _Facts):
        return hit
    tracing: str | None = None
    reads_usage = False
    for mod in project.modules.values():
        if tracing is None:
            tracing = next((q for q in mod.imports.values() if q.split(".")[0] in _TRACING_MODULES), None)
        if tracing is None and _FIRST_PARTY_TRACING.search(mod.path):
            tracing = mod.module_name
        if not reads_usage:
            reads_usage = _module_reads_usage(mod)
        if tracing is not None and reads_usage:
            break
    facts = _Facts(tracing, reads_usage)
    entry[1]["facts"] = facts
    return facts


def _module_reads_usage(mod: PyModule) -> bool:
    if any(node.attr in _USAGE_ATTRS for node in mod.nodes(ast.Attribute, any_order=True)):
        return True
    for node in mod.nodes(ast.Constant, any_order=True):
        if isinstance(node.value, str) and node.value in _USAGE_ATTRS:
            return True
    return any(node.id in _USAGE_ATTRS for node in mod.nodes(ast.Name, any_order=True))


def _function_mentions_id(mod: PyModule, fn: FunctionNode | None) -> bool:
    if fn is None:
        return False
    for node in mod.walk(fn):
        if isinstance(node, ast.Attribute) and _ID_ATTR.match(node.attr):
            return True
        if isinstance(node, ast.Name) and _ID_WORD.search(node.id):
            return True
        if isinstance(node, ast.keyword) and node.arg and _ID_WORD.search(node.arg):
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _ID_ATTR.match(node.value):
            return True
    return False


# ---------------------------------------------------------------- tool logs
def _in_tool_context(mod: PyModule, node: ast.AST) -> str | None:
    """The loop over tool calls or the tool-executing function around `node`, described."""
    for loop in mod.enclosing_loops(node):
        if isinstance(loop, ast.For | ast.AsyncFor):
            base = loop.iter.args[0] if isinstance(loop.iter, ast.Call) and loop.iter.args and isinstance(
                loop.iter.func, ast.Name) and loop.iter.func.id == "enumerate" else loop.iter
            dotted = mod.dotted(base) or ""
            if dotted and _CALLS_ITER.search(idioms.last(dotted)):
                return f"the loop over `{dotted}`"
    fn = mod.enclosing_function(node)
    if fn is not None and _TOOL_FUNC.search(fn.name):
        return f"`{fn.name}`"
    return None


def _is_log(mod: PyModule, call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id == "print"
    if not isinstance(func, ast.Attribute) or func.attr not in _LOG_METHODS:
        return False
    recv = mod.dotted(func.value) or ""
    return bool(recv) and bool(_LOG_RECEIVER.search(recv))


def _logs_a_name(args: list[ast.expr]) -> bool:
    """Whether a log call interpolates a value that names the tool (`call.function.name`, `tool_name`)."""
    values: list[ast.expr] = []
    for a in args:
        if isinstance(a, ast.JoinedStr):
            values.extend(v.value for v in a.values if isinstance(v, ast.FormattedValue))
        elif not isinstance(a, ast.Constant):
            values.append(a)
    return any(re.search(r"(name|tool|function)", _text(v), re.I) for v in values)


_CALL_ID_WORD = re.compile(r"(call_?id|tool_?call_?id|tool_?use_?id|callId|toolCallId)$", re.I)


def _mentions_call_id(mod: PyModule, fn: FunctionNode) -> bool:
    """Whether a logging helper touches a tool call's id (a `session_id` parameter is not one)."""
    for node in mod.walk(fn):
        if isinstance(node, ast.Attribute) and (_CALL_ID_WORD.search(node.attr) or node.attr == "id"):
            return True
        if isinstance(node, ast.Name | ast.arg) and _CALL_ID_WORD.search(getattr(node, "id", None) or
                                                                         getattr(node, "arg", "")):
            return True
    return False


def _tool_loop_caller(mod: PyModule, project: PyProject, fn: FunctionNode) -> str | None:
    """A call of the logging helper `fn` from inside a loop over tool calls (the helper is that loop's only
    record of each call), described; None when no caller shows that."""
    if not re.search(r"(trace|log|record|audit|track)", fn.name, re.I):
        return None
    for other, site in idioms.callers_of(project, fn):
        for loop in other.enclosing_loops(site):
            if not isinstance(loop, ast.For | ast.AsyncFor):
                continue
            base = _strip_iter(loop.iter)
            dotted = other.dotted(base) or ""
            if dotted and _CALLS_ITER.search(idioms.last(dotted)):
                return f"`{fn.name}`, called for each of `{dotted}` ({other.path}:{site.lineno})"
    return None


def _strip_iter(expr: ast.expr) -> ast.expr:
    if isinstance(expr, ast.BoolOp) and expr.values:
        expr = expr.values[0]
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "enumerate" and expr.args:
        return expr.args[0]
    return expr


def _result_recorded_with_id(project: PyProject, fn: FunctionNode) -> bool:
    """Whether every project caller stores `fn`'s result in a record built with the call's id beside it
    (`args = parse_args(raw, name); calls.append(ToolCallRequest(id=call_id, arguments=args))`): that record keys
    the call by its id, so the log line inside `fn` is not the only record of it."""
    callers = idioms.callers_of(project, fn)
    return bool(callers) and all(_stored_with_id(other, site) for other, site in callers)


def _stored_with_id(mod: PyModule, site: ast.Call) -> bool:
    parent = mod.parent(site)
    if isinstance(parent, ast.keyword):
        record = mod.parent(parent)
        return isinstance(record, ast.Call) and _has_id_keyword(record)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    scope = mod.enclosing_function(site)
    if scope is None:
        return False
    return any(isinstance(node, ast.Call) and _has_id_keyword(node) and any(
        isinstance(kw.value, ast.Name) and kw.value.id == name for kw in node.keywords) for node in mod.walk(scope))


def _has_id_keyword(call: ast.Call) -> bool:
    return any(kw.arg is not None and _ID_WORD.search(kw.arg) for kw in call.keywords)


def _call_id_recorded_by_callee(mod: PyModule, project: PyProject, fn: FunctionNode) -> bool:
    """Whether `fn` hands each tool call object (a loop or comprehension variable over the tool calls) whole to a
    project function that records its id under an id key (`build_event(tc)` returning `{"call_id": tc.id, ...}`):
    the call's other event then carries the id, and the log line beside it is not the only record."""
    call_vars: set[str] = set()
    for node in mod.walk(fn):
        if isinstance(node, ast.For | ast.AsyncFor | ast.comprehension) and isinstance(node.target, ast.Name):
            dotted = mod.dotted(_strip_iter(node.iter)) or ""
            if dotted and _CALLS_ITER.search(idioms.last(dotted)):
                call_vars.add(node.target.id)
    if not call_vars:
        return False
    for node in mod.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        positions = [i for i, a in enumerate(node.args) if isinstance(a, ast.Name) and a.id in call_vars]
        if not positions:
            continue
        for ref in project.resolve_call(mod, node):
            params = [a.arg for a in [*ref.node.args.posonlyargs, *ref.node.args.args]]
            if params and params[0] in {"self", "cls"} and isinstance(node.func, ast.Attribute):
                params = params[1:]
            names = {params[i] for i in positions if i < len(params)}
            if names and _records_param_id(ref.module, ref.node, names):
                return True
    return False


def _records_param_id(mod: PyModule, fn: FunctionNode, params: set[str]) -> bool:
    """Whether `fn` builds a record whose id key (`call_id`, `tool_call_id`, `id`) is read from one of `params`."""
    for node in mod.walk(fn):
        if isinstance(node, ast.Dict):
            pairs = [(k.value, v) for k, v in zip(node.keys, node.values, strict=True)
                     if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        elif isinstance(node, ast.Call):
            pairs = [(kw.arg, kw.value) for kw in node.keywords if kw.arg]
        else:
            continue
        for key, value in pairs:
            if _ID_WORD.search(key) and any(isinstance(n, ast.Name) and n.id in params for n in ast.walk(value)):
                return True
    return False


@rule(CheckId.C15, lang="python", name="tool-log-without-call-id")
def tool_log_without_call_id(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags tool execution logged by tool name with no call id, in a function that never touches a call id, in a
    project with no tracing integration (so the log is the only record). Calls and results in such a log cannot be
    joined, and parallel calls of the same tool are indistinguishable. A function that hands each call object to a
    project function recording its id (a start event built per call), or whose every caller stores its result in a
    record built with the call's id (`ToolCallRequest(id=call_id, arguments=args)`), is not reported: the log is not
    the only record."""
    facts = _facts(project)
    if facts.tracing is not None:
        return
    seen: set[int] = set()
    for call in idioms.calls_named(mod, project, _LOG_METHODS | {"print"}):
        if not _is_log(mod, call):
            continue
        args = [*call.args, *(kw.value for kw in call.keywords)]
        if not _TOOL_WORD.search(" ".join(_text(a) for a in args)) or not _logs_a_name(args):
            continue
        fn = mod.enclosing_function(call)
        if fn is None or id(fn) in seen:
            continue
        where = _in_tool_context(mod, call)
        if where is None:
            where = _tool_loop_caller(mod, project, fn)
            if where is None or _mentions_call_id(mod, fn):
                continue
        elif _function_mentions_id(mod, fn):
            continue
        if _call_id_recorded_by_callee(mod, project, fn) or _result_recorded_with_id(project, fn):
            continue
        seen.add(id(fn))
        yield Hit(
            node=call,
            verdict=Verdict.SUSPECTED,
            claim=f"tool execution in {where} is logged by name only: nothing in `{fn.name}` records the call id",
            consequence="the log cannot tell which result answered which call, or repeated calls of one tool apart, "
                        "so a failed run cannot be reconstructed",
            direction="log (or better, record as structured events) the tool-call id with every call and result",
            confirm_hint=f"verify that no other record (persisted history, trace spans) keys the calls made in "
                         f"`{fn.name}` by their id",
        )


# ---------------------------------------------------------------- usage
_SDK_SUFFIXES = ("chat.completions.create", "chat.completions.parse", "messages.create", "messages.parse",
                 "responses.create", "responses.parse", "generate_content", "generate_content_async",
                 "completions.create", "ChatCompletion.create", "ChatCompletion.acreate", "converse")
_SDK_FUNCS = {"litellm.completion", "litellm.acompletion", "ollama.chat", "ollama.generate"}
_MODEL_METHODS = {"create", "parse", "stream", "generate_content", "generate_content_async", "acreate", "completion",
                  "acompletion", "chat", "generate", "invoke", "ainvoke", "astream", "agenerate", "complete",
                  "acomplete", "achat", "post", "request", "send", "urlopen", "get_response", "stream_response",
                  "request_stream", "generate_stream", "predict", "apredict"}
"""Last names a model call can have (a cheap filter before `idioms.is_model_call`)."""


def _is_sdk_call(mod: PyModule, call: ast.Call) -> bool:
    """A provider SDK request (`client.chat.completions.create`, `litellm.completion`): nothing records its usage
    unless the caller does."""
    name = mod.call_name(call)
    return bool(name) and (name in _SDK_FUNCS or name.endswith(_SDK_SUFFIXES))


@dataclass(frozen=True, slots=True)
class _ModelCall:
    """A request to a model and how sure we are that nothing else accounts for its usage."""

    call: ast.Call
    """The call."""
    raw: bool
    """A provider SDK request, or a project function that returns one unchanged."""
    via: str
    """For a project wrapper, its name."""


def _sdk_wrappers(project: PyProject) -> dict[int, str]:
    """id of project functions that return a provider SDK response unchanged → their name (computed once)."""
    if not _MEMO or _MEMO[0][0] is not project:
        _MEMO[:] = [(project, {})]
    entry = _MEMO[0]
    hit = entry[1].get("wrappers")
    if isinstance(hit, dict):
        return hit  # pyright: ignore[reportUnknownVariableType]
    out: dict[int, str] = {}
    for mod in project.modules.values():
        for call in idioms.calls_named(mod, project, _MODEL_METHODS):
            if not _is_sdk_call(mod, call):
                continue
            fn = mod.enclosing_function(call)
            if fn is None:
                continue
            parent = mod.parent(call)
            if isinstance(parent, ast.Await):
                parent = mod.parent(parent)
            if isinstance(parent, ast.Return):
                out[id(fn)] = fn.name
            elif isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
                name = parent.targets[0].id
                if any(isinstance(r, ast.Return) and isinstance(r.value, ast.Name) and r.value.id == name
                       for r in mod.walk(fn)):
                    out[id(fn)] = fn.name
    entry[1]["wrappers"] = out
    return out


def _short(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _model_calls(mod: PyModule, project: PyProject) -> list[_ModelCall]:
    """Model requests in `mod`: direct ones, and calls of project functions that return a provider response."""
    wrappers = _sdk_wrappers(project)
    names = set(wrappers.values())
    out: list[_ModelCall] = []
    for call in idioms.calls_named(mod, project, _MODEL_METHODS | names):
        short = _short(call)
        if short in _MODEL_METHODS and idioms.is_model_call(mod, call):
            out.append(_ModelCall(call, _is_sdk_call(mod, call), ""))
        elif short in names:
            ref = next((r for r in project.resolve_call(mod, call) if id(r.node) in wrappers), None)
            if ref is not None:
                out.append(_ModelCall(call, True, ref.node.name))
    return out


def _response_name(mod: PyModule, call: ast.Call) -> tuple[str, ast.stmt] | None:
    parent = mod.parent(call)
    if isinstance(parent, ast.Await):
        parent = mod.parent(parent)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        return parent.targets[0].id, parent
    if isinstance(parent, ast.AnnAssign) and isinstance(parent.target, ast.Name):
        return parent.target.id, parent
    return None


def _is_usage_node(node: ast.AST) -> bool:
    """`x.usage`, a `usage` / `token_usage=` name or keyword, a `"usage"` key: the function accounts for tokens."""
    if isinstance(node, ast.Attribute):
        return node.attr in _USAGE_ATTRS
    if isinstance(node, ast.Name):
        return node.id in _USAGE_ATTRS or "usage" in node.id.lower()
    if isinstance(node, ast.keyword):
        return bool(node.arg) and "usage" in (node.arg or "").lower()
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in _USAGE_ATTRS


def _usage_dropped(mod: PyModule, fn: FunctionNode, name: str, after: ast.stmt) -> bool:
    """Whether `name` is only ever projected to its content after `after`: never usage, never handed on or stored,
    and nothing else in the function touches usage either."""
    used = False
    uses: list[ast.Name] = []
    for node in mod.walk(fn):
        if _is_usage_node(node):
            return False
        if isinstance(node, ast.Name) and node.id == name and getattr(node, "lineno", 0) > after.lineno:
            uses.append(node)
    for node in sorted(uses, key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(node.ctx, ast.Store):
            break  # rebound: later uses are another value
        parent = mod.parent(node)
        if isinstance(parent, ast.Attribute):
            if parent.attr not in _CONTENT_ATTRS:
                return False  # an attribute this rule does not know may carry usage on
        elif not (isinstance(parent, ast.Subscript) and parent.value is node):
            return False  # passed, returned, stored, yielded or compared: it escapes this function
        top: ast.AST = parent
        while True:
            up = mod.parent(top)
            if not (isinstance(up, ast.Attribute | ast.Subscript) and up.value is top):
                break
            top = up
        above = mod.parent(top)
        if isinstance(above, ast.Call) and above.func is top:
            return False  # `resp.model_dump()` and friends: the whole response is handed on
        used = True
    return used


def _dropped_responses(mod: PyModule, project: PyProject) -> Iterator[tuple[_ModelCall, str, FunctionNode]]:
    """Model calls whose response is reduced to its content inside the calling function."""
    if idioms.is_test_module(mod):
        return
    for mc in _model_calls(mod, project):
        bound = _response_name(mod, mc.call)
        fn = mod.enclosing_function(mc.call)
        if bound is None or fn is None:
            continue
        if _usage_dropped(mod, fn, bound[0], bound[1]):
            yield mc, bound[0], fn


@rule(CheckId.C15, lang="python", name="usage-never-recorded")
def usage_never_recorded(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a model response reduced to its content in a project where no module ever reads token usage
    (`response.usage`, `usage_metadata`, `input_tokens`, …). What a run cost and how close it came to the context
    limit can then never be reconstructed."""
    facts = _facts(project)
    if facts.reads_usage:
        return
    for mc, name, fn in _dropped_responses(mod, project):
        if facts.tracing is not None:
            hint = f"verify that the `{facts.tracing}` integration records token usage for this call"
        elif not mc.raw:
            hint = f"verify that `{mod.call_name(mc.call)}` does not record token usage itself (callbacks, a cost " \
                   "tracker)"
        else:
            hint = ""
        via = f" (the provider response returned by `{mc.via}`)" if mc.via else ""
        yield Hit(
            node=mc.call,
            verdict=Verdict.SUSPECTED if hint else Verdict.CONFIRMED,
            claim=f"`{fn.name}` keeps only the content of `{name}`{via} and no module of the project ever reads "
                  "token usage",
            consequence="no record says what a run cost or how close it came to the context limit, and cache "
                        "reads/writes cannot be checked",
            direction="record `response.usage` (input, output, cache read and cache write tokens) with each "
                      "request event",
            confirm_hint=hint,
        )


@rule(CheckId.C15, lang="python", name="response-usage-dropped")
def response_usage_dropped(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a provider response used only for its content within one function (never stored, passed on, returned,
    or read for `usage`) in a module that accounts usage for its other requests. This request's tokens are lost at
    that line: a hole in otherwise recorded usage."""
    if not _facts(project).reads_usage:
        return  # `usage-never-recorded` reports these
    dropped = [d for d in _dropped_responses(mod, project) if d[0].raw]  # a wrapper may account usage itself
    if not dropped or not _module_reads_usage(mod):
        return  # a helper module outside the accounted model layer (a docs script, a one-off converter)
    for mc, name, fn in dropped:
        via = f" (the provider response returned by `{mc.via}`)" if mc.via else ""
        yield Hit(
            node=mc.call,
            verdict=Verdict.CONFIRMED,
            claim=f"only the content of `{name}`{via} is used in `{fn.name}`: its token usage is never read and "
                  "the response does not leave the function",
            consequence="this request's tokens (and cache reads/writes) are missing from every record of the run",
            direction=f"record `{name}.usage` with the request event before extracting the content",
        )


@rule(CheckId.C15, lang="python", name="stream-usage-not-requested")
def stream_usage_not_requested(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags OpenAI-style `chat.completions.create(..., stream=True)` without `stream_options={"include_usage":
    True}` in a function that reads `.usage`: the stream never carries usage, so streamed turns go unaccounted."""
    if idioms.is_test_module(mod):
        return
    never = not _facts(project).reads_usage
    reported = {id(mc.call) for mc, _, _ in _dropped_responses(mod, project)} if never else set()
    for call in idioms.calls_named(mod, project, ("create", "completion", "acompletion")):
        name = mod.call_name(call)
        if not (name.endswith("chat.completions.create") or name in {"litellm.completion", "litellm.acompletion"}):
            continue
        stream = mod.keyword(call, "stream")
        if not (isinstance(stream, ast.Constant) and stream.value is True):
            continue
        if mod.keyword(call, "stream_options") is not None or mod.has_kwargs_splat(call):
            continue
        fn = mod.enclosing_function(call)
        if fn is None or id(call) in reported:
            continue  # a response reduced to its content is reported by `usage-never-recorded`
        if never:
            yield Hit(
                node=call,
                verdict=Verdict.CONFIRMED,
                claim=f"`{fn.name}` streams a chat completion without `stream_options={{\"include_usage\": True}}` "
                      "and no module of the project ever reads token usage",
                consequence="no record says what a run cost or how close it came to the context limit, and cache "
                            "reads/writes cannot be checked",
                direction="pass `stream_options={\"include_usage\": True}` and record the usage of the final chunk "
                          "with each turn's event",
            )
            continue
        if not any(isinstance(n, ast.Attribute) and n.attr == "usage" for n in mod.walk(fn)):
            continue  # whether this stream is meant to be accounted is not shown here
        yield Hit(
            node=call,
            verdict=Verdict.CONFIRMED,
            claim=f"`{fn.name}` reads `.usage` from a streamed chat completion requested without "
                  "`stream_options={\"include_usage\": True}`: the usage it reads never arrives",
            consequence="streamed turns carry no token usage, so the run's cost and context growth go unrecorded",
            direction="pass `stream_options={\"include_usage\": True}` and record the usage of the final chunk",
        )
