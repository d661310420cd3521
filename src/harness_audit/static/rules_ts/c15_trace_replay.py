"""C15 · Trace completeness and replay — TypeScript/JavaScript rules.

Shapes detected:
- `tool-event-missing-call-id`: a tool call / result event recorded as an object (`events.push({...})`,
  `emit({...})`, `this.emit("tool_result", {...})`, `logger.info({...})`, a JSON line, the module's own recorder
  `log("tool", {...})` that writes its fields out) with no call id; an event kind of just `"tool"` counts. A
  provider part recorded whole (`{ call: part.functionCall }`) carries its id.
- `tool-call-logged-without-id`: in a project with no tracing integration, tool execution logged by name
  (`console.log("running tool " + name)`) in a function that never touches a call id nor hands the whole call
  object to an event or record (`dispatchEvent("tool-call", { toolCall: { ...toolCall } })`).
- `usage-never-read`: model responses reduced to their content (`res.choices[0].message`, `const { text } = await
  generateText(...)`) while no module of the project ever reads token usage.
- `response-usage-ignored`: one response used only for its content in a module that accounts usage elsewhere.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from harness_audit.findings import CheckId, Verdict
from harness_audit.static.lang.typescript import FUNCTION_TYPES, TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts import _ts_idioms as ts
from harness_audit.static.rules_ts._agent_idioms import (
    AI_SDK_FUNCS,
    Key,
    calls_matching,
    calls_named,
    cname,
    code_text,
    enclosing_class,
    fn_label,
    function_defs,
    imports_of,
    is_model_call,
    is_test_module,
    iter_subtree,
    key,
    last,
    memo,
    mod_memo,
    nodes_in,
    receiver,
    resolve_call,
    same,
    string_value,
    unwrap,
    words_in_code,
)

_ID_KEY = re.compile(r"(^|_)(id|ids)$|[a-z0-9](Id|ID|Ids)$|^(callId|toolCallId|tool_call_id|toolUseId|tool_use_id|"
                     r"spanId|span_id|traceId|trace_id|correlationId|correlation_id)$")
_TOOL_WORD = re.compile(r"(tool|function_?call)", re.I)
_TOOL_KEY = re.compile(r"^(tool|tools|toolName|tool_name|function|functionName|function_name|toolCall|tool_call|"
                       r"toolUse|tool_use|toolArgs|tool_args|toolInput|tool_input|toolOutput|tool_output|toolResult|"
                       r"tool_result)$")
_TOOL_KIND_VALUE = re.compile(r"^(tool|function)[_:.\- ]?(calls?|results?|outputs?|start(ed)?|end(ed)?|finish(ed)?|"
                              r"error|invocation|invoke[ds]?|return(ed)?|uses?|done|complete[ds]?|execution|"
                              r"execute[ds]?|request(ed)?|response)$|tool_?call|tool-call|toolCall|tool_?result|"
                              r"tool-result|toolResult|tool_use|tool-use|toolUse|function_call", re.I)
_TOOL_MESSAGE = re.compile(r"\b(tool|function)[ _-]?(call|result|output|start|end|finish|error|invo|run|exec)", re.I)
_CALL_EVENT = re.compile(r"(call|result|output|invok|execut|start|end|finish|complete|error|return)", re.I)
_PAYLOAD_KEYS = {"args", "arguments", "input", "params", "parameters", "result", "output", "error", "observation",
                 "content", "status", "returnValue", "response", "duration", "durationMs", "duration_ms", "elapsed",
                 "elapsedMs", "ok", "success"}
_EVENT_SINK = re.compile(r"(events?|eventLog|event_log|trace|traces|spans?|ledger|audit|auditLog|journal|records?|"
                         r"telemetry|timeline|steps|runLog|run_log|activity|history_?events)$", re.I)
_EMIT_FUNC = re.compile(r"^_?(emit|record|logEvent|log_event|traceEvent|trace_event|track|publish|writeEvent|"
                        r"addEvent|onEvent|sendEvent|logStep|recordEvent|emitEvent|appendEvent)\w*$", re.I)
_EVENT_KIND = re.compile(r"^(tool|function)[_:.\- ]?(call|result|output|start|end|finish|error|invocation|return|"
                         r"use|done|complete)s?$|^(on)?[Tt]ool[A-Z]\w*$", re.I)
_LOG_METHODS = {"debug", "info", "warn", "warning", "error", "log", "trace", "verbose", "fatal"}
_LOG_RECEIVER = re.compile(r"(^|\.)(console|_?log|_?logger|logging|pino|winston|this\.log|this\.logger)$", re.I)
_TRACING = ("@opentelemetry", "langfuse", "langsmith", "braintrust", "@sentry", "@traceloop", "helicone",
            "@arizeai", "@vercel/otel", "weave", "@langfuse", "agentops", "@lmnr-ai", "openlit", "@honeyhive",
            "@literalai", "posthog-node", "dd-trace", "@datadog")
_FIRST_PARTY_TRACING = re.compile(r"(^|/)(tracing|telemetry|observability|instrumentation|otel|spans?)(/|\.[cm]?[jt]sx?$)")
_USAGE_WORDS = re.compile(r"\busage\b|\busageMetadata\b|\busage_metadata\b|\btokenUsage\b|\btotalUsage\b|"
                          r"input_tokens|prompt_tokens|inputTokens|"
                          r"promptTokens|total_tokens|totalTokens|completion_tokens|output_tokens|outputTokens|"
                          r"cache_read_input_tokens|cache_creation_input_tokens|cached_tokens|cachedInputTokens|"
                          r"promptTokenCount|candidatesTokenCount|cachedContentTokenCount|cacheReadInputTokens|"
                          r"prompt_eval_count|eval_count")
_USAGE_LIST = ("usage", "usageMetadata", "usage_metadata", "tokenUsage", "totalUsage", "input_tokens", "prompt_tokens", "inputTokens", "promptTokens",
               "total_tokens", "totalTokens", "completion_tokens", "output_tokens", "outputTokens",
               "cache_read_input_tokens", "cache_creation_input_tokens", "cached_tokens", "cachedInputTokens",
               "promptTokenCount", "candidatesTokenCount", "cachedContentTokenCount", "cacheReadInputTokens",
               "eval_count")
_CONTENT_ATTRS = {"choices", "content", "output_text", "outputText", "text", "message", "output", "candidates",
                  "tool_calls", "toolCalls", "stop_reason", "stopReason", "finish_reason", "finishReason", "object",
                  "textStream", "partialObjectStream", "reasoning", "parsed", "output_parsed", "role", "type",
                  "finalOutput", "lastAgent", "newItems", "history", "interruptions", "lastResponseId",
                  "additional_kwargs"}
_META_ATTRS = frozenset({"id", "model", "created", "system_fingerprint", "service_tier", "stop_sequence",
                         "response_id", "responseId", "modelId"})
"""Response metadata a harness may record without its usage: reading them does not make the response escape."""
_CALLS_ITER = re.compile(r"(tool_?calls?|function_?calls?|tool_?uses?|tool_?requests?|^calls|Calls|uses)$", re.I)
_TOOL_FUNC = re.compile(r"((execute|run|call|invoke|dispatch|handle|process)_?\w*tool|tool_?\w*(call|exec|run))", re.I)


_RECORD_LASTS = frozenset({"push", "write", "send", "enqueue", "add", "append", "unshift", "stringify", *_LOG_METHODS})


def _object_args(arg: Node) -> list[Node]:
    """The object literal an argument is (through parentheses and casts)."""
    inner = unwrap(arg)
    return [inner] if inner is not None and inner.type == "object" else []


# ---------------------------------------------------------------- project facts
@dataclass(frozen=True, slots=True)
class _Facts:
    """What the whole project shows about tracing and usage."""

    tracing: str | None
    """An imported tracing / observability package (or a first-party tracing module), if any."""
    reads_usage: bool
    """Whether any module reads token usage."""


def _facts(project: TsProject) -> _Facts:
    def build() -> _Facts:
        tracing: str | None = None
        reads = False
        for mod in project.modules.values():
            if is_test_module(mod):
                continue
            if tracing is None:
                tracing = next((m for m in imports_of(mod).values() if m.split("#")[0].startswith(_TRACING)), None)
                if tracing is None and ("experimental_telemetry" in mod.text or _FIRST_PARTY_TRACING.search(mod.path)):
                    tracing = mod.path
            if not reads:
                reads = _module_reads_usage(mod)
        return _Facts(tracing.split("#")[0] if tracing else None, reads)

    return memo(project, "c15_facts", build)


def _module_reads_usage(mod: TsModule) -> bool:
    return mod_memo(mod, "c15_usage", lambda: words_in_code(mod, _USAGE_LIST))


# ---------------------------------------------------------------- tool events
def _tool_event(mod: TsModule, obj: Node, kind_hint: str | None) -> bool:
    """Whether an object literal describes one tool call or result (and is not a chat message)."""
    if any(c.type == "spread_element" for c in obj.named_children):
        return False
    keys = mod.object_keys(obj)
    if not keys or "role" in keys:
        return False
    values = [v for v in (string_value(mod, n) for n in keys.values()) if v]
    tool_key = any(_TOOL_KEY.search(k) for k in keys)
    tool_value = [v for v in values if _TOOL_KIND_VALUE.search(v) and len(v) < 40]
    bare = [v for k, n in keys.items() if k in _KIND_KEYS and (v := string_value(mod, n)) in _BARE_TOOL_KINDS]
    if kind_hint is not None:
        return bool(set(keys) & _PAYLOAD_KEYS) or tool_key or "name" in keys
    if bare and (set(keys) & _PAYLOAD_KEYS or "name" in keys):
        return True  # `{ event: "tool", name, ok: true }`: the event kind says it is one tool run
    if not (tool_key or tool_value):
        return False
    return bool(set(keys) & _PAYLOAD_KEYS) or any(_CALL_EVENT.search(v) for v in tool_value)


_KIND_KEYS = frozenset({"event", "type", "kind", "evt", "ev", "category"})
_BARE_TOOL_KINDS = frozenset({"tool", "function", "Tool", "TOOL"})
"""An event kind that is just the word `tool` (`{ event: "tool", name, ok }`, `log("tool", { name })`)."""


_OWNER_ID = re.compile(r"^(chat|session|sess|conversation|conv|thread|user|job|tenant|org|organization|project|"
                       r"workspace|agent|ticket|issue|customer|account|team|model|repo|device|client|app)_?(id|ids|Id|ID|"
                       r"Ids)$", re.I)
"""Ids of what a run belongs to (`chatId`, `sessionId`, `jobId`): they do not tell one tool call from another."""


def _refers_to_record_with_id(mod: TsModule, obj: Node, value: Node | None, depth: int) -> bool:
    """`{ event: resultEvent.id }` where `resultEvent` is a local built in the same function from an object that
    carries the call id: the entry points at a record that joins the call, so it is correlated through it."""
    if depth > 0 or value is None or value.type != "member_expression" or \
            mod.node_text(value.child_by_field_name("property")) != "id":
        return False
    holder = value.child_by_field_name("object")
    if holder is None or holder.type != "identifier":
        return False
    bound = mod.bindings(mod.enclosing_function(obj)).get(mod.node_text(holder), [])
    return any(_has_id(mod, o, depth + 1) for v in bound for o in iter_subtree(v, into_functions=False)
               if o.type == "object")


def _has_id(mod: TsModule, obj: Node, depth: int = 0) -> bool:
    """Whether the event carries an id at any depth (`toolCallId`, `"ai.toolCall.id"`, `call_id` in `meta`), or the
    id of a local record that does; the id of what the run belongs to (`chatId`, `sessionId`) does not count."""
    for node in iter_subtree(obj, into_functions=False):
        if node.type == "pair" and _refers_to_record_with_id(mod, obj, node.child_by_field_name("value"), depth):
            return True
        whole = node.named_children[0] if node.type == "spread_element" and node.named_children else \
            node.child_by_field_name("value") if node.type == "pair" else \
            node if node.type == "shorthand_property_identifier" else None
        if whole is not None and whole.type in ("identifier", "shorthand_property_identifier") and \
                _CALL_OBJECT.match(mod.node_text(whole)):
            return True  # the whole call object (`{ toolCall: { ...call } }`, `{ call }`) carries its id
        if whole is not None and whole.type == "member_expression" and \
                _WHOLE_PART.match(mod.node_text(whole.child_by_field_name("property"))):
            return True  # `{ call: part.functionCall }`, `{ result: part.functionResponse }`: the part carries its id
        if node.type == "pair":
            name = mod.node_text(node.child_by_field_name("key")).strip("'\"`[]")
        elif node.type == "shorthand_property_identifier":
            name = mod.node_text(node)
        else:
            continue
        name = name.rsplit(".", 1)[-1]
        if _ID_KEY.search(name) and not _OWNER_ID.match(name):
            return True
    return False


_NAME_PROPS = frozenset({"name", "toolName", "tool_name", "tool", "functionName", "function_name"})


def _names_only(mod: TsModule, node: Node | None, depth: int = 1) -> str | None:
    """When `node` lists tool calls by name only (`calls.map((c) => c.function.name)`, `steps.flatMap((s) =>
    s.toolCalls.map((c) => c.toolName))`, `.join(", ")` of that, a local holding it), the list it maps; else None."""
    node = unwrap(node)
    if node is None:
        return None
    if node.type == "identifier" and depth > 0:
        return _names_only(mod, ts.resolve_value(mod, node), depth - 1)
    if node.type in ("ternary_expression", "binary_expression"):
        parts = [node.child_by_field_name(f) for f in ("consequence", "alternative", "left", "right")]
        return next((r for p in parts if p is not None and (r := _names_only(mod, p, depth)) is not None), None)
    if node.type != "call_expression":
        return None
    name = cname(mod, node)
    tail, recv = last(name), receiver(name)
    func = node.child_by_field_name("function")
    if tail in ("join", "slice", "filter", "sort") and func is not None and func.type == "member_expression":
        return _names_only(mod, func.child_by_field_name("object"), depth)
    if tail not in ("map", "flatMap"):
        return None
    args = mod.arguments(node)
    cb = unwrap(args[0]) if args else None
    if cb is None or cb.type != "arrow_function":
        return None
    body = unwrap(cb.child_by_field_name("body"))
    if body is None:
        return None
    if body.type == "call_expression":  # `(s) => s.toolCalls.map((c) => c.toolName)`
        inner = _names_only(mod, body, 0)
        return f"{recv}[…].{inner.split('.', 1)[-1]}" if inner is not None else None
    if body.type != "member_expression" or mod.node_text(body.child_by_field_name("property")) not in _NAME_PROPS:
        return None
    base = recv.replace("?", "")
    if not _CALLS_ITER.search(last(base) or base):
        return None
    return recv


def _event_sink(mod: TsModule, obj: Node) -> tuple[str, str | None] | None:
    """How the object is recorded (and the event kind its emitter names), or None when it is not recorded."""
    parent = obj.parent
    while parent is not None and parent.type in ("parenthesized_expression", "as_expression", "satisfies_expression"):
        parent = parent.parent
    if parent is None or parent.type != "arguments" or parent.parent is None:
        return None
    call = parent.parent
    if call.type != "call_expression":
        return None
    name = cname(mod, call)
    tail, recv = last(name), receiver(name)
    if _METRIC.search(tail):
        return None  # `recordToolCallMetrics(...)`: a counter's attributes, where an id would explode cardinality
    if _product_analytics(name):
        return None
    args = mod.arguments(call)
    if name == "JSON.stringify":
        outer = call.parent
        while outer is not None and outer.type in ("binary_expression", "template_substitution", "template_string",
                                                   "arguments", "parenthesized_expression"):
            outer = outer.parent
            if outer is not None and outer.type == "call_expression":
                break
        if outer is not None and outer.type == "call_expression" and re.search(
                r"(append|write|log|info|debug|send|push)", last(cname(mod, outer)), re.I):
            return f"`{cname(mod, outer)}(JSON.stringify(...))`", None
        return None
    if tail in ("push", "write", "send", "enqueue", "add", "append", "unshift") and recv and \
            _EVENT_SINK.search(last(recv)):
        return f"`{name}`", None
    if tail in _LOG_METHODS and recv and _LOG_RECEIVER.search(recv) and not recv.endswith("console"):
        # a structured logger (pino, winston): the object is the record, the message may name the event
        message = next((string_value(mod, a) for a in args if not same(a, obj) and string_value(mod, a)), None)
        kind = message if message is not None and _TOOL_MESSAGE.search(message) else None
        return f"`{name}`", kind
    if _EMIT_FUNC.match(tail):
        kind = string_value(mod, args[0]) if args and not same(args[0], obj) else None
        if kind is not None and not (_EVENT_KIND.search(kind.replace(" ", "_")) or kind in _BARE_TOOL_KINDS):
            return None
        return f"`{name}`", kind
    if not recv and _writes_record(mod, name):
        # `log("tool", { name })` where `function log(event, fields)` writes a JSON line: the project's own recorder
        kind = string_value(mod, args[0]) if args and not same(args[0], obj) else None
        if kind is not None and not (_EVENT_KIND.search(kind.replace(" ", "_")) or kind in _BARE_TOOL_KINDS):
            return None
        return f"`{name}` (it writes the record)", kind
    if recv and tail not in _NOT_RECORDING and _SINK_RECEIVER.search(last(recv)):
        # `log.write({...})`, `trace.step("tools", {...})`, `this.audit.record({...})`: an event log's method
        kind = string_value(mod, args[0]) if args and not same(args[0], obj) else None
        return f"`{name}`", kind if kind is not None and _SINK_KIND.search(kind.replace(" ", "_")) else None
    return None


_WRITES = re.compile(r"\bJSON\.stringify\s*\(|\.(write|appendFile|appendFileSync|writeSync)\s*\(|"
                     r"\b(console|logger|log)\.(log|info|debug|warn|error)\s*\(")


def _writes_record(mod: TsModule, name: str) -> bool:
    """Whether `name` is a function of the module that takes its fields as parameters and writes them out (a JSON
    line to stdout or a file, a logger call): a first-party event recorder."""
    if not name or "." in name or name not in function_defs(mod):
        return False
    known = mod_memo(mod, "c15_writes_record", dict[str, bool])
    if name not in known:
        known[name] = _writes_record_uncached(mod, name)
    return known[name]


def _writes_record_uncached(mod: TsModule, name: str) -> bool:
    for fn in function_defs(mod).get(name, []):
        if not _WRITES.search(mod.node_text(fn)):
            continue  # the raw text first: comments stripped can only take a write away
        params = {n for p in ts.params(fn) for n in ts.bound_names(mod, ts.param_pattern(p))}
        body = code_text(mod, fn)
        if len(params) >= 2 and _WRITES.search(body) and any(re.search(rf"\.\.\.{re.escape(p)}\b", body) or
                                                            re.search(rf"\b{re.escape(p)}\b", body) for p in params):
            return True
    return False


_SINK_KIND = re.compile(r"(?i:^(tool|function)[_:.\- ]?(call|result|output|start|end|finish|error|invocation|return|"
                        r"use|done|complete)(s|ed)?$)|^(on)?[Tt]ool[A-Z]\w*$")
"""An event kind naming one tool call or result (`tool_result`, `toolStart`; not `tools_offered`)."""


_SINK_RECEIVER = re.compile(r"^_?(log|logs|eventLog|event_log|events|trace|tracer|traces|journal|audit|auditLog|"
                            r"audit_log|recorder|telemetry|sink|eventSink|ledger|timeline|runLog|run_log|spans?|"
                            r"runTrace|run_trace|transcript|activityLog|history_?log)$", re.I)
_METHOD_CALL_TEXT = re.compile(r"\.\s*([A-Za-z_$][\w$]*)\s*\(")
_IDENT_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$")


def _sink_methods(text: str) -> set[str]:
    """Methods called on an event-log-like receiver (`log.write(`, `this.trace.step(`), read from the text before any
    tree walk: each `.name(` is found, then the identifier before its dot read backwards (a regex that starts at
    every identifier of the file is thirty times slower)."""
    out: set[str] = set()
    for m in _METHOD_CALL_TEXT.finditer(text):
        method = m.group(1)
        if method in out or method in _NOT_RECORDING:
            continue
        end = m.start()
        while end > 0 and text[end - 1] in " ?\t":
            end -= 1
        start = end
        while start > 0 and end - start < 40 and text[start - 1] in _IDENT_CHARS:
            start -= 1
        if start < end and _SINK_RECEIVER.search(text[start:end]):
            out.add(method)
    return out


_NOT_RECORDING = frozenset({"get", "read", "load", "find", "query", "list", "flush", "close", "open", "has", "clear",
                            "filter", "map", "forEach", "reduce", "some", "every", "includes", "indexOf", "slice", "at",
                            "keys", "values", "entries", "then", "catch", "finally", "on", "off", "once",
                            "removeListener", "addEventListener", "toString", "toJSON", "replay", "search", "size"})


def _loose_sink(mod: TsModule, obj: Node) -> str | None:
    """How the object is recorded when the recorder names an event that is not a tool event (`emit("turn", {...})`,
    `trace.step("model", {...})`), or a structured logger takes it: described, else None."""
    sink = _event_sink(mod, obj)
    if sink is not None:
        return sink[0]
    parent = obj.parent
    while parent is not None and parent.type in ("parenthesized_expression", "as_expression", "satisfies_expression"):
        parent = parent.parent
    call = parent.parent if parent is not None and parent.type == "arguments" else None
    if call is None or call.type != "call_expression":
        return None
    name = cname(mod, call)
    return f"`{name}`" if _EMIT_FUNC.match(last(name)) and not _METRIC.search(last(name)) \
        and not _product_analytics(name) else None


_METRIC = re.compile(r"(Metric|metric|Counter|counter|Histogram|histogram|Gauge|gauge|Stats?$)")
_ANALYTICS_CLIENT = re.compile(r"(?i:analytics|posthog|mixpanel|segment|amplitude|rudder|plausible|usage_?stats)|"
                               r"(^|\.)(Tel|Telemetry|telemetry)(\.|$)")


def _product_analytics(name: str) -> bool:
    """`Tel.getInstance().trackToolCall({...})`, `analytics.track(...)`, `posthog.capture(...)`: product usage
    analytics, sent to a vendor to count feature use, is not the run's event record, and a call id has no place
    there."""
    tail, recv = last(name), receiver(name)
    return bool(recv) and tail.startswith(("track", "capture")) and bool(_ANALYTICS_CLIENT.search(recv))


def _idless_tool_events(mod: TsModule) -> list[tuple[Node, tuple[str, str | None]]]:
    """Tool events of the module recorded without a call id: (the object, how it is recorded)."""

    def build() -> list[tuple[Node, tuple[str, str | None]]]:
        if is_test_module(mod) or ("tool" not in mod.text and "Tool" not in mod.text and "unction" not in mod.text):
            return []
        methods = _sink_methods(mod.text)
        writers = [n for n in function_defs(mod) if "." not in n and _writes_record(mod, n)]
        recorders = [*calls_named(mod, _RECORD_LASTS), *calls_matching(mod, _EMIT_FUNC),
                     *(c for c in calls_named(mod, writers) if not receiver(cname(mod, c))),
                     *(c for c in calls_named(mod, methods) if _SINK_RECEIVER.search(last(receiver(cname(mod, c)))))]
        objects = {key(mod, a): a for call in recorders for arg in mod.arguments(call) for a in _object_args(arg)}
        out: list[tuple[Node, tuple[str, str | None]]] = []
        for obj in sorted(objects.values(), key=lambda n: n.start_byte):
            if _has_id(mod, obj):
                continue
            sink = _event_sink(mod, obj)
            if sink is not None and _tool_event(mod, obj, sink[1]):
                out.append((obj, sink))
                continue
            listed = next((n for v in mod.object_keys(obj).values() if (n := _names_only(mod, v)) is not None), None)
            how = _loose_sink(mod, obj) if listed is not None else None
            if how is not None and not _call_id_at_hand(mod, _outermost_function(mod, obj)):
                out.append((obj, (f"{how} (it lists `{listed}` by name only)", None)))
        return out

    return mod_memo(mod, "c15_idless_events", build)


_TOOL_ROLES = frozenset({"tool", "function", "tool_result", "tool-result"})


def _persisting_recorder(mod: TsModule, project: TsProject, call: Node) -> str | None:
    """`this.transcript.add(entry)` / `journal.append(entry)` where the method (a project method, found through the
    receiver's declared class) writes its entries out (a file write, a JSON line, a logger): described, else None."""
    name = cname(mod, call)
    if not receiver(name) or last(name) not in _RECORD_LASTS or is_model_call(mod, call):
        return None
    for target in resolve_call(mod, project, call):
        if target.node.type != "method_definition":
            continue
        cls = enclosing_class(target.module, target.node)
        body = code_text(target.module, cls if cls is not None else target.node)
        if re.search(r"\b(writeFile|writeFileSync|appendFile|appendFileSync|createWriteStream)\b|\.write\s*\(", body):
            return f"`{name}` (it writes the record out)"
    return None


def _persisted_tool_entries(mod: TsModule, project: TsProject) -> Iterator[tuple[Node, str]]:
    """Entries with a tool role (`{ role: "tool", text: `${name} -> ${out}` }`) handed to a recorder that persists
    them, with no call id: the durable record names the tool in free text, so calls and results cannot be joined.
    A `role: "tool"` message sent to the model is not such an entry (the recorder must write to storage)."""
    if is_test_module(mod) or "role" not in mod.text:
        return
    for call in calls_named(mod, _RECORD_LASTS):
        args = mod.arguments(call)
        obj = unwrap(args[0]) if len(args) == 1 else None
        if obj is None or obj.type != "object" or _has_id(mod, obj):
            continue
        role = string_value(mod, mod.object_keys(obj).get("role"))
        if role not in _TOOL_ROLES:
            continue
        how = _persisting_recorder(mod, project, call)
        if how is not None:
            yield obj, how


def _forwarded_from_params(mod: TsModule, fn: Node, obj: Node) -> bool:
    """Whether the event's tool fields are the recording function's parameters (`tool(session, name, ok, ms) {
    this.emit({ kind: "tool", session, tool: name, ok, ms }) }`): its callers decide what the event carries."""
    names = {n for p in ts.params(fn) for n in ts.bound_names(mod, ts.param_pattern(p))}
    if not names:
        return False
    used = {mod.node_text(n) for n in iter_subtree(obj, into_functions=False)
            if n.type in ("identifier", "shorthand_property_identifier")}
    return len(used & names) >= 2


_CALL_ID_ARG = re.compile(r"\b(tool_call_id|toolCallId|tool_use_id|toolUseId|call_id|callId)\b|"
                          r"\b(call|tc|toolCall|tool_call|toolUse|tool_use|fc|functionCall|block|part|use|"
                          r"invocation)\??\.id\b")


@dataclass(frozen=True, slots=True)
class _Forward:
    """A call into a tool-event recorder that records no call id, made where the call id is at hand."""

    call: Node
    """The call in the caller."""
    recorder: str
    """The recorder's name and place."""


def _forwards(project: TsProject) -> tuple[dict[str, list[_Forward]], set[Key]]:
    """(calls that should pass a call id to a recorder, by module path; recorder events reported at those calls)."""

    def build() -> tuple[dict[str, list[_Forward]], set[Key]]:
        recorders: dict[str, list[tuple[TsModule, Node, Node]]] = {}
        for mod in project.modules.values():
            for obj, _sink in _idless_tool_events(mod):
                fn = mod.enclosing_function(obj)
                if fn is not None and mod.function_name(fn) not in ("<anonymous>", "constructor") and \
                        _forwarded_from_params(mod, fn, obj):
                    recorders.setdefault(mod.function_name(fn), []).append((mod, fn, obj))
        by_path: dict[str, list[_Forward]] = {}
        moved: set[Key] = set()
        if not recorders:
            return by_path, moved
        for other in project.modules.values():
            if is_test_module(other):
                continue
            for call in calls_named(other, recorders.keys()):
                name = cname(other, call)
                targets = recorders.get(last(name), [])
                resolved = [(m, f, o) for m, f, o in targets if any(
                    t.module is m and same(t.node, f) for t in resolve_call(other, project, call))]
                if not resolved and len(targets) == 1 and receiver(name) and receiver(name) != "this" and \
                        targets[0][1].type == "method_definition":
                    resolved = targets  # `this.trace.tool(...)`: the only recorder method of that name
                caller = other.enclosing_function(call)
                if not resolved or caller is None or not _call_id_at_hand(other, caller) or \
                        _CALL_ID_ARG.search(" ".join(code_text(other, a) for a in other.arguments(call))):
                    continue
                m, f, o = resolved[0]
                by_path.setdefault(other.path, []).append(
                    _Forward(call, f"`{fn_label(m, f)}` ({m.path}:{m.line(o)})"))
                moved.add(key(m, o))
        return by_path, moved

    return memo(project, "c15_forwards", build)


@rule(CheckId.C15, lang="typescript", name="tool-event-missing-call-id")
def tool_event_missing_call_id(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a tool call or tool result event recorded as an object (pushed to an event list, emitted, logged by a
    structured logger, or written as a JSON line) that carries no call id. When the event is built from the
    parameters of a recording helper (`trace.tool(session, name, ok, ms)`), the finding cites the calls of that
    helper made where the call id is at hand but not passed. Calls and results in the record then cannot be
    joined, so a failed run cannot be reconstructed call by call."""
    forwards, moved = _forwards(project)
    for fwd in forwards.get(mod.path, []):
        yield Hit(
            node=fwd.call,
            claim=f"the tool event is recorded through {fwd.recorder}, which takes no call id, although the call's "
                  "id is at hand here",
            consequence="tool calls and their results in the trace cannot be correlated, so what happened in a failed "
                        "run (which result answered which call, which retry belonged to which) is lost",
            direction="give the recorder a call-id parameter and pass the provider's tool-call id (`tool_call_id` / "
                      "`toolCallId` / `tool_use_id`) with every call and result event",
        )
    events = [*_idless_tool_events(mod), *((obj, (how, None)) for obj, how in _persisted_tool_entries(mod, project))]
    for obj, sink in events:
        if key(mod, obj) in moved:
            continue
        how, _kind = sink
        at_hand = _call_id_at_hand(mod, mod.enclosing_function(obj))
        yield Hit(
            node=obj.parent.parent if obj.parent is not None and obj.parent.parent is not None else obj,
            claim=f"the tool event recorded through {how} has no call id"
                  + (" although the call's id is at hand in this function" if at_hand else ""),
            consequence="tool calls and their results in the trace cannot be correlated, so what happened in a failed "
                        "run (which result answered which call, which retry belonged to which) is lost",
            direction="put the provider's tool-call id (`tool_call_id` / `toolCallId` / `tool_use_id`) on every call "
                      "and result event",
        )


def _outermost_function(mod: TsModule, node: Node) -> Node | None:
    """The outermost function around `node` (a route handler around its `onFinish` callback)."""
    fns = [a for a in mod.ancestors(node) if a.type in FUNCTION_TYPES]
    return fns[-1] if fns else None


_CALL_NAME = re.compile(r"^(call|tc|toolCall|tool_call|toolUse|tool_use|fc|functionCall|block|part|use|invocation)$",
                        re.I)


def _call_id_at_hand(mod: TsModule, fn: Node | None) -> bool:
    """Whether the function reads a tool call's id (`call.id`, `toolCallId`, `block.id`)."""
    if fn is None:
        return False
    text = code_text(mod, fn)
    if re.search(r"\b(tool_call_id|toolCallId|tool_use_id|toolUseId|call_id|callId)\b", text):
        return True
    return any(_CALL_NAME.match(m.group(1)) for m in re.finditer(r"\b(\w+)\??\.id\b", text))


# ---------------------------------------------------------------- tool logs
def _is_log(mod: TsModule, call: Node) -> bool:
    name = cname(mod, call)
    tail, recv = last(name), receiver(name)
    return tail in _LOG_METHODS and bool(recv) and bool(_LOG_RECEIVER.search(recv))


def _listed_by_name(mod: TsModule, log: Node) -> str | None:
    """The log line lists tool calls by name only (`${calls.map((c) => c.function.name).join(", ")}`, or a local
    holding that): described, else None."""
    for arg in mod.arguments(log):
        parts = [s.named_children[0] for s in arg.named_children if s.type == "template_substitution"
                 and s.named_children] if arg.type == "template_string" else [arg]
        for part in parts:
            listed = _names_only(mod, part)
            if listed is not None:
                return f"`{listed}`"
    return None


def _logs_a_tool_name(mod: TsModule, call: Node) -> bool:
    """Whether a log call mentions a tool and interpolates a value that names it (`call.function.name`, `toolName`),
    or lists tool calls by name only."""
    if _listed_by_name(mod, call) is not None:
        return True
    args = mod.arguments(call)
    text = " ".join(code_text(mod, a) for a in args)
    if not _TOOL_WORD.search(text):
        return False
    values: list[str] = []
    for arg in args:
        if arg.type == "template_string":
            values.extend(code_text(mod, s) for s in arg.named_children if s.type == "template_substitution")
        elif arg.type not in ("string",):
            values.append(code_text(mod, arg))
    return any(re.search(r"(name|tool|function)", v, re.I) for v in values)


def _tool_context(mod: TsModule, node: Node) -> str | None:
    """The loop over tool calls or the tool-executing function around `node`, described."""
    for anc in mod.ancestors(node):
        if anc.type in FUNCTION_TYPES:
            name = mod.function_name(anc)
            if _TOOL_FUNC.search(name):
                return f"`{name}`"
            parent = anc.parent
            call = parent.parent if parent is not None and parent.type == "arguments" else None
            if call is not None and call.type == "call_expression" and last(cname(mod, call)) in (
                    "map", "forEach", "flatMap"):
                recv = receiver(cname(mod, call))
                if _CALLS_ITER.search(last(recv) or ""):
                    return f"the callback over `{recv}`"
            continue
        if anc.type == "for_in_statement":
            right = unwrap(anc.child_by_field_name("right"))
            if right is not None and right.type == "binary_expression":
                right = unwrap(right.child_by_field_name("left"))  # `msg.tool_calls ?? []`
            base = mod.dotted(right) if right is not None else ""
            if base and _CALLS_ITER.search(last(base.replace("?", ""))):
                return f"the loop over `{base}`"
    return None


@rule(CheckId.C15, lang="typescript", name="tool-call-logged-without-id")
def tool_call_logged_without_id(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags tool execution logged by tool name with no call id (`console.log("running tool " + call.function.name)`),
    in a loop over tool calls or a tool-executing function that never touches a call id, in a project with no
    tracing integration (so the log is the only record). Calls and results in such a log cannot be joined, and
    parallel calls of the same tool are indistinguishable."""
    if is_test_module(mod) or ("tool" not in mod.text and "Tool" not in mod.text) or _facts(project).tracing:
        return
    seen: set[Key] = set()
    for call in calls_named(mod, _LOG_METHODS):
        if not _is_log(mod, call) or not _logs_a_tool_name(mod, call):
            continue
        fn = mod.enclosing_function(call)
        if fn is None or key(mod, fn) in seen:
            continue
        where = _tool_context(mod, call) or _result_tool_calls(mod, call, fn) or _listed_by_name(mod, call)
        if where is None or _mentions_id(mod, fn) or _records_whole_call(mod, fn):
            continue
        seen.add(key(mod, fn))
        yield Hit(
            node=call,
            verdict=Verdict.SUSPECTED,
            claim=f"tool execution in {where} is logged by name only: nothing in `{fn_label(mod, fn)}` records the "
                  "call id",
            consequence="the log cannot tell which result answered which call, or repeated calls of one tool apart, "
                        "so a failed run cannot be reconstructed",
            direction="log (or better, record as structured events) the tool-call id with every call and result",
            confirm_hint=f"verify that no other record (persisted history, trace spans) keys the calls made in "
                         f"`{fn_label(mod, fn)}` by their id",
        )


_RESULT_CALLS = re.compile(r"\.(toolCalls|tool_calls|toolResults|steps)\b")


def _result_tool_calls(mod: TsModule, log: Node, fn: Node) -> str | None:
    """The log lists the tool calls of a model result made in the same function (`steps.flatMap((s) =>
    s.toolCalls.map((c) => c.toolName))` after `generateText({ tools, maxSteps })`): described, else None."""
    if not any(_RESULT_CALLS.search(code_text(mod, a)) for a in mod.arguments(log)):
        return None
    model = next((c for c in nodes_in(mod, fn, "call_expression") if c.start_byte < log.start_byte and
                  _is_sdk_call(mod, c) and is_model_call(mod, c)), None)
    if model is None or not re.search(r"\btools\b", code_text(mod, model)):
        return None
    return f"the result of `{cname(mod, model)}`"


_OWNER_OBJECT = re.compile(r"^(job|session|sess|chat|conversation|conv|thread|user|account|tenant|org|project|"
                           r"workspace|req|request|res|resp|response|completion|run|agent|ticket|issue|task|model|"
                           r"state|ctx|context|this|repo|team|customer|process|env|config|cfg|opts|options|file|"
                           r"doc|document|page|item|row|record|node)$", re.I)


def _mentions_id(mod: TsModule, fn: Node) -> bool:
    """Whether a function touches a tool call's id (a `sessionId` parameter or `job.id` is not one)."""
    text = code_text(mod, fn)
    if re.search(r"\b(tool_call_id|toolCallId|tool_use_id|toolUseId|call_id|callId)\b", text):
        return True
    if any(not _OWNER_OBJECT.match(m.group(1)) for m in re.finditer(r"\b([A-Za-z_$][\w$]*)\??\.id\b", text)):
        return True
    return bool(re.search(r"(?<![.\w$])id\b(?!\s*:)", text))  # a destructured `{ id, name }` or `id` in scope


_EVENT_CALL = re.compile(r"^(dispatchEvent|dispatch|emit|publish|record\w*|track\w*|trace\w*|notify\w*|"
                         r"on[A-Z]\w*|handle\w*Event|send\w*Event|append\w*|push)$")
_CALL_OBJECT = re.compile(r"^(toolCall|tool_call|toolUse|tool_use|functionCall|function_call|call|tc)$")
_WHOLE_PART = re.compile(r"^(toolCall|tool_call|toolUse|tool_use|functionCall|function_call|functionResponse|"
                         r"function_response|toolResult|tool_result)$")
"""A provider part that carries its own call id (Gemini `functionCall` / `functionResponse` have an `id`)."""


def _records_whole_call(mod: TsModule, fn: Node) -> bool:
    """The function hands the whole tool-call object to an event or a record (`callbackManager.dispatchEvent(
    "llm-tool-call", { toolCall: { ...toolCall, input } })`, `emit("tool", toolCall)`): that record carries the call's
    id, so the log lines by name are not the only trace."""
    for call in nodes_in(mod, fn, "call_expression"):
        if not _EVENT_CALL.match(last(cname(mod, call))):
            continue
        for arg in mod.arguments(call):
            for node in iter_subtree(arg):
                inner = node.named_children[0] if node.type == "spread_element" and node.named_children else node
                if inner.type in ("identifier", "shorthand_property_identifier") and \
                        _CALL_OBJECT.match(mod.node_text(inner)) and \
                        (node.type == "spread_element" or node is arg or same(node, arg) or
                         node.type == "shorthand_property_identifier" or
                         (node.parent is not None and node.parent.type == "pair" and
                          same(node.parent.child_by_field_name("value"), node))):
                    return True
    return False


# ---------------------------------------------------------------- usage
_SDK_SUFFIXES = ("chat.completions.create", "chat.completions.parse", "responses.create", "responses.parse",
                 "messages.create", "messages.parse", "completions.create", "models.generateContent",
                 "generateContent")


_SDK_LASTS = frozenset({last(s) for s in _SDK_SUFFIXES} | AI_SDK_FUNCS | {"run", "invoke"})


def _is_sdk_call(mod: TsModule, call: Node) -> bool:
    """A provider SDK request or a Vercel `ai` call: nothing records its usage unless the caller does."""
    name = cname(mod, call)
    return name.endswith(_SDK_SUFFIXES) or last(name) in AI_SDK_FUNCS


def _agents_run(mod: TsModule, call: Node) -> bool:
    """`run(agent, input)` of `@openai/agents` (or `runner.run(...)` on its `Runner`): a whole agent run whose usage
    is on the result (`result.state.usage` / `result.runContext.usage`)."""
    if "@openai/agents" not in mod.text:
        return False
    name = cname(mod, call)
    if name == "run":
        return imports_of(mod).get("run", "").split("#")[0].startswith("@openai/agents")
    return last(name) == "run" and bool(receiver(name)) and bool(re.search(r"\bnew\s+Runner\b", mod.text))


def _is_model_request(mod: TsModule, call: Node) -> bool:
    """A request whose response carries token usage: a provider SDK or `ai` call, a LangChain chat model's
    `.invoke()` (its `AIMessage` has `usage_metadata`), an `@openai/agents` run."""
    if _is_sdk_call(mod, call):
        return is_model_call(mod, call)
    tail = last(cname(mod, call))
    if tail == "invoke":
        return is_model_call(mod, call)
    return tail == "run" and _agents_run(mod, call)


def _binding(mod: TsModule, call: Node) -> tuple[Node, Node] | None:
    """(the declarator or assignment, the bound pattern) a model call's response is stored in."""
    parent = call.parent
    while parent is not None and parent.type in ("await_expression", "parenthesized_expression", "as_expression",
                                                 "non_null_expression"):
        parent = parent.parent
    if parent is None:
        return None
    if parent.type == "variable_declarator":
        target = parent.child_by_field_name("name")
    elif parent.type == "assignment_expression":
        target = parent.child_by_field_name("left")
    else:
        return None
    return (parent, target) if target is not None else None


def _chain_dropped(mod: TsModule, call: Node) -> bool:
    """`(await client.chat.completions.create(...)).choices[0].message`: the response is reduced on the spot."""
    parent = call.parent
    while parent is not None and parent.type in ("await_expression", "parenthesized_expression"):
        parent = parent.parent
    return parent is not None and parent.type == "member_expression" and \
        mod.node_text(parent.child_by_field_name("property")) in _CONTENT_ATTRS


def _uses_dropped(mod: TsModule, fn: Node, name: str, after: int) -> bool:
    """Whether `name` is only ever projected to its content after byte `after`: never usage, never handed on."""
    used = False
    for node in iter_subtree(fn):
        if node.start_byte < after or node.type != "identifier" or mod.node_text(node) != name:
            continue
        parent = node.parent
        if parent is None:
            return False
        if parent.type in ("assignment_expression",) and same(parent.child_by_field_name("left"), node):
            break  # rebound: later uses are another value
        if parent.type == "member_expression" and same(parent.child_by_field_name("object"), node):
            if mod.node_text(parent.child_by_field_name("property")) not in _CONTENT_ATTRS | _META_ATTRS:
                return False
            top = parent
            while top.parent is not None and top.parent.type in ("member_expression", "subscript_expression") and \
                    same(top.parent.child_by_field_name("object"), top):
                top = top.parent
            above = top.parent
            called = above is not None and above.type == "call_expression" and \
                same(above.child_by_field_name("function"), top)
            if called and not re.search(r"\.(choices|content|candidates|text)\b", mod.node_text(top)):
                return False  # `res.toDataStreamResponse()`: the whole response is handed on
            used = True
            continue
        if parent.type == "subscript_expression" and same(parent.child_by_field_name("object"), node):
            used = True
            continue
        return False  # passed, returned, stored, spread or compared: it escapes this function
    return used


@dataclass(frozen=True, slots=True)
class _Dropped:
    """A model response reduced to its content inside one function."""

    call: Node
    """The model call."""
    fn: Node
    """The function it is in."""
    shown: str
    """How to name the response."""
    name: str = ""
    """The local the response is bound to, when there is one."""


_RUN_CONFIG = re.compile(r"\b(callbacks|runManager|run_manager)\b|[cC]onfig\b")
"""What a Runnable-style call's options carry when they are the run's config: the run's callback handlers."""


def _hands_run_config(mod: TsModule, call: Node) -> bool:
    """`model.invoke(prompt, config)` / `.stream(input, { callbacks })`: the request is given the run's config or
    callback handlers, so the response's usage reaches the callback layer that traces it (its end-of-request
    handler), whatever the caller keeps of it."""
    if last(cname(mod, call)) not in ("invoke", "stream", "batch", "streamEvents"):
        return False
    fn = mod.enclosing_function(call)
    for arg in mod.arguments(call)[1:]:
        texts = [code_text(mod, arg)]
        if arg.type == "identifier":
            texts += [code_text(mod, v) for v in mod.bindings(fn).get(mod.node_text(arg), [])]
        if any(_RUN_CONFIG.search(t) for t in texts):
            return True
    return False


def _dropped_responses(mod: TsModule) -> Iterator[_Dropped]:
    for call in calls_named(mod, _SDK_LASTS):
        if not _is_model_request(mod, call) or _hands_run_config(mod, call):
            continue
        fn = mod.enclosing_function(call)
        if fn is None or _USAGE_WORDS.search(code_text(mod, fn)) or re.search(
                r"\bonFinish\b|\bonStepFinish\b|experimental_telemetry", code_text(mod, call)):
            continue
        if _chain_dropped(mod, call):
            yield _Dropped(call, fn, "the response")
            continue
        bound = _binding(mod, call)
        if bound is None:
            continue
        holder, target = bound
        if target.type == "object_pattern":
            if any(c.type == "rest_pattern" for c in target.named_children):
                continue
            yield _Dropped(call, fn, f"`{' '.join(mod.node_text(target).split())}`")
        elif target.type == "identifier" and _uses_dropped(mod, fn, mod.node_text(target), holder.end_byte):
            yield _Dropped(call, fn, f"`{mod.node_text(target)}`", mod.node_text(target))
    yield from _dropped_http_bodies(mod)


_HTTP_LASTS = ("fetch", "post", "request", "axios")


def _dropped_http_bodies(mod: TsModule) -> Iterator[_Dropped]:
    """A chat request made over raw HTTP (`fetch(`${base}/chat/completions`, …)`, `axios.post(…/v1/messages, …)`)
    whose JSON body (`await res.json()`, axios's `{ data }`) is only read for its content."""
    if "completions" not in mod.text and "messages" not in mod.text and "responses" not in mod.text:
        return
    for call in calls_named(mod, _HTTP_LASTS):
        if _is_model_request(mod, call) or not is_model_call(mod, call) or "stream" in code_text(mod, call):
            continue
        fn = mod.enclosing_function(call)
        bound = _binding(mod, call)
        if fn is None or bound is None or _USAGE_WORDS.search(code_text(mod, fn)):
            continue
        holder, target = bound
        body: str | None = None
        after = holder.end_byte
        if target.type == "object_pattern":  # axios: `const { data } = await axios.post(...)`
            for child in target.named_children:
                if child.type == "shorthand_property_identifier_pattern" and mod.node_text(child) == "data":
                    body = "data"
                elif child.type == "pair_pattern" and mod.node_text(child.child_by_field_name("key")) == "data" and \
                        (value := child.child_by_field_name("value")) is not None and value.type == "identifier":
                    body = mod.node_text(value)
        elif target.type == "identifier":  # fetch: `const res = await fetch(...); const json = await res.json()`
            name = mod.node_text(target)
            for decl in nodes_in(mod, fn, "variable_declarator"):
                value = unwrap(decl.child_by_field_name("value"))
                local = decl.child_by_field_name("name")
                if decl.start_byte > after and value is not None and value.type == "call_expression" and \
                        cname(mod, value) == f"{name}.json" and local is not None and local.type == "identifier":
                    body, after = mod.node_text(local), decl.end_byte
                    break
        if body is not None and _uses_dropped(mod, fn, body, after):
            yield _Dropped(call, fn, f"`{body}` (the response body)", body)


def _response_record(mod: TsModule, dropped: _Dropped) -> Node | None:
    """The event record (`events.emit({...})`, `trace.push({...})`, a structured log) that records something of the
    response (`responseId: resp.id`, its finish reason) after the call: where usage was left out."""
    if not dropped.name:
        return None
    pattern = re.compile(rf"\b{re.escape(dropped.name)}\b")
    aliases = {dropped.name}
    for decl in nodes_in(mod, dropped.fn, "variable_declarator"):
        value, target = decl.child_by_field_name("value"), decl.child_by_field_name("name")
        if value is not None and target is not None and target.type == "identifier" and \
                decl.start_byte > dropped.call.end_byte and pattern.search(code_text(mod, value)):
            aliases.add(mod.node_text(target))  # `const choice = resp.choices[0]`
    alias = re.compile(r"\b(" + "|".join(re.escape(a) for a in aliases) + r")\b")
    for call in nodes_in(mod, dropped.fn, "call_expression"):
        if call.start_byte < dropped.call.end_byte or mod.enclosing_function(call) != dropped.fn:
            continue
        for arg in mod.arguments(call):
            for obj in _object_args(arg):
                if _event_sink(mod, obj) is not None and alias.search(code_text(mod, obj)):
                    return call
    return None


@rule(CheckId.C15, lang="typescript", name="usage-never-read")
def usage_never_read(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a model response reduced to its content (`res.choices[0].message`, `const { text } = await
    generateText(...)`) in a project where no module ever reads token usage (`usage`, `input_tokens`,
    `promptTokens`, …). What a run cost and how close it came to the context limit can then never be
    reconstructed."""
    if is_test_module(mod):
        return
    facts = _facts(project)
    if facts.reads_usage:
        return
    for dropped in _dropped_responses(mod):
        hint = f"verify that the `{facts.tracing}` integration records token usage for this call" \
            if facts.tracing else ""
        record = _response_record(mod, dropped)
        yield Hit(
            node=record if record is not None else dropped.call,
            verdict=Verdict.SUSPECTED if hint else Verdict.CONFIRMED,
            claim=f"`{fn_label(mod, dropped.fn)}` records {dropped.shown} in an event without its token usage, and "
                  "no module of the project ever reads usage" if record is not None else
                  f"`{fn_label(mod, dropped.fn)}` keeps only the content of {dropped.shown} and no module of the "
                  "project ever reads token usage",
            consequence="no record says what a run cost or how close it came to the context limit, and cache "
                        "reads/writes cannot be checked",
            direction="record `response.usage` (input, output, cache read and cache write tokens) with each request "
                      "event",
            confirm_hint=hint,
        )


@rule(CheckId.C15, lang="typescript", name="response-usage-ignored")
def response_usage_ignored(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a provider response used only for its content within one function (never stored, passed on, returned
    or read for `usage`) in a module that accounts usage for its other requests. This request's tokens are lost
    at that line: a hole in otherwise recorded usage."""
    facts = _facts(project)
    if is_test_module(mod) or not facts.reads_usage or (facts.tracing and not _module_reads_usage(mod)):
        return
    for dropped in _dropped_responses(mod):
        yield Hit(
            node=dropped.call,
            claim=f"only the content of {dropped.shown} is used in `{fn_label(mod, dropped.fn)}`: its token usage is "
                  "never read and the response does not leave the function",
            consequence="this request's tokens (and cache reads/writes) are missing from every record of the run",
            direction="record the response's `usage` with the request event before extracting the content",
        )
