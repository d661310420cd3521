"""The check picker: a real checklist on the terminal, shown when an audit is started with no selection.

The fifteen checks in catalogue order (C1…C15, never re-sorted) under the two presets, each with its
plain-language gloss; ★ marks priority 1 and a legend says what it means. ↑/↓ (or j/k) move, space ticks,
Enter runs what is ticked, and Enter with nothing ticked runs `p1`. Esc, q, Ctrl-D and Ctrl-C cancel: the
caller exits 130 and writes no report. Drawn on stderr, so stdout stays for report paths or a report.
"""

from __future__ import annotations

import os
import select
import sys
import termios
import tty
from dataclasses import dataclass
from typing import TextIO

from harness_audit.catalogue import CHECKS, P1
from harness_audit.findings import CheckId
from harness_audit.messages import t

_ESC_WAIT_S = 0.05
"""How long to wait after ESC for the rest of an arrow key's sequence before reading ESC as "cancel"."""


class PickerCancelled(Exception):
    """The user left the picker without choosing (Esc, q, Ctrl-D, Ctrl-C)."""


@dataclass(slots=True)
class _Row:
    token: str
    """`p1`, `all` or a check id."""
    label: str


def _rows(lang: str) -> list[_Row]:
    rows = [_Row("p1", f"p1   {t('picker.p1', lang)}"), _Row("all", f"all  {t('picker.all', lang)}")]
    for check, spec in CHECKS.items():  # catalogue order, as the report lists them
        star = "★" if spec.priority == 1 else " "
        rows.append(_Row(check.value, f"{check.value:<4}{star} {t(f'check.{check}', lang)} — {spec.gloss(lang)}"))
    return rows


def _selection(ticked: set[CheckId]) -> list[str]:
    if not ticked:
        return ["p1"]
    if ticked == set(CHECKS):
        return ["all"]
    if ticked == set(P1):
        return ["p1"]
    return [",".join(c.value for c in CHECKS if c in ticked)]


def _members(token: str) -> set[CheckId]:
    if token == "p1":
        return set(P1)
    if token == "all":
        return set(CHECKS)
    return {CheckId(token)}


def _read_key(fd: int) -> str:
    """One key: a character, or `up`/`down` for arrow sequences, `esc` for a lone Escape, `eof` at end of input."""
    data = os.read(fd, 1)
    if not data or data == b"\x04":
        return "eof"
    if data == b"\x1b":
        ready, _, _ = select.select([fd], [], [], _ESC_WAIT_S)
        if not ready:
            return "esc"
        rest = os.read(fd, 2)
        return {b"[A": "up", b"OA": "up", b"[B": "down", b"OB": "down"}.get(rest, "other")
    return data.decode("utf-8", "replace")


def pick(language: str, *, fd: int | None = None, out: TextIO | None = None) -> list[str]:
    """Show the checklist and return the chosen selection tokens; raises `PickerCancelled` on Esc, q or Ctrl-D."""
    fd = sys.stdin.fileno() if fd is None else fd
    out = out or sys.stderr
    rows = _rows(language)
    ticked: set[CheckId] = set()
    cursor = 0
    drawn = 0

    def draw() -> None:
        nonlocal drawn
        lines = [f"\x1b[1m{t('picker.title', language)}\x1b[0m", t("picker.keys", language),
                 t("picker.legend", language), ""]
        for i, row in enumerate(rows):
            members = _members(row.token)
            mark = "x" if members <= ticked else ("-" if members & ticked else " ")
            pointer = "›" if i == cursor else " "
            lines.append(f"{pointer} [{mark}] {row.label}")
        if drawn:
            out.write(f"\x1b[{drawn}F")  # back to the first line drawn, then overwrite it all
        out.write("".join(f"\x1b[2K{line}\r\n" for line in lines))
        out.flush()
        drawn = len(lines)

    saved = termios.tcgetattr(fd)
    try:
        tty.setcbreak(fd)
        new = termios.tcgetattr(fd)
        new[3] &= ~termios.ISIG  # Ctrl-C arrives as a key and cancels the picker like Esc
        termios.tcsetattr(fd, termios.TCSANOW, new)
        draw()
        while True:
            key = _read_key(fd)
            if key in ("esc", "eof", "q", "\x03"):
                raise PickerCancelled
            if key in ("\r", "\n"):
                chosen = _selection(ticked)
                out.write(t("picker.chosen", language, checks=" ".join(chosen)) + "\r\n")
                out.flush()
                return chosen
            if key in ("up", "k"):
                cursor = (cursor - 1) % len(rows)
            elif key in ("down", "j"):
                cursor = (cursor + 1) % len(rows)
            elif key == " ":
                members = _members(rows[cursor].token)
                ticked = ticked - members if members <= ticked else ticked | members
            draw()
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
