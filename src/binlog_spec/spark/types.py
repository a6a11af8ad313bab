"""Spark types of MySQL/MariaDB columns, for the typed table view of the Spark data source.

`column_type(col)` maps a TABLE_MAP column (binlog_spec.rows.values.Column) to a Spark
type; `sql_type(text, unsigned)` does the same from a CREATE TABLE column type
(when the table has no TABLE_MAP in the input); `converter(spark_type)` turns a
decoded value (see binlog_spec.rows.values) into what pyarrow takes for that type.

=================================  ===========================================
column                             Spark type
=================================  ===========================================
TINYINT / SMALLINT / MEDIUMINT     tinyint / smallint / int
  ... UNSIGNED                     smallint / int / int
INT / INT UNSIGNED                 int / bigint
BIGINT / BIGINT UNSIGNED           bigint / decimal(20,0)
DECIMAL(p,s)                       decimal(p,s); string when p > 38
FLOAT / DOUBLE                     float / double
YEAR                               smallint
BIT(n)                             bigint (n < 64), decimal(20,0) (n = 64)
DATE                               date (zero or invalid dates: NULL)
DATETIME                           timestamp_ntz (zero dates: NULL)
TIMESTAMP                          timestamp (UTC instant; zero: NULL)
TIME                               interval day to second (-838:59:59 .. 838:59:59)
CHAR, VARCHAR, TEXT                string when the charset is known, else binary
BINARY, VARBINARY, BLOB            binary
ENUM                               string (smallint index when members unknown)
SET                                array<string> (bigint bit mask when unknown)
JSON                               variant
GEOMETRY                           struct<srid: int, wkb: binary>
VECTOR                             array<float>
anything else                      string: the value's JSON text
=================================  ===========================================

Signedness, charsets and ENUM/SET members come from the TABLE_MAP's optional
metadata (or the schema file); without them columns are signed, text is binary
and ENUM/SET are numbers, as the row decoder gives them.
"""
from __future__ import annotations

import datetime as dt
import decimal
import re
from typing import Any, Callable

from pyspark.sql.types import (ArrayType, BinaryType, ByteType, DataType, DateType, DayTimeIntervalType,
                               DecimalType, DoubleType, FloatType, IntegerType, LongType, ShortType, StringType,
                               StructField, StructType, TimestampNTZType, TimestampType, VariantType)

from binlog_spec.output import jsonenc
from binlog_spec.spark.variant import encode
from binlog_spec.rows.values import (BIT, BLOB, BLOB_COMPRESSED, Column, DATE, DATETIME, DATETIME2, DOUBLE, ENUM,
                                     FLOAT, GEOMETRY, INT24, JSON, LONG, LONGLONG, LONG_BLOB, MEDIUM_BLOB, NEWDATE,
                                     NEWDECIMAL, SET, SHORT, STRING, TIME, TIME2, TIMESTAMP, TIMESTAMP2, TINY,
                                     TINY_BLOB, VARCHAR, VARCHAR_COMPRESSED, VAR_STRING, VECTOR, YEAR, codec_for)
from binlog_spec.rows.tablemap import real_type

#: type_code of a column known only from CREATE TABLE text (meta {"sql": text, "unsigned": bool}).
SQL_ONLY = -1
GEOMETRY_TYPE = StructType([StructField("srid", IntegerType()), StructField("wkb", BinaryType())])
U64 = DecimalType(20, 0)
_INTS = {TINY: (ByteType(), ShortType()), SHORT: (ShortType(), IntegerType()),
         INT24: (IntegerType(), IntegerType()), LONG: (IntegerType(), LongType()),
         LONGLONG: (LongType(), U64)}
_TEXT = {STRING, VARCHAR, VAR_STRING, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, BLOB,
         BLOB_COMPRESSED, VARCHAR_COMPRESSED}


def column_type(col: Column) -> DataType:
    if col.type_code == SQL_ONLY:
        return sql_type(col.meta["sql"], col.meta.get("unsigned", False))
    code = real_type(col.type_code, col.meta if isinstance(col.meta, dict) else {})
    meta = col.meta if isinstance(col.meta, dict) else {}
    if code in _INTS:
        return _INTS[code][bool(col.unsigned)]
    if code == NEWDECIMAL:
        p, s = meta.get("precision", 65), meta.get("scale", 0)
        return DecimalType(p, s) if p <= 38 else StringType()
    if code == FLOAT:
        return FloatType()
    if code == DOUBLE:
        return DoubleType()
    if code == YEAR:
        return ShortType()
    if code == BIT:
        bits = meta.get("bytes", 8) * 8 + meta.get("bits", 0)
        return LongType() if bits < 64 else U64
    if code in (DATE, NEWDATE):
        return DateType()
    if code in (DATETIME, DATETIME2):
        return TimestampNTZType()
    if code in (TIMESTAMP, TIMESTAMP2):
        return TimestampType()
    if code in (TIME, TIME2):
        return DayTimeIntervalType()
    if code == ENUM:
        return StringType() if col.enum_values is not None else ShortType()
    if code == SET:
        return ArrayType(StringType()) if col.set_values is not None else LongType()
    if code in _TEXT:
        return StringType() if codec_for(col.charset) is not None else BinaryType()
    if code == JSON:
        return VariantType()
    if code == GEOMETRY:
        return GEOMETRY_TYPE
    if code == VECTOR:
        return ArrayType(FloatType())
    return StringType()


_SQL_INTS = {"TINYINT": TINY, "SMALLINT": SHORT, "MEDIUMINT": INT24, "INT": LONG, "INTEGER": LONG,
             "BIGINT": LONGLONG}


def sql_type(text: str, unsigned: bool = False) -> DataType:
    """The Spark type of a CREATE TABLE column type (as sqlglot prints it), for a table the
    input has no TABLE_MAP of. Text columns are strings here."""
    t = text.upper().strip()
    word = re.match(r"[A-Z0-9_]+", t)
    name = word.group(0) if word else ""
    unsigned = unsigned or "UNSIGNED" in t or name.startswith("U") and name[1:] in _SQL_INTS
    if name.startswith("U") and name[1:] in _SQL_INTS | {"DECIMAL": 0}:
        name = name[1:]
    if name in _SQL_INTS:
        return _INTS[_SQL_INTS[name]][bool(unsigned)]
    args = [int(a) for a in re.findall(r"\d+", t[len(name):].split(")")[0])] if "(" in t else []
    if name in ("DECIMAL", "NUMERIC", "DEC", "FIXED"):
        p = args[0] if args else 10
        s = args[1] if len(args) > 1 else 0
        return DecimalType(p, s) if p <= 38 else StringType()
    simple = {"FLOAT": FloatType(), "DOUBLE": DoubleType(), "REAL": DoubleType(), "YEAR": ShortType(),
              "DATE": DateType(), "DATETIME": TimestampNTZType(), "TIMESTAMP": TimestampType(),
              "TIME": DayTimeIntervalType(), "JSON": VariantType(), "ENUM": StringType(),
              "SET": ArrayType(StringType()), "VECTOR": ArrayType(FloatType()), "GEOMETRY": GEOMETRY_TYPE,
              "BINARY": BinaryType(), "VARBINARY": BinaryType(), "BLOB": BinaryType(), "TINYBLOB": BinaryType(),
              "MEDIUMBLOB": BinaryType(), "LONGBLOB": BinaryType()}
    if name == "BIT":
        return LongType() if (args[0] if args else 1) < 64 else U64
    if name == "DOUBLE" or t.startswith("DOUBLE PRECISION"):
        return DoubleType()
    return simple.get(name, StringType())


# --------------------------------------------------------------------------- converters
def _to_text(v: Any) -> str:
    """Text as it is, bytes as UTF-8, numbers and dates as the CLI's JSON writes them (without
    quotes), anything else as its JSON text."""
    if isinstance(v, str):
        return v
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).decode("utf-8", errors="replace")
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, decimal.Decimal):   # DECIMAL(p>38): the server's text, never exponent form (1E-30)
        return format(v, "f")
    try:
        text = jsonenc.default(v)
    except TypeError:
        text = None
    return text if isinstance(text, str) else jsonenc.dumps(v)


def _to_bytes(v: Any) -> bytes:
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, str):
        return v.encode("utf-8", errors="surrogateescape")
    return jsonenc.dumps(v).encode("utf-8")


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _dec(v: Any) -> decimal.Decimal | None:
    if isinstance(v, decimal.Decimal):
        return v
    if isinstance(v, int):
        return decimal.Decimal(v)
    try:
        return decimal.Decimal(str(v))
    except (decimal.InvalidOperation, ValueError):
        return None


def _date(v: Any):
    return v if isinstance(v, dt.date) and not isinstance(v, dt.datetime) else None


def _ts_ntz(v: Any):
    if isinstance(v, dt.datetime):
        return v.replace(tzinfo=None) if v.tzinfo else v
    return None


def _ts(v: Any):
    if isinstance(v, dt.datetime):
        return v if v.tzinfo else v.replace(tzinfo=dt.timezone.utc)
    return None


def _interval(v: Any):
    return v if isinstance(v, dt.timedelta) else None


def _set(v: Any):
    if isinstance(v, (set, frozenset, list, tuple)):
        return sorted(_to_text(m) for m in v)
    return None


def _geometry(v: Any):
    if isinstance(v, dict) and "wkb" in v:
        return {"srid": v.get("srid"), "wkb": _to_bytes(v["wkb"])}
    return None


def _floats(v: Any):
    return [float(x) for x in v] if isinstance(v, (list, tuple)) else None


def _float(v: Any):
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


#: Spark type -> converter, for the types that need no more than their class.
_CONVERTERS: tuple[tuple[Any, Callable[[Any], Any]], ...] = (
    ((ByteType, ShortType, IntegerType, LongType), _int), (DecimalType, _dec), ((FloatType, DoubleType), _float),
    (DateType, _date), (TimestampNTZType, _ts_ntz), (TimestampType, _ts), (DayTimeIntervalType, _interval),
    (BinaryType, _to_bytes), (VariantType, encode))


def converter(t: DataType) -> Callable[[Any], Any]:
    """Decoded value (never None) -> the Python value pyarrow takes for Spark type `t`
    (None where the value has no such form, e.g. a zero date)."""
    for types, conv in _CONVERTERS:
        if isinstance(t, types):
            return conv
    if isinstance(t, ArrayType) and isinstance(t.elementType, StringType):
        return _set
    if isinstance(t, ArrayType):
        return _floats
    if t == GEOMETRY_TYPE:
        return _geometry
    return _to_text
