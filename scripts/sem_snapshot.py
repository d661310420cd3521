"""What the semantic layer reports on some trees, as one canonical JSON: the yardstick of a speed change.

    python scripts/sem_snapshot.py TREE… --out before.json            # record
    python scripts/sem_snapshot.py TREE… --compare before.json        # exit 1 and list the differences

For each tree it runs what `--preview` runs (`SemProject.build`, `landmarks`, `run_queries` for all fifteen
checks) over the files discovery finds with the default excludes, and records every candidate (check, rule,
file, line, verdict, also_at, evidence, claim), every landmark (kind, file, line, symbol, confidence,
evidence), every query error, every file not lowered whole and a digest of each module's IR. A change that makes the layer faster or leaner
must leave this output identical; one that changes it is a detection change, not a speed change.

Entries are sorted: the order the layer produces them in is not stable from one process to the next (value sets
iterate in hash order, and string hashes are salted per process), and the report sorts them anyway. Compare
snapshots taken under the same `PYTHONHASHSEED`, and under a second seed before calling a difference real.

`--fixtures` adds every directory of fixtures under `tests/fixtures/sem` and `tests/fixtures/rules` (each
fixture file as a tree of its own would be slow; each check's directory is one tree) and `examples/agent_loop`.
`--exclude ""` audits excluded directories too (published packages keep code under `dist/`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def snapshot(tree: Path, excludes: tuple[str, ...] | None) -> dict[str, Any]:
    """The layer's output on one tree, as plain data."""
    from harness_audit.catalogue import CHECKS
    from harness_audit.static import no_gc_pauses
    from harness_audit.static.sem.engine import SemProject, landmarks, run_queries
    from harness_audit.workspace import Workspace

    ws = Workspace.open(tree) if excludes is None else Workspace.open(tree, excludes=excludes)
    files = ws.discover().files
    checks = list(CHECKS)
    with no_gc_pauses():
        project = SemProject.build(ws, files)
        marks = landmarks(project)
        candidates, errors = run_queries(project, checks)
    return {
        "candidates": sorted((
            {"check": str(c.check), "rule": c.source, "file": c.file, "line": c.line, "verdict": str(c.verdict),
             "also_at": list(c.also_at), "evidence": c.evidence, "claim": c.claim}
            for check in checks for c in candidates.get(check, [])), key=_order),
        "landmarks": sorted((
            {"kind": str(m.kind), "file": m.file, "line": m.line, "symbol": m.symbol, "confidence": m.confidence,
             "evidence": m.evidence}
            for m in marks), key=_order),
        "errors": {str(k): v for k, v in sorted(errors.items())},
        "unlowered": [[u.path, u.reason, u.partial] for u in project.unlowered],
        "ir": ir_digest(project),
    }


def ir_digest(project: Any) -> dict[str, str]:
    """A digest of every module's IR (every slot of every node, function, class and import, recursively): two
    front ends that lower a tree to the same digests lowered it to the same IR."""
    out: dict[str, str] = {}
    for mod in project.modules:
        h = hashlib.sha256()
        _dump(h, {}, mod)
        out[mod.path] = h.hexdigest()
    return out


def _dump(h: Any, seen: dict[int, int], x: object) -> None:
    from harness_audit.static.sem import ir

    if isinstance(x, ir.Module | ir.Function | ir.Class) and id(x) in seen:
        h.update(f"<ref {type(x).__name__} {seen[id(x)]}>".encode())
    elif isinstance(x, ir.Node | ir.Function | ir.Class | ir.Param | ir.Import | ir.Module):
        if isinstance(x, ir.Module | ir.Function | ir.Class):
            seen[id(x)] = len(seen)
        h.update(f"({type(x).__name__}".encode())
        slots = {sl for cls in type(x).__mro__ for sl in getattr(cls, "__slots__", ())}
        for sl in sorted(slots, key=lambda name: name.lstrip("_")):
            if sl in ("_lines", "text", "nodes", "index"):
                continue  # caches and the source text, not the model
            h.update(f" {sl.lstrip('_')}=".encode())
            _dump(h, seen, getattr(x, sl, None))
        h.update(b")")
    elif isinstance(x, list | tuple):
        h.update(b"[")
        for item in x:
            _dump(h, seen, item)
            h.update(b",")
        h.update(b"]")
    elif isinstance(x, dict):
        h.update(b"{")
        for k, v in x.items():
            _dump(h, seen, k)
            h.update(b":")
            _dump(h, seen, v)
            h.update(b",")
        h.update(b"}")
    else:
        h.update(repr(x).encode())


def _order(entry: dict[str, Any]) -> str:
    return json.dumps(entry, sort_keys=True)


def fixture_trees() -> list[Path]:
    """Every check directory of the semantic and rule fixtures, and the bundled example."""
    out: list[Path] = []
    for base in (REPO / "tests" / "fixtures" / "sem", REPO / "tests" / "fixtures" / "rules"):
        out.extend(sorted(p for p in base.iterdir() if p.is_dir()))
    out.append(REPO / "examples" / "agent_loop")
    return out


def _key(tree: Path) -> str:
    try:
        return str(tree.resolve().relative_to(REPO))
    except ValueError:
        return str(tree.resolve())


def _diff(name: str, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for part in ("candidates", "landmarks", "errors", "unlowered", "ir"):
        a, b = before.get(part), after.get(part)
        if a == b:
            continue
        if isinstance(a, list) and isinstance(b, list):
            sa = {json.dumps(x, sort_keys=True) for x in a}
            sb = {json.dumps(x, sort_keys=True) for x in b}
            gone, new = sorted(sa - sb), sorted(sb - sa)
            if not gone and not new:
                out.append(f"{name}: {part}: the same entries, {len(a)} and {len(b)} times")
            for g in gone[:20]:
                out.append(f"{name}: {part}: lost {g}")
            for n in new[:20]:
                out.append(f"{name}: {part}: new  {n}")
            if len(gone) > 20 or len(new) > 20:
                out.append(f"{name}: {part}: … {len(gone)} lost, {len(new)} new in all")
        elif isinstance(a, dict) and isinstance(b, dict) and part == "ir":
            changed = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
            out.extend(f"{name}: ir of {k} differs" for k in changed[:20])
            if len(changed) > 20:
                out.append(f"{name}: … the ir of {len(changed)} modules differs in all")
        else:
            out.append(f"{name}: {part}: {a!r} -> {b!r}")
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("trees", type=Path, nargs="*")
    p.add_argument("--fixtures", action="store_true", help="add the fixture directories and examples/agent_loop")
    p.add_argument("--exclude", action="append", default=None,
                   help='excluded directory names instead of the defaults ("" for none); repeatable')
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--out", type=Path, help="write the snapshot here")
    g.add_argument("--compare", type=Path, help="compare with this snapshot; exit 1 on any difference")
    args = p.parse_args()
    excludes = None if args.exclude is None else tuple(e for e in args.exclude if e)
    trees: list[Path] = list(args.trees) + (fixture_trees() if args.fixtures else [])
    if not trees:
        p.error("no tree given (name trees or pass --fixtures)")
    result: dict[str, Any] = {}
    for tree in trees:
        t = time.process_time()
        result[_key(tree)] = snap = snapshot(tree, excludes)
        print(f"{_key(tree)}: {len(snap['candidates'])} candidates, {len(snap['landmarks'])} landmarks, "
              f"{len(snap['errors'])} errors ({time.process_time() - t:.1f} s CPU)", file=sys.stderr)
    if args.out is not None:
        args.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return 0
    before = json.loads(args.compare.read_text(encoding="utf-8"))
    problems: list[str] = []
    for name, snap in result.items():
        if name not in before:
            problems.append(f"{name}: not in {args.compare}")
            continue
        problems.extend(_diff(name, before[name], snap))
    for line in problems:
        print(line)
    print("identical" if not problems else f"{len(problems)} differences", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
