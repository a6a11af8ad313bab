"""Signs of integers after a YEAR column, written by the real MariaDB (its SIGNEDNESS bitmap counts YEAR)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")

DDL = ("CREATE DATABASE d; USE d; CREATE TABLE t (id INT PRIMARY KEY, y YEAR, s SMALLINT, n INT UNSIGNED, "
       "y2 YEAR, m MEDIUMINT, b BIGINT UNSIGNED)")
ROW = "INSERT INTO d.t VALUES (1, 2000, -5, 4294967295, 1901, -7, 18446744073709551615)"
EXPECTED = {"id": 1, "y": 2000, "s": -5, "n": 4294967295, "y2": 1901, "m": -7, "b": 18446744073709551615}


def _cli(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "binlog_spec", *args], capture_output=True, text=True, check=True)
    return out.stdout


def test_integers_after_year_keep_their_signs_in_rows_and_sql2():
    with mariadb_server.MariaDBServer() as srv:
        srv.sql(DDL)
        srv.sql(ROW)
        log = str(srv.binlogs()[-1])
        rows = [json.loads(line) for line in _cli("rows", "--format", "jsonl", log).splitlines()]
        assert [r["after"] for r in rows if r.get("op") == "insert"] == [EXPECTED]
        sql = _cli("sql", "--sql2", log)
        srv.sql("DROP DATABASE d")     # the script holds the DDL too: it rebuilds the table from nothing
        srv.sql(sql)
        got = srv.sql("SELECT id, y, s, n, y2, m, b FROM d.t").split()
        assert got[-7:] == [str(v) for v in EXPECTED.values()]
