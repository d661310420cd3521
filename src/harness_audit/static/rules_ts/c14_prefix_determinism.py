"""C14 · Prompt prefix determinism — TypeScript/JavaScript rules.

Shapes detected:
- `volatile-value-in-system-prompt`: `new Date()`, `Date.now()`, `dayjs()`/luxon/`Temporal.Now`, `crypto.randomUUID()`,
  `Math.random()` (also as a sort comparator), lodash `shuffle`/`sampleSize`, `process.pid`, `os.hostname()` or a
  listing of the cwd or the workspace (`readdirSync(root)`) flows into the system prompt (a `system`/`instructions` value, a function a framework calls for
  it, a `["system", text]` tuple, a message placed before the history) or the tool definitions (followed through
  locals, module constants, `this` fields, array parts and helper returns, three hops at most). A `system:` key
  holding a metadata object (`system: { hostname, platform }` of a log record) is not a prompt.
- `unsorted-tool-registry-in-request`: `Object.keys(registry)` / `[...registry.values()]` / `{ ...registry }` /
  `for (… of registry)` feeding the tool list (or a tool listing in the system prompt) unsorted, where the registry
  is filled in discovery or completion order (`readdir`/`glob` loops, Deno `Deno.readDir`/std `expandGlob`, also
  over a local assigned the listing later,
  per-item callbacks that run concurrently and fill after an `await` or in a `.then`), directly, through a registry
  class's `register(tool)` method (called from outside or as `this.register(…)` inside the class), or returned
  by a loader; a loader's registry handed on whole (`tools: { ...(await loadTools()) }`) is cited at its fill. A class
  field filled by a method that concurrent per-item loads reach after an `await` (`Promise.all(ms.map((m) =>
  this.load(m)))` → `await import(…)` → `this.register(tool)`) counts as filled in completion order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from tree_sitter import Node

from harness_audit.findings import CheckId, Verdict, evidence_is_thin
from harness_audit.static.lang.typescript import FUNCTION_TYPES, TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts._agent_idioms import (
    FuncRef,
    Key,
    callers_of,
    calls_named,
    cname,
    code_text,
    enclosing_class,
    function_defs,
    imports_of,
    is_test_module,
    iter_subtree,
    key,
    last,
    memo,
    nodes_in,
    receiver,
    resolve_call,
    same,
    string_value,
    unwrap,
)

_PROMPT_PARTS = {"text", "content", "parts", "role", "type", "cache_control", "cacheControl", "prompt", "template",
                 "messages"}
"""Keys of an object that is a prompt (`systemInstruction: { parts: [{ text }] }`), not a metadata record."""
_SYSTEM_KEYS = {"system", "systemPrompt", "system_prompt", "instructions", "systemInstruction", "system_instruction",
                "systemMessage", "system_message", "preamble", "developerMessage", "developer_message"}
_TOOLS_KEYS = {"tools", "functions", "toolDefinitions", "tool_definitions"}
_SYSTEM_NAME = re.compile(r"(^|_)(system|sys)_?(prompt|message|msg|instructions?|text|content|template)s?$|"
                          r"^system$|^SYSTEM$|^instructions$|^INSTRUCTIONS$|preamble$", re.I)
_TOOLSPEC_NAME = re.compile(r"((tool|function)_?(spec|schema|definition|def|param|declaration)s?$|^tools$|"
                            r"^this\.tools$|tools_?(schema|spec|param|json|list)s?$)", re.I)
_PREFIX_FN = re.compile(r"(system_?(prompt|message|msg|instructions?)|sys_?prompt|^_?(get|build|make|render|format|"
                        r"create|compose|generate)_?(the_?)?(system|instructions|preamble|persona)$|^_?instructions$|"
                        r"preamble|(tool|function)s?_?(specs?|schemas?|definitions?|defs|params|declarations?)$|"
                        r"^_?(get|list|build)_?tools$|toOpenAiTools|toAnthropicTools|tools_?(schema|spec)s?$)", re.I)
_TOOLS_FN = re.compile(r"(tool|function)s?_?(specs?|schemas?|definitions?|defs|params|declarations?)$|"
                       r"^_?(get|list|build)_?tools$|to\w*tools$|tools_?(schema|spec)s?$", re.I)
_META_KEYS = {"timestamp", "createdAt", "created_at", "created", "updatedAt", "time", "ts", "id", "runId", "run_id",
              "requestId", "request_id", "traceId", "trace_id", "spanId", "metadata", "messageId", "eventId",
              "headers", "idempotencyKey", "cacheKey", "prompt_cache_key", "promptCacheKey", "seed", "sessionId",
              "session_id", "startedAt", "key"}
_TEXT_CARRIERS = re.compile(r"^(String|toString|join|concat|format|replace|replaceAll|trim|trimStart|trimEnd|"
                            r"toUpperCase|toLowerCase|padStart|padEnd|stringify|render|dedent|stripIndent|"
                            r"stripIndents|oneLine|html|md|template|fill|wrap|compile|t|f|toISOString|toLocaleString|"
                            r"toLocaleDateString|toLocaleTimeString|toDateString|toTimeString|toUTCString|toJSON|"
                            r"filter|flat)$|prompt|message|instruction|template|render|format|text|section|block|"
                            r"header|describe|summar", re.I)
_SPEC_CARRIERS = re.compile(r"spec|schema|tool|function|definition|param|json|stringify|dump|map|flatMap|filter|from|"
                            r"concat|flat|format|prompt|message|instruction|template|render|text|join|String|entries|"
                            r"values|keys|convert|to[A-Z]", re.I)
_VOLATILE_CALLS = {"Date": "the current date and time", "Date.now": "the current time", "performance.now": "the current time",
                   "crypto.randomUUID": "a random uuid", "randomUUID": "a random uuid", "Math.random": "a random value",
                   "os.hostname": "the host name", "hostname": "the host name", "process.hrtime": "the current time",
                   "process.hrtime.bigint": "the current time", "process.uptime": "the process uptime",
                   "os.uptime": "the machine uptime", "crypto.randomBytes": "random bytes",
                   "randomBytes": "random bytes", "nanoid": "a random id", "uuid": "a random uuid",
                   "uuidv4": "a random uuid", "v4": "a random uuid", "uuid.v4": "a random uuid",
                   "ulid": "a time-based id", "cuid": "a random id", "createId": "a random id",
                   "os.freemem": "the free memory", "os.loadavg": "the load average",
                   "dayjs": "the current date and time", "moment": "the current date and time",
                   "DateTime.now": "the current date and time", "DateTime.local": "the current date and time",
                   "Temporal.Now.instant": "the current time", "Temporal.Now.plainDateTimeISO": "the current time",
                   "Temporal.Now.zonedDateTimeISO": "the current time", "Temporal.Now.plainDateISO": "the current date"}
_VOLATILE_CALLS.update({"shuffle": "a random order", "_.shuffle": "a random order", "sampleSize": "a random sample",
                        "_.sampleSize": "a random sample", "_.sample": "a random choice"})
_VOLATILE_CALLS.update({"Deno.hostname": "the host name", "Deno.osUptime": "the machine uptime",
                        "Bun.randomUUIDv7": "a time-based id"})
_NOW_WITHOUT_ARGS = {"dayjs", "moment", "DateTime.local"}
"""Date libraries that give the current time only when called without a date."""
_VOLATILE_MODULES = {"randomUUID": ("crypto", "node:crypto"), "hostname": ("os", "node:os"),
                     "randomBytes": ("crypto", "node:crypto"), "nanoid": ("nanoid",), "uuid": ("uuid",),
                     "uuidv4": ("uuid",), "v4": ("uuid",), "ulid": ("ulid",), "cuid": ("cuid", "@paralleldrive/cuid2"),
                     "createId": ("@paralleldrive/cuid2",), "dayjs": ("dayjs",), "moment": ("moment",),
                     "DateTime.now": ("luxon",), "DateTime.local": ("luxon",),
                     "shuffle": ("lodash", "lodash-es", "lodash/shuffle", "es-toolkit", "radash", "remeda"),
                     "sampleSize": ("lodash", "lodash-es", "lodash/sampleSize", "es-toolkit"),
                     "_.shuffle": ("lodash", "lodash-es", "underscore"), "_.sampleSize": ("lodash", "lodash-es"),
                     "_.sample": ("lodash", "lodash-es", "underscore")}
_VOLATILE_LASTS = frozenset({s.rsplit(".", 1)[-1] for s in _VOLATILE_CALLS} | {"readdirSync", "readdir", "opendir",
                                                                                 "readDir", "readDirSync",
                                                                                 "opendirSync"})
_PER_PROCESS = {"the host name", "the process id"}
_VOLATILE_WORDS = ("Date", "random", "readDir", "Deno.hostname", "osUptime", "uuid", "UUID", "hostname", "pid", "nanoid", "readdir", "uptime", "hrtime", "ulid",
                   "cuid", "createId", "freemem", "loadavg", "dayjs", "moment", "Temporal", "shuffle", "sample")
"""Words a module with a volatile source contains (substring tests: a regex alternation over a large file is slow)."""
_LISTING_CALLS = {"readdirSync", "readdir", "fs.readdirSync", "fs.readdir", "fs.promises.readdir", "fsp.readdir",
                  "opendir", "opendirSync", "Deno.readDir", "Deno.readDirSync"}
_DISCOVERY = re.compile(r"\b(readdirSync|readdir|opendir|opendirSync|globSync|glob|fg|fastGlob|fastglob|globby|"
                        r"import\.meta\.glob|walk|walkSync|readDir|readDirSync|expandGlob|expandGlobSync)\s*[(.<]|"
                        r"\bimport\s*\(")
"""Directory listings and globs (Node `fs`, Deno `Deno.readDir`/std `expandGlob`/`walk`, glob packages) and dynamic
imports: orders the file system or the module loader chooses."""
_DISCOVERY_WORDS = ("readdir", "readDir", "opendir", "glob", "Glob", "fg(", "fastGlob", "walk", "listTools", "import(", "Promise.all",
                    "Promise.race", "Promise.any", "forEach(async")
_FILL_METHODS = ("set", "add", "push", "register", "registerTool", "addTool", "unshift")
_MAX_HOPS = 3


@dataclass(frozen=True, slots=True)
class _Sink:
    """Where a traced value lands on the prefix path."""

    node: Node
    """The sink node (a pair, a declarator, a return, a message object)."""
    what: str
    """How to describe it."""
    kind: str
    """`system` or `tools`."""


# ---------------------------------------------------------------- sinks
def _role_of(mod: TsModule, obj: Node) -> str | None:
    return string_value(mod, mod.object_keys(obj).get("role"))


def _sink_at(mod: TsModule, node: Node, child: Node, ordering: bool) -> _Sink | None:
    """Whether `node` (reached from `child`) is a prefix sink."""
    kind = node.type
    if kind == "object" and child.type == "shorthand_property_identifier":
        k = mod.node_text(child)
        if k in _SYSTEM_KEYS:
            return _Sink(node, f"`{k}`", "system")
        if k in _TOOLS_KEYS:
            return _Sink(node, f"`{k}`", "tools")
        return None
    if kind == "pair":
        k = mod.node_text(node.child_by_field_name("key")).strip("'\"")
        if k in _SYSTEM_KEYS:
            value = node.child_by_field_name("value")
            if value is not None and value.type == "object" and not (set(mod.object_keys(value)) & _PROMPT_PARTS):
                return None  # `system: { hostname: os.hostname(), platform }`: a metadata record, not a prompt
            return _Sink(node, f"`{k}:`", "system")
        if k in _TOOLS_KEYS:
            return _Sink(node, f"`{k}:`", "tools")
        obj = node.parent
        if obj is not None and obj.type == "object" and _role_of(mod, obj) in ("system", "developer") and \
                k in ("content", "text", "parts"):
            return _Sink(obj, f"the {_role_of(mod, obj)} message", "system")
        if obj is not None and obj.type == "object" and _role_of(mod, obj) in ("user", "assistant") and \
                k in ("content", "text", "parts") and _before_history(mod, obj):
            return _Sink(obj, f"a {_role_of(mod, obj)} message placed before the conversation history", "system")
        return None
    if kind in ("variable_declarator", "public_field_definition", "field_definition", "assignment_expression"):
        target = node.child_by_field_name("name") or node.child_by_field_name("property") or \
            node.child_by_field_name("left")
        name = mod.dotted(target) if target is not None else ""
        tail = last(name)
        if tail and _SYSTEM_NAME.search(tail):
            return _Sink(node, f"`{tail}`", "system")
        if tail and _TOOLSPEC_NAME.search(name if name.startswith("this.") else tail):
            return _Sink(node, f"`{tail}`", "tools")
        return None
    if kind in ("return_statement", "arrow_function"):
        if kind == "arrow_function" and not same(node.child_by_field_name("body"), child):
            return None
        fn = node if kind == "arrow_function" else mod.enclosing_function(node)
        if fn is None:
            return None
        name = mod.function_name(fn)
        if _PREFIX_FN.search(name):
            tools = bool(_TOOLS_FN.search(name))
            return _Sink(node, f"the return value of `{name}()`", "tools" if tools else "system")
        return None
    if kind == "new_expression" and last(cname(mod, node)) in ("SystemMessage", "SystemMessagePromptTemplate"):
        return _Sink(node, f"`{cname(mod, node)}`", "system")
    if kind == "array" and len(node.named_children) == 2 and same(node.named_children[1], child) and \
            string_value(mod, node.named_children[0]) in ("system", "developer"):
        # LangChain's message tuple: `["system", text]` in `ChatPromptTemplate.fromMessages([...])`
        return _Sink(node, f"the `[\"{string_value(mod, node.named_children[0])}\", …]` message", "system")
    return None


def _before_history(mod: TsModule, message: Node) -> bool:
    """A message literal that an array lists before the spread history (`[{ role: "user", content: … },
    ...history, latest]`): it is part of the prefix of every request, not the newest message."""
    array = message.parent
    if array is None or array.type != "array":
        return False
    later = [c for c in array.named_children if c.start_byte > message.end_byte]
    return any(c.type == "spread_element" and _HISTORY_NAME.search(mod.node_text(c)) for c in later)


_HISTORY_NAME = re.compile(r"(messages|history|conversation|transcript|turns|msgs|thread)\b", re.I)


# ---------------------------------------------------------------- carriers
def _is_text_binary(mod: TsModule, node: Node) -> bool:
    """`"a" + x`: a `+` chain with a string in it (not clock arithmetic)."""
    op = node.child_by_field_name("operator")
    if op is None or mod.node_text(op) != "+":
        return False
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type in ("string", "template_string"):
            return True
        if cur.type == "binary_expression" and mod.node_text(cur.child_by_field_name("operator")) == "+":
            stack.extend(c for c in (cur.child_by_field_name("left"), cur.child_by_field_name("right")) if c)
        elif cur.type == "parenthesized_expression":
            stack.extend(cur.named_children)
    return False


def _carries(mod: TsModule, parent: Node, child: Node, ordering: bool) -> bool:
    """Whether `parent`'s value carries on the value of `child`."""
    kind = parent.type
    if kind in ("template_substitution", "template_string", "parenthesized_expression", "await_expression",
                "as_expression", "satisfies_expression", "non_null_expression", "spread_element", "array",
                "sequence_expression"):
        return True
    if kind == "ternary_expression":
        return not same(parent.child_by_field_name("condition"), child)
    if kind == "binary_expression":
        op = mod.node_text(parent.child_by_field_name("operator"))
        # arithmetic on a volatile value stays volatile (`Math.random() - 0.5`, `Date.now() - start`)
        return op in ("??", "||") or _is_text_binary(mod, parent) or (not ordering and op in ("-", "*", "/", "%"))
    if kind == "member_expression":
        return same(parent.child_by_field_name("object"), child) and \
            mod.node_text(parent.child_by_field_name("property")) not in ("length", "size")
    if kind == "call_expression":
        fn = parent.child_by_field_name("function")
        name = cname(mod, parent)
        if ordering and last(name) in ("sort", "toSorted", "sortBy", "orderBy"):
            return False
        if same(fn, child):
            return not (ordering and re.search(r"\.(sort|toSorted)\b", mod.node_text(fn)))
        args = parent.child_by_field_name("arguments")
        if args is not None and args.type == "template_string":
            return True  # a tagged template: `dedent\`...\``
        pattern = _SPEC_CARRIERS if ordering else _TEXT_CARRIERS
        return bool(pattern.search(last(name)))
    if kind == "arguments":
        return True  # decided at the call
    if kind == "pair":
        k = mod.node_text(parent.child_by_field_name("key")).strip("'\"")
        return same(parent.child_by_field_name("value"), child) and k not in _META_KEYS
    if kind == "object":
        return _role_of(mod, parent) not in ("user", "assistant", "tool", "function")
    if kind in ("arrow_function",):
        return same(parent.child_by_field_name("body"), child)
    return False


# ---------------------------------------------------------------- tracing
@dataclass(slots=True)
class _Tracer:
    """Follows a value up to a sink, through names, fields, array parts and helper returns."""

    mod: TsModule
    project: TsProject
    ordering: bool
    seen: set[Key]
    calls: list[tuple[TsModule, Node, Node]] = field(default_factory=list[tuple[TsModule, Node, Node]])
    """The calls entered through an argument (module, call, callee): a return there goes back to that call only."""
    via: str = ""
    """The object key the value was last placed under (`{ promptId }`): a later destructuring of that object
    (`const { system, promptId } = options`) follows only that key, not its sibling fields."""

    def trace(self, mod: TsModule, start: Node, hops: int) -> _Sink | None:
        k = key(mod, start)
        if k in self.seen:
            return None
        self.seen.add(k)
        child = start
        for parent in mod.ancestors(start):
            sink = _sink_at(mod, parent, child, self.ordering)
            if sink is not None:
                return sink
            kind = parent.type
            if kind in ("variable_declarator", "assignment_expression", "public_field_definition",
                        "field_definition", "augmented_assignment_expression"):
                return self._through_name(mod, parent, hops) if hops > 0 else None
            if kind == "return_statement" or (kind == "arrow_function" and same(
                    parent.child_by_field_name("body"), child)):
                return self._through_return(mod, parent, hops) if hops > 0 else None
            if kind == "arguments" and parent.parent is not None and parent.parent.type == "call_expression":
                call = parent.parent
                if last(cname(mod, call)) in ("push", "unshift", "add", "set", "assign") and hops > 0:
                    recv = receiver(cname(mod, call))
                    if recv:
                        return self.through_reads(mod, call, recv, hops - 1)
                if not _carries(mod, call, child, self.ordering):
                    return self._into_callee(mod, call, parent, child, hops) if hops > 0 else None
                child = call
                continue
            if kind == "arguments":
                return None
            if not _carries(mod, parent, child, self.ordering):
                return None
            if kind == "pair" and same(parent.child_by_field_name("value"), child):
                self.via = mod.node_text(parent.child_by_field_name("key")).strip("'\"`")
            elif kind == "object" and child.type == "shorthand_property_identifier":
                self.via = mod.node_text(child)
            child = parent
        return None

    def _through_name(self, mod: TsModule, holder: Node, hops: int) -> _Sink | None:
        target = holder.child_by_field_name("name") or holder.child_by_field_name("left") or \
            holder.child_by_field_name("property")
        if target is None:
            return None
        if holder.type in ("public_field_definition", "field_definition"):
            name = f"this.{mod.node_text(target)}"
        elif target.type in ("identifier", "member_expression"):
            name = mod.dotted(target)
        elif target.type == "object_pattern" and self.via:
            wanted, self.via = self.via, ""
            found: _Sink | None = None
            for part in target.named_children:
                key_node = part.child_by_field_name("key") if part.type == "pair_pattern" else part
                if part.type == "rest_pattern" or mod.node_text(key_node).strip("'\"`") == wanted:
                    for ident in iter_subtree(part.child_by_field_name("value") if part.type == "pair_pattern"
                                              else part):
                        if ident.type in ("identifier", "shorthand_property_identifier_pattern"):
                            found = found or self.through_reads(mod, holder, mod.node_text(ident), hops - 1)
            return found
        elif target.type in ("object_pattern", "array_pattern"):
            found = None
            for ident in iter_subtree(target):
                if ident.type in ("identifier", "shorthand_property_identifier_pattern"):
                    found = found or self.through_reads(mod, holder, mod.node_text(ident), hops - 1)
            return found
        else:
            return None
        if not name or "()" in name:
            return None
        if name.count(".") > 1 or (("." in name) and not name.startswith("this.")):
            return None
        return self.through_reads(mod, holder, name, hops - 1)

    def through_reads(self, mod: TsModule, at: Node, name: str, hops: int) -> _Sink | None:
        """Follow every read of `name` after `at` (for ordering: none, once the list is sorted in place)."""
        reads = _reads(mod, at, name)
        if self.ordering and any(_sorted_in_place(mod, r) for r in reads):
            return None
        via = self.via
        for read in reads:
            self.via = via
            found = self.trace(mod, read, hops)
            if found is not None:
                return found
        return None

    def _into_callee(self, mod: TsModule, call: Node, args: Node, arg: Node, hops: int) -> _Sink | None:
        """A value passed to a project function: follow the matching parameter inside it."""
        index = next((i for i, a in enumerate(args.named_children) if same(a, arg)), None)
        if index is None:
            return None
        for target in resolve_call(mod, self.project, call):
            param = _param_at(target.module, target.node, index)
            if param is not None:
                self.calls.append((mod, call, target.node))
                try:
                    found = self.through_reads(target.module, param, target.module.node_text(param), hops - 1)
                finally:
                    self.calls.pop()
                if found is not None:
                    return found
        return None

    def _through_return(self, mod: TsModule, ret: Node, hops: int) -> _Sink | None:
        fn = ret if ret.type == "arrow_function" else mod.enclosing_function(ret)
        if fn is None:
            return None
        if self.calls and same(self.calls[-1][2], fn):
            # the value came in through an argument of one call: it returns to that call, not to every caller of
            # a shared helper
            entered = self.calls.pop()
            try:
                return self.trace(entered[0], entered[1], hops - 1)
            finally:
                self.calls.append(entered)
        callers = callers_of(self.project, mod, fn)
        for other, call in callers:
            found = self.trace(other, call, hops - 1)
            if found is not None:
                return found
        comparator = fn.parent.parent if fn.parent is not None and fn.parent.type == "arguments" else None
        if not self.ordering and comparator is not None and comparator.type == "call_expression" and \
                last(cname(mod, comparator)) in ("sort", "toSorted"):
            # a random comparator (`examples.sort(() => Math.random() - 0.5)`) shuffles the list it sorts
            return self.trace(mod, comparator, hops - 1)
        if not callers and not self.ordering and fn.type in ("arrow_function", "function_expression") and \
                mod.function_name(fn) == "<anonymous>":
            # a function nobody here calls, handed on as a value: a framework calls it to build the system prompt
            # (`instructions: (ctx) => …`, or returned by `makeInstructions(role)`)
            found = self.trace(mod, fn, hops - 1)
            if found is not None and found.kind == "system":
                return found
        return None


def _param_at(mod: TsModule, fn: Node, index: int) -> Node | None:
    """The identifier of a function's `index`-th parameter (None for patterns and rest parameters)."""
    params = fn.child_by_field_name("parameters")
    if params is None:
        single = fn.child_by_field_name("parameter")  # `x => ...`
        return single if index == 0 and single is not None and single.type == "identifier" else None
    items = [p for p in params.named_children if p.type != "comment"]
    if index >= len(items):
        return None
    item = items[index]
    if item.type in ("required_parameter", "optional_parameter"):
        item = item.child_by_field_name("pattern") or item
    if item.type == "assignment_pattern":
        item = item.child_by_field_name("left") or item
    return item if item.type == "identifier" else None


def _sorted_in_place(mod: TsModule, read: Node) -> bool:
    parent = read.parent
    return parent is not None and parent.type == "member_expression" and \
        mod.node_text(parent.child_by_field_name("property")) in ("sort", "reverse") and \
        same(parent.child_by_field_name("object"), read)


def _reads(mod: TsModule, at: Node, name: str) -> list[Node]:
    """Reads of `name` after `at`: in the same function for a local, in the class for `this.x`, in the module
    for a module-level name."""
    if name.startswith("this."):
        scope = enclosing_class(mod, at)
        after = 0
    else:
        scope = mod.enclosing_function(at)
        after = at.end_byte
        if scope is None:
            scope = mod.tree.root_node
            after = 0
    if scope is None:
        return []
    out: list[Node] = []
    # a read may follow a spread (`...name`), never a member dot (`other.name`)
    word = re.compile(rb"(?:(?<=\.\.\.)|(?<![\w$.]))" + re.escape(name.encode("utf-8")).replace(rb"\.", rb"\s*\??\.\s*") +
                      rb"(?![\w$])")
    root = mod.tree.root_node
    start = max(after, scope.start_byte)
    for m in word.finditer(mod.source, start, scope.end_byte):
        node = root.descendant_for_byte_range(m.start(), m.end())
        while node is not None and node.type not in ("identifier", "shorthand_property_identifier",
                                                     "member_expression", "this"):
            node = node.parent if node.end_byte - node.start_byte < m.end() - m.start() else None
        if node is None:
            continue
        if "." in name:
            while node is not None and not (node.type == "member_expression" and mod.dotted(node) == name):
                node = node.parent if node.parent is not None and node.parent.start_byte == m.start() else None
            if node is None:
                continue
        elif node.type not in ("identifier", "shorthand_property_identifier"):
            continue
        if not _is_binding(node):
            out.append(node)
    return out


def _is_binding(node: Node) -> bool:
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "variable_declarator" and same(parent.child_by_field_name("name"), node):
        return True
    return parent.type in ("assignment_expression", "augmented_assignment_expression") and \
        same(parent.child_by_field_name("left"), node)


# ---------------------------------------------------------------- volatile sources
_WORKSPACE_DIR = re.compile(r"^(root|workspace\w*|workDir|workdir|work_dir|cwd|projectDir|project_dir|projectRoot|"
                            r"project_root|repoRoot|repo_root|repoDir|rootDir|root_dir|baseDir|workspaceRoot)$", re.I)
"""A directory the agent works in (`readdirSync(root)`, `readdir(this.workspace)`): its listing changes as the agent
creates files. The package's own directory (`__dirname`, `import.meta`) is fixed per install and not counted."""
_PACKAGE_DIR = re.compile(r"__dirname|import\.meta|fileURLToPath")


def _volatile_sources(mod: TsModule) -> Iterator[tuple[Node, str]]:
    """(node, what it is) for each read of the clock, a random value, the pid, the host name or a cwd listing."""
    imports = imports_of(mod)
    for node in mod.nodes("new_expression"):
        if cname(mod, node) == "Date" and (not mod.arguments(node) or re.fullmatch(
                r"\(\s*Date\.now\(\)\s*\)", mod.node_text(node.child_by_field_name("arguments")) or "")):
            yield node, "the current date and time"
    for call in calls_named(mod, _VOLATILE_LASTS):
        name = cname(mod, call)
        what = _VOLATILE_CALLS.get(name)
        if what is not None:
            wanted = _VOLATILE_MODULES.get(name)
            if wanted is not None and imports.get(name.split(".")[0], "").split("#")[0] not in wanted:
                continue
            if name in _NOW_WITHOUT_ARGS and mod.arguments(call):
                continue
            if name.startswith("os.") and imports.get("os", "").split("#")[0] not in ("os", "node:os"):
                continue
            yield call, what
            continue
        if name in _LISTING_CALLS or last(name) in ("readdirSync", "readdir"):
            args = mod.arguments(call)
            if args and re.fullmatch(r"(process|Deno)\.cwd\(\)|['\"]\.\/?['\"]|cwd", mod.node_text(args[0])):
                yield call, "a listing of the working directory"
            elif args and _WORKSPACE_DIR.search(last(mod.dotted(args[0]) or "")) and \
                    not _PACKAGE_DIR.search(mod.node_text(args[0])):
                yield call, "a listing of the workspace (it changes whenever a file is created there)"
    if "process.pid" in mod.text:
        for m in re.finditer(r"\bprocess\.pid\b", mod.text):
            start = len(mod.text[:m.start()].encode("utf-8"))
            node = mod.tree.root_node.descendant_for_byte_range(start, start + len("process.pid"))
            while node is not None and node.type != "member_expression":
                node = node.parent
            if node is not None and mod.node_text(node) == "process.pid":
                yield node, "the process id"


@rule(CheckId.C14, lang="typescript", name="volatile-value-in-system-prompt")
def volatile_value_in_system_prompt(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags the current time or date, a uuid, a random value, the pid, the host name or a listing of the cwd that
    flows into the system prompt or the tool definitions: every request (or every process) then starts with
    different bytes and the provider's prefix cache never hits.
    """
    if is_test_module(mod) or not any(w in mod.text for w in _VOLATILE_WORDS):
        return
    found: dict[tuple[object, ...], tuple[Node, str, _Sink]] = {}
    for node, what in _volatile_sources(mod):
        tracer = _Tracer(mod, project, False, set())
        sink = tracer.trace(mod, node, _MAX_HOPS)
        if sink is None:
            continue
        k = (*key(mod, sink.node), what)  # one finding per sink and kind of volatile value
        held = found.get(k)
        inside = mod.within(node, sink.node)
        if held is None or (inside and not mod.within(held[0], sink.node)):
            found[k] = (node, what, sink)
    for node, what, sink in sorted(found.values(), key=lambda f: f[0].start_byte):
        once = mod.enclosing_function(node) is None or _static_field(mod, node)
        uncertain = once or what in _PER_PROCESS
        yield Hit(
            node=node,
            verdict=Verdict.SUSPECTED if uncertain else Verdict.CONFIRMED,
            claim=f"`{' '.join(code_text(mod, node).split())[:60]}` ({what}) flows into {sink.what}, part of the "
                  "cached prompt prefix",
            consequence="the prefix differs between requests (or processes), so the provider's prompt cache never "
                        "hits and every request is billed at full price",
            direction="keep the system prompt and tool definitions constant; pass volatile values such as the date "
                      "in the last user message",
            confirm_hint="" if not uncertain else (
                "verify whether several processes or restarts share this prompt: the value is fixed once per "
                "process, so only the cross-process prefix differs" if once or what == "the process id" else
                "verify whether requests are served from several hosts; the prefix differs per host"),
        )


def _static_field(mod: TsModule, node: Node) -> bool:
    """A value computed once for a class (a `static` field initialiser)."""
    for anc in mod.ancestors(node):
        if anc.type in FUNCTION_TYPES:
            return False
        if anc.type in ("public_field_definition", "field_definition"):
            return mod.node_text(anc).startswith("static ")
    return False


# ---------------------------------------------------------------- unordered registries
def _fill_target(mod: TsModule, node: Node) -> str:
    """The registry a statement fills: `X.set(k, v)`, `X.add(v)`, `X.push(v)`, `X[k] = v`, `X.register(v)`."""
    if node.type == "call_expression":
        name = cname(mod, node)
        if last(name) in _FILL_METHODS and receiver(name):
            return receiver(name)
        return ""
    if node.type == "assignment_expression":
        left = node.child_by_field_name("left")
        if left is not None and left.type == "subscript_expression":
            return mod.dotted(left.child_by_field_name("object"))
    return ""


def _unsorted_discovery(mod: TsModule, expr: Node | None) -> str | None:
    """The discovery call an iterable comes from, when nothing sorts it."""
    if expr is None:
        return None
    text = code_text(mod, expr)
    if re.search(r"\.(sort|toSorted)\s*\(|\bsortBy\(|\borderBy\(", text):
        return None
    m = _DISCOVERY.search(text)
    if m is None:
        if expr.type == "identifier":
            for value in _local_values(mod, expr):
                why = _unsorted_discovery(mod, value) if not same(value, expr) else None
                if why is not None:
                    return why
        return None
    return m.group(0).rstrip("(.<").strip()


def _local_values(mod: TsModule, ident: Node) -> list[Node]:
    """What a local holds where `ident` reads it: its initialiser and the values assigned to it before
    (`let entries: string[] = []; try { entries = readdirSync(dir) } catch { return }`)."""
    name = mod.node_text(ident)
    fn = mod.enclosing_function(ident)
    out = [v] if (v := _local_value(mod, ident)) is not None else []
    for assign in nodes_in(mod, fn, "assignment_expression") if fn is not None else ():
        left = assign.child_by_field_name("left")
        value = unwrap(assign.child_by_field_name("right"))
        if assign.start_byte < ident.start_byte and left is not None and left.type == "identifier" and \
                mod.node_text(left) == name and value is not None:
            out.append(value)
    return out


def _local_value(mod: TsModule, ident: Node) -> Node | None:
    name = mod.node_text(ident)
    fn = mod.enclosing_function(ident)
    decls = nodes_in(mod, fn, "variable_declarator") if fn is not None else mod.nodes("variable_declarator")
    found: Node | None = None
    for decl in decls:
        if decl.start_byte > ident.start_byte:
            break
        if mod.node_text(decl.child_by_field_name("name")) == name:
            found = decl.child_by_field_name("value")
    return unwrap(found)


def _registries(project: TsProject) -> dict[tuple[str, str], str]:
    """Registries filled in discovery or completion order: (module path, name) → why (once per project)."""

    def build() -> dict[tuple[str, str], str]:
        out: dict[tuple[str, str], str] = {}
        plugin_order: str | None = None
        for mod in project.modules.values():
            text = mod.text
            if is_test_module(mod) or not any(w in text for w in _DISCOVERY_WORDS):
                continue
            for fill in _fills(mod):
                why = _fill_order(mod, fill) or _concurrent_method_fill(mod, fill)
                if why is not None:
                    out.setdefault((mod.path, _fill_target(mod, fill)), why)
                    for owner, field_name in _filled_fields(mod, project, fill):
                        out.setdefault((owner.path, field_name), why)
            plugin_order = plugin_order or _self_registering_plugins(mod)
        if plugin_order is not None:
            # plugins that register themselves when imported fill the registry in the order they are imported
            for mod in project.modules.values():
                if is_test_module(mod) or not any(w in mod.text for w in ("register", "add", "install", "use")):
                    continue
                for fill in _fills(mod):
                    fn = mod.enclosing_function(fill)
                    if fn is not None and _REGISTER_FN.search(mod.function_name(fn)):
                        out.setdefault((mod.path, _fill_target(mod, fill)), plugin_order)
        return out

    return memo(project, "c14_registries", build)


_REGISTER_FN = re.compile(r"^_?(register|add|use|install|define|load)\w*", re.I)


def _filled_fields(mod: TsModule, project: TsProject, fill: Node) -> Iterator[tuple[TsModule, str]]:
    """The fields a registry method fills when `fill` calls it (`registry.register(tool)` runs
    `this.tools.set(tool.name, tool)` in the `ToolRegistry` class, or `this.add(name, def)` inside the class runs
    `this.defs[name] = def`): the order of the calls is the fields' order."""
    if fill.type != "call_expression" or not receiver(cname(mod, fill)):
        return
    for target in resolve_call(mod, project, fill):
        if target.node.type != "method_definition":
            continue
        for inner in [*nodes_in(target.module, target.node, "call_expression"),
                      *nodes_in(target.module, target.node, "assignment_expression")]:
            name = _fill_target(target.module, inner)
            if name.startswith("this.") and name.count(".") == 1:
                yield target.module, name


def _fills(mod: TsModule) -> list[Node]:
    """Statements that add to a collection: `X.set(...)`, `X.add(...)`, `X.push(...)`, `X[k] = v`."""
    return [n for n in [*calls_named(mod, _FILL_METHODS), *mod.nodes("assignment_expression")] if _fill_target(mod, n)]


def _self_registering_plugins(mod: TsModule) -> str | None:
    """A loop over an unsorted discovery that only imports each file (the plugins register themselves)."""
    for loop in mod.nodes("for_in_statement"):
        why = _unsorted_discovery(mod, loop.child_by_field_name("right"))
        body = loop.child_by_field_name("body")
        if why is None or body is None:
            continue
        text = code_text(mod, body)
        if re.search(r"\bimport\s*\(|\brequire\s*\(", text) and not any(mod.within(f, body) for f in _fills(mod)):
            return f"the `{why}` order in which self-registering plugins are imported"
    return None


def _awaits_before(mod: TsModule, fn: Node, point: Node) -> bool:
    return any(n.type == "await_expression" and n.start_byte < point.start_byte
               for n in iter_subtree(fn, into_functions=False))


def _concurrent_method_fill(mod: TsModule, fill: Node) -> str | None:
    """A class field filled (`this.tools.set(...)`, directly or in a `this.register(...)` method) by a method that
    per-item callbacks run concurrently (`await Promise.all(items.map((m) => this.load(m)))`) after an asynchronous
    step on the way (`await import(...)`): each entry lands when its own load completes."""
    if not _fill_target(mod, fill).startswith("this."):
        return None
    fn = mod.enclosing_function(fill)
    if fn is None or fn.type != "method_definition":
        return None
    frontier = [(fn, fill, _awaits_before(mod, fn, fill))]
    seen = {fn.id}
    for _ in range(3):
        nxt: list[tuple[Node, Node, bool]] = []
        for method, _point, awaited in frontier:
            name = mod.function_name(method)
            for call in calls_named(mod, (name,)):
                if cname(mod, call) not in (f"this.{name}", f"this.#{name}"):
                    continue
                caller = mod.enclosing_function(call)
                if caller is None or caller.id in seen:
                    continue
                seen.add(caller.id)
                now = awaited or _awaits_before(mod, caller, call)
                parent = caller.parent
                outer = parent.parent if parent is not None and parent.type == "arguments" else None
                if now and outer is not None and outer.type == "call_expression" and \
                        last(cname(mod, outer)) in _PER_ITEM and \
                        any(a.type == "call_expression" and cname(mod, a) in _FAN_OUT for a in mod.ancestors(outer)):
                    return "the order concurrent loads complete (per-item callbacks that finish in any order)"
                if caller.type == "method_definition":
                    nxt.append((caller, call, now))
        frontier = nxt
    return None


_PER_ITEM = ("forEach", "map", "flatMap")
_CONTINUATIONS = ("then", "catch", "finally")
_FAN_OUT = ("Promise.all", "Promise.allSettled", "Promise.race", "Promise.any")


def _fill_order(mod: TsModule, fill: Node) -> str | None:
    """Why a fill happens in a non-deterministic order: inside a loop or callback over an unsorted discovery, or in
    a per-item callback run concurrently (`map` under `Promise.all`/`allSettled`, an async `forEach`) after an
    asynchronous step (an `await` before it, or a `.then` continuation around it): each item lands when its own
    request completes."""
    settled_later = False  # the fill runs in a promise continuation (`.then(...)`) below the current ancestor
    for anc in mod.ancestors(fill):
        if anc.type == "for_in_statement":
            why = _unsorted_discovery(mod, anc.child_by_field_name("right"))
            if why is not None:
                return f"`{why}` order"
        if anc.type in FUNCTION_TYPES:
            parent = anc.parent
            call = parent.parent if parent is not None and parent.type == "arguments" else None
            if call is None or call.type != "call_expression":
                continue
            method = last(cname(mod, call))
            fn = call.child_by_field_name("function")
            obj = fn.child_by_field_name("object") if fn is not None and fn.type == "member_expression" else None
            if method in _PER_ITEM and obj is not None:
                why = _unsorted_discovery(mod, obj)
                if why is not None:
                    return f"`{why}` order"
            if method in _CONTINUATIONS and obj is not None:
                if method == "then" and re.search(r"\bimport\s*\(", mod.node_text(obj)):
                    return "the order dynamic imports complete"
                settled_later = True
                continue
            if method not in _PER_ITEM:
                continue
            awaited = mod.node_text(anc).startswith("async") and any(
                n.type == "await_expression" and n.start_byte < fill.start_byte
                for n in iter_subtree(anc, into_functions=False))
            if not (awaited or settled_later):
                continue
            concurrent = (method == "forEach" and mod.node_text(anc).startswith("async")) or any(
                a.type == "call_expression" and cname(mod, a) in _FAN_OUT for a in mod.ancestors(call))
            if concurrent:
                return "the order concurrent loads complete (per-item callbacks that finish in any order)"
    return None


def _registry_of(mod: TsModule, project: TsProject, name: str, at: Node | None = None) -> str | None:
    """Why the registry `name` (as written in `mod`) is filled in a non-deterministic order, or None. With `at`,
    a local kept from a call of a project function that returns such a registry counts too
    (`const found = await loadPlugins()`)."""
    registries = _registries(project)
    why = registries.get((mod.path, name))
    if why is not None:
        return why
    if "." in name:
        return None
    if at is not None:
        why = _returned_registry(mod, project, name, at)
        if why is not None:
            return why
    target = imports_of(mod).get(name, "")
    spec, _, export = target.partition("#")
    other = project.resolve_import(mod, spec) if spec.startswith(".") else None
    if other is None:
        return None
    return registries.get((other.path, export or name))


def _returned_registry(mod: TsModule, project: TsProject, name: str, at: Node) -> str | None:
    """`const name = await f()` before `at` in its function, where `f` returns a registry filled in a
    non-deterministic order."""
    fn = mod.enclosing_function(at)
    decls = nodes_in(mod, fn, "variable_declarator") if fn is not None else mod.nodes("variable_declarator")
    value: Node | None = None
    for decl in decls:
        if decl.start_byte > at.start_byte:
            break
        if mod.node_text(decl.child_by_field_name("name")) == name:
            value = unwrap(decl.child_by_field_name("value"))
    if value is None or value.type != "call_expression":
        return None
    registries = _registries(project)
    for target in resolve_call(mod, project, value):
        for ret in nodes_in(target.module, target.node, "return_statement"):
            if target.module.enclosing_function(ret) is None or not same(target.module.enclosing_function(ret),
                                                                         target.node):
                continue
            returned = unwrap(ret.named_children[0] if ret.named_children else None)
            if returned is not None and returned.type == "identifier":
                why = registries.get((target.module.path, target.module.node_text(returned)))
                if why is not None:
                    return why
    return None


def _strip_view(name: str) -> str:
    """`tools.values()` → `tools` (the registry behind a map view)."""
    for view in (".values()", ".keys()", ".entries()"):
        if name.endswith(view):
            return name[: -len(view)]
    return name


_ITER_CALLS = {"Object.keys", "Object.values", "Object.entries", "Array.from"}
_TOOLISH = re.compile(r"(tool|function|skill|plugin|command|action|spec|schema|capabilit|mcp|server)", re.I)


def _iteration_sources(mod: TsModule, project: TsProject) -> Iterator[tuple[Node, str, str]]:
    """(node, registry name, why) for each unsorted iteration over a registry filled in non-deterministic order."""
    for call in calls_named(mod, ("keys", "values", "entries", "from")):
        name = cname(mod, call)
        args = mod.arguments(call)
        target = ""
        if name in _ITER_CALLS and args:
            target = _strip_view(mod.dotted(unwrap(args[0])))
        elif last(name) in ("values", "keys", "entries") and receiver(name) and not args:
            parent = call.parent
            if parent is not None and parent.type in ("arguments", "spread_element"):
                continue  # `Array.from(x.values())`, `[...x.values()]` are reported at the outer node
            target = receiver(name)
        if not target or "()" in target or "?" in target:
            continue
        why = _registry_of(mod, project, target)
        if why is not None:
            yield call, target, why
    for arr in mod.nodes("spread_element"):
        inner = unwrap(arr.named_children[0] if arr.named_children else None)
        if inner is None or arr.parent is None or arr.parent.type not in ("array", "object"):
            continue
        target = _strip_view(mod.dotted(inner))
        if not target or "()" in target or "?" in target:
            continue
        why = _registry_of(mod, project, target, arr)
        if why is not None:
            # `[...registry.values()]` lists the entries in fill order; `{ ...registry, x }` keeps its key order
            yield (arr.parent if arr.parent.type == "array" else arr), target, why
    for loop in mod.nodes("for_in_statement"):
        right = unwrap(loop.child_by_field_name("right"))
        if right is None:
            continue
        target = _strip_view(mod.dotted(right))
        if not target or "()" in target:
            continue
        why = _registry_of(mod, project, target)
        if why is not None:
            yield loop, target, why


@rule(CheckId.C14, lang="typescript", name="unsorted-tool-registry-in-request")
def unsorted_tool_registry_in_request(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags tool definitions (or a tool listing in the system prompt) built from `Object.keys(registry)`,
    `[...registry.values()]` or `for (… of registry)` without sorting, where the registry is filled in discovery
    or completion order (a `readdir`/`glob` loop, `Promise.all` over dynamic imports or MCP `listTools`): the tool
    order, and with it the prompt prefix, changes between processes, so the prefix cache misses.
    """
    if is_test_module(mod) or not _registries(project):
        return
    sinks: set[Key] = set()
    for node, target, why in _iteration_sources(mod, project):
        tracer = _Tracer(mod, project, True, set())
        looped = node.type == "for_in_statement"
        sink = _trace_loop(tracer, mod, node) if looped else tracer.trace(mod, node, _MAX_HOPS)
        if sink is None or key(mod, sink.node) in sinks:
            continue
        if sink.kind != "tools" and not (_TOOLISH.search(target) or _TOOLISH.search(code_text(mod, node))):
            continue  # the order of other collections (ids, names, flags) does not reach tool definitions
        sinks.add(key(mod, sink.node))
        shown = " ".join(code_text(mod, node).split("{")[0].split())[:60]
        yield Hit(
            node=_citable(mod, node),
            claim=f"{'tool definitions' if sink.kind == 'tools' else 'the system prompt'} are built from `{shown}` "
                  f"without sorting; `{target}` is filled in {why}, and that order reaches {sink.what}",
            consequence="the tool order differs between processes, so the serialised prefix differs and the "
                        "provider's prompt cache misses on every new process",
            direction="sort the tools by name before building the definitions (`[...registry.values()].sort((a, b) "
                      "=> a.name.localeCompare(b.name))`), or fill the registry in a fixed order",
        )
    for call, loader in _loader_calls(mod, project):
        # the loader's registry itself is the tool set (`tools: { ...(await mcpTools()) }`): nothing iterates it
        # at the use, so its order is the order of the fill, which is where it is cited
        sink = _Tracer(mod, project, True, set()).trace(mod, call, 0)
        if sink is None or sink.kind != "tools" or key(mod, sink.node) in sinks:
            continue
        sinks.add(key(mod, sink.node))
        where = "" if loader.module is mod else f" of {mod.path}"
        yield Hit(
            node=_citable(loader.module, loader.fill),
            module=loader.module if loader.module is not mod else None,
            claim=f"`{loader.name}()` fills `{loader.registry}` in {loader.why} and returns it unsorted; line "
                  f"{mod.line(call)}{where} hands it on as {sink.what}",
            consequence="the tool order changes from one call (and process) to the next, so the serialised prefix "
                        "differs and the provider's prompt cache misses",
            direction=f"sort the entries by name before `{loader.name}()` returns them, or insert them in a fixed "
                      "order (collect the concurrent results first, then fill in the input order)",
        )


@dataclass(frozen=True, slots=True)
class _Loader:
    """A project function that returns a registry it fills in a non-deterministic order."""

    module: TsModule
    """Where it is."""
    name: str
    """Its name."""
    registry: str
    """The local it returns."""
    fill: Node
    """The statement that fills it."""
    why: str
    """Why the order is not deterministic."""


def _loaders(project: TsProject) -> dict[Key, _Loader]:
    """Functions returning a local registry filled in discovery or completion order (once per project)."""

    def build() -> dict[Key, _Loader]:
        out: dict[Key, _Loader] = {}
        registries = _registries(project)
        for mod in project.modules.values():
            if not any(path == mod.path and "." not in name for path, name in registries):
                continue
            for ret in mod.nodes("return_statement"):
                fn = mod.enclosing_function(ret)
                value = unwrap(ret.named_children[0] if ret.named_children else None)
                if fn is None or value is None or value.type != "identifier" or mod.function_name(fn) == "<anonymous>":
                    continue
                name = mod.node_text(value)
                if (mod.path, name) not in registries:
                    continue
                for fill in _fills(mod):
                    if mod.within(fill, fn) and _fill_target(mod, fill) == name and \
                            (why := _fill_order(mod, fill)) is not None:
                        out[key(mod, fn)] = _Loader(mod, mod.function_name(fn), name, fill, why)
                        break
        return out

    return memo(project, "c14_loaders", build)


def _loader_calls(mod: TsModule, project: TsProject) -> Iterator[tuple[Node, _Loader]]:
    """Calls of `_loaders` in `mod`."""
    loaders = _loaders(project)
    if not loaders:
        return
    names = {loader.name for loader in loaders.values()}
    for call in calls_named(mod, names):
        targets = resolve_call(mod, project, call) or _aliased_targets(mod, project, call)
        for target in targets:
            loader = loaders.get(key(target.module, target.node))
            if loader is not None:
                yield call, loader
                break


_ALIAS = re.compile(r"^(@|~|#|\$lib)/")
"""A path alias of the project's own sources (`@/lib/mcp` in Next.js, `~/utils` in Nuxt/Remix)."""


def _aliased_targets(mod: TsModule, project: TsProject, call: Node) -> list[FuncRef]:
    """`f()` imported through a path alias (`import { f } from "@/lib/mcp"`): the function `f` of the project
    module the alias names (`lib/mcp.ts`, or under `src/`)."""
    name = cname(mod, call)
    spec, _, export = imports_of(mod).get(name, "").partition("#")
    if "." in name or not _ALIAS.match(spec):
        return []
    rest = _ALIAS.sub("", spec)
    wanted = export if export and export != "default" else name
    for base in (rest, f"src/{rest}", f"app/{rest}"):
        for path in (base, *(f"{base}{ext}" for ext in (".ts", ".tsx", ".js", ".mjs", ".cjs", ".mts", ".cts", ".jsx")),
                     *(f"{base}/index{ext}" for ext in (".ts", ".tsx", ".js"))):
            other = project.modules.get(path)
            if other is not None:
                return [FuncRef(other, f, wanted) for f in function_defs(other).get(wanted, [])
                        if f.type != "method_definition"]
    return []


def _citable(mod: TsModule, node: Node) -> Node:
    """`node`, or the nearest enclosing expression whose first lines quote real code: a lone `...registry,` line
    of an object literal is too thin to stand as evidence, the `tools = {` it opens is not."""
    cur: Node | None = node
    for _ in range(4):
        if cur is None or cur.type in FUNCTION_TYPES:
            break
        line = mod.line(cur)
        if not evidence_is_thin(mod.excerpt(line, min(mod.end_line(cur), line + 2)).splitlines()):
            return cur
        cur = cur.parent
    return node


def _trace_loop(tracer: _Tracer, mod: TsModule, loop: Node) -> _Sink | None:
    """A `for (… of registry)` loop: follow what its body writes (`defs.push(...)`, `specs[k] = ...`)."""
    body = loop.child_by_field_name("body")
    if body is None:
        return None
    for node in iter_subtree(body, into_functions=False):
        target = _fill_target(mod, node) if node.type in ("call_expression", "assignment_expression") else ""
        if not target or "." in target.replace("this.", "", 1):
            continue
        sink = _sink_at(mod, node, node, True)
        if sink is not None:
            return sink
        found = tracer.through_reads(mod, loop, target, _MAX_HOPS - 1)
        if found is not None:
            return found
    return None
