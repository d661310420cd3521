"""Every rule fixture, run through the static engine AND the gate, compared with its markers both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_audit.catalogue import CHECKS
from harness_audit.findings import CheckId, Finding
from harness_audit.gate import GateContext, validate
from harness_audit.static import ParsedProject, run_rules
from harness_audit.static.lang.python import PyModule, PyProject
from harness_audit.workspace import Workspace
from tests.markers import MarkedFile, parse_markers

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
_STEMS = {spec.stem: check for check, spec in CHECKS.items()}
FILES = sorted(p for p in FIXTURES.glob("*/python/*.py") if p.name.startswith(("defect_", "clean_")))


def test_fixtures_exist() -> None:
    assert FILES, "no rule fixture was collected"
    unknown = {p.parent.parent.name for p in FILES} - set(_STEMS)
    assert not unknown, f"fixture directories that name no check: {unknown}"


def run_fixture(path: Path, checks: tuple[CheckId, ...]) -> list[Finding]:
    """Static engine on one file, every candidate through the gate; refusals fail the test."""
    ws = Workspace.open(path.parent, excludes=())
    mod = PyModule.parse(path.name, path.read_text(encoding="utf-8"))
    result = run_rules(ParsedProject(PyProject({path.name: mod}), ()), checks)
    assert not result.errors, result.errors
    ctx = GateContext(workspace=ws, checks_in_run=checks)
    findings: list[Finding] = []
    for cands in result.candidates.values():
        for cand in cands:
            gated = validate(cand, ctx)
            assert isinstance(gated, Finding), f"the gate refused a static candidate: {gated}"
            findings.append(gated)
    return findings


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_fixture_markers(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    marked = parse_markers(text)
    checks = tuple(CheckId(c) for c in marked.checks) if marked.checks else (_STEMS[path.parent.parent.name],)
    compare_markers(path, text, marked, run_fixture(path, checks))


def compare_markers(path: Path, text: str, marked: MarkedFile, findings: list[Finding]) -> None:
    """Markers and findings must agree both ways (shared by the Python and the TypeScript fixtures)."""
    expects = [m for m in marked.markers if m.kind == "expect"]
    if path.name.startswith("defect_"):
        assert expects, f"{path.name}: a defect fixture without any `expect` marker tests nothing"
    else:
        assert not expects, f"{path.name}: a clean fixture must carry no `expect` marker"
    lines = text.splitlines()
    got = {(str(f.check), f.line): f for f in findings}
    problems: list[str] = []
    for m in marked.markers:
        f = got.get((m.check, m.line))
        src = lines[m.line - 1].strip()
        if m.kind == "expect":
            if f is None:
                problems.append(f"Missing {m.check} at {path.name}:{m.line}: {src}")
            elif m.verdict and str(f.verdict) != m.verdict:
                problems.append(f"Wrong verdict at {path.name}:{m.line}: expected {m.verdict}, got {f.verdict}")
            elif m.rule and not f.source.endswith("/" + m.rule):
                problems.append(f"Wrong rule at {path.name}:{m.line}: expected {m.rule}, got {f.source}")
        elif m.kind == "todo-expect" and f is not None:
            problems.append(f"todo-expect now fires at {path.name}:{m.line}: promote it to `expect`")
        elif m.kind == "todo-expect-not" and f is None:
            problems.append(f"todo-expect-not no longer fires at {path.name}:{m.line}: remove the marker")
        elif m.kind == "expect-not" and f is not None:
            problems.append(f"Noisy {m.check} at {path.name}:{m.line} ({f.source}): {src}")
    allowed = {(m.check, m.line) for m in marked.markers if m.kind in {"expect", "todo-expect-not"}}
    for (check, line), f in sorted(got.items(), key=lambda kv: kv[0][1]):
        if (check, line) not in allowed and not any(m.kind == "expect-not" and (m.check, m.line) == (check, line)
                                                    for m in marked.markers):
            problems.append(f"Noisy {check} at {path.name}:{line} ({f.source}): {lines[line - 1].strip()}")
    assert not problems, "\n".join(problems)
