"""The checker over every real recording in `data/real/` (MIT-licensed copies; see their LICENSE-NOTICE.md).

Each expected finding below was verified by reading the recording; a recording with no entry is
expected to be silent. A rule that fires falsely on one of these is a bug in the rule.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.trace._run import DATA, Found, copy, findings, gated

REAL = DATA / "real"

# path under data/real → (check, rule, record line) of every finding, each one true:
EXPECTED: dict[str, Found] = {
    # OpenHands event streams (responses and observations only): pairing holds, usage present.
    "All-Hands-AI__OpenHands/tests/runtime/trajs/basic.json": [],
    "All-Hands-AI__OpenHands/tests/runtime/trajs/basic_gui_mode.json": [],
    "All-Hands-AI__OpenHands/tests/runtime/trajs/basic_interactions.json": [],
    "All-Hands-AI__OpenHands/tests/runtime/trajs/wrong_initial_state.json": [],
    # SWE-agent final histories: text actions, clean function calling, and the demo that reuses ids
    "SWE-agent__SWE-agent/tests/test_data/trajectories/gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95"
    "__c-3.00__install-1/swe-agent__test-repo-i1.traj": [],
    "SWE-agent__SWE-agent/trajectories/demonstrations/function_calling_simple.traj": [],
    # call_5iDd… is the id of 4 different calls (messages 6, 8, 18, 20), call_q3Vs… and call_ahTo… of 2 each
    "SWE-agent__SWE-agent/trajectories/demonstrations/replay__marshmallow-code__marshmallow-1867__function_calling_"
    "replace__install-1/marshmallow-code__marshmallow-1867.traj": [("C4", "duplicate-call-id-in-history", 126)],
    # response #0 says "I'll execute all 3 parallel searches…" + 3 tool_use; request #1 echoes only the tool_use blocks
    "crewAIInc__crewAI/lib/crewai/tests/cassettes/agents/TestAnthropicNativeToolCalling.test_anthropic_parallel_"
    "native_tool_calling_test_agent_kickoff.yaml": [("C2", "output-not-appended", 119)],
    "crewAIInc__crewAI/lib/crewai/tests/cassettes/agents/TestGeminiNativeToolCalling.test_gemini_parallel_native_"
    "tool_calling_test_agent_kickoff.yaml": [],
    # response #0 makes 4 calls (one…four), request #1 keeps only "one"; response #1 makes 3, request #2 keeps 1
    "crewAIInc__crewAI/lib/crewai/tests/cassettes/agents/TestMaxUsageCountWithNativeToolCalling.test_max_usage_count_"
    "limit_enforced_in_native_tool_calling.yaml": [("C1", "calls-dropped", 130), ("C1", "calls-dropped", 259),
                                                    ("C2", "output-not-appended", 130),
                                                    ("C2", "output-not-appended", 259)],
    "crewAIInc__crewAI/lib/crewai/tests/cassettes/agents/TestOpenAINativeToolCalling.test_openai_parallel_native_"
    "tool_calling_test_agent_kickoff.yaml": [],
    "crewAIInc__crewAI/lib/crewai/tests/cassettes/hooks/TestNativeToolCallingHooksIntegration.test_before_hook_"
    "blocks_tool_execution_in_crew.yaml": [],
    "crewAIInc__crewAI/lib/crewai/tests/cassettes/test_cache_hitting_between_agents.yaml": [],
    # request #2 re-sends request #1's history with the thinking block (and its signature) of message 1 dropped
    "pydantic__pydantic-ai/tests/cassettes/test_cache_prefix_stability/test_anthropic_thinking_agui_0_1_10_drops_"
    "prefix.yaml": [("C14", "prefix-changed", 199), ("C2", "history-mutated", 199)],
    "pydantic__pydantic-ai/tests/cassettes/test_cache_prefix_stability/test_anthropic_thinking_roundtrip_wire_"
    "stable[vercel].yaml": [],
    # request #2 sends no `tools` where request #1 sent get_weather
    "pydantic__pydantic-ai/tests/cassettes/test_cache_prefix_stability/test_openai_tool_call_roundtrip_wire_"
    "stable[vercel].yaml": [("C14", "prefix-changed", 199)],
    "pydantic__pydantic-ai/tests/cassettes/test_temporal/test_mcptoolset_dynamic_toolset_in_workflow.yaml": [],
    "pydantic__pydantic-ai/tests/cassettes/test_tool_search/test_anthropic_native_tool_search_streaming.yaml": [],
    # tool search loads a tool mid-conversation: the tool list (first in the cached prefix) changes
    "pydantic__pydantic-ai/tests/cassettes/test_tool_search/test_tool_search_eval[anthropic].yaml": [
        ("C14", "prefix-changed", 111), ("C14", "prefix-changed", 516)],
    "pydantic__pydantic-ai/tests/cassettes/test_tool_search/test_tool_search_eval[google].yaml": [
        ("C14", "prefix-changed", 105), ("C14", "prefix-changed", 485)],
    "pydantic__pydantic-ai/tests/cassettes/test_tool_search/test_tool_search_eval[openai-chat].yaml": [
        ("C14", "prefix-changed", 116), ("C14", "prefix-changed", 519)],
    "pydantic__pydantic-ai/tests/models/cassettes/test_anthropic/test_anthropic_cache_real_api.yaml": [],
    "pydantic__pydantic-ai/tests/models/cassettes/test_anthropic/test_anthropic_tool_with_thinking.yaml": [],
    "pydantic__pydantic-ai/tests/models/cassettes/test_anthropic/test_multiple_parallel_tool_calls.yaml": [],
    # request #3 drops `tools` and `instructions`; ids renamed on intake (call_0 → resp_…:call_0) are fine
    "pydantic__pydantic-ai/tests/models/cassettes/test_bedrock_mantle/test_reused_tool_call_ids[request].yaml": [
        ("C14", "prefix-changed", 442)],
    # step #1 loads deferred tools; DeepSeek reports 0 of 875 prompt tokens from cache
    "pydantic__pydantic-ai/tests/models/cassettes/test_deepseek/test_deepseek_deferred_capability_with_thinking.yaml": [
        ("C14", "prefix-changed", 122)],
    "pydantic__pydantic-ai/tests/models/cassettes/test_google/test_google_instructions_only_with_tool_calls.yaml": [],
    "pydantic__pydantic-ai/tests/models/cassettes/test_google/test_google_model_iter_stream.yaml": [],
    "pydantic__pydantic-ai/tests/models/cassettes/test_groq/test_tool_use_failed_error.yaml": [],
    "pydantic__pydantic-ai/tests/models/cassettes/test_openai/test_compatible_api_with_tool_calls_without_id.yaml": [],
    "pydantic__pydantic-ai/tests/models/cassettes/test_openai/test_multiple_agent_tool_calls.yaml": [],
    "pydantic__pydantic-ai/tests/models/cassettes/test_openai/test_openai_tool_output.yaml": [],
    "pydantic__pydantic-ai/tests/models/cassettes/test_openai/test_run_stream_sync_streams_real_model.yaml": [],
    "pydantic__pydantic-ai/tests/models/cassettes/test_openai_prompt_cache/test_openai_chat_prompt_cache_e2e.yaml": [],
    "pydantic__pydantic-ai/tests/models/cassettes/test_openai_responses/test_background_mode_with_tool_vcr.yaml": [],
    "pydantic__pydantic-ai/tests/models/cassettes/test_openai_responses/test_openai_conversation_id_tool_call_"
    "continuation.yaml": [],
    "pydantic__pydantic-ai/tests/models/cassettes/test_openai_responses/test_openai_responses_model_simple_response_"
    "with_tool_call.yaml": [],
    "pydantic__pydantic-ai/tests/models/cassettes/test_openai_responses/test_openai_responses_stream.yaml": [],
}


def _recordings() -> list[str]:
    return sorted(p.relative_to(REAL).as_posix() for p in REAL.rglob("*")
                  if p.is_file() and p.name != "LICENSE-NOTICE.md")


def test_every_recording_is_vendored_listed_and_expected() -> None:
    notice = (REAL / "LICENSE-NOTICE.md").read_text(encoding="utf-8")
    listed: set[str] = set()
    folder = ""
    for line in notice.splitlines():
        m = re.match(r"^### (\S+)/(\S+) @", line)
        if m:
            folder = f"{m.group(1)}__{m.group(2)}"
        row = re.match(r"^\| `([^`]+)` \| `[0-9a-f]{40}` \|", line)
        if row and folder:
            listed.add(f"{folder}/{row.group(1)}")
    assert set(_recordings()) == listed == set(EXPECTED)


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_real_recording(rel: str, tmp_path: Path) -> None:
    trace = copy(REAL / rel, tmp_path)
    report = gated([trace])
    assert not report.refusals, [r.message for r in report.refusals]
    assert findings(report) == sorted(EXPECTED[rel])
    lines = trace.read_text(encoding="utf-8").splitlines()
    for f in report.findings:
        assert f.file == trace.name
        first = " ".join(f.evidence.splitlines()[0].split())
        assert first in " ".join(lines[(f.line or 1) - 1].split())


def test_the_recordings_together_in_one_run(tmp_path: Path) -> None:
    copies = []
    for i, rel in enumerate(sorted(EXPECTED)):
        (tmp_path / str(i)).mkdir()
        copies.append(copy(REAL / rel, tmp_path / str(i)))
    report = gated(copies)
    assert not report.refusals
    assert len(report.findings) == sum(len(v) for v in EXPECTED.values())
    assert all(o.status.value == "ran" for o in report.outcomes)
