"""Turn a streamed chat completion into one assistant turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable


@dataclass
class PendingCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass
class AssistantTurn:
    content: str
    tool_calls: list[PendingCall] = field(default_factory=list)
    finish_reason: str | None = None

    def as_message(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": "assistant", "content": self.content or None}
        if self.tool_calls:
            msg["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        return msg


class StreamAccumulator:
    """Collects deltas; tool-call fragments are keyed by their stream index."""

    def __init__(self, on_text: Callable[[str], None] | None = None) -> None:
        self._text: list[str] = []
        self._calls: dict[int, PendingCall] = {}
        self.finish_reason: str | None = None
        self._on_text = on_text

    def feed(self, chunk: Any) -> None:
        if not chunk.choices:
            return
        choice = chunk.choices[0]
        delta = choice.delta
        if delta.content:
            self._text.append(delta.content)
            if self._on_text:
                self._on_text(delta.content)
        for frag in delta.tool_calls or ():
            slot = self._calls.setdefault(frag.index, PendingCall())
            if frag.id:
                slot.id = frag.id
            fn = frag.function
            if fn is not None and fn.name:
                slot.name += fn.name
            if fn is not None and fn.arguments:
                slot.arguments += fn.arguments
        if choice.finish_reason:
            self.finish_reason = choice.finish_reason

    def result(self) -> AssistantTurn:
        ordered = [self._calls[i] for i in sorted(self._calls)]
        return AssistantTurn("".join(self._text), ordered, self.finish_reason)


def collect(stream: Iterable[Any], on_text: Callable[[str], None] | None = None) -> AssistantTurn:
    acc = StreamAccumulator(on_text)
    for chunk in stream:
        acc.feed(chunk)
    return acc.result()
