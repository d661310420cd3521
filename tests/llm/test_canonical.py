"""The ledger's canonical form: the same whatever the dependency's version, the transport or streaming."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic_ai.messages import (
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.usage import RequestUsage

from harness_audit.findings import Usage
from harness_audit.llm.canonical import (
    messages_from,
    request_messages,
    response_from,
    response_message,
    usage_of,
)
from tests.llm.golden import GOLDEN, lines, openai_events


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_a_dependency_upgrade_that_changes_what_we_record_fails_here(tmp_path: Path, stream: bool) -> None:
    """Risk: a new pydantic-ai or SDK version changes what the ledger holds (a field, an argument's form,
    usage mapping), so recorded runs stop replaying and evals compare a library's dump instead of ours.
    If this fails after an upgrade, read the diff: fix `harness_audit.llm.canonical`, or, for a deliberate
    change, regenerate with `python -m tests.llm.golden`."""
    golden = (GOLDEN / "openai_chat.ledger.jsonl").read_text(encoding="utf-8")
    assert lines(openai_events(tmp_path, stream=stream)) == golden


def test_canonical_messages_round_trip_through_pydantic_ai() -> None:
    """Risk: the replay model serves a reply that differs from the recorded one (a lost call, arguments
    re-encoded, thinking dropped), so a replayed run answers another conversation."""
    history = [
        ModelRequest(parts=[SystemPromptPart(content="rules"), UserPromptPart(content="Audit check C1")]),
        ModelResponse(parts=[ThinkingPart(content="hmm"), TextPart(content="Reading."),
                             ToolCallPart(tool_name="read_file", args='{"path": "a.py"}', tool_call_id="x1"),
                             ToolCallPart(tool_name="glob", args="{bad", tool_call_id="x2")]),
        ModelRequest(parts=[ToolReturnPart(tool_name="read_file", content="1 | a = 1", tool_call_id="x1"),
                            ToolReturnPart(tool_name="glob", content="Not executed", tool_call_id="x2")]),
    ]
    canonical = request_messages(history)
    assert [m["role"] for m in canonical] == ["system", "user", "assistant", "tool", "tool"]
    assert canonical[2]["parts"][2] == {"type": "tool-call", "id": "x1", "name": "read_file",
                                        "arguments": {"path": "a.py"}}
    assert canonical[2]["parts"][3] == {"type": "tool-call", "id": "x2", "name": "glob", "arguments_raw": "{bad"}
    assert request_messages(messages_from(canonical)) == canonical


def test_usage_unknown_stays_unknown_and_cache_tokens_are_kept() -> None:
    """Risk: a reply without usage is recorded as zero tokens, or cache reads and writes are lost, so the
    report's cost is wrong in a way nobody can see."""
    measured = usage_of(RequestUsage(input_tokens=900, output_tokens=20, cache_read_tokens=600,
                                     cache_write_tokens=100, details={"thinking_tokens": 7}))
    assert measured == Usage(input_tokens=900, output_tokens=20, cache_read_tokens=600, cache_write_tokens=100,
                             reasoning_tokens=7, requests=1, known=True)
    unmeasured = usage_of(RequestUsage(unmeasured_requests=1))
    assert not unmeasured.known
    rebuilt = response_from(response_message(ModelResponse(parts=[TextPart(content="ok")])), usage=unmeasured,
                            finish_reason="stop")
    assert not usage_of(rebuilt.usage).known
    assert rebuilt.finish_reason == "stop"
