"""The compiled lane of `sql --sql2` (output/sql/lane.py, output/_crow_sql.pxi) against the real server and
against its reference (script.forward over the builders): a seeded random workload over every column kind
the lane writes (and a table without a key, a GEOMETRY, text that is not plain ASCII, a transaction of
several MB) is replayed from our script into a second server holding only the schema, which must end with
the source's CHECKSUM TABLE; the script is byte for byte the reference's, and the lane wrote most of it."""
from __future__ import annotations

import io
import random
import sys

import pytest

from binlog_spec.cli import main
from binlog_spec.output import lane_text, row_text

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = [pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server"),
              pytest.mark.skipif(row_text._crow_text is None, reason="the compiled core is not built (make build)")]

SCHEMA = """CREATE DATABASE w CHARACTER SET utf8mb4;
CREATE TABLE w.t (id INT PRIMARY KEY, ti TINYINT, su SMALLINT UNSIGNED, mi MEDIUMINT, bi BIGINT,
  bu BIGINT UNSIGNED, d DECIMAL(20,6), d0 DECIMAL(5,0), f FLOAT, db DOUBLE, dt DATE, tm TIME(3), tm0 TIME,
  dtm DATETIME(6), dt0 DATETIME, ts TIMESTAMP(2) NULL DEFAULT NULL, y YEAR, b3 BIT(3), b40 BIT(40),
  e ENUM('a','it''s','é'), s SET('x','y','zé'), c CHAR(8), vc VARCHAR(200), asc_ VARCHAR(20) CHARACTER SET ascii,
  lat VARCHAR(20) CHARACTER SET latin1, bn BINARY(4), vb VARBINARY(20), tx TEXT, bl BLOB) ENGINE=InnoDB;
CREATE TABLE w.k2 (a INT, b VARCHAR(10), v INT, PRIMARY KEY (b, a)) ENGINE=InnoDB;
CREATE TABLE w.nokey (a INT, b VARCHAR(20)) ENGINE=InnoDB;
CREATE TABLE w.g (id INT PRIMARY KEY, spot GEOMETRY) ENGINE=InnoDB;
"""
TABLES = ["w.t", "w.k2", "w.nokey", "w.g"]
TEXTS = ["plain", "O'Reilly", "back\\slash", "tab\there", "é", "😀 emoji", "", "a\nb", "*/; --", "\"q\""]


def _value(rng: random.Random, column: str) -> str:
    """A random SQL literal for a column of w.t (NULL one time in eight)."""
    if rng.random() < 0.125:
        return "NULL"
    text = rng.choice(TEXTS)
    quoted = "'" + text.replace("\\", "\\\\").replace("'", "''").replace("\n", "\\n").replace("\t", "\\t") + "'"
    return {
        "ti": str(rng.randint(-128, 127)), "su": str(rng.randint(0, 65535)), "mi": str(rng.randint(-2**23, 2**23 - 1)),
        "bi": str(rng.randint(-2**63, 2**63 - 1)), "bu": str(rng.randint(0, 2**64 - 1)),
        "d": f"{rng.randint(-10**14 + 1, 10**14 - 1)}.{rng.randint(0, 999999):06d}", "d0": str(rng.randint(-99999, 99999)),
        "f": repr(rng.uniform(-1e6, 1e6)), "db": repr(rng.uniform(-1e300, 1e300) * rng.random() ** 40),
        "dt": f"'{rng.randint(1000, 9999)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}'",
        "tm": f"'{rng.choice('-+')}{rng.randint(0, 838)}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}'",
        "tm0": f"'{rng.randint(0, 23)}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}'",
        "dtm": f"'{rng.randint(1000, 9999)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
               f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999999):06d}'",
        "dt0": f"'{rng.randint(1000, 9999)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)} 0{rng.randint(0, 9)}:00:00'",
        "ts": f"FROM_UNIXTIME({rng.randint(1, 2**31 - 2)}.{rng.randint(0, 99):02d})", "y": str(rng.randint(1901, 2155)),
        "b3": f"b'{rng.randint(0, 7):b}'", "b40": str(rng.randint(0, 2**40 - 1)),
        "e": rng.choice(["'a'", "'it''s'", "'é'", "''"]), "s": rng.choice(["''", "'x'", "'y,x'", "'zé,x'"]),
        "c": quoted, "vc": quoted, "asc_": rng.choice(["'ascii'", "''", "'a''b'"]), "lat": rng.choice(["'plain'", "'Björn'", "'€ƒ‰Ÿ'",
                                                                                      "_latin1 X'81408D8F909DFF'"]),
        "bn": f"X'{rng.getrandbits(16):04X}'", "vb": f"X'{rng.getrandbits(48):012X}'", "tx": quoted,
        "bl": f"X'{rng.getrandbits(64):016X}'",
    }[column]


COLUMNS = ["ti", "su", "mi", "bi", "bu", "d", "d0", "f", "db", "dt", "tm", "tm0", "dtm", "dt0", "ts", "y", "b3", "b40",
           "e", "s", "c", "vc", "asc_", "lat", "bn", "vb", "tx", "bl"]


def _workload(rng: random.Random) -> list[str]:
    statements = ["SET time_zone='+00:00'; SET sql_mode='';"]
    for i in range(1, 301):
        statements.append(f"INSERT INTO w.t VALUES ({i}, {', '.join(_value(rng, c) for c in COLUMNS)});")
    statements.append("BEGIN;")
    for i in range(1, 200):         # several rows events of one transaction, with a table the lane leaves
        column = rng.choice(COLUMNS)
        statements.append(f"UPDATE w.t SET {column} = {_value(rng, column)} WHERE id = {rng.randint(1, 300)};")
        if i % 50 == 0:
            statements.append(f"INSERT INTO w.nokey VALUES ({i}, 'n{i}'); INSERT INTO w.g VALUES ({i}, POINT({i}, 2));")
    statements.append("COMMIT;")
    statements.append("INSERT INTO w.k2 SELECT seq, CONCAT('k', seq % 7), seq FROM w.seq_1_to_30000;")
    statements.append("UPDATE w.k2 SET v = v * 2 WHERE a % 3 = 0; DELETE FROM w.k2 WHERE a % 5 = 0;")
    statements.append("UPDATE w.nokey SET b = 'changed'; DELETE FROM w.t WHERE id % 7 = 0; DELETE FROM w.g;")
    return statements


def _script(log: str, lane: bool) -> tuple[str, str, int, int]:
    """(stdout, stderr, exit code, lines the lane wrote) of `sql --sql2 LOG`, with the lane or without it."""
    saved, by_lane = row_text._crow_text, []
    lines_of = lane_text.with_lane

    def counted(lane_, lines):      # the lane's text: blocks of UTF-8 lines (bytes)
        for line in lines_of(lane_, lines):
            by_lane.append(line.count(b"\n") + 1 if type(line) is bytes else 0)
            yield line
    lane_text.with_lane = counted
    if not lane:
        row_text._crow_text = None
    try:
        out, err = io.StringIO(), io.StringIO()
        code = main(["sql", "--sql2", log], out, err)
    finally:
        row_text._crow_text, lane_text.with_lane = saved, lines_of
    return out.getvalue(), err.getvalue(), code, sum(by_lane)


def _checksums(srv) -> str:
    return srv.sql("CHECKSUM TABLE " + ", ".join(TABLES) + " EXTENDED;")


def test_random_workload_script_is_the_reference_and_replays_to_the_source_state():
    rng = random.Random(2029)
    with mariadb_server.MariaDBServer() as source:
        source.sql(SCHEMA)
        source.sql("FLUSH BINARY LOGS;")
        source.sql("\n".join(_workload(rng)))
        source.sql("FLUSH BINARY LOGS;")
        end = _checksums(source)
        log = str(source.binlogs()[-2])
        out, err, code, by_lane = _script(log, lane=True)
        assert (out, err, code) == _script(log, lane=False)[:3]
    assert code == 0, err
    lines = out.count("\n")
    assert lines > 40000 and by_lane > 0.9 * lines
    assert "INSERT INTO `w`.`g`" in out and "UPDATE `w`.`nokey` SET" in out and "_utf8mb4 X'" in out
    with mariadb_server.MariaDBServer() as replica:
        replica.sql(SCHEMA)
        replica.sql(out)
        assert _checksums(replica) == end


def test_a_column_name_of_undecodable_bytes_is_left_to_the_reference_path():
    # (names come from the binlog: one holding bytes that are no UTF-8 has no text the lane can write; the
    # reference path writes its rows, forward and undone)
    from types import SimpleNamespace
    from binlog_spec.output.sql import lane
    from binlog_spec.output.sql.statements import SqlOptions
    from binlog_spec.rows.column_types import LONG, VARCHAR
    from test_compiled_rows import UTF8, col
    columns = [col(LONG), col(VARCHAR, {"max_length": 40}, charset=UTF8)]

    def table(names):
        return SimpleNamespace(columns=columns, names=names, has_names=True, row_key=(0,), schema="d", table="t",
                               writable_columns=list(enumerate(names)), generated=[False] * 2, invisible=[False] * 2)
    for rollback in (False, True):
        write_rows, layout = 23, bytes([2, 0b11])   # (WRITE_ROWS_EVENT_V1, two columns, both present)
        assert lane._images(table(["id", "name"]), write_rows, layout, SqlOptions(), rollback) is not None
        assert lane._images(table(["id", "na\udcffme"]), write_rows, layout, SqlOptions(), rollback) is None
