"""The terminal face of an audit: live per-check progress, the summary and the final line.

`TerminalProgress` observes the one progress event stream (`harness_audit.progress`). On a terminal it keeps
one rich row per check (state, findings, refusals, tokens, cost so far); anywhere else it prints one plain
line per event. Both go to stderr, so stdout stays for report paths or a report (`-o -`). The run directory of
a model run is printed as soon as it is known, for `cancel` and `resume`.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TextIO

from harness_audit.findings import CheckId, OutcomeStatus, Usage, Verdict
from harness_audit.messages import counted, localize, localize_detail, t
from harness_audit.progress import ProgressEvent, ProgressKind
from harness_audit.render.summary import final_line, money, tokens_text
from harness_audit.report import Price, Report

if TYPE_CHECKING:
    from rich.console import Console
    from rich.live import Live
    from rich.table import Table

_STATE_OF = {ProgressKind.CHECK_STARTED: "running", ProgressKind.CHECK_DONE: "ran",
             ProgressKind.NOT_COVERED: "not-covered", ProgressKind.CHECK_FAILED: "failed",
             ProgressKind.CANCELLED: "cancelled"}
_COLOUR = {"queued": "dim", "running": "cyan", "ran": "green", "not-covered": "yellow", "failed": "red",
           "cancelled": "magenta"}


@dataclass(slots=True)
class _Row:
    state: str = "queued"
    findings: int = 0
    refusals: int = 0
    usage: Usage | None = None
    cost: float | None = None


class TerminalProgress:
    """Observer that draws the progress stream: rich rows on a terminal, plain lines otherwise."""

    def __init__(self, checks: tuple[CheckId, ...], *, engine: str, language: str, price: Price | None = None,
                 stream: TextIO | None = None, live: bool | None = None) -> None:
        self.checks, self.engine, self.lang, self.price = checks, engine, language, price
        self.stream = stream or sys.stderr
        self.rows = {c: _Row() for c in checks}
        self.live_mode = self.stream.isatty() if live is None else live
        self._live: Live | None = None
        self._console: Console | None = None

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> TerminalProgress:
        if self.live_mode:
            from rich.live import Live

            from harness_audit.cli._helpers import console

            self._console = console(file=self.stream, highlight=False)
            self._live = Live(self._table(), console=self._console, refresh_per_second=4, transient=False)
            self._live.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        if self._live is not None:
            self._live.update(self._table())
            self._live.stop()
            self._live = None

    # ------------------------------------------------------------------ the observer
    def __call__(self, event: ProgressEvent) -> None:
        if event.kind is ProgressKind.RUN_DIR and event.paths:
            self._say(t("progress.run_dir", self.lang, path=event.paths[0]))
            return
        if event.kind is ProgressKind.REQUEST_DONE:
            # tokens and cost so far, redrawn on a terminal; a plain log waits for the check's own line
            if event.check in self.rows and event.usage is not None:
                row = self.rows[event.check]
                row.usage = event.usage
                row.cost = event.cost if event.cost is not None else self._cost(event.usage)
                if self._live is not None:
                    self._live.update(self._table())
            return
        if event.kind is ProgressKind.REQUEST_RETRY:
            unit = event.check.value if event.check is not None else "recon"
            self._say(t("progress.retry", self.lang, unit=unit, detail=localize_detail(event.detail or "", self.lang)))
            return
        if event.kind is ProgressKind.RECON_DONE:
            if not self.live_mode:
                self._say(t("progress.recon", self.lang, n=event.landmarks))
            return
        if event.check is None or event.check not in self.rows or event.kind not in _STATE_OF:
            return
        row = self.rows[event.check]
        row.state = _STATE_OF[event.kind]
        if event.kind is not ProgressKind.CHECK_STARTED:
            row.findings, row.refusals = event.findings, event.refusals
            row.usage = event.usage
            row.cost = event.cost if event.cost is not None else self._cost(event.usage)
        if self._live is not None:
            self._live.update(self._table())
        elif event.kind is not ProgressKind.CHECK_STARTED:
            self._say(self._line(event.check, row, event))

    # ------------------------------------------------------------------ drawing
    def _cost(self, usage: Usage | None) -> float | None:
        return None if usage is None or self.price is None else self.price.cost(usage)

    def _line(self, check: CheckId, row: _Row, event: ProgressEvent) -> str:
        state = t(f"state.{row.state}", self.lang)
        if row.state == "not-covered":
            return f"{t('progress.check', self.lang, check=check.value, state=state)} · " \
                   f"{t('progress.missing', self.lang, kinds=', '.join(k.value for k in event.missing))}"
        text = t("progress.check_counts", self.lang, check=check.value, state=state, findings=row.findings,
                 refused=row.refusals)
        if row.usage is not None and row.usage.requests:
            text += " · " + t("progress.tokens", self.lang, tokens=tokens_text(row.usage))
        if row.cost is not None:
            text += f" · {money(row.cost)}"
        if event.detail and row.state in ("failed", "cancelled"):
            text += f" · {localize_detail(event.detail, self.lang)}"
        return text

    def _table(self) -> Table:
        from rich.table import Table

        table = Table(title=t("progress.title", self.lang, engine=self.engine, checks=counted(len(self.checks), "check")),
                      title_justify="left", box=None, pad_edge=False)
        for key, justify in (("check", "right"), ("state", "left"), ("findings", "right"), ("refused", "right"),
                             ("tokens", "right"), ("cost", "right")):
            table.add_column(t(f"progress.col.{key}", self.lang), justify=justify)  # type: ignore[arg-type]
        for check, row in self.rows.items():
            colour = _COLOUR.get(row.state, "")
            ended = row.state not in ("queued", "running")
            table.add_row(check.value, f"[{colour}]{t(f'state.{row.state}', self.lang)}[/]",
                          str(row.findings) if ended else "", str(row.refusals) if ended else "",
                          tokens_text(row.usage) if row.usage is not None and row.usage.requests else "",
                          money(row.cost) if row.cost is not None else "")
        return table

    def _say(self, text: str) -> None:
        if self._live is not None:
            from rich.markup import escape

            self._live.console.print(escape(text), highlight=False, soft_wrap=True)
        else:
            print(text, file=self.stream, flush=True)


# ---------------------------------------------------------------------------------------------- summary


def print_summary(console: Console, report: Report, paths: list[Path], language: str, **final: Any) -> None:
    """The findings in one line each, what did not run, the report paths and the final line."""
    # every text from the tree, a model or the user goes through `escape`: a path like `q[/z]` or a claim with
    # `[/x]` is text to show, not markup (rich would raise, or drop `[masked]` silently)
    from rich.cells import cell_len
    from rich.markup import escape

    lang = language
    m = report.meta
    console.print("[bold]harness-audit[/] " + escape(t(
        "summary.header", lang, root=m.root, engine=m.engine, checks=counted(len(m.requested), "check"),
        files=counted(m.files_scanned, "file"),
        seconds=f"{m.duration_s:.2f}")) + (escape(t("summary.cached", lang)) if m.cache_hit else ""), soft_wrap=True)
    for f in report.findings[:40]:
        colour = "red" if f.verdict is Verdict.CONFIRMED else "yellow"
        where = f"{f.file}:{f.line}" if f.located else t("summary.check_level", lang)
        verdict = t(f"verdict.{f.verdict.value}", lang)
        verdict += " " * max(0, 9 - cell_len(verdict))  # Chinese labels are two cells per character
        console.print(f"  [{colour}]{f.check.value:>3} {escape(verdict)}[/] {escape(where)}  {escape(f.claim)}",
                      markup=True, highlight=False, soft_wrap=True)
    if len(report.findings) > 40:
        console.print(escape(t("summary.more", lang, n=len(report.findings) - 40)))
    for o in (o for o in report.outcomes if o.status is not OutcomeStatus.RAN):
        if o.missing_landmarks:
            why = t("progress.missing", lang, kinds=", ".join(k.value for k in o.missing_landmarks))
        else:
            why = localize(o.error, lang) if o.error else ""
        status = t(f"state.{o.status.value}", lang) + (f":{o.failure_code}" if o.failure_code else "")
        console.print(f"  [dim]{o.check.value:>3} {escape(status)}: {escape(why)}[/]", highlight=False)
    for p in paths:
        console.print(escape(t("summary.report", lang, path=p)), highlight=False, soft_wrap=True)
    console.print(f"[bold]{escape(final_line(report, lang, **final))}[/]", highlight=False, soft_wrap=True)
