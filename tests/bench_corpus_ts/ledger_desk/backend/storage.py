"""Shared notebook storage: one JSON file per note under NOTES_DIR."""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
import uuid
from pathlib import Path

NOTES_DIR = Path(os.environ.get("LEDGER_NOTES_DIR", "/var/lib/ledger-desk/notes"))


def _write_atomic(path: Path, payload: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(payload, fh, ensure_ascii=False)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def save_note(title: str, body: str, tags: list[str], author: str) -> dict:
    note = {
        "id": uuid.uuid4().hex[:12],
        "title": title.strip()[:200],
        "body": body,
        "tags": sorted(set(tags)),
        "author": author,
        "created_at": time.time(),
    }
    _write_atomic(NOTES_DIR / f"{note['id']}.json", note)
    return note


def list_notes(limit: int = 50) -> list[dict]:
    out = []
    for p in sorted(NOTES_DIR.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)[:limit]:
        with open(p, encoding="utf-8") as fh:
            out.append(json.load(fh))
    return out
