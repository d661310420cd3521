from __future__ import annotations

from datetime import datetime

from .tools import TOOLS

SYSTEM_TEMPLATE = """You are Aria, the support assistant for Example Cloud.

Today is {today}; the local time at the support desk is {clock}.

Guidelines:
- Be concise and friendly. Never promise refunds; open a ticket instead.
- Look things up in the knowledge base before answering policy questions.
- Only close tickets the customer explicitly says are resolved.
- If you are unsure, say so and offer to escalate to a human.
"""


def build_system_prompt(customer: dict | None = None) -> str:
    now = datetime.now()
    prompt = SYSTEM_TEMPLATE.format(today=now.strftime("%A %d %B %Y"), clock=now.strftime("%H:%M"))
    if customer:
        prompt += (
            f"\nYou are talking to {customer.get('name', 'a customer')} "
            f"(customer id {customer['id']}, plan: {customer.get('plan', 'unknown')})."
        )
    return prompt


def tool_schemas() -> list[dict]:
    schemas = []
    for name in sorted(TOOLS):
        spec = TOOLS[name]
        schemas.append(
            {
                "type": "function",
                "function": {
                    "name": name,
                    "description": spec["description"],
                    "parameters": spec["parameters"],
                },
            }
        )
    return schemas
