"""One subagent: a tool loop we own, over `pydantic_ai.models.Model.request`.

Invariants, on every exit path:
- every tool call in the history has exactly one result before the next request (calls that are
  not executed get a result saying why: bad JSON, unknown tool, duplicate id, reply cut off, budget);
- the history is append-only: a response is appended as received (a duplicate or missing call id
  is renamed before it is appended, and the ledger says so);
- budgets are ceilings, checked before every request and every tool call: turns, tool calls, tokens,
  wall clock, the run's deadline; a request has its own timeout inside them;
- transport failures (429, 5xx, timeouts, connection) are retried with backoff, never a tool;
- cancellation ends the unit with `cancelled` and leaves the history paired.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.exceptions import ModelAPIError, ModelHTTPError, ModelTimeoutError
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from harness_audit.errors import FailureCode
from harness_audit.findings import OutcomeStatus, Usage
from harness_audit.llm.canonical import call_arguments, finish_reason_of, request_messages, response_message, usage_of
from harness_audit.llm.ledger import Ledger

ToolHandler = Callable[[str, dict[str, Any]], str]
"""Runs one tool call (name, parsed arguments) and returns the text the model sees. Never raises."""

_RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}
_MAX_EMPTY_REPLIES = 2
_CHARS_PER_TOKEN = 4
_MIN_OUTPUT_TOKENS = 256
_MAX_OUTPUT_TOKENS = 16_384


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """Hard ceilings for one subagent."""

    max_turns: int = 40
    """Model requests (retries of one request count once)."""
    max_tool_calls: int = 120
    """Tool calls executed."""
    max_tokens: int = 120_000
    """Input + output tokens over all requests; checked before each request."""
    wall_s: float = 900.0
    """Wall clock for the whole unit."""
    request_timeout_s: float = 180.0
    """One request; always cut to what is left of the unit's wall clock and the run's deadline."""
    transport_retries: int = 3
    """Extra attempts of one request after a retryable transport failure."""
    backoff_s: float = 1.0
    """First backoff; doubles each attempt, capped at 30 s; a provider's retry-after wins when larger."""


@dataclass(slots=True)
class UnitResult:
    """How a subagent ended."""

    unit: str
    status: OutcomeStatus = OutcomeStatus.RAN
    failure: FailureCode | None = None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    turns: int = 0
    tool_calls: int = 0
    duration_s: float = 0.0
    messages: list[ModelMessage] = field(default_factory=list[ModelMessage])


class _Stop(Exception):
    def __init__(self, status: OutcomeStatus, failure: FailureCode | None, error: str) -> None:
        super().__init__(error)
        self.status, self.failure, self.error = status, failure, error


def tool_definitions(schemas: tuple[tuple[str, str, str], ...]) -> list[ToolDefinition]:
    """pydantic-ai tool definitions from `(name, description, schema json)` triples."""
    return [ToolDefinition(name=n, description=d, parameters_json_schema=json.loads(s)) for n, d, s in schemas]


@dataclass
class Subagent:
    """One unit's loop. Create, then `await run()` once."""

    unit: str
    model: Model
    system: str
    task: str
    tools: list[ToolDefinition]
    handler: ToolHandler
    ledger: Ledger
    budget: Budget = field(default_factory=Budget)
    deadline: float | None = None
    """`time.monotonic()` value at which the whole run must stop."""
    stream: bool = False
    sleep: Callable[[float], Any] = asyncio.sleep

    def __post_init__(self) -> None:
        self._names = {t.name for t in self.tools}
        self._params = ModelRequestParameters(function_tools=self.tools, allow_text_output=True)
        self._ids: set[str] = set()
        self._duplicates: set[str] = set()
        self._tools_chars = sum(len(t.name) + len(t.description or "") + len(json.dumps(t.parameters_json_schema))
                                for t in self.tools)
        self._output_cap = _MAX_OUTPUT_TOKENS
        self._result = UnitResult(unit=self.unit)
        self._t0 = time.monotonic()

    # ------------------------------------------------------------------ public
    @property
    def result(self) -> UnitResult:
        """How the unit stands: final after `run()` returned or raised."""
        return self._result

    async def run(self) -> UnitResult:
        """Run the loop to its end. A cancel is recorded in `result` and the ledger, then re-raised."""
        r = self._result
        r.messages = [ModelRequest(parts=[SystemPromptPart(content=self.system), UserPromptPart(content=self.task)])]
        self.ledger.write("unit-start", unit=self.unit, task=self.task)
        try:
            await self._loop()
        except _Stop as stop:
            r.status, r.failure, r.error = stop.status, stop.failure, stop.error
        except asyncio.CancelledError:
            # the history is paired here: tools run synchronously, so a cancel lands only on a request
            r.status, r.failure, r.error = OutcomeStatus.CANCELLED, FailureCode.CANCELLED, "cancelled"
            raise
        except Exception as exc:  # a bug of ours or of a provider SDK must not sink the other units
            r.status, r.failure = OutcomeStatus.FAILED, FailureCode.INTERNAL_ERROR
            r.error = f"{type(exc).__name__}: {exc}"
        finally:
            r.duration_s = time.monotonic() - self._t0
            self.ledger.write("unit-end", unit=self.unit, status=r.status.value,
                              failure=r.failure.value if r.failure else None, error=r.error,
                              usage=dataclasses.asdict(r.usage), turns=r.turns, tool_calls=r.tool_calls,
                              duration_s=round(r.duration_s, 3))
        return r

    # ------------------------------------------------------------------ loop
    async def _loop(self) -> None:
        r = self._result
        empty = 0
        while True:
            self._check_budgets()
            response = await self._request()
            r.turns += 1
            response = self._rename_ids(response)
            r.messages.append(response)
            calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
            if not calls:
                text = "".join(p.content for p in response.parts if isinstance(p, TextPart)).strip()
                if response.finish_reason == "length":
                    self._nudge("Your reply was cut off by the output limit. Continue with shorter steps.")
                    continue
                if not text:
                    empty += 1
                    if empty >= _MAX_EMPTY_REPLIES:
                        raise _Stop(OutcomeStatus.FAILED, FailureCode.MALFORMED_OUTPUT,
                                    f"{empty} empty replies in a row")
                    self._nudge("Your reply was empty. Call a tool, or reply with one sentence if you are done.")
                    continue
                return  # the model is done
            empty = 0
            self._answer(calls, truncated=response.finish_reason == "length")

    def _check_budgets(self) -> None:
        r, b = self._result, self.budget
        if r.turns >= b.max_turns:
            raise _Stop(OutcomeStatus.FAILED, FailureCode.BUDGET_EXHAUSTED, f"turn limit {b.max_turns} reached")
        spent = r.usage.input_tokens + r.usage.output_tokens
        if spent >= b.max_tokens:
            raise _Stop(OutcomeStatus.FAILED, FailureCode.BUDGET_EXHAUSTED,
                        f"token limit {b.max_tokens} reached ({spent} spent)")
        # the ceiling is hard: the next request's prompt (estimated) plus a minimal reply must fit in what is left
        projected = self._projected_prompt_tokens()
        if spent + projected + _MIN_OUTPUT_TOKENS > b.max_tokens:
            raise _Stop(OutcomeStatus.FAILED, FailureCode.BUDGET_EXHAUSTED,
                        f"token limit {b.max_tokens}: {spent} spent and the next request needs ~{projected}")
        self._output_cap = min(_MAX_OUTPUT_TOKENS, b.max_tokens - spent - projected)
        if self._time_left() <= 0:
            raise self._time_stop()

    def _projected_prompt_tokens(self) -> int:
        """The next prompt's size at ~4 characters per token (history + tool definitions)."""
        # measured on our own form, so a dependency's extra fields never move a budget decision
        chars = len(json.dumps(request_messages(self._result.messages), ensure_ascii=False)) + self._tools_chars
        return chars // _CHARS_PER_TOKEN

    def _time_left(self) -> float:
        left = self.budget.wall_s - (time.monotonic() - self._t0)
        if self.deadline is not None:
            left = min(left, self.deadline - time.monotonic())
        return left

    def _time_stop(self) -> _Stop:
        # the limit that ends first stopped the unit, whether it has passed or leaves too little time for a retry
        if self.deadline is not None and self.deadline <= self._t0 + self.budget.wall_s:
            passed = self.deadline <= time.monotonic()
            return _Stop(OutcomeStatus.FAILED, FailureCode.TIMEOUT,
                         "the run's deadline passed" if passed else "the run's deadline leaves no time for a retry")
        return _Stop(OutcomeStatus.FAILED, FailureCode.BUDGET_EXHAUSTED, f"wall-clock limit {self.budget.wall_s:g} s")

    def _nudge(self, text: str) -> None:
        self._result.messages.append(ModelRequest(parts=[UserPromptPart(content=text)]))
        self.ledger.write("nudge", unit=self.unit, text=text)

    # ------------------------------------------------------------------ requests
    async def _request(self) -> ModelResponse:
        r, b = self._result, self.budget
        attempt = 0
        while True:
            timeout = min(b.request_timeout_s, self._time_left())
            if timeout <= 0:
                raise self._time_stop()
            self.ledger.write("request", unit=self.unit, turn=r.turns + 1, attempt=attempt + 1,
                              messages=request_messages(r.messages[-1:]))
            try:
                response = await asyncio.wait_for(self._send(), timeout)
            except TimeoutError:
                failure, error, wait = FailureCode.TIMEOUT, f"request timed out after {timeout:.1f} s", None
            except ModelHTTPError as exc:
                if exc.status_code not in _RETRYABLE_STATUS:
                    raise _Stop(OutcomeStatus.FAILED, FailureCode.PROVIDER_ERROR,
                                f"HTTP {exc.status_code} from the provider: {_short(exc)}") from None
                failure = FailureCode.RATE_LIMITED if exc.status_code == 429 else FailureCode.PROVIDER_UNAVAILABLE
                error, wait = f"HTTP {exc.status_code}: {_short(exc)}", exc.retry_after
            except ModelTimeoutError as exc:  # the SDK's own timeout, before ours
                failure, error, wait = FailureCode.TIMEOUT, _short(exc), exc.retry_after
            except ModelAPIError as exc:  # connection errors and their kin carry no status
                failure, error, wait = FailureCode.PROVIDER_UNAVAILABLE, _short(exc), exc.retry_after
            else:
                u = usage_of(response.usage)
                r.usage = r.usage + u
                self.ledger.write("response", unit=self.unit, turn=r.turns + 1,
                                  finish_reason=finish_reason_of(response), usage=dataclasses.asdict(u),
                                  message=response_message(response))
                return response
            self.ledger.write("request-error", unit=self.unit, turn=r.turns + 1, attempt=attempt + 1,
                              failure=failure.value, error=error)
            attempt += 1
            if attempt > b.transport_retries:
                raise _Stop(OutcomeStatus.FAILED, failure, f"{error} (after {attempt} attempts)")
            delay = min(b.backoff_s * 2 ** (attempt - 1), 30.0)
            if wait is not None:
                delay = max(delay, min(wait, 60.0))
            if delay >= self._time_left():
                raise self._time_stop()
            await self.sleep(delay)

    async def _send(self) -> ModelResponse:
        msgs = self._result.messages
        settings = ModelSettings(max_tokens=self._output_cap)
        if not self.stream:
            return await self.model.request(msgs, settings, self._params)
        async with self.model.request_stream(msgs, settings, self._params) as stream:
            async for _ in stream:
                pass
            return stream.get()

    # ------------------------------------------------------------------ tools
    def _rename_ids(self, response: ModelResponse) -> ModelResponse:
        """Give a repeated or missing call id a unique one, so each call can get exactly one result."""
        parts: list[Any] = []
        renamed: list[tuple[str, str]] = []
        for part in response.parts:
            if isinstance(part, ToolCallPart):
                original = part.tool_call_id or ""
                if not original or original in self._ids:
                    new = f"{original or 'call'}~{len(self._ids) + 1}"
                    renamed.append((original, new))
                    if original:  # a repeated id is answered, not run: it may repeat a call already run
                        self._duplicates.add(new)
                    part = dataclasses.replace(part, tool_call_id=new)
                self._ids.add(part.tool_call_id)
            parts.append(part)
        if not renamed:
            return response
        self.ledger.write("renamed-call-ids", unit=self.unit, renamed=renamed)
        return dataclasses.replace(response, parts=parts)

    def _answer(self, calls: list[ToolCallPart], *, truncated: bool) -> None:
        r, b = self._result, self.budget
        results: list[ToolReturnPart] = []
        exhausted = False
        for call in calls:
            if truncated:
                text = ("Not executed: your reply was cut off by the output limit, so this call may be incomplete. "
                        "Send it again, alone.")
            elif call.tool_call_id in self._duplicates:
                text = "Not executed: this call repeated an id already used in this conversation. Send it again."
            elif r.tool_calls >= b.max_tool_calls:
                exhausted = True
                text = f"Not executed: the tool-call limit of {b.max_tool_calls} for this check is reached."
            elif call.tool_name not in self._names:
                text = (f"Unknown tool {call.tool_name!r}. Available tools: {', '.join(sorted(self._names))}.")
            else:
                text = self._execute(call)  # records the call and its result itself
                results.append(ToolReturnPart(tool_name=call.tool_name, content=text, tool_call_id=call.tool_call_id))
                continue
            # a call answered without running it is recorded too: the ledger pairs every call with its result
            self.ledger.write("tool-call", unit=self.unit, id=call.tool_call_id, tool=call.tool_name,
                              args=call_arguments(call.args), valid=None,
                              executed=False, result=text)
            results.append(ToolReturnPart(tool_name=call.tool_name, content=text, tool_call_id=call.tool_call_id))
        self._duplicates.clear()
        r.messages.append(ModelRequest(parts=list(results)))
        if exhausted:
            raise _Stop(OutcomeStatus.FAILED, FailureCode.BUDGET_EXHAUSTED, f"tool-call limit {b.max_tool_calls} reached")

    def _execute(self, call: ToolCallPart) -> str:
        r = self._result
        try:
            args = call.args_as_dict(raise_if_invalid=True)
        except (ValueError, AssertionError) as exc:
            text = f"Not executed: the arguments are not a valid JSON object ({exc}). Send the call again with valid JSON."
            self.ledger.write("tool-call", unit=self.unit, id=call.tool_call_id, tool=call.tool_name,
                              args=call_arguments(call.args), valid=False, result=text)
            return text
        r.tool_calls += 1
        try:
            text = self.handler(call.tool_name, args)
        except Exception as exc:  # the handler promises not to raise; a bug still gets the call its result
            text = f"The tool failed: {type(exc).__name__}: {exc}"
        self.ledger.write("tool-call", unit=self.unit, id=call.tool_call_id, tool=call.tool_name, args=args,
                          valid=True, result=text)
        return text


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
