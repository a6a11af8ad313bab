"""On a real MariaDB: a SQL script is written whole or not at all (output/sql/writable.py, the pre-pass).

* binlog_row_metadata=MINIMAL, the CREATE TABLE before the binlog: the workload's TRUNCATE and rows
  cannot be written without the column names, so nothing is (exit 6, the file, offset and table named):
  piped into a server, the script would have emptied the table and inserted nothing. With --schema the
  same run writes the script and its replay reaches the server's end state; a filter that leaves the
  table out lets the rest through.
* binlog_row_image=MINIMAL: a rollback (old rows whole) and --replace (new rows whole) are refused up
  front; the forward script, whose INSERTs of partial after images name the columns they have, runs
  and reaches the server's end state.
"""
from __future__ import annotations

import io
import subprocess
import sys

import pytest

from binlog_spec.cli import EXIT_UNWRITABLE, main

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
from mariadb_server import MariaDBServer  # noqa: E402

START = """
CREATE DATABASE w CHARACTER SET utf8mb4;
USE w;
CREATE TABLE zone (id INT PRIMARY KEY, name VARCHAR(40), offset_s INT);
INSERT INTO zone VALUES (1, 'UTC', 0), (2, 'Asia/Tokyo', 32400);
"""

#: The binlog the scripts are made of: a TRUNCATE (a statement, written whatever the names), then
#: rows of `zone`, whose CREATE TABLE is not in it, and of `later`, whose CREATE TABLE is.
WORKLOAD = """
USE w;
TRUNCATE TABLE zone;
INSERT INTO zone VALUES (3, 'Europe/Paris', 3600), (4, 'America/New_York', -18000);
UPDATE zone SET offset_s = 7200 WHERE id = 3;
CREATE TABLE later (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO later VALUES (1, 'one'), (2, 'two');
DELETE FROM zone WHERE id = 4;
UPDATE later SET v = 'deux' WHERE id = 2;
"""


def run(argv: list) -> tuple[bytes, str, int]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return out.getvalue().encode("utf-8", "surrogateescape"), err.getvalue(), code


def checksums(srv: MariaDBServer, tables: list[str]) -> dict[str, str]:
    out = srv.sql("CHECKSUM TABLE " + ", ".join(tables) + " EXTENDED;")
    return dict(line.split("\t") for line in out.strip().splitlines())


def workload_binlogs(srv: MariaDBServer, workload: str, folder, prefix: str = "") -> list:
    """The binlogs `workload` is written to, copied into `folder` (closed by FLUSH BINARY LOGS), their names
    after `prefix`."""
    srv.sql("FLUSH BINARY LOGS;")
    first = srv.binlogs()[-1]
    srv.sql(workload)
    srv.sql("FLUSH BINARY LOGS;")
    copies = []
    for p in srv.binlogs():
        if first.name <= p.name < srv.binlogs()[-1].name:
            copies.append(folder / f"{prefix}{p.name}")
            copies[-1].write_bytes(p.read_bytes())
    return copies


@pytest.fixture(scope="module")
def nameless(tmp_path_factory):
    """MINIMAL metadata: the workload's binlogs, a `mariadb-dump --no-data` of the schema at their start,
    and the checksums of the tables after the workload."""
    folder = tmp_path_factory.mktemp("nameless")
    with MariaDBServer(extra_args=["--binlog-row-metadata=MINIMAL"]) as srv:
        srv.sql(START)
        dump = subprocess.run(["mariadb-dump", "--no-defaults", f"--socket={srv.socket}", "-uroot", "--no-data",
                               "--databases", "w"], capture_output=True, check=True)
        schema = folder / "schema.sql"
        schema.write_bytes(dump.stdout)
        files = workload_binlogs(srv, WORKLOAD, folder)
        end = checksums(srv, ["w.zone", "w.later"])
    return files, schema, end


@pytest.mark.parametrize("mode", [["--sql2"], ["--sql2", "--rollback"]], ids=["forward", "rollback"])
def test_minimal_metadata_without_schema_writes_nothing_and_names_the_table(nameless, mode):
    files, _, _ = nameless
    out, err, code = run(["sql", *mode, *files])
    assert (out, code) == (b"", EXIT_UNWRITABLE), err
    first = err.splitlines()[0]
    assert first.startswith(f"binlog-spec: error: {files[0]}: offset ") and "`w`.`zone`" in first, err
    assert "--schema FILE" in first
    assert "`w`.`later`" not in err        # its CREATE TABLE is in the binlog: its names are known


def test_minimal_metadata_with_schema_writes_the_script_and_its_replay_reaches_the_end_state(nameless):
    files, schema, end = nameless
    out, err, code = run(["sql", "--sql2", "--schema", schema, *files])
    assert code == 0, err
    assert b"TRUNCATE TABLE zone;" in out
    with MariaDBServer() as fresh:
        fresh.sql(START)
        fresh.sql("", input_bytes=out)
        assert checksums(fresh, ["w.zone", "w.later"]) == end


def test_a_filter_that_leaves_the_nameless_table_out_lets_the_script_through(nameless):
    files, _, end = nameless
    out, err, code = run(["sql", "--sql2", "--exclude-table", "w.zone", *files])
    assert code == 0, err
    assert b"`w`.`zone`" not in out
    with MariaDBServer() as fresh:
        fresh.sql(START)        # (the TRUNCATE, a statement, is not table-filtered: it runs)
        fresh.sql("", input_bytes=out)
        assert checksums(fresh, ["w.later"]) == {"w.later": end["w.later"]}


IMAGES_START = """
CREATE DATABASE img CHARACTER SET utf8mb4;
USE img;
CREATE TABLE m (id INT PRIMARY KEY, a INT DEFAULT 7, b VARCHAR(20) DEFAULT 'dflt', c INT, t TEXT);
INSERT INTO m VALUES (10, 1, 'ten', 100, 'x');
"""
IMAGES_WORKLOAD = """
SET SESSION binlog_row_image = MINIMAL;
USE img;
INSERT INTO m (id, c) VALUES (1, 10), (2, 20);
INSERT INTO m (id, b, t) VALUES (3, NULL, 'only b and t');
UPDATE m SET c = c + 1 WHERE id IN (1, 10);
DELETE FROM m WHERE id = 2;
"""


@pytest.fixture(scope="module")
def minimal_images(tmp_path_factory):
    """binlog_row_image=MINIMAL (FULL metadata: the names are known): the workload's binlogs, the
    checksum before and after it."""
    folder = tmp_path_factory.mktemp("images")
    with MariaDBServer(extra_args=["--binlog-row-metadata=FULL"]) as srv:
        srv.sql(IMAGES_START)
        start = checksums(srv, ["img.m"])
        files = workload_binlogs(srv, IMAGES_WORKLOAD, folder)
        end = checksums(srv, ["img.m"])
    assert start != end
    return files, start, end


def test_rollback_of_minimal_row_images_is_refused_before_anything_is_written(minimal_images, tmp_path):
    files, _, _ = minimal_images
    out, err, code = run(["sql", "--sql2", "--rollback", *files])
    assert (out, code) == (b"", EXIT_UNWRITABLE), err
    assert "`img`.`m`" in err and "before images" in err and f"{files[0]}: offset " in err
    target = tmp_path / "undo.sql"
    assert run(["sql", "--sql2", "--rollback", "-o", target, *files])[2] == EXIT_UNWRITABLE
    assert not target.exists()


def test_replace_of_minimal_after_images_is_refused_before_anything_is_written(minimal_images):
    files, _, _ = minimal_images
    out, err, code = run(["sql", "--sql2", "--replace", *files])
    assert (out, code) == (b"", EXIT_UNWRITABLE), err
    assert "`img`.`m`" in err and "after images" in err and "drop --replace" in err


def test_inserts_of_partial_after_images_are_written_with_their_columns_and_replay_to_the_end_state(minimal_images):
    files, _, end = minimal_images
    out, err, code = run(["sql", "--sql2", *files])
    assert code == 0, err
    assert b"INSERT INTO `img`.`m` (`id`, `c`) VALUES (1, 10);" in out
    assert b"INSERT INTO `img`.`m` (`id`, `b`, `t`) VALUES (3, NULL, 'only b and t');" in out
    with MariaDBServer() as fresh:
        fresh.sql(IMAGES_START)
        fresh.sql("", input_bytes=out)
        assert checksums(fresh, ["img.m"]) == end
