"""C5 · Path and sandbox boundaries — TypeScript/JavaScript rules.

Shapes detected:
- `tool-path-unconfined`: a model-supplied path (a tool handler's argument — inline, a class tool, or a function
  registered by reference in a tool table — or a decoded tool call's arguments) reaches an `fs` call (`readFile`,
  `writeFileSync`, `rm`, `createReadStream`, `Bun.file`, ...) with no containment check in the function; lexical
  clean-ups (`normalize`, stripping `../`) are named as such. A project helper on the way counts as a check only
  if it may confine: one handed only the run's context (`ctxOf(runContext)`, `jobDir(ctx)`) or one that only joins
  does not. One finding per tool and opened value. An Electron main-process handler (`ipcMain.handle(channel,
  (event, p) => ...)`) receives what a renderer-side tool sends on that channel (`ipcRenderer.invoke(channel, p)`,
  directly or through a `contextBridge.exposeInMainWorld` bridge), so its parameters are model-supplied then.
  Functions a dispatch table holds (`const IMPLS = { write_report: writeReport }` looked up as `IMPLS[name]` in
  `runTool`) are tools too. The finding cites where the opened local is built (`const target = path.join(root,
  name)`) when that is another line: the containment check belongs there.
- `path-checked-without-realpath`: a containment check (`startsWith(root)`, `path.relative(root, p)`, `includes("..")`)
  on a model-supplied path that was never resolved through symlinks (`path.resolve` / `path.join` / `normalize`
  only, no `fs.realpath` / `Deno.realPath`). A `path.relative` whose result only builds display text (also after `.replace(/\\\\/g,
  "/")` or `.split(sep).join("/")`) is no check.

The two check rules also judge path helpers: a function with a containment test and no `fs` call of its own that
returns the value it checked (or is named as a validator), in a module that (or whose importers) call `fs`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from harness_audit.findings import CheckId
from harness_audit.static.lang.typescript import FUNCTION_TYPES, TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts._ts_idioms import (
    in_tool_function,
    ipc_senders,
    model_sourced,
    object_tool_entry,
    registered_tool_functions,
)
from harness_audit.static.rules_ts.c03_crash_checkpoint import fs_call

_ONE_PATH = {
    "readFile", "readFileSync", "writeFile", "writeFileSync", "appendFile", "appendFileSync", "unlink", "unlinkSync",
    "rm", "rmSync", "rmdir", "rmdirSync", "mkdir", "mkdirSync", "readdir", "readdirSync", "createReadStream",
    "createWriteStream", "open", "openSync", "truncate", "truncateSync", "chmod", "chmodSync", "readJson",
    "readJsonSync", "readJSON", "writeJson", "writeJsonSync", "writeJSON", "outputFile", "outputFileSync", "outputJson",
    "outputJsonSync", "remove", "removeSync", "emptyDir", "ensureDir", "ensureFile", "readTextFile", "writeTextFile",
    "opendir", "file", "write",
}
"""`fs` calls that read, write, list or delete what a path names (`stat`/`access`/`exists` only probe it)."""
_TWO_PATHS = {"rename", "renameSync", "copyFile", "copyFileSync", "cp", "cpSync", "copy", "copySync", "move",
              "moveSync", "link", "linkSync", "symlink", "symlinkSync"}
_FS_IMPORTS = ("'fs'", '"fs"', "fs/promises", "node:fs", "fs-extra", "graceful-fs", "Bun.", "Deno.", "workspace.fs")
_EDITOR_FS = re.compile(r"(^|\.)workspace\.fs$|^Deno$")
"""Editor and runtime file systems with the same verbs (`vscode.workspace.fs.readFile(uri)`, `Deno.readTextFile`)."""
_EDITOR_ONE_PATH = {"delete", "readDirectory", "createDirectory", "readDir", "readTextFileSync", "writeTextFileSync"}
_REALPATH = re.compile(r"\brealpath(Sync)?\b|\.realpath\b", re.I)
"""`fs.realpath`, `realpathSync`, and the camel-cased runtime spellings (`Deno.realPath`, `realPathSync`)."""
_VALIDATING = re.compile(r"(safe|secure|sanitiz|validat|check|ensure|assert|confine|sandbox|within|inside|contain|jail|"
                         r"guard|restrict|allowed|isSub|isChild|inWorkspace|resolveWorkspace|resolveIn|resolveSafe)",
                         re.I)
_PATHISH = re.compile(r"(path|file|dir|folder|target|dest|full|abs|real|resolved|location|root|base|workspace|"
                      r"sandbox|cwd|home|project)", re.I)
_TEMP_NAME = re.compile(r"\b(mkdtemp|mkdtempSync|tmpdir|tmpName|tmpFile|fileSync|dirSync)\b|\b(tmp|temp(?!l))\w*|\.tmp\b",
                        re.I)
"""A path the harness generated for its own temp file, next to a validated one."""


def _short(mod: TsModule, call: Node) -> str:
    callee = call.child_by_field_name("function")
    if callee is not None and callee.type == "member_expression":
        callee = callee.child_by_field_name("property")
    return mod.node_text(callee) if callee is not None and callee.type in ("identifier", "property_identifier") else ""


def _sink_paths(project: TsProject, mod: TsModule, call: Node) -> list[Node]:
    """The path arguments of a filesystem call (`fs.readFile(p)`, `rename(a, b)`, `Bun.file(p)`)."""
    short = _short(mod, call)
    if short in _EDITOR_ONE_PATH and _EDITOR_FS.search(mod.call_name(call).rpartition(".")[0]):
        return mod.arguments(call)[:1]
    if short not in _ONE_PATH and short not in _TWO_PATHS:
        return []
    name = mod.call_name(call)
    if short in ("file", "write") and name not in ("Bun.file", "Bun.write"):
        return []
    if short not in ("file", "write") and not fs_call(project, mod, call) and \
            not _EDITOR_FS.search(name.rpartition(".")[0]):
        return []
    args = mod.arguments(call)
    return args[:2] if short in _TWO_PATHS else args[:1]


def _sinks(project: TsProject, mod: TsModule) -> list[tuple[Node, list[Node]]]:
    """Every filesystem call of the module with its path arguments (computed once per module)."""
    def build() -> list[tuple[Node, list[Node]]]:
        if not any(w in mod.text for w in _FS_IMPORTS):
            return []  # no `fs` import (nor Bun/Deno): no call of the module can be a file-system call
        return [(call, paths) for call in mod.calls() if (paths := _sink_paths(project, mod, call))]

    return project.memo("c05.sinks", mod, build)


@dataclass(frozen=True, slots=True)
class _Check:
    """One containment test: `checked` is compared against `root`."""

    node: Node
    """The call doing the test."""
    kind: str
    """`startsWith`, `relative` or `includes`."""
    checked: Node
    """The value tested."""
    root: Node | None
    """What it is tested against."""


_CHECK_METHODS = (b"startsWith", b"relative", b"includes")


def _check_calls(project: TsProject, mod: TsModule) -> list[Node]:
    """Calls of the module that may be containment tests (by callee name), computed once per module."""
    def build() -> list[Node]:
        out: list[Node] = []
        relatives = _path_relative_names(project, mod)
        for call in mod.calls():
            callee = call.child_by_field_name("function")
            if callee is not None and callee.type == "member_expression":
                prop = callee.child_by_field_name("property")
                if prop is not None and mod.source[prop.start_byte:prop.end_byte] in _CHECK_METHODS:
                    out.append(call)
            elif callee is not None and callee.type == "identifier" and mod.node_text(callee) in relatives:
                out.append(call)
        return out

    return project.memo("c05.check_calls", mod, build)


_PATH_MODULES = {"path", "node:path", "path/posix", "node:path/posix", "path/win32", "node:path/win32", "upath", "pathe",
                 "@std/path", "jsr:@std/path", "@std/path/posix", "jsr:@std/path/posix"}
"""Modules whose `relative` is `path.relative` (Node, and Deno's standard library)."""


def _path_relative_names(project: TsProject, mod: TsModule) -> set[str]:
    """Local names of `path.relative` imported by name (`import { relative } from "node:path"`)."""
    return {local for local, src in project.imports_of(mod).items()
            if src.partition("#")[2] == "relative" and (src.partition("#")[0] in _PATH_MODULES or
                                                        re.search(r"/std(@[^/]+)?/path/mod\.ts$", src.partition("#")[0]))}


def _checks(project: TsProject, mod: TsModule, fn: Node) -> list[_Check]:
    """Containment tests in `fn` (nested callbacks included): `x.startsWith(root)`, `path.relative(root, x)`,
    `x.includes("..")`."""
    out: list[_Check] = []
    for call in mod.inside(_check_calls(project, mod), fn):
        callee = call.child_by_field_name("function")
        if callee is not None and callee.type == "identifier" and len(mod.arguments(call)) == 2:
            out.append(_Check(call, "relative", mod.arguments(call)[1], mod.arguments(call)[0]))
            continue  # `relative(root, real)` imported by name from `path`
        if callee is None or callee.type != "member_expression":
            continue
        method = mod.node_text(callee.child_by_field_name("property"))
        args = mod.arguments(call)
        receiver = callee.child_by_field_name("object")
        if receiver is None or not args:
            continue
        if method == "startsWith":
            prefix = args[0]
            literal = mod.string_value(prefix)
            if literal is not None and literal.startswith("..") and receiver.type == "identifier" and \
                    _LEXICAL_ONLY.search(mod.derivation_text(fn, receiver, 3)) and \
                    not re.search(r"\brelative\(", mod.derivation_text(fn, receiver, 3)):
                out.append(_Check(call, "a lexical `..` prefix test", receiver, None))
                continue  # `path.normalize(p).startsWith("..")`: an absolute path or a symlink passes
            if literal is not None and not (literal.startswith("/") and len(literal) > 1):
                continue  # `name.startsWith("_")`, `rel.startsWith("..")` (judged with its `path.relative`)
            if literal is None and (re.match(r"['\"`]\.\.", mod.node_text(prefix)) or not (
                    _PATHISH.search(mod.node_text(prefix)) or _PATHISH.search(mod.node_text(receiver)))):
                continue  # `rel.startsWith(`..${path.sep}`)` belongs to its `path.relative`
            out.append(_Check(call, "startsWith", receiver, prefix))
        elif method == "relative" and mod.node_text(receiver) in ("path", "posix", "win32", "path.posix") and \
                len(args) == 2:
            out.append(_Check(call, "relative", args[1], args[0]))
        elif method == "includes" and mod.string_value(args[0]) in ("..", "../", "..\\\\"):
            out.append(_Check(call, "includes", receiver, None))
    return out


_TOOL_KEYS = {"description", "parameters", "inputSchema", "input_schema", "schema", "argsSchema"}
_EXEC_KEYS = {"execute", "handler", "run", "invoke", "call", "fn", "func", "function", "callback", "handle", "impl"}
_REGISTRY = re.compile(r"(tool|handler|registry|function|command|action)s?(Map|Registry|ByName|Impls?)?$", re.I)
_REGISTER_CALLS = re.compile(r"^(tool|registerTool|addTool|register|defineTool|createTool|set)$")


def _registered_as_tool(project: TsProject, mod: TsModule, fn: Node) -> bool:
    """Whether a named function is handed to the model as a tool: a value of a tool definition (`{description,
    parameters, execute: readFile}`), of a registry object (`const tools = {read_file: readFile}`), or an argument of
    `registerTool(...)` / `tools.set(name, readFile)`."""
    name = mod.function_name(fn)
    if name == "<anonymous>" or fn.type == "method_definition":
        return False
    for other in (mod, *project.importers(mod)):
        for ident in project.occurrences(other, name):
            if _registers(other, ident):
                return True
    return False


_EXECUTOR = re.compile(r"^#?_?(execute|exec|run|call|invoke|dispatch|handle|perform)_?(tool|function)(_?call)?s?$",
                       re.I)
"""A function that runs whatever tool the model named (`executeTool(name, args)`): its arguments are the model's."""
_NOT_ARGS = {"name", "toolName", "tool_name", "id", "callId", "signal", "ctx", "context", "options", "opts", "config",
             "registry", "tools", "env"}
_TOOL_METHODS = {"execute", "run", "call", "invoke", "handle", "handler", "_call", "_run", "_execute", "callTool"}
_TOOL_CLASS = re.compile(r"(Tool|ToolInvocation|Command)\b")


def _tool_method(mod: TsModule, fn: Node) -> bool:
    """`class ReadFileTool { execute({ path }) {...} }`: the entry method of a class that implements one tool (named
    `*Tool`, extending or implementing a `*Tool` type, or declaring a `description` / `parameters` schema)."""
    if fn.type != "method_definition" or mod.node_text(fn.child_by_field_name("name")) not in _TOOL_METHODS:
        return False
    cls = next((a for a in mod.ancestors(fn) if a.type in ("class_declaration", "class",
                                                             "abstract_class_declaration")), None)
    if cls is None:
        return False
    name = mod.node_text(cls.child_by_field_name("name"))
    heritage = next((c for c in cls.named_children if c.type == "class_heritage"), None)
    if _TOOL_CLASS.search(name) or heritage is not None and _TOOL_CLASS.search(mod.node_text(heritage)):
        return True
    body = cls.child_by_field_name("body")
    fields = {mod.node_text(f.child_by_field_name("name") or f.child_by_field_name("property"))
              for f in (body.named_children if body is not None else [])
              if f.type in ("public_field_definition", "field_definition")}
    return bool(fields & _TOOL_KEYS)


def _registers(other: TsModule, ident: Node) -> bool:
    """Whether this mention of a function hands it over as a tool (see `_registered_as_tool`)."""
    parent = ident.parent
    if parent is None or ident.type not in ("identifier", "shorthand_property_identifier"):
        return False
    if ident.type == "shorthand_property_identifier":  # `const tools = { readNote }`
        holder = parent.parent if parent.type == "object" else None
        held = other.node_text(holder.child_by_field_name("name") or holder.child_by_field_name("left")) \
            if holder is not None and holder.type in ("variable_declarator", "assignment_expression") else ""
        return bool(held and _REGISTRY.search(held))
    if parent.type == "pair" and parent.child_by_field_name("value") == ident:
        obj = parent.parent
        key = other.node_text(parent.child_by_field_name("key")).strip("'\"`")
        keys = set(other.object_keys(obj)) if obj is not None else set()
        holder = obj.parent if obj is not None else None
        held = other.node_text(holder.child_by_field_name("name") or holder.child_by_field_name("left")) \
            if holder is not None and holder.type in ("variable_declarator", "assignment_expression") else ""
        return bool(key in _EXEC_KEYS and keys & _TOOL_KEYS) or bool(held and _REGISTRY.search(held))
    if parent.type == "arguments" and parent.parent is not None:
        callee = other.call_name(parent.parent).rsplit(".", 1)[-1]
        return bool(_REGISTER_CALLS.match(callee)) and bool(parent.named_children) and \
            parent.named_children[-1] == ident
    return False


_WIDE: list[tuple[TsProject, dict[tuple[int, int], bool]]] = []
"""Per (function, parameter): whether a model-chosen value reaches it; for the last project only."""


_LEXICAL_ONLY = re.compile(r"\bnormalize\(|\bposix\.normalize\(")
_DISPLAY = ("return_statement", "template_substitution", "pair", "arguments", "array")
_RESHAPE = {"replace", "replaceAll", "split", "join", "toString", "trim", "normalize", "toLowerCase"}
"""String reshaping of a `path.relative` result for display (`.replace(/\\\\/g, "/")`, `.split(sep).join("/")`)."""


def _display_only(mod: TsModule, fn: Node | None, check: _Check) -> bool:
    """`path.relative(root, p)` whose result only builds a message or a returned display value (`return { written:
    path.relative(root, file) }`, `` `wrote ${path.relative(root, p)}` ``): it tests nothing."""
    if check.kind != "relative" or fn is None:
        return False
    node, inner = check.node.parent, check.node
    while node is not None:
        if node.type in ("parenthesized_expression", "await_expression", "as_expression", "non_null_expression"):
            inner, node = node, node.parent
        elif node.type == "member_expression" and node.child_by_field_name("object") == inner and \
                mod.node_text(node.child_by_field_name("property")) in _RESHAPE and \
                node.parent is not None and node.parent.type == "call_expression":
            inner, node = node.parent, node.parent.parent  # `path.relative(root, p).replace(/\\/g, "/")`
        else:
            break
    if node is None:
        return False
    if node.type in ("variable_declarator", "assignment_expression"):
        target = node.child_by_field_name("name") or node.child_by_field_name("left")
        name = mod.node_text(target) if target is not None else ""
        if not re.fullmatch(r"[\w$]+", name):
            return False
        tested = rf"(?<![\w$.]){re.escape(name)}\s*(\?\.|\.)\s*(startsWith|includes|split|at|length)\b|" \
                 rf"(?<![\w$.]){re.escape(name)}\s*(\[|[=!]==?)|[=!]==?\s*{re.escape(name)}\b|" \
                 rf"isAbsolute\(\s*{re.escape(name)}\b|!\s*{re.escape(name)}\b"
        return not re.search(tested, mod.node_text(fn))
    return node.type in _DISPLAY


def _model_path(project: TsProject, mod: TsModule, fn: Node | None, expr: Node, depth: int = 2) -> bool:
    """Whether `expr` carries a model-chosen value: directly (`model_sourced`), or through a parameter of a function
    registered as a tool, or handed a model-chosen argument by a caller (`depth` hops)."""
    if model_sourced(mod, expr):
        return True
    if fn is None or depth <= 0:
        return False
    params = fn.child_by_field_name("parameters")
    positions = [q for q in params.named_children if q.type != "comment"] if params is not None else []
    used = _derived_names(mod, fn, expr)
    for index, param in enumerate(positions):
        names = {mod.node_text(n) for n in mod.pattern_names(param)}
        if not names & used:
            continue
        if not _WIDE or _WIDE[0][0] is not project:
            _WIDE[:] = [(project, {})]
        memo = _WIDE[0][1]
        key = (fn.id, index)
        if key not in memo:
            memo[key] = False  # recursion guard
            found = index == 0 and (_tool_method(mod, fn) or object_tool_entry(mod, fn) or
                                    _registered_as_tool(project, mod, fn) or
                                    fn.id in registered_tool_functions(mod, project)) or \
                _EXECUTOR.match(mod.function_name(fn)) is not None and not names & _NOT_ARGS
            # an Electron main-process handler: what a renderer-side tool sends over the channel
            found = found or any(_model_path(project, other, other.enclosing_function(arg), arg, depth - 1)
                                 for other, arg in ipc_senders(project, mod, fn, index))
            if not found:
                for other, call in project.callers_of(mod, fn):
                    args = other.arguments(call)
                    caller = other.enclosing_function(call)
                    if index >= len(args) or not _model_path(project, other, caller, args[index], depth - 1):
                        continue
                    scope = _owner(other, call)
                    if caller is not None and (_helper_validates(project, other, caller, args[index]) or
                                               scope is not None and _model_checks(project, other, scope)) or \
                            _hook_validated(other, args[index]):
                        continue  # the caller confines the path before handing it over
                    found = True
                    break
            memo[key] = found
        if memo[key]:
            return True
    return False


_PARAMS_FIELD = re.compile(r"\bthis\.(?:params|args|input)\.([A-Za-z_$][\w$]*)\b")
_VALIDATE_HOOK = re.compile(r"^#?_?validate\w*(Params|Param|ParamValues|Args|Arguments|Input)\w*$|^validate$")


def _hook_validated(mod: TsModule, expr: Node, text: str | None = None) -> bool:
    """`this.params.file_path` in a tool-invocation class, where a `validateToolParams(params)` hook of the module
    (run by the tool framework before the invocation is built) passes that same field to a containment predicate
    (`isPathWithinWorkspace(params.file_path)`, `assertInside(params.path)`) and refuses it otherwise: the value
    checked is the value the invocation opens."""
    fields = _PARAMS_FIELD.findall(text if text is not None else mod.node_text(expr))
    if len(set(fields)) != 1 or "validate" not in mod.text:
        return False
    field_name = re.escape(fields[0])
    for method in mod.nodes("method_definition"):
        if not _VALIDATE_HOOK.match(mod.node_text(method.child_by_field_name("name"))):
            continue
        for call in mod.inside(mod.calls(), method):
            short = mod.call_name(call).rsplit(".", 1)[-1]
            if not (_VALIDATING.search(short) or _REALPATH.search(short)) or short.startswith("validate"):
                continue
            if any(re.fullmatch(rf"[\w$]*\.{field_name}", mod.node_text(a)) for a in mod.arguments(call)):
                return True
    return False


def _model_checks(project: TsProject, mod: TsModule, fn: Node) -> list[_Check]:
    """Containment tests in `fn` whose tested value is model-supplied (computed once per function)."""
    return project.memo(f"c05.model_checks.{fn.id}", mod, lambda: [
        c for c in _checks(project, mod, fn) if _model_path(project, mod, mod.enclosing_function(c.node), c.checked)])


def _helper_validates(project: TsProject, mod: TsModule, fn: Node, expr: Node) -> bool:
    """Whether the value passed through a call that may validate it (a `safe…`/`resolveInWorkspace` helper or a
    project function), following the locals it is built from."""
    scope = mod.bindings(fn)
    pending = [expr]
    seen: set[str] = set()
    while pending:
        cur = pending.pop()
        stack = [cur]
        while stack:
            node = stack.pop()
            if node.type == "call_expression":
                last = mod.call_name(node).rsplit(".", 1)[-1]
                if _VALIDATING.search(last) or _confining_call(project, mod, fn, node):
                    return True
            elif node.type == "identifier" and mod.node_text(node) not in seen:
                seen.add(mod.node_text(node))
                pending.extend(scope.get(mod.node_text(node), []))
            if node.type not in FUNCTION_TYPES:
                stack.extend(node.named_children)
    return False


_CONFINES = re.compile(r"\.startsWith\(|\bpath\.relative\(|\brelative\(|real_?path|\.includes\(\s*['\"`]\.\.|"
                       r"\bisAbsolute\(|\bthrow\b", re.I)
"""What a project helper does when it confines a path: a containment test, a realpath, a refusal."""


_CONTEXT_ARG = re.compile(r"^(ctx|context|runContext|run_context|env|environment|config|cfg|conf|options|opts|settings|"
                          r"job|state|session|self|this|req|request|signal|deps|services|app|agent|runtime|"
                          r"workspace|ws|project|user|tenant)$", re.I)
"""Arguments that carry the run's context, not the model's path (`ctxOf(runContext)`, `jobDir(ctx)`)."""


def _context_arg(mod: TsModule, arg: Node) -> bool:
    node = arg
    while node.type in ("member_expression", "non_null_expression", "parenthesized_expression"):
        inner = node.child_by_field_name("object") if node.type == "member_expression" else \
            (node.named_children[0] if node.named_children else None)
        if inner is None:
            return False
        node = inner
    return node.type == "this" or node.type == "identifier" and bool(_CONTEXT_ARG.match(mod.node_text(node)))


def _confining_call(project: TsProject, mod: TsModule, fn: Node, call: Node) -> bool:
    """A call of a project function that may confine the value it is part of. A helper handed only the run's
    context (`ctxOf(runContext)`, `jobDir(ctx)`) produces the root, and one handed the model's path that neither
    tests, resolves nor refuses (`joinUnder(root, args.file)`) only joins: neither is a check. Any other project
    call is given the benefit of the doubt."""
    targets = project.resolve_call(mod, call)
    if not targets:
        return False
    args = [a for a in mod.arguments(call) if a.type != "spread_element"]
    if not args or all(_context_arg(mod, a) for a in args):
        return False
    if not any(_model_path(project, mod, fn, a, 1) for a in args):
        return True
    return any(_CONFINES.search(tmod.node_text(tfn)) or _VALIDATING.search(tmod.function_name(tfn)) or
               _CONFINES.search(tmod.function_name(tfn)) for tmod, tfn in targets)


def _owner(mod: TsModule, node: Node) -> Node | None:
    """The tool handler around `node` (checks anywhere in it protect the calls of its callbacks), else the nearest
    function."""
    return in_tool_function(mod, node) or mod.enclosing_function(node)


@rule(CheckId.C5, lang="typescript", name="tool-path-unconfined")
def tool_path_unconfined(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a model-supplied path (a tool handler's argument or a decoded tool call's arguments) that reaches an
    `fs` call with no containment check in the function. `../../.ssh/id_rsa` or an absolute path is then read,
    written or deleted wherever it points."""
    reported: set[int] = set()
    for call, paths in _sinks(project, mod):
        fn = mod.enclosing_function(call)
        if fn is None:
            continue
        scope = _owner(mod, call) or fn
        for path in paths:
            slot = _sink_slot(mod, scope, call, path)
            if slot in reported:
                break  # the same value already reported for this tool (`mkdir(dirname(p))` then `writeFile(p)`)
            if not _model_path(project, mod, fn, path) or _helper_validates(project, mod, fn, path):
                continue
            derivation = mod.derivation_text(fn, path, 4)
            if _TEMP_NAME.search(mod.derivation_text(fn, path, 2)) or _hook_validated(mod, path, derivation):
                continue
            if _model_checks(project, mod, scope):
                break
            reported.add(slot)
            lexical = " (only cleaned lexically, never resolved and contained)" if _LEXICAL.search(derivation) else ""
            built = _built_at(mod, fn, path, call)
            yield Hit(
                node=built if built is not None else call,
                claim=f"the model-supplied path `{mod.node_text(path)[:80]}` reaches `{mod.call_name(call)}`"
                      f"{f' (line {mod.line(call)})' if built is not None else ''} with no containment check{lexical}",
                consequence="a tool call with `../` segments, an absolute path or a symlink reads, writes or deletes "
                            "files outside the workspace",
                direction="resolve first (`const real = await fs.realpath(path.resolve(root, p))`), require "
                          "`path.relative(rootReal, real)` not to start with `..` nor be absolute, then open `real`",
            )
            break


_JOINS = re.compile(r"^(path\.)?(posix\.)?(join|resolve)$")


def _built_at(mod: TsModule, fn: Node, path: Node, call: Node) -> Node | None:
    """Where the opened path is built, when the file call opens a local bound once, in the same function and away
    from the call, to `path.join(root, modelValue)` / `path.resolve(...)`: the place the containment check belongs
    (`const target = path.join(REPORT_DIR, filename)` … `rename(tmp, target)`)."""
    if path.type != "identifier":
        return None
    bound = mod.bindings(fn).get(mod.node_text(path), [])
    if len(bound) != 1:
        return None
    value = bound[0]
    while value.type in ("await_expression", "parenthesized_expression", "as_expression"):
        value = value.named_children[0]
    if value.type != "call_expression" or not _JOINS.match(mod.call_name(value)) or \
            mod.line(value) == mod.line(call) or mod.enclosing_function(value) != fn:
        return None
    return value


def _sink_slot(mod: TsModule, scope: Node, call: Node, path: Node) -> tuple[int, int, str]:
    """(tool, switch case, opened value without `dirname(...)`): file calls on the same value in one tool are one
    defect; the cases of a dispatcher's `switch` are different tools."""
    case = next((a for a in mod.ancestors(call) if a.type == "switch_case" or a.id == scope.id), None)
    text = mod.node_text(path)
    m = re.fullmatch(r"(?:path\.)?dirname\((.*)\)", text, re.S)
    return scope.id, case.id if case is not None and case.type == "switch_case" else 0, (m.group(1) if m else text)


_LEXICAL = re.compile(r"\bnormalize\(|\.replace(All)?\([^)]*\\\.\\\.|\.replace(All)?\(\s*['\"`]\.\.")
"""A lexical clean-up of a path (`path.normalize(p)`, `p.replace(/\\.\\.\\//g, "")`): no symlink is resolved."""


_HELPER_LINES = 60
"""A path helper is a small function; a module-sized wrapper (a bundle's factory) is not one."""


def _resolver_helper(project: TsProject, mod: TsModule, fn: Node, check: _Check) -> bool:
    """Whether `fn` is a path helper that the file tools call: it has no `fs` call itself, and it returns the value it
    checked (`function inWorkspace(rel) { const p = path.resolve(root, rel); if (!p.startsWith(root)) throw ...;
    return p }`) or is named as a validator (`assertInside(p)`)."""
    if mod.end_line(fn) - mod.line(fn) > _HELPER_LINES:
        return False
    name = mod.function_name(fn)
    returned = [r for r in mod.inside(mod.nodes("return_statement"), fn)
                if mod.enclosing_function(r) == fn and not mod.within(check.node, r)]
    checked = mod.node_text(check.checked) if check.checked.type == "identifier" else ""
    gives_back = any(checked and re.search(rf"(^|[^\w$.]){re.escape(checked)}($|[^\w$])", mod.node_text(r))
                     for r in returned)
    if not gives_back and check.root is None and returned:
        # `const rel = normalize(p); if (rel.startsWith("..")) throw …; return path.resolve(root, p)`: the helper
        # returns a value built from the same parameter it tested
        params = fn.child_by_field_name("parameters")
        names = {mod.node_text(n) for q in (params.named_children if params is not None else [])
                 for n in mod.pattern_names(q)}
        tested = _derived_names(mod, fn, check.checked) & names
        gives_back = bool(tested) and any(tested & _derived_names(mod, fn, r) for r in returned)
    if not gives_back and not (name != "<anonymous>" and _VALIDATING.search(name)):
        return False
    return any(_sinks(project, other) for other in (mod, *project.importers(mod)))


def _check_scopes(project: TsProject, mod: TsModule) -> list[Node]:
    """Functions whose containment tests guard file access: the tool handler around each `fs` call, and path helpers
    (a function with a containment test and no `fs` call of its own whose result or verdict the file tools use)."""
    def build() -> list[Node]:
        out: dict[int, Node] = {}
        for call, _ in _sinks(project, mod):
            scope = _owner(mod, call)
            if scope is not None:
                out.setdefault(scope.id, scope)
        sink_fns = {f.id for call, _ in _sinks(project, mod) if (f := mod.enclosing_function(call)) is not None}
        for call in _check_calls(project, mod):
            fn = mod.enclosing_function(call)
            if fn is None or fn.id in out or fn.id in sink_fns or \
                    any(mod.within(fn, o) or mod.within(o, fn) for o in out.values()):
                continue
            # the shape first (cheap), then whether the tested value is the model's
            shaped = [c for c in _checks(project, mod, fn) if _resolver_helper(project, mod, fn, c)]
            if shaped and any(c.node in [m.node for m in _model_checks(project, mod, fn)] for c in shaped):
                out[fn.id] = fn
        return sorted(out.values(), key=lambda n: n.start_byte)

    return project.memo("c05.check_scopes", mod, build)


@rule(CheckId.C5, lang="typescript", name="path-checked-without-realpath")
def path_checked_without_realpath(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a containment check on a model-supplied path that was never resolved through symlinks (`path.resolve`,
    `path.join` or `normalize`, then `startsWith` / `path.relative` / `includes("..")`). A symlink inside the
    workspace that points outside passes the check and is then followed by the `fs` call."""
    for scope in _check_scopes(project, mod):
        for check in _model_checks(project, mod, scope):
            fn = mod.enclosing_function(check.node)
            if _REALPATH.search(mod.derivation_text(fn, check.checked, 4)) or _display_only(mod, fn, check):
                continue
            yield Hit(
                node=check.node,
                claim=f"`{mod.node_text(check.checked)[:60]}` is checked with `{check.kind}` without resolving "
                      "symlinks first",
                consequence="a symlink inside the workspace that points outside passes the check, and the file call "
                            "follows it",
                direction="check `await fs.realpath(p)` against the realpath of the root (with `path.relative`), then "
                          "open that resolved value",
            )


def _derived_names(mod: TsModule, fn: Node, expr: Node) -> set[str]:
    """Names `expr` reads, and the names their bound values read, transitively (within `fn`)."""
    scope = mod.bindings(fn)
    names: set[str] = set()
    pending = [expr]
    while pending:
        cur = pending.pop()
        for ident in mod.identifiers(cur):
            name = mod.node_text(ident)
            if name not in names:
                names.add(name)
                pending.extend(scope.get(name, []))
    return names
