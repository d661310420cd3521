"""Eval: the shared prefix (system prompt + tool definitions) is byte-identical across every unit of a run."""

from __future__ import annotations

from pathlib import Path

from evals.harness import DONE, Scenario, call, finding, reply, run_scenario
from evals.targets import AGENT_LOOP, C1_EVIDENCE, C12_EVIDENCE, LOOP, line_of, recon_script, tree
from harness_audit.catalogue import CHECKS
from harness_audit.findings import CheckId
from harness_audit.llm.prompts import system_prompt
from harness_audit.llm.run import prefix_digest

CHECKS_RUN = ("C1", "C10", "C12")


def test_shared_prefix_is_byte_identical_across_units(tmp_path: Path) -> None:
    """Risk: anything unit-specific (criteria, landmarks, a timestamp, tool order) before the task message
    breaks the provider's prefix cache: every check pays full price for the same thousands of tokens."""
    scenario = Scenario(
        name="shared-prefix",
        risk="the system prompt or tool definitions differ between subagents, so prefix caching never hits",
        files=tree(),
        checks=CHECKS_RUN,
        overrides={"concurrency": 3},
        script={
            "recon": recon_script(),
            "C1": [reply(call("read_file", path=LOOP)),
                   reply(finding("C1", LOOP, line_of(AGENT_LOOP, "except Exception:"), C1_EVIDENCE)), DONE],
            "C10": [reply(call("grep", pattern="cancel")), DONE],
            "C12": [reply(finding("C12", LOOP, line_of(AGENT_LOOP, "while True:"), C12_EVIDENCE)), DONE],
        },
    )
    run = run_scenario(scenario, tmp_path)
    assert run.scripted is not None
    received = run.scripted.received
    assert {r.unit for r in received} == {"recon", *CHECKS_RUN}

    # every request of every unit, not only the first: the prefix never moves as histories grow
    systems = {r.system.encode() for r in received}
    tools = {r.tool_definitions_json().encode() for r in received}
    assert systems == {system_prompt().encode()}
    assert len(tools) == 1
    assert [t.name for t in received[0].info.function_tools] == [
        "read_file", "grep", "glob", "find_symbol", "find_references", "list_landmarks", "report_landmark",
        "report_finding", "dismiss_lead"]
    # the system prompt is the first message, alone with the task; nothing unit-specific precedes the task
    for r in received:
        first = r.messages[0]
        assert [type(p).__name__ for p in first.parts] == ["SystemPromptPart", "UserPromptPart"]
    # each check's task names its check, first line first, and only its own check
    for check in CHECKS_RUN:
        (task,) = {r.task for r in run.scripted.requests(check)}
        assert task.startswith(f"Audit check {check} · {CHECKS[CheckId(check)].title}\n")
        assert not any(f"Audit check {other} " in task for other in CHECKS_RUN if other != check)
    (recon_task,) = {r.task for r in run.scripted.requests("recon")}
    assert recon_task.startswith("Recon · locate landmarks\n")
    # the ledger records the same prefix digest the engine computes
    (start,) = run.events("run-start")
    assert start["prefix"] == prefix_digest()
