"""One complete host-model run, shared by the shell-verb and the MCP tests: the same calls through either face.

The tree is the model-engine tests' small loop (a true C1 defect, an unbounded C12 loop, no truncation so C13
is not covered), two levels below `tmp_path`, with a real file outside it at `../../etc/passwd`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from tests.llm.conftest import C1_EVIDENCE, C12_EVIDENCE, LOOP_PY, PASSWD_MARKER, TOOLS_PY

SELECTION = "C1,C12,C13"


def make_workspace(tmp_path: Path) -> Path:
    """The audited tree; `../../etc/passwd` from its root is a real file outside it."""
    root = tmp_path / "home" / "ws"
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "__init__.py").write_text("", encoding="utf-8")
    (root / "agent" / "loop.py").write_text(LOOP_PY, encoding="utf-8")
    (root / "agent" / "tools.py").write_text(TOOLS_PY, encoding="utf-8")
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "passwd").write_text(PASSWD_MARKER + "\n", encoding="utf-8")
    return root


def _finding(check: str, line: int, evidence: str, **extra: Any) -> dict[str, Any]:
    args: dict[str, Any] = {"check": check, "verdict": "confirmed", "file": "agent/loop.py", "line": line,
                            "evidence": evidence, "claim": f"{check}: a defect the host found",
                            "consequence": "the next request is rejected by the provider"}
    args.update(extra)
    return args


@dataclass(frozen=True)
class Call:
    """One protocol call and what must come of it."""

    step: str
    """`landmark`, `next`, `report`, `dismiss`, `finish` or `status`."""
    args: dict[str, Any] = field(default_factory=dict[str, Any])
    """The step's arguments, named as `harness_audit.host` names them."""
    accepted: bool = True
    """Whether the call must be accepted."""
    says: str = ""
    """Text the answer must contain (a refusal reason, the next check)."""


_NOT_STREAM_PARSE = "line 21 only tests whether the reply asked for tools; the SDK decodes the reply"

FIRST_HALF = (
    Call("landmark", {"kind": "history-append", "file": "agent/loop.py", "line": 29, "symbol": "run_agent",
                      "confidence": "high"}, says="Accepted: history-append at agent/loop.py:29"),
    Call("landmark", {"kind": "scheduler", "file": "agent/loop.py", "line": 17}, accepted=False, says="bad-verdict"),
    Call("dismiss-landmark", {"kind": "stream-parse", "file": "agent/loop.py", "line": 21,
                              "reason": _NOT_STREAM_PARSE}, says="Dismissed the stream-parse landmark at agent/loop.py:21"),
    Call("dismiss-landmark", {"kind": "retry", "file": "agent/loop.py", "line": 17, "reason": _NOT_STREAM_PARSE},
         accepted=False, says="no 'retry' landmark at agent/loop.py:17 is in use"),
    Call("next", says="# C1 · Tool-call pairing completeness"),
    Call("report", _finding("C1", 28, C1_EVIDENCE, lead="C1-1"), says="Accepted: C1 confirmed at agent/loop.py:28"),
    Call("report", _finding("C1", 28, "except Exception:\n    log_and_forget(call)\n    continue"), accepted=False,
         says="evidence-not-found"),
    Call("report", _finding("C1", 1, PASSWD_MARKER, file="../../etc/passwd"), accepted=False,
         says="file-outside-workspace"),
    Call("report", _finding("C1", 28, C1_EVIDENCE, verdict="suspected"), accepted=False, says="missing-confirm-hint"),
)
"""Recon and C1: a landmark accepted and one refused, a static landmark dismissed and an unknown one not; a valid
finding, a fabricated one, an outside path and a suspected finding without a hint."""

SECOND_HALF = (
    Call("status", says="phase: checking C1"),
    Call("next", says="# C12 · Loop and budget limits"),
    Call("dismiss", {"lead": "C12-1", "reason": "the caller wraps run_agent in a watchdog that bounds it"},
         says="Dismissed C12-1"),
    Call("report", _finding("C12", 17, C12_EVIDENCE, verdict="suspected",
                            confirm_hint="whether the caller of run_agent bounds the number of turns"),
         says="Accepted: C12 suspected at agent/loop.py:17"),
    Call("next", says="C13 not covered"),
    Call("finish", says="finished:"),
)
"""After the restart: C12 with a lead dismissed and a suspected finding, C13 not covered, finish."""


def assert_host_report(report_json: Path, cli_json: Path) -> dict[str, Any]:
    """The finished run's JSON report: what the scenario put in it, in the same schema as a CLI run's report."""
    data = json.loads(report_json.read_text(encoding="utf-8"))
    cli = json.loads(cli_json.read_text(encoding="utf-8"))
    same_shape(data, cli)
    meta = data["meta"]
    assert meta["engine"] == "host" and meta["state"] == "complete"
    assert meta["usage"]["known"] is False, "the host's tokens are unknown, never zero"
    assert [(f["check"], f["verdict"], f["line"]) for f in data["findings"]] == [
        ("C1", "confirmed", 28), ("C12", "suspected", 17)]
    assert {o["id"]: o["status"] for o in data["outcomes"]} == {"C1": "ran", "C12": "ran", "C13": "not-covered"}
    refused = {reason: n for reason, n in meta["refusals_by_reason"].items() if n}
    assert refused == {"bad-verdict": 1, "evidence-not-found": 1, "file-outside-workspace": 1,
                       "missing-confirm-hint": 1}
    # each finding names the lead it settled: C1's confirmed C1-1; C12's stands beside the lead it dismissed
    assert [f["lead"] for f in data["findings"]] == ["C1-1", None]
    schema = json.loads(resources.files("harness_audit.render").joinpath("report.schema.json").read_text())
    jsonschema.validate(data, schema)
    leads = {lead["id"]: lead for lead in data["leads"]}
    assert {k: v["status"] for k, v in leads.items()} == {"C1-1": "confirmed", "C12-1": "dismissed"}
    assert "watchdog" in leads["C12-1"]["reason"]
    assert data["dismissed_landmarks"] == [{
        "kind": "stream-parse", "file": "agent/loop.py", "line": 21, "symbol": "run_agent", "confidence": "low",
        "language": "python", "source": "static:recon", "reason": _NOT_STREAM_PARSE, "dismissed_by": "host:recon"}]
    assert ("stream-parse", 21) not in {(lm["kind"], lm["line"]) for lm in data["landmarks"]}
    assert PASSWD_MARKER not in report_json.read_text(encoding="utf-8")
    return data


def same_shape(a: Any, b: Any, where: str = "$") -> None:
    """Assert two JSON documents have the same keys at every level (a list's items compared when both have some)."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert set(a) == set(b), f"{where}: keys differ: {sorted(set(a) ^ set(b))}"  # pyright: ignore
        for key in a:  # pyright: ignore[reportUnknownVariableType]
            same_shape(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        if a and b:
            same_shape(a[0], b[0], f"{where}[0]")
    elif a is not None and b is not None:  # a nullable field (recon usage of a static run) may be null on one side
        assert isinstance(a, dict | list) == isinstance(b, dict | list), f"{where}: one is a container, one is not"
