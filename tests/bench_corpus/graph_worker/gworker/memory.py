"""Keeping `state["messages"]` small: summarisation and trimming."""

from __future__ import annotations

import json
import logging
from typing import Any, Awaitable, Callable

log = logging.getLogger(__name__)

Msg = dict[str, Any]

SUMMARY_PROMPT = (
    "Summarise the work so far for your own future reference: the goal, what was "
    "tried, what was learned (with concrete file names, ids and numbers), and what "
    "remains. Be terse."
)


def count_tokens(messages: list[Msg]) -> int:
    size = 0
    for m in messages:
        size += len(m.get("content") or "")
        if m.get("tool_calls"):
            size += len(json.dumps(m["tool_calls"]))
    return size // 4 + 3 * len(messages)


def trim_messages(messages: list[Msg], max_tokens: int) -> list[Msg]:
    """Drop the oldest non-system messages until the request fits."""
    head = [m for m in messages[:1] if m["role"] == "system"]
    body = list(messages[len(head):])
    while body and count_tokens(head + body) > max_tokens:
        body.pop(0)
    return head + body


def _safe_split(messages: list[Msg], keep_recent: int) -> int:
    """Index where the recent tail starts, moved back so it never opens on a tool result."""
    cut = max(1, len(messages) - keep_recent)
    while cut > 1 and messages[cut]["role"] == "tool":
        cut -= 1
    return cut


async def summarize(
    messages: list[Msg],
    llm: Callable[[list[Msg]], Awaitable[str]],
    *,
    threshold: int,
    keep_recent: int = 12,
) -> list[Msg] | None:
    """Return a compacted copy of `messages`, or None if no compaction is needed."""
    if count_tokens(messages) < threshold or len(messages) <= keep_recent + 2:
        return None
    cut = _safe_split(messages, keep_recent)
    older, recent = messages[1:cut], messages[cut:]
    summary = await llm([*older, {"role": "user", "content": SUMMARY_PROMPT}])
    log.info("summarised %d messages into %d chars", len(older), len(summary))
    note = {"role": "user", "content": f"[Summary of earlier work]\n{summary}"}
    return [messages[0], note, *recent]
