"""The scripted OpenAI server, driven through pydantic-ai's `OpenAIChatModel` exactly as the engine drives it."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import httpx2
import pytest
from openai import AsyncOpenAI
from pydantic_ai.exceptions import (
    ModelAPIError,
    ModelConnectionError,
    ModelHTTPError,
    ModelRateLimitError,
    ModelServerError,
    ModelTimeoutError,
)
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
from pydantic_ai.models import ModelRequestParameters, override_allow_model_requests
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import ToolDefinition

from tests.llm.fake_openai import (
    JsonObject,
    ScriptedOpenAI,
    Step,
    call,
    error,
    hang,
    reply,
    script_key,
    usage,
)

T = TypeVar("T")

_TOOLS = ModelRequestParameters(
    function_tools=[
        ToolDefinition(
            name="read_file",
            description="Read a file.",
            parameters_json_schema={"type": "object", "properties": {"path": {"type": "string"}}},
        ),
        ToolDefinition(
            name="grep",
            description="Search files.",
            parameters_json_schema={"type": "object", "properties": {"pattern": {"type": "string"}}},
        ),
    ]
)
_NO_RETRIES: ModelSettings = {"max_retries": 0}


@pytest.fixture(autouse=True)
def _allow_local_model_requests() -> Iterator[None]:
    """These requests only reach 127.0.0.1, so they stay allowed even when the suite forbids model requests."""
    with override_allow_model_requests(True):
        yield


def run(factory: Callable[[], Awaitable[T]]) -> T:
    """Run one coroutine on a fresh event loop (no async test plugin needed)."""

    async def main() -> T:
        return await factory()

    return asyncio.run(main())


def task(first_line: str, *rest: str) -> list[ModelMessage]:
    """A subagent's first request: the shared system prompt, then its task message."""
    return [ModelRequest(parts=[SystemPromptPart("shared rules"), UserPromptPart("\n".join((first_line, *rest)))])]


def chat_model(server: ScriptedOpenAI) -> OpenAIChatModel:
    """An `OpenAIChatModel` pointed at the server, the way an `openai:NAME` + base URL is resolved."""
    # The default HTTP client loads the CA bundle (30-60 ms per model); plain HTTP to 127.0.0.1 needs none.
    http_client = httpx2.AsyncClient(verify=False)
    return OpenAIChatModel(
        "gpt-test", provider=OpenAIProvider(base_url=server.base_url, api_key="test", http_client=http_client)
    )


async def request(
    server: ScriptedOpenAI,
    first_line: str = "Audit check C1 · Tool-call pairing",
    settings: ModelSettings | None = None,
) -> ModelResponse:
    """One non-streamed request for the script key that `first_line` selects."""
    return await chat_model(server).request(task(first_line), settings, _TOOLS)


async def request_stream(
    server: ScriptedOpenAI, first_line: str = "Audit check C1 · Tool-call pairing"
) -> tuple[ModelResponse, int]:
    """One streamed request; returns the assembled response and how many events it streamed."""
    events = 0
    async with chat_model(server).request_stream(task(first_line), None, _TOOLS) as stream:
        async for _ in stream:
            events += 1
        return stream.get(), events


def test_text_reply_non_streaming() -> None:
    with ScriptedOpenAI({"C1": [reply(text="nothing found")]}) as server:
        # The provider exactly as an `openai:NAME` model with a base URL builds it.
        model = OpenAIChatModel("gpt-test", provider=OpenAIProvider(base_url=server.base_url, api_key="test"))
        response = run(lambda: model.request(task("Audit check C1 · Tool-call pairing"), None, _TOOLS))

    assert response.parts == [TextPart(content="nothing found")]
    assert response.finish_reason == "stop"
    assert response.model_name == "gpt-test"
    assert response.provider_response_id == "chatcmpl-C1-0"
    [received] = server.requests
    assert (received.key, received.step, received.stream) == ("C1", 0, False)
    assert received.body["model"] == "gpt-test"
    assert [tool["function"]["name"] for tool in received.body["tools"]] == ["read_file", "grep"]
    assert not server.exhausted
    assert not server.unused


def test_tool_calls_with_dict_and_raw_string_arguments() -> None:
    script = {
        "C1": [
            reply(
                text="Reading.",
                tool_calls=[call("c1", "read_file", {"path": "a.py"}), call("c2", "grep", '{"pattern": "x"')],
            )
        ]
    }
    with ScriptedOpenAI(script) as server:
        response = run(lambda: request(server))

    assert response.parts == [
        TextPart(content="Reading."),
        ToolCallPart(tool_name="read_file", args='{"path": "a.py"}', tool_call_id="c1"),
        ToolCallPart(tool_name="grep", args='{"pattern": "x"', tool_call_id="c2"),
    ]
    assert response.finish_reason == "tool_call"


def test_usage_with_cached_and_reasoning_tokens() -> None:
    with ScriptedOpenAI({"C1": [reply(text="done", usage=usage(150, 5, cached=100, reasoning=2))]}) as server:
        response = run(lambda: request(server))

    assert response.usage.input_tokens == 150
    assert response.usage.output_tokens == 5
    assert response.usage.cache_read_tokens == 100
    assert response.usage.cache_write_tokens == 0
    assert response.usage.details["reasoning_tokens"] == 2
    assert response.usage.unmeasured_requests == 0


def test_reply_without_usage_is_unmeasured_not_zero() -> None:
    with ScriptedOpenAI({"C1": [reply(text="done")]}) as server:
        response = run(lambda: request(server))

    assert response.usage.unmeasured_requests == 1
    assert response.usage.input_tokens == 0
    assert response.usage.output_tokens == 0


def test_streamed_text_with_usage() -> None:
    script = {"recon": [reply(text="Landmarks located.", usage=usage(120, 7, cached=64, reasoning=3))]}
    with ScriptedOpenAI(script) as server:
        response, events = run(lambda: request_stream(server, "Recon · locate landmarks"))

    assert response.parts == [TextPart(content="Landmarks located.")]
    assert events > 3, "the text arrives in several deltas"
    assert response.finish_reason == "stop"
    assert response.usage.input_tokens == 120
    assert response.usage.cache_read_tokens == 64
    assert response.usage.details["reasoning_tokens"] == 3
    [received] = server.requests
    assert (received.key, received.stream) == ("recon", True)
    assert received.body["stream_options"] == {"include_usage": True}


def test_streamed_tool_calls_reassemble_arguments() -> None:
    script = {
        "C2": [
            reply(
                tool_calls=[call("c1", "read_file", {"path": "loop.py"}), call("c2", "grep", '{"pattern": ')],
                usage=usage(80, 12),
            )
        ]
    }
    with ScriptedOpenAI(script) as server:
        response, _ = run(lambda: request_stream(server, "Audit check C2 · Append-only history"))

    assert response.parts == [
        ToolCallPart(tool_name="read_file", args='{"path": "loop.py"}', tool_call_id="c1"),
        ToolCallPart(tool_name="grep", args='{"pattern": ', tool_call_id="c2"),
    ]
    assert response.finish_reason == "tool_call"
    assert (response.usage.input_tokens, response.usage.output_tokens) == (80, 12)


def test_streamed_reply_without_usage_is_unmeasured() -> None:
    with ScriptedOpenAI({"C1": [reply(text="done")]}) as server:
        response, _ = run(lambda: request_stream(server))

    assert response.usage.unmeasured_requests == 1
    assert response.usage.input_tokens == 0


def test_rate_limit_surfaces_when_the_client_does_not_retry() -> None:
    async def scenario(server: ScriptedOpenAI) -> tuple[BaseException, ModelResponse]:
        client = AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0)
        model = OpenAIChatModel("gpt-test", provider=OpenAIProvider(openai_client=client))
        async with client:
            with pytest.raises(ModelHTTPError) as caught:
                await model.request(task("Audit check C1 · Tool-call pairing"), None, _TOOLS)
            return caught.value, await model.request(task("Audit check C1 · Tool-call pairing"), None, _TOOLS)

    with ScriptedOpenAI({"C1": [error(429, retry_after=3), reply(text="after the limit")]}) as server:
        exc, response = run(lambda: scenario(server))

    assert isinstance(exc, ModelRateLimitError)
    assert isinstance(exc, ModelHTTPError)
    assert exc.status_code == 429
    assert exc.retry_after == 3.0
    assert exc.provider_error_code == "rate_limit_exceeded"
    assert response.parts == [TextPart(content="after the limit")]
    assert [r.step for r in server.requests] == [0, 1]


def test_rate_limit_then_success_through_the_sdk_retry() -> None:
    with ScriptedOpenAI({"C1": [error(429, retry_after=0.01), reply(text="ok")]}) as server:
        response = run(lambda: request(server))

    assert response.parts == [TextPart(content="ok")]
    assert [r.step for r in server.requests] == [0, 1], "the SDK's own retry consumed the error step"


def test_server_error_is_classified() -> None:
    with ScriptedOpenAI({"C1": [error(503, "upstream down")]}) as server, pytest.raises(ModelAPIError) as caught:
        run(lambda: request(server, settings=_NO_RETRIES))

    assert isinstance(caught.value, ModelHTTPError)
    assert caught.value.status_code == 503
    assert caught.value.body == {"message": "upstream down", "type": "server_error", "param": None, "code": None}


def test_keys_served_in_parallel_keep_separate_pointers() -> None:
    script = {
        "C1": [hang(0.15, then=reply(text="C1 first")), reply(text="C1 second")],
        "C2": [reply(text="C2 first"), reply(text="C2 second")],
    }

    async def scenario(server: ScriptedOpenAI) -> list[str]:
        # One model shared by both subagents, as the engine shares one per run.
        model = chat_model(server)

        async def subagent(first_line: str) -> list[str]:
            first = await model.request(task(first_line), None, _TOOLS)
            second = await model.request(task(first_line), None, _TOOLS)
            return [_text(first), _text(second)]

        one, two = await asyncio.gather(
            subagent("Audit check C1 · Tool-call pairing"), subagent("Audit check C2 · Append-only history")
        )
        return one + two

    with ScriptedOpenAI(script) as server:
        texts = run(lambda: scenario(server))

    assert texts == ["C1 first", "C1 second", "C2 first", "C2 second"]
    order = [(r.key, r.step) for r in server.requests]
    assert sorted(order) == [("C1", 0), ("C1", 1), ("C2", 0), ("C2", 1)]
    assert order[-1] == ("C1", 1), "C2 finished both turns while C1's first request was still hanging"


def test_concurrent_requests_on_one_key_each_get_a_distinct_step() -> None:
    script = {"C3": [reply(text=f"step {i}") for i in range(6)]}

    async def scenario(server: ScriptedOpenAI) -> list[str]:
        model = chat_model(server)
        responses = await asyncio.gather(
            *(model.request(task("Audit check C3 · Errors"), None, _TOOLS) for _ in range(6))
        )
        return [_text(r) for r in responses]

    with ScriptedOpenAI(script) as server:
        texts = run(lambda: scenario(server))

    assert sorted(texts) == [f"step {i}" for i in range(6)]
    assert sorted(r.step for r in server.requests) == list(range(6))


def test_callable_step_reacts_to_the_tool_result() -> None:
    def echo_tool_result(body: JsonObject) -> Step:
        [tool_message] = [m for m in body["messages"] if m["role"] == "tool"]
        return reply(text=f"saw {tool_message['content']}")

    messages: list[ModelMessage] = [
        *task("Audit check C1 · Tool-call pairing"),
        ModelResponse(parts=[ToolCallPart(tool_name="read_file", args='{"path": "a.py"}', tool_call_id="c1")]),
        ModelRequest(parts=[ToolReturnPart(tool_name="read_file", content="1: import os", tool_call_id="c1")]),
    ]
    with ScriptedOpenAI({"C1": [echo_tool_result]}) as server:
        response = run(lambda: chat_model(server).request(messages, None, _TOOLS))

    assert response.parts == [TextPart(content="saw 1: import os")]
    assert not server.step_errors


def test_callable_step_that_raises_is_recorded() -> None:
    def broken(body: JsonObject) -> Step:
        raise KeyError("nope")

    with ScriptedOpenAI({"C1": [broken]}) as server, pytest.raises(ModelServerError):
        run(lambda: request(server))

    assert server.step_errors == ["script step C1[0] raised KeyError('nope')"]
    assert len(server.requests) == 1, "a script problem is not retried"


def test_exhausted_key_is_recorded_and_not_retried() -> None:
    with ScriptedOpenAI({"C1": [reply(text="only one")]}) as server:
        run(lambda: request(server))
        with pytest.raises(ModelServerError) as caught:
            run(lambda: request(server))

    assert caught.value.status_code == 500
    assert caught.value.body == {
        "message": "script exhausted for key C1",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    assert server.exhausted == ["C1"]
    assert [r.step for r in server.requests] == [0, 1]


def test_unscripted_key_is_exhausted_at_once() -> None:
    with ScriptedOpenAI({}) as server, pytest.raises(ModelServerError):
        run(lambda: request(server, "Something else entirely"))

    assert server.exhausted == ["default"]


def test_hang_then_reply() -> None:
    with ScriptedOpenAI({"C1": [hang(0.05, then=reply(text="late"))]}) as server:
        response = run(lambda: request(server))

    assert response.parts == [TextPart(content="late")]


def test_hang_past_the_request_timeout_is_a_timeout() -> None:
    settings: ModelSettings = {"timeout": 0.2, "max_retries": 0}
    with ScriptedOpenAI({"C1": [hang(30, then=reply(text="never"))]}) as server:
        with pytest.raises(ModelTimeoutError):
            run(lambda: request(server, settings=settings))
        closing = time.monotonic()
    # The handler is still waiting out its 30 s when the test ends; closing must not wait for it.
    assert time.monotonic() - closing < 1.0


def test_close_interrupts_a_hang_promptly() -> None:
    async def scenario(server: ScriptedOpenAI) -> tuple[float, BaseException | None]:
        pending = asyncio.ensure_future(request(server, settings=_NO_RETRIES))
        while not server.requests:
            await asyncio.sleep(0.01)
        started = time.monotonic()
        server.close()
        elapsed = time.monotonic() - started
        try:
            await pending
        except ModelAPIError as exc:
            return elapsed, exc
        return elapsed, None

    with ScriptedOpenAI({"C1": [hang(30, then=reply(text="never"))]}) as server:
        elapsed, exc = run(lambda: scenario(server))

    assert elapsed < 1.0
    assert isinstance(exc, ModelConnectionError), "the hanging request is dropped, not answered"


@pytest.mark.parametrize(
    ("content", "key"),
    [
        ("Audit check C12 · Context truncation\nLandmarks: …", "C12"),
        ("Audit check C1 · Tool-call pairing", "C1"),
        ("Recon · locate landmarks\nscope: src/", "recon"),
        ("Audit check · no id", "default"),
        ("Please audit check C1", "default"),
        ([{"type": "text", "text": "Audit check C4 · x"}, {"type": "text", "text": "\nmore"}], "C4"),
    ],
)
def test_script_key_comes_from_the_first_user_message(content: object, key: str) -> None:
    body = {
        "messages": [
            {"role": "system", "content": "Recon · not a user message"},
            {"role": "user", "content": content},
            {"role": "user", "content": "Audit check C9 · a later message"},
        ]
    }
    assert script_key(body) == key


def test_wire_format_of_a_plain_openai_client() -> None:
    """The raw shapes the protocol promises, checked with the `openai` client alone."""

    async def scenario(server: ScriptedOpenAI) -> tuple[JsonObject, list[JsonObject]]:
        async with AsyncOpenAI(base_url=server.base_url, api_key="test", max_retries=0) as client:
            messages: Any = [{"role": "user", "content": "Recon · locate landmarks"}]
            completion = await client.chat.completions.create(model="m-1", messages=messages)
            stream = await client.chat.completions.create(
                model="m-1", messages=messages, stream=True, stream_options={"include_usage": True}
            )
            chunks = [chunk.model_dump(exclude_unset=True) async for chunk in stream]
            return completion.model_dump(exclude_unset=True), chunks

    step = reply(text="abcdef", tool_calls=[call("c1", "glob", {"pattern": "*.py"})], usage=usage(9, 4, cached=3))
    with ScriptedOpenAI({"recon": [step, step]}) as server:
        completion, chunks = run(lambda: scenario(server))

    assert completion == {
        "id": "chatcmpl-recon-0",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "m-1",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "abcdef",
                    "refusal": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "glob", "arguments": '{"pattern": "*.py"}'},
                        }
                    ],
                },
                "finish_reason": "tool_calls",
                "logprobs": None,
            }
        ],
        "usage": {
            "prompt_tokens": 9,
            "completion_tokens": 4,
            "total_tokens": 13,
            "prompt_tokens_details": {"cached_tokens": 3},
            "completion_tokens_details": {"reasoning_tokens": 0},
        },
    }
    deltas = [c["choices"][0]["delta"] for c in chunks if c["choices"]]
    assert deltas[0] == {"role": "assistant", "content": "", "refusal": None}
    assert "".join(d.get("content") or "" for d in deltas) == "abcdef"
    tool_deltas = [d["tool_calls"][0] for d in deltas if "tool_calls" in d]
    assert tool_deltas[0] == {
        "index": 0,
        "id": "c1",
        "type": "function",
        "function": {"name": "glob", "arguments": ""},
    }
    assert json.loads("".join(t["function"]["arguments"] for t in tool_deltas)) == {"pattern": "*.py"}
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["prompt_tokens_details"] == {"cached_tokens": 3}
    assert all(c["usage"] is None for c in chunks[:-1])


def _text(response: ModelResponse) -> str:
    return "".join(part.content for part in response.parts if isinstance(part, TextPart))
