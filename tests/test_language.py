"""`language = auto|en|zh`: the terminal and the report's fixed text follow it; findings keep their own words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness_audit.catalogue import CHECKS
from harness_audit.catalogue.spec import Group
from harness_audit.cli import main
from harness_audit.messages import EN
from tests.conftest import MakeTree

EXAMPLE = Path(__file__).parent.parent / "examples" / "agent_loop"
_LATIN_WORD = re.compile(r"\b[a-z]{4,}\b")


def test_english_titles_are_the_catalogue_titles() -> None:
    for check, spec in CHECKS.items():
        assert EN[f"check.{check}"] == spec.title
    for group in Group:
        assert EN[f"group.{group.value}"] == group.title


def _md(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    main([str(EXAMPLE), "all", "--format", "md", "-o", "-", "-q", *args])
    return capsys.readouterr().out


def test_zh_changes_the_report_headings_and_fixed_text(capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    md = _md(capsys, "--language", "zh")
    for text in ("# harness-audit 审计报告", "## 概览", "## 确认的问题 (11)", "## 可疑的问题 (2)", "## 未覆盖",
                 "## 成本", "**问题。**", "**后果。**", "**修复方向。**", "工具调用配对完整性", "状态保持自洽"):
        assert text in md, text
    # the findings' own text stays as the rule wrote it
    assert "the handler for Exception runs `continue`" in md
    headings = [line for line in md.splitlines() if line.startswith("## ")]
    assert not [h for h in headings if _LATIN_WORD.search(h.lower().replace("harness-audit", ""))], headings


def test_locale_picks_zh_and_configured_en_overrides_it(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch, make_tree: MakeTree,
                                                        tmp_path: Path) -> None:
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    assert "## 概览" in _md(capsys)
    assert "## Summary" in _md(capsys, "--language", "en")
    root = make_tree({"m.py": "def f(x):\n    return x\n", ".harness-audit.toml": 'language = "en"\n'})
    main([str(root), "C1", "-o", str(tmp_path / "o"), "--allow-empty"])
    out = capsys.readouterr().out
    assert "not covered" in out and "未覆盖" not in out


def test_zh_terminal_output_is_chinese(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                       tmp_path: Path) -> None:
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    assert main([str(EXAMPLE), "all", "-o", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert " C1 完成 · 发现 1 条 · 证据拒收 0 次" in captured.err
    assert captured.out.strip().splitlines()[-1].startswith("发现 13 条(确认 11,可疑 2,未实现 0)")
    assert "报告:" in captured.out and "审计目标" not in captured.out


def test_checks_and_explain_speak_zh(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["checks", "--language", "zh"]) == 0
    out = capsys.readouterr().out
    assert "查什么" in out and "工具调用配对完整性" in out and "what it checks" not in out
    assert main(["--language", "zh", "explain", "C8"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# C8 · 部分成功") and "## 静态规则" in out
