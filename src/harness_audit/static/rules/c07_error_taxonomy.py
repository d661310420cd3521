"""C7 · Error taxonomy and retryability — Python rules.

Every rule stays silent in a project that shows an error taxonomy anywhere: an Enum of error codes / kinds, a
`Literal[...]` error-kind alias, a `retryable` / `is_transient` classification, or a family of project exception
classes (a base and at least two subclasses).

Shapes detected:
- `tool-error-flattened-to-string`: a broad `except` around a tool invocation turns the exception into a string
  (`f"Error: {e}"`, `str(e)`) that becomes the tool result.
- `provider-error-flattened`: a broad or provider `except` around a model call re-raises a bare
  `Exception` / `RuntimeError` or returns the error as a string, dropping the provider's status and type.
- `untyped-tool-exception`: a tool or tool dispatcher raises a bare `Exception` / `RuntimeError`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from harness_audit.findings import CheckId
from harness_audit.static import idioms
from harness_audit.static.lang.python import FunctionNode, PyModule, PyProject, subtree
from harness_audit.static.registry import Hit, rule

_src = idioms.source_text

_BROAD = {"Exception", "BaseException"}
_PROVIDER_ERRORS = {"APIError", "APIStatusError", "OpenAIError", "AnthropicError", "APIConnectionError",
                    "GoogleAPIError", "ClientError", "HTTPStatusError", "HTTPError", "RequestException"}
_GENERIC_RAISES = {"Exception", "RuntimeError", "BaseException"}
_TAXONOMY_NAME = re.compile(r"(error|failure|fault|exception)|(code|codes)$", re.I)
_RETRY_CLASS = re.compile(r"retr[yi]able|retriable|is_transient|transient|should_retry", re.I)
_EXC_BASES = {"Exception", "BaseException", "RuntimeError", "ValueError", "OSError", "IOError", "LookupError",
              "TypeError", "KeyError", "TimeoutError", "ConnectionError", "PermissionError"}
_TOOL_RECEIVER = re.compile(r"(tool|handler|func|fn|impl|callable|action|command)", re.I)
_TOOL_INVOKE_METHODS = {"invoke", "ainvoke", "run", "arun", "forward", "execute", "aexecute", "call", "acall",
                        "__call__", "call_tool", "run_tool", "execute_tool"}
_CODE_KEYS = {"code", "error_code", "kind", "error_type", "category", "retryable", "error_kind", "status_code"}
_LOGGING = re.compile(r"(^|\.)(log|logger|logging|_log|_logger|warnings|console)\.|^print$")

_TAXONOMY: list[tuple[PyProject, bool]] = []


def _has_taxonomy(project: PyProject) -> bool:
    """Whether the project shows an error classification anywhere (cached per project)."""
    if _TAXONOMY and _TAXONOMY[0][0] is project:
        return _TAXONOMY[0][1]
    found = _find_taxonomy(project)
    _TAXONOMY[:] = [(project, found)]
    return found


def _find_taxonomy(project: PyProject) -> bool:
    exc_parent: dict[str, str | None] = {}
    for mod in project.modules.values():
        for cls in mod.nodes(ast.ClassDef):
            bases = [idioms.last(mod.dotted(b) or "") for b in cls.bases]
            if any(b.endswith("Enum") for b in bases) and _TAXONOMY_NAME.search(cls.name):
                return True
            if any(_RETRY_CLASS.search(n.name) for n in cls.body if isinstance(n, FunctionNode)):
                return True
            exc_parent[cls.name] = bases[0] if bases else None
        for node in [*mod.nodes(ast.Assign), *mod.nodes(ast.AnnAssign)]:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            value = node.value
            if isinstance(value, ast.Subscript) and idioms.last(mod.dotted(value.value) or "") == "Literal" and \
                    any(isinstance(t, ast.Name) and _TAXONOMY_NAME.search(t.id) for t in targets):
                return True
            if any(_RETRY_CLASS.search(idioms.last(mod.dotted(t) or "")) for t in targets) and \
                    mod.enclosing_function(node) is None and _names_codes(value):
                return True
        for kw in mod.nodes(ast.keyword):
            if kw.arg and _RETRY_CLASS.search(kw.arg):
                return True
        for attr in mod.nodes(ast.Attribute):
            if _RETRY_CLASS.search(attr.attr):
                return True
    return _exception_family(exc_parent)


def _names_codes(value: ast.expr | None) -> bool:
    """A module- or class-level collection of string error codes (`RETRYABLE = {"timeout", "rate_limited"}`), not
    a retry policy over exception types or HTTP statuses (`TRANSIENT = (ConnectionError, Timeout)`)."""
    return value is not None and any(isinstance(n, ast.Constant) and isinstance(n.value, str) for n in subtree(value))


def _exception_family(parent: dict[str, str | None]) -> bool:
    """A project exception base with at least two project subclasses."""

    def is_exception(name: str, depth: int = 0) -> bool:
        if name in _EXC_BASES or name.endswith(("Error", "Exception")):
            return True
        up = parent.get(name)
        return depth < 6 and up is not None and is_exception(up, depth + 1)

    children: dict[str, int] = {}
    for name, base in parent.items():
        if base is not None and base in parent and is_exception(name):
            children[base] = children.get(base, 0) + 1
    return any(count >= 2 for count in children.values())


def _caught(mod: PyModule, handler: ast.ExceptHandler) -> set[str]:
    names = mod.handler_names(handler)
    return names or {"BaseException"}


def _exc_string(mod: PyModule, expr: ast.AST, exc: str) -> bool:
    """Whether `expr` is a string made from the exception (`f"Error: {e}"`, `str(e)`, `"x" + repr(e)`, traceback)."""
    for node in subtree(expr):
        if isinstance(node, ast.FormattedValue) and any(isinstance(n, ast.Name) and n.id == exc
                                                        for n in subtree(node.value)):
            return True
        if isinstance(node, ast.Call):
            name = mod.call_name(node)
            if name in {"str", "repr", "format"} and node.args and isinstance(node.args[0], ast.Name) and \
                    node.args[0].id == exc:
                return True
            if name in {"traceback.format_exc", "traceback.format_exception"}:
                return True
    return False


def _carries_code(expr: ast.AST) -> bool:
    for node in subtree(expr):
        if isinstance(node, ast.Dict) and any(isinstance(k, ast.Constant) and k.value in _CODE_KEYS
                                              for k in node.keys):
            return True
        if isinstance(node, ast.Call) and any(kw.arg in _CODE_KEYS for kw in node.keywords):
            return True
    return False


def _string_outlets(mod: PyModule, handler: ast.ExceptHandler, exc: str) -> list[ast.AST]:
    """Statements in the handler that hand an exception-made string onwards (return, assignment, append, yield).
    A statement that hands on the exception object too, and a local text that only such a statement reads, keep
    the failure's type."""
    out: list[ast.AST] = []
    keeping = [n for n in mod.walk_body(handler.body) if isinstance(n, ast.Return | ast.Expr | ast.Assign | ast.AnnAssign)
               and n.value is not None and _carries_exception(n.value, exc)]
    for node in mod.walk_body(handler.body):
        value: ast.AST | None = None
        passes_on = isinstance(node, ast.Return | ast.Assign | ast.AnnAssign) or (
            isinstance(node, ast.Expr) and isinstance(node.value, ast.Yield | ast.YieldFrom | ast.Await))
        if passes_on:
            value = node.value  # type: ignore[union-attr]  # every accepted statement has a `value`
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            callee = mod.call_name(node.value)
            if _LOGGING.search(callee) or not isinstance(node.value.func, ast.Attribute) or \
                    node.value.func.attr not in {"append", "put", "put_nowait", "send", "add", "extend"}:
                continue
            value = node.value
        if value is None or not _exc_string(mod, value, exc) or _carries_code(value) or _carries_exception(value, exc):
            continue
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else \
            node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and _only_read_by(mod, handler, target.id, keeping):
            continue
        out.append(node)
    return out


def _binds_exception(mod: PyModule, handler: ast.ExceptHandler, exc: str) -> bool:
    """Whether the handler keeps the exception object itself (`exception = e`, `self.error = e`): it travels on
    beside any text made from it, so the failure keeps its type."""
    return any(isinstance(n, ast.Assign) and isinstance(n.value, ast.Name) and n.value.id == exc
               for n in mod.walk_body(handler.body))


def _only_read_by(mod: PyModule, handler: ast.ExceptHandler, name: str, keeping: list[ast.stmt]) -> bool:
    """Whether the local `name` is read in the handler only inside the statements of `keeping` (and at least once)."""
    inside = {id(n) for stmt in keeping for n in subtree(stmt)}
    reads = [n for n in mod.walk_body(handler.body) if isinstance(n, ast.Name) and n.id == name and
             isinstance(n.ctx, ast.Load)]
    return bool(reads) and all(id(n) in inside for n in reads)


_TEXT_BUILTINS = {"str", "repr", "format", "type", "print", "id", "vars", "dir", "isinstance", "getattr", "hasattr"}
"""Builtins that read the exception without passing it on (`str(e)`, `type(e)`)."""


def _carries_exception(value: ast.AST, exc: str) -> bool:
    """Whether the exception object itself travels with the text (`wrap(result, exception=e)`, `{"error": e}`,
    `Failure(msg, e)`): whoever receives the result can still tell the failure's type."""
    for node in subtree(value):
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _TEXT_BUILTINS) and (
                any(isinstance(a, ast.Name) and a.id == exc for a in node.args) or
                any(isinstance(k.value, ast.Name) and k.value.id == exc for k in node.keywords)):
            return True
        if isinstance(node, ast.Dict) and any(isinstance(v, ast.Name) and v.id == exc for v in node.values):
            return True
    return False


def _reraises(mod: PyModule, handler: ast.ExceptHandler) -> bool:
    """Whether the handler re-raises the exception or raises a typed (non-generic) one."""
    for node in mod.walk_body(handler.body):
        if isinstance(node, ast.Raise):
            if node.exc is None:
                return True
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if (mod.qualname(exc) or "") not in _GENERIC_RAISES:
                return True
    return False


def _registry_bound(mod: PyModule, fn: FunctionNode | None) -> set[str]:
    """Names bound from a tool-registry lookup in `fn` (`handler = TOOLS[name]`, `fn = self.tools.get(name)`)."""
    if fn is None:
        return set()
    out: set[str] = set()
    for name, values in idioms.assigned_values(mod, fn).items():
        for value in values:
            base = value.value if isinstance(value, ast.Subscript) else \
                value.func.value if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
                value.func.attr == "get" else None
            if base is not None and _TOOL_RECEIVER.search(mod.dotted(base) or _src(mod, base)):
                out.add(name)
    return out


def _tool_invocation(mod: PyModule, project: PyProject, body: list[ast.stmt], bound: set[str],
                     hops: int = 1) -> ast.Call | None:
    """A call in `body` that runs a model-chosen tool (directly, or through a project helper `hops` calls down)."""
    for node in mod.walk_body(body):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = mod.call_name(node)
        short = idioms.last(name) if name else ""
        if idioms.TOOL_DISPATCH_NAME.search(short):
            return node
        if isinstance(func, ast.Subscript) and _TOOL_RECEIVER.search(mod.dotted(func.value) or _src(mod, func.value)):
            return node
        if isinstance(func, ast.Name) and func.id in bound:
            return node
        if isinstance(func, ast.Attribute):
            recv = func.value
            recv_name = mod.dotted(recv) or ""
            if func.attr in _TOOL_INVOKE_METHODS and (
                    re.search(r"tool", recv_name, re.I) or (isinstance(recv, ast.Name) and recv.id in bound)
                    or isinstance(recv, ast.Subscript)):
                return node
        if mod.has_kwargs_splat(node) and _TOOL_RECEIVER.search(short):
            return node
        for ref in project.resolve_call(mod, node):
            if idioms.is_tool_function_wide(ref.module, ref.node, project):
                return node
            if hops > 0 and _tool_invocation(ref.module, project, ref.node.body,
                                             _registry_bound(ref.module, ref.node), hops - 1) is not None:
                return node
    return None


@rule(CheckId.C7, lang="python", name="tool-error-flattened-to-string")
def tool_error_flattened_to_string(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a broad `except` around a tool invocation that turns the exception into a string (`f"Error: {e}"`,
    `str(e)`) and hands it on as the tool result, in a project with no error codes. The loop and the model see
    text only, so a timeout, a denial and a bug look alike and nobody can decide whether a retry makes sense. Text
    handed on together with the exception object (`wrap(result, exception=e)`) keeps the failure's type and is not
    reported."""
    if _has_taxonomy(project):
        return
    for tr in mod.trys():
        broad = [h for h in tr.handlers if _caught(mod, h) & _BROAD]
        if not broad:
            continue
        fn = mod.enclosing_function(tr)
        invoked = _tool_invocation(mod, project, tr.body, _registry_bound(mod, fn))
        if invoked is None:
            continue
        for handler in broad:
            if handler.name is None or _reraises(mod, handler) or _binds_exception(mod, handler, handler.name):
                continue
            outlets = _string_outlets(mod, handler, handler.name)
            if not outlets:
                continue
            yield Hit(
                node=outlets[0],
                claim=f"a failure of `{_src(mod, invoked.func)}` reaches the loop only as text built from "
                      f"`{handler.name}`, with no error code",
                consequence="the loop cannot tell a timeout from a denial from a bug, so it retries everything or "
                            "nothing and the model guesses from prose",
                direction="map exceptions at the dispatch boundary to a small error-code enum with a `retryable` "
                          "flag and return it alongside the message",
            )
            break


@rule(CheckId.C7, lang="python", name="provider-error-flattened")
def provider_error_flattened(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags an `except` around a model call that re-raises a bare `Exception` / `RuntimeError` or returns the
    error as a string, in a project with no error codes. The provider's status (429, 5xx, 400) and type are lost,
    so callers cannot separate a rate limit from a bad request."""
    if _has_taxonomy(project):
        return
    for tr in mod.trys():
        model_call = next((n for n in mod.walk_body(tr.body)
                           if isinstance(n, ast.Call) and idioms.is_model_call(mod, n)), None)
        if model_call is None:
            continue
        for handler in tr.handlers:
            caught = _caught(mod, handler)
            if not caught & (_BROAD | _PROVIDER_ERRORS):
                continue
            cited: ast.AST | None = None
            for node in mod.walk_body(handler.body):
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and \
                        mod.call_name(node.exc) in _GENERIC_RAISES:
                    cited = node
                    break
            if cited is None and handler.name is not None:
                returns = [o for o in _string_outlets(mod, handler, handler.name) if isinstance(o, ast.Return)]
                cited = returns[0] if returns else None
            if cited is None:
                continue
            yield Hit(
                node=cited,
                claim=f"errors of the model call `{mod.call_name(model_call)}` are flattened into an untyped "
                      "exception or string",
                consequence="a rate limit, an outage and a malformed request look the same to the caller, which "
                            "retries all of them or none",
                direction="map provider exceptions at the client boundary to an error-code enum (rate_limited, "
                          "unavailable, bad_request, auth) with a retryable classification",
            )
            break


def _untyped_failure(mod: PyModule, node: ast.Raise) -> bool:
    """`raise Exception(...)`, or `raise RuntimeError(f"...")` carrying runtime data (an operational failure,
    unlike a constant-message invariant check)."""
    if not isinstance(node.exc, ast.Call):
        return False
    name = mod.call_name(node.exc)
    if name in {"Exception", "BaseException"}:
        return True
    return name == "RuntimeError" and bool(node.exc.args) and isinstance(node.exc.args[0], ast.JoinedStr)


@rule(CheckId.C7, lang="python", name="untyped-tool-exception")
def untyped_tool_exception(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a tool function or tool dispatcher that raises a bare `Exception` (or a `RuntimeError` with runtime
    details), in a project with no error codes. The loop can only catch everything or nothing; it cannot tell a retryable failure from a
    permanent one."""
    if _has_taxonomy(project):
        return
    for fn in mod.functions():
        if not (idioms.is_tool_function(mod, fn, project) or idioms.TOOL_DISPATCH_NAME.search(fn.name)):
            continue
        for node in mod.walk(fn):
            if isinstance(node, ast.Raise) and _untyped_failure(mod, node):
                assert isinstance(node.exc, ast.Call)
                yield Hit(
                    node=node,
                    claim=f"the tool path `{fn.name}` raises a bare `{mod.call_name(node.exc)}`",
                    consequence="whoever catches it sees only a message, so a permanent failure is retried and a "
                                "transient one is given up on",
                    direction="raise a tool error carrying a code from a small enum with a `retryable` "
                              "classification",
                )
                break


@rule(CheckId.C7, lang="python", name="tool-returns-error-string")
def tool_returns_error_string(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a tool function that catches an exception and returns text built from it (`f"Error: {e}"`) as its
    result, in a project with no error codes. The loop receives a successful-looking string, so it can neither
    mark the result as an error nor tell a retryable failure from a permanent one."""
    if _has_taxonomy(project):
        return
    for tr in mod.trys():
        fn = mod.enclosing_function(tr)
        if fn is None or not idioms.is_tool_function_wide(mod, fn, project):
            continue
        if _tool_invocation(mod, project, tr.body, _registry_bound(mod, fn), 0) is not None:
            continue  # a dispatcher: reported by tool-error-flattened-to-string
        for handler in tr.handlers:
            if handler.name is None or _reraises(mod, handler):
                continue
            returns = [o for o in _string_outlets(mod, handler, handler.name)
                       if isinstance(o, ast.Return) and mod.enclosing_function(o) is fn]
            if not returns:
                continue
            yield Hit(
                node=returns[0],
                claim=f"the tool `{fn.name}` returns its failure as text built from `{handler.name}`, with no "
                      "error code",
                consequence="the loop records the failure as an ordinary result; nobody can tell whether a retry "
                            "makes sense",
                direction="raise (or return) a tool error carrying a code from a small enum with a `retryable` "
                          "flag, and let the dispatcher mark the result as an error",
            )
            break


def _http_function(mod: PyModule, fn: FunctionNode) -> ast.Call | None:
    return next((n for n in mod.walk(fn) if isinstance(n, ast.Call) and idioms.is_http_call(mod, n)), None)


@rule(CheckId.C7, lang="python", name="untyped-client-exception")
def untyped_client_exception(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a function that makes an HTTP call and reports its failure by raising a bare `Exception` (or a
    `RuntimeError` with runtime details), in a project with no error codes. The status that says whether the
    failure is retryable (429, 5xx) or permanent (4xx) is folded into a message nobody can branch on. A function
    every call chain of which starts in a constructor fails while objects are built, not in the agent loop, and
    is not reported."""
    if _has_taxonomy(project):
        return
    for fn in mod.functions():
        if idioms.is_tool_function_wide(mod, fn, project) or idioms.TOOL_DISPATCH_NAME.search(fn.name):
            continue  # reported by untyped-tool-exception
        if idioms.reached_only_from_initialisers(project, mod, fn):
            continue  # a failure while objects are built (spec discovery) never reaches the agent loop
        http = None
        for node in mod.walk(fn):
            if not (isinstance(node, ast.Raise) and _untyped_failure(mod, node)):
                continue
            http = http or _http_function(mod, fn)
            if http is None:
                break
            assert isinstance(node.exc, ast.Call)
            yield Hit(
                node=node,
                claim=f"`{fn.name}` turns a failure of `{mod.call_name(http)}` into a bare "
                      f"`{mod.call_name(node.exc)}`",
                consequence="callers see only a message, so a rate limit is treated like a bad request and either "
                            "everything is retried or nothing is",
                direction="raise a typed error carrying the status mapped to a small code enum with a `retryable` "
                          "classification",
            )
            break


def _caught_above(project: PyProject, mod: PyModule, fn: FunctionNode, depth: int = 2) -> bool:
    """Whether some caller (up to `depth` calls up) runs `fn` inside a `try` that handles broad or provider errors.
    A method's callers include the calls that may reach it by dynamic dispatch (`agent_loop.predict_step(...)` on
    a loop object nothing resolves)."""
    if depth == 0:
        return False
    callers = idioms.callers_of(project, fn, mod) + idioms.dispatch_callers_of(project, fn, mod)
    for cmod, call in callers[:20]:
        for tr, part in cmod.enclosing_trys(call):
            if part == "body" and any(_caught(cmod, h) & (_BROAD | _PROVIDER_ERRORS) or
                                      any(n.endswith(("Error", "Exception")) for n in _caught(cmod, h))
                                      for h in tr.handlers):
                return True
        cfn = cmod.enclosing_function(call)
        if cfn is not None and _caught_above(project, cmod, cfn, depth - 1):
            return True
    return False


def _framework_hook(project: PyProject, mod: PyModule, fn: FunctionNode) -> bool:
    """`fn` is a method of a class that extends an imported library class (`class Adapter(CustomLLM)`), and
    nothing in the project calls it: the library calls it, and its failures reach the agent loop through the
    library call that the project makes, which is judged where it stands."""
    klass = mod.parent(fn)
    if not isinstance(klass, ast.ClassDef):
        return False
    external = False
    for base in klass.bases:
        head = (mod.dotted(base) or "").partition(".")[0]
        target = mod.imports.get(head)
        if target is None or project.module(target.rpartition(".")[0] or target) is not None:
            continue
        external = True
    return external and not idioms.callers_of(project, fn, mod) and not idioms.dispatch_callers_of(project, fn, mod)


def _calls_project_wrapper(project: PyProject, mod: PyModule, fn: FunctionNode, call: ast.Call) -> bool:
    """The call reaches a function of the project itself, not a provider SDK: one the call graph resolves
    (`self.generate(...)`), or a method of a project class the receiver parameter is annotated with
    (`chat: Responses` … `chat.generate(...)`). The provider's raw exception is raised by that function's own
    model call, which is judged where it stands (and is reported there when nothing maps it)."""
    if project.resolve_call(mod, call):
        return True
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return False
    cls = idioms.annotation_class(mod, fn, func.value.id)
    return bool(cls) and any(m.method(cls, func.attr) is not None for m in project.modules.values())


@rule(CheckId.C7, lang="python", name="provider-error-unmapped")
def provider_error_unmapped(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a model call that no `try` encloses, neither in its function nor in its callers (two calls up), in an
    agent project with no error codes. The provider's raw exception (rate limit, timeout, bad request) escapes the
    agent's entry point unclassified, so the caller cannot decide whether to retry. A call to the project's own
    model wrapper (`chat.generate(...)` with `chat` annotated as a project class) is not a provider call: the
    wrapper's own request is judged where it stands."""
    if _has_taxonomy(project) or idioms.is_test_module(mod):
        return
    reported: set[FunctionNode] = set()
    for call in mod.calls():
        if not idioms.is_model_call(mod, call):
            continue
        fn = mod.enclosing_function(call)
        if fn is None or fn in reported or mod.enclosing_trys(call) or idioms.retry_decorator(mod, fn) is not None:
            continue
        if (_caught_above(project, mod, fn) or _calls_project_wrapper(project, mod, fn, call) or
                _framework_hook(project, mod, fn)):
            continue
        reported.add(fn)
        yield Hit(
            node=call,
            claim=f"errors of the model call `{mod.call_name(call)}` in `{fn.name}` propagate as raw provider "
                  "exceptions; nothing maps them to a code",
            consequence="a rate limit, an outage and a malformed request reach the caller as different library "
                        "exception types it has no contract for, so it retries all of them or none",
            direction="catch provider errors at the client boundary and map them to an error-code enum "
                      "(rate_limited, unavailable, bad_request, auth) with a retryable classification",
        )
