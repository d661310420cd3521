"""Google Gemini (`:generateContent`, `:streamGenerateContent?alt=sse`).

A `model` turn holds `functionCall` parts (usually without an id); the following `user` turns
answer with `functionResponse` parts, paired by count and position (then name), or by id when
both sides carry one. Each streamed chunk is a whole `GenerateContentResponse` fragment.
"""

from __future__ import annotations

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
from harness_audit.trace.model import Message, Request, Response, ToolResult, Usage, canonical


def _text(parts: list[dict[str, Any]]) -> str:
    return "".join(as_str(p.get("text")) for p in parts if "text" in p and not p.get("thought"))


def content_message(raw: Any) -> Message:
    """One `contents[]` entry."""
    c = as_dict(raw)
    parts = [as_dict(p) for p in as_list(c.get("parts"))]
    keys = [k for k in (signature_key(p.get("thoughtSignature")) for p in parts) if k]
    if as_str(c.get("role")) == "model":
        calls = [call(as_dict(p["functionCall"]).get("id"), as_dict(p["functionCall"]).get("name"),
                      as_dict(p["functionCall"]).get("args"))
                 for p in parts if "functionCall" in p]
        return message("assistant", c, text=_text(parts), calls=calls, keys=keys)
    results = [ToolResult(call_id=as_str(as_dict(p["functionResponse"]).get("id")),
                          name=as_str(as_dict(p["functionResponse"]).get("name")),
                          preview=preview(as_dict(p["functionResponse"]).get("response")))
               for p in parts if "functionResponse" in p]
    human = any("functionResponse" not in p for p in parts)
    return message("tool" if results and not human else "user", c, text=_text(parts), results=results, human=human,
                   keys=keys)


def parse_request(body: dict[str, Any]) -> Request:
    """A generateContent request body."""
    tools = as_list(body.get("tools"))
    names = tuple(as_str(as_dict(d).get("name")) for t in map(as_dict, tools)
                  for d in as_list(t.get("functionDeclarations") or t.get("function_declarations")))
    system = body.get("systemInstruction", body.get("system_instruction"))
    return Request(
        api="gemini", model=None, stream=False,
        tools=canonical(body.get("tools")) if "tools" in body else b"", tool_names=names,
        system=canonical(system) if system is not None else b"",
        messages=tuple(content_message(c) for c in as_list(body.get("contents"))),
    )


def usage(raw: Any) -> Usage | None:
    """Gemini usage metadata."""
    u = as_dict(raw)
    if not u:
        return None
    return Usage(input_total=as_int(u.get("promptTokenCount")), cache_read=as_int(u.get("cachedContentTokenCount")),
                 output=as_int(u.get("candidatesTokenCount")))


def response_of(b: dict[str, Any], status: int | None, *, complete: bool = True) -> Response:
    """A GenerateContentResponse."""
    err = error_text(b)
    if err is not None or (status is not None and status >= 400):
        return Response(status=status, error=err or f"HTTP {status}")
    cand = as_dict(next(iter(as_list(b.get("candidates"))), None))
    content = as_dict(cand.get("content"))
    out = content_message({**content, "role": "model"}) if cand else None
    finish = as_str(cand.get("finishReason")) or None
    return Response(status=status, response_id=as_str(b.get("responseId")) or None, finish=finish,
                    truncated=finish == "MAX_TOKENS", message=out, usage=usage(b.get("usageMetadata")),
                    complete=complete)


def parse_response(body: Any, status: int | None) -> Response:
    """A Gemini response: a JSON body (or a JSON array of chunks) or a recorded stream."""
    if isinstance(body, list):
        chunks = [as_dict(c) for c in body]  # pyright: ignore[reportUnknownVariableType]
    elif looks_like_sse(body):
        chunks = [c for _, c in sse_json(body) if c]
    else:
        return response_of(as_dict(body), status)
    parts: list[Any] = []
    finish: str | None = None
    meta: Any = None
    response_id: str | None = None
    for chunk in chunks:
        if chunk.get("error"):
            return Response(status=status, error=error_text(chunk) or "stream error")
        cand = as_dict(next(iter(as_list(chunk.get("candidates"))), None))
        parts += as_list(as_dict(cand.get("content")).get("parts"))
        finish = as_str(cand.get("finishReason")) or finish
        meta = chunk.get("usageMetadata") or meta
        response_id = response_id or as_str(chunk.get("responseId")) or None
    merged = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish}],
              "usageMetadata": meta, "responseId": response_id}
    return response_of(merged, status, complete=finish is not None)
