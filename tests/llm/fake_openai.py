"""A scripted OpenAI Chat Completions server on 127.0.0.1 for model-engine tests.

A real HTTP server (stdlib `ThreadingHTTPServer` in a daemon thread) that speaks enough of the Chat
Completions protocol for the official `openai` client and pydantic-ai's `OpenAIChatModel`: JSON replies,
SSE streams, tool calls, usage with cached and reasoning tokens, HTTP errors with `retry-after`, and hangs.

Each request is routed to a script by the first line of its first user message (see `script_key`); every
key has its own step pointer, so concurrent subagents each walk their own script::

    script = {
        "recon": [reply(tool_calls=[call("c1", "glob", {"pattern": "*.py"})], usage=usage(100, 20))],
        "C1": [error(429, retry_after=0.01), reply(text="nothing found", usage=usage(90, 3, reasoning=2))],
    }
    with ScriptedOpenAI(script) as server:
        ...  # point the engine at server.base_url
    assert not server.exhausted

Replies are deterministic: the completion id is `chatcmpl-<key>-<step>` and `created` is a fixed instant.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self, cast

__all__ = [
    "CREATED",
    "Hang",
    "HttpError",
    "JsonObject",
    "Received",
    "Reply",
    "ScriptStep",
    "ScriptedOpenAI",
    "Step",
    "ToolCall",
    "Usage",
    "call",
    "error",
    "hang",
    "reply",
    "script_key",
    "usage",
]

JsonObject = dict[str, Any]
"""A parsed JSON object, as the server receives and sends them."""

CREATED = 1_700_000_000
"""The `created` timestamp of every response and chunk: fixed, so recorded runs compare byte for byte."""

_CLOSE_TIMEOUT_S = 1.0
_POLL_INTERVAL_S = 0.02
_PIECES = 3
"""How many deltas a streamed text or tool-call argument string is split into."""

_CHECK_KEY = re.compile(r"Audit check (C\d+)\b")
_RECON_KEY = re.compile(r"Recon\b")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall:
    """One tool call in a scripted reply."""

    call_id: str
    """The `id` the model gives the call."""
    name: str
    """The tool's name."""
    arguments: str
    """The arguments exactly as sent on the wire (a JSON string, or anything else a test wants)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Usage:
    """Token usage of a scripted reply, sent in OpenAI's `usage` shape."""

    prompt: int
    """`prompt_tokens`, which includes the cached ones."""
    completion: int
    """`completion_tokens`, which includes the reasoning ones."""
    cached: int = 0
    """`prompt_tokens_details.cached_tokens`."""
    reasoning: int = 0
    """`completion_tokens_details.reasoning_tokens`."""

    def to_json(self) -> JsonObject:
        """The `usage` object of a response or of the last stream chunk."""
        return {
            "prompt_tokens": self.prompt,
            "completion_tokens": self.completion,
            "total_tokens": self.prompt + self.completion,
            "prompt_tokens_details": {"cached_tokens": self.cached},
            "completion_tokens_details": {"reasoning_tokens": self.reasoning},
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply:
    """A successful completion: text, tool calls, or both."""

    text: str | None
    """The message `content`; `None` sends `null`."""
    tool_calls: tuple[ToolCall, ...]
    """The message `tool_calls`, in order."""
    finish_reason: str
    """The choice's `finish_reason`, sent verbatim."""
    usage: Usage | None
    """The response `usage`; `None` sends no usage at all (not even in a stream)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpError:
    """An HTTP error status with a JSON body, sent before any stream opens."""

    status: int
    """The HTTP status code."""
    body: JsonObject
    """The JSON body, sent verbatim."""
    retry_after: float | None
    """Seconds for the `retry-after` (and `retry-after-ms`) header; `None` sends neither."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Hang:
    """Wait before answering; the wait ends early, without an answer, when the server closes."""

    seconds: float
    """How long to wait."""
    then: Reply | HttpError | None
    """What to send after the wait; `None` drops the connection without a response."""


Step = Reply | HttpError | Hang
"""What the server does with one request."""

ScriptStep = Step | Callable[[JsonObject], Step]
"""A script entry: a fixed step, or a function of the request body that picks one (to react to tool results)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Received:
    """A request the server received, in arrival order."""

    key: str
    """The script key it was routed to (see `script_key`)."""
    body: JsonObject
    """The parsed JSON request body."""
    step: int
    """The index of the script step that answered it; equal to the script's length when the script had run out."""
    stream: bool
    """Whether the request asked for a stream (`"stream": true`)."""


def reply(
    text: str | None = None,
    tool_calls: Sequence[ToolCall] = (),
    finish_reason: str | None = None,
    usage: Usage | None = None,
) -> Reply:
    """A completion with `text` and/or `tool_calls`.

    Args:
        text: The message content, or `None` for `null` content.
        tool_calls: The tool calls, built with `call`.
        finish_reason: Sent verbatim; defaults to `"tool_calls"` when there are calls, else `"stop"`.
        usage: The usage, built with `usage`; `None` means the response carries no usage field at all.
    """
    calls = tuple(tool_calls)
    reason = finish_reason if finish_reason is not None else ("tool_calls" if calls else "stop")
    return Reply(text=text, tool_calls=calls, finish_reason=reason, usage=usage)


def call(call_id: str, name: str, arguments: Mapping[str, object] | str) -> ToolCall:
    """A tool call; a mapping is sent as `json.dumps(arguments)`, a string verbatim (e.g. invalid JSON)."""
    wire = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(call_id=call_id, name=name, arguments=wire)


def usage(prompt: int, completion: int, cached: int = 0, reasoning: int = 0) -> Usage:
    """Usage with `prompt` input tokens (`cached` of them cache reads) and `completion` output tokens."""
    return Usage(prompt=prompt, completion=completion, cached=cached, reasoning=reasoning)


def error(status: int, body: Mapping[str, object] | str | None = None, retry_after: float | None = None) -> HttpError:
    """An HTTP error response; it consumes one step like any other.

    Args:
        status: The HTTP status, e.g. 429 or 503.
        body: A mapping sent verbatim as the JSON body, or a message for OpenAI's standard
            `{"error": {"message", "type", "param", "code"}}` envelope; `None` picks a message for the status.
        retry_after: Seconds for the `retry-after` and `retry-after-ms` headers. The `openai` client only honours
            a value above 0; at 0 or `None` it backs off on its own (about half a second before its first retry).
    """
    if isinstance(body, Mapping):
        payload: JsonObject = dict(body)
    else:
        payload = _error_body(status, body if body is not None else _default_message(status))
    return HttpError(status=status, body=payload, retry_after=retry_after)


def hang(seconds: float, then: Reply | HttpError | None = None) -> Hang:
    """Wait `seconds`, then send `then`; with `then=None` drop the connection without a response."""
    return Hang(seconds=seconds, then=then)


def script_key(body: Mapping[str, object]) -> str:
    """The script a request belongs to, from the first line of its first user message.

    `Audit check C<n> · …` gives `"C<n>"`, `Recon · …` gives `"recon"`, anything else `"default"`.
    """
    first_line = _first_user_text(body).split("\n", 1)[0].strip()
    if match := _CHECK_KEY.match(first_line):
        return match.group(1)
    if _RECON_KEY.match(first_line):
        return "recon"
    return "default"


def _first_user_text(body: Mapping[str, object]) -> str:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    for message in cast(list[object], messages):
        if not isinstance(message, dict):
            continue
        message_dict = cast(dict[str, object], message)
        if message_dict.get("role") != "user":
            continue
        content = message_dict.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            # Content parts: the text parts, in order, stand for the message.
            texts = [
                text
                for part in cast(list[object], content)
                if isinstance(part, dict) and isinstance(text := cast(dict[str, object], part).get("text"), str)
            ]
            return "".join(texts)
        return ""
    return ""


_ERROR_TYPES: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", None),
    404: ("invalid_request_error", None),
    429: ("requests", "rate_limit_exceeded"),
}


def _error_body(status: int, message: str) -> JsonObject:
    error_type, code = _ERROR_TYPES.get(status, ("server_error" if status >= 500 else "invalid_request_error", None))
    return {"error": {"message": message, "type": error_type, "param": None, "code": code}}


def _default_message(status: int) -> str:
    try:
        return f"scripted {status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"scripted {status}"


def _pieces(text: str) -> list[str]:
    """`text` split into up to `_PIECES` non-empty deltas."""
    if not text:
        return []
    size = max(1, -(-len(text) // _PIECES))
    return [text[i : i + size] for i in range(0, len(text), size)]


@dataclass
class _State:
    """What the handler threads share with the test thread; every field is guarded by `lock`."""

    script: dict[str, tuple[ScriptStep, ...]]
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopped: threading.Event = field(default_factory=threading.Event)
    pointers: dict[str, int] = field(default_factory=dict[str, int])
    received: list[Received] = field(default_factory=list[Received])
    exhausted: list[str] = field(default_factory=list[str])
    step_errors: list[str] = field(default_factory=list[str])
    active: int = 0
    idle: threading.Condition = field(init=False)

    def __post_init__(self) -> None:
        self.idle = threading.Condition(self.lock)

    def claim(self, key: str, body: JsonObject, stream: bool) -> tuple[int, ScriptStep | None]:
        """Record the request and advance `key`'s pointer; the step is `None` when the script has run out."""
        with self.lock:
            steps = self.script.get(key, ())
            index = self.pointers.get(key, 0)
            self.received.append(Received(key=key, body=body, step=index, stream=stream))
            if index >= len(steps):
                if key not in self.exhausted:
                    self.exhausted.append(key)
                return index, None
            self.pointers[key] = index + 1
            return index, steps[index]

    @contextmanager
    def tracking(self) -> Iterator[None]:
        """Count a handler as active while it runs, so closing can wait for it."""
        with self.lock:
            self.active += 1
        try:
            yield
        finally:
            with self.lock:
                self.active -= 1
                self.idle.notify_all()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Closing waits for handlers itself, with a deadline; the stdlib join has none.
    block_on_close = False

    def __init__(self, state: _State) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # A client that connects and never sends must not pin a thread forever.
    timeout = 10

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's parameter name
        """Stay quiet: pytest shows stderr of failing tests, and access lines are noise there."""

    def do_POST(self) -> None:
        """Answer one Chat Completions request from the script."""
        state = cast(_Server, self.server).state
        # One request per connection: no keep-alive thread outlives its answer, so closing is prompt.
        self.close_connection = True
        # A client that gave up (its timeout, a cancelled request) has nobody left to answer.
        with state.tracking(), suppress(BrokenPipeError, ConnectionResetError):
            self._answer(state)

    def _answer(self, state: _State) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
            self._send_json(404, _error_body(404, f"no route for {self.path!r}; only /chat/completions"))
            return
        try:
            parsed: object = json.loads(raw)
        except ValueError as exc:
            self._send_json(400, _error_body(400, f"request body is not JSON: {exc}"))
            return
        if not isinstance(parsed, dict):
            self._send_json(400, _error_body(400, "request body is not a JSON object"))
            return
        body = cast(JsonObject, parsed)
        key = script_key(body)
        stream = body.get("stream") is True
        index, entry = state.claim(key, body, stream)
        if entry is None:
            self._send_json(500, _error_body(500, f"script exhausted for key {key}"), should_retry=False)
            return
        try:
            step = entry(body) if callable(entry) else entry
        except Exception as exc:  # noqa: BLE001 - a broken test callback must fail the test, not the server
            message = f"script step {key}[{index}] raised {exc!r}"
            with state.lock:
                state.step_errors.append(message)
            self._send_json(500, _error_body(500, message), should_retry=False)
            return
        if isinstance(step, Hang):
            if state.stopped.wait(step.seconds) or step.then is None:
                return
            step = step.then
        if isinstance(step, HttpError):
            self._send_error(step)
        elif stream:
            self._send_stream(step, body, completion_id=f"chatcmpl-{key}-{index}")
        else:
            self._send_json(200, _completion(step, body, completion_id=f"chatcmpl-{key}-{index}"))

    def _send_json(self, status: int, payload: JsonObject, *, should_retry: bool | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if should_retry is not None:
            # The openai client obeys this header: a script problem is not worth a retry and its backoff.
            self.send_header("x-should-retry", "true" if should_retry else "false")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, step: HttpError) -> None:
        data = json.dumps(step.body).encode()
        self.send_response(step.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if step.retry_after is not None:
            self.send_header("retry-after", f"{step.retry_after:g}")
            self.send_header("retry-after-ms", f"{step.retry_after * 1000:g}")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, step: Reply, body: JsonObject, *, completion_id: str) -> None:
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and cast(dict[str, object], options).get("include_usage") is True
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        for chunk in _chunks(step, body, completion_id=completion_id, include_usage=include_usage):
            self._write_event(json.dumps(chunk))
        self._write_event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _write_event(self, data: str) -> None:
        event = f"data: {data}\n\n".encode()
        self.wfile.write(f"{len(event):X}\r\n".encode() + event + b"\r\n")
        self.wfile.flush()


def _model(body: JsonObject) -> str:
    model = body.get("model")
    return model if isinstance(model, str) else "unknown"


def _completion(step: Reply, body: JsonObject, *, completion_id: str) -> JsonObject:
    """A `chat.completion` object for a non-streamed reply."""
    message: JsonObject = {"role": "assistant", "content": step.text, "refusal": None}
    if step.tool_calls:
        message["tool_calls"] = [
            {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in step.tool_calls
        ]
    completion: JsonObject = {
        "id": completion_id,
        "object": "chat.completion",
        "created": CREATED,
        "model": _model(body),
        "choices": [{"index": 0, "message": message, "finish_reason": step.finish_reason, "logprobs": None}],
    }
    if step.usage is not None:
        completion["usage"] = step.usage.to_json()
    return completion


def _chunks(step: Reply, body: JsonObject, *, completion_id: str, include_usage: bool) -> Iterator[JsonObject]:
    """The `chat.completion.chunk` objects of a streamed reply, as OpenAI orders them."""

    def chunk(delta: JsonObject, finish_reason: str | None = None) -> JsonObject:
        out: JsonObject = {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": _model(body),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
        }
        if include_usage:
            # OpenAI sends `usage: null` on every chunk but the last when usage was asked for.
            out["usage"] = None
        return out

    yield chunk({"role": "assistant", "content": "" if step.text is not None else None, "refusal": None})
    for piece in _pieces(step.text or ""):
        yield chunk({"content": piece})
    for index, tool_call in enumerate(step.tool_calls):
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": tool_call.call_id,
                        "type": "function",
                        "function": {"name": tool_call.name, "arguments": ""},
                    }
                ]
            }
        )
        for piece in _pieces(tool_call.arguments):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield chunk({}, step.finish_reason)
    if include_usage and step.usage is not None:
        yield {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": _model(body),
            "choices": [],
            "usage": step.usage.to_json(),
        }


class ScriptedOpenAI:
    """An OpenAI-compatible Chat Completions server on 127.0.0.1 that answers from a script.

    Use it as a context manager; `__exit__` stops it within about a second, even while a `hang` is in progress
    (the hanging request is then dropped without a response).
    """

    def __init__(self, script: Mapping[str, Sequence[ScriptStep]]) -> None:
        """Serve `script`: for each key (see `script_key`), the steps that answer its requests in order."""
        self._state = _State(script={key: tuple(steps) for key, steps in script.items()})
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> Self:
        """Start serving on a free port."""
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop serving."""
        self.close()

    def start(self) -> None:
        """Bind a free port on 127.0.0.1 and serve from a daemon thread."""
        if self._server is not None:
            raise RuntimeError("`ScriptedOpenAI` is already started")
        self._server = _Server(self._state)
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": _POLL_INTERVAL_S},
            name="scripted-openai",
            daemon=True,
        )
        self._thread.start()

    def close(self) -> None:
        """Stop serving, wake any hanging request, and wait (about a second at most) for handlers to finish."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._state.stopped.set()
        server.shutdown()
        server.server_close()
        thread.join(_CLOSE_TIMEOUT_S)
        with self._state.idle:
            self._state.idle.wait_for(lambda: self._state.active == 0, timeout=_CLOSE_TIMEOUT_S)
        self._server = None
        self._thread = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL to hand to a client: `http://127.0.0.1:PORT/v1`."""
        if self._server is None:
            raise RuntimeError("`ScriptedOpenAI` is not started; use it as a context manager")
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def requests(self) -> list[Received]:
        """Every request received so far, in arrival order (a copy)."""
        with self._state.lock:
            return list(self._state.received)

    @property
    def exhausted(self) -> list[str]:
        """Keys that got a request after their script ran out (answered with HTTP 500), in first-seen order."""
        with self._state.lock:
            return list(self._state.exhausted)

    @property
    def unused(self) -> dict[str, int]:
        """Keys whose script still has steps left, with how many."""
        with self._state.lock:
            left = {key: len(steps) - self._state.pointers.get(key, 0) for key, steps in self._state.script.items()}
        return {key: count for key, count in left.items() if count > 0}

    @property
    def step_errors(self) -> list[str]:
        """Callable steps that raised (each answered with HTTP 500); a test should assert this is empty."""
        with self._state.lock:
            return list(self._state.step_errors)
