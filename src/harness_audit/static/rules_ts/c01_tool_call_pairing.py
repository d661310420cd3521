"""C1 · Tool-call pairing completeness — TypeScript/JavaScript rules.

Shapes detected:
- `guard-exit-skips-result`: in a loop over tool calls, a denial / unknown-tool / validation check
  (`if (!allowed) continue`, `if (!tool) return`, `if (!ok) continue` where `ok = await approve(...)`, a `default:`
  of a `switch` on the tool name that `continue`s, `if (tool.needsApproval) { park(); return }` that pauses the
  turn for a person) that leaves before the result is pushed (also when the push happens in a project helper
  handed the call); code after the loop that answers the batch excuses a `break`, never a `return`.
- `abort-exit-skips-results`: in a loop over tool calls, an abort / budget check (`if (signal.aborted) break`) that
  leaves the loop with the remaining calls unanswered and nothing after the loop answering them.
- `promise-all-tool-batch`: tool calls run with `Promise.all` when the per-call function can throw (including a
  `catch` that re-throws once the run is aborted); the first rejection discards every other call's result.
- `denied-call-returns-no-result`: a per-call function (a `useChat` `onToolCall({ toolCall })` handler, a `.map`
  callback over the calls whose return value is the result) that records the call's result but returns nothing on
  a denial / unknown-tool / validation check (`if (!window.confirm(...)) return;`, `if (!handler) return null`).

Loops over tool calls are recognised by the collection's name, by the lists derived from it in the same function
(`const serial = parsed.filter(...)` where `const parsed = toolCalls.map(...)`), and by what they record (a push of
a result object or of a result maker such as `toolMessage(call, out)` / `new ToolMessage(...)`), also when the loop
destructures the call (`for (const { id, name } of pending.values())`) and answers it by that id.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from harness_audit.findings import CheckId, Verdict
from harness_audit.static.lang.typescript import FUNCTION_TYPES, TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts._agent_idioms import CALL_BLOCK_FIELDS, RESULT_BLOCK_KEYS

_CALLS_ITER = re.compile(
    r"(tool_?calls?|function_?calls?|tool_?uses?|tool_?use_?blocks?|tool_?requests?|tool_?invocations?|"
    r"(^|[a-z_])calls|Calls)$", re.I)
"""Last part of an iterable that holds the model's tool calls."""
_CALLS_FILTER = re.compile(r"['\"`](tool_use|tool-call|tool_call|function_call|tool-use)['\"`]")
"""A content-block filter that keeps the tool calls (`content.filter(b => b.type === "tool_use")`)."""
_CALL_TARGET = re.compile(
    r"^(tool_?call|call|tc|tool_?use|tu|fc|func_?call|function_?call|tool_?request|invocation|pending_?call)$", re.I)
"""Loop variable names that hold one tool call."""
_SINK = re.compile(
    r"(messages|history|conversation|transcript|msgs|results?|outputs?|responses?|observations?|replies|parts|items|"
    r"contents?|blocks|toolMessages|tool_messages|events|input|inputs|inputItems|input_items)$", re.I)
"""Receivers that collect tool results."""
_RECORD_FUNC = re.compile(
    r"^(add|append|record|push|emit|save|store|put|set|send|write|on)\w*(result|message|response|output|observation|"
    r"reply|error|return)s?$", re.I)
"""Helpers whose name says they record a result (`addToolResult`, `appendMessage`, `onToolResult`)."""
_LOG_RECEIVER = re.compile(r"(^|\.)(console|_?log|_?logger|logging|debug|span|tracer|telemetry|metrics|stderr|stdout)$",
                           re.I)
_RESULT_KEYS = set(RESULT_BLOCK_KEYS)
"""Keys and values that mark an object as a tool result (every provider's wire format, see `RESULT_BLOCK_KEYS`)."""

_DENIED = re.compile(r"(\bdeni|\bdeny|reject|forbid|blocked|disallow|not_?allowed|notAllowed)", re.I)
"""Words that name the refusal itself (`if (denied) continue`)."""
_APPROVED = re.compile(r"(approv|allow|permit|permission|confirm|consent|authori[sz]|policy|canUse|can_use|trusted)",
                       re.I)
"""Words that name the permission, so only a negated test skips the call (`if (!allowed) continue`)."""
_NEEDS_APPROVAL = re.compile(r"(needs?|requires?|must|ask)_?(user_?|human_?)?(approval|confirm|permission|consent)",
                             re.I)
"""A test that a call must wait for a person (`if (tool.needsApproval)`): leaving the loop there parks the call."""
_NEGATION = re.compile(r"(^!|\s!|\(!|===?\s*false|!==?\s*true|\?\s*false)")
_UNKNOWN = re.compile(
    r"(unknown|(tools?|registry|handlers?|functions|toolMap|toolsByName|toolRegistry)\w*\.(get|has)\([^)]*name|"
    r"\bin\s+[\w.]*(tools|functions|registry|handlers)\b)", re.I)
_MISSING_IMPL = re.compile(
    r"^!\s*\(?\s*(tool|fn|func|handler|impl|executor|toolFn|tool_fn|toolImpl|definition|def|entry|spec|runner|"
    r"(\w+\.)?(tools|registry|handlers|toolMap|toolRegistry|toolsByName|functions)\[[^\]]+\])\s*\)?$", re.I)
_VALIDATION = re.compile(r"(valid|schema|malformed|parse_?error|parseError|\.success\b|safeParse)", re.I)
_BUDGET = re.compile(r"(budget|limit|\bmax|exceed|quota|cancel|abort|interrupt|deadline|stop|signal|timeout|"
                     r"timed_?out|shutdown|killed)", re.I)


def _text(mod: TsModule, node: Node | None, limit: int = 400) -> str:
    return mod.node_text(node)[:limit]


def _walk(node: Node) -> Iterator[Node]:
    """`node`'s subtree without descending into nested functions (whose code runs elsewhere)."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        if cur is not node and cur.type in FUNCTION_TYPES:
            continue
        stack.extend(reversed(cur.named_children))


# ---------------------------------------------------------------- what a loop over tool calls looks like
_PASS_THROUGH = {"filter", "entries", "values", "slice", "concat", "flat", "reverse", "toReversed", "sort", "toSorted"}


def _iter_base(mod: TsModule, node: Node) -> Node:
    """The collection a loop iterates, seen through `await`, `?? []`, `.filter(...)`, `.entries()`, `[...x]`."""
    cur = node
    for _ in range(6):
        kind = cur.type
        if kind in ("await_expression", "parenthesized_expression", "non_null_expression", "as_expression",
                    "satisfies_expression") and cur.named_children:
            cur = cur.named_children[0]
        elif kind == "binary_expression" and mod.node_text(cur.child_by_field_name("operator")) in ("??", "||"):
            cur = cur.child_by_field_name("left") or cur
        elif kind == "call_expression":
            fn = cur.child_by_field_name("function")
            name = mod.call_name(cur)
            if fn is not None and fn.type == "member_expression" and \
                    mod.node_text(fn.child_by_field_name("property")) in _PASS_THROUGH:
                cur = fn.child_by_field_name("object") or cur
            elif name in ("Object.values", "Object.entries", "Array.from") and mod.arguments(cur):
                cur = mod.arguments(cur)[0]
            else:
                break
        elif kind == "array" and len(cur.named_children) == 1 and cur.named_children[0].type == "spread_element":
            spread = cur.named_children[0]
            cur = spread.named_children[0] if spread.named_children else cur
        else:
            break
    return cur


@dataclass(frozen=True, slots=True)
class _ToolLoop:
    """A loop over tool calls whose body records results."""

    loop: Node
    """The `for`/`for...of` statement, or the callback of a `forEach` over the calls."""
    what: str
    """The iterated collection, as written."""
    strong: bool
    """Whether the collection (not only the loop variable) says it holds tool calls."""
    records: list[Node]
    """Nodes in the body that record a result."""
    target: str | None
    """The loop variable holding one call."""


def _loop_shape(mod: TsModule, loop: Node) -> tuple[str, bool, str | None] | None:
    """(collection, strong, loop variable) when `loop` iterates tool calls."""
    target: str | None = None
    if loop.type == "for_in_statement":
        right = loop.child_by_field_name("right")
        left = loop.child_by_field_name("left")
        if right is None:
            return None
        names = mod.pattern_names(left) if left is not None and left.type != "identifier" else \
            [left] if left is not None else []
        target = mod.node_text(names[-1]) if names else None
        base = _iter_base(mod, right)
        iter_text = mod.node_text(right)
    elif loop.type == "for_statement":
        cond = loop.child_by_field_name("condition")
        m = re.search(r"<\s*([\w.$]+)\.length", mod.node_text(cond)) if cond is not None else None
        if m is None:
            return None
        what = m.group(1)
        strong = bool(_CALLS_ITER.search(what.rsplit(".", 1)[-1]))
        return (what, True, None) if strong else None
    else:
        return None
    dotted = mod.dotted(base)
    tail = dotted.rsplit(".", 1)[-1] if dotted else ""
    if tail and "?" not in tail and _CALLS_ITER.search(tail):
        return dotted, True, target
    source = _derived_calls(mod, mod.enclosing_function(loop), base)
    if source is not None:
        # `const serial = parsed.filter(...)` where `const parsed = toolCalls.map((call) => ({call, args}))`
        return dotted, True, target
    if _CALLS_FILTER.search(iter_text):
        return dotted or iter_text[:60], True, target
    if target is not None and not _awaits_stream(mod, loop) and _selects_calls(mod, loop, target):
        # `for (const block of msg.content) { if (block.type !== "tool_use") continue; ... }`
        return dotted or iter_text[:60], True, target
    if target is not None and _CALL_TARGET.match(target):
        return dotted or iter_text[:60], False, target
    return None


_DERIVING = _PASS_THROUGH | {"map", "flatMap"}
_CALLS_WORDS = re.compile(rb"[cC]alls\b|tool_?[uU]ses?\b|tool_?[rR]equests\b|[iI]nvocations\b|tool_?[uU]se_?[bB]locks")


def _derived_calls(mod: TsModule, fn: Node | None, base: Node, depth: int = 0) -> str | None:
    """The tool-call collection a local array was derived from, one item per call, through up to three local
    bindings (`.filter`, `.map`, `.slice`, spreads): `const serial = parsed.filter(isSerial)` where `const parsed =
    calls.map((call) => ({ call, args }))`."""
    if base.type != "identifier" or depth > 2:
        return None
    if depth == 0:
        scope = fn if fn is not None else mod.tree.root_node
        if not _CALLS_WORDS.search(mod.source, scope.start_byte, scope.end_byte):
            return None  # no collection of calls is named in the function
    for value in mod.bindings(fn).get(mod.node_text(base), []):
        cur = _iter_base(mod, value)
        for _ in range(4):  # `.map(...)` is not a pass-through of `_iter_base`: look through it here
            fnode = cur.child_by_field_name("function") if cur.type == "call_expression" else None
            if fnode is None or fnode.type != "member_expression" or \
                    mod.node_text(fnode.child_by_field_name("property")) not in _DERIVING:
                break
            cur = _iter_base(mod, fnode.child_by_field_name("object") or cur)
        dotted = mod.dotted(cur)
        tail = dotted.rsplit(".", 1)[-1] if dotted else ""
        if tail and "?" not in tail and _CALLS_ITER.search(tail):
            return dotted
        if cur.type == "identifier" and cur != base:
            found = _derived_calls(mod, fn, cur, depth + 1)
            if found is not None:
                return found
    return None


def _awaits_stream(mod: TsModule, loop: Node) -> bool:
    """`for await (const chunk of stream)`: the items are stream events; one of type "tool-call" is a call arriving,
    not one being answered."""
    return mod.source[loop.start_byte:loop.start_byte + 12].replace(b" ", b"").startswith(b"forawait")


def _selects_calls(mod: TsModule, loop: Node, target: str) -> bool:
    """Whether the loop body picks the tool calls out of the items by type (`item.type === "function_call"`) or by
    the field that carries a call in the provider's wire format (`if (!block.toolUse) continue` over Bedrock
    content blocks, `if (part.functionCall)` over Gemini parts)."""
    body = loop.child_by_field_name("body")
    head = mod.source[body.start_byte:min(body.end_byte, body.start_byte + 600)] if body is not None else b""
    fields = "|".join(sorted(CALL_BLOCK_FIELDS))
    if re.search(rf"\bif\s*\(\s*!?\s*{re.escape(target)}\??\.({fields})\s*\)".encode(), head):
        return True
    match = _CALLS_FILTER.search(head.decode("utf-8", errors="replace"))
    if match is None:
        return False
    before = head[:match.start()].decode("utf-8", errors="replace")
    return bool(re.search(rf"\b{re.escape(target)}\??\.type\s*[!=]==?\s*$", before))


def _is_log_call(mod: TsModule, call: Node) -> bool:
    name = mod.call_name(call)
    return bool(_LOG_RECEIVER.search(name.rpartition(".")[0])) or name in ("print", "debug", "log")


def _builds_call_object(mod: TsModule, node: Node) -> bool:
    """`{type: "tool_use", ...}` / `{function: {...}, id}`: constructing the tool CALL itself, not its result."""
    if node.type != "object":
        return False
    keys = mod.object_keys(node)
    kind = mod.string_value(keys.get("type"))
    if kind in ("tool_use", "function", "function_call", "tool-call"):
        return True
    return "function" in keys and "tool_call_id" not in keys


def _is_record(mod: TsModule, node: Node) -> bool:
    """Whether `node` records a result: a push to a result sink, a recording helper, a `yield`, `out[k] = v`."""
    kind = node.type
    if kind == "yield_expression":
        return True
    if kind == "assignment_expression":
        left = node.child_by_field_name("left")
        if left is not None and left.type == "subscript_expression":
            base = mod.dotted(left.child_by_field_name("object"))
            return bool(base) and bool(_SINK.search(base.rsplit(".", 1)[-1]))
        return False
    if kind != "call_expression" or _is_log_call(mod, node):
        return False
    name = mod.call_name(node)
    receiver, _, method = name.rpartition(".")
    if method in ("push", "unshift", "set", "add", "enqueue", "write") and receiver:
        args = mod.arguments(node)
        if _SINK.search(receiver.rsplit(".", 1)[-1]):
            return not (method == "push" and args and _builds_call_object(mod, args[0]))
        # `answers.push({type: "tool-result", toolCallId: call.toolCallId, ...})`: the pushed object says it;
        # `pending.push(toolMessage(p.call, out))`, `batch.push(new ToolMessage({...}))`: so does its maker
        return method in ("push", "unshift") and bool(args) and (
            _result_object(mod, args[0]) or _result_maker(mod, args[0]))
    if _RECORD_FUNC.match(method or name):
        return True
    # `await this.append({ role: "tool", ... })`, `session.add(toolMessage(...))`: whatever the helper is called,
    # handing it a tool-result object records the result
    return any(_result_object(mod, a) and _carries_content(mod, a) for a in mod.arguments(node)[:2])


_CONTENT_KEYS = {"content", "output", "result", "error", "text", "parts", "response", "json", "body", "data",
                 "toolResult", "functionResponse", "item"}


def _carries_content(mod: TsModule, obj: Node) -> bool:
    """Whether a result-shaped object carries the result itself (`{role: "tool", content}`), not only the call's id
    (`events.emit({type: "unknown_tool", toolCallId})` is a notice, not an answer)."""
    return bool(set(mod.object_keys(obj)) & _CONTENT_KEYS)


_RESULT_MAKER = re.compile(r"(tool_?(result|message|output|response|reply|answer)|function_?(result|output|response|"
                           r"message)|ToolMessage|FunctionMessage|ToolResult)\w*$", re.I)
"""A constructor or helper that builds one tool result (`toolMessage(call, out)`, `new ToolMessage({...})`,
`makeToolResult(...)`), not a call (`toolCall(...)`)."""


def _result_maker(mod: TsModule, node: Node) -> bool:
    if node.type not in ("call_expression", "new_expression"):
        return False
    return bool(_RESULT_MAKER.search(mod.call_name(node).rsplit(".", 1)[-1]))


def _tool_loops(mod: TsModule, project: TsProject) -> list[_ToolLoop]:
    """Loops over tool calls whose body records results, computed once per module."""
    return project.memo("c01.tool_loops", mod, lambda: _scan_tool_loops(mod, project))


def _scan_tool_loops(mod: TsModule, project: TsProject) -> list[_ToolLoop]:
    out: list[_ToolLoop] = []
    for loop in mod.nodes("for_in_statement", "for_statement"):
        shape = _loop_shape(mod, loop) or _answered_loop_shape(mod, loop)
        if shape is None:
            continue
        body = loop.child_by_field_name("body")
        if body is None:
            continue
        records = [n for n in _walk(body) if _is_record(mod, n) or _delegated_record(mod, project, n, shape[2])]
        if records:
            strong = shape[1] or _keyed_by_call(mod, records, shape[2])
            out.append(_ToolLoop(loop, shape[0], strong, records, shape[2]))
    if ".forEach(" in mod.text:
        out.extend(_callback_loops(mod))
    return out


_ANSWER_KEY = re.compile(r"\b(tool_call_id|tool_use_id|toolCallId|toolUseId|call_id|callId)['\"]?\s*:\s*")


def _answered_loop_shape(mod: TsModule, loop: Node) -> tuple[str, bool, str | None] | None:
    """`for (const use of uses) { ... results.push({type: "tool_result", tool_use_id: use.id, ...}) }`: whatever the
    collection and the loop variable are called, a body that answers the loop variable by its call id iterates the
    model's tool calls."""
    body = loop.child_by_field_name("body")
    if body is None:
        return None
    if loop.type == "for_statement":
        # `for (let i = 0; i < uses.length; i++) { const use = uses[i]; ... tool_use_id: use.id ... }`
        cond = loop.child_by_field_name("condition")
        m = re.search(r"<\s*([\w.$]+)\.length", mod.node_text(cond)) if cond is not None else None
        if m is None:
            return None
        item = re.search(rf"(?:const|let|var)\s+(\w+)\s*=\s*{re.escape(m.group(1))}\[\s*\w+\s*\]",
                         mod.node_text(body)[:400])
        if item is None or not _answers(mod, body, item.group(1)):
            return None
        return m.group(1), True, item.group(1)
    if loop.type != "for_in_statement" or _awaits_stream(mod, loop):
        return None
    left, right = loop.child_by_field_name("left"), loop.child_by_field_name("right")
    if left is None or right is None:
        return None
    what = mod.dotted(_iter_base(mod, right)) or mod.node_text(right)[:60]
    if left.type == "object_pattern":
        # `for (const { id, name, args } of pending.values())`: the destructured id answers the call
        ids = [mod.node_text(n) for n in mod.pattern_names(left) if _ID_NAME.match(mod.node_text(n))]
        return (what, True, ids[0]) if any(_answers_by_id(mod, body, i) for i in ids) else None
    if left.type != "identifier":
        return None
    target = mod.node_text(left)
    if not _answers(mod, body, target):
        return None
    return what, True, target


_ID_NAME = re.compile(r"^(id|\w*_id|\w*[a-z]Id)$")
"""A destructured name that holds a call's id (`id`, `callId`, `tool_use_id`)."""


def _answers_by_id(mod: TsModule, body: Node, name: str) -> bool:
    """Whether `body` answers a call by the bare id `name`: `{tool_use_id: id}`, or a result maker handed it
    (`toolResult(id, out)`, `this.resultBlock(id, out)` where the helper's name says it builds a result)."""
    text = mod.node_text(body)
    if any(re.match(rf"{re.escape(name)}\b", text[m.end():m.end() + 40]) for m in _ANSWER_KEY.finditer(text)):
        return True
    return any(n.type in ("call_expression", "new_expression") and _RESULT_BUILDER.search(
        mod.call_name(n).rsplit(".", 1)[-1]) and any(mod.node_text(a) == name for a in mod.arguments(n))
        for n in _walk(body))


_RESULT_BUILDER = re.compile(r"(result|response|output|answer|reply)_?(block|part|message|item)?s?$", re.I)
"""A helper that builds one call's answer from its id (`resultBlock(id, out)`, `makeToolResult(id, ...)`)."""


def _answers(mod: TsModule, body: Node, target: str) -> bool:
    """Whether `body` answers `target` by its call id (`tool_use_id: use.id`, `call_id: item.call_id`)."""
    text = mod.node_text(body)
    return any(re.match(rf"{re.escape(target)}\??\.\w*[iI]d\b", text[m.end():m.end() + 60])
               for m in _ANSWER_KEY.finditer(text))


def _keyed_by_call(mod: TsModule, records: list[Node], target: str | None) -> bool:
    """Whether a record answers the loop variable by its id (`{tool_call_id: call.id}`, `toolCallId:
    call.toolCallId`): then the loop iterates tool calls whatever the collection is called."""
    if target is None:
        return False
    pattern = re.compile(rf"\b({'|'.join(sorted(_RESULT_KEYS - {'tool_result', 'tool-result'}))})\s*:\s*"
                         rf"{re.escape(target)}\??\.\w*[iI]d\b")
    return any(pattern.search(mod.node_text(r)[:600]) for r in records)


def _delegated_record(mod: TsModule, project: TsProject, node: Node, target: str | None) -> bool:
    """`await this.executeCall(call, ...)`: a project function handed the loop's call that records its result (the
    loop's record, one hop away)."""
    if target is None or node.type != "call_expression" or _is_log_call(mod, node):
        return False
    if not any(mod.node_text(a) == target for a in mod.arguments(node)):
        return False
    return any(_records_result(m, f) is not None for m, f in _resolve(project, mod, node))


def _callback_loops(mod: TsModule) -> Iterator[_ToolLoop]:
    """`toolCalls.forEach((call) => {...})`: the callback is the loop body, and its `return` acts as `continue`."""
    for call in mod.calls():
        callee = call.child_by_field_name("function")
        prop = callee.child_by_field_name("property") if callee is not None and \
            callee.type == "member_expression" else None
        if prop is None or mod.source[prop.start_byte:prop.end_byte] != b"forEach":
            continue
        args = mod.arguments(call)
        receiver = callee.child_by_field_name("object") if callee is not None else None
        if not args or args[0].type not in FUNCTION_TYPES or receiver is None:
            continue
        fn = args[0]
        names = list(mod.params(fn))
        base = _iter_base(mod, receiver)
        dotted = mod.dotted(base)
        tail = dotted.rsplit(".", 1)[-1] if dotted else ""
        strong = bool(tail and "?" not in tail and _CALLS_ITER.search(tail)) or \
            bool(_CALLS_FILTER.search(mod.node_text(receiver)))
        target = names[0] if names else None
        body = fn.child_by_field_name("body")
        strong = strong or bool(target and body is not None and _answers(mod, body, target))
        if not strong and not (target and _CALL_TARGET.match(target)):
            continue
        records = [n for n in _walk(body) if _is_record(mod, n)] if body is not None else []
        if records:
            yield _ToolLoop(fn, dotted or mod.node_text(receiver)[:60], strong, records, target)


_MEMO: list[tuple[TsProject, dict[int, bool]]] = []


def _function_records(project: TsProject, mod: TsModule, fn: Node, depth: int = 1) -> bool:
    """Whether a project function (or one it calls, `depth` hops) records a result; cached per function."""
    if not _MEMO or _MEMO[0][0] is not project:
        _MEMO[:] = [(project, {})]
    memo = _MEMO[0][1]
    if fn.id in memo:
        return memo[fn.id]
    memo[fn.id] = False  # recursion guard
    found = False
    for node in _walk(fn):
        if _is_record(mod, node) or node.type == "pair" and mod.node_text(node.child_by_field_name("key")).strip(
                "'\"") in _RESULT_KEYS:
            found = True
            break
        if depth > 0 and node.type == "call_expression" and not _is_log_call(mod, node) and \
                any(_function_records(project, m, f, depth - 1) for m, f in _resolve(project, mod, node)):
            found = True
            break
    memo[fn.id] = found
    return found


def _resolve(project: TsProject, mod: TsModule, call: Node) -> list[tuple[TsModule, Node]]:
    return project.resolve_call(mod, call)


def _block_records(mod: TsModule, project: TsProject, block: Node | None) -> bool:
    if block is None:
        return False
    for node in _walk(block):
        if _is_record(mod, node):
            return True
        if node.type == "call_expression" and not _is_log_call(mod, node) and \
                any(_function_records(project, m, f) for m, f in _resolve(project, mod, node)):
            return True
    return False


def _passes_call_to_helper(mod: TsModule, block: Node, target: str | None) -> str | None:
    """An unresolved, non-logging call in `block` handed the loop's call (it may record the result)."""
    if target is None:
        return None
    for node in _walk(block):
        if node.type != "call_expression" or _is_log_call(mod, node) or _notifies(mod, node):
            continue
        if any(mod.node_text(i) == target for a in mod.arguments(node) for i in mod.identifiers(a)):
            return mod.call_name(node) or "a helper"
    return None


_NOTIFY = {"emit", "note", "notify", "warn", "info", "trace", "track", "dispatchEvent", "publish", "broadcast",
           "status", "progress", "report", "toast", "alert"}
"""Methods that announce an event (to listeners, a UI, a trace) rather than record a result in history."""
_RESULT_WORDS = re.compile(r"(result|output|content|observation|tool_result|function_call_output)", re.I)


def _notifies(mod: TsModule, call: Node) -> bool:
    """`this.events.emit({type: "unknown_tool", toolCallId: call.id})`: an event that carries no result content."""
    method = mod.call_name(call).rsplit(".", 1)[-1]
    if method not in _NOTIFY:
        return False
    args = mod.node_text(call.child_by_field_name("arguments"))
    return not _RESULT_WORDS.search(args)


def _exit_of(mod: TsModule, block: Node | None) -> Node | None:
    """The `continue`/`break`/`return` a block runs unconditionally (a top-level statement of it)."""
    if block is None:
        return None
    if block.type in ("continue_statement", "break_statement", "return_statement"):
        return block
    if block.type == "else_clause" and block.named_children:
        return _exit_of(mod, block.named_children[0])
    if block.type not in ("statement_block", "catch_clause"):
        return None
    body = block.child_by_field_name("body") if block.type == "catch_clause" else block
    for stmt in body.named_children if body is not None else []:
        if stmt.type in ("continue_statement", "break_statement", "return_statement"):
            return stmt
    return None


def _throws(block: Node | None) -> bool:
    return block is not None and any(n.type == "throw_statement" for n in _walk(block))


def _own_loop(mod: TsModule, node: Node, loop: Node) -> bool:
    """Whether `node` belongs to the loop's own body: not to a nested loop, nor to a function nested in it."""
    loops = mod.enclosing_loops(node)
    if loop.type in FUNCTION_TYPES:  # a `forEach` callback
        return not loops and mod.enclosing_function(node) == loop
    return bool(loops) and loops[0] == loop and mod.enclosing_function(node) == mod.enclosing_function(loop)


def _exit_word(stmt: Node) -> str:
    return {"continue_statement": "continue", "break_statement": "break"}.get(stmt.type, "return")


def _verdict(tl: _ToolLoop, helper: str | None) -> Verdict:
    return Verdict.CONFIRMED if tl.strong and helper is None else Verdict.SUSPECTED


def _loop_hint(tl: _ToolLoop, helper: str | None) -> str:
    if tl.strong and helper is None:
        return ""
    if helper:
        return f"verify that `{helper}` records a result for the call it is handed"
    return (f"verify that `{tl.what}` holds the model's tool calls and that nothing before the next request "
            "answers the skipped call")


def _skip_reason(mod: TsModule, cond: Node | None) -> str | None:
    """Why a check skips a call: denial, unknown tool or argument validation."""
    if cond is None:
        return None
    text = mod.node_text(cond).strip()
    inner = text[1:-1].strip() if text.startswith("(") and text.endswith(")") else text
    if _DENIED.search(inner) or _APPROVED.search(inner) and _NEGATION.search(inner):
        return "approval/permission"
    if _NEEDS_APPROVAL.search(inner) and not _NEGATION.search(inner):
        return "pending-approval"
    if _UNKNOWN.search(inner) or _MISSING_IMPL.match(inner):
        return "unknown tool"
    if re.fullmatch(r"!\s*\(?\s*[\w.]+\s+in\s+[\w.]+\s*\)?", inner) or \
            re.fullmatch(r"([\w.]+)\s*===?\s*(undefined|null)", inner) and re.match(
                r"(tool|fn|func|handler|impl)", inner, re.I):
        return "unknown tool"
    if _VALIDATION.search(inner):
        return "argument validation"
    return None


_FLAG_TEST = re.compile(r"^(!\s*(?P<a>[\w$]+)|(?P<b>[\w$]+)\s*(===?\s*false|!==?\s*true))$")


def _flag_reason(mod: TsModule, cond: Node | None) -> str | None:
    """`if (!ok) continue` where `ok` holds an approval answer (`const ok = await this.approve(...)`,
    `const allowed = decision.allowed`): the test is the permission check under another name."""
    if cond is None:
        return None
    text = mod.node_text(cond).strip()
    inner = text[1:-1].strip() if text.startswith("(") and text.endswith(")") else text
    m = _FLAG_TEST.match(inner)
    if m is None:
        return None
    name = m.group("a") or m.group("b")
    for value in mod.bindings(mod.enclosing_function(cond)).get(name, []):
        cur = value
        while cur.type in ("await_expression", "parenthesized_expression", "non_null_expression") and \
                cur.named_children:
            cur = cur.named_children[0]
        if cur.type not in ("call_expression", "member_expression"):
            continue
        callee = mod.call_name(cur) if cur.type == "call_expression" else mod.dotted(cur)
        if _APPROVED.search(callee.rsplit(".", 1)[-1]) or _DENIED.search(callee.rsplit(".", 1)[-1]):
            return "approval/permission"
    return None


def _abort_reason(mod: TsModule, cond: Node | None) -> bool:
    return cond is not None and bool(_BUDGET.search(mod.node_text(cond)))


def _answers_after_loop(mod: TsModule, project: TsProject, loop: Node) -> bool:
    """Whether code after `loop` in its block records results (synthetic answers for the skipped calls)."""
    if loop.type in FUNCTION_TYPES:  # a `forEach` callback: look after the statement that calls `forEach`
        while loop.parent is not None and loop.parent.type not in ("statement_block", "program"):
            loop = loop.parent
    parent = loop.parent
    while parent is not None and parent.type == "labeled_statement":
        loop, parent = parent, parent.parent
    if parent is None:
        return False
    after = [s for s in parent.named_children if s.start_byte > loop.end_byte]
    return any(_block_records(mod, project, s) for s in after)


def _exit_ifs(mod: TsModule, project: TsProject, tl: _ToolLoop) -> Iterator[tuple[Node, Node]]:
    """(`if`, exit) directly in the loop, outside `catch`, that leave the iteration without recording a result
    while a result is recorded after them."""
    normal = [r for r in tl.records if not any(p == "handler" for _, p in mod.enclosing_trys(r))]
    for node in mod.inside(mod.nodes("if_statement"), tl.loop):
        if not _own_loop(mod, node, tl.loop):
            continue
        if any(p == "handler" for _, p in mod.enclosing_trys(node)):
            continue
        branch = node.child_by_field_name("consequence")
        exit_stmt = _exit_of(mod, branch)
        if exit_stmt is None or _throws(branch) or _block_records(mod, project, branch):
            continue
        if not any(r.start_byte > node.end_byte for r in normal):
            continue
        yield node, exit_stmt


def _default_exits(mod: TsModule, project: TsProject, tl: _ToolLoop) -> Iterator[tuple[Node, Node]]:
    """(`default:` clause, exit) of a `switch` on the tool name in the loop that `continue`s or `return`s without a
    result while the loop records one after the `switch` (a `break` there only leaves the `switch`)."""
    normal = [r for r in tl.records if not any(p == "handler" for _, p in mod.enclosing_trys(r))]
    for switch in mod.inside(mod.nodes("switch_statement"), tl.loop):
        if not _own_loop(mod, switch, tl.loop) or any(p == "handler" for _, p in mod.enclosing_trys(switch)):
            continue
        if not any(r.start_byte > switch.end_byte for r in normal):
            continue
        value = switch.child_by_field_name("value")
        if value is None or not re.search(r"name|tool|kind|type", mod.node_text(value), re.I):
            continue
        body = switch.child_by_field_name("body")
        default = next((c for c in body.named_children if c.type == "switch_default"), None) \
            if body is not None else None
        if default is None:
            continue
        stmts = [c for c in default.named_children if c.type != "comment"]
        if len(stmts) == 1 and stmts[0].type == "statement_block":
            stmts = list(stmts[0].named_children)
        exit_stmt = next((st for st in stmts if st.type in ("continue_statement", "return_statement")), None)
        if exit_stmt is None or _throws(default) or _block_records(mod, project, default):
            continue
        yield default, exit_stmt


@rule(CheckId.C1, lang="typescript", name="guard-exit-skips-result")
def guard_exit_skips_result(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a denial, unknown-tool or validation check inside a loop over tool calls that `continue`s, `break`s
    or `return`s before the loop pushes a result (`if (!allowed) continue`, `if (!tool) return`). That call (and,
    for `break`/`return`, every later call of the batch) is left unanswered before the next model request."""
    for tl in _tool_loops(mod, project):
        for node, exit_stmt in [*_exit_ifs(mod, project, tl), *_default_exits(mod, project, tl)]:
            if node.type == "switch_default":
                reason: str | None = "unknown tool"  # no case matched the tool's name
            else:
                cond = node.child_by_field_name("condition")
                reason = _skip_reason(mod, cond) or _flag_reason(mod, cond)
            if reason is None:
                continue
            if exit_stmt.type == "break_statement" and _answers_after_loop(mod, project, tl.loop):
                continue  # a `return` leaves the function: the code after the loop never runs
            branch = node.child_by_field_name("consequence")
            helper = _passes_call_to_helper(mod, branch, tl.target) if branch is not None else None
            per_call = exit_stmt.type == "continue_statement" or tl.loop.type in FUNCTION_TYPES
            rest = "" if per_call else " and every later call of the batch"
            if reason == "pending-approval" and not per_call:
                rest += " (results already collected in this loop are dropped with it)"
            yield Hit(
                node=node,
                verdict=_verdict(tl, helper),
                claim=f"in the loop over `{tl.what}`, the {reason} check runs `{_exit_word(exit_stmt)}` before a "
                      f"result is pushed, leaving this call{rest} without a result",
                consequence="the next request carries unanswered tool calls and the provider rejects it (HTTP 400); "
                            "the model is never told the call was refused",
                direction="push a synthetic result (\"denied\", \"unknown tool\", \"invalid arguments\") for the "
                          "call before leaving",
                confirm_hint=_loop_hint(tl, helper),
            )


@rule(CheckId.C1, lang="typescript", name="abort-exit-skips-results")
def abort_exit_skips_results(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags an abort or budget check inside a loop over tool calls (`if (signal.aborted) break`) that leaves the
    loop before the remaining calls get results, when nothing after the loop answers them. The calls after the
    break stay unanswered and the next request (or the resumed session) is rejected."""
    for tl in _tool_loops(mod, project):
        for node, exit_stmt in _exit_ifs(mod, project, tl):
            cond = node.child_by_field_name("condition")
            if _skip_reason(mod, cond) is not None or _flag_reason(mod, cond) is not None or \
                    not _abort_reason(mod, cond):
                continue
            if _answers_after_loop(mod, project, tl.loop):
                continue
            branch = node.child_by_field_name("consequence")
            helper = _passes_call_to_helper(mod, branch, tl.target) if branch is not None else None
            yield Hit(
                node=node,
                verdict=_verdict(tl, helper),
                claim=f"in the loop over `{tl.what}`, `{_text(mod, cond, 80)}` runs `{_exit_word(exit_stmt)}` and "
                      "the calls not yet run get no result; nothing after the loop answers them",
                consequence="after a stop or a budget trip the history ends with unanswered tool calls: the next "
                            "request is rejected by the provider (HTTP 400) and the session cannot be resumed",
                direction="before leaving, push a synthetic \"cancelled\" result for this call and every remaining "
                          "one",
                confirm_hint=_loop_hint(tl, helper),
            )


# ---------------------------------------------------------------- rules: parallel dispatch
_TOOL_WORD = re.compile(
    r"(tool_?calls?|toolCalls?|function_?calls?|functionCalls?|tool_?uses?|toolUses?|tool_?use_?blocks?|"
    r"(call|run|execute|exec|invoke|dispatch|handle|process|perform)_?(single_?|one_?)?tool|"
    r"tool_?(run|exec|invoke|call)|(^|[^\w])calls\b)", re.I)
_BENIGN = re.compile(r"^((console|logger|log|JSON|Object|Array|Math|Date|Number|String|Symbol|Reflect)(\..*)?|"
                     r"JSON\.stringify|String|Number|Boolean|Promise\.resolve|"
                     r"([\w$#.]+\.)?(push|map|filter|join|slice|toString|trim|set|get|has|includes|concat|find|keys|"
                     r"values|entries|some|every|startsWith|endsWith|split|replace|toLowerCase|toUpperCase|indexOf|"
                     r"bind|add|delete|resolve|now))$")


def _keeps_error(handler: Node) -> bool:
    """A `catch` with no unconditional `throw` (a top-level statement of its block)."""
    body = handler.child_by_field_name("body")
    return body is not None and not any(s.type == "throw_statement" for s in body.named_children)


def _catches_all(mod: TsModule, fn: Node) -> bool:
    """Whether a function cannot reject: its body is a `try` whose `catch` keeps the error, or its expression body
    ends in `.catch(...)`."""
    body = fn.child_by_field_name("body")
    if body is None:
        return False
    if body.type != "statement_block":
        return _expression_caught(mod, body)
    for stmt in body.named_children:
        if stmt.type == "try_statement":
            handler = stmt.child_by_field_name("handler")
            if handler is not None and _keeps_error(handler) and not _throws(handler):
                return True  # a `catch` that re-throws under a condition (`if (aborted) throw e`) still rejects
        if stmt.type == "return_statement" and stmt.named_children and _expression_caught(mod, stmt.named_children[0]):
            return True
    return False


_CANCEL = re.compile(r"(abort|cancel|interrupt|signal|stop)", re.I)


def _rethrow_on_cancel(mod: TsModule, fn: Node) -> str | None:
    """The condition of a `catch` in `fn` that re-throws when the run is stopped (`if (ctx.signal.aborted) throw
    err`), if there is one."""
    for tr in mod.inside(mod.nodes("try_statement"), fn):
        handler = tr.child_by_field_name("handler")
        for node in _walk(handler) if handler is not None else []:
            if node.type != "if_statement" or not _throws(node.child_by_field_name("consequence")):
                continue
            cond = node.child_by_field_name("condition")
            if cond is not None and _CANCEL.search(mod.node_text(cond)):
                return _text(mod, cond, 60).strip("() ")
    return None


def _catches_some(mod: TsModule, fn: Node) -> bool:
    """Whether a function turns some errors into results: a `catch` anywhere in it (callbacks included) that keeps
    the error."""
    for tr in mod.inside(mod.nodes("try_statement"), fn):
        handler = tr.child_by_field_name("handler")
        if handler is not None and _keeps_error(handler):
            return True
    return False


def _expression_caught(mod: TsModule, expr: Node) -> bool:
    cur = expr
    while cur.type in ("await_expression", "parenthesized_expression") and cur.named_children:
        cur = cur.named_children[0]
    if cur.type != "call_expression":
        return False
    name = mod.call_name(cur)
    return name.endswith(".catch") or name.endswith(".then") and len(mod.arguments(cur)) > 1


@dataclass(frozen=True, slots=True)
class _Risk:
    """Why a per-call function of a batch can reject."""

    verdict: Verdict
    """Confirmed when a throwing path is shown, suspected when it rests on an unresolved helper."""
    what: str
    """The call that can throw."""


_EXECUTES = re.compile(
    r"(?:(?<![A-Za-z])(?:execute|exec|run|invoke|call|dispatch|handle|perform|process)|"
    r"(?:Execute|Exec|Run|Invoke|Call|Dispatch|Handle|Perform|Process))(?:[A-Z][a-z]+){0,2}_?[Tt]ool"
    r"|(?<![A-Za-z])(?:execute|run|invoke|call|dispatch|handle)_tool"
    r"|[Tt]ool\w{0,12}\.(?:execute|run|invoke|call|handler|fn)\s*\("
    r"|\b(?:tools|registry|handlers|toolMap|toolRegistry|toolsByName|toolHandlers|functions|availableTools|toolImpls?)"
    r"\s*(?:\.get\([^)]*\)|\[[^\]]+\])\s*(?:!|\?\.)?\s*(?:\.?\s*\(|\.(?:execute|run|invoke|call|handler)\b)"
    r"|\.execute\s*\(")
"""Text that runs a tool: `executeTool(...)`, `tool.execute(...)`, `registry[name](args)`, `tools.get(n)!.run(...)`."""


_EXEC_NAME = re.compile(r"^#?(execute|exec|run|invoke|call|dispatch|handle|perform|process)", re.I)
"""A function named for doing the call (a `get…`/`resolve…`/`ensure…` helper runs no tool)."""


def _runs_tool(mod: TsModule, call: Node) -> bool:
    """Whether the call itself runs a tool, judged on its callee and its non-function arguments."""
    callee = mod.node_text(call.child_by_field_name("function"))[:200]
    args = [a for a in mod.arguments(call) if a.type not in FUNCTION_TYPES]
    text = callee + "(" + ", ".join(mod.node_text(a)[:100] for a in args) + ")"
    return bool(_EXECUTES.search(text))


_REGISTRY_LOOKUP = re.compile(
    r"^(this\.)?\w*(tools|registry|handlers|toolMap|toolRegistry|toolsByName|toolHandlers|functions|availableTools|"
    r"toolImpls?|Tools|Registry|Handlers)\s*(\.get\(|\[)")
"""A registry lookup by name: `registry[block.name]`, `this.tools.get(call.name)`."""


def _runs_registry_entry(mod: TsModule, fn: Node) -> bool:
    """Whether `fn` calls what it looked up in a tool registry: `const def = registry[block.name]; await
    def.run(input)` (the lookup and the call are on different lines, so `_EXECUTES` does not see them)."""
    scope = mod.bindings(fn)
    for node in _walk(fn):
        if node.type != "call_expression":
            continue
        callee = node.child_by_field_name("function")
        if callee is not None and callee.type == "member_expression" and mod.node_text(
                callee.child_by_field_name("property")) in ("run", "execute", "invoke", "call", "handler", "fn"):
            callee = callee.child_by_field_name("object")
        if callee is None or callee.type != "identifier":
            continue
        if any(_REGISTRY_LOOKUP.match(mod.node_text(v)[:200]) for v in scope.get(mod.node_text(callee), [])):
            return True
    return False


def _may_throw(project: TsProject, mod: TsModule, fn: Node, depth: int = 1) -> bool:
    """Whether a function has a way to fail outside `try`: a `throw`, a `JSON.parse`, a tool run, or an `await` of
    something that is not a project function turning errors into results (a function that only builds an object
    cannot reject)."""
    for node in _walk(fn):
        if node.type == "throw_statement" or node.type == "call_expression" and \
                mod.source[node.start_byte:node.start_byte + 10] == b"JSON.parse":
            if not mod.guarded(node):
                return True
        elif node.type == "call_expression" and _runs_tool(mod, node) and not mod.guarded(node):
            refs = _resolve(project, mod, node)
            if not refs or not all(_catches_some(m, f) for m, f in refs):
                return True
        elif node.type == "await_expression" and not mod.guarded(node):
            awaited = node.named_children[0] if node.named_children else None
            is_call = awaited is not None and awaited.type == "call_expression"
            refs = _resolve(project, mod, awaited) if is_call and awaited is not None else []
            if refs:
                if depth > 0 and any(not _catches_some(m, f) and _may_throw(project, m, f, depth - 1)
                                     for m, f in refs):
                    return True
                continue
            callbacks = [a for a in mod.arguments(awaited) if a.type in FUNCTION_TYPES] if is_call and \
                awaited is not None else []
            # an unknown wrapper (a span, a timeout) fails as its callback does
            if not callbacks or depth > 0 and any(_may_throw(project, mod, cb, depth - 1) for cb in callbacks):
                return True
    return False


def _batch_risk(mod: TsModule, project: TsProject, items: list[Node]) -> _Risk | None:
    """None when the batch runs no tool or every per-call function catches its errors; otherwise why the batch
    can reject. Per-call functions are the calls that run a tool or are handed the call itself."""
    unresolved: str | None = None
    partial: str | None = None
    confirmed: str | None = None
    executes = False
    for item in items:
        # the item's own callbacks (`calls.map(async (c) => ...)`); functions nested in them run elsewhere
        roots = [n for n in _walk(item) if n.type in FUNCTION_TYPES] or [item]
        for root in roots:
            if root.type in FUNCTION_TYPES and _catches_all(mod, root):
                executes = executes or bool(_EXECUTES.search(mod.node_text(root)[:3000]))
                continue
            handed = set(mod.params(root)) if root.type in FUNCTION_TYPES else set()
            for node in _walk(root):
                if node.type == "throw_statement" and not mod.guarded(node):
                    confirmed = confirmed or "`throw`"
                if node.type != "call_expression" or mod.guarded(node):
                    continue
                name = mod.call_name(node)
                if name == "JSON.parse":
                    confirmed = confirmed or "`JSON.parse`"
                    continue
                if name in ("Promise.all", "Promise.allSettled") or _BENIGN.match(name) or _is_log_call(mod, node):
                    continue
                args = node.child_by_field_name("arguments")
                runs = _runs_tool(mod, node)
                takes = args is not None and any(mod.node_text(i) in handed for i in mod.identifiers(args))
                if not runs and not takes:
                    continue
                refs = _resolve(project, mod, node)
                short = name.rsplit(".", 1)[-1]
                if not refs:
                    if runs:
                        executes = True
                        confirmed = confirmed or f"`{mod.node_text(node.child_by_field_name('function'))[:60]}`"
                    elif _EXEC_NAME.match(short):
                        executes = True  # a `run…`/`handle…` helper handed the call runs it, as far as we can see
                        unresolved = unresolved or f"`{name}`"
                    continue
                executes = executes or runs or bool(_EXEC_NAME.match(short)) and any(
                    _EXECUTES.search(m.node_text(f)[:4000]) or _runs_registry_entry(m, f) for m, f in refs)
                if all(_catches_all(m, f) or not _may_throw(project, m, f) for m, f in refs):
                    continue
                if all(_catches_some(m, f) for m, f in refs):
                    cancel = next((c for m, f in refs if (c := _rethrow_on_cancel(m, f))), None)
                    if cancel is not None:
                        # stopping a run is routine: that path is reachable
                        confirmed = confirmed or f"`{name}` (it re-throws when `{cancel}`)"
                        continue
                    # errors become results under some condition: the batch rejects only otherwise
                    partial = partial or f"`{name}`"
                    continue
                confirmed = confirmed or f"`{name}`"
    if not executes:
        return None
    if confirmed:
        return _Risk(Verdict.CONFIRMED, confirmed)
    what = partial or unresolved
    return _Risk(Verdict.SUSPECTED, what) if what else None


def _batch_items(mod: TsModule, call: Node) -> list[Node]:
    """The batch's argument plus, for a bare array name, what was assigned or pushed into it in the function."""
    args = mod.arguments(call)
    if not args:
        return []
    items = [args[0]]
    if args[0].type == "identifier":
        name = mod.node_text(args[0])
        fn = mod.enclosing_function(call)
        items.extend(mod.bindings(fn).get(name, []))
        scope = fn if fn is not None else mod.tree.root_node
        needle = f"{name}.push(".encode()
        at = mod.source.find(needle, scope.start_byte, scope.end_byte)
        while at >= 0:
            node = mod.tree.root_node.descendant_for_byte_range(at, at + len(name))
            push = node.parent.parent if node is not None and node.parent is not None else None
            if push is not None and push.type == "call_expression":
                items.extend(mod.arguments(push))
                items.extend(mod.enclosing_loops(push)[:1])
            at = mod.source.find(needle, at + len(needle), scope.end_byte)
    return items


def _answered_by_handler(mod: TsModule, project: TsProject, node: Node) -> bool:
    """Whether `node` sits in a `try` whose `catch` records results (error results for the batch)."""
    for tr, part in mod.enclosing_trys(node):
        handler = tr.child_by_field_name("handler")
        if part == "body" and handler is not None and _block_records(mod, project, handler):
            return True
    return False


@rule(CheckId.C1, lang="typescript", name="promise-all-tool-batch")
def promise_all_tool_batch(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags tool calls run in parallel with `Promise.all` when the per-call function can reject (no `try`/`catch`
    or `.catch` turning its error into a result). The first rejection rejects the batch: the results of the calls
    that succeeded are lost and every call of the batch is left unanswered."""
    if "Promise.all(" not in mod.text:
        return
    for call in mod.calls():
        callee = call.child_by_field_name("function")
        if callee is None or mod.source[callee.start_byte:callee.end_byte] != b"Promise.all":
            continue
        items = _batch_items(mod, call)
        if not items or not any(_TOOL_WORD.search(_text(mod, i)) or _maps_calls(mod, i) for i in items):
            continue
        if mod.guarded(call) and _answered_by_handler(mod, project, call):
            continue
        risk = _batch_risk(mod, project, items)
        if risk is None:
            continue
        yield Hit(
            node=call,
            verdict=risk.verdict,
            claim=f"tool calls are dispatched with `Promise.all`; {risk.what} in the per-call path can reject, and one "
                  "rejection rejects the whole batch",
            consequence="the results of the calls that succeeded are lost and every call of the batch is left "
                        "unanswered; the next request is rejected or the run dies",
            direction="use `Promise.allSettled` (or catch inside each call) and turn every rejection into that call's "
                      "error result",
            confirm_hint="" if risk.verdict is Verdict.CONFIRMED else
            f"verify that {risk.what} can throw instead of returning an error result",
        )


def _maps_calls(mod: TsModule, item: Node) -> bool:
    """`xs.map((call) => ...)` whose callback parameter names one tool call."""
    if item.type != "call_expression" or not mod.call_name(item).endswith(".map"):
        return False
    args = mod.arguments(item)
    if not args or args[0].type not in FUNCTION_TYPES:
        return False
    return any(_CALL_TARGET.match(p) for p in mod.params(args[0]))


# ---------------------------------------------------------------- rules: per-call functions
def _records_result(mod: TsModule, fn: Node) -> Node | None:
    """The first push of a tool result in `fn`, or a returned tool result (an object with the call's id), outside
    nested functions."""
    for node in _walk(fn):
        if node.type == "call_expression" and _is_record(mod, node) and any(
                k in mod.node_text(node) for k in _RESULT_KEYS):
            return node
        if node.type == "return_statement" and node.named_children and node.named_children[0].type == "object" \
                and set(mod.object_keys(node.named_children[0])) & _RESULT_KEYS:
            return node
    return None


_CONDITIONAL = ("if_statement", "switch_case", "switch_default", "ternary_expression", "catch_clause", "else_clause")


def _on_path_before(mod: TsModule, record: Node, guard: Node, fn: Node) -> bool:
    """Whether `record` runs unconditionally before `guard`: none of its enclosing branches (up to `fn`) leaves out
    the guard. A record in an earlier `if (name === "copy") {...; return}` block is another path."""
    if record.start_byte >= guard.start_byte:
        return False
    for anc in mod.ancestors(record):
        if anc == fn:
            return True
        if anc.type in _CONDITIONAL and not mod.within(guard, anc):
            return False
        if anc.type in FUNCTION_TYPES:
            return False
    return True


def _per_call_records(mod: TsModule, fn: Node, mapped: bool) -> list[Node]:
    """Every place `fn` records the call's result: a recording call that names the call's id, a returned result
    object, and (for a `.map` callback over the calls, whose return value is the result) a returned result."""
    out: list[Node] = []
    for node in _walk(fn):
        if node.type == "call_expression" and _is_record(mod, node) and any(
                k in mod.node_text(node) for k in _RESULT_KEYS):
            out.append(node)
        elif node.type == "return_statement" and node.named_children:
            value = node.named_children[0]
            while value.type in ("await_expression", "parenthesized_expression", "as_expression",
                                 "satisfies_expression") and value.named_children:
                value = value.named_children[0]
            if value.type == "object" and set(mod.object_keys(value)) & _RESULT_KEYS or \
                    mapped and (_result_object(mod, value) or _result_maker(mod, value)):
                out.append(node)
    return out


_EMPTY_RETURN = {"null", "undefined", "[]", "false"}


def _mapped_over_calls(mod: TsModule, fn: Node) -> str | None:
    """`toolUses.map(async (tu) => {...})`: the collection when `fn` is a `.map`/`.flatMap` callback over tool calls
    (its return value is that call's result)."""
    parent = fn.parent
    call = parent.parent if parent is not None and parent.type == "arguments" else None
    callee = call.child_by_field_name("function") if call is not None else None
    if callee is None or callee.type != "member_expression" or \
            mod.node_text(callee.child_by_field_name("property")) not in ("map", "flatMap"):
        return None
    receiver = callee.child_by_field_name("object")
    if receiver is None:
        return None
    base = _iter_base(mod, receiver)
    dotted = mod.dotted(base)
    tail = dotted.rsplit(".", 1)[-1] if dotted else ""
    if tail and "?" not in tail and _CALLS_ITER.search(tail) or _CALLS_FILTER.search(mod.node_text(receiver)):
        return dotted or mod.node_text(receiver)[:60]
    return _derived_calls(mod, mod.enclosing_function(call), base)


@rule(CheckId.C1, lang="typescript", name="denied-call-returns-no-result")
def denied_call_returns_no_result(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a per-call function (its parameter is one tool call, e.g. a `useChat` `onToolCall({ toolCall })`
    handler, or a `.map` callback over the calls) that records the call's result but returns nothing on a denial,
    unknown-tool or validation check (`if (!allowed) return;`, `if (!window.confirm(...)) return;`, `if (!tool)
    return null`). That call is left unanswered."""
    reported: set[int] = set()
    per_call: dict[int, tuple[bool, str | None]] = {}
    for node in mod.nodes("if_statement"):
        branch = node.child_by_field_name("consequence")
        exit_stmt = _exit_of(mod, branch)
        if exit_stmt is None or exit_stmt.type != "return_statement":
            continue
        value = exit_stmt.named_children[0] if exit_stmt.named_children else None
        if value is not None and mod.node_text(value).replace(" ", "") not in _EMPTY_RETURN:
            continue
        fn = mod.enclosing_function(node)
        if fn is None or fn.id in reported or mod.enclosing_loops(node):
            continue
        if fn.id not in per_call:
            mapped_over = _mapped_over_calls(mod, fn)
            # a `forEach` callback is a loop body: judged by the loop rules
            per_call[fn.id] = (mapped_over is not None or any(_CALL_TARGET.match(p) for p in mod.params(fn)) and
                               not mod.iteration_callback(fn), mapped_over)
        eligible, mapped = per_call[fn.id]
        if not eligible:
            continue
        cond = node.child_by_field_name("condition")
        reason = _skip_reason(mod, cond) or _flag_reason(mod, cond)
        if reason is None or _throws(branch):
            continue
        records = _per_call_records(mod, fn, mapped is not None)
        later = [r for r in records if r.start_byte > node.end_byte]
        if not later or any(_on_path_before(mod, r, node, fn) for r in records) or \
                _block_records(mod, project, branch):
            continue
        reported.add(fn.id)
        fname = mod.function_name(fn)
        sdk_handler = _sdk_tool_handler(mod, fn)
        where = f"the `.map` callback over `{mapped}`" if mapped is not None else f"`{fname}`"
        yield Hit(
            node=node,
            verdict=Verdict.CONFIRMED if sdk_handler or mapped is not None else Verdict.SUSPECTED,
            claim=f"{where} records the call's result (line {mod.line(later[0])}) but returns "
                  f"{'nothing' if value is None else mod.node_text(value)} on the {reason} check",
            consequence="the call id is left unanswered in history; the next request is rejected by the provider "
                        "(HTTP 400) and the model is never told the tool did not run",
            direction="record an error result (\"denied\", \"unknown tool\", \"invalid arguments\") for the call "
                      "before returning",
            confirm_hint="" if sdk_handler or mapped is not None else
            f"verify that the caller of `{fname}` records nothing else for the call when it returns early",
        )


def _sdk_tool_handler(mod: TsModule, fn: Node) -> bool:
    """`useChat({ onToolCall({ toolCall }) {...} })`: a client-side tool handler whose caller is the SDK, which
    records nothing for a call the handler leaves unanswered."""
    parent = fn.parent
    if fn.type == "method_definition":
        name = fn.child_by_field_name("name")
        return name is not None and mod.node_text(name) == "onToolCall"
    if parent is not None and parent.type == "pair":
        return mod.node_text(parent.child_by_field_name("key")).strip("'\"") == "onToolCall"
    return False


def _result_object(mod: TsModule, node: Node) -> bool:
    """An object literal that is a tool result (`{ tool_call_id: c.id, ... }`, `{ type: "tool_result", ... }`)."""
    if node.type != "object":
        return False
    keys = mod.object_keys(node)
    if bool(set(keys) & _RESULT_KEYS) or mod.string_value(keys.get("type")) in _RESULT_KEYS or \
            mod.string_value(keys.get("role")) in ("tool", "function"):
        return True
    # a realtime event that carries the result item: `{type: "conversation.item.create", item: {...}}`
    item = keys.get("item")
    if item is not None and item.type == "object" and _result_object(mod, item):
        return True
    # an Anthropic / Gemini user turn that carries result blocks: `{role: "user", content: [{type: "tool_result"}]}`
    blocks = keys.get("content") or keys.get("parts")
    return blocks is not None and blocks.type == "array" and any(
        b.type == "object" and _result_object(mod, b) for b in blocks.named_children)
