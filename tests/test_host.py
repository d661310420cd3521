"""Host-model audits through the shell verbs (`harness-audit host …`), and the protocol's bounds.

The complete run of `tests/host_scenario.py` goes half through `main()` in this process and half through fresh
`python -m harness_audit` processes: the second half continues from the run state on disk alone.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness_audit import host
from harness_audit.cli import main
from harness_audit.errors import UsageError
from harness_audit.llm.ledger import read_ledger
from tests.host_scenario import FIRST_HALF, SECOND_HALF, SELECTION, Call, assert_host_report, make_workspace

_FLAGS = {"confirm_hint": "--confirm-hint"}


def verb_args(call: Call, run_id: str, out: Path) -> list[str]:
    """`host VERB RUN …` for one scenario call."""
    argv = ["host", call.step, run_id, "--output-dir", str(out), "--json"]
    args = dict(call.args)
    if call.step == "dismiss":
        argv.append(str(args.pop("lead")))
    for key, value in args.items():
        argv += [_FLAGS.get(key, f"--{key}"), str(value)]
    return argv


def in_process(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


def new_process(argv: list[str], cwd: Path) -> tuple[int, dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_AUDIT")}
    done = subprocess.run([sys.executable, "-m", "harness_audit", *argv], capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=120, check=False)
    assert done.stderr == "", done.stderr
    return done.returncode, json.loads(done.stdout)


def check(call: Call, code: int, answer: dict[str, Any]) -> None:
    assert code == (0 if call.accepted else 2), (call, answer["text"])
    assert answer["ok"] is call.accepted
    assert call.says in answer["text"], (call.says, answer["text"])


def test_a_complete_run_through_the_shell_verbs_survives_a_restart(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_workspace(tmp_path)
    out = tmp_path / "out"
    code, begun = in_process(["host", "begin", str(root), SELECTION, "--output-dir", str(out), "--json"], capsys)
    assert code == 0
    run_id = begun["run_id"]
    assert f"run: {run_id}" in begun["text"] and begun["missing"] == {"truncation": ["C13"]}
    for call in FIRST_HALF:
        check(call, *in_process(verb_args(call, run_id, out), capsys))
    # the host restarts: every later step is a new process that knows only the run id and the output directory
    for call in SECOND_HALF:
        check(call, *new_process(verb_args(call, run_id, out), tmp_path))
    code, final = new_process(["host", "status", run_id, "--output-dir", str(out), "--json"], tmp_path)
    assert code == 0 and final["finished"] and final["phase"] == "finished"
    (report_json,) = [Path(p) for p in final["reports"] if p.endswith(".json")]
    assert {Path(p).suffix for p in final["reports"]} == {".md", ".json", ".sarif"}
    assert main([str(root), SELECTION, "--output-dir", str(tmp_path / "cli"), "--format", "json", "-q",
                 "--no-cache"]) in (0, 1)
    capsys.readouterr()
    (cli_json,) = (tmp_path / "cli").glob("report-*.json")
    assert_host_report(report_json, cli_json)
    sarif = json.loads(report_json.with_suffix(".sarif").read_text(encoding="utf-8"))
    leads = {r["properties"]["lead"]["id"]: r["properties"]["lead"] for r in sarif["runs"][0]["results"]
             if "lead" in r["properties"]}
    assert leads == {"C1-1": {"id": "C1-1", "status": "confirmed", "settled_by": "host:C1"},
                     "C12-1": {"id": "C12-1", "status": "dismissed", "settled_by": "host:C12"}}
    assert "static lead `C1-1`" in report_json.with_suffix(".md").read_text(encoding="utf-8")


def test_begin_prints_the_run_id_and_how_to_go_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_workspace(tmp_path)
    assert main(["host", "begin", str(root), "c1", "c12"]) == 0
    text = capsys.readouterr().out
    run_id = next(line.split(": ", 1)[1] for line in text.splitlines() if line.startswith("run: "))
    assert f"harness-audit host next {run_id} --output-dir" in text  # the run is not under the cwd's default
    assert "## Evidence" in text and "evidence-not-found" in text  # how to cite, with the gate's refusals
    assert (root / ".harness-audit" / "runs" / run_id / "ledger.jsonl").is_file()


def test_every_printed_command_names_the_output_directory_absolutely(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_workspace(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["host", "begin", "home/ws", "C1", "--output-dir", "out"]) == 0
    text = capsys.readouterr().out
    run_id = text.split("\n", 1)[0].removeprefix("run: ")
    flag = f"--output-dir {tmp_path / 'out'}"
    assert f"harness-audit host next {run_id} {flag}" in text and "--output-dir out" not in text
    # run from another directory, the printed commands still find the run
    monkeypatch.chdir(root)
    assert main(["host", "next", run_id, "--output-dir", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert printed.count(flag) >= 3 and "--output-dir out " not in printed
    assert main(["host", "status", run_id, *flag.split()]) == 0
    assert f"next: report findings for C1, then harness-audit host next {run_id} {flag}" in capsys.readouterr().out
    # a relative directory with `..` is printed normalised
    assert main(["host", "begin", ".", "C1", "--output-dir", "../../out"]) == 0
    text = capsys.readouterr().out
    assert f"output-dir: {(tmp_path / 'out').resolve()}\n" in text and "/../" not in text
    # the working directory's own default needs no flag at all
    monkeypatch.chdir(tmp_path)
    assert main(["host", "begin", "home/ws", "C1", "--output-dir", ".harness-audit"]) == 0
    text = capsys.readouterr().out
    assert "--output-dir" not in text.replace(f"output-dir: {tmp_path / '.harness-audit'}", "")


def test_every_output_dir_help_names_the_same_default(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from harness_audit.cli._helpers import OUTPUT_DIR_DEFAULT

    monkeypatch.setenv("COLUMNS", "400")  # no wrapping inside `.harness-audit`

    helps: dict[str, str] = {}
    for argv in (["--help"], ["host", "begin", "--help"], ["host", "next", "--help"], ["job-output", "--help"]):
        assert main(argv) == 0
        helps[" ".join(argv)] = " ".join(capsys.readouterr().out.split())
    default = " ".join(OUTPUT_DIR_DEFAULT.split())
    assert f"(default: {default} in PATH)" in helps["--help"]
    assert f"(default: {default} in PATH)" in helps["host begin --help"]
    assert f"(default: {default} in the working directory)" in helps["host next --help"]
    assert f"(default: {default} in the working directory)" in helps["job-output --help"]
    assert all("configured for ." not in h for h in helps.values())


def test_a_check_is_never_closed_unexamined_by_accident(tmp_path: Path) -> None:
    """Risk: a host runs `next` twice (its first answer was cut off) and a check it never read reads "ran,
    nothing found" in the report, for good (a cold host following SKILL.md lost C3 this way)."""
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1,C4").data["run_dir"])
    assert host.next_check(run_dir).data["check"] == "C1"  # recon needs no call of its own
    refused = host.next_check(run_dir, caller=host.Caller(face="shell"))
    assert not refused.ok and refused.data["check"] == "C1" and "--nothing-found" in refused.text
    assert host.status(run_dir).data["phase"] == "checking C1"  # nothing changed
    mcp = host.next_check(run_dir, caller=host.Caller(face="mcp"))
    assert not mcp.ok and "nothing_found=true" in mcp.text
    assert host.next_check(run_dir, nothing_found=True).data["check"] == "C4"
    run_dir = Path(host.begin(root, "C2").data["run_dir"])  # a check without leads says so, in next and status
    handed = host.next_check(run_dir)
    assert handed.data["check"] == "C2" and handed.data["leads"] == []
    assert "No static leads for C2" in handed.text and "No static leads for C2" in host.status(run_dir).text


def test_status_says_finish_when_next_would(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1,C13").data["run_dir"])  # no truncation landmark: C13 is not covered
    assert host.next_check(run_dir).data["check"] == "C1"
    assert host.status(run_dir).data["phase"] == "checking C1"
    answered = host.next_check(run_dir, nothing_found=True)
    assert answered.data["next"] == "finish" and "finish: every check is done" in answered.text
    shown = host.status(run_dir, caller=host.Caller(face="shell"))
    assert shown.data["phase"] == "checks done"
    assert f"next: finish: every check is done; write the reports with harness-audit host finish {shown.data['run_id']}" \
        in shown.text and "host next" not in shown.text


def test_finishing_before_next_settles_checks_without_landmarks_as_not_covered(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1,C13").data["run_dir"])
    host.next_check(run_dir)
    # C13 has no truncation landmark: finishing now ends it as `next` would have, never as "not audited"
    assert host.status(run_dir).data["phase"] == "checking C1"
    done = host.finish_run(run_dir)
    assert done.data["state"] == "complete", done.text
    assert "C13 not-covered: missing truncation" in done.text


@pytest.mark.parametrize("argv, message", [
    (["host", "begin", ".", "C16"], "unknown check 'C16'"),
    (["host", "begin", "no/such/dir", "C1"], "does not exist"),
    (["host", "next", "../../etc"], "is not a run id"),
    (["host", "next", "20260101T000000-deadbeef"], "no run '20260101T000000-deadbeef'"),
    (["host", "report", "20260101T000000-deadbeef", "--check", "C1"], "required"),
    (["host", "landmark", "20260101T000000-deadbeef", "--kind", "retry", "--file", "a.py", "--line", "0"],
     "lines start at 1"),
    (["host", "frobnicate"], "invalid choice"),
])
def test_a_bad_call_exits_2_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err


def test_the_budget_counts_protocol_calls_and_ends_the_check(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    (root / ".harness-audit.toml").write_text("max_tool_calls_per_check = 2\n", encoding="utf-8")
    begun = host.begin(root, "C1,C12")
    run_dir = Path(begun.data["run_dir"])
    assert host.next_check(run_dir).data["check"] == "C1"
    thin = {"check": "C1", "verdict": "confirmed", "file": "agent/loop.py", "line": 28, "evidence": "continue",
            "claim": "c", "consequence": "x"}
    assert [host.report_finding(run_dir, **thin).data["reason"] for _ in range(3)] == [
        "evidence-too-thin", "evidence-too-thin", "budget-exhausted"]
    assert "no check is handed out" in host.report_finding(run_dir, **thin).text
    assert host.next_check(run_dir).data["check"] == "C12"
    ends = {e["unit"]: e for e in read_ledger(run_dir / "ledger.jsonl").of("unit-end")}
    assert (ends["C1"]["status"], ends["C1"]["failure"]) == ("failed", "budget-exhausted")
    done = host.finish_run(run_dir)
    assert done.data["state"] == "incomplete"
    assert "C1 failed:budget-exhausted" in done.text


def test_finishing_early_leaves_the_rest_incomplete_and_the_run_closed(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1,C12").data["run_dir"])
    host.next_check(run_dir)
    done = host.finish_run(run_dir)
    assert done.data["state"] == "incomplete" and "C12 incomplete: not audited" in done.text
    # status says what the report says: C12 was never audited
    assert host.status(run_dir).data["checks"] == {"C1": "ran", "C12": "incomplete"}
    with pytest.raises(UsageError, match="is finished"):
        host.next_check(run_dir)
    with pytest.raises(UsageError, match="is finished"):
        host.report_landmark(run_dir, kind="retry", file="agent/loop.py", line=18)


def test_landmarks_after_recon_and_unknown_leads_are_refused(tmp_path: Path) -> None:
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1").data["run_dir"])
    host.next_check(run_dir)
    assert host.report_landmark(run_dir, kind="retry", file="agent/loop.py", line=18).data["reason"] == "recon-over"
    assert host.dismiss_lead(run_dir, lead="C9-1", reason="it is not a real problem here").data["reason"] == \
        "unknown-lead"
    assert host.dismiss_lead(run_dir, lead="C1-1", reason="wrong").data["reason"] == "reason-too-short"
    before = host.status(run_dir).data
    assert host.report_finding(run_dir, check="C12", verdict="confirmed", file="agent/loop.py", line=17,
                               evidence="while True:\n    response = client.chat.completions.create(",
                               claim="c", consequence="x").data["reason"] == "check-not-in-run"
    # as SKILL.md says: a call turned away before the gate is free, one the gate refuses counts
    after = host.status(run_dir).data
    assert after["calls_left"] == before["calls_left"] - 1
    host.dismiss_lead(run_dir, lead="C9-1", reason="it is not a real problem here")
    host.dismiss_lead(run_dir, lead="C1-1", reason="wrong")
    assert host.status(run_dir).data == after


def test_a_host_run_rerenders_from_its_ledger_like_any_run(tmp_path: Path) -> None:
    from harness_audit.llm.replay import rerender

    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1").data["run_dir"])
    host.next_check(run_dir)
    host.report_finding(run_dir, check="C1", verdict="confirmed", file="agent/loop.py", line=27,
                        evidence="except Exception:\n    continue", claim="no result for a failed call",
                        consequence="HTTP 400 on the next request", lead="C1-1")
    finished = host.finish_run(run_dir)
    report, _ = rerender(run_dir, write=False)
    assert report.meta.engine == "host"
    assert [(f.check.value, f.line, f.lead) for f in report.findings] == [("C1", 27, "C1-1")]
    assert [(lead.lead_id, lead.status.value, lead.by) for lead in report.leads] == [("C1-1", "confirmed", "host:C1")]
    assert finished.data["findings"] == 1


def test_refusals_through_the_shell_name_the_flag_to_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_workspace(tmp_path)
    out = tmp_path / "out"
    assert main(["host", "begin", str(root), "C1", "--output-dir", str(out)]) == 0
    run_id = capsys.readouterr().out.split("\n", 1)[0].removeprefix("run: ")
    assert main(["host", "next", run_id, "--output-dir", str(out)]) == 0
    capsys.readouterr()
    code = main(["host", "report", run_id, "--output-dir", str(out), "--check", "C1", "--verdict", "suspected",
                 "--file", "agent/loop.py", "--line", "27", "--evidence", "except Exception:\n    continue",
                 "--claim", "c", "--consequence", "x"])
    assert code == 2
    assert "Refused (missing-confirm-hint)" in capsys.readouterr().out and "`--confirm-hint`" in \
        host.report_finding(host.find_run(run_id, out), check="C1", verdict="suspected", file="agent/loop.py",
                            line=27, evidence="except Exception:\n    continue", claim="c", consequence="x",
                            caller=host.Caller(face="shell")).text


def test_a_dismissed_landmark_is_unused_listed_with_its_reason_and_can_leave_a_check_uncovered(
        tmp_path: Path) -> None:
    from harness_audit.llm.replay import rerender

    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1,C12").data["run_dir"])
    why = "line 17 is a REPL that waits for a person each round, not a model loop"
    assert host.dismiss_landmark(run_dir, kind="agent-loop", file="agent/loop.py", line=17,
                                 reason="wrong").data["reason"] == "reason-too-short"
    done = host.dismiss_landmark(run_dir, kind="agent-loop", file="./agent/loop.py", line=17, reason=why)
    assert done.ok and "No agent-loop landmark is left: C12 will be not covered" in done.text
    assert " + 1 dismissed; " in host.status(run_dir).text
    task = host.next_check(run_dir)
    assert task.data["check"] == "C1" and "agent-loop" not in {lm["kind"] for lm in task.data["landmarks"]}
    assert host.dismiss_landmark(run_dir, kind="tool-execution", file="agent/loop.py", line=23,
                                 reason=why).data["reason"] == "recon-over"
    finished = host.finish_run(run_dir)
    assert "C12 not-covered: missing agent-loop" in finished.text
    report, _ = rerender(run_dir, write=False)
    # the report finish wrote and the one re-rendered from the ledger agree
    assert [(d.landmark.kind.value, d.landmark.line, d.reason, d.by) for d in report.dismissed_landmarks] == [
        ("agent-loop", 17, why, "host:recon")]
    assert all(lm.kind.value != "agent-loop" for lm in report.landmarks)
    md = Path(next(p for p in finished.data["reports"] if p.endswith(".md"))).read_text(encoding="utf-8")
    assert "Landmarks dismissed in recon, not used by any check (1):" in md and why in md


@pytest.mark.parametrize("how", ["default", "configured", "given"])
def test_a_host_run_and_its_reports_go_where_begin_says(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], how: str) -> None:
    root = make_workspace(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the host runs the verbs from a directory that is not the audited one
    argv = ["host", "begin", str(root), "C1"]
    expected = {"default": root / ".harness-audit", "configured": root / "audit-out", "given": elsewhere / "mine"}[how]
    if how == "configured":
        (root / ".harness-audit.toml").write_text('output_dir = "audit-out"\n', encoding="utf-8")
    if how == "given":
        argv += ["--output-dir", "mine"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    run_id = text.split("\n", 1)[0].removeprefix("run: ")
    assert f"output-dir: {expected}\n" in text
    assert "finish writes the reports there" in text and "Every command printed here names it" in text
    finish = next(line for line in text.splitlines() if "host next" in line).split("host next ", 1)[1]
    assert finish.startswith(f"{run_id} --output-dir {expected}")
    assert (expected / "runs" / run_id / "ledger.jsonl").is_file()
    assert main(["host", "finish", run_id, "--output-dir", str(expected)]) == 0
    reports = [Path(line.removeprefix("report: ")) for line in capsys.readouterr().out.splitlines()
               if line.startswith("report: ")]
    assert {p.suffix for p in reports} == {".md", ".json", ".sarif"} and all(p.parent == expected for p in reports)
    # without --output-dir, a later verb looks under the working directory's default and says what to pass
    assert main(["host", "status", run_id]) == 2
    assert "pass the --output-dir that `begin` used" in capsys.readouterr().err


def test_status_finish_and_the_report_count_landmarks_alike(tmp_path: Path) -> None:
    """Accepted = in use + dismissed, and refused, under the same names in all three (a landmark given twice
    is one landmark, as the report lists it once)."""
    root = make_workspace(tmp_path)
    begun = host.begin(root, "C1,C12")
    run_dir, static = Path(begun.data["run_dir"]), len(begun.data["landmarks"])
    for _ in range(2):
        assert host.report_landmark(run_dir, kind="history-append", file="agent/loop.py", line=29).ok
    assert not host.report_landmark(run_dir, kind="history-append", file="agent/nowhere.py", line=3).ok
    why = "line 17 is a REPL that waits for a person each round, not a model loop"
    assert host.dismiss_landmark(run_dir, kind="agent-loop", file="agent/loop.py", line=17, reason=why).ok
    expected = {"accepted": static + 1, "from_static": static, "from_host": 1, "in_use": static, "dismissed": 1,
                "refused": 1}
    said = (f"{static + 1} accepted by the gate ({static} from static recon, 1 from the host) = {static} in use "
            "+ 1 dismissed; 1 refused")
    status = host.status(run_dir)
    assert f"landmarks: {said}\n" in status.text
    assert {k: status.data["landmarks"][k] for k in expected} == expected
    host.next_check(run_dir)
    finished = host.finish_run(run_dir)
    assert f"landmarks: {said}\n" in finished.text and finished.data["landmarks"] == status.data["landmarks"]
    assert f"landmarks: {said}\n" in host.status(run_dir).text  # a finished run still says the same
    md = Path(next(p for p in finished.data["reports"] if p.endswith(".md"))).read_text(encoding="utf-8")
    assert f"## Appendix: landmarks in use ({static})" in md
    assert (f"Landmarks: {static + 1} accepted by the gate = {static} in use (listed here) + 1 dismissed in recon; "
            "1 refused by the gate.") in md
    assert "Landmarks dismissed in recon, not used by any check (1):" in md


def test_a_host_runs_cost_section_shows_protocol_calls_and_times_and_no_token_columns(tmp_path: Path) -> None:
    from harness_audit.llm.replay import rerender
    from tests.llm.conftest import C1_EVIDENCE

    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1,C13").data["run_dir"])
    assert host.report_landmark(run_dir, kind="history-append", file="agent/loop.py", line=29).ok
    assert host.next_check(run_dir).data["check"] == "C1"
    finding = {"check": "C1", "verdict": "confirmed", "file": "agent/loop.py", "line": 28, "claim": "a defect",
               "consequence": "the next request is rejected"}
    assert host.report_finding(run_dir, evidence=C1_EVIDENCE, **finding).ok
    assert not host.report_finding(run_dir, evidence="log_and_forget(call)", **finding).ok
    finished = host.finish_run(run_dir)
    md = Path(next(p for p in finished.data["reports"] if p.endswith(".md"))).read_text(encoding="utf-8")
    cost = md.split("## Cost\n", 1)[1].split("\n## ", 1)[0]
    assert "protocol calls: 3 · the host's own model: tokens not visible to us" in cost
    header, _, recon, c1, c13, *_ = [line for line in cost.splitlines() if line.startswith("|")]
    assert header == "| unit | status | time (s) | protocol calls | findings | refusals |"
    assert not any(word in cost for word in ("requests", "input", "cache", "reasoning", "unknown", "$"))
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in (recon, c1, c13)]
    assert [(row[0], row[3]) for row in cells] == [("recon", "1"), ("C1", "2"), ("C13", "0")]
    assert float(cells[0][2]) >= 0 and float(cells[1][2]) >= 0 and cells[2][1:3] == ["not-covered", "—"]
    assert cells[1][4:] == ["1", "1"]
    data = json.loads(Path(next(p for p in finished.data["reports"] if p.endswith(".json"))).read_text("utf-8"))
    assert data["meta"]["protocol_calls"] == {"recon": 1, "C1": 2}
    assert data["meta"]["recon_duration_s"] == pytest.approx(float(cells[0][2]), abs=1e-3)
    # the report re-rendered from the ledger says the same
    report, _ = rerender(run_dir, write=False)
    assert report.meta.protocol_calls == {"recon": 1, "C1": 2}
    assert report.meta.recon_duration_s == pytest.approx(data["meta"]["recon_duration_s"], abs=1e-3)
    assert [o.duration_s for o in report.outcomes] == pytest.approx([o["duration_s"] for o in data["outcomes"]],
                                                                    abs=1e-3)


def _c13_run(tmp_path: Path) -> Path:
    """A run of C13 alone, its truncation landmark reported, its one lead (C13-1, suspected, line 29) handed out."""
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C13").data["run_dir"])
    assert host.report_landmark(run_dir, kind="truncation", file="agent/loop.py", line=29).ok
    task = host.next_check(run_dir)
    assert [(lead["id"], lead["line"], lead["verdict"]) for lead in task.data["leads"]] == [("C13-1", 29, "suspected")]
    return run_dir


_C13 = {"check": "C13", "file": "agent/loop.py", "consequence": "the context overflows"}
_LINE_29 = 'messages.append({"role": "tool", "tool_call_id": call.id, "content": str(output)})'
_LINE_23 = "for call in message.tool_calls:"


def test_what_the_skill_says_about_leads_holds(tmp_path: Path) -> None:
    """SKILL.md: `--lead` need not cite the lead's line; a suspected lead may be reported confirmed."""
    from harness_audit.llm.replay import rerender

    run_dir = _c13_run(tmp_path / "named")
    assert host.report_finding(run_dir, verdict="confirmed", line=23, evidence=_LINE_23, claim="whole results",
                               lead="C13-1", **_C13).ok
    report, _ = rerender(run_dir, write=False)
    assert [(lead.lead_id, lead.status.value) for lead in report.leads] == [("C13-1", "confirmed")]
    assert [(f.line, f.verdict.value, f.lead) for f in report.findings] == [(23, "confirmed", "C13-1")]
    # the same finding without --lead, 6 lines from the lead: the lead stays unaddressed, with its static verdict
    run_dir = _c13_run(tmp_path / "unnamed")
    assert host.report_finding(run_dir, verdict="confirmed", line=23, evidence=_LINE_23, claim="whole", **_C13).ok
    report, _ = rerender(run_dir, write=False)
    assert [(lead.lead_id, lead.status.value) for lead in report.leads] == [("C13-1", "unaddressed")]
    assert sorted((f.line, f.verdict.value) for f in report.findings) == [(23, "confirmed"), (29, "suspected")]


def test_what_the_skill_says_about_correcting_a_finding_holds(tmp_path: Path) -> None:
    """SKILL.md: an accepted finding is final; findings of one check at one place fold: the less certain verdict
    stands, and between equal verdicts the first one reported."""
    from harness_audit.llm.replay import rerender

    run_dir = _c13_run(tmp_path)
    for verdict, claim in (("confirmed", "first"), ("confirmed", "corrected")):
        assert host.report_finding(run_dir, verdict=verdict, line=29, evidence=_LINE_29, claim=claim, lead="C13-1",
                                   **_C13).ok
    report, _ = rerender(run_dir, write=False)
    assert [(f.line, f.verdict.value, f.claim) for f in report.findings] == [(29, "confirmed", "first")]
    assert host.report_finding(run_dir, verdict="suspected", line=29, evidence=_LINE_29, claim="lowered",
                               confirm_hint="whether any caller bounds output", **_C13).ok
    report, _ = rerender(run_dir, write=False)
    assert [(f.line, f.verdict.value, f.claim, f.lead) for f in report.findings] == [
        (29, "suspected", "lowered", "C13-1")]


def test_a_large_tree_lists_a_few_landmarks_per_kind_and_every_one_in_a_file(tmp_path: Path) -> None:
    """Risk: `begin` on a real repository printed 3,400 landmark lines; hosts lost the rest of the answer (how to
    cite, the missing kinds) to their own output limits. Each kind shows a few, the harness's own code before
    tests, and the run's directory holds the whole list, one line per place (recon and roles merged)."""
    root = make_workspace(tmp_path)
    call = "import requests\n\n\ndef fetch_{n}(url):\n    return requests.post(url, json={{}}, timeout=5)\n"
    for n in range(12):
        (root / "agent" / f"net_{n}.py").write_text(call.format(n=n), encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_net.py").write_text(call.format(n=99), encoding="utf-8")
    began = host.begin(root, "C11")
    run_dir = Path(began.data["run_dir"])
    listing = (run_dir / host.LANDMARK_FILE).read_text(encoding="utf-8").splitlines()
    http = [line for line in listing if line.startswith("- http-call: ")]
    assert len(http) == len({line.split(" ")[2] for line in http}) >= 12  # one line per place
    heading = next(line for line in began.text.splitlines() if line.startswith("- http-call ("))
    # kinds no check of the run uses are counted, not listed: a one-check run printed 1,200 landmark lines of them
    assert not re.search(r"^- history-append \(\d+\):", began.text, re.M)
    assert re.search(r"^- \d+ more places of kinds no check of this run uses, in ", began.text, re.M)
    assert heading == f"- http-call ({len(http)}):"
    shown = began.text.split(heading, 1)[1].split("\n- ", 1)[0]
    assert shown.count("\n  - agent/") == host.SHOWN_PER_KIND and "tests/test_net.py:" not in shown
    own = [line for line in http if "tests/" not in line]
    assert f"and {len(own) - host.SHOWN_PER_KIND} more in {run_dir / host.LANDMARK_FILE}" in shown
    assert f"and {len(http) - len(own)} in test or example code, in {run_dir / host.LANDMARK_FILE}" in shown
    assert str(run_dir / host.LANDMARK_FILE) in began.text
    # the count `begin` states is the one `status` and `finish` state; the places are the file's lines
    accepted = host.status(run_dir).data["landmarks"]["accepted"]
    assert f"accepted ({accepted}, at {len(listing)} places" in began.text


def test_status_says_how_each_lead_of_the_current_check_would_settle(tmp_path: Path) -> None:
    """Risk: hosts could not see whether a report had confirmed a lead, and spent calls reporting it again."""
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1").data["run_dir"])
    handed = host.next_check(run_dir)
    assert handed.text.rstrip().endswith("Now checking C1 (above).")
    assert host.status(run_dir).data["leads"] == {"C1-1": "open"}
    assert "C1-1 open (stays a finding with its static verdict)" in host.status(run_dir).text
    host.report_finding(run_dir, check="C1", verdict="confirmed", file="agent/loop.py", line=27,
                        evidence="except Exception:\n    continue", claim="no result for a failed call",
                        consequence="HTTP 400 on the next request", lead="C1-1")
    assert host.status(run_dir).data["leads"] == {"C1-1": "confirmed"}
    assert "accepted for C1 so far:\n  - agent/loop.py:27 confirmed (C1-1) no result for a failed call" in \
        host.status(run_dir).text  # hosts recounted their own accepted reports by hand
    finished = host.finish_run(run_dir)
    assert host.status(run_dir).data["leads"] == {} and finished.ok  # settled for good: the report says how


def test_a_static_candidate_the_gate_refuses_is_said_not_hidden(tmp_path: Path) -> None:
    """Risk: a host saw a lead id in the ledger that `next` never showed and could not dismiss, and counts that
    differed between `status` and `finish`."""
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1").data["run_dir"])
    ledger = run_dir / "ledger.jsonl"
    records = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    payload = next(r for r in records if r["event"] == "static-leads")
    thin = dict(payload["leads"]["C1"][0])
    thin["id"] = "C1-2"
    thin["candidate"] = {**thin["candidate"], "evidence": "this text is nowhere in the file"}
    payload["leads"]["C1"].append(thin)
    ledger.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    handed = host.next_check(run_dir)
    assert [lead["id"] for lead in handed.data["leads"]] == ["C1-1"]
    assert "1 more static candidate(s) of C1 did not pass the evidence gate" in handed.text
    finished = host.finish_run(run_dir)
    assert "of those refusals, 1 are static candidates that never became leads and 0 are your own" in finished.text


def test_two_leads_at_one_place_are_marked_as_such() -> None:
    """Risk: hosts spent a report per lead where two rules flagged one line, not knowing one report settles both."""
    from harness_audit.findings import Candidate, CheckId, Verdict

    def lead(n: int, line: int) -> host.StaticLead:
        cand = Candidate(check=CheckId.C14, verdict=Verdict.CONFIRMED, file="a.py", line=line, evidence="x = 1",
                         claim="c", consequence="q", source=f"static:C14/r{n}")
        return host.StaticLead(lead_id=f"C14-{n}", candidate=cand)

    leads = [lead(1, 3), lead(2, 9), lead(3, 3)]
    assert host._first_at_place(leads) == {"C14-3": "C14-1"}
    line = host._lead_line(leads[2], {}, "en", "C14-1")
    assert "same place as C14-1: one report there without --lead settles both" in line


def test_status_gives_the_open_check_text_again(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Risk: two hosts lost `next`'s answer to their own output filters and had to dig it out of the ledger."""
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1").data["run_dir"])
    handed = host.next_check(run_dir)
    shown = host.status(run_dir, caller=host.Caller(face="shell"))
    assert "--task" in shown.text and handed.data["task"] not in shown.text
    again = host.status(run_dir, task=True)
    assert again.data["task"] == handed.data["task"] and handed.data["task"] in again.text
    assert main(["host", "status", run_dir.name, "--task", "--output-dir", str(run_dir.parent.parent)]) == 0
    assert handed.data["task"] in capsys.readouterr().out


def test_several_leads_wrong_for_one_reason_are_dismissed_at_once(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """Risk: 29 UI-fetch leads cost a host 29 commands; several with one reason go in one, all or none, each still
    counted as a call."""
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1").data["run_dir"])
    ledger = run_dir / "ledger.jsonl"
    records = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    payload = next(r for r in records if r["event"] == "static-leads")
    twin = dict(payload["leads"]["C1"][0], id="C1-2")
    payload["leads"]["C1"].append(twin)
    ledger.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert [x["id"] for x in host.next_check(run_dir).data["leads"]] == ["C1-1", "C1-2"]
    before = host.status(run_dir).data["calls_left"]
    refused = host.dismiss_lead(run_dir, lead="C1-1, C1-9", reason="the handler records an error result")
    assert not refused.ok and "C1-9" in refused.text and host.status(run_dir).data["calls_left"] == before
    code = main(["host", "dismiss", run_dir.name, "C1-1", "C1-2", "--reason", "the handler records an error result",
                 "--output-dir", str(run_dir.parent.parent)])
    assert code == 0 and "C1-1, C1-2" in capsys.readouterr().out
    after = host.status(run_dir).data
    assert after["leads"] == {"C1-1": "dismissed", "C1-2": "dismissed"} and after["calls_left"] == before - 2


def test_one_finding_settles_the_several_leads_it_is_the_root_cause_of(tmp_path: Path) -> None:
    """Risk: `--lead` took one lead; a host whose one finding was the root cause of two leads at different lines had
    to report it twice or leave the second lead unaddressed (kept as a static finding beside its own)."""
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1").data["run_dir"])
    ledger = run_dir / "ledger.jsonl"
    records = [json.loads(line) for line in ledger.read_text(encoding="utf-8").splitlines()]
    payload = next(r for r in records if r["event"] == "static-leads")
    payload["leads"]["C1"].append(dict(payload["leads"]["C1"][0], id="C1-2"))
    ledger.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    host.next_check(run_dir)
    report = {"check": "C1", "verdict": "confirmed", "file": "agent/loop.py", "line": 23,
              "evidence": "for call in message.tool_calls:", "claim": "a failing tool leaves its call unanswered",
              "consequence": "the next request is rejected", "direction": "append an error result"}
    refused = host.report_finding(run_dir, lead="C1-1,C1-9", **report)
    assert not refused.ok and "C1-9" in refused.text  # all must be leads of the check: nothing recorded
    assert host.status(run_dir).data["leads"] == {"C1-1": "open", "C1-2": "open"}
    assert host.report_finding(run_dir, lead="C1-1, C1-2", **report).ok
    assert host.status(run_dir).data["leads"] == {"C1-1": "confirmed", "C1-2": "confirmed"}


def test_finish_counts_refused_landmarks_on_the_landmark_line_only(tmp_path: Path) -> None:
    """Risk: three hosts read '2 refused by the gate' on finish's findings line as refused findings, when both
    were landmarks of recon (already counted on the landmarks line)."""
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1").data["run_dir"])
    refused = host.report_landmark(run_dir, kind="retry", file="agent/loop.py", line=17, evidence="while (")
    assert not refused.ok
    opened = host.next_check(run_dir)
    assert opened.data["check"] == "C1" and opened.text.startswith("next: closed recon.\n")
    closed = host.next_check(run_dir, nothing_found=True)  # says what it closed: hosts chain status and next
    assert closed.data["next"] == "finish" and closed.text.startswith("next: closed C1 (ran).\n")
    text = host.finish_run(run_dir).text
    assert "0 refused by the gate" in text and "1 refused" in text  # the landmark, on the landmarks line


def test_recon_says_which_needed_kinds_it_found_only_in_tests_or_not_at_all(tmp_path: Path) -> None:
    """Risk: `begin` said "every required landmark is located" when the only agent loop it knew was a test's
    fake loop (instructor, langgraphjs), and said nothing of a kind C1 uses that it never found (CopilotKit);
    four cold hosts audited the wrong place or went on without the harness's own loop."""
    root = make_workspace(tmp_path)
    (root / "agent" / "loop.py").rename(root / "agent" / "test_loop.py")
    (root / "tests").mkdir()
    (root / "agent" / "test_loop.py").rename(root / "tests" / "test_loop.py")
    (root / "agent" / "runner.py").write_text(
        "from agent.tools import TOOLS\n\n\ndef run_call(call):\n    return TOOLS[call.name](**call.args)\n",
        encoding="utf-8")
    text = host.begin(root, "C1,C12").text
    assert "\nstatic leads: C1 0, C12 0 (" in text  # said before recon closes: a host plans its reading by it
    thin = text.split("Not located in the harness's own code", 1)[1].split("\n\n", 1)[0]
    assert "- agent-loop (needed by C12; used by C1): only in test or example code" in thin, thin
    assert "- history-append (used by C1): only in test or example code" in thin
    assert "tool-execution" not in thin  # located in agent/runner.py
    run_dir = Path(host.begin(root, "C1").data["run_dir"])
    host.next_check(run_dir)
    host.next_check(run_dir, nothing_found=True)
    assert "static leads: none (every finding is the host's own)" in host.finish_run(run_dir).text


def test_evidence_from_standard_input_for_reports_and_landmarks(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Risk: `landmark --evidence -` took a literal '-' as the excerpt (a host lost a call to a refusal naming
    every line with a hyphen), while `report --evidence -` read standard input."""
    import io

    root = make_workspace(tmp_path)
    out = tmp_path / "out"
    code, begun = in_process(["host", "begin", str(root), "C1", "--output-dir", str(out), "--json"], capsys)
    run_id = begun["run_id"]
    monkeypatch.setattr(sys, "stdin", io.StringIO("messages.append(message.model_dump(exclude_none=True))\n"))
    code, answer = in_process(["host", "landmark", run_id, "--output-dir", str(out), "--kind", "history-append",
                               "--file", "agent/loop.py", "--line", "20", "--evidence", "-", "--json"], capsys)
    assert code == 0 and answer["ok"], answer["text"]


def test_a_lead_taken_up_by_a_suspected_finding_says_so(tmp_path: Path) -> None:
    """Risk: three hosts settled leads with suspected findings and read 'C3-1 confirmed' / '6 confirmed' in status
    and finish, as if they had confirmed what they had only suspected."""
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C1").data["run_dir"])
    host.next_check(run_dir)
    assert host.report_finding(run_dir, check="C1", verdict="suspected", file="agent/loop.py", line=27,
                               evidence="except Exception:\n    continue", claim="no result for a failed call",
                               consequence="HTTP 400 on the next request", lead="C1-1",
                               confirm_hint="verify that no caller appends a result for the failed call").ok
    now = host.status(run_dir)
    assert now.data["leads"] == {"C1-1": "confirmed-suspected"}
    assert "C1-1 confirmed by a suspected finding" in now.text
    assert "static leads: 1 confirmed (1 of them by a suspected finding), 0 dismissed" in host.finish_run(run_dir).text


def test_landmark_tally_says_which_refusals_were_static_recons() -> None:
    """Risk: three hosts read '1 refused' on the landmark line before they had reported any landmark, and spent
    time looking for a call of theirs that had failed: it was a static recon candidate the gate refused."""
    from harness_audit.report import LandmarkCounts

    text = host._tally_text(LandmarkCounts(in_use=5, dismissed=0, refused=2, from_static=5, refused_static=1), "en")
    assert text.endswith("; 2 refused (1 of them static recon's, not yours)")
    plain = host._tally_text(LandmarkCounts(in_use=5, dismissed=0, refused=1, from_static=5), "en")
    assert plain.endswith("; 1 refused")


def test_several_wrong_landmarks_of_one_kind_go_in_one_dismissal(tmp_path: Path) -> None:
    """Risk: hosts spent 10 to 25 commands dismissing wrong landmarks one by one (test helpers and telemetry listed
    as truncation); one with an unknown place must dismiss none, and each still counts as a call."""
    root = make_workspace(tmp_path)
    (root / "agent" / "more.py").write_text("import requests\n\n\ndef a(u):\n    return requests.post(u, timeout=5)\n\n\n"
                                            "def b(u):\n    return requests.get(u, timeout=5)\n", encoding="utf-8")
    run_dir = Path(host.begin(root, "C11").data["run_dir"])
    listing = (run_dir / host.LANDMARK_FILE).read_text(encoding="utf-8")
    assert "agent/more.py:5" in listing and "agent/more.py:9" in listing
    before = host.status(run_dir).data
    why = "plain HTTP helpers the agent never calls while it runs"
    bad = host.dismiss_landmark(run_dir, kind="http-call", file="agent/more.py", line=5, reason=why,
                                also_at=["agent/more.py:77"])
    assert not bad.ok and "agent/more.py:77" in bad.text
    done = host.dismiss_landmark(run_dir, kind="http-call", file="agent/more.py", line=5, reason=why,
                                 also_at=["agent/more.py:9"])
    assert done.ok and "agent/more.py:5, agent/more.py:9" in done.text
    after = host.status(run_dir).data
    assert after["landmarks"]["dismissed"] == before["landmarks"]["dismissed"] + 2


def test_a_refused_dismissal_names_a_few_landmarks_not_all(tmp_path: Path) -> None:
    """Risk: a refused dismissal printed about 300 landmark places, mostly test files, to a host that had mistyped
    one line."""
    root = make_workspace(tmp_path)
    call = "import requests\n\n\ndef fetch_{n}(url):\n    return requests.post(url, json={{}}, timeout=5)\n"
    for n in range(30):
        (root / "agent" / f"net_{n}.py").write_text(call.format(n=n), encoding="utf-8")
    run_dir = Path(host.begin(root, "C11").data["run_dir"])
    refused = host.dismiss_landmark(run_dir, kind="http-call", file="agent/net_3.py", line=4,
                                    reason="a plain fetch helper the agent never calls while it runs")
    assert not refused.ok
    assert refused.text.count("agent/net_") <= host._KNOWN_SHOWN + 1  # the place asked for, then ten known ones
    assert "agent/net_3.py:5" in refused.text and f"more in {run_dir / host.LANDMARK_FILE}" in refused.text


def test_a_lead_where_a_landmark_was_dismissed_says_so(tmp_path: Path) -> None:
    """Risk: two hosts dismissed a landmark in recon and then met a lead at the same line with nothing to say they
    had read it already, and gave the same reason twice."""
    root = make_workspace(tmp_path)
    run_dir = Path(host.begin(root, "C12").data["run_dir"])
    assert host.report_landmark(run_dir, kind="agent-loop", file="agent/loop.py", line=20,
                                evidence="messages.append(message.model_dump(exclude_none=True))").ok
    why = "the loop header the rules flagged is bounded by the caller's turn budget"
    assert host.dismiss_landmark(run_dir, kind="agent-loop", file="agent/loop.py", line=17, reason=why).ok
    text = host.next_check(run_dir).text
    lead = next(line for line in text.splitlines() if line.startswith("- C12-1: agent/loop.py:17"))
    assert lead.endswith(f"you dismissed the landmark at this line in recon: {why}")
