"""The agent loop: stream a turn, run the requested tools, repeat."""

from __future__ import annotations

import json
import logging
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable

from openai import OpenAI

from .checkpoint import Checkpointer, TraceWriter
from .context import ContextWindow
from .prompts import build_system_prompt, load_project_notes
from .stream import AssistantTurn, PendingCall, collect
from .tools import Workspace, build_registry

log = logging.getLogger("coda.agent")


@dataclass
class AgentConfig:
    model: str = "gpt-4.1"
    temperature: float = 0.2
    max_output_tokens: int = 8_192
    max_parallel_tools: int = 4
    tool_timeout_s: float = 120.0
    context_tokens: int = 128_000


class Agent:
    def __init__(
        self,
        workspace_root: str,
        config: AgentConfig | None = None,
        client: OpenAI | None = None,
        session_id: str | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config or AgentConfig()
        self.client = client or OpenAI()
        self.workspace = Workspace(workspace_root)
        self.registry = build_registry(self.workspace)
        self.context = ContextWindow(max_tokens=self.config.context_tokens)
        self.session_id = session_id or uuid.uuid4().hex[:12]
        self.checkpoint = Checkpointer(self.session_id)
        self.trace = TraceWriter(self.session_id)
        self.notes = load_project_notes(self.workspace.root)
        self.on_text = on_text or (lambda _s: None)
        self.messages: list[dict[str, Any]] = []
        self._reads: dict[str, list[str]] = {}

    @classmethod
    def resume(cls, workspace_root: str, session_id: str, **kwargs: Any) -> "Agent":
        agent = cls(workspace_root, session_id=session_id, **kwargs)
        saved = agent.checkpoint.load()
        if saved:
            agent.messages = list(saved["messages"])
        return agent

    # -- model ---------------------------------------------------------------
    def _request_messages(self) -> list[dict[str, Any]]:
        system = build_system_prompt(self.workspace.root, self.notes)
        return [{"role": "system", "content": system}, *self.messages]

    def _complete(self) -> AssistantTurn:
        stream = self.client.chat.completions.create(
            model=self.config.model, messages=self._request_messages(),
            tools=self.registry.schemas(), temperature=self.config.temperature,
            max_tokens=self.config.max_output_tokens, stream=True,
        )
        with stream:
            turn = collect(stream, on_text=self.on_text)
        self.trace.emit("turn", tool_calls=len(turn.tool_calls), finish=turn.finish_reason)
        return turn

    # -- loop ----------------------------------------------------------------
    def run(self, task: str) -> str:
        self.messages.append({"role": "user", "content": task})
        self.trace.emit("task", chars=len(task))
        try:
            while True:
                self.messages = self.context.fit(self.messages)
                turn = self._complete()
                self.messages.append(turn.as_message())
                self._save()
                if not turn.tool_calls:
                    return turn.content
                self._run_tool_calls(turn.tool_calls)
                self._save()
        except KeyboardInterrupt:
            self._mark_interrupted()
            self._save(interrupted=True)
            raise

    def _save(self, **meta: Any) -> None:
        self.checkpoint.save(self.messages, {"model": self.config.model, **meta})

    def _mark_interrupted(self) -> None:
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == "assistant":
            last["content"] = (last.get("content") or "") + "\n\n[interrupted by user]"
        else:
            self.messages.append({"role": "user", "content": "[interrupted by user]"})

    # -- tools ---------------------------------------------------------------
    def _invoke(self, call: PendingCall) -> tuple[dict[str, Any], str]:
        args = json.loads(call.arguments or "{}")
        self.trace.emit("tool_call", tool=call.name, args=args)
        return args, self.registry.invoke(call.name, args)

    def _run_tool_calls(self, calls: list[PendingCall]) -> None:
        runnable: list[PendingCall] = []
        for call in calls:
            if not self.registry.has(call.name):
                log.warning("model asked for unknown tool %r", call.name)
                continue
            runnable.append(call)

        with ThreadPoolExecutor(max_workers=self.config.max_parallel_tools) as pool:
            futures = [pool.submit(self._invoke, call) for call in runnable]
            outputs = [fut.result(timeout=self.config.tool_timeout_s) for fut in futures]

        for call, (args, output) in zip(runnable, outputs):
            self.trace.emit("tool_result", tool=call.name, chars=len(output))
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
            self._track_reads(call, args)

    def _track_reads(self, call: PendingCall, args: dict[str, Any]) -> None:
        """Earlier reads of a file are misleading once it changes; say so."""
        path = os.path.normpath(str(args.get("path", "")))
        if call.name == "read_file":
            self._reads.setdefault(path, []).append(call.id)
        elif call.name in ("write_file", "edit_file"):
            stale = set(self._reads.pop(path, ()))
            for msg in self.messages:
                if msg["role"] == "tool" and msg.get("tool_call_id") in stale:
                    msg["content"] = f"[outdated: {path} was modified after this read]"
