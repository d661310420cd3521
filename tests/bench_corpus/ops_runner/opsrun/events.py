from __future__ import annotations

import json
import logging
import os
import time

log = logging.getLogger("opsrun.events")


class EventLog:
    """JSONL event stream, one object per line, append only."""

    def __init__(self, path: str):
        self.path = path
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self._fh = open(path, "a", encoding="utf-8")

    def emit(self, type_: str, **data) -> None:
        rec = {"t": round(time.time(), 3), "type": type_, **data}
        self._fh.write(json.dumps(rec, separators=(",", ":"), default=str) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()


def read_events(path: str) -> list[dict]:
    with open(path, "rb") as fh:
        raw = fh.read()
    lines = raw.split(b"\n")
    # a clean file ends with "\n", so the last piece is empty; anything else was cut off mid-write
    tail = lines.pop()
    if tail:
        log.warning("%s: dropping %d-byte partial record at end of file", path, len(tail))
    return [json.loads(line) for line in lines if line.strip()]
