"""Helpers shared by the provider dialects."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from typing import Any

from harness_audit.trace.model import Message, Role, ToolCall, ToolResult, canonical

_MIN_TEXT_KEY = 16
"""Texts at least this long identify a message across two requests (shorter ones repeat by chance)."""


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def as_list(value: Any) -> list[Any]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []  # pyright: ignore[reportUnknownVariableType]


def as_str(value: Any) -> str:
    """`value` when it is a string, else empty."""
    return value if isinstance(value, str) else ""


def as_int(value: Any) -> int | None:
    """`value` when it is an integer count, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def arguments(value: Any) -> tuple[str, bool, str]:
    """(text, valid JSON, canonical key) of tool-call arguments given as a JSON string or an object."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value, False, value
        return value, True, canonical(parsed).decode("utf-8")
    text = canonical({} if value is None else value).decode("utf-8")
    return text, True, text


def call(call_id: Any, name: Any, args: Any) -> ToolCall:
    """A normalised tool call."""
    text, valid, key = arguments(args)
    return ToolCall(call_id=as_str(call_id), name=as_str(name), arguments=text, args_valid=valid, args_key=key)


def preview(value: Any, limit: int = 200) -> str:
    """The first characters of a tool result's content, as text."""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, list):
        texts = [as_str(as_dict(v).get("text")) for v in value]  # pyright: ignore[reportUnknownVariableType]
        joined = "".join(texts)
        if joined:
            return joined[:limit]
    return canonical(value).decode("utf-8")[:limit]


def text_key(text: str) -> str | None:
    """An identity key for a long enough text."""
    stripped = text.strip()
    if len(stripped) < _MIN_TEXT_KEY:
        return None
    return "text:" + hashlib.blake2b(stripped.encode("utf-8"), digest_size=8).hexdigest()


def message(role: Role, raw: Any, *, text: str = "", calls: Iterable[ToolCall] = (),
            results: Iterable[ToolResult] = (), human: bool = False, keys: Iterable[str] = ()) -> Message:
    """A normalised message with its canonical form, field digests and identity keys."""
    calls_t = tuple(calls)
    results_t = tuple(results)
    all_keys = set(keys)
    all_keys.update(f"call:{c.call_id}" for c in calls_t if c.call_id)
    all_keys.update(f"result:{r.call_id}" for r in results_t if r.call_id)
    tk = text_key(text)
    if tk:
        all_keys.add(tk)
    return Message(role=role, text=text, calls=calls_t, results=results_t, human=human, keys=frozenset(all_keys),
                   canon=canonical(raw), raw=raw)


def signature_key(value: Any) -> str | None:
    """Identity key of an opaque reasoning signature."""
    if isinstance(value, str) and value:
        return "sig:" + hashlib.blake2b(value.encode("utf-8"), digest_size=8).hexdigest()
    return None


def sse_events(text: str) -> Iterator[tuple[str, str]]:
    """(event name, data) of each server-sent event in a recorded stream body."""
    event = ""
    data: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            if data:
                yield event, "\n".join(data)
            event, data = "", []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
    if data:
        yield event, "\n".join(data)


def sse_json(text: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The JSON objects of a recorded stream, with their event names; `[DONE]` yields ("done", {})."""
    for event, data in sse_events(text):
        if data.strip() == "[DONE]":
            yield "done", {}
            continue
        try:
            obj = json.loads(data)
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield event, obj  # pyright: ignore[reportUnknownArgumentType]


def looks_like_sse(value: Any) -> bool:
    """Whether a recorded response body is a server-sent-event stream."""
    return isinstance(value, str) and ("data:" in value[:4096])


def error_text(body: dict[str, Any]) -> str | None:
    """The error message of an error body, if it is one."""
    err = body.get("error")
    if isinstance(err, dict):
        return as_str(err.get("message")) or as_str(err.get("code")) or "error"  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(err, str) and err:
        return err
    if body.get("type") == "error":
        return as_str(as_dict(body.get("error")).get("message")) or "error"
    return None
