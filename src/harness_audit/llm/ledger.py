"""The run ledger: one JSON object per line, appended as things happen, never rewritten.

Each line is written with a single `os.write` on a file opened `O_APPEND`, so a crash can only
leave the LAST line torn; `read_ledger` detects that and drops it. A reader never trusts a
line it cannot parse as a whole object.
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness_audit.errors import UsageError, os_reason
from harness_audit.llm.events import parse_event

LEDGER_NAME = "ledger.jsonl"
LEDGER_VERSION = 2
"""2: requests and responses in our canonical form (`harness_audit.llm.canonical`); 1 held pydantic-ai dumps."""


class Ledger:
    """Append-only writer of a run's events."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._lock = threading.Lock()
        self._seq = _last_seq(path)

    def write(self, event: str, **data: Any) -> None:
        """Append one event; it must be valid against the ledger's schema (`harness_audit.llm.events`)."""
        with self._lock:
            self._seq += 1
            record = {"seq": self._seq, "t": round(time.time(), 3), "event": event, **data}
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
            # what we write is what `replay` will accept: a drift between writer and schema fails here, in tests
            parse_event(json.loads(line))
            os.write(self._fd, line.encode("utf-8"))

    def close(self) -> None:
        """Flush to disk and close; safe to call twice."""
        with self._lock:
            if self._fd >= 0:
                os.fsync(self._fd)
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True, slots=True)
class LedgerRead:
    """What a ledger holds."""

    events: list[dict[str, Any]]
    """Every complete event, in order."""
    numbers: list[int] = field(default_factory=list[int])
    """The 1-based line number of each event in `events`."""
    torn: bool = False
    """True when the last line was cut (a crash while writing); it is not in `events`."""
    skipped: list[int] = field(default_factory=list[int])
    """Line numbers of unreadable lines other than a torn last line."""

    def of(self, kind: str) -> list[dict[str, Any]]:
        """The events of one kind, in order."""
        return [e for e in self.events if e.get("event") == kind]


def read_ledger(path: Path) -> LedgerRead:
    """Read a ledger file, tolerating a torn last line. A missing file is a `UsageError`."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError("err.ledger.unreadable", path=str(path), reason=os_reason(exc)) from exc
    lines = raw.split(b"\n")
    torn = bool(lines and lines[-1])  # no final newline: the last write did not finish
    complete = lines[:-1]
    events: list[dict[str, Any]] = []
    numbers: list[int] = []
    skipped: list[int] = []
    for number, line in enumerate(complete, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: nesting deeper than the decoder's stack
            skipped.append(number)
            continue
        if isinstance(obj, dict):
            events.append(obj)
            numbers.append(number)
        else:
            skipped.append(number)
    return LedgerRead(events=events, numbers=numbers, torn=torn, skipped=skipped)


def _last_seq(path: Path) -> int:
    if not path.is_file() or path.stat().st_size == 0:
        return 0
    read = read_ledger(path)
    if read.torn:
        # close the torn line so the next event starts on a line of its own
        with path.open("ab") as fh:
            fh.write(b"\n")
    return max((int(e.get("seq", 0)) for e in read.events), default=0)
