"""Hostile family "config": generated `.harness-audit.toml` and `pyproject.toml` files.

Known keys with values of every TOML type and range, unknown keys, `tool` that is not a table, non-UTF-8
encodings, invalid TOML, deep nesting, NUL characters, huge numbers. A bad file must be one line naming it
(exit 2); a good one audits.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from harness_audit.config import AuditConfig
from tests.hostile.runner import assert_sane, hostile_settings, record, run_cli
from tests.hostile.strategies import SECRETS

FAMILY = "config"
EXAMPLES = 220

LOOP = "def run(client, messages):\n    while True:\n        client.chat.completions.create(messages=messages)\n"

_KEYS = [k for k in AuditConfig.model_fields if k not in ("engine", "model", "base_url", "output_dir")]
"""Keys whose any value is safe to try here: the model engines are the model-replies family's, and the output
directory is tried only inside the example's own folder (a value could otherwise write anywhere)."""

toml_scalar = st.one_of(
    st.booleans(), st.integers(min_value=-(2**63), max_value=2**63 - 1), st.floats(allow_nan=True),
    st.text(max_size=12), st.sampled_from(["C1", "c١", "p1", "all", "md", "sarif", "never", "confirmed", "zh",
                                           "static", "", "..", "/", "a/b", "\u0000", "C99"]))
toml_value = st.recursive(toml_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(min_size=1, max_size=6), inner, max_size=3)), max_leaves=8)


def _toml_string(text: str) -> str:
    return json.dumps(text)  # a TOML basic string is JSON's, \u escapes included


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    assert isinstance(value, dict)
    return "{" + ", ".join(f"{_toml_string(k)} = {_toml(v)}" for k, v in value.items()) + "}"


_PLAUSIBLE: dict[str, st.SearchStrategy[Any]] = {
    "checks": st.sampled_from([["C1"], ["all"], ["p1"], ["C1", "C9"], ["c12"]]),
    "priority_floor": st.sampled_from([1, 2]), "concurrency": st.integers(1, 16),
    "language": st.sampled_from(["auto", "en", "zh"]), "max_file_bytes": st.integers(1, 10**7),
    "exclude_paths": st.lists(st.sampled_from(["vendor", ".venv", "src", "[x]", "é"]), max_size=3),
    "extend_exclude_paths": st.lists(st.sampled_from(["vendor", "gen", "日本"]), max_size=3),
    "fail_on": st.sampled_from(["confirmed", "suspected", "never"]), "allow_empty": st.booleans(),
    "formats": st.lists(st.sampled_from(["md", "json", "sarif"]), min_size=1, max_size=3).map(
        lambda f: sorted(set(f) | {"json"})),
    "cache": st.booleans(), "trace_max_turns": st.integers(1, 100), "trace_max_identical_calls": st.integers(2, 9),
}
"""Values each key accepts, so that most generated files audit and the rest probe one bad value at a time."""


@st.composite
def settings_table(draw: st.DrawFn) -> dict[str, Any]:
    """Mostly plausible settings, with a hostile value or an unknown key now and then."""
    table: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(sorted(_PLAUSIBLE)), max_size=5, unique=True)):
        table[key] = draw(_PLAUSIBLE[key])
    if draw(st.integers(0, 3)) == 0:
        table[draw(st.one_of(st.sampled_from(_KEYS), st.text(min_size=1, max_size=10)))] = draw(toml_value)
    return table
output_dir = st.one_of(st.none(), st.none(), st.sampled_from(["out", "a b/c", "[/x]", "é/日本", "file-in-the-way", "..x",
                                                   "out\u0000x", "/dev/null", "/proc/self/x", "n" * 300]))

RAW_FILES = [
    b'tool = "x"\n', b"tool = 5\n", b"tool = []\n", b"[tool]\nharness-audit = 3\n", b'[tool.harness-audit]\nchecks = "C1"\n',
    "checks = ['C1']\n".encode("utf-16"), b"\xff\xfe\x00", b"checks = [", b"= 1", b"[[tool.harness-audit]]\nx = 1\n",
    ("checks = " + "[" * 600 + "]" * 600 + "\n").encode(), ("x = " + "{a=" * 600 + "1" + "}" * 600 + "\n").encode(),
    b"checks = ['C1']\nchecks = ['C2']\n", b"max_file_bytes = 1e400\n", b"concurrency = 99999999999999999999\n",
    b"a = 1\n" * 20000,
]


@st.composite
def config_file(draw: st.DrawFn) -> tuple[str, bytes]:
    """(file name, bytes) of a configuration file."""
    name = draw(st.sampled_from([".harness-audit.toml", "pyproject.toml"]))
    if draw(st.integers(0, 4)) == 0:
        return name, draw(st.sampled_from(RAW_FILES))
    table = draw(settings_table())
    out = draw(output_dir)
    if out is not None:
        table["output_dir"] = out
    if draw(st.integers(0, 5)) == 0:
        table["checks"] = draw(st.sampled_from([["p1", "C1"], ["C١"], [SECRETS[0]], "C1", ["C1/no-such-rule"]]))
    body = "".join(f"{_toml_string(k)} = {_toml(v)}\n" for k, v in table.items())
    if name == "pyproject.toml":
        body = f"[project]\nname = \"x\"\n\n[tool.harness-audit]\n{body}"
    return name, body.encode("utf-8", errors="surrogatepass")


@hostile_settings(EXAMPLES)
@given(config=config_file(), explicit=st.integers(0, 3).map(bool))
def test_any_configuration_audits_or_is_refused_in_one_line(config: tuple[str, bytes], explicit: bool) -> None:
    record(FAMILY)
    name, data = config
    base = Path(tempfile.mkdtemp(prefix="cfg-"))
    try:
        root = base / "ws"
        root.mkdir()
        (root / "agent.py").write_text(LOOP, encoding="utf-8")
        (root / "file-in-the-way").write_text("x", encoding="utf-8")
        (root / name).write_bytes(data)
        args = [str(root), "-q", "--allow-empty"] + (["all"] if explicit else [])
        run = run_cli(args, timeout_s=60)
        assert_sane(run, secrets=SECRETS, family=FAMILY)
        if run.code == 2:
            event(run.err.split(":")[2][:40] if run.err.count(":") > 1 else run.err[:40])
    finally:
        shutil.rmtree(base, ignore_errors=True)
