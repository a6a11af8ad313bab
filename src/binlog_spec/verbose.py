"""Row changes as `mysqlbinlog -v` / `-vv` and `mariadb-binlog -v` / `-vv` print them.

Both tools print every row of a rows event as pseudo-SQL comment lines::

    ### UPDATE `db`.`t`
    ### WHERE
    ###   @1=1 /* INT meta=0 nullable=0 is_null=0 */
    ###   @2='old' /* VARSTRING(80) meta=80 nullable=1 is_null=0 */
    ### SET
    ###   @1=1 /* INT meta=0 nullable=0 is_null=0 */
    ###   @2='new' /* VARSTRING(80) meta=80 nullable=1 is_null=0 */

`render_row_change(rc)` gives these lines (without newlines) for one
`rows.RowChange`; `render_rows(row_changes)` for a stream of them;
`parse_verbose(text)` cuts the `###` blocks out of a saved tool output.

The tools know only the TABLE_MAP: no column names, no signs (before 8.0's
optional metadata, and they ignore it anyway). So the renderer goes back from
our decoded values to the raw stored value and prints that the way the tool
does, in its own view:

* integers as signed, the unsigned reading added in parentheses when the
  signed one is negative: an INT UNSIGNED 4294967295 is ``-1 (4294967295)``
  (at -v and -vv alike);
* ENUM as its 1-based index, SET as the bits of its stored bytes (b'...'),
  BIT as b'...' of its declared width;
* DATE as 'YYYY:MM:DD', TIMESTAMP as the epoch seconds (TIMESTAMP2 with the
  fraction), YEAR as 1900 + byte (so YEAR 0000 prints 1900), DATETIME2 and
  TIME2 quoted;
* FLOAT as C's ``%-20g`` (padded to 20 characters), DOUBLE as ``%-.20g``;
* strings, BLOBs (and MariaDB GEOMETRY) as their stored bytes, quoted, with
  control bytes escaped;
* MySQL JSON as the quoted JSON text; MySQL 9 VECTOR as [%.5e,...].

Where the tools differ, a `Dialect` says which variant to print; `dialect()`
picks it from the flavor and the tool's version (the version boundaries marked
"~" are the nearest releases whose source was checked, not the exact change):

============================  =======================================================
quoting of strings            MySQL 8.0+: \\b \\f \\n \\r \\t \\\\ \\' and \\xNN for the
                              other bytes below 0x20 ("table"); MySQL ~5.7: \\xNN for
                              bytes below 0x20 and for ' and \\ ("hex-quotes"; late
                              5.6 releases do this too); MySQL 5.1-5.6 and MariaDB:
                              \\xNN for bytes below 0x20 only ("control")
db and table names            backquoted, backquotes doubled; MySQL before 5.1.67 /
                              5.5.29 / 5.6.8 printed them bare
the comment of a NULL column  MySQL before ~5.7 (and MariaDB before ~10.2) print the
                              type of the previous non-NULL column of the same image
                              there (``type=N`` when there is none): only printing a
                              value set the type string
old DATETIME (type 12)        MySQL unquoted, MariaDB quoted
old TIME (type 11)            MySQL reads the 3 bytes unsigned, MariaDB prints a sign
GEOMETRY                      MariaDB prints the stored bytes (SRID + WKB); MySQL
                              prints "!! Don't know how to handle column type=255
                              meta=4 (0004)" and stops printing the event
MariaDB COMPRESSED columns    the stored compressed record (see `_mariadb_compressed`)
============================  =======================================================

Not reproduced: MySQL 5.7 printed JSON as the quoted *binary* JSON document
(which a decoded value does not give back; it is rendered as 8.0 prints it);
PARTIAL_UPDATE_ROWS JSON diffs (`rows` does not decode them); a non-NULL JSON
of length 0 (values.py gives None for it, the same as SQL NULL); MySQL 9
VECTOR(N) takes N from the TABLE_MAP's dimensionality metadata, which TableDef
does not keep, so N is the value's own length (0 for NULL).

Bytes the tool writes as they are (>= 0x20) come back as text decoded as
UTF-8 with ``surrogateescape``, so a latin1 or binary value compares equal to
a saved output file read the same way (`read_output`).

Sources: sql/log_event.cc (`log_event_print_value`, `my_b_write_quoted`,
`my_b_write_bit`, `print_verbose_one_row`, `print_verbose`) of MySQL 5.6,
5.7, 8.0 and 9.x, and sql/log_event_client.cc of MariaDB.
"""
from __future__ import annotations

import datetime as dt
import decimal
import re
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from binlog_spec import values

__all__ = ["Dialect", "dialect", "render_row_change", "render_rows", "parse_verbose", "read_output",
           "raw_meta"]

# Type codes (include/field_types.h); MariaDB's compressed columns are 140 and 141.
(DECIMAL, TINY, SHORT, LONG, FLOAT, DOUBLE, NULL, TIMESTAMP, LONGLONG, INT24, DATE, TIME, DATETIME, YEAR,
 NEWDATE, VARCHAR, BIT, TIMESTAMP2, DATETIME2, TIME2) = range(20)
BLOB_COMPRESSED, VARCHAR_COMPRESSED = 140, 141
VECTOR, JSON, NEWDECIMAL, ENUM, SET = 242, 245, 246, 247, 248
TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, BLOB, VAR_STRING, STRING, GEOMETRY = range(249, 256)

_BINARY_COLLATION = 63
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_OP_WORDS = {"insert": ("INSERT INTO", "SET", None), "delete": ("DELETE FROM", "WHERE", None),
             "update": ("UPDATE", "WHERE", "SET")}


# --------------------------------------------------------------------------
# Dialects


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


# --------------------------------------------------------------------------
# Raw views of our values


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


# --------------------------------------------------------------------------
# Value printing (log_event_print_value)

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
    if t == STRING and col.charset == _BINARY_COLLATION and isinstance(value, (bytes, bytearray)):
        # BINARY(n): the server logs the value without its trailing 0x00 padding (Field_string::pack);
        # values.py puts the padding back, the tool prints what was logged.
        return _quote(bytes(value).rstrip(b"\x00"), d)
    if t in (BLOB_COMPRESSED, VARCHAR_COMPRESSED):
        return _quote(_mariadb_compressed(_text_bytes(value, col), d), d)
    if t in (BLOB, TINY_BLOB, MEDIUM_BLOB, LONG_BLOB, VARCHAR, VAR_STRING, STRING):
        return _quote(_text_bytes(value, col), d)
    if t == JSON and d.print_json:
        return _quote(values.json_text(value).encode("utf-8"), d)
    if t == GEOMETRY and d.print_geometry:
        raw = value if isinstance(value, (bytes, bytearray)) else \
            int(value["srid"]).to_bytes(4, "little") + bytes(value["wkb"])
        return _quote(bytes(raw), d)
    if t == VECTOR and d.print_vector:
        return "[" + ",".join("%.5e" % x for x in value) + "]" if value else "["
    raise TypeError(f"no printed form for type {t}")  # _cannot_print() stops these first


# --------------------------------------------------------------------------
# Rows (print_verbose_one_row, print_verbose)


def _quote_name(name: str, d: Dialect) -> str:
    return "`" + name.replace("`", "``") + "`" if d.quote_identifiers else name


def _image_lines(image: dict[str, Any], table: Any, d: Dialect, verbosity: int) -> tuple[list[str], bool]:
    """The column lines of one row image; False when the tool would stop inside it."""
    lines: list[str] = []
    index = {name: i for i, name in enumerate(table.names)}
    typestr = ""
    for name, value in sorted(image.items(), key=lambda kv: index[kv[0]]):
        i = index[name]
        col = table.columns[i]
        meta = raw_meta(col)
        is_null = value is None
        # Before ~5.7 a NULL is printed without looking at its type at all.
        stop = None if is_null and d.null_type_carryover else _cannot_print(col, meta, d)
        if stop is not None:
            lines.append(f"###   @{i + 1}={stop}")
            return lines, False
        if is_null:
            text = "NULL"
            if not d.null_type_carryover:
                typestr = _type_string(col, meta, d)
        else:
            text = _value_text(value, col, meta, d)
            typestr = _type_string(col, meta, d, value)
        line = f"###   @{i + 1}={text}"
        if verbosity > 1:
            shown = typestr if typestr else f"type={_print_type(col, meta)[0]}"
            nullable = int(bool(table.nullable[i])) if i < len(table.nullable) else 0
            line += f" /* {shown} meta={meta} nullable={nullable} is_null={int(is_null)} */"
        lines.append(line)
    return lines, True


def _render(rc: Any, d: Dialect, verbosity: int) -> tuple[list[str], bool]:
    command, first, second = _OP_WORDS[rc.op]
    table = rc.table_def
    lines = [f"### {command} {_quote_name(table.schema, d)}.{_quote_name(table.table, d)}",
             f"### {first}"]
    image = rc.after if rc.op == "insert" else rc.before
    body, complete = _image_lines(image or {}, table, d, verbosity)
    lines += body
    if complete and second is not None:
        lines.append(f"### {second}")
        body, complete = _image_lines(rc.after or {}, table, d, verbosity)
        lines += body
    return lines, complete


def _resolve(flavor: str | Dialect, version: str | tuple[int, ...] | None) -> Dialect:
    return flavor if isinstance(flavor, Dialect) else dialect(flavor, version)


def render_row_change(rc: Any, verbosity: int = 2, flavor: str | Dialect = "mysql",
                      version: str | tuple[int, ...] | None = None) -> list[str]:
    """The `###` lines the tool prints for one row change (a `rows.RowChange`, rendered from its
    values and `rc.table_def`). `verbosity` is 1 for -v, 2 for -vv; `flavor` "mysql" or
    "mariadb" (or a `Dialect`); `version` the tool's version, None for a current one."""
    return _render(rc, _resolve(flavor, version), verbosity)[0]


def render_rows(row_changes: Iterable[Any], verbosity: int = 2, flavor: str | Dialect = "mysql",
                version: str | tuple[int, ...] | None = None) -> Iterator[list[str]]:
    """One block of lines per row change, as `render_row_change`; when the tool would stop printing
    an event (a value it cannot print), the rest of that event's rows are left out as it does."""
    d = _resolve(flavor, version)
    stopped = None
    for rc in row_changes:
        if stopped == (rc.file, rc.pos):
            continue
        lines, complete = _render(rc, d, verbosity)
        if not complete:
            stopped = (rc.file, rc.pos)
        yield lines


# --------------------------------------------------------------------------
# Reading saved outputs

_BLOCK_START = re.compile(r"### (INSERT INTO|UPDATE|DELETE FROM) ")
_BLOCK_LINE = re.compile(r"###   |### (SET|WHERE)$")


def parse_verbose(text: str) -> list[list[str]]:
    """The `###` blocks of a tool's output: each starts at an INSERT INTO / UPDATE / DELETE FROM
    line and holds its SET / WHERE and column lines. Other `###` lines (extra row info, unknown
    tables) are left out; lines are split on newlines only, a trailing CR dropped."""
    blocks: list[list[str]] = []
    current: list[str] | None = None
    for line in text.split("\n"):
        line = line[:-1] if line.endswith("\r") else line
        if _BLOCK_START.match(line):
            current = [line]
            blocks.append(current)
        elif current is not None and _BLOCK_LINE.match(line):
            current.append(line)
        else:
            current = None
    return blocks


def read_output(path: str | Path) -> str:
    """A saved tool output as text: UTF-16 when it has a byte-order mark (PowerShell redirection),
    else UTF-8 with undecodable bytes kept as surrogates (as `render_*` gives them)."""
    data = Path(path).read_bytes()
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16")
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    return data.decode("utf-8", errors="surrogateescape")
