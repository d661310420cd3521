"""C3 · Crash and checkpoint semantics — TypeScript/JavaScript rules.

Shapes detected:
- `state-file-overwritten`: run state / session / checkpoint / transcript written straight over its final path
  (`fs.writeFileSync(path, ...)`, `await writeFile(path, ...)`, `fse.writeJson`, `Bun.write`) with no temp file and
  `rename` in the writing function; a generic `saveJson(path, data)` helper doing so is cited where it is called
  with a state path. A transcript / chat file is confirmed when the module reads the same path back with one
  `JSON.parse`. When neither the path nor the writer names the file, the keys of the object written say what it
  holds (`JSON.stringify({ version, jobs })`).
- `jsonl-torn-line-unhandled`: a JSONL session / transcript read back with `JSON.parse(line)` per line (`split("\\n")`,
  `readline`) and no `try`, so the torn last line a crash leaves makes recovery fail.
- `resume-replays-pending-calls`: a resume / restore function that re-executes the tool calls found without a
  recorded result, although a call's completion is recorded only after it runs.
- `state-split-across-writes` also flags a key-value write that stores a pointer (a count, an index) to an entry
  written by a later, separate write (`kv.set([..., "meta"], {count: n + 1})` then `kv.set([..., "msg", n], m)`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tree_sitter import Node

from harness_audit.findings import CheckId, Verdict
from harness_audit.static.lang.typescript import FUNCTION_TYPES, TsModule, TsProject
from harness_audit.static.registry import Hit, rule

_STRONG = re.compile(r"(state|session|checkpoint|ckpt|snapshot|resume|progress)", re.I)
"""Words that make a written file the run's recoverable state."""
_RECOVERY = re.compile(r"(checkpoint|ckpt|snapshot|resume)", re.I)
"""Words that say the file exists to be read back on restart."""
_WEAK = re.compile(r"(transcript|history|conversation|messages|memory|memories|trajectory|rollout|journal|ledger|"
                   r"thread|chat(?!gpt))", re.I)
"""Words that make a written file a record that may (or may not) be read back to recover."""
_NOT_STATE = re.compile(r"(statement|estate|static|stateless|setState|useState|state_?less|\.lock\b|lockfile|pid_?file|"
                        r"package\.json|tsconfig|\.env\b|memory\.(max|high|low|limit|current|stat|swap)|cgroup)",
                        re.I)
_FRESH = re.compile(r"(Date\.now|new Date|toISOString|timestamp|uuid|randomUUID|nanoid|ulid|process\.pid|Math\.random|"
                    r"hrtime)")
"""A path made unique per write: each save creates a new file instead of replacing one."""
_TEMP = re.compile(r"((?<![a-z])te?mp(?![a-z])|Tmp|Temp|partial|staging|\.new\b|\.part\b|scratch|os\.tmpdir|tmpdir)",
                   re.I)
"""A path that is itself the temp side of an atomic write."""
_ATOMIC_CALLS = re.compile(r"(^|\.)(rename|renameSync|move|moveSync|link|linkSync|fsync|fsyncSync|fdatasync)$|atomic|"
                           r"Atomic|writeFileAtomic|steno")
_EXPORT = re.compile(r"(export|report|render|download|print|markdown|toMd|html|csv|display|preview|share)", re.I)
"""Function names that write a copy for people to read, not state to resume from."""
_WRITE_METHODS = {"writeFileSync", "writeFile", "writeJson", "writeJSON", "writeJsonSync", "writeJSONSync",
                  "outputJson", "outputJSON", "outputJsonSync", "outputJSONSync", "outputFile", "outputFileSync",
                  "writeTextFile", "writeTextFileSync"}
_READ_WORDS = ("readFile", "readJson", "readJSON", "readTextFile", ".text()", "createReadStream")


_FS_MODULES = {"fs", "node:fs", "fs/promises", "node:fs/promises", "fs-extra", "fs-extra/esm", "graceful-fs"}
_FS_RECEIVERS = {"fs", "fsp", "fse", "fs.promises", "fsPromises", "fsExtra", "Bun", "Deno"}


def fs_call(project: TsProject, mod: TsModule, call: Node) -> bool:
    """Whether a call goes to the file system module (`fs.writeFile`, `writeFileSync` imported from `node:fs`,
    `fsp.writeFile`, `fs.promises.writeFile`, `fse.writeJson`, `Bun.write`), not a file handle or another API."""
    receiver, _, method = mod.call_name(call).rpartition(".")
    imports = project.imports_of(mod)
    if not receiver:
        return imports.get(method, "").split("#", 1)[0] in _FS_MODULES
    root = receiver.split(".", 1)[0]
    return imports.get(root, "").split("#", 1)[0] in _FS_MODULES or receiver in _FS_RECEIVERS


def _editor_fs(receiver: str) -> bool:
    """`vscode.workspace.fs`, `workspace.fs` (VS Code's `FileSystem`): `writeFile` replaces the whole file through
    whatever provider backs the URI, with no temp file of the caller's."""
    return receiver == "workspace.fs" or receiver.endswith(".workspace.fs")


def _write_path(project: TsProject, mod: TsModule, call: Node) -> Node | None:
    """The path a call truncates and rewrites in place (`writeFileSync(p, ...)`, `Bun.write(p, ...)`), if it is one."""
    name = mod.call_name(call)
    method = name.rsplit(".", 1)[-1]
    args = mod.arguments(call)
    if len(args) < 2 or not (fs_call(project, mod, call) or _editor_fs(name.rpartition(".")[0])):
        return None
    if method in _WRITE_METHODS:
        options = args[2] if len(args) > 2 else None
        if options is not None and re.search(r"flag:\s*['\"`]a", mod.node_text(options)):
            return None  # `{flag: "a"}` appends
        return args[0]
    if name in ("Bun.write",):
        return args[0]
    return None


def _vocabulary(*texts: str) -> tuple[str, bool] | None:
    """(word, strong) for the first state word in the texts; None when nothing marks them as run state."""
    for text in texts:
        m = _STRONG.search(_NOT_STATE.sub("", text))
        if m:
            return m.group(1).lower(), True
    for text in texts:
        m = _WEAK.search(_NOT_STATE.sub("", text))
        if m:
            return m.group(1).lower(), False
    return None


def _atomic_scope(mod: TsModule, scope: Node | None) -> bool:
    """Whether the writing function also renames into place, fsyncs, or uses an atomic-write helper."""
    if scope is None:
        return False
    text = mod.node_text(scope)
    if not any(w in text for w in ("rename", "move", "link", "fsync", "fdatasync", "tomic", "steno")):
        return False
    return any(_ATOMIC_CALLS.search(mod.call_name(c)) for c in mod.inside(mod.calls(), scope))


def _module_reads(mod: TsModule) -> bool:
    """Whether the module reads files back (`readFile`, `readJson`, `createReadStream`)."""
    return any(w in mod.text for w in _READ_WORDS)


def _class_name(mod: TsModule, node: Node) -> str:
    cls = next((a for a in mod.ancestors(node) if a.type in ("class_declaration", "class")), None)
    name = cls.child_by_field_name("name") if cls is not None else None
    return mod.node_text(name) if name is not None else ""


@dataclass(frozen=True, slots=True)
class _Judged:
    """What a write is and how certain the finding is."""

    word: str
    """The state word that marks the file."""
    verdict: Verdict
    """Confirmed when the file is recoverable state that is read back."""
    hint: str
    """For suspected findings."""


_KEY = re.compile(r"(?:[{,]|^)\s*(?:\.\.\.)?([A-Za-z_$][\w$]*)\s*(?=[:,}]|$)", re.M)
_WORK = re.compile(r"^(jobs?|queue|queued|tasks?|runs?|steps?|pending|in_?flight|inFlight|in_?progress|"
                   r"inProgress|turns|calls|toolCalls|tool_calls|results|outbox|attempts)$", re.I)
"""Keys of a written object that make it a runner's work state (`{ version, jobs: [...] }`)."""


def _data_vocabulary(mod: TsModule, fn: Node | None, data: Node | None) -> tuple[str, bool] | None:
    """A weak state word taken from the keys of the object a write serialises (`JSON.stringify({ jobs, messages
    })`, `const data = { version: 3, jobs }`): what the file holds, when neither its path nor the writer names it."""
    if data is None:
        return None
    text = mod.derivation_text(fn, data, 2)[:1500]
    for key in _KEY.findall(text):
        if _WORK.match(key):
            return key.lower(), False
        found = _vocabulary(key)
        if found is not None:
            return found[0], False
    return None


def _judge_write(mod: TsModule, fn: Node | None, path: Node, node: Node) -> _Judged | None:
    """None when the write is not run state, is atomic, or writes a fresh file or an export."""
    fname = mod.function_name(fn) if fn is not None else ""
    path_text = mod.node_text(path)[:300]
    built = mod.derivation_text(fn, path, 2)[:600]
    if _TEMP.search(built) or _atomic_scope(mod, fn) or (fname and _EXPORT.search(fname)):
        return None
    found = _vocabulary(path_text, fname, _class_name(mod, node))
    if found is None or not found[1]:
        # what the path was built from may say "state" (`path.join(stateDir, ...)`), but a weak word there
        # (`getHistoryDir()`) says nothing about this file
        strong = _vocabulary(built)
        found = strong if strong is not None and strong[1] else found
    if found is None and node.type == "call_expression":
        args = mod.arguments(node)
        found = _data_vocabulary(mod, fn, args[1] if len(args) > 1 else None)
        if found is not None and not (_module_reads(mod) and _read_back(mod, path)):
            return None  # only what is written says "state": count it when the module reads that file back whole
    if found is None:
        return None
    word, strong = found
    reads = _module_reads(mod)
    if not strong and not reads:
        return None  # a record nobody reads back is an export, not recoverable state
    if _FRESH.search(built):
        if not strong:
            return None
        return _Judged(word, Verdict.SUSPECTED, f"verify whether the path `{path_text[:80]}` stays the same across "
                                                "writes (its name is built from a value that may change) and whether "
                                                "a later start reads that file back")
    if strong and (reads or _RECOVERY.search(word)) or reads and _read_back(mod, path):
        return _Judged(word, Verdict.CONFIRMED, "")
    return _Judged(word, Verdict.SUSPECTED, f"verify that the {word} file written to `{path_text[:80]}` is read "
                                            "back later (to resume a run, or loaded again on a later start)")


_READ_METHODS = {"readFileSync", "readFile", "readJson", "readJSON", "readJsonSync", "readJSONSync", "readTextFile",
                 "readTextFileSync"}


def _path_key(mod: TsModule, path: Node) -> str | None:
    """What names the file independently of the call site: the helper that builds it (`this.file`, `chatFile`) or
    the member that holds it (`this.statePath`); a bare local or parameter says nothing."""
    if path.type == "call_expression":
        callee = mod.node_text(path.child_by_field_name("function"))
        return callee if callee and callee not in ("path.join", "join", "path.resolve", "resolve", "String") else None
    if path.type == "member_expression":
        return mod.node_text(path)
    return None


def _read_back(mod: TsModule, path: Node) -> bool:
    """Whether the module reads the file it writes back as one JSON document (`load()` runs `JSON.parse` on
    `this.file(id)` that `save()` overwrites): the record is what a restart resumes from, and a torn write makes it
    unreadable as a whole (a line-by-line reader that skips bad lines only loses the torn part)."""
    wanted = _path_key(mod, path)
    if wanted is None or "JSON.parse" not in mod.text:
        return False
    for call in mod.calls():
        if mod.call_name(call).rsplit(".", 1)[-1] not in _READ_METHODS:
            continue
        args = mod.arguments(call)
        if not args or not _parsed_whole(mod, call):
            continue
        if _path_key(mod, args[0]) == wanted:
            return True
        if args[0].type == "identifier":
            built = mod.derivation_text(mod.enclosing_function(call), args[0], 2)
            if re.search(rf"{re.escape(wanted)}\b", built):
                return True
    return False


def _parsed_whole(mod: TsModule, read: Node) -> bool:
    """`JSON.parse(await readFile(p, "utf8"))`, or `const raw = readFileSync(p); ... JSON.parse(raw)`."""
    cur = read
    for _ in range(4):
        parent = cur.parent
        if parent is None:
            return False
        if parent.type == "arguments" and parent.parent is not None and mod.call_name(parent.parent) == "JSON.parse":
            return True
        if parent.type == "variable_declarator":
            name = mod.node_text(parent.child_by_field_name("name"))
            fn = mod.enclosing_function(read)
            body = mod.node_text(fn) if fn is not None else mod.text
            return bool(re.search(rf"JSON\.parse\(\s*{re.escape(name)}\s*[,)]", body))
        if parent.type not in ("await_expression", "parenthesized_expression", "as_expression", "call_expression",
                               "member_expression", "arguments"):
            return False
        cur = parent
    return False


def _hit(node: Node, path_text: str, judged: _Judged, via: str = "") -> Hit:
    return Hit(
        node=node,
        verdict=judged.verdict,
        claim=f"the {judged.word} file `{path_text[:80]}` is overwritten in place{via}, with no temp file and rename",
        consequence="a crash or kill mid-write leaves a truncated or empty file in place of the only copy: the next "
                    "load either fails to parse it and silently falls back to defaults, losing the saved state, or "
                    "reads truncated text as complete",
        direction="write to a temp file in the same directory, fsync it, then `fs.rename` it over the final path (or "
                  "use `write-file-atomic`)",
        confirm_hint=judged.hint,
    )


def _param_index(mod: TsModule, fn: Node, name: str) -> int | None:
    params = fn.child_by_field_name("parameters")
    positions = [p for p in params.named_children if p.type != "comment"] if params is not None else []
    return next((i for i, p in enumerate(positions) if name in {mod.node_text(n) for n in mod.pattern_names(p)}), None)


@rule(CheckId.C3, lang="typescript", name="state-file-overwritten")
def state_file_overwritten(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags run state, sessions, checkpoints and transcripts written straight over their final path
    (`fs.writeFileSync(path, ...)`, `await writeFile(path, ...)`, a `saveJson(path, data)` helper) with no temp file
    and rename. A crash mid-write leaves a truncated file that reads as the latest state on restart. Writing the empty
    string creates a new, empty file and is not flagged."""
    if "write" not in mod.text or _is_test(mod):
        return
    for call in mod.calls():
        callee = call.child_by_field_name("function")
        if callee is None or b"rite" not in mod.source[callee.start_byte:callee.end_byte]:
            continue
        path = _write_path(project, mod, call)
        if path is None:
            continue
        fn = mod.enclosing_function(call)
        if path.type == "identifier" and fn is not None and mod.node_text(path) in mod.params(fn) and \
                _vocabulary(mod.node_text(path)) is None:
            yield from _generic_writer(mod, project, fn, call, mod.node_text(path))
            continue
        if _compacted_log(project, mod, path) or _binary_artifact(mod, call, path) or _writes_empty(mod, fn, call):
            continue
        judged = _judge_write(mod, fn, path, call)
        if judged is not None and _editor_fs(mod.call_name(call).rpartition(".")[0]):
            judged = _Judged(judged.word, Verdict.SUSPECTED,
                             f"verify whether the file system provider behind `{mod.node_text(path)[:60]}` replaces "
                             "files atomically; if not, a crash mid-write leaves a truncated file that the next load "
                             "reads")
        if judged is not None:
            yield _hit(call, mod.node_text(path), judged)


def _writes_empty(mod: TsModule, fn: Node | None, call: Node) -> bool:
    """`writeFile(newPath, "")` (directly or through `const content = ""`): the write creates an empty file, so there
    is no saved content a crash mid-write could tear."""
    args = mod.arguments(call)
    data = args[1] if len(args) > 1 else None
    if data is not None and data.type == "identifier":
        bound = mod.bindings(fn).get(mod.node_text(data), [])
        return bool(bound) and all(mod.string_value(b) == "" for b in bound)
    return mod.string_value(data) == ""


_BINARY = re.compile(r"(screenshot|image|img|png|jpe?g|webp|gif|audio|video|pdf|photo|thumbnail)s?$", re.I)
_BINARY_FILE = re.compile(r"\.(png|jpe?g|webp|gif|bmp|mp3|wav|ogg|mp4|webm|pdf|zip)\b", re.I)


def _binary_artifact(mod: TsModule, call: Node, path: Node) -> bool:
    """`writeFile(join(dir, "shots/3.png"), step.screenshot)`: image, audio or archive bytes saved as an artifact are
    not run state; nothing resumes from a screenshot, and a torn one is a broken picture, not a wrong state."""
    args = mod.arguments(call)
    data = args[1] if len(args) > 1 else None
    if data is not None and data.type in ("identifier", "member_expression") and \
            _BINARY.search(mod.node_text(data).rsplit(".", 1)[-1]):
        return True
    if _BINARY_FILE.search(mod.node_text(path)):
        return True
    fn = mod.enclosing_function(call)
    if fn is None:
        return False
    text = mod.node_text(fn)
    # `relPath = \`shots/${i}.png\`` before `writeFile(join(dir, relPath), ...)`
    return any(_BINARY_FILE.search(m.group(1)) for name in re.findall(r"[A-Za-z_$][\w$]*", mod.node_text(path))
               for m in re.finditer(rf"\b{re.escape(name)}\s*=\s*([^;\n]*)", text))


def _compacted_log(project: TsProject, mod: TsModule, path: Node) -> bool:
    """Whether an in-place write is the bounded rewrite (size-cap trim) of an append-only log: the same file is
    appended to elsewhere in the module (`appendFileSync(this.logFile, line)`), its reader decodes each line in its
    own `try` and skips the bad ones, and nothing reads it back as one JSON document. A torn rewrite loses only the
    lines the reader skips; it never reads as a complete, corrupt state."""
    if "append" not in mod.text or "JSON.parse" not in mod.text:
        return False
    key = _path_key(mod, path)
    if key is None:
        return False
    appended = False
    for call in mod.calls():
        if mod.call_name(call).rsplit(".", 1)[-1] not in ("appendFileSync", "appendFile"):
            continue
        args = mod.arguments(call)
        if args and _path_key(mod, args[0]) == key and fs_call(project, mod, call):
            appended = True
            break
    if not appended or _read_back(mod, path):
        return False
    return any(node.type == "call_expression" and mod.guarded(node) for node, _ in _parse_sites(mod))


def _generic_writer(mod: TsModule, project: TsProject, fn: Node, call: Node, param: str) -> Iterator[Hit]:
    """A helper that overwrites whatever path it is handed: judged where it is called with a state path."""
    if _TEMP.search(mod.node_text(call)) or _atomic_scope(mod, fn):
        return
    name = mod.function_name(fn)
    index = _param_index(mod, fn, param)
    if index is None or name == "<anonymous>" or _EXPORT.search(name):
        return
    for other, site in project.callers_of(mod, fn):
        args = other.arguments(site)
        if index >= len(args):
            continue
        caller = other.enclosing_function(site)
        judged = _judge_write(other, caller, args[index], site)
        if judged is None:
            continue
        yield Hit(
            node=site, module=other,
            verdict=judged.verdict,
            claim=f"the {judged.word} file `{other.node_text(args[index])[:80]}` is overwritten in place through "
                  f"`{name}` ({mod.path}:{mod.line(call)}), with no temp file and rename",
            consequence="a crash or kill mid-write leaves a truncated or empty file in place of the only copy: the "
                        "next load either fails to parse it and silently falls back to defaults, losing the saved "
                        "state, or reads truncated text as complete",
            direction=f"make `{name}` write a temp file in the same directory and `fs.rename` it over the target",
            confirm_hint=judged.hint,
        )


def _is_test(mod: TsModule) -> bool:
    path = mod.path.lower()
    return bool(re.search(r"(^|/)(__tests__|tests?|spec|fixtures?)/|\.(test|spec)\.[cm]?[jt]sx?$", path))


# ---------------------------------------------------------------- torn JSONL lines
_SPLIT_LINES = re.compile(r"\.split\(\s*(['\"`](\\r)?\\n['\"`]|/[^/\n]*\\n[^/\n]*/\w*|(os\.)?EOL)\s*\)")
_FILE_READ = re.compile(r"\b(readFileSync|readFile|readTextFile|createReadStream)\s*\(|Bun\.file\(")


def _line_source(mod: TsModule, parse: Node, arg: Node) -> Node | None:
    """The expression whose lines `arg` iterates: a `for...of` over it, or the receiver of a `.map`/`.forEach` whose
    callback receives the line."""
    if arg.type != "identifier":
        return None
    name = mod.node_text(arg)
    for anc in mod.ancestors(parse):
        if anc.type == "for_in_statement":
            left, right = anc.child_by_field_name("left"), anc.child_by_field_name("right")
            if left is not None and right is not None and name in {mod.node_text(n) for n in (
                    mod.pattern_names(left) if left.type != "identifier" else [left])}:
                return right
        elif anc.type in FUNCTION_TYPES:
            if name not in mod.params(anc):
                continue
            parent = anc.parent
            call = parent.parent if parent is not None and parent.type == "arguments" else None
            callee = call.child_by_field_name("function") if call is not None else None
            if callee is not None and callee.type == "member_expression" and mod.node_text(
                    callee.child_by_field_name("property")) in ("map", "forEach", "flatMap", "filter", "reduce"):
                return callee.child_by_field_name("object")
            return None
    return None


def _parse_sites(mod: TsModule) -> Iterator[tuple[Node, Node]]:
    """(node, line source) for `JSON.parse(line)` per line and for `.map(JSON.parse)` over split lines."""
    for call in mod.calls():
        callee = call.child_by_field_name("function")
        if callee is None or mod.source[callee.start_byte:callee.end_byte] != b"JSON.parse":
            continue
        args = mod.arguments(call)
        if not args:
            continue
        source = _line_source(mod, call, args[0])
        if source is not None:
            yield call, source
    at = mod.source.find(b"(JSON.parse)")
    while at >= 0:
        node = mod.tree.root_node.descendant_for_byte_range(at + 1, at + 11)
        args = node.parent if node is not None else None
        call = args.parent if args is not None and args.type == "arguments" else None
        callee = call.child_by_field_name("function") if call is not None else None
        if call is not None and callee is not None and callee.type == "member_expression" and \
                node is not None and mod.node_text(callee.child_by_field_name("property")) in ("map", "forEach"):
            receiver = callee.child_by_field_name("object")
            if receiver is not None:
                yield node, receiver
        at = mod.source.find(b"(JSON.parse)", at + 12)


def _origin(mod: TsModule, fn: Node | None, source: Node) -> str:
    return mod.derivation_text(fn, source, 3)


@rule(CheckId.C3, lang="typescript", name="jsonl-torn-line-unhandled")
def jsonl_torn_line_unhandled(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a session / transcript JSONL read back from a file with `JSON.parse(line)` per line and no `try`. An
    appending writer that dies mid-line leaves a torn last record, and recovery then fails on the one file it needs
    instead of skipping the incomplete line."""
    if "JSON.parse" not in mod.text or _is_test(mod):
        return
    for node, source in _parse_sites(mod):
        if node.type == "call_expression" and mod.guarded(node):
            continue
        fn = mod.enclosing_function(source)
        origin = _origin(mod, fn, source)
        readline = "createInterface" in origin or "readline" in origin
        if not (_SPLIT_LINES.search(origin) or readline) or not _FILE_READ.search(origin):
            continue  # lines handed over as a string or read through a storage API: a torn line is not shown
        found = _vocabulary(origin, mod.function_name(fn) if fn is not None else "") or (
            ("jsonl", False) if ".jsonl" in origin else None)
        if found is None:
            continue
        shown = mod.node_text(source)[:80]
        yield Hit(
            node=node if node.type == "call_expression" else source,
            verdict=Verdict.SUSPECTED,
            claim=f"each line of the {found[0]} JSONL (`{shown}`) is decoded with no `try`: a torn last line aborts "
                  "the read",
            consequence="after a crash mid-append the record file cannot be read back at all, so the run or its "
                        "history cannot be recovered",
            direction="wrap each line's `JSON.parse` in `try/catch` and skip (and report) a last line that fails to "
                      "decode; treat only complete lines as records",
            confirm_hint=f"verify that `{shown}` comes from a file that is appended to while a run is live and that "
                         "this read is on the resume or recovery path",
        )


# ---------------------------------------------------------------- resume re-runs calls without a result
_RESUME_FN = re.compile(r"(resume|restore|recover|replay|reload|rehydrate|continueFrom|continue_from)", re.I)
_RUN_CALLS = re.compile(r"^#?(run|execute|exec|invoke|dispatch|perform|process|handle)_?\w*(calls?|tools?|actions?|steps?|"
                        r"uses?)$", re.I)
_PENDING_VALUE = re.compile(r"(pending|unanswered|outstanding|incomplete|unfinished|unresolved|dangling)", re.I)
_PENDING_WORD = re.compile(r"(tool_?calls|toolCalls|toolUses|pending|unanswered|outstanding|incomplete|unfinished|"
                           r"unresolved|dangling)", re.I)


_BARE_RUN = {"run", "execute", "exec", "invoke", "dispatch", "perform"}


def _unwrap_member(node: Node | None) -> Node | None:
    """The member expression a loop walks (`run.pending`, `state.toolCalls ?? []`), if it walks one."""
    for _ in range(3):
        if node is None or node.type == "member_expression":
            return node
        if node.type in ("parenthesized_expression", "await_expression", "non_null_expression") and \
                node.named_children:
            node = node.named_children[0]
        elif node.type == "binary_expression":
            node = node.child_by_field_name("left")
        else:
            return None
    return None


@rule(CheckId.C3, lang="typescript", name="resume-replays-pending-calls")
def resume_replays_pending_calls(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a resume / restore function that re-executes the tool calls found without a recorded result. The result
    is written only after a call runs, so a call that completed its side effect just before the crash is run again
    on resume."""
    for fn in mod.functions():
        fname = mod.function_name(fn)
        if not _RESUME_FN.search(fname):
            continue
        pending = {name for name, values in mod.bindings(fn).items()
                   if _PENDING_WORD.search(name) or any(_PENDING_VALUE.search(mod.node_text(v)[:300]) for v in values)}
        for call in mod.inside(mod.calls(), fn):
            if mod.enclosing_function(call) != fn:
                continue
            name = mod.call_name(call)
            method = name.rsplit(".", 1)[-1].lstrip("#")
            # `this.execute(run.pending)`, `runTools(state.toolCalls)`: the saved open calls handed straight on
            members = [mod.node_text(a) for a in mod.arguments(call) if a.type == "member_expression"
                       and _PENDING_WORD.search(mod.node_text(a.child_by_field_name("property")))]
            if not (_RUN_CALLS.search(method) or members and method in _BARE_RUN):
                continue
            handed = {mod.node_text(i) for a in mod.arguments(call) for i in mod.identifiers(a)} | set(members)
            pending = pending | set(members)
            loops = [lp for lp in mod.enclosing_loops(call) if lp.type == "for_in_statement"]
            looped = {mod.node_text(i) for lp in loops for i in mod.identifiers(lp.child_by_field_name("right"))}
            # `for (const call of session.state.unanswered)`: the saved open calls walked one by one
            walked = {mod.node_text(r) for lp in loops for r in [_unwrap_member(lp.child_by_field_name("right"))]
                      if r is not None and _PENDING_WORD.search(mod.node_text(r.child_by_field_name("property")))}
            looped |= walked
            pending = pending | walked
            arg = next((p for p in sorted(pending) if p in handed or p in looped), None)
            if arg is None:
                continue
            yield Hit(
                node=call,
                verdict=Verdict.SUSPECTED,
                claim=f"`{fname}` re-runs `{arg}` (calls with no recorded result) through `{name}`; a call's "
                      "completion is recorded only after it runs",
                consequence="a call whose side effect completed just before the crash is executed a second time on "
                            "resume",
                direction="record an intent (call id) before executing and, on resume, report unresolved calls to the "
                          "model (or check idempotency keys) instead of re-running them blindly",
                confirm_hint=f"verify that the calls in `{arg}` can have side effects and that nothing before `{name}` "
                             "checks whether they already ran",
            )
            break


_TX_WORDS = re.compile(r"([tT]ransaction\w*\s*(\(|<)|[\"'`]\s*(BEGIN|START\s+TRANSACTION|SAVEPOINT)\b|\.batch\(|"
                       r"\.multi\(|\btrx\b|\.atomic\(\s*\))")
"""Signs that statements commit together (`db.transaction(fn)`, `BEGIN`, `$transaction`, `db.batch([...])`)."""


def _in_transaction(mod: TsModule, node: Node) -> bool:
    """Whether `node` runs inside a transaction: its own function opens one (`BEGIN`, `db.transaction`), or it lies
    in the callback handed to `db.transaction(...)` (a transaction helper defined beside it does not count)."""
    fn = mod.enclosing_function(node)
    if fn is not None and _TX_WORDS.search(mod.node_text(fn)[:4000]):
        return True
    return any(anc.type == "call_expression" and re.search(r"[tT]ransaction|(^|\.)(batch|multi)$", mod.call_name(anc))
               for anc in mod.ancestors(node))


_KV_WRITE = {"put", "set", "setItem"}
_KV_READ = {"get", "getItem"}
_KV_RECEIVER = re.compile(r"(storage|store|kv|redis|cache|db|localStorage|sessionStorage|keyv|namespace|state)$", re.I)
"""Receivers of a key-value store (`this.state.storage`, `env.KV`, `redis`, `localStorage`)."""


def _kv_key(mod: TsModule, call: Node, methods: set[str]) -> str | None:
    """The literal key of a key-value write or read (`storage.put("messages", v)` -> `messages`)."""
    receiver, _, method = mod.call_name(call).rpartition(".")
    if method not in methods or not receiver or not _KV_RECEIVER.search(receiver.rsplit(".", 1)[-1]):
        return None
    args = mod.arguments(call)
    if args and args[0].type == "array":
        # Deno KV / tuple keys (`kv.set(["session", id, "meta"], v)`): the literal parts, `*` for the variable ones
        parts = [mod.string_value(p) for p in args[0].named_children]
        if not any(parts):
            return None
        return "/".join(p if p is not None else "*" for p in parts)
    return mod.string_value(args[0]) if args else None


def _pointer_first(mod: TsModule, first: Node, second: Node) -> str | None:
    """`kv.set(meta, { count: count + 1 })` then `kv.set(["msg", count], msg)`: a name the first write stores
    (a count, an index, an id) that addresses the key of the second. Written in that order, a crash between them
    leaves a stored pointer to an entry that was never written."""
    value = mod.arguments(first)[1:2]
    key = mod.arguments(second)[:1]
    if not value or not key or key[0].type != "array":
        return None
    stored = {mod.node_text(i) for i in mod.identifiers(value[0])}
    used = {mod.node_text(i) for i in mod.identifiers(key[0])}
    return next(iter(sorted(stored & used)), None)


@rule(CheckId.C3, lang="typescript", name="state-split-across-writes")
def state_split_across_writes(mod: TsModule, project: TsProject) -> Iterator[Hit]:
    """Flags a save that writes the parts of one state object under separate keys of a key-value store, one call
    after the other (`await storage.put("messages", s.messages); await storage.put("meta", {pending: s.pending})`),
    when the module reads those keys back together to restore it. Unless the store commits the writes as one, a
    crash between them restores a new part beside a stale one (suspected: some runtimes coalesce writes)."""
    if not any(w in mod.text for w in (".put(", ".set(", ".setItem(")):
        return
    read_keys = {k for c in mod.calls() if (k := _kv_key(mod, c, _KV_READ)) is not None}
    if len(read_keys) < 2:
        return
    for fn in mod.functions():
        writes: list[tuple[Node, str, set[str]]] = []
        for call in mod.inside(mod.calls(), fn):
            if mod.enclosing_function(call) != fn:
                continue
            key = _kv_key(mod, call, _KV_WRITE)
            if key is None or key not in read_keys:
                continue
            value = mod.arguments(call)[1:2]
            roots = {mod.node_text(i) for v in value for i in mod.identifiers(v)
                     if i.parent is not None and i.parent.type == "member_expression" and
                     i.parent.child_by_field_name("object") == i}
            writes.append((call, key, roots))
        if len(writes) < 2 or len({k for _, k, _ in writes}) < 2 or _in_transaction(mod, writes[0][0]):
            continue
        shared = set.intersection(*(r for _, _, r in writes))
        pointer = next(((a, b, name) for i, a in enumerate(writes) for b in writes[i + 1:]
                        if a[1] != b[1] and (name := _pointer_first(mod, a[0], b[0])) is not None), None)
        if pointer is not None:
            a, b, name = pointer
            yield Hit(
                node=a[0],
                verdict=Verdict.CONFIRMED,
                claim=f"`{mod.function_name(fn)}` stores `{name}` under `{a[1]}` before writing the entry it "
                      f"addresses (`{b[1]}`, line {mod.line(b[0])}), as two separate writes",
                consequence="a crash between the writes leaves the stored pointer (count, index, id) naming an entry "
                            "that was never written: the restore reads a missing record as part of the state",
                direction="commit both in one atomic operation (`kv.atomic().set(...).set(...).commit()`, a "
                          "transaction, `MULTI`), or write the entry first and the pointer to it last",
            )
            continue
        if not shared:
            continue  # the writes store unrelated values, not parts of one object
        first, second = writes[0], writes[1]
        yield Hit(
            node=first[0],
            verdict=Verdict.SUSPECTED,
            claim=f"`{mod.function_name(fn)}` saves the parts of `{sorted(shared)[0]}` under separate keys "
                  f"(`{first[1]}`, then `{second[1]}` on line {mod.line(second[0])}), each its own write; the module "
                  "restores them together",
            consequence="a crash between the writes restores the new part beside a stale one (new messages with an "
                        "old pending-call or turn marker), a state that never existed",
            direction="write the parts in one call (`put({ messages, meta })`, a transaction, a single serialised "
                      "record) so they commit together",
            confirm_hint="verify whether this store commits separate writes atomically (some runtimes coalesce "
                         "un-awaited writes); if not, the two keys can disagree after a crash",
        )
