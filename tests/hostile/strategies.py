"""Building blocks of the hostile families: secrets to plant, hostile names, JSON of any shape, near-valid bodies.

Every strategy here is deterministic under the suite's seeded settings (`runner.hostile_settings`).
"""

from __future__ import annotations

import json
import os
import string
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

SECRETS: tuple[str, ...] = (
    "sk-proj-Zx81Qm4Lr7Tb2Vn9Kc5Hd3Jf6Wg0Ps1Ya8",
    "sk-ant-api03-Qw7Er2Ty9Ui4Op1As6Df3Gh8Jk5Lz0Xc",
    "AKIAIOSFODNN7EXAMPLE",
    "ghp_9sKd8Jf7Hg6Fd5Sa4Qw3Er2Ty1Ui0OpLkJhGfDs",
    "xoxb-2931-8837-Hq81jHGs62kd",
    "AIzaSyD3k9Lm2Np8Qr5St1Uv7Wx4Yz6Ab0Cd2Ef",
    "glpat-Xy7Zw8Vu9Ts0Rq1Po2Nm3L",
    "Zq8Xw3Rt5Yu1Io7Pa9Sd2Fg4Hj6Kl0Mn3Bv5Cx8",
)
"""Credentials a generator plants; none may appear in any report."""

secret = st.sampled_from(SECRETS)

_TRICKY = ["[/z]", "[bold]", "q[/x]", "{", "}", "%s", "%n", "$(id)", "`id`", "\\", "'", '"', "\t", " ", "..", "~",
           "-", "--", "-rf", "\u202e", "\u200b", "ℌ", "é", "日本", "🙂", "١", "１", "\udcff"]
"""Pieces of names and text that have broken printers, parsers and shells before."""

name_piece = st.one_of(
    st.text(alphabet=string.ascii_letters + string.digits + "_-.", min_size=1, max_size=12),
    st.sampled_from(_TRICKY),
    st.text(min_size=1, max_size=6).filter(lambda s: "/" not in s and "\0" not in s),
)


def _safe_name(parts: list[str]) -> str:
    name = "".join(parts).replace("/", "_").replace("\0", "_")
    return name if name not in ("", ".", "..") else "n"


file_stem = st.lists(name_piece, min_size=1, max_size=3).map(_safe_name).filter(
    lambda s: len(os.fsencode(s)) < 120)
"""A file or directory name (no `/`, never `.` or `..`); may hold lone surrogates (bytes that are not UTF-8)."""

json_scalar = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                        st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=20),
                        st.sampled_from(["", "x", "tool", "assistant", "user", "function", "call_1"]))
json_value = st.recursive(json_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8) | st.sampled_from(
        ["role", "content", "tool_calls", "id", "type", "messages", "input", "contents", "parts", "function",
         "arguments", "name", "tool_call_id", "choices", "message", "request", "response", "usage"]), inner,
        max_size=4)), max_leaves=12)
"""JSON of any shape, biased towards the keys the trace dialects read."""


def nested(depth: int, kind: str = "[") -> str:
    """JSON text nested `depth` levels deep."""
    close = "]" if kind == "[" else "}"
    inner = "[" * depth + "]" * depth if kind == "[" else '{"a":' * depth + "1" + close * depth
    return inner


_ROLES = st.sampled_from(["system", "user", "assistant", "tool", "developer", "function", "model", "", 5, None])


@st.composite
def chat_message(draw: st.DrawFn) -> Any:
    """An OpenAI Chat message, sometimes with one field of the wrong type."""
    message: dict[str, Any] = {"role": draw(_ROLES)}
    if draw(st.booleans()):
        message["content"] = draw(st.one_of(st.text(max_size=30), st.none(), json_value, secret))
    if draw(st.booleans()):
        message["tool_calls"] = draw(st.one_of(
            st.lists(st.fixed_dictionaries({"id": st.sampled_from(["call_1", "call_2", ""]) | json_scalar,
                                            "type": st.just("function"),
                                            "function": st.fixed_dictionaries({
                                                "name": st.sampled_from(["run", "read"]) | json_scalar,
                                                "arguments": st.sampled_from(['{"a": 1}', "{", "null"]) | json_value,
                                            }) | json_value}), max_size=3),
            json_value))
    if draw(st.booleans()):
        message["tool_call_id"] = draw(st.sampled_from(["call_1", "call_2"]) | json_scalar)
    return message if draw(st.integers(0, 9)) else draw(json_value)


@st.composite
def request_body(draw: st.DrawFn) -> Any:
    """A request body of some dialect, near-valid more often than not."""
    dialect = draw(st.sampled_from(["messages", "input", "contents", "raw"]))
    if dialect == "raw":
        return draw(json_value)
    if dialect == "messages":
        body: dict[str, Any] = {"model": "m", "messages": draw(st.lists(chat_message(), max_size=5))}
        if draw(st.booleans()):
            body["system"] = draw(st.text(max_size=10) | json_value)
    elif dialect == "input":
        body = {"model": "m", "input": draw(st.one_of(st.text(max_size=10), st.lists(json_value, max_size=4)))}
    else:
        body = {"contents": draw(st.lists(st.one_of(
            st.fixed_dictionaries({"role": _ROLES, "parts": st.lists(json_value, max_size=3) | json_value}),
            json_value), max_size=4))}
    return body


@st.composite
def response_body(draw: st.DrawFn) -> Any:
    """A response body, near-valid more often than not."""
    if draw(st.integers(0, 3)) == 0:
        return draw(json_value)
    return {"id": "r1", "choices": [{"message": draw(chat_message()),
                                     "finish_reason": draw(st.sampled_from(["stop", "length", "tool_calls"]))}],
            "usage": draw(st.one_of(st.none(), json_value, st.fixed_dictionaries({
                "prompt_tokens": json_scalar, "completion_tokens": json_scalar})))}


def write_json_lines(path: Path, values: list[Any]) -> None:
    """Values as JSON Lines (non-ASCII kept)."""
    path.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in values), encoding="utf-8",
                    errors="surrogatepass")
