"""Celery entry points."""
from __future__ import annotations

import os

from celery import Celery

from .loop import AgentLoop
from .state import RunState

celery_app = Celery("agent", broker=os.environ.get("BROKER_URL", "redis://localhost:6379/0"))
celery_app.conf.task_acks_late = True


@celery_app.task(bind=True, autoretry_for=(Exception,), retry_backoff=True, max_retries=3)
def run_agent(self, run_id: str, prompt: str, max_turns: int = 30) -> dict:
    state = RunState(run_id)
    if not state.exists():
        state.init(prompt)
    loop = AgentLoop(state=state, max_turns=max_turns)
    return loop.run()
