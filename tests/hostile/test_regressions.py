"""Issue 14: each hostile input the issue names, reproduced exactly, with the behaviour it must have now.

The generated inputs of the same families live beside this file (`test_*_family.py`); these are the named cases.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_audit.cli import main

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "agent_loop"
LOOP = "def run(client, messages):\n    while True:\n        client.chat.completions.create(messages=messages)\n"


# ---------------------------------------------------------------- item 9: rich markup in printed text
def test_item9_a_path_with_closing_markup_is_printed_not_parsed(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                                 ) -> None:
    root = tmp_path / "q[/z]"  # the directories `q[` and `z]` below it
    root.mkdir(parents=True)
    (root / "agent.py").write_text(LOOP, encoding="utf-8")
    code = main([str(root), "all", "--output-dir", str(tmp_path / "out[/x]")])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert "internal error" not in err
    assert str(root) in out
    assert out.count("report: ") == 3 and "out[/x]" in out


def test_item9_a_claim_with_markup_is_printed_verbatim(capsys: pytest.CaptureFixture[str]) -> None:
    from dataclasses import replace

    from harness_audit.api import audit
    from harness_audit.cli.audit import print_result

    run = audit(EXAMPLE, ["all"], write=False, overrides={"cache": False})
    assert run.report.findings
    first = replace(run.report.findings[0], claim="model said [/x] and [bold]not bold[/bold] and [masked]")
    print_result(replace(run.report, findings=(first,)), [Path("r[/y].md")], quiet=False)
    out = capsys.readouterr().out
    assert "model said [/x] and [bold]not bold[/bold] and [masked]" in out
    assert "report: r[/y].md" in out
