"""Hostile family "workspaces": generated trees audited with the static engine.

Names with brackets, control and non-UTF-8 bytes; FIFOs, links to devices, outside the tree, dangling and in
loops; binary, non-UTF-8, BOM'd, NUL'd, deeply chained and enormous-line files; credential files; invalid
`.gitignore` lines; excluded directories; planted keys. Every run must end with a parseable report or a
one-line error, list every file it could not read, and show no key.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from harness_audit.workspace import DEFAULT_EXCLUDES, LANGUAGE_BY_SUFFIX, printable_path
from tests.hostile.runner import assert_sane, hostile_settings, record, run_cli
from tests.hostile.strategies import SECRETS, file_stem, nested, secret

FAMILY = "workspaces"
EXAMPLES = 260

HARNESS = '''import json


def run(client, messages, tools):
    while True:
        reply = client.chat.completions.create(model="m", messages=messages)
        for call in reply.choices[0].message.tool_calls or []:
            try:
                out = tools[call.function.name](**json.loads(call.function.arguments))
            except Exception:
                continue
            messages.append({{"role": "tool", "tool_call_id": call.id, "content": out}})
{extra}
'''


def _source(kind: str, key: str) -> tuple[bytes, bool]:
    """(content, unreadable): `unreadable` when discovery or the parser must list the file."""
    if kind == "harness":
        return HARNESS.format(extra=f'API_KEY = "{key}"').encode(), False
    if kind == "secret-assign":
        return f'OPENAI_API_KEY = "{key}"\nclient = make_client(api_key=OPENAI_API_KEY)\n'.encode(), False
    if kind == "binary":
        return b"\x00\x01\x02" + os.urandom(64), True
    if kind == "latin-1":
        return "x = 'caf\u00e9'\n".encode("latin-1"), True
    if kind == "utf-16":
        return "x = 1\n".encode("utf-16"), True
    if kind == "bom":
        return b"\xef\xbb\xbfx = 1\n", False
    if kind == "deep-calls":
        return ("x = f" + "()" * 1500 + "\n").encode(), True
    if kind == "deep-attrs":
        return ("x = a" + ".b" * 3000 + "\n").encode(), True
    if kind == "deep-elif":
        return ("if a:\n    pass\n" + "".join(f"elif a == {i}:\n    pass\n" for i in range(400))).encode(), True
    if kind == "nested-brackets":
        return ("x = " + nested(190) + "\n").encode(), False
    if kind == "long-line":
        return ("x = '" + "a" * 300_000 + "'\n").encode(), False
    if kind == "syntax-error":
        return b"def (:\n", True
    if kind == "markup":
        return b"# [/x] [bold]\nx = '[/z]'\n", False
    if kind == "crlf-cr":
        return b"x = 1\r\ny = 2\rz = 3\n", False
    return b"", False


KINDS = ["harness", "secret-assign", "binary", "latin-1", "utf-16", "bom", "deep-calls", "deep-attrs", "deep-elif",
         "nested-brackets", "long-line", "syntax-error", "markup", "crlf-cr", "empty"]
SPECIALS = ["fifo", "dev-zero", "dev-null", "outside", "dangling", "loop", "dir-loop", "credential"]


@dataclass
class Entry:
    """One generated thing in the tree."""

    parts: list[str]
    """Path segments below the root."""
    suffix: str
    """File suffix (a source language's, or something else)."""
    kind: str
    """What it is: a content kind of `_source`, or one of `SPECIALS`."""
    key: str = SECRETS[0]
    """The credential planted in it, if any."""


@dataclass
class Tree:
    """A generated workspace."""

    entries: list[Entry]
    gitignore: list[str] | None
    cache: bool
    expected: list[str] = field(default_factory=list[str])


entry = st.builds(
    Entry,
    parts=st.lists(st.one_of(file_stem, st.sampled_from(["node_modules", ".git", "src", "a", ".ssh", "vendor"])),
                   min_size=1, max_size=3),
    suffix=st.sampled_from([".py", ".py", ".ts", ".js", ".pyi", ".mjs", ".txt", ""]),
    kind=st.sampled_from(KINDS + SPECIALS),
    key=secret,
)
trees = st.builds(Tree, entries=st.lists(entry, min_size=1, max_size=6),
                  gitignore=st.none() | st.lists(st.sampled_from(["\\", "!", "*.js", "src/", "#x", "[", "**/a",
                                                                  "!*.py", " ", "\\ ", "a\\", "[z-a]"]),
                                                 max_size=4),
                  cache=st.booleans())


def _build(root: Path, tree: Tree, outside: Path) -> list[str]:
    """Write the tree; returns the paths (as a report shows them) that must be listed as skipped or unparsed."""
    expected: list[str] = []
    if tree.gitignore is not None:
        (root / ".gitignore").write_text("\n".join(tree.gitignore) + "\n", encoding="utf-8")
    for e in tree.entries:
        *dirs, stem = e.parts
        directory = root.joinpath(*dirs)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue  # a file of an earlier entry is in the way
        path = directory / (stem + e.suffix)
        if os.path.lexists(path):
            continue
        rel = "/".join([*dirs, stem + e.suffix])
        special = e.kind in SPECIALS
        try:
            if e.kind == "fifo":
                os.mkfifo(path)
            elif e.kind == "dev-zero":
                path.symlink_to("/dev/zero")
            elif e.kind == "dev-null":
                path.symlink_to("/dev/null")
            elif e.kind == "outside":
                path.symlink_to(outside)
            elif e.kind == "dangling":
                path.symlink_to(directory / "missing-target")
            elif e.kind == "loop":
                path.symlink_to(path)
            elif e.kind == "dir-loop":
                path.symlink_to(directory)
            elif e.kind == "credential":
                (directory / ".env").write_text(f"OPENAI_API_KEY={e.key}\n", encoding="utf-8")
                path.write_text(f"KEY = '{e.key}'\n", encoding="utf-8")
            else:
                content, unreadable = _source(e.kind, e.key)
                path.write_bytes(content)
                special = unreadable
        except OSError:
            continue
        if tree.gitignore is not None or any(part in DEFAULT_EXCLUDES for part in dirs):
            continue  # pruned on purpose: nothing below is listed
        bad_dir = next((i for i, part in enumerate(dirs) if not _utf8(part)), None)
        if bad_dir is not None:
            expected.append(printable_path("/".join(dirs[: bad_dir + 1])) + "/")  # never entered: listed whole
            continue
        if LANGUAGE_BY_SUFFIX.get(e.suffix) is None:
            continue  # not a source file: discovery never looks at it
        if not _utf8(rel) or (special and e.kind not in ("dir-loop", "credential")):
            expected.append(printable_path(rel))
    return sorted(set(expected))


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@hostile_settings(EXAMPLES)
@given(tree=trees)
def test_any_workspace_ends_with_a_report_that_lists_what_it_skipped(tree: Tree) -> None:
    record(FAMILY)
    base = Path(tempfile.mkdtemp(prefix="ws-"))
    try:
        root = base / "ws"
        root.mkdir()
        outside = base / "outside.py"
        outside.write_text("SECRET_OUTSIDE = compute_secret(1)\n", encoding="utf-8")
        expected = _build(root, tree, outside)
        args = [str(root), "all", "-q", "--allow-empty", "--output-dir", str(base / "out")]
        if not tree.cache:
            args.append("--no-cache")
        run = run_cli(args, timeout_s=60)
        assert_sane(run, unreadable=expected, secrets=SECRETS, family=FAMILY)
    finally:
        shutil.rmtree(base, ignore_errors=True)
