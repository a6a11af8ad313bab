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
* `invert_rows` - the rows event that undoes a rows event: WRITE and DELETE
  swapped, UPDATE before and after images (and their columns-present
  bitmaps) swapped row by row, the rows in reverse order;
* `set_stmt_end` - the STMT_END_F flag of a rows event.

`Rewriter` turns an event stream into the events of an output, forward or
rollback; `BinlogFileWriter` writes them as a binlog file. Rollback output
(transactions last first, rows events in reverse within each) is spooled to a
temporary file, so memory stays bounded whatever the input size.
"""
from __future__ import annotations

import dataclasses
import struct
import tempfile
import zlib
from array import array
from dataclasses import dataclass, field
from typing import BinaryIO, Iterable, Iterator, Mapping

from binlog_spec import payload, rows, rowwalk, spec
from binlog_spec.errors import BinlogError, DecompressionError, MalformedEventError, MissingTableMapError
from binlog_spec.event import Event
from binlog_spec.filters import GTID_EVENTS, QUERY_EVENTS, ROWS_EVENTS, Transactions, is_begin, is_commit
from binlog_spec.tablemap import TableDef
from binlog_spec.values import packed_int

ET = spec.EventType
H = spec.LEN_EVENT_HEADER
OFS_TYPE = 4
OFS_LEN = 9
OFS_END_LOG_POS = 13
OFS_FLAGS = spec.OFS_FLAGS

#: Rows event flags (Rows_event::enum_flag).
STMT_END_F = 0x1

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
_V2_ROWS = frozenset({ET.write_rows_event, ET.update_rows_event, ET.delete_rows_event, ET.partial_update_rows_event,
                      ET.write_rows_compressed_event, ET.update_rows_compressed_event,
                      ET.delete_rows_compressed_event})
_UPDATE_ROWS = frozenset(code for code, op in rows.ROW_OPS.items() if op == rows.UPDATE)
#: Events that describe a file rather than a transaction: kept from the first file only.
FILE_HEADER_EVENTS = frozenset({ET.previous_gtids_log_event, ET.gtid_list_event, ET.binlog_checkpoint_event})
#: Events that make no sense in a rewritten file (positions and files of the source).
DROPPED_EVENTS = frozenset({ET.rotate_event, ET.stop_event, ET.heartbeat_log_event, ET.heartbeat_log_event_v2,
                            ET.start_encryption_event})


class RollbackError(BinlogError):
    """A rows event cannot be inverted (partial row images, JSON diffs, an unknown layout)."""


class RewriteError(BinlogError):
    """An event cannot be re-serialised as asked."""


# --------------------------------------------------------------------------
# Bare events and framing


def bare_bytes(ev: Event) -> bytes:
    """The event's bytes without its CRC32 trailer, its size field set to that length."""
    raw = ev.raw
    if ev.checksum is not None:
        raw = raw[:-4]
    if int.from_bytes(raw[OFS_LEN:OFS_LEN + 4], "little") != len(raw):
        raw = _with_len(bytearray(raw))
    return bytes(raw)


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
    fde0 = fde if fde.len_checksum == 0 else dataclasses.replace(fde, len_checksum=0)
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


@dataclass(frozen=True)
class RowsLayout:
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
    except (ValueError, IndexError) as exc:
        raise MalformedEventError(f"rows event layout: {exc}", **_where(file, pos, bare[OFS_TYPE])) from None


def _rows_layout(bare: bytes, fde: spec.FormatDescription) -> RowsLayout:
    code = bare[OFS_TYPE]
    hl = _header_len(fde)
    plen = fde.post_header_len(code)
    v2 = code in _V2_ROWS
    len_table_id = 6 if plen - (4 if v2 else 2) >= 6 else 4
    ofs = hl
    table_id = int.from_bytes(bare[ofs:ofs + len_table_id], "little")
    ofs += len_table_id
    ofs_flags = ofs
    flags = int.from_bytes(bare[ofs:ofs + 2], "little")
    ofs += 2
    extra = 0
    if v2:
        extra = int.from_bytes(bare[ofs:ofs + 2], "little") - 2
        ofs += 2
        if extra < 0:
            raise ValueError("v2 extra-data length below 2")
    known = len_table_id + 2 + (2 if v2 else 0)
    ofs = hl + max(plen, known) + extra
    width, ofs = packed_int(bare, ofs)
    nbits = (width + 7) >> 3
    ofs_before = ofs
    ofs += nbits
    ofs_after = None
    if code in _UPDATE_ROWS:
        ofs_after = ofs
        ofs += nbits
    if ofs > len(bare):
        raise ValueError("rows event ends inside its column bitmaps")
    return RowsLayout(code, table_id, ofs_flags, flags, width, ofs_before, ofs_after, ofs)


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
    except (ValueError, IndexError) as exc:
        raise MalformedEventError(f"query event layout: {exc}", **_where(file, pos, bare[OFS_TYPE])) from None


def _query_layout(bare: bytes, fde: spec.FormatDescription) -> QueryLayout:
    code = bare[OFS_TYPE]
    hl = _header_len(fde)
    plen = fde.post_header_len(code)
    len_db = bare[hl + 8]
    len_status = int.from_bytes(bare[hl + 11:hl + 13], "little") if plen >= 13 else 0
    ofs_db = hl + plen + len_status
    if ofs_db + len_db >= len(bare) or bare[ofs_db + len_db] != 0:
        raise ValueError("no NUL after the database name")
    return QueryLayout(hl + 8, ofs_db, len_db, ofs_db + len_db + 1)


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


#: MariaDB GTID_EVENT flags2 bit: the group is one statement with no BEGIN/COMMIT.
FL_STANDALONE = 0x01


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


def invert_rows(bare: bytes, fde: spec.FormatDescription, table: TableDef, file: str | None = None,
                pos: int | None = None) -> bytes:
    """The rows event that undoes this one: WRITE <-> DELETE, UPDATE images swapped row by row
    (and the two columns-present bitmaps), the rows in reverse order. Refuses partial images
    (binlog_row_image MINIMAL/NOBLOB) and MySQL's PARTIAL_UPDATE_ROWS_EVENT (JSON diffs)."""
    code = bare[OFS_TYPE]
    where = _where(file, pos, code)
    if code in ROWS_COMPRESSED:
        bare = decompress(bare, fde, file, pos)
        code = bare[OFS_TYPE]
    if code == ET.partial_update_rows_event:
        raise RollbackError("PARTIAL_UPDATE_ROWS_EVENT holds JSON diffs, not after images: it cannot be "
                            "inverted (binlog_row_value_options=PARTIAL_JSON)", **where)
    if code not in INVERSE_TYPE:
        raise RollbackError(f"not a rows event ({spec.event_type_name(code)})", **where)
    lay = rows_layout(bare, fde, file, pos)
    n = lay.num_columns
    bitmaps = [bare[lay.ofs_before:lay.ofs_before + lay.len_bitmap]]
    if lay.ofs_after is not None:
        bitmaps.append(bare[lay.ofs_after:lay.ofs_after + lay.len_bitmap])
    rowwalk.check_rows(table, n, bitmaps[0], bitmaps[1] if len(bitmaps) > 1 else None,
                       len(bare) - lay.ofs_rows, **where)
    present = [rows.present_columns(bm, n) for bm in bitmaps]
    # The undo of an insert deletes the row it wrote: a partial image (generated columns left out,
    # MINIMAL) still finds it. The undo of a delete or an update must write whole rows back.
    if rows.ROW_OPS[code] != rows.INSERT and any(len(p) != n for p in present):
        raise RollbackError(f"the row images of `{table.schema}`.`{table.table}` lack columns "
                            "(binlog_row_image MINIMAL or NOBLOB): a delete or update cannot be undone "
                            "from them", **where)
    names = table.names
    data = bare[lay.ofs_rows:]
    out: list[bytes] = []
    p, index = 0, 0
    try:
        while p < len(data):
            _, mid = rows.decode_image(data, p, table, present[0], names)
            if lay.ofs_after is None:
                out.append(data[p:mid])
                p = mid
            else:
                _, end = rows.decode_image(data, mid, table, present[1], names)
                out.append(data[mid:end] + data[p:mid])
                p = end
            index += 1
    except (ValueError, IndexError) as exc:
        raise MalformedEventError(f"row {index}: {exc}", **where) from None
    out.reverse()
    head = bytearray(bare[:lay.ofs_rows])
    head[OFS_TYPE] = INVERSE_TYPE[code]
    if lay.ofs_after is not None:
        b0, b1 = bitmaps[0], bitmaps[1]
        head[lay.ofs_before:lay.ofs_before + lay.len_bitmap] = b1
        head[lay.ofs_after:lay.ofs_after + lay.len_bitmap] = b0
    return _with_len(head + b"".join(out))


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


@dataclass(frozen=True)
class WriteOptions:
    #: old schema -> new schema, for TABLE_MAP events and the default database of statements.
    rewrite_db: Mapping[str, str] = field(default_factory=dict)
    #: Invert the row events: transactions last first, rows events in reverse within each.
    rollback: bool = False
    #: Whether the reader expanded TRANSACTION_PAYLOAD_EVENTs (their inner events follow them):
    #: the payload event is then dropped and its inner events written as plain events.
    payloads_expanded: bool = True
    #: Leave the GTIDs out: MySQL GTID events are dropped, a MariaDB GTID event becomes a BEGIN
    #: statement (or nothing, for a standalone DDL), so that the server replaying the output gives
    #: the transactions GTIDs of its own.
    skip_gtids: bool = False
    #: Rollback: hand the MariaDB sequence numbers of the inverted transactions out again in
    #: ascending order (each domain's sequence must grow for mariadb-binlog and strict servers).
    renumber_gtids: bool = True


class Rewriter:
    """Turns input events into output Items: the first FDE, the first file's header events, then
    the transactions (forward: as they come; rollback: inverted, last first)."""

    def __init__(self, options: WriteOptions = WriteOptions()):
        self.options = options
        #: The FDE written out (the first one read); every event is written in its format.
        self.out_fde: spec.FormatDescription | None = None
        self.in_fde: spec.FormatDescription | None = None
        self.mariadb = False
        self.tables: dict[int, TableDef] = {}
        self.first_file: str | None = None
        #: Statements a rollback cannot undo: (file, pos, text), spooled to disk.
        self.skipped = _LineSpool()

    # -- one event ---------------------------------------------------------
    def _fde_item(self, ev: Event) -> Item | None:
        fde = spec.parse_fde(ev.raw[H:])
        self.in_fde = fde
        self.mariadb = len(fde.post_header_lens) >= rows.MARIADB_FIRST_EVENT
        self.tables = {}
        if self.out_fde is None:
            self.out_fde = fde
            self.first_file = ev.file
            return Item(bare_bytes(ev), ev.file, ev.pos, fde, source=ev)
        if fde.post_header_lens == self.out_fde.post_header_lens and \
                fde.binlog_version == self.out_fde.binlog_version:
            return None  # same format: the events are written in the first FDE's (checksums normalised)
        if self.options.rollback:
            raise RewriteError("the binlogs have different formats (FORMAT_DESCRIPTION post-header lengths): "
                               "a rollback across them cannot be written as one binlog",
                               file=ev.file, offset=ev.pos, event_type=ev.type)
        self.out_fde = fde
        return Item(bare_bytes(ev), ev.file, ev.pos, fde, source=ev)

    def transform(self, ev: Event) -> Item | None:
        """The output form of an input event (None: not written)."""
        code = ev.type_code
        if code == ET.format_description_event:
            return self._fde_item(ev)
        if self.out_fde is None:
            raise RewriteError("no FORMAT_DESCRIPTION_EVENT before the first event", file=ev.file, offset=ev.pos,
                               event_type=ev.type)
        if code in DROPPED_EVENTS:
            return None
        if code in FILE_HEADER_EVENTS and ev.file != self.first_file:
            return None
        if code == ET.transaction_payload_event and self.options.payloads_expanded and ev.error is None:
            return None
        fde = self.in_fde or self.out_fde
        if self.options.skip_gtids and code in GTID_EVENTS and ev.error is None:
            if code == ET.gtid_event and not ev.fields["flags2"] & FL_STANDALONE:
                return Item(begin_query(bare_bytes(ev), self.out_fde), ev.file, ev.pos, self.out_fde)
            return None
        bare = bare_bytes(ev)
        if ev.error is not None:
            return Item(bare, ev.file, ev.pos, self.out_fde, source=ev)
        changed = False
        if code in PLAIN_OF_COMPRESSED:
            bare = decompress(bare, fde, ev.file, ev.pos)
            changed = True
        if code == ET.table_map_event:
            self.tables[ev.fields["table_id"]] = TableDef.from_event(ev, self.mariadb)
        if self.options.rewrite_db and bare[OFS_TYPE] in (ET.table_map_event, ET.query_event):
            new = rename_schema(bare, fde, self.options.rewrite_db, ev.file, ev.pos)
            changed = changed or new is not bare
            bare = new
        item = Item(bare, ev.file, ev.pos, self.out_fde, source=None if changed else ev)
        if changed and ev.table_def is not None:    # the table as the schema knew it, renamed
            item.event.table_def = dataclasses.replace(ev.table_def, schema=item.event.fields["schema"])
        return item

    # -- streams -----------------------------------------------------------
    def items(self, events: Iterable[Event]) -> Iterator[Item]:
        if self.options.rollback:
            return self._rollback(events)
        return self._forward(events)

    def _forward(self, events: Iterable[Event]) -> Iterator[Item]:
        """Events as they come; a rows event that ends its statement without STMT_END_F (its last
        rows event was filtered out) gets the flag, or the server would not close the statement."""
        pending: Item | None = None
        for ev in events:
            item = self.transform(ev)
            if item is None:
                continue
            if pending is not None:
                if item.type_code in ROWS_EVENTS:
                    yield pending
                else:
                    yield self._ended(pending)
                pending = None
            if item.type_code in ROWS_EVENTS and ev.error is None and \
                    not has_stmt_end(item.bare, item.fde, item.file, item.pos):
                pending = item
                continue
            yield item
        if pending is not None:
            yield self._ended(pending)

    def _ended(self, item: Item) -> Item:
        return Item(set_stmt_end(item.bare, item.fde, True, item.file, item.pos), item.file, item.pos, item.fde)

    def _rollback(self, events: Iterable[Event]) -> Iterator[Item]:
        spool = _EventSpool()
        try:
            header: list[Item] = []
            tx = Transactions()
            group_tables: set[int] = set()
            last_map: dict[int, Item] = {}
            in_group_rows = False
            new_tx = False
            for ev in events:
                starts, _ends = tx.step(ev)
                new_tx = new_tx or starts  # the first event may not be written (a GTID with skip_gtids)
                item = self.transform(ev)
                if item is None:
                    continue
                code = item.type_code
                if code == ET.format_description_event or code in FILE_HEADER_EVENTS:
                    if not spool.tx_starts:
                        header.append(item)
                    continue
                if new_tx:
                    new_tx = False
                    spool.begin()
                    group_tables.clear()
                    last_map.clear()
                    in_group_rows = False
                if ev.error is not None:
                    if code in ROWS_EVENTS:
                        raise RollbackError(f"malformed rows event cannot be inverted: {ev.error.message}",
                                            file=ev.file, offset=ev.pos, event_type=ev.type)
                    continue
                if ev.type_code in GTID_EVENTS or (code in QUERY_EVENTS and is_begin(ev)):
                    spool.add(_HEAD, item)
                    if code == ET.gtid_event:
                        spool.set_gtid(ev.fields["domain_id"], ev.fields["seq_no"])
                elif code == ET.xid_event or (code in QUERY_EVENTS and is_commit(ev)):
                    spool.add(_TAIL, item)
                elif code == ET.table_map_event:
                    if in_group_rows:
                        group_tables.clear()
                        in_group_rows = False
                    group_tables.add(ev.fields["table_id"])
                    last_map[ev.fields["table_id"]] = item
                    spool.add(_MAP, item)
                elif code in ROWS_EVENTS:
                    table_id = ev.fields["table_id"]
                    table = self.tables.get(table_id)
                    if table is None or table_id not in last_map:
                        raise MissingTableMapError(f"no TABLE_MAP_EVENT defines table id {table_id}",
                                                   file=ev.file, offset=ev.pos, event_type=ev.type)
                    if table_id not in group_tables:
                        if in_group_rows:
                            group_tables.clear()
                        spool.add(_MAP, last_map[table_id])
                        group_tables.add(table_id)
                    ended = bool(ev.fields["rows_flags"] & STMT_END_F)
                    inverted = invert_rows(item.bare, self.in_fde or self.out_fde, table, ev.file, ev.pos)
                    spool.add(_ROWS_END if ended else _ROWS, Item(inverted, ev.file, ev.pos, item.fde))
                    in_group_rows = not ended
                    if ended:
                        group_tables.clear()
                elif code in QUERY_EVENTS or code == ET.execute_load_query_event:
                    self.skipped.add(f"{ev.file}:{ev.pos}: {' '.join(ev.fields.get('query', '').split())}")
            yield from header
            yield from spool.reversed_items(self.out_fde, self.options.renumber_gtids)
        finally:
            spool.close()

    def close(self) -> None:
        self.skipped.close()

    def __enter__(self) -> "Rewriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_HEAD, _MAP, _ROWS, _ROWS_END, _TAIL = range(5)
_REC = struct.Struct("<qI")


class _EventSpool:
    """Output events on disk, in input order, with each transaction's start; read back with each
    transaction inverted: its framing (GTID, BEGIN ... XID) kept, its statements last first."""

    def __init__(self) -> None:
        self.file: BinaryIO = tempfile.TemporaryFile(mode="w+b")
        self.offsets = array("q")     # start of every record
        self.kinds = array("b")
        self.tx_starts = array("q")   # index into offsets where each transaction starts
        self.tx_rows = array("b")     # whether each transaction has rows events
        self.tx_domain = array("q")   # MariaDB GTID domain of each transaction (-1: none)
        self.tx_seq = array("Q")      # and its sequence number (unsigned 64 bits)
        self.files: dict[str, int] = {}
        self.names: list[str] = []

    def begin(self) -> None:
        self.tx_starts.append(len(self.offsets))
        self.tx_rows.append(0)
        self.tx_domain.append(-1)
        self.tx_seq.append(0)

    def set_gtid(self, domain: int, seq_no: int) -> None:
        self.tx_domain[-1] = domain
        self.tx_seq[-1] = seq_no

    def _seq_pools(self) -> dict[int, Iterator[int]]:
        """Per MariaDB domain, the sequence numbers of the transactions written, ascending: handed
        out in output order, so that each domain's sequence still grows (as mariadb-binlog's
        gtid-strict-mode and a strict server require), with the same GTIDs as the input."""
        pools: dict[int, array] = {}
        for k in range(len(self.tx_starts)):
            if self.tx_rows[k] and self.tx_domain[k] >= 0:
                pools.setdefault(self.tx_domain[k], array("Q")).append(self.tx_seq[k])
        return {d: iter(sorted(p)) for d, p in pools.items()}

    def add(self, kind: int, item: Item) -> None:
        if not self.tx_starts:
            self.begin()
        index = self.files.get(item.file)
        if index is None:
            index = self.files[item.file] = len(self.names)
            self.names.append(item.file)
        self.offsets.append(self.file.tell())
        self.kinds.append(kind)
        if kind in (_ROWS, _ROWS_END):
            self.tx_rows[-1] = 1
        self.file.write(_REC.pack(item.pos, index))
        self.file.write(item.bare)

    def _read(self, i: int, end_offset: int, fde: spec.FormatDescription) -> Item:
        start = self.offsets[i]
        stop = self.offsets[i + 1] if i + 1 < len(self.offsets) else end_offset
        self.file.seek(start)
        data = self.file.read(stop - start)
        pos, index = _REC.unpack_from(data)
        return Item(data[_REC.size:], self.names[index], pos, fde)

    def reversed_items(self, fde: spec.FormatDescription, renumber: bool = True) -> Iterator[Item]:
        end_offset = self.file.seek(0, 2)
        bounds = list(self.tx_starts) + [len(self.offsets)]
        kinds = self.kinds
        pools = self._seq_pools() if renumber else {}
        for k in range(len(self.tx_starts) - 1, -1, -1):
            if not self.tx_rows[k]:
                continue
            first, last = bounds[k], bounds[k + 1]
            for i in range(first, last):
                if kinds[i] == _HEAD:
                    item = self._read(i, end_offset, fde)
                    if item.type_code == ET.gtid_event and self.tx_domain[k] in pools:
                        item.bare = gtid_with_seq_no(item.bare, fde, next(pools[self.tx_domain[k]]))
                    yield item
            # Statements last first: each is a run of TABLE_MAPs then a run of rows events; the maps
            # stay in order before the rows, the rows go in reverse, STMT_END_F on the last one.
            i = last - 1
            while i >= first:
                if kinds[i] not in (_ROWS, _ROWS_END):
                    i -= 1
                    continue
                j = i
                while j - 1 >= first and kinds[j - 1] in (_ROWS, _ROWS_END) and kinds[j - 1] != _ROWS_END:
                    j -= 1
                m = j
                while m - 1 >= first and kinds[m - 1] == _MAP:
                    m -= 1
                for t in range(m, j):
                    yield self._read(t, end_offset, fde)
                for r in range(i, j - 1, -1):
                    item = self._read(r, end_offset, fde)
                    item.bare = set_stmt_end(item.bare, fde, r == j, item.file, item.pos)
                    yield item
                i = m - 1
            for i in range(first, last):
                if kinds[i] == _TAIL:
                    yield self._read(i, end_offset, fde)

    def close(self) -> None:
        self.file.close()


class _LineSpool:
    """Lines on disk (notes of a rollback), read back in order."""

    def __init__(self) -> None:
        self.file: BinaryIO | None = None
        self.count = 0

    def add(self, line: str) -> None:
        if self.file is None:
            self.file = tempfile.TemporaryFile(mode="w+b")
        self.file.write(line.replace("\n", " ").encode("utf-8", "surrogateescape") + b"\n")
        self.count += 1

    def lines(self) -> Iterator[str]:
        if self.file is None:
            return
        self.file.seek(0)
        for raw in self.file:
            yield raw.decode("utf-8", "surrogateescape").rstrip("\n")
        self.file.seek(0, 2)

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


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


def write_binlog(events: Iterable[Event], out: BinaryIO, options: WriteOptions = WriteOptions()) -> Rewriter:
    """Write the (filtered) events, or their inversion, as one binlog file. Returns the Rewriter
    (its `skipped` notes name the statements a rollback could not undo)."""
    rewriter = Rewriter(options)
    writer = BinlogFileWriter(out)
    writer.write_all(rewriter.items(events))
    if writer.count == 0:
        rewriter.close()
        raise RewriteError("no FORMAT_DESCRIPTION_EVENT was read: nothing to write")
    return rewriter


__all__ = ["frame", "bare_bytes", "parse_bare", "rows_layout", "query_layout", "query_parts", "rename_schema",
           "decompress", "invert_rows", "set_stmt_end", "has_stmt_end", "Item", "WriteOptions", "Rewriter",
           "BinlogFileWriter", "write_binlog", "RollbackError", "RewriteError", "RowsLayout", "QueryLayout"]
