"""Our own model engine's requests, checked with our own pytest plugin (`harness_audit.pytest_plugin`).

An llm audit runs against the scripted server on 127.0.0.1; every request body it sent is checked with the
plugin's public assertions, once imported directly and once through the `harness_trace` fixture over a JSONL
trace of the same run: each unit's requests are append-only (the model's replies carried unchanged), tool
pairing holds in every request, and the shared prefix (system prompt and tools) is stable across the run.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness_audit.pytest_plugin import (
    Trace,
    assert_append_only,
    assert_prefix_stable,
    assert_tool_pairing,
    assert_trace_clean,
    assert_within_limits,
)
from tests.llm.conftest import C12_FINDING, assert_clean, audit_over, finding, recon_steps, tool_step
from tests.llm.fake_openai import CREATED, JsonObject, Reply, ScriptedOpenAI, call, reply, usage

UNITS = ("recon", "C1", "C12")


def script() -> dict[str, list[Reply]]:
    """Recon finds both landmarks; C1 reads two files in one reply (parallel calls) and reports; C12 reports."""
    return {
        "recon": recon_steps("tool-execution", "agent-loop", usages=(usage(800, 40), usage(900, 3, cached=700))),
        "C1": [tool_step(call("r1", "read_file", {"path": "agent/loop.py"}),
                         call("r2", "read_file", {"path": "agent/tools.py"}), usage=usage(1000, 50, cached=600)),
               tool_step(call("f1", "report_finding", finding()), usage=usage(1500, 80, cached=1000)),
               reply(text="Done.", usage=usage(1700, 5, cached=1500))],
        "C12": [tool_step(call("g1", "report_finding", C12_FINDING), usage=usage(1200, 60, cached=900)),
                reply(text="Done.", usage=usage(1300, 7, cached=1200))],
    }


def completion(step: Reply, index: int) -> JsonObject:
    """The `chat.completion` body the scripted server sent for `step` (what the engine got back)."""
    message: JsonObject = {"role": "assistant", "content": step.text}
    if step.tool_calls:
        message["tool_calls"] = [{"id": c.call_id, "type": "function",
                                  "function": {"name": c.name, "arguments": c.arguments}} for c in step.tool_calls]
    body: JsonObject = {"id": f"chatcmpl-{index}", "object": "chat.completion", "created": CREATED,
                        "choices": [{"index": 0, "message": message, "finish_reason": step.finish_reason}]}
    if step.usage is not None:
        body["usage"] = step.usage.to_json()
    return body


Exchanges = dict[str, list[tuple[JsonObject, JsonObject]]]


def run_audit(harness: Path, out: Path, *, stream: bool = False) -> Exchanges:
    """An llm audit of C1 and C12 over the scripted server: per unit, (request body, response body) in order."""
    steps = script()
    with ScriptedOpenAI(steps) as server:
        audit_over(server, harness, ["C1", "C12"], out, stream=stream)
    assert_clean(server)
    assert server.unused == {}
    units: Exchanges = {}
    for n, received in enumerate(server.requests):
        units.setdefault(received.key, []).append((received.body, completion(steps[received.key][received.step], n)))
    assert sorted(units) == sorted(UNITS)
    return units


def write_trace(units: Exchanges, path: Path) -> Path:
    """The run as a JSONL request log, one exchange per line, the unit as the session."""
    with path.open("w", encoding="utf-8") as fh:
        for unit, pairs in units.items():
            for request, response in pairs:
                fh.write(json.dumps({"request": request, "response": response, "session": unit}) + "\n")
    return path


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_our_requests_are_append_only_paired_and_share_one_prefix(harness: Path, out: Path, stream: bool) -> None:
    units = run_audit(harness, out, stream=stream)
    for pairs in units.values():
        assert len(pairs) >= 2
        assert_append_only(pairs)  # each request = the previous one + the model's reply (unchanged) + results
        for request, _ in pairs:
            assert_tool_pairing(request)
        for (older, _), (newer, _) in zip(pairs, pairs[1:], strict=False):
            assert_prefix_stable(older, newer)  # within a unit the whole previous prompt is a cacheable prefix
        assert_within_limits(pairs, max_turns=3, max_tool_calls=3, max_identical_calls=2)
    everything = [request for pairs in units.values() for request, _ in pairs]
    assert len(everything) == 7
    for request in everything[1:]:
        # across units, tools and system prompt are byte-stable: every subagent hits the same cache entry
        assert_prefix_stable(everything[0], request, upto="system")


def test_our_first_check_request_is_the_same_from_the_same_state(harness: Path) -> None:
    def first_c1_request(state: dict[str, Any]) -> JsonObject:
        """Build our engine's first C1 request: a whole audit of `state["root"]` against a fresh scripted server."""
        with tempfile.TemporaryDirectory() as reports, ScriptedOpenAI(script()) as server:
            audit_over(server, Path(state["root"]), state["checks"], Path(reports))
        return next(r.body for r in server.requests if r.key == "C1")

    assert_prefix_stable(first_c1_request, {"root": str(harness), "checks": ["C1", "C12"]})


def test_our_recorded_run_passes_through_the_fixture(harness: Path, out: Path, tmp_path: Path,
                                                     harness_trace: Callable[..., Trace]) -> None:
    trace = harness_trace(write_trace(run_audit(harness, out), tmp_path / "own.jsonl"))
    assert trace.format == "jsonl" and not trace.malformed
    assert sorted(c.session or "" for c in trace.conversations) == sorted(UNITS)
    for conversation in trace.conversations:
        assert_append_only(conversation)
        for exchange in conversation.exchanges:
            assert_tool_pairing(exchange)
    first = trace.exchanges[0]
    for exchange in trace.exchanges[1:]:
        assert_prefix_stable(first, exchange, upto="system")
    assert_within_limits(trace, max_turns=3, max_tool_calls=3, max_identical_calls=2)
    assert_trace_clean(trace.path)  # every grader of `harness-audit trace` is silent on our own traffic


def test_the_fixture_is_the_loader(harness_trace: Callable[..., Trace]) -> None:
    from harness_audit.pytest_plugin import load_trace

    assert harness_trace is load_trace


def _calls(pairs: Sequence[tuple[JsonObject, JsonObject]]) -> list[str]:
    return [c["id"] for _, resp in pairs for c in resp["choices"][0]["message"].get("tool_calls", [])]


def test_a_broken_copy_of_our_requests_fails(harness: Path, out: Path) -> None:
    """The assertions above are not vacuous: the same requests, damaged, fail them."""
    units = run_audit(harness, out)
    pairs = units["C1"]
    assert _calls(pairs) == ["r1", "r2", "f1"]
    second = json.loads(json.dumps(pairs[1][0]))
    # drop the result of r2: the next request no longer answers every call of the previous reply
    second["messages"] = [m for m in second["messages"] if m.get("tool_call_id") != "r2"]
    with pytest.raises(AssertionError, match=r"tool call `r2` \(read_file\) in messages\[2\] has no result"):
        assert_tool_pairing(second)
    changed = json.loads(json.dumps(pairs[1][0]))
    changed["messages"][0]["content"] += " Today is 2026-12-02."
    with pytest.raises(AssertionError, match=r"requests\[1\] is not append-only over requests\[0\]: "
                                             r"messages\[0\] \(system\) changed at field `content`"):
        assert_append_only([pairs[0], (changed, pairs[1][1])])
    with pytest.raises(AssertionError, match=r"differs from the older request at message 0 \(system\)"):
        assert_prefix_stable(pairs[0][0], changed, upto="system")
