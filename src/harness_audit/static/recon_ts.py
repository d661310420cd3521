"""Static recon for TypeScript/JavaScript: the eleven landmark kinds from tree-sitter trees."""

from __future__ import annotations

from collections.abc import Iterator

from harness_audit.findings import LandmarkCandidate
from harness_audit.static.lang.typescript import TsProject


def find_ts_landmarks(project: TsProject) -> Iterator[LandmarkCandidate]:
    """Landmark candidates of every TS/JS module (filled in by the recon work of issue 4)."""
    return iter(())
