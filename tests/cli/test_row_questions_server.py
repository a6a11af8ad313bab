"""rows --with-statement, --format history and --thread-id against the real MariaDB: the statement text is
what the client sent (binlog_annotate_row_events=ON), the thread id is the session's CONNECTION_ID(), a
binlog of row transactions is refused by --thread-id, one of statements is answered."""
from __future__ import annotations

import io
import json
import sys

import pytest

from binlog_spec import cli

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")

STATEMENTS = [
    "INSERT INTO d.t VALUES (1, 'Ada', NULL), (2, 'Björn', 'x')",
    "UPDATE d.t SET note = 'vip' WHERE id = 1",
    "UPDATE d.t SET name = '李雷', note = NULL WHERE id = 2",
    "DELETE FROM d.t WHERE id = 1",
]


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([str(a) for a in argv], out, err)
    return code, out.getvalue(), err.getvalue()


def test_statements_thread_ids_and_history_from_the_server():
    with mariadb_server.MariaDBServer(extra_args=["--binlog-annotate-row-events=ON"]) as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, name VARCHAR(20), note VARCHAR(20)) CHARSET utf8mb4")
        srv.sql("BEGIN;\n" + ";\n".join(STATEMENTS[:2]) + ";\nCOMMIT;\n" + ";\n".join(STATEMENTS[2:]) + ";")
        srv.sql("FLUSH BINARY LOGS")
        rows_log = srv.binlogs()[-2]
        # a binlog of statements only: DDL and statement-based DML carry their session's thread id
        out = srv.sql("SELECT CONNECTION_ID(); SET SESSION binlog_format=STATEMENT; "
                      "INSERT INTO d.t VALUES (7, 'st', NULL); CREATE TABLE d.u (a INT)")
        connection = int(out.split()[-1])
        srv.sql("SET SESSION binlog_format=STATEMENT; INSERT INTO d.t VALUES (8, 'other', NULL)")
        srv.sql("FLUSH BINARY LOGS")
        statements_log = srv.binlogs()[-2]

        code, out, err = run("rows", "--format", "jsonl", "--with-statement", rows_log)
        assert code == 0, err
        lines = [json.loads(line) for line in out.splitlines()]
        assert [(r["op"], r["statement"]) for r in lines] == [
            ("insert", STATEMENTS[0]), ("insert", STATEMENTS[0]), ("update", STATEMENTS[1]),
            ("update", STATEMENTS[2]), ("delete", STATEMENTS[3])]
        assert {r["thread_id"] for r in lines} == {None}      # (MariaDB row transactions carry none)

        code, out, err = run("rows", "--format", "history", "--table", "d.t", rows_log)
        assert code == 0, err
        assert [line.split(" ", 3)[3] for line in out.splitlines()[1:]] == [
            "INSERT `d`.`t` `id`=1", "INSERT `d`.`t` `id`=2",
            'UPDATE `d`.`t` `id`=1: `note`: null → "vip"',
            'UPDATE `d`.`t` `id`=2: `name`: "Björn" → "李雷", `note`: "x" → null',
            "DELETE `d`.`t` `id`=1"]

        code, out, err = run("sql", "--sql2", "--thread-id", connection, rows_log)
        assert code == 2 and out == "" and f"{rows_log}: offset " in err and "MariaDB" in err

        code, out, err = run("sql", "--sql2", "--thread-id", connection, statements_log)
        assert code == 0, err
        assert "INSERT INTO d.t VALUES (7, 'st', NULL)" in out and "CREATE TABLE d.u" in out
        assert "'other'" not in out
        code, out, err = run("sql", "--sql2", "--thread-id", connection + 1000, statements_log)
        assert code == 0 and "INSERT" not in out and "CREATE TABLE" not in out
