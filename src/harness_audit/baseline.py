"""Baselines: compare two JSON reports by finding fingerprint (`harness-audit diff`, `--baseline OLD.json`).

Fingerprints carry no line number and repeated ones are numbered by content, so a finding keeps its identity
when lines move or findings come in another order. A finding is new when its fingerprint is not in the old
report, fixed when it is no longer in the new one, and its verdict changed when both have it with different
verdicts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from harness_audit.errors import UsageError, os_reason
from harness_audit.messages import Msg


@dataclass(frozen=True, slots=True, kw_only=True)
class Diff:
    """What changed between two reports."""

    new: tuple[dict[str, Any], ...]
    """Findings of the new report whose fingerprint the old one lacks."""
    fixed: tuple[dict[str, Any], ...]
    """Findings of the old report that the new one no longer has."""
    unchanged: tuple[dict[str, Any], ...]
    """Findings in both, with the same verdict (as the new report has them)."""
    verdict_changed: tuple[tuple[dict[str, Any], dict[str, Any]], ...]
    """(old, new) pairs of the same finding whose verdict moved."""


def load_report(path: str | Path, *, role: Literal["baseline", "old", "new"] = "baseline") -> dict[str, Any]:
    """A harness-audit JSON report from `path`; anything else is a `UsageError` naming the file and its `role`."""
    p = Path(path).expanduser()
    what = Msg(f"what.{role}_report")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError("err.baseline.missing", role=what, path=str(path)) from None
    except UnicodeDecodeError:
        raise UsageError("err.baseline.not_utf8", role=what, path=str(path)) from None
    except OSError as exc:
        raise UsageError("err.baseline.unreadable", role=what, path=str(path), reason=os_reason(exc)) from None
    except ValueError:
        raise UsageError("err.baseline.not_json", role=what, path=str(path)) from None
    if not isinstance(data, dict) or "schema_version" not in data or not isinstance(data.get("findings"), list):
        raise UsageError("err.baseline.not_report", role=what, path=str(path))
    findings: list[Any] = data["findings"]  # pyright: ignore[reportUnknownVariableType]
    for f in findings:
        if not isinstance(f, dict) or not isinstance(f.get("fingerprint"), str):
            raise UsageError("err.baseline.no_fingerprint", role=what, path=str(path))
    return data  # pyright: ignore[reportUnknownVariableType]


def _by_fingerprint(findings: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    return {str(f["fingerprint"]): dict(f) for f in findings}


def compare(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> Diff:
    """New, fixed, unchanged and verdict-changed findings between two reports' `findings` lists."""
    a, b = _by_fingerprint(old), _by_fingerprint(new)
    return Diff(
        new=tuple(f for fp, f in b.items() if fp not in a),
        fixed=tuple(f for fp, f in a.items() if fp not in b),
        unchanged=tuple(f for fp, f in b.items() if fp in a and a[fp].get("verdict") == f.get("verdict")),
        verdict_changed=tuple((a[fp], f) for fp, f in b.items() if fp in a and a[fp].get("verdict") != f.get("verdict")),
    )


def known_findings(path: str | Path) -> dict[str, str]:
    """Fingerprint → verdict of a baseline report's findings (what `--baseline` does not gate on again)."""
    return {str(f["fingerprint"]): str(f.get("verdict")) for f in load_report(path)["findings"]}
