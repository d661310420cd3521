"""Our own run ledger (`<output_dir>/runs/<id>/ledger.jsonl`): messages in our canonical form.

A `request` event carries the whole history only on a unit's first turn; later turns carry the
messages new since the previous request (the previous response is in its `response` event).
So a ledger request is `partial`: append-only and prefix stability hold by construction there
and are not re-checked; pairing is checked between each response and the next request. The
message shapes are those of `harness_audit.llm.canonical`.
"""

from __future__ import annotations

from typing import Any

from harness_audit.trace.dialects._common import as_dict, as_int, as_list, as_str, call, message, preview
from harness_audit.trace.model import Message, Request, Response, ToolResult, Usage


def _message(raw: Any) -> Message:
    m = as_dict(raw)
    role = m.get("role")
    if role == "assistant":
        parts = [as_dict(p) for p in as_list(m.get("parts"))]
        text = "".join(as_str(p.get("text")) for p in parts if p.get("type") == "text")
        calls = [call(p.get("id"), p.get("name"), p["arguments_raw"] if "arguments_raw" in p else p.get("arguments"))
                 for p in parts if p.get("type") == "tool-call"]
        return message("assistant", m, text=text, calls=calls)
    if role == "tool":
        result = ToolResult(call_id=as_str(m.get("call_id")), name=as_str(m.get("name")),
                            preview=preview(m.get("content")))
        return message("tool", m, results=[result] if result.call_id else [])
    if role == "system":
        return message("system", m, text=as_str(m.get("content")))
    return message("user", m, text=as_str(m.get("content")), human=True)


def parse_request(body: dict[str, Any]) -> Request:
    """A ledger `request` event (`partial` after a unit's first turn)."""
    return Request(api="ledger", messages=tuple(_message(m) for m in as_list(body.get("messages"))),
                   partial=bool(body.get("partial")))


def parse_response(body: Any, status: int | None) -> Response:
    """A ledger `response` event."""
    b = as_dict(body)
    if b.get("error"):
        return Response(status=status, error=as_str(b.get("error")) or "error")
    u = as_dict(b.get("usage"))
    use = None
    if u and u.get("known", True):
        use = Usage(input_total=as_int(u.get("input_tokens")), cache_read=as_int(u.get("cache_read_tokens")),
                    cache_write=as_int(u.get("cache_write_tokens")), output=as_int(u.get("output_tokens")))
    finish = as_str(b.get("finish_reason")) or None
    return Response(status=status, finish=finish, truncated=finish == "length",
                    message=_message(b.get("message")) if b.get("message") is not None else None, usage=use)
