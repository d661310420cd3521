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
