from __future__ import annotations

import json


class ContextOverflow(Exception):
    pass


def estimate_tokens(messages: list[dict]) -> int:
    return sum(len(json.dumps(m, default=str)) // 4 + 4 for m in messages)


def _paired(messages: list[dict]) -> bool:
    pending: set[str] = set()
    for m in messages:
        if m["role"] == "tool":
            if m.get("tool_call_id") not in pending:
                return False
            pending.discard(m["tool_call_id"])
        else:
            if pending:
                return False
            pending = {tc["id"] for tc in m.get("tool_calls") or []}
    return not pending


def fit_context(messages: list[dict], budget_tokens: int) -> list[dict]:
    """Drop whole turns from the middle until the request fits.

    messages[0] is the system prompt and messages[1] the task; both are kept.
    A cut only ever lands on an assistant message, so a tool result is never
    separated from the call that produced it.
    """
    if estimate_tokens(messages) <= budget_tokens:
        return messages
    head, body = messages[:2], messages[2:]
    for cut in (i for i, m in enumerate(body) if m["role"] == "assistant" and i > 0):
        candidate = head + body[cut:]
        if estimate_tokens(candidate) <= budget_tokens and _paired(candidate[1:]):
            return candidate
    raise ContextOverflow(
        f"{estimate_tokens(head + body[-1:])} tokens needed for the task and the last message alone; "
        f"budget is {budget_tokens}"
    )
