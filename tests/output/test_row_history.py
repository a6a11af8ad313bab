"""output.row_history: the history lines of the real MariaDB's row images, by hand from the statements sent:
a MINIMAL before image (the key alone: old values unknown, `?`), and a table with no key (every column)."""
from __future__ import annotations

import sys

import pytest

import binlog_spec
from binlog_spec.output.row_history import history_line
from binlog_spec.rows.decoder import read_rows

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")


def test_history_of_minimal_images_and_of_a_table_with_no_key():
    with mariadb_server.MariaDBServer(extra_args=["--binlog-row-image=MINIMAL"]) as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, a INT, b VARCHAR(5)); "
                "CREATE TABLE d.n (x INT, y VARCHAR(5))")
        srv.sql("INSERT INTO d.t VALUES (1, 10, 'p'); UPDATE d.t SET b = 'q' WHERE id = 1; "
                "INSERT INTO d.n VALUES (3, 'z'); UPDATE d.n SET y = 'w'; DELETE FROM d.n; DELETE FROM d.t")
        srv.sql("FLUSH BINARY LOGS")
        lines = [history_line(rc).split(" ", 3)[3] for rc in read_rows(binlog_spec.open(srv.binlogs()[-2]))]
    assert lines == ["INSERT `d`.`t` `id`=1",
                     'UPDATE `d`.`t` `id`=1: `b`: ? → "q"',
                     'INSERT `d`.`n` `x`=3 `y`="z"',
                     'UPDATE `d`.`n`: `y`: "z" → "w"',
                     'DELETE `d`.`n` `x`=3 `y`="w"',
                     "DELETE `d`.`t` `id`=1"]
