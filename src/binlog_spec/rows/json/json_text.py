"""Decoded JSON values printed as MySQL prints JSON (Json_wrapper::to_string, sql-common/json_dom.cc)."""
from __future__ import annotations

import base64
import decimal
import datetime as dt
import math

from binlog_spec.rows.column_types import VAR_STRING
from binlog_spec.rows.json.json_binary import JsonOpaque


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
