"""The HTML report without a browser: self-contained, escaped, in the report's language."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from harness_audit.api import audit
from harness_audit.render.html import render_html

EXAMPLE = Path(__file__).parent.parent / "examples" / "agent_loop"


def _report(tmp_path: Path) -> object:
    return audit(EXAMPLE, ["all"], overrides={"output_dir": str(tmp_path)}, write=False).report


def test_one_file_that_fetches_nothing(tmp_path: Path) -> None:
    page = render_html(_report(tmp_path))  # type: ignore[arg-type]
    assert "default-src 'none'" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "<link" not in page and "@import" not in page and "url(" not in page


def test_text_from_the_tree_is_escaped_and_code_spans_become_code(tmp_path: Path) -> None:
    report = _report(tmp_path)
    f = report.findings[0]  # type: ignore[attr-defined]
    hostile = dataclasses.replace(f, claim="<script>alert(1)</script> calls `json.loads` <b>")
    page = render_html(dataclasses.replace(report, findings=(hostile, *report.findings[1:])))  # type: ignore[attr-defined]
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt; calls <code>json.loads</code> &lt;b&gt;" in page


def test_zh_page(tmp_path: Path) -> None:
    report = _report(tmp_path)
    page = render_html(dataclasses.replace(report, meta=dataclasses.replace(report.meta, language="zh")))  # type: ignore[attr-defined]
    assert '<html lang="zh-CN">' in page and "检查项 × 判定" in page and "各检查项成本" in page
