"""Roles from behaviour: which functions talk to a model, which loops drive an agent, where tool calls are
executed, which containers are the conversation history, where retries and cancellation live.

A role is never read off a name. A model client is a function whose summary reaches a model request; an
agent loop is a loop (or a self-recursive function) whose body reaches one; a history store is a container
that receives messages and is handed to a model request; a tool-call loop iterates over what a model reply
carries under the provider's tool-call fields (the wire vocabulary in `apis.py`, not the project's names).
Recon's landmarks are these roles, so recon and the checks can never disagree.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from harness_audit.static.sem import apis, ir
from harness_audit.static.sem.facts import Cont, Ext, Facts, Fn, Inst, Unk, expr_chain
from harness_audit.static.sem.summaries import HTTP_GET, HTTP_SEND, Summaries

if TYPE_CHECKING:
    from harness_audit.static.sem.streams import Streams

_APPENDS = frozenset({"append", "push", "extend", "add", "unshift", "appendleft", "insert", "concat", "add_message",
                      "addMessage", "add_messages", "addMessages", "put"})
_CUTS = frozenset({"pop", "shift", "splice", "popleft", "clear", "remove", "truncate"})
_SORTS = frozenset({"sort", "reverse"})


@dataclass(frozen=True, slots=True)
class Site:
    """A place in the code: the function and the node."""

    fn: ir.Function
    node: ir.Node

    @property
    def line(self) -> int:
        return self.node.line

    @property
    def path(self) -> str:
        return self.fn.module.path


@dataclass(frozen=True, slots=True)
class Store:
    """Where a container lives: a local of a function, or a field of a class (any instance)."""

    kind: str
    """`local` or `field`."""
    owner: str
    """The function's key, or the class's qualified name."""
    name: str


_Noted = tuple[str, "Store", ir.Function, ir.Node, str, ir.Expr | None]
"""An operation on a store before it is known to be a history: kind, store, function, node, detail, and the
target of a plain assignment (whose kind, cut or replace, is decided only if the op is kept)."""


@dataclass(frozen=True, slots=True)
class HistoryOp:
    """Something done to a history store: `append`, `cut` (drops messages), `mutate` (changes one in place),
    `replace` (the store is reassigned), or `read` (handed to a model request)."""

    kind: str
    store: Store
    site: Site
    detail: str = ""


class Roles:
    """The roles of a project, computed once from its facts and summaries."""

    def __init__(self, facts: Facts, summaries: Summaries) -> None:
        self.facts = facts
        self.sums = summaries
        self._history_params: dict[int, set[str]] = {}
        self._getters: dict[int, tuple[Store, bool] | None] = {}

    # ------------------------------------------------------------ model requests

    @cached_property
    def model_requests(self) -> list[Site]:
        """Calls that send a request to a model provider themselves (the SDK call, the POST to the endpoint)."""
        return self.effect_sites(apis.MODEL)

    def reaches_model(self, fn: ir.Function, call: ir.Call) -> bool:
        """Whether `call` (in `fn`) sends a model request, itself or through what it calls."""
        return self.sums.reaches(fn, call, apis.MODEL)

    @cached_property
    def streams(self) -> Streams:
        """Model replies, their streams and their termination (`streams.py`)."""
        from harness_audit.static.sem.streams import Streams  # the layer above: it reads these roles

        return Streams(self)

    @cached_property
    def model_clients(self) -> list[ir.Function]:
        """Functions whose summary reaches a model request."""
        return [fn for fn in self.facts.functions if apis.MODEL in self.sums.of_fn(fn)]

    # ------------------------------------------------------------ agent loops

    @cached_property
    def agent_loops(self) -> list[Site]:
        """The turns (`_turns`): loops and recursive calls that run an agent's turns."""
        return self._turns[0]

    @cached_property
    def doubtful_loops(self) -> list[Site]:
        """What `_turns` set aside as a poller, a retry or a delegation: shown as the agent loop (with low
        confidence) only in a project where nothing else is, so that C10 and C12 are not left uncovered by a
        judgement that may be wrong."""
        return self._turns[1]

    @cached_property
    def _turns(self) -> tuple[list[Site], list[Site]]:
        """Loops that run turns, and recursive turns. A loop is a `while`/`do` or a counted `for` (`range`, a
        counter; batch loops over a data collection are not agent loops) whose body reaches a model request or runs
        the tool calls of a model reply (a loop over them that executes the tools, in the body or in a function the
        body calls), and neither waits on a person or a queue each round nor sleeps each round (a poller, a
        monitor); a loop that only reaches a model and goes round after a caught failure, leaving on success, is a
        retry around one request, not a turn. A function that calls itself and reaches a model request or
        runs a reply's tool calls is a recursive turn; a cycle through other functions (`generate` runs the tools,
        then calls `generate_helper`, which calls `generate`) counts only when the function runs a reply's tool
        calls (itself or one call down: UI handlers that call each other and post to a chat endpoint are no turn)
        and holds at most `_MAX_TURN_CYCLE` functions (a larger one is an artefact of over-approximated dispatch).
        The call back is no turn when it is made in an exception handler (a retry after a failed parse or request)
        or on another object than the caller's own (`self.primary.chat(...)` resolved to the caller's own method: a
        fallback chain or a decorator delegating)."""
        executing = self.executing_tool_loops
        runs_tools = {site.fn.index for site in executing}
        tool_nodes = {id(site.node) for site in executing}
        sums, facts = self.sums, self.facts
        out: list[Site] = []
        doubtful: list[Site] = []
        for fn in facts.functions:
            loops = [n for n in ir.nodes_of(fn.body, ir.Loop) if _turn_loop(n)]  # type: ignore[arg-type]
            reaches_model = apis.MODEL in sums.of_fn(fn)
            if loops and (reaches_model or runs_tools):
                for node in loops:
                    assert isinstance(node, ir.Loop)
                    if self._waits_each_turn(fn, node):
                        continue
                    body = list(ir.walk_block(node.body))
                    runs_here = self._runs_tools_in(fn, body, tool_nodes, runs_tools)
                    if runs_here or (reaches_model and apis.MODEL in sums.of_region(fn, body)):
                        # a poller, or a retry (as `retry_regions` reads one) around a request, is no turn
                        set_aside = self._sleeps_each_turn(fn, node) or (
                            not runs_here and _retries(node) and self._paced(fn, node))
                        (doubtful if set_aside else out).append(Site(fn, node))
            cycle = sums.cycle_of(fn)
            if cycle is None:
                continue
            runs = fn.index in runs_tools or self._runs_tools_in(fn, ir.nodes_of(fn.body, ir.Call), tool_nodes,
                                                                  runs_tools)
            if not (reaches_model or runs):
                continue
            through = runs and self._cycle_sizes.get(cycle, 0) <= _MAX_TURN_CYCLE
            retried = {id(n) for h in ir.nodes_of(fn.body, ir.Handler) for n in ir.walk_block(h.body)}  # type: ignore[attr-defined]
            for call, callees in facts.calls(fn):
                targets = [c for c in callees if isinstance(c, ir.Function)]
                if fn in targets or (through and any(sums.cycle_of(t) == cycle
                                                     for t in (*targets, *sums.handed(fn, call)))):
                    # called again after a failure: a retry; on another object of its class: delegation
                    (doubtful if id(call) in retried or _delegates(call) else out).append(Site(fn, call))
        return out, doubtful

    @cached_property
    def library_loops(self) -> list[Site]:
        """Calls that run the agent loop inside a library (`apis.AGENT_RUN`): an agents SDK's runner, or the AI
        SDK's `generateText`/`streamText` told to run more than one step (`maxSteps`, `stopWhen`; without either, or
        with one step, it makes one request and the harness's loop is elsewhere)."""
        out: list[Site] = []
        for fn, call in self.sums.sites(apis.AGENT_RUN):
            if any(e.kind == apis.AGENT_RUN and e.detail == "ai sdk steps" for e in self.sums.direct(fn, call)) \
                    and not _runs_steps(call):
                continue
            out.append(Site(fn, call))
        return out

    @cached_property
    def _cycle_sizes(self) -> dict[int, int]:
        sizes: dict[int, int] = defaultdict(int)
        for fn in self.facts.functions:
            cycle = self.sums.cycle_of(fn)
            if cycle is not None:
                sizes[cycle] += 1
        return sizes

    def _runs_tools_in(self, fn: ir.Function, body: list[ir.Node], tool_nodes: set[int], runs_tools: set[int]) -> bool:
        """Whether a region runs the tool calls of a model reply: it holds a loop over them that executes the
        tools, or calls a function that does."""
        if not runs_tools:
            return False
        for node in body:
            if id(node) in tool_nodes:
                return True
            if isinstance(node, ir.Call) and any(isinstance(c, ir.Function) and c.index in runs_tools
                                                 for c in self.facts.callees(fn, node)):
                return True
        return False

    def _sleeps_each_turn(self, fn: ir.Function, loop: ir.Loop) -> bool:
        """A loop that sleeps every round at its top level (a poller, a monitor: not a backoff inside a handler or
        a branch) is driven by the clock."""
        return any(isinstance(node, ir.Call) and any(e.kind == apis.SLEEP for e in self.sums.direct(fn, node))
                   for stmt in loop.body if not isinstance(stmt, ir.If | ir.Try | ir.Loop) for node in ir.walk(stmt))

    def _waits_each_turn(self, fn: ir.Function, loop: ir.Loop) -> bool:
        """A loop that blocks on a person or a queue every round (a REPL, a chat UI, a worker) is driven from
        outside, not an agent running on its own."""
        for node in same_loop(loop.body):
            if isinstance(node, ir.Call):
                for c in self.facts.callees(fn, node):
                    if isinstance(c, Ext | Unk) and c.plain.rsplit(".", 1)[-1] in _WAITS:
                        if c.plain.rsplit(".", 1)[-1] == "get" and "Queue" not in c.plain:
                            continue  # `dict.get`, `requests.get`: not a wait for the next item
                        return True
        return False

    # ------------------------------------------------------------ tool calls

    def is_tool_calls(self, fn: ir.Function, e: ir.Expr, depth: int = 0) -> bool:
        """Whether `e` holds the tool calls of a model reply: read through a provider tool-call field
        (`msg.tool_calls`, `content` blocks filtered to `tool_use`, `part.functionCall`), directly or through
        locals bound to one."""
        if depth > 4:
            return False
        if isinstance(e, ir.Op) and e.op in ("or", "||", "??", "and", "&&"):
            return any(self.is_tool_calls(fn, o, depth + 1) for o in e.operands)
        if isinstance(e, ir.Cond):
            return self.is_tool_calls(fn, e.then, depth + 1) or self.is_tool_calls(fn, e.orelse, depth + 1)
        if isinstance(e, ir.Await):
            return self.is_tool_calls(fn, e.value, depth + 1)
        chain = expr_chain(e)
        if chain and any(part.rstrip("()[]") in apis.TOOL_CALL_FIELDS for part in chain.split(".")):
            return True
        if isinstance(e, ir.Call) and isinstance(e.func, ir.Attr) and e.func.name in ("filter", "map", "values",
                                                                                        "items", "flatMap"):
            if self.is_tool_calls(fn, e.func.obj, depth + 1):
                return True
            if any(isinstance(a, ir.FuncExpr) and _mentions_tool_type(a.fn) for a in e.args):
                return True
        if isinstance(e, ir.Comp) and (any(self.is_tool_calls(fn, it, depth + 1) for _, it in e.targets)
                                       or any(_literal_in(p, ("tool_use", "function_call", "tool-call",
                                                              "tool_call")) for p in e.parts)):
            return True
        if isinstance(e, ir.Name):
            for b in self.facts.bindings(fn).get(e.id, []):
                if b.expr is not None and b.kind in ("value", "attr", "elem") and \
                        self.is_tool_calls(fn, b.expr, depth + 1):
                    return True
                if b.kind == "param" and b.param is not None and b.param.type and \
                        _TOOL_CALL_TYPE in b.param.type.lower().replace("_", ""):
                    return True
        return False

    @cached_property
    def tool_loops(self) -> list[Site]:
        """Loops over the tool calls of a model reply (`for call in msg.tool_calls`), and `.map`/`.forEach`
        callbacks over them (the site is the callback's call)."""
        out: list[Site] = []
        for fn in self.facts.functions:
            out.extend(Site(fn, node) for node in ir.nodes_of(fn.body, _LOOPING)
                       if self._iterates_tool_calls(fn, node))
        return out

    def _iterates_tool_calls(self, fn: ir.Function, node: ir.Node) -> bool:
        if isinstance(node, ir.Loop):
            if node.kind != "for":  # an index loop: `for (let i = 0; i < calls.length; i++) { const call = calls[i]`
                return bool(self.loop_elements(fn, node))
            if node.iter is None:
                return False
            if self.is_tool_calls(fn, node.iter):
                return True
            # over a reply's parts, branching on the part being a tool call (`for block in response.content:
            # if block.type == "tool_use":`), as the `.map` callbacks below; or handing each to where the tool
            # its name selects is run (`for req in response.tool_call_requests: self._execute_tool(req)`)
            if not self.model_output(fn, node.iter):
                return False
            names = self.loop_elements(fn, node)
            return _branches_on_tool_part(node, names) or any(
                isinstance(sub, ir.Call) and names & self._dispatched_by(fn, sub) for sub in same_loop(node.body))
        if isinstance(node, ir.Call):
            if not (isinstance(node.func, ir.Attr) and node.func.name in ("map", "forEach", "flatMap")):
                return False
            callbacks = [a.fn for a in node.args if isinstance(a, ir.FuncExpr)]
            # over the calls themselves, or over a reply's parts, handling those that are tool calls
            # (`content.map(async (part) => { if (!part.toolRequest) return; … })`)
            return bool(callbacks) and (self.is_tool_calls(fn, node.func.obj) or any(
                _tests_tool_field(cb) for cb in callbacks))
        if isinstance(node, ir.Comp):
            return any(self.is_tool_calls(fn, it) for _, it in node.targets)
        return False

    def loop_elements(self, fn: ir.Function, loop: ir.Loop) -> set[str]:
        """The names a loop over tool calls binds each call to: a `for` loop's target, or, in an index loop, the
        locals its body binds to an element of the tool calls (`const call = calls[i]`)."""
        if loop.target is not None:
            return {n.id for n in ir.walk(loop.target) if isinstance(n, ir.Name)}
        out: set[str] = set()
        for stmt in loop.body:
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Index) and \
                    not isinstance(stmt.value.key, ir.Lit | ir.Slice) and self.is_tool_calls(fn, stmt.value.obj):
                out.update(t.id for t in stmt.targets if isinstance(t, ir.Name))
        return out

    @cached_property
    def executing_tool_loops(self) -> list[Site]:
        """The tool-call loops that run the tools (`executes_tools`), decided once for the roles that read them."""
        return [site for site in self.tool_loops if self.executes_tools(site)]

    def executes_tools(self, site: Site) -> bool:
        """Whether a tool-call loop runs the tools (not one that only converts or accumulates calls): a call in
        its body is chosen by the call's name (`TOOLS[name](...)`, `getattr(self, name)`, `registry.get(name)`),
        runs a registered tool, or is handed the arguments decoded from the call; or the body hands the call to a
        project function that does one of these with it (`resolve_tool_request(part, tool_map)`)."""
        fn, node = site.fn, site.node
        if isinstance(node, ir.Loop):
            body: list[ir.Node] = list(same_loop(node.body))
            names = self.loop_elements(fn, node)
        elif isinstance(node, ir.Comp):
            body = list(ir.walk(node.elt))
            names = {n.id for t, _ in node.targets for n in ir.walk(t) if isinstance(n, ir.Name)}
        else:
            body = [n for a in node.children() if isinstance(a, ir.FuncExpr) for n in ir.walk_block(a.fn.body)]
            names = {n for a in node.children() if isinstance(a, ir.FuncExpr) for p in a.fn.params for n in p.names}
            fns = [a.fn for a in node.children() if isinstance(a, ir.FuncExpr)]
            fn = fns[0] if fns else fn
        tools = {f.index for f in self.registered_tools}
        if self._chooses_tool(fn, body, names, tools):
            return True
        for sub in body:  # one call down: the function the element is handed to
            if isinstance(sub, ir.Call) and any(isinstance(a, ir.Name) and a.id in names for a in sub.args):
                for c in self.facts.callees(fn, sub):
                    if isinstance(c, ir.Function) and self._chooses_tool(
                            c, list(ir.walk_block(c.body)), {n for p in c.params for n in p.names}, tools):
                        return True
        # any number of calls down: the element, or its name, handed to where it picks the tool that runs
        return any(isinstance(sub, ir.Call) and names & self._dispatched_by(fn, sub) for sub in body)

    # A parameter that chooses the tool a function runs does so as the name itself ("key": `TOOLS[name]`,
    # `switch (toolName)`) or as a tool call whose name field is read ("call": `TOOLS[call.function.name]`).

    @cached_property
    def name_dispatch(self) -> dict[int, dict[str, set[str]]]:
        """For each function that runs a tool chosen by a parameter, directly or through the functions it hands
        the parameter to: {parameter: {"key", "call"}}. A summary over the call graph, propagated from callee to
        caller until nothing changes (`_dispatch_keys` for where a function chooses)."""
        out: dict[int, dict[str, set[str]]] = {}
        for fn in self.facts.functions:
            params = {n for p in fn.params for n in p.names} - _RECEIVERS
            if not params:
                continue
            for key in self._dispatch_keys(fn):
                for root, how in self._carriers(fn, key):
                    if root in params and how != "part":  # `handlers[event.type]`: no name chooses
                        out.setdefault(fn.index, {}).setdefault(root, set()).add(
                            "key" if how == "call" else "call")
        by_index = {fn.index: fn for fn in self.facts.functions}
        work = list(out)
        while work:
            callee = by_index[work.pop()]
            for param in callee.params:
                kinds = out.get(callee.index, {}).get(param.name)
                if not kinds:
                    continue
                for caller, arg in self.facts.arguments_for(callee, param):
                    params = {n for p in caller.params for n in p.names} - _RECEIVERS
                    changed = False
                    for root, how in self._carriers(caller, arg):
                        for kind in kinds:
                            got = _handed_kind(kind, how)
                            if root in params and got is not None:
                                have = out.setdefault(caller.index, {}).setdefault(root, set())
                                if got not in have:
                                    have.add(got)
                                    changed = True
                    if changed:
                        work.append(caller.index)
        return out

    def _dispatched_by(self, fn: ir.Function, call: ir.Call) -> set[str]:
        """The locals of `fn` whose tool call `call` hands to where the tool it names is chosen and run."""
        out: set[str] = set()
        for callee in self.facts.callees(fn, call):
            if not isinstance(callee, ir.Function):
                continue
            for param in callee.params:
                kinds = self.name_dispatch.get(callee.index, {}).get(param.name)
                arg = self.facts.argument(callee, param, call) if kinds else None
                if arg is None:
                    continue
                out.update(root for root, how in self._carriers(fn, arg)
                           if any(_handed_kind(kind, how) == "call" for kind in kinds))
        return out

    def _dispatch_keys(self, fn: ir.Function) -> list[ir.Expr]:
        """Where `fn` chooses what to run by a value: the key of a table or registry whose entry is then called
        (`TOOLS[k](…)`, `getattr(self, k)(…)`, `tool = registry.get(k); tool.run(…)`), or the subject of a
        `switch`/`match` (or an `if`/`elif` chain of equality tests) with at least two literal string cases that
        each call something."""
        keys: list[ir.Expr] = []
        called: set[str] = set()  # locals called, or whose method is called
        for call in ir.nodes_of(fn.body, ir.Call):
            assert isinstance(call, ir.Call)
            target = call.func.obj if isinstance(call.func, ir.Attr) else call.func
            if isinstance(target, ir.Name):
                called.add(target.id)
            keys.extend(_lookup_keys(target))
        for name in called:
            for b in self.facts.bindings(fn).get(name, []):
                if b.kind == "value" and b.expr is not None:
                    keys.extend(_lookup_keys(b.expr))
        for node in ir.nodes_of(fn.body, (ir.Switch, ir.If)):
            if isinstance(node, ir.Switch):
                cases = [body for pattern, body in node.cases if isinstance(pattern, ir.Lit)
                         and isinstance(pattern.value, str) and any(ir.nodes_of(body, ir.Call))]
                if len(cases) >= 2:
                    keys.append(node.subject)
            elif isinstance(node, ir.If):
                subject = _equals_literal(node.test)
                if subject is not None and node.orelse and isinstance(node.orelse[0], ir.If) and \
                        any(ir.nodes_of(node.body, ir.Call)):
                    other = _equals_literal(node.orelse[0].test)
                    if other is not None and expr_chain(other) == expr_chain(subject) != "":
                        keys.append(subject)
        return keys

    def _carriers(self, fn: ir.Function, e: ir.Expr, depth: int = 0) -> set[tuple[str, str]]:
        """What `e` is made of, as (local, how): the local itself ("call": `call`, `toolName`), the name field
        read off it ("name": `call.function.name`, `call["name"]`, `const { name } = block`), or another part of
        it ("part": `call.function`, `event.type`), through the locals bound to any of these."""
        if depth > 4:
            return set()
        if isinstance(e, ir.Await):
            return self._carriers(fn, e.value, depth + 1)
        if isinstance(e, ir.Cond):
            return self._carriers(fn, e.then, depth + 1) | self._carriers(fn, e.orelse, depth + 1)
        if isinstance(e, ir.Op) and e.op in ("or", "||", "??", "as", "!"):
            return {c for o in e.operands for c in self._carriers(fn, o, depth + 1)}
        field = _field_read(e)
        if field is not None:
            obj, name = field
            inner = {root for root, how in self._carriers(fn, obj, depth + 1) if how != "name"}
            return {(root, "name" if name in TOOL_NAME_FIELDS else "part") for root in inner}
        if not isinstance(e, ir.Name):
            return set()
        out = {(e.id, "call")}
        for b in self.facts.bindings(fn).get(e.id, []):
            if b.expr is None:
                continue
            if b.kind == "value":
                out |= self._carriers(fn, b.expr, depth + 1)
            elif b.kind == "attr":
                out |= {(root, "name" if b.key in TOOL_NAME_FIELDS else "part")
                        for root, how in self._carriers(fn, b.expr, depth + 1) if how != "name"}
        return out

    def _chooses_tool(self, fn: ir.Function, body: list[ir.Node], names: set[str], tools: set[int]) -> bool:
        """Whether a call among `body` (in `fn`) runs a tool chosen by the name carried by one of `names` (a tool
        call), runs a registered tool, or is the tool looked up that way and bound to a local first."""
        following: set[int] = set()

        def by_name(e: ir.Expr) -> bool:
            """`call.function.name`, `block.name`, `tc.toolName`: the called tool's name, read off the call."""
            if id(e) in following:  # locals bound through each other (`a = f(b)`, `b = g(a)`): a cycle says nothing
                return False
            following.add(id(e))
            try:
                for n in walk_into_callbacks(e):
                    chain = expr_chain(n) if isinstance(n, ir.Attr | ir.Name) else ""
                    if chain.split(".")[0] in names and chain.rsplit(".", 1)[-1] in TOOL_NAME_FIELDS:
                        return True
                    if isinstance(n, ir.Name) and any(
                            b.expr is not None and by_name(b.expr) for b in self.facts.bindings(fn).get(n.id, [])
                            if b.expr is not e):
                        return True
                return False
            finally:
                following.discard(id(e))

        def chosen_by_name(e: ir.Expr) -> bool:
            """`TOOLS[call.function.name]`, `registry.get(call.name)`, `getattr(self, call.name)`."""
            if isinstance(e, ir.Index):
                return by_name(e.key)
            if isinstance(e, ir.Call):
                last = expr_chain(e.func).rsplit(".", 1)[-1]
                return last in LOOKUPS and any(by_name(a) for a in e.args)
            return False

        for sub in body:
            if not isinstance(sub, ir.Call):
                continue
            if chosen_by_name(sub) or chosen_by_name(sub.func):
                return True
            if isinstance(sub.func, ir.Name) and any(  # `const run = tools[call.function.name]; run(...)`
                    b.expr is not None and chosen_by_name(b.expr) for b in self.facts.bindings(fn).get(sub.func.id, [])):
                return True
            if any(isinstance(c, ir.Function) and c.index in tools for c in self.facts.callees(fn, sub)):
                return True
        return False

    @cached_property
    def tool_executors(self) -> list[ir.Function]:
        """Functions that run one tool call: called from a tool-call loop with the loop's element, or the
        callback of a `.map` over tool calls; and the functions they delegate to with that call."""
        out: list[ir.Function] = []
        for site in self.executing_tool_loops:
            fn = site.fn
            if isinstance(site.node, ir.Call):
                for a in site.node.args:
                    if isinstance(a, ir.FuncExpr) and a.fn not in out:
                        out.append(a.fn)
                continue
            if isinstance(site.node, ir.Comp):
                comp = site.node
                names = {n.id for t, _ in comp.targets for n in ir.walk(t) if isinstance(n, ir.Name)}
                for node in ir.walk(comp.elt):
                    if isinstance(node, ir.Call) and any(isinstance(a, ir.Name) and a.id in names for a in node.args):
                        for c in self.facts.callees(fn, node):
                            if isinstance(c, ir.Function) and c not in out:
                                out.append(c)
                continue
            loop = site.node
            assert isinstance(loop, ir.Loop)
            names = self.loop_elements(fn, loop)
            for node in ir.walk_block(loop.body):
                # the call handed the tool call (or its name, to where the tool is chosen), or chosen by it
                # (`TOOLS[call.function.name](**args)`)
                if isinstance(node, ir.Call) and (
                        any(isinstance(a, ir.Name) and a.id in names for a in node.args)
                        or names & self._dispatched_by(fn, node)
                        or (not isinstance(node.func, ir.Name | ir.Attr)
                            and any(isinstance(n, ir.Name) and n.id in names for n in ir.walk(node.func)))):
                    for c in self.facts.callees(fn, node):
                        if isinstance(c, ir.Function) and c not in out:
                            out.append(c)
        return out

    @cached_property
    def tool_functions(self) -> list[ir.Function]:
        """Functions the model calls as tools (`registered_tools`) and the functions that execute one tool call
        (`tool_executors`)."""
        out = list(self.tool_executors)
        out.extend(f for f in self.registered_tools if f not in out)
        return out

    @cached_property
    def registered_tools(self) -> list[ir.Function]:
        """Functions registered as tools through a tool-registration API: a decorator such as `@tool`,
        `@function_tool`, `@registry.action`, or a factory (`tool({execute})`, `server.tool(name, schema,
        handler)`, a tool object's `execute`/`func`)."""
        out: list[ir.Function] = []
        for fn in self.facts.functions:
            for dec in fn.decorators:
                target = dec.func if isinstance(dec, ir.Call) else dec
                if expr_chain(target).rsplit(".", 1)[-1] in apis.TOOL_DECORATORS and fn not in out:
                    out.append(fn)
            for node in ir.nodes_of(fn.body, ir.Call):
                if isinstance(node, ir.Call) and expr_chain(node.func).rsplit(".", 1)[-1] in apis.TOOL_FACTORIES:
                    for arg in (*node.args, *(v for _, v in node.kw)):
                        for f in self._handlers_in(fn, arg):
                            if f not in out:
                                out.append(f)
        return out

    def _handlers_in(self, fn: ir.Function, e: ir.Expr) -> Iterator[ir.Function]:
        if isinstance(e, ir.FuncExpr):
            yield e.fn
        elif isinstance(e, ir.Obj):
            for k, v in e.items:
                if isinstance(k, str) and k in apis.TOOL_HANDLER_KEYS:
                    yield from self._handlers_in(fn, v)
        elif isinstance(e, ir.Name | ir.Attr):
            for v in self.facts.values(fn, e):
                if isinstance(v, Fn):
                    yield v.fn

    @cached_property
    def tool_reach(self) -> set[int]:
        """Indexes of the functions a tool runs: tool functions and what they call, four calls deep."""
        seen: set[int] = set()
        frontier = [(f, 0) for f in self.tool_functions]
        while frontier:
            fn, depth = frontier.pop()
            if fn.index in seen:
                continue
            seen.add(fn.index)
            if depth >= 4:
                continue
            for _, callees in self.facts.calls(fn):
                frontier.extend((c, depth + 1) for c in callees if isinstance(c, ir.Function))
            frontier.extend((f, depth + 1) for f in self.facts.nested(fn))
        return seen

    # ------------------------------------------------------------ history

    def store_of(self, fn: ir.Function, e: ir.Expr) -> Store | None:
        """The store an expression names: a local (`messages`), a field (`self.messages`, `this.history`,
        `state.messages` typed to a class)."""
        if isinstance(e, ir.Name):
            if e.id in self.facts.bindings(fn):
                return Store("local", fn.key, e.id)
            scope = fn.parent
            while scope is not None:
                if e.id in self.facts.bindings(scope):
                    return Store("local", scope.key, e.id)
                scope = scope.parent
            return None
        if isinstance(e, ir.Attr):
            for v in self.facts.values(fn, e.obj):
                if isinstance(v, Inst):
                    owner = next((c for c in self.facts.bases(v.cls) if e.name in c.fields or
                                  e.name in self.facts.fields(c)), None)
                    if owner is None:  # not a field: a property that hands out one (`return self._messages`)?
                        getter = self.facts.method(v.cls, e.name)
                        if getter is not None and getter.decorators:
                            read = self._getter_store(getter)
                            if read is not None and read[1]:
                                return read[0]
                    return Store("field", (owner or v.cls).qualname, e.name)
            chain = expr_chain(e.obj)
            if chain in ("self", "this"):
                return None
            return Store("field", f"?{chain.rsplit('.', 1)[-1]}", e.name) if chain else None
        return None

    def _getter_store(self, getter: ir.Function) -> tuple[Store, bool] | None:
        """The field a property (`@property def messages`, `get messages()`) hands out (see `_returned_field`)."""
        if not _is_getter(getter):  # a Python setter defined after its getter takes the method's name
            cls = getter.cls
            getter = next((m for m in getter.module.functions if m.cls is cls and m.name == getter.name and
                           _is_getter(m)), None)  # type: ignore[assignment]
            if getter is None:
                return None
        return self._returned_field(getter)

    def _returned_field(self, method: ir.Function) -> tuple[Store, bool] | None:
        """The one field of its own object a method's returned values read (`return self._messages`, `return
        [m.to_dict() for m in self._messages]`, `payload = {"messages": self.history}; return payload`), and
        whether it hands out that very container rather than something built from it."""
        key = method.index
        if key in self._getters:
            return self._getters[key]
        self._getters[key] = None  # a method reading itself through another: no store
        found: set[Store] = set()
        aliased = True
        binds = self.facts.bindings(method)
        for r in ir.walk_block(method.body):
            if isinstance(r, ir.Return) and r.value is not None:
                values = [r.value]
                for n in ir.walk(r.value):  # through the locals the returned value names (one step)
                    if isinstance(n, ir.Name):
                        values.extend(b.expr for b in binds.get(n.id, []) if b.kind == "value" and b.expr is not None)
                for v in values:
                    for n in ir.walk(v):
                        if isinstance(n, ir.Attr) and expr_chain(n.obj) in ("self", "this"):
                            got = self.store_of(method, n)
                            if got is not None:
                                found.add(got)
                                aliased = aliased and n is r.value
        out = (found.pop(), aliased) if len(found) == 1 else None
        self._getters[key] = out
        return out

    def _read_through_getter(self, fn: ir.Function, e: ir.Attr) -> Store | None:
        """The store a property read (`self.messages`) hands out, a copy of it included."""
        for v in self.facts.values(fn, e.obj):
            if isinstance(v, Inst) and not any(e.name in c.fields or e.name in self.facts.fields(c)
                                               for c in self.facts.bases(v.cls)):
                getter = self.facts.method(v.cls, e.name)
                if getter is not None and getter.decorators:
                    read = self._getter_store(getter)
                    return read[0] if read is not None else None
        return None

    def assigned_value(self, fn: ir.Function, node: ir.Assign) -> ir.Expr | None:
        """What an assignment stores, seen through one local it was built in (`new = self._m + added;
        self._m = new` stores `self._m + added`)."""
        value = node.value
        if isinstance(value, ir.Name):
            binds = [b for b in self.facts.bindings(fn).get(value.id, []) if b.kind != "ann"]
            if len(binds) == 1 and binds[0].kind == "value" and binds[0].expr is not None:
                return binds[0].expr
        return value

    @cached_property
    def history_ops(self) -> list[HistoryOp]:
        """Every operation on a container that receives messages and is sent to a model."""
        # what is done to every store is noted as a plain tuple and becomes a `HistoryOp` only for the stores that
        # turn out to be histories (few): most assignments in a project are to locals that are not
        ops: list[_Noted] = []
        appended: dict[Store, int] = defaultdict(int)
        through: list[tuple[Store, ir.Function, ir.Expr]] = []
        """What is appended without being seen as a message where it is appended (a helper's parameter)."""
        sent: set[Store] = set()
        for fn in self.facts.functions:
            for node in ir.nodes_of(fn.body, _CHANGING):
                if isinstance(node, ir.Call) and isinstance(node.func, ir.Attr):
                    store = self.store_of(fn, node.func.obj)
                    if store is None:
                        continue
                    name = node.func.name
                    if name in _APPENDS:
                        kind = "append"
                        if any(self._message_like(fn, a) for a in node.args):
                            appended[store] += 1
                        else:
                            through.extend((store, fn, a) for a in node.args)
                    elif name in _CUTS:
                        kind = "cut" if name != "pop" or node.args else "cut-last"
                    elif name in _SORTS:
                        kind = "mutate"
                    else:
                        continue
                    ops.append((kind, store, fn, node, name, None))
                elif isinstance(node, ir.Assign):
                    self._assign_ops(fn, node, ops, appended, through)
            for call, _ in self.facts.calls(fn):
                if self.reaches_model(fn, call):
                    for arg in (*call.args, *(v for _, v in call.kw)):
                        for store in self._stores_in(fn, arg):
                            sent.add(store)
                            ops.append(("read", store, fn, call, "", None))
        for store, fn, added in through:  # a helper that appends what its callers hand it (`_append(msgs)`)
            if store in sent and not appended.get(store) and self._given_messages(fn, added):
                appended[store] += 1
        stores = {s for s, n in appended.items() if n} & sent
        out: list[HistoryOp] = []
        for kind, store, fn, node, detail, target in ops:
            if store in stores:
                if target is not None:  # an assignment: a store reassigned to a part of itself is cut
                    assert isinstance(node, ir.Assign) and node.value is not None
                    kind = _reassigned(target, self.assigned_value(fn, node) or node.value)
                out.append(HistoryOp(kind, store, Site(fn, node), detail))
        return out

    def _stores_in(self, fn: ir.Function, e: ir.Expr) -> list[Store]:
        """Stores an expression carries: named in it (a property's field included: `self.messages` that returns
        `self._messages` or a copy of it), or in what a local it names was built from (`window =
        history.slice(-20)` carries `history`)."""
        out: list[Store] = []

        def add(node: ir.Node) -> None:
            if isinstance(node, ir.Call):
                if isinstance(node.func, ir.Attr) and expr_chain(node.func.obj) in ("self", "this"):
                    for c in self.facts.callees(fn, node):  # `self._payload()`, built from a field
                        if isinstance(c, ir.Function) and c.cls is not None:
                            got = self._returned_field(c)
                            if got is not None and got[0] not in out:
                                out.append(got[0])
                return
            if not isinstance(node, ir.Name | ir.Attr):
                return
            store = self.store_of(fn, node)
            if store is not None and store not in out:
                out.append(store)
            if isinstance(node, ir.Attr):
                copied = self._read_through_getter(fn, node)
                if copied is not None and copied not in out:
                    out.append(copied)

        for sub in ir.walk(e):
            add(sub)
            if isinstance(sub, ir.Name):
                for b in self.facts.bindings(fn).get(sub.id, []):
                    if b.expr is not None and b.kind == "value":
                        for inner in ir.walk(b.expr):
                            if not (isinstance(inner, ir.Name) and inner.id == sub.id):
                                add(inner)
        return out

    def model_output(self, fn: ir.Function, e: ir.Expr, depth: int = 0) -> bool:
        """A value read off a model reply (`reply.choices[0].message`, `response.content`)."""
        if depth > 3:
            return False
        root: ir.Expr = e
        while isinstance(root, ir.Attr | ir.Index | ir.Await):
            root = root.value if isinstance(root, ir.Await) else root.obj
        if isinstance(root, ir.Call):
            return self.reaches_model(fn, root)
        if isinstance(root, ir.Name):
            return any(b.expr is not None and b.kind == "value" and self.model_output(fn, b.expr, depth + 1)
                       for b in self.facts.bindings(fn).get(root.id, []))
        return False

    def _given_messages(self, fn: ir.Function, e: ir.Expr) -> bool:
        """`e` is a parameter of `fn` that some caller hands a message (or a list of them)."""
        if not isinstance(e, ir.Name):
            return False
        for p in fn.params:
            if e.id in p.names and p.name == e.id:
                for caller, arg in self.facts.arguments_for(fn, p):
                    if self._message_like(caller, arg) or (
                            isinstance(arg, ir.Seq) and any(self._message_like(caller, i) for i in arg.items)):
                        return True
        return False

    def _assign_ops(self, fn: ir.Function, node: ir.Assign, ops: list[_Noted], appended: dict[Store, int],
                    through: list[tuple[Store, ir.Function, ir.Expr]]) -> None:
        for t in node.targets:
            if isinstance(t, ir.Index):
                store = self.store_of(fn, t.obj)
                if store is not None:
                    ops.append(("cut" if isinstance(t.key, ir.Slice) or node.op == "del" else "mutate",
                                store, fn, node, "index", None))
                inner = t.obj
                if isinstance(inner, ir.Index):  # messages[-1]["content"] = …
                    store = self.store_of(fn, inner.obj)
                    if store is not None:
                        ops.append(("mutate", store, fn, node, "element", None))
            elif isinstance(t, ir.Attr) and isinstance(t.obj, ir.Index):  # messages[-1].content = …
                store = self.store_of(fn, t.obj.obj)
                if store is not None:
                    ops.append(("mutate", store, fn, node, "element", None))
            elif isinstance(t, ir.Name | ir.Attr) and node.value is not None:
                store = self.store_of(fn, t)
                if store is None:
                    continue
                if node.op in ("+=", "|="):
                    ops.append(("append", store, fn, node, node.op, None))
                    if self._message_like(fn, node.value):
                        appended[store] += 1
                elif node.op == "=":
                    value = self.assigned_value(fn, node)
                    added = _added_to_itself(t, value) if value is not None else None
                    if added is not None:  # `h = h + [m]`, `h = [...h, m]`, `h = h.concat(m)`: an append
                        ops.append(("append", store, fn, node, "rebind", None))
                        if any(self._message_like(fn, a) for a in added):
                            appended[store] += 1
                        else:
                            through.extend((store, fn, a) for a in added)
                        continue
                    ops.append(("replace", store, fn, node, "assign", t))  # or "cut": decided if it is kept
                    if isinstance(node.value, ir.Seq) and any(self._message_like(fn, i) for i in node.value.items):
                        appended[store] += 1

    def _message_like(self, fn: ir.Function, e: ir.Expr) -> bool:
        """A chat message: a literal with a `role` whose value is a role name, or with tool-result fields, or
        an element of a model reply's messages."""
        if isinstance(e, ir.Spread):
            e = e.value
        if isinstance(e, ir.Obj):
            role = e.get("role")
            if isinstance(role, ir.Lit) and role.value in apis.MESSAGE_ROLES:
                return True
            if role is not None and not isinstance(role, ir.Lit):
                return True
            return any(isinstance(k, str) and k in apis.TOOL_RESULT_FIELDS for k, _ in e.items)
        if isinstance(e, ir.Call):
            for kw, _v in e.kw:
                if kw == "role":
                    return True
                if kw in apis.TOOL_RESULT_FIELDS:
                    return True
            return bool(any(isinstance(a, ir.Obj) and self._message_like(fn, a) for a in e.args))
        if isinstance(e, ir.Name) and any(
                (b.expr is not None and b.kind == "value" and isinstance(b.expr, ir.Obj | ir.Call) and
                 self._message_like(fn, b.expr))
                or (b.kind == "param" and b.param is not None and b.param.type and b.param.name == e.id and
                    (_MESSAGES_TYPE.search(b.param.type) or _MESSAGE_TYPE.fullmatch(b.param.type.strip())))
                for b in self.facts.bindings(fn).get(e.id, [])):
            return True
        return isinstance(e, ir.Name | ir.Attr | ir.Index) and self.model_output(fn, e)

    def history_params(self, fn: ir.Function) -> set[str]:
        """Parameters of `fn` that receive a conversation: annotated as a list of messages (`list[Message]`,
        `ChatCompletionMessageParam[]`), or given a history store by some caller."""
        got = self._history_params.get(fn.index)
        if got is not None:
            return got
        out: set[str] = set()
        for p in fn.params:
            if p.type and _MESSAGES_TYPE.search(p.type):
                out.add(p.name)
        if len(out) < len(fn.params):
            stores = self.history_stores
            for caller, call in self.facts.callers(fn):
                for i, arg in enumerate(call.args):
                    idx = i + (1 if fn.cls is not None and fn.module.lang == "python" and fn.params and
                               fn.params[0].name in ("self", "cls") else 0)
                    if idx < len(fn.params) and isinstance(arg, ir.Name | ir.Attr) and \
                            self.store_of(caller, arg) in stores:
                        out.add(fn.params[idx].name)
                for k, arg in call.kw:
                    if isinstance(arg, ir.Name | ir.Attr) and self.store_of(caller, arg) in stores:
                        out.add(k)
        self._history_params[fn.index] = out
        return out

    @cached_property
    def cut_returns(self) -> list[Site]:
        """Functions that are handed a conversation and return a part of it (`return messages[-n:]`,
        `return history.slice(i)`, `return messages.filter(...)`): a trimming helper, whatever it is called."""
        out: list[Site] = []
        for fn in self.facts.functions:
            if not fn.params:
                continue
            names = {p.name for p in fn.params}
            cuts = [node for node in ir.nodes_of(fn.body, ir.Return)
                    if isinstance(node, ir.Return) and node.value is not None and _part_of(node.value, names)]
            if not cuts:
                continue
            given = self.history_params(fn)
            out.extend(Site(fn, node) for node in cuts if _part_of(node.value, given))  # type: ignore[attr-defined]
        return out

    @cached_property
    def history_stores(self) -> set[Store]:
        """The stores history operations act on."""
        return {op.store for op in self.history_ops}

    # ------------------------------------------------------------ retries

    @cached_property
    def retry_regions(self) -> list[tuple[Site, list[ir.Node]]]:
        """Code that runs again after a failure: the body of a function under a retry decorator (tenacity,
        backoff, a project decorator whose wrapper loops over a try), a loop whose `try` swallows the error and
        goes round again, and a function that calls itself from its own `except`/`catch`."""
        out: list[tuple[Site, list[ir.Node]]] = []
        for fn in self.facts.functions:
            for dec in fn.decorators:
                if self._is_retry_decorator(fn, dec):
                    out.append((Site(fn, dec), list(ir.walk_block(fn.body))))
                    break
            for node in ir.nodes_of(fn.body, _RETRYING):
                if isinstance(node, ir.Loop) and _retries(node) and self._paced(fn, node):
                    out.append((Site(fn, node), list(ir.walk_block(node.body))))
                elif isinstance(node, ir.Handler):
                    for sub in ir.walk_block(node.body):
                        if isinstance(sub, ir.Call) and fn in self.facts.callees(fn, sub):
                            tr = self._enclosing_try(fn, node)
                            region = list(ir.walk_block(tr.body)) if tr is not None else [sub]
                            out.append((Site(fn, sub), region))
        return out

    def _paced(self, fn: ir.Function, loop: ir.Loop) -> bool:
        """A retry loop counts its attempts (`for attempt in range(n)`, a counter it compares) or waits before
        the next one (a sleep, a backoff): what tells a retry from a loop that carries on after a failed item."""
        if loop.kind == "for" and isinstance(loop.iter, ir.Call) and expr_chain(loop.iter.func) in ("range",):
            return True
        for node in same_loop(loop.body):
            if isinstance(node, ir.Call) and any(e.kind == apis.SLEEP or e.kind == apis.TIMER
                                                 for e in self.sums.direct(fn, node)):
                return True
            if isinstance(node, ir.Call) and any(w in expr_chain(node.func).lower() for w in ("backoff", "sleep",
                                                                                                "delay", "wait")):
                return True
        test = loop.test
        return test is not None and any(isinstance(n, ir.Op) and n.op in ("<", "<=", ">", ">=")
                                        for n in ir.walk(test))

    def _enclosing_try(self, fn: ir.Function, handler: ir.Handler) -> ir.Try | None:
        for node in ir.walk_block(fn.body):
            if isinstance(node, ir.Try) and handler in node.handlers:
                return node
        return None

    def _is_retry_decorator(self, fn: ir.Function, dec: ir.Expr) -> bool:
        target = dec.func if isinstance(dec, ir.Call) else dec
        scope = fn.parent or fn.module.body
        for v in self.facts.values(scope, target):
            if isinstance(v, Ext | Unk):
                plain = v.plain.rsplit(".", 1)[-1]
                if plain in ("retry", "on_exception", "on_predicate", "retry_async", "async_retry", "retrying") or \
                        (isinstance(v, Ext) and v.module.split(".")[0] in ("tenacity", "backoff", "stamina",
                                                                           "retrying", "async_retrying")):
                    return True
            elif isinstance(v, Fn) and self._wrapper_retries(v.fn):
                return True
        return False

    def _wrapper_retries(self, deco: ir.Function) -> bool:
        for inner in self.facts.nested(deco):
            for node in ir.walk_block(inner.body):
                if isinstance(node, ir.Loop) and _retries(node):
                    return True
        return False

    # ------------------------------------------------------------ processes, requests, signals

    def effect_sites(self, kind: str) -> list[Site]:
        """Calls with this direct effect."""
        return [Site(fn, call) for fn, call in self.sums.sites(kind)]

    @cached_property
    def spawns(self) -> list[Site]:
        return self.effect_sites(apis.SPAWN)

    @cached_property
    def http_calls(self) -> list[Site]:
        return [*self.effect_sites(HTTP_SEND), *self.effect_sites(HTTP_GET)]

    @cached_property
    def decodes(self) -> list[Site]:
        return self.effect_sites(apis.DECODE)

    def signals_in_scope(self, fn: ir.Function) -> list[str]:
        """Cancellation signals `fn` can see: parameters, locals and fields typed or built as an abort signal,
        controller, cancellation token or event (`AbortSignal`, `AbortController`, `CancellationToken`,
        `asyncio.Event` used as a cancel flag), and option objects carrying one (`options.signal`)."""
        found: list[str] = []
        scope: ir.Function | None = fn
        while scope is not None and scope.kind != "module":
            for p in scope.params:
                if p.kind != "pattern" and ((p.type and _SIGNAL_TYPE.search(p.type)) or _SIGNAL_NAME.fullmatch(p.name)):
                    found.append(p.name)
                for name in p.names:  # a destructured parameter: each name with the type its field declares
                    if name not in found and (_SIGNAL_NAME.fullmatch(name) or (
                            p.kind == "pattern" and p.type and _field_type_is_signal(p.type, name))):
                        found.append(name)
            for name, binds in self.facts.bindings(scope).items():
                if name in found:
                    continue
                for b in binds:
                    if b.expr is not None and isinstance(b.expr, ir.Call) and b.expr.new and \
                            expr_chain(b.expr.func) in ("AbortController", "CancellationTokenSource"):
                        found.append(name)
                        break
            scope = scope.parent
        if fn.cls is not None:
            for name, ann in fn.cls.fields.items():
                if (ann and _SIGNAL_TYPE.search(ann)) or _SIGNAL_NAME.fullmatch(name):
                    found.append(f"this.{name}" if fn.module.lang != "python" else f"self.{name}")
        return found


_LOOPING = (ir.Loop, ir.Call, ir.Comp)
"""What can iterate over tool calls: a loop, a `.map`/`.forEach` call, a comprehension."""
_MAX_TURN_CYCLE = 12
"""The most functions a call-graph cycle may hold and still be read as a recursive turn."""
_CHANGING = (ir.Call, ir.Assign)
"""What can change a store: a method call on it, an assignment."""
_RETRYING = (ir.Loop, ir.Handler)
"""Where a retry can live: a loop that goes round after a failure, a handler that calls its own function."""
_TOOL_CALL_TYPE = "toolcall"
LOOKUPS = frozenset({"getattr", "get", "find", "get_tool", "getTool", "lookup", "find_tool", "findTool",
                     "import_module"})
"""Ways a registry hands back the tool a name selects."""
TOOL_NAME_FIELDS = frozenset({"name", "tool_name", "toolName", "function_name", "functionName"})
"""Where a tool call carries the name of the tool it wants (wire vocabulary)."""
_WAITS = frozenset({"input", "readline", "prompt", "ask", "get", "recv", "receive", "receive_json", "receive_text",
                    "wait", "getline", "question"})
"""Calls that block until someone outside (a person, a producer) hands the loop its next item."""


_RECEIVERS = frozenset({"self", "cls", "this"})


def _handed_kind(kind: str, how: str) -> str | None:
    """What a caller's local becomes when handed to a parameter of `kind`: the name itself handed to a "key"
    parameter is a key; its name field handed there, or the call (or a part of it, `call.function`) handed to a
    "call" parameter, is a tool call."""
    if kind == "key":
        return {"call": "key", "name": "call"}.get(how)
    return None if how == "name" else "call"


def _lookup_keys(e: ir.Expr) -> list[ir.Expr]:
    """The keys `e` looks an entry up by: `table[k]`, `getattr(obj, k)`, `registry.get(k)`."""
    if isinstance(e, ir.Await):
        e = e.value
    if isinstance(e, ir.Index) and not isinstance(e.key, ir.Lit | ir.Slice):
        return [e.key]
    if isinstance(e, ir.Call) and expr_chain(e.func).rsplit(".", 1)[-1] in LOOKUPS:
        return [a for a in e.args if not isinstance(a, ir.Lit | ir.FuncExpr)]
    return []


def _field_read(e: ir.Expr) -> tuple[ir.Expr, str] | None:
    """(object, field) for `obj.field` and `obj["field"]`."""
    if isinstance(e, ir.Attr):
        return e.obj, e.name
    if isinstance(e, ir.Index) and isinstance(e.key, ir.Lit) and isinstance(e.key.value, str):
        return e.obj, e.key.value
    return None


def _equals_literal(test: ir.Expr) -> ir.Expr | None:
    """The subject of `subject == "literal"` (or `===`)."""
    if isinstance(test, ir.Op) and test.op in ("==", "===") and len(test.operands) == 2:
        a, b = test.operands
        if isinstance(b, ir.Lit) and isinstance(b.value, str) and not isinstance(a, ir.Lit):
            return a
        if isinstance(a, ir.Lit) and isinstance(a.value, str) and not isinstance(b, ir.Lit):
            return b
    return None


def walk_into_callbacks(e: ir.Expr) -> Iterator[ir.Node]:
    """`ir.walk`, entering the bodies of the callbacks in `e` (`tools.find((t) => t.name === call.name)`)."""
    for n in ir.walk(e):
        yield n
        if isinstance(n, ir.FuncExpr):
            yield from ir.walk_block(n.fn.body)


def _field_type_is_signal(type_text: str, name: str) -> bool:
    """Whether an object type's text (`{ input: string; abortController: AbortController }`) declares field `name`
    with a signal type."""
    m = re.search(rf"(?<![\w$]){re.escape(name)}\??\s*:\s*([^;,}}]+)", type_text)
    return bool(m and _SIGNAL_TYPE.search(m.group(1)))


def _mentions_tool_type(fn: ir.Function) -> bool:
    return any(_literal_in(n, _TOOL_PART_TYPES) for n in ir.walk_block(fn.body))


def _delegates(call: ir.Call) -> bool:
    """A method call on an object other than the caller's own (`self.primary.chat(...)`): when dispatch resolves it
    to the caller's own method, that is a wrapper delegating to another instance (a fallback chain, a decorator),
    not a turn."""
    func = call.func
    if not isinstance(func, ir.Attr):
        return False
    return expr_chain(func.obj) not in ("self", "this", "cls", "super()", "super")


def _runs_steps(call: ir.Call) -> bool:
    """Whether an AI SDK call is told to run more than one step: its options carry `maxSteps` or `stopWhen`, other
    than a literal single step (`maxSteps: 1`, `stopWhen: stepCountIs(1)`)."""
    for arg in call.args:
        if not isinstance(arg, ir.Obj):
            continue
        for key in ("maxSteps", "stopWhen"):
            value = arg.get(key)
            if value is None:
                continue
            if isinstance(value, ir.Call) and expr_chain(value.func).endswith("stepCountIs") and value.args:
                value = value.args[0]
            return not (isinstance(value, ir.Lit) and value.value == 1)
    return False


def _tests_tool_field(fn: ir.Function) -> bool:
    """Whether `fn` branches on a provider tool-call field of one of its parameters (`if (!part.toolRequest)
    return;`, `if block.function_call:`): a callback over a reply's parts that picks out the tool calls, not one
    that only copies the field across (a message converter)."""
    params = {n for p in fn.params for n in p.names}
    for node in ir.nodes_of(fn.body, (ir.If, ir.Cond)):
        for n in ir.walk(node.test):  # type: ignore[attr-defined]
            if isinstance(n, ir.Attr) and n.name in apis.TOOL_CALL_FIELDS and isinstance(n.obj, ir.Name) \
                    and n.obj.id in params:
                return True
    return False


def _branches_on_tool_part(loop: ir.Loop, names: set[str]) -> bool:
    """Whether a loop's body branches on its element (bound to `names`) being a tool call: a test naming the element
    beside a tool-call type literal (`block.type == "tool_use"`) or reading its tool-call field (`if
    part.function_call`)."""
    for node in same_loop(loop.body):
        if not isinstance(node, ir.If):
            continue
        subs = list(ir.walk(node.test))
        if not any(isinstance(n, ir.Name) and n.id in names for n in subs):
            continue
        if any(isinstance(n, ir.Lit) and n.value in _TOOL_PART_TYPES or
               isinstance(n, ir.Attr) and n.name in apis.TOOL_CALL_FIELDS for n in subs):
            return True
    return False


_TOOL_PART_TYPES = ("tool_use", "function_call", "tool-call", "tool_call", "functionCall")
"""The type a reply's part carries when it is a tool call (Anthropic, OpenAI Responses, AI SDK, Gemini)."""


def _literal_in(node: ir.Node, values: tuple[str, ...]) -> bool:
    return any(isinstance(n, ir.Lit) and n.value in values for n in ir.walk(node))


def _turn_loop(loop: ir.Loop) -> bool:
    """A loop that runs turns (not one pass over a data collection)."""
    if loop.kind in ("while", "do"):
        return True
    it = loop.iter
    return bool(isinstance(it, ir.Call) and expr_chain(it.func) in ("range", "itertools.count", "count"))


def _retries(loop: ir.Loop) -> bool:
    """A loop that goes round again after catching an error: a `try` in its body whose handler neither
    leaves the loop nor re-raises on every path, and a success path that leaves it (return/break)."""
    for node in same_loop(loop.body):
        if isinstance(node, ir.Try) and any(not _always_leaves(h.body) for h in node.handlers) and any(
                isinstance(n, ir.Return) or (isinstance(n, ir.Jump) and n.kind == "break")
                for n in same_loop([*node.body, *node.orelse])):
            return True  # the attempt leaves the loop when it succeeds; its failure goes round again
    return False


def same_loop(block: ir.Block) -> Iterator[ir.Node]:
    """Nodes of a loop body that belong to that loop: nested loops (and functions) are not entered."""
    stack: list[ir.Node] = list(reversed(block))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ir.Loop):
            continue
        kids = list(node.children())
        kids.reverse()
        stack.extend(kids)


def _always_leaves(block: ir.Block) -> bool:
    """Whether every path through `block` ends in return, raise or break."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, ir.Return | ir.Raise):
        return True
    if isinstance(last, ir.Jump):
        return last.kind == "break"
    if isinstance(last, ir.If):
        return _always_leaves(last.body) and _always_leaves(last.orelse)
    return False


def _is_getter(fn: ir.Function) -> bool:
    """`@property def x(self)`, `get x()` (the TS front end writes a getter's `get` as `property`)."""
    return any(isinstance(d, ir.Name) and d.id in ("property", "cached_property") or
               isinstance(d, ir.Attr) and d.name == "cached_property" for d in fn.decorators)


def _added_to_itself(target: ir.Expr, value: ir.Expr) -> list[ir.Expr] | None:
    """What a store reassigned to itself plus more gains (`h = h + [m]`, `h = [...h, m]`, `h = [*h, m]`,
    `h = h.concat(m)`), or None when the value does not start with the whole store."""
    if not isinstance(value, ir.Call | ir.Op | ir.Seq):
        return None
    want = expr_chain(target)
    if not want:
        return None
    if isinstance(value, ir.Call) and isinstance(value.func, ir.Attr) and value.func.name == "concat" and \
            expr_chain(value.func.obj) == want:
        return [a.value if isinstance(a, ir.Spread) else a for a in value.args]
    if isinstance(value, ir.Op) and value.op == "+" and value.operands:
        first, rest = value.operands[0], value.operands[1:]
        if isinstance(first, ir.Op) and first.op == "+":
            inner = _added_to_itself(target, first)
            return None if inner is None else [*inner, *_items(rest)]
        return _items(rest) if expr_chain(first) == want else None
    if isinstance(value, ir.Seq) and value.items and isinstance(value.items[0], ir.Spread) and \
            expr_chain(value.items[0].value) == want:
        return _items(value.items[1:])
    return None


def _items(parts: list[ir.Expr]) -> list[ir.Expr]:
    """The elements a list of list-valued pieces adds: a literal's items, a spread's value, else the piece."""
    out: list[ir.Expr] = []
    for p in parts:
        if isinstance(p, ir.Seq):
            out.extend(i.value if isinstance(i, ir.Spread) else i for i in p.items)
        else:
            out.append(p.value if isinstance(p, ir.Spread) else p)
    return out


def _reassigned(target: ir.Expr, value: ir.Expr) -> str:
    """`cut` when a store is reassigned to a part of itself, `replace` otherwise (keeping every message while
    inserting or swapping some is a replace)."""
    return "cut" if _cuts_itself(target, value) and not keeps_all(value, expr_chain(target)) else "replace"


def keeps_all(value: ir.Expr, want: str) -> bool:
    """Whether a list built from pieces of `want` keeps every message of it, in order, only inserting or
    swapping some: `[h[0]] + added + h[1:]`, `[new_system, ...h.slice(1)]`, `[...h.slice(0, i), merged,
    ...h.slice(i + 1)]`. A new message in the list stands in for the next one of `want`."""
    covered: tuple[str, int] | None = ("", 0)
    touched = False
    for p in list_pieces(value):
        if want not in _chains(p):
            covered = (covered[0], covered[1] + 1) if covered is not None else None
            continue
        touched = True
        lo = _tail_start(p, want)
        if lo is not None:
            if covered is None or lo[0] != covered[0] or lo[1] > covered[1]:
                return False
            covered = None  # the rest is kept
            continue
        hi = _head_end(p, want)
        if hi is None or covered is None or (covered != ("", 0) and (hi[0] != covered[0] or hi[1] < covered[1])):
            return False
        covered = hi
    return touched


def linear_index(e: ir.Expr | None) -> tuple[str, int] | None:
    """An index as `base + n`: `3` → ('', 3), `i + 1` → ('i', 1), `len(h) - k` → ('len(h)-k'…) kept whole."""
    if isinstance(e, ir.Lit):
        return ("", e.value) if _count(e.value) else None
    if isinstance(e, ir.Op) and e.op in ("+", "-") and len(e.operands) == 2:
        base, n = e.operands
        if isinstance(n, ir.Lit) and _count(n.value) and expr_chain(base):
            return expr_chain(base), n.value if e.op == "+" else -n.value
    chain = expr_chain(e) if e is not None else ""
    return (chain, 0) if chain else None


def _tail_start(e: ir.Expr, want: str) -> tuple[str, int] | None:
    """Where `want[k:]` / `want.slice(k)` starts."""
    if isinstance(e, ir.Index) and isinstance(e.key, ir.Slice) and e.key.hi is None and e.key.step is None and \
            expr_chain(e.obj) == want:
        return linear_index(e.key.lo)
    if isinstance(e, ir.Call) and isinstance(e.func, ir.Attr) and e.func.name == "slice" and len(e.args) == 1 and \
            expr_chain(e.func.obj) == want:
        return linear_index(e.args[0])
    return None


def _head_end(e: ir.Expr, want: str) -> tuple[str, int] | None:
    """Where `want[0]`, `want[:k]`, `want.slice(0, k)` end."""
    if isinstance(e, ir.Index) and expr_chain(e.obj) == want:
        if isinstance(e.key, ir.Lit) and e.key.value == 0:
            return ("", 1)
        if isinstance(e.key, ir.Slice) and (e.key.lo is None or _lit0(e.key.lo)) and e.key.step is None:
            return linear_index(e.key.hi)
    if isinstance(e, ir.Call) and isinstance(e.func, ir.Attr) and e.func.name == "slice" and len(e.args) == 2 and \
            expr_chain(e.func.obj) == want and _lit0(e.args[0]):
        return linear_index(e.args[1])
    return None


def _lit0(e: ir.Expr | None) -> bool:
    return isinstance(e, ir.Lit) and e.value == 0


def _count(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def list_pieces(e: ir.Expr) -> list[ir.Expr]:
    """The pieces a list value is made of: itself, the items of a literal, the operands of `+`, spreads (not
    what a call or a generator computes from it)."""
    if isinstance(e, ir.Seq):
        return [p for item in e.items for p in list_pieces(item)]
    if isinstance(e, ir.Op) and e.op == "+":
        return [p for o in e.operands for p in list_pieces(o)]
    if isinstance(e, ir.Spread):
        return list_pieces(e.value)
    return [e]


def _chains(e: ir.Expr) -> set[str]:
    return {expr_chain(n) for n in ir.walk(e) if isinstance(n, ir.Name | ir.Attr)}


def _part_of(value: ir.Expr, names: set[str]) -> bool:
    """Whether `value` is a part of one of `names` itself: a slice (`x[-n:]`, `x.slice(k)`) or a filter of it."""
    if isinstance(value, ir.Await):
        value = value.value
    if isinstance(value, ir.Index) and isinstance(value.key, ir.Slice):
        return expr_chain(value.obj) in names
    return isinstance(value, ir.Call) and isinstance(value.func, ir.Attr) and \
        value.func.name in ("slice", "filter") and expr_chain(value.func.obj) in names


def _cuts_itself(target: ir.Expr, value: ir.Expr) -> bool:
    """`x = x[-n:]`, `x = x.slice(k)`, `x = [*x[:1], *x[-n:]]`, `x = x.filter(...)`: a store reassigned to a
    part of itself."""
    want = expr_chain(target)
    if not want:
        return False
    for node in ir.walk(value):
        if isinstance(node, ir.Index) and isinstance(node.key, ir.Slice) and expr_chain(node.obj) == want:
            return True
        if isinstance(node, ir.Call) and isinstance(node.func, ir.Attr) and \
                node.func.name in ("slice", "filter", "splice", "drop", "take") and expr_chain(node.func.obj) == want:
            return True
    return False


def iter_stmts(block: ir.Block) -> Iterator[ir.Stmt]:
    """Every statement of a block, nested blocks included (not nested functions)."""
    for node in ir.walk_block(block):
        if isinstance(node, ir.Stmt):
            yield node


_MESSAGES_TYPE = re.compile(r"(?:list|List|Sequence|Iterable|Array|ReadonlyArray)\s*[\[<]\s*\w*Message\w*|\w*Message\w*\s*\[\]")
"""A parameter annotated as a list of messages, whatever the message type is called."""
_MESSAGE_TYPE = re.compile(r"\w*Message(?:Param|Dict|Content)?(?:\s*\|\s*None)?")
"""A parameter annotated as one message."""
_SIGNAL_TYPE = re.compile(r"\b(?:AbortSignal|AbortController|CancellationToken|CancelToken|asyncio\.Event|"
                          r"threading\.Event|CancelScope)\b")
_SIGNAL_NAME = re.compile(r"signal|abortSignal|cancellationToken|cancelToken|cancel_event|cancel_token|stop_event|"
                          r"abort_signal|cancellation_token")

__all__ = ["Cont", "HistoryOp", "Roles", "Site", "Store", "keeps_all", "linear_index", "list_pieces"]
