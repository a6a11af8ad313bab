"""ENUM and SET members of a non-UTF-8 column, known only from DDL (binlog_row_metadata=MINIMAL): the
members are the server's, a character the column's charset lacks being `?` (found by tests/proof)."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from binlog_spec import cli

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")

DDL = ("CREATE DATABASE d CHARACTER SET latin1; USE d; "
       "CREATE TABLE t (id INT PRIMARY KEY, s SET('é1','中2','a'), e ENUM('é1','中2','b'), "
       "g ENUM('中','x','ü') CHARACTER SET gbk)")
ROWS = "INSERT INTO d.t VALUES (1, 'é1,中2', 'é1', 'ü'), (2, 'a', '中2', '中')"


def _rows(*args: str) -> list[dict]:
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["rows", "--format", "jsonl", *args], out, err) == 0, err.getvalue()
    return [json.loads(line)["after"] for line in out.getvalue().splitlines()]


@pytest.mark.parametrize("names_from", ["ddl", "schema"])
def test_enum_and_set_members_a_charset_lacks_are_question_marks_as_on_the_server(tmp_path, names_from):
    with mariadb_server.MariaDBServer(extra_args=["--binlog-row-metadata=MINIMAL"]) as srv:
        srv.sql("FLUSH BINARY LOGS;")
        ddl_log = srv.binlogs()[-1]
        srv.sql(DDL)
        srv.sql("FLUSH BINARY LOGS;")
        row_log = srv.binlogs()[-1]
        srv.sql(ROWS)
        srv.sql("FLUSH BINARY LOGS;")
        server = [dict(zip(("id", "s", "e", "g"), line.split("\t"))) for line in srv.sql(
            "SELECT id, CONVERT(s USING utf8mb4), CONVERT(e USING utf8mb4), CONVERT(g USING utf8mb4) "
            "FROM d.t ORDER BY id").splitlines()]
        if names_from == "ddl":
            ours = _rows(str(ddl_log), str(row_log))
        else:
            dump = subprocess.run(["mariadb-dump", "--no-defaults", f"--socket={srv.socket}", "-uroot",
                                   "--no-data", "--databases", "d"], capture_output=True, check=True).stdout
            (tmp_path / "schema.sql").write_bytes(dump)
            ours = _rows("--schema", str(tmp_path / "schema.sql"), str(row_log))
    assert server == [{"id": "1", "s": "é1,?2", "e": "é1", "g": "ü"}, {"id": "2", "s": "a", "e": "?2", "g": "中"}]
    assert [{"id": str(r["id"]), "s": ",".join(sorted(r["s"], key=lambda m: ["é1", "?2", "a"].index(m))),
             "e": r["e"], "g": r["g"]} for r in ours] == server
