"""The pipeline end to end on the bundled example: coverage, gate, cache, our own code."""

from __future__ import annotations

from pathlib import Path

from harness_audit.api import audit
from harness_audit.findings import Candidate, CheckId, Finding, OutcomeStatus
from harness_audit.gate import GateContext, validate
from harness_audit.workspace import Workspace
from tests.conftest import MakeTree

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "agent_loop"


def revalidate(root: Path, findings: tuple[Finding, ...], checks: tuple[CheckId, ...]) -> list[object]:
    """Feed every reported finding back through the gate; returns whatever is not accepted again."""
    ws = Workspace.open(root)
    ctx = GateContext(workspace=ws, checks_in_run=checks)
    bad: list[object] = []
    for f in findings:
        again = validate(Candidate(check=f.check, verdict=f.verdict, file=f.file, line=f.line, evidence=f.evidence,
                                   claim=f.claim, consequence=f.consequence, confirm_hint=f.confirm_hint,
                                   source=f.source), ctx)
        if not isinstance(again, Finding) or again.line != f.line:
            bad.append(again)
    return bad


def test_example_audit_finds_defects_that_revalidate(tmp_path: Path) -> None:
    run = audit(EXAMPLE, ["all"], overrides={"output_dir": str(tmp_path), "cache": False})
    rep = run.report
    assert {f.check for f in rep.findings} >= {CheckId.C1, CheckId.C12}
    assert not revalidate(EXAMPLE, rep.findings, tuple(CheckId))
    assert [p.suffix for p in run.paths] == [".md", ".json", ".sarif"]
    assert all(o.status in (OutcomeStatus.RAN, OutcomeStatus.NOT_COVERED) for o in rep.outcomes)


def test_missing_landmark_means_not_covered_and_no_rule_runs(make_tree: MakeTree, tmp_path: Path) -> None:
    root = make_tree({"m.py": "import json\n\ndef f(s):\n    return json.loads(s)\n"})
    rep = audit(root, ["C1", "C13"], overrides={"output_dir": str(tmp_path)}, write=False).report
    by = {o.check: o for o in rep.outcomes}
    assert by[CheckId.C1].status is OutcomeStatus.NOT_COVERED
    assert [k.value for k in by[CheckId.C13].missing_landmarks] == ["truncation"]
    assert rep.findings == ()


def test_warm_run_hits_the_cache_and_an_edit_invalidates_it(make_tree: MakeTree, tmp_path: Path) -> None:
    root = make_tree({"agent/loop.py": (EXAMPLE / "agent" / "loop.py").read_text(),
                      "agent/tools.py": (EXAMPLE / "agent" / "tools.py").read_text()})
    over = {"output_dir": str(tmp_path / "out")}
    cold = audit(root, ["all"], overrides=over, write=False).report
    warm = audit(root, ["all"], overrides=over, write=False).report
    assert not cold.meta.cache_hit and warm.meta.cache_hit
    assert [f.fingerprint for f in warm.findings] == [f.fingerprint for f in cold.findings]
    with (root / "agent" / "loop.py").open("a") as fh:
        fh.write("\n# edited\n")
    assert not audit(root, ["all"], overrides=over, write=False).report.meta.cache_hit


def test_self_audit_of_our_own_source_completes(tmp_path: Path) -> None:
    rep = audit(ROOT / "src", ["all"], overrides={"output_dir": str(tmp_path), "cache": False}, write=False).report
    assert rep.meta.state == "complete"
    assert not revalidate(ROOT / "src", rep.findings, tuple(CheckId))
    explained = (ROOT / "docs" / "self-audit.md").read_text(encoding="utf-8")
    unexplained = [f"{f.check} {f.file}:{f.line} {f.fingerprint}" for f in rep.findings if f.fingerprint not in explained]
    assert not unexplained, f"fix these or explain them in docs/self-audit.md: {unexplained}"


def test_no_static_finding_is_reported_in_example_code(make_tree: MakeTree, tmp_path: Path) -> None:
    """Risk: a demo script's shortcut (an `examples/` or `demo/` folder) reported as the harness's defect
    (review 5: four to nine of fifty-five findings sat in example folders); an audit pointed at the example
    itself still audits it."""
    loop = (EXAMPLE / "agent" / "loop.py").read_text()
    tools = (EXAMPLE / "agent" / "tools.py").read_text()
    root = make_tree({"agent/loop.py": loop, "agent/tools.py": tools, "examples/chat/loop.py": loop,
                      "examples/chat/tools.py": tools, "demo/tools.py": tools, "samples/loop.py": loop,
                      "evaluation/benchmarks/run.py": loop, ".github/scripts/tools.py": tools,
                      "scripts/benchmark/run.py": loop,
                      "guides/chat/loop.py": loop, "playground/tools.py": tools, "templates/app/tools.py": tools})
    for preview in (False, True):
        rep = audit(root, ["all"], overrides={"output_dir": str(tmp_path), "preview": preview}, write=False).report
        assert rep.findings, "the harness's own copy should still be audited"
        assert {f.file for f in rep.findings} <= {"agent/loop.py", "agent/tools.py"}
        inside = audit(root / "examples" / "chat", ["all"], overrides={"output_dir": str(tmp_path), "preview": preview},
                       write=False).report
        assert {(f.check, f.file) for f in inside.findings} == {(f.check, f.file.split("/")[-1])
                                                                 for f in rep.findings if f.file}


_PAGE_FETCH = """export async function loadModels(): Promise<string[]> {
  const res = await fetch("/api/models");
  if (!res.ok) {
    throw new Error(`listing models failed: ${res.status}`);
  }
  return (await res.json()) as string[];
}
"""

_CLIENT_TOOLS = """export async function runClientTool(call: { name: string; args: string }, tools: Record<string, any>) {
  try {
    const args = JSON.parse(call.args);
    return await tools[call.name].execute(args);
  } catch (err) {
    return `Error: ${err}`;
  }
}
"""


_STOP_PANEL = ROOT / "tests" / "fixtures" / "rules" / "c10_cancellation" / "typescript" / "defect_chat_panel_stop.tsx"


def test_view_modules_are_not_the_harness_unless_they_run_it(make_tree: MakeTree, tmp_path: Path) -> None:
    """Risk: a page's fetch helper or a React hook's state read as the harness (blind reviews 5, 6, 11 and 12: 12
    of 13 findings in modules importing React were false). A module that imports React but runs tools itself (a
    chat hook executing tools in the browser) is still audited, and so is the same code without React; a view's
    own C1 and C10 defects (a stop button whose controller never reaches the request) are still reported."""
    react = 'import { useState } from "react";\n\n'
    root = make_tree({"app/models.ts": react + _PAGE_FETCH, "lib/models.ts": _PAGE_FETCH,
                      "app/tools.tsx": react + _CLIENT_TOOLS, "lib/tools.ts": _CLIENT_TOOLS,
                      "app/page.tsx": '"use client";\n' + _PAGE_FETCH, "app/panel.tsx": _STOP_PANEL.read_text(),
                      "agent/loop.py": (EXAMPLE / "agent" / "loop.py").read_text(),  # a loop: C10 needs one
                      "agent/tools.py": (EXAMPLE / "agent" / "tools.py").read_text()})
    for preview in (False, True):
        rep = audit(root, ["all"], overrides={"output_dir": str(tmp_path), "preview": preview}, write=False).report
        files = {f.file for f in rep.findings}
        assert "lib/models.ts" in files and "lib/tools.ts" in files, files
        assert "app/models.ts" not in files and "app/page.tsx" not in files, files
        assert "app/tools.tsx" in files, files
        assert ("C10", "app/panel.tsx") in {(f.check, f.file) for f in rep.findings}, "a stop that does not stop"


def test_recon_guesses_of_the_agent_loop_rank_below_the_roles_where_the_roles_found_one(make_tree: MakeTree,
                                                                                      tmp_path: Path) -> None:
    """Risk: recon's name-and-shape guesses of the agent loop were listed first beside the roles' (blind reviews:
    6 of 34 guesses true, 16 of 23 of the roles' own), so a host read a batch loop as the harness's loop. With
    the semantic layer's turn located they stay listed (a guess may be the right one), with low confidence."""
    loop = (EXAMPLE / "agent" / "loop.py").read_text()
    batch = ("from openai import OpenAI\n\nclient = OpenAI()\n\n\ndef summarise_all(docs):\n    out = []\n"
             "    for doc in docs:\n        out.append(client.chat.completions.create(model='m', messages=[doc]))\n"
             "    return out\n")
    root = make_tree({"agent/loop.py": loop, "agent/tools.py": (EXAMPLE / "agent" / "tools.py").read_text(),
                      "agent/batch.py": batch})
    for preview in (False, True):
        rep = audit(root, ["C12"], overrides={"output_dir": str(tmp_path), "preview": preview}, write=False).report
        loops = {(lm.file, lm.source): lm.confidence for lm in rep.landmarks if lm.kind == "agent-loop"}
        assert loops[("agent/batch.py", "static:recon")] == ("low" if preview else "high"), loops
        assert ("agent/loop.py", "static:roles") in loops if preview else True


def test_no_static_finding_is_reported_in_test_code(make_tree: MakeTree, tmp_path: Path) -> None:
    """Risk: a test's fake model or fixture (a `tests/` folder, `*.test.ts`, `test_*.py`) reported as the harness's
    defect (review 3: six of forty findings sat in test files)."""
    loop = (EXAMPLE / "agent" / "loop.py").read_text()
    tools = (EXAMPLE / "agent" / "tools.py").read_text()
    root = make_tree({"agent/loop.py": loop, "agent/tools.py": tools, "tests/agent/loop.py": loop,
                      "tests/agent/tools.py": tools, "agent/test_loop.py": loop})
    for preview in (False, True):
        rep = audit(root, ["all"], overrides={"output_dir": str(tmp_path), "preview": preview}, write=False).report
        assert rep.findings, "the harness's own copy should still be audited"
        assert {f.file for f in rep.findings} <= {"agent/loop.py", "agent/tools.py"}


def test_test_file_names() -> None:
    """Risk: a type-test file (`types.test-d.ts`) or an `integration-tests/` folder (openai-agents-js: six `run()`
    calls read as agent loops) listed among a check's landmarks as the harness's own code."""
    from harness_audit.static import is_test_file

    for name in ("tests/loop.py", "agent/test_loop.py", "agent/loop_test.py", "src/a.test.ts", "src/a.spec.mjs",
                 "src/types.test-d.ts", "src/a.vitest.ts", "src/__tests__/a.ts", "integration-tests/deno/aisdk.ts",
                 "pkg/unit_tests/a.py", "smoke-test/run.mjs"):
        assert is_test_file(name), name
    for name in ("agent/loop.py", "src/testing_utils.ts", "src/contest.py", "src/latest.ts",
                 "pkg/integrations/openai.py", "contests/a.py"):
        assert not is_test_file(name), name
