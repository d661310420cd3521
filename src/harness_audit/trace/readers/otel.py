"""OpenTelemetry GenAI spans exported as JSON (OTLP `resourceSpans`, or a list of spans) or JSONL.

Inference spans (`gen_ai.operation.name` chat / generate_content / text_completion, or a span
name starting with one of them) carry the history in `gen_ai.input.messages` and the output in
`gen_ai.output.messages` (opt-in content capture); usage in `gen_ai.usage.*`;
`gen_ai.conversation.id` names the conversation. Other spans are ignored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness_audit.trace.model import Malformed, RawRecord, Source
from harness_audit.trace.readers._text import LineIndex, decode, path_elements
from harness_audit.trace.readers.lines import read_lines

_OPERATIONS = ("chat", "generate_content", "text_completion")


def _value(v: Any) -> Any:
    """An OTLP `AnyValue` as plain data."""
    if not isinstance(v, dict):
        return v
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in v:
            return v[key]
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError):
            return None
    if "arrayValue" in v:
        return [_value(x) for x in (v["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in v:
        return {kv.get("key"): _value(kv.get("value")) for kv in (v["kvlistValue"] or {}).get("values", [])}
    return None


def attributes(span: dict[str, Any]) -> dict[str, Any]:
    """Span attributes as a flat dict (OTLP key/value lists or an exporter's plain dict)."""
    attrs = span.get("attributes")
    if isinstance(attrs, dict):
        return attrs
    if isinstance(attrs, list):
        return {a.get("key"): _value(a.get("value")) for a in attrs if isinstance(a, dict)}
    return {}


def is_span(value: Any) -> bool:
    """Whether a parsed value looks like one span."""
    return isinstance(value, dict) and "attributes" in value and ("name" in value or "spanId" in value
                                                                   or "span_id" in value or "context" in value)


def is_document(value: Any) -> bool:
    """Whether a parsed JSON document holds spans."""
    if isinstance(value, dict):
        return "resourceSpans" in value
    return isinstance(value, list) and bool(value) and all(is_span(v) for v in value[:5])


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def _is_inference(span: dict[str, Any], attrs: dict[str, Any]) -> bool:
    op = attrs.get("gen_ai.operation.name")
    if isinstance(op, str):
        return op in _OPERATIONS
    name = str(span.get("name", ""))
    return name.split(" ")[0] in _OPERATIONS


def _start(span: dict[str, Any]) -> int:
    for key in ("startTimeUnixNano", "start_time_unix_nano"):
        try:
            return int(span.get(key) or 0)
        except (TypeError, ValueError):
            return 0
    return 0


def to_record(span: dict[str, Any], source: Source) -> RawRecord | Malformed:
    """The exchange of an inference span; a non-inference span becomes an ignored record."""
    attrs = attributes(span)
    if not _is_inference(span, attrs):
        return RawRecord(source=source, request=None)
    messages = _json(attrs.get("gen_ai.input.messages"))
    if not isinstance(messages, list):
        return RawRecord(source=source, request=None)  # content capture was off: nothing to check
    request = {"messages": messages, "system": _json(attrs.get("gen_ai.system_instructions")),
               "tools": _json(attrs.get("gen_ai.tool.definitions")), "model": attrs.get("gen_ai.request.model")}
    output = _json(attrs.get("gen_ai.output.messages"))
    status = span.get("status")
    error = None
    if isinstance(status, dict) and str(status.get("code", "")).upper() in ("2", "ERROR", "STATUS_CODE_ERROR"):
        error = str(status.get("message") or attrs.get("error.type") or "error")
    usage = {k[len("gen_ai.usage."):]: v for k, v in attrs.items() if isinstance(k, str) and k.startswith("gen_ai.usage.")}
    response = None
    if output is not None or error or usage:
        response = {"messages": output if isinstance(output, list) else [], "error": error, "usage": usage,
                    "finish_reasons": attrs.get("gen_ai.response.finish_reasons") or [],
                    "id": attrs.get("gen_ai.response.id")}
    session = attrs.get("gen_ai.conversation.id")
    return RawRecord(source=source, request=request, response=response, api="otel",
                     session=None if session is None else str(session))


def read_document(path: Path, data: bytes) -> Iterator[RawRecord | Malformed]:
    """Spans of a JSON document, in start-time order."""
    text = decode(data)
    index = LineIndex(text, data)
    root = json.loads(text)
    paths = [("resourceSpans", "*", "scopeSpans", "*", "spans", "*"),
             ("resourceSpans", "*", "instrumentationLibrarySpans", "*", "spans", "*")] if isinstance(root, dict) else [("*",)]
    found: list[tuple[int, int, dict[str, Any]]] = []
    for path_ in paths:
        for pos, value in path_elements(text, 0, path_):
            if isinstance(value, dict):
                found.append((_start(value), pos, value))
    found.sort(key=lambda t: (t[0], t[1]))
    for i, (_, pos, span) in enumerate(found):
        line = index.line_of(pos)
        yield to_record(span, Source(file=str(path), line=line, offset=index.offset_of(line), index=i))


def read_lines_(path: Path) -> Iterator[RawRecord | Malformed]:
    """Spans of a JSONL export, one per line, in file order."""
    for index, line in enumerate(read_lines(path)):
        source = Source(file=str(path), line=line.number, offset=line.offset, index=index)
        if line.error is not None:
            yield Malformed(source=source, reason=line.error)
        elif is_span(line.value):
            yield to_record(line.value, source)
        else:
            yield RawRecord(source=source, request=None)
