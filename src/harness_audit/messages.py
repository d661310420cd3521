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
    # ------------------------------------------------------------------ verdicts and states
    "verdict.confirmed": "confirmed",
    "verdict.suspected": "suspected",
    "verdict.not-implemented": "not implemented",
    "state.queued": "queued",
    "state.running": "running",
    "state.ran": "done",
    "state.not-covered": "not covered",
    "state.failed": "failed",
    "state.cancelled": "cancelled",
    "state.incomplete": "incomplete",
    # ------------------------------------------------------------------ terminal: progress
    "progress.run_dir": "run directory: {path}  (stop it: harness-audit cancel {path} · continue it: "
                        "harness-audit resume {path})",
    "progress.recon": "recon: {n} landmarks located",
    "progress.check": "{check:>3} {state}",
    "progress.check_counts": "{check:>3} {state} · {findings} findings · {refused} refused",
    "progress.tokens": "{tokens} tokens",
    "progress.missing": "missing landmarks: {kinds}",
    "progress.col.check": "check",
    "progress.col.state": "state",
    "progress.col.findings": "findings",
    "progress.col.refused": "refused",
    "progress.col.tokens": "tokens",
    "progress.col.cost": "cost",
    "progress.title": "harness-audit · {engine} · {n} checks",
    # ------------------------------------------------------------------ terminal: summary
    "summary.header": "{root} · {engine} · {checks} checks · {files} files · {seconds}s",
    "summary.cached": " (cached)",
    "summary.check_level": "(check-level)",
    "summary.more": "… and {n} more in the report",
    "summary.report": "report: {path}",
    "summary.dropped": "{check} not run: {why}",
    "summary.floor": "priority {priority} is above priority_floor = {floor}",
    "final.clean": "clean",
    "final.findings": "{n} findings ({confirmed} confirmed, {suspected} suspected, {not_implemented} not implemented)",
    "final.not_covered": "{n} not covered",
    "final.skipped": "{n} files skipped",
    "final.unparsed": "{n} unparsed",
    "final.refused": "{n} refused by the evidence gate",
    "final.suppressed": "{n} suppressed",
    "final.cost": "cost {money}",
    "final.tokens": "{tokens} tokens",
    "final.cost_unknown": "cost unknown",
    "final.cancelled": "CANCELLED",
    "final.incomplete": "INCOMPLETE",
    "final.baseline": "{new} new, {known} in the baseline",
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
    "verdict.confirmed": "确认",
    "verdict.suspected": "可疑",
    "verdict.not-implemented": "未实现",
    "state.queued": "排队中",
    "state.running": "进行中",
    "state.ran": "完成",
    "state.not-covered": "未覆盖",
    "state.failed": "失败",
    "state.cancelled": "已取消",
    "state.incomplete": "未完成",
    "progress.run_dir": "运行目录:{path}(停止:harness-audit cancel {path} · 续跑:harness-audit resume {path})",
    "progress.recon": "侦察完成:定位到 {n} 个地标",
    "progress.check": "{check:>3} {state}",
    "progress.check_counts": "{check:>3} {state} · 发现 {findings} 条 · 证据拒收 {refused} 次",
    "progress.tokens": "{tokens} token",
    "progress.missing": "缺少地标:{kinds}",
    "progress.col.check": "检查项",
    "progress.col.state": "状态",
    "progress.col.findings": "发现",
    "progress.col.refused": "拒收",
    "progress.col.tokens": "token",
    "progress.col.cost": "成本",
    "progress.title": "harness-audit · {engine} 引擎 · {n} 项检查",
    "summary.header": "{root} · {engine} 引擎 · {checks} 项检查 · {files} 个文件 · {seconds} 秒",
    "summary.cached": "(命中结果缓存)",
    "summary.check_level": "(检查项级)",
    "summary.more": "……另有 {n} 条见报告",
    "summary.report": "报告:{path}",
    "summary.dropped": "{check} 未运行:{why}",
    "summary.floor": "优先级 {priority} 高于 priority_floor = {floor}",
    "final.clean": "未发现问题",
    "final.findings": "发现 {n} 条(确认 {confirmed},可疑 {suspected},未实现 {not_implemented})",
    "final.not_covered": "未覆盖 {n} 项",
    "final.skipped": "跳过 {n} 个文件",
    "final.unparsed": "{n} 个文件未能解析",
    "final.refused": "证据拒收 {n} 次",
    "final.suppressed": "已抑制 {n} 条",
    "final.cost": "成本 {money}",
    "final.tokens": "{tokens} token",
    "final.cost_unknown": "成本未知",
    "final.cancelled": "已取消(CANCELLED)",
    "final.incomplete": "未完成(INCOMPLETE)",
    "final.baseline": "新增 {new} 条,基线中已有 {known} 条",
}
