"""OpenAI Responses API (`/v1/responses`), including Bedrock's and DeepSeek's copies.

History is a list of items. Consecutive model-side items (`reasoning`, assistant `message`,
`function_call`) are grouped into one assistant message; each `function_call_output` is a tool
message. Calls pair with outputs by `call_id` anywhere in the effective input, which includes
server-held history (`previous_response_id`, `conversation`): the checker resolves it.
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

_MODEL_SIDE = {"reasoning", "function_call", "custom_tool_call", "web_search_call", "file_search_call",
               "computer_call", "code_interpreter_call", "mcp_call", "image_generation_call", "local_shell_call"}


def _item_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(as_str(as_dict(p).get("text")) for p in as_list(content))


def _is_model_side(item: dict[str, Any]) -> bool:
    kind = as_str(item.get("type"))
    return kind in _MODEL_SIDE or (item.get("role") == "assistant")


def _assistant(items: list[dict[str, Any]]) -> Message:
    text = "".join(_item_text(i) for i in items if i.get("role") == "assistant" or i.get("type") == "message")
    calls = [call(i.get("call_id"), i.get("name"), i.get("arguments")) for i in items
             if i.get("type") in ("function_call", "custom_tool_call")]
    keys = [k for k in (signature_key(i.get("encrypted_content")) for i in items) if k]
    keys += [f"item:{as_str(i.get('id'))}" for i in items if as_str(i.get("id"))]
    return message("assistant", items, text=text, calls=calls, keys=keys)


def messages_of(items: list[Any]) -> tuple[Message, ...]:
    """Group input (or output) items into normalised messages."""
    out: list[Message] = []
    group: list[dict[str, Any]] = []
    for raw in items:
        item = as_dict(raw) if not isinstance(raw, str) else {"role": "user", "content": raw}
        if _is_model_side(item):
            group.append(item)
            continue
        if group:
            out.append(_assistant(group))
            group = []
        kind = as_str(item.get("type"))
        role = as_str(item.get("role"))
        if kind.endswith("_call_output") or kind == "function_call_output":
            out.append(message("tool", item, results=[ToolResult(call_id=as_str(item.get("call_id")),
                                                                 preview=preview(item.get("output")))]))
        elif role in ("system", "developer"):
            out.append(message("system", item, text=_item_text(item)))
        else:
            out.append(message("user", item, text=_item_text(item), human=role == "user"))
    if group:
        out.append(_assistant(group))
    return tuple(out)


def parse_request(body: dict[str, Any]) -> Request:
    """A Responses request body."""
    raw_input = body.get("input")
    items: list[Any] = [raw_input] if isinstance(raw_input, str) else as_list(raw_input)
    conv = body.get("conversation")
    conversation = as_str(conv) or as_str(as_dict(conv).get("id")) or None
    tools = as_list(body.get("tools"))
    return Request(
        api="openai-responses", model=as_str(body.get("model")) or None, stream=bool(body.get("stream")),
        tools=canonical(tools) if "tools" in body else b"",
        tool_names=tuple(as_str(t.get("name") or t.get("type")) for t in map(as_dict, tools)),
        system=canonical(body.get("instructions")) if body.get("instructions") is not None else b"",
        messages=messages_of(items),
        previous_response_id=as_str(body.get("previous_response_id")) or None, conversation=conversation,
    )


def usage(raw: Any) -> Usage | None:
    """Responses usage: `input_tokens` includes cached tokens."""
    u = as_dict(raw)
    if not u:
        return None
    details = as_dict(u.get("input_tokens_details"))
    return Usage(input_total=as_int(u.get("input_tokens")), cache_read=as_int(details.get("cached_tokens")),
                 cache_write=as_int(details.get("cache_write_tokens")), output=as_int(u.get("output_tokens")))


def response_of(b: dict[str, Any], status: int | None, *, complete: bool = True) -> Response:
    """A Responses response object."""
    err = error_text(b)
    state = as_str(b.get("status"))
    if err is not None or state == "failed" or (status is not None and status >= 400):
        return Response(status=status, response_id=as_str(b.get("id")) or None, error=err or f"status {state or status}")
    output = messages_of(as_list(b.get("output")))
    assistant = next((m for m in output if m.role == "assistant"), None)
    reason = as_str(as_dict(b.get("incomplete_details")).get("reason"))
    return Response(status=status, response_id=as_str(b.get("id")) or None, finish=reason or state or None,
                    truncated=state == "incomplete" and reason == "max_output_tokens", message=assistant,
                    usage=usage(b.get("usage")), pending=state in ("queued", "in_progress"), complete=complete)


def parse_response(body: Any, status: int | None) -> Response:
    """A Responses response: a JSON body or a recorded stream."""
    if not looks_like_sse(body):
        return response_of(as_dict(body), status)
    final: dict[str, Any] | None = None
    items: list[dict[str, Any]] = []
    for _, event in sse_json(body):
        kind = as_str(event.get("type"))
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            final = as_dict(event.get("response"))
        elif kind == "response.output_item.done":
            items.append(as_dict(event.get("item")))
        elif kind == "error":
            return Response(status=status, error=as_str(event.get("message")) or "stream error")
    if final is not None:
        if not as_list(final.get("output")) and items:
            final = {**final, "output": items}
        return response_of(final, status)
    return response_of({"output": items, "status": "incomplete"}, status, complete=False)
