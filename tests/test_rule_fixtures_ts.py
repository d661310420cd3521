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


# A parse helper method whose only production caller catches: the calls a test file makes without a `try` are not a
# path a run takes (the shape of a reviewed false positive). The same project with the production caller unguarded
# stays a finding.
_JSON_CLIENT = """\
export class LocalJsonClient {
  constructor(private readonly models: { generate(req: object): Promise<{ text?: string }> }) {}

  async generateJson(prompt: string): Promise<Record<string, unknown>> {
    try {
      const reply = await this.models.generate({ prompt, responseMimeType: "application/json" });
      return JSON.parse(reply.text ?? "");
    } catch (error) {
      console.error("local model failed", error);
      throw error;
    }
  }
}
"""
_JSON_ROUTER = """\
import { LocalJsonClient } from "./client";

export async function route(client: LocalJsonClient, prompt: string): Promise<string> {
  try {
    const answer = await client.generateJson(prompt);
    return String(answer.model ?? "default");
  } catch {
    return "default";
  }
}
"""
_JSON_CLIENT_TEST = """\
import { LocalJsonClient } from "./client";

it("parses", async () => {
  const client = new LocalJsonClient({ generate: async () => ({ text: "{}" }) });
  expect(await client.generateJson("hi")).toEqual({});
});
"""


@pytest.mark.parametrize(("router", "expected"), [(_JSON_ROUTER, set()),
                                                  (_JSON_ROUTER.replace("try {", "{").replace("catch {", "if (0) {"),
                                                   {("src/client.ts", 7)})])
def test_parse_helper_called_bare_only_from_tests(router: str, expected: set[tuple[str, int]]) -> None:
    files = {"src/client.ts": _JSON_CLIENT, "src/router.ts": router, "src/client.test.ts": _JSON_CLIENT_TEST}
    project = TsProject({p: TsModule.parse(p, s) for p, s in files.items()})
    candidates, errors = run_ts_rules(TsParsed(project, (), ()), (CheckId.C4,))
    assert not errors, errors
    found = {(c.file, c.line) for cands in candidates.values() for c in cands
             if c.source.endswith("tool-arguments-parse-unguarded")}
    assert found == expected
