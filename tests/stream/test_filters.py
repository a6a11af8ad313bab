"""Filters: whole transactions by time, position, GTID and server id; rows by schema and table.

Positions and times are cross-checked against mariadb-binlog's own
--start/--stop-position and --start/--stop-datetime on the same files.
"""
from __future__ import annotations

import shutil
import subprocess
from datetime import datetime, timezone

import pytest

import binlog_spec
from binlog_spec.binlog.event_types import CONTROL_EVENTS
from binlog_spec.stream.filters import FilterOptions, filter_events
from binlog_spec.stream.transactions import Transactions
from binlog_spec.binlog.gtid import GtidSet, GtidSetError

from conftest import CORPUS, FIXTURES

MARIADB_BINLOG = shutil.which("mariadb-binlog")
DEMO = FIXTURES / "demo" / "mariadb-bin.000001"


def kept(path, **options):
    return list(filter_events(binlog_spec.open(path), FilterOptions(**options)))


def data_positions(events):
    return [e.pos for e in events if e.type_code not in CONTROL_EVENTS]


def mariadb_binlog_positions(path, *args):
    assert MARIADB_BINLOG, "mariadb-binlog is required (make test installs mariadb-client)"
    out = subprocess.run([MARIADB_BINLOG, "--no-defaults", *args, str(path)], capture_output=True, check=True).stdout
    positions = [int(line.split()[2]) for line in out.decode("latin-1").splitlines() if line.startswith("# at ")]
    evs = {e.pos: e for e in binlog_spec.open(path)}
    return [p for p in positions if evs[p].type_code not in CONTROL_EVENTS]


def transaction_starts(path):
    tx = Transactions()
    return [e for e in binlog_spec.open(path) if tx.step(e)[0]]


def test_gtid_sets_parse_mysql_and_mariadb_forms():
    s = GtidSet.parse("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5:7, 55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:1-2,"
                      "0-1-100,0-1-200-300")
    assert "3e11fa47-71ca-11e1-9e33-c80aa9429562:5" in s and "3e11fa47-71ca-11e1-9e33-c80aa9429562:6" not in s
    assert "3e11fa47-71ca-11e1-9e33-c80aa9429562:7" in s
    assert "55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:2" in s
    assert "55778904-0299-11f1-b1b8-4ef0c4956feb:2" not in s  # untagged is another set
    assert "0-1-100" in s and "0-1-250" in s and "0-1-101" not in s and "0-2-100" not in s
    assert "ANONYMOUS" not in s and None not in s
    for bad in ("nonsense", "3E11FA47-71CA-11E1-9E33-C80AA9429562:5-1", "0-1"):
        with pytest.raises(GtidSetError):
            GtidSet.parse(bad)


def test_transactions_start_at_gtid_events_and_end_at_commit():
    starts = transaction_starts(DEMO)
    assert [e.type for e in starts] == ["GTID_EVENT"] * 8
    ev = list(binlog_spec.open(DEMO))
    tx = Transactions()
    ends = [e.type for e in ev if tx.step(e)[1]]
    assert ends == ["QUERY_EVENT"] * 3 + ["XID_EVENT"] * 3 + ["QUERY_EVENT", "XID_EVENT"]


def test_transactions_without_gtids_start_at_begin():
    path = CORPUS / "rust_mysql_common/binlog_transaction.000001"  # MySQL 5.0
    starts = transaction_starts(path)
    assert starts and all(e.type == "QUERY_EVENT" for e in starts)


@pytest.mark.parametrize("path", [DEMO, FIXTURES / "types-full" / "mariadb-bin.000001",
                                  CORPUS / "zalora_binlog-parser/data__gtid-fixtures__mysql-bin.01",
                                  CORPUS / "mysql-cdc-rs/binlog.000733"], ids=lambda p: p.name)
def test_position_filters_match_mariadb_binlog(path):
    starts = [e.pos for e in transaction_starts(path)]
    picks = sorted({starts[0], starts[len(starts) // 2], starts[-1]})
    for p in picks:
        assert data_positions(kept(path, start_position=p)) == mariadb_binlog_positions(path, f"--start-position={p}")
        assert data_positions(kept(path, stop_position=p)) == mariadb_binlog_positions(path, f"--stop-position={p}")


def test_datetime_filters_match_mariadb_binlog():
    path = CORPUS / "mysql-cdc-rs/binlog.000733"
    times = sorted({e.timestamp for e in transaction_starts(path)})
    assert len(times) >= 3
    for t in times[1:]:
        text = datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        when = datetime.fromtimestamp(t, tz=timezone.utc)
        theirs_start = mariadb_binlog_positions(path, f"--start-datetime={text}")
        theirs_stop = mariadb_binlog_positions(path, f"--stop-datetime={text}")
        assert data_positions(kept(path, start_datetime=when)) == theirs_start
        assert data_positions(kept(path, stop_datetime=when)) == theirs_stop


def test_table_filters_drop_rows_and_the_transactions_they_empty():
    only_orders = kept(DEMO, tables=("shop.orders",))
    maps = {e.table for e in only_orders if e.type == "TABLE_MAP_EVENT"}
    assert maps == {"orders"}
    # workload.sql: 0-1-1..3 and 0-1-7 are DDL (statements: table filters keep them), 0-1-4 and 0-1-5
    # write both tables, 0-1-6 deletes orders, 0-1-8 updates customers only: emptied, dropped whole
    assert [e.gtid for e in only_orders if e.type == "GTID_EVENT"] == [f"0-1-{i}" for i in range(1, 8)]
    assert sum(e.type == "XID_EVENT" for e in only_orders) == 3
    # the ANNOTATE_ROWS of the customers statements went with their rows
    assert [e.query.split()[:3] for e in only_orders if e.type == "ANNOTATE_ROWS_EVENT"] == \
        [["INSERT", "INTO", "orders"], ["UPDATE", "orders", "SET"], ["DELETE", "FROM", "orders"]]
    # a transaction kept keeps its framing: every event of 0-1-4 but the customers statement's three
    all_events = list(binlog_spec.open(DEMO))
    start = next(k for k, e in enumerate(all_events) if e.type == "GTID_EVENT" and e.gtid == "0-1-4")
    end = next(k for k, e in enumerate(all_events) if k > start and e.type == "XID_EVENT")
    tx = [e.pos for e in only_orders if all_events[start].pos <= e.pos <= all_events[end].pos]
    assert len(tx) == end - start + 1 - 3
    assert (tx[0], tx[-1]) == (all_events[start].pos, all_events[end].pos)
    no_orders = kept(DEMO, exclude_tables=("*.ord*",))
    assert {e.table for e in no_orders if e.type == "TABLE_MAP_EVENT"} == {"customers"}
    rows = [e for e in no_orders if e.type.endswith("ROWS_EVENT_V1")]
    assert len(rows) == 3  # the customers insert, its balance update and the vip update
    assert [e.gtid for e in no_orders if e.type == "GTID_EVENT"] == [f"0-1-{i}" for i in (1, 2, 3, 4, 5, 7, 8)]


def test_transactions_empty_in_the_input_are_kept():
    """Only what the filters empty is dropped: an unfiltered empty transaction stays."""
    path = CORPUS / "zalora_binlog-parser/data__gtid-fixtures__mysql-bin.01"
    assert data_positions(kept(path, exclude_tables=("nosuchdb.*",))) == data_positions(binlog_spec.open(path))


def test_schema_filters_drop_statements_run_in_other_schemas():
    none = kept(DEMO, databases=("nomatch*",))
    assert not any(e.type in ("TABLE_MAP_EVENT", "WRITE_ROWS_EVENT_V1") for e in none)
    assert not any(e.type == "QUERY_EVENT" and e.query.startswith("CREATE TABLE") for e in none)
    assert [e.pos for e in kept(DEMO, databases=("sh?p",))] == [e.pos for e in binlog_spec.open(DEMO)]


def test_gtid_and_server_id_filters_keep_whole_transactions():
    inc = kept(DEMO, include_gtids=GtidSet.parse("0-1-4-5"))
    assert [e.gtid for e in inc if e.type == "GTID_EVENT"] == ["0-1-4", "0-1-5"]
    assert sum(e.type == "XID_EVENT" for e in inc) == 2
    exc = kept(DEMO, exclude_gtids=GtidSet.parse("0-1-4-5"))
    assert [e.gtid for e in exc if e.type == "GTID_EVENT"] == ["0-1-1", "0-1-2", "0-1-3", "0-1-6", "0-1-7", "0-1-8"]
    path = CORPUS / "zalora_binlog-parser/data__gtid-fixtures__mysql-bin.01"
    gtids = [e.gtid for e in binlog_spec.open(path) if e.type == "GTID_LOG_EVENT"]
    sid = gtids[0].split(":")[0]
    one = kept(path, include_gtids=GtidSet.parse(gtids[1]))
    assert [e.gtid for e in one if e.type == "GTID_LOG_EVENT"] == [gtids[1]]
    assert sid in gtids[1]
    assert data_positions(kept(DEMO, server_ids=frozenset({2}))) == []
    assert data_positions(kept(DEMO, exclude_server_ids=frozenset({2}))) == data_positions(kept(DEMO))


def test_the_filters_name_themselves_as_the_command_line_gives_them():
    """What a report says it covers: each option with its value (times in UTC), in a form the command
    line takes back (the GTID sets parse to the same set)."""
    from binlog_spec.binlog.gtid import GtidPosition
    gtids = "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5,0-1-7,0-2-9-12"
    f = FilterOptions(tables=("shop.orders",), exclude_databases=("tmp*",), include_gtids=GtidSet.parse(gtids),
                      server_ids=frozenset({2, 1}),
                      start_datetime=datetime(2026, 1, 1, 9, 0, tzinfo=timezone.utc),
                      stop_gtid=GtidPosition.parse("0-1-20,1-1-3"))
    assert f.described() == [("--exclude-database", "tmp*"), ("--table", "shop.orders"), ("--include-gtids", gtids),
                             ("--server-id", "1"), ("--server-id", "2"),
                             ("--start-datetime", "2026-01-01T09:00:00Z"), ("--stop-position", "0-0-20,1-0-3")]
    assert GtidSet.parse(gtids) == f.include_gtids and GtidPosition.parse("0-0-20,1-0-3") == f.stop_gtid
    assert FilterOptions().described() == []
