"""Shared TS/JS idioms for the C6–C10 rules: process spawns, tool functions, model-sourced values, abort signals.

Everything here reads one `TsModule` and caches per module (keyed by identity), so a rule can ask the same
question for every call of a file without re-walking the tree.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal, TypeVar

from tree_sitter import Node

from harness_audit.static.lang.typescript import FUNCTION_TYPES, TsModule, TsProject
from harness_audit.static.recon_ts import MODEL_COMMAND

_T = TypeVar("_T")
_CACHE: dict[tuple[str, int], tuple[TsModule, object]] = {}


def cached(mod: TsModule, key: str, build: Callable[[], _T]) -> _T:
    """`build()` once per module and `key` (the module object must be the same one, not a reused id)."""
    slot = (key, id(mod))
    hit = _CACHE.get(slot)
    if hit is not None and hit[0] is mod:
        # stored under the same key by the same builder, so of the same type
        return hit[1]  # type: ignore[return-value]
    if len(_CACHE) > 30_000:
        _CACHE.clear()  # bounded: old audits' modules are not kept alive for long
    value = build()
    _CACHE[slot] = (mod, value)
    return value


# ---------------------------------------------------------------- small tree helpers
def last(dotted: str) -> str:
    """The last part of a dotted name."""
    return dotted.rsplit(".", 1)[-1]


def descendants(node: Node) -> Iterator[Node]:
    """Every named node below `node` (pre-order), without descending into nothing else: for small subtrees."""
    stack = list(reversed(node.named_children))
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(cur.named_children))


def idents(node: Node) -> Iterator[Node]:
    """`identifier` nodes in a subtree (property names of member chains are `property_identifier`, not these)."""
    if node.type in ("identifier", "shorthand_property_identifier"):
        yield node
    for sub in descendants(node):
        if sub.type in ("identifier", "shorthand_property_identifier"):
            yield sub


def strip_quotes(text: str) -> str:
    """A string literal's content (`"abc"` -> `abc`)."""
    return text.strip().strip("'\"`")


def string_value(mod: TsModule, node: Node | None) -> str | None:
    """The value of a plain string literal (or a template without substitutions), else None."""
    if node is None:
        return None
    if node.type == "string" or (node.type == "template_string" and
                                 not any(c.type == "template_substitution" for c in node.named_children)):
        return strip_quotes(mod.node_text(node))
    return None


def unwrap(node: Node | None) -> Node | None:
    """Through parentheses, `await`, `as`, `satisfies` and non-null assertions."""
    while node is not None and node.type in ("parenthesized_expression", "await_expression", "as_expression",
                                               "non_null_expression", "satisfies_expression"):
        node = node.named_children[0] if node.named_children else None
    return node


def enclosing_functions(mod: TsModule, node: Node) -> list[Node]:
    """Every enclosing function, innermost first."""
    return [a for a in mod.ancestors(node) if a.type in FUNCTION_TYPES]


def params(fn: Node) -> list[Node]:
    """The parameter nodes of a function (an arrow's single bare parameter included)."""
    plist = fn.child_by_field_name("parameters")
    if plist is None:
        single = fn.child_by_field_name("parameter")
        return [single] if single is not None else []
    return [p for p in plist.named_children if p.type != "comment"]


def param_pattern(param: Node) -> Node:
    """The binding pattern of a parameter (TS `required_parameter` wraps it; JS defaults are `assignment_pattern`)."""
    node = param
    if node.type in ("required_parameter", "optional_parameter"):
        node = node.child_by_field_name("pattern") or node
    if node.type == "assignment_pattern":
        node = node.child_by_field_name("left") or node
    return node


def param_type(mod: TsModule, param: Node) -> str:
    """The text of a parameter's type annotation ("" when it has none)."""
    if param.type in ("required_parameter", "optional_parameter"):
        return mod.node_text(param.child_by_field_name("type"))
    return ""


def bound_names(mod: TsModule, pattern: Node) -> list[str]:
    """Names a binding pattern introduces (`{ command, cwd: dir }` -> command, dir; `[a, ...rest]` -> a, rest)."""
    if pattern.type == "identifier":
        return [mod.node_text(pattern)]
    out: list[str] = []
    for sub in descendants(pattern):
        if sub.type in ("shorthand_property_identifier_pattern", "identifier"):
            parent = sub.parent
            # `{ key: alias }`: the key is a property_identifier, the alias an identifier; defaults' values are skipped
            if parent is not None and parent.type in ("assignment_pattern", "object_assignment_pattern") and \
                    parent.child_by_field_name("right") == sub:
                continue
            out.append(mod.node_text(sub))
    return out


def call_args(mod: TsModule, call: Node) -> list[Node]:
    """Arguments of a call (a tagged template's template is its single argument)."""
    args = call.child_by_field_name("arguments")
    if args is not None and args.type == "template_string":
        return [args]
    return mod.arguments(call)


def object_has_spread(obj: Node) -> bool:
    """Whether an object literal spreads something in (`{ ...opts }`): its keys are then not all visible."""
    return any(c.type == "spread_element" for c in obj.named_children)


def declarators_by_name(mod: TsModule) -> dict[str, list[Node]]:
    """Every `const/let/var name = value` declarator of the module, by name (source order)."""

    def build() -> dict[str, list[Node]]:
        out: dict[str, list[Node]] = {}
        for decl in mod.nodes("variable_declarator"):
            name = decl.child_by_field_name("name")
            if name is not None and name.type == "identifier":
                out.setdefault(mod.node_text(name), []).append(decl)
        return out

    return cached(mod, "declarators", build)


def resolve_value(mod: TsModule, ident: Node) -> Node | None:
    """The value an identifier was last declared with before its use, in its own or an enclosing scope."""
    name = mod.node_text(ident)
    decls = declarators_by_name(mod).get(name)
    if not decls:
        return None
    scopes = [*enclosing_functions(mod, ident), None]
    for scope in scopes:
        best: Node | None = None
        for decl in decls:
            if decl.start_byte > ident.start_byte:
                break
            owner = mod.enclosing_function(decl)
            if (scope is None and owner is None) or (scope is not None and owner == scope):
                best = decl
        if best is not None:
            return best.child_by_field_name("value")
    return None


def resolve_object(mod: TsModule, node: Node | None, depth: int = 2) -> Node | None:
    """An object literal `node` is, or an identifier was declared with (followed a couple of names deep)."""
    node = unwrap(node)
    while node is not None and node.type == "identifier" and depth > 0:
        node = unwrap(resolve_value(mod, node))
        depth -= 1
    return node if node is not None and node.type == "object" else None


def calls_by_short(mod: TsModule) -> dict[str, list[Node]]:
    """Every call and `new` of the module by the callee's last name (`fetch`, `create`, `Promise`), cached: a cheap
    first filter before the full dotted `call_name`."""

    def build() -> dict[str, list[Node]]:
        out: dict[str, list[Node]] = {}
        for call in mod.nodes("call_expression", "new_expression"):
            fn = call.child_by_field_name("function") if call.type == "call_expression" else \
                call.child_by_field_name("constructor")
            if fn is not None and fn.type == "member_expression":
                fn = fn.child_by_field_name("property")
            if fn is not None and fn.type in ("identifier", "property_identifier", "private_property_identifier"):
                out.setdefault(mod.node_text(fn), []).append(call)
        return out

    return cached(mod, "calls_by_short", build)


def calls_named(mod: TsModule, *shorts: str) -> list[Node]:
    """Calls whose callee's last name is one of `shorts`, in source order."""
    index = calls_by_short(mod)
    shorts = tuple(dict.fromkeys(shorts))
    found = [c for s in shorts for c in index.get(s, [])]
    if len(shorts) > 1:
        found.sort(key=lambda n: n.start_byte)
    return found


_TEST_PATH = re.compile(r"(^|/)(__tests__|__mocks__|tests?|test-utils|fixtures|mocks?)/|"
                        r"\.(test|spec|bench)\.[cm]?[jt]sx?$")


def skipped_module(mod: TsModule) -> bool:
    """A test, mock or spec file, or a minified bundle: its spawns, timers and requests are not the harness's own
    code, and a minified line is no evidence a reader can check."""

    def build() -> bool:
        if _TEST_PATH.search(mod.path):
            return True
        text = mod.text
        return len(text) > 20_000 and text.count("\n") * 400 < len(text)

    return cached(mod, "skipped", build)


def assigned_objects(mod: TsModule, ident: Node) -> list[Node] | None:
    """The object literals a local is declared or assigned with in its function (`let opts; if (a) opts = {…} else
    opts = {…}`), or None when some value is not an object literal."""
    name = mod.node_text(ident)
    fns = enclosing_functions(mod, ident)
    scope = fns[0] if fns else None
    values: list[Node] = []
    nodes = mod.nodes("variable_declarator", "assignment_expression")
    for node in (mod.inside(nodes, scope) if scope is not None else nodes):
        target = node.child_by_field_name("name") or node.child_by_field_name("left")
        if target is None or mod.node_text(target) != name or node.start_byte > ident.start_byte:
            continue
        value = unwrap(node.child_by_field_name("value") or node.child_by_field_name("right"))
        if value is None and node.type == "variable_declarator":
            continue  # `let opts;`
        if value is None or value.type != "object":
            return None
        values.append(value)
    return values or None


# ---------------------------------------------------------------- imports
def imports_of(mod: TsModule) -> dict[str, str]:
    """`mod.imports()`, cached."""
    return cached(mod, "imports", mod.imports)


def imported_from(mod: TsModule, local: str) -> str:
    """The module specifier (without `#export`) a local name is imported from, or ""."""
    return imports_of(mod).get(local, "").split("#", 1)[0]


# ---------------------------------------------------------------- process spawns
_CHILD_PROCESS = {"child_process", "node:child_process"}
_CP_FUNCS = {"spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"}
_EXECA_FUNCS = {"execa", "execaSync", "execaCommand", "execaCommandSync", "execaNode", "$"}
_PTY_MODULES = {"node-pty", "@lydell/node-pty", "@homebridge/node-pty-prebuilt-multiarch",
                "node-pty-prebuilt-multiarch"}
_SPAWN_TEXT = ("child_process", "execa", "Bun.spawn", "node-pty", "pty-prebuilt")
SYNC_SPAWNS = {"spawnSync", "execSync", "execFileSync", "execaSync", "execaCommandSync", "Bun.spawnSync"}
SHELL_APIS = {"exec", "execSync", "execaCommand", "execaCommandSync"}
SHELL_PROGRAMS = re.compile(r"^(/(usr/)?bin/)?(bash|sh|zsh|dash|ksh|fish|cmd(\.exe)?|powershell(\.exe)?|pwsh)$")
INTERPRETERS = re.compile(r"^(/(usr/)?bin/)?(bash|sh|zsh|dash|ksh|fish|cmd(\.exe)?|powershell(\.exe)?|pwsh|"
                          r"python[\d.]*|node|deno|bun|ruby|perl|npx|tsx|ts-node)$")


@dataclass(frozen=True, slots=True)
class Spawn:
    """One process spawn found in a module."""

    call: Node
    """The call expression."""
    api: str
    """Which API: `spawn`, `exec`, `execSync`, `execa`, `execaCommand`, `$`, `Bun.spawn`, `pty.spawn`, …"""
    family: Literal["child_process", "execa", "bun", "pty"]
    """The library it comes from."""

    @property
    def sync(self) -> bool:
        """Whether the call blocks the event loop until the process exits."""
        return self.api in SYNC_SPAWNS


def _cp_module(mod: TsModule, node: Node | None) -> bool:
    """Whether `node` names the `child_process` module (`cp`, `child_process`, `require("child_process")`)."""
    node = unwrap(node)
    if node is None:
        return False
    if node.type == "identifier":
        return imported_from(mod, mod.node_text(node)) in _CHILD_PROCESS
    if node.type == "call_expression" and mod.call_name(node) == "require":
        args = mod.arguments(node)
        return bool(args) and string_value(mod, args[0]) in _CHILD_PROCESS
    return False


def _promisified(mod: TsModule) -> dict[str, str]:
    """Local names bound to `promisify(exec)` / `util.promisify(cp.execFile)`: name -> child_process function."""

    def build() -> dict[str, str]:
        out: dict[str, str] = {}
        if "promisify" not in mod.text:
            return out
        for name, decls in declarators_by_name(mod).items():
            for decl in decls:
                value = unwrap(decl.child_by_field_name("value"))
                if value is None or value.type != "call_expression" or last(mod.call_name(value)) != "promisify":
                    continue
                args = mod.arguments(value)
                inner = _classify_callee(mod, args[0]) if args else None
                if inner is not None and inner[1] == "child_process":
                    out[name] = inner[0]
        return out

    return cached(mod, "promisified", build)


SpawnFamily = Literal["child_process", "execa", "bun", "pty"]


def _classify_callee(mod: TsModule, fn: Node | None) -> tuple[str, SpawnFamily] | None:
    fn = unwrap(fn)
    if fn is None:
        return None
    if fn.type == "identifier":
        name = mod.node_text(fn)
        target = imports_of(mod).get(name, "")
        module, _, export = target.partition("#")
        if module in _CHILD_PROCESS and export in _CP_FUNCS:
            return export, "child_process"
        if module == "execa" and export in _EXECA_FUNCS:
            return export, "execa"
        if module == "execa" and not export:
            return "execa", "execa"  # `import execa from "execa"` (v5 default export)
        return None
    if fn.type == "member_expression":
        prop = mod.node_text(fn.child_by_field_name("property"))
        obj = fn.child_by_field_name("object")
        if prop in _CP_FUNCS and _cp_module(mod, obj):
            return prop, "child_process"
        obj_text = mod.node_text(obj)
        if obj_text == "Bun" and prop in ("spawn", "spawnSync"):
            return f"Bun.{prop}", "bun"
        if prop == "spawn" and obj is not None and obj.type == "identifier" and \
                imported_from(mod, obj_text) in _PTY_MODULES:
            return "pty.spawn", "pty"
        if prop in _EXECA_FUNCS and obj is not None and obj.type == "identifier" and \
                imported_from(mod, obj_text) == "execa":
            return prop, "execa"
    return None


def spawns(mod: TsModule) -> list[Spawn]:
    """Every process spawn of the module (resolved through imports, `require` and `promisify`), cached."""

    def build() -> list[Spawn]:
        text = mod.text
        if not any(k in text for k in _SPAWN_TEXT):
            return []
        out: list[Spawn] = []
        promisified = _promisified(mod)
        for call in calls_named(mod, *_CP_FUNCS, *_EXECA_FUNCS, "spawnSync", *promisified):
            if call.type != "call_expression":
                continue
            fn = call.child_by_field_name("function")
            found = _classify_callee(mod, fn)
            if found is None and fn is not None and fn.type == "identifier" and mod.node_text(fn) in promisified:
                found = (promisified[mod.node_text(fn)], "child_process")
            if found is not None:
                out.append(Spawn(call, found[0], found[1]))
        return out

    return cached(mod, "spawns", build)


def _array_items(mod: TsModule, node: Node | None) -> list[Node] | None:
    """Elements of an array literal (or of the literal an identifier was declared with); spreads unwrapped."""
    node = unwrap(node)
    if node is not None and node.type == "identifier":
        value = unwrap(resolve_value(mod, node))
        node = value if value is not None and value.type == "array" else node
    if node is None or node.type != "array":
        return None
    return [c.named_children[0] if c.type == "spread_element" and c.named_children else c
            for c in node.named_children if c.type != "comment"]


def command_parts(mod: TsModule, sp: Spawn) -> list[Node]:
    """The expressions that make up the command line, program first."""
    args = call_args(mod, sp.call)
    if not args:
        return []
    if sp.api == "$":
        return [args[0]]
    if sp.family == "bun":
        first = unwrap(args[0])
        if first is not None and first.type == "object":
            first = mod.object_keys(first).get("cmd")
        items = _array_items(mod, first)
        return items if items is not None else ([first] if first is not None else [])
    if sp.api in SHELL_APIS:
        return [args[0]]
    parts = [args[0]]
    if len(args) > 1:
        items = _array_items(mod, args[1])
        second = unwrap(args[1])
        if items is not None:
            parts.extend(items)
        elif second is not None and second.type not in ("object", "arrow_function", "function_expression"):
            parts.append(args[1])
    return parts


@dataclass(frozen=True, slots=True)
class Options:
    """A spawn's options argument as far as it can be seen."""

    obj: Node | None
    """The object literal, when there is one."""
    opaque: bool
    """True when options are passed but cannot be read (an unresolved name, a spread)."""


_OPTIONS_NAME = re.compile(r"(opt|config|settings|init|params|spawnArgs|props)", re.I)


def spawn_options(mod: TsModule, sp: Spawn) -> Options:
    """The options argument of a spawn (`{ env, shell, detached, signal }`)."""
    args = call_args(mod, sp.call)
    if sp.api == "$":
        fn = sp.call.child_by_field_name("function")
        inner = unwrap(fn)
        if inner is not None and inner.type == "call_expression":  # $({ env })`cmd`
            opts = mod.arguments(inner)
            obj = resolve_object(mod, opts[0]) if opts else None
            return Options(obj, obj is None and bool(opts))
        return Options(None, False)
    if sp.family == "bun":
        first = unwrap(args[0]) if args else None
        if first is not None and first.type == "object":
            return Options(first, object_has_spread(first))
        candidates = args[1:2]
    elif sp.api in SHELL_APIS:
        candidates = args[1:2]
    else:
        candidates = args[1:3]
    for index, arg in enumerate(candidates):
        node = unwrap(arg)
        if node is None or node.type in ("arrow_function", "function_expression", "array"):
            continue
        if node.type == "object":
            return Options(node, object_has_spread(node))
        if node.type == "identifier":
            value = unwrap(resolve_value(mod, node))
            if value is not None and value.type == "object":
                return Options(value, object_has_spread(value))
            if value is not None and value.type == "array":
                continue
            is_last = index == len(candidates) - 1 or sp.api in SHELL_APIS
            if _OPTIONS_NAME.search(mod.node_text(node)) or (is_last and len(candidates) > 1 and index > 0):
                return Options(None, True)
            continue
        if node.type in ("member_expression", "call_expression", "ternary_expression") and \
                (index > 0 or sp.api in SHELL_APIS or sp.family == "bun"):
            return Options(None, True)
    return Options(None, False)


def option(mod: TsModule, opts: Options, key: str) -> Node | None:
    """The value of one option key, if visible."""
    if opts.obj is None:
        return None
    return mod.object_keys(opts.obj).get(key)


def truthy_literal(mod: TsModule, node: Node | None) -> bool:
    """`true`, or any value that is not a literal `false` / `undefined` / `null` (`shell: "/bin/bash"` is a shell)."""
    if node is None:
        return False
    return mod.node_text(node).strip() not in ("false", "undefined", "null", "0", '""', "''")


def spawn_is_shell(mod: TsModule, sp: Spawn) -> bool:
    """Whether the command runs through a shell: `exec`, `shell: true`, or `bash -c ...` / `sh -lc ...`."""
    if sp.api in SHELL_APIS or sp.api == "$":
        return sp.api != "$"
    opts = spawn_options(mod, sp)
    shell = option(mod, opts, "shell")
    if shell is not None and (mod.node_text(shell).strip() == "true" or string_value(mod, shell)):
        return True
    parts = command_parts(mod, sp)
    program = string_value(mod, parts[0]) if parts else None
    if program is not None and SHELL_PROGRAMS.match(program):
        flags = {string_value(mod, p) for p in parts[1:3]}
        return bool(flags & {"-c", "-lc", "-ic", "/c", "/C", "-Command", "-command"}) or program.startswith("cmd")
    return False


def program_name(mod: TsModule, node: Node | None) -> str:
    """The basename of a literal program (`"/bin/bash"` -> `bash`), else ""."""
    value = string_value(mod, node)
    return value.rsplit("/", 1)[-1] if value else ""


# ---------------------------------------------------------------- tool functions and model-sourced values
_EXEC_KEYS = {"execute", "handler", "run", "invoke", "call", "func", "function", "callback", "handle", "fn", "impl"}
_SCHEMA_KEYS = {"description", "parameters", "inputSchema", "input_schema", "schema", "argsSchema", "args",
                "paramsSchema", "inputs"}
_TOOL_FACTORIES = {"tool", "createTool", "defineTool", "makeTool", "registerTool", "addTool", "dynamicTool",
                   "DynamicStructuredTool", "DynamicTool", "StructuredTool", "FunctionTool", "Tool"}
_TOOL_CLASS_NAME = re.compile(r"(Tool|ToolInvocation|Invocation)$")
_TOOL_BASE = re.compile(r"\b(extends|implements)\s+[\w$.]*(Tool|ToolInvocation|Invocation)\b")
_CLASS_EXEC_METHODS = {"execute", "run", "call", "invoke", "_call", "_run", "handle", "handler", "callTool",
                       "executeTool", "runTool"}
_CLASS_TAINT = re.compile(r"^this\.(params|args|input|arguments|toolInput|toolArgs)\b")
TOOL_ARG_TEXT = re.compile(
    r"\b(tool_?calls?|toolCalls?|tool_?uses?|toolUses?|function_?calls?|functionCalls?|calls?|tc|block|part|"
    r"item|toolRequest|request\??\.params)(\[[\w.]+\])?\??\.(function\??\.)?(arguments|input|args)\b")
"""Text of an expression that reads model-produced tool arguments (`toolCall.function.arguments`, `block.input`)."""


def _class_of(mod: TsModule, node: Node) -> Node | None:
    return next((a for a in mod.ancestors(node) if a.type in ("class_declaration", "class", "abstract_class_declaration")),
                None)


def _is_tool_class(mod: TsModule, cls: Node) -> bool:
    """A class implementing one tool: named `*Tool` / `*Invocation`, or extending / implementing such a type."""
    name = mod.node_text(cls.child_by_field_name("name"))
    heritage = next((c for c in cls.named_children if c.type == "class_heritage"), None)
    return bool(_TOOL_CLASS_NAME.search(name) or _TOOL_BASE.search(mod.node_text(heritage) if heritage else ""))


def _enclosing_object_call(mod: TsModule, obj: Node) -> str:
    """The callee of a call that takes `obj` as an argument (`tool({...})` -> `tool`), or ""."""
    parent = obj.parent
    if parent is not None and parent.type == "arguments" and parent.parent is not None:
        return mod.call_name(parent.parent)
    return ""


_REGISTRY_NAME = re.compile(r"tool|handler|registry|TOOL|HANDLER|REGISTRY")


_DISPATCHER_FN = re.compile(r"(execute|exec|run|call|invoke|dispatch|handle|perform)_?(tool|function)(s|_?calls?|_?uses?)?$|"
                            r"^_?(tool|function)_?(call|exec|dispatch|handler|runner)", re.I)
_TOOL_NAME_KEY = re.compile(r"^(tool_?name|toolName|name|fn_?name|functionName)$|\.(name|toolName|tool_name)$")


_SUBSCRIPTED = re.compile(rb"(?<![\w$.])([A-Za-z_$][\w$]*)\s*\[")


def _subscript_sites(source: bytes) -> dict[str, list[int]]:
    """Where each name is indexed (`name[`), from one scan of the module: a bundle asks about hundreds of names,
    and a scan per name was most of the audit's time on one."""
    out: dict[str, list[int]] = {}
    for m in _SUBSCRIPTED.finditer(source):
        out.setdefault(m.group(1).decode(), []).append(m.start())
    return out


def dispatch_table(mod: TsModule, name: str) -> bool:
    """Whether the module-level object `name` is a tool dispatch table: it is indexed by a computed key (`IMPLS[key]`)
    inside a tool dispatcher (`runTool(name, input)`, `executeFunction`), or by the tool call's name
    (`table[call.name]`, `table[toolName]`). Its values are then the tools, whatever the table is called."""
    sites = cached(mod, "subscripted", lambda: _subscript_sites(mod.source))
    if name not in sites:
        return False  # the module never indexes anything by that name: one scan of the module answers every name
    for start in sites[name]:
        ident = mod.tree.root_node.descendant_for_byte_range(start, start + len(name))
        sub = ident.parent if ident is not None else None
        if sub is None or sub.type != "subscript_expression" or sub.child_by_field_name("object") != ident:
            continue
        index = unwrap(sub.child_by_field_name("index"))
        if index is None or index.type in ("string", "number", "template_string"):
            continue
        fn = mod.enclosing_function(sub)
        if fn is not None and _DISPATCHER_FN.search(mod.function_name(fn)) or \
                _TOOL_NAME_KEY.search(mod.node_text(index)) and TOOL_ARG_TEXT.search(mod.text) is not None:
            return True
    return False


def _registry_object(mod: TsModule, obj: Node) -> bool:
    """An object literal bound to a tool-registry name (`toolHandlers`, `TOOLS`, `this.toolMap`), or used as a tool
    dispatch table (`dispatch_table`), whose values are the tools themselves."""
    holder = obj.parent
    if holder is not None and holder.type in ("as_expression", "satisfies_expression"):
        holder = holder.parent
    if holder is None:
        return False
    if holder.type == "variable_declarator":
        name = mod.node_text(holder.child_by_field_name("name"))
        return bool(_REGISTRY_NAME.search(name)) or dispatch_table(mod, name)
    if holder.type == "assignment_expression":
        return bool(_REGISTRY_NAME.search(mod.node_text(holder.child_by_field_name("left"))))
    if holder.type in ("public_field_definition", "field_definition"):
        name = holder.child_by_field_name("name") or holder.child_by_field_name("property")
        return bool(_REGISTRY_NAME.search(mod.node_text(name)))
    return False


def tool_kind(mod: TsModule, fn: Node) -> Literal["args", "class", ""]:
    """How `fn` receives model-chosen tool arguments: its first parameter (`args`), `this.params` (`class`), or ""."""
    parent = fn.parent
    if fn.type == "method_definition":
        name = mod.node_text(fn.child_by_field_name("name"))
        if parent is not None and parent.type == "object" and name in _EXEC_KEYS:
            keys = mod.object_keys(parent)
            if keys.keys() & _SCHEMA_KEYS or last(_enclosing_object_call(mod, parent)) in _TOOL_FACTORIES:
                return "args"
        cls = _class_of(mod, fn)
        if cls is not None and name in _CLASS_EXEC_METHODS and _is_tool_class(mod, cls):
            return "class"
        return ""
    if parent is not None and parent.type == "pair":
        key = strip_quotes(mod.node_text(parent.child_by_field_name("key")))
        obj = parent.parent
        if key in _EXEC_KEYS and obj is not None and obj.type == "object":
            keys = mod.object_keys(obj)
            if keys.keys() & _SCHEMA_KEYS or last(_enclosing_object_call(mod, obj)) in _TOOL_FACTORIES:
                return "args"
        if obj is not None and obj.type == "object" and _registry_object(mod, obj):
            return "args"  # `const toolHandlers = { run_shell: ({ command }) => … }`
        return ""
    if parent is not None and parent.type == "arguments" and parent.parent is not None:
        callee = last(mod.call_name(parent.parent))
        if callee in {"tool", "registerTool", "addTool"}:
            return "args"
    return ""


def tool_functions(mod: TsModule) -> dict[int, Literal["args", "class"]]:
    """Every function of the module that receives model-chosen tool arguments, by node id."""

    def build() -> dict[int, Literal["args", "class"]]:
        out: dict[int, Literal["args", "class"]] = {}
        for fn in mod.functions():
            kind = tool_kind(mod, fn)
            if kind:
                out[fn.id] = kind
        return out

    return cached(mod, "tool_functions", build)


def is_tool_function(mod: TsModule, fn: Node | None) -> bool:
    """Whether `fn` is a tool's implementation (it receives model-chosen arguments)."""
    return fn is not None and fn.id in tool_functions(mod)


def in_tool_function(mod: TsModule, node: Node) -> Node | None:
    """The tool function `node` sits in (directly or in a nested callback), if any."""
    tools = tool_functions(mod)
    return next((f for f in enclosing_functions(mod, node) if f.id in tools), None)


def _declarators_in(mod: TsModule, fn: Node) -> list[Node]:
    """Declarators and plain assignments whose nearest function is `fn` (source order)."""

    def build() -> dict[int, list[Node]]:
        out: dict[int, list[Node]] = {}
        for node in mod.nodes("variable_declarator", "assignment_expression"):
            owner = mod.enclosing_function(node)
            if owner is not None:
                out.setdefault(owner.id, []).append(node)
        return out

    return cached(mod, "declarators_in", build).get(fn.id, [])


def tainted_names(mod: TsModule, fn: Node) -> frozenset[str]:
    """Names in `fn` (and the functions around it) holding model-chosen values: a tool's argument parameter, values
    decoded from `toolCall.function.arguments`, and locals assigned from those."""

    def build() -> dict[int, frozenset[str]]:
        return {}

    memo = cached(mod, "tainted", build)
    if fn.id in memo:
        return memo[fn.id]
    names: set[str] = set()
    chain = [fn, *enclosing_functions(mod, fn)]
    for scope in reversed(chain):
        if tool_functions(mod).get(scope.id) == "args":
            plist = params(scope)
            if plist:
                names.update(bound_names(mod, param_pattern(plist[0])))
    for _ in range(2):
        for scope in reversed(chain):
            for node in _declarators_in(mod, scope):
                target = node.child_by_field_name("name") or node.child_by_field_name("left")
                value = node.child_by_field_name("value") or node.child_by_field_name("right")
                if target is None or value is None:
                    continue
                if _expr_tainted(mod, value, names):
                    names.update(bound_names(mod, target) if target.type != "member_expression" else [])
    result = frozenset(names)
    memo[fn.id] = result
    return result


def _expr_tainted(mod: TsModule, expr: Node, names: set[str] | frozenset[str]) -> bool:
    text = mod.node_text(expr)
    if TOOL_ARG_TEXT.search(text):
        return True
    # nothing tainted yet: no identifier can match, so skip walking the value (a bundle's wrapper holds thousands)
    return bool(names) and any(mod.node_text(i) in names for i in idents(expr))


def model_sourced(mod: TsModule, expr: Node) -> bool:
    """Whether `expr` carries a model-chosen value (a tool argument, or data decoded from a tool call)."""
    fn = mod.enclosing_function(expr)
    text = mod.node_text(expr)
    if TOOL_ARG_TEXT.search(text):
        return True
    if fn is None:
        return False
    tools = tool_functions(mod)
    if any(tools.get(f.id) == "class" for f in [fn, *enclosing_functions(mod, fn)]) and \
            any(_CLASS_TAINT.match(mod.node_text(n)) for n in [expr, *descendants(expr)] if n.type == "member_expression"):
        return True
    names = tainted_names(mod, fn)
    return bool(names) and any(mod.node_text(i) in names for i in idents(expr))


# ---------------------------------------------------------------- callers of a function (one hop, same or importing module)
_IMPORTERS: dict[int, tuple[TsProject, dict[str, list[TsModule]]]] = {}


def importers(project: TsProject, mod: TsModule) -> list[TsModule]:
    """Modules of the project that import `mod` by a relative specifier (`import … from "./mod"`,
    `require("../mod")`), indexed once per project from the import sources alone."""
    hit = _IMPORTERS.get(id(project))
    if hit is None or hit[0] is not project:
        index: dict[str, list[TsModule]] = {}
        for other in project.modules.values():
            specs = [strip_quotes(other.node_text(imp.child_by_field_name("source")))
                     for imp in other.nodes("import_statement") if imp.child_by_field_name("source") is not None]
            if "require(" in other.text:
                specs += [string_value(other, args[0]) or "" for call in calls_by_short(other).get("require", [])
                          if (args := other.arguments(call))]
            for spec in {sp for sp in specs if sp.startswith(".")}:
                target = project.resolve_import(other, spec)
                if target is not None and target is not other:
                    index.setdefault(target.path, []).append(other)
        if len(_IMPORTERS) > 16:
            _IMPORTERS.clear()
        hit = (project, index)
        _IMPORTERS[id(project)] = hit
    return hit[1].get(mod.path, [])


def callers(mod: TsModule, project: TsProject, fn: Node) -> list[tuple[TsModule, Node]]:
    """Calls of `fn` by name: in its own module (`name(...)`, `this.name(...)`) and in modules importing it (or,
    for a method, importing its class and calling `X.name(...)`)."""
    name = mod.function_name(fn)
    if name in ("<anonymous>", "", "constructor"):
        return []
    out: list[tuple[TsModule, Node]] = [(mod, c) for c in calls_by_short(mod).get(name, [])
                                        if c.type == "call_expression"]
    for other in importers(project, mod):
        for local, target in imports_of(other).items():
            spec, _, export = target.partition("#")
            if not export or export != name or project.resolve_import(other, spec) is not mod:
                continue
            if export == name:
                out.extend((other, c) for c in calls_by_short(other).get(local, []) if c.type == "call_expression")
        if fn.type == "method_definition":
            # `import { manager } from "./manager"; manager.run(cmd)`: an instance of the class is imported
            out.extend((other, c) for c in calls_by_short(other).get(name, [])
                       if c.type == "call_expression" and "." in other.call_name(c))
    seen: set[int] = set()
    unique = [(m, c) for m, c in out if not (c.id in seen or seen.add(c.id))]
    return unique[:30]


def param_flows(mod: TsModule, fn: Node, exprs: list[Node]) -> list[int]:
    """Indices of `fn`'s parameters whose value reaches one of `exprs` (directly or through locals of `fn`)."""
    found: list[int] = []
    used = {mod.node_text(i) for e in exprs for i in idents(e)}
    if not used:
        return found
    local = mod.inside(mod.nodes("variable_declarator", "assignment_expression"), fn)
    for index, param in enumerate(params(fn)):
        names = set(bound_names(mod, param_pattern(param)))
        for _ in range(2):
            for node in local:
                target = node.child_by_field_name("name") or node.child_by_field_name("left")
                value = node.child_by_field_name("value") or node.child_by_field_name("right")
                if target is not None and value is not None and target.type != "member_expression" and \
                        any(mod.node_text(i) in names for i in idents(value)):
                    names.update(bound_names(mod, target))
        if names & used:
            found.append(index)
    return found


def param_names(mod: TsModule, fn: Node, index: int) -> list[str]:
    """The names the `index`-th parameter of `fn` binds."""
    plist = params(fn)
    return bound_names(mod, param_pattern(plist[index])) if index < len(plist) else []


def resolve_function(mod: TsModule, project: TsProject | None, callee: Node | None,
                     near: Node) -> tuple[TsModule, Node] | None:
    """The function a callee names: a function literal, a function of this module (`run`, `this.runOne` in the
    same class), or a top-level function of a project module it is imported from. `helpers.x` is not followed."""
    callee = unwrap(callee)
    if callee is None:
        return None
    if callee.type in FUNCTION_TYPES:
        return mod, callee
    text = mod.node_text(callee)
    own = text.startswith("this.")
    name = text[5:] if own else text
    if not re.fullmatch(r"[\w$#]+", name):
        return None
    cls = _class_of(mod, near) if own else None
    for fn in _functions_by_name(mod).get(name, ()):
        if (fn.type == "method_definition") != own:
            continue
        if cls is not None and not mod.within(fn, cls):
            continue
        return mod, fn
    if own or project is None:
        return None
    spec, _, export = imports_of(mod).get(name, "").partition("#")
    other = project.resolve_import(mod, spec) if spec and export else None
    if other is None:
        return None
    fn = next((f for f in _functions_by_name(other).get(export, ()) if f.type != "method_definition"
               and other.enclosing_function(f) is None), None)
    return (other, fn) if fn is not None else None


def _functions_by_name(mod: TsModule) -> dict[str, list[Node]]:
    """Every function of the module by `function_name`, each list in source order (cached)."""

    def build() -> dict[str, list[Node]]:
        out: dict[str, list[Node]] = {}
        for fn in mod.functions():
            out.setdefault(mod.function_name(fn), []).append(fn)
        return out

    return cached(mod, "functions_by_name", build)


# ---------------------------------------------------------------- abort signals
_SIGNAL_NAME = re.compile(r"^(abort)?[sS]ignal$|^[a-z]\w*AbortSignal$|^cancelSignal$")
SIGNAL_KEYS = {"signal", "abortSignal", "cancelSignal"}
_CLASS_CONTROLLER = re.compile(r"(?:this\.|^\s*(?:private|protected|public|readonly|\s)*)([A-Za-z_$#][\w$]*)\s*"
                               r"(?::\s*AbortController\s*)?=\s*new\s+AbortController\s*\(", re.M)
_DIRECT_SIGNAL_TYPE = re.compile(r"\s*AbortSignal(\s*\|\s*(undefined|null))*\s*")


@dataclass(frozen=True, slots=True)
class SignalRef:
    """An abort signal a piece of code can reach."""

    expr: str
    """How to write it there (`signal`, `options.signal`, `controller.signal`, `this.abortController.signal`)."""
    declared: bool
    """False when the framework offers it but the code never names it (a tool `execute` without its options)."""


def _param_signals(mod: TsModule, fn: Node) -> list[SignalRef]:
    out: list[SignalRef] = []
    body_text = mod.node_text(fn.child_by_field_name("body"))
    for param in params(fn):
        pattern = param_pattern(param)
        ptype = re.sub(r"^\s*:\s*", "", param_type(mod, param))
        default = param.child_by_field_name("value") or param.child_by_field_name("right")
        if "Signals" in ptype or string_value(mod, default) is not None:
            continue  # `signal: NodeJS.Signals = "SIGTERM"` is a kill signal, not an abort signal
        if pattern.type == "object_pattern":
            out.extend(SignalRef(n, True) for n in bound_names(mod, pattern) if n in SIGNAL_KEYS)
            continue
        if pattern.type != "identifier":
            continue
        name = mod.node_text(pattern)
        quoted = re.escape(name)
        if _DIRECT_SIGNAL_TYPE.fullmatch(ptype) or (_SIGNAL_NAME.match(name) and not ptype and re.search(
                rf"\b{quoted}\??\.(aborted|addEventListener|throwIfAborted|reason|onabort)\b|"
                rf"\b(signal|abortSignal)\s*:\s*{quoted}\b", body_text)):
            out.append(SignalRef(name, True))
            continue
        found = re.search(rf"\b{quoted}\??\.(signal|abortSignal)\b", body_text) or \
            re.search(r"\b(signal|abortSignal)\??\s*:\s*AbortSignal\b", ptype)
        if found is not None:
            out.append(SignalRef(f"{name}.{found.group(1)}", True))
    return out


def _timer_only_controller(mod: TsModule, fn: Node, name: str) -> bool:
    """`const c = new AbortController(); const t = setTimeout(() => c.abort(), 2000)`: a controller that only a timer
    aborts is one request's timeout, not the run's cancellation; another request gains nothing from its signal."""
    aborts = [m.start() for m in re.finditer(rf"(?<![\w$.]){re.escape(name)}\.abort\(", mod.node_text(fn))]
    timers = [m.start() for m in re.finditer(rf"setTimeout\(\s*(?:\(\)|\w+)\s*=>\s*\{{?\s*{re.escape(name)}\.abort\(",
                                             mod.node_text(fn))]
    return bool(aborts) and len(aborts) == len(timers)


def _local_signals(mod: TsModule, fn: Node) -> list[SignalRef]:
    out: list[SignalRef] = []
    for node in _declarators_in(mod, fn):
        if node.type != "variable_declarator":
            continue
        name_node = node.child_by_field_name("name")
        value = unwrap(node.child_by_field_name("value"))
        if name_node is None or value is None:
            continue
        value_text = mod.node_text(value)
        if value.type == "new_expression" and mod.call_name(value) == "AbortController":
            if not _timer_only_controller(mod, fn, mod.node_text(name_node)):
                out.append(SignalRef(f"{mod.node_text(name_node)}.signal", True))
        elif name_node.type == "identifier" and _SIGNAL_NAME.match(mod.node_text(name_node)) and \
                re.search(r"signal|Signal", value_text) and not value_text.startswith("AbortSignal.timeout("):
            out.append(SignalRef(mod.node_text(name_node), True))
        elif name_node.type == "object_pattern":
            out.extend(SignalRef(n, True) for n in bound_names(mod, name_node) if n in SIGNAL_KEYS)
    return out


def _class_signals(mod: TsModule, fn: Node) -> list[SignalRef]:
    cls = _class_of(mod, fn)
    method = next((f for f in [fn, *enclosing_functions(mod, fn)] if f.type == "method_definition"), None)
    if cls is None or method is None or mod.node_text(method).startswith("static") or \
            mod.function_name(method) == "constructor":
        return []
    text = mod.node_text(cls)
    if "AbortController" not in text:
        return []
    return [SignalRef(f"this.{m.group(1)}.signal", True) for m in _CLASS_CONTROLLER.finditer(text)][:1]


def _implicit_signal(mod: TsModule, fn: Node) -> list[SignalRef]:
    """A tool callback whose framework passes an abort signal in a parameter the code does not declare: the `ai`
    package's `tool({ execute(args, { abortSignal }) })` and MCP's `server.tool(..., (args, extra) => ...)`."""
    if tool_functions(mod).get(fn.id) != "args" or len(params(fn)) > 1:
        return []
    parent = fn.parent
    if parent is not None and parent.type == "arguments" and parent.parent is not None:
        callee = mod.call_name(parent.parent)
        if last(callee) in {"tool", "registerTool"} and "." in callee and "modelcontextprotocol" in " ".join(
                imports_of(mod).values()):
            return [SignalRef("extra.signal", False)]
        return []
    obj = parent.parent if parent is not None and parent.type == "pair" else parent
    if obj is None or obj.type != "object":
        return []
    factory = _enclosing_object_call(mod, obj)
    if factory and imported_from(mod, factory) == "ai":
        return [SignalRef("options.abortSignal", False)]
    return []


def abort_signals(mod: TsModule, node: Node) -> list[SignalRef]:
    """The abort signals reachable where `node` is: parameters and locals of the enclosing functions, a controller
    the enclosing class owns, or the signal a tool framework hands to a callback that does not declare it."""
    fns = enclosing_functions(mod, node)
    if not fns:
        return []

    def build() -> dict[int, list[SignalRef]]:
        return {}

    memo = cached(mod, "signals", build)
    if fns[0].id in memo:
        return memo[fns[0].id]
    out: list[SignalRef] = []
    for fn in fns:
        out.extend(_param_signals(mod, fn))
        out.extend(_local_signals(mod, fn))
    out.extend(_class_signals(mod, fns[0]))
    if not out:
        for fn in fns:
            out.extend(_implicit_signal(mod, fn))
    memo[fns[0].id] = out
    return out


def _is_signal_name(tok: str) -> bool:
    return tok in SIGNAL_KEYS or (tok.endswith("Signal") and tok != "killSignal")


def names_signal(mod: TsModule, node: Node) -> bool:
    """Whether code names an abort signal (`signal`, `abortSignal`, `ctrl.signal`, `AbortSignal.timeout`), not a
    kill signal (`killSignal`); comments and strings do not count."""
    kinds = ("identifier", "property_identifier", "shorthand_property_identifier")
    return any(_is_signal_name(mod.node_text(n)) for n in [node, *descendants(node)] if n.type in kinds)


def passes_signal(mod: TsModule, call: Node, options_index: int | None) -> bool:
    """Whether a call hands on some abort signal: an argument naming one, or an options argument (at
    `options_index`) that spreads other options in or is a name that cannot be read."""
    for index, arg in enumerate(call_args(mod, call)):
        node = unwrap(arg)
        if node is None:
            continue
        if names_signal(mod, node) or node.type == "spread_element":
            return True
        if index != options_index:
            continue
        if node.type == "object" and object_has_spread(node):
            return True
        if node.type in ("identifier", "member_expression", "call_expression", "ternary_expression"):
            obj = resolve_object(mod, node)
            if obj is None or object_has_spread(obj) or names_signal(mod, obj):
                return True
    return False


def in_abort_handler(mod: TsModule, node: Node) -> bool:
    """Whether `node` runs as a reaction to the abort (inside an `abort` listener / `onabort`), or in a function
    whose job is to cancel, close or clean up: such code must not carry the signal that is being fired."""
    for fn in enclosing_functions(mod, node):
        name = mod.function_name(fn)
        if re.search(r"cancel|abort|cleanup|clean_up|dispose|close|shutdown|teardown|stop|kill|interrupt", name,
                     re.I):
            return True
        parent = fn.parent
        if parent is not None and parent.type == "arguments" and parent.parent is not None:
            args = mod.arguments(parent.parent)
            if args and string_value(mod, args[0]) in ("abort", "exit", "close", "SIGINT", "SIGTERM"):
                return True
        if parent is not None and parent.type == "assignment_expression" and \
                mod.node_text(parent.child_by_field_name("left")).endswith("onabort"):
            return True
    return False


def in_clause(mod: TsModule, node: Node, clause: Literal["finally_clause", "catch_clause"], stop: Node | None) -> bool:
    """Whether `node` lies in a `finally` (or `catch`) clause below `stop`."""
    for anc in mod.ancestors(node):
        if anc == stop:
            return False
        if anc.type == clause:
            return True
    return False


_MODEL_TAIL = re.compile(r"\.(chat\.completions\.(create|stream|parse)|beta\.chat\.completions\.(create|stream|parse)|"
                         r"responses\.(create|stream)|messages\.(create|stream)|beta\.messages\.(create|stream)|"
                         r"completions\.create|embeddings\.create|models\.(generateContent|generateContentStream))$")
_AI_FUNCS = {"generateText", "streamText", "generateObject", "streamObject", "embed", "embedMany"}


def is_model_call(mod: TsModule, call: Node) -> bool:
    """An SDK model request (`openai` / `@anthropic-ai/sdk` style chains, the `ai` package's generate/stream, the AWS
    SDK v3 `client.send(new ConverseStreamCommand(...))` of Bedrock, whose request options come second)."""
    name = mod.call_name(call)
    if _MODEL_TAIL.search("." + name) and name.count(".") >= 2:
        return True
    if name.endswith(".send"):
        args = mod.arguments(call)
        first = unwrap(args[0]) if args else None
        return first is not None and first.type == "new_expression" and \
            MODEL_COMMAND.match(last(mod.call_name(first))) is not None
    return name in _AI_FUNCS and imported_from(mod, name) == "ai"


_HTTP_VERBS = {"get", "post", "put", "patch", "delete", "head", "request", "options"}
_FETCH_MODULES = {"node-fetch", "undici", "cross-fetch", "isomorphic-fetch", "@whatwg-node/fetch"}


def http_request(mod: TsModule, call: Node) -> str | None:
    """The client of an outbound HTTP request (`fetch`, `undici`, `axios`, `got`, `ky`), or None."""
    name = mod.call_name(call)
    if name in ("fetch", "globalThis.fetch", "window.fetch", "self.fetch"):
        return "fetch"
    head = name.split(".", 1)[0]
    origin = imported_from(mod, head)
    if origin in _FETCH_MODULES and last(name) in ("fetch", "request", *_HTTP_VERBS):
        return origin
    if origin in ("axios", "got", "ky", "superagent") and (name == head or last(name) in _HTTP_VERBS):
        return origin
    return None


# ---------------------------------------------------------------- tools registered by reference
def _tool_slot_names(mod: TsModule) -> set[str]:
    """Names handed by reference as a tool's implementation in this module: `{ name, parameters, run: runShell }`,
    `{ description, input_schema, handler: readFile }`, a registry object `const toolHandlers = { run_shell:
    runShell, readFile }`, `server.tool("x", schema, runShell)`, `registerTool("x", runShell)`,
    `tools.set("x", runShell)` on a registry-named receiver."""

    def build() -> set[str]:
        out: set[str] = set()
        for obj in mod.nodes("object"):
            registry = None
            for child in obj.named_children:
                if child.type == "shorthand_property_identifier":
                    registry = _registry_object(mod, obj) if registry is None else registry
                    if registry:
                        out.add(mod.node_text(child))
                    continue
                if child.type != "pair":
                    continue
                value = unwrap(child.child_by_field_name("value"))
                if value is None or value.type != "identifier":
                    continue
                key = strip_quotes(mod.node_text(child.child_by_field_name("key")))
                if key in _EXEC_KEYS and (mod.object_keys(obj).keys() & _SCHEMA_KEYS or
                                          last(_enclosing_object_call(mod, obj)) in _TOOL_FACTORIES):
                    out.add(mod.node_text(value))
                    continue
                registry = _registry_object(mod, obj) if registry is None else registry
                if registry:
                    out.add(mod.node_text(value))
        for call in calls_named(mod, "tool", "registerTool", "addTool", "set"):
            if call.type != "call_expression":
                continue
            name = mod.call_name(call)
            short = last(name)
            if short == "set" and not _REGISTRY_NAME.search(name.rsplit(".", 1)[0] if "." in name else ""):
                continue
            if short == "tool" and "." not in name:
                continue  # the `ai` package's `tool({...})` takes an object, handled above
            args = mod.arguments(call)
            handler = unwrap(args[-1]) if len(args) >= 2 else None
            if handler is not None and handler.type == "identifier":
                out.add(mod.node_text(handler))
        return out

    return cached(mod, "tool_slot_names", build)


def registered_tool_functions(mod: TsModule, project: TsProject | None) -> frozenset[int]:
    """Ids of the top-level functions of `mod` that are registered BY REFERENCE as a tool's implementation, in `mod`
    or in a module importing them by name (`import { runShell } from "./shell"` … `run: runShell`). Their first
    parameter carries the model's tool arguments. (`tool_functions` covers the inline implementations.)"""

    def build() -> frozenset[int]:
        names = set(_tool_slot_names(mod))
        if project is not None:
            for other in importers(project, mod):
                slots = _tool_slot_names(other)
                if not slots:
                    continue
                for local, target in imports_of(other).items():
                    spec, _, export = target.partition("#")
                    if local in slots and export and export != "default" and \
                            project.resolve_import(other, spec) is mod:
                        names.add(export)
        if not names:
            return frozenset()
        return frozenset(fn.id for fn in mod.functions() if fn.type != "method_definition" and
                         mod.enclosing_function(fn) is None and mod.function_name(fn) in names)

    return cached(mod, "registered_tool_functions", build)


# ---------------------------------------------------------------- tool objects with a nested schema
_NESTED_SPEC_KEYS = {"spec", "definition", "declaration", "schema", "function", "tool", "toolSpec", "toolDefinition",
                     "meta"}
_NESTED_SPEC_TEXT = re.compile(r"\b(parameters|inputSchema|input_schema|properties)\b")
_TOOL_TYPE_ANNOTATION = re.compile(r":\s*\w*(Tool|ToolImpl|ToolDef\w*|ToolSpec)\b")


def object_tool_entry(mod: TsModule, fn: Node) -> bool:
    """Whether `fn` is the run entry (`run`, `execute`, `handler`, ...) of an object literal that is one tool whose
    schema sits nested (`{ spec: { name, parameters }, async run(args, ctx) {...} }`, `{ definition: { function:
    { parameters } }, run }`) or that is typed as a tool (`const readFile: Tool = {...}`). Its first parameter
    holds the model's arguments. (`tool_kind` covers the flat `{ description, parameters, execute }` shape.)"""
    if fn.type == "method_definition":
        key, obj = mod.node_text(fn.child_by_field_name("name")), fn.parent
    elif fn.parent is not None and fn.parent.type == "pair":
        key, obj = strip_quotes(mod.node_text(fn.parent.child_by_field_name("key"))), fn.parent.parent
    else:
        return False
    if key not in _EXEC_KEYS or obj is None or obj.type != "object":
        return False
    keys = mod.object_keys(obj)
    if keys.keys() & _SCHEMA_KEYS:
        return True
    if any(k in _NESTED_SPEC_KEYS and _NESTED_SPEC_TEXT.search(mod.node_text(v)) for k, v in keys.items()):
        return True
    holder = obj.parent
    if holder is None or holder.type != "variable_declarator":
        return False
    annotation = holder.child_by_field_name("type")
    return annotation is not None and bool(_TOOL_TYPE_ANNOTATION.search(mod.node_text(annotation)))


def in_object_tool(mod: TsModule, node: Node) -> Node | None:
    """The nested-schema tool entry (see `object_tool_entry`) `node` sits in, if any."""
    return next((f for f in enclosing_functions(mod, node) if object_tool_entry(mod, f)), None)


# ---------------------------------------------------------------- Electron IPC
_IPC_MAIN = re.compile(r"(^|\.)ipcMain\.(handle|handleOnce|on|once)$")
_IPC_RENDERER = re.compile(r"(^|\.)ipcRenderer\.(invoke|send|sendSync)$")


def ipc_channel(mod: TsModule, fn: Node) -> str | None:
    """The channel an Electron main-process handler serves: `ipcMain.handle("fs:read", (event, p) => …)`, or a
    named function handed over by reference (`ipcMain.handle("fs:read", readNote)`)."""
    if "ipcMain" not in mod.text:
        return None
    holder = fn.parent
    calls: list[Node] = []
    if holder is not None and holder.type == "arguments" and holder.parent is not None:
        calls = [holder.parent]
    elif (name := mod.function_name(fn)) != "<anonymous>":
        calls = [c for c in calls_named(mod, "handle", "handleOnce", "on", "once")
                 if (a := call_args(mod, c)) and mod.node_text(a[-1]) == name]
    for call in calls:
        args = call_args(mod, call)
        if _IPC_MAIN.search(mod.call_name(call)) and len(args) >= 2:
            return string_value(mod, unwrap(args[0]))
    return None


def ipc_senders(project: TsProject, mod: TsModule, fn: Node, index: int) -> list[tuple[TsModule, Node]]:
    """What the renderer sends into parameter `index` of an Electron main-process handler (parameter 0 is the
    event): that argument of every `ipcRenderer.invoke(channel, …)` / `send` of the project on the same channel,
    and, when it is a parameter of a bridge function exposed with `contextBridge.exposeInMainWorld(api, { key:
    (p) => ipcRenderer.invoke(channel, p) })`, the arguments the renderer passes to `api.key(...)` (`window.api.key`)."""
    channel = ipc_channel(mod, fn) if index > 0 else None
    if not channel:
        return []
    out: list[tuple[TsModule, Node]] = []
    for other in project.modules.values():
        if "ipcRenderer" not in other.text:
            continue
        for call in calls_named(other, "invoke", "send", "sendSync"):
            args = call_args(other, call)
            if not _IPC_RENDERER.search(other.call_name(call)) or string_value(other, unwrap(args[0]) if args
                                                                              else None) != channel:
                continue
            if index >= len(args):
                continue
            out.append((other, args[index]))
            out.extend(_bridge_callers(project, other, call, args[index]))
    return out


def _bridge_callers(project: TsProject, mod: TsModule, send: Node, arg: Node) -> list[tuple[TsModule, Node]]:
    """The renderer-side arguments that reach `arg` through a `contextBridge.exposeInMainWorld` entry."""
    bridge = mod.enclosing_function(send)
    arg = unwrap(arg) or arg
    if bridge is None or arg.type != "identifier" or bridge.parent is None or bridge.parent.type != "pair":
        return []
    names = [bound_names(mod, param_pattern(p)) for p in params(bridge)]
    position = next((i for i, n in enumerate(names) if mod.node_text(arg) in n), None)
    obj = bridge.parent.parent
    expose = obj.parent.parent if obj is not None and obj.parent is not None else None
    if position is None or expose is None or expose.type != "call_expression" or \
            last(mod.call_name(expose)) != "exposeInMainWorld":
        return []
    api = string_value(mod, unwrap(call_args(mod, expose)[0])) if call_args(mod, expose) else None
    key = strip_quotes(mod.node_text(bridge.parent.child_by_field_name("key")))
    if not api:
        return []
    out: list[tuple[TsModule, Node]] = []
    for other in project.modules.values():
        for call in calls_named(other, key):
            name = other.call_name(call)
            args = call_args(other, call)
            if (name == f"{api}.{key}" or name.endswith(f".{api}.{key}")) and position < len(args):
                out.append((other, args[position]))
    return out
