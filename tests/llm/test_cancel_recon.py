"""A cancel while recon is still looking: the checks say cancelled, never "not covered" for missing landmarks."""

from __future__ import annotations

import threading
from pathlib import Path

from harness_audit.api import audit
from harness_audit.llm.engine import Canceller
from harness_audit.llm.run import ModelOptions
from harness_audit.progress import Progress, ProgressEvent, ProgressKind
from tests.llm.conftest import MODEL, no_wait, requests_for
from tests.llm.fake_openai import ScriptedOpenAI, hang
from tests.llm.test_engine import when


def test_a_cancel_during_recon_reports_cancelled_checks_not_missing_landmarks(harness: Path, out: Path) -> None:
    canceller = Canceller(event=threading.Event())
    events: list[ProgressEvent] = []
    settings = {"engine": "llm", "model": MODEL, "output_dir": str(out), "request_timeout_s": 5.0,
                "check_timeout_s": 30.0, "transport_retries": 1, "formats": ["json"]}
    with ScriptedOpenAI({"recon": [hang(30)]}) as server:
        when(lambda: len(requests_for(server, "recon")) == 1, canceller.event.set)
        run = audit(harness, ["C1", "C12"], overrides={**settings, "base_url": server.base_url},
                    progress=Progress([events.append]), model_options=ModelOptions(canceller=canceller, sleep=no_wait))
    assert run.report.meta.state == "cancelled"
    assert [o.status_text for o in run.report.outcomes] == ["cancelled", "cancelled"]
    assert {e.check.value for e in events if e.kind is ProgressKind.CANCELLED and e.check} == {"C1", "C12"}
    assert not [e for e in events if e.kind is ProgressKind.NOT_COVERED]
