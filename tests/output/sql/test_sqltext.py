"""SQL literals and identifiers: exact and impossible to break out of."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import sqlglot

from binlog_spec.output.sql.text import literal, string_literal
from binlog_spec.rows.statement_text import quote_identifier, quote_table
from binlog_spec.rows.column_types import Column
from binlog_spec.rows.json.json_binary import JsonOpaque

BIT17 = Column(type_code=16, meta={"bits": 1, "bytes": 2})
JSON = Column(type_code=245, meta={"pack_length": 4})


def test_identifiers_double_their_backticks():
    assert quote_identifier("we`ird") == "`we``ird`"
    assert quote_table("d`b", "t") == "`d``b`.`t`"


def test_printable_ascii_strings_are_quoted_with_doubled_quotes_and_no_backslash_escape():
    assert string_literal("O'Reilly \"q\" */ /*!*/;") == "'O''Reilly \"q\" */ /*!*/;'"
    assert string_literal("") == "''"


def test_other_strings_are_utf8mb4_hex_whatever_the_connection_charset():
    """Backslashes, control bytes and non-ASCII text: hex digits with an introducer, which neither
    NO_BACKSLASH_ESCAPES nor a multi-byte client charset (gbk, sjis) can reinterpret."""
    assert string_literal("a'b\"c\\d\ne\rf\0g\x1ah") == "_utf8mb4 X'61276222635C640A650D6600671A68'"
    assert string_literal("Björn 🎉") == "_utf8mb4 X'426AC3B6726E20F09F8E89'"


def test_a_value_cannot_end_the_statement_or_a_comment():
    evil = "x'); DROP TABLE t; -- */ /*!*/;"
    stmt = f"INSERT INTO t VALUES ({literal(evil)})"
    (parsed,) = sqlglot.parse(stmt, read="mysql")
    assert isinstance(parsed, sqlglot.exp.Insert)
    (value,) = parsed.expression.expressions[0].expressions
    assert value.this == evil


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
    assert literal({"a": [1, None]}, JSON) == "CAST('{\"a\": [1, null]}' AS JSON)"
    assert literal("x", JSON) == "CAST('\"x\"' AS JSON)"   # a JSON string scalar
    assert literal({"a": 1}, JSON, mysql=False) == "'{\"a\": 1}'"
    assert literal({"srid": 4326, "wkb": b"\x01"}) == "ST_GeomFromWKB(X'01', 4326)"
    assert literal(JsonOpaque(15, b"U")) == "'base64:type15:VQ=='"


def test_json_diffs_are_mysql_functions_nested_in_order_as_mysqlbinlog_prints_them():
    """print_json_diff (sql/log_event.cc): one call per run of the same function, the first run
    innermost; an INSERT at a path ending in ] is JSON_ARRAY_INSERT; REMOVE has no value."""
    from binlog_spec.output.sql.text import json_diff_sql
    from binlog_spec.rows.json.json_binary import JsonDiff
    diffs = (JsonDiff("REPLACE", "$.a", 1), JsonDiff("REPLACE", '$."b c"', "x"),
             JsonDiff("INSERT", "$.c[1]", [1]), JsonDiff("INSERT", "$.d", None),
             JsonDiff("REMOVE", "$.e", None), JsonDiff("REPLACE", "$.f", True))
    assert json_diff_sql("`doc`", diffs) == (
        "JSON_REPLACE(JSON_REMOVE(JSON_INSERT(JSON_ARRAY_INSERT(JSON_REPLACE(`doc`, "
        "'$.a', CAST('1' AS JSON), '$.\"b c\"', CAST('\"x\"' AS JSON)), "
        "'$.c[1]', CAST('[1]' AS JSON)), '$.d', CAST('null' AS JSON)), '$.e'), '$.f', CAST('true' AS JSON))")
    assert json_diff_sql("`doc`", ()) == "`doc`"


def test_json_diffs_are_never_written_as_a_value():
    import pytest
    from binlog_spec.rows.json.json_binary import JsonDiff, JsonDiffs
    with pytest.raises(ValueError):
        literal(JsonDiffs([JsonDiff("REPLACE", "$.a", 1)]), JSON)


def test_where_conditions_match_the_stored_value_exactly():
    import pytest
    from binlog_spec.output.sql.text import InexactMatch, match
    text = Column(type_code=15, meta={"max_length": 80}, charset=45)
    blob = Column(type_code=252, meta={"pack_length": 2}, charset=63)
    geometry = Column(type_code=255, meta={"pack_length": 4})
    double = Column(type_code=5, meta={"pack_length": 8})
    timestamp = Column(type_code=17, meta={"fsp": 3})
    assert match("`c`", None, text) == "`c` IS NULL"
    # bytes compared, not collation-equal strings ('ABC', 'abc ')
    assert match("`c`", "abc", text) == "CAST(CONVERT(`c` USING utf8mb4) AS BINARY)=X'616263'"
    assert match("`c`", b"\xff", text) == "CAST(`c` AS BINARY)=X'FF'"
    assert match("`b`", b"\x00\x01", blob) == "CAST(`b` AS BINARY)=X'0001'"
    assert match("`g`", {"srid": 4326, "wkb": b"\x01\x02"}, geometry) == "CAST(`g` AS BINARY)=X'E61000000102'"
    assert match("`d`", 0.1, double) == "`d`=0.1"
    assert match("`f`", -1.4999999853326784e-10, Column(type_code=4, meta={"pack_length": 4})) \
        == "`f`=-1.4999999853326784e-10"
    aware = dt.datetime(2038, 1, 19, 3, 14, 7, 1000, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert match("`ts`", aware, timestamp) == "`ts`='2038-01-19 01:14:07.001000'"   # UTC
    assert match("`j`", {"a": [1, "é"]}, JSON) == "`j`=CAST(_utf8mb4 X'7B2261223A205B312C2022C3A9225D7D' AS JSON)"
    assert match("`b17`", 5, BIT17) == "`b17`=b'00000000000000101'"
    with pytest.raises(InexactMatch):
        match("`j`", {"d": dt.date(2020, 1, 1)}, JSON)     # an opaque DATE: JSON text makes a string of it
    with pytest.raises(InexactMatch):
        match("`j`", [JsonOpaque(15, b"U")], JSON)


def test_a_set_with_a_member_that_does_not_decode_is_written_as_the_bytes_the_column_stores():
    """Found by the mutation run: a SET member kept as bytes (not text in the column's charset)
    made the SQL writer raise TypeError. The literal is the stored bytes, the text members encoded
    back in the column's charset (latin1, collation 8), in the order the column defines them."""
    col = Column(254, {"real_type": 248, "pack_length": 1}, charset=8, set_values=(b"\xe9t\xe9", b"\xff\xfe", b"b"))
    assert literal(frozenset({"b", b"\xff\xfe", "été"}), col) == "X'E974E92CFFFE2C62'"
    assert literal(frozenset({"b", "été"}), col) == "_utf8mb4 X'C3A974C3A92C62'"
