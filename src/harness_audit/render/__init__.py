"""Renderers (md, json, sarif, html) and the atomic, never-overwriting report writer."""

from __future__ import annotations

import os
import secrets
import tempfile
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from harness_audit.errors import path_error
from harness_audit.findings import CheckId
from harness_audit.messages import Msg
from harness_audit.render.html import render_html
from harness_audit.render.json_report import render_json
from harness_audit.render.markdown import render_markdown
from harness_audit.render.sarif import render_sarif
from harness_audit.report import Report

RENDERERS: dict[str, Callable[[Report], str]] = {"md": render_markdown, "json": render_json, "sarif": render_sarif,
                                                 "html": render_html}
"""Format name → renderer."""


def make_dirs(path: Path) -> None:
    """`mkdir -p` without recursion (pathlib's and `os.makedirs` recurse once per missing level: a path of
    thousands of segments would raise `RecursionError`). Raises `OSError` as `os.mkdir` does."""
    missing: list[Path] = []
    current = path
    while not current.is_dir():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory)
        except FileExistsError:
            if not directory.is_dir():
                raise


def prepare_output_dir(path: Path) -> Path:
    """Create the output directory and prove it writable before an audit starts; a `UsageError` naming the path
    (`errors.path_error`) when it is a file, a device, unwritable, too long, or not a path at all."""
    try:
        make_dirs(path)
        # as long a name as a report's (`report-2026-01-31_235959-C10-C11-C12-99.sarif`): a directory whose path
        # leaves no room for one is refused now, not after the audit
        fd, probe = tempfile.mkstemp(prefix=".harness-audit-probe-", suffix="-" * 16 + ".probe", dir=path)
        os.close(fd)
        os.unlink(probe)
    except (OSError, ValueError) as exc:
        raise path_error(Msg("what.output_dir"), path, exc) from None
    return path


def _create_temp(path: Path) -> tuple[int, str]:
    """A new, uniquely named temp file beside `path`, opened for writing: `(fd, name)`.

    Created with mode 0666 so the kernel applies the umask (and any default ACL) exactly as for a file any other
    program writes; `tempfile.mkstemp` creates 0600, which would leave reports unreadable to the group that
    shares the output directory (a CI artifact uploader, a web server). The exclusive create keeps the name ours.
    """
    for _ in range(100):
        tmp = str(path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0), 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temp name beside {path}")


def write_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` through a temp file in the same directory, fsync, then rename.

    The file gets the permissions a normal file gets (0666 less the umask).
    """
    make_dirs(path.parent)
    fd, tmp = _create_temp(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def scope_label(checks: Sequence[CheckId]) -> str:
    """`C1`, `C1-C9-C12`, or `Nchecks` for more than three."""
    if len(checks) <= 3:
        return "-".join(checks)
    return f"{len(checks)}checks"


def write_reports(report: Report, output_dir: Path, formats: Sequence[str], started: datetime) -> list[Path]:
    """Write one file per format; a second run in the same second gets a `-2`, `-3`… suffix, never overwrites."""
    make_dirs(output_dir)
    stem = f"report-{started.strftime('%Y-%m-%d_%H%M%S')}-{scope_label(report.meta.requested)}"
    suffix = 1
    while True:
        name = stem if suffix == 1 else f"{stem}-{suffix}"
        # claim the name with an exclusive create of the first format so two concurrent runs cannot collide
        first = output_dir / f"{name}.{formats[0]}"
        try:
            fd = os.open(first, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
        except FileExistsError:
            suffix += 1
            continue
        os.close(fd)
        if any((output_dir / f"{name}.{fmt}").exists() for fmt in formats[1:]):
            first.unlink(missing_ok=True)
            suffix += 1
            continue
        break
    paths: list[Path] = []
    for fmt in formats:
        path = output_dir / f"{name}.{fmt}"
        write_atomic(path, RENDERERS[fmt](report))
        paths.append(path)
        link_latest(path, output_dir / f"latest.{fmt}")
    return paths


def link_latest(target: Path, link: Path) -> None:
    """Point `latest.<fmt>` at the report just written (a relative symlink, swapped in atomically).

    Where symlinks are not allowed (some Windows setups) the report is copied instead; a failure here never loses
    the report itself, which is already written.
    """
    tmp = link.with_name(f".{link.name}.{os.getpid()}.tmp")
    try:
        tmp.unlink(missing_ok=True)
        os.symlink(target.name, tmp)
        os.replace(tmp, link)
    except OSError:
        tmp.unlink(missing_ok=True)
        try:
            write_atomic(link, target.read_text(encoding="utf-8"))
        except OSError:
            return
