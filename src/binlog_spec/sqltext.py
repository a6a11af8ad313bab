"""SQL text that is safe to run: quoted identifiers and exact literals for every decoded value.

A value taken from a row can never end a statement or a comment early:
strings are escaped for MySQL (\\0 \\' \\" \\\\ \\n \\r \\Z), and bytes, text of
unknown charset and anything that is not valid text are written as X'...'.
"""
from __future__ import annotations

import datetime as dt
import json
import math
from decimal import Decimal
from typing import Any

from binlog_spec import jsonenc, spec
from binlog_spec.values import Column, JsonOpaque, json_text

CT = spec.ColumnType

_ESCAPES = {0: "\\0", ord("'"): "\\'", ord('"'): '\\"', ord("\\"): "\\\\", ord("\n"): "\\n",
            ord("\r"): "\\r", 26: "\\Z"}


def quote_identifier(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def quote_table(schema: str, table: str) -> str:
    return f"{quote_identifier(schema)}.{quote_identifier(table)}"


def string_literal(text: str) -> str:
    return "'" + text.translate(_ESCAPES) + "'"


def hex_literal(data: bytes) -> str:
    return f"X'{bytes(data).hex().upper()}'" if data else "''"


def _frac(micro: int) -> str:
    return f".{micro:06d}" if micro else ""


def _time(value: dt.timedelta) -> str:
    sign = "-" if value < dt.timedelta(0) else ""
    value = abs(value)
    secs = value.days * 86400 + value.seconds
    return f"'{sign}{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}{_frac(value.microseconds)}'"


def _json(value: Any, mysql: bool) -> str:
    text = json_text(value) if not isinstance(value, str) else value
    return f"CAST({string_literal(text)} AS JSON)" if mysql else string_literal(text)


def literal(value: Any, col: Column | None = None, mysql: bool = True) -> str:
    """The SQL literal of a decoded value. TIMESTAMPs are written in UTC: the output sets time_zone."""
    if value is None:
        return "NULL"
    type_code = col.type_code if col is not None else None
    if type_code == CT.json:
        return _json(value, mysql)
    if type_code == CT.bit and isinstance(value, int):
        nbits = (col.meta.get("bytes", 0) * 8 + col.meta.get("bits", 0)) or max(value.bit_length(), 1)
        return f"b'{value:0{nbits}b}'"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise ValueError(f"{value} has no SQL literal")
        return repr(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return f"'{value.strftime('%Y-%m-%d %H:%M:%S')}{_frac(value.microsecond)}'"
    if isinstance(value, dt.date):
        return f"'{value.isoformat()}'"
    if isinstance(value, dt.timedelta):
        return _time(value)
    if isinstance(value, (frozenset, set)):
        return string_literal(",".join(sorted(value, key=_set_order(col))))
    if isinstance(value, dict) and "wkb" in value:
        return f"ST_GeomFromWKB({hex_literal(value['wkb'])}, {int(value['srid'])})"
    if isinstance(value, list):  # VECTOR
        return f"STRING_TO_VECTOR({string_literal(json.dumps(value))})"
    if isinstance(value, JsonOpaque):
        return string_literal(jsonenc.default(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return hex_literal(bytes(value))
    if isinstance(value, str):
        return string_literal(value)
    raise TypeError(f"no SQL literal for {type(value).__name__}")


def _set_order(col: Column | None):
    members = [m.decode("utf-8", "replace") for m in (col.set_values or ())] if col is not None else []
    order = {m: i for i, m in enumerate(members)}
    return lambda m: (order.get(m, len(order)), m)
