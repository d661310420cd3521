"""Conversation types and tool argument schemas."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterator, Literal

from pydantic import BaseModel, EmailStr, Field

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: str | None = None
    tool_calls: tuple[dict[str, Any], ...] = ()
    tool_call_id: str | None = None

    @classmethod
    def user(cls, text: str) -> "Message":
        return cls("user", text)

    @classmethod
    def tool(cls, call_id: str, content: str) -> "Message":
        return cls("tool", content, tool_call_id=call_id)

    @classmethod
    def from_api(cls, msg: Any) -> "Message":
        calls = tuple(
            {"id": c.id, "type": "function",
             "function": {"name": c.function.name, "arguments": c.function.arguments}}
            for c in (msg.tool_calls or ())
        )
        return cls("assistant", msg.content, calls)

    def to_api(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [dict(c) for c in self.tool_calls]
        if self.tool_call_id:
            out["tool_call_id"] = self.tool_call_id
        return out


@dataclass
class History:
    """Append-only transcript. Trimming happens on a copy when a request is built."""

    system: Message
    _items: list[Message] = field(default_factory=list)

    def append(self, msg: Message) -> None:
        self._items.append(msg)

    def __iter__(self) -> Iterator[Message]:
        return iter(self._items)

    def snapshot(self) -> list[Message]:
        return list(self._items)


class SendEmailArgs(BaseModel):
    to: list[EmailStr] = Field(min_length=1, max_length=50)
    subject: str = Field(max_length=300)
    body: str
    cc: list[EmailStr] = []
    attachments: list[str] = []
    send_at: datetime | None = None


class SlackPostArgs(BaseModel):
    channel: str = Field(pattern=r"^[#@]?[\w.-]+$")
    text: str = Field(max_length=4000)
    thread_ts: str | None = None


class BroadcastArgs(BaseModel):
    channels: list[str] = Field(min_length=1, max_length=20)
    text: str = Field(max_length=4000)


class BookEventArgs(BaseModel):
    title: str
    start: datetime
    end: datetime
    attendees: list[EmailStr] = []
    location: str | None = None


class FreeBusyArgs(BaseModel):
    attendees: list[EmailStr]
    start: datetime
    end: datetime


class RemindArgs(BaseModel):
    attendees: list[EmailStr] = Field(min_length=1)
    subject: str
    body: str


ARG_MODELS: dict[str, type[BaseModel]] = {
    "send_email": SendEmailArgs,
    "post_slack": SlackPostArgs,
    "broadcast_slack": BroadcastArgs,
    "book_event": BookEventArgs,
    "find_free_time": FreeBusyArgs,
    "send_reminders": RemindArgs,
}
