"""The subagents' read-only navigation tools: read_file, grep, glob, find_symbol, find_references.

Every path a model submits goes through `Workspace.resolve` (symlinks resolved before the
containment and scope tests); nothing here writes, executes or reaches the network. A bad call
raises `ToolRefusal`, whose `refusal_text` goes back to the model as the tool's result. Every
output is a deterministic function of the call and the tree: sorted, paged and capped.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable, Iterable
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Any

from harness_audit.llm.spans import Span, definitions, named
from harness_audit.symbols import SymbolIndex
from harness_audit.workspace import SourceFile, Workspace, excluded_segment

__all__ = ["NavigationTools", "ToolRefusal", "ToolRefusalReason", "glob_matcher", "refusal_text"]

_MAX_SEARCH_LINE = 2_000
"""Longer lines (minified code, data blobs) are not searched: a regex over them can take seconds."""
_MAX_SHOWN_LINE = 2_000
"""`read_file` cuts a longer line and says so."""
_MAX_LISTED_LINE = 300
"""`grep` and the symbol tools show at most this much of each matching line."""
_MAX_PATTERN = 1_000
"""Longest accepted regex or glob pattern."""
_MAX_BRACE_EXPANSIONS = 64



class ToolRefusalReason(StrEnum):
    """Why a navigation tool refused a call; the path reasons share the gate's spelling."""

    FILE_OUTSIDE_WORKSPACE = "file-outside-workspace"
    OUT_OF_SCOPE_PATH = "out-of-scope-path"
    FILE_NOT_FOUND = "file-not-found"
    FILE_TOO_LARGE = "file-too-large"
    NOT_TEXT = "not-text"
    BAD_ARGUMENT = "bad-argument"


class ToolRefusal(Exception):
    """A tool call the tools will not carry out; it goes back to the model as the tool result."""

    def __init__(self, reason: ToolRefusalReason, message: str, remedy: str) -> None:
        super().__init__(message)
        self.reason = reason
        """The closed reason, e.g. `file-outside-workspace`."""
        self.message = message
        """What was wrong with the call, naming the bad value."""
        self.remedy = remedy
        """What to do instead, one sentence."""


class _Outline(Exception):
    """A symbol read answered with an outline instead of lines (a long class)."""


SYMBOL_LINES = 60
"""Most lines a `read_file(symbol=…)` shows of one definition; a longer one is cut (a class: outlined)."""


def refusal_text(err: ToolRefusal) -> str:
    """The exact text the model sees for a refused call."""
    return f"Refused ({err.reason.value}): {err.message}\nRemedy: {err.remedy}"


def _bad(message: str, remedy: str) -> ToolRefusal:
    return ToolRefusal(ToolRefusalReason.BAD_ARGUMENT, message, remedy)


# ---------------------------------------------------------------- glob patterns

def _expand_braces(pattern: str) -> list[str]:
    """`*.{ts,tsx}` → `*.ts`, `*.tsx` (innermost group first, bounded)."""
    out: list[str] = []
    todo = [pattern]
    while todo:
        current = todo.pop()
        match = re.search(r"\{([^{}]*,[^{}]*)\}", current)
        if match is None:
            out.append(current)
        else:
            todo.extend(current[:match.start()] + alt + current[match.end():]
                        for alt in reversed(match.group(1).split(",")))
        if len(out) + len(todo) > _MAX_BRACE_EXPANSIONS:
            raise _bad(f"glob {pattern!r} expands to more than {_MAX_BRACE_EXPANSIONS} patterns",
                       "use fewer or smaller {a,b} groups")
    return out


def _glob_to_regex(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            if i < n and pattern[i] == "/":
                out.append("(?:.*/)?")
                i += 1
            else:
                out.append(".*")
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern.startswith("[!", i) or pattern.startswith("[]", i) else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                elif body.startswith("^"):
                    body = "\\" + body
                out.append(f"[{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def glob_matcher(pattern: object) -> Callable[[str], bool]:
    """A predicate on workspace-relative POSIX paths.

    `*` and `?` stay inside one path segment, `**` crosses segments (`**/` may match none),
    `[abc]` and `{a,b}` work as in shells. A pattern without `/` matches the file name at any
    depth (`*.py`, `loop.py`), as in ripgrep and .gitignore; one with `/` matches the whole path.
    """
    if not isinstance(pattern, str) or not pattern.strip():
        raise _bad(f"glob pattern {pattern!r} is empty or not a string", "pass a pattern such as '**/*.py'")
    if len(pattern) > _MAX_PATTERN:
        raise _bad(f"glob pattern is {len(pattern)} characters long", f"keep it under {_MAX_PATTERN} characters")
    pattern = pattern.strip().replace("\\", "/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.lstrip("/")
    if pattern.endswith("/"):
        pattern += "**"  # a directory means everything under it
    regex = re.compile("|".join(f"(?:{_glob_to_regex(p)})" for p in _expand_braces(pattern)), re.DOTALL)

    def matches(path: str) -> bool:
        if regex.fullmatch(path):
            return True
        return not anchored and regex.fullmatch(path.rsplit("/", 1)[-1]) is not None

    return matches


# ---------------------------------------------------------------- regex safety

def _nested_unbounded_repeat(pattern: str) -> bool:
    """True for `(a+)+`-style patterns, whose backtracking can take exponential time.

    Python's `re` has no timeout, so the shape is refused up front. A repeated group whose every
    iteration holds a separator the inner repeats cannot match (`(\\.\\w+)*`, `(,\\s*\\w+)*`) is
    allowed: the separators fix where iterations split. Best effort: the parser is private to the
    standard library; where it is missing the check is skipped.
    """
    try:
        # the only parser of `re` syntax there is; private, hence the import guard below
        from re import _constants, _parser  # pyright: ignore[reportPrivateUsage]
    except ImportError:  # pragma: no cover - other interpreters
        return False
    try:
        parsed: Any = _parser.parse(pattern)
    except (re.error, TypeError, ValueError, RecursionError, OverflowError):
        return False
    return _RegexShape(_constants).dangerous(list(parsed))


class _RegexShape:
    """Walks `re._parser` output; `c` is `re._constants`, passed in because it is private."""

    def __init__(self, c: Any) -> None:
        self.c = c
        self.repeats = {c.MAX_REPEAT, c.MIN_REPEAT}
        self.safe_categories = {c.CATEGORY_WORD, c.CATEGORY_DIGIT, c.CATEGORY_SPACE}

    def _unbounded(self, av: Any) -> bool:
        return bool(av[1] == self.c.MAXREPEAT or av[1] > 64)

    def dangerous(self, items: list[Any]) -> bool:
        """Whether an unbounded repeat anywhere in `items` holds another one without a separator."""
        for op, av in items:
            if op in self.repeats:
                body = list(av[2])
                if self._unbounded(av):
                    inner = self._inner_repeats(body)
                    if inner and not self._separated(body, inner):
                        return True
                if self.dangerous(body):
                    return True
            elif op == self.c.SUBPATTERN:
                if self.dangerous(list(av[-1])):
                    return True
            elif op == self.c.BRANCH:
                if any(self.dangerous(list(branch)) for branch in av[1]):
                    return True
            elif op in {self.c.ASSERT, self.c.ASSERT_NOT} and self.dangerous(list(av[1])):
                return True
        return False

    def _inner_repeats(self, items: list[Any]) -> list[list[Any]]:
        """Bodies of the unbounded repeats anywhere inside `items`."""
        found: list[list[Any]] = []
        for op, av in items:
            if op in self.repeats:
                if self._unbounded(av):
                    found.append(list(av[2]))
                found.extend(self._inner_repeats(list(av[2])))
            elif op == self.c.SUBPATTERN:
                found.extend(self._inner_repeats(list(av[-1])))
            elif op == self.c.BRANCH:
                for branch in av[1]:
                    found.extend(self._inner_repeats(list(branch)))
        return found

    def _separated(self, body: list[Any], inner: list[list[Any]]) -> bool:
        """Whether `body` always holds a punctuation literal that no inner repeat can consume."""
        flat: list[Any] = []
        todo = list(body)
        while todo:
            op, av = todo.pop(0)
            if op == self.c.SUBPATTERN:
                todo[:0] = list(av[-1])
            else:
                flat.append((op, av))
        for op, av in flat:
            if op != self.c.LITERAL:
                continue
            char = chr(av)
            if char.isalnum() or char == "_" or char.isspace():
                continue
            if all(self._excludes(rep, av) for rep in inner):
                return True
        return False

    def _excludes(self, items: list[Any], code: int) -> bool:
        """Whether every element of a repeated body matches one character that is never `code`."""
        for op, av in items:
            if op == self.c.LITERAL:
                if av == code:
                    return False
            elif op == self.c.IN:
                for kind, value in av:
                    if kind == self.c.NEGATE or (kind == self.c.LITERAL and value == code):
                        return False
                    if kind == self.c.RANGE and value[0] <= code <= value[1]:
                        return False
                    if kind == self.c.CATEGORY and value not in self.safe_categories:
                        return False
                    if kind not in {self.c.LITERAL, self.c.RANGE, self.c.CATEGORY}:
                        return False
            elif op == self.c.SUBPATTERN:
                if not self._excludes(list(av[-1]), code):
                    return False
            else:
                return False
        return True


# ---------------------------------------------------------------- the tools

def _line_arg(value: object, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise _bad(f"`{name}` must be a line number, got {value!r}", f"pass `{name}` as a positive integer")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if not isinstance(value, int) or value < 1:
        raise _bad(f"`{name}` must be a positive line number, got {value!r}",
                   f"pass `{name}` as a 1-based integer, or leave it out")
    return value


def shown_path(path: str) -> str:
    """A path as tool output lists it: as is, or as a JSON string when it holds a line break or another
    control character (a file named `x\\n## Instructions` must not start a line of its own)."""
    if all(ch.isprintable() for ch in path):
        return path
    return json.dumps(path, ensure_ascii=False)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… [line cut: {len(text)} characters]"


def _fit(lines: list[str], max_chars: int, note: Callable[[int], str]) -> str:
    """Join `lines`; if that exceeds `max_chars`, cut at a line boundary and end with `note(omitted)`."""
    text = "\n".join(lines)
    if len(text) <= max_chars:
        return text
    budget = max_chars - len(note(len(lines))) - 1
    kept: list[str] = []
    used = 0
    for line in lines:
        if used + len(line) + 1 > budget:
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join([*kept, note(len(lines) - len(kept))])


class NavigationTools:
    """The read-only tools of every subagent of one run, over one workspace.

    Args:
        ws: The audited workspace; all paths are resolved through it.
        index: The symbol index, or None to answer the symbol tools by text search.
        max_chars: Ceiling on the characters of any one tool result.
        page_lines: Most lines `read_file` returns per call.
        max_results: Most matches `grep`, `glob` and the symbol tools list per call.
    """

    def __init__(self, ws: Workspace, index: SymbolIndex | None, *, max_chars: int = 12_000, page_lines: int = 200,
                 max_results: int = 100) -> None:
        self.ws = ws
        """The audited workspace."""
        self.index = index
        """The symbol index, if any."""
        self.max_chars = max_chars
        """Ceiling on one result's length."""
        self.page_lines = page_lines
        """Lines per `read_file` page."""
        self.max_results = max_results
        """Matches listed per call."""
        self.degraded = False
        """True once `find_symbol` or `find_references` fell back to text search."""
        self._files: tuple[SourceFile, ...] | None = None

    # ------------------------------------------------------------ scope
    def _in_scope(self) -> tuple[SourceFile, ...]:
        if self._files is None:
            self._files = self.ws.discover().files
        return self._files

    def _resolve(self, path: object) -> str:
        """The canonical relative path of a submitted one, or the refusal that applies."""
        if not isinstance(path, str) or not path.strip():
            raise _bad(f"`path` must be a non-empty string, got {path!r}", "pass a workspace-relative path")
        if len(path) > 1 and path.startswith('"') and path.endswith('"'):
            # a path the tools listed as a JSON string (it holds a control character): read it back as one
            with contextlib.suppress(ValueError):
                decoded = json.loads(path)
                path = decoded if isinstance(decoded, str) and decoded else path
        if "\0" in path:
            raise _bad("`path` contains a NUL character", "pass a workspace-relative path")
        submitted = path.strip()
        posix = submitted.replace("\\", "/")
        if PurePosixPath(posix).is_absolute() or os.path.isabs(submitted):
            inside = os.path.normpath(submitted).startswith(str(self.ws.root) + os.sep)
            hint = (f"pass {os.path.relpath(os.path.normpath(submitted), self.ws.root)!r} instead" if inside else
                    "pass a path relative to the workspace root, as `glob` lists them")
            raise ToolRefusal(ToolRefusalReason.FILE_OUTSIDE_WORKSPACE,
                              f"{submitted!r} is an absolute path; only workspace-relative paths are read", hint)
        normal = os.path.normpath(posix).replace(os.sep, "/")
        if normal == ".." or normal.startswith("../"):
            raise ToolRefusal(ToolRefusalReason.FILE_OUTSIDE_WORKSPACE,
                              f"{submitted!r} leaves the audited workspace",
                              "pass a path inside the workspace, as `glob` lists them")
        segment = excluded_segment(normal, self.ws.excludes)
        if segment is not None:
            raise self._excluded(submitted, segment)
        resolved = self.ws.resolve(normal)
        if resolved.status == "outside":
            raise ToolRefusal(ToolRefusalReason.FILE_OUTSIDE_WORKSPACE,
                              f"{submitted!r} is a link that resolves outside the audited workspace",
                              "read the files inside the workspace instead; links out of it are never followed")
        if resolved.status == "excluded":
            raise self._excluded(submitted, resolved.detail)
        if resolved.status == "credential":
            raise ToolRefusal(ToolRefusalReason.OUT_OF_SCOPE_PATH,
                              f"{submitted!r} may hold credentials; the audit never reads such files",
                              "audit the code that loads the setting instead of the file that holds it")
        if resolved.status == "not-found" or resolved.path is None:
            raise self._not_found(submitted, normal)
        return resolved.path

    @staticmethod
    def _excluded(submitted: str, segment: str) -> ToolRefusal:
        return ToolRefusal(ToolRefusalReason.OUT_OF_SCOPE_PATH,
                           f"{submitted!r} is under {segment!r}, which is excluded from the audit "
                           "(third-party, generated or tool data)",
                           "audit first-party code only; `glob` lists the files in scope")

    def _not_found(self, submitted: str, normal: str) -> ToolRefusal:
        real = os.path.realpath(self.ws.root / normal)
        if os.path.isdir(real) and (real == str(self.ws.root) or real.startswith(str(self.ws.root) + os.sep)):
            rel = "" if real == str(self.ws.root) else os.path.relpath(real, self.ws.root).replace(os.sep, "/")
            pattern = f"{rel}/**" if rel else "**"
            return ToolRefusal(ToolRefusalReason.FILE_NOT_FOUND, f"{submitted!r} is a directory, not a file",
                               f"call glob({pattern!r}) to list the files in it")
        stem = normal.rsplit("/", 1)[-1]
        return ToolRefusal(ToolRefusalReason.FILE_NOT_FOUND, f"{submitted!r} does not exist in the workspace",
                           f"call glob({stem!r}) or glob('**/*') to find the right path")

    # ------------------------------------------------------------ read_file
    def read_file(self, path: str, start_line: int | None = None, end_line: int | None = None,
                  symbol: str | None = None) -> str:
        """Read lines of a workspace file, numbered from 1, one page per call; or one definition by name.

        Args:
            path: Workspace-relative path, as `glob` lists it.
            start_line: First line to show (1-based); default 1.
            end_line: Last line to show; default one page after `start_line`.
            symbol: A function, method or class of the file (`run`, `Agent.run`): its lines only.
        """
        rel = self._resolve(path)
        header: str | None = None
        if symbol is not None:
            try:
                start_line, end_line, header = self._definition(rel, symbol)
            except _Outline as outline:
                return _fit(str(outline).split("\n"), self.max_chars,
                            lambda n: f"… output cut at {self.max_chars} characters; {n} more definitions")
        start = _line_arg(start_line, "start_line") or 1
        end_arg = _line_arg(end_line, "end_line")
        if end_arg is not None and end_arg < start:
            raise _bad(f"`end_line` {end_arg} is before `start_line` {start}", "pass end_line >= start_line")
        lines = self.ws.lines(rel)  # the workspace's one bounded reader of regular files
        if lines is None:
            problem = self.ws.problem(rel)
            if problem == "too-large":
                raise ToolRefusal(ToolRefusalReason.FILE_TOO_LARGE,
                                  f"{rel!r} is over the {self.ws.max_file_bytes}-byte limit of the audit",
                                  "cite code from the first-party source files instead")
            if problem in ("unreadable", "special-file"):
                raise ToolRefusal(ToolRefusalReason.FILE_NOT_FOUND, f"{rel!r} cannot be read ({problem})",
                                  "call glob to find a readable file")
            raise ToolRefusal(ToolRefusalReason.NOT_TEXT, f"{rel!r} is binary or not UTF-8 text",
                              "read source files; this tool shows text only")
        total = len(lines)
        if total == 0:
            return f"{rel!r} is empty (0 lines)"
        if start > total:
            raise _bad(f"`start_line` {start} is past the end: {rel!r} has {total} lines",
                       f"pass start_line between 1 and {total}")
        end = min(total, start + self.page_lines - 1, end_arg if end_arg is not None else total)
        width = max(4, len(str(end)))
        shown = [f"{n:>{width}}\t{_clip(lines[n - 1], _MAX_SHOWN_LINE)}" for n in range(start, end + 1)]
        footer = (f"… file has {total} lines; call read_file({rel!r}, start_line={end + 1}) for more"
                  if end < total else None)
        if header is not None:
            shown = [header, *shown]
        text = "\n".join(shown if footer is None else [*shown, footer])
        if len(text) <= self.max_chars:
            return text

        def cut(omitted: int) -> str:
            last = end - omitted
            if last >= total:
                return f"… output cut at {self.max_chars} characters; line {last}, the last, is longer than that"
            return (f"… output cut at {self.max_chars} characters after line {last}; file has {total} lines; "
                    f"call read_file({rel!r}, start_line={last + 1}) for more")

        body = _fit(shown, self.max_chars, cut)
        if body.count("\n") == 0 and shown:
            # not even one line fitted: show the start of the first line so that paging always advances
            note = cut(len(shown) - 1)
            body = "\n".join([shown[0][: max(0, self.max_chars - len(note) - 1)], note])
        return body

    def _definition(self, rel: str, symbol: object) -> tuple[int, int, str]:
        """(first line, last line, header) of the definition `symbol` names in `rel`, or the refusal.

        A definition longer than `SYMBOL_LINES` is cut there (the header says where it ends); a long class is
        shown as its outline instead (`_outline`, raised as the answer), so a symbol read stays small.
        """
        name = self._name_arg(symbol)
        spans = definitions(self.ws, rel)
        found = named(spans, name)
        if not found:
            known = ", ".join(s.name for s in spans[:15]) or "none found (not Python/TS/JS, or it does not parse)"
            raise _bad(f"no definition {name!r} in {rel!r}; its definitions: {known}",
                       "pass one of those names, or read by start_line/end_line")
        span = found[0]
        others = "; also " + ", ".join(f"{s.name} at line {s.first}" for s in found[1:4]) if len(found) > 1 else ""
        kind = "function" if span.function else "class"
        head = f"{kind} {span.name}: lines {span.first}-{span.last} of {shown_path(rel)}{others}"
        if span.last - span.first < SYMBOL_LINES:
            return span.first, span.last, head
        if not span.function:
            raise _Outline(self._outline(rel, span, spans, head))
        last = span.first + SYMBOL_LINES - 1
        return span.first, last, (f"{head}; its first {SYMBOL_LINES} lines (read_file({shown_path(rel)!r}, "
                                  f"start_line={last + 1}, end_line={span.last}) for the rest)")

    def _outline(self, rel: str, span: Span, spans: tuple[Span, ...], head: str) -> str:
        """A long class as its header and the first line of each definition inside it, numbered."""
        lines = self.ws.lines(rel) or []
        width = max(4, len(str(span.last)))
        inner = sorted({s.first for s in spans if span.first < s.first <= span.last and s.name.count(".") ==
                        span.name.count(".") + 1})
        rows = [span.first, *inner][: self.max_results]
        shown = [f"{n:>{width}}\t{_clip(lines[n - 1], _MAX_SHOWN_LINE)}" for n in rows if 0 < n <= len(lines)]
        return "\n".join([f"{head}; an outline (read a method by name, e.g. symbol={span.name}.NAME)", *shown])

    # ------------------------------------------------------------ grep
    def _scoped_files(self, glob: object) -> list[SourceFile]:
        files = self._in_scope()
        if glob is None or glob == "":
            return list(files)
        matches = glob_matcher(glob)
        return [f for f in files if matches(f.path)]

    def grep(self, pattern: str, glob: str | None = None) -> str:
        """Search the first-party source files for a Python regular expression, line by line.

        Args:
            pattern: Python `re` pattern, searched in each line (use `(?i)` to ignore case).
            glob: Only search files whose workspace-relative path matches, e.g. `src/**/*.py` or `*.ts`.
        """
        value: object = pattern  # straight from the model's JSON: any type may arrive
        if not isinstance(value, str) or not value:
            raise _bad(f"`pattern` must be a non-empty string, got {pattern!r}", "pass a Python regular expression")
        if len(pattern) > _MAX_PATTERN:
            raise _bad(f"`pattern` is {len(pattern)} characters long", f"keep it under {_MAX_PATTERN} characters")
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise _bad(f"invalid regular expression {pattern!r}: {exc}",
                       "fix the pattern (Python `re` syntax; escape ( [ . * + ? with a backslash to match them)"
                       ) from exc
        except (OverflowError, RecursionError) as exc:
            raise _bad(f"regular expression {pattern!r} is too large to compile", "use a simpler pattern") from exc
        if _nested_unbounded_repeat(pattern):
            raise _bad(f"{pattern!r} repeats a group that itself repeats, e.g. (a+)+, "
                       "which can take exponential time", "rewrite it without a repeated group that contains + or *")
        files = self._scoped_files(glob)
        found, total, long_lines = self._search(regex, files)
        scope = f" in files matching {glob!r}" if glob else ""
        if total == 0:
            out = [f"no matches for {pattern!r} in {len(files)} files{scope}"]
        else:
            out = found
            if total > len(found):
                out = [*found, f"… {total - len(found)} more matches not shown; narrow the pattern or pass a glob"]
        if long_lines:
            out.append(f"note: {long_lines} lines longer than {_MAX_SEARCH_LINE} characters were not searched")
        return _fit(out, self.max_chars, lambda n: f"… output cut at {self.max_chars} characters; "
                                                   f"{n} more lines not shown; narrow the pattern or pass a glob")

    def _search(self, regex: re.Pattern[str], files: Iterable[SourceFile]) -> tuple[list[str], int, int]:
        """Matching lines as `path:line: text` (at most `max_results`), the total count, lines skipped as too long."""
        found: list[str] = []
        total = long_lines = 0
        for f in files:
            lines = self.ws.lines(f.path)
            if lines is None:
                continue
            for number, line in enumerate(lines, 1):
                if len(line) > _MAX_SEARCH_LINE:
                    long_lines += 1
                    continue
                if regex.search(line):
                    total += 1
                    if len(found) < self.max_results:
                        found.append(f"{shown_path(f.path)}:{number}: {_clip(line.strip(), _MAX_LISTED_LINE)}")
        return found, total, long_lines

    # ------------------------------------------------------------ glob
    def glob(self, pattern: str) -> str:
        """List the first-party source files whose workspace-relative path matches a glob pattern.

        Args:
            pattern: e.g. `**/*.py`, `src/agent/*.ts`, `*loop*`; a pattern without `/` matches file names at any depth.
        """
        matches = glob_matcher(pattern)
        files = [shown_path(f.path) for f in self._in_scope() if matches(f.path)]
        if not files:
            return f"no files match {pattern!r} ({len(self._in_scope())} source files in scope)"
        out = files[: self.max_results]
        if len(files) > len(out):
            out.append(f"… {len(files) - len(out)} more files not shown; narrow the pattern")
        return _fit(out, self.max_chars, lambda n: f"… output cut at {self.max_chars} characters; "
                                                   f"{n} more files not shown; narrow the pattern")

    # ------------------------------------------------------------ symbols
    def _name_arg(self, name: object) -> str:
        if not isinstance(name, str) or not name.strip():
            raise _bad(f"`name` must be a non-empty string, got {name!r}", "pass a name such as `run` or `Agent.run`")
        clean = name.strip()
        if len(clean) > 200 or not all(seg.replace("$", "_").isidentifier() for seg in clean.split(".")):
            raise _bad(f"{clean!r} is not a name or dotted name",
                       "pass an identifier such as `run` or `Agent.run`; use grep for other text")
        return clean

    def _unindexed(self) -> list[SourceFile]:
        """The in-scope files the index does not answer for: other languages, and files that did not parse."""
        files = self._in_scope()
        if self.index is None:
            return list(files)
        unparsed = {u.path for u in self.index.unparsed}
        return [f for f in files if f.language not in self.index.languages or f.path in unparsed]

    def _text_fallback(self, name: str, files: list[SourceFile]) -> tuple[str, list[str], int]:
        """A word-boundary search for the name's last segment: header, lines, total."""
        word = name.rsplit(".", 1)[-1]
        regex = re.compile(rf"(?<![\w$]){re.escape(word)}(?![\w$])")
        found, total, _ = self._search(regex, files)
        self.degraded = True
        langs = ", ".join(sorted({f.language for f in files}))
        why = "no symbol index" if self.index is None else f"not in the symbol index ({langs} or unparsed files)"
        head = (f"degraded: {why}; text search for the word {word!r} in {len(files)} files follows "
                "(matches may be comments, strings or unrelated names)")
        return head, found, total

    def _listing(self, name: str, head: str | None, index_lines: list[str], index_total: int,
                 fallback: tuple[str, list[str], int] | None) -> str:
        out: list[str] = []
        if fallback is not None:
            out.append(fallback[0])
        if head is not None:
            out.append(head)
            out.extend(index_lines)
            if index_total > len(index_lines):
                out.append(f"… {index_total - len(index_lines)} more not shown")
        if fallback is not None:
            _, lines, total = fallback
            if head is not None:
                out.append("text matches (not indexed):")
            out.extend(lines if total else [f"no text matches for {name.rsplit('.', 1)[-1]!r}"])
            if total > len(lines):
                out.append(f"… {total - len(lines)} more text matches not shown; use grep with a glob to narrow")
        return _fit(out, self.max_chars, lambda n: f"… output cut at {self.max_chars} characters; {n} more lines "
                                                   "not shown")

    def find_symbol(self, name: str) -> str:
        """Where a function, class, method or module-level name is defined.

        Args:
            name: A bare name (`run`) or a dotted suffix of the qualified name (`Agent.run`, `loop.Agent.run`).
        """
        name = self._name_arg(name)
        unindexed = self._unindexed()
        fallback = self._text_fallback(name, unindexed) if unindexed or self.index is None else None
        if self.index is None:
            return self._listing(name, None, [], 0, fallback)
        defs = self.index.definitions(name)
        lines: list[str] = []
        for sym in defs[: self.max_results]:
            source = self.ws.lines(sym.file) or []
            text = source[sym.line - 1].strip() if 0 < sym.line <= len(source) else ""
            lines.append(f"{shown_path(sym.file)}:{sym.line}: {sym.kind} {sym.qualname}: {_clip(text, _MAX_LISTED_LINE)}")
        if defs:
            head = f"definitions of {name!r} (symbol index): {len(defs)}"
        else:
            head = (f"no definition of {name!r} in the symbol index ({len(self.index.files)} files); "
                    f"try find_references({name!r}) or grep")
        return self._listing(name, head, lines, len(defs), fallback)

    def find_references(self, name: str) -> str:
        """Where a name is used: calls, reads, attribute accesses, imports.

        Args:
            name: A bare name (`run`); a dotted one (`Agent.run`) is matched on its last segment, since
                receivers are not resolved.
        """
        name = self._name_arg(name)
        unindexed = self._unindexed()
        fallback = self._text_fallback(name, unindexed) if unindexed or self.index is None else None
        if self.index is None:
            return self._listing(name, None, [], 0, fallback)
        refs = self.index.references(name)
        lines = [f"{shown_path(r.file)}:{r.line}:{r.column}: {_clip(r.text, _MAX_LISTED_LINE)}"
                 for r in refs[: self.max_results]]
        last = name.rsplit(".", 1)[-1]
        how = "symbol index" if last == name else f"symbol index; last segment of {name!r}, receivers not resolved"
        head = (f"references to {last!r} ({how}): {len(refs)}" if refs else
                f"no references to {last!r} ({how}; {len(self.index.files)} files indexed)")
        return self._listing(name, head, lines, len(refs), fallback)
