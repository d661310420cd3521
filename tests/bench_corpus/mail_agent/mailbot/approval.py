"""Human approval for outbound messages."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any, TextIO


@dataclass(frozen=True)
class Decision:
    approved: bool
    reviewer: str | None = None
    reason: str | None = None


def render_preview(call: Any) -> str:
    args = json.loads(call.function.arguments)
    name = call.function.name
    if name == "send_email":
        head = f"To: {', '.join(args.get('to', []))}"
        if args.get("cc"):
            head += f"\nCc: {', '.join(args['cc'])}"
        files = args.get("attachments") or []
        extra = f"\nAttachments: {', '.join(files)}" if files else ""
        return f"{head}\nSubject: {args.get('subject', '')}{extra}\n\n{args.get('body', '')}"
    if name in ("post_slack", "broadcast_slack"):
        where = args.get("channel") or ", ".join(args.get("channels", []))
        return f"Slack -> {where}\n\n{args.get('text', '')}"
    return json.dumps(args, indent=2)


class ConsoleApprover:
    def __init__(self, reviewer: str, stream_in: TextIO = sys.stdin, stream_out: TextIO = sys.stdout):
        self.reviewer = reviewer
        self._in = stream_in
        self._out = stream_out

    def review(self, call: Any) -> Decision:
        preview = render_preview(call)
        self._out.write(f"\n--- {call.function.name} ---\n{preview}\n---\nSend? [y/N/reason] ")
        self._out.flush()
        answer = self._in.readline().strip()
        if answer.lower() in ("y", "yes"):
            return Decision(True, self.reviewer)
        return Decision(False, self.reviewer, answer or None)

