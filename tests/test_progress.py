"""The progress stream: what the static and model engines tell an observer while they run."""

from __future__ import annotations

from pathlib import Path

from harness_audit.api import audit
from harness_audit.findings import CheckId, LandmarkKind, Usage
from harness_audit.progress import Progress, ProgressEvent, ProgressKind

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "agent_loop"


def test_a_static_audit_reports_recon_each_check_and_the_reports(tmp_path: Path) -> None:
    events: list[ProgressEvent] = []
    run = audit(EXAMPLE, ["C1,C13"], overrides={"output_dir": str(tmp_path), "cache": False},
                progress=Progress([events.append]))
    started = [e.check for e in events if e.kind is ProgressKind.CHECK_STARTED]
    assert started == [CheckId.C1, CheckId.C13]  # the static rules start before recon's landmarks gate them
    events = [e for e in events if e.kind is not ProgressKind.CHECK_STARTED]
    kinds = [e.kind for e in events]
    assert kinds[0] is ProgressKind.RECON_DONE and events[0].landmarks == len(run.report.landmarks)
    assert kinds[-1] is ProgressKind.REPORTS_WRITTEN
    assert events[-1].paths == tuple(str(p) for p in run.paths) and events[-1].detail == "complete"
    per_check = {e.check: e for e in events if e.check is not None}
    assert set(per_check) == {CheckId.C1, CheckId.C13}
    for outcome in run.report.outcomes:
        event = per_check[outcome.check]
        if outcome.status.value == "ran":
            assert event.kind is ProgressKind.CHECK_DONE
            assert event.findings == run.report.findings_for(outcome.check)
        else:
            assert event.kind is ProgressKind.NOT_COVERED and event.missing == outcome.missing_landmarks


def test_a_failing_observer_never_stops_the_audit(tmp_path: Path) -> None:
    def broken(_: ProgressEvent) -> None:
        raise RuntimeError("display gone")

    seen: list[ProgressEvent] = []
    run = audit(EXAMPLE, ["C1"], overrides={"output_dir": str(tmp_path), "cache": False},
                progress=Progress([broken, seen.append]))
    assert run.paths and seen[-1].kind is ProgressKind.REPORTS_WRITTEN


def test_events_survive_a_round_trip_through_json() -> None:
    event = ProgressEvent(kind=ProgressKind.NOT_COVERED, check=CheckId.C13, missing=(LandmarkKind.TRUNCATION,),
                          usage=Usage(input_tokens=5, known=False), cost=0.25, detail="x", paths=("a", "b"))
    assert ProgressEvent.from_json(event.to_json()) == event
    assert ProgressEvent.from_json({"kind": "check-started", "check": "C1"}) == ProgressEvent(
        kind=ProgressKind.CHECK_STARTED, check=CheckId.C1)
