"""The check pages are generated; stale pages fail (run `python scripts/generate_docs.py`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from harness_audit.catalogue import CHECKS
from harness_audit.findings import CheckId

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("generate_docs", ROOT / "scripts" / "generate_docs.py")
assert _spec and _spec.loader
gen = importlib.util.module_from_spec(_spec)
sys.modules["generate_docs"] = gen
_spec.loader.exec_module(gen)


@pytest.mark.parametrize("check", list(CHECKS))
def test_check_page_is_fresh(check: CheckId) -> None:
    page = ROOT / "docs" / "checks" / gen.page_name(check)
    assert page.is_file(), f"missing {page.name}: run python scripts/generate_docs.py"
    assert page.read_text(encoding="utf-8") == gen.render_page(check), \
        f"{page.name} is stale: run python scripts/generate_docs.py"


def test_rule_index_is_fresh() -> None:
    assert gen.RULE_INDEX.read_text(encoding="utf-8") == gen.render_rule_index(), \
        "src/harness_audit/catalogue/rules.txt is stale: run python scripts/generate_docs.py"


def test_guide_exists_and_covers_the_topics() -> None:
    guide = (ROOT / "docs" / "guide.md").read_text(encoding="utf-8")
    for topic in ("## Install", "## First audit", "## Reading the report", "## Configuration", "## CI", "## MCP"):
        assert topic in guide
