"""Pure decoders of the column values in MySQL/MariaDB row images.

`decode_value(buf, pos, col)` reads one non-NULL value of column `col`
starting at `buf[pos]` and returns `(value, position after it)`. The row
decoder calls it once per present, non-NULL column; NULLs are in the row's
null bitmap and never reach it. `COLUMN_TYPES` is the one dispatch table,
binlog column type code (MySQL's enum_field_types) -> decoder. Every decoder
is a small pure function; bad or truncated bytes raise `ValueDecodeError`
(a ValueError) naming the column, the type and the offset.

Python values, by column type
-----------------------------
=====================================  =========================================================
TINY 1, SHORT 2, INT24 9, LONG 3,      int; two's complement unless `Column.unsigned`
LONGLONG 8                             (BIGINT UNSIGNED exact up to 2**64-1)
NEWDECIMAL 246                         decimal.Decimal, exact, exponent = -scale
                                       (Decimal('1.05'), Decimal('0.00'); never '-0.00')
DECIMAL 0 (pre-5.0 "old decimal")      Decimal when `meta` gives the byte length, else
                                       ValueDecodeError (see "Not covered")
FLOAT 4, DOUBLE 5                      float (FLOAT is the float32 value widened exactly)
YEAR 13                                int: 0 stays 0, otherwise 1900 + byte
DATE 10, NEWDATE 14                    datetime.date, or str 'YYYY-MM-DD' when the date is zero,
                                       has a zero part or is no calendar date ('0000-00-00',
                                       '2024-02-00', '2024-02-30' with ALLOW_INVALID_DATES)
TIME 11 (old), TIME2 19                datetime.timedelta, may be negative
                                       (-838:59:59.000000 .. 838:59:59.000000)
DATETIME 12 (old), DATETIME2 18        naive datetime.datetime, or str like DATE
                                       ('0000-00-00 00:00:00', plus '.' and `fsp` digits)
TIMESTAMP 7 (old), TIMESTAMP2 17       datetime.datetime with tzinfo=UTC; 0 seconds (and no
                                       fraction) is the zero timestamp, returned as str
                                       '0000-00-00 00:00:00' (plus '.' and `fsp` zeros)
BIT 16                                 int (the bytes, big-endian)
ENUM 247 (or STRING with real type)    str member (bytes when the charset is binary); index 0,
                                       the "invalid value" member, is '' (b''); the int index
                                       when `enum_values` is unknown
SET 248 (or STRING with real type)     frozenset of members (str, or bytes for binary charset);
                                       the int bitmask when `set_values` is unknown
STRING 254, VARCHAR 15,                str decoded with the column charset (see CHARSETS); bytes
VAR_STRING 253, BLOB 249-252           when the charset is binary (63), unknown (None) or has
                                       no Python codec, or when the bytes are not valid in the
                                       charset (a byte is never lost). The server logs CHAR/BINARY without their
                                       trailing pad characters: CHAR comes without trailing spaces
                                       (as MySQL reads it), BINARY(n) (collation 63) is padded back
                                       with 0x00 to its n bytes.
JSON 245                               decoded binary JSON: dict (keys in stored order), list,
                                       str, int, float, bool, None; opaque DECIMAL -> Decimal;
                                       opaque DATE/TIME/DATETIME/TIMESTAMP -> date/timedelta/
                                       naive datetime (str when zero); other opaque ->
                                       `JsonOpaque(type_code, data)`. An empty value (length 0)
                                       is None, as MySQL reads it as the JSON null literal.
                                       `json_text(value)` prints it the way MySQL does.
GEOMETRY 255                           dict {"srid": int, "wkb": bytes}
VECTOR 242                             list of float (float32 each)
BLOB_COMPRESSED 140,                   MariaDB COMPRESSED columns: inflated, then like BLOB /
VARCHAR_COMPRESSED 141                 VARCHAR (str, or bytes for binary/unknown charsets)
NULL 6                                 None (no bytes)
TYPED_ARRAY 20, INVALID 243, BOOL 244  ValueDecodeError: the server gives no row format for them
=====================================  =========================================================

ENUM/SET members are decoded with the column's ENUM/SET charset, utf-8 when
it is unknown. Text of a collation without a Python codec stays bytes.

Other helpers: `decode_json(data)` (one binary JSON document),
`decode_json_diff(data)` (the JSON diff of a PARTIAL_UPDATE_ROWS_EVENT after
image: `JsonDiff(operation, path, value)` items; `JsonDiffs`, the after value of a JSON
column whose document is not in the before image), `json_text(value)`,
`codec_for(collation_id)` / `CHARSETS`, `decimal_binary_size(p, s)`.

Column metadata (`Column.meta`) is the per-column TABLE_MAP metadata as
`spec.py` gives it: {} | {"pack_length": n} | {"max_length": n} |
{"bits": b, "bytes": n} | {"precision": p, "scale": s} |
{"byte0", "byte1", "real_type", "max_length"} | {"fsp": n}.

Byte layouts follow MySQL's own readers: `calc_field_size`
(libbinlogevents binary_log_funcs.cpp) for the sizes, `bin2decimal`
(strings/decimal.cc), `my_time_packed_from_binary`,
`my_datetime_packed_from_binary`, `my_timestamp_from_binary` and
`TIME_from_longlong_*_packed` (mysys/my_time.cc), `log_event_print_value`
(sql/log_event.cc) and `json_binary::parse_binary` (sql-common/json_binary.cc).

Not covered
-----------
* MySQL <= 4.1 "old DECIMAL" (type 0) stores the number as right-aligned ASCII
  text of the column's display width, but TABLE_MAP carries no metadata for
  it, so its length is unknown and neither a replica nor mysqlbinlog can read
  it; decoded only when the caller supplies {"pack_length": n}.
* MariaDB with mysql56_temporal_format=OFF logs TIME(n), DATETIME(n) and
  TIMESTAMP(n) with n > 0 in its own older formats under the plain TIME,
  DATETIME and TIMESTAMP codes (11, 12, 7) and without metadata, so their size
  cannot be known (mariadb-binlog cannot print them either). The n = 0 forms of
  those codes are the classic formats and are decoded.
* The 4-byte DATE of MySQL 4.x tables (Field_date) shares code 10 with the
  3-byte DATE; like MySQL's calc_field_size, this module reads 3 bytes.
* YEAR(2) (removed in 5.7) is decoded as YEAR(4).
* MariaDB-only types (INET4, INET6, UUID, ...) are logged as STRING/BINARY and
  come out as their stored bytes.
* TIMESTAMP values are the stored UTC instants; JSON opaque TIMESTAMPs are
  naive, as MySQL keeps them.
"""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import struct
import zlib
from dataclasses import dataclass
from typing import Any, Callable, NamedTuple

__all__ = [
    "CHARSETS", "COLUMN_TYPES", "Column", "JsonDiff", "JsonDiffs", "JsonOpaque", "ValueDecodeError",
    "charset_collation", "charset_name", "codec_for",
    "decimal_binary_size", "decode_json", "decode_json_diff", "decode_value", "json_text",
]


class ValueDecodeError(ValueError):
    """The bytes of a column value do not fit its type (or the type has no row format)."""


@dataclass(frozen=True)
class Column:
    type_code: int            # binlog column type (enum_field_types); for STRING meta real_type picks ENUM/SET
    meta: dict                # per-column TABLE_MAP metadata as spec.py gives it
    unsigned: bool = False
    charset: int | None = None        # collation id; None = unknown
    enum_values: tuple[bytes, ...] | None = None
    set_values: tuple[bytes, ...] | None = None
    name: str | None = None


@dataclass(frozen=True)
class JsonOpaque:
    """A JSON opaque scalar MySQL has no JSON type for: the MySQL field type and its raw bytes.

    Not a tuple, so that JSON output (jsonenc) renders it as MySQL does, never as a list.
    """

    type_code: int
    data: bytes


class JsonDiff(NamedTuple):
    """One operation of a PARTIAL_UPDATE_ROWS_EVENT JSON diff (sql/json_diff.cc)."""

    operation: str            # "REPLACE", "INSERT" or "REMOVE"
    path: str                 # a JSON path such as '$.age'
    value: Any                # decoded JSON value; None for REMOVE


class JsonDiffs(dict):
    """The after value of a JSON column logged as diffs (PARTIAL_UPDATE_ROWS_EVENT) when the
    before image does not hold the document the diffs apply to: not a document, only the
    operations on it. As JSON it reads `{"json_diff": [{"operation", "path", "value"}, ...]}`;
    `diffs` keeps the JsonDiff items for whoever must write them as operations (SQL)."""

    def __init__(self, diffs: "list[JsonDiff]"):
        super().__init__(json_diff=[d._asdict() for d in diffs])
        self.diffs = tuple(diffs)


Decoder = Callable[[bytes, int, Column], "tuple[object, int]"]

# --------------------------------------------------------------------------
# Type codes (include/field_types.h)

DECIMAL, TINY, SHORT, LONG, FLOAT, DOUBLE, NULL, TIMESTAMP, LONGLONG, INT24 = range(10)
DATE, TIME, DATETIME, YEAR, NEWDATE, VARCHAR, BIT, TIMESTAMP2, DATETIME2, TIME2 = range(10, 20)
TYPED_ARRAY = 20
BLOB_COMPRESSED, VARCHAR_COMPRESSED = 140, 141        # MariaDB 10.3+ column compression, row events only
VECTOR, INVALID, BOOL, JSON, NEWDECIMAL, ENUM, SET = range(242, 249)
TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, BLOB, VAR_STRING, STRING, GEOMETRY = range(249, 256)

_TYPE_NAMES = {
    DECIMAL: "DECIMAL", TINY: "TINY", SHORT: "SHORT", LONG: "LONG", FLOAT: "FLOAT", DOUBLE: "DOUBLE",
    NULL: "NULL", TIMESTAMP: "TIMESTAMP", LONGLONG: "LONGLONG", INT24: "INT24", DATE: "DATE", TIME: "TIME",
    DATETIME: "DATETIME", YEAR: "YEAR", NEWDATE: "NEWDATE", VARCHAR: "VARCHAR", BIT: "BIT",
    TIMESTAMP2: "TIMESTAMP2", DATETIME2: "DATETIME2", TIME2: "TIME2", TYPED_ARRAY: "TYPED_ARRAY",
    VECTOR: "VECTOR", INVALID: "INVALID", BOOL: "BOOL", JSON: "JSON", NEWDECIMAL: "NEWDECIMAL", ENUM: "ENUM",
    SET: "SET", TINY_BLOB: "TINY_BLOB", MEDIUM_BLOB: "MEDIUM_BLOB", LONG_BLOB: "LONG_BLOB", BLOB: "BLOB",
    VAR_STRING: "VAR_STRING", STRING: "STRING", GEOMETRY: "GEOMETRY",
    BLOB_COMPRESSED: "BLOB_COMPRESSED", VARCHAR_COMPRESSED: "VARCHAR_COMPRESSED",
}

UTC = dt.timezone.utc
BINARY_COLLATION = 63

# --------------------------------------------------------------------------
# Character sets: collation id -> Python codec (None = keep bytes)

# Character set name -> Python codec. Names without a Python codec (armscii8,
# dec8, geostd8, hp8, keybcs2, swe7) are absent, so their values stay bytes.
_CHARSET_CODECS: dict[str, str | None] = {
    "big5": "big5", "latin2": "iso8859_2", "cp850": "cp850", "latin1": "cp1252", "koi8r": "koi8_r",
    "ascii": "ascii", "ujis": "euc_jp", "sjis": "shift_jis", "cp1251": "cp1251", "hebrew": "iso8859_8",
    "tis620": "tis_620", "euckr": "euc_kr", "latin7": "iso8859_13", "koi8u": "koi8_u", "gb2312": "gb2312",
    "greek": "iso8859_7", "cp1250": "cp1250", "gbk": "gbk", "cp1257": "cp1257", "latin5": "iso8859_9",
    "utf8mb3": "utf-8", "ucs2": "utf-16-be", "cp866": "cp866", "macce": "mac_latin2", "macroman": "mac_roman",
    "cp852": "cp852", "utf8mb4": "utf-8", "utf16": "utf-16-be", "utf16le": "utf-16-le", "cp1256": "cp1256",
    "utf32": "utf-32-be", "binary": None, "cp932": "cp932", "eucjpms": "euc_jp", "gb18030": "gb18030",
}

# Collation ids of each character set: MySQL 5.x-9.x and MariaDB 10.x-11.x
# (MariaDB's NO PAD collations are id + 1024; its UCA-14.0.0 collations sit in
# blocks of 256 from 2048; MySQL 8's utf8mb4_0900 family is 255-323).
_COLLATION_IDS: dict[str, tuple[tuple[int, int], ...]] = {
    "big5": ((1, 1), (84, 84), (1025, 1025), (1108, 1108)),
    "latin2": ((2, 2), (9, 9), (21, 21), (27, 27), (77, 77), (1033, 1033), (1101, 1101)),
    "cp850": ((4, 4), (80, 80), (1028, 1028), (1104, 1104)),
    "latin1": ((5, 5), (8, 8), (15, 15), (31, 31), (47, 49), (94, 94), (1032, 1032), (1071, 1071)),
    "koi8r": ((7, 7), (74, 74), (1031, 1031), (1098, 1098)),
    "ascii": ((11, 11), (65, 65), (1035, 1035), (1089, 1089)),
    "ujis": ((12, 12), (91, 91), (1036, 1036), (1115, 1115)),
    "sjis": ((13, 13), (88, 88), (1037, 1037), (1112, 1112)),
    "cp1251": ((14, 14), (23, 23), (50, 52), (1074, 1075)),
    "hebrew": ((16, 16), (71, 71), (1040, 1040), (1095, 1095)),
    "tis620": ((18, 18), (89, 89), (1042, 1042), (1113, 1113)),
    "euckr": ((19, 19), (85, 85), (1043, 1043), (1109, 1109)),
    "latin7": ((20, 20), (41, 42), (79, 79), (1065, 1065), (1103, 1103)),
    "koi8u": ((22, 22), (75, 75), (1046, 1046), (1099, 1099)),
    "gb2312": ((24, 24), (86, 86), (1048, 1048), (1110, 1110)),
    "greek": ((25, 25), (70, 70), (1049, 1049), (1094, 1094)),
    "cp1250": ((26, 26), (34, 34), (44, 44), (66, 66), (99, 99), (1050, 1050), (1090, 1090)),
    "gbk": ((28, 28), (87, 87), (1052, 1052), (1111, 1111)),
    "cp1257": ((29, 29), (58, 59), (1082, 1083)),
    "latin5": ((30, 30), (78, 78), (1054, 1054), (1102, 1102)),
    "utf8mb3": ((33, 33), (76, 76), (83, 83), (192, 215), (223, 223), (576, 578), (1057, 1057), (1107, 1107),
                (1216, 1216), (1238, 1238), (2048, 2303)),
    "ucs2": ((35, 35), (90, 90), (128, 151), (159, 159), (640, 642), (1059, 1059), (1114, 1114), (1152, 1152),
             (1174, 1174), (2560, 2815)),
    "cp866": ((36, 36), (68, 68), (1060, 1060), (1092, 1092)),
    "macce": ((38, 38), (43, 43), (1062, 1062), (1067, 1067)),
    "macroman": ((39, 39), (53, 53), (1063, 1063), (1077, 1077)),
    "cp852": ((40, 40), (81, 81), (1064, 1064), (1105, 1105)),
    "utf8mb4": ((45, 46), (224, 247), (255, 323), (608, 610), (1069, 1070), (1248, 1248), (1270, 1270),
                (2304, 2559)),
    "utf16": ((54, 55), (101, 124), (672, 674), (1078, 1079), (1125, 1125), (1147, 1147), (2816, 3071)),
    "utf16le": ((56, 56), (62, 62), (1080, 1080), (1086, 1086)),
    "cp1256": ((57, 57), (67, 67), (1081, 1081), (1091, 1091)),
    "utf32": ((60, 61), (160, 183), (736, 738), (1084, 1085), (1184, 1184), (1206, 1206), (3072, 3327)),
    "binary": ((63, 63),),
    "cp932": ((95, 96), (1119, 1120)),
    "eucjpms": ((97, 98), (1121, 1122)),
    "gb18030": ((248, 250),),
}


def _build_charsets() -> dict[int, str | None]:
    table: dict[int, str | None] = {}
    for name, ranges in _COLLATION_IDS.items():
        codec = _CHARSET_CODECS[name]
        for first, last in ranges:
            for cid in range(first, last + 1):
                table[cid] = codec
    return table


#: Collation id -> Python codec name; None means binary (bytes). MySQL's latin1
#: is Windows-1252 ('cp1252'); its five undefined bytes decode to U+0081,
#: U+008D, U+008F, U+0090 and U+009D, as MySQL converts them.
CHARSETS: dict[int, str | None] = _build_charsets()


def codec_for(collation_id: int | None) -> str | None:
    """The Python codec of a collation id, or None for binary, unknown ids and charsets Python lacks."""
    if collation_id is None:
        return None
    return CHARSETS.get(collation_id)


#: The default collation of each character set (SHOW CHARACTER SET; utf8mb4's is MariaDB's and
#: MySQL 5.7's, MySQL 8 uses 255: the same text).
_DEFAULT_COLLATION = {
    "big5": 1, "latin2": 9, "cp850": 4, "latin1": 8, "koi8r": 7, "ascii": 11, "ujis": 12, "sjis": 13,
    "cp1251": 51, "hebrew": 16, "tis620": 18, "euckr": 19, "latin7": 41, "koi8u": 22, "gb2312": 24,
    "greek": 25, "cp1250": 26, "gbk": 28, "cp1257": 59, "latin5": 30, "utf8mb3": 33, "ucs2": 35,
    "cp866": 36, "macce": 38, "macroman": 39, "cp852": 40, "utf8mb4": 45, "utf16": 54, "utf16le": 56,
    "cp1256": 57, "utf32": 60, "binary": 63, "cp932": 95, "eucjpms": 97, "gb18030": 248,
}
#: Other names of character sets (MySQL's and MariaDB's `utf8` is utf8mb3).
_CHARSET_ALIASES = {"utf8": "utf8mb3"}


def charset_collation(name: str) -> int | None:
    """The collation id that stands for a character set or collation name in DDL ('utf8mb4',
    'utf8', 'latin1_swedish_ci', 'utf8mb4_0900_ai_ci', 'binary'): the default collation of its
    character set (what a value's decoding needs); None when the name names no known charset
    (MariaDB 11's charset-less 'uca1400_ai_ci': the CHARACTER SET beside it says)."""
    name = name.strip("`'\"").lower()
    charset = _CHARSET_ALIASES.get(name, name)
    if charset not in _DEFAULT_COLLATION:
        prefix = name.split("_", 1)[0]
        charset = _CHARSET_ALIASES.get(prefix, prefix)
    return _DEFAULT_COLLATION.get(charset)


def charset_name(collation_id: int | None) -> str | None:
    """The character set of a collation id ('utf8mb4'), None when unknown."""
    for name, ranges in _COLLATION_IDS.items():
        if any(first <= (collation_id or -1) <= last for first, last in ranges):
            return name
    return None


# MySQL's latin1 table: cp1252 with the five undefined bytes mapped to C1 controls.
_MYSQL_LATIN1 = {b: (bytes([b]).decode("cp1252", errors="ignore") or chr(b)) for b in range(256)}
_MYSQL_LATIN1_TABLE = str.maketrans({chr(b): ch for b, ch in _MYSQL_LATIN1.items() if chr(b) != ch})


def _mysql_latin1(data: bytes) -> str:
    """MySQL's latin1 text (ASCII, the commonest case, needs no translation)."""
    if data.isascii():
        return data.decode("ascii")
    return data.decode("latin-1").translate(_MYSQL_LATIN1_TABLE)


def _decode_text(data: bytes, codec: str, col: Column, pos: int) -> str | bytes:
    """Text in its charset; bytes that are not valid in it stay bytes (never lose a byte)."""
    if codec == "cp1252":
        return _mysql_latin1(data)
    try:
        return data.decode(codec)
    except UnicodeDecodeError:
        return data


def _text_or_bytes(data: bytes, col: Column, pos: int) -> str | bytes:
    """Text for a collation with a Python codec, else the bytes."""
    codec = codec_for(col.charset)
    return data if codec is None else _decode_text(data, codec, col, pos)


# --------------------------------------------------------------------------
# Helpers


def _error(col: Column, pos: int, message: str) -> ValueDecodeError:
    type_name = _TYPE_NAMES.get(col.type_code, str(col.type_code))
    who = f"column {col.name!r} " if col.name else "column "
    return ValueDecodeError(f"{who}({type_name}) at offset {pos}: {message}")


def _take(buf: bytes, pos: int, size: int, col: Column) -> bytes:
    end = pos + size
    if pos < 0 or end > len(buf):
        raise _error(col, pos, f"needs {size} bytes, only {max(len(buf) - pos, 0)} left")
    return bytes(buf[pos:end])


def _meta_int(col: Column, key: str, pos: int) -> int:
    value = col.meta.get(key) if isinstance(col.meta, dict) else None
    if not isinstance(value, int):
        raise _error(col, pos, f"column metadata has no {key!r} (got {col.meta!r})")
    return value


def _length_prefixed(buf: bytes, pos: int, col: Column, prefix: int) -> tuple[bytes, int]:
    """Bytes after a little-endian length of `prefix` bytes (1-4)."""
    if not 1 <= prefix <= 4:
        raise _error(col, pos, f"length prefix of {prefix} bytes is not 1-4")
    length = int.from_bytes(_take(buf, pos, prefix, col), "little")
    return _take(buf, pos + prefix, length, col), pos + prefix + length


def _fsp(col: Column, pos: int) -> int:
    fsp = _meta_int(col, "fsp", pos)
    if not 0 <= fsp <= 6:
        raise _error(col, pos, f"fractional seconds precision {fsp} is not 0-6")
    return fsp


def _frac_text(usec: int, fsp: int) -> str:
    return f".{usec:06d}"[: fsp + 1] if fsp else ""


def _date_or_str(year: int, month: int, day: int) -> dt.date | str:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return f"{year:04d}-{month:02d}-{day:02d}"


def _datetime_or_str(year: int, month: int, day: int, hour: int, minute: int, second: int, usec: int,
                     fsp: int) -> dt.datetime | str:
    try:
        return dt.datetime(year, month, day, hour, minute, second, usec)
    except ValueError:
        return f"{year:04d}-{month:02d}-{day:02d} {hour:02d}:{minute:02d}:{second:02d}{_frac_text(usec, fsp)}"


def _timedelta(negative: bool, hour: int, minute: int, second: int, usec: int, col: Column,
               pos: int) -> dt.timedelta:
    if minute > 59 or second > 59 or usec > 999999:
        raise _error(col, pos, f"time {hour}:{minute}:{second}.{usec} is out of range")
    value = dt.timedelta(hours=hour, minutes=minute, seconds=second, microseconds=usec)
    return -value if negative else value


# --------------------------------------------------------------------------
# Integers


def _int_decoder(size: int) -> Decoder:
    def decode(buf: bytes, pos: int, col: Column) -> tuple[int, int]:
        raw = _take(buf, pos, size, col)
        return int.from_bytes(raw, "little", signed=not col.unsigned), pos + size
    decode.__name__ = f"decode_int{size * 8}"
    return decode


decode_tiny = _int_decoder(1)
decode_short = _int_decoder(2)
decode_int24 = _int_decoder(3)
decode_long = _int_decoder(4)
decode_longlong = _int_decoder(8)


def decode_year(buf: bytes, pos: int, col: Column) -> tuple[int, int]:
    byte = _take(buf, pos, 1, col)[0]
    return (1900 + byte if byte else 0), pos + 1


def decode_bit(buf: bytes, pos: int, col: Column) -> tuple[int, int]:
    bits, whole = _meta_int(col, "bits", pos), _meta_int(col, "bytes", pos)
    if bits > 7:
        raise _error(col, pos, f"BIT metadata has {bits} bits in the partial byte")
    size = whole + (1 if bits else 0)
    return int.from_bytes(_take(buf, pos, size, col), "big"), pos + size


# --------------------------------------------------------------------------
# Floating point and decimals


def decode_float(buf: bytes, pos: int, col: Column) -> tuple[float, int]:
    return struct.unpack("<f", _take(buf, pos, 4, col))[0], pos + 4


def decode_double(buf: bytes, pos: int, col: Column) -> tuple[float, int]:
    return struct.unpack("<d", _take(buf, pos, 8, col))[0], pos + 8


_DIG2BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)


def decimal_binary_size(precision: int, scale: int) -> int:
    """Bytes of a NEWDECIMAL(precision, scale) value (decimal_bin_size)."""
    intg0, intg0x = divmod(precision - scale, 9)
    frac0, frac0x = divmod(scale, 9)
    return intg0 * 4 + _DIG2BYTES[intg0x] + frac0 * 4 + _DIG2BYTES[frac0x]


def _bin2decimal(raw: bytes, precision: int, scale: int, col: Column, pos: int) -> decimal.Decimal:
    """strings/decimal.cc bin2decimal: 9-digit groups in 4 big-endian bytes, sign bit inverted,
    negative numbers stored with every byte inverted."""
    data = bytearray(raw)
    negative = not data[0] & 0x80
    data[0] ^= 0x80
    if negative:
        data = bytearray(b ^ 0xFF for b in data)
    intg0, intg0x = divmod(precision - scale, 9)
    frac0, frac0x = divmod(scale, 9)
    groups = ([intg0x] if intg0x else []) + [9] * intg0 + [9] * frac0 + ([frac0x] if frac0x else [])
    text, offset = [], 0
    for ndigits in groups:
        nbytes = _DIG2BYTES[ndigits]
        group = int.from_bytes(data[offset:offset + nbytes], "big")
        if group >= 10 ** ndigits:
            raise _error(col, pos, f"DECIMAL({precision},{scale}) group {group} has more than {ndigits} digits")
        text.append(f"{group:0{ndigits}d}")
        offset += nbytes
    digits = "".join(text)
    int_len = len(digits) - scale
    number = (digits[:int_len].lstrip("0") or "0") + ("." + digits[int_len:] if scale else "")
    value = decimal.Decimal(number)
    return value.copy_negate() if negative and value else value


def decode_newdecimal(buf: bytes, pos: int, col: Column) -> tuple[decimal.Decimal, int]:
    precision, scale = _meta_int(col, "precision", pos), _meta_int(col, "scale", pos)
    if not (1 <= precision <= 65 and 0 <= scale <= precision):
        raise _error(col, pos, f"DECIMAL({precision},{scale}) is not a valid precision/scale")
    size = decimal_binary_size(precision, scale)
    return _bin2decimal(_take(buf, pos, size, col), precision, scale, col, pos), pos + size


def decode_old_decimal(buf: bytes, pos: int, col: Column) -> tuple[decimal.Decimal, int]:
    """MySQL <= 4.1 DECIMAL: the number as space-padded ASCII text of the column's width.
    TABLE_MAP gives no width for it, so only a caller-supplied {"pack_length": n} makes it readable."""
    size = col.meta.get("pack_length") if isinstance(col.meta, dict) else None
    if not isinstance(size, int) or size <= 0:
        raise _error(col, pos, "old DECIMAL (MySQL 4.1 and earlier) is stored as ASCII text of the column "
                               "width, which TABLE_MAP does not record; the value cannot be delimited "
                               "(mysqlbinlog cannot print it either)")
    text = _take(buf, pos, size, col).decode("ascii", errors="replace").strip()
    try:
        return decimal.Decimal(text), pos + size
    except decimal.InvalidOperation:
        raise _error(col, pos, f"old DECIMAL text {text!r} is not a number") from None


# --------------------------------------------------------------------------
# Dates and times


def decode_date(buf: bytes, pos: int, col: Column) -> tuple[dt.date | str, int]:
    """3 bytes little-endian: day in bits 0-4, month in bits 5-8, year above (Field_newdate)."""
    value = int.from_bytes(_take(buf, pos, 3, col), "little")
    return _date_or_str(value >> 9, (value >> 5) & 15, value & 31), pos + 3


# MariaDB 5.3 high-resolution temporals (sql/field.cc, Field_time_hires, Field_datetime_hires,
# Field_timestamp_hires): a TIME(n), DATETIME(n) or TIMESTAMP(n) column, n > 0, created with
# mysql56_temporal_format=OFF is logged as the old TIME, DATETIME or TIMESTAMP type with no
# metadata, so its size is not in the binlog. The precision comes from the CREATE TABLE (DDL
# replay or --schema; schema.py puts it in the column's meta as "fsp"). Without it, the column
# reads as the old type, as mariadb-binlog reads it.

#: old type -> bytes of a MariaDB hires value by precision 0-6 (0: the old type itself).
_HIRES_SIZES = {TIME: (3, 4, 4, 5, 5, 5, 6), DATETIME: (8, 6, 6, 7, 7, 7, 8), TIMESTAMP: (4, 5, 5, 6, 6, 6, 7)}
#: TIME hires values are stored offset by 838:59:59 + 1 s (Field_time_hires::zero_point), in microseconds.
_HIRES_TIME_ZERO = (838 * 3600 + 59 * 60 + 59 + 1) * 1_000_000


def _hires_fsp(col: Column) -> int:
    fsp = col.meta.get("fsp", 0) if isinstance(col.meta, dict) else 0
    return fsp if isinstance(fsp, int) and 1 <= fsp <= 6 else 0


def old_temporal_size(col: Column) -> int:
    """Bytes of an old TIME, DATETIME or TIMESTAMP value (a MariaDB hires one when meta has "fsp")."""
    return _HIRES_SIZES[col.type_code][_hires_fsp(col)]


def _hires_packed(buf: bytes, pos: int, col: Column, fsp: int) -> tuple[int, int]:
    """The big-endian packed value of a hires TIME/DATETIME, scaled back to microseconds."""
    size = _HIRES_SIZES[col.type_code][fsp]
    return int.from_bytes(_take(buf, pos, size, col), "big") * 10 ** (6 - fsp), pos + size


def decode_time(buf: bytes, pos: int, col: Column) -> tuple[dt.timedelta, int]:
    """Old TIME: signed 3-byte little-endian integer [-]HHMMSS (Field_time). MariaDB hires TIME(n):
    big-endian microseconds (in units of the precision) offset by _HIRES_TIME_ZERO."""
    fsp = _hires_fsp(col)
    if fsp:
        usec, end = _hires_packed(buf, pos, col, fsp)
        usec -= _HIRES_TIME_ZERO
        seconds, frac = divmod(abs(usec), 1_000_000)
        return _timedelta(usec < 0, seconds // 3600, seconds // 60 % 60, seconds % 60, frac, col, pos), end
    value = int.from_bytes(_take(buf, pos, 3, col), "little", signed=True)
    hhmmss = abs(value)
    return _timedelta(value < 0, hhmmss // 10000, hhmmss // 100 % 100, hhmmss % 100, 0, col, pos), pos + 3


def decode_datetime(buf: bytes, pos: int, col: Column) -> tuple[dt.datetime | str, int]:
    """Old DATETIME: 8-byte little-endian integer YYYYMMDDhhmmss (Field_datetime). MariaDB hires
    DATETIME(n): big-endian ((((year*13+month)*32+day)*24+hour)*60+minute)*60+second in
    microseconds (pack_time), in units of the precision."""
    fsp = _hires_fsp(col)
    if fsp:
        packed, end = _hires_packed(buf, pos, col, fsp)
        rest, usec = divmod(packed, 1_000_000)
        rest, second = divmod(rest, 60)
        rest, minute = divmod(rest, 60)
        rest, hour = divmod(rest, 24)
        rest, day = divmod(rest, 32)
        year, month = divmod(rest, 13)
        return _datetime_or_str(year, month, day, hour, minute, second, usec, fsp), end
    value = int.from_bytes(_take(buf, pos, 8, col), "little")
    date, time = divmod(value, 1000000)
    return _datetime_or_str(date // 10000, date // 100 % 100, date % 100,
                            time // 10000, time // 100 % 100, time % 100, 0, 0), pos + 8


def _zero_timestamp(fsp: int) -> str:
    return "0000-00-00 00:00:00" + _frac_text(0, fsp)


def decode_timestamp(buf: bytes, pos: int, col: Column) -> tuple[dt.datetime | str, int]:
    """Old TIMESTAMP: 4-byte little-endian seconds since the epoch (UTC). MariaDB hires TIMESTAMP(n):
    4-byte big-endian seconds, then the fraction big-endian in units of the precision."""
    fsp = _hires_fsp(col)
    if fsp:
        size = _HIRES_SIZES[TIMESTAMP][fsp]
        raw = _take(buf, pos, size, col)
        seconds, usec = int.from_bytes(raw[:4], "big"), int.from_bytes(raw[4:], "big") * 10 ** (6 - fsp)
        if usec > 999999:
            raise _error(col, pos, f"fraction {usec} is more than 999999 microseconds")
        if seconds == 0 and usec == 0:
            return _zero_timestamp(fsp), pos + size
        return dt.datetime.fromtimestamp(seconds, UTC) + dt.timedelta(microseconds=usec), pos + size
    seconds = int.from_bytes(_take(buf, pos, 4, col), "little")
    if seconds == 0:
        return _zero_timestamp(0), pos + 4
    return dt.datetime.fromtimestamp(seconds, UTC), pos + 4


def _time_from_packed(packed: int, col: Column, pos: int) -> dt.timedelta:
    """TIME_from_longlong_time_packed: sign, then hour<<12 | minute<<6 | second above 24 bits of usec."""
    magnitude = abs(packed)
    hms, usec = magnitude >> 24, magnitude % (1 << 24)
    return _timedelta(packed < 0, (hms >> 12) % (1 << 10), (hms >> 6) % (1 << 6), hms % (1 << 6), usec, col, pos)


def decode_time2(buf: bytes, pos: int, col: Column) -> tuple[dt.timedelta, int]:
    """TIME2 (my_time_packed_from_binary): 3 bytes big-endian hh:mm:ss offset by 0x800000, then the
    fraction in (fsp+1)//2 bytes. A negative value with a fraction is stored as the next lower
    integer second plus the complement of the fraction (0x100 - f or 0x10000 - f)."""
    fsp = _fsp(col, pos)
    size = 3 + (fsp + 1) // 2
    raw = _take(buf, pos, size, col)
    intpart = int.from_bytes(raw[:3], "big") - 0x800000
    if fsp == 0:
        packed = intpart << 24
    elif fsp <= 2:
        frac = raw[3]
        if intpart < 0 and frac:
            intpart, frac = intpart + 1, frac - 0x100
        packed = (intpart << 24) + frac * 10000
    elif fsp <= 4:
        frac = int.from_bytes(raw[3:5], "big")
        if intpart < 0 and frac:
            intpart, frac = intpart + 1, frac - 0x10000
        packed = (intpart << 24) + frac * 100
    else:
        packed = int.from_bytes(raw[:6], "big") - 0x800000000000
    return _time_from_packed(packed, col, pos), pos + size


def _datetime_from_packed(packed: int, fsp: int, col: Column, pos: int) -> dt.datetime | str:
    """TIME_from_longlong_datetime_packed: (year*13+month)<<22 | day<<17 | hms, above 24 bits of usec."""
    if packed < 0:
        raise _error(col, pos, "negative DATETIME")
    ymdhms, usec = packed >> 24, packed % (1 << 24)
    if usec > 999999:
        raise _error(col, pos, f"fraction {usec} is more than 999999 microseconds")
    ymd, hms = ymdhms >> 17, ymdhms % (1 << 17)
    year_month = ymd >> 5
    return _datetime_or_str(year_month // 13, year_month % 13, ymd % (1 << 5),
                            hms >> 12, (hms >> 6) % (1 << 6), hms % (1 << 6), usec, fsp)


def _signed_frac(raw: bytes, fsp: int) -> int:
    """The fraction bytes of DATETIME2/TIMESTAMP2 as microseconds (signed, as MySQL reads them)."""
    if fsp == 0:
        return 0
    if fsp <= 2:
        return int.from_bytes(raw[:1], "big", signed=True) * 10000
    if fsp <= 4:
        return int.from_bytes(raw[:2], "big", signed=True) * 100
    return int.from_bytes(raw[:3], "big", signed=True)


def decode_datetime2(buf: bytes, pos: int, col: Column) -> tuple[dt.datetime | str, int]:
    """DATETIME2 (my_datetime_packed_from_binary): 5 bytes big-endian offset by 0x8000000000, then the
    fraction in (fsp+1)//2 big-endian bytes."""
    fsp = _fsp(col, pos)
    size = 5 + (fsp + 1) // 2
    raw = _take(buf, pos, size, col)
    packed = ((int.from_bytes(raw[:5], "big") - 0x8000000000) << 24) + _signed_frac(raw[5:], fsp)
    return _datetime_from_packed(packed, fsp, col, pos), pos + size


def decode_timestamp2(buf: bytes, pos: int, col: Column) -> tuple[dt.datetime | str, int]:
    """TIMESTAMP2 (my_timestamp_from_binary): 4 bytes big-endian seconds, then the fraction in
    (fsp+1)//2 big-endian bytes. 0 seconds and no fraction is the zero timestamp (MariaDB also
    stores 1970-01-01 00:00:00.f as 0 seconds plus a fraction)."""
    fsp = _fsp(col, pos)
    size = 4 + (fsp + 1) // 2
    raw = _take(buf, pos, size, col)
    seconds = int.from_bytes(raw[:4], "big")
    usec = raw[4] * 10000 if fsp in (1, 2) else _signed_frac(raw[4:], fsp)
    if not 0 <= usec <= 999999:
        raise _error(col, pos, f"fraction {usec} is not 0-999999 microseconds")
    if seconds == 0 and usec == 0:
        return _zero_timestamp(fsp), pos + size
    return dt.datetime.fromtimestamp(seconds, UTC) + dt.timedelta(microseconds=usec), pos + size


# --------------------------------------------------------------------------
# Strings, ENUM and SET


def _decode_enum_index(index: int, col: Column, pos: int) -> object:
    if col.enum_values is None:
        return index
    if index == 0:
        return _member(b"", col, pos)
    if index > len(col.enum_values):
        raise _error(col, pos, f"ENUM index {index} but the column has {len(col.enum_values)} members")
    return _member(col.enum_values[index - 1], col, pos)


def _member(raw: bytes, col: Column, pos: int) -> str | bytes:
    """ENUM/SET members are text: the column charset, utf-8 when unknown, bytes when binary."""
    if col.charset is None:
        return _decode_text(bytes(raw), "utf-8", col, pos)
    return _text_or_bytes(bytes(raw), col, pos)


def _pack_length(col: Column, pos: int, allowed: range) -> int:
    meta = col.meta if isinstance(col.meta, dict) else {}
    size = meta.get("pack_length", meta.get("max_length", meta.get("byte1")))
    if not isinstance(size, int) or size not in allowed:
        raise _error(col, pos, f"pack length {size!r} is not {allowed.start}-{allowed.stop - 1} (meta {col.meta!r})")
    return size


def decode_enum(buf: bytes, pos: int, col: Column) -> tuple[object, int]:
    size = _pack_length(col, pos, range(1, 3))
    index = int.from_bytes(_take(buf, pos, size, col), "little")
    return _decode_enum_index(index, col, pos), pos + size


def decode_set(buf: bytes, pos: int, col: Column) -> tuple[object, int]:
    size = _pack_length(col, pos, range(1, 9))
    mask = int.from_bytes(_take(buf, pos, size, col), "little")
    if col.set_values is None:
        return mask, pos + size
    if mask >> len(col.set_values):
        raise _error(col, pos, f"SET bitmask {mask:#x} has bits beyond its {len(col.set_values)} members")
    members = frozenset(_member(raw, col, pos) for i, raw in enumerate(col.set_values) if mask >> i & 1)
    return members, pos + size


def decode_string(buf: bytes, pos: int, col: Column) -> tuple[object, int]:
    """MYSQL_TYPE_STRING: CHAR/BINARY, or ENUM/SET when the metadata's real type says so."""
    real_type = col.meta.get("real_type", STRING) if isinstance(col.meta, dict) else STRING
    if real_type in (ENUM, SET):
        return COLUMN_TYPES[real_type](buf, pos, col)
    max_length = _meta_int(col, "max_length", pos)
    data, end = _length_prefixed(buf, pos, col, 1 if max_length < 256 else 2)
    if col.charset == BINARY_COLLATION and len(data) < max_length:
        data += bytes(max_length - len(data))      # BINARY(n): the server strips the 0x00 padding
    return _text_or_bytes(data, col, pos), end


def decode_varchar(buf: bytes, pos: int, col: Column) -> tuple[object, int]:
    """VARCHAR and VAR_STRING: 1-byte length below 256 bytes of maximum length, else 2 bytes."""
    max_length = _meta_int(col, "max_length", pos)
    data, end = _length_prefixed(buf, pos, col, 1 if max_length < 256 else 2)
    return _text_or_bytes(data, col, pos), end


_DEFAULT_PACK_LENGTH = {TINY_BLOB: 1, BLOB: 2, MEDIUM_BLOB: 3, LONG_BLOB: 4, JSON: 4, GEOMETRY: 4, VECTOR: 4}
# BLOB_COMPRESSED has no default: its metadata always gives the length size (1-4).


def _blob_bytes(buf: bytes, pos: int, col: Column) -> tuple[bytes, int]:
    meta = col.meta if isinstance(col.meta, dict) else {}
    prefix = meta.get("pack_length", _DEFAULT_PACK_LENGTH.get(col.type_code))
    if not isinstance(prefix, int):
        raise _error(col, pos, f"column metadata has no 'pack_length' (got {col.meta!r})")
    return _length_prefixed(buf, pos, col, prefix)


def decode_blob(buf: bytes, pos: int, col: Column) -> tuple[object, int]:
    """BLOB/TEXT of every size: a little-endian length of `pack_length` bytes, then the data."""
    data, end = _blob_bytes(buf, pos, col)
    return _text_or_bytes(data, col, pos), end


def _mariadb_uncompress(data: bytes, col: Column, pos: int) -> bytes:
    """MariaDB column compression (sql/field_comp.cc): a header byte whose high nibble is the method
    (0 = stored as is, 8 = zlib); for zlib, bits 0-2 give the size of the big-endian original
    length that follows and bit 3 means a raw deflate stream (no zlib wrapper)."""
    if not data:
        return b""
    header = data[0]
    if header >> 4 == 0:
        return data[1:]
    if header >> 4 != 8:
        raise _error(col, pos, f"compressed column header {header:#04x} names no known method")
    size_len = header & 0x07
    if len(data) < 1 + size_len:
        raise _error(col, pos, "compressed column value ends inside its length")
    size = int.from_bytes(data[1:1 + size_len], "big")
    try:
        inflater = zlib.decompressobj(-zlib.MAX_WBITS if header & 0x08 else zlib.MAX_WBITS)
        out = inflater.decompress(data[1 + size_len:], size + 1)      # never more than the header's size
        if not inflater.eof:
            raise zlib.error("incomplete or oversized stream")
    except zlib.error as exc:
        raise _error(col, pos, f"compressed column value does not inflate: {exc}") from None
    if len(out) != size:
        raise _error(col, pos, f"compressed column value inflates to {len(out)} bytes, header says {size}")
    return out


def decode_blob_compressed(buf: bytes, pos: int, col: Column) -> tuple[object, int]:
    """MariaDB BLOB/TEXT ... COMPRESSED: a BLOB whose data is a compressed record."""
    data, end = _blob_bytes(buf, pos, col)
    return _text_or_bytes(_mariadb_uncompress(data, col, pos), col, pos), end


def decode_varchar_compressed(buf: bytes, pos: int, col: Column) -> tuple[object, int]:
    """MariaDB VARCHAR ... COMPRESSED: a VARCHAR (max_length counts the header byte) holding a
    compressed record."""
    max_length = _meta_int(col, "max_length", pos)
    data, end = _length_prefixed(buf, pos, col, 1 if max_length < 256 else 2)
    return _text_or_bytes(_mariadb_uncompress(data, col, pos), col, pos), end


def decode_geometry(buf: bytes, pos: int, col: Column) -> tuple[dict, int]:
    """GEOMETRY: length-prefixed; 4 bytes little-endian SRID, then WKB."""
    data, end = _blob_bytes(buf, pos, col)
    if len(data) < 4:
        raise _error(col, pos, f"GEOMETRY value of {len(data)} bytes has no 4-byte SRID")
    return {"srid": int.from_bytes(data[:4], "little"), "wkb": data[4:]}, end


def decode_vector(buf: bytes, pos: int, col: Column) -> tuple[list[float], int]:
    """VECTOR (MySQL 9): length-prefixed little-endian float32 values."""
    data, end = _blob_bytes(buf, pos, col)
    if len(data) % 4:
        raise _error(col, pos, f"VECTOR value of {len(data)} bytes is not a whole number of float32")
    return list(struct.unpack(f"<{len(data) // 4}f", data)), end


def decode_json_column(buf: bytes, pos: int, col: Column) -> tuple[object, int]:
    """JSON: length-prefixed MySQL binary JSON (length 0 reads as null)."""
    data, end = _blob_bytes(buf, pos, col)
    try:
        return decode_json(data), end
    except ValueDecodeError as exc:
        raise _error(col, pos, str(exc)) from None


def decode_null(buf: bytes, pos: int, col: Column) -> tuple[None, int]:
    return None, pos


def _no_row_format(reason: str) -> Decoder:
    def decode(buf: bytes, pos: int, col: Column) -> tuple[object, int]:
        raise _error(col, pos, reason)
    return decode


decode_typed_array = _no_row_format(
    "MYSQL_TYPE_TYPED_ARRAY (20) is the server-internal type of multi-valued index columns; MySQL gives it "
    "no row-image size (calc_field_size) and mysqlbinlog cannot print it")
decode_invalid = _no_row_format("MYSQL_TYPE_INVALID (243) is a placeholder, never a real column type")
decode_bool = _no_row_format("MYSQL_TYPE_BOOL (244) is a placeholder MySQL does not use for columns")


# --------------------------------------------------------------------------
# Binary JSON (sql-common/json_binary.cc)

_JSONB_SMALL_OBJECT, _JSONB_LARGE_OBJECT, _JSONB_SMALL_ARRAY, _JSONB_LARGE_ARRAY = 0x00, 0x01, 0x02, 0x03
_JSONB_LITERAL, _JSONB_INT16, _JSONB_UINT16, _JSONB_INT32, _JSONB_UINT32 = 0x04, 0x05, 0x06, 0x07, 0x08
_JSONB_INT64, _JSONB_UINT64, _JSONB_DOUBLE, _JSONB_STRING, _JSONB_OPAQUE = 0x09, 0x0A, 0x0B, 0x0C, 0x0F
_JSON_LITERALS = {0x00: None, 0x01: True, 0x02: False}
_JSON_FIXED = {  # type -> (size, signed)
    _JSONB_INT16: (2, True), _JSONB_UINT16: (2, False), _JSONB_INT32: (4, True), _JSONB_UINT32: (4, False),
    _JSONB_INT64: (8, True), _JSONB_UINT64: (8, False),
}


def _json_error(message: str) -> ValueDecodeError:
    return ValueDecodeError(f"binary JSON: {message}")


def _json_slice(data: bytes, start: int, size: int) -> bytes:
    if start < 0 or size < 0 or start + size > len(data):
        raise _json_error(f"needs {size} bytes at {start}, value is {len(data)} bytes")
    return data[start:start + size]


def _json_varlen(data: bytes, pos: int) -> tuple[int, int]:
    """read_variable_length: 7 bits per byte, least significant first, high bit = more (max 5 bytes)."""
    value = 0
    for i in range(5):
        byte = _json_slice(data, pos + i, 1)[0]
        value |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            if value > 0xFFFFFFFF:
                raise _json_error("variable-length integer exceeds 32 bits")
            return value, pos + i + 1
    raise _json_error("variable-length integer longer than 5 bytes")


def _json_utf8(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _json_error(f"string is not utf-8: {exc.reason}") from None


def _json_opaque(type_code: int, raw: bytes) -> object:
    if type_code == NEWDECIMAL:
        if len(raw) < 2:
            raise _json_error("opaque DECIMAL without precision and scale")
        precision, scale = raw[0], raw[1]
        if not (1 <= precision <= 65 and 0 <= scale <= precision) or \
                len(raw) - 2 != decimal_binary_size(precision, scale):
            raise _json_error(f"opaque DECIMAL({precision},{scale}) of {len(raw) - 2} bytes")
        column = Column(NEWDECIMAL, {"precision": precision, "scale": scale}, name="json")
        return _bin2decimal(raw[2:], precision, scale, column, 0)
    if type_code in (DATE, TIME, DATETIME, TIMESTAMP):
        if len(raw) != 8:
            raise _json_error(f"opaque temporal value of {len(raw)} bytes, not 8")
        packed = int.from_bytes(raw, "little", signed=True)
        column = Column(type_code, {}, name="json")
        if type_code == TIME:
            return _time_from_packed(packed, column, 0)
        value = _datetime_from_packed(packed, 6, column, 0)
        if type_code == DATE:
            return value.date() if isinstance(value, dt.datetime) else value[:10]
        return value
    return JsonOpaque(type_code, raw)


#: Nesting MySQL allows in a JSON document (JSON_DOCUMENT_MAX_DEPTH).
JSON_MAX_DEPTH = 100


def _json_container(data: bytes, start: int, large: bool, is_object: bool, walk: list[int]) -> object:
    """An object or array whose header (count, size) starts at data[start]; offsets are relative to it.
    `walk` is [depth, values left]: a document nests JSON_MAX_DEPTH deep at most, and its values
    take bytes of their own, so one whose offsets point back into it (itself, or one value from
    many places) is refused instead of decoded forever."""
    if walk[0] >= JSON_MAX_DEPTH:
        raise _json_error(f"nested deeper than {JSON_MAX_DEPTH}")
    width = 4 if large else 2
    head = _json_slice(data, start, 2 * width)
    count, size = int.from_bytes(head[:width], "little"), int.from_bytes(head[width:], "little")
    body = _json_slice(data, start, size)
    key_entry, value_entry = width + 2, 1 + width
    entries_at = 2 * width + (count * key_entry if is_object else 0)
    if entries_at + count * value_entry > size:
        raise _json_error(f"header of {count} entries does not fit in {size} bytes")
    walk[1] -= count
    if walk[1] < 0:
        raise _json_error("more values than the document has bytes for (offsets that point back)")
    values = []
    walk[0] += 1
    for i in range(count):
        entry = body[entries_at + i * value_entry: entries_at + (i + 1) * value_entry]
        vtype = entry[0]
        if vtype in (_JSONB_LITERAL, _JSONB_INT16, _JSONB_UINT16) or \
                (large and vtype in (_JSONB_INT32, _JSONB_UINT32)):
            values.append(_json_scalar(vtype, entry, 1))
        else:
            values.append(_json_value(vtype, body, int.from_bytes(entry[1:], "little"), walk))
    walk[0] -= 1
    if not is_object:
        return values
    keys = []
    for i in range(count):
        entry = body[2 * width + i * key_entry: 2 * width + (i + 1) * key_entry]
        offset, length = int.from_bytes(entry[:width], "little"), int.from_bytes(entry[width:], "little")
        keys.append(_json_utf8(_json_slice(body, offset, length)))
    return dict(zip(keys, values))


def _json_scalar(vtype: int, data: bytes, pos: int) -> object:
    if vtype == _JSONB_LITERAL:
        byte = _json_slice(data, pos, 1)[0]
        if byte not in _JSON_LITERALS:
            raise _json_error(f"unknown literal {byte:#04x}")
        return _JSON_LITERALS[byte]
    if vtype in _JSON_FIXED:
        size, signed = _JSON_FIXED[vtype]
        return int.from_bytes(_json_slice(data, pos, size), "little", signed=signed)
    if vtype == _JSONB_DOUBLE:
        return struct.unpack("<d", _json_slice(data, pos, 8))[0]
    if vtype == _JSONB_STRING:
        length, at = _json_varlen(data, pos)
        return _json_utf8(_json_slice(data, at, length))
    if vtype == _JSONB_OPAQUE:
        type_code = _json_slice(data, pos, 1)[0]
        length, at = _json_varlen(data, pos + 1)
        return _json_opaque(type_code, _json_slice(data, at, length))
    raise _json_error(f"unknown value type {vtype:#04x}")


def _json_value(vtype: int, data: bytes, pos: int, walk: list[int]) -> object:
    if vtype in (_JSONB_SMALL_OBJECT, _JSONB_LARGE_OBJECT, _JSONB_SMALL_ARRAY, _JSONB_LARGE_ARRAY):
        return _json_container(data, pos, vtype in (_JSONB_LARGE_OBJECT, _JSONB_LARGE_ARRAY),
                               vtype in (_JSONB_SMALL_OBJECT, _JSONB_LARGE_OBJECT), walk)
    return _json_scalar(vtype, data, pos)


def decode_json(data: bytes) -> object:
    """Decode a MySQL binary JSON document (a type byte, then the value). Empty input is null."""
    data = bytes(data)
    if not data:
        return None
    return _json_value(data[0], data, 1, [0, len(data)])


_JSON_DIFF_OPERATIONS = {0: "REPLACE", 1: "INSERT", 2: "REMOVE"}


#: First byte of a packed integer -> bytes that follow it (below 0xfb: none, the byte is the value).
_PACKED_INT_SIZES = {0xFC: 2, 0xFD: 3, 0xFE: 8}


def packed_int(buf: bytes, pos: int) -> tuple[int, int]:
    """A packed integer (net_field_length, mysys/pack.cc): 1 byte below 251, else 0xfc + 2,
    0xfd + 3 or 0xfe + 8 bytes little-endian. Returns (value, position after it)."""
    if not 0 <= pos < len(buf):
        raise ValueDecodeError(f"packed integer at offset {pos} is past the end ({len(buf)} bytes)")
    first = buf[pos]
    if first < 0xFB:
        return first, pos + 1
    size = _PACKED_INT_SIZES.get(first)
    if size is None:
        raise ValueDecodeError(f"bad packed integer first byte {first:#04x} at offset {pos}")
    end = pos + 1 + size
    if end > len(buf):
        raise ValueDecodeError(f"packed integer at offset {pos} runs past the end ({len(buf)} bytes)")
    return int.from_bytes(buf[pos + 1:end], "little"), end


def decode_json_diff(data: bytes) -> list[JsonDiff]:
    """A partial JSON update (PARTIAL_UPDATE_ROWS_EVENT after image): operation byte, packed path
    length and path, then (except REMOVE) packed value length and a binary JSON value."""
    data, pos, diffs = bytes(data), 0, []
    while pos < len(data):
        op = data[pos]
        if op not in _JSON_DIFF_OPERATIONS:
            raise _json_error(f"unknown JSON diff operation {op}")
        length, pos = packed_int(data, pos + 1)
        path = _json_utf8(_json_slice(data, pos, length))
        pos += length
        value = None
        if op != 2:
            length, pos = packed_int(data, pos)
            value = decode_json(_json_slice(data, pos, length))
            pos += length
        diffs.append(JsonDiff(_JSON_DIFF_OPERATIONS[op], path, value))
    return diffs


# --------------------------------------------------------------------------
# JSON text, printed as MySQL's Json_wrapper::to_string does (sql-common/json_dom.cc)

_JSON_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _json_quote(text: str) -> str:
    """double_quote(): escape '"', '\\', \\b \\f \\n \\r \\t and other bytes <= 0x1f as \\u00xx."""
    out = []
    for ch in text:
        if ch in _JSON_ESCAPES:
            out.append(_JSON_ESCAPES[ch])
        elif ch <= "\x1f":
            out.append(f"\\u00{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _gcvt(value: float) -> str:
    """my_gcvt(value, MY_GCVT_ARG_DOUBLE, MY_GCVT_MAX_FIELD_WIDTH): the shortest round-trip digits,
    in 'f' format when the decimal exponent is -14..15 (or the number has a fraction), else 'e'
    format without '+' or leading zeros in the exponent."""
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    if not math.isfinite(value):
        raise ValueError(f"JSON has no text for {value!r}")
    _, digit_tuple, exponent = decimal.Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    exponent += len(digit_tuple) - len(digits)
    decpt = len(digits) + exponent        # value = 0.DIGITS * 10**decpt
    sign = "-" if value < 0 else ""
    if -14 <= decpt <= 15 or len(digits) > decpt > 15:
        if decpt <= 0:
            return f"{sign}0.{'0' * -decpt}{digits}"
        if decpt < len(digits):
            return f"{sign}{digits[:decpt]}.{digits[decpt:]}"
        return f"{sign}{digits}{'0' * (decpt - len(digits))}"
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{decpt - 1}"


def _json_double(value: float) -> str:
    text = _gcvt(value)
    return text if "." in text or "e" in text else text + ".0"


def _base64_mysql(data: bytes) -> str:
    """mysys base64_encode: standard alphabet with padding, a newline after every 76 characters."""
    encoded = base64.b64encode(data).decode("ascii")
    return "\n".join(encoded[i:i + 76] for i in range(0, len(encoded), 76))


def _json_temporal_text(value: object) -> str:
    if isinstance(value, dt.datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S") + f".{value.microsecond:06d}"
    if isinstance(value, dt.date):
        return value.isoformat()
    assert isinstance(value, dt.timedelta)
    sign = "-" if value < dt.timedelta(0) else ""
    value = abs(value)
    seconds = value.days * 86400 + value.seconds
    return f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}.{value.microseconds:06d}"


def json_text(value: object) -> str:
    """Render a decoded JSON value as MySQL prints JSON: ', ' and ': ' separators, doubles via
    my_gcvt (with '.0' added to integral values), decimals with their scale, opaque temporals as
    quoted 'YYYY-MM-DD HH:MM:SS.ffffff' text, other opaque values as "base64:typeNN:..."."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _json_double(value)
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, str):
        return _json_quote(value)
    if isinstance(value, (dt.date, dt.timedelta)):
        return _json_quote(_json_temporal_text(value))
    if isinstance(value, JsonOpaque):
        if value.type_code == VAR_STRING:      # opaque strings print as plain JSON strings
            return _json_quote(value.data.decode("utf-8", errors="replace"))
        return _json_quote(f"base64:type{value.type_code}:{_base64_mysql(value.data)}")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_json_quote(str(k))}: {json_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(json_text(v) for v in value) + "]"
    raise TypeError(f"not a decoded JSON value: {type(value).__name__}")


# --------------------------------------------------------------------------
# The dispatch table

#: Binlog column type code -> decoder(buf, pos, col) -> (value, position after it).
COLUMN_TYPES: dict[int, Decoder] = {
    DECIMAL: decode_old_decimal,
    TINY: decode_tiny,
    SHORT: decode_short,
    LONG: decode_long,
    FLOAT: decode_float,
    DOUBLE: decode_double,
    NULL: decode_null,
    TIMESTAMP: decode_timestamp,
    LONGLONG: decode_longlong,
    INT24: decode_int24,
    DATE: decode_date,
    TIME: decode_time,
    DATETIME: decode_datetime,
    YEAR: decode_year,
    NEWDATE: decode_date,
    VARCHAR: decode_varchar,
    BIT: decode_bit,
    TIMESTAMP2: decode_timestamp2,
    DATETIME2: decode_datetime2,
    TIME2: decode_time2,
    TYPED_ARRAY: decode_typed_array,
    BLOB_COMPRESSED: decode_blob_compressed,
    VARCHAR_COMPRESSED: decode_varchar_compressed,
    VECTOR: decode_vector,
    INVALID: decode_invalid,
    BOOL: decode_bool,
    JSON: decode_json_column,
    NEWDECIMAL: decode_newdecimal,
    ENUM: decode_enum,
    SET: decode_set,
    TINY_BLOB: decode_blob,
    MEDIUM_BLOB: decode_blob,
    LONG_BLOB: decode_blob,
    BLOB: decode_blob,
    VAR_STRING: decode_varchar,
    STRING: decode_string,
    GEOMETRY: decode_geometry,
}


def decode_value(buf: bytes, pos: int, col: Column) -> tuple[object, int]:
    """Decode the value of `col` at `buf[pos]`; returns (value, position after it)."""
    decoder = COLUMN_TYPES.get(col.type_code)
    if decoder is None:
        raise _error(col, pos, f"unknown column type {col.type_code}")
    return decoder(buf, pos, col)


# --------------------------------------------------------------------------
# Inline fast paths
#
# rows.py compiles one Python function per row image layout (the present columns of a
# table) instead of calling `decode_value` once per value. `inline_source` gives the
# statements of one column. They are a fast path only: they skip the bounds checks and the
# error messages, so the caller must run them on `bytes` (never bytearray or memoryview),
# and must discard their result, and decode the image again with `decode_value`, when they
# raise anything or leave `pos` beyond the end of the buffer. Otherwise value and position
# are exactly `decode_value`'s. Column types without an inline form call their
# COLUMN_TYPES decoder directly.

_UNPACK: dict[str, Callable] = {fmt: struct.Struct(fmt).unpack_from
                                for fmt in ("<b", "<B", "<h", "<H", "<i", "<I", "<q", "<Q", "<f", "<d")}
#: (type code, unsigned) -> struct format of the fixed-size numbers.
_FIXED_FORMATS = {
    (TINY, False): "<b", (TINY, True): "<B", (SHORT, False): "<h", (SHORT, True): "<H",
    (LONG, False): "<i", (LONG, True): "<I", (LONGLONG, False): "<q", (LONGLONG, True): "<Q",
    (FLOAT, False): "<f", (FLOAT, True): "<f", (DOUBLE, False): "<d", (DOUBLE, True): "<d",
}


#: Name under which inline_source puts the MySQL latin1 translation table into the globals it fills;
#: its presence says the statements read the `text` variable (see inline_source).
LATIN1_TEXT_TABLE = "_mysql_latin1_table"


def _inline_text(col: Column, var: str, names: dict[str, Any], text: bool) -> list[str]:
    """The bytes buf[start:pos] -> `var`, as _text_or_bytes(data, col, pos) when it does not raise."""
    codec = codec_for(col.charset)
    if codec is None:
        return [f"{var} = buf[start:pos]"]
    if codec == "cp1252":
        if text:
            # `text` is buf.decode("latin-1"): one character per byte, so the same slice.
            names[LATIN1_TEXT_TABLE] = _MYSQL_LATIN1_TABLE
            return [f"{var} = text[start:pos]",
                    f"if not {var}.isascii():",
                    f"    {var} = {var}.translate({LATIN1_TEXT_TABLE})"]
        names["_mysql_latin1"] = _mysql_latin1
        return ["data = buf[start:pos]", f"{var} = data.decode('ascii') if data.isascii() else _mysql_latin1(data)"]
    return [f"{var} = buf[start:pos].decode({codec!r})"]


def _inline_length_prefixed(prefix: int) -> list[str]:
    """`start` <- where the bytes after a little-endian length of `prefix` (1-4) bytes begin;
    `pos` <- where they end."""
    if prefix == 1:
        length = "buf[pos]"
    else:
        length = " | ".join(f"buf[pos + {j}] << {8 * j}" if j else "buf[pos]" for j in range(prefix))
    return [f"start = pos + {prefix}", f"pos = start + ({length})"]


def fixed_format(col: Column) -> str | None:
    """The struct format ('<i', '<Q', '<d', ...) of a column whose value is one fixed-size
    little-endian number that `decode_value` returns as struct unpacks it; else None."""
    return _FIXED_FORMATS.get((col.type_code, bool(col.unsigned)))


def inline_source(col: Column, var: str, names: dict[str, Any], text: bool = False) -> list[str]:
    """Statements that decode one non-NULL value of `col` in `buf` at `pos` into `var` and
    advance `pos`, as `decode_value` does (see the contract above). Objects they refer to are
    added to `names` (the globals of the compiled function), under names made from `var`.
    With `text`, the statements may also read a variable `text` that holds
    buf.decode("latin-1"), for MySQL latin1 columns (LATIN1_TEXT_TABLE then is in `names`)."""
    code = col.type_code
    meta = col.meta if isinstance(col.meta, dict) else {}
    fmt = fixed_format(col)
    if fmt is not None:
        names[f"_unpack_{var}"] = _UNPACK[fmt]
        return [f"{var} = _unpack_{var}(buf, pos)[0]", f"pos += {struct.calcsize(fmt)}"]
    if code == INT24:
        return [f"{var} = int.from_bytes(buf[pos:pos + 3], 'little', signed={not col.unsigned})", "pos += 3"]
    if code == YEAR:
        return [f"{var} = buf[pos]", f"{var} = 1900 + {var} if {var} else 0", "pos += 1"]
    if code in (STRING, VARCHAR, VAR_STRING):
        max_length = meta.get("max_length")
        if (isinstance(max_length, int) and meta.get("real_type", STRING) not in (ENUM, SET)):
            lines = _inline_length_prefixed(1 if max_length < 256 else 2)
            if code == STRING and col.charset == BINARY_COLLATION:
                return lines + [f"{var} = buf[start:pos]", f"if len({var}) < {max_length}:",
                                f"    {var} += bytes({max_length} - len({var}))"]
            return lines + _inline_text(col, var, names, text)
    if code in (TINY_BLOB, BLOB, MEDIUM_BLOB, LONG_BLOB):
        prefix = meta.get("pack_length", _DEFAULT_PACK_LENGTH.get(code))
        if isinstance(prefix, int) and 1 <= prefix <= 4:
            return _inline_length_prefixed(prefix) + _inline_text(col, var, names, text)
    decoder = COLUMN_TYPES.get(code)
    if decoder is None:
        return ["raise ValueError('unknown column type')"]      # decode_value says which
    names[f"_decode_{var}"], names[f"_col_{var}"] = decoder, col
    return [f"{var}, pos = _decode_{var}(buf, pos, _col_{var})"]
