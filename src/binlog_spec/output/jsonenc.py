"""Lossless JSON encoding of decoded values.

| Python value          | JSON                                  |
|-----------------------|---------------------------------------|
| int (any size)        | number, exact (BIGINT UNSIGNED too)   |
| bytes                 | {"hex": "0a1b..."}                    |
| decimal.Decimal       | string, exact, never exponent ("-1.05", "0.000000000000000000000000000001") |
| datetime/date/time    | ISO 8601 string                       |
| timedelta             | string "[-]HH:MM:SS[.ffffff]"         |
| float                 | number (repr round-trips)             |
| set / frozenset       | sorted list                           |
| JSON opaque scalar    | "base64:typeNN:..." as MySQL prints it|
"""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from typing import Any

from binlog_spec.rows.json_binary import JsonOpaque


def _timedelta(value: dt.timedelta) -> str:
    sign = "-" if value < dt.timedelta(0) else ""
    value = abs(value)
    seconds = value.days * 86400 + value.seconds
    text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return text + (f".{value.microseconds:06d}" if value.microseconds else "")


def default(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"hex": bytes(value).hex()}
    if isinstance(value, decimal.Decimal):
        return format(value, "f")   # str() would say "1E-30" for DECIMAL(65,30)'s smallest step
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return _timedelta(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    if isinstance(value, JsonOpaque):
        return f"base64:type{value.type_code}:{base64.b64encode(value.data).decode('ascii')}"
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def dumps(obj: Any) -> str:
    return json.dumps(obj, default=default, ensure_ascii=False, separators=(",", ":"))
