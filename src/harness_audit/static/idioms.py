"""What common Python harness idioms look like: model calls, HTTP, spawns, retries, writes.

Recon and the rules ask these predicates instead of each keeping its own name lists.
"""

from __future__ import annotations

import ast
import re

from harness_audit.static.lang.python import FunctionNode, PyModule, subtree

_MODEL_SUFFIXES = (
    "chat.completions.create", "chat.completions.parse", "chat.completions.stream", "messages.create",
    "messages.stream", "responses.create", "responses.stream", "responses.parse", "generate_content",
    "generate_content_async", "ChatCompletion.create", "ChatCompletion.acreate", "Completion.create",
    "completions.create", "models.generate_content", "aio.models.generate_content",
)
_MODEL_FUNCS = {"litellm.completion", "litellm.acompletion", "ollama.chat", "ollama.generate"}
_MODEL_METHOD_NAMES = {"invoke", "ainvoke", "stream", "astream", "generate", "agenerate", "complete", "acomplete",
                       "chat", "achat", "create", "get_response", "stream_response", "request", "request_stream",
                       "generate_stream", "predict", "apredict"}
_MODEL_RECEIVER = re.compile(r"(llm|model|chat|client|provider|anthropic|openai|gemini|claude|gpt)", re.I)
_MODEL_URL = re.compile(r"(chat/completions|/v1/messages|/responses\b|:generateContent|:streamGenerateContent|"
                        r"/api/chat|/api/generate|/completions\b)")

HTTP_METHODS = {"get", "post", "put", "patch", "delete", "head", "options", "request", "stream", "send"}
SIDE_EFFECT_HTTP = {"post", "put", "patch", "delete"}
_HTTP_MODULES = ("requests", "httpx", "aiohttp", "urllib3")
_HTTP_RECEIVER = re.compile(r"(session|client|http|requests|httpx|api|conn)", re.I)

SPAWN_CALLS = {
    "subprocess.run", "subprocess.Popen", "subprocess.call", "subprocess.check_call", "subprocess.check_output",
    "subprocess.getoutput", "subprocess.getstatusoutput", "os.system", "os.popen", "os.execv", "os.execvp",
    "os.execve", "os.execvpe", "os.spawnv", "os.spawnvp", "os.posix_spawn", "os.posix_spawnp",
    "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell", "pexpect.spawn", "pexpect.run",
    "anyio.run_process", "anyio.open_process", "trio.run_process", "sh.Command",
}
RETRY_DECORATORS = {
    "tenacity.retry", "retrying.retry", "backoff.on_exception", "backoff.on_predicate", "stamina.retry",
    "retry.retry", "async_retrying.retry", "tenacity.asyncio.retry",
}
RETRY_ITERATORS = {"tenacity.Retrying", "tenacity.AsyncRetrying", "stamina.retry_context"}


def last(name: str) -> str:
    """The last dotted part of a name."""
    return name[name.rfind(".") + 1:]  # a slice, not `rsplit`'s list: this runs for nearly every call


def receiver(name: str) -> str:
    """Everything before the last dotted part (`self.client.post` → `self.client`)."""
    return name.rpartition(".")[0]


def is_model_call(mod: PyModule, call: ast.Call) -> bool:
    """Whether `call` sends a request to a model provider (SDK call, LiteLLM, LangChain, raw POST)."""
    # memoised on the node itself: recon and several rules ask about every call
    known: bool | None = getattr(call, "_ha_model", None)
    if known is None:
        known = _is_model_call(mod, call)
        call._ha_model = known  # type: ignore[attr-defined]
    return known


def _is_model_call(mod: PyModule, call: ast.Call) -> bool:
    name = mod.call_name(call)
    if not name:
        return False
    if name in _MODEL_FUNCS or name.endswith(_MODEL_SUFFIXES):
        return True
    if name.endswith(".completion") or name.endswith(".acompletion") or name in {"completion", "acompletion"}:
        return "litellm" in name or mod.imports.get(name, "").startswith("litellm")
    meth = last(name)
    if meth in _MODEL_METHOD_NAMES and _MODEL_RECEIVER.search(receiver(name)) and meth != "create":
        return not is_http_call(mod, call)
    if is_http_call(mod, call):
        return any(_MODEL_URL.search(s) for s in string_parts(call))
    return False


def string_parts(node: ast.AST) -> list[str]:
    """Every string literal (and f-string constant part) inside `node`."""
    out: list[str] = []
    for sub in subtree(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            out.append(sub.value)
    return out


def http_method(mod: PyModule, call: ast.Call) -> str | None:
    """The HTTP verb of an HTTP client call (`post`, `get`, …), or None if `call` is not one."""
    name = mod.call_name(call)
    if not name:
        return None
    if name in {"urllib.request.urlopen", "urlopen"}:
        return "post" if len(call.args) > 1 or mod.keyword(call, "data") is not None else "get"
    meth = last(name)
    if meth not in HTTP_METHODS:
        return None
    recv = receiver(name)
    if not recv:
        return None
    if recv.split(".")[0] in _HTTP_MODULES or _HTTP_RECEIVER.search(recv.rsplit(".", 1)[-1]):
        if meth in {"request", "stream", "send"}:
            verb = call.args[0] if call.args else mod.keyword(call, "method")
            if isinstance(verb, ast.Constant) and isinstance(verb.value, str):
                return verb.value.lower()
            return "request"
        return meth
    return None


def is_http_call(mod: PyModule, call: ast.Call) -> bool:
    """Whether `call` is an outbound HTTP request."""
    return http_method(mod, call) is not None


def is_spawn(mod: PyModule, call: ast.Call) -> bool:
    """Whether `call` starts a process."""
    name = mod.call_name(call)
    return name in SPAWN_CALLS or (name.startswith("os.exec") or name.startswith("os.spawn"))


def decorator_name(mod: PyModule, dec: ast.expr) -> str:
    """Qualified name of a decorator, with or without call parentheses."""
    return mod.qualname(dec.func if isinstance(dec, ast.Call) else dec) or ""


def retry_decorator(mod: PyModule, fn: FunctionNode) -> ast.expr | None:
    """The retry decorator on `fn` (tenacity, backoff, stamina, retrying…), if any."""
    for dec in fn.decorator_list:
        name = decorator_name(mod, dec)
        if name in RETRY_DECORATORS or last(name) in {"retry", "on_exception", "retry_async", "async_retry"}:
            return dec
    return None


_MESSAGE_NAME = re.compile(r"(messages|history|conversation|transcript|chat_log|turns|context|msgs|dialog)", re.I)


def is_message_list(mod: PyModule, expr: ast.AST) -> bool:
    """Whether an expression names a message history (`messages`, `self.history`, `state["messages"]`)."""
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant):
        return isinstance(expr.slice.value, str) and bool(_MESSAGE_NAME.search(expr.slice.value))
    dotted = mod.dotted(expr)
    return bool(dotted) and bool(_MESSAGE_NAME.search(last(dotted)))


def target_name(mod: PyModule, expr: ast.AST) -> str:
    """A printable name for an assignment target or receiver."""
    return mod.dotted(expr) or mod.segment(expr)


# ---------------------------------------------------------------- tools and model-supplied values
# Appended section (C4–C7): which functions are tools, who calls a function, which names carry model output.
from harness_audit.static.lang.python import PyProject  # noqa: E402  # appended section; earlier lines stay untouched

_TOOL_DECORATOR_NAMES = {"tool", "function_tool", "tool_plain", "register_tool", "call_tool", "kernel_function",
                         "ai_function"}
_TOOL_METHOD_NAMES = {"forward", "run", "_run", "arun", "_arun", "execute", "aexecute", "__call__", "call", "invoke",
                      "ainvoke"}
_TOOL_CONTAINER_NAME = re.compile(r"tool", re.I)
# generic table names count only in a module that visibly handles model tool calls
_GENERIC_CONTAINER_NAME = re.compile(r"(^|_)(handlers?|dispatch\w*|registry|functions?|actions?|commands?|"
                                     r"available_functions|function_map)($|_)", re.I)
_TOOL_CONTEXT_TEXT = ("tool_call", "function_call", "tool_use", "toolCall")
_TOOL_FACTORY_NAMES = {"Tool", "FunctionTool", "StructuredTool", "register_tool", "add_tool", "tool",
                       "function_tool"}
_TOOL_FACTORY_METHODS = {"from_function", "from_defaults"}
_TOOL_FACTORY_SHORT = _TOOL_FACTORY_NAMES | _TOOL_FACTORY_METHODS
TOOL_DISPATCH_NAME = re.compile(r"(execute|run|call|invoke|dispatch|handle|process)_?(tool|function|action)"
                                r"|tool_?(call|exec|dispatch)", re.I)
"""Function names that dispatch a model's tool call (`execute_tool`, `handle_tool_call`, `dispatch_tool`)."""
_NON_MODEL_PARAMS = {"self", "cls", "ctx", "context", "run_context", "wrapper", "config", "state", "runtime", "deps",
                     "tool_context", "callbacks", "run_manager", "timeout", "logger", "session", "client"}
_DISPATCH_PARAMS = {"args", "arguments", "tool_args", "tool_arguments", "tool_input", "input", "params", "parameters",
                    "kwargs", "tool_call", "call", "tc", "function_call", "input_json", "raw_args", "raw_arguments"}
MODEL_ARGS_TEXT = re.compile(
    r"\.arguments\b|\[['\"]arguments['\"]\]|\.get\(['\"]arguments['\"]|partial_json|\binput_json\b"
    r"|\b(tool_?call|tool_?use|tc|block|content_block|function_call)(\.input\b|\[['\"]input['\"]\])"
)
"""Source text that reads the arguments of a model's tool call (`tc.function.arguments`, `block.input`)."""
_TOOL_CALLS_ITER = re.compile(r"\btool_calls\b|\btool_uses?\b|\bfunction_calls\b")
# words that every match of `MODEL_ARGS_TEXT` / `_TOOL_CALLS_ITER` contains (keep them in step with the patterns):
# a file with none of them needs no per-node search
_MODEL_ARGS_WORDS = ("arguments", "partial_json", "input")
_TOOL_CALLS_WORDS = ("tool_calls", "tool_use", "function_calls")


def source_text(mod: PyModule, node: ast.AST) -> str:
    """The source of `node` (kept for the rules that call it; the same as `PyModule.segment`)."""
    return mod.segment(node)


class _ProjectFacts:
    """Per-project facts computed lazily and kept for one project at a time."""

    __slots__ = ("project", "callers", "callers_by_fn", "tools", "taint")

    def __init__(self, project: PyProject) -> None:
        self.project = project
        self.callers: dict[str, list[tuple[PyModule, ast.Call]]] | None = None
        self.callers_by_fn: dict[tuple[int, bool], list[tuple[PyModule, ast.Call]]] = {}
        self.tools: set[tuple[str, str]] | None = None
        self.taint: dict[tuple[int, int], frozenset[str]] = {}


_FACTS: list[_ProjectFacts] = []


def _facts(project: PyProject) -> _ProjectFacts:
    if _FACTS and _FACTS[0].project is project:
        return _FACTS[0]
    _FACTS[:] = [_ProjectFacts(project)]
    return _FACTS[0]


_INITIALISERS = {"__init__", "__post_init__", "__new__"}


def reached_only_from_initialisers(project: PyProject, mod: PyModule, fn: FunctionNode, depth: int = 4) -> bool:
    """Whether every chain of project calls into `fn` (up to `depth` hops) starts in a constructor (`__init__`,
    `__post_init__`): the function runs while objects are built, not during a turn. False when the function has
    no caller the call graph resolves, a caller is at module level, or a chain is longer or cyclic. A call the
    graph cannot resolve (through an object of unknown type) is not seen."""
    known: dict[int, bool] = {}

    def walk(m: PyModule, f: FunctionNode, left: int) -> bool:
        if f.name in _INITIALISERS:
            return True
        if id(f) in known:
            return known[id(f)]  # a function met twice keeps its answer; one still being judged is a cycle
        if left == 0:
            return False
        known[id(f)] = False
        callers = callers_of(project, f, m)
        answer = bool(callers) and all((cfn := cmod.enclosing_function(call)) is not None and
                                       walk(cmod, cfn, left - 1) for cmod, call in callers)
        known[id(f)] = answer
        return answer

    return fn.name not in _INITIALISERS and walk(mod, fn, depth)


def callers_of(project: PyProject, fn: FunctionNode, mod: PyModule | None = None) -> list[tuple[PyModule, ast.Call]]:
    """Call sites in the project that `PyProject.resolve_call` resolves to `fn` (candidates indexed by name once).

    Given `fn`'s module, a method is also matched through a local instance: `inv = Invocation(...); inv.run()`.
    The list is cached (taint asks again at each depth): callers must not change it."""
    facts = _facts(project)
    key = (id(fn), mod is not None)
    known = facts.callers_by_fn.get(key)
    if known is not None:
        return known
    owner = mod.parent(fn) if mod is not None else None
    cls = owner.name if isinstance(owner, ast.ClassDef) else None
    out: list[tuple[PyModule, ast.Call]] = []
    for cmod, call in _calls_by_name(project).get(fn.name, []):
        refs = project.resolve_call(cmod, call)
        matched = any(ref.node is fn for ref in refs)
        if matched or (cls is not None and not refs and _instance_of(cmod, call, cls)):
            out.append((cmod, call))
    facts.callers_by_fn[key] = out
    return out


def dispatch_callers_of(project: PyProject, fn: FunctionNode, mod: PyModule) -> list[tuple[PyModule, ast.Call]]:
    """Calls that may run the method `fn` by dynamic dispatch: `x.name(...)` where nothing resolves `x`, as when
    a loop object is picked from a registry and handed in (`agent_loop.predict_step(...)`). An over-approximation
    by method name, for exemptions only ("a caller handles this"); empty when `fn` is not a method."""
    if not isinstance(mod.parent(fn), ast.ClassDef):
        return []
    return [(cmod, call) for cmod, call in _calls_by_name(project).get(fn.name, [])
            if isinstance(call.func, ast.Attribute) and not project.resolve_call(cmod, call)]


def _calls_by_name(project: PyProject) -> dict[str, list[tuple[PyModule, ast.Call]]]:
    """Every call of the project by the last name it calls (built once per project)."""
    facts = _facts(project)
    if facts.callers is None:
        by_name: dict[str, list[tuple[PyModule, ast.Call]]] = {}
        for cmod in project.modules.values():
            for short in cmod.called_names():
                by_name.setdefault(short, []).extend((cmod, call) for call in cmod.calls_to((short,)))
        facts.callers = by_name
    return facts.callers


def _instance_of(mod: PyModule, call: ast.Call, cls: str) -> bool:
    """Whether `call` is `v.method(...)` with `v` assigned from `cls(...)` in the same function, or
    `self.f.method(...)` where every assignment of `self.f` in the enclosing class that makes an object makes
    a `cls(...)` (a field set to `None` first and built later still holds only that class)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if cls not in mod.called_names():
        return False  # `cls(...)` is called nowhere in the module, so no local holds an instance
    recv = func.value
    if isinstance(recv, ast.Attribute) and isinstance(recv.value, ast.Name) and recv.value.id == "self":
        return _field_holds(mod, call, recv.attr, cls)
    if not isinstance(recv, ast.Name):
        return False
    fn = mod.enclosing_function(call)
    if fn is None:
        return False
    for value in assigned_values(mod, fn).get(func.value.id, []):
        if isinstance(value, ast.Call) and last(mod.dotted(value.func) or "") == cls:
            return True
    return False


def _field_holds(mod: PyModule, call: ast.Call, field: str, cls: str) -> bool:
    klass = mod.enclosing_class(call)
    if klass is None:
        return False
    made = []
    for node in ast.walk(klass):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None and any(
                isinstance(t, ast.Attribute) and t.attr == field and isinstance(t.value, ast.Name) and
                t.value.id == "self" for t in (node.targets if isinstance(node, ast.Assign) else [node.target])):
            if isinstance(node.value, ast.Constant) and node.value.value is None:
                continue
            made.append(isinstance(node.value, ast.Call) and last(mod.dotted(node.value.func) or "") == cls)
    return bool(made) and all(made)


def _registered_tools(project: PyProject) -> set[tuple[str, str]]:
    """(module path, function name) of every function the project registers as a tool."""
    facts = _facts(project)
    if facts.tools is not None:
        return facts.tools
    out: set[tuple[str, str]] = set()
    for mod in project.modules.values():
        names: list[ast.expr] = []
        tool_context = any(word in mod.source for word in _TOOL_CONTEXT_TEXT)
        for node in [*mod.nodes(ast.Assign), *mod.nodes(ast.AnnAssign)]:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if not isinstance(node.value, ast.Dict | ast.List | ast.Tuple | ast.Set | ast.Name | ast.Attribute):
                continue
            for t in targets:
                base = t.value if isinstance(t, ast.Subscript) else t
                tname = base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else ""
                if not tname or not (_TOOL_CONTAINER_NAME.search(tname) or
                                     (tool_context and _GENERIC_CONTAINER_NAME.search(tname))):
                    continue
                if isinstance(t, ast.Subscript):
                    names.append(node.value)
                elif isinstance(node.value, ast.Dict):
                    names.extend(v for v in node.value.values if v is not None)
                elif isinstance(node.value, ast.List | ast.Tuple | ast.Set):
                    names.extend(node.value.elts)
        for call in _tool_registering_calls(mod):
            func = call.func
            short = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            factory = short in _TOOL_FACTORY_NAMES or (
                short in _TOOL_FACTORY_METHODS and isinstance(func, ast.Attribute)
                and "Tool" in (mod.dotted(func.value) or ""))
            for kw in call.keywords:
                if kw.arg == "tools" and isinstance(kw.value, ast.List | ast.Tuple):
                    names.extend(kw.value.elts)
                elif kw.arg in {"func", "fn", "function", "handler", "coroutine"} and factory:
                    names.append(kw.value)
            if factory:
                names.extend(call.args)
        for expr in names:
            if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
                out.add((mod.path, expr.attr))
            elif isinstance(expr, ast.Name):
                if mod.local_functions(expr.id):
                    out.add((mod.path, expr.id))
                    continue
                owner, _, fname = mod.imports.get(expr.id, "").rpartition(".")
                other = project.module(owner) if owner else None
                if other is not None:
                    out.add((other.path, fname))
    facts.tools = out
    return out


def _tool_registering_calls(mod: PyModule) -> list[ast.Call]:
    """The calls `_registered_tools` reads: tool factories (`Tool(fn)`, `X.from_function(fn)`) and calls passing
    `tools=`, each once (the set of names they register does not depend on the order)."""
    calls = {id(call): call for call in mod.calls_to(_TOOL_FACTORY_SHORT)}
    for kw in mod.nodes(ast.keyword, any_order=True):
        if kw.arg == "tools":
            owner = mod.parent(kw)
            if isinstance(owner, ast.Call):
                calls[id(owner)] = owner
    return list(calls.values())


def is_tool_function(mod: PyModule, fn: FunctionNode, project: PyProject | None = None) -> bool:
    """Whether the model chooses `fn`'s arguments: a `@tool`-style decorator, a `Tool` class's run method,
    or (given the project) a function registered in a tool table or passed as `tools=[...]`."""
    for dec in fn.decorator_list:
        name = decorator_name(mod, dec)
        if last(name) in _TOOL_DECORATOR_NAMES or (last(name) == "register" and "tool" in receiver(name).lower()):
            return True
    owner = mod.parent(fn)
    if isinstance(owner, ast.ClassDef) and fn.name in _TOOL_METHOD_NAMES:
        bases = [last(mod.dotted(b) or "") for b in owner.bases]
        if owner.name.endswith("Tool") or any(b.endswith("Tool") for b in bases):
            return True
    return project is not None and (mod.path, fn.name) in _registered_tools(project)


def _params(fn: FunctionNode) -> list[str]:
    a = fn.args
    names = [p.arg for p in [*a.posonlyargs, *a.args]]
    if a.vararg:
        names.append(a.vararg.arg)
    names.extend(p.arg for p in a.kwonlyargs)
    if a.kwarg:
        names.append(a.kwarg.arg)
    return names


def _carries(mod: PyModule, expr: ast.AST, tainted: frozenset[str] | set[str]) -> bool:
    if tainted and any(isinstance(n, ast.Name) and n.id in tainted for n in subtree(expr)):
        return True
    return mod.mentions(_MODEL_ARGS_WORDS) and bool(MODEL_ARGS_TEXT.search(source_text(mod, expr)))


def _target_names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    return [n.id for n in subtree(target) if isinstance(n, ast.Name)]


_Flow = tuple[list[str], set[str], bool]
_FlowSource = tuple[list[str], ast.AST, bool]
_FLOWS: dict[int, tuple[PyModule, dict[FunctionNode, list[_FlowSource]], dict[FunctionNode, list[_Flow]]]] = {}


def _flows(mod: PyModule, fn: FunctionNode) -> list[_Flow]:
    """Assignments in `fn` as (targets, names read, carries tool-call arguments by itself).

    The module's assignments are grouped per function once, from the node indexes; the values of a function's
    assignments are read when its flows are first asked for (taint reaches few functions of a module)."""
    hit = _FLOWS.get(id(mod))
    if hit is None or hit[0] is not mod:
        read: dict[FunctionNode, list[_Flow]] = {}
        hit = (mod, _flow_sources(mod), read)
        if len(_FLOWS) > 8192:
            _FLOWS.clear()
        _FLOWS[id(mod)] = hit
    flows = hit[2].get(fn)
    if flows is None:
        flows = hit[2][fn] = []
        for targets, value, is_iter in hit[1].get(fn, []):
            # the texts are read only in modules where the patterns occur at all (most modules of a tree have none)
            always = (mod.mentions(_MODEL_ARGS_WORDS) and bool(MODEL_ARGS_TEXT.search(source_text(mod, value)))) or (
                is_iter and mod.mentions(_TOOL_CALLS_WORDS) and bool(_TOOL_CALLS_ITER.search(source_text(mod, value))))
            flows.append((targets, {n.id for n in subtree(value) if isinstance(n, ast.Name)}, always))
    return flows


def _flow_sources(mod: PyModule) -> dict[FunctionNode, list[_FlowSource]]:
    """Per function: each assignment's target names, assigned value and whether it binds loop items."""
    per_fn: dict[FunctionNode, list[_FlowSource]] = {}
    sources: list[tuple[ast.AST, list[str], ast.AST, bool]] = []
    for a in mod.nodes(ast.Assign):
        sources.append((a, [n for t in a.targets for n in _target_names(t)], a.value, False))
    for kind in (ast.AnnAssign, ast.AugAssign, ast.NamedExpr):
        for b in mod.nodes(kind):
            if b.value is not None:
                sources.append((b, _target_names(b.target), b.value, False))
    for kind in (ast.For, ast.AsyncFor, ast.comprehension):
        for c in mod.nodes(kind):
            sources.append((c, _target_names(c.target), c.iter, True))
    for w in mod.nodes(ast.withitem):
        if w.optional_vars is not None:
            sources.append((w, _target_names(w.optional_vars), w.context_expr, False))
    for node, targets, value, is_iter in sources:
        if not targets:
            continue
        owner = mod.enclosing_function(node)
        if owner is None:
            continue
        per_fn.setdefault(owner, []).append((targets, value, is_iter))
    return per_fn


def model_tainted_names(project: PyProject, mod: PyModule, fn: FunctionNode, depth: int = 0) -> frozenset[str]:
    """Names inside `fn` that carry model-chosen values: tool parameters, the decoded arguments of a tool
    call, parameters that callers (two hops up) fill from such values, and whatever is assigned from them."""
    facts = _facts(project)
    key = (id(fn), depth)
    cached = facts.taint.get(key)
    if cached is not None:
        return cached
    facts.taint[key] = frozenset()  # a recursive call during the computation sees "nothing tainted"
    params = _params(fn)
    tainted: set[str] = set()
    if is_tool_function(mod, fn, project):
        tainted.update(p for p in params if p not in _NON_MODEL_PARAMS)
    elif TOOL_DISPATCH_NAME.search(fn.name):
        tainted.update(p for p in params if p in _DISPATCH_PARAMS)
    outer = mod.enclosing_function(fn)
    if outer is not None:
        tainted |= model_tainted_names(project, mod, outer, depth)
    if depth < 2:
        is_method = isinstance(mod.parent(fn), ast.ClassDef) and bool(params) and params[0] in {"self", "cls"}
        positional = params[1:] if is_method else params
        for cmod, call in callers_of(project, fn, mod)[:20]:
            cfn = cmod.enclosing_function(call)
            ctaint = model_tainted_names(project, cmod, cfn, depth + 1) if cfn is not None else frozenset()
            for i, arg in enumerate(call.args):
                if i < len(positional) and not isinstance(arg, ast.Starred) and _carries(cmod, arg, ctaint):
                    tainted.add(positional[i])
            for kw in call.keywords:
                if kw.arg in params and _carries(cmod, kw.value, ctaint):
                    tainted.add(kw.arg)
    flows = _flows(mod, fn)
    for _ in range(4):
        before = len(tainted)
        for targets, reads, always in flows:
            if always or not reads.isdisjoint(tainted):
                tainted.update(targets)
        if len(tainted) == before:
            break
    result = frozenset(tainted)
    facts.taint[key] = result
    return result


def is_model_sourced(project: PyProject, mod: PyModule, expr: ast.AST) -> bool:
    """Whether `expr` carries a model-chosen value (see `model_tainted_names`)."""
    fn = mod.enclosing_function(expr)
    tainted = model_tainted_names(project, mod, fn) if fn is not None else frozenset[str]()
    return _carries(mod, expr, tainted)


# ---------------------------------------------------------------- test code
# Appended section (C8–C11): test suites run operations on purpose in ways a harness must not.
_TEST_FILE = re.compile(r"(^|/)(tests?|testing)/|(^|/)(test_[^/]*|[^/]*_test|conftest)\.py$")


_TEST_MODULES: dict[int, tuple[PyModule, bool]] = {}


def is_test_module(mod: PyModule) -> bool:
    """Whether `mod` is test code (a `tests/` directory, `test_*.py`, `conftest.py`, or a module importing pytest).

    Memoised per module: most rules ask it of every module."""
    hit = _TEST_MODULES.get(id(mod))
    if hit is not None and hit[0] is mod:
        return hit[1]
    found = bool(_TEST_FILE.search(mod.path)) or "pytest" in mod.imports
    if len(_TEST_MODULES) > 8192:
        _TEST_MODULES.clear()
    _TEST_MODULES[id(mod)] = (mod, found)
    return found


# ---------------------------------------------------------------- local data flow (C4–C7)
_ASSIGNED: dict[int, tuple[FunctionNode, dict[str, list[ast.AST]]]] = {}


def assigned_values(mod: PyModule, fn: FunctionNode) -> dict[str, list[ast.AST]]:
    """Name → values assigned, aug-assigned or appended to it in `fn` (cached per function)."""
    hit = _ASSIGNED.get(id(fn))
    if hit is not None and hit[0] is fn:
        return hit[1]
    out: dict[str, list[ast.AST]] = {}
    for node in mod.walk(fn):
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    out.setdefault(t.id, []).append(node.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr in {"append", "extend", "write"} and isinstance(node.func.value, ast.Name) and node.args:
            out.setdefault(node.func.value.id, []).append(node.args[0])
    if len(_ASSIGNED) > 4096:
        _ASSIGNED.clear()
    _ASSIGNED[id(fn)] = (fn, out)
    return out


def derivation_text(mod: PyModule, fn: FunctionNode | None, expr: ast.AST, depth: int = 3) -> str:
    """Source of `expr` plus the values assigned (or appended) to the names it reads, a few steps back."""
    parts = [source_text(mod, expr)]
    if fn is None or depth == 0:
        return "\n".join(parts)
    values = assigned_values(mod, fn)
    for name in {n.id for n in subtree(expr) if isinstance(n, ast.Name)}:
        for value in values.get(name, []):
            if value is not expr:
                parts.append(derivation_text(mod, fn, value, depth - 1))
    return "\n".join(parts)


# ---------------------------------------------------------------- agent projects
# Appended section (C8–C11): a function table means "tools" only where a model is driven at all.
_LLM_PACKAGES = ("openai", "anthropic", "litellm", "langchain", "langchain_core", "langgraph", "pydantic_ai",
                 "smolagents", "agents", "google.genai", "google.generativeai", "mistralai", "ollama", "cohere",
                 "groq", "mcp", "autogen", "crewai", "llama_index", "instructor", "dspy")
_AGENT_PROJECTS: list[tuple[PyProject, bool]] = []


def is_agent_project(project: PyProject) -> bool:
    """Whether the project imports (or is) an LLM SDK or agent framework (computed once per project)."""
    if _AGENT_PROJECTS and _AGENT_PROJECTS[0][0] is project:
        return _AGENT_PROJECTS[0][1]
    found = any(mod.module_name.split(".")[0] in _LLM_PACKAGES or
                any(target.split(".")[0] in _LLM_PACKAGES or target.startswith(_LLM_PACKAGES)
                    for target in mod.imports.values())
                for mod in project.modules.values())
    _AGENT_PROJECTS[:] = [(project, found)]
    return found


# ---------------------------------------------------------------- calls by name
# Appended section (C1–C3, C15): calls looked up by name from the module's own call index (`PyModule.calls_to`).


def calls_named(mod: PyModule, project: PyProject,
                names: tuple[str, ...] | list[str] | set[str] | frozenset[str]) -> list[ast.Call]:
    """Calls in `mod` whose called name ends in one of `names` (`self.client.post` → `post`), in source order
    (calls at one position in the order of `names`). `project` is kept for the callers' convenience."""
    found = [call for name in names for call in mod.calls_to((name,))]
    found.sort(key=lambda c: (c.lineno, c.col_offset))
    return found


def call_names(mod: PyModule, project: PyProject) -> frozenset[str]:
    """Every last name called in `mod`."""
    return frozenset(mod.called_names())


# ---------------------------------------------------------------- wider tool registration (C5, C7)
# Appended section: tool tables `is_tool_function` does not see — nested spec dicts (`{"fn": f, ...}`), methods
# that return a table of bound methods (`def handlers(self): return {"x": self.x}`), and `Tool(..., obj.method)`.
_SPEC_FN_KEYS = {"fn", "func", "function", "handler", "callable", "impl", "callback", "run", "coroutine"}
_TABLE_METHOD_NAME = re.compile(r"(^|_)(tools?|handlers?|tool_map|tool_table|registry|dispatch\w*|actions?)$", re.I)
_WIDE_TOOLS: list[tuple[PyProject, set[tuple[str, str]]]] = []


def _table_entries(mod: PyModule, project: PyProject) -> list[tuple[ast.expr, FunctionNode | None]]:
    """Function references placed in tool tables the base registry scan skips, with the function holding them."""
    out: list[tuple[ast.expr, FunctionNode | None]] = []
    for node in [*mod.nodes(ast.Assign), *mod.nodes(ast.AnnAssign)]:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if not isinstance(node.value, ast.Dict) or not any(
                _TOOL_CONTAINER_NAME.search(target_name(mod, t) or "") for t in targets):
            continue
        for spec in node.value.values:
            if isinstance(spec, ast.Dict):
                out.extend((v, mod.enclosing_function(node)) for k, v in zip(spec.keys, spec.values, strict=True)
                           if isinstance(k, ast.Constant) and k.value in _SPEC_FN_KEYS)
    for fn in mod.functions():
        if not _TABLE_METHOD_NAME.search(fn.name):
            continue
        for node in mod.walk(fn):
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Dict | ast.List | ast.Tuple):
                elts = node.value.values if isinstance(node.value, ast.Dict) else node.value.elts
                out.extend((e, fn) for e in elts if isinstance(e, ast.Attribute | ast.Name))
    for call in mod.calls_to(_TOOL_FACTORY_NAMES):
        func = call.func
        short = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if short in _TOOL_FACTORY_NAMES:
            args = [*call.args, *(kw.value for kw in call.keywords
                                  if kw.arg in {"func", "fn", "function", "handler", "coroutine"})]
            out.extend((a, mod.enclosing_function(call)) for a in args
                       if isinstance(a, ast.Attribute) and isinstance(a.value, ast.Name) and a.value.id != "self")
    return out


def annotation_class(mod: PyModule, fn: FunctionNode | None, name: str) -> str:
    """The class name a parameter of `fn` is annotated with (`ws: Workspace` → `Workspace`), or ``."""
    if fn is None:
        return ""
    for p in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]:
        if p.arg == name and p.annotation is not None:
            return last(mod.dotted(p.annotation) or "")
    return ""


def wide_registered_tools(project: PyProject) -> set[tuple[str, str]]:
    """(module path, function name) of functions registered as tools in tables `is_tool_function` misses (cached)."""
    if _WIDE_TOOLS and _WIDE_TOOLS[0][0] is project:
        return _WIDE_TOOLS[0][1]
    out: set[tuple[str, str]] = set()
    for mod in project.modules.values():
        for expr, holder in _table_entries(mod, project):
            if isinstance(expr, ast.Name):
                if mod.local_functions(expr.id):
                    out.add((mod.path, expr.id))
                    continue
                owner, _, fname = mod.imports.get(expr.id, "").rpartition(".")
                other = project.module(owner) if owner else None
                if other is not None:
                    out.add((other.path, fname))
            elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
                if expr.value.id == "self":
                    out.add((mod.path, expr.attr))
                    continue
                cls = annotation_class(mod, holder, expr.value.id)
                if cls and mod.method(cls, expr.attr) is not None:
                    out.add((mod.path, expr.attr))
                    continue
                owner, _, cname = mod.imports.get(cls, "").rpartition(".")
                other = project.module(owner) if owner else None
                if other is not None and other.method(cname, expr.attr) is not None:
                    out.add((other.path, expr.attr))
    _WIDE_TOOLS[:] = [(project, out)]
    return out


def is_tool_function_wide(mod: PyModule, fn: FunctionNode, project: PyProject) -> bool:
    """`is_tool_function`, plus functions registered in nested spec tables, handler-table methods and
    `Tool(..., obj.method)` registrations."""
    return is_tool_function(mod, fn, project) or (mod.path, fn.name) in wide_registered_tools(project)


def model_sourced_wide(project: PyProject, mod: PyModule, expr: ast.AST) -> bool:
    """`is_model_sourced`, plus values derived from the parameters of a `is_tool_function_wide` tool, directly or
    passed one call down from one."""
    if is_model_sourced(project, mod, expr):
        return True
    fn = mod.enclosing_function(expr)
    if fn is None:
        return False
    if not _WIDE_TAINT or _WIDE_TAINT[0][0] is not project:
        _WIDE_TAINT[:] = [(project, {})]
    cache = _WIDE_TAINT[0][1]
    names = cache.get(id(fn))
    if names is None:
        names = cache[id(fn)] = _wide_taint(project, mod, fn)
    return bool(names) and _carries(mod, expr, names)


_WIDE_TAINT: list[tuple[PyProject, dict[int, frozenset[str]]]] = []


def _wide_taint(project: PyProject, mod: PyModule, fn: FunctionNode) -> frozenset[str]:
    tainted: set[str] = set()
    params = _params(fn)
    if is_tool_function_wide(mod, fn, project):
        tainted.update(p for p in params if p not in _NON_MODEL_PARAMS)
    else:
        is_method = isinstance(mod.parent(fn), ast.ClassDef) and bool(params) and params[0] in {"self", "cls"}
        positional = params[1:] if is_method else params
        for cmod, call in callers_of(project, fn)[:20]:
            cfn = cmod.enclosing_function(call)
            if cfn is None or not is_tool_function_wide(cmod, cfn, project):
                continue
            ctaint = {p for p in _params(cfn) if p not in _NON_MODEL_PARAMS}
            for i, arg in enumerate(call.args):
                if i < len(positional) and not isinstance(arg, ast.Starred) and _carries(cmod, arg, ctaint):
                    tainted.add(positional[i])
            tainted.update(kw.arg for kw in call.keywords if kw.arg in params and _carries(cmod, kw.value, ctaint))
    if not tainted:
        return frozenset()
    flows = _flows(mod, fn)
    for _ in range(4):
        before = len(tainted)
        for targets, reads, always in flows:
            if always or not reads.isdisjoint(tainted):
                tainted.update(targets)
        if len(tainted) == before:
            break
    return frozenset(tainted)
