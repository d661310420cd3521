"""HTTP front end: start a run, post follow-ups, read the transcript."""
from __future__ import annotations

import asyncio
import logging
import os

import httpx
from fastapi import BackgroundTasks, FastAPI, HTTPException
from pydantic import BaseModel

from .runner import run_agent
from .store import Store

log = logging.getLogger("svc")
app = FastAPI()
store = Store(os.environ.get("AGENT_DB", "agent.db"))
WEBHOOK_URL = os.environ.get("RESULT_WEBHOOK")


class StartRun(BaseModel):
    message: str
    tools: list[str] = []


class FollowUp(BaseModel):
    message: str


async def _notify(run_id: str, result: dict) -> None:
    if not WEBHOOK_URL:
        return
    async with httpx.AsyncClient(timeout=10) as client:
        for attempt in range(4):
            try:
                resp = await client.post(WEBHOOK_URL, json={"run_id": run_id, **result})
                resp.raise_for_status()
                return
            except httpx.HTTPError as e:
                log.warning("webhook attempt %d failed: %s", attempt, e)
                await asyncio.sleep(2 ** attempt)


async def _execute(run_id: str, tools: list[str]) -> None:
    try:
        result = await run_agent(store, run_id, tools)
        store.finish_run(run_id, result["status"])
        await _notify(run_id, result)
    except asyncio.CancelledError:
        log.info("run %s cancelled", run_id)
        store.finish_run(run_id, "cancelled")
    except Exception:
        log.exception("run %s crashed", run_id)
        store.finish_run(run_id, "error")


@app.post("/runs")
async def start_run(body: StartRun, background: BackgroundTasks) -> dict:
    run_id = store.create_run(body.tools)
    store.append_messages(run_id, [{"role": "user", "content": body.message}])
    background.add_task(_execute, run_id, body.tools)
    return {"run_id": run_id}


@app.post("/runs/{run_id}/messages")
async def follow_up(run_id: str, body: FollowUp, background: BackgroundTasks) -> dict:
    run = store.get_run(run_id)
    if run is None:
        raise HTTPException(404)
    history = store.load_messages(run_id)
    if history and history[-1]["role"] == "user":
        history[-1]["content"] += "\n\n" + body.message
    else:
        history.append({"role": "user", "content": body.message})
    store.replace_messages(run_id, history)
    background.add_task(_execute, run_id, run["tools"])
    return {"run_id": run_id}


@app.get("/runs/{run_id}")
async def get_run(run_id: str) -> dict:
    run = store.get_run(run_id)
    if run is None:
        raise HTTPException(404)
    return {**run, "messages": store.load_messages(run_id)}
