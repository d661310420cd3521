"""The one event model every trace format and provider dialect is normalised into.

A reader turns a file into `RawRecord`s (a provider request body, maybe a response body, where
it sits in the file); a dialect turns a raw record into an `Exchange` of one `Request` and one
`Response`, each made of `Message`s with their `ToolCall`s and `ToolResult`s, `Usage`, and the
truncation and retry facts the graders need. Nothing here imports a provider SDK.
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from typing import Any, Literal

Api = Literal["openai-chat", "openai-responses", "anthropic", "gemini", "otel", "ledger"]
"""The wire dialect of a request: pairing rules and usage meaning differ per dialect."""

Role = Literal["system", "user", "assistant", "tool"]

CACHE_MARKER_KEYS = frozenset({"cache_control", "prompt_cache_breakpoint"})
"""Keys that only place a cache breakpoint: moving one is how caching is used, never a history change."""


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def canonical(value: Any) -> bytes:
    """Canonical JSON bytes: sorted keys, no whitespace, UTF-8; cache-breakpoint markers left out."""
    text = _ENCODER.encode(value)
    if '"cache_control"' in text or '"prompt_cache_breakpoint"' in text:
        text = _ENCODER.encode(_strip_markers(value))  # rare: only then pay for the walk that drops the markers
    return text.encode("utf-8")


def _strip_markers(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_markers(v) for k, v in value.items() if k not in CACHE_MARKER_KEYS}  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_strip_markers(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    return value


def digest(data: bytes) -> bytes:
    """A 16-byte digest: what conversations keep instead of message bodies."""
    return hashlib.blake2b(data, digest_size=16).digest()


BLOCK = 64
"""Prefix comparison granularity inside one segment, in canonical bytes."""


BLOCK_DIGEST = 8
"""Bytes per block digest."""


def blocks(data: bytes) -> bytes:
    """8-byte digests of consecutive 64-byte blocks, concatenated (1/8 of the size): finds a common prefix."""
    return b"".join(hashlib.blake2b(data[i:i + BLOCK], digest_size=BLOCK_DIGEST).digest()
                    for i in range(0, len(data), BLOCK))


def field_digests(value: Any) -> tuple[tuple[str, bytes], ...]:
    """Digest per top-level field (list fields per element), in canonical order: names the first mutated field."""
    if not isinstance(value, dict):
        return (("value", digest(canonical(value))),)
    out: list[tuple[str, bytes]] = []
    for key in sorted(k for k in value if k not in CACHE_MARKER_KEYS):  # pyright: ignore[reportUnknownVariableType]
        item: Any = value[key]
        if isinstance(item, list):
            elems: list[Any] = item  # pyright: ignore[reportUnknownVariableType]
            out.append((sys.intern(f"{key}.length"), str(len(elems)).encode()))
            out += [(sys.intern(f"{key}[{i}]"), digest(canonical(e))) for i, e in enumerate(elems)]
        else:
            out.append((sys.intern(str(key)), digest(canonical(item))))
    return tuple(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """Where a record sits in its trace file."""

    file: str
    """Path of the trace file as the checker opened it."""
    line: int
    """1-based line where the record starts."""
    offset: int
    """Byte offset of that line's start."""
    index: int
    """0-based position of the record among the file's records (the interaction number)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RawRecord:
    """One record as a reader found it, before the dialect is known."""

    source: Source
    """Where it is."""
    request: Any
    """The provider request body (parsed JSON), or None for a response-only record."""
    response: Any = None
    """The response body: parsed JSON, or text (an SSE stream), or None when not recorded."""
    status: int | None = None
    """HTTP status of the response when recorded."""
    url: str | None = None
    """Request URL when recorded (HTTP recordings); used to tell model traffic from the rest."""
    method: str | None = None
    """HTTP method when recorded."""
    session: str | None = None
    """Explicit conversation id (JSONL `session`, OTel `gen_ai.conversation.id`, ledger unit)."""
    api: Api | None = None
    """Set by readers that know the dialect (OTel, ledger)."""
    message_lines: tuple[int, ...] = ()
    """1-based line of each request message, when the reader can map them (else empty)."""
    extra: dict[str, Any] = field(default_factory=dict[str, Any])
    """Reader-specific facts (e.g. the ledger's attempt number)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Malformed:
    """A record that could not be read; listed in the report, never fatal."""

    source: Source
    """Where it is."""
    reason: str
    """Why it was skipped."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """A tool call as the model made it (response) or as the harness sent it back (request history)."""

    call_id: str
    """The correlating id; empty when the wire carried none (Gemini, some compatible endpoints)."""
    name: str
    """Tool name."""
    arguments: str
    """Arguments as text (JSON string as sent; an object is serialised canonically)."""
    args_valid: bool
    """Whether `arguments` parses as JSON."""
    args_key: str
    """Canonical arguments (parsed and re-serialised when valid): identical calls compare equal."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """A tool result in the request history."""

    call_id: str
    """The id it answers; empty when the dialect pairs by position."""
    name: str = ""
    """Tool name when the wire carries it (Gemini)."""
    preview: str = ""
    """The first characters of the result text (to tell "not executed" answers from executions)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One message of a request history or a response, normalised."""

    role: Role
    """system, user, assistant or tool."""
    text: str = ""
    """Visible text joined (reasoning excluded)."""
    calls: tuple[ToolCall, ...] = ()
    """Tool calls in it (assistant)."""
    results: tuple[ToolResult, ...] = ()
    """Tool results in it (tool messages, Anthropic/Gemini user messages)."""
    human: bool = False
    """A user message with user-authored content (not only tool results)."""
    keys: frozenset[str] = frozenset()
    """Identity keys (call ids, long text hashes, signatures): tell a changed message from a different one."""
    canon: bytes = b""
    """Canonical serialisation of the message as sent (cache markers removed)."""
    raw: Any = None
    """The message as sent; lives only while its record is checked (summaries keep digests, not this)."""
    line: int | None = None
    """Line of the message in the file, when the reader knows it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token usage normalised across providers (None where the provider did not report a figure)."""

    input_total: int | None = None
    """All prompt tokens, cached or not."""
    cache_read: int | None = None
    """Prompt tokens served from the prefix cache."""
    cache_write: int | None = None
    """Prompt tokens written to the prefix cache."""
    output: int | None = None
    """Completion tokens."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Request:
    """A model request, normalised."""

    api: Api
    """Wire dialect."""
    model: str | None = None
    """Model name when present."""
    stream: bool = False
    """Whether a streamed response was asked for."""
    stream_usage: bool | None = None
    """OpenAI Chat: `stream_options.include_usage` (a stream without it carries no usage)."""
    tools: bytes = b""
    """Canonical tool definitions (part of the cached prefix)."""
    tool_names: tuple[str, ...] = ()
    """Tool names in order, for messages."""
    system: bytes = b""
    """Canonical system prompt / instructions (part of the cached prefix)."""
    messages: tuple[Message, ...] = ()
    """The history as sent."""
    previous_response_id: str | None = None
    """OpenAI Responses server-held history."""
    conversation: str | None = None
    """OpenAI Responses conversation id (server-held history)."""
    partial: bool = False
    """The record holds only the messages new since the previous request (our ledger), not the history."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Response:
    """A model response, normalised (streams reassembled)."""

    status: int | None = None
    """HTTP status when recorded."""
    response_id: str | None = None
    """Provider response id."""
    finish: str | None = None
    """Finish or stop reason as the provider spelled it."""
    truncated: bool = False
    """Cut off by the output-token limit (`length`, `max_tokens`, `MAX_TOKENS`, incomplete)."""
    message: Message | None = None
    """The assistant output."""
    usage: Usage | None = None
    """Reported usage; None when the response carries none."""
    error: str | None = None
    """Error message of a failed request."""
    pending: bool = False
    """A background response not finished yet (polled later)."""
    complete: bool = True
    """False for a stream that ended without its terminal event."""

    @property
    def ok(self) -> bool:
        """A usable model output: not an error, not pending, not a cut stream."""
        return self.error is None and not self.pending and self.complete and (self.status in (None, 200))

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        """The tool calls of the output."""
        return self.message.calls if self.message is not None else ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Exchange:
    """One request and its response (either may be absent), with where they are."""

    source: Source
    """The record."""
    request: Request | None
    """None for a response-only record (a background response polled with GET)."""
    response: Response | None
    """None when the trace did not record it."""
    session: str | None = None
    """Explicit conversation id."""
    attempt: int = 1
    """Attempt number when the trace records retries (our ledger)."""
    response_source: Source | None = None
    """Where the response is, when it is not in the request's record (our ledger)."""
