"""The deterministic engine: parse each file once, run recon and the rules of the selected checks."""

from __future__ import annotations

import contextlib
import gc
import os
import pickle
import re
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from harness_audit.findings import Candidate, CheckId, LandmarkCandidate, LandmarkKind
from harness_audit.static.lang import TreeTooDeep
from harness_audit.static.lang.python import PyModule, PyProject
from harness_audit.static.recon import find_landmarks
from harness_audit.static.registry import Hit, Rule, load_rules, rules_for
from harness_audit.workspace import SourceFile, Workspace

T = TypeVar("T")

__all__ = [
    "FORK_MIN_SOURCE", "BackgroundJob", "BackgroundResult", "ForkedCall", "ParsedProject", "StaticResult",
    "UnparsedFile", "can_fork", "hit_to_candidate", "is_example_file", "is_test_file", "is_view_module", "runtime_code_only",
    "parse_python", "run_rules",
]


_TEST_DIRS = frozenset({"tests", "test", "__tests__", "testing", "spec", "__mocks__", "fixtures", "e2e"})
_TEST_FILE = re.compile(r"(?:^test_.*\.py|.*_test\.py|conftest\.py|.*\.(?:test|spec|vitest)(?:-d)?\.[cm]?[jt]sx?)$")
"""`*.test-d.ts` is a type test (tsd, vitest typecheck); `*.vitest.ts` a vitest suite."""
_TESTS_DIR = re.compile(r".+[-_]tests?$")
"""A folder of one kind of tests: `integration-tests`, `unit_tests`, `smoke-test` (not `integrations`, `contests`)."""


def is_test_file(path: str) -> bool:
    """Test code (a `tests/` folder, `test_*.py`, `*.test.ts`, …) is not the harness's runtime: no static
    finding is reported in it (`runtime_code_only`), and the semantic layer does not lower it."""
    parts = path.split("/")
    return any(p in _TEST_DIRS or _TESTS_DIR.match(p) for p in parts[:-1]) or bool(_TEST_FILE.match(parts[-1]))


_EXAMPLE_DIRS = frozenset({"examples", "example", "demos", "demo", "samples", "cookbook", "guides", "tutorials",
                           "tutorial", "playground", "playgrounds", "templates", "template",
                           "evaluation", "evaluations", "evals", "benchmarks", "benchmark", ".github"})


def is_example_file(path: str) -> bool:
    """Example code (an `examples/`, `demo/`, `samples/`, `cookbook/`, `guides/`, `tutorials/` or `playground/`
    folder inside the audited root) shows how to use the harness, a generator's `templates/` are code it writes
    into the projects it creates (blind reviews 5 and 12: three findings there, none true), and evaluation,
    benchmark and CI code
    (`evaluation/`, `evals/`, `benchmarks/` or `benchmark/`, `.github/`)
    measures or builds it; neither is the harness's runtime. Only folders below the root count: an audit pointed at
    an example itself (`harness-audit examples/agent_loop`) audits it as the harness it is."""
    return any(p in _EXAMPLE_DIRS for p in path.split("/")[:-1])


_VIEW_MODULE = re.compile(r"""(?:\bfrom\s+|\brequire\s*\(\s*)['"](?:react|react-dom|preact|solid-js|react-native)"""
                          r"""['"]|^\s*['"]use client['"]""", re.M)
"""A module that renders a user interface: it imports a UI framework, or is a Next.js client component."""
_HARNESS_KINDS = frozenset({LandmarkKind.AGENT_LOOP, LandmarkKind.TOOL_REGISTRY, LandmarkKind.TOOL_EXECUTION,
                            LandmarkKind.REQUEST_ASSEMBLY})
"""Landmarks that make a module part of the harness whatever else it does."""
_VIEW_CHECKS = frozenset({CheckId.C1, CheckId.C10})
"""Checks whose defects a view can hold itself: a stop button whose controller never reaches the request (C10), a
tool call the page answers (`addToolResult`) or leaves unanswered (C1)."""


def is_view_module(path: str, text: str) -> bool:
    """A JS/TS module of the user interface: it imports React (or another view framework) or says `'use client'`.
    Its state is the view's and its requests go to the app's own server, so it is not the harness's runtime,
    unless it holds the loop, a tool table, tool execution or a model request itself (a chat hook that runs
    tools in the browser; a client that calls the provider from the page)."""
    return path.endswith((".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs")) and bool(_VIEW_MODULE.search(text))


def runtime_code_only(static: StaticResult, text_of: Callable[[str], str | None] | None = None,
                      paths: Sequence[str] = ()) -> None:
    """Drop every candidate cited in test or example code, whichever engine or rule proposed it: a fake model in
    a test, or a demo script's shortcut, is not a defect a user of the harness meets (the one place this is
    decided for every check). Landmarks stay: an example may be the only place a library's loop is assembled.
    With `text_of` (a file's text by path), candidates in view modules (`is_view_module`) that hold no harness
    landmark go too, except those of the checks a view can break itself (`_VIEW_CHECKS`): on packages never used for
    tuning, 1 of 13 findings judged in such modules was true (none of C1 or C10). With `paths` (every file of
    the tree) too, candidates inside a function nothing refers to (`sem.unused`) go: code that cannot run."""
    harness = {lm.file for lm in static.landmarks if lm.kind in _HARNESS_KINDS}
    views: dict[str, bool] = {}

    def view(path: str) -> bool:
        if path not in views:
            text = text_of(path) if text_of is not None and path not in harness else None
            views[path] = text is not None and is_view_module(path, text)
        return views[path]

    for check, candidates in static.candidates.items():
        static.candidates[check] = [c for c in candidates if c.file is None or not (
            is_test_file(c.file) or is_example_file(c.file) or (check not in _VIEW_CHECKS and view(c.file)))]
    if text_of is not None and paths:
        with no_gc_pauses():  # the heap is large by now: a collection mid-parse would cost more than the parse
            dead = _unreferenced_spans(static, text_of, paths)
        for check, candidates in static.candidates.items():
            static.candidates[check] = [c for c in candidates if c.file is None or c.line is None or not any(
                first <= c.line <= last for first, last in dead.get(c.file, ()))]


def _unreferenced_spans(static: StaticResult, text_of: Callable[[str], str | None],
                        paths: Sequence[str]) -> dict[str, list[tuple[int, int]]]:
    """The spans of the unreferenced functions (`sem.unused`) that hold a candidate."""
    from harness_audit.static.sem.unused import Def, defs_of_ir, defs_of_python, holding, unreferenced

    lines: dict[str, set[int]] = {}
    for cs in static.candidates.values():
        for c in cs:
            if c.file is not None and c.line is not None:
                lines.setdefault(c.file, set()).add(c.line)
    defs: list[Def] = []
    for path in sorted(lines):
        text = text_of(path)
        if text is None:
            continue
        found = defs_of_python(path, text) if path.endswith(".py") else None
        if found is None:
            from harness_audit.static.sem.engine import front_end_of

            parse = front_end_of(path)
            if parse is None:
                continue
            try:
                found = defs_of_ir(parse(path, text))
            except (RecursionError, ValueError):
                continue
        defs.extend(holding(found, lines[path]))
    out: dict[str, list[tuple[int, int]]] = {}
    for d in unreferenced(defs, text_of, paths):
        out.setdefault(d.path, []).append((d.line, d.end))
    return out


@dataclass(frozen=True, slots=True)
class UnparsedFile:
    """A file that could not be parsed; the audit goes on without it."""

    path: str
    """Canonical relative path."""
    reason: str
    """The parser's message, with the line."""


@dataclass(frozen=True, slots=True)
class ParsedProject:
    """The Python side of a workspace, parsed."""

    project: PyProject
    """Parsed modules."""
    unparsed: tuple[UnparsedFile, ...]
    """Files with syntax errors."""


@dataclass(slots=True)
class StaticResult:
    """What the static engine proposes, before the gate."""

    landmarks: list[LandmarkCandidate] = field(default_factory=list[LandmarkCandidate])
    """Landmark candidates from recon."""
    candidates: dict[CheckId, list[Candidate]] = field(default_factory=dict[CheckId, "list[Candidate]"])
    """Finding candidates per check."""
    errors: dict[CheckId, str] = field(default_factory=dict[CheckId, str])
    """Checks whose rules crashed, with one line saying where."""


@contextmanager
def no_gc_pauses() -> Iterator[None]:
    """Suspend the cyclic collector while millions of AST nodes are allocated and walked.

    Parsing allocates no garbage cycles worth collecting mid-run, and the collector's repeated
    full passes over a large heap more than double the parse time; it is restored afterwards.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_python(ws: Workspace, files: Iterable[SourceFile]) -> ParsedProject:
    """Parse every Python file once. A file that does not parse is listed, never fatal."""
    modules: dict[str, PyModule] = {}
    unparsed: list[UnparsedFile] = []
    for f in files:
        if f.language != "python":
            continue
        text = ws.text(f.path)
        if text is None:
            unparsed.append(UnparsedFile(f.path, "not readable as UTF-8 text"))
            continue
        try:
            modules[f.path] = PyModule.parse(f.path, text)
        except SyntaxError as exc:
            unparsed.append(UnparsedFile(f.path, f"syntax error at line {exc.lineno}: {exc.msg}"))
        except TreeTooDeep as exc:
            unparsed.append(UnparsedFile(f.path, str(exc)))
        except RecursionError:
            unparsed.append(UnparsedFile(f.path, "nested too deeply for Python's parser"))
        except (ValueError, MemoryError) as exc:
            # isolation boundary of the parser: one hostile file never stops the audit
            unparsed.append(UnparsedFile(f.path, f"{type(exc).__name__}: {exc}"))
    # the rules resolve imports as written, not through the root's own package name (`symbols.root_package`):
    # their taint follows every resolved call into helpers and tests containment only inside one function, so
    # resolving those imports added more false findings than true ones (5 true of 15 on two judged sets)
    return ParsedProject(PyProject(modules), tuple(unparsed))


def recon(parsed: ParsedProject) -> list[LandmarkCandidate]:
    """Static landmark candidates, deduplicated on (kind, file, line) (the collector off, as for the rules)."""
    seen: set[tuple[str, str, int]] = set()
    out: list[LandmarkCandidate] = []
    with no_gc_pauses():
        for lm in find_landmarks(parsed.project):
            key = (str(lm.kind), lm.file, lm.line)
            if key not in seen:
                seen.add(key)
                out.append(lm)
    return out


class ForkedCall(Generic[T]):
    """`work()` computed in a forked child while this process goes on; `result()` collects what it returned.

    The child sends back only the pickled value and leaves without running any of the parent's exit handlers.
    A child that fails for any reason (an exception, a kill, an unpicklable value) gives `None`: the caller then
    does the same work itself, so a fork can only change how long an audit takes, never what it finds.
    """

    def __init__(self, work: Callable[[], T]) -> None:
        self.peak_kb: int | None = None
        """Peak resident memory of the child, once collected."""
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: compute, send, and leave
            code = 1
            try:
                os.close(read_end)
                data = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
                with os.fdopen(write_end, "wb") as out:
                    out.write(data)
                code = 0
            except BaseException:  # noqa: BLE001, S110  # a failed child only means the parent does the work
                pass
            finally:
                os._exit(code)
        os.close(write_end)
        self._pid: int | None = pid
        self._pipe: int | None = read_end

    @property
    def pid(self) -> int | None:
        """The child's process id until it is collected or cancelled."""
        return self._pid

    def result(self) -> T | None:
        """What `work()` returned in the child, waiting for it; None when the child failed (or was cancelled)."""
        if self._pid is None or self._pipe is None:
            return None
        pid, pipe = self._pid, self._pipe
        self._pid = self._pipe = None
        try:
            with os.fdopen(pipe, "rb") as src:
                data = src.read()
        finally:
            _, status, usage = os.wait4(pid, 0)
            self.peak_kb = usage.ru_maxrss
        if os.waitstatus_to_exitcode(status) != 0:
            return None
        with contextlib.suppress(pickle.UnpicklingError, EOFError, AttributeError, TypeError, ValueError):
            return pickle.loads(data)  # type: ignore[no-any-return]  # noqa: S301  # our own child's, a moment ago
        return None

    def cancel(self) -> None:
        """Stop a child that is still running (nothing will ask for its result)."""
        if self._pid is not None and self._pipe is not None:
            with contextlib.suppress(OSError):
                os.kill(self._pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(self._pid, 0)
            os.close(self._pipe)
            self._pid = self._pipe = None


def can_fork() -> bool:
    """A spare core, and a single-threaded POSIX process (the only kind that forks safely)."""
    if not hasattr(os, "fork") or threading.active_count() > 1:
        return False
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores > 1


FORK_MIN_SOURCE = 500_000
"""Below this much source (characters of Python for the rules' background job, bytes of the semantic layer's
files for its own), the work runs inline: forking would cost more than it saves."""

_COSTLIEST_FIRST: tuple[CheckId, ...] = (
    CheckId.C14, CheckId.C5, CheckId.C1, CheckId.C10, CheckId.C4, CheckId.C11, CheckId.C13, CheckId.C3, CheckId.C2,
    CheckId.C15, CheckId.C9, CheckId.C12, CheckId.C8, CheckId.C7, CheckId.C6,
)
"""The order in which the two processes take checks from their shared queue (measured on a 136k-line harness):
the costliest first, so that the last ones, taken by whichever process is free, are short."""


@dataclass(frozen=True, slots=True)
class BackgroundResult:
    """What the background job produced: recon's landmarks and the rule output of the checks the child ran."""

    landmarks: list[LandmarkCandidate]
    """Exactly what `recon` returns."""
    rules: StaticResult
    """Candidates and errors of the checks the child ran (none when nothing was forked)."""
    timings: dict[CheckId, float]
    """Seconds each of those checks took."""


class BackgroundJob:
    """Recon and, on a large project, a share of the checks, run beside the checks this process runs.

    With a spare core, a forked child runs recon while this process starts on the checks; both then take
    checks, one at a time, from a queue they share (a pipe holding one byte per check), until none is left,
    so the two finish together whatever the project. The child reads the same parsed trees (shared
    copy-on-write, nothing is re-parsed) and sends back only candidates.

    Results do not depend on which process runs a check: a check's rules run together and in order, and what
    checks share (call names and indexes, callers, registered tools, taint) is cached as pure functions of the
    project. A child that fails for any reason is replaced by the same work done here. Without a fork, recon
    runs at once, before the rules, and `checks_here` gives every check in order.
    """

    def __init__(self, parsed: ParsedProject, checks: Iterable[CheckId]) -> None:
        self._parsed = parsed
        self._checks = tuple(checks)
        self._child: ForkedCall[BackgroundResult] | None = None
        self._queue: int | None = None
        self._order: tuple[CheckId, ...] = ()
        self._claimed: list[CheckId] = []
        self._inline: list[LandmarkCandidate] | None = None
        self.child_peak_kb: int | None = None
        """Peak resident memory of the child, once collected (None when nothing was forked)."""
        if _worth_forking(parsed):
            load_rules("python")  # compiled once, here, rather than in both processes
            rank = {check: i for i, check in enumerate(_COSTLIEST_FIRST)}
            self._order = tuple(sorted(self._checks, key=lambda c: rank.get(c, len(rank))))
            self._queue = self._fill_queue(len(self._order))
            self._child = ForkedCall(lambda: self._work(self._claimed_by_child()))
        else:
            self._inline = recon(parsed)

    @staticmethod
    def _fill_queue(count: int) -> int:
        read_end, write_end = os.pipe()
        # positions in `_order`, one byte each: a one-byte read from a pipe goes to exactly one reader
        os.write(write_end, bytes(range(count)))
        os.close(write_end)  # an empty queue then reads as end of file in both processes
        return read_end

    def _claim(self) -> CheckId | None:
        if self._queue is None:
            return None
        taken = os.read(self._queue, 1)
        return self._order[taken[0]] if taken else None

    def checks_here(self) -> Iterator[CheckId]:
        """The checks to run in this process: all, in order, when nothing was forked; else as claimed."""
        if self._queue is None:
            yield from self._checks
            return
        while (check := self._claim()) is not None:
            self._claimed.append(check)
            yield check

    def _work(self, checks: Iterable[CheckId]) -> BackgroundResult:
        landmarks = recon(self._parsed)
        rules = StaticResult()
        timings: dict[CheckId, float] = {}
        for check in checks:
            started = time.perf_counter()
            one = run_rules(self._parsed, [check])
            rules.candidates[check] = one.candidates.get(check, [])
            rules.errors.update(one.errors)
            timings[check] = time.perf_counter() - started
        return BackgroundResult(landmarks, rules, timings)

    def _claimed_by_child(self) -> Iterator[CheckId]:
        while (check := self._claim()) is not None:
            yield check

    def result(self) -> BackgroundResult:
        """Recon's landmarks and the output of the checks the child ran, waiting for the child if there is one.

        Call it once `checks_here` is exhausted: every check is then either run here or in the result."""
        if self._inline is not None:
            return BackgroundResult(self._inline, StaticResult(), {})
        done = self._child.result() if self._child is not None else None
        if self._child is not None:
            self.child_peak_kb = self._child.peak_kb
            self._child = None
        self._close_queue()
        if isinstance(done, BackgroundResult):
            return done
        return self._work(c for c in self._order if c not in self._claimed)

    def _close_queue(self) -> None:
        if self._queue is not None:
            os.close(self._queue)
            self._queue = None

    def cancel(self) -> None:
        """Stop a child that is still running (the rules here failed before its result was asked for)."""
        if self._child is not None:
            self._child.cancel()
            self._child = None
        self._close_queue()


def _worth_forking(parsed: ParsedProject) -> bool:
    """A fork pays on a large project with a second core."""
    return can_fork() and sum(len(m.source) for m in parsed.project.modules.values()) >= FORK_MIN_SOURCE


def hit_to_candidate(rule: Rule, mod: PyModule, hit: Hit) -> Candidate:
    """Turn a rule's `Hit` into a gate-ready `Candidate` quoting the cited source."""
    where = hit.module or mod
    if hit.node is not None:
        line = getattr(hit.node, "lineno", 1)
        end = getattr(hit.node, "end_lineno", None)
    else:
        line, end = hit.line or 1, None
    evidence = hit.evidence if hit.evidence is not None else where.excerpt(line, end)
    return Candidate(
        check=rule.check, verdict=hit.verdict, file=where.path, line=line, evidence=evidence, claim=hit.claim,
        consequence=hit.consequence, direction=hit.direction, confirm_hint=hit.confirm_hint,
        source=f"static:{rule.rule_id}", language="python",
    )


def run_rules(parsed: ParsedProject, checks: Iterable[CheckId]) -> StaticResult:
    """Run every Python rule of `checks` over every module.

    The cyclic collector is off meanwhile: rules allocate many short-lived containers and next to no reference
    cycles, and its passes over the caches the rules build cost more than the few cycles they would free.
    """
    result = StaticResult()
    for check in checks:
        result.candidates.setdefault(check, [])
    with no_gc_pauses():
        for rule in rules_for(result.candidates, "python"):
            bucket = result.candidates[rule.check]
            for mod in parsed.project.modules.values():
                try:
                    bucket.extend(hit_to_candidate(rule, mod, hit) for hit in rule.func(mod, parsed.project))
                except Exception as exc:  # noqa: BLE001  # isolation boundary of a check unit: record, go on
                    result.errors.setdefault(rule.check, f"{rule.rule_id} crashed on {mod.path}: "
                                                         f"{type(exc).__name__}: {exc}")
    return result
