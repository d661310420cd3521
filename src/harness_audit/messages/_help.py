"""Messages: every subcommand's `--help` (descriptions, epilogs, each option's help), and argparse's own words.

Each entry is `id: (English, Chinese)`. Usage lines stay as argparse prints them; metavars and flags are never
translated.
"""

from __future__ import annotations

_PAIRS: dict[str, tuple[str, str]] = {
    # ------------------------------------------------------------------ argparse's frame
    "help.section.positionals": ("positional arguments", "位置参数"),
    "help.section.options": ("options", "选项"),
    "help.section.verbs": ("verbs", "子命令"),
    "help.h": ("show this help message and exit", "显示本帮助并退出"),
    "help.output_dir_default.path": ("the configured `output_dir`, else .harness-audit, in PATH",
                                     "配置中的 `output_dir`,没有则为 PATH 下的 .harness-audit"),
    "help.output_dir_default.cwd": ("the configured `output_dir`, else .harness-audit, in the working directory",
                                    "配置中的 `output_dir`,没有则为当前工作目录下的 .harness-audit"),
    "help.quiet": ("print only the report paths", "只打印报告路径"),
    "help.verbose": ("show tracebacks of internal errors", "显示内部错误的调用栈"),
    "help.language": ("language of the text: auto (configuration, then the locale), en or zh",
                      "文字的语言:auto(先看配置,再看系统区域设置)、en 或 zh"),
    "help.json": ("print JSON instead of text", "输出 JSON 而不是文本"),
    "help.fail_on": ("exit 1 at/above this verdict", "出现该判定或更严重的判定时以 1 退出"),
    "help.format_text_json": ("output format (default: text)", "输出格式(默认:text)"),
    # ------------------------------------------------------------------ the audit
    "help.audit.description": (
        "Audit an agent harness for the fifteen robustness checks. Subcommands: checks, explain, diff, bench, "
        "trace, host, mcp, jobs, job-output, cancel, resume, replay.",
        "按十五项健壮性检查审计一个 agent harness。子命令:checks、explain、diff、bench、trace、host、mcp、"
        "jobs、job-output、cancel、resume、replay。"),
    "help.audit.epilog": (
        "Selection: C1, c1, c01, C1,C9, 'C1 C9', rule ids such as C8/parallel-batch-all-or-nothing, p1 (the seven "
        "priority-1 checks) or all. Exit codes: 0 clean, 1 findings at/above --fail-on, 2 usage/config error, "
        "3 audit incomplete or nothing audited.",
        "检查项选择:C1、c1、c01、C1,C9、'C1 C9'、规则编号(如 C8/parallel-batch-all-or-nothing)、"
        "p1(七项优先级 1 的检查)或 all。退出码:0 没有问题,1 有达到 --fail-on 的发现,2 用法或配置错误,"
        "3 审计未完成或什么都没审计到。"),
    "help.audit.targets": (
        "directory to audit (default: .) followed by check ids or a preset; files (as a pre-commit hook passes "
        "them) limit the findings that count to those files",
        "要审计的目录(默认:.),后跟检查项编号或预设;再给出的文件(pre-commit 钩子就是这样传的)"
        "会把计入结果的发现限定在这些文件里"),
    "help.audit.checks": ("checks to run, e.g. C1,C9 or p1 (repeatable)", "要运行的检查项,如 C1,C9 或 p1(可重复)"),
    "help.audit.engine": ("engine (default: static)", "引擎(默认:static)"),
    "help.audit.model": ("model of the llm/hybrid engines, e.g. openai:gpt-4.1-mini",
                         "llm/hybrid 引擎使用的模型,如 openai:gpt-4.1-mini"),
    "help.audit.base_url": ("any OpenAI-compatible endpoint (vLLM, Ollama, DeepSeek, ...)",
                            "任意 OpenAI 兼容的接口地址(vLLM、Ollama、DeepSeek 等)"),
    "help.audit.stream": ("stream model responses", "以流式方式接收模型响应"),
    "help.audit.estimate": ("print the planned checks, their landmarks and an upper bound of tokens and money; "
                            "spend nothing",
                            "打印计划运行的检查项、它们的地标,以及 token 和花费的上限;不实际花费"),
    "help.audit.concurrency": ("check units at once (1-16)", "同时运行的检查单元数(1-16)"),
    "help.audit.exclude": ("replace the excluded directory names (comma-separated, repeatable); --exclude '' "
                           "audits all",
                           "替换排除的目录名(逗号分隔,可重复);--exclude '' 表示全部审计"),
    "help.audit.extend_exclude": ("add excluded directory names", "追加排除的目录名"),
    "help.audit.output_dir": ("where reports go, relative to the working directory (default: {default}); "
                              "`-` writes the one --format to stdout instead",
                              "报告写到哪里,相对于当前工作目录(默认:{default});"
                              "`-` 表示把唯一的 --format 格式写到标准输出"),
    "help.audit.format": ("output formats, comma-separated: md,json,sarif,html (default: md,json,sarif)",
                          "输出格式,逗号分隔:md,json,sarif,html(默认:md,json,sarif)"),
    "help.audit.baseline": ("a JSON report of an earlier run: only findings not in it (or whose verdict moved) set "
                            "the exit code",
                            "一次早先运行的 JSON 报告:只有其中没有的发现(或判定变了的发现)才影响退出码"),
    "help.audit.no_suppressions": ("ignore inline `harness-audit: ignore[...]` markers: report every finding",
                                   "忽略代码里的 `harness-audit: ignore[...]` 标记:报告所有发现"),
    "help.audit.allow_empty": ("exit 0 even when nothing was audited (0 files, or every selected check not covered)",
                               "即使什么都没审计到(0 个文件,或所选检查项全部未覆盖)也以 0 退出"),
    "help.audit.min_precision": ("report findings of rules whose precision measured by independent reviews is at "
                                 "least this (default low: every rule); the others are listed as withheld",
                                 "只报告经独立评审实测精度不低于此档的规则的发现(默认 low:全部规则);其余列为暂扣"),
    "help.audit.preview": ("also run the semantic layer's queries (the engine replacing the shape rules)",
                           "同时运行语义层的查询(正在取代形状规则的新引擎)"),
    "help.audit.priority_floor": ("filter configured checks by priority", "按优先级筛选配置中的检查项"),
    "help.audit.max_file_bytes": ("skip larger files", "跳过更大的文件"),
    "help.audit.no_cache": ("ignore and do not write the result cache", "不读也不写结果缓存"),
    "help.audit.trace": ("also check this recorded trace and report it with the code audit (repeatable)",
                         "同时检查这份录制的追踪,与代码审计写进同一份报告(可重复)"),
    "help.audit.background": ("start the audit as a background job, print its id and return at once (follow it "
                              "with `harness-audit job-output ID`)",
                              "以后台任务启动审计,打印任务编号后立即返回(用 `harness-audit job-output ID` 跟进)"),
    # ------------------------------------------------------------------ checks, explain, diff
    "help.checks.description": ("List the fifteen checks.", "列出十五项检查。"),
    "help.explain.description": ("Print a check's criteria and its static rules.", "打印检查项的判据和它的静态规则。"),
    "help.explain.epilog": (
        "Accepts what a check selection accepts: C8, c08, 'C1 C9', C1,C9, p1, all, and rule ids such as "
        "C8/parallel-batch-all-or-nothing (that rule only).",
        "接受与检查项选择相同的写法:C8、c08、'C1 C9'、C1,C9、p1、all,以及规则编号,"
        "如 C8/parallel-batch-all-or-nothing(只看这条规则)。"),
    "help.explain.check": ("check ids, a preset or rule ids, e.g. C8 or C1,C9", "检查项编号、预设或规则编号,如 C8 或 C1,C9"),
    "help.diff.description": ("Compare two JSON reports by finding fingerprint.", "按发现的指纹比较两份 JSON 报告。"),
    "help.diff.epilog": (
        "Exit codes: 0 nothing new at/above --fail-on, 1 new findings (or a verdict that moved) at/above it, "
        "2 usage error (not a harness-audit JSON report).",
        "退出码:0 没有达到 --fail-on 的新发现,1 有达到它的新发现(或判定变化),"
        "2 用法错误(不是 harness-audit 的 JSON 报告)。"),
    "help.diff.old": ("the earlier JSON report (the baseline)", "较早的 JSON 报告(基线)"),
    "help.diff.new": ("the later JSON report", "较新的 JSON 报告"),
    "help.diff.fail_on": ("exit 1 when a new finding is at/above this verdict (default: confirmed)",
                          "有新发现达到该判定时以 1 退出(默认:confirmed)"),
    # ------------------------------------------------------------------ trace
    "help.trace.description": (
        "Check recorded provider traffic of any harness (JSONL request logs, VCR cassettes, HAR, OpenTelemetry "
        "GenAI spans, harness-audit ledgers) for tool-call pairing, append-only history, duplicate ids, prefix "
        "stability, limits, truncation boundaries and recorded usage.",
        "检查任意 harness 录制下来的模型服务流量(JSONL 请求日志、VCR 录像、HAR、OpenTelemetry GenAI span、"
        "harness-audit 事件账本):工具调用配对、历史只追加、重复编号、前缀稳定性、上限、截断边界和用量记录。"),
    "help.trace.epilog": (
        "Default checks: C1 C2 C4 C12 C13 C14 C15 (what a trace can show). Exit codes: 0 clean, 1 findings "
        "at/above --fail-on, 2 usage error or not a trace, 3 incomplete.",
        "默认检查项:C1 C2 C4 C12 C13 C14 C15(追踪能说明的部分)。退出码:0 没有问题,1 有达到 --fail-on 的发现,"
        "2 用法错误或不是追踪文件,3 未完成。"),
    "help.trace.files": ("trace files", "追踪文件"),
    "help.trace.input_format": ("the traces' format (default: detected from content)",
                                "追踪文件的格式(默认:根据内容识别)"),
    "help.trace.checks": ("checks to run, e.g. C1,C14 (default: every check a trace can speak to)",
                          "要运行的检查项,如 C1,C14(默认:追踪能说明的所有检查项)"),
    "help.trace.output_dir": ("where reports go, relative to the working directory (default: .harness-audit beside "
                              "the traces); `-` writes the one --format to stdout instead",
                              "报告写到哪里,相对于当前工作目录(默认:追踪文件旁边的 .harness-audit);"
                              "`-` 表示把唯一的 --format 格式写到标准输出"),
    "help.trace.format": ("output formats, comma-separated: md,json,sarif,html (default: md,json,sarif)",
                          "输出格式,逗号分隔:md,json,sarif,html(默认:md,json,sarif)"),
    "help.trace.baseline": ("a JSON report of an earlier run: only findings not in it set the exit code",
                            "一次早先运行的 JSON 报告:只有其中没有的发现才影响退出码"),
    "help.trace.allow_empty": ("exit 0 even when no selected check could be checked on these traces",
                               "即使这些追踪上没有一项所选检查能做,也以 0 退出"),
    # ------------------------------------------------------------------ bench
    "help.bench.description": (
        "Score the static engine against a corpus with an answer key (answers*.json), or against the real-bug "
        "corpus (a cases .json file; see benchmarks/README.md).",
        "用带答案的语料(answers*.json)或真实缺陷语料(一个案例 .json 文件,见 benchmarks/README.md)"
        "给静态引擎打分。"),
    "help.bench.corpus": ("directory with one folder per project and answers.json beside them, or a real-bug case "
                          "file such as benchmarks/realbugs/cases.json",
                          "每个项目一个子目录、旁边放 answers.json 的目录,或真实缺陷案例文件,"
                          "如 benchmarks/realbugs/cases.json"),
    "help.bench.semgrep_config": ("also run semgrep with this ruleset and score it", "同时用这套规则运行 semgrep 并打分"),
    "help.bench.semgrep_json": ("score recorded semgrep output instead of running it: DIR/<project>.json per "
                                "project",
                                "不运行 semgrep,而是给录好的输出打分:每个项目一个 DIR/<project>.json"),
    "help.bench.min_detection": ("exit 1 below this detection rate", "检出率低于该值时以 1 退出"),
    "help.bench.max_false_positives": ("exit 1 above this many", "误报多于该数时以 1 退出"),
    "help.bench.real": ("real-bug corpus (when CORPUS is a case file)", "真实缺陷语料(CORPUS 是案例文件时)"),
    "help.bench.trees": ("where scripts/realbugs_export.py exported the trees", "scripts/realbugs_export.py 导出代码树的位置"),
    "help.bench.split": ("which cases to score", "给哪些案例打分"),
    "help.bench.draw": ("only the cases of this draw (1: the first corpus; 2: held-out cases mined after draw 1 was "
                        "measured)", "只看这一批的案例(1:最初的语料;2:第一批测过之后新挖的留出案例)"),
    "help.bench.case": ("only this case (repeatable)", "只看这个案例(可重复)"),
    "help.bench.compare": ("also score another harness-audit executable, with its own options if any, e.g. "
                           "today=/path/.venv/bin/harness-audit or 'hybrid=/path/harness-audit --engine hybrid "
                           "--model openai:NAME --base-url URL'",
                           "同时给另一个 harness-audit 可执行文件打分(可带它自己的选项),如 "
                           "today=/path/.venv/bin/harness-audit 或 'hybrid=/path/harness-audit --engine hybrid "
                           "--model openai:NAME --base-url URL'"),
    "help.bench.reports": ("also score reports another engine already wrote (a host-model audit, a hybrid run): "
                           "DIR/<case id>/ holds the pre-fix audit's JSON report, DIR/<case id>/fix/ the fix's",
                           "同时给另一引擎已写出的报告打分(宿主模型审计、hybrid 运行):DIR/<用例 id>/ 放修复前审计的 "
                           "JSON 报告,DIR/<用例 id>/fix/ 放修复后的"),
    "help.bench.semgrep": ("semgrep executable for --semgrep-config (default: on PATH)",
                           "--semgrep-config 使用的 semgrep 可执行文件(默认:PATH 上的)"),
    "help.bench.results": ("write one JSON line per case and engine", "每个案例、每个引擎写一行 JSON"),
    "help.bench.preview": ("also run the semantic layer's queries (--preview)", "同时运行语义层的查询(--preview)"),
    # ------------------------------------------------------------------ resume, replay, cancel
    "help.resume.description": ("continue a cancelled or crashed llm/hybrid run: finished checks are kept, the rest "
                                "run again",
                                "继续一次被取消或崩溃的 llm/hybrid 运行:已完成的检查项保留,其余重新运行"),
    "help.replay.description": ("re-render a run's report from its ledger; with --rerun, re-run the engine on the "
                                "recorded responses (no provider)",
                                "根据事件账本重新生成一次运行的报告;加 --rerun 则用录下的响应重新运行引擎"
                                "(不调用模型服务)"),
    "help.cancel.description": ("stop a background job (job-…) or a running llm/hybrid audit (its run directory); "
                                "it writes a partial report marked cancelled",
                                "停止一个后台任务(job-…)或正在运行的 llm/hybrid 审计(它的运行目录);"
                                "它会写出一份标为已取消的部分报告"),
    "help.cancel.target": ("a job id, or the run directory holding ledger.jsonl", "后台任务编号,或含有 ledger.jsonl 的运行目录"),
    "help.cancel.output_dir": ("where the job lives, relative to the working directory (default: {default})",
                               "后台任务所在的位置,相对于当前工作目录(默认:{default})"),
    "help.runs.run_dir": ("the run directory holding ledger.jsonl", "含有 ledger.jsonl 的运行目录"),
    "help.replay.rerun": ("re-run the engine against a replay model", "用回放模型重新运行引擎"),
    "help.resume.base_url": ("send the remaining requests to this endpoint instead (the same provider protocol)",
                             "把剩余的请求改发到这个地址(模型服务协议相同)"),
    "help.runs.root": ("the audited directory (default: the one holding the run's output directory; the path a "
                       "ledger names is never trusted)",
                       "被审计的目录(默认:包含该运行输出目录的那个目录;事件账本里记的路径从不被信任)"),
    # ------------------------------------------------------------------ jobs, job-output
    "help.jobs.description": ("list background audits: id, target, checks, state, progress, start time",
                              "列出后台审计:编号、目标、检查项、状态、进度、开始时间"),
    "help.job_output.description": ("print a background audit's progress; when it is over, its state and reports",
                                    "打印后台审计的进度;结束后打印它的状态和报告"),
    "help.job_output.id": ("the job id `--background` printed (job-…)", "`--background` 打印的后台任务编号(job-…)"),
    "help.job_output.follow": ("keep printing until the job is over", "一直打印,直到任务结束"),
    "help.job_output.timeout": ("with --follow: give up after S seconds (exit 3)", "配合 --follow:S 秒后放弃(以 3 退出)"),
    "help.jobs.output_dir": ("the output directory the audit was started with, relative to the working directory "
                             "(default: {default})",
                             "启动审计时用的输出目录,相对于当前工作目录(默认:{default})"),
    "help.jobs.json": ("print JSON", "输出 JSON"),
    # ------------------------------------------------------------------ mcp
    "help.mcp.description": (
        "MCP server (stdio by default) for agent hosts: host-model audit tools (begin_host_audit … "
        "finish_host_audit), background audits (start_audit, job_output, cancel_audit, list_checks) and the "
        "`harness-audit` prompt.",
        "供 agent 宿主使用的 MCP 服务(默认 stdio):宿主模型审计工具(begin_host_audit … finish_host_audit)、"
        "后台审计(start_audit、job_output、cancel_audit、list_checks)和 `harness-audit` 提示词。"),
    "help.mcp.root": ("directory that relative paths start from (default: .)", "相对路径的起点目录(默认:.)"),
    "help.mcp.http": ("serve streamable HTTP instead of stdio (loopback only)", "改用可流式 HTTP 而不是 stdio(仅限本机回环地址)"),
    "help.mcp.host": ("HTTP address: 127.0.0.1 (default), localhost or ::1", "HTTP 地址:127.0.0.1(默认)、localhost 或 ::1"),
    "help.mcp.port": ("HTTP port (default: 8765)", "HTTP 端口(默认:8765)"),
    # ------------------------------------------------------------------ host
    "help.host.description": (
        "Host-model audit, one protocol step per call: begin, then landmark… next, report…/dismiss… next … finish. "
        "The host's own model is the auditor; every report goes through the evidence gate. A run's state and, at "
        "`finish`, its md/json/sarif reports go to one output directory: `begin --output-dir DIR`, else the "
        "configured `output_dir`, else .harness-audit in PATH. The later verbs look under their --output-dir, else "
        "the working directory's default; the commands each verb prints carry --output-dir whenever the run is "
        "elsewhere.",
        "宿主模型审计,每次调用一个协议步骤:begin,然后 landmark… next,report…/dismiss… next … finish。"
        "审计者是宿主自己的模型;每条上报都要经过证据门。一次运行的状态,以及 `finish` 时写出的 md/json/sarif "
        "报告,都放在同一个输出目录里:`begin --output-dir DIR`,没有则为配置中的 `output_dir`,再没有则为 PATH "
        "下的 .harness-audit。之后的各个步骤在自己的 --output-dir 下找运行,没有则用当前工作目录的默认输出目录;"
        "只要运行不在那里,每个步骤打印的命令都会带上 --output-dir。"),
    "help.host.verb": ("one protocol step", "一个协议步骤"),
    "help.host.run": ("the run id `host begin` printed (`run: ID`)", "`host begin` 打印的运行编号(`run: ID`)"),
    "help.host.output_dir_later": ("the run's output directory, as `begin` printed it on its `output-dir:` line; "
                                   "relative to the working directory (default: {default}). The commands `begin` "
                                   "and each verb print carry it whenever the run is elsewhere",
                                   "运行的输出目录,即 `begin` 在 `output-dir:` 那一行打印的目录;相对于当前工作目录"
                                   "(默认:{default})。只要运行不在默认位置,`begin` 和每个步骤打印的命令都会带上它"),
    "help.host.output_dir_begin": ("where the run's state and, at `finish`, its reports go; relative to the working "
                                   "directory (default: {default}). Pass it to have the reports somewhere particular",
                                   "运行的状态以及 `finish` 时写出的报告放在哪里;相对于当前工作目录(默认:{default})。"
                                   "想把报告放到特定位置时就传这个参数"),
    "help.host.begin": ("start a run: static recon and leads, then the recon instructions; prints `run: ID` and "
                        "`output-dir: DIR`",
                        "开始一次运行:静态侦察和线索,然后给出侦察说明;打印 `run: ID` 和 `output-dir: DIR`"),
    "help.host.begin.path": ("directory to audit", "要审计的目录"),
    "help.host.begin.selection": ("check ids (C1,C9), p1 or all", "检查项编号(C1,C9)、p1 或 all"),
    "help.host.landmark": ("report one landmark (recon, before the first `next`)", "上报一个地标(侦察阶段,第一次 `next` 之前)"),
    "help.host.landmark.kind": ("one of the eleven landmark kinds: {kinds}", "十一类地标之一:{kinds}"),
    "help.host.file": ("workspace-relative path", "相对于工作区的路径"),
    "help.host.line": ("1-based line", "行号(从 1 开始)"),
    "help.host.symbol": ("enclosing function or class, dotted", "所在的函数或类,用点分隔"),
    "help.host.confidence": ("how sure you are: high, medium or low", "有多确定:high、medium 或 low"),
    "help.host.landmark.evidence": ("the line's code, copied exactly: the gate checks it like a finding's excerpt and "
                                    "records the landmark at --line when the excerpt covers it, else where it starts ('-' reads "
                                    "it from standard input)",
                                    "该行代码,原样复制:证据门像核对发现的引用一样核对它;引用覆盖 --line 时地标"
                                    "记在 --line,否则记在这段代码开始的那一行('-' 表示从标准输入读取)"),
    "help.host.dismiss_landmark": ("dismiss one landmark recon listed that is wrong, with the reason (recon only; the "
                                   "report lists it, no check uses it)",
                                   "驳回侦察列出的一个错误地标,并说明理由(仅限侦察阶段;报告会列出它,"
                                   "任何检查项都不会用它)"),
    "help.host.dismiss_landmark.kind": ("the landmark's kind, as the recon list shows it", "地标的类型,按侦察列表所示"),
    "help.host.dismiss_landmark.file": ("its workspace-relative path, as the recon list shows it",
                                        "它相对于工作区的路径,按侦察列表所示"),
    "help.host.dismiss_landmark.line": ("its line, as the recon list shows it", "它的行号,按侦察列表所示"),
    "help.host.dismiss_landmark.also_at": ("another landmark of the same kind, wrong for the same reason (repeatable): "
                                           "all are dismissed or none, each counts as a protocol call",
                                           "同一种类、同一理由错误的另一个地标(可重复):要么全部驳回要么都不驳回,"
                                           "每个计一次协议调用"),
    "help.host.dismiss_landmark.reason": ("why it is wrong: what the code there is instead (goes into the report)",
                                          "为什么错:那里的代码实际是什么(写进报告)"),
    "help.host.next.nothing_found": ("close the current check although you reported nothing and dismissed no lead: "
                                     "you read its code and it holds (it then reads 'ran, nothing found')",
                                     "虽然没有报告任何发现、也没有驳回线索,仍结束当前检查项:你读过代码,它成立(报告中显示为“已运行,无发现”)"),
    "help.host.status.task": ("also print the open check's text again (criteria, landmarks, leads)",
                              "同时再次打印当前检查项的内容(判据、地标、线索)"),
    "help.host.next": ("end recon or the current check and get the next check (or `finish`)",
                       "结束侦察或当前检查项,拿到下一个检查项(或 `finish`)"),
    "help.host.report": ("report one finding for the current check", "为当前检查项上报一条发现"),
    "help.host.report.check": ("the current check, e.g. C1", "当前检查项,如 C1"),
    "help.host.report.verdict": ("confirmed, suspected or not-implemented", "confirmed、suspected 或 not-implemented"),
    "help.host.report.file": ("workspace-relative path (none for a check-level not-implemented)",
                              "相对于工作区的路径(检查项级的 not-implemented 不需要)"),
    "help.host.report.line": ("1-based line of the defect", "缺陷所在的行号(从 1 开始)"),
    "help.host.report.evidence": ("lines copied exactly from the file ('-' reads them from standard input)",
                                  "从文件里原样复制的代码行('-' 表示从标准输入读取)"),
    "help.host.report.claim": ("one sentence: what is wrong", "一句话:哪里有问题"),
    "help.host.report.consequence": ("what a user of the harness sees because of it", "harness 的使用者因此会遇到什么"),
    "help.host.report.direction": ("how to fix it", "怎么修"),
    "help.host.report.confirm_hint": ("for suspected: exactly what a human must verify", "可疑时必填:人工具体需要核实什么"),
    "help.host.report.lead": ("the static lead this finding confirms, e.g. C1-2, or several it is the one root cause "
                              "of, e.g. C1-2,C1-5 (optional)",
                              "这条发现所确认的静态线索,如 C1-2;若它是几条线索的同一根因,可写多条,如 C1-2,C1-5(可选)"),
    "help.host.dismiss": ("dismiss one static lead of the current check, with the reason it is wrong",
                          "驳回当前检查项的一条静态线索,并说明它错在哪里"),
    "help.host.dismiss.lead": ("the lead id, e.g. C1-2; several with one reason: C7-1 C7-2 C7-5",
                               "线索编号,如 C1-2;多条共用一个理由:C7-1 C7-2 C7-5"),
    "help.host.dismiss.reason": ("why the lead is wrong (goes into the report)", "线索为什么错(写进报告)"),
    "help.host.finish": ("end the run: aggregate, write the md/json/sarif reports into the run's output directory, "
                         "print the summary and their paths",
                         "结束运行:汇总,把 md/json/sarif 报告写进运行的输出目录,打印摘要和报告路径"),
    "help.host.status": ("where the run stands and what to do next", "运行进行到哪一步、下一步做什么"),
    # ------------------------------------------------------------------ argparse's own error messages
    "argparse.required": ("the following arguments are required: {args}", "缺少必需的参数:{args}"),
    "argparse.unrecognized": ("unrecognized arguments: {args}", "无法识别的参数:{args}"),
    "argparse.one_of": ("one of the arguments {args} is required", "参数 {args} 必须给出其中一个"),
    "argparse.ambiguous": ("ambiguous option: {option} could match {matches}", "选项有歧义:{option} 可能是 {matches}"),
    "argparse.argument": ("argument {name}: {message}", "参数 {name}:{message}"),
    "argparse.invalid_choice": ("invalid choice: {value} (choose from {choices})", "无效的选项 {value}(可选:{choices})"),
    "argparse.invalid_value": ("invalid {type} value: {value}", "无效的 {type} 值:{value}"),
    "argparse.expected_one": ("expected one argument", "需要一个值"),
    "argparse.expected_at_most_one": ("expected at most one argument", "最多需要一个值"),
    "argparse.expected_at_least_one": ("expected at least one argument", "至少需要一个值"),
    "argparse.expected_n": ("expected {n} arguments", "需要 {n} 个值"),
    "argparse.not_allowed_with": ("not allowed with argument {other}", "不能与参数 {other} 同时使用"),
    "argparse.ignored_explicit": ("ignored explicit argument {value}", "忽略了显式给出的值 {value}"),
    "arg.line_not_int": ("{value} is not a line number; give a 1-based integer", "{value} 不是行号;请给出从 1 开始的整数"),
    "arg.line_below_one": ("{value} is not a line number; lines start at 1", "{value} 不是行号;行号从 1 开始"),
}

EN: dict[str, str] = {key: pair[0] for key, pair in _PAIRS.items()}
"""English."""
ZH: dict[str, str] = {key: pair[1] for key, pair in _PAIRS.items()}
"""Chinese."""
