"""The relay model (`benchmarks/relay_model.py`): a Chat Completions endpoint whose replies an agent writes.

A thread plays the agent (reads each request with `render`, answers with `answer`), and the hybrid engine runs
against the relay over real HTTP on 127.0.0.1, as it does in a measured run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.llm.conftest import BENCHMARKS, benchmark_module

_REPO = Path(__file__).resolve().parents[2]
_SCRIPT = BENCHMARKS / "relay_model.py"
_EVIDENCE = '                log.warning("tool %s failed: %s", call.function.name, exc)\n                continue'


@pytest.fixture(scope="module")
def relay() -> Iterator[ModuleType]:
    with benchmark_module("relay_model") as module:
        yield module


def _agent(relay: ModuleType, folder: Path, seen: list[str], stop: threading.Event) -> None:
    """Confirm the example's C1 lead on the first turn of each conversation, then finish."""
    while not stop.is_set():
        for rid in relay.pending(folder):
            text = relay.render(folder, rid)
            seen.append(text)
            if "Audit check C1" in text:
                relay.answer(folder, rid, text=None, calls=[("report_finding", json.dumps({
                    "check": "C1", "verdict": "confirmed", "lead": "C1-1", "file": "agent/loop.py", "line": 43,
                    "claim": "a failed tool call gets no result", "evidence": _EVIDENCE,
                    "consequence": "the next request is rejected", "direction": "record the error as the result"}))])
            else:
                relay.answer(folder, rid, text="Done.", calls=[])
        time.sleep(0.05)


def test_the_hybrid_engine_audits_through_the_relay(relay: ModuleType, tmp_path: Path) -> None:
    folder, out = tmp_path / "relay", tmp_path / "out"
    server, url = relay.start(folder)
    seen: list[str] = []
    stop = threading.Event()
    agent = threading.Thread(target=_agent, args=(relay, folder, seen, stop), daemon=True)
    agent.start()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "harness_audit", str(_REPO / "examples" / "agent_loop"), "C1", "--engine", "hybrid",
             "--model", "vllm:relay", "--base-url", url, "--format", "json", "--output-dir", str(out),
             "--fail-on", "never", "--no-cache", "-q"],
            capture_output=True, text=True, timeout=300, check=False)
    finally:
        stop.set()
        server.shutdown()
    assert proc.returncode == 0, proc.stderr
    report = json.loads(next(out.glob("report-*.json")).read_text(encoding="utf-8"))
    c1 = [f for f in report["findings"] if f["check"] == "C1"]
    assert [(f["file"], f["line"], f["verdict"]) for f in c1] == [("agent/loop.py", 43, "confirmed")]
    # The first turn shows the tools, the system prompt and the task; the second only the tool's result.
    first, second = seen[0], seen[1]
    assert "## Tools you can call" in first and "[system]" in first and "Audit check C1" in first
    assert "[system]" not in second and "Audit check C1" not in second
    assert "[tool result for call_0001_1]" in second and "Accepted" in second
    stats = relay.stats(folder)
    assert stats["requests"] == 2 and stats["pending"] == 0 and stats["prompt_tokens"] > 0


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    import urllib.request

    req = urllib.request.Request(f"{url}/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def test_answers_are_checked_resends_are_named_and_usage_counts_the_cached_prefix(relay: ModuleType, tmp_path: Path) -> None:
    folder = tmp_path / "relay"
    server, url = relay.start(folder)
    tools = [{"type": "function", "function": {"name": "read_file", "description": "read",
                                               "parameters": {"type": "object", "properties": {}}}}]
    prefix = "x" * 8000
    body = {"model": "relay", "tools": tools, "messages": [{"role": "system", "content": prefix},
                                                           {"role": "user", "content": "task"}]}
    replies: list[dict[str, Any]] = []
    try:
        for turn in range(2):
            worker = threading.Thread(target=lambda: replies.append(_post(url, body)), daemon=True)
            worker.start()
            while not (ids := relay.pending(folder)):
                time.sleep(0.02)
            rid = ids[0]
            shown = relay.render(folder, rid)
            # The same request sent again (as the engine does after a timeout) says so rather than show nothing.
            assert ("nothing new" in shown) == (turn == 1) and ("[user]\ntask" in shown) == (turn == 0)
            with pytest.raises(relay.AnswerError, match="offers no tool 'write_file'"):
                relay.answer(folder, rid, text=None, calls=[("write_file", "{}")])
            with pytest.raises(relay.AnswerError, match="must be a JSON object"):
                relay.answer(folder, rid, text=None, calls=[("read_file", "[1]")])
            with pytest.raises(relay.AnswerError, match="give --text"):
                relay.answer(folder, rid, text=None, calls=[])
            if turn == 0:
                relay.answer(folder, rid, text=None, calls=[("read_file", '{"path": "a.py"}')])
            else:
                relay.answer(folder, rid, text="Nothing to report.", calls=[])
            worker.join(timeout=30)
            with pytest.raises(relay.AnswerError, match="already answered"):
                relay.answer(folder, rid, text="again", calls=[])
    finally:
        server.shutdown()
    first, second = replies
    call = first["choices"][0]["message"]["tool_calls"][0]
    assert first["choices"][0]["finish_reason"] == "tool_calls"
    assert call["function"] == {"name": "read_file", "arguments": '{"path": "a.py"}'}
    assert second["choices"][0] == {"index": 0, "message": {"role": "assistant", "content": "Nothing to report."},
                                    "finish_reason": "stop"}
    assert first["usage"]["prompt_tokens_details"]["cached_tokens"] == 0
    cached = second["usage"]["prompt_tokens_details"]["cached_tokens"]
    assert cached >= 1024 and (cached - 1024) % 128 == 0 and cached <= second["usage"]["prompt_tokens"]


def test_the_cli_refuses_a_folder_that_is_not_a_relay(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, str(_SCRIPT), "next", str(tmp_path), "--wait", "0"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2 and "is not a relay folder" in proc.stderr
