"""Minimal OpenAI-compatible chat-completions client speaking SSE over httpx."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import httpx

BASE_URL = os.environ.get("LLM_BASE_URL", "https://api.openai.com/v1")
API_KEY = os.environ.get("LLM_API_KEY", "")


@dataclass
class Completion:
    text: str = ""
    tool_calls: list[dict] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict | None = None


async def _sse_lines(resp: httpx.Response):
    async for line in resp.aiter_lines():
        if not line or line.startswith(":"):
            continue
        if line.startswith("data:"):
            yield line[5:].strip()


async def stream_chat(client: httpx.AsyncClient, model: str, messages: list[dict], tools: list[dict]) -> Completion:
    body = {"model": model, "messages": messages, "tools": tools, "stream": True}
    out = Completion()
    async with client.stream(
        "POST",
        f"{BASE_URL}/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {API_KEY}"},
    ) as resp:
        resp.raise_for_status()
        async for data in _sse_lines(resp):
            if data == "[DONE]":
                break
            chunk = json.loads(data)
            if chunk.get("usage"):
                out.usage = chunk["usage"]
            if not chunk.get("choices"):
                continue
            choice = chunk["choices"][0]
            delta = choice.get("delta", {})
            if delta.get("content"):
                out.text += delta["content"]
            for tc in delta.get("tool_calls") or []:
                idx = tc["index"]
                if idx >= len(out.tool_calls):
                    out.tool_calls.append({"id": "", "type": "function", "function": {"name": "", "arguments": ""}})
                slot = out.tool_calls[idx]
                slot["id"] = tc.get("id") or slot["id"]
                fn = tc.get("function", {})
                slot["function"]["name"] += fn.get("name") or ""
                slot["function"]["arguments"] += fn.get("arguments") or ""
            if choice.get("finish_reason"):
                out.finish_reason = choice["finish_reason"]
    return out
