"""Messages: the host-model protocol's text (`harness-audit host …`): the recon and check instructions, each step's
answer, `status` and `finish`. The MCP server speaks English (its reader is a model); the shell verbs speak the
command line's language.

Each entry is `id: (English, Chinese)`.
"""

from __future__ import annotations

_PAIRS: dict[str, tuple[str, str]] = {
    # ------------------------------------------------------------------ begin
    "host.head.workspace": ("workspace: {root}", "工作区:{root}"),
    "host.head.leads": ("static leads: {counts} (each check lists its own at `next`; a check with none is read "
                        "from its landmarks and your own search)",
                        "静态线索:{counts}(每个检查项在 `next` 时列出自己的线索;没有线索的检查项从地标和你自己的搜索读起)"),
    "host.head.checks": ("checks: {checks}", "检查项:{checks}"),
    "host.where": ("The run's state is kept in output-dir, and finish writes the reports there.",
                   "运行的状态保存在 output-dir 里,finish 也把报告写到那里。"),
    "host.where.named": (" Every command printed here names it with --output-dir; copy them as printed.",
                         "这里打印的每条命令都用 --output-dir 指明了它;照原样复制即可。"),
    "host.where.default": (" It is the default output directory of your working directory: the printed commands "
                           "find the run from here without naming it.",
                           "它就是你当前工作目录的默认输出目录:打印出的命令不用指明它,在这里就能找到这次运行。"),
    "host.how_to_cite": ("# How to cite", "# 如何引用"),
    "host.scope": (
        "## Scope\nOnly first-party files of the workspace count. Dependency and build directories (`node_modules`, "
        "`.venv`,\n`site-packages`, `vendor`, `dist`, `build`, ...) are out of scope; the gate refuses them. Cite "
        "paths relative\nto the workspace root. Read files with your own tools; nothing you send can make "
        "harness-audit read outside the\nworkspace or write anywhere but its output directory.\n",
        "## 范围\n只有工作区里的第一方文件才算数。依赖和构建目录(`node_modules`、`.venv`、`site-packages`、`vendor`、"
        "`dist`、`build` 等)不在范围内,证据门会拒收它们。引用相对于工作区根目录的路径。用你自己的工具读文件;"
        "你发送的任何内容都不能让 harness-audit 读取工作区之外的东西,也不能让它往输出目录以外的地方写。\n"),
    "host.lines": (
        "## Lines\nCite the defect's own line and quote lines that include it. The gate looks for your excerpt within "
        "3 lines of\nthe line you cite and records the finding (or a landmark given `evidence`) at your line when the "
        "excerpt covers it,\nelse where the excerpt starts; it never moves a line otherwise. A lone `break`, `return` "
        "or list item is too thin\nto quote: quote the statement before it with it. The answer says the line it "
        "recorded when it differs from yours.\n",
        "## 行号\n给出缺陷所在的那一行,引用包含这一行的若干行代码。证据门在你给出行号的前后 3 行内查找你的摘录;"
        "摘录覆盖你给的那一行时,发现(或带 `evidence` 的地标)就记在那一行,否则记在摘录开始的那一行;除此之外它从不"
        "挪动行号。单独的 `break`、`return` 或列表项太短,不能单独引用:连同它前面的语句一起引用。记录的行号和你给的"
        "不同时,回答里会说明。\n"),
    # ------------------------------------------------------------------ recon
    "host.recon.title": ("## Recon", "## 侦察"),
    "host.recon.accepted": ("Landmarks already located and accepted ({n}, at {places} places: static recon and the "
                            "semantic roles often find the same one; the kinds this run's checks use, a few each, "
                            "the harness's own code rather than tests or examples; every place is listed in {file}):",
                            "已经定位并通过证据门的地标({n} 个,位于 {places} 处:静态侦察与语义角色常找到同一处;只列本次检查项"
                            "用到的种类,每类几个,列 harness 自身的代码而非测试或示例;每一处都列在 {file}):"),
    "host.landmarks.kind": ("- {kind} ({n}):", "- {kind}({n} 个):"),
    "host.more_in_listing": (" … and {n} more in {file}", " ……另有 {n} 个,见 {file}"),
    "host.landmarks.more": ("  - … and {n} more in {file}", "  - ……另有 {n} 个,见 {file}"),
    "host.landmarks.more_in_tests": ("  - … and {n} in test or example code, in {file}",
                                     "  - ……另有 {n} 个在测试或示例代码中,见 {file}"),
    "host.recon.missing": ("Still missing, so these checks would be skipped as not covered:",
                           "仍然缺少以下地标,相应的检查项会被记为未覆盖而跳过:"),
    "host.recon.missing_line": ("- {kind} (needed by {checks}): {guide}", "- {kind}({checks} 需要):{guide}"),
    "host.recon.all_found": ("Every required kind has a landmark. Static recon guesses: read the ones your checks "
                             "rely on, dismiss the wrong ones, add the places it missed, then go on to the checks.",
                             "每类必需的地标都至少有一个。静态侦察只是猜测:读一读检查要依赖的地标,驳回错的,补上漏掉的,"
                             "再进入检查。"),
    "host.recon.thin": ("Not located in the harness's own code (look for these before `next`):",
                        "在 harness 自身代码中没有定位到(`next` 之前先找一找):"),
    "host.recon.thin_line": ("- {kind} ({users}): {why}", "- {kind}({users}):{why}"),
    "host.recon.thin_tests": ("only in test or example code", "只在测试或示例代码中"),
    "host.recon.thin_none": ("none located", "一个也没有"),
    "host.recon.kinds": ("The eleven landmark kinds, with the checks of this run that need or use each:",
                         "十一类地标,以及本次运行中需要或用到每一类的检查项:"),
    "host.recon.kind_line": ("- {kind} ({users}): {guide}", "- {kind}({users}):{guide}"),
    "host.recon.report": ("Report each landmark you locate, after reading it, with {step}. Report every place that "
                          "matters, not only the first. With the line's code as evidence the gate checks it like a "
                          "finding's excerpt and records the landmark where it matches.",
                          "读过代码之后,用 {step} 上报你定位到的每个地标。每一处要紧的地方都要报,不只是第一处。"
                          "把那一行代码作为证据时,证据门会像核对发现的摘录一样核对它,并把地标记在匹配的那一行。"),
    "host.recon.dismiss": ("A listed landmark that is wrong: dismiss it with {step}. Landmarks only guide the checks "
                           "and never become findings; a dismissed one is listed in the report with your reason, no "
                           "check is shown it, and a check left with no landmark of a kind it needs is not covered.",
                           "列表里有错的地标:用 {step} 驳回它。地标只给检查项引路,绝不会变成发现;被驳回的地标会带着"
                           "你的理由列在报告里,不会交给任何检查项,某个检查项若因此缺少它需要的那类地标,就记为未覆盖。"),
    "host.recon.budget": ("Recon may make {n} protocol calls (each landmark and dismissal, accepted or refused).",
                          "侦察最多可以发起 {n} 次协议调用(每次上报或驳回地标都算,不论被接受还是被拒收)。"),
    "host.recon.done": ("When recon is done: {step}. That closes recon for good: report the landmarks you found "
                        "first.", "侦察结束后:{step}。这一步会永久结束侦察:先上报你找到的地标。"),
    "host.recon.unused": ("- {n} more places of kinds no check of this run uses, in {file}",
                          "- 另有 {n} 处属于本次运行的检查项都用不到的种类,见 {file}"),
    "host.args.landmark": ("kind, file, line, symbol, confidence, evidence", "kind、file、line、symbol、confidence、evidence"),
    "host.args.dismiss_landmark": ("kind, file, line, reason", "kind、file、line、reason"),
    "host.args.dismiss": ("lead, reason", "lead、reason"),
    "host.args.report": ("check, verdict, file, line, evidence, claim, consequence, direction, confirm_hint, lead",
                         "check、verdict、file、line、evidence、claim、consequence、direction、confirm_hint、lead"),
    "host.args.report_shell": ("--check {check} --verdict confirmed|suspected|not-implemented --file PATH --line N "
                               "--evidence 'EXACT LINES' --claim '…' --consequence '…' [--direction '…'] "
                               "[--confirm-hint '…' (required for suspected)] [--lead LEAD (the lead it confirms)]",
                               "--check {check} --verdict confirmed|suspected|not-implemented --file PATH --line N "
                               "--evidence '原样的代码行' --claim '…' --consequence '…' [--direction '…'] "
                               "[--confirm-hint '…'(可疑时必填)] [--lead LEAD(它所确认的线索)]"),
    "host.users.need": ("needed by {checks}", "{checks} 需要"),
    "host.users.use": ("used by {checks}", "{checks} 用到"),
    "host.users.sep": ("; ", ";"),
    "host.users.none": ("no check of this run", "本次运行没有检查项用到"),
    "host.landmark.in": (" in `{symbol}`", ",位于 `{symbol}`"),
    # ------------------------------------------------------------------ a check
    "host.check.landmarks": ("## Landmarks for {check}", "## {check} 的地标"),
    "host.check.leads": ("## Leads from the static rules", "## 来自静态规则的线索"),
    "host.check.leads_intro": ("Each lead is a machine guess. Read the code; confirm a true one by reporting it as a "
                               "finding, dismiss a wrong one with {step}.",
                               "每条线索都是机器的猜测。先读代码;对的线索就把它作为发现上报来确认,错的就用 {step} 驳回。"),
    "host.check.lead_dismissed": (" — dismissed: {reason}", " —— 已驳回:{reason}"),
    "host.check.lead_on_dismissed_landmark": (" — you dismissed the landmark at this line in recon: {reason}",
                                              " —— 侦察时你驳回了这一行的地标:{reason}"),
    "host.check.lead_same_place": (" — same place as {lead}: one report there without --lead settles both",
                                   " —— 与 {lead} 同一处:在那里报告一次且不带 --lead 即可同时结算两条"),
    "host.check.lead_line": ("- {lead}: {where} [{verdict}] {claim} (rule {rule}){state}",
                             "- {lead}:{where} [{verdict}] {claim}(规则 {rule}){state}"),
    "host.check.reporting": ("## Reporting", "## 上报"),
    "host.check.report": ("Report each finding for {check} only, after reading the code, with {step}.",
                          "读过代码之后,用 {step} 上报 {check} 的每一条发现,只报这一项。"),
    "host.check.budget": ("You have {n} protocol calls for this check: each report and dismissal counts, accepted or "
                          "refused (next, status and finish do not), and each answer says how many are left. A call "
                          "past the last is refused and ends the check as failed (budget-exhausted); what was accepted "
                          "is kept. No finding is a valid result when the code is correct.",
                          "这个检查项你有 {n} 次协议调用:每次上报和驳回都算,不论被接受还是被拒收(next、status 和 "
                          "finish 不算),每次回答都会说还剩几次。超出的调用会被拒收,并让这个检查项以失败"
                          "(budget-exhausted)结束;已经接受的内容会保留。代码正确时,没有发现也是合理的结果。"),
    "host.check.done": ("When this check is done: {step}. Best in a fresh subagent per check, where your host has "
                        "them.",
                        "这个检查项做完后:{step}。如果你的宿主支持子智能体,最好每个检查项用一个新的子智能体。"),
    # ------------------------------------------------------------------ each step's answer
    "host.refused.budget": ("Not accepted: {unit} has used all {n} protocol calls of its budget; what it reported is "
                            "kept. Move on with {step}.",
                            "未接受:{unit} 已用完预算里全部 {n} 次协议调用;已上报的内容会保留。请用 {step} 继续。"),
    "host.refused.recon_over_landmark": ("Not accepted: recon is over (next_check was called); landmarks are "
                                         "reported before the first check.",
                                         "未接受:侦察已结束(已经调用过 next_check);地标要在第一个检查项之前上报。"),
    "host.refused.recon_over_dismiss": ("Not accepted: recon is over (next_check was called); landmarks are "
                                        "dismissed before the first check.",
                                        "未接受:侦察已结束(已经调用过 next_check);地标要在第一个检查项之前驳回。"),
    "host.refused.unknown_landmark": ("Not accepted: no {kind!r} landmark at {where} is in use (that kind is at: "
                                      "{known}); name one as the recon list shows it (kind, file, line).",
                                      "未接受:{where} 处没有正在使用的 {kind!r} 地标(这类地标在:{known});"
                                      "请按侦察列表所示给出一个(kind、file、line)。"),
    "host.refused.landmark_reason": ("Not accepted: say in a sentence why the landmark is wrong (what the code "
                                     "there does instead); the reason goes into the report.",
                                     "未接受:请用一句话说明这个地标为什么错(那里的代码实际在做什么);理由会写进报告。"),
    "host.none": ("none", "无"),
    "host.dismissed_landmark": ("Dismissed the {kind} landmark at {where}: {reason} {left}",
                                "已驳回 {where} 处的 {kind} 地标:{reason} {left}"),
    "host.no_landmark_left": ("No {kind} landmark is left: {checks} will be not covered unless you report the right "
                              "one.",
                              "已经没有 {kind} 地标了:除非你上报正确的那个,否则 {checks} 会记为未覆盖。"),
    "host.refused.gate": ("Refused ({reason}): {message}. Correct it and resubmit, or drop it. {left}",
                          "被拒收({reason}):{message}。改正后重新提交,或者放弃它。{left}"),
    "host.moved": (" (you cited line {line}, which your excerpt does not cover; recorded where it starts)",
                   "(你引用的是第 {line} 行,摘录未覆盖该行;记录在摘录开始的那一行)"),
    "host.accepted_landmark": ("Accepted: {kind} at {where}{moved}. {left}", "已接受:{where}{moved} 处的 {kind}。{left}"),
    "host.check_level": ("check level", "检查项级"),
    "host.accepted_finding": ("Accepted: {check} {verdict} at {where}. {left}", "已接受:{check} {verdict},位置 {where}。{left}"),
    "host.left": ("({n} protocol calls left for {unit})", "({unit} 还剩 {n} 次协议调用)"),
    "host.left_one": ("(1 protocol call left for {unit})", "({unit} 还剩 1 次协议调用)"),
    "host.next.nothing_yet": ("Not closed: you have reported nothing for {check} and dismissed none of its leads. A "
                              "closed check reads \"ran, nothing found\" in every report and cannot be reopened. "
                              "Report what you found (or dismiss its leads with reasons); if you read its code and "
                              "it holds, close it with {step}.",
                              "未结束:你还没有为 {check} 报告任何发现,也没有驳回它的任何线索。结束后的检查项在每份报告里都显示为"
                              "“已运行,无发现”,且无法重新打开。请先报告你的发现(或说明理由驳回线索);如果读过代码确认它成立,用 "
                              "{step} 结束。"),
    "host.next.closed": ("next: closed {check} (ran).", "next:已结束 {check}(已运行)。"),
    "host.next.recon_closed": ("next: closed recon.", "next:已结束侦察。"),
    "host.finish_now": ("finish: every check is done. Write the reports with {step}.",
                        "finish:所有检查项都已完成。用 {step} 写出报告。"),
    "host.not_covered": ("{check} not covered (no {kinds} landmark)", "{check} 未覆盖(没有 {kinds} 地标)"),
    "host.refused.no_check": ("Not accepted: no check is handed out now. Call {step} to get one.",
                              "未接受:现在没有分配中的检查项。调用 {step} 拿一个。"),
    "host.refused.no_check_dismiss": ("Not accepted: no check is handed out now; call {step}.",
                                      "未接受:现在没有分配中的检查项;请调用 {step}。"),
    "host.refused.not_a_lead": ("Not accepted: {lead!r} is not a lead of {check}; name one the check listed, or leave "
                                "the lead out.",
                                "未接受:{lead!r} 不是 {check} 的线索;请给出检查项列出的线索,或者不填 lead。"),
    "host.refused.unknown_lead": ("Not accepted: {lead!r} is not a lead of {check} (its leads: {known}).",
                                  "未接受:{lead!r} 不是 {check} 的线索(它的线索:{known})。"),
    "host.refused.lead_reason": ("Not accepted: say in a sentence why the lead is wrong (what the code does "
                                 "instead); the reason goes into the report.",
                                 "未接受:请用一句话说明这条线索为什么错(代码实际在做什么);理由会写进报告。"),
    "host.refused.bulk_budget_landmarks": ("Not dismissed: {n} landmarks need {n} protocol calls and {left} are "
                                           "left; dismiss fewer at once.",
                                           "未驳回:{n} 个地标需要 {n} 次协议调用,只剩 {left} 次;请一次少驳回几个。"),
    "host.refused.bulk_budget": ("Not dismissed: {n} leads need {n} protocol calls and {left} are left; dismiss fewer "
                                 "at once.", "未驳回:{n} 条线索需要 {n} 次协议调用,只剩 {left} 次;请一次少驳回几条。"),
    "host.dismissed_lead": ("Dismissed {lead}: {reason} {left}", "已驳回 {lead}:{reason} {left}"),
    # ------------------------------------------------------------------ finish
    "host.finished": ("finished: {run_id} ({state})", "已结束:{run_id}({state})"),
    "host.finished_counts": ("{confirmed} confirmed, {suspected} suspected, {not_implemented} not implemented, "
                             "{refused} refused by the gate",
                             "确认 {confirmed} 条,可疑 {suspected} 条,未实现 {not_implemented} 条,证据拒收 {refused} 次"),
    "host.finished_static_refused": ("of those refusals, {n} are static candidates that never became leads and {yours} "
                                     "are your own reports",
                                     "其中 {n} 次是从未成为线索的静态候选,{yours} 次是你自己的报告"),
    "host.status.task_hint": ("the open check's text again: {step}", "再看一遍当前检查项的内容:{step}"),
    "host.finished_leads": ("static leads: {confirmed}, {dismissed} dismissed, {unaddressed} unaddressed "
                            "(kept as findings with their static verdict)",
                            "静态线索:{confirmed},驳回 {dismissed} 条,未处理 {unaddressed} 条(未处理的按静态"
                            "判定保留为发现)"),
    "host.leads.confirmed": ("{n} confirmed", "确认 {n} 条"),
    "host.finished_no_leads": ("static leads: none (every finding is the host's own)",
                               "静态线索:无(所有发现都是宿主自己的)"),
    "host.leads.confirmed_some_suspected": ("{n} confirmed ({m} of them by a suspected finding)",
                                            "确认 {n} 条(其中 {m} 条由可疑发现确认)"),
    "host.finished_missing": (": missing {kinds}", ":缺少 {kinds}"),
    "host.reports_none": ("none written", "没有写出"),
    # ------------------------------------------------------------------ status
    "host.status.run": ("run: {run_id}", "运行:{run_id}"),
    "host.status.phase": ("phase: {phase}", "阶段:{phase}"),
    "host.status.checks": ("checks: {checks}", "检查项:{checks}"),
    "host.landmarks": ("landmarks: {accepted} accepted by the gate ({static} from static recon, {host} from the "
                       "host) = {in_use} in use + {dismissed} dismissed; {refused}",
                       "地标:证据门接受 {accepted} 个(静态侦察 {static} 个,宿主上报 {host} 个)= 使用中 {in_use} 个 "
                       "+ 已驳回 {dismissed} 个;{refused}"),
    "host.landmarks.refused": ("{n} refused", "被拒收 {n} 个"),
    "host.landmarks.refused_static": ("{n} refused ({m} of them static recon's, not yours)",
                                      "被拒收 {n} 个(其中 {m} 个是静态侦察的,不是你的)"),
    "host.landmarks_unknown": ("landmarks: unknown (the audited directory is gone)",
                               "地标:未知(被审计的目录已不存在)"),
    "host.status.findings": ("findings accepted: {accepted}, refused: {refused}", "已接受发现:{accepted} 条,被拒收:{refused} 条"),
    "host.status.accepted_here": ("accepted for {check} so far:", "{check} 目前已被接受的发现:"),
    "host.status.leads": ("leads dismissed: {n}", "已驳回线索:{n} 条"),
    "host.status.lead_states": ("leads of {check} as finish would settle them now: {states}",
                                "按 finish 现在的结算,{check} 的线索:{states}"),
    "host.lead_state.confirmed": ("confirmed", "已确认"),
    "host.lead_state.confirmed-suspected": ("confirmed by a suspected finding", "已由可疑发现确认"),
    "host.lead_state.dismissed": ("dismissed", "已驳回"),
    "host.lead_state.open": ("open (stays a finding with its static verdict)", "未处理(保留为静态判定的发现)"),
    "host.check.no_leads": ("No static leads for {check}: what you find, you report.",
                            "{check} 没有静态线索:你发现什么,就报告什么。"),
    "host.check.leads_refused": ("{n} more static candidate(s) of {check} did not pass the evidence gate, so they are "
                                 "not leads: nothing to settle; the report counts them among its refusals.",
                                 "{check} 另有 {n} 个静态候选未通过证据门,因此不是线索:无需处理;报告把它们计入拒收。"),
    "host.next.now": ("Now checking {check} (above).", "当前检查项:{check}(见上文)。"),
    "host.status.calls": ("protocol calls left for {unit}: {n}", "{unit} 剩余协议调用:{n} 次"),
    "host.status.next": ("next: {hint}", "下一步:{hint}"),
    "host.phase.finished": ("finished", "已结束"),
    "host.phase.recon": ("recon", "侦察"),
    "host.phase.checking": ("checking {check}", "正在检查 {check}"),
    "host.phase.between": ("between checks", "两个检查项之间"),
    "host.phase.done": ("checks done", "检查项都已完成"),
    "host.hint.reports": ("reports: {paths}", "报告:{paths}"),
    "host.hint.recon": ("report landmarks, then {step}", "上报地标,然后 {step}"),
    "host.hint.checking": ("report findings for {check}, then {step}", "上报 {check} 的发现,然后 {step}"),
    "host.hint.finish": ("finish: every check is done; write the reports with {step}",
                         "finish:所有检查项都已完成;用 {step} 写出报告"),
    "host.check_state.current": ("current", "进行中"),
    "host.check_state.pending": ("pending", "待检查"),
    "host.check_state.ran": ("ran", "已完成"),
    "host.check_state.not-covered": ("not-covered", "未覆盖"),
    "host.check_state.failed": ("failed", "失败"),
    "host.check_state.incomplete": ("incomplete (not audited)", "未完成(未审计)"),
    # ------------------------------------------------------------------ the eleven landmark kinds, for a reader
    # (the model engine's recon task has its own copy, `llm.prompts.LANDMARK_GUIDE`: model input is never tied to
    # the user's text, so editing one cannot change a recorded prompt)
    "landmark.agent-loop": ("the loop that calls the model, runs tools and calls the model again",
                            "调用模型、执行工具、再调用模型的那个循环"),
    "landmark.request-assembly": ("where the request body (messages, tools, system) is put together",
                                  "组装请求体(消息、工具、系统提示)的地方"),
    "landmark.system-prompt-build": ("where the system prompt text is built", "构造系统提示文本的地方"),
    "landmark.tool-registry": ("where the tools offered to the model are defined or listed",
                               "定义或列出提供给模型的工具的地方"),
    "landmark.tool-execution": ("where a tool call from the model is dispatched and run", "派发并执行模型发起的工具调用的地方"),
    "landmark.history-append": ("where messages, tool calls or tool results are added to the history",
                                "把消息、工具调用或工具结果加入历史的地方"),
    "landmark.stream-parse": ("where model output is decoded into text and tool calls (streamed or not)",
                              "把模型输出解码成文本和工具调用的地方(流式或非流式)"),
    "landmark.retry": ("a retry of model requests or tool calls (library or hand-written)",
                       "对模型请求或工具调用的重试(用库或手写)"),
    "landmark.truncation": ("where history is cut, summarised or compacted to fit the context",
                            "为放进上下文而截断、摘要或压缩历史的地方"),
    "landmark.process-spawn": ("where a child process or shell command is started", "启动子进程或 shell 命令的地方"),
    "landmark.http-call": ("an outbound HTTP request (model API or tool)", "对外的 HTTP 请求(模型 API 或工具)"),
    "host.args.landmark_shell": ("--kind KIND --file PATH --line N [--symbol NAME] [--confidence high|medium|low] "
                                 "[--evidence 'THE LINE']",
                                 "--kind KIND --file PATH --line N [--symbol NAME] [--confidence high|medium|low] "
                                 "[--evidence '那一行代码']"),
    # ------------------------------------------------------------------ the evidence gate's refusals, for a reader
    # (the gate writes them in English: they are model input too; `host` shows them in the caller's language by
    # recognising the text, and falls back to the gate's own words for one it does not know)
    "gate.no_file": ("a located finding needs `file`; give the workspace-relative path",
                     "有位置的发现需要 `file`;请给出相对于工作区的路径"),
    "gate.not_found": ("no readable file at {file}; cite a workspace-relative path that exists (list or glob first)",
                       "{file} 处没有可读的文件;请引用一个确实存在、相对于工作区的路径(先列目录或 glob)"),
    "gate.outside": ("{file} resolves outside the audited root (after symlinks); only first-party files count",
                     "{file}(解析符号链接后)位于被审计的根目录之外;只有第一方文件才算数"),
    "gate.excluded": ("{file} is under excluded directory {segment}; audit first-party code only",
                      "{file} 位于被排除的目录 {segment} 下;只审计第一方代码"),
    "gate.credential": ("{file} may hold credentials and is never cited; cite the code that loads the setting",
                        "{file} 可能含有凭据,从不被引用;请引用加载这项设置的代码"),
    "gate.not_utf8": ("{file} cannot be read as UTF-8 text", "{file} 无法作为 UTF-8 文本读取"),
    "gate.line_out": ("line {line} is not in {file}, which has {n} lines; re-read the file and cite a real line",
                      "{file} 只有 {n} 行,没有第 {line} 行;请重新读文件,引用真实存在的行"),
    "gate.record_line": ("line {line} is not in {file}; cite the record's line", "{file} 里没有第 {line} 行;请引用记录所在的行"),
    "gate.record_line_out": ("line {line} is not in {file}, which has {n} lines; cite the record's line",
                             "{file} 只有 {n} 行,没有第 {line} 行;请引用记录所在的行"),
    "gate.empty": ("the excerpt is empty; quote the line(s) of code you cite", "摘录为空;请引用你所指的代码行"),
    "gate.record_not_near": ("the excerpt does not occur within ±{window} lines of {where}; quote the record's own "
                             "line",
                             "摘录没有出现在 {where} 前后 {window} 行之内;请引用记录本身的那一行"),
    "gate.thin_record": ("the excerpt is only punctuation, a keyword or a name; quote a line of real content (at least "
                         "{n} characters)",
                         "摘录只有标点、关键字或名字;请引用一行有实际内容的记录(至少 {n} 个字符)"),
    "gate.elsewhere": ("the excerpt is not within ±{window} lines of {where}; it occurs at line(s) {lines}: cite the "
                       "line where it actually is",
                       "摘录不在 {where} 前后 {window} 行之内;它出现在第 {lines} 行:请引用它实际所在的那一行"),
    "gate.not_in_file": ("the excerpt does not occur in {file}; copy it from the file instead of paraphrasing",
                         "摘录没有出现在 {file} 里;请从文件里原样复制,不要转述"),
    "gate.thin": ("the excerpt is only punctuation, a keyword, a name or a comment; quote a line of real code (a "
                  "call, an assignment or a condition, at least {n} characters)",
                  "摘录只有标点、关键字、名字或注释;请引用一行真实代码(调用、赋值或条件,至少 {n} 个字符)"),
    "gate.not_in_run": ("check {check} is not part of this run ({checks})", "检查项 {check} 不在本次运行里({checks})"),
    "gate.recon_only": ("you were assigned no check (recon reports landmarks only); report only that",
                        "你没有被分配检查项(侦察只上报地标);只报告分配给你的内容"),
    "gate.not_assigned": ("you were assigned {check}; report only that", "分配给你的是 {check};只报告这一项"),
    "gate.bad_verdict": ("verdict {verdict} is not one of confirmed, suspected, not-implemented",
                         "判定 {verdict} 不是 confirmed、suspected、not-implemented 之一"),
    "gate.hint": ("a suspected finding must say exactly what a human has to verify (`confirm_hint`)",
                  "可疑的发现必须写明人工到底要核实什么(`confirm_hint`)"),
    "gate.not_implemented": ("a check-level not-implemented verdict must say what was looked for and where",
                             "检查项级的 not-implemented 判定必须写明找过什么、在哪里找的"),
    "gate.bad_kind": ("landmark kind {kind} is not one of {kinds}", "地标类型 {kind} 不是以下之一:{kinds}"),
}

EN: dict[str, str] = {key: pair[0] for key, pair in _PAIRS.items()}
"""English."""
ZH: dict[str, str] = {key: pair[1] for key, pair in _PAIRS.items()}
"""Chinese."""
