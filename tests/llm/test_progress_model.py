"""The model engine's progress events: recon, then each check's start and end with its findings and tokens."""

from __future__ import annotations

from pathlib import Path

from harness_audit.api import audit
from harness_audit.findings import CheckId
from harness_audit.llm.run import ModelOptions
from harness_audit.progress import Progress, ProgressEvent, ProgressKind
from tests.llm.conftest import C12_FINDING, MODEL, finding, no_wait, recon_steps, tool_step
from tests.llm.fake_openai import ScriptedOpenAI, call, reply, usage


def test_model_run_reports_recon_each_check_and_its_tokens(harness: Path, out: Path) -> None:
    script = {
        "recon": recon_steps("tool-execution", "agent-loop"),
        "C1": [tool_step(call("f1", "report_finding", finding()), usage=usage(100, 10)),
               tool_step(call("f2", "report_finding", finding(line=3)), usage=usage(120, 10)),
               reply(text="Done.", usage=usage(130, 2))],
        "C12": [tool_step(call("g1", "report_finding", C12_FINDING), usage=usage(90, 5)),
                reply(text="Done.", usage=usage(95, 1))],
    }
    events: list[ProgressEvent] = []
    with ScriptedOpenAI(script) as server:
        run = audit(harness, ["C1,C12,C13"], progress=Progress([events.append]),
                    model_options=ModelOptions(sleep=no_wait),
                    overrides={"engine": "llm", "model": MODEL, "base_url": server.base_url, "output_dir": str(out),
                               "request_timeout_s": 5.0, "check_timeout_s": 30.0, "concurrency": 1,
                               "prices": {MODEL: {"input": 1.0, "output": 2.0}}})
    kinds = [(e.kind, e.check) for e in events if e.kind is not ProgressKind.REQUEST_DONE]
    # C13 is settled (no truncation landmark) before any unit starts; one unit at a time runs after that
    assert kinds == [
        (ProgressKind.RUN_DIR, None), (ProgressKind.RECON_DONE, None), (ProgressKind.NOT_COVERED, CheckId.C13),
        (ProgressKind.CHECK_STARTED, CheckId.C1), (ProgressKind.CHECK_DONE, CheckId.C1),
        (ProgressKind.CHECK_STARTED, CheckId.C12), (ProgressKind.CHECK_DONE, CheckId.C12),
        (ProgressKind.REPORTS_WRITTEN, None),
    ]
    by = {(e.kind, e.check): e for e in events}
    assert by[(ProgressKind.RUN_DIR, None)].paths == (str(Path(run.report.meta.ledger or "").parent),)
    c1 = by[(ProgressKind.CHECK_DONE, CheckId.C1)]
    assert (c1.findings, c1.refusals) == (1, 1)
    assert c1.usage is not None and c1.usage.input_tokens == 350 and c1.usage.requests == 3
    assert c1.cost is not None and abs(c1.cost - (350 * 1.0 + 22 * 2.0) / 1e6) < 1e-12
    assert by[(ProgressKind.NOT_COVERED, CheckId.C13)].missing
    # every answered request tells what its unit has spent so far, priced: the terminal shows it as it grows
    so_far = [(e.usage.input_tokens, e.cost) for e in events
              if e.kind is ProgressKind.REQUEST_DONE and e.check is CheckId.C1 and e.usage is not None]
    assert so_far == [(100, (100 + 2 * 10) / 1e6), (220, (220 + 2 * 20) / 1e6), (350, (350 + 2 * 22) / 1e6)]
    assert events[-1].kind is ProgressKind.REPORTS_WRITTEN and events[-1].paths == tuple(map(str, run.paths))
