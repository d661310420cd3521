"""The message catalogue: every key in both languages, with the same placeholders."""

from __future__ import annotations

import string

import pytest

from harness_audit.messages import EN, ZH, resolve_language, t


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_key_exists_in_both_languages() -> None:
    assert sorted(set(EN) - set(ZH)) == [], "keys missing in Chinese"
    assert sorted(set(ZH) - set(EN)) == [], "keys missing in English"


@pytest.mark.parametrize("key", sorted(EN))
def test_both_languages_take_the_same_values(key: str) -> None:
    assert _fields(EN[key]) == _fields(ZH[key]), key
    assert EN[key].strip() and ZH[key].strip()


@pytest.mark.parametrize(("setting", "env", "expected"), [
    ("auto", {"LANG": "zh_CN.UTF-8"}, "zh"), ("auto", {"LANG": "en_US.UTF-8"}, "en"), ("auto", {}, "en"),
    ("en", {"LANG": "zh_CN.UTF-8"}, "en"), ("zh", {"LANG": "C"}, "zh"),
    ("auto", {"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"), (None, {"LC_MESSAGES": "zh_TW"}, "zh"),
])
def test_language_resolution(setting: str | None, env: dict[str, str], expected: str) -> None:
    assert resolve_language(setting, env) == expected


def test_unknown_language_falls_back_to_english() -> None:
    assert t("exit.interrupted", "fr") == EN["exit.interrupted"]
