"""Row changes paired with their transaction (stream.row_transactions.RowTransactions).

Expected values come from the servers' tools, never from our own output: the mysqlbinlog -vv texts kept
beside the corpus files (`*/expected/`), or mariadb-binlog -vv on a binlog a real MariaDB wrote. A rows
event belongs to the transaction of the last GTID event before it and commits with the first Xid after it.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from binlog_spec import api
from binlog_spec.errors import BinlogError
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.rows.decoder import RowDecoder
from binlog_spec.stream.row_transactions import RowTransactions, by_transaction

from conftest import CORPUS, ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
from mariadb_server import MariaDBServer  # noqa: E402

#: MySQL 5.6: four transactions BEGIN, TABLE_MAP, rows, XID; its mysqlbinlog -vv text.
MYSQL56 = CORPUS / "zalora_binlog-parser/data__fixtures__mysql-bin.01"
MYSQL56_TEXT = CORPUS / "zalora_binlog-parser/expected/plaintext-mysql-bin.01"
#: MySQL 8.2: GTID events with immediate_commit_timestamp; its mysqlbinlog --hexdump -vv text (UTF-16).
MYSQL8 = CORPUS / "mysql-cdc-rs/binlog.000018"
MYSQL8_TEXT = CORPUS / "mysql-cdc-rs/expected/8.0__19_30_Table_map_event_Write_rows_log_event__dump.txt"

_ROWS = re.compile(r"\t(Write|Update|Delete)_rows")
_XID = re.compile(r"\tXid = (\d+)")
_GTID = re.compile(r"\t(?:GTID (\d+-\d+-\d+)|Anonymous_GTID|GTID\t)")
_IMMEDIATE = re.compile(r"\timmediate_commit_timestamp=(\d+)")


def _blocks(text: str) -> list[tuple[int, str]]:
    """(position, text) of each event of a mysqlbinlog / mariadb-binlog text, from its `# at N` lines."""
    parts = re.split(r"^# at (\d+)\n", text, flags=re.M)
    return [(int(parts[i]), parts[i + 1]) for i in range(1, len(parts), 2)]


def _expected(text: str) -> dict[int, dict]:
    """Per rows event position: its rows (### lines), the XID of the Xid that ends its group (None when a
    COMMIT ends it), the GTID (MariaDB), the position and immediate_commit_timestamp of the last GTID event
    before it."""
    out: dict[int, dict] = {}
    gtid = start = immediate = None
    waiting: list[dict] = []
    for pos, block in _blocks(text):
        head = block.split("\n### ")[0]
        if "\tQuery\t" in head:
            if re.search(r"^COMMIT\s*/\*!\*/;", block, flags=re.M):    # a group that ends without an Xid
                waiting = []
            continue
        if (m := _GTID.search(head)) is not None:
            gtid, start = m.group(1), pos
            immediate = int(i.group(1)) if (i := _IMMEDIATE.search(head)) else None
        elif _ROWS.search(head):
            row = {"rows": len(re.findall(r"^### (?:INSERT|UPDATE|DELETE) ", block, flags=re.M)),
                   "gtid": gtid, "start": start, "immediate": immediate, "xid": None}
            out[pos] = row
            waiting.append(row)
        elif (m := _XID.search(head)) is not None:
            for row in waiting:
                row["xid"] = int(m.group(1))
            waiting = []
    return out


def _pairs(events, gaps=None) -> list:
    return list(RowTransactions(RowDecoder(SchemaTracker())).pairs(events, gaps))


def test_rows_get_the_xid_of_their_own_transaction():
    expected = _expected(MYSQL56_TEXT.read_text("latin-1"))
    got = {ev.pos: {"rows": len(changes), "xid": tx.xid} for changes, ev, tx in _pairs(api.read_events([MYSQL56]))}
    assert got == {pos: {"rows": e["rows"], "xid": e["xid"]} for pos, e in expected.items()}
    assert len({e["xid"] for e in expected.values()}) == 4


def test_mysql8_commit_time_is_the_gtid_events_immediate_commit_timestamp():
    expected = _expected(MYSQL8_TEXT.read_bytes().decode("utf-16").replace("\r\n", "\n"))
    (pos, e), = expected.items()
    (changes, ev, tx), = _pairs(api.read_events([MYSQL8]))
    assert (ev.pos, len(changes), tx.xid, tx.start_pos) == (pos, e["rows"], e["xid"], e["start"])
    us = e["immediate"]
    assert us % 1_000_000                   # finer than the XID event's header timestamp (whole seconds)
    when = datetime.fromtimestamp(us // 1_000_000, timezone.utc).replace(microsecond=us % 1_000_000)
    assert (tx.commit_time, tx.commit_time_source, tx.original_commit_time) == (
        when, "immediate_commit_timestamp", when)


def test_rows_of_a_transaction_cut_by_a_skipped_stretch_come_without_xid_but_are_not_lost():
    expected = _expected(MYSQL56_TEXT.read_text("latin-1"))
    cut_rows, after_rows = sorted(expected)[1:3]
    xid_pos = min(p for p, _ in _blocks(MYSQL56_TEXT.read_text("latin-1")) if p > cut_rows)
    gaps: list = []

    def skipping(events):       # a reader that stepped over the bytes of the cut transaction's XID event
        for ev in events:
            if ev.pos == xid_pos:
                gaps.append(("skipped", xid_pos))
                continue
            yield ev

    got = _pairs(skipping(api.read_events([MYSQL56])), gaps)
    at = [ev.pos if ev is not None else changes for changes, ev, _ in got]
    assert at == [sorted(expected)[0], cut_rows, ("skipped", xid_pos), after_rows, sorted(expected)[3]]
    _, _, cut = got[1]
    assert (len(got[1][0]), cut.xid, cut.complete, cut.commit_time) == (expected[cut_rows]["rows"], None, False, None)
    assert got[3][2].xid == expected[after_rows]["xid"] and got[3][2].complete


def test_rows_of_a_transaction_cut_by_a_read_error_come_before_the_error(tmp_path):
    expected = _expected(MYSQL56_TEXT.read_text("latin-1"))
    first, cut_rows = sorted(expected)[:2]
    xid_pos = min(p for p, _ in _blocks(MYSQL56_TEXT.read_text("latin-1")) if p > cut_rows)
    truncated = tmp_path / "mysql-bin.000001"
    truncated.write_bytes(MYSQL56.read_bytes()[:xid_pos + 10])     # the input ends inside the XID event
    got = []
    with pytest.raises(BinlogError):
        for item in RowTransactions(RowDecoder(SchemaTracker())).pairs(api.read_events([truncated])):
            got.append(item)
    assert [(ev.pos, len(changes), tx.xid, tx.complete) for changes, ev, tx in got] == [
        (first, expected[first]["rows"], expected[first]["xid"], True),
        (cut_rows, expected[cut_rows]["rows"], None, False)]


def test_by_transaction_gives_the_transaction_a_read_error_cut_before_the_error(tmp_path):
    expected = _expected(MYSQL56_TEXT.read_text("latin-1"))
    first, cut_rows = sorted(expected)[:2]
    xid_pos = min(p for p, _ in _blocks(MYSQL56_TEXT.read_text("latin-1")) if p > cut_rows)
    truncated = tmp_path / "mysql-bin.000001"
    truncated.write_bytes(MYSQL56.read_bytes()[:xid_pos + 10])
    got = []
    with pytest.raises(BinlogError):
        for t in by_transaction(api.read_events([truncated]), RowDecoder(SchemaTracker())):
            got.append(t)
    assert [(t.transaction.xid, t.transaction.complete, len(t.changes)) for t in got] == [
        (expected[first]["xid"], True, expected[first]["rows"]), (None, False, expected[cut_rows]["rows"])]


def test_a_row_that_does_not_decode_is_a_fault_after_the_rows_before_it():
    events = [ev for ev in api.read_events([MYSQL56]) if ev.type != "TABLE_MAP_EVENT" or ev.pos > 300]
    expected = _expected(MYSQL56_TEXT.read_text("latin-1"))
    first = sorted(expected)[0]
    got = list(RowTransactions(RowDecoder(SchemaTracker()), fault=lambda exc: ("fault", type(exc).__name__))
               .pairs(events))
    assert [(ev.pos, changes if type(changes) is tuple else len(changes), tx.xid) for changes, ev, tx in got][:2] == [
        (first, 0, expected[first]["xid"]), (first, ("fault", "MissingTableMapError"), expected[first]["xid"])]


WORKLOAD = """
CREATE DATABASE db1; USE db1;
CREATE TABLE ti (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE tm (id INT PRIMARY KEY, v INT) ENGINE=MyISAM;
INSERT INTO ti VALUES (1,1),(2,2),(3,3);
BEGIN; INSERT INTO ti VALUES (7,7); SAVEPOINT s2; DELETE FROM ti WHERE id=1; INSERT INTO tm VALUES (1,1);
  ROLLBACK TO s2; UPDATE ti SET v=20 WHERE id=2; COMMIT;
BEGIN; INSERT INTO ti VALUES (8,8); SAVEPOINT s3; UPDATE ti SET v=30 WHERE id=3; RELEASE SAVEPOINT s3; COMMIT;
"""


@pytest.fixture(scope="module")
def savepoints(tmp_path_factory):
    """A binlog MariaDB wrote for WORKLOAD (a ROLLBACK TO after a MyISAM change is written inside its
    transaction: tests/output/rollback/test_savepoints_xa_server.py), and mariadb-binlog -vv's text of it."""
    srv = MariaDBServer().start()
    try:
        srv.sql("FLUSH BINARY LOGS;")
        srv.sql(WORKLOAD)
        srv.sql("FLUSH BINARY LOGS;")
        log = tmp_path_factory.mktemp("savepoints") / "mariadb-bin.000002"
        log.write_bytes(srv.binlogs()[1].read_bytes())
    finally:
        srv.cleanup()
    text = subprocess.run([shutil.which("mariadb-binlog"), "--no-defaults", "-vv", str(log)], capture_output=True,
                          check=True).stdout.decode("latin-1")
    return log, text


def test_a_rollback_to_savepoint_does_not_split_a_transaction(savepoints):
    log, text = savepoints
    assert "ROLLBACK TO `s2`" in text        # the server wrote it inside the transaction
    expected = _expected(text)
    got = {ev.pos: (len(changes), tx.gtid, tx.xid, tx.start_pos) for changes, ev, tx in _pairs(api.read_events([log]))}
    assert got == {pos: (e["rows"], e["gtid"], e["xid"], e["start"]) for pos, e in expected.items()}
    (rollback_to,) = [pos for pos, block in _blocks(text) if "ROLLBACK TO `s2`" in block]
    start = max(p for p, block in _blocks(text) if p < rollback_to and _GTID.search(block.split("\n### ")[0]))
    end = min(p for p, block in _blocks(text) if p > rollback_to and _XID.search(block))
    inside = [p for p in got if start < p < end]
    assert min(inside) < rollback_to < max(inside)      # rows on both sides of the ROLLBACK TO
    assert {got[p][1:] for p in inside} == {(expected[min(inside)]["gtid"], expected[min(inside)]["xid"], start)}


def test_a_reader_that_stops_early_closes_the_pairing_quietly():
    """A reader that stops asking (a Spark limit, its own error) closes the generator: the changes it no
    longer wants are not given, and closing raises nothing (a yield on GeneratorExit would raise
    RuntimeError, printed by Python as "Exception ignored")."""
    pairs = RowTransactions(RowDecoder(SchemaTracker())).pairs(api.read_events([MYSQL56]))
    first = next(pairs)
    assert first[2].xid is not None
    pairs.close()
