"""Writes the hand-made recordings under `made/` (run it again after changing a case; the files are committed).

Each `c*_*.jsonl` holds one kind of violation, `clean_*` files none. `test_recordings.py` holds the
expected (check, rule, line) of every file: the violation at the right record and nothing else.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent / "made"
TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                           "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
A_TOOLS = [{"name": "read_file", "description": "Read a file.",
            "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
G_TOOLS = [{"functionDeclarations": [{"name": "read_file", "description": "Read a file.",
                                      "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}]}]
R_TOOLS = [{"type": "function", "name": "read_file", "parameters": {"type": "object"}}]
SYS = {"role": "system", "content": "You are a careful coding agent."}
U1 = {"role": "user", "content": "Summarise a.py and b.py for me, please."}
USAGE = {"prompt_tokens": 120, "completion_tokens": 20, "total_tokens": 140, "prompt_tokens_details": {"cached_tokens": 0}}


def line(request: dict[str, Any], response: Any = None, **extra: Any) -> str:
    rec: dict[str, Any] = {"request": request}
    if response is not None:
        rec["response"] = response
    rec.update(extra)
    return json.dumps(rec, separators=(",", ":"))


def chat(messages: list[Any], **kw: Any) -> dict[str, Any]:
    return {"model": "gpt-4.1-mini", "messages": messages, "tools": TOOLS, **kw}


def call(call_id: str, path: str = "a.py", args: str | None = None) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": "read_file", "arguments": args if args is not None else json.dumps({"path": path})}}


def asst(*calls: dict[str, Any], content: str | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        m["tool_calls"] = list(calls)
    return m


def tool(call_id: str, content: str = "def main(): ...") -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def chat_resp(message: dict[str, Any], finish: str = "tool_calls", usage: Any = USAGE) -> dict[str, Any]:
    body: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4.1-mini",
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
    if usage is not None:
        body["usage"] = usage
    return body


def write(name: str, lines: list[str]) -> None:
    (HERE / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


def openai_chat() -> None:
    a1 = asst(call("call_a1"), call("call_b1", "b.py"))
    h1 = [SYS, U1]
    h2 = [*h1, a1, tool("call_a1"), tool("call_b1", "def helper(): ...")]
    done = asst(content="a.py defines main; b.py defines helper.")
    h3 = [*h2, done, {"role": "user", "content": "Thanks. Now check c.py, please."}]
    write("clean_openai_chat.jsonl", [
        line(chat(h1), chat_resp(a1)),
        line(chat(h2), chat_resp(done, "stop")),
        line(chat(h3), chat_resp(asst(content="c.py does not exist."), "stop")),
    ])
    # C1: the next request carries the call but not its result
    write("c01_unanswered_call.jsonl", [
        line(chat(h1), chat_resp(asst(call("call_a1")))),
        line(chat([*h1, asst(call("call_a1")), {"role": "user", "content": "Go on."}]), chat_resp(done, "stop")),
    ])
    # C1: one call answered twice
    write("c01_answered_twice.jsonl", [
        line(chat(h1), chat_resp(asst(call("call_a1")))),
        line(chat([*h1, asst(call("call_a1")), tool("call_a1"), tool("call_a1", "again")]), chat_resp(done, "stop")),
    ])
    # C1: a result for a call that was never made
    write("c01_orphan_result.jsonl", [
        line(chat(h1), chat_resp(asst(call("call_a1")))),
        line(chat([*h1, asst(call("call_a1")), tool("call_a1"), tool("call_zz")]), chat_resp(done, "stop")),
    ])
    # C2 (+C14): an earlier message is rewritten in the third request
    rewritten = [*h1, a1, tool("call_a1", "def main(): ...  # edited"), tool("call_b1", "def helper(): ..."), done,
                 {"role": "user", "content": "Thanks. Now check c.py, please."}]
    write("c02_history_mutated.jsonl", [
        line(chat(h1), chat_resp(a1)),
        line(chat(h2), chat_resp(done, "stop")),
        line(chat(rewritten), chat_resp(asst(content="c.py does not exist."), "stop")),
    ])
    # C2: the model's reply is "corrected" before it enters history
    write("c02_output_changed.jsonl", [
        line(chat(h1), chat_resp(asst(content="I will read a.py first, then b.py."), "stop")),
        line(chat([*h1, asst(content="I read both files."), {"role": "user", "content": "Go ahead."}]),
             chat_resp(done, "stop")),
    ])
    # C4: two calls of one response share an id
    write("c04_duplicate_ids.jsonl", [
        line(chat(h1), chat_resp(asst(call("call_same"), call("call_same", "b.py")))),
    ])
    # C4: arguments that are not JSON
    write("c04_arguments_not_json.jsonl", [
        line(chat(h1), chat_resp(asst(call("call_bad", args='{"path": "a.py"')))),
    ])
    # C4: a reply cut off by the length limit whose call was executed anyway
    write("c04_truncated_executed.jsonl", [
        line(chat(h1), chat_resp(asst(call("call_cut", args='{"path": "a.py"}')), "length")),
        line(chat([*h1, asst(call("call_cut", args='{"path": "a.py"}')), tool("call_cut")]), chat_resp(done, "stop")),
    ])
    # C12: five requests in one conversation (the test sets the ceiling to 3)
    hist = list(h1)
    turns: list[str] = []
    for i in range(5):
        reply = asst(call(f"call_t{i}", f"f{i}.py"))
        turns.append(line(chat(list(hist)), chat_resp(reply)))
        hist += [reply, tool(f"call_t{i}", f"content {i}")]
    write("c12_turns.jsonl", turns)
    # C12: the same call, same arguments, same result, three times in a row
    hist = list(h1)
    rep: list[str] = []
    for i in range(4):
        reply = asst(call(f"call_r{i}", "same.py")) if i < 3 else done
        rep.append(line(chat(list(hist)), chat_resp(reply, "tool_calls" if i < 3 else "stop")))
        if i < 3:
            hist += [reply, tool(f"call_r{i}", "file not found")]
    write("c12_repeated_call.jsonl", rep)
    # C13: a history that starts with a tool result (the cut fell between call and result)
    write("c13_starts_with_result.jsonl", [
        line(chat([SYS, tool("call_gone", "old output"), {"role": "user", "content": "Continue with the task."}]),
             chat_resp(done, "stop")),
    ])
    # C13: a compacted history that keeps a call without its result
    s = "sess-1"
    compacted = [SYS, U1, asst(call("call_c2", "b.py")), {"role": "user", "content": "Summary of earlier work: a.py read."},
                 asst(content="Noted."), {"role": "user", "content": "Go on."}]
    write("c13_cut_pair.jsonl", [
        line(chat(h1), chat_resp(asst(call("call_c1"))), session=s),
        line(chat([*h1, asst(call("call_c1")), tool("call_c1")]), chat_resp(asst(call("call_c2", "b.py"))), session=s),
        line(chat(compacted), chat_resp(done, "stop"), session=s),
    ])
    # C15: a stream without `include_usage` carries no usage
    chunks = [
        {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}}]},
        {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "lo."}}]},
        {"id": "c1", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    sse = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    write("c15_usage_missing.jsonl", [line(chat(h1, stream=True), sse)])
    # C15: calls recorded without ids
    write("c15_call_without_id.jsonl", [
        line(chat([*h1, asst({"type": "function", "function": {"name": "read_file", "arguments": "{}"}}),
                   {"role": "tool", "content": "x"}]), chat_resp(done, "stop")),
    ])
    # streamed tool call (deltas reassembled by index) with include_usage: clean
    deltas = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": None, "tool_calls": [
            {"index": 0, "id": "call_s1", "type": "function", "function": {"name": "read_file", "arguments": ""}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\": "}}]}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"a.py\"}"}}]}}]},
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
        {"choices": [], "usage": USAGE},
    ]
    sse2 = "".join(f"data: {json.dumps(c)}\n\n" for c in deltas) + "data: [DONE]\n\n"
    streamed = asst(call("call_s1"))
    write("clean_streamed_chat.jsonl", [
        line(chat(h1, stream=True, stream_options={"include_usage": True}), sse2),
        line(chat([*h1, streamed, tool("call_s1")], stream=True, stream_options={"include_usage": True}),
             "".join(f"data: {json.dumps(c)}\n\n" for c in [
                 {"choices": [{"index": 0, "delta": {"content": "Done."}, "finish_reason": "stop"}]},
                 {"choices": [], "usage": USAGE}]) + "data: [DONE]\n\n"),
    ])
    # two conversations interleaved, no session ids: told apart by history continuity
    other = [{"role": "system", "content": "You are a careful coding agent."},
             {"role": "user", "content": "Explain what c.py does, in two lines."}]
    b1 = asst(call("call_x1", "c.py"))
    write("clean_interleaved.jsonl", [
        line(chat(h1), chat_resp(asst(call("call_a1")))),
        line(chat(other), chat_resp(b1)),
        line(chat([*h1, asst(call("call_a1")), tool("call_a1")]), chat_resp(done, "stop")),
        line(chat([*other, b1, tool("call_x1", "print('hi')")]), chat_resp(asst(content="It prints hi."), "stop")),
    ])


def anthropic() -> None:
    def req(messages: list[Any], system: Any = "You are a careful coding agent.") -> dict[str, Any]:
        return {"model": "claude-sonnet-4-5", "max_tokens": 1024, "system": system, "tools": A_TOOLS,
                "messages": messages}

    def resp(content: list[Any], stop: str, read: int = 0, write_: int = 0) -> dict[str, Any]:
        return {"id": "msg_1", "type": "message", "role": "assistant", "content": content, "stop_reason": stop,
                "usage": {"input_tokens": 12, "cache_creation_input_tokens": write_, "cache_read_input_tokens": read,
                          "output_tokens": 30}}

    u1 = {"role": "user", "content": [{"type": "text", "text": "Summarise a.py and b.py for me, please.",
                                       "cache_control": {"type": "ephemeral"}}]}
    u1_plain = {"role": "user", "content": [{"type": "text", "text": "Summarise a.py and b.py for me, please."}]}
    out1 = [{"type": "text", "text": "I will read both files now."},
            {"type": "tool_use", "id": "toolu_a", "name": "read_file", "input": {"path": "a.py"}},
            {"type": "tool_use", "id": "toolu_b", "name": "read_file", "input": {"path": "b.py"}}]
    results = {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_a", "content": "def main(): ..."},
        {"type": "tool_result", "tool_use_id": "toolu_b", "content": "def helper(): ...",
         "cache_control": {"type": "ephemeral"}}]}
    write("clean_anthropic.jsonl", [
        line(req([u1]), resp(out1, "tool_use", 0, 900)),
        # the cache breakpoint moved to the newest message: a marker, not a history change
        line(req([u1_plain, {"role": "assistant", "content": out1}, results]),
             resp([{"type": "text", "text": "a.py defines main; b.py defines helper."}], "end_turn", 900, 120)),
    ])
    # C1 (+C2): one of two parallel calls is dropped from history
    write("c01_calls_dropped.jsonl", [
        line(req([u1]), resp(out1, "tool_use")),
        line(req([u1, {"role": "assistant", "content": out1[:2]},
                  {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_a", "content": "x"}]}]),
             resp([{"type": "text", "text": "Done with the summary of both."}], "end_turn")),
    ])
    # C14: a timestamp in the system prompt changes the prefix on every request
    write("c14_system_changed.jsonl", [
        line(req([u1], "You are a careful coding agent. Now: 2026-01-05T10:00:01Z"), resp(out1, "tool_use", 0, 900)),
        line(req([u1, {"role": "assistant", "content": out1}, results],
                 "You are a careful coding agent. Now: 2026-01-05T10:00:07Z"),
             resp([{"type": "text", "text": "a.py defines main; b.py defines helper."}], "end_turn", 0, 1000)),
    ])


def gemini() -> None:
    def req(contents: list[Any]) -> dict[str, Any]:
        return {"systemInstruction": {"parts": [{"text": "You are a careful coding agent."}]}, "tools": G_TOOLS,
                "contents": contents}

    def resp(parts: list[Any], finish: str = "STOP") -> dict[str, Any]:
        return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish}],
                "usageMetadata": {"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110}}

    u = {"role": "user", "parts": [{"text": "Summarise a.py and b.py for me, please."}]}
    calls = [{"functionCall": {"name": "read_file", "args": {"path": "a.py"}}, "thoughtSignature": "c2lnLTE="},
             {"functionCall": {"name": "read_file", "args": {"path": "b.py"}}}]
    model = {"role": "model", "parts": calls}
    fr = [{"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"result": "def main()"}}}]},
          {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"result": "def helper()"}}}]}]
    write("clean_gemini.jsonl", [
        line(req([u]), resp(calls)),
        line(req([u, model, *fr]), resp([{"text": "a.py defines main; b.py defines helper."}])),
    ])
    # C1: two calls, one functionResponse (Gemini pairs by count and position)
    write("c01_gemini_unanswered.jsonl", [
        line(req([u]), resp(calls)),
        line(req([u, model, fr[0]]), resp([{"text": "a.py defines main."}])),
    ])


def responses() -> None:
    def req(items: list[Any], **kw: Any) -> dict[str, Any]:
        return {"model": "gpt-4.1", "instructions": "You are a careful coding agent.", "tools": R_TOOLS,
                "input": items, **kw}

    def resp(rid: str, output: list[Any]) -> dict[str, Any]:
        return {"id": rid, "object": "response", "status": "completed", "output": output,
                "usage": {"input_tokens": 80, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 9}}

    u = {"role": "user", "content": "Summarise a.py for me, please."}
    fc = {"type": "function_call", "id": "fc_1", "call_id": "call_r1", "name": "read_file", "arguments": "{\"path\":\"a.py\"}"}
    out = {"type": "function_call_output", "call_id": "call_r1", "output": "def main(): ..."}
    msg = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a.py defines main."}]}
    write("clean_openai_responses.jsonl", [
        line(req([u]), resp("resp_1", [fc])),
        line(req([u, fc, out]), resp("resp_2", [msg])),
        # server-held history: only the new output is sent, the call lives in `previous_response_id`
        line(req([u]), resp("resp_3", [dict(fc, call_id="call_r3")])),
        line(req([dict(out, call_id="call_r3")], previous_response_id="resp_3"), resp("resp_4", [msg])),
    ])
    # C1: the continuation of a response with a call sends no output for it
    write("c01_responses_server_unanswered.jsonl", [
        line(req([u]), resp("resp_9", [fc])),
        line(req([{"role": "user", "content": "And b.py?"}], previous_response_id="resp_9"), resp("resp_10", [msg])),
    ])


def har() -> None:
    h1 = [SYS, U1]
    a1 = asst(call("call_h1"))
    entries = [
        {"startedDateTime": "2026-01-05T10:00:00Z", "request": {"method": "POST", "url": "https://telemetry.example.com/v1/events",
                                                              "postData": {"mimeType": "application/json", "text": "{\"event\":\"start\"}"}},
         "response": {"status": 204, "content": {"mimeType": "text/plain", "text": ""}}},
        {"startedDateTime": "2026-01-05T10:00:01Z", "request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                                                              "postData": {"mimeType": "application/json", "text": json.dumps(chat(h1))}},
         "response": {"status": 200, "content": {"mimeType": "application/json", "text": json.dumps(chat_resp(a1))}}},
        {"startedDateTime": "2026-01-05T10:00:02Z", "request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                                                              "postData": {"mimeType": "application/json",
                                                                           "text": json.dumps(chat([*h1, a1, tool("call_h1")]))}},
         "response": {"status": 200, "content": {"mimeType": "application/json", "encoding": "base64",
                                                 "text": base64.b64encode(json.dumps(chat_resp(asst(content="Done."), "stop")).encode()).decode()}}},
    ]
    (HERE / "clean_chat.har").write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}, indent=2) + "\n")


def otel() -> None:
    def attr(key: str, value: Any) -> dict[str, Any]:
        if isinstance(value, int):
            return {"key": key, "value": {"intValue": str(value)}}
        return {"key": key, "value": {"stringValue": value if isinstance(value, str) else json.dumps(value)}}

    u = {"role": "user", "parts": [{"type": "text", "content": "Summarise a.py for me, please."}]}
    tc = {"role": "assistant", "parts": [{"type": "tool_call", "id": "call_o1", "name": "read_file",
                                          "arguments": {"path": "a.py"}}]}
    tr = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "call_o1", "response": "def main(): ..."}]}
    fin = {"role": "assistant", "parts": [{"type": "text", "content": "a.py defines main."}], "finish_reason": "stop"}

    def span(i: int, inputs: list[Any], outputs: list[Any]) -> dict[str, Any]:
        return {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": f"b7ad6b716920333{i}", "name": "chat gpt-4.1",
                "kind": 3, "startTimeUnixNano": str(1_700_000_000_000_000_000 + i), "attributes": [
                    attr("gen_ai.operation.name", "chat"), attr("gen_ai.request.model", "gpt-4.1"),
                    attr("gen_ai.conversation.id", "conv-1"), attr("gen_ai.input.messages", inputs),
                    attr("gen_ai.output.messages", outputs), attr("gen_ai.usage.input_tokens", 50),
                    attr("gen_ai.usage.output_tokens", 8)]}

    tool_span = {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "c7ad6b7169203331", "name": "execute_tool read_file",
                 "startTimeUnixNano": "1700000000000000001", "attributes": [attr("gen_ai.operation.name", "execute_tool")]}
    doc = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "agent"}, "spans": [
        span(0, [u], [tc]), tool_span, span(2, [u, tc, tr], [fin])]}]}]}
    (HERE / "clean_otel.json").write_text(json.dumps(doc, indent=2) + "\n")


def ledger() -> None:
    def ev(seq: int, event: str, **data: Any) -> str:
        return json.dumps({"seq": seq, "t": 1.0 + seq, "event": event, **data}, separators=(",", ":"))

    sysu = [{"role": "system", "content": "You audit."}, {"role": "user", "content": "Audit C1."}]
    call_ = {"role": "assistant", "parts": [{"type": "tool-call", "id": "r1", "name": "read_file",
                                             "arguments": {"path": "a.py"}}]}
    ret = {"role": "tool", "call_id": "r1", "name": "read_file", "content": "x"}
    text = {"role": "assistant", "parts": [{"type": "text", "text": "done"}]}
    usage = {"input_tokens": 100, "output_tokens": 10, "cache_read_tokens": 0, "cache_write_tokens": 0, "known": True}
    write("clean_ledger.jsonl", [
        ev(1, "run-start", run_id="r"), ev(2, "unit-start", unit="C1", task="Audit C1."),
        ev(3, "request", unit="C1", turn=1, attempt=1, messages=sysu),
        ev(4, "response", unit="C1", turn=1, finish_reason="tool-call", usage=usage, message=call_),
        ev(5, "tool-call", unit="C1", id="r1", tool="read_file", args={"path": "a.py"}, valid=True, result="x"),
        ev(6, "request", unit="C1", turn=2, attempt=1, messages=[ret]),
        ev(7, "response", unit="C1", turn=2, finish_reason="stop", usage=usage, message=text),
        ev(8, "unit-end", unit="C1", status="ran"), ev(9, "run-end", state="complete"),
    ])


if __name__ == "__main__":
    HERE.mkdir(exist_ok=True)
    openai_chat()
    anthropic()
    gemini()
    responses()
    har()
    otel()
    ledger()
