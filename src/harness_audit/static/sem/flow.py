"""Control flow of one function, with the edges an exception and a cancellation take, and paths over it.

A `Flow` has one node per statement (a compound statement's node is its header: an `if`'s test, a loop's
iteration, a `with`'s items) and four exits: entry, normal return, an ordinary exception leaving the function,
and a cancellation leaving it. Edges are `normal`, `raise` (an exception from the statement: to each handler
that may catch it, onward when none surely does) or `cancel` (Python: `CancelledError` at an `await` in an
async function, which `except Exception` does not catch). `finally` blocks lie on every way out of their
`try`; where the block ends, the flow goes on to every way that entered it (an over-approximation).

Which statements may raise is the caller's to say (`raises`): `Raising` answers it from the call graph, where
a project function that catches everything it calls does not raise. Paths are asked with `Flow.escape`: from a
node, is an exit reachable on a path that avoids a set of nodes (a record that post-dominates the node
answers no)?
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from harness_audit.static.sem import ir
from harness_audit.static.sem.facts import Ext, Facts, Unk, expr_chain

NORMAL, RAISE, CANCEL = "normal", "raise", "cancel"
ENTRY, RETURN, RAISED, CANCELLED = 0, 1, 2, 3
"""The synthetic nodes every flow has: where it starts, and its three ways out."""
EXITS = (RETURN, RAISED, CANCELLED)

_CATCH_ALL = frozenset({"Exception", "BaseException"})
CATCH_CANCEL = frozenset({"BaseException", "CancelledError"})
"""What an `except` must name to take a coroutine's cancellation (or name nothing)."""

_QUIET = frozenset({
    "str", "repr", "len", "isinstance", "issubclass", "hasattr", "print", "type", "id", "bool", "format", "String",
    "append", "push", "extend", "add", "unshift", "debug", "info", "warning", "warn", "error", "exception", "log",
    "critical", "trace", "format_exc", "time", "monotonic", "perf_counter", "now", "keys", "values", "items",
    "copy", "startswith", "endswith", "strip", "lower", "upper", "min", "max", "sorted", "list", "dict", "tuple",
    "set", "enumerate", "zip", "range", "uuid4", "randomUUID",
})
"""Calls outside the project that do not raise in practice (conversion, logging, container bookkeeping): a
handler that logs the error and returns it is not itself a way for the error to leave."""

Edge = tuple[int, str]
Raises = Callable[[Sequence[ir.Node]], bool]
"""Whether evaluating these expressions (a statement, or a compound statement's header) may raise."""


def may_call(parts: Sequence[ir.Node]) -> bool:
    """The plain answer to `Raises`: a call or an `await` may raise."""
    return any(isinstance(n, ir.Call | ir.Await) for p in parts for n in ir.walk(p))


class Flow:
    """The control flow of `fn` (see the module's docstring)."""

    def __init__(self, fn: ir.Function, raises: Raises = may_call) -> None:
        self.fn = fn
        self.nodes: list[ir.Node | None] = [None, None, None, None]
        self.succ: list[list[Edge]] = [[], [], [], []]
        self._index: dict[int, int] = {}
        self.finals: dict[int, int] = {}
        """The node each `try` with a `finally` block passes through to enter it, by the `try` statement's id."""
        _Builder(self, raises, cancels=fn.is_async and fn.module.lang == "python").build(fn.body)

    def node(self, stmt: ir.Node) -> int | None:
        """The node of a statement (or handler), None for one the flow does not hold (in a nested function)."""
        return self._index.get(id(stmt))

    def node_of(self, inner: ir.Node) -> int | None:
        """The node of the innermost statement holding `inner` (an expression or a statement)."""
        got = self._index.get(id(inner))
        if got is not None:
            return got
        best: int | None = None
        best_span = 0
        for i, n in enumerate(self.nodes):
            if n is None or isinstance(n, ir.Handler) or not isinstance(n, ir.Stmt):
                continue
            for part in header(n):
                if any(sub is inner for sub in ir.walk(part)):
                    span = n.end - n.line
                    if best is None or span < best_span:
                        best, best_span = i, span
        return best

    def escape(self, start: int, *, avoid: Iterable[int] = (), exits: Iterable[int] = EXITS,
               raise_from: Callable[[int], bool] | None = None, through: Iterable[int] = ()) -> list[int] | None:
        """A path from `start` (left by its normal edges: `start` has happened) to one of `exits` that never
        completes a node of `avoid` (an avoided node may still be left by its `raise`/`cancel` edges: it did not
        happen), and passes a node of `through` when one is given. `raise_from` says from which nodes an
        exception or cancellation edge may be taken (all, when None). Returns the nodes of one such path."""
        avoid_set, goal, need = set(avoid), set(exits), set(through)
        first_state = not need
        prev: dict[tuple[int, bool], tuple[int, bool] | None] = {}
        todo: list[tuple[int, bool]] = []
        for nxt, kind in self.succ[start]:
            if kind == NORMAL:
                state = (nxt, first_state or nxt in need)
                if state not in prev:
                    prev[state] = None
                    todo.append(state)
        while todo:
            cur = todo.pop()
            node, passed = cur
            if node in goal and passed:
                path = [node]
                back = prev[cur]
                while back is not None:
                    path.append(back[0])
                    back = prev[back]
                path.append(start)
                return path[::-1]
            for nxt, kind in self.succ[node]:
                if kind == NORMAL and node in avoid_set:
                    continue
                if kind != NORMAL and raise_from is not None and not raise_from(node):
                    continue
                state = (nxt, passed or nxt in need)
                if state not in prev:
                    prev[state] = cur
                    todo.append(state)
        return None

    def reaches(self, start: int, goal: int) -> bool:
        """Whether any path leads from `start` to `goal`."""
        seen = {start}
        todo = [start]
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            for nxt, _ in self.succ[node]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False


def header(stmt: ir.Stmt) -> Sequence[ir.Node]:
    """What evaluating a statement's own node evaluates (all of a simple statement; a compound one's header)."""
    if isinstance(stmt, ir.If):
        return (stmt.test,)
    if isinstance(stmt, ir.Loop):
        return [p for p in (stmt.iter, stmt.test) if p is not None]
    if isinstance(stmt, ir.With):
        return [v for v, _ in stmt.items]
    if isinstance(stmt, ir.Switch):
        return (stmt.subject,)
    if isinstance(stmt, ir.Try | ir.Def):
        return ()
    return stmt.children()


@dataclass
class _Loop:
    header: int
    label: str | None
    breaks: list[Edge] = field(default_factory=list)


@dataclass
class _Switch:
    breaks: list[Edge] = field(default_factory=list)


@dataclass
class _Try:
    stmt: ir.Try
    handlers: list[int]
    final: int | None
    """The synthetic node every way out of the `try` passes to enter its `finally` block."""
    state: str = "body"
    """`body` (handlers apply), `handler` (an `except` or `else` block: only `finally` applies), `final`."""
    pending: list[tuple[str, str | None]] = field(default_factory=list)
    """Where the ways that entered `finally` go on to, routed from the frames outside once it is built."""


_Frame = _Loop | _Switch | _Try


class _Builder:
    def __init__(self, flow: Flow, raises: Raises, cancels: bool) -> None:
        self.flow = flow
        self.raises = raises
        self.cancels = cancels
        self.frames: list[_Frame] = []

    def build(self, body: ir.Block) -> None:
        ends = self.block(body, [(ENTRY, NORMAL)])
        self.link(ends, RETURN)

    def new(self, node: ir.Node | None) -> int:
        self.flow.nodes.append(node)
        self.flow.succ.append([])
        i = len(self.flow.nodes) - 1
        if node is not None:
            self.flow._index[id(node)] = i
        return i

    def link(self, edges: Iterable[Edge], target: int) -> None:
        for src, kind in edges:
            if (target, kind) not in self.flow.succ[src]:
                self.flow.succ[src].append((target, kind))

    def block(self, stmts: ir.Block, preds: list[Edge]) -> list[Edge]:
        for s in stmts:
            preds = self.stmt(s, preds)
        return preds

    def stmt(self, s: ir.Stmt, preds: list[Edge]) -> list[Edge]:  # noqa: C901 - one case per statement kind
        n = self.new(s)
        self.link(preds, n)
        here: list[Edge] = [(n, NORMAL)]
        if isinstance(s, ir.Raise):
            self.route([(n, RAISE)], ("raise", RAISE))
            return []
        self.exceptions(n, header(s), s)
        if isinstance(s, ir.Return):
            self.route(here, ("return", None))
            return []
        if isinstance(s, ir.Jump):
            self.route(here, (s.kind, s.label))
            return []
        if isinstance(s, ir.If):
            return self.block(s.body, here) + self.block(s.orelse, here)
        if isinstance(s, ir.Loop):
            frame = _Loop(n, s.label)
            self.frames.append(frame)
            self.link(self.block(s.body, here), n)
            self.frames.pop()
            endless = s.kind != "for" and isinstance(s.test, ir.Lit) and bool(s.test.value)
            return ([] if endless else self.block(s.orelse, here)) + frame.breaks
        if isinstance(s, ir.With):
            return self.block(s.body, here)
        if isinstance(s, ir.Switch):
            frame_s = _Switch()
            self.frames.append(frame_s)
            ends: list[Edge] = []
            for _, body in s.cases:
                if self.flow.fn.module.lang == "python":
                    ends += self.block(body, here)  # a `match` case never falls through
                else:
                    ends = self.block(body, here + ends)  # a case without `break` falls through to the next
            self.frames.pop()
            has_default = any(p is None for p, _ in s.cases)
            return ends + frame_s.breaks + ([] if has_default else here)
        if isinstance(s, ir.Try):
            return self.try_(s, here)
        return here

    def try_(self, s: ir.Try, here: list[Edge]) -> list[Edge]:
        handlers = [self.new(h) for h in s.handlers]
        frame = _Try(s, handlers, self.new(None) if s.final else None)
        if frame.final is not None:
            self.flow.finals[id(s)] = frame.final
        self.frames.append(frame)
        ends = self.block(s.body, here)
        frame.state = "handler"
        ends = self.block(s.orelse, ends)
        for h, hn in zip(s.handlers, handlers, strict=True):
            ends += self.block(h.body, [(hn, NORMAL)])
        self.frames.pop()
        if frame.final is None:
            return ends
        self.link(ends, frame.final)
        frame.state = "final"
        depth = len(self.frames)
        self.frames.append(frame)
        fends = self.block(s.final, [(frame.final, NORMAL)])
        self.frames.pop()
        for what in frame.pending:
            self.route(fends, what, depth, carried=True)
        return fends if ends else []

    def exceptions(self, n: int, parts: Sequence[ir.Node], s: ir.Stmt) -> None:
        if parts and self.raises(parts):
            self.route([(n, RAISE)], ("raise", RAISE))
        if self.cancels and (any(isinstance(x, ir.Await) for p in parts for x in ir.walk(p))
                             or isinstance(s, ir.Loop | ir.With) and getattr(s, "is_async", False)):
            self.route([(n, CANCEL)], ("raise", CANCEL))

    def route(self, src: list[Edge], what: tuple[str, str | None], depth: int | None = None,
              carried: bool = False) -> None:
        """Send `src` where `what` (`return`, `raise` with its kind, `break`/`continue` with a label) goes from
        inside the innermost `depth` frames. `carried`: the end of a `finally` block carrying on an exception
        raised before it (its edges are `normal`: the block's last statement completed; the exception is the
        one raised where the `raise` edge was taken)."""
        if not src:
            return
        kind, arg = what
        raised = arg if kind == "raise" and arg is not None else NORMAL
        edge_kind = NORMAL if carried else raised
        src = [(node, edge_kind) for node, _ in src]
        top = len(self.frames) if depth is None else depth
        for i in range(top - 1, -1, -1):
            f = self.frames[i]
            if isinstance(f, _Try):
                if kind == "raise" and f.state == "body":
                    caught_all = False
                    for h, hn in zip(f.stmt.handlers, f.handlers, strict=True):
                        may, surely = _catches(h, raised, self.flow.fn.module.lang)
                        if may:
                            self.link(src, hn)
                        caught_all = caught_all or surely
                    if caught_all:
                        return
                if f.final is not None and f.state != "final":
                    self.link(src, f.final)
                    f.pending.append(what)
                    return
            elif isinstance(f, _Loop):
                if kind in ("break", "continue") and (arg is None or arg == f.label):
                    if kind == "break":
                        f.breaks.extend((node, NORMAL) for node, _ in src)
                    else:
                        self.link(src, f.header)
                    return
            elif isinstance(f, _Switch) and kind == "break" and arg is None and self.flow.fn.module.lang != "python":
                f.breaks.extend(src)
                return
        if kind == "return":
            self.link(src, RETURN)
        elif kind == "raise":
            self.link(src, CANCELLED if raised == CANCEL else RAISED)


def caught_names(h: ir.Handler) -> set[str]:
    """The last names of the types a handler names (`except (asyncio.CancelledError, OSError)` → both)."""
    names: set[str] = set()
    for t in h.types:
        names.update(expr_chain(x).rsplit(".", 1)[-1] for x in (t.items if isinstance(t, ir.Seq) else [t]))
    return names


def catches_everything(h: ir.Handler, lang: str) -> bool:
    """Whether a handler surely takes any ordinary exception (`except Exception`, a bare `except`, any `catch`)."""
    return _catches(h, RAISE, lang)[1]


def _catches(h: ir.Handler, kind: str, lang: str) -> tuple[bool, bool]:
    """(may catch, surely catches) an exception of `kind` (`raise` or `cancel`) for one handler."""
    if not h.types or lang != "python":
        return True, True
    names = caught_names(h)
    if kind == CANCEL:
        hit = any(n in CATCH_CANCEL for n in names)
        return hit, hit
    return True, any(n in _CATCH_ALL for n in names)


class Raising:
    """Which project functions may raise an ordinary exception to their caller, from the call graph: a call to
    anything outside the project may raise; a call to project functions may raise when one of them may; a
    function may when its flow reaches its raised exit. Followed six calls deep (deeper: may raise); a
    function met again while its own answer is being computed is taken not to raise."""

    _MAX_DEPTH = 6

    def __init__(self, facts: Facts) -> None:
        self.facts = facts
        self._memo: dict[int, bool] = {}
        self._flows: dict[int, Flow] = {}

    def flow(self, fn: ir.Function) -> Flow:
        """The flow of `fn`, with `raise` edges only where a statement may raise (by this summary)."""
        got = self._flows.get(fn.index)
        if got is None:
            got = self._flows[fn.index] = Flow(fn, lambda parts: self.parts_raise(fn, parts, 0))
        return got

    def may_raise(self, fn: ir.Function, depth: int = 0) -> bool:
        got = self._memo.get(fn.index)
        if got is not None:
            return got
        if depth >= self._MAX_DEPTH:
            return True
        self._memo[fn.index] = False
        got = Flow(fn, lambda parts: self.parts_raise(fn, parts, depth + 1)).reaches(ENTRY, RAISED)
        self._memo[fn.index] = got
        return got

    def parts_raise(self, fn: ir.Function, parts: Sequence[ir.Node], depth: int) -> bool:
        for p in parts:
            for n in ir.walk(p):
                if isinstance(n, ir.Call) and self.call_raises(fn, n, depth):
                    return True
                if isinstance(n, ir.Await) and not isinstance(n.value, ir.Call):
                    return True
        return False

    def call_raises(self, fn: ir.Function, call: ir.Call, depth: int = 0) -> bool:
        """Whether `call` may raise: it reaches something outside the project or a project function that may."""
        callees = self.facts.callees(fn, call)
        if not callees:
            return True
        return any(self.may_raise(c, depth) if isinstance(c, ir.Function)
                   else not (isinstance(c, Ext | Unk) and c.plain.rsplit(".", 1)[-1] in _QUIET) for c in callees)
