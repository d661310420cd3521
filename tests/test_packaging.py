"""What a wheel ships: every data file the package reads at run time is declared as package data.

The full check (build a wheel, `pipx install .` into a clean environment, audit the example) needs the package
registries and runs as `scripts/check_package.sh`, not in the suite (tests never reach the network).
"""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "src" / "harness_audit"


def test_every_data_file_is_package_data() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = meta["tool"]["setuptools"]["package-data"]["harness_audit"]
    data = [p.relative_to(PKG).as_posix() for p in PKG.rglob("*")
            if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]
    missing = [d for d in data if not any(fnmatch.fnmatch(d, pat) for pat in patterns)]
    assert missing == [], f"not in [tool.setuptools.package-data]: {missing}"
    for needed in ("catalogue/rules.txt", "render/report.schema.json", "py.typed",
                   "catalogue/criteria/zh/c01_tool_call_pairing.md", "catalogue/criteria/zh/_shared.md"):
        assert needed in data
    # fnmatch's `*` crosses `/`, setuptools' glob does not: a file in a subfolder needs a pattern of its own
    folders = {Path(d).parent.as_posix() for d in data}
    assert folders <= {Path(pat).parent.as_posix() for pat in patterns} | {"."}, folders


def test_the_console_script_and_docs_claim_no_registry() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["scripts"]["harness-audit"] == "harness_audit.cli:console_main"
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        assert "pip install harness-audit" not in text and "pypi.org/project/harness-audit" not in text, doc
        assert "pip install 'harness-audit[" not in text, doc
