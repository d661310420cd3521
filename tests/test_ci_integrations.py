"""The GitHub Action and the pre-commit hook, run as CI and pre-commit would run them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness_audit.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "agent_loop"


def test_action_is_composite_installs_from_its_checkout_and_uploads_sarif() -> None:
    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    uses = [s.get("uses", "") for s in steps]
    assert any(u.startswith("github/codeql-action/upload-sarif@") for u in uses)
    runs = "\n".join(s.get("run", "") for s in steps)
    assert "$ACTION_PATH" in runs and "pip install harness-audit" not in runs  # no registry holds the package
    for step in steps:  # inputs reach scripts through the environment, never pasted into shell
        assert "inputs." not in step.get("run", ""), step
    assert (ROOT / "scripts" / "action_audit.sh").is_file()


def test_action_audit_step_reports_and_outputs(tmp_path: Path) -> None:
    out, summary = tmp_path / "out.txt", tmp_path / "summary.md"
    env = {**os.environ, "HA_PATH": str(EXAMPLE), "HA_CHECKS": "C1 C12", "HA_FAIL_ON": "confirmed", "HA_BASELINE": "",
           "HA_ARGS": "--no-cache", "RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(out),
           "GITHUB_STEP_SUMMARY": str(summary), "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["bash", str(ROOT / "scripts" / "action_audit.sh")], env=env, check=True, timeout=120)
    outputs = dict(line.split("=", 1) for line in out.read_text().splitlines())
    assert outputs["exit-code"] == "1"  # the example has confirmed C1 and C12 findings
    assert outputs["sarif"].endswith(".sarif") and Path(outputs["sarif"]).is_file()
    assert "## Confirmed (2)" in summary.read_text()


def test_pre_commit_hook_takes_the_changed_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["entry"] == "harness-audit" and hook["language"] == "python"
    repo = tmp_path / "repo"
    shutil.copytree(EXAMPLE, repo, ignore=shutil.ignore_patterns(".harness-audit"))
    monkeypatch.chdir(repo)
    # pre-commit runs `entry args… files…` from the repository root
    assert main([*hook["args"], "agent/loop.py"]) == 1  # confirmed p1 findings in loop.py
    assert main([*hook["args"], "agent/store.py"]) == 0  # store.py has only a C3 finding, not in p1
    assert main([*hook["args"], "agent/tools.py", "agent/store.py"]) == 0  # tools.py: a suspected C9 only
    printed = capsys.readouterr().out
    assert "agent/loop.py" in printed
