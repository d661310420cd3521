"""Every TypeScript/JavaScript rule fixture, through the static engine AND the gate, compared with its markers.

Fixtures live in `tests/fixtures/rules/<check stem>/typescript/{defect_,clean_}*.{ts,tsx,mts,cts,js,jsx,mjs,cjs}`
and carry the same `// expect: C4` markers as the Python ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_audit.catalogue import CHECKS
from harness_audit.findings import CheckId, Finding
from harness_audit.gate import GateContext, validate
from harness_audit.static.lang.typescript import DIALECT_BY_SUFFIX, TsModule, TsProject
from harness_audit.static.ts import TsParsed, run_ts_rules
from harness_audit.workspace import Workspace
from tests.markers import parse_markers
from tests.test_rule_fixtures import compare_markers

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
_STEMS = {spec.stem: check for check, spec in CHECKS.items()}
FILES = sorted(p for p in FIXTURES.glob("*/typescript/*") if p.suffix in DIALECT_BY_SUFFIX
               and p.name.startswith(("defect_", "clean_")))


def run_fixture(path: Path, checks: tuple[CheckId, ...]) -> list[Finding]:
    """TS rules on one file, every candidate through the gate; refusals and crashes fail the test."""
    ws = Workspace.open(path.parent, excludes=())
    mod = TsModule.parse(path.name, path.read_text(encoding="utf-8"))
    candidates, errors = run_ts_rules(TsParsed(TsProject({path.name: mod}), (), ()), checks)
    assert not errors, errors
    ctx = GateContext(workspace=ws, checks_in_run=checks)
    findings: list[Finding] = []
    for cands in candidates.values():
        for cand in cands:
            gated = validate(cand, ctx)
            assert isinstance(gated, Finding), f"the gate refused a static candidate: {gated}"
            findings.append(gated)
    return findings


@pytest.mark.skipif(not FILES, reason="no TypeScript fixture yet")
@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_ts_fixture_markers(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    marked = parse_markers(text)
    checks = tuple(CheckId(c) for c in marked.checks) if marked.checks else (_STEMS[path.parent.parent.name],)
    compare_markers(path, text, marked, run_fixture(path, checks))
