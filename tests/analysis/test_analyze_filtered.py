"""A filtered `analyze` reports the transactions the filters keep: its first and last event and its
timeline are theirs, not those of the control events (FORMAT_DESCRIPTION, GTID_LIST, ROTATE...) every
selection keeps whatever their time; the report names its filters (text, markdown, JSON, HTML) and the
HTML timeline draws the time window. The demo binlog was written by the real server from
fixtures/demo/workload.sql, whose SET TIMESTAMPs give each transaction's time (expected values); its
control events carry the time the server ran, months later."""
from __future__ import annotations

import io
import json
import re
from datetime import datetime, timezone

from binlog_spec import cli

from conftest import FIXTURES

DEMO = FIXTURES / "demo" / "mariadb-bin.000001"
#: The time of each group of statements the server ran (the first: three DDL statements).
TIMES = [int(t) for t in re.findall(r"SET TIMESTAMP=(\d+)", (FIXTURES / "demo" / "workload.sql").read_text())]


def iso(ts: int) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def analyze(*argv: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["analyze", "--timezone", "UTC", *argv, str(DEMO)], out, err) == 0, err.getvalue()
    return out.getvalue()


WINDOW = ["--start-datetime", iso(TIMES[1]), "--stop-datetime", iso(TIMES[3])]


def test_a_time_window_reports_the_first_and_last_of_the_kept_transactions():
    r = json.loads(analyze("--format", "json", *WINDOW))
    assert r["summary"]["transactions"] == 2
    assert (r["summary"]["first_event"], r["summary"]["last_event"]) == (iso(TIMES[1]), iso(TIMES[2]))
    assert [t["start"] for t in r["timeline"]] == [iso(TIMES[1]), iso(TIMES[2])]
    assert sum(t["events"] for t in r["timeline"]) + r["timeline_outside"]["events"] == r["summary"]["events"]
    assert r["window"] == {"start": iso(TIMES[1]), "stop": iso(TIMES[3])}


def test_a_position_filter_ends_with_the_last_kept_transaction_not_the_rotate():
    r = json.loads(analyze("--format", "json", "--start-position", "1209"))
    assert (r["summary"]["first_event"], r["summary"]["last_event"]) == (iso(TIMES[1]), iso(TIMES[-1]))
    assert r["timeline"][-1]["start"] == iso(TIMES[-1])


def test_an_unfiltered_analyze_still_counts_every_event_in_time():
    r = json.loads(analyze("--format", "json"))
    assert r["filters"] == [] and r["window"] is None and "filters" not in r["summary"]
    assert r["timeline_outside"]["events"] == 0
    assert r["summary"]["last_event"] > iso(TIMES[-1])         # the ROTATE, written when the server ran


def test_the_report_names_its_filters_in_every_format(tmp_path):
    named = f"--table shop.orders --start-datetime {iso(TIMES[1])} --stop-datetime {iso(TIMES[3])}"
    argv = ["--table", "shop.orders", *WINDOW]
    text = analyze(*argv)
    assert re.search(rf"^filters +{re.escape(named.replace('Z', '+00:00'))}$", text, re.M)
    assert f"| filters | {named.replace('Z', '+00:00')} |" in analyze("--format", "markdown", *argv)
    r = json.loads(analyze("--format", "json", *argv))
    assert r["summary"]["filters"] == named
    assert r["filters"] == [{"option": "--table", "value": "shop.orders"},
                            {"option": "--start-datetime", "value": iso(TIMES[1])},
                            {"option": "--stop-datetime", "value": iso(TIMES[3])}]
    page = tmp_path / "report.html"
    analyze("--html", str(page), *argv)
    assert f'filters: <span data-key="summary.filters">{named}</span>' in page.read_text()


def test_the_html_timeline_draws_the_window_and_stops_there(tmp_path):
    page = tmp_path / "report.html"
    analyze("--html", str(page), "--bucket", "60", *WINDOW)
    html = page.read_text()
    chart = html[html.index('id="chart-timeline"'):]
    chart = chart[:chart.index("</svg>")]
    window = re.search(r'<rect class="window" x="([\d.]+)" y="\d+" width="([\d.]+)"[^>]*><title>([^<]*)</title>', chart)
    assert window and iso(TIMES[1]) in window.group(3) and iso(TIMES[3]) in window.group(3)
    labels = re.findall(r'text-anchor="(?:start|middle|end)">(\d{4}-[^<]+)</text>', chart)
    assert labels[0] == iso(TIMES[1]) and labels[-1] == iso(TIMES[3])     # the window, not 2026-11
