"""C11 · Timeout layering — Python rules.

Shapes detected:
- `request-without-timeout`: `requests.get(url)` / `urlopen(url)` in a tool with no `timeout=` (there is no default).
- `process-without-timeout`: `subprocess.run(cmd)` / `proc.communicate()` in a tool with no timeout and no budget.
- `inner-timeout-shorter-than-budget`: a client/process timeout below the `wait_for` budget around it, escaping raw.
- `timeout-reported-as-cancelled`: a budget's expiry caught and reported as "cancelled".

Tool code is a `@tool` function, a `Tool` class method, a dispatcher, a `*_tool` function, a
function registered in a tool table of an agent project, or a function those call; a budget the
dispatcher puts around a dynamically chosen tool counts for every coroutine tool. Values from
settings that cannot be resolved make the layering finding suspected.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from harness_audit.findings import CheckId, Verdict
from harness_audit.static import idioms
from harness_audit.static.lang.python import FuncRef, FunctionNode, PyModule, PyProject, subtree
from harness_audit.static.registry import Hit, rule

_REQUESTS_VERBS = {"get", "post", "put", "patch", "delete", "head", "options", "request"}
_PROCESS_RUNS = {"subprocess.run", "subprocess.call", "subprocess.check_call", "subprocess.check_output"}
_BUDGET_CALLS = {"asyncio.wait_for", "asyncio.timeout", "asyncio.timeout_at", "anyio.fail_after",
                 "anyio.move_on_after", "async_timeout.timeout", "trio.fail_after", "trio.move_on_after"}
_BUDGET_SHORT = {"wait_for", "timeout", "timeout_at", "fail_after", "move_on_after"}
_TIMEOUT_ERRORS = {"TimeoutError", "TimeoutExpired", "Timeout", "ReadTimeout", "ConnectTimeout", "TimeoutException",
                   "ReadTimeoutError", "ServerTimeoutError", "WriteTimeout", "PoolTimeout", "ConnectTimeoutError",
                   "RequestException", "HTTPError", "TransportError", "ClientError", "SubprocessError", "OSError",
                   "Exception", "BaseException"}
_CLIENT_TIMEOUTS = {"TimeoutExpired", "Timeout", "ReadTimeout", "ConnectTimeout", "TimeoutException",
                    "ReadTimeoutError", "ServerTimeoutError"}
_CANCEL_WORD = re.compile(r"\bcancell?ed\b|^\s*cancel", re.I)
_HTTPX_DEFAULT_S = 5.0
_TOOL_CLASS = re.compile(r"(Tool|Tools|Toolkit|Toolset|Toolbox)$")
_TOOL_FUNC = re.compile(r"(^|_)tools?(_|$)", re.I)
_TOOL_TABLE_ANY = re.compile(r"(tool|handler|registry|function|action|command)", re.I)


def _short_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


# ---------------------------------------------------------------- is this a tool's call?
_tool_cache: dict[int, tuple[PyProject, dict[int, bool]]] = {}


def _in_tool_class(mod: PyModule, fn: FunctionNode) -> bool:
    cls = mod.enclosing_class(fn)
    if cls is None:
        return False
    bases = [idioms.last(mod.dotted(b) or "") for b in cls.bases]
    return any(_TOOL_CLASS.search(n) for n in [cls.name, *bases])


def _tool_context(mod: PyModule, project: PyProject, fn: FunctionNode, depth: int = 2) -> bool:
    """Whether `fn` runs as part of a tool call: a tool, a method of a `Tool` class, a tool dispatcher, or
    a function such a one calls (two hops up)."""
    cache = _tool_cache.get(0)
    if cache is None or cache[0] is not project:
        cache = (project, {})
        _tool_cache[0] = cache
    key = id(fn) * 4 + depth
    if key in cache[1]:
        return cache[1][key]
    cache[1][key] = False  # recursion guard
    found = _in_tool_class(mod, fn) or bool(idioms.TOOL_DISPATCH_NAME.search(fn.name)) or \
        bool(_TOOL_FUNC.search(fn.name)) or (_agentish(project) and (
            idioms.is_tool_function(mod, fn, project) or (mod.path, fn.name) in _nested_registered(project)))
    outer = mod.enclosing_function(fn)
    if not found and outer is not None:
        found = _tool_context(mod, project, outer, depth)
    if not found and depth > 0:
        for cmod, call in [*idioms.callers_of(project, fn)[:20], *_method_callers(mod, project, fn)[:20]]:
            cfn = cmod.enclosing_function(call)
            if cfn is not None and _tool_context(cmod, project, cfn, depth - 1):
                found = True
                break
    cache[1][key] = found
    return found


_agentish_cache: dict[int, tuple[PyProject, bool]] = {}


def _agentish(project: PyProject) -> bool:
    """An agent project: it imports an LLM SDK, or it calls a model itself (a raw `/chat/completions` POST)."""
    hit = _agentish_cache.get(0)
    if hit is not None and hit[0] is project:
        return hit[1]
    found = idioms.is_agent_project(project) or any(
        idioms.is_model_call(m, c) for m in project.modules.values()
        if "completion" in m.source or "messages" in m.source for c in m.calls())
    _agentish_cache[0] = (project, found)
    return found


_REGISTRY_KEYS = {"fn", "func", "function", "handler", "callable", "impl", "run", "coroutine"}
_nested_cache: dict[int, tuple[PyProject, set[tuple[str, str]]]] = {}


def _nested_registered(project: PyProject) -> set[tuple[str, str]]:
    """Functions registered through a nested tool table: `TOOLS = {"name": {"fn": f, ...}}` (once per project)."""
    hit = _nested_cache.get(0)
    if hit is not None and hit[0] is project:
        return hit[1]
    out: set[tuple[str, str]] = set()
    for mod in project.modules.values():
        for node in [*mod.nodes(ast.Assign), *mod.nodes(ast.AnnAssign)]:
            if not isinstance(node.value, ast.Dict):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [idioms.last(mod.dotted(t) or "") for t in targets]
            if not isinstance(node.value, ast.Dict) or not any(_TOOL_TABLE_ANY.search(n) for n in names):
                continue
            for entry in node.value.values:
                if not isinstance(entry, ast.Dict):
                    continue
                for key, value in zip(entry.keys, entry.values, strict=True):
                    if isinstance(key, ast.Constant) and key.value in _REGISTRY_KEYS and isinstance(value, ast.Name):
                        out.add((mod.path, value.id))
    _nested_cache[0] = (project, out)
    return out


_attr_calls_cache: dict[int, tuple[PyProject, dict[str, list[tuple[PyModule, ast.Call]]]]] = {}


def _attr_calls(project: PyProject, name: str) -> list[tuple[PyModule, ast.Call]]:
    """`obj.name(...)` calls (not on `self`/`cls`) over the project, in module and source order (cached per name)."""
    hit = _attr_calls_cache.get(0)
    if hit is None or hit[0] is not project:
        hit = _attr_calls_cache[0] = (project, {})
    found = hit[1].get(name)
    if found is None:
        found = hit[1][name] = []
        for other in project.modules.values():
            for call in other.calls_to((name,)):
                func = call.func
                if isinstance(func, ast.Attribute) and not (isinstance(func.value, ast.Name) and
                                                            func.value.id in {"self", "cls"}):
                    found.append((other, call))
    return found


def _method_callers(mod: PyModule, project: PyProject, fn: FunctionNode) -> list[tuple[PyModule, ast.Call]]:
    """Calls `obj.method(...)` of a method of a project class, in modules that import or define that class."""
    cls = mod.parent(fn)
    if not isinstance(cls, ast.ClassDef) or fn.name.startswith("__"):
        return []
    qual = f"{mod.module_name}.{cls.name}"
    return [(other, call) for other, call in _attr_calls(project, fn.name)
            if other is mod or qual in other.imports.values()]


def _under_budget(mod: PyModule, node: ast.AST) -> bool:
    """Whether `node` runs inside a time budget in its own function (`wait_for(...)`, `async with timeout(...)`)."""
    for anc in mod.ancestors(node):
        if isinstance(anc, FunctionNode | ast.Lambda | ast.ClassDef):
            return False
        if isinstance(anc, ast.Call) and _short_name(anc) in _BUDGET_SHORT and mod.call_name(anc) in _BUDGET_CALLS:
            return True
        if isinstance(anc, ast.With | ast.AsyncWith) and any(
            isinstance(i.context_expr, ast.Call) and mod.call_name(i.context_expr) in _BUDGET_CALLS for i in anc.items
        ):
            return True
    return False


def _callers_budget(mod: PyModule, project: PyProject, fn: FunctionNode) -> bool:
    """Whether some caller runs `fn` under a budget (one hop up)."""
    return any(_under_budget(cmod, call) for cmod, call in idioms.callers_of(project, fn)[:20])


# ---------------------------------------------------------------- requests with no timeout
def _session_names(mod: PyModule) -> set[str]:
    out: set[str] = set()
    for node in mod.nodes(ast.Assign):
        if any(isinstance(v, ast.Call) and mod.call_name(v) in {"requests.Session", "requests.session"}
               for v in ([node.value, *node.value.values] if isinstance(node.value, ast.BoolOp) else [node.value])):
            out.update(d for d in (mod.dotted(t) for t in node.targets) if d)
    imports_requests = any(t == "requests" or t.startswith("requests.") for t in mod.imports.values())
    for arg in mod.nodes(ast.arg) if imports_requests and "Session" in mod.source else []:
        if arg.annotation is not None and any(
                mod.qualname(n) == "requests.Session" for n in subtree(arg.annotation)
                if isinstance(n, ast.Attribute | ast.Name)):
            out.add(arg.arg)  # a parameter typed as a `requests.Session`
    return out


def _missing_timeout(mod: PyModule, call: ast.Call, positional_at: int | None = None) -> bool:
    if mod.has_kwargs_splat(call):
        return False
    value = mod.keyword(call, "timeout")
    if value is None and positional_at is not None and len(call.args) > positional_at:
        value = call.args[positional_at]
    return value is None or (isinstance(value, ast.Constant) and value.value is None)


_REQUEST_SHORT = {"urlopen", *_REQUESTS_VERBS}
"""The called names `_unbounded_request` can report."""


def _unbounded_request(mod: PyModule, call: ast.Call, sessions: set[str]) -> str | None:
    """`requests.get` / a `requests.Session` verb / `urlopen` with no timeout: the name to report, else None."""
    short = _short_name(call)
    if short == "urlopen":
        name = mod.call_name(call)
        if name in {"urllib.request.urlopen", "urlopen"} and _missing_timeout(mod, call, 2):
            return name
        return None
    if short not in _REQUESTS_VERBS or not isinstance(call.func, ast.Attribute):
        return None
    given = mod.keyword(call, "timeout")
    if isinstance(given, ast.Constant) and given.value is None and idioms.is_http_call(mod, call):
        return f"{mod.call_name(call)}(timeout=None)"  # an explicit "wait forever", whatever the client's default
    recv = mod.dotted(call.func.value) or ""
    if mod.imports.get(recv) == "requests" or recv in sessions:
        return f"{mod.call_name(call)}" if _missing_timeout(mod, call) else None
    return None


@rule(CheckId.C11, lang="python", name="request-without-timeout")
def request_without_timeout(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a `requests` call (or `urlopen`) made by a tool with no `timeout=`.

    `requests` and `urlopen` have no default timeout: a server that stops answering holds the
    tool, and the whole turn, forever, and no layer ever reports which tool hung. A function every call chain of
    which starts in a constructor runs while the toolset is built, not in a tool call, and is not reported.
    """
    if idioms.is_test_module(mod) or ("requests" not in mod.source and "urlopen" not in mod.source and
                                      "timeout=None" not in mod.source):
        return
    sessions = _session_names(mod)
    if sessions and ".mount(" in mod.source:
        sessions = set()  # a mounted adapter may carry the timeout for the session
    for call in mod.calls_to(_REQUEST_SHORT):
        name = _unbounded_request(mod, call, sessions)
        fn = mod.enclosing_function(call) if name else None
        if name is None or fn is None or not _tool_context(mod, project, fn) or \
                idioms.reached_only_from_initialisers(project, mod, fn):
            continue  # a request made only while objects are built (spec loading) is not a tool call
        yield Hit(
            node=call,
            claim=f"`{name}` in tool code `{fn.name}` has no timeout, and `requests`/`urlopen` have no default one",
            consequence="a server that stops responding hangs the tool call and the agent turn indefinitely, with no "
                        "error naming the tool",
            direction="pass `timeout=` (shorter than the tool's budget) and map `Timeout` to the tool's classified "
                      "timeout error",
        )


# ---------------------------------------------------------------- processes with no timeout
def _popen_handles(mod: PyModule, fn: FunctionNode) -> dict[str, bool]:
    """Local names bound to a spawned process in `fn`, mapped to whether it is an asyncio process."""
    out: dict[str, bool] = {}
    for node in mod.walk(fn):
        value: ast.AST | None = None
        target: ast.AST | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            value, target = node.value, node.targets[0]
        elif isinstance(node, ast.withitem):
            value, target = node.context_expr, node.optional_vars
        if isinstance(value, ast.Await):
            value = value.value
        if not (isinstance(value, ast.Call) and isinstance(target, ast.Name)):
            continue
        name = mod.call_name(value)
        if name == "subprocess.Popen":
            out[target.id] = False
        elif name in {"asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell"}:
            out[target.id] = True
    return out


def _unbounded_process(mod: PyModule, project: PyProject, call: ast.Call,
                       handles: dict[int, dict[str, bool]]) -> str | None:
    """A process run or wait with no timeout and no budget around it: the text to report, else None."""
    short = _short_name(call)
    if short in {"run", "call", "check_call", "check_output"}:
        name = mod.call_name(call)
        if name in _PROCESS_RUNS and _missing_timeout(mod, call):
            return f"`{name}`"
        return None
    if short not in {"communicate", "wait"} or not isinstance(call.func, ast.Attribute):
        return None
    recv = mod.dotted(call.func.value)
    fn = mod.enclosing_function(call)
    if recv is None or fn is None:
        return None
    if id(fn) not in handles:
        handles[id(fn)] = _popen_handles(mod, fn)
    if recv not in handles[id(fn)]:
        return None
    is_async = handles[id(fn)][recv]
    if _raced_or_reaped(mod, fn, call, recv):
        return None
    if is_async:
        if _under_budget(mod, call) or _callers_budget(mod, project, fn):
            return None
        if _dispatch_budgets(project)[0] and any(ref.node is fn for ref in _dispatch_budgets(project)[1]):
            return None  # the dispatcher bounds every tool it runs
        return f"`await {recv}.{short}()`"
    return f"`{recv}.{short}()`" if _missing_timeout(mod, call, 1 if short == "communicate" else 0) else None


def _raced_or_reaped(mod: PyModule, fn: FunctionNode, call: ast.Call, recv: str) -> bool:
    """A wait raced against a deadline (a `call_later`/`Timer` deadline or `asyncio.wait(..., timeout=)` in the
    function), or a reap after the process was already killed."""
    for node in mod.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        short = _short_name(node)
        if short in {"call_later", "call_at"} or mod.call_name(node) == "threading.Timer" or \
                (mod.call_name(node) == "asyncio.wait" and mod.keyword(node, "timeout") is not None):
            return True
        if short in {"terminate", "kill", "killpg"} and node.lineno < call.lineno and (
                short == "killpg" or mod.dotted(node.func.value) == recv):  # type: ignore[attr-defined]
            return True
    return False


@rule(CheckId.C11, lang="python", name="process-without-timeout")
def process_without_timeout(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a tool's `subprocess.run(...)` / `proc.communicate()` / `await proc.wait()` with no timeout and no
    budget around it.

    A command that never exits (waits for input, a hung network call) blocks the tool forever and
    the loop never gets a timeout it could report.
    """
    if idioms.is_test_module(mod) or "subprocess" not in mod.source:
        return
    handles: dict[int, dict[str, bool]] = {}
    for call in mod.calls_to(("run", "call", "check_call", "check_output", "communicate", "wait")):
        what = _unbounded_process(mod, project, call, handles)
        fn = mod.enclosing_function(call) if what else None
        if what is None or fn is None:
            continue
        if not (_tool_context(mod, project, fn) or
                (idioms.is_agent_project(project) and any(idioms.is_model_sourced(project, mod, a) for a in call.args))):
            continue
        yield Hit(
            node=call,
            claim=f"{what} in tool code `{fn.name}` has no timeout and no budget around it",
            consequence="a command that never exits hangs the tool call and the agent turn, and nobody learns which "
                        "tool is stuck",
            direction="pass `timeout=` (or wrap the wait in `asyncio.wait_for`) and turn the expiry into the tool's "
                      "classified timeout, killing the process",
        )


# ---------------------------------------------------------------- inner backstop shorter than the budget
@dataclass(frozen=True, slots=True, kw_only=True)
class _Inner:
    """A timeout inside the budgeted call."""

    module: PyModule
    """Where it is."""
    node: ast.Call
    """The call that carries (or defaults) the timeout."""
    seconds: float | None
    """Its value, None when it comes from a setting this rule cannot resolve."""
    setting: str
    """The timeout expression as written (`10`, `self.http_timeout`)."""
    what: str
    """How to name it."""


def _number(mod: PyModule, expr: ast.expr | None) -> float | None:
    """A literal number, or a module-level constant bound to one."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, int | float) and not isinstance(expr.value, bool):
        return float(expr.value)
    if isinstance(expr, ast.Name):
        for node in mod.tree.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == expr.id for t in node.targets):
                return _number(mod, node.value)
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == expr.id:
                return _number(mod, node.value)
    if isinstance(expr, ast.Call) and mod.call_name(expr) in {"httpx.Timeout", "aiohttp.ClientTimeout"}:
        first = expr.args[0] if expr.args else mod.keyword(expr, "total") or mod.keyword(expr, "timeout")
        return _number(mod, first)
    return None


def _inner_timeouts(ref: FuncRef) -> list[_Inner]:
    """Client and process timeouts set inside one function, unhandled there."""
    mod = ref.module
    out: list[_Inner] = []
    for node in mod.walk(ref.node):
        if not isinstance(node, ast.Call):
            continue
        short = _short_name(node)
        name = mod.call_name(node)
        given = mod.keyword(node, "timeout")
        seconds = _number(mod, given)
        is_client = name in {"httpx.Client", "httpx.AsyncClient"}
        setting = ast.unparse(given) if given is not None else ""
        if given is None and (is_client or (name.startswith("httpx.") and short in _REQUESTS_VERBS)) \
                and not mod.has_kwargs_splat(node):
            seconds, setting = _HTTPX_DEFAULT_S, "httpx's default 5 s"
        if not setting or (isinstance(given, ast.Constant) and given.value is None):
            continue
        if not (is_client or idioms.is_http_call(mod, node) or idioms.is_spawn(mod, node)):
            continue
        if mod.guarded_by(node, _TIMEOUT_ERRORS):
            continue
        shown = f"timeout {seconds:g} s" if seconds is not None else f"timeout `{setting}`"
        out.append(_Inner(module=mod, node=node, seconds=seconds, setting=setting, what=f"`{name}` ({shown})"))
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class _Budget:
    """A time budget around some calls."""

    node: ast.AST
    """The `wait_for` call or the `timeout()` context."""
    seconds: float | None
    """Its value when literal (or a module constant)."""
    setting: str
    """The budget expression as written."""
    calls: list[ast.Call]
    """The calls it bounds."""


def _budgets(mod: PyModule) -> Iterator[_Budget]:
    """Each budget in the module with the calls it bounds: `wait_for(f(...), 60)`, `async with asyncio.timeout(60)`."""
    if "wait_for" not in mod.source and "timeout(" not in mod.source and "fail_after" not in mod.source:
        return
    for call in mod.calls_to(("wait_for",)):
        if mod.call_name(call) != "asyncio.wait_for" or not call.args:
            continue
        given = mod.keyword(call, "timeout") or (call.args[1] if len(call.args) > 1 else None)
        inner = call.args[0]
        if isinstance(inner, ast.Call) and _short_name(inner) in {"create_task", "ensure_future"} and inner.args:
            inner = inner.args[0]
        if isinstance(inner, ast.Call) and given is not None:
            yield _Budget(node=call, seconds=_number(mod, given), setting=ast.unparse(given), calls=[inner])
    for node in mod.nodes(ast.AsyncWith):
        for item in node.items:
            ctx = item.context_expr
            if isinstance(ctx, ast.Call) and mod.call_name(ctx) in {"asyncio.timeout", "anyio.fail_after",
                                                                    "async_timeout.timeout"}:
                given = ctx.args[0] if ctx.args else mod.keyword(ctx, "delay")
                if given is None:
                    continue
                calls = [n.value for n in mod.walk_body(node.body)
                         if isinstance(n, ast.Await) and isinstance(n.value, ast.Call)]
                yield _Budget(node=ctx, seconds=_number(mod, given), setting=ast.unparse(given), calls=calls)


_TOOL_TABLE = re.compile(r"(tool|handler|registry|function)s?$|^_?tools?_", re.I)
_TOOL_CALLABLE = {"fn", "func", "function", "handler", "callable", "impl", "coroutine", "run", "arun", "invoke",
                  "ainvoke", "execute", "aexecute", "on_invoke_tool", "__call__", "entrypoint"}


def _dynamic_tool_call(mod: PyModule, call: ast.Call) -> bool:
    """A tool chosen at run time: `TOOLS[name](...)`, `fn(...)` with `fn = TOOLS[name]`, `tool.fn(...)`."""
    func = call.func
    if isinstance(func, ast.Subscript):
        return bool(_TOOL_TABLE.search(idioms.last(mod.dotted(func.value) or "")))
    if isinstance(func, ast.Attribute):
        recv = idioms.last(mod.dotted(func.value) or "").lower()
        return func.attr in _TOOL_CALLABLE and "tool" in recv
    if isinstance(func, ast.Name):
        fn = mod.enclosing_function(call)
        for node in mod.walk(fn) if fn is not None else []:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == func.id
                                                    for t in node.targets):
                value = node.value
                if isinstance(value, ast.Call) and _short_name(value) == "get" and \
                        isinstance(value.func, ast.Attribute):
                    value = value.func.value
                elif isinstance(value, ast.Subscript):
                    value = value.value
                else:
                    continue
                if _TOOL_TABLE.search(idioms.last(mod.dotted(value) or "")):
                    return True
    return False


@dataclass(frozen=True, slots=True, kw_only=True)
class _DispatchBudget:
    """A budget the dispatcher puts around whichever tool the model picked."""

    module: PyModule
    """Where the budget is."""
    node: ast.AST
    """The `wait_for` call or `timeout()` context."""
    seconds: float | None
    """Its value when literal."""


_dispatch_cache: dict[int, tuple[PyProject, list[_DispatchBudget], list[FuncRef]]] = {}


def _dispatch_budgets(project: PyProject) -> tuple[list[_DispatchBudget], list[FuncRef]]:
    """Budgets around dynamically dispatched tool calls, and the project's tool functions (once per project)."""
    hit = _dispatch_cache.get(0)
    if hit is not None and hit[0] is project:
        return hit[1], hit[2]
    budgets: list[_DispatchBudget] = []
    for mod in project.modules.values():
        for budget in _budgets(mod):
            if any(_dynamic_tool_call(mod, c) for c in budget.calls):
                budgets.append(_DispatchBudget(module=mod, node=budget.node, seconds=budget.seconds))
    tools: list[FuncRef] = []
    if budgets:
        for mod in project.modules.values():
            # only coroutines: a `wait_for` cannot bound a synchronous tool
            tools.extend(FuncRef(mod, fn) for fn in mod.functions() if isinstance(fn, ast.AsyncFunctionDef)
                         and (idioms.is_tool_function(mod, fn, project) or _in_tool_class(mod, fn)))
    _dispatch_cache[0] = (project, budgets, tools)
    return budgets, tools


@rule(CheckId.C11, lang="python", name="inner-timeout-shorter-than-budget")
def inner_timeout_shorter_than_budget(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a client or process timeout, inside a call run under `asyncio.wait_for(..., T)`, that is shorter
    than T and whose expiry is not handled where it is raised.

    The backstop fires first, so the ordinary timeout reaches the loop as a raw `ReadTimeout` or
    `TimeoutExpired` instead of the tool's own classified timeout.
    """
    if idioms.is_test_module(mod):
        return
    seen: set[int] = set()
    dispatch, tools = _dispatch_budgets(project)
    for budget in _budgets(mod):
        if mod.guarded_by(budget.node, _CLIENT_TIMEOUTS):
            continue  # the caller maps the client's own timeout too
        roots = [ref for c in budget.calls for ref in project.resolve_call(mod, c)]
        if any(b.node is budget.node for b in dispatch):
            roots.extend(tools)
        if not roots:
            continue
        for ref in [*roots, *project.reachable(roots, depth=1)]:
            for inner in _inner_timeouts(ref):
                verdict = _compare(inner, budget)
                if verdict is None or id(inner.node) in seen:
                    continue
                seen.add(id(inner.node))
                where = "" if inner.module is mod else f" in {mod.path}"
                line = budget.node.lineno  # type: ignore[attr-defined]  # a call or a with-item expression
                shown = f"{budget.seconds:g} s" if budget.seconds is not None else f"`{budget.setting}`"
                yield Hit(
                    node=inner.node, module=inner.module, verdict=verdict,
                    confirm_hint="" if verdict is Verdict.CONFIRMED else
                    f"verify that `{inner.setting}` ({inner.module.path}:{inner.node.lineno}) is longer than "
                    f"`{budget.setting}` (line {line}), or that its expiry is mapped to the tool's timeout error",
                    claim=f"{inner.what} {'fires' if verdict is Verdict.CONFIRMED else 'may fire'} before the "
                          f"{shown} budget at line {line}{where}, and its exception is not mapped to the tool's "
                          "timeout",
                    consequence="an ordinary slow call surfaces as a raw client/process timeout instead of "
                                "\"tool timed out after N s\", so nobody can tell which tool was slow",
                    direction="make the inner timeout a backstop longer than the budget, or catch its timeout "
                              "exception and raise the tool's classified timeout",
                )


_DERIVED = re.compile(r"(remaining|deadline|left|budget|elapsed)", re.I)


def _compare(inner: _Inner, budget: _Budget) -> Verdict | None:
    """Confirmed when both values are known and the inner one is shorter; suspected when a setting is unresolved
    (and not visibly derived from the budget); None when the inner timeout is a true backstop."""
    if inner.seconds is not None and budget.seconds is not None:
        return Verdict.CONFIRMED if inner.seconds < budget.seconds else None
    if inner.setting == budget.setting or _DERIVED.search(inner.setting):
        return None  # the same setting, or a deadline clamped to what is left of the budget
    return Verdict.SUSPECTED


# ---------------------------------------------------------------- budget expiry reported as cancellation
def _says_cancelled(mod: PyModule, stmts: list[ast.stmt]) -> ast.AST | None:
    """The return/raise/assignment in `stmts` that reports a cancellation."""
    for node in mod.walk_body(stmts):
        if isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if idioms.last(mod.dotted(exc) or "") in {"CancelledError", "Cancelled"}:
                return node
        if isinstance(node, ast.Return | ast.Raise | ast.Assign):
            value = node.exc if isinstance(node, ast.Raise) else node.value
            if value is None:
                continue
            for sub in subtree(value):
                if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and _CANCEL_WORD.search(sub.value):
                    return node
                if isinstance(sub, ast.Attribute) and _CANCEL_WORD.search(sub.attr) and \
                        not isinstance(mod.parent(sub), ast.Call):
                    return node
    return None


_CANCEL_TEST = re.compile(r"cancel|stop|abort|interrupt|shutdown", re.I)


def _on_real_cancel(mod: PyModule, node: ast.AST, handler: ast.ExceptHandler) -> bool:
    """Whether `node` only runs once a cancel signal was seen (`if cancel.is_set(): return "cancelled"`): a poll
    timeout used to check for a stop request, not a budget's expiry."""
    for anc in mod.ancestors(node):
        if anc is handler:
            return False
        if isinstance(anc, ast.If) and _CANCEL_TEST.search(ast.unparse(anc.test)):
            return True
    return False


def _inside_budget_block(mod: PyModule, node: ast.AST) -> bool:
    for anc in mod.ancestors(node):
        if isinstance(anc, FunctionNode | ast.Lambda | ast.ClassDef):
            return False
        if isinstance(anc, ast.AsyncWith | ast.With) and any(
            isinstance(i.context_expr, ast.Call) and mod.call_name(i.context_expr) in
            {"asyncio.timeout", "asyncio.timeout_at", "anyio.fail_after", "anyio.move_on_after",
             "async_timeout.timeout"} for i in anc.items
        ):
            return True
    return False


@rule(CheckId.C11, lang="python", name="timeout-reported-as-cancelled")
def timeout_reported_as_cancelled(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a timeout reported under the cancel class: `except TimeoutError` that returns or raises
    "cancelled", or `except CancelledError` inside `asyncio.timeout()` that reports the expiry as a cancel.

    The loop then cannot tell a slow tool from a user stop, and neither is reported truthfully.
    """
    if idioms.is_test_module(mod) or "ancel" not in mod.source:
        return
    for tr in mod.trys():
        for handler in tr.handlers:
            names = mod.handler_names(handler)
            if names & {"TimeoutError", "TimeoutExpired"}:
                culprit = _says_cancelled(mod, handler.body)
                if culprit is None or _on_real_cancel(mod, culprit, handler):
                    continue
                yield Hit(
                    node=culprit,
                    claim="a timeout is caught here and reported as a cancellation",
                    consequence="a tool that ran out of time is shown as \"cancelled\": users and the loop cannot "
                                "tell a slow tool from a stop request",
                    direction="report the expiry as the tool's classified timeout (name and seconds), distinct from "
                              "a user cancel",
                )
            elif names & {"CancelledError"} and _inside_budget_block(mod, tr):
                if any(isinstance(n, ast.Raise) for n in mod.walk_body(handler.body)):
                    continue
                yield Hit(
                    node=handler,
                    claim="inside an `asyncio.timeout()` block the budget's expiry arrives as CancelledError; this "
                          "handler reports it as a cancellation instead of letting it become TimeoutError",
                    consequence="a tool that ran out of time is reported as \"cancelled\" and the budget never "
                                "raises its TimeoutError",
                    direction="let CancelledError propagate out of the timeout block and handle `TimeoutError` "
                              "outside it as the tool's classified timeout",
                )


def _seconds(mod: PyModule, expr: ast.expr | None) -> float | None:
    """A number, a module constant, or the longest part of a `(connect, read)` tuple."""
    if isinstance(expr, ast.Name):
        for node in mod.tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple) and \
                    any(isinstance(t, ast.Name) and t.id == expr.id for t in node.targets):
                return _seconds(mod, node.value)
    if isinstance(expr, ast.Tuple):
        parts = [_number(mod, e) for e in expr.elts]
        return max(parts) if parts and all(p is not None for p in parts) else None  # type: ignore[type-var]
    return _number(mod, expr)
