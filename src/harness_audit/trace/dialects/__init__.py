"""Provider dialects: tell model traffic from the rest, then normalise it into the event model."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any
from urllib.parse import urlparse

from harness_audit.trace.dialects import anthropic, gemini, ledger, openai_chat, openai_responses, otel
from harness_audit.trace.dialects._common import as_dict, as_list
from harness_audit.trace.model import Api, Exchange, Malformed, RawRecord, Request, Response, Source

_PARSERS: dict[Api, tuple[Callable[[dict[str, Any]], Request], Callable[[Any, int | None], Response]]] = {
    "openai-chat": (openai_chat.parse_request, openai_chat.parse_response),
    "openai-responses": (openai_responses.parse_request, openai_responses.parse_response),
    "anthropic": (anthropic.parse_request, anthropic.parse_response),
    "gemini": (gemini.parse_request, gemini.parse_response),
    "otel": (otel.parse_request, otel.parse_response),
    "ledger": (ledger.parse_request, ledger.parse_response),
}

_RESPONSE_GET = re.compile(r"/responses/[^/]+$")


def _api_from_url(url: str, method: str | None) -> Api | None:
    path = urlparse(url).path
    if ":generateContent" in path or ":streamGenerateContent" in path:
        return "gemini"
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses") or (_RESPONSE_GET.search(path) and (method or "GET").upper() == "GET"):
        return "openai-responses"
    if path.endswith("/messages"):
        return "anthropic"
    return None


_ANTHROPIC_BLOCKS = {"tool_use", "tool_result", "thinking", "redacted_thinking", "server_tool_use"}


def _api_from_body(body: dict[str, Any], response: Any) -> Api | None:
    if "contents" in body:
        return "gemini"
    if "messages" not in body and ("input" in body or "instructions" in body):
        return "openai-responses"
    if "messages" not in body:
        return None
    msgs = [as_dict(m) for m in as_list(body.get("messages"))]
    if any(m.get("role") in ("system", "developer", "tool", "function") or "tool_calls" in m for m in msgs):
        return "openai-chat"
    blocks = [as_dict(b) for m in msgs for b in as_list(m.get("content"))]
    tools = [as_dict(t) for t in as_list(body.get("tools"))]
    if ("system" in body or any(b.get("type") in _ANTHROPIC_BLOCKS for b in blocks)
            or any("input_schema" in t for t in tools)):
        return "anthropic"
    resp = as_dict(response)
    if resp.get("type") == "message" or "message_start" in str(response)[:200]:
        return "anthropic"
    return "openai-chat"


def detect(raw: RawRecord) -> Api | None:
    """The dialect of a record, or None when it is not model traffic (auth, telemetry, MCP, polling)."""
    if raw.api is not None:
        return raw.api
    if raw.url:
        return _api_from_url(raw.url, raw.method)
    if isinstance(raw.request, dict):
        return _api_from_body(raw.request, raw.response)  # pyright: ignore[reportUnknownArgumentType]
    return None


def normalise(raw: RawRecord) -> Exchange | Malformed | None:
    """The exchange of a record; None for non-model traffic; `Malformed` when a model body cannot be read."""
    api = detect(raw)
    if api is None:
        return None
    parse_request, parse_response = _PARSERS[api]
    is_get = (raw.method or "").upper() == "GET"
    if raw.request is None or is_get:
        if api != "openai-responses" or raw.response is None:
            return None
        # a background response fetched by id: it completes an earlier request, it is no request itself
        return Exchange(source=raw.source, request=None, response=parse_response(raw.response, raw.status),
                        session=raw.session)
    if not isinstance(raw.request, dict):
        return Malformed(source=raw.source, reason="the request body is not a JSON object")
    try:
        request = parse_request(raw.request)  # pyright: ignore[reportUnknownArgumentType]
        response = parse_response(raw.response, raw.status) if raw.response is not None or raw.status else None
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        return Malformed(source=raw.source, reason=f"a {api} body could not be read ({type(exc).__name__}: {exc})")
    if raw.extra.get("partial"):
        request = dataclasses.replace(request, partial=True)
    resp_source = raw.extra.get("response_source")
    return Exchange(source=raw.source, request=request, response=response, session=raw.session,
                    attempt=int(raw.extra.get("attempt", 1) or 1),
                    response_source=resp_source if isinstance(resp_source, Source) else None)


def normalise_record(raw: RawRecord) -> Exchange | Malformed | None:
    """`normalise`, with a record nested deeper than the interpreter can walk made `Malformed` (listed, skipped).

    A line parses as long as the JSON decoder's recursion stays under the limit; comparing or serialising it
    later, from deeper in the stack, may not: so every reader of records calls this, not `normalise`.
    """
    try:
        return normalise(raw)
    except RecursionError:
        return Malformed(source=raw.source, reason="JSON nested too deeply to read")
