"""Large traces stream: memory stays bounded by what one conversation keeps, not by the file size."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

from harness_audit.findings import CheckId
from harness_audit.trace import TRACE_CHECKS, Options, check_files


def _write(path: Path, sessions: int, turns: int) -> None:
    """`sessions` conversations one after another, each `turns` requests long (a tool call per turn)."""
    with path.open("w") as fh:
        for s in range(sessions):
            history: list[dict[str, object]] = [{"role": "system", "content": "You are an agent."},
                                                {"role": "user", "content": f"Task {s}: do it."}]
            for t in range(turns):
                call = {"id": f"c{s}_{t}", "type": "function",
                        "function": {"name": "read", "arguments": json.dumps({"path": f"f{t}.py"})}}
                reply = {"role": "assistant", "content": None, "tool_calls": [call]}
                response = {"choices": [{"index": 0, "message": reply, "finish_reason": "tool_calls"}],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 2}}
                fh.write(json.dumps({"request": {"messages": history, "tools": []}, "response": response,
                                     "session": f"s{s}"}) + "\n")
                history = [*history, reply, {"role": "tool", "tool_call_id": f"c{s}_{t}", "content": "x" * 40}]


def _peak(path: Path, clean: bool = True) -> int:
    tracemalloc.start()
    try:
        result = check_files([(path, path.name)], TRACE_CHECKS, Options(max_open_sessions=16))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not clean or not result.candidates
    assert result.checks[CheckId.C1].ran and result.files[0].exchanges > 0
    return peak


def test_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    _write(small, sessions=60, turns=8)
    _write(large, sessions=480, turns=8)
    assert large.stat().st_size > 7 * small.stat().st_size
    # warm-up outside tracing: CPython's free lists then serve the tuples untraced in both measured runs
    check_files([(large, large.name)], TRACE_CHECKS, Options(max_open_sessions=16))
    # past the open-session cap (16 here) nothing more is kept: the peak stays put while the file grows 8x
    assert _peak(large) < 1.3 * _peak(small)


def test_a_conversation_keeps_far_less_than_its_requests(tmp_path: Path) -> None:
    trace = tmp_path / "one.jsonl"
    _write(trace, sessions=1, turns=150)
    last_line = trace.read_text().splitlines()[-1]
    # bodies are dropped after each record: the peak is a small multiple of ONE request, far below the file
    peak = _peak(trace, clean=False)
    assert peak < 40 * len(last_line)
    assert peak < trace.stat().st_size / 2
