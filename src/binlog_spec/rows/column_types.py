"""Column types: the binlog type codes (MySQL's enum_field_types, taken from the spec's `column_type`
enum), their names, and `Column`, one column of a TABLE_MAP as the value decoders see it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from binlog_spec.binlog import spec


@dataclass(frozen=True)
class Column:
    type_code: int            # binlog column type (enum_field_types); for STRING meta real_type picks ENUM/SET
    meta: dict                # per-column TABLE_MAP metadata as spec.py gives it
    unsigned: bool = False
    charset: int | None = None        # collation id; None = unknown
    enum_values: tuple[bytes, ...] | None = None
    set_values: tuple[bytes, ...] | None = None
    name: str | None = None


Decoder = Callable[[bytes, int, Column], "tuple[object, int]"]

# --------------------------------------------------------------------------
# Type codes: the spec's `column_type` enum (include/field_types.h), as plain ints for the decoders

CT = spec.ColumnType

DECIMAL, TINY, SHORT, LONG, FLOAT, DOUBLE, NULL, TIMESTAMP, LONGLONG, INT24 = map(int, (
    CT.decimal, CT.tiny, CT.short, CT.long, CT.float, CT.double, CT.null, CT.timestamp, CT.longlong, CT.int24))
DATE, TIME, DATETIME, YEAR, NEWDATE, VARCHAR, BIT, TIMESTAMP2, DATETIME2, TIME2 = map(int, (
    CT.date, CT.time, CT.datetime, CT.year, CT.newdate, CT.varchar, CT.bit, CT.timestamp2, CT.datetime2,
    CT.time2))
TYPED_ARRAY = int(CT.typed_array)
BLOB_COMPRESSED, VARCHAR_COMPRESSED = map(int, (CT.blob_compressed, CT.varchar_compressed))  # MariaDB, rows only
VECTOR, INVALID, BOOL, JSON, NEWDECIMAL, ENUM, SET = map(int, (
    CT.vector, CT.invalid, CT.bool, CT.json, CT.newdecimal, CT.enum, CT.set))
TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, BLOB, VAR_STRING, STRING, GEOMETRY = map(int, (
    CT.tiny_blob, CT.medium_blob, CT.long_blob, CT.blob, CT.var_string, CT.string, CT.geometry))
#: The column types whose decoded values can hold a Python float (rows.values: FLOAT, DOUBLE, VECTOR,
#: and JSON documents' doubles): the rows of a table without one hold none.
FLOAT_VALUED = frozenset({FLOAT, DOUBLE, VECTOR, JSON})

#: Type code -> its name in MySQL's spelling (the enum's, upper-cased): MYSQL_TYPE_<name>.
_TYPE_NAMES = spec.COLUMN_TYPE_NAMES

#: Bytes of the length prefix of a BLOB-like value when the TABLE_MAP metadata gives no pack_length
#: (calc_field_size): TINY/BLOB/MEDIUM/LONG_BLOB 1-4, JSON, GEOMETRY and VECTOR 4.
DEFAULT_PACK_LENGTH = {TINY_BLOB: 1, BLOB: 2, MEDIUM_BLOB: 3, LONG_BLOB: 4, JSON: 4, GEOMETRY: 4, VECTOR: 4}
