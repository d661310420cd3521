"""Every semantic query against its fixture pairs: each `# expect: Cn` line is reported, nothing else is, and
every clean twin stays silent (strict both ways). One fixture is one workspace, audited alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness_audit.findings import CheckId
from harness_audit.static.sem.engine import SemProject, run_queries
from harness_audit.static.sem.queries import QUERIES, queries_for
from harness_audit.workspace import Workspace
from tests.markers import parse_markers

FIXTURES = Path(__file__).parent.parent / "fixtures" / "sem"
FILES = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".py", ".ts", ".js", ".mjs"))


def _check_of(path: Path) -> CheckId:
    return CheckId(f"C{int(path.parent.name[1:])}")


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_fixture(path: Path, tmp_path: Path) -> None:
    check = _check_of(path)
    shutil.copy(path, tmp_path / path.name)
    ws = Workspace(tmp_path)
    project = SemProject.build(ws, ws.discover().files)
    candidates, errors = run_queries(project, [check])
    assert not errors
    found = sorted({c.line for c in candidates[check]})
    expected = sorted(m.line for m in parse_markers(path.read_text()).markers if m.kind == "expect")
    assert found == expected, [(c.line, c.source, c.evidence) for c in candidates[check]]
    for c in candidates[check]:
        assert c.evidence.strip(), "every candidate quotes the cited code"


def test_every_query_has_a_defect_and_a_clean_fixture() -> None:
    """Risk: a query without a silent twin has never been shown to stay quiet on the correct shape."""
    list(queries_for(list(CheckId)))
    checks = {q.check for q in QUERIES}
    for check in checks:
        folder = FIXTURES / f"c{check.number:02d}"
        names = [p.name for p in folder.iterdir()] if folder.is_dir() else []
        assert any(n.startswith("defect_") for n in names), check
        assert any(n.startswith("clean_") for n in names), check
    defects = {p.stem.removeprefix("defect_") + p.suffix for p in FILES if p.name.startswith("defect_")}
    cleans = {p.stem.removeprefix("clean_") + p.suffix for p in FILES if p.name.startswith("clean_")}
    assert defects == cleans, defects ^ cleans
