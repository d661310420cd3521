"""One subagent: a tool loop we own, over `pydantic_ai.models.Model.request`.

Invariants, on every exit path:
- every tool call in the history has exactly one result before the next request (calls that are
  not executed get a result saying why: bad JSON, unknown tool, duplicate id, reply cut off, budget);
- the history is append-only, with one exception in one place: `_compact` replaces the OUTPUT of old
  navigation calls by a one-line stub naming what was read (the call and its result stay paired, the
  ledger records the cut), in batches, so the prefix stays byte-stable between cuts;
- budgets are ceilings the model knows and plans with: the task states them, a nudge at 70% of any of
  them says "report now", and the last turn they allow offers the report tools only; a unit that runs
  out after that turn is `incomplete`, its findings kept;
- tokens count at their billed weights (`TokenWeights`): a cached input token costs a tenth of a new one;
- transport failures (429, 5xx, timeouts, connection) are retried with backoff, never a tool, and each
  retry is announced (`on_retry`) so a user sees why nothing moves;
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
_MAX_CUT_REPLIES = 2
"""Replies cut off at the output limit, with no tool call, in a row: the second ends the unit."""
CHARS_PER_TOKEN = 4
"""How the engine estimates tokens before a request (the provider counts them after)."""
_MIN_OUTPUT_TOKENS = 256
_MAX_OUTPUT_TOKENS = 16_384
_MAX_FINAL_REPORTS = 30
"""Report calls executed in the reporting turn, past the tool-call limit."""
NAVIGATION_TOOLS = frozenset({"read_file", "grep", "glob", "find_symbol", "find_references", "list_landmarks"})
"""Tools whose old output `_compact` may replace by a stub (a report's answer is never dropped)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenWeights:
    """What one token of each kind costs, in uncached input tokens (the model's price ratios when known)."""

    cached_input: float = 0.1
    """An input token read from the provider's cache."""
    cache_write: float = 1.25
    """An input token written to the provider's cache (Anthropic's five-minute cache bills 1.25x)."""
    output: float = 4.0
    """An output token (reasoning included)."""

    def of(self, u: Usage) -> float:
        """`u` in uncached-input-token equivalents."""
        fresh = max(u.input_tokens - u.cache_read_tokens - u.cache_write_tokens, 0)
        return (fresh + u.cache_read_tokens * self.cached_input + u.cache_write_tokens * self.cache_write
                + u.output_tokens * self.output)


@dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """Hard ceilings for one subagent, stated to its model in the task."""

    max_turns: int = 40
    """Model requests (retries of one request count once)."""
    max_tool_calls: int = 120
    """Tool calls executed (report calls of the reporting turn excepted)."""
    max_tokens: int = 120_000
    """Tokens over all requests, each kind at its billed weight (`weights`); checked before each request."""
    wall_s: float = 900.0
    """Wall clock for the whole unit."""
    request_timeout_s: float = 120.0
    """One request; always cut to what is left of the unit's wall clock and the run's deadline."""
    transport_retries: int = 2
    """Extra attempts of one request after a retryable transport failure."""
    backoff_s: float = 1.0
    """First backoff; doubles each attempt, capped at 30 s; a provider's retry-after wins when larger."""
    weights: TokenWeights = field(default_factory=TokenWeights)
    """Billed weight of each kind of token, for `max_tokens`."""
    nudge_at: float = 0.7
    """Share of any budget at which the model is told to report now."""

    def describe(self) -> str:
        """The budget as the task states it to the model."""
        w = self.weights
        return (f"at most {self.max_turns} model turns, {self.max_tool_calls} tool calls and {self.max_tokens:,} "
                f"tokens (input read from the provider's cache counts {w.cached_input:g}x, output "
                f"{w.output:g}x). At {self.nudge_at:.0%} of any of them you are told to report; the last turn "
                "offers the report tools only. Plan your reads so that you report before then.")


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction:
    """When old tool outputs leave the context: in batches, so the prompt prefix stays stable between cuts."""

    keep_recent: int = 6
    """Tool-result turns kept whole (the newest ones); 0 turns compaction off."""
    batch: int = 4
    """Outputs that must be waiting before a cut is made (fewer cuts, fewer cache misses)."""
    min_chars: int = 1_000
    """Shorter outputs are kept: their stub would save little."""


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
    report_tools: frozenset[str] = frozenset()
    """The tools of the reporting turn; without any, the unit has no reporting turn."""
    settings: ModelSettings | None = None
    """Provider settings added to every request (prompt caching)."""
    on_retry: Callable[[str], None] | None = None
    """Told of every transport failure that is retried, with the wait: `C3: request timed out …; retry 2 of 3 …`."""
    on_response: Callable[[Usage], None] | None = None
    """Told after every answered request what the unit has spent so far (live tokens and cost)."""
    compaction: Compaction = field(default_factory=Compaction)

    def __post_init__(self) -> None:
        self._names = {t.name for t in self.tools}
        self._params = ModelRequestParameters(function_tools=self.tools, allow_text_output=True)
        finals = [t for t in self.tools if t.name in self.report_tools]
        self._final_params = ModelRequestParameters(function_tools=finals, allow_text_output=True)
        self._ids: set[str] = set()
        self._duplicates: set[str] = set()
        self._calls: dict[str, tuple[str, dict[str, Any]]] = {}
        self._stubbed: set[str] = set()
        self._tools_chars = sum(len(t.name) + len(t.description or "") + len(json.dumps(t.parameters_json_schema))
                                for t in self.tools)
        self._output_cap = _MAX_OUTPUT_TOKENS
        self._nudged = False
        self._final_reason = ""
        self._last_input = 0
        self._last_chars = 0
        self._last_cached = False
        self._last_request_s = 0.0
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
        empty = cut = 0
        while True:
            final = self._plan()
            response = await self._request(final)
            r.turns += 1
            response = self._rename_ids(response)
            r.messages.append(response)
            calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
            if not calls:
                text = "".join(p.content for p in response.parts if isinstance(p, TextPart)).strip()
                if response.finish_reason == "length":
                    cut += 1
                    if cut >= _MAX_CUT_REPLIES or not text:
                        what = "with nothing in it" if not text else "in a row"
                        raise _Stop(OutcomeStatus.FAILED, FailureCode.MALFORMED_OUTPUT,
                                    f"{'replies' if cut > 1 else 'a reply'} cut off at the output limit of "
                                    f"{self._output_cap} tokens {what}; the model spends its output before it "
                                    "answers (raise the token budget, or use a model that reasons less)")
                    self._end_if(final)
                    self._nudge("Your reply was cut off by the output limit. Continue with shorter steps.")
                    continue
                if not text:
                    empty += 1
                    if empty >= _MAX_EMPTY_REPLIES:
                        raise _Stop(OutcomeStatus.FAILED, FailureCode.MALFORMED_OUTPUT,
                                    f"{empty} empty replies in a row")
                    self._end_if(final)
                    self._nudge("Your reply was empty. Call a tool, or reply with one sentence if you are done.")
                    continue
                return  # the model is done
            empty = cut = 0
            self._answer(calls, truncated=response.finish_reason == "length", final=final)
            self._end_if(final)

    def _end_if(self, final: bool) -> None:
        if final:
            raise _Stop(OutcomeStatus.INCOMPLETE, FailureCode.BUDGET_EXHAUSTED,
                        f"{self._final_reason}: stopped after its reporting turn; what it reported is kept")

    # ------------------------------------------------------------------ budgets
    def _plan(self) -> bool:
        """Check every budget before a request, nudge at 70%, and say whether this is the reporting turn."""
        r, b = self._result, self.budget
        w = b.weights
        self._compact()
        if self._time_left() <= 0:
            raise self._time_stop()
        spent = w.of(r.usage)
        prompt = self._projected_prompt_tokens()
        cost = self._weighted_prompt(prompt) + _MIN_OUTPUT_TOKENS * w.output
        if r.turns >= b.max_turns:
            raise _Stop(OutcomeStatus.INCOMPLETE, FailureCode.BUDGET_EXHAUSTED, f"turn limit {b.max_turns} reached")
        if spent + cost > b.max_tokens:
            raise _Stop(OutcomeStatus.INCOMPLETE, FailureCode.BUDGET_EXHAUSTED,
                        f"token limit {b.max_tokens:,}: {spent:,.0f} spent and the next request needs ~{cost:,.0f}")
        # is there room for another request after this one? if not, this one is the reporting turn
        growth = max(prompt - self._last_input, 0) if self._last_input else prompt // 4
        growth = max(growth, 1)
        after = self._weighted_prompt(prompt + growth) + _MIN_OUTPUT_TOKENS * w.output
        reasons: list[str] = []
        if r.turns + 1 >= b.max_turns:
            reasons.append(f"turn limit {b.max_turns}")
        if r.tool_calls >= b.max_tool_calls:
            reasons.append(f"tool-call limit {b.max_tool_calls}")
        if spent + cost + after > b.max_tokens:
            reasons.append(f"token limit {b.max_tokens:,}")
        if self._last_request_s and self._time_left() < 2 * self._last_request_s + 1:
            reasons.append(f"wall-clock limit {b.wall_s:g} s")
        final = bool(reasons) and bool(self.report_tools)
        if final:
            self._final_reason = reasons[0] + " reached"
            self._nudge(f"This is your last turn ({reasons[0]} reached): only {', '.join(sorted(self.report_tools))} "
                        "can be called now. Report everything you found and can back with evidence, in this one "
                        "reply; nothing after it is read.")
        elif not self._nudged:
            used = {"turns": (r.turns + 1) / b.max_turns, "tool calls": r.tool_calls / b.max_tool_calls,
                    "tokens": (spent + cost) / b.max_tokens,
                    "time": (time.monotonic() - self._t0) / b.wall_s}
            kind, share = max(used.items(), key=lambda kv: kv[1])
            if share >= b.nudge_at:
                self._nudged = True
                left = (f"{b.max_turns - r.turns - 1} turns, {max(b.max_tool_calls - r.tool_calls, 0)} tool calls, "
                        f"~{max(b.max_tokens - spent - cost, 0):,.0f} tokens left")
                self._nudge(f"Budget: {share:.0%} of this unit's {kind} are used ({left}). Report what you have "
                            "found now, settle your leads, then finish; read further only for a finding you are "
                            "about to report.")
        room = b.max_tokens - spent - self._weighted_prompt(prompt)
        self._output_cap = max(_MIN_OUTPUT_TOKENS, min(_MAX_OUTPUT_TOKENS, int(room / max(w.output, 0.01))))
        return final

    def _prompt_chars(self) -> int:
        # measured on our own form, so a dependency's extra fields never move a budget decision
        return len(json.dumps(request_messages(self._result.messages), ensure_ascii=False)) + self._tools_chars

    def _projected_prompt_tokens(self) -> int:
        """The next prompt's size: the last prompt as the provider counted it plus what was added since, at ~4
        characters per token (all of it at that rate before the first answer); never below the plain estimate."""
        chars = self._prompt_chars()
        estimate = chars // CHARS_PER_TOKEN
        if not self._last_input:
            return estimate
        return max(estimate, self._last_input + max(chars - self._last_chars, 0) // CHARS_PER_TOKEN)

    def _weighted_prompt(self, tokens: int) -> float:
        """A prompt of `tokens` at its billed weight: the part the last request sent is taken as cached when the
        provider reported caching, the rest as new."""
        cached = min(self._last_input, tokens) if self._last_cached else 0
        return (tokens - cached) + cached * self.budget.weights.cached_input

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
        return _Stop(OutcomeStatus.INCOMPLETE, FailureCode.BUDGET_EXHAUSTED,
                     f"wall-clock limit {self.budget.wall_s:g} s reached")

    def _nudge(self, text: str) -> None:
        """A note to the model: added to the request about to be sent (after its tool results), never to one sent."""
        msgs = self._result.messages
        last = msgs[-1] if msgs else None
        if isinstance(last, ModelRequest) and len(msgs) > 1 and not any(
                isinstance(p, UserPromptPart) for p in last.parts):
            msgs[-1] = dataclasses.replace(last, parts=[*last.parts, UserPromptPart(content=text)])
        else:
            msgs.append(ModelRequest(parts=[UserPromptPart(content=text)]))
        self.ledger.write("nudge", unit=self.unit, text=text)

    # ------------------------------------------------------------------ context
    def _compact(self) -> None:
        """Replace the output of old navigation calls by a stub naming what was read, in batches.

        The one place the history changes after it was sent: calls and results stay paired, only the content of
        results older than the newest `keep_recent` tool-result turns becomes one line, and only when at least
        `batch` such outputs wait, so between two cuts the prompt grows append-only and its prefix stays cached.
        """
        c, msgs = self.compaction, self._result.messages
        if c.keep_recent <= 0:
            return
        with_results = [i for i, m in enumerate(msgs) if isinstance(m, ModelRequest)
                        and any(isinstance(p, ToolReturnPart) for p in m.parts)]
        todo = [(i, j) for i in with_results[:-c.keep_recent] for j, p in enumerate(msgs[i].parts)
                if isinstance(p, ToolReturnPart) and p.tool_name in NAVIGATION_TOOLS
                and p.tool_call_id not in self._stubbed and len(str(p.content)) >= c.min_chars]
        if len(todo) < c.batch:
            return
        chosen = set(todo)
        for i in sorted({i for i, _ in todo}):
            message = msgs[i]
            assert isinstance(message, ModelRequest)
            parts = [self._stub(p) if (i, j) in chosen and isinstance(p, ToolReturnPart) else p
                     for j, p in enumerate(message.parts)]
            msgs[i] = dataclasses.replace(message, parts=parts)
        ids = [msgs[i].parts[j].tool_call_id for i, j in todo]  # type: ignore[union-attr]
        self._stubbed.update(ids)
        self.ledger.write("context-cut", unit=self.unit, turn=self._result.turns + 1, call_ids=ids)

    def _stub(self, part: ToolReturnPart) -> ToolReturnPart:
        name, args = self._calls.get(part.tool_call_id, (part.tool_name, {}))
        shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in sorted(args.items()))
        text = str(part.content)
        stub = (f"[output of {name}({shown}) left the context after {self.compaction.keep_recent} newer turns "
                f"({text.count(chr(10)) + 1} lines, {len(text):,} characters); call it again if you need it]")
        return dataclasses.replace(part, content=stub)

    # ------------------------------------------------------------------ requests
    async def _request(self, final: bool) -> ModelResponse:
        r, b = self._result, self.budget
        attempt = 0
        while True:
            timeout = min(b.request_timeout_s, self._time_left())
            if timeout <= 0:
                raise self._time_stop()
            extra: dict[str, Any] = {"tools": sorted(self.report_tools)} if final else {}
            self.ledger.write("request", unit=self.unit, turn=r.turns + 1, attempt=attempt + 1,
                              messages=request_messages(r.messages[-1:]), **extra)
            started = time.monotonic()
            try:
                response = await asyncio.wait_for(self._send(final), timeout)
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
            except Exception as exc:  # the client boundary: a reply the SDK cannot read is the provider's fault
                raise _Stop(OutcomeStatus.FAILED, FailureCode.MALFORMED_OUTPUT,
                            f"the provider's reply could not be read ({type(exc).__name__}: {_short(exc)})") from None
            else:
                u = usage_of(response.usage)
                r.usage = r.usage + u
                self._last_request_s = time.monotonic() - started
                self._last_chars = self._prompt_chars()
                self._last_input = u.input_tokens if u.known else self._last_chars // CHARS_PER_TOKEN
                self._last_cached = u.known and (u.cache_read_tokens > 0 or u.cache_write_tokens > 0)
                self.ledger.write("response", unit=self.unit, turn=r.turns + 1,
                                  finish_reason=finish_reason_of(response), usage=dataclasses.asdict(u),
                                  message=response_message(response))
                if self.on_response is not None:
                    self.on_response(r.usage)
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
            if self.on_retry is not None:
                self.on_retry(f"{error}; retry {attempt} of {b.transport_retries} in {delay:.0f} s")
            await self.sleep(delay)

    async def _send(self, final: bool) -> ModelResponse:
        msgs = self._result.messages
        settings = ModelSettings(**{**(self.settings or {}), "max_tokens": self._output_cap})  # type: ignore[typeddict-item]
        params = self._final_params if final else self._params
        if not self.stream:
            return await self.model.request(msgs, settings, params)
        async with self.model.request_stream(msgs, settings, params) as stream:
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

    def _answer(self, calls: list[ToolCallPart], *, truncated: bool, final: bool) -> None:
        r, b = self._result, self.budget
        results: list[ToolReturnPart] = []
        reports = 0
        for call in calls:
            limited = call.tool_name not in self.report_tools or not final
            if truncated:
                text = ("Not executed: your reply was cut off by the output limit, so this call may be incomplete. "
                        "Send it again, alone.")
            elif call.tool_call_id in self._duplicates:
                text = "Not executed: this call repeated an id already used in this conversation. Send it again."
            elif final and call.tool_name not in self.report_tools:
                text = "Not executed: this was the reporting turn; only the report tools run now."
            elif final and reports >= _MAX_FINAL_REPORTS:
                text = f"Not executed: the reporting turn runs at most {_MAX_FINAL_REPORTS} reports."
            elif limited and r.tool_calls >= b.max_tool_calls:
                text = (f"Not executed: the tool-call limit of {b.max_tool_calls} for this unit is reached; your "
                        "next turn is for reporting.")
            elif call.tool_name not in self._names:
                text = (f"Unknown tool {call.tool_name!r}. Available tools: {', '.join(sorted(self._names))}.")
            else:
                reports += final
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
        self._calls[call.tool_call_id] = (call.tool_name, args)
        try:
            text = self.handler(call.tool_name, args)
        except Exception as exc:  # the handler promises not to raise; a bug still gets the call its result
            text = f"The tool failed: {type(exc).__name__}: {exc}"
        self.ledger.write("tool-call", unit=self.unit, id=call.tool_call_id, tool=call.tool_name, args=args,
                          valid=True, result=text)
        return text


def _short(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:300]
