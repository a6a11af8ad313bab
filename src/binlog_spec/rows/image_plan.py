"""The plan of one row-image layout for the compiled image decoder (`_cdecoder`), and the switch that
says whether it runs.

`rows_function(...)` gives decoder.compile_rows's generator function made with the compiled decoder,
or None when the compiled core is not running (not built, or BINLOG_SPEC_PURE=1: `binlog_spec.compiled`);
`_cdecoder.ImageDecoder(plan(columns, names)).decode(buf, pos) -> (row dict, position after the image)`
decodes one image whose present columns are `columns` (dict keys `names`). The plan holds one entry per
column: (key, kind, a, b, c, obj), the kind and parameters that `decode_value` would derive from the
column's metadata on every value, derived once here with the same rules (values.py, scalars.py,
charsets.codec_for). Kinds without a C form are called back through `COLUMN_TYPES`. Like the
generated code of codegen.inline_source, `decode` is a fast path: it raises on anything unusual and
the caller decodes the image again with the pure `decode_image`.
"""
from __future__ import annotations

import decimal
import functools
from typing import Any, Callable

from binlog_spec import compiled
from binlog_spec.binlog.event_types import INSERT, UPDATE
from binlog_spec.errors import BinlogError, ValueDecodeError
from binlog_spec.rows.charsets import BINARY_COLLATION, _mysql_latin1, codec_for
from binlog_spec.rows.column_types import (DEFAULT_PACK_LENGTH, BIT, BLOB, Column, DATE, DATETIME, DATETIME2,
                                           DOUBLE, ENUM, FLOAT, GEOMETRY, INT24, LONG, LONGLONG, LONG_BLOB,
                                           MEDIUM_BLOB, NEWDATE, NEWDECIMAL, SET, SHORT, STRING, TIME, TIME2,
                                           TIMESTAMP, TIMESTAMP2, TINY, TINY_BLOB, VARCHAR, VAR_STRING, VECTOR,
                                           YEAR)
from binlog_spec.rows.scalars import UTC, _hires_fsp, decimal_binary_size, old_temporal_size
from binlog_spec.rows.values import COLUMN_TYPES, _member, decode_value
from binlog_spec.rows.walker import check_rows, present_columns

#: The compiled module, or None (the generated Python code of codegen.inline_source runs then).
#: Tests set it to None to run the pure path in the same process.
crows = compiled.load("binlog_spec.rows._cdecoder")

_INT_SIZES = {TINY: 1, SHORT: 2, INT24: 3, LONG: 4, LONGLONG: 8}
_BLOBS = (TINY_BLOB, BLOB, MEDIUM_BLOB, LONG_BLOB)
#: The old TIME, DATETIME and TIMESTAMP (classic, or MariaDB's hires with meta "fsp": scalars.decode_time ...).
_OLD_TEMPORALS = {TIME: "time", DATETIME: "datetime", TIMESTAMP: "timestamp"}


def _text(col: Column, prefix: int, pad: int = 0) -> tuple[str, int, str, int, Any]:
    """A length-prefixed value decoded as values._text_or_bytes does."""
    codec = codec_for(col.charset)
    if codec is None:
        return "text", prefix, "bytes", pad, None
    if codec == "utf-8":
        return "text", prefix, "utf8", 0, None
    if codec == "cp1252":
        return "text", prefix, "latin1", 0, _mysql_latin1
    return "text", prefix, "codec", 0, codec.encode("ascii")


def _fsp(meta: dict) -> int | None:
    fsp = meta.get("fsp")
    return fsp if isinstance(fsp, int) and 0 <= fsp <= 6 else None


def _members(col: Column, code: int, meta: dict) -> tuple[str, int, int, int, Any] | None:
    """The plan of an ENUM or SET column (values.decode_enum, decode_set): its pack length, and its members
    decoded once as values._member decodes them on every value (ENUM: index 0, the '' member, first)."""
    size = meta.get("pack_length", meta.get("max_length", meta.get("byte1")))
    if type(size) is not int or not 1 <= size <= (2 if code == ENUM else 8):
        return None
    raw = col.enum_values if code == ENUM else col.set_values
    if raw is None:
        return ("enum" if code == ENUM else "set"), 0, -1, size, None
    try:
        members = tuple(_member(m, col, 0) for m in ((b"", *raw) if code == ENUM else raw))
    except Exception:  # noqa: BLE001 - the pure decoder says what it is, value by value
        return None
    return ("enum" if code == ENUM else "set"), 0, len(raw), size, members


def _scalar(col: Column, code: int, meta: dict) -> tuple[str, int, int, int, Any] | None:
    """The plan of a DECIMAL, TIME2, BIT, old temporal, GEOMETRY or VECTOR column, None when the pure decoder
    would not read it (bad metadata: its error)."""
    if code == NEWDECIMAL:
        precision, scale = meta.get("precision"), meta.get("scale")
        if type(precision) is int and type(scale) is int and 1 <= precision <= 65 and 0 <= scale <= precision:
            return "decimal", precision, scale, decimal_binary_size(precision, scale), decimal.Decimal
    elif code == TIME2 and _fsp(meta) is not None:
        return "time2", _fsp(meta), 0, 3 + (_fsp(meta) + 1) // 2, None
    elif code in (TIME, DATETIME, TIMESTAMP):
        return _OLD_TEMPORALS[code], _hires_fsp(col), 0, old_temporal_size(col), UTC
    elif code == BIT:
        bits, whole = meta.get("bits"), meta.get("bytes")
        if type(bits) is int and type(whole) is int and 0 <= bits <= 7 and 0 <= whole + (1 if bits else 0) <= 8:
            return "bit", 0, 0, whole + (1 if bits else 0), None
    elif code in (GEOMETRY, VECTOR):
        prefix = meta.get("pack_length", DEFAULT_PACK_LENGTH[code])
        if type(prefix) is int and 1 <= prefix <= 4:
            return ("geometry" if code == GEOMETRY else "vector"), prefix, 0, 0, None
    return None


def column_plan(col: Column) -> tuple[str, int, Any, int, Any]:
    """(kind name, a, b, c, obj) of one column, as _cdecoder.ImageDecoder takes it (by kind name)."""
    code, meta = col.type_code, col.meta if isinstance(col.meta, dict) else {}
    real = meta.get("real_type", STRING) if code == STRING else code
    if real in (ENUM, SET) and code in (ENUM, SET, STRING):
        return _members(col, real, meta) or ("call", 0, 0, 0, (COLUMN_TYPES.get(code, decode_value), col))
    fixed = _scalar(col, code, meta)
    if fixed is not None:
        return fixed
    if code in _INT_SIZES:
        return "int", _INT_SIZES[code], 0 if col.unsigned else 1, 0, None
    if code == YEAR:
        return "year", 0, 0, 0, None
    if code == FLOAT:
        return "float", 0, 0, 0, None
    if code == DOUBLE:
        return "double", 0, 0, 0, None
    if code in (DATE, NEWDATE):
        return "date", 0, 0, 0, None
    if code in (DATETIME2, TIMESTAMP2) and _fsp(meta) is not None:
        return ("datetime2" if code == DATETIME2 else "timestamp2"), _fsp(meta), 0, 0, UTC
    max_length = meta.get("max_length")
    if (code in (VARCHAR, VAR_STRING, STRING) and isinstance(max_length, int) and 0 <= max_length < 1 << 20
            and (code != STRING or meta.get("real_type", STRING) not in (ENUM, SET))):
        pad = max_length if code == STRING and col.charset == BINARY_COLLATION else 0
        return _text(col, 1 if max_length < 256 else 2, pad)
    if code in _BLOBS:
        prefix = meta.get("pack_length", DEFAULT_PACK_LENGTH.get(code))
        if isinstance(prefix, int) and 1 <= prefix <= 4:
            return _text(col, prefix)
    return "call", 0, 0, 0, (COLUMN_TYPES.get(code, decode_value), col)


def plan(columns: list[Column], names: list[str]) -> list[tuple]:
    """The plan of images of these present columns, with these dict keys, for _cdecoder.ImageDecoder."""
    kinds, codecs = crows.KINDS, crows.CODECS
    out = []
    for col, name in zip(columns, names):
        kind, a, b, c, obj = column_plan(col)
        out.append((name, kinds[kind], a, codecs[b] if kind == "text" else b, c, obj))
    return out


def key_plan(table: Any, n: int, before_bitmap: bytes, after_bitmap: bytes | None,
             keyless_after: bool = False) -> tuple | None:
    """How `_cdecoder.key_walk` reads the key (`table.row_key`) of a rows event's images whose bitmaps are
    these (`after_bitmap`: an UPDATE's): (before image decoder, after image decoder or None, key places in
    each), the after image's -1 for a key column it lacks (the before image's value then, as a MINIMAL
    after image is merged over its before image); or None where the layout is not one read so: no compiled
    core, no key, names not distinct, a shape the decoder refuses, a column of a kind called back ("call"),
    a key column not an integer ("int") or missing from the before image, an after image without a key
    column that is not the smaller (merged over nothing, it holds no key: with `keyless_after`, its key
    places are None then)."""
    names, key = table.names, table.row_key
    if crows is None or not key or len(set(names)) != len(names):
        return None
    try:        # the decoder's check of the shape (with rows: the strictest; none passes it too)
        check_rows(table, n, before_bitmap, after_bitmap, 1)
    except BinlogError:
        return None
    present_b = present_columns(before_bitmap, n)
    present_a = present_columns(after_bitmap, n) if after_bitmap is not None else None
    for present in (present_b, present_a or ()):
        for i in present:
            if column_plan(table.columns[i])[0] == "call":
                return None
    if any(i not in present_b or column_plan(table.columns[i])[0] != "int" for i in key):
        return None
    image = crows.ImageDecoder
    decoder_b = image(plan([table.columns[i] for i in present_b], [names[i] for i in present_b]))
    key_b = tuple(present_b.index(i) for i in key)
    if present_a is None:
        return decoder_b, None, key_b, None
    key_a = tuple(present_a.index(i) if i in present_a else -1 for i in key)
    if -1 in key_a and not len(present_a) < len(present_b):
        if not keyless_after:
            return None             # the after image names the row by its whole image
        key_a = None
    decoder_a = image(plan([table.columns[i] for i in present_a], [names[i] for i in present_a]))
    return decoder_b, decoder_a, key_b, key_a


def rows_function(table: Any, op: str, images: list[list[int]], names: list[str], decode_image: Callable,
                  row_change: type, malformed: Callable, name: str = "compiled rows") -> Callable | None:
    """decoder.compile_rows's `rows(decoder, ev, buf, template)` generator function made with the compiled
    decoder (`images`: the present columns of the before image, and of the after image of an UPDATE),
    or None when the compiled core is not running. `name` is its `source` attribute (for debugging)."""
    if crows is None:
        return None
    decoders = [crows.ImageDecoder(plan([table.columns[i] for i in present], [names[i] for i in present]))
                for present in images]
    fallbacks = [functools.partial(decode_image, table=table, present=present, names=names) for present in images]
    image_b, fallback_b = decoders[0], fallbacks[0]
    image_a, fallback_a = (decoders[1], fallbacks[1]) if op == UPDATE else (None, None)
    key = None if op == UPDATE else ("after" if op == INSERT else "before")
    generator = crows.rows

    def rows(decoder, ev, buf, template):
        return generator(decoder, ev, buf, template, image_b, image_a, fallback_b, fallback_a, key, row_change,
                         malformed, ValueDecodeError)
    rows.source = name
    return rows
