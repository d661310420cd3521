"""C14 · Prompt prefix determinism: a clock, a random value or the host's state flows into the prefix."""

from __future__ import annotations

import re
from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.facts import Ext, Fn, Inst, expr_chain
from harness_audit.static.sem.queries import Context, Report, query
from harness_audit.static.sem.roles import Site

_PREFIX_KWARGS = frozenset({"system", "instructions", "system_prompt", "systemPrompt", "systemInstruction",
                            "system_instruction", "system_message", "systemMessage", "preamble"})
_VOLATILE = {apis.TIME_NOW: "the current time", apis.RANDOM: "a random value", apis.ENV: "the host's state"}
_BUDGET = 400


@query(CheckId.C14, name="volatile-value-in-prompt-prefix")
def volatile_in_prefix(ctx: Context) -> Iterator[Report]:
    """The system prompt or instructions sent with every request are built from the clock, a random value
    or the host's state (cwd, pid, hostname), so the first bytes differ between requests or runs. A calendar day
    reaching the prompt through a call made once per object (`if self._chat is None:` that assigns `self._chat`)
    is the same for every request of the run."""
    for fn, sink, what in _prefix_sinks(ctx):
        found = _volatile_source(ctx, fn, sink)
        if found is None:
            continue
        src_fn, src_call, kind = found
        yield Report(
            site=Site(src_fn, src_call), also_at=(Site(fn, sink),),
            claim=f"{_VOLATILE[kind].capitalize()} is read here and ends up in the {what} sent with every model "
                  "request.",
            consequence="The prompt's first bytes change from request to request (or run to run), so the "
                        "provider's prefix cache never hits and every request is billed at the full input price.",
            direction="Keep the prefix byte-stable: move the time (or other volatile value) into the last user "
                      "message, or round it to a value that does not change within a session.")


def _prefix_sinks(ctx: Context) -> Iterator[tuple[ir.Function, ir.Expr, str]]:
    for fn in ctx.facts.functions:
        for node in ir.walk_block(fn.body):
            if isinstance(node, ir.Obj):
                role = node.get("role")
                if isinstance(role, ir.Lit) and role.value in ("system", "developer"):
                    content = node.get("content")
                    if content is not None:
                        yield fn, content, "system message"
            elif isinstance(node, ir.Call):
                options = [(k, v) for a in node.args if isinstance(a, ir.Obj) for k, v in a.items if isinstance(k, str)]
                for k, v in (*node.kw, *options):
                    if k in _PREFIX_KWARGS and ctx.roles.reaches_model(fn, node):
                        yield fn, v, f"`{k}`"
                if node.args and _system_message_class(ctx, fn, node):
                    yield fn, node.args[0], "system message"
                for k, v in node.kw:
                    if k == "content" and _system_message_class(ctx, fn, node):
                        yield fn, v, "system message"


def _system_message_class(ctx: Context, fn: ir.Function, call: ir.Call) -> bool:
    """A constructor of a system-message type (`SystemMessage(...)`, `ChatMessage.system(...)`)."""
    for v in ctx.facts.values(fn, call.func):
        name = v.plain if isinstance(v, Ext) else (v.fn.qualname if isinstance(v, Fn) else "")
        if name.rsplit(".", 1)[-1] in ("SystemMessage", "SystemMessagePromptTemplate", "system") and \
                ("Message" in name or "message" in name.lower()):
            return True
    return False


def _volatile_source(ctx: Context, fn: ir.Function, e: ir.Expr) -> tuple[ir.Function, ir.Call, str] | None:
    """A call with a volatile effect that flows into `e`: through locals, string building, project functions'
    returns and the fields of the receiving instance."""
    todo: list[tuple[ir.Function, ir.Expr, int, bool]] = [(fn, e, 0, False)]
    seen: set[int] = set()
    spent = 0
    while todo and spent < _BUDGET:
        cur_fn, cur, depth, once = todo.pop()
        if id(cur) in seen or depth > 8:
            continue
        seen.add(id(cur))
        spent += 1
        for node in ir.walk(cur):
            if isinstance(node, ir.Call):
                for eff in ctx.sums.direct(cur_fn, node):
                    if eff.kind in _VOLATILE and not eff.by_name and \
                            not (once and eff.kind == apis.TIME_NOW and _day_granular(cur_fn, node)):
                        return cur_fn, node, eff.kind
                inner = once or _memo_guarded(cur_fn, node)
                for c in ctx.facts.callees(cur_fn, node):
                    if isinstance(c, ir.Function) and c.kind != "module":
                        for r in ir.walk_block(c.body):
                            if isinstance(r, ir.Return) and r.value is not None:
                                todo.append((c, r.value, depth + 1, inner))
            elif isinstance(node, ir.Name):
                for b in ctx.facts.bindings(cur_fn).get(node.id, []):
                    if b.expr is not None:
                        todo.append((cur_fn, b.expr, depth + 1, once))
                    elif b.kind == "param" and b.param is not None:
                        for caller, arg in ctx.facts.arguments_for(cur_fn, b.param):
                            todo.append((caller, arg, depth + 1, once))
            elif isinstance(node, ir.Attr) and isinstance(node.obj, ir.Name) and node.obj.id in ("self", "this"):
                for v in ctx.facts.values(cur_fn, node.obj):
                    if isinstance(v, Inst):
                        for c in ctx.facts.bases(v.cls):
                            for m in c.methods.values():
                                for st in ir.walk_block(m.body):
                                    if isinstance(st, ir.Assign) and st.value is not None and any(
                                            isinstance(t, ir.Attr) and t.name == node.name and
                                            expr_chain(t.obj) in ("self", "this") for t in st.targets):
                                        todo.append((m, st.value, depth + 1, once))
    return None


_SUB_DAY = re.compile(r"%[HIMSfcXsTRrpkl]")
"""strftime directives finer than a day (hour, minute, second, the locale's date-and-time)."""


def _day_granular(fn: ir.Function, call: ir.Call) -> bool:
    """Whether the clock read is used as a calendar day: `now().strftime("%B %d, %Y")` with no hour, minute or
    second, or `now().date()`."""
    for node in ir.walk_block(fn.body):
        if isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and node.func.obj is call:
            if node.func.name == "date" and not node.args:
                return True
            arg = node.args[0] if node.args else None
            return node.func.name == "strftime" and isinstance(arg, ir.Lit) and isinstance(arg.value, str) and \
                _SUB_DAY.search(arg.value) is None
    return False


def _memo_guarded(fn: ir.Function, call: ir.Call) -> bool:
    """Whether `call` runs inside `if X is None:` whose block assigns `X`: once per object (`if self._chat is
    None: prompt = build_prompt(); self._chat = Chat(prompt)`), not once per request."""
    for node in ir.walk_block(fn.body):
        if not (isinstance(node, ir.If) and isinstance(node.test, ir.Op) and node.test.op in ("is", "===", "==")
                and len(node.test.operands) == 2 and isinstance(node.test.operands[1], ir.Lit)
                and node.test.operands[1].value is None):
            continue
        held = expr_chain(node.test.operands[0])
        if held and any(isinstance(st, ir.Assign) and any(expr_chain(t) == held for t in st.targets)
                        for st in node.body) and any(n is call for st in node.body for n in ir.walk(st)):
            return True
    return False
