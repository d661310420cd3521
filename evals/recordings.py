"""The recorded transcripts under `evals/recorded/`, and how to make them again.

Each entry is the scenario a ledger was recorded from: its tree is what the replay audits, its script
is what produced the ledger once. Regenerate after a deliberate change of the ledger format with
`.venv/bin/python -m evals.recordings` (then review the diff and commit it).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from evals.harness import DONE, Scenario, call, finding, landmark, reply
from evals.targets import AGENT_LOOP, C1_EVIDENCE, C12_EVIDENCE, LOOP, line_of, recon_script, tree

RECORDED = Path(__file__).resolve().parent / "recorded"

C1_LINE = line_of(AGENT_LOOP, "except Exception:")
C12_LINE = line_of(AGENT_LOOP, "while True:")

TWO_CHECKS = Scenario(
    name="two-checks",
    risk="a recorded run no longer replays to the report it produced",
    files=tree(),
    checks=("C1", "C12"),
    script={
        "recon": [*recon_script()[:2],
                  reply(landmark("retry", LOOP, 400, "agent_loop")),  # refused: no line 400
                  DONE],
        "C1": [reply(call("read_file", path=LOOP), call("run_shell", cmd="ls")),  # an unknown tool
               reply(finding("C1", LOOP, C1_LINE, "except Exception: pass")),  # refused: paraphrase
               reply(finding("C1", LOOP, C1_LINE, C1_EVIDENCE, claim="a tool that raises gets no result")),
               DONE],
        "C12": [reply(call("grep", pattern="while True")),
                reply(finding("C12", LOOP, C12_LINE, C12_EVIDENCE, claim="the turn loop has no ceiling")),
                DONE],
    },
)
"""Recon with a landmark refusal; C1 with an unknown tool and a refusal it corrects; C12 straight."""

RECORDINGS: dict[str, Scenario] = {"two_checks.ledger.jsonl": TWO_CHECKS}


def main() -> int:
    """Record every scenario of `RECORDINGS` into `evals/recorded/`."""
    from evals.harness import record_scenario

    for name, scenario in RECORDINGS.items():
        with tempfile.TemporaryDirectory() as tmp:
            run = record_scenario(scenario, RECORDED / name, Path(tmp))
        print(f"{RECORDED / name}: {len(run.ledger.events)} events, state {run.report.meta.state}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
