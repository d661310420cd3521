"""The language-neutral program model every front end lowers into.

A module is a list of functions (the module body is one of them, `<module>`), classes and imports. A
function body is a tree of a dozen statement kinds and a dozen expression kinds: enough to say which
value flows where, which call happens inside which loop, `try` or `with`, and which exit paths a block
has. Everything a query needs that is not here (the source text, the cited line) is reached through
`line` and the module's text. Nodes are plain slotted objects: an audit builds hundreds of thousands.

Python and TypeScript/JavaScript lower to the same kinds: `x.y` is an `Attr` whether it was written
`x.y` or `x?.y`; `new C()` is a `Call` with `new=True`; a dict and an object literal are both an `Obj`;
`except` and `catch` are both a `Handler`; `match` and `switch` are both a `Switch`.

Where the two languages say the same thing differently, the TS/JS front end lowers it to the shape the Python
front end gives the Python spelling: a C-style `for (init; test; update)` is the init statements and a `while`
loop whose body ends with the update; `x++` as a statement is `x += 1`; `delete o.k` is `del`; a statement
`a(), b()` is two statements; a constructor parameter property `constructor(private c: C)` is also the
`this.c = c` it means, first in the constructor's body; `get x()` / `set x(v)` / `static m()` carry the
decorators `property` / `x.setter` / `staticmethod`; `export default <expression>` is `const default =
<expression>`. Differences that remain, which queries must know:

- a Python method lists its receiver (`self`) as its first parameter; a TS/JS method has no such parameter
  and its receiver is `Name("this")`;
- Python keyword arguments are `Call.kw`; TS/JS has none: an options object is an `Obj` argument;
- operators keep their spelling (`and`/`&&`, `or`/`||`, `not`/`!`, `==`/`===`, `yield from`/`yield*`);
- a TS `catch` has no types (it catches everything); a Python `except E` has `E`;
- a TS `break` inside a `switch` leaves the switch (cases fall through unless they end in a jump); a
  Python `match` case never falls through and has no `break`;
- a Python tuple target is `Seq("tuple")`, a TS array pattern `Seq("list")`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal

Lang = Literal["python", "typescript", "javascript"]


class Node:
    """Base of every IR node: where it is in the file (1-based lines)."""

    __slots__ = ("line", "end")

    def __init__(self, line: int, end: int) -> None:
        self.line = line
        self.end = end

    def children(self) -> Sequence[Node]:
        """Direct child nodes, in source order (a sequence the caller must not change)."""
        return ()


# ---------------------------------------------------------------- expressions


class Expr(Node):
    """An expression."""

    __slots__ = ()


class Name(Expr):
    """A bare identifier (`x`, `self`, `this`)."""

    __slots__ = ("id",)

    def __init__(self, line: int, end: int, id: str) -> None:  # noqa: A002 - the IR's field name
        self.line = line
        self.end = end
        self.id = id


class Attr(Expr):
    """`obj.name` (also `obj?.name`)."""

    __slots__ = ("obj", "name")

    def __init__(self, line: int, end: int, obj: Expr, name: str) -> None:
        self.line = line
        self.end = end
        self.obj = obj
        self.name = name

    def children(self) -> Sequence[Node]:
        return (self.obj,)


class Index(Expr):
    """`obj[key]`; `key` is a `Slice` for `a[1:]`."""

    __slots__ = ("obj", "key")

    def __init__(self, line: int, end: int, obj: Expr, key: Expr) -> None:
        self.line = line
        self.end = end
        self.obj = obj
        self.key = key

    def children(self) -> Sequence[Node]:
        return (self.obj, self.key)


class Slice(Expr):
    """`lo:hi:step` inside an index (any part may be None)."""

    __slots__ = ("lo", "hi", "step")

    def __init__(self, line: int, end: int, lo: Expr | None, hi: Expr | None, step: Expr | None) -> None:
        self.line = line
        self.end = end
        self.lo = lo
        self.hi = hi
        self.step = step

    def children(self) -> Sequence[Node]:
        return [part for part in (self.lo, self.hi, self.step) if part is not None]


class Call(Expr):
    """A call: `func(*args, **kw)`; `new` for `new C(...)`. Spread arguments are `Spread` nodes in `args`
    (`*a` and `...a`) or `kw` entries named `**` (`**kw`)."""

    __slots__ = ("func", "args", "kw", "new")

    def __init__(self, line: int, end: int, func: Expr, args: list[Expr], kw: list[tuple[str, Expr]],
                 new: bool = False) -> None:
        self.line = line
        self.end = end
        self.func = func
        self.args = args
        self.kw = kw
        self.new = new

    def children(self) -> Sequence[Node]:
        if self.kw:
            return [self.func, *self.args, *[v for _, v in self.kw]]
        return [self.func, *self.args]

    def keyword(self, name: str) -> Expr | None:
        """The value of keyword argument `name`, if given."""
        for k, v in self.kw:
            if k == name:
                return v
        return None


class Lit(Expr):
    """A literal: string, number, bool, None/null/undefined (`value` holds the Python value; a number that
    does not parse keeps its text)."""

    __slots__ = ("value",)

    def __init__(self, line: int, end: int, value: str | int | float | bool | None) -> None:
        self.line = line
        self.end = end
        self.value = value


class Tmpl(Expr):
    """An interpolated string (f-string, template literal): constant parts are `str`, holes are `Expr`."""

    __slots__ = ("parts",)

    def __init__(self, line: int, end: int, parts: list[str | Expr]) -> None:
        self.line = line
        self.end = end
        self.parts = parts

    def children(self) -> Sequence[Node]:
        return [p for p in self.parts if isinstance(p, Expr)]


class Obj(Expr):
    """A dict or object literal. Keys are `str` for constant keys, an `Expr` for computed ones, None for a
    spread (`**d`, `...o`), whose value is the spread expression."""

    __slots__ = ("items",)

    def __init__(self, line: int, end: int, items: list[tuple[str | Expr | None, Expr]]) -> None:
        self.line = line
        self.end = end
        self.items = items

    def children(self) -> Sequence[Node]:
        out: list[Node] = []
        for k, v in self.items:
            if isinstance(k, Expr):
                out.append(k)
            out.append(v)
        return out

    def get(self, key: str) -> Expr | None:
        """The value at constant key `key`."""
        for k, v in self.items:
            if k == key:
                return v
        return None


class Seq(Expr):
    """A list, tuple, set or array literal (`kind` says which)."""

    __slots__ = ("kind", "items")

    def __init__(self, line: int, end: int, kind: Literal["list", "tuple", "set"], items: list[Expr]) -> None:
        self.line = line
        self.end = end
        self.kind = kind
        self.items = items

    def children(self) -> Sequence[Node]:
        return self.items


class Spread(Expr):
    """`*x` / `...x` in a call or literal."""

    __slots__ = ("value",)

    def __init__(self, line: int, end: int, value: Expr) -> None:
        self.line = line
        self.end = end
        self.value = value

    def children(self) -> Sequence[Node]:
        return (self.value,)


class FuncExpr(Expr):
    """A lambda, arrow function or function expression, as a value; its body is `fn`."""

    __slots__ = ("fn",)

    def __init__(self, line: int, end: int, fn: Function) -> None:
        self.line = line
        self.end = end
        self.fn = fn


class Await(Expr):
    """`await x` (also `yield from`/`yield*` of an awaitable-like producer is NOT this; see `Op`)."""

    __slots__ = ("value",)

    def __init__(self, line: int, end: int, value: Expr) -> None:
        self.line = line
        self.end = end
        self.value = value

    def children(self) -> Sequence[Node]:
        return (self.value,)


class Op(Expr):
    """An operator application: binary, unary, boolean, comparison, `in`, `instanceof`, `typeof`, `yield`
    (`yield*`), `not`, `??`, walrus (`:=`, whose first operand is the target). `op` is the operator's source
    text. TS/JS also has: an assignment nested in an expression, `Op("=", [target, value])` (`+=`, `??=`…
    likewise; `=` with a default inside a destructuring pattern too); `x++` inside an expression, `Op("++")`;
    the comma operator, `Op(",", items)` (leading literals dropped: the compiled `(0, m.run)(x)` is a call
    of `m.run`)."""

    __slots__ = ("op", "operands")

    def __init__(self, line: int, end: int, op: str, operands: list[Expr]) -> None:
        self.line = line
        self.end = end
        self.op = op
        self.operands = operands

    def children(self) -> Sequence[Node]:
        return self.operands


class Cond(Expr):
    """`a if test else b`, `test ? a : b`."""

    __slots__ = ("test", "then", "orelse")

    def __init__(self, line: int, end: int, test: Expr, then: Expr, orelse: Expr) -> None:
        self.line = line
        self.end = end
        self.test = test
        self.then = then
        self.orelse = orelse

    def children(self) -> Sequence[Node]:
        return (self.test, self.then, self.orelse)


class Comp(Expr):
    """A comprehension or generator expression: `elt for target in iter if cond ...` (`kind`: list, set,
    dict, gen). `parts` holds the iterables and conditions in order; targets are `Assign`-like pairs."""

    __slots__ = ("kind", "elt", "targets", "parts")

    def __init__(self, line: int, end: int, kind: str, elt: Expr, targets: list[tuple[Expr, Expr]],
                 parts: list[Expr]) -> None:
        self.line = line
        self.end = end
        self.kind = kind
        self.elt = elt
        self.targets = targets
        self.parts = parts

    def children(self) -> Sequence[Node]:
        out: list[Node] = []
        for t, it in self.targets:
            out.append(t)
            out.append(it)
        out.extend(self.parts)
        out.append(self.elt)
        return out


class Other(Expr):
    """Any expression the model does not name (JSX, a regex, a class expression…): `kind` is the parser's
    node type, `items` its sub-expressions, kept so nothing inside is lost. A few kinds are the front end's
    own: `hole` (an elided array element `[a, , b]`), `caught` (the value a `catch ({ message })` pattern
    destructures), `class` (a class expression whose `Class` is in `Module.classes` at the same line)."""

    __slots__ = ("kind", "items")

    def __init__(self, line: int, end: int, kind: str, items: list[Expr]) -> None:
        self.line = line
        self.end = end
        self.kind = kind
        self.items = items

    def children(self) -> Sequence[Node]:
        return self.items


# ---------------------------------------------------------------- statements


class Stmt(Node):
    """A statement."""

    __slots__ = ()


Block = list[Stmt]


class Body(list[Stmt]):
    """A function's body: a statement list that keeps the list of its nodes once `walk_block` has walked it.

    Queries walk the same functions many times; a walk of a body is computed once and every later one reads the
    kept list. The IR is not changed once lowered (a front end may change a body only before it is walked)."""

    __slots__ = ("nodes", "kinds")

    def __init__(self, stmts: Block = ()) -> None:  # type: ignore[assignment]  # an empty tuple is an empty body
        super().__init__(stmts)
        self.nodes: list[Node] | None = None
        """What `walk_block` yields for this body, once it has been asked."""
        self.kinds: dict[type[Node] | tuple[type[Node], ...], list[Node]] | None = None
        """What `nodes_of` gave for this body, by the kinds asked for."""


class Assign(Stmt):
    """`targets = value` (several targets for `a = b = v`), an augmented assignment (`op` is `+=`…), a
    declaration (`decl`: `let`, `const`, `var`, or `ann` for an annotated Python name; `value` may be None;
    `type` is the annotation's text), or `del x` / `delete o.k` (`op` is `del`, `value` None). Destructuring
    targets are `Seq`/`Obj` patterns: an `Obj` pattern maps each key to the target it binds (`{a: b}` →
    ("a", Name b)), a default is `Op("=", [target, default])`, a rest element a `None` key (`Spread` in a
    `Seq`)."""

    __slots__ = ("targets", "value", "op", "decl", "type")

    def __init__(self, line: int, end: int, targets: list[Expr], value: Expr | None, op: str = "=",
                 decl: str = "", type: str | None = None) -> None:  # noqa: A002
        self.line = line
        self.end = end
        self.targets = targets
        self.value = value
        self.op = op
        self.decl = decl
        self.type = type

    def children(self) -> Sequence[Node]:
        if self.value is not None:
            return [*self.targets, self.value]
        return self.targets


class ExprStmt(Stmt):
    """An expression evaluated for its effect."""

    __slots__ = ("value",)

    def __init__(self, line: int, end: int, value: Expr) -> None:
        self.line = line
        self.end = end
        self.value = value

    def children(self) -> Sequence[Node]:
        return (self.value,)


class Return(Stmt):
    """`return [value]`."""

    __slots__ = ("value",)

    def __init__(self, line: int, end: int, value: Expr | None) -> None:
        self.line = line
        self.end = end
        self.value = value

    def children(self) -> Sequence[Node]:
        return (self.value,) if self.value is not None else ()


class Raise(Stmt):
    """`raise [value]` / `throw value`; a bare re-raise has `value` None."""

    __slots__ = ("value",)

    def __init__(self, line: int, end: int, value: Expr | None) -> None:
        self.line = line
        self.end = end
        self.value = value

    def children(self) -> Sequence[Node]:
        return (self.value,) if self.value is not None else ()


class If(Stmt):
    """`if test: body else: orelse` (`elif` chains nest in `orelse`)."""

    __slots__ = ("test", "body", "orelse")

    def __init__(self, line: int, end: int, test: Expr, body: Block, orelse: Block) -> None:
        self.line = line
        self.end = end
        self.test = test
        self.body = body
        self.orelse = orelse

    def children(self) -> Sequence[Node]:
        return [self.test, *self.body, *self.orelse]


class Loop(Stmt):
    """A loop. `kind`: `for` (`target` in `iter`; `for…of`, `for…in`, `async for` and `for await` too),
    `while` (`test`; a C-style `for` lowers to its init statements before a `while` whose body ends with the
    update, `test` `Lit(True)` when absent), `do` (`test` checked after the body). `orelse` is Python's loop
    `else`; `label` the TS/JS label a `Jump` may name."""

    __slots__ = ("kind", "target", "iter", "test", "body", "orelse", "is_async", "label")

    def __init__(self, line: int, end: int, kind: Literal["for", "while", "do"], *, target: Expr | None = None,
                 iter: Expr | None = None, test: Expr | None = None, body: Block, orelse: Block | None = None,  # noqa: A002
                 is_async: bool = False) -> None:
        self.line = line
        self.end = end
        self.kind = kind
        self.target = target
        self.iter = iter
        self.test = test
        self.body = body
        self.orelse = orelse or []
        self.is_async = is_async
        self.label: str | None = None

    def children(self) -> Sequence[Node]:
        out: list[Node] = [part for part in (self.target, self.iter, self.test) if part is not None]
        out.extend(self.body)
        out.extend(self.orelse)
        return out


class Handler(Node):
    """One `except`/`catch` clause. `types` empty means it catches everything (every TS/JS `catch`); `name`
    binds the error (a destructured `catch ({ message })` has no name and begins its body with an `Assign`
    of the pattern from `Other("caught")`)."""

    __slots__ = ("types", "name", "body")

    def __init__(self, line: int, end: int, types: list[Expr], name: str | None, body: Block) -> None:
        self.line = line
        self.end = end
        self.types = types
        self.name = name
        self.body = body

    def children(self) -> Sequence[Node]:
        return [*self.types, *self.body]


class Try(Stmt):
    """`try` with its handlers, `else` and `finally` blocks."""

    __slots__ = ("body", "handlers", "orelse", "final")

    def __init__(self, line: int, end: int, body: Block, handlers: list[Handler], orelse: Block,
                 final: Block) -> None:
        self.line = line
        self.end = end
        self.body = body
        self.handlers = handlers
        self.orelse = orelse
        self.final = final

    def children(self) -> Sequence[Node]:
        return [*self.body, *self.handlers, *self.orelse, *self.final]


class With(Stmt):
    """`with a as x, b:` / `async with`; TS `using` declarations lower to this too."""

    __slots__ = ("items", "body", "is_async")

    def __init__(self, line: int, end: int, items: list[tuple[Expr, Expr | None]], body: Block,
                 is_async: bool = False) -> None:
        self.line = line
        self.end = end
        self.items = items
        self.body = body
        self.is_async = is_async

    def children(self) -> Sequence[Node]:
        out: list[Node] = []
        for value, target in self.items:
            out.append(value)
            if target is not None:
                out.append(target)
        out.extend(self.body)
        return out


class Switch(Stmt):
    """`match`/`switch`: each case is (pattern or None for default, body). A TS/JS case body keeps its
    `break`; an empty body (`case 1: case 2: f()`) falls through to the next case."""

    __slots__ = ("subject", "cases")

    def __init__(self, line: int, end: int, subject: Expr, cases: list[tuple[Expr | None, Block]]) -> None:
        self.line = line
        self.end = end
        self.subject = subject
        self.cases = cases

    def children(self) -> Sequence[Node]:
        out: list[Node] = [self.subject]
        for pattern, body in self.cases:
            if pattern is not None:
                out.append(pattern)
            out.extend(body)
        return out


class Jump(Stmt):
    """`break` or `continue` (`kind`), with the label it names, if any (the `Loop` with that `label`; a label
    on a block or a `switch` is not kept). An unlabelled TS/JS `break` leaves the nearest `Loop` or
    `Switch`."""

    __slots__ = ("kind", "label")

    def __init__(self, line: int, end: int, kind: Literal["break", "continue"], label: str | None = None) -> None:
        self.line = line
        self.end = end
        self.kind = kind
        self.label = label


class Def(Stmt):
    """A function or class definition as a statement (`def`, `function`, `class`, and TS/JS `const A = class
    …`, `interface`, `enum`). `const f = () => …` is an `Assign` of a `FuncExpr`, as `f = lambda: …` is."""

    __slots__ = ("fn", "cls")

    def __init__(self, line: int, end: int, fn: Function | None = None, cls: Class | None = None) -> None:
        self.line = line
        self.end = end
        self.fn = fn
        self.cls = cls


# ---------------------------------------------------------------- definitions


class Param:
    """A parameter: name, annotation text, default. `kind`: `pos`, `star` (`*args`, `...rest`), `kw` (`**kw`),
    `field` (a TS constructor parameter property `constructor(private client: X)`: also a field of the class),
    `pattern` (destructured `{ a, b }` / `[a, b]`: `names` lists the bound names, `pattern` is the target as
    an `Assign` would hold it, `name` the pattern's text)."""

    __slots__ = ("name", "type", "default", "kind", "names", "line", "pattern")

    def __init__(self, name: str, type: str | None, default: Expr | None, kind: str, line: int,  # noqa: A002
                 names: tuple[str, ...] = (), pattern: Expr | None = None) -> None:
        self.name = name
        self.type = type
        self.default = default
        self.kind = kind
        self.line = line
        self.names = names or (name,)
        self.pattern = pattern


class Function:
    """A function, method, lambda, arrow function or a module body (`name` `<module>`).

    `kind`: `lambda` for a Python lambda and a TS/JS arrow function (both see the enclosing receiver);
    `function` for `def`/`function` and object-literal methods; `method` for a class's methods, including a
    class field holding a function (`handler = () => …`), an interface's method signatures and abstract
    methods (both with an empty body), and a static block (`<static>`, not in `Class.methods`). A TS/JS
    function held by a name is named after it, as the symbol index names it: `const run = () => …` is `run`,
    `{ run() {} }` bound to `tools` is `tools.run`, `exports.run = function …` is `run`, `A.prototype.run =
    function …` is `A.run`, `export default function () {}` and `module.exports = function …` are `default`
    (the members of a default-exported object are named as top-level names); an unnamed one is `<lambda>`.
    The constructor is `constructor`."""

    __slots__ = ("name", "qualname", "module", "cls", "parent", "params", "_body", "line", "end", "is_async",
                 "is_generator", "decorators", "returns", "expr_body", "index", "kind")

    def __init__(self, name: str, qualname: str, module: Module, *, line: int, end: int,
                 params: list[Param] | None = None, body: Block | None = None, is_async: bool = False,
                 decorators: list[Expr] | None = None, returns: str | None = None,
                 kind: Literal["function", "method", "lambda", "module"] = "function") -> None:
        self.name = name
        self.qualname = qualname
        self.module = module
        self.cls: Class | None = None
        self.parent: Function | None = None
        self.params = params or []
        self.body = body or []
        self.line = line
        self.end = end
        self.is_async = is_async
        self.is_generator = False
        self.decorators = decorators or []
        self.returns = returns
        self.expr_body: Expr | None = None
        """The expression of an expression-bodied lambda/arrow (also lowered into `body` as a `Return`)."""
        self.index = -1
        """Position in the project's function table (set by the fact builder)."""
        self.kind = kind

    @property
    def body(self) -> Body:
        """The function's statements (a `Body`: a list that keeps its walk)."""
        return self._body

    @body.setter
    def body(self, value: Block) -> None:
        self._body = value if isinstance(value, Body) else Body(value)

    def __repr__(self) -> str:
        return f"<Function {self.module.path}:{self.qualname}@{self.line}>"

    @property
    def key(self) -> str:
        """`path:qualname@line`, unique in a project."""
        return f"{self.module.path}:{self.qualname}@{self.line}"


class Class:
    """A class: its bases (expressions), methods by name, declared fields (name → annotation text, and the
    initialiser in `field_values`).

    `kind` is `class`, `interface` (a TS interface or object type alias: fields are its property signatures,
    `bases` what it extends) or `enum` (a TS enum: fields are its members, `field_values` their values). A TS
    class's `bases` are what it `extends`; what it `implements` is in `implements`."""

    __slots__ = ("name", "qualname", "module", "bases", "methods", "fields", "line", "end", "decorators",
                 "field_values", "kind", "implements")

    def __init__(self, name: str, qualname: str, module: Module, *, line: int, end: int, bases: list[Expr],
                 decorators: list[Expr] | None = None) -> None:
        self.name = name
        self.qualname = qualname
        self.module = module
        self.bases = bases
        self.methods: dict[str, Function] = {}
        self.fields: dict[str, str | None] = {}
        self.field_values: dict[str, Expr] = {}
        self.line = line
        self.end = end
        self.decorators = decorators or []
        self.kind: Literal["class", "interface", "enum"] = "class"
        self.implements: list[Expr] = []

    def __repr__(self) -> str:
        return f"<Class {self.module.path}:{self.qualname}>"


class Import:
    """One imported name: `local` is bound to `name` of module `source` (`name` `*` = the module itself,
    `default` = a default export). `source` is as written (`./tools`, `..pkg.mod`, `openai`). TS/JS:
    `import x from "m"` → (x, m, default); `import { a as b }` → (b, m, a); `import * as ns` and `const ns =
    require("m")` → (ns, m, *); `const { a } = require("m")` (or `await import("m")`) → (a, m, a)."""

    __slots__ = ("local", "source", "name", "line")

    def __init__(self, local: str, source: str, name: str, line: int) -> None:
        self.local = local
        self.source = source
        self.name = name
        self.line = line


class Module:
    """One source file lowered to the IR."""

    __slots__ = ("path", "lang", "text", "body", "functions", "classes", "imports", "exports", "reexports", "error",
                 "_lines")

    def __init__(self, path: str, lang: Lang, text: str) -> None:
        self.path = path
        self.lang: Lang = lang
        self.text = text
        self.body: Function = Function("<module>", "<module>", self, line=1, end=1, kind="module")
        self.functions: list[Function] = []
        """Every function of the file, the module body first, nested ones after their parent."""
        self.classes: list[Class] = []
        self.imports: dict[str, Import] = {}
        """Local name → what it imports."""
        self.exports: dict[str, str] = {}
        """Exported name → local name (TS/JS `export { a as b }`, `export function a`, `module.exports.b = a`;
        `export default x` and `module.exports = x` export `default`). A function defined in place is named
        by its qualname (`exports.run = function …` → `run`); any other value by the dotted target the body
        assigns it to (`exports.b = f()` → `exports.b`)."""
        self.reexports: list[Import] = []
        """What the module exports from another module without binding it: `export { a as b } from "m"` →
        Import(b, m, a); `export * from "m"` (and compiled `__exportStar(require("m"), exports)`,
        `module.exports = require("m")`) → Import(*, m, *); `export * as ns from "m"` → Import(ns, m, *)."""
        self.error: str | None = None
        """Why the file parsed only in part, if it did."""
        self._lines: list[str] | None = None

    @property
    def lines(self) -> list[str]:
        """The file's lines (without line ends)."""
        if self._lines is None:
            self._lines = self.text.splitlines()
        return self._lines

    def line_text(self, line: int) -> str:
        """Line `line` (1-based), or '' when out of range."""
        lines = self.lines
        return lines[line - 1] if 0 < line <= len(lines) else ""


def walk(node: Node) -> Iterator[Node]:
    """`node` and everything below it, depth-first in source order, NOT entering nested functions (a
    `FuncExpr` or `Def` is yielded, its body is not)."""
    return _walk_stmts((node,))


def walk_block(block: Block) -> Iterator[Node]:
    """Every node of a block, not entering nested functions, depth-first in source order. A function's body
    (`Body`) is walked once; later walks read what the first one kept."""
    if isinstance(block, Body):
        nodes = block.nodes
        if nodes is None:
            nodes = block.nodes = _flatten(block)
        return iter(nodes)
    return _walk_stmts(block)


def nodes_of(block: Block, kind: type[Node] | tuple[type[Node], ...]) -> list[Node]:
    """The nodes of `walk_block(block)` that are instances of `kind` (a node class, or a tuple of them), in the
    same order. A function's body keeps the list per kind: a role or query that looks only at calls, loops or
    assignments reads them without passing over every other node. The list is shared: do not change it."""
    if isinstance(block, Body):
        kinds = block.kinds
        if kinds is None:
            kinds = block.kinds = {}
        got = kinds.get(kind)
        if got is None:
            got = kinds[kind] = [n for n in walk_block(block) if isinstance(n, kind)]
        return got
    return [n for n in walk_block(block) if isinstance(n, kind)]


def _walk_stmts(block: Block | tuple[Node, ...]) -> Iterator[Node]:
    stack: list[Node] = list(reversed(block))
    pop, extend = stack.pop, stack.extend
    while stack:
        cur = pop()
        yield cur
        kids = cur.children()
        if kids:
            extend(reversed(kids))


def _flatten(block: Block) -> list[Node]:
    out: list[Node] = []
    append = out.append
    stack: list[Node] = list(reversed(block))
    pop, extend = stack.pop, stack.extend
    while stack:
        cur = pop()
        append(cur)
        kids = cur.children()
        if kids:
            extend(reversed(kids))
    return out
