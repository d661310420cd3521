"""Append-only JSONL transcript and a small resume pointer."""
from __future__ import annotations

import json
import os
from pathlib import Path


class Transcript:
    def __init__(self, directory: Path, session: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{session}.jsonl"
        self.pointer = directory / f"{session}.state.json"

    def append(self, record: dict) -> None:
        line = json.dumps(record, separators=(",", ":")) + "\n"
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def load(self) -> list[dict]:
        if not self.path.exists():
            return []
        records = []
        for raw in self.path.read_text(encoding="utf-8").splitlines():
            try:
                records.append(json.loads(raw))
            except json.JSONDecodeError:
                break
        return records

    def save_pointer(self, turn: int, pending_calls: list[str]) -> None:
        self.pointer.write_text(json.dumps({"turn": turn, "pending": pending_calls}))

    def load_pointer(self) -> dict:
        if not self.pointer.exists():
            return {"turn": 0, "pending": []}
        return json.loads(self.pointer.read_text())
