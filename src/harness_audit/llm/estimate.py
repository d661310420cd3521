"""`--estimate`: what a model run would do, what it is expected to cost, and the most it could cost; no request.

Landmarks come from static recon (a preview: with `engine = llm` the recon subagent may add some).
The ceiling is exact arithmetic over the enforced budgets: every unit stops before its weighted tokens
pass `max_tokens_per_check`, and a weighted token costs at most the model's uncached input price. The
expected cost is a model of a typical unit, stated with its assumptions: a few turns, each reading
about two pages of code, the shared prefix and earlier turns read from the provider's cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness_audit.catalogue import CHECKS
from harness_audit.config import AuditConfig
from harness_audit.findings import CheckId, Landmark, Usage
from harness_audit.leads import gate_leads, lead_id
from harness_audit.llm.loop import CHARS_PER_TOKEN, Budget
from harness_audit.llm.prices import price_of
from harness_audit.llm.prompts import check_task, lead_code, recon_task, system_prompt, tool_schemas
from harness_audit.report import Price

EXPECTED_TURNS = 5
"""Requests a typical check makes (workload A of benchmarks/model_economy.py makes 4, a careful model more)."""
EXPECTED_READ_TOKENS = 2_500
"""Tool output a typical turn adds to the history (about one 200-line page)."""
EXPECTED_OUTPUT_TOKENS = 400
"""Output a typical turn writes (tool calls, a finding's claim and evidence)."""


@dataclass(frozen=True, slots=True)
class PlannedUnit:
    """One subagent the run would start."""

    unit: str
    landmarks: tuple[Landmark, ...]
    task_tokens: int
    note: str = ""


@dataclass(frozen=True, slots=True)
class Estimate:
    """The plan, its expected usage and its ceiling."""

    engine: str
    model: str | None
    units: tuple[PlannedUnit, ...]
    prefix_tokens: int
    max_tokens_per_unit: int
    price: Price | None
    expected: Usage
    """Tokens the run is expected to use (see the module docstring for the model)."""

    @property
    def ceiling_tokens(self) -> int:
        """Weighted tokens the run can spend at most."""
        return len(self.units) * self.max_tokens_per_unit

    @property
    def ceiling_dollars(self) -> float | None:
        """The most the run can cost: a weighted token costs at most the uncached input price."""
        return None if self.price is None else self.ceiling_tokens * self.price.input / 1e6

    @property
    def expected_dollars(self) -> float | None:
        """The expected cost, when the model's price is known."""
        return None if self.price is None else self.price.cost(self.expected)


def expected_usage(units: Sequence[PlannedUnit], prefix_tokens: int) -> Usage:
    """A typical run's usage: each unit's turns grow by a page, every earlier turn and the shared prefix of every
    unit after the first are cache reads."""
    total = Usage()
    for n, unit in enumerate(units):
        start = prefix_tokens + unit.task_tokens
        for turn in range(EXPECTED_TURNS):
            prompt = start + turn * EXPECTED_READ_TOKENS
            # an earlier turn of the unit is cached; a first turn, only the prefix other units already sent
            cached = start + (turn - 1) * EXPECTED_READ_TOKENS if turn else (prefix_tokens if n else 0)
            total = total + Usage(input_tokens=prompt, cache_read_tokens=cached,
                                  output_tokens=EXPECTED_OUTPUT_TOKENS, requests=1)
    return total


def estimate(root: Path, checks: Sequence[CheckId], config: AuditConfig) -> Estimate:
    """Plan the model run of `checks` on `root` from static recon; spends nothing."""
    from harness_audit.pipeline import STATIC_LANGUAGES, gate_landmarks, output_dir_of, run_static
    from harness_audit.workspace import Workspace

    ws = Workspace.open(root, excludes=config.excludes, max_file_bytes=config.max_file_bytes)
    discovery = ws.discover(STATIC_LANGUAGES)
    static, _, _, _ = run_static(ws, discovery, checks, output_dir_of(ws, config), config, config.cache)
    landmarks = gate_landmarks(ws, checks, static.landmarks, [])
    found = {lm.kind for lm in landmarks}
    budget = Budget(max_turns=config.max_turns_per_check, max_tool_calls=config.max_tool_calls_per_check,
                    max_tokens=config.max_tokens_per_check).describe()
    units: list[PlannedUnit] = []
    needs_recon = config.engine == "llm" or any(k not in found for c in checks for k in CHECKS[c].requires)
    if needs_recon:
        kinds = sorted({k for c in checks for k in (*CHECKS[c].requires, *CHECKS[c].also_useful)
                        if config.engine == "llm" or k not in found}, key=lambda k: k.value)
        task = recon_task(kinds, landmarks, budget=budget)
        units.append(PlannedUnit("recon", (), len(task) // CHARS_PER_TOKEN,
                                 "confirms and extends static recon" if config.engine == "llm" else "for missing kinds"))
    for check in checks:
        spec = CHECKS[check]
        missing = [k.value for k in spec.requires if k not in found]
        wanted = set(spec.requires) | set(spec.also_useful)
        mine = tuple(lm for lm in landmarks if lm.kind in wanted)
        numbered = [(lead_id(check, i), c) for i, c in enumerate(static.candidates.get(check, []), start=1)]
        leads = gate_leads(ws, checks, {check: numbered}, []).get(check, []) if config.engine == "hybrid" else []
        task = check_task(check, landmarks, leads, budget=budget, code=lambda lead: lead_code(ws, lead))
        note = f"runs if recon finds {', '.join(missing)}" if missing else ""
        units.append(PlannedUnit(check.value, mine, len(task) // CHARS_PER_TOKEN, note))
    prefix = (len(system_prompt()) + sum(len(n) + len(d) + len(s) for n, d, s in tool_schemas())) // CHARS_PER_TOKEN
    return Estimate(engine=config.engine, model=config.model, units=tuple(units), prefix_tokens=prefix,
                    max_tokens_per_unit=config.max_tokens_per_check, price=price_of(config),
                    expected=expected_usage(units, prefix))


def render_estimate(e: Estimate) -> str:
    """Plain text for the terminal."""
    out = [f"Plan for engine {e.engine} with model {e.model or '(none set)'}: {len(e.units)} subagents, no request made.",
           f"Shared prefix (system prompt + tools): ~{e.prefix_tokens:,} tokens, identical for every subagent.", ""]
    for u in e.units:
        kinds = sorted({lm.kind.value for lm in u.landmarks})
        where = f"{len(u.landmarks)} landmarks ({', '.join(kinds)})" if u.landmarks else "no landmarks yet"
        task = f", task ~{u.task_tokens:,} tokens" if u.task_tokens else ""
        out.append(f"  {u.unit:>5}: {where}{task}" + (f" — {u.note}" if u.note else ""))
    x = e.expected
    share = x.cache_read_tokens / x.input_tokens if x.input_tokens else 0.0
    out += ["", f"Expected: ~{x.input_tokens:,} input tokens ({share:.0%} read from the provider's cache) and "
                f"~{x.output_tokens:,} output tokens, assuming {EXPECTED_TURNS} requests a subagent that each add "
                f"~{EXPECTED_READ_TOKENS:,} tokens of code read and write ~{EXPECTED_OUTPUT_TOKENS} tokens."]
    if e.expected_dollars is not None:
        source = "configured" if e.price is not None and e.price.source == "config" else "genai-prices"
        out.append(f"Expected cost: ~${e.expected_dollars:,.2f} at the model's {source} prices.")
    out += [f"Ceiling: {len(e.units)} × {e.max_tokens_per_unit:,} = {e.ceiling_tokens:,} tokens at billed weights "
            "(each subagent reports and stops before its max_tokens_per_check)."]
    if e.ceiling_dollars is not None:
        out.append(f"Ceiling in money: ${e.ceiling_dollars:,.2f} (a weighted token costs at most the input price).")
    else:
        out.append("No price known for this model (`prices` in the configuration, or a model genai-prices knows), "
                   "so no money estimate: the cost is unknown, not zero.")
    return "\n".join(out)
