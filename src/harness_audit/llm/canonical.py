"""Our own, provider-neutral form of what a subagent sends and receives: what the ledger records.

The ledger never holds a library's internal dump: a new field in a dependency's message classes must
not change a recorded run, and a recorded run must replay whatever the library's version. Every
request and response crosses this module once, in both directions:

- `request_messages(messages)`: the messages of a request as canonical dicts, one per part, in order:
  `{"role": "system" | "user", "content": str}` or
  `{"role": "tool", "call_id": str, "name": str, "content": str}`.
- `response_message(response)`: a reply as `{"role": "assistant", "parts": [...]}`, its parts in order:
  `{"type": "text", "text": str}`, `{"type": "thinking", "text": str}` or
  `{"type": "tool-call", "id": str, "name": str, "arguments": {...}}` (`"arguments_raw": str` instead
  when the model sent arguments that are not a JSON object).
- `usage_of(usage)`: tokens as our `Usage` (input includes cache reads and writes, as providers bill).
- `messages_from` / `response_from`: the way back, for the replay model and for tests.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from typing import Any, Literal, cast

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from harness_audit.findings import Usage

__all__ = [
    "CanonicalMessage",
    "FinishReason",
    "call_arguments",
    "finish_reason_of",
    "messages_from",
    "request_messages",
    "response_from",
    "response_message",
    "usage_of",
]

CanonicalMessage = dict[str, Any]
"""One canonical message (see the module docstring for its shapes)."""

FinishReason = Literal["stop", "length", "tool-call", "content-filter", "error", "unknown"]
"""Why a reply ended, as we record it (a provider's own spelling is mapped once, here)."""

_FINISH: dict[str, FinishReason] = {"stop": "stop", "length": "length", "tool_call": "tool-call",
                                    "content_filter": "content-filter", "error": "error"}


def _text(content: object) -> str:
    """A prompt's content as text: a list (text and cache points) keeps its text items only."""
    if isinstance(content, str):
        return content
    if isinstance(content, Iterable):
        return "".join(item for item in cast(Iterable[object], content) if isinstance(item, str))
    return str(content)


def _arguments(args: object) -> dict[str, Any]:
    """A call's arguments: a JSON object as a dict; anything else kept verbatim under `arguments_raw`."""
    if args is None or args == "":
        return {"arguments": {}}
    if isinstance(args, dict):
        return {"arguments": cast(dict[str, Any], args)}
    if isinstance(args, str):
        try:
            parsed: object = json.loads(args)
        except ValueError:
            return {"arguments_raw": args}
        if isinstance(parsed, dict):
            return {"arguments": cast(dict[str, Any], parsed)}
        return {"arguments_raw": args}
    return {"arguments_raw": str(args)}


def call_arguments(args: object) -> dict[str, Any] | str:
    """A call's arguments as the ledger's `tool-call` event records them: the object, or the raw text."""
    form = _arguments(args)
    return form.get("arguments", form.get("arguments_raw", ""))


def request_messages(messages: Sequence[ModelMessage]) -> list[CanonicalMessage]:
    """The requests among `messages` in canonical form (responses are recorded by `response_message`)."""
    out: list[CanonicalMessage] = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            out.append(response_message(message))
            continue
        for part in message.parts:
            if isinstance(part, SystemPromptPart):
                out.append({"role": "system", "content": part.content})
            elif isinstance(part, UserPromptPart):
                out.append({"role": "user", "content": _text(part.content)})
            elif isinstance(part, ToolReturnPart):
                out.append({"role": "tool", "call_id": part.tool_call_id, "name": part.tool_name,
                            "content": _text(part.content)})
            else:  # the engine builds its requests from the three kinds above only
                out.append({"role": "other", "kind": str(getattr(part, "part_kind", type(part).__name__))})
    return out


def response_message(response: ModelResponse) -> CanonicalMessage:
    """A reply in canonical form; parts the engine never asks for are named, not dumped."""
    parts: list[dict[str, Any]] = []
    for part in response.parts:
        if isinstance(part, TextPart):
            parts.append({"type": "text", "text": part.content})
        elif isinstance(part, ThinkingPart):
            parts.append({"type": "thinking", "text": part.content})
        elif isinstance(part, ToolCallPart):
            parts.append({"type": "tool-call", "id": part.tool_call_id, "name": part.tool_name,
                          **_arguments(part.args)})
        else:
            parts.append({"type": "other", "kind": str(getattr(part, "part_kind", type(part).__name__))})
    return {"role": "assistant", "parts": parts}


def finish_reason_of(response: ModelResponse) -> FinishReason | None:
    """The reply's finish reason in our spelling; None when the provider gave none."""
    reason = response.finish_reason
    if reason is None:
        return None
    return _FINISH.get(str(reason), "unknown")


def usage_of(u: RequestUsage) -> Usage:
    """A response's usage as ours; a response without usage is `known=False`, never zero."""
    details = u.details or {}
    reasoning = details.get("reasoning_tokens", details.get("thinking_tokens", 0))
    return Usage(input_tokens=_count(u.input_tokens), output_tokens=_count(u.output_tokens),
                 cache_read_tokens=_count(u.cache_read_tokens), cache_write_tokens=_count(u.cache_write_tokens),
                 reasoning_tokens=_count(reasoning), requests=1, known=not u.unmeasured_requests)


def _count(value: object) -> int:
    """A token count a provider reported; anything but a non-negative integer counts as 0."""
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return max(value, 0)


# ---------------------------------------------------------------- the way back

def _call_part(part: dict[str, Any]) -> ToolCallPart:
    args: str | dict[str, Any] = part["arguments_raw"] if "arguments_raw" in part else dict(part.get("arguments", {}))
    return ToolCallPart(tool_name=str(part.get("name", "")), args=args, tool_call_id=str(part.get("id", "")))


def response_from(message: CanonicalMessage, *, usage: Usage | None = None, finish_reason: str | None = None,
                  model_name: str | None = None) -> ModelResponse:
    """A pydantic-ai response rebuilt from a canonical reply (what the replay model serves)."""
    parts: list[TextPart | ThinkingPart | ToolCallPart] = []
    for part in message.get("parts", []):
        kind = part.get("type")
        if kind == "text":
            parts.append(TextPart(content=str(part.get("text", ""))))
        elif kind == "thinking":
            parts.append(ThinkingPart(content=str(part.get("text", ""))))
        elif kind == "tool-call":
            parts.append(_call_part(part))
    u = usage or Usage(known=False)
    request_usage = RequestUsage(input_tokens=u.input_tokens, output_tokens=u.output_tokens,
                                 cache_read_tokens=u.cache_read_tokens, cache_write_tokens=u.cache_write_tokens,
                                 details={"reasoning_tokens": u.reasoning_tokens} if u.reasoning_tokens else {})
    if not u.known:
        request_usage = dataclasses.replace(request_usage, unmeasured_requests=1)
    reverse = {ours: theirs for theirs, ours in _FINISH.items()}
    return ModelResponse(parts=parts, usage=request_usage, model_name=model_name,
                         finish_reason=reverse.get(finish_reason or ""))  # type: ignore[arg-type]  # from our table


def messages_from(history: Sequence[CanonicalMessage]) -> list[ModelMessage]:
    """A pydantic-ai conversation rebuilt from canonical messages (consecutive request parts share a request)."""
    out: list[ModelMessage] = []
    pending: list[SystemPromptPart | UserPromptPart | ToolReturnPart] = []
    for m in history:
        role = m.get("role")
        if role == "assistant":
            if pending:
                out.append(ModelRequest(parts=pending))
                pending = []
            out.append(response_from(m))
        elif role == "system":
            pending.append(SystemPromptPart(content=str(m.get("content", ""))))
        elif role == "user":
            pending.append(UserPromptPart(content=str(m.get("content", ""))))
        elif role == "tool":
            pending.append(ToolReturnPart(tool_name=str(m.get("name", "")), content=str(m.get("content", "")),
                                          tool_call_id=str(m.get("call_id", ""))))
    if pending:
        out.append(ModelRequest(parts=pending))
    return out
