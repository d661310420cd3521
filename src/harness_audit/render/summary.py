"""The one-line verdict of a run, shared by the terminal and the HTML report."""

from __future__ import annotations

from harness_audit.findings import OutcomeStatus, Usage, Verdict
from harness_audit.messages import counted, t
from harness_audit.report import Report


def money(value: float) -> str:
    """Dollars as the terminal and the reports show them."""
    return f"${value:,.4f}"


def tokens_text(u: Usage) -> str:
    """Input plus output tokens, `?` when the provider reported none."""
    return "?" if not u.known else f"{u.input_tokens + u.output_tokens:,}"


def cost_text(report: Report, language: str) -> str:
    """What the run cost: money when priced, $0 for engines without a model, else unknown."""
    total = report.total_usage
    if report.meta.price is not None:
        cost = report.meta.price.cost(total)
        return t("final.cost", language, money=money(cost)) if cost is not None else t("final.cost_unknown", language)
    if not total.requests and total.known:
        return t("final.cost", language, money=money(0.0))
    return t("final.cost_unknown", language)


def final_line(report: Report, language: str, *, baseline: tuple[int, int] | None = None) -> str:
    """The last line of every terminal run: clean or findings, not covered, skipped files, cost, CANCELLED."""
    lang = language
    counts = {v: sum(1 for f in report.findings if f.verdict is v) for v in Verdict}
    parts: list[str] = []
    if report.meta.state == "cancelled":
        parts.append(t("final.cancelled", lang))
    elif report.meta.state != "complete":
        parts.append(t("final.incomplete", lang))
    if report.findings:
        parts.append(t("final.findings", lang, n=len(report.findings), confirmed=counts[Verdict.CONFIRMED],
                       suspected=counts[Verdict.SUSPECTED], not_implemented=counts[Verdict.NOT_IMPLEMENTED]))
    else:
        parts.append(t("final.clean", lang))
    if baseline is not None:
        parts.append(t("final.baseline", lang, new=baseline[0], known=baseline[1]))
    not_covered = sum(1 for o in report.outcomes if o.status is not OutcomeStatus.RAN)
    parts.append(t("final.not_covered", lang, n=not_covered))
    parts.append(t("final.skipped", lang, files=counted(len(report.skipped_files), "file")))
    if report.unparsed_files:
        parts.append(t("final.unparsed", lang, n=len(report.unparsed_files)))
    if report.refusals:
        parts.append(t("final.refused", lang, n=len(report.refusals)))
    if report.suppressed:
        parts.append(t("final.suppressed", lang, n=len(report.suppressed)))
    if report.withheld:
        parts.append(t("final.withheld", lang, n=len(report.withheld)))
    total = report.total_usage
    parts.append(cost_text(report, lang))
    if total.requests:
        parts.append(t("final.tokens", lang, tokens=tokens_text(total)))
    return " · ".join(parts)
