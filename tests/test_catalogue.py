"""The catalogue contract: selection parsing, criteria prose, and a rule with fixtures for every check."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness_audit.catalogue import CHECKS, P1, criteria_text, parse_selection
from harness_audit.errors import UsageError
from harness_audit.findings import CheckId
from harness_audit.static.registry import all_rules

FIXTURES = Path(__file__).parent / "fixtures" / "rules"
HEADINGS = ["## Symptom", "## Invariant", "## Look at", "## Confirmed", "## Suspected", "## Not implemented",
            "## Defect shapes", "## Correct shapes (no finding)"]


@pytest.mark.parametrize(("tokens", "expected"), [
    (["C1"], ("C1",)), (["c1"], ("C1",)), (["C1,C9"], ("C1", "C9")), (["C9", "C1"], ("C1", "C9")),
    (["c12,C1"], ("C1", "C12")), (["p1"], tuple(P1)), (["P1"], tuple(P1)), (["all"], tuple(CHECKS)),
    (["C1", "c1"], ("C1",)), (["c01"], ("C1",)), (["C09,c1"], ("C1", "C9")), (["C1 C9"], ("C1", "C9")),
    (["C1, C9"], ("C1", "C9")), (["C8/parallel-batch-all-or-nothing"], ("C8",)),
    (["c08/parallel-batch-all-or-nothing", "C1"], ("C1", "C8")), (["unbounded-turn-loop"], ("C12",)),
])
def test_parse_selection_accepts(tokens: list[str], expected: tuple[str, ...]) -> None:
    assert parse_selection(tokens) == tuple(CheckId(e) for e in expected)


@pytest.mark.parametrize(("tokens", "named"), [
    (["C99"], "C99"), (["X1"], "X1"), (["C0"], "C0"), (["C016"], "C016"), (["p1", "C1"], "p1"),
    (["C8/no-such-rule"], "C8/no-such-rule"), (["no-such-rule"], "no-such-rule"), (["C99/x-y"], "C99/x-y"),
    (["all,C3"], "all"), (["p2"], "p2"), (["C1,,C2"], "C1,,C2"), (["C1,"], "C1,"), ([], "empty"), (["C1;C2"], "C1;C2"),
])
def test_parse_selection_refuses_and_names_the_text(tokens: list[str], named: str) -> None:
    with pytest.raises(UsageError) as err:
        parse_selection(tokens)
    assert named in str(err.value)
    if tokens:
        assert "p1" in str(err.value)


def test_p1_is_the_seven_priority_one_checks() -> None:
    assert [c.value for c in P1] == ["C1", "C4", "C9", "C10", "C12", "C13", "C14"]


@pytest.mark.parametrize("check", list(CHECKS))
def test_criteria_prose_has_every_section(check: CheckId) -> None:
    text = criteria_text(check)
    assert text.startswith(f"# {check} · {CHECKS[check].title}\n")
    positions = [text.find(f"\n{h}\n") for h in HEADINGS]
    assert all(p > 0 for p in positions), [h for h, p in zip(HEADINGS, positions, strict=True) if p < 0]
    assert positions == sorted(positions)
    assert "### Python" in text


@pytest.mark.parametrize("check", list(CHECKS))
def test_every_check_has_rules_each_named_by_a_defect_fixture(check: CheckId) -> None:
    rules = [r for r in all_rules() if r.check == check and r.lang == "python"]
    assert rules, f"{check} has no Python rule"
    stem = CHECKS[check].stem
    texts = [p.read_text() for p in (FIXTURES / stem / "python").glob("defect_*.py")]
    assert texts, f"{check} has no defect fixture"
    assert list((FIXTURES / stem / "python").glob("clean_*.py")), f"{check} has no clean fixture"
    for r in rules:
        assert any(re.search(rf"expect: {check}\b.*\b{re.escape(r.name)}\b", t) for t in texts), \
            f"rule {r.rule_id} is not named by any `expect` marker"
        assert r.doc, f"rule {r.rule_id} has no docstring"
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", r.name), r.name


def test_glosses_are_one_line_in_both_languages() -> None:
    for s in CHECKS.values():
        assert s.gloss_en and "\n" not in s.gloss_en
        assert s.gloss_zh and "\n" not in s.gloss_zh


_CODE_SPAN = re.compile(r"``.+?``|`[^`\n]+`", re.S)


def _spans(text: str) -> set[str]:
    return {" ".join(s.split()) for s in _CODE_SPAN.findall(text)}


@pytest.mark.parametrize("check", list(CHECKS))
def test_the_chinese_criteria_have_every_section_and_keep_the_code(check: CheckId) -> None:
    """The Chinese criteria (explain, reports) follow the English ones section by section and keep every code
    span, check id and provider error as written; only the prose is Chinese."""
    from harness_audit.catalogue import CRITERIA_HEADINGS
    from harness_audit.messages import t

    en, zh = criteria_text(check), criteria_text(check, "zh")
    assert zh.startswith(f"# {check} · {t(f'check.{check}', 'zh')}\n")
    headings = [line for line in zh.splitlines() if line.startswith("## ")]
    assert headings == [f"## {h}" for h in CRITERIA_HEADINGS["zh"]]
    assert [line for line in en.splitlines() if line.startswith("### ")] == \
        [line for line in zh.splitlines() if line.startswith("### ")]
    assert _spans(en) <= _spans(zh), _spans(en) - _spans(zh)
    assert set(re.findall(r"\bC\d{1,2}\b", en)) == set(re.findall(r"\bC\d{1,2}\b", zh))
    assert not re.search(r"\b(the|and|of|is|with|when)\b", _CODE_SPAN.sub("", zh).replace('"', "")
                         .split("## ", 1)[1].replace("tool_use ids were found without tool_result blocks", "")
                         .replace("an assistant message with 'tool_calls' must be followed by tool messages "
                                  "responding to each 'tool_call_id'", "")), "English prose left in the Chinese text"


def test_the_shared_rules_exist_in_both_languages_with_the_same_code() -> None:
    from harness_audit.catalogue import shared_rules

    assert _spans(shared_rules("en")) <= _spans(shared_rules("zh"))
    assert shared_rules("zh").count("\n## ") == shared_rules("en").count("\n## ")


def test_model_prompts_keep_the_english_criteria() -> None:
    """The criteria are model input for the llm engine: its prompts use the English text whatever the language."""
    from harness_audit.llm.prompts import check_task

    task = check_task(CheckId.C8, [], [], budget="x")
    assert criteria_text(CheckId.C8).strip()[:200] in task and "部分成功" not in task
