"""C13 · Context management and truncation boundaries — TypeScript/JavaScript rules.

Shapes detected:
- `window-cut-orphans-tool-result`: the history cut by count alone (`messages.slice(-N)`, `history.shift()` until
  it fits, also on a copy such as `const [first, ...rest] = history`, `messages.splice(1, k)`, an agent SDK's
  input items `run(agent, items.slice(-N))`, the stored rows a `loadHistory()` hands back as `rows.slice(-n)`)
  with no check that a tool result keeps its call. A message converter
  on the way (`toProvider(window)`, which merges tool results) and a stop condition (`hasToolCall("done")`) are not
  pairing checks; dropping leading tool messages, cutting at a user turn, or filtering orphans by id are. Not cuts
  of a model history: bounded windows of bookkeeping records (`occurrencesHistory` in a `ToolCallChecker`), a
  storage read's `limit` over AI SDK `UIMessage`s (call and result share one part), removal by id (`if
  (ids.has(H[i].id)) H.splice(i, 1)`), a whole-list swap (`list.splice(0, list.length, ...next)`), and a returned
  window that every caller flattens to text (`getBufferString(kept)` for a summary prompt).
- `tool-output-appended-unbounded`: a tool result message (`{ role: "tool", content: output }`,
  `{ type: "tool_result", content }`) carries the tool's raw output with no size bound on the way.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from harness_audit.findings import CheckId, Verdict
from harness_audit.static.lang.typescript import FUNCTION_TYPES, TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts._agent_idioms import (
    Key,
    callers_of,
    calls_named,
    cname,
    code_text,
    function_defs,
    imports_of,
    is_model_call,
    is_test_module,
    iter_subtree,
    key,
    last,
    later_statements,
    memo,
    mod_memo,
    model_index,
    module_speaks_llm,
    nodes_in,
    number_value,
    receiver,
    resolve_call,
    same,
    statement_of,
    string_value,
    unwrap,
)

_HISTORY = re.compile(r"(messages|history|conversation|transcript|msgs|chatHistory|chat_history|dialog|turns)$",
                      re.I)
_PAIR_TOKENS = re.compile(r"[\"'](tool|tool_result|tool_use|tool-result|tool-call|function_call_output|"
                          r"function_call|function)[\"']|tool_call_id|tool_calls|toolCallId|toolCalls|tool_use_id|"
                          r"toolUseId|toolInvocations|toolResult|call_id|callId|functionCall|functionResponse|"
                          r"FunctionCall|FunctionResponse|function_response|\bToolMessage\b|isToolMessage|"
                          r"function_call_result|\bfunctionCallResult")
_TOOL_WORD = re.compile(r"tool_?(results?|uses?|calls?)|function_?(results?|calls?|responses?)", re.I)
"""Tool-call words in any case, as a helper's name carries them (`isValidUserMessageWithoutToolResults`)."""
_USER_BOUNDARY = re.compile(r"role\s*[!=]==?\s*[\"']user[\"']")
"""Searching for a user turn to cut at: a cut there keeps every call with its results."""
_PAIR_NAME = re.compile(r"(pair|orphan|boundary|dangling|unanswered|safe_?cut|safe_?split|toolcall|tool_?result|"
                        r"repair|sanitiz)", re.I)
_NOT_PAIR_HELPER = re.compile(r"^(has|is|get|count|num|to[A-Z_]|as[A-Z_]|format|convert|render|log|print|serialize|"
                              r"encode|stringify|describe|summari[sz]e[A-Z_]*Tool)", re.I)
"""Predicates, getters and converters whose name mentions tool calls (`hasToolCall("finish")`, `toToolResult`,
`getToolCalls`): they test or translate a message, they do not repair a cut."""
_DROPS = {"shift", "splice", "pop", "unshift"}
_REMOVES = re.compile(r"!==?|!\s*[\w(]|\.has\(|\.includes\(|\bin\s+\w")
"""A filter callback that excludes (a negated test) or keeps by membership in a set of ids."""
_INDEX_MOVE = re.compile(r"^[\w$.\s()+\-*/]+$")
"""The right side of `start = i + 1`: an index computed from names and numbers (no string, object or call)."""
_INDEX_NAME = re.compile(r"^(i|j|k|n|idx|index|start|begin|from|cut|pos|offset|\w*(Index|Idx|Start|Cut))$")
_MEASURE = re.compile(r"(token|size|length|countChars|numChars|charCount|estimate|bytes)", re.I)
_TRIMMER = re.compile(r"(trim|truncat|window|compact|prune|fit|shrink|cut|evict|limit|cap|clip|recent|lastN)", re.I)
_KEEP_KEYS = {"messages", "history", "input", "contents", "conversation", "chatHistory", "chat_history", "prompt"}
_SEND_NAME = re.compile(r"(chat|complet|generat|invoke|request|create|send|ask|query|run|step|llm|model|respond|"
                        r"predict|call|stream)", re.I)
_BUILDER_FN = re.compile(r"((get|build|prepare|load|fetch|make|assemble|compose|select|recent|latest|keep)\w*"
                         r"(messages|history|context|prompt|conversation|input|window|turns)|trim|truncat|window|"
                         r"compact|prune|fit|shrink|evict)", re.I)
_SIZE_NAME = re.compile(r"(token|limit|max|size|length|budget|window|capacity|context)", re.I)
_CHAIN_KEEPS = {"concat", "filter", "map", "flat", "flatMap", "toReversed", "slice"}


def _is_history(mod: TsModule, node: Node | None) -> bool:
    node = unwrap(node)
    if node is None:
        return False
    name = mod.dotted(node)
    return bool(name) and "()" not in name and "?" not in name and bool(_HISTORY.search(last(name)))


def _tail_slice(mod: TsModule, call: Node) -> bool:
    """`x.slice(-N)`, `x.slice(-keep)`, `x.slice(x.length - n)`, `x.slice(Math.max(0, x.length - n))`: keep the
    last N by count (not `x.slice(-1)`, the last item)."""
    args = mod.arguments(call)
    if not args or len(args) > 2:
        return False
    first = unwrap(args[0])
    if first is None:
        return False
    if first.type == "unary_expression" and mod.node_text(first).startswith("-"):
        value = number_value(mod, first.named_children[0]) if first.named_children else None
        return value is None or value > 1
    if first.type == "number":
        return False
    return bool(re.search(r"\.length\s*-", code_text(mod, first)))


def _kept_as_history(mod: TsModule, call: Node) -> tuple[bool, Node | None]:
    """Whether a slice's value becomes the history (returned, sent, or stored), and the node that keeps it."""
    cur = call
    while True:
        parent = cur.parent
        if parent is None:
            return False, None
        kind = parent.type
        if kind in ("array", "spread_element", "ternary_expression", "parenthesized_expression", "await_expression",
                    "as_expression", "satisfies_expression", "non_null_expression"):
            cur = parent
            continue
        if kind == "arguments":
            outer = parent.parent
            if outer is None or outer.type != "call_expression":
                return False, None
            if last(cname(mod, outer)) in ("from", "concat"):
                cur = outer
                continue
            return _sent(mod, outer), outer
        if kind == "member_expression" and same(parent.child_by_field_name("object"), cur):
            outer = parent.parent
            if mod.node_text(parent.child_by_field_name("property")) in _CHAIN_KEEPS and outer is not None and \
                    outer.type == "call_expression":
                cur = outer
                continue
            return False, None
        if kind == "pair":
            return mod.node_text(parent.child_by_field_name("key")).strip("'\"") in _KEEP_KEYS, parent
        if kind in ("variable_declarator", "assignment_expression", "return_statement", "arrow_function"):
            return True, parent
        return False, None


def _sent(mod: TsModule, call: Node) -> bool:
    return is_model_call(mod, call) or bool(_SEND_NAME.search(last(cname(mod, call))))


def _target_names(mod: TsModule, holder: Node) -> set[str]:
    if holder.type == "variable_declarator":
        return {mod.node_text(holder.child_by_field_name("name"))}
    if holder.type == "assignment_expression":
        return {mod.dotted(holder.child_by_field_name("left"))}
    return set()


def _reaches_model(mod: TsModule, project: TsProject, call: Node, holder: Node | None, base: str) -> bool:
    """Whether the cut list is what the model is sent: passed to a request, returned by a history builder (named
    so, or whose callers hand the result to a model request), or stored back into the history; not a slice shown in
    a UI or returned by a listing API."""
    if holder is None:
        return False
    fn = mod.enclosing_function(call)
    builder = fn is not None and (bool(_BUILDER_FN.search(mod.function_name(fn))) or
                                  _result_sent_to_model(mod, project, fn))
    if holder.type in ("return_statement", "arrow_function"):
        return builder
    if holder.type not in ("variable_declarator", "assignment_expression"):
        return True  # a `messages:` key of a request
    names = _target_names(mod, holder) - {""}
    if any(n == base or n.startswith(("this.", "state.", "session.", "ctx.", "context.")) for n in names):
        return True
    stmt = statement_of(holder)
    for later in later_statements(mod, stmt):
        for node in iter_subtree(later, into_functions=False):
            if node.type == "call_expression" and _sent(mod, node) and _mentions(mod, node.child_by_field_name(
                    "arguments"), names):
                return True
            if node.type == "return_statement" and builder and _mentions(mod, node, names):
                return True
    return False


_CONTEXT_ITEM = re.compile(r"""\btype\s*:\s*["'`]conversation\.item\.create["'`]""")
"""An OpenAI Realtime client event that puts an item into the model's conversation (its context)."""


def _model_bound(mod: TsModule, project: TsProject, call: Node) -> bool:
    """A call that is a model request or reaches one through project functions (`this.client.chat(req)`), or that
    writes into a realtime session's conversation (`send({ type: "conversation.item.create", item })`)."""
    if is_model_call(mod, call):
        return True
    args = mod.arguments(call)
    first = unwrap(args[0]) if args else None
    if first is not None and first.type == "object" and _CONTEXT_ITEM.search(mod.node_text(first)[:200]):
        return True
    reaching = model_index(project).reaching
    return any(key(t.module, t.node) in reaching for t in resolve_call(mod, project, call))


def _pair_typed(mod: TsModule, project: TsProject, obj: Node | None) -> bool:
    """Whether the list's declared element type (a class field `items: HistoryItem[]`, a typed local) is a type of
    the project whose variants include tool calls or results (`{ type: "function_call_output"; call_id }`): the list
    holds call/result pairs whatever it is called."""
    name = mod.dotted(unwrap(obj)) if obj is not None else ""
    if not name or "(" in name:
        return False
    field = name[5:] if name.startswith("this.") and name.count(".") == 1 else name if "." not in name else ""
    if not field:
        return False
    kinds = ("public_field_definition", "field_definition") if name.startswith("this.") else ("variable_declarator",)
    annotation = _annotations(mod, kinds).get(field)
    if annotation is None:
        return False
    types = {mod.node_text(n) for n in iter_subtree(annotation) if n.type == "type_identifier"}
    for type_name in types:
        home: TsModule | None = mod
        spec, _, export = imports_of(mod).get(type_name, "").partition("#")
        if spec:
            home = project.resolve_import(mod, spec) if spec.startswith(".") else None
            type_name = export if export and export != "default" else type_name
        if home is None:
            continue
        decl = _type_decls(home).get(type_name)
        if decl is not None and _PAIR_TOKENS.search(home.node_text(decl)):
            return True
    return False


def _annotations(mod: TsModule, kinds: tuple[str, ...]) -> dict[str, Node]:
    """Each name declared by a node of `kinds` to the first type annotation it is declared with (once per module:
    a bundle declares thousands of names)."""

    def build() -> dict[str, Node]:
        out: dict[str, Node] = {}
        for node in mod.nodes(*kinds):
            label = node.child_by_field_name("name") or node.child_by_field_name("property")
            annotation = node.child_by_field_name("type") if label is not None else None
            if annotation is not None:
                out.setdefault(mod.node_text(label), annotation)
        return out

    return mod_memo(mod, f"c13_annotations:{','.join(kinds)}", build)


def _type_decls(mod: TsModule) -> dict[str, Node]:
    """The module's top-level `type X = …` and `interface X {…}` declarations by name (once per module)."""

    def build() -> dict[str, Node]:
        out: dict[str, Node] = {}
        for node in mod.tree.root_node.named_children:
            decl = node.named_children[0] if node.type == "export_statement" and node.named_children else node
            if decl.type in ("type_alias_declaration", "interface_declaration"):
                label = decl.child_by_field_name("name")
                if label is not None:
                    out[mod.node_text(label)] = decl
        return out

    return mod_memo(mod, "c13_type_decls", build)


def _result_sent_to_model(mod: TsModule, project: TsProject, fn: Node) -> bool:
    """Whether a caller hands `fn`'s result to a model request, as an argument (`chat(buildRequest())`) or through a
    local (`const req = this.buildRequest(); … client.chat(req)`)."""
    if mod.function_name(fn) == "<anonymous>":
        return False
    for other, call in callers_of(project, mod, fn):
        for anc in other.ancestors(call):
            if anc.type == "for_in_statement" and other.within(call, anc.child_by_field_name("right") or anc):
                # `for (const item of this.history.recent(40)) send({ …, item })`: each kept item is sent
                names = {other.node_text(n) for n in iter_subtree(anc.child_by_field_name("left") or anc)
                         if n.type == "identifier"}
                if any(node.type == "call_expression" and _mentions(other, node.child_by_field_name("arguments"),
                                                                    names) and _model_bound(other, project, node)
                       for node in iter_subtree(anc.child_by_field_name("body") or anc, into_functions=False)):
                    return True
                break
            if anc.type in FUNCTION_TYPES or anc.type.endswith("_statement"):
                break
            if anc.type == "call_expression" and _model_bound(other, project, anc):
                return True
            if anc.type == "variable_declarator":
                names = {other.node_text(anc.child_by_field_name("name"))}
                for later in later_statements(other, statement_of(anc)):
                    for node in iter_subtree(later, into_functions=False):
                        if node.type == "call_expression" and _mentions(other, node.child_by_field_name(
                                "arguments"), names) and _model_bound(other, project, node):
                            return True
                break
    return False


def _mentions(mod: TsModule, node: Node | None, names: set[str]) -> bool:
    if node is None:
        return False
    for sub in iter_subtree(node):
        if sub.type in ("identifier", "shorthand_property_identifier", "member_expression") and \
                mod.dotted(sub) in names:
            return True
    return False


def _size_guarded(mod: TsModule, node: Node) -> bool:
    """Whether a head removal runs because the history is too big (a size test around it, or a trimming function);
    the same call elsewhere consumes a queue."""
    fn = mod.enclosing_function(node)
    if fn is not None and _TRIMMER.search(mod.function_name(fn)):
        return True
    for anc in mod.ancestors(node):
        if anc.type in FUNCTION_TYPES:
            return False
        if anc.type not in ("if_statement", "while_statement", "do_statement", "for_statement"):
            continue
        cond = code_text(mod, anc.child_by_field_name("condition"))
        if re.search(r"[<>]", cond) and (_MEASURE.search(cond) or _SIZE_NAME.search(cond)):
            return True
    return False


def _history_copy(mod: TsModule, obj: Node | None) -> bool:
    """Whether a local holds a copy of the history that is cut instead of the history itself: `const [first,
    ...rest] = history`, `const kept = [...messages]`, `history.slice(1)`, `Array.from(history)`."""
    obj = unwrap(obj)
    if obj is None or obj.type != "identifier":
        return False
    for value in mod.bindings(mod.enclosing_function(obj)).get(mod.node_text(obj), []):
        value = unwrap(value)
        if value is None:
            continue
        if value.type == "array":
            spreads = [c for c in value.named_children if c.type == "spread_element"]
            if any(c.named_children and _is_history(mod, c.named_children[0]) for c in spreads):
                return True
            continue
        if value.type == "call_expression":
            callee = value.child_by_field_name("function")
            if callee is not None and callee.type == "member_expression" and \
                    mod.node_text(callee.child_by_field_name("property")) in ("slice", "concat"):
                value = callee.child_by_field_name("object")
            elif cname(mod, value) == "Array.from" and mod.arguments(value):
                value = mod.arguments(value)[0]
        if _is_history(mod, value):
            return True
    return False


_MESSAGE_KEYS = {"role", "content", "parts", "type", "message", "messages"}


def _holds_records(mod: TsModule, base: str) -> bool:
    """Whether every push onto `base` in the module is a plain record that is no message (`{timestamp, toolName,
    output}` in a tool-call log): cutting such a list cannot orphan a tool result."""
    pushed: list[Node] = []
    scalars = 0
    for call in calls_named(mod, ("push",)):
        callee = call.child_by_field_name("function")
        if callee is None or callee.type != "member_expression" or \
                mod.dotted(callee.child_by_field_name("object")) != base:
            continue
        for arg in mod.arguments(call):
            arg = unwrap(arg)
            if arg is not None and arg.type == "identifier":
                values = mod.bindings(mod.enclosing_function(call)).get(mod.node_text(arg), [])
                if len(values) != 1:
                    return False
                arg = unwrap(values[0])
            if arg is not None and _scalar_entry(mod, arg):
                scalars += 1
                continue
            if arg is None or arg.type != "object":
                return False
            pushed.append(arg)
    return bool(pushed or scalars) and not any(set(mod.object_keys(o)) & _MESSAGE_KEYS for o in pushed)


_KEY_CALL = re.compile(r"(Key|Hash|Id|Signature|Fingerprint|Digest)$")


def _scalar_entry(mod: TsModule, value: Node) -> bool:
    """A string, number or computed key (`this.getToolCallKey(call)`, `hash(args)`): an entry that is no message."""
    if value.type in ("string", "template_string", "number"):
        return True
    return value.type == "call_expression" and bool(_KEY_CALL.search(last(cname(mod, value))))


def _size_loop(mod: TsModule, node: Node) -> bool:
    """`while (total > budget) total -= tokens(rest.shift())`: a head removal inside a loop that runs while the
    history is over a size limit (the removed message feeds the running total, so the call is no statement)."""
    for anc in mod.ancestors(node):
        if anc.type in FUNCTION_TYPES:
            return False
        if anc.type in ("while_statement", "do_statement", "for_statement"):
            cond = code_text(mod, anc.child_by_field_name("condition"))
            if re.search(r"[<>]", cond) and _LOOP_MEASURE.search(cond):
                return True
    return False


_LOOP_MEASURE = re.compile(r"(token|budget|limit|max|total|used|chars|bytes|size|estimate|capacity|context)", re.I)
"""A size measure in a loop condition (a bare `.length > 0` drains a queue instead)."""


_ITEMS = re.compile(r"^(items|input_?items|inputItems|input|inputs|entries|thread|context|contents)$", re.I)
_AGENT_RUNNERS = re.compile(r"^@openai/agents[\w-]*#(run)$")


def _agent_input_cut(mod: TsModule, call: Node, obj: Node | None) -> bool:
    """`run(agent, this.items.slice(-n))` / `runner.run(agent, items.slice(-n))`: an agent SDK's input item list,
    cut by count straight into the run (or into a model request); the items hold function calls and their results
    under a generic name."""
    obj = unwrap(obj)
    if obj is None or not _ITEMS.match(last(mod.dotted(obj) or "")):
        return False
    parent = call.parent
    if parent is not None and parent.type == "pair" and mod.node_text(parent.child_by_field_name("key")).strip(
            "'\"") in ("contents", "input", "messages", "history"):
        # `generateContent({ contents: contents.slice(-n) })`: the value of the request's history key
        holder = parent.parent
        parent = holder.parent if holder is not None and holder.type == "object" else None
        outer = parent.parent if parent is not None and parent.type == "arguments" else None
        return outer is not None and outer.type == "call_expression" and is_model_call(mod, outer)
    outer = parent.parent if parent is not None and parent.type == "arguments" else None
    if outer is None or outer.type != "call_expression":
        return False
    if is_model_call(mod, outer):
        return True
    name = cname(mod, outer)
    if name == "run" and _AGENT_RUNNERS.match(mod.imports().get("run", "")):
        return True
    return last(name) == "run" and receiver(name).lower().endswith("runner")


_STEP = r"(\+\+|\+=|-=|--|=(?!=))"


def _size_cut(mod: TsModule, call: Node) -> bool:
    """`while (total > budget && cut < n) { total -= sizes[cut]; cut++; }` then `items.slice(cut)`: the cut index
    is advanced item by item until the size fits, so it lands wherever the budget is met (between a tool call and
    its result as easily as anywhere else)."""
    args = mod.arguments(call)
    first = unwrap(args[0]) if len(args) == 1 else None
    fn = mod.enclosing_function(call)
    if first is None or first.type != "identifier" or fn is None:
        return False
    idx = re.escape(mod.node_text(first))
    stepped = re.compile(rf"(\b{idx}\s*{_STEP}|(\+\+|--){idx}\b)")
    for loop in mod.inside(mod.nodes("while_statement", "do_statement", "for_statement"), fn):
        if loop.end_byte > call.start_byte or mod.enclosing_function(loop) != fn:
            continue
        cond = loop.child_by_field_name("condition")
        if cond is None or not _LOOP_MEASURE.search(code_text(mod, cond)):
            continue
        body = loop.child_by_field_name("body")
        step = loop.child_by_field_name("increment")
        if stepped.search(code_text(mod, body) if body is not None else "") or \
                step is not None and stepped.search(code_text(mod, step)):
            return True
    return False


def _items_kept_back(mod: TsModule, call: Node, obj: Node | None) -> bool:
    """`this.input = [this.input[0], ...this.input.slice(cut)]`: an item list under a generic name (`input`,
    `items`, `contents`) stored back over itself, i.e. the conversation that the next request sends."""
    obj = unwrap(obj)
    base = mod.dotted(obj) if obj is not None else ""
    if not base or not _ITEMS.match(last(base)):
        return False
    kept, holder = _kept_as_history(mod, call)
    return kept and holder is not None and holder.type == "assignment_expression" and \
        mod.dotted(holder.child_by_field_name("left")) == base


def _cut_sites(mod: TsModule, project: TsProject) -> Iterator[tuple[Node, str, str]]:
    """Every count-only cut of a history list: (node, its text, the cut list's name)."""
    for call in calls_named(mod, ("slice", "shift", "splice")):
        fn_node = call.child_by_field_name("function")
        if fn_node is None or fn_node.type != "member_expression":
            continue
        method = mod.node_text(fn_node.child_by_field_name("property"))
        obj = fn_node.child_by_field_name("object")
        if method not in ("slice", "shift", "splice"):
            continue
        sized = method == "slice" and _size_cut(mod, call)
        if not _is_history(mod, obj) and (method == "slice" or not _history_copy(mod, obj)) and \
                not (method == "slice" and _agent_input_cut(mod, call, obj)) and \
                not (method == "slice" and _history_loader(mod, call)) and \
                not (sized and _items_kept_back(mod, call, obj)) and \
                not (method != "shift" and _pair_typed(mod, project, obj)):
            continue
        base = mod.dotted(unwrap(obj))
        text = " ".join(code_text(mod, call).split())
        if method == "slice":
            if not (_tail_slice(mod, call) or sized):
                continue
            kept, holder = _kept_as_history(mod, call)
            if kept and _reaches_model(mod, project, call, holder, base):
                yield call, text, base
        elif method == "shift":
            parent = call.parent
            if parent is not None and parent.type == "expression_statement" and _size_guarded(mod, call) or \
                    _size_loop(mod, call):
                yield call, text, base
        else:
            args = mod.arguments(call)
            if len(args) < 2 or number_value(mod, args[1]) == 0:
                continue
            count = code_text(mod, args[1])
            removed = number_value(mod, args[1])
            if _removed_by_identity(mod, call, base) or (removed is not None and len(args) - 2 >= removed):
                continue  # `splice(i, 1, a, b)` rewrites one message as two: a replacement, nothing is cut
            if len(args) > 2 and number_value(mod, args[0]) == 0 and code_text(mod, args[1]).strip() == \
                    f"{base}.length":
                continue  # `list.splice(0, list.length, ...next)` swaps the whole content in place: no window
            if _size_guarded(mod, call) or _TRIMMER.search(count) or ".length" in count:
                yield call, text, base


_LOADER_FN = re.compile(r"^#?(get|load|fetch|read|restore|select|recent|latest|last)\w*(messages|history|conversation|"
                        r"turns|transcript|contents)$", re.I)


def _history_loader(mod: TsModule, call: Node) -> bool:
    """A cut inside a function that loads the conversation (`loadHistory(chat) { return rows.slice(-n).map(toTurn)
    }`): whatever the rows are called, the function's name says they are the history it hands back."""
    fn = mod.enclosing_function(call)
    return fn is not None and bool(_LOADER_FN.match(mod.function_name(fn)))


def _removed_by_identity(mod: TsModule, call: Node, base: str) -> bool:
    """`if (ids.has(messages[i].id)) messages.splice(i, 1)`: a message removed because of which one it is (replaced
    by id), not to cut the history down by count."""
    for anc in mod.ancestors(call):
        if anc.type in FUNCTION_TYPES:
            return False
        if anc.type == "if_statement":
            cond = code_text(mod, anc.child_by_field_name("condition"))
            return bool(re.search(r"\.(has|includes)\(", cond)) and f"{base}[" in cond
    return False


def _acts_on_pair(mod: TsModule, node: Node) -> bool:
    """A pairing test that changes what is kept: a loop over tool results, a filter, a search for a safe
    boundary, or an `if` that moves the cut, skips, drops or leaves; not one that only counts tool calls."""
    kind = node.type
    if kind in ("while_statement", "do_statement", "for_statement"):
        cond = code_text(mod, node.child_by_field_name("condition"))
        if _PAIR_TOKENS.search(cond) or _USER_BOUNDARY.search(cond):
            return True
        # `while (!isValidUserMessageWithoutToolResults(m[0])) m.splice(0, 2)`: a loop that drops messages while
        # the head carries tool results is the repair, whatever its helper is called
        return bool(_TOOL_WORD.search(cond)) and _if_moves_cut(mod, node.child_by_field_name("body"))
    if kind == "call_expression":
        name = last(cname(mod, node))
        if name == "filter":
            # removing tool turns or orphans (`m.role !== "tool"`, `ids.has(m.tool_call_id)`), not picking the
            # calls out of one reply (`content.filter((b) => b.type === "tool_use")`)
            args = code_text(mod, node.child_by_field_name("arguments"))
            return bool(_PAIR_TOKENS.search(args)) and bool(_REMOVES.search(args))
        if name in ("findIndex", "findLastIndex"):
            args = code_text(mod, node.child_by_field_name("arguments"))
            return bool(_PAIR_TOKENS.search(args) or _USER_BOUNDARY.search(args))
        if name in ("find", "findLast"):
            # `window.find((m) => m.role === "user")` looks for a boundary; `find((b) => b.type === "tool_use")`
            # only picks a block out of one message (an `if` acting on it is judged as an `if`)
            return bool(_USER_BOUNDARY.search(code_text(mod, node.child_by_field_name("arguments"))))
        return bool(_PAIR_NAME.search(name)) and not _NOT_PAIR_HELPER.match(name)
    if kind == "if_statement":
        if not _PAIR_TOKENS.search(code_text(mod, node.child_by_field_name("condition"))):
            return False
        return _if_moves_cut(mod, node.child_by_field_name("consequence"))
    return False


def _if_moves_cut(mod: TsModule, body: Node | None) -> bool:
    """Whether the branch of a tool-call test changes what is kept: it drops a message (`shift`/`splice`), moves
    the cut index (`start++`, `start = i + 1`), or skips/leaves without recording anything. A branch that pushes a
    converted block and `continue`s is a message converter (`if (m.role === "tool") { out.push(...); continue }`),
    not a pairing check."""
    exits = False
    for sub in iter_subtree(body, into_functions=False) if body is not None else []:
        kind = sub.type
        if kind == "call_expression":
            method = last(cname(mod, sub))
            if method in _DROPS:
                return True
            if method in ("push", "concat", "set", "add") or kind == "yield_expression":
                return False
        elif kind == "yield_expression":
            return False
        elif kind in ("continue_statement", "break_statement", "return_statement", "throw_statement"):
            exits = True
        elif kind in ("augmented_assignment_expression", "update_expression"):
            return True
        elif kind == "assignment_expression":
            right = unwrap(sub.child_by_field_name("right"))
            if right is not None and _INDEX_MOVE.match(code_text(mod, right)) and (
                    right.type in ("number", "binary_expression") or
                    right.type == "identifier" and _INDEX_NAME.match(mod.node_text(right))):
                return True
    return exits


def _pair_handled_in(mod: TsModule, project: TsProject, nodes: list[Node], depth: int = 1) -> bool:
    for top in nodes:
        for node in iter_subtree(top):
            if _acts_on_pair(mod, node):
                return True
            if depth > 0 and node.type == "call_expression":
                for ref in resolve_call(mod, project, node):
                    body = ref.node.child_by_field_name("body")
                    if body is not None and _pair_handled_in(ref.module, project, [body], depth - 1):
                        return True
            if node.type == "assignment_expression":
                left = node.child_by_field_name("left")
                if left is not None and left.type == "subscript_expression" and \
                        mod.node_text(left.child_by_field_name("index")) == "0":
                    return True  # `history[0] = notice`: the (possibly orphaned) head is overwritten
    return False


def _handles_pairs(mod: TsModule, project: TsProject, node: Node) -> bool:
    """Whether the cut list is checked for pairing around the cut (in the trimming function, or after the cut)."""
    trimmer: Node | None = None
    for anc in mod.ancestors(node):
        if anc.type in FUNCTION_TYPES and _TRIMMER.search(mod.function_name(anc)):
            trimmer = anc
        elif anc.type in ("while_statement", "do_statement", "if_statement") and trimmer is None and (
                _PAIR_TOKENS.search(code_text(mod, anc.child_by_field_name("condition")))
                or anc.type != "if_statement" and _acts_on_pair(mod, anc)):
            return True  # `while (w[0] instanceof ToolMessage) w.shift()`: the removal is the repair itself
    if trimmer is not None:
        return _pair_handled_in(mod, project, [trimmer])
    stmt = statement_of(node)
    region = [stmt, *later_statements(mod, stmt)]
    loop = next((a for a in mod.ancestors(node) if a.type in FUNCTION_TYPES or a.type in ("while_statement",
                                                                                          "do_statement")), None)
    if loop is not None and loop.type not in FUNCTION_TYPES:
        region.extend(later_statements(mod, loop))  # `while (…) m.shift()` then a repair pass over what is left
    region.extend(c for a in mod.ancestors(node) if a.type in ("if_statement", "while_statement", "do_statement")
                  for c in [a.child_by_field_name("condition")] if c is not None)
    cut = unwrap(_receiver(node))
    if cut is not None and cut.type == "identifier":
        # `const clean = turns.filter((t) => !isFunctionCall(t)); clean.slice(-n)`: tool turns are gone before the cut
        region.extend(mod.bindings(mod.enclosing_function(node)).get(mod.node_text(cut), []))
    return _pair_handled_in(mod, project, region)


_LLM_PACKAGE = re.compile(r"^(ai|openai|@anthropic-ai/[\w-]+|@ai-sdk/[\w-]+|@google/(genai|generative-ai)|"
                          r"@langchain/[\w-]+|@mistralai/[\w-]+|groq-sdk|ollama|@openai/agents[\w-]*)(/|#|$)")


def _sdk_typed(mod: TsModule, fn: Node | None) -> bool:
    """Whether the cutting function takes or returns a provider SDK's message type (`CoreMessage[]`,
    `ChatCompletionMessageParam[]`, `Anthropic.MessageParam[]`): the list is model history, which holds tool calls."""
    if fn is None:
        return False
    params = fn.child_by_field_name("parameters")
    ret = fn.child_by_field_name("return_type")
    text = " ".join(mod.node_text(n) for n in (params, ret) if n is not None)
    if "Message" not in text and "Content" not in text:
        return False
    imports = mod.imports()
    for name in set(re.findall(r"\b([A-Z]\w*)(?:\.\w+)?\s*(?:\[\]|>)", text)):
        source = imports.get(name, "")
        if source and _LLM_PACKAGE.match(source):
            return True
    return False


def _feeds_model(mod: TsModule, project: TsProject, fn: Node | None) -> bool:
    """Whether a caller hands the cutting function's result straight to a model request (`messages:
    compact(history)` inside `client.messages.create({...})`)."""
    if fn is None:
        return False
    for other, call in callers_of(project, mod, fn):
        for anc in other.ancestors(call):
            if anc.type in FUNCTION_TYPES or anc.type.endswith("_statement"):
                break
            if anc.type == "call_expression" and is_model_call(other, anc):
                return True
    return False


def _project_uses_tools(project: TsProject) -> bool:
    return memo(project, "c13_uses_tools", lambda: any(module_speaks_llm(m, project)
                                                        for m in project.modules.values()))


_BOOKKEEPING_CLASS = re.compile(r"(Checker|Detector|Tracker|Monitor|Counter|Limiter|Watchdog|Breaker|Stats|Metrics|"
                                r"Profiler)$")
"""Classes that keep bounded windows of records to detect loops or measure the run, never to talk to the model."""
_BOOKKEEPING_LIST = re.compile(r"^[_#$]*(occurrences?|strikes?|calls?|tool_?calls?|invocations?|attempts?|errors?|"
                               r"failures?|events?|actions?|visits?|seen|usages?|costs?|latenc(y|ies)|metrics?|"
                               r"retr(y|ies)|undo|redo|navigation|commands?|search(es)?|quer(y|ies))_?History$", re.I)
"""`occurrencesHistory`, `toolCallHistory`, `errorHistory`: a list named for the records it holds, not messages."""


def _bookkeeping(mod: TsModule, node: Node, base: str) -> bool:
    """Whether the cut list is a bounded window of bookkeeping records (`this.occurrencesHistory.shift()` in a
    `ToolCallChecker`): no message list, so no call/result pair can be split."""
    if _BOOKKEEPING_LIST.match(last(base)):
        return True
    cls = next((a for a in mod.ancestors(node) if a.type in ("class_declaration", "class")), None)
    name = cls.child_by_field_name("name") if cls is not None else None
    return name is not None and bool(_BOOKKEEPING_CLASS.search(mod.node_text(name)))


_PAGED_READ = re.compile(r"^#?(get|list|load|fetch|query|read|find)\w*(Messages|History|Conversation)$")
_UI_PARTS = re.compile(r"[\"'](output-available|input-available|output-error)[\"']|\bconvertToModelMessages\b")
"""AI SDK `UIMessage` tool parts: a tool call and its result are one part (`state: "output-available"`, `output`)."""


def _ui_message_page(mod: TsModule, node: Node, fn: Node | None) -> bool:
    """A storage read (`getMessages(..., { limit })` → `messages.slice(-limit)`) over stored AI SDK `UIMessage`s,
    where each tool call carries its own result in one part: a count cut cannot separate a pair."""
    if fn is None or not _PAGED_READ.match(mod.function_name(fn)):
        return False
    return bool(_UI_PARTS.search(mod.text))


_FLATTENER = re.compile(r"^(getBufferString|stringify|toString|\w*To(Text|String|Transcript)|format\w*|render\w*|"
                        r"serializ\w*|join)$")
"""A call that turns a message list into one string (`getBufferString(msgs)`, `JSON.stringify(msgs)`)."""


def _flattened(mod: TsModule, node: Node) -> bool:
    """Whether the value at `node` goes into a call that flattens it to text, directly or through list methods
    (`JSON.stringify(kept.map(toLine))`)."""
    chained: Node | None = None
    for anc in mod.ancestors(node):
        if anc.type in ("await_expression", "parenthesized_expression", "arguments"):
            continue
        if anc.type == "member_expression" and \
                mod.node_text(anc.child_by_field_name("property")) in _CHAIN_KEEPS:
            chained = anc
            continue
        if anc.type == "call_expression" and chained is not None and same(anc.child_by_field_name("function"),
                                                                            chained):
            chained = None
            continue
        return anc.type == "call_expression" and bool(_FLATTENER.match(_callee_last(mod, anc)))
    return False


def _callee_last(mod: TsModule, call: Node) -> str:
    """The callee's last name, also through a bundler's indirect call (`(0, _core.getBufferString)(msgs)`)."""
    fn = call.child_by_field_name("function")
    while fn is not None and fn.type in ("parenthesized_expression", "sequence_expression"):
        named = [c for c in fn.named_children if c.type != "comment"]
        fn = named[-1] if named else None
    return last(mod.dotted(fn)) if fn is not None else ""


def _length_read(mod: TsModule, node: Node) -> bool:
    """`kept.length`: reading the list's size, which sends nothing."""
    parent = node.parent
    return parent is not None and parent.type == "member_expression" and \
        mod.node_text(parent.child_by_field_name("property")) == "length"


def _only_flattened(mod: TsModule, project: TsProject, fn: Node | None) -> bool:
    """Whether every caller turns `fn`'s returned list into plain text (`const kept = await trimForSummary(msgs);
    prompt = getBufferString(kept)`) before anything uses it: a transcript string for a summariser carries no
    structured tool call or result, so a cut inside it cannot leave an orphan for the provider to reject."""
    callers = callers_of(project, mod, fn) if fn is not None else []
    if not callers:
        return False
    for other, call in callers:
        if _flattened(other, call):
            continue
        holder = next((a for a in other.ancestors(call) if a.type not in ("await_expression",
                                                                           "parenthesized_expression")), None)
        if holder is None or holder.type != "variable_declarator":
            return False
        name = other.node_text(holder.child_by_field_name("name"))
        uses = [n for later in later_statements(other, statement_of(holder))
                for n in iter_subtree(later, into_functions=False)
                if n.type == "identifier" and other.node_text(n) == name]
        if not uses or not all(_flattened(other, n) or _length_read(other, n) for n in uses):
            return False
    return True


def _returned(mod: TsModule, node: Node) -> bool:
    """Whether `node` is the value its function returns (`return await trim(...)`, `return list.slice(-n)`)."""
    for anc in mod.ancestors(node):
        if anc.type in ("await_expression", "parenthesized_expression"):
            continue
        return anc.type == "return_statement"
    return False


_FLAT_TYPE_NODES = frozenset({"type_annotation", "generic_type", "type_arguments", "array_type", "object_type",
                              "property_signature", "property_identifier", "predefined_type", "literal_type",
                              "union_type", "string", "string_fragment", "null", "undefined", "readonly_type",
                              "parenthesized_type"})
_LIST_TYPES = frozenset({"Promise", "Array", "ReadonlyArray"})


def _flat_return_type(mod: TsModule, fn: Node | None) -> bool:
    """Whether `fn` declares that it returns a list of records whose every field is a string, number or boolean
    (`Promise<Array<{ id: string; role: string; content: string }>>`): such a record holds no tool call or result
    structure, so a cut list it is built from cannot hand a provider an orphan."""
    annotation = fn.child_by_field_name("return_type") if fn is not None else None
    if annotation is None or not any(n.type == "object_type" for n in iter_subtree(annotation)):
        return False
    for n in iter_subtree(annotation):
        if n.type == "type_identifier":
            if mod.node_text(n) not in _LIST_TYPES:
                return False
        elif n.type not in _FLAT_TYPE_NODES:
            return False
    return True


def _only_returned(mod: TsModule, node: Node) -> bool:
    """Whether the cut list goes only into its function's return value: returned itself, or held in a local
    whose every later use sits in a `return` statement."""
    holder = next((a for a in mod.ancestors(node) if a.type not in ("await_expression", "parenthesized_expression",
                                                                    "ternary_expression")), None)
    if holder is None:
        return False
    if holder.type == "return_statement":
        return True
    if holder.type != "variable_declarator":
        return False
    name = mod.node_text(holder.child_by_field_name("name"))
    uses = [n for later in later_statements(mod, statement_of(holder))
            for n in iter_subtree(later) if n.type == "identifier" and mod.node_text(n) == name]
    return bool(uses) and all(any(a.type == "return_statement" for a in mod.ancestors(n)) for n in uses)


@rule(CheckId.C13, lang="typescript", name="window-cut-orphans-tool-result")
def window_cut_orphans_tool_result(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a history cut chosen by message count alone (`messages.slice(-N)` kept as the history,
    `history.shift()` until it fits, `messages.splice(1, k)`) where nothing around it looks at tool calls or
    results: the boundary can fall between a tool call and its result and leave an orphan the provider rejects.
    A loop that keeps dropping messages while the head carries tool results is the pairing repair itself, and a
    cut returned only as records of strings and numbers (the declared return type) holds no tool call to orphan.
    """
    text = mod.text
    if is_test_module(mod) or (".slice(" not in text and ".shift(" not in text and ".splice(" not in text):
        return
    seen: set[tuple[Key | None, str]] = set()
    for node, text, base in _cut_sites(mod, project):
        fn = mod.enclosing_function(node)
        marker = (key(mod, fn) if fn is not None else None, base)
        if marker in seen or _holds_records(mod, base) or _bookkeeping(mod, node, base) or \
                _ui_message_page(mod, node, fn) or _handles_pairs(mod, project, node) or \
                _returned(mod, node) and _only_flattened(mod, project, fn) or \
                _only_returned(mod, node) and _flat_return_type(mod, fn):
            continue
        seen.add(marker)
        speaks = module_speaks_llm(mod, project) or _sdk_typed(mod, fn) or _feeds_model(mod, project, fn) or \
            _agent_input_cut(mod, node, _receiver(node))
        if not speaks and not _project_uses_tools(project):
            continue  # no sign that this list is a model history that can hold tool calls
        yield Hit(
            node=node,
            verdict=Verdict.CONFIRMED if speaks else Verdict.SUSPECTED,
            claim=f"`{text[:90]}` chooses the history cut by count alone; nothing checks that a tool result is not "
                  "left without its tool call (or a call without its result)",
            consequence="once the history is long enough to be cut, the next request can start with an orphaned tool "
                        "result and the provider rejects it (HTTP 400), ending the session",
            direction="move the cut forward past leading tool results (and drop a trailing call without its "
                      "results), or cut only at user-turn boundaries so call/result pairs stay together",
            confirm_hint="" if speaks else "verify that this history is sent to the model and can hold tool calls "
                                           "and results; if it can, the cut can separate a pair",
        )


def _receiver(call: Node) -> Node | None:
    fn = call.child_by_field_name("function")
    return fn.child_by_field_name("object") if fn is not None and fn.type == "member_expression" else None


# ---------------------------------------------------------------- tool output pushed whole
_RESULT_SHAPES = (("role", "tool", ("content",)), ("type", "tool_result", ("content",)),
                  ("type", "function_call_output", ("output",)), ("type", "tool-result", ("result", "output")),
                  ("role", "function", ("content",)))
_RESULT_MARKS = frozenset(wanted.encode() for _, wanted, _ in _RESULT_SHAPES)
_BOUND_CALL = re.compile(r"(truncat|clip|limit|shorten|cap|trim|summar|head|tail|spill|abbrev|preview|ellipsi|elide|"
                         r"maxLen|maxChars|offload|substring|substr|slice)", re.I)
_TOOL_CALL = re.compile(r"^_?(run|call|execute|exec|invoke|dispatch|handle)_?(tool|function|command|action|shell|"
                        r"bash|cmd)s?(_?call)?$", re.I)
_TOOL_RECV = re.compile(r"(tool|handler|fn|func|impl)s?$", re.I)
_CAP_FN = re.compile(r"((truncat|clip|cap|limit|shorten|trim|spill|offload|elide)\w*(output|result|observation|"
                     r"content|response)|(output|result|observation)\w*(truncat|clip|limit|cap|spill|trim))", re.I)


def _result_value(mod: TsModule, obj: Node) -> Node | None:
    """The content of a tool-result message literal."""
    keys = mod.object_keys(obj)
    for field, wanted, content_keys in _RESULT_SHAPES:
        if string_value(mod, keys.get(field)) == wanted:
            for ck in content_keys:
                if ck in keys:
                    return keys[ck]
    return None


def _is_tool_invocation(mod: TsModule, call: Node) -> bool:
    fn_node = call.child_by_field_name("function")
    if fn_node is None:
        return False
    if fn_node.type == "subscript_expression":
        return bool(re.search(r"(tool|handler|func|function|registry|dispatch|command|action)s?(Map|Table)?$",
                              last(mod.dotted(fn_node.child_by_field_name("object"))), re.I))
    name = cname(mod, call)
    if not name:
        return False
    tail = last(name)
    recv = name.rsplit(".", 1)[0] if "." in name else ""
    if _TOOL_CALL.search(tail) or tail in ("callTool", "execSync", "spawnSync"):
        return True
    if recv and _TOOL_RECV.search(last(recv)) and tail in ("run", "invoke", "call", "execute", "handler"):
        return True
    return not recv and tail in ("handler", "fn", "impl", "tool")


def _output_names(mod: TsModule, fn: Node) -> set[str]:
    """Local names that hold a tool's raw output (assigned from a tool invocation, or from such a name)."""
    names: set[str] = set()
    for decl in nodes_in(mod, fn, "variable_declarator", "assignment_expression"):
        target = decl.child_by_field_name("name") or decl.child_by_field_name("left")
        value = decl.child_by_field_name("value") or decl.child_by_field_name("right")
        if target is None or value is None or not _carries_output(mod, value, names):
            continue
        if target.type == "identifier":
            names.add(mod.node_text(target))
        elif target.type == "object_pattern":
            names.update(mod.node_text(n) for n in iter_subtree(target)
                         if n.type in ("shorthand_property_identifier_pattern", "identifier"))
    return names


def _carries_output(mod: TsModule, expr: Node, names: set[str]) -> bool:
    for sub in iter_subtree(expr, into_functions=False):
        if sub.type == "call_expression" and _is_tool_invocation(mod, sub):
            return True
        if sub.type in ("identifier", "shorthand_property_identifier") and mod.node_text(sub) in names:
            return True
    return False


def _bounded_expr(mod: TsModule, expr: Node) -> bool:
    for sub in iter_subtree(expr, into_functions=False):
        if sub.type == "call_expression" and _BOUND_CALL.search(last(cname(mod, sub))):
            return True
    return False


def _bounded_in(mod: TsModule, fn: Node, names: set[str]) -> bool:
    """Whether `fn` bounds one of `names`: a truncating assignment, or a length test."""
    for decl in nodes_in(mod, fn, "variable_declarator", "assignment_expression"):
        target = decl.child_by_field_name("name") or decl.child_by_field_name("left")
        value = decl.child_by_field_name("value") or decl.child_by_field_name("right")
        if target is not None and value is not None and mod.node_text(target) in names and _bounded_expr(mod, value):
            return True
    text = code_text(mod, fn)
    return any(re.search(rf"\b{re.escape(n)}\??\.length\s*[<>]", text) for n in names)


def _project_caps_outputs(project: TsProject) -> bool:
    """A pass like `truncateToolOutputs(messages)` may bound every result before the request; the rule cannot
    place it on the path, so it stays silent rather than guess."""

    def build() -> bool:
        names = {n for m in project.modules.values() for n in function_defs(m) if _CAP_FN.search(n)}
        return bool(names) and any(calls_named(m, names) for m in project.modules.values())

    return memo(project, "c13_caps", build)


@rule(CheckId.C13, lang="typescript", name="tool-output-appended-unbounded")
def tool_output_appended_unbounded(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a tool-result message whose content is the tool's raw output with no size bound anywhere on the way
    (no slice, truncation, spill to storage or length test): one large output fills the context window.
    """
    text = mod.text
    if is_test_module(mod) or not any(w in text for w in ("tool_result", "function_call_output", "tool-result",
                                                           '"tool"', "'tool'", '"function"', "'function'")):
        return
    objects: dict[Key, Node] = {}
    for pair in mod.nodes("pair"):
        value = pair.child_by_field_name("value")
        if value is not None and value.type == "string" and mod.source[value.start_byte + 1:value.end_byte - 1] in \
                _RESULT_MARKS and pair.parent is not None and pair.parent.type == "object":
            objects.setdefault(key(mod, pair.parent), pair.parent)
    candidates = [(obj, v) for obj in objects.values() if (v := _result_value(mod, obj)) is not None]
    if not candidates or _project_caps_outputs(project):
        return
    seen: set[Key] = set()
    for obj, value in candidates:
        if string_value(mod, value) is not None:
            continue
        fn = mod.enclosing_function(obj)
        if fn is None or key(mod, fn) in seen or _bounded_expr(mod, value):
            continue
        outputs = _output_names(mod, fn)
        if not _carries_output(mod, value, outputs):
            continue  # converters and error messages: the raw output entered history elsewhere, if at all
        names = {mod.node_text(n) for n in iter_subtree(value) if n.type in ("identifier",
                                                                            "shorthand_property_identifier")}
        names &= outputs
        if _bounded_in(mod, fn, names) or _producer_bounds(mod, project, fn, names) or \
                _implementations_bound(mod, project, fn, names):
            continue
        seen.add(key(mod, fn))
        shown = " ".join(code_text(mod, value).split())[:80]
        yield Hit(
            node=obj,
            verdict=Verdict.SUSPECTED,
            claim=f"the tool result `{shown}` enters history whole; nothing bounds its size",
            consequence="one large tool output (a big file, a verbose command) fills the context window; the next "
                        "request fails or pushes out everything before it",
            direction="cap tool output before it enters history (truncate with a marker, or spill it to storage and "
                      "put a reference plus a preview in the message)",
            confirm_hint=f"verify that every tool behind `{shown}` returns a bounded amount of text (no unbounded "
                         "file reads, command output or HTTP bodies)",
        )


def _producer_bounds(mod: TsModule, project: TsProject, fn: Node, names: set[str]) -> bool:
    """Whether a project function that produced one of `names` bounds its own output."""
    for decl in nodes_in(mod, fn, "variable_declarator"):
        if mod.node_text(decl.child_by_field_name("name")) not in names:
            continue
        value = unwrap(decl.child_by_field_name("value"))
        if value is None or value.type != "call_expression":
            continue
        for ref in resolve_call(mod, project, value):
            for ret in nodes_in(ref.module, ref.node, "return_statement"):
                if ret.named_children and _bounded_expr(ref.module, ret.named_children[0]):
                    return True
    return False


_RAW_PART = re.compile(r"(output|stdout|stderr|text|content|body|data|result|html|raw|page|response)", re.I)
"""A substitution in a returned template that carries a payload (not a path, a count or an error message)."""


def _bounded_return(mod: TsModule, expr: Node) -> bool:
    """A returned value of bounded size: truncated (`clip(text)`, `out.slice(0, n)`), a literal, or a template
    whose substitutions carry no payload (`Wrote ${file}`, `failed: ${err.message}`)."""
    expr = unwrap(expr)
    if expr is None or _bounded_expr(mod, expr) or string_value(mod, expr) is not None:
        return True
    if expr.type != "template_string":
        return False
    return not any(sub.type == "template_substitution" and _RAW_PART.search(code_text(mod, sub))
                   for sub in expr.named_children)


def _implementations_bound(mod: TsModule, project: TsProject, fn: Node, names: set[str]) -> bool:
    """`result = await tool.run(args, ctx)` where `tool` comes from a registry: every project method of that name
    (the tool implementations, `run(args, ctx) { return fenced(..., clip(text)); }`) returns a bounded value."""
    methods: set[str] = set()
    for decl in nodes_in(mod, fn, "variable_declarator", "assignment_expression"):
        target = decl.child_by_field_name("name") or decl.child_by_field_name("left")
        value = unwrap(decl.child_by_field_name("value") or decl.child_by_field_name("right"))
        if target is None or value is None or mod.node_text(target) not in names or value.type != "call_expression":
            continue
        name = cname(mod, value)
        if receiver(name) and _TOOL_RECV.search(last(receiver(name))):
            methods.add(last(name))
    if len(methods) != 1:
        return False
    method = methods.pop()
    returns = 0
    for other in project.modules.values():
        if method not in other.text:
            continue
        for impl in project.functions_in(other, method):
            for ret in nodes_in(other, impl, "return_statement"):
                if other.enclosing_function(ret) != impl or not ret.named_children:
                    continue
                if not _bounded_return(other, ret.named_children[0]):
                    return False
                returns += 1
    return returns >= 2
