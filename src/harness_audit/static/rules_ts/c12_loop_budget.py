"""C12 · Loop and budget limits — TypeScript/JavaScript rules.

Shapes detected:
- `agent-loop-without-ceiling`: `while (true)` / `for (;;)` / `while (!done)` / `while (!this.stopped)` /
  `while (!token.isCancellationRequested)` / `do { … } while (toolCalls.length)` around a model call (direct, through
  up to three project functions, in a callback handed to a retry wrapper, a hand-written client's POST or `fetch` to
  a model path, or a method of an injected client class, `this.client.turn(req)`) with no turn, tool-call, time or
  budget ceiling (fitting the context into a token budget or a provider's rate-limit error is no ceiling).
- `turn-cap-exhaustion-returns-as-done`: `for (let turn = 0; turn < maxTurns; turn++)` whose exhaustion falls
  through to an ordinary `return` of the last answer (or marks the run with the success status, `run.status =
  "done"`), cited at that return.
- `sdk-step-cap-returns-as-done`: `generateText({ tools, maxSteps })` (or `stopWhen` with a step count) of the `ai`
  package whose text is taken as the answer without reading the finish reason or the step count (a finish reason
  only printed in `onStepFinish` is not read).
- `subagent-recursion-without-depth`: an agent function that delegates to itself (`this.run(subtask)`) with no
  depth limit compared anywhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from harness_audit.findings import CheckId, Verdict
from harness_audit.static.lang.typescript import FUNCTION_TYPES, LOOP_TYPES, TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts._agent_idioms import (
    Drive,
    FuncRef,
    Key,
    callers_of,
    calls_named,
    cname,
    code_text,
    imports_of,
    is_model_call,
    is_test_module,
    iter_subtree,
    key,
    last,
    later_statements,
    memo,
    model_index,
    module_consts,
    nodes_in,
    receiver,
    resolve_call,
    same,
    string_value,
    unwrap,
)
from harness_audit.static.rules_ts._ts_idioms import imported_from

_COUNTER = re.compile(
    r"(turn|step|iter|round|count|attempt|depth|budget|limit|max|cycle|hop|token|usage|cost|spent|elapsed|"
    r"deadline|remaining|tries|loops|^n$|^i$|^n[A-Z_]|^num[A-Z_]|callsMade|callCount|numCalls|totalCalls|"
    r"calls_made|call_count|num_calls|total_calls)", re.I)
_HISTORY = re.compile(r"(messages|history|conversation|transcript|msgs)$", re.I)
_TIME_CALLS = {"Date.now", "performance.now", "process.hrtime", "process.hrtime.bigint", "process.uptime"}
_LIMIT_CALL = re.compile(r"(limit|budget|quota|deadline)", re.I)
_LIMIT_ARG = re.compile(r"max_?(steps|turns|iterations|iters|rounds|calls|tool_?calls|requests)|(step|turn|iteration|"
                        r"round|request)_?limit|budget", re.I)
_LIMIT_EXC = re.compile(r"(maxturns|maxsteps|maxiterations|limit|budget|exceeded|toomany|exhaust|repeat|noprogress|"
                        r"loopdetect|stuck)", re.I)
_REPEAT_TEST = re.compile(r"\b\w*(seen|previous|prev|last|repeat|history|signatures?)\w*\??\.(has|includes)\(", re.I)
"""No-progress detection: the same call (name and arguments) seen before stops the run."""
_TOOL_WORDS = re.compile(r"tool_calls|toolCalls|tool_use|toolUse|tool_call|toolCall|function_call|functionCall|"
                         r"stop_reason|stopReason|finish_reason|finishReason|[\"']tool[\"']|tool_result|toolResult")
_TOOL_ONLY_WORDS = re.compile(r"tool_calls|toolCalls|tool_use|toolUse|tool_call\b|toolCall\b|function_call|"
                              r"functionCall|[\"']tool[\"']|tool_result|toolResult|(execute|run|call|invoke|dispatch|"
                              r"handle)_?(tool|function)s?(_?calls?)?\s*\(", re.I)
_HISTORY_GROWS = re.compile(r"\b(messages|history|conversation|transcript|msgs)\s*\.\s*(push|unshift|concat)\s*\(|"
                            r"\b(messages|history|conversation|msgs)\s*=\s*\[\s*\.\.\.", re.I)
_HUMAN_INPUT = re.compile(r"(^|\.)(question|readline|readLine|getUserInput|askUser|waitForInput|waitForMessage|"
                          r"nextMessage|readInput|getInput|nextLine|waitForUser|waitForUserInput)$|"
                          r"^(prompt|input|prompts|(inquirer|enquirer|rl|readline|cli|ui|terminal|term)\.(prompt|input))$|"
                          r"(^|\.)(ws|socket|queue|inbox|channel|mailbox)\.(receive|recv|next|take|shift|dequeue)$")
_STATUS_WORDS = re.compile(
    r"(max[_ ]?turn|max[_ ]?step|max[_ ]?iter|exhaust|limit|budget|incomplete|truncat|exceed|status|stopped|"
    r"stop_?reason|error|fail|unfinished|timeout|timed_?out|reached|partial)", re.I)
_DEPTH_NAME = re.compile(r"(depth|level|nesting|hops|remaining|budget|max|parent|recursion)", re.I)
def _forever(mod: TsModule, loop: Node) -> bool:
    """`while (true)`, `while (1)`, `for (;;)`, `do … while (true)`."""
    cond = loop.child_by_field_name("condition")
    if loop.type == "for_statement":
        return cond is None or cond.type == "empty_statement" or mod.node_text(cond).strip() in ("", ";")
    inner = unwrap(cond)
    return inner is not None and mod.node_text(inner) in ("true", "1", "!0", "!false")


def _loop_flag(mod: TsModule, loop: Node) -> str | None:
    """The flag a `while (!flag)` loop waits for: a local the body sets (`done = true`), a field some method sets
    (`this.stopped`, set by `stop()`), or a signal's `aborted`. None when the condition is not such a flag, or
    names a budget or a clock itself (`while (!this.budgetExhausted)`)."""
    if loop.type not in ("while_statement", "do_statement"):
        return None
    flag = unwrap(loop.child_by_field_name("condition"))
    while flag is not None and flag.type == "unary_expression":
        flag = unwrap(flag.named_children[0] if flag.named_children else None)
    if flag is None or flag.type not in ("identifier", "member_expression"):
        return None
    name = mod.dotted(flag)
    body = loop.child_by_field_name("body")
    if body is None or not name or _counter_like(mod, flag):
        return None
    if name.startswith("this.") and name.count(".") == 1:
        return name
    if last(name) in _STOP_FLAGS:
        fn = mod.enclosing_function(loop)
        # a signal that can time out is a wall-clock ceiling, not only the user's stop
        return None if fn is None or re.search(r"timeout|deadline", code_text(mod, fn), re.I) else name
    for node in nodes_in(mod, body, "assignment_expression"):
        if mod.dotted(node.child_by_field_name("left")) == name:
            return name
    return None


_STOP_FLAGS = frozenset({"aborted", "isCancellationRequested", "cancelled", "canceled", "stopRequested"})
"""The user's stop, read off a signal or a cancellation token (`signal.aborted`, VS Code's
`token.isCancellationRequested`): a loop that waits only for it has no budget of its own."""


def _flag_test(mod: TsModule, loop: Node) -> bool:
    """`while (!done)` with `done` set in the body (or `while (!this.stopped)` set by another method), or a
    condition only on the model's wish to call tools (`while (toolCalls.length > 0)`,
    `while (res.stop_reason === "tool_use")`)."""
    if loop.type not in ("while_statement", "do_statement"):
        return False
    cond = unwrap(loop.child_by_field_name("condition"))
    if cond is None:
        return False
    text = code_text(mod, cond)
    if _TOOL_WORDS.search(text) and not _counter_compare(mod, cond):
        return True
    return _loop_flag(mod, loop) is not None


def _counter_like(mod: TsModule, expr: Node) -> bool:
    """Whether an operand of a comparison is a count, a size, a clock or a budget. A member is judged by its own
    name (`turn.toolCalls.length` is the size of a tool-call list, not a turn counter, though its object is
    called `turn`); `x.length` counts only for a history, or for a list named like a counter."""
    node = unwrap(expr)
    if node is None:
        return False
    kind = node.type
    if kind in ("identifier", "property_identifier", "shorthand_property_identifier"):
        text = mod.node_text(node)
        return bool(_COUNTER.search(text)) and text != "length"
    if kind == "member_expression":
        prop = mod.node_text(node.child_by_field_name("property"))
        if prop in ("length", "size"):
            owner = last(mod.dotted(node.child_by_field_name("object")))
            return bool(_HISTORY.search(owner) or (owner and _COUNTER.search(owner)))
        return bool(_COUNTER.search(prop))
    if kind == "call_expression":
        name = cname(mod, node)
        if name in _TIME_CALLS or _LIMIT_CALL.search(last(name)) or _COUNTER.search(last(name)):
            return True
        return any(_counter_like(mod, a) for a in mod.arguments(node))
    if kind in ("binary_expression", "unary_expression", "update_expression", "ternary_expression",
                "subscript_expression"):
        return any(_counter_like(mod, c) for c in node.named_children)
    return False


def _counter_compare(mod: TsModule, test: Node | None) -> bool:
    """A comparison that bounds a count, a size, a clock or a budget (`turn >= maxTurns`, `Date.now() > deadline`)."""
    if test is None:
        return False
    for sub in iter_subtree(test, into_functions=False):
        if sub.type != "binary_expression":
            continue
        op = sub.child_by_field_name("operator")
        if op is None or mod.node_text(op) not in ("<", "<=", ">", ">=", "===", "==", "!==", "!="):
            continue
        left, right = sub.child_by_field_name("left"), sub.child_by_field_name("right")
        if any(n is not None and n.type in ("string", "template_string") for n in (left, right)):
            continue
        if any(n is not None and _counter_like(mod, n) for n in (left, right)):
            return True
    return False


def _exits(mod: TsModule, node: Node | None) -> bool:
    return node is not None and any(n.type in ("break_statement", "throw_statement", "return_statement")
                                    for n in iter_subtree(node, into_functions=False))


def _loop_nodes(mod: TsModule, loop: Node) -> Iterator[Node]:
    """Nodes of the loop body in its own scope; nested `while`/`do` loops and functions are their own."""
    body = loop.child_by_field_name("body")
    if body is None:
        return
    stack = [body]
    while stack:
        cur = stack.pop()
        yield cur
        if cur.type in FUNCTION_TYPES or (cur is not body and cur.type in ("while_statement", "do_statement")):
            continue
        stack.extend(reversed(cur.named_children))


def _sets_flag(mod: TsModule, node: Node | None, flag: str | None) -> bool:
    """Whether `node` sets the loop's flag (`done = true`), which ends a `while (!done)` loop."""
    return node is not None and flag is not None and any(
        n.type == "assignment_expression" and mod.dotted(n.child_by_field_name("left")) == flag
        for n in iter_subtree(node, into_functions=False))


def _is_ceiling(mod: TsModule, node: Node, flag: str | None = None) -> bool:
    if node.type == "if_statement":
        cond = node.child_by_field_name("condition")
        then = node.child_by_field_name("consequence")
        return (_counter_compare(mod, cond) or bool(_REPEAT_TEST.search(code_text(mod, cond)))) and \
            (_exits(mod, then) or _sets_flag(mod, then, flag))
    if node.type == "call_expression":
        if _LIMIT_CALL.search(last(cname(mod, node))) and not _FIT_CALL.search(last(cname(mod, node))):
            return True
        # the ceiling handed to a helper that enforces it: `this.beginRequest(step, maxSteps, ...)`
        args = node.child_by_field_name("arguments")
        return args is not None and any(a.type in ("identifier", "member_expression") and _LIMIT_ARG.search(
            last(mod.dotted(a))) for a in args.named_children)
    if node.type == "throw_statement":
        text = code_text(mod, node)
        return bool(_LIMIT_EXC.search(text.replace("_", "").replace(" ", ""))) and not _PROVIDER_LIMIT.search(text)
    if node.type in ("while_statement", "do_statement"):
        return _counter_compare(mod, node.child_by_field_name("condition"))
    return False


_FIT_CALL = re.compile(r"^(fit|trim|truncate|clip|shrink|compact|prune|cut|window|slice)|To(Budget|Limit)$", re.I)
"""Calls that fit the context into a token budget (`fitToBudget(messages, max)`): they bound a request, not turns."""
_PROVIDER_LIMIT = re.compile(r"rate_?limit|ratelimit|too_?many_?requests|context_?length|context_?window|"
                             r"max_?output|quota|overloaded|\b429\b", re.I)
"""A provider's limit (rate limit, context length) raised as an error: not a ceiling on the agent's turns."""


def _body_nodes(mod: TsModule, fn: Node) -> Iterator[Node]:
    body = fn.child_by_field_name("body")
    if body is not None:
        yield from iter_subtree(body, into_functions=False)


def _has_ceiling(mod: TsModule, loop: Node, drive: Drive) -> bool:
    if loop.type != "for_in_statement" and _counter_compare(mod, loop.child_by_field_name("condition")):
        return True
    flag = _loop_flag(mod, loop)
    if any(_is_ceiling(mod, n, flag) for n in _loop_nodes(mod, loop)):
        return True
    # a retry cap in a helper (`if (attempt >= 4) throw err`) bounds one request, not the turns
    return any(_is_ceiling(ref.module, n, flag) and not _RETRY_CAP.search(code_text(ref.module, n.child_by_field_name(
        "condition") if n.type == "if_statement" else n)) for ref in drive.helpers
        for n in _body_nodes(ref.module, ref.node))


_RETRY_CAP = re.compile(r"\b\w*(attempt|retr(y|ies)|tries)\w*\b", re.I)


def _turn_like(mod: TsModule, loop: Node, drive: Drive, *, tools_only: bool = False) -> bool:
    """Evidence that the loop drives agent turns: tool calls read or run (or, without `tools_only`, history
    grows). A loop that only re-asks the model after a bad answer is a retry, not a turn loop."""
    texts = [code_text(mod, loop.child_by_field_name("body")), code_text(mod, loop.child_by_field_name("condition"))]
    texts.extend(code_text(ref.module, ref.node) for ref in drive.helpers)
    pattern = _TOOL_ONLY_WORDS if tools_only else _TOOL_WORDS
    if any(pattern.search(t) for t in texts):
        return True
    return not tools_only and any(_HISTORY_GROWS.search(t) for t in texts)


def _human_driven(mod: TsModule, loop: Node) -> bool:
    """Each iteration waits for a person or an inbound message (a chat REPL, a server loop)."""
    for node in _loop_nodes(mod, loop):
        if node.type == "call_expression":
            name = cname(mod, node)
            if _HUMAN_INPUT.search(name) or name.startswith("process.stdin"):
                return True
        elif node.type == "for_in_statement" and re.search(r"\b(rl|readline|stdin|lines|input)\b",
                                                           mod.node_text(node.child_by_field_name("right"))):
            return True
    return False


def _named_owner(mod: TsModule, fn: Node) -> Node | None:
    """The named function an anonymous callback belongs to, when it is handed to a wrapper
    (`withRetry(() => client.messages.create(...))`, `pRetry(async () => ...)`): calling the named function runs
    the callback, so it reaches the model."""
    cur: Node | None = fn
    while cur is not None and mod.function_name(cur) == "<anonymous>":
        parent = cur.parent
        if parent is None or parent.type != "arguments":
            return None
        cur = mod.enclosing_function(parent)
    return cur


_MODEL_PATH = re.compile(r"/chat/completions|/v1/messages\b|/v1/responses\b|/api/chat\b|/api/generate\b|"
                         r":generateContent|/completions\b|\}/responses\b")
"""The path of a model endpoint: a hand-written client posts there (`http.post("/chat/completions", body)`)."""
_MAX_CHAIN = 3
"""A loop may reach the model through up to three project functions (`loop → step → complete → post`)."""


def _http_model_call(mod: TsModule, call: Node) -> bool:
    """`client.post("/chat/completions", body)` / `http.request({ url: `${base}/v1/messages` })` on any HTTP
    client (a configured axios/got instance, a wrapper): the path says it is a model request."""
    name = cname(mod, call)
    if name != "fetch" and (last(name) not in ("post", "request", "stream") or not receiver(name)):
        return False
    args = mod.arguments(call)
    first = unwrap(args[0]) if args else None
    if first is None:
        return False
    if first.type == "object":
        first = unwrap(mod.object_keys(first).get("url"))
    if first is not None and first.type == "identifier":
        first = unwrap(module_consts(mod).get(mod.node_text(first)))
    return first is not None and first.type in ("string", "template_string", "binary_expression") and \
        bool(_MODEL_PATH.search(mod.node_text(first)))


def _drives(project: TsProject) -> dict[str, list[Drive]]:
    """`model_index(project).drivers`, plus the calls of functions whose model call sits in a callback handed
    to a retry or backoff wrapper, whose model request is a POST of a hand-written HTTP client to a model path,
    or that are one level beyond the index: loops may reach the model through up to `_MAX_CHAIN` functions."""

    def build() -> dict[str, list[Drive]]:
        index = model_index(project)
        out = {path: list(drives) for path, drives in index.drivers.items()}
        frontier: dict[Key, tuple[FuncRef, ...]] = {}
        for ref in index.direct.values():
            if ref.name != "<anonymous>":
                continue
            owner = _named_owner(ref.module, ref.node)
            if owner is None or key(ref.module, owner) in index.reaching:
                continue
            named = FuncRef(ref.module, owner, ref.module.function_name(owner))
            frontier[key(ref.module, owner)] = (named, ref)
        for mod in project.modules.values():
            if is_test_module(mod) or not _MODEL_PATH.search(mod.text):
                continue
            for call in calls_named(mod, ("post", "request", "stream", "fetch")):
                if not _http_model_call(mod, call) or is_model_call(mod, call):
                    continue
                out.setdefault(mod.path, []).append(Drive(call, ()))
                fn = mod.enclosing_function(call)
                if fn is not None and key(mod, fn) not in index.reaching and mod.function_name(fn) != "<anonymous>":
                    frontier[key(mod, fn)] = (FuncRef(mod, fn, mod.function_name(fn)),)
        for k, chain in index.reaching.items():
            if len(chain) == _MAX_CHAIN and chain[0].name != "<anonymous>":
                frontier.setdefault(k, chain)
        seen = set(frontier)
        known: dict[Key, tuple[FuncRef, ...]] = {**index.reaching, **frontier}
        for _ in range(_MAX_CHAIN):
            names = {chain[0].name for chain in frontier.values()}
            if not names:
                break
            nxt: dict[Key, tuple[FuncRef, ...]] = {}
            for other in project.modules.values():
                for call in calls_named(other, names):
                    for target in resolve_call(other, project, call):
                        chain = frontier.get(key(target.module, target.node))
                        if chain is None:
                            continue
                        out.setdefault(other.path, []).append(Drive(call, chain))
                        fn = other.enclosing_function(call)
                        if fn is not None and key(other, fn) not in seen and key(other, fn) not in index.reaching \
                                and len(chain) < _MAX_CHAIN:
                            seen.add(key(other, fn))
                            nxt[key(other, fn)] = (FuncRef(other, fn, other.function_name(fn)), *chain)
                        break
            frontier = {k: v for k, v in nxt.items() if v[0].name != "<anonymous>"}
            known.update(frontier)
        _client_drives(project, known, out)
        return out

    return memo(project, "c12_drives", build)


_CLIENT_RECV = re.compile(r"(client|api|provider|backend|llm|model|anthropic|openai|gemini|claude|ollama)$", re.I)
"""Receivers that hold a model client (`this.client`, `this.api`, `deps.llm`)."""


def _client_drives(project: TsProject, known: dict[Key, tuple[FuncRef, ...]], out: dict[str, list[Drive]]) -> None:
    """`this.client.turn(...)` / `this.api.stream(...)` on an injected client whose class (in the project) calls the
    model: the method's name alone cannot be resolved (`stream` is generic, the client's type is not known), but a
    client-named receiver and a model-reaching method of that name can. A call inside a callback handed to a wrapper
    (`withRetry(() => this.client.turn(req))`) drives the model through the wrapper call."""
    methods: dict[str, tuple[FuncRef, ...]] = {}
    for chain in known.values():
        head = chain[0]
        if head.node.type == "method_definition" and head.name not in ("constructor", "<anonymous>"):
            methods.setdefault(head.name, chain)
    if not methods:
        return
    for mod in project.modules.values():
        if is_test_module(mod):
            continue
        have = {d.call.id for d in out.get(mod.path, [])}
        for call in calls_named(mod, methods):
            name = cname(mod, call)
            recv = receiver(name)
            if not recv or recv in ("this", "self") or not _CLIENT_RECV.search(last(recv)) or \
                    resolve_call(mod, project, call):
                continue
            site = _wrapper_call(mod, call)
            if site.id not in have:
                have.add(site.id)
                out.setdefault(mod.path, []).append(Drive(site, methods[last(name)]))


def _wrapper_call(mod: TsModule, call: Node) -> Node:
    """The outermost call a callback holding `call` is handed to (`withRetry(() => call)`), else `call`."""
    site = call
    fn = mod.enclosing_function(site)
    while fn is not None and fn.type in ("arrow_function", "function_expression"):
        parent = fn.parent
        if parent is None or parent.type != "arguments" or parent.parent is None:
            break
        site = parent.parent
        fn = mod.enclosing_function(site)
    return site


def _driven_loops(mod: TsModule, project: TsProject) -> list[tuple[Node, Drive]]:
    """Loops of `mod` whose own body reaches the model (a nested `while` counts for itself, not its parents)."""
    out: dict[Key, tuple[Node, Drive]] = {}
    for drive in _drives(project).get(mod.path, []):
        # a call in a callback handed to a wrapper (`withRetry(() => this.turn())`) runs where the wrapper is called
        for anc in mod.ancestors(_wrapper_call(mod, drive.call)):
            if anc.type in FUNCTION_TYPES:
                break
            if anc.type not in LOOP_TYPES:
                continue
            k = key(mod, anc)
            if k not in out or (out[k][1].helpers and not drive.helpers):
                out[k] = (anc, drive)
            if anc.type in ("while_statement", "do_statement") or _forever(mod, anc):
                break
    return sorted(out.values(), key=lambda pair: pair[0].start_byte)


def _or_flag(mod: TsModule, loop: Node) -> str:
    flag = _loop_flag(mod, loop)
    return f" or `{flag}` is set (a stop, not a budget)" if flag is not None and flag.startswith("this.") else ""


def _head(mod: TsModule, loop: Node) -> str:
    if loop.type == "do_statement":
        return f"do {{ … }} while {mod.node_text(loop.child_by_field_name('condition'))}"
    text = mod.node_text(loop).split("{", 1)[0].strip()
    return " ".join(text.split())[:80]


@rule(CheckId.C12, lang="typescript", name="agent-loop-without-ceiling")
def agent_loop_without_ceiling(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a `while (true)` / `for (;;)` / `while (!done)` / `do … while (toolCalls.length)` agent loop that
    calls the model (directly or in a helper) and counts nothing: no turn counter, clock, token or budget check
    leaves the loop, so the only way out is the model ceasing to call tools.
    """
    if is_test_module(mod):
        return
    for loop, drive in _driven_loops(mod, project):
        if loop.type not in ("while_statement", "do_statement", "for_statement"):
            continue
        if not (_forever(mod, loop) or _flag_test(mod, loop)):
            continue
        if not _turn_like(mod, loop, drive) or _human_driven(mod, loop) or _has_ceiling(mod, loop, drive):
            continue
        via = f" through `{drive.helpers[0].name}`" if drive.helpers else ""
        yield Hit(
            node=loop,
            claim=f"the agent loop `{_head(mod, loop)}` calls the model{via} with no ceiling on turns, tool calls or "
                  f"time: it ends only when the model stops calling tools{_or_flag(mod, loop)}",
            consequence="a model that keeps calling tools runs forever and cost climbs until someone notices",
            direction="bound the loop (`for (let turn = 0; turn < maxTurns; turn++)`) and end it with an explicit "
                      "budget-exhausted status (throw `MaxTurnsExceeded` or return `status: \"max_turns\"`)",
        )


_STATUS_KEYS = frozenset({"status", "state", "outcome", "reason", "stopReason", "stop_reason", "finishReason",
                          "finish_reason", "kind", "type", "result"})
"""Keys whose value, not their name, says how a run ended (`status: "done"` is the success status)."""


def _success_strings(mod: TsModule, loop: Node) -> set[str]:
    """String values the loop's own early `return`s carry (`{ status: "done" }`): the finished-run result."""
    out: set[str] = set()
    for node in _loop_nodes(mod, loop):
        if node.type == "return_statement":
            out.update(v for n in iter_subtree(node, into_functions=False)
                       if (v := string_value(mod, n)) is not None)
    return out


def _marks_status(mod: TsModule, stmts: list[Node], success: frozenset[str] | set[str] = frozenset()) -> bool:
    """Whether statements make the ceiling visible: a throw, a status or flag named for it, a message saying so.
    A status key is judged by its value: `status: "done"` when a finished run also returns `"done"` says
    nothing."""
    for stmt in stmts:
        for node in iter_subtree(stmt, into_functions=False):
            if node.type == "throw_statement":
                return True
            value = string_value(mod, node)
            if value is not None and value not in success and _STATUS_WORDS.search(value):
                return True
            if node.type in ("identifier", "property_identifier", "shorthand_property_identifier") and \
                    _STATUS_WORDS.search(mod.node_text(node)) and not _status_key(mod, node, success):
                return True
            if node.type == "if_statement" and _counter_compare(mod, node.child_by_field_name("condition")):
                return True
    return False


def _status_key(mod: TsModule, node: Node, success: frozenset[str] | set[str]) -> bool:
    """`status` as the key of `status: "done"` (or the field of `run.status = "done"`) whose value is a success
    value (the key itself says nothing)."""
    parent = node.parent
    if parent is not None and parent.type == "member_expression" and mod.node_text(node) in _STATUS_KEYS and \
            same(parent.child_by_field_name("property"), node):
        assign = parent.parent
        return assign is not None and assign.type == "assignment_expression" and \
            same(assign.child_by_field_name("left"), parent) and \
            string_value(mod, assign.child_by_field_name("right")) in success
    if parent is None or parent.type != "pair" or not same(parent.child_by_field_name("key"), node) or \
            mod.node_text(node) not in _STATUS_KEYS:
        return False
    return string_value(mod, parent.child_by_field_name("value")) in success


def _success_return(mod: TsModule, stmts: list[Node]) -> Node | None:
    """The `return value` the statements after a loop end in (None for `return;`, `return null`, `undefined`)."""
    for stmt in stmts:
        if stmt.type == "return_statement":
            value = stmt.named_children[0] if stmt.named_children else None
            if value is None or value.type in ("null", "undefined"):
                return None
            return stmt
    return None


def _result_text(mod: TsModule, ret: Node) -> str:
    text = " ".join(code_text(mod, ret).split()).rstrip(";")
    return f"{text[:80]}{'…' if len(text) > 80 else ''}"


@rule(CheckId.C12, lang="typescript", name="turn-cap-exhaustion-returns-as-done")
def turn_cap_exhaustion_returns_as_done(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags `for (let turn = 0; turn < maxTurns; turn++)` (or `while (turn < maxTurns)`) agent loops whose
    exhaustion falls through to an ordinary `return` of the last answer: running out of turns looks exactly like
    a finished run.
    """
    if is_test_module(mod):
        return
    for loop, drive in _driven_loops(mod, project):
        if loop.type not in ("for_statement", "while_statement", "do_statement"):
            continue
        if not _counter_compare(mod, loop.child_by_field_name("condition")):
            continue
        if not _turn_like(mod, loop, drive, tools_only=True):
            continue
        own = list(_loop_nodes(mod, loop))
        if not any(n.type in ("return_statement", "break_statement") for n in own):
            continue  # no early finish: every run uses all turns, nothing to confuse
        if any(n.type == "if_statement" and _counter_compare(mod, n.child_by_field_name("condition"))
               and _exits(mod, n.child_by_field_name("consequence")) for n in own):
            continue  # an explicit in-loop ceiling: a different question (how its exit is reported)
        after = later_statements(mod, loop)
        ret = _success_return(mod, after)
        if ret is None or _marks_status(mod, after, _success_strings(mod, loop)):
            continue
        yield Hit(
            node=ret,  # where the exhausted budget turns into an ordinary answer
            claim=f"when `{_head(mod, loop)}` (line {mod.line(loop)}) runs out the agent loop falls through to "
                  f"`{_result_text(mod, ret)}`, "
                  "the same result a finished run returns",
            consequence="a run that exhausted its turn budget mid-task is reported as a finished answer",
            direction="after the loop, throw `MaxTurnsExceeded` or return `status: \"max_turns\"` instead of the last "
                      "answer",
        )


def _params(mod: TsModule, fn: Node) -> set[str]:
    params = fn.child_by_field_name("parameters") or fn.child_by_field_name("parameter")
    if params is None:
        return set()
    return {mod.node_text(n) for n in iter_subtree(params) if n.type in ("identifier",
                                                                       "shorthand_property_identifier_pattern")}


_STEP_CAPS = ("maxSteps", "stopWhen", "maxToolRoundtrips")
"""Options of the `ai` package that cap the tool-call steps of one `generateText` call."""
_CAP_CHECK = re.compile(r"\bfinishReason\b|\bfinish_reason\b|\bsteps\s*\.\s*length\s*(?:[<>=!]=?|===)|"
                        r"(?:[<>=!]=?|===)\s*[\w.]*steps\s*\.\s*length\b")


_FINISH_NAMES = frozenset({"finishReason", "finish_reason"})
_LOGGERS = re.compile(r"^(console|_?log|_?logger|debug)$|\.(debug|info|log|warn|trace|verbose)$", re.I)


def _cap_checked(mod: TsModule, fn: Node) -> bool:
    """Whether the function looks at the finish reason or the step count. A finish reason only printed
    (`console.debug("step", step.finishReason)` in `onStepFinish`) checks nothing."""
    text = code_text(mod, fn)
    m = _CAP_CHECK.search(text)
    if m is None:
        return False
    if not m.group(0).startswith("finish") or re.search(r"steps\s*\.\s*length", text):
        return True
    for node in iter_subtree(fn):
        if node.type not in ("property_identifier", "identifier") or \
                mod.node_text(node) not in _FINISH_NAMES:
            continue
        outer = next((a for a in mod.ancestors(node) if a.type in ("call_expression", "statement_block")), None)
        if outer is None or outer.type != "call_expression" or not _LOGGERS.search(cname(mod, outer)):
            return True
    return False


def _result_escapes(mod: TsModule, call: Node) -> bool:
    """Whether the whole result of the call leaves the function (returned or handed on), so a caller can read its
    finish reason."""
    node = call
    parent = node.parent
    while parent is not None and parent.type in ("await_expression", "parenthesized_expression", "as_expression",
                                                 "satisfies_expression", "non_null_expression"):
        node, parent = parent, parent.parent
    if parent is None:
        return False
    if parent.type in ("return_statement", "arguments", "array", "pair", "spread_element") or \
            (parent.type == "arrow_function" and same(parent.child_by_field_name("body"), node)):
        return True
    if parent.type == "variable_declarator":
        target = parent.child_by_field_name("name")
        fn = mod.enclosing_function(call)
        if target is not None and target.type == "identifier" and fn is not None:
            name = re.escape(mod.node_text(target))
            return bool(re.search(rf"return\s+{name}\s*[;}}\n]|[(,\[]\s*{name}\s*[,)\]]|\.\.\.{name}\b",
                                  code_text(mod, fn)))
    return False


@rule(CheckId.C12, lang="typescript", name="sdk-step-cap-returns-as-done")
def sdk_step_cap_returns_as_done(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags `generateText({ tools, maxSteps: N })` (or `stopWhen`) of the `ai` package whose caller takes the
    text as the answer without looking at the finish reason or the step count. When the cap is reached the SDK
    returns normally (finish reason `tool-calls`, often with empty text): a run cut off by its step budget is
    handed on as a finished answer.
    """
    del project
    if is_test_module(mod) or "generateText" not in mod.text:
        return
    imports = imports_of(mod)
    for call in calls_named(mod, ("generateText",)):
        name = cname(mod, call)
        origin = imports.get(name if "." not in name else receiver(name), "").split("#")[0]
        if origin != "ai":
            continue
        args = mod.arguments(call)
        opts = unwrap(args[0]) if args else None
        if opts is None or opts.type != "object":
            continue
        keys = mod.object_keys(opts)
        cap_key = next((k for k in _STEP_CAPS if k in keys), None)
        fn = mod.enclosing_function(call)
        if "tools" not in keys or cap_key is None or fn is None:
            continue
        if cap_key == "stopWhen" and _step_cap(mod, keys[cap_key]) is False:
            continue  # no step cap at all: not a question of how the cap's exit is reported
        if _cap_checked(mod, fn) or _result_escapes(mod, call):
            continue
        cap = keys[cap_key]
        pair = cap.parent if cap.parent is not None and cap.parent.type == "pair" else call
        yield Hit(
            node=pair,
            claim=f"`{name}` stops after `{' '.join(mod.node_text(pair).split())}` and returns normally; "
                  f"`{mod.function_name(fn)}` never reads `finishReason` or compares the step count, so hitting the "
                  "cap is taken for an answer",
            consequence="a worker that ran out of steps mid-task (finish reason `tool-calls`, often empty text) is "
                        "reported as a finished answer",
            direction="check `finishReason === \"tool-calls\"` (or `steps.length` against the cap) after the call and "
                      "report an explicit step-limit status or error",
        )


@rule(CheckId.C12, lang="typescript", name="subagent-recursion-without-depth")
def subagent_recursion_without_depth(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags an agent function that calls the model and, as delegation, calls itself again (directly, from a
    tool handler inside it, or through one function of the module) with no depth parameter or depth-like name
    compared anywhere in it: the model decides how deep sub-agents nest.
    """
    if is_test_module(mod):
        return
    for ref in model_index(project).reaching.values():
        head = ref[0]
        if head.module is not mod or len(ref) > 2 or head.name == "<anonymous>":
            continue
        fn = head.node
        recursion = _self_call(mod, project, fn)
        if recursion is None:
            continue
        params = _params(mod, fn)
        guarded = False
        for node in iter_subtree(fn):
            if node.type != "binary_expression":
                continue
            op = node.child_by_field_name("operator")
            if op is None or mod.node_text(op) not in ("<", "<=", ">", ">=", "===", "==", "!==", "!="):
                continue
            names = {mod.node_text(n) for n in iter_subtree(node) if n.type in ("identifier", "property_identifier")}
            if names & params or any(_DEPTH_NAME.search(n) for n in names):
                guarded = True
                break
        if guarded or _asks_a_person(mod, fn, recursion):
            continue
        yield Hit(
            node=recursion,
            verdict=Verdict.SUSPECTED,
            claim=f"`{head.name}` calls the model and re-enters itself as a sub-agent with no depth limit",
            consequence="a model that keeps delegating nests agents without end; cost and stack depth grow until "
                        "the process fails",
            direction="pass a `depth` (or remaining budget) into the nested run and refuse delegation past a fixed "
                      "maximum",
            confirm_hint=f"verify that the nested `{head.name}` run cannot delegate again (e.g. the sub-agent is not "
                         "offered the delegating tool); if it can, nesting depth is unbounded",
        )


_PROMPT_MODULES = frozenset({"@clack/prompts", "inquirer", "@inquirer/prompts", "prompts", "enquirer", "readline",
                             "node:readline", "readline/promises", "node:readline/promises"})
"""Libraries that ask the person at the terminal and wait for the answer."""


def _asks_a_person(mod: TsModule, fn: Node, recursion: Node) -> bool:
    """Before re-entering itself, `fn` waits for a person's answer (a terminal prompt from `_PROMPT_MODULES`,
    `rl.question(...)`, the browser's `prompt(...)`): each level is a turn of a conversation with the user, who
    bounds it, not a delegation the model decides alone."""
    for call in nodes_in(mod, fn, "call_expression"):
        if call.start_byte >= recursion.start_byte:
            continue
        name = cname(mod, call)
        head = name.split(".", 1)[0]
        if imported_from(mod, head) in _PROMPT_MODULES or last(name) == "question" or \
                name in ("prompt", "window.prompt"):
            return True
    return False


def _self_call(mod: TsModule, project: TsProject, fn: Node) -> Node | None:
    """A call inside `fn` that reaches `fn` again, directly or through one project function."""
    for call in nodes_in(mod, fn, "call_expression"):
        for target in resolve_call(mod, project, call):
            if target.module is mod and same(target.node, fn):
                return call
            for inner in nodes_in(target.module, target.node, "call_expression"):
                if any(t.module is mod and same(t.node, fn) for t in resolve_call(target.module, project, inner)):
                    return call
    return None


_CAP_NAME = re.compile(r"step|turn|count|budget|limit|max", re.I)
_STEP_COUNT = re.compile(r"\bsteps\s*\.\s*length\s*(>=?|===?)|(<=?|===?)\s*steps\s*\.\s*length\b|"
                         r"\bstep(Number|Count|Index)\s*(>=?|===?|<=?)|(>=?|===?|<=?)\s*step(Number|Count|Index)\b")
def _step_cap(mod: TsModule, value: Node | None, depth: int = 0) -> bool | None:
    """Whether an `ai` stop condition bounds the number of steps: `stepCountIs(n)` (alone or in the array), a
    predicate comparing `steps.length`, a helper named for a count or budget. False for conditions on the model's
    choices only (`hasToolCall("finish")`), None when it cannot be told."""
    node = unwrap(value)
    if node is None or depth > 3:
        return None
    if node.type == "array":
        verdicts = [_step_cap(mod, item, depth + 1) for item in node.named_children]
        if any(verdicts):
            return True
        return None if None in verdicts else False
    if node.type == "call_expression":
        return bool(_CAP_NAME.search(last(cname(mod, node))))
    if node.type in FUNCTION_TYPES:
        return bool(_STEP_COUNT.search(code_text(mod, node)))
    if node.type == "identifier":
        held = _local_value(mod, node) or unwrap(module_consts(mod).get(mod.node_text(node)))
        return _step_cap(mod, held, depth + 1) if held is not None and not same(held, node) else None
    return None


def _local_value(mod: TsModule, ident: Node) -> Node | None:
    """The initialiser of the nearest earlier `const name = …` in the function of `ident`."""
    fn = mod.enclosing_function(ident)
    if fn is None:
        return None
    found: Node | None = None
    for decl in nodes_in(mod, fn, "variable_declarator"):
        if decl.start_byte > ident.start_byte:
            break
        if mod.node_text(decl.child_by_field_name("name")) == mod.node_text(ident):
            found = decl.child_by_field_name("value")
    return unwrap(found)


# ---------------------------------------------------------------- event-driven tool loops
_EVENT_HOOKS = frozenset({"on", "once", "addEventListener", "addListener", "subscribe", "onMessage"})
_HANDLER_KEY = re.compile(r"^on[A-Z_]?\w*$")
"""A handler in a callbacks object (`callbacks: { onmessage }`, `{ onToolCall }`)."""
_EVENT_TYPE_TEST = re.compile(r"\btype\s*===?|===?\s*[\w$.?]*\btype\b|\.(toolCall|tool_call|toolCalls|functionCalls)\b")


def _registered_handler(mod: TsModule, fn: Node) -> bool:
    """`ws.on("message", (ev) => …)` / `addEventListener(…)` / `callbacks: { onmessage: (m) => … }`."""
    parent = fn.parent
    if parent is not None and parent.type == "arguments" and parent.parent is not None:
        return last(cname(mod, parent.parent)) in _EVENT_HOOKS
    if parent is not None and parent.type == "pair":
        return bool(_HANDLER_KEY.match(mod.node_text(parent.child_by_field_name("key")).strip("'\"")))
    if fn.type == "method_definition":
        return bool(_HANDLER_KEY.match(mod.function_name(fn))) and "type" in code_text(mod, fn)
    return False


def _event_dispatched(mod: TsModule, project: TsProject, fn: Node, depth: int = 2) -> bool:
    """Whether `fn` runs because the model's stream or socket delivered an event: it is a registered handler, or it
    is called from a handler's branch on the event type (`case "response.function_call_arguments.done":`)."""
    if _registered_handler(mod, fn):
        return True
    if depth == 0:
        return False
    for other, call in callers_of(project, mod, fn):
        outer = other.enclosing_function(call)
        for anc in other.ancestors(call):
            if anc.type in FUNCTION_TYPES:
                break
            if anc.type == "switch_case" or (anc.type == "if_statement" and _EVENT_TYPE_TEST.search(
                    code_text(other, anc.child_by_field_name("condition")))):
                if outer is not None and (_registered_handler(other, outer) or
                                          _event_dispatched(other, project, outer, depth - 1)):
                    return True
                break
        else:
            continue
        if outer is not None and outer.type in ("arrow_function", "function_expression") and \
                _registered_handler(other, outer):
            return True
    return False
