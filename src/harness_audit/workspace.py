"""The audited tree: which files are first-party, symlink-safe path resolution, cached text."""

from __future__ import annotations

import bisect
import codecs
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, BinaryIO, Literal

from harness_audit.errors import UsageError, os_reason, path_error
from harness_audit.findings import Language, split_lines
from harness_audit.messages import Msg

if TYPE_CHECKING:
    import pathspec

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

DEFAULT_EXCLUDES: tuple[str, ...] = (
    ".git", ".hg", ".svn", ".venv", "venv", "virtualenv", ".tox", ".nox", "site-packages", "dist-packages",
    "node_modules", "bower_components", "vendor", "third_party", "dist", "build", "__pycache__",
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs", ".harness-audit", ".next", ".turbo", "coverage",
)
"""Directory names excluded by default, matched per path segment (never as substrings)."""

DEFAULT_MAX_FILE_BYTES = 2_000_000
"""Files larger than this are skipped and listed."""

LANGUAGE_BY_SUFFIX: dict[str, Language] = {
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
}

SkipReason = Literal["binary", "too-large", "undecodable", "unreadable", "outside-workspace", "excluded-target",
                     "minified", "credential-file", "special-file", "unreadable-directory", "undecodable-name"]

MINIFIED_MIN_BYTES = 20_000
MINIFIED_MEAN_LINE = 400
"""A TS/JS file of at least this many characters whose lines average more than this many characters is a minified or bundled
build output, not first-party source (written code averages 30–50): it is skipped and listed, as semgrep does."""


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A first-party source file in scope."""

    path: str
    """Canonical path relative to the root (POSIX)."""
    language: Language
    """Its language, from the suffix."""


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A source file that was left out, and why."""

    path: str
    """Relative path (POSIX)."""
    reason: SkipReason
    """Why it was skipped."""


@dataclass(frozen=True, slots=True)
class Discovery:
    """What discovery found."""

    files: tuple[SourceFile, ...]
    """Files in scope, sorted by path."""
    skipped: tuple[SkippedFile, ...]
    """Source files left out, sorted by path."""
    excluded_dirs: int
    """How many directories were pruned by `exclude_paths` or `.gitignore`."""


@dataclass(frozen=True, slots=True)
class Resolved:
    """The outcome of resolving a submitted path against the workspace."""

    status: Literal["ok", "not-found", "outside", "excluded", "credential"]
    """`ok`, or why the path is not usable (`credential`: see `credential_file`)."""
    path: str | None = None
    """Canonical relative path when inside the root."""
    detail: str = ""
    """Human detail for refusals (e.g. the excluded segment)."""


_CREDENTIAL_NAMES = frozenset({
    ".netrc", "_netrc", ".pgpass", ".npmrc", ".pypirc", ".htpasswd", ".git-credentials", ".boto", ".s3cfg",
    ".dockercfg", ".terraformrc", "credentials.tfrc.json", ".vault-token", "application_default_credentials.json",
    "accesstokens.json", "credentials.db", "credentials.json", "secrets.toml", "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519",
})
_CREDENTIAL_SUFFIXES = (".pem", ".key", ".crt", ".cer", ".der", ".p8", ".p12", ".pfx", ".keystore", ".jks", ".ppk",
                        ".gpg", ".pgp")
_CREDENTIAL_PREFIXES = ("client_secret", "service_account", "service-account")
_CREDENTIAL_DIRS = frozenset({".ssh", ".gnupg", ".aws", ".azure", ".kube", ".docker"})
_ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})


class ReadRefused(Exception):
    """A file the audit does not read: not a regular file, larger than allowed, or unreadable."""

    def __init__(self, reason: SkipReason, why: Msg) -> None:
        super().__init__(str(why))
        self.reason: SkipReason = reason
        """`special-file`, `too-large` or `unreadable`."""
        self.why = why
        """What it is or what went wrong, e.g. `a FIFO` or `Permission denied`, in the reader's language."""
        self.detail = str(why)
        """`why` in English (for a model's tool result, a log)."""


_KINDS = ((stat.S_ISFIFO, "err.kind.fifo"), (stat.S_ISCHR, "err.kind.char_device"),
          (stat.S_ISBLK, "err.kind.block_device"), (stat.S_ISSOCK, "err.kind.socket"),
          (stat.S_ISDIR, "err.kind.directory"))


def _kind(mode: int) -> Msg:
    return Msg(next((key for test, key in _KINDS if test(mode)), "err.kind.not_regular"))


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Open a regular file for reading; the one way audited files, traces and their evidence are opened.

    Anything else (a FIFO, a device such as `/dev/zero`, a socket, a directory, through a link or not) raises
    `ReadRefused("special-file")` before a byte is read: a FIFO could block forever, a device stream without
    end. The open itself never blocks (`O_NONBLOCK`) and the kind is checked again on the open descriptor, so a
    file swapped for a FIFO in between is refused too. Raises `ReadRefused("unreadable")` for an `OSError`.
    """
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise ReadRefused("special-file", _kind(mode))
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise ReadRefused("unreadable", os_reason(exc)) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ReadRefused("special-file", _kind(mode))
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes (`open_regular`); bounded by the bytes actually read.

    `st_size` is only a shortcut (a larger file is refused unread): a file that grows, or reports 0 like those
    of `/proc`, still stops at `limit + 1` bytes read. Raises `ReadRefused("too-large")` past the limit.
    """
    with open_regular(path) as fh:
        try:
            if os.fstat(fh.fileno()).st_size > limit:
                raise ReadRefused("too-large", Msg("err.reason.over_bytes", limit=limit))
            data = fh.read(limit + 1)
        except OSError as exc:
            raise ReadRefused("unreadable", os_reason(exc)) from None
    if len(data) > limit:
        raise ReadRefused("too-large", Msg("err.reason.over_bytes", limit=limit))
    return data



def _walk(top: str, onerror: Callable[[OSError], None]) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(top, onerror=…)`, top-down, links to directories listed but not entered, without recursion.

    Python 3.11's `os.walk` recurses once per level, so a tree a thousand directories deep raised
    `RecursionError`; this one keeps its own stack. Prune by editing the yielded `dirnames` in place.
    """
    stack = [top]
    while stack:
        current = stack.pop()
        dirnames: list[str] = []
        filenames: list[str] = []
        links: set[str] = set()
        try:
            with os.scandir(current) as entries:
                for entry in entries:
                    try:
                        is_dir = entry.is_dir()
                        if is_dir and entry.is_symlink():
                            links.add(entry.name)
                    except OSError:
                        is_dir = False
                    (dirnames if is_dir else filenames).append(entry.name)
        except OSError as exc:
            onerror(exc)
            continue
        yield current, dirnames, filenames
        stack.extend(os.path.join(current, d) for d in reversed(dirnames) if d not in links)


def _utf8(name: str) -> bool:
    """False for a name with bytes that are not UTF-8 (decoded by the OS layer as lone surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable_path(rel: str) -> str:
    """A path as it can be shown and written in any report: bytes that are not UTF-8 become `\\xNN`."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _valid_pattern(line: str) -> bool:
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, re.error):
        return False
    return True


def user_path(value: str | os.PathLike[str], what: Msg) -> Path:
    """A path the user gave, `~` and `~user` expanded; a `UsageError` naming it when `~user` names no one."""
    try:
        return Path(value).expanduser()
    except RuntimeError:  # pathlib's "Could not determine home directory"
        raise UsageError("err.path.no_home", path=str(value), what=what) from None


def user_path_mode(path: str | os.PathLike[str], what: Msg, missing: Msg) -> int:
    """`st_mode` of a path the user gave (`os.stat`, links followed): `UsageError(missing)` when it does not
    exist, `errors.path_error(what, …)` for any other OS error (too long, a NUL, a loop, no permission)."""
    try:
        return os.stat(path).st_mode
    except FileNotFoundError:
        raise UsageError(missing) from None
    except (OSError, ValueError) as exc:
        raise path_error(what, path, exc) from None


def credential_file(rel: str) -> bool:
    """Whether a workspace path names a file that may hold credentials: never read, never cited, never quoted.

    The one rule behind the gate's `out-of-scope-path` refusal, the read tools' refusal and discovery's
    `credential-file` skip: `.env` and `.env.*` (templates such as `.env.example` excepted), key and certificate
    files, `.netrc` and kin, cloud credential files, and anything under `.ssh`, `.aws`, `.kube`… (case-insensitive).
    """
    parts = PurePosixPath(rel.lower()).parts
    if not parts:
        return False
    name = parts[-1]
    if name in _CREDENTIAL_NAMES or name.endswith(_CREDENTIAL_SUFFIXES) or name.startswith(_CREDENTIAL_PREFIXES):
        return True
    if (name == ".env" or name.startswith(".env.")) and name not in _ENV_TEMPLATES:
        return True
    return any(part in _CREDENTIAL_DIRS for part in parts[:-1])


def excluded_segment(rel: str, excludes: Iterable[str]) -> str | None:
    """The first path segment of `rel` that is an excluded directory name, if any."""
    names = set(excludes)
    parts = PurePosixPath(rel).parts[:-1]
    return next((p for p in parts if p in names), None)


@dataclass(frozen=True, slots=True)
class LineWindow:
    """Some consecutive lines of a file, read without loading the file (see `Workspace.line_window`)."""

    first: int
    """1-based number of `lines[0]`."""
    lines: tuple[str, ...]
    """The lines, without line endings."""
    total: int
    """How many lines the whole file has."""


@dataclass(frozen=True, slots=True)
class _LineIndex:
    """A sparse index of a large file: where every ~1 MiB a line starts, its number, the total, the hash."""

    checkpoints: tuple[tuple[int, int], ...]
    """(number of line breaks before `offset`, `offset`), `offset` always at a line start."""
    total: int
    """Number of lines (as `split_lines` counts them)."""
    sha256: str
    """Hash of the file's bytes."""


_INDEX_CHUNK = 1 << 20


def _breaks(chunk: bytes) -> int:
    """Line breaks in `chunk` as `split_lines` counts them: \n, \r\n and a lone \r."""
    return chunk.count(b"\n") + chunk.count(b"\r") - chunk.count(b"\r\n")


@dataclass
class Workspace:
    """The audited root with its scope rules. Reads are cached; nothing is ever written."""

    root: Path
    """Absolute, symlink-resolved root."""
    excludes: tuple[str, ...] = DEFAULT_EXCLUDES
    """Directory names out of scope, matched per segment."""
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    """Larger files are skipped."""
    honour_gitignore: bool = True
    """Whether `.gitignore` files prune the tree."""
    _text: dict[str, str | None] = field(default_factory=dict[str, "str | None"], repr=False)
    _bytes_hash: dict[str, str] = field(default_factory=dict[str, str], repr=False)
    _lines: dict[str, list[str] | None] = field(default_factory=dict[str, "list[str] | None"], repr=False)
    _index: dict[str, _LineIndex | None] = field(default_factory=dict[str, "_LineIndex | None"], repr=False)
    _resolved: dict[str, Resolved] = field(default_factory=dict[str, "Resolved"], repr=False)
    _problems: dict[str, SkipReason] = field(default_factory=dict[str, "SkipReason"], repr=False)

    @classmethod
    def open(cls, root: str | os.PathLike[str], **kwargs: object) -> Workspace:
        """A workspace over `root`, which must be an existing directory."""
        real = Path(os.path.realpath(root))
        return cls(root=real, **kwargs)  # type: ignore[arg-type]  # pyright: kwargs are the dataclass fields

    # ---------------------------------------------------------------- discovery
    def discover(self, languages: Iterable[Language] | None = None) -> Discovery:
        """Walk the root once: first-party source files in scope, plus what was skipped and why.

        Nothing vanishes: a directory that cannot be listed, a name that is not UTF-8 (it could not be shown or
        cited) and a `.gitignore` that cannot be read are listed as skipped with the reason.
        """
        wanted = set(languages) if languages is not None else None
        excludes = set(self.excludes)
        files: list[SourceFile] = []
        skipped: list[SkippedFile] = []
        pruned = 0
        ignore_stack: list[tuple[str, pathspec.PathSpec]] = []

        def unlisted(err: OSError) -> None:
            rel = os.path.relpath(str(err.filename), self.root).replace(os.sep, "/")
            skipped.append(SkippedFile(printable_path("." if rel == "." else rel) + "/", "unreadable-directory"))

        for dirpath, dirnames, filenames in _walk(str(self.root), unlisted):
            rel_dir = os.path.relpath(dirpath, self.root)
            rel_dir = "" if rel_dir == "." else rel_dir.replace(os.sep, "/")
            while ignore_stack and not (rel_dir + "/").startswith(ignore_stack[-1][0]):
                ignore_stack.pop()
            if self.honour_gitignore and ".gitignore" in filenames:
                rel_ignore = f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"
                spec = self._read_gitignore(Path(dirpath) / ".gitignore", rel_ignore, skipped)
                if spec is not None:
                    ignore_stack.append((rel_dir + "/" if rel_dir else "", spec))
            keep: list[str] = []
            for d in sorted(dirnames):
                rel = f"{rel_dir}/{d}" if rel_dir else d
                if not _utf8(d):
                    skipped.append(SkippedFile(printable_path(rel) + "/", "undecodable-name"))
                    continue
                if d in excludes or self._ignored(rel + "/", ignore_stack):
                    pruned += 1
                    continue
                if os.path.islink(os.path.join(dirpath, d)):
                    continue  # never follow directory symlinks: they could loop or leave the root
                keep.append(d)
            dirnames[:] = keep
            for name in sorted(filenames):
                lang = LANGUAGE_BY_SUFFIX.get(os.path.splitext(name)[1])
                if lang is None or (wanted is not None and lang not in wanted):
                    continue
                rel = f"{rel_dir}/{name}" if rel_dir else name
                if not _utf8(name):
                    skipped.append(SkippedFile(printable_path(rel), "undecodable-name"))
                    continue
                if self._ignored(rel, ignore_stack):
                    continue
                reason = self._file_problem(rel, Path(dirpath) / name, lang)
                if reason is None:
                    files.append(SourceFile(rel, lang))
                else:
                    skipped.append(SkippedFile(rel, reason))
        files.sort(key=lambda f: f.path)
        skipped.sort(key=lambda s: s.path)
        return Discovery(tuple(files), tuple(skipped), pruned)

    def _read_gitignore(self, path: Path, rel: str, skipped: list[SkippedFile]) -> pathspec.PathSpec | None:
        try:
            data = read_regular(path, self.max_file_bytes)
        except ReadRefused as exc:
            skipped.append(SkippedFile(rel, exc.reason))
            return None
        lines = data.decode("utf-8", errors="replace").splitlines()
        import pathspec  # on demand: a tree without .gitignore files never needs it

        try:
            return pathspec.GitIgnoreSpec.from_lines(lines)
        except (ValueError, re.error):  # pathspec's GitIgnorePatternError, or a bracket range such as `[z-a]`
            # git ignores a line it cannot read as a pattern (a lone `\` or `!`) and keeps the others: so do we
            return pathspec.GitIgnoreSpec.from_lines([line for line in lines if _valid_pattern(line)])

    @staticmethod
    def _ignored(rel: str, stack: list[tuple[str, pathspec.PathSpec]]) -> bool:
        # Deepest .gitignore first: a nested file overrides its ancestors, as in git.
        for base, spec in reversed(stack):
            if not rel.startswith(base):
                continue
            result = spec.check_file(rel[len(base):])
            if result.include is not None:
                return bool(result.include)
        return False

    def _file_problem(self, rel: str, path: Path, lang: Language) -> SkipReason | None:
        if credential_file(rel):
            return "credential-file"
        if path.is_symlink():
            resolved = self.resolve(rel)
            if resolved.status == "outside":
                return "outside-workspace"
            if resolved.status == "excluded":
                return "excluded-target"
            if resolved.status == "credential":
                return "credential-file"
        text = self.text(rel)
        if text is None:
            return self.problem(rel) or "unreadable"
        if lang in ("typescript", "javascript") and len(text) >= MINIFIED_MIN_BYTES \
                and len(text) > MINIFIED_MEAN_LINE * (text.count("\n") + 1):
            return "minified"
        return None

    # ---------------------------------------------------------------- resolution
    def resolve(self, submitted: str) -> Resolved:
        """Canonicalise a submitted path: symlinks resolved BEFORE the containment and scope tests.

        A path found in scope is remembered, like the file's text: the gate resolves the same few files for
        hundreds of candidates. Anything else is resolved afresh each time.
        """
        known = self._resolved.get(submitted)
        if known is not None:
            return known
        resolved = self._resolve(submitted)
        if resolved.status == "ok":
            self._resolved[submitted] = resolved
        return resolved

    def _resolve(self, submitted: str) -> Resolved:
        raw = Path(submitted)
        candidate = raw if raw.is_absolute() else self.root / raw
        try:
            real = Path(os.path.realpath(candidate))
        except (OSError, ValueError):
            return Resolved("not-found")
        if not real.is_file():
            return Resolved("not-found")
        if not real.is_relative_to(self.root):
            return Resolved("outside", detail=str(submitted))
        rel = real.relative_to(self.root).as_posix()
        # the submitted spelling too: a link named `.env` to an innocent-looking file still reads as one
        if credential_file(rel) or credential_file(Path(submitted).as_posix()):
            return Resolved("credential", path=rel, detail=str(submitted))
        segment = excluded_segment(rel, self.excludes)
        if segment is not None:
            return Resolved("excluded", path=rel, detail=segment)
        return Resolved("ok", path=rel)

    # ---------------------------------------------------------------- reading
    def _read_bytes(self, rel: str) -> bytes | None:
        try:
            return read_regular(self.root / rel, self.max_file_bytes)
        except ReadRefused as exc:
            self._problems[rel] = exc.reason
            return None

    def text(self, rel: str) -> str | None:
        """The file's text (UTF-8, BOM stripped), or None if unreadable, binary or not UTF-8 (`problem` says which).

        Read once, through `read_regular`: a regular file of at most `max_file_bytes`. Cached.
        """
        if rel in self._text:
            return self._text[rel]
        data = self._read_bytes(rel)
        text: str | None = None
        if data is not None:
            if b"\0" in data[:8192]:
                self._problems[rel] = "binary"
            else:
                try:
                    text = data.decode("utf-8-sig")
                except UnicodeDecodeError:
                    self._problems[rel] = "undecodable"
            self._bytes_hash[rel] = hashlib.sha256(data).hexdigest()
        self._text[rel] = text
        return text

    def problem(self, rel: str) -> SkipReason | None:
        """Why `text(rel)` is None: `binary`, `undecodable`, `too-large`, `special-file` or `unreadable`."""
        return self._problems.get(rel)

    def sha256(self, rel: str) -> str | None:
        """Hash of the file's bytes as read for this audit."""
        if rel not in self._bytes_hash:
            self.text(rel)
        return self._bytes_hash.get(rel)

    def lines(self, rel: str) -> list[str] | None:
        """The file's lines without line endings, or None if it cannot be read as text."""
        if rel not in self._lines:
            text = self.text(rel)
            self._lines[rel] = None if text is None else split_lines(text)
        return self._lines[rel]


    def context(self, rel: str, line: int, radius: int = 2) -> str | None:
        """Lines `line-radius`..`line+radius` joined with newlines (clipped to the file), or None if unreadable."""
        window = self.line_window(rel, line - radius, line + radius)
        return None if window is None else "\n".join(window.lines)

    # ---------------------------------------------------------------- large files, a window at a time
    def _line_index(self, rel: str) -> _LineIndex | None:
        """One streaming pass over the file (bounded memory): checkpoints, line count, hash. Cached."""
        if rel in self._index:
            return self._index[rel]
        index: _LineIndex | None = None
        try:
            with open_regular(self.root / rel) as fh:
                digest = hashlib.sha256()
                checkpoints: list[tuple[int, int]] = [(0, 0)]
                breaks = 0
                offset = 0
                pending_cr = False
                last = b""
                head = True
                while chunk := fh.read(_INDEX_CHUNK):
                    if head and b"\0" in chunk[:8192]:
                        break  # binary: not text, as `text()` decides
                    head = False
                    digest.update(chunk)
                    n = _breaks(chunk)
                    if pending_cr and chunk.startswith(b"\n"):
                        n -= 1  # a \r\n split across two chunks is one break
                    at = chunk.rfind(b"\n")
                    if at >= 0:
                        before = _breaks(chunk[:at + 1]) - (1 if pending_cr and chunk.startswith(b"\n") else 0)
                        checkpoints.append((breaks + before, offset + at + 1))
                    breaks += n
                    pending_cr = chunk.endswith(b"\r")
                    offset += len(chunk)
                    last = chunk[-1:]
                else:
                    # a final line without a line ending still counts as a line
                    total = breaks + (1 if offset and last not in (b"\n", b"\r") else 0)
                    index = _LineIndex(checkpoints=tuple(checkpoints), total=total, sha256=digest.hexdigest())
                    self._bytes_hash[rel] = index.sha256
        except (OSError, ReadRefused):
            index = None
        self._index[rel] = index
        return index

    def line_window(self, rel: str, first: int, last: int) -> LineWindow | None:
        """Lines `first`..`last` (clipped to the file) without loading the whole file; None if it is not UTF-8 text.

        The first call builds a sparse index in one streaming pass (and hashes the file); each window then
        reads only from the nearest checkpoint. For traces of any size, where `lines()` would load everything.
        """
        index = self._line_index(rel)
        if index is None:
            return None
        first = max(first, 1)
        last = min(last, index.total)
        if last < first:
            return LineWindow(first=first, lines=(), total=index.total)
        pos = bisect.bisect_right(index.checkpoints, (first - 1, 1 << 62)) - 1
        number, offset = index.checkpoints[max(pos, 0)]
        number += 1  # the line starting at `offset`
        out: list[str] = []
        decoder = codecs.getincrementaldecoder("utf-8-sig" if offset == 0 else "utf-8")()
        carry = ""
        try:
            with open_regular(self.root / rel) as fh:
                fh.seek(offset)
                while number <= last:
                    chunk = fh.read(_INDEX_CHUNK)
                    text = carry + decoder.decode(chunk, final=not chunk)
                    hold = ""
                    if chunk and text.endswith("\r"):
                        text, hold = text[:-1], "\r"  # it may pair with a \n at the start of the next chunk
                    parts = _LINE_BREAK.split(text)
                    if chunk:
                        carry = parts.pop() + hold  # the last part may continue in the next chunk
                    else:
                        carry = ""
                        if parts and parts[-1] == "":
                            parts.pop()
                    for part in parts:
                        if first <= number <= last:
                            out.append(part)
                        number += 1
                        if number > last:
                            break
                    if not chunk:
                        break
        except (OSError, UnicodeDecodeError, ReadRefused):
            return None
        return LineWindow(first=first, lines=tuple(out), total=index.total)
