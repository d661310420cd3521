"""Messages: every error a user sees (`UsageError`, `ConfigError`, `AuditIncomplete` and their kin), by id.

Each entry is `id: (English, Chinese)`. Values named `what`, `origin`, `reason` and `forms` are themselves
messages (`Msg`), rendered in the same language.
"""

from __future__ import annotations

_PAIRS: dict[str, tuple[str, str]] = {
    # ------------------------------------------------------------------ what a path or a selection was for
    "what.audit_dir": ("the directory to audit", "要审计的目录"),
    "what.output_dir": ("the output directory", "输出目录"),
    "what.trace": ("a trace", "追踪文件"),
    "what.run_dir": ("a run directory", "运行目录"),
    "what.cancel_dir": ("the run directory to cancel", "要取消的运行目录"),
    "what.audited_dir": ("the audited directory", "被审计的目录"),
    "what.config_file": ("a configuration file", "配置文件"),
    "origin.selection": ("the check selection", "检查项选择"),
    "origin.explain": ("`explain`", "命令 explain 的参数"),
    "origin.configured_checks": ("configured `checks`", "配置项 checks 的值"),
    "origin.checks_key": ("`checks`", "配置项 checks 的值"),
    "origin.suppression": ("a suppression", "抑制标记"),
    # ------------------------------------------------------------------ why an OS call failed
    "err.reason.permission": ("Permission denied", "权限不足"),
    "err.reason.not_permitted": ("Operation not permitted", "不允许此操作"),
    "err.reason.missing": ("No such file or directory", "文件或目录不存在"),
    "err.reason.too_long": ("File name too long", "文件名过长"),
    "err.reason.loop": ("a symbolic link loop", "符号链接成环"),
    "err.reason.read_only": ("Read-only file system", "文件系统只读"),
    "err.reason.no_space": ("No space left on device", "磁盘空间不足"),
    "err.reason.quota": ("Disk quota exceeded", "超出磁盘配额"),
    "err.reason.is_dir": ("Is a directory", "这是一个目录"),
    "err.reason.io": ("Input/output error", "输入/输出错误"),
    "err.reason.busy": ("Device or resource busy", "设备或资源忙"),
    "err.reason.too_many_open": ("Too many open files", "打开的文件过多"),
    "err.reason.cross_device": ("Invalid cross-device link", "不能跨设备链接"),
    "err.reason.no_device": ("No such device or address", "设备或地址不存在"),
    "err.reason.nul": ("the path contains a NUL character", "路径里含有 NUL 字符"),
    "err.reason.exists_not_dir": ("it exists and is not a directory", "它已存在,但不是目录"),
    "err.reason.not_dir_part": ("a part of it is not a directory", "路径中有一段不是目录"),
    "err.reason.other": ("{detail}", "{detail}"),
    "err.reason.over_bytes": ("over {limit} bytes", "超过 {limit} 字节"),
    "err.kind.fifo": ("a FIFO", "命名管道(FIFO)"),
    "err.kind.char_device": ("a character device", "字符设备"),
    "err.kind.block_device": ("a block device", "块设备"),
    "err.kind.socket": ("a socket", "套接字"),
    "err.kind.directory": ("a directory", "目录"),
    "err.kind.not_regular": ("not a regular file", "不是普通文件"),
    # ------------------------------------------------------------------ paths the user gave
    "err.path.cannot_use": ("cannot use {path!r} as {what}: {reason}", "无法把 {path!r} 用作{what}:{reason}"),
    "err.path.no_home": ("cannot use {path!r} as {what}: no such user's home directory",
                         "无法把 {path!r} 用作{what}:没有这个用户的主目录"),
    # ------------------------------------------------------------------ check selections
    "err.selection.forms": (
        "check ids C1–C15 (any case, zero-padded or not, comma- or space-separated), rule ids such as "
        "`C8/parallel-batch-all-or-nothing`, or one preset: `p1` or `all`",
        "检查项编号 C1–C15(大小写均可,可补零,用逗号或空格分隔)、规则编号(如 "
        "`C8/parallel-batch-all-or-nothing`),或一个预设:`p1` 或 `all`"),
    "err.selection.unknown": ("unknown check {part!r} in {origin}; expected {forms}",
                              "{origin}里有未知的检查项 {part!r};应为{forms}"),
    "err.selection.unknown_rule": (
        "unknown rule {part!r} in {origin}; `harness-audit explain {check}` lists that check's rules; "
        "expected {forms}",
        "{origin}里有未知的规则 {part!r};`harness-audit explain {check}` 会列出该检查项的规则;应为{forms}"),
    "err.selection.ambiguous_rule": (
        "rule name {part!r} in {origin} belongs to several checks ({checks}); write it as {example}",
        "{origin}里的规则名 {part!r} 同时属于多个检查项({checks});请写成 {example}"),
    "err.selection.empty_item": ("empty item in {token!r} in {origin}; expected {forms}",
                                 "{origin}里的 {token!r} 含有空项;应为{forms}"),
    "err.selection.empty": ("{origin} is empty; expected {forms}", "{origin}为空;应为{forms}"),
    "err.selection.preset_mixed": (
        "preset {preset!r} cannot be combined with other items ({items}) in {origin}; expected {forms}",
        "{origin}里的预设 {preset!r} 不能和其他项({items})一起使用;应为{forms}"),
    # ------------------------------------------------------------------ configuration
    "what.configuration": ("configuration", "配置"),
    "what.flags": ("command-line flags", "命令行参数"),
    "err.config.unknown_key": ("unknown key {key!r} in {where}; allowed keys: {allowed}",
                               "未知的配置键 {key!r}(位置:{where});允许的键:{allowed}"),
    "err.config.bad": ("bad configuration in {where}: {reason}", "配置有误(位置:{where}):{reason}"),
    "err.config.bad_value": ("bad value {value!r} for {loc!r} in {where}: {reason}",
                             "{loc!r} 的值 {value!r} 不合法(位置:{where}):{reason}"),
    "err.config.expected_one_of": ("Input should be {expected}", "应为 {expected} 之一"),
    "err.config.int": ("Input should be a valid integer", "应为整数"),
    "err.config.number": ("Input should be a valid number", "应为数字"),
    "err.config.finite": ("Input should be a finite number", "应为有限的数字"),
    "err.config.bool": ("Input should be a valid boolean (true or false)", "应为布尔值(true 或 false)"),
    "err.config.string": ("Input should be a valid string", "应为字符串"),
    "err.config.list": ("Input should be a valid list", "应为列表"),
    "err.config.table": ("Input should be a table", "应为表(table)"),
    "err.config.ge": ("Input should be greater than or equal to {ge}", "应大于或等于 {ge}"),
    "err.config.le": ("Input should be less than or equal to {le}", "应小于或等于 {le}"),
    "err.config.gt": ("Input should be greater than {gt}", "应大于 {gt}"),
    "err.config.lt": ("Input should be less than {lt}", "应小于 {lt}"),
    "err.config.missing": ("Field required", "缺少必填项"),
    "err.config.timeouts": ("request_timeout_s ({request}) must be shorter than check_timeout_s ({check})",
                            "request_timeout_s({request})必须小于 check_timeout_s({check})"),
    "err.config.exclude_segment": ("{name!r} is not a directory name; excludes match one path segment, e.g. 'vendor'",
                                   "{name!r} 不是目录名;排除项按单个路径段匹配,例如 'vendor'"),
    "err.config.no_format": ("at least one format is needed: md, json, sarif or html",
                             "至少需要一种格式:md、json、sarif 或 html"),
    "err.config.tool_not_table": ("`tool` in {path} must be a table, got {tool!r}; [tool.harness-audit] cannot be read",
                                  "{path} 里的 `tool` 必须是表,实际是 {tool!r};无法读取 [tool.harness-audit]"),
    "err.config.table_not_table": ("[tool.harness-audit] in {path} must be a table",
                                   "{path} 里的 [tool.harness-audit] 必须是表"),
    "err.config.dedicated_tool": ("{path} may hold [tool.harness-audit] and top-level keys, nothing else under `tool`",
                                  "{path} 只能包含 [tool.harness-audit] 和顶层键,`tool` 下不能有别的内容"),
    "err.config.unreadable": ("cannot read {name}: {reason}", "无法读取 {name}:{reason}"),
    "err.config.not_utf8": ("{name} is not UTF-8 text (TOML files are UTF-8); re-save it as UTF-8",
                            "{name} 不是 UTF-8 文本(TOML 文件必须是 UTF-8);请另存为 UTF-8"),
    "err.config.not_toml": ("{name} is not valid TOML: {detail}", "{name} 不是合法的 TOML:{detail}"),
    "err.config.too_deep": ("{name} nests tables or arrays too deeply to read", "{name} 的表或数组嵌套过深,无法读取"),
    # ------------------------------------------------------------------ the audit
    "err.audit.path_missing": ("path {path!r} does not exist; give the directory of the harness to audit",
                               "路径 {path!r} 不存在;请给出要审计的 harness 所在目录"),
    "err.audit.path_is_file": ("path {path!r} is a file; give the directory that contains it",
                               "路径 {path!r} 是文件;请给出包含它的目录"),
    "err.audit.all_above_floor": ("configured `checks` {checks!r} are all above priority_floor={floor}; lower the "
                                  "floor or select checks explicitly",
                                  "配置中的 `checks` {checks!r} 全部高于 priority_floor={floor};请调低该值,或明确指定检查项"),
    "err.trace.unknown_format": ("unknown trace format {fmt!r}; expected one of {formats}",
                                 "未知的追踪格式 {fmt!r};应为以下之一:{formats}"),
    "err.config.toml_at": ("{detail} (at line {line}, column {column})", "第 {line} 行第 {column} 列:{detail}"),
    "err.config.toml_at_end": ("{detail} (at end of document)", "文件末尾:{detail}"),
    # ------------------------------------------------------------------ traces
    "err.trace.what": (
        "a trace: expected JSONL request/response lines, a VCR cassette (YAML or JSON), a HAR file, OpenTelemetry "
        "GenAI spans (JSON or JSONL), a harness-audit ledger, a SWE-agent trajectory or an OpenHands event stream",
        "追踪文件:应为 JSONL 请求/响应记录、VCR 录像(YAML 或 JSON)、HAR 文件、OpenTelemetry GenAI span"
        "(JSON 或 JSONL)、harness-audit 事件账本、SWE-agent 轨迹或 OpenHands 事件流"),
    "err.trace.cannot_read": ("cannot read {path!r}: {reason}", "无法读取 {path!r}:{reason}"),
    "err.trace.not_regular": ("cannot read {path!r}: {reason}; a trace is a regular file",
                              "无法读取 {path!r}:{reason};追踪文件必须是普通文件"),
    "err.trace.binary": ("{name!r} is a binary file, not {what}", "{name!r} 是二进制文件,不是{what}"),
    "err.trace.empty": ("{name!r} is empty: there is nothing to check (expected {what})",
                        "{name!r} 是空文件,没有可检查的内容(应为{what})"),
    "err.trace.bad_json": ("{name!r} is neither valid JSON nor JSON Lines of exchanges: not {what}",
                           "{name!r} 既不是合法的 JSON,也不是逐行记录请求的 JSON Lines:不是{what}"),
    "err.trace.json_too_deep": ("{name!r} is JSON nested too deeply to read: not {what}",
                                "{name!r} 的 JSON 嵌套过深,无法读取:不是{what}"),
    "err.trace.json_not_trace": ("{name!r} is JSON but not {what}", "{name!r} 是 JSON,但不是{what}"),
    "err.trace.not_trace": ("{name!r} is not {what}", "{name!r} 不是{what}"),
    "err.trace.unreadable_as": ("{name!r} could not be read as {fmt}: {detail}", "{name!r} 无法按 {fmt} 格式读取:{detail}"),
    "err.trace.too_deep_as": ("{name!r} could not be read as {fmt}: it is nested too deeply",
                              "{name!r} 无法按 {fmt} 格式读取:嵌套过深"),
    "err.trace.all_malformed": (
        "{name!r} has no readable record: every one of its {records} records is malformed (first: line {line}: "
        "{reason})",
        "{name!r} 没有可读的记录:全部 {records} 条记录都格式有误(第一条:第 {line} 行:{reason})"),
    "err.trace.none_given": ("no trace file given; pass one or more files: harness-audit trace FILE…",
                             "没有给出追踪文件;请传入一个或多个文件:harness-audit trace FILE…"),
    "err.trace.missing": ("trace {path!r} does not exist", "追踪文件 {path!r} 不存在"),
    "err.trace.not_a_file": ("trace {path!r} is not a regular file; pass the trace files themselves",
                             "追踪文件 {path!r} 不是普通文件;请直接传入追踪文件本身"),
    # ------------------------------------------------------------------ baselines and `diff`
    "what.baseline_report": ("baseline", "基线报告"),
    "what.old_report": ("old report", "旧报告"),
    "what.new_report": ("new report", "新报告"),
    "err.baseline.missing": ("{role} {path!r} does not exist; give a JSON report written by harness-audit "
                             "(--format json)",
                             "{role} {path!r} 不存在;请给出 harness-audit 写的 JSON 报告(--format json)"),
    "err.baseline.unreadable": ("cannot read {role} {path!r}: {reason}", "无法读取{role} {path!r}:{reason}"),
    "err.baseline.not_utf8": ("cannot read {role} {path!r}: it is not UTF-8 text",
                              "无法读取{role} {path!r}:它不是 UTF-8 文本"),
    "err.baseline.not_json": ("{role} {path!r} is not JSON; give a JSON report written by harness-audit "
                              "(--format json), not the markdown or SARIF one",
                              "{role} {path!r} 不是 JSON;请给出 harness-audit 写的 JSON 报告(--format json),"
                              "而不是 markdown 或 SARIF 报告"),
    "err.baseline.not_report": ("{role} {path!r} is not a harness-audit JSON report (no schema_version and findings)",
                                "{role} {path!r} 不是 harness-audit 的 JSON 报告(没有 schema_version 和 findings)"),
    "err.baseline.no_fingerprint": ("{role} {path!r} has a finding without a fingerprint",
                                    "{role} {path!r} 里有一条发现没有指纹"),
    # ------------------------------------------------------------------ background jobs
    "err.jobs.busy": ("{holder} is running in {path}; one audit per output directory at a time: wait for it "
                      "(`harness-audit jobs`), cancel it, or pass another --output-dir",
                      "{path} 里正在运行 {holder};同一个输出目录一次只能跑一个审计:请等它结束"
                      "(`harness-audit jobs`)、取消它,或换一个 --output-dir"),
    "err.jobs.not_job_dir": ("{path} is not a job directory (no readable job.json)",
                             "{path} 不是后台任务目录(没有可读的 job.json)"),
    "err.jobs.bad_id": ("{job_id!r} is not a job id; `--background` printed it (like job-1a2b3c4d)",
                        "{job_id!r} 不是后台任务编号;编号由 `--background` 打印(形如 job-1a2b3c4d)"),
    "err.jobs.unknown": ("no job {job_id!r} under {path}; pass the --output-dir the job was started with "
                         "(`--background` printed it)",
                         "{path} 下没有后台任务 {job_id!r};请传入启动该任务时用的 --output-dir(`--background` 打印过)"),
    # ------------------------------------------------------------------ the command line
    "err.usage": ("{detail} (see `{prog} --help`)", "{detail}(见 `{prog} --help`)"),
    "err.language.missing": ("--language needs a value: auto, en or zh", "--language 需要一个值:auto、en 或 zh"),
    "err.language.unknown": ("unknown language {value!r} in --language; expected auto, en or zh",
                             "--language 的值 {value!r} 未知;应为 auto、en 或 zh"),
    "err.audit.file_outside": ("file {file!r} is outside the audited directory {root!r}",
                               "文件 {file!r} 不在被审计的目录 {root!r} 里"),
    "err.format.unknown": ("unknown format {bad} in --format; expected a comma-separated list of {formats}",
                           "--format 里有未知的格式 {bad};应为逗号分隔的 {formats}"),
    "err.format.unknown_trace": ("unknown format {bad} in --format (the output format; --input-format names the "
                                 "traces'); expected a comma-separated list of {formats}",
                                 "--format 里有未知的格式 {bad}(这是输出格式;追踪文件的格式用 --input-format 指定);"
                                 "应为逗号分隔的 {formats}"),
    "err.format.stdout_one": ("`-o -` writes one report to stdout but {n} formats are selected ({formats}); pass one, "
                              "e.g. --format json",
                              "`-o -` 只能把一份报告写到标准输出,但选了 {n} 种格式({formats});请只给一种,"
                              "例如 --format json"),
    "err.audit.empty_checks_flag": ("--checks was given an empty value; expected ids like C1,C9, or p1 or all",
                                    "--checks 的值为空;应为 C1,C9 这样的编号,或 p1、all"),
    "err.trace.empty_checks_flag": ("--checks was given an empty value; expected ids like C1,C14",
                                    "--checks 的值为空;应为 C1,C14 这样的编号"),
    "err.audit.estimate_needs_selection": ("--estimate needs a check selection: ids (C1,C9), `p1` or `all`",
                                           "--estimate 需要选择检查项:编号(C1,C9)、`p1` 或 `all`"),
    "err.audit.background_needs_selection": ("a background audit needs a check selection: ids (C1,C9), `p1` or `all`",
                                             "后台审计需要选择检查项:编号(C1,C9)、`p1` 或 `all`"),
    "err.mcp.not_loopback": ("--host {host!r} is not a loopback address; the server binds only to {allowed} (it reads "
                             "the workspace and writes reports)",
                             "--host {host!r} 不是本机回环地址;服务只绑定到 {allowed}(它会读取工作区并写报告)"),
    "err.root_not_dir": ("--root {root!r} is not a directory", "--root {root!r} 不是目录"),
    "err.mcp.sdk_missing": ("`harness-audit mcp` needs the MCP SDK ({missing} is missing): pip install '.[mcp]' in "
                            "the harness-audit checkout",
                            "`harness-audit mcp` 需要 MCP SDK(缺少 {missing}):请在 harness-audit 检出目录里执行 "
                            "pip install '.[mcp]'"),
    "err.runs.not_run_dir": ("{path!r} is not a run directory (no ledger.jsonl in it); model runs are kept under "
                             "<output_dir>/runs/<run-id>",
                             "{path!r} 不是运行目录(里面没有 ledger.jsonl);模型运行保存在 <output_dir>/runs/<run-id>"),
    # ------------------------------------------------------------------ bench
    "err.bench.no_recorded": ("no recorded semgrep output {path!r} for project {project!r}",
                              "项目 {project!r} 没有录好的 semgrep 输出 {path!r}"),
    "err.bench.corpus_not_dir": ("corpus {corpus!r} is not a directory", "语料 {corpus!r} 不是目录"),
    "err.bench.no_semgrep": ("semgrep is not installed; `pip install semgrep` or pass {alternative}",
                             "没有安装 semgrep;请 `pip install semgrep`,或传入 {alternative}"),
    "err.bench.needs_trees": ("a real-bug case file needs --trees DIR (export them with scripts/realbugs_export.py)",
                              "真实缺陷案例文件需要 --trees DIR(用 scripts/realbugs_export.py 导出)"),
    "err.bench.no_case": ("no case matches --split/--draw/--case", "没有案例符合 --split/--draw/--case"),
    "err.bench.bad_compare": ("--compare {spec!r}: expected NAME=EXECUTABLE [OPTIONS] of an existing file",
                              "--compare {spec!r}:应为 NAME=EXECUTABLE [选项],且可执行文件存在"),
    "err.bench.bad_reports": ("--reports {spec!r}: expected NAME=DIR of an existing folder (one subfolder per case)",
                              "--reports {spec!r}:应为 NAME=DIR,且文件夹存在(每个用例一个子文件夹)"),
    "err.bench.no_exe": ("no harness-audit executable beside {python}; install the project (make test)",
                         "{python} 旁边没有 harness-audit 可执行文件;请先安装本项目(make test)"),
    "err.bench.no_answers": ("no answers.json in {corpus!r}; a corpus needs an answer key beside its projects",
                             "{corpus!r} 里没有 answers.json;语料需要在项目旁边放答案"),
    "err.bench.bad_answers": ("{name}: bad answer key at {loc}: {detail}", "{name}:答案在 {loc} 处有误:{detail}"),
    "err.bench.project_not_dir": ("answer key names project {project!r}, but {root!r} is not a directory",
                                  "答案里写了项目 {project!r},但 {root!r} 不是目录"),
    "err.bench.semgrep_no_json": ("semgrep produced no JSON for {project!r}: {detail}",
                                  "semgrep 没有为 {project!r} 输出 JSON:{detail}"),
    "err.bench.cases_unreadable": ("cannot read the case file {path!r}: {detail}", "无法读取案例文件 {path!r}:{detail}"),
    "err.bench.bad_case": ("{name}: bad case at {loc}: {detail}", "{name}:案例在 {loc} 处有误:{detail}"),
    "err.bench.duplicate_case": ("{name}: duplicate case id {case!r}", "{name}:案例编号 {case!r} 重复"),
    # ------------------------------------------------------------------ host verbs
    "err.host.empty_evidence": ("--evidence is empty; copy the line(s) of code you cite from the file",
                                "--evidence 为空;请从文件里复制你引用的代码行"),
    # ------------------------------------------------------------------ the model engines
    "err.engine.llm_missing": ("engine {engine!r} needs the model layer ({missing} is missing): pip install '.[llm]' "
                               "in the harness-audit checkout",
                               "引擎 {engine!r} 需要模型层(缺少 {missing}):请在 harness-audit 检出目录里执行 "
                               "pip install '.[llm]'"),
    "err.model.not_provider_name": (
        "--model {spec!r} is not PROVIDER:NAME. Examples: openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5, or "
        "openai:MODEL with --base-url for any OpenAI-compatible server (vLLM, Ollama, DeepSeek, OpenRouter).",
        "--model {spec!r} 不是 PROVIDER:NAME 的形式。例如:openai:gpt-4.1-mini、anthropic:claude-sonnet-4-5;"
        "任意 OpenAI 兼容的服务(vLLM、Ollama、DeepSeek、OpenRouter)用 openai:MODEL 加 --base-url。"),
    "err.model.unknown_provider": (
        "unknown provider {provider!r} in --model {spec!r}; supported: {supported}. Any other OpenAI-compatible "
        "server: openai:MODEL with --base-url URL",
        "--model {spec!r} 里的模型服务商 {provider!r} 未知;支持:{supported}。其他 OpenAI 兼容的服务:"
        "openai:MODEL 加 --base-url URL"),
    "err.model.unusable": ("cannot use the model {spec!r}: {detail}", "无法使用模型 {spec!r}:{detail}"),
    "err.model.extra_missing": ("the {provider} model needs extra packages ({missing}): pip install '.[{extra}]' in "
                                "the harness-audit checkout",
                                "{provider} 模型需要额外的包(缺少 {missing}):请在 harness-audit 检出目录里执行 "
                                "pip install '.[{extra}]'"),
    "err.model.no_key": ("the {provider} model needs an API key in the environment variable {var} (it is read from "
                         "the environment only, never from a file).",
                         "{provider} 模型需要在环境变量 {var} 里提供 API 密钥(只从环境变量读取,从不读文件)。"),
    "err.model.vllm_url": ("the vllm model needs the server's address: pass --base-url http://HOST:PORT/v1 (or set "
                           "VLLM_BASE_URL)",
                           "vllm 模型需要服务地址:请传入 --base-url http://HOST:PORT/v1(或设置 VLLM_BASE_URL)"),
    "err.model.none": ("engine {engine!r} needs a model: pass --model PROVIDER:NAME (e.g. openai:gpt-4.1-mini, or "
                       "with --base-url for an OpenAI-compatible server) or set `model` in the configuration",
                       "引擎 {engine!r} 需要模型:请传入 --model PROVIDER:NAME(如 openai:gpt-4.1-mini;"
                       "OpenAI 兼容的服务再加 --base-url),或在配置里设置 `model`"),
    "err.ledger.unreadable": ("cannot read the ledger {path}: {reason}. Pass a run directory written by an llm or "
                              "hybrid audit (<output_dir>/runs/<run-id>).",
                              "无法读取事件账本 {path}:{reason}。请传入 llm 或 hybrid 审计写下的运行目录"
                              "(<output_dir>/runs/<run-id>)。"),
    "err.ledger.not_object": ("{path}, line {line}: not a JSON object; a ledger holds one event per line (a damaged "
                              "or hand-edited ledger cannot be replayed)",
                              "{path} 第 {line} 行:不是 JSON 对象;事件账本每行一个事件(损坏或手改过的账本无法回放)"),
    "err.ledger.bad_event": ("{path}, line {line}: {detail}", "{path} 第 {line} 行:{detail}"),
    "err.ledger.no_start": ("{path} has no run-start event; it is not a harness-audit ledger",
                            "{path} 没有 run-start 事件;它不是 harness-audit 的事件账本"),
    "err.ledger.version": ("{path} is a version {version!r} ledger; this harness-audit reads version {supported} "
                           "(re-run the audit to record it again)",
                           "{path} 是 {version!r} 版的事件账本;本版 harness-audit 读取 {supported} 版(请重新审计以重新记录)"),
    "err.ledger.bad_config": ("{path}, line {line}: `run-start` event: config.{where}: {detail}",
                              "{path} 第 {line} 行:`run-start` 事件:config.{where}:{detail}"),
    "err.ledger.which_root": (
        "cannot tell which tree run {run_id} audited from where its ledger is (its reports went outside the audited "
        "directory); pass the audited directory with --root PATH (the ledger says {root!r}, which is not trusted)",
        "无法从事件账本所在位置判断运行 {run_id} 审计的是哪棵代码树(它的报告写到了被审计目录之外);"
        "请用 --root PATH 给出被审计的目录(账本里记的是 {root!r},不被信任)"),
    "err.ledger.nothing_to_resume": ("run {run_id} completed; there is nothing to resume (use `harness-audit replay` "
                                     "to see its report again)",
                                     "运行 {run_id} 已完成,没有可续跑的内容(用 `harness-audit replay` 重新查看它的报告)"),
    "err.host.root_gone": ("the audited directory {root} of run {run_id} no longer exists",
                           "运行 {run_id} 审计的目录 {root} 已不存在"),
    "err.host.not_host_run": ("{name!r} is not a host-model run (its ledger has no host run-start); start one with "
                              "`harness-audit host begin PATH SELECTION`",
                              "{name!r} 不是宿主模型审计的运行(它的事件账本里没有宿主的 run-start);"
                              "请用 `harness-audit host begin PATH SELECTION` 开始一次"),
    "err.host.bad_run_id": ("{run_id!r} is not a run id; `begin` printed it on a line `run: ID` (like "
                            "20261207T093000-1a2b3c4d)",
                            "{run_id!r} 不是运行编号;`begin` 在 `run: ID` 那一行打印过它(形如 20261207T093000-1a2b3c4d)"),
    "err.host.unknown_run": ("no run {run_id!r} under {path}; pass the --output-dir that `begin` used (it printed the "
                             "output directory)",
                             "{path} 下没有运行 {run_id!r};请传入 `begin` 用的 --output-dir(它打印过输出目录)"),
    "err.host.finished": ("run {run_id} is finished (reports: {paths}); begin a new run to audit again",
                          "运行 {run_id} 已结束(报告:{paths});要再次审计请重新 begin"),
    "err.mcp.outside_root": ("path {path!r} is outside the server's root {root}; the server audits only directories "
                             "inside it (start it with --root to choose another)",
                             "路径 {path!r} 在服务的根目录 {root} 之外;服务只审计根目录里的目录(用 --root 启动可换一个)"),
    "err.mcp.needs_model": ("engine {engine!r} needs a `model` in the project's configuration",
                            "引擎 {engine!r} 需要在项目配置里设置 `model`"),
    # ------------------------------------------------------------------ tomllib's syntax errors
    "err.toml.overwrite": ("Cannot overwrite a value", "不能覆盖已有的值"),
    "err.toml.escape": ("Escaped character is not a Unicode scalar value", "转义字符不是合法的 Unicode 标量值"),
    "err.toml.expected_equals": ("Expected '=' after a key in a key/value pair", "键值对里的键后面应为 '='"),
    "err.toml.expected_bracket": ("Expected ']' at the end of a table declaration", "表声明的末尾应为 ']'"),
    "err.toml.expected_brackets": ("Expected ']]' at the end of an array declaration", "数组表声明的末尾应为 ']]'"),
    "err.toml.expected_newline": ("Expected newline or end of document after a statement", "语句之后应为换行或文件结尾"),
    "err.toml.date": ("Invalid date or datetime", "日期或日期时间不合法"),
    "err.toml.hex": ("Invalid hex value", "十六进制值不合法"),
    "err.toml.key_start": ("Invalid initial character for a key part", "键的开头字符不合法"),
    "err.toml.statement": ("Invalid statement", "语句不合法"),
    "err.toml.value": ("Invalid value", "值不合法"),
    "err.toml.unclosed_array": ("Unclosed array", "数组没有闭合"),
    "err.toml.unclosed_table": ("Unclosed inline table", "内联表没有闭合"),
    "err.toml.backslash": ("Unescaped '\\' in a string", "字符串里有未转义的 '\\'"),
    "err.toml.unterminated": ("Unterminated string", "字符串没有结束"),
    "err.toml.declared_twice": ("Cannot declare {key} twice", "{key} 不能声明两次"),
    "err.toml.immutable": ("Cannot mutate immutable namespace {key}", "不能修改不可变的命名空间 {key}"),
    "err.toml.redefine": ("Cannot redefine namespace {key}", "不能重新定义命名空间 {key}"),
    "err.toml.duplicate_key": ("Duplicate inline table key {key}", "内联表里的键 {key} 重复"),
    "err.toml.invalid_char": ("Found invalid character {char}", "发现非法字符 {char}"),
    "err.toml.illegal_char": ("Illegal character {char}", "非法字符 {char}"),
}

EN: dict[str, str] = {key: pair[0] for key, pair in _PAIRS.items()}
"""English."""
ZH: dict[str, str] = {key: pair[1] for key, pair in _PAIRS.items()}
"""Chinese."""
