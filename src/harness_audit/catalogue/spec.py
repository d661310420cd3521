"""The shape of one check's entry in the catalogue."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from harness_audit.findings import CheckId, LandmarkKind


class Group(IntEnum):
    """The six groups, in report order."""

    STATE = 1
    UNTRUSTED_INPUT = 2
    FAILURE = 3
    BOUNDARIES = 4
    RESOURCES = 5
    OBSERVABILITY = 6

    @property
    def title(self) -> str:
        """The group's heading in reports."""
        return _GROUP_TITLES[self]


_GROUP_TITLES = {
    Group.STATE: "State stays self-consistent",
    Group.UNTRUSTED_INPUT: "Untrusted input is treated as untrusted",
    Group.FAILURE: "Failure is a first-class outcome",
    Group.BOUNDARIES: "Boundaries can be closed",
    Group.RESOURCES: "Finite resources are accounted for",
    Group.OBSERVABILITY: "The run is observable",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckSpec:
    """One check: identity, place in the report, what it needs from recon, and its glosses."""

    id: CheckId
    """`C1`…`C15`."""
    stem: str
    """Module, criteria-file and fixture-directory name, e.g. `c08_partial_success`."""
    title: str
    """Human title, e.g. "Partial success"."""
    group: Group
    """Report group."""
    priority: int
    """1 for the seven `p1` checks, else 2."""
    requires: tuple[LandmarkKind, ...]
    """Landmarks without which the check is not covered."""
    also_useful: tuple[LandmarkKind, ...]
    """Landmarks handed to the unit as context."""
    gloss_en: str
    """One plain-language line in English."""
    gloss_zh: str
    """One plain-language line in Chinese."""

    def gloss(self, language: str) -> str:
        """The gloss in `zh` or `en`; `auto` follows the locale (`LANG`, `LC_ALL`)."""
        if language == "auto":
            import os

            locale = os.environ.get("LC_ALL") or os.environ.get("LANG") or ""
            language = "zh" if locale.lower().startswith("zh") else "en"
        return self.gloss_zh if language == "zh" else self.gloss_en

    @property
    def slug(self) -> str:
        """Kebab-case name for docs pages and SARIF rule names."""
        return self.stem.split("_", 1)[1].replace("_", "-")
