"""Tool handlers. Each takes validated args plus the originating call id."""

from __future__ import annotations

import base64
import os
from concurrent.futures import ThreadPoolExecutor, as_completed
from datetime import timezone
from typing import Any, Callable, Iterable

from .audit import Outbox
from .http import CalendarClient, MailClient, SlackClient, UpstreamError
from .models import (BookEventArgs, BroadcastArgs, FreeBusyArgs, RemindArgs,
                     SendEmailArgs, SlackPostArgs)

ATTACHMENT_DIR = os.environ.get("MAILBOT_ATTACHMENTS", "/var/lib/mailbot/attachments")
MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024

Handler = Callable[..., str]


def _fn(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


_EMAILS = {"type": "array", "items": {"type": "string", "format": "email"}}
_TIME = {"type": "string", "format": "date-time"}

TOOL_SPECS: dict[str, dict[str, Any]] = {
    "send_email": _fn("send_email", "Send (or schedule) an email. Requires approval.",
                      {"to": _EMAILS, "cc": _EMAILS, "subject": {"type": "string"},
                       "body": {"type": "string"},
                       "attachments": {"type": "array", "items": {"type": "string"}},
                       "send_at": _TIME},
                      ["to", "subject", "body"]),
    "post_slack": _fn("post_slack", "Post a message to a Slack channel or DM. Requires approval.",
                      {"channel": {"type": "string"}, "text": {"type": "string"},
                       "thread_ts": {"type": "string"}},
                      ["channel", "text"]),
    "broadcast_slack": _fn("broadcast_slack", "Post the same message to several channels.",
                           {"channels": {"type": "array", "items": {"type": "string"}},
                            "text": {"type": "string"}},
                           ["channels", "text"]),
    "book_event": _fn("book_event", "Create a calendar event and invite attendees.",
                      {"title": {"type": "string"}, "start": _TIME, "end": _TIME,
                       "attendees": _EMAILS, "location": {"type": "string"}},
                      ["title", "start", "end"]),
    "find_free_time": _fn("find_free_time", "Look up busy intervals for attendees.",
                          {"attendees": _EMAILS, "start": _TIME, "end": _TIME},
                          ["attendees", "start", "end"]),
    "send_reminders": _fn("send_reminders", "Email the same reminder to each attendee separately.",
                          {"attendees": _EMAILS, "subject": {"type": "string"},
                           "body": {"type": "string"}},
                          ["attendees", "subject", "body"]),
}


def tool_definitions(enabled: Iterable[str]) -> list[dict[str, Any]]:
    names = set(enabled) & TOOL_SPECS.keys()
    return [TOOL_SPECS[name] for name in names]


def load_attachments(names: list[str]) -> list[dict[str, str]]:
    files = []
    for name in names:
        full = os.path.join(ATTACHMENT_DIR, name)
        with open(full, "rb") as fh:
            data = fh.read(MAX_ATTACHMENT_BYTES + 1)
        if len(data) > MAX_ATTACHMENT_BYTES:
            raise ValueError(f"attachment {name} is larger than 10 MiB")
        files.append({"filename": os.path.basename(name),
                      "content": base64.b64encode(data).decode("ascii")})
    return files


class Toolbox:
    def __init__(self, mail: MailClient, slack: SlackClient, calendar: CalendarClient,
                 outbox: Outbox) -> None:
        self.mail = mail
        self.slack = slack
        self.calendar = calendar
        self.outbox = outbox

    def handlers(self) -> dict[str, Handler]:
        return {
            "send_email": self.send_email,
            "post_slack": self.post_slack,
            "broadcast_slack": self.broadcast_slack,
            "book_event": self.book_event,
            "find_free_time": self.find_free_time,
            "send_reminders": self.send_reminders,
        }

    def send_email(self, args: SendEmailArgs, call_id: str) -> str:
        attachments = load_attachments(args.attachments)
        message = {"to": [str(a) for a in args.to], "cc": [str(a) for a in args.cc],
                   "subject": args.subject, "body": args.body, "attachments": attachments}
        if args.send_at is not None:
            item_id = self.outbox.enqueue(message, args.send_at.timestamp(), origin=call_id)
            return f"Scheduled for {args.send_at.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC (outbox id {item_id})"
        message_id = self.mail.send(**message)
        return f"Sent (message id {message_id})"

    def post_slack(self, args: SlackPostArgs, call_id: str) -> str:
        ts = self.slack.post_message(args.channel, args.text, args.thread_ts)
        return f"Posted to {args.channel} (ts {ts})"

    def broadcast_slack(self, args: BroadcastArgs, call_id: str) -> str:
        posted: list[str] = []
        try:
            for channel in args.channels:
                self.slack.post_message(channel, args.text)
                posted.append(channel)
        except UpstreamError as exc:
            return f"Broadcast failed: {exc}"
        return "Posted to " + ", ".join(posted)

    def book_event(self, args: BookEventArgs, call_id: str) -> str:
        event = {
            "summary": args.title,
            "start": args.start.isoformat(),
            "end": args.end.isoformat(),
            "attendees": [{"email": str(a)} for a in args.attendees],
            "location": args.location,
        }
        created = self.calendar.create_event(event, idempotency_key=f"mailbot-{call_id}")
        return f"Booked '{args.title}' ({created['id']}), invites sent to {len(args.attendees)}"

    def find_free_time(self, args: FreeBusyArgs, call_id: str) -> str:
        busy = self.calendar.free_busy([str(a) for a in args.attendees],
                                       args.start.isoformat(), args.end.isoformat())
        if not busy:
            return "Everyone is free in that window."
        lines = [f"{b['attendee']}: {b['start']} - {b['end']}" for b in busy]
        return "Busy:\n" + "\n".join(lines)

    def send_reminders(self, args: RemindArgs, call_id: str) -> str:
        sent: list[str] = []
        failed: list[tuple[str, str]] = []
        with ThreadPoolExecutor(max_workers=8) as pool:
            futures = {
                pool.submit(self.mail.send, [str(addr)], args.subject, args.body): str(addr)
                for addr in args.attendees
            }
            for fut in as_completed(futures):
                addr = futures[fut]
                try:
                    fut.result()
                    sent.append(addr)
                except Exception as exc:
                    failed.append((addr, type(exc).__name__))
        summary = f"Reminder sent to {len(sent)} of {len(futures)}: {', '.join(sorted(sent)) or 'none'}"
        if failed:
            summary += "\nNot sent: " + ", ".join(f"{a} ({why})" for a, why in sorted(failed))
        return summary
