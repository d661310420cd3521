"""Our own run ledger (`<output_dir>/runs/<id>/ledger.jsonl`): pydantic-ai message dumps.

A `request` event carries the whole history only on a unit's first turn; later turns carry the
messages new since the previous request (the previous response is in its `response` event).
So a ledger request is `partial`: append-only and prefix stability hold by construction there
and are not re-checked; pairing is checked between each response and the next request.
"""

from __future__ import annotations

from typing import Any

from harness_audit.trace.dialects._common import as_dict, as_int, as_list, as_str, call, message, preview
from harness_audit.trace.model import Message, Request, Response, ToolResult, Usage

_RESULT_KINDS = ("tool-return", "retry-prompt")


def _message(raw: Any) -> Message:
    m = as_dict(raw)
    parts = [as_dict(p) for p in as_list(m.get("parts"))]
    kinds = [as_str(p.get("part_kind")) for p in parts]
    text = "".join(as_str(p.get("content")) for p in parts if p.get("part_kind") in ("text", "user-prompt")
                   and isinstance(p.get("content"), str))
    if m.get("kind") == "response":
        calls = [call(p.get("tool_call_id"), p.get("tool_name"), p.get("args")) for p in parts
                 if p.get("part_kind") == "tool-call"]
        return message("assistant", m, text=text, calls=calls)
    results = [ToolResult(call_id=as_str(p.get("tool_call_id")), name=as_str(p.get("tool_name")),
                          preview=preview(p.get("content")))
               for p in parts if p.get("part_kind") in _RESULT_KINDS and p.get("tool_call_id")]
    if kinds and all(k == "system-prompt" for k in kinds):
        return message("system", m, text="".join(as_str(p.get("content")) for p in parts))
    human = "user-prompt" in kinds
    return message("tool" if results and not human else "user", m, text=text, results=results, human=human)


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
