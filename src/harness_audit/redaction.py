"""Secrets masked out of every report: what a credential looks like, and the one pass that hides it.

The gate checks the real text of the audited files; a finding it keeps may still quote a line that
holds a key (`api_key = "sk-…"`, an `Authorization` header in a recorded trace, a private key block).
`mask_report` runs once, as the last step of `aggregate.build_report`, so every report (md, json,
sarif, the terminal summary, re-rendered and replayed runs) shows the masked text and none can skip it.
A masked secret keeps its well-known prefix (`sk-ant-`, `AKIA`) so a reader still sees what kind it was.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import fields, is_dataclass, replace
from enum import Enum
from typing import Any, TypeVar

MASK = "[masked]"
"""What stands in for a secret's body."""

_PEM = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|.*\Z)",
    re.DOTALL,
)
"""A private key block, to its END line or, when the excerpt is cut, to the end of the text."""

_KNOWN = re.compile(
    r"(?<![A-Za-z0-9_])(?:"
    r"(?P<openai>sk-(?:ant-(?:api|admin)\d{2}-|ant-|proj-|svcacct-|admin-|or-v1-|live-|test-)?)[A-Za-z0-9_\-]{16,}"
    r"|(?P<aws>(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA))[A-Z0-9]{16}(?![A-Za-z0-9])"
    r"|(?P<github>gh[pousr]_|github_pat_)[A-Za-z0-9_]{20,}"
    r"|(?P<slack>xox[abposre]-|xapp-)[A-Za-z0-9\-]{10,}"
    r"|(?P<google>AIza)[0-9A-Za-z_\-]{35,}"
    r"|(?P<gitlab>glpat-|glptt-|gldt-)[A-Za-z0-9_\-]{20,}"
    r"|(?P<huggingface>hf_)[A-Za-z0-9]{30,}"
    r"|(?P<stripe>(?:sk|rk|pk)_(?:live|test)_)[A-Za-z0-9]{16,}"
    r"|(?P<npm>npm_)[A-Za-z0-9]{36}"
    r"|(?P<pypi>pypi-)AgE[A-Za-z0-9_\-]{50,}"
    r"|(?P<groq>gsk_)[A-Za-z0-9]{40,}"
    r"|(?P<xai>xai-)[A-Za-z0-9]{40,}"
    r"|(?P<jwt>eyJ)[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"
    r")"
)
"""Key formats with a published prefix: masked wherever they appear."""

_SECRET_NAME = (r"(?<![A-Za-z0-9_.\-])[A-Za-z0-9_.\-]{0,40}(?:api[_\-]?key|apikey|secret|token|passw(?:or)?d|passwd|"
                r"pwd|credential|private[_\-]?key|access[_\-]?key|auth(?:orization)?)[A-Za-z0-9_.\-]{0,40}")
_ASSIGNED = re.compile(
    rf"(?i)(?P<name>{_SECRET_NAME})(?P<sep>[\"']?\s*(?::|=|:=|=>)\s*(?:(?P<quote>[\"'`])|(?:Bearer|Basic|Token)\s+)?)"
    r"(?P<value>[^\s\"'`,;(){}\[\]<>\\]{8,})"
)
"""`API_KEY=…`, `"token": "…"`, `password = '…'`, `Authorization: Bearer …`: a literal value given to a secret's name."""

_BEARER = re.compile(r"(?i)(?P<scheme>\b(?:Bearer|Basic)\s+)(?P<value>(?=[a-z._~\-]*[A-Z0-9+/=])[A-Za-z0-9+/_.~=\-]{16,})")
"""An HTTP credential wherever it appears (a recorded request's headers)."""

_TOKEN = re.compile(r"(?<![A-Za-z0-9+/_\-])[A-Za-z0-9+/_\-]{32,}={0,2}(?![A-Za-z0-9+/_\-])")
"""A long run of key characters: a candidate for the entropy test."""

_ID_PREFIXES = ("call_", "toolu_", "srvtoolu_", "msg_", "chatcmpl-", "resp_", "fc_", "rs_", "run_", "req_", "asst_",
                "thread_", "file-", "file_", "batch_", "ft-", "evt_", "step_", "cmpl-", "gen-")
"""Provider ids (tool calls, messages, responses): random-looking but not secrets, and traces must show them."""

_EXPRESSION = re.compile(r"[A-Za-z_$][\w$]*(?:[?!]?\.[A-Za-z_$][\w$]*)*")
"""A name or an attribute chain (`settings.openai_key`, `step.meta?.tokens`): code, not a literal."""
_MIN_ENTROPY = 4.2
"""Bits per character of a random token's own characters; identifiers and hex digests stay below it."""


def _entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


_WORDS = re.compile(r"[a-z]{4,}|[A-Z][a-z]{3,}|[0-9]{4,}")


def _random_token(token: str) -> bool:
    """A long, mixed-class, high-entropy token that is no provider id: how an unlabelled key looks.

    Not random: a path or a name made of words and numbers (half of it or more in runs of four or more lowercase
    letters or digits: `runs/20250101T120000-ab12/ledger`), and an alphabet written out (`abcd…XYZ0123…`, many characters that follow their predecessor).
    """
    if token.lower().startswith(_ID_PREFIXES):
        return False
    body = token.rstrip("=")
    has = (any(c.isupper() for c in body), any(c.islower() for c in body), any(c.isdigit() for c in body))
    if not all(has) or _entropy(body) < _MIN_ENTROPY:
        return False
    if sum(len(w) for w in _WORDS.findall(body)) * 2 >= len(body):
        return False
    return sum(ord(b) - ord(a) == 1 for a, b in zip(body, body[1:], strict=False)) * 4 < len(body)


def _assigned_secret(m: re.Match[str]) -> bool:
    """Whether an `_ASSIGNED` match gives a secret's name a literal credential (not code, a URL or a placeholder)."""
    value = m.group("value")
    if m.string.startswith(MASK, m.end()) or MASK in value:
        return False  # a known key format, already masked with its prefix kept
    if "://" in value or value.startswith(("/", ".", "$", "%")) or value.isdigit():
        return False  # a URL, a path, a variable reference, a number (`max_tokens = 4096`)
    if m.group("quote"):
        # a quoted literal: a secret unless it is a placeholder word (`"your_api_key_here"`)
        return not re.fullmatch(r"[a-z_\-]+|[A-Z_\-]+", value)
    # unquoted (.env, YAML, headers, code): a name or attribute chain is code; a value with digits is a literal
    if _EXPRESSION.fullmatch(value) and ("." in value or not any(c.isdigit() for c in value)):
        return False
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def mask_secrets(text: str) -> str:
    """`text` with every credential-looking string masked (prefixes kept); unchanged when there is none."""
    if not text:
        return text
    text = _PEM.sub("-----BEGIN PRIVATE KEY----- " + MASK, text)
    text = _KNOWN.sub(lambda m: next(g for g in m.groups() if g is not None) + MASK, text)
    text = _ASSIGNED.sub(lambda m: m.group("name") + m.group("sep") + MASK if _assigned_secret(m) else m.group(0), text)
    text = _BEARER.sub(lambda m: m.group("scheme") + MASK, text)
    return _TOKEN.sub(lambda m: MASK if _random_token(m.group(0)) else m.group(0), text)


def looks_like_secret(text: str) -> bool:
    """Whether `text` holds anything `mask_secrets` would mask."""
    return mask_secrets(text) != text


_T = TypeVar("_T")

_KEEP = frozenset({"fingerprint", "file_sha256", "run_id", "started_at", "finished_at", "commit", "tool_version",
                   "root", "ledger", "path"})
"""Fields that hold what the tool itself made or found (hashes, ids, times, real paths), never quoted text."""
_KEEP_LOCATED = frozenset({"file", "also_at"})
"""Paths a finding or landmark cites, canonicalised by the gate (a refusal's `file` is as submitted: masked)."""


def mask_value(value: _T) -> _T:
    """`value` with `mask_secrets` applied to every free-text string in it (dataclasses, tuples, dicts)."""
    return _mask(value)  # type: ignore[no-any-return]


def _mask(value: Any) -> Any:
    if isinstance(value, Enum):
        return value  # a closed value of ours (a check id, a verdict, a reason)
    if isinstance(value, str):
        return mask_secrets(value)
    if isinstance(value, tuple):
        return tuple(_mask(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, list):
        return [_mask(v) for v in value]  # pyright: ignore[reportUnknownVariableType]
    if isinstance(value, dict):
        return {k: _mask(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType]
    if is_dataclass(value) and not isinstance(value, type):
        changes: dict[str, Any] = {}
        for f in fields(value):
            if f.name in _KEEP or (f.name in _KEEP_LOCATED and type(value).__name__ in ("Finding", "Landmark")):
                continue
            old = getattr(value, f.name)
            new = _mask(old)
            if new is not old and new != old:
                changes[f.name] = new
        return replace(value, **changes) if changes else value
    return value
