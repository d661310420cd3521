"""C3 · Crash and checkpoint semantics — Python rules.

Shapes detected:
- `checkpoint-overwritten-in-place`: run state / session / checkpoint / transcript written straight over its final
  path (`open(path, "w")`, `Path.write_text`, `json.dump(state, open(path, "w"))`) with no temp file and
  `os.replace` in the writing function; also a generic `save_json(path, data)` helper doing so, cited where it is
  called with a state path; `self.path.write_text(...)` in a method of a `Checkpoint`/`Snapshot` class counts.
- `jsonl-reader-trusts-last-line`: a JSONL session / transcript read back with `json.loads(line)` per line and no
  `JSONDecodeError` handling, so the torn last line a crash leaves makes recovery fail.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass

from harness_audit.findings import CheckId, Verdict
from harness_audit.static import idioms
from harness_audit.static.lang.python import FunctionNode, PyModule, PyProject, subtree
from harness_audit.static.registry import Hit, rule

_STRONG = re.compile(r"(state|session|checkpoint|ckpt|snapshot|resume|progress)", re.I)
"""Words that make a written file the run's recoverable state."""
_RECOVERY = re.compile(r"(checkpoint|ckpt|snapshot|resume)", re.I)
"""Words that say the file exists to be read back on restart (no reader needs to be shown)."""
_READERS = {"json.load", "pickle.load", "yaml.safe_load", "yaml.load", "torch.load", "tomllib.load", "toml.load",
            "dill.load", "cloudpickle.load"}
"""Calls that read a file back (`json.loads` alone may be re-parsing a string, so it does not count)."""
_WEAK = re.compile(r"(transcript|history|conversation|messages|memory|memories|trajectory|rollout|journal|ledger"
                   r"|thread)", re.I)
"""Words that make a written file a record that may (or may not) be read back to recover."""
_NOT_STATE = re.compile(r"(statement|estate|static|stateless|test_?state|\.lock\b|lockfile|pid_?file)", re.I)
_FRESH = re.compile(r"(time|date|now\(|uuid|stamp|n_steps|step_)", re.I)
"""A path made unique per write (a timestamp, a uuid): each save creates a new file instead of replacing one."""
_TEMP = re.compile(r"((?<![a-z])te?mp(?![a-z])|partial|staging|\.new\b|_new\b|scratch)", re.I)
"""A path that is itself the temp side of an atomic write."""
_ATOMIC_CALLS = {"os.replace", "os.rename", "shutil.move", "os.link", "tempfile.NamedTemporaryFile",
                 "tempfile.mkstemp", "tempfile.mktemp", "tempfile.TemporaryDirectory", "tempfile.mkdtemp"}
_ATOMIC_METHODS = {"replace", "rename", "link_to", "hardlink_to"}
_ATOMIC_SHORT = {"replace", "rename", "move", "link", "link_to", "hardlink_to", "NamedTemporaryFile", "TemporaryFile",
                 "SpooledTemporaryFile", "mkstemp", "mktemp", "mkdtemp", "TemporaryDirectory"}
"""Last names of the calls `_atomic_scope` looks at (before checking what they resolve to)."""
_ATOMIC_NAMES = re.compile(r"(atomic|safe_write|write_atomic|atomicwrites|AtomicWriter)", re.I)
_WRITE_NAMES = ("open", "write_text", "write_bytes")
_OPEN_FUNCS = {"open", "io.open", "codecs.open", "aiofiles.open", "builtins.open"}
_EXPORT = re.compile(r"(export|report|render|download|print|markdown|to_md|to_html|to_csv|display|preview)", re.I)
"""Function names that write a copy for people to read, not state to resume from."""
_DECODE_GUARDS = {"JSONDecodeError", "ValueError", "Exception", "BaseException", "DecodeError", "ParseError"}


def _text(node: ast.AST | None) -> str:
    if node is None:
        return ""
    try:
        return ast.unparse(node)[:300]
    except (ValueError, RecursionError):  # a malformed or pathologically deep expression
        return ""


def _mode(mod: PyModule, call: ast.Call, *, method: bool) -> str | None:
    """The literal mode of an `open` call (`"r"` when omitted); None when it is not a literal."""
    args = call.args if method else call.args[1:]
    mode = args[0] if args else mod.keyword(call, "mode")
    if mode is None:
        return "r"
    return mode.value if isinstance(mode, ast.Constant) and isinstance(mode.value, str) else None


@dataclass(frozen=True, slots=True)
class _Write:
    """A write that truncates a file and rewrites it in place."""

    call: ast.Call
    """The `open(..., "w")` / `Path.open("w")` / `.write_text(...)` call."""
    path: ast.expr
    """The path expression written to."""


def _truncating_write(mod: PyModule, call: ast.Call) -> _Write | None:
    """The write when `call` truncates a file in place (`open(p, "w")`, `Path.open("w")`, `write_text`)."""
    func = call.func
    short = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if short not in _WRITE_NAMES:
        return None
    name = mod.call_name(call)
    if name in _OPEN_FUNCS and call.args:
        mode = _mode(mod, call, method=False)
        return _Write(call, call.args[0]) if mode and "w" in mode else None
    if isinstance(func, ast.Attribute) and func.attr == "open" and name not in _OPEN_FUNCS:
        mode = _mode(mod, call, method=True)
        # `Path(p).open("w")`; a `tarfile.open(...)`/`wave.open(...)` with a path argument is not this shape
        if mode and "w" in mode and not (len(call.args) > 1 or idioms.last(idioms.receiver(name)) in {
                "tarfile", "zipfile", "wave", "gzip", "bz2", "lzma", "shelve", "dbm", "Image", "webbrowser"}):
            return _Write(call, func.value)
        return None
    if isinstance(func, ast.Attribute) and func.attr in {"write_text", "write_bytes"} and len(call.args) == 1:
        return _Write(call, func.value)
    return None


_EXISTS_TESTS = {"exists", "is_file", "isfile", "lexists"}
"""`p.exists()`, `os.path.exists(p)`, `p.is_file()`, `os.path.isfile(p)`: a test that the file is already there."""


def _exists_test(mod: PyModule, test: ast.expr, path: str) -> bool | None:
    """True when `test` holds exactly when the file `path` exists, False when exactly when it does not, None when
    it says nothing about that file."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _exists_test(mod, test.operand, path)
        return None if inner is None else not inner
    if not isinstance(test, ast.Call) or not isinstance(test.func, ast.Attribute) or test.func.attr not in _EXISTS_TESTS:
        return None
    subject = test.args[0] if test.args and mod.call_name(test).startswith("os.path.") else test.func.value
    return True if _text(subject) == path else None


def _exits(block: list[ast.stmt]) -> bool:
    """Whether a block always leaves the code after it (`return`, `continue`, `raise`)."""
    return bool(block) and isinstance(block[-1], ast.Return | ast.Continue | ast.Raise | ast.Break)


def _only_when_missing(mod: PyModule, write: _Write) -> bool:
    """Whether the write runs only when the file is not there yet (create-if-missing seeding): it sits in the body of
    `if not p.exists():`, or an earlier `if p.exists(): return` in a block around it leaves first. Seeding never
    truncates a file that exists, so no saved state is torn by it."""
    path = _text(write.path)
    child: ast.AST = write.call
    for anc in mod.ancestors(write.call):
        if isinstance(anc, ast.Lambda | ast.ClassDef):
            return False
        if isinstance(anc, ast.If) and _exists_test(mod, anc.test, path) is (child not in anc.body):
            return True
        for field in ("body", "orelse", "finalbody"):
            block = getattr(anc, field, None)
            if not isinstance(block, list) or child not in block:
                continue
            for stmt in block[:block.index(child)]:
                if isinstance(stmt, ast.If) and _exists_test(mod, stmt.test, path) is True and _exits(stmt.body):
                    return True
        if isinstance(anc, FunctionNode | ast.Module):
            return False
        child = anc
    return False


def _is_name(expr: ast.expr, name: str) -> bool:
    return isinstance(expr, ast.Name) and expr.id == name


def _atomic_scope(mod: PyModule, project: PyProject, scope: ast.AST | None) -> bool:
    """Whether the writing function also renames into place, uses a temp file, or an atomic-write helper."""
    if scope is None:
        return False
    start, end = getattr(scope, "lineno", 0), getattr(scope, "end_lineno", 0) or 0
    names = [n for n in idioms.call_names(mod, project) if n in _ATOMIC_SHORT or _ATOMIC_NAMES.search(n)]
    for call in idioms.calls_named(mod, project, names):
        if not start <= call.lineno <= end:
            continue
        name = mod.call_name(call)
        if name in _ATOMIC_CALLS or name.startswith("tempfile.") or _ATOMIC_NAMES.search(name):
            return True
        if isinstance(call.func, ast.Attribute) and call.func.attr in _ATOMIC_METHODS and call.args:
            return True
    return False


@dataclass(frozen=True, slots=True)
class _Built:
    """What a path held in a local name was built from."""

    words: str
    """Its string constants and bare names (attribute chains such as `self.state.n_steps` say nothing about it)."""
    code: str
    """The full source of the values bound to it."""


def _binding_text(mod: PyModule, fn: FunctionNode | None, path: ast.expr) -> _Built:
    """For a path held in a local name (`hist_path = Path(STATE_DIR) / "history.pkl"`), what it was built from."""
    root = path
    while isinstance(root, ast.Call) and root.args and _pathlike(root):
        root = root.args[0]
    if not isinstance(root, ast.Name):
        return _Built("", "")
    scope: ast.AST = fn if fn is not None else mod.tree
    words: list[str] = []
    code: list[str] = []
    for node in mod.walk(scope):
        if not (isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == root.id
                                                     for t in node.targets)):
            continue
        code.append(_text(node.value))
        for sub in subtree(node.value):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                words.append(sub.value)
            elif isinstance(sub, ast.Name) and not isinstance(mod.parent(sub), ast.Attribute):
                words.append(sub.id)
    return _Built(" ".join(words[:20]), " ".join(code[:3]))


def _module_reads(project: PyProject, mods: list[PyModule]) -> bool:
    """Whether one of the modules reads files back (`json.load`, `pickle.load`, `read_text`, …)."""
    for mod in mods:
        if any(mod.call_name(c) in _READERS for c in idioms.calls_named(mod, project, ("load", "safe_load"))) \
                or idioms.calls_named(mod, project, ("read_text", "read_bytes")):
            return True
        for call in idioms.calls_named(mod, project, ("open",)):
            mode = _mode(mod, call, method=isinstance(call.func, ast.Attribute) and mod.call_name(call) not in
                         _OPEN_FUNCS)
            if mode is not None and "r" in mode and "+" not in mode and call.args:
                return True
    return False


def _judge_words(project: PyProject, mods: list[PyModule], direct: list[str], built: str) -> tuple[str, bool] | None:
    """(word, strong) for a write: strong words may come from the path, the function or what the path was built
    from; weak words only from the path or the function, and only where the module also reads files back."""
    found = _vocabulary(*direct, built)
    if found is None or not found[1]:
        found = _vocabulary(*direct)
    if found is None:
        return None
    word, strong = found
    reads = _module_reads(project, mods)
    if not strong:
        return found if reads else None  # a record nobody reads back is an export, not recoverable state
    return found if reads or _RECOVERY.search(word) else (word, False)


def _vocabulary(*texts: str) -> tuple[str, bool] | None:
    """(word, strong) for the first state word in the texts; None when nothing marks them as run state."""
    for text in texts:
        cleaned = _NOT_STATE.sub("", text)
        m = _STRONG.search(cleaned)
        if m:
            return m.group(1).lower(), True
    for text in texts:
        m = _WEAK.search(_NOT_STATE.sub("", text))
        if m:
            return m.group(1).lower(), False
    return None


def _params(fn: FunctionNode) -> list[str]:
    a = fn.args
    return [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]]


def _path_param(fn: FunctionNode | None, path: ast.expr) -> str | None:
    """The parameter the written path comes from, when it is a bare parameter (a generic `save(path, data)`)."""
    if fn is None:
        return None
    root = path
    while isinstance(root, ast.Call) and root.args and _pathlike(root):
        root = root.args[0]
    return root.id if isinstance(root, ast.Name) and root.id in _params(fn) else None


def _pathlike(call: ast.Call) -> bool:
    """`Path(p)`, `pathlib.Path(p)`, `os.path.join(p, ...)`, `str(p)`: wrappers that keep the caller's path."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in {"Path", "PurePath", "join", "str", "fspath", "abspath", "expanduser"}


# ---------------------------------------------------------------- generic writers and their callers
_MEMO: list[tuple[PyProject, dict[str, object]]] = []
"""The last project's memo (one project at a time, so nothing outlives the next audit)."""


def _memo(project: PyProject) -> dict[str, object]:
    if not _MEMO or _MEMO[0][0] is not project:
        _MEMO[:] = [(project, {})]
    entry = _MEMO[0]
    return entry[1]


@dataclass(frozen=True, slots=True)
class _Writer:
    """A function that overwrites the file named by one of its parameters, non-atomically."""

    module: PyModule
    """Where it is defined."""
    fn: FunctionNode
    """Its definition."""
    param: str
    """The parameter holding the path."""
    write: _Write
    """The write inside it."""


def _writers(project: PyProject) -> dict[int, _Writer]:
    """id of function → generic non-atomic writer, over the whole project (computed once)."""
    memo = _memo(project)
    hit = memo.get("writers")
    if isinstance(hit, dict):
        return hit  # pyright: ignore[reportUnknownVariableType]
    out: dict[int, _Writer] = {}
    for mod in project.modules.values():
        for call in idioms.calls_named(mod, project, _WRITE_NAMES):
            write = _truncating_write(mod, call)
            if write is None:
                continue
            fn = mod.enclosing_function(call)
            param = _path_param(fn, write.path)
            if fn is None or param is None or id(fn) in out or _atomic_scope(mod, project, fn) \
                    or _only_when_missing(mod, write):
                continue
            out[id(fn)] = _Writer(mod, fn, param, write)
    memo["writers"] = out
    return out


def _argument(call: ast.Call, fn: FunctionNode, param: str, *, bound: bool) -> ast.expr | None:
    kw = next((k.value for k in call.keywords if k.arg == param), None)
    if kw is not None:
        return kw
    positional = [p.arg for p in [*fn.args.posonlyargs, *fn.args.args]]
    if param not in positional:
        return None
    index = positional.index(param) - (1 if bound else 0)
    return call.args[index] if 0 <= index < len(call.args) else None


# ---------------------------------------------------------------- rules
@rule(CheckId.C3, lang="python", name="checkpoint-overwritten-in-place")
def checkpoint_overwritten_in_place(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags run state, sessions, checkpoints and transcripts written straight over their final path
    (`open(path, "w")`, `write_text`, a `save_json(path, data)` helper) with no temp file and atomic rename. A crash
    mid-write leaves a truncated file that reads as the latest state on restart. A write reached only when the file
    does not exist yet (`if p.exists(): return` before it) seeds a file and is not flagged."""
    if idioms.is_test_module(mod):
        return
    for call in idioms.calls_named(mod, project, _WRITE_NAMES):
        write = _truncating_write(mod, call)
        if write is None:
            continue
        fn = mod.enclosing_function(call)
        if _path_param(fn, write.path) is not None and not _vocabulary(_text(write.path)):
            continue  # a generic writer: judged where it is called with a state path
        path_text = _text(write.path)
        if _TEMP.search(path_text) or _atomic_scope(mod, project, fn) or (fn is not None and _EXPORT.search(fn.name)) \
                or _only_when_missing(mod, write):
            continue
        # the path (or what it was built from) or the writing function must say "state": a dumped
        # `self.messages` alone may be an export
        built = _binding_text(mod, fn, write.path)
        if _TEMP.search(built.words):
            continue
        found = _judge_words(project, [mod], [path_text, fn.name if fn is not None else ""], built.words)
        if found is None:
            found = _class_word(mod, fn)
        if found is None:
            continue
        if _FRESH.search(f"{path_text} {built.code}"):
            # a new file per save: a torn write does not destroy the previous one; only run state is worth a look
            if not found[1]:
                continue
            found = (found[0], False)
        yield _hit(write.call, path_text, found, via="")
    writers = _writers(project)
    names = {w.fn.name for w in writers.values()}
    if not names:
        return
    for call in idioms.calls_named(mod, project, names):
        for ref in project.resolve_call(mod, call):
            writer = writers.get(id(ref.node))
            if writer is None:
                continue
            bound = isinstance(call.func, ast.Attribute) and isinstance(ref.module.parent(ref.node), ast.ClassDef)
            arg = _argument(call, writer.fn, writer.param, bound=bound)
            if arg is None:
                continue
            caller = mod.enclosing_function(call)
            if _atomic_scope(mod, project, caller) or (caller is not None and _EXPORT.search(caller.name)) \
                    or _EXPORT.search(writer.fn.name):
                continue
            arg_text = _text(arg)
            found = _judge_words(project, [mod, writer.module], [arg_text, caller.name if caller is not None else ""],
                                 "")
            if found is None or _TEMP.search(arg_text):
                continue
            via = f"`{writer.fn.name}` ({writer.module.path}:{writer.write.call.lineno}) opens it for writing in place"
            yield _hit(call, arg_text, found, via=via)


def _class_word(mod: PyModule, fn: FunctionNode | None) -> tuple[str, bool] | None:
    """For `self.path.write_text(...)` in a method of `Checkpoint` / `SnapshotStore`: the class exists to be read
    back on restart, so the file it writes is the recoverable state (only recovery words count here)."""
    owner = mod.parent(fn) if fn is not None else None
    if not isinstance(owner, ast.ClassDef):
        return None
    m = _RECOVERY.search(owner.name)
    return (m.group(1).lower(), True) if m else None


def _hit(node: ast.Call, path_text: str, found: tuple[str, bool], *, via: str) -> Hit:
    word, strong = found
    return Hit(
        node=node,
        verdict=Verdict.CONFIRMED if strong else Verdict.SUSPECTED,
        claim=f"`{path_text}` ({word}) is overwritten in place" + (f": {via}" if via else "")
              + ", with no temp file and atomic rename",
        consequence="a crash or kill mid-write leaves a truncated file that is read back as the latest state on "
                    "restart, so the run resumes on corrupt or empty state",
        direction="write to a temp file in the same directory, flush and `os.fsync` it, then `os.replace` it over "
                  "the target (or append records to a JSONL file whose reader skips a torn last line)",
        confirm_hint="" if strong else
        f"verify that `{path_text}` is read back to resume or recover the run and that no other copy is kept",
    )


def _line_source(mod: PyModule, node: ast.AST) -> ast.expr | None:
    """For `json.loads(line)`, the iterable `line` comes from (comprehension or `for`)."""
    arg = node.args[0] if isinstance(node, ast.Call) and node.args else None
    if not isinstance(arg, ast.Name | ast.Call):
        return None
    if isinstance(arg, ast.Call):  # json.loads(line.strip())
        inner = arg.func.value if isinstance(arg.func, ast.Attribute) else None
        if not isinstance(inner, ast.Name):
            return None
        arg = inner
    name = arg.id
    for anc in mod.ancestors(node):
        if isinstance(anc, ast.ListComp | ast.GeneratorExp | ast.SetComp):
            for gen in anc.generators:
                if _is_name(gen.target, name):
                    return gen.iter
        elif isinstance(anc, ast.For | ast.AsyncFor) and _is_name(anc.target, name):
            return anc.iter
        elif isinstance(anc, FunctionNode):
            break
    return None


def _is_line_iter(mod: PyModule, it: ast.expr) -> bool:
    """`x.splitlines()`, `f.readlines()`, `open(...)`, a file handle `f` / `fh`, `x.split("\\n")`."""
    if isinstance(it, ast.Call):
        func = it.func
        if isinstance(func, ast.Attribute) and func.attr in {"splitlines", "readlines"}:
            return True
        if isinstance(func, ast.Attribute) and func.attr == "split" and it.args \
                and isinstance(it.args[0], ast.Constant) and it.args[0].value == "\n":
            return True
        return mod.call_name(it) in _OPEN_FUNCS or (isinstance(func, ast.Attribute) and func.attr == "open")
    return isinstance(it, ast.Name) and it.id in {"f", "fh", "fp", "file", "handle", "stream", "infile"}


@rule(CheckId.C3, lang="python", name="jsonl-reader-trusts-last-line")
def jsonl_reader_trusts_last_line(mod: PyModule, project: PyProject) -> Iterator[Hit]:
    """Flags a session / transcript JSONL read back with `json.loads(line)` per line and no `JSONDecodeError`
    handling. An appending writer that dies mid-line leaves a torn last record, and recovery then fails on the one
    file it needs instead of skipping the incomplete line."""
    if idioms.is_test_module(mod):
        return
    for call in idioms.calls_named(mod, project, ("loads",)):
        if mod.call_name(call) not in {"json.loads", "orjson.loads", "ujson.loads"}:
            continue
        source = _line_source(mod, call)
        if source is None or not _is_line_iter(mod, source):
            continue
        if mod.guarded_by(call, _DECODE_GUARDS):
            continue
        fn = mod.enclosing_function(call)
        if not _file_backed(mod, fn, source):
            continue  # lines handed over as a string or read through a storage API: a torn line is not shown
        origin = _origin_text(mod, fn, source)
        found = _vocabulary(origin, fn.name if fn is not None else "")
        if found is None:
            continue
        yield Hit(
            node=call,
            verdict=Verdict.SUSPECTED,
            claim=f"each line of the {found[0]} JSONL (`{_text(source)}`) is decoded with no `JSONDecodeError` "
                  "handling: a torn last line aborts the read",
            consequence="after a crash mid-append the record file cannot be read back at all, so the run or its "
                        "history cannot be recovered",
            direction="skip (and report) a last line that fails to decode; treat only complete lines as records",
            confirm_hint=f"verify that `{_text(source)}` comes from a file that is appended to while a run is live "
                         "and that this read is on the resume or recovery path",
        )


def _reads_file(mod: PyModule, expr: ast.expr | None) -> bool:
    """`open(...)`, `p.open()`, `p.read_text()`, `f.read()`, `f.readlines()`: the value comes from a local file."""
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    if mod.call_name(expr) in _OPEN_FUNCS:
        return True
    return isinstance(func, ast.Attribute) and func.attr in {"open", "read_text", "read", "readlines"} \
        and not (func.attr == "read" and expr.args)


def _bound_to_file(mod: PyModule, fn: FunctionNode | None, name: str) -> bool:
    if fn is None:
        return False
    for node in mod.walk(fn):
        if isinstance(node, ast.withitem) and node.optional_vars is not None and _is_name(node.optional_vars, name):
            if _reads_file(mod, node.context_expr):
                return True
        elif isinstance(node, ast.Assign) and any(_is_name(t, name) for t in node.targets):
            value = node.value.value if isinstance(node.value, ast.Await) else node.value
            if _reads_file(mod, value) and not _storage_api(mod, value):
                return True
    return False


def _storage_api(mod: PyModule, call: ast.expr) -> bool:
    """`self._storage.read_text(path)`: a storage abstraction's read (path argument), not a local file."""
    return isinstance(call, ast.Call) and bool(call.args) and isinstance(call.func, ast.Attribute) \
        and call.func.attr in {"read_text", "read"} and mod.call_name(call) not in _OPEN_FUNCS


def _file_backed(mod: PyModule, fn: FunctionNode | None, source: ast.expr) -> bool:
    """Whether the iterated lines come straight from a local file (so a crashed appender can leave a torn line)."""
    if isinstance(source, ast.Name):
        return _bound_to_file(mod, fn, source.id)
    if not isinstance(source, ast.Call):
        return False
    func = source.func
    if mod.call_name(source) in _OPEN_FUNCS or isinstance(func, ast.Attribute) and func.attr == "open":
        return True
    recv = func.value if isinstance(func, ast.Attribute) else None
    if isinstance(recv, ast.Call):
        return _reads_file(mod, recv) and not _storage_api(mod, recv)
    if isinstance(recv, ast.Name):
        return _bound_to_file(mod, fn, recv.id)
    return False


def _origin_text(mod: PyModule, fn: FunctionNode | None, source: ast.expr) -> str:
    """The iterable's text plus, for a local name at its root, what it was assigned from."""
    parts = [_text(source)]
    root = source
    while isinstance(root, ast.Attribute | ast.Call | ast.Subscript):
        root = root.func if isinstance(root, ast.Call) else root.value
    if isinstance(root, ast.Name) and fn is not None:
        for node in mod.walk(fn):
            if isinstance(node, ast.Assign) and any(_is_name(t, root.id) for t in node.targets):
                parts.append(_text(node.value))
            elif isinstance(node, ast.withitem) and node.optional_vars is not None \
                    and _is_name(node.optional_vars, root.id):
                parts.append(_text(node.context_expr))
    return " ".join(parts)
