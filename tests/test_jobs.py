"""Background audits, with real processes: launched from a shell that exits, followed, cancelled, killed.

The llm engine runs against a scripted server on 127.0.0.1 whose first recon reply waits for the test's go, so
each test decides when the job moves on and never races it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness_audit import jobs
from harness_audit.cli import main
from tests.host_scenario import make_workspace
from tests.llm.conftest import C12_FINDING, LANDMARKS, MODEL, finding, tool_step
from tests.llm.fake_openai import ScriptedOpenAI, ScriptStep, call, hang, reply

_ENV = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}


def gated_script(go: threading.Event, *, c12_hangs: bool = False) -> dict[str, list[ScriptStep]]:
    """Recon waits for `go`, then C1 and C12 each report one finding (or C12's request hangs until cancelled)."""
    def recon_first(_: dict[str, Any]) -> Any:
        go.wait(60)
        return tool_step(call("lm0", "report_landmark", LANDMARKS["tool-execution"]),
                         call("lm1", "report_landmark", LANDMARKS["agent-loop"]))

    c12: list[ScriptStep] = [hang(60)] if c12_hangs else [
        tool_step(call("g1", "report_finding", C12_FINDING)), reply(text="Done.")]
    return {"recon": [recon_first, reply(text="Done.")],
            "C1": [tool_step(call("f1", "report_finding", finding())), reply(text="Done.")], "C12": c12}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return make_workspace(tmp_path)


def cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness_audit", *argv], capture_output=True, text=True, cwd=cwd,
                          env=_ENV, timeout=120, check=False)


def llm_args(server: ScriptedOpenAI, root: Path, out: Path) -> list[str]:
    return [str(root), "C1,C12", "--engine", "llm", "--model", MODEL, "--base-url", server.base_url,
            "--output-dir", str(out), "--format", "md,json"]


def job_id_of(stdout: str) -> str:
    (line,) = [x for x in stdout.splitlines() if x.startswith("job: ")]
    return line.removeprefix("job: ")


@pytest.fixture
def release() -> Iterator[threading.Event]:
    go = threading.Event()
    yield go
    go.set()  # never leave a server thread waiting


def test_a_job_started_from_a_shell_that_exits_runs_to_completion(
        tree: Path, tmp_path: Path, release: threading.Event) -> None:
    out = tmp_path / "out"
    with ScriptedOpenAI(gated_script(release)) as server:
        command = " ".join([sys.executable, "-m", "harness_audit", *llm_args(server, tree, out), "--background"])
        shell = subprocess.run(["bash", "-c", f"{command}; exit 0"], capture_output=True, text=True, cwd=tmp_path,
                               env=_ENV, timeout=120, check=False)
        assert shell.returncode == 0, shell.stderr
        job_id = job_id_of(shell.stdout)
        assert f"harness-audit job-output {job_id}" in shell.stdout
        job_dir = jobs.find(job_id, out)
        job = jobs.load(job_dir)
        # the shell is gone and the job, in a session of its own, still runs: recon is waiting for the go
        assert job.state == "running"
        assert os.getsid(job.pid) == job.pid != os.getsid(0)
        listed = cli("jobs", "--output-dir", str(out), cwd=tmp_path).stdout
        assert job_id in listed and "running" in listed and "C1,C12" in listed
        release.set()
        follow = cli("job-output", job_id, "--output-dir", str(out), "--follow", "--timeout", "90", cwd=tmp_path)
    assert follow.returncode == 0, follow.stdout + follow.stderr
    lines = follow.stdout.splitlines()
    assert lines[0].startswith("run directory: ")
    assert lines[1].startswith("recon done: ")
    for check in ("C1", "C12"):
        assert f"{check} running" in lines and any(x.startswith(f"{check} done: 1 findings, 0 refused") for x in lines)
    assert f"{job_id} complete" in lines
    reports = [x.removeprefix("report: ") for x in lines if x.startswith("report: ")]
    assert sorted(Path(p).suffix for p in reports) == [".json", ".md"]
    data = json.loads(Path(next(p for p in reports if p.endswith(".json"))).read_text(encoding="utf-8"))
    assert data["meta"]["state"] == "complete" and len(data["findings"]) == 2
    assert lines[1].startswith(f"recon done: {len(data['landmarks'])} landmarks")  # static recon's and the model's
    assert jobs.load(job_dir).state == "complete"


def test_a_cancelled_job_writes_a_partial_report_marked_cancelled(
        tree: Path, tmp_path: Path, release: threading.Event) -> None:
    out = tmp_path / "out"
    release.set()
    with ScriptedOpenAI(gated_script(release, c12_hangs=True)) as server:
        started = cli(*llm_args(server, tree, out), "--concurrency", "1", "--background", cwd=tmp_path)
        assert started.returncode == 0, started.stderr
        job_id = job_id_of(started.stdout)
        deadline = time.monotonic() + 60
        while not [r for r in server.requests if r.key == "C12"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [r for r in server.requests if r.key == "C12"], "C12 never asked the model"
        cancelled = cli("cancel", job_id, "--output-dir", str(out), cwd=tmp_path)
        assert cancelled.returncode == 0 and "cancel requested" in cancelled.stdout
        job = jobs.wait(jobs.find(job_id, out), 60)
    assert job.state == "cancelled"
    (report,) = [Path(p) for p in job.reports if p.endswith(".json")]
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["meta"]["state"] == "cancelled"
    assert [(o["id"], o["status"]) for o in data["outcomes"]] == [("C1", "ran"), ("C12", "cancelled")]
    assert [f["check"] for f in data["findings"]] == ["C1"]
    assert "C12 cancelled" in "\n".join(jobs.output(job.job_dir)[0])


def test_a_static_job_cancelled_at_once_reports_every_check_cancelled(tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    job = jobs.start([str(tree), "C1,C12", "--output-dir", str(out), "-q"], cwd=tmp_path, output_dir=out,
                     target=tree, checks=["C1", "C12"], engine="static")
    jobs.cancel(job.job_dir)  # long before the new interpreter reaches the audit
    done = jobs.wait(job.job_dir, 60)
    assert done.state == "cancelled", done
    (report,) = [Path(p) for p in done.reports if p.endswith(".json")]
    data = json.loads(report.read_text(encoding="utf-8"))
    assert data["meta"]["state"] == "cancelled"
    assert {o["status"] for o in data["outcomes"]} == {"cancelled"}


def test_a_killed_job_shows_as_dead_and_frees_the_output_directory(
        tree: Path, tmp_path: Path, release: threading.Event) -> None:
    out = tmp_path / "out"
    with ScriptedOpenAI(gated_script(release)) as server:
        started = cli(*llm_args(server, tree, out), "--background", cwd=tmp_path)
        job_id = job_id_of(started.stdout)
        job_dir = jobs.find(job_id, out)
        # one audit per output directory: a second job and a foreground audit are refused, naming the first
        second = cli(*llm_args(server, tree, out), "--background", cwd=tmp_path)
        assert second.returncode == 2 and f"job {job_id}" in second.stderr and "one audit per output" in second.stderr
        foreground = cli(str(tree), "C1", "--output-dir", str(out), cwd=tmp_path)
        assert foreground.returncode == 2 and f"job {job_id}" in foreground.stderr
        assert len(second.stderr.strip().splitlines()) == 1
        os.kill(jobs.load(job_dir).pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while jobs.load(job_dir).state != "dead" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert jobs.load(job_dir).state == "dead"
        listed = cli("jobs", "--output-dir", str(out), "--json", cwd=tmp_path)
        assert [(j["job_id"], j["state"]) for j in json.loads(listed.stdout)] == [(job_id, "dead")]
        output = cli("job-output", job_id, "--output-dir", str(out), cwd=tmp_path).stdout
        assert f"{job_id} dead" in output
        release.set()
        # the lock died with the process: the directory takes a new audit
        again = cli(str(tree), "C1", "--output-dir", str(out), "-q", cwd=tmp_path)
    assert again.returncode in (0, 1), again.stderr


def test_job_commands_refuse_bad_ids_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for argv, needle in ((["job-output", "job-zz"], "is not a job id"),
                         (["job-output", "job-0000aaaa"], "no job 'job-0000aaaa'"),
                         (["cancel", "job-0000aaaa"], "no job 'job-0000aaaa'"),
                         (["cancel", "nowhere"], "is not a run directory")):
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert needle in err and len(err.splitlines()) == 1, err
    assert main(["jobs"]) == 0 and "no background audits" in capsys.readouterr().out
