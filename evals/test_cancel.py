"""Eval: cancelling a run stops in-flight requests, leaves every tool call paired and says "cancelled"."""

from __future__ import annotations

from pathlib import Path

from evals.harness import Hang, Scenario, call, finding, reply, run_scenario
from evals.targets import AGENT_LOOP, C1_EVIDENCE, LOOP, line_of, recon_script, tree


def test_cancel_leaves_every_call_paired_and_the_report_says_cancelled(tmp_path: Path) -> None:
    """Risk: a cancelled run leaves a tool call without its result (a history no provider accepts and a
    resume cannot continue), hangs until the request times out, or is reported as a finished audit."""
    scenario = Scenario(
        name="cancel-mid-run",
        risk="cancellation leaves unpaired tool calls, does not stop requests, or reads as complete",
        files=tree(),
        checks=("C1", "C10", "C12"),
        overrides={"concurrency": 2},
        script={
            "recon": recon_script(),
            # C1 reports a finding and reads, then the user cancels while its next request is in flight
            "C1": [reply(finding("C1", LOOP, line_of(AGENT_LOOP, "except Exception:"), C1_EVIDENCE),
                         call("read_file", path=LOOP)),
                   Hang(cancel=True)],
            # C10 has tool calls answered and is waiting on the model when the cancel lands
            "C10": [reply(call("grep", pattern="cancel"), call("glob", pattern="**/*.py")), Hang()],
            # C12 is still queued behind the two others (concurrency 2)
            "C12": [reply(call("read_file", path=LOOP)), Hang()],
        },
    )
    run = run_scenario(scenario, tmp_path, cancellable=True)

    assert run.report.meta.state == "cancelled"
    assert {o.check.value: o.status_text for o in run.report.outcomes} == {
        "C1": "cancelled", "C10": "cancelled", "C12": "cancelled"}
    # every call any unit made has its result in the ledger history, and the last thing sent was the results
    for unit in ("recon", "C1", "C10", "C12"):
        assert run.unpaired_calls(unit) == [], unit
    for unit in ("C1", "C10"):
        kinds = [e["event"] for e in run.ledger.events if e.get("unit") == unit]
        assert kinds[-2:] == ["request", "unit-end"], (unit, kinds)
        assert run.events("unit-end", unit)[0]["status"] == "cancelled"
    assert run.scripted is not None and run.scripted.calls("C12") == 0  # never started
    # what finished before the cancel is kept and the report header says cancelled
    assert [f.check.value for f in run.report.findings] == ["C1"]
    (end,) = run.events("run-end")
    assert end["state"] == "cancelled"
    assert "**CANCELLED** — partial results" in run.rendered(".md")
    assert run.json_report()["meta"]["state"] == "cancelled"
    assert run.report.meta.duration_s < 10  # the hung requests were cut, not waited out
