"""sqlite3 persistence for runs, messages and events."""
from __future__ import annotations

import json
import sqlite3
import time
import uuid

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (id TEXT PRIMARY KEY, tools TEXT, status TEXT, created REAL);
CREATE TABLE IF NOT EXISTS messages (run_id TEXT, seq INTEGER, body TEXT, PRIMARY KEY (run_id, seq));
CREATE TABLE IF NOT EXISTS events (run_id TEXT, ts REAL, kind TEXT, data TEXT);
"""


class Store:
    def __init__(self, path: str) -> None:
        self.conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.conn.executescript(SCHEMA)

    def create_run(self, tools: list[str]) -> str:
        run_id = uuid.uuid4().hex
        self.conn.execute("INSERT INTO runs VALUES (?, ?, 'running', ?)", (run_id, json.dumps(tools), time.time()))
        return run_id

    def get_run(self, run_id: str) -> dict | None:
        row = self.conn.execute("SELECT id, tools, status FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            return None
        return {"id": row[0], "tools": json.loads(row[1]), "status": row[2]}

    def finish_run(self, run_id: str, status: str) -> None:
        self.conn.execute("UPDATE runs SET status = ? WHERE id = ?", (status, run_id))

    def load_messages(self, run_id: str) -> list[dict]:
        rows = self.conn.execute("SELECT body FROM messages WHERE run_id = ? ORDER BY seq", (run_id,))
        return [json.loads(r[0]) for r in rows]

    def append_messages(self, run_id: str, msgs: list[dict]) -> None:
        self.conn.execute("BEGIN")
        try:
            (start,) = self.conn.execute(
                "SELECT COALESCE(MAX(seq) + 1, 0) FROM messages WHERE run_id = ?", (run_id,)
            ).fetchone()
            self.conn.executemany(
                "INSERT INTO messages VALUES (?, ?, ?)",
                [(run_id, start + i, json.dumps(m)) for i, m in enumerate(msgs)],
            )
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def replace_messages(self, run_id: str, msgs: list[dict]) -> None:
        self.conn.execute("DELETE FROM messages WHERE run_id = ?", (run_id,))
        for i, m in enumerate(msgs):
            self.conn.execute("INSERT INTO messages VALUES (?, ?, ?)", (run_id, i, json.dumps(m)))

    def log_event(self, run_id: str, kind: str, data: dict) -> None:
        self.conn.execute(
            "INSERT INTO events VALUES (?, ?, ?, ?)", (run_id, time.time(), kind, json.dumps(data))
        )
