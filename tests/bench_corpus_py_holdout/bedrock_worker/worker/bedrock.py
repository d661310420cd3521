"""Thin wrapper around the Bedrock Converse streaming API."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

MODEL_ID = os.environ.get("BEDROCK_MODEL", "anthropic.claude-3-5-sonnet-20240620-v1:0")

_client = boto3.client(
    "bedrock-runtime",
    config=Config(read_timeout=300, retries={"max_attempts": 0}),
)


class ThrottledError(Exception):
    pass


@dataclass
class Turn:
    content: list[dict] = field(default_factory=list)
    stop_reason: str = ""
    usage: dict = field(default_factory=dict)


@retry(
    retry=retry_if_exception_type(ThrottledError),
    stop=stop_after_attempt(5),
    wait=wait_exponential(multiplier=1, max=30),
)
def converse(system: list[dict], messages: list[dict], tool_config: dict) -> Turn:
    try:
        resp = _client.converse_stream(
            modelId=MODEL_ID,
            system=system,
            messages=messages,
            toolConfig=tool_config,
            inferenceConfig={"maxTokens": 4096},
        )
    except ClientError as e:
        if e.response["Error"]["Code"] == "ThrottlingException":
            raise ThrottledError(str(e)) from e
        raise RuntimeError(f"bedrock call failed: {e}") from e

    turn = Turn()
    tool_blocks: list[dict] = []
    raw_input: dict[int, str] = {}
    for event in resp["stream"]:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]["start"]
            if "toolUse" in start:
                tool_blocks.append({"toolUse": {**start["toolUse"], "input": {}}})
        elif "contentBlockDelta" in event:
            idx = event["contentBlockDelta"]["contentBlockIndex"]
            delta = event["contentBlockDelta"]["delta"]
            if "text" in delta:
                if not turn.content or "text" not in turn.content[-1]:
                    turn.content.append({"text": ""})
                turn.content[-1]["text"] += delta["text"]
            elif "toolUse" in delta:
                raw_input[idx] = raw_input.get(idx, "") + delta["toolUse"]["input"]
        elif "contentBlockStop" in event:
            idx = event["contentBlockStop"]["contentBlockIndex"]
            if idx in raw_input:
                tool_blocks[idx]["toolUse"]["input"] = json.loads(raw_input.pop(idx))
        elif "messageStop" in event:
            turn.stop_reason = event["messageStop"]["stopReason"]
        elif "metadata" in event:
            turn.usage = event["metadata"].get("usage", {})
    turn.content.extend(tool_blocks)
    return turn
