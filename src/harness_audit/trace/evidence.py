"""Quoting a record: the fragment of its line that a finding carries as evidence.

The fragment is copied from the file itself (never re-serialised), so the evidence gate finds it
on the cited line. A long JSONL line is quoted around the id the finding is about; a line that
alone is too thin to count as evidence (a lone `{`) is quoted together with the next lines.
"""

from __future__ import annotations

from pathlib import Path

from harness_audit.findings import evidence_is_thin, normalise_lines
from harness_audit.trace.model import Source
from harness_audit.workspace import ReadRefused, open_regular

_AROUND = 60
_HEAD = 160
_MAX_LINE = 64 * 1024 * 1024
_MAX_EXTRA_LINES = 3


class Quoter:
    """Reads fragments of one trace file's lines by byte offset (the file is never loaded whole)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __call__(self, source: Source, needle: str | None) -> str:
        """The evidence fragment of the record at `source`, around `needle` when it occurs on that line."""
        try:
            with open_regular(self.path) as fh:
                fh.seek(source.offset)
                first = fh.readline(_MAX_LINE)
                extra = [fh.readline(_MAX_LINE) for _ in range(_MAX_EXTRA_LINES)]
        except (OSError, ReadRefused):
            return ""
        try:
            text = first.decode("utf-8-sig" if source.offset == 0 else "utf-8").rstrip("\r\n")
        except UnicodeDecodeError:
            return ""
        if needle and needle in text:
            at = text.index(needle)
            fragment = text[max(0, at - _AROUND):at + len(needle) + _AROUND]
        else:
            fragment = text[:_HEAD]
        fragment = fragment.strip()
        lines = [fragment]
        if fragment != text.strip():
            return fragment  # a cut of a long line: the following lines do not continue it
        for raw in extra:
            if not evidence_is_thin(normalise_lines("\n".join(lines))):
                break
            try:
                more = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError:
                break
            if len(more) > _HEAD:
                more = more[:_HEAD]
            if more.strip():
                lines.append(more.rstrip())
        return "\n".join(lines)
