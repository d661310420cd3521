"""Agent trajectories that record less than the wire: SWE-agent `.traj` and OpenHands event streams.

- SWE-agent `.traj`: only the FINAL history (`history[]`, OpenAI Chat shape, `tool_call_ids` on tool
  messages). It becomes one request at the line of `"history"`: pairing, truncation boundaries and
  duplicate ids are checked; append-only and prefix stability cannot be (no per-request snapshots).
- OpenHands: events with the raw model response of each action (`tool_call_metadata.model_response`,
  LiteLLM's OpenAI shape) and observations answering `tool_call_id`s. Requests are not stored, so each
  response becomes a record whose request holds only what arrived since the previous response
  (`partial`): pairing between a response and the next one, ids, usage.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness_audit.trace.model import Malformed, RawRecord, Source
from harness_audit.trace.readers._text import LineIndex, decode, member, path_elements


def is_swe_agent(value: Any) -> bool:
    """A `.traj` document."""
    history = value.get("history") if isinstance(value, dict) else None
    return isinstance(history, list) and bool(history) and all(isinstance(m, dict) and "role" in m for m in history[:5])


def is_openhands(value: Any) -> bool:
    """An OpenHands event stream."""
    return (isinstance(value, list) and bool(value) and all(isinstance(e, dict) for e in value[:5])
            and all("source" in e and ("action" in e or "observation" in e) for e in value[:5]))


def _chat_message(m: dict[str, Any]) -> list[dict[str, Any]]:
    role = m.get("role")
    if role == "tool":
        ids = m.get("tool_call_ids") or ([m["tool_call_id"]] if m.get("tool_call_id") else [""])
        return [{"role": "tool", "tool_call_id": i, "content": m.get("content")} for i in ids]
    out: dict[str, Any] = {"role": role, "content": m.get("content")}
    if m.get("tool_calls"):
        out["tool_calls"] = m["tool_calls"]
    return [out]


def read_swe_agent(path: Path, data: bytes) -> Iterator[RawRecord | Malformed]:
    """The final history of a trajectory as one request."""
    text = decode(data)
    index = LineIndex(text, data)
    pos = member(text, 0, "history")
    line = index.line_of(pos) if pos is not None else 1
    # cite the `"history": [` line itself, not the first message
    while line > 1 and '"history"' not in text.splitlines()[line - 1]:
        line -= 1
    source = Source(file=str(path), line=line, offset=index.offset_of(line), index=0)
    history = [m for _, m in path_elements(text, 0, ("history", "*")) if isinstance(m, dict)]
    messages = [c for m in history for c in _chat_message(m)]
    yield RawRecord(source=source, request={"messages": messages}, api="openai-chat", session="swe-agent")


def read_openhands(path: Path, data: bytes) -> Iterator[RawRecord | Malformed]:
    """One record per model response, holding what arrived since the previous one."""
    text = decode(data)
    index = LineIndex(text, data)
    pending: list[dict[str, Any]] = []
    last_id: str | None = None
    count = 0
    for pos, event in path_elements(text, 0, ("*",)):
        if not isinstance(event, dict):
            continue
        meta = event.get("tool_call_metadata") if isinstance(event.get("tool_call_metadata"), dict) else {}
        if "observation" in event and meta.get("tool_call_id"):
            pending.append({"role": "tool", "tool_call_id": meta["tool_call_id"], "content": event.get("content")})
            continue
        if event.get("source") == "user" and event.get("action") == "message":
            args = event.get("args") if isinstance(event.get("args"), dict) else {}
            pending.append({"role": "user", "content": args.get("content", event.get("message"))})
            continue
        response = meta.get("model_response")
        if "action" in event and isinstance(response, dict) and response.get("id") != last_id:
            last_id = response.get("id")
            line = index.line_of(pos)
            source = Source(file=str(path), line=line, offset=index.offset_of(line), index=count)
            yield RawRecord(source=source, request={"messages": pending}, response=response, api="openai-chat",
                            session="openhands", extra={"partial": count > 0})
            count += 1
            pending = []
