"""Helpers for readers of whole-document formats (YAML, HAR, JSON): positions and line numbers."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


class LineIndex:
    """Maps character positions of a decoded document to 1-based lines and byte offsets of line starts."""

    def __init__(self, text: str, data: bytes) -> None:
        self._breaks = [m.start() for m in re.finditer("\n", text)]
        self._byte_starts = [0] + [m.end() for m in re.finditer(b"\n", data)]

    def line_of(self, pos: int) -> int:
        """1-based line of a character position."""
        return bisect.bisect_left(self._breaks, pos) + 1

    def offset_of(self, line: int) -> int:
        """Byte offset where a 1-based line starts."""
        return self._byte_starts[min(line, len(self._byte_starts)) - 1]


def skip_ws(text: str, pos: int) -> int:
    """Position of the next non-whitespace character."""
    m = _WS.match(text, pos)
    return m.end() if m else pos


def member(text: str, pos: int, key: str) -> int | None:
    """Start of the value of `key` in the JSON object that starts at `pos` (other values are skipped)."""
    pos = skip_ws(text, pos)
    if pos >= len(text) or text[pos] != "{":
        return None
    pos = skip_ws(text, pos + 1)
    while pos < len(text) and text[pos] != "}":
        name, pos = _DECODER.raw_decode(text, pos)
        pos = skip_ws(text, pos)
        pos = skip_ws(text, pos + 1)  # the colon
        if name == key:
            return pos
        _, pos = _DECODER.raw_decode(text, pos)
        pos = skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = skip_ws(text, pos + 1)
    return None


def elements(text: str, pos: int) -> Iterator[tuple[int, Any]]:
    """(start, value) of each element of the JSON array that starts at `pos`."""
    pos = skip_ws(text, pos)
    if pos >= len(text) or text[pos] != "[":
        return
    pos = skip_ws(text, pos + 1)
    while pos < len(text) and text[pos] != "]":
        start = pos
        value, pos = _DECODER.raw_decode(text, pos)
        yield start, value
        pos = skip_ws(text, pos)
        if pos < len(text) and text[pos] == ",":
            pos = skip_ws(text, pos + 1)


def path_elements(text: str, pos: int, path: tuple[str, ...]) -> Iterator[tuple[int, Any]]:
    """Elements reached by `path`: a key names an object member, `*` walks every element of an array."""
    if not path:
        yield pos, None
        return
    head, rest = path[0], path[1:]
    if head == "*":
        for start, value in elements(text, pos):
            if not rest:
                yield start, value
            else:
                yield from path_elements(text, start, rest)
        return
    found = member(text, pos, head)
    if found is not None:
        yield from path_elements(text, found, rest)


def decode(data: bytes) -> str:
    """UTF-8 text of a document (BOM dropped); raises `UnicodeDecodeError` for other encodings."""
    return data.decode("utf-8-sig")
