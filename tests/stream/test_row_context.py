"""stream.row_context: the statement of each row change holds to the end of its statement (STMT_END_F) and no
further; checked on the real MariaDB, whose annotations a session can switch off between two statements."""
from __future__ import annotations

import sys

import pytest

import binlog_spec
from binlog_spec.rows.decoder import read_rows
from binlog_spec.stream.row_context import RowContext

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")


def test_a_statement_without_annotation_gets_none_not_the_one_before():
    with mariadb_server.MariaDBServer(extra_args=["--binlog-annotate-row-events=ON"]) as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v INT)")
        srv.sql("BEGIN; INSERT INTO d.t VALUES (1, 1), (2, 2); SET SESSION binlog_annotate_row_events=OFF; "
                "UPDATE d.t SET v = 5; SET SESSION binlog_annotate_row_events=ON; DELETE FROM d.t WHERE id = 2; "
                "COMMIT")
        srv.sql("FLUSH BINARY LOGS")
        context = RowContext()
        got = [(rc.op, context.statement, context.thread_id)
               for rc in read_rows(context.watch(binlog_spec.open(srv.binlogs()[-2])))]
    first, last = "INSERT INTO d.t VALUES (1, 1), (2, 2)", "DELETE FROM d.t WHERE id = 2"
    assert got == [("insert", first, None), ("insert", first, None), ("update", None, None),
                   ("update", None, None), ("delete", last, None)]
