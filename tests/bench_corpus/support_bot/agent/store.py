from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from pathlib import Path


class SessionStore:
    """One JSON document per chat session."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, session_id: str) -> Path:
        return self.root / f"{session_id}.json"

    def load(self, session_id: str) -> dict | None:
        path = self._path(session_id)
        if not path.exists():
            return None
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)

    def save(self, session_id: str, state: dict) -> None:
        state["updated_at"] = time.time()
        with open(self._path(session_id), "w", encoding="utf-8") as fh:
            json.dump(state, fh, indent=2, default=str)

    def export_transcript(self, session_id: str, dest_dir: str | os.PathLike) -> Path:
        state = self.load(session_id)
        if state is None:
            raise KeyError(session_id)
        dest = Path(dest_dir)
        dest.mkdir(parents=True, exist_ok=True)
        final = dest / f"{session_id}.transcript.json"
        fd, tmp = tempfile.mkstemp(dir=dest, prefix=f".{session_id}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump({"session": session_id, "messages": state["messages"]}, fh, default=str)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        return final
