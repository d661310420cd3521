"""Tool plugin registry. Tools are discovered from the `agent_service.tools` entry-point group."""
from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Awaitable, Callable


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict
    handler: Callable[..., Awaitable[str]]
    timeout: float = 30.0


_REGISTRY: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    _REGISTRY[tool.name] = tool
    return tool


def discover() -> None:
    for ep in entry_points(group="agent_service.tools"):
        register(ep.load())


def get(name: str) -> Tool | None:
    return _REGISTRY.get(name)


def schemas(enabled: list[str]) -> list[dict]:
    wanted = set(enabled) if enabled else set(_REGISTRY)
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in _REGISTRY.values()
        if t.name in wanted
    ]
