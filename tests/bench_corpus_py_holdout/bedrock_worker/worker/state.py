"""Run state in redis: the message list plus a small status hash."""
from __future__ import annotations

import json
import os

import redis

_redis = redis.Redis.from_url(os.environ.get("STATE_URL", "redis://localhost:6379/1"))


class RunState:
    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.key = f"run:{run_id}"

    def exists(self) -> bool:
        return bool(_redis.exists(f"{self.key}:messages"))

    def init(self, prompt: str) -> None:
        pipe = _redis.pipeline(transaction=True)
        pipe.rpush(f"{self.key}:messages", json.dumps({"role": "user", "content": [{"text": prompt}]}))
        pipe.hset(f"{self.key}:meta", mapping={"status": "running", "turns": 0})
        pipe.execute()

    def messages(self) -> list[dict]:
        return [json.loads(m) for m in _redis.lrange(f"{self.key}:messages", 0, -1)]

    def checkpoint(self, messages: list[dict], turns: int) -> None:
        _redis.delete(f"{self.key}:messages")
        _redis.rpush(f"{self.key}:messages", *[json.dumps(m) for m in messages])
        _redis.hset(f"{self.key}:meta", "turns", turns)

    def record_tool(self, tool_name: str, ok: bool) -> None:
        _redis.hincrby(f"{self.key}:tools", f"{tool_name}:{'ok' if ok else 'err'}", 1)

    def finish(self, status: str) -> None:
        _redis.hset(f"{self.key}:meta", "status", status)
