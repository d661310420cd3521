"""Baselines: fingerprints survive line shifts and finding order; `diff`; `--baseline` gates only what is new."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness_audit.aggregate import build_report
from harness_audit.api import audit
from harness_audit.cli import main

EXAMPLE = Path(__file__).parent.parent / "examples" / "agent_loop"


def _copy(tmp_path: Path, name: str = "ws") -> Path:
    root = tmp_path / name
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".harness-audit"))
    return root


def _json(root: Path, out: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, Path]:
    code = main([str(root), "all", "--format", "json", "-o", str(out), "-q", "--no-cache", *extra])
    return code, Path(capsys.readouterr().out.split()[0])


def _shift(root: Path) -> None:
    """Insert lines at the top of every file: every finding moves down, nothing else changes."""
    for path in (root / "agent").glob("*.py"):
        path.write_text("# a comment\n\n\n" + path.read_text(encoding="utf-8"), encoding="utf-8")


def test_fingerprints_survive_a_line_shift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy(tmp_path)
    _, before = _json(root, tmp_path / "a", capsys)
    _shift(root)
    _, after = _json(root, tmp_path / "b", capsys)
    old = {f["fingerprint"]: f["line"] for f in json.loads(before.read_text())["findings"]}
    new = {f["fingerprint"]: f["line"] for f in json.loads(after.read_text())["findings"]}
    assert old.keys() == new.keys() and len(old) >= 10
    assert all(new[fp] == old[fp] + 3 for fp in old)


def test_baseline_of_the_same_run_gates_nothing_even_after_a_shift(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy(tmp_path)
    code, baseline = _json(root, tmp_path / "a", capsys)
    assert code == 1  # the example has confirmed findings
    assert _json(root, tmp_path / "b", capsys, "--baseline", str(baseline))[0] == 0
    _shift(root)
    assert _json(root, tmp_path / "c", capsys, "--baseline", str(baseline))[0] == 0


def test_baseline_gates_a_new_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy(tmp_path)
    _, baseline = _json(root, tmp_path / "a", capsys)
    (root / "agent" / "more.py").write_text(
        "import json\n\n\ndef parse(call):\n    return json.loads(call.function.arguments)\n", encoding="utf-8")
    code = main([str(root), "all", "--baseline", str(baseline), "-o", str(tmp_path / "b"), "--no-cache",
                 "--fail-on", "suspected"])  # the new one is suspected
    assert code == 1
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert "1 new, 13 in the baseline" in last


def test_duplicate_fingerprints_are_numbered_by_content_not_order(tmp_path: Path) -> None:
    run = audit(EXAMPLE, ["all"], overrides={"output_dir": str(tmp_path)}, write=False)
    r = run.report
    twin = r.findings[0]
    # the same finding quoted twice (same rule, file and code) at two places: numbered by the lines around them
    from dataclasses import replace

    a, b = replace(twin, line=10), replace(twin, line=30)
    around = {10: "alpha", 30: "beta"}
    forward = build_report(meta=r.meta, findings=[a, b], outcomes=r.outcomes, refusals=(), landmarks=(),
                           context=lambda f, line: around[line])
    backward = build_report(meta=r.meta, findings=[b, a], outcomes=r.outcomes, refusals=(), landmarks=(),
                            context=lambda f, line: around[line])
    assert {(f.line, f.fingerprint) for f in forward.findings} == {(f.line, f.fingerprint) for f in backward.findings}
    assert {f.fingerprint for f in forward.findings} == {twin.fingerprint, f"{twin.fingerprint}-2"}


def test_diff_lists_new_fixed_unchanged_and_verdict_changes(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    root = _copy(tmp_path)
    _, old = _json(root, tmp_path / "a", capsys)
    data = json.loads(old.read_text())
    gone, moved = data["findings"][0], data["findings"][1]
    data["findings"] = data["findings"][1:]
    moved["verdict"] = "suspected" if moved["verdict"] == "confirmed" else "confirmed"
    data["findings"].append({**gone, "fingerprint": "f" * 20, "claim": "a finding since fixed"})
    edited = tmp_path / "old.json"
    edited.write_text(json.dumps(data))
    code = main(["diff", str(edited), str(old)])
    out = capsys.readouterr().out
    assert "new (1)" in out and gone["claim"] in out
    assert "fixed (1)" in out and "a finding since fixed" in out
    assert "verdict changed (1)" in out
    assert out.strip().splitlines()[-1] == f"1 new, 1 fixed, 1 verdict changes, {len(data['findings']) - 2} unchanged"
    assert code == 1
    assert main(["diff", str(old), str(old), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["new"] == []


@pytest.mark.parametrize(("content", "named"), [("not json", "is not JSON"), ('{"a": 1}', "not a harness-audit"),
                                                (None, "does not exist")])
def test_a_bad_baseline_is_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None,
                                           named: str) -> None:
    path = tmp_path / "old.json"
    if content is not None:
        path.write_text(content)
    assert main([str(EXAMPLE), "C1", "--baseline", str(path), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err
    assert main(["diff", str(path), str(path)]) == 2
