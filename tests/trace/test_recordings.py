"""Hand-made recordings (`data/made/`, written by `data/make_recordings.py`): each violation is found at the
right record and nothing else is; the clean control of every dialect and format is silent."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_audit.findings import CheckId
from tests.trace._run import DATA, Found, copy, findings, gated

MADE = DATA / "made"

EXPECTED: dict[str, Found] = {
    "c01_unanswered_call.jsonl": [("C1", "unanswered-call", 2)],
    "c01_answered_twice.jsonl": [("C1", "answered-twice", 2)],
    "c01_orphan_result.jsonl": [("C1", "orphan-result", 2)],
    # dropping a call from the echoed reply is both an unanswered call and a changed history
    "c01_calls_dropped.jsonl": [("C1", "calls-dropped", 2), ("C2", "output-not-appended", 2)],
    "c01_gemini_unanswered.jsonl": [("C1", "unanswered-call", 2)],
    "c01_responses_server_unanswered.jsonl": [("C1", "unanswered-call", 2)],
    # a rewritten message is a history mutation and a prefix break
    "c02_history_mutated.jsonl": [("C14", "prefix-changed", 3), ("C2", "history-mutated", 3)],
    "c02_output_changed.jsonl": [("C2", "output-not-appended", 2)],
    "c04_duplicate_ids.jsonl": [("C4", "duplicate-call-id-in-response", 1)],
    "c04_arguments_not_json.jsonl": [("C4", "arguments-not-json", 1)],
    "c04_truncated_executed.jsonl": [("C4", "truncated-calls-executed", 2)],
    "c12_turns.jsonl": [("C12", "turns-over-ceiling", 4)],
    "c12_repeated_call.jsonl": [("C12", "repeated-identical-call", 3)],
    "c13_starts_with_result.jsonl": [("C13", "history-starts-with-result", 1)],
    "c13_cut_pair.jsonl": [("C13", "cut-pair", 3)],
    "c14_system_changed.jsonl": [("C14", "prefix-changed", 2)],
    "c15_usage_missing.jsonl": [("C15", "usage-missing", 1)],
    "c15_call_without_id.jsonl": [("C15", "call-without-id", 1)],
    "clean_openai_chat.jsonl": [],
    "clean_streamed_chat.jsonl": [],
    "clean_interleaved.jsonl": [],
    "clean_anthropic.jsonl": [],
    "clean_gemini.jsonl": [],
    "clean_openai_responses.jsonl": [],
    "clean_chat.har": [],
    "clean_otel.json": [],
    "clean_ledger.jsonl": [],
}

CEILINGS = {"c12_turns.jsonl": {"trace_max_turns": 3}}


def test_every_recording_has_an_expectation() -> None:
    assert {p.name for p in MADE.iterdir()} == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recording(name: str, tmp_path: Path) -> None:
    report = gated([copy(MADE / name, tmp_path)], **CEILINGS.get(name, {}))
    assert not report.refusals, [r.message for r in report.refusals]
    assert findings(report) == sorted(EXPECTED[name])


def test_the_ceiling_is_configurable(tmp_path: Path) -> None:
    trace = copy(MADE / "c12_turns.jsonl", tmp_path)
    assert findings(gated([trace])) == []
    (tmp_path / ".harness-audit.toml").write_text("trace_max_turns = 4\n")
    assert findings(gated([trace])) == [("C12", "turns-over-ceiling", 5)]


def test_claims_name_the_call_and_the_request(tmp_path: Path) -> None:
    report = gated([copy(MADE / "c01_unanswered_call.jsonl", tmp_path)])
    (f,) = report.findings
    assert "call_a1" in f.claim and "call_a1" in f.evidence and f.line == 2
    report = gated([copy(MADE / "c02_history_mutated.jsonl", tmp_path)])
    mutated = next(f for f in report.findings if f.check is CheckId.C2)
    assert "message 3" in mutated.claim and "`content`" in mutated.claim and "line 2" in mutated.claim
    prefix = next(f for f in report.findings if f.check is CheckId.C14)
    assert "canonical bytes" in prefix.claim and "%" in prefix.claim


def test_prefix_claim_cross_checks_reported_cache_reads(tmp_path: Path) -> None:
    (f,) = gated([copy(MADE / "c14_system_changed.jsonl", tmp_path)]).findings
    assert "system prompt" in f.claim and "0 of 1012 prompt tokens read from the cache" in f.claim


def test_selection_limits_the_graders(tmp_path: Path) -> None:
    trace = copy(MADE / "c01_calls_dropped.jsonl", tmp_path)
    assert findings(gated([trace], ["C2"])) == [("C2", "output-not-appended", 2)]


def test_checks_a_trace_cannot_show_are_not_covered_with_a_reason(tmp_path: Path) -> None:
    report = gated([copy(MADE / "clean_openai_chat.jsonl", tmp_path)], ["C1", "C5"])
    by = {o.check.value: o for o in report.outcomes}
    assert by["C1"].status.value == "ran"
    assert by["C5"].status.value == "not-covered" and "cannot show" in (by["C5"].error or "")


def test_single_requests_cannot_speak_to_append_only(tmp_path: Path) -> None:
    report = gated([copy(MADE / "c04_duplicate_ids.jsonl", tmp_path)])
    by = {o.check.value: o for o in report.outcomes}
    assert by["C2"].status.value == "not-covered" and "two consecutive requests" in (by["C2"].error or "")


def test_a_ledger_cannot_speak_to_append_only(tmp_path: Path) -> None:
    report = gated([copy(MADE / "clean_ledger.jsonl", tmp_path)])
    by = {o.check.value: o for o in report.outcomes}
    assert "only the messages new" in (by["C14"].error or "")
    assert by["C1"].status.value == "ran"
