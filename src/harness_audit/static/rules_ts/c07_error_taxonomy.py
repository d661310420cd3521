"""C7 · Error taxonomy and retryability — TypeScript/JavaScript rules.

Projects that have a taxonomy still flatten errors at particular sites, so the rules judge the site, not the
project: a taxonomy somewhere (an `enum` of error codes / kinds, a string-literal union of error kinds, a union of
tagged failure objects (`| { kind: "timeout" } | { kind: "denied" }`), a `retryable`
/ `shouldRetry` classification, a family of project error classes) only silences a site that uses it or whose
errors a classifying boundary maps.

Shapes detected:
- `caught-tool-error-becomes-text`: a `catch` around a tool invocation (`tools[name](args)`, `tool.run(args)`,
  `def.run(block.input)`, a local looked up in a dispatch table: `const impl = IMPLS[name]; impl(args)`) turns the error into a string (`` `Error: ${e}` ``, `String(err)`, `err.message`, a local
  holding such text) that is pushed or returned as the tool result, with no code, and classifies nothing on the
  way (no mapper such as `asToolError(err)`, no `instanceof ToolError`, no value of the project's taxonomy). A
  re-throw that only runs on abort does not count as re-throwing.
- `tool-throws-plain-error`: a tool's `execute`/handler throws `new Error(...)` with runtime details (not caught by
  its own `try`), tool entries with a nested schema (`{ spec: { input_schema }, run(input) {...} }`) included. In a
  project with a taxonomy only when sibling tools of the module report failures through it
  and no dispatcher of the project classifies what tools throw.
- `provider-error-rethrown-plain` (projects without a taxonomy): a `catch` around a model call re-throws
  `new Error(...)` or returns the error as text, dropping the provider's status and type.
- `http-status-thrown-as-message` (projects without a taxonomy): `if (!res.ok) throw new Error(`… ${res.status}`)`
  after a request: the status that decides retryability is folded into a message.
- `tool-returns-failure-as-text`: a tool implementation catches its own failure and returns it as an ordinary
  result: text built from the error (`` return `Error: could not write ${p}: ${err.message}` ``), a failure
  message (`return "Failed to fetch the page"`), or an object carrying only such text (`{ content: [{ type: "text",
  text: `Error: ${e}` }] }` with no `isError` / `ok: false` / code); also `.catch((e) => `Error: ${e}`)` on the
  value the tool returns. The dispatcher sees a success, in a project with a taxonomy too; a catch that classifies
  some errors (`if (e instanceof BudgetExceeded) return { code: "timeout" }`) and returns the rest as bare text is
  flagged at that fallback. A project function that
  runs a call later on the tool's behalf (after an approval) counts as the tool when a caller puts its value in a
  tool-result record (`{ type: "tool-result", toolCallId, result: text }`, `{ role: "tool", tool_call_id, content }`).
- `provider-error-surfaced-as-text`: a `catch` (or `.catch(cb)`) around a model request (an SDK / `ai` / LangChain /
  raw-HTTP call, or a project wrapper of one that does not map its errors) whose only handling is to hand the
  error's message to a UI, event sink or response (`host.post({ type: "error", message: err.message })`,
  `res.json({ error: String(e) })`), in a project with a taxonomy too (a retry predicate is not a mapping). Not
  when the text only goes into a summary the function returns and no caller reads (best-effort background
  indexing: `this.reindex().then(() => void 0)`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from harness_audit.findings import CheckId
from harness_audit.static.lang.typescript import FUNCTION_TYPES, TsModule, TsProject
from harness_audit.static.registry import Hit, rule
from harness_audit.static.rules_ts import _agent_idioms as agent
from harness_audit.static.rules_ts import _ts_idioms as ts

_TAXONOMY_NAME = re.compile(r"(Error|Failure|Fault|Exception)\w*$|(Code|Codes|Kind|Reason)$")
_RETRY_WORD = re.compile(r"\b(is)?[Rr]etr[yi]able\b|\bisTransient\b|\btransient\s*:|\bshouldRetry\b|\bRETRYABLE\w*|"
                         r"\bretryable\w*\b")
_ENUM = re.compile(r"enum\s+([A-Za-z_$][\w$]*)")
_UNION_ALIAS = re.compile(r"type\s+([A-Za-z_$][\w$]*)\s*=\s*\|?\s*['\"]")
_CLASS_EXTENDS = re.compile(r"class\s+([A-Za-z_$][\w$]*)(?:<[^>{]*>)?\s+extends\s+([A-Za-z_$][\w$.]*)")
_GENERIC_ERRORS = {"Error", "TypeError", "RangeError"}
_CODE_KEYS = {"code", "errorCode", "error_code", "kind", "errorKind", "errorType", "error_type", "category",
              "retryable", "isRetryable", "status", "statusCode", "reason"}
_TOOL_INVOKE = re.compile(r"^(execute|run|call|invoke|handle|dispatch)_?\w*Tool(Call|Use)?s?$|^(callTool|executeTool|"
                          r"runTool|invokeTool)$", re.I)
_EXEC_NAMES = {"execute", "run", "call", "invoke", "handler", "handle", "fn", "func", "impl", "callback", "exec"}
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


@dataclass(frozen=True, slots=True)
class _Vocabulary:
    """The words of the project's error taxonomy, to recognise code that uses it."""

    values: frozenset[str]
    """String members of error-kind unions and enums (`"timeout"`, `"denied"`)."""
    enums: frozenset[str]
    """Names of error-kind enums (`ErrorCode`), used as `ErrorCode.Timeout`."""
    classes: frozenset[str]
    """Project error classes (`ToolError extends Error`)."""


def _keyword_matches(rx: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """`rx.finditer(text)` for a pattern starting with a keyword (`class`, `enum`, `type`), kept only where the
    keyword starts a word. (A leading `\\b` in the pattern would make every search 30 times slower.)"""
    for m in rx.finditer(text):
        start = m.start()
        if start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_$"):
            yield m


_UNION_BODY = re.compile(r"type\s+([A-Za-z_$][\w$]*)\s*=\s*((?:\s*\|?\s*['\"][^'\"\n]{1,40}['\"])+)")
_ENUM_BODY = re.compile(r"enum\s+([A-Za-z_$][\w$]*)\s*\{([^}]*)\}")
_VOCAB: dict[int, tuple[TsProject, _Vocabulary]] = {}


def _vocabulary(project: TsProject) -> _Vocabulary:
    hit = _VOCAB.get(id(project))
    if hit is not None and hit[0] is project:
        return hit[1]
    values: set[str] = set()
    enums: set[str] = set()
    parent: dict[str, str] = {}
    for mod in project.modules.values():
        text = mod.text
        for m in _keyword_matches(_UNION_BODY, text):
            if _TAXONOMY_NAME.search(m.group(1)):
                values.update(re.findall(r"['\"]([^'\"\n]+)['\"]", m.group(2)))
        for m in _keyword_matches(_ENUM_BODY, text):
            if _TAXONOMY_NAME.search(m.group(1)):
                enums.add(m.group(1))
                values.update(re.findall(r"['\"]([^'\"\n]+)['\"]", m.group(2)))
        for m in _keyword_matches(_CLASS_EXTENDS, text):
            parent[m.group(1)] = m.group(2).rsplit(".", 1)[-1]
        values.update(_union_member_codes(mod))

    def is_error(name: str, depth: int = 0) -> bool:
        if name in _GENERIC_ERRORS:
            return True
        up = parent.get(name)
        return depth < 6 and up is not None and is_error(up, depth + 1)

    classes = frozenset(n for n in parent if is_error(n))
    vocab = _Vocabulary(frozenset(values), frozenset(enums), classes)
    if len(_VOCAB) > 64:
        _VOCAB.clear()
    _VOCAB[id(project)] = (project, vocab)
    return vocab


_MEMBER_CODE = re.compile(r"\b(kind|code|type|reason|errorCode|errorKind|category)\??\s*:\s*['\"]([^'\"\n]{1,40})['\"]")


def _union_member_codes(mod: TsModule) -> set[str]:
    """The discriminants of a failure type written as a union of object types (`type ToolFailure = | { kind:
    "timeout"; afterMs: number } | { kind: "denied" }`): each member's literal tag is a code of the taxonomy."""
    if "type" not in mod.text:
        return set()
    out: set[str] = set()
    tops = [c for n in mod.tree.root_node.named_children for c in ([n, *n.named_children]
                                                                  if n.type == "export_statement" else [n])]
    for alias in (t for t in tops if t.type == "type_alias_declaration"):
        name = mod.node_text(alias.child_by_field_name("name"))
        value = alias.child_by_field_name("value")
        if value is None or value.type != "union_type" or not _TAXONOMY_NAME.search(name):
            continue
        tags = [m.group(2) for m in _MEMBER_CODE.finditer(mod.node_text(value))]
        if len(tags) >= 2:
            out.update(tags)
    return out


def _uses_vocabulary(mod: TsModule, vocab: _Vocabulary, node: Node, *, into_functions: bool = True) -> bool:
    """Whether code under `node` builds a classified failure: `new ToolError(…)`, `fail("timeout", …)`,
    `{ kind: "denied" }`, `ErrorCode.Timeout`."""
    for sub in [node, *ts.descendants(node)]:
        if not into_functions and sub is not node and sub.type in FUNCTION_TYPES:
            continue
        if sub.type == "new_expression" and ts.last(mod.call_name(sub)) in vocab.classes:
            return True
        if sub.type == "call_expression":
            args = mod.arguments(sub)
            if args and ts.string_value(mod, ts.unwrap(args[0])) in vocab.values:
                return True
        if sub.type == "pair" and _key_name(mod.node_text(sub.child_by_field_name("key"))) in _CODE_KEYS and \
                ts.string_value(mod, ts.unwrap(sub.child_by_field_name("value"))) in vocab.values:
            return True
        if sub.type == "member_expression" and mod.node_text(sub.child_by_field_name("object")) in vocab.enums:
            return True
    return False


def _key_name(text: str) -> str:
    return text.strip().strip("'\"")


def _find_taxonomy(project: TsProject) -> bool:
    parent: dict[str, str] = {}
    for mod in project.modules.values():
        text = mod.text
        if ("etr" in text or "ETR" in text or "ransient" in text) and _RETRY_WORD.search(text):
            return True
        if any(_TAXONOMY_NAME.search(m.group(1)) for m in _keyword_matches(_ENUM, text)):
            return True
        if any(_TAXONOMY_NAME.search(m.group(1)) for m in _keyword_matches(_UNION_ALIAS, text)):
            return True
        for m in _keyword_matches(_CLASS_EXTENDS, text):
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
        if sub.type == "object" and _failing_exit_status(mod, sub):
            return True  # a shell-style result: the non-zero exit status is the code its caller branches on
        if sub.type == "call_expression" and any(_code_argument(mod, a) for a in mod.arguments(sub)):
            return True  # `rpcError(id, ErrorCode.InternalError, msg)`, `fail(-32603, msg)`
    return False


_EXIT_KEYS = ("exitCode", "exit_code", "exitStatus", "exit_status")


def _failing_exit_status(mod: TsModule, obj: Node) -> bool:
    """An object literal shaped as a process result with a literal non-zero exit status (`{ stderr, exitCode: 1 }`):
    at a command interface the exit status is the error code."""
    keys = mod.object_keys(obj)
    value = next((keys[k] for k in _EXIT_KEYS if k in keys), None)
    return value is not None and value.type == "number" and mod.node_text(value) not in ("0", "0x0")


_CODE_ENUM = re.compile(r"^([A-Za-z_$][\w$]*\.)*[A-Za-z_$][\w$]*(Code|Codes|Kind|Kinds|Category|Reason)\."
                        r"[A-Za-z_$][\w$]*$")


def _code_argument(mod: TsModule, arg: Node) -> bool:
    """An argument that is an error code: a member of a code enum (`ErrorCode.InvalidParams`, `ToolErrorKind.Timeout`)
    or a JSON-RPC numeric code (`-32603`)."""
    arg = ts.unwrap(arg)
    if arg is None:
        return False
    if arg.type == "member_expression":
        return bool(_CODE_ENUM.match(mod.node_text(arg)))
    return arg.type == "unary_expression" and bool(re.fullmatch(r"-\s*32\d{3}", mod.node_text(arg)))


def _string_outlets(mod: TsModule, body: Node, err: str) -> list[Node]:
    """Statements in a catch body that hand an error-made string onwards: `return`, an assignment, or a
    `push`/`set`/`send`/`resolve` call (logging excluded)."""
    out: list[Node] = []
    texts: dict[str, Node] = {}  # `const text = "failed: " + e.message`: locals holding error text
    for stmt in [body, *ts.descendants(body)]:
        value: Node | None = None
        if stmt.type in ("lexical_declaration", "variable_declaration") and len(stmt.named_children) == 1:
            decl = stmt.named_children[0]
            name, init = decl.child_by_field_name("name"), decl.child_by_field_name("value")
            if name is not None and name.type == "identifier" and init is not None and \
                    _error_text(mod, init, err) and not _carries_code(mod, init):
                texts[mod.node_text(name)] = stmt
            continue
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
        if _carries_code(mod, value):
            continue
        if _error_text(mod, value, err):
            out.append(stmt)
        elif texts:
            held = next((texts[n] for i in ts.idents(value) if (n := mod.node_text(i)) in texts), None)
            if held is not None and held not in out:
                out.append(held)
    return out


_ABORT_TEST = re.compile(r"\baborted\b|AbortError|\bcancel|\bsignal\b", re.I)


def _abort_guarded(mod: TsModule, stmt: Node, body: Node) -> bool:
    """Whether `stmt` only runs when the run was aborted (`if (signal.aborted) throw err;`): the other failures
    still take the catch's remaining path."""
    for anc in mod.ancestors(stmt):
        if anc == body:
            return False
        if anc.type == "if_statement" and _ABORT_TEST.search(mod.node_text(anc.child_by_field_name("condition"))):
            return True
    return False


_MAPPER_NAME = re.compile(r"classif|categori[sz]|normali[sz]|^(to|as|map|wrap|convert|from|make|build|create)_?\w*"
                          r"(Error|Failure|Fault|Exception|Result|Outcome|Problem)s?$", re.I)


def _classifies(mod: TsModule, vocab: _Vocabulary, body: Node, err: str) -> bool:
    """Whether a catch body classifies the error instead of only turning it into text: it hands it to a mapper
    (`asToolError(err)`, `classifyError(e)`), tests it against a project error class (`err instanceof ToolError`),
    or builds a failure from the project's taxonomy (`fail("timeout", …)`, `new ToolError(…)`)."""
    if _uses_vocabulary(mod, vocab, body):
        return True
    quoted = re.escape(err)
    for sub in ts.descendants(body):
        if sub.type == "call_expression":
            name = mod.call_name(sub)
            if _MAPPER_NAME.search(ts.last(name)) and not _LOGGING.search(name) and any(
                    re.fullmatch(rf"\(?\s*{quoted}(\s+as\s+\w+)?\s*\)?", mod.node_text(a)) for a in mod.arguments(sub)):
                return True
        elif sub.type == "binary_expression" and "instanceof" in mod.node_text(sub):
            right = sub.child_by_field_name("right")
            if right is not None and ts.last(mod.node_text(right)) not in _GENERIC_ERRORS and \
                    re.match(rf"\(?\s*{quoted}\b", mod.node_text(sub)):
                return True
    return False


def _rethrows(mod: TsModule, body: Node, err: str) -> bool:
    """Whether the catch body re-throws the error or throws a project (typed) error (a re-throw that only runs on
    abort does not count)."""
    for sub in ts.descendants(body):
        if sub.type != "throw_statement" or not sub.named_children or _abort_guarded(mod, sub, body):
            continue
        thrown = ts.unwrap(sub.named_children[0])
        if thrown is None:
            continue
        if thrown.type == "identifier":
            return True
        if thrown.type == "new_expression" and mod.call_name(thrown) not in _GENERIC_ERRORS:
            return True
    return False


def _tool_invocation(mod: TsModule, body: Node, *, caught_too: bool = False) -> Node | None:
    """A call in `body` that runs a model-chosen tool (`tools[name](args)`, `tool.execute(args)`, `executeTool`),
    skipping calls whose failures a nested `try` of `body` already catches without re-throwing (they never reach
    the catch being judged)."""
    for call in mod.inside(mod.calls(), body):
        if not caught_too and _caught_within(mod, call, body):
            continue
        fn = call.child_by_field_name("function")
        name = mod.call_name(call)
        short = ts.last(name)
        recv = name.rsplit(".", 1)[0] if "." in name else ""
        if _TOOL_INVOKE.search(short):
            return call
        if fn is not None and fn.type == "subscript_expression" and _TOOL_RECEIVER.search(mod.node_text(
                fn.child_by_field_name("object"))):
            return call
        if _table_lookup(mod, fn):
            return call  # `const impl = IMPLS[name]; … impl(args, ctx)`: a dispatch table's tool
        if short in ("execute", "run", "call", "invoke", "handler") and (
                _TOOL_RECEIVER.search(recv) or "[]" in recv or recv.endswith("()")):
            return call
        if short in _EXEC_NAMES and any(ts.model_sourced(mod, a) for a in ts.call_args(mod, call)[:1]):
            return call  # `def.run(block.input, ctx)`, `impl(args)` with args decoded from the tool call
        if _HANDLER_TABLE.search(recv) and short.startswith("handle") and ts.call_args(mod, call) and \
                any(a.type == "switch_statement" and _TOOL_NAME_SWITCH.search(mod.node_text(
                    a.child_by_field_name("value"))) for a in mod.ancestors(call)):
            return call  # `case "read_file": result = await handlers.handleReadFile(args)`
        if short in _EXEC_NAMES and _is_call_item(mod, next(iter(ts.call_args(mod, call)[:1]), None)):
            return call  # `this.invoke(call)`, `runner.execute(toolCall)` over the model's list of tool calls
    return None


def _table_lookup(mod: TsModule, fn: Node | None) -> bool:
    """Whether a callee is a tool looked up in a dispatch table by a computed key: `TABLE[name](args)`, or a local
    bound to `TABLE[name]` (see `dispatch_table`)."""
    fn = ts.unwrap(fn)
    if fn is not None and fn.type == "identifier":
        values = ts.declarators_by_name(mod).get(mod.node_text(fn), [])
        fn = ts.unwrap(values[0].child_by_field_name("value")) if len(values) == 1 else None
    if fn is None or fn.type != "subscript_expression":
        return False
    table = fn.child_by_field_name("object")
    return table is not None and table.type == "identifier" and ts.dispatch_table(mod, mod.node_text(table))


_HANDLER_TABLE = re.compile(r"(^|\.)(handlers|toolHandlers|tool_handlers|tools)$")
_TOOL_NAME_SWITCH = re.compile(r"^\(?\s*([\w$.]*\.)?(name|toolName|tool_name|tool)\s*\)?$")


def _caught_within(mod: TsModule, call: Node, body: Node) -> bool:
    """Whether `call` sits in the body of a `try` nested inside `body` whose catch does not re-throw."""
    for anc in mod.ancestors(call):
        if anc.id == body.id:
            return False
        if anc.type == "statement_block" and anc.parent is not None and anc.parent.type == "try_statement" and \
                anc.parent.child_by_field_name("body") == anc:
            handler = anc.parent.child_by_field_name("handler")
            hbody = handler.child_by_field_name("body") if handler is not None else None
            if hbody is not None and not re.search(r"\bthrow\b", mod.node_text(hbody)):
                return True
    return False


_CALL_ITEM = re.compile(r"^(call|toolCall|tool_call|functionCall|function_call|fnCall|fc|tc|toolUse|tool_use|"
                        r"toolRequest|tool_request|invocation|toolInvocation)$")
_CALL_LIST = re.compile(r"(tool_?calls|function_?calls|tool_?uses|tool_?requests|\bcalls)\s*\)?\s*$", re.I)


def _is_call_item(mod: TsModule, arg: Node | None) -> bool:
    """Whether `arg` is one tool call of the model's reply: a local named like one (`call`, `toolCall`, `tc`,
    `toolUse`), or the loop variable of `for (const x of turn.calls)` / `resp.tool_calls` / `functionCalls`."""
    arg = ts.unwrap(arg)
    if arg is None or arg.type != "identifier":
        return False
    name = mod.node_text(arg)
    if _CALL_ITEM.match(name):
        return True
    for anc in mod.ancestors(arg):
        first = ts.params(anc)[:1] if anc.type in FUNCTION_TYPES else []
        if first and anc.parent is not None and anc.parent.type == "arguments" and \
                any(mod.node_text(p) == name for p in ts.idents(first[0])):
            callee = anc.parent.parent.child_by_field_name("function") if anc.parent.parent is not None else None
            if callee is not None and callee.type == "member_expression" and _CALL_LIST.search(
                    mod.node_text(callee.child_by_field_name("object"))):
                return True  # `turn.calls.map((c) => this.invoke(c))`
        if anc.type == "for_in_statement":
            left, right = anc.child_by_field_name("left"), anc.child_by_field_name("right")
            if left is not None and mod.node_text(left) == name and right is not None and \
                    _CALL_LIST.search(mod.node_text(right)):
                return True
    return False


_UI_RUNTIME = re.compile(r"""from\s+['"](@modelcontextprotocol/ext-apps|react-dom(/client)?|preact|vue|svelte|"""
                         r"""solid-js/web|lit)['"]|\bdocument\.(createElement|querySelector|getElementById)\(|"""
                         r"""\.innerHTML\s*=|\bcreateRoot\(|ReactDOM\.render\(""")
_MODEL_CALL = re.compile(r"\.(chat\.completions|messages|responses)\.(create|stream)\(|\b(generateText|streamText)\(")


def _browser_ui(mod: TsModule) -> bool:
    """Browser UI / widget code (renders DOM, imports an app or widget runtime) that calls a host's tool on a
    human's behalf: its caught failure becomes something shown to the person, and no agent loop consumes it."""
    return bool(_UI_RUNTIME.search(mod.text)) and not _MODEL_CALL.search(mod.text)


_FLAG_VALUES = {"isError": "true", "is_error": "true", "ok": "false", "success": "false"}


def _flag_read_by_caller(mod: TsModule, project: TsProject, outlet: Node) -> bool:
    """Whether the outlet hands the text on with a literal error flag (`isError: true`, `ok: false`) that a caller
    reads: a module calling this function (this one, or one importing it; tests aside) also reads the flag
    (`response.isError`). The caller then turns the flagged text into its own coded error."""
    flags = {key for sub in [outlet, *ts.descendants(outlet)] if sub.type == "object"
             for key, value in mod.object_keys(sub).items()
             if _FLAG_VALUES.get(key) == mod.node_text(value)}
    fn = mod.enclosing_function(outlet)
    name = mod.function_name(fn) if fn is not None else "<anonymous>"
    if not flags or name == "<anonymous>":
        return False
    for other in (mod, *project.importers(mod)):
        if agent.is_test_module(other) or not any(other is not mod or not mod.within(c, fn)
                                                  for c in project.calls_in(other, name)):
            continue
        for flag in flags:
            for node in project.occurrences(other, flag):
                parent = node.parent
                if node.type == "property_identifier" and parent is not None and \
                        parent.type == "member_expression" and not _assigned_to(parent):
                    return True
    return False


def _assigned_to(member: Node) -> bool:
    parent = member.parent
    return parent is not None and parent.type == "assignment_expression" and \
        parent.child_by_field_name("left") == member


@rule(CheckId.C7, lang="typescript", name="caught-tool-error-becomes-text")
def caught_tool_error_becomes_text(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a `catch` around a tool invocation that turns the error into a string (`` `Error: ${e}` ``,
    `String(err)`, `err.message`) and hands it on as the tool result without classifying it (no mapper such as
    `asToolError(err)`, no `instanceof` of a project error, no code of the project's taxonomy), even where the
    project has a taxonomy elsewhere. The loop and the model see text only, so a timeout, a denial and a bug look
    alike and nobody can decide whether a retry makes sense. Text handed on with a literal error flag (`isError:
    true`, `ok: false`) that a module calling the function reads is classified there, and is not reported."""
    if ts.skipped_module(mod) or "catch" not in mod.text or _browser_ui(mod):
        return
    vocab = _vocabulary(project)
    for tr in mod.nodes("try_statement"):
        handler = tr.child_by_field_name("handler")
        body = tr.child_by_field_name("body")
        hbody = handler.child_by_field_name("body") if handler is not None else None
        err = _catch_param(mod, handler) if handler is not None else None
        if body is None or hbody is None or err is None:
            continue
        outlets = _string_outlets(mod, hbody, err)
        if not outlets or _rethrows(mod, hbody, err) or _classifies(mod, vocab, hbody, err):
            continue
        invoked = _tool_invocation(mod, body)
        if invoked is None:
            continue
        outlets = [o for o in outlets if not _flag_read_by_caller(mod, project, o)]
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


def _caught_locally(mod: TsModule, stmt: Node, scope: Node) -> bool:
    """Whether `stmt` sits in the body of a `try` (inside `scope`) that catches what it throws."""
    for anc in mod.ancestors(stmt):
        if anc == scope:
            return False
        if anc.type == "statement_block" and anc.parent is not None and anc.parent.type == "try_statement" and \
                anc.parent.child_by_field_name("body") == anc and anc.parent.child_by_field_name("handler") is not None:
            return True
    return False


def _plain_throws(mod: TsModule, scope: Node) -> list[Node]:
    """`throw new Error(<runtime message>)` statements directly in `scope` (not in nested functions, not caught by a
    `try` of `scope` itself)."""
    out: list[Node] = []
    for stmt in mod.inside(mod.nodes("throw_statement"), scope):
        if mod.enclosing_function(stmt) != scope or not stmt.named_children or _caught_locally(mod, stmt, scope):
            continue
        thrown = ts.unwrap(stmt.named_children[0])
        if thrown is not None and thrown.type in ("new_expression", "call_expression") and \
                mod.call_name(thrown) == "Error" and _runtime_message(mod, thrown):
            out.append(stmt)
    return out


_DISPATCH: dict[int, tuple[TsProject, bool]] = {}


def _classifying_dispatch(project: TsProject) -> bool:
    """Whether some `catch` of the project around a tool invocation classifies what it catches (`asToolError(err)`,
    `err instanceof ToolError`): then a tool's plain `Error` is mapped at the boundary."""
    hit = _DISPATCH.get(id(project))
    if hit is not None and hit[0] is project:
        return hit[1]
    vocab = _vocabulary(project)
    found = False
    for mod in project.modules.values():
        if found or "catch" not in mod.text or ts.skipped_module(mod):
            continue
        for tr in mod.nodes("try_statement"):
            handler = tr.child_by_field_name("handler")
            body = tr.child_by_field_name("body")
            hbody = handler.child_by_field_name("body") if handler is not None else None
            err = _catch_param(mod, handler) if handler is not None else None
            if body is not None and hbody is not None and err is not None and \
                    _classifies(mod, vocab, hbody, err) and _tool_invocation(mod, body) is not None:
                found = True
                break
    if len(_DISPATCH) > 64:
        _DISPATCH.clear()
    _DISPATCH[id(project)] = (project, found)
    return found


@rule(CheckId.C7, lang="typescript", name="tool-throws-plain-error")
def tool_throws_plain_error(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a tool implementation (`tool({ execute })`, an MCP tool handler, a `*Tool` class's `execute`) or a tool
    dispatcher (`runTool`, `executeToolCall`) that throws a bare `new Error(...)` with runtime details, in a project
    with no error codes, or, in a project with one, where the module's other tools report classified failures and
    no dispatcher maps what tools throw. Whoever catches it sees only a message, so a permanent failure is retried
    and a transient one given up on."""
    if ts.skipped_module(mod) or "Error(" not in mod.text:
        return
    tools = {**ts.tool_functions(mod), **{f.id: "args" for f in mod.functions() if ts.object_tool_entry(mod, f)}}
    vocab = _vocabulary(project)
    if _has_taxonomy(project):
        # the project classifies failures: only a tool that ignores the classification its sibling tools use, and
        # whose errors no dispatcher of the project maps, still reaches the loop unclassified
        siblings = [f for f in mod.functions() if f.id in tools and _uses_vocabulary(mod, vocab, f)]
        if not siblings or _classifying_dispatch(project):
            return
        tools = {k: v for k, v in tools.items() if not any(k == f.id for f in siblings)}
    for fn in mod.functions():
        if fn.id not in tools and (_has_taxonomy(project) or not _TOOL_INVOKE.search(mod.function_name(fn))):
            continue
        throws = _plain_throws(mod, fn)
        if not throws:
            continue
        dispatches = fn.id not in tools or _tool_invocation(mod, fn, caught_too=True) is not None
        guard = next((a for a in mod.ancestors(throws[0]) if a.type == "if_statement"), None)
        unknown = guard is not None and mod.within(guard, fn) and re.fullmatch(
            r"\(\s*!\s*[\w$]*[Tt]ool[\w$]*\s*\)", mod.node_text(guard.child_by_field_name("condition")) or "")
        yield Hit(
            node=throws[0],
            claim=f"the tool {'dispatcher' if dispatches else 'implementation'} `{mod.function_name(fn)}` fails "
                  + ("with a bare `Error` (its only content a message) when the model names an unknown tool"
                     if unknown else "with a bare `Error` whose only content is its message")
                  + (" while the project's other tools report classified failures" if _has_taxonomy(project) else ""),
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


_SURFACE_LASTS = frozenset({"post", "postMessage", "send", "emit", "showErrorMessage", "showWarningMessage",
                            "showInformationMessage", "reply", "json", "write", "notify", "setError", "setStatus",
                            "update", "enqueue", "resolve", "push", "dispatch", "next"})


def _any_model_call(mod: TsModule, call: Node) -> bool:
    """An SDK request, a Vercel `ai` / LangChain model call, or an HTTP POST to a chat / messages endpoint."""
    return ts.is_model_call(mod, call) or agent.is_model_call(mod, call)


_WRAPPER_GENERIC = frozenset({"run", "create", "call", "invoke", "execute", "handle", "send", "get", "post", "main",
                              "start", "process", "apply", "then", "catch", "map", "forEach", "push", "stream",
                              "next", "constructor", "default", "fetch", "request", "emit", "on", "init", "update",
                              "<anonymous>", ""})


def _named_model_wrappers(project: TsProject) -> dict[str, list[tuple[TsModule, Node]]]:
    """Named functions and methods of the project that make a model request (through inline callbacks too), by
    name: to follow `this.client.turn(...)` into another module's class."""

    def build() -> dict[str, list[tuple[TsModule, Node]]]:
        out: dict[str, list[tuple[TsModule, Node]]] = {}
        for wmod in project.modules.values():
            if ts.skipped_module(wmod):
                continue
            seen: set[int] = set()
            for c in wmod.calls():
                if not _any_model_call(wmod, c):
                    continue
                fn = next((f for f in ts.enclosing_functions(wmod, c)
                           if wmod.function_name(f) not in _WRAPPER_GENERIC), None)
                if fn is None or fn.id in seen:
                    continue
                seen.add(fn.id)
                out.setdefault(wmod.function_name(fn), []).append((wmod, fn))
        return out

    return agent.memo(project, "c7_model_wrappers", build)


def _model_wrapper(mod: TsModule, project: TsProject, call: Node, vocab: _Vocabulary) -> Node | None:
    """The model call a call reaches: itself (an SDK request) or, one hop away, a project function that makes an
    SDK request and does not map its errors itself (no `catch` that classifies, throws a project error, or
    re-throws something other than a bare `Error`; no project error class built anywhere in it)."""
    if _any_model_call(mod, call):
        return call
    found = ts.resolve_function(mod, project, call.child_by_field_name("function"), call)
    if found is None:
        short = ts.last(mod.call_name(call))
        candidates = _named_model_wrappers(project).get(short, []) if short not in _WRAPPER_GENERIC else []
        if len(candidates) != 1:
            return None
        found = candidates[0]
    wmod, fn = found
    inner = next((c for c in wmod.inside(wmod.calls(), fn) if _any_model_call(wmod, c)), None)
    if inner is None or _uses_vocabulary(wmod, vocab, fn):
        return None
    for stmt in wmod.inside(wmod.nodes("throw_statement"), fn):
        thrown = ts.unwrap(stmt.named_children[0]) if stmt.named_children else None
        if thrown is not None and not (thrown.type == "new_expression" and
                                       ts.last(wmod.call_name(thrown)) in _GENERIC_ERRORS):
            return None  # `.catch((e) => { throw toProviderError(e) })`: the wrapper hands on a mapped error
    for clause in wmod.inside(wmod.nodes("catch_clause"), fn):
        body = clause.child_by_field_name("body")
        err = _catch_param(wmod, clause)
        if body is not None and (_uses_vocabulary(wmod, vocab, body) or
                                 (err is not None and (_classifies(wmod, vocab, body, err) or
                                                       _rethrows(wmod, body, err)))):
            return None  # the wrapper's own catch maps (or passes on) what the provider throws
    return inner


def _surfaced_text(mod: TsModule, hbody: Node, err: str) -> Node | None:
    """A call in a catch body that hands text made from the error to a UI / event sink / response
    (`host.post({ type: "error", message: err.message })`, `res.json({ error: String(e) })`), without a code."""
    for call in mod.inside(mod.calls(), hbody):
        name = mod.call_name(call)
        if _LOGGING.search(name) or ts.last(name) not in _SURFACE_LASTS:
            continue
        if mod.enclosing_function(call) != mod.enclosing_function(hbody):
            continue
        args = mod.arguments(call)
        if any(_error_text(mod, a, err) for a in args) and not any(_carries_code(mod, a) for a in args):
            stmt = call
            while stmt.parent is not None and stmt.parent.type not in ("statement_block", "program"):
                stmt = stmt.parent
            return stmt
    return None


def _value_discarded(mod: TsModule, call: Node) -> bool:
    """The value of `call` is thrown away: `await f();` as a statement, `void f()`, or `f().then(() => void 0)` (a
    callback that ignores what it receives)."""
    node = call
    while node.parent is not None and node.parent.type in ("await_expression", "parenthesized_expression"):
        node = node.parent
    parent = node.parent
    if parent is None:
        return False
    if parent.type == "expression_statement" or (parent.type == "unary_expression" and
                                                 mod.node_text(parent).startswith("void")):
        return True
    if parent.type == "member_expression" and mod.node_text(parent.child_by_field_name("property")) == "then":
        then = parent.parent
        args = mod.arguments(then) if then is not None and then.type == "call_expression" else []
        cb = ts.unwrap(args[0]) if args else None
        if cb is None or cb.type not in FUNCTION_TYPES:
            return False
        names = [n for p in ts.params(cb) for n in ts.bound_names(mod, ts.param_pattern(p))]
        body = cb.child_by_field_name("body")
        return body is not None and not any(mod.node_text(i) in names for i in ts.idents(body))
    return False


def _discarded_summary(mod: TsModule, project: TsProject, stmt: Node) -> bool:
    """`summary.errors.push(`… ${e.message}`)` where `summary` is a local the function returns, and no caller in
    the project uses that return value (`this.reindex().then(() => void 0)`): a best-effort report nobody reads,
    which never reaches the loop or a run's outcome."""
    expr = ts.unwrap(stmt.named_children[0]) if stmt.type == "expression_statement" and stmt.named_children else stmt
    if expr is None or expr.type != "call_expression" or ts.last(mod.call_name(expr)) != "push":
        return False
    target = expr.child_by_field_name("function")
    root = target.child_by_field_name("object") if target is not None else None
    while root is not None and root.type == "member_expression":
        root = root.child_by_field_name("object")
    if root is None or root.type != "identifier":
        return False
    name = mod.node_text(root)
    fn = mod.enclosing_function(stmt)
    if fn is None or name not in mod.bindings(fn) or name in mod.params(fn):
        return False
    returned = [r for r in mod.inside(mod.nodes("return_statement"), fn) if mod.enclosing_function(r) == fn]
    if not any(r.named_children and mod.node_text(ts.unwrap(r.named_children[0])) == name for r in returned):
        return False
    if ts.is_tool_function(mod, fn) or ts.object_tool_entry(mod, fn):
        return False  # a tool's return value is what the model reads
    return all(_value_discarded(m, c) for m, c in ts.callers(mod, project, fn))


@rule(CheckId.C7, lang="typescript", name="provider-error-surfaced-as-text")
def provider_error_surfaced_as_text(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a `catch` around a model request (an SDK call, or a project wrapper of one that does not map its
    errors) whose only handling is to hand the error's message to a UI, event sink or response
    (`host.post({ type: "error", message: err.message })`, `res.json({ error: String(e) })`): the provider's
    status and error class (rate limit, overload, bad request, auth) never reach the loop, whatever retry
    predicate ran before. Even in a project with a taxonomy elsewhere, this site uses none of it."""
    if ts.skipped_module(mod) or "catch" not in mod.text:
        return
    vocab = _vocabulary(project)
    for tr in mod.nodes("try_statement"):
        handler = tr.child_by_field_name("handler")
        body = tr.child_by_field_name("body")
        hbody = handler.child_by_field_name("body") if handler is not None else None
        err = _catch_param(mod, handler) if handler is not None else None
        if body is None or hbody is None or err is None:
            continue
        if _rethrows(mod, hbody, err) or _classifies(mod, vocab, hbody, err):
            continue
        cited = _surfaced_text(mod, hbody, err)
        if cited is None:
            continue
        model = next((m for c in mod.inside(mod.calls(), body)
                      if mod.enclosing_function(c) == mod.enclosing_function(tr)
                      and (m := _model_wrapper(mod, project, c, vocab)) is not None), None)
        if model is None or (_tool_invocation(mod, body) is not None and cited in _string_outlets(mod, hbody, err)):
            continue  # `caught-tool-error-becomes-text` reports the same outlet
        if _discarded_summary(mod, project, cited):
            continue
        via = ts.unwrap(next((c for c in mod.inside(mod.calls(), body)
                              if _model_wrapper(mod, project, c, vocab) is model), model))
        yield _surfaced_hit(mod, cited, via, err)
    yield from _promise_catch_surfaced(mod, project, vocab)


def _promise_catch_surfaced(mod: TsModule, project: TsProject, vocab: _Vocabulary) -> Iterator[Hit]:
    """The `.catch((err) => ui.post(err.message))` form, on a promise chain that starts with a model request."""
    if ".catch(" not in mod.text:
        return
    for call in mod.calls():
        fn = call.child_by_field_name("function")
        if fn is None or fn.type != "member_expression" or mod.node_text(fn.child_by_field_name("property")) != "catch":
            continue
        args = mod.arguments(call)
        cb = ts.unwrap(args[0]) if args else None
        if cb is None or cb.type not in FUNCTION_TYPES or not ts.params(cb):
            continue
        param = ts.params(cb)[0]
        err = mod.node_text(param.child_by_field_name("pattern") or param)
        body = cb.child_by_field_name("body")
        if body is None or not re.fullmatch(r"[A-Za-z_$][\w$]*", err) or \
                _rethrows(mod, body, err) or _classifies(mod, vocab, body, err):
            continue
        cited = _surfaced_text(mod, body, err) if body.type == "statement_block" else (
            body if body.type == "call_expression" and _surfaced_text(mod, body, err) is not None else None)
        if cited is None:
            continue
        chain = fn.child_by_field_name("object")
        via = next((c for c in [chain, *ts.descendants(chain)] if c is not None and c.type == "call_expression"
                    and _model_wrapper(mod, project, c, vocab) is not None), None)
        if via is not None:
            yield _surfaced_hit(mod, cited, via, err)


def _surfaced_hit(mod: TsModule, cited: Node, via: Node | None, err: str) -> Hit:
    shown = _short(mod, via.child_by_field_name("function") if via is not None else None, 40)
    return Hit(
        node=cited,
        claim=f"errors of the model request (`{shown}`) reach this catch raw and are only passed on as the text of "
              f"`{err}`: no status, no error class, no retryable flag",
        consequence="a rate limit, an overloaded provider, an expired key and a malformed request end the run the "
                    "same way; neither the loop nor the user can tell which one to retry",
        direction="map provider errors at the client boundary to a small code union (`rate_limited`, `unavailable`, "
                  "`bad_request`, `auth`, `context_length`) with a retryable flag, and hand that code on with the "
                  "message",
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
        if _caught_in_place(throw, fn):
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


def _caught_in_place(throw: Node, fn: Node) -> bool:
    """The throw lies in the body of a `try` of its own function whose `catch` ends the failure there (throws
    nothing on, rejects nothing): the error never reaches a caller, so no caller has a status to branch on."""
    node = throw.parent
    while node is not None and node != fn:
        if node.type == "try_statement":
            body = node.child_by_field_name("body")
            handler = node.child_by_field_name("handler")
            if body is not None and handler is not None and body.start_byte <= throw.start_byte < body.end_byte:
                return not _passes_failure_on(handler)
        node = node.parent
    return False


def _passes_failure_on(handler: Node) -> bool:
    """A `catch` that throws or rejects (nested functions aside: a callback's throw is not this handler's)."""
    todo = list(handler.named_children)
    while todo:
        n = todo.pop()
        if n.type == "throw_statement":
            return True
        if n.type == "call_expression":
            callee = n.child_by_field_name("function")
            name = callee.text.decode(errors="replace") if callee is not None and callee.text is not None else ""
            owner, _, last = name.rpartition(".")
            if last == "reject" or (last == "error" and owner and not _LOGGER.search(owner)):
                return True  # `reject(err)`, `subscriber.error(err)`, `controller.error(err)`; not `console.error`
        if n.type not in FUNCTION_TYPES:
            todo.extend(n.named_children)
    return False


_LOGGER = re.compile(r"(?i)(?:^|\.)(?:console|log|logger|logging|debugLogger|\w*logger)$")

_FAILURE_TEXT = re.compile(r"^\W{0,3}(error|failed|failure|could ?n[o']t|cannot|can't|unable|exception)\b", re.I)
_FAILURE_MARKERS = {"isError", "is_error", "error", "errors", "ok", "success", "failed", "failure", "status",
                    "statusCode", "code", "errorCode", "error_code", "kind", "errorKind", "errorType", "error_type",
                    "retryable", "isRetryable", "outcome", "result_type"}


def _failure_text(mod: TsModule, node: Node | None, err: str | None) -> bool:
    """Whether `node` is text reporting a failure: built from the caught error (`` `Error: ${e}` ``, `err.message`)
    or a string that starts like one (`"Error: …"`, `` `Failed to … ${p}` ``)."""
    node = ts.unwrap(node)
    if node is None:
        return False
    if err is not None and _error_text(mod, node, err):
        return True
    if node.type in ("string", "template_string"):
        return bool(_FAILURE_TEXT.search(mod.node_text(node)[1:]))
    if node.type == "binary_expression":
        left = ts.unwrap(node.child_by_field_name("left"))
        return left is not None and left.type in ("string", "template_string") and _failure_text(mod, left, None)
    return False


def _failure_as_success(mod: TsModule, value: Node | None, err: str | None) -> bool:
    """A returned value that carries a failure only as text: the text itself, or an object (`{ content: [{ type:
    "text", text }] }`, `{ output }`) with such text and no failure marker (`isError`, `ok`, `code`, …)."""
    value = ts.unwrap(value)
    if value is None:
        return False
    if value.type != "object":
        return _failure_text(mod, value, err)
    found = False
    for sub in [value, *ts.descendants(value)]:
        if sub.type in FUNCTION_TYPES:
            return False
        if sub.type == "object" and mod.object_keys(sub).keys() & _FAILURE_MARKERS:
            return False
        if sub.type == "spread_element":
            return False
        if sub.type == "pair" and _failure_text(mod, sub.child_by_field_name("value"), err):
            found = True
    return found


def _tool_impl(mod: TsModule, project: TsProject, node: Node) -> Node | None:
    """The tool implementation whose own body `node` is in (not a callback nested in it)."""
    fn = mod.enclosing_function(node)
    if fn is None:
        return None
    if ts.is_tool_function(mod, fn) or fn.id in ts.registered_tool_functions(mod, project) or \
            _recorded_as_tool_result(mod, project, fn):
        return fn
    return None


_RESULT_RECORD = re.compile(r"\b(tool_call_id|tool_use_id|toolCallId|toolUseId|call_id)\b|"
                            r"['\"](tool-result|tool_result|function_call_output)['\"]|\brole\s*:\s*['\"](tool|function)['\"]")
"""What marks an object literal as the tool-result record of a call (OpenAI, Anthropic, the `ai` package)."""


def _recorded_as_tool_result(mod: TsModule, project: TsProject, fn: Node) -> bool:
    """Whether a project function does a tool's work on its behalf (a call run later, after the user approved it):
    a caller binds its awaited value (`const text = await openApproved(call)`) and puts that value in a tool-result
    record (`{ type: "tool-result", toolCallId, result: text }`, `{ role: "tool", tool_call_id, content: text }`)."""
    if fn.type == "method_definition" or mod.function_name(fn) == "<anonymous>":
        return False
    for cmod, call in ts.callers(mod, project, fn)[:6]:
        holder = call.parent
        while holder is not None and holder.type in ("await_expression", "parenthesized_expression", "as_expression"):
            holder = holder.parent
        if holder is None or holder.type != "variable_declarator":
            continue
        name = holder.child_by_field_name("name")
        caller = cmod.enclosing_function(call)
        if name is None or name.type != "identifier" or caller is None:
            continue
        bound = cmod.node_text(name)
        for obj in cmod.inside(cmod.nodes("object"), caller):
            if not _RESULT_RECORD.search(cmod.node_text(obj)):
                continue
            for value in cmod.object_keys(obj).values():
                if value.type == "identifier" and cmod.node_text(value) == bound:
                    return True
            if any(p.type == "shorthand_property_identifier" and cmod.node_text(p) == bound
                   for p in obj.named_children):
                return True
    return False


def _returned_by_tool(mod: TsModule, project: TsProject, call: Node) -> Node | None:
    """The tool whose result `call` is: `return <call>` or the arrow body of the tool itself."""
    parent = call.parent
    while parent is not None and parent.type in ("await_expression", "parenthesized_expression", "as_expression"):
        parent = parent.parent
    if parent is None:
        return None
    if parent.type == "return_statement" or (parent.type in FUNCTION_TYPES and
                                             _same(ts.unwrap(parent.child_by_field_name("body")), call)):
        return _tool_impl(mod, project, call)
    return None


def _same(a: Node | None, b: Node | None) -> bool:
    return a is not None and b is not None and a.start_byte == b.start_byte and a.end_byte == b.end_byte


@rule(CheckId.C7, lang="typescript", name="tool-returns-failure-as-text")
def tool_returns_failure_as_text(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a tool implementation that catches its own failure and returns it as an ordinary result: text built
    from the error (`` return `Error: could not write ${p}: ${err.message}` ``), a failure message, or an object
    holding only such text (no `isError`, `ok: false` or code), in a `catch` or a `.catch((e) => …)` on the
    returned promise. The dispatcher records a success, so nothing marks the result as failed and nobody can tell
    a retryable failure from a permanent one, even in a project whose other tools use error codes."""
    if ts.skipped_module(mod) or "catch" not in mod.text:
        return
    vocab = _vocabulary(project)
    for tr in mod.nodes("try_statement"):
        handler = tr.child_by_field_name("handler")
        body = tr.child_by_field_name("body")
        hbody = handler.child_by_field_name("body") if handler is not None else None
        if body is None or hbody is None:
            continue
        err = _catch_param(mod, handler) if handler is not None else None
        owner = mod.enclosing_function(tr)
        ret = next((r for r in mod.inside(mod.nodes("return_statement"), hbody)
                    if mod.enclosing_function(r) == owner and r.named_children and not _abort_guarded(mod, r, hbody)
                    and _failure_as_success(mod, r.named_children[0], err)), None)
        if ret is None:
            continue
        tool = _tool_impl(mod, project, tr)
        if tool is None or _tool_invocation(mod, body) is not None:
            continue  # a dispatcher's catch: `caught-tool-error-becomes-text`
        if ((err is not None and (_rethrows(mod, hbody, err) or _classifies(mod, vocab, hbody, err))) or
                _uses_vocabulary(mod, vocab, hbody)) and not _unclassified_fallback(mod, vocab, hbody, ret, err):
            continue
        yield _returns_failure_hit(mod, tool, ret, err)
    for call in ts.calls_named(mod, "catch"):
        args = mod.arguments(call)
        cb = ts.unwrap(args[0]) if args else None
        if cb is None or cb.type not in ("arrow_function", "function_expression", "function"):
            continue
        cb_params = ts.params(cb)
        names = ts.bound_names(mod, ts.param_pattern(cb_params[0])) if cb_params else []
        err = names[0] if names else None
        cb_body = cb.child_by_field_name("body")
        if cb_body is None:
            continue
        if cb_body.type == "statement_block":
            cited = next((r for r in mod.inside(mod.nodes("return_statement"), cb_body) if mod.enclosing_function(r) == cb
                          and r.named_children and _failure_as_success(mod, r.named_children[0], err)), None)
        else:
            cited = call if _failure_as_success(mod, cb_body, err) else None
        tool = _returned_by_tool(mod, project, call) if cited is not None else None
        if tool is not None and cited is not None and not _uses_vocabulary(mod, vocab, cb):
            yield _returns_failure_hit(mod, tool, cited, err)


def _unclassified_fallback(mod: TsModule, vocab: _Vocabulary, hbody: Node, ret: Node, err: str | None) -> bool:
    """Whether the cited return is the catch's fallback for every error its classifying branches did not take:
    `if (e instanceof ToolTimeout) return { error: "timeout", retryable: true }; return `Error: ${e.message}``.
    The classified kinds are handled; everything else (an HTTP status, a client's own timeout) still reaches the
    model as bare text."""
    if ret.parent is None or ret.parent.id != hbody.id or _uses_vocabulary(mod, vocab, ret) or \
            (err is not None and _classifies(mod, vocab, ret, err)):
        return False
    earlier = [c for c in hbody.named_children if c.end_byte <= ret.start_byte and c.type != "comment"]
    if not earlier or any(c.type != "if_statement" or c.child_by_field_name("alternative") is not None
                          for c in earlier):
        return False
    return all(re.search(r"\b(return|throw)\b", mod.node_text(c.child_by_field_name("consequence"))) for c in earlier)


def _returns_failure_hit(mod: TsModule, tool: Node, node: Node, err: str | None) -> Hit:
    source = f"built from `{err}`" if err else "describing the failure"
    name = mod.function_name(tool)
    label = f"the tool `{name}`" if name != "<anonymous>" else f"the tool function at line {mod.line(tool)}"
    return Hit(
        node=node,
        claim=f"{label} catches its own failure and returns text {source} as an ordinary "
              "result, with no error flag or code",
        consequence="the dispatcher and the loop record a success; nothing marks the result as failed, and nobody "
                    "can tell whether a retry makes sense (a missing file, a denial and a timeout read alike)",
        direction="throw (or return) the project's tool error with a code and a `retryable` flag, or at least a "
                  "result that marks failure (`isError: true` / `ok: false`) with a code, and let the dispatcher "
                  "report it as an error",
    )
