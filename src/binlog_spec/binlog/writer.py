"""Events back to bytes: binlog files, renamed schemas, decompressed and inverted events.

Every event is handled as *bare* bytes: its common header and body without
the CRC32 trailer, the header's size field equal to the bare length. `frame`
turns bare bytes into the bytes of an event at a position: the size and
end_log_pos (header bytes 9..12 and 13..16) set, and the CRC32 appended when
the output's FORMAT_DESCRIPTION_EVENT announces checksums.

Byte-level operations (offsets come from the FDE's post-header lengths):

* `rename_schema` - the schema of a TABLE_MAP_EVENT (1-byte length, name,
  NUL, right after the post-header) or the default database of a QUERY_EVENT;
* `decompress` - MariaDB's QUERY_COMPRESSED_EVENT (165) and *_ROWS_COMPRESSED
  events (166-171) into their plain counterparts (2, 30-32, 23-25);
* `set_stmt_end` - the STMT_END_F flag of a rows event.

`Item` is one output event; `BinlogFileWriter` writes Items as a binlog file.
The streams of Items (forward, renamed, rollback) are made by
`binlog_spec.output.rewriter`.
"""
from __future__ import annotations

import dataclasses
import zlib
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable, Mapping, NamedTuple

from binlog_spec.binlog import spec

from binlog_spec.binlog.fields import payload
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import (DROP, FIRST_FILE, FL_COMPLETED_XA, FL_PREPARED_XA, STMT_END_F,
                                           types_where)
from binlog_spec.errors import DecompressionError, MalformedEventError, RewriteError

ET = spec.EventType
H = spec.LEN_EVENT_HEADER
OFS_TYPE = 4
OFS_LEN = 9
OFS_END_LOG_POS = 13
OFS_FLAGS = spec.OFS_FLAGS

#: MariaDB compressed event -> its plain counterpart.
PLAIN_OF_COMPRESSED: dict[int, int] = {
    ET.query_compressed_event: ET.query_event,
    ET.write_rows_compressed_event: ET.write_rows_event,
    ET.update_rows_compressed_event: ET.update_rows_event,
    ET.delete_rows_compressed_event: ET.delete_rows_event,
    ET.write_rows_compressed_event_v1: ET.write_rows_event_v1,
    ET.update_rows_compressed_event_v1: ET.update_rows_event_v1,
    ET.delete_rows_compressed_event_v1: ET.delete_rows_event_v1,
}
ROWS_COMPRESSED = frozenset(PLAIN_OF_COMPRESSED) - {ET.query_compressed_event}

#: Rows event -> the event that undoes it.
INVERSE_TYPE: dict[int, int] = {
    ET.pre_ga_write_rows_event: ET.pre_ga_delete_rows_event, ET.pre_ga_delete_rows_event: ET.pre_ga_write_rows_event,
    ET.pre_ga_update_rows_event: ET.pre_ga_update_rows_event,
    ET.write_rows_event_v1: ET.delete_rows_event_v1, ET.delete_rows_event_v1: ET.write_rows_event_v1,
    ET.update_rows_event_v1: ET.update_rows_event_v1,
    ET.write_rows_event: ET.delete_rows_event, ET.delete_rows_event: ET.write_rows_event,
    ET.update_rows_event: ET.update_rows_event,
}
#: Events that describe a file rather than a transaction: kept from the first file only (event_types).
FILE_HEADER_EVENTS = types_where(rewrite=FIRST_FILE)
#: Events that make no sense in a rewritten file (positions and files of the source; event_types).
DROPPED_EVENTS = types_where(rewrite=DROP)


# --------------------------------------------------------------------------
# Bare events and framing


def bare_bytes(ev: Event) -> bytes:
    """The event's bytes without its CRC32 trailer, its size field set to that length."""
    raw = ev.raw
    n = len(raw) - 4 if ev.checksum is not None else len(raw)
    if int.from_bytes(raw[OFS_LEN:OFS_LEN + 4], "little") != n:
        return b"".join((raw[:OFS_LEN], n.to_bytes(4, "little"), raw[OFS_LEN + 4:n]))
    return bytes(raw[:n]) if n != len(raw) or type(raw) is not bytes else raw


def _with_len(b: bytearray) -> bytes:
    b[OFS_LEN:OFS_LEN + 4] = len(b).to_bytes(4, "little")
    return bytes(b)


def frame(bare: bytes, pos: int, checksum: bool, clear_in_use: bool = False) -> bytes:
    """The bytes of an event written at `pos`: size and end_log_pos set, the CRC32 appended when
    `checksum`. An FDE's CRC32 is computed with LOG_EVENT_BINLOG_IN_USE_F clear, as the server does;
    `clear_in_use` also clears the flag itself (the FDE of a closed file)."""
    b = bytearray(bare)
    size = len(b) + (4 if checksum else 0)
    b[OFS_LEN:OFS_LEN + 4] = size.to_bytes(4, "little")
    b[OFS_END_LOG_POS:OFS_END_LOG_POS + 4] = ((pos + size) & 0xFFFFFFFF).to_bytes(4, "little")
    in_use = b[OFS_TYPE] == ET.format_description_event and b[OFS_FLAGS] & spec.LOG_EVENT_BINLOG_IN_USE_F
    if in_use:
        b[OFS_FLAGS] &= ~spec.LOG_EVENT_BINLOG_IN_USE_F & 0xFF
    crc = zlib.crc32(b).to_bytes(4, "little") if checksum else b""
    if in_use and not clear_in_use:
        b[OFS_FLAGS] |= spec.LOG_EVENT_BINLOG_IN_USE_F
    return bytes(b + crc)


def fde_has_checksum(fde: spec.FormatDescription) -> bool:
    """An FDE with the checksum-algorithm byte carries a CRC32 itself, whatever the algorithm."""
    return fde.fde_checksum is not None


def events_have_checksum(fde: spec.FormatDescription) -> bool:
    return fde.len_checksum == 4


def parse_bare(bare: bytes, fde: spec.FormatDescription, file: str = "", pos: int = 0,
               payload_pos: int | None = None) -> Event:
    """An Event for bare bytes (parsed with `fde`'s post-header lengths, no checksum)."""
    fde0 = _without_checksum(fde)
    header = spec.parse_header(bare[:H])
    try:
        return Event(file, pos, header, bare, spec.parse_event(bare, fde0), payload_pos=payload_pos)
    except spec.SpecError as exc:
        err = MalformedEventError(f"rewritten event does not match its layout: {exc}", file=file, offset=pos,
                                  event_type=spec.event_type_name(header.type_code))
        return Event(file, pos, header, bare, None, error=err)


# --------------------------------------------------------------------------
# Layouts


def _header_len(fde: spec.FormatDescription) -> int:
    return fde.len_common_header or H


class RowsLayout(NamedTuple):
    """Offsets inside a rows event (from the start of the event)."""

    type_code: int
    table_id: int
    ofs_flags: int
    flags: int
    num_columns: int
    ofs_before: int          # columns-present bitmap of the before image (the only one of WRITE/DELETE)
    ofs_after: int | None    # UPDATE: columns-present bitmap of the after image
    ofs_rows: int

    @property
    def len_bitmap(self) -> int:
        return (self.num_columns + 7) >> 3


def rows_layout(bare: bytes, fde: spec.FormatDescription, file: str | None = None,
                pos: int | None = None) -> RowsLayout:
    """The layout of a rows event: post-header (table id, flags, [v2 extra-data length and extra
    data]), packed column count, columns-present bitmap(s), rows. MalformedEventError at `pos`
    when the bytes do not hold it."""
    try:
        return _rows_layout(bare, fde)
    except spec.SpecError as exc:
        raise MalformedEventError(f"rows event layout: {exc}", **_where(file, pos, bare[OFS_TYPE])) from None


def _rows_layout(bare: bytes, fde: spec.FormatDescription) -> RowsLayout:
    code = bare[OFS_TYPE]
    hl = _header_len(fde)
    o = spec.rows_offsets(code, fde.post_header_len(code), bare[hl:])
    return RowsLayout(code, o.table_id, hl + o.ofs_rows_flags, o.rows_flags, o.num_columns,
                      hl + o.ofs_columns_before_image,
                      None if o.ofs_columns_after_image is None else hl + o.ofs_columns_after_image, hl + o.ofs_rows)


@dataclass(frozen=True)
class QueryLayout:
    ofs_len_db: int
    ofs_db: int
    len_db: int
    ofs_query: int


def query_layout(bare: bytes, fde: spec.FormatDescription, file: str | None = None,
                 pos: int | None = None) -> QueryLayout:
    """QUERY_EVENT (and QUERY_COMPRESSED, EXECUTE_LOAD_QUERY): post-header (thread id 4, exec time 4,
    db length 1, error code 2, status-vars length 2, [load fields]), status vars, db, NUL, query.
    MalformedEventError at `pos` when the bytes do not hold it."""
    try:
        return _query_layout(bare, fde)
    except spec.SpecError as exc:
        raise MalformedEventError(f"query event layout: {exc}", **_where(file, pos, bare[OFS_TYPE])) from None


def _query_layout(bare: bytes, fde: spec.FormatDescription) -> QueryLayout:
    hl = _header_len(fde)
    o = spec.query_offsets(bare, _without_checksum(fde))
    return QueryLayout(hl + o.ofs_len_db, hl + o.ofs_db, o.len_db, hl + o.ofs_query)


def _without_checksum(fde: spec.FormatDescription) -> spec.FormatDescription:
    """`fde` for bare events (no CRC32 trailer)."""
    return fde if fde.len_checksum == 0 else dataclasses.replace(fde, len_checksum=0)


def query_parts(bare: bytes, fde: spec.FormatDescription, file: str | None = None,
                pos: int | None = None) -> tuple[bytes, bytes]:
    """(default database, statement) bytes of a QUERY_EVENT, as logged (no charset conversion)."""
    lay = query_layout(bare, fde, file, pos)
    return bare[lay.ofs_db:lay.ofs_db + lay.len_db], bare[lay.ofs_query:]


# --------------------------------------------------------------------------
# Byte-level rewrites


def _where(file: str | None, pos: int | None, code: int) -> dict:
    return {"file": file, "offset": pos, "event_type": spec.event_type_name(code)}


def rename_schema(bare: bytes, fde: spec.FormatDescription, mapping: Mapping[str, str],
                  file: str | None = None, pos: int | None = None) -> bytes:
    """TABLE_MAP_EVENT schema / QUERY_EVENT default database renamed by `mapping` (old -> new);
    other events, and names not in the mapping, come back unchanged."""
    if not mapping:
        return bare
    code = bare[OFS_TYPE]
    if code == ET.table_map_event:
        ofs = _header_len(fde) + fde.post_header_len(code)
        n = bare[ofs]
        old = bare[ofs + 1:ofs + 1 + n]
        new = _renamed(old, mapping)
        if new is None:
            return bare
        if len(new) > 255:
            raise RewriteError(f"schema name {new!r} is longer than 255 bytes", **_where(file, pos, code))
        return _with_len(bytearray(bare[:ofs]) + bytes([len(new)]) + new + bare[ofs + 1 + n:])
    if code in (ET.query_event, ET.query_compressed_event):
        lay = query_layout(bare, fde, file, pos)
        old = bare[lay.ofs_db:lay.ofs_db + lay.len_db]
        new = _renamed(old, mapping)
        if new is None:
            return bare
        if len(new) > 255:
            raise RewriteError(f"database name {new!r} is longer than 255 bytes", **_where(file, pos, code))
        b = bytearray(bare[:lay.ofs_db]) + new + bare[lay.ofs_db + lay.len_db:]
        b[lay.ofs_len_db] = len(new)
        return _with_len(b)
    return bare


def _renamed(old: bytes, mapping: Mapping[str, str]) -> bytes | None:
    name = old.decode("utf-8", "surrogateescape")
    if name not in mapping:
        return None
    return mapping[name].encode("utf-8", "surrogateescape")


def decompress(bare: bytes, fde: spec.FormatDescription, file: str | None = None,
               pos: int | None = None) -> bytes:
    """A MariaDB compressed event as its plain counterpart, with the decompressed bytes."""
    code = bare[OFS_TYPE]
    plain = PLAIN_OF_COMPRESSED.get(code)
    if plain is None:
        return bare
    if fde.post_header_len(code) != fde.post_header_len(plain):
        raise RewriteError(f"post-header of {spec.event_type_name(code)} ({fde.post_header_len(code)} bytes) "
                           f"differs from {spec.event_type_name(plain)}'s ({fde.post_header_len(plain)})",
                           **_where(file, pos, code))
    try:
        start = query_layout(bare, fde, file, pos).ofs_query if code == ET.query_compressed_event \
            else rows_layout(bare, fde).ofs_rows
        data = payload.mariadb_uncompress(bare[start:])
    except payload.PayloadError as exc:
        raise DecompressionError(str(exc), **_where(file, pos, code)) from None
    except (ValueError, IndexError) as exc:
        raise MalformedEventError(f"cannot find the compressed block: {exc}", **_where(file, pos, code)) from None
    b = bytearray(bare[:start]) + data
    b[OFS_TYPE] = plain
    return _with_len(b)


def begin_query(template: bytes, fde: spec.FormatDescription) -> bytes:
    """A bare QUERY_EVENT "BEGIN" with the timestamp and server id of `template` (a GTID event)."""
    hl = _header_len(fde)
    plen = max(fde.post_header_len(ET.query_event), 13)
    head = bytearray(template[:hl])
    head[OFS_TYPE] = ET.query_event
    head[OFS_FLAGS:OFS_FLAGS + 2] = b"\0\0"
    post = bytes(8) + b"\0" + bytes(2) + bytes(2) + bytes(plen - 13)
    return _with_len(head + post + b"\0" + b"BEGIN")


def gtid_with_seq_no(bare: bytes, fde: spec.FormatDescription, seq_no: int) -> bytes:
    """A MariaDB GTID_EVENT with another sequence number (the first 8 bytes of its body)."""
    hl = _header_len(fde)
    b = bytearray(bare)
    b[hl:hl + 8] = seq_no.to_bytes(8, "little")
    return bytes(b)


def xid_event(template: bytes, fde: spec.FormatDescription, xid: int = 0) -> bytes:
    """A bare XID_EVENT (COMMIT) with the timestamp and server id of `template`."""
    hl = _header_len(fde)
    head = bytearray(template[:hl])
    head[OFS_TYPE] = ET.xid_event
    head[OFS_FLAGS:OFS_FLAGS + 2] = b"\0\0"
    return _with_len(head + bytes(fde.post_header_len(ET.xid_event)) + xid.to_bytes(8, "little"))


def gtid_without_xa(bare: bytes, fde: spec.FormatDescription) -> bytes:
    """A MariaDB GTID_EVENT of an XA group made the GTID of a plain transaction: FL_PREPARED_XA and
    FL_COMPLETED_XA cleared and the XID after the fixed part (formats/binlog.ksy, mariadb_gtid_event:
    seq_no, domain_id, flags2, commit_id when flags2 & 2, then format_id u4, gtrid and bqual lengths u1
    each, their bytes) cut out, the body padded with zeros to its former fixed size."""
    at = _header_len(fde) + 13
    flags2 = bare[at - 1]
    if not flags2 & (FL_PREPARED_XA | FL_COMPLETED_XA):
        return bare
    fixed = at + (8 if flags2 & 2 else 0)
    xa_end = fixed + 6 + bare[fixed + 4] + bare[fixed + 5]
    body = bytearray(bare[:fixed] + bare[xa_end:])
    body[at - 1] = flags2 & ~(FL_PREPARED_XA | FL_COMPLETED_XA)
    body += bytes(max(0, _header_len(fde) + fde.post_header_len(ET.gtid_event) - len(body)))
    return _with_len(body)


def set_stmt_end(bare: bytes, fde: spec.FormatDescription, on: bool, file: str | None = None,
                 pos: int | None = None) -> bytes:
    """The rows event with its STMT_END_F flag set (on) or cleared."""
    lay = rows_layout(bare, fde, file, pos)
    flags = (lay.flags | STMT_END_F) if on else (lay.flags & ~STMT_END_F)
    if flags == lay.flags:
        return bare
    b = bytearray(bare)
    b[lay.ofs_flags:lay.ofs_flags + 2] = flags.to_bytes(2, "little")
    return bytes(b)


def has_stmt_end(bare: bytes, fde: spec.FormatDescription, file: str | None = None, pos: int | None = None) -> bool:
    return bool(rows_layout(bare, fde, file, pos).flags & STMT_END_F)


# --------------------------------------------------------------------------
# Streams of output events


@dataclass
class Item:
    """One output event: its bare bytes, where it comes from, and its parsed view."""

    bare: bytes
    file: str
    pos: int
    fde: spec.FormatDescription
    source: Event | None = None   # the input event, when the bytes are its own
    _event: Event | None = field(default=None, repr=False)

    @property
    def type_code(self) -> int:
        return self.bare[OFS_TYPE]

    @property
    def event(self) -> Event:
        if self._event is None:
            self._event = self.source if self.source is not None else parse_bare(self.bare, self.fde, self.file,
                                                                                  self.pos)
        return self._event


# --------------------------------------------------------------------------
# Binlog files


class BinlogFileWriter:
    """Writes Items as a binlog: the magic, then each event at its new position, with a recomputed
    end_log_pos and CRC32 (when the first FDE announces checksums)."""

    def __init__(self, out: BinaryIO):
        self.out = out
        self.pos = 0
        self.fde: spec.FormatDescription | None = None
        self.count = 0

    def write(self, item: Item) -> None:
        if self.pos == 0:
            self.out.write(spec.MAGIC)
            self.pos = spec.LEN_MAGIC
        if item.type_code == ET.format_description_event:
            self.fde = item.fde
            data = frame(item.bare, self.pos, fde_has_checksum(item.fde), clear_in_use=True)
        else:
            if self.fde is None:
                raise RewriteError("the first event written must be a FORMAT_DESCRIPTION_EVENT",
                                   file=item.file, offset=item.pos)
            data = frame(item.bare, self.pos, events_have_checksum(self.fde))
        self.out.write(data)
        self.pos += len(data)
        self.count += 1

    def write_all(self, items: Iterable[Item]) -> int:
        for item in items:
            self.write(item)
        return self.count


__all__ = ["frame", "bare_bytes", "parse_bare", "rows_layout", "query_layout", "query_parts", "rename_schema",
           "decompress", "set_stmt_end", "has_stmt_end", "Item", "BinlogFileWriter", "RowsLayout", "QueryLayout"]
