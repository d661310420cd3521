"""C14 · Prompt prefix determinism — Python rules.

Shapes detected:
- `volatile-value-in-prompt-prefix`: the current time, a uuid, a random value, the pid or the hostname flows into
  the system prompt or the tool definitions (followed through locals, `self` attributes, module globals and
  helper returns, two hops at most).
- `unordered-tool-registry-in-prefix`: tool definitions (or a tool listing in the system prompt) built by iterating
  a `set`, a directory listing or a registry filled from unsorted discovery.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from harness_audit.findings import CheckId, Verdict
from harness_audit.static import idioms
from harness_audit.static.lang.python import FuncRef, FunctionNode, PyModule, PyProject, child_nodes, subtree
from harness_audit.static.registry import Hit, rule

Scope = ast.FunctionDef | ast.AsyncFunctionDef | ast.Module

_VOLATILE = {
    "datetime.datetime.now": "the current time", "datetime.datetime.utcnow": "the current time",
    "datetime.datetime.today": "the current date", "datetime.date.today": "the current date",
    "time.time": "the current time", "time.time_ns": "the current time", "time.ctime": "the current time",
    "time.asctime": "the current time", "time.localtime": "the current time", "time.strftime": "the current time",
    "time.gmtime": "the current time", "pendulum.now": "the current time", "arrow.now": "the current time",
    "arrow.utcnow": "the current time", "uuid.uuid4": "a random uuid", "uuid.uuid1": "a time-based uuid",
    "os.getpid": "the process id", "os.urandom": "random bytes", "socket.gethostname": "the host name",
    "platform.node": "the host name",
}
_HOST_ONLY = {"socket.gethostname", "platform.node"}
_NOW_ARGLESS = {"time.ctime", "time.asctime", "time.localtime", "time.gmtime"}
_RANDOM_FUNCS = {"random", "randint", "choice", "choices", "sample", "shuffle", "uniform", "randrange", "getrandbits",
                 "token_hex", "token_urlsafe", "token_bytes"}
_VOLATILE_LAST = {idioms.last(k) for k in _VOLATILE} | _RANDOM_FUNCS
_LISTING_FUNCS = {"os.listdir", "os.scandir", "glob.glob", "glob.iglob", "os.walk", "pkgutil.iter_modules",
                  "pkgutil.walk_packages", "importlib.metadata.entry_points", "importlib_metadata.entry_points",
                  "pkg_resources.iter_entry_points"}
_LISTING_METHODS = {"iterdir", "glob", "rglob"}
_LISTING_LAST = {idioms.last(n) for n in _LISTING_FUNCS} | _LISTING_METHODS | {"entry_points", "iter_entry_points"}
_ENTRY_POINTS = {"importlib.metadata.entry_points", "importlib_metadata.entry_points",
                 "pkg_resources.iter_entry_points", "pkgutil.iter_modules", "pkgutil.walk_packages"}

_SYSTEM_KW = {"system", "system_prompt", "instructions", "system_instruction", "system_message", "preamble",
              "developer_message", "system_instructions"}
_TOOLS_KW = {"tools", "functions", "tool_definitions", "tool_specs", "tool_schemas"}
_SYSTEM_CTORS = {"SystemMessage", "SystemPromptPart", "SystemMessagePromptTemplate", "SystemContent"}
_SYSTEM_NAME = re.compile(r"((^|_)system_?(prompt|message|msg|instructions?|text|content|template)s?$|^system$|"
                          r"sys_?prompt|preamble$)", re.I)
_TOOLSPEC_NAME = re.compile(r"((tool|function)_?(spec|schema|definition|def|param|declaration)s?$|^self\.tools$|"
                            r"tools_?(schema|spec|param|json)s?$)", re.I)
_PREFIX_FN = re.compile(r"(system_?(prompt|message|msg|instructions?)|sys_?prompt|"
                        r"^_?(get|build|make|render|format|create|compose|generate)_?(the_)?(system|instructions|"
                        r"preamble|persona)$|^_?instructions$|preamble|(tool|function)s?_?(specs?|schemas?|"
                        r"definitions?|defs|params|declarations?)$|^_?(get|list)_?tools$|to_openai_tools|"
                        r"tools_?(schema|spec)s?$)", re.I)
_TEXT_CARRIERS = re.compile(r"^(str|repr|format|join|strftime|isoformat|dedent|indent|fill|wrap|replace|strip|lstrip|"
                            r"rstrip|upper|lower|title|encode|decode|dumps|render|substitute|safe_substitute|Template|"
                            r"cast|list|tuple|reversed|chain|concat|f)$|prompt|message|instruction|template|render|"
                            r"format|text|section|block|header|describe|summar", re.I)
_SPEC_CARRIERS = re.compile(r"spec|schema|tool|function|definition|param|json|dump|dict|list|tuple|map|filter|chain|"
                            r"cast|convert|format|prompt|message|instruction|template|render|text|join|str", re.I)
_META_KEYS = {"timestamp", "created_at", "created", "updated_at", "time", "ts", "id", "run_id", "request_id",
              "trace_id", "span_id", "metadata", "message_id", "event_id", "user", "extra_headers", "idempotency_key",
              "cache_key", "prompt_cache_key", "seed"}
_MAX_HOPS = 2


@dataclass
class _Flow:
    """A small intraprocedural taint: which nodes are sources and which names/attributes hold their values."""

    nodes: list[ast.AST]
    """The source expressions."""
    tainted: set[str] = field(default_factory=set[str])
    """Local names, `self.x` attributes and globals holding a source value."""
    sorted_cleans: bool = False
    """Whether `sorted(...)` / `.sort()` removes the taint (true for ordering, false for volatile content)."""
    carriers: set[int] | None = None
    """Ids of the expressions that carry a source upwards, computed on first use."""


@dataclass(frozen=True, slots=True)
class _Sink:
    """Where a tainted value lands on the prefix path."""

    node: ast.AST
    """The sink expression or statement."""
    what: str
    """How to describe it (`the system message`, `` `tools=` ``)."""
    kind: str
    """`system` or `tools`."""


def _keys(mod: PyModule, target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Attribute):
        dotted = mod.dotted(target)
        return [dotted] if dotted else []
    if isinstance(target, ast.Subscript):
        return _keys(mod, target.value)
    if isinstance(target, ast.Starred):
        return _keys(mod, target.value)
    if isinstance(target, ast.Tuple | ast.List):
        return [k for elt in target.elts for k in _keys(mod, elt)]
    return []


def _is_tainted(mod: PyModule, expr: ast.AST | None, flow: _Flow) -> bool:
    """Whether `expr` carries a source value: it holds a source, or reads a tainted name or attribute."""
    if expr is None:
        return False
    if id(expr) in _carriers_of_sources(mod, flow):
        return True
    return not flow.tainted.isdisjoint(_carried_names(mod, expr, flow.sorted_cleans))


def _carries_down(mod: PyModule, cur: ast.AST, ordering: bool) -> list[ast.AST]:
    """The children of `cur` whose value `cur`'s value carries on."""
    if isinstance(cur, ast.Lambda):
        return []
    if isinstance(cur, ast.Tuple) and not _formats_tuple(mod, cur):
        return []  # `(value, time.time())` stores a timestamp beside a value; it is not part of any text
    if isinstance(cur, ast.Call):
        func = cur.func
        if ordering and isinstance(func, ast.Name) and func.id == "sorted":
            return []
        out: list[ast.AST] = [func.value] if isinstance(func, ast.Attribute) else []
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        if (_SPEC_CARRIERS if ordering else _TEXT_CARRIERS).search(last):
            # text builders and converters carry their arguments; constructors and other calls do not
            out.extend(cur.args)
            out.extend(kw.value for kw in cur.keywords if kw.arg not in _META_KEYS)
        return out
    if isinstance(cur, ast.Dict):
        out = []
        for key, value in zip(cur.keys, cur.values, strict=True):
            if isinstance(key, ast.Constant) and key.value in _META_KEYS:
                continue
            out.append(value)
            if key is not None:
                out.append(key)
        return out
    return child_nodes(cur)


def _carried_names(mod: PyModule, expr: ast.AST, ordering: bool) -> frozenset[str]:
    """Names and dotted attributes whose values `expr` carries on (memoised: flows re-read the same scopes)."""
    key = id(expr) * 2 + ordering
    hit = _Memo.names.get(key)
    if hit is not None:
        return hit
    names: set[str] = set()
    stack: list[ast.AST] = [expr]
    while stack:
        cur = stack.pop()
        if isinstance(cur, ast.Name):
            names.add(cur.id)
        elif isinstance(cur, ast.Attribute):
            dotted = mod.dotted(cur)
            if dotted:
                names.add(dotted)
        stack.extend(_carries_down(mod, cur, ordering))
    found = frozenset(names)
    _Memo.names[key] = found
    return found


def _carriers_of_sources(mod: PyModule, flow: _Flow) -> set[int]:
    """Ids of the expressions that carry a source value upwards (the source, a string built from it, ...)."""
    if flow.carriers is not None:
        return flow.carriers
    carriers: set[int] = set()
    for source in flow.nodes:
        carriers.add(id(source))
        child: ast.AST = source
        for parent in mod.ancestors(source):
            if isinstance(parent, ast.stmt):
                break
            if isinstance(parent, ast.keyword):
                if parent.arg in _META_KEYS:
                    break
                child = parent
                continue
            down = _carries_down(mod, parent, flow.sorted_cleans)
            target = child.value if isinstance(child, ast.keyword | ast.Attribute) and isinstance(parent, ast.Call) \
                else child  # a call carries its receiver (`now().strftime(...)`) and keyword values directly
            passes = any(d is target or d is child for d in down)
            if not passes:
                break
            carriers.add(id(parent))
            child = parent
    flow.carriers = carriers
    return carriers


def _formats_tuple(mod: PyModule, tup: ast.Tuple) -> bool:
    """Whether a tuple literal carries its items on: formatted into text (`"%s" % (a, b)`, `"".join((a, b))`),
    returned as several results, or unpacked into several names.
    """
    parent = mod.parent(tup)
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Mod):
        return True
    if isinstance(parent, ast.Return | ast.Yield):
        return True
    if isinstance(parent, ast.Assign) and any(isinstance(t, ast.Tuple | ast.List) for t in parent.targets):
        return True
    return isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and parent.func.attr == "join"


_WRITE_METHODS = {"append", "extend", "insert", "add", "update", "appendleft", "write", "setdefault", "register"}


@dataclass(frozen=True, slots=True)
class _ScopeIndex:
    """The nodes of one scope that can move or land a value, collected once."""

    flow: list[ast.AST]
    """Assignments, loops and comprehensions, container writes and `.sort()` calls, in source order."""
    sinks: list[ast.AST]
    """Candidate prefix sinks: system/developer message literals, `system=`/`tools=` keywords, system message
    constructors, assignments to system-prompt or tool-spec names."""
    returns: list[ast.Return]
    """Return statements (a tainted one makes the scope a producer)."""


class _Memo:
    """Per-project memo of scope indexes, built one module at a time from the module's node indexes."""

    project: PyProject | None = None
    scopes: dict[int, _ScopeIndex] = {}
    modules: set[int] = set()
    globals: dict[int, set[str]] = {}
    names: dict[int, frozenset[str]] = {}


def _is_sink_candidate(mod: PyModule, node: ast.AST) -> bool:
    if isinstance(node, ast.Dict):
        return any(isinstance(k, ast.Constant) and k.value == "role" and isinstance(v, ast.Constant)
                   and v.value in {"system", "developer"} for k, v in zip(node.keys, node.values, strict=True))
    if isinstance(node, ast.Call):
        func = node.func
        last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return last in _SYSTEM_CTORS or any(kw.arg in _SYSTEM_KW or kw.arg in _TOOLS_KW for kw in node.keywords)
    if isinstance(node, ast.Assign | ast.AnnAssign):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            last = target.attr if isinstance(target, ast.Attribute) else target.id if isinstance(target, ast.Name) \
                else ""
            if last and (_SYSTEM_NAME.search(last) or _TOOLSPEC_NAME.search(last) or last == "tools"):
                return True
    return False


_FLOW_TYPES: tuple[type[ast.AST], ...] = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.NamedExpr, ast.For,
                                          ast.AsyncFor, ast.comprehension)


def _position(node: ast.AST) -> tuple[int, int]:
    at = node.iter if isinstance(node, ast.comprehension) else node
    return getattr(at, "lineno", 0), getattr(at, "col_offset", 0)


def _index_module(mod: PyModule) -> None:
    """Sort the module's relevant nodes into per-scope indexes (a class body counts as module scope)."""
    relevant: list[tuple[ast.AST, int]] = []  # node, 0 flow / 1 return / 2 sink / 3 flow and sink
    for kind in _FLOW_TYPES:
        relevant.extend((n, 3 if _is_sink_candidate(mod, n) else 0) for n in mod.nodes(kind))
    relevant.extend((n, 1) for n in mod.nodes(ast.Return))
    relevant.extend((d, 2) for d in mod.nodes(ast.Dict) if _is_sink_candidate(mod, d))
    for call in mod.calls():
        func = call.func
        writes = isinstance(func, ast.Attribute) and (func.attr in _WRITE_METHODS or func.attr == "sort")
        sink = (call.keywords or isinstance(func, ast.Name | ast.Attribute)) and _is_sink_candidate(mod, call)
        if writes or sink:
            relevant.append((call, (3 if sink else 0) if writes else 2))
    relevant.sort(key=lambda pair: _position(pair[0]))
    for node, role in relevant:
        scope: Scope = mod.enclosing_function(node) or mod.tree
        index = _Memo.scopes.get(id(scope))
        if index is None:
            index = _ScopeIndex([], [], [])
            _Memo.scopes[id(scope)] = index
        if role in (0, 3):
            index.flow.append(node)
        if role == 1:
            index.returns.append(node)  # type: ignore[arg-type]  # role 1 is only given to `ast.Return`
        if role in (2, 3):
            index.sinks.append(node)
    _Memo.globals[id(mod)] = {k for stmt in mod.tree.body if isinstance(stmt, ast.Assign | ast.AnnAssign)
                              for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
                              for k in _keys(mod, t)}


def _scope_index(mod: PyModule, project: PyProject, scope: Scope) -> _ScopeIndex:
    if _Memo.project is not project:
        _Memo.project, _Memo.scopes, _Memo.modules, _Memo.globals, _Memo.names = project, {}, set(), {}, {}
    if id(mod) not in _Memo.modules:
        _Memo.modules.add(id(mod))
        _index_module(mod)
    return _Memo.scopes.get(id(scope)) or _ScopeIndex([], [], [])


def _propagate(mod: PyModule, nodes: list[ast.AST], flow: _Flow) -> None:
    """Spread the taint through assignments, loops, container writes; two passes cover loop-carried values."""
    for _ in range(2):
        before = len(flow.tainted)
        for node in nodes:
            if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.NamedExpr):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if _is_tainted(mod, node.value, flow):
                    flow.tainted.update(k for t in targets for k in _keys(mod, t))
            elif isinstance(node, ast.For | ast.AsyncFor | ast.comprehension):
                if _is_tainted(mod, node.iter, flow):
                    flow.tainted.update(_keys(mod, node.target))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                recv = _keys(mod, node.func.value)
                if node.func.attr == "sort":
                    if flow.sorted_cleans:
                        flow.tainted.difference_update(recv)
                elif any(_is_tainted(mod, a, flow) for a in [*node.args, *(kw.value for kw in node.keywords)]):
                    flow.tainted.update(recv)
        if len(flow.tainted) == before:
            break


def _fn_name(scope: Scope) -> str:
    return "" if isinstance(scope, ast.Module) else scope.name


def _find_sink(mod: PyModule, scope: Scope, index: _ScopeIndex, flow: _Flow) -> _Sink | None:
    for node in index.sinks:
        if isinstance(node, ast.Dict):
            pairs = {k.value: v for k, v in zip(node.keys, node.values, strict=True)
                     if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            role = pairs.get("role")
            if isinstance(role, ast.Constant) and _is_tainted(mod, pairs.get("content"), flow) and \
                    not _tail_reminder(mod, node):
                return _Sink(node, f"the `{role.value}` message", "system")
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg in _SYSTEM_KW and _is_tainted(mod, kw.value, flow):
                    return _Sink(node, f"`{kw.arg}=` of `{mod.call_name(node) or 'the request'}`", "system")
                if kw.arg in _TOOLS_KW and _is_tainted(mod, kw.value, flow) and \
                        (kw.arg == "tools" or idioms.is_model_call(mod, node)):
                    return _Sink(node, f"`{kw.arg}=` of `{mod.call_name(node) or 'the request'}`", "tools")
            name = mod.call_name(node) or ""
            if idioms.last(name) in _SYSTEM_CTORS:
                content = mod.keyword(node, "content") or (node.args[0] if node.args else None)
                if _is_tainted(mod, content, flow):
                    return _Sink(node, f"`{idioms.last(name)}`", "system")
        elif isinstance(node, ast.Assign | ast.AnnAssign) and _is_tainted(mod, node.value, flow):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for key in (k for t in targets for k in _keys(mod, t)):
                if _SYSTEM_NAME.search(idioms.last(key)):
                    return _Sink(node, f"`{key}`", "system")
                if _TOOLSPEC_NAME.search(key if key.startswith("self.") else idioms.last(key)):
                    return _Sink(node, f"`{key}`", "tools")
    if _PREFIX_FN.search(_fn_name(scope)):
        for ret in index.returns:
            if _is_tainted(mod, ret.value, flow):
                kind = "tools" if re.search(r"tool|function", _fn_name(scope), re.I) else "system"
                return _Sink(ret, f"the return value of `{_fn_name(scope)}`", kind)
    return None


def _tail_reminder(mod: PyModule, message: ast.Dict) -> bool:
    """A system message appended inside a loop: a per-turn reminder at the tail, not part of the shared prefix."""
    parent = mod.parent(message)
    return isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute) and \
        parent.func.attr == "append" and bool(mod.enclosing_loops(parent))


class _Callers:
    """Project-wide index: function name → the calls that may reach it, in module and source order (per project,
    filled one name at a time from each module's call index)."""

    project: PyProject | None = None
    by_name: dict[str, list[tuple[PyModule, ast.Call]]] = {}


def _callers(project: PyProject, ref: FuncRef) -> Iterator[tuple[PyModule, ast.Call]]:
    if _Callers.project is not project:
        _Callers.project, _Callers.by_name = project, {}
    name = ref.node.name
    calls = _Callers.by_name.get(name)
    if calls is None:
        calls = _Callers.by_name[name] = [(mod, call) for mod in project.modules.values()
                                          for call in mod.calls_to((name,))]
    for mod, call in calls:
        if any(target.node is ref.node for target in project.resolve_call(mod, call)):
            yield mod, call


def _scope_of(mod: PyModule, node: ast.AST) -> Scope:
    return mod.enclosing_function(node) or mod.tree


def _is_global(mod: PyModule, key: str) -> bool:
    """Whether `key` names a module-level variable (assigned at the top of the module)."""
    if "." in key:
        return False
    names = _Memo.globals.get(id(mod))
    if names is None:
        names = {k for stmt in mod.tree.body if isinstance(stmt, ast.Assign | ast.AnnAssign)
                 for t in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]) for k in _keys(mod, t)}
        _Memo.globals[id(mod)] = names
    return key in names


def _readers(mod: PyModule, scope: Scope, keys: set[str]) -> list[FunctionNode]:
    """Other functions of the module that read a tainted `self.x` (same class) or module global."""
    cls = mod.enclosing_class(scope) if not isinstance(scope, ast.Module) else None
    found: dict[int, FunctionNode] = {}
    attrs = {k.rsplit(".", 1)[-1]: k for k in keys if k.startswith("self.")}
    names = {k for k in keys if "." not in k}
    candidates: list[ast.AST] = []
    if attrs and cls is not None:
        candidates.extend(n for n in mod.nodes(ast.Attribute, any_order=True)
                          if n.attr in attrs and mod.dotted(n) == attrs[n.attr])
    if names:
        candidates.extend(n for n in mod.nodes(ast.Name, any_order=True) if n.id in names and isinstance(n.ctx, ast.Load))
    for node in candidates:  # in any order: the readers are returned sorted by line
        fn = mod.enclosing_function(node)
        if fn is None or fn is scope or id(fn) in found:
            continue
        if isinstance(node, ast.Attribute) and mod.enclosing_class(fn) is not cls:
            continue
        found[id(fn)] = fn
    return sorted(found.values(), key=lambda f: f.lineno)


def _trace(mod: PyModule, project: PyProject, scope: Scope, flow: _Flow, hops: int) -> _Sink | None:
    """Follow the flow inside `scope`, then into sibling readers and callers, `hops` steps at most."""
    index = _scope_index(mod, project, scope)
    _propagate(mod, index.flow, flow)
    sink = _find_sink(mod, scope, index, flow)
    if sink is not None or hops <= 0:
        return sink
    shared = {k for k in flow.tainted if k.startswith("self.") or _is_global(mod, k)}
    if shared:
        for other in _readers(mod, scope, shared):
            found = _trace(mod, project, other, _Flow([], set(shared), flow.sorted_cleans), hops - 1)
            if found is not None:
                return found
    if isinstance(scope, ast.Module):
        return None
    if not any(_is_tainted(mod, ret.value, flow) for ret in index.returns):
        return None
    for caller_mod, call in _callers(project, FuncRef(mod, scope)):
        found = _trace(caller_mod, project, _scope_of(caller_mod, call), _Flow([call], set(), flow.sorted_cleans),
                       hops - 1)
        if found is not None:
            return _Sink(found.node, f"{found.what} (in `{caller_mod.path}`)" if caller_mod is not mod
                         else found.what, found.kind)
    return None


def _under_sorted(mod: PyModule, node: ast.AST) -> bool:
    for anc in mod.ancestors(node):
        if isinstance(anc, ast.Call) and mod.call_name(anc) == "sorted":
            return True
        if isinstance(anc, ast.stmt):
            return False
    return False


def _clock_arithmetic(mod: PyModule, call: ast.Call) -> bool:
    """`time.time() - start`, `time.time() > deadline`, `log(time.time())`: a clock read used for timing or
    logging, whose value does not become prompt text."""
    parent = mod.parent(call)
    if isinstance(parent, ast.Compare) or (isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Sub | ast.Add)
                                           and not _is_text(parent.left) and not _is_text(parent.right)):
        return True
    return isinstance(parent, ast.Expr)


def _is_text(expr: ast.AST) -> bool:
    return isinstance(expr, ast.JoinedStr) or (isinstance(expr, ast.Constant) and isinstance(expr.value, str))


def _volatile_source(mod: PyModule, call: ast.Call) -> str | None:
    func = call.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if last not in _VOLATILE_LAST:
        return None
    name = mod.call_name(call)
    if name in _VOLATILE:
        if name in _NOW_ARGLESS and call.args:
            return None
        if name == "time.strftime" and len(call.args) > 1:
            return None
        return name
    if last in _RANDOM_FUNCS and name.split(".")[0] in {"random", "secrets", "numpy"}:
        return name
    return None


_SUB_DAY = re.compile(r"%[HIMSfcXsTRrpkl]")
"""strftime directives finer than a day (hour, minute, second, the locale's date-and-time)."""


def _day_granular(mod: PyModule, call: ast.Call) -> bool:
    """Whether the clock value is a calendar day: `now().strftime("%B %d, %Y")` with no hour, minute or second,
    `now().date()`, `date.today()`."""
    outer = mod.parent(call)
    use = mod.parent(outer) if isinstance(outer, ast.Attribute) else None
    if isinstance(outer, ast.Attribute) and isinstance(use, ast.Call) and use.func is outer:
        if outer.attr == "date" and not use.args:
            return True
        if outer.attr == "strftime" and use.args and isinstance(use.args[0], ast.Constant) \
                and isinstance(use.args[0].value, str):
            return _SUB_DAY.search(use.args[0].value) is None
    return idioms.last(mod.call_name(call) or "") == "today"


def _memo_guarded(mod: PyModule, call: ast.Call) -> bool:
    """Whether `call` runs only inside `if X is None:` whose block then assigns `X`: once per object."""
    child: ast.AST = call
    for anc in mod.ancestors(call):
        if isinstance(anc, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return False
        if isinstance(anc, ast.If) and child in anc.body and isinstance(anc.test, ast.Compare) \
                and len(anc.test.ops) == 1 and isinstance(anc.test.ops[0], ast.Is) \
                and isinstance(anc.test.comparators[0], ast.Constant) and anc.test.comparators[0].value is None:
            held = mod.dotted(anc.test.left)
            if held and any(isinstance(st, ast.Assign) and any(mod.dotted(t) == held for t in st.targets)
                            for st in anc.body):
                return True
        child = anc
    return False


def _built_once(mod: PyModule, project: PyProject, sink: _Sink) -> bool:
    """Whether the prompt is the return value of a function of `mod` whose every project caller builds it once per
    object (`if self._chat is None: prompt = build_system_prompt(...); self._chat = Chat(prompt)`)."""
    fn = mod.enclosing_function(sink.node) if isinstance(sink.node, ast.Return) else None
    if fn is None or not any(f is fn for kind in (ast.FunctionDef, ast.AsyncFunctionDef)
                             for f in mod.nodes(kind, any_order=True)):
        return False
    callers = list(_callers(project, FuncRef(mod, fn)))
    return bool(callers) and all(_memo_guarded(cmod, call) for cmod, call in callers)


@rule(CheckId.C14, lang="python", name="volatile-value-in-prompt-prefix")
def volatile_value_in_prompt_prefix(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags the current time or date, a uuid, a random value, the pid or the hostname that flows into the system
    prompt or the tool definitions: every request then starts with different bytes and the provider's prefix
    cache never hits. A calendar day in a prompt built once per object (every caller sits in `if self.x is None:`
    that then assigns `self.x`) is the same for every request of the run.
    """
    found: dict[int, tuple[ast.Call, str, _Sink, bool]] = {}
    for call in mod.calls_to(_VOLATILE_LAST):
        name = _volatile_source(mod, call)
        if name is None or (name != "random.shuffle" and _clock_arithmetic(mod, call)):
            continue
        scope = _scope_of(mod, call)
        flow = _Flow([call])
        if name == "random.shuffle" and call.args:
            flow.tainted.update(_keys(mod, call.args[0]))
        sink = _trace(mod, project, scope, flow, _MAX_HOPS)
        if sink is None:
            continue
        # one finding per sink: prefer the source written inside the sink itself over one that reaches it
        inside = any(anc is sink.node for anc in mod.ancestors(call))
        held = found.get(id(sink.node))
        if held is None or (inside and not held[3]):
            found[id(sink.node)] = (call, name, sink, inside)
    for call, name, sink, _inside in sorted(found.values(), key=lambda f: f[0].lineno):
        if _day_granular(mod, call) and _built_once(mod, project, sink):
            continue  # the day is fixed when the object is built: every request of its run shares the prefix
        what = _VOLATILE.get(name, "a random value")
        once = _scope_of(mod, call) is mod.tree
        uncertain = once or name in _HOST_ONLY
        yield Hit(
            node=call,
            verdict=Verdict.SUSPECTED if uncertain else Verdict.CONFIRMED,
            claim=f"`{mod.segment(call)}` ({what}) flows into {sink.what}, part of the cached prompt prefix",
            consequence="the prefix differs between requests (or sessions), so the provider's prompt cache never "
                        "hits and every request is billed at full price",
            direction="keep the system prompt and tool definitions constant; pass volatile values such as the date "
                      "in the last user message",
            confirm_hint="" if not uncertain else (
                "verify whether several processes or restarts share this prompt: the value is fixed once per "
                "process, so only the cross-process prefix differs" if once else
                "verify whether requests are served from several hosts; the prefix differs per host"),
        )


_SET_TYPES = {"set", "Set", "frozenset", "FrozenSet", "MutableSet", "AbstractSet"}


def _set_names(mod: PyModule) -> set[str]:
    """Names and `self.x` attributes of the module that hold a `set` (by value or annotation)."""
    out: set[str] = set()
    for node in [*mod.nodes(ast.Assign), *mod.nodes(ast.AnnAssign)]:
        value = node.value
        setish = isinstance(value, ast.Set | ast.SetComp) or (
            isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in {"set", "frozenset"})
        if isinstance(node, ast.AnnAssign):
            ann = node.annotation.value if isinstance(node.annotation, ast.Subscript) else node.annotation
            last = ann.attr if isinstance(ann, ast.Attribute) else ann.id if isinstance(ann, ast.Name) else ""
            setish = setish or last in _SET_TYPES
        if setish:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            out.update(k for t in targets for k in _keys(mod, t))
    return out


def _listing(mod: PyModule, expr: ast.AST) -> str | None:
    """The discovery call an iterable comes straight from (`os.listdir(d)`, `d.glob("*.py")`, `entry_points()`)."""
    call = expr
    while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and \
            call.func.attr in {"values", "items", "keys", "select"}:
        call = call.func.value
    if not isinstance(call, ast.Call):
        return None
    func = call.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if last not in _LISTING_LAST:
        return None
    name = mod.call_name(call) or ""
    if name in _LISTING_FUNCS or name in {"entry_points", "iter_entry_points"}:
        return name
    if isinstance(call.func, ast.Attribute) and call.func.attr in _LISTING_METHODS and name.split(".")[0] != "glob":
        return name
    return None


def _discovery_registries(mod: PyModule) -> dict[str, tuple[str, ast.AST]]:
    """Registries filled while iterating an unsorted listing (`for f in os.listdir(d): TOOLS[name] = ...`),
    with the listing and the filling loop.
    """
    out: dict[str, tuple[str, ast.AST]] = {}
    for loop in [*mod.nodes(ast.For), *mod.nodes(ast.AsyncFor)]:
        source = _listing(mod, loop.iter)
        if source is None or _under_sorted(mod, loop.iter):
            continue
        for node in mod.walk_body(loop.body):
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Subscript):
                        out.update(dict.fromkeys(_keys(mod, target.value), (source, loop)))
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in {"register", "add", "append", "update", "setdefault"}:
                out.update(dict.fromkeys(_keys(mod, node.func.value), (source, loop)))
    return out


def _unordered(mod: PyModule, expr: ast.AST, sets: set[str],
               registries: dict[str, tuple[str, ast.AST]]) -> tuple[str, ast.AST | None] | None:
    """Why iterating `expr` has no stable order (and the discovery loop behind it), or None when it has one."""
    listing = _listing(mod, expr)
    if listing is not None:
        return f"`{listing}` (directory/discovery order)", None
    if isinstance(expr, ast.Set | ast.SetComp):
        return "a set literal", None
    base = expr
    if isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute) and base.func.attr in {"values", "items",
                                                                                                   "keys"}:
        base = base.func.value
    if isinstance(base, ast.Call) and isinstance(base.func, ast.Name) and base.func.id in {"set", "frozenset"}:
        return "a set", None
    if not sets and not registries:
        return None
    key = mod.dotted(base) or ""
    if not key:
        return None
    if key in sets and base is expr:
        return f"the set `{key}`", None
    if key in registries:
        listing, loop = registries[key]
        shared = key.startswith("self.") or _is_global(mod, key)
        if shared or mod.enclosing_function(loop) is mod.enclosing_function(expr):
            return f"`{key}`, filled in `{listing}` order", loop
    return None


def _last_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _sorts_keys(call: ast.Call) -> bool:
    value = PyModule.keyword(call, "sort_keys")
    return value is not None and not (isinstance(value, ast.Constant) and not value.value)


def _ordering_sources(mod: PyModule) -> Iterator[tuple[ast.AST, ast.AST, str, ast.AST | None]]:
    """(node to cite, node whose value is unordered, why, discovery loop behind it) for each iteration over an
    unordered collection; loops first, so a discovery loop is cited before the registry it fills.
    """
    sets = _set_names(mod)
    registries = _discovery_registries(mod)
    for loop in [*mod.nodes(ast.For), *mod.nodes(ast.AsyncFor)]:
        found = _unordered(mod, loop.iter, sets, registries)
        if found is not None and not _under_sorted(mod, loop.iter):
            yield loop, loop.target, found[0], found[1]
    for comp in [*mod.nodes(ast.ListComp), *mod.nodes(ast.GeneratorExp)]:
        found = _unordered(mod, comp.generators[0].iter, sets, registries)
        if found is not None and not _under_sorted(mod, comp):
            yield comp, comp, found[0], found[1]
    for call in mod.calls():
        func = call.func
        if isinstance(func, ast.Name) and func.id in {"list", "tuple"} and len(call.args) == 1 and \
                not _under_sorted(mod, call):
            found = _unordered(mod, call.args[0], sets, registries)
            if found is not None:
                yield call, call, found[0], found[1]
        elif _last_name(call) == "dumps" and call.args and registries and not _sorts_keys(call):
            # `json.dumps(TOOLS)` writes the registry's keys in the order discovery filled them
            found = _unordered(mod, call.args[0], set(), registries)
            if found is not None:
                yield call, call, f"{found[0]} (serialised without `sort_keys=True`)", found[1]


_TOOLISH_WORD = re.compile(r"(tool|function|skill|plugin|command|action|spec|schema|capabilit|mcp|server)", re.I)


def _toolish(node: ast.AST) -> bool:
    """Whether an iteration handles tools: a tool-ish name in the collection, the loop variable or the body."""
    for sub in subtree(node):
        if isinstance(sub, ast.Name) and _TOOLISH_WORD.search(sub.id):
            return True
        if isinstance(sub, ast.Attribute) and _TOOLISH_WORD.search(sub.attr):
            return True
        if isinstance(sub, ast.arg) and _TOOLISH_WORD.search(sub.arg):
            return True
    return False


@rule(CheckId.C14, lang="python", name="unordered-tool-registry-in-prefix")
def unordered_tool_registry_in_prefix(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags tool definitions (or a tool listing in the system prompt) built by iterating a `set`, a directory
    listing or a registry filled from unsorted discovery: the tool order, and with it the prompt prefix, changes
    between processes, so the prefix cache misses.
    """
    reported: set[int] = set()
    sinks: set[int] = set()
    for cite, value, why, behind in _ordering_sources(mod):
        if behind is not None and id(behind) in reported:
            continue  # the discovery loop that filled this registry is already reported
        if not _toolish(cite):
            continue  # the order of other collections (ids, names, flags) does not reach tool definitions
        scope = _scope_of(mod, cite)
        flow = _Flow([value], sorted_cleans=True)
        if isinstance(cite, ast.For | ast.AsyncFor):
            flow.tainted.update(_keys(mod, cite.target))
        sink = _trace(mod, project, scope, flow, _MAX_HOPS)
        if sink is None or id(sink.node) in sinks:
            continue
        sinks.add(id(sink.node))
        reported.add(id(cite))
        entry_points = any(e in why for e in _ENTRY_POINTS) or "entry_points" in why
        yield Hit(
            node=cite,
            verdict=Verdict.SUSPECTED if entry_points else Verdict.CONFIRMED,
            claim=f"{'tool definitions' if sink.kind == 'tools' else 'the system prompt'} are built by iterating "
                  f"{why} without `sorted(...)`; the order reaches {sink.what}",
            consequence="the tool order differs between processes, so the serialised prefix differs and the "
                        "provider's prompt cache misses on every new process",
            direction="iterate `sorted(tools, key=lambda t: t.name)` (or keep the registry in a fixed order) before "
                      "building tool definitions",
            confirm_hint="verify that the installed entry points are always discovered in the same order on every "
                         "host" if entry_points else "",
        )
