"""Session persistence."""

import json
from pathlib import Path

SESSIONS = Path("sessions")


def save_session(session_id: str, messages: list) -> None:
    path = SESSIONS / f"{session_id}.json"
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(messages, fh)


def load_session(session_id: str) -> list:
    return json.loads((SESSIONS / f"{session_id}.json").read_text(encoding="utf-8"))
