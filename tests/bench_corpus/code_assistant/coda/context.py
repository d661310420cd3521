"""Keeps the running conversation under the model's context window."""

from __future__ import annotations

import json
import logging
from typing import Any

log = logging.getLogger(__name__)

try:
    import tiktoken

    _ENCODING = tiktoken.get_encoding("o200k_base")
except Exception:  # tiktoken is optional
    _ENCODING = None

Message = dict[str, Any]


def estimate_tokens(messages: list[Message]) -> int:
    total = 0
    for msg in messages:
        text = msg.get("content") or ""
        if msg.get("tool_calls"):
            text += json.dumps(msg["tool_calls"])
        total += len(_ENCODING.encode(text)) if _ENCODING else len(text) // 4
        total += 4  # per-message framing
    return total


class ContextWindow:
    def __init__(self, max_tokens: int = 128_000, reserve: int = 16_000, keep_last: int = 40) -> None:
        self.max_tokens = max_tokens
        self.reserve = reserve
        self.keep_last = keep_last

    @property
    def budget(self) -> int:
        return self.max_tokens - self.reserve

    def usage_ratio(self, messages: list[Message]) -> float:
        return estimate_tokens(messages) / self.budget

    def fit(self, messages: list[Message]) -> list[Message]:
        if estimate_tokens(messages) <= self.budget or len(messages) <= self.keep_last + 1:
            return messages
        # keep the original task, then the most recent messages
        first = messages[0]
        trimmed = [first, *messages[-self.keep_last:]]
        log.info("context: dropped %d messages", len(messages) - len(trimmed))
        return trimmed
