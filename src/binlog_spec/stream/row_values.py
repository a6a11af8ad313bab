"""Literals typed as a table's columns are, and values compared as the server compares them: what the row
filters (stream.row_filters: --key, --where) compare a row image's decoded values with.

`typed(column, literal, name)` turns a literal of an option (text, or a number sqlglot parsed) into the
Python value rows.values decodes for that column type (int, Decimal, float, str or bytes, date, datetime,
timedelta), or raises ValueError saying why it does not fit. `compared(column)` is the function both sides
go through before a comparison: text without trailing spaces and case folded (rows.charsets.compared_text:
PAD SPACE, the _ci collations; NO PAD collations keep their trailing spaces, _bin and _cs ones their case),
the rest as it is. The collation is the column's as the TABLE_MAP metadata gives it; a column whose
collation comes from DDL has its character set's default (rows.charsets.charset_collation), case-insensitive.
Accents are compared as they are (utf8mb4_general_ci's 'e' = 'é' is not followed).
"""
from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal, InvalidOperation
from typing import Any, Callable

from binlog_spec.binlog import spec
from binlog_spec.rows.column_types import (BIT, BLOB, BLOB_COMPRESSED, DATE, DATETIME, DATETIME2, DECIMAL, DOUBLE, ENUM,
                                           FLOAT, INT24, LONG, LONG_BLOB, LONGLONG, MEDIUM_BLOB, NEWDATE, NEWDECIMAL,
                                           SET, SHORT, STRING, TIME, TIME2, TIMESTAMP, TIMESTAMP2, TINY, TINY_BLOB,
                                           VAR_STRING, VARCHAR, VARCHAR_COMPRESSED, YEAR)
from binlog_spec.rows.charsets import case_sensitive, codec_for, compared_text, no_pad

_INTS = frozenset({TINY, SHORT, INT24, LONG, LONGLONG, YEAR, BIT})
_DECIMALS = frozenset({NEWDECIMAL, DECIMAL})
_FLOATS = frozenset({FLOAT, DOUBLE})
_DATES = frozenset({DATE, NEWDATE})
_DATETIMES = frozenset({DATETIME, DATETIME2})
_TIMESTAMPS = frozenset({TIMESTAMP, TIMESTAMP2})
_TIMES = frozenset({TIME, TIME2})
_TEXTS = frozenset({STRING, VARCHAR, VAR_STRING, TINY_BLOB, BLOB, MEDIUM_BLOB, LONG_BLOB, ENUM,
                    SET, BLOB_COMPRESSED, VARCHAR_COMPRESSED})
_SIGNED_RANGE = {TINY: 8, SHORT: 16, INT24: 24, LONG: 32, LONGLONG: 64}
_TIME = re.compile(r"^(-)?(\d+):(\d{1,2}):(\d{1,2})(?:\.(\d{1,6}))?$")


def kind(column) -> str:
    """What a column's values are for a comparison: int, decimal, float, date, datetime, timestamp, time,
    text, bytes (binary strings, and text of an unknown character set), or '' (not comparable: JSON,
    GEOMETRY, VECTOR...)."""
    code = column.type_code
    if code == STRING and isinstance(column.meta, dict):
        code = column.meta.get("real_type", code)
    code = int(code)
    if code in _INTS:
        return "int"
    if code in _DECIMALS:
        return "decimal"
    if code in _FLOATS:
        return "float"
    if code in _DATES:
        return "date"
    if code in _DATETIMES:
        return "datetime"
    if code in _TIMESTAMPS:
        return "timestamp"
    if code in _TIMES:
        return "time"
    if code in _TEXTS or code == STRING:
        if code == SET:
            return "set"
        return "bytes" if codec_for(column.charset) is None and code != ENUM else "text"
    return ""


def typed(column, literal: Any, name: str) -> Any:
    """The literal as a value of the column (ValueError: it does not fit). `literal`: str (quoted text),
    bytes (0x hex), int, Decimal (numbers as written), or None (NULL)."""
    if literal is None:
        return None
    k = kind(column)
    if k == "":
        raise ValueError(f"column {name} ({spec.COLUMN_TYPE_NAMES.get(column.type_code, column.type_code)}) cannot be "
                         "compared with a literal")
    text = literal.decode("utf-8", "surrogateescape") if isinstance(literal, bytes) else str(literal)
    try:
        if k == "int":
            if isinstance(literal, (str, bytes)):
                if not re.fullmatch(r"\s*[-+]?\d+\s*", text):
                    raise ValueError("not an integer")
                value = int(text)
            else:
                value = _integral(literal)
            bits = _SIGNED_RANGE.get(column.type_code)
            if bits is not None:
                lo, hi = (0, (1 << bits) - 1) if column.unsigned else (-(1 << bits - 1), (1 << bits - 1) - 1)
                if not lo <= value <= hi:
                    raise ValueError("out of range")
            return value
        if k == "decimal":
            value = Decimal(text.strip())
            if not value.is_finite():
                raise ValueError("not a number")
            return value
        if k == "float":
            return float(text)
        if k == "date":
            return dt.date.fromisoformat(text.strip())
        if k in ("datetime", "timestamp"):
            value = dt.datetime.fromisoformat(text.strip())
            if value.tzinfo is not None:
                value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
            return value.replace(tzinfo=dt.timezone.utc) if k == "timestamp" else value
        if k == "time":
            m = _TIME.match(text.strip())
            if m is None:
                raise ValueError("not a time [-]HH:MM:SS[.ffffff]")
            sign, h, mi, s, frac = m.groups()
            value = dt.timedelta(hours=int(h), minutes=int(mi), seconds=int(s),
                                 microseconds=int((frac or "").ljust(6, "0")))
            return -value if sign else value
        if k == "bytes":
            return literal if isinstance(literal, bytes) else text.encode("utf-8")
        if k == "set":
            return frozenset(m for m in text.split(",") if m)
        return text       # text
    except (ValueError, InvalidOperation, TypeError) as exc:
        reason = str(exc) if str(exc) and k != "decimal" else f"not a {k}"
        raise ValueError(f"{literal!r} does not fit column {name} ({_type_name(column)}): {reason}") from None


def _integral(value) -> int:
    if isinstance(value, Decimal) and value != value.to_integral_value():
        raise ValueError("not an integer")
    return int(value)


def _type_name(column) -> str:
    return spec.COLUMN_TYPE_NAMES.get(column.type_code, str(column.type_code)) + (" UNSIGNED" if column.unsigned else "")


def compared(column) -> Callable[[Any], Any]:
    """What a value of the column is compared as: text through rows.charsets.compared_text (trailing spaces
    dropped unless the collation is NO PAD, case folded), a set as its members so, the rest as it is."""
    k = kind(column)
    if k == "text":
        keep_spaces, keep_case = no_pad(column.charset), case_sensitive(column.charset)
        return lambda v: compared_text(v, keep_spaces, keep_case) if type(v) is str else v
    if k == "set":
        keep_case = case_sensitive(column.charset)
        return lambda v: frozenset(compared_text(m, True, keep_case) if type(m) is str else m for m in v) \
            if isinstance(v, frozenset) else v
    return _same


def _same(value):
    return value


__all__ = ["compared", "kind", "typed"]
