"""Hostile family "CLI arguments": generated command lines for `audit`, `checks`, `explain` and `trace`.

Selections in every spelling (and Unicode digits), flags with values of every kind, paths that are long,
hold NUL or newline characters, name files, devices or nothing; output directories that cannot be one.
Every line must end with reports or one error line, never an internal error.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.hostile.runner import assert_sane, hostile_settings, record, run_cli
from tests.hostile.strategies import SECRETS, secret

FAMILY = "cli-arguments"
EXAMPLES = 300

LOOP = ("import json\n\n\ndef run(client, messages, tools):\n    while True:\n"
        "        reply = client.chat.completions.create(model='m', messages=messages)\n"
        "        for call in reply.choices[0].message.tool_calls:\n"
        "            try:\n                out = tools[call.function.name](**json.loads(call.function.arguments))\n"
        "            except Exception:\n                continue\n"
        "            messages.append({'role': 'tool', 'tool_call_id': call.id, 'content': out})\n")
TRACE = ('{"request": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}, "response": {"choices": '
         '[{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}}\n')

valid_selection = st.sampled_from(["C1", "c1", "C01", "p1", "all", "C1,C9", "c12", "C8/except-continue-skips-result"])
selection = st.one_of(
    valid_selection, valid_selection,
    st.sampled_from(["C1", "c1", "C01", "C15", "C16", "C0", "p1", "P1", "all", "ALL", "C1,C9", "C1,", ",C1", "C1,,C9",
                     "C1 C9", "c١", "C１", "C𝟏", "p1,C1", "C8/except-continue-skips-result", "C8/nope", "x", "-C1",
                     "C1\nC2", "C-1", "C+1", "C1.0", "C 1", "ｃ1"]),
    st.text(max_size=6),
)
value = st.one_of(st.sampled_from(["", "0", "-1", "1", "16", "17", "99999999999999999999", "nan", "1e9", "md",
                                   "json,sarif", "md,,json", "pdf", "zh", "en", "auto", "never", "suspected",
                                   "[/x]", "\u202e", "é", "a\nb", "a\x00b"]), st.text(max_size=8), secret)

FLAGS = ["--format", "--fail-on", "--concurrency", "--max-file-bytes", "--exclude", "--extend-exclude", "--language",
         "--priority-floor", "-c", "--checks", "--check"]
SWITCHES = ["--no-cache", "--allow-empty", "-q", "--quiet", "--no-progress", "--estimate", "-V", "--help", "--bogus",
            "--", "-"]


@st.composite
def command_line(draw: st.DrawFn) -> list[str]:
    """Tokens of one command line; `{root}`, `{file}`, `{trace}`, `{out}` are filled in with real paths."""
    sub = draw(st.sampled_from(["", "", "", "audit", "checks", "explain", "trace", "replay", "resume", "cancel"]))
    tokens: list[str] = [sub] if sub else []
    if sub in ("replay", "resume", "cancel"):
        tokens += draw(st.lists(st.sampled_from(["{root}", "{file}", "{missing}", "{long}", "{nul}", "~nobody-here",
                                                 "{trace}", "--root", "{missing}", "--rerun"]), max_size=3))
        return tokens
    if sub == "trace":
        tokens += draw(st.lists(st.sampled_from(["{trace}", "{file}", "{root}", "/dev/null", "{missing}", "{long}",
                                                 "{nul}"]), min_size=0, max_size=2))
    elif sub in ("checks", "explain"):
        tokens += draw(st.lists(selection, max_size=2))
    else:
        path = draw(st.sampled_from(["{root}"] * 8 + ["{brackets}", "{file}", "/dev/null", "{missing}", "{long}",
                                     "{nul}", "{newline}", "", "-", "~nobody-here/x", "{brackets}"]))
        tokens += [path] if path else []
        tokens += draw(st.lists(selection, max_size=3))
    for _ in range(draw(st.sampled_from([0, 0, 1, 1, 2, 3]))):
        if draw(st.booleans()):
            tokens += [draw(st.sampled_from(FLAGS)), draw(value)]
        else:
            tokens.append(draw(st.sampled_from(SWITCHES)))
    if sub in ("", "audit", "trace"):
        out = draw(st.sampled_from(["{out}"] * 8 + ["{file}", "/dev/null", "{long}", "{nul}", "{file}/below"]))
        tokens += ["--output-dir", out]
        if sub != "trace" and draw(st.integers(0, 4)) == 0:
            tokens += ["--trace", draw(st.sampled_from(["{trace}", "{file}", "{missing}", "/dev/zero"]))]
    return tokens


@hostile_settings(EXAMPLES)
@given(tokens=command_line())
def test_any_command_line_ends_with_reports_or_one_error_line(tokens: list[str]) -> None:
    record(FAMILY)
    base = Path(tempfile.mkdtemp(prefix="cli-"))
    try:
        root = base / "ws"
        root.mkdir()
        (root / "agent.py").write_text(LOOP, encoding="utf-8")
        (base / "a-file").write_text("x", encoding="utf-8")
        (base / "t.jsonl").write_text(TRACE, encoding="utf-8")
        brackets = base / "q[" / "z]"
        brackets.mkdir(parents=True)
        (brackets / "agent.py").write_text(LOOP, encoding="utf-8")
        paths = {"{root}": str(root), "{file}": str(base / "a-file"), "{trace}": str(base / "t.jsonl"),
                 "{out}": str(base / "out"), "{missing}": str(base / "missing"), "{long}": str(base / ("l" * 5000)),
                 "{nul}": str(base / "a\x00b"), "{newline}": str(base / "a\nb"), "{brackets}": str(brackets)}
        args = [paths.get(t, t).replace("{file}", str(base / "a-file")) for t in tokens]
        run = run_cli(args, cwd=base, timeout_s=60)
        prints = bool({"checks", "explain", "--help", "-V", "--estimate", "replay", "resume", "cancel"} & set(tokens))
        assert_sane(run, secrets=SECRETS, family=FAMILY, reports=not prints)
    finally:
        shutil.rmtree(base, ignore_errors=True)
