"""The message catalogue: every fixed user-facing string, in English and Chinese, under one key.

`t(key, lang, **values)` formats one message. `Msg(key, **values)` is a message not yet formatted, for text
that is written before its language is known: an error raised deep in the code (`errors.HarnessAuditError`
takes one), a help text, a reason passed as another message's value. `resolve_language` turns the `language`
setting (`auto`, `en`, `zh`) into the language to use: an explicit setting wins, `auto` follows the locale, and
English is the fallback. Findings' own text (claims, consequences, fixes) is never translated: it stays as its
engine wrote it.

The keys live in one module per area (this one: exit codes, progress, summary, reports, picker, checks;
`_errors`: every error a user sees; `_help`: every subcommand's `--help`; `_cli`: what the other subcommands
print; `_host`: the host-model protocol's text). `tests/test_messages.py` fails when a key exists in one language
only, the two disagree on placeholders, two areas define one key, or the code names a key that does not exist.
This module imports nothing else of harness-audit, so any module may use it.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Mapping, Sequence
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


class Msg:
    """A catalogue message and its values, formatted only when its reader's language is known.

    A value may itself be a `Msg` (a reason, what a path was for): it is rendered in the same language. `str()`
    is the English text, so a `Msg` reads sensibly wherever no language applies (a ledger, a log, a test).
    """

    __slots__ = ("key", "values")

    def __init__(self, key: str, /, **values: object) -> None:
        if key not in EN:
            raise KeyError(f"no message {key!r} in the catalogue")
        self.key = key
        """The catalogue key."""
        self.values = values
        """The placeholders' values (strings, numbers, or other `Msg`s)."""

    def render(self, lang: str) -> str:
        """The message in `lang` (English when `lang` is not a catalogue language)."""
        return t(self.key, lang, **self.values)

    def __str__(self) -> str:
        return self.render("en")

    def __repr__(self) -> str:
        return f"Msg({self.key!r}, {self.values!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Msg) and (self.key, self.values) == (other.key, other.values)

    def __hash__(self) -> int:
        return hash(self.key)


class OneOf:
    """A list of alternatives as the reader writes one: `'a', 'b' or 'c'`, `'a'、'b' 或 'c'`."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[str]) -> None:
        self.items = tuple(items)
        """The alternatives, as they are shown."""

    def render(self, lang: str) -> str:
        """The list in `lang`."""
        if len(self.items) < 2:
            return "".join(self.items)
        head = t("list.sep", lang).join(self.items[:-1])
        return t("list.or", lang, head=head, last=self.items[-1])

    def __str__(self) -> str:
        return self.render("en")


def text(value: object, lang: str) -> str:
    """`value` as its reader sees it: a `Msg` or `OneOf` rendered in `lang`, anything else as `str()` gives it."""
    return value.render(lang) if isinstance(value, (Msg, OneOf)) else str(value)


def t(key: str, lang: str, /, **values: object) -> str:
    """The message `key` in `lang` (English when `lang` is not a catalogue language), formatted with `values`.

    Values that are `Msg`s (or `OneOf`s) are rendered in `lang` first.
    """
    table = ZH if lang == "zh" else EN
    return table[key].format(**{k: text(v, lang) if isinstance(v, (Msg, OneOf)) else v for k, v in values.items()})


def columns(text: str) -> int:
    """Terminal columns `text` takes: a CJK character takes two."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, width: int) -> str:
    """`text` padded with spaces to `width` terminal columns."""
    return text + " " * max(width - columns(text), 0)


def counted(n: int, noun: str) -> Msg:
    """`n` of `noun` (`count.<noun>` / `count.<noun>s`): "1 check", "2 checks", in the reader's language."""
    return Msg(f"count.{noun}", n=n) if n == 1 else Msg(f"count.{noun}s", n=n)


_EN_CORE: dict[str, str] = {
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
    "list.sep": ", ",
    "list.or": "{head} or {last}",
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
    "progress.retry": "{unit}: {detail}",
    "progress.check": "{check:>3} {state}",
    "progress.check_counts": "{check:>3} {state} · {findings} found · {refused} refused",
    "progress.tokens": "{tokens} tokens",
    "progress.missing": "missing landmarks: {kinds}",
    "progress.col.check": "check",
    "progress.col.state": "state",
    "progress.col.findings": "findings",
    "progress.col.refused": "refused",
    "progress.col.tokens": "tokens",
    "progress.col.cost": "cost",
    "progress.title": "harness-audit · {engine} · {checks}",
    "count.check": "1 check",
    "count.checks": "{n} checks",
    "count.file": "1 file",
    "count.files": "{n} files",
    # ------------------------------------------------------------------ terminal: summary
    "summary.header": "{root} · {engine} · {checks} · {files} · {seconds}s",
    "summary.cached": " (cached)",
    "summary.check_level": "(check-level)",
    "summary.more": "… and {n} more in the report",
    "summary.report": "report: {path}",
    "summary.dropped": "{check} not run: {why}",
    "summary.floor": "priority {priority} is above priority_floor = {floor}",
    "final.clean": "clean",
    "final.findings": "{n} found ({confirmed} confirmed, {suspected} suspected, {not_implemented} not implemented)",
    "final.not_covered": "{n} not covered",
    "final.skipped": "{files} skipped",
    "final.unparsed": "{n} unparsed",
    "final.refused": "{n} refused by the evidence gate",
    "final.suppressed": "{n} suppressed",
    "final.withheld": "{n} withheld (rules of low measured precision; listed in the report, --min-precision low counts them)",
    "final.cost": "cost {money}",
    "final.tokens": "{tokens} tokens",
    "final.cost_unknown": "cost unknown",
    "final.cancelled": "CANCELLED",
    "final.incomplete": "INCOMPLETE",
    "final.baseline": "{new} new, {known} in the baseline",
    "diff.new": "new ({n})",
    "diff.fixed": "fixed ({n})",
    "diff.changed": "verdict changed ({n})",
    "diff.unchanged": "unchanged: {n}",
    "diff.none": "none",
    "diff.summary": "{new} new, {fixed} fixed, {changed} verdict changes, {unchanged} unchanged",
    # ------------------------------------------------------------------ check and group titles
    "check.C1": "Tool-call pairing completeness",
    "check.C2": "History is append-only",
    "check.C3": "Crash and checkpoint semantics",
    "check.C4": "Model output parsing",
    "check.C5": "Path and sandbox boundaries",
    "check.C6": "Secrets and ambient environment",
    "check.C7": "Error taxonomy and retryability",
    "check.C8": "Partial success",
    "check.C9": "Idempotency and side-effect safety",
    "check.C10": "Cancellation propagation",
    "check.C11": "Timeout layering",
    "check.C12": "Loop and budget limits",
    "check.C13": "Context management and truncation boundaries",
    "check.C14": "Prompt prefix determinism",
    "check.C15": "Trace completeness and replay",
    "group.1": "State stays self-consistent",
    "group.2": "Untrusted input is treated as untrusted",
    "group.3": "Failure is a first-class outcome",
    "group.4": "Boundaries can be closed",
    "group.5": "Finite resources are accounted for",
    "group.6": "The run is observable",
    # ------------------------------------------------------------------ reports (markdown, html)
    "md.title": "harness-audit report",
    "md.target": "Target",
    "md.commit": "Commit",
    "md.not_git": "not a git repository",
    "md.dirty": "dirty",
    "md.engine": "Engine",
    "md.model": "model",
    "md.checks": "checks",
    "md.run": "Run",
    "md.started": "started {when}",
    "md.seconds": "{n} s",
    "md.state.complete": "complete",
    "md.state.cancelled": "**CANCELLED** — partial results",
    "md.state.incomplete": "**INCOMPLETE** — partial results",
    "md.files": "Files",
    "md.files_line": "{scanned} analysed, {skipped} skipped, {unparsed} unparsed",
    "md.resumed": "Resumed",
    "md.resumed_line": "{checks} carried over from the interrupted run",
    "md.ledger": "Ledger",
    "md.note": "Note",
    "md.result": "Result",
    "md.summary": "Summary",
    "md.col.group": "group",
    "md.col.checks": "checks",
    "md.col.confirmed": "confirmed",
    "md.col.suspected": "suspected",
    "md.col.not_implemented": "not implemented",
    "md.col.not_covered": "not covered",
    "md.section.confirmed": "Confirmed",
    "md.section.suspected": "Suspected",
    "md.section.not_implemented": "Not implemented",
    "md.empty.confirmed": "No confirmed findings.",
    "md.empty.suspected": "No suspected findings.",
    "md.empty.not_implemented": "No check reported a missing subsystem.",
    "md.check_level": "check-level",
    "md.claim": "Claim.",
    "md.consequence": "Consequence.",
    "md.fix": "Fix direction.",
    "md.to_confirm": "To confirm.",
    "md.also_at": "Same code also at {where} (other builds or call sites of the same root cause).",
    "md.same_site": "Same site, also reported by {checks}:",
    "md.same_site_elsewhere": "The same site is also reported by {checks}, under that verdict's heading.",
    "md.source": "source {source} · fingerprint {fingerprint}",
    "md.source_lead": " · static lead {lead}",
    "md.not_covered": "Not covered",
    "md.all_ran": "Every requested check ran to completion.",
    "md.not_covered_intro": "These checks did not run to completion; no result here means **not looked at**, not clean.",
    "md.col.check": "check",
    "md.col.status": "status",
    "md.col.why": "why",
    "md.missing": "missing landmarks: {kinds}",
    "md.cost": "Cost",
    "md.cost_line": "Wall time {seconds} s · input {input} · output {output} · cache read {cache_read} · "
                    "cache write {cache_write} · reasoning {reasoning} tokens",
    "md.cost_static": "Wall time {seconds} s · no model was used: 0 tokens, $0",
    "md.cost_host": "Wall time {seconds} s · protocol calls: {calls} · the host's own model: tokens not visible "
                    "to us",
    "md.cache_hit": "result cache hit",
    "md.per_check": "Per check: time, tokens, findings and refusals",
    "md.col.unit": "unit",
    "md.col.time": "time (s)",
    "md.col.requests": "requests",
    "md.col.protocol_calls": "protocol calls",
    "md.col.input": "input",
    "md.col.output": "output",
    "md.col.cache_read": "cache read",
    "md.col.cache_write": "cache write",
    "md.col.reasoning": "reasoning",
    "md.col.cost": "cost",
    "md.col.findings": "findings",
    "md.col.refusals": "refusals",
    "md.col.reason": "reason",
    "md.col.count": "count",
    "md.unknown": "unknown",
    "md.refusals": "Refusals by reason (findings and landmarks):",
    "md.no_refusals": "The evidence gate refused nothing.",
    "md.refusal_list": "Each refused submission ({n})",
    "md.col.subject": "subject",
    "md.subject.finding": "finding",
    "md.subject.landmark": "landmark",
    "md.col.submitted": "file:line as submitted",
    "md.files_left_out": "Files left out",
    "md.col.file": "file",
    "md.skipped": "skipped: {why}",
    "md.unparsed": "unparsed: {why}",
    "md.analysis": "Cross-check analysis (model inference — not validated by evidence)",
    "md.analysis_intro": "This section was written by the model about interactions between the findings above. "
                         "Nothing in it passed the evidence gate; treat it as a hypothesis.",
    "md.suppressed": "Suppressed",
    "md.suppressed_intro": "Inline `harness-audit: ignore[...]` markers in the audited code suppressed these "
                           "findings; they are not counted above. `--no-suppressions` reports them.",
    "md.suppressions_off": "Inline suppressions were ignored for this run (`--no-suppressions`).",
    "md.suppression_problems": "Suppression markers not applied:",
    "md.withheld": "Withheld: rules of low measured precision",
    "md.withheld_intro": "These findings come from rules whose findings were mostly judged false when independent "
                         "reviewers read them in packages never used for tuning, so they are below this run's "
                         "`min_precision` ({floor}) and not counted above. Read them as leads; "
                         "`--min-precision low` reports them as findings.",
    "md.withheld_record": "{true} of {judged} judged true (estimate {estimate})",
    "md.withheld_why": "rule {rule}: {true} of {judged} reviewed findings judged true (estimate {estimate}, {tier} "
                       "precision), below this run's min_precision",
    "md.col.rule": "rule",
    "md.col.record": "reviews",
    "md.col.where": "where",
    "md.col.claim": "claim",
    "md.landmarks": "Appendix: landmarks in use",
    "md.landmark_counts": "Landmarks: {accepted} accepted by the gate = {in_use} in use (listed here) + {dismissed} "
                          "dismissed in recon; {refused} refused by the gate.",
    "md.no_landmarks": "Recon found no landmarks.",
    "md.dismissed_landmarks": "Landmarks dismissed in recon, not used by any check ({n}):",
    "md.col.kind": "kind",
    "md.col.line": "line",
    "md.col.symbol": "symbol",
    "md.col.confidence": "confidence",
    "md.resumed_mark": "(resumed)",
    "sarif.correct": "What correct code does",
    "sarif.explain": "`harness-audit explain {check}` prints the full criteria and the rules behind them.",
    "sarif.explain_short": "Run `harness-audit explain {check}` for the criteria.",
    "sarif.fix": "Fix.",
    "sarif.fix_inline": " Fix: {direction}",
    "sarif.to_confirm": " To confirm: {hint}",
    "sarif.lead_unaddressed": " (static lead {lead}: the model neither confirmed nor dismissed it)",
    "sarif.lead_dismissed": " (static lead {lead}, dismissed by the model)",
    "sarif.not_implemented": "{check} not implemented: {claim}",
    "sarif.related": "the same code in another build of this source",
    "html.filter_check": "Check",
    "html.filter_verdict": "Verdict",
    "html.all": "all",
    "html.grid": "Checks × verdicts",
    "html.cost_chart": "Cost per check",
    "html.findings": "Findings",
    "html.shown": "{shown} of {total} shown",
    "html.seconds_axis": "seconds",
    "html.tokens_axis": "tokens",
    "md.leads": "Static leads",
    "md.leads_intro": "{n} static leads were handed to the model: {confirmed} confirmed, {dismissed} dismissed, "
                      "{unaddressed} unaddressed. An unaddressed lead keeps its static verdict and is listed with the "
                      "findings above; a dismissed one is not a finding, and the model's reason is shown so a reader "
                      "can judge it.",
    "md.col.lead": "lead",
    "md.col.static_verdict": "static verdict",
    "picker.title": "Choose the checks to run",
    "picker.keys": "↑/↓ move · space ticks · enter runs (nothing ticked runs p1) · esc, q or ctrl-d cancels",
    "picker.legend": "★ priority 1: the seven checks whose failures break agent runs most often (the `p1` preset)",
    "picker.p1": "the seven priority-1 checks (★)",
    "picker.all": "all fifteen checks",
    "picker.chosen": "running: {checks}",
    "checks.title": "harness-audit checks (★ = priority 1, the p1 preset)",
    "checks.col.id": "id",
    "checks.col.name": "name",
    "checks.col.group": "group",
    "checks.col.prio": "prio",
    "checks.col.requires": "requires",
    "checks.col.what": "what it checks",
    "explain.rules": "Static rules",
    "explain.rule_doc_en": "the English original",
    "explain.rule_docs_where": "Each rule's description is written in English beside its code: "
                               "`harness-audit explain {example}` prints one.",
}

_ZH_CORE: dict[str, str] = {
    "exit.no_files": "没有审计到任何内容:{root} 下分析的文件数为 0;确实需要空审计通过,请加 --allow-empty",
    "exit.all_not_covered": "没有审计到任何内容:所选检查项全部未覆盖({checks});确实需要空审计通过,请加 --allow-empty",
    "exit.interrupted": "已中断,未生成报告",
    "exit.picker_cancelled": "已在检查项选择界面取消,未生成报告",
    "exit.no_selection": "没有选择检查项,配置里也没有;请指定检查项(如 C1,C9)、`p1` 或 `all`,"
                         "或在 [tool.harness-audit] 里设置 `checks`",
    "exit.internal": "内部错误:{error}(加 --verbose 重新运行可查看详情)",
    "exit.incomplete": "审计未能完成:{error}",
    "exit.error": "错误:{error}",
    "list.sep": "、",
    "list.or": "{head} 或 {last}",
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
    "progress.retry": "{unit}:{detail}",
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
    "progress.title": "harness-audit · {engine} 引擎 · {checks}",
    "count.check": "1 项检查",
    "count.checks": "{n} 项检查",
    "count.file": "1 个文件",
    "count.files": "{n} 个文件",
    "summary.header": "{root} · {engine} 引擎 · {checks} · {files} · {seconds} 秒",
    "summary.cached": "(命中结果缓存)",
    "summary.check_level": "(检查项级)",
    "summary.more": "……另有 {n} 条见报告",
    "summary.report": "报告:{path}",
    "summary.dropped": "{check} 未运行:{why}",
    "summary.floor": "优先级 {priority} 高于 priority_floor = {floor}",
    "final.clean": "未发现问题",
    "final.findings": "发现 {n} 条(确认 {confirmed},可疑 {suspected},未实现 {not_implemented})",
    "final.not_covered": "未覆盖 {n} 项",
    "final.skipped": "跳过 {files}",
    "final.unparsed": "{n} 个文件未能解析",
    "final.refused": "证据拒收 {n} 次",
    "final.suppressed": "已抑制 {n} 条",
    "final.withheld": "暂扣 {n} 条(实测精度低的规则;列在报告里,加 --min-precision low 则计入)",
    "final.cost": "成本 {money}",
    "final.tokens": "{tokens} token",
    "final.cost_unknown": "成本未知",
    "final.cancelled": "已取消(CANCELLED)",
    "final.incomplete": "未完成(INCOMPLETE)",
    "final.baseline": "新增 {new} 条,基线中已有 {known} 条",
    "diff.new": "新增({n})",
    "diff.fixed": "已修复({n})",
    "diff.changed": "判定变化({n})",
    "diff.unchanged": "未变:{n}",
    "diff.none": "无",
    "diff.summary": "新增 {new} 条,已修复 {fixed} 条,判定变化 {changed} 条,未变 {unchanged} 条",
    "check.C1": "工具调用配对完整性",
    "check.C2": "历史只追加",
    "check.C3": "崩溃与检查点语义",
    "check.C4": "模型输出解析",
    "check.C5": "路径与沙箱边界",
    "check.C6": "密钥与环境变量",
    "check.C7": "错误分类与可重试性",
    "check.C8": "部分成功",
    "check.C9": "幂等与副作用安全",
    "check.C10": "取消传播",
    "check.C11": "超时分层",
    "check.C12": "循环与预算上限",
    "check.C13": "上下文管理与截断边界",
    "check.C14": "提示词前缀确定性",
    "check.C15": "追踪完整性与回放",
    "group.1": "状态保持自洽",
    "group.2": "不可信输入按不可信处理",
    "group.3": "失败是一等结果",
    "group.4": "边界可以关闭",
    "group.5": "有限资源有账可查",
    "group.6": "运行过程可观测",
    "md.title": "harness-audit 审计报告",
    "md.target": "审计目标",
    "md.commit": "提交",
    "md.not_git": "不是 git 仓库",
    "md.dirty": "有未提交改动",
    "md.engine": "引擎",
    "md.model": "模型",
    "md.checks": "检查项",
    "md.run": "运行",
    "md.started": "开始于 {when}",
    "md.seconds": "{n} 秒",
    "md.state.complete": "已完成",
    "md.state.cancelled": "**已取消(CANCELLED)**——结果不完整",
    "md.state.incomplete": "**未完成(INCOMPLETE)**——结果不完整",
    "md.files": "文件",
    "md.files_line": "分析 {scanned} 个,跳过 {skipped} 个,未能解析 {unparsed} 个",
    "md.resumed": "续跑",
    "md.resumed_line": "{checks} 沿用了被中断那次运行的结果",
    "md.ledger": "事件账本",
    "md.note": "说明",
    "md.result": "结论",
    "md.summary": "概览",
    "md.col.group": "方面",
    "md.col.checks": "检查项",
    "md.col.confirmed": "确认",
    "md.col.suspected": "可疑",
    "md.col.not_implemented": "未实现",
    "md.col.not_covered": "未覆盖",
    "md.section.confirmed": "确认的问题",
    "md.section.suspected": "可疑的问题",
    "md.section.not_implemented": "未实现的子系统",
    "md.empty.confirmed": "没有确认的问题。",
    "md.empty.suspected": "没有可疑的问题。",
    "md.empty.not_implemented": "没有检查项报告子系统缺失。",
    "md.check_level": "检查项级",
    "md.claim": "问题。",
    "md.consequence": "后果。",
    "md.fix": "修复方向。",
    "md.to_confirm": "需人工核实。",
    "md.also_at": "同样的代码还出现在 {where}(同一根因的其他构建产物或调用点)。",
    "md.same_site": "同一处代码,另有 {checks} 报告:",
    "md.same_site_elsewhere": "同一处代码另有 {checks} 报告,列在相应结论的标题下。",
    "md.source": "来源 {source} · 指纹 {fingerprint}",
    "md.source_lead": " · 静态线索 {lead}",
    "md.not_covered": "未覆盖",
    "md.all_ran": "所有选中的检查项都已跑完。",
    "md.not_covered_intro": "以下检查项没有跑完;这里没有结果的意思是**没有检查**,不是没有问题。",
    "md.col.check": "检查项",
    "md.col.status": "状态",
    "md.col.why": "原因",
    "md.missing": "缺少地标:{kinds}",
    "md.cost": "成本",
    "md.cost_line": "耗时 {seconds} 秒 · 输入 {input} · 输出 {output} · 缓存读取 {cache_read} · "
                    "缓存写入 {cache_write} · 推理 {reasoning} token",
    "md.cost_static": "耗时 {seconds} 秒 · 未调用模型:0 token,$0",
    "md.cost_host": "耗时 {seconds} 秒 · 协议调用 {calls} 次 · 宿主自己的模型:token 用量我们看不到",
    "md.cache_hit": "命中结果缓存",
    "md.per_check": "各检查项的耗时、token、发现与拒收",
    "md.col.unit": "单元",
    "md.col.time": "耗时(秒)",
    "md.col.requests": "请求数",
    "md.col.protocol_calls": "协议调用",
    "md.col.input": "输入",
    "md.col.output": "输出",
    "md.col.cache_read": "缓存读取",
    "md.col.cache_write": "缓存写入",
    "md.col.reasoning": "推理",
    "md.col.cost": "成本",
    "md.col.findings": "发现",
    "md.col.refusals": "拒收",
    "md.col.reason": "原因",
    "md.col.count": "次数",
    "md.unknown": "未知",
    "md.refusals": "证据拒收,按原因统计(发现与地标):",
    "md.no_refusals": "证据门没有拒收任何提交。",
    "md.refusal_list": "逐条列出被拒收的提交({n} 条)",
    "md.col.subject": "对象",
    "md.subject.finding": "发现",
    "md.subject.landmark": "地标",
    "md.col.submitted": "提交时的文件:行",
    "md.files_left_out": "未纳入审计的文件",
    "md.col.file": "文件",
    "md.skipped": "跳过:{why}",
    "md.unparsed": "未能解析:{why}",
    "md.analysis": "跨检查项分析(模型推断——未经证据校验)",
    "md.analysis_intro": "本节由模型撰写,讨论上面各条发现之间的相互影响。其中任何内容都没有经过证据门,请当作假设看待。",
    "md.suppressed": "已抑制",
    "md.suppressed_intro": "被审计代码里的 `harness-audit: ignore[...]` 标记抑制了以下发现,上面的统计不含它们。"
                           "加 `--no-suppressions` 可重新报告。",
    "md.suppressions_off": "本次运行忽略了代码内的抑制标记(`--no-suppressions`)。",
    "md.suppression_problems": "未生效的抑制标记:",
    "md.withheld": "暂扣:实测精度低的规则",
    "md.withheld_intro": "以下发现出自这样的规则:独立评审在从未用于调优的包上阅读代码后,判定其发现大多为误报,"
                         "因此低于本次运行的 `min_precision`({floor}),上面的统计不含它们。请把它们当作线索阅读;"
                         "加 `--min-precision low` 可作为发现报告。",
    "md.withheld_record": "{judged} 条中 {true} 条判为真(估计 {estimate})",
    "md.withheld_why": "规则 {rule}:评审过的 {judged} 条发现中 {true} 条判为真(估计 {estimate},精度 {tier}),"
                       "低于本次运行的 min_precision",
    "md.col.rule": "规则",
    "md.col.record": "评审",
    "md.col.where": "位置",
    "md.col.claim": "问题",
    "md.landmarks": "附录:使用中的地标",
    "md.landmark_counts": "地标:证据门接受 {accepted} 个 = 使用中 {in_use} 个(列于此处)+ 侦察中驳回 {dismissed} 个;"
                          "证据门拒收 {refused} 个。",
    "md.no_landmarks": "侦察没有找到任何地标。",
    "md.dismissed_landmarks": "侦察中被驳回、未交给任何检查使用的地标({n} 个):",
    "md.col.kind": "类型",
    "md.col.line": "行",
    "md.col.symbol": "符号",
    "md.col.confidence": "置信度",
    "md.resumed_mark": "(续跑)",
    "sarif.correct": "正确的代码怎么做",
    "sarif.explain": "`harness-audit explain {check}` 会打印完整的判据以及背后的规则。",
    "sarif.explain_short": "完整判据见 `harness-audit explain {check}`。",
    "sarif.fix": "修复。",
    "sarif.fix_inline": " 修复:{direction}",
    "sarif.to_confirm": " 需人工核实:{hint}",
    "sarif.lead_unaddressed": "(静态线索 {lead}:模型既没有确认也没有驳回它)",
    "sarif.lead_dismissed": "(静态线索 {lead},已被模型驳回)",
    "sarif.not_implemented": "{check} 未实现:{claim}",
    "sarif.related": "同一份源码在另一个构建产物里的相同代码",
    "html.filter_check": "检查项",
    "html.filter_verdict": "判定",
    "html.all": "全部",
    "html.grid": "检查项 × 判定",
    "html.cost_chart": "各检查项成本",
    "html.findings": "发现",
    "html.shown": "显示 {shown} / {total} 条",
    "html.seconds_axis": "秒",
    "html.tokens_axis": "token",
    "md.leads": "静态线索",
    "md.leads_intro": "共有 {n} 条静态线索交给模型核实:确认 {confirmed} 条,驳回 {dismissed} 条,未处理 {unaddressed} 条。"
                      "未处理的线索保留静态判定,列在上面的发现里;被驳回的不算发现,这里给出模型的理由,供读者自行判断。",
    "md.col.lead": "线索",
    "md.col.static_verdict": "静态判定",
    "picker.title": "选择要运行的检查项",
    "picker.keys": "↑/↓ 移动 · 空格勾选 · 回车开始(什么都不勾就跑 p1)· esc、q 或 ctrl-d 取消",
    "picker.legend": "★ 优先级 1:最常让 agent 运行出故障的七项检查(即 `p1` 预设)",
    "picker.p1": "七项优先级 1 的检查(★)",
    "picker.all": "全部十五项检查",
    "picker.chosen": "将运行:{checks}",
    "checks.title": "harness-audit 检查项(★ = 优先级 1,即 p1 预设)",
    "checks.col.id": "编号",
    "checks.col.name": "名称",
    "checks.col.group": "方面",
    "checks.col.prio": "优先级",
    "checks.col.requires": "所需地标",
    "checks.col.what": "查什么",
    "explain.rules": "静态规则",
    "explain.rule_doc_en": "英文原文",
    "explain.rule_docs_where": "每条规则的说明只有英文,写在规则代码旁边;要看某一条,运行 `harness-audit explain {example}`。",
}


def _merge(*parts: dict[str, str]) -> dict[str, str]:
    merged: dict[str, str] = {}
    for part in parts:
        twice = sorted(set(merged) & set(part))
        if twice:
            raise RuntimeError(f"message keys defined in two areas: {twice}")
        merged.update(part)
    return merged


from harness_audit.messages import _cli, _errors, _help, _host  # noqa: E402  (the areas need `Msg` defined first)

EN: dict[str, str] = _merge(_EN_CORE, _errors.EN, _help.EN, _cli.EN, _host.EN)
"""Every message in English."""
ZH: dict[str, str] = _merge(_ZH_CORE, _errors.ZH, _help.ZH, _cli.ZH, _host.ZH)
"""Every message in Chinese."""


_PATTERNS: dict[str, list[tuple[re.Pattern[str], str]]] = {}


def _patterns(prefix: str) -> list[tuple[re.Pattern[str], str]]:
    """One regular expression per message whose key starts with `prefix`: its English text, placeholders as
    groups. Such messages carry no format specs or conversions (a test keeps it so), so a match formats again."""
    if prefix not in _PATTERNS:
        found: list[tuple[re.Pattern[str], str]] = []
        for key, english in EN.items():
            if key.startswith(prefix):
                pattern = ""
                for literal, name, _, _ in string.Formatter().parse(english):
                    pattern += re.escape(literal)
                    if name:
                        pattern += f"(?P<{name}>.+?)"
                found.append((re.compile(pattern, re.DOTALL), key))
        # the most specific first: more fixed text wins over a placeholder that could swallow it
        found.sort(key=lambda item: -len(string.Formatter().vformat(EN[item[1]], (), _Blank())))
        _PATTERNS[prefix] = found
    return _PATTERNS[prefix]


class _Blank(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return ""


STORED_PREFIXES = ("note.", "arg.", "gate.", "file.")
"""Keys of messages that travel as English text (`note.*`: reports and ledgers; `arg.*`: argparse's `type=`
refusals; `gate.*`: the evidence gate's refusals, model input too; `file.*`: why a file was left out of an audit) and
are recognised again by `match_stored`."""


def match_stored(stored: str, prefix: str) -> Msg | None:
    """The message among those whose key starts with `prefix` that reads exactly `stored` in English, or None."""
    for pattern, key in _patterns(prefix):
        m = pattern.fullmatch(stored)
        if m:
            return Msg(key, **m.groupdict())
    return None


def localize_detail(detail: str, lang: str) -> str:
    """A progress event's detail in `lang`: a stored note, or `status: note` (how a unit ended and why; a plain
    status is dropped, as the line it goes into names the state already)."""
    head, sep, rest = detail.partition(": ")
    whole = localize(detail, lang)
    if whole != detail or not sep:
        return whole
    if f"state.{head}" in EN:  # a plain status (`cancelled`) the line already says; `failed:timeout` stays
        return localize(rest, lang)
    return f"{head}{sep}{localize(rest, lang)}"


def localize(stored: str, lang: str, prefix: str = "note.") -> str:
    """Text that reports and ledgers keep in English (a note, why a check did not run) in `lang`.

    Text that is one of the `note.*` messages is shown in `lang`; anything else (a model's words, an exception's
    text) stays as it was written. A report re-rendered from its ledger therefore reads the same as the first.
    """
    if lang == "en":
        return stored
    found = match_stored(stored, prefix)
    if found is None:
        return stored
    # a value may itself be stored text of the same kind (`line 3: not valid JSON (…)`)
    return Msg(found.key, **{k: localize(v, lang, prefix) if isinstance(v, str) else v
                             for k, v in found.values.items()}).render(lang)
