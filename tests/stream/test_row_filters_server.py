"""--key on every key type the issue names, on a real MariaDB's binlog: composite, VARCHAR with trailing
spaces (PAD SPACE, case-insensitive), DECIMAL, DATETIME(6), BINARY; what it keeps equals filtering the full
`rows --format jsonl` output with an independent predicate."""
from __future__ import annotations

import io
import json
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")

from binlog_spec.cli import main  # noqa: E402

DDL = """
CREATE DATABASE k;
CREATE TABLE k.comp (a INT NOT NULL, b VARCHAR(10) NOT NULL, v INT, PRIMARY KEY (a, b));
CREATE TABLE k.vc (id VARCHAR(12) NOT NULL PRIMARY KEY, v INT);
CREATE TABLE k.dec (id DECIMAL(10,3) NOT NULL PRIMARY KEY, v INT);
CREATE TABLE k.dt (id DATETIME(6) NOT NULL PRIMARY KEY, v INT);
CREATE TABLE k.bin (id BINARY(4) NOT NULL PRIMARY KEY, v INT);
CREATE TABLE k.uq (x INT, u INT NOT NULL, v INT, UNIQUE KEY (u));
"""

WORK = """
INSERT INTO k.comp VALUES (1,'x',1),(1,'y',2),(2,'x',3);
UPDATE k.comp SET v=v+10;
UPDATE k.comp SET b='z' WHERE a=1 AND b='y';
DELETE FROM k.comp WHERE a=2;
INSERT INTO k.vc VALUES ('ab',1),('Ab c',2),('abc',3);
UPDATE k.vc SET v=v*2;
UPDATE k.vc SET id='AB' WHERE id='ab';
INSERT INTO k.dec VALUES (1.5,1),(1.25,2),(-3,3);
UPDATE k.dec SET v=v+1 WHERE id>0;
INSERT INTO k.dt VALUES ('2024-01-02 03:04:05.123456',1),('2024-01-02 03:04:05',2);
UPDATE k.dt SET v=9;
INSERT INTO k.bin VALUES (0x61620000,1),(0x00ff0102,2),('zz',3);
DELETE FROM k.bin WHERE v=2;
INSERT INTO k.uq VALUES (1,10,1),(2,20,2);
UPDATE k.uq SET v=5 WHERE u=20;
"""

# table -> [(--key value, independent predicate of an image)]
CASES = {
    "comp": [("1,x", lambda i: i["a"] == 1 and i["b"] == "x"), ("1,'Y  '", lambda i: i["a"] == 1 and i["b"] == "y"),
             ("1,z", lambda i: i["a"] == 1 and i["b"] == "z"), ("2,x", lambda i: i["a"] == 2 and i["b"] == "x")],
    "vc": [("ab", lambda i: i["id"].lower() == "ab"), ("'AB   '", lambda i: i["id"].lower() == "ab"),
           ("'ab c'", lambda i: i["id"] == "Ab c"), ("abc", lambda i: i["id"] == "abc")],
    "dec": [("1.5", lambda i: i["id"] == "1.500"), ("1.250", lambda i: i["id"] == "1.250"),
            ("-3", lambda i: i["id"] == "-3.000")],
    "dt": [("2024-01-02 03:04:05.123456", lambda i: i["id"] == "2024-01-02T03:04:05.123456"),
           ("2024-01-02 03:04:05", lambda i: i["id"] == "2024-01-02T03:04:05")],
    "bin": [("0x61620000", lambda i: i["id"] == {"hex": "61620000"}), ("0x00ff0102", lambda i: i["id"] == {"hex": "00ff0102"}),
            ("0x7a7a0000", lambda i: i["id"] == {"hex": "7a7a0000"})],
    "uq": [("20", lambda i: i["u"] == 20), ("10", lambda i: i["u"] == 10)],
}


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    assert code == 0, err.getvalue()
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_key_of_every_type_equals_filtering_the_full_rows_output():
    with mariadb_server.MariaDBServer() as srv:
        srv.sql(DDL)
        srv.sql(WORK)
        log = str(srv.binlogs()[-1])
        full = run("rows", "--format", "jsonl", log)
        for table, cases in CASES.items():
            for key, pred in cases:
                want = [c for c in full if c["table"] == table
                        and any(pred(i) for i in (c["before"], c["after"]) if i is not None)]
                assert want, (table, key)
                assert run("rows", "--format", "jsonl", "--table", f"k.{table}", "--key", key, log) == want, (table, key)
