from __future__ import annotations

import argparse
import asyncio
import logging
import os
import uuid
from dataclasses import dataclass
from datetime import date
from typing import Iterable

from .compactor import Compactor
from .errors import ToolError, ToolErrorCode
from .llm import ModelClient
from .tools import SECRET_RE, TOOL_IMPLS, TOOL_SPECS
from .transcript import Checkpoint, Transcript

log = logging.getLogger("research_agent")

SYSTEM_PROMPT = """You are a careful research assistant.
Work in small steps: search, read primary sources, take notes with write_note,
and cite every claim. When you have a complete answer, write the final report
and call publish_report once. Never fabricate citations."""


@dataclass
class RunResult:
    status: str
    answer: str | None
    turns: int


def _text_of(resp) -> str:
    return "".join(b.text for b in resp.content if b.type == "text")


class ResearchRunner:
    def __init__(
        self,
        llm: ModelClient,
        workspace: str,
        enabled_tools: Iterable[str],
        transcript: Transcript,
        checkpoint: Checkpoint,
        *,
        max_turns: int = 30,
        tool_budget_s: float = 60.0,
    ):
        self.llm = llm
        self.workspace = workspace
        self.enabled = set(enabled_tools)
        self.transcript = transcript
        self.checkpoint = checkpoint
        self.compactor = Compactor(llm)
        self.max_turns = max_turns
        self.tool_budget_s = tool_budget_s
        self.turn = 0

    def _system(self) -> list[dict]:
        listing = "\n".join(f"- {name}" for name in os.listdir(self.workspace)[:60])
        text = f"{SYSTEM_PROMPT}\n\nFiles currently in the workspace:\n{listing or '(empty)'}"
        return [{"type": "text", "text": text, "cache_control": {"type": "ephemeral"}}]

    def _tools(self) -> list[dict]:
        return [TOOL_SPECS[name] for name in self.enabled if name in TOOL_SPECS]

    def _scrub_secrets(self, messages: list[dict]) -> None:
        for msg in messages:
            if msg["role"] != "user" or isinstance(msg["content"], str):
                continue
            for block in msg["content"]:
                if block.get("type") == "tool_result" and isinstance(block.get("content"), str):
                    block["content"] = SECRET_RE.sub("[redacted]", block["content"])

    async def _run_one(self, block) -> dict | None:
        impl = TOOL_IMPLS.get(block.name)
        if impl is None or block.name not in self.enabled:
            log.warning("model asked for unavailable tool %r; ignoring", block.name)
            return None
        self.transcript.tool_call(self.turn, block)
        try:
            content = await asyncio.wait_for(impl(**block.input), timeout=self.tool_budget_s)
            is_error = False
        except ToolError as err:
            content, is_error = err.to_result(), True
        except asyncio.TimeoutError:
            err = ToolError(ToolErrorCode.TIMEOUT, f"{block.name} exceeded {self.tool_budget_s:.0f}s")
            content, is_error = err.to_result(), True
        except asyncio.CancelledError:
            log.info("tool %s interrupted", block.name)
            content, is_error = ToolError(ToolErrorCode.INTERNAL, "interrupted").to_result(), True
        self.transcript.tool_result(self.turn, block.id, content, is_error)
        return {"type": "tool_result", "tool_use_id": block.id, "content": content, "is_error": is_error}

    async def _dispatch(self, uses: list) -> list[dict]:
        results = await asyncio.gather(*(self._run_one(b) for b in uses))
        return [r for r in results if r is not None]

    async def run(self, question: str) -> RunResult:
        saved = self.checkpoint.load()
        if saved:
            messages, start = saved["messages"], saved["turn"] + 1
        else:
            messages = [{"role": "user", "content": f"{question}\n\n(Today's date: {date.today().isoformat()})"}]
            start = 0

        for turn in range(start, self.max_turns):
            self.turn = turn
            self.transcript.record("turn_start", turn=turn, n_messages=len(messages))
            messages = await self.compactor.maybe_compact(messages)
            self._scrub_secrets(messages)
            resp = await self.llm.complete(system=self._system(), tools=self._tools(), messages=messages)
            self.transcript.usage(turn, getattr(resp, "_request_id", None), resp.usage)
            if resp.stop_reason == "max_tokens":
                self.transcript.record("truncated_response", turn=turn)
                messages.append({"role": "user", "content": "Your last reply was cut off; continue more concisely."})
                continue
            messages.append({"role": "assistant", "content": [b.model_dump() for b in resp.content]})
            uses = [b for b in resp.content if b.type == "tool_use"]
            if not uses:
                self.checkpoint.save(turn=turn, messages=messages)
                return RunResult("completed", _text_of(resp), turn + 1)
            messages.append({"role": "user", "content": await self._dispatch(uses)})
            self.checkpoint.save(turn=turn, messages=messages)

        self.transcript.record("budget_exhausted", max_turns=self.max_turns)
        return RunResult("max_turns_exceeded", None, self.max_turns)


def main() -> None:
    ap = argparse.ArgumentParser(description="Run a research question end to end.")
    ap.add_argument("question")
    ap.add_argument("--workspace", default="./workspace")
    ap.add_argument("--tools", default=",".join(TOOL_SPECS))
    ap.add_argument("--max-turns", type=int, default=30)
    ns = ap.parse_args()

    logging.basicConfig(level=logging.INFO)
    run_id = uuid.uuid4().hex[:12]
    runner = ResearchRunner(
        ModelClient(),
        ns.workspace,
        ns.tools.split(","),
        Transcript(os.path.join(ns.workspace, "runs", f"{run_id}.jsonl"), run_id),
        Checkpoint(os.path.join(ns.workspace, "checkpoint.json")),
        max_turns=ns.max_turns,
    )
    result = asyncio.run(runner.run(ns.question))
    print(f"[{result.status} after {result.turns} turns]")
    if result.answer:
        print(result.answer)


if __name__ == "__main__":
    main()
