"""agent -> tools -> summarize, until the model stops calling tools."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import time
import uuid
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, TypedDict

import aiohttp

from .errors import ModelError, ModelErrorCode, ToolOk, ToolOutcome, classify_status
from .memory import summarize, trim_messages
from .sandbox import CommandRunner
from .tool_node import ToolNode
from .tools import load_tools

log = logging.getLogger("gworker")

SYSTEM_PROMPT = """\
You are a background worker that completes engineering chores: triaging
failures, gathering information from internal pages, running commands in the
job's working copy and filing tickets. Work step by step, verify results with
tools, and finish with a concise report of what you did and what you found.
"""


class WorkerState(TypedDict):
    messages: list[dict[str, Any]]


@dataclass(frozen=True)
class Overwrite:
    """Update value that replaces the message list (used only by compaction)."""

    messages: list[dict[str, Any]]


def merge(state: WorkerState, update: dict[str, Any]) -> WorkerState:
    incoming = update.get("messages")
    if incoming is None:
        return state
    if isinstance(incoming, Overwrite):
        return {**state, "messages": list(incoming.messages)}
    return {**state, "messages": [*state["messages"], *incoming]}


class RunJournal:
    """Append-only JSONL record of a run; a torn final line is ignored on read."""

    def __init__(self, run_id: str, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.run_id = run_id
        self.path = directory / f"{run_id}.jsonl"

    def event(self, kind: str, **fields: Any) -> None:
        line = json.dumps({"run_id": self.run_id, "ts": time.time(), "kind": kind, **fields},
                          sort_keys=True, default=str)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def tool_start(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        self.event("tool_start", call_id=call_id, tool=name, args=args)

    def tool_end(self, call_id: str, name: str, outcome: ToolOutcome) -> None:
        if isinstance(outcome, ToolOk):
            self.event("tool_end", call_id=call_id, tool=name, ok=True, chars=len(outcome.content))
        else:
            self.event("tool_end", call_id=call_id, tool=name, ok=False, code=outcome.code.value)

    @staticmethod
    def read(path: Path) -> list[dict[str, Any]]:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        records = []
        for i, line in enumerate(lines):
            if i == len(lines) - 1 and not line.endswith("\n"):
                log.warning("%s: ignoring torn final record", path)
                break
            records.append(json.loads(line))
        return records


class ChatClient:
    def __init__(self, base_url: str, api_key: str, model: str, journal: RunJournal) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
        self.model = model
        self.journal = journal
        self.timeout = aiohttp.ClientTimeout(total=180, connect=15)

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                       max_tokens: int) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "messages": messages, "max_tokens": max_tokens}
        if tools:
            payload["tools"] = tools
        body = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        async with aiohttp.ClientSession(timeout=self.timeout) as session:
            for attempt in range(4):
                status = None
                try:
                    async with session.post(self.url, data=body, headers=self.headers) as resp:
                        if resp.status < 400:
                            data = await resp.json()
                            break
                        status, code = resp.status, classify_status(resp.status)
                        detail = (await resp.text())[:500]
                except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                    code, detail = ModelErrorCode.UNAVAILABLE, f"{type(exc).__name__}: {exc}"
                if not code.retryable or attempt == 3:
                    raise ModelError(code, detail, status)
                await asyncio.sleep(min(30.0, 2.0 * 2**attempt))
        usage = data.get("usage") or {}
        self.journal.event("llm_end", model=data.get("model"), usage=usage,
                           finish_reason=data["choices"][0].get("finish_reason"))
        return data


class Worker:
    def __init__(self, llm: ChatClient, workdir: str, journal: RunJournal, *,
                 recursion_limit: int = 25, context_budget: int = 100_000,
                 summarize_at: int = 70_000, max_tokens: int = 4_096) -> None:
        self.llm = llm
        self.journal = journal
        self.runner = CommandRunner(workdir)
        tools = load_tools(self.runner)
        self.tool_schemas = [tools[name].schema() for name in sorted(tools)]
        self.tool_node = ToolNode(tools, tracer=journal)
        self.recursion_limit = recursion_limit
        self.context_budget = context_budget
        self.summarize_at = summarize_at
        self.max_tokens = max_tokens
        self.run_id = journal.run_id

    def initial_state(self, task: str) -> WorkerState:
        return {"messages": [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"{task}\n\n(Today's date: {date.today().isoformat()})"},
        ]}

    # -- nodes -------------------------------------------------------------
    async def agent_node(self, state: WorkerState) -> dict[str, Any]:
        msgs = state["messages"]
        if msgs[-1]["role"] == "tool" and not (msgs[-1].get("content") or "").strip():
            msgs[-1]["content"] = "(the tool produced no output)"
        request = trim_messages(msgs, self.context_budget)
        data = await self.llm.complete(request, self.tool_schemas, self.max_tokens)
        choice = data["choices"][0]
        if choice.get("finish_reason") == "length" and choice["message"].get("tool_calls"):
            data = await self.llm.complete(request, self.tool_schemas, self.max_tokens * 2)
            choice = data["choices"][0]
            if choice.get("finish_reason") == "length":
                raise ModelError(ModelErrorCode.OUTPUT_TRUNCATED, "tool call did not fit in max_tokens")
        return {"messages": [choice["message"]]}

    async def summarize_node(self, state: WorkerState) -> dict[str, Any]:
        async def ask(msgs: list[dict[str, Any]]) -> str:
            data = await self.llm.complete(msgs, None, 1_024)
            return data["choices"][0]["message"].get("content") or ""

        compacted = await summarize(state["messages"], ask, threshold=self.summarize_at)
        if compacted is None:
            return {}
        self.journal.event("compaction", before=len(state["messages"]), after=len(compacted))
        return {"messages": Overwrite(compacted)}

    # -- driver ------------------------------------------------------------
    def _apply(self, state: WorkerState, node: str, update: dict[str, Any]) -> WorkerState:
        self.journal.event("node", node=node, added=0 if isinstance(update.get("messages"), Overwrite)
                           else len(update.get("messages") or []))
        return merge(state, update)

    async def _drive(self, state: WorkerState) -> WorkerState:
        for _ in range(self.recursion_limit):
            state = self._apply(state, "agent", await self.agent_node(state))
            if not state["messages"][-1].get("tool_calls"):
                break
            state = self._apply(state, "tools", await self.tool_node(state))
            state = self._apply(state, "summarize", await self.summarize_node(state))
        return state

    async def run(self, task: str) -> str:
        state = self.initial_state(task)
        self.journal.event("run_start", task=task)
        try:
            state = await self._drive(state)
        except asyncio.CancelledError:
            log.info("run %s cancelled", self.run_id)
            self.journal.event("run_cancelled")
        self.journal.event("run_end", messages=len(state["messages"]))
        return state["messages"][-1].get("content") or ""


async def main(task: str) -> None:
    run_id = uuid.uuid4().hex
    journal = RunJournal(run_id, Path(os.environ.get("GW_JOURNAL_DIR", "/var/log/gworker")))
    llm = ChatClient(os.environ["GW_LLM_URL"], os.environ["GW_LLM_KEY"],
                     os.environ.get("GW_MODEL", "gpt-4.1-mini"), journal)
    worker = Worker(llm, os.getcwd(), journal)
    print(await worker.run(task))
