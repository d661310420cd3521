"""TS/JS agent idioms shared by the C11–C15 rules: model calls, tool code, numbers, scopes.

Everything here reads the per-module node index of `TsModule`; project-wide facts (which functions reach the
model, which functions run as tool code) are computed once per project and cached for the one project
being audited.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import TypeVar

from tree_sitter import Node

from harness_audit.static.lang import same_origin_request
from harness_audit.static.lang.typescript import FUNCTION_TYPES, INDEXED_TYPES, LOOP_TYPES, TsModule, TsProject
from harness_audit.static.recon_ts import MODEL_COMMAND, REALTIME_REQUEST
from harness_audit.static.rules_ts._ts_idioms import dispatch_table

T = TypeVar("T")

Key = tuple[str, int, int]
"""A node's identity across lookups: (module path, start byte, end byte)."""


def key(mod: TsModule, node: Node) -> Key:
    """A stable identity for `node` (tree-sitter hands out a fresh Python object on every access)."""
    return (mod.path, node.start_byte, node.end_byte)


def last(name: str) -> str:
    """The last part of a dotted name."""
    return name.rsplit(".", 1)[-1]


def receiver(name: str) -> str:
    """Everything before the last part of a dotted name (`""` for a bare name)."""
    return name.rsplit(".", 1)[0] if "." in name else ""


_TEST_PATH = re.compile(r"(^|/)(tests?|__tests__|__mocks__|spec|e2e)/|\.(test|spec)\.[cm]?[jt]sx?$")


@cache
def _is_test_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path))


def is_test_module(mod: TsModule) -> bool:
    """A test, spec or mock file: its fakes are not the harness."""
    return _is_test_path(mod.path)


# ---------------------------------------------------------------- per-project memo
_MEMO: list[tuple[TsProject, dict[str, object]]] = []
"""The current project's memo (one project at a time, so nothing outlives the next audit)."""


def memo(project: TsProject, name: str, build: Callable[[], T]) -> T:
    """`build()` once per project under `name`."""
    if not _MEMO or _MEMO[0][0] is not project:
        _MEMO[:] = [(project, {})]
        _MOD_MEMO.clear()  # module memos belong to the project being audited
    store = _MEMO[0][1]
    if name not in store:
        store[name] = build()
    return store[name]  # type: ignore[return-value]  # each name is only ever stored by one builder


_MOD_MEMO: dict[int, tuple[TsModule, dict[str, object]]] = {}


def mod_memo(mod: TsModule, name: str, build: Callable[[], T]) -> T:
    """`build()` once per module under `name` (kept while the module object lives)."""
    entry = _MOD_MEMO.get(id(mod))
    if entry is None or entry[0] is not mod:
        if len(_MOD_MEMO) > 1_000_000:
            _MOD_MEMO.clear()
        entry = (mod, {})
        _MOD_MEMO[id(mod)] = entry
    store = entry[1]
    if name not in store:
        store[name] = build()
    return store[name]  # type: ignore[return-value]  # each name is only ever stored by one builder


def imports_of(mod: TsModule) -> dict[str, str]:
    """`mod.imports()`, computed once per module."""
    return mod_memo(mod, "imports", mod.imports)


def _calls_by_last(mod: TsModule) -> dict[str, list[Node]]:
    """Every call by the last part of its callee's name (`create` for `client.chat.completions.create`), read from
    the source bytes around the callee (built once per module; exotic callees land under junk keys)."""

    def build() -> dict[str, list[Node]]:
        src = mod.source
        out: dict[str, list[Node]] = {}
        for call in mod.calls():
            fn = call.child_by_field_name("function")
            if fn is None:
                continue
            start, end = fn.start_byte, fn.end_byte
            dot = src.rfind(b".", start, end)
            name = src[dot + 1 if dot >= 0 else start:end].strip().lstrip(b"#")
            out.setdefault(name.decode("utf-8", errors="replace"), []).append(call)
        return out

    return mod_memo(mod, "calls_by_last", build)


_SIMPLE_CHAIN = re.compile(rb"[A-Za-z_$][\w$]*(?:\s*\??\.\s*#?[A-Za-z_$][\w$]*)*")
"""A callee that is a plain member chain (`client.chat.completions.create`): its dotted name is its text."""


def cname(mod: TsModule, call: Node) -> str:
    """`mod.call_name(call)`, cached per module (a plain member chain is read straight from the source)."""
    if call.type != "call_expression":
        return mod.call_name(call)
    names = mod_memo(mod, "call_names", dict[tuple[int, int], str])
    k = (call.start_byte, call.end_byte)
    name = names.get(k)
    if name is None:
        fn = call.child_by_field_name("function")
        raw = mod.source[fn.start_byte:fn.end_byte] if fn is not None else b""
        if _SIMPLE_CHAIN.fullmatch(raw):
            name = raw.replace(b"?.", b".").translate(None, b" \t\r\n").decode("utf-8", errors="replace")
        else:
            name = mod.call_name(call)
        names[k] = name
    return name


def calls_named(mod: TsModule, lasts: Iterable[str]) -> list[Node]:
    """Calls whose dotted name ends in one of `lasts` (`create` finds `client.chat.completions.create`), in
    source order."""
    table = _calls_by_last(mod)
    out = [c for name in set(lasts) for c in table.get(name, ())]
    out.sort(key=lambda n: n.start_byte)
    return out


def calls_matching(mod: TsModule, pattern: re.Pattern[str]) -> list[Node]:
    """Calls whose last name part matches `pattern` (tested once per distinct name of the module)."""
    return calls_named(mod, [n for n in _calls_by_last(mod) if pattern.search(n)])


# ---------------------------------------------------------------- scopes and text
def nodes_in(mod: TsModule, container: Node, *types: str) -> list[Node]:
    """Indexed nodes of `types` inside `container`, in source order (binary search over the index)."""
    out: list[Node] = []
    for t in types:
        assert t in INDEXED_TYPES, f"{t} is not in the module index"
        nodes = mod.nodes(t)
        starts = mod_memo(mod, f"starts:{t}", lambda nodes=nodes: [n.start_byte for n in nodes])
        i = bisect_left(starts, container.start_byte)
        while i < len(nodes) and nodes[i].start_byte < container.end_byte:
            if nodes[i].end_byte <= container.end_byte:
                out.append(nodes[i])
            i += 1
    if len(types) > 1:
        out.sort(key=lambda n: n.start_byte)
    return out


def same(a: Node | None, b: Node | None) -> bool:
    """Whether two handles name the same node."""
    return a is not None and b is not None and a.start_byte == b.start_byte and a.end_byte == b.end_byte \
        and a.type == b.type


def unwrap(node: Node | None) -> Node | None:
    """Through parentheses, `await`, `as`/`satisfies` casts and non-null assertions."""
    while node is not None and node.type in ("parenthesized_expression", "await_expression", "as_expression",
                                             "non_null_expression", "satisfies_expression"):
        node = node.named_children[0] if node.named_children else None
    return node


def string_value(mod: TsModule, node: Node | None) -> str | None:
    """The value of a string literal or a template without substitutions."""
    if node is None:
        return None
    if node.type == "string":
        return mod.node_text(node)[1:-1]
    if node.type == "template_string" and not any(c.type == "template_substitution" for c in node.named_children):
        return mod.node_text(node)[1:-1]
    return None


def code_text(mod: TsModule, node: Node | None) -> str:
    """A node's source with its comments blanked out (markers and prose in comments are not code)."""
    if node is None:
        return ""
    raw = mod.source[node.start_byte:node.end_byte]
    if b"//" not in raw and b"/*" not in raw:
        return raw.decode("utf-8", errors="replace")
    comments = [c for c in iter_subtree(node) if c.type == "comment"]
    if not comments:
        return mod.node_text(node)
    parts: list[bytes] = []
    at = node.start_byte
    for c in comments:
        parts.append(mod.source[at:c.start_byte])
        parts.append(b" ")
        at = c.end_byte
    parts.append(mod.source[at:node.end_byte])
    return b"".join(parts).decode("utf-8", errors="replace")


def words_in_code(mod: TsModule, words: Iterable[str]) -> bool:
    """Whether one of `words` occurs as a whole word in the module's code, outside comments."""
    src = mod.source
    root = mod.tree.root_node
    for word in words:
        raw = word.encode("utf-8")
        at = src.find(raw)
        while at >= 0:
            end = at + len(raw)
            before = src[at - 1:at] if at else b" "
            after = src[end:end + 1]
            if not (before.isalnum() or before in (b"_", b"$")) and not (after.isalnum() or after in (b"_", b"$")):
                node = root.descendant_for_byte_range(at, end)
                if node is None or node.type != "comment":
                    return True
            at = src.find(raw, end)
    return False


def statement_of(node: Node) -> Node:
    """The statement (or declaration) `node` belongs to."""
    cur = node
    while cur.parent is not None and not (cur.type.endswith("_statement") or cur.type.endswith("declaration")
                                          or cur.type in ("public_field_definition", "field_definition")):
        cur = cur.parent
    return cur


def enclosing_class(mod: TsModule, node: Node) -> Node | None:
    """The nearest class around `node`."""
    return next((a for a in mod.ancestors(node) if a.type in ("class_declaration", "class")), None)


def later_statements(mod: TsModule, stmt: Node, *, stop: frozenset[str] = FUNCTION_TYPES) -> list[Node]:
    """The statements after `stmt` in its block, continuing outwards until a node of `stop` types."""
    out: list[Node] = []
    child = stmt
    for anc in mod.ancestors(stmt):
        if anc.type in ("statement_block", "program", "switch_body", "class_body"):
            seen = False
            for sib in anc.named_children:
                if seen:
                    out.append(sib)
                elif same(sib, child):
                    seen = True
        if anc.type in stop or anc.type in LOOP_TYPES:
            break
        child = anc
    return out


# ---------------------------------------------------------------- numbers
def module_consts(mod: TsModule) -> dict[str, Node]:
    """`const NAME = value` at module level (also under `export`), by name."""

    def build() -> dict[str, Node]:
        out: dict[str, Node] = {}
        for decl in mod.nodes("variable_declarator"):
            name = decl.child_by_field_name("name")
            value = decl.child_by_field_name("value")
            if name is None or value is None or name.type != "identifier":
                continue
            if mod.enclosing_function(decl) is None:
                out.setdefault(mod.node_text(name), value)
        return out

    return mod_memo(mod, "consts", build)


def number_value(mod: TsModule, node: Node | None, depth: int = 0) -> float | None:
    """A numeric literal, arithmetic on literals, or a module constant (`TOOL_TIMEOUT_MS`, `CONFIG.timeoutMs`)."""
    node = unwrap(node)
    if node is None or depth > 6:
        return None
    kind = node.type
    if kind == "number":
        text = mod.node_text(node).replace("_", "")
        try:
            return float(int(text, 0)) if text[:2].lower() in ("0x", "0o", "0b") else float(text)
        except ValueError:
            return None
    if kind == "binary_expression":
        op = node.child_by_field_name("operator")
        left = number_value(mod, node.child_by_field_name("left"), depth + 1)
        right = number_value(mod, node.child_by_field_name("right"), depth + 1)
        if left is None or right is None or op is None:
            return None
        sym = mod.node_text(op)
        if sym == "*":
            return left * right
        if sym == "+":
            return left + right
        if sym == "-":
            return left - right
        if sym == "/" and right:
            return left / right
        return None
    if kind == "identifier":
        value = module_consts(mod).get(mod.node_text(node))
        return number_value(mod, value, depth + 1) if value is not None else None
    if kind == "member_expression":
        obj = node.child_by_field_name("object")
        prop = node.child_by_field_name("property")
        if obj is not None and obj.type == "identifier" and prop is not None:
            value = unwrap(module_consts(mod).get(mod.node_text(obj)))
            if value is not None and value.type == "object":
                inner = mod.object_keys(value).get(mod.node_text(prop))
                return number_value(mod, inner, depth + 1) if inner is not None else None
    return None


# ---------------------------------------------------------------- model calls
_SDK_SUFFIXES = ("chat.completions.create", "chat.completions.stream", "chat.completions.parse",
                 "chat.completions.runTools", "responses.create", "responses.stream", "responses.parse",
                 "messages.create", "messages.stream", "messages.parse", "completions.create",
                 "models.generateContent", "models.generateContentStream", "generateContent",
                 "generateContentStream", "chat.send", "chat.stream")
AI_SDK_FUNCS = frozenset({"generateText", "streamText", "generateObject", "streamObject"})
"""The Vercel `ai` calls that send a request to the model."""
_LANGCHAIN_METHODS = {"invoke", "stream", "call", "predict", "batch"}
_MODEL_RECEIVER = re.compile(r"(^|\.)(_?llm|_?model|chatModel|chat_model|modelWithTools|llmWithTools|boundModel|"
                             r"client\.chat)$", re.I)
_MODEL_URL = re.compile(r"/chat/completions|/v1/messages|/v1/responses|/api/chat\b|/api/generate\b|:generateContent|"
                        r"/completions\b")
_HTTP_POSTERS = {"fetch", "axios.post", "axios", "got.post", "ky.post", "request"}
_OLLAMA = {"ollama.chat", "ollama.generate"}
MODEL_LASTS = frozenset({last(s) for s in _SDK_SUFFIXES} | AI_SDK_FUNCS | _LANGCHAIN_METHODS | {"chat", "generate",
                                                                                                "fetch", "post",
                                                                                                "axios", "request",
                                                                                                "send"})

"""Last names a model call can have (the cheap filter before `is_model_call`)."""


def is_model_call(mod: TsModule, call: Node) -> bool:
    """A request to a language model: an SDK call, a Vercel `ai` call, a LangChain model `.invoke`, or an HTTP
    POST to a chat-completions/messages endpoint."""
    if call.type != "call_expression":
        return False
    name = cname(mod, call)
    if not name:
        return False
    if name.endswith(_SDK_SUFFIXES) or name in _OLLAMA:
        return True
    tail = last(name)
    if tail == "send":
        args = mod.arguments(call)
        first = unwrap(args[0]) if args else None
        if first is not None and first.type == "new_expression" and MODEL_COMMAND.match(last(mod.call_name(first))):
            return True  # AWS SDK v3: `client.send(new ConverseStreamCommand({...}))`
        if first is not None and first.type == "object" and REALTIME_REQUEST.search(mod.node_text(first)[:200]):
            return True  # a realtime session asks for the next response: `send({ type: "response.create" })`
    if tail in AI_SDK_FUNCS and (name == tail or receiver(name) in ("ai", "AI")):
        return True
    if tail in _LANGCHAIN_METHODS and _MODEL_RECEIVER.search(receiver(name)):
        return True
    if name in _HTTP_POSTERS or tail == "fetch":
        args = mod.arguments(call)
        return bool(args) and not same_origin_request(name, mod.node_text(args[0])) and _is_model_url(mod, args[0])
    return False


def _is_model_url(mod: TsModule, node: Node) -> bool:
    node = unwrap(node) or node
    if node.type == "identifier":
        value = module_consts(mod).get(mod.node_text(node))
        if value is None:
            return False
        node = value
    return bool(_MODEL_URL.search(mod.node_text(node)))


_GENERIC = frozenset({"run", "create", "call", "invoke", "execute", "handle", "send", "get", "post", "main",
                      "start", "process", "apply", "then", "catch", "map", "forEach", "push", "stream", "next",
                      "constructor", "default", "fetch", "request", "emit", "on", "init", "update", "render"})


@dataclass(frozen=True, slots=True)
class FuncRef:
    """A function of the project."""

    module: TsModule
    """Where it is defined."""
    node: Node
    """The function node."""
    name: str
    """Its name (`<anonymous>` when it has none)."""


def function_defs(mod: TsModule) -> dict[str, list[Node]]:
    """Named functions of the module by name: declarations, `const f = () => …`, methods, `{ f() {} }`."""

    def build() -> dict[str, list[Node]]:
        out: dict[str, list[Node]] = {}
        for fn in mod.functions():
            name = mod.function_name(fn)
            if name and name != "<anonymous>":
                out.setdefault(name, []).append(fn)
        return out

    return mod_memo(mod, "defs", build)


def resolve_call(mod: TsModule, project: TsProject, call: Node) -> list[FuncRef]:
    """The project functions a call can reach: `f()` in this module or imported from a relative module,
    `this.m()` in the enclosing class, `ns.f()` through a namespace import, or `obj.m()` when exactly one project
    function has that (non-generic) name."""
    name = cname(mod, call)
    if not name or "?" in name or "()" in name or "[]" in name:
        return []
    tail = last(name)
    recv = receiver(name)
    if not recv:
        local = [f for f in function_defs(mod).get(tail, []) if f.type != "method_definition"]
        if local:
            return [FuncRef(mod, f, tail) for f in local]
        target = imports_of(mod).get(tail, "")
        spec, _, export = target.partition("#")
        other = project.resolve_import(mod, spec) if spec.startswith(".") else None
        if other is not None:
            wanted = export if export and export != "default" else tail
            return [FuncRef(other, f, wanted) for f in function_defs(other).get(wanted, [])
                    if f.type != "method_definition"]
        return []
    if recv == "this":
        cls = enclosing_class(mod, call)
        if cls is None:
            return []
        return [FuncRef(mod, f, tail) for f in function_defs(mod).get(tail, []) if mod.within(f, cls)]
    if "." not in recv:
        spec = imports_of(mod).get(recv, "")
        if spec.startswith(".") and "#" not in spec:
            other = project.resolve_import(mod, spec)
            if other is not None:
                return [FuncRef(other, f, tail) for f in function_defs(other).get(tail, [])]
    typed = _typed_receiver(mod, project, call, recv)
    if typed is not None:
        other, cls = typed
        found = [FuncRef(other, f, tail) for f in function_defs(other).get(tail, []) if other.within(f, cls)]
        if found:
            return found
    if tail in _GENERIC or len(tail) < 5:
        return []
    found = _method_index(project).get(tail, [])
    return found if len(found) == 1 else []


def _typed_receiver(mod: TsModule, project: TsProject, call: Node, recv: str) -> tuple[TsModule, Node] | None:
    """The project class of a `this.field` receiver, from the field's declared type or `new` initialiser
    (`constructor(private client: OllamaClient)`, `client = new Client()`), so `this.client.chat()` resolves even
    when the method name is short or shared."""
    if not recv.startswith("this.") or recv.count(".") != 1:
        return None
    field_name = recv[5:]
    cls = enclosing_class(mod, call)
    body = cls.child_by_field_name("body") if cls is not None else None
    if body is None:
        return None
    type_name = mod_memo(mod, f"field_types:{body.start_byte}:{body.end_byte}",
                         lambda: _field_types(mod, body)).get(field_name)
    if not type_name:
        return None
    home: TsModule | None = mod
    spec, _, export = imports_of(mod).get(type_name, "").partition("#")
    if spec:
        home = project.resolve_import(mod, spec) if spec.startswith(".") else None
        type_name = export if export and export != "default" else type_name
    if home is None:
        return None
    found = mod_memo(home, "class_declarations", lambda: _class_declarations(home)).get(type_name)
    return (home, found) if found is not None else None


def _field_types(mod: TsModule, body: Node) -> dict[str, str]:
    """Each field of a class body to the first project class its declaration or constructor parameter names
    (`client: OllamaClient`, `client = new Client()`, `constructor(private client: Client)`), in source order."""
    out: dict[str, str] = {}
    for node in iter_subtree(body, into_functions=False):
        if node.type in ("public_field_definition", "field_definition"):
            name = node.child_by_field_name("name") or node.child_by_field_name("property")
            if name is not None:
                found = _declared_class(mod, node.child_by_field_name("type"), node.child_by_field_name("value"))
                if found:
                    out.setdefault(mod.node_text(name), found)
        elif node.type == "method_definition" and mod.function_name(node) == "constructor":
            params = node.child_by_field_name("parameters")
            for param in params.named_children if params is not None else ():
                pattern = param.child_by_field_name("pattern")
                if param.type in ("required_parameter", "optional_parameter") and pattern is not None:
                    found = _declared_class(mod, param.child_by_field_name("type"), param.child_by_field_name("value"))
                    if found:
                        out.setdefault(mod.node_text(pattern), found)
    return out


def _class_declarations(mod: TsModule) -> dict[str, Node]:
    """Each class declared in a module (outside functions) by name, the first one where a name repeats."""
    out: dict[str, Node] = {}
    for node in iter_subtree(mod.tree.root_node, into_functions=False):
        if node.type == "class_declaration":
            name = node.child_by_field_name("name")
            if name is not None:
                out.setdefault(mod.node_text(name), node)
    return out


def _declared_class(mod: TsModule, annotation: Node | None, value: Node | None) -> str | None:
    """The class name a field's type annotation (`: Client`, `: Client<T>`) or `new Client(...)` value names."""
    if annotation is not None:
        named = next((n for n in iter_subtree(annotation) if n.type == "type_identifier"), None)
        if named is not None:
            return mod.node_text(named)
    value = unwrap(value)
    if value is not None and value.type == "new_expression":
        ctor = value.child_by_field_name("constructor")
        if ctor is not None and ctor.type == "identifier":
            return mod.node_text(ctor)
    return None


def _method_index(project: TsProject) -> dict[str, list[FuncRef]]:
    """Class methods of the project by name (once per project)."""

    def build() -> dict[str, list[FuncRef]]:
        out: dict[str, list[FuncRef]] = {}
        for m in project.modules.values():
            for name, fns in function_defs(m).items():
                out.setdefault(name, []).extend(FuncRef(m, f, name) for f in fns if f.type == "method_definition")
        return out

    return memo(project, "method_index", build)


def callers_of(project: TsProject, mod: TsModule, fn: Node) -> list[tuple[TsModule, Node]]:
    """Calls in the project that resolve to `fn` (looked up by name, cached per function)."""
    cache = memo(project, "callers", dict[Key, list[tuple[TsModule, Node]]])
    k = key(mod, fn)
    found = cache.get(k)
    if found is None:
        name = mod.function_name(fn)
        found = []
        if name != "<anonymous>":
            for other in _modules_calling(project).get(name, ()):
                for call in calls_named(other, (name,)):
                    if any(t.module is mod and same(t.node, fn) for t in resolve_call(other, project, call)):
                        found.append((other, call))
        cache[k] = found
    return found


def _modules_calling(project: TsProject) -> dict[str, list[TsModule]]:
    """The modules with a call whose name ends in each last name, in project order (once per project)."""

    def build() -> dict[str, list[TsModule]]:
        out: dict[str, list[TsModule]] = {}
        for m in project.modules.values():
            for name in _calls_by_last(m):
                out.setdefault(name, []).append(m)
        return out

    return memo(project, "modules_calling", build)


@dataclass(frozen=True, slots=True)
class Drive:
    """How a call site reaches the model: directly, or through project functions."""

    call: Node
    """The call in the caller (the model call itself, or the call into a helper)."""
    helpers: tuple[FuncRef, ...]
    """Project functions on the way to the model call (empty for a direct call)."""


@dataclass(slots=True)
class ModelIndex:
    """Which calls of the project reach the model, directly or through up to two project functions."""

    drivers: dict[str, list[Drive]] = field(default_factory=dict[str, "list[Drive]"])
    """Module path → calls reaching the model."""
    direct: dict[Key, FuncRef] = field(default_factory=dict[Key, FuncRef])
    """Functions that call the model directly."""
    reaching: dict[Key, tuple[FuncRef, ...]] = field(default_factory=dict[Key, "tuple[FuncRef, ...]"])
    """Every function that reaches the model, with the chain down to the direct caller."""


def model_index(project: TsProject) -> ModelIndex:
    """The project's model-reaching calls (computed once per project)."""

    def build() -> ModelIndex:
        index = ModelIndex()
        frontier: dict[Key, tuple[FuncRef, ...]] = {}
        for mod in project.modules.values():
            for call in calls_named(mod, MODEL_LASTS):
                if not is_model_call(mod, call):
                    continue
                index.drivers.setdefault(mod.path, []).append(Drive(call, ()))
                fn = mod.enclosing_function(call)
                if fn is not None and key(mod, fn) not in index.reaching:
                    ref = FuncRef(mod, fn, mod.function_name(fn))
                    index.direct[key(mod, fn)] = ref
                    index.reaching[key(mod, fn)] = (ref,)
                    frontier[key(mod, fn)] = (ref,)
        for _ in range(2):
            names = {chain[0].name for chain in frontier.values()} - {"<anonymous>"}
            if not names:
                break
            nxt: dict[Key, tuple[FuncRef, ...]] = {}
            for mod in project.modules.values():
                for call in calls_named(mod, names):
                    for target in resolve_call(mod, project, call):
                        chain = frontier.get(key(target.module, target.node))
                        if chain is None:
                            continue
                        index.drivers.setdefault(mod.path, []).append(Drive(call, chain))
                        fn = mod.enclosing_function(call)
                        if fn is not None and key(mod, fn) not in index.reaching and key(mod, fn) not in nxt:
                            nxt[key(mod, fn)] = (FuncRef(mod, fn, mod.function_name(fn)), *chain)
                        break
            index.reaching.update(nxt)
            frontier = nxt
        return index

    return memo(project, "model_index", build)


CALL_BLOCK_FIELDS = frozenset({"toolUse", "tool_use", "functionCall", "function_call", "toolCall", "tool_call"})
"""The field of a content block / part that carries one tool call, by provider wire format: AWS Bedrock Converse
`block.toolUse`, Gemini `part.functionCall`, legacy OpenAI `message.function_call`, and SDK-side `toolCall`."""
RESULT_BLOCK_KEYS = frozenset({"toolResult", "functionResponse", "tool_call_id", "tool_use_id", "toolCallId",
                               "toolUseId", "tool_result", "function_call_output", "tool-result"})
"""Keys and type values that mark an object as one tool RESULT: Bedrock `{toolResult: {toolUseId}}`, Gemini
`{functionResponse: {...}}`, OpenAI `{tool_call_id}`, Anthropic `{type: "tool_result", tool_use_id}`, OpenAI
Responses / Realtime `{type: "function_call_output"}`, Vercel AI `{type: "tool-result", toolCallId}`."""
_LLM_FIELD_WORDS = ("tool_calls", "tool_call_id", "tool_use_id", "toolCallId", "toolCalls", '"tool_use"', "'tool_use'",
                    "function_call_output", "toolUseId", "toolResult", "functionResponse", "done_reason")
_LLM_ROLE = re.compile(r"role:\s*[\"'](tool|assistant)[\"']")


def module_speaks_llm(mod: TsModule, project: TsProject) -> bool:
    """Whether the module handles model messages itself: tool-call fields, a `tool`/`assistant` role, a model call."""

    def build() -> bool:
        if mod.path in model_index(project).drivers:
            return True
        # the literal alternatives as substring tests, the one pattern with a literal prefix as a regex
        return any(w in mod.text for w in _LLM_FIELD_WORDS) or _LLM_ROLE.search(mod.text) is not None

    return mod_memo(mod, "speaks_llm", build)


# ---------------------------------------------------------------- tool code
TOOL_DISPATCH_NAME = re.compile(r"(execute|run|call|invoke|dispatch|handle|process)_?(tool|function)(s|_?calls?|_?uses?)?"
                                r"$|^(tool|function)_?(call|exec|dispatch|handler|runner)", re.I)
_TOOL_FN_NAME = re.compile(r"[a-z0-9]Tool$|^tool_|_tool$", re.I)
_NOT_A_TOOL_FN = re.compile(r"^_?(get|find|lookup|create|make|define|register|use|has|is|list|load|resolve|build|to|"
                            r"parse|validate|format|render|add|remove|set|with|wrap|select|pick|filter)[A-Z_]")
_TOOL_CLASS = re.compile(r"(Tool|Tools|Toolkit|Toolset|Toolbox)$")
_TOOL_HOLDER = re.compile(r"^(tools?|TOOLS?)$|^(tool|TOOL)S?s?[A-Z_]|[a-z0-9](Tools?|TOOLS?)([A-Z_]\w*)?$|"
                          r"_tools?(_\w+)?$")
_TOOL_METHODS = {"execute", "run", "call", "invoke", "handler", "handle", "_call", "_run", "func", "fn"}
_TOOL_KEYS = {"execute", "handler", "run", "call", "invoke", "fn", "func", "function", "impl", "callback"}
_TOOL_DEF_KEYS = {"description", "parameters", "inputSchema", "input_schema", "schema", "args", "argsSchema"}
_TOOL_TABLE = re.compile(r"(handlers?|registry|functions|actions|commands)$", re.I)
_TOOL_FACTORIES = re.compile(r"(^|\.)(tool|createTool|defineTool|makeTool|registerTool|addTool|tool_?factory|"
                             r"DynamicTool|DynamicStructuredTool|FunctionTool|StructuredTool)$")


def _function_value(mod: TsModule, node: Node | None) -> list[Node]:
    """The function a value denotes: an inline function, or a same-module function named by an identifier."""
    node = unwrap(node)
    if node is None:
        return []
    if node.type in FUNCTION_TYPES:
        return [node]
    if node.type in ("identifier", "shorthand_property_identifier"):
        name = mod.node_text(node)
        local = [f for f in function_defs(mod).get(name, []) if f.type != "method_definition"]
        if not local and imports_of(mod).get(name, "").startswith("."):
            # resolved against the project by `tool_functions`
            mod_memo(mod, "imported_tools", list[str]).append(imports_of(mod)[name])
        return local
    if node.type == "member_expression" and mod.node_text(node.child_by_field_name("object")) == "this":
        return function_defs(mod).get(mod.node_text(node.child_by_field_name("property")), [])
    return []


_TOOL_KEY_BYTES = frozenset(k.encode() for k in _TOOL_KEYS)
_DEF_KEY_BYTES = frozenset(k.encode() for k in _TOOL_DEF_KEYS)
_AGENT_WORDS = ("tool_calls", "toolCalls", "tool_use", "function_call", "toolCall", "tool_call", "inputSchema",
                "input_schema", "callTool")
_TOOL_FACTORY_NAMES = ("tool", "createTool", "defineTool", "makeTool", "registerTool", "addTool", "toolFactory",
                       "tool_factory", "DynamicTool", "DynamicStructuredTool", "FunctionTool", "StructuredTool")


def _key_bytes(mod: TsModule, pair: Node) -> bytes:
    k = pair.child_by_field_name("key") if pair.type == "pair" else pair.child_by_field_name("name")
    return b"" if k is None else mod.source[k.start_byte:k.end_byte].strip(b"'\"")


def _is_tool_def(mod: TsModule, obj: Node) -> bool:
    """An object literal that defines a tool: an argument of a tool factory, or one with a description/schema."""
    parent = obj.parent
    if parent is not None and parent.type == "arguments" and parent.parent is not None and \
            parent.parent.type in ("call_expression", "new_expression") and \
            _TOOL_FACTORIES.search(cname(mod, parent.parent)):
        return True
    return any(c.type == "pair" and _key_bytes(mod, c) in _DEF_KEY_BYTES for c in obj.named_children)


def _table_name(name: str, agentish: bool) -> bool:
    """A variable or field that holds a tool table (`tools`, `toolHandlers`; `handlers` only in agent code)."""
    tail = last(name)
    return bool(_TOOL_HOLDER.search(tail)) or (agentish and bool(_TOOL_TABLE.search(tail)))


def _table_entries(mod: TsModule, obj: Node) -> Iterator[Node]:
    """The functions an object literal used as a tool table holds (directly, or under an executor key)."""
    for child in obj.named_children:
        if child.type == "method_definition":
            yield child
        elif child.type in ("pair", "shorthand_property_identifier"):
            value = child.child_by_field_name("value") if child.type == "pair" else child
            yield from _function_value(mod, value)
            inner = unwrap(value)
            if inner is not None and inner.type == "object":
                for sub in inner.named_children:
                    if sub.type == "pair" and _key_bytes(mod, sub) in _TOOL_KEY_BYTES:
                        yield from _function_value(mod, sub.child_by_field_name("value"))
                    elif sub.type == "method_definition" and _key_bytes(mod, sub) in _TOOL_KEY_BYTES:
                        yield sub


def _tool_roots(mod: TsModule) -> list[Node]:
    """Functions of the module that are tools or tool dispatchers by their shape or name."""
    out: list[Node] = []
    agentish = any(w in mod.text for w in _AGENT_WORDS)
    defs = function_defs(mod)
    for pair in mod.nodes("pair"):
        if _key_bytes(mod, pair) in _TOOL_KEY_BYTES and pair.parent is not None and _is_tool_def(mod, pair.parent):
            out.extend(_function_value(mod, pair.child_by_field_name("value")))
    for name in _TOOL_KEYS & defs.keys():
        out.extend(fn for fn in defs[name] if fn.type == "method_definition" and fn.parent is not None
                   and fn.parent.type == "object" and _is_tool_def(mod, fn.parent))
    for holder in mod.nodes("variable_declarator", "public_field_definition", "field_definition",
                            "assignment_expression"):
        value = unwrap(holder.child_by_field_name("value") or holder.child_by_field_name("right"))
        if value is None or value.type != "object":
            continue
        target = holder.child_by_field_name("name") or holder.child_by_field_name("property") or \
            holder.child_by_field_name("left")
        if target is not None and (_table_name(mod.dotted(target) or mod.node_text(target), agentish) or
                                   target.type == "identifier" and dispatch_table(mod, mod.node_text(target))):
            out.extend(_table_entries(mod, value))
    for call in calls_named(mod, ("set", "register", "registerTool", "addTool")):
        name = cname(mod, call)
        if _table_name(receiver(name) or "", agentish) or last(name) in ("registerTool", "addTool"):
            args = mod.arguments(call)
            for arg in args[1:] if last(name) == "set" else args:
                out.extend(_function_value(mod, arg))
    for call in calls_named(mod, _TOOL_FACTORY_NAMES):
        if _TOOL_FACTORIES.search(cname(mod, call)):
            for arg in mod.arguments(call):
                out.extend(_function_value(mod, arg))
    for name, fns in defs.items():
        if TOOL_DISPATCH_NAME.search(name) or (_TOOL_FN_NAME.search(name) and not _NOT_A_TOOL_FN.search(name)):
            out.extend(fns)
    for cls in mod.nodes("class_declaration", "class"):
        if not _tool_class(mod, cls):
            continue
        body = cls.child_by_field_name("body")
        for member in body.named_children if body is not None else []:
            if member.type == "method_definition" and mod.node_text(member.child_by_field_name("name")) in \
                    _TOOL_METHODS:
                out.append(member)
            elif member.type in ("public_field_definition", "field_definition") and mod.node_text(
                    member.child_by_field_name("name") or member.child_by_field_name("property")) in _TOOL_METHODS:
                out.extend(_function_value(mod, member.child_by_field_name("value")))
    return out


def _tool_class(mod: TsModule, cls: Node) -> bool:
    name = cls.child_by_field_name("name")
    heritage = next((c for c in cls.named_children if c.type == "class_heritage"), None)
    texts = [mod.node_text(name)] + re.findall(r"[A-Za-z_$][\w$]*", mod.node_text(heritage))
    return any(_TOOL_CLASS.search(t) for t in texts if t not in ("extends", "implements"))


def tool_functions(project: TsProject) -> set[Key]:
    """Functions that run as part of a tool call: tools, tool dispatchers, tool-class methods, and the project
    functions they call (two hops down). Computed once per project."""

    def build() -> set[Key]:
        found: set[Key] = set()
        frontier: list[FuncRef] = []
        for mod in project.modules.values():
            if is_test_module(mod):
                continue
            roots = [FuncRef(mod, fn, mod.function_name(fn)) for fn in _tool_roots(mod)]
            for target in mod_memo(mod, "imported_tools", list[str]):
                spec, _, export = target.partition("#")
                other = project.resolve_import(mod, spec)
                if other is not None and export:
                    roots.extend(FuncRef(other, f, export) for f in function_defs(other).get(export, [])
                                 if f.type != "method_definition")
            for ref in roots:
                k = key(ref.module, ref.node)
                if k not in found:
                    found.add(k)
                    frontier.append(ref)
        for _ in range(2):
            nxt: list[FuncRef] = []
            for ref in frontier:
                for call in nodes_in(ref.module, ref.node, "call_expression"):
                    for target in resolve_call(ref.module, project, call):
                        k = key(target.module, target.node)
                        if k not in found:
                            found.add(k)
                            nxt.append(target)
            frontier = nxt
        return found

    return memo(project, "tool_functions", build)


def in_tool_code(mod: TsModule, project: TsProject, node: Node) -> Node | None:
    """The tool function `node` runs in (the nearest enclosing function that is tool code), else None."""
    tools = tool_functions(project)
    for anc in mod.ancestors(node):
        if anc.type in FUNCTION_TYPES and key(mod, anc) in tools:
            return anc
    return None


def fn_label(mod: TsModule, fn: Node) -> str:
    """How a finding names a function: `Class.method`, `name`, or the variable or key it is stored in."""
    name = mod.symbol_of(fn) or mod.function_name(fn)
    if name.endswith("<anonymous>"):
        parent = fn.parent
        while parent is not None and parent.type not in ("pair", "variable_declarator", "arguments"):
            parent = parent.parent
        if parent is not None and parent.type == "pair":
            return f"{mod.node_text(parent.child_by_field_name('key'))} handler"
        if parent is not None and parent.type == "arguments":
            first = next(iter(parent.named_children), None)
            label = string_value(mod, first)
            if label:
                return f"the `{label}` handler"
        return "an inline function"
    return name


# ---------------------------------------------------------------- catch handling
def catch_clauses_around(mod: TsModule, node: Node) -> list[Node]:
    """Catch clauses of `try` blocks whose body contains `node`, within its function, nearest first."""
    out: list[Node] = []
    child = node
    for anc in mod.ancestors(node):
        if anc.type in FUNCTION_TYPES:
            break
        if anc.type == "try_statement":
            body = anc.child_by_field_name("body")
            handler = anc.child_by_field_name("handler")
            if handler is not None and body is not None and same(body, child):
                out.append(handler)
        child = anc
    return out


def promise_catch_around(mod: TsModule, node: Node) -> list[Node]:
    """`.catch(handler)` callbacks chained on the expression that contains `node`."""
    out: list[Node] = []
    for anc in mod.ancestors(node):
        if anc.type in ("expression_statement", "lexical_declaration", "return_statement", "statement_block"):
            break
        if anc.type == "member_expression" and mod.node_text(anc.child_by_field_name("property")) == "catch":
            call = anc.parent
            if call is not None and call.type == "call_expression":
                out.extend(a for a in mod.arguments(call) if a.type in FUNCTION_TYPES)
    return out


def iter_subtree(node: Node, *, into_functions: bool = True) -> Iterator[Node]:
    """Every named node under `node` (pre-order); with `into_functions=False`, nested functions are skipped."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        if not into_functions and cur is not node and cur.type in FUNCTION_TYPES:
            continue
        stack.extend(reversed(cur.named_children))
