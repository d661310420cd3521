"""Our own ledgers (`ledger.jsonl`): request and response events per unit, paired here.

Each unit (recon, C1, …) is one conversation. A request's first attempt on a unit's first turn
carries the whole history; every later request carries only the new messages (`partial`).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness_audit.trace.model import Malformed, RawRecord, Source
from harness_audit.trace.readers.lines import read_lines


def is_event(value: Any) -> bool:
    """Whether a parsed line is a ledger event."""
    return isinstance(value, dict) and "event" in value and "seq" in value


def read(path: Path) -> Iterator[RawRecord | Malformed]:
    """Request/response pairs of a ledger, each at its request event's line."""
    pending: dict[str, tuple[Source, dict[str, Any]]] = {}
    started: set[str] = set()
    index = 0

    def record(unit: str, response: dict[str, Any] | None, resp_source: Source | None,
               error: str | None = None) -> RawRecord:
        source, event = pending.pop(unit)
        attempt = event.get("attempt") if isinstance(event.get("attempt"), int) else 1
        partial = unit in started or attempt > 1
        started.add(unit)
        body = {"messages": event.get("messages") or [], "partial": partial}
        resp: Any = response
        if error is not None:
            resp = {"error": error}
        return RawRecord(source=source, request=body, response=resp, status=None, session=unit, api="ledger",
                         extra={"attempt": attempt, "response_source": resp_source})

    for line in read_lines(path):
        source = Source(file=str(path), line=line.number, offset=line.offset, index=index)
        index += 1
        if line.error is not None:
            yield Malformed(source=source, reason=line.error)
            continue
        event = line.value
        if not is_event(event):
            yield Malformed(source=source, reason="not a ledger event (no `event`/`seq`)")
            continue
        kind = event.get("event")
        unit = str(event.get("unit", ""))
        if kind == "request":
            if unit in pending:
                yield record(unit, None, None)
            pending[unit] = (source, event)
        elif kind == "response" and unit in pending:
            yield record(unit, event, source)
        elif kind == "request-error" and unit in pending:
            yield record(unit, None, source, error=str(event.get("error") or event.get("failure") or "error"))
        elif kind == "unit-end" and unit in pending:
            yield record(unit, None, None)
    for unit in list(pending):
        yield record(unit, None, None)
