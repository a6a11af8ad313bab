"""The literals of DECIMAL, DATE, DATETIME, TIMESTAMP, TIME, SET and BIT values that the compiled statement formatter
(output/sql/_cstatements.pyx, its _cliterals.pxi) writes in C: each byte for byte the reference's (output/sql/text.py
`literal`, the literal written here by hand from MySQL's literal syntax), in INSERT, UPDATE and DELETE, forward and
rollback; and the unusual values of those types it hands back to the reference (same text)."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from binlog_spec.output.sql import statements
from binlog_spec.output.sql.statements import SqlOptions, statement
from binlog_spec.output.sql.text import literal
from binlog_spec.rows.column_types import BIT, DATE, DATETIME2, NEWDECIMAL, STRING, TIME2, TIMESTAMP2, Column
from binlog_spec.rows.decoder import DELETE, INSERT, UPDATE

from test_sql_formatter import change, csql, outcome, pure_statement, table  # noqa: F401 - csql: a fixture

UTC = dt.timezone.utc
DEC = Column(NEWDECIMAL, {"precision": 65, "scale": 30}, name="v")
DAY = Column(DATE, {}, name="v")
STAMP = Column(TIMESTAMP2, {"fsp": 6}, name="v")
WHEN = Column(DATETIME2, {"fsp": 6}, name="v")
SPAN = Column(TIME2, {"fsp": 6}, name="v")
TAGS = Column(STRING, {"max_length": 3, "real_type": 248}, charset=45, set_values=(b"z", b"a", b"\xc3\xa9"), name="v")
LOOSE_SET = Column(STRING, {"max_length": 3, "real_type": 248}, charset=45, name="v")   # members unknown (MINIMAL)
BIT10 = Column(BIT, {"bits": 2, "bytes": 1}, name="v")
BIT64 = Column(BIT, {"bits": 0, "bytes": 8}, name="v")
BIT_ANY = Column(BIT, {}, name="v")

# (column, value, its literal written by hand): the values written in C
C_LITERALS = [
    (DEC, Decimal("-1.50"), "-1.50"), (DEC, Decimal("0.00"), "0.00"), (DEC, Decimal("-0"), "-0"),
    (DEC, Decimal("7"), "7"), (DEC, Decimal("0.000001"), "0.000001"),
    (DEC, Decimal("12345678901234567890123456789012345.123456789012345678901234567890"),
     "12345678901234567890123456789012345.123456789012345678901234567890"),
    (DAY, dt.date(2024, 2, 29), "'2024-02-29'"), (DAY, dt.date(5, 1, 1), "'0005-01-01'"),
    (DAY, dt.date(9999, 12, 31), "'9999-12-31'"),
    (WHEN, dt.datetime(2026, 1, 1, 5, 0, 0), "'2026-01-01 05:00:00'"),
    (WHEN, dt.datetime(2026, 1, 1, 5, 0, 0, 5), "'2026-01-01 05:00:00.000005'"),
    (WHEN, dt.datetime(9999, 12, 31, 23, 59, 59, 999999), "'9999-12-31 23:59:59.999999'"),
    (WHEN, dt.datetime(1000, 1, 1), "'1000-01-01 00:00:00'"),
    (STAMP, dt.datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC), "'2023-11-14 22:13:20'"),
    (STAMP, dt.datetime(1970, 1, 1, 0, 0, 1, 120000, tzinfo=UTC), "'1970-01-01 00:00:01.120000'"),
    (SPAN, dt.timedelta(0), "'00:00:00'"), (SPAN, dt.timedelta(hours=-1, seconds=1), "'-00:59:59'"),
    (SPAN, dt.timedelta(hours=838, minutes=59, seconds=59), "'838:59:59'"),
    (SPAN, -dt.timedelta(hours=838, minutes=59, seconds=59), "'-838:59:59'"),
    (SPAN, dt.timedelta(microseconds=-1), "'-00:00:00.000001'"),
    (SPAN, dt.timedelta(days=2, microseconds=500), "'48:00:00.000500'"),
    (TAGS, frozenset(), "''"), (TAGS, frozenset({"a"}), "'a'"), (TAGS, frozenset({"a", "z"}), "'z,a'"),
    (TAGS, frozenset({"é", "z"}), "_utf8mb4 X'7A2CC3A9'"), (LOOSE_SET, frozenset({"b", "a", "c"}), "'a,b,c'"),
    (BIT10, 5, "b'0000000101'"), (BIT10, 0, "b'0000000000'"), (BIT64, 2**64 - 1, "b'" + "1" * 64 + "'"),
    (BIT_ANY, 5, "b'101'"), (BIT_ANY, 0, "b'0'"),
]


def _no_callback(*_args):
    raise AssertionError("a value the formatter writes was handed back to the reference")


@pytest.mark.parametrize("column, value, text", C_LITERALS, ids=[f"{i}" for i in range(len(C_LITERALS))])
def test_each_new_literal_is_written_in_c_as_sql_texts_literal(csql, monkeypatch, column, value, text):
    assert literal(value, column) == text      # the reference, and the hand-written literal agree
    t, keyed = table(column), table(column, key=(1,))
    for op, before, after in ((INSERT, None, {"id": 1, "v": value}), (DELETE, {"id": 1, "v": value}, None),
                              (UPDATE, {"id": 1, "v": value}, {"id": 2, "v": value})):
        for opts in (SqlOptions(), SqlOptions(rollback=True)):
            for tab in (t, keyed):
                rc = change(tab, op, before, after)
                assert outcome(lambda: statement(rc, opts)) == pure_statement(monkeypatch, rc, opts)
    monkeypatch.setattr(statements, "_lit", _no_callback)
    assert statements.formatter(t, SqlOptions()).insert({"id": 1, "v": value}) == \
        f"INSERT INTO `d`.`t` VALUES (1, {text});"
    assert statements.formatter(t, SqlOptions()).update({"id": 1, "v": 0}, {"id": 1, "v": value}, False) == \
        f"UPDATE `d`.`t` SET `id`=1, `v`={text} WHERE `id`=1;"
    assert statements.formatter(keyed, SqlOptions()).delete({"id": 1, "v": value}) == \
        f"DELETE FROM `d`.`t` WHERE `v`={text};"


# values of those types the formatter leaves to the reference (its text: hand-written)
CALLED = [
    (DEC, Decimal("0E-10"), "0.0000000000"), (DEC, Decimal("1E+3"), "1000"),
    (WHEN, dt.datetime(1, 1, 1, 0, 0, 0, 5), "'1-01-01 00:00:00.000005'"),      # strftime's %Y below 1000
    (STAMP, dt.datetime(2023, 11, 15, 0, 13, 20, tzinfo=dt.timezone(dt.timedelta(hours=2))), "'2023-11-14 22:13:20'"),
    (SPAN, dt.timedelta(days=10**8, seconds=1), "'2400000000:00:01'"),
    (TAGS, frozenset({"a", "q"}), "'a,q'"),             # a member the column does not list: after the others
    (TAGS, frozenset({"a", b"\xff"}), "X'612CFF'"),      # a member that did not decode: the SET as bytes
    (BIT10, True, "b'0000000001'"), (BIT_ANY, 2**70, "b'1" + "0" * 70 + "'"),
]


@pytest.mark.parametrize("column, value, text", CALLED, ids=[f"{i}" for i in range(len(CALLED))])
def test_unusual_values_are_left_to_the_reference(csql, monkeypatch, column, value, text):
    assert literal(value, column) == text
    t = table(column)
    assert statements.formatter(t, SqlOptions()).insert({"id": 1, "v": value}) == \
        f"INSERT INTO `d`.`t` VALUES (1, {text});"
    for opts in (SqlOptions(), SqlOptions(rollback=True)):
        for rc in (change(t, INSERT, None, {"id": 1, "v": value}),
                   change(t, UPDATE, {"id": 1, "v": None}, {"id": 1, "v": value}),
                   change(table(column, key=(1,)), DELETE, {"id": 1, "v": value}, None)):
            assert outcome(lambda: statement(rc, opts)) == pure_statement(monkeypatch, rc, opts)
