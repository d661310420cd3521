"""HTTP backend for Ledger Desk tools. Runs next to the desktop app on 127.0.0.1."""
from __future__ import annotations

import csv
import enum
import os
import subprocess
import sys
import tempfile

import psycopg
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel

from . import storage

app = FastAPI(title="ledger-desk-backend")

WAREHOUSE_DSN = os.environ.get("LEDGER_WAREHOUSE_DSN", "postgresql://readonly@warehouse/ledger")
EXPORT_DIR = os.environ.get("LEDGER_EXPORT_DIR", "/var/lib/ledger-desk/exports")
ANALYSIS_TIMEOUT_S = 60
QUERY_TIMEOUT_MS = 15_000


class ErrorCode(enum.StrEnum):
    QUERY_TIMEOUT = "query_timeout"
    QUERY_REJECTED = "query_rejected"
    WAREHOUSE_UNAVAILABLE = "warehouse_unavailable"
    ANALYSIS_TIMEOUT = "analysis_timeout"
    BAD_PATH = "bad_path"

    @property
    def retryable(self) -> bool:
        return self in {ErrorCode.QUERY_TIMEOUT, ErrorCode.WAREHOUSE_UNAVAILABLE, ErrorCode.ANALYSIS_TIMEOUT}


def fail(status: int, code: ErrorCode, message: str) -> HTTPException:
    return HTTPException(status_code=status, detail={"code": code.value, "retryable": code.retryable, "message": message})


@app.get("/query")
def query(sql: str, limit: int = 200) -> dict:
    if not sql.lstrip().lower().startswith(("select", "with")):
        raise fail(400, ErrorCode.QUERY_REJECTED, "only SELECT queries are allowed")
    try:
        with psycopg.connect(WAREHOUSE_DSN, connect_timeout=5) as conn:
            conn.read_only = True
            with conn.cursor() as cur:
                cur.execute(f"SET statement_timeout = {QUERY_TIMEOUT_MS}")
                cur.execute(sql)
                cols = [d.name for d in cur.description or []]
                rows = cur.fetchmany(min(limit, 1000))
    except psycopg.errors.QueryCanceled:
        raise fail(504, ErrorCode.QUERY_TIMEOUT, f"query exceeded {QUERY_TIMEOUT_MS} ms") from None
    except psycopg.OperationalError as exc:
        raise fail(503, ErrorCode.WAREHOUSE_UNAVAILABLE, str(exc)) from None
    except psycopg.Error as exc:
        raise fail(400, ErrorCode.QUERY_REJECTED, str(exc)) from None
    return {"columns": cols, "rows": [list(map(str, r)) for r in rows]}


class NoteIn(BaseModel):
    title: str
    body: str
    tags: list[str] = []


@app.post("/notes")
def create_note(note: NoteIn) -> dict:
    return storage.save_note(note.title, note.body, note.tags, author=os.environ.get("USER", "desk"))


class AnalysisIn(BaseModel):
    code: str


@app.post("/analysis/run")
def run_analysis(req: AnalysisIn) -> dict:
    with tempfile.TemporaryDirectory(prefix="analysis-") as work:
        try:
            proc = subprocess.run(
                [sys.executable, "-I", "-c", req.code],
                cwd=work,
                capture_output=True,
                text=True,
                timeout=ANALYSIS_TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            raise fail(504, ErrorCode.ANALYSIS_TIMEOUT, f"analysis exceeded {ANALYSIS_TIMEOUT_S}s") from None
    return {"returncode": proc.returncode, "stdout": proc.stdout[-20_000:], "stderr": proc.stderr[-5_000:]}


class ExportIn(BaseModel):
    sql: str
    filename: str


@app.post("/exports")
def create_export(req: ExportIn) -> dict:
    target = os.path.abspath(os.path.join(EXPORT_DIR, req.filename))
    if not target.startswith(EXPORT_DIR):
        raise fail(400, ErrorCode.BAD_PATH, "exports must stay inside the export folder")
    result = query(req.sql, limit=1000)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(result["columns"])
        writer.writerows(result["rows"])
    return {"path": target, "rows": len(result["rows"])}
