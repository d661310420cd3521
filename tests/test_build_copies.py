"""A package that ships one source several times (ESM, CommonJS, a bundle, its `src/`) gets each defect once."""

from __future__ import annotations

from pathlib import Path

from harness_audit.aggregate import fold_build_copies
from harness_audit.api import audit
from tests.conftest import MakeTree

RUNNER = """\
export async function runTools(message, tools) {
  const results = [];
  for (const toolCall of message.tool_calls) {
    const args = JSON.parse(toolCall.function.arguments);
    results.push({ role: "tool", tool_call_id: toolCall.id, content: await tools[toolCall.function.name](args) });
  }
  return results;
}
"""
STEP = """\
export async function step(client, messages, tools) {
  const reply = await client.chat.completions.create({ model: "m", messages });
  messages.push(reply.choices[0].message);
  messages.push(...(await runTools(reply.choices[0].message, tools)));
}
"""
TS_RUNNER = RUNNER.replace("(message, tools)", "(message: any, tools: any)")
CJS_RUNNER = RUNNER.replace("export async", "async") + "exports.runTools = runTools;\n"
OTHER = """\
// a different decoder that happens to quote the same line
export function decodeAll(message) {
  const out = new Map();
  for (const toolCall of message.tool_calls) {
    const args = JSON.parse(toolCall.function.arguments);
    out.set(toolCall.id, args);
  }
  return out;
}
"""


def _c4(root: Path, tmp_path: Path) -> list[tuple[str, int, tuple[str, ...]]]:
    rep = audit(root, ["C4"], overrides={"output_dir": str(tmp_path / "out"), "cache": False, "exclude_paths": []},
                write=False).report
    return sorted((f.file or "", f.line or 0, f.also_at) for f in rep.findings)


def test_builds_of_one_source_are_one_finding_with_every_copy_listed(make_tree: MakeTree, tmp_path: Path) -> None:
    root = make_tree({
        "src/agent.ts": TS_RUNNER + STEP,
        "dist/esm/agent.js": RUNNER + STEP,
        "dist/cjs/agent.cjs": '"use strict";\n' + CJS_RUNNER + STEP.replace("export async", "async"),
        # a bundle: other modules first, the runner further down, under another file name
        "dist/index.cjs": "const version = '1.0.0';\nfunction hello() { return version; }\n\n" + CJS_RUNNER,
        "other/decode.js": OTHER,
    })
    found = _c4(root, tmp_path)
    assert found == [
        ("other/decode.js", 5, ()),
        ("src/agent.ts", 4, ("dist/cjs/agent.cjs:5", "dist/esm/agent.js:4", "dist/index.cjs:7")),
    ]


def test_two_sites_in_one_file_stay_two_findings(make_tree: MakeTree, tmp_path: Path) -> None:
    twice = RUNNER + RUNNER.replace("runTools", "runMoreTools")
    root = make_tree({"dist/esm/agent.js": twice, "dist/cjs/agent.js": twice})
    found = _c4(root, tmp_path)
    assert [(f, n) for f, n, _ in found] == [("dist/esm/agent.js", 4), ("dist/esm/agent.js", 12)]
    assert [a for _, _, a in found] == [("dist/cjs/agent.js:4",), ("dist/cjs/agent.js:12",)]


def test_python_findings_and_no_context_reader_fold_nothing_else() -> None:
    assert fold_build_copies([], None) == []


def test_two_source_files_that_repeat_each_other_are_not_folded(make_tree: MakeTree, tmp_path: Path) -> None:
    root = make_tree({"src/a.js": RUNNER, "src/b.js": RUNNER})
    assert _c4(root, tmp_path) == [("src/a.js", 4, ()), ("src/b.js", 4, ())]
