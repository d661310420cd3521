"""The same harness logic written in Python and in TypeScript lowers to the same IR shape.

The fact layer reads only the IR, so one query serves both languages only if both front ends agree. Each case
below is one program written twice, idiomatically but with the same names (the comparison is about lowering,
not about which library a program calls). `shape` keeps what a query reads (node kinds, call targets, literal
keys and values, nesting, function and parameter names) and drops lines. It also erases the differences
`ir.py` documents as the languages' own, each for the reason given beside it; where two programs cannot
lower alike, a test says so and why.
"""

from __future__ import annotations

from typing import Any

import pytest

from harness_audit.static.sem import ir
from harness_audit.static.sem.front_python import parse as parse_python
from harness_audit.static.sem.front_typescript import parse as parse_typescript

_SAME_OPERATOR = {"&&": "and", "||": "or", "!": "not", "===": "==", "!==": "!=", "yield*": "yield from"}
"""Operators keep their spelling in the IR; these are the same operator in the two languages."""


def shape(node: Any) -> Any:  # noqa: C901 - one case per IR kind
    """What a query sees of `node`, without lines and without the documented spelling differences."""
    if isinstance(node, list):
        return [shape(n) for n in node]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(node, ir.Function):
        params = node.params
        if node.kind == "method" and node.module.lang == "python" and params:
            params = params[1:]  # a Python method lists its receiver; a TS method's is implicit `this`
        return ("function", node.name, node.kind, node.is_async, node.is_generator,
                [(p.name, p.kind, shape(p.default)) for p in params], shape(node.body))
    if isinstance(node, ir.Class):
        ctor = node.methods.get("constructor")
        # fields a TS constructor declares as parameter properties are what Python assigns in `__init__`,
        # which `Class.fields` does not list: compared in their own test below
        declared = {p.name for p in ctor.params if p.kind == "field"} if ctor is not None else set[str]()
        return ("class", node.name, shape(node.bases), sorted(set(node.fields) - declared),
                {k: shape(v) for k, v in node.field_values.items()},
                {k: shape(m) for k, m in sorted(node.methods.items()) if k not in ("__init__", "constructor")})
    if node is None or isinstance(node, str | int | float | bool):
        return node
    if isinstance(node, ir.Name):
        return ("name", "this" if node.id == "self" else node.id)  # the receiver's two spellings
    if isinstance(node, ir.Call):
        args = shape(node.args)
        if node.kw:  # Python keyword arguments are what a TS options object says
            args.append(("obj", [(k, shape(v)) for k, v in node.kw]))
        return ("call", shape(node.func), args)  # `new C()` and Python's `C()` both construct
    if isinstance(node, ir.Op):
        return ("op", _SAME_OPERATOR.get(node.op, node.op), shape(node.operands))
    if isinstance(node, ir.Seq):
        return ("seq", shape(node.items))  # a Python tuple target is a TS array pattern
    if isinstance(node, ir.Obj):
        return ("obj", [(k if not isinstance(k, ir.Expr) else shape(k), shape(v)) for k, v in node.items])
    if isinstance(node, ir.Assign):
        # `let`/`const` have no Python spelling; annotations are each language's own type syntax
        return ("assign", node.op, shape(node.targets), shape(node.value))
    if isinstance(node, ir.Handler):
        return ("handler", node.name, shape(node.body))  # a TS catch has no types: it catches everything
    if isinstance(node, ir.Switch):
        cases = []
        for pattern, body in node.cases:
            if body and isinstance(body[-1], ir.Jump) and body[-1].kind == "break" and body[-1].label is None:
                body = body[:-1]  # a TS case ends with `break` where a Python case simply ends
            cases.append((shape(pattern), shape(body)))
        return ("switch", shape(node.subject), cases)
    if isinstance(node, ir.Loop):
        return ("loop", node.kind, node.is_async, shape(node.target), shape(node.iter), shape(node.test),
                shape(node.body), shape(node.orelse))
    if isinstance(node, ir.FuncExpr):
        return ("funcexpr", shape(node.fn))
    if isinstance(node, ir.Def):
        return ("def", shape(node.fn) if node.fn is not None else shape(node.cls))
    if isinstance(node, ir.Tmpl):
        return ("tmpl", shape(node.parts))
    fields = [shape(getattr(node, f)) for f in type(node).__slots__ if f not in ("line", "end")]
    return (type(node).__name__.lower(), *fields)


def _both(python: str, typescript: str) -> tuple[ir.Module, ir.Module]:
    py, ts = parse_python("case.py", python), parse_typescript("case.ts", typescript)
    assert py.error is None and ts.error is None
    return py, ts


def _functions(mod: ir.Module) -> dict[str, Any]:
    # constructors are named by each language (`__init__` / `constructor`): compared on their own below
    return {f.qualname: shape(f) for f in mod.functions[1:] if f.name not in ("__init__", "constructor")}


CASES: dict[str, tuple[str, str]] = {
    "tool loop appends a result for every call, error or not": ('''
async def run_tools(calls, registry, store):
    for call in calls:
        tool = registry[call.name]
        try:
            result = await tool(call.arguments)
            store.add({"role": "tool", "tool_call_id": call.id, "content": result})
        except Exception as err:
            store.add({"role": "tool", "tool_call_id": call.id, "content": f"error: {err}"})
    return store
''', '''
async function run_tools(calls, registry, store) {
  for (const call of calls) {
    const tool = registry[call.name];
    try {
      const result = await tool(call.arguments);
      store.add({ role: "tool", tool_call_id: call.id, content: result });
    } catch (err) {
      store.add({ role: "tool", tool_call_id: call.id, content: `error: ${err}` });
    }
  }
  return store;
}
'''),
    "retry loop rethrows after the last attempt": ('''
async def call_with_retry(client, request, attempts=3):
    attempt = 0
    while attempt < attempts:
        try:
            return await client.send(request)
        except Exception as err:
            attempt += 1
            if attempt >= attempts:
                raise err
            await sleep(2 ** attempt)
''', '''
async function call_with_retry(client, request, attempts = 3) {
  let attempt = 0;
  while (attempt < attempts) {
    try {
      return await client.send(request);
    } catch (err) {
      attempt++;
      if (attempt >= attempts) {
        throw err;
      }
      await sleep(2 ** attempt);
    }
  }
}
'''),
    "a C-style for is the while loop it means": ('''
def drain(queue, limit):
    i = 0
    while i < limit:
        queue.pop()
        i += 1
''', '''
function drain(queue, limit) {
  for (let i = 0; i < limit; i++) {
    queue.pop();
  }
}
'''),
    "client class holds its client in a field": ('''
class Agent:
    def __init__(self, client: OpenAI):
        self.client = client

    async def step(self, messages):
        reply = await self.client.complete(messages)
        return reply.text
''', '''
class Agent {
  constructor(private client: OpenAI) {}

  async step(messages: Message[]) {
    const reply = await this.client.complete(messages);
    return reply.text;
  }
}
'''),
    "message literal with a nested content part": ('''
def user_message(text):
    return {"role": "user", "content": [{"type": "text", "text": text}]}
''', '''
function user_message(text: string) {
  return { role: "user", content: [{ type: "text", text }] };
}
'''),
    "destructured call result": ('''
async def turn(messages, totals):
    reply, usage = await call_model(messages)
    totals.add(usage)
    return reply
''', '''
async function turn(messages, totals) {
  const [reply, usage] = await call_model(messages);
  totals.add(usage);
  return reply;
}
'''),
    "model request: keyword arguments and an options object": ('''
async def ask(client, messages, tools):
    response = await client.chat.completions.create(model=MODEL, messages=messages, tools=tools, timeout=30)
    return response.choices[0].message
''', '''
async function ask(client, messages, tools) {
  const response = await client.chat.completions.create({ model: MODEL, messages, tools, timeout: 30 });
  return response.choices[0].message;
}
'''),
    "event routing: match and switch": ('''
def route(event, handlers):
    match event.type:
        case "tool_call":
            handlers.tool(event)
        case "message":
            handlers.message(event)
        case _:
            handlers.unknown(event)
''', '''
function route(event, handlers) {
  switch (event.type) {
    case "tool_call":
      handlers.tool(event);
      break;
    case "message":
      handlers.message(event);
      break;
    default:
      handlers.unknown(event);
  }
}
'''),
    "streaming generator over an async iterator": ('''
async def stream_text(stream):
    async for chunk in stream:
        if chunk.delta:
            yield chunk.delta
''', '''
async function* stream_text(stream) {
  for await (const chunk of stream) {
    if (chunk.delta) {
      yield chunk.delta;
    }
  }
}
'''),
    "callback filters the history": ('''
def visible(messages):
    return keep(messages, lambda m: m.role != "system" and not m.hidden)
''', '''
function visible(messages) {
  return keep(messages, (m) => m.role !== "system" && !m.hidden);
}
'''),
    "cancellable turn closes its session on every path": ('''
async def run_turn(session, request, signal=None):
    try:
        if signal and signal.aborted:
            return None
        reply = await session.send(request) if request else None
        return reply
    finally:
        session.close()
''', '''
async function run_turn(session, request, signal = null) {
  try {
    if (signal && signal.aborted) {
      return null;
    }
    const reply = request ? await session.send(request) : null;
    return reply;
  } finally {
    session.close();
  }
}
'''),
    "runner subclass with a class-level limit": ('''
class ToolRunner(Runner):
    max_steps: int = 8

    def run(self, calls):
        results = []
        for call in calls:
            results.append(self.execute(call))
        return results
''', '''
class ToolRunner extends Runner {
  max_steps: number = 8;

  run(calls) {
    const results = [];
    for (const call of calls) {
      results.append(this.execute(call));
    }
    return results;
  }
}
'''),
}


@pytest.mark.parametrize("case", list(CASES))
def test_same_program_lowers_to_the_same_shape(case: str) -> None:
    py, ts = _both(*CASES[case])
    assert _functions(py) == _functions(ts)
    assert [shape(c) for c in py.classes] == [shape(c) for c in ts.classes]
    assert shape(py.body.body) == shape(ts.body.body)


def test_constructor_parameter_property_is_the_assignment_python_writes() -> None:
    py, ts = _both(*CASES["client class holds its client in a field"])
    py_init, ts_ctor = py.classes[0].methods["__init__"], ts.classes[0].methods["constructor"]
    assert shape(py_init.body) == shape(ts_ctor.body)  # `this.client = client` in both
    # Where they differ: TS declares the field, Python only assigns it in `__init__` (the fact layer reads
    # both: `Class.fields` and the constructor's assignments to the receiver)
    assert ts.classes[0].fields == {"client": "OpenAI"} and py.classes[0].fields == {}
    assert [(p.name, p.kind) for p in ts_ctor.params] == [("client", "field")]


def test_imports_bind_the_same_names_from_differently_spelled_sources() -> None:
    py, ts = _both("from .tools import search as find\nimport json\nfrom openai import OpenAI\n",
                   'import { search as find } from "./tools";\nimport * as json from "json";\n'
                   'import { OpenAI } from "openai";\n')
    # a module source is spelled by each language's rules (`.tools` / `./tools`): names and members agree
    assert {k: v.name for k, v in py.imports.items()} == {k: v.name for k, v in ts.imports.items()}


def test_where_the_languages_cannot_lower_alike() -> None:
    # A Python `for i in range(n)` iterates a range object; a TS counting loop is a C-style `for`, which
    # lowers to the `while` it means. The two are the same loop only to an analysis that knows `range`.
    py, ts = _both("def f(n):\n    for i in range(n):\n        step(i)\n",
                   "function f(n) {\n  for (let i = 0; i < n; i++) {\n    step(i);\n  }\n}\n")
    py_loop, ts_init, ts_loop = py.functions[1].body[0], *ts.functions[1].body
    assert isinstance(py_loop, ir.Loop) and py_loop.kind == "for"
    assert isinstance(ts_init, ir.Assign) and isinstance(ts_loop, ir.Loop) and ts_loop.kind == "while"
    # A comprehension is a `Comp`; its TS spelling is a call of `map` with an arrow function.
    py, ts = _both("def texts(msgs):\n    return [m.text for m in msgs]\n",
                   "function texts(msgs) {\n  return msgs.map((m) => m.text);\n}\n")
    py_ret, ts_ret = py.functions[1].body[0], ts.functions[1].body[0]
    assert isinstance(py_ret, ir.Return) and isinstance(py_ret.value, ir.Comp)
    assert isinstance(ts_ret, ir.Return) and isinstance(ts_ret.value, ir.Call)
    # A Python `with` is a `With`; TS has no such statement (this grammar has no `using`): the same cleanup
    # is a `try`/`finally`, which is what the cancellable-turn case compares.
    py = parse_python("w.py", "def f(path):\n    with open(path) as fh:\n        return fh.read()\n")
    assert isinstance(py.functions[1].body[0], ir.With)
