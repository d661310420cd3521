"""C11 · Timeout layering — TypeScript/JavaScript rules.

Shapes detected:
- `fetch-without-timeout`: `fetch(url)` / `axios.get(url)` / `got(url)` / `https.get(url)` in tool code with no
  timeout and no budget around it: no signal, or only the caller's stop signal where the module (or the whole
  project, which never gives a signal a deadline) shows it carries no deadline, or the `ai`
  package's tool `abortSignal` where no model run of the project gives it one (fetch and axios wait indefinitely by
  default; a dispatcher that merges a timer-aborted controller into the signal every tool gets is a deadline); an `axios.create` client without `timeout` is reported at the client.
- `exec-without-timeout`: `execSync(cmd)` / `exec(cmd, cb)` / `spawnSync` / `execa(...)` / `spawn` / `Bun.spawn`
  without a kill timer (also one in the function around a callback holding the child), in tool code, with no
  `timeout` and no budget around it.
- `inner-timeout-below-tool-budget`: `AbortSignal.timeout(10_000)`, a kill/abort timer, or a client/process/SDK
  timeout option (`timeout`, undici's `headersTimeout`/`bodyTimeout`, got's `timeout: { request }`) inside a tool run
  under a longer budget (`Promise.race`, `withTimeout(p, 60_000)`, `withDeadline(name, 60_000, fn)`, or any helper
  that runs the work it is given under its own timer, with the duration from an argument or from the tool's registry
  entry and a default, `spec.budgetMs ?? 60_000`, or a dispatcher's `setTimeout(() => deadline.abort(), ms)` whose
  signal the tool it looked up in a dispatch table receives), its expiry not mapped and not retried by the client; reported at the
  budget when the timeout sits in a helper the budget calls. A client configured outside the tool (`const api =
  got.extend({ timeout, retry })` in a plugin factory or at module level) counts with all its attempts.
- `timeout-abort-reported-as-cancel`: a timeout folded into the cancel signal (`AbortSignal.any([signal,
  AbortSignal.timeout(ms)])`, `setTimeout(() => controller.abort(), ms)`, and the signals merged from them) or a
  budget around a call, whose expiry a catch reports as "cancelled"; also a timer that cancels a cancellation source
  (`setTimeout(() => source.cancel(), ms)`) followed by `if (source.token.isCancellationRequested) return
  "cancelled"`, reported at the timer.

Tool code is a function registered as a tool (`tool({ execute })`, `{ name, description, execute }`, a tools
map, `registry.set(name, fn)`), a `*Tool` class method, a tool dispatcher, or a function those call; also an
Electron main-process handler (`ipcMain.handle(channel, fn)`) whose channel tool code invokes across the bridge
(`ipcRenderer.invoke(channel)`, or a preload method exposed with `contextBridge.exposeInMainWorld`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from tree_sitter import Node

from harness_audit.findings import CheckId, Verdict
from harness_audit.static.lang.typescript import FUNCTION_TYPES, TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts._agent_idioms import (
    FuncRef,
    Key,
    callers_of,
    calls_matching,
    calls_named,
    catch_clauses_around,
    cname,
    code_text,
    fn_label,
    imports_of,
    in_tool_code,
    is_test_module,
    iter_subtree,
    key,
    last,
    memo,
    mod_memo,
    nodes_in,
    number_value,
    promise_catch_around,
    receiver,
    resolve_call,
    same,
    string_value,
    tool_functions,
    unwrap,
)
from harness_audit.static.rules_ts._ts_idioms import dispatch_table, in_abort_handler

_FETCH_NAMES = {"fetch", "globalThis.fetch", "window.fetch", "undici.fetch", "self.fetch"}
_FETCH_MODULES = ("node-fetch", "undici", "cross-fetch", "isomorphic-fetch", "isomorphic-unfetch")
_AXIOS_VERBS = {"get", "delete", "head", "options", "post", "put", "patch", "request", "postForm", "putForm"}
_AXIOS_DATA_VERBS = {"post", "put", "patch", "postForm", "putForm"}
_BOUND_KEYS = {"timeout", "signal", "cancelToken", "abortSignal", "deadline", "timeoutMs", "timeout_ms"}
_CHILD_PROCESS = ("child_process", "node:child_process")
_EXEC_FUNCS = {"execSync", "exec", "execFile", "execFileSync", "spawnSync", "spawn"}
_EXECA_FUNCS = {"execa", "execaSync", "execaCommand", "execaCommandSync", "execaNode"}
_BUN_SPAWN = {"Bun.spawn", "Bun.spawnSync"}
"""Bun's process API: `Bun.spawn(cmd, { timeout, signal })` or `Bun.spawn({ cmd, timeout })`."""
_BUDGET_NAME = re.compile(r"(^|\.)(p?[Tt]imeout|promiseTimeout|raceTimeout|timeoutAfter|timeLimit|raceWithTimeout|"
                          r"runWithTimeout|with\w*(Timeout|Deadline|Budget|TimeLimit))$")
_BUDGET_LAST = re.compile(r"^(race|p?[Tt]imeout|promiseTimeout|raceTimeout|timeoutAfter|timeLimit|raceWithTimeout|"
                          r"runWithTimeout|with\w*(Timeout|Deadline|Budget|TimeLimit))$")
_TIMEOUT_HANDLING = re.compile(r"TimeoutError|AbortError|ETIMEDOUT|ECONNABORTED|ESOCKETTIMEDOUT|ETIME\b|timed[ _-]?out|"
                               r"timeout|Timeout|killed|SIGTERM|SIGKILL|isCancel|\.code\b", re.I)
_DERIVED = re.compile(r"(remaining|deadline|left|budget|elapsed)", re.I)


# ---------------------------------------------------------------- options and budgets
def _options_verdict(mod: TsModule, node: Node | None, call: Node) -> bool | None:
    """Whether an options argument bounds the call: True (a timeout or signal), False (none), None (unknown)."""
    node = unwrap(node)
    if node is None:
        return False
    if node.type == "identifier":
        node = _local_value(mod, node, call)
        if node is None:
            return None
    if node.type != "object":
        return None
    if any(c.type == "spread_element" for c in node.named_children):
        return None
    keys = mod.object_keys(node)
    for k, value in keys.items():
        if k in _BOUND_KEYS:
            inner = unwrap(value)
            if inner is not None and (inner.type in ("undefined", "null") or number_value(mod, inner) == 0):
                continue  # `timeout: 0` is axios's and execSync's "no timeout"
            return True
    return False


def _local_value(mod: TsModule, ident: Node, at: Node) -> Node | None:
    """The value a local `const name = …` (in the same function, before `at`) or a module constant holds."""
    name = mod.node_text(ident)
    fn = mod.enclosing_function(at)
    scope_nodes = nodes_in(mod, fn, "variable_declarator") if fn is not None else mod.nodes("variable_declarator")
    found: Node | None = None
    for decl in scope_nodes:
        if decl.start_byte > at.start_byte:
            break
        if mod.node_text(decl.child_by_field_name("name")) == name:
            found = decl.child_by_field_name("value")
    if found is None and fn is not None:
        found = mod_memo(mod, "c11-module-constants", lambda: _module_constants(mod)).get(name)
    return unwrap(found)


def _module_constants(mod: TsModule) -> dict[str, Node | None]:
    """Name → value of each declarator outside every function (the last one wins), built once per module:
    `_local_value` asks for many names, and a bundled module holds thousands of declarators."""
    out: dict[str, Node | None] = {}
    for decl in mod.nodes("variable_declarator"):
        if mod.enclosing_function(decl) is None:
            out[mod.node_text(decl.child_by_field_name("name"))] = decl.child_by_field_name("value")
    return out


def _budget_call(mod: TsModule, call: Node) -> bool:
    """`Promise.race([...])` with a timer in it, or a `withTimeout(p, ms)`/`pTimeout(p, ...)` style wrapper."""
    name = cname(mod, call)
    if name == "Promise.race":
        return bool(re.search(r"setTimeout|timeout|Timeout|delay|sleep|deadline", mod.node_text(call)))
    if name == "AbortSignal.timeout":
        return False  # a signal, not a budget around a call
    return bool(_BUDGET_NAME.search(name)) and len(mod.arguments(call)) >= 1


def _under_budget(mod: TsModule, node: Node) -> bool:
    """Whether `node` runs inside a budget in its own function."""
    for anc in mod.ancestors(node):
        if anc.type in FUNCTION_TYPES:
            # an arrow passed to the budget (`withTimeout(() => fetch(u), ms)`) is still under it
            parent = anc.parent
            return parent is not None and parent.type == "arguments" and parent.parent is not None and \
                parent.parent.type == "call_expression" and _budget_call(mod, parent.parent)
        if anc.type == "call_expression" and _budget_call(mod, anc):
            return True
    return False


@dataclass(frozen=True, slots=True, kw_only=True)
class _Budget:
    """A time budget around some calls."""

    module: TsModule
    """Where it is."""
    node: Node
    """The `Promise.race` / `withTimeout` call."""
    ms: float | None
    """Its value in milliseconds when it resolves to a number."""
    setting: str
    """The value as written."""
    bounded: Node
    """The argument it bounds (the work: a function, a call, a promise)."""
    roots: tuple[FuncRef, ...]
    """Project functions run under it."""
    covered: frozenset[Key]
    """The roots and the project functions they call directly."""
    dynamic: bool
    """Whether it bounds a tool picked at run time (then it bounds every tool)."""
    helpers: frozenset[Key] = frozenset()
    """The project functions that implement the budget (`withBudget` itself): their timer is the budget."""
    per_tool: str = ""
    """The key of a registry entry that overrides the value for one tool (`tool.budgetMs ?? 60_000`)."""
    via_signal: bool = False
    """A deadline handed to the work as its abort signal (`setTimeout(() => budget.abort(), ms)` merged into the
    signal the tool gets): it bounds only work that honours the signal, so it never counts as a budget around
    a request or process that ignores it."""


_DYNAMIC_TOOL = re.compile(r"(tools?|handlers?|registry|toolMap|functions|impl|fn|func|handler|tool)"
                           r"(\[[^\]]+\]|\.get\([^)]*\)[!?]?)?\.?(execute|run|call|invoke|handler|fn|func)?\s*\(",
                           re.I)


def _bounded_arg(mod: TsModule, call: Node) -> Node | None:
    """The work a budget bounds: the first function or call among its arguments (`withDeadline(name, ms, () =>
    work())`, `withTimeout(work(), ms)`), else its first argument (`pTimeout(promise, {...})`)."""
    args = mod.arguments(call)
    if cname(mod, call) != "Promise.race":
        for arg in args:
            inner = unwrap(arg)
            if inner is not None and (inner.type in FUNCTION_TYPES or inner.type == "call_expression"):
                return arg
    return args[0] if args else None


def _budget_value(mod: TsModule, call: Node) -> Node | None:
    """The expression that gives a budget its duration."""
    args = mod.arguments(call)
    if cname(mod, call) != "Promise.race":
        bounded = _bounded_arg(mod, call)
        rest: list[Node] = []
        for arg in args:
            inner = unwrap(arg)
            if inner is not None and not same(arg, bounded) and \
                    inner.type not in ("string", "template_string", *FUNCTION_TYPES):
                rest.append(arg)
        numeric = next((a for a in rest if number_value(mod, a) is not None), None)
        if numeric is not None:
            return numeric
        for arg in rest:
            inner = unwrap(arg)
            if inner is not None and inner.type == "object":
                keys = mod.object_keys(inner)
                return keys.get("milliseconds") or keys.get("ms") or keys.get("timeout") or keys.get("timeoutMs")
        return next((a for a in rest if not re.search(r"[sS]ignal$", mod.node_text(a))), None)
    if cname(mod, call) == "Promise.race":
        parts: list[Node] = [call]
        items = unwrap(args[0]) if args else None
        for element in items.named_children if items is not None and items.type == "array" else []:
            inner = unwrap(element)
            if inner is not None and inner.type == "identifier":
                held = _local_value(mod, inner, call)  # `const expired = new Promise(… setTimeout(…, ms))`
                if held is not None:
                    parts.append(held)
        for sub in (n for part in parts for n in iter_subtree(part)):
            if sub.type == "call_expression":
                name = last(cname(mod, sub))
                sub_args = mod.arguments(sub)
                if name == "setTimeout" and len(sub_args) > 1:
                    return sub_args[1]
                if re.search(r"(timeout|delay|sleep|deadline)", name, re.I) and sub_args and \
                        sub_args[0].type not in FUNCTION_TYPES:
                    return sub_args[0]
        return None
    for arg in args[1:]:
        inner = unwrap(arg)
        if inner is not None and inner.type == "object":
            keys = mod.object_keys(inner)
            return keys.get("milliseconds") or keys.get("ms") or keys.get("timeout") or keys.get("timeoutMs")
        return arg
    return None


def _budgets(project: TsProject) -> list[_Budget]:
    """Every budget in the project with the functions it bounds (computed once per project)."""

    def build() -> list[_Budget]:
        out: list[_Budget] = []
        structural = _structural_helpers(project)
        helper_names = {ref.name for ref in structural.values()}
        for mod in project.modules.values():
            if is_test_module(mod):
                continue
            named = calls_matching(mod, _BUDGET_LAST) if "race" in mod.text or "imeout" in mod.text else []
            by_shape = [c for c in calls_named(mod, helper_names) if not _budget_call(mod, c) and any(
                key(r.module, r.node) in structural for r in resolve_call(mod, project, c))] if helper_names else []
            for call in sorted({*named, *by_shape}, key=lambda n: n.start_byte):
                if call in named and not _budget_call(mod, call):
                    continue
                bounded = _bounded_arg(mod, call)
                if bounded is None or _wrapper_body(mod, call, bounded):
                    continue
                value = _budget_value(mod, call)
                ms = number_value(mod, value) if value is not None else None
                setting = mod.node_text(value) if value is not None else ""
                helpers = resolve_call(mod, project, call) if cname(mod, call) != "Promise.race" else []
                per_tool = ""
                if ms is None and helpers:
                    # the duration is set inside the helper: from one of its parameters, or from the tool's
                    # registry entry with a default (`const ms = tool.budgetMs ?? 60_000`)
                    ms, setting, per_tool = _helper_budget(mod, call, helpers)
                roots: list[FuncRef] = []
                dynamic = False
                for sub in iter_subtree(bounded):
                    if sub.type != "call_expression":
                        continue
                    if _DYNAMIC_TOOL.match(mod.node_text(sub.child_by_field_name("function")) + "("):
                        dynamic = True
                    roots.extend(resolve_call(mod, project, sub))
                    fn_node = sub.child_by_field_name("function")
                    if fn_node is not None and not resolve_call(mod, project, sub):
                        if fn_node.type == "member_expression":
                            fn_node = fn_node.child_by_field_name("object")  # `spec.run(args)`
                        if fn_node is not None and fn_node.type == "identifier":
                            dynamic = dynamic or _bound_from_registry(mod, sub, fn_node)
                covered = {key(r.module, r.node) for r in roots}
                for r in roots:
                    for inner in nodes_in(r.module, r.node, "call_expression"):
                        covered.update(key(t.module, t.node) for t in resolve_call(r.module, project, inner))
                out.append(_Budget(module=mod, node=call, ms=ms, setting=setting, bounded=bounded,
                                   roots=tuple(roots), covered=frozenset(covered), dynamic=dynamic,
                                   helpers=frozenset(key(h.module, h.node) for h in helpers), per_tool=per_tool))
            out.extend(_signal_budgets(mod, project))
        return out

    return memo(project, "c11_budgets", build)


def _signal_budgets(mod: TsModule, project: TsProject) -> list[_Budget]:
    """Deadlines a dispatcher hands to the tool it runs as the tool's abort signal: a local controller aborted by a
    timer (`const budget = new AbortController(); setTimeout(() => budget.abort(), TOOL_BUDGET_MS)`) whose signal
    (directly or merged: `AbortSignal.any([ctx.signal, budget.signal])`) is passed to a call of the same function,
    `impl(args, { ...ctx, signal })`, where `impl` is the tool the model named."""
    if "abort" not in mod.text or "setTimeout" not in mod.text:
        return []
    out: list[_Budget] = []
    for timer in calls_named(mod, ("setTimeout",)):
        args = mod.arguments(timer)
        cb = unwrap(args[0]) if args else None
        fn = mod.enclosing_function(timer)
        if cb is None or cb.type not in FUNCTION_TYPES or len(args) < 2 or fn is None:
            continue
        aborted = re.fullmatch(r"\s*\{?\s*([A-Za-z_$][\w$]*)\.abort\(\s*\)\s*;?\s*\}?\s*",
                               mod.node_text(cb.child_by_field_name("body")))
        if aborted is None:
            continue
        controller = aborted.group(1)
        carriers = {f"{controller}.signal"}
        for decl in nodes_in(mod, fn, "variable_declarator"):
            value, name = decl.child_by_field_name("value"), decl.child_by_field_name("name")
            if value is not None and name is not None and name.type == "identifier" and \
                    f"{controller}.signal" in mod.node_text(value):
                carriers.add(mod.node_text(name))  # `const signal = AbortSignal.any([ctx.signal, budget.signal])`
        for call in nodes_in(mod, fn, "call_expression"):
            if call.start_byte < timer.end_byte or mod.enclosing_function(call) != fn:
                continue
            callee = call.child_by_field_name("function")
            passes = any(re.search(rf"(?<![\w$.]){re.escape(c)}(?![\w$])", mod.node_text(a)) and
                         unwrap(a) is not None and unwrap(a).type == "object"
                         for a in mod.arguments(call) for c in carriers)
            if not passes or callee is None or callee.type != "identifier":
                continue
            if not (_bound_from_registry(mod, call, callee) or _dispatched_tool(mod, callee)):
                continue
            delay = unwrap(args[1])
            out.append(_Budget(module=mod, node=timer, ms=number_value(mod, delay), setting=mod.node_text(delay),
                               bounded=call, roots=(), covered=frozenset(), dynamic=True, via_signal=True))
            break
    return out


_RETRY_WRAPPER = re.compile(r"(^|\.)(retry|pRetry|asyncRetry|backoff|withRetry|retrying)$", re.I)


def _retried_until_aborted(mod: TsModule, node: Node) -> bool:
    """A request timeout (`{ timeout: 8_000, signal: ctx.signal }`) inside a retry wrapper's callback, whose request
    also carries the tool's signal: its expiry is retried, and the dispatcher's deadline (arriving through that
    signal) is what ends the attempts, so the inner expiry does not reach the model."""
    call = next((a for a in mod.ancestors(node) if a.type in ("call_expression", "new_expression")), None)
    if call is None or not any(re.search(r"(?<![\w$])(signal|abortSignal)\b(?!\s*:\s*AbortSignal\.timeout)",
                                         code_text(mod, a)) for a in mod.arguments(call)):
        return False
    for fn in (a for a in mod.ancestors(call) if a.type in FUNCTION_TYPES):
        holder = fn.parent
        if holder is not None and holder.type == "arguments" and holder.parent is not None and \
                _RETRY_WRAPPER.search(cname(mod, holder.parent)):
            return True
    return False


def _dispatched_tool(mod: TsModule, ident: Node) -> bool:
    """`const impl = IMPLS[name]` where `IMPLS` is a tool dispatch table (see `dispatch_table`)."""
    value = _local_value(mod, ident, ident)
    if value is None or value.type != "subscript_expression":
        return False
    table = value.child_by_field_name("object")
    return table is not None and table.type == "identifier" and dispatch_table(mod, mod.node_text(table))


def _structural_helpers(project: TsProject) -> dict[Key, FuncRef]:
    """Project functions that run a function (or promise) they are given under a timer of their own, whatever
    their name (`runBudgeted(name, spec, ctx, fn)`): a parameter that is called, awaited or raced, and a
    `setTimeout` that aborts or rejects, or an `AbortSignal.timeout`, in the same body."""

    def build() -> dict[Key, FuncRef]:
        out: dict[Key, FuncRef] = {}
        for mod in project.modules.values():
            if is_test_module(mod) or "imeout" not in mod.text:
                continue
            for fn in mod.functions():
                name = mod.function_name(fn)
                if name == "<anonymous>" or fn.type == "arrow_function" and fn.parent is not None and \
                        fn.parent.type == "arguments":
                    continue
                body = code_text(mod, fn.child_by_field_name("body"))
                if not re.search(r"setTimeout\s*\([\s\S]*?(\.abort\s*\(|reject\s*\()|AbortSignal\.timeout\s*\(", body):
                    continue
                work = [mod.node_text(p) for p in _param_nodes(fn) if p.type == "identifier"]
                if any(re.search(rf"(?<![\w$.]){re.escape(w)}\s*\(|await\s+{re.escape(w)}\b|"
                                 rf"Promise\.race\(\s*\[[^\]]*(?<![\w$.]){re.escape(w)}\b", body) for w in work):
                    out[key(mod, fn)] = FuncRef(mod, fn, name)
        return out

    return memo(project, "c11_structural_helpers", build)


def _helper_budget(mod: TsModule, call: Node, helpers: list[FuncRef]) -> tuple[float | None, str, str]:
    """(ms, setting, per-tool key) of a budget whose helper sets the timer: `setTimeout(abort, ms)` or
    `AbortSignal.timeout(ms)` in the helper, with `ms` one of its parameters (the call's argument gives it) or a
    local `const ms = tool.budgetMs ?? 60_000` (a per-tool registry value with a default). Unknown: (None, "", "")."""
    args = mod.arguments(call)
    for ref in helpers:
        hm, fn = ref.module, ref.node
        names = [hm.node_text(p) for p in _param_nodes(fn)]
        for sub in nodes_in(hm, fn, "call_expression"):
            name = cname(hm, sub)
            sub_args = hm.arguments(sub)
            if name == "setTimeout" and len(sub_args) > 1:
                delay = unwrap(sub_args[1])
            elif name == "AbortSignal.timeout" and sub_args:
                delay = unwrap(sub_args[0])
            else:
                continue
            if delay is None:
                continue
            ms = number_value(hm, delay)
            if ms is not None:
                return ms, hm.node_text(delay), ""
            if delay.type != "identifier":
                return None, "", ""
            if hm.node_text(delay) in names:
                index = names.index(hm.node_text(delay))
                if index < len(args):
                    return number_value(mod, args[index]), mod.node_text(args[index]), ""
                return None, "", ""
            held = _local_value(hm, delay, sub)
            if held is not None and held.type == "binary_expression" and \
                    hm.node_text(held.child_by_field_name("operator")) in ("??", "||"):
                left = unwrap(held.child_by_field_name("left"))
                default = number_value(hm, held.child_by_field_name("right"))
                if left is not None and left.type == "member_expression" and default is not None:
                    return default, hm.node_text(held.child_by_field_name("right")), \
                        hm.node_text(left.child_by_field_name("property"))
            return None, "", ""
    return None, "", ""


def _param_nodes(fn: Node) -> list[Node]:
    """The parameters of a function in order (the pattern of each; `x => …` has one)."""
    params = fn.child_by_field_name("parameters")
    if params is None:
        single = fn.child_by_field_name("parameter")
        return [single] if single is not None else []
    out: list[Node] = []
    for item in params.named_children:
        if item.type in ("required_parameter", "optional_parameter"):
            item = item.child_by_field_name("pattern") or item
        if item.type == "assignment_pattern":
            item = item.child_by_field_name("left") or item
        out.append(item)
    return out


def _entry_budget(mod: TsModule, fn: Node, budget: _Budget) -> _Budget:
    """The budget as it applies to one tool: its registry entry's own value for `budget.per_tool` when it has one
    (`{ run: fetchJson, budgetMs: 20_000 }`), the helper's default otherwise."""
    if not budget.per_tool:
        return budget
    entry = _entry_object(mod, fn)
    value = mod.object_keys(entry).get(budget.per_tool) if entry is not None else None
    if value is None:
        return budget
    return replace(budget, ms=number_value(mod, value), setting=mod.node_text(value))


def _entry_object(mod: TsModule, fn: Node) -> Node | None:
    """The object literal that registers `fn` as a tool: it defines it (`{ async run() {} }`, `{ run: async () =>
    … }`) or names it (`{ run: fetchJson }`)."""
    parent = fn.parent
    if parent is not None and parent.type == "pair":
        parent = parent.parent
    if parent is not None and parent.type == "object":
        return parent
    name = mod.function_name(fn)
    if name == "<anonymous>":
        return None
    for pair in mod.nodes("pair"):
        value = unwrap(pair.child_by_field_name("value"))
        if value is not None and value.type == "identifier" and mod.node_text(value) == name and \
                pair.parent is not None and pair.parent.type == "object":
            return pair.parent
    return None


def _wrapper_body(mod: TsModule, call: Node, bounded: Node) -> bool:
    """The race inside a budget helper itself (`Promise.race([fn(signal), deadline])` in `withBudget(name, ms,
    fn)`): the work is the helper's parameter, so the budgets are the helper's calls, not this race."""
    fn = mod.enclosing_function(call)
    work = unwrap(bounded)
    if fn is None or work is None:
        return False
    if work.type == "array":
        work = unwrap(work.named_children[0]) if work.named_children else None
    if work is not None and work.type == "call_expression":
        work = work.child_by_field_name("function")
    return work is not None and work.type == "identifier" and mod.node_text(work) in mod.params(fn)


def _bound_from_registry(mod: TsModule, at: Node, ident: Node) -> bool:
    """`const handler = tools[name]` / `registry.get(name)` before `handler(args)` (in the function or one that
    encloses the callback the budget runs)."""
    value = _local_value(mod, ident, at)
    scope: Node | None = mod.enclosing_function(at)
    while value is None and scope is not None:
        value = _local_value(mod, ident, scope)
        scope = mod.enclosing_function(scope)
    if value is None:
        return False
    # `tools[name]`, `registry.get(name)`, or a wrapper's `const original = agentTool.execute` (every tool wrapped)
    return bool(re.search(r"(tools?|handlers?|registry|toolMap|functions)\b\s*(\[|\.get\()|"
                          r"^\w*tool\w*\??\.(execute|run|call|invoke|handler)$", mod.node_text(value).strip(), re.I))


def _tool_budgeted(mod: TsModule, project: TsProject, tool_fn: Node) -> bool:
    """Whether the tool function runs under a budget: a dispatcher budget around dynamic tools, or a budget
    around a call of this function (or of the function that calls it)."""
    budgets = [b for b in _budgets(project) if not b.via_signal]
    if any(b.dynamic for b in budgets):
        return True
    return any(key(mod, tool_fn) in {key(r.module, r.node) for r in b.roots} for b in budgets)


# ---------------------------------------------------------------- requests with no timeout
def _axios_instances(mod: TsModule) -> dict[str, bool]:
    """Names bound to `axios.create(config)`, mapped to whether the config sets a timeout."""
    out: dict[str, bool] = {}
    if "axios" not in mod.text:
        return out
    for call in calls_named(mod, ("create",)):
        if cname(mod, call) != "axios.create":
            continue
        parent = call.parent
        while parent is not None and parent.type in ("await_expression", "parenthesized_expression"):
            parent = parent.parent
        target: Node | None = None
        if parent is not None and parent.type == "variable_declarator":
            target = parent.child_by_field_name("name")
        elif parent is not None and parent.type == "assignment_expression":
            target = parent.child_by_field_name("left")
        elif parent is not None and parent.type in ("public_field_definition", "field_definition"):
            name = parent.child_by_field_name("name") or parent.child_by_field_name("property")
            out[f"this.{mod.node_text(name)}"] = bool(_options_verdict(mod, (mod.arguments(call) or [None])[0],
                                                                      call))
            continue
        if target is not None:
            args = mod.arguments(call)
            out[mod.dotted(target)] = _options_verdict(mod, args[0] if args else None, call) is not False
    if "defaults.timeout" in mod.text and re.search(r"axios\.defaults\.timeout\s*=", mod.text):
        out["axios"] = True
    return out


_SIGNAL_OPTION_KEYS = {"signal", "abortSignal", "cancelToken"}


def _request_options(mod: TsModule, call: Node, instances: dict[str, bool]) -> tuple[str, Node | None] | None:
    """(description, options argument) of a fetch, axios or got request that no client default bounds."""
    name = cname(mod, call)
    args = mod.arguments(call)
    imports = imports_of(mod)
    is_fetch = name in _FETCH_NAMES and (name != "fetch" or imports.get("fetch", "fetch").startswith(
        ("fetch", *_FETCH_MODULES)))
    if is_fetch:
        return (f"`{name}(...)`", args[1] if len(args) > 1 else None) if args else None
    tail, recv = last(name), receiver(name)
    axios_like = (recv == "axios" and imports.get("axios", "axios").startswith("axios")) or recv in instances
    if name == "axios" and imports.get("axios", "").startswith("axios"):
        if instances.get("axios") or not args:
            return None
        first = unwrap(args[0])
        return "`axios(...)`", first if first is not None and first.type == "object" else (
            args[1] if len(args) > 1 else None)
    if axios_like and tail in _AXIOS_VERBS:
        if instances.get(recv):
            return None
        at = 2 if tail in _AXIOS_DATA_VERBS else (0 if tail == "request" else 1)
        return f"`{name}(...)`", args[at] if len(args) > at else None
    if (name == "got" or (recv == "got" and tail in _AXIOS_VERBS)) and imports.get("got", "").startswith("got"):
        return f"`{name}(...)`", args[1] if len(args) > 1 else None
    if tail in ("get", "request") and (imports.get(recv or name, "").split("#")[0] in _NODE_HTTP or
                                       imports.get(name, "").split("#")[0] in _NODE_HTTP):
        # `https.get(url, { signal }, onResponse)`: the options sit first or second; `req.setTimeout(ms)` bounds it
        fn = mod.enclosing_function(call)
        if fn is not None and re.search(r"\.setTimeout\(\s*[\w$]", code_text(mod, fn)):
            return None
        opts = next((a for a in args[:2] if (u := unwrap(a)) is not None and u.type in ("object", "identifier") and
                     not (u.type == "identifier" and re.search(r"url|href|uri", mod.node_text(u), re.I))), None)
        return f"`{name}(...)`", opts
    return None


_NODE_HTTP = {"http", "https", "node:http", "node:https"}
"""Node's own HTTP client: `http.get` / `https.request` have no timeout unless given one."""


def _signals_never_timed(project: TsProject) -> bool:
    """Whether no module of the project puts a deadline on an abort signal it hands on: no `AbortSignal.any`, no
    `AbortSignal.timeout` kept or passed other than as one request's own `signal:` option, and no timer that
    aborts a controller. The run's signal is then only a stop button (SIGINT, a cancel route), never a deadline."""

    def build() -> bool:
        for mod in project.modules.values():
            if is_test_module(mod) or "bort" not in mod.text:
                continue
            for call in calls_named(mod, ("any", "timeout")):
                name = cname(mod, call)
                if name == "AbortSignal.any":
                    return False
                if name == "AbortSignal.timeout":
                    pair = call.parent
                    key_text = mod.node_text(pair.child_by_field_name("key")) if pair is not None and \
                        pair.type == "pair" else ""
                    if key_text not in _SIGNAL_OPTION_KEYS:
                        return False
            for call in calls_named(mod, ("abort",)):
                if any(a.type in FUNCTION_TYPES and a.parent is not None and a.parent.type == "arguments" and
                       a.parent.parent is not None and last(cname(mod, a.parent.parent)) == "setTimeout"
                       for a in mod.ancestors(call)):
                    return False
        return True

    return memo(project, "c11_signals_never_timed", build)


def _cancel_only(mod: TsModule, opts: Node | None, call: Node) -> str | None:
    """The signal an options object passes when a signal is all that bounds the request and it comes in as a
    parameter (`{ signal: ctx.signal }`, `{ signal }`): the caller's stop signal, which ends a hung request only
    when someone presses stop. None when a timeout, a local signal or anything unknown is there."""
    node = unwrap(opts)
    if node is not None and node.type == "identifier":
        node = _local_value(mod, node, call)
    if node is None or node.type != "object" or any(c.type == "spread_element" for c in node.named_children):
        return None
    keys = mod.object_keys(node)
    bounding = [k for k in keys if k in _BOUND_KEYS]
    if not bounding or any(k not in _SIGNAL_OPTION_KEYS for k in bounding):
        return None
    value = unwrap(keys[bounding[0]])
    if value is None or value.type not in ("identifier", "shorthand_property_identifier", "member_expression"):
        return None
    root = value
    while root.type == "member_expression":
        obj = root.child_by_field_name("object")
        if obj is None:
            return None
        root = obj
    if root.type not in ("identifier", "shorthand_property_identifier"):
        return None  # `this.controller.signal`: a controller the object owns may carry a deadline
    name = mod.node_text(root)
    fn = mod.enclosing_function(call)
    if fn is None or _local_value(mod, root, call) is not None:
        return None
    if not any(name in mod.params(f) for f in [fn, *(a for a in mod.ancestors(fn) if a.type in FUNCTION_TYPES)]):
        return None
    return mod.node_text(value)


def _timed_elsewhere(mod: TsModule, signal: str) -> bool:
    """Whether the module combines this signal with a timeout elsewhere (`AbortSignal.any([ctx.signal,
    AbortSignal.timeout(ms)])`): its author knows the signal alone carries no deadline."""
    word = re.compile(rf"(?<![\w$.]){re.escape(signal)}(?![\w$])")
    for call in calls_named(mod, ("any",)):
        if cname(mod, call) == "AbortSignal.any":
            text = mod.node_text(call)
            if "AbortSignal.timeout" in text and word.search(text):
                return True
    return False


_AI_RUNS = {"generateText", "streamText", "generateObject", "streamObject"}


def _ai_tool_signal(mod: TsModule, call: Node, signal: str) -> bool:
    """Whether `signal` is the abort signal the `ai` package hands a tool's `execute(input, { abortSignal })`."""
    root = re.split(r"[.?!]", signal, maxsplit=1)[0]
    for fn in (a for a in mod.ancestors(call) if a.type in FUNCTION_TYPES):
        params = _param_nodes(fn)
        if len(params) < 2 or not any(root == mod.node_text(n) for p in params[1:] for n in iter_subtree(p)
                                      if n.type in ("identifier", "shorthand_property_identifier_pattern")):
            continue
        holder = fn.parent if fn.type != "method_definition" else fn
        if holder is not None and holder.type == "pair":
            if mod.node_text(holder.child_by_field_name("key")) != "execute":
                return False
            holder = holder.parent
        elif fn.type == "method_definition":
            if mod.function_name(fn) != "execute":
                return False
            holder = fn.parent
        args = holder.parent if holder is not None and holder.type == "object" else None
        factory = args.parent if args is not None and args.type == "arguments" else None
        return factory is not None and factory.type == "call_expression" and cname(mod, factory) == "tool" and \
            imports_of(mod).get("tool", "").split("#")[0] == "ai"
    return False


def _run_deadline(mod: TsModule, call: Node) -> bool | None:
    """Whether an `ai` model call gives its run (and so every tool's `abortSignal`) a deadline: True for a timeout
    in its `abortSignal`, False for none or only a web request's signal (the client's stop), None when unknown."""
    args = mod.arguments(call)
    opts = unwrap(args[0]) if args else None
    if opts is None or opts.type != "object" or any(c.type == "spread_element" for c in opts.named_children):
        return None
    keys = mod.object_keys(opts)
    if "tools" not in keys:
        return None
    value = unwrap(keys.get("abortSignal"))
    if value is None:
        return False
    text = code_text(mod, value)
    if re.search(r"timeout|Timeout|deadline|Deadline", text):
        return True
    if re.fullmatch(r"(req|request)\??\.signal", text):
        return False
    return None


def _framework_deadline(mod: TsModule, project: TsProject, call: Node, signal: str) -> bool | None:
    """For the `ai` package's tool signal: whether the project's model runs give it a deadline (True), none of them
    does (False), or it cannot be told (None; also for any other signal)."""
    if not _ai_tool_signal(mod, call, signal):
        return None

    def build() -> bool | None:
        verdicts: list[bool | None] = []
        for other in project.modules.values():
            if is_test_module(other) or not any(f in other.text for f in _AI_RUNS):
                continue
            for run in calls_named(other, _AI_RUNS):
                args = other.arguments(run)
                if imports_of(other).get(cname(other, run), "").split("#")[0] == "ai" and args and \
                        re.search(r"\btools\b", other.node_text(args[0])):
                    verdicts.append(_run_deadline(other, run))
        known = [v for v in verdicts if v is not None]
        if not known or True in known:
            return True if True in known else None
        return None if None in verdicts else False

    return memo(project, "c11_ai_run_deadline", build)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Unbounded:
    """A request in tool code with no timeout and no budget."""

    call: Node
    """The request."""
    what: str
    """How to name it."""
    tool_fn: Node
    """The tool code it runs in."""
    label: str
    """How to name that tool code."""
    signal: str | None
    """The caller's stop signal it passes (its only bound), if any."""


_IPC_SEND = {"invoke", "send", "sendSync"}
_IPC_RECEIVE = {"handle", "handleOnce", "on", "once"}


def _ipc_tool_handlers(project: TsProject) -> dict[Key, tuple[str, bool]]:
    """Electron main-process handlers (`ipcMain.handle("shell:run", fn)`) that tool code reaches across the IPC
    bridge, mapped to (channel, whether some invoking tool runs under a budget): tool code calls
    `ipcRenderer.invoke("shell:run", …)` itself, or a method the preload script exposes
    (`contextBridge.exposeInMainWorld("desk", { runShell: (id, cmd) => ipcRenderer.invoke("shell:run", id, cmd) })`,
    called as `window.desk.runShell(…)`). The handler's work is part of that tool call."""

    def build() -> dict[Key, tuple[str, bool]]:
        if not any("ipcMain" in m.text for m in project.modules.values()):
            return {}
        invoked: dict[str, bool] = {}
        exposed: dict[tuple[str, str], str] = {}
        for mod in project.modules.values():
            if "ipcRenderer" not in mod.text or is_test_module(mod):
                continue
            for call in calls_named(mod, _IPC_SEND):
                if receiver(cname(mod, call)) != "ipcRenderer" or not mod.arguments(call):
                    continue
                channel = string_value(mod, mod.arguments(call)[0])
                tool_fn = in_tool_code(mod, project, call)
                if channel is None:
                    continue
                if tool_fn is not None:
                    invoked[channel] = invoked.get(channel, False) or _under_budget(mod, call) or \
                        _tool_budgeted(mod, project, tool_fn)
                    continue
                fn = mod.enclosing_function(call)
                pair = fn.parent if fn is not None else None
                obj = pair.parent if pair is not None and pair.type == "pair" else None
                args = obj.parent if obj is not None and obj.type == "object" else None
                bridge = args.parent if args is not None and args.type == "arguments" else None
                if bridge is None or last(cname(mod, bridge)) != "exposeInMainWorld":
                    continue
                api = string_value(mod, mod.arguments(bridge)[0]) if mod.arguments(bridge) else None
                if api is not None and pair is not None:
                    exposed[(api, mod.node_text(pair.child_by_field_name("key")))] = channel
        if exposed:
            for mod in project.modules.values():
                if is_test_module(mod):
                    continue
                for call in calls_named(mod, {m for _, m in exposed}):
                    parts = cname(mod, call).split(".")
                    channel = exposed.get((parts[-2], parts[-1])) if len(parts) >= 2 else None
                    tool_fn = in_tool_code(mod, project, call) if channel is not None else None
                    if channel is not None and tool_fn is not None:
                        invoked[channel] = invoked.get(channel, False) or _under_budget(mod, call) or \
                            _tool_budgeted(mod, project, tool_fn)
        out: dict[Key, tuple[str, bool]] = {}
        for mod in project.modules.values():
            if "ipcMain" not in mod.text:
                continue
            for call in calls_named(mod, _IPC_RECEIVE):
                args = mod.arguments(call)
                channel = string_value(mod, args[0]) if args and receiver(cname(mod, call)) == "ipcMain" else None
                handler = unwrap(args[-1]) if channel in invoked and len(args) >= 2 else None
                if handler is None or channel is None:
                    continue
                if handler.type in FUNCTION_TYPES:
                    out[key(mod, handler)] = (channel, invoked[channel])
                elif handler.type == "identifier":  # `ipcMain.handle("job:run", runJob)`
                    for fn in mod.functions():
                        if fn.type != "method_definition" and mod.function_name(fn) == mod.node_text(handler):
                            out[key(mod, fn)] = (channel, invoked[channel])
        return out

    return memo(project, "c11_ipc_tool_handlers", build)


def _quoted_label(mod: TsModule, fn: Node) -> str:
    label = fn_label(mod, fn)
    return label if "`" in label else f"`{label}`"


def _tool_code(mod: TsModule, project: TsProject, node: Node) -> tuple[Node, str] | None:
    """The tool code `node` runs in and how to name it: a tool function, or a main-process IPC handler that tool
    code invokes across the Electron bridge (None when a budget around the invoking tool bounds it)."""
    tool_fn = in_tool_code(mod, project, node)
    if tool_fn is not None:
        return tool_fn, _quoted_label(mod, tool_fn)
    handlers = _ipc_tool_handlers(project)
    if not handlers:
        return None
    for anc in mod.ancestors(node):
        found = handlers.get(key(mod, anc)) if anc.type in FUNCTION_TYPES else None
        if found is not None:
            channel, budgeted = found
            return None if budgeted else (anc, f"{_quoted_label(mod, anc)} (the main-process side of IPC channel "
                                               f"`{channel}`, which tool code invokes)")
    return None


def _unbounded_requests(mod: TsModule, project: TsProject, instances: dict[str, bool]) -> Iterator[_Unbounded]:
    for call in calls_named(mod, {"fetch", "axios", "got", *_AXIOS_VERBS}):
        found = _request_options(mod, call, instances)
        if found is None:
            continue
        what, opts = found
        bound = _options_verdict(mod, opts, call)
        signal = _cancel_only(mod, opts, call) if bound else None
        # a bare `signal` parameter may be the dispatcher's deadline (`AbortSignal.timeout(budget)`): it counts as
        # no timeout only where the module itself adds a timeout to that same signal elsewhere, or where it is the
        # `ai` package's tool signal and no model call of the project gives the run a deadline
        if bound is not False:
            if signal is None:
                continue
            deadline = _framework_deadline(mod, project, call, signal)
            if deadline or (deadline is None and not _timed_elsewhere(mod, signal) and
                            not _signals_never_timed(project)):
                continue
            if any(b.via_signal for b in _budgets(project)) and in_tool_code(mod, project, call) is not None:
                continue  # the dispatcher merges its deadline into the signal every tool gets
        found_tool = _tool_code(mod, project, call)
        tool_fn = found_tool[0] if found_tool is not None else None
        if found_tool is None or tool_fn is None or _under_budget(mod, call) or \
                _tool_budgeted(mod, project, tool_fn) or _caller_budgeted(mod, project, tool_fn):
            continue
        yield _Unbounded(call=call, what=what, tool_fn=tool_fn, label=found_tool[1], signal=signal)


def _instance_calls(mod: TsModule) -> dict[str, Node]:
    """`axios.create(...)` calls of the module by the name their client is kept in."""
    out: dict[str, Node] = {}
    for call in calls_named(mod, ("create",)):
        if cname(mod, call) != "axios.create":
            continue
        parent = call.parent
        while parent is not None and parent.type in ("await_expression", "parenthesized_expression"):
            parent = parent.parent
        if parent is not None and parent.type == "variable_declarator":
            out[mod.node_text(parent.child_by_field_name("name"))] = call
        elif parent is not None and parent.type == "assignment_expression":
            out[mod.dotted(parent.child_by_field_name("left"))] = call
        elif parent is not None and parent.type in ("public_field_definition", "field_definition"):
            name = parent.child_by_field_name("name") or parent.child_by_field_name("property")
            out[f"this.{mod.node_text(name)}"] = call
    return out


@rule(CheckId.C11, lang="typescript", name="fetch-without-timeout")
def fetch_without_timeout(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags `fetch(url)`, an axios, got or Node `http(s).get/request` request in tool code with no timeout and no
    budget around it: no signal, or only the caller's stop signal where the module shows that signal carries no
    deadline (it adds `AbortSignal.timeout` to it elsewhere) or no module of the project ever gives a signal one (no
    `AbortSignal.any`, no kept `AbortSignal.timeout`, no timer that aborts a controller). Requests sent through an `axios.create(...)` client without a `timeout`
    are reported once, at the client (at the request when the client serves only that one).

    `fetch` and axios wait indefinitely by default (axios `timeout: 0`): a server that stops answering holds
    the tool, and the whole turn, forever, and no layer ever reports which tool hung.
    """
    text = mod.text
    if is_test_module(mod) or ("fetch" not in text and "axios" not in text and "got" not in text and
                               "http" not in text):
        return
    instances = _axios_instances(mod)
    created = _instance_calls(mod) if instances else {}
    by_client: dict[str, list[_Unbounded]] = {}
    for req in _unbounded_requests(mod, project, instances):
        client = receiver(cname(mod, req.call))
        if client in created and instances.get(client) is False:
            by_client.setdefault(client, []).append(req)
            continue
        bound = f"only the caller's stop signal `{req.signal}`" if req.signal else "no abort signal"
        if req.signal and _signals_never_timed(project):
            bound += " (no module of the project gives an abort signal a deadline)"
        yield Hit(
            node=req.call,
            claim=f"{req.what} in tool code {req.label} has no timeout, {bound} and no budget "
                  "around it; fetch and axios wait indefinitely by default",
            consequence="a server that stops responding hangs the tool call and the agent turn indefinitely, with no "
                        "error naming the tool",
            direction="pass `signal: AbortSignal.timeout(ms)` (or axios `timeout`) shorter than the tool's budget and "
                      "map its `TimeoutError` to the tool's classified timeout",
        )
    for client, reqs in by_client.items():
        tools = ", ".join(dict.fromkeys(r.label for r in reqs))
        sites = [c for c in calls_named(mod, _AXIOS_VERBS) if receiver(cname(mod, c)) == client]
        if len(sites) == 1:  # the client's one request: cite it; several share the client, the place to fix them all
            yield Hit(
                node=reqs[0].call,
                claim=f"{reqs[0].what} in tool code {tools} goes through the axios client `{client}` created without "
                      f"a `timeout` at line {mod.line(created[client])} (axios waits forever by default), with no "
                      "timeout of its own and no budget around it",
                consequence="a server that stops responding hangs the tool call and the agent turn indefinitely, with "
                            "no error naming the tool",
                direction=f"give `{client}` a `timeout` shorter than the tool's budget (or pass one with this "
                          "request) and map its `ECONNABORTED` to the tool's classified timeout",
            )
            continue
        yield Hit(
            node=created[client],
            claim=f"the axios client `{client}` is created without a `timeout` (axios waits forever by default), "
                  f"and tool code {tools} sends requests through it with no timeout and no budget around them "
                  f"(line {', '.join(str(mod.line(r.call)) for r in reqs)})",
            consequence="a backend that stops responding hangs the tool call and the agent turn indefinitely, with no "
                        "error naming the tool",
            direction=f"give `{client}` a `timeout` shorter than the tool's budget (or pass one per request) and map "
                      "its `ECONNABORTED` to the tool's classified timeout",
        )


def _caller_budgeted(mod: TsModule, project: TsProject, fn: Node) -> bool:
    """Whether a function that calls `fn` (one hop up) runs it under a budget, or is itself budgeted tool code."""
    tools = tool_functions(project)
    for other, call in callers_of(project, mod, fn):
        if _under_budget(other, call):
            return True
        outer = other.enclosing_function(call)
        if outer is not None and key(other, outer) in tools and _tool_budgeted(other, project, outer):
            return True
    return False


# ---------------------------------------------------------------- processes with no timeout
def _exec_kind(mod: TsModule, call: Node, aliases: dict[str, str]) -> str | None:
    """The child-process or execa function a call runs (`execSync`, `execa`, …), else None."""
    name = cname(mod, call)
    imports = imports_of(mod)
    if name in aliases:
        return aliases[name]
    if name in _BUN_SPAWN:
        return name
    if "." not in name:
        target = imports.get(name, "")
        module, _, export = target.partition("#")
        if module in _CHILD_PROCESS and export in _EXEC_FUNCS:
            return export
        if module == "execa" and (export in _EXECA_FUNCS or (not export and name == "execa")):
            return export or "execa"
        return None
    tail, recv = last(name), receiver(name)
    if tail in _EXEC_FUNCS and (imports.get(recv, "") in _CHILD_PROCESS or recv == "child_process"
                                or name.startswith("require().")):
        return tail
    return None


def _promisified(mod: TsModule) -> dict[str, str]:
    """`const run = promisify(exec)`: local names that run a child-process function."""
    out: dict[str, str] = {}
    if "promisify" not in mod.text:
        return out
    for decl in mod.nodes("variable_declarator"):
        value = unwrap(decl.child_by_field_name("value"))
        if value is None or value.type != "call_expression" or last(cname(mod, value)) != "promisify":
            continue
        args = mod.arguments(value)
        if not args:
            continue
        inner = mod.dotted(args[0])
        tail = last(inner)
        module = imports_of(mod).get(inner, "") if "." not in inner else imports_of(mod).get(receiver(inner), "")
        if tail in _EXEC_FUNCS and (module.split("#")[0] in _CHILD_PROCESS):
            out[mod.node_text(decl.child_by_field_name("name"))] = tail
    return out


def _exec_options(mod: TsModule, call: Node) -> Node | None | bool:
    """The options argument of a process call: a node, None when absent, False when it cannot be told."""
    args = mod.arguments(call)[1:]
    for arg in args:
        inner = unwrap(arg)
        if inner is None or inner.type in FUNCTION_TYPES or inner.type == "array":
            continue
        if inner.type == "object":
            return inner
        if inner.type == "identifier":
            value = _local_value(mod, inner, call)
            if value is not None and value.type == "array":
                continue
            if value is not None and value.type == "object":
                return value
            return False
        return False
    return None


def _kill_timer(mod: TsModule, fn: Node) -> bool:
    """A timer or abort listener in the function that kills the process (`setTimeout(() => child.kill(), ms)`).
    A callback holding the process (`new Promise((resolve) => { const child = execFile(…) })`) is judged with the
    function around it, where the timer usually is (`setTimeout(() => source.cancel(), ms)` with the child killed
    on that cancellation)."""
    outer: Node | None = fn
    while outer is not None:
        if _kill_timer_in(mod, outer):
            return True
        if mod.function_name(outer) != "<anonymous>":
            return False
        outer = mod.enclosing_function(outer)
    return False


def _kill_timer_in(mod: TsModule, fn: Node) -> bool:
    text = code_text(mod, fn)
    return bool(re.search(r"setTimeout\s*\(", text) and re.search(r"\.kill\s*\(|abort\s*\(", text)) or \
        bool(re.search(r"addEventListener\(\s*['\"]abort['\"][^)]*\)?[\s\S]{0,200}\.kill\(", text)) or \
        bool(re.search(r"(addEventListener|once)\(\s*['\"]abort['\"]\s*,\s*[\w$]+|\.onabort\s*=\s*[\w$]+", text) and
             re.search(r"\.kill\s*\(", text))  # `const stop = () => process.kill(-child.pid)` named, then listened


def _fire_and_forget(mod: TsModule, call: Node) -> bool:
    """`exec('open "' + url + '"', (err) => log(err))` as a statement of its own, outside any `new Promise(...)`:
    nothing waits for the process, so it cannot hold the tool or the turn."""
    parent = call.parent
    if parent is None or parent.type != "expression_statement":
        return False
    fn = mod.enclosing_function(call)
    while fn is not None:
        holder = fn.parent.parent if fn.parent is not None and fn.parent.type == "arguments" else None
        if holder is not None and holder.type == "new_expression" and mod.call_name(holder) == "Promise":
            return False
        fn = mod.enclosing_function(fn)
    return True


@rule(CheckId.C11, lang="typescript", name="exec-without-timeout")
def exec_without_timeout(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a child process a tool runs (`execSync`, `exec`, `execFile`, `spawnSync`, `execa`, or `spawn` with no
    kill timer) with no `timeout` option, no abort signal and no budget around it. An Electron main-process
    handler that tool code invokes over IPC (`window.api.runShell(...)` → `ipcMain.handle("shell:run", …)`) is
    tool code too: the tool waits for its reply.

    A command that never exits (it waits for input, or a network call inside it hangs) blocks the tool forever,
    and the loop never gets a timeout it could report.
    """
    if is_test_module(mod) or ("child_process" not in mod.text and "execa" not in mod.text and
                               "Bun.spawn" not in mod.text):
        return
    aliases = _promisified(mod)
    for call in calls_named(mod, {*_EXEC_FUNCS, *_EXECA_FUNCS, *aliases}):
        kind = _exec_kind(mod, call, aliases)
        if kind is None:
            continue
        opts = _exec_options(mod, call)
        first = unwrap(mod.arguments(call)[0]) if mod.arguments(call) else None
        if kind in _BUN_SPAWN and first is not None and first.type == "object":
            opts = first  # `Bun.spawn({ cmd, timeout })`
        if isinstance(opts, bool) or (not kind.endswith("Sync") and _fire_and_forget(mod, call)):
            continue
        if opts is not None and _options_verdict(mod, opts, call) is not False:
            continue
        found_tool = _tool_code(mod, project, call)
        tool_fn = found_tool[0] if found_tool is not None else None
        if found_tool is None or tool_fn is None or _under_budget(mod, call) or \
                _tool_budgeted(mod, project, tool_fn) or _caller_budgeted(mod, project, tool_fn):
            continue
        fn = mod.enclosing_function(call)
        if not kind.endswith("Sync") and fn is not None and _kill_timer(mod, fn):
            continue
        yield Hit(
            node=call,
            claim=f"`{cname(mod, call)}(...)` ({kind}) in tool code {found_tool[1]} has no `timeout`, "
                  "no abort signal and no budget around it",
            consequence="a command that never exits hangs the tool call and the agent turn, and nobody learns which "
                        "tool is stuck",
            direction="pass `timeout` (and `killSignal`) shorter than the tool's budget, or race the process against "
                      "a timer that kills it, and report the expiry as the tool's classified timeout",
        )


# ---------------------------------------------------------------- inner timeout shorter than the budget
@dataclass(frozen=True, slots=True, kw_only=True)
class _Inner:
    """A timeout set inside tool code."""

    node: Node
    """What to cite: the `AbortSignal.timeout(...)` call, the `timeout:` pair, the `setTimeout` call."""
    ms: float | None
    """Its value in milliseconds when it resolves."""
    setting: str
    """The value as written."""
    what: str
    """How to name it."""


def _inner_timeouts(mod: TsModule, fn: Node, aliases: dict[str, str]) -> list[_Inner]:
    """Client and process timeouts set in `fn` whose expiry is not handled where it is raised."""
    out: list[_Inner] = []
    for call in nodes_in(mod, fn, "call_expression"):
        name = cname(mod, call)
        args = mod.arguments(call)
        inner: _Inner | None = None
        if name == "AbortSignal.timeout" and args:
            inner = _Inner(node=call, ms=number_value(mod, args[0]), setting=mod.node_text(args[0]),
                           what=f"`AbortSignal.timeout({mod.node_text(args[0])})`")
        elif name == "setTimeout" and len(args) > 1 and re.search(r"\.abort\s*\(|\.kill\s*\(",
                                                                  mod.node_text(args[0])):
            inner = _Inner(node=call, ms=number_value(mod, args[1]), setting=mod.node_text(args[1]),
                           what=f"the abort timer `setTimeout(..., {mod.node_text(args[1])})`")
            if _expiry_classified(mod, call) or in_abort_handler(mod, call):
                continue  # classified where it fires, or a grace period that starts only after an abort
        elif name != "setTimeout" and not _budget_call(mod, call):
            # a client or process option (`exec`, axios, got, ky, undici's `headersTimeout`, an SDK request such
            # as MCP `callTool(..., { timeout })`): any call of the bounded work that carries its own timeout
            for arg in args:
                obj = unwrap(arg)
                if obj is None or obj.type != "object":
                    continue
                found = _client_timeout(mod, obj)
                if found is None or _retried_attempts(mod, obj):
                    continue  # none, or a per-attempt timeout the client retries: its expiry starts another try
                option, value = found
                pair = value.parent if value.parent is not None and value.parent.type == "pair" else value
                inner = _Inner(node=pair, ms=number_value(mod, value), setting=mod.node_text(value),
                               what=f"`{name}` (`{option}: {mod.node_text(value)}`)")
                break
        if inner is None or _handled_here(mod, call):
            continue
        out.append(inner)
    return out


_CLIENT_MAKERS = ("create", "extend")
"""`axios.create({ timeout })`, `got.extend({ timeout })`, `ky.create({ timeout })`: a configured client."""


def _captured_client_timeouts(mod: TsModule, fn: Node) -> list[_Inner]:
    """Timeouts of a client the tool uses but that is configured outside it (`const jira = got.extend({ timeout:
    { request: 10_000 } })` in the plugin's factory or at module level). A client that retries its timeout counts
    with all its attempts (`retry: { limit: 3 }` makes 4 × 10 s), and only when that total can be read."""
    out: list[_Inner] = []
    seen: set[int] = set()
    for call in nodes_in(mod, fn, "call_expression"):
        root = cname(mod, call).split(".", 1)[0]
        if not root or root in ("this", "self") or "." not in cname(mod, call):
            continue
        decl = _outer_declarator(mod, fn, root)
        value = unwrap(decl.child_by_field_name("value")) if decl is not None else None
        if value is not None and value.type == "await_expression":
            value = unwrap(value.named_children[0] if value.named_children else None)
        if value is None or value.type != "call_expression" or value.id in seen or \
                last(cname(mod, value)) not in _CLIENT_MAKERS or _handled_here(mod, call):
            continue
        seen.add(value.id)
        for arg in mod.arguments(value):
            obj = unwrap(arg)
            found = _client_timeout(mod, obj) if obj is not None and obj.type == "object" else None
            if found is None:
                continue
            option, setting = found
            ms = number_value(mod, setting)
            attempts = _attempts(mod, obj, cname(mod, value).split(".", 1)[0] in ("got", "ky"))
            if attempts is None or ms is None:
                continue
            pair = setting.parent if setting.parent is not None and setting.parent.type == "pair" else setting
            retried = f", {attempts} attempts in all" if attempts > 1 else ""
            out.append(_Inner(node=pair, ms=ms * attempts, setting=mod.node_text(setting),
                              what=f"the `{cname(mod, value)}` client's `{option}: {mod.node_text(setting)}`{retried}"))
            break
    return out


def _declarators_by_name(mod: TsModule) -> dict[str, list[Node]]:
    """Identifier name → its `const name = …` declarators in source order, built once per module."""
    out: dict[str, list[Node]] = {}
    for decl in mod.nodes("variable_declarator"):
        target = decl.child_by_field_name("name")
        if target is not None and target.type == "identifier":
            out.setdefault(mod.node_text(target), []).append(decl)
    return out


def _outer_declarator(mod: TsModule, fn: Node, name: str) -> Node | None:
    """The `const name = …` that `fn` captures from an enclosing function or the module (none inside `fn`)."""
    found: Node | None = None
    for decl in mod_memo(mod, "c11-declarators-by-name", lambda: _declarators_by_name(mod)).get(name, ()):
        if mod.within(decl, fn):
            return None  # a local of the tool itself
        owner = mod.enclosing_function(decl)
        if decl.start_byte < fn.start_byte and (owner is None or mod.within(fn, owner)):
            found = decl
    return found


def _attempts(mod: TsModule, obj: Node, retries_by_default: bool) -> int | None:
    """How many times the client tries a request (1 with no retry option, unless the client retries by default as
    got and ky do); None when it cannot be read."""
    keys = mod.object_keys(obj)
    for option in ("maxRetries", "retries", "retry"):
        value = unwrap(keys.get(option))
        if value is None:
            continue
        if value.type == "object":
            value = unwrap(mod.object_keys(value).get("limit"))
            if value is None:
                return None
        count = number_value(mod, value)
        return int(count) + 1 if count is not None and count >= 0 else None
    return None if retries_by_default else 1


_CLIENT_TIMEOUT_KEYS = ("timeout", "headersTimeout", "bodyTimeout", "connectTimeout", "requestTimeout",
                        "responseTimeout", "readTimeout", "socketTimeout")
"""Options that end a client request or a process on their own: axios/got/ky/exec `timeout`, undici's
`headersTimeout`/`bodyTimeout`/`connectTimeout`, and the like."""
_GOT_PHASES = ("request", "response", "read", "send", "socket", "connect", "lookup", "secureConnect")


def _client_timeout(mod: TsModule, obj: Node) -> tuple[str, Node] | None:
    """(option, value) of the earliest timeout an options object sets (got's `timeout: { request: 5_000 }`
    phases included); None when it sets none."""
    keys = mod.object_keys(obj)
    best: tuple[str, Node] | None = None
    best_ms: float | None = None
    for option in _CLIENT_TIMEOUT_KEYS:
        value = keys.get(option)
        inner = unwrap(value)
        if value is None or inner is None:
            continue
        candidates = [(option, value)]
        if inner.type == "object":
            phases = mod.object_keys(inner)
            candidates = [(f"{option}.{p}", phases[p]) for p in _GOT_PHASES if p in phases]
        for label, node in candidates:
            ms = number_value(mod, node)
            if best is None or (ms is not None and (best_ms is None or ms < best_ms)):
                best, best_ms = (label, node), ms
    return best


def _retried_attempts(mod: TsModule, obj: Node) -> bool:
    """Whether the same options make the client retry (`maxRetries: 5`, got's `retry: { limit: 2 }`)."""
    keys = mod.object_keys(obj)
    for option in ("maxRetries", "retries", "retry"):
        value = unwrap(keys.get(option))
        if value is None:
            continue
        if value.type == "object":
            value = unwrap(mod.object_keys(value).get("limit"))
        count = number_value(mod, value) if value is not None else None
        if count is None or count > 0:
            return True
    return False


_CLASSIFIED_EXPIRY = re.compile(r"TimeoutError|[A-Z]\w*Timeout\w*\(|['\"`][^'\"`\n]*\btime(d)?[ _-]?out\b", re.I)


def _expiry_classified(mod: TsModule, timer: Node) -> bool:
    """Whether a kill or abort timer's expiry is classified as a timeout where it is raised: the abort reason is a
    timeout error (`ac.abort(new ToolError("timeout", …))`), or the function rejects or throws a timeout when the
    process dies of the timer's kill (`if (signal === "SIGKILL") reject(new ToolError("timeout", …))`)."""
    args = mod.arguments(timer)
    if args and _CLASSIFIED_EXPIRY.search(code_text(mod, args[0])):
        return True
    fn = mod.enclosing_function(timer)
    if fn is None:
        return False
    for node in nodes_in(mod, fn, "throw_statement", "call_expression"):
        if node.type == "call_expression" and last(cname(mod, node)) not in ("reject", "resolve", "finish", "fail"):
            continue
        if _CLASSIFIED_EXPIRY.search(code_text(mod, node)):
            return True
    return False


def _handled_here(mod: TsModule, node: Node) -> bool:
    """Whether a catch around `node` (in its function) classifies a timeout, or absorbs every error into a fallback
    (no `throw`, the error itself never passed on): either way the inner expiry never reaches the loop as a raw
    client error."""
    at: Node | None = node
    while at is not None:
        for clause in [*catch_clauses_around(mod, at), *promise_catch_around(mod, at)]:
            if _TIMEOUT_HANDLING.search(code_text(mod, clause)) or _absorbs(mod, clause):
                return True
        # a callback of `xs.map(...)` awaited under `Promise.all` in a `try`: that catch sees its errors too
        inner = mod.enclosing_function(at)
        at = inner if inner is not None and mod.iteration_callback(inner) else None
    fn = mod.enclosing_function(node)
    if fn is not None:
        for call in nodes_in(mod, fn, "call_expression"):
            if mod.node_text(call.child_by_field_name("function")).endswith(".catch") and \
                    _TIMEOUT_HANDLING.search(code_text(mod, call.child_by_field_name("arguments"))):
                return True
    return False


def _absorbs(mod: TsModule, handler: Node) -> bool:
    """A `catch` clause (or `.catch` callback) that neither throws nor uses the error: it falls back to a value."""
    if any(n.type == "throw_statement" for n in iter_subtree(handler, into_functions=False)):
        return False
    param = handler.child_by_field_name("parameter") if handler.type == "catch_clause" else None
    if handler.type != "catch_clause":
        params = mod.params(handler)
        return not params
    if param is None:
        return True
    name = mod.node_text(param)
    body = handler.child_by_field_name("body")
    return not re.search(rf"(?<![\w$.]){re.escape(name)}(?![\w$])", code_text(mod, body))


def _compare(inner: _Inner, budget: _Budget) -> Verdict | None:
    if inner.ms is not None and budget.ms is not None:
        return Verdict.CONFIRMED if inner.ms < budget.ms else None
    if inner.setting == budget.setting or _DERIVED.search(inner.setting) or not budget.setting:
        return None
    return Verdict.SUSPECTED


@rule(CheckId.C11, lang="typescript", name="inner-timeout-below-tool-budget")
def inner_timeout_below_tool_budget(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a client or process timeout inside a tool (`AbortSignal.timeout(10_000)`, axios/exec `timeout:`) that
    is shorter than the budget the tool runs under (`Promise.race` with a timer, `withTimeout(p, 60_000)`) and
    whose expiry nothing maps where it is raised.

    The inner backstop fires first, so an ordinary slow call reaches the loop as a raw `TimeoutError` /
    `ECONNABORTED` instead of the tool's classified timeout.
    """
    if is_test_module(mod):
        return
    budgets = memo(project, "c11_unmapped_budgets",
                   lambda: [b for b in _budgets(project) if not _budget_maps_timeouts(b)])
    if not budgets:
        return
    tools = tool_functions(project)
    aliases = _promisified(mod)
    seen: set[Key] = set()
    helpers = {h for b in budgets for h in b.helpers}
    for fn in mod.functions():
        k = key(mod, fn)
        if k in helpers:
            continue  # the helper's own timer is the budget
        covering = [_entry_budget(mod, fn, b) for b in budgets if (b.dynamic and k in tools) or k in b.covered or
                    (b.module is mod and mod.within(fn, b.bounded))]
        # a budget written in this function bounds the calls inside its own argument
        local = [b for b in budgets if b.module is mod and mod.within(b.node, fn) and
                 mod.enclosing_function(b.node) == fn]
        if not covering and not local:
            continue
        captured = _captured_client_timeouts(mod, fn)
        for inner in [*_inner_timeouts(mod, fn, aliases), *captured]:
            if key(mod, inner.node) in seen:
                continue
            around = covering + [b for b in budgets if b.module is mod and mod.within(inner.node, b.bounded)
                                 and not any(same(b.node, c.node) for c in covering)]
            if _retried_until_aborted(mod, inner.node):
                around = [b for b in around if not b.via_signal]
            if not around:
                continue
            verdicts = [(v, b) for b in around if (v := _compare(inner, b)) is not None]
            if not verdicts or len(verdicts) < len(around):
                continue  # a backstop longer than some budget around it
            # the confirmed comparison first, then the budget written for this code over a dispatcher's
            verdict, budget = min(verdicts, key=lambda vb: (vb[0] is not Verdict.CONFIRMED, vb[1].dynamic))
            seen.add(key(mod, inner.node))
            line = budget.module.line(budget.node)
            where = "" if budget.module is mod else f" of {budget.module.path}"
            shown = f"{budget.ms / 1000:g} s" if budget.ms is not None else f"`{budget.setting}`"
            inner_shown = f"{inner.ms / 1000:g} s" if inner.ms is not None else f"`{inner.setting}`"
            # a helper the budget calls may run elsewhere with no budget: the layering is wrong at the budget
            # (a client configured outside the tool and captured by it is cited at its own `timeout`: that setting is
            # what fires first, for every tool sharing the client)
            at_budget = not budget.dynamic and not (budget.module is mod and mod.within(inner.node, budget.bounded)) \
                and not any(same(inner.node, c.node) for c in captured)
            if at_budget and key(budget.module, budget.node) in seen:
                continue
            seen.add(key(budget.module, budget.node))
            claim = (f"the {shown} budget around `{fn_label(mod, fn)}` is longer than {inner.what} ({inner_shown}, "
                     f"line {mod.line(inner.node)}{'' if budget.module is mod else f' of {mod.path}'}) inside it, and "
                     "the inner expiry is not mapped to the tool's timeout") if at_budget else (
                f"{inner.what} ({inner_shown}) in `{fn_label(mod, fn)}` "
                f"{'fires' if verdict is Verdict.CONFIRMED else 'may fire'} before the {shown} tool budget at "
                f"line {line}{where}, and its expiry is not mapped to the tool's timeout")
            yield Hit(
                node=budget.node if at_budget else inner.node,
                module=budget.module if at_budget and budget.module is not mod else None,
                verdict=verdict,
                claim=claim,
                consequence="an ordinary slow call surfaces as a raw TimeoutError/ECONNABORTED instead of \"tool "
                            "timed out after N s\", so nobody can tell which tool was slow",
                direction="make the inner timeout a backstop longer than the budget (or clamp it to the remaining "
                          "budget) and catch its expiry to raise the tool's classified timeout",
                confirm_hint="" if verdict is Verdict.CONFIRMED else
                f"verify that `{inner.setting}` is longer than `{budget.setting}` ({budget.module.path}:{line}), or "
                "that its expiry is mapped to the tool's timeout error",
            )


def _budget_maps_timeouts(budget: _Budget) -> bool:
    """Whether a catch around the budget already maps client timeouts (then the layering is handled there)."""
    mod = budget.module
    for clause in catch_clauses_around(mod, budget.node):
        if re.search(r"ETIMEDOUT|ECONNABORTED|TimeoutError|AbortError", code_text(mod, clause)):
            return True
    return False


# ---------------------------------------------------------------- timeout folded into the cancel signal
_CANCEL_TEXT = re.compile(r"\bcancell?(ed|ation)?\b|\baborted\b|\binterrupted\b|\bstopped\b", re.I)
_DISTINGUISH = re.compile(r"time[ _-]?out|timed[ _-]?out|TimeoutError|\.reason\b|deadline|expired", re.I)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Fold:
    """A place where a timeout and a user cancel become one signal (or one catch)."""

    node: Node
    """The `AbortSignal.any(...)` call, the abort timer, or the budget call."""
    fn: Node
    """The function it is in."""
    shared: frozenset[str]
    """Names of the merged signal / controller (`signal`, `this.controller`)."""
    kind: str
    """`any` (AbortSignal.any with a timeout), `signal` (AbortSignal.timeout), `timer` (setTimeout aborting a
    controller), `budget` (a race or timeout wrapper)."""


def _assigned_name(mod: TsModule, node: Node) -> str:
    parent = node.parent
    while parent is not None and parent.type in ("await_expression", "parenthesized_expression", "as_expression"):
        parent = parent.parent
    if parent is None:
        return ""
    if parent.type == "variable_declarator":
        return mod.node_text(parent.child_by_field_name("name"))
    if parent.type == "assignment_expression":
        return mod.dotted(parent.child_by_field_name("left"))
    return ""


def _folds(mod: TsModule) -> Iterator[_Fold]:
    candidates = calls_named(mod, ("any", "setTimeout", "timeout"))
    if "race" in mod.text or "imeout" in mod.text:
        candidates = sorted({*candidates, *calls_matching(mod, _BUDGET_LAST)}, key=lambda n: n.start_byte)
    for call in candidates:
        name = cname(mod, call)
        fn = mod.enclosing_function(call)
        if fn is None:
            continue
        if name == "AbortSignal.any" and "AbortSignal.timeout" in mod.node_text(call):
            shared = _assigned_name(mod, call)
            yield _Fold(node=call, fn=fn, shared=frozenset({shared} if shared else set()), kind="any")
        elif name == "setTimeout":
            args = mod.arguments(call)
            if len(args) < 2:
                continue
            m = re.search(r"([\w$.]+)\.(abort|cancel)\s*\(", mod.node_text(args[0]))
            if m is None:
                continue
            ctrl = m.group(1)
            # whether a user stop also aborts it or only the timer does, an abort here can be the timeout; a
            # cancellation source (VS Code's `CancellationTokenSource`) is read through its `token`
            yield _Fold(node=call, fn=fn, shared=frozenset({ctrl, f"{ctrl}.signal", f"{ctrl}.token"}), kind="timer")
        elif name == "AbortSignal.timeout":
            if any(a.type == "call_expression" and cname(mod, a) == "AbortSignal.any" for a in mod.ancestors(call)):
                continue  # reported with the `AbortSignal.any` around it
            shared = _assigned_name(mod, call)
            yield _Fold(node=call, fn=fn, shared=frozenset({shared} if shared else set()), kind="signal")
        elif _budget_call(mod, call) and catch_clauses_around(mod, call):
            yield _Fold(node=call, fn=fn, shared=frozenset(), kind="budget")


def _merged_names(mod: TsModule, fold: _Fold) -> frozenset[str]:
    """Locals of the fold's function made from its signal (`const signal = user ? AbortSignal.any([user,
    budget.signal]) : budget.signal`, `const combined = AbortSignal.any([stop, deadline])`): an abort of any of
    them may be the timeout."""
    if not fold.shared:
        return frozenset()
    words = re.compile(r"(?<![\w$.])(" + "|".join(re.escape(n) for n in sorted(fold.shared, key=len, reverse=True))
                       + r")(?![\w$])")
    out: set[str] = set()
    for decl in nodes_in(mod, fold.fn, "variable_declarator"):
        target = decl.child_by_field_name("name")
        value = decl.child_by_field_name("value")
        if target is None or target.type != "identifier" or value is None or \
                not same(mod.enclosing_function(decl), fold.fn):
            continue
        if words.search(code_text(mod, value)) and re.search(r"[sS]ignal", code_text(mod, value)):
            out.add(mod.node_text(target))
    return frozenset(out)


def _cancel_report(mod: TsModule, clause: Node) -> Node | None:
    """The statement in a catch that reports a cancellation."""
    for node in iter_subtree(clause, into_functions=False):
        if node.type not in ("return_statement", "throw_statement", "expression_statement"):
            continue
        text = mod.node_text(node)
        if node.type == "expression_statement" and not re.search(r"=|\.(push|emit|send|resolve|reject)\(", text):
            continue
        for sub in iter_subtree(node, into_functions=False):
            value = string_value(mod, sub)
            if value is not None and _CANCEL_TEXT.search(value) and len(value) < 80:
                return node
            if sub.type in ("identifier", "property_identifier") and \
                    re.fullmatch(r"(Cancell?ed\w*|Aborted\w*|CANCELL?ED|ABORTED|[Cc]ancel(l)?ationError)",
                                 mod.node_text(sub)):
                return node
    return None


def _guarded_by_user_cancel(mod: TsModule, node: Node, clause: Node, fold: _Fold) -> bool:
    """Whether `node` only runs after a test that tells a user cancel apart (`if (userSignal.aborted)`), or
    (for `AbortSignal.any`) after an `AbortError` test that a `TimeoutError` does not pass."""
    for anc in mod.ancestors(node):
        if same(anc, clause):
            return False
        if anc.type not in ("if_statement", "ternary_expression", "switch_case"):
            continue
        cond = anc.child_by_field_name("condition") or anc.child_by_field_name("value")
        text = mod.node_text(cond)
        for m in re.finditer(r"([\w$.?]+?)\??\.aborted\b", text):
            if m.group(1).replace("?", "") not in fold.shared:
                return True
        if fold.kind in ("any", "signal") and "AbortError" in text:
            return True
    return False


def _state_test(mod: TsModule, fold: _Fold) -> Node | None:
    """`if (source.token.isCancellationRequested) return "cancelled"` / `if (controller.signal.aborted) …` after a
    timer folded into that source: the test reads the merged state, so the timeout takes the cancel branch. None
    when the timer records its own expiry (`timedOut = true`) or the function tells a timeout apart."""
    if fold.kind != "timer" or not fold.shared:
        return None
    timer_args = mod.arguments(fold.node)
    if timer_args and "=" in re.sub(r"=>|[=!]==?", "", mod.node_text(timer_args[0])):
        return None  # the timer sets a flag of its own
    if any(_DISTINGUISH.search(code_text(mod, n.child_by_field_name("condition")))
           for n in nodes_in(mod, fold.fn, "if_statement") if n.start_byte > fold.node.end_byte):
        return None  # `if (timedOut)`, `if (reason instanceof TimeoutError)`: the expiry is told apart
    names = "|".join(re.escape(n) for n in sorted(fold.shared, key=len, reverse=True))
    state = re.compile(rf"(?<![\w$.])({names})\??\.(aborted|isCancellationRequested)\b")
    for node in nodes_in(mod, fold.fn, "if_statement"):
        cond = node.child_by_field_name("condition")
        if cond is None or not state.search(mod.node_text(cond)) or node.start_byte < fold.node.end_byte or \
                any(a.type == "catch_clause" for a in mod.ancestors(node)):
            continue  # a test inside a catch is judged with the catch
        then = node.child_by_field_name("consequence")
        if then is not None and (_cancel_report(mod, then) is not None or _cancel_template(mod, then)):
            return node
    return None


def _cancel_template(mod: TsModule, block: Node) -> bool:
    """A `return`/`throw` whose template literal says cancelled (`` `Command cancelled.\n${out}` ``)."""
    for node in iter_subtree(block, into_functions=False):
        if node.type == "template_string" and node.parent is not None and \
                any(a.type in ("return_statement", "throw_statement") for a in mod.ancestors(node)):
            literal = "".join(mod.node_text(c) for c in node.named_children if c.type == "string_fragment")
            literal = literal or re.sub(r"\$\{[^}]*\}", "", mod.node_text(node))
            if _CANCEL_TEXT.search(literal) and len(literal) < 120:
                return True
    return False


@rule(CheckId.C11, lang="typescript", name="timeout-abort-reported-as-cancel")
def timeout_abort_reported_as_cancel(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a timeout folded into the cancel path whose expiry a catch reports as "cancelled":
    `AbortSignal.any([signal, AbortSignal.timeout(ms)])`, a `setTimeout(() => controller.abort(), ms)` (its expiry
    arrives as an `AbortError`), or a `Promise.race`/`withTimeout` budget, each with a catch that reports a
    cancellation without looking at the reason.

    The loop then cannot tell a slow tool from a user stop, and neither is reported truthfully.
    """
    del project
    if is_test_module(mod) or ("ancel" not in mod.text and "bort" not in mod.text):
        return
    seen: set[Key] = set()
    for found in _folds(mod):
        fold = replace(found, shared=found.shared | _merged_names(mod, found))
        clauses: list[Node] = []
        if fold.kind == "budget":
            clauses = catch_clauses_around(mod, fold.node)
        else:
            clauses = [c for c in nodes_in(mod, fold.fn, "catch_clause") if same(mod.enclosing_function(c), fold.fn)]
            body = fold.fn.child_by_field_name("body")
            if body is not None:
                clauses.extend(f for c in nodes_in(mod, body, "call_expression")
                               if mod.node_text(c.child_by_field_name("function")).endswith(".catch")
                               for f in mod.arguments(c) if f.type in FUNCTION_TYPES)
        test = _state_test(mod, fold)
        if test is not None and key(mod, fold.node) not in seen:
            seen.add(key(mod, fold.node))
            yield Hit(
                node=fold.node,
                claim=f"the tool's time budget (line {mod.line(fold.node)}) cancels the same source a user stop does, "
                      f"and `if ({mod.node_text(test.child_by_field_name('condition')).strip('()')})` (line "
                      f"{mod.line(test)}) reports every cancellation as a cancel without checking whether the "
                      "timer fired",
                consequence="a command that ran out of time is reported as cancelled: users and the loop cannot tell "
                            "a slow tool from a stop request",
                direction="record the expiry separately (a `timedOut` flag set by the timer, or a separate source) "
                          "and report it as the tool's classified timeout, distinct from a user cancel",
            )
        for clause in clauses:
            if _DISTINGUISH.search(code_text(mod, clause)):
                continue
            culprit = _cancel_report(mod, clause)
            if culprit is None or key(mod, culprit) in seen or _guarded_by_user_cancel(mod, culprit, clause, fold):
                continue
            seen.add(key(mod, culprit))
            how = {"any": "`AbortSignal.any(...)` merges the timeout into the cancel signal",
                   "timer": "the timeout timer aborts the request's controller, so its expiry arrives as an abort",
                   "signal": "the request runs under `AbortSignal.timeout(...)`",
                   "budget": "this catch receives the budget's expiry"}[fold.kind]
            yield Hit(
                node=culprit,
                claim=f"{how} (line {mod.line(fold.node)}), and the catch reports every abort as a cancellation "
                      "without checking whether the timeout fired",
                consequence="a tool that ran out of time is shown as \"cancelled\": users and the loop cannot tell a "
                            "slow tool from a stop request",
                direction="keep separate signals (or check `signal.reason` / `err.name === \"TimeoutError\"`) and "
                          "report the expiry as the tool's classified timeout, distinct from a user cancel",
            )

