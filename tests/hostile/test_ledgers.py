"""Hostile family "ledgers": a recorded run's ledger, damaged or forged, replayed with `replay` and `replay --rerun`.

Each input starts from a real recorded run (`evals/recorded/two_checks.ledger.jsonl`, placed where an audit of
its tree leaves it) and changes it the way a crash, a hand edit or an attacker would: fields dropped, given
values of any type or huge numbers, extra keys, whole events replaced by any JSON, lines that do not parse,
events reordered or repeated, a torn last line, a `root` naming another tree, findings citing files outside the
tree or credential files, secrets in any field. For each input: the run ends; the exit code is 0 or 1 with a
parseable report, 3 with a report that says it did not complete, or 2 with one line naming the ledger line; no
"internal error"; no planted secret and nothing of the file outside the tree reaches a report.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from evals.targets import tree
from tests.hostile.runner import CliRun, assert_sane, hostile_settings, record, run_cli
from tests.hostile.strategies import SECRETS, json_value, secret

FAMILY = "ledgers"
EXAMPLES = 160

_RECORDED = Path(__file__).resolve().parents[2] / "evals" / "recorded" / "two_checks.ledger.jsonl"
_OUTSIDE_MARKER = "outside-marker-5390"
_KEYS = ["event", "seq", "t", "unit", "candidate", "usage", "messages", "message", "root", "checks", "config",
         "status", "failure", "finish_reason", "turn", "attempt", "version", "state", "meta", "lead", "reason", "id",
         "args", "result", "renamed", "landmarks", "started_at", "engine", "run_id", "price"]
_NUMBERS = [0, -1, 1e400, -1e400, 2**64, 1.5, True, None, "1", [], {}]


def _events() -> list[dict[str, Any]]:
    return [json.loads(line) for line in _RECORDED.read_text(encoding="utf-8").splitlines()]


@st.composite
def mutation(draw: st.DrawFn) -> tuple[str, Any]:
    """One change to a ledger: its kind and what it needs."""
    kind = draw(st.sampled_from(["drop-key", "set-key", "set-number", "extra-key", "replace-event", "drop-event",
                                 "repeat-event", "swap-events", "bad-line", "torn", "root", "outside-finding",
                                 "secret-finding", "set-nested", "deep-line"]))
    return kind, {"index": draw(st.integers(0, 200)), "key": draw(st.sampled_from(_KEYS)),
                  "value": draw(json_value), "number": draw(st.sampled_from(_NUMBERS)), "secret": draw(secret),
                  "root": draw(st.sampled_from(["/etc", "/", "..", "", "<outside>", None, 5])),
                  "line": draw(st.sampled_from(["not json", "\x00\x01", "[1, 2]", "{\"event\": \"run-start\"",
                                                "\ufeff{}", "null"]))}


def _apply(events: list[dict[str, Any]], lines: list[str], kind: str, p: dict[str, Any], outside: Path) -> None:
    """Change the ledger in place: `events` before it is written, `lines` (the written text) after."""
    i = p["index"] % len(events)
    e = events[i]
    if kind == "drop-key" and p["key"] in e:
        del e[p["key"]]
    elif kind in ("set-key", "extra-key"):
        e[p["key"] if kind == "set-key" else f"x-{p['key']}"] = p["value"]
    elif kind == "set-number":
        e[p["key"]] = p["number"]
    elif kind == "set-nested":
        for nested in ("candidate", "usage", "config", "message", "meta"):
            if isinstance(e.get(nested), dict):
                e[nested][p["key"]] = p["value"]
                break
    elif kind == "replace-event":
        events[i] = p["value"]
    elif kind == "drop-event":
        del events[i]
    elif kind == "repeat-event":
        events.insert(i, json.loads(json.dumps(e)))
    elif kind == "swap-events" and i + 1 < len(events):
        events[i], events[i + 1] = events[i + 1], events[i]
    elif kind == "root":
        start = next(x for x in events if isinstance(x, dict) and x.get("event") == "run-start")
        start["root"] = str(outside) if p["root"] == "<outside>" else p["root"]
    elif kind in ("outside-finding", "secret-finding"):
        found = next((x for x in events if isinstance(x, dict) and x.get("event") == "finding"), None)
        if found is not None:
            forged = json.loads(json.dumps(found))
            if kind == "outside-finding":
                forged["candidate"].update(file=str(outside / "secret.py"), line=1,
                                           evidence=f"TOKEN = '{_OUTSIDE_MARKER}'")
            else:
                forged["candidate"].update(file=".env", line=1, evidence=f"OPENAI_API_KEY={p['secret']}",
                                           claim=f"the key {p['secret']} is checked in")
            events.insert(events.index(found), forged)


def _write(run_dir: Path, events: list[Any], kind: str, p: dict[str, Any]) -> None:
    lines = [json.dumps(e, ensure_ascii=False) for e in events]
    if kind == "bad-line":
        lines.insert(p["index"] % (len(lines) + 1), p["line"])
    elif kind == "deep-line":
        lines.insert(p["index"] % (len(lines) + 1), "[" * 50_000 + "]" * 50_000)
    text = "".join(line + "\n" for line in lines)
    if kind == "torn":
        text = text[: max(1, len(text) - 1 - p["index"] % 40)]
    (run_dir / "ledger.jsonl").write_text(text, encoding="utf-8", errors="surrogatepass")


def _check(run: CliRun, outside: Path) -> None:
    event(f"{FAMILY}: exit {run.code}")
    if run.code == 3:  # a replay of a run that did not complete: a report that says so, nothing else
        assert not run.hung and "internal error" not in run.err and "Traceback" not in run.err, run.err
        data = json.loads(next(p for p in run.reports if p.suffix == ".json").read_text(encoding="utf-8"))
        assert data["meta"]["state"] in ("cancelled", "incomplete"), data["meta"]["state"]
        texts = [p.read_text(encoding="utf-8") for p in run.reports]
    else:
        reports = assert_sane(run, secrets=SECRETS, allowed=(0, 1, 2), family=FAMILY)
        texts = list(reports.texts.values())
        if run.code == 2:
            assert "line " in run.err or "ledger" in run.err or "run" in run.err, run.err
    for text in texts:
        assert _OUTSIDE_MARKER not in text, "a file outside the tree reached a report"
        assert not any(s in text for s in SECRETS), "a planted secret reached a report"


@hostile_settings(EXAMPLES)
@given(changes=st.lists(mutation(), min_size=1, max_size=3), rerun=st.booleans())
def test_a_damaged_or_forged_ledger_replays_to_a_report_or_one_error_line(
        changes: list[tuple[str, Any]], rerun: bool) -> None:
    record(FAMILY)
    base = Path(tempfile.mkdtemp(prefix="ledger-"))
    try:
        root, outside = base / "ws", base / "outside"
        for rel, text in tree().items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(str(text), encoding="utf-8")
        outside.mkdir()
        (outside / "secret.py").write_text(f"TOKEN = '{_OUTSIDE_MARKER}'\n", encoding="utf-8")
        (root / ".env").write_text(f"OPENAI_API_KEY={SECRETS[0]}\n", encoding="utf-8")
        raw = _RECORDED.read_text(encoding="utf-8").replace("<root>", str(root)).replace("<tmp>/out", ".harness-audit")
        events: list[Any] = [json.loads(line) for line in raw.splitlines()]
        for kind, params in changes:
            _apply(events, [], kind, params, outside)
        run_dir = root / ".harness-audit" / "runs" / "r1"
        run_dir.mkdir(parents=True)
        last_kind, last_params = changes[-1]
        _write(run_dir, events, last_kind, last_params)
        args = ["replay", str(run_dir), "-q", *(["--rerun"] if rerun else [])]
        _check(run_cli(args, timeout_s=60), outside)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_the_recorded_ledger_replays_cleanly_as_placed() -> None:
    """The family's starting point is a good ledger: unchanged, it replays to its report (exit 1)."""
    base = Path(tempfile.mkdtemp(prefix="ledger-"))
    try:
        root = base / "ws"
        for rel, text in tree().items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(str(text), encoding="utf-8")
        run_dir = root / ".harness-audit" / "runs" / "r1"
        run_dir.mkdir(parents=True)
        raw = _RECORDED.read_text(encoding="utf-8").replace("<root>", str(root)).replace("<tmp>/out", ".harness-audit")
        (run_dir / "ledger.jsonl").write_text(raw, encoding="utf-8")
        for args in (["replay", str(run_dir), "-q"], ["replay", str(run_dir), "--rerun", "-q"]):
            run = run_cli(args)
            assert run.code == 1, run.err
            assert_sane(run, secrets=SECRETS, allowed=(1,), family=FAMILY)
        assert _events()[0]["event"] == "run-start"
    finally:
        shutil.rmtree(base, ignore_errors=True)
