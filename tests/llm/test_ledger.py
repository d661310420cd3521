"""The run ledger: append-only lines, a torn last line detected, no secret ever written."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness_audit.api import audit
from harness_audit.cli import main
from harness_audit.llm.ledger import Ledger, read_ledger
from tests.llm.fake_openai import ScriptedOpenAI, call, reply, usage

SECRET = "sk-test-DO-NOT-LEAK-4242"


def test_lines_are_whole_objects_and_seq_continues_after_reopen(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    with Ledger(path) as ledger:
        ledger.write("unit-start", unit="C1", task="t")
        ledger.write("nudge", unit="C1", text="line\nbreak")
    with Ledger(path) as ledger:
        ledger.write("nudge", unit="C1", text="again")
    read = read_ledger(path)
    assert [e["event"] for e in read.events] == ["unit-start", "nudge", "nudge"]
    assert [e["seq"] for e in read.events] == [1, 2, 3]
    assert read.events[1]["text"] == "line\nbreak"
    assert not read.torn


def test_a_torn_last_line_is_detected_dropped_and_closed_on_reopen(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    with Ledger(path) as ledger:
        ledger.write("nudge", unit="C1", text="a")
    with path.open("ab") as fh:
        fh.write(b'{"seq":2,"event":"respo')  # a crash in the middle of a write
    read = read_ledger(path)
    assert read.torn and [e["text"] for e in read.events] == ["a"]
    with Ledger(path) as ledger:
        ledger.write("nudge", unit="C1", text="b")
    again = read_ledger(path)
    assert not again.torn
    assert [e["text"] for e in again.events] == ["a", "b"]
    assert again.events[-1]["seq"] == 2 and again.skipped == [2]


def test_a_missing_ledger_is_a_usage_error(tmp_path: Path) -> None:
    assert main(["replay", str(tmp_path)]) == 2


def _tree(root: Path) -> Path:
    root.mkdir()
    (root / "agent.py").write_text(
        "import json\n\n\ndef run_tool(call, tools):\n    args = json.loads(call.arguments)\n"
        "    return tools[call.name](**args)\n", encoding="utf-8")
    return root


def test_no_key_and_no_url_credentials_reach_ledger_or_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    root = _tree(tmp_path / "target")
    script = {
        "recon": [reply(tool_calls=[call("l1", "report_landmark", {"kind": "tool-execution", "file": "agent.py",
                                                                   "line": 6, "confidence": "high"})],
                        usage=usage(50, 5)),
                  reply(text="done", usage=usage(60, 2))],
        "C4": [reply(text="nothing to add", usage=usage(70, 3))],
    }
    with ScriptedOpenAI(script) as server:
        clean = server.base_url
        url = clean.replace("http://", f"http://user:{SECRET}@")
        run = audit(root, ["C4"], overrides={"engine": "llm", "model": "openai:m", "base_url": url,
                                             "output_dir": str(tmp_path / "out")})
        assert not server.exhausted
    assert [o.status_text for o in run.report.outcomes] == ["ran"]
    ledger = Path(run.report.meta.ledger or "")
    written = [ledger, *run.paths]
    for path in written:
        assert SECRET not in path.read_text(encoding="utf-8"), path
    start = read_ledger(ledger).of("run-start")[0]
    assert start["base_url"] == clean
    assert json.loads(run.paths[1].read_text())["meta"]["base_url"] == clean


# ---------------------------------------------------------------- a ledger is input (issue 14, items 2 and 14)

RECORDED = Path(__file__).resolve().parents[2] / "evals" / "recorded" / "two_checks.ledger.jsonl"
"""A real recorded run (recon, C1, C12) of `evals.targets.tree()`, with `<root>` and `<tmp>/out` placeholders."""


def _placed(tmp_path: Path, edit: Callable[[list[dict[str, Any]]], None] | None = None) -> tuple[Path, Path]:
    """The recorded run placed as an audit of `tmp_path/ws` leaves it (reports in `ws/.harness-audit`), its
    events changed by `edit`; returns (tree, run directory)."""
    from evals.targets import tree

    root = tmp_path / "ws"
    for rel, text in tree().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(str(text), encoding="utf-8")
    raw = RECORDED.read_text(encoding="utf-8").replace("<root>", str(root)).replace("<tmp>/out", ".harness-audit")
    events = [json.loads(line) for line in raw.splitlines()]
    if edit is not None:
        edit(events)
    run_dir = root / ".harness-audit" / "runs" / "r1"
    run_dir.mkdir(parents=True)
    (run_dir / "ledger.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return root, run_dir


def _first(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(e for e in events if e["event"] == kind)


def test_replay_regates_against_the_tree_beside_the_ledger_not_the_root_it_names(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 14, item 2: a ledger naming `root="/etc"` produced a report quoting `/etc/passwd`."""
    outside = tmp_path / "etc"
    outside.mkdir()
    (outside / "passwd").write_text("root:x:0:0:passwd-marker-7731:/root:/bin/bash\n", encoding="utf-8")

    def forge(events: list[dict[str, Any]]) -> None:
        _first(events, "run-start")["root"] = str(outside)
        stolen = dict(_first(events, "finding"))
        stolen["candidate"] = {**stolen["candidate"], "file": "passwd", "line": 1,
                               "evidence": "root:x:0:0:passwd-marker-7731:/root:/bin/bash"}
        events.insert(events.index(_first(events, "finding")), stolen)

    root, run_dir = _placed(tmp_path, forge)
    for argv in (["replay", str(run_dir), "-q"], ["replay", str(run_dir), "--rerun", "-q"]):
        assert main(argv) == 1, capsys.readouterr().err
        paths = [Path(p) for p in capsys.readouterr().out.split()]
        assert paths and all(p.is_relative_to(run_dir) for p in paths)
        for path in paths:
            text = path.read_text(encoding="utf-8")
            assert "passwd-marker-7731" not in text, path
            assert str(root) in text and str(outside) not in text, path


def test_replay_of_a_run_whose_reports_went_elsewhere_needs_the_tree_named(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def elsewhere(events: list[dict[str, Any]]) -> None:
        _first(events, "run-start")["config"]["output_dir"] = str(tmp_path / "reports")

    root, run_dir = _placed(tmp_path, elsewhere)
    assert main(["replay", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--root" in err
    assert main(["replay", str(run_dir), "--root", str(root), "-q"]) == 1


def _drop(kind: str, key: str) -> Callable[[list[dict[str, Any]]], None]:
    return lambda events: _first(events, kind).pop(key)


def _set(kind: str, key: str, value: Any) -> Callable[[list[dict[str, Any]]], None]:
    return lambda events: _first(events, kind).__setitem__(key, value)


def _usage_1e400(events: list[dict[str, Any]]) -> None:
    _first(events, "response")["usage"]["input_tokens"] = 1e400  # json writes it as Infinity


@pytest.mark.parametrize(("edit", "needle"), [
    (lambda events: events.insert(3, {"seq": 99, "t": 1.0, "event": "finding"}), "candidate"),
    (_drop("run-start", "checks"), "checks"),
    (_drop("run-start", "run_id"), "run_id"),
    (_set("run-start", "checks", ["C99"]), "checks"),
    (_usage_1e400, "usage.input_tokens"),
    (_set("run-start", "root", None), "root"),
    (_set("finding", "surprise", 1), "surprise"),
    (lambda events: _first(events, "finding")["candidate"].__setitem__("zz", 1), "candidate.zz"),
    (_set("response", "usage", 5), "usage"),
    (_set("unit-end", "status", "great"), "status"),
    (_set("run-start", "started_at", "yesterday"), "started_at"),
    (_set("run-end", "t", 1e300), "t"),
    (lambda events: events.insert(5, {"seq": 5, "t": 1.0, "event": "made-up"}), "made-up"),
    (lambda events: _first(events, "run-start")["config"].__setitem__("concurrency", "lots"), "concurrency"),
], ids=["finding-without-candidate", "run-start-without-checks", "run-start-without-id", "unknown-check",
        "usage-1e400", "root-null", "extra-key", "extra-candidate-key", "usage-not-object", "bad-status",
        "bad-start-time", "time-out-of-range", "unknown-event", "bad-config"])
def test_a_bad_ledger_event_is_one_line_naming_its_line_and_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Callable[[list[dict[str, Any]]], None],
        needle: str) -> None:
    """Issue 14, item 14: such events gave `KeyError`, `TypeError`, `ValueError` or a multi-line pydantic error."""
    _, run_dir = _placed(tmp_path, edit)
    for argv in (["replay", str(run_dir)], ["replay", str(run_dir), "--rerun"], ["resume", str(run_dir)]):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err
        assert "line " in err and needle in err and "internal error" not in err, err


def test_a_line_that_is_not_json_is_named_by_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, run_dir = _placed(tmp_path)
    lines = (run_dir / "ledger.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    lines.insert(4, "[" * 100_000 + "\n")  # deeper than the JSON decoder's stack
    (run_dir / "ledger.jsonl").write_text("".join(lines), encoding="utf-8")
    assert main(["replay", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "line 5" in err, err
