"""Line-by-line reading of JSON Lines files, in bounded memory."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness_audit.workspace import open_regular

MAX_LINE_BYTES = 256 * 1024 * 1024
"""A longer line is reported as malformed and skipped without being held in memory."""

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Line:
    """One non-blank line: its number, byte offset and parsed value (or why it did not parse)."""

    number: int
    offset: int
    value: Any
    error: str | None


def read_lines(path: Path) -> Iterator[Line]:
    """Every non-blank line of a JSON Lines file, parsed; a bad line carries its error and never stops the read.

    Raises `workspace.ReadRefused` when `path` is not a regular file (a FIFO would never end).
    """
    with open_regular(path) as fh:
        number = 0
        offset = 0
        while True:
            raw = fh.readline(MAX_LINE_BYTES)
            if not raw:
                return
            number += 1
            start = offset
            offset += len(raw)
            if len(raw) == MAX_LINE_BYTES and not raw.endswith(b"\n"):
                while True:  # skip the rest of an oversized line
                    more = fh.readline(_CHUNK)
                    offset += len(more)
                    if not more or more.endswith(b"\n"):
                        break
                yield Line(number, start, None, f"line longer than {MAX_LINE_BYTES} bytes")
                continue
            if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            text = raw.strip()
            if not text:
                continue
            try:
                value = json.loads(text)
            except UnicodeDecodeError:
                yield Line(number, start, None, "not UTF-8 text")
                continue
            except RecursionError:
                yield Line(number, start, None, "JSON nested too deeply to read")
                continue
            except ValueError as exc:
                msg = getattr(exc, "msg", str(exc))
                yield Line(number, start, None, f"not valid JSON ({msg})")
                continue
            yield Line(number, start, value, None)
