"""Filters that skip work: under time bounds, schema and table filters, the compiled loop of
stream/_cskipping.pyx steps over the MariaDB transactions the filters drop whole in the reader's window,
with no Event object, and what the filters keep, count and learn (the names of the notes of an empty
selection) is what they keep, count and learn reading every event (the pure-Python reference). The demo
binlog was written by the real server from fixtures/demo/workload.sql (tables shop.customers,
shop.orders; each group of statements stamped by its SET TIMESTAMP)."""
from __future__ import annotations

import re
import sys
from datetime import datetime, timezone

import pytest

from binlog_spec import api, compiled
from binlog_spec.binlog.event_types import ROW_OPS
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.stream.filters import FilterOptions

from conftest import FIXTURES, ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

DEMO = FIXTURES / "demo" / "mariadb-bin.000001"
TIMES = [int(t) for t in re.findall(r"SET TIMESTAMP=(\d+)", (FIXTURES / "demo" / "workload.sql").read_text())]
compiled_only = pytest.mark.skipif(compiled.load("binlog_spec.stream._cskipping") is None,
                                   reason="the pure-Python core has no compiled loop: every event is an Event")


def utc(ts: int) -> datetime:
    return datetime.fromtimestamp(ts, tz=timezone.utc)


def _rows(filters: FilterOptions, skipping: bool, buffer_size: int = 1 << 20, log=DEMO) -> tuple[list, list, tuple]:
    """The row changes kept, the events the reader yielded, and the filters' tally."""
    gate = api.skip_gate(filters) if skipping else None
    selection = api.Selection()
    sink = api.skipping_sink(gate, filters, selection) if skipping else None
    assert (sink is not None) == skipping
    yielded = []

    def seen(events):
        for ev in events:
            yielded.append(ev)
            yield ev
    read = api.read_events([log], api.ReadOptions(parse_bodies=api.ROWS_BODIES, buffer_size=buffer_size),
                           sink=sink)
    kept = api.select_events(seen(read), filters, [str(log)], SchemaTracker(), gate=gate, selection=selection)
    changes = [rc.to_dict() for rc in api.read_rows(kept)]
    return changes, yielded, (selection.kept, selection.rows, selection.tables, selection.schemas)


WINDOWS = [
    FilterOptions(tables=("shop.orders",)),
    FilterOptions(exclude_tables=("shop.customers",)),
    FilterOptions(databases=("nothing",)),
    FilterOptions(start_datetime=utc(TIMES[2]), stop_datetime=utc(TIMES[4])),
    FilterOptions(start_datetime=utc(TIMES[-1] + 3600)),                       # keeps nothing
    FilterOptions(tables=("shop.customers",), stop_datetime=utc(TIMES[3])),
    FilterOptions(server_ids=frozenset({1}), stop_datetime=utc(TIMES[3])),
    FilterOptions(exclude_server_ids=frozenset({1}), tables=("shop.orders",)),     # keeps nothing
]


@compiled_only
@pytest.mark.parametrize("filters", WINDOWS)
@pytest.mark.parametrize("buffer_size", [1 << 20, 512, 97])
def test_what_the_filters_keep_count_and_learn_is_the_same_with_the_skips(filters, buffer_size):
    # (small windows: the loop meets their ends inside transactions, hands them back, asks for more)
    changes, yielded, tally = _rows(filters, skipping=True, buffer_size=buffer_size)
    assert (changes, tally) == _rows(filters, skipping=False)[::2]


@compiled_only
def test_a_transaction_of_tables_the_filters_drop_is_never_read_as_events():
    filters = FilterOptions(tables=("shop.orders",))
    _, every, _ = _rows(filters, skipping=False)
    changes, yielded, _ = _rows(filters, skipping=True)
    assert changes and {c["table"] for c in changes} == {"orders"}
    dropped, tx = [], None          # the transactions whose every TABLE_MAP is of shop.customers
    for ev in every:
        if ev.type == "GTID_EVENT":
            tx = [ev.pos, set()]
        elif ev.type == "TABLE_MAP_EVENT" and tx is not None:
            tx[1].add(ev.fields["table"])
        elif ev.type == "XID_EVENT" and tx is not None:
            if tx[1] == {"customers"}:
                dropped.append(range(tx[0], ev.pos + ev.size))
            tx = None
    assert dropped, "the demo has a transaction of shop.customers alone"
    assert not [ev for ev in yielded if any(ev.pos in r for r in dropped)]


@compiled_only
@pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")
def test_every_transaction_of_a_dropped_table_is_skipped_not_only_the_first_of_its_shape():
    # (the loop keeps each rows event layout it was told once: the later events of that layout are read
    # from those offsets, here with table ids of six bytes, of 8 and 300 columns)
    with mariadb_server.MariaDBServer() as srv:
        wide = ", ".join(f"c{i} INT" for i in range(300))
        srv.sql(f"CREATE DATABASE d; CREATE TABLE d.a (id INT PRIMARY KEY, v INT, w VARCHAR(9), x INT, y INT, "
                f"z INT, u INT, t INT); CREATE TABLE d.b (id INT PRIMARY KEY, v INT); "
                f"CREATE TABLE d.wide (id INT PRIMARY KEY, {wide})")
        srv.sql("".join(f"INSERT INTO d.a (id, v) VALUES ({i}, {i}); INSERT INTO d.b VALUES ({i}, {i}); "
                        f"INSERT INTO d.wide (id) VALUES ({i}); UPDATE d.a SET w = 'x' WHERE id = {i}; "
                        for i in range(1, 41)))
        log = srv.binlogs()[-1]
        filters = FilterOptions(tables=("d.b",))
        changes, yielded, tally = _rows(filters, skipping=True, log=log)
        assert (changes, tally) == _rows(filters, skipping=False, log=log)[::2]
    assert len(changes) == 40 and {c["table"] for c in changes} == {"b"}
    assert sum(ev.type == "TABLE_MAP_EVENT" for ev in yielded) == 40, "only d.b's TABLE_MAPs reach the filters"


def test_only_time_server_schema_and_table_filters_are_skipped():
    assert api.skip_gate(FilterOptions(tables=("shop.orders",))) is not None
    assert api.skip_gate(FilterOptions(tables=("shop.orders",), server_ids=frozenset({1}))) is not None
    assert api.skip_gate(FilterOptions(exclude_server_ids=frozenset({2}))) is not None
    assert api.skip_gate(FilterOptions(tables=("shop.orders",), start_position=4)) is None
    assert api.skip_gate(FilterOptions(start_datetime=utc(TIMES[1]), stop_position=400)) is None
    assert api.skip_gate(FilterOptions(start_datetime=datetime(2026, 1, 1))) is None     # (no zone)
