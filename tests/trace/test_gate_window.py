"""The evidence gate on traces: the same rules, but only the cited line's ±3-line window is ever read."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_audit.findings import Candidate, CheckId, Finding, Refusal, RefusalReason
from harness_audit.gate import GateContext, validate
from harness_audit.workspace import Workspace


def _cand(line: int, evidence: str, file: str = "big.jsonl") -> Candidate:
    return Candidate(check=CheckId.C1, verdict="confirmed", file=file, line=line, evidence=evidence,
                     claim="c", consequence="q", source="trace:C1/unanswered-call", language="trace")


@pytest.fixture
def big(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    rows = [f'{{"request": {{"n": {i}, "messages": ["{"x" * 40}"]}}}}' for i in range(1, 60_001)]
    (tmp_path / "big.jsonl").write_text("\n".join(rows) + "\n")
    (tmp_path / "crlf.jsonl").write_bytes(b'{"a": 1}\r\n{"b": 2}\r\n{"c": "third line"}\r\n')

    def never(self: Workspace, rel: str) -> list[str] | None:
        raise AssertionError("the gate must not load a whole trace")

    monkeypatch.setattr(Workspace, "lines", never)
    monkeypatch.setattr(Workspace, "text", never)
    return Workspace.open(tmp_path, excludes=())


def _gate(ws: Workspace, c: Candidate) -> Finding | Refusal:
    return validate(c, GateContext(workspace=ws, checks_in_run=[CheckId.C1]))


def test_accepts_a_fragment_of_the_cited_line_without_loading_the_file(big: Workspace) -> None:
    got = _gate(big, _cand(45_000, '{"n": 45000, "messages"'))
    assert isinstance(got, Finding) and got.line == 45_000 and got.file_sha256


def test_window_of_three_lines_applies(big: Workspace) -> None:
    assert isinstance(_gate(big, _cand(45_003, '{"n": 45000, "messages"')), Finding)
    got = _gate(big, _cand(45_004, '{"n": 45000, "messages"'))
    assert isinstance(got, Refusal) and got.reason is RefusalReason.EVIDENCE_NOT_FOUND


@pytest.mark.parametrize(("line", "reason"), [(60_001, RefusalReason.LINE_OUT_OF_RANGE),
                                              (0, RefusalReason.LINE_OUT_OF_RANGE)])
def test_line_outside_the_file(big: Workspace, line: int, reason: RefusalReason) -> None:
    got = _gate(big, _cand(line, '{"n": 1, "messages"'))
    assert isinstance(got, Refusal) and got.reason is reason


def test_thin_evidence_is_refused(big: Workspace) -> None:
    got = _gate(big, _cand(7, "{"))
    assert isinstance(got, Refusal) and got.reason is RefusalReason.EVIDENCE_TOO_THIN


def test_crlf_lines_number_like_the_text_path(big: Workspace) -> None:
    got = _gate(big, _cand(3, '{"c": "third line"}', "crlf.jsonl"))
    assert isinstance(got, Finding) and got.line == 3


def test_binary_trace_is_not_text(tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"\0\1\2" * 100)
    ws = Workspace.open(tmp_path, excludes=())
    got = _gate(ws, _cand(1, "anything here", "b.bin"))
    assert isinstance(got, Refusal) and got.reason is RefusalReason.FILE_NOT_FOUND


def test_line_window_counts_lines_like_split_lines(tmp_path: Path) -> None:
    (tmp_path / "m.txt").write_bytes(b"a\r\nb\rc\n\nlast-no-newline")
    ws = Workspace.open(tmp_path)
    win = ws.line_window("m.txt", 1, 10)
    assert win is not None and win.total == 5
    assert win.lines == ("a", "b", "c", "", "last-no-newline")
    assert ws.line_window("m.txt", 4, 5) is not None and ws.line_window("m.txt", 4, 5).lines == ("", "last-no-newline")  # type: ignore[union-attr]


def test_a_pretty_json_record_is_quoted_with_the_lines_that_make_it_evidence(tmp_path: Path) -> None:
    from harness_audit.trace.evidence import Quoter
    from harness_audit.trace.model import Source

    text = '[\n  {\n    "startedDateTime": "2026-01-05T10:00:00Z",\n    "request": {}\n  }\n]\n'
    (tmp_path / "t.har").write_text(text)
    offset = text.index("  {")
    excerpt = Quoter(tmp_path / "t.har")(Source(file="t.har", line=2, offset=offset, index=0), None)
    assert excerpt.splitlines()[0].strip() == "{" and "startedDateTime" in excerpt
    ws = Workspace.open(tmp_path, excludes=())
    assert isinstance(_gate(ws, _cand(2, excerpt, "t.har")), Finding)
