"""The agent loop that drives Bedrock and the tools."""
from __future__ import annotations

import logging
import socket
from concurrent.futures import ThreadPoolExecutor

from . import bedrock
from .state import RunState
from .tools import TOOLS, tool_config

log = logging.getLogger("worker.loop")

KEEP_MESSAGES = 24
MAX_TOOL_CALLS = 60


class MaxTurnsExceeded(Exception):
    pass


class AgentLoop:
    def __init__(self, state: RunState, max_turns: int, depth: int = 0) -> None:
        self.state = state
        self.max_turns = max_turns
        self.depth = depth
        self.tool_calls = 0
        self.pool = ThreadPoolExecutor(max_workers=4)

    def system(self) -> list[dict]:
        return [{"text": (
            "You are a support-operations agent. Investigate before acting; "
            "open a ticket only when a human needs to follow up.\n"
            f"Worker: {socket.gethostname()} run={self.state.run_id}"
        )}]

    def _window(self, messages: list[dict]) -> list[dict]:
        if len(messages) <= KEEP_MESSAGES:
            return messages
        return [messages[0]] + messages[-(KEEP_MESSAGES - 1):]

    def _run_one(self, use: dict) -> dict:
        name = use["name"]
        if name == "delegate":
            child = AgentLoop(RunState(f"{self.state.run_id}.{use['toolUseId']}"), self.max_turns, self.depth + 1)
            child.state.init(use["input"]["task"])
            text = child.run().get("answer", "")
        else:
            fn = TOOLS[name][0]
            text = fn(**use["input"])
        self.state.record_tool(name, True)
        return {"toolResult": {"toolUseId": use["toolUseId"], "content": [{"text": text}]}}

    def run(self) -> dict:
        messages = self.state.messages()
        config = tool_config()
        config["tools"].append({"toolSpec": {
            "name": "delegate",
            "description": "Hand a self-contained sub-task to a helper agent.",
            "inputSchema": {"json": {"type": "object", "properties": {"task": {"type": "string"}}, "required": ["task"]}},
        }})
        for turn in range(self.max_turns):
            result = bedrock.converse(self.system(), self._window(messages), config)
            messages.append({"role": "assistant", "content": result.content})
            uses = [b["toolUse"] for b in result.content if "toolUse" in b]
            if not uses:
                self.state.checkpoint(messages, turn + 1)
                self.state.finish("done")
                return {"status": "done", "answer": "".join(b.get("text", "") for b in result.content)}

            batch = []
            for use in uses:
                self.tool_calls += 1
                if self.tool_calls > MAX_TOOL_CALLS:
                    log.warning("tool call budget exhausted")
                    break
                batch.append(use)
            outputs = list(self.pool.map(self._run_one, batch))
            messages.append({"role": "user", "content": outputs})
            if self.tool_calls > MAX_TOOL_CALLS * 0.8:
                messages[-1]["content"].append({"text": f"Note: {MAX_TOOL_CALLS - self.tool_calls} tool calls remain."})
            self.state.checkpoint(messages, turn + 1)

        self.state.finish("max_turns")
        raise MaxTurnsExceeded(f"run {self.state.run_id} used {self.max_turns} turns")
