"""Throughput and peak memory of `harness-audit trace` on a generated JSONL trace of at least 500 MB.

    python benchmarks/trace_speed.py [--size-mb 512] [--path FILE] [--keep] [--check-bounds]

The trace holds many agent conversations (OpenAI Chat and Anthropic, four running interleaved at a
time, half of them with session ids and half told apart by history continuity), each re-sending its
growing history with tool calls and results on every request, as a real request log does. Some
conversations carry one planted violation each: a dropped tool result (C1), a rewritten earlier
message (C2, C14), a timestamp in the system prompt (C14), a repeated call id in one response (C4),
responses without usage (C15). The checker runs as its own process; its wall time and peak RSS are
measured with `os.wait4`, and its JSON report must name every planted kind of violation.
With --check-bounds the exit code is 1 unless peak RSS < 500 MB and throughput >= --min-mbps.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

MIN_MBPS = 2.0
"""Wall-clock throughput floor for --check-bounds: well below the 3.1–4.7 MB/s measured on a loaded 2-core machine
(see benchmarks/README.md), so only a real regression trips it."""
MAX_PEAK_MB = 500.0
"""Peak RSS ceiling of the checker process for --check-bounds."""

_INTERLEAVED = 4
_TURNS = (18, 34)
_PLANTS = ("drop-result", "mutate-history", "volatile-system", "duplicate-id", "no-usage")
_EXPECTED = {
    "drop-result": ("trace:C1/unanswered-call",),
    "mutate-history": ("trace:C2/history-mutated", "trace:C14/prefix-changed"),
    "volatile-system": ("trace:C14/prefix-changed",),
    "duplicate-id": ("trace:C4/duplicate-call-id-in-response",),
    "no-usage": ("trace:C15/usage-missing",),
}
"""The rules each planted violation must produce."""

_SYSTEM = ("You are a meticulous software agent working in a sandboxed repository. Read before you write, "
           "run the tests after every change, and explain each step briefly. ") * 8
_TOOLS = [
    ("read_file", "Read a UTF-8 text file of the repository.", {"path": "string", "start_line": "integer"}),
    ("write_file", "Replace the content of a file.", {"path": "string", "content": "string"}),
    ("run_tests", "Run the test suite and return its summary.", {"selector": "string"}),
    ("grep", "Search file contents with a regular expression.", {"pattern": "string", "glob": "string"}),
    ("list_dir", "List a directory.", {"path": "string"}),
    ("git_diff", "Show the working tree diff.", {"path": "string"}),
]
_WORDS = ("parser token buffer handler request session cache config index value error result stream record "  # noqa: SIM905
          "module client server header payload schema").split()


def _chat_tools() -> list[dict[str, object]]:
    return [{"type": "function", "function": {"name": n, "description": d, "parameters": {
        "type": "object", "properties": {k: {"type": t} for k, t in ps.items()}, "required": [next(iter(ps))]}}}
        for n, d, ps in _TOOLS]


def _anthropic_tools() -> list[dict[str, object]]:
    return [{"name": n, "description": d, "input_schema": {
        "type": "object", "properties": {k: {"type": t} for k, t in ps.items()}, "required": [next(iter(ps))]}}
        for n, d, ps in _TOOLS]


def _dump(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


@dataclass
class _Conversation:
    """One generated conversation: its serialised history grows by one assistant turn and its results."""

    number: int
    api: str
    session: str | None
    turns: int
    plant: str | None
    rng: random.Random
    head: str = ""
    history: list[str] = field(default_factory=list[str])
    turn: int = 0
    tools: str = ""

    def __post_init__(self) -> None:
        task = f"Task {self.number}: " + " ".join(self.rng.choice(_WORDS) for _ in range(40))
        if self.api == "openai-chat":
            self.tools = _dump(_chat_tools())
            self.history = [_dump({"role": "system", "content": _SYSTEM}), _dump({"role": "user", "content": task})]
        else:
            self.tools = _dump(_anthropic_tools())
            self.history = [_dump({"role": "user", "content": [{"type": "text", "text": task}]})]

    def line(self) -> str:
        """The next request with its response, as one JSONL line; advances the conversation."""
        n, t, rng = self.number, self.turn, self.rng
        k = 2 if t % 3 == 0 else 1
        ids = [f"call_{n}_{t}_{i}" for i in range(k)]
        if self.plant == "duplicate-id" and t == 3:
            ids = [ids[0]] * k if k > 1 else ids  # the provider repeats one id for two calls
        names = [rng.choice(_TOOLS)[0] for _ in ids]
        args = [{"path": f"src/{rng.choice(_WORDS)}/{rng.choice(_WORDS)}_{t}.py"} for _ in ids]
        text = f"Step {t}: looking at the {rng.choice(_WORDS)} {rng.choice(_WORDS)} next."
        last = t == self.turns - 1
        usage_ok = not (self.plant == "no-usage" and t >= self.turns // 2)
        request, response, reply = self._request(), *self._response(ids, names, args, text, last, usage_ok)
        record: dict[str, object] = {"request": "@REQ@", "response": response}
        if self.session is not None:
            record["session"] = self.session
        out = _dump(record).replace('"@REQ@"', request, 1)
        self.history.append(reply)
        if not last:
            for i, (call_id, name) in enumerate(zip(ids, names, strict=True)):
                if self.plant == "drop-result" and t == 6 and i == 0:
                    continue  # the harness swallowed a failed call: no result
                body = f"{name} output {t}.{i}: " + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(80, 260)))
                if self.api == "openai-chat":
                    self.history.append(_dump({"role": "tool", "tool_call_id": call_id, "content": body}))
                else:
                    block = {"type": "tool_result", "tool_use_id": call_id, "content": body}
                    if i == 0:
                        self.history.append(_dump({"role": "user", "content": [block]}))
                    else:
                        merged = json.loads(self.history[-1])
                        merged["content"].append(block)
                        self.history[-1] = _dump(merged)
        if self.plant == "mutate-history" and t == 8:
            first = 2 if self.api == "openai-chat" else 1  # an early assistant reply is rewritten in place
            msg = json.loads(self.history[first])
            if self.api == "openai-chat":
                msg["content"] = (msg.get("content") or "") + " (edited)"
            else:
                msg["content"][0]["text"] += " (edited)"
            self.history[first] = _dump(msg)
        self.turn += 1
        return out

    def _request(self) -> str:
        msgs = "[" + ",".join(self.history) + "]"
        if self.api == "openai-chat":
            if self.plant == "volatile-system" and self.turn > 0:
                system = _dump({"role": "system", "content": f"Now: 2026-01-01T10:{self.turn:02d}:00Z. {_SYSTEM}"})
                msgs = "[" + ",".join([system, *self.history[1:]]) + "]"
            return f'{{"model":"gpt-4.1","tools":{self.tools},"messages":{msgs}}}'
        return (f'{{"model":"claude-sonnet-4-5","max_tokens":4096,"system":{_dump(_SYSTEM)},'
                f'"tools":{self.tools},"messages":{msgs}}}')

    def _response(self, ids: list[str], names: list[str], args: list[dict[str, str]], text: str, last: bool,
                  usage_ok: bool) -> tuple[dict[str, object], str]:
        prompt = 400 + 300 * self.turn
        if self.api == "openai-chat":
            calls = [{"id": i, "type": "function", "function": {"name": nm, "arguments": _dump(a)}}
                     for i, nm, a in zip(ids, names, args, strict=True)]
            msg: dict[str, object] = {"role": "assistant", "content": text if last else None}
            if not last:
                msg["tool_calls"] = calls
            resp: dict[str, object] = {"id": f"chatcmpl-{self.number}-{self.turn}", "object": "chat.completion",
                                       "choices": [{"index": 0, "message": msg,
                                                    "finish_reason": "stop" if last else "tool_calls"}]}
            if usage_ok:
                resp["usage"] = {"prompt_tokens": prompt, "completion_tokens": 30,
                                 "prompt_tokens_details": {"cached_tokens": prompt - 300}}
            return resp, _dump(msg)
        blocks: list[dict[str, object]] = [{"type": "text", "text": text}]
        if not last:
            uses: list[dict[str, object]] = [{"type": "tool_use", "id": i, "name": nm, "input": a}
                                             for i, nm, a in zip(ids, names, args, strict=True)]
            blocks += uses
        resp = {"id": f"msg_{self.number}_{self.turn}", "type": "message", "role": "assistant", "content": blocks,
                "stop_reason": "end_turn" if last else "tool_use"}
        if usage_ok:
            resp["usage"] = {"input_tokens": 20, "cache_read_input_tokens": prompt, "cache_creation_input_tokens": 280,
                             "output_tokens": 30}
        return resp, _dump({"role": "assistant", "content": blocks})


@dataclass(frozen=True)
class Generated:
    """What was written."""

    bytes: int
    lines: int
    conversations: int
    planted: Counter[str]


def generate(path: Path, size_mb: float, seed: int = 7) -> Generated:
    """Write a trace of at least `size_mb` MB to `path`: conversations `_INTERLEAVED` at a time, round robin."""
    rng = random.Random(seed)
    target = int(size_mb * 1_000_000)
    written = lines = started = 0
    planted: Counter[str] = Counter()
    live: list[_Conversation] = []
    with path.open("w", encoding="utf-8") as fh:
        while written < target or live:
            while len(live) < _INTERLEAVED and written < target:
                started += 1
                plant = _PLANTS[(started // 7) % len(_PLANTS)] if started % 7 == 3 else None
                if plant is not None:
                    planted[plant] += 1
                api = "anthropic" if started % 4 == 1 else "openai-chat"
                if plant == "volatile-system":
                    api = "openai-chat"
                session = f"s{started}" if started % 2 == 0 else None
                live.append(_Conversation(number=started, api=api, session=session, turns=rng.randint(*_TURNS),
                                          plant=plant, rng=random.Random(rng.random())))
            for conv in list(live):
                text = conv.line() + "\n"
                fh.write(text)
                written += len(text.encode("utf-8"))
                lines += 1
                if conv.turn >= conv.turns:
                    live.remove(conv)
    return Generated(bytes=written, lines=lines, conversations=started, planted=planted)


@dataclass(frozen=True)
class Measure:
    """Wall time, CPU time, peak RSS and exit code of one child process."""

    wall_s: float
    cpu_s: float
    peak_mb: float
    returncode: int


def measure(cmd: list[str]) -> Measure:
    """Run `cmd`, discard its output, return wall and CPU time and the child's peak RSS (`os.wait4`)."""
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace").strip()
    if err:
        print(err[-2000:], file=sys.stderr)
    return Measure(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status))


def _rules(report_path: Path) -> Counter[str]:
    """Findings per rule in the JSON report, the capped ones (from the notes) included."""
    data = json.loads(report_path.read_text(encoding="utf-8"))
    found: Counter[str] = Counter(f["source"] for f in data["findings"])
    for note in data["meta"].get("notes", []):
        words = note.split()
        if "more" in words and "findings" in words:
            found[words[words.index("more") + 1]] += int(words[words.index("more") - 1])
    return found


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size-mb", type=float, default=512.0, help="trace size to generate (default 512)")
    p.add_argument("--path", type=Path, help="write the trace here (default: a temporary directory)")
    p.add_argument("--keep", action="store_true", help="keep the generated trace")
    p.add_argument("--reuse", action="store_true", help="check --path as it is when it exists (no generation)")
    p.add_argument("--min-mbps", type=float, default=MIN_MBPS, help=f"throughput floor (default {MIN_MBPS})")
    p.add_argument("--check-bounds", action="store_true", help="exit 1 unless the bounds are met")
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="trace-speed-") as tmp:
        path: Path = args.path or Path(tmp) / "trace.jsonl"
        if args.reuse and path.exists():
            gen = None
            size = path.stat().st_size
            print(f"trace: {path} ({size / 1e6:,.1f} MB, reused)")
        else:
            t = time.perf_counter()
            gen = generate(path, args.size_mb)
            size = gen.bytes
            print(f"trace: {path} — {size / 1e6:,.1f} MB, {gen.lines:,} requests, {gen.conversations:,} conversations, "
                  f"planted {dict(gen.planted)} (written in {time.perf_counter() - t:.1f} s)")
        out = Path(tmp) / "out"
        cmd = [sys.executable, "-m", "harness_audit", "trace", str(path), "--output-dir", str(out),
               "--format", "json", "--fail-on", "never", "-q"]
        m = measure(cmd)
        mbps = size / 1e6 / m.wall_s
        print(f"harness-audit trace: {m.wall_s:7.1f} s wall, {mbps:6.1f} MB/s; {m.cpu_s:7.1f} s CPU, "
              f"{size / 1e6 / max(m.cpu_s, 1e-9):6.1f} MB/s per CPU second; peak RSS {m.peak_mb:6.1f} MB "
              f"(exit {m.returncode})")
        ok = m.returncode == 0
        reports = sorted(out.glob("*.json")) if out.exists() else []
        if reports:
            rules = _rules(reports[-1])
            print("findings per rule: " + ", ".join(f"{r} {n}" for r, n in sorted(rules.items())))
            if gen is not None:
                missing = sorted({r for kind in gen.planted for r in _EXPECTED[kind] if not rules[r]})
                if missing:
                    print(f"planted violations NOT reported: {', '.join(missing)}")
                    ok = False
        else:
            print("no report written")
            ok = False
        ok = ok and m.peak_mb < MAX_PEAK_MB and mbps >= args.min_mbps
        print(f"bounds (peak < {MAX_PEAK_MB:.0f} MB, >= {args.min_mbps:g} MB/s): {'met' if ok else 'NOT met'}")
        if args.keep and args.path is None:
            kept = Path.cwd() / "trace-speed.jsonl"
            os.replace(path, kept)
            print(f"kept: {kept}")
    return 0 if ok or not args.check_bounds else 1


if __name__ == "__main__":
    sys.exit(main())
