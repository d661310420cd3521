"""C2 · History is append-only — TypeScript/JavaScript rules.

Shapes detected:
- `history-array-rewritten`: the history array itself rewritten outside a compaction step: `messages.splice(...)`,
  `unshift`, `shift`, `sort`, `reverse`, `fill`, `copyWithin`, `messages[i] = ...` (also `history[i] =
  {...history[i], ...}`), `delete messages[i]` (replacing the newest element, `[messages.length - 1]`, is not
  flagged: that is how an unsent message is finalised; clearing the whole array is a new conversation). Editing or
  regenerating in place counts; a helper rewriting a parameter typed as a message list (`CoreMessage[]`) is
  suspected when its callers cannot be followed; a local array the function grows turn by turn (`contents.push({
  role, parts })`) and then stores (`saveHistory(id, contents)`) is the conversation, so rewriting it between the
  two is confirmed. An emptiness test of another array (`if (calls.length === 0)`) is not a size budget.
- `history-entry-mutated`: a message already in history written in place: `messages[messages.length - 1].content
  += delta`, `this.history.at(-1)!.content = ...`, `const last = messages[i]; last.content = ...`, `for (const m of
  this.messages) m.content = ...`, `Object.assign(messages[i], ...)`, `messages[i].tool_calls.push(...)`, writes
  through a shallow copy (`[...this.messages]`) that shares the message objects.
- `pushed-message-mutated`: a message object written after it was pushed to history in the same function (streaming
  back-fill: `this.messages.push(msg)` then `msg.content += delta`).
- `history-entry-replaced`: a message already in history replaced by a modified copy: built with its id (`new
  AIMessage({ id: last.id, ... })`, `{ ...last, content }`) and returned into the messages reducer or handed to
  `updateState`/`upsert…`, or the history re-assigned to a map of itself returning edited copies
  (`this.history = this.history.map(...)`, `setMessages((prev) => prev.map(...))`).

Writes reach a message also through its parts (`for (const part of last.content) part.text = ...`, `msg.parts
.forEach((p) => Object.assign(p, ...))`); a helper's parameter is live history when a caller hands it an array that
grows turn by turn (passed on every loop iteration to a helper that pushes to it), and any array is the stored
conversation when the function saves it after the write (`saveChat({ messages })`, not a deep copy).

Not history: `this.messages` of a class that models one response (`ChatModelOutput` assembling itself from chunks),
a write into a field the model never sees (`last.metadata`), a `merge…` into the newest assistant message of a buffer
that tracks unsaved messages (`pendingIds.add(id)`), `splice(i, 0, m)` with `i` defaulting to the length (an append),
and an eviction under an overflow test, also from a callback (`victims.forEach((m) => H.splice(...))`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from enum import StrEnum

from tree_sitter import Node

from harness_audit.findings import CheckId, Verdict
from harness_audit.static.lang.typescript import FUNCTION_TYPES, TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts._agent_idioms import is_test_module

_HISTORY = re.compile(
    r"^[_#$]*(\w*?_)?(messages|message_?history|history|chat_?history|conversation|conversation_?history|"
    r"transcript|msgs|dialog(ue)?|chat_?messages|agent_?messages|turns)$", re.I)
_HISTORY_CAMEL = re.compile(r"^[_#$]*[a-z]+(Messages|History|Conversation|Transcript|Msgs)$")
"""Last name of an expression that holds the conversation (`messages`, `chatHistory`, `this.#history`)."""
_PAYLOAD = re.compile(
    r"^[_#$]*(openai|anthropic|gemini|google|vertex|bedrock|mistral|cohere|groq|ollama|api|request|req|converted|"
    r"formatted|processed|payload|prompt|wire|sdk|raw|provider|clean|cleaned|new|result|out|output|merged|filtered|"
    r"final|display|ui|rendered|visible|pending|queued|tmp|temp|local|copied|copy|trimmed|truncated|compacted|"
    r"sanitized|normalized|outgoing|next|model|llm|input|initial|extra|system)(_|[A-Z])", re.I)
"""Prefixes of arrays built for one request or one view, not the history itself."""
_COMPACTION = re.compile(
    r"(compact|summar|trim|truncat|prune|shrink|compress|window|evict|condens|(^|_)fit($|_|[A-Z])|rewind|rollback|"
    r"undo|repair|orphan|broken|dangling|heal|reset|clear|restore|load|hydrate|deserial|migrat|import|fork|"
    r"retry|reducer)", re.I)
"""Names of the isolated steps allowed to rewrite history (judged under C13), and of steps that rebuild it (editing
or regenerating a message the provider already saw is neither: it is judged like any other rewrite)."""
_STATE_ROOT = re.compile(r"^(ctx|context|\w+Context|\w+_context|state|\w+State|\w+_state|agent|session|memory|run|"
                         r"thread|chat|store|conversation|convo)$")
"""Parameter names whose properties are long-lived run state (`ctx.state.messages`)."""
_ARRAY_METHODS = {"splice", "unshift", "shift", "sort", "reverse", "fill", "copyWithin"}
_ARRAY_METHOD_BYTES = tuple(m.encode("utf-8") for m in sorted(_ARRAY_METHODS))
_ELEMENT_METHODS = {"push", "splice", "unshift", "pop", "shift", "set", "delete", "sort", "reverse", "fill"}
_MODEL_CALL = re.compile(r"(chat\.completions\.(create|stream|parse)|messages\.(create|stream)|responses\.(create|"
                         r"stream)|\b(generateText|streamText|generateObject|streamObject)|\.(chat|complete|"
                         r"completion|invoke)\s*\()")


class _Origin(StrEnum):
    """Where a history expression comes from, as far as the enclosing function shows."""

    LIVE = "live"
    """Object or module state (`this.messages`, `ctx.state.messages`) or an alias of it."""
    PARAM = "param"
    """A parameter: the caller's array."""
    SHALLOW = "shallow"
    """A shallow copy of live history: a new array holding the same message objects."""
    LOCAL = "local"
    """An array built in this function (a request payload), or something this rule cannot place."""


@dataclass(frozen=True, slots=True)
class _Place:
    """A history expression and what it is."""

    origin: _Origin
    """Where it comes from."""
    name: str
    """How it is written in the code."""
    via: str = ""
    """For a shallow copy or an alias, the live history it came from."""


def _unwrap(node: Node) -> Node:
    while node.type in ("non_null_expression", "parenthesized_expression", "as_expression", "satisfies_expression",
                        "await_expression") and node.named_children:
        node = node.named_children[0]
    return node


def _history_name(mod: TsModule, expr: Node) -> str | None:
    """The expression as written when it names a conversation history (and not a request payload)."""
    expr = _unwrap(expr)
    if expr.type == "subscript_expression":
        key = mod.string_value(expr.child_by_field_name("index"))
        base = mod.dotted(expr.child_by_field_name("object"))
        if key is not None and base and _is_history_word(key):
            return f"{base}[{key!r}]"
        return None
    if expr.type not in ("identifier", "member_expression"):
        return None
    dotted = mod.dotted(expr)
    if not dotted or "()" in dotted or "?" in dotted or "[]" in dotted:
        return None
    if _is_history_word(dotted.rsplit(".", 1)[-1]):
        return dotted
    if _GEMINI_CONTENTS.match(dotted.rsplit(".", 1)[-1]) and _speaks_gemini(mod):
        return dotted
    if _RESPONSES_ITEMS.match(dotted.rsplit(".", 1)[-1]) and _speaks_responses(mod):
        return dotted
    return dotted if _stored_payload_word(mod, expr, dotted) else None


_GEMINI_CONTENTS = re.compile(r"^[_#$]*(contents|(chat|conversation|history)_?[cC]ontents)$")
"""Gemini's conversation is a `contents` array of `{role, parts}` turns (`generateContent({contents})`)."""
_GEMINI_WORDS = ("functionResponse", "functionCall", "generateContent", "role: \"model\"",
                 "role: 'model'")


_RESPONSES_ITEMS = re.compile(r"^[_#$]*(input|input_?items|inputItems|items|conversation_?items|conversationItems)$")
"""The OpenAI Responses API's conversation is a list of input items (`responses.create({input})`)."""


def _speaks_responses(mod: TsModule) -> bool:
    """Whether the module builds Responses API items (`function_call_output`, `responses.create`), so an `input` /
    `items` array there is the conversation."""
    return "function_call_output" in mod.text or "responses.create" in mod.text or "responses.stream" in mod.text


def _speaks_gemini(mod: TsModule) -> bool:
    """Whether the module builds Gemini turns (`functionCall` / `functionResponse` parts, `role: "model"`), so a
    `contents` array there is the conversation, not a file's contents."""
    return "parts" in mod.text and any(w in mod.text for w in _GEMINI_WORDS)


def _is_history_word(word: str) -> bool:
    return bool(_HISTORY.match(word) or _HISTORY_CAMEL.match(word)) and not _PAYLOAD.match(word)


def _stored_payload_word(mod: TsModule, expr: Node, dotted: str) -> bool:
    """`finalMessages` / `updatedHistory` (a name that usually means a request payload) that the function stores
    as the conversation (`saveChat({ messages: finalMessages })`): it is the history after all."""
    word = dotted.rsplit(".", 1)[-1]
    if not (_HISTORY.match(word) or _HISTORY_CAMEL.match(word)) or "." in dotted:
        return False
    return _persisted(mod, mod.enclosing_function(expr), dotted) is not None


def _root(node: Node) -> Node:
    cur = _unwrap(node)
    while cur.type in ("member_expression", "subscript_expression", "call_expression"):
        nxt = cur.child_by_field_name("function" if cur.type == "call_expression" else "object")
        if nxt is None:
            break
        cur = _unwrap(nxt)
    return cur


def _shallow_copy_of(mod: TsModule, value: Node) -> Node | None:
    """The copied array when `value` is `[...x]`, `x.slice()`, `Array.from(x)`, `x.concat()` or `structuredClone`-free
    copies that share the message objects."""
    value = _unwrap(value)
    if value.type == "array" and len(value.named_children) == 1 and value.named_children[0].type == "spread_element":
        spread = value.named_children[0]
        return spread.named_children[0] if spread.named_children else None
    if value.type == "call_expression":
        name = mod.call_name(value)
        args = mod.arguments(value)
        if name == "Array.from" and len(args) == 1:
            return args[0]
        callee = value.child_by_field_name("function")
        if callee is not None and callee.type == "member_expression" and not args and \
                mod.node_text(callee.child_by_field_name("property")) in ("slice", "concat"):
            return callee.child_by_field_name("object")
    return None


def _place(mod: TsModule, fn: Node | None, expr: Node, depth: int = 0) -> _Place | None:
    """Classify a history expression: live object state, a parameter, a shallow copy, or a local payload."""
    name = _history_name(mod, expr)
    if name is None:
        return None
    root = _root(expr)
    chained = root != _unwrap(expr)
    if root.type == "this":
        return _Place(_Origin.LOCAL if _response_class(mod, expr) else _Origin.LIVE, name)
    if root.type != "identifier":
        return _Place(_Origin.LOCAL, name)
    ident = mod.node_text(root)
    values = mod.bindings(fn).get(ident, []) if fn is not None else []
    if values:
        if chained or depth >= 2:
            return _Place(_Origin.LOCAL, name)
        for value in values:
            copied = _shallow_copy_of(mod, value)
            src = _place(mod, fn, copied, depth + 1) if copied is not None else None
            if src is not None and src.origin is _Origin.LIVE:
                return _Place(_Origin.SHALLOW, name, src.name)
            src = _place(mod, fn, value, depth + 1) if _unwrap(value).type == "member_expression" else None
            if src is not None and src.origin is _Origin.LIVE:
                return _Place(_Origin.LIVE, name, src.name)
        return _Place(_Origin.LOCAL, name)
    if fn is not None and ident in _all_params(mod, fn):
        if not chained:
            return _Place(_Origin.PARAM, name)
        return _Place(_Origin.LIVE if _STATE_ROOT.match(ident) else _Origin.LOCAL, name)
    if ident in mod.bindings(None) and (chained or _history_name(mod, root)):
        return _Place(_Origin.LIVE, name)  # a module-level history array used from functions
    return _Place(_Origin.LOCAL, name)


_RESPONSE_CLASS = re.compile(r"(Output|Response|Result|Chunk|Delta|Completion|Generation)$")
"""Classes whose instances are one model response (`ChatModelOutput`, `StreamedResponse`): their `this.messages` is
the response being assembled from chunks (`fromChunks`, `merge`, `dedupe`), not the conversation history."""


def _class_of(mod: TsModule, node: Node) -> Node | None:
    return next((a for a in mod.ancestors(node) if a.type in ("class_declaration", "class")), None)


def _response_class(mod: TsModule, node: Node) -> bool:
    """Whether `node` lies in a class that models one model response (`this.messages` there is its own output)."""
    cls = _class_of(mod, node)
    name = cls.child_by_field_name("name") if cls is not None else None
    return name is not None and bool(_RESPONSE_CLASS.search(mod.node_text(name)))


def _all_params(mod: TsModule, fn: Node) -> dict[str, Node]:
    """Parameters of `fn` and of the functions it is nested in (a closure's outer parameter is still the caller's)."""
    out: dict[str, Node] = {}
    cur: Node | None = fn
    while cur is not None:
        for k, v in mod.params(cur).items():
            out.setdefault(k, v)
        cur = mod.enclosing_function(cur)
    return out


def _compaction(mod: TsModule, fn: Node | None) -> bool:
    """Whether `fn`, or a function it is nested in (or its class), is a compaction or rebuild step."""
    while fn is not None:
        if _COMPACTION.search(mod.function_name(fn)):
            return True
        fn = mod.enclosing_function(fn)
    return False


# ---------------------------------------------------------------- callers of helpers that rewrite a parameter
def _live_caller(project: TsProject, mod: TsModule, fn: Node, param: str) -> str | None:
    """`file:line` of a call that hands live history to `fn`'s parameter `param`, if the project has one."""
    params = fn.child_by_field_name("parameters")
    positions = [p for p in params.named_children if p.type != "comment"] if params is not None else []
    index = next((i for i, p in enumerate(positions) if param in {mod.node_text(n) for n in mod.pattern_names(p)}),
                 None)
    if index is None:
        return None
    for other, call in project.callers_of(mod, fn):
        args = other.arguments(call)
        if index >= len(args):
            continue
        arg = args[index]
        caller = other.enclosing_function(call)
        place = _place(other, caller, arg)
        if place is not None and place.origin is _Origin.LIVE:
            return f"{other.path}:{other.line(call)} passes `{place.name}`"
        if arg.type == "identifier" and caller is not None and _conversation(other, caller, other.node_text(arg),
                                                                             project):
            return f"{other.path}:{other.line(call)} passes `{other.node_text(arg)}`, the conversation " \
                   f"`{other.function_name(caller)}` grows"
    return None


def _conversation(mod: TsModule, fn: Node, name: str, project: TsProject | None = None) -> bool:
    """Whether `fn` grows the array `name` turn by turn: it pushes to it and requests the model, or pushes an
    assistant message to it, or (with `project`) hands it on every turn of a loop to a helper that pushes to it."""
    text = mod.node_text(fn)
    if f"{name}.push(" not in text:
        return project is not None and _grown_in_loop(project, mod, fn, name)
    if _MODEL_CALL.search(text):
        return True
    return bool(re.search(rf"{re.escape(name)}\.push\(\s*\{{[^}}]*role:\s*['\"`]assistant", text))


def _grown_in_loop(project: TsProject, mod: TsModule, fn: Node, name: str) -> bool:
    """`while (true) { ...; await runStep(messages, ...) }` where `runStep` pushes to its parameter: the array
    outlives each turn and collects them, i.e. it is the conversation."""
    for call in mod.inside(mod.calls(), fn):
        loops = mod.enclosing_loops(call)
        if not loops or not mod.within(loops[0], fn) or mod.enclosing_function(call) != fn:
            continue
        args = mod.arguments(call)
        index = next((i for i, a in enumerate(args) if a.type == "identifier" and mod.node_text(a) == name), None)
        if index is None:
            continue
        for other, callee in project.resolve_call(mod, call):
            params = callee.child_by_field_name("parameters")
            positions = [p for p in params.named_children if p.type != "comment"] if params is not None else []
            if index >= len(positions):
                continue
            names = [other.node_text(n) for n in other.pattern_names(positions[index])]
            if names and f"{names[0]}.push(" in other.node_text(callee):
                return True
    return False


@dataclass(frozen=True, slots=True)
class _Judged:
    """Whether and how certainly a write into `place` hits live history."""

    verdict: Verdict
    """Confirmed when the array is live history."""
    where: str
    """What the array is, for the claim."""
    hint: str
    """What a human must verify, for suspected findings."""


_SAVES = re.compile(r"^#?(save|persist|store|upsert|insert|write|commit)\w*$|\w(Save|Persist|Store)\w*$")
"""A call that stores data (`saveChat`, `db.insert`, `writeFile`, `sessionStore.save`)."""


def _persisted(mod: TsModule, fn: Node | None, name: str, after: Node | None = None) -> Node | None:
    """The first call in `fn` (after `after`) that stores `name`: handed to it directly, inside an object
    (`saveChat({ id, messages: finalMessages })`) or serialised (`writeFile(p, JSON.stringify(history))`)."""
    if fn is None or name not in mod.node_text(fn):
        return None
    for call in mod.inside(mod.calls(), fn):
        if after is not None and call.start_byte < after.end_byte:
            continue
        if not _SAVES.search(mod.call_name(call).rsplit(".", 1)[-1]):
            continue
        args = call.child_by_field_name("arguments")
        if args is not None and any(mod.dotted(n) == name for n in _subtree(args)
                                    if n.type in ("identifier", "member_expression",
                                                  "shorthand_property_identifier")):
            return call
    return None


_DEEP_COPY = re.compile(r"structuredClone|cloneDeep|JSON\.parse\(\s*JSON\.stringify|\.map\(|klona|rfdc|deepCopy|"
                        r"deepClone")


def _owner_fn(mod: TsModule, fn: Node | None, name: str) -> Node | None:
    """The function (`fn` or one it is nested in) that binds `name` as a parameter or a local: a write in a nested
    callback (`msgs.forEach((m) => ...)`) is stored by the code of the function that owns the array."""
    cur = fn
    while cur is not None:
        if name in mod.params(cur) or name in mod.bindings(cur):
            return cur
        cur = mod.enclosing_function(cur)
    return fn


def _deep_copy(mod: TsModule, fn: Node | None, name: str) -> bool:
    """`const stored = structuredClone(messages)`: a local array of new message objects (editing it before storing
    leaves the conversation itself as it was)."""
    return fn is not None and any(_DEEP_COPY.search(mod.node_text(v)[:300])
                                  for v in mod.bindings(fn).get(name, []))


def _subtree(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(cur.named_children)


def _judge(project: TsProject, mod: TsModule, fn: Node | None, place: _Place, *, element: bool,
           node: Node | None = None) -> _Judged | None:
    """None when the write cannot touch live history (a local payload, or an array rewrite on a copy)."""
    if place.origin is _Origin.LIVE:
        where = f"`{place.name}`" + (f" (an alias of `{place.via}`)" if place.via else "")
        return _Judged(Verdict.CONFIRMED, where, "")
    if place.origin is _Origin.SHALLOW:
        if not element:
            return None
        return _Judged(Verdict.CONFIRMED, f"`{place.name}`, a shallow copy of `{place.via}` that shares its "
                                          "message objects", "")
    if place.origin is _Origin.PARAM and fn is not None:
        fname = mod.function_name(fn)
        caller = _live_caller(project, mod, fn, place.name)
        if caller is not None:
            return _Judged(Verdict.SUSPECTED, f"`{place.name}`, the history handed in ({caller})",
                           f"verify that `{fname}` is not the one compaction step and that the callers hand it the "
                           "live history rather than a copy")
        if _conversation(mod, fn, place.name):
            return _Judged(Verdict.SUSPECTED, f"`{place.name}`, the conversation `{fname}` pushes to",
                           f"verify that `{place.name}` is the conversation kept across turns and not a request copy "
                           "rebuilt each turn")
        typed = _message_list_type(mod, fn, place.name)
        if typed is not None:
            return _Judged(Verdict.SUSPECTED, f"`{place.name}` (a `{typed}` handed in by the caller)",
                           f"verify that the callers of `{fname}` pass the stored conversation (not a copy made for "
                           "one request) and keep using it afterwards")
    owner = _owner_fn(mod, fn, place.name)
    if place.origin is _Origin.LOCAL and not element and node is not None and \
            not _deep_copy(mod, owner, place.name) and _grown_before(mod, owner, place.name, node):
        saved = _persisted(mod, owner, place.name, node)
        if saved is not None:
            # the conversation grown turn by turn here and then stored is rewritten before it is stored
            return _Judged(Verdict.CONFIRMED, f"`{place.name}`, the conversation this function grows and stores with "
                                              f"`{mod.call_name(saved)}` (line {mod.line(saved)})", "")
    if place.origin in (_Origin.PARAM, _Origin.LOCAL) and element and node is not None and \
            not _deep_copy(mod, owner, place.name):
        saved = _persisted(mod, owner, place.name, node)
        if saved is not None:
            # the conversation as stored is the one edited here, not the one the model produced
            return _Judged(Verdict.CONFIRMED, f"`{place.name}`, the conversation stored by "
                                              f"`{mod.call_name(saved)}` (line {mod.line(saved)})", "")
    return None


def _grown_before(mod: TsModule, fn: Node | None, name: str, node: Node) -> bool:
    """Whether `fn` appends a message with a role to `name` before `node` (`contents.push({ role: "model", parts
    })`): the array is the conversation being built, not a payload assembled once."""
    if fn is None:
        return False
    for call in mod.inside(mod.calls(), fn):
        if call.start_byte >= node.start_byte or mod.call_name(call) != f"{name}.push":
            continue
        args = mod.arguments(call)
        if args and _unwrap(args[0]).type == "object" and "role" in mod.object_keys(_unwrap(args[0])):
            return True
    return False


_MESSAGE_LIST_TYPE = re.compile(
    r"^(readonly\s+)?(Array<\s*)?([\w.]*(Message|MessageParam|Messages|ChatMessage|Turn|Content)\w*)(\s*>|\[\])$")
"""A parameter typed as a list of provider messages (`CoreMessage[]`, `ChatCompletionMessageParam[]`,
`Array<Anthropic.MessageParam>`)."""


def _message_list_type(mod: TsModule, fn: Node, name: str) -> str | None:
    """The declared type of `fn`'s parameter `name` when it is a list of messages (not `string[]`, not unknown)."""
    param = mod.params(fn).get(name)
    annotation = param.child_by_field_name("type") if param is not None else None
    if annotation is None:
        return None
    text = " ".join(mod.node_text(annotation).lstrip(":").split())
    return text if _MESSAGE_LIST_TYPE.match(text) else None


# ---------------------------------------------------------------- element positions
_INDEX_NAME = re.compile(r"^(i|j|k|n|idx|index|pos|position|last|first|lastIndex|last_index|\w*(Idx|Index|_idx|_index|"
                         r"Pos|_pos))$")


def _is_index(mod: TsModule, index: Node) -> bool:
    """Whether a subscript is a position (`0`, `i`, `idx`, `messages.length - 1`), not a property key."""
    index = _unwrap(index)
    kind = index.type
    if kind == "number":
        return True
    if kind == "identifier":
        return bool(_INDEX_NAME.match(mod.node_text(index)))
    if kind in ("binary_expression", "unary_expression", "update_expression"):
        return any(_is_index(mod, c) for c in index.named_children) or ".length" in mod.node_text(index)
    if kind == "member_expression":
        return mod.node_text(index).endswith(".length")
    return False


def _newest(mod: TsModule, base: Node, index: Node) -> bool:
    """`H[H.length - 1]` / `H.at(-1)`: the newest element, which may still be the message being assembled."""
    text = re.sub(r"\s+", "", mod.node_text(index))
    array = re.sub(r"[\s!?]+", "", mod.node_text(base))
    return text in (f"{array}.length-1", "-1")


@dataclass(frozen=True, slots=True)
class _Element:
    """`H[i]` / `H.at(i)` inside a longer access chain."""

    access: Node
    """The element access itself."""
    base: Node
    """The array expression `H`."""
    newest: bool
    """Whether it is the newest element."""


def _element_in_chain(mod: TsModule, node: Node, *, itself: bool = False) -> _Element | None:
    """For `H[i].content`, `H.at(-1)!.parts`, `H[i]["content"]`: the element access, when the chain goes past it
    (or, with `itself`, when the node is the element access)."""
    start = _unwrap(node)
    cur = start
    found: _Element | None = None
    while True:
        past = itself or cur != start
        if cur.type == "subscript_expression":
            obj, index = cur.child_by_field_name("object"), cur.child_by_field_name("index")
            if obj is not None and index is not None and _is_index(mod, index) and past:
                found = _Element(cur, obj, _newest(mod, obj, index))
            if obj is None:
                break
            cur = _unwrap(obj)
        elif cur.type == "call_expression":
            callee = cur.child_by_field_name("function")
            args = mod.arguments(cur)
            if callee is not None and callee.type == "member_expression" and \
                    mod.node_text(callee.child_by_field_name("property")) == "at" and len(args) == 1 and past:
                obj = callee.child_by_field_name("object")
                if obj is not None:
                    found = _Element(cur, obj, _newest(mod, obj, args[0]))
                    cur = _unwrap(obj)
                    continue
            break
        elif cur.type == "member_expression":
            obj = cur.child_by_field_name("object")
            if obj is None:
                break
            cur = _unwrap(obj)
        else:
            break
    return found


def _first_per_function(found: list[tuple[tuple[int, str], Hit]]) -> Iterator[Hit]:
    """One finding per (function, history array): the first write, with the lines of the others."""
    groups: dict[tuple[int, str], list[Hit]] = {}
    for key, hit in sorted(found, key=lambda kh: kh[1].node.start_byte if isinstance(kh[1].node, Node) else 0):
        groups.setdefault(key, []).append(hit)
    for hits in groups.values():
        first = hits[0]
        if len(hits) > 1:
            lines = ", ".join(str(h.node.start_point.row + 1) for h in hits[1:6] if isinstance(h.node, Node))
            first = replace(first, claim=f"{first.claim} (the same function does so again at line(s) {lines})")
        yield first


def _writes(mod: TsModule, project: TsProject) -> list[tuple[Node, Node, str | None]]:
    """(node, written target, mutating method or None) for every assignment and `+=` into a member or subscript
    chain, every mutating method call (`x.push`, `x.splice`) and `Object.assign(x, ...)`, computed once per module."""
    def build() -> list[tuple[Node, Node, str | None]]:
        return sorted(_scan_writes(mod), key=lambda w: w[0].start_byte)

    return project.memo("c02.writes", mod, build)


def _scan_writes(mod: TsModule) -> Iterator[tuple[Node, Node, str | None]]:
    for node in mod.nodes("assignment_expression", "augmented_assignment_expression"):
        left = node.child_by_field_name("left")
        if left is not None and left.type in ("member_expression", "subscript_expression"):
            yield node, left, None
    for call in mod.calls():
        callee = call.child_by_field_name("function")
        if callee is None or callee.type != "member_expression":
            continue
        method = mod.node_text(callee.child_by_field_name("property"))
        if method in _ELEMENT_METHODS:
            obj = callee.child_by_field_name("object")
            if obj is not None and _unwrap(obj).type in ("member_expression", "subscript_expression", "identifier",
                                                         "call_expression"):
                yield call, _unwrap(obj), method
        elif method == "assign" and mod.call_name(call) == "Object.assign":
            args = mod.arguments(call)
            if args:
                yield call, _unwrap(args[0]), "Object.assign"


# ---------------------------------------------------------------- rules
_SYSTEM_ENTRY = re.compile(r"^(this\.)?_?system\w*$|\bnew\s+System\w*Message\w*\(|role\s*:\s*[\"'`]system[\"'`]", re.I)


_FILTERS_SYSTEM = re.compile(r"\.filter\((?:(?!\.filter\()[^;]){0,200}?system", re.I)


def _places_system_prompt(mod: TsModule, call: Node, method: str) -> bool:
    """`history = history.filter((m) => !(m instanceof SystemMessage)); history.unshift(this.systemMessage)`: the
    system entry replaced when the instructions change, the old one filtered out first; no turn of the conversation
    is touched. (Only prepending, without removing the old entry, still rewrites what the provider saw.)"""
    fn = mod.enclosing_function(call)
    if fn is None or not _FILTERS_SYSTEM.search(mod.node_text(fn)):
        return False
    args = mod.arguments(call)
    if method == "unshift":
        items = args
    elif method == "splice" and len(args) > 2 and mod.node_text(args[0]).strip() == "0":
        items = args[2:]
    else:
        return False
    return bool(items) and all(_SYSTEM_ENTRY.search(mod.node_text(a).strip()) for a in items)


@rule(CheckId.C2, lang="typescript", name="history-array-rewritten")
def history_array_rewritten(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags `messages.splice(...)`, `unshift`, `shift`, `sort`, `reverse`, `messages[i] = ...` and `delete
    messages[i]` on live history outside a compaction function. History must only grow at its end; anything else
    rewrites a past the provider already saw and breaks prompt caching from that point."""
    if not _mentions_history(mod, project):
        return
    found: list[tuple[tuple[int, str], Hit]] = []
    for call in _method_calls(mod, _ARRAY_METHOD_BYTES):
        callee = call.child_by_field_name("function")
        if callee is None:
            continue
        method = mod.node_text(callee.child_by_field_name("property"))
        target = callee.child_by_field_name("object")
        if target is None or _history_name(mod, target) is None or _clears(mod, call, target, method):
            continue
        fn = mod.enclosing_function(call)
        if method == "splice" and _appends_by_default(mod, fn, call, target) or _places_system_prompt(mod, call, method):
            continue
        hit = _rewrite_hit(project, mod, fn, call, target, f"`.{method}(...)` rewrites {{where}} in place")
        if hit is not None:
            found.append(hit)
    for node in mod.nodes("assignment_expression"):
        left = node.child_by_field_name("left")
        if left is None or left.type != "subscript_expression":
            continue
        base, index = left.child_by_field_name("object"), left.child_by_field_name("index")
        if base is None or index is None or not _is_index(mod, index) or _newest(mod, base, index):
            continue
        if mod.node_text(index).replace(" ", "") == f"{mod.node_text(base)}.length":
            continue  # `H[H.length] = m` appends
        fn = mod.enclosing_function(node)
        if _mirrors_source_update(mod, fn, node, base):
            continue
        hit = _rewrite_hit(project, mod, fn, node, base, "an assignment replaces an element of {where}")
        if hit is not None:
            found.append(hit)
    for node in _deletes(mod):
        arg = node.child_by_field_name("argument")
        if arg is None or arg.type != "subscript_expression":
            continue
        base, index = arg.child_by_field_name("object"), arg.child_by_field_name("index")
        if base is None or index is None or not _is_index(mod, index):
            continue
        fn = mod.enclosing_function(node)
        hit = _rewrite_hit(project, mod, fn, node, base, "`delete` removes an element of {where}")
        if hit is not None:
            found.append(hit)
    yield from _first_per_function(found)


def _mirrors_source_update(mod: TsModule, fn: Node | None, node: Node, base: Node) -> bool:
    """`this.copy[i] = incoming` where `i` is the position of `incoming`'s own id (`findIndex((m) => m.id ===
    incoming.id)`) and `this.copy` was seeded as a copy of another object's message list (`[...source.messages]`):
    a replica taking the version its source already holds, not the conversation the model is sent."""
    right, left = node.child_by_field_name("right"), node.child_by_field_name("left")
    index = left.child_by_field_name("index") if left is not None else None
    cls = _class_of(mod, node)
    if fn is None or cls is None or right is None or index is None or _unwrap(right).type != "identifier" or \
            index.type != "identifier" or not mod.node_text(base).startswith("this."):
        return False
    value, position, field = mod.node_text(_unwrap(right)), mod.node_text(index), mod.node_text(base)
    if not re.search(rf"\b{re.escape(position)}\s*=\s*{re.escape(field)}\.findIndex\([^;]*?\.id\s*===?\s*"
                     rf"{re.escape(value)}\.id\b|\b{re.escape(position)}\s*=\s*{re.escape(field)}\.findIndex\("
                     rf"[^;]*?\b{re.escape(value)}\.id\s*===?\s*\w+\.id\b", mod.node_text(fn)):
        return False
    for seed in mod.inside(mod.nodes("assignment_expression"), cls):
        seeded, copy = seed.child_by_field_name("left"), seed.child_by_field_name("right")
        if seeded is None or copy is None or mod.node_text(seeded) != field:
            continue
        source = _shallow_copy_of(mod, copy)
        if source is not None and _unwrap(source).type == "member_expression" and \
                not mod.node_text(source).startswith("this."):
            return True
    return False


def _clears(mod: TsModule, call: Node, target: Node, method: str) -> bool:
    """`H.splice(0)` / `H.splice(0, H.length)`: emptying the array (a new conversation), not a rewrite."""
    if method != "splice":
        return False
    args = [mod.node_text(a).replace(" ", "") for a in mod.arguments(call)]
    return args in (["0"], ["0", f"{mod.node_text(target)}.length"])


def _appends_by_default(mod: TsModule, fn: Node | None, call: Node, target: Node) -> bool:
    """`H.splice(index, 0, m)` where `index` defaults to `H.length` (`index ?? H.length`, `index = H.length`): it
    deletes nothing and, by default, appends (an insert position is an API option, not a rewrite)."""
    args = mod.arguments(call)
    if len(args) < 3 or mod.node_text(args[1]).strip() != "0":
        return False
    length = re.escape(re.sub(r"\s+", "", mod.node_text(target))) + r"\.length\b(?!\s*[-+])"
    first = _unwrap(args[0])
    if re.fullmatch(length, re.sub(r"\s+", "", mod.node_text(first))):
        return True
    if first.type != "identifier" or fn is None:
        return False
    name = mod.node_text(first)
    texts = [mod.node_text(v) for v in mod.bindings(fn).get(name, [])]
    param = mod.params(fn).get(name)
    if param is not None:
        texts.append(mod.node_text(param.parent if param.parent is not None and
                                   param.parent.type in ("optional_parameter", "required_parameter",
                                                         "assignment_pattern") else param))
    default = re.compile(r"(\?\?|\|\||=)\s*" + length)
    return any(default.search(re.sub(r"[ \t\n]+", " ", t)) or re.fullmatch(length, re.sub(r"\s+", "", t))
               for t in texts)


def _deletes(mod: TsModule) -> Iterator[Node]:
    """`delete x[...]` expressions (unary expressions are not indexed: found from the keyword)."""
    at = mod.source.find(b"delete ")
    while at >= 0:
        node = mod.tree.root_node.descendant_for_byte_range(at, at + 6)
        parent = node.parent if node is not None else None
        if parent is not None and parent.type == "unary_expression":
            yield parent
        at = mod.source.find(b"delete ", at + 7)


_BUDGET_TEST = re.compile(r"(\.length|token|budget|limit|max|size|count|context|window|overflow|fits|exceed)", re.I)


_EMPTINESS = re.compile(r"[\w$#.?]+\.length\s*(===?\s*0|!==?\s*0|>\s*0|>=\s*1)(?![\w.])|!\s*[\w$#.?]+\.length\b")
"""An emptiness test (`calls.length === 0`, `!xs.length`): it says whether there is anything, not that it is too
much."""


def _under_budget_test(mod: TsModule, node: Node, fn: Node | None) -> bool:
    """Whether `node` runs under a size test (`while (tokens(h) > budget) h.shift()`): dropping the oldest messages
    to fit the context is a truncation step, judged under C13."""
    callee = node.child_by_field_name("function") if node.type == "call_expression" else None
    # `while (queue.length > 0) queue.shift()` drains the array it tests; `if (calls.length === 0)` tests another
    target = mod.node_text(callee.child_by_field_name("object")) if callee is not None and \
        callee.type == "member_expression" else ""
    while fn is not None and fn.parent is not None and fn.parent.type == "arguments":
        fn = mod.enclosing_function(fn)  # a callback (`victims.forEach((m) => H.splice(...))`) runs under its caller
    for anc in mod.ancestors(node):
        if anc == fn:
            break
        if anc.type in ("if_statement", "while_statement", "do_statement", "for_statement"):
            cond = anc.child_by_field_name("condition")
            if cond is not None and _BUDGET_TEST.search(
                    _EMPTINESS.sub(lambda m: m.group(0) if target and target in m.group(0) else "",
                                   mod.derivation_text(fn, cond, 1)[:600])):
                return True  # also through a local predicate: `const full = () => H.length > cap; if (full())`
    return False


def _rewrite_hit(project: TsProject, mod: TsModule, fn: Node | None, node: Node, target: Node,
                 what: str) -> tuple[tuple[int, str], Hit] | None:
    if _compaction(mod, fn):
        return None
    if node.type == "call_expression" and mod.call_name(node).rsplit(".", 1)[-1] in ("shift", "splice") and \
            _under_budget_test(mod, node, fn):
        return None
    place = _place(mod, fn, target)
    judged = _judge(project, mod, fn, place, element=False, node=node) if place is not None else None
    if place is None or judged is None:
        return None
    return (fn.id if fn is not None else 0, place.name), Hit(
        node=node,
        verdict=judged.verdict,
        claim=f"{what.format(where=judged.where)} outside a compaction step: history is edited, not appended to",
        consequence="earlier turns change after the provider saw them: replays diverge and the cached prompt prefix "
                    "is invalidated from the edited position on",
        direction="append new messages only; move any deliberate rewrite into the one compaction function",
        confirm_hint=judged.hint,
    )


def _element_names(mod: TsModule, project: TsProject) -> set[str]:
    """Every name the module binds to one message of a history array (an element alias or a loop variable over
    one), so that writes through other names are skipped before any scope lookup."""
    def build() -> set[str]:
        names = {name for _, loop_names, _ in _history_loops(mod, project) for name in loop_names}
        names.update(name for _, loop_names, _ in _part_loops(mod, project) for name in loop_names)
        for at in _element_byte_offsets(mod.source, _dialect_words(mod)):
            node = mod.tree.root_node.descendant_for_byte_range(at, at + 1)
            for _ in range(6):  # up from `messages` in `const last = this.messages[i]` to its declarator
                if node is None or node.type in ("variable_declarator", "assignment_expression") or \
                        node.type.endswith("_statement"):
                    break
                node = node.parent
            if node is None or node.type not in ("variable_declarator", "assignment_expression"):
                continue
            target = node.child_by_field_name("name") or node.child_by_field_name("left")
            if target is not None and target.type == "identifier":
                names.add(mod.node_text(target))
        return names

    return project.memo("c02.element_names", mod, build)


def _element_aliases(mod: TsModule, fn: Node | None) -> dict[str, tuple[Node, str]]:
    """Names bound in `fn` to one message of a history array: `const last = H[H.length - 1]`, `H.at(-1)`,
    `H.find(...)`, and loop variables `for (const m of H)` / `H.forEach((m) => ...)` -> (array, how)."""
    out: dict[str, tuple[Node, str]] = {}
    for name, values in mod.bindings(fn).items():
        for value in values:
            value = _unwrap(value)
            if value.type == "subscript_expression":
                base, index = value.child_by_field_name("object"), value.child_by_field_name("index")
                if base is not None and index is not None and _is_index(mod, index) and _history_name(mod, base):
                    out[name] = (base, "an element of {where}")
            elif value.type == "call_expression":
                callee = value.child_by_field_name("function")
                if callee is not None and callee.type == "member_expression" and mod.node_text(
                        callee.child_by_field_name("property")) in ("at", "find", "findLast"):
                    base = callee.child_by_field_name("object")
                    if base is not None and _history_name(mod, base):
                        out[name] = (base, "an element of {where}")
    return out


_ITERATORS = (b"forEach", b"map", b"filter", b"flatMap")


def _method_calls(mod: TsModule, methods: tuple[bytes, ...]) -> Iterator[Node]:
    """Calls `x.m(...)` for the given method names, found from `.m(` in the source (cheaper than every call)."""
    for method in methods:
        needle = b"." + method + b"("
        at = mod.source.find(needle)
        while at >= 0:
            prop = mod.tree.root_node.descendant_for_byte_range(at + 1, at + 1 + len(method))
            member = prop.parent if prop is not None else None
            call = member.parent if member is not None else None
            if call is not None and call.type == "call_expression" and member is not None and \
                    member.type == "member_expression" and call.child_by_field_name("function") == member:
                yield call
            at = mod.source.find(needle, at + len(needle))


def _history_loops(mod: TsModule, project: TsProject) -> list[tuple[Node, set[str], Node]]:
    """(scope, loop variables, history array) for every `for...of` over a history array and every
    `forEach`/`map`/`filter`/`flatMap` callback over one, computed once per module."""
    def build() -> list[tuple[Node, set[str], Node]]:
        out: list[tuple[Node, set[str], Node]] = []
        for loop in mod.nodes("for_in_statement"):
            left, right = loop.child_by_field_name("left"), loop.child_by_field_name("right")
            if left is None or right is None:
                continue
            base = _unwrap(right)
            if base.type == "call_expression":  # `H.entries()`
                callee = base.child_by_field_name("function")
                base = callee.child_by_field_name("object") or base if callee is not None and \
                    callee.type == "member_expression" else base
            if _history_name(mod, base):
                names = {mod.node_text(n) for n in (mod.pattern_names(left) if left.type != "identifier" else [left])}
                out.append((loop, names, base))
        for call in _method_calls(mod, _ITERATORS):
            callee = call.child_by_field_name("function")
            base = callee.child_by_field_name("object") if callee is not None else None
            args = mod.arguments(call)
            if base is not None and args and args[0].type in FUNCTION_TYPES and _history_name(mod, base):
                out.append((args[0], set(mod.params(args[0])), base))
        return out

    return project.memo("c02.history_loops", mod, build)


def _loop_element(mod: TsModule, project: TsProject, ident: str, node: Node) -> tuple[Node, str] | None:
    """The history array when `ident` is the variable of a loop over it around `node` (`for...of`, `forEach`,
    `map`), the innermost such loop."""
    found = [(scope, base) for scope, names, base in _history_loops(mod, project)
             if ident in names and mod.within(node, scope)]
    if not found:
        return None
    scope, base = max(found, key=lambda f: f[0].start_byte)
    return base, "`{name}`, a message of {where} being iterated"


_PART_PROPS = {"content", "parts", "blocks", "tool_calls", "toolCalls", "toolInvocations", "contents",
               "tool_results", "toolResults", "output", "items"}
"""Properties of one message that hold its parts (content blocks, UI parts, tool calls)."""


def _part_loops(mod: TsModule, project: TsProject) -> list[tuple[Node, set[str], Node]]:
    """(scope, loop variables, owner) for every loop over the parts of one object (`for (const part of
    msg.parts)`, `last.content.forEach((b) => ...)`), whose owner `msg` may be a message of history; computed once
    per module."""
    def build() -> list[tuple[Node, set[str], Node]]:
        out: list[tuple[Node, set[str], Node]] = []

        def owner_of(expr: Node) -> Node | None:
            expr = _unwrap(expr)
            if expr.type != "member_expression":
                return None
            prop = mod.node_text(expr.child_by_field_name("property"))
            obj = expr.child_by_field_name("object")
            if prop not in _PART_PROPS or obj is None or _unwrap(obj).type != "identifier":
                return None
            return _unwrap(obj)

        for loop in mod.nodes("for_in_statement"):
            left, right = loop.child_by_field_name("left"), loop.child_by_field_name("right")
            owner = owner_of(right) if right is not None and left is not None else None
            if owner is not None and left is not None:
                names = {mod.node_text(n) for n in (mod.pattern_names(left) if left.type != "identifier" else [left])}
                out.append((loop, names, owner))
        for call in _method_calls(mod, _ITERATORS):
            callee = call.child_by_field_name("function")
            base = callee.child_by_field_name("object") if callee is not None else None
            args = mod.arguments(call)
            owner = owner_of(base) if base is not None else None
            if owner is not None and args and args[0].type in FUNCTION_TYPES:
                out.append((args[0], set(mod.params(args[0])), owner))
        return out

    return project.memo("c02.part_loops", mod, build)


def _part_element(mod: TsModule, project: TsProject, aliases: dict[str, tuple[Node, str]], ident: str,
                  node: Node) -> tuple[Node, str] | None:
    """The history array when `ident` iterates the parts of a message of it around `node`: `const last =
    history.at(-1); for (const part of last.content) part.text = ...`, or `for (const m of messages) for (const p of
    m.parts) p.output = ...`."""
    found = [(scope, owner) for scope, names, owner in _part_loops(mod, project)
             if ident in names and mod.within(node, scope)]
    if not found:
        return None
    scope, owner = max(found, key=lambda f: f[0].start_byte)
    name = mod.node_text(owner)
    message = aliases.get(name) or _loop_element(mod, project, name, scope)
    if message is None:
        return None
    return message[0], f"`{{name}}`, a part of `{name}`, a message of {{where}}"


_INVISIBLE = {"metadata", "meta", "_meta"}
"""Fields of a message that message converters do not send to the model (`UIMessage.metadata`)."""


def _model_invisible(mod: TsModule, target: Node, message: Node) -> bool:
    """Whether the write goes into a field of the message that the model never sees (`last.metadata = {...}`):
    the request prefix does not change."""
    cur = _unwrap(target)
    nearest: str | None = None
    while cur != message and cur.type in ("member_expression", "subscript_expression", "call_expression"):
        if cur.type == "member_expression":
            nearest = mod.node_text(cur.child_by_field_name("property"))
        nxt = cur.child_by_field_name("function" if cur.type == "call_expression" else "object")
        if nxt is None:
            return False
        cur = _unwrap(nxt)
    return cur == message and nearest in _INVISIBLE


_MERGE_FN = re.compile(r"^#?(merge|accumulate|apply(Delta|Chunk|Part))|(Chunk|Delta|Stream(ed)?Part)s?$", re.I)
_PENDING = re.compile(r"\b(this\.)?#?_?(pending|unsaved|unpersisted|inFlight|inProgress|dirty)\w*(Ids?|Messages?)\b"
                      r"\.(add|has|set|push)\(")
"""A set of messages not yet persisted (`this.pendingMessageIds.add(id)`): the buffer knows which message is still
the response being assembled."""


def _in_flight_merge(mod: TsModule, fn: Node | None, target: Node) -> bool:
    """`mergeAssistantMessage(m)` writing into the newest assistant message (`this.messages[findLastAssistantIndex()]`)
    of a buffer that tracks unsaved messages (`pendingMessageIds.add(target.id)`): the in-flight response is being
    completed before it is persisted, not a message the provider already saw."""
    if fn is None or not _MERGE_FN.search(mod.function_name(fn)):
        return False
    derivation = mod.derivation_text(fn, _root(target), 2)[:800]
    if not re.search(r"\.at\(\s*-\s*1\s*\)|\.length\s*-\s*1\s*\]|findLast\w*(Index)?\(", derivation):
        return False
    return bool(_PENDING.search(mod.node_text(fn)))


_IDENTITY_FIELD = re.compile(r"^_?(id|uuid|key|\w+Id)$")


def _fills_missing_identity(mod: TsModule, node: Node, target: Node) -> bool:
    """`if (!msg.id) msg.id = uuid()`, `m.id ??= nanoid()`: an identity field assigned only where the message has
    none. No content and no existing id changes, so what was sent and what is stored still agree."""
    if node.type not in ("assignment_expression", "augmented_assignment_expression"):
        return False
    field = _unwrap(target)
    if field.type != "member_expression" or not _IDENTITY_FIELD.match(
            mod.node_text(field.child_by_field_name("property"))):
        return False
    if node.type == "augmented_assignment_expression":
        return mod.node_text(node.child_by_field_name("operator")) in ("??=", "||=")
    written = re.escape(mod.node_text(field))
    absent = rf"^\(\s*(!\s*{written}|{written}\s*(===?\s*(undefined|null)|==\s*null))\s*\)$"
    for anc in mod.ancestors(node):
        if anc.type == "if_statement":
            cond, then = anc.child_by_field_name("condition"), anc.child_by_field_name("consequence")
            return cond is not None and then is not None and then.start_byte <= node.start_byte < then.end_byte \
                and bool(re.match(absent, " ".join(mod.node_text(cond).split())))
        if anc.type not in ("expression_statement", "statement_block", "parenthesized_expression"):
            return False
    return False


@rule(CheckId.C2, lang="typescript", name="history-entry-mutated")
def history_entry_mutated(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags writes into a message that is already in history: `messages[messages.length - 1].content += delta`,
    `this.history.at(-1)!.content = ...`, an alias of an element (`const last = messages[i]`), the variable of a
    loop over history, or a shallow copy's elements. Outside one compaction step such a write makes replays lie and
    invalidates every cached prefix after it."""
    if not _mentions_history(mod, project):
        return
    found: list[tuple[tuple[int, str], Hit]] = []
    aliases: dict[int, dict[str, tuple[Node, str]]] = {}
    candidates = _element_names(mod, project)
    for node, target, method in _writes(mod, project):
        element = _element_in_chain(mod, target)
        if element is None and method == "Object.assign":
            element = _element_in_chain(mod, target, itself=True)
        base: Node | None = None
        how = ""
        if element is not None and _history_name(mod, element.base):
            fn = mod.enclosing_function(node)
            base, how = element.base, "an element of {where}"
        else:
            root = _root(target)
            if root.type != "identifier" or (root == _unwrap(target) and method is None):
                continue
            if root == _unwrap(target) and method not in ("Object.assign",):
                continue  # `last.push(x)`: a method of the message itself is only a write for parts, below
            ident = mod.node_text(root)
            if ident not in candidates:
                continue
            fn = mod.enclosing_function(node)
            key = fn.id if fn is not None else 0
            if key not in aliases:
                # only a function that names a history array can bind an element of one
                scope_text = mod.node_text(fn) if fn is not None else mod.text
                aliases[key] = _element_aliases(mod, fn) if _takes_element(scope_text, _dialect_words(mod)) else {}
            alias = aliases[key].get(ident) or _loop_element(mod, project, ident, node) or \
                _part_element(mod, project, aliases[key], ident, node)
            if alias is None:
                continue
            base, how = alias[0], alias[1].replace("{name}", ident) if "{name}" in alias[1] else \
                f"`{ident}`, an element of {{where}}"
        if _compaction(mod, fn) or _in_flight_merge(mod, fn, target) or _fills_missing_identity(mod, node, target) \
                or _model_invisible(mod, target, element.access if element is not None else _root(target)):
            continue
        place = _place(mod, fn, base)
        judged = _judge(project, mod, fn, place, element=True, node=node) if place is not None else None
        if place is None or judged is None:
            continue
        action = f"`.{method}(...)` on" if method and method != "Object.assign" else \
            "`Object.assign` into" if method else "a write into"
        newest = fn is not None and bool(re.search(r"\.at\(\s*-\s*1\s*\)|\.length\s*-\s*1\s*\]",
                                                   mod.derivation_text(fn, _root(target), 2)[:600]))
        found.append(((fn.id if fn is not None else 0, place.name), Hit(
            node=node,
            verdict=judged.verdict,
            claim=f"{action} {how.format(where=judged.where)} changes "
                  + ("the newest message already in history (merged into in place)" if newest else
                     "a message already in history"),
            consequence=("once that message has been sent or saved, the stored transcript and replays no longer "
                         "match what the model saw, and a cached prompt prefix that included it stops matching"
                         if newest else
                         "the recorded conversation no longer matches what was sent, replays diverge, and every "
                         "cached prompt prefix after this message is invalidated"),
            direction="build the complete message first (accumulate in a local) and push it once; keep any rewrite "
                      "of history inside one explicit compaction step",
            confirm_hint=judged.hint,
        )))
    yield from _first_per_function(found)


def _appending_helper(mod: TsModule, project: TsProject, call: Node) -> tuple[TsModule, Node, Node] | None:
    """`await this.append(reply)` / `addMessage(msg)`: a project function that pushes the argument it is handed to
    a history array; (its module, itself, the history array it pushes to)."""
    args = mod.arguments(call)
    if not args or len(args) > 2 or args[0].type != "identifier":
        return None
    for other, callee in project.resolve_call(mod, call):
        params = callee.child_by_field_name("parameters")
        positions = [q for q in params.named_children if q.type != "comment"] if params is not None else []
        names = [other.node_text(n) for n in other.pattern_names(positions[0])] if positions else []
        if not names:
            continue
        for inner in other.inside(other.calls(), callee):
            fnode = inner.child_by_field_name("function")
            if fnode is None or fnode.type != "member_expression" or \
                    other.node_text(fnode.child_by_field_name("property")) not in ("push", "unshift"):
                continue
            inner_args = other.arguments(inner)
            target = fnode.child_by_field_name("object")
            if len(inner_args) == 1 and other.node_text(inner_args[0]) == names[0] and target is not None and \
                    _history_name(other, target) is not None:
                return other, callee, target
    return None


@rule(CheckId.C2, lang="typescript", name="pushed-message-mutated")
def pushed_message_mutated(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a message object that is written after it was pushed to history in the same function (streaming
    back-fill: push an empty assistant message, then `msg.content += delta`; a final answer "cleaned up" or given a
    sources footer after it was recorded), also when the push goes through a project helper that appends its
    argument to history (`this.append(reply)`) and when the write goes into one of the message's parts (`for
    (const block of msg.content) block.text = ...`). The history entry changes after the fact, so what was recorded
    (and persisted) and what the model produced disagree."""
    if not _mentions_history(mod, project):
        return
    for call in mod.calls():
        callee = call.child_by_field_name("function")
        if callee is None:
            continue
        args = mod.arguments(call)
        helper = None
        if callee.type == "member_expression" and \
                mod.node_text(callee.child_by_field_name("property")) in ("push", "unshift"):
            target = callee.child_by_field_name("object")
            if len(args) != 1 or args[0].type != "identifier" or target is None or \
                    _history_name(mod, target) is None:
                continue
        else:
            helper = _appending_helper(mod, project, call)
            if helper is None:
                continue
            target = None
        fn = mod.enclosing_function(call)
        if fn is None or _compaction(mod, fn):
            continue
        name = mod.node_text(args[0])
        writes = _later_writes(mod, project, fn, name, call)
        if not writes:
            continue
        if helper is not None:
            other, hfn, htarget = helper
            if _compaction(other, hfn):
                continue
            place = _place(other, hfn, htarget)
            judged = _judge(project, other, hfn, place, element=True) if place is not None else None
            if judged is not None:
                judged = _Judged(judged.verdict, f"{judged.where} by `{mod.call_name(call)}`", judged.hint)
        else:
            place = _place(mod, fn, target)
            judged = _judge(project, mod, fn, place, element=True, node=writes[0]) if place is not None else None
        if judged is None:
            continue
        for write in writes:
            yield Hit(
                node=write,
                verdict=judged.verdict,
                claim=f"`{name}` is written after it was pushed to {judged.where} (line {mod.line(call)})",
                consequence="the message in history changes after it was recorded: partial stream state can be "
                            "committed, a stored copy no longer matches the live one, replays diverge, and the "
                            "cached prefix is invalidated",
                direction=f"finish building `{name}` (accumulate deltas in a local) and push it once complete",
                confirm_hint=judged.hint,
            )


def _written_field(mod: TsModule, target: Node) -> str:
    """`content` for `msg.content += d` / `msg.content.push(...)`: the first field under the root."""
    cur = _unwrap(target)
    last = ""
    while cur.type in ("member_expression", "subscript_expression", "call_expression"):
        if cur.type == "member_expression":
            last = mod.node_text(cur.child_by_field_name("property"))
        nxt = cur.child_by_field_name("function" if cur.type == "call_expression" else "object")
        if nxt is None:
            break
        cur = _unwrap(nxt)
    return last


def _later_writes(mod: TsModule, project: TsProject, fn: Node, name: str, after: Node) -> list[Node]:
    """The first write per field into `name.x` / `name[k]` (or a mutating method on its parts, or a write through a
    loop over its parts: `for (const b of name.content) b.text = ...`) after `after`, in `fn` or a callback inside
    it, unless `name` is rebound first."""
    rebinds = [v for v in mod.bindings(fn).get(name, []) if v.start_byte > after.end_byte]
    stop = min((v.start_byte for v in rebinds), default=fn.end_byte)
    parts = [(scope, names) for scope, names, owner in _part_loops(mod, project)
             if mod.node_text(owner) == name and scope.start_byte > after.end_byte and mod.within(scope, fn)]
    out: dict[str, Node] = {}
    for node, target, method in _writes_in(mod, project, fn):
        if node.start_byte <= after.end_byte or node.start_byte >= stop:
            continue
        root = _root(target)
        if root.type != "identifier":
            continue
        if mod.node_text(root) != name:
            if not any(mod.node_text(root) in names and mod.within(node, scope) for scope, names in parts):
                continue
            field = "parts"
        else:
            if root == _unwrap(target) and method not in ("Object.assign",):
                continue  # `msg.push(...)` on the message itself is not a message shape
            field = _written_field(mod, target)
        out.setdefault(field, node)
    return list(out.values())


def _writes_in(mod: TsModule, project: TsProject, fn: Node) -> Iterator[tuple[Node, Node, str | None]]:
    writes = _writes(mod, project)
    lo = bisect.bisect_left(writes, fn.start_byte, key=lambda w: w[0].start_byte)
    for node, target, method in writes[lo:]:
        if node.start_byte > fn.end_byte:
            break
        yield node, target, method


_WORDS = ("essages", "istory", "onversation", "ranscript", "msgs", "ialog", "urns")
_ELEMENT_TAIL = re.compile(r"\w*\s*(!?\??\.(at|find|findLast)\(|\[)")
_ELEMENT_TAIL_BYTES = re.compile(_ELEMENT_TAIL.pattern.encode("utf-8"))


def _dialect_words(mod: TsModule) -> tuple[str, ...]:
    """History words of the provider dialect the module speaks: a Responses / Realtime module keeps its
    conversation as `items` / `input`, a Gemini module as `contents` (see `_history_name`)."""
    return _WORDS + (("tems", "nput") if _speaks_responses(mod) else ()) + \
        (("ontents",) if _speaks_gemini(mod) else ())


def _element_offsets(text: str, words: tuple[str, ...] = _WORDS) -> Iterator[int]:
    """Offsets of history words followed by an element access (`messages[i]`, `history.at(-1)`): each word found
    with `find`, then the text after it matched (a regex over a whole module is slow)."""
    for word in words:
        at = text.find(word)
        while at >= 0:
            if _ELEMENT_TAIL.match(text, at + len(word)):
                yield at
            at = text.find(word, at + len(word))


def _takes_element(text: str, words: tuple[str, ...] = _WORDS) -> bool:
    """Whether a scope takes one element out of a history array."""
    return next(_element_offsets(text, words), None) is not None


def _element_byte_offsets(source: bytes, words: tuple[str, ...] = _WORDS) -> Iterator[int]:
    """`_element_offsets` over the UTF-8 source, whose offsets are the tree's."""
    for word in words:
        raw = word.encode("utf-8")
        at = source.find(raw)
        while at >= 0:
            if _ELEMENT_TAIL_BYTES.match(source, at + len(raw)):
                yield at
            at = source.find(raw, at + len(raw))


def _mentions_history(mod: TsModule, project: TsProject) -> bool:
    """A cheap test that the module names a history array at all (once per module); a test, spec or mock file is
    never the harness's history (its fixtures splice and overwrite on purpose)."""
    return project.memo("c02.mentions", mod, lambda: not is_test_module(mod) and any(w in mod.text for w in _WORDS))


# ---------------------------------------------------------------- replacing a message by a modified copy
_REPLACING_CALL = re.compile(r"^#?(update|upsert|replace|edit|patch|overwrite)\w*$|^updateState$")
"""Calls that store a message in place of the one with the same id (`graph.updateState(...)`, `upsertMessage`)."""
_SETTER = re.compile(r"^set\w*(Messages|History|Conversation|Transcript|Turns)$")
"""A UI state setter that holds the conversation (`setMessages` from `useChat` or `useState`)."""


def _message_owner(mod: TsModule, project: TsProject, fn: Node | None, expr: Node) -> Node | None:
    """The history array when `expr` is one of its messages: an element access (`state.messages.at(-1)`), an alias
    of one (`const last = H[H.length - 1]`) or the variable of a loop over it."""
    expr = _unwrap(expr)
    element = _element_in_chain(mod, expr, itself=True)
    if element is not None and _history_name(mod, element.base):
        return element.base
    if expr.type != "identifier":
        return None
    name = mod.node_text(expr)
    alias = _element_aliases(mod, fn).get(name) or _loop_element(mod, project, name, expr)
    return alias[0] if alias is not None else None


def _copied_message(mod: TsModule, project: TsProject, fn: Node | None, obj: Node) -> Node | None:
    """For a message built as a modified copy of one already in history — `{ ...last, content }`, `new
    AIMessage({ id: last.id, content: last.content + note })` — the history array; None otherwise."""
    if obj.type == "new_expression":
        args = mod.arguments(obj)
        obj = args[0] if args and args[0].type == "object" else obj
    if obj.type != "object":
        return None
    keys = mod.object_keys(obj)
    source: Node | None = None
    ident = keys.get("id")
    value = _unwrap(ident) if ident is not None else None
    if value is not None and value.type == "member_expression" and \
            mod.node_text(value.child_by_field_name("property")) == "id":
        source = value.child_by_field_name("object")
    if source is None:
        spread = next((c for c in obj.named_children if c.type == "spread_element" and c.named_children), None)
        source = spread.named_children[0] if spread is not None else None
    if source is None or not (set(keys) - {"id"}):
        return None
    return _message_owner(mod, project, fn, source)


def _update_destination(mod: TsModule, node: Node) -> str | None:
    """Where a built message goes when it replaces the one with its id: the `messages` key of a returned state
    update (LangGraph's messages reducer replaces by id) or a replacing call."""
    cur = node
    for _ in range(6):
        parent = cur.parent
        if parent is None:
            return None
        if parent.type == "pair":
            if mod.node_text(parent.child_by_field_name("key")).strip("'\"") != "messages":
                return None
            holder = parent.parent
            outer = holder.parent if holder is not None else None
            while outer is not None and outer.type in ("parenthesized_expression", "as_expression",
                                                       "satisfies_expression"):
                outer = outer.parent
            if outer is not None and outer.type in ("return_statement", "arrow_function"):
                return "the `messages` update it returns (the messages reducer replaces the message with that id)"
            if outer is not None and outer.type == "arguments" and outer.parent is not None and \
                    _REPLACING_CALL.match(mod.call_name(outer.parent).rsplit(".", 1)[-1]):
                return f"`{mod.call_name(outer.parent)}`"
            return None
        if parent.type == "arguments" and parent.parent is not None:
            name = mod.call_name(parent.parent)
            return f"`{name}`" if _REPLACING_CALL.match(name.rsplit(".", 1)[-1]) else None
        if parent.type not in ("array", "parenthesized_expression", "as_expression", "satisfies_expression"):
            return None
        cur = parent
    return None


def _maps_to_copies(mod: TsModule, call: Node) -> bool:
    """`H.map((m) => m.id === id ? { ...m, content } : m)` / `.map((m) => ({ ...m, content: trim(m.content) }))`:
    the callback returns modified copies of the elements."""
    args = mod.arguments(call)
    if not args or args[0].type not in FUNCTION_TYPES:
        return False
    params = list(mod.params(args[0]))
    if not params:
        return False
    first = re.escape(params[0])
    return bool(re.search(rf"\{{\s*\.\.\.{first}\b", mod.node_text(args[0])))


@rule(CheckId.C2, lang="typescript", name="history-entry-replaced")
def history_entry_replaced(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a message already in history replaced by a modified copy outside a compaction step: a message built
    with the id of an existing one (`new AIMessage({ id: last.id, content: last.content + footer })`) returned into
    the messages reducer or handed to `updateState`/`upsertMessage`, and the history re-assigned to a map of itself
    that returns edited copies (`this.history = this.history.map((m) => m.id === id ? { ...m, content } : m)`,
    `setMessages((prev) => prev.map(...))`). The conversation the model produced is rewritten."""
    if not _mentions_history(mod, project):
        return
    found: list[tuple[tuple[int, str], Hit]] = []
    text = mod.text
    replacing = "messages" in text or any(w in text for w in ("update", "upsert", "replace", "edit", "patch",
                                                               "overwrite"))
    src = mod.source
    for obj in mod.nodes("object", "new_expression") if replacing else ():
        chunk = src[obj.start_byte:obj.end_byte]
        if b".id" not in chunk and b"..." not in chunk:
            continue  # neither `id: x.id` nor a spread copy
        if obj.type == "object" and obj.parent is not None and obj.parent.type == "arguments" and \
                obj.parent.parent is not None and obj.parent.parent.type == "new_expression":
            continue  # judged as the `new` expression
        start = obj.parent if obj.type == "object" and obj.parent is not None and \
            obj.parent.type == "arguments" else obj
        where = _update_destination(mod, obj if obj.type == "new_expression" else start)
        if where is None:
            continue
        fn = mod.enclosing_function(obj)
        base = _copied_message(mod, project, fn, obj)
        if base is None or _compaction(mod, fn):
            continue
        place = _place(mod, fn, base)
        judged = _judge(project, mod, fn, place, element=True) if place is not None else None
        if place is None or judged is None:
            continue
        found.append(((fn.id if fn is not None else 0, place.name), Hit(
            node=obj,
            verdict=judged.verdict,
            claim=f"a modified copy of a message of {judged.where} keeps its id and goes to {where}: the message "
                  "already in history is replaced in place",
            consequence="the stored conversation no longer matches what the model produced; replays diverge and the "
                        "cached prompt prefix is invalidated from that message on",
            direction="append a new message (with a new id) instead of replacing an existing one; keep any rewrite "
                      "of history inside one explicit compaction step",
            confirm_hint=judged.hint,
        )))
    for call in _method_calls(mod, (b"map",)):
        if not _maps_to_copies(mod, call):
            continue
        callee = call.child_by_field_name("function")
        source = callee.child_by_field_name("object") if callee is not None else None
        if source is None:
            continue
        fn = mod.enclosing_function(call)
        parent = call.parent
        while parent is not None and parent.type in ("parenthesized_expression", "as_expression", "await_expression"):
            parent = parent.parent
        hit: Hit | None = None
        if parent is not None and parent.type == "assignment_expression" and \
                mod.dotted(parent.child_by_field_name("left")) == mod.dotted(source) and \
                _history_name(mod, source) is not None:
            if _compaction(mod, fn):
                continue
            place = _place(mod, fn, source)
            judged = _judge(project, mod, fn, place, element=True) if place is not None else None
            if place is None or judged is None:
                continue
            hit = Hit(
                node=parent,
                verdict=judged.verdict,
                claim=f"{judged.where} is re-assigned to a map of itself that returns edited copies of its "
                      "messages: history is rewritten, not appended to",
                consequence="earlier messages change after the model saw them; replays diverge and the cached "
                            "prompt prefix is invalidated from the first edited message on",
                direction="append new messages only; move any deliberate rewrite into the one compaction function",
                confirm_hint=judged.hint,
            )
            key = (fn.id if fn is not None else 0, place.name)
        elif fn is not None and fn.type in FUNCTION_TYPES and source.type == "identifier" and \
                mod.node_text(source) in mod.params(fn) and fn.parent is not None and \
                fn.parent.type == "arguments" and fn.parent.parent is not None and \
                _SETTER.match(mod.call_name(fn.parent.parent)) and \
                mod.enclosing_function(call) == fn:
            setter = mod.call_name(fn.parent.parent)
            outer = mod.enclosing_function(fn)
            if _compaction(mod, outer):
                continue
            hit = Hit(
                node=fn.parent.parent,
                verdict=Verdict.SUSPECTED,
                claim=f"`{setter}` replaces the conversation with a map of it that returns edited copies of its "
                      "messages: a message already sent is rewritten in place",
                consequence="the next request carries a history the model never produced; replays diverge and the "
                            "cached prompt prefix is invalidated from the edited message on",
                direction="append a new message for the change (or fork the conversation) instead of editing one "
                          "in place",
                confirm_hint=f"verify that `{setter}` holds the conversation that is sent to the model (e.g. "
                             "`useChat`'s messages) rather than a view-only list",
            )
            key = (outer.id if outer is not None else 0, setter)
        if hit is not None:
            found.append((key, hit))
    yield from _first_per_function(found)
