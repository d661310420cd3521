"""Facts that must hold whatever order Python's sets happen to iterate in."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from harness_audit.static.sem import ir
from harness_audit.static.sem.facts import _MAX_VALS, Ext, _cap, val_key  # pyright: ignore[reportPrivateUsage]
from tests.sem.build import function_named, project_of

_MANY = "".join(f"    h = h or tools.t{i:02d}\n" for i in range(20))
_SOURCE = f"import tools\n\n\ndef run(x):\n    h = None\n{_MANY}    return h(x)\n"


def test_a_capped_set_of_values_keeps_the_same_ones_in_any_order() -> None:
    """Risk: the cap kept the first values a set yielded, and string hashes change from run to run, so two audits
    of one tree resolved a call to different callees and reported different findings (vercel/ai: 2 or 7)."""
    values = [Ext("tools", f"t{i:02d}") for i in range(20)]
    kept = _cap(values)
    assert kept == _cap(reversed(values)) == frozenset(sorted(values, key=val_key)[:_MAX_VALS])
    assert len(kept) == _MAX_VALS


def test_callees_are_the_same_in_the_same_order(tmp_path: Path) -> None:
    project = project_of(tmp_path, "agent.py", _SOURCE)
    run = function_named(project, "run")
    call = next(n for n in ir.walk_block(run.body) if isinstance(n, ir.Call) and isinstance(n.func, ir.Name))
    callees = project.facts.callees(run, call)
    assert list(callees) == sorted(callees, key=val_key)  # type: ignore[arg-type]
    assert len(callees) == _MAX_VALS
    values = project.facts.values(run, call.func)  # what code taking the first value that fits reads
    assert values == sorted(project.facts.eval(run, call.func), key=val_key) and values[0] == callees[0]


def test_callees_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    """The same tree, audited by processes with different string hashes, resolves the call the same way."""
    (tmp_path / "agent.py").write_text(_SOURCE)
    script = (
        "import sys\n"
        "from harness_audit.static.sem import ir\n"
        "from harness_audit.static.sem.engine import SemProject\n"
        "from harness_audit.workspace import Workspace\n"
        "ws = Workspace.open(sys.argv[1]); p = SemProject.build(ws, ws.discover().files)\n"
        "run = next(f for f in p.facts.functions if f.name == 'run')\n"
        "call = next(n for n in ir.walk_block(run.body) if isinstance(n, ir.Call) and isinstance(n.func, ir.Name))\n"
        "print(p.facts.callees(run, call))\n"
    )
    outs = set()
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=env, capture_output=True,
                              text=True, check=True)
        outs.add(done.stdout)
    assert len(outs) == 1, outs
