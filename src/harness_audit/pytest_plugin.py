"""Pytest plugin: deterministic assertions over a harness's own requests and recorded traces.

Installing harness-audit registers this module as the `pytest11` entry point `harness_audit`, which
provides the `harness_trace` fixture. The assertions are plain functions, importable anywhere:

    from harness_audit.pytest_plugin import assert_append_only, assert_prefix_stable, assert_tool_pairing

- `assert_tool_pairing(messages)`: every tool call answered by exactly one result, by the dialect's rule.
- `assert_append_only(requests)`: each request re-sends the previous one's messages unchanged, then its response.
- `assert_prefix_stable(build_request, state)`: two builds from the same state have the same prompt prefix;
  `assert_prefix_stable(older, newer)`: the newer request keeps the older one's prefix.
- `assert_within_limits(requests_or_trace, max_turns=..., max_tool_calls=..., max_identical_calls=...)`.
- `load_trace(path)` (the `harness_trace` fixture) and `assert_trace_clean(path)`: any format the checker reads.

Every rule is the trace checker's own: the same dialect normalisation (OpenAI Chat, OpenAI Responses,
Anthropic, Gemini, detected from the shape), the same pairing, append-only and prefix comparisons and the
same ceilings, so an assertion fails exactly where `harness-audit trace` reports. A failure raises
`AssertionError` with a short message naming the request, the message, the call id or the field. Nothing
of the checker is imported until an assertion runs, so loading the plugin costs a pytest session nothing.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn, cast

import pytest

if TYPE_CHECKING:
    from harness_audit.findings import Candidate
    from harness_audit.trace.model import Api, Exchange, Message, Request, Source
    from harness_audit.trace.summary import RequestSummary

__all__ = [
    "Conversation",
    "Dialect",
    "Trace",
    "assert_append_only",
    "assert_prefix_stable",
    "assert_tool_pairing",
    "assert_trace_clean",
    "assert_within_limits",
    "harness_trace",
    "load_trace",
]

Dialect = Literal["auto", "openai-chat", "openai-responses", "anthropic", "gemini"]
"""The wire dialect of the bodies given; `auto` detects it from their shape, as the trace checker does."""

_DIALECTS: tuple[str, ...] = ("auto", "openai-chat", "openai-responses", "anthropic", "gemini")
_LIST_FILE = "<requests>"
"""`Source.file` of bodies given as a list: they are labelled `requests[i]`, not by a file line."""
_MAX_LINES = 12
"""Problems listed in one failure message; the rest are counted."""
_AROUND = 40
"""Characters shown before and after a first difference."""
_RESPONSES_ITEMS = frozenset({"function_call", "function_call_output", "reasoning", "message", "custom_tool_call",
                              "custom_tool_call_output"})
_PREFIX_KEYS = ("tools", "system", "instructions", "systemInstruction", "system_instruction", "messages", "input",
                "contents")
"""Request fields that make up the cached prefix in some dialect (for the key-order check of two builds)."""
_UNSET: Any = object()


# ---------------------------------------------------------------------------------------------- loaded traces

@dataclass(frozen=True, slots=True, kw_only=True)
class Conversation:
    """One conversation of a trace, as the checker split it (by session, else by history continuity)."""

    number: int
    """1-based, in order of first request."""
    session: str | None
    """The explicit session id when the trace records one."""
    exchanges: tuple[Exchange, ...]
    """Its requests with their responses, normalised, in file order (pass this object to the assertions)."""

    @property
    def requests(self) -> tuple[Request, ...]:
        """The normalised requests: `messages` of `Message`s with their `calls` and `results`."""
        return tuple(ex.request for ex in self.exchanges if ex.request is not None)


@dataclass(frozen=True, slots=True, kw_only=True)
class Trace:
    """A trace file read into the checker's event model."""

    path: Path
    """The file."""
    format: str
    """Its format (`jsonl`, `vcr`, `har`, `otel`, `ledger`, `swe-agent`, `openhands`)."""
    exchanges: tuple[Exchange, ...]
    """Every model exchange in file order (request, response, tool calls and results, usage, truncation)."""
    conversations: tuple[Conversation, ...]
    """The exchanges split into conversations."""
    malformed: tuple[tuple[int, str], ...]
    """(line, reason) of every record that could not be read."""
    ignored: int
    """Records that were not model traffic (auth, telemetry, MCP, polling)."""


def load_trace(path: str | os.PathLike[str], format: str | None = None) -> Trace:  # noqa: A002 - the CLI's word
    """Read a trace file (JSONL request log, VCR cassette, HAR, OTel GenAI spans, ledger, …) into conversations.

    Args:
        path: The trace file.
        format: Force the format instead of detecting it from the content.

    Raises:
        harness_audit.trace.NotATrace: The file is not a trace in any supported format.
    """
    from harness_audit.trace import FORMATS, exchanges_of
    from harness_audit.trace.checker import Checker, Options
    from harness_audit.trace.model import Malformed
    from harness_audit.trace.readers import detect

    file = Path(path)
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown trace format {format!r}; expected one of {', '.join(FORMATS)}")
    fmt = format or detect(file)[0]
    checker = Checker(file.name, lambda _source, _needle: "", Options(checks=frozenset()))
    exchanges: list[Exchange] = []
    by_conversation: dict[int, list[Exchange]] = {}
    sessions: dict[int, str | None] = {}
    malformed: list[tuple[int, str]] = []
    ignored = 0
    for ex in exchanges_of(file, fmt):  # pyright: ignore[reportArgumentType]
        if ex is None:
            ignored += 1
        elif isinstance(ex, Malformed):
            malformed.append((ex.source.line, ex.reason))
        else:
            exchanges.append(ex)
            number = checker.feed(ex)
            if number is not None:
                by_conversation.setdefault(number, []).append(ex)
                sessions.setdefault(number, ex.session)
    conversations = tuple(Conversation(number=n, session=sessions[n], exchanges=tuple(exs))
                          for n, exs in sorted(by_conversation.items()))
    return Trace(path=file, format=fmt, exchanges=tuple(exchanges), conversations=conversations,
                 malformed=tuple(malformed), ignored=ignored)


@pytest.fixture
def harness_trace() -> Callable[..., Trace]:
    """`load_trace`: read a trace file into conversations, e.g. `harness_trace("run.jsonl").conversations`."""
    return load_trace


# ---------------------------------------------------------------------------------------------- the assertions

def assert_tool_pairing(messages: Any, dialect: Dialect = "auto", *, allow_pending: bool = False) -> None:
    """Every tool call is answered by exactly one result, where the dialect needs it, and no result is orphaned.

    The rule is the provider's: OpenAI Chat needs the `tool` messages right after the assistant message,
    Anthropic the `tool_result` blocks in the next user message, Gemini as many `functionResponse` parts
    in the next turn (by position and name when there are no ids), OpenAI Responses a `function_call_output`
    anywhere in the input. Call ids used twice fail too.

    Args:
        messages: A request's history (`messages`, Responses `input` items or Gemini `contents`), a whole request
            body, or a request of a loaded trace (`Exchange` or `Request`).
        dialect: The wire dialect, or `auto` to detect it from the shape.
        allow_pending: Accept unanswered calls in a last assistant message that ends the history (a history
            captured right after the response, before the tools ran).
    """
    __tracebackhide__ = True
    from harness_audit.trace.pairing import analyse

    req = _request_of_messages(messages, dialect)
    known: set[str] | None = None if (req.previous_response_id or req.conversation) else set()
    pairing = analyse(req, known)
    msgs = req.messages
    lines: list[str] = []
    for prob in pairing.problems:
        if (prob.kind == "unanswered" and allow_pending and prob.in_last_assistant
                and prob.index == len(msgs) - 1):
            continue
        label = f"`{prob.call_id}`" if prob.call_id else "without id"
        if prob.kind == "unanswered":
            lines.append(f"tool call {label} ({prob.name}) in messages[{prob.index}] has no result "
                         f"{_where_result(req.api, msgs, prob.index)}")
        elif prob.kind == "answered-twice":
            lines.append(f"tool call {label} ({prob.name}) in messages[{prob.index}] is answered more than once")
        else:
            lines.append(f"tool result {label} in messages[{prob.index}] answers no call "
                         f"{'in this input' if req.api == 'openai-responses' else 'of the assistant message before it'}")
    lines += [f"call id `{call_id}` is used by more than one call (again in messages[{index}])"
              for call_id, index in pairing.duplicate_ids]
    if lines:
        _fail(f"tool pairing broken ({req.api} history of {len(msgs)} messages):", lines)


def assert_append_only(requests: Any, *, dialect: Dialect = "auto") -> None:
    """Each request starts with the previous request's messages, unchanged, followed by its response when given.

    Messages compare by their canonical JSON (sorted keys, cache-breakpoint markers ignored); the response is
    carried when its text and calls come back (call ids may be renamed on intake; reasoning is not compared),
    as the trace checker's C2 rules say. A request that continues server-held history (OpenAI Responses
    `previous_response_id` or `conversation`) sends only new items and is not compared.

    Args:
        requests: The requests of ONE conversation, in order: request bodies, `(request, response)` pairs
            (a response body, a recorded stream as text, or None), or a `Conversation` of a loaded trace.
        dialect: The wire dialect, or `auto` to detect it from the shape.
    """
    __tracebackhide__ = True
    from harness_audit.trace.checker import echo_problem
    from harness_audit.trace.summary import common_messages, summarise

    exchanges = _exchanges(requests, dialect)
    for n in range(1, len(exchanges)):
        a, b = exchanges[n - 1], exchanges[n]
        ra, rb = a.request, b.request
        if ra is None or rb is None or ra.partial or rb.partial or rb.previous_response_id or rb.conversation:
            continue
        old, new = _label(n - 1, a.source), _label(n, b.source)
        common = common_messages(summarise(ra, a.source), summarise(rb, b.source))
        if common < len(ra.messages):
            if common >= len(rb.messages):
                _fail(f"{new} is not append-only over {old}: it drops messages[{common}:] ({len(rb.messages)} "
                      f"messages, {old} had {len(ra.messages)})", [])
            before, after = ra.messages[common], rb.messages[common]
            field, va, vb = _changed_field(before, after)
            _fail(f"{new} is not append-only over {old}: messages[{common}] ({before.role}) changed at field "
                  f"`{field}`", _excerpts((old, va), (new, vb)))
        resp = a.response
        if resp is None or not resp.ok or resp.message is None:
            continue
        k = len(ra.messages)
        echo = rb.messages[k] if k < len(rb.messages) else None
        problem = echo_problem(resp.message, echo)
        if problem is not None:
            width = len(f"messages[{k}]:") + 1
            _fail(f"{new} does not carry the response to {old} as messages[{k}]: {problem}",
                  [f"{'response:':<{width}}{_gist(resp.message)}",
                   f"{f'messages[{k}]:':<{width}}{_gist(echo) if echo is not None else '(none)'}"])


def assert_prefix_stable(build_request: Any, state: Any = _UNSET, /, *, upto: Literal["messages", "system"] = "messages",
                         dialect: Dialect = "auto") -> None:
    """The prompt prefix (tools, system prompt, messages; canonical JSON, in cache order) is stable.

    `assert_prefix_stable(build_request, state)` calls `build_request` twice, each time on a deep copy of
    `state`, and requires the same canonical prefix from both (a timestamp, a random id or an unordered set in
    a prompt fails), and the same key order in those fields (what a client serialises and a cache sees).
    `assert_prefix_stable(older, newer)` requires `newer` to start with the whole prefix of `older` (the next
    request of the same conversation); with `upto="system"` only the tools, the system prompt and the leading
    system messages must be kept (two requests of different conversations that should share a cache entry); a
    newer request that continues server-held history (Responses `previous_response_id`) is compared that way too.
    The failure names the first differing segment and field, and the byte offset in the canonical prefix.

    Args:
        build_request: The harness's request builder (returning a request body: a mapping or JSON text), or the
            older of two requests (a body, or an `Exchange` of a loaded trace).
        state: What the builder takes, or the newer request.
        upto: With two requests: `messages` (the whole older prefix) or `system` (tools and system prompt only).
        dialect: The wire dialect, or `auto` to detect it from the shape.
    """
    __tracebackhide__ = True
    from harness_audit.trace.model import Exchange

    if state is _UNSET:
        raise TypeError("assert_prefix_stable takes (build_request, state) or (older_request, newer_request)")
    if callable(build_request):
        names = ("first build", "second build")
        first = _as_body(build_request(copy.deepcopy(state)), names[0])
        second = _as_body(build_request(copy.deepcopy(state)), names[1])
        ea, eb = _exchanges([(first, None), (second, None)], dialect)
        _compare_prefix(ea, eb, names, exact=True, upto="messages")
        _compare_key_order(first, second, names)
        return
    names = ("older request", "newer request")
    given = [x if isinstance(x, Exchange) else (_as_body(x, name), None)
             for x, name in zip((build_request, state), names, strict=True)]
    ea, eb = _exchanges(given, dialect)
    _compare_prefix(ea, eb, names, exact=False, upto=upto)


def assert_within_limits(requests_or_trace: Any, *, max_turns: int | None = 50, max_tool_calls: int | None = 200,
                         max_identical_calls: int | None = 3, dialect: Dialect = "auto") -> None:
    """Turns, executed tool calls and repeated identical calls stay under ceilings (the checker's C12 rules).

    A turn is one model request of a conversation; a tool call counts as executed when its result comes back
    in the next request; `max_identical_calls` is reached when the same call with the same arguments returns the
    same result that many times in a row (as `trace_max_identical_calls`: 3 means a third identical call fails).
    None turns a ceiling off. The defaults are `harness-audit trace`'s.

    Args:
        requests_or_trace: A trace file (path) or a loaded `Trace` (every conversation in it is checked), a
            `Conversation`, or the requests of one conversation (bodies or `(request, response)` pairs; without
            responses, each reply is taken from the next request's history).
        max_turns: Model requests per conversation.
        max_tool_calls: Executed tool calls per conversation.
        max_identical_calls: Identical calls in a row that count as no progress.
        dialect: The wire dialect of bodies, or `auto` to detect it from the shape.
    """
    __tracebackhide__ = True
    from harness_audit.findings import CheckId
    from harness_audit.trace.checker import Checker, Options

    max_turns, max_tool_calls, max_identical_calls = (
        _ceiling(max_turns, "max_turns", optional=True), _ceiling(max_tool_calls, "max_tool_calls", optional=True),
        _ceiling(max_identical_calls, "max_identical_calls", optional=True))
    off = 1 << 62
    options = Options(checks=frozenset({CheckId.C12}), max_turns=off if max_turns is None else max_turns,
                      max_tool_calls=off if max_tool_calls is None else max_tool_calls,
                      max_identical_calls=off if max_identical_calls is None else max_identical_calls)
    if isinstance(requests_or_trace, (str, os.PathLike, Trace)):
        path = requests_or_trace.path if isinstance(requests_or_trace, Trace) else Path(os.fspath(
            cast("str | os.PathLike[str]", requests_or_trace)))
        fmt = requests_or_trace.format if isinstance(requests_or_trace, Trace) else None
        candidates, _ = _check_file(path, options, fmt)
    else:
        checker = Checker(_LIST_FILE, lambda _source, _needle: "", options)
        for ex in _with_replies(_exchanges(requests_or_trace, dialect)):
            checker.feed(dataclasses.replace(ex, session="assert_within_limits"))
        checker.finish()
        candidates = checker.candidates
    if candidates:
        renamed = {"`trace_max_turns`": "`max_turns`", "`trace_max_tool_calls`": "`max_tool_calls`"}
        lines: list[str] = []
        for c in candidates:
            claim = c.claim
            for old, new in renamed.items():
                claim = claim.replace(old, new)
            lines.append(f"{_where(c)}: {claim}")
        _fail("limits exceeded:", lines)


def assert_trace_clean(path: str | os.PathLike[str], *, checks: Iterable[str] | None = None,
                       format: str | None = None, max_turns: int = 50, max_tool_calls: int = 200,  # noqa: A002
                       max_identical_calls: int = 3) -> None:
    """Run every trace grader on a file (as `harness-audit trace` does, without writing reports); no finding.

    An unreadable record fails too: a trace that is only partly read proves little.

    Args:
        path: The trace file, in any format the checker reads.
        checks: Check ids to run (default: all a trace can show: C1 C2 C4 C12 C13 C14 C15).
        format: Force the format instead of detecting it.
        max_turns: The C12 turn ceiling (`trace_max_turns`).
        max_tool_calls: The C12 tool-call ceiling (`trace_max_tool_calls`).
        max_identical_calls: The C12 no-progress ceiling (`trace_max_identical_calls`).
    """
    __tracebackhide__ = True
    from harness_audit.findings import CheckId
    from harness_audit.trace.checker import TRACE_CHECKS, Options

    max_turns = _ceiling(max_turns, "max_turns")
    max_tool_calls = _ceiling(max_tool_calls, "max_tool_calls")
    max_identical_calls = _ceiling(max_identical_calls, "max_identical_calls")
    wanted = frozenset(TRACE_CHECKS)
    if checks is not None:
        if isinstance(checks, (str, bytes)) or not isinstance(checks, Iterable):
            raise TypeError(f"`checks` must be a list of check ids such as ['C1', 'C12'], got {checks!r}")
        names = [str(c).strip().upper() for c in checks]
        bad = [n for n in names if n not in {c.value for c in TRACE_CHECKS}]
        if bad:
            raise ValueError(f"check(s) {', '.join(map(repr, bad))} cannot run on a trace; expected some of "
                             f"{' '.join(c.value for c in TRACE_CHECKS)}")
        wanted = frozenset(CheckId(n) for n in names)
    options = Options(checks=wanted, max_turns=max_turns, max_tool_calls=max_tool_calls,
                      max_identical_calls=max_identical_calls)
    file = Path(path)
    candidates, result = _check_file(file, options, format)
    lines = [f"line {c.line}: {c.check} {c.source.split('/', 1)[1]} ({c.verdict}): {c.claim}"
             for c in sorted(candidates, key=lambda c: (c.line or 0, CheckId(c.check).number))]
    lines += [f"line {line}: unreadable record: {why}" for line, why in result.malformed]
    lines += [f"… and {n} more {rule} findings" for rule, n in sorted(result.suppressed.items())]
    if lines:
        _fail(f"trace {file.name} is not clean: {len(candidates)} finding(s), {len(result.malformed)} unreadable "
              "record(s)", lines)


# ---------------------------------------------------------------------------------------------- input shapes

def _ceiling(value: Any, name: str, *, optional: bool = False) -> Any:
    """A positive integer ceiling (or None where it may be turned off); a `TypeError` naming the argument."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        allowed = "a positive integer" + (" or None (no ceiling)" if optional else "")
        raise TypeError(f"`{name}` must be {allowed}, got {value!r}")
    return value


_SHAPES: dict[str, tuple[str, tuple[tuple[str, tuple[type, ...], str], ...]]] = {
    # api: (history key, ((field of an item, accepted types, what it must be), ...))
    "openai-chat": ("messages", (("role", (str,), "a string"), ("content", (str, list, type(None)), "text or a list of parts"),
                                 ("tool_calls", (list, type(None)), "a list of tool calls"),
                                 ("tool_call_id", (str,), "a string"))),
    "anthropic": ("messages", (("role", (str,), "a string"), ("content", (str, list), "text or a list of blocks"))),
    "gemini": ("contents", (("role", (str,), "a string"), ("parts", (list,), "a list of parts"))),
    "openai-responses": ("input", (("type", (str,), "a string"), ("role", (str,), "a string"),
                                   ("call_id", (str,), "a string"), ("arguments", (str,), "JSON text"))),
}
"""The fields of a history item whose type the dialects rely on: a wrong type is an error, never a silent pass."""


def _check_shape(body: Any, api: str, name: str) -> None:
    """Refuse a request body whose history is not the dialect's shape, naming the first bad field."""
    key, fields = _SHAPES.get(api, ("", ()))
    if not key or not isinstance(body, Mapping):
        return
    items: object = cast("Mapping[str, Any]", body).get(key)
    if items is None or (api == "openai-responses" and isinstance(items, str)):
        return
    if not isinstance(items, list):
        raise TypeError(f"`{key}` of the {name} must be a list, got {type(items).__name__}: {items!r:.60}")
    for i, item in enumerate(cast("list[Any]", items)):
        if not isinstance(item, Mapping):
            raise TypeError(f"`{key}[{i}]` of the {name} must be an object (a mapping), got {item!r:.60}")
        entry = cast("Mapping[str, Any]", item)
        for field, types, what in fields:
            if field in entry and not isinstance(entry[field], types):
                raise TypeError(f"`{key}[{i}].{field}` of the {name} must be {what}, got {entry[field]!r:.60}")
        for j, part in enumerate(cast("list[Any]", entry.get("tool_calls") or [])):
            if not isinstance(part, Mapping) or not isinstance(cast("Mapping[str, Any]", part).get("function"),
                                                                Mapping):
                raise TypeError(f"`{key}[{i}].tool_calls[{j}]` of the {name} must be an object with a `function` "
                                f"object, got {part!r:.60}")
        content = entry.get("content") if api != "gemini" else entry.get("parts")
        for j, part in enumerate(cast("list[Any]", content) if isinstance(content, list) else []):
            if not isinstance(part, Mapping | str):
                raise TypeError(f"`{key}[{i}].{'parts' if api == 'gemini' else 'content'}[{j}]` of the {name} "
                                f"must be an object, got {part!r:.60}")


def _check_file(path: Path, options: Any, fmt: str | None) -> tuple[list[Candidate], Any]:
    from harness_audit.trace import check_file

    return check_file(path, path.name, options, fmt)  # pyright: ignore[reportArgumentType]


def _request_of_messages(messages: Any, dialect: Dialect) -> Request:
    """The normalised request of a message list, a request body, an `Exchange` or a `Request`."""
    from harness_audit.trace.model import Exchange, Request

    if isinstance(messages, Request):
        return messages
    if isinstance(messages, Exchange):
        if messages.request is None:
            raise ValueError("this exchange is a response without a request: it has no history to check")
        return messages.request
    if isinstance(messages, (str, bytes)):
        messages = _as_body(messages, "messages")
    if isinstance(messages, Mapping):
        body: Mapping[str, Any] = messages  # pyright: ignore[reportUnknownVariableType]
    elif isinstance(messages, Iterable):
        body = _wrap(list(messages), dialect)  # pyright: ignore[reportUnknownArgumentType]
    else:
        raise TypeError(f"expected a list of messages or a request body, not {type(messages).__name__}")
    (ex,) = _exchanges([(body, None)], dialect)
    assert ex.request is not None
    return ex.request


def _wrap(items: list[Any], dialect: Dialect) -> dict[str, Any]:
    """A request body around a bare history, under the key of its dialect (`messages`, `input`, `contents`)."""
    if dialect == "gemini":
        return {"contents": items}
    if dialect == "openai-responses":
        return {"input": items}
    if dialect != "auto":
        return {"messages": items}
    dicts: list[Mapping[str, Any]] = [m for m in items if isinstance(m, Mapping)]  # pyright: ignore[reportUnknownVariableType]
    if any("parts" in m for m in dicts):
        return {"contents": items}
    if any(isinstance(m, str) for m in items) or any(
            m.get("type") in _RESPONSES_ITEMS or ("type" in m and "role" not in m) for m in dicts):
        return {"input": items}
    return {"messages": items}


def _as_body(value: Any, name: str) -> Any:
    """A request body: a mapping as is, JSON text parsed (key order kept)."""
    if isinstance(value, (str, bytes)):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise ValueError(f"the {name} is text but not JSON: {exc}") from None
    if not isinstance(value, Mapping):
        raise TypeError(f"the {name} must be a request body (a mapping or JSON text), not {type(value).__name__}")
    return cast("Mapping[str, Any]", value)


def _exchanges(items: Any, dialect: Dialect) -> list[Exchange]:
    """Normalised exchanges of a conversation given as bodies, (request, response) pairs or checker objects."""
    from harness_audit.trace.model import Exchange

    if dialect not in _DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; expected one of {', '.join(_DIALECTS)}")
    if isinstance(items, Conversation):
        return list(items.exchanges)
    if isinstance(items, Trace):
        raise TypeError("a trace holds several conversations: pass one of `trace.conversations`")
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Iterable):
        raise TypeError("expected the requests of one conversation: a list of request bodies or of "
                        f"(request, response) pairs, not {type(cast(object, items)).__name__}")
    out: list[Exchange | None] = []
    pending: list[tuple[int, Any, Any]] = []
    for i, item in enumerate(cast("Iterable[Any]", items)):
        if isinstance(item, Exchange):
            out.append(item)
            continue
        request, response = _pair(item)
        pending.append((i, _as_body(request, f"request {i}"), response))
        out.append(None)
    for i, ex in zip([p[0] for p in pending], _parse(pending, dialect), strict=True):
        out[i] = ex
    return [ex for ex in out if ex is not None]


def _pair(item: Any) -> tuple[Any, Any]:
    """(request, response) of a list item: a pair as given, a lone request body without response."""
    value: object = item
    if isinstance(value, (tuple, list)):
        pair = cast("Sequence[Any]", value)
        if len(pair) == 2:
            return pair[0], pair[1]
    return item, None


def _parse(pending: list[tuple[int, Any, Any]], dialect: Dialect) -> list[Exchange]:
    """Bodies to exchanges with the checker's dialects; in `auto`, one conversation is read in one dialect."""
    from harness_audit.trace.dialects import detect, normalise_record
    from harness_audit.trace.model import Malformed, RawRecord, Source

    def record(i: int, request: Any, response: Any, api: Api | None) -> RawRecord:
        source = Source(file=_LIST_FILE, line=i + 1, offset=0, index=i)
        return RawRecord(source=source, request=request, response=response, api=api)

    apis: list[Api | None] = []
    for i, request, response in pending:
        api = cast("Api", dialect) if dialect != "auto" else detect(record(i, request, response, None))
        if api is None:
            raise ValueError(f"request {i} is not a model request body: expected OpenAI Chat `messages`, OpenAI "
                             "Responses `input`, Anthropic `messages` or Gemini `contents`")
        apis.append(api)
    specific: set[Api] = {a for a in apis if a is not None and a != "openai-chat"}
    if dialect == "auto" and len(specific) == 1:
        # a body with nothing dialect-specific in it reads as OpenAI Chat; in one conversation it is its neighbours'
        only: Api = next(iter(specific))
        apis = [only] * len(apis)
    out: list[Exchange] = []
    for (i, request, response), api in zip(pending, apis, strict=True):
        _check_shape(request, api, "request" if len(pending) == 1 else f"request {i}")
        ex = normalise_record(record(i, request, response, api))
        if ex is None or isinstance(ex, Malformed):
            why = ex.reason if isinstance(ex, Malformed) else "not model traffic"
            raise ValueError(f"request {i} could not be read as {api}: {why}")
        out.append(ex)
    return out


def _with_replies(exchanges: list[Exchange]) -> list[Exchange]:
    """Exchanges without a recorded response get the reply their next request carries in its history."""
    from harness_audit.trace.model import Response

    out: list[Exchange] = []
    for n, ex in enumerate(exchanges):
        nxt = exchanges[n + 1].request if n + 1 < len(exchanges) else None
        if ex.response is None and ex.request is not None and nxt is not None:
            k = len(ex.request.messages)
            if k < len(nxt.messages) and nxt.messages[k].role == "assistant":
                ex = dataclasses.replace(ex, response=Response(message=nxt.messages[k]))
        out.append(ex)
    return out


# ---------------------------------------------------------------------------------------------- prefix comparison

def _compare_prefix(ea: Exchange, eb: Exchange, names: tuple[str, str], *, exact: bool,
                    upto: Literal["messages", "system"]) -> None:
    __tracebackhide__ = True
    from harness_audit.trace.checker import describe_segment
    from harness_audit.trace.summary import complete, prefix_diff, summarise

    ra, rb = ea.request, eb.request
    assert ra is not None and rb is not None
    sa, sb = complete(summarise(ra, ea.source), ra, None), complete(summarise(rb, eb.source), rb, None)
    kept = sa
    if not exact and (upto == "system" or rb.previous_response_id or rb.conversation):
        # only tools and system prompt: a request continuing server-held history re-sends none of its messages
        k = next((i for i, m in enumerate(ra.messages) if m.role != "system"), len(ra.messages))
        kept = _first_messages(sa, k)
    diff = prefix_diff(kept, sb)
    if diff.segment is None:
        if exact and len(sb.messages) != len(sa.messages):
            longer, shorter = (names[1], sa) if len(sb.messages) > len(sa.messages) else (names[0], sb)
            _fail(f"prompt prefix not stable: the {longer} has more messages (messages[{len(shorter.messages)}:]) "
                  "than the other from the same state", [])
        return
    where = describe_segment(diff.segment, kept, sb)
    data_a, data_b = _segments(ra), _segments(rb)
    seg_a = data_a[diff.index] if diff.index < len(data_a) else b""
    seg_b = data_b[diff.index] if diff.index < len(data_b) else b""
    within = _common_prefix(seg_a, seg_b)
    offset = sum(len(d) for d in data_a[:diff.index]) + within
    total = sum(len(d) for d in data_b)
    head = f"prompt prefix not {'stable' if exact else 'kept'}: the {names[1]} differs from the {names[0]} at {where}"
    share = f"{offset / total:.0%}" if total else "100%"
    _fail(head, [f"first difference at canonical byte {offset} (byte {within} of `{diff.segment}`); "
                 f"{offset} of {total} bytes ({share}) are a shared prefix",
                 *_excerpts((names[0], seg_a), (names[1], seg_b))])


def _first_messages(s: RequestSummary, k: int) -> RequestSummary:
    return dataclasses.replace(s, messages=s.messages[:k], fields=s.fields[:k], roles=s.roles[:k], keys=s.keys[:k])


def _segments(req: Request) -> list[bytes]:
    """Canonical bytes of tools, system and each message: the cache order the checker compares in."""
    return [req.tools, req.system, *(m.canon for m in req.messages)]


def _compare_key_order(a: Mapping[str, Any], b: Mapping[str, Any], names: tuple[str, str]) -> None:
    """Two builds equal as JSON must also serialise the prefix fields in the same key order (the bytes sent)."""
    __tracebackhide__ = True
    for key in _PREFIX_KEYS:
        if key not in a and key not in b:
            continue
        wa, wb = (json.dumps(x.get(key), ensure_ascii=False, separators=(",", ":"), default=str).encode()
                  for x in (a, b))
        if wa != wb:
            at = _common_prefix(wa, wb)
            _fail(f"prompt prefix not stable: `{key}` of the two builds is equal as JSON but serialises differently "
                  f"(key order) from byte {at}: sort the keys or build the mappings in a fixed order",
                  _excerpts((names[0], wa), (names[1], wb)))


# ---------------------------------------------------------------------------------------------- messages

def _fail(title: str, lines: Sequence[str]) -> NoReturn:
    __tracebackhide__ = True
    shown = list(lines[:_MAX_LINES])
    if len(lines) > _MAX_LINES:
        shown.append(f"… and {len(lines) - _MAX_LINES} more")
    raise AssertionError("\n".join([title, *(f"  {line}" for line in shown)]))


def _label(i: int, source: Source) -> str:
    return f"requests[{i}]" if source.file == _LIST_FILE else f"requests[{i}] (line {source.line})"


def _where(c: Candidate) -> str:
    if c.file == _LIST_FILE:
        return f"requests[{(c.line or 1) - 1}]"
    return f"{c.file}:{c.line}"


def _where_result(api: str, msgs: Sequence[Message], index: int) -> str:
    if api == "openai-responses":
        return "(no `function_call_output` with its id in this input)"
    if api == "anthropic":
        return f"in the next user message (messages[{index + 1}])"
    nxt = next((j for j in range(index + 1, len(msgs)) if msgs[j].role == "assistant"), None)
    return f"before the next assistant message (messages[{nxt}])" if nxt is not None else "by the end of the history"


def _changed_field(before: Message, after: Message) -> tuple[str, bytes, bytes]:
    """The first changed field of a message (the checker's field order) and the two values' canonical bytes."""
    from harness_audit.trace.model import canonical, field_digests
    from harness_audit.trace.summary import first_field

    name = first_field(field_digests(before.raw), field_digests(after.raw))
    key = name.split(" (", 1)[0]
    base, _, index = key.partition("[")
    raw_a: Any = before.raw
    raw_b: Any = after.raw
    if isinstance(raw_a, Mapping) and isinstance(raw_b, Mapping):
        ra, rb = cast("Mapping[str, Any]", raw_a), cast("Mapping[str, Any]", raw_b)
        if base in ra or base in rb:
            va, vb = ra.get(base), rb.get(base)
            if index.rstrip("]").isdigit():
                i = int(index.rstrip("]"))
                va = cast("list[Any]", va)[i] if isinstance(va, list) and i < len(cast("list[Any]", va)) else None
                vb = cast("list[Any]", vb)[i] if isinstance(vb, list) and i < len(cast("list[Any]", vb)) else None
            return name, canonical(va), canonical(vb)
    return name, before.canon, after.canon


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix (bisection on slice equality: C speed on long segments)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _excerpts(*named: tuple[str, bytes]) -> list[str]:
    """The bytes around the first difference of two values, one line each, aligned."""
    (na, a), (nb, b) = named
    at = _common_prefix(a, b)
    width = max(len(na), len(nb)) + 1
    out: list[str] = []
    for name, data in named:
        start = max(0, at - _AROUND)
        text = data[start:at + _AROUND].decode("utf-8", errors="replace")
        text = ("…" if start else "") + text + ("…" if at + _AROUND < len(data) else "")
        out.append(f"{name + ':':<{width}} {text if data else '(absent)'}")
    return out


def _gist(m: Message) -> str:
    """A message in one short line: its text and its calls."""
    text = " ".join(m.text.split())
    calls = ", ".join(f"{c.name}({c.arguments[:40]})" for c in m.calls)
    shown = repr(text[:80] + ("…" if len(text) > 80 else ""))
    return f"{m.role} text {shown}" + (f", calls {calls}" if calls else "")
