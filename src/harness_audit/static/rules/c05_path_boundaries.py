"""C5 · Path and sandbox boundaries — Python rules.

A path is model-supplied when it is a tool function's parameter, comes out of a tool call's decoded arguments, or
is passed down from either (see `idioms.model_tainted_names`). The containment-check rules also judge checks on a
value a web route handler takes from the HTTP request (a handler parameter, `request.json`): the check shows the
value is untrusted, so a check that `../` or a symlink passes is a real escape.

Shapes detected:
- `unconfined-model-path`: a model-supplied path reaches `open` / `read_text` / `os.remove` / `shutil.*` with no
  containment check in the function.
- `lexical-path-containment`: the containment check runs on a path that was never resolved through symlinks
  (`abspath` / `normpath` / `os.path.join` then `startswith` / `is_relative_to` / `commonpath`).
- `prefix-path-containment`: `startswith(root)` without a trailing separator (`/srv/app` admits `/srv/app-secrets`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from harness_audit.findings import CheckId
from harness_audit.static import idioms
from harness_audit.static.lang.python import FunctionNode, PyModule, PyProject, subtree
from harness_audit.static.registry import Hit, rule

_src = idioms.source_text

_FS_FUNCS_ONE = {"open", "io.open", "aiofiles.open", "codecs.open", "os.open", "os.remove", "os.unlink", "os.rmdir",
                 "os.removedirs", "os.makedirs", "os.mkdir", "os.listdir", "os.scandir", "os.walk", "os.chmod",
                 "os.truncate", "shutil.rmtree", "aiofiles.os.remove", "aiofiles.os.unlink", "os.path.getsize",
                 "send_file", "fastapi.responses.FileResponse", "starlette.responses.FileResponse", "FileResponse"}
_FS_FUNCS_TWO = {"os.rename", "os.replace", "shutil.copy", "shutil.copy2", "shutil.copyfile", "shutil.copytree",
                 "shutil.move", "os.symlink", "os.link"}
_FS_METHODS = {"read_text", "read_bytes", "write_text", "write_bytes", "unlink", "rmdir", "iterdir", "touch",
               "mkdir", "open", "rename", "replace", "rglob", "glob"}
_RESOLVED = re.compile(r"realpath|\.resolve\(|readlink|\bresolve\(|_resolve|resolve_path|canonical")
_VALIDATING_CALL = re.compile(r"(safe|secure|sanitiz|validat|check|ensure|confine|sandbox|within|inside|contain|"
                              r"jail|guard|restrict|allowed|resolve)", re.I)
_PATHISH = re.compile(r"(path|file|dir|folder|target|dest|full|abs|real|resolved|location|root|base|workspace|"
                      r"sandbox|cwd|home)", re.I)
_SEPARATOR = re.compile(r"os\.sep|os\.path\.sep|['\"][/\\\\]+['\"]|/['\"]\s*$|/[}'\"]|join\([^)]*,\s*['\"]{2}\)|sep\b")
_TEMP_NAME = re.compile(r"\b(mkstemp|mkdtemp|NamedTemporaryFile|TemporaryDirectory|mktemp)\(")
_CHECK_METHODS = {"is_relative_to", "relative_to", "startswith"}
_CHECK_FUNCS = {"os.path.commonpath", "os.path.commonprefix", "posixpath.commonpath", "ntpath.commonpath"}
_CHECK_SHORT = _CHECK_METHODS | {"commonpath", "commonprefix"}


@dataclass(frozen=True, slots=True)
class _Check:
    """One containment test: `checked` is compared against `root`."""

    node: ast.Call
    kind: str
    checked: ast.expr
    root: ast.expr | None


_SINK_SHORT = {idioms.last(n) for n in _FS_FUNCS_ONE | _FS_FUNCS_TWO} | _FS_METHODS


def _sink_paths(mod: PyModule, call: ast.Call) -> list[ast.expr]:
    """The path expressions a filesystem call opens, writes, lists or deletes."""
    func = call.func
    short = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if short not in _SINK_SHORT:
        return []
    if isinstance(func, ast.Attribute) and func.attr in _FS_METHODS:
        name = mod.call_name(call)
        if name in _FS_FUNCS_ONE or name in _FS_FUNCS_TWO:
            pass
        elif func.attr == "open":
            first = call.args[0] if call.args else None
            if first is None or (isinstance(first, ast.Constant) and isinstance(first.value, str)):
                return [func.value] if _pathlike_receiver(mod, func.value) else []
            return []
        elif func.attr in {"rename", "replace"}:
            return [func.value, *call.args[:1]] if _pathlike_receiver(mod, func.value) else []
        else:
            return [func.value] if _pathlike_receiver(mod, func.value) else []
    name = mod.call_name(call)
    if name in _FS_FUNCS_ONE:
        first = call.args[0] if call.args else PyModule.keyword(call, "file") or PyModule.keyword(call, "path")
        return [first] if first is not None and not isinstance(first, ast.Starred) else []
    if name in _FS_FUNCS_TWO:
        return [a for a in call.args[:2] if not isinstance(a, ast.Starred)]
    return []


_SINK_CACHE: dict[int, tuple[PyModule, list[tuple[ast.Call, list[ast.expr]]]]] = {}


def _sinks(mod: PyModule) -> list[tuple[ast.Call, list[ast.expr]]]:
    """Every filesystem call of the module with the paths it touches (cached per module)."""
    hit = _SINK_CACHE.get(id(mod))
    if hit is not None and hit[0] is mod:
        return hit[1]
    out = [(call, paths) for call in mod.calls_to(_SINK_SHORT) if (paths := _sink_paths(mod, call))]
    if len(_SINK_CACHE) > 8192:
        _SINK_CACHE.clear()
    _SINK_CACHE[id(mod)] = (mod, out)
    return out


def _pathlike_receiver(mod: PyModule, expr: ast.expr) -> bool:
    """A receiver of `.read_text()` & co. that is a path: `Path(...)`, `root / p`, or a path-named variable."""
    if isinstance(expr, ast.Call):
        return idioms.last(mod.call_name(expr)) in {"Path", "PurePath", "PosixPath", "resolve", "absolute",
                                                     "expanduser", "joinpath", "with_suffix", "with_name"}
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Div):
        return True
    dotted = mod.dotted(expr)
    return bool(dotted) and bool(_PATHISH.search(idioms.last(dotted or "")) or dotted in {"p", "fp", "f"})


_CHECK_CACHE: dict[int, tuple[PyModule, dict[FunctionNode, list[ast.Call]]]] = {}


def _check_calls(mod: PyModule) -> dict[FunctionNode, list[ast.Call]]:
    """Calls that may be containment checks, per enclosing function (one pass over the module's calls, cached)."""
    hit = _CHECK_CACHE.get(id(mod))
    if hit is not None and hit[0] is mod:
        return hit[1]
    out: dict[FunctionNode, list[ast.Call]] = {}
    for call in mod.calls_to(_CHECK_SHORT):
        fn = mod.enclosing_function(call)
        if fn is not None:
            out.setdefault(fn, []).append(call)
    if len(_CHECK_CACHE) > 8192:
        _CHECK_CACHE.clear()
    _CHECK_CACHE[id(mod)] = (mod, out)
    return out


def _checks(mod: PyModule, project: PyProject, fn: FunctionNode) -> list[_Check]:
    out: list[_Check] = []
    for node in _check_calls(mod).get(fn, []):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _CHECK_METHODS and node.args:
            root = node.args[0]
            if func.attr == "startswith" and not _pathish_startswith(mod, fn, func.value, root):
                continue
            out.append(_Check(node, func.attr, func.value, root))
            continue
        name = mod.call_name(node)
        if name in _CHECK_FUNCS and node.args and isinstance(node.args[0], ast.List | ast.Tuple):
            elts = node.args[0].elts
            if len(elts) == 2:
                root, checked = elts
                if idioms.model_sourced_wide(project, mod, root):
                    root, checked = checked, root
                out.append(_Check(node, idioms.last(name), checked, root))
    return out


def _pathish_startswith(mod: PyModule, fn: FunctionNode, value: ast.expr, prefix: ast.expr) -> bool:
    """`x.startswith(root)` where both sides look like filesystem paths (not `name.startswith("_")`)."""
    if isinstance(prefix, ast.Constant):  # a root names a directory: `"/"` or `"//"` only asks whether it is absolute
        return isinstance(prefix.value, str) and prefix.value.startswith("/") and bool(prefix.value.strip("/"))
    if isinstance(prefix, ast.Tuple | ast.JoinedStr) or not _PATHISH.search(_src(mod, prefix)):
        return False
    value_text = idioms.derivation_text(mod, fn, value, 2)
    prefix_text = idioms.derivation_text(mod, fn, prefix, 2)
    path_value = bool(re.search(r"os\.path|Path\(|resolve\(|realpath|abspath|normpath", value_text)) or \
        bool(_PATHISH.search(mod.dotted(value) or _src(mod, value)))
    return path_value and bool(_PATHISH.search(prefix_text))


def _helper_validates(mod: PyModule, project: PyProject, fn: FunctionNode, expr: ast.expr) -> bool:
    """Whether the value passed through a call that may validate it (a project function, or a `safe_…` helper)."""
    pending: list[ast.AST] = [expr]
    seen: set[int] = set()
    values = idioms.assigned_values(mod, fn)
    while pending:
        cur = pending.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        for node in subtree(cur):
            if isinstance(node, ast.Call):
                name = mod.call_name(node)
                if _VALIDATING_CALL.search(idioms.last(name) if name else "") or project.resolve_call(mod, node):
                    return True
            elif isinstance(node, ast.Name):
                pending.extend(values.get(node.id, []))
    return False


_ROUTE_METHODS = {"get", "post", "put", "patch", "delete", "route", "api_route", "websocket"}
_REQUEST_FIELDS = re.compile(r"\brequest\.(json|args|form|values|files|data|get_json|query_params|path_params)\b")


def _route_handler(mod: PyModule, fn: FunctionNode) -> bool:
    """A web route handler (`@app.post("/exports")`, `@router.get("/files/{name}")`, `@bp.route("/x")`): every
    parameter it is called with comes from the HTTP request."""
    for dec in fn.decorator_list:
        if not isinstance(dec, ast.Call) or not isinstance(dec.func, ast.Attribute):
            continue
        first = dec.args[0] if dec.args else None
        if dec.func.attr in _ROUTE_METHODS and isinstance(first, ast.Constant) and isinstance(first.value, str) \
                and first.value.startswith("/"):
            return True
    return False


def _request_sourced(mod: PyModule, fn: FunctionNode, expr: ast.expr) -> bool:
    """Whether a checked path comes from the HTTP request of a route handler: a handler parameter (not a
    `Depends(...)` injection) or Flask's `request.json` / `request.args`. A containment test on it shows the value
    is treated as untrusted, so a test that `../` or a symlink gets past is a real escape."""
    if not _route_handler(mod, fn):
        return False
    args = fn.args
    positional = [*args.posonlyargs, *args.args]
    defaults: dict[str, ast.expr] = dict(zip([a.arg for a in positional][len(positional) - len(args.defaults):],
                                             args.defaults, strict=True))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    params = {a.arg for a in [*positional, *args.kwonlyargs]
              if not (isinstance(defaults.get(a.arg), ast.Call) and
                      idioms.last(mod.call_name(defaults[a.arg])) in {"Depends", "Security"})} - {"self", "cls"}
    if _derived_names(mod, fn, expr) & params:
        return True
    return bool(_REQUEST_FIELDS.search(idioms.derivation_text(mod, fn, expr)))


def _model_checks(mod: PyModule, project: PyProject, fn: FunctionNode) -> list[_Check]:
    """Containment checks in `fn` whose checked value is model-supplied (or, in a web route handler, comes from
    the request)."""
    return [c for c in _checks(mod, project, fn)
            if (idioms.model_sourced_wide(project, mod, c.checked) or _request_sourced(mod, fn, c.checked)) and
            not _after_every_use(mod, fn, c)]


def _temp_generated(mod: PyModule, fn: FunctionNode, path: ast.expr) -> bool:
    """Whether `path` is a name bound from `tempfile.mkstemp(...)` & co. (tuple targets included)."""
    if _TEMP_NAME.search(_src(mod, path)):
        return True
    if not isinstance(path, ast.Name):
        return False
    for node in mod.walk(fn):
        if isinstance(node, ast.Assign) and _TEMP_NAME.search(_src(mod, node.value)) and any(
                isinstance(n, ast.Name) and n.id == path.id for t in node.targets for n in subtree(t)):
            return True
    return False


@rule(CheckId.C5, lang="python", name="unconfined-model-path")
def unconfined_model_path(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a model-supplied path (a tool parameter or a decoded tool argument) that reaches a filesystem call
    with no containment check in the function. `../../.ssh/id_rsa` or an absolute path is then read, written or
    deleted wherever it points."""
    for call, paths in _sinks(mod):
        fn = mod.enclosing_function(call)
        if fn is None:
            continue
        for path in paths:
            if not idioms.model_sourced_wide(project, mod, path) or _helper_validates(mod, project, fn, path):
                continue
            if _temp_generated(mod, fn, path):
                continue  # a name the OS generated (next to a validated path), not one the model chose
            if _model_checks(mod, project, fn):
                break
            shown = _src(mod, path)
            yield Hit(
                node=call,
                claim=f"the model-supplied path `{shown}` reaches `{mod.call_name(call) or 'a file call'}` with no "
                      "containment check",
                consequence="a tool call with `../` segments, an absolute path or a symlink reads, writes or deletes "
                            "files outside the workspace",
                direction="resolve first (`real = (root / p).resolve()`), require `real.is_relative_to(root.resolve())`,"
                          " then open `real`",
            )
            break


@rule(CheckId.C5, lang="python", name="lexical-path-containment")
def lexical_path_containment(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a containment check on a model-supplied path that was never resolved through symlinks (`abspath`,
    `normpath` or a plain join, then `startswith` / `is_relative_to` / `commonpath`). A symlink inside the
    workspace that points outside passes the check and is then followed by the open. A `relative_to` that only names
    a listed entry (its result is not returned as a path and no file call of the function touches the entry or the
    result) is not a check a file call relies on, and is not reported."""
    for fn in _check_calls(mod):
        for check in _model_checks(mod, project, fn):
            text = idioms.derivation_text(mod, fn, check.checked)
            if _RESOLVED.search(text) or _relative_name_only(mod, fn, check):
                continue
            yield Hit(
                node=check.node,
                claim=f"`{_src(mod, check.checked)}` is checked with `{check.kind}` without resolving symlinks first",
                consequence="a symlink inside the workspace that points outside passes the check, and the file "
                            "call follows it",
                direction="check `os.path.realpath(p)` / `Path(p).resolve()` against the resolved root, then open that "
                          "resolved value",
            )


def _relative_name_only(mod: PyModule, fn: FunctionNode, check: _Check) -> bool:
    """Whether a `relative_to` call only computes a name: its relative result is used as a value (not a bare
    statement whose `ValueError` is the check), it is not returned as a path, and no filesystem call of
    the function opens, writes, lists or deletes the checked value or anything derived from the result. Listing a
    tree and printing each entry relative to the root is not a containment check that a file call relies on."""
    if check.kind != "relative_to":
        return False
    parent = mod.parent(check.node)
    if isinstance(parent, ast.Expr):
        return False
    bound = {t.id for node in mod.walk(fn) if isinstance(node, ast.Assign) and node.value is check.node
             for t in node.targets if isinstance(t, ast.Name)}
    for node in mod.walk(fn):
        if isinstance(node, ast.Return) and (node.value is check.node or (
                isinstance(node.value, ast.Name) and node.value.id in bound)):
            return False  # the relative path itself leaves the function: a caller may open it
    for call, paths in _sinks(mod):
        if mod.enclosing_function(call) is fn and any(_uses_checked(mod, fn, path, [check]) for path in paths):
            return False
    return True


def _after_every_use(mod: PyModule, fn: FunctionNode, check: _Check) -> bool:
    """Every file call of the function on the checked value comes before the comparison (the file is written,
    then its path is made relative for the reply): a test after the use guards nothing, and a `relative_to` there
    computes a name; not a check for any rule. False when no file call of the function uses the value itself or a
    name derived from it (a caller may rely on the check)."""
    checked = _src(mod, check.checked)
    uses = [call for call, paths in _sinks(mod) if mod.enclosing_function(call) is fn and any(
        _src(mod, path) == checked or (isinstance(check.checked, ast.Name) and
                                       check.checked.id in _derived_names(mod, fn, path)) for path in paths)]
    return bool(uses) and all(call.lineno < check.node.lineno for call in uses)


def _has_separator(mod: PyModule, fn: FunctionNode, root: ast.expr) -> bool:
    if isinstance(root, ast.Constant):
        return isinstance(root.value, str) and root.value.endswith(("/", "\\"))
    return bool(_SEPARATOR.search(idioms.derivation_text(mod, fn, root)))


@rule(CheckId.C5, lang="python", name="prefix-path-containment")
def prefix_path_containment(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags `resolved.startswith(root)` on a model-supplied path when `root` carries no trailing separator.
    A string prefix is not a path prefix: `/srv/app` admits `/srv/app-secrets/key`."""
    for fn in _check_calls(mod):
        for check in _model_checks(mod, project, fn):
            if check.kind not in {"startswith", "commonprefix"} or check.root is None:
                continue
            if not _RESOLVED.search(idioms.derivation_text(mod, fn, check.checked)):
                continue  # reported by lexical-path-containment
            if check.kind == "startswith" and _has_separator(mod, fn, check.root):
                continue
            root = _src(mod, check.root)
            yield Hit(
                node=check.node,
                claim=f"the containment test compares string prefixes: `{root}` has no trailing separator",
                consequence=f"a sibling directory whose name starts with `{root}`'s last component "
                            "(`/srv/app-secrets` for `/srv/app`) passes the check",
                direction="compare path components: `Path(real).is_relative_to(root)` or "
                          "`os.path.commonpath([root, real]) == root`",
            )


def _derived_names(mod: PyModule, fn: FunctionNode, expr: ast.AST) -> set[str]:
    """Names `expr` reads, and the names their assigned values read, transitively."""
    values = idioms.assigned_values(mod, fn)
    names: set[str] = set()
    pending: list[ast.AST] = [expr]
    while pending:
        cur = pending.pop()
        for node in subtree(cur):
            if isinstance(node, ast.Name) and node.id not in names:
                names.add(node.id)
                pending.extend(values.get(node.id, []))
    return names


def _uses_checked(mod: PyModule, fn: FunctionNode, path: ast.expr, checks: list[_Check]) -> bool:
    """Whether the opened value is (derived from) a checked value, or the checked value is the opened one resolved."""
    path_text = _src(mod, path)
    names = _derived_names(mod, fn, path)
    derivation = idioms.derivation_text(mod, fn, path)
    for check in checks:
        checked = check.checked
        if isinstance(checked, ast.Name) and checked.id in names:
            return True
        checked_text = _src(mod, checked)
        if checked_text and (checked_text in derivation or path_text in checked_text):
            return True
    return False
