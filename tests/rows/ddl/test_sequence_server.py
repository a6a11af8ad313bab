"""CREATE SEQUENCE gives the sequence's table its columns, as the real MariaDB defines them: NEXTVAL and
SETVAL write rows events on that table, which `rows` and `--sql2` then name under
binlog_row_metadata=MINIMAL (no names in the TABLE_MAP). Expected names and values: the server's
(SHOW COLUMNS, SELECT of the sequence)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")

WORKLOAD = ("CREATE DATABASE d; USE d; CREATE SEQUENCE s; "
            "CREATE SEQUENCE `d`.`s 2` START WITH 10 INCREMENT BY 5 MAXVALUE 100 CYCLE CACHE 3; "
            "SELECT NEXTVAL(s); SELECT NEXTVAL(`s 2`); SELECT SETVAL(s, 5000); ALTER SEQUENCE s RESTART WITH 7000; "
            "SELECT NEXTVAL(s); "
            "CREATE OR REPLACE SEQUENCE s3 NOCACHE; SELECT NEXTVAL(s3); SELECT NEXTVAL(s3)")
SEQUENCES = ["s", "s 2", "s3"]


def _cli(*args: str) -> str:
    out = subprocess.run([sys.executable, "-m", "binlog_spec", *args], capture_output=True, text=True, check=True)
    return out.stdout


def _state(srv, name: str) -> tuple[list[str], list[str]]:
    columns = [line.split("\t")[0] for line in srv.sql(f"SHOW COLUMNS FROM d.`{name}`").splitlines()]
    return columns, srv.sql(f"SELECT * FROM d.`{name}`").split("\t")


def test_rows_events_on_a_sequence_name_its_columns_as_the_server_defines_them():
    with mariadb_server.MariaDBServer(extra_args=["--binlog-row-metadata=MINIMAL"]) as srv:
        srv.sql(WORKLOAD)
        expected = {name: _state(srv, name) for name in SEQUENCES}
        log = str(srv.binlogs()[-1])
        last = {}
        for line in _cli("rows", "--format", "jsonl", log).splitlines():
            row = json.loads(line)
            last[row["table"]] = row["after"]
        for name, (columns, values) in expected.items():
            assert list(last[name]) == columns
            assert [str(v) for v in last[name].values()] == [v.strip() for v in values]
        sql = _cli("sql", "--sql2", "--complete-insert", log)
        assert "INSERT INTO `d`.`s` (`next_not_cached_value`, `minimum_value`, `maximum_value`, `start_value`, " \
               "`increment`, `cache_size`, `cycle_option`, `cycle_count`) VALUES" in sql
        srv.sql("DROP DATABASE d")     # the script holds the DDL too: it rebuilds the sequences from nothing
        srv.sql(sql)
        assert {name: _state(srv, name) for name in SEQUENCES} == expected
