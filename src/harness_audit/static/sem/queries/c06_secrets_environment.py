"""C6 · Secrets and ambient environment: a tool's process inherits the harness's whole environment."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import ir
from harness_audit.static.sem.facts import expr_chain
from harness_audit.static.sem.queries import Context, Report, query


@query(CheckId.C6, name="tool-spawn-inherits-environment")
def spawn_inherits_env(ctx: Context) -> Iterator[Report]:
    """A process started on a tool's behalf gets no explicit environment (or a copy of the whole one), so
    every key the harness holds is one `env` away from the transcript."""
    reach = ctx.roles.tool_reach
    for site in ctx.roles.spawns:
        if site.fn.index not in reach:
            continue
        call = site.node
        assert isinstance(call, ir.Call)
        if _fixed_command(call) and not _fed_input(site.fn, call):
            continue
        if _runs_elsewhere(ctx, site.fn, call):
            continue
        env = _env_given(call)
        if env is not None and not _copies_environ(env):
            continue
        how = "with no `env`" if env is None else "with a copy of the whole environment"
        yield Report(
            site=site,
            claim=f"A process run for a tool is started {how}: it inherits every variable of the harness, API "
                  "keys included.",
            consequence="A model-generated command (`env`, `printenv`, a script that posts its environment) puts "
                        "the harness's secrets into the transcript or sends them out.",
            direction="Pass an explicit allow-list (`env={'PATH': ..., 'HOME': sandbox_home}` / "
                      "`env: { PATH: process.env.PATH }`) and scan captured output for secrets.")


def _fixed_command(call: ir.Call) -> bool:
    """The command is written out in full at the call (`run(["cmd.exe", "/c", "echo", "%USERPROFILE%"])`,
    `execSync("git rev-parse HEAD")`): every part of it is a string literal, so nothing the model wrote runs
    and the inherited environment is exposed to no model-chosen program. An options object is not part of
    the command; a command with any variable part (a name, a hole in a template) is not fixed."""
    parts = [a for a in call.args if not isinstance(a, ir.Obj)]
    args_kw = call.keyword("args")
    if args_kw is not None:
        parts.append(args_kw)
    return bool(parts) and all(_literal_text(p) for p in parts)


_REMOTE = frozenset({"adb", "hdc", "ssh", "kubectl", "docker", "podman"})
"""Programs that run the command they are given on another machine, device or container, whose environment is
not the harness's (`adb shell input text …`, `ssh host …`, `docker exec box …`)."""


def _runs_elsewhere(ctx: Context, fn: ir.Function, call: ir.Call) -> bool:
    """The program is one of `_REMOTE`, chosen by the harness (a literal, or a name every value of which is one,
    a parameter of a function no tool runs, such as the factory a tool is defined in, aside), and no shell runs it
    here: what the model writes runs over there, and the harness's variables are not in its environment."""
    shell = call.keyword("shell")
    if shell is not None and not (isinstance(shell, ir.Lit) and not shell.value):
        return False
    first = call.args[0] if call.args else None
    if isinstance(first, ir.Seq):
        first = first.items[0] if first.items else None
    names = _program_names(ctx, fn, first)
    return bool(names) and all(n.replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".exe") in _REMOTE for n in names)


def _program_names(ctx: Context, fn: ir.Function, e: ir.Expr | None) -> list[str]:
    """The literal values a program expression may hold, or [] when one of them is not a literal chosen by the
    harness."""
    if isinstance(e, ir.Lit) and isinstance(e.value, str):
        return [e.value]
    if not isinstance(e, ir.Name):
        return []
    scope: ir.Function | None = fn
    while scope is not None:
        binds = ctx.facts.bindings(scope).get(e.id)
        if binds:
            out: list[str] = []
            for b in binds:
                if b.kind == "param" and scope.index not in ctx.roles.tool_reach and scope is not fn:
                    continue  # configuration of the function the tool is defined in
                if b.kind != "value" or not (isinstance(b.expr, ir.Lit) and isinstance(b.expr.value, str)):
                    return []
                out.append(b.expr.value)
            return out
        scope = scope.parent
    return []


def _fed_input(fn: ir.Function, call: ir.Call) -> bool:
    """The process may read text the harness hands it after start: an `input` given at the call, a handle
    kept in a field (a shell session other methods write to), or any `stdin` touched in the function."""
    if call.keyword("input") is not None or any(isinstance(a, ir.Obj) and a.get("input") is not None
                                                for a in call.args):
        return True
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Attr) and node.name == "stdin":
            return True
        if isinstance(node, ir.Assign) and node.value is not None and any(n is call for n in ir.walk(node.value)) \
                and not all(isinstance(t, ir.Name) for t in node.targets):
            return True
    return False


def _literal_text(e: ir.Expr) -> bool:
    if isinstance(e, ir.Lit):
        return isinstance(e.value, str)
    if isinstance(e, ir.Tmpl):
        return all(isinstance(p, str) for p in e.parts)
    if isinstance(e, ir.Seq):
        return all(_literal_text(i) for i in e.items)
    return False


def _env_given(call: ir.Call) -> ir.Expr | None:
    env = call.keyword("env")
    if env is not None:
        return env
    for a in call.args:
        if isinstance(a, ir.Obj):
            got = a.get("env")
            if got is not None:
                return got
    return None


def _copies_environ(env: ir.Expr) -> bool:
    for node in ir.walk(env):
        if isinstance(node, ir.Name | ir.Attr) and expr_chain(node) in ("os.environ", "process.env"):
            if env is node:
                return True
            if isinstance(env, ir.Obj) and any(k is None and v is node for k, v in env.items):
                return True
            if isinstance(env, ir.Call) and expr_chain(env.func) in ("dict", "os.environ.copy", "Object.assign"):
                return True
        if isinstance(node, ir.Call) and expr_chain(node.func) in ("os.environ.copy",) and env is node:
            return True
    return False
