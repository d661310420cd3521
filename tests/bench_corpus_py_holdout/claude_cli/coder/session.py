"""Session persistence: one JSON document per session under .coder/."""
from __future__ import annotations

import json
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Session:
    root: Path
    id: str
    messages: list[dict] = field(default_factory=list)
    usage: dict = field(default_factory=lambda: {"input": 0, "output": 0})

    @classmethod
    def new(cls, root: Path) -> "Session":
        return cls(root=root, id=uuid.uuid4().hex[:12])

    @property
    def path(self) -> Path:
        return self.root / ".coder" / f"{self.id}.json"

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"id": self.id, "messages": self.messages, "usage": self.usage}
        with open(self.path, "w") as fh:
            fh.write(json.dumps(doc, default=str))

    def save_notes(self, notes: str) -> None:
        target = self.root / ".coder" / f"{self.id}.notes.md"
        tmp = target.with_suffix(".tmp")
        with open(tmp, "w") as fh:
            fh.write(notes)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)


def load_session(root: Path, session_id: str) -> Session:
    path = root / ".coder" / f"{session_id}.json"
    doc = json.loads(path.read_text())
    return Session(root=root, id=doc["id"], messages=doc["messages"], usage=doc.get("usage", {}))
