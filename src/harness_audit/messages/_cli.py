"""Messages: what the subcommands other than the audit print (jobs, runs, traces, diff, bench, host status lines),
and the notes stored as English text in reports and ledgers (`note.*`, shown in the reader's language by
`messages.localize`).

Each entry is `id: (English, Chinese)`.
"""

from __future__ import annotations

_PAIRS: dict[str, tuple[str, str]] = {
    # ------------------------------------------------------------------ background jobs (`jobs`, `job-output`)
    "jobs.none": ("no background audits under {path}", "{path} 下没有后台审计"),
    "jobs.progress.checks": ("{settled}/{total} checks", "检查项 {settled}/{total}"),
    "jobs.progress.recon": ("recon done", "侦察完成"),
    "jobs.progress.running": ("running {checks}", "正在运行 {checks}"),
    "jobs.list_sep": (", ", ","),
    "jobs.state.running": ("running", "运行中"),
    "jobs.state.cancelling": ("cancelling", "正在取消"),
    "jobs.state.complete": ("complete", "已完成"),
    "jobs.state.incomplete": ("incomplete", "未完成"),
    "jobs.state.cancelled": ("cancelled", "已取消"),
    "jobs.state.failed": ("failed", "失败"),
    "jobs.state.dead": ("dead", "已中止"),
    "jobs.line.tokens": (", {tokens} tokens", ",{tokens} token"),
    "jobs.line.tokens_unknown": (", tokens unknown", ",token 数未知"),
    "jobs.line.run_dir": ("run directory: {path}", "运行目录:{path}"),
    "jobs.line.recon": ("recon done: {n} landmarks{tokens}", "侦察完成:{n} 个地标{tokens}"),
    "jobs.line.started": ("{check} running", "{check} 运行中"),
    "jobs.line.done": ("{check} done: {findings} findings, {refused} refused{tokens}{cost}",
                       "{check} 完成:发现 {findings} 条,证据拒收 {refused} 次{tokens}{cost}"),
    "jobs.line.not_covered": ("{check} not covered: no {kinds} landmark", "{check} 未覆盖:没有 {kinds} 地标"),
    "jobs.line.failed": ("{check} {detail}: {findings} findings kept{tokens}",
                         "{check} {detail}:保留发现 {findings} 条{tokens}"),
    "jobs.line.cancelled_check": ("{check} cancelled", "{check} 已取消"),
    "jobs.line.because": (": {detail}", ":{detail}"),
    "jobs.line.reports": ("reports written ({state}): {paths}", "报告已写出({state}):{paths}"),
    "jobs.line.recon_unit": ("recon", "侦察"),
    "jobs.line.no_tokens": (" no tokens", "尚无 token"),
    "jobs.line.request_done": ("{unit} request answered: so far{so_far}{cost}", "{unit} 请求已应答:累计{so_far}{cost}"),
    "jobs.line.retrying": ("request failed; retrying", "请求失败,正在重试"),
    "jobs.line.request_retry": ("{unit}: {detail}", "{unit}:{detail}"),
    "jobs.dead": (" (its process ended without finishing; see output.log in the job directory)",
                  "(进程没有跑完就结束了;详情见任务目录里的 output.log)"),
    "jobs.internal": ("internal error: {error}", "内部错误:{error}"),
    "jobs.holder.foreground": ("a foreground audit (pid {pid})", "一个前台审计(pid {pid})"),
    "jobs.holder.job": ("job {job_id} (pid {pid})", "后台任务 {job_id}(pid {pid})"),
    "jobs.holder.other": ("another audit", "另一个审计"),
    # ------------------------------------------------------------------ notes stored in English, shown translated
    "note.dropped": ("{check} not run: priority {priority} is above priority_floor = {floor}",
                     "{check} 未运行:优先级 {priority} 高于 priority_floor = {floor}"),
    "note.cancelled_early": ("cancelled before the checks finished", "检查项完成之前已被取消"),
    "jobs.started": ("started {engine} audit of {root} for {checks} in the background",
                     "已在后台启动 {engine} 引擎对 {root} 的审计,检查项 {checks}"),
    "jobs.follow": ("follow: {command}", "跟进:{command}"),
    "jobs.cancel": ("cancel: {command}", "取消:{command}"),
    # ------------------------------------------------------------------ resume, replay, cancel
    "runs.cancel_requested": ("cancel requested for {name}; the run stops its requests and writes a partial report",
                              "已请求取消 {name};该运行会停止发出请求,并写出一份部分报告"),
    "runs.job_over": ("{job_id} is already over ({state}); nothing to cancel", "{job_id} 已经结束({state}),无需取消"),
    "runs.job_cancel_requested": ("cancel requested for {job_id}; it stops and writes a partial report marked "
                                  "cancelled (harness-audit job-output {job_id} --follow)",
                                  "已请求取消 {job_id};它会停下并写出一份标为已取消的部分报告"
                                  "(harness-audit job-output {job_id} --follow)"),
    "note.ended_before_check": ("the run ended before this check finished", "这一项检查完成之前运行就结束了"),
    "note.resumed": ("Resumed run {run_id}.", "续跑了运行 {run_id}。"),
    "note.replayed": ("Replayed from run {run_id}.", "由运行 {run_id} 回放而来。"),
    "note.rerendered": ("Re-rendered from the ledger.", "根据事件账本重新生成。"),
    "note.navigation_text": ("find_symbol/find_references fell back to text search for some files (no symbol index).",
                             "部分文件没有符号索引,find_symbol/find_references 退回了文本搜索。"),
    "note.static_recon_enough": ("Static recon found every required landmark; no recon subagent ran.",
                                 "静态侦察已找到所有必需的地标,没有运行侦察子智能体。"),
    "note.recon_failed": ("Recon failed ({error}).", "侦察失败({error})。"),
    "note.host_cost": ("The host's own model audited this run; its tokens and cost are the host's and unknown here.",
                       "本次运行由宿主自己的模型审计;token 和成本记在宿主那边,这里无从得知。"),
    "note.suppression_unknown": ("suppression at {where} names {ids}; expected check or rule ids, e.g. ignore[C8]",
                                 "{where} 处的抑制标记写的是 {ids};应为检查项或规则编号,例如 ignore[C8]"),
    "note.suppression_no_ids": ("suppression at {where} names no check; expected check or rule ids, e.g. ignore[C8]",
                                "{where} 处的抑制标记没有写检查项;应为检查项或规则编号,例如 ignore[C8]"),
    "note.suppression_no_reason": ("suppression at {where} gives no reason; write one after the brackets, e.g. "
                                   "`# harness-audit: ignore[{check}] retried by the queue, not here`",
                                   "{where} 处的抑制标记没有给理由;请写在方括号后面,例如 "
                                   "`# harness-audit: ignore[{check}] 由队列负责重试,不在这里`"),
    "note.protocol_limit": ("protocol-call limit {n} reached", "已达到 {n} 次协议调用的上限"),
    "note.host_not_audited": ("not audited: the host finished before this check was handed out",
                              "未审计:这个检查项还没分配出去,宿主就结束了运行"),
    # ------------------------------------------------------------------ why a file was left out, stored in English
    "file.not_utf8": ("not readable as UTF-8 text", "不是可读的 UTF-8 文本"),
    "file.syntax": ("syntax error at line {line}: {detail}", "第 {line} 行有语法错误:{detail}"),
    "file.syntax_near": ("partially parsed: syntax error near line {line}", "只解析了一部分:第 {line} 行附近有语法错误"),
    "file.too_deep": ("nested more than {n} levels deep: too deep to analyse", "嵌套超过 {n} 层,太深,无法分析"),
    "file.too_deep_parser": ("nested too deeply for Python's parser", "嵌套太深,Python 的解析器处理不了"),
    "file.skip.binary": ("binary", "二进制文件(binary)"),
    "file.skip.too_large": ("too-large", "文件过大(too-large)"),
    "file.skip.undecodable": ("undecodable", "无法解码(undecodable)"),
    "file.skip.unreadable": ("unreadable", "无法读取(unreadable)"),
    "file.skip.outside_workspace": ("outside-workspace", "在工作区之外(outside-workspace)"),
    "file.skip.excluded_target": ("excluded-target", "被排除的目标(excluded-target)"),
    "file.skip.minified": ("minified", "压缩过的代码(minified)"),
    "file.skip.credential_file": ("credential-file", "凭据文件(credential-file)"),
    "file.skip.special_file": ("special-file", "不是普通文件(special-file)"),
    "file.skip.unreadable_directory": ("unreadable-directory", "目录无法读取(unreadable-directory)"),
    "file.skip.undecodable_name": ("undecodable-name", "文件名无法解码(undecodable-name)"),
}

EN: dict[str, str] = {key: pair[0] for key, pair in _PAIRS.items()}
"""English."""
ZH: dict[str, str] = {key: pair[1] for key, pair in _PAIRS.items()}
"""Chinese."""
