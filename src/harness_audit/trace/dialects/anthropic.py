"""Anthropic Messages (`/v1/messages`).

Calls are `tool_use` blocks with an object `input`; the NEXT user message must begin with the
matching `tool_result` blocks. Server tools (`server_tool_use` with their `*_tool_result`) pair
inside one assistant message and are not client calls. Streams are reassembled from
`content_block_start/delta/stop` (`input_json_delta` fragments) and `message_start/delta` usage.
"""

from __future__ import annotations

import json
from typing import Any

from harness_audit.trace.dialects._common import (
    as_dict,
    as_int,
    as_list,
    as_str,
    call,
    error_text,
    looks_like_sse,
    message,
    preview,
    signature_key,
    sse_json,
)
from harness_audit.trace.model import Message, Request, Response, ToolCall, ToolResult, Usage, canonical


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [as_dict(b) for b in as_list(content)]


def request_message(raw: Any) -> Message:
    """One history message."""
    m = as_dict(raw)
    blocks = _blocks(m.get("content"))
    text = "".join(as_str(b.get("text")) for b in blocks if b.get("type") == "text")
    if as_str(m.get("role")) == "assistant":
        calls = [call(b.get("id"), b.get("name"), b.get("input")) for b in blocks if b.get("type") == "tool_use"]
        keys = [k for k in (signature_key(b.get("signature")) for b in blocks) if k]
        return message("assistant", m, text=text, calls=calls, keys=keys)
    results = [ToolResult(call_id=as_str(b.get("tool_use_id")), preview=preview(b.get("content")))
               for b in blocks if b.get("type") == "tool_result"]
    human = any(b.get("type") != "tool_result" for b in blocks)
    return message("tool" if results and not human else "user", m, text=text, results=results, human=human)


def parse_request(body: dict[str, Any]) -> Request:
    """A Messages request body."""
    tools = as_list(body.get("tools"))
    return Request(
        api="anthropic", model=as_str(body.get("model")) or None, stream=bool(body.get("stream")),
        tools=canonical(tools) if "tools" in body else b"",
        tool_names=tuple(as_str(t.get("name")) for t in map(as_dict, tools)),
        system=canonical(body.get("system")) if body.get("system") is not None else b"",
        messages=tuple(request_message(m) for m in as_list(body.get("messages"))),
    )


def usage(raw: Any) -> Usage | None:
    """Anthropic usage: `input_tokens` counts only the uncached tail; the prompt is the sum of three."""
    u = as_dict(raw)
    if not u:
        return None
    fresh, read, write = (as_int(u.get(k)) for k in ("input_tokens", "cache_read_input_tokens",
                                                     "cache_creation_input_tokens"))
    total = None if fresh is None else fresh + (read or 0) + (write or 0)
    return Usage(input_total=total, cache_read=read, cache_write=write, output=as_int(u.get("output_tokens")))


def _calls(blocks: list[dict[str, Any]]) -> list[ToolCall]:
    return [call(b.get("id"), b.get("name"), b.get("input")) for b in blocks if b.get("type") == "tool_use"]


def response_of(b: dict[str, Any], status: int | None, *, complete: bool = True) -> Response:
    """A Messages response object."""
    err = error_text(b)
    if err is not None or (status is not None and status >= 400):
        return Response(status=status, error=err or f"HTTP {status}")
    blocks = _blocks(b.get("content"))
    text = "".join(as_str(x.get("text")) for x in blocks if x.get("type") == "text")
    keys = [k for k in (signature_key(x.get("signature")) for x in blocks) if k]
    out = message("assistant", {"role": "assistant", "content": blocks}, text=text, calls=_calls(blocks), keys=keys)
    stop = as_str(b.get("stop_reason")) or None
    return Response(status=status, response_id=as_str(b.get("id")) or None, finish=stop,
                    truncated=stop == "max_tokens", message=out, usage=usage(b.get("usage")), complete=complete)


def parse_response(body: Any, status: int | None) -> Response:
    """A Messages response: a JSON body or a recorded stream."""
    if not looks_like_sse(body):
        return response_of(as_dict(body), status)
    msg: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, list[str]] = {}
    use: dict[str, Any] = {}
    done = False
    for _, event in sse_json(body):
        kind = as_str(event.get("type"))
        if kind == "message_start":
            msg = as_dict(event.get("message"))
            use.update(as_dict(msg.get("usage")))
        elif kind == "content_block_start":
            index = as_int(event.get("index")) or 0
            blocks[index] = dict(as_dict(event.get("content_block")))
        elif kind == "content_block_delta":
            index = as_int(event.get("index")) or 0
            delta = as_dict(event.get("delta"))
            block = blocks.setdefault(index, {"type": "text", "text": ""})
            dtype = as_str(delta.get("type"))
            if dtype == "text_delta":
                block["text"] = as_str(block.get("text")) + as_str(delta.get("text"))
            elif dtype == "thinking_delta":
                block["thinking"] = as_str(block.get("thinking")) + as_str(delta.get("thinking"))
            elif dtype == "signature_delta":
                block["signature"] = as_str(block.get("signature")) + as_str(delta.get("signature"))
            elif dtype == "input_json_delta":
                partial.setdefault(index, []).append(as_str(delta.get("partial_json")))
        elif kind == "message_delta":
            msg["stop_reason"] = as_dict(event.get("delta")).get("stop_reason")
            use.update({k: v for k, v in as_dict(event.get("usage")).items() if v is not None})
        elif kind == "message_stop":
            done = True
        elif kind == "error":
            return Response(status=status, error=error_text(event) or "stream error")
    for index, parts in partial.items():
        joined = "".join(parts)
        try:
            blocks[index]["input"] = json.loads(joined) if joined else {}
        except ValueError:
            blocks[index]["input"] = joined  # kept as text: the graders see arguments that do not parse
    body_obj = {**msg, "content": [blocks[i] for i in sorted(blocks)], "usage": use or None}
    return response_of(body_obj, status, complete=done)
