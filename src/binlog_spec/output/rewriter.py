"""Event streams to the events of an output: forward (schemas renamed, payloads and compressed events
made plain, GTIDs left out on request) or rollback, and `write_binlog`, the whole of
`sql --output-format binlog`.

* `invert_rows` - the rows event that undoes a rows event: WRITE and DELETE
  swapped, UPDATE before and after images (and their columns-present
  bitmaps) swapped row by row, the rows in reverse order;
* `Rewriter` - an event stream into the `Item`s of an output. Rollback output
  (transactions last first, rows events in reverse within each) is spooled to a
  temporary file, so memory stays bounded whatever the input size (output.rollback.spool:
  the spool and the reversal, shared with the SQL rollback).

The byte-level operations on one event (framing, layouts, renaming, decompression,
STMT_END_F) are `binlog_spec.binlog.writer`'s.
"""
from __future__ import annotations

import dataclasses
from typing import BinaryIO, Iterable, Iterator

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import (FL_STANDALONE, GTID_EVENTS, QUERY_EVENTS, ROWS_EVENTS, STMT_END_F,
                                            is_mariadb)
from binlog_spec.binlog.writer import (DROPPED_EVENTS, ET, FILE_HEADER_EVENTS, H, INVERSE_TYPE, OFS_TYPE,
                                       PLAIN_OF_COMPRESSED, ROWS_COMPRESSED, BinlogFileWriter, Item, _where,
                                       _with_len, bare_bytes, begin_query, decompress,
                                       gtid_without_xa, has_stmt_end, rename_schema, rows_layout, set_stmt_end,
                                       xid_event)
from binlog_spec.output.rollback.spool import HEAD, MAP, ROWS, ROWS_END, TAIL, LineSpool
from binlog_spec.output.rollback.summary import UndoEventSpool
from binlog_spec.errors import MalformedEventError, MissingTableMapError, RewriteError, RollbackError
from binlog_spec.rows.decoder import INSERT, ROW_OPS, decode_image, present_columns, table_def
from binlog_spec.rows.walker import RowWalker, check_rows
from binlog_spec.rows.statement_text import quote_table
from binlog_spec.rows.tablemap import TableDef
from binlog_spec.rows.statement_text import TX_RELEASE, TX_ROLLBACK_TO, TX_SAVEPOINT, savepoint_name
from binlog_spec.stream.transactions import Transactions, is_begin, is_commit, tx_control, xa_xid
from binlog_spec.options import WriteOptions  # noqa: F401 - (its home: options)


#: Image bounds are walked with ends=, which the walker's compiled fast path does not collect.
NEVER_COMPILE = 1 << 62


def _decoded_ends(data: bytes, table: TableDef, present: list[list[int]], update: bool, where: dict) -> list[int]:
    """The image ends as the value decoder finds them, decoding every value: for images the walker
    could not step over, where the decoder names the row (and the column) at fault in its
    MalformedEventError."""
    names = table.names
    ends: list[int] = []
    p, index = 0, 0
    try:
        while p < len(data):
            _, p = decode_image(data, p, table, present[0], names)
            ends.append(p)
            if update:
                _, p = decode_image(data, p, table, present[1], names)
                ends.append(p)
            index += 1
    except (ValueError, IndexError) as exc:
        raise MalformedEventError(f"row {index}: {exc}", **where) from None
    return ends


def invert_rows(bare: bytes, fde: spec.FormatDescription, table: TableDef, file: str | None = None,
                pos: int | None = None, walker: RowWalker | None = None, counted: list | None = None) -> bytes:
    """The rows event that undoes this one: WRITE <-> DELETE, UPDATE images swapped row by row
    (and the two columns-present bitmaps), the rows in reverse order. Refuses partial images
    (binlog_row_image MINIMAL/NOBLOB) and MySQL's PARTIAL_UPDATE_ROWS_EVENT (JSON diffs).
    The images are found by `walker` (rows.walker, which reads lengths, not values). `counted`: the event's
    row count is appended to it."""
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
    check_rows(table, n, bitmaps[0], bitmaps[1] if len(bitmaps) > 1 else None,
                       len(bare) - lay.ofs_rows, **where)
    present = [present_columns(bm, n) for bm in bitmaps]
    # The undo of an insert deletes the row it wrote: a partial image (generated columns left out,
    # MINIMAL) still finds it. The undo of a delete or an update must write whole rows back.
    if ROW_OPS[code] != INSERT and any(len(p) != n for p in present):
        raise RollbackError(f"the row images of {quote_table(table.schema, table.table)} lack columns "
                            "(binlog_row_image MINIMAL or NOBLOB): a delete or update cannot be undone "
                            "from them", **where)
    data = bare[lay.ofs_rows:]
    update = lay.ofs_after is not None
    ends: list[int] = []
    try:
        (walker or RowWalker(NEVER_COMPILE)).walk(table, n, bitmaps[0], bitmaps[1] if update else None,
                                                          data, update, ends=ends)
    except (ValueError, IndexError):     # RowWalkError is a ValueError
        ends = _decoded_ends(data, table, present, update, where)
    out: list[bytes] = []
    p = 0
    if update:
        for k in range(0, len(ends), 2):
            mid, end = ends[k], ends[k + 1]
            out.append(data[mid:end] + data[p:mid])
            p = end
    else:
        for end in ends:
            out.append(data[p:end])
            p = end
    out.reverse()
    if counted is not None:
        counted.append(len(out))
    head = bytearray(bare[:lay.ofs_rows])
    head[OFS_TYPE] = INVERSE_TYPE[code]
    if lay.ofs_after is not None:
        b0, b1 = bitmaps[0], bitmaps[1]
        head[lay.ofs_before:lay.ofs_before + lay.len_bitmap] = b1
        head[lay.ofs_after:lay.ofs_after + lay.len_bitmap] = b0
    return _with_len(head + b"".join(out))



#: transform's event codes as plain ints (an enum member costs a class lookup at every comparison).
_FDE, _PAYLOAD, _MARIADB_GTID, _TABLE_MAP = (int(ET.format_description_event), int(ET.transaction_payload_event),
                                             int(ET.gtid_event), int(ET.table_map_event))
_RENAMED = (_TABLE_MAP, int(ET.query_event))
#: The types transform looks at beyond their bytes (the others, well-formed, are written as they are).
_LOOKED_AT = frozenset(int(c) for c in (_FDE, _PAYLOAD, _TABLE_MAP, *DROPPED_EVENTS, *FILE_HEADER_EVENTS,
                                        *PLAIN_OF_COMPRESSED))


class Rewriter:
    """Turns input events into output Items: the first FDE, the first file's header events, then
    the transactions (forward: as they come; rollback: inverted, last first)."""

    def __init__(self, options: WriteOptions = WriteOptions(), continued: str | None = None):
        self.options = options
        #: --jobs: the run's first file, when this reads a later piece of the run (its first FDE is
        #: the run's format, already written).
        self.continued = continued
        #: The FDE written out (the first one read); every event is written in its format.
        self.out_fde: spec.FormatDescription | None = None
        self.in_fde: spec.FormatDescription | None = None
        self.mariadb = False
        self.tables: dict[int, TableDef] = {}
        #: TABLE_MAP body bytes -> its table, made once (rows.decoder.table_def)
        self._made_tables: dict[tuple, TableDef] = {}
        self.first_file: str | None = None
        #: File -> the server version its FORMAT_DESCRIPTION names (the events of a later file are
        #: written in the first FDE's format, but what their status variables mean is their server's).
        self.server_versions: dict[str, str] = {}
        #: Statements a rollback cannot undo: (file, pos, text), spooled to disk.
        self.skipped = LineSpool()
        #: A rollback's: told what the undo restores (output.rollback.summary.UndoSummary) before its first item.
        self.summary = None
        #: Finds where each row image ends, for invert_rows.
        self.walker = RowWalker(NEVER_COMPILE)
        #: forward_step: the rows event held back until the next item says whether its statement ends.
        self.pending: Item | None = None
        #: The types whose events transform does more with than pass their bytes on.
        self._looked_at = _LOOKED_AT | (frozenset(_RENAMED) if options.rewrite_db else frozenset()) | (
            frozenset(int(c) for c in GTID_EVENTS) if options.skip_gtids else frozenset())

    def server_version(self, item: Item) -> str:
        """The server version of the file `item` was read from (its FDE's)."""
        return self.server_versions.get(item.file, item.fde.server_version)

    # -- one event ---------------------------------------------------------
    def _fde_item(self, ev: Event) -> Item | None:
        fde = spec.parse_fde(ev.raw[H:])
        self.in_fde = fde
        self.server_versions[ev.file] = fde.server_version
        self.mariadb = is_mariadb(len(fde.post_header_lens))
        self.tables = {}
        if self.out_fde is None:
            self.out_fde = fde
            self.first_file = ev.file if self.continued is None else self.continued
            if self.continued is not None:
                return None
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
        code = ev.header.type_code
        if code not in self._looked_at and self.out_fde is not None and ev.error is None:
            return Item(bare_bytes(ev), ev.file, ev.pos, self.out_fde, source=ev)   # (what the steps below give it)
        if code == _FDE:
            return self._fde_item(ev)
        if self.out_fde is None:
            raise RewriteError("no FORMAT_DESCRIPTION_EVENT before the first event", file=ev.file, offset=ev.pos,
                               event_type=ev.type)
        if code in DROPPED_EVENTS:
            return None
        if code in FILE_HEADER_EVENTS and ev.file != self.first_file:
            return None
        options = self.options
        if code == _PAYLOAD and options.payloads_expanded and ev.error is None:
            return None
        fde = self.in_fde or self.out_fde
        if options.skip_gtids and code in GTID_EVENTS and ev.error is None:
            if code == _MARIADB_GTID and not ev.fields["flags2"] & FL_STANDALONE:
                return Item(begin_query(bare_bytes(ev), self.out_fde), ev.file, ev.pos, self.out_fde)
            return None
        bare = bare_bytes(ev)
        if ev.error is not None:
            return Item(bare, ev.file, ev.pos, self.out_fde, source=ev)
        changed = False
        if code in PLAIN_OF_COMPRESSED:
            bare = decompress(bare, fde, ev.file, ev.pos)
            changed = True
        if code == _TABLE_MAP:
            self.tables[ev.fields["table_id"]] = table_def(ev, self.mariadb, None, self._made_tables)
        if options.rewrite_db and bare[OFS_TYPE] in _RENAMED:
            new = rename_schema(bare, fde, options.rewrite_db, ev.file, ev.pos)
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
        step = self.forward_step
        for ev in events:
            yield from step(ev)
        yield from self.forward_end()

    def forward_step(self, ev: Event) -> Iterator[Item]:
        """The Items of one more input event, forward (none, it, or the rows event held back before
        it, then it): _forward's step, for a consumer that takes the events itself. `pending` is the
        rows event held back (its STMT_END_F is set when no rows event of its statement follows)."""
        item = self.transform(ev)
        if item is None:
            return
        pending = self.pending
        if pending is not None:
            self.pending = None
            yield pending if item.type_code in ROWS_EVENTS else self._ended(pending)
        if item.type_code in ROWS_EVENTS and ev.error is None and \
                not has_stmt_end(item.bare, item.fde, item.file, item.pos):
            self.pending = item
            return
        yield item

    def forward_end(self) -> Iterator[Item]:
        """The Items after the last input event: the rows event held back, if any."""
        pending, self.pending = self.pending, None
        if pending is not None:
            yield self._ended(pending)

    def _ended(self, item: Item) -> Item:
        return Item(set_stmt_end(item.bare, item.fde, True, item.file, item.pos), item.file, item.pos, item.fde)

    def _rollback(self, events: Iterable[Event]) -> Iterator[Item]:
        spool = UndoEventSpool()
        counted: list[int] = []
        rewrite = self.options.rewrite_db
        try:
            header: list[Item] = []
            tx = Transactions()
            first: tuple = (None, "", -1, 0)
            group_tables: set[int] = set()
            last_map: dict[int, Item] = {}
            in_group_rows = False
            new_tx = False
            for ev in events:
                starts, _ends = tx.step(ev)
                if starts:
                    first = (tx.gtid, ev.file, ev.pos, ev.timestamp)     # (where the transaction is: the summary)
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
                    spool.begin_at(*first)
                    group_tables.clear()
                    last_map.clear()
                    in_group_rows = False
                if ev.error is not None:
                    if code in ROWS_EVENTS:
                        raise RollbackError(f"malformed rows event cannot be inverted: {ev.error.message}",
                                            file=ev.file, offset=ev.pos, event_type=ev.type)
                    continue
                if ev.type_code in GTID_EVENTS or (code in QUERY_EVENTS and is_begin(ev)):
                    if code == ET.gtid_event:
                        item = Item(gtid_without_xa(item.bare, item.fde), item.file, item.pos, item.fde)
                    elif code in QUERY_EVENTS and xa_xid(ev) is not None:       # MySQL's XA START
                        item = Item(begin_query(item.bare, item.fde), item.file, item.pos, item.fde)
                    spool.add_item(HEAD, item)
                    if code == ET.gtid_event:
                        spool.set_gtid(ev.fields["domain_id"], ev.fields["seq_no"])
                elif code == ET.xid_event or (code in QUERY_EVENTS and is_commit(ev)):
                    words = ev.fields.get("query", "").upper().split()[:2] if code in QUERY_EVENTS else []
                    if words[:1] == ["ROLLBACK"]:
                        spool.rolled_back()      # the server undid its rows (Spool.rolled_back)
                    elif words == ["XA", "ROLLBACK"]:
                        spool.xa_rolled_back(xa_xid(ev).lower())
                    spool.add_item(TAIL, item)
                elif code == ET.xa_prepare_log_event:
                    # an XA transaction's undo is a plain one: BEGIN (a GTID without its XID), COMMIT (XID)
                    if not ev.fields["one_phase"]:
                        spool.mark_xa(xa_xid(ev).lower())
                    spool.add_item(TAIL, Item(xid_event(item.bare, item.fde), item.file, item.pos, item.fde))
                elif code == ET.table_map_event:
                    if in_group_rows:
                        group_tables.clear()
                        in_group_rows = False
                    group_tables.add(ev.fields["table_id"])
                    last_map[ev.fields["table_id"]] = item
                    spool.add_item(MAP, item)
                elif code in ROWS_EVENTS:
                    table_id = ev.fields["table_id"]
                    table = self.tables.get(table_id)
                    if table is None or table_id not in last_map:
                        raise MissingTableMapError(f"no TABLE_MAP_EVENT defines table id {table_id}",
                                                   file=ev.file, offset=ev.pos, event_type=ev.type)
                    if table_id not in group_tables:
                        if in_group_rows:
                            group_tables.clear()
                        spool.add_item(MAP, last_map[table_id])
                        group_tables.add(table_id)
                    ended = bool(ev.fields["rows_flags"] & STMT_END_F)
                    inverted = invert_rows(item.bare, self.in_fde or self.out_fde, table, ev.file, ev.pos,
                                           self.walker, counted)
                    label = spool.label(rewrite.get(table.schema, table.schema), table.table, ROW_OPS[ev.type_code])
                    spool.add_item(ROWS_END if ended else ROWS, Item(inverted, ev.file, ev.pos, item.fde), label,
                                   counted.pop())
                    in_group_rows = not ended
                    if ended:
                        group_tables.clear()
                elif code in QUERY_EVENTS and tx_control(ev) is not None:
                    # SAVEPOINT, ROLLBACK TO, RELEASE, XA END: no row of their own (XA END is left out of an
                    # XA transaction's undo); the rows a ROLLBACK TO undid are dropped (Spool.rollback_to)
                    name = savepoint_name(ev.fields.get("query", ""))
                    control = tx_control(ev)
                    if name is not None and control == TX_SAVEPOINT:
                        spool.savepoint(name)
                    elif name is not None and control == TX_RELEASE:
                        spool.release(name)
                    elif name is not None and control == TX_ROLLBACK_TO and spool.rollback_to(name):
                        group_tables.clear()        # a TABLE_MAP may have gone with the rows
                        in_group_rows = False
                elif code in QUERY_EVENTS or code == ET.execute_load_query_event:
                    self.skipped.add_line(f"{ev.file}:{ev.pos}: {' '.join(ev.fields.get('query', '').split())}")
            if self.summary is not None:        # (what the undo restores, before its first byte)
                self.summary(spool.summary())
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


def write_binlog(events: Iterable[Event], out: BinaryIO, options: WriteOptions = WriteOptions(),
                 summary=None) -> Rewriter:
    """Write the (filtered) events, or their inversion, as one binlog file. Returns the Rewriter
    (its `skipped` notes name the statements a rollback could not undo). `summary`: Rewriter.summary."""
    rewriter = Rewriter(options)
    rewriter.summary = summary
    writer = BinlogFileWriter(out)
    writer.write_all(rewriter.items(events))
    if writer.count == 0:
        rewriter.close()
        raise RewriteError("no FORMAT_DESCRIPTION_EVENT was read: nothing to write")
    return rewriter


__all__ = ["invert_rows", "WriteOptions", "Rewriter", "write_binlog"]
