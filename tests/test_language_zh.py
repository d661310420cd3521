"""`LANG=zh_CN.UTF-8`: everything a user reads on the main paths is Chinese.

The CLI runs as a user runs it (a subprocess under a Chinese locale) over an audit, `explain`, `checks`, a usage
error, a configuration error, every `--help`, the host verbs and the job commands. What may stay as written:
identifiers, paths, check and rule ids, flags and metavars, code, argparse's usage lines, and the findings' own
text (their claims, consequences, fixes and evidence, taken from the JSON report and removed before the check).
`language = en` in the configuration turns all of it back to English.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness_audit.cli import SUBCOMMANDS, main
from harness_audit.render.markdown import prose

EXAMPLE = Path(__file__).parent.parent / "examples" / "agent_loop"
_ZH = {**{k: v for k, v in os.environ.items() if k not in ("LC_ALL", "LC_MESSAGES", "LANGUAGE", "LANG")},
       "LANG": "zh_CN.UTF-8", "PYTHONIOENCODING": "utf-8", "COLUMNS": "120"}

_ALLOWED_PHRASES = ("agent harness", "OpenTelemetry GenAI span", "JSON Lines", "harness-audit")
"""Latin words Chinese text keeps on purpose (a product's name, a format's name)."""
_CODE = re.compile(r"``.+?``|`[^`\n]*`|'[^'\n]*'|\"[^\"\n]*\"|\[[^\]\n]*\]|\{[^}\n]*\}")
_NOT_CJK = r"[^\s\u2e80-\u9fff\u3000-\u303f\uff00-\uffef]"
_TECHNICAL = re.compile(_NOT_CJK + r"*[/\\._\-=:@\d<>|~*]" + _NOT_CJK + r"*|\b[A-Z][A-Z0-9_]+\b")
_SENTENCE = re.compile(r"\b[A-Za-z][a-z]+(?: +[A-Za-z][a-z]+)+\b")
"""Two or more words with spaces between: a list of identifiers (`md, json, sarif`) is not a sentence."""
_COMMAND = re.compile(r"harness-audit(?: +[a-z][a-z-]*\b)*")


def english_sentences(text: str, keep: tuple[str, ...] = ()) -> list[str]:
    """Runs of two or more English words left in `text` once code, quoted values, identifiers, paths, metavars,
    argparse's usage block and the strings in `keep` (findings' own text) are taken out."""
    for kept in sorted({k for k in keep if k}, key=len, reverse=True):
        text = text.replace(kept, " ¦ ")
    text = re.sub(r"(?ms)^usage: .*?(?:\n\n|\Z)", "\n", text)  # argparse's usage lines stay as argparse prints them
    text = re.sub(r"(?ms)^```.*?^```", "\n", text)  # code blocks: the audited code around a finding
    text = _COMMAND.sub(" ¦ ", text)  # a command to run: `harness-audit host next …`
    for phrase in _ALLOWED_PHRASES:
        text = text.replace(phrase, " ¦ ")
    found: list[str] = []
    for line in text.splitlines():
        line = _TECHNICAL.sub(" ¦ ", _CODE.sub(" ¦ ", line))
        found += [m.group(0) for m in _SENTENCE.finditer(line)]
    return found


def test_the_detector_finds_english_and_lets_identifiers_through() -> None:
    assert english_sentences("错误\uff1aunknown check 'C16' in the check selection") == \
        ["unknown check", "in the check selection"]
    assert english_sentences("错误\uff1a检查项选择里有未知的检查项 'C16'\uff1b应为 md, json, sarif") == []
    assert english_sentences("- tool-execution: agent/loop.py:37,位于 `run_agent` (high, static:recon)") == []
    assert english_sentences("usage: harness-audit [-h] [--json]\n  RUN\n\n选项:") == []


def _run(*argv: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness_audit", *argv], capture_output=True, text=True, cwd=cwd,
                          env=env or _ZH, timeout=300, check=False)


def _findings_text(report: dict[str, object]) -> tuple[str, ...]:
    kept: list[str] = []
    for f in report["findings"]:  # type: ignore[union-attr]
        kept += [f[k] for k in ("claim", "consequence", "direction", "confirm_hint", "evidence") if f.get(k)]  # type: ignore[index]
        kept += f["evidence"].splitlines()  # type: ignore[index]
    kept += [lead["claim"] for lead in report.get("leads", [])]  # type: ignore[union-attr]
    return (*kept, *(prose(k) for k in kept))  # and as the Markdown report escapes them


@pytest.fixture(scope="module")
def zh_audit(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("zh-audit")
    run = _run(str(EXAMPLE), "all", "-o", str(out), "--format", "md,json,sarif", cwd=out)
    return run, out


def test_an_audit_speaks_chinese_on_the_terminal_and_in_every_report(
        zh_audit: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    run, out = zh_audit
    assert run.returncode == 1, run.stderr
    report = json.loads((out / "latest.json").read_text(encoding="utf-8"))
    kept = _findings_text(report)
    assert "报告:" in run.stdout and "侦察完成" in run.stderr and "发现 13 条" in run.stdout
    assert english_sentences(run.stdout + run.stderr, kept) == []
    md = (out / "latest.md").read_text(encoding="utf-8")
    assert "## 概览" in md and "## 未覆盖" in md
    assert english_sentences(md, kept) == []
    sarif = json.loads((out / "latest.sarif").read_text(encoding="utf-8"))["runs"][0]
    c8 = sarif["tool"]["driver"]["rules"][7]
    assert c8["shortDescription"]["text"] == "部分成功" and "正确写法" not in c8["help"]["markdown"]
    assert "`Promise.allSettled`,逐个检查 `status`" in c8["help"]["markdown"]  # the Chinese criteria's fix
    texts = [r["help"]["markdown"] for r in sarif["tool"]["driver"]["rules"]]
    texts += [r["message"]["markdown"] for r in sarif["results"]]
    assert english_sentences("\n".join(texts), kept) == []


def test_configured_english_overrides_the_chinese_locale(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "agent").mkdir(parents=True)
    for f in (EXAMPLE / "agent").iterdir():
        (root / "agent" / f.name).write_bytes(f.read_bytes())
    (root / ".harness-audit.toml").write_text('language = "en"\n', encoding="utf-8")
    run = _run(str(root), "all", "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert run.returncode == 1
    assert "report: " in run.stdout and "13 found (11 confirmed" in run.stdout and "报告" not in run.stdout
    assert "## Summary" in (tmp_path / "out" / "latest.md").read_text(encoding="utf-8")
    # and for the command line's own text in that directory: its help, its errors
    helped = _run("--help", cwd=root)
    assert "show this help message and exit" in helped.stdout and "显示本帮助" not in helped.stdout
    refused = _run("explain", "C16", cwd=root)
    assert refused.returncode == 2 and "unknown check 'C16'" in refused.stderr


def test_explain_and_checks_speak_chinese(tmp_path: Path) -> None:
    explained = _run("explain", "C8", "C13", cwd=tmp_path)
    assert explained.returncode == 0 and explained.stdout.startswith("# C8 · 部分成功\n\n## 症状\n")
    assert "## 正确写法(不报告)" in explained.stdout and "`C8/parallel-batch-all-or-nothing`" in explained.stdout
    assert english_sentences(explained.stdout) == []
    listed = _run("checks", cwd=tmp_path)
    assert listed.returncode == 0 and "工具调用配对完整性" in listed.stdout
    assert english_sentences(listed.stdout) == []


@pytest.mark.parametrize("argv", [
    ["{example}", "C16"], ["{example}", "C1", "--fail-on", "sometimes"], ["{example}", "C1", "--concurrency", "x"],
    ["explain", "C8/no-such-rule"], ["/no/such/dir", "C1"], ["{example}", "C1", "--format", "pdf"],
    ["host", "next", "not-a-run"], ["job-output", "job-00000000"], ["diff", "/no/old.json", "/no/new.json"],
    ["{example}", "C1", "--nonsense"], ["host", "report"],
], ids=lambda argv: " ".join(argv))
def test_usage_errors_are_chinese(argv: list[str], tmp_path: Path) -> None:
    run = _run(*(a.format(example=EXAMPLE) for a in argv), cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("harness-audit: 错误:"), line
    assert english_sentences(line) == [], line


@pytest.mark.parametrize("config", [
    'concurrency = 99\n', 'colour = "red"\n', 'engine = "quantum"\n', 'checks = ["C99"]\n', 'engine = \n',
    'request_timeout_s = 900\ncheck_timeout_s = 60\n', 'exclude_paths = ["a/b"]\n', 'formats = []\n',
    'fail_on = 3\n',
], ids=["too-large", "unknown-key", "bad-choice", "bad-check", "not-toml", "timeouts", "exclude", "formats", "type"])
def test_configuration_errors_are_chinese(config: str, tmp_path: Path) -> None:
    (tmp_path / ".harness-audit.toml").write_text(config, encoding="utf-8")
    (tmp_path / "m.py").write_text("x = 1\n", encoding="utf-8")
    run = _run(str(tmp_path), "C1", cwd=tmp_path)
    assert run.returncode == 2, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("harness-audit: 错误:"), line
    assert english_sentences(line) == [], line


_HELPS = [[name] for name in SUBCOMMANDS if name != "audit"] + [[]] + [
    ["host", verb] for verb in ("begin", "landmark", "dismiss-landmark", "next", "report", "dismiss", "finish",
                                "status")]


@pytest.mark.parametrize("argv", _HELPS, ids=lambda argv: " ".join(argv) or "audit")
def test_every_help_is_chinese(argv: list[str], capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("LC_ALL", "LC_MESSAGES", "LANGUAGE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    monkeypatch.setenv("COLUMNS", "100")
    assert main([*argv, "--help"]) == 0
    out = capsys.readouterr().out
    assert "选项:" in out and "显示本帮助并退出" in out
    assert english_sentences(out) == []
    # Chinese lines are wrapped by display width: none runs past the terminal
    wide = [line for line in out.splitlines() if re.search(r"[\u4e00-\u9fff]", line)
            and sum(2 if ord(c) > 0x2E7F else 1 for c in line) > 100]
    assert wide == []


def test_host_verbs_speak_chinese(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / "agent").mkdir(parents=True)
    for f in (EXAMPLE / "agent").iterdir():
        (root / "agent" / f.name).write_bytes(f.read_bytes())
    begun = _run("host", "begin", str(root), "C1,C13", cwd=tmp_path)
    assert begun.returncode == 0, begun.stderr
    run_id = begun.stdout.splitlines()[0].removeprefix("run: ")
    out = ["--output-dir", str(root / ".harness-audit")]
    steps = [begun, _run("host", "status", run_id, *out, cwd=tmp_path), _run("host", "next", run_id, *out, cwd=tmp_path),
             _run("host", "report", run_id, *out, "--check", "C1", "--verdict", "confirmed", "--file",
                  "agent/loop.py", "--line", "41", "--evidence", "except Exception as exc:", "--claim", "a handler "
                  "skips the result", "--consequence", "the provider rejects the next request", cwd=tmp_path),
             _run("host", "dismiss", run_id, *out, "C1-7", "--reason", "no such lead here at all", cwd=tmp_path),
             _run("host", "next", run_id, *out, cwd=tmp_path), _run("host", "status", run_id, *out, cwd=tmp_path),
             _run("host", "finish", run_id, *out, cwd=tmp_path)]
    report = json.loads(next((root / ".harness-audit").glob("report-*.json")).read_text(encoding="utf-8"))
    kept = (*_findings_text(report), "a handler skips the result", "the provider rejects the next request",
            "no such lead here at all")
    assert "## 侦察" in begun.stdout and "阶段:侦察" in steps[1].stdout and "# C1 · 工具调用配对完整性" in steps[2].stdout
    assert "已接受:C1 确认" in steps[3].stdout and "已结束:" in steps[-1].stdout
    for step in steps:
        assert english_sentences(step.stdout + step.stderr, kept) == [], step.args


def test_jobs_and_job_output_speak_chinese(tmp_path: Path) -> None:
    out = tmp_path / "out"
    empty = _run("jobs", "--output-dir", str(out), cwd=tmp_path)
    assert "没有后台审计" in empty.stdout and english_sentences(empty.stdout) == []
    started = _run(str(EXAMPLE), "C1,C4", "--background", "--output-dir", str(out), cwd=tmp_path)
    assert started.returncode == 0, started.stderr
    job_id = started.stdout.splitlines()[0].removeprefix("job: ")
    followed = _run("job-output", job_id, "--output-dir", str(out), "--follow", "--timeout", "120", cwd=tmp_path)
    deadline = time.monotonic() + 60
    listed = _run("jobs", "--output-dir", str(out), cwd=tmp_path)
    while "已完成" not in listed.stdout and time.monotonic() < deadline:
        time.sleep(0.2)
        listed = _run("jobs", "--output-dir", str(out), cwd=tmp_path)
    assert "已在后台启动" in started.stdout and "C1 完成" in followed.stdout and "已完成" in listed.stdout
    for run in (started, followed, listed):
        assert english_sentences(run.stdout + run.stderr) == [], run.args


def test_chinese_help_lines_never_start_with_closing_punctuation() -> None:
    from harness_audit.cli import wrap_wide

    text = "输出格式,逗号分隔:md,json,sarif,html(默认:md,json,sarif)"
    for width in range(12, 60):
        lines = wrap_wide(text, width)
        assert "".join(lines) == text and not any(line[0] in ",:;)" for line in lines), (width, lines)


def test_why_a_file_was_left_out_reads_in_chinese(tmp_path: Path) -> None:
    """The reasons a report lists for skipped and unparsed files are stored in English (JSON, ledgers) and shown in
    the reader's language; only the parser's own description of a syntax error stays as the parser wrote it."""
    from harness_audit.api import audit
    from harness_audit.render.markdown import render_markdown

    root = tmp_path / "ws"
    (root / "agent").mkdir(parents=True)
    for f in (EXAMPLE / "agent").iterdir():
        (root / "agent" / f.name).write_bytes(f.read_bytes())
    (root / "big.py").write_text("x = 1\n" * 5000, encoding="utf-8")
    (root / "broken.py").write_text("x = (\n", encoding="utf-8")
    (root / "deep.py").write_text("x = " + "(" * 300 + "1" + ")" * 300 + "\n", encoding="utf-8")
    (root / "broken.ts").write_text("const x = ;\nfunction f( {\n", encoding="utf-8")
    (root / "latin1.py").write_bytes(b"s = '\xe9\xe9\xe9'\n")
    report = audit(root, ["all"], overrides={"output_dir": str(tmp_path / "out"), "max_file_bytes": 10_000,
                                             "language": "zh"}, write=False).report
    reasons = [n.reason for n in (*report.skipped_files, *report.unparsed_files)]
    assert "too-large" in reasons and any(r.startswith("syntax error at line 1: ") for r in reasons)
    md = render_markdown(report)
    table = md[md.index("| 文件 | 原因 |"):].split("\n\n", 1)[0]
    assert "跳过:文件过大(too-large)" in table and "第 1 行有语法错误:" in table, table
    parser_said = tuple(r.split(": ", 1)[1] for r in reasons if r.startswith("syntax error at line"))
    assert english_sentences(table, parser_said) == [], table


def test_a_trace_audit_says_why_a_check_is_not_covered_in_chinese(tmp_path: Path) -> None:
    trace = Path(__file__).parent / "trace" / "data" / "made" / "clean_interleaved.jsonl"
    run = _run("trace", str(trace), "-c", "C3,C2,C15", "-o", str(tmp_path / "out"), "--allow-empty", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    md = (tmp_path / "out" / "latest.md").read_text(encoding="utf-8")
    assert "录制的追踪看不出这一项:崩溃与检查点语义在模型服务流量里看不到" in md
    assert english_sentences(md) == [] and english_sentences(run.stdout + run.stderr) == []


def _stored_literals(folder: Path, call: str, keyword: str, position: int | None = None) -> list[str]:
    """The texts handed to `call(keyword=…)` (or its `position`-th argument) as literals or f-strings, each
    placeholder read as `X`."""
    import ast

    def text(node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.JoinedStr):
            return "".join(v.value if isinstance(v, ast.Constant) else "X" for v in node.values)  # type: ignore[misc]
        return None

    found: list[str] = []
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == call:
                args = [k.value for k in node.keywords if k.arg == keyword]
                if position is not None and len(node.args) > position:
                    args.append(node.args[position])
                found += [s for s in map(text, args) if s]
    return found


def test_every_stored_reason_a_report_shows_has_a_chinese_reading() -> None:
    """Why a trace line was unreadable, why an llm check was cancelled or not covered: stored in English (ledgers,
    JSON), shown translated; a new literal without its `file.*`/`note.*` message would reach a Chinese reader in
    English."""
    from harness_audit.messages import localize

    src = Path(__file__).parent.parent / "src" / "harness_audit"
    trace = _stored_literals(src / "trace", "Malformed", "reason") + _stored_literals(src / "trace", "Line", "error", 3)
    unit = _stored_literals(src / "llm", "CheckOutcome", "error") + _stored_literals(src / "llm", "replace", "error")
    assert len(trace) >= 10 and len(unit) >= 4
    untranslated = [s for s in trace if localize(f"line 3: {s}", "zh", "file.") in (f"line 3: {s}", f"第 3 行:{s}")]
    untranslated += [s for s in unit if localize(s, "zh") == s]
    assert untranslated == []


def test_progress_details_of_a_model_run_read_in_chinese() -> None:
    """A retry, a cancelled or failed unit: the model engine writes its details in English (ledgers, job logs); the
    terminal and `job-output` show them in the reader's language, the provider's own words kept."""
    from harness_audit.findings import CheckId
    from harness_audit.jobs import describe
    from harness_audit.progress import ProgressEvent, ProgressKind

    retry = ProgressEvent(kind=ProgressKind.REQUEST_RETRY, check=CheckId.C1,
                          detail="HTTP 429 Too Many Requests; retry 1 of 3 in 2 s")
    cancelled = ProgressEvent(kind=ProgressKind.CANCELLED, check=CheckId.C2,
                              detail="cancelled: cancelled before it started")
    failed = ProgressEvent(kind=ProgressKind.CHECK_FAILED, check=CheckId.C3,
                           detail="failed:timeout: HTTP 504 Gateway Timeout (after 3 attempts)")
    run = ProgressEvent(kind=ProgressKind.CANCELLED, detail="cancelled; finished checks are kept")
    lines = [describe(0.0, e, "zh") for e in (retry, cancelled, failed, run)]
    assert lines == ["C1:HTTP 429 Too Many Requests;2 秒后重试(第 1 次,共 3 次)",
                     "C2 已取消:开始之前就被取消了",
                     "C3 failed:timeout: HTTP 504 Gateway Timeout(共尝试了 3 次):保留发现 0 条",
                     "已取消:已取消;已完成的检查项会保留"], lines
    provider = ("HTTP 429 Too Many Requests", "HTTP 504 Gateway Timeout")
    assert english_sentences("\n".join(lines), provider) == []
    assert describe(0.0, retry, "en") == "C1: HTTP 429 Too Many Requests; retry 1 of 3 in 2 s"
    assert describe(0.0, cancelled, "en") == "C2 cancelled: cancelled before it started"


def test_the_html_report_speaks_chinese(tmp_path: Path) -> None:
    import html

    from harness_audit.api import audit
    from harness_audit.render.html import render_html

    report = audit(EXAMPLE, ["all"], overrides={"output_dir": str(tmp_path), "language": "zh"}, write=False).report
    kept = [x.replace("`", "") for f in report.findings for x in (f.claim, f.consequence, f.direction, f.confirm_hint)
            if x]  # the findings' own words, as the page shows them (code spans become <code>)
    body = render_html(report).split("<body>", 1)[1]
    body = re.sub(r"(?s)<script.*?</script>|<pre.*?</pre>", "", body)
    text = html.unescape(re.sub(r"<[^>]+>", "", re.sub(r"</(p|h\d|li|td|th|div|option|summary|label)>", "\n", body)))
    from harness_audit.messages import t

    assert all(t(key, "zh") in text for key in ("html.grid", "html.filter_check", "md.not_covered", "md.cost"))
    assert english_sentences(text, tuple(kept)) == []


def test_bench_speaks_chinese(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`bench` over a planted corpus and its real-bug table: the tables and their lines in the reader's language
    (the corpus's own notes and the engines' names stay as written)."""
    from harness_audit.bench import realbugs as rb

    corpus = Path(__file__).parent / "bench_corpus_ts_holdout3"
    assert main(["bench", str(corpus), "--language", "zh"]) == 0
    out = capsys.readouterr().out
    assert "检查项" in out and "合计" in out and "证据拒收" in out
    notes = [line.split("  ", 1)[-1] for line in out.splitlines() if line.startswith(("漏检", "误报", "表外"))]
    assert english_sentences(out.replace("harness-audit", ""), keep=tuple(notes)) == []
    case = rb.load_cases(Path(__file__).parent.parent / "benchmarks" / "realbugs" / "cases.json")[0]
    results = [rb.CaseResult(case=case, engine="harness-audit", detected=True, still_flagged=False, error="",
                             seconds=1.0, pre_flags=[])]
    zh = "\n".join(rb.table(results, ["harness-audit"], "zh"))
    assert "研究集" in zh or "留出集" in zh
    assert english_sentences(zh.replace("harness-audit", "")) == []
    assert "at fix" in "\n".join(rb.table(results, ["harness-audit"], "en"))
