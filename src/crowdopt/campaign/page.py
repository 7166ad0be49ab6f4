"""The status page of `campaign serve` (GET /): one self-contained HTML document rendered
from the `status` document (the same figures as `campaign status --json`): the budget as
spent / reserved / left, inline SVG plots (answers over time, label confidence histogram), the
worker table paged by links (`?offset=`); it reloads itself every REFRESH s. It names the
campaign as the status document given to it does (`http.for_role`: the file's path for an
admin, the campaign's name for a read token).

It fits a phone: the plots scale to the width of the screen (a view box, never wider than
their card), the cards wrap, the worker table scrolls inside its own box. No script runs and
its one style sheet is allowed by its hash (`CSP`): the server's Content-Security-Policy
forbids everything else, framing included."""

from __future__ import annotations

import base64
import datetime as _dt
import hashlib
import html
import math
import time
import urllib.parse
from typing import Any

REFRESH = 10  # seconds between reloads
STYLE = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:1em;color:#222;background:#fafafa;
overflow-wrap:anywhere}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(9.5em,1fr));gap:.6em}
.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.5em .8em;min-width:0}
.v{font-size:1.5em;font-weight:600} .k{font-size:.8em;color:#555}
.plots{display:flex;flex-wrap:wrap;gap:1em;margin:1em 0}
.plot{flex:1 1 20em;max-width:440px;min-width:0;background:#fff;border:1px solid #ddd;
border-radius:6px;padding:.3em}
.plot svg{display:block;width:100%;height:auto}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;background:#fff} td,th{border:1px solid #ddd;padding:.2em .6em;
text-align:right} td:first-child,th:first-child{text-align:left}
"""
# what the server's Content-Security-Policy allows of the page: its one style sheet
CSP = ("default-src 'none'; style-src 'sha256-"
       + base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
       + "'; img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _num(v: Any, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def _duration(s: float | None) -> str:
    if s is None:
        return "-"
    s = int(round(s))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    return f"{h}h {m:02d}m" if h else (f"{m}m {sec:02d}s" if m else f"{sec}s")


def histogram_svg(hist: dict, width: int = 420, height: int = 170) -> str:
    """Bars of the labels' confidence histogram (`status`'s confidence_histogram)."""
    counts, edges = hist["counts"], hist["edges"]
    top = max(counts) if counts and max(counts) > 0 else 1
    pad, n = 30, len(counts)
    bw = (width - 2 * pad) / max(n, 1)
    bars = []
    for k, c in enumerate(counts):
        h = (height - 2 * pad) * c / top
        x = pad + k * bw
        bars.append(f'<rect x="{x + 1:.1f}" y="{height - pad - h:.1f}" width="{bw - 2:.1f}" '
                    f'height="{h:.1f}" fill="#3b7dd8"><title>{edges[k]:.2f}-{edges[k + 1]:.2f}:'
                    f' {c}</title></rect>')
    ticks = "".join(f'<text x="{pad + k * bw:.1f}" y="{height - pad + 14}" font-size="10" '
                    f'text-anchor="middle">{edges[k]:.2f}</text>' for k in range(0, n + 1, 2))
    return (f'<svg id="confidence-plot" xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="label confidence histogram">'
            f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
            f'stroke="#444"/>{"".join(bars)}{ticks}<text x="{pad}" y="14" font-size="11">'
            f'labels per confidence bin (max {top})</text></svg>')


def progress_svg(times: list[float], budget: int, width: int = 420, height: int = 170) -> str:
    """Answers recorded over time (cumulative), against the budget."""
    times = sorted(times)  # several processes' clocks: event order is nearly time order
    pad = 30
    if not times:
        body = f'<text x="{pad}" y="{height / 2}" font-size="12">no answer yet</text>'
    else:
        t0, t1 = times[0], max(times[-1], times[0] + 1e-9)
        step = max(1, len(times) // 200)
        pts = [(t, k + 1) for k, t in enumerate(times)][::step] + [(times[-1], len(times))]
        sx = (width - 2 * pad) / (t1 - t0) if t1 > t0 else 0.0
        sy = (height - 2 * pad) / max(budget, len(times))
        path = " ".join(f"{pad + (t - t0) * sx:.1f},{height - pad - c * sy:.1f}" for t, c in pts)
        yb = height - pad - budget * sy
        body = (f'<polyline fill="none" stroke="#2a9d55" stroke-width="2" points="{path}"/>'
                f'<line x1="{pad}" y1="{yb:.1f}" x2="{width - pad}" y2="{yb:.1f}" '
                f'stroke="#c33" stroke-dasharray="4 3"/><text x="{width - pad}" y="{yb - 3:.1f}" '
                f'font-size="10" text-anchor="end">budget {budget}</text>'
                f'<text x="{pad}" y="{height - pad + 14}" font-size="10">'
                f'{_e(_clock(t0))}</text><text x="{width - pad}" y="{height - pad + 14}" '
                f'font-size="10" text-anchor="end">{_e(_clock(t1))}</text>')
    return (f'<svg id="progress-plot" xmlns="http://www.w3.org/2000/svg" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="answers over time">'
            f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
            f'stroke="#444"/>{body}<text x="{pad}" y="14" font-size="11">answers recorded '
            f'over time</text></svg>')


def _clock(t: float) -> str:
    return _dt.datetime.fromtimestamp(t).strftime("%H:%M:%S")


def _link(offset: int, token: str | None) -> str:
    q = {"offset": offset} | ({"token": token} if token else {})
    return "/?" + urllib.parse.urlencode(q)


def worker_pages(st: dict, token: str | None) -> str:
    """Links to the previous / next page of the worker table (and where this one is)."""
    pg = st["page"]
    off, lim, total = pg["offset"], pg["limit"] or max(len(st["workers"]), 1), \
        pg["workers_total"]
    if total <= lim and not off:
        return ""
    parts = [f"workers {off + 1 if total else 0}-{min(off + lim, total)} of {total}"]
    if off > 0:
        parts.append(f'<a id="prev-workers" href="{_e(_link(max(off - lim, 0), token))}">'
                     "previous</a>")
    if off + lim < total:
        parts.append(f'<a id="next-workers" href="{_e(_link(off + lim, token))}">next</a>')
    return f'<p class="pages">{" | ".join(parts)}</p>'


def render_page(st: dict, times: list[float] | None = None, *, token: str | None = None,
                now: float | None = None) -> str:
    """The HTML page of status document `st` (`times`: answer times for the progress plot;
    `token`: kept in the paging links when the page was opened with ?token=; `now`: the
    clock of "the last answer ... ago", default the time)."""
    o = st["open"]
    acc = st.get("accuracy")
    if acc is not None:
        quality = (f'accuracy against gold <b id="accuracy">{_num(acc)}</b> '
                   f'({st.get("gold_items", 0)} items)')
    else:
        quality = ('estimated accuracy <b id="estimate">' + _num(st["mean_confidence"]) +
                   '</b> (mean posterior confidence of the labels; answers agree with the '
                   'current labels at <span id="agreement">' + _num(st["answer_agreement"]) +
                   '</span>)')
    window = st.get("rate_window_seconds")
    if window is None:
        rate_note = "answers per minute: no answer yet"
    else:
        ago = max((time.time() if now is None else now) - st["last_answer_at"], 0.0)
        rate_note = (f"answers per minute over the last {_duration(window)} "
                     f"({st['answers_in_window']} answers; the last {_duration(ago)} ago)")
    cards = [
        ("budget", st["budget"], "labels the campaign may buy"),
        ("spent", st["spent"], f"answers paid ({st['late']} of them late)"),
        ("reserved", st["reserved"], "labels held for open queries and for hand-outs still "
                                     "inside their late window"),
        ("left", st["left"], "labels neither spent nor reserved"),
        ("rate", _num(st["answers_per_minute"], 1), rate_note),
        ("eta", "done" if st["done"] else _duration(st["eta_seconds"]),
         "to spend what is left at this rate"),
        ("labelled", st["labelled"], f"of {st['items']} items have a label"),
        ("leased", o["leased"], "queries out on a running lease"),
        ("expired", o["expired"], "queries whose lease ran out, waiting to be handed out "
                                  "again"),
        ("waiting", o["not_handed_out"], "queries decided, not handed out yet"),
    ]
    card_html = "".join(f'<div class="card"><div class="v" id="{k}">{_e(v)}</div>'
                        f'<div class="k">{_e(d)}</div></div>' for k, v, d in cards)
    ws = st["workers"]  # in the campaign's order: pages of a fixed order
    has_rel = bool(ws) and "reliability" in ws[0]
    rows = "".join(
        f"<tr><td>{_e(w['worker'])}</td><td>{w['answers']}</td><td>{_num(w['agreement'])}</td>"
        + (f"<td>{_num(w.get('reliability'))}</td>" if has_rel else "") + "</tr>" for w in ws)
    table = ('<div class="scroll"><table id="workers"><tr><th>worker</th><th>answers</th>'
             '<th>agreement</th>' + ("<th>reliability</th>" if has_rel else "")
             + f"</tr>{rows}</table></div>" + worker_pages(st, token))
    state = "DONE" if st["done"] else "running"
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="{REFRESH}">
<title>crowdopt campaign {_e(st['campaign'])}</title>
<style>{STYLE}</style></head>
<body>
<h1>campaign <span id="name">{_e(st['campaign'])}</span> <small id="state">{state}</small></h1>
<p>policy <b id="policy">{_e(st['policy'])}</b>, batching {_e(st['batching'])}, seed
{_e(st['seed'])}; {st['decisions']} decisions, {st['issued']} queries issued.
{quality}.</p>
<div class="cards">{card_html}</div>
<div class="plots"><div class="plot">{progress_svg(times or [], st['budget'])}</div>
<div class="plot">{histogram_svg(st['confidence_histogram'])}</div></div>
<h2 id="workers-title">workers</h2>
<p>reliability: {_e(st['reliability_source'])}</p>
{table}
<p><small>reloads every {REFRESH} s; the same figures as <code>crowdopt campaign status
--json</code></small></p>
</body></html>
"""
