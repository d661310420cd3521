"""C4 · Model output parsing — Python rules.

Shapes detected:
- `unguarded-arguments-decode`: `json.loads` / `model_validate_json` of a tool call's arguments (or of the model's
  JSON reply) with no handler for malformed JSON in the function or in any caller up to two hops.
- `truncated-stream-calls-kept`: streamed tool-call fragments are accumulated and nothing in the project compares
  `finish_reason` / `stop_reason` with `length` / `max_tokens`, so a cut-off stream yields "complete" calls.
- `delta-index-into-list`: streamed fragments are placed with `calls[delta.index]` into a list.
- `call-appended-per-delta`: every streamed fragment is appended to the calls as a new call object.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from harness_audit.findings import CheckId, Verdict
from harness_audit.static import idioms
from harness_audit.static.lang.python import FunctionNode, PyModule, PyProject, subtree
from harness_audit.static.registry import Hit, rule

_DECODE_FUNCS = {"json.loads", "orjson.loads", "ujson.loads", "simplejson.loads", "rapidjson.loads", "json5.loads",
                 "pydantic_core.from_json", "ast.literal_eval"}
_DECODE_METHODS = {"model_validate_json", "validate_json", "parse_raw"}
_DECODE_SHORT = {idioms.last(n) for n in _DECODE_FUNCS} | _DECODE_METHODS
_MODEL_JSON = re.compile(
    idioms.MODEL_ARGS_TEXT.pattern
    + r"|choices\[\d+\]\.message\.content|\[['\"]choices['\"]\]\[\d+\]\[['\"]message['\"]\]\[['\"]content['\"]\]"
    r"|\.output_text\b|\.content\[\d+\]\.text\b"
)
_MODEL_JSON_PARAMS = {"arguments", "args_json", "arguments_json", "raw_arguments", "raw_args", "args_str",
                      "function_args", "tool_arguments", "input_json"}
_DECODE_ERRORS = {"JSONDecodeError", "ValueError", "Exception", "BaseException", "ValidationError", "DecodeError",
                  "SyntaxError", "PydanticUserError"}
_FRAGMENT = re.compile(r"\.arguments\b|\[['\"]arguments['\"]\]|partial_json")
_STREAM_WORDS = re.compile(r"\b(delta|deltas|chunk|chunks|partial_json|content_block_delta|stream)\b")
_FINISH_TEXT = re.compile(r"finish_reason|stop_reason|finishReason|stopReason|incomplete_details|status")
_TRUNCATION_VALUES = {"length", "max_tokens", "MAX_TOKENS", "max_output_tokens", "incomplete", "model_length"}
_TRUNCATION_ERRORS = re.compile(r"^(LengthFinishReasonError|IncompleteToolCall\w*|MaxTokens\w*(Error|Exceeded)|"
                                r"\w*Truncat\w*(Error|Exception))$")


_src = idioms.source_text


# ---------------------------------------------------------------- decoding without a handler
def _decoded_arg(mod: PyModule, call: ast.Call) -> ast.expr | None:
    func = call.func
    short = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if short not in _DECODE_SHORT:
        return None
    name = mod.call_name(call)
    if name in _DECODE_FUNCS or (idioms.last(name) in _DECODE_METHODS and isinstance(call.func, ast.Attribute)):
        if call.args and not isinstance(call.args[0], ast.Starred):
            return call.args[0]
        return mod.keyword(call, "json_data") or mod.keyword(call, "s")
    return None


def _is_model_json(mod: PyModule, fn: FunctionNode | None, arg: ast.expr) -> bool:
    if isinstance(arg, ast.Name) and fn is not None and arg.id in _MODEL_JSON_PARAMS and \
            arg.id in {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}:
        return True
    return bool(_MODEL_JSON.search(idioms.derivation_text(mod, fn, arg)))


def _handles_decode_error(mod: PyModule, node: ast.AST) -> bool:
    """A `try` around `node` (in its own function) whose handler catches a decode error and does not re-raise it."""
    for tr, part in mod.enclosing_trys(node):
        if part != "body":
            continue
        for handler in tr.handlers:
            caught = mod.handler_names(handler)
            reraises = any(isinstance(stmt, ast.Raise) and stmt.exc is None for stmt in handler.body)
            if (not caught or caught & _DECODE_ERRORS) and not reraises:
                return True
    for anc in mod.ancestors(node):
        if isinstance(anc, FunctionNode | ast.Lambda | ast.ClassDef):
            break
        if isinstance(anc, ast.With | ast.AsyncWith):
            for item in anc.items:
                ctx = item.context_expr
                if isinstance(ctx, ast.Call) and idioms.last(mod.call_name(ctx)) == "suppress" and \
                        {idioms.last(mod.dotted(a) or "") for a in ctx.args} & _DECODE_ERRORS:
                    return True
        if isinstance(anc, ast.Call) and idioms.last(mod.call_name(anc)) == "gather":
            flag = mod.keyword(anc, "return_exceptions")
            if isinstance(flag, ast.Constant) and flag.value is True:
                return True
    return False


def _caller_handles(project: PyProject, mod: PyModule, fn: FunctionNode, depth: int = 2) -> bool | None:
    """True when some caller (up to `depth` hops) handles the error; False when every chain of callers leads,
    unhandled, to a function that drives the tool calls; None when a chain ends (no visible caller, or depth spent)
    in a function that does not drive them, so the handler may sit beyond what the project shows."""
    callers = idioms.callers_of(project, fn, mod)
    if not callers:
        return None
    result: bool | None = False
    for cmod, call in callers:
        if _handles_decode_error(cmod, call):
            return True
        cfn = cmod.enclosing_function(call)
        if cfn is None or cfn is fn:
            continue
        if depth <= 1:
            if not _drives_tool_calls(cmod, cfn):
                result = None
            continue
        upper = _caller_handles(project, cmod, cfn, depth - 1)
        if upper:
            return True
        if upper is None and not _drives_tool_calls(cmod, cfn):
            result = None
    return result


def _drives_tool_calls(mod: PyModule, fn: FunctionNode | None) -> bool:
    """Whether `fn` is the turn itself: module level, a model call, or a loop over tool calls that runs them or
    appends to the history (an exception there ends the turn, whoever catches it above)."""
    if fn is None:
        return True
    for node in mod.walk(fn):
        if isinstance(node, ast.For | ast.AsyncFor) and re.search(r"tool_calls|tool_use", _src(mod, node.iter)) \
                and any(isinstance(n, ast.Call) and _runs_or_records(mod, n) for n in mod.walk_body(node.body)):
            return True
        if isinstance(node, ast.Call) and idioms.is_model_call(mod, node):
            return True
    return False


def _runs_or_records(mod: PyModule, call: ast.Call) -> bool:
    """A call that executes a tool (`registry[name](...)`, `fn(**args)`, `execute_tool(...)`) or appends to the
    message history."""
    func = call.func
    if isinstance(func, ast.Subscript) or mod.has_kwargs_splat(call):
        return True
    if isinstance(func, ast.Attribute) and func.attr in {"append", "extend"}:
        return idioms.is_message_list(mod, func.value)
    name = mod.call_name(call)
    return bool(name) and bool(idioms.TOOL_DISPATCH_NAME.search(idioms.last(name)))


@rule(CheckId.C4, lang="python", name="unguarded-arguments-decode")
def unguarded_arguments_decode(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags `json.loads` / `model_validate_json` of a tool call's arguments (or the model's JSON reply) that no
    `try` catches, neither in its function nor in any caller two hops up. Malformed arguments are routine
    model output; an uncaught `JSONDecodeError` ends the whole run instead of becoming an error result."""
    for call in mod.calls_to(_DECODE_SHORT):
        arg = _decoded_arg(mod, call)
        if arg is None:
            continue
        fn = mod.enclosing_function(call)
        if not _is_model_json(mod, fn, arg) or _handles_decode_error(mod, call):
            continue
        decoded = _src(mod, arg) or "the arguments"
        handled = _caller_handles(project, mod, fn) if fn is not None else None
        if handled:
            continue
        if handled is None and not _drives_tool_calls(mod, fn):
            assert fn is not None  # `_drives_tool_calls` is true at module level
            yield Hit(
                node=call, verdict=Verdict.SUSPECTED,
                claim=f"`{mod.call_name(call)}({decoded})` decodes model output with no handler in `{fn.name}`",
                consequence="a tool call with malformed JSON arguments raises out of the tool path unless a caller "
                            "catches it",
                direction="wrap the decode in `try/except json.JSONDecodeError` and return an error tool result "
                          "to the model",
                confirm_hint=f"verify that every caller of `{fn.name}` catches JSONDecodeError/ValueError around it",
            )
            continue
        yield Hit(
            node=call,
            claim=f"`{mod.call_name(call)}({decoded})` decodes model output and no `try` on the path catches "
                  "a decode error",
            consequence="one tool call with malformed or truncated JSON arguments crashes the agent loop",
            direction="wrap the decode in `try/except json.JSONDecodeError` and answer the call with an error tool "
                      "result so the model can retry",
        )


# ---------------------------------------------------------------- truncated streams
_TRUNC_CACHE: list[tuple[PyProject, bool]] = []


def _project_checks_truncation(project: PyProject) -> bool:
    """Whether any module compares a finish/stop reason with a token-limit value (cached per project)."""
    if _TRUNC_CACHE and _TRUNC_CACHE[0][0] is project:
        return _TRUNC_CACHE[0][1]
    found = False
    for mod in project.modules.values():
        if found:
            break
        for cmp in mod.nodes(ast.Compare):
            consts = {n.value for n in subtree(cmp) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
            if consts & _TRUNCATION_VALUES and _FINISH_TEXT.search(_src(mod, cmp)):
                found = True
                break
        if not found:
            for case in mod.nodes(ast.match_case):
                if any(isinstance(n, ast.Constant) and n.value in _TRUNCATION_VALUES for n in subtree(case.pattern)):
                    found = True
                    break
        if not found:
            for name in mod.nodes(ast.Name, any_order=True):
                if _TRUNCATION_ERRORS.search(name.id):
                    found = True
                    break
    _TRUNC_CACHE[:] = [(project, found)]
    return found


def _root_name(expr: ast.AST) -> str | None:
    cur = expr
    while isinstance(cur, ast.Attribute | ast.Subscript):
        cur = cur.value
    return cur.id if isinstance(cur, ast.Name) else None


def _fragment_sites(mod: PyModule) -> dict[FunctionNode, list[ast.stmt]]:
    """Statements that add a tool-call argument fragment to an accumulator inside a loop, per streaming function."""
    sites: dict[FunctionNode, list[ast.stmt]] = {}
    candidates: list[tuple[ast.stmt, ast.AST]] = []
    for aug in mod.nodes(ast.AugAssign):
        if isinstance(aug.op, ast.Add):
            candidates.append((aug, aug.value))
    for expr in mod.nodes(ast.Expr):
        call = expr.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
                call.func.attr in {"append", "write"} and call.args:
            candidates.append((expr, call.args[0]))
    for assign in mod.nodes(ast.Assign):
        if isinstance(assign.value, ast.BinOp) and isinstance(assign.value.op, ast.Add):
            candidates.append((assign, assign.value))
    streaming: dict[FunctionNode, bool] = {}
    for stmt, value in sorted(candidates, key=lambda c: (c[0].lineno, c[0].col_offset)):
        if not _FRAGMENT.search(_src(mod, value)) or not mod.enclosing_loops(stmt):
            continue
        fn = mod.enclosing_function(stmt)
        if fn is None:
            continue
        if fn not in streaming:
            streaming[fn] = bool(_STREAM_WORDS.search(_src(mod, fn)))
        if streaming[fn]:
            sites.setdefault(fn, []).append(stmt)
    return sites


def _accumulator(site: ast.stmt) -> ast.AST:
    if isinstance(site, ast.AugAssign):
        return site.target
    if isinstance(site, ast.Assign):
        return site.targets[0]
    assert isinstance(site, ast.Expr) and isinstance(site.value, ast.Call) and isinstance(site.value.func, ast.Attribute)
    return site.value.func.value


def _commit_site(mod: PyModule, fn: FunctionNode, site: ast.stmt) -> ast.AST | None:
    """The first use, after the stream loop ends, of the container the fragments went into (else the site)."""
    loops = mod.enclosing_loops(site)
    outer = loops[-1]
    names: set[str] = set()
    root = _root_name(_accumulator(site))
    if root is not None:
        names.add(root)
    # `call = calls[i]; call.arguments += d` accumulates into `calls`
    for node in mod.walk(fn):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in names for t in node.targets):
            src = node.value
            if isinstance(src, ast.Subscript | ast.Call):
                base = _root_name(src.value if isinstance(src, ast.Subscript) else src.func)
                if base is not None:
                    names.add(base)
    if "self" in names:
        # fragments kept in object state (`self._calls`) are committed by whoever reads that state later;
        # citing the accumulator would blame a component that cannot see the finish reason
        return None
    end = outer.end_lineno or outer.lineno
    uses = [n for n in mod.walk(fn) if isinstance(n, ast.Name) and n.id in names and n.lineno > end]
    if not uses:
        return site
    first = min(uses, key=lambda n: (n.lineno, n.col_offset))
    for anc in mod.ancestors(first):
        if isinstance(anc, ast.stmt):
            return anc
    return site


@rule(CheckId.C4, lang="python", name="truncated-stream-calls-kept")
def truncated_stream_calls_kept(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags streamed tool-call fragments accumulated into calls when nothing in the project compares
    `finish_reason` / `stop_reason` with `length` / `max_tokens`. A stream cut off by the token limit then
    yields calls whose arguments are truncated, and they are executed or stored as if complete."""
    if _project_checks_truncation(project):
        return
    for fn, sites in _fragment_sites(mod).items():
        site = sites[0]
        cited = _commit_site(mod, fn, site)
        if cited is None:
            continue
        reads_finish = bool(re.search(r"finish_reason|stop_reason", _src(mod, fn)))
        if reads_finish and _used_only_on_tool_stop(mod, fn, cited):
            continue  # `if finish_reason == "tool_calls": run(...)`: a stream cut by the limit never runs them
        if reads_finish:
            yield Hit(
                node=cited, verdict=Verdict.SUSPECTED,
                claim=f"`{fn.name}` accumulates streamed tool-call arguments and reads the finish reason, but "
                      "nothing compares it with `length`/`max_tokens`",
                consequence="a stream cut off by the token limit yields tool calls with truncated arguments that "
                            "are executed as if complete",
                direction="when finish_reason is `length` (or stop_reason `max_tokens`), discard the accumulated "
                          "calls and retry or report the truncation",
                confirm_hint=f"verify whether the finish reason read in `{fn.name}` is checked for a token-limit stop "
                             "before its tool calls run",
            )
            continue
        yield Hit(
            node=cited,
            claim=f"`{fn.name}` accumulates streamed tool-call arguments and no finish reason is checked for a "
                  "token-limit stop anywhere",
            consequence="a stream cut off by the token limit yields tool calls with truncated arguments that are "
                        "executed or stored as if complete",
            direction="capture finish_reason/stop_reason from the stream and, on `length`/`max_tokens`, discard the "
                      "accumulated calls instead of executing them",
        )


_TOOL_STOPS = frozenset({"tool_calls", "tool_use", "function_call"})
"""The finish / stop reasons that say a reply ended because it asked for tools (and so was not cut off)."""


def _names_stop_reason(x: ast.expr) -> bool:
    return (isinstance(x, ast.Attribute) and x.attr in ("finish_reason", "stop_reason") or
            isinstance(x, ast.Name) and x.id.endswith(("finish_reason", "stop_reason")) or
            isinstance(x, ast.Subscript) and isinstance(x.slice, ast.Constant) and
            x.slice.value in ("finish_reason", "stop_reason"))


def _used_only_on_tool_stop(mod: PyModule, fn: FunctionNode, site: ast.AST) -> bool:
    """The accumulated arguments (`arguments += delta...` at `site`) are read, past their accumulation, only under a
    tool-stop test (`_runs_only_on_tool_stop`)."""
    target = site.target if isinstance(site, ast.AugAssign) else None
    if not isinstance(target, ast.Name):
        return False
    writes = {id(n) for n in ast.walk(site)}
    reads = [n for n in mod.walk(fn) if isinstance(n, ast.Name) and n.id == target.id and
             isinstance(n.ctx, ast.Load) and id(n) not in writes and
             not any(isinstance(a, ast.AugAssign) and isinstance(a.target, ast.Name) and a.target.id == target.id
                     for a in mod.ancestors(n))]
    return bool(reads) and all(_runs_only_on_tool_stop(mod, n) for n in reads)


def _runs_only_on_tool_stop(mod: PyModule, site: ast.AST) -> bool:
    """`site` runs only under `if <reply>.finish_reason == "tool_calls"` (or `stop_reason == "tool_use"`, `in
    (...)` of such): the calls are committed only when the reply says it ended to ask for them."""
    for node in [site, *mod.ancestors(site)]:
        if not isinstance(node, ast.If | ast.While):
            continue
        for cmp in ast.walk(node.test):
            if not (isinstance(cmp, ast.Compare) and len(cmp.ops) == 1 and isinstance(cmp.ops[0], ast.Eq | ast.In)):
                continue
            left, right = cmp.left, cmp.comparators[0]
            if not _names_stop_reason(left):
                left, right = right, left
            stops = {c.value for c in ast.walk(right) if isinstance(c, ast.Constant)}
            if _names_stop_reason(left) and stops and stops <= _TOOL_STOPS:
                return True
    return False


# ---------------------------------------------------------------- delta accumulation
def _is_list_value(value: ast.AST | None) -> bool:
    if isinstance(value, ast.List | ast.ListComp):
        return True
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Mult):
        return isinstance(value.left, ast.List) or isinstance(value.right, ast.List)
    if isinstance(value, ast.Call):
        name = value.func.id if isinstance(value.func, ast.Name) else ""
        if name == "list":
            return True
        if name == "field":
            factory = PyModule.keyword(value, "default_factory")
            return isinstance(factory, ast.Name) and factory.id == "list"
    return False


def _is_list_annotation(ann: ast.AST | None) -> bool:
    if ann is None:
        return False
    base = ann.value if isinstance(ann, ast.Subscript) else ann
    return isinstance(base, ast.Name) and base.id in {"list", "List"} or \
        isinstance(base, ast.Attribute) and base.attr == "List"


def _container_is_list(mod: PyModule, fn: FunctionNode, container: ast.expr) -> bool:
    if isinstance(container, ast.Name):
        scope: list[ast.AST] = [*mod.walk(fn)]
        for node in scope:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == container.id
                                                    for t in node.targets):
                return _is_list_value(node.value)
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and \
                    node.target.id == container.id:
                return _is_list_annotation(node.annotation) or _is_list_value(node.value)
        return False
    if isinstance(container, ast.Attribute) and isinstance(container.value, ast.Name) and \
            container.value.id == "self":
        cls = mod.enclosing_class(fn)
        if cls is None:
            return False
        for node in mod.walk(cls, into_functions=True):
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == container.attr and
                                                    mod.dotted(t) == f"self.{container.attr}" for t in node.targets):
                return _is_list_value(node.value)
            if isinstance(node, ast.AnnAssign) and (
                    mod.dotted(node.target) in {f"self.{container.attr}", container.attr}):
                return _is_list_annotation(node.annotation) or _is_list_value(node.value)
    return False


_DELTA_BASE = re.compile(r"delta|tool|call|event|chunk|block|\btc\b|\bfc\b", re.I)


def _is_delta_index(mod: PyModule, expr: ast.AST) -> bool:
    """`tc.index` / `event.index` / `delta["index"]`: the position a streamed fragment claims for itself."""
    if isinstance(expr, ast.Attribute) and expr.attr == "index":
        base: ast.expr = expr.value
    elif isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and expr.slice.value == "index":
        base = expr.value
    else:
        return False
    if not isinstance(base, ast.Name | ast.Attribute | ast.Subscript):
        return False
    if _DELTA_BASE.search(_src(mod, base)):
        return True
    # `for d in chunk.choices[0].delta.tool_calls: calls[d.index]`
    fn = mod.enclosing_function(expr)
    return isinstance(base, ast.Name) and fn is not None and any(
        isinstance(n, ast.For | ast.AsyncFor) and isinstance(n.target, ast.Name) and n.target.id == base.id
        and re.search(r"tool_calls|delta|event|chunk|stream", _src(mod, n.iter)) for n in mod.walk(fn))


@rule(CheckId.C4, lang="python", name="delta-index-into-list")
def delta_index_into_list(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags streamed tool-call fragments placed with `calls[delta.index]` into a list. A list assumes the
    indices start at 0 and have no gaps; a provider that starts at 1 or skips one raises IndexError mid-stream
    (a dict keyed by index has no such assumption)."""
    reported: set[tuple[int, str]] = set()
    streaming: dict[FunctionNode, bool] = {}
    for node in mod.nodes(ast.Subscript):
        if not _is_delta_index(mod, node.slice):
            continue
        fn = mod.enclosing_function(node)
        if fn is None:
            continue
        if fn not in streaming:
            streaming[fn] = bool(_STREAM_WORDS.search(_src(mod, fn)))
        container = _src(mod, node.value)
        if not streaming[fn] or (id(fn), container) in reported:
            continue
        if not _container_is_list(mod, fn, node.value):
            continue
        padded = [_src(mod, n.test) for n in mod.walk(fn) if isinstance(n, ast.While)]
        if any(f"len({container})" in t for t in padded):
            continue
        reported.add((id(fn), container))
        index = _src(mod, node.slice)
        yield Hit(
            node=node, verdict=Verdict.SUSPECTED,
            claim=f"streamed tool calls are stored by position: `{container}[{index}]` indexes a list",
            consequence="a stream whose tool-call indices start above 0 or skip one raises IndexError or "
                        "merges fragments into the wrong call",
            direction=f"accumulate into a dict keyed by `{index}` (or the call id) and order by key at the end",
            confirm_hint=f"verify the provider behind this stream can send a first `{index}` above 0 or a gap, "
                         f"which makes `{container}[{index}]` fail",
        )


def _builds_call(node: ast.AST) -> bool:
    if isinstance(node, ast.Dict):
        keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
        return bool(keys & {"function", "arguments"}) or {"id", "name"} <= keys
    if isinstance(node, ast.Call):
        kws = {kw.arg for kw in node.keywords}
        return bool(kws & {"function", "arguments"}) or {"id", "name"} <= kws
    return False


@rule(CheckId.C4, lang="python", name="call-appended-per-delta")
def call_appended_per_delta(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a loop over a delta's tool calls that appends a new call object for every fragment, unconditionally.
    Providers that split one call's arguments over many deltas (OpenAI does) then produce one broken call per
    fragment instead of one call with the joined arguments."""
    for loop in [*mod.nodes(ast.For), *mod.nodes(ast.AsyncFor)]:
        iter_text = _src(mod, loop.iter)
        if "delta" not in iter_text or not re.search(r"tool_calls|tool_use", iter_text):
            continue
        for stmt in loop.body:
            if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)
                    and isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr == "append"
                    and stmt.value.args and _builds_call(stmt.value.args[0])):
                continue
            target = _src(mod, stmt.value.func.value)
            yield Hit(
                node=stmt, verdict=Verdict.SUSPECTED,
                claim=f"every streamed tool-call fragment is appended to `{target}` as a new call",
                consequence="a call whose arguments arrive over several deltas becomes several calls with partial, "
                            "unparsable arguments",
                direction="merge fragments into a dict keyed by the delta's index (or id) and build the calls once "
                          "the stream ends",
                confirm_hint="verify the provider splits one call's arguments across several deltas (OpenAI chat "
                             "completions does), so each fragment here becomes its own call",
            )
            break
