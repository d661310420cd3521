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
    EMPTY_RESULT = "empty-result"
    """The model ended its unit without reporting anything where the code shows there is something to report."""
    CANCELLED = "cancelled"
    INTERNAL_ERROR = "internal-error"

    @property
    def retryable(self) -> bool:
        """Whether running the same unit again may succeed without any change."""
        return self in {FailureCode.PROVIDER_UNAVAILABLE, FailureCode.RATE_LIMITED, FailureCode.TIMEOUT}


def _shown(path: object) -> str:
    text = str(path).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text if len(text) <= 160 else f"{text[:100]}…{text[-50:]} ({len(text)} characters)"


def path_error(what: str, path: object, exc: OSError | ValueError | RuntimeError) -> UsageError:
    """The one translation of an OS error on a path the user gave (the audited path, `--output-dir`, a trace,
    a configuration file) into a named, one-line `UsageError` (exit 2) instead of an internal error.

    `what` says what the path was for, e.g. "the output directory"; the message names the path (shortened when
    very long, bytes that are not UTF-8 escaped) and the reason in plain words.
    """
    if isinstance(exc, RuntimeError):  # what `Path.resolve` raises for a symlink loop on Python 3.11
        reason = "a symbolic link loop"
    elif isinstance(exc, ValueError):
        reason = "the path contains a NUL character" if "null" in str(exc).lower() else str(exc)
    elif isinstance(exc, FileExistsError):
        reason = "it exists and is not a directory"
    elif isinstance(exc, NotADirectoryError):
        reason = "a part of it is not a directory"
    else:
        reason = exc.strerror or type(exc).__name__
    return UsageError(f"cannot use {_shown(path)!r} as {what}: {reason}")
