"""Roles over small projects: what the role finders must survive (their detection is tested by the query fixtures)."""

from __future__ import annotations

from pathlib import Path

from harness_audit.findings import LandmarkKind
from harness_audit.static.sem.engine import SemProject, landmarks
from harness_audit.workspace import Workspace


def test_tool_loop_survives_locals_bound_through_each_other(tmp_path: Path) -> None:
    """Risk: following `a = pick(b)`, `b = pick(a)` for a tool name recursed until the stack overflowed (agno),
    and the preview lost every check of the audit."""
    (tmp_path / "loop.py").write_text(
        "def run(msg, tools):\n"
        "    for call in msg.tool_calls:\n"
        "        a = pick(b)\n"
        "        b = pick(a)\n"
        "        tools.get(a)(call)\n"
    )
    ws = Workspace.open(tmp_path)
    project = SemProject.build(ws, ws.discover().files)
    assert [(m.kind, m.line) for m in landmarks(project)] == [(LandmarkKind.TOOL_EXECUTION, 2)]


def _history_ops(tmp_path: Path, name: str, source: str) -> list[tuple[str, str, int]]:
    (tmp_path / name).write_text(source)
    ws = Workspace.open(tmp_path)
    project = SemProject.build(ws, ws.discover().files)
    return [(op.kind, op.store.name, op.site.line) for op in project.roles.history_ops]


_AGENT = '''from openai import OpenAI

client = OpenAI()


class Agent:
    def __init__(self):
        self._messages = []

    @property
    def messages(self):
        return [dict(m) for m in self._messages]

    def _append(self, added):
        new = self._messages + added
        self._messages = new

    def _trim(self, num):
        self._messages = [self._messages[0]] + self._messages[num:]

    def _prepend(self, added):
        self._messages = [self._messages[0]] + added + self._messages[1:]

    def _swap_system(self, system):
        self._messages = [system] + self._messages[1:]

    def step(self, text):
        self._append([{"role": "user", "content": text}])
        reply = client.chat.completions.create(model="m", messages=self.messages)
'''


def test_history_kept_by_rebinding_behind_a_property(tmp_path: Path) -> None:
    """Risk: a harness that appends by rebinding through a helper (`self._m = self._m + added`, the messages
    handed in by its callers) and sends a copy made by a property was not seen to keep a history at all (letta),
    so none of its cuts was looked at. Inserting after the first message or swapping it drops nothing: not a cut."""
    assert _history_ops(tmp_path, "agent.py", _AGENT) == [
        ("replace", "_messages", 8), ("append", "_messages", 16), ("cut", "_messages", 19),
        ("replace", "_messages", 22), ("replace", "_messages", 25), ("read", "_messages", 29)]


def test_history_kept_by_spreading_read_through_a_getter(tmp_path: Path) -> None:
    """Risk: `this.h = [...this.h, m]` and a getter that hands out the field itself were invisible in TS."""
    source = (
        'import OpenAI from "openai";\n'
        "const client = new OpenAI();\n"
        "export class Agent {\n"
        "  private h: any[] = [];\n"
        "  get messages() { return this.h; }\n"
        "  async step(text: string) {\n"
        '    this.h = [...this.h, { role: "user", content: text }];\n'
        '    await client.chat.completions.create({ model: "m", messages: this.messages });\n'
        "    this.messages.splice(1, 2);\n"
        "  }\n"
        "}\n")
    assert _history_ops(tmp_path, "agent.ts", source) == [
        ("append", "h", 7), ("cut", "h", 9), ("read", "h", 8)]


def test_history_sent_through_a_helper_that_builds_the_request(tmp_path: Path) -> None:
    """Risk: a history sent only inside a payload a method builds from the field (`json=self._payload()`) was
    never seen to be sent, so it was no history and its cuts went unjudged."""
    source = (
        "import httpx\n"
        "class Chat:\n"
        "    def __init__(self):\n"
        "        self.history = []\n"
        "    def _payload(self):\n"
        '        body = {"model": "m", "messages": self.history}\n'
        "        return body\n"
        "    def send(self, text):\n"
        '        self.history.append({"role": "user", "content": text})\n'
        '        httpx.post("https://api.openai.com/v1/chat/completions", json=self._payload())\n')
    assert ("read", "history", 10) in _history_ops(tmp_path, "chat.py", source)
