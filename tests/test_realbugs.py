"""The real-bug benchmark: case file validation, export from a git mirror, scoring before and after a fix."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness_audit.bench import realbugs as rb
from harness_audit.cli import main
from harness_audit.errors import UsageError

BUGGY = '''\
from openai import OpenAI

client = OpenAI()


def run(messages, tools):
    while True:
        reply = client.chat.completions.create(model="m", messages=messages, tools=tools)
        msg = reply.choices[0].message
        messages.append(msg)
        if not msg.tool_calls:
            return msg.content
'''

FIXED = '''\
from openai import OpenAI

client = OpenAI()


class MaxTurnsExceeded(Exception):
    pass


def run(messages, tools, max_turns=20):
    for _ in range(max_turns):
        reply = client.chat.completions.create(model="m", messages=messages, tools=tools)
        msg = reply.choices[0].message
        messages.append(msg)
        if not msg.tool_calls:
            return msg.content
    raise MaxTurnsExceeded(max_turns)
'''


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}).stdout.strip()


@pytest.fixture
def mirror(tmp_path: Path) -> tuple[Path, str, str]:
    """A bare mirror of `acme/agent` with one buggy commit and its fix, the package under `pkg/`."""
    work = tmp_path / "work"
    (work / "pkg" / "agent").mkdir(parents=True)
    _git(work, "init", "-q")
    (work / "pkg" / "pyproject.toml").write_text("[project]\nname='agent'\n")
    (work / "pkg" / "agent" / "loop.py").write_text(BUGGY)
    (work / "README.md").write_text("outside the package root\n")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "loop")
    pre = _git(work, "rev-parse", "HEAD")
    (work / "pkg" / "agent" / "loop.py").write_text(FIXED)
    _git(work, "commit", "-qam", "fix: cap the turns")
    fix = _git(work, "rev-parse", "HEAD")
    mirrors = tmp_path / "mirrors"
    subprocess.run(["git", "clone", "-q", "--mirror", str(work), str(mirrors / "acme+agent" / "repo")], check=True)
    return mirrors, pre, fix


def _case(pre: str, fix: str, **over: object) -> dict[str, object]:
    case: dict[str, object] = {
        "id": "agent-1", "repo": "acme/agent", "language": "python", "license": "MIT",
        "fix_commit": fix, "pre_commit": pre, "check": "C12", "file": "pkg/agent/loop.py", "lines": [7, 7],
        "evidence_excerpt": "    while True:", "fix_file": "pkg/agent/loop.py", "fix_lines": [11, 11],
        "root": "pkg", "summary": "the loop had no turn ceiling", "diff": "-    while True:",
        "static_visible": "yes", "split": "study"}
    case.update(over)
    return case


def _write(tmp_path: Path, *cases: dict[str, object]) -> Path:
    path = tmp_path / "cases.json"
    path.write_text(json.dumps({"version": 1, "cases": list(cases)}))
    return path


def test_export_then_score_detects_before_and_is_silent_after(tmp_path: Path, mirror: tuple[Path, str, str]) -> None:
    """Risk: the yardstick itself is wrong — it exports the wrong tree, compares repo-relative paths with
    root-relative ones, or counts a finding the fix left in place as a detection."""
    mirrors, pre, fix = mirror
    cases = rb.load_cases(_write(tmp_path, _case(pre, fix)))
    trees = tmp_path / "trees"
    assert rb.export(cases, mirrors, trees) == []
    pre_tree = rb.tree_of(trees, cases[0], pre)
    assert (pre_tree / "agent" / "loop.py").read_text() == BUGGY
    assert not (pre_tree / "README.md").exists()  # only the package root is exported
    assert rb.export(cases, mirrors, trees) == []  # a second export keeps what is there
    engine = rb.HarnessAuditEngine(exe=str(Path(sys.executable).with_name("harness-audit")))
    result = rb.run_case(cases[0], engine, trees)
    assert result.error == ""
    assert result.detected and not result.still_flagged
    # each flag names what reported it, so a detection can be traced to the rule or query that made it
    assert result.pre_flags and all(f.source.startswith("static:C12/") for f in result.pre_flags)
    # a check the tree gives nothing to look at (exit 3, "not covered", a report written all the same) is a miss
    uncovered = rb.Case.model_validate(_case(pre, fix, check="C6"))
    result = rb.run_case(uncovered, engine, trees)
    assert result.error == "" and not result.detected


def test_scoring_windows_alt_sites_and_other_checks() -> None:
    """Risk: a finding three lines off, or at an agreed alternative site, is missed; a finding of an unrelated
    check at the right line is counted."""
    case = rb.Case.model_validate(_case("a" * 40, "b" * 40, alt_sites=[
        {"file": "pkg/agent/other.py", "lines": [40, 42], "why": "the caller"}], also_checks=["C1"]))
    assert rb.detected(case, [rb.Flag("C12", "agent/loop.py", 10)])
    assert not rb.detected(case, [rb.Flag("C12", "agent/loop.py", 11)])
    assert not rb.detected(case, [rb.Flag("C9", "agent/loop.py", 7)])
    assert rb.detected(case, [rb.Flag("C1", "agent/loop.py", 7)])
    assert rb.detected(case, [rb.Flag("C12", "agent/other.py", 44)])
    assert rb.still_flagged(case, [rb.Flag("C12", "agent/loop.py", 14)])
    outside = rb.Case.model_validate(_case("a" * 40, "b" * 40, file="other/loop.py"))
    assert not rb.detected(outside, [rb.Flag("C12", "other/loop.py", 7)])


def test_recon_is_scored_against_the_bug_site() -> None:
    """Risk: recon's share of a miss is invisible: a check whose required landmark was never located (so no engine
    looked), or located only far from the bug, reads like a rule that looked and missed."""
    case = rb.Case.model_validate(_case("a" * 40, "b" * 40, alt_sites=[
        {"file": "pkg/agent/other.py", "lines": [40, 42], "why": "the caller"}]))  # C12: requires agent-loop
    loop = "agent-loop"
    assert rb.recon_at(case, [rb.Place(loop, "agent/loop.py", 7 + rb.RECON_NEAR)]) == "at"
    assert rb.recon_at(case, [rb.Place(loop, "agent/other.py", 42 + rb.RECON_NEAR)]) == "at"  # an agreed site
    assert rb.recon_at(case, [rb.Place(loop, "agent/loop.py", 10 + rb.RECON_NEAR + 1)]) == "file"
    assert rb.recon_at(case, [rb.Place(loop, "agent/run.py", 8)]) == "elsewhere"
    assert rb.recon_at(case, [rb.Place("retry", "agent/loop.py", 8)]) == "none"  # not the kind C12 requires
    results = [rb.CaseResult(case=case, engine="e", recon="at"), rb.CaseResult(case=case, engine="e", recon="none"),
               rb.CaseResult(case=case, engine="sg")]
    assert rb.tally(results[:2]).recon == {"at": 1, "file": 0, "elsewhere": 0, "none": 1}
    assert rb.tally(results[2:]).recon == {}
    table = "\n".join(rb.table(results, ["e", "sg"]))
    assert "at bug 1 · file 0 · else 0 · none 1" in table and "sg " not in table.split("recon:")[1]


def test_bad_case_files_are_refused_by_name(tmp_path: Path) -> None:
    """Risk: a typo in the corpus silently drops cases or scores against the wrong check."""
    with pytest.raises(UsageError, match=r"cases\.0\.check"):
        rb.load_cases(_write(tmp_path, _case("a" * 40, "b" * 40, check="C99")))
    with pytest.raises(UsageError, match="duplicate case id"):
        rb.load_cases(_write(tmp_path, _case("a" * 40, "b" * 40), _case("a" * 40, "b" * 40)))
    with pytest.raises(UsageError, match="cannot read"):
        rb.load_cases(tmp_path / "missing.json")


def test_cli_scores_a_case_file(tmp_path: Path, mirror: tuple[Path, str, str], capsys: pytest.CaptureFixture[str]) -> None:
    mirrors, pre, fix = mirror
    path = _write(tmp_path, _case(pre, fix))
    rb.export(rb.load_cases(path), mirrors, tmp_path / "trees")
    assert main(["bench", str(path), "--trees", str(tmp_path / "trees"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["harness-audit"]["python study"] == {"cases": 1, "detected": 1, "still_flagged": 0, "errors": 0,
                                                    "fix_unaudited": 0,
                                                    "recon": {"at": 1, "file": 0, "elsewhere": 0, "none": 0}}
    assert main(["bench", str(path), "--trees", str(tmp_path / "trees"), "--draw", "2"]) == 2  # no case of draw 2
    assert "no case" in capsys.readouterr().err
    path = _write(tmp_path, _case(pre, fix), _case(pre, fix, id="agent-2", draw=2, split="heldout"))
    assert main(["bench", str(path), "--trees", str(tmp_path / "trees"), "--draw", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["harness-audit"]["python heldout"]["cases"] == 1 and out["harness-audit"]["python study"]["cases"] == 0
    assert main(["bench", str(path)]) == 2  # no --trees: a usage error, not a traceback


def _report(folder: Path, *findings: tuple[str, str, int], name: str = "report-2026-12-07_100000-1checks.json") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps({"schema_version": "1.3", "findings": [
        {"check": c, "file": f, "line": line, "also_at": []} for c, f, line in findings]}))


def test_reports_written_elsewhere_are_scored_by_the_same_rule(tmp_path: Path) -> None:
    """Risk: a host-model audit (or any engine run outside the bench) cannot be put beside the static engine on
    the same cases, or a missing audit of the fix tree reads as 'not flagged at the fix'."""
    pre, fix = "a" * 40, "b" * 40
    cases = [rb.Case.model_validate(_case(pre, fix)), rb.Case.model_validate(_case(pre, fix, id="agent-2"))]
    trees = tmp_path / "trees"
    for c in ("a" * 40, "b" * 40):
        (trees / "acme+agent" / c / "pkg").mkdir(parents=True)
    reports = tmp_path / "host"
    _report(reports / "agent-1", ("C12", "agent/loop.py", 8))  # the pre-fix audit only
    engine = rb.ReportsEngine(folder=reports, name="host")
    first = rb.run_case(cases[0], engine, trees)
    assert first.detected and first.fix_unaudited and not first.still_flagged and first.error == ""
    _report(reports / "agent-1" / "fix", ("C12", "agent/loop.py", 12), name="latest.json")
    again = rb.run_case(cases[0], engine, trees)
    assert again.detected and again.still_flagged and not again.fix_unaudited
    missing = rb.run_case(cases[1], engine, trees)  # no folder for this case: an error, not a miss
    assert not missing.detected and "no pre-fix report" in missing.error
    assert rb.tally([first, missing]).cell() == "  1/2    50% (0 at fix, 1 unaudited) 1err"


def test_cli_reports_spec_is_checked(tmp_path: Path, mirror: tuple[Path, str, str],
                                     capsys: pytest.CaptureFixture[str]) -> None:
    mirrors, pre, fix = mirror
    path = _write(tmp_path, _case(pre, fix))
    rb.export(rb.load_cases(path), mirrors, tmp_path / "trees")
    assert main(["bench", str(path), "--trees", str(tmp_path / "trees"), "--reports", "host"]) == 2
    assert "NAME=DIR" in capsys.readouterr().err
    _report(tmp_path / "host" / "agent-1", ("C12", "agent/loop.py", 30))  # elsewhere: a miss
    assert main(["bench", str(path), "--trees", str(tmp_path / "trees"), "--reports",
                 f"host={tmp_path / 'host'}", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["host"]["python study"] == {"cases": 1, "detected": 0, "still_flagged": 0, "errors": 0,
                                           "fix_unaudited": 0, "recon": {}}  # a report without landmarks
    assert out["harness-audit"]["python study"]["detected"] == 1


def test_cli_compare_passes_the_engines_own_options(tmp_path: Path, mirror: tuple[Path, str, str],
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Risk: another engine (hybrid with a local model) cannot be put beside the static one, because --compare
    only takes an executable; or a quoted option list is split wrongly."""
    mirrors, pre, fix = mirror
    path = _write(tmp_path, _case(pre, fix))
    rb.export(rb.load_cases(path), mirrors, tmp_path / "trees")
    seen = tmp_path / "argv.txt"
    fake = tmp_path / "fake-audit"
    fake.write_text(f"""#!{sys.executable}
import json, sys
from pathlib import Path
argv = sys.argv[1:]
Path({str(seen)!r}).open("a").write(json.dumps(argv) + "\\n")
out = Path(argv[argv.index("--output-dir") + 1])
(out / "report-1.json").write_text(json.dumps({{"findings": [{{"check": "C12", "file": "agent/loop.py", "line": 7}}]}}))
""")
    fake.chmod(0o755)
    spec = f"hy={fake} --engine hybrid --base-url 'http://127.0.0.1:9/v1'"
    assert main(["bench", str(path), "--trees", str(tmp_path / "trees"), "--compare", spec, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["hy"]["python study"]["detected"] == 1
    argv = json.loads(seen.read_text().splitlines()[0])
    assert argv[-4:] == ["--engine", "hybrid", "--base-url", "http://127.0.0.1:9/v1"]  # last wins over static
    assert main(["bench", str(path), "--trees", str(tmp_path / "trees"), "--compare", "hy='unclosed"]) == 2
