"""The compiled statement formatter (output/sql/_cstatements.pyx, made per table by statements.formatter) against the
reference builders of output/sql/statements.py and the literals of output/sql/text.py: every literal type it
writes in C, by hand-written literal, in INSERT, DELETE and UPDATE, forward and rollback; the values it
hands back to sql_text.literal; and every row shape it leaves to the builders (same text, same error).

The extension is built by `pip install .` (or `make setup`). When it is not built these tests skip, except
under CI (the CI environment variable set), where they fail; tests/test_compiled_core.py also compares
both cores over every corpus, fixture and fuzz file.
"""
from __future__ import annotations

import datetime as dt
import importlib
import os
from decimal import Decimal

import pytest

from binlog_spec.errors import RowRefusedError, SqlGenerationError
from binlog_spec.output.sql import statements
from binlog_spec.output.sql.text import literal
from binlog_spec.output.sql.statements import SqlOptions, statement
from binlog_spec.rows.decoder import DELETE, INSERT, UPDATE
from binlog_spec.rows.column_types import (BIT, BLOB, DATE, DATETIME2, DOUBLE, JSON, LONG, LONGLONG, NEWDECIMAL,
                                           STRING, TIME2, TIMESTAMP2, VARCHAR, Column)
from binlog_spec.rows.decoder import RowChange
from binlog_spec.rows.json.json_binary import JsonDiff, JsonDiffs
from binlog_spec.rows.tablemap import TableDef


def _compiled_module():
    try:
        return importlib.import_module("binlog_spec.output.sql._cstatements")
    except ImportError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"the compiled statement formatter is not built under CI: {exc}")
        pytest.skip(f"the compiled statement formatter is not built: {exc}")


@pytest.fixture
def csql(monkeypatch):
    module = _compiled_module()
    monkeypatch.setattr(statements, "csql", module)
    return module


def pure_statement(monkeypatch, rc, opts):
    """The reference builders' text, or the error they raise."""
    with monkeypatch.context() as m:
        m.setattr(statements, "csql", None)
        return outcome(lambda: statement(rc, opts))


def outcome(make):
    try:
        return make()
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return ("error", type(exc).__name__, str(exc))


ID = Column(LONG, {}, name="id")


def table(*columns, key=(0,), schema="d", name="t", **kw):
    return TableDef(table_id=1, schema=schema, table=name, columns=(ID, *columns),
                    nullable=(False,) * (len(columns) + 1), primary_key=key, has_names=True, **kw)


def change(t, op, before=None, after=None):
    return RowChange("f", 4, 0, 1, None, t.schema, t.table, op, before, after, 0, t)


UTF8, BINARY = 45, 63
TEXT = Column(VARCHAR, {"max_length": 80}, charset=UTF8, name="v")
BYTES = Column(BLOB, {"pack_length": 2}, charset=BINARY, name="v")
INT = Column(LONGLONG, {}, name="v")
REAL = Column(DOUBLE, {}, name="v")

# (column, value, its literal written by hand): every value the formatter writes in C
C_LITERALS = [
    (TEXT, None, "NULL"), (INT, None, "NULL"), (Column(JSON, {"pack_length": 4}, name="v"), None, "NULL"),
    (INT, 0, "0"), (INT, 7, "7"), (INT, -1, "-1"), (INT, 2**63 - 1, "9223372036854775807"),
    (INT, -2**63, "-9223372036854775808"), (INT, 2**64 - 1, "18446744073709551615"),
    (INT, -2**70, "-1180591620717411303424"), (INT, 10**30, "1" + "0" * 30),
    (TEXT, 123, "123"),              # an int in a text column is still an int literal
    (TEXT, "", "''"), (TEXT, "abc", "'abc'"), (TEXT, "it's", "'it''s'"), (TEXT, "''", "''''''"),
    (TEXT, " ~!\"#[]{}`", "' ~!\"#[]{}`'"),
    (TEXT, "a\\b", "_utf8mb4 X'615C62'"), (TEXT, "é", "_utf8mb4 X'C3A9'"), (TEXT, "a\nb", "_utf8mb4 X'610A62'"),
    (TEXT, "\x7f", "_utf8mb4 X'7F'"), (TEXT, "\x1f", "_utf8mb4 X'1F'"), (TEXT, "\u0100", "_utf8mb4 X'C480'"),
    (TEXT, "x\U0001F600", "_utf8mb4 X'78F09F9880'"), (TEXT, "\udc80", "_utf8mb4 X'EDB280'"),
    (TEXT, "'é'", "_utf8mb4 X'27C3A927'"),
    (BYTES, b"", "''"), (BYTES, b"\x00\xff\x10", "X'00FF10'"), (BYTES, b"'", "X'27'"),
    (REAL, 1.5, "1.5"), (REAL, -0.0, "-0.0"), (REAL, 1e16, "1e+16"), (REAL, 0.1, "0.1"), (REAL, 5e-324, "5e-324"),
]


@pytest.mark.parametrize("column, value, text", C_LITERALS, ids=[f"{i}" for i in range(len(C_LITERALS))])
def test_each_literal_the_formatter_writes_is_sql_texts_literal(csql, monkeypatch, column, value, text):
    assert literal(value, column) == text      # the reference, and the hand-written literal agree
    t = table(column)
    fast = statements.formatter(t, SqlOptions())
    assert fast is not None
    assert fast.insert({"id": 1, "v": value}) == f"INSERT INTO `d`.`t` VALUES (1, {text});"
    assert fast.update({"id": 1, "v": 0}, {"id": 1, "v": value}, False) == \
        f"UPDATE `d`.`t` SET `id`=1, `v`={text} WHERE `id`=1;"
    keyed = table(column, key=(1,))
    if value is not None:
        assert statements.formatter(keyed, SqlOptions()).delete({"id": 1, "v": value}) == \
            f"DELETE FROM `d`.`t` WHERE `v`={text};"
    for op, before, after in ((INSERT, None, {"id": 1, "v": value}), (DELETE, {"id": 1, "v": value}, None),
                              (UPDATE, {"id": 1, "v": value}, {"id": 2, "v": value})):
        for opts in (SqlOptions(), SqlOptions(rollback=True)):
            rc = change(t, op, before, after)
            assert outcome(lambda: statement(rc, opts)) == pure_statement(monkeypatch, rc, opts)


# values the formatter hands to sql_text.literal (through statements._lit), or writes as it does (the types of
# test_sql_formatter_literals.py): the same text
CALLED = [
    (INT, True), (INT, False), (Column(NEWDECIMAL, {"precision": 5, "scale": 2}, name="v"), Decimal("-1.50")),
    (Column(DATE, {}, name="v"), dt.date(2024, 2, 29)), (Column(DATE, {}, name="v"), "0000-00-00"),
    (Column(DATETIME2, {"fsp": 6}, name="v"), dt.datetime(1, 1, 1, 0, 0, 0, 5)),
    (Column(TIMESTAMP2, {"fsp": 0}, name="v"), dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=dt.timezone.utc)),
    (Column(TIME2, {"fsp": 0}, name="v"), dt.timedelta(hours=-1, seconds=1)),
    (Column(JSON, {"pack_length": 4}, name="v"), {"a": [1, "é"]}), (Column(JSON, {"pack_length": 4}, name="v"), "x"),
    (Column(JSON, {"pack_length": 4}, name="v"), 5),
    (Column(BIT, {"bits": 1, "bytes": 2}, name="v"), 5), (Column(BIT, {"bits": 3, "bytes": 0}, name="v"), "a"),
    (Column(STRING, {"max_length": 3, "real_type": 248}, charset=UTF8, set_values=(b"a", b"b"), name="v"),
     frozenset({"b", "a"})),
    (Column(LONG, {}, name="v"), bytearray(b"\x01")),
]


@pytest.mark.parametrize("column, value", CALLED, ids=[f"{i}" for i in range(len(CALLED))])
def test_values_handed_back_to_literal_give_the_reference_text(csql, monkeypatch, column, value):
    t = table(column)
    expected = literal(value, column)
    assert statements.formatter(t, SqlOptions()).insert({"id": 1, "v": value}) == \
        f"INSERT INTO `d`.`t` VALUES (1, {expected});"
    for opts in (SqlOptions(), SqlOptions(mysql_json=False), SqlOptions(rollback=True)):
        for rc in (change(t, INSERT, None, {"id": 1, "v": value}),
                   change(t, UPDATE, {"id": 1, "v": None}, {"id": 1, "v": value}),
                   change(table(column, key=(1,)), DELETE, {"id": 1, "v": value}, None)):
            assert outcome(lambda: statement(rc, opts)) == pure_statement(monkeypatch, rc, opts)


def test_a_value_without_a_literal_raises_the_references_error(csql, monkeypatch):
    t = table(REAL)
    for value in (float("nan"), float("inf"), object()):
        rc = change(t, INSERT, None, {"id": 1, "v": value})
        got = outcome(lambda: statement(rc, SqlOptions()))
        assert got == pure_statement(monkeypatch, rc, SqlOptions()) and got[0] == "error"


SHAPES = {
    "complete insert": (SqlOptions(complete_insert=True), {}),
    "replace": (SqlOptions(replace=True), {}),
    "replace, complete": (SqlOptions(replace=True, complete_insert=True), {}),
    "rewrite db": (SqlOptions(rewrite_db={"d": "e`f"}), {}),
    "generated column": (SqlOptions(), {"generated": (False, True, False)}),
    "invisible column": (SqlOptions(), {"visible": (True, True, False)}),
    "rollback": (SqlOptions(rollback=True), {}),
    "rollback, replace": (SqlOptions(rollback=True, replace=True), {}),
}

W = Column(VARCHAR, {"max_length": 80}, charset=UTF8, name="w")
IMAGES = [
    {"id": 1, "v": 2, "w": "x"}, {"id": 1, "v": None, "w": None},
    {"id": 1, "w": "x"},                      # MINIMAL/NOBLOB: a column missing
    {"id": None, "v": 2, "w": "x"},           # the key NULL: every column in the WHERE
    {"w": "x", "id": 3, "v": 2},              # the dict's order is the SET clause's
    {"id": 1, "v": 2, "w": "x", "extra": 9},  # a name the table does not have
]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_every_statement_shape_is_the_builders_text(csql, monkeypatch, shape):
    opts, kw = SHAPES[shape]
    for key in ((0,), (), (0, 2)):
        t = TableDef(table_id=1, schema="d", table="t", columns=(ID, INT, W), nullable=(False, True, True),
                     primary_key=key, has_names=True, **kw)
        for a in IMAGES:
            for b in IMAGES:
                for rc in (change(t, INSERT, None, a), change(t, DELETE, a, None),
                           change(t, UPDATE, b, a)):
                    assert outcome(lambda: statement(rc, opts)) == pure_statement(monkeypatch, rc, opts), (key, a, b)


def test_the_common_case_is_written_by_the_compiled_formatter(csql):
    t = table(INT, W)
    fast = statements.formatter(t, SqlOptions())
    assert isinstance(fast, csql.RowFormatter) and statements.formatter(t, SqlOptions()) is not fast  # per options
    opts = SqlOptions(complete_insert=True)
    assert statements.formatter(t, opts) is statements.formatter(t, opts)                            # made once
    image = {"id": 1, "v": 2, "w": "x"}
    assert fast.insert(image) == "INSERT INTO `d`.`t` VALUES (1, 2, 'x');"
    assert statements.formatter(t, opts).insert(image) == "INSERT INTO `d`.`t` (`id`, `v`, `w`) VALUES (1, 2, 'x');"
    assert fast.delete(image) == "DELETE FROM `d`.`t` WHERE `id`=1;"
    assert fast.update(image, {"w": "y"}, False) == "UPDATE `d`.`t` SET `w`='y' WHERE `id`=1;"
    # not the common case: None, and the builders write it
    assert fast.insert({"id": 1, "w": "x"}) is None
    assert fast.delete({"id": None, "v": 2, "w": "x"}) is None and fast.delete({"v": 2}) is None
    assert fast.update(image, {"w": "y"}, True) is None        # a rollback needs the whole row
    assert statements.formatter(table(INT, key=()), SqlOptions()).delete(image) is None


def test_tables_the_formatter_does_not_take_are_left_to_the_builders(csql, monkeypatch):
    unnamed = TableDef(table_id=1, schema="d", table="t", columns=(Column(LONG, {}), Column(LONG, {})),
                       nullable=(False, False), primary_key=(0,))
    accented = table(INT, name="tablé")
    assert statements.formatter(unnamed, SqlOptions()) is None
    assert statements.formatter(accented, SqlOptions()) is None
    assert statements.formatter(table(INT), SqlOptions(rewrite_db={"d": "é"})) is None
    no_such_key = table(INT, key=(5,))
    assert statements.formatter(no_such_key, SqlOptions()) is None
    for t, image in ((unnamed, {"@1": 1, "@2": 2}), (accented, {"id": 1, "v": 2}), (no_such_key, {"id": 1, "v": 2})):
        for opts in (SqlOptions(), SqlOptions(rollback=True)):
            rc = change(t, INSERT, None, image)
            assert outcome(lambda: statement(rc, opts)) == pure_statement(monkeypatch, rc, opts)
    assert statement(change(accented, INSERT, None, {"id": 1, "v": 2}), SqlOptions()) == \
        "INSERT INTO `d`.`tablé` VALUES (1, 2);"


def test_a_callback_text_that_is_not_ascii_is_left_to_the_builders(csql):
    fast = csql.RowFormatter([csql.KINDS["value"]], "INSERT INTO `t` VALUES (", [(0, "a")], "DELETE FROM `t` WHERE ",
                             [(0, "a", "`a`=")], "UPDATE `t` SET ", {"a": (0, "`a`=")}, lambda i, v: "'é'",
                             lambda i, n, v: "'é'")
    assert fast.insert({"a": bytearray(b"\x01")}) is None and fast.delete({"a": bytearray(b"\x01")}) is None
    assert fast.update({"a": 1}, {"a": bytearray(b"\x01")}, False) is None
    assert fast.insert({"a": 1}) == "INSERT INTO `t` VALUES (1);"      # and the buffer is clean after
    with pytest.raises(ValueError):
        csql.RowFormatter([0], "INSERT INTO `é` VALUES (", [], "", [], "", {}, None, None)


def test_json_diffs_and_refusals_are_the_builders(csql, monkeypatch):
    doc = Column(JSON, {"pack_length": 4}, name="v")
    t = table(doc)
    diffs = JsonDiffs((JsonDiff("REPLACE", "$.a", 1),))
    update = change(t, UPDATE, {"id": 1}, {"id": 1, "v": diffs})
    assert statement(update, SqlOptions()) == "UPDATE `d`.`t` SET `id`=1, `v`=JSON_REPLACE(`v`, '$.a', " \
                                              "CAST('1' AS JSON)) WHERE `id`=1;"
    for opts in (SqlOptions(), SqlOptions(rollback=True), SqlOptions(replace=True)):
        assert outcome(lambda: statement(update, opts)) == pure_statement(monkeypatch, update, opts)
    assert outcome(lambda: statement(update, SqlOptions(rollback=True)))[1] == "SqlGenerationError"
    # no key, a value no condition matches: the row is refused, as by the builders
    opaque = change(table(REAL, key=()), DELETE, {"id": 1, "v": float("nan")}, None)
    with pytest.raises(RowRefusedError):
        statement(opaque, SqlOptions())
    assert outcome(lambda: statement(opaque, SqlOptions())) == pure_statement(monkeypatch, opaque, SqlOptions())
    # the undo of a DELETE of a partial image: the image is checked before any value
    partial = change(table(REAL, W), DELETE, {"id": 1, "v": float("nan")}, None)
    got = outcome(lambda: statement(partial, SqlOptions(rollback=True)))
    assert got == pure_statement(monkeypatch, partial, SqlOptions(rollback=True))
    assert got[1] == SqlGenerationError.__name__


def test_an_events_rows_are_written_up_to_the_first_the_formatter_does_not_take(csql, monkeypatch):
    t = table(REAL, W)
    images = [{"id": 1, "v": 1.0, "w": "a"}, {"id": 2, "v": 2.0, "w": "b"},
              {"id": 3, "w": "c"},                        # MINIMAL: the builders name the columns
              {"id": 4, "v": 4.0, "w": "d"}, {"id": 5, "v": float("nan"), "w": "e"}, {"id": 6, "v": 6.0, "w": "f"}]
    # how many rows the formatter writes: up to the partial image (an INSERT, or the whole row a rollback
    # of an UPDATE needs), the NaN (in an INSERT or SET), none for an UPDATE under REPLACE; a DELETE needs
    # the key only
    stops = {INSERT: (2, 6, 2), DELETE: (6, 2, 6), UPDATE: (4, 2, 0)}
    for op in (INSERT, DELETE, UPDATE):
        for opts, stop in zip((SqlOptions(), SqlOptions(rollback=True), SqlOptions(replace=True)), stops[op]):
            changes = [change(t, op, image if op != INSERT else None, image if op != DELETE else None)
                       for image in images]
            texts, done = statements.leading_statements(changes, opts)
            assert len(texts) == done
            expected = [pure_statement(monkeypatch, rc, opts) for rc in changes]
            assert texts == expected[:done]
            assert done == stop, (op, opts)
            rest = [outcome(lambda: statement(rc, opts)) for rc in changes[done:]]
            assert texts + rest == expected
    # another table, or another operation, in the list: written from there by `statement`
    rc = change(t, INSERT, None, images[0])
    assert statements.leading_statements([rc, change(table(REAL, W), INSERT, None, images[1])], SqlOptions())[1] == 1
    assert statements.leading_statements([rc, change(t, DELETE, images[1], None)], SqlOptions())[1] == 1
    with monkeypatch.context() as m:
        m.setattr(statements, "csql", None)
        assert statements.leading_statements([rc], SqlOptions()) == ([], 0)


def test_a_rollback_stops_at_a_partial_json_update(csql, monkeypatch):
    t = table(Column(JSON, {"pack_length": 4}, name="v"))
    diffs = JsonDiffs((JsonDiff("REMOVE", "$.a", None),))
    changes = [change(t, UPDATE, {"id": 1, "v": {"a": 1}}, {"id": 1, "v": {}}),
               change(t, UPDATE, {"id": 2}, {"id": 2, "v": diffs})]
    texts, done = statements.leading_statements(changes, SqlOptions(rollback=True))
    assert done == 1 and texts == ["UPDATE `d`.`t` SET `id`=1, `v`=CAST('{\"a\": 1}' AS JSON) WHERE `id`=1;"]
    with pytest.raises(SqlGenerationError, match="partial"):
        statement(changes[1], SqlOptions(rollback=True))


def test_a_large_value_and_a_reentrant_call_are_written_right(csql):
    big = "x" * (3 << 20)
    t = table(TEXT)
    fast = statements.formatter(t, SqlOptions())
    assert fast.insert({"id": 1, "v": big}) == f"INSERT INTO `d`.`t` VALUES (1, '{big}');"
    assert fast.insert({"id": 2, "v": "y"}) == "INSERT INTO `d`.`t` VALUES (2, 'y');"
    inner = []

    def literal_calling_back(i, value):     # another statement asked for while one is being written
        inner.append(fast2.insert({"a": 1}))
        return "7"
    fast2 = csql.RowFormatter([csql.KINDS["value"]], "INSERT INTO `t` VALUES (", [(0, "a")], "DELETE FROM `t` WHERE ",
                              [(0, "a", "`a`=")], "UPDATE `t` SET ", {"a": (0, "`a`=")}, literal_calling_back, None)
    assert fast2.insert({"a": bytearray(b"\x07")}) == "INSERT INTO `t` VALUES (7);" and inner == [None]
