"""C6 · Secrets and ambient environment — Python rules.

Shapes detected:
- `spawn-inherits-environment`: a process spawn that runs a model-chosen command (a tool parameter, a decoded tool
  argument, or a script a tool wrote) with no `env=` (or `env=None`), or with the whole environment
  (`os.environ`, `os.environ.copy()`, `dict(os.environ)`, `{**os.environ, ...}`); `os.system` / `os.popen`
  always inherit. Suspected when the command is a shell string or a `command` parameter not traced to the model,
  or when a web route handler (`@app.post("/run")`) runs code or a command taken from its request.
- `spawn-env-from-full-copy`: `env=` is built by a helper that copies the whole `os.environ` on some path.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from harness_audit.findings import CheckId, Verdict
from harness_audit.static import idioms
from harness_audit.static.lang.python import FunctionNode, PyModule, PyProject, subtree
from harness_audit.static.registry import Hit, rule

_src = idioms.source_text

_NO_ENV_PARAM = {"os.system", "os.popen", "os.execv", "os.execvp", "os.execl", "os.execlp", "os.spawnv", "os.spawnvp",
                 "os.spawnl", "os.spawnlp", "subprocess.getoutput", "subprocess.getstatusoutput", "pexpect.run"}
_SHELL_CALLS = {"os.system", "os.popen", "asyncio.create_subprocess_shell", "subprocess.getoutput",
                "subprocess.getstatusoutput", "pexpect.spawn", "pexpect.run"}
_POSITIONAL_ENV = {"os.execve": 2, "os.execvpe": 2, "os.spawnve": 3, "os.spawnvpe": 3, "os.posix_spawn": 2,
                   "os.posix_spawnp": 2}
_INTERPRETERS = re.compile(r"^(python[\d.]*|bash|sh|zsh|node|deno|bun|ruby|perl|pwsh|powershell|cmd)$")
_COMMAND_PARAMS = re.compile(r"^(cmd|command|commands|shell_command|script|code|source|cmdline|command_line|argv)$")


_SPAWN_SHORT = {idioms.last(n) for n in idioms.SPAWN_CALLS}
_SPAWN_CACHE: dict[int, tuple[PyModule, list[ast.Call]]] = {}


def _spawns(mod: PyModule) -> list[ast.Call]:
    """Every process spawn of the module (a cheap name filter first, then `idioms.is_spawn`; cached per module)."""
    hit = _SPAWN_CACHE.get(id(mod))
    if hit is not None and hit[0] is mod:
        return hit[1]
    out: list[ast.Call] = []
    names = [n for n in mod.called_names() if n in _SPAWN_SHORT or n.startswith(("exec", "spawn"))]
    for call in mod.calls_to(names):
        if idioms.is_spawn(mod, call):
            out.append(call)
    if len(_SPAWN_CACHE) > 8192:
        _SPAWN_CACHE.clear()
    _SPAWN_CACHE[id(mod)] = (mod, out)
    return out


def _is_environ(mod: PyModule, expr: ast.AST) -> bool:
    return mod.qualname(expr) == "os.environ"


def _is_full_environ(mod: PyModule, expr: ast.AST | None) -> bool:
    """`os.environ`, `os.environ.copy()`, `dict(os.environ)`, `{**os.environ, ...}`, `os.environ | {...}`,
    or an unfiltered comprehension over `os.environ.items()`."""
    if expr is None:
        return False
    if _is_environ(mod, expr):
        return True
    if isinstance(expr, ast.Call):
        name = mod.call_name(expr)
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "copy" and _is_environ(mod, expr.func.value):
            return True
        if name in {"dict", "copy.copy", "copy.deepcopy"} and expr.args and _is_environ(mod, expr.args[0]):
            return True
    if isinstance(expr, ast.Dict):
        return any(k is None and _is_full_environ(mod, v) for k, v in zip(expr.keys, expr.values, strict=True))
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.BitOr):
        return _is_full_environ(mod, expr.left)
    if isinstance(expr, ast.DictComp):
        gen = expr.generators[0] if expr.generators else None
        return gen is not None and not gen.ifs and isinstance(gen.iter, ast.Call) and \
            isinstance(gen.iter.func, ast.Attribute) and _is_environ(mod, gen.iter.func.value)
    return False


def _env_arg(mod: PyModule, call: ast.Call, name: str) -> ast.expr | None:
    pos = _POSITIONAL_ENV.get(name)
    if pos is not None and len(call.args) > pos:
        return call.args[pos]
    return mod.keyword(call, "env")


def _env_state(mod: PyModule, project: PyProject, call: ast.Call, name: str) -> tuple[str, str]:
    """How the spawn's environment is chosen: (`missing` | `full` | `helper` | `explicit`, detail)."""
    if name in _NO_ENV_PARAM:
        return "missing", f"`{name}` cannot take an environment"
    env = _env_arg(mod, call, name)
    if env is None:
        if mod.has_kwargs_splat(call):
            return "explicit", ""
        return "missing", "no `env=` is passed"
    if isinstance(env, ast.Constant) and env.value is None:
        return "missing", "`env=None` is passed"
    if _is_full_environ(mod, env):
        return "full", f"`env={_src(mod, env)}` is the whole environment"
    fn = mod.enclosing_function(call)
    if isinstance(env, ast.Name) and fn is not None:
        values = idioms.assigned_values(mod, fn)
        for value in values.get(env.id, []):
            if _is_full_environ(mod, value):
                return "full", f"`{env.id}` is built from the whole environment (`{_src(mod, value)}`)"
        for value in _tuple_sources(mod, fn, env.id) + values.get(env.id, []):
            helper = _full_copy_helper(mod, project, value)
            if helper:
                return "helper", helper
    if isinstance(env, ast.Call):
        helper = _full_copy_helper(mod, project, env)
        if helper:
            return "helper", helper
    return "explicit", ""


def _tuple_sources(mod: PyModule, fn: FunctionNode, name: str) -> list[ast.AST]:
    """Values unpacked into `name` (`env, cwd = await self._context()`)."""
    out: list[ast.AST] = []
    for node in mod.walk(fn):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Tuple) and any(
                isinstance(e, ast.Name) and e.id == name for e in t.elts) for t in node.targets):
            out.append(node.value)
    return out


def _full_copy_helper(mod: PyModule, project: PyProject, value: ast.AST) -> str:
    """`helper` when `value` calls a project function that copies the whole `os.environ` somewhere in its body."""
    inner = value.value if isinstance(value, ast.Await) else value
    if not isinstance(inner, ast.Call):
        return ""
    for ref in project.resolve_call(mod, inner):
        for node in ref.module.walk(ref.node):
            if isinstance(node, ast.expr) and _is_full_environ(ref.module, node) and not _is_environ(ref.module, node):
                return f"`{ref.symbol}` builds the environment from the whole `os.environ` " \
                       f"(`{_src(ref.module, node)}`, line {node.lineno})"
    return ""


def _command_parts(mod: PyModule, call: ast.Call, name: str) -> list[ast.expr]:
    """The expressions that make up the command line."""
    if name in {"asyncio.create_subprocess_exec", "anyio.open_process", "anyio.run_process"} or \
            name.startswith(("os.exec", "os.spawn", "os.posix_spawn")):
        parts = [a.value if isinstance(a, ast.Starred) else a for a in call.args]
        return [p for p in parts if not (isinstance(p, ast.Constant) and isinstance(p.value, int))]
    first = call.args[0] if call.args else (mod.keyword(call, "args") or mod.keyword(call, "cmd")
                                             or mod.keyword(call, "command"))
    if first is None:
        return []
    return _flatten(first)


def _flatten(expr: ast.expr) -> list[ast.expr]:
    """`["git", *args]` and `["git"] + args` as their parts, program first."""
    if isinstance(expr, ast.List | ast.Tuple):
        return [e.value if isinstance(e, ast.Starred) else e for e in expr.elts]
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add) and isinstance(expr.left, ast.List | ast.Tuple):
        return [*_flatten(expr.left), *_flatten(expr.right)]
    return [expr]


_HARNESS_MADE = {"pathlib.Path.cwd", "Path.cwd", "os.getcwd", "time.time", "time.time_ns", "time.monotonic",
                 "tempfile.gettempdir", "tempfile.mkdtemp", "uuid.uuid4", "os.getpid", "platform.system",
                 "datetime.datetime.now", "datetime.now", "int", "str", "repr", "float", "round"}
"""Calls whose value the harness makes itself (its working directory, the clock, a fresh id), and conversions
that keep a value's origin (`int(time.time())`)."""


def _is_literal(mod: PyModule, fn: FunctionNode | None, expr: ast.AST, depth: int = 0) -> bool:
    """A value the harness makes itself: a constant, a list of constants, a name only ever bound to such (module
    constants included), or an f-string, `+` / `/` or conversion of such, with the working directory, the clock or
    a fresh id in it (`Path.cwd() / f"shot_{int(time.time())}.png"`). Nothing a model wrote can be in it."""
    if depth > 12:
        return False
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.List | ast.Tuple):
        return all(_is_literal(mod, fn, e, depth + 1) for e in expr.elts)
    if isinstance(expr, ast.Attribute) and mod.qualname(expr) in {"sys.executable", "shutil.which"}:
        return True
    if isinstance(expr, ast.JoinedStr):
        return all(_is_literal(mod, fn, v, depth + 1) for v in expr.values)
    if isinstance(expr, ast.FormattedValue):
        return _is_literal(mod, fn, expr.value, depth + 1)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add | ast.Div):
        return _is_literal(mod, fn, expr.left, depth + 1) and _is_literal(mod, fn, expr.right, depth + 1)
    if isinstance(expr, ast.Call):
        callee = mod.qualname(expr.func) or ""
        if isinstance(expr.func, ast.Attribute) and expr.func.attr == "strftime":
            callee, args = mod.qualname(expr.func.value.func) if isinstance(expr.func.value, ast.Call) else "", []
        else:
            args = [*expr.args, *(k.value for k in expr.keywords)]
        return callee in _HARNESS_MADE and all(_is_literal(mod, fn, a, depth + 1) for a in args)
    if isinstance(expr, ast.Name):
        if expr.id.isupper():
            return True
        if fn is None:
            return False
        values: list[ast.AST] = list(idioms.assigned_values(mod, fn).get(expr.id, []))
        # `for cmd in ["npx.cmd", "npx"]:` binds a literal too
        values.extend(node.iter for node in mod.walk(fn) if isinstance(node, ast.For | ast.comprehension)
                      and isinstance(node.target, ast.Name) and node.target.id == expr.id)
        return bool(values) and all(_is_literal(mod, fn, v, depth + 1) for v in values)
    return False


def _program_text(mod: PyModule, expr: ast.AST) -> str:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value.rsplit("/", 1)[-1]
    return "python" if mod.qualname(expr) == "sys.executable" else ""


def _is_shell(mod: PyModule, call: ast.Call, name: str) -> bool:
    if name in _SHELL_CALLS:
        return True
    flag = mod.keyword(call, "shell")
    return isinstance(flag, ast.Constant) and flag.value is True


def _model_command(mod: PyModule, project: PyProject, call: ast.Call, name: str, parts: list[ast.expr]) -> str:
    """Why the command is model-chosen, or `""` when that cannot be shown."""
    tainted = [p for p in parts if idioms.is_model_sourced(project, mod, p)]
    if not tainted:
        fn = mod.enclosing_function(call)
        if fn is None or not idioms.is_tool_function(mod, fn, project):
            return ""
        program = _program_text(mod, parts[0]) if parts else ""
        if _INTERPRETERS.match(program) and not all(_is_literal(mod, fn, p) for p in parts):
            return f"the tool `{fn.name}` runs a `{program}` script it was handed"
        return ""
    shown = _src(mod, tainted[0])
    if _is_shell(mod, call, name) or len(parts) == 1 or tainted[0] is parts[0]:
        return f"`{shown}` comes from the model's tool call"
    program = _program_text(mod, parts[0])
    if _INTERPRETERS.match(program):
        return f"`{program}` runs `{shown}`, which comes from the model's tool call"
    return ""


_TOOL_WORDS = ("tool_call", "function_call", "tool_use", "toolCall")
_CONTEXT_CACHE: dict[int, tuple[PyModule, bool]] = {}


def _module_handles_tools(mod: PyModule, project: PyProject) -> bool:
    """Whether the module visibly deals with model tool calls or defines tools (cached per module)."""
    hit = _CONTEXT_CACHE.get(id(mod))
    if hit is not None and hit[0] is mod:
        return hit[1]
    found = any(word in mod.source for word in _TOOL_WORDS) or any(
        idioms.is_tool_function(mod, f, project) or idioms.TOOL_DISPATCH_NAME.search(f.name) for f in mod.functions())
    if len(_CONTEXT_CACHE) > 8192:
        _CONTEXT_CACHE.clear()
    _CONTEXT_CACHE[id(mod)] = (mod, found)
    return found


def _reached_from_tools(mod: PyModule, project: PyProject, fn: FunctionNode) -> bool:
    """Whether `fn` sits in a tool-handling module, or a tool / dispatcher calls it within three hops."""
    if _module_handles_tools(mod, project):
        return True
    frontier: list[tuple[PyModule, FunctionNode]] = [(mod, fn)]
    seen = {id(fn)}
    for _ in range(3):
        nxt: list[tuple[PyModule, FunctionNode]] = []
        for fmod, f in frontier:
            for cmod, call in idioms.callers_of(project, f, fmod)[:20]:
                cfn = cmod.enclosing_function(call)
                if cfn is None or id(cfn) in seen:
                    continue
                if idioms.is_tool_function(cmod, cfn, project) or idioms.TOOL_DISPATCH_NAME.search(cfn.name) or \
                        _module_handles_tools(cmod, project):
                    return True
                seen.add(id(cfn))
                nxt.append((cmod, cfn))
        frontier = nxt
    return False


def _suspect_command(mod: PyModule, project: PyProject, call: ast.Call, name: str, parts: list[ast.expr]) -> str:
    """A reason to suspect the command is model-influenced although it was not traced, or `""`."""
    fn = mod.enclosing_function(call)
    if fn is None or not parts or all(_is_literal(mod, fn, p) for p in parts):
        return ""
    if not _reached_from_tools(mod, project, fn):
        return ""
    params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    if fn.args.vararg:
        params.add(fn.args.vararg.arg)
    program = parts[0]
    fixed_program = _is_literal(mod, fn, program) and not _INTERPRETERS.match(_program_text(mod, program))
    named = [n.id for n in subtree(program) if isinstance(n, ast.Name)
             and n.id in params and _COMMAND_PARAMS.match(n.id)]
    if named and not fixed_program:
        return f"`{fn.name}` runs whatever `{named[0]}` it is given"
    if _is_shell(mod, call, name):
        return f"`{fn.name}` runs a shell string built from `{_src(mod, parts[0])}`"
    return ""


_CODE_FLAGS = {"-c", "-lc", "-ic", "-e", "--eval", "-p", "--print", "-Command", "/c"}
_REQUEST_GLOBALS = {"flask.request", "quart.request", "bottle.request"}
_ROUTE_METHODS = {"get", "post", "put", "patch", "delete", "route", "api_route", "websocket", "api_view"}


def _route_of(fn: FunctionNode) -> str:
    """`POST /analysis/run` when `fn` is a web route handler (`@app.post("/x")`, `@router.route("/x")`), else ""."""
    for dec in fn.decorator_list:
        if not isinstance(dec, ast.Call) or not isinstance(dec.func, ast.Attribute) or \
                dec.func.attr not in _ROUTE_METHODS or not dec.args:
            continue
        first = dec.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value.startswith("/"):
            verb = dec.func.attr.upper() if dec.func.attr not in ("route", "api_route", "api_view") else "route"
            return f"{verb} {first.value}"
    return ""


def _route_command(mod: PyModule, call: ast.Call, name: str, parts: list[ast.expr]) -> tuple[str, str] | None:
    """(route, request value) when a web route handler runs a command or script taken from its request (the
    request body model, a query or form parameter) as the shell string, the program or an interpreter's code."""
    fn = mod.enclosing_function(call)
    route = _route_of(fn) if fn is not None else ""
    if fn is None or not route:
        return None
    params = {a.arg for a in [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]}
    # Flask / Quart / Bottle read the request from a global: `line = request.get_json()["line"]`
    for node in mod.walk(fn):
        if isinstance(node, ast.Assign) and any(
                isinstance(n, ast.Name) and (n.id in params or mod.qualname(n) in _REQUEST_GLOBALS)
                for n in subtree(node.value)):
            params.update(n.id for t in node.targets for n in subtree(t) if isinstance(n, ast.Name))
    interpreter = bool(parts) and bool(_INTERPRETERS.match(_program_text(mod, parts[0])))
    for index, part in enumerate(parts):
        if _is_literal(mod, fn, part) or not any(isinstance(n, ast.Name) and (
                n.id in params or mod.qualname(n) in _REQUEST_GLOBALS) for n in subtree(part)):
            continue
        before = parts[index - 1] if index else None
        code_flag = isinstance(before, ast.Constant) and before.value in _CODE_FLAGS
        if index == 0 or (interpreter and code_flag) or _is_shell(mod, call, name):
            return route, _src(mod, part)
    return None


@rule(CheckId.C6, lang="python", name="spawn-inherits-environment")
def spawn_inherits_environment(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a spawn of a model-chosen command that inherits the harness's whole environment: no `env=`,
    `env=None`, `os.environ` or a copy of it, or `os.system`/`os.popen`, which cannot take one. Every API key
    of the harness is then one `env` or `printenv` away from the transcript."""
    for call in _spawns(mod):
        name = mod.call_name(call)
        state, detail = _env_state(mod, project, call, name)
        if state not in {"missing", "full"}:
            continue
        parts = _command_parts(mod, call, name)
        if not parts:
            continue
        why = _model_command(mod, project, call, name, parts)
        if why:
            yield Hit(
                node=call,
                claim=f"a model-chosen command is spawned with the harness's whole environment: {detail}; {why}",
                consequence="the model (or a prompt injection it read) can print every API key and token of the "
                            "harness with `env` or `printenv`",
                direction="pass an explicit allow-list, e.g. `env={\"PATH\": os.environ[\"PATH\"], \"HOME\": "
                          "sandbox_home}`",
            )
            continue
        suspicion = _suspect_command(mod, project, call, name, parts)
        fn = mod.enclosing_function(call)
        routed = _route_command(mod, call, name, parts) if not suspicion else None
        if routed is not None:
            route, value = routed
            yield Hit(
                node=call, verdict=Verdict.SUSPECTED,
                claim=f"the web handler `{route}` runs `{value}` from its request with the process's whole "
                      f"environment: {detail}",
                consequence="whoever posts to this route (a model tool, a prompt injection it read) can print every "
                            "secret of the backend with `env` or `os.environ`",
                direction="pass an explicit allow-list, e.g. `env={\"PATH\": os.environ[\"PATH\"], \"HOME\": "
                          "sandbox_home}`",
                confirm_hint=f"verify which clients post to `{route}` and whether `{value}` can carry text written by "
                             "a model (a tool that forwards model-written code or commands)",
            )
            continue
        if suspicion and fn is not None:
            yield Hit(
                node=call, verdict=Verdict.SUSPECTED,
                claim=f"a command is spawned with the harness's whole environment: {detail}; {suspicion}",
                consequence="if the command comes from the model, every API key of the harness is readable with "
                            "`env` or `printenv`",
                direction="pass an explicit allow-list, e.g. `env={\"PATH\": os.environ[\"PATH\"], \"HOME\": "
                          "sandbox_home}`",
                confirm_hint=f"verify whether `{_src(mod, parts[0])}` can carry text from a model tool call "
                             f"(follow the callers of `{fn.name}`)",
            )


@rule(CheckId.C6, lang="python", name="spawn-env-from-full-copy")
def spawn_env_from_full_copy(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a spawn whose `env=` comes from a project helper that copies the whole `os.environ` on some path
    (often the default, when no allow-list is configured). The allow-list exists, but the default leaks every
    secret of the harness to the spawned command."""
    for call in _spawns(mod):
        name = mod.call_name(call)
        state, detail = _env_state(mod, project, call, name)
        if state != "helper":
            continue
        parts = _command_parts(mod, call, name)
        fn = mod.enclosing_function(call)
        if not parts or all(_is_literal(mod, fn, p) for p in parts):
            continue
        yield Hit(
            node=call, verdict=Verdict.SUSPECTED,
            claim=f"the spawned command's environment may be the whole `os.environ`: {detail}",
            consequence="on that path every API key of the harness is visible to the spawned command",
            direction="make the allow-list the default and copy only named variables from `os.environ`",
            confirm_hint="verify which branch of the helper runs by default and whether the spawned command can "
                         "come from the model",
        )
