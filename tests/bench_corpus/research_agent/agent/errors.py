from __future__ import annotations

import json
from enum import Enum


class ToolErrorCode(str, Enum):
    INVALID_INPUT = "invalid_input"
    NOT_FOUND = "not_found"
    DENIED = "denied"
    TIMEOUT = "timeout"
    RATE_LIMITED = "rate_limited"
    UNAVAILABLE = "unavailable"
    UPSTREAM = "upstream_error"
    INTERNAL = "internal"

    @property
    def retryable(self) -> bool:
        return self in {ToolErrorCode.TIMEOUT, ToolErrorCode.RATE_LIMITED, ToolErrorCode.UNAVAILABLE}


class ToolError(Exception):
    def __init__(self, code: ToolErrorCode, message: str):
        super().__init__(message)
        self.code = code
        self.message = message

    def to_result(self) -> str:
        return json.dumps(
            {"error": self.code.value, "retryable": self.code.retryable, "message": self.message}
        )


def classify_http_status(tool: str, status: int) -> ToolError:
    if status == 404:
        code = ToolErrorCode.NOT_FOUND
    elif status in (401, 403):
        code = ToolErrorCode.DENIED
    elif status == 429:
        code = ToolErrorCode.RATE_LIMITED
    elif status >= 500:
        code = ToolErrorCode.UNAVAILABLE
    else:
        code = ToolErrorCode.UPSTREAM
    return ToolError(code, f"{tool}: upstream answered HTTP {status}")


class LLMErrorKind(str, Enum):
    RATE_LIMITED = "rate_limited"
    OVERLOADED = "overloaded"
    UNAVAILABLE = "unavailable"
    BAD_REQUEST = "bad_request"
    AUTH = "auth"

    @property
    def fatal(self) -> bool:
        return self in (LLMErrorKind.BAD_REQUEST, LLMErrorKind.AUTH)


class LLMError(Exception):
    def __init__(self, kind: LLMErrorKind, detail: str):
        super().__init__(f"{kind.value}: {detail}")
        self.kind = kind
