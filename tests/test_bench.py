"""The benchmark: our engine on the visible corpus, and scoring of recorded semgrep output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness_audit.bench import AnswerKey, Control, Defect, EngineRun, Hit, load_answers, run_engine, score
from harness_audit.cli import main
from harness_audit.errors import UsageError
from harness_audit.findings import CheckId, Verdict

CORPUS = Path(__file__).parent / "bench_corpus"
TUNED_CORPORA = [CORPUS, *(CORPUS.with_name(f"bench_corpus_ts{n}") for n in ("", "_holdout", "_holdout2", "_holdout3",
                                                                              "_holdout4"))]
"""The corpora the rules were developed against: Python; TS/JS; four blind TS/JS sets, each studied in a later round
after it had measured the round before."""
HELD_OUT = [CORPUS.with_name(n) for n in ("bench_corpus_ts_holdout5", "bench_corpus_py_holdout")]
"""Never studied: the held-out measurements of the TS/JS and the Python engines, run by hand (their numbers are in
benchmarks/README.md), checked here only for a valid answer key."""


@pytest.mark.parametrize("corpus", [*TUNED_CORPORA, *HELD_OUT], ids=lambda p: p.name)
def test_answer_key_loads_and_names_every_check(corpus: Path) -> None:
    key = load_answers(corpus)
    assert {d.check for d in key.defects} == set(CheckId)
    assert key.controls
    if corpus in TUNED_CORPORA[:2]:  # the visible corpora hold a control for every check; later sets most checks
        assert {c for ctl in key.controls for c in ctl.checks} == set(CheckId)
    for project in key.projects:
        assert (corpus / project).is_dir()


DETECTED = {"bench_corpus": 74, "bench_corpus_ts": 59, "bench_corpus_ts_holdout": 56, "bench_corpus_ts_holdout2": 48,
            "bench_corpus_ts_holdout3": 52, "bench_corpus_ts_holdout4": 53}
"""Planted defects the default engine finds in each tuned corpus (of 98, 70, 62, 53, 62, 65). These corpora shaped
the rules, so their detection says little about real code (issue 11) and is no bar: it was 90-100% until the 62
rules that fired on none of 109 real trees were deleted (benchmarks/README.md, "What each rule and query
contributes"). It is held here so that a change which loses a defect says so; 0 control false positives is the
bar."""


@pytest.mark.parametrize("corpus", TUNED_CORPORA, ids=lambda p: p.name)
def test_engine_keeps_its_detections_and_no_false_positive_on_the_corpus(corpus: Path) -> None:
    key = load_answers(corpus)
    run = run_engine(corpus, key)
    s = score(run, key)
    missed = "\n".join(f"{d.check} {d.project}/{d.file}:{d.lines} {d.note}" for d in s.missed)
    assert s.detected >= DETECTED[corpus.name], f"detected {s.detected} of {s.defects}; missed:\n{missed}"
    assert not s.false_positives, [(c.note, h) for c, h in s.false_positives]


def test_scoring_matches_windows_and_counts_control_hits() -> None:
    key = AnswerKey(
        defects=[Defect(project="p", check=CheckId.C1, file="a.py", lines=(10, 12)),
                 Defect(project="p", check=CheckId.C9, file="a.py", lines=(30, 31))],
        controls=[Control(project="p", file="b.py", lines=(1, 20), checks=[CheckId.C1])],
    )
    run = EngineRun(name="x", hits=[
        Hit("p", CheckId.C1, "a.py", 11, Verdict.CONFIRMED, "r"),
        Hit("p", CheckId.C1, "b.py", 5, Verdict.CONFIRMED, "r"),
        Hit("p", CheckId.C9, "a.py", 40, Verdict.CONFIRMED, "r"),
    ])
    s = score(run, key)
    assert (s.detected, s.defects, len(s.false_positives), len(s.unmatched)) == (1, 2, 1, 1)
    # each detection names the sources it rests on, so a rule's worth on a corpus can be read off
    assert [(d.check, sources) for d, sources in s.found] == [(CheckId.C1, ("r",))]


def test_bench_cli_scores_recorded_semgrep_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "proj").mkdir(parents=True)
    fixture = Path(__file__).parent / "fixtures" / "rules" / "c12_loop_budget" / "python" / "defect_while_true.py"
    (corpus / "proj" / "loop.py").write_text(fixture.read_text())
    (corpus / "answers.json").write_text(json.dumps({
        "defects": [{"project": "proj", "check": "C12", "file": "loop.py", "lines": [7, 8]}],
        "controls": [{"project": "proj", "file": "loop.py", "lines": [7, 8], "checks": ["C9"]}],
    }))
    rec = tmp_path / "sg"
    rec.mkdir()
    (rec / "proj.json").write_text(json.dumps({"results": [
        {"check_id": "shared.baselines.C9", "path": str((corpus / "proj" / "loop.py").resolve()),
         "start": {"line": 8}},
    ]}))
    assert main(["bench", str(corpus), "--semgrep-json", str(rec), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert [s["engine"] for s in scores] == ["harness-audit", "semgrep baseline"]
    assert scores[0]["detected"] == 1 and scores[1]["false_positives"] == 1
    assert [(f["file"], [x.split("/")[0] for x in f["sources"]]) for f in scores[0]["found"]] == [
        ("loop.py", ["static:C12"])]
    assert [(h["check"], h["source"]) for h in scores[1]["false_positive_hits"]] == [
        ("C9", "semgrep:shared.baselines.C9")]


def test_missing_answer_key_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        load_answers(tmp_path)


@pytest.mark.parametrize("corpus", TUNED_CORPORA, ids=lambda p: p.name)
def test_every_corpus_finding_revalidates_through_the_gate(corpus: Path) -> None:
    from harness_audit.api import audit
    from tests.test_pipeline import revalidate

    for project in load_answers(corpus).projects:
        rep = audit(corpus / project, ["all"], overrides={"cache": False}, write=False).report
        assert rep.refusals == (), [r.message for r in rep.refusals]
        assert not revalidate(corpus / project, rep.findings, tuple(CheckId))
