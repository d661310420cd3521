"""Configuration is searched upward from the audited path (as ruff does) and the two files merge."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness_audit.config import build_config
from harness_audit.errors import ConfigError
from tests.conftest import MakeTree


def test_a_parent_directory_configures_a_subdirectory(make_tree: MakeTree) -> None:
    root = make_tree({"pyproject.toml": '[tool.harness-audit]\nchecks = ["C1"]\n', "pkg/agent/m.py": "x = 1\n"})
    config, where = build_config(root / "pkg" / "agent")
    assert config.checks == ["C1"] and where == f"{root / 'pyproject.toml'} [tool.harness-audit]"


def test_dedicated_file_merges_over_pyproject_key_by_key(make_tree: MakeTree) -> None:
    root = make_tree({"pyproject.toml": '[tool.harness-audit]\nchecks = ["C1"]\nfail_on = "suspected"\n',
                      ".harness-audit.toml": 'fail_on = "never"\n'})
    config, where = build_config(root)
    assert (config.checks, config.fail_on) == (["C1"], "never")
    assert where is not None and where.endswith(".harness-audit.toml") and "pyproject.toml" in where


def test_dedicated_file_accepts_the_tool_table_too(make_tree: MakeTree) -> None:
    root = make_tree({".harness-audit.toml": '[tool.harness-audit]\nchecks = ["C9"]\n'})
    assert build_config(root)[0].checks == ["C9"]
    both = make_tree({".harness-audit.toml": 'fail_on = "never"\n[tool.harness-audit]\nchecks = ["C9"]\n'})
    config = build_config(both)[0]
    assert (config.checks, config.fail_on) == (["C9"], "never")


def test_the_nearest_configuration_wins(make_tree: MakeTree) -> None:
    root = make_tree({".harness-audit.toml": 'checks = ["C1"]\n', "sub/.harness-audit.toml": 'checks = ["C2"]\n',
                      "other/pyproject.toml": "[project]\nname = 'x'\n"})
    assert build_config(root / "sub")[0].checks == ["C2"]
    # a pyproject.toml without our table does not stop the search
    assert build_config(root / "other")[0].checks == ["C1"]


def test_relative_output_dir_is_taken_from_the_configuring_directory(make_tree: MakeTree) -> None:
    root = make_tree({".harness-audit.toml": 'output_dir = "reports"\n', "a/b/m.py": "x = 1\n"})
    assert build_config(root / "a" / "b")[0].output_dir == str(root / "reports")


def test_unknown_keys_name_the_file_they_are_in(make_tree: MakeTree) -> None:
    root = make_tree({".harness-audit.toml": "chekcs = ['C1']\n", "a/m.py": "x = 1\n"})
    with pytest.raises(ConfigError) as err:
        build_config(root / "a")
    assert "chekcs" in str(err.value) and str(root / ".harness-audit.toml") in str(err.value)


def test_no_configuration_anywhere(tmp_path: Path) -> None:
    config, where = build_config(tmp_path)
    assert where is None and config.checks == []
