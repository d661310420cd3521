"""Hostile family "pytest plugin": the assertions and `load_trace` called with anything a test author could pass.

Each call must pass, fail with an `AssertionError` (a finding), or refuse the argument with a `TypeError` or
`ValueError` that names it; `load_trace` and `assert_trace_clean` may also raise the documented `NotATrace` /
`UsageError`. Any other exception (AttributeError, KeyError, RecursionError…) is a bug; so is passing on
garbage, which the family checks on inputs that are garbage by construction.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness_audit.errors import HarnessAuditError
from harness_audit.pytest_plugin import (
    assert_append_only,
    assert_prefix_stable,
    assert_tool_pairing,
    assert_trace_clean,
    assert_within_limits,
    load_trace,
)
from tests.hostile.runner import hostile_settings, record
from tests.hostile.strategies import chat_message, json_value, request_body, response_body

FAMILY = "pytest-plugin"
EXAMPLES = 320

odd_value = st.one_of(json_value, st.sampled_from([b"x", object(), {1, 2}, (1, 2), float("nan"), ..., print]))
ceiling = st.one_of(st.none(), st.integers(-3, 300), st.sampled_from(["x", "5", 1.5, True, [], float("inf")]))
dialect = st.sampled_from(["auto", "auto", "openai-chat", "anthropic", "gemini", "openai-responses", "bogus", 5])


def _outcome(call: Callable[[], object]) -> str:
    """`pass`, `finding`, or `refused`; any other exception fails the test."""
    try:
        call()
    except AssertionError:
        return "finding"
    except (TypeError, ValueError, HarnessAuditError) as exc:
        assert str(exc).strip(), f"{type(exc).__name__} without a message"
        return "refused"
    except Exception as exc:  # the point of the family: name the exception that escaped
        pytest.fail(f"{type(exc).__name__} escaped: {exc!r:.300}")
    return "pass"


@st.composite
def plugin_call(draw: st.DrawFn) -> tuple[str, Callable[[], object], bool]:
    """(name, call, garbage): `garbage` when the arguments are wrong by construction (they may never pass)."""
    which = draw(st.sampled_from(["pairing", "pairing", "append", "prefix", "limits", "limits"]))
    if which == "pairing":
        if draw(st.booleans()):
            messages: Any = draw(st.lists(chat_message(), max_size=5))
            garbage = False
        else:
            messages = draw(st.lists(st.one_of(st.integers(), st.none(), st.text(max_size=3)), min_size=1, max_size=4)
                            | st.sampled_from([5, None, 1.5, object()]))
            garbage = True
        d = draw(dialect)
        return "assert_tool_pairing", lambda: assert_tool_pairing(messages, d), garbage
    if which == "append":
        requests = draw(st.lists(st.one_of(request_body(), st.tuples(request_body(), response_body()), odd_value),
                                 max_size=4) | odd_value)
        return "assert_append_only", lambda: assert_append_only(requests, dialect=draw(dialect)), False
    if which == "prefix":
        older, newer = draw(request_body() | odd_value), draw(request_body() | odd_value)
        upto = draw(st.sampled_from(["messages", "system", "bogus"]))
        if draw(st.booleans()):
            state = draw(json_value)
            return "assert_prefix_stable", lambda: assert_prefix_stable(lambda s: {"messages": [s]}, state), False
        return "assert_prefix_stable", lambda: assert_prefix_stable(older, newer, upto=upto), False  # type: ignore[arg-type]
    requests = draw(st.lists(st.one_of(request_body(), odd_value), max_size=4) | odd_value)
    limits = {"max_turns": draw(ceiling), "max_tool_calls": draw(ceiling), "max_identical_calls": draw(ceiling)}
    bad = any(v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1) for v in limits.values())
    return "assert_within_limits", lambda: assert_within_limits(requests, **limits), bad


@hostile_settings(EXAMPLES)
@given(case=plugin_call())
def test_any_call_of_an_assertion_passes_fails_or_names_the_bad_argument(case: tuple[str, Callable[[], object],
                                                                                      bool]) -> None:
    record(FAMILY)
    name, call, garbage = case
    outcome = _outcome(call)
    assert not (garbage and outcome == "pass"), f"{name} passed on garbage"


files = st.one_of(
    st.lists(st.one_of(request_body(), json_value), max_size=4).map(
        lambda rs: "".join(json.dumps({"request": r}) + "\n" for r in rs).encode()),
    st.sampled_from([b"", b"\x00", b"{", b'{"log": {"entries": [{"request": "x"}]}}', b"interactions: [1]\n",
                     b"interactions:\n- &a [*a]\n", ("[" * 5000 + "]" * 5000).encode()]),
)


@hostile_settings(max(EXAMPLES // 4, 1))
@given(data=files, fmt=st.sampled_from([None, None, "jsonl", "har", "vcr", "bogus"]),
       checks=st.sampled_from([None, ["C1"], ["c12"], ["C3"], "C1", [5]]))
def test_load_trace_and_assert_trace_clean_read_any_file_or_refuse_it(data: bytes, fmt: str | None,
                                                                        checks: Any) -> None:
    record(FAMILY)
    base = Path(tempfile.mkdtemp(prefix="plugin-"))
    try:
        path = base / "t.jsonl"
        path.write_bytes(data)
        _outcome(lambda: load_trace(path, fmt))
        _outcome(lambda: assert_trace_clean(path, checks=checks, format=fmt))
        _outcome(lambda: assert_within_limits(path))
    finally:
        shutil.rmtree(base, ignore_errors=True)
