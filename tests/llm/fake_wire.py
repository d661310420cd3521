"""A scripted JSON-over-HTTP server on 127.0.0.1 speaking the Anthropic Messages and Gemini wire formats.

`tests/llm/fake_openai.py` covers the OpenAI Chat Completions protocol in depth; this one answers the two
other protocols the engine speaks with just what a non-streamed turn needs. Each request is routed to a
script by the unit its first user message names (`Audit check C1 · …` is `C1`), and every request is kept
(path, headers, body) so a test can look at what went on the wire.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self, cast

JsonObject = dict[str, Any]

_UNIT = re.compile(r"^(Audit check (C\d+)|Recon)\b")


@dataclass(frozen=True, slots=True)
class Seen:
    """One request as the server received it."""

    path: str
    headers: dict[str, str]
    body: JsonObject
    unit: str


@dataclass(frozen=True, slots=True)
class Answer:
    """What the server sends: a status and a JSON body (any JSON value), or raw bytes when `raw` is set."""

    status: int
    body: Any
    raw: bytes | None = None


def _unit(text: str) -> str:
    m = _UNIT.match(text)
    if m is None:
        return "default"
    return m.group(2) or "recon"


def anthropic_unit(body: JsonObject) -> str:
    """The unit of an Anthropic Messages request: its first user message's text."""
    for message in body.get("messages", []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return _unit(content)
            for block in content or []:
                if block.get("type") == "text":
                    return _unit(block.get("text", ""))
    return "default"


def openai_unit(body: JsonObject) -> str:
    """The unit of an OpenAI Chat Completions request: its first user message's text."""
    for message in body.get("messages", []):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return _unit(content)
            for part in content or []:
                if isinstance(part, dict) and part.get("type") == "text":
                    return _unit(part.get("text", ""))
    return "default"


def gemini_unit(body: JsonObject) -> str:
    """The unit of a Gemini generateContent request: its first user content's text."""
    for content in body.get("contents", []):
        if content.get("role") == "user":
            for part in content.get("parts", []):
                if "text" in part:
                    return _unit(part["text"])
    return "default"


def anthropic_reply(*, text: str | None = None, calls: Sequence[tuple[str, str, JsonObject]] = (),
                    usage: tuple[int, int, int, int] = (100, 10, 0, 0)) -> Answer:
    """A Messages response: optional text, tool uses `(id, name, input)`, usage `(input, output, cache write,
    cache read)` in Anthropic's spelling (its `input_tokens` counts only the uncached, unwritten part)."""
    content: list[JsonObject] = [{"type": "text", "text": text}] if text is not None else []
    content += [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls]
    fresh, out, written, read = usage
    return Answer(200, {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test",
                        "content": content, "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
                        "usage": {"input_tokens": fresh, "output_tokens": out, "cache_creation_input_tokens": written,
                                  "cache_read_input_tokens": read}})


def gemini_reply(*, text: str | None = None, calls: Sequence[tuple[str, JsonObject]] = (),
                 usage: tuple[int, int, int] = (100, 10, 0)) -> Answer:
    """A generateContent response: optional text, function calls `(name, args)`, usage `(prompt, output,
    cached)` (Gemini's prompt count includes the cached tokens)."""
    parts: list[JsonObject] = [{"text": text}] if text is not None else []
    parts += [{"functionCall": {"name": n, "args": a}} for n, a in calls]
    prompt, out, cached = usage
    meta: JsonObject = {"promptTokenCount": prompt, "candidatesTokenCount": out, "totalTokenCount": prompt + out}
    if cached:
        meta["cachedContentTokenCount"] = cached
    return Answer(200, {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                                        "index": 0}], "usageMetadata": meta, "modelVersion": "gemini-test"})


def error(status: int, message: str = "overloaded") -> Answer:
    """An error answer in the shape both SDKs read."""
    return Answer(status, {"type": "error", "error": {"type": "overloaded_error", "message": message,
                                                        "code": status, "status": "UNAVAILABLE"}})


@dataclass
class _State:
    script: dict[str, list[Answer]]
    unit_of: Callable[[JsonObject], str]
    lock: threading.Lock = field(default_factory=threading.Lock)
    seen: list[Seen] = field(default_factory=list[Seen])
    served: dict[str, int] = field(default_factory=dict[str, int])


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the stdlib's parameter name
        """Quiet."""

    def do_POST(self) -> None:
        """Answer from the script of the request's unit; a unit past its script gets a 500."""
        state = cast(_Server, self.server).state
        self.close_connection = True
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        unit = state.unit_of(body)
        with state.lock:
            state.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body, unit))
            index = state.served.get(unit, 0)
            state.served[unit] = index + 1
            steps = state.script.get(unit, [])
        answer = steps[index] if index < len(steps) else error(500, f"script exhausted for {unit}")
        data = answer.raw if answer.raw is not None else json.dumps(answer.body).encode()
        self.send_response(answer.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-should-retry", "false")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, state: _State) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


class WireServer:
    """Serve `script` (unit -> answers, in order) for requests routed by `unit_of`."""

    def __init__(self, script: Mapping[str, Sequence[Answer]], unit_of: Callable[[JsonObject], str]) -> None:
        self._state = _State(script={k: list(v) for k, v in script.items()}, unit_of=unit_of)
        self._server = _Server(self._state)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(1.0)

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:PORT`."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def seen(self) -> list[Seen]:
        """Every request so far."""
        with self._state.lock:
            return list(self._state.seen)
