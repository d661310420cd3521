"""C10 · Cancellation propagation — TypeScript/JavaScript rules.

Shapes detected:
- `request-ignores-abort-signal`: `fetch` / undici / axios / got / ky (or a client made with `axios.create`,
  `got.extend`, `ky.create`) or an SDK model call (`openai`, `@anthropic-ai/sdk`, the `ai` package) issued without
  the `AbortSignal` the surrounding code has.
- `spawn-ignores-abort-signal`: a child process started where an `AbortSignal` is available, with no `signal`
  option and no abort listener that kills it; or a synchronous `execSync`/`spawnSync` that blocks the abort itself.
- `abort-kills-only-shell`: a shell child (`exec`, `shell: true`, `bash -c`) stopped by `child.kill()` or the
  `signal` option alone, with no `detached: true` + `process.kill(-child.pid)`: the commands the shell started live on.
- `timer-cleared-on-success-only`: `const t = setTimeout(...)` cleared after an `await` but not in `finally`/`catch`.
- `race-timeout-never-cleared`: `Promise.race([work, new Promise((_, r) => setTimeout(r, ms))])` whose timer
  nothing can clear.
- `model-client-takes-no-signal`: a model request (SDK call, or `fetch`/ky/axios/got to a model endpoint) in a client
  function or method that takes no signal at all, called from code that owns one (`this.client.stream(req)` from an
  agent whose `stop()` aborts its controller): stop never reaches the request in flight.
- `backoff-sleep-ignores-abort-signal`: a retry or polling loop whose wait (`await sleep(ms)`, a `setTimeout` promise)
  does not get the available signal, in a loop that never checks it.

A signal counts as available when a parameter, a destructured option, a local `AbortController`, or a controller
(or a signal field) the class owns provides it, or a context object carries one: a parameter or local whose declared
type has a `signal: AbortSignal` member (also `RunContext<T>` of `@openai/agents`, LangChain's `RunnableConfig`, MCP's
`RequestHandlerExtra`), a local made by a function returning such a type, or a parameter or local from which the
module's other functions read `ctx.signal`; for model calls, a web route's `Request` too. Three more sources: the
per-call context a tool entry does not take although its dispatcher passes `{ signal }` there or the other entries
of the same slot read it (`handler({ url })` beside `handler({ cmd }, { signal })`); the ambient run context of an
`AsyncLocalStorage` whose type carries a signal, in tool code of a module that reads it elsewhere (`const { signal }
= current()`); and a controller held outside the calling function (a module variable, a store's state, a
component's ref) that another function aborts on stop (`stop() { useRun.getState().controller?.abort() }`). A tool callback of the `ai`
package (`execute(args, { abortSignal })`) or of an MCP server (`(args, extra) => …`) that does not take the
framework's signal is reported as suspected.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from harness_audit.findings import CheckId, Verdict
from harness_audit.static.lang.typescript import FUNCTION_TYPES, LOOP_TYPES, TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts import _agent_idioms as ai
from harness_audit.static.rules_ts import _ts_idioms as ts
from harness_audit.static.rules_ts._agent_idioms import memo

_ABORT_WIRING = re.compile(r"addEventListener\(\s*['\"]abort|\.onabort\s*=|\.on\(\s*['\"]abort|"
                           r"\b(abortSignal|signal)\s*\)\s*\.then|setMaxListeners")
_GROUP_KILL = re.compile(r"process\.kill\(\s*-|\bkill\(\s*-\s*[\w.(]|treeKill|tree-kill|killTree|kill-tree|pidtree|"
                         r"ps-tree|taskkill[^\n]{0,80}/[tT]\b|killProcessGroup|killGroup|killProcessTree|terminate-tree")
_SIGNAL_WORDS = ("ignal", "AbortController", "'ai'", '"ai"', "modelcontextprotocol", "Request", "Config", "Context")
_REQUEST_SHORTS = ("fetch", "request", "get", "post", "put", "patch", "delete", "head", "options", "axios", "got",
                   "ky", "create", "stream", "parse", "generateContent", "generateContentStream", "generateText", "streamText", "generateObject", "streamObject",
                   "embed", "embedMany", "invoke", "batch", "callTool", "send")
_LANGCHAIN_CALLS = {"invoke", "stream", "batch"}
"""LangChain model methods: `llm.invoke(messages, { signal })` takes its call options second."""
def _may_have_signal(text: str) -> bool:
    """A cheap first filter: the module mentions a signal, a controller, or a framework that hands one over."""
    return any(k in text for k in _SIGNAL_WORDS)


def _short(mod: TsModule, node: Node | None, limit: int = 60) -> str:
    text = " ".join(mod.node_text(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _consumed(call: Node) -> bool:
    """Whether the call's result is used (awaited, returned, assigned, passed on), not fired and forgotten."""
    parent = call.parent
    while parent is not None and parent.type in ("parenthesized_expression", "as_expression", "non_null_expression"):
        parent = parent.parent
    if parent is None or parent.type == "expression_statement":
        return False
    return not (parent.type == "unary_expression" and parent.text is not None and parent.text.startswith(b"void"))


_CLIENT_FACTORIES = {"axios": ("create",), "got": ("extend",), "ky": ("create", "extend")}
_CLIENT_VERBS = {"get", "post", "put", "patch", "delete", "head", "options", "request", "postForm", "putForm"}


def _client_instances(mod: TsModule) -> dict[str, str]:
    """Names bound to a configured HTTP client (`const api = axios.create(...)`, `got.extend(...)`,
    `ky.create(...)`, also as `this.api`), mapped to the client package."""

    def build() -> dict[str, str]:
        out: dict[str, str] = {}
        if not any(w in mod.text for w in ("axios", "got", "ky")):
            return out
        for call in ts.calls_named(mod, "create", "extend"):
            head, _, tail = mod.call_name(call).partition(".")
            origin = ts.imported_from(mod, head)
            if tail not in _CLIENT_FACTORIES.get(origin, ()):
                continue
            parent = call.parent
            while parent is not None and parent.type in ("await_expression", "parenthesized_expression",
                                                         "as_expression"):
                parent = parent.parent
            if parent is None:
                continue
            if parent.type == "variable_declarator":
                target = parent.child_by_field_name("name")
                if target is not None and target.type == "identifier":
                    out[mod.node_text(target)] = origin
            elif parent.type == "assignment_expression":
                out[mod.dotted(parent.child_by_field_name("left"))] = origin
            elif parent.type in ("public_field_definition", "field_definition"):
                field = parent.child_by_field_name("name") or parent.child_by_field_name("property")
                out[f"this.{mod.node_text(field)}"] = origin
        return out

    return ts.cached(mod, "c10_clients", build)


def _request_kind(mod: TsModule, call: Node) -> tuple[str, int] | None:
    """(`what`, index of the options argument) for an outbound request or model call."""
    client = ts.http_request(mod, call)
    name = mod.call_name(call)
    if client is None and "." in name:
        head, verb = name.rsplit(".", 1)
        instance = _client_instances(mod).get(head)
        if instance is not None and verb in _CLIENT_VERBS:
            if instance == "axios":
                return name, 2 if verb in ("post", "put", "patch", "postForm", "putForm") else (0 if verb == "request"
                                                                                                else 1)
            return name, 1
    if client is not None:
        verb = ts.last(name)
        if client == "axios":
            if name == name.split(".", 1)[0] or verb == "request":
                return name, 0
            return name, 2 if verb in ("post", "put", "patch") else 1
        return name, 1
    if ts.is_model_call(mod, call):
        return name, 0 if "." not in name else 1
    tail = ts.last(name)
    if tail in _LANGCHAIN_CALLS and ai.is_model_call(mod, call):
        return name, 1
    if tail == "callTool" and "." in name and "modelcontextprotocol" in mod.text:
        return name, 2  # MCP `client.callTool(params, resultSchema, { signal })`
    return None


def _is_model(mod: TsModule, call: Node) -> bool:
    return ts.is_model_call(mod, call) or ai.is_model_call(mod, call)


_CONTEXT_SIGNAL = re.compile(r"(?:^|[^\w$.])([A-Za-z_$][\w$]*)\??\.(signal|abortSignal|cancelSignal)\b")
_SIGNAL_MEMBER = re.compile(r"\b(signal|abortSignal|cancelSignal)\??\s*:\s*AbortSignal\b")


@dataclass(frozen=True, slots=True)
class _InferredSignal(ts.SignalRef):
    """A signal member inferred from the parameter's name and position alone: some other function of the module
    reads `<param>.<member>` from a parameter of the same name at the same position (no type says so here)."""

    param: str = ""


def _context_reads(mod: TsModule) -> dict[tuple[int, str], str]:
    """(parameter index, parameter name) → the signal member that some function of the module reads from that
    parameter (`async function postSlack(args, ctx) { … ctx.signal … }` gives `(1, "ctx") → "signal"`)."""

    def build() -> dict[tuple[int, str], str]:
        out: dict[tuple[int, str], str] = {}
        if "ignal" not in mod.text:
            return out
        for fn in mod.functions():
            names = {mod.node_text(ts.param_pattern(p)): i for i, p in enumerate(ts.params(fn))
                     if ts.param_pattern(p).type == "identifier"}
            if not names:
                continue
            for m in _CONTEXT_SIGNAL.finditer(mod.node_text(fn.child_by_field_name("body"))):
                if m.group(1) in names:
                    out.setdefault((names[m.group(1)], m.group(1)), m.group(2))
        return out

    return ts.cached(mod, "c10_context_reads", build)


def _typed_signal(project: TsProject, type_name: str) -> str | None:
    """The abort-signal member of a project interface or object type (`interface ToolContext { signal:
    AbortSignal }` → `signal`), looked up by name across the project once."""
    if not re.fullmatch(r"[A-Z][\w$]*", type_name):
        return None

    def build() -> dict[str, str]:
        out: dict[str, str] = {}
        for other in project.modules.values():
            if "AbortSignal" not in other.text or other.dialect == "javascript":
                continue
            for m in re.finditer(r"\b(?:interface\s+([A-Z][\w$]*)[^{]*\{|type\s+([A-Z][\w$]*)\s*=\s*\{)", other.text):
                start = len(other.text[:m.start()].encode("utf-8"))
                node = other.tree.root_node.descendant_for_byte_range(start, start + 1)
                while node is not None and node.type not in ("interface_declaration", "type_alias_declaration"):
                    node = node.parent
                found = _SIGNAL_MEMBER.search(other.node_text(node)) if node is not None else None
                if found is not None:
                    out.setdefault(m.group(1) or m.group(2), found.group(1))
        return out

    return memo(project, "c10_typed_signals", build).get(type_name)


_FRAMEWORK_SIGNALS = {"RunnableConfig": "signal", "LangGraphRunnableConfig": "signal", "RequestHandlerExtra": "signal",
                      "ToolCallOptions": "abortSignal", "ToolExecutionOptions": "abortSignal"}
"""Framework types that carry the run's abort signal: LangChain/LangGraph's config, the MCP handler's `extra`, the
options the `ai` package hands to a tool's `execute`."""
_REQUEST_TYPES = {"Request", "NextRequest"}
"""A Fetch API request: a web route's `req.signal` fires when the client goes away or presses stop."""
_RUN_CONTEXT = re.compile(r"^RunContext\s*<\s*([A-Z][\w$]*)\s*>$")
"""`@openai/agents` hands tools a `RunContext<T>` whose `context` is the caller's own object of type `T`."""
_ROUTE_FILE = re.compile(r"(^|/)route\.(m?[jt]sx?|c[jt]s)$")
_ROUTE_VERBS = {"GET", "POST", "PUT", "PATCH", "DELETE"}


def _bare_type(text: str) -> str:
    """`: Promise<Ctx | undefined>` → `Ctx`."""
    text = re.sub(r"^\s*:\s*", "", text).strip()
    m = re.fullmatch(r"Promise\s*<(.*)>", text)
    if m is not None:
        text = m.group(1).strip()
    return re.sub(r"\s*\|\s*(undefined|null)\s*", "", text).strip()


def _type_signal(project: TsProject, type_text: str) -> str | None:
    """The member path of the abort signal a value of this type carries (`signal`, `context.signal`)."""
    bare = _bare_type(type_text)
    if bare in _FRAMEWORK_SIGNALS:
        return _FRAMEWORK_SIGNALS[bare]
    m = _RUN_CONTEXT.match(bare)
    if m is not None:
        inner = _typed_signal(project, m.group(1))
        return f"context.{inner}" if inner is not None else None
    return _typed_signal(project, bare)


_PROCESS_RESULTS = re.compile(r"(^|\.)(spawn|spawnSync|exec|execSync|execFile|execFileSync|execa|execaSync|fork|\$)$")
"""Calls whose result has a `signal` member that is the name of the signal that killed a process, not an abort
signal."""


def _init_signature(mod: TsModule, value: Node | None) -> str:
    """What a local context object is made by: the callee of its initialiser (`envFor(job)` → `envFor`); "" for
    anything else, and for process results (`spawnSync(...).signal` is a kill signal's name)."""
    node = ts.unwrap(value)
    if node is None or node.type != "call_expression":
        return ""
    name = mod.call_name(node)
    return "" if _PROCESS_RESULTS.search(name) else name


def _local_context_reads(mod: TsModule) -> dict[tuple[str, str], str]:
    """(local name, initialiser callee) → the signal member some function of the module reads from a local made
    the same way (`const env = envFor(job); … env.signal`)."""

    def build() -> dict[tuple[str, str], str]:
        out: dict[tuple[str, str], str] = {}
        if "ignal" not in mod.text:
            return out
        reads_in: dict[tuple[int, int], dict[str, str]] = {}  # per function: local -> the first member read
        for decl in mod.nodes("variable_declarator"):
            target = decl.child_by_field_name("name")
            fn = mod.enclosing_function(decl)
            signature = _init_signature(mod, decl.child_by_field_name("value"))
            if target is None or target.type != "identifier" or fn is None or not signature:
                continue
            span = (fn.start_byte, fn.end_byte)
            if span not in reads_in:  # one scan per function, not one per local (a bundle's functions are long)
                first: dict[str, str] = {}
                for m in _CONTEXT_SIGNAL.finditer(mod.node_text(fn.child_by_field_name("body"))):
                    first.setdefault(m.group(1), m.group(2))
                reads_in[span] = first
            name = mod.node_text(target)
            if name in reads_in[span]:
                out.setdefault((name, signature), reads_in[span][name])
        return out

    return ts.cached(mod, "c10_local_context_reads", build)


def _local_context_signals(mod: TsModule, project: TsProject, fn: Node, node: Node) -> list[ts.SignalRef]:
    """Signals a context object held in a local of `fn` carries: its declared type has one, the function that
    made it returns such a type, it is the `context` of a `RunContext<T>`, or the module reads `.signal` from a
    local made the same way elsewhere."""
    out: list[ts.SignalRef] = []
    reads = _local_context_reads(mod)
    params = {mod.node_text(ts.param_pattern(p)): ts.param_type(mod, p) for p in ts.params(fn)}
    for decl in mod.inside(mod.nodes("variable_declarator"), fn):
        target = decl.child_by_field_name("name")
        if decl.end_byte > node.start_byte or target is None or target.type != "identifier" or \
                mod.enclosing_function(decl) != fn:
            continue
        name = mod.node_text(target)
        value = ts.unwrap(decl.child_by_field_name("value"))
        member: str | None = None
        annotation = decl.child_by_field_name("type")
        if annotation is not None:
            member = _type_signal(project, mod.node_text(annotation))
        elif value is not None and value.type == "call_expression":
            for ref in ai.resolve_call(mod, project, value):
                returns = ref.node.child_by_field_name("return_type")
                member = _type_signal(project, ref.module.node_text(returns)) if returns is not None else None
                if member is not None:
                    break
            member = member or reads.get((name, _init_signature(mod, value)))
        elif value is not None and value.type == "member_expression" and \
                mod.node_text(value.child_by_field_name("property")) == "context":
            owner = re.sub(r"[!?]+$", "", mod.node_text(value.child_by_field_name("object")))
            inner = _type_signal(project, params.get(owner, ""))
            member = inner[len("context."):] if inner is not None and inner.startswith("context.") else None
        if member is not None:
            out.append(ts.SignalRef(f"{name}.{member}", True))
    return out


def _context_signals(mod: TsModule, project: TsProject, node: Node, *, model: bool = False) -> list[ts.SignalRef]:
    """Signals a context object of the enclosing functions carries though the function never reads them: a
    parameter whose declared type has a `signal: AbortSignal` member (or is a framework type that carries one),
    a parameter from which the module's other functions read `ctx.signal` (the tool dispatcher hands every tool
    the same context), or a local context object (see `_local_context_signals`). With `model`, a web route's
    `Request` counts too: stopping a generation is what its signal is for."""
    out: list[ts.SignalRef] = []
    reads = _context_reads(mod)
    for fn in ts.enclosing_functions(mod, node):
        for index, param in enumerate(ts.params(fn)):
            pattern = ts.param_pattern(param)
            if pattern.type != "identifier":
                continue
            name = mod.node_text(pattern)
            ptype = _bare_type(ts.param_type(mod, param))
            if model and (ptype in _REQUEST_TYPES or (not ptype and index == 0 and _route_handler(mod, fn))):
                out.append(ts.SignalRef(f"{name}.signal", True))
                continue
            member = _type_signal(project, ptype) if ptype else reads.get((index, name))
            if member is not None:
                out.append(ts.SignalRef(f"{name}.{member}", True) if ptype else
                           _InferredSignal(f"{name}.{member}", True, name))
        out.extend(_local_context_signals(mod, project, fn, node))
        out.extend(_ai_options_signal(mod, fn))
        out.extend(_dropped_context_signal(mod, project, fn))
    out.extend(_class_field_signal(mod, node))
    out.extend(_ambient_signal(mod, project, node))
    out.extend(_held_controller_signal(mod, project, node))
    return out


@dataclass(frozen=True, slots=True)
class _DroppedContext(ts.SignalRef):
    """The per-call context a tool entry does not take although the run's signal arrives in it: the dispatcher
    passes `{ signal }` at that position, or the other entries of the same slot read a signal from it."""

    slot: str = ""
    index: int = 0
    evidence: str = ""


def _available_phrase(sig: ts.SignalRef) -> str:
    """How a claim names an available signal."""
    if isinstance(sig, _DroppedContext):
        return (f"the run's `{sig.expr}`, which arrives in parameter {sig.index + 1} of this tool's `{sig.slot}` "
                f"although the `{sig.slot}` does not take it ({sig.evidence})")
    return f"`{sig.expr}`"


_ENTRY_SLOTS = ("execute", "handler", "run", "invoke", "call", "func", "handle", "fn", "impl")
"""The slots a tool object keeps its implementation in."""


_TABLE_SLOT = "<tool table>"
"""The slot of functions registered by reference in a tool table or dispatch table of their module (`const impls =
{ lookup: lookupThing }` looked up by the tool's name): the dispatcher calls all of them the same way."""


def _entry_slot(mod: TsModule, fn: Node) -> str | None:
    """The slot a tool's implementation sits in (`handler`, `run`, `execute`), for a tool entry of an object, or
    `_TABLE_SLOT` for a function its module registers by reference in a tool table."""
    if fn.id in ts.registered_tool_functions(mod, None):
        return _TABLE_SLOT
    if not (ts.tool_kind(mod, fn) == "args" or ts.object_tool_entry(mod, fn)):
        return None
    if fn.type == "method_definition":
        return mod.node_text(fn.child_by_field_name("name"))
    if fn.parent is not None and fn.parent.type == "pair":
        return ts.strip_quotes(mod.node_text(fn.parent.child_by_field_name("key")))
    return None


def _entry_factory(mod: TsModule, fn: Node) -> str:
    """The call a tool entry's object is handed to (`createStep({ execute })` → `createStep`), whose calling
    convention then applies; "" for a plain object literal (an array element, a record value)."""
    obj = fn.parent if fn.type == "method_definition" else (fn.parent.parent if fn.parent is not None else None)
    holder = obj.parent if obj is not None and obj.type == "object" else None
    if holder is not None and holder.type == "arguments" and holder.parent is not None:
        return ts.last(mod.call_name(holder.parent))
    return ""


def _param_signal(mod: TsModule, project: TsProject, fn: Node, index: int) -> str | None:
    """The signal member a function reads from its parameter at `index` (`{ signal }`, `ctx.signal`, a parameter
    typed with a signal member); None when it reads none."""
    ps = ts.params(fn)
    if index >= len(ps):
        return None
    pattern = ts.param_pattern(ps[index])
    if pattern.type == "object_pattern":
        return next((n for n in ts.bound_names(mod, pattern) if n in ts.SIGNAL_KEYS), None)
    if pattern.type != "identifier":
        return None
    found = re.search(rf"(?<![\w$.]){re.escape(mod.node_text(pattern))}\??\.(signal|abortSignal|cancelSignal)\b",
                      mod.node_text(fn.child_by_field_name("body")))
    if found is not None:
        return found.group(1)
    ptype = ts.param_type(mod, ps[index])
    return _type_signal(project, ptype) if ptype else None


def _slot_evidence(project: TsProject) -> dict[str, list[tuple[int, str, str, str, str]]]:
    """Slot name → (argument index, signal member, where, module path, factory) for every place the project shows
    that the functions in that slot get the run's signal at that position: a call `tool.handler(args, { signal })`
    that passes one (to entries of plain object literals), or a tool entry of that slot that reads one from that
    parameter (for entries handed to the same factory)."""

    def build() -> dict[str, list[tuple[int, str, str, str, str]]]:
        out: dict[str, list[tuple[int, str, str, str, str]]] = {}
        for other in project.modules.values():
            if ts.skipped_module(other) or "ignal" not in other.text:
                continue
            for call in ts.calls_named(other, *_ENTRY_SLOTS):
                name = other.call_name(call) if call.type == "call_expression" else ""
                if "." not in name or name.startswith("this."):
                    continue
                for index, arg in enumerate(ts.call_args(other, call)[1:], start=1):
                    node = ts.unwrap(arg)
                    if node is not None and node.type == "identifier":
                        node = ts.resolve_object(other, node)  # `const callCtx = { signal, … }; t.run(a, callCtx)`
                    if node is not None and node.type == "object" and ts.names_signal(other, node):
                        keys = other.object_keys(node)
                        member = next((k for k in keys if k in ts.SIGNAL_KEYS), "signal")
                        out.setdefault(ts.last(name), []).append(
                            (index, member, f"`{name}(...)` at {other.path}:{other.line(call)} passes it",
                             other.path, ""))
            for fn in other.functions():
                slot = _entry_slot(other, fn)
                if slot is None:
                    continue
                for index in range(1, len(ts.params(fn))):
                    member = _param_signal(other, project, fn, index)
                    if member is not None:
                        out.setdefault(slot, []).append(
                            (index, member, f"the `{slot}` at {other.path}:{other.line(fn)} reads it", other.path,
                             _entry_factory(other, fn)))
        return out

    return memo(project, "c10_slot_evidence", build)


def _dropped_context_signal(mod: TsModule, project: TsProject, fn: Node) -> list[ts.SignalRef]:
    """A tool entry (`handler`, `run`, `execute` of a tool object) that does not take the per-call context in
    which the run's signal arrives: it declares fewer parameters, or destructures it without the signal, or names
    it and never reads the signal from it, while a dispatcher passes `{ signal }` at that position or the other
    entries of the same slot read it there."""
    slot = _entry_slot(mod, fn)
    if slot is None:
        return []
    ps = ts.params(fn)
    evidence = _slot_evidence(project).get(slot, [])
    if not evidence:
        return []
    # the dispatcher that passes the signal imports this module; sibling entries sit in this module
    related = {mod.path} | {other.path for other in ts.importers(project, mod)}
    factory = _entry_factory(mod, fn)
    for index, member, where, path, kind in evidence:
        if path not in related or kind != factory:
            continue  # another module's convention, or entries handed to another factory
        if index > len(ps):
            continue  # a gap in the parameters: not the same calling convention
        if index == len(ps):
            return [_DroppedContext(member, True, slot, index, where)]
        pattern = ts.param_pattern(ps[index])
        if _param_signal(mod, project, fn, index) is not None:
            return []
        if pattern.type == "object_pattern":
            return [_DroppedContext(member, True, slot, index, where)]
        if pattern.type == "identifier":
            return [ts.SignalRef(f"{mod.node_text(pattern)}.{member}", True)]
        return []
    return []


def _ambient_accessors(project: TsProject) -> dict[str, str]:
    """Functions (and stores) that hand out an ambient run context carrying an abort signal, mapped to how the
    signal is read: `function current(): RunContext { return store.getStore() }` → `current().signal`, and
    `const store = new AsyncLocalStorage<RunContext>()` → `store.getStore()?.signal`."""

    def build() -> dict[str, str]:
        out: dict[str, str] = {}
        for other in project.modules.values():
            if "AsyncLocalStorage" not in other.text or ts.skipped_module(other):
                continue
            stores: dict[str, str] = {}
            for decl in other.nodes("variable_declarator"):
                value = ts.unwrap(decl.child_by_field_name("value"))
                target = decl.child_by_field_name("name")
                if value is None or target is None or value.type != "new_expression" or \
                        other.call_name(value) != "AsyncLocalStorage":
                    continue
                generic = re.search(r"AsyncLocalStorage\s*<\s*([A-Z][\w$]*)\s*>", other.node_text(value))
                member = _type_signal(project, generic.group(1)) if generic is not None else None
                if member is not None:
                    stores[other.node_text(target)] = member
                    out[other.node_text(target)] = f"{other.node_text(target)}.getStore()?.{member}"
            for fn in other.functions():
                body = other.node_text(fn.child_by_field_name("body"))
                store = next((name for name in stores if f"{name}.getStore()" in body), None)
                name = other.function_name(fn)
                if store is None or name in ("<anonymous>", "constructor") or ts.params(fn):
                    continue
                out[name] = f"{name}().{stores[store]}"
        return out

    return memo(project, "c10_ambient_accessors", build)


def _ambient_signal(mod: TsModule, project: TsProject, node: Node) -> list[ts.SignalRef]:
    """In tool code of a module that reads the ambient run context (`const { signal } = current()` in another
    tool), the signal of that context: the tool runs inside the same `store.run(ctx, …)`."""
    accessors = _ambient_accessors(project)
    if not accessors or ts.in_tool_function(mod, node) is None and ts.in_object_tool(mod, node) is None:
        return []
    for name, expr in accessors.items():
        callee = name if expr.startswith(f"{name}()") else f"{name}.getStore"
        if any(mod.call_name(c) == callee for c in ts.calls_named(mod, ts.last(callee))):
            return [ts.SignalRef(expr, True)]
    return []


_CONTROLLER_FIELD = re.compile(r"\b([A-Za-z_$][\w$]*)\??\s*(?::\s*(?:new\s+)?AbortController\b|"
                               r"=\s*(?:[^;\n]*\?\s*)?new\s+AbortController\b)")


def _controller_fields(project: TsProject) -> frozenset[str]:
    """Names the project declares as holding an `AbortController` (`controller: AbortController | null`,
    `state.controller = busy ? new AbortController() : null`)."""

    def build() -> frozenset[str]:
        out: set[str] = set()
        for other in project.modules.values():
            if "AbortController" in other.text:
                out.update(m.group(1) for m in _CONTROLLER_FIELD.finditer(other.text))
        return frozenset(out)

    return memo(project, "c10_controller_fields", build)


def _module_bindings(mod: TsModule) -> frozenset[str]:
    """Names bound at the top level of the module: imports and top-level variables."""

    def build() -> frozenset[str]:
        out = set(ts.imports_of(mod))
        for decl in mod.nodes("variable_declarator"):
            target = decl.child_by_field_name("name")
            if target is not None and target.type == "identifier" and mod.enclosing_function(decl) is None:
                out.add(mod.node_text(target))
        return frozenset(out)

    return ts.cached(mod, "c10_module_bindings", build)


def _declares(mod: TsModule, fn: Node, name: str) -> bool:
    """Whether `fn` binds `name` itself: a parameter, or a variable declared directly in its body."""
    if name in mod.params(fn):
        return True
    return any(mod.enclosing_function(d) == fn and mod.node_text(d.child_by_field_name("name")) == name
               for d in mod.inside(mod.nodes("variable_declarator"), fn))


def _holder_scope(mod: TsModule, root: str, call: Node, node: Node) -> Node | None:
    """The scope that owns the holder `root` seen the same by the aborting call and by `node`: the innermost
    function around both that binds it (a component's `useRef`), or the module (`mod.tree.root_node`) for an
    import or a top-level variable; None when either side binds the name again on its own."""
    calls_in = ts.enclosing_functions(mod, call)
    node_in = ts.enclosing_functions(mod, node)
    shared = {f.id for f in calls_in} & {f.id for f in node_in}
    owner = next((f for f in node_in if f.id in shared and _declares(mod, f, root)), None)
    if owner is None and root not in _module_bindings(mod):
        return None
    for chain in (calls_in, node_in):
        for f in chain:
            if owner is not None and f.id == owner.id:
                break
            if _declares(mod, f, root):
                return None
    return owner if owner is not None else mod.tree.root_node


def _held_controller_signal(mod: TsModule, project: TsProject, node: Node) -> list[ts.SignalRef]:
    """The signal of a controller held outside the function making the call (a module variable, a store's state,
    a shared object, a component's ref) that another function aborts (`stop() {
    useRun.getState().controller?.abort() }`, `onClick={() => ref.current?.abort()}`), when the function making the
    call works with the same holder: stop aborts a signal this call never got."""
    if ".abort(" not in mod.text.replace("?.abort(", ".abort("):
        return []
    fns = ts.enclosing_functions(mod, node)
    if not fns:
        return []
    fields = _controller_fields(project)
    for call in ts.calls_named(mod, "abort"):
        name = mod.call_name(call) if call.type == "call_expression" else ""
        recv = name[: -len(".abort")] if name.endswith(".abort") else ""
        root = re.split(r"[.(\[?]", recv, maxsplit=1)[0]
        aborter = mod.enclosing_function(call)
        if not recv or root in ("this", "self") or aborter is None or any(f.id == aborter.id for f in fns) or \
                ts.last(recv.rstrip("?")) not in fields:
            continue  # an abort in the calling function itself is its own timeout or cleanup
        timer = aborter.parent.parent if aborter.parent is not None and aborter.parent.type == "arguments" else None
        if timer is not None and timer.type == "call_expression" and \
                ts.last(mod.call_name(timer)) in ("setTimeout", "setInterval"):
            continue  # a deadline, not a stop
        owner = _holder_scope(mod, root, call, node)
        if owner is None or (owner.type in FUNCTION_TYPES and "." not in recv.rstrip("?")):
            continue  # a plain local controller of a function is judged as a local (`abort_signals`)
        user = next((f for f in reversed(fns) if mod.within(f, owner) and f.id != owner.id), fns[0])
        if not re.search(rf"(?<![\w$.]){re.escape(root)}\b", mod.node_text(user)):
            continue
        text = " ".join(mod.node_text(call.child_by_field_name("function")).split())
        return [ts.SignalRef(re.sub(r"\.abort$", "", text) + ".signal", True)]
    return []


def _ai_options_signal(mod: TsModule, fn: Node) -> list[ts.SignalRef]:
    """The `ai` package's tool `execute(input, options)` that declares its options (`options`, `{ toolCallId }`)
    but never takes `abortSignal` from them: the signal is there when the caller passes one to the run."""
    params = ts.params(fn)
    holder = fn.parent
    if len(params) < 2 or holder is None or holder.type not in ("pair", "object") and fn.type != "method_definition":
        return []
    if fn.type == "method_definition":
        if mod.function_name(fn) != "execute":
            return []
        obj = fn.parent
    else:
        if holder.type != "pair" or ts.strip_quotes(mod.node_text(holder.child_by_field_name("key"))) != "execute":
            return []
        obj = holder.parent
    args = obj.parent if obj is not None and obj.type == "object" else None
    factory = args.parent if args is not None and args.type == "arguments" else None
    if factory is None or factory.type != "call_expression" or mod.call_name(factory) != "tool" or \
            ts.imported_from(mod, "tool") != "ai":
        return []
    pattern = ts.param_pattern(params[1])
    if pattern.type == "identifier":
        return [ts.SignalRef(f"{mod.node_text(pattern)}.abortSignal", False)]
    if pattern.type == "object_pattern" and "abortSignal" not in ts.bound_names(mod, pattern):
        return [ts.SignalRef("abortSignal", False)]
    return []


_SIGNAL_FIELD = re.compile(r"(?:\bthis\.|(?:private|protected|public|readonly)\s+(?:readonly\s+)?)"
                           r"((?:abort)?[sS]ignal|[a-z]\w*Signal)\??\s*(?::\s*AbortSignal\b|=\s*[\w$.]*[sS]ignal\b)")


def _class_field_signal(mod: TsModule, node: Node) -> list[ts.SignalRef]:
    """An abort signal the enclosing class keeps (`constructor(private readonly signal: AbortSignal)`,
    `this.signal = opts.signal`), reachable as `this.signal` in its methods."""
    method = next((f for f in ts.enclosing_functions(mod, node) if f.type == "method_definition"), None)
    if method is None or mod.function_name(method) == "constructor" or mod.node_text(method).startswith("static"):
        return []
    cls = method.parent.parent if method.parent is not None else None
    if cls is None or cls.type not in ("class_declaration", "class", "abstract_class_declaration"):
        return []
    found = _SIGNAL_FIELD.search(mod.node_text(cls))
    if found is None or found.group(1) in ("killSignal",):
        return []
    return [ts.SignalRef(f"this.{found.group(1)}", True)]


def _route_handler(mod: TsModule, fn: Node) -> bool:
    """An exported `GET`/`POST`/… function of a web framework's `route.ts` file: its first parameter is the
    Fetch API `Request`."""
    return bool(_ROUTE_FILE.search(mod.path)) and mod.function_name(fn) in _ROUTE_VERBS and \
        fn.parent is not None and fn.parent.type == "export_statement"


def _available_signals(mod: TsModule, project: TsProject, node: Node, *, model: bool = False) -> list[ts.SignalRef]:
    return ts.abort_signals(mod, node) or _context_signals(mod, project, node, model=model)


def _signal_hit(sig: ts.SignalRef, claim: str, consequence: str, direction: str, node: Node) -> Hit:
    if sig.declared:
        return Hit(node=node, claim=claim, consequence=consequence, direction=direction)
    return Hit(
        node=node, verdict=Verdict.SUSPECTED, claim=claim, consequence=consequence, direction=direction,
        confirm_hint=f"verify that the caller of this tool passes an abort signal to the run (the framework then "
                     f"hands it over as `{sig.expr}`), so that stop could reach this call",
    )


def _raced_against_abort(mod: TsModule, call: Node) -> bool:
    """Whether the request's promise is raced against the abort where it is made: its function registers an abort
    listener that rejects (`new Promise((resolve, reject) => { signal.addEventListener("abort", () => reject(…));
    request.then(resolve) })`, or a `Promise.race` with an abort promise). Stop then ends the wait at once."""
    fn = mod.enclosing_function(call)
    if fn is None:
        return False
    text = mod.node_text(fn)
    return bool(_ABORT_WIRING.search(text)) and ("reject(" in text or "Promise.race" in text)


def _stream_checks_abort(mod: TsModule, call: Node) -> bool:
    """Whether the streamed response is consumed by a `for await` that checks the abort and leaves the loop (which
    closes the stream): stop then ends the request at the next chunk."""
    parent = call.parent
    while parent is not None and parent.type in ("await_expression", "parenthesized_expression", "as_expression"):
        parent = parent.parent
    name = parent.child_by_field_name("name") if parent is not None and parent.type == "variable_declarator" else None
    fn = mod.enclosing_function(call)
    if name is None or fn is None:
        return False
    for loop in mod.inside(mod.nodes("for_in_statement"), fn):
        right = loop.child_by_field_name("right")
        body = loop.child_by_field_name("body")
        if right is None or body is None or mod.node_text(right) != mod.node_text(name):
            continue
        body_text = mod.node_text(body)
        if re.search(r"\.aborted\b|throwIfAborted", body_text) and re.search(r"\b(break|return|throw)\b", body_text):
            return True
    return False


def _built_from_holder(mod: TsModule, call: Node, sig: ts.SignalRef) -> bool:
    """`let params = buildParams(model, context, options); client.models.generateContentStream(params)`: the request
    is built by a helper handed the object that holds the signal (`options.signal`), which may well put it in the
    request's config; the builder decides, not this call."""
    holder = sig.expr.split(".", 1)[0].rstrip("?")
    if "." not in sig.expr or not holder.isidentifier() or holder == "this":
        return False
    fn = mod.enclosing_function(call)
    text = mod.node_text(fn) if fn is not None else ""
    for arg in mod.arguments(call):
        node = ts.unwrap(arg)
        if node is None:
            continue
        if node.type == "call_expression":
            built = [mod.node_text(node.child_by_field_name("arguments"))]
        elif node.type == "identifier":
            name = re.escape(mod.node_text(node))
            built = [m.group(1) for m in re.finditer(
                rf"\b{name}\s*=\s*(?:await\s+)?[\w$.]+\s*\(([^;]*)\)", text)]
        else:
            continue
        if any(re.search(rf"(?<![\w$.]){re.escape(holder)}\b(?!\s*\.\s*(?!signal\b)\w)", b) for b in built):
            return True
    return False


@rule(CheckId.C10, lang="typescript", name="request-ignores-abort-signal")
def request_ignores_abort_signal(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags an outbound request (`fetch`, undici, axios, got, ky) or SDK model call made where an `AbortSignal`
    is available, without passing it. Stop aborts the signal, but this request never hears of it: the turn keeps
    waiting for the response (or keeps streaming) until it finishes on its own."""
    if ts.skipped_module(mod) or not _may_have_signal(mod.text):
        return
    for call in ts.calls_named(mod, *_REQUEST_SHORTS):
        kind = _request_kind(mod, call) if call.type == "call_expression" else None
        if kind is None or not _consumed(call):
            continue
        signals = _available_signals(mod, project, call, model=_is_model(mod, call))
        if not signals or ts.passes_signal(mod, call, kind[1]) or ts.in_abort_handler(mod, call) or \
                _raced_against_abort(mod, call) or \
                _stream_checks_abort(mod, call) or _built_from_holder(mod, call, signals[0]):
            continue
        sig = signals[0]
        claim = f"`{kind[0]}(...)` is issued without `{sig.expr}`, the abort signal available here"
        if isinstance(sig, _DroppedContext):
            claim = f"`{kind[0]}(...)` is issued with no abort signal: {_available_phrase(sig)}"
        if isinstance(sig, _InferredSignal):
            fn = next((f for f in ts.enclosing_functions(mod, call)
                       if sig.param in [mod.node_text(ts.param_pattern(p)) for p in ts.params(f)]), None)
            where = f"`{mod.function_name(fn)}`" if fn is not None and mod.function_name(fn) != "<anonymous>" \
                else "the enclosing function"
            claim = (f"`{kind[0]}(...)` is issued with no abort signal: nothing in its arguments carries one, although "
                     f"{where} receives a context `{sig.param}` from which other functions of this module read "
                     f"`{sig.expr}` (inferred from the parameter's name and position; the run's signal may arrive "
                     "under another name)")
            inner = ts.enclosing_functions(mod, call)[0]
            holder = inner.parent
            if holder is not None and holder.type == "arguments" and holder.parent is not None:
                holder = holder.parent.parent  # `execute: __name(async (args, opts) => …, "execute")` (bundlers)
            extra = ts.params(inner)[1:2]
            if inner is not fn and extra and holder is not None and holder.type == "pair" and ts.strip_quotes(
                    mod.node_text(holder.child_by_field_name("key"))) in ("execute", "handler", "run", "invoke"):
                claim += (f"; the per-call options `{mod.node_text(ts.param_pattern(extra[0]))}` that the tool's "
                          f"`{ts.strip_quotes(mod.node_text(holder.child_by_field_name('key')))}` receives are not "
                          "read for a signal either")
            direction = ("find where the run's abort signal reaches this function (a tool callback's per-call "
                         "options, the run context) and pass it in the request options (`{ signal }`; `abortSignal` "
                         "for the `ai` package)")
        elif isinstance(sig, _DroppedContext):
            direction = (f"take the per-call context as parameter {sig.index + 1} of the `{sig.slot}` and pass its "
                         f"`{sig.expr}` in the request options (`abortSignal` for the `ai` package)")
        else:
            direction = (f"pass the signal through: `{{ signal: {sig.expr} }}` (`abortSignal` for the `ai` package, "
                         "the request-options argument for the openai/anthropic SDKs)")
        yield _signal_hit(
            sig, node=call,
            claim=claim,
            consequence="pressing stop does not cancel this request: the run keeps waiting for (and paying for) "
                        "the response until it completes on its own",
            direction=direction,
        )


def _handle(mod: TsModule, call: Node) -> tuple[str | None, bool]:
    """(name the child process is bound to, whether the handle leaves the function)."""
    node = call
    parent = node.parent
    while parent is not None and parent.type in ("await_expression", "parenthesized_expression", "as_expression"):
        node, parent = parent, parent.parent
    if parent is None:
        return None, False
    if parent.type == "variable_declarator" and parent.child_by_field_name("name") is not None:
        target = parent.child_by_field_name("name")
        return (mod.node_text(target), False) if target is not None and target.type == "identifier" else (None, False)
    if parent.type == "assignment_expression":
        left = mod.node_text(parent.child_by_field_name("left"))
        return left, left.startswith("this.")
    if parent.type in ("return_statement", "arrow_function", "arguments", "pair", "array"):
        return None, True
    return None, False


def _escapes(mod: TsModule, fn: Node, name: str) -> bool:
    """Whether the handle is returned, stored on an object, or handed to another function."""
    body = mod.node_text(fn)
    quoted = re.escape(name)
    return bool(re.search(rf"return\s+{quoted}\b|this\.[\w$]+\s*=\s*{quoted}\b|\.(set|push|add)\(\s*(\w+,\s*)?"
                          rf"{quoted}\s*\)|[(,]\s*{quoted}\s*[,)]|resolve\(\s*{quoted}\b", body))


@rule(CheckId.C10, lang="typescript", name="spawn-ignores-abort-signal")
def spawn_ignores_abort_signal(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a child process started where an `AbortSignal` is available, with no `signal` option and no abort
    listener that kills it; and a synchronous `execSync`/`spawnSync` of a variable command there, which blocks the
    event loop so the abort cannot even be delivered. After stop, the command keeps running."""
    if ts.skipped_module(mod) or not _may_have_signal(mod.text):
        return
    for sp in ts.spawns(mod):
        signals = _available_signals(mod, project, sp.call)
        if not signals or ts.in_abort_handler(mod, sp.call):
            continue
        sig = signals[0]
        fns = ts.enclosing_functions(mod, sp.call)
        if sp.sync:
            parts = ts.command_parts(mod, sp)
            if not parts or all(ts.string_value(mod, p) is not None for p in parts):
                continue
            yield _signal_hit(
                sig, node=sp.call,
                claim=f"`{sp.api}` runs `{_short(mod, parts[0], 40)}` synchronously although `{sig.expr}` is "
                      "available: it blocks the event loop, so the abort cannot be delivered until the command exits",
                consequence="pressing stop does nothing while the command runs; a hung command hangs the harness",
                direction=f"use the async `spawn`/`execFile` with `{{ signal: {sig.expr} }}` (and kill the process "
                          "group on abort)",
            )
            continue
        if ts.passes_signal(mod, sp.call, None) or ts.spawn_options(mod, sp).opaque:
            continue
        scope = fns[-1]
        scope_text = mod.node_text(scope)
        if _ABORT_WIRING.search(scope_text) or (".aborted" in scope_text and ".kill(" in scope_text):
            continue
        name, escapes = _handle(mod, sp.call)
        if escapes or (name is not None and _escapes(mod, fns[0], name)):
            continue
        yield _signal_hit(
            sig, node=sp.call,
            claim=f"`{sp.api}` starts a process although {_available_phrase(sig)} is available, but neither passes it "
                  "(`signal` option) nor registers an abort listener that kills the process",
            consequence="pressing stop leaves the command (and everything it started) running",
            direction=f"pass `{{ signal: {sig.expr} }}` or add `{sig.expr}.addEventListener(\"abort\", ...)` that "
                      "kills the process group (`detached: true` + `process.kill(-child.pid)`)",
        )


def _kill_calls(mod: TsModule, scope: Node, name: str) -> list[Node]:
    return [c for c in mod.inside(mod.calls(), scope) if mod.call_name(c) == f"{name}.kill"]


def _registry_kills(mod: TsModule, scope: Node, name: str) -> list[Node]:
    """`child.kill()` calls on a handle kept in a registry of running processes: the child is stored
    (`running.set(id, child)`, `jobs[id] = child`, `procs.push(child)`) and a cancel handler elsewhere in the module
    takes it back out (`const c = running.get(id); c.kill()`, `running.get(id)?.kill()`, `for (const c of
    running.values()) c.kill()`)."""
    quoted = re.escape(name)
    text = mod.node_text(scope)
    registries = {m.group(1) for m in re.finditer(
        rf"\b([\w$.]+)\.(?:set|push|add)\(\s*(?:[^,()]+,\s*)?{quoted}\s*\)", text)}
    registries |= {m.group(1) for m in re.finditer(rf"\b([\w$.]+)\[[^\]]+\]\s*=\s*{quoted}\b", text)}
    registries.discard(name)
    if not registries:
        return []
    out: list[Node] = []
    for call in mod.calls():
        callee = mod.call_name(call)
        if not callee.endswith(".kill") or mod.within(call, scope):
            continue
        recv = callee[: -len(".kill")].rstrip("?")
        for reg in registries:
            ref = re.escape(reg)
            if re.fullmatch(rf"{ref}(\.get\(.*\)|\[.*\])\??", recv, re.S):
                out.append(call)
                break
            fn = mod.enclosing_function(call)
            held = re.search(rf"\b{re.escape(recv)}\s*=\s*{ref}(\.get\(|\[)|"
                             rf"\bfor\s*\(\s*(const|let|var)\s+{re.escape(recv)}\s+of\s+{ref}\b",
                             mod.node_text(fn) if fn is not None else mod.text)
            if re.fullmatch(r"[\w$]+", recv) and held is not None:
                out.append(call)
                break
    return out


@rule(CheckId.C10, lang="typescript", name="abort-kills-only-shell")
def abort_kills_only_shell(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a shell child (`exec`, `shell: true`, `bash -c`) that cancellation stops with `child.kill()` or the
    `signal` option alone. Both signal only the direct child, the shell: the commands it started (a test runner, a
    dev server) are grandchildren in the same process group and survive the stop. A `detached: true` child is a
    group leader, and `child.kill()` still reaches only the leader. A child kept in a registry of running processes
    (`running.set(id, child)`) and killed by a cancel handler that takes it back out is reported at the spawn."""
    if ts.skipped_module(mod) or not ts.spawns(mod) or _GROUP_KILL.search(mod.text):
        return
    for sp in ts.spawns(mod):
        if sp.sync or not ts.spawn_is_shell(mod, sp):
            continue
        opts = ts.spawn_options(mod, sp)
        detached = ts.truthy_literal(mod, ts.option(mod, opts, "detached"))
        fns = ts.enclosing_functions(mod, sp.call)
        name, _ = _handle(mod, sp.call)
        kills = (_kill_calls(mod, fns[-1], name) or _registry_kills(mod, fns[-1], name)) if fns and name else []
        keys = mod.object_keys(opts.obj) if opts.obj is not None else {}
        by_signal = bool(keys.keys() & ts.SIGNAL_KEYS)
        if not kills and not by_signal:
            continue
        remote = bool(kills) and not mod.within(kills[0], fns[-1])
        cited = sp.call if remote or not kills else kills[0]
        how = f"`{mod.call_name(kills[0])}()`" if kills else "the `signal` option"
        if remote:
            how += f" (line {mod.line(kills[0])}, on the handle taken back from the registry of running processes)"
        group = "the detached child leads its own process group, but " if detached else ""
        yield Hit(
            node=cited,
            claim=f"{group}{how} signals only the shell started at line {mod.line(sp.call)}; the commands it "
                  "launched are not killed as a group",
            consequence="after stop, the shell dies but the commands it started keep running (and keep writing, "
                        "serving or burning CPU)",
            direction="spawn with `detached: true` and stop with `process.kill(-child.pid, \"SIGTERM\")` (or a "
                      "tree kill), escalating to SIGKILL after a grace period",
        )


# ---------------------------------------------------------------- timers
def _timer_name(mod: TsModule, call: Node) -> str | None:
    """The local variable a timer handle is kept in (`const t = setTimeout(…)`, `t = setTimeout(…)`)."""
    parent = call.parent
    target = None
    if parent is not None and parent.type == "variable_declarator":
        target = parent.child_by_field_name("name")
    elif parent is not None and parent.type == "assignment_expression":
        target = parent.child_by_field_name("left")
    return mod.node_text(target) if target is not None and target.type == "identifier" else None


def _kept_somewhere(mod: TsModule, call: Node) -> bool:
    """Whether the timer handle is stored at all (a local, a field, an argument): it may be cleared elsewhere."""
    parent = call.parent
    return parent is not None and parent.type not in ("expression_statement", "arrow_function", "statement_block")


_BENIGN_CALLBACK = {"abort", "resolve", "reject", "log", "debug", "warn", "info", "error"}


def _timer_effect(mod: TsModule, call: Node) -> bool:
    """Whether firing the timer late does something (kills, retries, emits, writes), beyond settling a promise
    nobody waits for any more or aborting a controller of a short request. Aborting a controller counts when the
    controller outlives the call (kept in a field or a map of running jobs: the late abort lands on whatever still
    holds it) or the timer is a long deadline (a minute or more that keeps the process alive after a failure)."""
    if mod.call_name(call).endswith("setInterval"):
        return True
    args = mod.arguments(call)
    callback = ts.unwrap(args[0]) if args else None
    if callback is None:
        return False
    if callback.type not in ("arrow_function", "function_expression"):
        return ts.last(mod.node_text(callback)) not in _BENIGN_CALLBACK
    inner = [c for c in [callback, *ts.descendants(callback)] if c.type == "call_expression"]
    if any(ts.last(mod.call_name(c)) not in _BENIGN_CALLBACK for c in inner):
        return True
    aborted = [ai.receiver(mod.call_name(c)) for c in inner if ts.last(mod.call_name(c)) == "abort"]
    if not aborted:
        return False
    delay = _delay_ms(mod, args[1]) if len(args) > 1 else None
    if delay is not None and delay >= _LONG_DEADLINE_MS:
        return True
    fn = mod.enclosing_function(call)
    return fn is not None and any(ctrl and "." not in ctrl and _escapes(mod, fn, ctrl) for ctrl in aborted)


_LONG_DEADLINE_MS = 60_000


def _delay_ms(mod: TsModule, node: Node | None, depth: int = 0) -> float | None:
    """A timer delay in milliseconds: a number, arithmetic, a module constant, or the fallback of a configurable
    one (`Number(process.env.X || 45 * 60_000)`)."""
    value = ai.number_value(mod, node)
    node = ts.unwrap(node)
    if value is not None or node is None or depth > 3:
        return value
    if node.type == "identifier":
        return _delay_ms(mod, ai.module_consts(mod).get(mod.node_text(node)), depth + 1)
    if node.type == "call_expression" and mod.call_name(node) in ("Number", "parseInt", "parseFloat") and \
            mod.arguments(node):
        return _delay_ms(mod, mod.arguments(node)[0], depth + 1)
    if node.type == "binary_expression" and mod.node_text(node.child_by_field_name("operator")) in ("||", "??"):
        return _delay_ms(mod, node.child_by_field_name("right"), depth + 1)
    return None


def _exits(mod: TsModule, block: Node) -> bool:
    """Whether a catch body leaves the function (throw/return) on its last statement."""
    stmts = [c for c in block.named_children if c.type != "comment"]
    return bool(stmts) and stmts[-1].type in ("throw_statement", "return_statement")


def _never_rejects(mod: TsModule, aw: Node) -> bool:
    """Whether `aw` awaits `new Promise(executor)` whose executor takes no `reject` parameter and throws nothing:
    such a promise can only resolve, so no exception leaves the await."""
    operand = next((c for c in aw.named_children if c.type != "comment"), None)
    while operand is not None and operand.type == "parenthesized_expression":
        operand = next((c for c in operand.named_children if c.type != "comment"), None)
    if operand is None or operand.type != "new_expression":
        return False
    ctor = operand.child_by_field_name("constructor")
    args = operand.child_by_field_name("arguments")
    if ctor is None or mod.node_text(ctor) != "Promise" or args is None:
        return False
    executor = next((c for c in args.named_children if c.type != "comment"), None)
    if executor is None or executor.type not in ("arrow_function", "function_expression", "function"):
        return False
    params = executor.child_by_field_name("parameters") or executor.child_by_field_name("parameter")
    if params is None:
        return False
    n_params = 1 if params.type == "identifier" else len([c for c in params.named_children if c.type != "comment"])
    body = executor.child_by_field_name("body")
    return n_params <= 1 and body is not None and not mod.inside(mod.nodes("throw_statement"), body)


def _await_escapes(mod: TsModule, aw: Node, fn: Node, clear: Node) -> bool:
    """Whether an exception at `aw` can leave `fn` without passing `clear`: no enclosing `try` (inside `fn`) whose
    `catch` handles it and then falls through to the clear (or ends the process, taking the timer with it)."""
    if _never_rejects(mod, aw):
        return False
    for anc in mod.ancestors(aw):
        if anc == fn:
            return True
        if anc.type != "try_statement":
            continue
        body = anc.child_by_field_name("body")
        handler = anc.child_by_field_name("handler")
        block = handler.child_by_field_name("body") if handler is not None else None
        if body is None or block is None or not mod.within(aw, body):
            continue
        if "process.exit(" in mod.node_text(block):
            return False
        if not mod.within(clear, anc) and not _exits(mod, block):
            return False
    return True


@rule(CheckId.C10, lang="typescript", name="timer-cleared-on-success-only")
def timer_cleared_on_success_only(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags `const t = setTimeout(...)` (or `setInterval`) whose `clearTimeout(t)` runs after an `await` on the
    normal path only, not in `finally` or `catch`, when the timer does something on firing (kills, retries, emits;
    an interval always). When the awaited work throws or is aborted, the timer stays armed and fires into a run that
    has ended (a kill aimed at a pid that may be reused, a retry of finished work). An awaited `new Promise`
    whose executor has no `reject` and throws nothing cannot fail, so the clear after it always runs."""
    if ts.skipped_module(mod) or ("clearTimeout" not in mod.text and "clearInterval" not in mod.text):
        return
    for call in ts.calls_named(mod, "setTimeout", "setInterval"):
        callee = mod.call_name(call)
        if callee not in ("setTimeout", "setInterval", "globalThis.setTimeout", "global.setTimeout"):
            continue
        name = _timer_name(mod, call)
        fn = mod.enclosing_function(call)
        if name is None or fn is None or f"{name}.unref" in mod.node_text(fn) or _unrefed(mod, call) or \
                not _timer_effect(mod, call):
            continue
        clears = [c for c in mod.inside(mod.calls(), fn) if mod.call_name(c) in ("clearTimeout", "clearInterval")
                  and mod.arguments(c) and mod.node_text(mod.arguments(c)[0]) == name and c.start_byte > call.end_byte]
        if not clears:
            continue
        if any(mod.enclosing_function(c) != fn or ts.in_clause(mod, c, "finally_clause", fn) or
               ts.in_clause(mod, c, "catch_clause", fn) for c in clears):
            continue
        first = clears[0]
        awaits = [a for a in mod.inside(mod.nodes("await_expression"), fn)
                  if call.end_byte < a.start_byte < first.start_byte and mod.enclosing_function(a) == fn]
        risky = next((a for a in awaits if _await_escapes(mod, a, fn, first)), None)
        if risky is None:
            continue
        yield Hit(
            node=call,
            claim=f"timer `{name}` is cleared only after `{_short(mod, risky, 50)}` succeeds (line "
                  f"{mod.line(first)}); a throw or abort there leaves it armed",
            consequence="after a failed or stopped step the timer still fires into a run that has ended, and keeps "
                        "the process alive until it does",
            direction=f"clear `{name}` in a `finally` block",
        )


def _unrefed(mod: TsModule, call: Node) -> bool:
    """`setTimeout(...).unref()`: the timer no longer keeps the process alive."""
    parent = call.parent
    return parent is not None and parent.type == "member_expression" and \
        mod.node_text(parent.child_by_field_name("property")) == "unref"


def _unstored_timer(mod: TsModule, executor_owner: Node | None) -> Node | None:
    """A `setTimeout` in a `new Promise(...)` executor whose handle is not kept (so it cannot be cleared), that
    rejects with a timeout after a real delay (a short grace `sleep` that resolves is not reported)."""
    if executor_owner is None or executor_owner.type != "new_expression" or mod.call_name(executor_owner) != "Promise":
        return None
    for call in mod.inside(mod.calls(), executor_owner):
        if mod.call_name(call) not in ("setTimeout", "globalThis.setTimeout") or _kept_somewhere(mod, call) or \
                _unrefed(mod, call):
            continue
        args = mod.arguments(call)
        delay = mod.node_text(args[1]).replace("_", "") if len(args) > 1 else "0"
        if delay.isdigit() and int(delay) < 1000:
            continue
        if args and re.search(r"\breject\b|\bthrow\b|Error\(", mod.node_text(args[0])):
            return call
    return None


def _module_function(mod: TsModule, name: str) -> Node | None:
    for fn in mod.functions():
        if mod.function_name(fn) == name and fn.type != "method_definition":
            return fn
    return None


def _race_timer(mod: TsModule, element: Node) -> Node | None:
    """The uncleared timer behind one element of a `Promise.race([...])`."""
    node = ts.unwrap(element)
    if node is None:
        return None
    if node.type == "identifier":
        node = ts.unwrap(ts.resolve_value(mod, node))
    if node is not None and node.type == "call_expression":
        helper = _module_function(mod, mod.call_name(node))
        if helper is None:
            return None
        news = [n for n in mod.inside(mod.nodes("new_expression"), helper) if mod.call_name(n) == "Promise"]
        return next((t for n in news if (t := _unstored_timer(mod, n)) is not None), None)
    return _unstored_timer(mod, node)


@rule(CheckId.C10, lang="typescript", name="race-timeout-never-cleared")
def race_timeout_never_cleared(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags `Promise.race([work, new Promise((_, reject) => setTimeout(() => reject(...), ms))])` (directly, or
    through a local `timeout(ms)` helper) whose timer handle is never kept. When the work wins, nothing can clear the
    timer: every call leaves one armed for the full timeout, holding its closure and keeping a CLI from exiting."""
    if ts.skipped_module(mod) or "Promise.race" not in mod.text or "setTimeout" not in mod.text:
        return
    for call in ts.calls_named(mod, "race"):
        if mod.call_name(call) != "Promise.race":
            continue
        args = mod.arguments(call)
        items = args[0].named_children if args and args[0].type == "array" else []
        for element in items:
            timer = _race_timer(mod, element)
            if timer is None:
                continue
            yield Hit(
                node=call,
                claim=f"the timeout arm `{_short(mod, element, 50)}` of `Promise.race` starts a `setTimeout` (line "
                      f"{mod.line(timer)}) whose handle is never kept, so nothing clears it when the work wins",
                consequence="every call leaves a timer armed for the whole timeout: the process cannot exit until it "
                            "fires, and the rejection lands in a step that already finished",
                direction="keep the handle and `clearTimeout` it in `finally` (or use `AbortSignal.timeout(ms)` / "
                          "`timers/promises` `setTimeout(ms, undefined, { signal })`)",
            )
            break


def _loop_of(mod: TsModule, node: Node, fn: Node | None) -> Node | None:
    for anc in mod.ancestors(node):
        if anc == fn or anc.type in FUNCTION_TYPES:
            return None
        if anc.type in LOOP_TYPES:
            return anc
    return None


# ---------------------------------------------------------------- waits that ignore the signal
_SLEEP_NAMES = {"sleep", "delay", "wait", "pause", "backoff", "snooze", "waitFor", "sleepMs", "delayMs"}
_TIMER_PROMISES = ("timers/promises", "node:timers/promises")


def _sleep_delay(mod: TsModule, awaited: Node) -> tuple[str, Node | None] | None:
    """(how the wait is written, its delay) when an awaited expression only waits: `sleep(ms)`, `delay(ms)`,
    `setTimeout(ms)` of `timers/promises`, `new Promise((r) => setTimeout(r, ms))`; None otherwise or when it is
    handed a signal."""
    node = ts.unwrap(awaited)
    if node is None:
        return None
    if node.type == "call_expression":
        name = mod.call_name(node)
        tail = ts.last(name)
        args = mod.arguments(node)
        timers = tail == "setTimeout" and ts.imported_from(mod, name.split(".")[0]) in _TIMER_PROMISES
        if not (tail in _SLEEP_NAMES or timers) or ts.passes_signal(mod, node, 2 if timers else None):
            return None
        return f"{name}(...)", args[0] if args else None
    if node.type == "new_expression" and mod.call_name(node) == "Promise":
        text = mod.node_text(node)
        timers = [c for c in ts.descendants(node) if c.type == "call_expression" and mod.call_name(c) == "setTimeout"]
        if len(timers) != 1 or re.search(r"[sS]ignal|abort|reject", text):
            return None
        args = mod.arguments(timers[0])
        return "new Promise(... setTimeout ...)", args[1] if len(args) > 1 else None
    return None


def _local_controller(mod: TsModule, fn: Node | None, expr: str) -> bool:
    """`ctrl.signal` of a `const ctrl = new AbortController()` made in `fn` itself."""
    root = expr.split(".", 1)[0]
    if fn is None or not expr.endswith(".signal") or "." in expr[len(root) + 1:-len(".signal")]:
        return False
    return bool(re.search(rf"\b{re.escape(root)}\s*=\s*new\s+AbortController\b", mod.node_text(fn)))


@rule(CheckId.C10, lang="typescript", name="backoff-sleep-ignores-abort-signal")
def backoff_sleep_ignores_abort_signal(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a wait inside a retry or polling loop (`await sleep(backoff)`, `await new Promise((r) =>
    setTimeout(r, ms))`, `timers/promises` `setTimeout(ms)`) that is not given the `AbortSignal` available there,
    in a loop that never checks the signal. Stop has to wait out the whole backoff, and then the loop goes round
    again and starts the next attempt as if nothing had been asked of it."""
    if ts.skipped_module(mod) or not _may_have_signal(mod.text) or "await" not in mod.text:
        return
    for aw in mod.nodes("await_expression"):
        inner = aw.named_children[0] if aw.named_children else None
        found = _sleep_delay(mod, inner) if inner is not None else None
        if found is None:
            continue
        what, delay = found
        ms = _delay_ms(mod, delay) if delay is not None else None
        named = ts.unwrap(delay)
        if ms is None and named is not None and named.type == "identifier":
            ms = _delay_ms(mod, ts.resolve_value(mod, named))  # a local `const retryDelay = 500`
        if delay is None or (ms is not None and ms < 1000):
            continue  # a short pause: stop is late by a moment at most
        fn = mod.enclosing_function(aw)
        loop = _loop_of(mod, aw, fn)
        if loop is None or re.search(r"\.aborted\b|throwIfAborted|[sS]ignal\)", mod.node_text(loop)):
            continue
        if loop.type == "for_in_statement" and not ts.in_clause(mod, aw, "catch_clause", loop):
            continue  # a pause between the items of a list, not a retry or polling wait
        # the run's stop signal, not a controller this function makes for its own timeout
        signals = [sig for sig in _available_signals(mod, project, aw) if not _local_controller(mod, fn, sig.expr)]
        if not signals or ts.in_abort_handler(mod, aw):
            continue
        sig = signals[0]
        yield _signal_hit(
            sig, node=aw,
            claim=f"the wait `{what}` in this loop ignores `{sig.expr}`, and the loop never checks it",
            consequence="pressing stop waits out the whole backoff, then the loop starts the next attempt as if no "
                        "stop had been asked for",
            direction=f"make the wait abortable (`setTimeout(ms, undefined, {{ signal: {sig.expr} }})` from "
                      f"`timers/promises`, or a sleep that rejects on abort) and check `{sig.expr}.aborted` in the "
                      "loop",
        )


_CLIENT_HOLDER = re.compile(r"(client|api|provider|backend|llm|model|anthropic|openai|gemini|claude|ollama|wire)$",
                            re.I)
"""Receivers that hold a model client (`this.client`, `this.gemini`, `deps.llm`): a method call on one reaches the
client class even when the client is injected and its type is not known."""


def _signal_free_callee(mod: TsModule, call: Node, index: int) -> Node | None:
    """The named function around a model request that has no signal to pass: no parameter, local or owned
    controller provides one, and no options spread could carry one in (`{ ...opts }`)."""
    fn = mod.enclosing_function(call)
    while fn is not None and mod.function_name(fn) == "<anonymous>":
        fn = mod.enclosing_function(fn)
    if fn is None or mod.function_name(fn) in ("constructor", "<anonymous>"):
        return None
    if re.search(r"ignal|abort|cancel", mod.node_text(fn.child_by_field_name("parameters")), re.I):
        return None
    args = mod.arguments(call)
    if index < len(args) and (args[index].type != "object" or
                               any(c.type == "spread_element" for c in args[index].named_children)):
        return None  # options passed in from elsewhere, or spread from the caller: a signal may ride along
    return fn


def _callers_with_signal(mod: TsModule, project: TsProject, fn: Node) -> list[tuple[TsModule, Node, ts.SignalRef]]:
    """Call sites of `fn` (resolved, or `this.client.fn(...)` on a client-named receiver) where the caller has an
    abort signal of its own."""
    name = mod.function_name(fn)
    sites = list(ai.callers_of(project, mod, fn))
    if fn.type == "method_definition":
        for other in project.modules.values():
            if ts.skipped_module(other):
                continue
            for call in ts.calls_named(other, name):
                recv = ai.receiver(ai.cname(other, call))
                if recv and recv not in ("this", "self") and _CLIENT_HOLDER.search(ai.last(recv)) and \
                        not any(c.id == call.id for _, c in sites):
                    sites.append((other, call))
    out: list[tuple[TsModule, Node, ts.SignalRef]] = []
    for other, call in sites:
        signals = [s for s in _available_signals(other, project, call, model=True) if s.declared]
        if signals:
            out.append((other, call, signals[0]))
    return out


_MODEL_PATH = re.compile(r":(stream)?generateContent\b|/chat/completions\b|/v1/messages\b|/v1/responses\b|"
                         r"\}/responses\b|/api/chat\b|/api/generate\b|api\.anthropic\.com|api\.openai\.com|"
                         r"generativelanguage\.googleapis\.com")


def _model_path_request(mod: TsModule, call: Node) -> bool:
    """A request to a model endpoint on any HTTP client (`this.http.post(`models/${m}:generateContent`)`)."""
    args = mod.arguments(call)
    first = ts.unwrap(args[0]) if args else None
    if first is not None and first.type == "identifier":
        first = ts.unwrap(ts.resolve_value(mod, first))
    return first is not None and first.type in ("string", "template_string", "binary_expression") and \
        bool(_MODEL_PATH.search(mod.node_text(first)))


@rule(CheckId.C10, lang="typescript", name="model-client-takes-no-signal")
def model_client_takes_no_signal(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a model request (SDK call, `fetch`/ky/axios/got POST to a model endpoint) inside a client function or
    method that takes no abort signal at all, while the code that calls it (the agent loop) owns one: stop aborts
    the caller's controller, but the request in flight cannot hear it and runs (and streams) to the end."""
    if ts.skipped_module(mod):
        return
    seen: set[int] = set()
    for call in ts.calls_named(mod, *_REQUEST_SHORTS):
        kind = _request_kind(mod, call) if call.type == "call_expression" else None
        if kind is None or not (_is_model(mod, call) or _model_path_request(mod, call)) or \
                ts.passes_signal(mod, call, kind[1]):
            continue
        if _available_signals(mod, project, call, model=True):
            continue  # judged by `request-ignores-abort-signal`
        fn = _signal_free_callee(mod, call, kind[1])
        if fn is None or fn.id in seen:
            continue
        callers = _callers_with_signal(mod, project, fn)
        if not callers:
            continue
        seen.add(fn.id)
        other, site, sig = callers[0]
        yield Hit(
            node=call,
            claim=f"`{kind[0]}(...)` in `{mod.function_name(fn)}` is issued without an abort signal, and "
                  f"`{mod.function_name(fn)}` takes none, although its caller ({other.path}:{other.line(site)}) has "
                  f"`{sig.expr}`",
            consequence="pressing stop aborts the caller's controller, but the model request in flight never hears "
                        "of it: the run keeps waiting for (and paying for) the reply until it completes",
            direction=f"give `{mod.function_name(fn)}` a `signal` parameter, pass it to the request "
                      f"(`{{ signal }}`), and pass `{sig.expr}` at the call site",
        )
