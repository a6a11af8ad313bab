"""Row changes as SQL: the WHERE clause that finds the row, and partial JSON updates."""
from __future__ import annotations

import io
import json
import re

import pytest

import binlog_spec
from binlog_spec import cli
from binlog_spec.rows.decoder import DELETE, read_rows
from binlog_spec.rows.decoder import RowChange
from binlog_spec.output.sql.statements import SqlGenerationError, SqlOptions, statement
from binlog_spec.rows.tablemap import TableDef
from binlog_spec.rows.column_types import Column
from binlog_spec.rows.json.json_binary import JsonOpaque

from conftest import CORPUS
from test_rows import partial_update_file

JSON_FILE = CORPUS / "rust_mysql_common/json.binlog.000001"
CDC_FILE = CORPUS / "mysql-cdc-rs/binlog.000693"


def run(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["sql", *map(str, argv)], out, err)
    return code, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------- JSON partial updates

#: `name` and `age` are generated columns (its CREATE TABLE): the SET leaves them to the server.
_CALL = re.compile(r"^UPDATE `mysql`.`t` SET `json_col`=(JSON_\w+)\(`json_col`, (.*)\) WHERE ")
_PAIR = re.compile(r"'([^']*)', CAST\('([^']*)' AS JSON\)")


def test_partial_json_updates_without_the_document_are_written_as_the_diffs_mysql_functions():
    """json.binlog: MINIMAL images, the before image holds the key only. Each diff the project
    decodes from the event is in the SQL as JSON_REPLACE(`json_col`, path, CAST(value AS JSON));
    the server's own generated column `age` (json_col->'$.age') agrees with the value."""
    code, out, err = run("--sql2", JSON_FILE)
    assert code == 0, err
    assert "json_diff" not in out
    decoded = [r for r in read_rows(binlog_spec.open(JSON_FILE))
               if isinstance(r.after.get("@2"), dict) and "json_diff" in r.after["@2"]]
    written = [line for line in out.splitlines() if "JSON_" in line]
    assert len(decoded) == len(written) == 6
    for r, line in zip(decoded, written):
        function, args = _CALL.match(line).groups()
        diffs = r.after["@2"].diffs
        assert [(d.operation, d.path, d.value) for d in diffs] == \
            [("REPLACE", path, json.loads(value)) for path, value in _PAIR.findall(args)]
        assert function == "JSON_REPLACE" and _PAIR.sub("", args).strip(", ") == ""
        assert json.loads(_PAIR.findall(args)[0][1]) == r.after["@4"]      # `age`, computed by the server
        assert line.endswith(f"WHERE `id`={r.before['@1']};")               # the PRIMARY KEY of its CREATE TABLE


def test_generated_columns_of_the_binlogs_create_table_get_no_value_in_insert_or_update():
    """json.binlog's CREATE TABLE: `name ... AS (json_col->>'$.name')`, `age INT AS (...)`: MySQL refuses
    a value for them (error 3105), so INSERT names the other columns and UPDATE sets only those."""
    code, out, err = run("--sql2", JSON_FILE)
    assert code == 0, err
    inserts = [line for line in out.splitlines() if line.startswith("INSERT")]
    updates = [line for line in out.splitlines() if line.startswith("UPDATE")]
    assert inserts and updates
    assert inserts[0] == ("INSERT INTO `mysql`.`t` (`id`, `json_col`) VALUES (1, CAST('{\"age\": 24, \"data\": "
                          "\"xxxxxxxxxx\", \"name\": \"Joe\"}' AS JSON));")
    assert all("`name`" not in line and "`age`" not in line for line in inserts + updates)
    code, out, err = run("--sql2", "--replace", JSON_FILE)
    replaces = [line for line in out.splitlines() if line.startswith("REPLACE")]
    assert code == 0 and len(replaces) == 12      # the 6 INSERTs and the 6 UPDATEs of whole documents
    assert all(line.startswith("REPLACE INTO `mysql`.`t` (`id`, `json_col`) VALUES (") for line in replaces)


def test_a_rollback_of_json_diffs_is_refused_because_the_old_values_are_not_in_the_binlog():
    """Refused before anything is written (the pre-pass, output/sql/writable.py): exit 6, stdout empty."""
    code, out, err = run("--sql2", "--rollback", JSON_FILE)
    assert code == 6 and out == ""
    assert "offset 3750" in err and "`json_col`" in err and "old values are not in the binlog" in err


def test_partial_json_updates_with_the_document_in_the_before_image_give_whole_documents_in_every_sql(tmp_path):
    path, expected = partial_update_file(tmp_path)
    schema = tmp_path / "schema.sql"
    schema.write_text("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, doc JSON);")
    docs = {ident: (before, after) for ident, before, after in expected}
    casts = re.compile(r"CAST\('([^']*)' AS JSON\)")
    for options, which, where in ((["--sql2"], 1, "WHERE `id`={};"), (["--sql2", "--replace"], 1, ""),
                                  (["--sql2", "--rollback"], 0, "WHERE `id`={};")):
        code, out, err = run(*options, "--schema", schema, "--schema-database", "d", path)
        assert code == 0, err
        lines = [line for line in out.splitlines() if "`d`.`t`" in line]
        assert len(lines) == 2 and "JSON_" not in out
        for line in lines:
            ident = int(re.search(r"(?:SET `id`=|VALUES \()(\d+)", line).group(1))
            assert [json.loads(c) for c in casts.findall(line)] == [docs[ident][which]]
            assert line.endswith(where.format(ident) or ");")


# ---------------------------------------------------------------- WHERE clauses

def test_sql2_finds_rows_by_a_primary_key_known_only_from_the_create_table_in_the_binlog():
    """hdb_meta.roles: MINIMAL metadata; its CREATE TABLE says PRIMARY KEY (CLUSTER_NAME, INSTANCE_ID,
    ROLE_NAME): the WHERE has those three, no TIMESTAMP, no LIMIT."""
    code, out, err = run("--sql2", CDC_FILE)
    assert code == 0, err
    updates = [line for line in out.splitlines() if line.startswith("UPDATE `hdb_meta`.`roles`")]
    assert updates
    for line in updates:
        where = line.split(" WHERE ", 1)[1]
        assert re.fullmatch(r"`CLUSTER_NAME`='[^']*' AND `INSTANCE_ID`='[^']*' AND `ROLE_NAME`='[^']*';", where)


def _change(columns, nullable, image, primary_key=(), unique_keys=()):
    t = TableDef(table_id=1, schema="d", table="t", columns=tuple(columns), nullable=tuple(nullable),
                 primary_key=primary_key, unique_keys=unique_keys, has_names=True)
    return RowChange("f", 4, 0, 1, None, "d", "t", DELETE, image, None, 0, t)


INT = Column(type_code=3, meta={}, name="a")
TEXT = Column(type_code=15, meta={"max_length": 80}, charset=45, name="b")
DOC = Column(type_code=245, meta={"pack_length": 4}, name="j")


def test_a_not_null_unique_key_finds_the_row_when_there_is_no_primary_key():
    rc = _change([INT, TEXT], [False, True], {"a": 1, "b": "x"}, unique_keys=((1,), (0,)))
    assert statement(rc, SqlOptions()) == "DELETE FROM `d`.`t` WHERE `a`=1;"        # `b` may be NULL


def test_without_a_key_every_column_is_matched_exactly_with_limit_1():
    rc = _change([INT, TEXT], [True, True], {"a": None, "b": "Ab c"})
    assert statement(rc, SqlOptions()) == \
        "DELETE FROM `d`.`t` WHERE `a` IS NULL AND CAST(CONVERT(`b` USING utf8mb4) AS BINARY)=X'41622063' LIMIT 1;"


def test_a_row_with_a_column_no_where_can_match_is_refused_naming_the_column():
    rc = _change([INT, DOC], [True, True], {"a": 1, "j": {"at": JsonOpaque(12, b"\x00" * 8)}})
    with pytest.raises(SqlGenerationError, match=r"column `j` cannot be matched exactly") as exc:
        statement(rc, SqlOptions())
    assert (exc.value.file, exc.value.offset) == ("f", 4)
    keyed = _change([INT, DOC], [False, True], {"a": 1, "j": {"at": JsonOpaque(12, b"\x00" * 8)}}, primary_key=(0,))
    assert statement(keyed, SqlOptions()) == "DELETE FROM `d`.`t` WHERE `a`=1;"


def _keyless_json_binlog(tmp_path, type_code: int):
    """A byte-literal binlog: `d`.`t` (a INT, j JSON) with no key; one rows event (WRITE 30, DELETE 32) of
    two rows, the first with a JSON DATETIME (opaque) no WHERE can match, the second `true`."""
    import struct
    from test_reader_errors import FDE, MAGIC, event
    tid = b"\x2a\x00\x00\x00\x00\x00"
    table_map = tid + b"\x00\x00" + b"\x01d\x00" + b"\x01t\x00" + b"\x02\x03\xf5" + b"\x01\x04" + b"\x03"
    datetime = ((((2024 * 13 + 1) << 5 | 2) << 17 | 3 << 12 | 4 << 6 | 5) << 24)    # 2024-01-02 03:04:05
    doc = (b"\x00" + struct.pack("<HHHHBH", 1, 23, 11, 2, 0x0F, 13) + b"at"         # {"at": <opaque>}
           + b"\x0c\x08" + struct.pack("<q", datetime))
    rows_ = b"".join(b"\x00" + struct.pack("<iI", a, len(d)) + d for a, d in ((1, doc), (2, b"\x04\x01")))
    body = tid + b"\x01\x00" + b"\x02\x00" + b"\x02\x03" + rows_
    (tmp_path / "t.sql").write_text("CREATE TABLE `t` (`a` int, `j` json);\n")
    p = tmp_path / "t.000001"
    p.write_bytes(MAGIC + FDE + event(19, table_map) + event(type_code, body))
    return p, ["--schema", tmp_path / "t.sql", "--schema-database", "d"]


REFUSED = "row 0 of `d`.`t`: column `j` cannot be matched exactly"


def test_a_row_no_where_can_match_is_left_out_with_a_comment_and_a_warning_and_the_script_goes_on(tmp_path):
    p, schema = _keyless_json_binlog(tmp_path, 32)
    code, out, err = run("--sql2", *schema, p)
    assert code == cli.EXIT_WARNINGS
    lines = out.splitlines()
    assert f"-- row not written: {p}: offset 166: {REFUSED}" in "\n".join(lines)
    assert [line for line in lines if line.startswith("DELETE")] == \
        ["DELETE FROM `d`.`t` WHERE `a`=2 AND `j`=CAST('true' AS JSON) LIMIT 1;"]
    assert f"binlog-spec: warning: {p}: offset 166: {REFUSED}" in err and "row not written" in err
    code, out, err = run("--sql", *schema, p)         # the commented script: the same
    assert code == 1 and "-- row not written: " in out and "-- DELETE FROM `d`.`t` WHERE `a`=2" in out


def test_a_rollback_leaves_out_the_row_no_where_can_match_and_undoes_the_others(tmp_path):
    p, schema = _keyless_json_binlog(tmp_path, 30)
    code, out, err = run("--sql2", "--rollback", *schema, p)
    assert code == cli.EXIT_WARNINGS
    body = out.splitlines()[out.splitlines().index("BEGIN;"):]
    assert body[0] == "BEGIN;" and body[-1] == "COMMIT;"
    assert body[1] == "DELETE FROM `d`.`t` WHERE `a`=2 AND `j`=CAST('true' AS JSON) LIMIT 1;"
    assert body[2].startswith(f"-- row not written: {p}: offset 166: {REFUSED}") and len(body) == 4
    assert f"binlog-spec: warning: {p}: offset 166: {REFUSED}" in err
