"""SQL text that is safe to run: quoted identifiers and exact literals for every decoded value.

A value taken from a row can never end a statement or a comment early, and
it means the same whatever the session replaying it: strings of printable
ASCII are quoted (a quote doubled, no backslash escape, so `sql_mode`'s
NO_BACKSLASH_ESCAPES changes nothing); any other text is its UTF-8 bytes with
an introducer, `_utf8mb4 X'C3A9'`, which no connection character set
reinterprets; bytes, and text of unknown charset, are `X'...'`.

WHERE clauses use `match`: the condition that finds exactly the value the
row holds (see its doc), and the JSON diffs of a partial update are written
as MySQL's own functions by `json_diff_sql`.
"""
from __future__ import annotations

import datetime as dt
import itertools
import json
import math
import re
from decimal import Decimal
from typing import Any

from binlog_spec.output import jsonenc
from binlog_spec.binlog import spec
from binlog_spec.rows.tablemap import CHARACTER_TYPES, real_type
from binlog_spec.rows.column_types import Column
from binlog_spec.rows.json.json_binary import JsonDiff, JsonDiffs, JsonOpaque
from binlog_spec.rows.json.json_text import json_text
from binlog_spec.rows.charsets import codec_for
from binlog_spec.errors import InexactMatch

CT = spec.ColumnType

#: Text written between quotes as it is: printable ASCII but the backslash.
_PLAIN_TEXT = re.compile(r"[\x20-\x5b\x5d-\x7e]*")


def string_literal(text: str) -> str:
    """The literal of a string, the same characters whatever the connection's character set or
    sql_mode: printable ASCII quoted (quotes doubled), anything else `_utf8mb4 X'...'`."""
    if _PLAIN_TEXT.fullmatch(text):
        return "'" + text.replace("'", "''") + "'"
    return "_utf8mb4 X'" + text.encode("utf-8", "surrogatepass").hex().upper() + "'"


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
    if isinstance(value, JsonDiffs):
        raise ValueError("JSON diffs are not a document: write them with json_diff_sql")
    text = json_text(value)   # a str is a JSON string scalar: MariaDB's JSON is text, not this type
    return f"CAST({string_literal(text)} AS JSON)" if mysql else string_literal(text)


def _json_function(diff: JsonDiff) -> str:
    """json_diff_operation_name (sql/log_event.cc): an INSERT at a path ending in `]` is an array
    insert."""
    if diff.operation == "INSERT":
        return "JSON_ARRAY_INSERT" if diff.path.rstrip().endswith("]") else "JSON_INSERT"
    return {"REPLACE": "JSON_REPLACE", "REMOVE": "JSON_REMOVE"}[diff.operation]


def json_diff_sql(target: str, diffs: tuple[JsonDiff, ...]) -> str:
    """The diffs of a partial JSON update as MySQL's functions applied to `target` (the column),
    in order and nested, as `mysqlbinlog -v` prints them (print_json_diff): consecutive diffs of
    one function share a call, `JSON_REPLACE(JSON_INSERT(`c`, '$.a', v), ...)` inside out; each
    value is `CAST('...' AS JSON)`."""
    expr = target
    for function, group in itertools.groupby(diffs, _json_function):
        args = []
        for d in group:
            args.append(string_literal(d.path))
            if d.operation != "REMOVE":
                args.append(f"CAST({string_literal(json_text(d.value))} AS JSON)")
        expr = f"{function}({expr}, {', '.join(args)})"
    return expr


def literal(value: Any, col: Column | None = None, mysql: bool = True) -> str:
    """The SQL literal of a decoded value. TIMESTAMPs are written in UTC: the output sets time_zone."""
    if value is None:
        return "NULL"
    type_code = col.type_code if col is not None else None
    cls = type(value)      # the two commonest values first (what the branches below give them)
    if cls is int and type_code != CT.json and type_code != CT.bit:
        return str(value)
    if cls is str and type_code != CT.json:
        return string_literal(value)
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
        members = sorted(value, key=_set_order(col))
        if all(isinstance(m, str) for m in members):
            return string_literal(",".join(members))
        # a member that did not decode in the column's charset stays bytes: the SET as the bytes
        # the column stores, its text members encoded back in the charset they were decoded from
        codec = (codec_for(col.charset) if col is not None else None) or "utf-8"
        return hex_literal(b",".join(m if isinstance(m, bytes) else m.encode(codec) for m in members))
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


def set_order(col: Column | None) -> dict[str | bytes, int]:
    """The index of every member of a SET column, by its stored bytes and by its text in the
    column's charset (empty where the members are unknown)."""
    raw = col.set_values or () if col is not None else ()
    codec = (codec_for(col.charset) if col is not None else None) or "utf-8"
    order: dict[str | bytes, int] = {}
    for i, m in enumerate(raw):
        order.setdefault(m, i)
        order.setdefault(m.decode(codec, "replace"), i)
    return order


def _set_order(col: Column | None):
    """Sort key of SET members in the column's order (set_order; the members it does not know
    after, by text): a member is its text or, when it did not decode, its stored bytes."""
    order = set_order(col)

    def key(m: str | bytes) -> tuple[int, str]:
        return order.get(m, len(order)), m if isinstance(m, str) else m.decode("utf-8", "replace")
    return key


def _opaque_inside(value: Any) -> bool:
    """Whether a JSON document holds a scalar that JSON text cannot give back (an opaque value,
    a date or time: CAST('...' AS JSON) would make a string of it)."""
    if isinstance(value, dict):
        return any(_opaque_inside(v) for v in value.values())
    if isinstance(value, list):
        return any(_opaque_inside(v) for v in value)
    return isinstance(value, (JsonOpaque, dt.date, dt.timedelta))


def match(column: str, value: Any, col: Column | None = None, mysql: bool = True) -> str:
    """The condition on `column` (quoted) that holds for exactly this stored value, for a WHERE
    without a key, whatever the column's collation and the session's time zone (TIMESTAMPs are
    written in UTC: the script sets time_zone):

    - text: `CAST(CONVERT(c USING utf8mb4) AS BINARY)=X'...'`, its bytes (no case folding, no
      trailing-space padding as a collation would compare);
    - bytes in a string column (BINARY, VARBINARY, BLOB, text of unknown charset):
      `CAST(c AS BINARY)=X'...'`;
    - GEOMETRY: its stored bytes (SRID, then WKB), `CAST(c AS BINARY)=X'...'`;
    - MySQL JSON: `c=CAST('...' AS JSON)` (JSON comparison); a document with opaque, date or
      time scalars cannot be written as JSON text and raises InexactMatch;
    - FLOAT and DOUBLE: the shortest decimal that reads back as the same double (a FLOAT is
      compared as the double it converts to exactly); BIT as `b'...'`; the rest as `literal`.
    """
    if value is None:
        return f"{column} IS NULL"
    type_code = col.type_code if col is not None else None
    if type_code == CT.json:
        if _opaque_inside(value) or isinstance(value, JsonDiffs):
            raise InexactMatch("its JSON document holds opaque, date or time values, which JSON "
                               "text cannot give back")
        return f"{column}={_json(value, mysql)}"
    if type_code == CT.geometry and isinstance(value, dict) and "wkb" in value:
        stored = int(value["srid"]).to_bytes(4, "little") + bytes(value["wkb"])
        return f"CAST({column} AS BINARY)={hex_literal(stored)}"
    if col is not None and real_type(type_code, col.meta) in CHARACTER_TYPES | {CT.json}:
        if isinstance(value, str):
            return f"CAST(CONVERT({column} USING utf8mb4) AS BINARY)={hex_literal(value.encode('utf-8'))}"
        if isinstance(value, (bytes, bytearray, memoryview)):
            return f"CAST({column} AS BINARY)={hex_literal(bytes(value))}"
    if isinstance(value, float) and not math.isfinite(value):
        raise InexactMatch(f"{value} has no SQL literal")
    return f"{column}={literal(value, col, mysql)}"
