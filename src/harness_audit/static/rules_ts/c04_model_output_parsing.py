"""C4 · Model output parsing — TypeScript/JavaScript rules.

Shapes detected:
- `tool-arguments-parse-unguarded`: `JSON.parse` of model-produced JSON that no `try`/`.catch` on the path catches,
  in its function or in a caller up to two hops (a `catch` above the function that runs the turn does not count:
  the turn is already lost). Model JSON is a tool call's arguments, whole or accumulated from stream fragments
  (`block.json += delta.partial_json`, `buf += ...`, `pending.get(i)`), or the text of a model reply however it was
  reshaped (`String(x)`, `.trim()`, `.replace(fence)`, `?? "{}"`, `stripFences(x)`) and whichever SDK produced it
  (`generateText` / `streamText` `.text`, `@openai/agents` `run().finalOutput`, `messages.create().content[0].text`,
  `choices[0].message.content`, LangChain `invoke().content`, Gemini `response.text()`, Ollama, Claude Agent SDK
  `query()` results), here or handed to a helper by its callers.
- `stream-end-commits-partial-calls`: streamed tool-call argument fragments are accumulated (in the loop over the
  stream, or in a handler registered per event: `stream.on("chunk", ...)`, `createParser({ onEvent })`) and nothing
  in the project compares `finish_reason` / `stop_reason` / `finishReason` with `length` / `max_tokens` (or with the
  tool-call stop value), so a stream cut off by the token limit yields "complete" calls.
- `tool-arguments-parse-error-ends-run`: `JSON.parse` of a call's arguments inside a loop over the calls, in a `try`
  whose `catch` returns or breaks out of the loop without a result for the call.
- `stream-eof-taken-as-complete`: a hand-written stream reader that knows the terminal marker (`[DONE]`,
  `message_stop`) ends quietly when the body ends without it (`if (done) return`, or a `for await` over the raw
  body whose end is never compared with the marker).
- `tool-delta-indexed-array`: streamed fragments placed with `calls[delta.index]` into an array that is walked
  (an array only ever read and written at an index is a map in all but name).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from harness_audit.findings import CheckId, Verdict
from harness_audit.static.lang.typescript import FUNCTION_TYPES, TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts._agent_idioms import is_test_module
from harness_audit.static.rules_ts._ts_idioms import cached

_PARSE_BYTES = {b"JSON.parse", b"JSON5.parse", b"json5.parse", b"secureJsonParse", b"sjson.parse"}
_MODEL_JSON = re.compile(
    r"\.arguments\b|\[['\"`]arguments['\"`]\]|partial_?json|partialJson|input_?json\b|inputJson"
    r"|choices\[\d+\]\.message\.content|\.output_?text\b|\boutputText\b|\.content\[\d+\]\.text\b"
    r"|\b(arguments|args)_?(json|str|string|text|raw|buffer|buf)\b|\braw_?(arguments|args)\b|\btool_?(arguments|args)\b"
    r"|\bfunction_?args\b",
    re.I)
"""Text that says a value is the model's own JSON: tool-call arguments, a streamed input fragment, a JSON reply."""
_MODEL_JSON_PARAMS = re.compile(
    r"^(argsJson|argumentsJson|args_json|arguments_json|rawArgs|rawArguments|raw_args|raw_arguments|argsStr|"
    r"argsString|argumentsString|argumentsText|toolArguments|tool_arguments|functionArgs|function_args|"
    r"partialJson|inputJson|input_json)$")
_DRIVES = re.compile(
    r"tool_?calls|toolCalls|tool_use|function_call|chat\.completions\.(create|stream)|messages\.(create|stream)|"
    r"responses\.(create|stream)|\bstreamText\b|\bgenerateText\b|for\s+await\b")
"""Text of a function that is the turn itself: an error escaping it ends the agent's run."""


def _norm(text: str) -> str:
    """Optional chaining and non-null assertions read as plain access (`a?.b!.c` -> `a.b.c`)."""
    return text.replace("?.[", "[").replace("?.", ".").replace("!.", ".").replace("![", "[")


_MODEL_REPLY = re.compile(r"chat\.completions\.(create|parse)|messages\.create|responses\.create|\bgenerateText\s*\(|"
                          r"\.(invoke|complete|completion|generate|generateContent|sendMessage)\s*\(")
"""A model request in a value's derivation: its `.text`/`.content` is the model's reply."""
_MODEL_HTTP = re.compile(r"chat/completions|/v1/messages\b|/api/(chat|generate)\b|:generateContent\b|"
                         r"generativelanguage\.googleapis")
"""A hand-written request to a model endpoint in a value's derivation."""
_REPLY_TEXT = re.compile(r"\.(text|content|output_?text|outputText)\s*(\?\?.*)?$", re.S)
_REPLY_NAME = re.compile(r"(text|content|output(_?text)?|outputText|reply|answer|raw|json|completion|response_?text)",
                         re.I)


_CALL_ARGS = re.compile(r"^\(?\s*(\w*[cC]all|tc|fc|\w*[tT]oolUse|block)\.(args|argsText|argumentsText|input_?json)\b")
"""`call.args || "{}"`: the raw argument text a harness keeps on its own pending-call record (a decoded `args` object
is never handed to `JSON.parse`)."""


def _is_model_json(mod: TsModule, fn: Node | None, arg: Node, project: TsProject | None = None) -> bool:
    """Whether a parser's argument is the model's own JSON: tool-call arguments (whole or accumulated from stream
    fragments) or the text of a model reply, reshaped or not, here or (one hop) in the callers of a helper."""
    if arg.type == "call_expression" and mod.call_name(arg) == "JSON.stringify":
        return False  # a round trip of a value already decoded
    if arg.type == "identifier" and fn is not None and mod.node_text(arg) in mod.params(fn) \
            and _MODEL_JSON_PARAMS.match(mod.node_text(arg)):
        return True
    if _CALL_ARGS.match(_norm(mod.node_text(arg))):
        return True
    derivation = _norm(mod.derivation_text(fn, arg))
    if _MODEL_JSON.search(derivation):
        return True
    # `const { text } = await generateText(...)`, `(await llm.invoke(p)).content`: the reply of a model request
    if _MODEL_REPLY.search(derivation):
        arg_text = _norm(mod.node_text(arg)).strip()
        if _REPLY_TEXT.search(arg_text) or _REPLY_NAME.fullmatch(arg_text):
            return True
    # a raw HTTP call to a model endpoint: `(await r.json()).candidates[0].content.parts[0].text`, `body.message.content`
    if _raw_reply(mod, fn, arg):
        return True
    core = _reply_core(mod, fn, arg)
    if core is None:
        return False
    return _accumulated_fragment(mod, fn, core) or _model_reply_value(mod, fn, core, 3) or \
        _param_fed_reply(project, mod, fn, core)


# ---------------------------------------------------------------- what a model reply looks like on its way to a parser
_TEXT_METHODS = {"trim", "trimStart", "trimEnd", "replace", "replaceAll", "slice", "substring", "substr", "toString",
                 "normalize", "at"}
"""String methods that reshape text without making it valid JSON (`reply.trim()`, `text.replace(fence, "")`)."""
_CLEANER_NAME = re.compile(r"strip|clean|fence|extract|sanitiz|unwrap|trim|repair|json|first|between|code_?block",
                           re.I)
"""A local helper that peels the JSON out of a reply (`stripFences(text)`, `extractJson(raw)`)."""


def _reply_core(mod: TsModule, fn: Node | None, arg: Node) -> Node | None:
    """The value a parser's argument reshapes: `String(x)`, `x.trim()`, `x.replace(..)`, `x ?? "{}"`, `x as string`,
    `` `${x}` ``, `stripFences(x)`, `c ? x : ""` all come down to `x`. None for `JSON.stringify(...)` (a round trip of
    a value already decoded cannot fail) and for anything that is not an expression over one value."""
    cur: Node | None = arg
    for _ in range(8):
        if cur is None:
            return None
        kind = cur.type
        if kind in ("parenthesized_expression", "non_null_expression", "as_expression", "satisfies_expression",
                    "type_assertion", "await_expression"):
            cur = next((c for c in cur.named_children if c.type not in ("type_annotation", "type_identifier",
                                                                       "predefined_type", "generic_type",
                                                                       "object_type", "type_arguments")), None)
            continue
        if kind == "binary_expression":
            op = cur.child_by_field_name("operator")
            if op is None or mod.node_text(op) not in ("??", "||"):
                return cur
            cur = cur.child_by_field_name("left")
            continue
        if kind == "ternary_expression":
            branches = [cur.child_by_field_name("consequence"), cur.child_by_field_name("alternative")]
            live = [b for b in branches if b is not None and b.type not in ("string", "template_string", "null",
                                                                               "undefined", "object", "array")]
            if len(live) != 1:
                return cur
            cur = live[0]
            continue
        if kind == "template_string":
            subs = [c for c in cur.named_children if c.type == "template_substitution"]
            if len(subs) != 1 or not subs[0].named_children:
                return cur
            cur = subs[0].named_children[0]
            continue
        if kind == "call_expression":
            callee = cur.child_by_field_name("function")
            args = mod.arguments(cur)
            name = mod.node_text(callee) if callee is not None else ""
            if name == "JSON.stringify":
                return None
            if callee is not None and callee.type == "member_expression":
                prop = mod.node_text(callee.child_by_field_name("property"))
                if prop in _TEXT_METHODS:
                    cur = callee.child_by_field_name("object")
                    continue
                return cur
            if callee is not None and callee.type == "identifier" and len(args) >= 1 and (
                    name == "String" or _CLEANER_NAME.search(name)):
                cur = args[0]
                continue
            return cur
        return cur
    return cur


_REPLY_PROPS = {"text", "content", "finalOutput", "final_output", "output_text", "outputText", "output", "response",
                "completion", "message", "result", "answer", "reply", "generated_text", "generatedText"}
"""Where an SDK's reply keeps the model's text (`generateText().text`, `run().finalOutput`, `invoke().content`,
`ollama.generate().response`, `choices[0].message.content`, `content[0].text`)."""
_MODEL_REQUEST = re.compile(
    r"chat\.completions\.(create|parse|stream)\b|\bmessages\.(create|stream)\s*\(|\bresponses\.(create|parse)\s*\(|"
    r"\b(generateText|streamText)\s*\(|\bollama\.(chat|generate)\s*\(|\.generateContent\s*\(|"
    r"\.sendMessage\s*\(\s*\{?\s*(message|parts|content)\b|"
    r"\b\w*(llm|model|agent|chain|runner|chat)\w*\.(invoke|generate|complete|run|call|predict|chat)\s*\(",
    re.I)
"""A request to a model in a value's text: an SDK call, a Vercel `ai` call, a LangChain/Mastra/agents `invoke` /
`generate` / `run` on an llm, model, agent, chain or runner."""


def _agent_runners(mod: TsModule) -> re.Pattern[str] | None:
    """`run(agent, input)` of `@openai/agents` (and the like), under whatever local name it was imported."""
    def build() -> re.Pattern[str] | None:
        names = [local for local, origin in mod.imports().items()
                 if re.match(r"@openai/agents|@mastra/|llamaindex|@langchain/|@anthropic-ai/claude-(agent-sdk|code)",
                             origin)
                 and origin.rsplit("#", 1)[-1] in ("run", "invoke", "generate", "query")]
        return re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\s*\(") if names else None
    return cached(mod, "c04-agent-runners", build)


def _requests_model(mod: TsModule, node: Node) -> bool:
    text = _norm(mod.node_text(node))[:600]
    if _MODEL_REQUEST.search(text):
        return True
    runners = _agent_runners(mod)
    return runners is not None and bool(runners.search(text))


def _model_reply_value(mod: TsModule, fn: Node | None, expr: Node, depth: int) -> bool:
    """Whether `expr` is the text of a model's reply: a reply field (`.text`, `.content`, `.finalOutput`,
    `choices[0].message.content`, ...) of a value that comes from a model request, or a name bound to one
    (`const { text } = await generateText(...)`), following local bindings `depth` hops."""
    if depth <= 0:
        return False
    expr = _reply_core(mod, fn, expr) or expr
    if expr.type == "call_expression" and not mod.arguments(expr):
        callee = expr.child_by_field_name("function")
        if callee is not None and callee.type == "member_expression" and \
                mod.node_text(callee.child_by_field_name("property")) == "text":
            expr = callee  # Gemini's `result.response.text()`: the reply text behind an accessor
    if expr.type in ("member_expression", "subscript_expression"):
        obj = expr.child_by_field_name("object")
        prop = expr.child_by_field_name("property") if expr.type == "member_expression" else None
        if prop is None or mod.node_text(prop) not in _REPLY_PROPS or obj is None:
            return False
        # walk to the root of `res.choices[0].message` / `(await llm.invoke(p))` and ask whether it is a reply
        root: Node | None = obj
        while root is not None and root.type in ("member_expression", "subscript_expression"):
            root = root.child_by_field_name("object")
        root = _reply_core(mod, fn, root) if root is not None else None
        if root is None:
            return False
        if root.type == "call_expression":
            return _requests_model(mod, root)
        if root.type == "identifier":
            return any(_requests_model(mod, v) or _model_reply_object(mod, fn, v, depth - 1)
                       for v in _values_of(mod, fn, root))
        return False
    if expr.type == "identifier":
        name = mod.node_text(expr)
        for value in _values_of(mod, fn, expr):
            core = _reply_core(mod, fn, value) or value
            if core.type == "call_expression" and _requests_model(mod, core):
                # `const { text } = await generateText(...)`: the name is the reply field
                if _destructured_key(mod, value, name) in _REPLY_PROPS:
                    return True
                continue
            if _model_reply_value(mod, fn, core, depth - 1):
                return True
    return False


def _values_of(mod: TsModule, fn: Node | None, ident: Node) -> list[Node]:
    """The values a name is bound to, looking out from `fn` through the functions around it (a `.then` or `map`
    callback reads its outer function's locals), or the iterable of a `for (const x of ...)` that declares it."""
    name = mod.node_text(ident)
    scope = fn
    for _ in range(6):
        values = mod.bindings(scope).get(name)
        if values:
            return values
        if scope is None:
            break
        scope = mod.enclosing_function(scope)
    for anc in mod.ancestors(ident):
        if anc.type == "for_in_statement":
            left, right = anc.child_by_field_name("left"), anc.child_by_field_name("right")
            if left is not None and right is not None and \
                    any(mod.node_text(n) == name for n in ([left] if left.type == "identifier"
                                                            else mod.pattern_names(left))):
                return [right]
    return []


def _destructured_key(mod: TsModule, value: Node, name: str) -> str | None:
    """The property `name` is destructured from when a pattern binds it to `value` (`const { text: reply } = ...`
    -> "text"); None when `name` is not bound by an object pattern over `value`."""
    decl = value.parent
    target = decl.child_by_field_name("name") if decl is not None and decl.type == "variable_declarator" else None
    if target is None or target.type != "object_pattern":
        return None
    for part in target.named_children:
        if part.type == "shorthand_property_identifier_pattern" and mod.node_text(part) == name:
            return name
        if part.type == "pair_pattern":
            key, val = part.child_by_field_name("key"), part.child_by_field_name("value")
            if val is not None and any(mod.node_text(n) == name for n in mod.pattern_names(val)):
                return mod.node_text(key) if key is not None else None
        if part.type == "object_assignment_pattern":
            left = part.child_by_field_name("left")
            if left is not None and mod.node_text(left) == name:
                return name
    return None


def _model_reply_object(mod: TsModule, fn: Node | None, value: Node, depth: int) -> bool:
    """`const msg = res.choices[0].message`, `const block = reply.content[0]`: a part of a model reply kept in a
    local (its `.content` / `.text` is the reply text)."""
    if depth <= 0:
        return False
    core = _reply_core(mod, fn, value) or value
    root: Node | None = core
    while root is not None and root.type in ("member_expression", "subscript_expression"):
        root = root.child_by_field_name("object")
    if root is None or root is core:
        return False
    root = _reply_core(mod, fn, root) or root
    if root.type == "call_expression":
        return _requests_model(mod, root)
    if root.type == "identifier":
        return any(_requests_model(mod, v) for v in _values_of(mod, fn, root))
    return False


def _fragment_targets(mod: TsModule) -> tuple[frozenset[str], frozenset[tuple[int, str]]]:
    """Where streamed tool-call argument fragments are accumulated: property names (`block.json +=
    event.delta.partial_json`, `acc["args"] += ...`) and (function, local) pairs (`buf += delta.partial_json`,
    `pending.set(i, (pending.get(i) ?? "") + tc.function.arguments)`)."""
    def build() -> tuple[frozenset[str], frozenset[tuple[int, str]]]:
        props: set[str] = set()
        locals_: set[tuple[int, str]] = set()
        for site, target in _fragment_sites(mod):
            if target.type == "member_expression":
                props.add(mod.node_text(target.child_by_field_name("property")))
            elif target.type == "subscript_expression":
                index = target.child_by_field_name("index")
                value = mod.string_value(index) if index is not None else None
                if value:
                    props.add(value)
                obj = target.child_by_field_name("object")
                if obj is not None and obj.type == "identifier":  # `parts[i] += ...`: the container holds them
                    fn = mod.enclosing_function(site)
                    locals_.add((fn.id if fn is not None else 0, mod.node_text(obj)))
                elif obj is not None and obj.type == "member_expression":  # `this.buffers[i] += ...`
                    props.add(mod.node_text(obj.child_by_field_name("property")))
            elif target.type == "identifier":
                fn = mod.enclosing_function(site)
                locals_.add((fn.id if fn is not None else 0, mod.node_text(target)))
        return frozenset(props), frozenset(locals_)
    if not _has_fragments(mod):
        return frozenset(), frozenset()
    return cached(mod, "c04-fragment-targets", build)


def _accumulated_fragment(mod: TsModule, fn: Node | None, core: Node) -> bool:
    """`JSON.parse(b.json)`, `JSON.parse(buf)`, `JSON.parse(parts[i])`, `JSON.parse(pending.get(i))` where the
    module accumulates streamed tool-call argument fragments into `.json`, `buf`, `parts` or `pending`."""
    props, locals_ = _fragment_targets(mod)
    if not props and not locals_:
        return False
    if core.type == "member_expression":
        return mod.node_text(core.child_by_field_name("property")) in props
    if core.type == "subscript_expression":
        obj = core.child_by_field_name("object")
        if obj is not None and obj.type == "member_expression" and \
                mod.node_text(obj.child_by_field_name("property")) in props:
            return True
    holder: Node | None = None
    if core.type == "identifier" and props and _destructured_entry_key(mod, core) in props:
        return True  # `for (const { json } of entries.values())`: the accumulated field of each entry
    if core.type == "identifier":
        holder = core
    elif core.type == "subscript_expression":
        holder = core.child_by_field_name("object")
    elif core.type == "call_expression":
        callee = core.child_by_field_name("function")
        if callee is not None and callee.type == "member_expression" and \
                mod.node_text(callee.child_by_field_name("property")) == "get":
            holder = callee.child_by_field_name("object")
    if holder is None or holder.type != "identifier":
        return False
    scope = fn
    while scope is not None and mod.iteration_callback(scope):
        scope = mod.enclosing_function(scope)
    return (scope.id if scope is not None else 0, mod.node_text(holder)) in locals_ or \
        (fn.id if fn is not None else 0, mod.node_text(holder)) in locals_


def _destructured_entry_key(mod: TsModule, ident: Node) -> str | None:
    """The property a loop variable is destructured from (`for (const { args: raw } of pending)` -> "args"), or
    from a local bound in its function (`const { json } = entry`); None otherwise."""
    name = mod.node_text(ident)
    for anc in mod.ancestors(ident):
        if anc.type in FUNCTION_TYPES:
            break
        if anc.type == "for_in_statement":
            left = anc.child_by_field_name("left")
            if left is not None and left.type == "object_pattern":
                for part in left.named_children:
                    if part.type == "shorthand_property_identifier_pattern" and mod.node_text(part) == name:
                        return name
                    if part.type == "pair_pattern":
                        key, val = part.child_by_field_name("key"), part.child_by_field_name("value")
                        if val is not None and mod.node_text(val) == name and key is not None:
                            return mod.node_text(key)
    for value in mod.bindings(mod.enclosing_function(ident)).get(name, []):
        key = _destructured_key(mod, value, name)
        if key is not None:
            return key
    return None


_HELPER_LINES = 40
"""A parsing helper is small; a long function's parameter is its own business."""


def _param_fed_reply(project: TsProject | None, mod: TsModule, fn: Node | None, core: Node) -> bool:
    """`function extractJson(raw) { return JSON.parse(raw.slice(...)) }` whose callers hand it a model reply or
    tool-call arguments (one hop: the callers' own arguments are judged by the local rules only)."""
    if project is None or fn is None or core.type != "identifier" or mod.end_line(fn) - mod.line(fn) > _HELPER_LINES:
        return False
    name = mod.node_text(core)
    params = list(mod.params(fn))
    if name not in params or mod.bindings(fn).get(name):
        return False
    index = params.index(name)
    for cmod, call in project.callers_of(mod, fn):
        args = cmod.arguments(call)
        if len(args) > index and args[index].type != "spread_element" and \
                _is_model_json(cmod, cmod.enclosing_function(call), args[index]):
            return True
    return False


def _drives_tool_calls(mod: TsModule, fn: Node | None) -> bool:
    return fn is None or bool(_DRIVES.search(mod.node_text(fn)))


def _part_of_turn(mod: TsModule, fn: Node) -> bool:
    """Whether `fn` is (part of) the turn: it drives the tool calls or itself requests a model (`run(agent, ...)`,
    `llm.invoke`, `models.generateContent`). An error escaping it ends the user's turn."""
    text = mod.node_text(fn)
    if _DRIVES.search(text) or _MODEL_REQUEST.search(_norm(text)):
        return True
    runners = _agent_runners(mod)
    return runners is not None and bool(runners.search(text))


def _caller_handles(project: TsProject, mod: TsModule, fn: Node, depth: int = 2) -> bool | None:
    """True when a caller (up to `depth` hops) catches the error; False when every caller lets it reach a function
    that drives the tool calls; None when no caller is visible or a chain ends elsewhere."""
    callers = project.callers_of(mod, fn)
    if not callers:
        return None
    result: bool | None = False
    for cmod, call in callers:
        cfn = cmod.enclosing_function(call)
        if cfn is None:
            # `main().catch((e) => { log(e); process.exit(1) })` at module level: the program's crash handler,
            # reached only after the run is lost
            continue
        if cmod.guarded(call):
            return True
        if _part_of_turn(cmod, cfn) and not cmod.iteration_callback(cfn):
            # the error leaves the turn itself here: a `catch` further up (the request handler, the REPL) only
            # learns that the whole turn failed
            continue
        if depth > 1:
            upper = _caller_handles(project, cmod, cfn, depth - 1)
            if upper:
                return True
            if upper is None and not _drives_tool_calls(cmod, cfn):
                result = None
        elif not _drives_tool_calls(cmod, cfn):
            result = None
    return result


def _method_calls_guarded(project: TsProject, mod: TsModule, fn: Node) -> bool:
    """For a method no caller resolves to (`block.put(msgs)` on an object of unknown type): whether the calls of
    that method name on another object in this module and its importers exist and every one sits in a `try` (or a
    `.catch`). Then the error becomes a handled outcome on each path that can reach the method. A test module's
    calls are not a path a run takes."""
    if fn.type != "method_definition":
        return False
    name = mod.function_name(fn)
    if name == "<anonymous>":
        return False
    found = False
    for other in (mod, *project.importers(mod)):
        if other is not mod and is_test_module(other):
            continue
        for call in project.calls_in(other, name):
            receiver = other.call_name(call).rpartition(".")[0]
            if not receiver or receiver in ("this", "super") or (other is mod and mod.within(call, fn)):
                continue
            if not other.guarded(call):
                return False
            found = True
    return found


def _strict_schema_only(mod: TsModule, call: Node) -> bool:
    """`tool.strict ? JSON.parse(call.arguments) : null`: arguments decoded only for tools declared `strict`, whose
    arguments the provider's constrained decoding makes schema-valid JSON."""
    child = call
    for anc in mod.ancestors(call):
        if anc.type in FUNCTION_TYPES:
            return False
        if anc.type in ("ternary_expression", "if_statement"):
            cond, then = anc.child_by_field_name("condition"), anc.child_by_field_name("consequence")
            if cond is not None and then is not None and then.id == child.id and \
                    re.search(r"(?<![!\w])[\w$?.]*\bstrict\b", mod.node_text(cond)) and "!" not in mod.node_text(cond):
                return True
        child = anc
    return False


@rule(CheckId.C4, lang="typescript", name="tool-arguments-parse-unguarded")
def tool_arguments_parse_unguarded(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags `JSON.parse` of a tool call's arguments (or the model's JSON reply) that no `try`/`.catch` catches,
    neither in its function nor in a caller two hops up. Malformed arguments are routine model output; the
    `SyntaxError` ends the whole run instead of becoming an error result the model can react to."""
    if "parse" not in mod.text:
        return
    for call in mod.calls():
        callee = call.child_by_field_name("function")
        if callee is None or callee.end_byte - callee.start_byte > 16 or \
                mod.source[callee.start_byte:callee.end_byte] not in _PARSE_BYTES:
            continue
        args = mod.arguments(call)
        if not args:
            continue
        fn = mod.enclosing_function(call)
        if not _is_model_json(mod, fn, args[0], project) or mod.guarded(call) or _strict_schema_only(mod, call):
            continue
        while fn is not None and mod.iteration_callback(fn):
            fn = mod.enclosing_function(fn)  # a `calls.map((c) => JSON.parse(...))` callback fails its caller
        decoded = mod.node_text(args[0])[:80]
        handled = _caller_handles(project, mod, fn) if fn is not None else None
        if handled:
            continue
        if handled is None and fn is not None and not _drives_tool_calls(mod, fn) and \
                _method_calls_guarded(project, mod, fn):
            continue  # a helper method (not the turn itself) whose every call site catches
        reply = _is_reply_text(mod, mod.enclosing_function(call), args[0])
        if reply:
            what = "the model's reply"
            bad = "a reply that is not clean JSON (prose, a ```json fence, a cut-off object)"
            fix = ("wrap the parse in `try/catch` (or use a schema-validated structured output) and handle an "
                   "unreadable reply: retry the request, fall back, or report it")
        else:
            what = "a tool call's arguments"
            bad = "a tool call with malformed or truncated JSON arguments"
            fix = ("wrap the parse in `try/catch` and answer the call with an error tool result (\"invalid JSON "
                   "arguments: ...\") so the model can retry")
        if handled is None and not _drives_tool_calls(mod, fn):
            assert fn is not None  # module level drives the calls
            fname = mod.function_name(fn)
            yield Hit(
                node=call, verdict=Verdict.SUSPECTED,
                claim=f"`JSON.parse({decoded})` decodes {what} with no `try` in `{fname}`",
                consequence=f"{bad} throws out of `{fname}` unless a caller catches it",
                direction=fix,
                confirm_hint=f"verify that every caller of `{fname}` catches the `SyntaxError` around the call",
            )
            continue
        yield Hit(
            node=call,
            claim=f"`JSON.parse({decoded})` decodes {what} and no `try`/`.catch` on the path catches a `SyntaxError`",
            consequence=f"{bad} throws out of the turn: the agent loop (or the user's request) fails instead of "
                        "handling it",
            direction=fix,
        )


def _raw_reply(mod: TsModule, fn: Node | None, arg: Node) -> bool:
    """The text of a reply fetched by hand from a model endpoint (`data.candidates[0].content.parts[0].text`,
    `body.message.content` after a `fetch` to `/api/chat`)."""
    if not re.search(r"\]\.text$|\bmessage\.content$", _norm(mod.node_text(arg)).strip()) or \
            not _MODEL_HTTP.search(mod.text):
        return False
    derivation = _norm(mod.derivation_text(fn, arg))
    # the endpoint may sit in a module constant (`fetch(`${GEMINI_URL}?key=…`)`)
    return bool(_MODEL_HTTP.search(derivation) or re.search(r"\b(fetch|post|request|got|ky|axios)\s*(\.\w+)?\(",
                                                             derivation))


def _is_reply_text(mod: TsModule, fn: Node | None, arg: Node) -> bool:
    """Whether the parsed value is a model's text reply (not tool-call arguments)."""
    if _raw_reply(mod, fn, arg):
        return True
    if _MODEL_JSON.search(_norm(mod.node_text(arg))) and not re.search(r"message\.content|output_?text|outputText|"
                                                                       r"content\[\d+\]\.text", mod.node_text(arg)):
        return False
    core = _reply_core(mod, fn, arg)
    if core is None or _accumulated_fragment(mod, fn, core):
        return False
    return _model_reply_value(mod, fn, core, 3) or bool(_MODEL_REPLY.search(_norm(mod.derivation_text(fn, arg))))


def _parse_calls(mod: TsModule) -> Iterator[Node]:
    """`JSON.parse(...)` calls whose argument is model JSON."""
    for call in mod.calls():
        callee = call.child_by_field_name("function")
        if callee is None or callee.end_byte - callee.start_byte > 16 or \
                mod.source[callee.start_byte:callee.end_byte] not in _PARSE_BYTES:
            continue
        args = mod.arguments(call)
        fn = mod.enclosing_function(call)
        if args and _is_model_json(mod, fn, args[0]):
            yield call


_RECORDS = re.compile(r"\.(push|set|unshift|append|write|emit\w*Result|addToolResult)\s*\(|\byield\b|\w+\[[^\]]+\]\s*=[^=]")
"""A catch that records something for the call (a result message, a map entry, a yielded value)."""


_CALL_LOOP = re.compile(r"tool_?calls?\b|toolCalls?\b|tool_?uses?\b|toolUses?\b|function_?calls?\b|functionCalls?\b|"
                        r"\bcalls\b")
"""The head of a loop over a reply's tool calls."""


def _ends_batch(handler: Node) -> Node | None:
    """The statement of a `catch` that leaves the batch: a `return` (of the whole function) or a `break` out of
    the loop around the `try`, as one of the clause's own statements."""
    body = handler.child_by_field_name("body")
    for stmt in body.named_children if body is not None else []:
        if stmt.type == "return_statement":
            return stmt
        if stmt.type == "break_statement" and not stmt.named_child_count:
            return stmt
    return None


@rule(CheckId.C4, lang="typescript", name="tool-arguments-parse-error-ends-run")
def tool_arguments_parse_error_ends_run(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags `JSON.parse` of a tool call's arguments inside a loop over the calls, in a `try` whose `catch` leaves
    the loop (`return` / `break`) without recording a result for the call. The parse error is caught, but as the
    end of the whole turn: the malformed call and every call after it get no answer the model could react to."""
    if "parse" not in mod.text or "catch" not in mod.text:
        return
    for call in _parse_calls(mod):
        trys = mod.enclosing_trys(call)
        tr = next((t for t, part in trys if part == "body"), None)
        if tr is None:
            continue
        handler = tr.child_by_field_name("handler")
        outside = next((loop for loop in mod.enclosing_loops(call) if mod.within(loop, tr)), None)
        if handler is None or not (outside or mod.enclosing_loops(tr)) or mod.rethrows(handler):
            continue
        if _RECORDS.search(mod.node_text(handler)):
            continue
        # the only `try` sits outside the loop over the calls: its `catch` has already left the loop
        if outside is not None:
            if _is_reply_text(mod, mod.enclosing_function(call), mod.arguments(call)[0]) or \
                    not _CALL_LOOP.search(mod.node_text(outside)[:300]):
                continue
            exit_stmt = handler
            how = f"sits outside the loop of line {mod.line(outside)}"
        else:
            exit_stmt = _ends_batch(handler)
            if exit_stmt is None:
                continue
            how = "returns from the function" if exit_stmt.type == "return_statement" else "breaks out of the loop"
        yield Hit(
            node=call,
            claim=f"a malformed `{mod.node_text(mod.arguments(call)[0])[:60]}` is caught by a `catch` that "
                  f"{how} (line {mod.line(exit_stmt)}) instead of answering this call",
            consequence="one tool call with malformed JSON arguments ends the whole turn: it and the calls after it "
                        "get no result, and the model never learns what was wrong",
            direction="catch the parse error per call and record an error tool result (\"invalid JSON arguments: "
                      "...\") for that call id, then go on with the next call",
        )


# ---------------------------------------------------------------- streamed fragments
_STREAM_WORDS = re.compile(r"\b(delta|deltas|chunk|chunks|partial_json|content_block_delta|stream|for\s+await)\b")
_FINISH_TEXT = re.compile(r"finish_?reason|stop_?reason|finishReason|stopReason|done_?reason|doneReason|"
                          r"incomplete_details|\.status\b", re.I)
"""How a reply's finish reason is spelled: OpenAI `finish_reason`, Anthropic `stop_reason`, Bedrock `stopReason`,
Gemini / Vercel AI `finishReason`, Ollama `done_reason`, Responses `incomplete_details` / `status`."""
_REASON_WORD = re.compile(r"(?i:reason)")
_STATUS_WORD = re.compile(r"\.status\b")


def _mentions_finish(text: str) -> bool:
    """`_FINISH_TEXT.search(text)` for a whole module, without running a case-blind alternation over every position:
    only the few `reason`s are tested with the text just before them."""
    low = text.lower()
    if "incomplete_details" in low or (".status" in low and _STATUS_WORD.search(low)):
        return True
    return any(_FINISH_TEXT.search(text, max(0, m.start() - 8), m.end()) for m in _REASON_WORD.finditer(text))
_END_VALUES = {"length", "max_tokens", "MAX_TOKENS", "max_output_tokens", "incomplete", "model_length",
               "tool_calls", "tool_use", "tool-calls", "function_call"}
"""Finish values whose comparison shows the stream's ending is checked (truncated, or ended on tool calls)."""
_TRUNCATION_ERRORS = re.compile(r"\b(LengthFinishReasonError|IncompleteToolCall\w*|MaxTokens\w*(Error|Exceeded)|"
                                r"\w*Truncat\w*(Error|Exception))\b")

_TRUNCATION_WORDS = (b"LengthFinishReason", b"IncompleteToolCall", b"MaxTokens", b"Truncat")
_PROJECT_MEMO: list[tuple[TsProject, bool]] = []


def _project_checks_ending(project: TsProject) -> bool:
    """Whether any module compares a finish/stop reason with a truncation or tool-call value (cached)."""
    if _PROJECT_MEMO and _PROJECT_MEMO[0][0] is project:
        return _PROJECT_MEMO[0][1]
    found = False
    for mod in project.modules.values():
        if any(word in mod.source for word in _TRUNCATION_WORDS) and _TRUNCATION_ERRORS.search(mod.text):
            found = True
            break
        if any(_compares_ending(mod, s) for s in _string_literals(mod)):
            found = True
            break
    _PROJECT_MEMO[:] = [(project, found)]
    return found


def _string_literals(mod: TsModule) -> Iterator[Node]:
    """String literals whose value is an ending value (found by searching the source for the quoted value)."""
    for value in _END_VALUES:
        raw = value.encode("utf-8")
        for quote in (b'"', b"'", b"`"):
            needle = quote + raw + quote
            start = 0
            while (at := mod.source.find(needle, start)) >= 0:
                start = at + len(needle)
                node = mod.tree.root_node.descendant_for_byte_range(at, at + len(needle))
                if node is not None and node.type == "string_fragment" and node.parent is not None:
                    node = node.parent
                if node is not None and mod.string_value(node) == value:
                    yield node


def _compares_ending(mod: TsModule, literal: Node) -> bool:
    """`reason === "length"`, `case "max_tokens":`, `["length", ...].includes(reason)` on a finish/stop reason."""
    parent = literal.parent
    if parent is None:
        return False
    if parent.type == "binary_expression" and re.search(r"[=!]=", mod.node_text(parent)):
        if _FINISH_TEXT.search(mod.node_text(parent)):
            return True
        other = parent.child_by_field_name("left")
        if other is not None and other.id == literal.id:
            other = parent.child_by_field_name("right")
        return other is not None and _holds_reason(mod, other)
    if parent.type == "switch_case":
        switch = next((a for a in mod.ancestors(parent) if a.type == "switch_statement"), None)
        value = switch.child_by_field_name("value") if switch is not None else None
        if value is not None and value.type == "parenthesized_expression" and value.named_children:
            value = value.named_children[0]
        return value is not None and (bool(_FINISH_TEXT.search(mod.node_text(value))) or _holds_reason(mod, value))
    if parent.type == "array":
        stmt = parent.parent
        return stmt is not None and bool(_FINISH_TEXT.search(mod.node_text(stmt)))
    return False


def _holds_reason(mod: TsModule, node: Node) -> bool:
    """A local (`finish`, `why`, `ending`) bound to a finish / stop reason (`finish = choice.finish_reason`)."""
    if node.type != "identifier":
        return False
    name = mod.node_text(node)
    fn = mod.enclosing_function(node)
    values = list(mod.bindings(fn).get(name, []))
    for assign in mod.inside(mod.nodes("assignment_expression"), fn if fn is not None else mod.tree.root_node):
        left = assign.child_by_field_name("left")  # set by a stream handler inside the function
        if left is not None and mod.node_text(left) == name and assign.child_by_field_name("right") is not None:
            values.append(assign.child_by_field_name("right"))
    return any(_FINISH_TEXT.search(mod.node_text(v)) for v in values)


def _root_name(mod: TsModule, node: Node) -> str | None:
    cur: Node | None = node
    while cur is not None and cur.type in ("member_expression", "subscript_expression", "call_expression",
                                           "non_null_expression", "parenthesized_expression"):
        field = "function" if cur.type == "call_expression" else "object"
        cur = cur.child_by_field_name(field) if cur.type not in ("non_null_expression", "parenthesized_expression") \
            else (cur.named_children[0] if cur.named_children else None)
    if cur is None or cur.type not in ("identifier", "this"):
        return None
    return mod.node_text(cur)


_FRAGMENT_WORDS = (".arguments", "'arguments'", '"arguments"', "partial_json", "partialJson", "argumentsDelta",
                   "arguments_delta", "TextDelta", "json_delta", "toolUse.input", "toolUse?.input")
"""How a streamed tool-call argument fragment is spelled (`delta.function.arguments`, `partial_json`, Bedrock
ConverseStream `contentBlockDelta.delta.toolUse.input`); searched with `in` and `find`, since a regex over every
module's whole text is slow."""


def _has_fragments(mod: TsModule) -> bool:
    return cached(mod, "c04-has-fragments", lambda: any(word in mod.text for word in _FRAGMENT_WORDS))


def _fragment_offsets(mod: TsModule) -> list[tuple[int, int]]:
    """Byte ranges of the fragment spellings in the source, in order."""
    out: list[tuple[int, int]] = []
    for word in _FRAGMENT_WORDS:
        raw = word.encode("utf-8")
        at = mod.source.find(raw)
        while at >= 0:
            out.append((at, at + len(raw)))
            at = mod.source.find(raw, at + len(raw))
    out.sort()
    return out
_SITE_METHODS = {"push", "set", "concat"}


def _fragment_sites(mod: TsModule) -> list[tuple[Node, Node]]:
    """(site, accumulator) where a tool-call argument fragment is added to an accumulator inside a loop of a
    streaming function (found from the fragment's text up to the statement that accumulates it)."""
    out: list[tuple[Node, Node]] = []
    seen: set[int] = set()
    streaming: dict[int, bool] = {}
    for start, end in _fragment_offsets(mod):
        node = mod.tree.root_node.descendant_for_byte_range(start, end)
        site: tuple[Node, Node] | None = None
        for _ in range(8):
            if node is None or node.type.endswith("_statement") or node.type in FUNCTION_TYPES:
                break
            site = _accumulation(mod, node)
            if site is not None:
                break
            node = node.parent
        if site is None or site[0].id in seen:
            continue
        seen.add(site[0].id)
        fn = mod.enclosing_function(site[0])
        if site[0].type == "call_expression" and not _delta_record(mod, fn, site[0], start):
            continue
        if not mod.enclosing_loops(site[0]) and _event_handler(mod, fn) is None:
            continue
        key = fn.id if fn is not None else 0
        if key not in streaming:
            streaming[key] = bool(_STREAM_WORDS.search(mod.node_text(fn) if fn is not None else mod.text))
        if streaming[key]:
            out.append(site)
    out.sort(key=lambda s: s[0].start_byte)
    return out


_HANDLER_REGISTRARS = {"on", "once", "addListener", "addEventListener", "subscribe", "prependListener"}
_HANDLER_KEY = re.compile(r"^on[A-Z_]?\w*$|^(handle\w*|next)$")


def _event_handler(mod: TsModule, fn: Node | None) -> Node | None:
    """The call that registers `fn` as a handler run once per stream event (`stream.on("streamEvent", fn)`,
    `source.addEventListener("message", fn)`, `createParser({ onEvent: fn })`, `{ onChunk(ev) { ... } }` handed to
    a call): the handler is the stream loop, written as a callback. None for any other function."""
    if fn is None or fn.type not in ("arrow_function", "function_expression", "function", "method_definition"):
        return None
    parent = fn.parent
    if parent is not None and parent.type == "arguments" and parent.parent is not None:
        call = parent.parent
        if call.type == "call_expression" and mod.call_name(call).rsplit(".", 1)[-1] in _HANDLER_REGISTRARS:
            return call
        return None
    key: Node | None = None
    if fn.type == "method_definition":
        key, obj = fn.child_by_field_name("name"), parent
    elif parent is not None and parent.type == "pair":
        key, obj = parent.child_by_field_name("key"), parent.parent
    else:
        return None
    if key is None or obj is None or obj.type != "object" or not _HANDLER_KEY.match(mod.node_text(key)):
        return None
    holder = obj.parent
    if holder is not None and holder.type == "arguments" and holder.parent is not None and \
            holder.parent.type in ("call_expression", "new_expression"):
        return holder.parent
    return None


def _site_scope(mod: TsModule, site: Node) -> tuple[Node | None, Node]:
    """(function, stream loop) of a fragment site: the site's own function and its outermost loop, or, for a site
    in an event handler, the function that registers the handler and the statement that registers it."""
    loops = mod.enclosing_loops(site)
    fn = mod.enclosing_function(site)
    call = _event_handler(mod, fn)
    if call is not None:
        return mod.enclosing_function(call), _statement(call)
    return fn, loops[-1] if loops else _statement(site)


def _drained_after(mod: TsModule, registration: Node) -> Node | None:
    """The first statement after a handler's registration that waits for the stream (`await stream.done()`,
    `for await (const buf of body)`): where the handler's accumulation is complete, or taken to be."""
    block = registration.parent
    if block is None:
        return None
    for stmt in block.named_children:
        if stmt.start_byte > registration.end_byte and re.search(r"\bawait\b", mod.node_text(stmt)):
            return stmt
    return None


_DELTA_SOURCE = re.compile(r"delta|chunk|event|partial|stream|\bev\b|\bfrag|\bpart\b", re.I)


def _param_sources(mod: TsModule, ident: Node) -> list[Node]:
    """What a parameter holds: for a callback's parameter (`choices.flatMap(({ message }) => ...)`) the collection it
    walks; for a function's parameter, the arguments its calls in this module pass at that position."""
    name = mod.node_text(ident)
    for owner in mod.ancestors(ident):
        if owner.type not in FUNCTION_TYPES:
            continue
        params = mod.params(owner)
        if name not in params:
            continue
        parent = owner.parent
        if parent is not None and parent.type == "arguments" and parent.parent is not None and \
                mod.iteration_callback(owner):
            callee = parent.parent.child_by_field_name("function")
            receiver = callee.child_by_field_name("object") if callee is not None and \
                callee.type == "member_expression" else None
            return [receiver] if receiver is not None else []
        index = next((i for i, p in enumerate(owner.child_by_field_name("parameters").named_children)
                      if p == params[name]), None) if owner.child_by_field_name("parameters") is not None else None
        fname = mod.function_name(owner)
        if index is None or not fname or fname == "<anonymous>":
            return []
        out: list[Node] = []
        for call in mod.calls():
            if mod.call_name(call).rsplit(".", 1)[-1] == fname and len(mod.arguments(call)) > index:
                out.append(mod.arguments(call)[index])
        return out
    return []


def _delta_record(mod: TsModule, fn: Node | None, call: Node, at: int) -> bool:
    """For `calls.push({ ..., arguments: x.arguments })`: whether the record pushed is built from a streamed delta
    (its `x` comes from a delta, chunk or event), not a finished call copied into a result list."""
    frag = mod.tree.root_node.descendant_for_byte_range(at, at + 1)
    if frag is None or not any(a.type == "object" for a in mod.ancestors(frag) if mod.within(a, call)):
        return True  # the fragment itself is what is pushed or set
    while frag.type not in ("member_expression", "subscript_expression") and frag.parent is not None and \
            frag.parent != call:
        frag = frag.parent
    while frag.type in ("member_expression", "subscript_expression", "non_null_expression"):
        inner = frag.child_by_field_name("object") if frag.type != "non_null_expression" else \
            (frag.named_children[0] if frag.named_children else None)
        if inner is None:
            break
        frag = inner
    text = mod.node_text(frag)
    if _DELTA_SOURCE.search(text):
        return True
    if frag.type != "identifier":
        return False
    seen = {text}
    frontier = [frag]
    for _ in range(3):
        nxt: list[Node] = []
        for ident in frontier:
            values = _values_of(mod, fn, ident) or _param_sources(mod, ident)
            for value in values:
                if _DELTA_SOURCE.search(mod.node_text(value)):
                    return True
                root = _reply_core(mod, fn, value) or value  # `d.tool_calls ?? []` is `d.tool_calls`
                while root.type in ("member_expression", "subscript_expression", "call_expression"):
                    root = root.child_by_field_name("function" if root.type == "call_expression" else "object")
                    if root is None:
                        break
                if root is not None and root.type == "identifier" and mod.node_text(root) not in seen:
                    seen.add(mod.node_text(root))
                    nxt.append(root)
        frontier = nxt
    return False


def _accumulation(mod: TsModule, node: Node) -> tuple[Node, Node] | None:
    """(node, accumulator) when `node` adds its right side to an accumulator: `a += x`, `a = a + x`,
    `a.push(x)`, `m.set(k, x)`, `a.concat(x)`."""
    kind = node.type
    if kind == "augmented_assignment_expression":
        op = node.child_by_field_name("operator")
        target = node.child_by_field_name("left")
        return (node, target) if target is not None and (op is None or mod.node_text(op) == "+=") else None
    if kind == "assignment_expression":
        value = node.child_by_field_name("right")
        target = node.child_by_field_name("left")
        if target is not None and value is not None and value.type == "binary_expression" and \
                mod.node_text(value.child_by_field_name("operator")) == "+":
            return node, target
        return None
    if kind == "call_expression":
        callee = node.child_by_field_name("function")
        if callee is None or callee.type != "member_expression" or \
                mod.node_text(callee.child_by_field_name("property")) not in _SITE_METHODS:
            return None
        target = callee.child_by_field_name("object")
        return (node, target) if target is not None and mod.arguments(node) else None
    return None


def _accumulator_names(mod: TsModule, fn: Node | None, target: Node) -> set[str]:
    """The local names the fragments end up in: the accumulator's root and, for `const c = calls[i]`, `calls`."""
    names: set[str] = set()
    root = _root_name(mod, target)
    if root is not None:
        names.add(root)
    for name in list(names):
        for value in mod.bindings(fn).get(name, []):
            base = _root_name(mod, value)
            if base is not None and value.type in ("subscript_expression", "call_expression", "member_expression",
                                                   "non_null_expression", "binary_expression"):
                names.add(base)
            elif value.type == "binary_expression":
                left = value.child_by_field_name("left")
                base = _root_name(mod, left) if left is not None else None
                if base is not None:
                    names.add(base)
    # `calls.push(current)` / `byIndex.set(i, entry)`: the accumulating object lives in that container too
    scope = fn if fn is not None else mod.tree.root_node
    for call in mod.inside(mod.calls(), scope):
        callee = mod.call_name(call)
        if not callee.endswith((".push", ".set", ".unshift")):
            continue
        if any(a.type == "identifier" and mod.node_text(a) in names for a in mod.arguments(call)):
            fn_node = call.child_by_field_name("function")
            receiver = fn_node.child_by_field_name("object") if fn_node is not None else None
            base = _root_name(mod, receiver) if receiver is not None else None
            if base is not None:
                names.add(base)
    return names


def _statement(node: Node) -> Node:
    """The statement that contains `node` (the node itself when it is one)."""
    cur = node
    while cur.parent is not None and not cur.type.endswith(("_statement", "_declaration")) \
            and cur.parent.type not in ("statement_block", "program"):
        cur = cur.parent
    return cur


def _uses_after(mod: TsModule, fn: Node | None, names: set[str], after: Node) -> Node | None:
    """The first statement after `after` (in the same function) that reads one of `names`."""
    scope = fn if fn is not None else mod.tree.root_node
    best: Node | None = None
    stack = [scope]
    while stack:
        cur = stack.pop()
        if cur.end_byte <= after.end_byte:
            continue
        if cur.type in ("identifier", "this") and cur.start_byte > after.end_byte and mod.node_text(cur) in names:
            if best is None or cur.start_byte < best.start_byte:
                best = cur
            continue
        stack.extend(cur.named_children)
    return _statement(best) if best is not None else None


_LOG_SINK_PART = re.compile(r"(?i)logger|console|telemetry|tracer")
_LOG_SINK_LAST = re.compile(r"(?i)^(log\w*|debug|info|warn|trace|write(File|FileSync)?|append\w*)$")


def _log_sink(mod: TsModule, call: Node) -> bool:
    """`openaiLogger.logInteraction(req, x)`, `logger.debug(x)`, `fs.writeFile(path, x)`: a call that only records."""
    name = mod.call_name(call)
    parts = name.split(".")
    return bool(_LOG_SINK_LAST.match(parts[-1])) or any(_LOG_SINK_PART.search(p) for p in parts[:-1])


def _only_logged(project: TsProject, mod: TsModule, fn: Node | None) -> bool:
    """Whether everything `fn` builds only reaches a log: it has callers, and each caller passes the result straight
    to a logger or file writer (or keeps it in a local that only such calls read). Tool calls rebuilt for a log
    are never executed, so a truncated or misplaced call there corrupts nothing."""
    if fn is None:
        return False
    callers = project.callers_of(mod, fn)
    if not callers:
        return False
    for cmod, call in callers:
        node = call
        while node.parent is not None and node.parent.type in ("await_expression", "parenthesized_expression"):
            node = node.parent
        parent = node.parent
        if parent is not None and parent.type != "variable_declarator":
            if not _reaches_sink(cmod, node):
                return False
            continue
        if parent is None:
            return False
        name_node = parent.child_by_field_name("name")
        cfn = cmod.enclosing_function(call)
        if name_node is None or name_node.type != "identifier" or cfn is None:
            return False
        name = cmod.node_text(name_node)
        uses = [i for i in cmod.identifiers(cfn) if cmod.node_text(i) == name and i != name_node]
        if not uses:
            return False
        if not all(_reaches_sink(cmod, use) for use in uses):
            return False
    return True


_SINK_WRAPPERS = {"object", "pair", "array", "arguments", "template_string", "template_substitution", "spread_element",
                  "parenthesized_expression", "binary_expression", "await_expression"}


def _reaches_sink(mod: TsModule, node: Node) -> bool:
    """Whether `node` only feeds a log call, directly or wrapped in an object, array, template or `JSON.stringify`
    (`logger.debug({ request, merged })`, `appendFile(path, JSON.stringify(merged))`)."""
    cur = node
    while cur.parent is not None and cur.parent.type in _SINK_WRAPPERS | {"call_expression"}:
        cur = cur.parent
        if cur.type == "call_expression":
            if mod.call_name(cur) == "JSON.stringify":
                continue
            return _log_sink(mod, cur)
    return False


@rule(CheckId.C4, lang="typescript", name="stream-end-commits-partial-calls")
def stream_end_commits_partial_calls(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags streamed tool-call fragments accumulated into calls when nothing in the project compares the finish or
    stop reason with `length` / `max_tokens` (or with the tool-call stop value). A stream cut off by the token limit
    yields calls whose arguments are truncated, and they are executed or stored as if complete."""
    if not _has_fragments(mod) or _project_checks_ending(project):
        return
    seen: set[int] = set()
    for site, target in _fragment_sites(mod):
        fn, loop = _site_scope(mod, site)
        key = fn.id if fn is not None else 0
        if key in seen:
            continue
        seen.add(key)
        names = _accumulator_names(mod, mod.enclosing_function(site), target)
        if "this" in names:
            # fragments kept in object state are committed by whoever reads that state later
            continue
        if _only_logged(project, mod, fn):
            continue  # calls rebuilt only for a log are never executed
        handler = _event_handler(mod, mod.enclosing_function(site)) is not None
        drained = _drained_after(mod, loop) if handler else None
        if handler and drained is None:
            continue  # the handler's stream is consumed elsewhere: its end is not seen here
        cited = drained or _uses_after(mod, fn, names, loop) or _statement(site)
        fname = mod.function_name(fn) if fn is not None else "the module"
        if _mentions_finish(mod.node_text(fn) if fn is not None else mod.text):
            yield Hit(
                node=cited, verdict=Verdict.SUSPECTED,
                claim=f"`{fname}` accumulates streamed tool-call arguments and reads the finish reason, but nothing "
                      "compares it with `length`/`max_tokens`",
                consequence="a stream cut off by the token limit yields tool calls with truncated arguments that are "
                            "executed as if complete",
                direction="when the finish reason is `length` (or the stop reason `max_tokens`), discard the "
                          "accumulated calls and retry or report the truncation",
                confirm_hint=f"verify whether the finish reason read in `{fname}` is checked for a token-limit stop "
                             "before its tool calls run",
            )
            continue
        yield Hit(
            node=cited,
            claim=f"`{fname}` accumulates streamed tool-call arguments and no finish reason is checked for a "
                  "token-limit stop anywhere",
            consequence="a stream cut off by the token limit yields tool calls with truncated arguments that are "
                        "executed or stored as if complete",
            direction="capture finish_reason/stop_reason from the stream and, on `length`/`max_tokens`, discard the "
                      "accumulated calls instead of executing them",
        )


_ABORT_GUARD = re.compile(r"abort|cancel|signal|interrupt", re.I)
_TERMINAL = re.compile(r"finish|stop_?reason|done|complete|ended|terminal|incomplete|partial|truncat", re.I)
_NEGATED = re.compile(r"!==?|!\s*[\w(]|==\s*null|===\s*(null|undefined)|incomplete|partial|truncat", re.I)


def _ending_guard(text: str) -> bool:
    """A test that fails for a stream that ended early: an abort check, or a terminal state required to be set
    (`finishReason !== "tool_calls"`, `!done`); `stopReason === "max_tokens"` alone passes an aborted stream."""
    return bool(_ABORT_GUARD.search(text)) or bool(_TERMINAL.search(text)) and bool(_NEGATED.search(text))


def _assigned_names(mod: TsModule, node: Node) -> set[str]:
    out: set[str] = set()
    for assign in mod.inside(mod.nodes("assignment_expression"), node):
        left = assign.child_by_field_name("left")
        if left is not None and left.type == "identifier":
            out.add(mod.node_text(left))
    return out


_CALLS_WORDS = re.compile(r"[cC]alls\b|\b(function_?calls?|functionCalls?|tool_?uses?|toolUses?)\b")
"""How the tool calls of a reply are spelled where they are executed (`turn.calls`, `msg.tool_calls`, `toolUses`).
A word ending in `calls` is found by its ending alone: a pattern that starts at every word backtracks through all of them."""


_CALLED = re.compile(r"(?<!\bif)(?<!\bwhile)(?<!\bfor)(?<!\bswitch)(?<!\bcatch)[\w$)\]]\s*\(")


def _executes_calls(mod: TsModule, stmt: Node) -> bool:
    """Whether a statement runs the reply's tool calls: a loop over them, or a call that takes them (`Promise.all(
    calls.map(run))`, `await this.execute(toolCalls)`); a log of them, or a test of their count, runs nothing."""
    if stmt.type == "if_statement":
        return any(_executes_calls(mod, s) for branch in ("consequence", "alternative")
                   if (b := stmt.child_by_field_name(branch)) is not None
                   for s in (b.named_children if b.type in ("statement_block", "else_clause") else [b]))
    if stmt.type in ("for_in_statement", "for_statement"):
        head = stmt.child_by_field_name("right") or stmt.child_by_field_name("condition")
        return head is not None and bool(_CALLS_WORDS.search(mod.node_text(head)))
    text = mod.node_text(stmt)
    if not _CALLS_WORDS.search(text) or not _CALLED.search(text):
        return False
    expr = stmt.named_children[0] if stmt.type == "expression_statement" and stmt.named_children else None
    if expr is not None and expr.type == "await_expression" and expr.named_children:
        expr = expr.named_children[0]
    return not (expr is not None and expr.type == "call_expression" and _log_sink(mod, expr))


# ---------------------------------------------------------------- a hand-written SSE reader that ends on EOF
_TERMINAL_MARKERS = ("[DONE]", "message_stop", "response.completed", "response.done")
_REQUIRES_TERMINAL = re.compile(
    r"(finish_?reason|stop_?reason|finishReason|stopReason)\w*\s*[!=]==?\s*(null|undefined|[\"'`](tool_calls|"
    r"tool_use|tool-calls|stop|end_turn)[\"'`])|[\"'`](tool_calls|tool_use|tool-calls|stop|end_turn)[\"'`]\s*[!=]==?\s*"
    r"[\w.?]*(finish_?reason|stop_?reason|finishReason|stopReason)|!\s*[\w.?]*(finish_?reason|finishReason|"
    r"stop_?reason|stopReason)\b", re.I)
"""A consumer that requires the stream to have ended with a terminal state: a missing finish reason fails it."""
_EOF_MEMO: list[tuple[TsProject, bool, bool]] = []


def _project_stream_facts(project: TsProject) -> tuple[bool, bool]:
    """(some module accumulates tool-call fragments, some module requires a terminal finish/stop reason)."""
    if _EOF_MEMO and _EOF_MEMO[0][0] is project:
        return _EOF_MEMO[0][1], _EOF_MEMO[0][2]
    fragments = any(_has_fragments(m) for m in project.modules.values())
    requires = any(_REQUIRES_TERMINAL.search(m.text) for m in project.modules.values()
                   if any(w in m.text for w in ("inish", "top_reason", "topReason")))
    _EOF_MEMO[:] = [(project, fragments, requires)]
    return fragments, requires


def _done_test(mod: TsModule, cond: Node) -> bool:
    """`(done)` / `(chunk.done)` / `(result.done === true)`: the reader reports the end of the body."""
    text = re.sub(r"\s+", "", mod.node_text(cond)).strip("()")
    return bool(re.fullmatch(r"([\w$]+\.)?done(===true)?", text))


def _marker_flags(mod: TsModule, fn: Node) -> set[str]:
    """Names assigned where the function meets its terminal marker (`if (data === "[DONE]") { sawDone = true }`)."""
    flags: set[str] = set()
    for node in mod.inside(mod.nodes("if_statement"), fn):
        cond = node.child_by_field_name("condition")
        if any(m in mod.node_text(cond) for m in _TERMINAL_MARKERS):
            flags |= _assigned_names(mod, node)
    return flags


def _flag_handed_on(mod: TsModule, fn: Node, flags: set[str]) -> bool:
    """Whether a marker flag is passed whole to a call (`finish(sawFinish, sawDone)`): the callee decides what a
    stream that ended without the marker means, so the flag is not dropped."""
    return any(a.type == "identifier" and mod.node_text(a) in flags
               for call in mod.inside(mod.nodes("call_expression"), fn) for a in mod.arguments(call))


_RAW_TEXT = re.compile(r"\.feed\(|\bdecode\(|\.split\(|\.indexOf\(\s*[\"'`]\\n")
"""What a loop over a raw response body does with each chunk: decode it, split it into lines, feed a parser."""


def _body_loops_end_quietly(mod: TsModule, requires: bool) -> Iterator[Hit]:
    """`for await (const buf of res.body) parser.feed(decode(buf))` in a function that knows the terminal marker
    (in its own code or its parser's handler) when nothing after the loop asks whether the marker came: the loop
    ends the same way on the marker and on a cut connection."""
    for loop in mod.nodes("for_in_statement"):
        if not mod.node_text(loop).startswith("for await"):
            continue
        body = loop.child_by_field_name("body")
        fn = mod.enclosing_function(loop)
        if body is None or fn is None or not _RAW_TEXT.search(mod.node_text(body)):
            continue
        fn_text = mod.node_text(fn)
        marker = next((m for m in _TERMINAL_MARKERS if m in fn_text), None)
        if marker is None:
            continue
        if any(mod.node_text(r).startswith("return") and r.named_child_count
               for r in mod.inside(mod.nodes("return_statement"), body)
               if mod.enclosing_function(r) == fn):
            continue  # the value is returned from inside the loop (on the marker); falling out of it is another way
        flags = _marker_flags(mod, fn)
        after = [st for st in (loop.parent.named_children if loop.parent is not None else [])
                 if st.start_byte > loop.end_byte]
        if any(st.type == "throw_statement" or (st.type == "if_statement" and (
                any(re.search(rf"\b{re.escape(f)}\b", mod.node_text(st.child_by_field_name("condition")))
                    for f in flags) or _ending_guard(mod.node_text(st.child_by_field_name("condition")))))
               for st in after):
            continue  # whether the stream completed is checked after the loop
        yield Hit(
            node=after[0] if after else loop, verdict=Verdict.SUSPECTED if requires else Verdict.CONFIRMED,
            claim=f"the body loop (line {mod.line(loop)}) ends at end-of-body exactly as it does after `{marker}`, "
                  "and what it accumulated is used here without asking which happened",
            consequence="a stream cut off mid-turn (dropped connection, proxy timeout) reads as a finished one: the "
                        "text and tool calls accumulated so far are committed as a complete turn",
            direction=f"record that `{marker}` (or a finish reason) arrived and throw after the loop when it did "
                      "not, discarding the partial turn",
            confirm_hint="" if not requires else
            "verify that the consumer of this stream rejects a turn that ended without a finish / stop reason "
            "before its tool calls run",
        )


@rule(CheckId.C4, lang="typescript", name="stream-eof-taken-as-complete")
def stream_eof_taken_as_complete(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a hand-written stream reader that knows the model stream's terminal marker (`[DONE]`, `message_stop`)
    but ends quietly when the body ends without it (`if (done) return;`, or a `for await` over the raw body after
    which nothing asks whether the marker came). A connection cut mid-turn then looks like a finished stream, and
    the text and tool calls accumulated so far are committed as a complete turn."""
    if not any(m in mod.text for m in _TERMINAL_MARKERS) or (".read()" not in mod.text and "for await" not in mod.text):
        return
    fragments, requires = _project_stream_facts(project)
    if not fragments:
        return
    yield from _body_loops_end_quietly(mod, requires)
    if ".read()" not in mod.text:
        return
    for node in mod.nodes("if_statement"):
        cond = node.child_by_field_name("condition")
        cons = node.child_by_field_name("consequence")
        if cond is None or cons is None or not _done_test(mod, cond):
            continue
        stmts = [c for c in cons.named_children if c.type != "comment"] if cons.type == "statement_block" else [cons]
        if len(stmts) != 1 or stmts[0].type not in ("return_statement", "break_statement") or \
                stmts[0].named_child_count:
            continue  # `return out` / `throw`: a value or an error, not a quiet end
        fn = mod.enclosing_function(node)
        if fn is None or ".read()" not in mod.node_text(fn):
            continue
        fn_text = mod.node_text(fn)
        if not any(m in fn_text for m in _TERMINAL_MARKERS):
            continue
        flags = _marker_flags(mod, fn)
        if any(re.search(rf"\b{re.escape(f)}\b", mod.node_text(c.child_by_field_name("condition")))
               for c in mod.inside(mod.nodes("if_statement"), fn) for f in flags):
            continue  # whether the marker came is recorded and checked
        if _flag_handed_on(mod, fn, flags):
            continue  # whether the marker came is recorded and handed to what finishes the turn
        marker = next(m for m in _TERMINAL_MARKERS if m in fn_text)
        yield Hit(
            node=node, verdict=Verdict.SUSPECTED if requires else Verdict.CONFIRMED,
            claim=f"the reader ends quietly when the body ends, exactly as it does on the `{marker}` terminator",
            consequence="a stream cut off mid-turn (dropped connection, proxy timeout) reads as a finished one: the "
                        "text and tool calls accumulated so far are committed as a complete turn",
            direction=f"throw (or return an 'incomplete' marker) when the body ends before `{marker}`, and discard "
                      "the partial turn",
            confirm_hint="" if not requires else
            "verify that the consumer of this stream rejects a turn that ended without a finish / stop reason "
            "before its tool calls run",
        )


def _array_declared(mod: TsModule, fn: Node | None, container: Node) -> bool:
    """Whether the container is an array: a local bound to `[]`/`new Array()`, or a class field initialised so."""
    text = mod.node_text(container)
    if container.type == "identifier":
        values = mod.bindings(fn).get(text, [])
        return bool(values) and _is_array_value(mod, values[0])
    if container.type == "member_expression" and text.startswith("this."):
        prop = text[len("this."):]
        cls = next((a for a in mod.ancestors(container) if a.type in ("class_declaration", "class")), None)
        if cls is None:
            return False
        for fld in mod.inside(mod.nodes("public_field_definition", "field_definition"), cls):
            name = fld.child_by_field_name("name") or fld.child_by_field_name("property")
            if name is not None and mod.node_text(name) == prop:
                value = fld.child_by_field_name("value")
                return value is not None and _is_array_value(mod, value)
        for assign in mod.inside(mod.nodes("assignment_expression"), cls):
            if mod.node_text(assign.child_by_field_name("left")) == text:
                value = assign.child_by_field_name("right")
                return value is not None and _is_array_value(mod, value)
    return False


def _is_array_value(mod: TsModule, value: Node) -> bool:
    if value.type == "as_expression" and value.named_children:
        value = value.named_children[0]
    if value.type == "array":
        return True
    return value.type in ("new_expression", "call_expression") and mod.call_name(value) in {
        "new Array", "Array", "Array.from", "Array.of"} or mod.call_name(value) == "Array"


_DELTA_WORDS = (".index]", ".index ??", ".index??", ".index!]", "index']", 'index"]')
"""Literal spellings of a subscript by a fragment's own index (`calls[delta.index]`, `calls[tc["index"]]`)."""
_DELTA_BASE = re.compile(r"delta|tool|call|event|chunk|block|part|\btc\b|\bfc\b", re.I)


def _delta_index(mod: TsModule, index: Node) -> bool:
    """`tc.index` / `delta["index"]`: the position a streamed fragment claims for itself."""
    text = _norm(mod.node_text(index))
    m = re.fullmatch(r"([\w.\[\]'\"]+?)(?:\.index|\[['\"]index['\"]\])(\s*\?\?\s*0)?", text)
    return m is not None and bool(_DELTA_BASE.search(m.group(1)))


@rule(CheckId.C4, lang="typescript", name="tool-delta-indexed-array")
def tool_delta_indexed_array(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags streamed tool-call fragments placed with `calls[delta.index]` into an array. An array assumes the
    indices start at 0 with no gaps; a provider that starts at 1, skips one or sends no index leaves holes or a
    stray `"undefined"` property, and the loop over the calls then meets `undefined` (a Map keyed by index or id
    has no such assumption)."""
    if not any(word in mod.text for word in _DELTA_WORDS):
        return
    reported: set[tuple[int, str]] = set()
    for sub in _delta_subscripts(mod):
        index = sub.child_by_field_name("index")
        container = sub.child_by_field_name("object")
        if index is None or container is None or not _delta_index(mod, index):
            continue
        fn = mod.enclosing_function(sub)
        key = (fn.id if fn is not None else 0, mod.node_text(container))
        if key in reported or not _STREAM_WORDS.search(mod.node_text(fn) if fn is not None else mod.text):
            continue
        if not _array_declared(mod, fn, container) or _only_indexed(mod, fn, container):
            continue
        if _only_logged(project, mod, fn):
            continue  # calls rebuilt only for a log are never executed
        fn_text = mod.node_text(fn) if fn is not None else ""
        if re.search(rf"while\s*\(\s*{re.escape(key[1])}\.length\s*<", fn_text):
            continue  # padded up to the index first
        reported.add(key)
        idx = mod.node_text(index)
        yield Hit(
            node=_statement(sub), verdict=Verdict.SUSPECTED,
            claim=f"streamed tool calls are stored by position: `{key[1]}[{idx}]` indexes an array",
            consequence="a stream whose tool-call indices start above 0, skip one or are missing leaves holes or "
                        "merges fragments into the wrong call, and the calls loop then meets `undefined`",
            direction=f"accumulate into a `Map` keyed by `{idx}` (or the call id) and order by key at the end",
            confirm_hint=f"verify the provider behind this stream can send a first `{idx}` above 0, a gap or no "
                         "index at all",
        )


def _only_indexed(mod: TsModule, fn: Node | None, container: Node) -> bool:
    """Whether a local array is only ever read and written at an index (`a[i]`, `a[i] += x`) inside its function:
    never walked, measured, spread, returned or handed on, so a gap in the indices is never met."""
    if container.type != "identifier" or fn is None:
        return False
    name = mod.node_text(container)
    for node in _name_nodes(mod, fn, name):
        parent = node.parent
        if parent is None:
            return False
        if parent.type == "subscript_expression" and parent.child_by_field_name("object") == node:
            continue
        if parent.type == "variable_declarator" and parent.child_by_field_name("name") == node:
            continue
        return False
    return True


def _name_nodes(mod: TsModule, fn: Node, name: str) -> Iterator[Node]:
    """Identifiers spelling `name` inside `fn` (found by a byte search of the function's source)."""
    raw = name.encode("utf-8")
    at = mod.source.find(raw, fn.start_byte, fn.end_byte)
    while at >= 0:
        node = mod.tree.root_node.descendant_for_byte_range(at, at + len(raw))
        if node is not None and node.type in ("identifier", "shorthand_property_identifier") and \
                node.start_byte == at and node.end_byte == at + len(raw):
            yield node
        at = mod.source.find(raw, at + len(raw), fn.end_byte)


def _delta_subscripts(mod: TsModule) -> list[Node]:
    """Subscript expressions indexed by a fragment's own index, found from the literal spellings of `_DELTA_WORDS`
    (`subscript_expression` is not in the module index), in source order."""
    out: dict[int, Node] = {}
    for word in _DELTA_WORDS:
        raw = word.encode("utf-8")
        at = mod.source.find(raw)
        while at >= 0:
            node = mod.tree.root_node.descendant_for_byte_range(at, at + 1)
            for _ in range(6):  # `calls[tc["index"]]`: the inner subscript is the index, the outer one the slot
                if node is None:
                    break
                if node.type == "subscript_expression":
                    out[node.id] = node
                node = node.parent
            at = mod.source.find(raw, at + len(raw))
    return sorted(out.values(), key=lambda n: n.start_byte)
