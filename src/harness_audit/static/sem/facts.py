"""Facts over the IR of a whole project: what names and expressions stand for, and what each call reaches.

Values are abstract and few: an instance of a project class, a project class, function or module, an
external API path (`openai` · `AsyncOpenAI().chat.completions.create`), a container of values, or an
unknown chain kept as text (`client.chat.completions.create()`) so name-based idioms still have something
to read. Everything is computed lazily and memoised: a query pays only for what it asks.

- Names resolve lexically (locals, enclosing functions, the module, its imports, builtins); a local holds
  the union of everything assigned to it anywhere in its function (flow-insensitive def-use).
- Receivers are typed from constructor calls, `__init__`/constructor field assignments, parameter and field
  annotations, TS constructor parameter properties, dataclass/interface fields, factory and method returns,
  and container element types (`dict[str, Tool]`, `Map<string, Tool>`, `Tool[]`).
- Imports are followed into project modules (re-exports included); anything else becomes an external path.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from harness_audit.static.sem import ir
from harness_audit.symbols import ModuleLocator

# ---------------------------------------------------------------- values


@dataclass(frozen=True, slots=True)
class Inst:
    """An instance of a project class."""

    cls: ir.Class


@dataclass(frozen=True, slots=True)
class Klass:
    """A project class object (calling it constructs an `Inst`)."""

    cls: ir.Class


@dataclass(frozen=True, slots=True)
class Fn:
    """A project function (or a bound method)."""

    fn: ir.Function


@dataclass(frozen=True, slots=True)
class Mod:
    """A project module."""

    mod: ir.Module


@dataclass(frozen=True, slots=True)
class Ext:
    """Something from outside the project: `module` as imported (`openai`, `@anthropic-ai/sdk`, `builtins`,
    `global`), `path` the attribute chain from it with `()` for calls and `[]` for elements
    (`AsyncOpenAI().chat.completions.create`)."""

    module: str
    path: str

    def attr(self, name: str) -> Ext:
        return Ext(self.module, f"{self.path}.{name}" if self.path else name)

    def called(self) -> Ext:
        return Ext(self.module, self.path + "()")

    @property
    def plain(self) -> str:
        """The path without call and element marks: `AsyncOpenAI.chat.completions.create`."""
        return self.path.replace("()", "").replace("[]", "")

    @property
    def dotted(self) -> str:
        """`module.plain`."""
        return f"{self.module}.{self.plain}" if self.plain else self.module


@dataclass(frozen=True, slots=True)
class Unk:
    """A value nothing typed: the chain of names it was reached by (`client.chat.completions.create()`)."""

    chain: str

    def attr(self, name: str) -> Unk:
        return Unk(f"{self.chain}.{name}")

    def called(self) -> Unk:
        return Unk(self.chain + "()")

    @property
    def plain(self) -> str:
        return self.chain.replace("()", "").replace("[]", "")


@dataclass(frozen=True, slots=True)
class Cont:
    """A container whose elements are `elem` (a list, dict values, array, map, set, iterator)."""

    elem: frozenset[Val]


Val = Inst | Klass | Fn | Mod | Ext | Unk | Cont
_OUTSIDE = (Ext, Unk)
"""`isinstance` against a tuple: a `X | Y` union is built anew each time the test runs, four times slower."""
_LITERALS = (ir.Lit, ir.Tmpl)
_CHAINS = (ir.Name, ir.Attr, ir.Call, ir.Index)
Vals = frozenset[Val]
EMPTY: Vals = frozenset()
_STR: Vals = frozenset({Ext("builtins", "str()")})
_MAX_DEPTH = 40
"""How many expressions one evaluation may be in the middle of (a guard for Python's own stack)."""
_MAX_VALS = 12
"""A value set larger than this keeps its first members: precision past it buys nothing."""

CONTAINER = "<container>"
"""`Ext(CONTAINER, "append")`: a method of a list, dict, set, array or map, whatever the container."""
NEW = "<new>"
"""`Ext(NEW, "Agent")`: constructing a project class that defines no constructor (a dataclass, a model)."""
_ACCESSORS = frozenset({"get", "pop", "setdefault", "at", "find", "shift", "popleft", "popitem", "__getitem__",
                        "next", "first", "last"})
_VIEWS = frozenset({"values", "items", "keys", "copy", "slice", "filter", "entries", "concat", "sort", "sorted",
                    "reversed", "toReversed", "toSorted", "flat", "splice"})

Callee = ir.Function | Ext | Unk
"""What a call may invoke: a project function, an external API, or an unknown chain."""

PY_BUILTINS = frozenset({
    "open", "print", "len", "range", "enumerate", "zip", "map", "filter", "sorted", "reversed", "list", "dict",
    "set", "tuple", "str", "int", "float", "bool", "bytes", "isinstance", "getattr", "setattr", "hasattr",
    "iter", "next", "min", "max", "sum", "any", "all", "repr", "type", "super", "id", "hash", "vars", "dir",
    "input", "exec", "eval", "compile", "format", "round", "abs", "divmod", "frozenset", "object", "property",
    "staticmethod", "classmethod", "Exception", "BaseException", "ValueError", "KeyError", "TypeError",
    "RuntimeError", "OSError", "IOError", "TimeoutError", "StopIteration", "StopAsyncIteration",
    "NotImplementedError", "AttributeError", "IndexError", "AssertionError", "PermissionError",
    "FileNotFoundError", "ConnectionError", "KeyboardInterrupt", "SystemExit", "GeneratorExit", "ExceptionGroup",
    "BaseExceptionGroup", "aiter", "anext", "callable", "memoryview", "bytearray", "slice", "__import__",
})
TS_GLOBALS = frozenset({
    "fetch", "setTimeout", "setInterval", "clearTimeout", "clearInterval", "setImmediate", "queueMicrotask",
    "JSON", "Promise", "Object", "Array", "Math", "Date", "console", "process", "Error", "TypeError",
    "RangeError", "AbortController", "AbortSignal", "Map", "Set", "WeakMap", "Symbol", "Number", "String",
    "Boolean", "structuredClone", "require", "Buffer", "URL", "Response", "Request", "Headers", "TextDecoder",
    "TextEncoder", "ReadableStream", "crypto", "globalThis", "window", "document", "performance", "atob", "btoa",
    "encodeURIComponent", "decodeURIComponent", "parseInt", "parseFloat", "isNaN", "EventSource", "WebSocket",
    "DOMException", "Reflect", "Proxy", "BigInt", "Intl", "RegExp", "Uint8Array", "ArrayBuffer",
})
_CONTAINERS = frozenset({
    "list", "List", "Sequence", "MutableSequence", "Iterable", "Iterator", "AsyncIterator", "AsyncIterable",
    "Generator", "AsyncGenerator", "set", "Set", "frozenset", "FrozenSet", "tuple", "Tuple", "deque", "Deque",
    "dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "defaultdict", "Array", "ReadonlyArray", "Map",
    "ReadonlyMap", "Record", "WeakMap", "AsyncIterableIterator", "IterableIterator", "Collection",
})
_TRANSPARENT = frozenset({"Optional", "Union", "Annotated", "Awaitable", "Coroutine", "Promise", "Final",
                          "ClassVar", "Required", "NotRequired", "ReadOnly", "Partial", "Readonly"})
_TOKEN = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*|[\[\]<>,|()]")
_SELF = frozenset({"self", "this"})
"""How a method names its own instance, in either language."""


def _cap(values: Iterable[Val]) -> Vals:
    """The distinct values, at most `_MAX_VALS` of them: when there are more, the first by `val_key`, so that which
    ones are kept never depends on the order sets happen to iterate in (string hashes vary from run to run, and a
    project object hashes by its address)."""
    out = set(values)
    if len(out) > _MAX_VALS:
        return frozenset(sorted(out, key=val_key)[:_MAX_VALS])
    return frozenset(out)


def val_key(v: Val) -> tuple:
    """A total order over values that is the same in every run: by kind, then by where the value was defined
    (a project function by its index, a class by its module and line) or by its name chain."""
    if isinstance(v, Fn):
        return ("Fn", v.fn.index)
    if isinstance(v, Inst | Klass):
        return (type(v).__name__, v.cls.module.path, v.cls.line, v.cls.qualname)
    if isinstance(v, Mod):
        return ("Mod", v.mod.path)
    if isinstance(v, Ext):
        return ("Ext", v.module, v.path)
    if isinstance(v, Unk):
        return ("Unk", v.chain)
    return ("Cont", tuple(sorted(val_key(x) for x in v.elem)))


# ---------------------------------------------------------------- bindings


class Binding:
    """One way a local name gets a value: `kind` is `value` (the expression), `elem` (an element of it: a
    loop target, a destructured position), `attr` (a destructured key `key`), `enter` (a `with` target),
    `exc` (an `except … as` name), `param`, `def` (a nested function or class). Not changed once made (a plain
    slotted class: a project makes one per assignment, and a frozen dataclass costs several times as much)."""

    __slots__ = ("kind", "expr", "key", "param", "fn", "cls", "line")

    def __init__(self, kind: str, expr: ir.Expr | None = None, key: str = "", param: ir.Param | None = None,
                 fn: ir.Function | None = None, cls: ir.Class | None = None, line: int = 0) -> None:
        self.kind = kind
        self.expr = expr
        self.key = key
        self.param = param
        self.fn = fn
        self.cls = cls
        self.line = line

    def __repr__(self) -> str:
        return f"Binding({self.kind!r}, line={self.line})"


_BINDERS = (ir.Assign, ir.Loop, ir.With, ir.Handler, ir.Def, ir.Op, ir.Comp)
"""The nodes that bind a local name (every other node is passed over at once)."""


class Facts:
    """The project's facts; build once with `Facts.build(modules)`."""

    def __init__(self, modules: Iterable[ir.Module], package: str = "") -> None:
        self.modules: dict[str, ir.Module] = {m.path: m for m in modules}
        self.functions: list[ir.Function] = []
        self.classes: list[ir.Class] = []
        for mod in self.modules.values():
            for fn in mod.functions:
                fn.index = len(self.functions)
                self.functions.append(fn)
            self.classes.extend(mod.classes)
        self._locator = ModuleLocator(self.modules, package)
        self._bindings: dict[int, dict[str, list[Binding]]] = {}
        self._top: dict[str, dict[str, list[Binding]]] = {}
        self._eval: dict[ir.Expr, Vals] = {}
        self._busy: set[ir.Expr] = set()
        self._looking: set[tuple[int, str]] = set()
        self._looked: dict[tuple[int, str], Vals] = {}
        self._fields: dict[ir.Class, dict[str, Vals]] = {}
        self._bases: dict[ir.Class, list[ir.Class]] = {}
        self._returns: dict[int, Vals] = {}
        self._callees: dict[ir.Call, tuple[Callee, ...]] = {}
        self._calls: dict[int, list[tuple[ir.Call, tuple[Callee, ...]]]] = {}
        self._callers: dict[int, list[tuple[ir.Function, ir.Call]]] | None = None
        self._import_cache: dict[tuple[str, str], Vals] = {}
        self._subclasses: dict[ir.Class, list[ir.Class]] | None = None
        self._ones: dict[Val, Vals] = {}

    @classmethod
    def build(cls, modules: Iterable[ir.Module]) -> Facts:
        return cls(modules)

    # ------------------------------------------------------------ bindings (def-use)

    def bindings(self, fn: ir.Function) -> dict[str, list[Binding]]:
        """Every binding of every local name of `fn` (not of nested functions)."""
        got = self._bindings.get(fn.index)
        if got is not None:
            return got
        out: dict[str, list[Binding]] = defaultdict(list)
        for p in fn.params:
            for name in p.names:
                out[name].append(Binding("param", param=p, line=p.line))
        for node in ir.walk_block(fn.body):
            if not isinstance(node, _BINDERS):
                continue
            if isinstance(node, ir.Assign):
                if node.op == "del":
                    continue
                for target in node.targets:
                    if node.value is None:
                        if isinstance(target, ir.Name) and node.type:
                            out[target.id].append(Binding("ann", key=node.type, line=node.line))
                        continue
                    value = node.value if node.op == "=" else node.value
                    self._bind(out, target, Binding("value", value, line=node.line), node.type)
            elif isinstance(node, ir.Loop) and node.kind == "for" and node.target is not None and node.iter is not None:
                self._bind(out, node.target, Binding("elem", node.iter, line=node.line), None)
            elif isinstance(node, ir.With):
                for value, target in node.items:
                    if target is not None:
                        self._bind(out, target, Binding("enter", value, line=node.line), None)
            elif isinstance(node, ir.Handler) and node.name:
                out[node.name].append(Binding("exc", line=node.line))
            elif isinstance(node, ir.Def):
                if node.fn is not None and node.fn.name:
                    out[node.fn.name].append(Binding("def", fn=node.fn, line=node.line))
                if node.cls is not None:
                    out[node.cls.name].append(Binding("def", cls=node.cls, line=node.line))
            elif isinstance(node, ir.Op) and node.op == ":=" and node.operands:
                self._bind(out, node.operands[0], Binding("value", node.operands[1], line=node.line), None)
            elif isinstance(node, ir.Comp):
                for target, it in node.targets:
                    self._bind(out, target, Binding("elem", it, line=node.line), None)
        self._bindings[fn.index] = dict(out)
        return self._bindings[fn.index]

    def _bind(self, out: dict[str, list[Binding]], target: ir.Expr, b: Binding, ann: str | None) -> None:
        if isinstance(target, ir.Name):
            out[target.id].append(b)
            if ann:
                out[target.id].append(Binding("ann", key=ann, line=b.line))
        elif isinstance(target, ir.Seq):
            for item in target.items:
                inner = item.value if isinstance(item, ir.Spread) else item
                self._bind(out, inner, Binding("elem", b.expr, line=b.line) if b.kind == "value" else b, None)
        elif isinstance(target, ir.Obj):
            for key, value in target.items:
                if isinstance(key, str):
                    local = value.operands[0] if isinstance(value, ir.Op) and value.op == "=" else value
                    self._bind(out, local, Binding("attr", b.expr, key=key, line=b.line), None)
                elif key is None:
                    self._bind(out, value, Binding("elem", b.expr, line=b.line), None)
        elif isinstance(target, ir.Op) and target.op == "=" and target.operands:  # a default in a pattern
            self._bind(out, target.operands[0], b, ann)
        elif isinstance(target, ir.Spread):
            self._bind(out, target.value, b, ann)

    def module_bindings(self, mod: ir.Module) -> dict[str, list[Binding]]:
        """Top-level names of a module (its body's locals)."""
        return self.bindings(mod.body)

    # ------------------------------------------------------------ name lookup

    def lookup(self, fn: ir.Function, name: str) -> Vals:
        """What `name`, used in `fn`, may stand for."""
        key = (fn.index, name)
        got = self._looked.get(key)
        if got is not None:
            return got
        if key in self._looking or len(self._looking) > _MAX_DEPTH:
            return frozenset({Unk(name)})
        self._looking.add(key)
        try:
            got = self._lookup(fn, name)
        finally:
            self._looking.discard(key)
        if len(got) == 1:
            got = self._one(got)
        self._looked[key] = got
        return got

    def _lookup(self, fn: ir.Function, name: str) -> Vals:
        scope: ir.Function | None = fn
        ts_this = name == "this" and fn.module.lang != "python"
        while scope is not None:
            if ts_this:
                if scope.cls is not None:
                    return frozenset({Inst(scope.cls)})
                if scope.kind != "lambda":  # a `function` rebinds `this`; only arrows see the enclosing one
                    return frozenset({Unk("this")})
            else:
                binds = self.bindings(scope).get(name)
                if binds:
                    return self._from_bindings(scope, binds)
            scope = scope.parent
        mod = fn.module
        imp = mod.imports.get(name)
        if imp is not None:
            return self._import(mod, imp)
        if mod.lang == "python":
            if name in PY_BUILTINS:
                return frozenset({Ext("builtins", name)})
        elif name in TS_GLOBALS:
            return frozenset({Ext("global", name)})
        return frozenset({Unk(name)})

    def _receiver_param(self, scope: ir.Function, p: ir.Param) -> Vals | None:
        """`self`/`cls` of a Python method: the first parameter, unless the method is static."""
        cls = scope.cls
        if cls is None or scope.module.lang != "python" or not scope.params or scope.params[0] is not p:
            return None
        decorators = {d.id for d in scope.decorators if isinstance(d, ir.Name)}
        if "staticmethod" in decorators:
            return None
        return frozenset({Klass(cls)}) if "classmethod" in decorators else frozenset({Inst(cls)})

    def _from_bindings(self, scope: ir.Function, binds: list[Binding]) -> Vals:
        out: list[Val] = []
        for b in binds:
            out.extend(self._binding_vals(scope, b))
        return _cap(out)

    def _binding_vals(self, scope: ir.Function, b: Binding) -> Vals:
        if b.kind == "value" and b.expr is not None:
            return self.eval(scope, b.expr)
        if b.kind == "elem" and b.expr is not None:
            return self.elements(self.eval(scope, b.expr))
        if b.kind == "attr" and b.expr is not None:
            return self.member(self.eval(scope, b.expr), b.key)
        if b.kind == "enter" and b.expr is not None:
            return self._entered(self.eval(scope, b.expr))
        if b.kind == "ann":
            return self.annotation(scope.module, b.key, scope)
        if b.kind == "param" and b.param is not None:
            p = b.param
            recv = self._receiver_param(scope, p)
            if recv is not None:
                return recv
            if p.type:
                got = self.annotation(scope.module, p.type, scope)
                if got:
                    return got
            if p.default is not None:
                got = self.eval(scope, p.default)
                if any(not isinstance(v, Unk) for v in got):
                    return got
            if p.kind == "star":
                return frozenset({Cont(frozenset({Unk(p.name)}))})
            return frozenset({Unk(p.name)})
        if b.kind == "def":
            if b.fn is not None:
                return frozenset({Fn(b.fn)})
            if b.cls is not None:
                return frozenset({Klass(b.cls)})
        return EMPTY

    def _entered(self, vals: Vals) -> Vals:
        out: list[Val] = []
        for v in vals:
            if isinstance(v, Inst):
                enter = self.method(v.cls, "__enter__") or self.method(v.cls, "__aenter__")
                out.extend(self.returns(enter) if enter is not None else (v,))
            else:
                out.append(v)
        return _cap(out)

    # ------------------------------------------------------------ imports

    def _import(self, mod: ir.Module, imp: ir.Import) -> Vals:
        key = (mod.path, imp.local)
        got = self._import_cache.get(key)
        if got is not None:
            return got
        self._import_cache[key] = frozenset({Ext(imp.source, "" if imp.name == "*" else imp.name)})  # cycle guard
        result = self._resolve_import(mod, imp.source, imp.name, 0)
        self._import_cache[key] = result
        return result

    def _resolve_import(self, mod: ir.Module, source: str, name: str, depth: int) -> Vals:
        target_path = self._locator.locate(mod.lang, mod.path, source)
        if target_path is None:
            if mod.lang == "python" and name != "*":
                sub = self._locator.submodule("python", source, name)
                sub_path = self._locator.locate("python", mod.path, sub) if sub else None
                if sub_path is not None:
                    return frozenset({Mod(self.modules[sub_path])})
            return frozenset({Ext(source, "" if name == "*" else name)})
        target = self.modules[target_path]
        if name == "*":
            return frozenset({Mod(target)})
        got = self.top_level(target, name, depth + 1)
        if got:
            return got
        if mod.lang == "python":
            sub = self._locator.submodule("python", source, name)
            sub_path = self._locator.locate("python", mod.path, sub) if sub else None
            if sub_path is not None:
                return frozenset({Mod(self.modules[sub_path])})
        return frozenset({Ext(source, name)})

    def top_level(self, mod: ir.Module, name: str, depth: int = 0) -> Vals:
        """What module-level `name` of `mod` is (its definitions, globals, imports and exports)."""
        if depth > 12:
            return EMPTY
        local = mod.exports.get(name, name)
        binds = self.module_bindings(mod).get(local)
        if binds:
            return self._from_bindings(mod.body, binds)
        imp = mod.imports.get(local)
        if imp is not None:
            return self._resolve_import(mod, imp.source, imp.name, depth)
        if mod.lang == "python" and mod.path.endswith("__init__.py"):
            pkg = mod.path[: -len("__init__.py")]
            for cand in (f"{pkg}{name}.py", f"{pkg}{name}/__init__.py"):
                if cand in self.modules:
                    return frozenset({Mod(self.modules[cand])})
        return EMPTY

    # ------------------------------------------------------------ types from annotations

    def annotation(self, mod: ir.Module, text: str, scope: ir.Function | None = None) -> Vals:
        """The values a type annotation (`Optional[OpenAI]`, `Map<string, Tool>`, `"Agent"`) describes."""
        tokens = _TOKEN.findall(text.replace('"', " ").replace("'", " "))
        vals, _ = self._ann(mod, tokens, 0, scope or mod.body)
        return vals

    def _ann(self, mod: ir.Module, tokens: list[str], i: int, scope: ir.Function) -> tuple[Vals, int]:
        out: list[Val] = []
        while i < len(tokens):
            tok = tokens[i]
            if tok in ("]", ">", ")", ","):
                return _cap(out), i
            if tok in ("|", "(", "[", "<"):
                i += 1
                continue
            name = tok
            i += 1
            args: list[Vals] = []
            if i < len(tokens) and tokens[i] in ("[", "<"):
                i += 1
                while i < len(tokens) and tokens[i] not in ("]", ">"):
                    got, j = self._ann(mod, tokens, i, scope)
                    args.append(got)
                    # a separator, or a stray closer (`)`) the inner parse stopped at: step over it
                    i = j + 1 if j < len(tokens) and (j == i or tokens[j] == ",") else j
                i += 1
            if i < len(tokens) and tokens[i] == "[" and i + 1 < len(tokens) and tokens[i + 1] == "]":
                # TS `Tool[]`
                i += 2
                out.append(Cont(self._named_type(mod, name, scope)))
                continue
            last = name.rsplit(".", 1)[-1]
            if last in ("Type", "type") and args:  # `type[Agent]`: the class itself, not an instance
                out.extend(Klass(v.cls) if isinstance(v, Inst) else v for a in args for v in a)
            elif last in _CONTAINERS:
                elem = args[-1] if args else EMPTY
                out.append(Cont(elem))
            elif last in _TRANSPARENT:
                for a in args:
                    out.extend(a)
            elif name not in ("None", "null", "undefined", "void", "any", "unknown", "never", "object", "str",
                              "string", "int", "float", "number", "bool", "boolean", "bytes", "Any"):
                out.extend(self._named_type(mod, name, scope))
        return _cap(out), i

    def _named_type(self, mod: ir.Module, name: str, scope: ir.Function) -> Vals:
        head, _, rest = name.partition(".")
        vals = self.lookup(scope, head)
        for part in rest.split(".") if rest else []:
            vals = self.member(vals, part)
        out: list[Val] = []
        for v in vals:
            if isinstance(v, Klass):
                out.append(Inst(v.cls))
            elif isinstance(v, Ext):
                out.append(v.called())
            elif isinstance(v, Unk):
                continue  # an unknown type name (a TS interface, a type variable) types nothing
            else:
                out.append(v)
        return _cap(out)

    # ------------------------------------------------------------ classes

    def bases(self, cls: ir.Class) -> list[ir.Class]:
        """The project classes `cls` inherits from, nearest first (its own class first)."""
        got = self._bases.get(cls)
        if got is not None:
            return got
        self._bases[cls] = [cls]
        out = [cls]
        scope = self._class_scope(cls)
        for b in cls.bases:
            for v in self.values(scope, b):
                if isinstance(v, Klass):
                    for c in self.bases(v.cls):
                        if c not in out:
                            out.append(c)
        self._bases[cls] = out
        return out

    def _class_scope(self, cls: ir.Class) -> ir.Function:
        for fn in cls.methods.values():
            if fn.parent is not None:
                return fn.parent
        return cls.module.body

    def subclasses(self, cls: ir.Class) -> list[ir.Class]:
        """Project classes that inherit from `cls` (itself excluded), and for an interface the classes that
        implement it (`class P implements ApiHandler`) with their own subclasses: a call through the interface
        dispatches to each of them."""
        if self._subclasses is None:
            table: dict[ir.Class, list[ir.Class]] = defaultdict(list)
            for c in self.classes:
                for b in self.bases(c)[1:]:
                    table[b].append(c)
            for iface, classes in self._implementers().items():
                for c in classes:
                    for sub in (c, *table.get(c, ())):
                        if sub not in table[iface]:
                            table[iface].append(sub)
            self._subclasses = dict(table)
        return self._subclasses.get(cls, [])

    def _implementers(self) -> dict[ir.Class, list[ir.Class]]:
        """Interface → the project classes that name it in `implements`."""
        table: dict[ir.Class, list[ir.Class]] = {}
        for c in self.classes:
            for expr in c.implements:
                for v in self.values(c.module.body, expr):
                    if isinstance(v, Klass) and v.cls is not c and v.cls.kind == "interface":
                        table.setdefault(v.cls, []).append(c)
        return table

    def method(self, cls: ir.Class, name: str) -> ir.Function | None:
        """Method `name` of `cls` or the nearest base that defines it."""
        for c in self.bases(cls):
            fn = c.methods.get(name)
            if fn is not None:
                return fn
        return None

    def fields(self, cls: ir.Class) -> dict[str, Vals]:
        """Field name → values, from annotations, class-level values and assignments to `self`/`this` fields in
        every method, through the bases."""
        got = self._fields.get(cls)
        if got is not None:
            return got
        self._fields[cls] = {}
        acc: dict[str, list[Val]] = defaultdict(list)
        for c in reversed(self.bases(cls)):
            scope = self._class_scope(c)
            for name, ann in c.fields.items():
                if ann:
                    acc[name].extend(self.annotation(c.module, ann, scope))
            for name, value in c.field_values.items():
                acc[name].extend(self.eval(scope, value))
            for m in c.methods.values():
                for p in m.params:
                    if p.kind == "field" and p.type:
                        acc[p.name].extend(self.annotation(c.module, p.type, m))
                for node in ir.walk_block(m.body):
                    if isinstance(node, ir.Assign) and node.value is not None and node.op == "=":
                        for t in node.targets:
                            if isinstance(t, ir.Attr) and isinstance(t.obj, ir.Name) and t.obj.id in _SELF:
                                acc[t.name].extend(self.eval(m, node.value))
                                if node.type:
                                    acc[t.name].extend(self.annotation(c.module, node.type, m))
        result = {k: _cap(v) for k, v in acc.items()}
        self._fields[cls] = result
        return result

    # ------------------------------------------------------------ expressions

    def eval(self, fn: ir.Function, e: ir.Expr) -> Vals:  # noqa: C901 - one case per expression kind
        """What expression `e`, evaluated in `fn`, may be."""
        key = e
        got = self._eval.get(key)
        if got is not None:
            return got
        if key in self._busy or len(self._busy) > _MAX_DEPTH:
            return EMPTY  # a cycle, or a chain of definitions too long to be worth following (not memoised)
        self._busy.add(key)
        try:
            out = self._eval_uncached(fn, e)
        except RecursionError:  # a pathological chain: what it stands for stays unknown, nothing else is lost
            out = frozenset({Unk(expr_chain(e) or "?")})
        finally:
            self._busy.discard(key)
        if len(out) == 1:
            out = self._one(out)
        self._eval[key] = out
        return out

    def values(self, fn: ir.Function, e: ir.Expr) -> list[Val]:
        """`eval`, in `val_key` order: for code that takes the first value that fits (a base class, a store, an
        API's name), so that it takes the same one in every run."""
        return sorted(self.eval(fn, e), key=val_key)

    def _one(self, vals: Vals) -> Vals:
        """The one set holding this single value: most results are one value, and equal ones are shared."""
        for v in vals:
            got = self._ones.get(v)
            if got is None:
                self._ones[v] = vals
                return vals
            return got
        return vals

    def _eval_uncached(self, fn: ir.Function, e: ir.Expr) -> Vals:  # noqa: C901 - one case per expression kind
        if isinstance(e, ir.Name):
            out = self.lookup(fn, e.id)
        elif isinstance(e, ir.Attr):
            out = self.member(self.eval(fn, e.obj), e.name)
        elif isinstance(e, ir.Call):
            out = self._call_result(fn, e)
        elif isinstance(e, ir.Await):
            out = self._awaited(self.eval(fn, e.value))
        elif isinstance(e, ir.Index):
            base = self.eval(fn, e.obj)
            if isinstance(e.key, ir.Slice):
                out = base
            elif isinstance(e.key, ir.Lit) and isinstance(e.key.value, str):
                out = _cap([*self.member(base, e.key.value), *self.elements(base)])
            else:
                out = self.elements(base)
        elif isinstance(e, ir.Cond):
            out = _cap([*self.eval(fn, e.then), *self.eval(fn, e.orelse)])
        elif isinstance(e, ir.Op):
            if e.op in ("or", "||", "??", "and", "&&") and e.operands:
                out = _cap(v for o in e.operands for v in self.eval(fn, o))
            elif e.op == ":=" and len(e.operands) == 2 or e.op == "=" and len(e.operands) == 2:
                out = self.eval(fn, e.operands[1])
            else:
                out = EMPTY
        elif isinstance(e, ir.FuncExpr):
            out = frozenset({Fn(e.fn)})
        elif isinstance(e, _LITERALS):
            out = _STR if isinstance(e, ir.Tmpl) or isinstance(e.value, str) else EMPTY
        elif isinstance(e, ir.Seq):
            out = frozenset({Cont(_cap(v for item in e.items for v in self.eval(fn, item)))})
        elif isinstance(e, ir.Obj):
            out = frozenset({Cont(_cap(v for _, item in e.items for v in self.eval(fn, item)))})
        elif isinstance(e, ir.Comp):
            out = frozenset({Cont(self.eval(fn, e.elt))})
        elif isinstance(e, ir.Other) and e.items and e.kind in ("non_null_expression", "as_expression",
                                                                "satisfies_expression", "type_assertion"):
            out = self.eval(fn, e.items[0])
        else:
            out = EMPTY
        if not out and isinstance(e, _CHAINS):
            out = frozenset({Unk(expr_chain(e) or "?")})  # nothing typed it: keep how it was reached
        return out

    def member(self, vals: Vals, name: str) -> Vals:
        """Attribute `name` of each value."""
        out: list[Val] = []
        for v in vals:
            if isinstance(v, Inst):
                m = self.method(v.cls, name)
                if m is not None:
                    out.append(Fn(m))
                    continue
                got = self.fields(v.cls).get(name)
                if got:
                    out.extend(got)
                else:
                    out.append(Unk(f"{v.cls.name}.{name}"))
            elif isinstance(v, Klass):
                m = self.method(v.cls, name)
                if m is not None:
                    out.append(Fn(m))
                else:
                    out.extend(self.fields(v.cls).get(name, EMPTY))
            elif isinstance(v, Mod):
                got = self.top_level(v.mod, name)
                out.extend(got if got else (Unk(f"{v.mod.path}:{name}"),))
            elif isinstance(v, _OUTSIDE):
                out.append(v.attr(name))
            elif isinstance(v, Cont):
                # a container's methods are one external API, whatever the container: `Ext("<container>",
                # "append")`; calling an accessor yields an element (see `_call_result`)
                out.append(Ext(CONTAINER, name))
        return _cap(out)

    def elements(self, vals: Vals) -> Vals:
        """What iterating over or indexing each value gives."""
        out: list[Val] = []
        for v in vals:
            if isinstance(v, Cont):
                out.extend(v.elem)
            elif isinstance(v, Ext):
                out.append(Ext(v.module, v.path + "[]"))
            elif isinstance(v, Unk):
                out.append(Unk(v.chain + "[]"))
        return _cap(out)

    def _awaited(self, vals: Vals) -> Vals:
        return vals

    def _call_result(self, fn: ir.Function, call: ir.Call) -> Vals:
        out: list[Val] = []
        funcs = self.eval(fn, call.func)
        for v in funcs:
            if isinstance(v, Fn):
                if v.fn.name in ("__init__", "constructor") and v.fn.cls is not None:
                    out.append(Inst(v.fn.cls))
                else:
                    out.extend(self.returns(v.fn))
            elif isinstance(v, Klass):
                out.append(Inst(v.cls))
            elif isinstance(v, Ext) and v.module == CONTAINER:
                owner = self.eval(fn, call.func.obj) if isinstance(call.func, ir.Attr) else EMPTY
                if v.path in _ACCESSORS:
                    out.extend(self.elements(owner))
                elif v.path in _VIEWS:
                    out.extend(c for c in owner if isinstance(c, Cont))
            elif isinstance(v, _OUTSIDE):
                out.append(v.called())
        return _cap(out)

    def returns(self, fn: ir.Function) -> Vals:
        """What `fn` returns: its annotation when it types something, else its `return` expressions."""
        got = self._returns.get(fn.index)
        if got is not None:
            return got
        self._returns[fn.index] = EMPTY
        out: list[Val] = []
        if fn.returns:
            out.extend(self.annotation(fn.module, fn.returns, fn))
        if not out:
            for node in ir.walk_block(fn.body):
                if isinstance(node, ir.Return) and node.value is not None:
                    out.extend(self.eval(fn, node.value))
        result = _cap(out)
        self._returns[fn.index] = result
        return result

    # ------------------------------------------------------------ calls

    def callees(self, fn: ir.Function, call: ir.Call) -> tuple[Callee, ...]:
        """What `call` (in `fn`) may invoke. A method call on a class also reaches the overrides of its
        subclasses (dynamic dispatch over-approximated); a constructor call reaches `__init__`/`constructor`."""
        key = call
        got = self._callees.get(key)
        if got is not None:
            return got
        out: list[Callee] = []
        for v in self.values(fn, call.func):  # the same callees in the same order every run
            if isinstance(v, Fn):
                if v.fn not in out:
                    out.append(v.fn)
                if v.fn.cls is not None and isinstance(call.func, ir.Attr):
                    for sub in self.subclasses(v.fn.cls):
                        over = sub.methods.get(v.fn.name)
                        if over is not None and over not in out:
                            out.append(over)
            elif isinstance(v, Klass):
                init = self.method(v.cls, "__init__") or self.method(v.cls, "constructor")
                made = init if init is not None else Ext(NEW, v.cls.qualname)
                if made not in out:
                    out.append(made)
            elif isinstance(v, _OUTSIDE) and v not in out:
                out.append(v)
        result = tuple(out[:_MAX_VALS])
        self._callees[key] = result
        return result

    def calls(self, fn: ir.Function) -> list[tuple[ir.Call, tuple[Callee, ...]]]:
        """Every call lexically in `fn` (not in nested functions) with its callees, in source order."""
        got = self._calls.get(fn.index)
        if got is not None:
            return got
        out = [(node, self.callees(fn, node)) for node in ir.walk_block(fn.body) if isinstance(node, ir.Call)]
        self._calls[fn.index] = out
        return out

    def callers(self, fn: ir.Function) -> list[tuple[ir.Function, ir.Call]]:
        """Where `fn` is called from."""
        if self._callers is None:
            table: dict[int, list[tuple[ir.Function, ir.Call]]] = defaultdict(list)
            for caller in self.functions:
                for call, callees in self.calls(caller):
                    for c in callees:
                        if isinstance(c, ir.Function):
                            table[c.index].append((caller, call))
            self._callers = dict(table)
        return self._callers.get(fn.index, [])

    def arguments_for(self, fn: ir.Function, param: ir.Param) -> list[tuple[ir.Function, ir.Expr]]:
        """What callers pass for `param` of `fn`: (caller, argument expression) for each call that gives it,
        positionally (a method's own receiver skipped) or by keyword."""
        if param not in fn.params:
            return []
        out: list[tuple[ir.Function, ir.Expr]] = []
        for caller, call in self.callers(fn):
            given = self.argument(fn, param, call)
            if given is not None:
                out.append((caller, given))
        return out

    def argument(self, fn: ir.Function, param: ir.Param, call: ir.Call) -> ir.Expr | None:
        """What one call of `fn` passes for `param`, positionally (a method's own receiver skipped) or by keyword."""
        given = call.keyword(param.name)
        if given is not None or param.kind != "pos":
            return given
        pos = fn.params.index(param)
        if fn.cls is not None and fn.module.lang == "python" and fn.params and fn.params[0].name in ("self", "cls"):
            pos -= 1
        if 0 <= pos < len(call.args) and not any(isinstance(a, ir.Spread) for a in call.args[:pos + 1]):
            return call.args[pos]
        return None

    def nested(self, fn: ir.Function) -> Iterator[ir.Function]:
        """Functions defined inside `fn` (lambdas, arrows, nested defs), at any depth."""
        for other in fn.module.functions:
            p = other.parent
            while p is not None:
                if p is fn:
                    yield other
                    break
                p = p.parent




def call_name(call: ir.Call) -> str:
    """The callee as written, dotted (`self.client.chat.completions.create`), '' when not a name chain."""
    return expr_chain(call.func)


def expr_chain(e: ir.Expr) -> str:
    """A name chain as written: `self.client.chat`, `make()().x`, `a[].b`; '' when it is not one."""
    parts: list[str] = []
    cur: ir.Expr = e
    while True:
        if isinstance(cur, ir.Attr):
            parts.append(cur.name)
            cur = cur.obj
        elif isinstance(cur, ir.Name):
            parts.append(cur.id)
            break
        elif isinstance(cur, ir.Call):
            parts.append("()")
            cur = cur.func
        elif isinstance(cur, ir.Index):
            parts.append("[]")
            cur = cur.obj
        elif isinstance(cur, ir.Await):
            cur = cur.value
        else:
            return ".".join(reversed(parts)) if parts else ""
    return ".".join(reversed(parts)).replace(".()", "()").replace(".[]", "[]")
