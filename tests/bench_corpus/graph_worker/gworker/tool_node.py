"""Executes the tool calls of the latest AI message and returns tool messages."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, Protocol

from .errors import ToolError, ToolErrorCode, ToolOk, ToolOutcome
from .tools import ToolSpec

log = logging.getLogger(__name__)


class Tracer(Protocol):
    def tool_start(self, call_id: str, name: str, args: dict[str, Any]) -> None: ...
    def tool_end(self, call_id: str, name: str, outcome: ToolOutcome) -> None: ...


def parse_tool_calls(message: dict[str, Any]) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], ToolError]]]:
    """Decode the raw calls of an assistant message; undecodable ones are rejected."""
    ok: list[dict[str, Any]] = []
    rejected: list[tuple[dict[str, Any], ToolError]] = []
    for raw in message.get("tool_calls") or []:
        fn = raw.get("function") or {}
        call = {"id": raw["id"], "name": fn.get("name", ""), "args": {}}
        try:
            args = json.loads(fn.get("arguments") or "{}")
        except json.JSONDecodeError as exc:
            rejected.append((call, ToolError(ToolErrorCode.BAD_ARGUMENTS,
                                             f"arguments are not valid JSON ({exc.msg} at {exc.pos})")))
            continue
        if not isinstance(args, dict):
            rejected.append((call, ToolError(ToolErrorCode.BAD_ARGUMENTS, "arguments must be an object")))
            continue
        call["args"] = args
        ok.append(call)
    return ok, rejected


def tool_message(call: dict[str, Any], outcome: ToolOutcome) -> dict[str, Any]:
    content = outcome.content if isinstance(outcome, ToolOk) else outcome.render()
    return {"role": "tool", "tool_call_id": call["id"], "name": call["name"], "content": content}


class ToolNode:
    def __init__(self, tools: dict[str, ToolSpec], tracer: Tracer, max_calls_per_turn: int = 8) -> None:
        self.tools = tools
        self.tracer = tracer
        self.max_calls_per_turn = max_calls_per_turn

    async def __call__(self, state: dict[str, Any]) -> dict[str, Any]:
        calls, rejected = parse_tool_calls(state["messages"][-1])
        out = [tool_message(call, err) for call, err in rejected]
        if any(self.tools.get(c["name"]) and self.tools[c["name"]].serial for c in calls):
            out += await self._run_serial(calls)
        else:
            out += await self._run_parallel(calls)
        return {"messages": out}

    async def _invoke(self, call: dict[str, Any]) -> ToolOutcome:
        spec = self.tools.get(call["name"])
        self.tracer.tool_start(call["id"], call["name"], call["args"])
        if spec is None:
            missing = ToolError(ToolErrorCode.UNKNOWN_TOOL, f"no tool named {call['name']!r}")
            self.tracer.tool_end(call["id"], call["name"], missing)
            return missing
        try:
            text = await asyncio.wait_for(spec.fn(**call["args"]), timeout=spec.timeout_s)
            outcome: ToolOutcome = ToolOk(text)
        except asyncio.TimeoutError:
            outcome = ToolError(ToolErrorCode.TIMEOUT, f"{spec.name} did not finish within {spec.timeout_s:.0f}s")
        except ToolError as err:
            outcome = err
        except TypeError as exc:
            outcome = ToolError(ToolErrorCode.BAD_ARGUMENTS, str(exc))
        except Exception as exc:
            log.exception("tool %s crashed", spec.name)
            outcome = ToolError(ToolErrorCode.INTERNAL, f"{type(exc).__name__}: {exc}")
        self.tracer.tool_end(call["id"], spec.name, outcome)
        return outcome

    async def _run_parallel(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        results = await asyncio.gather(*(self._invoke(c) for c in calls), return_exceptions=True)
        messages = []
        for call, res in zip(calls, results):
            if isinstance(res, asyncio.CancelledError):
                res = ToolError(ToolErrorCode.CANCELLED, "call was cancelled")
            elif isinstance(res, BaseException):
                res = ToolError(ToolErrorCode.INTERNAL, f"{type(res).__name__}: {res}")
            messages.append(tool_message(call, res))
        return messages

    async def _run_serial(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        messages = []
        for n, call in enumerate(calls):
            if n >= self.max_calls_per_turn:
                log.warning("dropping %d calls over the per-turn limit", len(calls) - n)
                break
            messages.append(tool_message(call, await self._invoke(call)))
        return messages
