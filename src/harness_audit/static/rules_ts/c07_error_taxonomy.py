"""C7 · Error taxonomy and retryability — TypeScript/JavaScript rules.

Every rule stays silent in a project that shows an error taxonomy anywhere: an `enum` of error codes / kinds, a
string-literal union type of error kinds (`type ToolErrorCode = "timeout" | "denied"`), a `retryable` /
`isRetryable` / `shouldRetry` / `transient` classification, or a family of project error classes (a base extending
`Error` with at least two subclasses).

Shapes detected:
- `caught-tool-error-becomes-text`: a `catch` around a tool invocation turns the error into a string
  (`` `Error: ${e}` ``, `String(err)`, `err.message`) that is pushed or returned as the tool result, with no code.
- `tool-throws-plain-error`: a tool's `execute`/handler throws `new Error(...)` with runtime details.
- `provider-error-rethrown-plain`: a `catch` around a model call re-throws `new Error(...)` or returns the error
  as text, dropping the provider's status and type.
- `http-status-thrown-as-message`: `if (!res.ok) throw new Error(`… ${res.status}`)` after a request: the status
  that decides retryability is folded into a message.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from tree_sitter import Node

from harness_audit.findings import CheckId
from harness_audit.static.lang.typescript import TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts import _ts_idioms as ts

_TAXONOMY_NAME = re.compile(r"(Error|Failure|Fault|Exception)\w*$|(Code|Codes|Kind|Reason)$")
_RETRY_WORD = re.compile(r"\b(is)?[Rr]etr[yi]able\b|\bisTransient\b|\btransient\s*:|\bshouldRetry\b|\bRETRYABLE\w*|"
                         r"\bretryable\w*\b")
_ENUM = re.compile(r"\benum\s+([A-Za-z_$][\w$]*)")
_UNION_ALIAS = re.compile(r"\btype\s+([A-Za-z_$][\w$]*)\s*=\s*\|?\s*['\"]")
_CLASS_EXTENDS = re.compile(r"\bclass\s+([A-Za-z_$][\w$]*)(?:<[^>{]*>)?\s+extends\s+([A-Za-z_$][\w$.]*)")
_GENERIC_ERRORS = {"Error", "TypeError", "RangeError"}
_CODE_KEYS = {"code", "errorCode", "error_code", "kind", "errorKind", "errorType", "error_type", "category",
              "retryable", "isRetryable", "status", "statusCode", "reason"}
_TOOL_INVOKE = re.compile(r"^(execute|run|call|invoke|handle|dispatch)_?\w*Tool(Call|Use)?s?$|^(callTool|executeTool|"
                          r"runTool|invokeTool)$", re.I)
_TOOL_RECEIVER = re.compile(r"tool|handler|impl|fn\b", re.I)
_ERROR_TEXT_CALLS = {"String", "JSON.stringify", "inspect", "util.inspect", "formatError", "toString"}
_LOGGING = re.compile(r"^(console|logger|log|debugLogger|this\.logger|this\.log)\b")

_TAXONOMY: dict[int, tuple[TsProject, bool]] = {}


def _has_taxonomy(project: TsProject) -> bool:
    """Whether the project shows an error classification anywhere (cached per project)."""
    hit = _TAXONOMY.get(id(project))
    if hit is not None and hit[0] is project:
        return hit[1]
    found = _find_taxonomy(project)
    if len(_TAXONOMY) > 64:
        _TAXONOMY.clear()
    _TAXONOMY[id(project)] = (project, found)
    return found


def _find_taxonomy(project: TsProject) -> bool:
    parent: dict[str, str] = {}
    for mod in project.modules.values():
        text = mod.text
        if _RETRY_WORD.search(text):
            return True
        if any(_TAXONOMY_NAME.search(m.group(1)) for m in _ENUM.finditer(text)):
            return True
        if any(_TAXONOMY_NAME.search(m.group(1)) for m in _UNION_ALIAS.finditer(text)):
            return True
        for m in _CLASS_EXTENDS.finditer(text):
            parent[m.group(1)] = m.group(2).rsplit(".", 1)[-1]

    def is_error(name: str, depth: int = 0) -> bool:
        if name in _GENERIC_ERRORS or name.endswith(("Error", "Exception")):
            return True
        up = parent.get(name)
        return depth < 6 and up is not None and is_error(up, depth + 1)

    children: dict[str, int] = {}
    for name, base in parent.items():
        if base in parent and is_error(name):
            children[base] = children.get(base, 0) + 1
    return any(count >= 2 for count in children.values())


def _short(mod: TsModule, node: Node | None, limit: int = 50) -> str:
    text = " ".join(mod.node_text(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _catch_param(mod: TsModule, clause: Node) -> str | None:
    param = clause.child_by_field_name("parameter")
    return mod.node_text(param) if param is not None and param.type == "identifier" else None


def _error_text(mod: TsModule, node: Node, err: str) -> bool:
    """Whether `node` is text made from the caught error: `` `…${err}` ``, `String(err)`, `err.message`,
    `(err as Error).message`, `err instanceof Error ? err.message : String(err)`."""
    quoted = re.escape(err)
    for sub in [node, *ts.descendants(node)]:
        if sub.type == "template_substitution" and re.search(rf"\b{quoted}\b", mod.node_text(sub)):
            return True
        if sub.type == "member_expression" and mod.node_text(sub.child_by_field_name("property")) in (
                "message", "stack") and re.search(rf"\b{quoted}\b", mod.node_text(sub.child_by_field_name("object"))):
            return True
        if sub.type == "call_expression" and mod.call_name(sub) in _ERROR_TEXT_CALLS:
            args = mod.arguments(sub)
            if args and re.fullmatch(rf"\(?\s*{quoted}(\s+as\s+\w+)?\s*\)?", mod.node_text(args[0])):
                return True
        if sub.type == "binary_expression" and "+" in mod.node_text(sub) and any(
                c.type == "identifier" and mod.node_text(c) == err for c in sub.named_children):
            return True
    return False


def _carries_code(mod: TsModule, node: Node) -> bool:
    """Whether an outlet also hands on a code/kind field (`{ code: "timeout", message }`)."""
    for sub in [node, *ts.descendants(node)]:
        if sub.type == "object" and mod.object_keys(sub).keys() & _CODE_KEYS:
            return True
    return False


def _string_outlets(mod: TsModule, body: Node, err: str) -> list[Node]:
    """Statements in a catch body that hand an error-made string onwards: `return`, an assignment, or a
    `push`/`set`/`send`/`resolve` call (logging excluded)."""
    out: list[Node] = []
    for stmt in [body, *ts.descendants(body)]:
        value: Node | None = None
        if stmt.type == "return_statement":
            value = stmt.named_children[0] if stmt.named_children else None
        elif stmt.type == "expression_statement" and stmt.named_children:
            expr = ts.unwrap(stmt.named_children[0])
            if expr is None:
                continue
            if expr.type == "assignment_expression":
                value = expr.child_by_field_name("right")
            elif expr.type == "call_expression":
                name = mod.call_name(expr)
                if _LOGGING.search(name) or ts.last(name) not in ("push", "set", "send", "resolve", "enqueue",
                                                                  "write", "emit", "add", "yield"):
                    continue
                value = expr
        if value is None or mod.enclosing_function(stmt) != mod.enclosing_function(body):
            continue
        if _error_text(mod, value, err) and not _carries_code(mod, value):
            out.append(stmt)
    return out


def _rethrows(mod: TsModule, body: Node, err: str) -> bool:
    """Whether the catch body re-throws the error or throws a project (typed) error."""
    for sub in ts.descendants(body):
        if sub.type != "throw_statement" or not sub.named_children:
            continue
        thrown = ts.unwrap(sub.named_children[0])
        if thrown is None:
            continue
        if thrown.type == "identifier":
            return True
        if thrown.type == "new_expression" and mod.call_name(thrown) not in _GENERIC_ERRORS:
            return True
    return False


def _tool_invocation(mod: TsModule, body: Node) -> Node | None:
    """A call in `body` that runs a model-chosen tool (`tools[name](args)`, `tool.execute(args)`, `executeTool`)."""
    for call in mod.inside(mod.calls(), body):
        fn = call.child_by_field_name("function")
        name = mod.call_name(call)
        short = ts.last(name)
        recv = name.rsplit(".", 1)[0] if "." in name else ""
        if _TOOL_INVOKE.search(short):
            return call
        if fn is not None and fn.type == "subscript_expression" and _TOOL_RECEIVER.search(mod.node_text(
                fn.child_by_field_name("object"))):
            return call
        if short in ("execute", "run", "call", "invoke", "handler") and (
                _TOOL_RECEIVER.search(recv) or "[]" in recv or recv.endswith("()")):
            return call
    return None


@rule(CheckId.C7, lang="typescript", name="caught-tool-error-becomes-text")
def caught_tool_error_becomes_text(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a `catch` around a tool invocation that turns the error into a string (`` `Error: ${e}` ``,
    `String(err)`, `err.message`) and hands it on as the tool result, in a project with no error codes. The loop
    and the model see text only, so a timeout, a denial and a bug look alike and nobody can decide whether a retry
    makes sense."""
    if ts.skipped_module(mod) or "catch" not in mod.text or _has_taxonomy(project):
        return
    for tr in mod.nodes("try_statement"):
        handler = tr.child_by_field_name("handler")
        body = tr.child_by_field_name("body")
        hbody = handler.child_by_field_name("body") if handler is not None else None
        err = _catch_param(mod, handler) if handler is not None else None
        if body is None or hbody is None or err is None or _rethrows(mod, hbody, err):
            continue
        invoked = _tool_invocation(mod, body)
        if invoked is None:
            continue
        outlets = _string_outlets(mod, hbody, err)
        if not outlets:
            continue
        yield Hit(
            node=outlets[0],
            claim=f"a failure of `{_short(mod, invoked.child_by_field_name('function'), 40)}` reaches the loop only "
                  f"as text built from `{err}`, with no error code",
            consequence="the loop cannot tell a timeout from a denial from a bug, so it retries everything or "
                        "nothing and the model guesses from prose",
            direction="map errors at the dispatch boundary to a small code union (`\"timeout\" | \"denied\" | "
                      "\"invalid_args\" | …`) with a `retryable` flag and return it alongside the message",
        )


def _runtime_message(mod: TsModule, new: Node) -> bool:
    """`new Error(`… ${x}`)`, `new Error("…" + x)` or `new Error(msg)`: a message carrying runtime data."""
    args = mod.arguments(new)
    if not args:
        return False
    first = ts.unwrap(args[0])
    if first is None:
        return False
    if first.type == "template_string":
        return any(c.type == "template_substitution" for c in first.named_children)
    return first.type in ("binary_expression", "identifier", "member_expression", "call_expression")


def _plain_throws(mod: TsModule, scope: Node) -> list[Node]:
    """`throw new Error(<runtime message>)` statements directly in `scope` (not in nested functions)."""
    out: list[Node] = []
    for stmt in mod.inside(mod.nodes("throw_statement"), scope):
        if mod.enclosing_function(stmt) != scope or not stmt.named_children:
            continue
        thrown = ts.unwrap(stmt.named_children[0])
        if thrown is not None and thrown.type in ("new_expression", "call_expression") and \
                mod.call_name(thrown) == "Error" and _runtime_message(mod, thrown):
            out.append(stmt)
    return out


@rule(CheckId.C7, lang="typescript", name="tool-throws-plain-error")
def tool_throws_plain_error(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a tool implementation (`tool({ execute })`, an MCP tool handler, a `*Tool` class's `execute`) or a tool
    dispatcher (`runTool`, `executeToolCall`) that throws a bare `new Error(...)` with runtime details, in a project
    with no error codes. Whoever catches it sees
    only a message, so a permanent failure is retried and a transient one given up on."""
    if ts.skipped_module(mod) or "Error(" not in mod.text or _has_taxonomy(project):
        return
    tools = ts.tool_functions(mod)
    for fn in mod.functions():
        if fn.id not in tools and not _TOOL_INVOKE.search(mod.function_name(fn)):
            continue
        throws = _plain_throws(mod, fn)
        if not throws:
            continue
        yield Hit(
            node=throws[0],
            claim=f"the tool {'implementation' if fn.id in tools else 'dispatcher'} `{mod.function_name(fn)}` fails "
                  "with a bare `Error` whose only content is its message",
            consequence="the loop and the model cannot tell whether retrying makes sense: a missing file, a denied "
                        "command and a network timeout all look the same",
            direction="throw (or return) a tool error carrying a code from a small union with a `retryable` "
                      "classification, and let the dispatcher mark the result as an error",
        )


@rule(CheckId.C7, lang="typescript", name="provider-error-rethrown-plain")
def provider_error_rethrown_plain(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a `catch` around a model call (openai / anthropic SDK, the `ai` package) that re-throws a bare
    `new Error(...)` or returns the error as text, in a project with no error codes. The provider's status (429,
    5xx, 400) and error type are dropped, so callers cannot separate a rate limit from a bad request."""
    if ts.skipped_module(mod) or "catch" not in mod.text or _has_taxonomy(project):
        return
    for tr in mod.nodes("try_statement"):
        handler = tr.child_by_field_name("handler")
        body = tr.child_by_field_name("body")
        hbody = handler.child_by_field_name("body") if handler is not None else None
        if body is None or hbody is None:
            continue
        model_call = next((c for c in mod.inside(mod.calls(), body) if ts.is_model_call(mod, c)), None)
        if model_call is None:
            continue
        err = _catch_param(mod, handler) if handler is not None else None
        cited: Node | None = None
        for stmt in mod.inside(mod.nodes("throw_statement"), hbody):
            thrown = ts.unwrap(stmt.named_children[0]) if stmt.named_children else None
            if thrown is not None and thrown.type == "new_expression" and mod.call_name(thrown) == "Error" and \
                    not re.search(r"\bcause\s*[:,}]", mod.node_text(thrown)):
                cited = stmt
                break
        if cited is None and err is not None and not _rethrows(mod, hbody, err):
            cited = next((o for o in _string_outlets(mod, hbody, err) if o.type == "return_statement"), None)
        if cited is None:
            continue
        yield Hit(
            node=cited,
            claim=f"errors of the model call `{mod.call_name(model_call)}` are flattened into a plain `Error` or "
                  "string; the provider's status and error type are lost",
            consequence="a rate limit, an outage and a malformed request look the same to the caller, which retries "
                        "all of them or none",
            direction="map provider errors at the client boundary to a small code union (`rate_limited`, "
                      "`unavailable`, `bad_request`, `auth`) with a retryable classification, keeping `cause`",
        )


_STATUS_TEST = re.compile(r"!\s*\(?\s*[\w$.?]+\.ok\b|\.ok\s*(===|==)\s*false|\.status(Code)?\s*(!==|!=|>=|>|<|===|==)")


@rule(CheckId.C7, lang="typescript", name="http-status-thrown-as-message")
def http_status_thrown_as_message(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags `if (!res.ok) throw new Error(`… ${res.status}`)` after a `fetch`/undici/ky request, outside tool
    implementations, in a project with no error codes. The status that says whether the failure is retryable (429,
    5xx) or permanent (4xx) survives only as text in a message nobody can branch on."""
    if ts.skipped_module(mod) or (".ok" not in mod.text and ".status" not in mod.text) or _has_taxonomy(project):
        return
    tools = ts.tool_functions(mod)
    for stmt in mod.nodes("if_statement"):
        cond = stmt.child_by_field_name("condition")
        cons = stmt.child_by_field_name("consequence")
        if cond is None or cons is None or not _STATUS_TEST.search(mod.node_text(cond)):
            continue
        fn = mod.enclosing_function(stmt)
        if fn is None or any(f.id in tools for f in [fn, *ts.enclosing_functions(mod, fn)]):
            continue
        throw = cons if cons.type == "throw_statement" else next(
            (c for c in cons.named_children if c.type == "throw_statement"), None)
        thrown = ts.unwrap(throw.named_children[0]) if throw is not None and throw.named_children else None
        if throw is None or thrown is None or thrown.type not in ("new_expression", "call_expression") or \
                mod.call_name(thrown) != "Error":
            continue
        if not any(ts.http_request(mod, c) for c in mod.inside(mod.calls(), fn)
                   if c.start_byte < stmt.start_byte and mod.enclosing_function(c) == fn):
            continue
        yield Hit(
            node=throw,
            claim="the request's failure is thrown as a plain `Error` whose message is the only place the HTTP "
                  "status survives",
            consequence="callers cannot tell a rate limit (retry later) from a bad request (never retry) without "
                        "parsing the message, so they retry everything or nothing",
            direction="throw a typed error carrying `status` (and a code such as `rate_limited` / `unavailable` / "
                      "`bad_request` with a `retryable` flag)",
        )

