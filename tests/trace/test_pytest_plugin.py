"""The pytest plugin (`harness_audit.pytest_plugin`): its assertions per dialect, its fixture, its entry point, and
what a failing assertion looks like in a real pytest run (`pytester`)."""

from __future__ import annotations

import json
import shutil
import sys
import tomllib
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from harness_audit.pytest_plugin import (
    assert_append_only,
    assert_prefix_stable,
    assert_tool_pairing,
    assert_trace_clean,
    assert_within_limits,
    load_trace,
)
from harness_audit.trace import check_files
from harness_audit.trace.checker import TRACE_CHECKS
from tests.trace._run import DATA

pytest_plugins = ["pytester"]

MADE = DATA / "made"
REAL = DATA / "real" / "pydantic__pydantic-ai" / "tests"
ROOT = Path(__file__).resolve().parents[2]

JsonObject = dict[str, Any]

SYSTEM: JsonObject = {"role": "system", "content": "You are a careful coding agent."}
USER: JsonObject = {"role": "user", "content": "Summarise a.py for me, please."}
TOOLS: list[JsonObject] = [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]


def chat_call(call_id: str, name: str = "read_file", path: str = "a.py") -> JsonObject:
    """An OpenAI Chat tool call."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps({"path": path})}}


def assistant(*calls: JsonObject, text: str | None = None) -> JsonObject:
    """An OpenAI Chat assistant message."""
    msg: JsonObject = {"role": "assistant", "content": text}
    if calls:
        msg["tool_calls"] = list(calls)
    return msg


def result(call_id: str, content: str = "def main(): ...") -> JsonObject:
    """An OpenAI Chat tool message."""
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def chat(*messages: JsonObject) -> JsonObject:
    """An OpenAI Chat request body."""
    return {"model": "gpt-4.1", "tools": TOOLS, "messages": [SYSTEM, USER, *messages]}


def completion(message: JsonObject) -> JsonObject:
    """An OpenAI Chat response body carrying `message`."""
    return {"id": "chatcmpl-1", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2}}


# ============================================================================ assert_tool_pairing

def test_pairing_holds_for_a_chat_history_and_a_whole_body() -> None:
    history = [SYSTEM, USER, assistant(chat_call("c1"), chat_call("c2", path="b.py")), result("c1"), result("c2")]
    assert_tool_pairing(history)
    assert_tool_pairing(chat(*history[2:]))
    assert_tool_pairing(json.dumps(chat(*history[2:])))


@pytest.mark.parametrize(("history", "message"), [
    ([assistant(chat_call("c1"), chat_call("c2")), result("c1"), assistant(text="done")],
     "tool call `c2` (read_file) in messages[2] has no result before the next assistant message (messages[4])"),
    ([assistant(chat_call("c1")), result("c1"), result("c1")],
     "tool call `c1` (read_file) in messages[2] is answered more than once"),
    ([result("c9")], "tool result `c9` in messages[2] answers no call of the assistant message before it"),
    ([assistant(chat_call("c1")), result("c1"), assistant(chat_call("c1")), result("c1")],
     "call id `c1` is used by more than one call (again in messages[4])"),
    ([assistant(chat_call("c1"))], "tool call `c1` (read_file) in messages[2] has no result by the end of the history"),
], ids=["unanswered", "answered-twice", "orphan", "duplicate-id", "pending"])
def test_pairing_failures_name_the_call_and_the_position(history: list[JsonObject], message: str) -> None:
    with pytest.raises(AssertionError) as raised:
        assert_tool_pairing([SYSTEM, USER, *history])
    assert str(raised.value).startswith(f"tool pairing broken (openai-chat history of {2 + len(history)} messages):")
    assert message in str(raised.value)


def test_pending_calls_at_the_end_can_be_allowed() -> None:
    assert_tool_pairing([SYSTEM, USER, assistant(chat_call("c1"))], allow_pending=True)
    with pytest.raises(AssertionError, match=r"`c1`.*messages\[2\] has no result before the next assistant"):
        assert_tool_pairing([SYSTEM, USER, assistant(chat_call("c1")), assistant(text="x")], allow_pending=True)


def test_anthropic_results_must_open_the_next_user_message() -> None:
    use = {"role": "assistant", "content": [{"type": "text", "text": "Reading."},
                                            {"type": "tool_use", "id": "toolu_1", "name": "read_file",
                                             "input": {"path": "a.py"}}]}
    answer = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}
    assert_tool_pairing([{"role": "user", "content": "Go."}, use, answer])
    late = [{"role": "user", "content": "Go."}, use, {"role": "user", "content": "Well?"}, answer]
    with pytest.raises(AssertionError) as raised:
        assert_tool_pairing(late)
    assert str(raised.value).splitlines() == [
        "tool pairing broken (anthropic history of 4 messages):",
        "  tool call `toolu_1` (read_file) in messages[1] has no result in the next user message (messages[2])",
        "  tool result `toolu_1` in messages[3] answers no call of the assistant message before it"]


def test_gemini_pairs_by_count_and_position() -> None:
    call = {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"path": "a.py"}}},
                                       {"functionCall": {"name": "read_file", "args": {"path": "b.py"}}}]}
    one = {"functionResponse": {"name": "read_file", "response": {"return_value": "x"}}}
    user = {"role": "user", "parts": [{"text": "Go."}]}
    assert_tool_pairing([user, call, {"role": "user", "parts": [one, one]}])
    with pytest.raises(AssertionError, match=r"tool call without id \(read_file\) in messages\[1\] has no result"):
        assert_tool_pairing([user, call, {"role": "user", "parts": [one]}])


def test_responses_pair_by_call_id_and_trust_server_held_history() -> None:
    fc = {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{}"}
    out = {"type": "function_call_output", "call_id": "call_1", "output": "x"}
    assert_tool_pairing([{"role": "user", "content": "Go."}, fc, out])
    with pytest.raises(AssertionError, match=r"`call_1` \(read_file\) in messages\[1\] has no result \(no "
                                             r"`function_call_output`"):
        assert_tool_pairing([{"role": "user", "content": "Go."}, fc])
    with pytest.raises(AssertionError, match=r"tool result `call_1` in messages\[0\] answers no call in this input"):
        assert_tool_pairing([out], dialect="openai-responses")
    # its call lives in the server-held response: not an orphan
    assert_tool_pairing({"model": "gpt-5", "previous_response_id": "resp_1", "input": [out]})


def test_a_body_that_is_no_model_request_is_a_usage_error() -> None:
    with pytest.raises(ValueError, match="not a model request body"):
        assert_tool_pairing({"prompt": "hello"})
    with pytest.raises(ValueError, match="unknown dialect 'cohere'"):
        assert_tool_pairing([USER], dialect="cohere")  # type: ignore[arg-type]


# ============================================================================ assert_append_only

def conversation() -> list[tuple[JsonObject, JsonObject]]:
    """Three requests of one chat conversation, each with its response."""
    first = assistant(chat_call("c1"), text="I will read a.py.")
    second = assistant(chat_call("c2", path="b.py"))
    return [(chat(), completion(first)),
            (chat(first, result("c1")), completion(second)),
            (chat(first, result("c1"), second, result("c2")), completion(assistant(text="Done.")))]


def test_append_only_holds_with_and_without_responses() -> None:
    pairs = conversation()
    assert_append_only(pairs)
    assert_append_only([request for request, _ in pairs])


def test_a_rewritten_message_is_named_with_its_field_and_both_values() -> None:
    pairs = conversation()
    rewritten = json.loads(json.dumps(pairs[2][0]))
    rewritten["messages"][3]["content"] = "def main(): pass"
    with pytest.raises(AssertionError) as raised:
        assert_append_only([pairs[0], pairs[1], (rewritten, None)])
    assert str(raised.value).splitlines() == [
        "requests[2] is not append-only over requests[1]: messages[3] (tool) changed at field `content`",
        '  requests[1]: "def main(): ..."',
        '  requests[2]: "def main(): pass"']


def test_dropped_messages_and_a_changed_reply_fail() -> None:
    pairs = conversation()
    with pytest.raises(AssertionError, match=r"requests\[1\] is not append-only over requests\[0\]: it drops "
                                             r"messages\[2:\] \(2 messages, requests\[0\] had 4\)"):
        assert_append_only([pairs[1][0], pairs[0][0]])
    reworded = json.loads(json.dumps(pairs[1][0]))
    reworded["messages"][2]["content"] = "Reading a.py now."
    with pytest.raises(AssertionError) as raised:
        assert_append_only([pairs[0], (reworded, None)])
    lines = str(raised.value).splitlines()
    assert lines[0] == "requests[1] does not carry the response to requests[0] as messages[2]: the output's text was " \
                       "changed"
    assert lines[1:] == ["  response:    assistant text 'I will read a.py.', calls read_file({\"path\": \"a.py\"})",
                         "  messages[2]: assistant text 'Reading a.py now.', calls read_file({\"path\": \"a.py\"})"]
    dropped = json.loads(json.dumps(pairs[1][0]))
    dropped["messages"][2]["tool_calls"] = []
    with pytest.raises(AssertionError, match="tool calls of the output were dropped or their arguments changed"):
        assert_append_only([pairs[0], (dropped, None)])


def test_call_ids_renamed_on_intake_are_accepted() -> None:
    reply = assistant(chat_call("call_0"))
    renamed = assistant(chat_call("resp_1:call_0"))
    assert_append_only([(chat(), completion(reply)), chat(renamed, result("resp_1:call_0"))])


def test_server_held_history_is_not_compared() -> None:
    fc = {"type": "function_call", "call_id": "call_1", "name": "read_file", "arguments": "{}"}
    first = {"model": "gpt-5", "input": [{"role": "user", "content": "Go."}]}
    second = {"model": "gpt-5", "previous_response_id": "resp_1",
              "input": [{"type": "function_call_output", "call_id": "call_1", "output": "x"}]}
    assert_append_only([(first, {"id": "resp_1", "status": "completed", "output": [fc]}), second])


def test_append_only_wants_one_conversation() -> None:
    with pytest.raises(TypeError, match="several conversations"):
        assert_append_only(load_trace(MADE / "clean_interleaved.jsonl"))
    with pytest.raises(TypeError, match="requests of one conversation"):
        assert_append_only(chat())


# ============================================================================ assert_prefix_stable

def test_two_builds_from_one_state_are_compared_on_deep_copies() -> None:
    def build(state: dict[str, Any]) -> JsonObject:
        state["history"].append(USER)  # a builder that mutates its input must not leak into the second build
        return {"model": "gpt-4.1", "tools": TOOLS, "messages": [SYSTEM, *state["history"]]}

    assert_prefix_stable(build, {"history": []})


def test_a_volatile_system_prompt_fails_with_field_and_byte_offset() -> None:
    clock = iter(["10:00:00", "10:00:01"])

    def build(history: list[JsonObject]) -> JsonObject:
        system = {"role": "system", "content": f"Now: {next(clock)}. You are a careful coding agent."}
        return {"model": "gpt-4.1", "tools": TOOLS, "messages": [system, *history]}

    with pytest.raises(AssertionError) as raised:
        assert_prefix_stable(build, [USER])
    tools_size = len(canonical(TOOLS))
    total = tools_size + len(canonical({"role": "system", "content": "Now: 10:00:00. You are a careful coding agent."}))
    total += len(canonical(USER))
    offset = tools_size + len('{"content":"Now: 10:00:0')
    assert str(raised.value).splitlines() == [
        "prompt prefix not stable: the second build differs from the first build at message 0 (system), "
        "field `content`",
        f"  first difference at canonical byte {offset} (byte {offset - tools_size} of `messages[0]`); {offset} of "
        f"{total} bytes ({offset / total:.0%}) are a shared prefix",
        # 40 bytes either side of the first difference
        '  first build:  {"content":"Now: 10:00:00. You are a careful coding agent.","rol…',
        '  second build: {"content":"Now: 10:00:01. You are a careful coding agent.","rol…']


def canonical(value: Any) -> str:
    """Canonical JSON as the checker writes it."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def test_builds_equal_as_json_must_keep_their_key_order() -> None:
    orders = iter([("path", "mode"), ("mode", "path")])

    def build(_: None) -> str:
        keys = next(orders)
        params = {k: {"type": "string"} for k in keys}
        return json.dumps({"tools": [{"type": "function", "function": {"name": "read_file", "parameters": params}}],
                           "messages": [SYSTEM, USER]})

    with pytest.raises(AssertionError, match=r"`tools` of the two builds is equal as JSON but serialises differently "
                                             r"\(key order\)"):
        assert_prefix_stable(build, None)


def test_a_newer_request_must_keep_the_older_prefix() -> None:
    pairs = conversation()
    assert_prefix_stable(pairs[0][0], pairs[1][0])
    grown: JsonObject = {**pairs[1][0], "tools": [*TOOLS, {"type": "function", "function": {"name": "grep", "parameters": {}}}]}
    with pytest.raises(AssertionError, match=r"prompt prefix not kept: the newer request differs from the older "
                                             r"request at the tool definitions \(added grep\)"):
        assert_prefix_stable(pairs[0][0], grown)


def test_requests_of_different_conversations_share_tools_and_system_only() -> None:
    other = {"model": "gpt-4.1", "tools": TOOLS, "messages": [SYSTEM, {"role": "user", "content": "Another task."}]}
    assert_prefix_stable(chat(), other, upto="system")
    with pytest.raises(AssertionError, match=r"at message 1 \(user\), field `content`"):
        assert_prefix_stable(chat(), other)
    with pytest.raises(AssertionError, match=r"at message 0 \(system\)"):
        assert_prefix_stable(chat(), {**other, "messages": [{"role": "system", "content": "New."}]}, upto="system")


def test_prefix_over_a_recorded_conversation_finds_the_dropped_thinking_block() -> None:
    trace = load_trace(REAL / "cassettes/test_cache_prefix_stability/test_anthropic_thinking_agui_0_1_10_drops_"
                               "prefix.yaml")
    (conv,) = trace.conversations
    assert_prefix_stable(conv.exchanges[0], conv.exchanges[1])
    with pytest.raises(AssertionError, match=r"at message 1 \(assistant\), field `content\[0\]`"):
        assert_prefix_stable(conv.exchanges[1], conv.exchanges[2])
    with pytest.raises(AssertionError, match=r"requests\[2\] \(line 199\) is not append-only over requests\[1\] "
                                             r"\(line 95\): messages\[1\] \(assistant\) changed at field `content\[0\]`"):
        assert_append_only(conv)


# ============================================================================ assert_within_limits

def looping(n: int) -> list[JsonObject]:
    """`n + 1` requests of a conversation that reads the same file `n` times and gets the same result."""
    history: list[JsonObject] = []
    out = [chat()]
    for i in range(n):
        history += [assistant(chat_call(f"c{i}")), result(f"c{i}", "same")]
        out.append(chat(*history))
    return out


def test_limits_name_the_request_and_the_ceiling() -> None:
    with pytest.raises(AssertionError) as raised:
        assert_within_limits(looping(5), max_turns=4, max_tool_calls=3, max_identical_calls=None)
    assert str(raised.value).splitlines() == [
        "limits exceeded:",
        "  requests[4]: Conversation 1 executed 4 tool calls, more than the ceiling of 3 (`max_tool_calls`).",
        "  requests[4]: Conversation 1 reached 5 model requests, more than the ceiling of 4 (`max_turns`)."]
    with pytest.raises(AssertionError, match=r"requests\[2\]: The model called `read_file` with the same arguments 3 "
                                             r"times in a row"):
        assert_within_limits(looping(5))
    assert_within_limits(looping(5), max_identical_calls=None)
    assert_within_limits(looping(5), max_turns=None, max_tool_calls=None, max_identical_calls=6)


def test_limits_over_a_trace_file(tmp_path: Path) -> None:
    trace = shutil.copy(MADE / "c12_turns.jsonl", tmp_path / "turns.jsonl")
    assert_within_limits(trace)
    with pytest.raises(AssertionError, match=r"turns\.jsonl:4: Conversation 1 reached 4 model requests"):
        assert_within_limits(trace, max_turns=3)
    with pytest.raises(AssertionError, match=r"turns\.jsonl:4:"):
        assert_within_limits(load_trace(trace), max_turns=3)


# ============================================================================ load_trace, assert_trace_clean

def test_load_trace_splits_as_the_checker_does() -> None:
    path = REAL / "cassettes/test_tool_search/test_tool_search_eval[openai-chat].yaml"
    trace = load_trace(path)
    checked = check_files([(path, path.name)], TRACE_CHECKS).files[0]
    assert trace.format == "vcr" == checked.format
    assert len(trace.conversations) == checked.conversations == 4
    assert sum(len(c.exchanges) for c in trace.conversations) == len(trace.exchanges) == checked.exchanges
    for conv in trace.conversations:
        assert_append_only(conv)
        assert all(r.messages for r in conv.requests)
    interleaved = load_trace(MADE / "clean_interleaved.jsonl")
    assert [[ex.source.line for ex in c.exchanges] for c in interleaved.conversations] == [[1, 3], [2, 4]]


def test_load_trace_lists_unreadable_records(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text((MADE / "clean_openai_chat.jsonl").read_text() + "{not json\n")
    trace = load_trace(path)
    assert [line for line, _ in trace.malformed] == [len(path.read_text().splitlines())]
    with pytest.raises(AssertionError, match=r"unreadable record: not valid JSON"):
        assert_trace_clean(path)


def test_trace_clean_passes_a_clean_trace_and_lists_findings(tmp_path: Path) -> None:
    assert_trace_clean(shutil.copy(MADE / "clean_anthropic.jsonl", tmp_path / "a.jsonl"))
    bad = shutil.copy(MADE / "c02_history_mutated.jsonl", tmp_path / "b.jsonl")
    with pytest.raises(AssertionError) as raised:
        assert_trace_clean(bad)
    lines = str(raised.value).splitlines()
    assert lines[0] == "trace b.jsonl is not clean: 2 finding(s), 0 unreadable record(s)"
    assert [line.split(":", 2)[:2] for line in lines[1:]] == [["  line 3", " C2 history-mutated (confirmed)"],
                                                              ["  line 3", " C14 prefix-changed (confirmed)"]]
    assert_trace_clean(bad, checks=["C1", "C4"])
    with pytest.raises(ValueError, match=r"'C8' cannot run on a trace"):
        assert_trace_clean(bad, checks=["C8"])


# ============================================================================ the plugin in a pytest run

def test_the_entry_point_is_declared_and_installed() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]["pytest11"]
    assert declared == {"harness_audit": "harness_audit.pytest_plugin"}
    installed = {ep.name: ep.value for ep in entry_points(group="pytest11")}
    assert installed.get("harness_audit") == "harness_audit.pytest_plugin", \
        "reinstall the package (`pip install -e .`) so pytest loads the plugin"


def test_loading_the_plugin_imports_nothing_heavy(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(check="""
        import sys, pytest
        before = set(sys.modules)
        import harness_audit.pytest_plugin
        print(sorted(set(sys.modules) - before))
    """)
    run = pytester.run(sys.executable, "check.py")
    assert run.ret == 0
    assert run.outlines[-1] == "['harness_audit', 'harness_audit.pytest_plugin']"


_RUN_ARGS = ("-p", "no:cacheprovider", "-o", "addopts=")


def test_the_fixture_is_there_in_a_fresh_session(pytester: pytest.Pytester) -> None:
    shutil.copy(MADE / "clean_interleaved.jsonl", pytester.path / "run.jsonl")
    pytester.makepyfile(test_uses_fixture="""
        from harness_audit.pytest_plugin import assert_append_only, assert_tool_pairing

        def test_run(harness_trace):
            trace = harness_trace("run.jsonl")
            assert len(trace.conversations) == 2
            for conversation in trace.conversations:
                assert_append_only(conversation)
                for exchange in conversation.exchanges:
                    assert_tool_pairing(exchange)
    """)
    run = pytester.runpytest_subprocess(*_RUN_ARGS)
    run.assert_outcomes(passed=1)


FailingCase = tuple[str, list[str]]

_FAILING: dict[str, FailingCase] = {
    "pairing": ("""
        from harness_audit.pytest_plugin import assert_tool_pairing

        def test_pairing():
            call = {"id": "call_7", "type": "function", "function": {"name": "read", "arguments": "{}"}}
            assert_tool_pairing([{"role": "user", "content": "go"},
                                 {"role": "assistant", "content": None, "tool_calls": [call]},
                                 {"role": "assistant", "content": "done"}])
    """, ["AssertionError: tool pairing broken (openai-chat history of 3 messages):",
          "  tool call `call_7` (read) in messages[1] has no result before the next assistant message "
          "(messages[2])"]),
    "prefix": ("""
        import itertools
        from harness_audit.pytest_plugin import assert_prefix_stable

        counter = itertools.count()

        def build(task):
            return {"messages": [{"role": "system", "content": f"Request {next(counter)}. Be careful."},
                                 {"role": "user", "content": task}]}

        def test_prefix():
            assert_prefix_stable(build, "fix the bug")
    """, ["AssertionError: prompt prefix not stable: the second build differs from the first build at message 0 "
          "(system), field `content`",
          "  first difference at canonical byte 20 (byte 20 of `messages[0]`); 20 of 91 bytes (22%) are a "
          "shared prefix",
          '  first build:  {"content":"Request 0. Be careful.","role":"system"}',
          '  second build: {"content":"Request 1. Be careful.","role":"system"}']),
    "trace": ("""
        from harness_audit.pytest_plugin import assert_trace_clean

        def test_trace():
            assert_trace_clean("run.jsonl")
    """, ["AssertionError: trace run.jsonl is not clean: 1 finding(s), 0 unreadable record(s)",
          "  line 2: C1 unanswered-call (confirmed): Tool call `call_a1` (read_file) in message 2 has no result in "
          "this request, which was sent after the call."]),
}


@pytest.mark.parametrize("case", sorted(_FAILING))
def test_a_failing_assertion_reads_well_in_pytest(pytester: pytest.Pytester, case: str) -> None:
    source, expected = _FAILING[case]
    shutil.copy(MADE / "c01_unanswered_call.jsonl", pytester.path / "run.jsonl")
    pytester.makepyfile(**{f"test_{case}": source})
    run = pytester.runpytest_subprocess(*_RUN_ARGS)
    run.assert_outcomes(failed=1)
    out = run.stdout.str()
    lines = out.splitlines()
    # pytest prints the message after an `E` gutter: strip it at the column where the message starts
    at = next(i for i, line in enumerate(lines) if line.startswith("E") and line.endswith(expected[0]))
    column = len(lines[at]) - len(expected[0])
    assert [line[column:].rstrip() for line in lines[at:at + len(expected)]] == expected
    # the plugin's own frames are hidden: the traceback ends at the user's assertion call
    assert "pytest_plugin.py" not in out
    assert "_fail(" not in out

