"""The agent loop: stream a turn from Claude, run the requested tools, repeat."""
from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Callable

import anthropic

from .prompts import build_system_prompt, tool_specs
from .session import Session
from .tools import TOOLS

log = logging.getLogger("coder")

HISTORY_WINDOW = 40


class Agent:
    def __init__(self, root: Path, model: str, session: Session,
                 approve: Callable[[str, dict], bool]) -> None:
        self.root = root
        self.model = model
        self.session = session
        self.approve = approve
        self.client = anthropic.Anthropic(max_retries=4, timeout=600)

    @property
    def messages(self) -> list[dict]:
        return self.session.messages

    def _stream_turn(self) -> tuple[list[dict], str]:
        blocks: list[dict] = []
        partial_json: dict[int, str] = {}
        stop_reason = ""
        with self.client.messages.stream(
            model=self.model,
            max_tokens=8192,
            system=build_system_prompt(self.root),
            tools=tool_specs(TOOLS),
            messages=self.messages[-HISTORY_WINDOW:],
        ) as stream:
            for event in stream:
                if event.type == "content_block_start":
                    block = event.content_block.model_dump()
                    blocks.append(block)
                elif event.type == "content_block_delta":
                    if event.delta.type == "text_delta":
                        blocks[event.index]["text"] += event.delta.text
                    elif event.delta.type == "input_json_delta":
                        partial_json[event.index] = partial_json.get(event.index, "") + event.delta.partial_json
                elif event.type == "content_block_stop":
                    if event.index in partial_json:
                        blocks[event.index]["input"] = json.loads(partial_json.pop(event.index) or "{}")
                elif event.type == "message_delta":
                    stop_reason = event.delta.stop_reason or stop_reason
        return blocks, stop_reason

    def run(self, task: str) -> str:
        last = self.messages[-1] if self.messages else None
        if last and last["role"] == "assistant" and isinstance(last["content"], list):
            # a previous run was interrupted between the model turn and the tool results
            last["content"] = [b for b in last["content"] if b.get("type") != "tool_use"]
        self.messages.append({"role": "user", "content": task})
        while True:
            blocks, stop_reason = self._stream_turn()
            self.messages.append({"role": "assistant", "content": blocks})
            calls = [b for b in blocks if b["type"] == "tool_use"]
            if not calls:
                self.session.save()
                return "".join(b.get("text", "") for b in blocks if b["type"] == "text")

            results = []
            for call in calls:
                spec = TOOLS.get(call["name"])
                if spec is None:
                    log.warning("model asked for unknown tool %s", call["name"])
                    continue
                if not self.approve(call["name"], call["input"]):
                    log.info("user declined %s", call["name"])
                    continue
                try:
                    output = spec["handler"](self.root, call["input"])
                except Exception as e:
                    output = f"Error: {e}"
                results.append({"type": "tool_result", "tool_use_id": call["id"], "content": output})
                log.info("tool %s -> %d chars", call["name"], len(output))

            self.messages.append({"role": "user", "content": results})
            self.session.save()
