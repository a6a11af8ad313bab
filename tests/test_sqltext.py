"""SQL literals and identifiers: exact and impossible to break out of."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import sqlglot

from binlog_spec.sqltext import literal, quote_identifier, quote_table, string_literal
from binlog_spec.values import Column, JsonOpaque

BIT17 = Column(type_code=16, meta={"bits": 1, "bytes": 2})
JSON = Column(type_code=245, meta={"pack_length": 4})


def test_identifiers_double_their_backticks():
    assert quote_identifier("we`ird") == "`we``ird`"
    assert quote_table("d`b", "t") == "`d``b`.`t`"


def test_strings_escape_every_character_mysql_needs():
    assert string_literal("a'b\"c\\d\ne\rf\0g\x1ah") == "'a\\'b\\\"c\\\\d\\ne\\rf\\0g\\Zh'"


def test_a_value_cannot_end_the_statement_or_a_comment():
    evil = "x'); DROP TABLE t; -- */ /*!*/;"
    stmt = f"INSERT INTO t VALUES ({literal(evil)})"
    (parsed,) = sqlglot.parse(stmt, read="mysql")
    assert isinstance(parsed, sqlglot.exp.Insert)
    assert stmt.count("'") - stmt.count("\\'") == 2  # one quoted string only


def test_exact_literals_by_type():
    assert literal(None) == "NULL"
    assert literal(18446744073709551615) == "18446744073709551615"
    assert literal(Decimal("-0.000000000000000000000000000001")) == "-0.000000000000000000000000000001"
    assert literal(0.1) == "0.1" and literal(-1.5e-10) == "-1.5e-10"
    assert literal(b"\x00\xff") == "X'00FF'" and literal(b"") == "''"
    assert literal(dt.date(2026, 2, 28)) == "'2026-02-28'"
    assert literal(dt.datetime(2026, 1, 1, 9, 0, 0, 125000)) == "'2026-01-01 09:00:00.125000'"
    aware = dt.datetime(2038, 1, 19, 3, 14, 7, tzinfo=dt.timezone.utc)
    assert literal(aware) == "'2038-01-19 03:14:07'"
    assert literal(-dt.timedelta(hours=838, minutes=59, seconds=59)) == "'-838:59:59'"
    assert literal(dt.timedelta(microseconds=500000)) == "'00:00:00.500000'"
    assert literal("0000-00-00") == "'0000-00-00'"
    assert literal(5, BIT17) == "b'00000000000000101'"
    assert literal({"a": [1, None]}, JSON) == "CAST('{\\\"a\\\": [1, null]}' AS JSON)"
    assert literal({"a": 1}, JSON, mysql=False) == "'{\\\"a\\\": 1}'"
    assert literal({"srid": 4326, "wkb": b"\x01"}) == "ST_GeomFromWKB(X'01', 4326)"
    assert literal(JsonOpaque(15, b"U")) == "'base64:type15:VQ=='"
