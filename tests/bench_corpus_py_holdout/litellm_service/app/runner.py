"""Async agent loop on top of litellm."""
from __future__ import annotations

import asyncio
import json
import logging

import litellm

from . import registry
from .store import Store

log = logging.getLogger("svc.runner")

MODEL = "gpt-4.1-mini"
MAX_TURNS = 25
MAX_CONTEXT_TOKENS = 100_000
SYSTEM = "You are an operations assistant. Use tools to answer; be concise."


def _fit_context(messages: list[dict]) -> list[dict]:
    trimmed = list(messages)
    while litellm.token_counter(model=MODEL, messages=trimmed) > MAX_CONTEXT_TOKENS and len(trimmed) > 2:
        trimmed.pop(1)
    return trimmed


async def _call_tool(call) -> dict:
    tool = registry.get(call.function.name)
    if tool is None:
        return {"role": "tool", "tool_call_id": call.id, "content": f"unknown tool {call.function.name}"}
    args = json.loads(call.function.arguments)
    output = await asyncio.wait_for(tool.handler(**args), timeout=tool.timeout)
    return {"role": "tool", "tool_call_id": call.id, "content": output}


async def run_agent(store: Store, run_id: str, enabled: list[str]) -> dict:
    registry.discover()
    tools = registry.schemas(enabled)
    for turn in range(MAX_TURNS):
        history = store.load_messages(run_id)
        request = [{"role": "system", "content": SYSTEM}] + _fit_context(history)
        response = await litellm.acompletion(
            model=MODEL,
            messages=request,
            tools=tools or None,
            num_retries=2,
            timeout=120,
        )
        choice = response.choices[0]
        message = choice.message
        store.append_messages(run_id, [message.model_dump(exclude_none=True)])
        store.log_event(run_id, "turn", {"turn": turn, "finish_reason": choice.finish_reason})

        if not message.tool_calls:
            return {"status": "ok", "answer": message.content, "turns": turn + 1}

        results = await asyncio.gather(*(_call_tool(c) for c in message.tool_calls))
        for r in results:
            store.log_event(run_id, "tool_result", {"chars": len(r["content"])})
        store.append_messages(run_id, list(results))

    log.warning("run %s hit the turn limit", run_id)
    return {"status": "ok", "answer": None, "turns": MAX_TURNS}
