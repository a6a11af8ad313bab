"""`rows --table T --key V` over many small transactions (output/_crow_key.pxi's `quiet`): a transaction of tables the
filters keep, none of whose rows the key matches, is stepped over whole once its TABLE_MAP and its rows layout were
met, and the transactions of a table the filters drop, which alternate with them, go to the skipping loop. On a
binlog the real MariaDB wrote (single-row UPDATEs of a kept and a dropped table in turn, one row matching in the
middle, a zero date in a row not kept), the lines, what the RowSelector counts (the rows looked at and kept) and what
the filters' Selection counts (events, rows events, the tables learnt) equal the reference's (every event read by
the filters and the selector, no lane); the lines equal the FULL output filtered by an independent predicate; a
value the pure decoder refuses in a row not kept ends the run with the reference's error."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib

import pytest

from binlog_spec import compiled

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = [pytest.mark.skipif(compiled.load("binlog_spec.output._crow_text") is None,
                                 reason="the compiled core is not built (make build)"),
              pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")]

UPDATES = "\n".join(f"UPDATE q.c SET v = CONCAT(v, '.') WHERE id = {i}; UPDATE q.o SET v = v + 1 WHERE id = {i};"
                    for i in range(1, 41))
WORKLOAD = f"""
CREATE DATABASE q;
CREATE TABLE q.c (id INT PRIMARY KEY, v VARCHAR(200) CHARSET utf8mb4, d DECIMAL(12,2), t DATETIME(6));
CREATE TABLE q.o (id BIGINT PRIMARY KEY, v INT);
INSERT INTO q.c SELECT seq, CONCAT('c', seq), seq * 1.25, '2024-01-02 03:04:05.5' FROM q.seq_1_to_60;
INSERT INTO q.o SELECT seq, seq FROM q.seq_1_to_60;
{UPDATES}
UPDATE q.c SET t = '2024-03-04 05:06:07.123457' WHERE id = 50;
UPDATE q.o SET v = 0 WHERE id = 50;
SET SESSION sql_mode = '';
UPDATE q.c SET t = '0000-00-00' WHERE id = 51;
UPDATE q.c SET v = 'after' WHERE id = 52;
UPDATE q.c SET v = 'last' WHERE id = 21;
"""


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    with mariadb_server.MariaDBServer() as srv:
        srv.sql(WORKLOAD)
        path = tmp_path_factory.mktemp("quiet") / "mariadb-bin.000001"
        path.write_bytes(srv.binlogs()[-1].read_bytes())
    return str(path)


def _pure(args: list[str]) -> tuple[str, str, int]:
    env = {**os.environ, "BINLOG_SPEC_PURE": "1", "PYTHONPATH": str(ROOT / "src")}
    got = subprocess.run([sys.executable, "-m", "binlog_spec", *args], env=env, capture_output=True)
    return got.stdout.decode(), got.stderr.decode(), got.returncode


def _run(log: str, key: str, lane: bool) -> tuple:
    """The JSON text of `rows --table q.c --key key` by the api, what the RowSelector and the filters' Selection
    counted; with the lane, or every event read by the filters and the selector (the reference)."""
    from binlog_spec import api
    from binlog_spec.rows.ddl.schema import SchemaTracker
    from binlog_spec.stream.filters import FilterOptions
    filters = FilterOptions(tables=("q.c",))
    rows = api.RowSelector(api.row_filter_options(key=key, tables=("q.c",)))
    gate, selection, schema = api.skip_gate(filters), api.Selection(), SchemaTracker()
    sink = api.skipping_sink(gate, filters, selection) if lane else None
    taker = api.row_lane("jsonl", schema, filters, (gate, selection, sink), rows) if lane else None
    assert (taker is not None) == lane
    events = api.read_events([log], api.ReadOptions(parse_bodies=api.ROWS_BODIES), sink=taker)
    kept = api.select_events(events, filters, [log], schema, gate=gate, selection=selection)
    changes = filter(rows.keeps, api.read_rows(kept))
    text = "\n".join(x.decode() if type(x) is bytes else x
                     for x in api.lines_with_lane(taker, api.row_lines(changes, "jsonl")))
    return text, (rows.seen, rows.kept), (selection.kept, selection.rows, selection.tables)


@pytest.mark.parametrize("key", ["21", "50", "51", "52", "7", "999"])
def test_transactions_no_row_of_which_matches_are_counted_and_skipped_as_the_reference_reads_them(log, key):
    got, want = _run(log, key, lane=True), _run(log, key, lane=False)
    assert got == want
    assert want[1][0] > 100                  # (every row of q.c looked at)
    full = _pure(["rows", "--format", "jsonl", log])[0].splitlines()
    expected = [line for line in full if json.loads(line)["table"] == "c" and
                any((json.loads(line)[side] or {}).get("id") == int(key) for side in ("before", "after"))]
    assert got[0].splitlines() == expected
    assert bool(expected) == (key != "999")


def test_a_refused_value_in_a_row_not_kept_of_a_skippable_transaction_ends_the_run_as_the_reference_does(
        log, tmp_path):
    """id 50's new DATETIME(6) fraction (123457) made 0x7fffff, past 999999, its event's checksum made again."""
    from binlog_spec import api
    data = bytearray(open(log, "rb").read())
    at = data.index((123457).to_bytes(3, "big"))
    data[at:at + 3] = b"\x7f\xff\xff"
    for ev in api.read_events([log]):
        if ev.pos <= at < ev.pos + ev.size:
            end = ev.pos + ev.size - 4
            data[end:end + 4] = zlib.crc32(bytes(data[ev.pos:end])).to_bytes(4, "little")
            break
    damaged = tmp_path / "damaged-bin.000001"
    damaged.write_bytes(bytes(data))
    args = ["rows", "--format", "jsonl", "--table", "q.c", "--key", "21", str(damaged)]
    want = _pure(args)
    assert want[2] != 0 and "999999" in want[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    got = subprocess.run([sys.executable, "-m", "binlog_spec", *args], env=env, capture_output=True)
    assert (got.stdout.decode(), got.stderr.decode(), got.returncode) == want
