"""Effect summaries: what calling a function may do, propagated over the call graph to a fixpoint.

A call's *direct* effects come from the API tables (`apis.py`) applied to its external callees; a
function's summary is the union of its calls' effects, including those of the project functions it calls
and of the functions it hands to others as callbacks (a lambda given to `gather`, a retry helper, a
`Promise` executor). Each effect keeps where it originates (the function and the call), so a query can
cite the origin and list the path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property

from harness_audit.static.lang import same_origin_request
from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.facts import Ext, Facts, Fn, Unk
from harness_audit.static.sem.flow import Raising

HTTP_SEND = "http-send"
"""An HTTP request that may change something (POST, PUT, PATCH, DELETE, or a verb we cannot tell)."""
HTTP_GET = "http-get"
"""An HTTP request that reads (GET, HEAD, OPTIONS)."""
SIDE_EFFECTS = frozenset({HTTP_SEND, apis.SPAWN, apis.FS_WRITE, apis.FS_RENAME})
"""Effects a repeat would repeat in the world (C9)."""


@dataclass(frozen=True, slots=True)
class Effect:
    """One effect and where it originates."""

    kind: str
    detail: str
    fn: ir.Function
    """The function holding the originating call."""
    call: ir.Call
    """The originating call."""
    by_name: bool = False
    """Matched on an untyped receiver's names only."""


Summary = dict[str, Effect]
_NO_EFFECTS: tuple[Effect, ...] = ()
_CallInfo = tuple[tuple[Effect, ...], tuple[ir.Function, ...] | None]
"""What is kept per call: its direct effects, and the functions handed to it once the fixpoint has looked (None
before)."""
_OUTSIDE = (Ext, Unk)
_NAMED = (ir.Name, ir.Attr)
_UNSEEN: _CallInfo = (_NO_EFFECTS, None)
_PLAIN: _CallInfo = (_NO_EFFECTS, ())
"""Most calls: no direct effect, no function handed (one shared record)."""


class Summaries:
    """Direct and transitive effects of every function of a project."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self._calls: dict[ir.Call, _CallInfo] = {}
        self._fn: dict[int, Summary] | None = None
        self._edges: dict[int, list[int]] = {}
        self._cycles: dict[int, int] | None = None
        self._sites: dict[str, list[tuple[ir.Function, ir.Call]]] | None = None

    @cached_property
    def raising(self) -> Raising:
        """Which functions may raise to their caller, and each function's control flow with its exception and
        cancellation edges (`flow.py`)."""
        return Raising(self.facts)

    # ------------------------------------------------------------ direct effects

    def direct(self, fn: ir.Function, call: ir.Call) -> tuple[Effect, ...]:
        """The effects of `call` itself (its external callees), not of project functions it reaches."""
        got = self._calls.get(call)
        if got is not None:
            return got[0]
        out: list[Effect] = []
        for callee in self.facts.callees(fn, call):
            if isinstance(callee, _OUTSIDE):
                for api in apis.apis_of(callee):
                    kind = api.kind
                    detail = api.detail
                    if kind == apis.HTTP:
                        verb = http_verb(callee, call)
                        kind = HTTP_GET if verb in ("get", "head", "options") else HTTP_SEND
                        detail = verb
                        if not _same_origin(callee, call) and self._posts_to_model(fn, call):
                            # a model request is one, whatever its verb: repeating it changes nothing outside
                            out.append(Effect(apis.MODEL, "http", fn, call, isinstance(callee, Unk)))
                            continue
                    elif kind == apis.FS_WRITE and isinstance(callee, Ext) and callee.plain in ("open",):
                        continue
                    out.append(Effect(kind, detail, fn, call, isinstance(callee, Unk)))
                if isinstance(callee, Ext) and callee.module in ("builtins", "aiofiles", "io", "codecs") and \
                        callee.plain.endswith("open") and _write_mode(call):
                    out.append(Effect(apis.FS_WRITE, "open", fn, call))
        if not out:
            self._calls[call] = _UNSEEN
            return _NO_EFFECTS
        result = tuple(out)
        self._calls[call] = (result, None)
        return result

    def _posts_to_model(self, fn: ir.Function, call: ir.Call) -> bool:
        """The request goes to a provider endpoint: a model path in its URL, or in what the URL was built from
        (`url = urljoin(base, "chat/completions")`, a module constant), a few assignments back."""
        todo: list[tuple[ir.Node, int]] = [(call, 0)]
        seen: set[int] = set()
        while todo:
            node, depth = todo.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if _model_url_in(node):
                return True
            if depth >= 3:
                continue
            for n in ir.walk(node):
                if isinstance(n, ir.Name):
                    scope: ir.Function | None = fn
                    while scope is not None:
                        binds = self.facts.bindings(scope).get(n.id)
                        if binds:
                            todo.extend((b.expr, depth + 1) for b in binds if b.expr is not None)
                            break
                        scope = scope.parent
        return False

    def sites(self, kind: str) -> list[tuple[ir.Function, ir.Call]]:
        """Every call with a direct effect of `kind`, in function and source order."""
        if self._sites is None:
            table: dict[str, list[tuple[ir.Function, ir.Call]]] = {}
            for fn in self.facts.functions:
                for call, _ in self.facts.calls(fn):
                    kinds: list[str] = []
                    for e in self.direct(fn, call):
                        if e.kind not in kinds:
                            kinds.append(e.kind)
                            table.setdefault(e.kind, []).append((fn, call))
            self._sites = table
        return self._sites.get(kind, [])

    # ------------------------------------------------------------ transitive summaries

    def of_fn(self, fn: ir.Function) -> Summary:
        """Everything calling `fn` may do, through the functions it calls."""
        if self._fn is None:
            self._fn = self._fixpoint()
        return self._fn.get(fn.index, {})

    def _fixpoint(self) -> dict[int, Summary]:
        facts = self.facts
        summaries: dict[int, Summary] = {}
        edges: dict[int, list[int]] = {}
        info = self._calls
        for fn in facts.functions:
            own: Summary = {}
            targets: list[int] = []
            for call, callees in facts.calls(fn):
                effects = self.direct(fn, call)
                for e in effects:
                    own.setdefault(e.kind, e)
                for c in callees:
                    if isinstance(c, ir.Function):
                        targets.append(c.index)
                given = tuple(self._callbacks(fn, call))
                info[call] = (effects, given) if effects or given else _PLAIN
                targets.extend(f.index for f in given)
            # a function nested in this one and never called by name still runs as part of it (a callback
            # handed to something outside the project: an event handler, an executor)
            for node in ir.walk_block(fn.body):
                if isinstance(node, ir.FuncExpr):
                    targets.append(node.fn.index)
            summaries[fn.index] = own
            edges[fn.index] = list(dict.fromkeys(targets))  # a target seen again adds nothing the first did not
        self._edges = edges
        # rounds in function order until nothing grows; a function none of whose targets grew since its last visit
        # would add nothing, and is passed over (the same summaries, the same first effect of each kind): a target
        # that grows marks the functions that call it as due
        callers: dict[int, list[int]] = {}
        for i, targets in edges.items():
            for t in targets:
                callers.setdefault(t, []).append(i)
        due = {i for i, targets in edges.items() if targets}
        order = [fn.index for fn in facts.functions]
        changed = True
        rounds = 0
        while changed and rounds < 50:
            changed = False
            rounds += 1
            for i in order:
                if i not in due:
                    continue
                due.discard(i)
                mine = summaries[i]
                grew = False
                for t in edges[i]:
                    for kind, e in summaries.get(t, {}).items():
                        if kind not in mine:
                            mine[kind] = e
                            grew = True
                if grew:
                    due.update(callers.get(i, ()))
                    changed = True
        return summaries

    def cycle_of(self, fn: ir.Function) -> int | None:
        """The call-graph cycle `fn` lies on (an id shared by every function of it), or None: a strongly connected
        component of the graph the summaries propagate over (calls, functions handed to calls, nested functions),
        of two functions or more, or one that calls itself."""
        if self._cycles is None:
            if self._fn is None:
                self._fn = self._fixpoint()
            self._cycles = _cycles(self._edges)
        return self._cycles.get(fn.index)

    def handed(self, fn: ir.Function, call: ir.Call) -> tuple[ir.Function, ...]:
        """Project functions handed to `call` as arguments (they may run as part of it)."""
        got = self._calls.get(call)
        if got is not None and got[1] is not None:
            return got[1]
        return tuple(self._callbacks(fn, call))

    def reaches(self, fn: ir.Function, call: ir.Call, kind: str) -> bool:
        """Whether `call` may have an effect of `kind`: `kind in of_call(fn, call)`, without building the summary
        when everything it reads is already known (the fixpoint has run and has looked at this call)."""
        got = self._calls.get(call)
        if self._fn is None or got is None or got[1] is None:
            return kind in self.of_call(fn, call)
        summaries = self._fn
        if any(e.kind == kind for e in got[0]):
            return True
        for c in self.facts.callees(fn, call):
            if isinstance(c, ir.Function) and kind in summaries.get(c.index, {}):
                return True
        return any(kind in summaries.get(f.index, {}) for f in got[1])

    def _callbacks(self, fn: ir.Function, call: ir.Call) -> Iterator[ir.Function]:
        """Project functions handed to `call` as arguments (they may run as part of it)."""
        for arg in (*call.args, *(v for _, v in call.kw)):
            inner = arg.value if isinstance(arg, ir.Spread) else arg
            if isinstance(inner, ir.FuncExpr):
                yield inner.fn
            elif isinstance(inner, _NAMED):
                for v in self.facts.values(fn, inner):
                    if isinstance(v, Fn):
                        yield v.fn

    def of_call(self, fn: ir.Function, call: ir.Call) -> Summary:
        """What one call may do: its direct effects, the summaries of the project functions it calls and of
        the functions handed to it."""
        out: Summary = {}
        for e in self.direct(fn, call):
            out.setdefault(e.kind, e)
        for c in self.facts.callees(fn, call):
            if isinstance(c, ir.Function):
                for kind, e in self.of_fn(c).items():
                    out.setdefault(kind, e)
        for f in self.handed(fn, call):
            for kind, e in self.of_fn(f).items():
                out.setdefault(kind, e)
        return out

    def of_region(self, fn: ir.Function, nodes: Iterable[ir.Node]) -> Summary:
        """What the calls among `nodes` (and the functions defined there) may do."""
        out: Summary = {}
        for node in nodes:
            if isinstance(node, ir.Call):
                for kind, e in self.of_call(fn, node).items():
                    out.setdefault(kind, e)
            elif isinstance(node, ir.FuncExpr):
                for kind, e in self.of_fn(node.fn).items():
                    out.setdefault(kind, e)
        return out

    def near(self, fn: ir.Function, nodes: Iterable[ir.Node], depth: int = 2) -> Summary:
        """The effects of the calls among `nodes` and of what they call, at most `depth` calls down: what a region
        does itself, not everything a large framework can reach from it."""
        out: Summary = {}
        for cur_fn, call in self.reached_calls(fn, nodes, depth):
            for e in self.direct(cur_fn, call):
                out.setdefault(e.kind, e)
        return out

    def reached_calls(self, fn: ir.Function, nodes: Iterable[ir.Node], depth: int = 2,
                      stop: Callable[[ir.Function, ir.Call], bool] | None = None) -> Iterator[tuple[ir.Function, ir.Call]]:
        """Each call among `nodes` and in the functions they call (or are handed), at most `depth` calls down, with
        the function holding it; a call for which `stop` holds is yielded but not followed into."""
        seen: set[int] = set()
        todo: list[tuple[ir.Function, Iterable[ir.Node], int]] = [(fn, nodes, 0)]
        while todo:
            cur_fn, cur_nodes, d = todo.pop()
            for node in cur_nodes:
                if not isinstance(node, ir.Call):
                    continue
                yield cur_fn, node
                if d >= depth or (stop is not None and stop(cur_fn, node)):
                    continue
                targets = [c for c in self.facts.callees(cur_fn, node) if isinstance(c, ir.Function)]
                targets.extend(self.handed(cur_fn, node))
                for t in targets:
                    if t.index not in seen:
                        seen.add(t.index)
                        todo.append((t, ir.walk_block(t.body), d + 1))

    def calls_reaching(self, fn: ir.Function, nodes: Iterable[ir.Node], kind: str) -> Iterator[ir.Call]:
        """The calls among `nodes` whose effects include `kind`."""
        for node in nodes:
            if isinstance(node, ir.Call) and kind in self.of_call(fn, node):
                yield node


def _cycles(edges: dict[int, list[int]]) -> dict[int, int]:
    """Functions on a cycle of `edges`, each mapped to its component's id (Tarjan's algorithm, iterative: a call
    chain thousands deep must not exhaust the interpreter's stack)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: dict[int, int] = {}
    counter = 0
    for root in edges:
        if root in index:
            continue
        work: list[tuple[int, int]] = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, i = work[-1]
            targets = edges.get(v, ())
            if i < len(targets):
                work[-1] = (v, i + 1)
                w = targets[i]
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
            if low[v] == index[v]:
                members: list[int] = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    members.append(w)
                    if w == v:
                        break
                if len(members) > 1 or v in edges.get(v, ()):
                    for w in members:
                        out[w] = v
    return out


def http_verb(callee: Ext | Unk, call: ir.Call) -> str:
    """The HTTP verb of a request: the method name, a `method` argument, or GET for a bare `fetch`."""
    last = callee.plain.rsplit(".", 1)[-1].lower()
    if last in ("get", "post", "put", "patch", "delete", "head", "options"):
        return last
    method = call.keyword("method")
    if method is None:
        for arg in call.args:
            if isinstance(arg, ir.Obj):
                method = arg.get("method")
                if method is not None:
                    break
    if method is None and last in ("request",) and call.args and isinstance(call.args[0], ir.Lit):
        method = call.args[0]
    if isinstance(method, ir.Lit) and isinstance(method.value, str):
        return method.value.lower()
    if method is not None:
        return "?"
    return "get" if last in ("fetch", "urlopen", "default", "") else "?"


def _same_origin(callee: Ext | Unk, call: ir.Call) -> bool:
    """A browser `fetch` of a path on the app's own server (`same_origin_request`): not a provider request."""
    if not call.args:
        return False
    url = call.args[0]
    text = url.value if isinstance(url, ir.Lit) else url.parts[0] if isinstance(url, ir.Tmpl) and url.parts else None
    return isinstance(text, str) and same_origin_request(callee.plain, text)


def _model_url_in(node: ir.Node) -> bool:
    for n in ir.walk(node):
        if isinstance(n, ir.Lit) and isinstance(n.value, str) and apis.MODEL_URL.search(n.value):
            return True
        if isinstance(n, ir.Tmpl) and any(isinstance(p, str) and apis.MODEL_URL.search(p) for p in n.parts):
            return True
    return False


def _write_mode(call: ir.Call) -> bool:
    mode = call.args[1] if len(call.args) > 1 else call.keyword("mode")
    return isinstance(mode, ir.Lit) and isinstance(mode.value, str) and any(c in mode.value for c in "wax+")
