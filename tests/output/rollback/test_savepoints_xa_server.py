"""Proof on a real MariaDB: transactions with SAVEPOINT / ROLLBACK TO / RELEASE SAVEPOINT, and XA.

With ROW logging MariaDB writes `SAVEPOINT sp` into every transaction that sets one after a change, and
`ROLLBACK TO sp` only when a non-transactional (MyISAM) table changed since the savepoint: the MyISAM rows
go out as a group of their own first, the InnoDB rows logged since the savepoint stay in the transaction
and the ROLLBACK TO after them undoes them on a replica. Without a MyISAM change the server cuts them from
its cache instead (nothing of them is written). A savepoint set before the transaction's first change is
not written, and a ROLLBACK TO it after a MyISAM change splits the transaction: its rows up to there go
out as a group that ends with ROLLBACK, the rest as a group of its own. An XA transaction is two groups: XA START (the GTID event's
flags) ... XA END, XA_PREPARE_LOG_EVENT; then XA COMMIT or XA ROLLBACK.

Checked against the server, never against our own output: `analyze` counts as many transactions as the
server gave GTIDs; the --rollback script run on the end state gives back the start state (the rows a
ROLLBACK TO or XA ROLLBACK undid are not undone twice) and says nothing of the savepoint and XA
statements; the --sql2 script (and the one --database db1 keeps, whose SAVEPOINT / ROLLBACK TO / XA
statements run under another default database), and the base64 script (an XA prepare opened by XA START,
as mariadb-binlog writes it), run on the start state give the end state.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from binlog_spec import cli

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
from mariadb_server import MariaDBServer, ServerError  # noqa: E402

SCHEMA = """
CREATE DATABASE db1; CREATE DATABASE db2; USE db1;
CREATE TABLE ti (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE tm (id INT PRIMARY KEY, v INT) ENGINE=MyISAM;
INSERT INTO ti VALUES (1,1),(2,2),(3,3);
INSERT INTO tm VALUES (100,100);
"""

WORKLOAD = """
USE db1;
BEGIN; INSERT INTO ti VALUES (4,4); SAVEPOINT s1; INSERT INTO ti VALUES (5,5); ROLLBACK TO SAVEPOINT s1;
  INSERT INTO ti VALUES (6,6); COMMIT;
BEGIN; INSERT INTO ti VALUES (7,7); SAVEPOINT s2; DELETE FROM ti WHERE id=1; INSERT INTO tm VALUES (1,1);
  ROLLBACK TO s2; UPDATE ti SET v=20 WHERE id=2; COMMIT;
BEGIN; INSERT INTO ti VALUES (8,8); SAVEPOINT s3; UPDATE ti SET v=30 WHERE id=3; RELEASE SAVEPOINT s3; COMMIT;
USE db2;
BEGIN; INSERT INTO db1.ti VALUES (9,9); SAVEPOINT `Mixed Cases`; DELETE FROM db1.ti WHERE id=2;
  SAVEPOINT inner_sp; UPDATE db1.ti SET v=99 WHERE id=6; INSERT INTO db1.tm VALUES (2,2);
  rollback work to savepoint `mixed cases`; UPDATE db1.ti SET v=70 WHERE id=7; COMMIT;
BEGIN; SAVEPOINT a; INSERT INTO db1.ti VALUES (10,10); DELETE FROM db1.ti WHERE id=8; INSERT INTO db1.tm VALUES (3,3);
  ROLLBACK TO a; DELETE FROM db1.ti WHERE id=8; COMMIT;
XA START 'x1'; INSERT INTO db1.ti VALUES (11,11); XA END 'x1'; XA PREPARE 'x1'; XA COMMIT 'x1';
XA START 'x2'; DELETE FROM db1.ti WHERE id=3; INSERT INTO db1.ti VALUES (12,12); XA END 'x2'; XA PREPARE 'x2';
  XA ROLLBACK 'x2';
XA START 'x3'; INSERT INTO db1.ti VALUES (13,13); XA END 'x3'; XA COMMIT 'x3' ONE PHASE;
"""

STATE = "SELECT * FROM db1.ti ORDER BY id; SELECT '--'; SELECT * FROM db1.tm ORDER BY id;"


def run(*argv) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main([*map(str, argv)], out, err)
    return out.getvalue(), err.getvalue(), code


def seq_no(srv: MariaDBServer) -> int:
    return int(srv.sql("SELECT @@gtid_binlog_pos;").strip().split("-")[-1])


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    srv = MariaDBServer().start()
    try:
        srv.sql(SCHEMA)
        srv.sql("FLUSH BINARY LOGS;")
        start_state, first = srv.sql(STATE), seq_no(srv)
        srv.sql(WORKLOAD)
        end_state, last = srv.sql(STATE), seq_no(srv)
        srv.sql("FLUSH BINARY LOGS;")
        log = tmp_path_factory.mktemp("savepoints") / "mariadb-bin.000002"
        log.write_bytes(srv.binlogs()[1].read_bytes())
        yield srv, log, start_state, end_state, last - first
    finally:
        srv.cleanup()


def test_the_server_writes_savepoints_rollback_to_and_xa_groups(recorded):
    _, log, *_ = recorded
    data = log.read_bytes()
    for written in (b"SAVEPOINT `s1`", b"ROLLBACK TO `s2`", b"ROLLBACK TO `mixed cases`", b"XA END",
                    b"XA COMMIT", b"XA ROLLBACK"):
        assert written in data, written
    assert b"ROLLBACK TO `s1`" not in data      # no MyISAM change since s1: the server cut its rows instead


def test_analyze_counts_one_transaction_per_gtid_the_server_gave(recorded):
    _, log, _, _, gtids = recorded
    out, err, code = run("analyze", "--format", "json", log)
    assert code == 0, err
    assert json.loads(out)["transactions"]["count"] == gtids


def undo_script(log, mode: str) -> tuple[str, str]:
    """The undo as a script for the mariadb client: --sql2, the base64 script, or the binary rollback
    as mariadb-binlog prints it."""
    if mode != "binlog":
        out, err, code = run("sql", *(["--sql2"] if mode == "sql2" else []), "--rollback", log)
        assert code == 0, err
        return out, err
    target = log.parent / "undo.bin"
    _, err, code = run("sql", "--rollback", "--output-format", "binlog", "-o", target, log)
    assert code == 0, err
    printed = subprocess.run(["mariadb-binlog", "--no-defaults", str(target)], capture_output=True, check=True)
    return printed.stdout.decode(), err


@pytest.mark.parametrize("mode", ["sql2", "base64", "binlog"])
def test_rollback_gives_back_the_start_state_and_says_nothing_of_savepoints_or_xa(recorded, mode):
    srv, log, start_state, end_state, _ = recorded
    assert srv.sql(STATE) == end_state
    undo, err = undo_script(log, mode)
    assert "not undone" not in err and "SAVEPOINT" not in err and "XA " not in err, err
    try:
        srv.sql(undo)
        assert srv.sql(STATE) == start_state
    finally:
        if srv.sql(STATE) != end_state:     # back to the end state for the next mode
            srv.sql(run("sql", "--sql2", log)[0]) if srv.sql(STATE) == start_state else None
    assert srv.sql(STATE) == end_state


@pytest.mark.parametrize("filters", [["--sql2"], ["--sql2", "--database", "db1"], [], ["--database", "db1"]],
                         ids=["sql2", "sql2-database-db1", "base64", "base64-database-db1"])
def test_scripts_replayed_on_the_start_state_give_the_end_state(recorded, filters):
    srv, log, start_state, end_state, _ = recorded
    undo = run("sql", "--sql2", "--rollback", log)[0]
    if srv.sql(STATE) != start_state:
        srv.sql(undo)
    assert srv.sql(STATE) == start_state
    script, err, code = run("sql", *filters, log)
    assert code == 0, err
    try:
        srv.sql(script)
    except ServerError as exc:            # e.g. 1305: a ROLLBACK TO whose SAVEPOINT a filter dropped
        pytest.fail(f"the script does not replay: {exc}")
    assert srv.sql(STATE) == end_state
    srv.sql(undo)


@pytest.mark.parametrize("argv", [["analyze", "--format", "json"], ["sql"], ["sql", "--database", "db1"],
                                  ["sql", "--rollback"], ["sql", "--sql2", "--rollback"], ["rows"]],
                         ids=lambda a: "-".join(a))
def test_the_compiled_loops_write_what_the_python_path_writes(recorded, argv):
    """The compiled loops take no QUERY event and no XA GTID or XA_PREPARE_LOG_EVENT: they hand those
    transactions to the Python path, and the outputs are the same with BINLOG_SPEC_PURE=1."""
    import os
    _, log, *_ = recorded
    got = [subprocess.run([sys.executable, "-m", "binlog_spec", *argv, str(log)], capture_output=True,
                          env={**os.environ, "BINLOG_SPEC_PURE": pure, "TZ": "UTC"}) for pure in ("0", "1")]
    assert got[0].returncode == got[1].returncode == 0, got[0].stderr
    assert (got[0].stdout, got[0].stderr) == (got[1].stdout, got[1].stderr)


# ------------------------------------------------------------------ the rollback's check and savepoints
CHECK_SCHEMA = """
CREATE DATABASE c; USE c;
CREATE TABLE ti (id INT PRIMARY KEY, v INT) ENGINE=InnoDB;
CREATE TABLE tm (id INT PRIMARY KEY, v INT) ENGINE=MyISAM;
INSERT INTO ti VALUES (1,1),(2,2),(3,3);
"""
#: The window: its DELETE of row 1 is logged, then undone by ROLLBACK TO (a MyISAM change came between).
CHECK_WINDOW = """
USE c;
BEGIN; UPDATE ti SET v=10 WHERE id=3; SAVEPOINT s; DELETE FROM ti WHERE id=1; INSERT INTO tm VALUES (1,1);
  ROLLBACK TO s; COMMIT;
"""
#: Later: row 1 changed (the undo does not write it); row 3 changed, then undone by ROLLBACK TO.
CHECK_LATER = """
USE c;
BEGIN; UPDATE ti SET v=11 WHERE id=1; COMMIT;
BEGIN; UPDATE ti SET v=12 WHERE id=2; SAVEPOINT t; UPDATE ti SET v=13 WHERE id=3; INSERT INTO tm VALUES (2,2);
  ROLLBACK TO t; COMMIT;
"""


def test_the_rollback_check_finds_no_conflict_in_rows_a_rollback_to_undid(tmp_path):
    with MariaDBServer() as srv:
        srv.sql(CHECK_SCHEMA)
        start = int(srv.sql("SHOW MASTER STATUS;").split("\t")[1])
        srv.sql(CHECK_WINDOW)
        stop = int(srv.sql("SHOW MASTER STATUS;").split("\t")[1])
        srv.sql(CHECK_LATER)
        srv.sql("FLUSH BINARY LOGS;")
        log = tmp_path / "mariadb-bin.000001"
        log.write_bytes(srv.binlogs()[0].read_bytes())
        assert b"ROLLBACK TO `s`" in log.read_bytes() and b"ROLLBACK TO `t`" in log.read_bytes()
        argv = ["sql", "--sql2", "--rollback", "--start-position", start, "--stop-position", stop, log]
        undo, err, code = run(*argv)
        summary = "".join(line for line in err.splitlines(True)
                          if line.startswith("binlog-spec: note: undo summary: "))
        assert (code, err) == (0, summary), err       # (what the undo restores: nothing else on stderr)
        pure = subprocess.run([sys.executable, "-m", "binlog_spec", *map(str, argv)], capture_output=True,
                              env={**__import__("os").environ, "BINLOG_SPEC_PURE": "1"})
        assert (pure.returncode, pure.stdout.decode(), pure.stderr.decode()) == (0, undo, err)
        srv.sql(undo)
        # the window's UPDATE of row 3 undone; rows 1 and 2 as the later transactions left them
        assert srv.sql("SELECT * FROM c.ti ORDER BY id;") == "1\t11\n2\t12\n3\t3\n"
