"""The host docs stay true: the MCP snippets start our server, the skill names only verbs and flags that exist."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from harness_audit.cli.host import make_parser

ROOT = Path(__file__).resolve().parent.parent
HOST_MD = (ROOT / "docs" / "host.md").read_text(encoding="utf-8")
SKILL = ROOT / "skills" / "harness-audit" / "SKILL.md"


def blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", HOST_MD, re.S)


@pytest.mark.parametrize("snippet", blocks("json"))
def test_every_json_snippet_starts_harness_audit_mcp(snippet: str) -> None:
    server = json.loads(snippet)["mcpServers"]["harness-audit"]
    assert [server["command"], *server["args"]] == ["harness-audit", "mcp"]


def test_the_codex_snippet_is_valid_toml_and_starts_harness_audit_mcp() -> None:
    (snippet,) = blocks("toml")
    server = tomllib.loads(snippet)["mcp_servers"]["harness-audit"]
    assert [server["command"], *server["args"]] == ["harness-audit", "mcp"]


def test_the_add_commands_end_in_our_server_command() -> None:
    adds = [line for block in blocks("sh") for line in block.splitlines() if " mcp add " in line]
    assert len(adds) == 2 and all(line.endswith("-- harness-audit mcp") for line in adds)


def test_the_skill_has_agent_skills_frontmatter() -> None:
    text = SKILL.read_text(encoding="utf-8")
    front = re.match(r"---\n(.*?)\n---\n", text, re.S)
    assert front, "SKILL.md must open with YAML front matter"
    fields = dict(line.split(": ", 1) for line in front.group(1).splitlines())
    assert fields["name"] == SKILL.parent.name and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", fields["name"])
    assert 0 < len(fields["description"]) <= 1024


def test_every_verb_and_flag_the_skill_uses_exists() -> None:
    text = SKILL.read_text(encoding="utf-8").replace("\\\n", " ")
    parser = make_parser()
    used = 0
    for command in re.findall(r"harness-audit host ([\w-]+)([^\n`]*)", text):
        verb, rest = command
        sub = parser._subparsers._group_actions[0].choices[verb]  # type: ignore[union-attr]  # pyright: ignore
        known = {opt for action in sub._actions for opt in action.option_strings}  # pyright: ignore
        for token in shlex.split(rest.replace("…", ""), posix=True) if "'" not in rest else rest.split():
            if token.startswith("--"):
                assert token in known, f"SKILL.md uses {verb} {token}, which `host {verb}` does not take"
                used += 1
    assert used >= 10


def test_the_skill_names_all_eleven_landmark_kinds_and_the_recon_verbs() -> None:
    from harness_audit.findings import LandmarkKind

    text = " ".join(SKILL.read_text(encoding="utf-8").split())
    assert all(f"`{kind.value}`" in text for kind in LandmarkKind)
    for needed in ("--evidence", "host dismiss-landmark", "never findings", "where the excerpt starts",
                   "counts, accepted or refused", "`next`, `status` and `finish` are free"):
        assert needed in text, needed


def test_the_skill_the_helps_and_the_docs_say_the_same_about_where_a_run_goes(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from harness_audit.cli import main

    monkeypatch.setenv("COLUMNS", "400")
    helps = {}
    for verb in ("", "begin", "next", "finish"):
        assert main(["host", *([verb] if verb else []), "--help"]) == 0
        helps[verb or "host"] = " ".join(capsys.readouterr().out.split())
    skill = " ".join(SKILL.read_text(encoding="utf-8").split())
    docs = " ".join(HOST_MD.split())
    # where a run's state and reports go by default: inside the audited PATH (unless configured)
    assert "`.harness-audit` inside `PATH`" in skill and "`.harness-audit` inside the audited directory" in docs
    assert "else .harness-audit in PATH" in helps["host"]
    assert "(default: the configured `output_dir`, else .harness-audit, in PATH)" in helps["begin"]
    # how to choose it: --output-dir on begin, relative to where the command runs
    for text in (skill, docs, helps["host"], helps["begin"]):
        assert "--output-dir" in text and "reports" in text
    assert "pass it explicitly" in skill and "somewhere particular" in helps["begin"] and "somewhere particular" in docs
    # how the later verbs find it: their --output-dir, else the working directory's default; printed commands carry it
    assert "(default: the configured `output_dir`, else .harness-audit, in the working directory)" in helps["next"]
    for text in (skill, docs, helps["host"], helps["next"]):
        assert "whenever" in text, text[:200]
    assert "reports into the run's output directory" in helps["finish"]
    assert "default one of your current directory" not in skill


def test_the_skill_answers_what_the_second_cold_trial_found_unclear() -> None:
    """Each answer is backed by a behaviour test in tests/test_host.py (test_what_the_skill_says_about_…)."""
    text = " ".join(SKILL.read_text(encoding="utf-8").split())
    for needed in ("which need not be the lead's own line", "within 3 lines of the lead's line",
                   "A `suspected` lead may be reported as `confirmed` once you have shown the defect is reachable",
                   "is about aggregation", "An accepted finding is final: nothing amends or withdraws it",
                   "the less certain verdict stands and, between equal verdicts, the first one reported"):
        assert needed in text, needed
