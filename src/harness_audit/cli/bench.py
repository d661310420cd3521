"""`harness-audit bench CORPUS`: detection and false positives per check, beside the semgrep baseline."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from harness_audit.bench import (
    EngineRun,
    Score,
    find_semgrep,
    load_answers,
    run_engine,
    run_semgrep,
    score,
    score_table,
    semgrep_hits,
)
from harness_audit.errors import UsageError


def make_parser() -> argparse.ArgumentParser:
    """Parser of `harness-audit bench`."""
    from harness_audit.cli import ArgParser

    p = ArgParser(prog="harness-audit bench",
                  description="Score the static engine against a corpus with an answer key (answers*.json).")
    p.add_argument("corpus", help="directory with one folder per project and answers.json beside them")
    p.add_argument("--semgrep-config", metavar="YML", help="also run semgrep with this ruleset and score it")
    p.add_argument("--semgrep-json", metavar="DIR",
                   help="score recorded semgrep output instead of running it: DIR/<project>.json per project")
    p.add_argument("--json", dest="as_json", action="store_true", help="print the scores as JSON")
    p.add_argument("--min-detection", type=float, default=None, metavar="R", help="exit 1 below this detection rate")
    p.add_argument("--max-false-positives", type=int, default=None, metavar="N", help="exit 1 above this many")
    return p


def _recorded(corpus: Path, folder: Path, projects: list[str]) -> EngineRun:
    run = EngineRun(name="semgrep baseline")
    for project in projects:
        path = folder / f"{project}.json"
        if not path.is_file():
            raise UsageError(f"no recorded semgrep output {str(path)!r} for project {project!r}")
        run.hits.extend(semgrep_hits(project, json.loads(path.read_text(encoding="utf-8")),
                                     (corpus / project).resolve()))
    return run


def run(ns: argparse.Namespace) -> int:
    """Run and print the benchmark."""
    corpus = Path(ns.corpus)
    if not corpus.is_dir():
        raise UsageError(f"corpus {ns.corpus!r} is not a directory")
    key = load_answers(corpus)
    scores: list[Score] = [score(run_engine(corpus, key), key)]
    if ns.semgrep_json:
        scores.append(score(_recorded(corpus, Path(ns.semgrep_json), key.projects), key))
    elif ns.semgrep_config:
        exe = find_semgrep()
        if exe is None:
            raise UsageError("semgrep is not installed; `pip install semgrep` or pass --semgrep-json")
        scores.append(score(run_semgrep(corpus, key, Path(ns.semgrep_config), exe), key))
    ours = scores[0]
    if ns.as_json:
        print(json.dumps([{
            "engine": s.engine, "detection": s.detection, "detected": s.detected, "defects": s.defects,
            "false_positives": len(s.false_positives), "refusals": s.refusals, "seconds": s.seconds,
            "tokens": s.tokens, "unmatched": len(s.unmatched),
            "per_check": [asdict(c) for c in s.per_check],
            "missed": [d.model_dump(mode="json") for d in s.missed],
        } for s in scores], indent=2))
    else:
        print("\n".join(score_table(scores)))
        for d in ours.missed:
            print(f"missed   {d.check.value:>3} {d.project}/{d.file}:{d.lines}  {d.note}")
        for c, h in ours.false_positives:
            print(f"false+   {h.check.value:>3} {c.project}/{h.file}:{h.line}  ({h.source}) control: {c.note}")
        for h in ours.unmatched:
            print(f"outside  {h.check.value:>3} {h.project}/{h.file}:{h.line}  ({h.source})")
    failed = (ns.min_detection is not None and ours.detection < ns.min_detection) or (
        ns.max_false_positives is not None and len(ours.false_positives) > ns.max_false_positives)
    return 1 if failed else 0
