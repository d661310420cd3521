"""The hostile suite prints how many inputs it tried per family at the end of the session."""

from __future__ import annotations

import pytest

from tests.hostile.runner import FAMILIES, TRIED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line: inputs tried per family and in all (printed whenever any hostile test ran)."""
    if not TRIED:
        return
    per_family = ", ".join(f"{family} {TRIED[family]}" for family in FAMILIES)
    terminalreporter.write_line(f"hostile inputs tried: {per_family}; total {sum(TRIED.values())}")
