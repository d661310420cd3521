"""Model replies and their streams: which values come from a model reply, which loops run over a streamed reply,
and where a reply's termination (its finish or stop reason, its status) is read.

A reply value is what a model request hands back, followed through locals, loop elements, `with` targets,
awaits, fields and the parameters callers fill with one; a project function that returns one makes one. A
stream loop iterates the reply itself (`for chunk in stream`, `for await (const part of result.fullStream)`),
not a field of a finished reply (`for choice in reply.choices`). Built on the roles' model requests, never on
names.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cached_property
from typing import NamedTuple

from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.facts import Binding, Ext, Unk, expr_chain
from harness_audit.static.sem.roles import Roles, Site, same_loop

_MAX_DEPTH = 16
"""How many bindings, parameters and returns a reply is followed through (the steps inside one expression are
bounded by its size)."""
_RETURNS_OR_OPS = (ir.Return, ir.Op)
_PASS_THROUGH = frozenset({"wait_for", "shield", "ensure_future", "create_task", "race", "resolve", "aiter", "iter",
                           "timeout", "cast"})
"""Calls that hand back (an awaitable of) what they are given: a reply passed through one is still the reply."""
_ITEM_METHODS = frozenset({"next", "__next__", "__anext__", "anext"})
"""What takes a stream's next item."""
_STREAM_METHODS = frozenset({
    "__aiter__", "__iter__", "iter_lines", "aiter_lines", "iter_bytes", "aiter_bytes", "iter_text", "aiter_text",
    "iter_events", "events", "getReader", "pipeThrough", "tee", "toReadableStream", "stream", "iterator",
})
"""Methods of a streamed reply that hand back the stream itself in another form (what `stream[Symbol.asyncIterator]()`
does too); any other method of it reads a part."""


class Streams:
    """The reply and stream facts of a project, computed on demand from its roles."""

    def __init__(self, roles: Roles) -> None:
        self.roles = roles
        self.facts = roles.facts
        self._params: dict[tuple[int, str, bool], bool] = {}
        self._returns: dict[tuple[int, bool], bool] = {}
        self._stream_loops: dict[ir.Loop, bool] = {}
        self._finish_text: dict[str, bool] = {}
        self._index_text: dict[str, bool] = {}
        self._names: dict[tuple[int, str, bool], bool] = {}

    # ------------------------------------------------------------ reply values

    def reply_value(self, fn: ir.Function, e: ir.Expr, *, whole: bool = False, depth: int = 0) -> bool:
        """Whether `e` (in `fn`) comes from a model reply: what a model request returns, what a project function
        returns or yields of one, read through locals, fields and parameters. With `whole`, it must be the reply
        itself or something its methods hand back (`stream.iter_lines()`, `stream[Symbol.asyncIterator]()`), not
        one of its fields or items."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(e, ir.Await | ir.Spread):
            return self.reply_value(fn, e.value, whole=whole, depth=depth)
        if isinstance(e, ir.Attr | ir.Index):
            return not whole and self.reply_value(fn, e.obj, depth=depth)
        if isinstance(e, ir.Cond):
            return any(self.reply_value(fn, x, whole=whole, depth=depth) for x in (e.then, e.orelse))
        if isinstance(e, ir.Op) and e.op in ("or", "||", "??", "as", "!"):
            return any(self.reply_value(fn, x, whole=whole, depth=depth) for x in e.operands)
        if isinstance(e, ir.Obj | ir.Seq):  # a message or chunk built from the reply's parts
            return not whole and any(self.reply_value(fn, v, depth=depth) for v in _values(e))
        if isinstance(e, ir.Call):
            if any(x.kind == apis.MODEL for x in self.roles.sums.direct(fn, e)):
                return True
            keeps = isinstance(e.func, ir.Index) or (isinstance(e.func, ir.Attr) and e.func.name in _STREAM_METHODS)
            if isinstance(e.func, ir.Attr | ir.Index) and (keeps or not whole) and \
                    self.reply_value(fn, e.func.obj, whole=whole, depth=depth):
                return True  # a method of the reply: `stream.iter_lines()`; (not whole) `it.next()`, `reply.json()`
            for c in self.facts.callees(fn, e):
                if not isinstance(c, ir.Function):
                    last = c.plain.rsplit(".", 1)[-1] if isinstance(c, Ext | Unk) else ""
                    given = e.args[-1] if last == "cast" and e.args else e.args[0] if e.args else None
                    if last in _PASS_THROUGH and given is not None and \
                            self.reply_value(fn, given, whole=whole, depth=depth):
                        return True  # `await asyncio.wait_for(stream.__anext__(), t)`, `Promise.race([next, abort])`
                    continue
                if self._returns_reply(c, whole, depth + 1):
                    return True
                if any(self._returns_reply(m, whole, depth + 1) for m in self._implementations(c)):
                    return True  # a method of an interface: what the classes that implement it do
            return False
        if isinstance(e, ir.Name):
            return self._name_reply(fn, e.id, whole, depth)
        return False

    def _name_reply(self, fn: ir.Function, name: str, whole: bool, depth: int) -> bool:
        key = (fn.index, name, whole)
        got = self._names.get(key)
        if got is None:
            self._names[key] = False  # a name bound through itself says nothing more
            got = self._names[key] = self._name_reply_uncached(fn, name, whole, depth)
        return got

    def _name_reply_uncached(self, fn: ir.Function, name: str, whole: bool, depth: int) -> bool:
        for b in self.facts.bindings(fn).get(name, []):
            if b.kind == "param" and b.param is not None:
                if self._param_reply(fn, b.param, whole, depth + 1):
                    return True
            elif b.expr is not None and (b.kind in ("value", "enter") or (b.kind in ("elem", "attr") and not whole)) \
                    and self.reply_value(fn, b.expr, whole=whole, depth=depth + 1):
                return True
        if name not in self.facts.bindings(fn) and fn.parent is not None:  # a closure reads its parent's local
            return self._name_reply(fn.parent, name, whole, depth + 1)
        return False

    def _param_reply(self, fn: ir.Function, param: ir.Param, whole: bool, depth: int) -> bool:
        """Some caller passes a reply value (with `whole`, the reply itself) for `param`."""
        key = (fn.index, param.name, whole)
        got = self._params.get(key)
        if got is not None:
            return got
        self._params[key] = False  # a cycle through the call graph says nothing
        got = any(self.reply_value(caller, arg, whole=whole, depth=depth)
                  for caller, arg in self.facts.arguments_for(fn, param))
        self._params[key] = got
        return got

    def _returns_reply(self, fn: ir.Function, whole: bool, depth: int) -> bool:
        """`fn` returns a reply value, or is a generator that yields one (or the items of one): calling it
        gives a stream."""
        key = (fn.index, whole)
        got = self._returns.get(key)
        if got is not None:
            return got
        self._returns[key] = False
        got = False
        for n in ir.nodes_of(fn.body, _RETURNS_OR_OPS):
            if isinstance(n, ir.Return) and n.value is not None:
                got = self.reply_value(fn, n.value, whole=whole, depth=depth)
            elif isinstance(n, ir.Op) and n.op in ("yield", "yield*", "yield from") and n.operands:
                got = self.reply_value(fn, n.operands[0], whole=whole and n.op != "yield", depth=depth)
            if got:
                break
        self._returns[key] = got
        return got

    def _implementations(self, method: ir.Function) -> list[ir.Function]:
        """The methods that implement an interface's method (`class P implements ApiHandler`)."""
        cls = method.cls
        if cls is None or cls.kind != "interface":
            return []
        out: list[ir.Function] = []
        for sub in self.facts.subclasses(cls):  # an interface's subclasses are its implementers (`Facts.subclasses`)
            m = self.facts.method(sub, method.name)
            if m is not None and m is not method and m not in out:
                out.append(m)
        return out

    def reads_reply(self, fn: ir.Function) -> bool:
        """Whether `fn` reads a model reply: one of its parameters or locals holds one."""
        return any(self._name_reply(fn, name, False, 0) for name in self.facts.bindings(fn))

    def lists_indexed_by_call(self, fn: ir.Function) -> Iterator[Site]:
        """Where a list is indexed by the index a streamed tool-call delta carries (`calls[tc.index]`, `calls[
        delta["index"]] = …` on a `[]`): the code assumes the provider numbers calls 0, 1, 2 … with no gap and
        in order. The first such index of each list."""
        indexes = self._index_text.get(fn.module.path)
        if indexes is None:  # `calls[tc.index]`, `calls[d["index"]]`: only a module that writes one can have one
            indexes = self._index_text[fn.module.path] = bool(_INDEX_KEY_TEXT.search(fn.module.text))
        if not indexes:
            return
        seen: set[str] = set()
        for node in ir.nodes_of(fn.body, ir.Index):
            if not isinstance(node, ir.Index) or not isinstance(node.key, ir.Attr | ir.Index):
                continue
            key = node.key
            field = key.name if isinstance(key, ir.Attr) else key.key.value if isinstance(key.key, ir.Lit) else None
            if field not in _INDEX_FIELDS or not self.roles.is_tool_calls(fn, key.obj):
                continue
            name = expr_chain(node.obj)
            if name and name not in seen and _list_container(fn, node.obj, self.facts.bindings(fn)):
                seen.add(name)
                yield Site(fn, node)

    # ------------------------------------------------------------ stream loops

    @cached_property
    def stream_loops(self) -> list[Site]:
        """Loops over a streamed model reply: a `for` over the reply itself (`for chunk in stream`, `for await
        (const part of result.fullStream)`), or a loop that pulls the reply's next item each round (`item =
        await iterator.next()` where the iterator is the reply's)."""
        return [Site(fn, node) for fn in self.facts.functions for node in ir.nodes_of(fn.body, ir.Loop)
                if isinstance(node, ir.Loop) and self.is_stream_loop(fn, node)]

    @cached_property
    def call_stream_loops(self) -> list[Site]:
        """Stream loops that go over the tool calls their items carry: those of the functions with a tool-call
        loop (`for tc in delta.tool_calls` inside `for chunk in stream`)."""
        fns = sorted({s.fn for s in self.roles.tool_loops}, key=lambda f: f.index)
        return [Site(fn, node) for fn in fns for node in ir.nodes_of(fn.body, ir.Loop)
                if isinstance(node, ir.Loop) and self.is_stream_loop(fn, node)]

    def is_stream_loop(self, fn: ir.Function, loop: ir.Loop) -> bool:
        """Whether `loop` (in `fn`) runs over a streamed model reply (see `stream_loops`)."""
        got = self._stream_loops.get(loop)
        if got is None:
            if loop.kind == "for":
                got = loop.iter is not None and self.reply_value(fn, loop.iter, whole=True)
            else:
                got = any(isinstance(n, ir.Assign) and self._pulls(fn, loop, n) for n in same_loop(loop.body))
            self._stream_loops[loop] = got
        return got

    def _pulls(self, fn: ir.Function, loop: ir.Loop, node: ir.Assign) -> bool:
        """`item = await iterator.next()` in a `while (!item.done)`, `chunk = await stream.__anext__()` in a
        `while True`: the loop takes the reply's next item each round (a new request made each round is a turn,
        not a pull)."""
        value = node.value.value if isinstance(node.value, ir.Await) else node.value
        if not isinstance(value, ir.Call) or self.roles.reaches_model(fn, value):
            return False
        test = loop.test
        forever = test is None or (isinstance(test, ir.Lit) and test.value is True)
        tested = {n.id for n in ir.walk(test) if isinstance(n, ir.Name)} if test is not None else set()
        if not forever and not any(isinstance(t, ir.Name) and t.id in tested for t in node.targets):
            return False  # a read before an inner loop, not this loop's own pull
        return self.pulled(fn, value)

    def pulled(self, fn: ir.Function, e: ir.Expr, depth: int = 0) -> bool:
        """Whether `e` is the next item taken from a streamed reply: `iterator.next()`, `stream.__anext__()`,
        `next(it)`, through awaits, pass-through wrappers (`asyncio.wait_for`, `Promise.race`), locals and the
        returns of a helper that pulls (`nextChunkWithAbort()`)."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(e, ir.Await | ir.Spread):
            return self.pulled(fn, e.value, depth)
        if isinstance(e, ir.Seq):
            return any(self.pulled(fn, x, depth) for x in e.items)
        if isinstance(e, ir.Name):
            binds = self.facts.bindings(fn)
            if e.id not in binds and fn.parent is not None:
                return self.pulled(fn.parent, e, depth + 1)
            return any(b.kind == "value" and b.expr is not None and self.pulled(fn, b.expr, depth + 1)
                       for b in binds.get(e.id, []))
        if not isinstance(e, ir.Call):
            return False
        if isinstance(e.func, ir.Attr) and e.func.name in _ITEM_METHODS:
            return self.reply_value(fn, e.func.obj, whole=True, depth=depth)
        for c in self.facts.callees(fn, e):
            if isinstance(c, ir.Function):
                if any(isinstance(n, ir.Return) and n.value is not None and self.pulled(c, n.value, depth + 2)
                       for n in ir.nodes_of(c.body, ir.Return)):
                    return True
            elif isinstance(c, Ext | Unk) and e.args:
                last = c.plain.rsplit(".", 1)[-1]
                if last in _ITEM_METHODS and self.reply_value(fn, e.args[0], whole=True, depth=depth):
                    return True  # `next(it)`, `anext(stream)`
                if last in _PASS_THROUGH and self.pulled(fn, e.args[0], depth):
                    return True
        return False

    def committed_calls(self, site: Site) -> Iterator[Site]:
        """What a stream loop accumulates from its items' tool calls (a container outside the loop that the
        loop writes with a tool call, its id, name or argument text) and uses after the loop ends: the first use
        of each such container after the loop (returned, stored, handed on, executed). Keeping the items
        themselves (`chunks.append(chunk)`) keeps how the stream ended too, and is not such an accumulation."""
        loop = site.node
        assert isinstance(loop, ir.Loop)
        fn = site.fn
        inside = _bound_in(loop)
        calls = self._call_names(fn, loop)
        if not calls:
            return
        written: list[str] = []
        for n in ir.walk_block(loop.body):
            target: ir.Expr | None = None
            values: list[ir.Expr] = []
            if isinstance(n, ir.Call) and isinstance(n.func, ir.Attr) and n.func.name in _WRITES:
                target, values = n.func.obj, list(n.args)
            elif isinstance(n, ir.Assign) and n.value is not None and n.targets and \
                    isinstance(n.targets[0], ir.Index | ir.Attr):
                target, values = n.targets[0].obj, [n.value]
            elif isinstance(n, ir.Assign) and n.op == "+=" and n.value is not None and n.targets and \
                    isinstance(n.targets[0], ir.Name):
                target, values = n.targets[0], [n.value]
            while isinstance(target, ir.Index | ir.Attr) and not _chain_of(target):
                target = target.obj
            chain = _chain_of(target).split(".")[0] if target is not None else ""
            if chain and chain not in inside and chain not in written and any(
                    isinstance(x, ir.Name) and x.id in calls for v in values for x in ir.walk(v)):
                written.append(chain)
        after = [n for n in ir.walk_block(fn.body) if n.line > loop.end and isinstance(n, ir.Name)]
        for chain in written:
            use = next((n for n in after if n.id == chain), None)
            if use is not None:
                yield Site(fn, use)

    def _call_names(self, fn: ir.Function, loop: ir.Loop) -> set[str]:
        """Names a stream loop binds to a tool call of its items (`for tc in delta.tool_calls`, `call =
        event.content_block` under a tool-call field)."""
        out: set[str] = set()
        for n in ir.walk_block(loop.body):
            if isinstance(n, ir.Loop) and n.target is not None and n.iter is not None and \
                    self.roles.is_tool_calls(fn, n.iter):
                out.update(x.id for x in ir.walk(n.target) if isinstance(x, ir.Name))
            elif isinstance(n, ir.Assign) and n.value is not None and self.roles.is_tool_calls(fn, n.value):
                out.update(t.id for t in n.targets if isinstance(t, ir.Name))
        return out

    def consults_termination(self, site: Site, uses: list[Site]) -> bool:
        """Whether the stream's termination is read by the function that runs the loop, by a function the loop
        hands its items to, or by one the accumulated calls are handed to after it."""
        fn, loop = site.fn, site.node
        assert isinstance(loop, ir.Loop)
        if self.reads_termination(fn):
            return True
        inside = _bound_in(loop)
        used = {u.node for u in uses}
        for n in ir.nodes_of(fn.body, ir.Call):
            if not isinstance(n, ir.Call):
                continue
            args = (*n.args, *(v for _, v in n.kw))
            handed = (loop.line <= n.line <= loop.end and any(_root(a) in inside for a in args)) or \
                any(x in used for a in args for x in ir.walk(a))
            if handed and any(isinstance(c, ir.Function) and self.reads_termination(c)
                              for c in self.facts.callees(fn, n)):
                return True
        return False

    def forwards_items(self, site: Site) -> bool:
        """Whether the loop yields its items (or what it makes of them) to its caller, who can read how the stream
        ended."""
        loop = site.node
        assert isinstance(loop, ir.Loop)
        return any(isinstance(n, ir.Op) and n.op in ("yield", "yield*", "yield from") for n in ir.walk_block(loop.body))

    def unchecked_call_entries(self, fn: ir.Function) -> Iterator[CallEntry]:
        """In a stream loop of `fn`, the pushes of a new tool-call entry carrying an id read off the stream's
        items (`content.push({ type: "tool_use", id: event.id, … })`, `calls.append({"id": tc.id, "function":
        …})`) with nothing before them on their path through the loop looking that id (or the call's index) up."""
        binds: dict[str, list[Binding]] | None = None
        for node in ir.nodes_of(fn.body, ir.Call):
            if not (isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and node.func.name in _PUSHES
                    and len(node.args) == 1 and isinstance(node.args[0], ir.Obj | ir.Name)):
                continue
            arg = node.args[0]
            entry = arg if isinstance(arg, ir.Obj) else None
            ids: list[ir.Expr] = []
            if isinstance(arg, ir.Name):
                binds = binds if binds is not None else self.facts.bindings(fn)
                made = [b.expr for b in binds.get(arg.id, []) if b.kind == "value" and isinstance(b.expr, ir.Obj)]
                entry = made[0] if len(made) == 1 else None
                ids = [n.value for n in ir.nodes_of(fn.body, ir.Assign) if isinstance(n, ir.Assign) and
                       n.value is not None and any(isinstance(t, ir.Attr) and t.name in apis.CALL_ID_FIELDS and
                                                   isinstance(t.obj, ir.Name) and t.obj.id == arg.id
                                                   for t in n.targets)]
            if entry is None or not _tool_call_entry(entry):
                continue
            ids.extend(v for k, v in entry.items if isinstance(k, str) and k in apis.CALL_ID_FIELDS)
            chains = [c for c in (_id_read(v) for v in ids) if c]
            loop = self._stream_loop_around(fn, node) if chains else None
            if loop is None:
                continue
            looked = _lookups(_before(loop.body, node))
            keys = {c.rsplit(".", 1)[0] + "." + k for c in chains for k in _KEY_FIELDS}
            if not (looked & (set(chains) | keys)):
                branch = _innermost_if(loop.body, node)
                yield CallEntry(node, chains[0], Site(fn, loop), Site(fn, branch) if branch is not None else None)

    def _stream_loop_around(self, fn: ir.Function, node: ir.Node) -> ir.Loop | None:
        """The innermost stream loop of `fn` that `node` is in."""
        found: ir.Loop | None = None
        for loop in ir.nodes_of(fn.body, ir.Loop):
            if isinstance(loop, ir.Loop) and loop.line <= node.line <= loop.end and \
                    (found is None or loop.line >= found.line) and self.is_stream_loop(fn, loop) and \
                    any(n is node for s in loop.body for n in ir.walk(s)):
                found = loop
        return found

    # ------------------------------------------------------------ termination

    def reads_termination(self, fn: ir.Function) -> bool:
        """Whether `fn` reads a reply's termination anywhere: a finish or stop reason, a status, the details of
        an incomplete reply (`choice.finish_reason`, `chunk["stop_reason"]`, `response.get("status")`,
        `const { finishReason } = part`). Building a finish field is not reading one."""
        for node in ir.walk_block(fn.body):
            if isinstance(node, ir.Call):
                if _reads_field(node) in apis.TERMINATION_FIELDS:
                    return True
            elif isinstance(node, ir.Attr | ir.Index) and _chain_of(node).rsplit(".", 1)[-1] in \
                    apis.TERMINATION_FIELDS and not _assigned(fn, node):
                return True
        return any(b.kind == "attr" and b.key in apis.TERMINATION_FIELDS
                   for binds in self.facts.bindings(fn).values() for b in binds)

    def invented_finishes(self, fn: ir.Function) -> Iterator[Site]:
        """Finish or stop reasons `fn` writes from literals alone (`finish_reason = "tool_calls" if calls else
        "stop"`, `finishReason: "stop"`), each a value saying the reply ended normally: the site of the literal
        (or of the assignment of the local that carries it). A literal chosen by a branch on a finish reason
        (`case "MAX_TOKENS": … case _: "end_turn"`) maps one vocabulary to another and is not made up."""
        mentions = self._finish_text.get(fn.module.path)
        if mentions is None:  # a finish field is written by name: a module that never spells one has none
            mentions = self._finish_text[fn.module.path] = any(f in fn.module.text for f in apis.FINISH_FIELDS)
        if not mentions:
            return
        for site in self._literal_finishes(fn):
            if not _maps_a_finish(fn.body, site.node):
                yield site

    def _literal_finishes(self, fn: ir.Function) -> Iterator[Site]:
        binds = self.facts.bindings(fn)
        for node in (*ir.nodes_of(fn.body, ir.Obj), *ir.nodes_of(fn.body, ir.Call), *ir.nodes_of(fn.body, ir.Assign)):
            slots: list[ir.Expr] = []
            if isinstance(node, ir.Obj):
                slots = [v for k, v in node.items if isinstance(k, str) and k in apis.FINISH_FIELDS]
            elif isinstance(node, ir.Call):
                slots = [v for k, v in node.kw if k in apis.FINISH_FIELDS]
            elif isinstance(node, ir.Assign) and node.op == "=" and node.value is not None and any(
                    expr_chain(t).rsplit(".", 1)[-1] in apis.FINISH_FIELDS for t in node.targets):
                local = [b for t in node.targets if isinstance(t, ir.Name) for b in binds.get(t.id, [])]
                if _normal_literals(node.value) and all(b.expr is not None and _normal_literals(b.expr)
                                                        for b in local if b.kind != "ann"):
                    yield Site(fn, node)  # not a default that the reply's own reason overwrites later
                continue
            for value in slots:
                if _normal_literals(value):
                    yield Site(fn, value)
                elif isinstance(value, ir.Name) and value.id not in apis.FINISH_FIELDS:
                    made = [b for b in binds.get(value.id, []) if b.kind == "value" and b.expr is not None]
                    if made and all(b.expr is not None and _normal_literals(b.expr) for b in made):
                        yield Site(fn, made[0].expr)  # type: ignore[arg-type]  # checked just above


    # ------------------------------------------------------------ tool-call ids

    def call_id(self, fn: ir.Function, e: ir.Expr, depth: int = 0) -> bool:
        """Whether `e` is the id of a model's tool call (`tool_call.id`, `delta["id"]`, `block.toolCallId`), read
        off a tool call directly or handed in by every caller as one."""
        if isinstance(e, ir.Attr):
            return e.name in apis.CALL_ID_FIELDS and self.roles.is_tool_calls(fn, e.obj)
        if isinstance(e, ir.Index):
            return isinstance(e.key, ir.Lit) and e.key.value in apis.CALL_ID_FIELDS and \
                self.roles.is_tool_calls(fn, e.obj)
        if isinstance(e, ir.Name) and depth < 2 and any(p.name == e.id for p in fn.params):
            binds = self.facts.bindings(fn).get(e.id, [])
            params = [b.param for b in binds if b.kind == "param" and b.param is not None]
            if len(params) == len(binds) == 1:
                given = self.facts.arguments_for(fn, params[0])
                return bool(given) and all(self.call_id(c, a, depth + 1) for c, a in given)
        return False

    def id_concatenations(self, fn: ir.Function) -> Iterator[Site]:
        """Where a tool call's id is accumulated like a fragment of text: `call.id += delta.id`, or pushed onto
        a list of parts that is later joined into one string (`parts.append(tc.id)` … `"".join(parts)`)."""
        joined: set[str] | None = None
        for node in ir.nodes_of(fn.body, ir.Assign):
            if isinstance(node, ir.Assign) and node.op == "+=" and node.value is not None and \
                    self.call_id(fn, node.value):
                yield Site(fn, node)
        for node in ir.nodes_of(fn.body, ir.Call):
            if isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and node.func.name in _PUSHES \
                    and len(node.args) == 1 and self.call_id(fn, node.args[0]):
                if joined is None:
                    joined = _joined_slots(fn.module)
                if _slot(node.func.obj) in joined:
                    yield Site(fn, node)


def _slot(e: ir.Expr) -> str:
    """The name a container is kept under: a local, a field, a literal key (`acc["id_parts"]`,
    `acc.get("id_parts", [])`), or the table it is an entry of (`parts[i]`, `parts.setdefault(i, [])`)."""
    if isinstance(e, ir.Name):
        return e.id
    if isinstance(e, ir.Attr):
        return e.name
    if isinstance(e, ir.Index):
        return e.key.value if isinstance(e.key, ir.Lit) and isinstance(e.key.value, str) else _slot(e.obj)
    if isinstance(e, ir.Call) and isinstance(e.func, ir.Attr) and e.func.name in ("get", "setdefault") and e.args:
        key = e.args[0]
        return key.value if isinstance(key, ir.Lit) and isinstance(key.value, str) else _slot(e.func.obj)
    return ""


def _joined_slots(mod: ir.Module) -> set[str]:
    """Containers a module joins into one string with nothing between the parts (`"".join(parts)`,
    `parts.join("")`): lists of fragments."""
    out: set[str] = set()
    for fn in mod.functions:
        for node in ir.nodes_of(fn.body, ir.Call):
            if not (isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and node.func.name == "join"
                    and len(node.args) == 1):
                continue
            if isinstance(node.func.obj, ir.Lit) and node.func.obj.value == "":
                out.add(_slot(node.args[0]))
            elif isinstance(node.args[0], ir.Lit) and node.args[0].value == "":
                out.add(_slot(node.func.obj))
    out.discard("")
    return out


class CallEntry(NamedTuple):
    """A new tool-call entry pushed in a stream loop."""

    push: ir.Call
    id_chain: str
    """The id as written (`event.id`)."""
    loop: Site
    """The stream loop."""
    branch: Site | None
    """The branch the push is in (the one that handles the start of a call), if any."""


def _innermost_if(block: ir.Block, target: ir.Node) -> ir.If | None:
    found: ir.If | None = None
    for stmt in block:
        for n in ir.walk(stmt):
            if isinstance(n, ir.If) and n.line <= target.line <= n.end and (found is None or n.line >= found.line) \
                    and any(x is target for s in (*n.body, *n.orelse) for x in ir.walk(s)):
                found = n
    return found


_PUSHES = frozenset({"push", "append"})
_KEY_FIELDS = apis.CALL_ID_FIELDS | frozenset({"index", "output_index", "outputIndex", "content_block_index"})
"""What identifies a tool call within a stream: its id, or the index the provider gives it."""
_LOOKUP_CALLS = frozenset({"has", "get", "find", "findIndex", "findLast", "some", "every", "includes", "indexOf",
                           "index", "count", "filter", "__contains__", "setdefault"})
_COMPARES = frozenset({"in", "not in", "==", "===", "!=", "!==", "is", "is not", "<", "<=", ">", ">="})
_TOOL_ENTRY_TYPES = frozenset({"tool_use", "function_call", "tool-call", "tool_call", "function", "toolCall",
                               "server_tool_use"})


def _tool_call_entry(obj: ir.Obj) -> bool:
    """An entry for one tool call: typed as one (`type: "tool_use"`), or carrying a function, or a name with
    arguments."""
    kind = obj.get("type")
    if isinstance(kind, ir.Lit) and kind.value in _TOOL_ENTRY_TYPES:
        return True
    keys = {k for k, _ in obj.items if isinstance(k, str)}
    return "function" in keys or ("name" in keys and bool(keys & {"arguments", "input", "args", "params"}))


def _id_read(e: ir.Expr) -> str:
    """`event.id`, `tc["id"]` as a dotted chain: an id read off something, not made up."""
    if isinstance(e, ir.Op) and e.op in ("or", "||", "??") and e.operands:
        return _id_read(e.operands[0])
    if isinstance(e, ir.Attr) and e.name in apis.CALL_ID_FIELDS:
        return expr_chain(e)
    if isinstance(e, ir.Index) and isinstance(e.key, ir.Lit) and e.key.value in apis.CALL_ID_FIELDS:
        base = expr_chain(e.obj)
        return f"{base}.{e.key.value}" if base else ""
    return ""


def _chain_of(e: ir.Expr) -> str:
    if isinstance(e, ir.Index) and isinstance(e.key, ir.Lit) and isinstance(e.key.value, str):
        base = expr_chain(e.obj)
        return f"{base}.{e.key.value}" if base else ""
    return expr_chain(e) if isinstance(e, ir.Attr | ir.Name) else ""


def _lookups(nodes: list[ir.Node]) -> set[str]:
    """Chains that `nodes` look up or compare: tested in a condition, passed to `has`/`get`/`find`/`in`, used
    as a key to read."""
    out: set[str] = set()

    def take(sub: ir.Node) -> None:
        for n in ir.walk(sub):
            if isinstance(n, ir.Attr | ir.Index):
                chain = _chain_of(n)
                if chain:
                    out.add(chain)
            elif isinstance(n, ir.FuncExpr):
                for inner in ir.walk_block(n.fn.body):
                    take(inner)

    for node in nodes:
        for n in ir.walk(node):
            if isinstance(n, ir.If | ir.Loop | ir.Cond) and n.test is not None:
                take(n.test)
            elif isinstance(n, ir.Call) and isinstance(n.func, ir.Attr) and n.func.name in _LOOKUP_CALLS:
                for a in n.args:
                    take(a)
            elif isinstance(n, ir.Op) and n.op in _COMPARES:
                for o in n.operands:
                    take(o)
            elif isinstance(n, ir.Index) and not isinstance(n.key, ir.Lit):
                take(n.key)
    return out


def _before(block: ir.Block, target: ir.Node) -> list[ir.Node]:
    """What runs before `target` on its way through `block`: earlier statements of each enclosing block and the
    tests of the branches and loops it is in (not the other arms of those branches)."""
    out: list[ir.Node] = []
    for stmt in block:
        if stmt is target or not any(n is target for n in ir.walk(stmt)):
            if stmt is target:
                return out
            out.append(stmt)
            continue
        if isinstance(stmt, ir.If):
            out.append(stmt.test)
            inner = stmt.body if any(n is target for s in stmt.body for n in ir.walk(s)) else stmt.orelse
            return out + _before(inner, target)
        if isinstance(stmt, ir.Loop):
            out.extend(p for p in (stmt.iter, stmt.test) if p is not None)
            return out + _before(stmt.body, target)
        if isinstance(stmt, ir.Switch):
            out.append(stmt.subject)
            for pattern, body in stmt.cases:
                if any(n is target for s in body for n in ir.walk(s)):
                    if pattern is not None:
                        out.append(pattern)
                    return out + _before(body, target)
        if isinstance(stmt, ir.Try):
            for blk in (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.final):
                if any(n is target for s in blk for n in ir.walk(s)):
                    return out + _before(blk, target)
        if isinstance(stmt, ir.With):
            out.extend(v for v, _ in stmt.items)
            return out + _before(stmt.body, target)
        return out  # inside an expression statement: what came before it is all we know
    return out


_WRITES = frozenset({"append", "push", "extend", "setdefault", "set", "update", "add", "insert"})


def _root(e: ir.Expr) -> str:
    while isinstance(e, ir.Attr | ir.Index | ir.Call | ir.Await):
        e = e.value if isinstance(e, ir.Await) else e.func if isinstance(e, ir.Call) else e.obj
    return e.id if isinstance(e, ir.Name) else ""


def _bound_in(loop: ir.Loop) -> set[str]:
    """Names a loop binds: its target and what is assigned in its body."""
    out = {n.id for n in ir.walk(loop.target) if isinstance(n, ir.Name)} if loop.target is not None else set()
    for n in ir.walk_block(loop.body):
        if isinstance(n, ir.Assign):
            out.update(t.id for t in n.targets if isinstance(t, ir.Name))
        elif isinstance(n, ir.Loop) and n.target is not None:
            out.update(x.id for x in ir.walk(n.target) if isinstance(x, ir.Name))
    return out


_INDEX_FIELDS = frozenset({"index", "output_index", "outputIndex"})
"""Where a streamed tool-call delta says which call it continues."""
_INDEX_KEY_TEXT = re.compile(r"""[."'](?:index|output_index|outputIndex)["']?\s*\]""")
"""How a subscript by one of `_INDEX_FIELDS` ends in the source."""


def _list_container(fn: ir.Function, e: ir.Expr, binds: dict[str, list[Binding]]) -> bool:
    """A local or a field of this class that is only ever assigned list literals (`[]`)."""
    values: list[ir.Expr | None] = []
    if isinstance(e, ir.Name):
        values = [b.expr for b in binds.get(e.id, []) if b.kind in ("value", "param")]
    elif isinstance(e, ir.Attr) and isinstance(e.obj, ir.Name) and e.obj.id in ("self", "this") and fn.cls is not None:
        init = fn.cls.field_values.get(e.name)
        if init is not None:
            values.append(init)
        for method in fn.cls.methods.values():
            for n in ir.walk_block(method.body):
                if isinstance(n, ir.Assign) and n.op == "=" and any(
                        isinstance(t, ir.Attr) and t.name == e.name and isinstance(t.obj, ir.Name) and
                        t.obj.id in ("self", "this") for t in n.targets):
                    values.append(n.value)
    return bool(values) and all(isinstance(v, ir.Seq) and v.kind == "list" for v in values)


def _maps_a_finish(block: ir.Block, target: ir.Node) -> bool:
    """`target` sits in a branch chosen by comparing something with a finish reason: a mapping."""
    for stmt in block:
        for n in ir.walk(stmt):
            if not (n.line <= target.line <= n.end) or not isinstance(n, ir.If | ir.Switch):
                continue
            tests = [n.test] if isinstance(n, ir.If) else [p for p, _ in n.cases if p is not None]
            if any(isinstance(x, ir.Lit) and x.value in apis.FINISH_VALUES for t in tests for x in ir.walk(t)) and \
                    any(x is target for x in ir.walk(n)):
                return True
    return False


def _reads_field(call: ir.Call) -> str:
    """The field a call reads by name: `x.get("status")`, `getattr(x, "finish_reason", None)`."""
    if isinstance(call.func, ir.Attr) and call.func.name == "get" and call.args:
        key = call.args[0]
    elif isinstance(call.func, ir.Name) and call.func.id in ("getattr", "hasattr") and len(call.args) >= 2:
        key = call.args[1]
    else:
        return ""
    return key.value if isinstance(key, ir.Lit) and isinstance(key.value, str) else ""


def _values(e: ir.Obj | ir.Seq) -> list[ir.Expr]:
    return [v for _, v in e.items] if isinstance(e, ir.Obj) else list(e.items)


def _normal_literals(e: ir.Expr) -> bool:
    """A literal finish reason, or a choice between literals, that can only say the reply ended normally."""
    if isinstance(e, ir.Lit):
        return isinstance(e.value, str) and e.value in apis.NORMAL_FINISHES
    if isinstance(e, ir.Cond):
        return _normal_literals(e.then) and _normal_literals(e.orelse)
    return False


def _assigned(fn: ir.Function, target: ir.Expr) -> bool:
    return any(isinstance(n, ir.Assign) and any(t is target for t in n.targets) for n in ir.walk_block(fn.body))
