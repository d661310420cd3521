"""The message catalogue: every key in both languages, with the same placeholders."""

from __future__ import annotations

import ast
import string
from pathlib import Path

import pytest

from harness_audit.messages import EN, STORED_PREFIXES, ZH, Msg, match_stored, resolve_language, t


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


# ---------------------------------------------------------------------------------------------------- the source
SRC = Path(__file__).resolve().parent.parent / "src" / "harness_audit"
_ERRORS = {"HarnessAuditError", "UsageError", "ConfigError", "AuditIncomplete", "NotATrace"}
_KEYED = {"t", "Msg", *_ERRORS}


def _calls() -> list[tuple[str, int, str, ast.expr | None]]:
    """Every call in the source to `t`, `Msg` or one of our error classes: (file, line, callee, first argument)."""
    out: list[tuple[str, int, str, ast.expr | None]] = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else (
                    node.func.attr if isinstance(node.func, ast.Attribute) else "")
                if name in _KEYED:
                    out.append((str(path.relative_to(SRC)), node.lineno, name, node.args[0] if node.args else None))
    return out


def test_every_message_id_the_code_names_exists_in_both_languages() -> None:
    named = [(f, n, a.value) for f, n, _, a in _calls() if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    assert len(named) > 250, "the scan found too few message ids: is it still reading the calls?"
    missing = [f"{f}:{n} {key!r} ({'en' if key not in EN else 'zh'})" for f, n, key in named
               if key not in EN or key not in ZH]
    assert missing == [], "message ids missing in a language"


def test_errors_a_user_sees_are_catalogue_messages_not_sentences() -> None:
    """`UsageError(f"...")` would reach a Chinese reader in English: every error is raised with a message id."""
    plain = [f"{f}:{n} {callee}(…)" for f, n, callee, a in _calls() if callee in _ERRORS
             and a is not None and not (isinstance(a, ast.Constant) and a.value in EN)
             and not isinstance(a, (ast.Name, ast.Call, ast.Attribute))]
    assert plain == [], "errors raised with a plain sentence instead of a message id"


def test_messages_kept_as_english_text_can_be_read_back() -> None:
    """`note.*` and `arg.*` messages travel as English text and are matched again (`localize`, `match_stored`):
    no format specs or conversions, no two placeholders side by side, and each reads back as itself."""
    for key in (k for k in EN if k.startswith(STORED_PREFIXES)):
        fields = [(lit, name, spec, conv) for lit, name, spec, conv in string.Formatter().parse(EN[key])]
        assert all(not spec and not conv for _, name, spec, conv in fields if name), key
        assert all(lit for lit, name, _, _ in fields[1:] if name), f"{key}: two placeholders touch"
        values = {name: f"<{name}>" for _, name, _, _ in fields if name}
        found = match_stored(EN[key].format(**values), key.split(".")[0] + ".")
        assert found is not None and found.key == key and found.render("zh") == ZH[key].format(**values), key


def test_area_keys_never_collide_and_every_message_formats() -> None:
    from harness_audit.messages import _cli, _errors, _help, _host

    areas = [_cli.EN, _errors.EN, _help.EN, _host.EN]
    assert sum(len(a) for a in areas) + len(set(EN) - set().union(*areas)) == len(EN)
    for key in EN:
        values = {name: "x" for name in _fields(EN[key])}
        assert t(key, "en", **values) and t(key, "zh", **values), key


def test_an_error_speaks_the_readers_language_and_str_stays_english() -> None:
    from harness_audit.errors import UsageError

    exc = UsageError("err.selection.unknown", part="C16", origin=Msg("origin.selection"),
                     forms=Msg("err.selection.forms"))
    assert str(exc).startswith("unknown check 'C16' in the check selection; expected check ids C1–C15")
    assert exc.message("zh").startswith("检查项选择里有未知的检查项 'C16';应为检查项编号 C1–C15")
    assert UsageError("a sentence").message("zh") == "a sentence"
