"""Old tool outputs cleared to a stub are a compaction step, not a rewritten history (C2).

Our own engine clears the output of navigation calls older than six tool turns (issue 15, lean context), as
context-editing features of providers do; the call and its one result stay, only the result's content becomes
shorter. A trace of such a run must not read as a history mutation; anything else changed still does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.trace._run import findings, gated

_PAGE = "\n".join(f"{n:>4}\tline {n} of the file" for n in range(1, 60))


def _call(n: int) -> dict[str, Any]:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": f"c{n}", "type": "function",
                            "function": {"name": "read_file", "arguments": json.dumps({"path": f"f{n}.py"})}}]}


def _result(n: int, content: str = _PAGE) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": f"c{n}", "content": content}


def _record(messages: list[dict[str, Any]], reply: dict[str, Any]) -> str:
    response = {"choices": [{"index": 0, "message": reply, "finish_reason": "tool_calls" if "tool_calls" in reply
                             else "stop"}], "usage": {"prompt_tokens": 100, "completion_tokens": 5}}
    return json.dumps({"request": {"model": "m", "messages": messages, "tools": []}, "response": response})


def _trace(tmp_path: Path, second_history: list[dict[str, Any]]) -> Path:
    head = [{"role": "system", "content": "You audit."}, {"role": "user", "content": "Audit check C1 · pairing"}]
    first = [*head, _call(1), _result(1), _call(2), _result(2)]
    path = tmp_path / "t.jsonl"
    path.write_text(_record(first, _call(3)) + "\n" + _record([*head, *second_history], {"role": "assistant",
                                                                                            "content": "Done."})
                    + "\n", encoding="utf-8")
    return path


def test_a_cleared_tool_output_is_no_history_mutation(tmp_path: Path) -> None:
    stub = "[output of read_file(path=\"f1.py\") left the context after 6 newer turns (59 lines); call it again]"
    path = _trace(tmp_path, [_call(1), _result(1, stub), _call(2), _result(2), _call(3), _result(3)])
    assert [f for f in findings(gated([path])) if f[0] == "C2"] == []


def test_a_rewritten_call_or_a_grown_result_still_is(tmp_path: Path) -> None:
    rewritten = {**_call(1), "content": "I will read f1.py"}
    for history in ([rewritten, _result(1), _call(2), _result(2), _call(3), _result(3)],
                    [_call(1), _result(1, _PAGE + "\nmore"), _call(2), _result(2), _call(3), _result(3)]):
        found = findings(gated([_trace(tmp_path, history)]))
        assert ("C2", "history-mutated", 2) in found, found
