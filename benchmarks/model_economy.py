"""What the model engines spend on a real tree, per check, against a scripted reader (no network, no key).

The llm and hybrid engines audit a real tree (openai-agents, 320 files, 136k lines, by default) with every
check. Each subagent is answered by a scripted reader that behaves like a careful model following one of
two fixed workloads:

- **A** (the one the targets hold on): read the enclosing code of up to 6 of the unit's landmarks or leads
  at once (`read_file(path, symbol=…)`, or a 41-line window when no symbol is known), then 2 full 200-line
  pages of other files at once, then report one finding citing a line it read, then stop.
- **B** (a worst case): 8 full-page reads of different files, one a turn, then the finding, then stop.

Recon (llm engine) reads three of the static landmarks it is shown, confirms them, and stops.

The reader counts tokens as the engine estimates them (4 characters a token) over the whole prompt (tool
definitions, system prompt, history) and reports usage the way a provider would, in one of two styles:

- **openai**: automatic prefix caching: the longest prefix shared with an earlier request is read from the
  cache, from 1,024 tokens on, in steps of 128;
- **anthropic**: explicit breakpoints (tools, system prompt, newest message, as the engine marks them): a
  request reads the longest prefix an earlier request wrote at a breakpoint, and writes the rest.

"Cacheable" is the share of input that repeats an earlier request's prefix, whatever the style.

Targets (workload A, both engines, both styles): every check ends `ran` with its finding under the default
budgets, median uncached input at most 15,000 tokens a check, total input at most 40,000 tokens a check,
at least 70% of input cacheable. Workload B must also finish every check. The exit code is 1 when a target
is missed.

    python -m venv /tmp/oa && /tmp/oa/bin/pip install openai-agents==0.24.0
    .venv/bin/python benchmarks/model_economy.py --tree /tmp/oa/lib/python3.11/site-packages/agents
    .venv/bin/python benchmarks/model_economy.py --smoke      # the bundled example, two checks, seconds
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

from harness_audit.api import audit
from harness_audit.catalogue import parse_selection
from harness_audit.findings import CheckId
from harness_audit.llm.canonical import request_messages
from harness_audit.llm.loop import CHARS_PER_TOKEN
from harness_audit.llm.prompts import unit_of
from harness_audit.llm.run import ModelOptions

Style = Literal["openai", "anthropic"]
Workload = Literal["A", "B"]

_REPO = Path(__file__).resolve().parents[1]
_DEFAULT_TREE = Path("/tmp/oa/lib/python3.11/site-packages/agents")
_SMOKE_TREE = _REPO / "examples" / "agent_loop"
_MODELS = {"openai": "openai:gpt-4.1-mini", "anthropic": "anthropic:claude-sonnet-4-5"}
"""Priced models of each style: the budgets weigh tokens by their price ratios, the report shows money."""
_OPENAI_MIN, _OPENAI_STEP, _ANTHROPIC_MIN = 1024, 128, 1024
_LANDMARK = re.compile(r'^- (?P<kind>[a-z-]+) at (?P<file>"(?:[^"\\]|\\.)*") line (?P<line>\d+)(?:, in (?P<sym>[\w.$<>]+))?')
_LEAD = re.compile(r'^- (?P<id>C\d+-\d+) · (?P<file>"(?:[^"\\]|\\.)*") line (?P<line>\d+)')
_NUMBERED = re.compile(r"^\s*(\d+)\t(.*)$")
_CODE = re.compile(r"[()=\[\]]")

TARGET_MEDIAN_UNCACHED = 15_000
TARGET_MAX_INPUT = 40_000
TARGET_CACHEABLE = 0.70


def _tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN


@dataclass
class _Cache:
    """What a provider of one style has cached during one run."""

    style: Style
    prompts: list[str] = field(default_factory=list[str])
    written: dict[int, set[str]] = field(default_factory=dict[int, set[str]])
    """Anthropic style: prefix length (characters) to the digests of prefixes written at a breakpoint."""

    @staticmethod
    def _lcp(a: str, b: str) -> int:
        n = min(len(a), len(b))
        lo, hi = 0, n
        while lo < hi:  # binary search on prefix equality (slices compare at C speed)
            mid = (lo + hi + 1) // 2
            if a[:mid] == b[:mid]:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def shared(self, prompt: str) -> int:
        """Characters of `prompt` that repeat an earlier prompt's prefix."""
        return max((self._lcp(prompt, p) for p in self.prompts[-64:]), default=0)

    def usage(self, prompt: str, breakpoints: Sequence[int]) -> tuple[int, int, int, int]:
        """(input, cache read, cache write, cacheable) tokens of one request, then remember it."""
        total = _tokens(prompt)
        shared = _tokens(prompt[:self.shared(prompt)])
        read = write = 0
        if self.style == "openai":
            read = 0 if shared < _OPENAI_MIN else _OPENAI_MIN + (shared - _OPENAI_MIN) // _OPENAI_STEP * _OPENAI_STEP
        else:
            hit = 0
            for length in sorted(self.written, reverse=True):
                if length <= len(prompt) and _digest(prompt[:length]) in self.written[length]:
                    hit = length
                    break
            read = _tokens(prompt[:hit])
            for bp in breakpoints:
                if _tokens(prompt[:bp]) >= _ANTHROPIC_MIN:
                    self.written.setdefault(bp, set()).add(_digest(prompt[:bp]))
            write = max(total - read, 0) if total >= _ANTHROPIC_MIN else 0
        self.prompts.append(prompt)
        return total, read, write, shared


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class _Target:
    """Something a reader reads: a definition, a window, or a page."""

    path: str
    symbol: str | None = None
    line: int | None = None

    def call(self) -> dict[str, Any]:
        if self.symbol:
            return {"path": self.path, "symbol": self.symbol}
        if self.line:
            return {"path": self.path, "start_line": max(1, self.line - 20), "end_line": self.line + 20}
        return {"path": self.path}


class Reader:
    """The scripted model: one workload for every unit, usage reported in one caching style."""

    def __init__(self, workload: Workload, style: Style, files: Sequence[str]) -> None:
        self.workload, self.files = workload, list(files)
        self.cache = _Cache(style)
        self.cacheable: dict[str, int] = {}
        self.inputs: dict[str, int] = {}
        self._lock = threading.Lock()
        self._calls = 0
        self.model = FunctionModel(self._respond, model_name="scripted-reader")

    # ------------------------------------------------------------------ the model
    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        task = _task(messages)
        unit = unit_of(task)
        turn = sum(1 for m in messages if isinstance(m, ModelResponse))
        offered = {t.name for t in info.function_tools}
        if unit == "recon":
            parts = self._recon(task, turn, messages)
        else:
            parts = self._check(unit, task, turn, messages, offered)
        prompt, breakpoints = _prompt(messages, info)
        with self._lock:
            total, read, write, shared = self.cache.usage(prompt, breakpoints)
            self.cacheable[unit] = self.cacheable.get(unit, 0) + shared
            self.inputs[unit] = self.inputs.get(unit, 0) + total
            out = []
            for p in parts:
                if isinstance(p, ToolCallPart):
                    self._calls += 1
                    out.append(ToolCallPart(tool_name=p.tool_name, args=p.args, tool_call_id=f"c{self._calls}"))
                else:
                    out.append(p)
        out_tokens = max(8, _tokens(json.dumps([getattr(p, "args", None) or getattr(p, "content", "")
                                                for p in out])))
        finish = "tool_call" if any(isinstance(p, ToolCallPart) for p in out) else "stop"
        return ModelResponse(parts=out, usage=RequestUsage(input_tokens=total, cache_read_tokens=read,
                                                           cache_write_tokens=write, output_tokens=out_tokens),
                             finish_reason=finish)  # type: ignore[arg-type]

    def _recon(self, task: str, turn: int, messages: list[ModelMessage]) -> list[Any]:
        landmarks = [m for m in map(_LANDMARK.match, task.splitlines()) if m][:3]
        if turn == 0 and landmarks:
            return [_read(_Target(json.loads(m["file"]), m["sym"], int(m["line"]))) for m in landmarks]
        if turn == 1 and landmarks:
            return [ToolCallPart(tool_name="report_landmark",
                                 args={"kind": m["kind"], "file": json.loads(m["file"]), "line": int(m["line"]),
                                       "confidence": "high", **({"symbol": m["sym"]} if m["sym"] else {})})
                    for m in landmarks]
        return [TextPart(content="Done.")]

    def _check(self, unit: str, task: str, turn: int, messages: list[ModelMessage], offered: set[str]) -> list[Any]:
        if "read_file" not in offered:  # the reporting turn: report what was read, nothing else runs
            return self._report(unit, messages)
        if self.workload == "A":
            plan = [self._enclosing(task), self._pages(unit, task, 2)]
            if turn < len(plan) and plan[turn]:
                return [_read(t) for t in plan[turn]]
            steps = len([p for p in plan if p])
        else:
            pages = self._pages(unit, task, 8)
            if turn < len(pages):
                return [_read(pages[turn])]
            steps = len(pages)
        if turn == steps:
            return self._report(unit, messages)
        return [TextPart(content="Done.")]

    # ------------------------------------------------------------------ what to read and report
    def _enclosing(self, task: str) -> list[_Target]:
        """Up to six of the unit's leads and landmarks, as a definition or a window read."""
        seen: set[tuple[str, str | None, int | None]] = set()
        out: list[_Target] = []
        for line in task.splitlines():
            lead, landmark = _LEAD.match(line), _LANDMARK.match(line)
            if lead:
                target = _Target(json.loads(lead["file"]), None, int(lead["line"]))
            elif landmark:
                target = _Target(json.loads(landmark["file"]), landmark["sym"], int(landmark["line"]))
            else:
                continue
            key = (target.path, target.symbol, None if target.symbol else target.line)
            if key not in seen:
                seen.add(key)
                out.append(target)
            if len(out) == 6:
                break
        return out

    def _pages(self, unit: str, task: str, n: int) -> list[_Target]:
        """`n` first pages of files the unit's task does not name, chosen the same way every run."""
        named = set(re.findall(r'"([^"]+\.py)"', task))
        pool = [f for f in self.files if f not in named] or self.files
        start = int(hashlib.blake2b(unit.encode(), digest_size=4).hexdigest(), 16)
        return [_Target(pool[(start + 7919 * k) % len(pool)]) for k in range(min(n, len(pool)))]

    def _report(self, unit: str, messages: list[ModelMessage]) -> list[Any]:
        """One finding on a line of real code the unit read, cited with the line it was shown at."""
        reads = {p.tool_call_id: p for m in messages if isinstance(m, ModelResponse) for p in m.parts
                 if isinstance(p, ToolCallPart) and p.tool_name == "read_file"}
        for m in messages:
            if not isinstance(m, ModelRequest):
                continue
            for part in m.parts:
                if not isinstance(part, ToolReturnPart) or part.tool_call_id not in reads:
                    continue
                path = reads[part.tool_call_id].args_as_dict()["path"]
                for row in str(part.content).splitlines():
                    hit = _NUMBERED.match(row)
                    code = hit.group(2).strip() if hit else ""
                    if hit and len(code) >= 12 and _CODE.search(code) and not code.startswith(("#", '"', "'")):
                        return [ToolCallPart(tool_name="report_finding", args={
                            "check": unit, "verdict": "confirmed", "file": path, "line": int(hit.group(1)),
                            "evidence": code, "claim": "benchmark finding on a line the reader read",
                            "consequence": "none: this is a scripted benchmark"})]
        return [TextPart(content="Nothing to report.")]


def _read(target: _Target) -> ToolCallPart:
    return ToolCallPart(tool_name="read_file", args=target.call(), tool_call_id="")


def _task(messages: list[ModelMessage]) -> str:
    for m in messages:
        for p in getattr(m, "parts", ()):
            if p.part_kind == "user-prompt" and isinstance(p.content, str):
                return p.content
    return ""


def _prompt(messages: list[ModelMessage], info: AgentInfo) -> tuple[str, list[int]]:
    """The request as one text in provider order (tools, system, messages) and its Anthropic breakpoints."""
    tools = json.dumps([{"name": t.name, "description": t.description, "parameters": t.parameters_json_schema}
                        for t in info.function_tools], sort_keys=True)
    canonical = request_messages(messages)
    system = "".join(m["content"] for m in canonical if m["role"] == "system")
    # one line a message: a request's text is a prefix of the next one's while the history only grows
    rest = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in canonical if m["role"] != "system")
    text = tools + system + rest
    return text, [len(tools), len(tools) + len(system), len(text)]


# ---------------------------------------------------------------------------------------------- runs

@dataclass(frozen=True, slots=True)
class Row:
    """One check of one run."""

    check: str
    status: str
    findings: int
    requests: int
    input: int
    cached: int
    written: int
    output: int
    cacheable: int
    cost: float | None

    @property
    def uncached(self) -> int:
        """Input not read from the cache (cache writes included)."""
        return self.input - self.cached


@dataclass(frozen=True, slots=True)
class RunResult:
    """One engine, one workload, one caching style."""

    engine: str
    workload: Workload
    style: Style
    rows: tuple[Row, ...]
    recon: Row | None
    seconds: float

    def failures(self) -> list[str]:
        """The targets this run misses."""
        out = [f"{r.check} ended {r.status} with {r.findings} finding(s) of its own"
               for r in self.rows if r.status != "ran" or r.findings < 1]
        if self.workload == "A" and self.rows:
            median = statistics.median(r.uncached for r in self.rows)
            if median > TARGET_MEDIAN_UNCACHED:
                out.append(f"median uncached input {median:,.0f} > {TARGET_MEDIAN_UNCACHED:,}")
            worst = max(self.rows, key=lambda r: r.input)
            if worst.input > TARGET_MAX_INPUT:
                out.append(f"{worst.check} total input {worst.input:,} > {TARGET_MAX_INPUT:,}")
            share = sum(r.cacheable for r in self.rows) / max(sum(r.input for r in self.rows), 1)
            if share < TARGET_CACHEABLE:
                out.append(f"cacheable share {share:.0%} < {TARGET_CACHEABLE:.0%}")
        return out


def run_once(tree: Path, engine: str, workload: Workload, style: Style, checks: Sequence[CheckId],
             out: Path) -> RunResult:
    """Audit `tree` with `engine` and the scripted reader; per-check usage from the report."""
    files = sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*.py")
                   if "__pycache__" not in p.parts and p.stat().st_size > 200)
    reader = Reader(workload, style, files)
    t0 = time.perf_counter()
    run = audit(tree, [c.value for c in checks],
                overrides={"engine": engine, "model": _MODELS[style], "output_dir": str(out), "formats": ["json"],
                           "concurrency": 3},
                model_options=ModelOptions(model=reader.model))
    seconds = time.perf_counter() - t0
    r = run.report
    price = r.meta.price
    rows = tuple(Row(check=o.check.value, status=o.status_text,
                     findings=sum(1 for f in r.findings if f.check == o.check and f.source == f"llm:{o.check.value}"),
                     requests=o.usage.requests, input=o.usage.input_tokens, cached=o.usage.cache_read_tokens,
                     written=o.usage.cache_write_tokens, output=o.usage.output_tokens,
                     cacheable=reader.cacheable.get(o.check.value, 0),
                     cost=price.cost(o.usage) if price else None)
                 for o in r.outcomes)
    recon = None
    if r.recon_usage is not None and r.recon_usage.requests:
        u = r.recon_usage
        recon = Row(check="recon", status="ran", findings=0, requests=u.requests, input=u.input_tokens,
                    cached=u.cache_read_tokens, written=u.cache_write_tokens, output=u.output_tokens,
                    cacheable=reader.cacheable.get("recon", 0), cost=price.cost(u) if price else None)
    return RunResult(engine, workload, style, rows, recon, seconds)


def render(result: RunResult) -> str:
    """One run as a table, then its summary line."""
    head = (f"## {result.engine} · workload {result.workload} · {result.style}-style caching "
            f"({result.seconds:.1f} s)")
    lines = [head, "", "| check | status | requests | uncached input | cached input | cache write | output | "
             "total input | cacheable | cost |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for row in ([result.recon] if result.recon else []) + list(result.rows):
        share = row.cacheable / row.input if row.input else 0.0
        cost = "unknown" if row.cost is None else f"${row.cost:.4f}"
        lines.append(f"| {row.check} | {row.status} | {row.requests} | {row.uncached:,} | {row.cached:,} | "
                     f"{row.written:,} | {row.output:,} | {row.input:,} | {share:.0%} | {cost} |")
    rows = result.rows
    if rows:
        share = sum(r.cacheable for r in rows) / max(sum(r.input for r in rows), 1)
        lines += ["", f"per check: median uncached input {statistics.median(r.uncached for r in rows):,.0f}, "
                      f"median total input {statistics.median(r.input for r in rows):,.0f} "
                      f"(max {max(r.input for r in rows):,}), median requests "
                      f"{statistics.median(r.requests for r in rows):g}, cacheable {share:.0%}, "
                      f"cache-read share {sum(r.cached for r in rows) / max(sum(r.input for r in rows), 1):.0%}"]
    failures = result.failures()
    lines += ["", "targets: " + ("met" if not failures else "MISSED: " + "; ".join(failures)), ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; exit 1 when a target is missed."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    p.add_argument("--tree", type=Path, default=_DEFAULT_TREE, help="a real tree (default: openai-agents in /tmp/oa)")
    p.add_argument("--engines", default="llm,hybrid")
    p.add_argument("--workloads", default="A,B")
    p.add_argument("--styles", default="openai,anthropic")
    p.add_argument("--checks", default="all")
    p.add_argument("--smoke", action="store_true", help="the bundled example and C1,C12: a quick run")
    args = p.parse_args(argv)
    tree = _SMOKE_TREE if args.smoke else args.tree
    if not tree.is_dir():
        print(f"no tree at {tree}; see the module docstring for how to install one", file=sys.stderr)
        return 2
    checks = parse_selection(["C1,C12"] if args.smoke else [args.checks])
    lines = sum(1 for f in tree.rglob("*.py") for _ in f.open(encoding="utf-8", errors="replace"))
    print(f"# model economy on {tree} ({lines:,} Python lines), checks {','.join(checks)}\n")
    missed = 0
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "tree"
        shutil.copytree(tree, work, ignore=shutil.ignore_patterns("__pycache__", ".harness-audit"))
        for engine in args.engines.split(","):
            for workload in args.workloads.split(","):
                for style in args.styles.split(","):
                    result = run_once(work, engine, workload, style, checks,  # type: ignore[arg-type]
                                      Path(tmp) / f"out-{engine}-{workload}-{style}")
                    print(render(result), flush=True)
                    missed += bool(result.failures())
    print(f"{missed} run(s) missed a target" if missed else "every target met")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
