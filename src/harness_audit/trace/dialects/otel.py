"""OpenTelemetry GenAI messages (`gen_ai.input.messages` / `gen_ai.output.messages`).

The OTel reader hands over `{"messages", "system", "tools"}` for the request and
`{"messages", "finish_reasons", "usage", "id"}` for the response. Parts are `text`,
`tool_call{id,name,arguments}`, `tool_call_response{id,response|result}` and `reasoning`; calls and
results pair by id, results before the next assistant message.
"""

from __future__ import annotations

from typing import Any

from harness_audit.trace.dialects._common import as_dict, as_int, as_list, as_str, call, message, preview
from harness_audit.trace.model import Message, Request, Response, ToolResult, Usage, canonical


def _message(raw: Any) -> Message:
    m = as_dict(raw)
    parts = [as_dict(p) for p in as_list(m.get("parts"))]
    if not parts and isinstance(m.get("content"), str):
        parts = [{"type": "text", "content": m["content"]}]
    text = "".join(as_str(p.get("content")) for p in parts if p.get("type") == "text")
    role = as_str(m.get("role"))
    if role == "assistant":
        calls = [call(p.get("id"), p.get("name"), p.get("arguments")) for p in parts if p.get("type") == "tool_call"]
        return message("assistant", m, text=text, calls=calls)
    results = [ToolResult(call_id=as_str(p.get("id")), preview=preview(p.get("response", p.get("result"))))
               for p in parts if p.get("type") == "tool_call_response"]
    if role == "system":
        return message("system", m, text=text)
    human = any(p.get("type") != "tool_call_response" for p in parts)
    return message("tool" if results and not human else "user", m, text=text, results=results,
                   human=human and role == "user")


def parse_request(body: dict[str, Any]) -> Request:
    """The request half of an inference span."""
    tools = body.get("tools")
    return Request(api="otel", model=as_str(body.get("model")) or None,
                   tools=canonical(tools) if tools is not None else b"",
                   tool_names=tuple(as_str(as_dict(t).get("name")) for t in as_list(tools)),
                   system=canonical(body.get("system")) if body.get("system") is not None else b"",
                   messages=tuple(_message(m) for m in as_list(body.get("messages"))))


def parse_response(body: Any, status: int | None) -> Response:
    """The response half of an inference span."""
    b = as_dict(body)
    if b.get("error"):
        return Response(status=status, error=as_str(b.get("error")) or "error")
    out = [_message({**as_dict(m), "role": as_dict(m).get("role") or "assistant"}) for m in as_list(b.get("messages"))]
    assistant = next((m for m in out if m.role == "assistant"), None)
    reasons = [as_str(r) for r in as_list(b.get("finish_reasons"))]
    u = as_dict(b.get("usage"))
    use = None
    if u:
        use = Usage(input_total=as_int(u.get("input_tokens")), cache_read=as_int(u.get("cache_read.input_tokens")),
                    cache_write=as_int(u.get("cache_creation.input_tokens")), output=as_int(u.get("output_tokens")))
    return Response(status=status, response_id=as_str(b.get("id")) or None, finish=reasons[0] if reasons else None,
                    truncated=any(r in ("length", "max_tokens") for r in reasons), message=assistant, usage=use)
