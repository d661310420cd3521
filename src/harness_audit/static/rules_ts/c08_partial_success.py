"""C8 · Partial success — TypeScript/JavaScript rules.

Shapes detected:
- `promise-all-rejects-whole-batch`: `const results = await Promise.all(calls.map(run))` (or over an array of
  promises built in a loop; or `p-map` / `p-all` / Bluebird `map`) whose items do not catch their own errors: the
  first rejection throws away every other result. Also when the batch's value is dropped but its items deliver
  to independent destinations (POST / send / notify: which ones were delivered is lost) or bring up independent
  components (`connect`, `init`, `createMCPClient` over servers or plugins). An item (or the project function
  it calls, a namespace / `require` import followed) whose `catch` stores the expected failure class in its
  result (`if (e instanceof ToolError) result.error = e; else throw e`) handles its own errors.
  Items that each run a sub-agent (a method of a project class, built per item with `new`, that loops over model
  requests: `team.map((r) => r.investigate(goal))`) are confirmed.
- The same combinator inside a `try` whose `catch` hands the walked collection to a call (`markFailed(jobs.map((j)
  => j.id), err)`): every item is recorded failed, the ones that finished included; confirmed when the items run
  the model (agent jobs), else suspected.
- `batch-catch-drops-collected-results`: one `try` around a loop that collects per-item results
  (`results.push(await op(x))`), whose `catch` returns a failure without them.

Both judge what the batch runs: tool calls are confirmed, independent components (plugins, servers) loaded by a
dynamic `import()` or started (`connect`/`init`/`setup`) are confirmed when the collection names them, other
requests (fetches, model calls, searches, commands) suspected when they run in a tool (inline or registered by
reference) or walk independent things (urls, sources, channels, services, ...), and anything else (reads, pure
computation, a combinator over the caller's promises) is not reported.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from tree_sitter import Node

from harness_audit.findings import CheckId, Verdict
from harness_audit.static.lang.typescript import FUNCTION_TYPES, TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts import _agent_idioms as agent
from harness_audit.static.rules_ts import _ts_idioms as ts

BatchKind = Literal["tool", "io"]

_TOOL_SOURCE = re.compile(r"(tool_?[cC]alls?|toolCalls?|tool_?[uU]ses?|toolUses?|function_?[cC]alls?|functionCalls?|"
                          r"parallelCalls|toolRequests?|toolInvocations?|\bcalls\b|\bactions\b|pendingCalls)")
_TOOL_CALLEE = re.compile(r"^_?(execute|run|call|invoke|handle|dispatch|perform)\w*Tool(Call|Use|Request)?s?$|"
                          r"^_?(callTool|executeTool|runTool|invokeTool|dispatchTool)$", re.I)
_INDEPENDENT = re.compile(r"(urls?|links|quer(y|ies)|questions|tasks|jobs|agents|subagents?|searches|sites|targets|"
                          r"hosts|recipients|notifications|webhooks|repos|repositories|issues|tickets|documents|docs|"
                          r"pages|files|paths|items|sources|channels|services|endpoints|feeds|providers|backends|"
                          r"servers|regions|accounts|mirrors|indexes|indices|engines|destinations|subscribers|"
                          r"listeners|clusters|nodes|peers|devices|monitors|checks)\b", re.I)
_TOOL_RECEIVER = re.compile(r"tool|handler", re.I)
_IO_NAME = re.compile(r"(fetch|download|upload|request|send|post|embed|search|query|invoke|execute|complete|generate|"
                      r"scrape|crawl|browse|callApi|subagent|subAgent|runAgent|spawn|exec)", re.I)
_CONSEQUENCE = ("one failing item rejects the whole batch: the results of the items that succeeded are discarded, "
                "and the caller reports one failure for work that mostly succeeded")


@dataclass(frozen=True, slots=True, kw_only=True)
class _Batch:
    """What a batch runs per item and what it walks."""

    items: list[Node] = field(default_factory=list[Node])
    """Per-item code: a callback function or an item expression."""
    sources: list[Node] = field(default_factory=list[Node])
    """The collections walked (`toolCalls` in `toolCalls.map(...)`)."""


def _short(mod: TsModule, node: Node | None, limit: int = 50) -> str:
    text = " ".join(mod.node_text(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _independent_items(mod: TsModule, project: TsProject, call: Node, batch: _Batch) -> bool:
    """Whether a batch of plain requests looks like independent work whose outcomes are reported one by one: it runs
    in a tool, or walks a collection of independent things (urls, files, tasks). Batches of chunks or parts of one
    result (embeddings, image batches) fail together by design."""
    if _in_tool(mod, project, call):
        return True
    fn = mod.enclosing_function(call)
    return any(_INDEPENDENT.search(mod.node_text(s)) or _INDEPENDENT.search(_source_origin(mod, fn, s))
               for s in batch.sources)


def _source_origin(mod: TsModule, fn: Node | None, source: Node) -> str:
    """What a walked local was computed from (`const list = Object.keys(config.webhooks)` -> that text), skipping
    literal arrays and objects (their contents, comments included, say nothing about the collection)."""
    node = ts.unwrap(source)
    if node is None or node.type != "identifier":
        return ""
    parts: list[str] = []
    for value in mod.bindings(fn).get(mod.node_text(node), [])[:2]:
        value = ts.unwrap(value) or value
        if value.type not in ("array", "object"):
            parts.append(mod.node_text(value)[:200])
    return "\n".join(parts)


def _in_tool(mod: TsModule, project: TsProject | None, node: Node) -> bool:
    """Whether `node` runs inside a tool's implementation: an inline one (`execute: async (...) => ...`) or a
    function registered by reference (`const TOOL_IMPLS = { search_kb: searchKb }`)."""
    if ts.in_tool_function(mod, node) is not None:
        return True
    registered = ts.registered_tool_functions(mod, project)
    return bool(registered) and any(f.id in registered for f in ts.enclosing_functions(mod, node))


def _result_used(call: Node) -> bool:
    """Whether the batch's value is kept (assigned, returned, destructured, passed on), through `await`."""
    parent = call.parent
    while parent is not None and parent.type in ("await_expression", "parenthesized_expression", "as_expression"):
        parent = parent.parent
    return parent is not None and parent.type != "expression_statement"


def _filled_collection(mod: TsModule, call: Node, batch: _Batch) -> str | None:
    """The outer collection the items fill, when the batch's own value is dropped but each item stores its result
    (`registry[name] = def`, `loaded.push(p)`, `byName.set(k, v)`) into a local the function uses afterwards."""
    fn = mod.enclosing_function(call)
    if fn is None:
        return None
    stmt = call
    while stmt.parent is not None and stmt.parent != fn.child_by_field_name("body"):
        stmt = stmt.parent
    after = mod.source[stmt.end_byte:fn.end_byte].decode("utf-8", errors="replace")
    for item in batch.items:
        cb = ts.unwrap(item)
        if cb is None or cb.type not in FUNCTION_TYPES:
            continue
        own = set(mod.bindings(cb)) | set(mod.params(cb))
        targets: list[Node] = []
        for assign in mod.inside(mod.nodes("assignment_expression"), cb):
            left = assign.child_by_field_name("left")
            if left is not None and left.type in ("subscript_expression", "member_expression"):
                targets.append(left)
        for push in mod.inside(ts.calls_named(mod, "push", "set", "add"), cb):
            callee = push.child_by_field_name("function")
            if callee is not None and callee.type == "member_expression":
                targets.append(callee)
        for target in targets:
            root = target
            while root.type in ("subscript_expression", "member_expression"):
                inner = root.child_by_field_name("object")
                if inner is None:
                    break
                root = inner
            name = mod.node_text(root)
            if root.type == "identifier" and name not in own and \
                    re.search(rf"(^|[^\w$.]){re.escape(name)}($|[^\w$])", after):
                return name
    return None


def _handles_own_errors(mod: TsModule, fn: Node) -> bool:
    """Whether `fn` turns its failures into values: a `catch` that does not re-throw, or a `.catch(...)` handler."""
    for clause in mod.inside(mod.nodes("catch_clause"), fn):
        body = clause.child_by_field_name("body")
        if body is not None and not re.search(r"\bthrow\b", mod.node_text(body)):
            return True
    return bool(re.search(r"\.catch\(|\.then\([^()]*(\([^()]*\)[^()]*)*,", mod.node_text(fn)))


_ERROR_FIELD = re.compile(r"^(error|err|isError|failure|failed)$")


def _records_expected_failure(mod: TsModule, fn: Node) -> bool:
    """Whether a `catch` in `fn` turns the expected failure class into the item's outcome and re-throws only the
    rest: `catch (e) { if (e instanceof ToolError) result.error = e; else throw e; }`. The item resolves with an
    error record for an ordinary failure; what it re-throws (an abort, a broken invariant) is meant to end the
    whole batch."""
    for clause in mod.inside(mod.nodes("catch_clause"), fn):
        param = clause.child_by_field_name("parameter")
        body = clause.child_by_field_name("body")
        if param is None or body is None or param.type != "identifier" or mod.enclosing_function(clause) != fn:
            continue
        err = mod.node_text(param)
        for branch in mod.inside(mod.nodes("if_statement"), body):
            cond = mod.node_text(branch.child_by_field_name("condition"))
            cons = branch.child_by_field_name("consequence")
            if cons is None or not re.search(rf"\b{re.escape(err)}\s+instanceof\s+([\w$]+\.)*[A-Z]", cond) or \
                    re.search(r"\bthrow\b", mod.node_text(cons)):
                continue
            for node in [cons, *ts.descendants(cons)]:
                if node.type == "assignment_expression":
                    value = node.child_by_field_name("right")
                elif node.type == "return_statement" and node.named_children:
                    value = node.named_children[0]
                else:
                    continue
                if value is not None and any(mod.node_text(i) == err for i in ts.idents(value)):
                    return True
    return False


def _awaits_error_value(mod: TsModule, project: TsProject, fn: Node) -> bool:
    """Whether the item awaits a callee that reports failures as values: it binds the awaited result
    (`const { response } = await executeCall(req)`) and branches on its error field (`if (response.error)`,
    `res.isError`, `r.status === "error"`) without throwing there, so a failing call resolves with an error result
    instead of rejecting the batch. HTTP requests are excluded (fetch and axios reject on network failure)."""
    bound: set[str] = set()
    for decl in mod.inside(mod.nodes("variable_declarator"), fn):
        value = decl.child_by_field_name("value")
        if value is None or value.type != "await_expression" or mod.enclosing_function(decl) != fn:
            continue
        call = ts.unwrap(value)
        if call is None or call.type != "call_expression" or ts.http_request(mod, call) or \
                ts.is_model_call(mod, call):
            continue
        name = decl.child_by_field_name("name")
        if name is not None:
            bound |= {mod.node_text(n) for n in ([name] if name.type == "identifier" else mod.pattern_names(name))}
    if not bound:
        return False
    for branch in mod.inside(mod.nodes("if_statement"), fn):
        cond = mod.node_text(branch.child_by_field_name("condition"))
        cons = branch.child_by_field_name("consequence")
        if cons is None or re.search(r"\bthrow\b", mod.node_text(cons)):
            continue
        for m in re.finditer(r"([A-Za-z_$][\w$]*)(?:\??\.([A-Za-z_$][\w$]*))?", cond):
            base, field = m.group(1), m.group(2)
            if base in bound and (field and _ERROR_FIELD.match(field) or not field and _ERROR_FIELD.match(base)):
                return True
            if base in bound and field == "status" and re.search(r"['\"`](error|failed|failure)['\"`]", cond):
                return True
    return False


def _resolve_callee(mod: TsModule, project: TsProject, callee: Node | None,
                    near: Node) -> tuple[TsModule, Node] | None:
    """`ts.resolve_function`, plus a namespace import's member: `tools.runOne(...)` after
    `import * as tools from "./tools"` or `var tools = require("./tools.cjs")` (the CommonJS build of the same call)."""
    found = ts.resolve_function(mod, project, callee, near)
    callee = ts.unwrap(callee)
    if found is not None or callee is None or callee.type != "member_expression":
        return found
    obj, prop = callee.child_by_field_name("object"), callee.child_by_field_name("property")
    if obj is None or prop is None or obj.type != "identifier":
        return None
    spec = ts.imports_of(mod).get(mod.node_text(obj), "")
    other = project.resolve_import(mod, spec) if spec and "#" not in spec else None
    if other is None:
        return None
    name = mod.node_text(prop)
    fn = next((f for f in other.functions() if f.type != "method_definition" and other.function_name(f) == name
               and other.enclosing_function(f) is None), None)
    return (other, fn) if fn is not None else None


def _item_handles(mod: TsModule, project: TsProject, item: Node, depth: int = 2) -> bool:
    """Whether one item of the batch handles its own errors (directly, or in the project function it calls)."""
    node = ts.unwrap(item)
    if node is None or depth < 0:
        return False
    if node.type == "identifier" and (held := ts.unwrap(ts.resolve_value(mod, node))) is not None and \
            held.type == "call_expression":
        node = held  # `const p = (async () => { ... })(); promises.push(p)`
    if node.type == "call_expression" and (iife := ts.unwrap(node.child_by_field_name("function"))) is not None and \
            iife.type in FUNCTION_TYPES:
        node = iife  # `(async () => { ... })()` pushed as the item: judge its body
    if node.type in FUNCTION_TYPES:
        if _handles_own_errors(mod, node) or _awaits_error_value(mod, project, node) or \
                _records_expected_failure(mod, node):
            return True
        body = node.child_by_field_name("body")
        calls = ([body] if body is not None and body.type == "call_expression" else []) + \
            (mod.inside(mod.calls(), body) if body is not None else [])
        for call in calls[:4]:
            target = _resolve_callee(mod, project, call.child_by_field_name("function"), call)
            if target is not None and target[1] != node and _item_handles(target[0], project, target[1], depth - 1):
                return True
        return False
    if node.type == "call_expression":
        short = ts.last(mod.call_name(node))
        if short == "catch" or (short == "then" and len(mod.arguments(node)) >= 2):
            return True
        node = node.child_by_field_name("function") or node
    target = ts.resolve_function(mod, project, node, node)
    return target is not None and _item_handles(target[0], project, target[1], depth - 1)


def _batch_of(mod: TsModule, arg: Node) -> _Batch | None:
    """What `Promise.all(arg)` runs: `xs.map(cb)`, a local bound to one, an array pushed in a loop, or `[f(a), f(b)]`."""
    node = ts.unwrap(arg)
    if node is not None and node.type == "identifier":
        value = ts.unwrap(ts.resolve_value(mod, node))
        if value is not None and value.type == "array" and not value.named_children:
            return _pushed_batch(mod, node)
        node = value
    if node is None:
        return None
    if node.type == "call_expression" and ts.last(mod.call_name(node)) in ("map", "flatMap"):
        fn = node.child_by_field_name("function")
        args = mod.arguments(node)
        if fn is None or fn.type != "member_expression" or not args:
            return None
        return _Batch(items=[args[0]], sources=[fn.child_by_field_name("object") or fn])
    if node.type == "array":
        elements = [e for e in node.named_children if e.type != "comment"]
        names = {ts.last(mod.call_name(ts.unwrap(e) or e)) for e in elements
                 if (ts.unwrap(e) or e).type == "call_expression"}
        if len(elements) >= 2 and len(names) == 1 and all((ts.unwrap(e) or e).type == "call_expression"
                                                           for e in elements):
            return _Batch(items=elements)
    return None


def _pushed_batch(mod: TsModule, ident: Node) -> _Batch | None:
    """`const ps = []; for (const c of calls) ps.push(run(c)); await Promise.all(ps)`."""
    fn = mod.enclosing_function(ident)
    if fn is None:
        return None
    name = mod.node_text(ident)
    pushes = [c for c in mod.inside(ts.calls_named(mod, "push"), fn) if mod.call_name(c) == f"{name}.push"]
    items = [a for p in pushes for a in mod.arguments(p)]
    sources: list[Node] = []
    for push in pushes:
        loop = next((a for a in mod.ancestors(push) if a.type == "for_in_statement" or a == fn), None)
        right = loop.child_by_field_name("right") if loop is not None and loop.type == "for_in_statement" else None
        if right is not None:
            sources.append(right)
    return _Batch(items=items, sources=sources) if items else None


_COMPONENTS = re.compile(r"plugins?|extensions?|servers?|integrations?|addons?|providers?|readdir|glob", re.I)


def _loads_component(mod: TsModule, batch: _Batch) -> bool:
    """Whether each item loads an independent component: a dynamic `import(x)` / `require(x)` of a per-item module,
    then (typically) its `setup()` / `init()` / `connect()`."""
    for item in batch.items:
        cb = ts.unwrap(item)
        if cb is None or cb.type not in FUNCTION_TYPES:
            continue
        for inner in mod.inside(mod.calls(), cb):
            fn_node = inner.child_by_field_name("function")
            args = mod.arguments(inner)
            if fn_node is not None and fn_node.type in ("import", "identifier") and \
                    mod.node_text(fn_node) in ("import", "require") and args and args[0].type != "string":
                return True
    return False


def _component_sources(mod: TsModule, call: Node, batch: _Batch) -> bool:
    """Whether the collection walked names components, or was read from a directory listing."""
    fn = mod.enclosing_function(call)
    return any(_COMPONENTS.search(mod.derivation_text(fn, src, 2)) for src in batch.sources)


def _imports_per_item(mod: TsModule, project: TsProject, batch: _Batch) -> bool:
    """Whether each item reaches a dynamic `import(x)` / `require(x)` of a computed specifier in the project
    function it calls (`items.map((m) => this.load(m))` whose `load` imports `m.entry`)."""
    for item in batch.items:
        for where, scope in _item_scopes(mod, project, item)[1:]:
            if scope.type not in FUNCTION_TYPES or not re.search(r"\b(import|require)\s*\(", where.node_text(scope)):
                continue
            for inner in where.inside(where.calls(), scope):
                fn_node = inner.child_by_field_name("function")
                args = where.arguments(inner)
                if fn_node is not None and fn_node.type in ("import", "identifier") and \
                        where.node_text(fn_node) in ("import", "require") and args and args[0].type != "string":
                    return True
    return False


def _component_owner(mod: TsModule, call: Node) -> bool:
    """Whether the function (or class) running the batch names components (`PluginRegistry.loadAll`,
    `loadExtensions`)."""
    for anc in mod.ancestors(call):
        if anc.type in FUNCTION_TYPES and _COMPONENTS.search(mod.function_name(anc)):
            return True
        if anc.type in ("class_declaration", "class", "abstract_class_declaration") and \
                _COMPONENTS.search(mod.node_text(anc.child_by_field_name("name"))):
            return True
    return False


def _call_kind(mod: TsModule, call: Node) -> BatchKind | None:
    """`tool` for a call that runs a model-chosen tool, `io` for another request, else None."""
    name = mod.call_name(call)
    short = ts.last(name)
    recv = name.rsplit(".", 1)[0] if "." in name else ""
    fn_node = call.child_by_field_name("function")
    if _TOOL_CALLEE.search(short) or (fn_node is not None and fn_node.type == "subscript_expression" and
                                      _TOOL_RECEIVER.search(mod.node_text(fn_node))) or \
            (short in ("execute", "run", "call", "invoke") and _TOOL_RECEIVER.search(recv)):
        return "tool"
    if ts.http_request(mod, call) or ts.is_model_call(mod, call) or _IO_NAME.search(short):
        return "io"
    return None


def _judge(mod: TsModule, project: TsProject, batch: _Batch) -> BatchKind | None:
    """`tool` when the batch runs tool calls, `io` when it runs other requests, else None."""
    if any(_TOOL_SOURCE.search(mod.node_text(s)) for s in batch.sources):
        return "tool"
    kinds: set[BatchKind] = set()
    for item in batch.items:
        node = ts.unwrap(item)
        if node is None:
            continue
        scopes: list[tuple[TsModule, Node]] = []
        if node.type in FUNCTION_TYPES:
            scopes.append((mod, node))
        else:
            if node.type == "call_expression":
                kind = _call_kind(mod, node)
                if kind is not None:
                    kinds.add(kind)
            target = ts.resolve_function(mod, project, node.child_by_field_name("function")
                                         if node.type == "call_expression" else node, node)
            if target is not None:
                scopes.append(target)
        for where, body in scopes:
            for call in where.inside(where.calls(), body):
                kind = _call_kind(where, call)
                if kind is None:
                    kind = _callee_kind(where, project, call)
                if kind is not None:
                    kinds.add(kind)
    return "tool" if "tool" in kinds else "io" if kinds else None


def _callee_kind(mod: TsModule, project: TsProject, call: Node) -> BatchKind | None:
    """What the project function a per-item call reaches does (one call deep): `readPageText(u)` whose body
    fetches is a request."""
    target = ts.resolve_function(mod, project, call.child_by_field_name("function"), call)
    if target is None:
        return None
    where, fn = target
    body = fn.child_by_field_name("body")
    kinds = {k for c in (where.inside(where.calls(), body) if body is not None else [])
             if (k := _call_kind(where, c)) is not None}
    return "tool" if "tool" in kinds else "io" if kinds else None


_STARTS = {"connect", "initialize", "init", "setup", "activate", "start", "launch", "load", "register", "listen",
           "createMCPClient", "experimental_createMCPClient", "createClient", "spawnServer", "startServer"}
"""What bringing up one component looks like: `client.connect(transport)`, `plugin.init()`, `createMCPClient(...)`."""
_MUTATING_VERBS = {"post", "put", "patch", "delete", "del"}
_SENDS = re.compile(r"^_?(send|post|notify|publish|deliver|upload|charge|email|sms|page|alert|announce|broadcast|"
                    r"enqueue|submit)", re.I)
_METHOD_OPTION = re.compile(r"\bmethod\s*:\s*['\"`](POST|PUT|PATCH|DELETE)['\"`]", re.I)


def _item_scopes(mod: TsModule, project: TsProject, item: Node) -> list[tuple[TsModule, Node]]:
    """Where one item's code lives: its callback, and the project function it (or its callback) calls first."""
    node = ts.unwrap(item)
    if node is None:
        return []
    out: list[tuple[TsModule, Node]] = []
    if node.type in FUNCTION_TYPES:
        out.append((mod, node))
        calls = mod.inside(mod.calls(), node)[:4]
    elif node.type == "call_expression":
        out.append((mod, node))
        calls = [node]
    else:
        calls = []
        target = ts.resolve_function(mod, project, node, node)
        if target is not None:
            out.append(target)
    for call in calls:
        target = ts.resolve_function(mod, project, call.child_by_field_name("function"), call)
        if target is not None and target[1] not in [o[1] for o in out]:
            out.append(target)
    return out


def _item_calls(mod: TsModule, project: TsProject, batch: _Batch) -> Iterator[tuple[TsModule, Node]]:
    for item in batch.items:
        for where, scope in _item_scopes(mod, project, item):
            if scope.type == "call_expression":
                yield where, scope
            yield from ((where, c) for c in where.inside(where.calls(), scope))


def _starts_component(mod: TsModule, project: TsProject, batch: _Batch) -> bool:
    """Whether each item brings up a component (`connect(name, cfg)` whose body runs `client.connect(transport)`)."""
    return any(ts.last(where.call_name(c)) in _STARTS for where, c in _item_calls(mod, project, batch))


def _sends(mod: TsModule, project: TsProject, batch: _Batch) -> bool:
    """Whether the items change something outside: a POST/PUT/PATCH/DELETE, or a send/notify/publish call."""
    for where, c in _item_calls(mod, project, batch):
        name = where.call_name(c)
        short = ts.last(name)
        if ts.http_request(where, c):
            if short in _MUTATING_VERBS or _METHOD_OPTION.search(where.node_text(c)):
                return True
            continue
        if _SENDS.search(short) and short not in ("sendStatus",):
            return True
    return False


# ---------------------------------------------------------------- sub-agents: each item runs its own model loop
_CLASS_TYPES = ("class_declaration", "class", "abstract_class_declaration")


def _class_named(mod: TsModule, project: TsProject, name: str) -> tuple[TsModule, Node] | None:
    """The project class `name`: declared in this module or imported from a relative one."""
    for where in (mod, project.resolve_import(mod, ts.imports_of(mod).get(name, "").split("#", 1)[0])):
        if where is None:
            continue
        wanted = name if where is mod else (ts.imports_of(mod)[name].partition("#")[2] or name)
        for cls in _classes(where):
            if where.node_text(cls.child_by_field_name("name")) == wanted:
                return where, cls
    return None


def _classes(mod: TsModule) -> list[Node]:
    return ts.cached(mod, "c08.classes", lambda: [n for n in ts.descendants(mod.tree.root_node)
                                                  if n.type in _CLASS_TYPES])


def _constructed(mod: TsModule, node: Node | None, fn: Node | None, depth: int = 2) -> str | None:
    """The class an expression's value is an instance of, when the code shows it being built: `new Agent(...)`,
    a local bound to one, or an element of a collection made of them (`tasks.map((t) => new Agent(t))`,
    `[new A(), new A()]`)."""
    node = ts.unwrap(node)
    if node is None or depth < 0:
        return None
    if node.type == "new_expression":
        ctor = node.child_by_field_name("constructor")
        return mod.node_text(ctor) if ctor is not None and ctor.type == "identifier" else None
    if node.type == "identifier":
        for scope in ([fn] if fn is not None else []) + ts.enclosing_functions(mod, node):
            for value in mod.bindings(scope).get(mod.node_text(node), [])[:1]:
                return _constructed(mod, value, scope, depth - 1)
    return None


def _element_class(mod: TsModule, collection: Node | None, fn: Node | None) -> str | None:
    """The class of the elements of a collection: `xs.map((x) => new Agent(x))` or `[new Agent(a), ...]`, directly
    or through the local it is bound to."""
    node = ts.unwrap(collection)
    if node is not None and node.type == "identifier" and fn is not None:
        values = mod.bindings(fn).get(mod.node_text(node), [])
        node = ts.unwrap(values[0]) if values else None
    if node is None:
        return None
    if node.type == "array":
        names = {_constructed(mod, e, fn) for e in node.named_children if e.type != "comment"}
        return names.pop() if len(names) == 1 else None
    if node.type == "call_expression" and ts.last(mod.call_name(node)) == "map":
        args = mod.arguments(node)
        cb = ts.unwrap(args[0]) if args else None
        body = ts.unwrap(cb.child_by_field_name("body")) if cb is not None and cb.type in FUNCTION_TYPES else None
        if body is not None and body.type == "new_expression":
            return _constructed(mod, body, cb)
        if body is not None and body.type == "statement_block":
            rets = [r for r in mod.inside(mod.nodes("return_statement"), body) if mod.enclosing_function(r) == cb]
            if len(rets) == 1 and rets[0].named_children:
                return _constructed(mod, rets[0].named_children[0], cb)
    return None


def _model_loop(project: TsProject, mod: TsModule, fn: Node, depth: int = 4) -> bool:
    """Whether `fn` runs a loop of model requests: a `for`/`while` around a call that reaches the model (an SDK
    or HTTP model request, or a project function that makes one), followed through `this.` methods, imported
    functions and uniquely named methods, `depth` calls deep."""
    memo = ts.cached(mod, "c08.model_loop", dict[int, bool])
    if fn.id in memo:
        return memo[fn.id]
    memo[fn.id] = False
    found = any(_reaches_model(project, mod, call, depth) for call in mod.inside(mod.calls(), fn)
                if mod.enclosing_loops(call)) or depth > 0 and any(
        _model_loop(project, ref.module, ref.node, depth - 1) for call in mod.inside(mod.calls(), fn)
        for ref in agent.resolve_call(mod, project, call)[:2] if ref.node != fn)
    memo[fn.id] = found
    return found


def _reaches_model(project: TsProject, mod: TsModule, call: Node, depth: int) -> bool:
    """Whether a call is a model request or reaches one through project functions (`depth` calls deep)."""
    if ts.is_model_call(mod, call) or agent.is_model_call(mod, call):
        return True
    if depth <= 0:
        return False
    memo = ts.cached(mod, "c08.reaches_model", dict[tuple[int, int], bool])
    slot = (call.id, depth)
    if slot not in memo:
        memo[slot] = False
        memo[slot] = any(_reaches_model(project, ref.module, inner, depth - 1)
                         for ref in agent.resolve_call(mod, project, call)[:2]
                         for inner in ref.module.inside(ref.module.calls(), ref.node))
    return memo[slot]


def _runs_sub_agents(mod: TsModule, project: TsProject, batch: _Batch) -> str | None:
    """The class whose method each item runs, when that method runs its own loop of model turns: the batch fans
    out sub-agents (`children.map((c) => c.run(task))` over `new Agent(...)` instances)."""
    fn_of_batch = mod.enclosing_function(batch.items[0]) if batch.items else None
    for item in batch.items:
        cb = ts.unwrap(item)
        if cb is None or cb.type not in FUNCTION_TYPES:
            continue
        first = ts.params(cb)[:1]
        param = mod.node_text(ts.param_pattern(first[0])) if first else ""
        for call in mod.inside(mod.calls(), cb)[:4]:
            callee = call.child_by_field_name("function")
            if callee is None or callee.type != "member_expression":
                continue
            recv = ts.unwrap(callee.child_by_field_name("object"))
            cls_name = _constructed(mod, recv, cb)
            if cls_name is None and recv is not None and recv.type == "identifier" and mod.node_text(recv) == param:
                cls_name = next((c for src in batch.sources if (c := _element_class(mod, src, fn_of_batch))), None)
            found = _class_named(mod, project, cls_name) if cls_name else None
            if found is None:
                continue
            where, cls = found
            method = mod.node_text(callee.child_by_field_name("property"))
            for fn in where.inside(where.nodes("method_definition"), cls):
                if where.node_text(fn.child_by_field_name("name")) == method and _model_loop(project, where, fn):
                    return cls_name
    return None


_ALL_OR_NOTHING = {"Promise.all", "pMap", "Promise.map", "Bluebird.map", "bluebird.map", "pAll"}
"""Combinators that reject when an item fails (`p-map`, `p-all`, Bluebird's `map`) and return no partial results."""


def _batches(mod: TsModule) -> Iterator[tuple[Node, str, _Batch]]:
    """(call, combinator, what it runs) for each all-or-nothing combinator of the module."""
    for call in ts.calls_named(mod, "all", "map", "pMap", "pAll"):
        name = mod.call_name(call)
        if name not in _ALL_OR_NOTHING:
            continue
        args = mod.arguments(call)
        if not args:
            continue
        if name == "Promise.all" or name == "pAll":
            batch = _batch_of(mod, args[0])
            if batch is not None and name == "pAll":
                batch = _Batch(items=[c for i in batch.items if (c := ts.unwrap(i)) is not None], sources=batch.sources)
        else:
            if name == "pMap" and not mod.imports().get("pMap", "").startswith("p-map"):
                continue
            if len(args) < 2:
                continue  # (`stopOnError: false` only defers the rejection: an AggregateError still drops them all)
            batch = _Batch(items=[args[1]], sources=[args[0]])
        if batch is not None and batch.items:
            yield call, name, batch


_PIPELINE_METHOD = re.compile(r"^_?(extract|transform|ingest|index|embed|split|chunk|enrich|annotate|summari[sz]e)\w*$",
                              re.I)
_PIPELINE_BASE = re.compile(r"Extractor|Transform|Reader|Loader|Splitter|Ingest|Pipeline|Indexer|Embedding|Enricher")


def _pipeline_step(mod: TsModule, call: Node) -> str | None:
    """The name of a data-pipeline step holding `call` (a `extract(nodes)` method, a class extending an extractor,
    a transform or a reader): ingestion code whose contract may be one result per input, not the agent loop."""
    fn = mod.enclosing_function(call)
    while fn is not None and mod.iteration_callback(fn):
        fn = mod.enclosing_function(fn)
    if fn is None:
        return None
    name = mod.function_name(fn)
    if _PIPELINE_METHOD.match(name):
        return name
    for anc in mod.ancestors(fn):
        if anc.type in ("class_declaration", "class", "abstract_class_declaration"):
            heritage = next((c for c in anc.named_children if c.type == "class_heritage"), None)
            if heritage is not None and _PIPELINE_BASE.search(mod.node_text(heritage)):
                return name
            break
    return None


def _catch_fails_every_item(mod: TsModule, call: Node, batch: _Batch) -> tuple[Node, Node] | None:
    """(collection, call) when the `catch` of the `try` around the batch (same function) passes the collection the
    batch walked to a call (`markFailed(jobs.map((j) => j.id), err)`, `for (const j of jobs) await fail(j)`): the
    batch's one failure is recorded against every item."""
    names = {mod.node_text(s) for s in batch.sources if s.type == "identifier"}
    if not names:
        return None
    fn = mod.enclosing_function(call)
    for anc in mod.ancestors(call):
        if anc == fn:
            return None
        if anc.type != "statement_block" or anc.parent is None or anc.parent.type != "try_statement" or \
                anc.parent.child_by_field_name("body") != anc:
            continue
        handler = anc.parent.child_by_field_name("handler")
        hbody = handler.child_by_field_name("body") if handler is not None else None
        if hbody is None:
            return None
        walked: dict[str, Node | None] = dict.fromkeys(names)
        for loop in mod.inside(mod.nodes("for_in_statement"), hbody):
            left, right = loop.child_by_field_name("left"), ts.unwrap(loop.child_by_field_name("right"))
            if left is not None and right is not None and right.type == "identifier" and mod.node_text(right) in names:
                for n in ts.idents(left):  # `for (const j of jobs) await fail(j.id)`
                    walked[mod.node_text(n)] = right
        for inner in mod.inside(mod.calls(), hbody):
            if _LOGGING_CALL.search(mod.call_name(inner)):
                continue
            for arg in mod.arguments(inner):
                for ident in ts.idents(arg):
                    if ident.type == "identifier" and mod.node_text(ident) in walked:
                        return walked[mod.node_text(ident)] or ident, inner
        return None
    return None


_LOGGING_CALL = re.compile(r"^(console|logger|log|this\.logger|this\.log)\.|^(debug|warn|info|error)$")


@rule(CheckId.C8, lang="typescript", name="promise-all-rejects-whole-batch")
def promise_all_rejects_whole_batch(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags `await Promise.all(...)` (or `p-map` / Bluebird `map`) over tool calls, requests or components whose
    items do not catch their own errors.

    `Promise.all` rejects as soon as one item rejects: the values of the items that succeeded are never
    returned, so one failure discards the whole batch. `Promise.allSettled` keeps every outcome. A `catch` around
    the batch that records the failure against every item of the collection it walked (`failJobs(jobs.map((j) =>
    j.id), err)`) marks finished items failed as well.
    """
    if ts.skipped_module(mod) or not any(w in mod.text for w in ("Promise.all", "pMap", ".map(", "pAll")):
        return
    for call, combinator, batch in _batches(mod):
        args = mod.arguments(call)
        shown = f"{combinator}({_short(mod, args[0], 40)})"
        # the catch records the failure against every item: judged on the item's own function (its callees may
        # catch some errors, but the author expects the item to reject)
        blamed = _catch_fails_every_item(mod, call, batch) if not any(
            _item_handles(mod, project, i, 1) for i in batch.items) else None
        if blamed is None and any(_item_handles(mod, project, i) for i in batch.items):
            continue
        used = _result_used(call) or _filled_collection(mod, call, batch) is not None
        imports = _imports_per_item(mod, project, batch) and _component_owner(mod, call)
        if _loads_component(mod, batch) or imports or _starts_component(mod, project, batch) and \
                _component_sources(mod, call, batch):
            certain = imports or _component_sources(mod, call, batch)
            if not used and not certain:
                continue
            yield Hit(
                node=call, verdict=Verdict.CONFIRMED if certain else Verdict.SUSPECTED,
                claim=f"`{shown}` loads independent components and rejects on the first one whose import, start "
                      "or connection fails; the items do not catch their own errors",
                consequence="one broken plugin (or server) fails the whole load: the components that loaded are "
                            "discarded and the agent starts with none of them",
                direction="use `Promise.allSettled`, keep the components that loaded and report each failed one by "
                          "name",
                confirm_hint="" if certain else
                f"verify that the items loaded at line {mod.line(call)} are independent of one another, so one "
                "failure should not discard the others",
            )
            continue
        sub_agent = _runs_sub_agents(mod, project, batch) if used else None
        if sub_agent is not None:
            yield Hit(
                node=call,
                claim=f"`{shown}` runs one `{sub_agent}` sub-agent per item (each its own loop of model turns) and "
                      "rejects as soon as one of them fails; the items do not catch their own errors",
                consequence="one failing sub-agent discards the finished work (and the paid model turns) of every "
                            "sibling, and the parent sees a single failure",
                direction="use `Promise.allSettled` and report each sub-agent's outcome (its result, or its failure "
                          "with the error) to the parent",
            )
            continue
        if blamed is not None:
            agents = any(_reaches_model(project, where, inner, 3) for item in batch.items
                         for where, scope in _item_scopes(mod, project, item)
                         for inner in where.inside(where.calls(), scope))
            yield Hit(
                node=call, verdict=Verdict.CONFIRMED if agents else Verdict.SUSPECTED,
                claim=f"`{shown}` rejects on the first failing item, and its `catch` hands every item of "
                      f"`{_short(mod, blamed[0], 30)}` to `{_short(mod, blamed[1], 40)}`, the items that succeeded "
                      "included" + (" (each item runs the model)" if agents else ""),
                consequence="one failing item marks the whole batch failed: finished work is recorded as failed, and a "
                            "retry runs (and pays for) it again",
                direction="use `Promise.allSettled` and record each item's own outcome (done with its result, or "
                          "failed with its error)",
                confirm_hint="" if agents else
                f"verify that the items of the batch at line {mod.line(call)} are independent, so one failing should "
                "not mark the others failed",
            )
            continue
        kind = _judge(mod, project, batch)
        if kind is None or (kind == "io" and not _independent_items(mod, project, call, batch)):
            continue
        if not used:
            if not _sends(mod, project, batch):
                continue
            yield Hit(
                node=call, verdict=Verdict.SUSPECTED,
                claim=f"`{shown}` sends to several independent destinations and rejects on the first failure; "
                      "which ones were delivered is never recorded",
                consequence="one failing destination makes the whole operation report failure although the others "
                            "were delivered, and a retry sends those again",
                direction="use `Promise.allSettled` and report each destination's outcome (delivered / failed with "
                          "its error)",
                confirm_hint=f"verify that the destinations of the batch at line {mod.line(call)} are independent "
                             "(one failing should not make the delivered ones count as failed)",
            )
            continue
        what = "tool call" if kind == "tool" else "item"
        step = _pipeline_step(mod, call) if kind != "tool" else None
        if step is not None:
            yield Hit(
                node=call, verdict=Verdict.SUSPECTED,
                claim=f"`{shown}` in the data-pipeline step `{step}` rejects on the first failing item; the items do "
                      "not catch their own errors, so the results of the others are lost",
                consequence="one failing item fails the whole step: the work (and any paid model calls) of the items "
                            "that succeeded is discarded",
                direction="use `Promise.allSettled` and keep the items that succeeded, marking or retrying the "
                          "failed ones (or catch inside each item)",
                confirm_hint=f"this is ingestion code, not the agent loop: verify that callers of `{step}` want the "
                             "items that succeeded (an all-or-nothing contract of one result per input makes "
                             "failing the whole batch a design choice, not a defect)",
            )
            continue
        yield Hit(
            node=call, verdict=Verdict.CONFIRMED if kind == "tool" else Verdict.SUSPECTED,
            claim=f"`{shown}` rejects on the first failing {what}; the items do not catch their own errors, so the "
                  "results of the others are lost",
            consequence=_CONSEQUENCE,
            direction="use `Promise.allSettled` and turn each rejected item into its own error result (or catch "
                      "inside each item)",
            confirm_hint="" if kind == "tool" else
            f"verify that the items of the batch at line {mod.line(call)} are independent, so a failure of one "
            "should not discard the others' results",
        )


# ---------------------------------------------------------------- one try around a collecting loop
def _tool_reads_each(mod: TsModule, project: TsProject, loop: Node, op: Node) -> bool:
    """A tool walking independent things (files, pages, records) that reads each one with its own awaited call on
    the loop variable (`await fs.readFile(uri)`, `await workspace.fs.readFile(f)`): one unreadable item should not
    discard the others' results."""
    if not (_in_tool(mod, project, loop) or ts.in_object_tool(mod, loop) is not None):
        return False
    left = loop.child_by_field_name("left")
    names = {mod.node_text(n) for n in (mod.pattern_names(left) if left is not None else [])}
    names.discard("")
    return bool(names) and any(mod.node_text(i) in names for i in ts.idents(op))


def _accumulator(mod: TsModule, loop: Node) -> tuple[str, Node] | None:
    """(`results`, the awaited per-item call) for a loop body doing `results.push(await op(x))` or
    `const r = await op(x); results.push(r)` / `results[k] = r`."""
    body = loop.child_by_field_name("body")
    if body is None:
        return None
    awaits = [a for a in mod.inside(mod.nodes("await_expression"), body) if mod.enclosing_function(a) ==
              mod.enclosing_function(loop)]
    if not awaits:
        return None
    # a list declared inside the body is rebuilt per item (`const patterns = []` per directory): it holds no
    # results of earlier items, so the `catch` loses nothing of it
    local = {mod.node_text(d.child_by_field_name("name")) for d in mod.inside(mod.nodes("variable_declarator"), body)}
    for push in mod.inside(ts.calls_named(mod, "push", "set"), body):
        name = mod.call_name(push)
        if "." not in name or name.split(".")[0].split("[")[0] in local:
            continue
        return name.rsplit(".", 1)[0], awaits[0]
    for node in mod.inside(mod.nodes("assignment_expression"), body):
        left = node.child_by_field_name("left")
        if left is not None and left.type == "subscript_expression":
            target = mod.node_text(left.child_by_field_name("object"))
            if target.split(".")[0].split("[")[0] in local:
                continue
            return target, awaits[0]
    return None


@rule(CheckId.C8, lang="typescript", name="batch-catch-drops-collected-results")
def batch_catch_drops_collected_results(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags one `try` around a loop that collects per-item results, whose `catch` returns a failure without them.

    A single failing item jumps out of the loop into the `catch`, which reports the whole batch as failed:
    everything already collected is thrown away.
    """
    if ts.skipped_module(mod):
        return
    for tr in mod.nodes("try_statement"):
        handler = tr.child_by_field_name("handler")
        body = tr.child_by_field_name("body")
        hbody = handler.child_by_field_name("body") if handler is not None else None
        if body is None or hbody is None:
            continue
        stmts = [s for s in hbody.named_children if s.type != "comment"]
        if not stmts or stmts[-1].type != "return_statement":
            continue
        for loop in (s for s in body.named_children if s.type in ("for_in_statement", "for_statement")):
            if mod.inside(mod.nodes("try_statement"), loop):
                continue
            found = _accumulator(mod, loop)
            if found is None:
                continue
            acc, op = found
            head = acc.split(".")[0].split("[")[0]
            if head != "this" and any(mod.node_text(i) == head for i in ts.idents(hbody)):
                continue
            if head == "this" and acc in mod.node_text(hbody):
                continue
            if _judge(mod, project, _Batch(items=[op], sources=[c for c in [loop.child_by_field_name("right")] if c])) \
                    is None and not _tool_reads_each(mod, project, loop, op):
                continue
            yield Hit(
                node=stmts[-1], verdict=Verdict.SUSPECTED,
                claim=f"one `try` wraps the whole loop at line {mod.line(loop)}; this `catch` returns without the "
                      f"results already collected in `{acc}`",
                consequence=_CONSEQUENCE,
                direction="move the `try` inside the loop and record each item's success or failure separately "
                          "(or return the collected results along with the error)",
                confirm_hint=f"verify that the items of the loop at line {mod.line(loop)} are independent (the "
                             f"operation at line {mod.line(op)} does not need earlier items to have succeeded)",
            )
            break
