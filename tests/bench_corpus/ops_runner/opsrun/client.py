"""Minimal streaming client for OpenAI-compatible /v1/chat/completions."""
from __future__ import annotations

import json
import logging
import random
import time
from dataclasses import dataclass, field

import httpx

log = logging.getLogger("opsrun.client")

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


class StreamProtocolError(RuntimeError):
    pass


@dataclass
class Completion:
    content: str
    tool_calls: list[dict]
    finish_reason: str | None
    usage: dict | None = None
    attempts: int = 1
    raw_frames: int = field(default=0, repr=False)


class _ToolCallAccumulator:
    """Tool-call deltas arrive in fragments keyed by their `index`."""

    def __init__(self) -> None:
        self._slots: dict[int, dict] = {}

    def feed(self, deltas: list[dict]) -> None:
        for d in deltas:
            slot = self._slots.setdefault(
                d["index"], {"id": None, "type": "function", "function": {"name": "", "arguments": ""}}
            )
            if d.get("id"):
                slot["id"] = d["id"]
            fn = d.get("function") or {}
            slot["function"]["name"] += fn.get("name") or ""
            slot["function"]["arguments"] += fn.get("arguments") or ""

    def calls(self) -> list[dict]:
        return [self._slots[i] for i in sorted(self._slots)]


class ChatClient:
    def __init__(self, base_url: str, api_key: str, model: str, *, max_attempts: int = 4):
        self.model = model
        self.max_attempts = max_attempts
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {api_key}"},
            timeout=httpx.Timeout(connect=10.0, read=120.0, write=30.0, pool=10.0),
        )

    def close(self) -> None:
        self._http.close()

    def stream_chat(self, messages: list[dict], tools: list[dict]) -> Completion:
        body = {
            "model": self.model,
            "messages": messages,
            "tools": tools,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        attempt = 0
        while True:
            attempt += 1
            try:
                with self._http.stream("POST", "/v1/chat/completions", json=body) as resp:
                    if resp.status_code >= 400:
                        resp.read()
                        resp.raise_for_status()
                    result = self._consume(resp)
                    result.attempts = attempt
                    return result
            except (httpx.TransportError, httpx.HTTPStatusError) as exc:
                retryable = isinstance(exc, httpx.TransportError) or exc.response.status_code in RETRYABLE_STATUS
                if not retryable or attempt >= self.max_attempts:
                    raise
                delay = min(30.0, 2.0**attempt) * (0.5 + random.random())
                log.warning("chat request failed (%s); attempt %d/%d, sleeping %.1fs",
                            exc, attempt, self.max_attempts, delay)
                time.sleep(delay)

    def _consume(self, resp: httpx.Response) -> Completion:
        parts: list[str] = []
        acc = _ToolCallAccumulator()
        finish, usage, frames = None, None, 0
        for line in resp.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            frames += 1
            try:
                chunk = json.loads(data)
            except json.JSONDecodeError as exc:
                raise StreamProtocolError(f"bad SSE frame {frames}: {data[:120]!r}") from exc
            if chunk.get("usage"):
                usage = chunk["usage"]
            for choice in chunk.get("choices") or []:
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    parts.append(delta["content"])
                if delta.get("tool_calls"):
                    acc.feed(delta["tool_calls"])
                if choice.get("finish_reason"):
                    finish = choice["finish_reason"]
        else:
            raise StreamProtocolError(f"stream closed after {frames} frames without [DONE]")
        return Completion("".join(parts), acc.calls(), finish, usage, raw_frames=frames)
