"""Session checkpoints so `coda --resume <id>` can continue a conversation."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

CODA_HOME = Path(os.environ.get("CODA_HOME", "~/.coda")).expanduser()


class Checkpointer:
    def __init__(self, session_id: str, directory: Path | None = None) -> None:
        self.session_id = session_id
        self.directory = directory or CODA_HOME / "sessions"
        self.path = self.directory / f"{session_id}.json"

    def save(self, messages: list[dict[str, Any]], meta: dict[str, Any] | None = None) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        payload = {
            "session": self.session_id,
            "saved_at": time.time(),
            "meta": meta or {},
            "messages": messages,
        }
        with open(self.path, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, indent=1)

    def load(self) -> dict[str, Any] | None:
        if not self.path.exists():
            return None
        with open(self.path, encoding="utf-8") as fh:
            return json.load(fh)

    @staticmethod
    def recent(directory: Path | None = None, limit: int = 10) -> list[tuple[str, float]]:
        folder = directory or CODA_HOME / "sessions"
        if not folder.is_dir():
            return []
        found = [(p.stem, p.stat().st_mtime) for p in folder.glob("*.json")]
        found.sort(key=lambda item: item[1], reverse=True)
        return found[:limit]


class TraceWriter:
    """Line-oriented event log next to the session file, for `coda trace`."""

    def __init__(self, session_id: str, directory: Path | None = None) -> None:
        folder = directory or CODA_HOME / "traces"
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / f"{session_id}.jsonl"

    def emit(self, kind: str, **fields: Any) -> None:
        record = {"ts": round(time.time(), 3), "kind": kind, **fields}
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")
