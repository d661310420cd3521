"""The fifteen checks as data, and the one parser of check selections."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from importlib import resources

from harness_audit.catalogue.spec import CheckSpec, Group
from harness_audit.errors import UsageError
from harness_audit.findings import CheckId
from harness_audit.findings import LandmarkKind as L
from harness_audit.messages import Msg

__all__ = ["CHECKS", "CRITERIA_HEADINGS", "P1", "CheckId", "CheckSpec", "Group", "criteria_section", "criteria_text",
           "parse_selection", "shared_rules", "spec"]

_C = CheckId
CHECKS: dict[CheckId, CheckSpec] = {
    s.id: s
    for s in (
        CheckSpec(
            id=_C.C1, stem="c01_tool_call_pairing", title="Tool-call pairing completeness", group=Group.STATE,
            priority=1, requires=(L.TOOL_EXECUTION,), also_useful=(L.HISTORY_APPEND, L.AGENT_LOOP),
            gloss_en="Every tool call gets exactly one result in history, on every exit path.",
            gloss_zh="每个工具调用在任何结束路径上都恰好写回一个结果。",
        ),
        CheckSpec(
            id=_C.C2, stem="c02_append_only_history", title="History is append-only", group=Group.STATE,
            priority=2, requires=(L.HISTORY_APPEND,), also_useful=(L.TRUNCATION,),
            gloss_en="Messages already in history are never edited in place; new ones are appended.",
            gloss_zh="已写入历史的消息不被原地修改,只追加新消息。",
        ),
        CheckSpec(
            id=_C.C3, stem="c03_crash_checkpoint", title="Crash and checkpoint semantics", group=Group.STATE,
            priority=2, requires=(L.HISTORY_APPEND,), also_useful=(L.AGENT_LOOP,),
            gloss_en="A crash mid-write never leaves state that reads as complete.",
            gloss_zh="写到一半崩溃时,留下的半截状态不会被当成完整状态读回。",
        ),
        CheckSpec(
            id=_C.C4, stem="c04_model_output_parsing", title="Model output parsing", group=Group.UNTRUSTED_INPUT,
            priority=1, requires=(L.STREAM_PARSE,), also_useful=(L.RETRY,),
            gloss_en="Malformed, truncated or duplicated model output is handled, not trusted.",
            gloss_zh="模型输出的参数非法、被截断或编号重复时被处理,而不是被当成可信输入。",
        ),
        CheckSpec(
            id=_C.C5, stem="c05_path_boundaries", title="Path and sandbox boundaries", group=Group.UNTRUSTED_INPUT,
            priority=2, requires=(L.TOOL_EXECUTION,), also_useful=(L.PROCESS_SPAWN,),
            gloss_en="A path from the model is resolved through symlinks and kept inside the workspace.",
            gloss_zh="模型给出的路径在解析符号链接之后与工作区根目录比对,不能越界。",
        ),
        CheckSpec(
            id=_C.C6, stem="c06_secrets_environment", title="Secrets and ambient environment",
            group=Group.UNTRUSTED_INPUT, priority=2, requires=(L.PROCESS_SPAWN,), also_useful=(L.TOOL_EXECUTION,),
            gloss_en="Commands the model writes do not inherit the harness's API keys.",
            gloss_zh="模型生成的命令不会继承 harness 环境里的密钥。",
        ),
        CheckSpec(
            id=_C.C7, stem="c07_error_taxonomy", title="Error taxonomy and retryability", group=Group.FAILURE,
            priority=2, requires=(L.TOOL_EXECUTION,), also_useful=(L.RETRY, L.HTTP_CALL),
            gloss_en="Failures carry a closed error code that says whether to retry.",
            gloss_zh="失败带有封闭的错误码,并明确是否可重试。",
        ),
        CheckSpec(
            id=_C.C8, stem="c08_partial_success", title="Partial success", group=Group.FAILURE, priority=2,
            requires=(L.TOOL_EXECUTION,), also_useful=(),
            gloss_en="One failure in a batch never throws away the siblings' results.",
            gloss_zh="一批操作里一个失败,不会连带丢掉其余成功的结果。",
        ),
        CheckSpec(
            id=_C.C9, stem="c09_idempotency", title="Idempotency and side-effect safety", group=Group.FAILURE,
            priority=1, requires=(L.RETRY,), also_useful=(L.TOOL_EXECUTION, L.HTTP_CALL),
            gloss_en="A retry never repeats a side effect (a sent message, a write, a charge).",
            gloss_zh="重试不会重复执行已生效的副作用(发消息、写文件、扣款)。",
        ),
        CheckSpec(
            id=_C.C10, stem="c10_cancellation", title="Cancellation propagation", group=Group.BOUNDARIES,
            priority=1, requires=(L.AGENT_LOOP,), also_useful=(L.PROCESS_SPAWN, L.HTTP_CALL, L.TOOL_EXECUTION),
            gloss_en="Stop really stops: requests, child processes and timers all end.",
            gloss_zh="点了停止就真的停:请求、子进程和计时器都被终止。",
        ),
        CheckSpec(
            id=_C.C11, stem="c11_timeout_layering", title="Timeout layering", group=Group.BOUNDARIES, priority=2,
            requires=(L.TOOL_EXECUTION,), also_useful=(L.HTTP_CALL, L.PROCESS_SPAWN),
            gloss_en="A slow tool surfaces as that tool's timeout, not a raw low-level error.",
            gloss_zh="工具超时以该工具的分类超时呈现,而不是底层连接错误。",
        ),
        CheckSpec(
            id=_C.C12, stem="c12_loop_budget", title="Loop and budget limits", group=Group.BOUNDARIES,
            priority=1, requires=(L.AGENT_LOOP,), also_useful=(),
            gloss_en="Turns, tool calls and time have hard ceilings with a distinct status.",
            gloss_zh="轮数、工具调用次数和时长有硬上限,触顶时有明确状态。",
        ),
        CheckSpec(
            id=_C.C13, stem="c13_context_truncation", title="Context management and truncation boundaries",
            group=Group.RESOURCES, priority=1, requires=(L.TRUNCATION,),
            also_useful=(L.HISTORY_APPEND, L.REQUEST_ASSEMBLY),
            gloss_en="Long sessions are trimmed without cutting a tool call from its result.",
            gloss_zh="会话变长时有上下文管理,且截断不会切开调用与结果的配对。",
        ),
        CheckSpec(
            id=_C.C14, stem="c14_prefix_determinism", title="Prompt prefix determinism", group=Group.RESOURCES,
            priority=1, requires=(L.REQUEST_ASSEMBLY,), also_useful=(L.SYSTEM_PROMPT_BUILD,),
            gloss_en="Everything before the newest message is byte-identical, so prefix caches hit.",
            gloss_zh="最新消息之前的内容逐字节稳定,服务端前缀缓存才能命中。",
        ),
        CheckSpec(
            id=_C.C15, stem="c15_trace_replay", title="Trace completeness and replay", group=Group.OBSERVABILITY,
            priority=2, requires=(L.HISTORY_APPEND,), also_useful=(L.AGENT_LOOP,),
            gloss_en="Each run leaves a correlated event record complete enough to reconstruct it.",
            gloss_zh="每次运行留下可关联的事件记录,足以事后重建。",
        ),
    )
}

P1: tuple[CheckId, ...] = tuple(c for c, s in CHECKS.items() if s.priority == 1)

_ID_RE = re.compile(r"^[cC]0*([0-9]{1,3})$")
"""ASCII digits only: `\\d` would also take `C١` (Arabic-Indic) or `C１` (fullwidth) as C1."""
_RULE_RE = re.compile(r"^(?:[cC]0*([0-9]{1,3})/)?([a-z0-9]+(?:-[a-z0-9]+)+)$")


def spec(check: CheckId) -> CheckSpec:
    """The catalogue entry of one check."""
    return CHECKS[check]


CRITERIA_HEADINGS: dict[str, tuple[str, ...]] = {
    "en": ("Symptom", "Invariant", "Look at", "Confirmed", "Suspected", "Not implemented", "Defect shapes",
           "Correct shapes (no finding)"),
    "zh": ("症状", "不变量", "看哪里", "确认", "可疑", "未实现", "缺陷写法", "正确写法(不报告)"),
}
"""The `##` sections every criteria file has, in this order, per language (`tests/test_catalogue.py` holds each
file to them)."""


def _criteria_file(name: str, lang: str) -> str:
    folder = resources.files("harness_audit.catalogue.criteria")
    if lang == "zh":
        folder = folder.joinpath("zh")
    return folder.joinpath(name).read_text(encoding="utf-8")


@cache
def criteria_text(check: CheckId, lang: str = "en") -> str:
    """The criteria prose of one check: English, as handed to model subagents (model input, never translated), or
    the Chinese version `explain` and the reports show a Chinese reader (`lang="zh"`)."""
    return _criteria_file(f"{CHECKS[check].stem}.md", "zh" if lang == "zh" else "en")


@cache
def shared_rules(lang: str = "en") -> str:
    """The evidence and verdict rules every auditor works under (`criteria/_shared.md`), in English or Chinese."""
    return _criteria_file("_shared.md", "zh" if lang == "zh" else "en")


def criteria_section(check: CheckId, index: int, lang: str = "en") -> str:
    """The body of one `##` section of a check's criteria, by its place in `CRITERIA_HEADINGS` (empty if absent)."""
    heading = CRITERIA_HEADINGS["zh" if lang == "zh" else "en"][index]
    out: list[str] = []
    inside = False
    for line in criteria_text(check, lang).splitlines():
        if line.startswith("## "):
            inside = line[3:].strip() == heading
            continue
        if inside:
            out.append(line)
    return "\n".join(out).strip()


@cache
def rule_index() -> dict[str, CheckId]:
    """Every static rule id (`C8/parallel-batch-all-or-nothing`) and its check, from the generated `rules.txt`.

    The list is written by `scripts/generate_docs.py` from the rule registry (a test fails while it is stale), so
    selections can name rules without importing the static engine.
    """
    text = resources.files("harness_audit.catalogue").joinpath("rules.txt").read_text(encoding="utf-8")
    out: dict[str, CheckId] = {}
    for line in text.splitlines():
        if line.strip() and not line.startswith("#"):
            out[line.strip()] = CheckId(line.split("/", 1)[0])
    return out


def _rule_check(part: str, origin: Msg) -> CheckId | None:
    """The check a rule id (`C8/name`) or a bare rule name (unique across checks) belongs to."""
    m = _RULE_RE.match(part)
    if m is None:
        return None
    index = rule_index()
    if m.group(1) is not None:
        rule_id = f"C{int(m.group(1))}/{m.group(2)}"
        if rule_id in index:
            return index[rule_id]
        raise UsageError("err.selection.unknown_rule", part=part, origin=origin,
                         check=f"C{int(m.group(1))}", forms=Msg("err.selection.forms"))
    owners = sorted({c for rid, c in index.items() if rid.split("/", 1)[1] == m.group(2)}, key=lambda c: c.number)
    if len(owners) == 1:
        return owners[0]
    if len(owners) > 1:
        raise UsageError("err.selection.ambiguous_rule", part=part, origin=origin, checks=", ".join(owners),
                         example=f"{owners[0]}/{part}")
    return None


def parse_selection(tokens: Iterable[str], *, origin: Msg | None = None) -> tuple[CheckId, ...]:
    """Parse a check selection into check ids in catalogue order: the one grammar of every subcommand.

    Accepted: `C1`, `c1`, `c01`, `C1,C9`, `C1 C9` (one token or several), rule ids `C8/<rule-name>` and bare rule
    names where a check is meant, `p1` or `all`. A preset mixed with ids, an unknown id or any other text is
    refused with a `UsageError` that names the offending text and `origin` (where the selection came from; default
    "the check selection"); nothing is ever replaced by a default.
    """
    origin = origin or Msg("origin.selection")
    forms = Msg("err.selection.forms")
    parts: list[str] = []
    for token in tokens:
        pieces = [p.strip() for p in token.split(",")]
        if any(p == "" for p in pieces) and token.strip() != "":
            raise UsageError("err.selection.empty_item", token=token, origin=origin, forms=forms)
        parts.extend(word for p in pieces for word in p.split())  # `'C1 C9'` as one argument, as --help shows
    if not parts:
        raise UsageError("err.selection.empty", origin=origin, forms=forms)
    presets = [p for p in parts if p.lower() in {"p1", "all"}]
    if presets:
        if len(parts) > 1:
            raise UsageError("err.selection.preset_mixed", preset=presets[0],
                             items=", ".join(map(repr, parts)), origin=origin, forms=forms)
        return P1 if presets[0].lower() == "p1" else tuple(CHECKS)
    chosen: set[CheckId] = set()
    for part in parts:
        m = _ID_RE.match(part)
        if m and 1 <= int(m.group(1)) <= 15:
            chosen.add(CheckId(f"C{int(m.group(1))}"))
            continue
        check = None if m else _rule_check(part, origin)
        if check is None:
            raise UsageError("err.selection.unknown", part=part, origin=origin, forms=forms)
        chosen.add(check)
    return tuple(c for c in CHECKS if c in chosen)
