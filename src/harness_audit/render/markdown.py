"""The Markdown report for people. Fixed structure; text from audited code is escaped, code spans stay code.

Fixed text comes from the message catalogue in the report's language; findings keep their own words. Each
finding shows the lines around it; findings of other checks at the same site with the same verdict are shown
with it (one root cause, one block), and a block names the other verdicts' blocks at its site; tables that would
hold only zeros and the landmark appendix are folded into `<details>`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from harness_audit.findings import CheckOutcome, Finding, OutcomeStatus, Usage, Verdict
from harness_audit.leads import LeadStatus
from harness_audit.messages import localize, t
from harness_audit.report import Report, SiteBlocks

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|!])")
_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
"""A code span as rules and models write them in claims: `name`, ``a `b` c``."""
_FENCE_LANG = {"python": "python", "typescript": "typescript", "javascript": "javascript", "trace": "json"}


def inline(text: str) -> str:
    """Escape text for one line of Markdown (no structure can be injected)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def prose(text: str, *, in_table: bool = False) -> str:
    """One line of Markdown that keeps the text's code spans as real code and escapes everything else (inside a
    table, pipes in the spans too, so they cannot end the cell)."""
    flat = " ".join(text.split())
    span = tcode if in_table else code
    out: list[str] = []
    pos = 0
    for m in _SPAN.finditer(flat):
        out.append(_MD_SPECIAL.sub(r"\\\1", flat[pos:m.start()]))
        out.append(span(m.group(2)))
        pos = m.end()
    out.append(_MD_SPECIAL.sub(r"\\\1", flat[pos:]))
    return "".join(out)


def cell(text: str) -> str:
    """Escape text for a table cell."""
    return inline(text) or "—"


def prose_cell(text: str) -> str:
    """A table cell of prose (a claim, a reason) whose code spans stay code."""
    return prose(text, in_table=True) or "—"


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


def _money(value: float | None, lang: str) -> str:
    return t("md.unknown", lang) if value is None else f"${value:,.4f}"


def _tokens(u: Usage, n: int, lang: str) -> str:
    return t("md.unknown", lang) if not u.known else f"{n:,}"


def title(check: str, lang: str) -> str:
    """A check's title in the report's language."""
    return t(f"check.{check}", lang)


def _status(o: CheckOutcome, lang: str) -> str:
    """An outcome's status: its wire value (`failed:timeout`) in English, translated words otherwise."""
    if lang == "en":
        return o.status_text
    return t(f"state.{o.status.value}", lang) + (f":{o.failure_code}" if o.failure_code else "")


def _excerpt(f: Finding, r: Report) -> str:
    """The cited lines with a few around them, numbered, the cited line marked; the quoted excerpt as fallback."""
    lang = _FENCE_LANG.get(f.language or "", "")
    snippet = r.snippets.get(f.fingerprint)
    if snippet is None or not f.line:
        return fence(f.evidence, lang)
    span = max(1, len([x for x in f.evidence.splitlines() if x.strip()]))
    width = len(str(snippet.first + len(snippet.lines) - 1))
    rows = []
    for i, line in enumerate(snippet.lines):
        number = snippet.first + i
        mark = ">" if f.line <= number < f.line + span else " "
        rows.append(f"{mark} {number:>{width}} │ {line}".rstrip())
    return fence("\n".join(rows), lang)


def _body(f: Finding, r: Report, lang: str) -> list[str]:
    """Claim, code, consequence, fix and source of one finding."""
    out = [f"**{t('md.claim', lang)}** {prose(f.claim)}", ""]
    if f.also_at:
        out += [t("md.also_at", lang, where=", ".join(code(a) for a in f.also_at)), ""]
    if f.evidence:
        out += [_excerpt(f, r), ""]
    out.append(f"**{t('md.consequence', lang)}** {prose(f.consequence)}")
    if f.direction:
        out += ["", f"**{t('md.fix', lang)}** {prose(f.direction)}"]
    if f.verdict is Verdict.SUSPECTED:
        out += ["", f"**{t('md.to_confirm', lang)}** {prose(f.confirm_hint)}"]
    lead = t("md.source_lead", lang, lead=code(f.lead)) if f.lead else ""
    out += ["", f"<sub>{t('md.source', lang, source=code(f.source), fingerprint=code(f.fingerprint))}{lead}</sub>", ""]
    return out


def _finding(f: Finding, r: Report, lang: str, blocks: SiteBlocks) -> list[str]:
    """One block: the finding, other checks' findings at its site with its verdict (each with its own code, whose
    marked lines are its own quote), and the other verdicts' blocks at the site by name."""
    where = code(f"{f.file}:{f.line}") if f.located and f.file else t("md.check_level", lang)
    others = blocks.folded.get(f.fingerprint, ())
    heading = f"{f.check} · {inline(title(f.check, lang))}" + "".join(
        f", {o.check} · {inline(title(o.check, lang))}" for o in others)
    out = [f"### {heading} — {where}", "", *_body(f, r, lang)]
    for o in others:
        verdict = t(f"verdict.{o.verdict.value}", lang)
        out += [f"**{t('md.same_site', lang, checks=f'{o.check} ({verdict})')}**", "", *_body(o, r, lang)]
    elsewhere = blocks.elsewhere.get(f.fingerprint, ())
    if elsewhere:
        checks = ", ".join(f"{o.check} ({t(f'verdict.{o.verdict.value}', lang)})" for o in elsewhere)
        out += [t("md.same_site_elsewhere", lang, checks=checks), ""]
    return out


def _not_covered(r: Report, lang: str) -> list[str]:
    not_covered = [o for o in r.outcomes if o.status is not OutcomeStatus.RAN]
    out = [f"## {t('md.not_covered', lang)}", ""]
    if not not_covered:
        return [*out, t("md.all_ran", lang), ""]
    out += [t("md.not_covered_intro", lang), "",
            f"| {t('md.col.check', lang)} | {t('md.col.status', lang)} | {t('md.col.why', lang)} |", "|---|---|---|"]
    for o in not_covered:
        if o.missing_landmarks:
            why = t("md.missing", lang, kinds=", ".join(k.value for k in o.missing_landmarks))
        else:
            why = localize(o.error, lang) if o.error else "—"
        out.append(f"| {o.check} · {inline(title(o.check, lang))} | {_status(o, lang)} | {cell(why)} |")
    return [*out, ""]


def _host_cost(r: Report, lang: str, calls: Mapping[str, int]) -> list[str]:
    """A host run's spend as we see it: protocol calls and wall time per unit; the host's tokens are its own."""
    m = r.meta
    line = t("md.cost_host", lang, seconds=f"{m.duration_s:.2f}", calls=sum(calls.values()))
    cols = ("unit", "status", "time", "protocol_calls", "findings", "refusals")
    recon_time = "—" if m.recon_duration_s is None else f"{m.recon_duration_s:.3f}"
    recon_refusals = sum(1 for x in r.refusals if x.subject == "landmark")
    table = ["| " + " | ".join(t(f"md.col.{c}", lang) for c in cols) + " |", "|---|---|---:|---:|---:|---:|",
             f"| recon | — | {recon_time} | {calls.get('recon', 0)} | — | {recon_refusals} |"]
    for o in r.outcomes:
        handed_out = o.status in (OutcomeStatus.RAN, OutcomeStatus.FAILED)
        table.append(f"| {o.check} | {_status(o, lang)} | {f'{o.duration_s:.3f}' if handed_out else '—'} | "
                     f"{calls.get(o.check.value, 0)} | {r.findings_for(o.check)} | {r.refusals_for(o.check)} |")
    return [f"## {t('md.cost', lang)}", "", line, "", *table, ""]


def _refusals(r: Report, lang: str) -> list[str]:
    """Refusals per reason, then each one folded away: what was turned away, where it pointed, and why (the
    submitted check and path are the auditor's text: escaped)."""
    counts = {reason: n for reason, n in r.refusal_counts.items() if n}
    if not counts:
        return [t("md.no_refusals", lang), ""]
    cols = ("subject", "check", "submitted", "reason")
    rows = [f"| {t(f'md.subject.{x.subject}', lang)} | {cell(x.check or '')} | "
            f"{tcode(x.file + (f':{x.line}' if x.line else '')) if x.file else '—'} | {x.reason.value} |"
            for x in r.refusals]
    return [t("md.refusals", lang), "", f"| {t('md.col.reason', lang)} | {t('md.col.count', lang)} |",
            "|---|---:|", *(f"| {reason} | {n} |" for reason, n in counts.items()), "",
            "<details>", f"<summary>{t('md.refusal_list', lang, n=len(r.refusals))}</summary>", "",
            "| " + " | ".join(t(f"md.col.{c}", lang) for c in cols) + " |", "|---|---|---|---|", *rows, "",
            "</details>", ""]


def _cost(r: Report, lang: str) -> list[str]:
    m = r.meta
    if m.protocol_calls is not None:
        return [*_host_cost(r, lang, m.protocol_calls), *_refusals(r, lang)]
    total = r.total_usage
    used_model = total.requests > 0 or not total.known or r.recon_usage is not None
    out = [f"## {t('md.cost', lang)}", ""]
    seconds = f"{m.duration_s:.2f}"
    if used_model:
        line = t("md.cost_line", lang, seconds=seconds, input=_tokens(total, total.input_tokens, lang),
                 output=_tokens(total, total.output_tokens, lang),
                 cache_read=_tokens(total, total.cache_read_tokens, lang),
                 cache_write=_tokens(total, total.cache_write_tokens, lang),
                 reasoning=_tokens(total, total.reasoning_tokens, lang))
        line += f" · {_money(m.price.cost(total), lang)}" if m.price else ""
    else:
        line = t("md.cost_static", lang, seconds=seconds)
    out += [line + (f" · {t('md.cache_hit', lang)}" if m.cache_hit else ""), ""]
    cols = ["unit", "status", "time", "requests", "input", "output", "cache_read", "cache_write", "reasoning"]
    cols += ["cost"] if m.price else []
    cols += ["findings", "refusals"]
    table = ["| " + " | ".join(t(f"md.col.{c}", lang) for c in cols) + " |",
             "|---|---|" + "---:|" * (len(cols) - 2)]

    def usage_cells(u: Usage) -> str:
        cells = [str(u.requests), _tokens(u, u.input_tokens, lang), _tokens(u, u.output_tokens, lang),
                 _tokens(u, u.cache_read_tokens, lang), _tokens(u, u.cache_write_tokens, lang),
                 _tokens(u, u.reasoning_tokens, lang)]
        if m.price:
            cells.append(_money(m.price.cost(u), lang))
        return " | ".join(cells)

    if r.recon_usage is not None:
        recon_refusals = sum(1 for x in r.refusals if x.subject == "landmark")
        table.append(f"| recon | — | — | {usage_cells(r.recon_usage)} | — | {recon_refusals} |")
    if r.analysis_usage is not None:
        table.append(f"| analysis | — | — | {usage_cells(r.analysis_usage)} | — | — |")
    for o in r.outcomes:
        resumed = f" {t('md.resumed_mark', lang)}" if o.check in m.resumed else ""
        table.append(f"| {o.check} | {_status(o, lang)}{resumed} | {o.duration_s:.3f} | {usage_cells(o.usage)} | "
                     f"{r.findings_for(o.check)} | {r.refusals_for(o.check)} |")
    if used_model:
        out += [*table, ""]
    else:  # a static run: every token cell is zero; the table is there for the times, out of the way
        out += ["<details>", f"<summary>{t('md.per_check', lang)}</summary>", "", *table, "", "</details>", ""]
    return [*out, *_refusals(r, lang)]


def _leads(r: Report, lang: str) -> list[str]:
    """Every static lead handed to the model and how it ended; dismissed ones with the model's reason."""
    counts = {s: len(r.leads_with(s)) for s in LeadStatus}
    cols = ("lead", "check", "where", "static_verdict", "status", "reason")
    out = [f"## {t('md.leads', lang)}", "",
           t("md.leads_intro", lang, n=len(r.leads), confirmed=counts[LeadStatus.CONFIRMED],
             dismissed=counts[LeadStatus.DISMISSED], unaddressed=counts[LeadStatus.UNADDRESSED]), "",
           "| " + " | ".join(t(f"md.col.{c}", lang) for c in cols) + " |", "|---|---|---|---|---|---|"]
    for lead in r.leads:
        f = lead.finding
        where = tcode(f"{f.file}:{f.line}") if f.located else t("md.check_level", lang)
        out.append(f"| {lead.lead_id} | {lead.check} | {where} | {f.verdict} | {lead.status} | "
                   f"{prose_cell(lead.reason or '')} |")
    out.append("")
    return out


def _suppressed(r: Report, lang: str) -> list[str]:
    out: list[str] = []
    if not r.suppressions_applied:
        out += [f"## {t('md.suppressed', lang)}", "", t("md.suppressions_off", lang), ""]
    elif r.suppressed or r.suppression_problems:
        out += [f"## {t('md.suppressed', lang)} ({len(r.suppressed)})", "", t("md.suppressed_intro", lang), ""]
        if r.suppressed:
            out += [f"| {t('md.col.check', lang)} | {t('md.col.where', lang)} | {t('md.col.reason', lang)} | "
                    f"{t('md.col.claim', lang)} |", "|---|---|---|---|"]
            out += [f"| {x.finding.check} | {tcode(f'{x.finding.file}:{x.finding.line}')} | {prose_cell(x.reason)} | "
                    f"{prose_cell(x.finding.claim)} |" for x in r.suppressed]
            out.append("")
        if r.suppression_problems:
            out += [t("md.suppression_problems", lang), "", *(f"- {inline(localize(p, lang))}" for p in r.suppression_problems), ""]
    return out


def _withheld(r: Report, lang: str) -> list[str]:
    if not r.withheld:
        return []
    out = [f"## {t('md.withheld', lang)} ({len(r.withheld)})", "", t("md.withheld_intro", lang, floor=r.min_precision), "",
           f"| {t('md.col.check', lang)} | {t('md.col.where', lang)} | {t('md.col.rule', lang)} | "
           f"{t('md.col.record', lang)} | {t('md.col.claim', lang)} |", "|---|---|---|---|---|"]
    out += [f"| {x.finding.check} | {tcode(f'{x.finding.file}:{x.finding.line}')} | {tcode(x.precision.rule)} | "
            f"{t('md.withheld_record', lang, true=x.precision.true, judged=x.precision.judged, estimate=x.precision.percent)} | "
            f"{prose_cell(x.finding.claim)} |" for x in r.withheld]
    out.append("")
    return out


def render_markdown(r: Report) -> str:
    """Render the whole report."""
    m = r.meta
    lang = m.language
    commit = t("md.not_git", lang) if m.commit is None else f"`{m.commit[:12]}`" + (
        f" ({t('md.dirty', lang)})" if m.dirty else "")
    state = t(f"md.state.{m.state}", lang) if m.state in ("complete", "cancelled", "incomplete") else m.state
    out: list[str] = [
        f"# {t('md.title', lang)}", "",
        f"- **{t('md.target', lang)}:** {code(m.root)}",
        f"- **{t('md.commit', lang)}:** {commit}",
        f"- **{t('md.engine', lang)}:** {m.engine}" + (f" · **{t('md.model', lang)}:** {code(m.model)}" if m.model else "")
        + (f" at {code(m.base_url)}" if m.base_url else "") + f" · **{t('md.checks', lang)}:** {', '.join(m.requested)}",
        f"- **{t('md.run', lang)}:** `{m.run_id}` · {t('md.started', lang, when=m.started_at)} · "
        f"{t('md.seconds', lang, n=f'{m.duration_s:.2f}')} · {state}",
        f"- **{t('md.files', lang)}:** " + t("md.files_line", lang, scanned=m.files_scanned,
                                            skipped=len(r.skipped_files), unparsed=len(r.unparsed_files)),
    ]
    if m.resumed:
        out.append(f"- **{t('md.resumed', lang)}:** {t('md.resumed_line', lang, checks=', '.join(m.resumed))}")
    if m.ledger:
        out.append(f"- **{t('md.ledger', lang)}:** {code(m.ledger)}")
    out += [f"- **{t('md.note', lang)}:** {prose(localize(n, lang))}" for n in m.notes]
    cols = ("group", "checks", "confirmed", "suspected", "not_implemented", "not_covered")
    out += ["", f"## {t('md.summary', lang)}", "",
            "| " + " | ".join(t(f"md.col.{c}", lang) for c in cols) + " |", "|---|---|---:|---:|---:|---|"]
    for g in r.groups:
        nc = ", ".join(g.not_covered) or "—"
        out.append(f"| {g.group}. {t(f'group.{g.group}', lang)} | {', '.join(g.checks)} | {g.confirmed} | "
                   f"{g.suspected} | {g.not_implemented} | {nc} |")
    out.append("")
    blocks = r.site_blocks()
    for key, verdict in (("confirmed", Verdict.CONFIRMED), ("suspected", Verdict.SUSPECTED),
                         ("not_implemented", Verdict.NOT_IMPLEMENTED)):
        # a block holds findings of one verdict only: the count is what the reader sees under the heading
        mine = [f for f in r.findings if f.verdict is verdict]
        out += [f"## {t(f'md.section.{key}', lang)} ({len(mine)})", ""]
        if not mine:
            out += [t(f"md.empty.{key}", lang), ""]
        for f in mine:
            if f.fingerprint not in blocks.inside:
                out += _finding(f, r, lang, blocks)
    if r.leads:
        out += _leads(r, lang)
    out += _not_covered(r, lang)
    out += _cost(r, lang)
    if r.skipped_files or r.unparsed_files:
        out += [f"## {t('md.files_left_out', lang)}", "", f"| {t('md.col.file', lang)} | {t('md.col.why', lang)} |",
                "|---|---|"]
        # the reasons are stored in English (`file.*` messages): shown in the reader's language where known
        out += [f"| {tcode(s.path)} | {t('md.skipped', lang, why=cell(localize(s.reason, lang, 'file.')))} |"
                for s in r.skipped_files]
        out += [f"| {tcode(s.path)} | {t('md.unparsed', lang, why=cell(localize(s.reason, lang, 'file.')))} |"
                for s in r.unparsed_files]
        out.append("")
    out += _suppressed(r, lang)
    out += _withheld(r, lang)
    if r.analysis is not None:
        out += [f"## {t('md.analysis', lang)}", "", t("md.analysis_intro", lang), "", inline(r.analysis), ""]
    out += [f"## {t('md.landmarks', lang)} ({len(r.landmarks)})", ""]
    counts = r.landmark_counts
    if counts.dismissed or counts.refused:  # otherwise every landmark accepted is in use: the heading says it
        out += [t("md.landmark_counts", lang, accepted=counts.accepted, in_use=counts.in_use,
                  dismissed=counts.dismissed, refused=counts.refused), ""]
    if not r.landmarks:
        out += [t("md.no_landmarks", lang), ""]
    else:
        cols_lm = ("kind", "file", "line", "symbol", "confidence")
        out += ["<details>", f"<summary>{t('md.landmarks', lang)} ({len(r.landmarks)})</summary>", "",
                "| " + " | ".join(t(f"md.col.{c}", lang) for c in cols_lm) + " |", "|---|---|---:|---|---|"]
        out += [f"| {lm.kind} | {tcode(lm.file)} | {lm.line} | {cell(lm.symbol or '')} | {lm.confidence} |"
                for lm in r.landmarks]
        out += ["", "</details>", ""]
    if r.dismissed_landmarks:
        cols_dl = ("kind", "file", "line", "reason")
        out += [t("md.dismissed_landmarks", lang, n=len(r.dismissed_landmarks)), "",
                "| " + " | ".join(t(f"md.col.{c}", lang) for c in cols_dl) + " |", "|---|---|---:|---|"]
        out += [f"| {d.landmark.kind} | {tcode(d.landmark.file)} | {d.landmark.line} | {prose_cell(d.reason)} |"
                for d in r.dismissed_landmarks]
        out.append("")
    return "\n".join(out)

