"""Inline fixture markers (`# expect: C8`, `# todo-expect-not: C9` …) and their placement rules."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["expect", "expect-not", "todo-expect", "todo-expect-not"]

_MARKER = re.compile(
    r"(?:#|//)\s*(?P<kind>todo-expect-not|todo-expect|expect-not|expect):\s*(?P<check>[Cc]\d+)"
    r"(?:\s+(?P<verdict>confirmed|suspected|not-implemented))?(?:\s+(?P<rule>[a-z0-9][a-z0-9-]*))?\s*$"
)
_CHECKS_HEADER = re.compile(r"^\s*(?:#|//)\s*checks:\s*(?P<ids>.+)$")


@dataclass(frozen=True, slots=True)
class Marker:
    """One marker, attached to the line it applies to."""

    kind: Kind
    check: str
    line: int
    verdict: str | None
    rule: str | None


@dataclass(frozen=True, slots=True)
class MarkedFile:
    """A fixture's markers and its optional `# checks:` header."""

    markers: tuple[Marker, ...]
    checks: tuple[str, ...] | None


def parse_markers(text: str) -> MarkedFile:
    """Markers of a fixture: trailing ones apply to their own line, standalone ones to the next code line."""
    lines = text.splitlines()
    markers: list[Marker] = []
    pending: list[re.Match[str]] = []
    checks: tuple[str, ...] | None = None
    for number, raw in enumerate(lines, start=1):
        header = _CHECKS_HEADER.match(raw)
        if header:
            checks = tuple(c.upper() for c in re.split(r"[\s,]+", header.group("ids").strip()) if c)
            continue
        m = _MARKER.search(raw)
        code = raw[: m.start()].strip() if m else raw.strip()
        if m and not code:
            pending.append(m)
            continue
        if not code:
            continue
        found = [*pending, *([m] if m else [])]
        pending = []
        for hit in found:
            markers.append(Marker(hit.group("kind"), hit.group("check").upper(), number,  # type: ignore[arg-type]
                                  hit.group("verdict"), hit.group("rule")))
    return MarkedFile(tuple(markers), checks)
