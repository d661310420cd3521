"""Issue 14: each hostile input the issue names, reproduced exactly, with the behaviour it must have now.

The generated inputs of the same families live beside this file (`test_*_family.py`); these are the named cases.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from harness_audit.cli import main
from harness_audit.render import make_dirs
from harness_audit.workspace import ReadRefused, read_regular
from tests.conftest import MakeTree
from tests.hostile.runner import CliRun, assert_sane, run_cli

EXAMPLE = Path(__file__).parent.parent.parent / "examples" / "agent_loop"
LOOP = "def run(client, messages):\n    while True:\n        client.chat.completions.create(messages=messages)\n"


# ---------------------------------------------------------------- item 9: rich markup in printed text
def test_item9_a_path_with_closing_markup_is_printed_not_parsed(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                                                 ) -> None:
    root = tmp_path / "q[/z]"  # the directories `q[` and `z]` below it
    root.mkdir(parents=True)
    (root / "agent.py").write_text(LOOP, encoding="utf-8")
    code = main([str(root), "all", "--output-dir", str(tmp_path / "out[/x]")])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert "internal error" not in err
    assert str(root) in out
    assert out.count("report: ") == 3 and "out[/x]" in out


def test_item9_a_claim_with_markup_is_printed_verbatim(capsys: pytest.CaptureFixture[str]) -> None:
    from dataclasses import replace

    from harness_audit.api import audit
    from harness_audit.cli.audit import print_result

    run = audit(EXAMPLE, ["all"], write=False, overrides={"cache": False})
    assert run.report.findings
    first = replace(run.report.findings[0], claim="model said [/x] and [bold]not bold[/bold] and [masked]")
    print_result(replace(run.report, findings=(first,)), [Path("r[/y].md")], quiet=False)
    out = capsys.readouterr().out
    assert "model said [/x] and [bold]not bold[/bold] and [masked]" in out
    assert "report: r[/y].md" in out


# ---------------------------------------------------------------- helpers
def _report(out: str) -> dict[str, Any]:
    path = next(line for line in out.splitlines() if line.endswith(".json"))
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _listed(report: dict[str, Any]) -> dict[str, str]:
    return {e["path"]: e["reason"] for key in ("skipped_files", "unparsed_files") for e in report[key]}


def _audit_cli(root: Path, out_dir: Path, *extra: str, subprocess_: bool = False) -> CliRun:
    return run_cli([str(root), "all", "-q", "--no-cache", "--allow-empty", "--output-dir", str(out_dir), *extra],
                   subprocess_=subprocess_, timeout_s=60)


# ---------------------------------------------------------------- items 3 and 4: FIFOs and devices
def test_item3_a_fifo_named_x_py_is_listed_not_read(tmp_path: Path, make_tree: MakeTree) -> None:
    root = make_tree({"agent.py": LOOP})
    os.mkfifo(root / "x.py")
    run = _audit_cli(root, tmp_path / "out")  # in this process: it would hang forever on the open()
    reports = assert_sane(run, unreadable=["x.py"])
    assert reports.json is not None and _listed(reports.json)["x.py"] == "special-file"


def test_item4_a_link_to_dev_zero_is_listed_not_read(tmp_path: Path, make_tree: MakeTree) -> None:
    root = make_tree({"agent.py": LOOP})
    (root / "z.py").symlink_to("/dev/zero")
    # as a subprocess under an address-space ceiling: a regression must fail the test, not fill the machine
    run = _audit_cli(root, tmp_path / "out", subprocess_=True)
    reports = assert_sane(run, unreadable=["z.py"])
    assert reports.json is not None and _listed(reports.json)["z.py"] == "special-file"


def test_item4_reads_are_bounded_by_bytes_read_not_by_st_size(tmp_path: Path) -> None:
    # /proc files report st_size 0 whatever they hold: only the bytes actually read can bound them
    with pytest.raises(ReadRefused) as refused:
        read_regular("/proc/self/maps", 16)
    assert refused.value.reason == "too-large"
    big = tmp_path / "big.py"
    big.write_bytes(b"x = 1\n" * 1000)
    with pytest.raises(ReadRefused):
        read_regular(big, 100)
    assert read_regular(big, 6000) == b"x = 1\n" * 1000


@pytest.mark.parametrize("special", ["fifo", "dev-zero", "dev-null"])
def test_items3_4_the_gate_and_the_read_tools_never_open_special_files(make_tree: MakeTree, special: str) -> None:
    from harness_audit.findings import Candidate, CheckId, Refusal, RefusalReason
    from harness_audit.gate import GateContext, validate
    from harness_audit.llm.tools import NavigationTools, ToolRefusal
    from harness_audit.workspace import Workspace

    root = make_tree({"agent.py": LOOP})
    if special == "fifo":
        os.mkfifo(root / "s.py")
    else:
        (root / "s.py").symlink_to("/dev/zero" if special == "dev-zero" else "/dev/null")
    ws = Workspace.open(root)
    cand = Candidate(check="C1", verdict="confirmed", file="s.py", line=1, evidence="x = compute_value(1)",
                     claim="c", consequence="c", source="model")
    gated = validate(cand, GateContext(workspace=ws, checks_in_run=(CheckId.C1,)))
    assert isinstance(gated, Refusal) and gated.reason in (RefusalReason.FILE_NOT_FOUND,
                                                           RefusalReason.FILE_OUTSIDE_WORKSPACE)
    with pytest.raises(ToolRefusal):
        NavigationTools(ws, None).read_file("s.py")


# ---------------------------------------------------------------- item 5: a YAML alias bomb in a cassette's body
def _alias_bomb() -> str:
    levels = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    levels += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    body = "\n".join("      " + line for line in levels)
    return ("interactions:\n- request:\n    method: POST\n    uri: https://api.openai.com/v1/chat/completions\n"
            f"    body:\n{body}\n  response:\n    status: {{code: 200}}\n")


def test_item5_a_yaml_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    trace = tmp_path / "bomb.yaml"
    trace.write_text(_alias_bomb(), encoding="utf-8")
    run = run_cli(["trace", str(trace), "-q", "--output-dir", str(tmp_path / "out")], timeout_s=20, memory_mb=512)
    assert_sane(run)
    assert run.code == 2 and "aliases" in run.err


def test_item5_a_recursive_alias_is_refused(tmp_path: Path) -> None:
    trace = tmp_path / "loop.yaml"
    trace.write_text("interactions:\n- &x\n  request: {method: POST, uri: 'https://api.openai.com/v1/chat/completions',"
                     " body: *x}\n", encoding="utf-8")
    run = run_cli(["trace", str(trace), "-q", "--output-dir", str(tmp_path / "out")], timeout_s=20)
    assert_sane(run)
    assert run.code == 2 and "contains it" in run.err


# ---------------------------------------------------------------- item 7: deep call chains
@pytest.mark.parametrize("calls", [1000, 2999])
def test_item7_a_deep_call_chain_is_listed_as_unparsed_and_the_rest_audited(tmp_path: Path, make_tree: MakeTree,
                                                                           calls: int) -> None:
    root = make_tree({"agent.py": LOOP, "deep.py": "x = f" + "()" * calls + "\n"})
    reports = assert_sane(_audit_cli(root, tmp_path / "out"), unreadable=["deep.py"])
    assert reports.json is not None
    assert "too deep" in _listed(reports.json)["deep.py"] or "nested too deeply" in _listed(reports.json)["deep.py"]
    assert reports.json["meta"]["files_scanned"] == 2


# ---------------------------------------------------------------- item 8: non-UTF-8 file names
def test_item8_a_non_utf8_file_name_is_listed_with_its_bytes_escaped(tmp_path: Path, make_tree: MakeTree) -> None:
    root = make_tree({"agent.py": LOOP})
    (root / os.fsdecode(b"bad\xff.py")).write_bytes(LOOP.encode())
    (root / os.fsdecode(b"dir\xfe")).mkdir()
    # the result cache is on: it hashed every path, and failed on this one
    run = run_cli([str(root), "all", "-q", "--allow-empty", "--output-dir", str(tmp_path / "out")])
    reports = assert_sane(run, unreadable=["bad\\xff.py", "dir\\xfe/"])
    assert reports.json is not None and _listed(reports.json)["bad\\xff.py"] == "undecodable-name"


def test_item8_a_non_utf8_root_is_shown_escaped(tmp_path: Path) -> None:
    root = Path(os.fsdecode(os.fsencode(tmp_path) + b"/root\xff"))
    root.mkdir()
    (root / "agent.py").write_text(LOOP, encoding="utf-8")
    reports = assert_sane(_audit_cli(root, tmp_path / "out"))
    assert reports.json is not None and reports.json["meta"]["root"].endswith("root\\xff")


# ---------------------------------------------------------------- item 10: OS errors on paths the user gave
def _output_dirs(tmp_path: Path) -> list[tuple[str, str]]:
    (tmp_path / "a-file").write_text("x", encoding="utf-8")
    return [
        (str(tmp_path / "a-file"), "not a directory"), ("/dev/null", "not a directory"),
        ("/proc/self/x", ""), (str(tmp_path / ("n" * 300)), "too long"),
        (str(tmp_path / "a-file" / "below"), "not a directory"),
    ]


def test_item10_bad_output_dirs_exit_2_with_one_line(tmp_path: Path, make_tree: MakeTree) -> None:
    root = make_tree({"agent.py": LOOP})
    for out_dir, words in _output_dirs(tmp_path):
        run = _audit_cli(root, Path(out_dir))
        assert_sane(run)
        assert run.code == 2 and "output directory" in run.err and words in run.err, (out_dir, run.err)


def test_item10_two_thousand_nested_output_segments_do_not_recurse(tmp_path: Path, make_tree: MakeTree) -> None:
    root = make_tree({"agent.py": LOOP})
    deep = tmp_path / "/".join(["d"] * 2000)
    try:
        run = _audit_cli(root, deep)
        assert_sane(run)  # written (under PATH_MAX) or a one-line error: never a RecursionError
    finally:
        _remove_chain(tmp_path / "d")


def _remove_chain(top: Path) -> None:
    """Remove a chain of nested directories bottom-up (`shutil.rmtree` recurses, so pytest's cleanup would not)."""
    chain = [top]
    while True:
        below = [chain[-1] / name for name in os.listdir(chain[-1]) if (chain[-1] / name).is_dir()]
        if not below:
            break
        chain.append(below[0])
    for directory in reversed(chain):
        for name in os.listdir(directory):
            (directory / name).unlink()
        directory.rmdir()


def test_item10_a_workspace_two_thousand_directories_deep_is_walked(tmp_path: Path) -> None:
    # Python 3.11's os.walk recursed once per level
    root = tmp_path / "ws"
    deep = root / "/".join(["d"] * 1500)
    make_dirs(deep)  # pathlib's mkdir(parents=True) recurses too
    (deep / "agent.py").write_text(LOOP, encoding="utf-8")
    try:
        reports = assert_sane(_audit_cli(root, tmp_path / "out"))
        assert reports.json is not None and reports.json["meta"]["files_scanned"] == 1
    finally:
        _remove_chain(root / "d")


def test_item10_a_nul_byte_in_the_configured_output_dir_is_a_config_error(tmp_path: Path, make_tree: MakeTree
                                                                          ) -> None:
    root = make_tree({"agent.py": LOOP, ".harness-audit.toml": 'output_dir = "a\\u0000b"\n'})
    run = run_cli([str(root), "all", "-q"])
    assert_sane(run)
    assert run.code == 2 and "NUL" in run.err


def test_item10_unwritable_output_dir_is_named(tmp_path: Path, make_tree: MakeTree,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # chmod cannot stop root, so the refusal the OS would give is injected where the probe file is made
    import tempfile

    root = make_tree({"agent.py": LOOP})

    def refuse(*args: object, **kwargs: object) -> tuple[int, str]:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    run = _audit_cli(root, tmp_path / "ro")
    assert_sane(run)
    assert run.code == 2 and "Permission denied" in run.err


def test_item10_a_5000_character_audited_path_exits_2(tmp_path: Path) -> None:
    run = run_cli([str(tmp_path / ("p" * 5000)), "all", "-q"])
    assert_sane(run)
    assert run.code == 2 and "too long" in run.err


def test_item10_an_unlistable_audited_directory_exits_2(tmp_path: Path, make_tree: MakeTree,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_tree({"agent.py": LOOP})
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if str(path) == str(root):
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    run = run_cli([str(root), "all", "-q", "--output-dir", str(tmp_path / "out")])
    assert_sane(run)
    assert run.code == 2 and "Permission denied" in run.err


# ---------------------------------------------------------------- item 11: configuration files
@pytest.mark.parametrize(("name", "content", "words"), [
    ("pyproject.toml", 'tool = "x"\n', "`tool`"),
    ("pyproject.toml", "tool = 5\n", "`tool`"),
    ("pyproject.toml", "tool = []\n", "`tool`"),
    (".harness-audit.toml", "checks = ['C1']\n".encode("utf-16"), "not UTF-8"),
    (".harness-audit.toml", "checks = " + "[" * 1000 + "]" * 1000 + "\n", "too deeply"),
    (".harness-audit.toml", "x = " + "{a=" * 1000 + "1" + "}" * 1000 + "\n", "too deeply"),
])
def test_item11_bad_configuration_files_exit_2_naming_them(tmp_path: Path, make_tree: MakeTree, name: str,
                                                           content: str | bytes, words: str) -> None:
    root = make_tree({"agent.py": LOOP, name: content})
    run = run_cli([str(root), "all", "-q", "--output-dir", str(tmp_path / "out")])
    assert_sane(run)
    assert run.code == 2 and words in run.err and name in run.err


# ---------------------------------------------------------------- item 12: HAR fields that are not objects
HAR_ENTRIES = [{"request": "x"}, {"request": 5, "response": []}, {"request": {"postData": "x"}},
               {"request": {"url": "u"}, "response": {"content": 3}}]


@pytest.mark.parametrize("entry", HAR_ENTRIES)
def test_item12_har_fields_that_are_not_objects_are_unreadable_records(tmp_path: Path, entry: dict[str, Any]
                                                                       ) -> None:
    trace = tmp_path / "t.har"
    trace.write_text(json.dumps({"log": {"entries": [entry]}}), encoding="utf-8")
    run = run_cli(["trace", str(trace), "-q", "--output-dir", str(tmp_path / "out")])
    assert_sane(run)
    assert run.code == 2 and "is not an object" in run.err
    from harness_audit.pytest_plugin import assert_trace_clean, load_trace
    from harness_audit.trace import NotATrace

    assert load_trace(trace).malformed[0][1].endswith("is not an object")
    with pytest.raises(NotATrace, match="is not an object"):
        assert_trace_clean(trace)


def test_item12_a_bad_har_entry_beside_good_ones_is_listed(tmp_path: Path) -> None:
    good = {"request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                        "postData": {"text": json.dumps({"model": "m", "messages": [{"role": "user",
                                                                                     "content": "hi"}]})}},
            "response": {"status": 200, "content": {"text": json.dumps({"choices": [{"message": {
                "role": "assistant", "content": "hello"}, "finish_reason": "stop"}]})}}}
    trace = tmp_path / "t.har"
    trace.write_text(json.dumps({"log": {"entries": [good, {"request": "x"}]}}, indent=1), encoding="utf-8")
    reports = assert_sane(run_cli(["trace", str(trace), "-q", "--output-dir", str(tmp_path / "out")]),
                          unreadable=["t.har"])
    assert reports.json is not None


# ---------------------------------------------------------------- item 13: deeply nested JSON in a trace line
def _exchange_line(content: str = '"hi"') -> str:
    """One JSONL exchange whose user message has `content` (JSON text, spliced in as written)."""
    return ('{"request": {"model": "m", "messages": [{"role": "user", "content": ' + content + '}]}, '
            '"response": {"choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]}}')


@pytest.mark.parametrize("depth", [5000, 100_000])
def test_item13_a_deeply_nested_trace_line_is_listed_and_the_run_goes_on(tmp_path: Path, depth: int) -> None:
    trace = tmp_path / "t.jsonl"
    deep = '{"request": ' + "[" * depth + "]" * depth + "}"
    trace.write_text("\n".join([_exchange_line(), deep, _exchange_line()]) + "\n", encoding="utf-8")
    reports = assert_sane(run_cli(["trace", str(trace), "-q", "--output-dir", str(tmp_path / "out")]),
                          unreadable=["t.jsonl"])
    assert reports.json is not None
    assert any(e["reason"] == "line 2: JSON nested too deeply to read" for e in reports.json["unparsed_files"])


@pytest.mark.parametrize("depth", [600, 900, 980])
def test_item13_a_message_nested_near_the_limit_is_read_or_listed_never_an_error(tmp_path: Path, depth: int) -> None:
    # it parses when the decoder has the stack to itself; comparing it later, deeper in the stack, may not
    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join([_exchange_line(), _exchange_line("[" * depth + "]" * depth),
                                _exchange_line()]) + "\n", encoding="utf-8")
    assert_sane(run_cli(["trace", str(trace), "-q", "--output-dir", str(tmp_path / "out")]))


# ---------------------------------------------------------------- item 15: invalid .gitignore lines
@pytest.mark.parametrize("line", ["\\", "!"])
def test_item15_an_invalid_gitignore_line_is_skipped_like_git_does(tmp_path: Path, make_tree: MakeTree,
                                                                   line: str) -> None:
    root = make_tree({"agent.py": LOOP, "gen/out.py": LOOP, ".gitignore": f"{line}\ngen/\n"})
    reports = assert_sane(_audit_cli(root, tmp_path / "out"))
    assert reports.json is not None and reports.json["meta"]["files_scanned"] == 1  # gen/ still ignored


# ---------------------------------------------------------------- item 16: unreadable subdirectories
def test_item16_an_unreadable_subdirectory_is_listed(tmp_path: Path, make_tree: MakeTree,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_tree({"agent.py": LOOP, "locked/inner.py": LOOP})
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if str(path).endswith("locked"):  # what mode 000 or -wx gives a user other than root
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    reports = assert_sane(_audit_cli(root, tmp_path / "out"), unreadable=["locked/"])
    assert reports.json is not None and _listed(reports.json)["locked/"] == "unreadable-directory"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any directory whatever its mode")
@pytest.mark.parametrize("mode", [0o000, 0o300])
def test_item16_a_mode_000_or_wx_subdirectory_is_listed(tmp_path: Path, make_tree: MakeTree, mode: int) -> None:
    root = make_tree({"agent.py": LOOP, "locked/inner.py": LOOP})
    (root / "locked").chmod(mode)
    try:
        assert_sane(_audit_cli(root, tmp_path / "out"), unreadable=["locked/"])
    finally:
        (root / "locked").chmod(0o755)


# ---------------------------------------------------------------- item 18: non-ASCII digits in check ids
@pytest.mark.parametrize("selection", ["C١", "C１", "c۱", "C1٥", "C𝟏"])
def test_item18_non_ascii_digits_are_refused(tmp_path: Path, make_tree: MakeTree, selection: str) -> None:
    root = make_tree({"agent.py": LOOP})
    run = run_cli([str(root), selection, "-q", "--output-dir", str(tmp_path / "out")])
    assert_sane(run)
    assert run.code == 2 and "unknown check" in run.err


# ---------------------------------------------------------------- item 19: plugin assertions on garbage
@pytest.mark.parametrize(("messages", "named"), [
    ([1, "a", None], "input[0]"),
    ([{"role": "assistant", "tool_calls": "x"}], "tool_calls"),
    ([{"role": "assistant", "tool_calls": ["x"]}], "tool_calls[0]"),
    ([{"role": 5, "content": "hi"}], "role"),
    ({"messages": 3}, "messages"),
])
def test_item19_assert_tool_pairing_refuses_garbage_naming_it(messages: Any, named: str) -> None:
    from harness_audit.pytest_plugin import assert_tool_pairing

    with pytest.raises(TypeError, match=re.escape(named)):
        assert_tool_pairing(messages)


@pytest.mark.parametrize(("kwargs", "named"), [({"max_turns": "x"}, "max_turns"), ({"max_tool_calls": 0}, "max_tool_calls"),
                                               ({"max_identical_calls": True}, "max_identical_calls")])
def test_item19_assert_within_limits_names_a_bad_ceiling(kwargs: dict[str, Any], named: str) -> None:
    from harness_audit.pytest_plugin import assert_within_limits

    with pytest.raises(TypeError, match=f"`{named}` must be a positive integer"):
        assert_within_limits([{"messages": [{"role": "user", "content": "hi"}]}], **kwargs)


# ---------------------------------------------------------------- item 17: a first line over 64 KiB
@pytest.mark.parametrize("size", [70_000, 3_000_000])
def test_item17_a_trace_whose_first_line_is_over_64_kib_is_detected(tmp_path: Path, size: int) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text("\n".join([_exchange_line('"' + "x" * size + '"'), _exchange_line()]) + "\n", encoding="utf-8")
    run = run_cli(["trace", str(trace), "-q", "--output-dir", str(tmp_path / "out")])
    reports = assert_sane(run)
    assert run.code in (0, 1), run.err  # it was "JSON but not a trace" (exit 2)
    assert reports.json is not None and "jsonl" in " ".join(reports.json["meta"]["notes"])


def test_item17_a_one_line_har_over_64_kib_is_detected(tmp_path: Path) -> None:
    entry = {"request": {"method": "POST", "url": "https://api.openai.com/v1/chat/completions",
                         "postData": {"text": json.dumps({"model": "m", "messages": [
                             {"role": "user", "content": "x" * 100_000}]})}},
             "response": {"status": 200, "content": {"text": json.dumps({"choices": [{"message": {
                 "role": "assistant", "content": "ok"}, "finish_reason": "stop"}]})}}}
    trace = tmp_path / "t.har"
    trace.write_text(json.dumps({"log": {"entries": [entry]}}), encoding="utf-8")
    run = run_cli(["trace", str(trace), "-q", "--output-dir", str(tmp_path / "out")])
    assert_sane(run)
    assert run.code in (0, 1), run.err


# ---------------------------------------------------------------- item 10: the rest of the output-dir cases
def test_item10_root_as_output_dir_when_it_is_not_writable(tmp_path: Path, make_tree: MakeTree,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    root = make_tree({"agent.py": LOOP})
    real_mkstemp = tempfile.mkstemp

    def mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
        if str(kwargs.get("dir")) == "/":  # what a user other than root gets in /
            raise PermissionError(13, "Permission denied")
        return real_mkstemp(*args, **kwargs)

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    run = _audit_cli(root, Path("/"))
    assert_sane(run)
    assert run.code == 2 and "Permission denied" in run.err


@pytest.mark.parametrize("flag_value", ["a\x00b", "~no-such-user-here/out"])
def test_item10_an_output_dir_flag_that_is_no_path_exits_2(tmp_path: Path, make_tree: MakeTree,
                                                           flag_value: str) -> None:
    root = make_tree({"agent.py": LOOP})
    run = run_cli([str(root), "all", "-q", "--output-dir", flag_value])
    assert_sane(run)
    assert run.code == 2 and "output directory" in run.err
