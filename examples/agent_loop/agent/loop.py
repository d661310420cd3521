"""The turn loop: ask the model, run the tools it asks for, repeat."""

import json
import logging
from datetime import datetime

from openai import OpenAI

from agent.store import save_session
from agent.tools import TOOLS, TOOL_SPECS

log = logging.getLogger(__name__)
client = OpenAI()


def system_prompt(user_name: str) -> str:
    now = datetime.now().strftime("%Y-%m-%d %H:%M")
    return f"You are a helpful ops assistant for {user_name}. Current time: {now}."


def run_agent(user_name: str, task: str, session_id: str) -> str:
    messages = [
        {"role": "system", "content": system_prompt(user_name)},
        {"role": "user", "content": task},
    ]
    while True:
        response = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=messages,
            tools=TOOL_SPECS,
        )
        message = response.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            save_session(session_id, messages)
            return message.content or ""
        for call in message.tool_calls:
            args = json.loads(call.function.arguments)
            try:
                output = TOOLS[call.function.name](**args)
            except Exception as exc:
                log.warning("tool %s failed: %s", call.function.name, exc)
                continue
            messages.append({"role": "tool", "tool_call_id": call.id, "content": str(output)})
        if len(messages) > 40:
            messages = [messages[0]] + messages[-20:]
