"""The whole error taxonomy: user mistakes, incomplete audits and per-check failure codes.

Every error a user sees is a catalogue message (`harness_audit.messages`): raised as `UsageError("err.…",
value=…)`, it carries the message id and its values, and the one error printer (`cli.main`) shows it in the
reader's language. `str(error)` is the English text, for logs, ledgers and tests.
"""

from __future__ import annotations

import errno as _errno
from enum import StrEnum

from harness_audit.messages import EN, Msg


class HarnessAuditError(Exception):
    """Base class of every error harness-audit raises on purpose.

    Raised with a message id and its values (`UsageError("err.path.missing", path=…)`) or a ready `Msg`. A plain
    sentence is still accepted (it reaches the user as written, in English); `tests/test_messages.py` refuses one
    in the source.
    """

    exit_code: int = 3

    def __init__(self, message: str | Msg, /, **values: object) -> None:
        if isinstance(message, Msg):
            self.msg: Msg | None = message
        elif message in EN:
            self.msg = Msg(message, **values)
        else:
            self.msg = None
        """The catalogue message, or None for a plain sentence."""
        super().__init__(str(self.msg) if self.msg is not None else message)

    def message(self, lang: str) -> str:
        """The error in `lang` (`en` or `zh`); a plain sentence as it was written."""
        return self.msg.render(lang) if self.msg is not None else str(self)


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


_ERRNO_REASONS = {
    _errno.EACCES: "err.reason.permission", _errno.EPERM: "err.reason.not_permitted",
    _errno.ENOENT: "err.reason.missing", _errno.ENAMETOOLONG: "err.reason.too_long",
    _errno.ELOOP: "err.reason.loop", _errno.EROFS: "err.reason.read_only", _errno.ENOSPC: "err.reason.no_space",
    _errno.EISDIR: "err.reason.is_dir", _errno.EIO: "err.reason.io", _errno.EBUSY: "err.reason.busy",
    _errno.EDQUOT: "err.reason.quota", _errno.EMFILE: "err.reason.too_many_open",
    _errno.EXDEV: "err.reason.cross_device",
    _errno.ENXIO: "err.reason.no_device",
}
"""OS errors users meet on a path they gave, in words both languages have."""


def os_reason(exc: BaseException) -> Msg:
    """Why an OS call on a user's path failed, as a message: the common errors in both languages, the others as
    the system says them."""
    if isinstance(exc, RuntimeError):  # what `Path.resolve` raises for a symlink loop on Python 3.11
        return Msg("err.reason.loop")
    if isinstance(exc, ValueError):
        if "null" in str(exc).lower():
            return Msg("err.reason.nul")
        return Msg("err.reason.other", detail=str(exc))
    if isinstance(exc, FileExistsError):
        return Msg("err.reason.exists_not_dir")
    if isinstance(exc, NotADirectoryError):
        return Msg("err.reason.not_dir_part")
    if isinstance(exc, OSError) and exc.errno in _ERRNO_REASONS:
        return Msg(_ERRNO_REASONS[exc.errno])
    detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
    return Msg("err.reason.other", detail=detail)


def path_error(what: Msg, path: object, exc: OSError | ValueError | RuntimeError) -> UsageError:
    """The one translation of an OS error on a path the user gave (the audited path, `--output-dir`, a trace,
    a configuration file) into a named, one-line `UsageError` (exit 2) instead of an internal error.

    `what` says what the path was for, e.g. `Msg("what.output_dir")`; the message names the path (shortened when
    very long, bytes that are not UTF-8 escaped) and the reason in plain words.
    """
    return UsageError("err.path.cannot_use", path=_shown(path), what=what, reason=os_reason(exc))
