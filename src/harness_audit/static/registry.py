"""The boring registry: `@rule` records a rule function with its check, language and name."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness_audit.findings import CheckId, Language, Verdict
from harness_audit.static.lang.python import PyModule, PyProject

if TYPE_CHECKING:
    from tree_sitter import Node

    from harness_audit.static.lang.typescript import TsModule


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    """What a rule yields: where the defect is and what to say about it."""

    node: ast.AST | Node | None = None
    """The node at fault (a Python `ast` node or a tree-sitter node); its first line is cited and quoted."""
    line: int | None = None
    """A line to cite instead of a node."""
    module: PyModule | TsModule | None = None
    """The module the node is in, when it is not the module the rule was run on."""
    verdict: Verdict = Verdict.CONFIRMED
    """`confirmed` when the defect is unambiguous, `suspected` otherwise."""
    claim: str
    """One sentence: what is wrong here."""
    consequence: str
    """What a user of the harness sees because of it."""
    direction: str
    """How to fix it."""
    confirm_hint: str = ""
    """For `suspected`: exactly what a human must verify."""
    evidence: str | None = None
    """Override of the quoted excerpt (defaults to the cited line(s))."""


PyRuleFunc = Callable[[PyModule, PyProject], Iterable[Hit]]
RuleFunc = Callable[[Any, Any], Iterable[Hit]]
"""`(PyModule, PyProject)` for Python rules, `(TsModule, TsProject)` for TypeScript/JavaScript rules."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A registered static rule."""

    check: CheckId
    """The check it reports against."""
    name: str
    """Kebab-case, names the defect (reads as "allow ‹name›")."""
    lang: Language
    """The language it analyses."""
    func: RuleFunc
    """The rule body."""

    @property
    def rule_id(self) -> str:
        """`C8/parallel-batch-all-or-nothing`."""
        return f"{self.check}/{self.name}"

    @property
    def doc(self) -> str:
        """The rule's docstring: what it flags and why."""
        return inspect.cleandoc(self.func.__doc__ or "")


RULES: list[Rule] = []
"""Every registered rule, in registration order."""


def rule(check: CheckId, *, lang: Language, name: str) -> Callable[[RuleFunc], RuleFunc]:
    """Register a rule function for `check` in `lang` under `name`.

    A TypeScript rule (`lang="typescript"`) runs on every TS and JS module; its name must differ from the
    Python rules' names of the same check.
    """

    def register(func: RuleFunc) -> RuleFunc:
        if any(r.check == check and r.name == name for r in RULES):
            raise ValueError(f"duplicate rule name {check}/{name}")
        RULES.append(Rule(check, name, lang, func))
        return func

    return register


def rules_for(checks: Iterable[CheckId], lang: Language) -> Iterator[Rule]:
    """Registered rules for these checks and this language."""
    wanted = set(checks)
    _load_rules(lang)
    return (r for r in RULES if r.check in wanted and r.lang == lang)


def load_rules(lang: Language) -> None:
    """Import (and so register) the rule modules of `lang` now, rather than at the first `rules_for`."""
    _load_rules(lang)


def all_rules() -> list[Rule]:
    """Every rule, after importing the rule modules."""
    _load_rules()
    return list(RULES)


def _load_rules(lang: Language | None = None) -> None:
    # only the rule modules of the language asked for (all when None): an audit of Python code does not pay
    # for compiling the TypeScript rules, nor the other way round
    if lang in (None, "python"):
        import harness_audit.static.rules  # noqa: F401  # importing registers the rules
    if lang in (None, "typescript", "javascript"):
        import harness_audit.static.rules_ts  # noqa: F401
