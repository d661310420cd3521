"""Agent loop: stream a completion, run tools concurrently, loop."""
from __future__ import annotations

import asyncio
import json
import time
import uuid

import httpx

from .stream import stream_chat
from .tools import run_tool, tool_defs
from .transcript import Transcript

SYSTEM = "You are a terminal agent. Think briefly, then act with tools. Stop when the task is done."
KEEP_RECENT = 12
COMPACT_AT = 40


async def _summarise(client: httpx.AsyncClient, model: str, older: list[dict]) -> str:
    prompt = "Summarise this agent transcript for your own later reference:\n" + json.dumps(older)[:60_000]
    done = await stream_chat(client, model, [{"role": "user", "content": prompt}], [])
    return done.text


async def _compact(client: httpx.AsyncClient, model: str, messages: list[dict]) -> list[dict]:
    if len(messages) < COMPACT_AT:
        return messages
    cut = len(messages) - KEEP_RECENT
    summary = await _summarise(client, model, messages[1:cut])
    return [messages[0], {"role": "user", "content": f"[Earlier work, summarised]\n{summary}"}] + messages[cut:]


async def _run_calls(calls: list[dict], log: Transcript) -> list[dict]:
    results: dict[str, str] = {}

    async def one(call: dict) -> None:
        args = json.loads(call["function"]["arguments"] or "{}")
        results[call["id"]] = await run_tool(call["function"]["name"], args)
        log.append({"type": "tool_result", "id": call["id"], "ok": True})

    async with asyncio.TaskGroup() as tg:
        for call in calls:
            tg.create_task(one(call))
    return [{"role": "tool", "tool_call_id": c["id"], "content": results[c["id"]]} for c in calls]


async def run(task: str, model: str, log: Transcript, enabled: set[str], max_turns: int = 40) -> str:
    messages: list[dict] = [
        {"role": "system", "content": SYSTEM + f"\nSession {uuid.uuid4()} started {time.ctime()}."},
        {"role": "user", "content": task},
    ]
    tools = tool_defs(enabled)
    answer = ""
    async with httpx.AsyncClient(timeout=httpx.Timeout(120.0, connect=10.0)) as client:
        for turn in range(max_turns):
            for m in messages[:-KEEP_RECENT]:
                if m["role"] == "tool" and len(m["content"]) > 2_000:
                    m["content"] = m["content"][:2_000] + "\n[output elided]"
            messages = await _compact(client, model, messages)
            for attempt in range(3):
                try:
                    completion = await stream_chat(client, model, messages, tools)
                    assistant = {"role": "assistant", "content": completion.text or None}
                    if completion.tool_calls:
                        assistant["tool_calls"] = completion.tool_calls
                    results = await _run_calls(completion.tool_calls, log) if completion.tool_calls else []
                    break
                except httpx.TransportError:
                    await asyncio.sleep(2 ** attempt)
            else:
                raise RuntimeError("model endpoint unreachable")

            log.append({"type": "assistant", "turn": turn, "text": completion.text, "usage": completion.usage})
            messages.append(assistant)
            messages.extend(results)
            log.save_pointer(turn, [])
            answer = completion.text
            if not completion.tool_calls:
                break
    return answer
