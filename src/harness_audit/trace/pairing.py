"""Tool-call pairing inside one request history, by each dialect's own rule.

- OpenAI Chat: the `tool` messages right after the assistant message answer its calls by id.
- Anthropic: the NEXT user message answers the previous assistant message's `tool_use` ids.
- Gemini: the user turns after a model turn answer its calls by id when both sides have one, else
  in order by name (the wire pairs by count and position).
- OpenAI Responses: outputs pair by `call_id` anywhere in the effective input, server-held
  history included (passed in as `known_calls`).
- OTel and our ledger: by id, results before the next assistant message.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from harness_audit.trace.model import Message, Request, ToolCall, ToolResult

ProblemKind = Literal["unanswered", "orphan", "answered-twice"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """One broken pair in a history."""

    kind: ProblemKind
    """A call without result, a result without call, or a call answered more than once."""
    index: int
    """Message index of the call (unanswered, answered-twice) or of the result (orphan)."""
    call_id: str
    """The id concerned (empty for positional dialects)."""
    name: str
    """Tool name when known."""
    in_last_assistant: bool = False
    """The call is in the history's last assistant message (the reply just before this request)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Pairing:
    """What pairing found in one request history."""

    problems: tuple[Problem, ...]
    """Broken pairs, in history order."""
    starts_with_result: bool
    """The first non-system message is a tool result."""
    duplicate_ids: tuple[tuple[str, int], ...]
    """Call ids used by more than one call in the history, with the index of the second use."""


def _last_assistant(msgs: tuple[Message, ...]) -> int:
    return max((i for i, m in enumerate(msgs) if m.role == "assistant"), default=-1)


def _block(msgs: tuple[Message, ...], start: int, *, only_next: bool, tool_role_only: bool) -> tuple[int, list[tuple[int, ToolResult]]]:
    """Results answering the assistant message at `start - 1`: (index after the block, results with indices)."""
    found: list[tuple[int, ToolResult]] = []
    j = start
    while j < len(msgs) and msgs[j].role != "assistant":
        m = msgs[j]
        if tool_role_only and m.role != "tool":
            break
        found += [(j, r) for r in m.results]
        j += 1
        if only_next:
            break
    return j, found


def _match(calls: tuple[ToolCall, ...], results: list[tuple[int, ToolResult]], positional: bool,
           ) -> tuple[list[ToolCall], list[ToolCall], list[tuple[int, ToolResult]]]:
    """(unanswered calls, calls answered twice, results answering no call)."""
    use_ids = not positional or (all(c.call_id for c in calls) and all(r.call_id for _, r in results))
    unanswered: list[ToolCall] = []
    twice: list[ToolCall] = []
    if use_ids:
        ids = Counter(r.call_id for _, r in results)
        call_ids = {c.call_id for c in calls}
        for c in calls:
            n = ids.get(c.call_id, 0)
            if n == 0:
                unanswered.append(c)
            elif n > 1:
                twice.append(c)
        orphans = [(j, r) for j, r in results if r.call_id not in call_ids]
        return unanswered, twice, orphans
    # positional (Gemini without ids): each call takes the first unused result of the same name, in order
    free = list(results)
    for c in calls:
        hit = next((k for k, (_, r) in enumerate(free) if not r.name or not c.name or r.name == c.name), None)
        if hit is None:
            unanswered.append(c)
        else:
            free.pop(hit)
    return unanswered, twice, free


def analyse(req: Request, known_calls: set[str] | None = None) -> Pairing:
    """Pairing problems of one request's history. `known_calls`: Responses calls held by the server (None: unknown)."""
    msgs = req.messages
    problems: list[Problem] = []
    last = _last_assistant(msgs)
    answered_at: set[int] = set()
    if req.api == "openai-responses":
        issued: set[str] = set(known_calls or ())
        outputs = Counter(r.call_id for m in msgs for r in m.results)
        for i, m in enumerate(msgs):
            for c in m.calls:
                issued.add(c.call_id)
                if outputs.get(c.call_id, 0) == 0:
                    problems.append(Problem(kind="unanswered", index=i, call_id=c.call_id, name=c.name,
                                            in_last_assistant=i == last))
                elif outputs[c.call_id] > 1:
                    problems.append(Problem(kind="answered-twice", index=i, call_id=c.call_id, name=c.name))
            for r in m.results:
                server_unknown = known_calls is None and (req.previous_response_id or req.conversation)
                if r.call_id not in issued and not server_unknown:
                    problems.append(Problem(kind="orphan", index=i, call_id=r.call_id, name=r.name))
    else:
        positional = req.api == "gemini"
        for i, m in enumerate(msgs):
            if m.role != "assistant" or not m.calls:
                continue
            _, results = _block(msgs, i + 1, only_next=req.api == "anthropic",
                                tool_role_only=req.api == "openai-chat")
            unanswered, twice, orphans = _match(m.calls, results, positional)
            answered_at.update(j for j, _ in results)
            problems += [Problem(kind="unanswered", index=i, call_id=c.call_id, name=c.name,
                                 in_last_assistant=i == last) for c in unanswered]
            problems += [Problem(kind="answered-twice", index=i, call_id=c.call_id, name=c.name) for c in twice]
            problems += [Problem(kind="orphan", index=j, call_id=r.call_id, name=r.name) for j, r in orphans]
        for j, m in enumerate(msgs):
            if m.results and j not in answered_at:
                problems += [Problem(kind="orphan", index=j, call_id=r.call_id, name=r.name) for r in m.results]
    problems.sort(key=lambda p: p.index)
    first = next((m for m in msgs if m.role != "system"), None)
    starts = first is not None and bool(first.results)
    seen: set[str] = set()
    dups: list[tuple[str, int]] = []
    for i, m in enumerate(msgs):
        for c in m.calls:
            if c.call_id and c.call_id in seen:
                dups.append((c.call_id, i))
            seen.add(c.call_id)
    return Pairing(problems=tuple(problems), starts_with_result=starts, duplicate_ids=tuple(dups))
