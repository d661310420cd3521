"""`--estimate`: what a model run would do and the most it could spend, without any request.

Landmarks come from static recon (a preview: with `engine = llm` the recon subagent may find more).
The ceiling is exact arithmetic over the enforced budgets: every unit stops at the first request
that reaches `max_tokens_per_check`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness_audit.catalogue import CHECKS
from harness_audit.config import AuditConfig
from harness_audit.findings import CheckId, Landmark
from harness_audit.leads import gate_leads, lead_id
from harness_audit.llm.prompts import check_task, system_prompt, tool_schemas

_CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class PlannedUnit:
    """One subagent the run would start."""

    unit: str
    landmarks: tuple[Landmark, ...]
    task_tokens: int
    note: str = ""


@dataclass(frozen=True, slots=True)
class Estimate:
    """The plan and its ceiling."""

    engine: str
    model: str | None
    units: tuple[PlannedUnit, ...]
    prefix_tokens: int
    max_tokens_per_unit: int
    price_per_million: float | None

    @property
    def ceiling_tokens(self) -> int:
        return len(self.units) * self.max_tokens_per_unit

    @property
    def ceiling_dollars(self) -> float | None:
        if self.price_per_million is None:
            return None
        return self.ceiling_tokens * self.price_per_million / 1e6


def estimate(root: Path, checks: Sequence[CheckId], config: AuditConfig) -> Estimate:
    """Plan the model run of `checks` on `root` from static recon; spends nothing."""
    from harness_audit.pipeline import STATIC_LANGUAGES, gate_landmarks, output_dir_of, run_static
    from harness_audit.workspace import Workspace

    ws = Workspace.open(root, excludes=config.excludes, max_file_bytes=config.max_file_bytes)
    discovery = ws.discover(STATIC_LANGUAGES)
    static, _, _, _ = run_static(ws, discovery, checks, output_dir_of(ws, config), config, config.cache)
    landmarks = gate_landmarks(ws, checks, static.landmarks, [])
    found = {lm.kind for lm in landmarks}
    units: list[PlannedUnit] = []
    needs_recon = config.engine == "llm" or any(k not in found for c in checks for k in CHECKS[c].requires)
    if needs_recon:
        units.append(PlannedUnit("recon", (), 0, "model recon" if config.engine == "llm" else "for missing kinds"))
    for check in checks:
        spec = CHECKS[check]
        missing = [k.value for k in spec.requires if k not in found]
        wanted = set(spec.requires) | set(spec.also_useful)
        mine = tuple(lm for lm in landmarks if lm.kind in wanted)
        numbered = [(lead_id(check, i), c) for i, c in enumerate(static.candidates.get(check, []), start=1)]
        leads = gate_leads(ws, checks, {check: numbered}, []).get(check, []) if config.engine == "hybrid" else []
        task = check_task(check, landmarks, leads)
        note = f"runs if recon finds {', '.join(missing)}" if missing else ""
        units.append(PlannedUnit(check.value, mine, len(task) // _CHARS_PER_TOKEN, note))
    prefix = len(system_prompt()) + sum(len(n) + len(d) + len(s) for n, d, s in tool_schemas())
    price = config.prices.get(config.model or "")
    return Estimate(engine=config.engine, model=config.model, units=tuple(units),
                    prefix_tokens=prefix // _CHARS_PER_TOKEN, max_tokens_per_unit=config.max_tokens_per_check,
                    price_per_million=None if price is None else max(price.input, price.output))


def render_estimate(e: Estimate) -> str:
    """Plain text for the terminal."""
    out = [f"Plan for engine {e.engine} with model {e.model or '(none set)'}: {len(e.units)} subagents, no request made.",
           f"Shared prefix (system prompt + tools): ~{e.prefix_tokens:,} tokens, identical for every subagent.", ""]
    for u in e.units:
        kinds = sorted({lm.kind.value for lm in u.landmarks})
        where = f"{len(u.landmarks)} landmarks ({', '.join(kinds)})" if u.landmarks else "no landmarks yet"
        task = f", task ~{u.task_tokens:,} tokens" if u.task_tokens else ""
        out.append(f"  {u.unit:>5}: {where}{task}" + (f" — {u.note}" if u.note else ""))
    out += ["", f"Ceiling: {len(e.units)} × {e.max_tokens_per_unit:,} = {e.ceiling_tokens:,} tokens "
            "(each subagent stops at the first request that reaches its max_tokens_per_check)."]
    if e.ceiling_dollars is not None:
        out.append(f"Ceiling in money: ${e.ceiling_dollars:,.2f} at the model's highest configured price per token.")
    else:
        out.append("No price configured for this model (`prices` in the configuration), so no money ceiling.")
    return "\n".join(out)
