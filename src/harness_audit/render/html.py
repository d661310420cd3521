"""The HTML report: one self-contained file (inline style and script, no network fetch) for people.

It holds a grid of checks × verdicts, the findings with their code and filters by check and verdict, what was
not covered, and the cost with a per-check chart (inline SVG). A Content-Security-Policy forbids every fetch, so
the file behaves the same offline and cannot call out. Fixed text comes from the message catalogue in the
report's language; findings keep their own words; everything from the audited tree or a model is escaped.
"""

from __future__ import annotations

import re
from html import escape

from harness_audit.findings import Finding, OutcomeStatus, Verdict
from harness_audit.messages import localize, t
from harness_audit.render.summary import cost_text, final_line
from harness_audit.report import Report, SiteBlocks

_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_VERDICTS = (Verdict.CONFIRMED, Verdict.SUSPECTED, Verdict.NOT_IMPLEMENTED)

_STYLE = """
:root{--fg:#1d2330;--muted:#5b6475;--line:#d9dee7;--bg:#f7f8fa;--card:#fff;--red:#c62828;--amber:#b26a00;
--blue:#1f5fbf;--green:#2e7d32}
*{box-sizing:border-box}body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);
background:var(--bg)}main{max-width:1100px;margin:0 auto;padding:24px}h1{font-size:24px;margin:0 0 8px}
h2{font-size:19px;margin:32px 0 12px;border-bottom:1px solid var(--line);padding-bottom:4px}
code,pre{font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}code{background:#eef1f6;
padding:1px 4px;border-radius:3px}pre{background:#0f1724;color:#e6edf3;padding:10px 12px;border-radius:6px;
overflow-x:auto;margin:8px 0}pre .hit{background:#3b2a12;display:block}.meta{color:var(--muted);margin:0;
padding-left:18px}.final{font-weight:600;margin:12px 0}table{border-collapse:collapse;background:var(--card);
margin:8px 0}th,td{border:1px solid var(--line);padding:4px 8px;text-align:left;vertical-align:top}
td.n{text-align:right}td.zero{color:#aab}.finding{background:var(--card);border:1px solid var(--line);
border-left:4px solid var(--blue);border-radius:6px;padding:10px 14px;margin:12px 0}
.finding.confirmed{border-left-color:var(--red)}.finding.suspected{border-left-color:var(--amber)}
.finding h3{font-size:16px;margin:0 0 6px}.badge{display:inline-block;font-size:12px;padding:1px 7px;
border-radius:10px;color:#fff;background:var(--blue);margin-right:6px}.badge.confirmed{background:var(--red)}
.badge.suspected{background:var(--amber)}.src{color:var(--muted);font-size:12px}.filters{display:flex;gap:16px;
align-items:center;flex-wrap:wrap;background:var(--card);border:1px solid var(--line);padding:8px 12px;
border-radius:6px}.filters label{font-weight:600}.also{border-top:1px dashed var(--line);margin-top:8px;
padding-top:6px}.chart text{font:12px system-ui,sans-serif;fill:var(--fg)}.chart rect{fill:var(--blue)}
.state-bad{color:var(--amber);font-weight:600}
"""

_SCRIPT = """
(function(){
  var check=document.getElementById('filter-check'), verdict=document.getElementById('filter-verdict'),
      count=document.getElementById('shown'), items=document.querySelectorAll('.finding'), total=0;
  items.forEach(function(el){total+=el.dataset.members.split(' ').length;});
  function apply(){
    var c=check.value, v=verdict.value, shown=0;
    items.forEach(function(el){
      var ok=(c==='*'||el.dataset.checks.split(' ').indexOf(c)>=0)&&(v==='*'||el.dataset.verdicts.split(' ').indexOf(v)>=0);
      el.hidden=!ok;
      // a block may hold several checks' findings at one site: count the findings the filter asks for
      if(ok){shown+=el.dataset.members.split(' ').filter(function(m){return c==='*'||m===c;}).length;}
    });
    count.textContent=count.dataset.template.replace('{shown}',shown).replace('{total}',total);
  }
  check.addEventListener('change',apply); verdict.addEventListener('change',apply);
  document.querySelectorAll('[data-filter-check]').forEach(function(a){
    a.addEventListener('click',function(e){e.preventDefault();check.value=a.dataset.filterCheck;
      verdict.value=a.dataset.filterVerdict;apply();document.getElementById('findings').scrollIntoView();});
  });
  apply();
})();
"""


def _text(value: str) -> str:
    """Escaped text whose backtick code spans become `<code>`."""
    out: list[str] = []
    pos = 0
    flat = " ".join(value.split())
    for m in _SPAN.finditer(flat):
        out.append(escape(flat[pos:m.start()]))
        out.append(f"<code>{escape(m.group(2).strip() or m.group(2))}</code>")
        pos = m.end()
    out.append(escape(flat[pos:]))
    return "".join(out)


def _code(f: Finding, r: Report) -> str:
    snippet = r.snippets.get(f.fingerprint)
    if snippet is None or not f.line:
        return f"<pre>{escape(f.evidence)}</pre>"
    span = max(1, len([x for x in f.evidence.splitlines() if x.strip()]))
    width = len(str(snippet.first + len(snippet.lines) - 1))
    rows = []
    for i, line in enumerate(snippet.lines):
        number = snippet.first + i
        hit = f.line <= number < f.line + span
        text = escape(f"{number:>{width}} │ {line}")
        rows.append(f'<span class="hit">{text}</span>' if hit else f"{text}\n")
    return "<pre>" + "".join(rows) + "</pre>"


def _parts(f: Finding, r: Report, lang: str, code: str = "") -> str:
    out = [f"<p><b>{escape(t('md.claim', lang))}</b> {_text(f.claim)}</p>", code]
    if f.also_at:
        where = ", ".join(f"<code>{escape(a)}</code>" for a in f.also_at)
        out.append(f"<p>{escape(t('md.also_at', lang, where='{where}')).replace('{where}', where)}</p>")
    out.append(f"<p><b>{escape(t('md.consequence', lang))}</b> {_text(f.consequence)}</p>")
    if f.direction:
        out.append(f"<p><b>{escape(t('md.fix', lang))}</b> {_text(f.direction)}</p>")
    if f.verdict is Verdict.SUSPECTED:
        out.append(f"<p><b>{escape(t('md.to_confirm', lang))}</b> {_text(f.confirm_hint)}</p>")
    lead = t("md.source_lead", lang, lead=f.lead) if f.lead else ""
    out.append(f'<p class="src">{escape(t("md.source", lang, source=f.source, fingerprint=f.fingerprint) + lead)}</p>')
    return "".join(out)


def _finding(f: Finding, r: Report, lang: str, blocks: SiteBlocks) -> str:
    """One block of one verdict (see `Report.site_blocks`): other checks' findings at the site with that verdict
    inside it, each with its own code; the other verdicts' blocks at the site named."""
    others = blocks.folded.get(f.fingerprint, ())
    members = [f, *others]
    where = f"{f.file}:{f.line}" if f.located else t("md.check_level", lang)
    title = ", ".join(f"{m.check} · {t(f'check.{m.check}', lang)}" for m in members)
    checks = " ".join(sorted({m.check.value for m in members}))
    badge = f'<span class="badge {f.verdict.value}">{escape(t(f"verdict.{f.verdict.value}", lang))}</span>'
    out = [f'<article class="finding {f.verdict.value}" data-checks="{checks}" data-verdicts="{f.verdict.value}" '
           f'data-members="{" ".join(m.check.value for m in members)}">',
           f"<h3>{badge}{escape(title)} — <code>{escape(where)}</code></h3>",
           _parts(f, r, lang, _code(f, r) if f.evidence else "")]
    for o in others:
        label = t("md.same_site", lang, checks=f"{o.check} ({t(f'verdict.{o.verdict.value}', lang)})")
        out.append(f'<div class="also"><b>{escape(label)}</b>{_parts(o, r, lang, _code(o, r) if o.evidence else "")}'
                   "</div>")
    elsewhere = blocks.elsewhere.get(f.fingerprint, ())
    if elsewhere:
        named = ", ".join(f"{o.check} ({t(f'verdict.{o.verdict.value}', lang)})" for o in elsewhere)
        out.append(f"<p>{escape(t('md.same_site_elsewhere', lang, checks=named))}</p>")
    out.append("</article>")
    return "".join(out)


def _grid(r: Report, lang: str) -> str:
    head = "".join(f"<th>{escape(t(f'verdict.{v.value}', lang))}</th>" for v in _VERDICTS)
    rows = [f"<table id=\"grid\"><tr><th>{escape(t('md.col.check', lang))}</th>{head}"
            f"<th>{escape(t('md.col.status', lang))}</th></tr>"]
    for o in r.outcomes:
        cells = []
        for v in _VERDICTS:
            n = sum(1 for f in r.findings if f.check == o.check and f.verdict is v)
            link = (f'<a href="#findings" data-filter-check="{o.check.value}" data-filter-verdict="{v.value}">{n}</a>'
                    if n else "0")
            cells.append(f'<td class="n{"" if n else " zero"}">{link}</td>')
        state = t(f"state.{o.status.value}", lang) + (f":{o.failure_code}" if o.failure_code else "")
        cls = "" if o.status is OutcomeStatus.RAN else ' class="state-bad"'
        rows.append(f"<tr><td>{o.check} · {escape(t(f'check.{o.check}', lang))}</td>{''.join(cells)}"
                    f"<td{cls}>{escape(state)}</td></tr>")
    rows.append("</table>")
    return "".join(rows)


def _chart(r: Report, lang: str) -> str:
    """Per-check cost as horizontal bars: money when priced, else tokens when a model ran, else seconds."""
    price = r.meta.price
    used_model = any(o.usage.requests for o in r.outcomes)
    if price is not None and used_model:
        values = [(o.check.value, price.cost(o.usage) or 0.0) for o in r.outcomes]
        fmt, unit = (lambda x: f"${x:,.4f}"), "$"
    elif used_model:
        values = [(o.check.value, float(o.usage.input_tokens + o.usage.output_tokens)) for o in r.outcomes]
        fmt, unit = (lambda x: f"{x:,.0f}"), t("html.tokens_axis", lang)
    else:
        values = [(o.check.value, o.duration_s) for o in r.outcomes]
        fmt, unit = (lambda x: f"{x:.3f}"), t("html.seconds_axis", lang)
    top = max((v for _, v in values), default=0.0) or 1.0
    bar_w, row_h = 560, 22
    rows = []
    for i, (check, value) in enumerate(values):
        y = i * row_h
        w = max(1.0, value / top * bar_w) if value else 0.0
        rows.append(f'<text x="0" y="{y + 15}">{check}</text><rect x="48" y="{y + 4}" width="{w:.1f}" '
                    f'height="14"></rect><text x="{56 + w:.1f}" y="{y + 15}">{escape(fmt(value))}</text>')
    height = len(values) * row_h + 8
    return (f'<svg class="chart" role="img" aria-label="{escape(t("html.cost_chart", lang))} ({escape(unit)})" '
            f'width="720" height="{height}" viewBox="0 0 720 {height}">{"".join(rows)}</svg>')


def render_html(r: Report) -> str:
    """The whole report as one self-contained HTML page."""
    m = r.meta
    lang = m.language
    state = t(f"md.state.{m.state}", lang).replace("**", "") if m.state in (
        "complete", "cancelled", "incomplete") else m.state
    meta_items = [
        (t("md.target", lang), f"<code>{escape(m.root)}</code>"),
        (t("md.commit", lang), escape(t("md.not_git", lang)) if m.commit is None else
         f"<code>{escape(m.commit[:12])}</code>" + (f" ({escape(t('md.dirty', lang))})" if m.dirty else "")),
        (t("md.engine", lang), escape(m.engine) + (f" · <code>{escape(m.model)}</code>" if m.model else "")),
        (t("md.run", lang), f"<code>{escape(m.run_id)}</code> · {escape(t('md.started', lang, when=m.started_at))}"
         f" · {escape(t('md.seconds', lang, n=f'{m.duration_s:.2f}'))} · {escape(state)}"),
        (t("md.files", lang), escape(t("md.files_line", lang, scanned=m.files_scanned, skipped=len(r.skipped_files),
                                       unparsed=len(r.unparsed_files)))),
        *((t("md.note", lang), _text(localize(n, lang))) for n in m.notes),
    ]
    check_options = "".join(f'<option value="{o.check.value}">{o.check.value} · '
                            f'{escape(t(f"check.{o.check}", lang))}</option>' for o in r.outcomes)
    verdict_options = "".join(f'<option value="{v.value}">{escape(t(f"verdict.{v.value}", lang))}</option>'
                              for v in _VERDICTS)
    blocks = r.site_blocks()
    findings = "".join(_finding(f, r, lang, blocks) for f in r.findings if f.fingerprint not in blocks.inside)
    not_covered = [o for o in r.outcomes if o.status is not OutcomeStatus.RAN]
    if not_covered:
        nc_rows = "".join(
            f"<tr><td>{o.check} · {escape(t(f'check.{o.check}', lang))}</td><td>"
            f"{escape(t(f'state.{o.status.value}', lang))}</td><td>"
            + escape(t("md.missing", lang, kinds=", ".join(k.value for k in o.missing_landmarks))
                     if o.missing_landmarks else (localize(o.error, lang) if o.error else "—")) + "</td></tr>"
            for o in not_covered)
        nc = (f"<p>{escape(t('md.not_covered_intro', lang).replace('**', ''))}</p><table><tr>"
              f"<th>{escape(t('md.col.check', lang))}</th><th>{escape(t('md.col.status', lang))}</th>"
              f"<th>{escape(t('md.col.why', lang))}</th></tr>{nc_rows}</table>")
    else:
        nc = f"<p>{escape(t('md.all_ran', lang))}</p>"
    total = r.total_usage
    if m.protocol_calls is not None:  # a host run: its model's tokens are the host's; what we saw are its calls
        cost_para = escape(t("md.cost_host", lang, seconds=f"{m.duration_s:.2f}", calls=sum(m.protocol_calls.values())))
    else:
        cost_para = (escape(t("md.cost_line", lang, seconds=f"{m.duration_s:.2f}", input=f"{total.input_tokens:,}",
                                output=f"{total.output_tokens:,}", cache_read=f"{total.cache_read_tokens:,}",
                                cache_write=f"{total.cache_write_tokens:,}", reasoning=f"{total.reasoning_tokens:,}"))
                     if total.known else escape(t("md.unknown", lang))) + f" · {escape(cost_text(r, lang))}"
    suppressed = ""
    if r.suppressed:
        rows = "".join(f"<tr><td>{x.finding.check}</td><td><code>{escape(f'{x.finding.file}:{x.finding.line}')}"
                       f"</code></td><td>{escape(x.reason)}</td><td>{_text(x.finding.claim)}</td></tr>"
                       for x in r.suppressed)
        suppressed = (f"<h2>{escape(t('md.suppressed', lang))} ({len(r.suppressed)})</h2>"
                      f"<p>{_text(t('md.suppressed_intro', lang))}</p><table><tr>"
                      + "".join(f"<th>{escape(t(f'md.col.{c}', lang))}</th>" for c in ("check", "where", "reason",
                                                                                      "claim"))
                      + f"</tr>{rows}</table>")
    withheld = ""
    if r.withheld:
        rows = "".join(
            f"<tr><td>{x.finding.check}</td><td><code>{escape(f'{x.finding.file}:{x.finding.line}')}</code></td>"
            f"<td><code>{escape(x.precision.rule)}</code></td><td>"
            + escape(t("md.withheld_record", lang, true=x.precision.true, judged=x.precision.judged,
                       estimate=x.precision.percent))
            + f"</td><td>{_text(x.finding.claim)}</td></tr>" for x in r.withheld)
        withheld = (f"<h2>{escape(t('md.withheld', lang))} ({len(r.withheld)})</h2>"
                    f"<p>{_text(t('md.withheld_intro', lang, floor=r.min_precision))}</p><table><tr>"
                    + "".join(f"<th>{escape(t(f'md.col.{c}', lang))}</th>" for c in ("check", "where", "rule", "record",
                                                                                    "claim"))
                    + f"</tr>{rows}</table>")
    dismissed_landmarks = "" if not r.dismissed_landmarks else (
        f"<p>{escape(t('md.dismissed_landmarks', lang, n=len(r.dismissed_landmarks)))}</p><table><tr>"
        + "".join(f"<th>{escape(t(f'md.col.{c}', lang))}</th>" for c in ("kind", "file", "line", "reason"))
        + "</tr>" + "".join(f"<tr><td>{d.landmark.kind}</td><td><code>{escape(d.landmark.file)}</code></td>"
                            f"<td>{d.landmark.line}</td><td>{_text(d.reason)}</td></tr>"
                            for d in r.dismissed_landmarks) + "</table>")
    landmarks = "".join(f"<tr><td>{lm.kind}</td><td><code>{escape(lm.file)}</code></td><td>{lm.line}</td>"
                        f"<td>{escape(lm.symbol or '')}</td><td>{lm.confidence}</td></tr>" for lm in r.landmarks)
    return f"""<!doctype html>
<html lang="{'zh-CN' if lang == 'zh' else 'en'}"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(t('md.title', lang))} · {escape(m.root)}</title><style>{_STYLE}</style></head>
<body><main>
<h1>{escape(t('md.title', lang))}</h1>
<ul class="meta">{''.join(f'<li><b>{escape(k)}:</b> {v}</li>' for k, v in meta_items)}</ul>
<p class="final" id="final">{escape(final_line(r, lang))}</p>
<h2>{escape(t('html.grid', lang))}</h2>
{_grid(r, lang)}
<h2 id="findings">{escape(t('html.findings', lang))} ({len(r.findings)})</h2>
<div class="filters">
<label for="filter-check">{escape(t('html.filter_check', lang))}</label>
<select id="filter-check"><option value="*">{escape(t('html.all', lang))}</option>{check_options}</select>
<label for="filter-verdict">{escape(t('html.filter_verdict', lang))}</label>
<select id="filter-verdict"><option value="*">{escape(t('html.all', lang))}</option>{verdict_options}</select>
<span id="shown" data-template="{escape(t('html.shown', lang, shown='{shown}', total='{total}'))}"></span>
</div>
{findings or f'<p>{escape(t("md.empty.confirmed", lang))}</p>'}
<h2 id="not-covered">{escape(t('md.not_covered', lang))}</h2>
{nc}
<h2 id="cost">{escape(t('md.cost', lang))}</h2>
<p>{cost_para}</p>
<h3>{escape(t('html.cost_chart', lang))}</h3>
{_chart(r, lang)}
{suppressed}
{withheld}
<details><summary>{escape(t('md.landmarks', lang))} ({len(r.landmarks)})</summary>
<table><tr>{''.join(f"<th>{escape(t(f'md.col.{c}', lang))}</th>" for c in ('kind', 'file', 'line', 'symbol', 'confidence'))}</tr>{landmarks}</table>
</details>
{dismissed_landmarks}
</main><script>{_SCRIPT}</script></body></html>
"""
