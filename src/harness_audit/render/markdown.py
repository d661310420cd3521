"""The Markdown report for people. Fixed structure; text from audited code is escaped."""

from __future__ import annotations

import re

from harness_audit.catalogue import CHECKS
from harness_audit.findings import Finding, OutcomeStatus, Usage, Verdict
from harness_audit.leads import LeadStatus
from harness_audit.report import Report

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|!])")


def inline(text: str) -> str:
    """Escape text for one line of Markdown (no structure can be injected)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def cell(text: str) -> str:
    """Escape text for a table cell."""
    return inline(text) or "—"


def code(text: str) -> str:
    """An inline code span that survives backticks inside `text` (no escaping applies inside spans)."""
    flat = " ".join(text.split())
    longest = max((len(m) for m in re.findall(r"`+", flat)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def tcode(text: str) -> str:
    """A code span inside a table cell: pipes escaped so they cannot end the cell."""
    return code(text).replace("|", "\\|")


def fence(text: str, lang: str = "") -> str:
    """A code fence longer than any backtick run inside `text`."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:,.4f}"


def _tokens(u: Usage, n: int) -> str:
    return "unknown" if not u.known else f"{n:,}"


def _finding(f: Finding) -> list[str]:
    spec = CHECKS[f.check]
    where = code(f"{f.file}:{f.line}") if f.located and f.file else "check-level"
    out = [f"### {f.check} · {inline(spec.title)} — {where}", "", f"**Claim.** {inline(f.claim)}", ""]
    if f.also_at:
        out += [f"**Same code also at** {', '.join(code(a) for a in f.also_at)} (other builds of the same source).", ""]
    if f.evidence:
        out += [fence(f.evidence, "python" if f.language == "python" else (f.language or "")), ""]
    out.append(f"**Consequence.** {inline(f.consequence)}")
    if f.direction:
        out += ["", f"**Fix direction.** {inline(f.direction)}"]
    if f.verdict is Verdict.SUSPECTED:
        out += ["", f"**To confirm.** {inline(f.confirm_hint)}"]
    out += ["", f"<sub>source {code(f.source)} · fingerprint {code(f.fingerprint)}</sub>", ""]
    return out


def _leads(r: Report) -> list[str]:
    """Every static lead handed to the model and how it ended; dismissed ones with the model's reason."""
    counts = {s: len(r.leads_with(s)) for s in LeadStatus}
    out = ["## Static leads", "",
           f"{len(r.leads)} static leads were handed to the model: {counts[LeadStatus.CONFIRMED]} confirmed, "
           f"{counts[LeadStatus.DISMISSED]} dismissed, {counts[LeadStatus.UNADDRESSED]} unaddressed. "
           "An unaddressed lead keeps its static verdict and is listed with the findings above; a dismissed one "
           "is not a finding, and the model's reason is shown so a reader can judge it.", "",
           "| lead | check | where | static verdict | status | reason |", "|---|---|---|---|---|---|"]
    for lead in r.leads:
        f = lead.finding
        where = tcode(f"{f.file}:{f.line}") if f.located else "check-level"
        out.append(f"| {lead.lead_id} | {lead.check} | {where} | {f.verdict} | {lead.status} | "
                   f"{cell(lead.reason or '')} |")
    out.append("")
    return out


def render_markdown(r: Report) -> str:
    """Render the whole report."""
    m = r.meta
    commit = "not a git repository" if m.commit is None else f"`{m.commit[:12]}`" + (" (dirty)" if m.dirty else "")
    state = {"complete": "complete", "cancelled": "**CANCELLED** — partial results",
             "incomplete": "**INCOMPLETE** — partial results"}.get(m.state, m.state)
    out: list[str] = [
        "# harness-audit report", "",
        f"- **Target:** {code(m.root)}",
        f"- **Commit:** {commit}",
        f"- **Engine:** {m.engine}" + (f" · **model:** {code(m.model)}" if m.model else "")
        + (f" at {code(m.base_url)}" if m.base_url else "") + f" · **checks:** {', '.join(m.requested)}",
        f"- **Run:** `{m.run_id}` · started {m.started_at} · {m.duration_s:.2f} s · {state}",
        f"- **Files:** {m.files_scanned} analysed, {len(r.skipped_files)} skipped, {len(r.unparsed_files)} unparsed",
    ]
    if m.resumed:
        out.append(f"- **Resumed:** {', '.join(m.resumed)} carried over from the interrupted run")
    if m.ledger:
        out.append(f"- **Ledger:** {code(m.ledger)}")
    out += [f"- **Note:** {inline(n)}" for n in m.notes]
    out += [
        "",
        "## Summary", "",
        "| group | checks | confirmed | suspected | not implemented | not covered |",
        "|---|---|---:|---:|---:|---|",
    ]
    for g in r.groups:
        nc = ", ".join(g.not_covered) or "—"
        out.append(f"| {g.group}. {g.title} | {', '.join(g.checks)} | {g.confirmed} | {g.suspected} | "
                   f"{g.not_implemented} | {nc} |")
    out.append("")
    sections = [
        ("Confirmed", Verdict.CONFIRMED, "No confirmed findings."),
        ("Suspected", Verdict.SUSPECTED, "No suspected findings."),
        ("Not implemented", Verdict.NOT_IMPLEMENTED, "No check reported a missing subsystem."),
    ]
    for title, verdict, empty in sections:
        mine = [f for f in r.findings if f.verdict is verdict]
        out += [f"## {title} ({len(mine)})", ""]
        if not mine:
            out += [empty, ""]
        for f in mine:
            out += _finding(f)
    not_covered = [o for o in r.outcomes if o.status is not OutcomeStatus.RAN]
    out += ["## Not covered", ""]
    if not not_covered:
        out += ["Every requested check ran to completion.", ""]
    else:
        out += ["These checks did not run to completion; no result here means **not looked at**, not clean.", "",
                "| check | status | why |", "|---|---|---|"]
        for o in not_covered:
            if o.missing_landmarks:
                why = "missing landmarks: " + ", ".join(k.value for k in o.missing_landmarks)
            else:
                why = o.error or "—"
            out.append(f"| {o.check} · {CHECKS[o.check].title} | {o.status_text} | {cell(why)} |")
        out.append("")
    if r.leads:
        out += _leads(r)
    total = r.total_usage
    out += ["## Cost", "",
            f"Wall time {m.duration_s:.2f} s · input {_tokens(total, total.input_tokens)} · output "
            f"{_tokens(total, total.output_tokens)} · cache read {_tokens(total, total.cache_read_tokens)} · "
            f"cache write {_tokens(total, total.cache_write_tokens)} · reasoning "
            f"{_tokens(total, total.reasoning_tokens)} tokens"
            + (f" · {_money(m.price.cost(total))}" if m.price else "")
            + (" · result cache hit" if m.cache_hit else ""), "",
            "| unit | status | time (s) | requests | input | output | cache read | cache write | reasoning | "
            + ("cost | " if m.price else "") + "findings | refusals |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if m.price else "") + "---:|---:|"]

    def usage_cells(u: Usage) -> str:
        cells = [str(u.requests), _tokens(u, u.input_tokens), _tokens(u, u.output_tokens),
                 _tokens(u, u.cache_read_tokens), _tokens(u, u.cache_write_tokens), _tokens(u, u.reasoning_tokens)]
        if m.price:
            cells.append(_money(m.price.cost(u)))
        return " | ".join(cells)

    if r.recon_usage is not None:
        recon_refusals = sum(1 for x in r.refusals if x.subject == "landmark")
        out.append(f"| recon | — | — | {usage_cells(r.recon_usage)} | — | {recon_refusals} |")
    if r.analysis_usage is not None:
        out.append(f"| analysis | — | — | {usage_cells(r.analysis_usage)} | — | — |")
    for o in r.outcomes:
        resumed = " (resumed)" if o.check in m.resumed else ""
        out.append(f"| {o.check} | {o.status_text}{resumed} | {o.duration_s:.3f} | {usage_cells(o.usage)} | "
                   f"{r.findings_for(o.check)} | {r.refusals_for(o.check)} |")
    out += ["", "Refusals by reason (findings and landmarks):", "", "| reason | count |", "|---|---:|"]
    out += [f"| {reason} | {n} |" for reason, n in r.refusal_counts.items()]
    out.append("")
    if r.skipped_files or r.unparsed_files:
        out += ["## Files left out", "", "| file | why |", "|---|---|"]
        out += [f"| {tcode(s.path)} | skipped: {cell(s.reason)} |" for s in r.skipped_files]
        out += [f"| {tcode(s.path)} | unparsed: {cell(s.reason)} |" for s in r.unparsed_files]
        out.append("")
    if r.analysis is not None:
        out += ["## Cross-check analysis (model inference — not validated by evidence)", "",
                "This section was written by the model about interactions between the findings above. "
                "Nothing in it passed the evidence gate; treat it as a hypothesis.", "", inline(r.analysis), ""]
    out += ["## Appendix: landmarks", ""]
    if not r.landmarks:
        out += ["Recon found no landmarks.", ""]
    else:
        out += ["| kind | file | line | symbol | confidence |", "|---|---|---:|---|---|"]
        out += [f"| {lm.kind} | {tcode(lm.file)} | {lm.line} | {cell(lm.symbol or '')} | {lm.confidence} |"
                for lm in r.landmarks]
        out.append("")
    return "\n".join(out)
