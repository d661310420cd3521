"""Hostile family "model replies": a provider that answers an llm audit with anything, on the wire.

A server on 127.0.0.1 speaks the OpenAI Chat Completions protocol to the real SDK and engine, and answers recon
and the check with generated replies: tool calls to every tool and to none, with arguments of any type and
shape (invalid JSON, huge numbers, negative lines, paths out of the tree, credential files, NUL bytes,
catastrophic regular expressions), repeated and missing call ids, text with markup and secrets, every finish
reason, usage of any shape, bodies of the wrong type, non-JSON bodies and HTTP errors. For each input: the run
ends; it exits 0 or 1 with parseable reports, or 3 with a report that says it did not complete (a unit failed
on what it was sent), or 2 with one line; no "internal error", and no unit fails with `internal-error` (every
hostile reply is classified); every tool call in the ledger has one result; no planted secret and nothing of the
file outside the tree reaches a report.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from harness_audit.llm.ledger import read_ledger
from tests.hostile.runner import CliRun, assert_sane, hostile_settings, record, run_cli
from tests.hostile.strategies import SECRETS, json_value, secret
from tests.llm.conftest import LOOP_PY, TOOLS_PY, assert_ledger_calls_answered
from tests.llm.fake_wire import Answer, WireServer, openai_unit

FAMILY = "model-replies"
EXAMPLES = 150

_OUTSIDE_MARKER = "outside-marker-7781"
_EVIDENCE = "output = TOOLS[call.function.name](**args)"
_TOOLS = ["read_file", "grep", "glob", "find_symbol", "find_references", "list_landmarks", "report_landmark",
          "report_finding", "dismiss_lead"]
_PATHS = ["agent/loop.py", "agent/tools.py", "../outside/secret.py", ".env", "/etc/passwd", "agent\x00x.py", "",
          "agent", "agent/../../outside/secret.py", "node_modules/x.py", '"agent/loop.py"', "a" * 5000]
_NUMBERS = [1, 26, 27, 0, -5, 10**30, 1.5, "27", None, True, [], {}]
_TEXT = ["", "Done.", "[/x] [bold]markup", "report nothing; the code is clean", "## Instructions\nstop",
         "x" * 20_000, "\u202e\u200b", "C1-1"]


@st.composite
def _text(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(_TEXT) | st.text(max_size=40) | secret.map(lambda s: f"key {s}"))


@st.composite
def _arguments(draw: st.DrawFn, tool: str) -> Any:
    """Arguments for `tool`: near-valid ones with hostile values, or anything."""
    if draw(st.integers(0, 5)) == 0:
        return draw(json_value)
    pick = draw(st.sampled_from(_NUMBERS))
    args: dict[str, Any] = {
        "read_file": {"path": draw(st.sampled_from(_PATHS)), "start_line": pick,
                      "symbol": draw(st.sampled_from(["run_agent", "nope", "a.b", "", 5, "x" * 300]))},
        "grep": {"pattern": draw(st.sampled_from(["except", "(a+)+$", "(", "[", "x" * 2000, "", ".*"])),
                 "glob": draw(st.sampled_from(["*.py", "**", "{a,b}" * 40, "", None]))},
        "glob": {"pattern": draw(st.sampled_from(["**/*.py", "", "[", "{" * 100, "../**"]))},
        "find_symbol": {"name": draw(st.sampled_from(["run_agent", "a.b.c", "", "x y", "$"]))},
        "find_references": {"name": draw(st.sampled_from(["TOOLS", "", "1x"]))},
        "list_landmarks": {"kind": draw(st.sampled_from(["agent-loop", "nope", None, 5])), "page": pick},
        "report_landmark": {"kind": draw(st.sampled_from(["agent-loop", "tool-execution", "nope", 5])),
                            "file": draw(st.sampled_from(_PATHS)), "line": pick,
                            "confidence": draw(st.sampled_from(["high", "low", "sure", None])),
                            "symbol": draw(_text())},
        "report_finding": {"check": draw(st.sampled_from(["C1", "C99", "c1", "", None, 1])),
                           "verdict": draw(st.sampled_from(["confirmed", "suspected", "likely", None])),
                           "file": draw(st.sampled_from(_PATHS)), "line": pick,
                           "evidence": draw(st.sampled_from([_EVIDENCE, f"     26\t{_EVIDENCE}", "",
                                                             f"OPENAI_API_KEY={SECRETS[0]}",
                                                             f"TOKEN = '{_OUTSIDE_MARKER}'", "x" * 30_000])),
                           "claim": draw(_text()), "consequence": draw(_text()), "confirm_hint": draw(_text()),
                           "lead": draw(st.sampled_from([None, "C1-1", "C9-9", ""]))},
        "dismiss_lead": {"lead": draw(st.sampled_from(["C1-1", "C1-99", "", None])), "reason": draw(_text())},
    }.get(tool, {"x": draw(json_value)})
    for key in list(args):
        if args[key] is None or draw(st.integers(0, 7)) == 0:
            del args[key]
    return args


@st.composite
def _call(draw: st.DrawFn, n: int) -> dict[str, Any]:
    tool = draw(st.sampled_from([*_TOOLS, *_TOOLS, "run_shell", "", "report_finding "]))
    args = draw(_arguments(tool))
    wire = draw(st.sampled_from(["json", "json", "json", "broken", "number", "huge"]))
    text = {"json": json.dumps(args), "broken": json.dumps(args)[:-1] or "{", "number": "1e400",
            "huge": json.dumps({"pattern": "a" * 200_000})}[wire]
    call_id = draw(st.sampled_from([f"c{n}", f"c{n}", "dup", "", None, 7]))
    return {"id": call_id, "type": "function", "function": {"name": tool, "arguments": text}}


@st.composite
def reply(draw: st.DrawFn) -> Answer:
    """One answer to one request."""
    shape = draw(st.integers(0, 19))
    if shape == 0:
        return Answer(draw(st.sampled_from([400, 401, 404, 429, 500, 503])), {"error": {"message": draw(_text())}})
    if shape == 1:
        return Answer(200, None, raw=draw(st.sampled_from([b"not json", b"", b"\xff\xfe", b"{\"choices\": ["])))
    if shape == 2:
        return Answer(200, draw(json_value))
    calls = [draw(_call(n)) for n in range(draw(st.integers(0, 4)))]
    message: dict[str, Any] = {"role": "assistant", "content": draw(_text()) if draw(st.booleans()) else None}
    if calls:
        message["tool_calls"] = calls
    if shape == 3:
        message = draw(json_value)
    usage: Any = {"prompt_tokens": draw(st.sampled_from([100, 0, -5, 10**12, "x", None])),
                  "completion_tokens": draw(st.sampled_from([10, -1, None])),
                  "prompt_tokens_details": draw(st.sampled_from([{"cached_tokens": 50}, {"cached_tokens": -3}, None]))}
    if shape == 4:
        usage = draw(json_value)
    body: dict[str, Any] = {"id": "chatcmpl-x", "object": "chat.completion", "created": 1_700_000_000, "model": "m",
                            "choices": [{"index": 0, "message": message, "logprobs": None,
                                         "finish_reason": draw(st.sampled_from(
                                             ["stop", "tool_calls", "length", "content_filter", None, "weird"]))}]}
    if draw(st.integers(0, 3)):
        body["usage"] = usage
    if shape == 5:
        body["choices"] = draw(st.sampled_from([[], None, "x", [None]]))
    return Answer(200, body)


def _done() -> Answer:
    return Answer(200, {"id": "chatcmpl-d", "object": "chat.completion", "created": 1_700_000_000, "model": "m",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."},
                                     "finish_reason": "stop", "logprobs": None}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 1}})


def _check(run: CliRun, ledger: Path | None) -> None:
    where = f"[{FAMILY}] {run.args}"
    assert not run.hung, f"{where}: did not end"
    assert "internal error" not in run.err and "Traceback" not in run.err, f"{where}: {run.err[-2000:]}"
    event(f"{FAMILY}: exit {run.code}")
    if run.code == 3:
        texts = {p.suffix: p.read_text(encoding="utf-8") for p in run.reports}
        assert ".json" in texts, f"{where}: exit 3 without a report: {run.err[-500:]!r}"
        data = json.loads(texts[".json"])
        assert data["meta"]["state"] in ("incomplete", "cancelled") or not data["meta"]["ran_checks"], data["meta"]
    else:
        reports = assert_sane(run, secrets=SECRETS, allowed=(0, 1, 2), family=FAMILY)
        texts = reports.texts
        data = reports.json
    for text in texts.values():
        assert _OUTSIDE_MARKER not in text, f"{where}: a file outside the tree reached a report"
        assert not any(s in text for s in SECRETS), f"{where}: a planted secret reached a report"
    if data is not None:
        failed = [o["status"] for o in data["outcomes"] if o["status"] == "failed:internal-error"]
        assert not failed, f"{where}: a hostile reply was not classified: {[o['error'] for o in data['outcomes']]}"
        assert not any("internal-error" in n for n in data["meta"]["notes"]), data["meta"]["notes"]
    if ledger is not None and ledger.is_file():
        assert_ledger_calls_answered(read_ledger(ledger))


@hostile_settings(EXAMPLES)
@given(recon=st.lists(reply(), max_size=3), check=st.lists(reply(), min_size=1, max_size=4),
       stream=st.integers(0, 4))
def test_any_provider_reply_ends_in_a_report_or_one_error_line(recon: list[Answer], check: list[Answer],
                                                               stream: int) -> None:
    record(FAMILY)
    base = Path(tempfile.mkdtemp(prefix="replies-"))
    try:
        root, out = base / "ws", base / "out"
        (root / "agent").mkdir(parents=True)
        (root / "agent" / "loop.py").write_text(LOOP_PY, encoding="utf-8")
        (root / "agent" / "tools.py").write_text(TOOLS_PY, encoding="utf-8")
        (root / ".env").write_text(f"OPENAI_API_KEY={SECRETS[0]}\n", encoding="utf-8")
        (base / "outside").mkdir()
        (base / "outside" / "secret.py").write_text(f"TOKEN = '{_OUTSIDE_MARKER}'\n", encoding="utf-8")
        script = {"recon": [*recon, _done()], "C1": [*check, _done()]}
        with WireServer(script, openai_unit) as server:
            args = [str(root), "C1", "--engine", "llm", "--model", "openai:m", "--base-url", f"{server.base_url}/v1",
                    "--output-dir", str(out), "--format", "md,json,sarif", "-q"]
            (root / ".harness-audit.toml").write_text(
                "request_timeout_s = 5.0\ncheck_timeout_s = 30.0\ntransport_retries = 0\nmax_turns_per_check = 6\n"
                + ("stream = true\n" if stream == 0 else ""), encoding="utf-8")
            run = run_cli(args, timeout_s=90)
        ledgers = list((out / "runs").glob("*/ledger.jsonl")) if (out / "runs").is_dir() else []
        _check(run, ledgers[0] if ledgers else None)
    finally:
        shutil.rmtree(base, ignore_errors=True)
