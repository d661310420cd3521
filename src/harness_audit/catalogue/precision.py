"""Measured precision of each static rule, and the floor below which its findings are withheld.

Every few releases, findings are drawn at random from audits of packages never used for tuning and judged true or
false by reviewers who read the code and did not write the rules (`benchmarks/precision/reviews.json`). A rule's
precision is estimated from its own verdicts, shrunk toward its check's (and a check's toward one half), so that a
rule judged once is not called perfect or useless on one verdict and a rule never judged takes its check's record:

    check = (true_c + W x 1/2) / (judged_c + W)        rule = (true_r + W x check) / (judged_r + W)

with W = `PRIOR_WEIGHT`. The estimate sets a tier (`low` below `MEDIUM`, `high` from `HIGH`), as CodeQL's queries
carry a precision that decides which suites run them. Findings of rules below the audit's `min_precision`
(`--min-precision medium`) are withheld: listed in every report with their rule's record, not counted, not in the
exit code. The default, `low`, reports every rule, because on real bug-fix history the rules rated low find bugs
the others miss (benchmarks/README.md, "Precision floor"). Only static rules are rated: a model's finding, a trace's or
a host's is never withheld. The counts are generated (`scripts/precision_table.py`); a test fails while stale.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources

__all__ = ["HIGH", "MEDIUM", "PRIOR_WEIGHT", "RulePrecision", "Tier", "rated_rules", "rule_of", "rule_precision",
           "withholds"]

PRIOR_WEIGHT = 2.0
"""How many verdicts the prior counts for (a rule's own record outweighs its check's from three verdicts on)."""
MEDIUM = 0.35
"""Estimates from this are `medium`; below it, `low`."""
HIGH = 0.6
"""Estimates from this are `high`."""


class Tier(StrEnum):
    """A rule's precision tier, from its estimate."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        return _RANK[self]


_RANK = {Tier.LOW: 0, Tier.MEDIUM: 1, Tier.HIGH: 2}


@dataclass(frozen=True, slots=True, kw_only=True)
class RulePrecision:
    """What the reviews say about one rule."""

    rule: str
    """`C13/history-cut-without-pairing`."""
    true: int
    """Its findings judged true."""
    judged: int
    """Its findings judged at all (0: the estimate is its check's)."""
    check_true: int
    """Its check's findings judged true, over every rule of the check."""
    check_judged: int
    """Its check's findings judged."""
    estimate: float
    """The shrunk estimate (see the module docstring)."""

    @property
    def percent(self) -> str:
        """The estimate in whole percent, rounded down so that it never reads as the tier above (34.8% → `34%`)."""
        return f"{math.floor(self.estimate * 100)}%"

    @property
    def tier(self) -> Tier:
        return Tier.HIGH if self.estimate >= HIGH else Tier.MEDIUM if self.estimate >= MEDIUM else Tier.LOW


@cache
def _table() -> tuple[dict[str, tuple[int, int]], dict[str, tuple[int, int]]]:
    """(check → (true, judged), rule → (true, judged)) from the generated `precision.json`."""
    raw = json.loads(resources.files("harness_audit.catalogue").joinpath("precision.json").read_text(encoding="utf-8"))
    checks = {c: (int(v["true"]), int(v["judged"])) for c, v in raw["checks"].items()}
    rules = {r: (int(v["true"]), int(v["judged"])) for r, v in raw["rules"].items()}
    return checks, rules


def rated_rules() -> list[str]:
    """Every rule with at least one counted verdict, sorted."""
    return sorted(_table()[1])


def rule_of(source: str) -> str | None:
    """The rule id of a finding's `source` (`static:C8/x` → `C8/x`); None for a finding no static rule made."""
    kind, _, rule = source.partition(":")
    return rule if kind == "static" and "/" in rule else None


def rule_precision(rule: str) -> RulePrecision:
    """The reviews' record of `rule` (`C8/name`) and its estimate."""
    checks, rules = _table()
    check = rule.split("/", 1)[0]
    ct, cn = checks.get(check, (0, 0))
    rt, rn = rules.get(rule, (0, 0))
    prior = (ct + PRIOR_WEIGHT * 0.5) / (cn + PRIOR_WEIGHT)
    return RulePrecision(rule=rule, true=rt, judged=rn, check_true=ct, check_judged=cn,
                         estimate=(rt + PRIOR_WEIGHT * prior) / (rn + PRIOR_WEIGHT))


def withholds(source: str, min_precision: Tier) -> RulePrecision | None:
    """The record that withholds a finding of `source` under `min_precision`, or None when it is reported."""
    rule = rule_of(source)
    if rule is None or min_precision is Tier.LOW:
        return None
    p = rule_precision(rule)
    return p if p.tier.rank < min_precision.rank else None
