"""Proof on a real server: our SQL replays the binlog exactly, and our rollback undoes it exactly.

1. Load a schema into a private MariaDB server and record CHECKSUM TABLE of every table (start).
2. Run a workload with every column type and adversarial strings; record checksums again (end).
3. Forward: replay our executable SQL (plain, complete-insert, replace) into a second server holding
   only the schema: each must reproduce the end checksums.
4. Rollback: apply our rollback SQL to the end state: it must give back the start checksums.
"""
from __future__ import annotations

import sys

import pytest

from binlog_spec import cli

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
from mariadb_server import MariaDBServer  # noqa: E402

SCHEMA = r"""
CREATE DATABASE replay CHARACTER SET utf8mb4;
USE replay;
CREATE TABLE everything (
  id INT NOT NULL PRIMARY KEY,
  ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, mi MEDIUMINT UNSIGNED, i INT, bi BIGINT, biu BIGINT UNSIGNED,
  d DECIMAL(65,30), d2 DECIMAL(10,2) UNSIGNED, f FLOAT, db DOUBLE,
  dt DATE, tm TIME(6), dtm DATETIME(6), ts TIMESTAMP(3) NULL DEFAULT NULL, y YEAR,
  b1 BIT(1), b17 BIT(17), b64 BIT(64),
  e ENUM('a','b','c'), s SET('x','y','z'),
  c CHAR(10), vc VARCHAR(300), vlat VARCHAR(20) CHARACTER SET latin1, vgbk VARCHAR(20) CHARACTER SET gbk,
  bn BINARY(4), vbn VARBINARY(64), tx TEXT, bl BLOB, lt LONGTEXT, js JSON, g GEOMETRY
) ENGINE=InnoDB;
CREATE TABLE `we``ird` (`i``d` INT PRIMARY KEY, `va``l` VARCHAR(50)) ENGINE=InnoDB;
CREATE TABLE nokey (a INT, b VARCHAR(20)) ENGINE=InnoDB;
"""

WORKLOAD = r"""
SET time_zone = '+00:00';
SET sql_mode = '';
USE replay;
INSERT INTO everything VALUES
 (1, -128, 255, -32768, 16777215, -2147483648, -9223372036854775808, 18446744073709551615,
  -12345678901234567890123456789012345.123456789012345678901234567890, 99999999.99, -1.5e-10, 3.141592653589793,
  '0000-00-00', '-838:59:59.000000', '1000-01-01 00:00:00.000001', '1970-01-01 00:00:01.001', 1901,
  b'1', b'10101010101010101', b'1111111111111111111111111111111111111111111111111111111111111111',
  'b', 'x,z', 'ch', 'O''Reilly \\ "q" */ /*!*/; -- end', 'Björn', '中文',
  X'00FF0001', X'C328FFFE00', 'line1\nline2\r\n\0tab\t\Z', X'000102', REPEAT('🎉', 100),
  '{"a": [1, 2.5, "x\\"y"], "b": null}', ST_GeomFromText('POINT(1 2)', 4326)),
 (2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '2026-02-28', '00:00:00', '2026-02-28 23:59:59.999999', '2038-01-19 03:14:07.999', 0,
  b'0', b'0', b'0', '', '', '', '', '', '', X'', X'', '', X'', '', '[]', ST_GeomFromText('LINESTRING(0 0,1 1)')),
 (3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
  NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO `we``ird` VALUES (1, 'back`tick'), (2, 'it''s');
INSERT INTO nokey VALUES (1, 'dup'), (1, 'dup'), (2, NULL);
BEGIN;
UPDATE everything SET vc = CONCAT(vc, ' updated'), bi = bi + 1, js = '{"c": "\\u00e9"}', tm = '12:34:56.5' WHERE id = 1;
UPDATE everything SET ti = 7, vbn = X'80818283', s = 'y', e = 'c' WHERE id = 2;
UPDATE `we``ird` SET `va``l` = 'new\\value' WHERE `i``d` = 1;
COMMIT;
UPDATE nokey SET b = 'one' WHERE a = 1 LIMIT 1;
UPDATE everything SET id = 30 WHERE id = 3;
DELETE FROM nokey WHERE b IS NULL;
DELETE FROM `we``ird` WHERE `i``d` = 2;
INSERT INTO everything (id, vc) VALUES (4, 'later'), (5, 'gone');
DELETE FROM everything WHERE id = 5;
"""

TABLES = ["replay.everything", "replay.`we``ird`", "replay.nokey"]


def checksums(srv: MariaDBServer, tables: list[str] = TABLES) -> dict[str, str]:
    out = srv.sql("CHECKSUM TABLE " + ", ".join(tables) + " EXTENDED;")
    return dict(line.split("\t") for line in out.strip().splitlines())


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A server after the workload, its binlog, and the start and end checksums."""
    srv = MariaDBServer().start()
    try:
        srv.sql(SCHEMA)
        start = checksums(srv)
        srv.sql("FLUSH BINARY LOGS;")
        first_workload_log = srv.binlogs()[-1]
        srv.sql(WORKLOAD)
        srv.sql("FLUSH BINARY LOGS;")
        end = checksums(srv)
        assert start != end
        logs = [p for p in srv.binlogs() if p.name >= first_workload_log.name][:-1]
        out = tmp_path_factory.mktemp("binlogs")
        copies = []
        for p in logs:
            copies.append(out / p.name)
            copies[-1].write_bytes(p.read_bytes())
        yield srv, copies, start, end
    finally:
        srv.cleanup()


def our_sql(files, *options) -> bytes:
    import io
    buf, err = io.StringIO(), io.StringIO()
    code = cli.main(["sql", *options, *map(str, files)], buf, err)
    assert code == 0, err.getvalue()
    return buf.getvalue().encode("utf-8", "surrogateescape")


IMAGE_MINIMAL_SCHEMA = r"""
CREATE DATABASE mini CHARACTER SET utf8mb4;
USE mini;
CREATE TABLE m (id INT PRIMARY KEY, a INT DEFAULT 7, b VARCHAR(20) DEFAULT 'dflt', c INT, t TEXT);
"""
IMAGE_MINIMAL_WORKLOAD = r"""
SET SESSION binlog_row_image = MINIMAL;
USE mini;
INSERT INTO m (id, c) VALUES (1, 10), (2, 20), (3, 30);
INSERT INTO m VALUES (4, 1, 'full', 4, 'text');
INSERT INTO m (id, b, t) VALUES (5, NULL, 'only b and t');
UPDATE m SET c = c + 1 WHERE id IN (1, 4);
UPDATE m SET t = 'later' WHERE id = 5;
DELETE FROM m WHERE id = 2;
"""


@pytest.mark.parametrize("options", [["--sql2"], ["--sql2", "--complete-insert"]], ids=["sql2", "complete-insert"])
def test_forward_sql_of_minimal_row_images_replays_to_the_same_state(tmp_path, options):
    """binlog_row_image=MINIMAL: an INSERT's image holds the columns the statement gave; the forward
    SQL names them and the others take their defaults, as on a replica."""
    with MariaDBServer() as srv:
        srv.sql(IMAGE_MINIMAL_SCHEMA)
        srv.sql("FLUSH BINARY LOGS;")
        first = srv.binlogs()[-1]
        srv.sql(IMAGE_MINIMAL_WORKLOAD)
        srv.sql("FLUSH BINARY LOGS;")
        end = checksums(srv, ["mini.m"])
        files = []
        for p in srv.binlogs():
            if first.name <= p.name < srv.binlogs()[-1].name:
                files.append(tmp_path / p.name)
                files[-1].write_bytes(p.read_bytes())
        sql = our_sql(files, *options)
        assert b"INSERT INTO `mini`.`m` (`id`, `c`) VALUES (1, 10);" in sql, sql
    with MariaDBServer() as fresh:
        fresh.sql(IMAGE_MINIMAL_SCHEMA)
        fresh.sql("", input_bytes=sql)
        assert checksums(fresh, ["mini.m"]) == end


@pytest.mark.parametrize("options", [["--sql2"], ["--sql2", "--complete-insert"], ["--sql2", "--replace"]],
                         ids=["plain", "complete-insert", "replace"])
def test_forward_sql_reproduces_the_end_state(recorded, options):
    _, files, start, end = recorded
    with MariaDBServer() as fresh:
        fresh.sql(SCHEMA)
        assert checksums(fresh) == start
        fresh.sql("", input_bytes=our_sql(files, *options))
        assert checksums(fresh) == end


def test_rollback_sql_gives_back_the_start_state(recorded):
    srv, files, start, end = recorded
    assert checksums(srv) == end
    srv.sql("", input_bytes=our_sql(files, "--sql2", "--rollback"))
    assert checksums(srv) == start
    srv.sql("", input_bytes=our_sql(files, "--sql2"))  # and forward again
    assert checksums(srv) == end


NOLOG_SCHEMA = r"""
SET TIMESTAMP = 1767225600;
CREATE DATABASE cs CHARACTER SET utf8mb4;
USE cs;
CREATE TABLE lat (id INT PRIMARY KEY, c CHAR(10), vc VARCHAR(50), t TEXT, e ENUM('é','ü','a'), vb VARBINARY(10))
  ENGINE=InnoDB DEFAULT CHARSET=latin1;
CREATE TABLE u8 (id INT PRIMARY KEY, vc VARCHAR(50), t TEXT, bn BINARY(4), b BLOB) ENGINE=InnoDB;
INSERT INTO lat VALUES (1, 'Björn', 'Ærøskøbing', 'naïve € text', 'é', X'E900FF'), (2, 'x', 'quote '' \\ y', '', 'ü', X'');
INSERT INTO u8 VALUES (1, 'Grüße 🎉', '李雷 😀', X'F09F0000', X'C328'), (2, '', 'é', X'00', X'');
"""

NOLOG_WORKLOAD = r"""
SET TIMESTAMP = 1767229200;
USE cs;
UPDATE lat SET vc = 'Straße ÿ', e = 'a', vb = X'C3A9' WHERE id = 1;
DELETE FROM lat WHERE id = 2;
INSERT INTO lat VALUES (3, 'ü', 'é€', 'new', 'é', X'FF');
UPDATE u8 SET vc = 'emoji 😀 – changed', bn = X'FFFEFDFC' WHERE id = 1;
DELETE FROM u8 WHERE id = 2;
INSERT INTO u8 VALUES (3, 'neu ü', '🎉', X'41', X'00FF');
"""


def test_rollback_after_a_time_filter_without_row_metadata_gives_back_the_state_at_its_start():
    """binlog_row_metadata=NO_LOG: names and charsets come from the CREATE TABLEs, which the
    --start-datetime window leaves out (issue 12, cases 1 and 3)."""
    tables = ["cs.lat", "cs.u8"]

    def sums(srv):
        return checksums(srv, tables)

    with MariaDBServer(extra_args=["--binlog-row-metadata=NO_LOG"]) as srv:
        srv.sql("SET NAMES utf8mb4;" + NOLOG_SCHEMA)
        start = sums(srv)
        srv.sql("SET NAMES utf8mb4;" + NOLOG_WORKLOAD)
        srv.sql("FLUSH BINARY LOGS;")
        assert sums(srv) != start
        files = srv.binlogs()[:-1]
        undo = our_sql(files, "--sql2", "--rollback", "--start-datetime", "2026-01-01 01:00:00")
        assert b"`vc`" in undo and b"`@" not in undo
        srv.sql("", input_bytes=undo)
        assert sums(srv) == start


# ---------------------------------------------------------------------------------------------
# MINIMAL row metadata (MariaDB's default, MySQL 5.7/8.0's before FULL): the binlog has no column
# names and no keys, so they come from the CREATE TABLE in the binlog or from --schema. A table
# with no key holds every type whose WHERE condition is hard to make exact, twins and rows equal
# under their collation; a table's PRIMARY KEY and another's NOT NULL UNIQUE key are known only
# from DDL. Every event timestamp is set by the session (SET timestamp), so a --start-datetime
# filter can begin after the CREATE TABLE and the first rows.

T0 = 1700000000                                   # 2023-11-14 22:13:20 UTC
WORKLOAD_START = "2023-11-14T22:15:00+00:00"      # T0 + 100

MINIMAL_SCHEMA = f"""
SET timestamp = {T0};
CREATE DATABASE minimal CHARACTER SET utf8mb4;
USE minimal;
CREATE TABLE nokey (f FLOAT, d DOUBLE, ts TIMESTAMP(6) NULL DEFAULT NULL, b BIT(10), j JSON, bl BLOB,
  t VARCHAR(100) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci, c VARCHAR(10) CHARACTER SET latin1,
  g GEOMETRY NULL, bn BINARY(3)) ENGINE=InnoDB;
CREATE TABLE keyed (id INT NOT NULL, name VARCHAR(50), ts TIMESTAMP NULL DEFAULT NULL, amount DOUBLE,
  PRIMARY KEY (id)) ENGINE=InnoDB;
CREATE TABLE uniq (code VARCHAR(20) NOT NULL, n INT, ts TIMESTAMP(3) NULL DEFAULT NULL,
  UNIQUE KEY (code)) ENGINE=InnoDB;
"""

MINIMAL_FIRST_ROWS = rf"""
SET timestamp = {T0 + 10};
SET time_zone = '+05:30';
USE minimal;
INSERT INTO nokey VALUES
 (1.1, 0.1, '2026-03-29 02:30:00.5', b'1010101010', '{{"a": [1, 2.5, "x\\"y"]}}', X'000102',
  'Emoji 🎉 ''q'' \\ back', 'Björn', ST_GeomFromText('POINT(1 2)', 4326), X'010000'),
 (1.1, 0.1, '2026-03-29 02:30:00.5', b'1010101010', '{{"a": [1, 2.5, "x\\"y"]}}', X'000102',
  'Emoji 🎉 ''q'' \\ back', 'Björn', ST_GeomFromText('POINT(1 2)', 4326), X'010000'),
 (-1.5e-10, 3.141592653589793, '1970-01-01 05:30:01', b'0', '[]', X'', 'abc', 'x', NULL, X'000000'),
 (-1.5e-10, 3.141592653589793, '1970-01-01 05:30:01', b'0', '[]', X'', 'ABC', 'x', NULL, X'000000'),
 (-1.5e-10, 3.141592653589793, '1970-01-01 05:30:01', b'0', '[]', X'', 'abc ', 'x', NULL, X'000000'),
 (NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
INSERT INTO keyed VALUES (1, 'one', '2020-01-01 00:00:00', 1.5), (2, 'two', NULL, NULL), (3, 'three', '2038-01-19 08:44:07', -0.5);
INSERT INTO uniq VALUES ('a', 1, '2020-01-01 00:00:00.123'), ('b', NULL, NULL);
"""

MINIMAL_WORKLOAD = rf"""
SET timestamp = {T0 + 100};
SET time_zone = '+05:30';
USE minimal;
UPDATE nokey SET f = 2.5, j = '{{"b": null}}', t = CONCAT(t, ' ✓') WHERE c = 'Björn' LIMIT 1;
UPDATE nokey SET d = d * 2, c = 'y' WHERE BINARY t = 'ABC';
DELETE FROM nokey WHERE BINARY t = 'abc ';
DELETE FROM nokey WHERE f IS NULL;
UPDATE nokey SET ts = '2000-01-01 00:00:00', bl = X'FF00', b = b'1', bn = X'FFFFFF' WHERE BINARY t = 'abc';
INSERT INTO nokey (f, t) VALUES (0.25, 'new'), (0.25, 'new');
DELETE FROM nokey WHERE t = 'new' LIMIT 1;
UPDATE keyed SET name = 'uno', ts = '2021-06-01 12:00:00', amount = amount + 1 WHERE id = 1;
UPDATE keyed SET id = 20 WHERE id = 2;
DELETE FROM keyed WHERE id = 3;
INSERT INTO keyed VALUES (4, 'four', '2022-02-02 02:02:02', 4.4);
UPDATE uniq SET n = 2, ts = NULL WHERE code = 'a';
DELETE FROM uniq WHERE code = 'b';
INSERT INTO uniq VALUES ('c', 3, '2024-01-01 00:00:00.5');
"""

MINIMAL_TABLES = ["minimal.nokey", "minimal.keyed", "minimal.uniq"]


def minimal_checksums(srv: MariaDBServer) -> dict[str, str]:
    return checksums(srv, MINIMAL_TABLES)


@pytest.fixture(scope="module")
def minimal(tmp_path_factory):
    """A MINIMAL-metadata server after the workload, its binlogs (from before the CREATE DATABASE),
    a `mariadb-dump --no-data` of the schema, and the checksums: empty tables, after the first rows,
    after the workload. Each test leaves the server after the workload."""
    import subprocess
    srv = MariaDBServer(extra_args=["--binlog-row-metadata=MINIMAL"]).start()
    try:
        assert srv.sql("SELECT @@binlog_row_metadata;").strip() == "MINIMAL"
        srv.sql("FLUSH BINARY LOGS;")
        first_log = srv.binlogs()[-1]
        srv.sql(MINIMAL_SCHEMA)
        empty = minimal_checksums(srv)
        srv.sql(MINIMAL_FIRST_ROWS)
        first = minimal_checksums(srv)
        srv.sql(MINIMAL_WORKLOAD)
        srv.sql("FLUSH BINARY LOGS;")
        end = minimal_checksums(srv)
        assert len({tuple(empty.values()), tuple(first.values()), tuple(end.values())}) == 3
        out = tmp_path_factory.mktemp("minimal")
        copies = []
        for p in [p for p in srv.binlogs() if p.name >= first_log.name][:-1]:
            copies.append(out / p.name)
            copies[-1].write_bytes(p.read_bytes())
        dump = subprocess.run(["mariadb-dump", "--no-defaults", f"--socket={srv.socket}", "-uroot", "--no-data",
                               "--databases", "minimal"], capture_output=True, check=True)
        schema = out / "schema.sql"
        schema.write_bytes(dump.stdout)
        yield srv, copies, schema, (empty, first, end)
    finally:
        srv.cleanup()


def test_minimal_metadata_rollback_after_a_start_datetime_filter_with_a_schema_dump_restores_the_checksums(minimal):
    """Names and keys from `mariadb-dump --no-data` (--schema): rollback gives back the tables as
    they were before the filter's start, and the forward SQL of the same window gives the end."""
    srv, files, schema, (_, first, end) = minimal
    window = ["--start-datetime", WORKLOAD_START, "--schema", str(schema)]
    srv.sql("", input_bytes=our_sql(files, "--sql2", "--rollback", *window))
    assert minimal_checksums(srv) == first
    srv.sql("", input_bytes=our_sql(files, "--sql2", *window))
    assert minimal_checksums(srv) == end


def test_minimal_metadata_rollback_after_a_start_datetime_filter_takes_names_and_keys_from_the_binlogs_ddl(minimal):
    """No --schema: the CREATE TABLE statements before the filter's start give names and keys (the
    schema is learnt from every event, whatever the filters)."""
    srv, files, _, (_, first, end) = minimal
    window = ["--start-datetime", WORKLOAD_START]
    srv.sql("", input_bytes=our_sql(files, "--sql2", "--rollback", *window))
    assert minimal_checksums(srv) == first
    srv.sql("", input_bytes=our_sql(files, "--sql2", *window))
    assert minimal_checksums(srv) == end


def test_minimal_metadata_whole_binlog_rollback_and_replay_from_scratch(minimal):
    """Unfiltered: the rollback empties the tables (the CREATE statements are not undone); the
    forward SQL, run after DROP DATABASE, builds the end state from nothing."""
    srv, files, _, (empty, _, end) = minimal
    srv.sql("", input_bytes=our_sql(files, "--sql2", "--rollback"))
    assert minimal_checksums(srv) == empty
    srv.sql("DROP DATABASE minimal;")
    srv.sql("", input_bytes=our_sql(files, "--sql2"))
    assert minimal_checksums(srv) == end


def test_minimal_metadata_sql_means_the_same_under_a_gbk_connection_and_no_backslash_escapes(minimal):
    """The literals do not depend on the session: the script's SET NAMES and sql_mode replaced by a
    multi-byte connection charset and NO_BACKSLASH_ESCAPES, the rollback and the forward SQL still
    give the same tables."""
    srv, files, schema, (_, first, end) = minimal
    window = ["--start-datetime", WORKLOAD_START, "--schema", str(schema)]

    def hostile(script: bytes) -> bytes:
        lines = script.split(b"\n")
        assert lines[0] == b"SET NAMES utf8mb4;" and lines[2].startswith(b"SET SESSION sql_mode=")
        lines[0] = b"SET NAMES gbk;"
        lines[2] = b"SET SESSION sql_mode='NO_AUTO_VALUE_ON_ZERO,NO_BACKSLASH_ESCAPES';"
        return b"\n".join(lines)

    srv.sql("", input_bytes=hostile(our_sql(files, "--sql2", "--rollback", *window)))
    assert minimal_checksums(srv) == first
    srv.sql("", input_bytes=hostile(our_sql(files, "--sql2", *window)))
    assert minimal_checksums(srv) == end


# ------------------------------------------------- reshaped tables (partitions, moves, generated columns)

RESHAPE = """
CREATE DATABASE reshape;
USE reshape;
CREATE TABLE p (id INT NOT NULL, a INT, b VARCHAR(10), c INT, g INT AS (a * 2) PERSISTENT,
                v INT AS (a + 1) VIRTUAL, PRIMARY KEY (id)) PARTITION BY HASH (id) PARTITIONS 3;
INSERT INTO p (id, a, b, c) VALUES (1, 10, 'x', 100), (2, 20, 'y', 200);
ALTER TABLE p ADD PARTITION PARTITIONS 1;
ALTER TABLE p ROW_FORMAT=DYNAMIC;
ALTER TABLE p MODIFY b VARCHAR(10) FIRST;
INSERT INTO p (id, a, b, c) VALUES (3, 30, 'z', 300);
ALTER TABLE p CHANGE c c2 BIGINT AFTER id;
INSERT INTO p (id, a, b, c2) VALUES (4, 40, 'w', 400);
UPDATE p SET a = a + 5, b = 'u' WHERE id = 1;
DELETE FROM p WHERE id = 2;
ALTER TABLE p REMOVE PARTITIONING;
UPDATE p SET c2 = 3000 WHERE id = 3;
CREATE TABLE side (a INT);
INSERT INTO side VALUES (1);
ALTER TABLE side ADD SYSTEM VERSIONING;
"""


@pytest.fixture(scope="module")
def reshaped(tmp_path_factory):
    """A MINIMAL-metadata server after RESHAPE (names only from the binlog's DDL), its binlogs
    and the checksum at the end."""
    srv = MariaDBServer(extra_args=["--binlog-row-metadata=MINIMAL"]).start()
    try:
        srv.sql("FLUSH BINARY LOGS;")
        first_log = srv.binlogs()[-1]
        srv.sql(RESHAPE)
        srv.sql("FLUSH BINARY LOGS;")
        end = checksums(srv, ["reshape.p"])
        out = tmp_path_factory.mktemp("reshape")
        copies = []
        for p in [p for p in srv.binlogs() if p.name >= first_log.name][:-1]:
            copies.append(out / p.name)
            copies[-1].write_bytes(p.read_bytes())
        yield srv, copies, end
    finally:
        srv.cleanup()


def test_sql2_of_a_partitioned_table_whose_columns_move_replays_to_the_same_table(reshaped):
    """The partitioned CREATE TABLE is learnt, partition maintenance and table options keep it,
    MODIFY ... FIRST and CHANGE ... AFTER move the columns, and the generated columns (PERSISTENT,
    VIRTUAL) are left to the server: replayed from nothing, the table is the same."""
    srv, files, end = reshaped
    script = our_sql(files, "--sql2").decode()
    inserts = [line for line in script.splitlines() if line.startswith("INSERT INTO `reshape`.`p`")]
    assert len(inserts) == 4 and all("`g`" not in line and "`v`" not in line for line in inserts)
    # b FIRST: b, id, a, c, g, v; then c -> c2 AFTER id: b, id, c2, a, g, v
    assert "INSERT INTO `reshape`.`p` (`b`, `id`, `c2`, `a`) VALUES ('w', 4, 400, 40);" in inserts
    srv.sql("DROP DATABASE reshape;")
    srv.sql("", input_bytes=script.encode())
    assert checksums(srv, ["reshape.p"]) == end


def test_sql2_rollback_of_a_reshaped_table_empties_it(reshaped):
    srv, files, end = reshaped
    srv.sql("", input_bytes=our_sql(files, "--sql2", "--rollback"))
    assert srv.sql("SELECT COUNT(*) FROM reshape.p;").strip() == "0"


def test_an_alter_that_cannot_be_replayed_is_said_once_as_a_warning_at_its_query_event(reshaped):
    """ADD SYSTEM VERSIONING adds hidden columns no statement names: the table is forgotten, said
    as binlog-spec's own warning line with the QUERY_EVENT's file and offset, not as a Python warning."""
    import io
    import binlog_spec
    _, files, _ = reshaped
    query = next(ev for f in files for ev in binlog_spec.open(f)
                 if ev.type == "QUERY_EVENT" and "SYSTEM VERSIONING" in ev.fields["query"])
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["rows", *map(str, files)], out, err) == 0
    said = [line for line in err.getvalue().splitlines() if "side" in line]
    assert said == [f"binlog-spec: warning: {query.file}: offset {query.pos}: cannot replay 'ALTER TABLE side "
                    "ADD SYSTEM VERSIONING' (unsupported ALTER syntax); forgetting `reshape`.`side`"]
