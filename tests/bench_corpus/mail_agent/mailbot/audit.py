"""Audit trail, session persistence and the scheduled-send outbox."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

STATE_DIR = Path(os.environ.get("MAILBOT_STATE", "/var/lib/mailbot/state"))


def atomic_write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, sort_keys=True)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


class AuditLog:
    """One JSON object per line; every record carries the run id."""

    def __init__(self, run_id: str, path: Path | None = None) -> None:
        self.run_id = run_id
        self.path = path or STATE_DIR / "audit.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def _write(self, event: str, **fields: Any) -> None:
        record = {"ts": time.time(), "run": self.run_id, "event": event, **fields}
        line = json.dumps(record, default=str, sort_keys=True)
        with self._lock, open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def model_call(self, turn: int, model: str, usage: Any, finish_reason: str | None) -> None:
        details = getattr(usage, "prompt_tokens_details", None)
        self._write(
            "model_call",
            turn=turn,
            model=model,
            finish_reason=finish_reason,
            prompt_tokens=getattr(usage, "prompt_tokens", None),
            completion_tokens=getattr(usage, "completion_tokens", None),
            cached_tokens=getattr(details, "cached_tokens", None),
        )

    def tool_call(self, call_id: str, name: str, arguments: str) -> None:
        self._write("tool_call", call_id=call_id, tool=name, arguments=arguments)

    def tool_result(self, call_id: str, name: str, content: str) -> None:
        self._write("tool_result", call_id=call_id, tool=name, chars=len(content),
                    preview=content[:200])

    def approval(self, call_id: str, name: str, approved: bool, reviewer: str | None) -> None:
        self._write("approval", call_id=call_id, tool=name, approved=approved, reviewer=reviewer)

    def event(self, name: str, **fields: Any) -> None:
        self._write(name, **fields)


class SessionStore:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or STATE_DIR / "sessions"

    def save(self, session_id: str, messages: list[dict[str, Any]]) -> None:
        atomic_write_json(self.directory / f"{session_id}.json",
                          {"session": session_id, "messages": messages})

    def load(self, session_id: str) -> list[dict[str, Any]] | None:
        path = self.directory / f"{session_id}.json"
        if not path.exists():
            return None
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)["messages"]


class Outbox:
    """Emails scheduled for later. Flushed at the start of each run."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or STATE_DIR / "outbox.json"
        self.items: list[dict[str, Any]] = []
        if self.path.exists():
            with open(self.path, encoding="utf-8") as fh:
                self.items = json.load(fh)

    def _save(self) -> None:
        atomic_write_json(self.path, self.items)

    def enqueue(self, message: dict[str, Any], send_at: float, origin: str) -> str:
        item_id = uuid.uuid4().hex[:10]
        self.items.append({"id": item_id, "status": "queued", "send_at": send_at,
                           "origin": origin, "message": message})
        self._save()
        return item_id

    def flush_due(self, mail: Any, now: float | None = None) -> list[str]:
        now = time.time() if now is None else now
        delivered = []
        for item in self.items:
            if item["status"] == "queued" and item["send_at"] <= now:
                mail.send(**item["message"])
                item["status"] = "sent"
                delivered.append(item["id"])
        if delivered:
            self._save()
        return delivered
