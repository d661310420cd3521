"""Failure codes shared by tools, the tool node and the model client."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class ToolErrorCode(str, Enum):
    BAD_ARGUMENTS = "bad_arguments"
    UNKNOWN_TOOL = "unknown_tool"
    DENIED = "denied"
    NOT_FOUND = "not_found"
    TIMEOUT = "timeout"
    UPSTREAM = "upstream"
    CANCELLED = "cancelled"
    INTERNAL = "internal"

    @property
    def retryable(self) -> bool:
        return self in (ToolErrorCode.TIMEOUT, ToolErrorCode.UPSTREAM)


class ToolError(Exception):
    def __init__(self, code: ToolErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def render(self) -> str:
        hint = "It may succeed if retried." if self.code.retryable else "Do not retry it unchanged."
        return f"[{self.code.value}] {self.message}. {hint}"


@dataclass(frozen=True)
class ToolOk:
    content: str


ToolOutcome = ToolOk | ToolError


class ModelErrorCode(str, Enum):
    RATE_LIMITED = "rate_limited"
    UNAVAILABLE = "unavailable"
    AUTH = "auth"
    BAD_REQUEST = "bad_request"
    OUTPUT_TRUNCATED = "output_truncated"

    @property
    def retryable(self) -> bool:
        return self in (ModelErrorCode.RATE_LIMITED, ModelErrorCode.UNAVAILABLE)


class ModelError(Exception):
    def __init__(self, code: ModelErrorCode, message: str, status: int | None = None) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.status = status


def classify_status(status: int) -> ModelErrorCode:
    if status == 429:
        return ModelErrorCode.RATE_LIMITED
    if status in (401, 403):
        return ModelErrorCode.AUTH
    if status >= 500:
        return ModelErrorCode.UNAVAILABLE
    return ModelErrorCode.BAD_REQUEST
