"""Inline suppressions: on or above the cited line, a reason required, listed, and undone by --no-suppressions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_audit.cli import main
from tests.conftest import MakeTree

LOOP = '''\
import json


def run_agent(client, messages, tools):
    for turn in range(10):
        reply = client.chat.completions.create(model="m", messages=messages, tools=tools)
        for call in reply.choices[0].message.tool_calls or []:
            args = json.loads(call.function.arguments){marker}
            messages.append({{"role": "tool", "tool_call_id": call.id, "content": str(tools[call.function.name](**args))}})
'''


def audit_json(root: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict[str, object]]:
    code = main([str(root), "C4", "-o", "-", "--format", "json", "-q", *extra])
    return code, json.loads(capsys.readouterr().out)


def _tree(make_tree: MakeTree, marker: str = "", above: str = "") -> Path:
    text = LOOP.format(marker=marker)
    if above:
        text = text.replace("            args = json.loads", f"            {above}\n            args = json.loads")
    return make_tree({"agent.py": text})


def test_without_a_marker_the_finding_stands(make_tree: MakeTree, capsys: pytest.CaptureFixture[str]) -> None:
    code, rep = audit_json(_tree(make_tree), capsys)
    assert code == 1 and [f["check"] for f in rep["findings"]] == ["C4"]  # type: ignore[index]


@pytest.mark.parametrize(("marker", "above"), [
    ("  # harness-audit: ignore[C4] the gateway validates arguments before they reach us", ""),
    ("", "# harness-audit: ignore[C4] the gateway validates arguments before they reach us"),
    ("", "# harness-audit: ignore[c04,C9] the gateway validates arguments before they reach us"),
    ("  # harness-audit: ignore[C4/unguarded-arguments-decode] the gateway validates arguments before they reach us",
     ""),
])
def test_a_marker_with_a_reason_suppresses_and_is_listed(make_tree: MakeTree, capsys: pytest.CaptureFixture[str],
                                                        marker: str, above: str) -> None:
    root = _tree(make_tree, marker, above)
    code, rep = audit_json(root, capsys)
    assert code == 0 and rep["findings"] == []
    (sup,) = rep["suppressed"]  # type: ignore[misc]
    assert sup["check"] == "C4" and sup["suppression"]["reason"] == "the gateway validates arguments before they reach us"
    assert main([str(root), "C4", "--format", "md", "-o", "-", "-q"]) == 0
    md = capsys.readouterr().out
    assert "## Suppressed (1)" in md and "the gateway validates arguments" in md
    # the claim's identifiers render as code in the table, as everywhere else in the report
    row = next(line for line in md.splitlines() if line.startswith("| C4 | `agent.py:"))
    assert "`json.loads(call.function.arguments)`" in row and "\\`" not in row


def test_no_suppressions_restores_the_finding(make_tree: MakeTree, capsys: pytest.CaptureFixture[str]) -> None:
    root = _tree(make_tree, "  # harness-audit: ignore[C4] trusted upstream")
    code, rep = audit_json(root, capsys, "--no-suppressions")
    assert code == 1 and [f["check"] for f in rep["findings"]] == ["C4"] and rep["suppressed"] == []  # type: ignore[index]
    assert rep["suppressions_applied"] is False


@pytest.mark.parametrize(("marker", "problem"), [
    ("  # harness-audit: ignore[C4]", "gives no reason"),
    ("  # harness-audit: ignore[C44] typo in the id", "'C44'"),
    ("  # harness-audit: ignore[] nothing named", "no check"),
])
def test_a_marker_without_a_reason_or_a_known_id_is_refused(make_tree: MakeTree, capsys: pytest.CaptureFixture[str],
                                                           marker: str, problem: str) -> None:
    code, rep = audit_json(_tree(make_tree, marker), capsys)
    assert code == 1 and [f["check"] for f in rep["findings"]] == ["C4"]  # type: ignore[index]
    assert any(problem in p for p in rep["suppression_problems"])  # type: ignore[union-attr]


def test_a_marker_for_another_check_or_far_above_does_nothing(make_tree: MakeTree,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, rep = audit_json(_tree(make_tree, "  # harness-audit: ignore[C9] not this one"), capsys)
    assert code == 1 and rep["suppressed"] == [] and rep["suppression_problems"] == []
    text = LOOP.format(marker="").replace("    for turn", "    # harness-audit: ignore[C4] too far away\n    x = 1\n"
                                          "    for turn")
    code, rep = audit_json(make_tree({"agent.py": text}), capsys)
    assert code == 1 and rep["suppressed"] == []


def test_typescript_markers_use_slashes(make_tree: MakeTree, capsys: pytest.CaptureFixture[str]) -> None:
    from harness_audit.suppressions import markers_near

    (m,) = markers_near(["  // harness-audit: ignore[C8] batch is all-or-nothing by design", "  await all(x);"], 1, 2)
    assert m.ids == ("C8",) and m.line == 1 and m.reason == "batch is all-or-nothing by design"
