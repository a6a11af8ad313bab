"""The dialects of the `-v` lines (MySQL or MariaDB, by version) and the text of one value and of its
column type as mysqlbinlog and mariadb-binlog print them (log_event_print_value, sql/log_event.cc)."""
from __future__ import annotations

import datetime as dt
import decimal
import re
import zlib
from dataclasses import dataclass
from typing import Any

from binlog_spec.rows.json import json_text
from binlog_spec.rows.charsets import BINARY_COLLATION
from binlog_spec.rows.column_types import (BIT, BLOB, BLOB_COMPRESSED, DATE, DATETIME, DATETIME2, DOUBLE, ENUM,
                                           FLOAT, GEOMETRY, INT24, JSON, LONG, LONGLONG, LONG_BLOB, MEDIUM_BLOB,
                                           NEWDATE, NEWDECIMAL, SET, SHORT, STRING, TIME, TIME2, TIMESTAMP,
                                           TIMESTAMP2, TINY, TINY_BLOB, VARCHAR, VARCHAR_COMPRESSED, VAR_STRING,
                                           VECTOR, YEAR)
from binlog_spec.rows import values


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


@dataclass(frozen=True)
class Dialect:
    """Which variant of the output to print (see the module doc)."""

    flavor: str = "mysql"
    quote_identifiers: bool = True
    quote_style: str = "table"           # "table" (MySQL 8.0+), "hex-quotes" (5.7), "control" (older, MariaDB)
    null_type_carryover: bool = False    # MySQL < 5.7, MariaDB < 10.2
    quote_old_datetime: bool = False     # MariaDB
    signed_old_time: bool = False        # MariaDB
    print_geometry: bool = False         # MariaDB
    print_json: bool = True              # MySQL 5.7+
    print_vector: bool = True            # MySQL 9.0+
    # MariaDB COMPRESSED columns: the server variables the record was written with
    column_compression_threshold: int = 100
    column_compression_zlib_level: int = 6
    column_compression_zlib_wrap: bool = False


def _version(version: str | tuple[int, ...] | None) -> tuple[int, ...] | None:
    if version is None or isinstance(version, tuple):
        return version
    return tuple(int(p) for p in re.findall(r"\d+", version.split("-")[0])[:3])


def dialect(flavor: str = "mysql", version: str | tuple[int, ...] | None = None) -> Dialect:
    """The dialect of `mysqlbinlog` (flavor "mysql") or `mariadb-binlog` ("mariadb") of a version
    ("5.6.35", (8, 0), ...); None means a current release."""
    v = _version(version)
    if flavor == "mariadb":
        return Dialect(flavor="mariadb", quote_identifiers=True, quote_style="control",
                       null_type_carryover=v is not None and v < (10, 2),
                       quote_old_datetime=True, signed_old_time=True, print_geometry=True,
                       print_json=False, print_vector=False)
    if flavor != "mysql":
        raise ValueError(f"flavor is 'mysql' or 'mariadb', not {flavor!r}")
    if v is None:
        return Dialect()
    quoted = v >= (5, 6, 8) or (5, 5, 29) <= v < (5, 6) or (5, 1, 67) <= v < (5, 2)
    style = "table" if v >= (8, 0) else "hex-quotes" if v >= (5, 7) else "control"
    return Dialect(flavor="mysql", quote_identifiers=quoted, quote_style=style,
                   null_type_carryover=v < (5, 7), print_json=v >= (5, 7), print_vector=v >= (9, 0))


def raw_meta(col: values.Column) -> int:
    """The column metadata as the 16-bit number the tools print (table_def::field_metadata)."""
    m = col.meta if isinstance(col.meta, dict) else {}
    t = col.type_code
    if t in (STRING, ENUM, SET):
        return (m.get("byte0", 0) << 8) | m.get("byte1", 0)
    if t == BIT:
        return (m.get("bytes", 0) << 8) | m.get("bits", 0)
    if t == NEWDECIMAL:
        return (m.get("precision", 0) << 8) | m.get("scale", 0)
    if t in (VARCHAR, VAR_STRING, VARCHAR_COMPRESSED):
        return m.get("max_length", 0)
    if t in (TIMESTAMP2, DATETIME2, TIME2):
        return m.get("fsp", 0)
    return m.get("pack_length", 0)


def _print_type(col: values.Column, meta: int) -> tuple[int, int]:
    """(type, length) as log_event_print_value sees them: table_def::type() turns STRING into ENUM/SET
    when the first metadata byte says so; a CHAR over 255 bytes keeps bits 8-9 of its length there."""
    t, length = col.type_code, 0
    if t == STRING:
        if meta >> 8 in (ENUM, SET):
            return meta >> 8, meta & 0xFF
        if meta >= 256:
            byte0, byte1 = meta >> 8, meta & 0xFF
            if byte0 & 0x30 != 0x30:
                return byte0 | 0x30, byte1 | (((byte0 & 0x30) ^ 0x30) << 4)
            return t, byte1
        return t, meta
    return t, length


_CP1252_BACK = {(bytes([b]).decode("cp1252", errors="ignore") or chr(b)): b for b in range(256)}


def _text_bytes(value: Any, col: values.Column) -> bytes:
    """The stored bytes of a string value (str values are re-encoded with the column charset)."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if not isinstance(value, str):
        raise TypeError(f"not a string value: {value!r}")
    codec = values.codec_for(col.charset) or "utf-8"
    if codec == "cp1252":  # MySQL latin1: every byte maps to one character
        return bytes(_CP1252_BACK[ch] for ch in value)
    return value.encode(codec)


def _member_bytes(member: Any, col: values.Column) -> bytes:
    """The bytes of an ENUM/SET member (values.py decodes them as UTF-8 when the charset is unknown)."""
    if isinstance(member, (bytes, bytearray)):
        return bytes(member)
    return member.encode("utf-8") if col.charset is None else _text_bytes(member, col)


def _enum_index(value: Any, col: values.Column) -> int:
    if isinstance(value, int):
        return value
    raw = _member_bytes(value, col)
    members = [_member_bytes(m, col) for m in (col.enum_values or ())]
    if raw in members:
        return members.index(raw) + 1
    if raw == b"":
        return 0
    raise ValueError(f"{value!r} is not a member of ENUM {members!r}")


def _set_mask(value: Any, col: values.Column) -> int:
    if isinstance(value, int):
        return value
    members = [_member_bytes(m, col) for m in (col.set_values or ())]
    mask = 0
    for item in value:
        mask |= 1 << members.index(_member_bytes(item, col))
    return mask


_DATE_RE = re.compile(r"(-?\d+)-(\d+)-(\d+)(?: (\d+):(\d+):(\d+)(?:\.(\d+))?)?$")


def _date_parts(value: Any) -> tuple[int, int, int, int, int, int, int]:
    """(year, month, day, hour, minute, second, microsecond) of a date, datetime or zero-date str."""
    if isinstance(value, dt.datetime):
        return (value.year, value.month, value.day, value.hour, value.minute, value.second,
                value.microsecond)
    if isinstance(value, dt.date):
        return value.year, value.month, value.day, 0, 0, 0, 0
    m = _DATE_RE.match(str(value))
    if not m:
        raise ValueError(f"not a date: {value!r}")
    y, mo, d, h, mi, s, frac = m.groups()
    usec = int((frac or "0").ljust(6, "0")[:6])
    return int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0), usec


def _epoch_parts(value: Any) -> tuple[int, int]:
    """(seconds, microseconds) since the epoch of a TIMESTAMP value; the zero timestamp is (0, 0)."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.timezone.utc)
        delta = value - _EPOCH
        return delta.days * 86400 + delta.seconds, delta.microseconds
    if isinstance(value, (int, float)):
        return int(value), 0
    return 0, _date_parts(value)[6]


def _time_parts(value: dt.timedelta) -> tuple[bool, int, int, int, int]:
    """(negative, hours, minutes, seconds, microseconds) of a TIME value."""
    negative = value < dt.timedelta(0)
    value = -value if negative else value
    total = value.days * 86400 + value.seconds
    return negative, total // 3600, total // 60 % 60, total % 60, value.microseconds


def _frac(usec: int, dec: int) -> str:
    """my_useconds_to_str: '.' and the first `dec` digits of the microseconds."""
    return f".{usec:06d}"[:dec + 1] if dec > 0 else ""


def _mariadb_compressed(data: bytes, d: Dialect) -> bytes:
    """The stored record of a MariaDB COMPRESSED column value (sql/field_comp.cc), which is what the
    tool prints: nothing for '', a 0x00 header and the bytes below the compression threshold or when
    deflate does not make it shorter, else a header (0x80, +8 for a raw deflate stream, + the size of
    the big-endian original length), that length and the deflate stream. values.py gives the
    inflated value; deflate with the server's settings gives the same stream back."""
    if not data:
        return b""
    if len(data) >= d.column_compression_threshold and len(data) > 1 and d.column_compression_zlib_level > 0:
        size_len = 1 if len(data) < 1 << 8 else 2 if len(data) < 1 << 16 else 3 if len(data) < 1 << 24 else 4
        wbits = zlib.MAX_WBITS if d.column_compression_zlib_wrap else -zlib.MAX_WBITS
        packer = zlib.compressobj(d.column_compression_zlib_level, zlib.DEFLATED, wbits)
        stream = packer.compress(data) + packer.flush()
        record = bytes([0x80 + size_len + (0 if d.column_compression_zlib_wrap else 8)]) + \
            len(data).to_bytes(size_len, "big") + stream
        if len(record) <= len(data):  # the server deflates into a buffer of the original's size
            return record
    return b"\x00" + data


_ESCAPES_80 = {0x08: b"\\b", 0x0C: b"\\f", 0x0A: b"\\n", 0x0D: b"\\r", 0x09: b"\\t", 0x5C: b"\\\\",
               0x27: b"\\'"}


def _quote(data: bytes, d: Dialect) -> str:
    """my_b_write_quoted: the bytes in single quotes, control bytes escaped."""
    out = bytearray(b"'")
    table, hex_quotes = d.quote_style == "table", d.quote_style == "hex-quotes"
    for b in data:
        if table and b in _ESCAPES_80:
            out += _ESCAPES_80[b]
        elif b < 0x20 or (hex_quotes and b in (0x27, 0x5C)):
            out += b"\\x%02x" % b
        else:
            out.append(b)
    out += b"'"
    return out.decode("utf-8", errors="surrogateescape")


def _bits(data: bytes, nbits: int) -> str:
    """my_b_write_bit: the last `nbits` bits of the bytes, most significant first."""
    text = "".join(f"{b:08b}" for b in data)
    return "b'" + text[len(text) - nbits:] + "'" if nbits else "b''"


def _signed(value: int, size: int) -> str:
    """my_b_write_sint32_and_uint32 (and its LONGLONG twin): signed, and unsigned when negative."""
    bits = size * 8
    raw = value & ((1 << bits) - 1)
    signed = raw - (1 << bits) if raw >> (bits - 1) else raw
    return f"{signed} ({raw})" if signed < 0 else str(signed)


_INT_TYPES = {TINY: (1, "TINYINT"), SHORT: (2, "SHORTINT"), INT24: (3, "MEDIUMINT"), LONG: (4, "INT"),
              LONGLONG: (8, "LONGINT")}


_BLOB_NAMES = {1: "TINYBLOB/TINYTEXT", 2: "BLOB/TEXT", 3: "MEDIUMBLOB/MEDIUMTEXT", 4: "LONGBLOB/LONGTEXT"}


class _CannotPrint(Exception):
    """The tool stops printing the event here; the message is what it printed instead of a value."""


def _cannot_print(col: values.Column, meta: int, d: Dialect) -> _CannotPrint | None:
    """What the tool prints for a column whose type or metadata it cannot handle (None: it can).
    MySQL prints a message on the line and stops the event; MariaDB complains on stderr only."""
    t, _ = _print_type(col, meta)
    if t == ENUM and meta & 0xFF not in (1, 2):
        message = f"!! Unknown ENUM packlen={meta & 0xFF}"
    elif t in (BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB) and meta not in _BLOB_NAMES:
        message = "!! Unknown BLOB packlen=0"
    elif _type_string(col, meta, d) == "":
        message = f"!! Don't know how to handle column type={t} meta={meta} ({meta:04x})"
    else:
        return None
    return _CannotPrint(message if d.flavor == "mysql" else "")


def _type_string(col: values.Column, meta: int, d: Dialect, value: Any = None) -> str:
    """The type string of the -vv comment."""
    t, length = _print_type(col, meta)
    if t in _INT_TYPES:
        return _INT_TYPES[t][1]
    simple = {FLOAT: "FLOAT", DOUBLE: "DOUBLE", TIMESTAMP: "TIMESTAMP", DATETIME: "DATETIME", TIME: "TIME",
              DATE: "DATE", NEWDATE: "DATE", YEAR: "YEAR"}
    if t in simple:
        return simple[t]
    if t == NEWDECIMAL:
        return f"DECIMAL({meta >> 8},{meta & 0xFF})"
    if t == BIT:
        return f"BIT({(meta >> 8) * 8 + (meta & 0xFF)})"
    if t in (TIMESTAMP2, DATETIME2, TIME2):
        return f"{({TIMESTAMP2: 'TIMESTAMP', DATETIME2: 'DATETIME', TIME2: 'TIME'})[t]}({meta})"
    if t == ENUM:
        return {1: "ENUM(1 byte)", 2: "ENUM(2 bytes)"}.get(meta & 0xFF, "")
    if t == SET:
        return f"SET({meta & 0xFF} bytes)"
    if t in (BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB):
        return _BLOB_NAMES.get(meta, "")
    if t == BLOB_COMPRESSED and d.flavor == "mariadb":
        return _BLOB_NAMES.get(meta, "") + " COMPRESSED"
    if t in (VARCHAR, VAR_STRING):
        return f"VARSTRING({meta})"
    if t == VARCHAR_COMPRESSED and d.flavor == "mariadb":
        return f"VARSTRING({meta}) COMPRESSED"
    if t == STRING:
        return f"STRING({length})"
    if t == JSON and d.print_json:
        return "JSON"
    if t == GEOMETRY and d.print_geometry:
        return "GEOMETRY"
    if t == VECTOR and d.print_vector:
        dims = value and len(value) or 0
        return f"VECTOR({dims})"
    return ""


def _value_text(value: Any, col: values.Column, meta: int, d: Dialect) -> str:
    """The printed form of one non-NULL value."""
    t, _ = _print_type(col, meta)
    if t in _INT_TYPES:
        return _signed(value, _INT_TYPES[t][0])
    if t == NEWDECIMAL:
        return format(decimal.Decimal(value), "f")
    if t == FLOAT:
        return "%-20g" % value
    if t == DOUBLE:
        return "%-.20g" % value
    if t == BIT:
        nbits = (meta >> 8) * 8 + (meta & 0xFF)
        nbytes = (nbits + 7) // 8
        return _bits(int(value).to_bytes(nbytes, "big"), nbits)
    if t == TIMESTAMP:
        seconds, _ = _epoch_parts(value)
        return str(seconds - (1 << 32) if seconds >= 1 << 31 else seconds)  # "%d" of a uint32
    if t == TIMESTAMP2:
        seconds, usec = _epoch_parts(value)
        return f"{seconds}{_frac(usec, meta)}"
    if t == DATETIME:
        y, mo, day, h, mi, s, _ = _date_parts(value)
        text = f"{y:04d}-{mo:02d}-{day:02d} {h:02d}:{mi:02d}:{s:02d}"
        return f"'{text}'" if d.quote_old_datetime else text
    if t == DATETIME2:
        y, mo, day, h, mi, s, usec = _date_parts(value)
        return _quote(f"{y:04d}-{mo:02d}-{day:02d} {h:02d}:{mi:02d}:{s:02d}{_frac(usec, meta)}".encode(), d)
    if t == TIME:
        negative, h, mi, s, _ = _time_parts(value)
        hhmmss = h * 10000 + mi * 100 + s
        if d.signed_old_time:
            return f"'{'-' if negative else ''}{h:02d}:{mi:02d}:{s:02d}'"
        raw = (-hhmmss if negative else hhmmss) & 0xFFFFFF  # uint3korr of the signed value
        return f"'{raw // 10000:02d}:{raw % 10000 // 100:02d}:{raw % 100:02d}'"
    if t == TIME2:
        negative, h, mi, s, usec = _time_parts(value)
        return _quote(f"{'-' if negative else ''}{h:02d}:{mi:02d}:{s:02d}{_frac(usec, meta)}".encode(), d)
    if t in (DATE, NEWDATE):
        y, mo, day = _date_parts(value)[:3]
        return f"'{y:04d}:{mo:02d}:{day:02d}'"
    if t == YEAR:
        return f"{value if value else 1900:04d}"
    if t == ENUM:
        return str(_enum_index(value, col))
    if t == SET:
        size = meta & 0xFF
        return _bits(_set_mask(value, col).to_bytes(size, "little"), size * 8)
    if t == STRING and col.charset == BINARY_COLLATION and isinstance(value, (bytes, bytearray)):
        # BINARY(n): the server logs the value without its trailing 0x00 padding (Field_string::pack);
        # values.py puts the padding back, the tool prints what was logged.
        return _quote(bytes(value).rstrip(b"\x00"), d)
    if t in (BLOB_COMPRESSED, VARCHAR_COMPRESSED):
        return _quote(_mariadb_compressed(_text_bytes(value, col), d), d)
    if t in (BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, VARCHAR, VAR_STRING, STRING):
        return _quote(_text_bytes(value, col), d)
    if t == JSON and d.print_json:
        return _quote(json_text.json_text(value).encode("utf-8"), d)
    if t == GEOMETRY and d.print_geometry:
        raw = value if isinstance(value, (bytes, bytearray)) else \
            int(value["srid"]).to_bytes(4, "little") + bytes(value["wkb"])
        return _quote(bytes(raw), d)
    if t == VECTOR and d.print_vector:
        return "[" + ",".join("%.5e" % x for x in value) + "]" if value else "["
    raise TypeError(f"no printed form for type {t}")  # _cannot_print() stops these first


def _resolve(flavor: str | Dialect, version: str | tuple[int, ...] | None) -> Dialect:
    return flavor if isinstance(flavor, Dialect) else dialect(flavor, version)
