"""Proof on a real MariaDB: before it writes an undo, `sql --rollback` (--sql2, --sql) says on stderr what the
undo restores: per table, how many rows each kind of statement restores (a DELETE removes a row the window
inserted, an UPDATE sets back a row it updated, an INSERT puts back a row it deleted), and how many
transactions it undoes, the first and the last (issue 31).

The expected counts are those of the statements run on the server (each changes a known number of rows,
checked by ROW_COUNT()), the first and last GTIDs the server's @@gtid_binlog_pos after the window's first and
last transactions. stdout holds the undo only (no summary line), and replays: after it the tables are as
before the window (CHECKSUM TABLE against a copy made then).
"""
from __future__ import annotations

import io
import os
import sys
import time

import pytest

from binlog_spec import cli
from binlog_spec.cli import jobs

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
from mariadb_server import MariaDBServer, available  # noqa: E402

pytestmark = pytest.mark.skipif(not available(), reason="needs Debian's mariadbd (make apt)")

PREFIX = "binlog-spec: note: undo summary: "

#: The window: each transaction's statements and the rows each changes.
WINDOW = [
    [("INSERT INTO customers VALUES (10, 'ten', ''), (11, 'eleven', '')", 2)],
    [("UPDATE customers SET note = 'window' WHERE id IN (1, 2)", 2), ("DELETE FROM orders WHERE id = 1", 1)],
    [("INSERT INTO orders VALUES (20, 3, 7.50)", 1), ("UPDATE orders SET total = total + 1 WHERE id = 2", 1)],
    [("DELETE FROM customers WHERE id = 3", 1)],
]
#: The summary's line of each table: its DELETEs, UPDATEs and INSERTs, from WINDOW's statements.
EXPECTED = {
    "`shop`.`customers`": "2 DELETE (removes rows the window inserted), 2 UPDATE (sets back rows the window "
                          "updated), 1 INSERT (puts back rows the window deleted)",
    "`shop`.`orders`": "1 DELETE (removes rows the window inserted), 1 UPDATE (sets back rows the window updated), "
                       "1 INSERT (puts back rows the window deleted)",
}


def run(*argv) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["sql", *map(str, argv)], out, err)
    return out.getvalue(), err.getvalue(), code


def copy(db: str, to: str) -> str:
    """SQL: a copy of the tables of `db` in a new database `to`."""
    return f"CREATE DATABASE {to};" + "".join(f"CREATE TABLE {to}.{t} LIKE {db}.{t}; INSERT INTO {to}.{t} SELECT * "
                                                f"FROM {db}.{t};" for t in ("customers", "orders"))


def checksum(srv: MariaDBServer, db: str, table: str) -> str:
    return srv.sql(f"CHECKSUM TABLE `{db}`.`{table}` EXTENDED;").split("\t")[1].strip()


class Scene:
    """The server's logs: setup, FLUSH, the window (a file of its own), FLUSH, a later transaction that changes
    a row the window updated (customers 1), FLUSH; the window's GTIDs, a copy of the tables as before the window
    (`shop_before`)."""

    def __init__(self, srv: MariaDBServer, folder):
        self.srv = srv
        srv.sql("SET GLOBAL gtid_domain_id = 0;")
        srv.sql("CREATE DATABASE shop; USE shop;"
                "CREATE TABLE customers (id INT PRIMARY KEY, name VARCHAR(20), note VARCHAR(20)) ENGINE=InnoDB;"
                "CREATE TABLE orders (id INT PRIMARY KEY, customer_id INT, total DECIMAL(8,2)) ENGINE=InnoDB;"
                "INSERT INTO customers VALUES (1, 'one', ''), (2, 'two', ''), (3, 'three', ''), (4, 'four', '');"
                "INSERT INTO orders VALUES (1, 1, 10.00), (2, 2, 20.00);"
                "SET SESSION sql_log_bin=0;" + copy("shop", "shop_before") + "FLUSH BINARY LOGS;")
        self.gtids = []
        for tx in WINDOW:
            script = "USE shop; BEGIN;\n"
            for statement, _ in tx:
                script += f"{statement}; SELECT ROW_COUNT();\n"
            counts = srv.sql(script + "COMMIT; SELECT @@gtid_binlog_pos;").split()
            assert [int(n) for n in counts[:-1]] == [n for _, n in tx]      # (the rows each statement changed)
            self.gtids.append(counts[-1])
        srv.sql("FLUSH BINARY LOGS; USE shop; UPDATE customers SET note = 'later' WHERE id = 1; FLUSH BINARY LOGS;")
        logs = srv.binlogs()
        self.window = folder / "mariadb-bin.000002"
        self.window.write_bytes(logs[-3].read_bytes())
        self.logs = [folder / "mariadb-bin.000001", self.window, folder / "mariadb-bin.000003"]
        self.logs[0].write_bytes(logs[-4].read_bytes())
        self.logs[2].write_bytes(logs[-2].read_bytes())
        first, last = (gtid.rsplit("-", 1) for gtid in (self.gtids[0], self.gtids[-1]))
        self.selected = f"{first[0]}-{first[1]}-{last[1]}"     # (--include-gtids: the window's)


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    with MariaDBServer() as srv:
        yield Scene(srv, tmp_path_factory.mktemp("summary"))


@pytest.fixture(autouse=True)
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def summary(err: str) -> list[str]:
    return [line[len(PREFIX):] for line in err.splitlines() if line.startswith(PREFIX)]


def assert_summary(err: str, scene: Scene, transactions: int = 4, tables: dict | None = None) -> None:
    lines = summary(err)
    assert lines, err
    head = lines[0]
    assert head.startswith(f"{transactions} transactions undone, first transaction {scene.gtids[0]} at "), head
    assert f", last transaction {scene.gtids[-1]} at " in head, head
    assert head.endswith("; times in UTC"), head
    body = dict(line.split(": ", 1) for line in lines[1:])
    assert body == (EXPECTED if tables is None else tables), lines


@pytest.mark.parametrize("mode", [["--sql2"], ["--sql"], [], ["--output-format", "binlog"]],
                         ids=["sql2", "sql", "base64", "binlog"])
def test_the_summary_counts_the_rows_each_kind_of_statement_restores(scene, mode, tmp_path):
    output = ["-o", tmp_path / "undo.bin"] if "binlog" in mode else []
    out, err, code = run(*mode, *output, "--rollback", scene.window)
    assert code == 0, err
    assert_summary(err, scene)
    assert "undo summary" not in out


def test_the_summary_of_a_window_chosen_by_gtids_is_the_windows(scene):
    """The window in the middle of the logs (the conflict check reads them all): --force writes every undo."""
    out, err, code = run("--sql2", "--rollback", "--force", "--include-gtids", scene.selected, *scene.logs)
    assert code == 1, err       # (the conflict, written anyway)
    assert_summary(err, scene)


def test_skip_conflicts_counts_only_the_rows_written(scene):
    """The later UPDATE of customers 1 is a conflict: its undo is left out, one UPDATE less. Without --force nor
    --skip-conflicts nothing is written, nor summarised."""
    out, err, code = run("--sql2", "--rollback", "--include-gtids", scene.selected, *scene.logs)
    assert code == 5, err
    assert out == "" and summary(err) == []
    out, err, code = run("--sql2", "--rollback", "--skip-conflicts", "--include-gtids", scene.selected, *scene.logs)
    assert code == 1, err
    tables = dict(EXPECTED)
    tables["`shop`.`customers`"] = tables["`shop`.`customers`"].replace("2 UPDATE", "1 UPDATE")
    assert_summary(err, scene, tables=tables)
    assert out.count("UPDATE `shop`.`customers`") == 1


def test_the_pieces_of_a_run_give_one_summary(scene, monkeypatch):
    monkeypatch.setenv(jobs.PIECE_ENV, str(max(1, os.path.getsize(scene.window) // 3)))
    plan, planned = jobs.plan, []
    monkeypatch.setattr(jobs, "plan", lambda args, err: planned.append(plan(args, err)) or planned[-1])
    out, err, code = run("--sql2", "--rollback", "--jobs", "3", scene.window)
    assert code == 0, err
    assert len(planned[0]) > 1      # (cut into pieces)
    assert_summary(err, scene)
    assert len(summary(err)) == 3


def test_a_transaction_the_compiled_lane_hands_on_in_parts_is_counted_once(scene, tmp_path):
    """A transaction whose undo is longer than the compiled lane's buffer (it goes to the spool in parts), and
    one with a SAVEPOINT and a ROLLBACK TO it: the rows the server kept."""
    srv, rows = scene.srv, 40_000
    srv.sql("CREATE DATABASE big; CREATE TABLE big.t (id INT PRIMARY KEY, pad VARCHAR(40)) ENGINE=InnoDB;"
            "FLUSH BINARY LOGS;")
    got = srv.sql(f"INSERT INTO big.t SELECT seq, REPEAT('x', 40) FROM big.seq_1_to_{rows}; "
                  "SELECT ROW_COUNT();"
                  "SELECT @@gtid_binlog_pos;").split()
    assert int(got[0]) == rows
    got += srv.sql("BEGIN; INSERT INTO big.t VALUES (-1, 'a'); SAVEPOINT s; INSERT INTO big.t VALUES (-2, 'b');"
                   "ROLLBACK TO s; INSERT INTO big.t VALUES (-3, 'c'); COMMIT; SELECT @@gtid_binlog_pos;"
                   "FLUSH BINARY LOGS;").split()
    log = tmp_path / "mariadb-bin.000001"
    log.write_bytes(srv.binlogs()[-2].read_bytes())
    for mode in ("--sql2", "--sql"):
        out, err, code = run(mode, "--rollback", log)
        assert code == 0, err
        lines = summary(err)
        assert lines[0].startswith(f"2 transactions undone, first transaction {got[1]} at "), lines
        assert f", last transaction {got[2]} at " in lines[0], lines
        assert lines[1:] == [f"`big`.`t`: {rows + 2} DELETE (removes rows the window inserted)"], (mode, lines)


def test_the_undo_after_its_summary_still_replays(scene):
    out, err, code = run("--sql2", "--rollback", scene.window)
    assert code == 0 and summary(err), err
    srv = scene.srv
    srv.sql("SET SESSION sql_log_bin=0;" + copy("shop", "shop_end"))
    try:
        srv.sql("", input_bytes=b"SET SESSION sql_log_bin=0;\n" + out.encode("utf-8"))
        for table in ("customers", "orders"):
            assert checksum(srv, "shop", table) == checksum(srv, "shop_before", table), table
    finally:
        srv.sql("SET SESSION sql_log_bin=0; DELETE FROM shop.customers; DELETE FROM shop.orders;"
                "INSERT INTO shop.customers SELECT * FROM shop_end.customers;"
                "INSERT INTO shop.orders SELECT * FROM shop_end.orders; DROP DATABASE shop_end;")
