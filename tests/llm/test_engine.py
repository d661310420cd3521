"""The model engine end to end, over a real HTTP server on 127.0.0.1 that speaks OpenAI chat completions.

Every test scripts the server (`tests/llm/fake_openai.py`), runs the engine through the public API or the CLI,
and asserts on what the server received, the ledger and the report: exact numbers where the issue asks for them
(refusal counts, per-check token totals, outcomes). Numbers in comments are the scripted ones.
"""

from __future__ import annotations

import itertools
import json
import re
import socket
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from harness_audit.catalogue import CHECKS
from harness_audit.cli import main
from harness_audit.findings import CheckId, CheckOutcome, RefusalReason, Usage
from harness_audit.llm.engine import Canceller
from harness_audit.llm.ledger import LedgerRead, read_ledger
from harness_audit.llm.prompts import system_prompt
from harness_audit.llm.replay import rerender
from harness_audit.llm.run import ModelOptions
from harness_audit.pipeline import AuditRun
from tests.llm.conftest import (
    C12_FINDING,
    MARKERS,
    Sleeps,
    assert_all_paired,
    assert_clean,
    assert_ledger_calls_answered,
    assert_ledger_paired,
    assert_paired,
    audit_over,
    cli_args,
    content_text,
    finding,
    json_report,
    keys,
    ledger_histories,
    ledger_of,
    markdown_report,
    messages_of,
    no_wait,
    recon_steps,
    requests_for,
    tool_results,
    tool_step,
)
from tests.llm.fake_openai import JsonObject, ScriptedOpenAI, ScriptStep, Step, call, error, hang, reply, usage
from tests.llm.fake_openai import Usage as WireUsage

RECON_USAGE = (usage(800, 40), usage(900, 3, cached=700))
C1_USAGE = (usage(1000, 50, cached=600, reasoning=10), usage(1500, 80, cached=1000, reasoning=20),
            usage(1700, 5, cached=1500))
C12_USAGE = (usage(1200, 60, cached=900, reasoning=15), usage(1300, 7, cached=1200))


def total(*wire: WireUsage) -> Usage:
    """What the report must say for these scripted usages: the provider's own numbers, summed."""
    return Usage(input_tokens=sum(u.prompt for u in wire), output_tokens=sum(u.completion for u in wire),
                 cache_read_tokens=sum(u.cached for u in wire), cache_write_tokens=0,
                 reasoning_tokens=sum(u.reasoning for u in wire), requests=len(wire), known=True)


PRICE = {"input": 2.0, "cached_input": 0.5, "output": 8.0}
"""Dollars per million tokens of `openai:m` where a test sets a price table."""


def dollars(price: dict[str, float], *wire: WireUsage) -> float:
    """The money of these scripted usages: uncached input, cached input and output at their prices."""
    fresh = sum(u.prompt - u.cached for u in wire)
    cached = sum(u.cached for u in wire)
    output = sum(u.completion for u in wire)
    return (fresh * price["input"] + cached * price["cached_input"] + output * price["output"]) / 1_000_000


def c1_steps(usages: Sequence[WireUsage | None] = C1_USAGE) -> list[ScriptStep]:
    """C1 reads the loop, reports the true finding, then stops."""
    return [tool_step(call("r1", "read_file", {"path": "agent/loop.py"}), usage=usages[0]),
            tool_step(call("f1", "report_finding", finding()), usage=usages[1]),
            reply(text="Done.", usage=usages[2])]


def c12_steps(usages: Sequence[WireUsage | None] = C12_USAGE) -> list[ScriptStep]:
    """C12 reports the unbounded loop, then stops."""
    return [tool_step(call("g1", "report_finding", C12_FINDING), usage=usages[0]), reply(text="Done.", usage=usages[1])]


def outcome(run: AuditRun, check: str) -> CheckOutcome:
    """The report's outcome of `check`."""
    (found,) = [o for o in run.report.outcomes if o.check == CheckId(check)]
    return found


def json_outcome(data: dict[str, Any], check: str) -> dict[str, Any]:
    """The JSON report's outcome of `check`."""
    (found,) = [o for o in data["outcomes"] if o["id"] == check]
    return found


def counts(**nonzero: int) -> dict[str, int]:
    """A full `refusal_counts` dict: every reason zero except the given ones (`evidence_not_found=2`)."""
    given = {k.replace("_", "-"): v for k, v in nonzero.items()}
    assert set(given) <= {r.value for r in RefusalReason}
    return {r.value: given.get(r.value, 0) for r in RefusalReason}


def fingerprints(run: AuditRun) -> list[str]:
    """The findings' fingerprints, sorted."""
    return sorted(f.fingerprint for f in run.report.findings)


def first_user_text(body: JsonObject) -> str:
    """The task message of a request."""
    return next(content_text(m) for m in messages_of(body) if m["role"] == "user")


def when(condition: Callable[[], bool], then: Callable[[], object], timeout_s: float = 10.0) -> threading.Thread:
    """A daemon thread that runs `then` as soon as `condition` holds (polled every 10 ms)."""

    def watch() -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if condition():
                then()
                return
            time.sleep(0.01)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def ran_tools(read: LedgerRead, unit: str) -> list[tuple[str, str]]:
    """(id, tool) of the calls of `unit` that actually ran, from the ledger (not those answered without running)."""
    return [(e["id"], e["tool"]) for e in read.of("tool-call")
            if e["unit"] == unit and e.get("valid") is True and e.get("executed", True) is not False]


def printed_paths(text: str) -> list[Path]:
    """Report paths a `-q` command printed."""
    return [Path(line) for line in text.splitlines() if line.endswith((".json", ".md"))]


# ============================================================================ 1. streaming, usage, unknown usage

def test_streamed_and_plain_runs_agree_and_usage_is_exact(harness: Path, out: Path) -> None:
    runs: dict[bool, AuditRun] = {}
    for stream in (False, True):
        script = {"recon": recon_steps("tool-execution", usages=RECON_USAGE), "C1": c1_steps()}
        with ScriptedOpenAI(script) as server:
            runs[stream] = audit_over(server, harness, ["C1"], out / str(stream), stream=stream)
        assert_clean(server)
        assert server.unused == {}
        assert {r.stream for r in server.requests} == {stream}
        assert keys(server) == ["recon", "recon", "C1", "C1", "C1"]

    plain, streamed = runs[False], runs[True]
    assert fingerprints(plain) == fingerprints(streamed) != []
    assert [(f.check, f.verdict, f.file, f.line) for f in streamed.report.findings] == \
        [(CheckId.C1, "confirmed", "agent/loop.py", 27)]
    for run in (plain, streamed):
        r = run.report
        assert r.meta.state == "complete"
        assert [o.status_text for o in r.outcomes] == ["ran"]
        # per check and per unit: exactly the scripted prompt/completion/cached/reasoning tokens
        assert outcome(run, "C1").usage == total(*C1_USAGE) == Usage(
            input_tokens=4200, output_tokens=135, cache_read_tokens=3100, reasoning_tokens=30, requests=3)
        assert r.recon_usage == total(*RECON_USAGE)
        assert r.total_usage == total(*RECON_USAGE, *C1_USAGE)
        assert r.refusal_counts == counts()
        data = json_report(run)
        assert json_outcome(data, "C1")["usage"] == {
            "known": True, "input_tokens": 4200, "output_tokens": 135, "cache_read_tokens": 3100,
            "cache_write_tokens": 0, "reasoning_tokens": 30, "requests": 3}
        assert data["meta"]["usage"]["input_tokens"] == 4200 + 1700
        assert data["meta"]["cost_usd"] is None  # no price table
        responses = ledger_of(run).of("response")
        assert [e["usage"]["input_tokens"] for e in responses] == [800, 900, 1000, 1500, 1700]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_reply_without_usage_makes_that_unit_unknown_never_zero(harness: Path, out: Path, stream: bool) -> None:
    script = {
        "recon": recon_steps("tool-execution", "agent-loop", usages=RECON_USAGE),
        "C1": c1_steps(),
        "C12": c12_steps(usages=(C12_USAGE[0], None)),  # the last reply carries no usage at all
    }
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1", "C12"], out, stream=stream, prices={"openai:m": PRICE})
    assert_clean(server)
    r = run.report
    assert [o.status_text for o in r.outcomes] == ["ran", "ran"]
    c12 = outcome(run, "C12").usage
    assert c12.known is False
    assert c12.requests == 2
    assert outcome(run, "C1").usage == total(*C1_USAGE)  # the other unit stays exact
    assert r.total_usage.known is False

    data = json_report(run)
    assert json_outcome(data, "C12")["usage"] == {
        "known": False, "input_tokens": None, "output_tokens": None, "cache_read_tokens": None,
        "cache_write_tokens": None, "reasoning_tokens": None, "requests": 2}
    assert json_outcome(data, "C12")["cost_usd"] is None
    assert json_outcome(data, "C1")["usage"]["input_tokens"] == 4200
    assert data["meta"]["usage"]["known"] is False
    assert data["meta"]["usage"]["input_tokens"] is None
    assert data["meta"]["cost_usd"] is None

    md = markdown_report(run)
    (row,) = [line for line in md.splitlines() if line.startswith("| C12 |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    # unit | status | time | requests | input | output | cache read | cache write | reasoning | cost | ...
    assert cells[3] == "2"
    assert cells[4:10] == ["unknown"] * 6
    assert "input unknown" in md
    assert [e["usage"]["known"] for e in ledger_of(run).of("response") if e["unit"] == "C12"] == [True, False]


# ============================================================================ 2. fabricated evidence

FABRICATED = "messages.append({\"role\": \"tool\", \"tool_call_id\": call.id, \"content\": str(exc)})"


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_fabricated_evidence_is_refused_to_the_model_then_the_correction_is_accepted(
        harness: Path, out: Path, stream: bool) -> None:
    script = {
        "recon": recon_steps("tool-execution"),
        "C1": [
            tool_step(call("r1", "read_file", {"path": "agent/loop.py"})),
            tool_step(call("f1", "report_finding", finding(evidence=FABRICATED))),
            tool_step(call("f2", "report_finding", finding(line=999)),
                      call("f3", "report_finding", finding(evidence="except Exception:\n    log.warning(exc)"))),
            tool_step(call("f4", "report_finding", finding())),
            reply(text="Done."),
        ],
    }
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1"], out, stream=stream)
    assert_clean(server)
    c1 = requests_for(server, "C1")
    assert len(c1) == 5
    # the gate's answer is the tool result of the very next request
    after_f1 = tool_results(c1[2])
    assert list(after_f1) == ["f1"]
    assert after_f1["f1"].startswith("Refused (evidence-not-found): the excerpt does not occur in agent/loop.py")
    after_f23 = tool_results(c1[3])
    assert after_f23["f2"].startswith("Refused (line-out-of-range): line 999 is not in 'agent/loop.py'")
    assert after_f23["f3"].startswith("Refused (evidence-not-found)")
    assert tool_results(c1[4]) == {"f4": "Accepted: C1 confirmed at agent/loop.py:27."}

    r = run.report
    assert r.refusal_counts == counts(evidence_not_found=2, line_out_of_range=1)
    assert json_report(run)["meta"]["refusals_by_reason"] == r.refusal_counts
    assert r.refusals_for(CheckId.C1) == 3
    assert json_outcome(json_report(run), "C1")["rejection_count"] == 3
    assert [e["reason"] for e in ledger_of(run).of("refusal")] == [
        "evidence-not-found", "line-out-of-range", "evidence-not-found"]
    assert [(f.check, f.line, f.evidence) for f in r.findings] == [(CheckId.C1, 27, finding()["evidence"])]
    assert "tool_call_id\": call.id, \"content\": str(exc)" not in markdown_report(run)
    assert "| evidence-not-found | 2 |" in markdown_report(run)


# ============================================================================ 3. paths out of the workspace

def test_paths_out_of_the_workspace_are_refused_and_never_read(harness: Path, out: Path) -> None:
    cite = "secret = read_the_file()"  # what a model might claim; none of the outside files' text
    script = {
        "recon": [
            tool_step(call("lm1", "report_landmark", {"kind": "tool-execution", "file": "agent/loop.py", "line": 26,
                                                      "confidence": "high"}),
                      call("lm2", "report_landmark", {"kind": "agent-loop", "file": "node_modules/pkg/index.py",
                                                      "line": 1, "confidence": "high"}),
                      call("lm3", "report_landmark", {"kind": "agent-loop", "file": "agent/leak.py", "line": 1,
                                                      "confidence": "high"})),
            reply(text="Done."),
        ],
        "C1": [
            tool_step(call("p1", "read_file", {"path": "../../etc/passwd"}),
                      call("p2", "read_file", {"path": "agent/leak.py"}),
                      call("p3", "read_file", {"path": "node_modules/pkg/index.py"}),
                      call("p4", "glob", {"pattern": "**/*"}),
                      call("p5", "grep", {"pattern": "zebra|node-modules|passwd-marker"}),
                      call("p6", "find_references", {"name": "VENDORED_MARKER"})),
            tool_step(call("q1", "report_finding", finding(file="../../etc/passwd", line=1, evidence=cite)),
                      call("q2", "report_finding", finding(file="agent/leak.py", line=1, evidence=cite)),
                      call("q3", "report_finding", finding(file="node_modules/pkg/index.py", line=1, evidence=cite))),
            reply(text="Done."),
        ],
    }
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1"], out)
    assert_clean(server)
    recon, c1 = requests_for(server, "recon"), requests_for(server, "C1")
    landmark_results = tool_results(recon[1])
    assert landmark_results["lm1"].startswith("Accepted")
    assert landmark_results["lm2"].startswith("Refused (out-of-scope-path)")
    assert landmark_results["lm3"].startswith("Refused (file-outside-workspace)")

    reads = tool_results(c1[1])
    assert reads["p1"].startswith("Refused (file-outside-workspace): '../../etc/passwd' leaves the audited workspace")
    assert reads["p2"].startswith("Refused (file-outside-workspace): 'agent/leak.py' is a link")
    assert reads["p3"].startswith("Refused (out-of-scope-path): 'node_modules/pkg/index.py' is under 'node_modules'")
    assert reads["p4"].splitlines() == ["agent/__init__.py", "agent/loop.py", "agent/tools.py"]
    assert reads["p5"].startswith("no matches")
    assert "node_modules" not in reads["p6"]

    reports = tool_results(c1[2])
    assert reports["q1"].startswith("Refused (file-outside-workspace)")
    assert reports["q2"].startswith("Refused (file-outside-workspace)")
    assert reports["q3"].startswith("Refused (out-of-scope-path)")

    for received in server.requests:  # nothing of an outside or excluded file ever left the machine
        wire = json.dumps(received.body)
        assert not [m for m in MARKERS if m in wire]
    ledger_text = Path(run.report.meta.ledger or "").read_text(encoding="utf-8")
    assert not [m for m in MARKERS if m in ledger_text]
    assert not [m for m in MARKERS if m in markdown_report(run)]

    r = run.report
    assert r.findings == ()
    assert r.refusal_counts == counts(file_outside_workspace=3, out_of_scope_path=2)
    assert [(x.subject, x.reason.value) for x in r.refusals if x.subject == "landmark"] == [
        ("landmark", "out-of-scope-path"), ("landmark", "file-outside-workspace")]
    assert [o.status_text for o in r.outcomes] == ["ran"]


# ============================================================================ 4. malformed tool calls

@pytest.mark.parametrize("stream", [False, True], ids=["plain", "stream"])
def test_invalid_json_duplicate_ids_and_unknown_tools_each_get_one_result(
        harness: Path, out: Path, stream: bool) -> None:
    script = {
        "recon": recon_steps("tool-execution"),
        "C1": [
            tool_step(call("bad", "read_file", '{"path": "agent/loop.py"'),  # cut-off JSON
                      call("dup", "glob", {"pattern": "*.py"}),
                      call("dup", "grep", {"pattern": "TOOLS"}),
                      call("u1", "delete_file", {"path": "agent/loop.py"})),
            tool_step(call("f1", "report_finding", finding())),
            reply(text="Done."),
        ],
    }
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1"], out, stream=stream)
    assert_clean(server)
    c1 = requests_for(server, "C1")
    assert len(c1) == 3  # the loop went on after the bad calls
    (assistant,) = [m for m in messages_of(c1[1]) if m["role"] == "assistant"]
    ids = [tc["id"] for tc in assistant["tool_calls"]]
    assert len(ids) == 4 == len(set(ids))
    assert ids[:2] == ["bad", "dup"]
    assert ids[2].startswith("dup") and ids[2] != "dup"
    assert ids[3] == "u1"
    results = tool_results(c1[1])
    assert list(results) == ids  # exactly one result per call, in order
    assert results["bad"].startswith("Not executed: the arguments are not a valid JSON object")
    assert results["dup"] == "agent/__init__.py\nagent/loop.py\nagent/tools.py"
    assert results[ids[2]].startswith("Not executed: this call repeated an id")
    assert results["u1"] == ("Unknown tool 'delete_file'. Available tools: dismiss_lead, find_references, find_symbol, "
                             "glob, grep, list_landmarks, read_file, report_finding, report_landmark.")
    assert tool_results(c1[2]) == {"f1": "Accepted: C1 confirmed at agent/loop.py:27."}

    ledger = ledger_of(run)
    assert [e["renamed"] for e in ledger.of("renamed-call-ids")] == [[["dup", ids[2]]]]
    # every call is recorded with its result; only the valid, known, first-seen ones ran
    answered = [(e["id"], e["tool"], e["result"][:13]) for e in ledger.of("tool-call") if e["unit"] == "C1"]
    assert answered == [("bad", "read_file", "Not executed:"), ("dup", "glob", "agent/__init_"),
                        (ids[2], "grep", "Not executed:"), ("u1", "delete_file", "Unknown tool "),
                        ("f1", "report_finding", "Accepted: C1 ")]
    assert ran_tools(ledger, "C1") == [("dup", "glob"), ("f1", "report_finding")]
    assert_ledger_calls_answered(ledger)
    assert (harness / "agent" / "loop.py").is_file()
    assert [o.status_text for o in run.report.outcomes] == ["ran"]
    assert len(run.report.findings) == 1


def test_cut_off_and_empty_replies_get_a_result_or_a_nudge(harness: Path, out: Path) -> None:
    script = {
        "recon": recon_steps("tool-execution"),
        "C1": [
            reply(tool_calls=[call("t1", "read_file", {"path": "agent/loop.py"})], finish_reason="length"),
            reply(text=""),  # empty
            tool_step(call("f1", "report_finding", finding())),
            reply(text="Done."),
        ],
    }
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1"], out)
    assert_clean(server)
    c1 = requests_for(server, "C1")
    assert len(c1) == 4
    assert tool_results(c1[1])["t1"].startswith("Not executed: your reply was cut off by the output limit")
    assert content_text(messages_of(c1[2])[-1]).startswith("Your reply was empty.")
    assert ran_tools(ledger_of(run), "C1") == [("f1", "report_finding")]  # the cut-off call never ran
    assert [o.status_text for o in run.report.outcomes] == ["ran"]
    assert len(run.report.findings) == 1


# ============================================================================ 5. pairing, the helper itself

def test_assert_paired_catches_every_kind_of_unpaired_history() -> None:
    def asst(*ids: str) -> dict[str, Any]:
        return {"role": "assistant", "tool_calls": [{"id": i} for i in ids]}

    def tool(i: str) -> dict[str, Any]:
        return {"role": "tool", "tool_call_id": i}

    assert_paired([{"role": "system"}, {"role": "user"}, asst("a", "b"), tool("b"), tool("a"), asst(), asst("c"),
                   tool("c")])
    bad_histories = [
        [asst("a", "b"), tool("a"), asst()],  # b never answered
        [asst("a"), tool("a"), tool("a")],  # answered twice
        [asst("a"), tool("z")],  # answers nothing
        [asst("a", "a"), tool("a"), tool("a")],  # duplicate ids in one message
        [asst("a")],  # unanswered at the end
        [tool("a")],  # a result before any call
    ]
    for history in bad_histories:
        with pytest.raises(AssertionError):
            assert_paired(history)


# ============================================================================ 6. endless tool calls

def endless(prefix: str, per_reply: WireUsage) -> Callable[[JsonObject], Step]:
    """A step that always answers with one more tool call, each with a new id."""
    counter = itertools.count()

    def step(_: JsonObject) -> Step:
        return tool_step(call(f"{prefix}{next(counter)}", "glob", {"pattern": "*.py"}), usage=per_reply)

    return step


@pytest.mark.parametrize(
    ("limits", "per_reply", "requests", "executed", "error"),
    [
        # the fifth turn is the reporting turn: its call is answered, not run
        ({"max_turns_per_check": 5}, usage(400, 20), 5, 4, "turn limit 5 reached"),
        ({"max_tool_calls_per_check": 3}, usage(400, 20), 4, 3, "tool-call limit 3 reached"),
        # 20,400 tokens a reply at billed weight (output 4x): no room for a third after the second, which reports
        ({"max_tokens_per_check": 50_000}, usage(20_000, 100), 2, 1, "token limit 50,000 reached"),
    ],
    ids=["turns", "tool-calls", "tokens"],
)
def test_a_model_that_never_stops_is_stopped_by_the_budget_and_keeps_its_findings(
        harness: Path, out: Path, limits: dict[str, Any], per_reply: WireUsage, requests: int, executed: int,
        error: str) -> None:
    forever = endless("g", per_reply)
    script = {
        "recon": recon_steps("tool-execution"),
        "C1": [tool_step(call("f1", "report_finding", finding()), usage=per_reply), *[forever] * 100],
    }
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1"], out, **limits)
    assert server.step_errors == []
    assert_all_paired(server)
    assert len(requests_for(server, "C1")) == requests
    c1 = outcome(run, "C1")
    assert c1.status_text == "incomplete"
    assert c1.error == f"{error}: stopped after its reporting turn; what it reported is kept"
    assert c1.usage == total(*[per_reply] * requests)
    last = requests_for(server, "C1")[-1]
    assert sorted(t["function"]["name"] for t in last["tools"]) == ["dismiss_lead", "report_finding"]
    assert len(ran_tools(ledger_of(run), "C1")) == executed
    assert_ledger_calls_answered(ledger_of(run))  # the call refused at the limit has its result too
    r = run.report
    assert r.meta.state == "incomplete"
    assert [(f.check, f.line) for f in r.findings] == [(CheckId.C1, 27)]  # gated before the limit: kept
    assert "| C1 · Tool-call pairing completeness | incomplete |" in markdown_report(run)


def test_the_task_states_the_budget_and_the_model_is_nudged_once_at_70_percent(harness: Path, out: Path) -> None:
    """The model plans with its budget: the task says it, one nudge comes when 70% of a budget is used (turn 7
    of 10 here), and the reporting turn follows at the limit, not a second nudge before it."""
    per_reply = usage(400, 20)
    script = {"recon": recon_steps("tool-execution"),
              "C1": [tool_step(call("f1", "report_finding", finding()), usage=per_reply),
                     *[endless("g", per_reply)] * 100]}
    with ScriptedOpenAI(script) as server:
        audit_over(server, harness, ["C1"], out, max_turns_per_check=10)
    bodies = requests_for(server, "C1")
    assert "at most 10 model turns" in first_user_text(bodies[0])
    nudged = [i for i, body in enumerate(bodies)
              if any("Budget: 70% of this unit's turns are used" in content_text(m) for m in messages_of(body))]
    assert nudged and nudged[0] == 6  # the request of the 7th turn is the first to carry it
    per_request = [sum(content_text(m).count("Budget: ") for m in messages_of(b)) for b in bodies]
    assert max(per_request) == 1  # said once, kept in the history, never repeated
    assert "This is your last turn (turn limit 10 reached)" in content_text(messages_of(bodies[-1])[-1])


# ============================================================================ 7. transport retries

def test_rate_limit_then_success_retries_the_request_never_a_tool(harness: Path, out: Path) -> None:
    script = {
        "recon": recon_steps("tool-execution"),
        "C1": [
            error(429, retry_after=5),
            tool_step(call("r1", "read_file", {"path": "agent/loop.py"}), usage=C1_USAGE[0]),
            error(503),
            tool_step(call("f1", "report_finding", finding()), usage=C1_USAGE[1]),
            reply(text="Done.", usage=C1_USAGE[2]),
        ],
    }
    sleeps = Sleeps([])
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1"], out, transport_retries=2, options=ModelOptions(sleep=sleeps))
    assert_clean(server)
    c1 = requests_for(server, "C1")
    assert len(c1) == 5
    assert c1[0]["messages"] == c1[1]["messages"]  # a retry resends the same history
    assert c1[2]["messages"] == c1[3]["messages"]
    assert sleeps.delays == [5.0, 1.0]  # retry-after honoured, then the first backoff

    ledger = ledger_of(run)
    attempts = [(e["event"], e.get("failure")) for e in ledger.events
                if e.get("unit") == "C1" and e["event"] in ("request-error", "response")]
    assert attempts == [("request-error", "rate-limited"), ("response", None), ("request-error", "provider-unavailable"),
                        ("response", None), ("response", None)]
    assert ran_tools(ledger, "C1") == [("r1", "read_file"), ("f1", "report_finding")]  # each ran once
    o = outcome(run, "C1")
    assert o.status_text == "ran"
    assert o.usage == total(*C1_USAGE)  # failed attempts carry no usage
    assert len(run.report.findings) == 1


@pytest.mark.parametrize(("status", "code", "delays"),
                         [(503, "provider-unavailable", [1.0, 2.0]), (429, "rate-limited", [1.0, 2.0])])
def test_a_provider_that_stays_down_fails_one_check_not_the_others(
        harness: Path, out: Path, status: int, code: str, delays: list[float]) -> None:
    script = {
        "recon": recon_steps("tool-execution", "agent-loop"),
        "C1": c1_steps(),
        "C12": [error(status)] * 3,
    }
    sleeps = Sleeps([])
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1", "C12"], out, transport_retries=2, options=ModelOptions(sleep=sleeps))
    assert_clean(server)
    assert len(requests_for(server, "C12")) == 3  # one attempt and two retries
    assert sleeps.delays == delays
    c12 = outcome(run, "C12")
    assert c12.status_text == f"failed:{code}"
    assert c12.error is not None and c12.error.startswith(f"HTTP {status}")
    assert c12.usage == Usage()
    assert outcome(run, "C1").status_text == "ran"
    assert outcome(run, "C1").usage == total(*C1_USAGE)
    assert [(f.check, f.line) for f in run.report.findings] == [(CheckId.C1, 27)]
    assert run.report.meta.state == "incomplete"


# ============================================================================ 8. timeouts

def test_a_hanging_response_times_out_after_its_retries(harness: Path, out: Path) -> None:
    script = {"recon": recon_steps("tool-execution"), "C1": [hang(20), hang(20)]}
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1"], out, request_timeout_s=0.3, transport_retries=1)
    assert_clean(server)
    assert outcome(run, "C1").duration_s < 2  # two attempts of 0.3 s, not the 20 s hang
    assert len(requests_for(server, "C1")) == 2
    c1 = outcome(run, "C1")
    assert c1.status_text == "failed:timeout"
    errors = [e["failure"] for e in ledger_of(run).of("request-error")]
    assert errors == ["timeout", "timeout"]
    assert run.report.meta.state == "incomplete"


@pytest.mark.parametrize(
    ("limits", "status"),
    [
        # the run's deadline passes during the request
        ({"run_timeout_s": 0.4, "request_timeout_s": 2.0}, "failed:timeout"),
        # the request times out first; no time is left before the run's deadline for a retry
        ({"run_timeout_s": 0.8, "request_timeout_s": 0.5}, "failed:timeout"),
        # the same with the check's own wall clock: a budget, not the run's deadline
        ({"check_timeout_s": 0.8, "request_timeout_s": 0.5}, "incomplete"),
    ],
    ids=["deadline-in-request", "deadline-before-retry", "check-wall-clock"],
)
def test_the_run_deadline_is_a_timeout_and_the_check_clock_a_budget(
        harness: Path, out: Path, limits: dict[str, Any], status: str) -> None:
    script = {"C1": [hang(20)] * 3}  # hybrid: static recon, so the check's request starts with the run's clock
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1"], out, engine="hybrid", transport_retries=2, **limits)
    assert server.step_errors == []
    assert outcome(run, "C1").duration_s < 2
    assert len(requests_for(server, "C1")) == 1  # no retry started that could not finish
    assert outcome(run, "C1").status_text == status
    assert [e["failure"] for e in ledger_of(run).of("request-error")] == ["timeout"]


# ============================================================================ 9. the shared prefix

def test_system_prompt_and_tools_are_byte_identical_across_every_request(harness: Path, out: Path) -> None:
    script = {"recon": recon_steps("tool-execution", "agent-loop"), "C1": c1_steps(), "C12": c12_steps()}
    with ScriptedOpenAI(script) as server:
        audit_over(server, harness, ["C1", "C12"], out)
    assert_clean(server)
    bodies = [r.body for r in server.requests]
    assert sorted(set(keys(server))) == ["C1", "C12", "recon"]
    assert len(bodies) == 7
    systems = {json.dumps(messages_of(b)[0], sort_keys=True) for b in bodies}
    tools = {json.dumps(b["tools"], sort_keys=True) for b in bodies}
    assert len(systems) == 1
    assert len(tools) == 1
    first = messages_of(bodies[0])[0]
    assert first["role"] == "system"
    assert content_text(first) == system_prompt()
    assert [t["function"]["name"] for t in bodies[0]["tools"]] == [
        "read_file", "grep", "glob", "find_symbol", "find_references", "list_landmarks", "report_landmark",
        "report_finding", "dismiss_lead"]
    for received in server.requests:
        task = first_user_text(received.body)
        assert messages_of(received.body)[1]["role"] == "user"  # the task comes right after the shared prefix
        if received.key == "recon":
            assert task.startswith("Recon · locate landmarks\n")
        else:
            check = CheckId(received.key)
            assert task.startswith(f"Audit check {received.key} · ")
            assert task.split("\n", 1)[0] == f"Audit check {received.key} · {CHECKS[check].title}"


# ============================================================================ 10. missing landmarks

def test_checks_without_their_landmarks_are_not_covered_and_cost_no_request(harness: Path, out: Path) -> None:
    (harness / "agent").rename(harness / "elsewhere")  # no first-party harness code left: static recon finds nothing
    (harness / "notes.py").write_text("VERSION = '1.0'\n", encoding="utf-8")
    for path in (harness / "elsewhere").rglob("*.py"):
        path.unlink()
    script = {"recon": [reply(text="I found none of these.", usage=usage(500, 6))]}
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1", "C2", "C12"], out)
    assert_clean(server)
    assert keys(server) == ["recon"]
    r = run.report
    assert [(o.check.value, o.status_text, [k.value for k in o.missing_landmarks]) for o in r.outcomes] == [
        ("C1", "not-covered", ["tool-execution"]), ("C2", "not-covered", ["history-append"]),
        ("C12", "not-covered", ["agent-loop"])]
    assert all(o.usage == Usage() for o in r.outcomes)
    assert r.total_usage == total(usage(500, 6))
    ledger = ledger_of(run)
    assert [e["unit"] for e in ledger.of("unit-start")] == ["recon"]
    assert [(e["unit"], e["status"]) for e in ledger.of("unit-end") if e["unit"] != "recon"] == [
        ("C1", "not-covered"), ("C2", "not-covered"), ("C12", "not-covered")]
    assert "missing landmarks: tool-execution" in markdown_report(run)


def test_a_recon_that_reports_nothing_fails_named_and_the_checks_run_on_static_landmarks(
        harness: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 15: a recon that reported nothing gave "not covered" for every check, and the run exited 0."""
    script = {"recon": [reply(text="Done.", usage=usage(500, 6))], "C1": c1_steps(), "C12": c12_steps()}
    with ScriptedOpenAI(script) as server:
        code = main(cli_args(server, harness, "C1,C12", out))
    assert_clean(server)
    assert code == 3
    data = json_report(printed_paths(capsys.readouterr().out))
    assert data["meta"]["state"] == "incomplete"
    assert [(o["id"], o["status"]) for o in data["outcomes"]] == [("C1", "ran"), ("C12", "ran")]
    (note,) = [n for n in data["meta"]["notes"] if n.startswith("Recon failed")]
    assert "empty-result: the recon model reported no landmark although static recon found" in note
    assert {f["check"] for f in data["findings"]} == {"C1", "C12"}  # nothing the checks found is lost


# ============================================================================ 11. cancellation

def cancel_script() -> dict[str, Sequence[ScriptStep]]:
    """C1 finishes; C12 runs one tool, then its next request hangs until cancelled."""
    return {
        "recon": recon_steps("tool-execution", "agent-loop"),
        "C1": c1_steps(),
        "C12": [tool_step(call("h1", "read_file", {"path": "agent/loop.py", "start_line": 15, "end_line": 20})),
                hang(30)],
    }


def test_cancelling_stops_a_hanging_request_promptly_and_keeps_what_finished(harness: Path, out: Path) -> None:
    canceller = Canceller(event=threading.Event())
    set_at: list[float] = []
    with ScriptedOpenAI(cancel_script()) as server:
        when(lambda: len(requests_for(server, "C12")) == 2,
             lambda: (set_at.append(time.monotonic()), canceller.event.set()))
        run = audit_over(server, harness, ["C1", "C12"], out, concurrency=1,
                         options=ModelOptions(canceller=canceller, sleep=no_wait))
        returned = time.monotonic()
        assert set_at, "the hanging request never arrived"
        assert returned - set_at[0] < 3
    assert server.step_errors == []
    assert_all_paired(server)
    r = run.report
    assert r.meta.state == "cancelled"
    assert [o.status_text for o in r.outcomes] == ["ran", "cancelled"]
    assert [(f.check, f.line) for f in r.findings] == [(CheckId.C1, 27)]
    assert outcome(run, "C1").usage == total(*C1_USAGE)
    ledger = ledger_of(run)
    assert [(e["unit"], e["status"]) for e in ledger.of("unit-end")] == [
        ("recon", "ran"), ("C1", "ran"), ("C12", "cancelled")]
    assert ledger.of("run-end")[0]["state"] == "cancelled"
    histories = ledger_histories(ledger)
    assert set(histories) == {"recon", "C1", "C12"}
    for history in histories.values():
        assert_ledger_paired(history)
    assert_ledger_calls_answered(ledger)
    assert "**CANCELLED**" in markdown_report(run)


def run_dir_under(out: Path) -> Path:
    """The one run directory under `out`."""
    (run_dir,) = (out / "runs").iterdir()
    return run_dir


def test_the_cancel_command_stops_a_cli_run_which_exits_3(
        harness: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cancelled: list[int] = []
    with ScriptedOpenAI(cancel_script()) as server:
        when(lambda: len(requests_for(server, "C12")) == 2,
             lambda: cancelled.append(main(["cancel", str(run_dir_under(out))])))
        t0 = time.monotonic()
        code = main(cli_args(server, harness, "C1,C12", out, "--concurrency", "1"))
        assert time.monotonic() - t0 < 5
    assert cancelled == [0]
    assert code == 3
    data = json_report(printed_paths(capsys.readouterr().out))
    assert data["meta"]["state"] == "cancelled"
    assert [(o["id"], o["status"]) for o in data["outcomes"]] == [("C1", "ran"), ("C12", "cancelled")]
    assert [f["check"] for f in data["findings"]] == ["C1"]
    ledger = read_ledger(run_dir_under(out) / "ledger.jsonl")
    for history in ledger_histories(ledger).values():
        assert_ledger_paired(history)
    assert_ledger_calls_answered(ledger)


# ============================================================================ 12. resume

def test_resume_runs_only_what_did_not_finish(harness: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    c2_finding = finding("C2", line=20, evidence="messages.append(message.model_dump(exclude_none=True))")
    script: dict[str, Sequence[ScriptStep]] = {
        "recon": recon_steps("tool-execution", "history-append", usages=RECON_USAGE),
        "C1": c1_steps(),
        # first run: C2's first request hangs until the run is cancelled; the resumed run walks on from step 1
        "C2": [hang(30), tool_step(call("s1", "read_file", {"path": "agent/loop.py"})),
               tool_step(call("s2", "report_finding", c2_finding)), reply(text="Done.")],
    }
    with ScriptedOpenAI(script) as server:
        when(lambda: len(requests_for(server, "C2")) == 1, lambda: main(["cancel", str(run_dir_under(out))]))
        assert main(cli_args(server, harness, "C1,C2", out, "--concurrency", "1")) == 3
        first = json_report(printed_paths(capsys.readouterr().out))
        assert first["meta"]["state"] == "cancelled"
        before = len(server.requests)

        run_dir = run_dir_under(out)
        code = main(["resume", str(run_dir), "--root", str(harness), "-q"])
        resumed = json_report(printed_paths(capsys.readouterr().out))
        after = server.requests[before:]
    assert server.step_errors == []
    assert server.unused == {}
    assert_all_paired(server)
    assert [r.key for r in after] == ["C2", "C2", "C2"]  # neither recon nor C1 ran again
    assert code == 1  # complete, with confirmed findings
    assert resumed["meta"]["state"] == "complete"
    assert resumed["meta"]["resumed_checks"] == ["C1"]
    assert [(o["id"], o["status"], o["resumed"]) for o in resumed["outcomes"]] == [
        ("C1", "ran", True), ("C2", "ran", False)]
    first_c1 = [f["fingerprint"] for f in first["findings"] if f["check"] == "C1"]
    assert len(first_c1) == 1
    assert [f["fingerprint"] for f in resumed["findings"] if f["check"] == "C1"] == first_c1
    assert [f["check"] for f in resumed["findings"]] == ["C1", "C2"]
    assert json_outcome(resumed, "C1")["usage"] == json_outcome(first, "C1")["usage"]  # its cost is kept
    assert json_outcome(resumed, "C1")["usage"]["input_tokens"] == 4200
    assert resumed["meta"]["recon_usage"]["input_tokens"] == 1700
    report, _ = rerender(run_dir, root=harness, write=False)
    assert report.meta.resumed == (CheckId.C1,)
    assert report.meta.state == "complete"
    assert [f.fingerprint for f in report.findings] == [f["fingerprint"] for f in resumed["findings"]]


def test_two_resumes_then_a_rerun_match_and_carry_every_attempts_spend(
        harness: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 15: each resume wrote the landmarks again (two resumes: 164 events for 41 landmarks) and
    `replay --rerun` then diverged; resumed reports omitted the cancelled attempts' spend; `resume` could not take
    a new `--base-url`; `replay --rerun` of a cancelled run did not reproduce "cancelled"."""
    first_read, second_read = usage(700, 20, cached=500), usage(750, 20, cached=600)
    c2_finding = finding("C2", line=20, evidence="messages.append(message.model_dump(exclude_none=True))")
    a_script: dict[str, Sequence[ScriptStep]] = {
        "recon": recon_steps("tool-execution", "history-append", usages=RECON_USAGE),
        "C1": c1_steps(),
        "C2": [tool_step(call("a1", "read_file", {"path": "agent/loop.py"}), usage=first_read), hang(30),
               tool_step(call("b1", "read_file", {"path": "agent/loop.py"}), usage=second_read), hang(30)],
    }
    b_script: dict[str, Sequence[ScriptStep]] = {
        "C2": [tool_step(call("c1", "read_file", {"path": "agent/loop.py"}), usage=C12_USAGE[0]),
               tool_step(call("c2", "report_finding", c2_finding), usage=C12_USAGE[1]),
               reply(text="Done.", usage=usage(900, 4))]}
    with ScriptedOpenAI(a_script) as a, ScriptedOpenAI(b_script) as b:
        when(lambda: len(requests_for(a, "C2")) == 2, lambda: main(["cancel", str(run_dir_under(out))]))
        assert main(cli_args(a, harness, "C1,C2", out, "--concurrency", "1")) == 3
        capsys.readouterr()
        run_dir = run_dir_under(out)
        # the cancelled run replays to "cancelled", with no provider
        assert main(["replay", str(run_dir), "--rerun", "--root", str(harness), "-q"]) == 3
        cancelled = json_report(printed_paths(capsys.readouterr().out))
        assert cancelled["meta"]["state"] == "cancelled"
        assert [(o["id"], o["status"]) for o in cancelled["outcomes"]] == [("C1", "ran"), ("C2", "cancelled")]
        # resume 1: C2 reads again, then hangs again and is cancelled again
        when(lambda: len(requests_for(a, "C2")) == 4, lambda: main(["cancel", str(run_dir)]))
        assert main(["resume", str(run_dir), "--root", str(harness), "-q"]) == 3
        capsys.readouterr()
        # resume 2, on another server
        assert main(["resume", str(run_dir), "--root", str(harness), "--base-url", b.base_url, "-q"]) == 1
        resumed = json_report(printed_paths(capsys.readouterr().out))
    assert a.unused == {} and b.unused == {} and a.step_errors == b.step_errors == []
    assert resumed["meta"]["state"] == "complete"
    c2 = json_outcome(resumed, "C2")["usage"]
    assert (c2["requests"], c2["input_tokens"]) == (5, 700 + 750 + 1200 + 1300 + 900)  # every attempt's spend
    ledger = ledger_of_dir(run_dir)
    assert len(ledger.of("landmark")) == 2  # recon's landmarks, written once
    assert main(["replay", str(run_dir), "--rerun", "--root", str(harness), "-q"]) == 1
    rerun = json_report(printed_paths(capsys.readouterr().out))

    def essence(data: dict[str, Any]) -> dict[str, Any]:
        return {"state": data["meta"]["state"],
                "findings": [(f["check"], f["line"], f["fingerprint"]) for f in data["findings"]],
                "outcomes": [(o["id"], o["status"], o["usage"]) for o in data["outcomes"]],
                "recon": data["meta"]["recon_usage"], "landmarks": data["landmarks"]}

    assert essence(rerun) == essence(resumed)


def ledger_of_dir(run_dir: Path) -> LedgerRead:
    """The ledger of a run directory."""
    return read_ledger(run_dir / "ledger.jsonl")


# ============================================================================ 13. replay

def test_replay_reproduces_the_run_without_a_provider(
        harness: Path, out: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    script = {
        "recon": recon_steps("tool-execution", "agent-loop", usages=RECON_USAGE),
        "C1": [error(429, retry_after=0.01), tool_step(call("r1", "read_file", {"path": "agent/loop.py"}),
                                                       usage=C1_USAGE[0]),
               tool_step(call("f0", "report_finding", finding(evidence=FABRICATED)), usage=C1_USAGE[1]),
               tool_step(call("f1", "report_finding", finding()), usage=C1_USAGE[1]),
               reply(text="Done.", usage=C1_USAGE[2])],
        "C12": c12_steps(usages=(C12_USAGE[0], None)),
    }
    with ScriptedOpenAI(script) as server:
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        (harness / ".harness-audit.toml").write_text(
            '[prices."openai:m"]\n' + "".join(f"{k} = {v}\n" for k, v in PRICE.items()), encoding="utf-8")
        code = main(cli_args(server, harness, "C1,C12", out))
        original = json_report(printed_paths(capsys.readouterr().out))
    assert_clean(server)
    assert code == 1
    run_dir = run_dir_under(out)

    attempts: list[object] = []
    real_connect = socket.socket.connect

    def record(self: socket.socket, address: Any) -> Any:
        attempts.append(address)
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", record)
    assert main(["replay", str(run_dir), "--rerun", "--root", str(harness), "-q"]) == 1
    rerun = json_report(printed_paths(capsys.readouterr().out))
    assert main(["replay", str(run_dir), "--root", str(harness), "-q"]) == 1
    rendered = json_report(printed_paths(capsys.readouterr().out))
    assert not [a for a in attempts if isinstance(a, tuple) and a[1:2] == (port,)]

    def essence(data: dict[str, Any]) -> dict[str, Any]:
        return {
            "findings": sorted((f["fingerprint"], f["check"], f["line"], f["verdict"]) for f in data["findings"]),
            "outcomes": [(o["id"], o["status"], o["usage"], o["rejection_count"]) for o in data["outcomes"]],
            "refusals": data["meta"]["refusals_by_reason"],
            "usage": data["meta"]["usage"],
            "recon_usage": data["meta"]["recon_usage"],
            "state": data["meta"]["state"],
            "cost": (data["meta"]["cost_usd"], [o["cost_usd"] for o in data["outcomes"]]),
        }

    assert essence(original)["refusals"]["evidence-not-found"] == 1
    assert essence(original)["outcomes"][1][2]["known"] is False
    c1_usage = (C1_USAGE[0], C1_USAGE[1], C1_USAGE[1], C1_USAGE[2])
    assert essence(original)["cost"] == (None, [round(dollars(PRICE, *c1_usage), 6), None])  # C12: unknown
    assert essence(rerun) == essence(original)
    assert essence(rendered) == essence(original)


# ============================================================================ 14. hybrid

def test_hybrid_hands_static_leads_to_the_check_and_skips_recon(harness: Path, out: Path) -> None:
    script = {"C1": [tool_step(call("f1", "report_finding", finding())), reply(text="Confirmed the lead.")]}
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1"], out, engine="hybrid")
    assert_clean(server)
    assert keys(server) == ["C1", "C1"]  # no recon request: static recon found every required landmark
    task = first_user_text(requests_for(server, "C1")[0])
    assert "\n## Leads from the static rules\n" in task
    assert '- C1-1 · "agent/loop.py" line 27 [confirmed] rule static:C1/except-continue-skips-result: "' in task
    assert "## Landmarks recon found for this check\n- tool-execution at \"agent/loop.py\" line" in task
    assert "  function run_agent, lines 12-29\n  ```python\n     12\tdef run_agent(task: str) -> str:" in task
    r = run.report
    assert "Static recon found every required landmark; no recon subagent ran." in r.meta.notes
    assert [(f.check, f.source) for f in r.findings] == [(CheckId.C1, "llm:C1")]
    assert [o.status_text for o in r.outcomes] == ["ran"]
    assert r.recon_usage is None  # static recon: no recon unit, no recon row in the Cost section
    assert "| recon |" not in markdown_report(run)
    assert [(lead.lead_id, lead.status.value) for lead in r.leads] == [("C1-1", "confirmed")]
    rendered, _ = rerender(Path(r.meta.ledger or "").parent, root=harness, write=False)
    assert rendered.recon_usage is None
    assert [f.fingerprint for f in rendered.findings] == [f.fingerprint for f in r.findings]
    assert rendered.leads == r.leads


def test_a_lazy_hybrid_model_drops_no_lead_they_keep_their_static_verdict(
        harness: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 15: a hybrid run whose model only answers "Done." reported 0 findings, state complete, exit 0."""
    with ScriptedOpenAI({"C1": [reply(text="Done.")]}) as server:
        code = main(cli_args(server, harness, "C1", out, "--engine", "hybrid"))
    paths = printed_paths(capsys.readouterr().out)
    assert code == 1
    data = json_report(paths)
    assert [(f["check"], f["verdict"], f["source"]) for f in data["findings"]] == [
        ("C1", "confirmed", "static:C1/except-continue-skips-result")]
    assert [(lead["id"], lead["status"], lead["static_verdict"]) for lead in data["leads"]] == [
        ("C1-1", "unaddressed", "confirmed")]
    md = markdown_report(paths)
    assert "## Static leads" in md and "1 unaddressed" in md
    sarif = json.loads(next(p for p in paths if p.suffix == ".sarif").read_text(encoding="utf-8")) \
        if any(p.suffix == ".sarif" for p in paths) else None
    assert sarif is None  # cli_args asks for md and json only


def test_a_dismissed_lead_is_listed_with_the_models_reason_in_every_format(harness: Path, out: Path) -> None:
    """Issue 15: a lead the model declined left no trace, so injected text could suppress findings."""
    reason = "the except branch re-raises after logging, so the call still gets its error result"
    script = {"C1": [tool_step(call("d0", "dismiss_lead", {"lead": "C1-1", "reason": "wrong"}),
                               call("d1", "dismiss_lead", {"lead": "C9-4", "reason": reason}),
                               call("d2", "dismiss_lead", {"lead": "C1-1", "reason": reason})),
                     reply(text="Done.")]}
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1"], out, engine="hybrid", formats=["md", "json", "sarif"])
    assert_clean(server)
    results = tool_results(requests_for(server, "C1")[1])
    assert results["d0"].startswith("Not accepted: say in a sentence")
    assert results["d1"].startswith("Not accepted: 'C9-4' is not one of your leads (C1-1)")
    assert results["d2"] == "Dismissed C1-1; the report lists it with your reason."
    r = run.report
    assert r.findings == ()
    assert [(lead.lead_id, lead.status.value, lead.reason, lead.by) for lead in r.leads] == [
        ("C1-1", "dismissed", reason, "llm:C1")]
    assert json_report(run)["leads"][0]["reason"] == reason
    assert reason in markdown_report(run)
    (sarif_path,) = [p for p in run.paths if p.suffix == ".sarif"]
    (result,) = json.loads(sarif_path.read_text(encoding="utf-8"))["runs"][0]["results"]
    assert result["suppressions"] == [{"kind": "external", "status": "accepted", "justification": reason}]
    rendered, _ = rerender(Path(r.meta.ledger or "").parent, root=harness, write=False)
    assert rendered.leads == r.leads


def test_hybrid_asks_recon_only_for_the_landmarks_static_recon_missed(harness: Path, out: Path) -> None:
    script = {"recon": [reply(text="No retry anywhere.")], "C1": c1_steps()}
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1", "C9"], out, engine="hybrid")
    assert_clean(server)
    recon_task = first_user_text(requests_for(server, "recon")[0])
    asked = re.findall(r"^- ([a-z-]+):", recon_task, flags=re.M)
    assert asked == ["retry", "http-call"]
    assert [o.status_text for o in run.report.outcomes] == ["ran", "not-covered"]
    assert "C9" not in keys(server)


# ============================================================================ 15. cross-check analysis

ANALYSIS_USAGE = usage(300, 40, cached=200)
ANALYSIS = "Fix C1 first: a failed tool leaves the call unanswered, and the endless loop (C12) retries it forever."


def test_cross_check_analysis_is_asked_last_and_marked_as_unvalidated(
        harness: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = {
        "recon": recon_steps("tool-execution", "agent-loop", usages=RECON_USAGE),
        "C1": c1_steps(),
        "C12": c12_steps(),
        "default": [reply(text=ANALYSIS, usage=ANALYSIS_USAGE)],  # the analysis unit's key
    }
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1", "C12"], out, cross_check_analysis=True)
    assert_clean(server)
    assert keys(server)[-1] == "default"
    assert keys(server).count("default") == 1
    analysis = requests_for(server, "default")[0]
    task = first_user_text(analysis)
    assert task.startswith("Cross-check analysis\n")
    assert "- C1 confirmed agent/loop.py:27: C1: a defect the model found" in task
    assert "- C12 confirmed agent/loop.py:17: C12: a defect the model found" in task
    c1 = requests_for(server, "C1")[0]
    assert messages_of(analysis)[0] == messages_of(c1)[0]
    assert json.dumps(analysis["tools"], sort_keys=True) == json.dumps(c1["tools"], sort_keys=True)

    r = run.report
    assert r.analysis == ANALYSIS
    assert r.analysis_usage == total(ANALYSIS_USAGE)
    assert r.total_usage == total(*RECON_USAGE, *C1_USAGE, *C12_USAGE, ANALYSIS_USAGE)
    assert len(r.findings) == 2  # nothing in the analysis is a finding
    md = markdown_report(run)
    heading = "## Cross-check analysis (model inference — not validated by evidence)"
    assert heading in md
    assert ANALYSIS in md.split(heading, 1)[1]
    assert ANALYSIS not in md.split(heading, 1)[0]
    assert json_report(run)["analysis"] == {"text": ANALYSIS, "validated": False}

    # the analysis survives a re-render and a re-run from the ledger
    run_dir = Path(r.meta.ledger or "").parent
    for argv in (["replay", str(run_dir), "--root", str(harness), "-q"],
                 ["replay", str(run_dir), "--rerun", "--root", str(harness), "-q"]):
        assert main(argv) == 1
        data = json_report(printed_paths(capsys.readouterr().out))
        assert data["analysis"] == {"text": ANALYSIS, "validated": False}
        assert data["meta"]["analysis_usage"] == json_report(run)["meta"]["analysis_usage"]
        assert data["meta"]["usage"] == json_report(run)["meta"]["usage"]


# ============================================================================ 16. money

def test_the_cost_section_prices_the_scripted_usage(harness: Path, out: Path) -> None:
    script = {"recon": recon_steps("tool-execution", usages=RECON_USAGE), "C1": c1_steps()}
    with ScriptedOpenAI(script) as server:
        run = audit_over(server, harness, ["C1"], out, prices={"openai:m": PRICE})
    assert_clean(server)
    recon_cost, c1_cost = dollars(PRICE, *RECON_USAGE), dollars(PRICE, *C1_USAGE)
    # recon: 1000 fresh, 700 cached, 43 out; C1: 1100 fresh, 3100 cached, 135 out
    assert recon_cost == pytest.approx(0.002694)
    assert c1_cost == pytest.approx(0.00483)
    data = json_report(run)
    assert data["meta"]["cost_usd"] == pytest.approx(recon_cost + c1_cost, abs=1e-9)
    assert data["meta"]["cost_usd"] == 0.007524
    assert json_outcome(data, "C1")["cost_usd"] == 0.00483
    md = markdown_report(run)
    cost_section = md.split("## Cost", 1)[1]
    assert " · $0.0075" in cost_section.splitlines()[2]
    (c1_row,) = [line for line in cost_section.splitlines() if line.startswith("| C1 |")]
    assert "| $0.0048 |" in c1_row
    (recon_row,) = [line for line in cost_section.splitlines() if line.startswith("| recon |")]
    assert "| $0.0027 |" in recon_row
