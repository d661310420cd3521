"""`harness-audit bench CORPUS`: detection and false positives per check, beside the semgrep baseline."""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
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
from harness_audit.messages import t


def make_parser(lang: str = "en") -> argparse.ArgumentParser:
    """Parser of `harness-audit bench`, its help in `lang`."""
    from harness_audit.cli import ArgParser

    def h(key: str) -> str:
        return t(f"help.bench.{key}", lang)

    p = ArgParser(prog="harness-audit bench", lang=lang, description=h("description"))
    p.add_argument("corpus", help=h("corpus"))
    p.add_argument("--semgrep-config", metavar="YML", help=h("semgrep_config"))
    p.add_argument("--semgrep-json", metavar="DIR", help=h("semgrep_json"))
    p.add_argument("--format", choices=["text", "json"], default="text", help=t("help.format_text_json", lang))
    p.add_argument("--json", dest="as_json", action="store_true", help=argparse.SUPPRESS)  # older spelling
    p.add_argument("--min-detection", type=float, default=None, metavar="R", help=h("min_detection"))
    p.add_argument("--max-false-positives", type=int, default=None, metavar="N", help=h("max_false_positives"))
    real = p.add_argument_group(h("real"))
    real.add_argument("--trees", metavar="DIR", help=h("trees"))
    real.add_argument("--split", choices=("study", "heldout", "all"), default="all", help=h("split"))
    real.add_argument("--draw", type=int, default=None, metavar="N", help=h("draw"))
    real.add_argument("--case", dest="only", action="append", default=[], metavar="ID", help=h("case"))
    real.add_argument("--compare", action="append", default=[], metavar="NAME=EXE", help=h("compare"))
    real.add_argument("--reports", action="append", default=[], metavar="NAME=DIR", help=h("reports"))
    real.add_argument("--semgrep", metavar="EXE", help=h("semgrep"))
    real.add_argument("--results", metavar="FILE", help=h("results"))
    p.add_argument("--preview", action="store_true", help=h("preview"))
    return p


def _recorded(corpus: Path, folder: Path, projects: list[str]) -> EngineRun:
    run = EngineRun(name="semgrep baseline")
    for project in projects:
        path = folder / f"{project}.json"
        if not path.is_file():
            raise UsageError("err.bench.no_recorded", path=str(path), project=project)
        run.hits.extend(semgrep_hits(project, json.loads(path.read_text(encoding="utf-8")),
                                     (corpus / project).resolve()))
    return run


def run(ns: argparse.Namespace) -> int:
    """Run and print the benchmark."""
    corpus = Path(ns.corpus)
    if corpus.suffix == ".json":
        return _run_realbugs(ns, corpus)
    if not corpus.is_dir():
        raise UsageError("err.bench.corpus_not_dir", corpus=ns.corpus)
    key = load_answers(corpus)
    scores: list[Score] = [score(run_engine(corpus, key, preview=ns.preview), key)]
    if ns.semgrep_json:
        scores.append(score(_recorded(corpus, Path(ns.semgrep_json), key.projects), key))
    elif ns.semgrep_config:
        exe = find_semgrep()
        if exe is None:
            raise UsageError("err.bench.no_semgrep", alternative="--semgrep-json")
        scores.append(score(run_semgrep(corpus, key, Path(ns.semgrep_config), exe), key))
    ours = scores[0]
    if ns.as_json or ns.format == "json":
        print(json.dumps([{
            "engine": s.engine, "detection": s.detection, "detected": s.detected, "defects": s.defects,
            "false_positives": len(s.false_positives), "refusals": s.refusals, "seconds": s.seconds,
            "tokens": s.tokens, "unmatched": len(s.unmatched),
            "per_check": [asdict(c) for c in s.per_check],
            "missed": [d.model_dump(mode="json") for d in s.missed],
            "found": [{**d.model_dump(mode="json"), "sources": list(sources)} for d, sources in s.found],
            "false_positive_hits": [{"project": c.project, "file": h.file, "line": h.line, "check": h.check.value,
                                     "source": h.source, "control": c.note} for c, h in s.false_positives],
        } for s in scores], indent=2))
    else:
        lang = ns.lang
        print("\n".join(score_table(scores, lang)))
        for d in ours.missed:
            print(f"{t('bench.missed', lang)} {d.check.value:>3} {d.project}/{d.file}:{d.lines}  {d.note}")
        for c, h in ours.false_positives:
            print(f"{t('bench.false_positive', lang)} {h.check.value:>3} {c.project}/{h.file}:{h.line}  ({h.source}) "
                  f"{t('bench.control', lang)}: {c.note}")
        for h in ours.unmatched:
            print(f"{t('bench.outside', lang)} {h.check.value:>3} {h.project}/{h.file}:{h.line}  ({h.source})")
    failed = (ns.min_detection is not None and ours.detection < ns.min_detection) or (
        ns.max_false_positives is not None and len(ours.false_positives) > ns.max_false_positives)
    return 1 if failed else 0


def _run_realbugs(ns: argparse.Namespace, path: Path) -> int:
    import shutil
    import sys

    from harness_audit.bench import realbugs as rb

    if not ns.trees:
        raise UsageError("err.bench.needs_trees")
    cases = [c for c in rb.load_cases(path) if (ns.split == "all" or c.split == ns.split)
             and (ns.draw is None or c.draw == ns.draw) and (not ns.only or c.id in ns.only)]
    if not cases:
        raise UsageError("err.bench.no_case")
    own = rb.HarnessAuditEngine(exe=_own_exe(sys.executable), extra=("--preview",) if ns.preview else ())
    if ns.preview:
        own.name = "harness-audit --preview"
    engines: list[rb.Engine] = [own]
    for spec in ns.compare:
        name, sep, command = spec.partition("=")
        try:
            exe, *args = shlex.split(command)
        except ValueError:
            exe, args = "", []
        if not sep or not name or not Path(exe).is_file():
            raise UsageError("err.bench.bad_compare", spec=spec)
        engines.append(rb.HarnessAuditEngine(exe=exe, name=name, extra=tuple(args)))
    trees = Path(ns.trees)
    for spec in ns.reports:
        name, sep, folder = spec.partition("=")
        if not sep or not name or not Path(folder).is_dir():
            raise UsageError("err.bench.bad_reports", spec=spec)
        engines.append(rb.ReportsEngine(folder=Path(folder), name=name))
    if ns.semgrep_config:
        exe = ns.semgrep or shutil.which("semgrep")
        if not exe:
            raise UsageError("err.bench.no_semgrep", alternative="--semgrep EXE")
        engines.append(rb.SemgrepEngine(exe=exe, config=Path(ns.semgrep_config)))
    results: list[rb.CaseResult] = []
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(Path(ns.results).open("w", encoding="utf-8")) if ns.results else None
        for case in cases:
            for engine in engines:
                r = rb.run_case(case, engine, trees)
                results.append(r)
                mark = t("bench.detected" if r.detected else "bench.case_error" if r.error else "bench.case_missed",
                         ns.lang)
                print(f"{case.id:<28} {case.check.value:>3} {engine.name[:18]:<18} {mark}"
                      f"{t('bench.still_at_fix', ns.lang) if r.still_flagged else ''}"
                      f"{t('bench.fix_not_audited', ns.lang) if r.fix_unaudited else ''}"
                      f"{(': ' + r.error) if r.error else ''}", file=sys.stderr, flush=True)
                if out:
                    out.write(json.dumps({"case": case.id, "split": case.split, "language": case.language,
                                          "check": case.check.value, "engine": r.engine, "detected": r.detected,
                                          "still_flagged": r.still_flagged, "fix_unaudited": r.fix_unaudited,
                                          "error": r.error,
                                          "seconds": round(r.seconds, 2), "recon": r.recon,
                                          "pre_flags": [asdict(f) for f in r.pre_flags]}) + "\n")
    if ns.as_json or ns.format == "json":
        print(json.dumps({e.name: {f"{lang} {split}": asdict(rb.tally(
            r for r in results if r.engine == e.name and r.case.split == split
            and (lang == "all" or r.case.lang_group == lang)))
            for lang in ("python", "ts/js", "all") for split in ("study", "heldout")} for e in engines}, indent=2))
    else:
        print("\n".join(rb.table(results, [e.name for e in engines], ns.lang)))
    return 0


def _own_exe(python: str) -> str:
    """The harness-audit script beside this interpreter (the engine under test)."""
    exe = Path(python).with_name("harness-audit")
    if not exe.is_file():
        raise UsageError("err.bench.no_exe", python=python)
    return str(exe)
