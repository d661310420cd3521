"""Tools exposed to the support model.

Every tool takes keyword arguments matching its JSON schema and returns a
string that goes back to the model verbatim.
"""
from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from . import ticketing

log = logging.getLogger(__name__)

KB_ROOT = os.environ.get("KB_ROOT", "/srv/support/kb")
ATTACHMENTS_ROOT = Path(os.environ.get("ATTACHMENTS_ROOT", "/srv/support/attachments"))
DRAFTS_ROOT = Path(os.environ.get("DRAFTS_ROOT", "/srv/support/drafts"))

MAX_ATTACHMENT_BYTES = 2_000_000


def read_kb_article(path: str) -> str:
    full = os.path.join(KB_ROOT, path)
    with open(full, encoding="utf-8") as fh:
        return fh.read()[:20_000]


def read_attachment(ticket_id: str, filename: str) -> str:
    base = ATTACHMENTS_ROOT.resolve()
    target = (base / ticket_id / filename).resolve()
    if not target.is_relative_to(base):
        return f"Attachment {filename!r} is not available for ticket {ticket_id}."
    if not target.is_file():
        return f"No attachment named {filename!r} on ticket {ticket_id}."
    if target.stat().st_size > MAX_ATTACHMENT_BYTES:
        return f"Attachment {filename!r} is too large to display ({target.stat().st_size} bytes)."
    return target.read_text(encoding="utf-8", errors="replace")


def save_reply_draft(ticket_id: str, relpath: str, text: str) -> str:
    root = DRAFTS_ROOT.resolve()
    checked = (root / ticket_id / relpath).resolve()
    if not checked.is_relative_to(root):
        return "Refused: drafts must live under the drafts folder."
    dest = os.path.join(DRAFTS_ROOT, ticket_id, relpath)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    with open(dest, "w", encoding="utf-8") as fh:
        fh.write(text)
    return f"Draft saved ({len(text)} chars)."


def lookup_ticket(ticket_id: str) -> str:
    try:
        t = ticketing.get_ticket(ticket_id)
    except Exception as e:
        return f"Error: {e}"
    keep = ("id", "subject", "status", "priority", "assignee", "updated_at")
    return json.dumps({k: t.get(k) for k in keep})


def list_open_tickets(customer_id: str) -> str:
    items = ticketing.search_tickets(customer_id)
    if not items:
        return "No open tickets."
    return "\n".join(f"#{t['id']} [{t['priority']}] {t['subject']}" for t in items)


def open_ticket(customer_id: str, subject: str, body: str, priority: str = "normal") -> str:
    t = ticketing.create_ticket(customer_id, subject, body, priority)
    return f"Created ticket #{t['id']}."


def comment_on_ticket(ticket_id: str, text: str, internal: bool = False) -> str:
    ticketing.add_comment(ticket_id, text, internal=internal)
    return f"Comment added to #{ticket_id}."


def close_ticket(ticket_id: str, resolution: str) -> str:
    ticketing.close_ticket(ticket_id, resolution)
    return f"Closed ticket #{ticket_id}."


def bulk_close_tickets(ticket_ids: list[str], resolution: str) -> str:
    closed: list[str] = []
    try:
        for tid in ticket_ids:
            ticketing.close_ticket(tid, resolution)
            closed.append(tid)
    except Exception as exc:
        log.error("bulk close failed: %s", exc)
        return "Could not close the tickets, please try again later."
    return f"Closed {len(closed)} tickets: " + ", ".join(f"#{t}" for t in closed)


def _obj(props: dict, required: list[str]) -> dict:
    return {"type": "object", "properties": props, "required": required}


_S = {"type": "string"}

TOOLS: dict[str, dict] = {
    "read_kb_article": {
        "fn": read_kb_article,
        "description": "Read a knowledge-base article by its relative path, e.g. 'billing/refunds.md'.",
        "parameters": _obj({"path": _S}, ["path"]),
    },
    "read_attachment": {
        "fn": read_attachment,
        "description": "Read a text attachment the customer uploaded to a ticket.",
        "parameters": _obj({"ticket_id": _S, "filename": _S}, ["ticket_id", "filename"]),
    },
    "save_reply_draft": {
        "fn": save_reply_draft,
        "description": "Save a draft reply for a human agent to review.",
        "parameters": _obj({"ticket_id": _S, "relpath": _S, "text": _S}, ["ticket_id", "relpath", "text"]),
    },
    "lookup_ticket": {
        "fn": lookup_ticket,
        "description": "Fetch the current state of a ticket.",
        "parameters": _obj({"ticket_id": _S}, ["ticket_id"]),
    },
    "list_open_tickets": {
        "fn": list_open_tickets,
        "description": "List the customer's open tickets.",
        "parameters": _obj({"customer_id": _S}, ["customer_id"]),
    },
    "open_ticket": {
        "fn": open_ticket,
        "description": "Open a new support ticket on behalf of the customer.",
        "parameters": _obj(
            {"customer_id": _S, "subject": _S, "body": _S, "priority": {"enum": ["low", "normal", "high"]}},
            ["customer_id", "subject", "body"],
        ),
    },
    "comment_on_ticket": {
        "fn": comment_on_ticket,
        "description": "Add a comment to a ticket. internal=true hides it from the customer.",
        "parameters": _obj({"ticket_id": _S, "text": _S, "internal": {"type": "boolean"}}, ["ticket_id", "text"]),
    },
    "close_ticket": {
        "fn": close_ticket,
        "description": "Close a ticket with a resolution note.",
        "parameters": _obj({"ticket_id": _S, "resolution": _S}, ["ticket_id", "resolution"]),
    },
    "bulk_close_tickets": {
        "fn": bulk_close_tickets,
        "description": "Close several tickets with the same resolution note.",
        "parameters": _obj(
            {"ticket_ids": {"type": "array", "items": _S}, "resolution": _S},
            ["ticket_ids", "resolution"],
        ),
    },
}

# tools that need a human "yes" in the operator console before they run
NEEDS_CONFIRMATION = frozenset({"close_ticket", "bulk_close_tickets"})
