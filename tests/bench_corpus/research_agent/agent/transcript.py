from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path

log = logging.getLogger(__name__)


class Transcript:
    """Append-only JSONL record of everything a run did."""

    def __init__(self, path: str | os.PathLike, run_id: str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.run_id = run_id
        self._fh = open(self.path, "a", encoding="utf-8")

    def record(self, kind: str, **fields) -> None:
        rec = {"ts": time.time(), "run": self.run_id, "kind": kind, **fields}
        self._fh.write(json.dumps(rec, default=str) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def tool_call(self, turn: int, block) -> None:
        self.record("tool_call", turn=turn, tool_use_id=block.id, name=block.name, input=block.input)

    def tool_result(self, turn: int, tool_use_id: str, content: str, is_error: bool) -> None:
        self.record("tool_result", turn=turn, tool_use_id=tool_use_id, is_error=is_error, content=content[:4000])

    def usage(self, turn: int, request_id: str | None, usage) -> None:
        self.record(
            "usage",
            turn=turn,
            request_id=request_id,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_input_tokens=getattr(usage, "cache_read_input_tokens", None) or 0,
            cache_creation_input_tokens=getattr(usage, "cache_creation_input_tokens", None) or 0,
        )

    def close(self) -> None:
        self._fh.close()

    @staticmethod
    def load(path: str | os.PathLike) -> list[dict]:
        with open(path, encoding="utf-8") as fh:
            lines = fh.readlines()
        records = []
        for lineno, line in enumerate(lines, 1):
            if not line.endswith("\n"):
                log.warning("%s:%d: incomplete final record, ignoring it", path, lineno)
                break
            records.append(json.loads(line))
        return records


class Checkpoint:
    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    def save(self, *, turn: int, messages: list[dict]) -> None:
        payload = {"turn": turn, "saved_at": time.time(), "messages": messages}
        self.path.write_text(json.dumps(payload, default=str), encoding="utf-8")

    def load(self) -> dict | None:
        if not self.path.exists():
            return None
        return json.loads(self.path.read_text(encoding="utf-8"))
