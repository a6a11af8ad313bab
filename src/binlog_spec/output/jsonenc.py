"""Lossless JSON encoding of decoded values: one text per value, written by orjson.

| Python value          | JSON                                  |
|-----------------------|---------------------------------------|
| int (any size)        | number, exact (BIGINT UNSIGNED too)   |
| bytes                 | {"hex": "0a1b..."}                    |
| decimal.Decimal       | string, exact, never exponent ("-1.05", "0.000000000000000000000000000001") |
| datetime/date/time    | ISO 8601 string (`isoformat()`)       |
| timedelta             | string "[-]HH:MM:SS[.ffffff]"         |
| float                 | number, Python's `repr`: the shortest digits that round-trip; plain from 1e-4 up to 1e16, else an exponent with its sign and at least two digits (`1e+16`, `1.5e-07`, `1e-05`) |
| float NaN, ±infinity  | `NaN`, `Infinity`, `-Infinity` (not JSON; no MySQL server writes them, only damaged bytes hold them) |
| set / frozenset       | sorted list                           |
| JSON opaque scalar    | "base64:typeNN:..." as MySQL prints it|

Text is UTF-8 (non-ASCII unescaped), separators compact, dict keys in their order.

`dumps` writes with orjson (about ten times faster than `json.dumps` with a hook). orjson alone would differ
from the table in three places, and each goes to `reference` (the `json.dumps` encoder, the definition of
the text) for that one value: integers beyond 64 bits (orjson refuses them), floats below 1e-4 in
magnitude (orjson writes `1e-7` and `0.00001`), and NaN/±infinity (orjson writes `null`). The first two
show in orjson's own error or output; NaN needs a look at the floats of the value (`has_nonfinite`). A
caller that knows its value holds no float says so (`floats=False`) and skips both looks.
Datetimes go to `default` too, unless the caller knows them to be naive or in UTC (`decoded=True`, the
row decoder's values): orjson's own text is then `isoformat()`'s.
"""
from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
import re
from typing import Any

import orjson

from binlog_spec.rows.json.json_binary import JsonOpaque


def _timedelta(value: dt.timedelta) -> str:
    sign = ""
    if value.days < 0:              # days carry the sign: seconds and microseconds are never negative
        sign, value = "-", -value
    seconds = value.days * 86400 + value.seconds
    text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return f"{text}.{value.microseconds:06d}" if value.microseconds else text


def default(value: Any) -> Any:
    """The JSON form of a value the encoders have no form for (the table above)."""
    t = type(value)
    if t is decimal.Decimal:        # the common types of rows first, by their exact type
        text = str(value)           # format(value, "f") unless it says "1E-30" or "1E+3", in a third of the time
        return format(value, "f") if "E" in text else text
    if t is frozenset:
        return sorted(value)
    if t is dt.datetime:
        return value.isoformat()
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


def reference(obj: Any) -> str:
    """The text of the table above, by `json.dumps`: what `dumps` must equal, byte for byte."""
    return json.dumps(obj, default=default, ensure_ascii=False, separators=(",", ":"))


#: orjson hands datetimes and dataclasses to `default` as json.dumps does (orjson would write its own
#: datetime text, and a dataclass json.dumps refuses).
_OPTIONS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
#: orjson's own datetime, date and time text is `isoformat()`'s (years below 1000 padded to four digits,
#: microseconds as six digits and only when not zero, "+00:00"), except for a UTC offset with seconds
#: ("-05:00:07": orjson drops the seconds) and a time with a tzinfo (orjson refuses it, so it goes to
#: `reference`). `dumps(decoded=True)` lets orjson write them: decoded row values are naive or in UTC.
_DECODED_OPTIONS = orjson.OPT_PASSTHROUGH_DATACLASS
_orjson = orjson.dumps

#: A number orjson writes unlike `repr`: an exponent -6..-9 without its leading zero ("1e-7"), or one in
#: [1e-5, 1e-4) written plainly ("0.00001234"). Matched in the whole line: text inside a string that looks
#: like one only sends the line to `reference`, which writes the same bytes.
_SMALL_FLOAT = re.compile(rb"\de-[6-9](?![0-9])|(?<![0-9])0\.0000[1-9]")


#: Types that are no float and hold none: `has_nonfinite` looks no further into them.
_LEAVES = frozenset({str, int, bool, type(None), bytes, decimal.Decimal, dt.datetime, dt.date, dt.time,
                     dt.timedelta, JsonOpaque})


def has_nonfinite(obj: Any) -> bool:
    """Whether `obj` holds a NaN or an infinity anywhere (orjson would write null for it)."""
    t = type(obj)
    if t in _LEAVES:
        return False
    if t is float:
        return obj - obj != 0.0         # NaN for NaN and both infinities
    if isinstance(obj, dict):
        values: Any = obj.values()
    elif isinstance(obj, (list, tuple, set, frozenset)):
        values = obj
    else:
        return isinstance(obj, float) and obj - obj != 0.0
    return not _LEAVES.issuperset(map(type, values)) and any(map(has_nonfinite, values))


def dumps(obj: Any, *, floats: bool = True, decoded: bool = False) -> str:
    """`reference(obj)`, by orjson where it writes the same. `floats=False` says the caller knows `obj`
    holds no float at all (a row of a table without FLOAT, DOUBLE, VECTOR or JSON columns; an event),
    which skips the look for NaN and for small floats. `decoded=True` says every datetime in `obj` is
    naive or has a UTC offset in whole minutes (the row decoder's values: naive, or in UTC), which
    orjson then writes itself, as `isoformat()` does."""
    options = _DECODED_OPTIONS if decoded else _OPTIONS
    if not floats:
        try:
            return _orjson(obj, default, options).decode("utf-8")
        except TypeError:           # an integer beyond 64 bits, a lone surrogate, a non-str key
            return reference(obj)
    if not has_nonfinite(obj):
        try:
            data = _orjson(obj, default, options)
        except TypeError:
            return reference(obj)
        if (b"e-" not in data and b"0.0000" not in data) or not _SMALL_FLOAT.search(data):
            return data.decode("utf-8")
    return reference(obj)
