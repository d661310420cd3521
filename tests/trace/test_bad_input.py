"""Bad input: a malformed line is listed and never stops the run; a file that is not a trace is a usage error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_audit.cli import main
from harness_audit.errors import UsageError
from tests.trace._run import DATA, findings, gated

MADE = DATA / "made"


def test_a_truncated_line_is_listed_and_the_rest_is_checked(tmp_path: Path) -> None:
    lines = (MADE / "c01_unanswered_call.jsonl").read_text().splitlines()
    trace = tmp_path / "torn.jsonl"
    trace.write_text("\n".join([lines[0], lines[1][:57], lines[1]]) + "\n")
    report = gated([trace])
    assert [(u.path, u.reason.split(":")[0]) for u in report.unparsed_files] == [("torn.jsonl", "line 2")]
    assert "not valid JSON" in report.unparsed_files[0].reason
    assert findings(report) == [("C1", "unanswered-call", 3)]


def test_a_line_that_is_not_an_exchange_is_ignored_like_other_traffic(tmp_path: Path) -> None:
    good = (MADE / "clean_openai_chat.jsonl").read_text()
    trace = tmp_path / "mixed.jsonl"
    trace.write_text(json.dumps({"event": "login", "user": "x"}) + "\n" + good)
    report = gated([trace])
    assert findings(report) == [] and not report.unparsed_files
    assert any("1 other records ignored" in n for n in report.meta.notes)


@pytest.mark.parametrize(("name", "content", "says"), [
    ("empty.jsonl", b"", "is empty"),
    ("blank.jsonl", b"\n\n  \n", "is empty"),
    ("image.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)), "binary"),
    ("config.json", json.dumps({"name": "x", "version": 2}).encode(), "not a trace"),
    ("list.json", b"[1, 2, 3]\n", "not a trace"),
    ("notes.txt", b"hello, this is text\n", "not a trace"),
    ("broken.yaml", b"interactions:\n- request: [unclosed\n", "could not be read"),
    ("all_bad.jsonl", b'{"request": {"messages": [}\n{"request": \n', "not a trace"),
])
def test_a_file_that_is_not_a_trace_is_refused(tmp_path: Path, name: str, content: bytes, says: str,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(UsageError, match=says):
        gated([path])
    assert main(["trace", str(path), "-q"]) == 2
    err = capsys.readouterr().err
    assert says in err and name in err


def test_missing_file_and_directory_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", str(tmp_path / "nope.jsonl")]) == 2
    assert main(["trace", str(tmp_path)]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_unknown_format_is_a_usage_error(tmp_path: Path) -> None:
    assert main(["trace", str(MADE / "clean_gemini.jsonl"), "--input-format", "pcap"]) == 2
