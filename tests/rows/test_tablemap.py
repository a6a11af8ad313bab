"""TABLE_MAP fields to column definitions: signs, charsets, names, members, keys."""
from __future__ import annotations

from binlog_spec.rows.tablemap import TableDef

GEOMETRY, VARCHAR, LONG, STRING = 255, 15, 3, 254


def fields(optional):
    return {"table_id": 7, "schema": "d", "table": "t",
            "column_types": [LONG, GEOMETRY, VARCHAR, STRING],
            "column_metadata": [{}, {"pack_length": 4}, {"max_length": 40},
                                {"byte0": 0xF7, "byte1": 1, "real_type": 0xF7, "max_length": 1}],
            "null_bitmap": b"\x0e", "optional_metadata": optional}


def test_default_charset_exceptions_count_geometry_only_for_mariadb():
    """DEFAULT_CHARSET: default 255, exception (character column #1, charset 8)."""
    om = [{"field_type": "DEFAULT_CHARSET", "value": {"default_charset": 255,
                                                      "exceptions": [{"first": 1, "second": 8}]}}]
    mysql = TableDef.from_fields(fields(om), mariadb=False)
    maria = TableDef.from_fields(fields(om), mariadb=True)
    # MySQL counts only VARCHAR as a character column here: #1 does not exist, VARCHAR keeps 255.
    assert [c.charset for c in mysql.columns] == [None, None, 255, None]
    # MariaDB counts GEOMETRY (#0) and VARCHAR (#1): the exception lands on the VARCHAR.
    assert [c.charset for c in maria.columns] == [None, 255, 8, None]


def test_signedness_names_members_visibility_and_key():
    om = [{"field_type": "SIGNEDNESS", "value": b"\x80"},
          {"field_type": "COLUMN_NAME", "value": ["id", "g", "v", "e"]},
          {"field_type": "ENUM_STR_VALUE", "value": [{"num_values": 2, "values": [b"a", b"b"]}]},
          {"field_type": "SIMPLE_PRIMARY_KEY", "value": [0]},
          {"field_type": "COLUMN_VISIBILITY", "value": b"\xb0"}]
    t = TableDef.from_fields(fields(om))
    assert t.columns[0].unsigned is True and t.names == ["id", "g", "v", "e"]
    assert t.columns[3].enum_values == (b"a", b"b")
    assert t.primary_key == (0,) and t.visible == (True, False, True, True)
    assert t.nullable == (False, True, True, True)


def test_without_metadata_columns_are_numbered_and_signed():
    t = TableDef.from_fields(fields([]))
    assert t.names == ["@1", "@2", "@3", "@4"]
    assert not t.has_names and not t.has_signedness and t.columns[0].unsigned is False


YEAR, SHORT = 13, 2


def year_fields(signedness: bytes):
    """(id INT, y YEAR, s SMALLINT, n INT UNSIGNED), as in the issue's reproducer."""
    return {"table_id": 7, "schema": "d", "table": "t", "column_types": [LONG, YEAR, SHORT, LONG],
            "column_metadata": [{}, {}, {}, {}], "null_bitmap": b"\x0e",
            "optional_metadata": [{"field_type": "SIGNEDNESS", "value": signedness}]}


def test_mariadb_signedness_gives_year_a_bit():
    """MariaDB 10.11 writes 0x50 for the reproducer: bits for id, y, s, n (Field_year is a Field_num)."""
    t = TableDef.from_fields(year_fields(b"\x50"), mariadb=True)
    assert [c.unsigned for c in t.columns] == [False, True, False, True]


def test_mysql_signedness_skips_year():
    """MySQL's is_numeric_type() has no YEAR: 0x20 is the bits of id, s, n (n unsigned)."""
    t = TableDef.from_fields(year_fields(b"\x20"), mariadb=False)
    assert [c.unsigned for c in t.columns] == [False, False, False, True]
