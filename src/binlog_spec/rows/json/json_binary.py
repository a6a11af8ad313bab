"""MySQL's binary JSON (sql-common/json_binary.cc) and the JSON diffs of PARTIAL_UPDATE_ROWS_EVENT
(sql/json_diff.cc), decoded to Python values."""
from __future__ import annotations

import datetime as dt
import struct
from dataclasses import dataclass
from typing import Any, NamedTuple

from binlog_spec.binlog.fields.packed import packed_int
from binlog_spec.errors import ValueDecodeError
from binlog_spec.rows.column_types import Column, DATE, DATETIME, NEWDECIMAL, TIME, TIMESTAMP
from binlog_spec.rows.scalars import _bin2decimal, _datetime_from_packed, _time_from_packed, decimal_binary_size


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
