"""The message catalogue: every fixed user-facing string, in English and Chinese, under one key.

`t(key, lang, **values)` formats one message. `resolve_language` turns the `language` setting (`auto`, `en`,
`zh`) into the language to use: an explicit setting wins, `auto` follows the locale, and English is the
fallback. Findings' own text (claims, consequences, fixes) is never translated: it stays as its engine wrote it.
`tests/test_messages.py` fails when a key exists in one language only or the two disagree on placeholders.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Literal

Lang = Literal["en", "zh"]

LANGUAGES: tuple[Lang, ...] = ("en", "zh")


def resolve_language(setting: str | None = "auto", environ: Mapping[str, str] | None = None) -> Lang:
    """`en` or `zh`: an explicit setting wins; `auto` (or None) reads the locale (LC_ALL, LC_MESSAGES, LANG)."""
    if setting in LANGUAGES:
        return setting  # type: ignore[return-value]
    env = os.environ if environ is None else environ
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = env.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def t(key: str, lang: str, /, **values: object) -> str:
    """The message `key` in `lang` (English when `lang` is not a catalogue language), formatted with `values`."""
    table = ZH if lang == "zh" else EN
    return table[key].format(**values)


EN: dict[str, str] = {
    # ------------------------------------------------------------------ exit codes
    "exit.no_files": "nothing was audited: 0 files analysed under {root}; pass --allow-empty to accept an empty audit",
    "exit.all_not_covered": "nothing was audited: every selected check is not covered ({checks}); "
                            "pass --allow-empty to accept an empty audit",
    "exit.interrupted": "interrupted; no report was written",
    "exit.picker_cancelled": "cancelled at the check picker; no report was written",
    "exit.no_selection": "no checks selected and none configured; pass ids (C1,C9), `p1` or `all`, "
                         "or set `checks` in [tool.harness-audit]",
    "exit.internal": "internal error: {error} (rerun with --verbose for details)",
    "exit.incomplete": "the audit could not complete: {error}",
    "exit.error": "error: {error}",
}

ZH: dict[str, str] = {
    "exit.no_files": "没有审计到任何内容:{root} 下分析的文件数为 0;确实需要空审计通过,请加 --allow-empty",
    "exit.all_not_covered": "没有审计到任何内容:所选检查项全部未覆盖({checks});确实需要空审计通过,请加 --allow-empty",
    "exit.interrupted": "已中断,未生成报告",
    "exit.picker_cancelled": "已在检查项选择界面取消,未生成报告",
    "exit.no_selection": "没有选择检查项,配置里也没有;请指定检查项(如 C1,C9)、`p1` 或 `all`,"
                         "或在 [tool.harness-audit] 里设置 `checks`",
    "exit.internal": "内部错误:{error}(加 --verbose 重新运行可查看详情)",
    "exit.incomplete": "审计未能完成:{error}",
    "exit.error": "错误:{error}",
}
