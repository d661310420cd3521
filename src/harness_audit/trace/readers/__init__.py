"""Trace readers: detect the format from content (or take `--format`), then yield records with their lines.

Formats: `jsonl` (request/response logs), `vcr` (VCR.py cassettes, YAML or JSON), `har`, `otel`
(OpenTelemetry GenAI spans, JSON or JSONL), `ledger` (harness-audit's own run ledgers), and two agent
trajectory formats that record less than the wire: `swe-agent` (`.traj`) and `openhands` (event streams).
JSON Lines formats stream; a whole-document format (YAML, HAR, a JSON document) is read at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any, Literal

from harness_audit.errors import UsageError, os_reason
from harness_audit.messages import Msg
from harness_audit.trace.model import Malformed, RawRecord
from harness_audit.trace.readers import agents, http, jsonl, ledger, otel
from harness_audit.trace.readers.lines import read_lines
from harness_audit.workspace import ReadRefused, open_regular

Format = Literal["jsonl", "vcr", "har", "otel", "ledger", "swe-agent", "openhands"]
FORMATS: tuple[Format, ...] = ("jsonl", "vcr", "har", "otel", "ledger", "swe-agent", "openhands")

_HEAD = 1 << 16
_PROBE_LINES = 50


class NotATrace(UsageError):
    """The file is not a trace in any supported format (exit 2)."""


def _line_kind(value: Any) -> Format | None:
    if jsonl.is_exchange(value):
        return "jsonl"
    if ledger.is_event(value):
        return "ledger"
    if otel.is_span(value) or otel.is_document(value):
        return "otel"
    return None


def _document_kind(value: Any) -> Format | None:
    if isinstance(value, dict):
        if isinstance(value.get("log"), dict) and "entries" in value["log"]:
            return "har"
        if "interactions" in value:
            return "vcr"
    if otel.is_document(value):
        return "otel"
    if agents.is_swe_agent(value):
        return "swe-agent"
    if agents.is_openhands(value):
        return "openhands"
    return None


def whole(path: Path) -> bytes:
    """All bytes of a trace file that is a regular file (`workspace.open_regular`); a `UsageError` otherwise."""
    try:
        with open_regular(path) as fh:
            return fh.read()
    except ReadRefused as exc:
        raise UsageError("err.trace.cannot_read", path=str(path), reason=exc.why) from None
    except OSError as exc:
        raise UsageError("err.trace.cannot_read", path=str(path), reason=os_reason(exc)) from None


def detect(path: Path) -> tuple[Format, bool]:
    """(format, is a whole JSON/YAML document) of a file; raises `NotATrace` with the reason.

    JSON is probed line by line, whole lines however long (a first record of megabytes is still a record),
    then as one document.
    """
    try:
        with open_regular(path) as fh:
            head = fh.read(_HEAD)
    except ReadRefused as exc:
        raise UsageError("err.trace.not_regular", path=str(path), reason=exc.why) from None
    except OSError as exc:
        raise UsageError("err.trace.cannot_read", path=str(path), reason=os_reason(exc)) from None
    name = str(path)
    what = Msg("err.trace.what")
    if b"\0" in head:
        raise NotATrace("err.trace.binary", name=name, what=what)
    if not head.strip():
        raise NotATrace("err.trace.empty", name=name, what=what)
    text = head.decode("utf-8-sig", errors="replace").lstrip()
    if text[:1] in "{[":
        kinds: list[Format] = []
        for line in islice(read_lines(path), _PROBE_LINES):
            value = line.value
            kind = _line_kind(value) if isinstance(value, dict) else None
            if kind is None and isinstance(value, (dict, list)):
                doc = _document_kind(value)
                if doc is not None:
                    return doc, True
            if kind is not None:
                kinds.append(kind)
        if kinds:
            return kinds[0], False
        try:
            value = json.loads(whole(path).decode("utf-8-sig"))
        except ValueError:
            raise NotATrace("err.trace.bad_json", name=name, what=what) from None
        except RecursionError:
            raise NotATrace("err.trace.json_too_deep", name=name, what=what) from None
        doc = _document_kind(value)
        if doc is None:
            raise NotATrace("err.trace.json_not_trace", name=name, what=what)
        return doc, True
    if "interactions:" in text:
        return "vcr", True
    raise NotATrace("err.trace.not_trace", name=name, what=what)


def read(path: Path, fmt: Format | None = None, *, name: str | None = None) -> Iterator[RawRecord | Malformed]:
    """The records of a trace file (format detected when `fmt` is None).

    A file that cannot be read as that format at all (not valid YAML, a whole JSON document that does not parse,
    nested too deeply) raises `NotATrace` naming it (`name`, default the path); a bad line or entry of a file
    that does read is a `Malformed` record.
    """
    shown = name if name is not None else str(path)
    fmt, document = _plan(path, fmt)
    try:
        yield from _records(path, fmt, document)
    except (ValueError, UnicodeDecodeError) as exc:  # NotATrace is a UsageError, not a ValueError: it passes
        raise NotATrace("err.trace.unreadable_as", name=shown, fmt=fmt,
                        detail=" ".join(str(exc).split())) from None
    except RecursionError:
        raise NotATrace("err.trace.too_deep_as", name=shown, fmt=fmt) from None


def _plan(path: Path, fmt: Format | None) -> tuple[Format, bool]:
    """(format, whole document) to read `path` as: detected, or forced by `fmt` (whatever the content says)."""
    if fmt is None:
        return detect(path)
    try:
        detected, document = detect(path)
    except NotATrace as exc:
        if exc.msg is not None and exc.msg.key in ("err.trace.binary", "err.trace.empty"):
            raise
        detected, document = fmt, fmt in ("vcr", "har", "swe-agent", "openhands")
    if detected != fmt:
        document = fmt in ("vcr", "har", "swe-agent", "openhands") or (fmt == "otel" and document)
    return fmt, document


def _records(path: Path, fmt: Format, document: bool) -> Iterator[RawRecord | Malformed]:
    if fmt == "jsonl":
        yield from jsonl.read(path)
    elif fmt == "ledger":
        yield from ledger.read(path)
    elif fmt == "otel":
        if document:
            yield from otel.read_document(path, whole(path))
        else:
            yield from otel.read_lines_(path)
    elif fmt == "swe-agent":
        yield from agents.read_swe_agent(path, whole(path))
    elif fmt == "openhands":
        yield from agents.read_openhands(path, whole(path))
    elif fmt == "har":
        yield from http.read_har(path, whole(path))
    elif fmt == "vcr":
        data = whole(path)
        if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] == b"{":
            yield from http.read_vcr_json(path, data)
        else:
            yield from http.read_vcr_yaml(path, data)
