"""A TS/JS file with syntax errors: analysed as far as tree-sitter recovers, its findings gated, listed as partial."""

from __future__ import annotations

from pathlib import Path

from harness_audit.api import audit
from harness_audit.findings import CheckId
from tests.conftest import MakeTree
from tests.test_pipeline import revalidate

_PROMPT = """\
import Anthropic from "@anthropic-ai/sdk";

const anthropic = new Anthropic();

function buildSystemPrompt(repo: string): string {
  const now = new Date().toISOString();
  return `You are a coding agent for ${repo}. Current time: ${now}`;
}

export async function ask(repo: string, messages: Anthropic.MessageParam[]) {
  return anthropic.messages.create({
    model: "claude-sonnet-4-20250514",
    max_tokens: 4096,
    system: buildSystemPrompt(repo),
    messages,
  });
}
"""

_BROKEN_TAIL = """
export function halfWritten(items: string[] {
  for (const item of items {
    console.log(item
"""


def test_a_broken_file_keeps_its_findings_and_is_listed_as_partially_parsed(make_tree: MakeTree,
                                                                            tmp_path: Path) -> None:
    root = make_tree({"src/agent.ts": _PROMPT + _BROKEN_TAIL, "src/ok.ts": _PROMPT})
    report = audit(root, ["C14"], overrides={"output_dir": str(tmp_path)}, write=False).report
    by_file = {(f.file, f.line) for f in report.findings if f.check is CheckId.C14}
    assert ("src/agent.ts", 6) in by_file, "the part before the syntax error is still analysed"
    assert ("src/ok.ts", 6) in by_file
    assert not revalidate(root, report.findings, (CheckId.C14,))
    notes = {n.path: n.reason for n in report.unparsed_files}
    assert "src/ok.ts" not in notes
    assert notes["src/agent.ts"].startswith("partially parsed: syntax error near line 19"), notes


def test_a_file_that_is_not_code_at_all_never_stops_the_audit(make_tree: MakeTree, tmp_path: Path) -> None:
    root = make_tree({"src/ok.ts": _PROMPT, "src/garbage.js": "\x00\x01 ))) {{{ <<<\n" * 50})
    report = audit(root, ["C14"], overrides={"output_dir": str(tmp_path)}, write=False).report
    assert ("src/ok.ts", 6) in {(f.file, f.line) for f in report.findings}
    assert report.meta.state == "complete"
