"""The HTML analysis report, rendered by headless Chromium: charts drawn, numbers right, not blank."""
from __future__ import annotations

import io
import json
import re
import shutil
import struct
import subprocess
import zlib


import pytest

from binlog_spec import cli
from binlog_spec.analysis.html import COLORS, timeline_svg

from conftest import FIXTURES

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SOURCES = [str(FIXTURES / "types-full" / "mariadb-bin.000001"), str(FIXTURES / "demo" / "mariadb-bin.000001")]


def chromium(tmp_path, *args):
    assert CHROMIUM, "Debian's chromium is required (make test installs it: make apt)"
    profile = tmp_path / "profile"
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, timeout=120, check=True)


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("html")
    html = tmp / "report.html"
    out = io.StringIO()
    assert cli.main(["analyze", "--format", "json", "--bucket", "30", "--html", str(html), *SOURCES],
                    out, io.StringIO()) == 0
    return tmp, html, json.loads(out.getvalue())


def test_the_page_is_self_contained(page):
    _, html, _ = page
    text = html.read_text(encoding="utf-8")
    assert "<script" not in text
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)
    assert "@import" not in text and "url(" not in text


def test_the_dom_has_the_charts_and_the_numbers(page):
    tmp, html, report = page
    dom = chromium(tmp, "--dump-dom", html.as_uri()).stdout.decode("utf-8")
    for chart in ("timeline", "tables", "tx-sizes"):
        m = re.search(rf'<svg[^>]*id="chart-{chart}".*?</svg>', dom, re.S)
        assert m, chart
        assert m.group(0).count('<rect class="bar"') >= 2, chart
        # whole-number ticks (a count axis must never say 4 for 4.5)
        for tick in re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', m.group(0)):
            assert re.fullmatch(r"\d+(\.\d+)?[kMG]|\d+", tick), (chart, tick)
    assert re.search(r'<path class="line" d="M[\d.]+,[\d.]+ L', dom) or '<circle class="point"' in dom
    # the cards and the tables show the figures of the JSON report
    for key in ("events", "bytes", "rows", "tables", "transactions", "ddl"):
        assert re.search(rf'data-key="summary\.{key}">{report["summary"][key]}<', dom), key
    tables = re.search(r'<table data-section="tables">.*?</table>', dom, re.S).group(0)
    for t in report["tables"]:
        row = re.search(rf'<td data-col="table">{re.escape(t["table"])}</td>(.*?)</tr>', tables, re.S).group(1)
        cells = [int(v) for v in re.findall(r'<td class="num"[^>]*>(\d+)</td>', row)]
        assert cells == [t[f"{op}_{k}"] for op in ("insert", "update", "delete")
                         for k in ("events", "rows", "bytes")] + [t["rows"], t["bytes"]]
    hist = re.search(r'<svg[^>]*id="chart-tx-sizes".*?</svg>', dom, re.S).group(0)
    bins = [tuple(map(int, b)) for b in re.findall(r'<title>(\d+)-(\d+) bytes: (\d+)</title>', hist)]
    assert [c for _, _, c in bins] == [h["count"] for h in report["transactions"]["size_histogram"]]
    assert sum(c for _, _, c in bins) == report["transactions"]["count"]
    # every power-of-two bin from the smallest used to the largest, empty ones too
    assert all(b[0] == a[1] + 1 and b[1] == 2 * a[1] + 1 for a, b in zip(bins, bins[1:]))
    assert bins[0][2] and bins[-1][2]


def test_timeline_bars_are_placed_by_time():
    """A bucket with no event leaves its place empty: bar x is proportional to its start time."""
    r = {"options": {"bucket_s": 60}, "timeline_untimed": {"events": 0, "rows": 0, "bytes": 0},
         "timeline": [{"start": f"2026-01-01T00:{m:02d}:00Z", "events": 1, "rows": m, "bytes": 100}
                      for m in (0, 1, 2, 9)]}
    svg = timeline_svg(r)
    xs = [float(x) for x in re.findall(r'<rect class="bar" x="([\d.]+)"', svg)]
    step = xs[1] - xs[0]
    assert step > 0 and abs(xs[2] - xs[1] - step) < 0.01 and abs(xs[3] - xs[2] - 7 * step) < 0.01
    # the rows line is broken at the gap: one line over minutes 0-2, a lone point at minute 9
    assert svg.count('<path class="line"') == 1 and svg.count('<circle class="point"') == 1
    assert "line: rows (right axis)" in svg


def _png_pixels(data: bytes):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB/RGBA non-interlaced PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat.append(chunk)
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    assert depth == 8 and color in (2, 6) and interlace == 0
    bpp = 3 if color == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        ftype, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if ftype == 1:
                line[x] = (line[x] + a) & 0xFF
            elif ftype == 2:
                line[x] = (line[x] + b) & 0xFF
            elif ftype == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def test_the_screenshot_is_not_blank(page):
    tmp, html, _ = page
    shot = tmp / "shot.png"
    chromium(tmp, "--window-size=900,1400", f"--screenshot={shot}", html.as_uri())
    width, height, bpp, rows = _png_pixels(shot.read_bytes())
    assert (width, height) == (900, 1400)
    colors = {}
    for row in rows:
        for x in range(0, len(row), bpp):
            px = row[x:x + 3]
            colors[px] = colors.get(px, 0) + 1
    assert len(colors) > 20                                      # text, axes, bars of several colours
    white = colors.get(b"\xff\xff\xff", 0)
    assert white < 0.97 * sum(colors.values())
    # each chart's own colours are on the screen: the timeline's bytes bars and rows line, the
    # tables' insert/update/delete bars, the histogram's bars (a colour no other chart uses)
    colours = COLORS
    for name in ("bytes", "rows", "insert", "update", "delete", "sizes"):
        assert bytes.fromhex(colours[name][1:]) in colors, name
    assert len(set(colours.values())) == len(colours)
