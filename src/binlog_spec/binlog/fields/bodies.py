"""Bodies parsed once.

MariaDB writes a TABLE_MAP_EVENT, with its optional-metadata TLVs, before the rows of every
statement, and the BEGIN of every transaction of one connection has the same bytes. `parse_event`
keeps the parsed body of these types, keyed by the bytes between the common header and the
checksum and by what the FDE gives the parse (the post-header lengths, the checksum and
common-header lengths): identical bytes are never parsed twice. Their plain fields are built once
too (`body_fields`); each caller gets its own dict, whose values are shared: nothing changes them.
"""
from __future__ import annotations

from typing import Any

from binlog_spec.binlog import spec
from binlog_spec.binlog.event_types import EVENT_TYPES

ET = spec.EventType

#: Event code -> the finishing touches on its plain fields (EVENT_TYPES' `refine`, where it has one).
_REFINE = {code: row.refine for code, row in EVENT_TYPES.items() if row.refine is not None}

#: The types whose parsed bodies are kept.
REPEATED_BODIES = frozenset({int(ET.table_map_event), int(ET.query_event)})
#: Bound on the bodies kept (the cache is emptied when it is reached).
MAX_KEPT_BODIES = 512
_BODIES: dict[tuple, Any] = {}


def parse_event(buf: bytes, fde: spec.FormatDescription | None) -> Any:
    """spec.parse_event, the body of a repeated type taken from the kept ones when its bytes were
    parsed before (under the same FDE lengths)."""
    if fde is None or len(buf) < spec.LEN_EVENT_HEADER:
        return spec.parse_event(buf, fde)
    _ts, code, _sid, len_event, _end, _flags = spec.HEADER_STRUCT.unpack_from(buf)
    start, end = fde.len_common_header, len(buf) - fde.len_checksum
    if code not in REPEATED_BODIES or len_event != len(buf) or not spec.LEN_EVENT_HEADER <= start <= end:
        return spec.parse_event(buf, fde)   # (raises the spec's error for bytes that do not fit)
    key = (code, fde.post_header_lens, fde.len_checksum, start, buf[start:end])
    body = _BODIES.get(key)
    if body is None:
        body = spec.parse_event(buf, fde)
        if len(_BODIES) >= MAX_KEPT_BODIES:
            _BODIES.clear()
        _BODIES[key] = body
    return body


def _fields(body: Any, header: spec.EventHeader) -> dict[str, Any]:
    d = spec.plain_body(body)
    refine = _REFINE.get(header.type_code)
    if refine is not None:
        refine(d, header)
    return d


def body_fields(body: Any, header: spec.EventHeader) -> dict[str, Any]:
    """The plain, friendly fields of a parsed event body: spec.plain_body with the finishing touches of
    its type (EVENT_TYPES' `refine`). Built once for a body of a repeated type (a copy of the dict each time)."""
    if header.type_code not in REPEATED_BODIES:
        return _fields(body, header)
    kept = body.__dict__.get("_plain_fields")
    if kept is None:
        kept = body._plain_fields = _fields(body, header)
    return dict(kept)
