"""The Python front end: tree-sitter-python lowered into the IR, whatever Python runs the audit."""

from __future__ import annotations

from harness_audit.static.sem import ir
from harness_audit.static.sem.front_python import parse

SOURCE = '''\
import json as j
from .tools import run_tool as rt, Registry

type Alias = list[int]


class Agent[T](Base):
    retries: int = 3

    def __init__(self, client: "OpenAI") -> None:
        self.client = client

    async def step(self, messages, *args, limit=5, **kw):
        try:
            reply = await self.client.chat.completions.create(model="m", messages=messages, **kw)
        except* (ValueError, KeyError) as eg:
            raise
        for call in reply.choices[0].message.tool_calls or []:
            args = j.loads(call.function.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": f"ok {args!r}"})
        return [m for m in messages if m]
'''


def _fn(mod: ir.Module, qualname: str) -> ir.Function:
    return next(f for f in mod.functions if f.qualname == qualname)


def test_lowers_312_syntax_classes_methods_imports() -> None:
    mod = parse("agent.py", SOURCE)
    assert mod.error is None
    assert {k: (v.source, v.name) for k, v in mod.imports.items()} == {
        "j": ("json", "*"), "rt": (".tools", "run_tool"), "Registry": (".tools", "Registry")}
    (cls,) = mod.classes
    assert cls.qualname == "Agent" and isinstance(cls.bases[0], ir.Name) and cls.bases[0].id == "Base"
    assert cls.fields == {"retries": "int"} and set(cls.methods) == {"__init__", "step"}
    step = _fn(mod, "Agent.step")
    assert step.is_async and step.cls is cls and step.kind == "method"
    assert [(p.name, p.kind) for p in step.params] == [("self", "pos"), ("messages", "pos"), ("args", "star"),
                                                       ("limit", "pos"), ("kw", "kw")]
    init = _fn(mod, "Agent.__init__")
    assert init.params[1].type == '"OpenAI"'


def test_calls_try_handlers_loops_and_literals() -> None:
    mod = parse("agent.py", SOURCE)
    step = _fn(mod, "Agent.step")
    tr, loop, ret = step.body
    assert isinstance(tr, ir.Try) and isinstance(loop, ir.Loop) and isinstance(ret, ir.Return)
    (handler,) = tr.handlers
    assert handler.name == "eg" and [t.id for t in handler.types if isinstance(t, ir.Name)] == ["ValueError", "KeyError"]
    assign = tr.body[0]
    assert isinstance(assign, ir.Assign) and isinstance(assign.value, ir.Await)
    call = assign.value.value
    assert isinstance(call, ir.Call) and isinstance(call.func, ir.Attr) and call.func.name == "create"
    assert [k for k, _ in call.kw] == ["model", "messages", "**"] and call.line == 15
    append = loop.body[1]
    assert isinstance(append, ir.ExprStmt) and isinstance(append.value, ir.Call)
    msg = append.value.args[0]
    assert isinstance(msg, ir.Obj) and isinstance(msg.get("role"), ir.Lit) and isinstance(msg.get("content"), ir.Tmpl)
    assert isinstance(ret.value, ir.Comp)


def test_broken_and_hostile_files_lower_as_far_as_they_parse() -> None:
    broken = parse("b.py", "def ok():\n    return 1\n\ndef bad(:\n    pass\n")
    assert broken.error is not None and broken.error.startswith("syntax error at line")
    assert any(f.name == "ok" for f in broken.functions)
    deep = parse("d.py", "x = f" + "()" * 3000 + "\n")
    assert deep.error is None or "deeply" in deep.error  # lowered or listed, never a crash
    assert parse("e.py", "").functions[0].kind == "module"
