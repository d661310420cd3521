"""C6 · Secrets and ambient environment — TypeScript/JavaScript rules.

Shapes detected:
- `model-command-inherits-env`: `child_process` `exec`/`spawn`/`execFile`/`fork` (sync variants too), `execa`,
  `Bun.spawn` or `node-pty` running a model-chosen command with no `env` option, `env: process.env`, or
  `env: { ...process.env, X }`. A model-written argument of a program that runs its argument as code with a way out
  to the shell (`psql -c` with `\\!`, `sqlite3` `.shell`, `awk` `system()`, an interpreter's `-e`) chooses the command
  too. Suspected when the command is a `command` parameter not traced to a tool call.
- Commands arriving as messages (`worker_threads` `parentPort.on("message")`, a forked child's `process.on("message")`,
  `self.onmessage`) and command fields of parsed files (a plugin manifest's `setup`, a hooks config) are suspected.
- Runtimes: `child_process`, execa, cross-spawn, shelljs, `Bun.spawn`, Bun / zx `` $`…` ``, `Deno.Command`, node-pty.
- `mcp-server-given-full-env` (suspected): a stdio MCP server (or another tool server the model drives) is launched
  with `env: process.env` / `{ ...process.env, ...cfg.env }`: `new StdioClientTransport({...})`, the `ai` package's
  `Experimental_StdioMCPTransport`, `@openai/agents` `MCPServerStdio`, a `mcpServers: { name: { command, env } }`
  config (LangChain `MultiServerMCPClient`, Claude Agent SDK, Mastra). The SDKs pass only a safe subset (`PATH`,
  `HOME`, ...) when `env` is left out, so this widens it to every secret of the host.

A command is model-chosen when it comes from a tool's arguments (`tool({ execute })`, MCP `server.tool`, a
`*Tool` class's `this.params`, a function registered by reference as a tool: `{ parameters, run: runShell }`), from
a decoded `toolCall.function.arguments`, or from a helper whose caller (one hop, same or importing module) passes
such a value, or an Electron main-process handler (`ipcMain.handle(channel, ...)`) sent the value over that channel
by a tool in the renderer (`ipcRenderer.invoke`, directly or through a `contextBridge` bridge). A helper called from a tool with a value the model did not write itself (a runbook step, a config
entry) is suspected. The finding cites the `env:` option when one is passed, else the options object the spawn is
given (where `env` belongs), else the spawn.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from harness_audit.findings import CheckId, Verdict
from harness_audit.static.lang.typescript import TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts import _ts_idioms as ts

_COMMAND_PARAM = re.compile(r"^(cmd|command|commands|commandLine|cmdline|cmdLine|shellCommand|commandString|"
                            r"commandToExecute|script|code|source|bashCommand|cmdStr|commandStr)$")
_RUNNER_NAME = re.compile(r"run|exec|shell|spawn|command|bash|terminal|script|invoke", re.I)
_PROBE_NAME = re.compile(r"exist|avail|which|installed|^has[A-Z]|^is[A-Z]|version|detect|find|resolve|lookup", re.I)
_TOOL_WORDS = re.compile(r"\btool|Tool\b|tool_call|toolCall|inputSchema")
_DIRECTION = ("pass an explicit allow-list, e.g. `env: { PATH: process.env.PATH, HOME: sandboxHome }`, never "
              "`process.env` or a spread of it")


@dataclass(frozen=True, slots=True)
class _Source:
    """Why a spawn's command is (or may be) model-chosen."""

    verdict: Verdict
    why: str
    hint: str = ""


def _spawns(mod: TsModule) -> list[ts.Spawn]:
    """`ts.spawns(mod)` plus the drop-in libraries with `child_process` semantics: `cross-spawn` (`spawn(cmd, args,
    opts)`, `spawn.sync`) and `shelljs` (`shell.exec(cmd, opts)`), which inherit `process.env` the same way."""
    found = ts.spawns(mod)
    text = mod.text
    if "cross-spawn" not in text and "shelljs" not in text and "Deno.Command" not in text and \
            not ("$`" in text and ("bun" in text or "zx" in text)):
        return found

    def build() -> list[ts.Spawn]:
        extra: list[ts.Spawn] = [*_runtime_spawns(mod)]
        imports = ts.imports_of(mod)
        for call in ts.calls_named(mod, "spawn", "sync", "exec", *(n for n, t in imports.items()
                                                                    if t.startswith(("cross-spawn", "shelljs")))):
            fn = ts.unwrap(call.child_by_field_name("function"))
            if fn is None or call.type != "call_expression":
                continue
            if fn.type == "identifier":
                target = imports.get(mod.node_text(fn), "")
            elif fn.type == "member_expression" and (obj := fn.child_by_field_name("object")) is not None and \
                    obj.type == "identifier":
                target = f"{imports.get(mod.node_text(obj), '')}#{mod.node_text(fn.child_by_field_name('property'))}"
            else:
                continue
            module, _, export = target.partition("#")
            if module == "cross-spawn" and export in ("", "default", "spawn"):
                extra.append(ts.Spawn(call, "spawn", "child_process"))
            elif module == "cross-spawn" and export == "sync":
                extra.append(ts.Spawn(call, "spawnSync", "child_process"))
            elif module == "shelljs" and export == "exec":
                extra.append(ts.Spawn(call, "exec", "child_process"))
        return [*found, *extra]

    return ts.cached(mod, "c6_spawns", build)


def _runtime_spawns(mod: TsModule) -> Iterator[ts.Spawn]:
    """Spawns of the other JS runtimes: Deno's `new Deno.Command(program, { args, env })` (which, like execa, adds
    the parent environment to `env` unless `clearEnv: true`), and the shell tags `` $`…` `` of Bun (`import { $ }
    from "bun"`) and zx, which run with `process.env` unless given another (`$({ env })`, `` $`…`.env({...}) ``)."""
    if "Deno.Command" in mod.text:
        for new in mod.nodes("new_expression"):
            if mod.call_name(new) == "Deno.Command":
                yield ts.Spawn(new, "Deno.Command", "child_process")
    shells = [n for n, t in ts.imports_of(mod).items() if t in ("bun#$", "zx#$")]
    if shells:
        for call in ts.calls_named(mod, *shells):
            fn = ts.unwrap(call.child_by_field_name("function"))
            args = call.child_by_field_name("arguments")
            if args is not None and args.type == "template_string" and fn is not None and (
                    fn.type == "identifier" or (fn.type == "call_expression" and mod.call_name(fn) in shells)):
                yield ts.Spawn(call, "$", "child_process")


def _parts(mod: TsModule, sp: ts.Spawn) -> list[Node]:
    """`ts.command_parts`, plus the `args` option of `Deno.Command`."""
    if sp.api != "Deno.Command":
        return ts.command_parts(mod, sp)
    args = ts.call_args(mod, sp.call)
    opts = ts.spawn_options(mod, sp)
    items = ts._array_items(mod, ts.option(mod, opts, "args")) if opts.obj is not None else None
    return [*args[:1], *(items or [])]


def _is_full_env(mod: TsModule, node: Node | None, depth: int = 2) -> bool:
    """`process.env`, `{ ...process.env, X }`, `Object.assign({}, process.env, …)`, `structuredClone(process.env)`,
    or a local declared with one of those."""
    node = ts.unwrap(node)
    if node is None:
        return False
    text = mod.node_text(node).strip()
    if text == "process.env":
        return True
    if node.type == "object":
        return any(c.type == "spread_element" and c.named_children and
                   _is_full_env(mod, c.named_children[0], depth) for c in node.named_children)
    if node.type == "call_expression":
        name = mod.call_name(node)
        if name in ("Object.assign", "structuredClone", "_.clone", "lodash.clone", "cloneDeep"):
            return any(mod.node_text(ts.unwrap(a)).strip() == "process.env" for a in mod.arguments(node))
        if depth > 0 and not mod.arguments(node):
            return _returns_full_env(mod, node, depth - 1)
    if node.type == "identifier" and depth > 0:
        if _reassigned(mod, node):
            return False  # `let env = process.env; if (sandbox) env = prepared.env`: which one runs is unknown
        return _is_full_env(mod, ts.resolve_value(mod, node), depth - 1)
    return False


def _returns_full_env(mod: TsModule, call: Node, depth: int) -> bool:
    """`env: childEnv()` where this module's `childEnv` returns `{ ...process.env, TERM: "dumb" }` on every path."""
    found = ts.resolve_function(mod, None, call.child_by_field_name("function"), call)
    if found is None:
        return False
    _, fn = found
    body = fn.child_by_field_name("body")
    if body is None:
        return False
    if body.type != "statement_block":
        return _is_full_env(mod, body, depth)
    values = [r.named_children[0] if r.named_children else None for r in mod.inside(mod.nodes("return_statement"), fn)
              if mod.enclosing_function(r) == fn]
    return bool(values) and all(v is not None and _is_full_env(mod, v, depth) for v in values)


def _reassigned(mod: TsModule, ident: Node) -> bool:
    """Whether the name is assigned again (`x = …`) somewhere in the function that uses it."""
    fn = mod.enclosing_function(ident)
    scope = ts.enclosing_functions(mod, ident)[-1] if fn is not None else None
    name = mod.node_text(ident)
    nodes = mod.nodes("assignment_expression")
    for node in (mod.inside(nodes, scope) if scope is not None else nodes):
        left = node.child_by_field_name("left")
        if left is not None and mod.node_text(left) == name:
            return True
    return False


def _env_state(mod: TsModule, sp: ts.Spawn) -> tuple[str, str]:
    """(`missing` | `full` | `merged` | `explicit` | `unknown`, what it looks like)."""
    opts = ts.spawn_options(mod, sp)
    if opts.opaque:
        return _branch_env_state(mod, sp)
    env = ts.option(mod, opts, "env")
    chained = sp.call.parent if sp.api == "$" else None
    if chained is not None and chained.type == "member_expression" and \
            mod.node_text(chained.child_by_field_name("property")) == "env":  # Bun: $`…`.env({ PATH })
        call = chained.parent
        given = mod.arguments(call)[:1] if call is not None and call.type == "call_expression" else []
        if given and _is_full_env(mod, given[0]):
            return "full", f"`.env({_short(mod, given[0])})` is the whole `process.env`"
        return "explicit", ""
    if sp.api == "$" and re.search(r"\$\.env\s*(=|\()", mod.text):
        return "unknown", ""  # `$.env = {...}` / `$.env({...})` sets the environment of every later command
    if env is None or mod.node_text(env).strip() == "undefined":
        if opts.obj is not None and ts.object_has_spread(opts.obj):
            return "unknown", ""
        return "missing", f"no `env` option is passed to `{sp.api}`, so it inherits `process.env`"
    if _is_full_env(mod, env):
        return "full", f"`env: {_short(mod, env)}` is the whole `process.env`"
    if sp.family == "execa" and mod.node_text(ts.option(mod, opts, "extendEnv")).strip() != "false":
        return "merged", f"`{sp.api}` is given `env: {_short(mod, env)}` without `extendEnv: false`"
    if sp.api == "Deno.Command" and mod.node_text(ts.option(mod, opts, "clearEnv")).strip() != "true":
        return "merged", f"`new Deno.Command` is given `env: {_short(mod, env)}` without `clearEnv: true`"
    return "explicit", ""


def _branch_env_state(mod: TsModule, sp: ts.Spawn) -> tuple[str, str]:
    """Options held in a local assigned per branch (`let opts; if (…) opts = { env: {...process.env} } else …`):
    `full` when every branch passes the whole environment, `missing` when none passes `env`."""
    names = [n for a in reversed(ts.call_args(mod, sp.call)[1:]) if (n := ts.unwrap(a)) is not None
             and n.type == "identifier"]
    name = names[0] if names else None
    objects = ts.assigned_objects(mod, name) if name is not None else None
    if name is None or not objects or any(ts.object_has_spread(o) for o in objects):
        return "unknown", ""
    envs = [mod.object_keys(o).get("env") for o in objects]
    full = [e for e in envs if e is not None and _is_full_env(mod, e)]
    if len(full) == len(envs):
        return "full", f"every branch sets `{mod.node_text(name)}.env` to the whole `process.env` " \
                       f"(`{_short(mod, full[0])}`)"
    if all(e is None for e in envs):
        return "missing", f"`{mod.node_text(name)}` has no `env`, so `{sp.api}` inherits `process.env`"
    return "unknown", ""


def _short(mod: TsModule, node: Node, limit: int = 50) -> str:
    text = " ".join(mod.node_text(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _position_ok(mod: TsModule, sp: ts.Spawn, parts: list[Node], tainted: Node) -> bool:
    """Whether a model value at this position chooses what runs: the shell string, the program, or the script an
    interpreter runs (an argument of a fixed program such as `git` or `rg` does not)."""
    if ts.spawn_is_shell(mod, sp) or sp.api == "$" or len(parts) == 1 or tainted == parts[0]:
        return True
    program = ts.program_name(mod, parts[0])
    return bool(ts.INTERPRETERS.match(program) or _EVALUATORS.match(program))


_EVALUATORS = re.compile(r"^(/(usr/)?(local/)?bin/)?(psql|mysql|mariadb|sqlite3|duckdb|mongosh|mongo|clickhouse-client|"
                         r"awk|gawk|mawk|php|lua|luajit|Rscript|julia|osascript|tclsh|expect)$")
"""Programs that run their argument as a program of their own language, with a way out to the shell: a database
client's `\\!` / `.shell` / `system` meta-commands, `awk`'s `system()`, a scripting runtime's `-e`/`-r`."""


def _command_source(mod: TsModule, project: TsProject, sp: ts.Spawn, parts: list[Node]) -> _Source | None:
    """Confirmed when a model value chooses the command; suspected for a command parameter in tool code."""
    for part in parts:
        if ts.model_sourced(mod, part) and _position_ok(mod, sp, parts, part):
            return _Source(Verdict.CONFIRMED, f"`{_short(mod, part)}` comes from the model's tool call")
    chosen = [p for p in parts if _position_ok(mod, sp, parts, p) and ts.string_value(mod, p) is None]
    # the nearest enclosing function whose parameters feed the command (skipping `new Promise((resolve) => …)`)
    found = next(((f, flows) for f in ts.enclosing_functions(mod, sp.call)
                  if (flows := ts.param_flows(mod, f, chosen))), None)
    from_file = _file_field_source(mod, chosen)
    if found is None:
        return from_file
    fn, flows = found
    fname = mod.function_name(fn)
    for index in flows:
        for other, arg in ts.ipc_senders(project, mod, fn, index):
            if ts.model_sourced(other, arg):
                return _Source(Verdict.CONFIRMED, f"the main-process handler of `{ts.ipc_channel(mod, fn)}` is sent "
                                                  f"`{_short(other, arg)}` from the model's tool call "
                                                  f"({other.path}:{other.line(arg)})")
    if 0 in flows and fn.id in ts.registered_tool_functions(mod, project):
        return _Source(Verdict.CONFIRMED, f"`{fname}` is registered as a tool, so its first parameter "
                                          f"`{_short(mod, ts.param_pattern(ts.params(fn)[0]), 30)}` is the model's tool arguments")
    fixed_by_callers = True
    found_callers = ts.callers(mod, project, fn)
    from_tool: tuple[TsModule, Node, Node, Node] | None = None
    for cmod, call in found_callers:
        args = ts.call_args(cmod, call)
        for index in flows:
            if index < len(args) and ts.model_sourced(cmod, args[index]):
                return _Source(Verdict.CONFIRMED,
                               f"`{fname}` is called at {cmod.path}:{cmod.line(call)} with "
                               f"`{_short(cmod, args[index])}` from the model's tool call")
            if index >= len(args) or ts.string_value(cmod, ts.unwrap(args[index])) is None:
                fixed_by_callers = False
                tool = _tool_around(cmod, project, call) if index < len(args) else None
                if from_tool is None and tool is not None:
                    from_tool = (cmod, call, args[index], tool)
    if found_callers and fixed_by_callers:
        return None  # every caller passes a literal command: nothing the model chose
    if from_tool is not None:
        cmod, call, arg, tool = from_tool
        tname = cmod.function_name(tool)
        return _Source(Verdict.SUSPECTED,
                       f"the tool `{tname}` calls `{fname}` with `{_short(cmod, arg)}` "
                       f"({cmod.path}:{cmod.line(call)}), so the model decides when it runs",
                       f"verify whether the model or untrusted people can write or choose the content of "
                       f"`{_short(cmod, arg)}` that the tool `{tname}` passes to `{fname}` "
                       f"({cmod.path}:{cmod.line(call)})")
    if from_file is not None:
        return from_file
    channel = _message_handler(mod, fn) if 0 in flows else ""
    if channel and _project_has_tools(project):
        pname = _short(mod, ts.param_pattern(ts.params(fn)[0]), 30) if ts.params(fn) else "the message"
        return _Source(Verdict.SUSPECTED,
                       f"the command arrives in `{pname}` over {channel}, sent by another part of the harness",
                       f"verify whether the sender of the messages handled here ({channel}) puts a command the model "
                       f"chose (a shell tool's argument) into `{pname}`; if so this is confirmed")
    named = [n for i in flows for n in ts.param_names(mod, fn, i) if _COMMAND_PARAM.match(n)]
    if named and _RUNNER_NAME.search(fname) and not _PROBE_NAME.search(fname) and _TOOL_WORDS.search(mod.text):
        return _Source(Verdict.SUSPECTED, f"`{fname}` runs whatever `{named[0]}` it is given",
                       f"verify whether `{named[0]}` of `{fname}` can carry a command chosen by the model "
                       f"(follow the callers of `{fname}` to a tool call)")
    return None


_MESSAGE_SUBSCRIBE = re.compile(r"(^|\.)(on|once|addListener|addEventListener|prependListener)$")
_MESSAGE_API = re.compile(r"(^|\.)on(Message|MessageExternal|Connect|ConnectExternal)\.addListener$")


def _message_handler(mod: TsModule, fn: Node) -> str:
    """How `fn` receives messages from another thread or process, described, or "": a `worker_threads`
    `parentPort.on("message", …)`, a forked child's `process.on("message", …)`, a Web Worker's
    `self.onmessage = …` / `addEventListener("message", …)`, a browser extension's `runtime.onMessage.addListener`."""
    holder = fn.parent
    if holder is not None and holder.type == "arguments" and holder.parent is not None:
        call = holder.parent
        name = mod.call_name(call)
        args = mod.arguments(call)
        if _MESSAGE_API.search(name):
            return f"`{name}`"
        if _MESSAGE_SUBSCRIBE.search(name) and args and ts.string_value(mod, ts.unwrap(args[0])) in (
                "message", "messageerror") and ts.unwrap(args[-1]) == fn:
            return f"`{name}(\"message\", …)`"
        return ""
    if holder is not None and holder.type == "assignment_expression":
        left = mod.node_text(holder.child_by_field_name("left"))
        if left == "onmessage" or left.endswith(".onmessage"):
            return f"`{left}`"
    return ""


def _project_has_tools(project: TsProject) -> bool:
    """Whether any module of the project speaks of tools (the harness has a tool surface at all)."""
    return any(_TOOL_WORDS.search(m.text) for m in project.modules.values())


_PARSE_CALLS = re.compile(r"^(JSON|JSON5|json5|yaml|YAML|toml|TOML|jsonc)\.(parse|load|safeLoad)$|^(parseYaml|"
                          r"parseToml|parseJsonc|loadYaml)$")
_FILE_READ = re.compile(r"\breadFile(Sync)?\b|\bBun\.file\b|\breadJson(Sync)?\b|\bworkspace\.fs\.readFile\b")


def _file_fields(mod: TsModule) -> dict[str, str]:
    """Field names this module takes from data it parses out of files (`JSON.parse(await readFile(p))`, `yaml.load`),
    mapped to the parsed local: `pkg.scripts.setup`, `const { setup } = pkg.loom`."""
    if not _FILE_READ.search(mod.text) or not re.search(r"parse|load|Yaml|Toml", mod.text):
        return {}

    def build() -> dict[str, str]:
        parsed: set[str] = set()
        fields: dict[str, str] = {}
        decls = mod.nodes("variable_declarator")
        for decl in decls:
            value = ts.unwrap(decl.child_by_field_name("value"))
            while value is not None and value.type in ("await_expression", "as_expression", "satisfies_expression",
                                                       "non_null_expression", "parenthesized_expression"):
                value = value.named_children[0] if value.named_children else None
            target = decl.child_by_field_name("name")
            if value is None or target is None or value.type != "call_expression" or \
                    not _PARSE_CALLS.search(mod.call_name(value)):
                continue
            if target.type == "identifier":
                parsed.add(mod.node_text(target))
            elif target.type == "object_pattern":
                fields.update({k: "the parsed file" for k in _pattern_keys(mod, target)})
        for name in parsed:
            for m in re.finditer(rf"(?<![\w$.]){re.escape(name)}((?:\??\.[A-Za-z_$][\w$]*)+)", mod.text):
                for part in re.findall(r"[A-Za-z_$][\w$]*", m.group(1)):
                    fields.setdefault(part, name)
        for decl in decls:
            target = decl.child_by_field_name("name")
            value = ts.unwrap(decl.child_by_field_name("value"))
            root = re.match(r"[A-Za-z_$][\w$]*", mod.node_text(value)) if value is not None else None
            if target is not None and target.type == "object_pattern" and root is not None and \
                    root.group(0) in parsed:  # `const { entry, setup } = pkg.plugin`
                fields.update({k: root.group(0) for k in _pattern_keys(mod, target)})
        return fields

    return ts.cached(mod, "c6_file_fields", build)


def _pattern_keys(mod: TsModule, pattern: Node) -> list[str]:
    out: list[str] = []
    for child in pattern.named_children:
        if child.type == "shorthand_property_identifier_pattern":
            out.append(mod.node_text(child))
        elif child.type == "pair_pattern":
            out.append(ts.strip_quotes(mod.node_text(child.child_by_field_name("key"))))
        elif child.type == "object_assignment_pattern":
            left = child.child_by_field_name("left")
            if left is not None:
                out.append(mod.node_text(left))
    return out


_COMMAND_FIELD = re.compile(r"^(setup|install|postinstall|preinstall|build|command|cmd|run|script|scripts|exec|"
                            r"shell|start|test|hook|hooks|prepare|bootstrap|init|commands)$", re.I)


def _file_field_source(mod: TsModule, parts: list[Node]) -> _Source | None:
    """Suspected when the command is a command-like field (`setup`, `command`, `scripts.build`) of data this module
    parses out of a file (a plugin manifest, `package.json`, a config): whoever can write that file chooses it."""
    fields = _file_fields(mod)
    if not fields:
        return None
    for part in parts:
        inner = ts.unwrap(part)
        if inner is None:
            continue
        field = ""
        if inner.type == "subscript_expression":  # `hooks[event]`, `pkg.scripts[name]`
            inner = ts.unwrap(inner.child_by_field_name("object"))
            if inner is None:
                continue
        if inner.type == "member_expression":
            field = mod.node_text(inner.child_by_field_name("property"))
        elif inner.type == "identifier":
            field = mod.node_text(inner)
        if field in fields and _COMMAND_FIELD.match(field):
            return _Source(Verdict.SUSPECTED,
                           f"`{_short(mod, inner)}` is the `{field}` field of a file this module parses (a manifest or "
                           f"config), so whoever can write that file chooses the command",
                           f"verify whether the model (a file-writing or shell tool) or an untrusted party can create "
                           f"or edit the file whose `{field}` field reaches `{_short(mod, inner)}` (plugin or config "
                           f"directories inside the workspace); if so this is confirmed")
    return None


def _tool_around(mod: TsModule, project: TsProject, node: Node) -> Node | None:
    """The tool implementation `node` runs in: an inline tool (`tool({ execute })`, a registry entry, a `*Tool`
    class) or a function registered by reference (`{ parameters, run: runShell }`)."""
    inline = ts.in_tool_function(mod, node)
    if inline is not None:
        return inline
    registered = ts.registered_tool_functions(mod, project)
    return next((f for f in ts.enclosing_functions(mod, node) if f.id in registered), None) if registered else None


def _env_node(mod: TsModule, sp: ts.Spawn) -> Node:
    """What a finding cites: the `env: ...` option when one is passed, else the spawn call."""
    opts = ts.spawn_options(mod, sp)
    env = ts.option(mod, opts, "env")
    pair = env.parent if env is not None else None
    if pair is not None and pair.type == "pair":
        return pair
    if env is None and opts.obj is not None and not opts.opaque and \
            any(mod.within(opts.obj, a) for a in mod.arguments(sp.call)):
        return opts.obj  # the options passed without `env`: where the allow-list belongs
    return sp.call


@rule(CheckId.C6, lang="typescript", name="model-command-inherits-env")
def model_command_inherits_env(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a spawn (`exec`, `spawn`, `execFile`, `execa`, `Bun.spawn`, `node-pty`) of a model-chosen command that
    passes no `env` option, `env: process.env`, or `env: { ...process.env, ... }`. The child then sees every API
    key and token of the harness, one `env` or `printenv` away from the transcript."""
    for sp in _spawns(mod):
        state, detail = _env_state(mod, sp)
        if state not in ("missing", "full"):
            continue
        parts = _parts(mod, sp)
        source = _command_source(mod, project, sp, parts) if parts else None
        if source is None:
            continue
        confirmed = source.verdict is Verdict.CONFIRMED
        yield Hit(
            node=_env_node(mod, sp), verdict=source.verdict,
            claim=f"a {'model-chosen' if confirmed else 'possibly model-chosen'} command runs with the harness's "
                  f"whole environment: {detail}; {source.why}",
            consequence="the model (or a prompt injection it read) can print every API key and token of the "
                        "harness with `env` or `printenv`, and they land in the transcript",
            direction=_DIRECTION,
            confirm_hint=source.hint,
        )


_MCP_CALLEE = re.compile(r"(Stdio|MCP|Mcp|mcp)")
_MCP_CONFIG_KEY = re.compile(r"^(mcpServers|mcp_servers|mcpServer|servers|mcp)$")
_COMMAND_KEYS = ("command", "fullCommand", "cmd")


def _mcp_server_config(mod: TsModule, obj: Node) -> str:
    """How an object literal with `command` and `env` is an MCP (stdio) server launch, described, or ""."""
    keys = mod.object_keys(obj)
    transport = ts.string_value(mod, ts.unwrap(keys.get("transport"))) or ts.string_value(
        mod, ts.unwrap(keys.get("type")))
    if transport == "stdio":
        return "a stdio MCP server config"
    holder = obj.parent
    while holder is not None and holder.type in ("parenthesized_expression", "as_expression", "satisfies_expression"):
        holder = holder.parent
    if holder is not None and holder.type == "arguments" and holder.parent is not None:
        callee = mod.call_name(holder.parent)
        if _MCP_CALLEE.search(callee):
            return f"`{'new ' if holder.parent.type == 'new_expression' else ''}{callee}(...)`"
        return ""
    if holder is not None and holder.type == "pair" and holder.parent is not None:
        outer = holder.parent.parent  # the pair's object -> what holds that object
        if outer is not None and outer.type == "pair" and _MCP_CONFIG_KEY.match(
                ts.strip_quotes(mod.node_text(outer.child_by_field_name("key")))):
            return f"the `{ts.strip_quotes(mod.node_text(outer.child_by_field_name('key')))}` entry " \
                   f"`{ts.strip_quotes(mod.node_text(holder.child_by_field_name('key')))}`"
    return ""


@rule(CheckId.C6, lang="typescript", name="mcp-server-given-full-env")
def mcp_server_given_full_env(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a stdio MCP server launched with the harness's whole environment (`env: process.env`,
    `env: { ...process.env, ...cfg.env }`): `new StdioClientTransport({...})`, `Experimental_StdioMCPTransport`,
    `MCPServerStdio`, or a `mcpServers: { name: { command, args, env } }` config. Left out, the MCP SDKs give the
    server only a safe subset (`PATH`, `HOME`, `USER`, ...); spreading `process.env` hands every API key of the host
    to a process whose tools the model calls with arguments it chose."""
    if "process.env" not in mod.text or ts.skipped_module(mod) or not re.search(r"mcp|MCP|Mcp|Stdio", mod.text):
        return
    for obj in mod.nodes("object"):
        keys = mod.object_keys(obj)
        env = keys.get("env")
        if env is None or not any(k in keys for k in _COMMAND_KEYS):
            continue
        value = ts.resolve_value(mod, env) if env.type == "shorthand_property_identifier" else env
        if not _is_full_env(mod, value):
            continue
        how = _mcp_server_config(mod, obj)
        if not how:
            continue
        cited = env.parent if env.parent is not None and env.parent.type == "pair" else None
        if cited is None:  # shorthand `env,`: cite the launch call, or where the environment was built
            launch = obj.parent.parent if obj.parent is not None and obj.parent.type == "arguments" else None
            cited = launch if launch is not None else (value.parent if value is not None and value.parent is not None
                                                       else obj)
        yield Hit(
            node=cited, verdict=Verdict.SUSPECTED,
            claim=f"{how} launches an MCP server with the harness's whole environment "
                  f"(`env: {_short(mod, value if value is not None else env)}`), not the SDK's safe default subset",
            consequence="every API key and token of the host is visible to the server process; a server tool that "
                        "runs commands, fetches URLs with headers from the environment, or reports its environment "
                        "puts them one model tool call away from the transcript",
            direction="leave `env` out (the SDK passes `getDefaultEnvironment()`), or pass "
                      "`{ ...getDefaultEnvironment(), ...serverSpecificVars }` with only what that server needs",
            confirm_hint="verify whether any configured server can run model-supplied commands, fetch model-chosen "
                         "URLs with environment credentials, or echo its environment (for the servers in the MCP "
                         "config: what their tools expose)",
        )
