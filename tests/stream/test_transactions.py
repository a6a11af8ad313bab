"""Transaction boundaries with savepoints and XA, as MySQL reads them (sql/log_event.h, Query_log_event:
`starts_group` is BEGIN or XA START, `ends_group` is COMMIT, ROLLBACK but not ROLLBACK TO, XA ROLLBACK;
`is_trans_keyword`, by which client/mysqlbinlog.cc keeps a statement whatever its database, adds SAVEPOINT
and every XA statement).

The binlog is the MySQL test suite's std_data/binlog_savepoint.000001 (bug #50407, MySQL 5.1): BEGIN,
statements, `SavePoint mixed_cases`, statements, `ROLLBACK TO mixed_cases`, statements, XID: one
transaction. The --database and --start-position expectations are mariadb-binlog's output on that file.
"""
from __future__ import annotations

import shutil
import subprocess

import pytest

import binlog_spec
from binlog_spec.binlog.event_types import CONTROL_EVENTS
from binlog_spec.rows.statement_text import (TX_BEGIN, TX_END, TX_RELEASE, TX_ROLLBACK_TO, TX_SAVEPOINT,
                                             TX_XA_END, transaction_control, savepoint_name)
from binlog_spec.stream.filters import FilterOptions, filter_events
from binlog_spec.stream.transactions import Transactions, summarize

from conftest import CORPUS

SAVEPOINT_BINLOG = CORPUS / "rust_mysql_common/binlog_savepoint.000001"
MARIADB_BINLOG = shutil.which("mariadb-binlog")


def _statements_of_mariadb_binlog(*args: str) -> list[str]:
    """The statements mariadb-binlog prints for the file (its SET / DELIMITER / comment lines aside)."""
    assert MARIADB_BINLOG, "mariadb-binlog is required (make test installs mariadb-client)"
    out = subprocess.run([MARIADB_BINLOG, "--no-defaults", *args, str(SAVEPOINT_BINLOG)], capture_output=True,
                         check=True).stdout.decode("latin-1")
    skip = ("/*", "SET ", "DELIMITER", "#", "'", "BINLOG", "use ", "ROLLBACK /* added")
    lines = [line.split("/*!*/;")[0] for line in out.splitlines()]
    return [line for line in lines if line and not line.startswith(skip) and not _is_base64(line)]


def _is_base64(line: str) -> bool:
    return len(line) > 40 and " " not in line


@pytest.mark.parametrize("statement, expected", [
    (b"BEGIN", TX_BEGIN), (b"COMMIT", TX_END), (b"ROLLBACK", TX_END), (b"ROLLBACK WORK", TX_END),
    (b"ROLLBACK TO `s2`", TX_ROLLBACK_TO), (b"ROLLBACK TO mixed_cases", TX_ROLLBACK_TO),
    (b"rollback work to savepoint sp", TX_ROLLBACK_TO), (b"/* bla bla */ ROLLBACK TO a", TX_ROLLBACK_TO),
    (b" -- note\n\trollback\tto a", TX_ROLLBACK_TO), (b"SavePoint mixed_cases", TX_SAVEPOINT),
    (b"/* bla bla */ SAVEPOINT a", TX_SAVEPOINT), (b"RELEASE SAVEPOINT a", TX_RELEASE),
    (b"XA START X'7831',X'',1", TX_BEGIN), (b"XA END X'7831',X'',1", TX_XA_END),
    (b"XA COMMIT X'7831',X'',1", TX_END), (b"XA ROLLBACK X'7832',X'',1", TX_END),
    (b"SAVEPOINTS_TABLE_INSERT", None), (b"INSERT INTO t VALUES (1)", None), (b"COMMITTED", None),
])
def test_transaction_control_is_read_past_case_white_space_and_comments(statement, expected):
    assert transaction_control(statement) == expected


def test_savepoint_names_compare_without_case_and_quotes():
    assert savepoint_name("SAVEPOINT `Mixed Cases`") == savepoint_name("rollback to savepoint `mixed cases`")
    assert savepoint_name("SavePoint mixed_cases") == savepoint_name("ROLLBACK TO mixed_cases") == "mixed_cases"
    assert savepoint_name("ROLLBACK WORK TO `a``b`") == "a`b"


def test_rollback_to_a_savepoint_does_not_end_the_transaction():
    tx = Transactions()
    marks = [(e.pos, tx.step(e)) for e in binlog_spec.open(SAVEPOINT_BINLOG)]
    assert [pos for pos, (starts, _) in marks if starts] == [252]           # BEGIN
    assert [pos for pos, (_, ends) in marks if ends] == [987]               # the XID, not ROLLBACK TO at 702
    summaries = list(summarize(binlog_spec.read_events([str(SAVEPOINT_BINLOG)])))
    assert len(summaries) == 1 and summaries[0].complete and summaries[0].xid is not None


def test_start_position_inside_a_savepoint_transaction_keeps_it_whole():
    kept = list(filter_events(binlog_spec.open(SAVEPOINT_BINLOG), FilterOptions(start_position=788),
                              files=[str(SAVEPOINT_BINLOG)]))
    data = [e.pos for e in kept if e.type_code not in CONTROL_EVENTS]
    assert data == [252, 320, 412, 496, 611, 702, 788, 896, 987]


def test_database_filter_keeps_savepoint_and_rollback_to_as_mysqlbinlog_does():
    kept = filter_events(binlog_spec.open(SAVEPOINT_BINLOG), FilterOptions(databases=("db1",)))
    ours = [e.fields["query"] for e in kept if e.type_code == 2]
    # mariadb-binlog prints the XID as COMMIT: the statements of QUERY events are the others
    theirs = [s for s in _statements_of_mariadb_binlog("--database=db1") if s not in ("COMMIT",)]
    assert "SavePoint mixed_cases" in theirs and "ROLLBACK TO mixed_cases" in theirs
    assert ours == theirs


def test_table_filter_drops_a_transaction_left_with_only_its_savepoints():
    kept = list(filter_events(binlog_spec.open(SAVEPOINT_BINLOG), FilterOptions(tables=("nodb.none",))))
    assert [e for e in kept if e.type_code not in CONTROL_EVENTS] == []

