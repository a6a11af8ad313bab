"""MariaDB's high-resolution temporals (mysql56_temporal_format=OFF: Field_time_hires, Field_datetime_hires,
Field_timestamp_hires) are logged as the old TIME/DATETIME/TIMESTAMP types with no metadata; their size
comes from the precision in the CREATE TABLE. Written by the real MariaDB, each precision 1-6 with a column
after it: the values must be the server's own (SELECT), and the column after them must read right (a
TIMESTAMP(5) read as 6 bytes instead of 4 + 3 shifted every later column)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")

PRECISIONS = range(1, 7)
COLUMNS = [name for n in PRECISIONS for name in (f"ts{n}", f"tm{n}", f"dt{n}")]
DDL = ("CREATE DATABASE d; CREATE TABLE d.h (id INT PRIMARY KEY, "
       + ", ".join(f"ts{n} TIMESTAMP({n}) NULL, tm{n} TIME({n}), dt{n} DATETIME({n})" for n in PRECISIONS)
       + ", tail INT)")
ROWS = [("2024-05-06 07:08:09.123456", "-12:34:56.654321", "2024-05-06 07:08:09.987654", 424242),
        ("2038-01-19 03:14:07.999999", "838:59:59.999999", "9999-12-31 23:59:59.999999", -1),
        ("1970-01-01 00:00:01.000001", "-838:59:59.999999", "1000-01-01 00:00:00.000001", 7)]


def _server_text(value: str) -> str:
    """Our JSON value as the server prints it: a space for the T, no zone, the fraction as stored."""
    return value.replace("T", " ").removesuffix("+00:00")


def test_every_precision_reads_as_the_server_stores_it_and_the_next_column_too():
    with mariadb_server.MariaDBServer(extra_args=["--mysql56-temporal-format=OFF"]) as srv:
        srv.sql(DDL)
        for i, (ts, tm, dt, tail) in enumerate(ROWS, 1):
            values = ", ".join(f"'{ts}', '{tm}', '{dt}'" for _ in PRECISIONS)
            srv.sql(f"SET time_zone='+00:00'; INSERT INTO d.h VALUES ({i}, {values}, {tail})")
        selected = srv.sql("SET time_zone='+00:00'; SELECT " + ", ".join(COLUMNS + ["tail"]) + " FROM d.h ORDER BY id")
        expected = [line.split("\t") for line in selected.splitlines()]
        log = str(srv.binlogs()[-1])
        out = subprocess.run([sys.executable, "-m", "binlog_spec", "rows", "--format", "jsonl", log],
                             capture_output=True, text=True, env={"TZ": "UTC", "PATH": "/usr/bin:/bin"})
        assert out.returncode == 0, out.stderr
        rows = [json.loads(line)["after"] for line in out.stdout.splitlines() if '"op":"insert"' in line]
    assert len(rows) == len(expected) == len(ROWS)
    for row, want in zip(rows, expected):
        got = []
        for name, server in zip(COLUMNS, want):
            n = int(name[2:])
            text = _server_text(row[name])
            head, _, fraction = text.partition(".")
            got.append(f"{head}.{(fraction + '000000')[:n]}")   # the server prints the column's n digits
        assert got + [str(row["tail"])] == want
