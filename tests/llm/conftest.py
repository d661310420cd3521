"""Fixtures of the model-engine tests: a small harness with a real defect, and helpers to audit it over HTTP.

The tree (`harness` fixture) sits two levels below `tmp_path`, so `../../etc/passwd` from its root is a real
file outside it (a fake one, under `tmp_path/etc`); `agent/leak.py` is a symlink to a file outside the tree;
`node_modules/pkg/index.py` is in scope of nothing. Each outside or excluded file holds a marker string that
must never reach a request.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import pytest
from pydantic_ai.models import override_allow_model_requests

from harness_audit.api import audit
from harness_audit.llm.ledger import LedgerRead, read_ledger
from harness_audit.llm.run import ModelOptions
from harness_audit.pipeline import AuditRun
from harness_audit.progress import NO_PROGRESS, Progress
from tests.llm.fake_openai import JsonObject, Reply, ScriptedOpenAI, ToolCall, call, reply

LOOP_PY = '''\
"""A small agent loop: ask the model, run the tools it asks for, repeat."""

import json

from openai import OpenAI

from agent.tools import TOOLS, TOOL_SPECS

client = OpenAI()


def run_agent(task: str) -> str:
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": task},
    ]
    while True:
        response = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOL_SPECS)
        message = response.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return message.content or ""
        for call in message.tool_calls:
            args = json.loads(call.function.arguments)
            try:
                output = TOOLS[call.function.name](**args)
            except Exception:
                continue
            messages.append({"role": "tool", "tool_call_id": call.id, "content": str(output)})
'''
"""The audited loop. C1 defect at line 27-28: a failed tool gets no result; C12: `while True` at line 17."""

TOOLS_PY = '''\
"""Tools the model may call."""

import subprocess


def run_shell(command: str) -> str:
    proc = subprocess.run(command, shell=True, capture_output=True, text=True)
    return proc.stdout + proc.stderr


TOOLS = {"run_shell": run_shell}
TOOL_SPECS = [{"type": "function", "function": {"name": "run_shell", "parameters": {"type": "object"}}}]
'''

PASSWD_MARKER = "root:x:0:0:passwd-marker-7731:/root:/bin/bash"
"""The one line of the fake `/etc/passwd` that sits outside the tree (at `../../etc/passwd` from its root)."""
LINK_MARKER = "LINK_TARGET_SECRET = 'zebra-4410-outside'"
"""The content of the file `agent/leak.py` links to, outside the tree."""
VENDOR_MARKER = "VENDORED_MARKER = 'node-modules-5521'"
"""The content of `node_modules/pkg/index.py`, which is excluded."""
MARKERS = ("passwd-marker-7731", "zebra-4410-outside", "node-modules-5521")

MODEL = "openai:m"

C1_EVIDENCE = "output = TOOLS[call.function.name](**args)\nexcept Exception:\n    continue"
"""Lines 26-28 of agent/loop.py, as a model would copy them."""
C12_EVIDENCE = "while True:\n    response = client.chat.completions.create("
"""Lines 17-18 of agent/loop.py."""


def finding(check: str = "C1", *, file: str = "agent/loop.py", line: int = 27, evidence: str = C1_EVIDENCE,
            **extra: object) -> dict[str, object]:
    """`report_finding` arguments; the defaults are a true C1 finding."""
    args: dict[str, object] = {
        "check": check, "verdict": "confirmed", "file": file, "line": line,
        "claim": f"{check}: a defect the model found", "evidence": evidence,
        "consequence": "the next request is rejected by the provider",
    }
    args.update(extra)
    return args


C12_FINDING = finding("C12", line=17, evidence=C12_EVIDENCE)


def landmark(kind: str, line: int, file: str = "agent/loop.py") -> dict[str, object]:
    """`report_landmark` arguments."""
    return {"kind": kind, "file": file, "line": line, "symbol": "run_agent", "confidence": "high"}


LANDMARKS = {
    "tool-execution": landmark("tool-execution", 26),
    "history-append": landmark("history-append", 20),
    "agent-loop": landmark("agent-loop", 17),
}


def recon_steps(*kinds: str, usages: Sequence[Any] = (None, None)) -> list[Reply]:
    """A recon that reports `kinds` (from `LANDMARKS`) in one reply, then says it is done."""
    calls = [call(f"lm{i}", "report_landmark", LANDMARKS[k]) for i, k in enumerate(kinds)]
    first = reply(tool_calls=calls, usage=usages[0]) if calls else reply(text="Nothing found.", usage=usages[0])
    return [first, reply(text="Done.", usage=usages[1])] if calls else [first]


def tool_step(*calls: ToolCall, usage: Any = None) -> Reply:
    """One reply with these tool calls."""
    return reply(tool_calls=list(calls), usage=usage)


async def no_wait(_: float) -> None:
    """Backoff that does not wait."""


@dataclass
class Sleeps:
    """A backoff that records the delays it was asked for and does not wait."""

    delays: list[float]

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


def audit_over(server: ScriptedOpenAI, root: Path, checks: Sequence[str], out: Path, *,
               options: ModelOptions | None = None, progress: Progress = NO_PROGRESS, **overrides: Any) -> AuditRun:
    """Audit `root` with the llm engine against `server`; small timeouts, instant backoff, reports under `out`."""
    settings: dict[str, Any] = {
        "engine": "llm", "model": MODEL, "base_url": server.base_url, "output_dir": str(out),
        "request_timeout_s": 5.0, "check_timeout_s": 30.0, "transport_retries": 1, "formats": ["md", "json"],
        "concurrency": 3,
    }
    settings.update(overrides)
    return audit(root, list(checks), overrides=settings, model_options=options or ModelOptions(sleep=no_wait),
                 progress=progress)


def cli_args(server: ScriptedOpenAI, root: Path, checks: str, out: Path, *extra: str) -> list[str]:
    """`main([...])` arguments of an llm audit of `root` against `server`."""
    return [str(root), checks, "--engine", "llm", "--model", MODEL, "--base-url", server.base_url,
            "--output-dir", str(out), "--format", "md,json", "-q", *extra]


# ---------------------------------------------------------------------------------------------- wire messages

def messages_of(body: JsonObject) -> list[JsonObject]:
    """The `messages` of a request body."""
    return list(body["messages"])


def tool_results(body: JsonObject) -> dict[str, str]:
    """`tool_call_id -> content` of the tool messages after the last assistant message of a request."""
    msgs = messages_of(body)
    last = max(i for i, m in enumerate(msgs) if m["role"] == "assistant")
    return {m["tool_call_id"]: content_text(m) for m in msgs[last + 1:] if m["role"] == "tool"}


def content_text(message: JsonObject) -> str:
    """A message's content as text (string or content parts)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = cast(list[object], content)
        return "".join(str(cast(dict[str, Any], p).get("text", "")) for p in parts if isinstance(p, dict))
    return ""


def assert_paired(messages: Sequence[Mapping[str, Any]]) -> None:
    """Every assistant tool call has exactly one tool message before the next assistant message, and no tool
    message answers a call that was not made (OpenAI chat wire format)."""
    open_ids: Counter[str] | None = None
    for index, m in enumerate(messages):
        role = m.get("role")
        if role == "assistant":
            if open_ids is not None:
                assert not +open_ids, f"message {index}: calls {sorted(+open_ids)} got no result before it"
            calls = cast(list[Mapping[str, Any]], m.get("tool_calls") or [])
            ids = [str(tc["id"]) for tc in calls]
            assert len(ids) == len(set(ids)), f"message {index}: duplicate call ids {ids}"
            open_ids = Counter(ids)
        elif role == "tool":
            call_id = str(m.get("tool_call_id"))
            assert open_ids is not None and open_ids[call_id] == 1, \
                f"message {index}: tool result for {call_id!r}, which is not an unanswered call"
            open_ids[call_id] -= 1
    if open_ids is not None:
        assert not +open_ids, f"calls {sorted(+open_ids)} got no result by the end"


def assert_all_paired(server: ScriptedOpenAI) -> None:
    """`assert_paired` on every request the server received."""
    for received in server.requests:
        assert_paired(messages_of(received.body))


def keys(server: ScriptedOpenAI) -> list[str]:
    """The script key of every request, in arrival order."""
    return [r.key for r in server.requests]


def requests_for(server: ScriptedOpenAI, key: str) -> list[JsonObject]:
    """Bodies of the requests routed to `key`, in order."""
    return [r.body for r in server.requests if r.key == key]


def assert_clean(server: ScriptedOpenAI) -> None:
    """The script was followed exactly: no step raised, no key ran past its script, every request paired."""
    assert server.step_errors == []
    assert server.exhausted == []
    assert_all_paired(server)


# ---------------------------------------------------------------------------------------------- the ledger

def ledger_of(run: AuditRun) -> LedgerRead:
    """The run's ledger."""
    assert run.report.meta.ledger is not None
    return read_ledger(Path(run.report.meta.ledger))


def ledger_histories(read: LedgerRead) -> dict[str, list[dict[str, Any]]]:
    """Each unit's conversation rebuilt from the ledger (canonical messages), call ids renamed as the ledger
    says: the first request's messages, then each response and each later request's new messages."""
    histories: dict[str, list[dict[str, Any]]] = {}
    seen: dict[str, set[str]] = {}
    renames: dict[str, list[list[str]]] = {}
    pending: dict[str, dict[str, Any]] = {}
    for e in read.events:
        unit = e.get("unit", "")
        kind = e["event"]
        if kind == "unit-start":
            histories[unit], seen[unit] = [], set()
        elif kind == "request" and e["attempt"] == 1:
            _flush(unit, pending, renames, seen, histories)
            histories[unit].extend(e["messages"])
        elif kind == "response":
            pending[unit] = e["message"]
        elif kind == "renamed-call-ids":
            renames[unit] = [list(pair) for pair in e["renamed"]]
        elif kind == "unit-end":
            _flush(unit, pending, renames, seen, histories)
    return histories


def _flush(unit: str, pending: dict[str, dict[str, Any]], renames: dict[str, list[list[str]]],
           seen: dict[str, set[str]], histories: dict[str, list[dict[str, Any]]]) -> None:
    message = pending.pop(unit, None)
    if message is None:
        return
    todo = renames.pop(unit, [])
    message = json.loads(json.dumps(message))
    for part in message["parts"]:
        if part["type"] != "tool-call":
            continue
        original = part["id"] or ""
        if (not original or original in seen[unit]) and todo and todo[0][0] == original:
            part["id"] = todo.pop(0)[1]
        seen[unit].add(part["id"])
    histories[unit].append(message)


def assert_ledger_paired(history: Sequence[Mapping[str, Any]]) -> None:
    """`assert_paired` for a history of canonical ledger messages."""
    wire: list[dict[str, Any]] = []
    for message in history:
        if message["role"] == "assistant":
            calls = [{"id": p["id"]} for p in message["parts"] if p["type"] == "tool-call"]
            wire.append({"role": "assistant", "tool_calls": calls})
        elif message["role"] == "tool":
            wire.append({"role": "tool", "tool_call_id": message["call_id"]})
    assert_paired(wire)


def assert_ledger_calls_answered(read: LedgerRead) -> None:
    """Every tool call of every unit's recorded responses has exactly one `tool-call` event (its result) in the
    ledger, and no event answers a call that was never made."""
    for unit, history in ledger_histories(read).items():
        made = Counter(p["id"] for m in history if m["role"] == "assistant"
                       for p in m["parts"] if p["type"] == "tool-call")
        answered = Counter(e["id"] for e in read.of("tool-call") if e.get("unit") == unit)
        assert answered == made, f"{unit}: calls {dict(made)} but results {dict(answered)}"


def json_report(run_or_paths: AuditRun | Sequence[Path]) -> dict[str, Any]:
    """The JSON report written for a run."""
    paths = run_or_paths.paths if isinstance(run_or_paths, AuditRun) else run_or_paths
    (path,) = [p for p in paths if p.suffix == ".json"]
    return json.loads(path.read_text(encoding="utf-8"))


def markdown_report(run_or_paths: AuditRun | Sequence[Path]) -> str:
    """The Markdown report written for a run."""
    paths = run_or_paths.paths if isinstance(run_or_paths, AuditRun) else run_or_paths
    (path,) = [p for p in paths if p.suffix == ".md"]
    return path.read_text(encoding="utf-8")


# ---------------------------------------------------------------------------------------------- fixtures

@pytest.fixture(autouse=True)
def _allow_local_model_requests() -> Iterator[None]:
    """These tests reach only 127.0.0.1, so model requests stay allowed even where the suite forbids them."""
    with override_allow_model_requests(True):
        yield


@pytest.fixture
def harness(tmp_path: Path) -> Path:
    """The audited tree, with an outside file at `../../etc/passwd`, an outward symlink and a node_modules file."""
    root = tmp_path / "home" / "ws"
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "__init__.py").write_text("", encoding="utf-8")
    (root / "agent" / "loop.py").write_text(LOOP_PY, encoding="utf-8")
    (root / "agent" / "tools.py").write_text(TOOLS_PY, encoding="utf-8")
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.py").write_text(VENDOR_MARKER + "\n", encoding="utf-8")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd").write_text(PASSWD_MARKER + "\n", encoding="utf-8")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.py").write_text(LINK_MARKER + "\n", encoding="utf-8")
    (root / "agent" / "leak.py").symlink_to(tmp_path / "outside" / "secret.py")
    assert (root / "../../etc/passwd").resolve() == (tmp_path / "etc" / "passwd").resolve()
    return root


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """Where reports and run directories go (outside the audited tree)."""
    return tmp_path / "out"


BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@contextmanager
def benchmark_module(name: str) -> Iterator[ModuleType]:
    """A script of `benchmarks/` loaded as module `name` for the duration of a test (it is not a package)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(name, None)
