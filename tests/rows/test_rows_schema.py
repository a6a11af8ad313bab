"""The schema is learnt from every event, before the filters (rows.decoder.observe_schema): names and
charsets of the rows a filtered run prints come from the DDL before its window (issue 12)."""
from __future__ import annotations

import io
import json

import pytest

from binlog_spec import cli

from conftest import CORPUS, FIXTURES

MYSQL8 = str(CORPUS / "mysql-cdc-rs" / "binlog.000693")      # MySQL 8, MINIMAL metadata, DDL in the file
MINIMAL = str(FIXTURES / "types-minimal" / "mariadb-bin.000001")
SAKILA = str(CORPUS / "mbcj_osheroff" / "mysql-bin.sakila.gz")


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def jsonl_rows(*argv):
    code, out, err = run("rows", "--format", "jsonl", *argv)
    return code, [json.loads(line) for line in out.splitlines()], err


def _columns(rows_):
    return {k for r in rows_ for image in (r["before"], r["after"]) if image for k in image}


@pytest.mark.parametrize("flags", [
    ["--start-position", "108517"],
    ["--start-datetime", "2023-12-04 01:50:12"],
    ["--table", "hdb_meta.roles"],
    ["--database", "hdb_meta"],
    ["--server-id", "1"],
], ids=lambda f: f[0])
def test_a_filter_keeps_the_column_names_learnt_before_its_window(flags):
    code, filtered, err = jsonl_rows(*flags, MYSQL8)
    assert code == 0 and filtered, err
    assert not any(c.startswith("@") for c in _columns(filtered)), _columns(filtered)
    _, everything, _ = jsonl_rows(MYSQL8)
    kept = {r["pos"] for r in filtered}
    assert filtered == [r for r in everything if r["pos"] in kept]
    assert "are unknown" not in err


def test_a_gtid_filter_keeps_the_column_names_learnt_before_its_transactions():
    code, filtered, err = jsonl_rows("--include-gtids", "0-1-30", MINIMAL)
    assert code == 0 and filtered and {r["gtid"] for r in filtered} == {"0-1-30"}
    assert "id" in filtered[0]["before"] and not any(c.startswith("@") for c in _columns(filtered))


@pytest.mark.parametrize("flags", [["--sql2"], ["--sql2", "--rollback"], ["--sql"]])
def test_sql_after_a_position_filter_writes_the_names_from_the_ddl_before_it(flags):
    code, out, err = run("sql", *flags, "--start-position", "108517", MYSQL8)
    assert code == 0, err
    assert "`ROLE_NAME`" in out and "`@1`" not in out


def test_sakila_actor_names_are_text_from_the_create_table_charset():
    code, rows_, err = jsonl_rows("--table", "sakila.actor", SAKILA)
    assert code == 0
    first = rows_[0]["after"]
    assert first["first_name"] == "PENELOPE" and first["last_name"] == "GUINESS"
    assert not any(isinstance(v, dict) and "hex" in v for r in rows_ for v in r["after"].values())


ZALORA = str(CORPUS / "zalora_binlog-parser" / "data__fixtures__mysql-bin.01")   # MySQL 5.7, no DDL in it
BUILDINGS = "CREATE TABLE test_db.buildings (building_no INT, building_name VARCHAR(255){cs}, address VARCHAR(355))"


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("binlog-spec: warning:")]


def test_names_unknown_are_said_once_per_table_and_do_not_change_the_exit_code():
    code, rows_, err = jsonl_rows(ZALORA)
    assert code == 0 and len(rows_) > 3
    said = _warnings(err)
    assert len(said) == 2, said      # buildings and rooms, though rooms has several TABLE_MAPs
    for table in ("`test_db`.`buildings`", "`test_db`.`rooms`"):
        line = next(w for w in said if table in w)
        assert "--schema" in line and "binlog_row_metadata=FULL" in line


def _schema_file(tmp_path, text):
    path = tmp_path / "schema.sql"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_schema_without_a_charset_gives_names_and_a_guessed_charset_said_once(tmp_path):
    schema = _schema_file(tmp_path, BUILDINGS.format(cs="") + ";\n")
    code, rows_, err = jsonl_rows("--schema", schema, "--table", "test_db.buildings", ZALORA)
    assert code == 0
    assert rows_[0]["after"]["building_name"] == "ACME Headquaters"
    assert rows_[0]["after"]["address"] == "3950 North 1st Street CA 95134"
    said = _warnings(err)
    assert len(said) == 1 and "guessed" in said[0] and "--default-charset" in said[0] \
        and "`test_db`.`buildings`" in said[0] and "building_name, address" in said[0]


@pytest.mark.parametrize("how", ["column", "default-charset"])
def test_a_charset_from_the_schema_or_the_option_is_not_guessed(tmp_path, how):
    cs = " CHARACTER SET latin1" if how == "column" else ""
    schema = _schema_file(tmp_path, BUILDINGS.format(cs=cs).replace("address VARCHAR(355)",
                                                                    "address VARCHAR(355) CHARSET utf8"))
    flags = ["--default-charset", "utf8mb4"] if how == "default-charset" else []
    code, rows_, err = jsonl_rows("--schema", schema, *flags, "--table", "test_db.buildings", ZALORA)
    assert code == 0 and rows_[0]["after"]["building_name"] == "ACME Headquaters"
    assert _warnings(err) == []


def test_a_table_map_that_contradicts_the_schema_keeps_numbered_names_and_is_said(tmp_path):
    schema = _schema_file(tmp_path, "CREATE TABLE test_db.buildings (building_no INT, building_name TEXT);")
    code, rows_, err = jsonl_rows("--schema", schema, "--table", "test_db.buildings", ZALORA)
    assert code == 0 and set(rows_[0]["after"]) == {"@1", "@2", "@3"}
    said = _warnings(err)
    assert len(said) == 1
    assert "`test_db`.`buildings`" in said[0] and "offset 197" in said[0] and "3 columns" in said[0] \
        and "2" in said[0]
    schema = _schema_file(tmp_path, "CREATE TABLE test_db.buildings (a INT, b INT, c VARCHAR(10));")
    code, rows_, err = jsonl_rows("--schema", schema, "--table", "test_db.buildings", ZALORA)
    assert set(rows_[0]["after"]) == {"@1", "@2", "@3"}
    assert "column 2 (b) is INT" in err and "VARCHAR in the TABLE_MAP" in err


def test_a_schema_file_without_create_table_is_a_usage_error(tmp_path):
    schema = _schema_file(tmp_path, "-- nothing here\nSET NAMES utf8;\nCREATE VIEW v AS SELECT 1;\n")
    for argv in (["rows", "--schema", schema, ZALORA], ["sql", "--sql2", "--schema", schema, ZALORA]):
        code, out, err = run(*argv)
        assert code == 2 and out == ""
        assert "schema.sql" in err and "no CREATE TABLE" in err


def _mariadb_or_5x_files():
    import csv
    with open(CORPUS / "MANIFEST.tsv", encoding="utf-8") as f:
        for r in csv.DictReader(f, delimiter="\t"):
            v = r["server_version"].lower()
            if v.startswith(("5.", "10.", "11.")) or "mariadb" in v:
                yield CORPUS / r["file"]


def test_mariadb_and_5x_corpus_files_with_ddl_give_no_hex_text():
    """Every CHAR/VARCHAR/TEXT/ENUM/SET value of a table whose columns the binlog's DDL describes is
    text: its charset is known (the column's, the table's, the database's, else the server's)."""
    import binlog_spec
    from binlog_spec.rows.decoder import observe_schema, read_rows
    from binlog_spec.errors import BinlogError
    from binlog_spec.rows.ddl.schema import SchemaTracker
    from binlog_spec.rows.tablemap import CT, real_type

    character = {CT.string, CT.varchar, CT.var_string, CT.blob, CT.tiny_blob, CT.medium_blob, CT.long_blob,
                 CT.enum, CT.set}
    hex_text, text_values, files = [], 0, set()
    for path in _mariadb_or_5x_files():
        changes = read_rows(observe_schema(binlog_spec.read_events([path]), SchemaTracker()))
        try:
            for rc in changes:
                td = rc.table_def
                if not td.has_names or any(c.name is None for c in td.columns):
                    continue        # names unknown: no DDL for this table (said on stderr by the CLI)
                for name, col in zip(td.names, td.columns):
                    if real_type(col.type_code, col.meta) not in character or col.charset == 63:
                        continue
                    for image in (rc.before, rc.after):
                        if image and image.get(name) is not None:
                            text_values += 1
                            files.add(path.name)
                            if isinstance(image[name], (bytes, bytearray)):
                                hex_text.append((path.name, rc.pos, rc.table, name, col.charset))
        except BinlogError:
            pass            # a broken file: the rows before its fault are checked
    assert hex_text == []
    assert text_values > 10000 and len(files) > 10, (text_values, len(files))


CANAL = str(CORPUS / "canal/mysql-bin.000003")
#: mysqldump's form of a partitioned table: the PARTITION clause in an executable comment.
PARTITIONED = """CREATE TABLE `wanshao_test` (
  `id` int(11) NOT NULL AUTO_INCREMENT,
  `name` varchar(20) DEFAULT NULL,
  `c` int(11) DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4
/*!50100 PARTITION BY HASH (`id`)
PARTITIONS 4 */;
"""


def test_a_schema_dump_with_a_partitioned_table_gives_its_names_and_charset(tmp_path):
    schema = _schema_file(tmp_path, "CREATE TABLE other (x INT);\n" + PARTITIONED)
    code, rows_, err = jsonl_rows("--schema", schema, "--schema-database", "wanshao", CANAL)
    assert code == 0 and _warnings(err) == []
    assert rows_[0]["after"] == {"id": 35, "name": "helol", "c": 123, "col2": 123}   # col2: an ALTER in the binlog
    code, out, err = run("sql", "--sql2", "--complete-insert", "--schema", schema, "--schema-database", "wanshao",
                         CANAL)
    assert code == 0
    assert "INSERT INTO `wanshao`.`wanshao_test` (`id`, `name`, `c`, `col2`) VALUES (35, 'helol', 123, 123);" in out


def test_a_schema_file_whose_create_table_cannot_be_read_names_it_and_is_a_usage_error(tmp_path):
    schema = _schema_file(tmp_path, "CREATE TABLE (((;\n")
    code, out, err = run("rows", "--schema", schema, ZALORA)
    assert code == 2 and out == ""
    assert "could not read 'CREATE TABLE (((' " in err and "no CREATE TABLE statement" not in err


def test_a_schema_create_table_that_cannot_be_read_beside_good_ones_is_a_warning(tmp_path):
    schema = _schema_file(tmp_path, PARTITIONED + "CREATE TABLE bad (a LONG VARCHAR);\n")
    code, rows_, err = jsonl_rows("--schema", schema, "--schema-database", "wanshao", CANAL)
    assert code == 0 and rows_[0]["after"]["name"] == "helol"
    said = _warnings(err)
    assert len(said) == 1 and said[0].startswith(f"binlog-spec: warning: --schema {schema}: cannot replay "
                                                 "'CREATE TABLE bad (a LONG VARCHAR)' (")
    assert "\x1b" not in err and "Warning" not in err
