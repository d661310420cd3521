"""The TypeScript/JavaScript front end: TS, TSX and JS (ESM and CommonJS) lowered into the same IR as Python."""

from __future__ import annotations

from harness_audit.static.sem import ir
from harness_audit.static.sem.front_typescript import parse

AGENT = '''\
import OpenAI, { type ChatMessage as Msg, Tool } from "openai";
import * as fs from "node:fs";
import type { Store } from "./store";

export interface Deps extends Base<T> {
  client: OpenAI;
  store?: Store;
  complete(messages: Msg[]): Promise<Reply>;
}

export class Agent extends BaseAgent implements Runner, Closeable {
  private retries: number = 3;
  static instances = 0;
  onEvent = async (e: Ev) => this.log(e);

  constructor(private readonly client: OpenAI, public store?: Store, name = "agent") {
    super(name);
  }

  get model(): string { return this.settings.model; }
  set model(value: string) { this.settings.model = value; }
  static create(): Agent { return new Agent(new OpenAI()); }

  async run(messages: Msg[], { signal, limit = 5 }: RunOptions = {}, ...rest: unknown[]): Promise<string> {
    for (let turn = 0; turn < limit; turn++) {
      const reply = await this.client.chat.completions.create({ model: this.model, messages, signal });
      const calls = reply.choices[0]?.message.tool_calls ?? [];
      if (calls.length === 0) return reply.choices[0].message.content!;
      for (const call of calls) {
        try {
          const args = JSON.parse(call.function.arguments) as Args;
          messages.push({ role: "tool", tool_call_id: call.id, content: `ok ${args.name}` });
        } catch (err) {
          messages.push({ role: "tool", tool_call_id: call.id, content: String(err) });
        } finally {
          this.store?.save(messages);
        }
      }
    }
    throw new Error("turn limit");
  }

  async *stream(): AsyncGenerator<string> {
    yield* this.client.stream();
  }
}
'''


def _fn(mod: ir.Module, qualname: str) -> ir.Function:
    return next(f for f in mod.functions if f.qualname == qualname)


def _dotted(e: ir.Expr | None) -> str:
    if isinstance(e, ir.Attr):
        return f"{_dotted(e.obj)}.{e.name}"
    if isinstance(e, ir.Name):
        return e.id
    return type(e).__name__


def _imports(mod: ir.Module) -> dict[str, tuple[str, str]]:
    return {k: (v.source, v.name) for k, v in mod.imports.items()}


def test_es_imports_type_only_included() -> None:
    mod = parse("agent.ts", AGENT)
    assert mod.error is None and mod.lang == "typescript"
    assert _imports(mod) == {"OpenAI": ("openai", "default"), "Msg": ("openai", "ChatMessage"),
                             "Tool": ("openai", "Tool"), "fs": ("node:fs", "*"), "Store": ("./store", "Store")}
    assert [type(s).__name__ for s in mod.body.body] == ["Def", "Def"]  # imports bind names, run nothing


def test_class_bases_fields_methods_and_implements() -> None:
    mod = parse("agent.ts", AGENT)
    deps, agent = mod.classes
    assert deps.kind == "interface" and _dotted(deps.bases[0]) == "Base"
    assert deps.fields == {"client": "OpenAI", "store": "Store"}
    complete = deps.methods["complete"]
    assert complete.body == [] and complete.returns == "Promise<Reply>" and complete.kind == "method"
    assert agent.kind == "class" and [_dotted(b) for b in agent.bases] == ["BaseAgent"]
    assert [_dotted(b) for b in agent.implements] == ["Runner", "Closeable"]  # implements is not a base
    assert agent.fields == {"retries": "number", "instances": None, "client": "OpenAI", "store": "Store"}
    assert isinstance(agent.field_values["retries"], ir.Lit) and agent.field_values["retries"].value == 3
    assert set(agent.methods) == {"onEvent", "constructor", "model", "create", "run", "stream"}
    assert mod.exports == {"Deps": "Deps", "Agent": "Agent"}


def test_constructor_parameter_properties_are_params_fields_and_assignments() -> None:
    mod = parse("agent.ts", AGENT)
    ctor = _fn(mod, "Agent.constructor")
    assert ctor.kind == "method" and ctor.cls is mod.classes[1]
    assert [(p.name, p.kind, p.type) for p in ctor.params] == [("client", "field", "OpenAI"),
                                                                ("store", "field", "Store"), ("name", "pos", None)]
    default = ctor.params[2].default
    assert isinstance(default, ir.Lit) and default.value == "agent"
    # `private readonly client` means `this.client = client`, before the body runs
    first, second, call = ctor.body
    assert isinstance(first, ir.Assign) and _dotted(first.targets[0]) == "this.client"
    assert isinstance(first.value, ir.Name) and first.value.id == "client" and first.line == 16
    assert isinstance(second, ir.Assign) and _dotted(second.targets[0]) == "this.store"
    assert isinstance(call, ir.ExprStmt) and isinstance(call.value, ir.Call) and _dotted(call.value.func) == "super"


def test_methods_accessors_static_generators_and_field_functions() -> None:
    mod = parse("agent.ts", AGENT)
    run = _fn(mod, "Agent.run")
    assert run.is_async and not run.is_generator and run.returns == "Promise<string>"
    assert [(p.name, p.kind) for p in run.params] == [("messages", "pos"), ("{ signal, limit = 5 }", "pattern"),
                                                      ("rest", "star")]
    pattern = run.params[1]
    assert pattern.names == ("signal", "limit") and pattern.type == "RunOptions"
    assert isinstance(pattern.pattern, ir.Obj) and isinstance(pattern.default, ir.Obj)
    getter, setter = (f for f in mod.functions if f.qualname == "Agent.model")
    assert [_dotted(d) for d in getter.decorators] == ["property"]
    assert [_dotted(d) for d in setter.decorators] == ["model.setter"]
    assert mod.classes[1].methods["model"] is getter
    assert [_dotted(d) for d in _fn(mod, "Agent.create").decorators] == ["staticmethod"]
    stream = _fn(mod, "Agent.stream")
    assert stream.is_async and stream.is_generator
    (stmt,) = stream.body
    assert isinstance(stmt, ir.ExprStmt) and isinstance(stmt.value, ir.Op) and stmt.value.op == "yield*"
    on_event = _fn(mod, "Agent.onEvent")  # a field holding an arrow is a method whose `this` is the instance
    assert on_event.kind == "method" and on_event.cls is mod.classes[1] and on_event.is_async
    assert isinstance(on_event.expr_body, ir.Call) and isinstance(on_event.body[0], ir.Return)
    static = parse("s.ts", "class A { static make = () => new A(); }")
    assert [_dotted(d) for d in _fn(static, "A.make").decorators] == ["staticmethod"]


def test_c_style_for_loop_try_catch_finally_and_literals() -> None:
    mod = parse("agent.ts", AGENT)
    run = _fn(mod, "Agent.run")
    init, loop, throw = run.body
    assert isinstance(init, ir.Assign) and init.decl == "let" and _dotted(init.targets[0]) == "turn"
    assert isinstance(loop, ir.Loop) and loop.kind == "while" and isinstance(loop.test, ir.Op)
    assert loop.test.op == "<"
    create, calls, early, inner, update = loop.body
    assert isinstance(update, ir.Assign) and update.op == "+=" and isinstance(update.value, ir.Lit)
    assert isinstance(create, ir.Assign) and isinstance(create.value, ir.Await)
    call = create.value.value
    assert isinstance(call, ir.Call) and _dotted(call.func) == "this.client.chat.completions.create"
    assert not call.kw and isinstance(call.args[0], ir.Obj)
    assert [k for k, _ in call.args[0].items] == ["model", "messages", "signal"]  # shorthand keys too
    assert isinstance(calls, ir.Assign) and isinstance(calls.value, ir.Op) and calls.value.op == "??"
    assert isinstance(early, ir.If) and isinstance(early.body[0], ir.Return)
    returned = early.body[0].value  # `x!` is transparent
    assert isinstance(returned, ir.Attr) and returned.name == "content"
    assert isinstance(inner, ir.Loop) and inner.kind == "for" and _dotted(inner.target) == "call"
    (tr,) = inner.body
    assert isinstance(tr, ir.Try) and len(tr.handlers) == 1 and tr.orelse == []
    handler = tr.handlers[0]
    assert handler.types == [] and handler.name == "err"  # a catch catches everything
    assert isinstance(tr.final[0], ir.ExprStmt)
    parsed, push = tr.body
    assert isinstance(parsed, ir.Assign) and isinstance(parsed.value, ir.Call)  # `as Args` is transparent
    assert isinstance(push, ir.ExprStmt) and isinstance(push.value, ir.Call)
    msg = push.value.args[0]
    assert isinstance(msg, ir.Obj) and isinstance(msg.get("role"), ir.Lit) and isinstance(msg.get("content"), ir.Tmpl)
    content = msg.get("content")
    assert isinstance(content, ir.Tmpl) and content.parts[0] == "ok " and _dotted(content.parts[1]) == "args.name"
    assert isinstance(throw, ir.Raise) and isinstance(throw.value, ir.Call) and throw.value.new


def test_loops_of_each_kind_labels_and_jumps() -> None:
    mod = parse("loops.ts", '''\
outer: for (const [k, v] of Object.entries(o)) {
  for (const key in v) { if (!key) continue outer; }
}
for await (const chunk of stream) { parts.push(chunk); }
for (;;) { break; }
for (i = 0, j = 10; i < j; i++, j--) {}
while (pending.length > 0) pending.pop();
do { attempt += 1; } while (attempt < 3);
''')
    assert mod.error is None
    forof, forawait, forever, init_i, init_j, two, wh, do = mod.body.body
    assert isinstance(forof, ir.Loop) and forof.kind == "for" and forof.label == "outer"
    assert isinstance(forof.target, ir.Seq) and [_dotted(t) for t in forof.target.items] == ["k", "v"]
    forin = forof.body[0]
    assert isinstance(forin, ir.Loop) and forin.kind == "for" and _dotted(forin.iter) == "v"
    jump = forin.body[0]
    assert isinstance(jump, ir.If) and isinstance(jump.body[0], ir.Jump)
    assert jump.body[0].kind == "continue" and jump.body[0].label == "outer"
    assert isinstance(forawait, ir.Loop) and forawait.is_async and forawait.kind == "for"
    assert isinstance(forever, ir.Loop) and forever.kind == "while"
    assert isinstance(forever.test, ir.Lit) and forever.test.value is True
    assert isinstance(forever.body[0], ir.Jump) and forever.body[0].kind == "break"
    assert isinstance(init_i, ir.Assign) and isinstance(init_j, ir.Assign)  # `i = 0, j = 10`: two statements
    assert isinstance(two, ir.Loop) and [type(s).__name__ for s in two.body] == ["Assign", "Assign"]
    assert isinstance(wh, ir.Loop) and wh.kind == "while" and isinstance(wh.body[0], ir.ExprStmt)
    assert isinstance(do, ir.Loop) and do.kind == "do" and isinstance(do.test, ir.Op)


def test_switch_cases_fall_through_and_keep_their_break() -> None:
    mod = parse("s.js", 'switch (msg.role) {\n  case "user":\n  case "tool": handle(msg); break;\n'
                        '  default: throw new Error("role");\n}\n')
    (sw,) = mod.body.body
    assert isinstance(sw, ir.Switch) and _dotted(sw.subject) == "msg.role"
    (user, ubody), (tool, tbody), (default, dbody) = sw.cases
    assert isinstance(user, ir.Lit) and user.value == "user" and ubody == []
    assert isinstance(tool, ir.Lit) and [type(s).__name__ for s in tbody] == ["ExprStmt", "Jump"]
    assert default is None and isinstance(dbody[0], ir.Raise)


def test_literals_numbers_strings_templates_and_unmodelled() -> None:
    mod = parse("lit.ts", '''\
const values = [0x1f, 1_000, 1.5e3, 10n, -2, "a\\tb", 'it\\'s', `x${y}\\u{1F600}`, `plain`, null, undefined,
  true, /re/g, typeof x, !y, x instanceof Y, "k" in o, void 0, [a, , b], { a, ...rest, [key]: 1, "s-k": 2, 3: 4 }];
''')
    (assign,) = mod.body.body
    assert isinstance(assign, ir.Assign) and isinstance(assign.value, ir.Seq) and assign.value.kind == "list"
    items = assign.value.items
    lits = [i.value for i in items[:7] if isinstance(i, ir.Lit)]
    assert lits == [31, 1000, 1500.0, 10, -2, "a\tb", "it's"]
    tmpl = items[7]
    assert isinstance(tmpl, ir.Tmpl) and tmpl.parts[0] == "x" and tmpl.parts[2] == "\U0001F600"
    assert [i.value for i in items[8:12] if isinstance(i, ir.Lit)] == ["plain", None, None, True]
    assert isinstance(items[12], ir.Other) and items[12].kind == "regex"
    assert [i.op for i in items[13:17] if isinstance(i, ir.Op)] == ["typeof", "!", "instanceof", "in"]
    assert isinstance(items[17], ir.Lit) and items[17].value is None  # `void 0` is undefined
    holes = items[18]
    assert isinstance(holes, ir.Seq) and [type(i).__name__ for i in holes.items] == ["Name", "Other", "Name"]
    obj = items[19]
    assert isinstance(obj, ir.Obj)
    keys = [k if not isinstance(k, ir.Expr) else _dotted(k) for k, _ in obj.items]
    assert keys == ["a", None, "key", "s-k", "3"]


def test_arrow_functions_and_function_values_are_named_by_what_holds_them() -> None:
    mod = parse("f.js", '''\
const run = async (input) => { return tools.call(input); };
const double = x => x * 2;
const tools = { search(q) { return q; }, fetch: async function (url) {}, nested: { deep: () => 1 } };
exports.handler = function (event) { return event; };
Agent.prototype.step = function () {};
items.map((item) => item.id);
function outer() { return () => 1; }
''')
    names = [(f.qualname, f.kind) for f in mod.functions]
    assert names == [("<module>", "module"), ("run", "lambda"), ("double", "lambda"), ("tools.search", "function"),
                     ("tools.fetch", "function"), ("tools.nested.deep", "lambda"), ("handler", "function"),
                     ("Agent.step", "function"), ("<lambda>", "lambda"), ("outer", "function"),
                     ("outer.<lambda>", "lambda")]
    double = _fn(mod, "double")
    assert [p.name for p in double.params] == ["x"]
    assert isinstance(double.expr_body, ir.Op) and isinstance(double.body[0], ir.Return)
    assert double.body[0].value is double.expr_body  # as the Python lambda: expression and Return both
    assert _fn(mod, "run").is_async and mod.exports == {"handler": "handler"}
    (assign,) = (s for s in mod.body.body if isinstance(s, ir.Assign) and _dotted(s.targets[0]) == "run")
    assert isinstance(assign.value, ir.FuncExpr) and assign.value.fn is _fn(mod, "run")


def test_type_syntax_is_transparent_and_annotations_are_text() -> None:
    mod = parse("t.ts", '''\
let client: OpenAI | null = null;
const a = (x as unknown as Client).chat;
const b = <Client>y;
const c = z!.value satisfies string;
function f(this: Window, x?: number): asserts x is number {}
''')
    decl, a, b, c, _ = mod.body.body
    assert isinstance(decl, ir.Assign) and decl.type == "OpenAI | null" and decl.decl == "let"
    assert isinstance(a, ir.Assign) and _dotted(a.value) == "x.chat"
    assert isinstance(b, ir.Assign) and _dotted(b.value) == "y"
    assert isinstance(c, ir.Assign) and _dotted(c.value) == "z.value"
    f = _fn(mod, "f")
    assert [(p.name, p.type) for p in f.params] == [("x", "number")]  # `this: Window` types the receiver
    assert f.returns == "asserts x is number"


def test_assignments_in_statements_and_inside_expressions() -> None:
    mod = parse("a.js", '''\
a = b = c;
total += n;
opts.retries ??= 3;
count++;
--left;
delete cache[key];
while ((m = re.exec(s)) !== null) {}
first(), second();
const [x, , z = 2, ...others] = row;
let { data: { items }, status = 200 } = res;
''')
    chain, plus, nullish, inc, dec, dele, loop, first, second, arr, obj = mod.body.body
    assert isinstance(chain, ir.Assign) and [_dotted(t) for t in chain.targets] == ["a", "b"]
    assert isinstance(plus, ir.Assign) and plus.op == "+="
    assert isinstance(nullish, ir.Assign) and nullish.op == "??=" and _dotted(nullish.targets[0]) == "opts.retries"
    assert isinstance(inc, ir.Assign) and inc.op == "+=" and isinstance(inc.value, ir.Lit) and inc.value.value == 1
    assert isinstance(dec, ir.Assign) and dec.op == "-="
    assert isinstance(dele, ir.Assign) and dele.op == "del" and isinstance(dele.targets[0], ir.Index)
    assert isinstance(loop, ir.Loop) and isinstance(loop.test, ir.Op) and loop.test.op == "!=="
    nested = loop.test.operands[0]
    assert isinstance(nested, ir.Op) and nested.op == "=" and _dotted(nested.operands[0]) == "m"
    assert isinstance(first, ir.ExprStmt) and isinstance(second, ir.ExprStmt)
    assert isinstance(arr, ir.Assign) and isinstance(arr.targets[0], ir.Seq)
    kinds = [type(i).__name__ for i in arr.targets[0].items]
    assert kinds == ["Name", "Other", "Op", "Spread"]
    assert isinstance(obj, ir.Assign) and isinstance(obj.targets[0], ir.Obj)
    (data_key, data), (status_key, status) = obj.targets[0].items
    assert data_key == "data" and isinstance(data, ir.Obj) and status_key == "status"
    assert isinstance(status, ir.Op) and status.op == "="


def test_commonjs_requires_and_exports_including_compiled_forms() -> None:
    mod = parse("index.js", '''\
"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.run = exports.Agent = void 0;
const openai_1 = __importDefault(require("openai"));
const { readFile, writeFile: write } = require("node:fs/promises");
const join = require("node:path").join;
__exportStar(require("./types"), exports);
Object.defineProperty(exports, "helper", { enumerable: true, get: function () { return tools_1.helper; } });
class Agent {}
exports.Agent = Agent;
exports.run = async function (input) { return (0, openai_1.default)(input); };
module.exports.VERSION = "1.0";
async function lazy() { const { z } = await import("zod"); const mod = await import("./mod.js"); }
''')
    assert mod.lang == "javascript" and mod.error is None
    assert _imports(mod) == {"openai_1": ("openai", "*"), "readFile": ("node:fs/promises", "readFile"),
                             "write": ("node:fs/promises", "writeFile"), "join": ("node:path", "join"),
                             "z": ("zod", "z"), "mod": ("./mod.js", "*")}
    assert mod.exports == {"run": "run", "Agent": "Agent", "helper": "tools_1.helper",
                           "VERSION": "module.exports.VERSION"}
    assert [(r.local, r.source, r.name) for r in mod.reexports] == [("*", "./types", "*")]
    run = _fn(mod, "run")  # the compiled `(0, m.fn)(x)` calls `m.fn`
    ret = run.body[0]
    assert isinstance(ret, ir.Return) and isinstance(ret.value, ir.Call) and _dotted(ret.value.func) == "openai_1.default"
    assert not any(isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Lit) for s in mod.body.body)  # directive


def test_module_exports_object_and_value() -> None:
    obj = parse("a.cjs", "function run() {}\nmodule.exports = { run, helper: util.helper, make() {}, n: 1 };\n")
    assert obj.exports == {"run": "run", "helper": "util.helper", "make": "make", "n": "module.exports.n"}
    whole = parse("b.cjs", "class Agent {}\nmodule.exports = Agent;\n")
    assert whole.exports == {"default": "Agent"}
    cls = parse("d.cjs", "module.exports = class Agent {};\nexports.Tool = class extends Base {};\n")
    assert cls.exports == {"default": "Agent", "Tool": "Tool"} and [c.name for c in cls.classes] == ["Agent", "Tool"]
    fn = parse("e.cjs", "module.exports = async function (input) { return input; };\n")
    assert fn.exports == {"default": "default"} and _fn(fn, "default").is_async
    again = parse("c.cjs", 'module.exports = require("./impl");\n')
    assert [(r.local, r.source) for r in again.reexports] == [("*", "./impl")]


def test_es_exports_of_every_form() -> None:
    mod = parse("e.ts", '''\
export function f() {}
export const a = 1, { b, c: d } = obj;
export { a as alias, f as "string name" };
export { x as y } from "./x";
export * from "./all";
export * as ns from "./ns";
export enum Kind { A = "a", B }
export type Opts = { signal: AbortSignal };
export default class {}
''')
    assert mod.exports == {"f": "f", "a": "a", "b": "b", "d": "d", "alias": "a", "string name": "f", "Kind": "Kind",
                           "Opts": "Opts", "default": "default"}
    assert [(r.local, r.source, r.name) for r in mod.reexports] == [("y", "./x", "x"), ("*", "./all", "*"),
                                                                    ("ns", "./ns", "*")]
    kind = next(c for c in mod.classes if c.name == "Kind")
    assert kind.kind == "enum" and list(kind.fields) == ["A", "B"]
    assert isinstance(kind.field_values["A"], ir.Lit)
    opts = next(c for c in mod.classes if c.name == "Opts")
    assert opts.kind == "interface" and opts.fields == {"signal": "AbortSignal"}
    assert any(c.name == "default" for c in mod.classes)
    expr = parse("d.js", "export default { name: 'agent', run() {} };\n")
    (stmt,) = expr.body.body
    assert isinstance(stmt, ir.Assign) and _dotted(stmt.targets[0]) == "default" and isinstance(stmt.value, ir.Obj)
    assert expr.exports == {"default": "default"} and _fn(expr, "run").kind == "function"
    assert parse("eq.ts", "class A {}\nexport = A;\n").exports == {"default": "A"}
    assert parse("n.ts", "const A = 1;\nexport default A;\n").exports == {"default": "A"}


def test_class_expressions_decorators_abstract_and_static_blocks() -> None:
    mod = parse("c.ts", '''\
@Injectable()
export abstract class Base {
  @Inject(TOKEN) private readonly dep!: Dep;
  abstract step(input: string): Promise<void>;
  overload(a: string): void;
  overload(a: unknown) {}
  static { Base.registry = new Map(); }
}
const Mixed = class extends Base {};
const made = factory(class Local {});
''')
    base, mixed, local = mod.classes
    assert [_dotted(d.func) for d in base.decorators if isinstance(d, ir.Call)] == ["Injectable"]
    assert base.fields == {"dep": "Dep"}
    assert set(base.methods) == {"step", "overload"} and base.methods["step"].body == []
    assert len([f for f in mod.functions if f.qualname == "Base.overload"]) == 1  # the signature is no function
    static = _fn(mod, "Base.<static>")
    assert static.cls is base and "<static>" not in base.methods and isinstance(static.body[0], ir.Assign)
    assert mixed.name == "Mixed" and [_dotted(b) for b in mixed.bases] == ["Base"]
    assert isinstance(mod.body.body[1], ir.Def) and mod.body.body[1].cls is mixed
    assert local.name == "Local"
    made = mod.body.body[2]
    assert isinstance(made, ir.Assign) and isinstance(made.value, ir.Call)
    arg = made.value.args[0]
    assert isinstance(arg, ir.Other) and arg.kind == "class" and arg.line == local.line


def test_namespaces_name_what_they_define() -> None:
    mod = parse("n.ts", "namespace Tools { export function search() { return 1; } }\n"
                        "declare module \"openai\" { interface Extra { id: string } }\n")
    assert [f.qualname for f in mod.functions] == ["<module>", "Tools.search"]
    assert mod.exports == {}  # a namespace's exports are the namespace's
    assert [c.qualname for c in mod.classes] == ["Extra"]


def test_jsx_keeps_every_sub_expression() -> None:
    mod = parse("view.tsx", '''\
export function View({ items, onPick }: Props) {
  return <ul className="list">{items.map((item) => <Item key={item.id} {...item} onClick={() => onPick(item)} />)}</ul>;
}
''')
    assert mod.error is None and mod.lang == "typescript"
    view = _fn(mod, "View")
    assert view.params[0].kind == "pattern" and view.params[0].names == ("items", "onPick")
    ret = view.body[0]
    assert isinstance(ret, ir.Return) and isinstance(ret.value, ir.Other) and ret.value.kind == "jsx_element"
    calls = [n for n in ir.walk(ret.value) if isinstance(n, ir.Call)]
    assert [_dotted(c.func) for c in calls] == ["items.map"]
    # an unnamed function is named below the named one around it (as the symbol index names what it defines)
    assert [f.qualname for f in mod.functions] == ["<module>", "View", "View.<lambda>", "View.<lambda>"]
    inner = [f for f in mod.functions if f.qualname == "View.<lambda>"]
    assert any(isinstance(s, ir.Return) and isinstance(s.value, ir.Call) and _dotted(s.value.func) == "onPick"
               for f in inner for s in f.body)
    assert parse("view.jsx", "const v = <div>{x}</div>;\n").lang == "javascript"


def test_broken_file_lowers_as_far_as_it_parses() -> None:
    broken = parse("b.ts", "function ok() { return 1; }\n\nfunction bad( {\n  return;\n}\nconst after = 2;\n")
    assert broken.error is not None and broken.error.startswith("syntax error at line")
    assert any(f.name == "ok" for f in broken.functions)
    assert parse("e.ts", "").functions[0].kind == "module" and parse("e.ts", "").error is None


def test_hostile_nesting_loses_one_statement_not_the_file() -> None:
    deep = parse("d.ts", "const a = 1;\nconst x = " + "[" * 5000 + "]" * 5000 + ";\nfunction after() {}\n")
    assert deep.error is not None and "deeply" in deep.error
    assert [type(s).__name__ for s in deep.body.body] == ["Assign", "Def"]
    inner = parse("i.ts", "function g() { const a = 1; const x = " + "(() => " * 3000 + "1" + ")" * 3000 +
                  "; return a; }\n")
    g = _fn(inner, "g")
    assert inner.error is not None and [type(s).__name__ for s in g.body] == ["Assign", "Return"]


def test_long_chains_lower_without_recursion() -> None:
    concat = parse("c.js", "const s = " + " + ".join(['"x"'] * 20000) + ";\n")
    assert concat.error is None
    (assign,) = concat.body.body
    assert isinstance(assign, ir.Assign) and isinstance(assign.value, ir.Op) and assign.value.op == "+"
    chain = parse("e.js", "function g(x) { if (x === 0) {}" +
                  "".join(f" else if (x === {i}) {{ f({i}); }}" for i in range(1, 3000)) + " else { h(); } }\n")
    assert chain.error is None
    node = _fn(chain, "g").body[0]
    depth = 0
    while isinstance(node, ir.If) and node.orelse:
        depth += 1
        node = node.orelse[0]
    assert depth == 3000 and isinstance(node, ir.ExprStmt)


def test_lowers_the_tree_the_static_engine_already_parsed() -> None:
    from harness_audit.static.lang.typescript import TsModule
    from harness_audit.static.sem.front_typescript import lower

    ts = TsModule.parse("agent.ts", AGENT)
    mod = lower(ts.path, ts.text, ts.source, ts.tree, ts.dialect)
    again = parse("agent.ts", AGENT)
    assert [f.key for f in mod.functions] == [f.key for f in again.functions]
    assert _imports(mod) == _imports(again) and mod.exports == again.exports


def test_a_parameter_the_grammar_cannot_read_is_no_parameter() -> None:
    """Risk: the grammar reads `x: import("m").T` as a parameter followed by an ERROR; lowering the ERROR as one
    more parameter shifts every later one, and a signal passed third reads as not passed at all."""
    mod = parse("a.ts", 'function f(input: I, sub: import("rxjs").Subscriber<E>, signal: AbortSignal) { g(signal); }')
    fn = next(f for f in mod.functions if f.name == "f")
    assert [(p.name, p.type) for p in fn.params] == [("input", "I"), ("sub", None), ("signal", "AbortSignal")]
