"""The one module that touches the generated Kaitai parsers (``generated/``).

Everything else in the package sees plain Python values: ints, strings,
bytes, lists and dicts keyed by the field names of ``formats/binlog.ksy``.
"""
from __future__ import annotations

import inspect
import operator
import struct
import zlib
from dataclasses import dataclass
from io import BytesIO
from typing import Any, Callable, NamedTuple

from kaitaistruct import KaitaiStream as _ReferenceStream, KaitaiStruct, KaitaiStructError

from binlog_spec import compiled
from binlog_spec._generated import binlog as _generated
from binlog_spec._generated.binlog import Binlog
from binlog_spec.binlog.fields import plain_fields
from binlog_spec.binlog.fields.plain_fields import COMPRESSION_TYPES, PAYLOAD_FIELDS  # noqa: F401 (spec's names)

#: The stream every Kaitai parse reads through: the compiled one (binlog/_cstream.pyx: KaitaiStream's read API,
#: the same values and errors) when built and BINLOG_SPEC_PURE is unset, else kaitaistruct's. The generated parsers
#: build sub-streams as `KaitaiStream(BytesIO(raw))`: their name is rebound here, the one place (spec.py's too).
_cstream = compiled.load("binlog_spec.binlog._cstream")
KaitaiStream = _cstream.FastStream if _cstream is not None else _ReferenceStream
_generated.KaitaiStream = KaitaiStream

MAGIC = b"\xfebin"
LEN_MAGIC = len(MAGIC)
LEN_EVENT_HEADER = 19
OFS_FLAGS = 17  # timestamp 4 + type 1 + server id 4 + size 4 + end_log_pos 4
LOG_EVENT_BINLOG_IN_USE_F = 0x1
#: The event exists only in a replication stream, not in the log (libbinlogevents binlog_event.h).
LOG_EVENT_ARTIFICIAL_F = 0x20

EventType = Binlog.EventType
ColumnType = Binlog.ColumnType

#: MySQL's spelling of every event type the spec names, by type code.
EVENT_TYPE_NAMES: dict[int, str] = {member.value: member.name.upper() for member in EventType}
#: MySQL's spelling of every column type (enum_field_types without MYSQL_TYPE_), by code.
COLUMN_TYPE_NAMES: dict[int, str] = {member.value: member.name.upper() for member in ColumnType}

#: Kaitai exceptions that mean "these bytes do not fit the layout".
SpecError = (KaitaiStructError, EOFError, ValueError, UnicodeDecodeError, IndexError)


def event_type_name(code: int) -> str:
    return EVENT_TYPE_NAMES.get(code, f"UNKNOWN_EVENT_{code}")


@dataclass(frozen=True)
class EventHeader:
    timestamp: int
    type_code: int
    server_id: int
    len_event: int
    end_log_pos: int
    flags: int


@dataclass(frozen=True)
class FormatDescription:
    """What a FORMAT_DESCRIPTION_EVENT says about the events after it."""

    binlog_version: int
    server_version: str
    create_timestamp: int
    len_common_header: int
    post_header_lens: bytes
    checksum_alg: int | None  # None: pre-5.6.1 FDE without the algorithm byte
    fde_checksum: int | None
    len_checksum: int

    def post_header_len(self, type_code: int) -> int:
        if 1 <= type_code <= len(self.post_header_lens):
            return self.post_header_lens[type_code - 1]
        return 0


def _parse_header_kaitai(buf: bytes) -> EventHeader:
    h = Binlog.EventHeader(KaitaiStream(BytesIO(buf)))
    return EventHeader(h.timestamp, int(h.type_code), h.server_id, h.len_event, h.end_log_pos, h.flags)


#: The spec's event_header (u4 timestamp, u1 type_code, u4 server_id, u4 len_event, u4 end_log_pos,
#: u2 flags, little-endian) as one struct read: parse_header runs once per event, and the generated
#: parser takes ~6 us for these 19 bytes. _FAST_HEADER says whether it gives what the generated
#: parser gives, checked at import on a probe header.
HEADER_STRUCT = struct.Struct("<IBIIIH")
_HEADER_PROBE = bytes(range(0x81, 0x81 + LEN_EVENT_HEADER))


def _parse_header_struct(buf: bytes) -> EventHeader:
    return EventHeader(*HEADER_STRUCT.unpack_from(buf))


_FAST_HEADER = _parse_header_struct(_HEADER_PROBE) == _parse_header_kaitai(_HEADER_PROBE)


def parse_header(buf: bytes) -> EventHeader:
    """Parse the 19-byte common header."""
    if _FAST_HEADER and len(buf) >= LEN_EVENT_HEADER:
        header = _parse_header_struct(buf)
        if header.len_event >= LEN_EVENT_HEADER:
            return header
    return _parse_header_kaitai(buf)  # also raises the spec's error (too short, len_event < 19)


def event_crc32(event: bytes | memoryview, fde: bool = False) -> int:
    """The CRC32 the server writes in an event's 4-byte trailer, computed from the event's other
    bytes. An FDE's (`fde`) is computed with LOG_EVENT_BINLOG_IN_USE_F cleared: the server computes
    it before it sets that flag in an open binlog."""
    covered = memoryview(event)[:-4]
    if fde and covered[OFS_FLAGS] & LOG_EVENT_BINLOG_IN_USE_F:
        clean = bytearray(covered)
        clean[OFS_FLAGS] &= ~LOG_EVENT_BINLOG_IN_USE_F
        return zlib.crc32(clean)
    return zlib.crc32(covered)


def parse_fde(body: bytes) -> FormatDescription:
    """Parse a FORMAT_DESCRIPTION_EVENT body (everything after the common header)."""
    f = Binlog.FormatDescriptionEvent(KaitaiStream(BytesIO(body)))
    alg = getattr(f, "checksum_alg", None)
    return FormatDescription(
        binlog_version=f.binlog_version,
        server_version=f.server_version,
        create_timestamp=f.create_timestamp,
        len_common_header=f.len_common_header,
        post_header_lens=bytes(f.post_header_lens),
        checksum_alg=None if alg is None else int(alg),
        fde_checksum=getattr(f, "fde_checksum", None),
        len_checksum=f.len_checksum,
    )


def parse_event(buf: bytes, fde: FormatDescription | None) -> KaitaiStruct:
    """Parse one whole event; returns the Kaitai body object (opaque to callers)."""
    if fde is None:  # only the FDE itself can be parsed before an FDE
        return parse_body_only(buf, LEN_EVENT_HEADER)
    body = _parse_body(buf, fde)
    if body is not None:
        return body
    ev = Binlog.Event(fde.post_header_lens, fde.len_checksum, fde.len_common_header,
                      KaitaiStream(BytesIO(buf)))
    if buf[4] != EventType.format_description_event and len(_BODY_ARGS) < 4096:
        cls = type(ev.body)
        _BODY_ARGS[buf[4], fde.post_header_lens, fde.len_checksum, fde.len_common_header] = (
            cls, tuple(getattr(ev.body, name) for name in _field_names(cls)[0]))
    return ev.body


# Every event but the FDE: parse_event builds the body class that the generated Event switch
# chose for the last event of its type (under the same FDE lengths) directly on the body bytes, with
# the arguments the switch gave it (read off that parsed body: the spec stays their one source),
# instead of going through Binlog.Event, which parses the header again and then tests the type code
# against the whole event_type switch.

#: (type code, post-header lengths, len_checksum, len_common_header) -> (body class, its arguments
#: before _io), as Binlog.Event built the body of an event of that type under such an FDE.
_BODY_ARGS: dict[tuple, tuple] = {}


def _parse_body(buf: bytes, fde: FormatDescription) -> KaitaiStruct | None:
    """The body Binlog.Event(...).body would be, for a type whose body class is known (_BODY_ARGS); None
    otherwise, and for anything Binlog.Event would not read the same way (it then parses, or raises)."""
    if len(buf) < LEN_EVENT_HEADER:
        return None
    known = _BODY_ARGS.get((buf[4], fde.post_header_lens, fde.len_checksum, fde.len_common_header))
    if known is None:
        return None
    len_event = int.from_bytes(buf[9:13], "little")
    start, end = fde.len_common_header, len_event - fde.len_checksum
    if len_event != len(buf) or start < LEN_EVENT_HEADER or end < start or fde.len_checksum not in (0, 4):
        return None
    try:
        return known[0](*known[1], KaitaiStream(BytesIO(buf[start:end])))
    except Exception:
        return None  # the whole-event parse raises the spec's own error for these bytes


#: type code -> the arguments after len_post_header that Binlog.Event gives Binlog.RowsEvent
#: for it (version, has_after_image), or None when its body is no RowsEvent.
_ROWS_BODY_ARGS: dict[int, tuple | None] = {}


def _rows_body_args(type_code: int) -> tuple | None:
    """Parse two probe events of this type with Binlog.Event (post-header lengths 10 and 12,
    each with a body that every rows event version reads) and keep the RowsEvent arguments
    when the body is a RowsEvent that got the FDE's post-header length and the same other
    arguments both times."""
    try:
        return _ROWS_BODY_ARGS[type_code]
    except KeyError:
        pass
    found: list[tuple] = []
    for len_post_header in (10, 12):
        body = bytes(8) + b"\x02\x00" + bytes(len_post_header - 10) + b"\x01\x01\x01\x01"
        event = HEADER_STRUCT.pack(0, type_code, 0, LEN_EVENT_HEADER + len(body), 0, 0) + body
        try:
            parsed = Binlog.Event(bytes([len_post_header]) * 255, 0, LEN_EVENT_HEADER,
                                  KaitaiStream(BytesIO(event))).body
        except Exception:  # not a body these bytes fit: not a rows event
            break
        if type(parsed) is not Binlog.RowsEvent or parsed.len_post_header != len_post_header:
            break
        found.append((parsed.version, parsed.has_after_image))
    args = found[0] if len(found) == 2 and found[0] == found[1] else None
    _ROWS_BODY_ARGS[type_code] = args
    return args


class RowsOffsets(NamedTuple):
    """Where the parts of a rows event body start (rows_event's ofs_ instances, from the body start)."""

    table_id: int
    rows_flags: int
    num_columns: int
    ofs_rows_flags: int
    len_columns_bitmap: int
    ofs_columns_before_image: int
    ofs_columns_after_image: int | None  # None: no after image (WRITE, DELETE)
    ofs_rows: int


def rows_offsets(type_code: int, len_post_header: int, body: bytes) -> RowsOffsets:
    """The offsets of a rows event body (after the common header, no checksum trailer): table id
    (its len_table_id bytes), rows_flags, len_extra_data and num_columns are read where rows_event
    says; the other offsets are worked out by the generated instances (on an unparsed RowsEvent)
    and kept for the next event of that shape: rollback asks this of every rows event. One of
    SpecError when the bytes do not hold the layout."""
    len_table_id, ofs_rows_flags, ofs_extra = _rows_head(type_code, len_post_header)
    extra = b"" if ofs_extra is None else body[ofs_extra:ofs_extra + 2]
    at = _ROWS_COUNT_AT.get((type_code, len_post_header, extra))
    if at is None:
        at = _ROWS_COUNT_AT[type_code, len_post_header, extra] = _rows_stub(type_code, len_post_header,
                                                                            extra).ofs_num_columns
    first = body[at] if at < len(body) else 0
    size = _PACKED_LENS.get(first) or _packed_len(first)
    key = (type_code, len_post_header, extra, body[at:at + size])
    shape = _ROWS_SHAPES.get(key)
    if shape is None:
        r = _rows_stub(type_code, len_post_header, extra)
        count = r.num_columns = Binlog.PackedInt(KaitaiStream(BytesIO(key[3])))
        if not count.is_length:
            raise ValueError(f"bad packed integer first byte {count.first:#04x} at body offset {at}")
        if len(_ROWS_SHAPES) > 4096:
            _ROWS_SHAPES.clear()
        shape = _ROWS_SHAPES[key] = (count.value, ofs_rows_flags, r.len_columns_bitmap, r.ofs_columns_before_image,
                                     r.ofs_columns_after_image, r.ofs_rows)
    if shape[-1] > len(body):
        raise ValueError("rows event ends inside its column bitmaps")
    return RowsOffsets(int.from_bytes(body[:len_table_id], "little"),
                       int.from_bytes(body[ofs_rows_flags:ofs_rows_flags + 2], "little"), *shape)


def rows_extra_at(type_code: int, len_post_header: int) -> int | None:
    """Where a rows event body's len_extra_data (u2) is (rows_event's ofs_len_extra_data); None before v2."""
    return _rows_head(type_code, len_post_header)[2]


def _rows_head(type_code: int, len_post_header: int) -> tuple:
    head = _ROWS_HEADS.get((type_code, len_post_header))
    if head is None:
        r = _rows_stub(type_code, len_post_header)
        head = _ROWS_HEADS[type_code, len_post_header] = (r.len_table_id, r.ofs_rows_flags,
                                                         r.ofs_len_extra_data if r.version == 2 else None)
    return head


#: Kept offsets of rows_offsets: (type code, len_post_header) -> (len_table_id, ofs_rows_flags,
#: ofs_len_extra_data); with the len_extra_data bytes -> ofs_num_columns; with the bytes at
#: ofs_num_columns too -> (num_columns, ofs_rows_flags, len_columns_bitmap, ofs_ of the images, ofs_rows).
_ROWS_HEADS: dict[tuple, tuple] = {}
_ROWS_COUNT_AT: dict[tuple, int] = {}
_ROWS_SHAPES: dict[tuple, tuple] = {}
#: First byte of a packed_int -> its len_packed_int.
_PACKED_LENS: dict[int, int] = {}


def _packed_len(first: int) -> int:
    p = Binlog.PackedInt.__new__(Binlog.PackedInt)
    p.first = first
    _PACKED_LENS[first] = p.len_packed_int
    return p.len_packed_int


def _rows_stub(type_code: int, len_post_header: int, extra: bytes | None = None) -> KaitaiStruct:
    """A RowsEvent with its parameters (and len_extra_data) set and nothing read: its instances."""
    args = _rows_body_args(type_code)
    if args is None:
        raise ValueError(f"{event_type_name(type_code)} is not a rows event")
    r = Binlog.RowsEvent.__new__(Binlog.RowsEvent)
    r.len_post_header, (r.version, r.has_after_image) = len_post_header, args
    if extra is not None and r.version == 2:
        r.len_extra_data = int.from_bytes(extra, "little")
        if r.len_extra_data < 2:
            raise ValueError("v2 extra-data length below 2")
    return r


@dataclass(frozen=True)
class QueryOffsets:
    """Where the parts of a query_event body start (its ofs_ instances, from the body start)."""

    ofs_len_db: int
    len_db: int
    ofs_status_vars: int
    ofs_db: int
    ofs_query: int


def query_offsets(event: bytes | memoryview, fde: FormatDescription) -> QueryOffsets:
    """The offsets of an event with the query_event layout (the whole event, its trailer as `fde`
    says): len_db and len_status_vars read where ofs_len_db and ofs_len_status_vars say, the other
    offsets worked out by the generated instances from them, without parsing the status variables
    (Spark's planning asks this of every QUERY_EVENT). ValueError or IndexError when the bytes do
    not hold the layout (db_terminator: the NUL after the database name)."""
    code = event[4]
    has_load_fields = _query_body_args(code)
    if has_load_fields is None:
        raise ValueError(f"{event_type_name(code)} has no QUERY_EVENT layout")
    q = Binlog.QueryEvent.__new__(Binlog.QueryEvent)   # the instances only, nothing read
    q.len_post_header, q.has_load_fields = fde.post_header_len(code), has_load_fields
    start = fde.len_common_header
    q.len_db = event[start + q.ofs_len_db]
    if q.has_status_vars:
        at = start + q.ofs_len_status_vars
        q.len_status_vars = int.from_bytes(event[at:at + 2], "little")
    nul = start + q.ofs_db + q.len_db   # db_terminator
    if nul >= len(event) - fde.len_checksum or event[nul] != 0:
        raise ValueError("no NUL after the database name")
    return QueryOffsets(q.ofs_len_db, q.len_db, q.ofs_status_vars, q.ofs_db, q.ofs_query)


#: type code -> has_load_fields of the QueryEvent body Binlog.Event gives it, or None.
_QUERY_BODY_ARGS: dict[int, bool | None] = {}


def _query_body_args(type_code: int) -> bool | None:
    """has_load_fields of a probe event of this type parsed with Binlog.Event (post-header length 26,
    a body every query_event variant reads), when its body is a QueryEvent."""
    if type_code in _QUERY_BODY_ARGS:
        return _QUERY_BODY_ARGS[type_code]
    body = bytes(26) + b"\0"
    event = HEADER_STRUCT.pack(0, type_code, 0, LEN_EVENT_HEADER + len(body), 0, 0) + body
    try:
        parsed = Binlog.Event(bytes([26]) * 255, 0, LEN_EVENT_HEADER, KaitaiStream(BytesIO(event))).body
    except Exception:  # not a body these bytes fit: no query event
        parsed = None
    return _QUERY_BODY_ARGS.setdefault(type_code, parsed.has_load_fields if type(parsed) is Binlog.QueryEvent
                                       else None)


def parse_body_only(buf: bytes, len_header: int) -> KaitaiStruct:
    return Binlog.FormatDescriptionEvent(KaitaiStream(BytesIO(buf[len_header:])))


# --------------------------------------------------------------------------
# Kaitai objects -> plain values


# Types that stand for one value: the value is this attribute.
_SCALAR_OF: dict[type, str] = {
    Binlog.PackedInt: "value",
    Binlog.VarlenUint: "value",
    Binlog.StrU1: "value",
    Binlog.LenStr: "value",
    Binlog.LenBytes: "value",
    Binlog.GtidLogEvent.CommitTimestamp: "microseconds",
    Binlog.GtidLogEvent.ServerVersion: "version",
    Binlog.StatusVars: "entries",
    Binlog.ColumnMetadata: "columns",
    Binlog.RowsExtraData: "items",
    Binlog.StatusVar.RawRest: "data",
    Binlog.RowsExtraItem.RawRest: "data",
    Binlog.OptionalMetadataField.OmBitmap: "bits",
    Binlog.OptionalMetadataField.OmPackedInts: "items",
    Binlog.OptionalMetadataField.OmPackedPairs: "items",
    Binlog.OptionalMetadataField.OmStrings: "items",
    Binlog.OptionalMetadataField.OmStrValues: "columns",
    Binlog.OptionalMetadataField.OmRaw: "data",
    Binlog.GtidTag: "tag",
    Binlog.TaggedGtidField: "items",
}

# Fields that are internal to the layout (lengths already applied, terminators, padding).
_HIDDEN = {"db_terminator", "schema_terminator", "table_terminator", "num_sids_low", "num_sids_high",
           "table_id_low", "table_id_high", "len_post_header_known", "type_code_num", "padding",
           "len_before_alg", "len_fde_post_header", "len_trailer", "flags2_bits",
           # offsets in rows_event and query_event: for the writer, not fields of the event
           "ofs_rows_flags", "ofs_len_extra_data", "ofs_num_columns", "len_columns_bitmap", "ofs_columns_before_image",
           "ofs_columns_after_image", "ofs_rows", "has_status_vars", "ofs_len_db", "ofs_len_status_vars", "ofs_status_vars", "ofs_db", "ofs_query"}

_FIELDS_CACHE: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _field_names(cls: type) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(params, instances) of a generated class."""
    cached = _FIELDS_CACHE.get(cls)
    if cached is None:
        params = tuple(p for p in inspect.signature(cls.__init__).parameters
                       if p not in ("self", "_io", "_parent", "_root"))
        instances = tuple(name for name, attr in vars(cls).items()
                          if isinstance(attr, property) and not name.startswith("_"))
        cached = _FIELDS_CACHE[cls] = (params, instances)
    return cached


#: Convert a Kaitai value tree to plain Python values (plain_fields.kaitai_to_plain: structs to dicts of
#: their seq fields and instances but params, _HIDDEN and None; _SCALAR_OF types to their one value).
to_plain = plain_fields.kaitai_to_plain(_SCALAR_OF, _HIDDEN, lambda cls: _field_names(cls)[0],
                                        lambda cls: _field_names(cls)[1])


def refine_table_map(d: dict, header: EventHeader) -> None:
    """TABLE_MAP_EVENT's plain fields: its column types as a list, with their names; each column's metadata."""
    d["column_types"] = list(d["column_types"])
    d["column_type_names"] = [COLUMN_TYPE_NAMES.get(t, str(t)) for t in d["column_types"]]
    d["column_metadata"] = [c.get("meta", {}) for c in d["column_metadata"]]


def payload_parts(body: KaitaiStruct) -> tuple[int | None, bytes, int | None]:
    """(compression type, compressed bytes, uncompressed size) of a TRANSACTION_PAYLOAD_EVENT body."""
    values = {int(f.field_type.value): f.value.value for f in body.header_fields
              if f.field_type.value in plain_fields.PAYLOAD_FIELDS}
    return values.get(2), bytes(body.payload), values.get(3)


def raw_field(body: KaitaiStruct, name: str) -> bytes:
    """The bytes of one body field (for decompression in place)."""
    return bytes(getattr(body, name))


def refine_gtid(d: dict, header: EventHeader) -> None:
    """MySQL GTID_LOG_EVENT / ANONYMOUS_GTID_LOG_EVENT's plain fields: the UUID as text, the GTID."""
    d["sid"] = plain_fields.uuid_text(d["sid"])
    if header.type_code == EventType.anonymous_gtid_log_event:
        d["gtid"] = "ANONYMOUS"
    else:
        d["gtid"] = f"{d['sid']}:{d['gno']}"




def rows_parts(body: KaitaiStruct) -> tuple[int, int, bytes, bytes | None, bytes] | None:
    """(table_id, num_columns, columns_before_image, columns_after_image or None, rows) of a
    rows event body: the fields the row decoder needs, with the values `bodies.body_fields` gives
    them, without building the whole dict. None when the body is no RowsEvent."""
    if type(body) is not Binlog.RowsEvent:
        return None
    return (body.table_id, body.num_columns.value, bytes(body.columns_before_image),
            bytes(body.columns_after_image) if body.has_after_image else None, bytes(body.rows))


def rows_head(body: KaitaiStruct) -> tuple[int, int] | None:
    """(table_id, rows_flags) of a rows event body, the values `bodies.body_fields` gives them, without
    building the dict. None when the body is no RowsEvent."""
    return (body.table_id, body.rows_flags) if type(body) is Binlog.RowsEvent else None


def body_values(body: KaitaiStruct, names: tuple[str, ...]) -> tuple | None:
    """The values of plain integer or byte fields of a body (the seq fields `bodies.body_fields` gives as they
    are read), without building the dict. None when the body lacks one or one is of another kind
    (an enum, a struct): ask `bodies.body_fields`."""
    get = _GETTERS.get(names) or _GETTERS.setdefault(names, operator.attrgetter(*names, "_io"))
    try:
        values = get(body)[:-1]     # (the stream last: a tuple for one name too)
    except AttributeError:
        return None
    return values if all(type(v) is int or type(v) is bytes for v in values) else None


_GETTERS: dict[tuple[str, ...], Callable] = {}     # body_values' getters, by the names asked for


def statement_bytes(body: KaitaiStruct) -> bytes | None:
    """The statement of a QUERY_EVENT-layout body (QUERY_EVENT, EXECUTE_LOAD_QUERY_EVENT), as the
    bytes `bodies.body_fields` decodes, without building the whole dict. None for other bodies."""
    if type(body) is not Binlog.QueryEvent:
        return None
    return bytes(body.query)


def plain_body(body: KaitaiStruct) -> dict[str, Any]:
    """The plain fields of a parsed event body, before the finishing touches of its type
    (event_types.EVENT_TYPES' `refine`; binlog/fields/bodies.py `body_fields` applies them)."""
    d = to_plain(body)
    return d if isinstance(d, dict) else {"value": d}
