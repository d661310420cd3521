"""JSONL request/response logs: one exchange per line.

`{"request": <provider request body>, "response": <provider response body>?, "session": <id>?}`;
optional `url`, `method` and `status` help tell model traffic from the rest. A response may be a
recorded stream (the SSE text as a string). A line that is not JSON is listed and skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness_audit.trace.model import Malformed, RawRecord, Source
from harness_audit.trace.readers.lines import read_lines


def is_exchange(value: Any) -> bool:
    """Whether a parsed line has the shape of an exchange."""
    return isinstance(value, dict) and "request" in value


def _body(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def read(path: Path) -> Iterator[RawRecord | Malformed]:
    """Records of a JSONL log, with their line numbers and byte offsets."""
    for index, line in enumerate(read_lines(path)):
        source = Source(file=str(path), line=line.number, offset=line.offset, index=index)
        if line.error is not None:
            yield Malformed(source=source, reason=line.error)
            continue
        value = line.value
        if not is_exchange(value):
            yield RawRecord(source=source, request=None)  # not an exchange: ignored like other non-model traffic
            continue
        status = value.get("status")
        session = value.get("session")
        yield RawRecord(source=source, request=_body(value.get("request")), response=_body(value.get("response")),
                        status=status if isinstance(status, int) else None,
                        url=value.get("url") if isinstance(value.get("url"), str) else None,
                        method=value.get("method") if isinstance(value.get("method"), str) else None,
                        session=None if session is None else str(session))
