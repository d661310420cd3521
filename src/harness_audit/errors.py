"""The whole error taxonomy: user mistakes, incomplete audits and per-check failure codes."""

from __future__ import annotations

from enum import StrEnum


class HarnessAuditError(Exception):
    """Base class of every error harness-audit raises on purpose."""

    exit_code: int = 3


class UsageError(HarnessAuditError):
    """A bad flag, path or check selection: the user can fix it (exit 2)."""

    exit_code = 2


class ConfigError(UsageError):
    """A bad configuration key or value; the message names the key and what is allowed (exit 2)."""


class AuditIncomplete(HarnessAuditError):
    """The audit could not finish (exit 3)."""

    exit_code = 3


class FailureCode(StrEnum):
    """Closed set of reasons a single check unit can fail; it becomes `failed:<code>`."""

    PROVIDER_UNAVAILABLE = "provider-unavailable"
    PROVIDER_ERROR = "provider-error"
    RATE_LIMITED = "rate-limited"
    TIMEOUT = "timeout"
    BUDGET_EXHAUSTED = "budget-exhausted"
    MALFORMED_OUTPUT = "malformed-output"
    CANCELLED = "cancelled"
    INTERNAL_ERROR = "internal-error"

    @property
    def retryable(self) -> bool:
        """Whether running the same unit again may succeed without any change."""
        return self in {FailureCode.PROVIDER_UNAVAILABLE, FailureCode.RATE_LIMITED, FailureCode.TIMEOUT}
