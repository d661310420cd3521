"""OpenAI Chat Completions (and compatible endpoints: DeepSeek, Groq, Gemini's OpenAI layer, vLLM…).

Calls are `message.tool_calls[]` with a JSON-string `function.arguments`; results are `role:"tool"`
messages that must follow the assistant message at once. Streams are reassembled from
`choices[i].delta` by choice index, then tool-call index (the id arrives only in the first fragment).
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
    sse_json,
)
from harness_audit.trace.model import Message, Request, Response, ToolCall, ToolResult, Usage, canonical


def content_text(content: Any) -> str:
    """Text of a Chat `content` (a string or a list of parts); `<think>` blocks are kept as written."""
    if isinstance(content, str):
        return content
    return "".join(as_str(as_dict(p).get("text")) for p in as_list(content))


def _calls(raw: dict[str, Any]) -> list[ToolCall]:
    out = [call(tc.get("id"), as_dict(tc.get("function")).get("name"), as_dict(tc.get("function")).get("arguments"))
           for tc in map(as_dict, as_list(raw.get("tool_calls")))]
    legacy = as_dict(raw.get("function_call"))
    if legacy:
        out.append(call("", legacy.get("name"), legacy.get("arguments")))
    return out


def request_message(raw: Any) -> Message:
    """One history message."""
    m = as_dict(raw)
    role = as_str(m.get("role"))
    text = content_text(m.get("content"))
    if role in ("system", "developer"):
        return message("system", m, text=text)
    if role == "assistant":
        return message("assistant", m, text=text, calls=_calls(m))
    if role == "tool":
        return message("tool", m, results=[ToolResult(call_id=as_str(m.get("tool_call_id")),
                                                      preview=preview(m.get("content")))])
    if role == "function":
        return message("tool", m, results=[ToolResult(call_id="", name=as_str(m.get("name")),
                                                      preview=preview(m.get("content")))])
    return message("user", m, text=text, human=True)


def parse_request(body: dict[str, Any]) -> Request:
    """A Chat Completions request body."""
    tools = as_list(body.get("tools"))
    stream = bool(body.get("stream"))
    options = as_dict(body.get("stream_options"))
    return Request(
        api="openai-chat", model=as_str(body.get("model")) or None, stream=stream,
        stream_usage=bool(options.get("include_usage")) if stream else None,
        tools=canonical(tools) if "tools" in body else b"",
        tool_names=tuple(as_str(as_dict(t.get("function")).get("name") or t.get("name")) for t in map(as_dict, tools)),
        messages=tuple(request_message(m) for m in as_list(body.get("messages"))),
    )


def usage(raw: Any) -> Usage | None:
    """Chat usage: `prompt_tokens` includes cached tokens (DeepSeek also reports hit/miss)."""
    u = as_dict(raw)
    if not u:
        return None
    details = as_dict(u.get("prompt_tokens_details"))
    cache_read = as_int(details.get("cached_tokens"))
    if cache_read is None:
        cache_read = as_int(u.get("prompt_cache_hit_tokens"))
    return Usage(input_total=as_int(u.get("prompt_tokens")), cache_read=cache_read,
                 cache_write=as_int(details.get("cache_write_tokens")), output=as_int(u.get("completion_tokens")))


def parse_response(body: Any, status: int | None) -> Response:
    """A Chat response: a JSON body or a recorded stream."""
    if looks_like_sse(body):
        return _parse_stream(body, status)
    b = as_dict(body)
    err = error_text(b)
    if err is not None or (status is not None and status >= 400):
        return Response(status=status, error=err or f"HTTP {status}")
    choice = as_dict(next(iter(as_list(b.get("choices"))), None))
    msg = as_dict(choice.get("message"))
    finish = as_str(choice.get("finish_reason")) or None
    out = message("assistant", msg, text=content_text(msg.get("content")), calls=_calls(msg)) if choice else None
    return Response(status=status, response_id=as_str(b.get("id")) or None, finish=finish,
                    truncated=finish == "length", message=out, usage=usage(b.get("usage")))


def _parse_stream(text: str, status: int | None) -> Response:
    content: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: str | None = None
    use: Usage | None = None
    response_id: str | None = None
    done = False
    for _, chunk in sse_json(text):
        if not chunk:
            done = True
            continue
        if chunk.get("error"):
            return Response(status=status, error=error_text(chunk) or "stream error")
        response_id = response_id or as_str(chunk.get("id")) or None
        if chunk.get("usage"):
            use = usage(chunk.get("usage"))
        for choice in map(as_dict, as_list(chunk.get("choices"))):
            if as_int(choice.get("index")) not in (None, 0):
                continue
            delta = as_dict(choice.get("delta"))
            if isinstance(delta.get("content"), str):
                content.append(delta["content"])
            for tc in map(as_dict, as_list(delta.get("tool_calls"))):
                index = as_int(tc.get("index"))
                slot = calls.setdefault(len(calls) if index is None else index, {"id": "", "name": "", "args": []})
                fn = as_dict(tc.get("function"))
                slot["id"] = slot["id"] or as_str(tc.get("id"))
                slot["name"] = slot["name"] or as_str(fn.get("name"))
                if isinstance(fn.get("arguments"), str):
                    slot["args"].append(fn["arguments"])
            if choice.get("finish_reason"):
                finish = as_str(choice.get("finish_reason"))
    tool_calls = [{"id": s["id"], "type": "function", "function": {"name": s["name"], "arguments": "".join(s["args"])}}
                  for _, s in sorted(calls.items())]
    raw = {"role": "assistant", "content": "".join(content) or None, **({"tool_calls": tool_calls} if tool_calls else {})}
    out = message("assistant", raw, text="".join(content), calls=_calls(raw))
    return Response(status=status, response_id=response_id, finish=finish, truncated=finish == "length", message=out,
                    usage=use, complete=done or finish is not None)
