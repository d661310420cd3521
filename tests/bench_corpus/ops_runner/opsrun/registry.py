from __future__ import annotations

import importlib.util
import logging
import os
from dataclasses import dataclass
from typing import Callable

log = logging.getLogger("opsrun.registry")


@dataclass
class Tool:
    name: str
    description: str
    parameters: dict
    fn: Callable[..., str]
    cancellable: bool = False

    def schema(self) -> dict:
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


class ToolRegistry:
    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            log.warning("tool %s registered twice; keeping the later one", tool.name)
        self._tools[tool.name] = tool

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def _load_plugin(self, path: str) -> None:
        modname = "opsrun_plugin_" + os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(modname, path)
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception:
            log.exception("plugin %s failed to import", path)
            return
        for tool in getattr(module, "TOOLS", ()):
            self.register(tool)

    def discover(self, plugin_dir: str) -> None:
        for entry in os.listdir(plugin_dir):
            if entry.endswith(".py") and not entry.startswith("_"):
                self._load_plugin(os.path.join(plugin_dir, entry))

    def schemas(self) -> list[dict]:
        return [tool.schema() for tool in self._tools.values()]
