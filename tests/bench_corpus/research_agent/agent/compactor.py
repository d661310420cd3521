from __future__ import annotations

import json
import logging

log = logging.getLogger(__name__)

SUMMARY_SYSTEM = (
    "You compress research sessions. Reply with a single JSON object with keys "
    '"findings" (list of strings), "open_questions" (list of strings) and '
    '"sources" (list of URLs). No prose outside the JSON.'
)


def rough_tokens(messages: list[dict]) -> int:
    return sum(len(json.dumps(m["content"], default=str)) for m in messages) // 4


class Compactor:
    def __init__(self, llm, max_tokens: int = 150_000, keep_last: int = 6):
        self.llm = llm
        self.max_tokens = max_tokens
        self.keep_last = keep_last

    async def maybe_compact(self, messages: list[dict]) -> list[dict]:
        if rough_tokens(messages) < self.max_tokens:
            return messages
        log.info("compacting history of %d messages", len(messages))
        head, tail = messages[: -self.keep_last], messages[-self.keep_last :]
        resp = await self.llm.complete(
            system=SUMMARY_SYSTEM,
            tools=[],
            messages=head + [{"role": "user", "content": "Summarise the session so far."}],
        )
        data = json.loads(resp.content[0].text)
        return [{"role": "user", "content": self._render(data)}] + tail

    @staticmethod
    def _render(data: dict) -> str:
        lines = ["Summary of earlier research (older messages were compacted):", "", "Findings:"]
        lines += [f"- {f}" for f in data.get("findings", [])]
        lines += ["", "Open questions:"] + [f"- {q}" for q in data.get("open_questions", [])]
        lines += ["", "Sources:"] + [f"- {s}" for s in data.get("sources", [])]
        return "\n".join(lines)
