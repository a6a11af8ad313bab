"""A time window costs `analyze` a skip: with the compiled core, the transactions the window drops never
become Event objects (the compiled loop steps over them in the reader's window, api.skip_gate), and the
report is the one the pure-Python reference gives (tests/differential.py compares the two over the corpus).
The demo binlog was written by the real server from fixtures/demo/workload.sql, whose SET TIMESTAMPs
give each transaction's time."""
from __future__ import annotations

import re

import pytest

from binlog_spec import api, compiled
from binlog_spec.binlog.event_types import ROW_OPS
from binlog_spec.options import AnalyzeOptions
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.stream.filters import FilterOptions

from conftest import FIXTURES

DEMO = FIXTURES / "demo" / "mariadb-bin.000001"
TIMES = [int(t) for t in re.findall(r"SET TIMESTAMP=(\d+)", (FIXTURES / "demo" / "workload.sql").read_text())]
compiled_only = pytest.mark.skipif(compiled.load("binlog_spec.analysis._ccollector") is None,
                                   reason="the pure-Python core has no compiled loop: every event is an Event")


def _analyze(filters: FilterOptions, skipping: bool, buffer_size: int = 1 << 20) -> tuple[dict, list]:
    """The report, and the events the reader yielded (the ones the compiled loop did not take)."""
    options = AnalyzeOptions(filters=filters)
    analyzer, schema, selection = api.analyzer(options), SchemaTracker(), api.Selection()
    gate = api.skip_gate(filters) if skipping else None
    sink = api.analyzer_sink(analyzer, schema, gate, selection) if skipping else None
    yielded = []

    def seen(events):
        for ev in events:
            yielded.append(ev)
            yield ev
    read = api.read_events([DEMO], api.ReadOptions(parse_bodies=api.ANALYZE_BODIES, buffer_size=buffer_size),
                           sink=sink)
    kept = api.select_events(seen(read), filters, [str(DEMO)], schema, gate=gate, selection=selection)
    return api.analyze(kept, options, analyzer=analyzer), yielded


@compiled_only
def test_the_rows_events_a_time_window_drops_are_never_read_as_events():
    from datetime import datetime, timezone
    start, stop = (datetime.fromtimestamp(t, tz=timezone.utc) for t in (TIMES[1], TIMES[3]))
    filters = FilterOptions(start_datetime=start, stop_datetime=stop)
    report, yielded = _analyze(filters, skipping=True)
    reference, every = _analyze(filters, skipping=False)
    assert report == reference
    outside = [ev for ev in every if ev.type_code in ROW_OPS and not TIMES[1] <= ev.timestamp < TIMES[3]]
    assert outside, "the demo has rows events outside the window"
    assert not [ev for ev in yielded if ev.type_code in ROW_OPS and not TIMES[1] <= ev.timestamp < TIMES[3]]


@compiled_only
@pytest.mark.parametrize("buffer_size", [97, 512, 4096])
@pytest.mark.parametrize("bounds", [(1, 3), (2, None), (None, 2), (-1, None)])
def test_small_read_windows_give_the_same_report(bounds, buffer_size):
    # (the loop meets the window's end inside transactions: it hands them back, or asks for more)
    from datetime import datetime, timezone
    lo, hi = (None if k is None else datetime.fromtimestamp(TIMES[k] + (3600 if k == -1 else 0), tz=timezone.utc)
              for k in bounds)
    filters = FilterOptions(start_datetime=lo, stop_datetime=hi)
    assert _analyze(filters, True, buffer_size)[0] == _analyze(filters, False)[0]


def test_time_server_schema_and_table_filters_let_a_loop_skip():
    from datetime import datetime, timezone
    at = datetime.fromtimestamp(TIMES[1], tz=timezone.utc)
    assert api.skip_gate(FilterOptions(start_datetime=at)) is not None
    assert api.skip_gate(FilterOptions()) is None
    assert api.skip_gate(FilterOptions(start_datetime=at, start_position=4)) is None
    for filters in (FilterOptions(start_datetime=at, server_ids=frozenset({1})), FilterOptions(tables=("*.orders",))):
        assert api.analyzer_sink(api.analyzer(AnalyzeOptions(filters=filters)), SchemaTracker(),
                                 api.skip_gate(filters), api.Selection()) is not None


#: Table and server-id filters (the skipping loop drops the transactions they drop whole; the loop takes the
#: ones whose TABLE_MAPs the analyzer was fed, so ones they keep whole).
TABLED = [dict(tables=("*.orders",)), dict(exclude_tables=("*.orders",)), dict(tables=("*.customers",)),
          dict(server_ids=frozenset({1}), exclude_tables=("*.customers",)), dict(server_ids=frozenset({2})),
          dict(databases=("nosuch",))]


@compiled_only
@pytest.mark.parametrize("buffer_size", [97, 4096, 1 << 20])
@pytest.mark.parametrize("filters", TABLED, ids=lambda f: " ".join(f"{k}={v}" for k, v in f.items()))
def test_table_and_server_filters_give_the_reference_report_and_tally(filters, buffer_size):
    filters = FilterOptions(**filters)

    def run(skipping: bool):
        options = AnalyzeOptions(filters=filters)
        analyzer, schema, selection = api.analyzer(options), SchemaTracker(), api.Selection()
        gate = api.skip_gate(filters) if skipping else None
        sink = api.analyzer_sink(analyzer, schema, gate, selection) if skipping else None
        read = api.read_events([DEMO], api.ReadOptions(parse_bodies=api.ANALYZE_BODIES, buffer_size=buffer_size),
                               sink=sink)
        kept = api.select_events(read, filters, [str(DEMO)], schema, gate=gate, selection=selection)
        report = api.analyze(kept, options, analyzer=analyzer)
        return report, (selection.kept, selection.rows, selection.tables, selection.schemas), \
            set(gate.excluded_tables) if gate is not None else None
    fast, reference = run(True), run(False)
    assert fast[:2] == reference[:2]


def _reference(filters: FilterOptions) -> dict:
    options = AnalyzeOptions(filters=filters)
    read = api.read_events([DEMO], api.ReadOptions(parse_bodies=api.ANALYZE_BODIES))
    return api.analyze(api.select_events(read, filters, [str(DEMO)], SchemaTracker()), options)
