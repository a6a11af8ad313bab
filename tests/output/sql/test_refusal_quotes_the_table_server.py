"""A refusal names its table as SQL quotes it: a backquote in a name doubled (`we``ird`), so the line
says which table it is (found by tests/proof, whose check reads the name back). MariaDB writes the
binlog (binlog_row_image=NOBLOB: an UPDATE's images leave the TEXT column out)."""
from __future__ import annotations

import io
import sys

import pytest

from binlog_spec import cli

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")

WORKLOAD = ("CREATE DATABASE `d``b`; USE `d``b`; CREATE TABLE `we``ird` (id INT PRIMARY KEY, n INT, t TEXT); "
            "INSERT INTO `we``ird` VALUES (1, 1, 'x'); FLUSH BINARY LOGS; "
            "SET SESSION binlog_row_image = NOBLOB; UPDATE `we``ird` SET n = 2 WHERE id = 1; FLUSH BINARY LOGS")


@pytest.mark.parametrize("options", [["--sql2", "--rollback"], ["--sql2", "--replace"], ["--rollback"]],
                         ids=["sql2-rollback", "sql2-replace", "base64-rollback"])
def test_a_refusal_for_missing_columns_quotes_the_table_name(options):
    with mariadb_server.MariaDBServer() as srv:
        srv.sql(WORKLOAD)
        log = str(srv.binlogs()[-2])
        out, err = io.StringIO(), io.StringIO()
        code = cli.main(["sql", *options, log], out, err)
    if options[0] == "--sql2":      # the pre-pass refuses before the first byte: exit 6, the table first
        assert (code, out.getvalue()) == (cli.EXIT_UNWRITABLE, ""), err.getvalue()
        assert ": `d``b`.`we``ird`: the " in err.getvalue(), err.getvalue()
    else:                           # the base64 rollback stops where it meets the event: exit 3
        assert code == cli.EXIT_BAD_INPUT, err.getvalue()
        assert "of `d``b`.`we``ird` lack" in err.getvalue(), err.getvalue()
