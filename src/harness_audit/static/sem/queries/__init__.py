"""Checks as small queries over the semantic layer: one module per check, language-neutral.

A query is a generator over a `Context` (facts, summaries, roles) that yields `Report`s. It names the
defect in the layer's vocabulary — roles, effects, stores — and never re-detects what a model call, a
tool loop or a history store is. Exemptions are facts about the site.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from harness_audit.findings import CheckId, Verdict
from harness_audit.static.sem import ir
from harness_audit.static.sem.facts import Facts
from harness_audit.static.sem.roles import Roles, Site
from harness_audit.static.sem.summaries import Summaries


@dataclass(frozen=True, slots=True)
class Context:
    """What every query reads."""

    facts: Facts
    sums: Summaries
    roles: Roles


@dataclass(frozen=True, slots=True, kw_only=True)
class Report:
    """A query's finding: where the defect originates, what to say, and the other sites it involves."""

    site: Site
    claim: str
    consequence: str
    direction: str
    verdict: Verdict = Verdict.CONFIRMED
    confirm_hint: str = ""
    also_at: tuple[Site, ...] = ()
    end: int | None = None
    """Last line of the cited construct, when the excerpt may need more than the first line."""


QueryFunc = Callable[[Context], Iterable[Report]]


@dataclass(frozen=True, slots=True)
class Query:
    """A registered query."""

    check: CheckId
    name: str
    func: QueryFunc
    langs: frozenset[str] = field(default_factory=lambda: frozenset({"python", "typescript", "javascript"}))

    @property
    def rule_id(self) -> str:
        return f"{self.check}/{self.name}"


QUERIES: list[Query] = []


def query(check: CheckId, *, name: str) -> Callable[[QueryFunc], QueryFunc]:
    """Register a query for `check` under `name` (kebab-case, names the defect)."""

    def register(func: QueryFunc) -> QueryFunc:
        if any(q.check == check and q.name == name for q in QUERIES):
            raise ValueError(f"duplicate query {check}/{name}")
        QUERIES.append(Query(check, name, func))
        return func

    return register


def queries_for(checks: Iterable[CheckId]) -> Iterator[Query]:
    """The registered queries of these checks (importing the query modules first)."""
    from harness_audit.static.sem.queries import catalogue  # noqa: F401  # importing registers them

    wanted = set(checks)
    return (q for q in QUERIES if q.check in wanted)


def first_line(site: Site) -> tuple[str, int]:
    """(path, line) of a site."""
    return site.fn.module.path, site.node.line


def in_nodes(nodes: Iterable[ir.Node], kind: type[ir.Node]) -> Iterator[ir.Node]:
    """Nodes of one kind among `nodes` and below them."""
    for n in nodes:
        for sub in ir.walk(n):
            if isinstance(sub, kind):
                yield sub
