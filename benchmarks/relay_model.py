"""A relay model: an OpenAI Chat Completions endpoint on 127.0.0.1 whose replies an agent writes at a terminal.

It measures the llm and hybrid engines on real trees with a real model where no API key or local model is at
hand: the engine talks to the relay as to any OpenAI-compatible server (`--model vllm:relay --base-url URL`),
and an agent (a person, or an agent host told to act as the model) reads each request and answers it with
the tool calls or the text the model would send. The engine's own prompts, tools, budgets, leads and gate
are what get measured; the relay only carries messages.

    relay_model.py serve DIR [--port N]        # one folder per audit; writes DIR/url, runs until stopped
    relay_model.py next DIR [--wait S]         # the oldest unanswered request: what is new in its conversation
    relay_model.py answer DIR ID [--text T] [--call NAME JSON]...
    relay_model.py stats DIR                   # requests, answer latency and usage so far

`next` prints a conversation's system prompt and tool definitions once per folder (every subagent of a
run shares them), then only the messages the agent has not seen: the task, then each turn's tool results.
An answer with calls ends the turn with `finish_reason: tool_calls`; an answer with text only ends the
subagent's run (`stop`). Each answer is checked before it is sent: a tool the request does not offer, or
arguments that are not a JSON object, are refused with a message and the request stays open.

Usage is reported as a provider with automatic prefix caching would report it (OpenAI's rule, as
`model_economy.py` models it: 4 characters a token; the longest prefix shared with an earlier request of the
run is cached, from 1,024 tokens on, in steps of 128), so the engine's token budgets work as they would
against a real provider.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

JsonObject = dict[str, Any]

CHARS_PER_TOKEN = 4
"""As the engine and `model_economy` count."""
_POLL_S = 0.2
_WAIT_S = 7200.0
"""How long the server holds a request open for its answer."""
_CHANGED_PREVIEW = 400


def _digest(obj: object) -> str:
    return hashlib.blake2b(json.dumps(obj, sort_keys=True).encode(), digest_size=12).hexdigest()


def _write_json(path: Path, data: object) -> None:
    """Write `data` so a reader never sees half of it (a temporary file renamed into place)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(tmp, path)


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def text_of(content: object) -> str:
    """A message's content as text: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else json.dumps(content)


def conversation_key(messages: Sequence[JsonObject]) -> str:
    """One subagent's conversation: the digest of its first user message (its task)."""
    first = next((text_of(m.get("content")) for m in messages if m.get("role") == "user"), "")
    return hashlib.blake2b(first.encode(), digest_size=6).hexdigest()


@dataclass
class Relay:
    """The folder one audit's requests and answers pass through."""

    folder: Path
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _cache: Any = None
    """`model_economy`'s prefix-cache model, OpenAI style (imported when the server starts: `next` and
    `answer` stay quick)."""

    def __post_init__(self) -> None:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from model_economy import _Cache  # the one prefix-cache model of the benchmarks

        self._cache = _Cache("openai")
        for sub in ("requests", "answers"):
            (self.folder / sub).mkdir(parents=True, exist_ok=True)

    def _next_id(self) -> str:
        with self._lock:
            n = len(list((self.folder / "requests").glob("*.json"))) + 1
            rid = f"{n:04d}"
            _write_json(self.folder / "requests" / f"{rid}.json", {"pending": True})
            return rid

    def usage(self, body: JsonObject) -> JsonObject:
        """Prompt and completion tokens of one request, with the part an automatic prefix cache would hit."""
        prompt = json.dumps({"tools": body.get("tools"), "messages": body.get("messages")}, sort_keys=False)
        with self._lock:
            total, cached, _, _ = self._cache.usage(prompt, ())
        return {"prompt_tokens": total, "cached_tokens": cached}

    def handle(self, body: JsonObject) -> JsonObject:
        """Queue one Chat Completions request, wait for its answer and return the completion."""
        rid = self._next_id()
        started = time.time()
        _write_json(self.folder / "requests" / f"{rid}.json",
                    {"id": rid, "conversation": conversation_key(body.get("messages") or []), "received": started,
                     "body": body})
        answer_path = self.folder / "answers" / f"{rid}.json"
        while not answer_path.exists():
            if time.time() - started > _WAIT_S:
                raise TimeoutError(f"request {rid} was not answered in {_WAIT_S:g} s")
            time.sleep(_POLL_S)
        answer = _read_json(answer_path)
        usage = self.usage(body)
        completion = len(json.dumps(answer)) // CHARS_PER_TOKEN
        calls = [{"id": f"call_{rid}_{i}", "type": "function",
                  "function": {"name": c["name"], "arguments": json.dumps(c["arguments"], ensure_ascii=False)}}
                 for i, c in enumerate(answer.get("calls", []), 1)]
        message: JsonObject = {"role": "assistant", "content": answer.get("text")}
        if calls:
            message["tool_calls"] = calls
        with open(self.folder / "log.jsonl", "a", encoding="utf-8") as log:
            log.write(json.dumps({"id": rid, "answered_s": round(time.time() - started, 1), "calls": len(calls),
                                  **usage, "completion_tokens": completion}) + "\n")
        return {
            "id": f"chatcmpl-relay-{rid}", "object": "chat.completion", "created": int(started),
            "model": body.get("model", "relay"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": {"prompt_tokens": usage["prompt_tokens"], "completion_tokens": completion,
                      "total_tokens": usage["prompt_tokens"] + completion,
                      "prompt_tokens_details": {"cached_tokens": usage["cached_tokens"]},
                      "completion_tokens_details": {"reasoning_tokens": 0}},
        }


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
        return

    def _send(self, status: HTTPStatus, payload: JsonObject) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        if self.path.rstrip("/").endswith("/models"):
            self._send(HTTPStatus.OK, {"object": "list", "data": [{"id": "relay", "object": "model"}]})
        else:
            self._send(HTTPStatus.NOT_FOUND, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(HTTPStatus.NOT_FOUND, {"error": {"message": f"no route {self.path}"}})
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        except ValueError:
            self._send(HTTPStatus.BAD_REQUEST, {"error": {"message": "the body is not JSON"}})
            return
        if body.get("stream"):
            self._send(HTTPStatus.BAD_REQUEST, {"error": {"message": "the relay does not stream: run without --stream"}})
            return
        try:
            self._send(HTTPStatus.OK, self.server.relay.handle(body))
        except TimeoutError as exc:
            self._send(HTTPStatus.GATEWAY_TIMEOUT, {"error": {"message": str(exc)}})


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, relay: Relay, port: int) -> None:
        super().__init__(("127.0.0.1", port), _Handler)
        self.relay = relay


def start(folder: Path, port: int = 0) -> tuple[_Server, str]:
    """Serve `folder` in a daemon thread; the server and its base URL (`http://127.0.0.1:PORT/v1`)."""
    server = _Server(Relay(folder), port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


# --- the agent's side ---------------------------------------------------------------------------------------


def pending(folder: Path) -> list[str]:
    """Ids of the requests that have arrived and have no answer yet, oldest first."""
    out = []
    for path in sorted((folder / "requests").glob("*.json")):
        if not (folder / "answers" / path.name).exists():
            data = _read_json(path)
            if "body" in data:
                out.append(path.stem)
    return out


def _render_tools(tools: Sequence[JsonObject]) -> list[str]:
    lines = ["## Tools you can call (answer with --call NAME JSON)"]
    for t in tools:
        fn = t.get("function", t)
        params = fn.get("parameters", {})
        lines.append(f"- {fn.get('name')}: {fn.get('description', '').strip()}")
        lines.append(f"  parameters: {json.dumps(params.get('properties', {}), ensure_ascii=False)}"
                     f"  required: {params.get('required', [])}")
    return lines


def _render_message(m: JsonObject) -> str:
    role = m.get("role")
    if role == "tool":
        return f"[tool result for {m.get('tool_call_id')}]\n{text_of(m.get('content'))}"
    return f"[{role}]\n{text_of(m.get('content'))}"


def render(folder: Path, rid: str) -> str:
    """Request `rid` as the agent should read it: only what its conversation has not shown yet (the same text
    again when `rid` was rendered before)."""
    seen = folder / "requests" / f"{rid}.txt"
    if seen.exists():
        return seen.read_text(encoding="utf-8")
    data = _read_json(folder / "requests" / f"{rid}.json")
    body, conv = data["body"], data["conversation"]
    state_path = folder / "state.json"
    state = _read_json(state_path) if state_path.exists() else {"system": [], "tools": [], "conversations": {}}
    messages = body.get("messages") or []
    shown: list[str] = state["conversations"].get(conv, [])
    out = [f"=== request {rid} · conversation {conv} · turn {sum(1 for m in messages if m.get('role') == 'assistant') + 1}"
           f" ==="]
    tools = body.get("tools") or []
    if _digest(tools) not in state["tools"]:
        out += _render_tools(tools)
        state["tools"].append(_digest(tools))
    digests = []
    for i, m in enumerate(messages):
        d = _digest(m)
        digests.append(d)
        if m.get("role") == "assistant":
            continue
        if m.get("role") in ("system", "developer"):
            if d in state["system"]:
                if i >= len(shown):
                    out.append(f"[{m.get('role')} prompt: the same as before]")
                continue
            state["system"].append(d)
            out.append(_render_message(m))
        elif i < len(shown) and shown[i] == d:
            continue
        elif i < len(shown):
            text = _render_message(m)
            out.append(f"[message {i} was replaced since you saw it; now:]\n{text[:_CHANGED_PREVIEW]}")
        else:
            out.append(_render_message(m))
    if len(out) == 1 and digests == shown:
        out.append("[nothing new: the engine sent this request again (after a timeout or a dropped connection); "
                   "answer it as you answered the last request of this conversation]")
    state["conversations"][conv] = digests
    _write_json(state_path, state)
    offered = sorted(str((t.get("function", t)).get("name")) for t in tools)
    out.append(f"--- answer: relay_model.py answer {folder} {rid} [--call NAME JSON]... [--text TEXT]"
               f"   (tools: {', '.join(offered) or 'none'})")
    text = "\n\n".join(out)
    seen.write_text(text, encoding="utf-8")
    return text


class AnswerError(ValueError):
    """An answer the relay will not send; the request stays open."""


def answer(folder: Path, rid: str, *, text: str | None, calls: Sequence[tuple[str, str]]) -> JsonObject:
    """Check and record the answer to request `rid`."""
    req_path = folder / "requests" / f"{rid}.json"
    if not req_path.exists() or "body" not in _read_json(req_path):
        raise AnswerError(f"no request {rid} in {folder}")
    if (folder / "answers" / f"{rid}.json").exists():
        raise AnswerError(f"request {rid} is already answered")
    if not text and not calls:
        raise AnswerError("give --text, or at least one --call NAME JSON")
    body = _read_json(req_path)["body"]
    offered = {str((t.get("function", t)).get("name")) for t in body.get("tools") or []}
    parsed = []
    for name, raw in calls:
        if name not in offered:
            raise AnswerError(f"request {rid} offers no tool {name!r}; it offers {', '.join(sorted(offered))}")
        try:
            args = json.loads(raw)
        except ValueError as exc:
            raise AnswerError(f"the arguments of {name} are not JSON ({exc})") from None
        if not isinstance(args, dict):
            raise AnswerError(f"the arguments of {name} must be a JSON object")
        parsed.append({"name": name, "arguments": args})
    record = {"text": text, "calls": parsed, "answered": time.time()}
    _write_json(folder / "answers" / f"{rid}.json", record)
    return record


def stats(folder: Path) -> JsonObject:
    """Requests answered, answer latency and the usage reported so far."""
    log = folder / "log.jsonl"
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()] if log.exists() else []
    waits = sorted(r["answered_s"] for r in rows)
    return {"requests": len(rows), "pending": len(pending(folder)),
            "median_answer_s": waits[len(waits) // 2] if waits else None,
            "prompt_tokens": sum(r["prompt_tokens"] for r in rows),
            "cached_tokens": sum(r["cached_tokens"] for r in rows),
            "completion_tokens": sum(r["completion_tokens"] for r in rows)}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="relay_model.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="serve DIR until stopped; the base URL goes to DIR/url")
    s.add_argument("dir", type=Path)
    s.add_argument("--port", type=int, default=0)
    n = sub.add_parser("next", help="print the oldest unanswered request (waits for one)")
    n.add_argument("dir", type=Path)
    n.add_argument("--wait", type=float, default=600.0, help="seconds to wait for a request (default 600)")
    a = sub.add_parser("answer", help="answer request ID with tool calls or text")
    a.add_argument("dir", type=Path)
    a.add_argument("id")
    a.add_argument("--text")
    a.add_argument("--call", nargs=2, action="append", default=[], metavar=("NAME", "JSON"))
    t = sub.add_parser("stats", help="requests, latency and usage so far")
    t.add_argument("dir", type=Path)
    args = p.parse_args(argv)
    folder: Path = args.dir
    if args.cmd == "serve":
        server, url = start(folder, args.port)
        (folder / "url").write_text(url + "\n", encoding="utf-8")
        print(url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            server.shutdown()
        return 0
    if not (folder / "requests").is_dir():
        print(f"relay_model.py: {folder} is not a relay folder (start `relay_model.py serve {folder}` first)",
              file=sys.stderr)
        return 2
    if args.cmd == "next":
        deadline = time.time() + args.wait
        while not (ids := pending(folder)):
            if time.time() > deadline:
                done = (folder / "done").exists()
                print("the audit has finished: no more requests" if done else
                      f"no request in {args.wait:g} s; run `next` again to keep waiting")
                return 0 if done else 3
            if (folder / "done").exists():
                print("the audit has finished: no more requests")
                return 0
            time.sleep(_POLL_S)
        print(render(folder, ids[0]))
        return 0
    if args.cmd == "answer":
        try:
            answer(folder, args.id, text=args.text, calls=[(c[0], c[1]) for c in args.call])
        except AnswerError as exc:
            print(f"relay_model.py: {exc}", file=sys.stderr)
            return 2
        print(f"sent {args.id}")
        return 0
    print(json.dumps(stats(folder), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
