"""MariaDB's INVISIBLE columns (known from the binlog's CREATE TABLE or --schema): --sql2 names the
columns of its INSERTs, as `INSERT ... VALUES` without a list gives them no value and the server refuses
the row (error 1136). Found by tests/proof; replayed on the real server."""
from __future__ import annotations

import io
import subprocess
import sys

import pytest

from binlog_spec import cli

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")

DDL = ("CREATE DATABASE d; USE d; CREATE TABLE t (id INT PRIMARY KEY, a INT INVISIBLE DEFAULT 5, b VARCHAR(10), "
       "c TIMESTAMP(3) NULL DEFAULT NULL INVISIBLE)")
WORKLOAD = ("SET time_zone = '+00:00'; INSERT INTO d.t (id, a, b, c) VALUES (1, 10, 'x', '2020-01-01 00:00:00.5'), "
            "(2, NULL, 'y', NULL); INSERT INTO d.t (id, b) VALUES (3, 'z'); UPDATE d.t SET a = 30 WHERE id = 1; "
            "DELETE FROM d.t WHERE id = 2")


def _sql(*args: str) -> bytes:
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["sql", "--sql2", *args], out, err) == 0, err.getvalue()
    return out.getvalue().encode()


@pytest.mark.parametrize("names_from", ["ddl", "schema"])
@pytest.mark.parametrize("rollback", [False, True], ids=["forward", "rollback"])
def test_sql2_of_a_table_with_invisible_columns_replays_to_the_same_table(tmp_path, names_from, rollback):
    with mariadb_server.MariaDBServer(extra_args=["--binlog-row-metadata=MINIMAL"]) as srv:
        srv.sql("FLUSH BINARY LOGS;")
        ddl_log = srv.binlogs()[-1]
        srv.sql(DDL)
        start = srv.sql("CHECKSUM TABLE d.t EXTENDED")
        srv.sql("FLUSH BINARY LOGS;")
        rows_log = srv.binlogs()[-1]
        srv.sql(WORKLOAD)
        srv.sql("FLUSH BINARY LOGS;")
        end = srv.sql("CHECKSUM TABLE d.t EXTENDED")
        if names_from == "ddl":
            files = [str(ddl_log), str(rows_log)]
        else:
            dump = subprocess.run(["mariadb-dump", "--no-defaults", f"--socket={srv.socket}", "-uroot",
                                   "--no-data", "--databases", "d"], capture_output=True, check=True).stdout
            (tmp_path / "schema.sql").write_bytes(dump)
            files = ["--schema", str(tmp_path / "schema.sql"), str(rows_log)]
        if rollback:
            srv.sql("", input_bytes=_sql("--rollback", *files))
            assert srv.sql("CHECKSUM TABLE d.t EXTENDED") == start
        else:
            # with the DDL in the files, the script holds the CREATE statements: it rebuilds from nothing
            srv.sql("DROP DATABASE d" if names_from == "ddl" else "DELETE FROM d.t")
            srv.sql("", input_bytes=_sql(*files))
            assert srv.sql("CHECKSUM TABLE d.t EXTENDED") == end
