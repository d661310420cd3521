"""SARIF for code scanning: every rule links its check page and carries help that says what the fix looks like."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_audit.cli import main

EXAMPLE = Path(__file__).parent.parent / "examples" / "agent_loop"


def _sarif(capsys: pytest.CaptureFixture[str], root: Path = EXAMPLE) -> dict[str, object]:
    main([str(root), "all", "--format", "sarif", "-o", "-", "-q"])
    return json.loads(capsys.readouterr().out)["runs"][0]


def test_rules_link_their_page_and_help_carries_the_fix(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_AUDIT_DOCS_URL", "https://github.com/acme/harness-audit/blob/v1/docs/checks")
    run = _sarif(capsys)
    rules = run["tool"]["driver"]["rules"]  # type: ignore[index]
    c8 = rules[7]
    assert c8["helpUri"] == "https://github.com/acme/harness-audit/blob/v1/docs/checks/c08-partial-success.md"
    assert "Promise.allSettled" in c8["help"]["markdown"]  # the correct shapes: what the fix looks like
    for rule in rules:
        page = Path(__file__).parent.parent / "docs" / "checks" / rule["helpUri"].rsplit("/", 1)[1]
        assert page.is_file(), page
    result = run["results"][0]  # type: ignore[index]
    assert "**Fix.**" in result["message"]["markdown"] and "Fix:" in result["message"]["text"]


def test_a_checkout_links_its_own_pages(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_AUDIT_DOCS_URL", raising=False)
    run = _sarif(capsys)
    uri = run["tool"]["driver"]["rules"][0]["helpUri"]  # type: ignore[index]
    assert uri.startswith("file://") and uri.endswith("/docs/checks/c01-tool-call-pairing.md")
    assert "pypi.org" not in json.dumps(run)  # no registry holds the package: none is claimed


def test_inline_suppressions_are_in_source_suppressions(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "ws"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".harness-audit"))
    loop = root / "agent" / "loop.py"
    lines = loop.read_text().splitlines()
    n = next(i for i, line in enumerate(lines) if "json.loads(call.function.arguments)" in line)
    lines[n] += "  # harness-audit: ignore[C4] arguments are validated by the gateway"
    loop.write_text("\n".join(lines) + "\n")
    run = _sarif(capsys, root)
    (sup,) = [r for r in run["results"] if r.get("suppressions")]  # type: ignore[union-attr]
    assert sup["ruleId"] == "C4"
    assert sup["suppressions"] == [{"kind": "inSource", "justification": "arguments are validated by the gateway"}]
