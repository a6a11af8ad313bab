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

import struct
import zlib

from binlog_spec.errors import ValueDecodeError
from binlog_spec.rows.charsets import BINARY_COLLATION, _mysql_latin1, codec_for
from binlog_spec.rows.column_types import (DEFAULT_PACK_LENGTH, BIT, BLOB, BLOB_COMPRESSED, BOOL, Column, DATE,
                                           DATETIME, DATETIME2, DECIMAL, DOUBLE, Decoder, ENUM, FLOAT, GEOMETRY,
                                           INT24, INVALID, JSON, LONG, LONGLONG, LONG_BLOB, MEDIUM_BLOB, NEWDATE,
                                           NEWDECIMAL, NULL, SET, SHORT, STRING, TIME, TIME2, TIMESTAMP,
                                           TIMESTAMP2, TINY, TINY_BLOB, TYPED_ARRAY, VARCHAR, VARCHAR_COMPRESSED,
                                           VAR_STRING, VECTOR, YEAR)
from binlog_spec.rows.json.json_binary import decode_json
from binlog_spec.rows.scalars import (_error, _length_prefixed, _meta_int, _take, decode_bit, decode_date,
                                      decode_datetime, decode_datetime2, decode_double, decode_float,
                                      decode_int24, decode_long, decode_longlong, decode_newdecimal,
                                      decode_old_decimal, decode_short, decode_time, decode_time2,
                                      decode_timestamp, decode_timestamp2, decode_tiny, decode_year)


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


# BLOB_COMPRESSED has no default: its metadata always gives the length size (1-4).


def _blob_bytes(buf: bytes, pos: int, col: Column) -> tuple[bytes, int]:
    meta = col.meta if isinstance(col.meta, dict) else {}
    prefix = meta.get("pack_length", DEFAULT_PACK_LENGTH.get(col.type_code))
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
