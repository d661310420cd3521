"""C9 · Idempotency and side-effect safety — Python rules.

Shapes detected:
- `retry-wrapper-repeats-side-effect`: `@retry` / `@backoff.on_exception` / `retry(...)(fn)` around a send or command.
- `retry-loop-repeats-side-effect`: `for attempt in range(n)` / `while` / `for attempt in Retrying()` retrying the same.

Side effects are followed up to three calls deep. A send, charge, file append, or POST to an
endpoint that names its effect is confirmed; a command, a resource creation, a tool run by dynamic
dispatch or a weakly named POST is suspected. An idempotency or deduplication key in the retried
region, or a query before the effect, clears the finding; GETs and model calls are never effects.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from harness_audit.findings import CheckId, Verdict
from harness_audit.static import idioms
from harness_audit.static.lang.python import FuncRef, FunctionNode, PyModule, PyProject, subtree
from harness_audit.static.registry import Hit, rule

_SEND_NAMES = {"send_message", "send_email", "send_mail", "sendmail", "post_message", "chat_postMessage",
               "publish", "send_notification", "notify", "charge", "create_charge", "send_sms", "transfer",
               "send_text", "create_payment", "send_webhook"}
_EFFECT_WORDS = re.compile(r"(send|message|mail|charge|payment|pay|order|notify|notification|publish|webhook|"
                           r"transfer|invoice|tweet|comment|submit|append|enqueue|post_|reply|refund)", re.I)
_WEAK_EFFECT_WORDS = re.compile(r"(create|export|ingest|upload|insert|book|provision)", re.I)
_ENSURE_NAME = re.compile(r"^_*(ensure|get_or_create|maybe_create)", re.I)
_DEDUP_TEXT = re.compile(r"(idempoten|dedup|client_token|client_request_id)", re.I)
_EFFECT_VERB = re.compile(r"^_*(send|post|charge|notify|publish|submit|create|transfer|pay|refund|reply|comment|"
                          r"tweet|e?mail|enqueue|append|book|order)", re.I)
_FRESH_KEY = {"uuid.uuid4", "uuid.uuid1", "uuid4", "uuid1", "secrets.token_hex", "secrets.token_urlsafe",
              "ulid.new", "ulid.ULID", "time.time", "time.time_ns"}
_QUERY_NAME = re.compile(r"^(exists|already|was_|is_sent|has_been|find|lookup|get_status|check_|fetch_status|"
                         r"is_done|is_complete)", re.I)
_RETRY_ITERATORS = {"Retrying", "AsyncRetrying", "retry_context"}
_RETRY_CALLS = {"retry_call", "retry_async_call"}
_MODEL_RECEIVER = re.compile(r"(llm|model|chat|openai|anthropic|client\.messages|completions|responses)", re.I)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Effect:
    """A side effect found in a retried region."""

    module: PyModule
    """Where it is."""
    call: ast.Call
    """The side-effecting call."""
    what: str
    """How to name it in a claim."""
    certain: bool
    """Whether a repeat is clearly a duplicate (send, charge, append) rather than possibly harmless."""


# ---------------------------------------------------------------- what counts as a side effect
def _short_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


_CLIENT_FACTORY = re.compile(r"(session|client|http)", re.I)


def _local_client_verb(mod: PyModule, call: ast.Call) -> str | None:
    """`s.post(...)` where `s = await http()` / `s = make_client()` in the same function: an HTTP client."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)) or \
            func.attr not in idioms.SIDE_EFFECT_HTTP:
        return None
    fn = mod.enclosing_function(call)
    for value in idioms.assigned_values(mod, fn).get(func.value.id, []) if fn is not None else []:
        inner = value.value if isinstance(value, ast.Await) else value
        if isinstance(inner, ast.Call) and _CLIENT_FACTORY.search(idioms.last(mod.call_name(inner) or "")):
            return func.attr
    return None


def _effect_of(mod: PyModule, call: ast.Call) -> _Effect | None:
    """Classify one call: a non-idempotent request, a message or payment, a file append, a command, a creation."""
    short = _short_name(call)
    if not short:
        if _is_tool_run(mod, call):
            what = f"the tool run `{ast.unparse(call.func)[:50]}` (line {call.lineno})"
            return _Effect(module=mod, call=call, what=what, certain=False)
        return None
    callee = mod.call_name(call)
    where = f"`{callee}` (line {call.lineno})"
    if short in _SEND_NAMES:
        return _Effect(module=mod, call=call, what=f"the send {where}", certain=True)
    if short in idioms.HTTP_METHODS or short == "urlopen":
        verb = idioms.http_method(mod, call) or _local_client_verb(mod, call)
        if verb not in {"post", "patch"} or idioms.is_model_call(mod, call):
            return None
        # a POST says nothing about its effect by itself: the URL must name one, or the function must be a verb for it
        fn = mod.enclosing_function(call)
        texts = [*idioms.string_parts(call), *_constant_strings(mod, call)]
        urls = [p for p in texts if p.upper() not in {"POST", "PATCH"}]
        what = f"the {verb.upper()} request {where}"
        if any(_EFFECT_WORDS.search(u) for u in urls):
            return _Effect(module=mod, call=call, what=what, certain=True)
        if fn is not None and _EFFECT_VERB.search(fn.name):
            return _Effect(module=mod, call=call, what=what, certain=not _WEAK_EFFECT_WORDS.match(fn.name.lstrip("_")))
        if any(_WEAK_EFFECT_WORDS.search(u) for u in urls):
            return _Effect(module=mod, call=call, what=what, certain=False)
        return None
    if idioms.is_spawn(mod, call):
        return _Effect(module=mod, call=call, what=f"the command run by {where}", certain=False)
    if _is_tool_run(mod, call):
        return _Effect(module=mod, call=call, what=f"the tool run {where}", certain=False)
    if short in {"open", "write_text", "write_bytes"} or callee in {"io.open", "aiofiles.open", "codecs.open"}:
        mode = call.args[1] if len(call.args) > 1 else mod.keyword(call, "mode")
        if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and "a" in mode.value:
            return _Effect(module=mod, call=call, what=f"the file append {where}", certain=True)
        return None
    if short in {"create", "acreate"} and isinstance(call.func, ast.Attribute):
        recv = mod.dotted(call.func.value) or ""
        if recv and not _MODEL_RECEIVER.search(recv) and not idioms.is_model_call(mod, call):
            return _Effect(module=mod, call=call, what=f"the resource creation {where}", certain=False)
    return None


_TOOL_TABLE = re.compile(r"(tool|handler|registry|function)s?$", re.I)
_TOOL_RUN_NAME = re.compile(r"^_*(a?run|a?execute|a?call|a?invoke|dispatch|handle)_?(tool|function)(_?calls?)?(_|$)",
                            re.I)
_TOOL_RUN_METHODS = {"run", "arun", "invoke", "ainvoke", "execute", "aexecute", "call", "acall", "forward", "__call__"}


def _is_tool_run(mod: PyModule, call: ast.Call) -> bool:
    """A tool executed by dynamic dispatch (`TOOLS[name](**args)`, `tool.run(args)`, `execute_tool(call)`)."""
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _TOOL_RUN_METHODS:
        func_recv = func.value
        if isinstance(func_recv, ast.Subscript):
            func = func_recv
        elif "tool" in idioms.last(mod.dotted(func_recv) or "").lower():
            return True
    if isinstance(func, ast.Subscript):
        return bool(_TOOL_TABLE.search(idioms.last(mod.dotted(func.value) or "")))
    return bool(_TOOL_RUN_NAME.search(idioms.last(mod.dotted(func) or "")))


_constants_cache: dict[int, tuple[PyModule, dict[str, list[str]]]] = {}


def _constant_strings(mod: PyModule, call: ast.Call) -> list[str]:
    """Strings of module-level constants the call's arguments name (`requests.post(WEBHOOK_URL, ...)`)."""
    hit = _constants_cache.get(0)
    if hit is None or hit[0] is not mod:
        table: dict[str, list[str]] = {}
        for node in mod.tree.body:
            if isinstance(node, ast.Assign):
                for t in node.targets:
                    if isinstance(t, ast.Name):
                        table[t.id] = idioms.string_parts(node.value)
        hit = (mod, table)
        _constants_cache[0] = hit
    names = {n.id for a in [*call.args, *(k.value for k in call.keywords)] for n in subtree(a)
             if isinstance(n, ast.Name)}
    return [text for name in names for text in hit[1].get(name, [])]


def _effects_in(mod: PyModule, nodes: list[ast.AST]) -> list[_Effect]:
    out: list[_Effect] = []
    for node in nodes:
        if isinstance(node, ast.Call):
            effect = _effect_of(mod, node)
            if effect is not None:
                out.append(effect)
    return out


def _region_effects(mod: PyModule, project: PyProject, nodes: list[ast.AST]) -> list[_Effect]:
    """Side effects in a retried region, and in project functions it calls (up to three hops)."""
    effects = _effects_in(mod, nodes)
    roots: list[FuncRef] = []
    for node in nodes:
        if isinstance(node, ast.Call):
            roots.extend(project.resolve_call(mod, node))
    roots = [r for r in roots if not _ENSURE_NAME.search(r.node.name)]
    if roots:
        for ref in [*roots, *project.reachable(roots, depth=2)]:
            if not _ENSURE_NAME.search(ref.node.name):
                effects.extend(_function_effects(project, ref))
    return effects


_effect_cache: dict[int, tuple[PyProject, dict[int, list[_Effect]]]] = {}


def _function_effects(project: PyProject, ref: FuncRef) -> list[_Effect]:
    """Side effects directly in one project function (cached per project)."""
    hit = _effect_cache.get(0)
    if hit is None or hit[0] is not project:
        hit = (project, {})
        _effect_cache[0] = hit
    cached = hit[1].get(id(ref.node))
    if cached is None:
        cached = _effects_in(ref.module, list(ref.module.walk(ref.node)))
        hit[1][id(ref.node)] = cached
    return cached


def _keyed(mod: PyModule, nodes: list[ast.AST]) -> bool:
    """Whether an idempotency or deduplication key is sent in the region (`Idempotency-Key`, `idempotency_key=`)."""
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _DEDUP_TEXT.search(node.value):
            return True
        if isinstance(node, ast.keyword) and node.arg and _DEDUP_TEXT.search(node.arg):
            return True
    return False


def _queries_first(mod: PyModule, nodes: list[ast.AST], effect: _Effect) -> bool:
    """Whether the region checks whether the effect already happened before doing it (query-before-retry)."""
    if effect.module is not mod:
        return False
    for node in nodes:
        if not isinstance(node, ast.Call) or node.lineno >= effect.call.lineno:
            continue
        if _QUERY_NAME.search(_short_name(node)) or idioms.http_method(mod, node) in {"get", "head"}:
            return True
    return False


def _unsafe_effects(mod: PyModule, project: PyProject, nodes: list[ast.AST]) -> list[_Effect]:
    if _keyed(mod, nodes):
        return []
    return [e for e in _region_effects(mod, project, nodes) if not _queries_first(mod, nodes, e)]


def _describe(effects: list[_Effect], mod: PyModule) -> str:
    first = effects[0]
    where = "" if first.module is mod else f" in {first.module.path}"
    more = f" and {len(effects) - 1} more" if len(effects) > 1 else ""
    return f"{first.what}{where}{more}"


def _verdict(effects: list[_Effect]) -> Verdict:
    return Verdict.CONFIRMED if any(e.certain for e in effects) else Verdict.SUSPECTED


def _hint(effects: list[_Effect]) -> str:
    first = effects[0]
    return (f"verify whether `{first.module.call_name(first.call)}` at {first.module.path}:{first.call.lineno} has an "
            "external effect that a second attempt would duplicate, and whether the other side deduplicates repeats")


_CONSEQUENCE = ("when an attempt times out after the effect committed, the retry performs it again: a message sent "
                "twice, a record created twice, a command run twice")
_DIRECTION = ("retry only the idempotent transport, send an idempotency key created once outside the retry, or check "
              "whether the effect happened before retrying")


# ---------------------------------------------------------------- retry wrappers
def _mentions_retry(mod: PyModule) -> bool:
    """Cheap prefilter: plain substring tests, much faster than a case-insensitive regex over the file."""
    return any(k in mod.source for k in ("retry", "Retry", "retries", "Retrying", "backoff", "stamina", "RETRY"))


def _decorator_evidence(mod: PyModule, dec: ast.expr, fn: FunctionNode) -> str | None:
    """Decorator line through the `def` line when the decorator alone is too thin to quote (`@retry`)."""
    text = mod.line(dec.lineno).strip()
    if len("".join(text.split())) >= 8 and "(" in text:
        return None
    return "\n".join(mod.line(n).strip() for n in range(dec.lineno, fn.lineno + 1) if mod.line(n).strip())


def _retried_refs(mod: PyModule, project: PyProject, target: ast.expr, near: ast.Call) -> list[FuncRef]:
    """Project functions a retry wrapper call is given (`retry(...)(self._send)`, `Retrying()(send, msg)`)."""
    fake = ast.Call(func=target, args=[], keywords=[])
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id in {"self", "cls"}:
        cls = mod.enclosing_class(near)
        method = mod.method(cls.name, target.attr) if cls is not None else None
        return [FuncRef(mod, method)] if method is not None else []
    if isinstance(target, ast.Name):
        local = mod.local_functions(target.id)
        if local:
            return [FuncRef(mod, f) for f in local]
    ast.copy_location(fake, near)
    return project.resolve_call(mod, fake) if isinstance(target, ast.Name) else []


def _callers_pass_key(project: PyProject, fn: FunctionNode) -> bool:
    """Whether every caller of a retry-wrapped function hands it an idempotency key (`headers={"Idempotency-Key":
    key}`): made outside the wrapper, the key is the same on every attempt."""
    callers = idioms.callers_of(project, fn)[:20]
    return bool(callers) and all(_keyed(cmod, [n for a in [*call.args, *call.keywords] for n in subtree(a)])
                                 for cmod, call in callers)


@rule(CheckId.C9, lang="python", name="retry-wrapper-repeats-side-effect")
def retry_wrapper_repeats_side_effect(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a retry decorator (tenacity, backoff, stamina, a project `retry_async`) or `retry(...)(fn)` call
    whose wrapped function performs a side effect with no idempotency key.

    An attempt that fails after the effect committed (a timeout after the send) is retried, and
    the effect happens twice.
    """
    if idioms.is_test_module(mod) or not _mentions_retry(mod):
        return
    for fn in mod.functions():
        dec = idioms.retry_decorator(mod, fn)
        if dec is None or idioms.last(idioms.decorator_name(mod, dec)) == "on_predicate":
            continue
        nodes = list(mod.walk(fn))
        effects = _unsafe_effects(mod, project, nodes)
        if not effects or _callers_pass_key(project, fn):
            continue
        verdict = _verdict(effects)
        yield Hit(
            node=dec, verdict=verdict, evidence=_decorator_evidence(mod, dec, fn),
            claim=f"`{fn.name}` is retried by `{mod.line(dec.lineno).strip()[:60]}` and performs "
                  f"{_describe(effects, mod)} with no idempotency key",
            consequence=_CONSEQUENCE, direction=_DIRECTION,
            confirm_hint="" if verdict is Verdict.CONFIRMED else _hint(effects),
        )
    if not any(k in mod.source for k in ("retry(", "Retrying(", "retry_async(", "on_exception(", "retry_call")):
        return
    for call in mod.calls():
        inner = call.func
        if isinstance(inner, ast.Call) and call.args:
            name = idioms.last(idioms.decorator_name(mod, inner))
            if name not in {"retry", "retry_async", "on_exception", *_RETRY_ITERATORS}:
                continue
            target = call.args[0]
        elif _short_name(call) in _RETRY_CALLS and call.args:
            target = call.args[0]
        else:
            continue
        refs = _retried_refs(mod, project, target, call)
        if not refs:
            continue
        nodes = [n for ref in refs if ref.module is mod for n in mod.walk(ref.node)]
        effects = _unsafe_effects(mod, project, nodes) if nodes else \
            [e for ref in refs for e in _region_effects(ref.module, project, list(ref.module.walk(ref.node)))]
        if not effects:
            continue
        verdict = _verdict(effects)
        yield Hit(
            node=call, verdict=verdict,
            claim=f"`{mod.dotted(target) or 'the wrapped function'}` is retried here and performs "
                  f"{_describe(effects, mod)} with no "
                  "idempotency key",
            consequence=_CONSEQUENCE, direction=_DIRECTION,
            confirm_hint="" if verdict is Verdict.CONFIRMED else _hint(effects),
        )


# ---------------------------------------------------------------- hand-written retry loops
def _exits(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Raise | ast.Return | ast.Break)


def _retry_region(mod: PyModule, loop: ast.For | ast.AsyncFor | ast.While) -> list[ast.stmt] | None:
    """The statements a hand-written retry loop repeats after an exception, or None if it is no retry loop."""
    if isinstance(loop, ast.For | ast.AsyncFor):
        it = loop.iter
        if isinstance(it, ast.Call) and _short_name(it) in _RETRY_ITERATORS:
            return list(loop.body)
        if not (isinstance(it, ast.Call) and _short_name(it) in {"range", "count"}):
            return None
        if any(isinstance(a, ast.Call) and _short_name(a) == "len" for a in it.args):
            return None  # `range(len(items))` walks items, it does not retry
    checked = _retry_until_ok(mod, loop)
    if checked is not None:
        return checked
    for stmt in loop.body:
        if not isinstance(stmt, ast.Try):
            continue
        retrying = [h for h in stmt.handlers if h.body and not _exits(h.body[-1])]
        if not retrying:
            continue
        success = [*stmt.body, *stmt.orelse, *loop.body[loop.body.index(stmt) + 1:]]
        if any(isinstance(n, ast.Return) or isinstance(n, ast.Break) and mod.enclosing_loops(n)[:1] == [loop]
               for n in mod.walk_body(success)):
            return [*stmt.body, *stmt.orelse]  # success leaves the loop: it retries; one that goes on polls
    return None


_ATTEMPT_NAME = re.compile(r"^_$|attempt|retr|tries|try", re.I)


def _retry_until_ok(mod: PyModule, loop: ast.For | ast.AsyncFor | ast.While) -> list[ast.stmt] | None:
    """`for attempt in range(n): res = op(); if res.ok: return res; sleep(...)`: a loop that repeats the same
    operation until its result says success (no exception involved). The statements before the check, else None."""
    if not isinstance(loop, ast.For | ast.AsyncFor) or not isinstance(loop.target, ast.Name):
        return None
    counter = loop.target.id
    backs_off = any(isinstance(n, ast.Call) and _short_name(n) == "sleep" for n in mod.walk_body(loop.body))
    if not (_ATTEMPT_NAME.search(counter) or backs_off):
        return None
    for i, stmt in enumerate(loop.body):
        if not (isinstance(stmt, ast.If) and stmt.body and _exits(stmt.body[-1]) and i > 0):
            continue
        region = loop.body[:i]
        if any(isinstance(n, ast.Name) and n.id == counter for n in mod.walk_body(region)):
            return None  # the counter picks a different item each time: iteration, not a retry
        return region
    return None


@rule(CheckId.C9, lang="python", name="retry-loop-repeats-side-effect")
def retry_loop_repeats_side_effect(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a hand-written retry loop (`for attempt in range(n)`, `while`, `for attempt in Retrying()`) whose
    retried block performs a side effect with no idempotency key.

    The handler swallows the failure and the loop runs the block again, repeating an effect
    that may already have happened. An effect on a target named afresh in each attempt (a `uuid4()` directory)
    that the handler removes is not repeated, and is not reported.
    """
    if idioms.is_test_module(mod):
        return
    for loop in mod.loops():
        region = _retry_region(mod, loop)
        if region is None:
            continue
        nodes = list(mod.walk_body(region))
        effects = [e for e in _unsafe_effects(mod, project, nodes) if not _fresh_target_per_attempt(mod, loop, e)]
        if not effects:
            continue
        verdict = _verdict(effects)
        yield Hit(
            node=loop, verdict=verdict,
            claim=f"this retry loop repeats {_describe(effects, mod)} after a failed attempt, with no idempotency "
                  "key",
            consequence=_CONSEQUENCE, direction=_DIRECTION,
            confirm_hint="" if verdict is Verdict.CONFIRMED else _hint(effects),
        )


_REMOVERS = {"rmtree", "remove", "unlink", "rmdir", "removedirs"}
_FRESH_NAMES = _FRESH_KEY | {"tempfile.mkdtemp", "tempfile.mkstemp", "mkdtemp", "mkstemp"}


def _fresh_target_per_attempt(mod: PyModule, loop: ast.AST, effect: _Effect) -> bool:
    """Whether the effect acts on a target named afresh in each attempt (`d = tmp / f"box-{uuid4().hex}"` in the
    loop body) that the loop's failure handler removes (`shutil.rmtree(d)`): a failed attempt leaves nothing
    behind, and the next one builds a new target instead of repeating an effect on the same one."""
    if effect.module is not mod:
        return False
    fresh = {t.id for node in mod.walk(loop) if isinstance(node, ast.Assign)
             and any(isinstance(c, ast.Call) and mod.call_name(c) in _FRESH_NAMES for c in subtree(node.value))
             for t in node.targets if isinstance(t, ast.Name)}
    used = {n.id for n in subtree(effect.call) if isinstance(n, ast.Name)} & fresh
    if not used:
        return False
    for handler in (n for n in mod.walk(loop) if isinstance(n, ast.ExceptHandler)):
        for call in (n for n in mod.walk_body(handler.body) if isinstance(n, ast.Call)):
            if idioms.last(mod.call_name(call) or "") in _REMOVERS and any(
                    isinstance(a, ast.Name) and a.id in used for a in call.args):
                return True
    return False
