"""A tiny eval framework for the model engine: scenario in, deterministic assertions out.

A `Scenario` is a target tree (written into a temporary directory), a script per unit, the checks
and the audit options. `run_scenario` runs the real engine (`harness_audit.api.audit`, engine `llm`)
on a `ScriptedModel`: a pydantic-ai `FunctionModel` whose function finds the unit from the first user
message (`harness_audit.llm.prompts.unit_of`) and serves that unit's next scripted step. A step is a
`ModelResponse`, a callable of the messages so far (to react to a refusal), `Hang` (a request that
never answers) or `Repeat` (a model that never stops). The result, `EvalRun`, gives the three things
an eval asserts on: the ledger events, the prompts each unit received, and the report.

`replay_scenario` runs the same engine on a ledger recorded earlier (`evals/recorded/`) through
`ReplayModel`: no script, no provider, the recorded responses in order.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from harness_audit.api import audit
from harness_audit.llm.canonical import CanonicalMessage, messages_from
from harness_audit.llm.engine import Canceller
from harness_audit.llm.ledger import LedgerRead, read_ledger
from harness_audit.llm.prompts import unit_of
from harness_audit.llm.replay import ReplayModel, load_run
from harness_audit.llm.run import ModelOptions
from harness_audit.report import Report

__all__ = [
    "DONE",
    "EvalRun",
    "Hang",
    "Link",
    "Received",
    "Repeat",
    "Scenario",
    "ScriptedModel",
    "Step",
    "call",
    "files_from",
    "finding",
    "landmark",
    "last_tool_results",
    "neutralise_ledger",
    "record_scenario",
    "replay_scenario",
    "reply",
    "run_scenario",
    "text",
]

DEFAULT_USAGE = (100, 10)
"""(input, output) tokens of every scripted response that does not say otherwise: totals stay exact."""


# ---------------------------------------------------------------- script constructors

def call(tool: str, call_id: str | None = None, /, **args: Any) -> ToolCallPart:
    """One tool call; without `call_id`, `ScriptedModel` gives it a deterministic `<unit>-<n>` id when served."""
    return ToolCallPart(tool_name=tool, args=args, tool_call_id=call_id or "")


def finding(check: str, file: str | None, line: int | None, evidence: str, *, verdict: str = "confirmed",
            claim: str = "the defect the check looks for", consequence: str = "the harness misbehaves",
            confirm_hint: str | None = None, call_id: str | None = None) -> ToolCallPart:
    """A `report_finding` call."""
    args: dict[str, Any] = {"check": check, "verdict": verdict, "claim": claim, "evidence": evidence,
                            "consequence": consequence}
    if file is not None:
        args["file"] = file
    if line is not None:
        args["line"] = line
    if confirm_hint is not None:
        args["confirm_hint"] = confirm_hint
    return call("report_finding", call_id, **args)


def landmark(kind: str, file: str, line: int, symbol: str | None = None, *, confidence: str = "high",
             call_id: str | None = None) -> ToolCallPart:
    """A `report_landmark` call."""
    args: dict[str, Any] = {"kind": kind, "file": file, "line": line, "confidence": confidence}
    if symbol is not None:
        args["symbol"] = symbol
    return call("report_landmark", call_id, **args)


def reply(*parts: ToolCallPart | str, usage: tuple[int, int] = DEFAULT_USAGE,
          finish_reason: str | None = None) -> ModelResponse:
    """A model response of tool calls and/or text; `ScriptedModel` gives calls without an id `<unit>-<n>`."""
    out: list[Any] = [TextPart(content=p) if isinstance(p, str) else p for p in parts]
    stop = finish_reason or ("tool_call" if any(isinstance(p, ToolCallPart) for p in out) else "stop")
    return ModelResponse(parts=out, usage=RequestUsage(input_tokens=usage[0], output_tokens=usage[1]),
                         finish_reason=stop)  # type: ignore[arg-type]  # a literal from our own table


def text(content: str = "Done.", *, usage: tuple[int, int] = DEFAULT_USAGE) -> ModelResponse:
    """A final text reply: the unit is done."""
    return reply(content, usage=usage)


DONE = text()
"""The usual last step of a unit."""


@dataclass(frozen=True, slots=True)
class Hang:
    """A request that never answers (until cancelled); `cancel` first flips the run's cancel switch."""

    cancel: bool = False
    seconds: float = 20.0
    """Upper bound, so a broken cancel fails the eval instead of hanging the suite."""


@dataclass(frozen=True, slots=True)
class Repeat:
    """Serve this step for every remaining request: a model that never stops."""

    step: ModelResponse | Callable[[list[ModelMessage]], ModelResponse]


Step = ModelResponse | Callable[[list[ModelMessage]], ModelResponse] | Hang | Repeat
"""One scripted answer to one request of a unit."""


@dataclass(frozen=True, slots=True)
class Link:
    """A symbolic link in the target tree; `target` is relative to the link's directory (may leave the tree)."""

    target: str


# ---------------------------------------------------------------- the scripted model

@dataclass(frozen=True, slots=True)
class Received:
    """One request as the model received it."""

    unit: str
    messages: list[ModelMessage]
    info: AgentInfo

    @property
    def system(self) -> str:
        """The system prompt text of this request."""
        return "".join(p.content for m in self.messages if isinstance(m, ModelRequest)
                       for p in m.parts if isinstance(p, SystemPromptPart))

    @property
    def task(self) -> str:
        """The first user message: the unit's task."""
        for m in self.messages:
            for p in getattr(m, "parts", ()):
                if isinstance(p, UserPromptPart) and isinstance(p.content, str):
                    return p.content
        return ""

    def tool_definitions_json(self) -> str:
        """The tool definitions offered, as canonical JSON text."""
        return json.dumps([{"name": t.name, "description": t.description, "parameters": t.parameters_json_schema}
                           for t in self.info.function_tools], sort_keys=True)

    def tool_results(self) -> dict[str, str]:
        """Every tool result in the history so far, by call id."""
        return {p.tool_call_id: str(p.content) for m in self.messages if isinstance(m, ModelRequest)
                for p in m.parts if isinstance(p, ToolReturnPart)}


def last_tool_results(messages: Sequence[ModelMessage]) -> list[str]:
    """The tool results of the newest request in `messages` (what the model is answering now)."""
    for m in reversed(messages):
        if isinstance(m, ModelRequest):
            return [str(p.content) for p in m.parts if isinstance(p, ToolReturnPart)]
    return []


class ScriptedModel:
    """A `FunctionModel` that walks one script per unit and records every request it receives.

    A unit that runs out of script gets `DONE` and is counted in `overruns`, so a scenario can tell a
    model that stopped on its own from one the engine kept asking.
    """

    def __init__(self, script: Mapping[str, Sequence[Step]], *, canceller: Canceller | None = None) -> None:
        self.script = {unit: list(steps) for unit, steps in script.items()}
        self.canceller = canceller
        self.received: list[Received] = []
        self.overruns = Counter[str]()
        self._next = Counter[str]()
        self._ids = Counter[str]()
        self._lock = threading.Lock()
        self.model: Model = FunctionModel(self._respond, model_name="scripted")

    def calls(self, unit: str) -> int:
        """How many requests `unit` made."""
        return sum(1 for r in self.received if r.unit == unit)

    def requests(self, unit: str) -> list[Received]:
        """The requests of `unit`, in order."""
        return [r for r in self.received if r.unit == unit]

    def left(self) -> dict[str, int]:
        """Scripted steps never served, per unit (a `Repeat` counts as none)."""
        out: dict[str, int] = {}
        for unit, steps in self.script.items():
            rest = [s for s in steps[self._next[unit]:] if not isinstance(s, Repeat)]
            if rest:
                out[unit] = len(rest)
        return out

    async def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        unit = unit_of(Received("", messages, info).task)
        with self._lock:
            self.received.append(Received(unit, list(messages), info))
            steps = self.script.get(unit, [])
            index = self._next[unit]
            step: Step = DONE
            if index >= len(steps):
                self.overruns[unit] += 1
            else:
                step = steps[index]
                if not isinstance(step, Repeat):
                    self._next[unit] += 1
        if isinstance(step, Repeat):
            step = step.step
        if isinstance(step, Hang):
            if step.cancel:
                assert self.canceller is not None, "Hang(cancel=True) needs a scenario run with a canceller"
                self.canceller.event.set()
            await asyncio.sleep(step.seconds)
            raise AssertionError(f"{unit}: a hung request was not cancelled within {step.seconds} s")
        if isinstance(step, ModelResponse):
            return self._served(unit, step)
        result: ModelResponse | Awaitable[ModelResponse] = step(messages)
        return self._served(unit, await result if isinstance(result, Awaitable) else result)

    def _served(self, unit: str, response: ModelResponse) -> ModelResponse:
        """A fresh copy of a scripted response, every call without an id given a unique one."""
        parts: list[Any] = []
        for part in response.parts:
            if isinstance(part, ToolCallPart) and not part.tool_call_id:
                with self._lock:
                    self._ids[unit] += 1
                    part = dataclasses.replace(part, tool_call_id=f"{unit}-{self._ids[unit]}")
            parts.append(part)
        return dataclasses.replace(response, parts=parts)


# ---------------------------------------------------------------- scenarios and runs

@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """One deterministic behaviour eval: a tree, a script, the checks and options."""

    name: str
    risk: str
    """What breaks for users if this eval fails (seed 001: every eval states its failure risk)."""
    files: Mapping[str, str | Link]
    """The audited tree, workspace-relative path to text or link."""
    script: Mapping[str, Sequence[Step]] = field(default_factory=dict[str, Sequence[Step]])
    """Unit (`recon`, `C1`, ..., `analysis`) to its steps."""
    checks: Sequence[str] = ("C1",)
    outside: Mapping[str, str] = field(default_factory=dict[str, str])
    """Files written BESIDE the workspace (under `../outside/`), for escape attempts."""
    overrides: Mapping[str, Any] = field(default_factory=dict[str, Any])
    """Configuration keys on top of the eval defaults (engine llm, no retries)."""


@dataclass(slots=True)
class EvalRun:
    """What a scenario run left behind: the report, the ledger and (scripted) the received prompts."""

    report: Report
    paths: tuple[Path, ...]
    root: Path
    ledger_path: Path
    ledger: LedgerRead
    scripted: ScriptedModel | None

    def events(self, kind: str, unit: str | None = None) -> list[dict[str, Any]]:
        """Ledger events of one kind (and unit)."""
        return [e for e in self.ledger.of(kind) if unit is None or e.get("unit") == unit]

    def outcome(self, check: str) -> str:
        """The report's `status_text` of one check."""
        return next(o.status_text for o in self.report.outcomes if o.check.value == check)

    def rendered(self, suffix: str) -> str:
        """The text of the written report with that suffix (`.md`, `.json`, `.sarif`)."""
        return next(p for p in self.paths if p.name.endswith(suffix)).read_text(encoding="utf-8")

    def json_report(self) -> dict[str, Any]:
        """The written JSON report."""
        data: dict[str, Any] = json.loads(self.rendered(".json"))
        return data

    def refusals(self, reason: str | None = None, unit: str | None = None) -> list[dict[str, Any]]:
        """Ledger refusal events, filtered."""
        return [e for e in self.events("refusal", unit) if reason is None or e["reason"] == reason]

    def tool_results(self, unit: str) -> dict[str, str]:
        """Every tool result the unit's model was sent, by call id (from the received prompts)."""
        assert self.scripted is not None, "tool results as received need a scripted run"
        out: dict[str, str] = {}
        for r in self.scripted.requests(unit):
            out.update(r.tool_results())
        return out

    def history(self, unit: str) -> list[ModelMessage]:
        """The unit's conversation rebuilt from the ledger alone (requests as sent, responses as received)."""
        data: list[CanonicalMessage] = []
        for e in self.ledger.events:
            if e.get("unit") != unit:
                continue
            if e["event"] == "unit-start":
                data = []
            elif e["event"] == "request" and e.get("attempt", 1) == 1:
                data.extend(e["messages"])
            elif e["event"] == "response":
                data.append(e["message"])
        return messages_from(data)

    def unpaired_calls(self, unit: str) -> list[str]:
        """Call ids in the unit's ledger history that no later request answers and no tool-call event records."""
        history = self.history(unit)
        answered = {p.tool_call_id for m in history if isinstance(m, ModelRequest)
                    for p in m.parts if isinstance(p, ToolReturnPart)}
        recorded = {e["id"] for e in self.events("tool-call", unit)}
        renamed = {old: new for e in self.events("renamed-call-ids", unit) for old, new in e["renamed"]}
        calls = [renamed.get(p.tool_call_id, p.tool_call_id) for m in history if isinstance(m, ModelResponse)
                 for p in m.parts if isinstance(p, ToolCallPart)]
        return [c for c in calls if c not in answered and c not in recorded]


def _write_tree(root: Path, files: Mapping[str, str | Link]) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Link):
            path.symlink_to(content.target)
        else:
            path.write_text(content, encoding="utf-8")


async def _no_wait(_: float) -> None:
    return None


def _config(scenario: Scenario, out: Path) -> dict[str, Any]:
    return {"engine": "llm", "output_dir": str(out), "transport_retries": 0, "concurrency": 2,
            "check_timeout_s": 60.0, "request_timeout_s": 30.0, **scenario.overrides}


def _run(scenario: Scenario, tmp: Path, model: Model, scripted: ScriptedModel | None,
         canceller: Canceller | None) -> EvalRun:
    root = tmp / "ws"
    _write_tree(root, scenario.files)
    if scenario.outside:
        _write_tree(tmp / "outside", dict(scenario.outside))
    out = tmp / "out"
    run = audit(root, list(scenario.checks), overrides=_config(scenario, out),
                model_options=ModelOptions(model=model, canceller=canceller, sleep=_no_wait))
    ledger_path = Path(run.report.meta.ledger or "")
    return EvalRun(report=run.report, paths=tuple(run.paths), root=root, ledger_path=ledger_path,
                   ledger=read_ledger(ledger_path), scripted=scripted)


def run_scenario(scenario: Scenario, tmp: Path, *, cancellable: bool = False) -> EvalRun:
    """Run the engine on the scenario's tree with its script; `cancellable` wires a cancel switch to `Hang`."""
    canceller = Canceller() if cancellable else None
    scripted = ScriptedModel(scenario.script, canceller=canceller)
    return _run(scenario, tmp, scripted.model, scripted, canceller)


def replay_scenario(scenario: Scenario, ledger: Path, tmp: Path) -> EvalRun:
    """Run the engine on the scenario's tree with the responses recorded in `ledger` (no script)."""
    return _run(scenario, tmp, ReplayModel(load_run(ledger)), None, None)


def files_from(directory: Path) -> dict[str, str | Link]:
    """A scenario tree read from a directory (e.g. the audited files of a real run, copied beside its ledger)."""
    out: dict[str, str | Link] = {}
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory).as_posix()
        if path.is_symlink():
            out[rel] = Link(os.readlink(path))
        elif path.is_file():
            out[rel] = path.read_text(encoding="utf-8")
    return out


def neutralise_ledger(source: Path, dest: Path, paths: Mapping[Path, str]) -> None:
    """Copy a ledger, replacing machine-specific absolute paths (the audited root, temp dirs) by placeholders."""
    raw = source.read_text(encoding="utf-8")
    for path, name in paths.items():
        raw = raw.replace(json.dumps(str(path))[1:-1], name)
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(raw, encoding="utf-8")


def record_scenario(scenario: Scenario, dest: Path, tmp: Path) -> EvalRun:
    """Run `scenario` scripted and keep its ledger at `dest`, with the temporary root made neutral."""
    run = run_scenario(scenario, tmp)
    neutralise_ledger(run.ledger_path, dest, {run.root: "<root>", tmp: "<tmp>"})
    shutil.rmtree(tmp / "out", ignore_errors=True)
    return run
