"""C9 · Idempotency and side-effect safety — TypeScript/JavaScript rules.

Shapes detected:
- `retry-helper-repeats-side-effect`: `pRetry(fn)`, `retry(fn)` (async-retry), `promiseRetry`, `backOff(fn)`
  (exponential-backoff) or a project `withRetry(fn)` whose function sends, charges, appends or POSTs.
- `attempt-loop-repeats-side-effect`: `for (let attempt = 0; attempt < n; attempt++) { try { … } catch { … } }` /
  `while` retry loops (or `if (res.ok) return` loops) repeating such an effect.

Effects are followed into the functions the region calls (two calls deep, same or importing module). A send,
charge, file append, a POST/PATCH to an endpoint that names its effect, or an SDK command that sends or publishes
(`client.send(new SendMessageCommand(...))`) is confirmed; a command, a resource creation, or the model's tools
run inside the retried step (dynamic dispatch `registry[name](...)`, `tool.run(...)` on a looked-up tool, a
dispatcher such as `executeToolCalls(message.tool_calls)`) or a weakly named POST is suspected. An MCP `callTool` runs whatever the
server's tool does: confirmed when the module reads the tools' `readOnlyHint` / `destructiveHint` annotations yet
the retry does not consult them, suspected otherwise. An idempotency or deduplication key in the region, or a
status query before the effect, clears the finding; GET/PUT/DELETE and model calls are never effects.
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

_RETRY_PACKAGES = {"p-retry": "pRetry", "async-retry": "retry", "promise-retry": "promiseRetry",
                   "exponential-backoff": "backOff", "p-retry-async": "pRetry", "retry-axios": "",
                   "@lifeomic/attempt": "retry", "ts-retry-promise": "retry", "async-await-retry": "retry"}
_RETRY_HELPER = re.compile(r"^_?(with|async|do|run|call|exec|execute)?_?[Rr]etr(y|ies|ying)(Async|able|Call|Operation|"
                           r"Request|WithBackoff|Fn|Func|Promise)?$|^(with|retry)?[Bb]ack[oO]ff(Retry)?$|^withRetries$|"
                           r"^retryWithBackoff$|^attempt(Async|WithRetry)?$")
_EFFECT_NAME = re.compile(r"^(charge|publish|transfer|refund|tweet|reply|comment|enqueue|email|mail|pay)(?=[A-Z_]|$)|"
                          r"^notify(Users?|Customers?|Team|Channel|Slack|Email|Owners?|Admins?|Subscribers?|"
                          r"Recipients?|Webhook|Oncall|OnCall)$|^_?(send|post)_?(Message|Email|Mail|Sms|SMS|Text|Notification|Webhook|Invite|"
                          r"Invitation|Reply|Comment|Tweet|Payment|Dm|DM|DirectMessage|ToSlack|Slack|Alert|Update|"
                          r"Status|Money|Funds)s?$|^(appendFile|appendFileSync|createCharge|createPayment|"
                          r"createPaymentIntent|createRefund|createComment|createIssueComment|createTransfer|createPayout|"
                          r"sendBatch|sendMessages)$")
_NOT_EFFECT = re.compile(r"Request|Prompt|Chat|Completion|Query|Ping|Heartbeat|Progress|Log|Telemetry|Metric|Span|"
                         r"Status|Typing|Keepalive|KeepAlive|Ready|Ack\b", re.I)
_IN_PROCESS_RECEIVER = re.compile(r"^(res|response|reply|ctx|c|process|port|parentPort|worker|self|window|"
                                  r"emitter|events|bus|this\.emit|channel|iframe|ipc|ipcRenderer|webContents)$")
_WEAK_NAME = re.compile(r"^_?(create|insert|upload|book|provision|submit|order|deploy|merge|open)[A-Z]\w*$")
_BUILT_OBJECT = re.compile(r"(Error|Agent|Socket|Object|Instance|Controller|Signal|Client|Logger|Span|Context|Event|"
                           r"Stream|Parser|Tool|Schema|Model|Message|Interaction|Request|Response|Session|Server|"
                           r"Transport|Queue|Promise|Id|Key|Hash|Dir|Directory|Temp|Tmp|Cache|Map|Set|Handler|"
                           r"Config|Options|Provider|Factory|Builder|Iterator|Reader|Writer|Buffer)s?$")
_EFFECT_WORDS = re.compile(r"(send|message|mail|charge|payment|pay|order|notify|notification|publish|webhook|"
                           r"transfer|invoice|tweet|comment|submit|append|enqueue|post|reply|refund|sms|slack|"
                           r"ticket|issue)", re.I)
_MODEL_URL = re.compile(r"chat/completions|/v1/messages|/responses\b|/embeddings|openai|anthropic|generativelanguage|"
                        r"/api/(chat|generate)|ollama|/completions|graphql|/v1/models|localhost:11434", re.I)
_KEY_TEXT = re.compile(r"idempoten|dedup|clientToken|client_token|clientRequestId|client_request_id|"
                       r"Idempotency|x-request-id|requestId", re.I)
_QUERY_NAME = re.compile(r"^_?(exists|already|was[A-Z]|isSent|hasBeen|find|lookup|getStatus|checkStatus|fetchStatus|"
                         r"isDone|isComplete|get\w*Status|check[A-Z])")
_DRAIN_LOOP = re.compile(r"\.(length|size)\b|queue|pending|next|hasMore|cursor|page", re.I)
_RETRY_EVIDENCE = re.compile(r"attempt|retr|tries|backoff|back_off|\bsleep\(|\bdelay\(|setTimeout", re.I)
_ATTEMPT_NAME = re.compile(r"attempt|retr|tries|try|tried|^n$|^i$|count", re.I)
_CONSEQUENCE = ("when an attempt fails after the effect already happened (a timeout after the send), the retry "
                "repeats it: the message is sent twice, the payment taken twice, the line appended twice")
_DIRECTION = ("retry only the idempotent transport, or send an idempotency key created once before the retry (the "
              "same key on every attempt), or check whether the effect happened before trying again")


@dataclass(frozen=True, slots=True)
class _Effect:
    """A side effect found in a retried region."""

    module: TsModule
    call: Node
    what: str
    certain: bool


def _short(mod: TsModule, node: Node | None, limit: int = 50) -> str:
    text = " ".join(mod.node_text(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _http_method(mod: TsModule, call: Node, client: str) -> tuple[str, Node | None]:
    """(HTTP method, url node) of a request call ("" when the method cannot be read)."""
    name = mod.call_name(call)
    args = mod.arguments(call)
    verb = ts.last(name)
    if verb in ("post", "put", "patch", "delete", "get", "head"):
        return verb.upper(), args[0] if args else None
    index = 0 if (client == "axios" and (verb == "request" or name == name.split(".", 1)[0])) else 1
    if index == 0 and args:
        obj = ts.resolve_object(mod, args[0])
        if obj is None:
            return "", None
        keys = mod.object_keys(obj)
        return (ts.string_value(mod, keys.get("method")) or "GET").upper(), keys.get("url")
    url = args[0] if args else None
    if len(args) <= index:
        return "GET", url
    obj = ts.resolve_object(mod, args[index])
    if obj is None:
        return "", url
    method = mod.object_keys(obj).get("method")
    if method is None:
        return ("" if ts.object_has_spread(obj) else "GET"), url
    return (ts.string_value(mod, method) or "").upper(), url


_READ_ONLY_WORDS = {"get", "status", "describe", "list", "ls", "show", "log", "diff", "version", "--version", "-v",
                    "rev-parse", "cat", "view", "info", "search", "head", "tail", "grep", "rg", "find", "which",
                    "whoami", "ps", "df", "du", "top", "inspect", "explain", "config", "fetch", "query"}


def _read_only_command(mod: TsModule, call: Node) -> bool:
    """A literal command whose program or subcommand only reads (`kubectl get`, `git status`, `rg …`)."""
    sp = next((s for s in ts.spawns(mod) if s.call == call), None)
    if sp is None:
        return False
    words = [ts.string_value(mod, p) for p in ts.command_parts(mod, sp)[:3]]
    flat = [tok for w in words if w for tok in w.split()][:3]
    return any(tok.rsplit("/", 1)[-1] in _READ_ONLY_WORDS for tok in flat)


def _awaited(call: Node) -> bool:
    """Whether the call's promise is awaited right there (remote creations are asynchronous; builders are not)."""
    parent = call.parent
    while parent is not None and parent.type in ("parenthesized_expression", "as_expression", "non_null_expression"):
        parent = parent.parent
    return parent is not None and parent.type in ("await_expression", "return_statement")


def _deno_command(mod: TsModule, call: Node) -> _Effect | None:
    """`new Deno.Command(cmd, { args }).output()` (or `.spawn()` on a local bound to one): a process run, unless
    the command only reads (`git status`)."""
    callee = call.child_by_field_name("function")
    obj = ts.unwrap(callee.child_by_field_name("object")) if callee is not None and \
        callee.type == "member_expression" else None
    if obj is not None and obj.type == "identifier":
        fn = mod.enclosing_function(call)
        bound = mod.bindings(fn).get(mod.node_text(obj), []) if fn is not None else []
        obj = ts.unwrap(bound[0]) if bound else None
    if obj is None or obj.type != "new_expression" or "Deno.Command" not in mod.node_text(obj)[:40]:
        return None
    args = mod.arguments(obj)
    words = " ".join(mod.string_value(a) or "" for a in args[:1])
    opts = mod.node_text(args[1]) if len(args) > 1 else ""
    first = re.search(r"args\s*:\s*\[\s*['\"`]([\w-]+)", opts)
    if first and first.group(1) in _READ_ONLY_WORDS or words in _READ_ONLY_WORDS:
        return None
    return _Effect(mod, call, f"the command `{_short(mod, obj, 40)}`", False)


def _classify(mod: TsModule, call: Node, spawns: set[int]) -> _Effect | None:
    """The side effect one call performs itself, if any."""
    if ts.is_model_call(mod, call):
        return None
    client = ts.http_request(mod, call)
    if client is not None:
        method, url = _http_method(mod, call, client)
        if method not in ("POST", "PATCH"):
            return None
        url_text = mod.node_text(url)
        if _MODEL_URL.search(url_text):
            return None
        fn = mod.enclosing_function(call)
        named = _EFFECT_WORDS.search(url_text) or (fn is not None and _EFFECT_WORDS.search(mod.function_name(fn)))
        return _Effect(mod, call, f"a {method} to `{_short(mod, url, 40)}`", bool(named))
    if call.id in spawns:
        if _read_only_command(mod, call):
            return None
        return _Effect(mod, call, f"the command `{_short(mod, call, 40)}`", False)
    name = mod.call_name(call)
    short = ts.last(name)
    recv = name.rsplit(".", 1)[0] if "." in name else ""
    if short in ("output", "spawn", "outputSync") and "Deno.Command" in mod.text and \
            (command := _deno_command(mod, call)) is not None:
        return command
    if recv and _IN_PROCESS_RECEIVER.match(recv.rsplit(".", 1)[-1]) and short not in ("appendFile", "appendFileSync"):
        return None
    if short == "postMessage" and not re.search(r"chat|slack", recv, re.I):
        return None
    if _EFFECT_NAME.search(short) and not _NOT_EFFECT.search(short):
        what = "a file append" if short.startswith("appendFile") else f"`{name}(...)`"
        return _Effect(mod, call, what, True)
    if short in ("create", "send", "publish") and _EFFECT_WORDS.search(recv) and not _MODEL_URL.search(recv):
        return _Effect(mod, call, f"`{name}(...)`", True)
    if short == "send" and (command := _sdk_command(mod, call)) is not None:
        return command
    if _WEAK_NAME.match(short) and not _NOT_EFFECT.search(short) and not _BUILT_OBJECT.search(short) and \
            _awaited(call):
        return _Effect(mod, call, f"`{name}(...)`", False)
    fn_node = call.child_by_field_name("function")
    if fn_node is not None and fn_node.type == "subscript_expression" and re.search(r"tool|handler", mod.node_text(
            fn_node), re.I):
        return _Effect(mod, call, f"the tool `{_short(mod, fn_node, 30)}` (dynamic dispatch)", False)
    if fn_node is not None and fn_node.type == "member_expression" and short in _TOOL_RUN_METHODS and \
            _looked_up_tool(mod, fn_node.child_by_field_name("object")):
        return _Effect(mod, call, f"the tool `{_short(mod, fn_node, 30)}` (looked up by the model's call name)", False)
    if short in _MCP_CALLS and recv and recv != "this":
        annotated = bool(_MCP_HINTS.search(mod.text))
        return _Effect(mod, call, f"the MCP tool call `{_short(mod, call, 40)}`" + (
            " (the tool annotations that mark read-only tools are known but not consulted)" if annotated else ""),
            annotated)
    return None


_TOOL_RUN_METHODS = {"run", "execute", "call", "invoke", "handler", "handle", "fn", "func", "impl", "_call", "_run"}
_TOOL_TABLE = re.compile(r"(tool|handler|registry|impl|command|action|function)s?\w*\s*(\?\.)?(\[|\.get\(|\.find\()",
                         re.I)
"""A lookup of the tool the model named: `registry[name]`, `tools.get(call.name)`, `TOOLS.find((t) => ...)`."""
_DISPATCH_NAME = re.compile(r"(execute|run|call|invoke|dispatch|handle|process|perform)_?(tool|function)(s|_?calls?|"
                            r"_?uses?|_?requests?)?$|^_?(tool|function)_?(call|exec|dispatch|handler|runner)", re.I)
"""A function that runs whatever tools the model asked for (`executeToolCalls(msg.tool_calls)`, `runTools`)."""
_TOOL_CALLS_ARG = re.compile(r"tool_?calls|toolCalls|tool_?uses|toolUses|function_?calls|functionCalls")


def _looked_up_tool(mod: TsModule, obj: Node | None) -> bool:
    """`registry[name].run(...)` or `tool.run(...)` where `tool` was bound to such a lookup (in this function or
    one around it)."""
    obj = ts.unwrap(obj)
    if obj is None:
        return False
    if obj.type in ("subscript_expression", "call_expression"):
        return bool(_TOOL_TABLE.search(mod.node_text(obj)))
    if obj.type != "identifier":
        return False
    name = mod.node_text(obj)
    for scope in ts.enclosing_functions(mod, obj):
        values = mod.bindings(scope).get(name)
        if values:
            return any(_TOOL_TABLE.search(mod.node_text(v)[:200]) for v in values)
    return False


def _runs_model_tools(mod: TsModule, call: Node) -> bool:
    """A call that runs the model's tool calls: a dispatcher by name, or an execute/run/handle function handed
    `message.tool_calls`."""
    short = ts.last(mod.call_name(call))
    if short in _MCP_CALLS:
        return False
    if _DISPATCH_NAME.search(short):
        return True
    return bool(re.match(r"_?(execute|run|call|invoke|dispatch|handle|process|perform)", short)) and \
        any(_TOOL_CALLS_ARG.search(mod.node_text(a)) for a in mod.arguments(call))


_SDK_COMMAND = re.compile(r"^(Send|Publish|Create|Invoke|Start|Put(Events|Record|Records)|Add|Transact\w*Write|"
                          r"BatchWrite|Charge|Post)\w*Command$")
_SURE_COMMAND = re.compile(r"^(Send|Publish|Put(Events|Record|Records)|Charge|Post)")


def _sdk_command(mod: TsModule, call: Node) -> _Effect | None:
    """`client.send(new SendMessageCommand(...))` (AWS SDK v3 style): the command names the effect."""
    args = mod.arguments(call)
    first = ts.unwrap(args[0]) if args else None
    if first is None or first.type != "new_expression":
        return None
    ctor = first.child_by_field_name("constructor")
    name = mod.node_text(ctor).rsplit(".", 1)[-1] if ctor is not None else ""
    if not _SDK_COMMAND.match(name):
        return None
    return _Effect(mod, call, f"`{name}` sent by `{mod.call_name(call)}`", bool(_SURE_COMMAND.match(name)))


_MCP_CALLS = {"callTool", "call_tool"}
"""MCP client methods that run a server tool chosen at run time: what the tool does is the server's business."""
_MCP_HINTS = re.compile(r"\b(readOnlyHint|destructiveHint|idempotentHint)\b")
_HINT_GATE = re.compile(r"readOnly|idempotent|destructive|sideEffects?|side_effects?|mutat|safeToRetry|retryable",
                        re.I)


def _gated(mod: TsModule, call: Node, region: Node) -> bool:
    """Whether the retry is limited to safe tools: its own options (`shouldRetry`, `retries: ro ? 2 : 0`) or a
    condition around it (`if (tool.readOnly) return pRetry(...)`) consults a read-only / idempotent mark."""
    if any(_HINT_GATE.search(mod.node_text(a)) for a in mod.arguments(call) if not mod.within(region, a)):
        return True
    for anc in mod.ancestors(call):
        if anc.type in ("if_statement", "ternary_expression", "while_statement"):
            cond = anc.child_by_field_name("condition")
            if cond is not None and _HINT_GATE.search(mod.node_text(cond)):
                return True
        if anc.type in ("program", "class_body"):
            break
    return False


def _region_effects(mod: TsModule, project: TsProject, region: list[Node], depth: int = 2,
                    seen: set[int] | None = None) -> list[_Effect]:
    """Side effects of the calls in `region` (nodes), followed into project functions `depth` calls deep, cut at
    the first idempotency key or status query."""
    seen = seen if seen is not None else set()
    spawns = {sp.call.id for sp in ts.spawns(mod)}
    out: list[_Effect] = []
    calls: list[Node] = []
    for node in region:
        if node.type == "call_expression":
            calls.append(node)
        calls.extend(mod.inside(mod.calls(), node))
    calls.sort(key=lambda n: n.start_byte)
    for call in calls:
        if _QUERY_NAME.search(ts.last(mod.call_name(call))):
            return []  # the effect is checked before it is repeated
        effect = _classify(mod, call, spawns)
        if effect is not None:
            out.append(effect)
            continue
        if depth <= 0 or ts.is_model_call(mod, call) or ts.http_request(mod, call):
            continue
        target = ts.resolve_function(mod, project, call.child_by_field_name("function"), call)
        dispatches = _runs_model_tools(mod, call)
        if target is None or target[1].id in seen:
            if dispatches and target is None:
                out.append(_Effect(mod, call, f"the model's tool calls (`{_short(mod, call, 40)}`)", False))
            continue
        seen.add(target[1].id)
        tmod, fn = target
        if _KEY_TEXT.search(tmod.node_text(fn)):
            continue
        body = fn.child_by_field_name("body")
        found = _region_effects(tmod, project, [body], depth - 1, seen) if body is not None else []
        if not found and dispatches:
            # the tools are looked up at run time: whatever they do is repeated with the step
            found = [_Effect(mod, call, f"the model's tool calls (`{_short(mod, call, 40)}`)", False)]
        out.extend(found)
    return out


def _describe(effects: list[_Effect], mod: TsModule) -> str:
    first = effects[0]
    where = "" if first.module is mod else f" (in {first.module.path}:{first.module.line(first.call)})"
    more = f" and {len(effects) - 1} more" if len(effects) > 1 else ""
    return f"{first.what}{where}{more}"


def _hit(node: Node, effects: list[_Effect], mod: TsModule, claim: str) -> Hit:
    certain = any(e.certain for e in effects)
    return Hit(
        node=node, verdict=Verdict.CONFIRMED if certain else Verdict.SUSPECTED,
        claim=f"{claim} {_describe(effects, mod)} with no idempotency key",
        consequence=_CONSEQUENCE, direction=_DIRECTION,
        confirm_hint="" if certain else
        f"verify whether repeating {effects[0].what} after a failed attempt duplicates an external effect (a "
        "second command run, resource or message), and whether the target deduplicates it",
    )


# ---------------------------------------------------------------- retry helpers
def _retry_calls(mod: TsModule) -> list[Node]:
    """Calls that may be retry helpers: a name imported from a retry package or shaped like `withRetry`."""
    index = ts.calls_by_short(mod)
    shorts = [s for s in index if _RETRY_HELPER.match(s) or ts.imported_from(mod, s) in _RETRY_PACKAGES]
    return ts.calls_named(mod, *shorts) if shorts else []


def _retry_wrapper(mod: TsModule, project: TsProject, call: Node) -> Node | None:
    """The function a retry helper call retries (`pRetry(async () => …)`, `withRetry(() => send(x))`), or None."""
    name = mod.call_name(call)
    head = name.split(".", 1)[0]
    origin = ts.imported_from(mod, head)
    known = origin in _RETRY_PACKAGES and (name == head or ts.last(name) in ("default", "retry", "pRetry"))
    if not known and not _RETRY_HELPER.match(ts.last(name)):
        return None
    if not known and name.count(".") > 1:
        return None
    for arg in mod.arguments(call)[:2]:
        node = ts.unwrap(arg)
        if node is None:
            continue
        if node.type in FUNCTION_TYPES:
            return node
        if node.type in ("identifier", "member_expression"):
            target = ts.resolve_function(mod, project, node, call)
            if target is not None and target[0] is mod:
                return target[1]
    return None


@rule(CheckId.C9, lang="typescript", name="retry-helper-repeats-side-effect")
def retry_helper_repeats_side_effect(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a retry helper (`p-retry`, `async-retry`, `promise-retry`, `exponential-backoff`, a project
    `withRetry`) whose retried function performs a side effect with no idempotency key.

    An attempt that fails after the effect committed (a timeout after the send) is retried, and the effect
    happens twice.
    """
    if ts.skipped_module(mod) or not any(k in mod.text for k in ("etr", "ackoff", "ackOff", "ttempt")):
        return
    for call in _retry_calls(mod):
        fn = _retry_wrapper(mod, project, call) if call.type == "call_expression" else None
        if fn is None or _KEY_TEXT.search(mod.node_text(fn)):
            continue
        body = fn.child_by_field_name("body")
        effects = _region_effects(mod, project, [body]) if body is not None else []
        if effects and _gated(mod, call, fn):
            effects = [e for e in effects if ts.last(e.module.call_name(e.call)) not in _MCP_CALLS]
        if not effects:
            continue
        yield _hit(call, effects, mod, f"`{mod.call_name(call)}` retries a function that performs")


# ---------------------------------------------------------------- hand-written retry loops
def _counter_loop(mod: TsModule, loop: Node) -> str | None:
    """The attempt counter of `for (let attempt = 0; attempt < n; attempt++)`, or None for an iteration loop."""
    init = loop.child_by_field_name("initializer")
    cond = loop.child_by_field_name("condition")
    if init is None:
        return None
    names = [mod.node_text(n) for n in ts.descendants(init) if n.type == "identifier"][:1]
    cond_text = mod.node_text(cond)
    if not names or re.search(r"\.(length|size)\b", cond_text):
        return None
    return names[0]


def _exits(node: Node) -> bool:
    stmts = [c for c in node.named_children if c.type != "comment"]
    return bool(stmts) and stmts[-1].type in ("throw_statement", "return_statement", "break_statement")


def _retry_region(mod: TsModule, loop: Node) -> list[Node] | None:
    """The statements a hand-written retry loop repeats after a failure, or None if it is not a retry loop."""
    body = loop.child_by_field_name("body")
    if body is None or body.type != "statement_block":
        return None
    counter: str | None = None
    if loop.type == "for_statement":
        counter = _counter_loop(mod, loop)
        if counter is None:
            return None
        if re.search(rf"\[\s*{re.escape(counter)}\s*\]", mod.node_text(body)):
            return None  # `items[i]`: the counter walks items, it does not retry
    elif loop.type not in ("while_statement", "do_statement"):
        return None
    elif _DRAIN_LOOP.search(mod.node_text(loop.child_by_field_name("condition"))):
        return None  # `while (queue.length > 0)`: it works through items, it does not retry one
    elif not _RETRY_EVIDENCE.search(mod.node_text(loop)):
        return None  # a `while` with no attempt counter and no back-off is a work or menu loop
    stmts = [c for c in body.named_children if c.type != "comment"]
    for index, stmt in enumerate(stmts):
        if stmt.type == "try_statement":
            handler = stmt.child_by_field_name("handler")
            hbody = handler.child_by_field_name("body") if handler is not None else None
            tbody = stmt.child_by_field_name("body")
            if hbody is None or tbody is None or _exits(hbody):
                continue
            success = [tbody, *stmts[index + 1:]]
            if any(re.search(r"\b(return|break)\b", mod.node_text(s)) for s in success):
                return [tbody]
        if stmt.type == "if_statement" and index > 0 and loop.type == "for_statement" and counter is not None:
            cons = stmt.child_by_field_name("consequence")
            cond = mod.node_text(stmt.child_by_field_name("condition"))
            backs_off = re.search(r"\bsleep\(|setTimeout|delay\(|wait\(", mod.node_text(body))
            if cons is not None and re.search(r"\b(return|break)\b", mod.node_text(cons)) and \
                    re.search(r"\.ok\b|status", cond) and (backs_off or _ATTEMPT_NAME.search(counter)):
                return stmts[:index]
    return None


@rule(CheckId.C9, lang="typescript", name="attempt-loop-repeats-side-effect")
def attempt_loop_repeats_side_effect(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a hand-written retry loop (`for (let attempt = 0; …)` / `while` with a `catch` that goes round again,
    or a loop that repeats until `res.ok`) whose retried block performs a side effect with no idempotency key.

    The catch swallows the failure and the loop runs the block again, repeating an effect that may already have
    happened.
    """
    if ts.skipped_module(mod):
        return
    for loop in mod.nodes("for_statement", "while_statement", "do_statement"):
        region = _retry_region(mod, loop)
        if region is None or any(_KEY_TEXT.search(mod.node_text(r)) for r in region):
            continue
        effects = _region_effects(mod, project, region)
        effects = [e for e in effects if not _fixed_telemetry_upload(mod, loop, e)]
        if not effects:
            continue
        yield _hit(loop, effects, mod, "this retry loop repeats")


_TELEMETRY = re.compile(r"[Tt]rac(e|es|ing)\b|[Tt]racing|[Ss]pans?\b|[Tt]elemetry|[Mm]etrics?\b|otlp|OTLP|[Oo]tel\b|"
                        r"[Ii]ngest|[Aa]nalytics|Exporter\b|/v1/(traces|logs|metrics)")


def _fixed_telemetry_upload(mod: TsModule, loop: Node, effect: _Effect) -> bool:
    """A telemetry export (spans, traces, metrics, logs shipped by an `export()`/`flush()` of an exporter) whose
    request body is built once OUTSIDE the retry loop and re-sent unchanged: every attempt is byte-identical and
    carries the records' own ids, so a repeat is a duplicated observability record, not a repeated effect."""
    if effect.module is not mod or not mod.within(effect.call, loop):
        return False
    fn = mod.enclosing_function(loop)
    cls = next((a for a in mod.ancestors(loop) if a.type in ("class_declaration", "class")), None)
    cls_name = cls.child_by_field_name("name") if cls is not None else None
    args = mod.arguments(effect.call)
    context = " ".join((mod.function_name(fn) if fn is not None else "",
                        mod.node_text(cls_name) if cls_name is not None else "",
                        mod.node_text(args[0]) if args else ""))
    if not _TELEMETRY.search(context):
        return False
    body = next((p.child_by_field_name("value") for a in args[1:] if a.type == "object" for p in a.named_children
                 if p.type == "pair" and mod.node_text(p.child_by_field_name("key")).strip("'\"") in ("body", "data",
                                                                                                   "json")), None)
    body = ts.unwrap(body)
    if body is not None and body.type == "call_expression" and mod.call_name(body) == "JSON.stringify":
        inner = mod.arguments(body)
        body = ts.unwrap(inner[0]) if inner else None
    if body is None or body.type != "identifier":
        return False
    name = mod.node_text(body)
    decls = ts.declarators_by_name(mod).get(name, [])
    if not decls or any(mod.within(d, loop) for d in decls) or \
            (fn is not None and not any(mod.within(d, fn) for d in decls)):
        return False
    return not re.search(rf"(?<![.\w$]){re.escape(name)}(\.\w+|\[[^\]]*\])*\s*(=(?!=)|\+=|\.push\()",
                         mod.node_text(loop))
