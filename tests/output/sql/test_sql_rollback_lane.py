"""The compiled lane of `sql --sql2 --rollback` (output/sql/lane.py's rollback_lane, output/_crow_undo.pxi)
against the real server and against its reference (script.rollback over the builders): a seeded random
workload of multi-statement transactions over every column kind the lane writes (multi-row events, UPDATEs
of the row key, a row changed twice in one transaction, a table the lane leaves in the middle of a
transaction, a transaction of several MB) is undone by our script on the server that ran it, which must
end with the CHECKSUM TABLE it had before; the script is byte for byte the reference's, and the lane wrote
most of it."""
from __future__ import annotations

import io
import random
import sys

import pytest

from binlog_spec.cli import main
from binlog_spec.output import row_text
from binlog_spec.output.rollback import spool as spool_module

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
sys.path.insert(0, str(ROOT / "tests" / "output" / "sql"))
import mariadb_server  # noqa: E402
from test_sql_lane import COLUMNS, SCHEMA, _checksums, _value, _workload  # noqa: E402

pytestmark = [pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server"),
              pytest.mark.skipif(row_text._crow_text is None, reason="the compiled core is not built (make build)")]


def _changes(rng: random.Random) -> list[str]:
    """Transactions of random INSERTs, UPDATEs and DELETEs over the rows _workload left."""
    statements = ["SET time_zone='+00:00'; SET sql_mode='';"]
    fresh = 1000
    for _ in range(120):
        statements.append("BEGIN;")
        for _ in range(rng.randint(1, 8)):
            pick = rng.random()
            row = rng.randint(1, 300)
            if pick < 0.3:
                column = rng.choice(COLUMNS)
                statements.append(f"UPDATE w.t SET {column} = {_value(rng, column)} WHERE id = {row};")
            elif pick < 0.45:       # several rows in one event, each changed again later in the transaction
                column = rng.choice(COLUMNS)
                statements.append(f"UPDATE w.t SET {column} = {_value(rng, column)} WHERE id BETWEEN {row} AND {row + 6};")
            elif pick < 0.55:       # the row key changes
                fresh += 1
                statements.append(f"UPDATE w.t SET id = {fresh} WHERE id = {row};")
            elif pick < 0.65:
                statements.append(f"DELETE FROM w.t WHERE id BETWEEN {row} AND {row + 2};")
            elif pick < 0.8:
                fresh += 1
                statements.append(f"INSERT INTO w.t VALUES ({fresh}, {', '.join(_value(rng, c) for c in COLUMNS)});")
            elif pick < 0.9:
                statements.append(f"UPDATE w.k2 SET v = v + 1 WHERE a BETWEEN {row} AND {row + 40};")
            elif pick < 0.95:       # a table without a key: the reference writes it, the lane the rest
                statements.append(f"UPDATE w.nokey SET b = 'r{row}' LIMIT 1;")
            else:
                statements.append(f"DELETE FROM w.k2 WHERE a = {row * 7 + 1};")
        statements.append("COMMIT;")
    statements.append("UPDATE w.k2 SET v = v + 3, b = CONCAT(b, 'x');")        # a transaction of several MB
    statements.append("DELETE FROM w.k2 WHERE a % 11 = 0;")
    return statements


def _script(log: str, lane: bool) -> tuple[str, str, int, int]:
    """(stdout, stderr, exit code, lines the lane spooled) of `sql --sql2 --rollback LOG`, with the lane or
    without it (the reference spools its statements one a record, by add_text)."""
    saved, counts = row_text._crow_text, [0, 0]
    add, add_text = spool_module.Spool.add, spool_module.Spool.add_text

    def counted(self, data: bytes, kind: int = spool_module.ROWS_END) -> None:
        counts[0] += data.count(b"\n") + 1
        add(self, data, kind)

    def counted_text(self, text: str, kind: int = spool_module.ROWS_END) -> None:
        counts[1] += 1
        add_text(self, text, kind)
    spool_module.Spool.add, spool_module.Spool.add_text = counted, counted_text
    if not lane:
        row_text._crow_text = None
    try:
        out, err = io.StringIO(), io.StringIO()
        code = main(["sql", "--sql2", "--rollback", "--jobs", "1", log], out, err)
    finally:
        row_text._crow_text = saved
        spool_module.Spool.add, spool_module.Spool.add_text = add, add_text
    return out.getvalue(), err.getvalue(), code, counts[0] - counts[1]


def test_random_workload_undo_is_the_reference_and_brings_the_server_back():
    rng = random.Random(2931)
    with mariadb_server.MariaDBServer() as srv:
        srv.sql(SCHEMA)
        srv.sql("\n".join(_workload(rng)))
        srv.sql("FLUSH BINARY LOGS;")
        before = _checksums(srv)
        srv.sql("\n".join(_changes(rng)))
        srv.sql("FLUSH BINARY LOGS;")
        assert _checksums(srv) != before
        log = str(srv.binlogs()[-2])
        out, err, code, by_lane = _script(log, lane=True)
        assert (out, err, code) == _script(log, lane=False)[:3]
        assert code == 0, err
        lines = out.count("\n")
        assert lines > 20000 and by_lane > 0.9 * lines, (lines, by_lane)
        assert "UPDATE `w`.`nokey` SET" in out and "INSERT INTO `w`.`t` VALUES" in out
        srv.sql(out)
        assert _checksums(srv) == before


def test_what_the_lane_leaves_in_a_transaction_is_undone_as_the_reference_undoes_it():
    """Savepoints (a ROLLBACK TO logged for a non-transactional table), a transaction that ends with ROLLBACK,
    XA transactions rolled back and committed, a DDL between transactions: the lane takes the rows around
    them, the reference the rest, into one spool; the script is the reference's, byte for byte."""
    rng = random.Random(77)
    row = lambda: rng.randint(1, 300)      # noqa: E731
    with mariadb_server.MariaDBServer() as srv:
        srv.sql(SCHEMA + "CREATE TABLE w.m (id INT PRIMARY KEY, v INT) ENGINE=MyISAM;")
        srv.sql("\n".join(_workload(rng)))
        srv.sql("FLUSH BINARY LOGS;")
        statements = ["SET time_zone='+00:00'; SET sql_mode='';"]
        for k in range(1, 21):
            statements += [
                "BEGIN;", f"UPDATE w.t SET ti = {k} WHERE id = {row()};", "SAVEPOINT s1;",
                f"UPDATE w.t SET su = {k} WHERE id = {row()};", f"INSERT INTO w.m VALUES ({k}, 1);",
                "ROLLBACK TO s1;" if k % 2 else "RELEASE SAVEPOINT s1;", f"UPDATE w.k2 SET v = {k} WHERE a = {row()};",
                "COMMIT;",
                "BEGIN;", f"UPDATE w.t SET mi = {k} WHERE id = {row()};", f"INSERT INTO w.m VALUES ({100 + k}, 2);",
                "ROLLBACK;",
                f"XA START 'x{k}';", f"UPDATE w.t SET bi = {k} WHERE id = {row()};", f"XA END 'x{k}';",
                f"XA PREPARE 'x{k}';", f"XA ROLLBACK 'x{k}';" if k % 3 else f"XA COMMIT 'x{k}';",
                f"UPDATE w.k2 SET v = v - {k} WHERE a BETWEEN {row()} AND {row() + 30};",
            ]
            if k == 10:
                statements.append("ALTER TABLE w.k2 ADD COLUMN z INT NULL;")
        srv.sql("\n".join(statements))
        srv.sql("FLUSH BINARY LOGS;")
        log = str(srv.binlogs()[-2])
        out, err, code, by_lane = _script(log, lane=True)
        assert (out, err, code) == _script(log, lane=False)[:3]
    assert code == 0 and "not undone" in err, err
    assert by_lane > 0.5 * out.count("\n"), (out.count("\n"), by_lane)


def test_undo_of_a_transaction_of_many_mb_keeps_memory_bounded(tmp_path):
    """The lane hands its undo to the spool's file a chunk at a time (a transaction is never held whole): the
    rollback of one 40 MB transaction peaks at little more than the process's own size."""
    import os
    import subprocess
    with mariadb_server.MariaDBServer(extra_args=["--max-allowed-packet=256M"]) as srv:
        srv.sql("CREATE DATABASE b; CREATE TABLE b.t (id INT PRIMARY KEY, c CHAR(200), n INT) ENGINE=InnoDB;")
        srv.sql("INSERT INTO b.t SELECT seq, REPEAT('x', 190), seq FROM b.seq_1_to_80000;")
        srv.sql("FLUSH BINARY LOGS;")
        srv.sql("BEGIN; UPDATE b.t SET c = REPEAT('y', 195), n = n + 1; COMMIT;")
        srv.sql("FLUSH BINARY LOGS;")
        log = srv.binlogs()[-2]
        assert log.stat().st_size > 30 << 20
        binary = ROOT / ".venv" / "bin" / "binlog-spec"
        cli = [str(binary)] if binary.exists() else [sys.executable, "-m", "binlog_spec"]
        # (started by a small process of its own: a child forked from this big one would count its pages)
        measure = ("import os, subprocess, sys; run = subprocess.Popen(sys.argv[1:], stdout=open(os.environ['OUT'], "
                   "'wb'), stderr=subprocess.DEVNULL); _, status, usage = os.wait4(run.pid, 0); "
                   "print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)")
        got = subprocess.run([sys.executable, "-c", measure, *cli, "sql", "--sql2", "--rollback", "--jobs", "1",
                              str(log)], env={**os.environ, "OUT": str(tmp_path / "undo.sql")}, capture_output=True,
                             text=True, check=True).stdout.split()
    assert got[0] == "0"
    assert (tmp_path / "undo.sql").stat().st_size > 15 << 20
    peak_mb = int(got[1]) / 1024
    assert peak_mb < 70, peak_mb
