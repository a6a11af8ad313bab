"""One self-contained HTML page of an analysis report: tables, and charts drawn as inline SVG.

No script, no stylesheet or font from elsewhere: the page opens offline. The
charts are the timeline (bytes per bucket, with rows as a line), the top
tables by bytes (stacked insert/update/delete bars) and the histogram of
transaction sizes. Every number the page shows has `data-key` naming where it
is in the JSON report, for tests and for scraping.
"""
from __future__ import annotations

import html
from datetime import datetime, timezone
from typing import Any

from binlog_spec.analysis.report import sections
from binlog_spec.binlog.timezones import from_iso_z, iso_z

COLORS = {"insert": "#2e7d32", "update": "#1565c0", "delete": "#c62828", "bytes": "#546e7a", "rows": "#ef6c00",
          "sizes": "#6a1b9a"}
W, H = 760, 240
PAD_L, PAD_R, PAD_T, PAD_B = 70, 60, 20, 50
TICKS = 4


def _e(v: Any) -> str:
    return html.escape("" if v is None else str(v), quote=True)


def _human(n: float) -> str:
    for unit in ("", "K", "M", "G", "T"):
        if abs(n) < 1024 or unit == "T":
            return f"{n:.0f}{unit}" if unit == "" else f"{n:.1f}{unit}"
        n /= 1024
    return str(n)


def _tick(v: int) -> str:
    """A tick's value exactly, in decimal units (k, M, G)."""
    for unit, size in (("G", 10 ** 9), ("M", 10 ** 6), ("k", 10 ** 3)):
        if v >= size:
            return f"{v / size:g}{unit}"
    return str(v)


def _step(max_v: float) -> int:
    """The smallest whole 1, 2, 3, 4, 5, 6 or 8 x 10^k whose TICKS steps reach max_v (whole-number ticks)."""
    scale = 1
    while True:
        for m in (1, 2, 3, 4, 5, 6, 8):
            if m * scale * TICKS >= max_v:
                return m * scale
        scale *= 10


def _axis(max_v: float, title: str, right: bool = False, color: str = "#333") -> tuple[list[str], int]:
    """A vertical axis with whole-number ticks from 0 to TICKS steps (left, or right); (elements, top)."""
    step = _step(max_v)
    x = W - PAD_R if right else PAD_L
    out = [f'<line x1="{x}" y1="{PAD_T}" x2="{x}" y2="{H - PAD_B}" stroke="{color}"/>']
    if not right:
        out.append(f'<line x1="{PAD_L}" y1="{H - PAD_B}" x2="{W - PAD_R}" y2="{H - PAD_B}" stroke="#333"/>')
    for k in range(TICKS + 1):
        y = H - PAD_B - (H - PAD_T - PAD_B) * k / TICKS
        if not right:
            out.append(f'<line x1="{PAD_L - 4}" y1="{y:.1f}" x2="{W - PAD_R}" y2="{y:.1f}" stroke="#ddd"/>')
        anchor, tx = ("start", x + 6) if right else ("end", x - 6)
        out.append(f'<text class="tick" x="{tx}" y="{y + 4:.1f}" text-anchor="{anchor}" font-size="10" '
                   f'fill="{color}">{_tick(step * k)}</text>')
    mid = PAD_T + (H - PAD_T - PAD_B) / 2
    lx = W - 10 if right else 12
    out.append(f'<text x="{lx}" y="{mid:.0f}" font-size="11" fill="{color}" '
               f'transform="rotate(-90 {lx} {mid:.0f})" text-anchor="middle">{_e(title)}</text>')
    return out, step * TICKS


def _svg(name: str, body: list[str], title: str) -> str:
    return (f'<svg class="chart" id="chart-{name}" xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
            f'viewBox="0 0 {W} {H}" role="img" aria-label="{_e(title)}"><title>{_e(title)}</title>'
            + "".join(body) + "</svg>")


def _seconds(iso: str) -> float:
    return from_iso_z(iso).timestamp()


def timeline_svg(r: dict[str, Any]) -> str:
    """Bytes per bucket as bars placed by time (a bucket with no event leaves its place empty), rows as
    a line on the right-hand axis (broken where buckets are missing)."""
    points = r["timeline"]
    if not points:
        return _svg("timeline", ['<text x="20" y="40">no timed events</text>'], "Timeline")
    bucket = r["options"]["bucket_s"]
    starts = [_seconds(p["start"]) for p in points]
    window = r.get("window") or {}
    lo, hi = (_seconds(window[k]) if window.get(k) else None for k in ("start", "stop"))
    # the chart spans the filters' time window where they give one (its bounds drawn), else the buckets
    t0 = starts[0] if lo is None else min(starts[0], lo)
    span = (starts[-1] + bucket if hi is None else max(starts[-1] + bucket, hi)) - t0
    plot_w = W - PAD_L - PAD_R
    plot_h = H - PAD_T - PAD_B
    body, top_b = _axis(max(p["bytes"] for p in points), "bytes (bars)")
    right, top_r = _axis(max(p["rows"] for p in points), "rows (line)", right=True, color=COLORS["rows"])
    body += right
    bw = plot_w * bucket / span
    if lo is not None or hi is not None:
        x0 = PAD_L + plot_w * ((t0 if lo is None else lo) - t0) / span
        x1 = PAD_L + plot_w * ((t0 + span if hi is None else hi) - t0) / span
        label = f'{window.get("start") or "…"} – {window.get("stop") or "…"}'
        body.append(f'<rect class="window" x="{x0:.2f}" y="{PAD_T}" width="{max(x1 - x0, 1):.2f}" height="{plot_h}" '
                    f'fill="#2e7d32" fill-opacity="0.07" stroke="#2e7d32" stroke-dasharray="4 3">'
                    f'<title>time window of the filters: {_e(label)}</title></rect>')
    runs: list[list[str]] = []
    prev = None
    for t, p in zip(starts, points):
        x = PAD_L + plot_w * (t - t0) / span
        h = plot_h * p["bytes"] / top_b
        body.append(f'<rect class="bar" x="{x + bw * 0.1:.2f}" y="{H - PAD_B - h:.2f}" width="{max(bw * 0.8, 1):.2f}" '
                    f'height="{h:.2f}" fill="{COLORS["bytes"]}"><title>{_e(p["start"])}: {p["bytes"]} bytes, '
                    f'{p["rows"]} rows, {p["events"]} events</title></rect>')
        if prev is None or t - prev != bucket:
            runs.append([])
        runs[-1].append(f'{x + bw / 2:.2f},{H - PAD_B - plot_h * p["rows"] / top_r:.2f}')
        prev = t
    for run in runs:
        if len(run) == 1:
            x, y = run[0].split(",")
            body.append(f'<circle class="point" cx="{x}" cy="{y}" r="2.5" fill="{COLORS["rows"]}"/>')
        else:
            body.append(f'<path class="line" d="M{" L".join(run)}" fill="none" stroke="{COLORS["rows"]}" '
                        f'stroke-width="2"/>')
    for k, anchor in ((0, "start"), (1, "middle"), (2, "end")):
        t = t0 + span * k / 2
        label = iso_z(datetime.fromtimestamp(t, tz=timezone.utc))
        body.append(f'<text x="{PAD_L + plot_w * k / 2:.1f}" y="{H - PAD_B + 16}" font-size="10" '
                    f'text-anchor="{anchor}">{_e(label)}</text>')
    untimed = r["timeline_untimed"]["events"]
    body.append(f'<text x="{W - PAD_R}" y="{H - 8}" font-size="10" text-anchor="end">bars: bytes (left axis); '
                f'line: rows (right axis); placed by time, {bucket} s per bucket'
                + (f'; {untimed} events with timestamp 0 not shown' if untimed else "") + '</text>')
    return _svg("timeline", body, "Timeline: bytes and rows per bucket")


def tables_svg(r: dict[str, Any], top: int = 15) -> str:
    tables = sorted(r["tables"], key=lambda t: -t["bytes"])[:top]
    if not tables:
        return _svg("tables", ['<text x="20" y="40">no row events</text>'], "Top tables")
    height = PAD_T + 22 * len(tables) + 30
    left = 220
    plot_w = W - left - 80
    max_b = max(t["bytes"] for t in tables) or 1
    body = []
    for i, t in enumerate(tables):
        y = PAD_T + i * 22
        x = left
        body.append(f'<text x="{left - 6}" y="{y + 14}" font-size="11" text-anchor="end">{_e(t["table"])}</text>')
        for op in ("insert", "update", "delete"):
            w = plot_w * t[f"{op}_bytes"] / max_b
            if w > 0:
                body.append(f'<rect class="bar" x="{x:.2f}" y="{y + 2}" width="{w:.2f}" height="16" '
                            f'fill="{COLORS[op]}"><title>{_e(t["table"])} {op}: {t[f"{op}_bytes"]} bytes, '
                            f'{t[f"{op}_rows"]} rows</title></rect>')
                x += w
        body.append(f'<text x="{x + 4:.2f}" y="{y + 14}" font-size="10">{_human(t["bytes"])}</text>')
    ly = height - 12
    for k, op in enumerate(("insert", "update", "delete")):
        body.append(f'<rect x="{left + k * 90}" y="{ly - 9}" width="10" height="10" fill="{COLORS[op]}"/>'
                    f'<text x="{left + k * 90 + 14}" y="{ly}" font-size="10">{op}</text>')
    svg = _svg("tables", body, "Top tables by bytes")
    return svg.replace(f'height="{H}" viewBox="0 0 {W} {H}"', f'height="{height}" viewBox="0 0 {W} {height}"', 1)


def histogram_svg(r: dict[str, Any]) -> str:
    """One bar per power-of-two size bin, every bin from the smallest used to the largest."""
    hist = r["transactions"]["size_histogram"]
    if not hist:
        return _svg("tx-sizes", ['<text x="20" y="40">no transactions</text>'], "Transaction sizes")
    plot_w = W - PAD_L - PAD_R
    plot_h = H - PAD_T - PAD_B
    bw = plot_w / len(hist)
    body, top = _axis(max(h["count"] for h in hist), "transactions")
    for i, h in enumerate(hist):
        hh = plot_h * h["count"] / top
        x = PAD_L + i * bw
        body.append(f'<rect class="bar" x="{x + bw * 0.1:.2f}" y="{H - PAD_B - hh:.2f}" width="{bw * 0.8:.2f}" '
                    f'height="{hh:.2f}" fill="{COLORS["sizes"]}"><title>{h["min_bytes"]}-{h["max_bytes"]} bytes: '
                    f'{h["count"]}</title></rect>')
        body.append(f'<text x="{x + bw / 2:.1f}" y="{H - PAD_B + 14}" font-size="10" text-anchor="middle">'
                    f'&lt;{_human(h["max_bytes"] + 1)}</text>')
        body.append(f'<text x="{x + bw / 2:.1f}" y="{H - PAD_B - hh - 3:.1f}" font-size="10" '
                    f'text-anchor="middle">{h["count"]}</text>')
    body.append(f'<text x="{W - PAD_R}" y="{H - 8}" font-size="10" text-anchor="end">transaction size '
                f'(bytes, power-of-two bins)</text>')
    return _svg("tx-sizes", body, "Histogram of transaction sizes (bytes)")


def _table_html(name: str, title: str, cols: list[str], rows: list[list[Any]], limit: int = 500) -> str:
    out = [f'<section id="sec-{_e(name)}"><h2>{_e(title)}</h2>']
    if not rows:
        out.append("<p>(none)</p></section>")
        return "".join(out)
    out.append(f'<table data-section="{_e(name)}"><thead><tr>' + "".join(f"<th>{_e(c)}</th>" for c in cols)
               + "</tr></thead><tbody>")
    for row in rows[:limit]:
        out.append("<tr>" + "".join(
            f'<td class="num" data-col="{_e(c)}">{_e(v)}</td>' if isinstance(v, (int, float)) and not isinstance(v, bool)
            else f'<td data-col="{_e(c)}">{_e(v)}</td>' for c, v in zip(cols, row)) + "</tr>")
    out.append("</tbody></table>")
    if len(rows) > limit:
        out.append(f"<p>... {len(rows) - limit} more rows (see the JSON or CSV report)</p>")
    out.append("</section>")
    return "".join(out)


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:12px;margin:6px 0}th,td{border:1px solid #ddd;padding:3px 6px;text-align:left}
th{background:#f0f3f5}td.num{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:flex;flex-wrap:wrap;gap:10px}.card{border:1px solid #ccd;border-radius:6px;padding:8px 14px;background:#f7f9fb}
.card b{display:block;font-size:20px}.fault{color:#b00020;font-weight:bold}.chart{border:1px solid #eee;background:#fcfcfc;margin:6px 0;display:block}
"""


def render(r: dict[str, Any]) -> str:
    s = r["summary"]
    tx = r["transactions"]
    cards = "".join(f'<div class="card"><span>{_e(k)}</span><b data-key="summary.{_e(k)}">{_e(v)}</b></div>'
                    for k, v in s.items() if k in ("files", "events", "bytes", "rows", "tables", "transactions", "ddl",
                                                   "faults", "row_errors"))
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Binlog analysis</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>Binlog analysis</h1>",
        f'<p>{_e(", ".join(f["file"] for f in r["files"]))}<br>{_e(s["first_event"])} &ndash; {_e(s["last_event"])}'
        + (f'<br>filters: <span data-key="summary.filters">{_e(s["filters"])}</span>' if s.get("filters") else "")
        + f'<br>{_e(tx["time_source_note"])}; {tx["big"]} transactions over {tx["big_trx_bytes"]} bytes, '
        f'{tx["long"]} over {tx["long_trx_seconds"]} s</p>',
        "".join(f'<p class="fault" data-key="faults">{_e(f["file"])}: offset {_e(f["offset"])}: {_e(f["error"])}: '
                f'{_e(f["message"])} &ndash; the figures count only what was read before</p>' for f in r["faults"]),
        f'<div class="cards">{cards}</div>',
        f'<h2>Timeline (per {r["options"]["bucket_s"]} s)</h2>', timeline_svg(r),
        "<h2>Top tables by bytes</h2>", tables_svg(r),
        "<h2>Transaction sizes</h2>", histogram_svg(r),
    ]
    for name, title, cols, rows in sections(r):
        if name == "summary":
            continue
        parts.append(_table_html(name, title, cols, rows))
    parts.append("</body></html>")
    return "\n".join(parts)


def write(r: dict[str, Any], path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(render(r))


__all__ = ["render", "write", "timeline_svg", "tables_svg", "histogram_svg"]
