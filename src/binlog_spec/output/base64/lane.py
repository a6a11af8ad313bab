"""The base64 script's lane: the events that pass through unchanged, written without Items.

`lines_of(script, events, rewriter)` writes what ``script.lines(rewriter.items(events))`` writes (the
Item path, `Base64Script`, stays the reference: tests/output/base64/test_base64_lane.py compares them). Forward
and without -v, the XID, MariaDB GTID and ANNOTATE_ROWS events and a statement's TABLE_MAP and rows
events that pass through the rewriter unchanged, and whose lines need no session setting changed, are
written here: their ``#`` lines, framing and base64 by `text` (compiled where built), with no
Item, no `transform` (but the TABLE_MAP's, whose table the rewriter keeps) and no `_item`. Every other
event goes through `Rewriter.forward_step` and `Base64Script._item` as ever; the lane hands its held
BINLOG block over as Items first (`script.block`), so that the block is written as _flush writes it.

`sink(script, rewriter)` is the lane's compiled loop (output/base64/_ctext.pyx, `Lane`): given to the reader
(`read_events(..., sink=)`), it writes most of those events straight from the reader's window, with no
Event, while this lane holds nothing; its text is handed on here before the next event the lane is given.
This lane stays its reference (tests/output/base64/test_base64_lane_compiled.py compares them).
"""
from __future__ import annotations

from typing import Iterable, Iterator

from binlog_spec import compiled
from binlog_spec.binlog import spec
from binlog_spec.binlog.writer import bare_bytes, has_stmt_end
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import (FL_ALLOW_PARALLEL, FL_COMPLETED_XA, FL_PREPARED_XA, FL_STANDALONE,
                                           ROWS_EVENTS, STMT_END_F)
from binlog_spec.binlog.writer import Item
from binlog_spec.output import event_text
from binlog_spec.output.base64.script import (_ANNOTATE, _BLOCK_EVENTS, _GTID_VALUES, _MARIADB_GTID, _TABLE_MAP,
                                              _XID, DELIMITER, Base64Script, _event_text,
                                              _one_line, _when)
from binlog_spec.output.rewriter import Rewriter

#: MariaDB GTID_EVENT flags2 of an XA group: written by the script's own path (its XA START).
_XA_FLAGS = FL_PREPARED_XA | FL_COMPLETED_XA

#: The types the lane writes itself, when they pass through unchanged.
_LANE = frozenset(ROWS_EVENTS) | {_TABLE_MAP, _XID, _MARIADB_GTID, _ANNOTATE}
#: A BINLOG block is handed on as one string below this many base64 characters.
_JOINED = 1 << 16
_XID_VALUES = ("xid",)


def lines_of(script: Base64Script, events: Iterable[Event], rewriter: Rewriter, lane=None) -> Iterator[str]:
    """The script of input events: what lines(rewriter.items(events)) writes. Forward, the events
    that pass through unchanged and whose lines need no session change (XID, MariaDB GTID,
    ANNOTATE_ROWS, and the TABLE_MAP and rows events of a statement) are written by the lane,
    without Items; the others go through rewriter.forward_step and _item as ever. `lane`: the
    `sink(script, rewriter)` the reader of `events` was given (its text is written here)."""
    if rewriter.options.rollback or script.decoder is not None:
        return script.lines(rewriter.items(events))
    return script.lines(_lane(script, events, rewriter, lane))


_ctext = compiled.load("binlog_spec.output.base64._ctext")


def compiled() -> bool:
    """Whether the lane's compiled loop can run (the compiled core is loaded)."""
    return _ctext is not None


def sink(script: Base64Script, rewriter: Rewriter, filters=None, skipping: tuple = (None, None, None)):
    """The lane's compiled loop (output/base64/_ctext.pyx `Lane`) for the reader of the events given to
    lines_of(script, ..., rewriter, lane=it), or None where the Python lane writes every event: the
    pure-Python core, a rollback, -v, --skip-gtids, --rewrite-db, a --jobs piece. The events reach the lane
    in order, unfiltered; or under `filters` a compiled loop decides (FilterOptions.skippable), where
    `skipping` is (gate, selection, skipper) of the run's select_events (api.skip_gate, its Selection,
    api.skipping_sink): the loop then skips what they drop and writes what they keep whole
    (output/base64/_ctext_filter.pxi); None where any of the three is missing."""
    if _ctext is None or rewriter.options.rollback or rewriter.options.rewrite_db or script.decoder is not None \
            or script.options.skip_gtids or script.part is not None:
        return None
    filt = None
    if filters is not None and filters.active:
        gate, selection, skipper = skipping
        if gate is None or selection is None or skipper is None:
            return None
        from binlog_spec.stream.skipping import decisions
        filt = _ctext.Base64Filter(skipper, gate, selection, *decisions(filters, selection))
    return _ctext.Lane(script, rewriter, [], [], _when, _annotate, _rows_head, event_text.mariadb_gtid_summary,
                      event_text.xid_summary, filt)


def _annotate(query: bytes) -> tuple[str, str]:
    """An ANNOTATE_ROWS_EVENT's summary and its ``#Q>`` lines, from its query bytes (for `Lane`)."""
    return _one_line(event_text.annotate_summary(query)), "\n".join(Base64Script._statement_lines(query, _ANNOTATE))


def _rows_head(code: int, len_post_header: int, body: bytes) -> tuple[str, bool, int]:
    """A rows event's summary, whether its statement ends there, and its table id, from its body (for `Lane`)."""
    o = spec.rows_offsets(code, len_post_header, body)
    return (_one_line(event_text.rows_summary(code, o.table_id, o.rows_flags)), bool(o.rows_flags & STMT_END_F),
            o.table_id)


def _lane(script: Base64Script, events: Iterable[Event], rewriter: Rewriter, lane=None) -> Iterator[Item | str]:
    """Items for lines(), and the text of the events the lane writes itself."""
    # the lane's BINLOG block, (event, bare bytes); the compiled lane's text to write
    block: list[tuple[Event, bytes]] = lane.hold if lane is not None else []
    taken: list[str] = lane.taken if lane is not None else []
    remember = lane.remember if lane is not None else None
    looked_at = rewriter._looked_at
    skip_gtids = script.options.skip_gtids
    renaming = bool(rewriter.options.rewrite_db)    # (TABLE_MAP is looked at to rename its schema)
    tz = script.options.tz
    events = iter(events)
    while True:
        try:
            ev = next(events)
        except StopIteration:
            break
        except Exception:       # a fault of the input: what the compiled lane wrote before it comes first
            yield from taken
            taken.clear()
            raise
        if taken:
            yield from taken
            taken.clear()
        if ev.replayed:     # (what the compiled lane wrote, handed back for the filters: _ctext_filter.pxi)
            continue
        fde = rewriter.out_fde
        code = ev.header.type_code
        if fde is None or code not in _LANE or ev.error is not None or rewriter.pending is not None \
                or script.block or (code in looked_at and (code != _TABLE_MAP or renaming)):
            if block:           # the Items the lane held, as _item would hold them
                script.block.extend(Item(bare, e.file, e.pos, fde, source=e) for e, bare in block)
                block.clear()
            yield from rewriter.forward_step(ev)
            continue
        if code in _BLOCK_EVENTS:
            if code == _TABLE_MAP:
                if block and block[-1][0].header.type_code in ROWS_EVENTS:
                    yield from _lane_flush(script, block, fde)
                    block.clear()
                item = rewriter.transform(ev)      # (its table kept for the rewriter)
                block.append((ev, item.bare))
                if remember is not None:        # the compiled lane writes its next ones
                    remember(fde, item.bare[spec.LEN_EVENT_HEADER:], _one_line(event_text.summarize(ev)))
                continue
            bare = bare_bytes(ev)
            if not has_stmt_end(bare, fde, ev.file, ev.pos):
                script.block.extend(Item(b, e.file, e.pos, fde, source=e) for e, b in block)
                block.clear()
                yield from rewriter.forward_step(ev)
                continue
            block.append((ev, bare))
            yield from _lane_flush(script, block, fde)
            block.clear()
            continue
        if code == _MARIADB_GTID:
            flags2, domain_id, seq_no = ev.body_values(_GTID_VALUES)
            s = script.session
            if skip_gtids or s.skip_parallel != int(not flags2 & FL_ALLOW_PARALLEL) or flags2 & _XA_FLAGS or \
                    s.gtid_domain != domain_id or s.gtid_server != ev.header.server_id:
                if block:
                    script.block.extend(Item(b, e.file, e.pos, fde, source=e) for e, b in block)
                    block.clear()
                yield from rewriter.forward_step(ev)
                continue
        if block:
            yield from _lane_flush(script, block, fde)
            block.clear()
        header = ev.header
        raw = ev.raw
        try:
            if code == _XID:
                text = event_text.xid_summary(ev.body_values(_XID_VALUES)[0])
            elif code == _MARIADB_GTID:
                text = event_text.mariadb_gtid_summary(domain_id, header.server_id, seq_no, flags2)
            else:
                text = _one_line(event_text.summarize(ev))
        except KeyError:        # a field missing: what summarize says of it
            text = _one_line(event_text.summarize(ev))
        comment = _event_text(raw, len(raw) - 4 if ev.checksum is not None else len(raw), ev.pos,
                              fde.len_checksum == 4, _when(header.timestamp, tz), header.server_id, text, False)[0]
        if code == _XID:
            yield f"{comment}\nCOMMIT{DELIMITER}"
        elif code == _MARIADB_GTID:
            lines = [comment, f"/*M!100001 SET @@session.gtid_seq_no={seq_no}*/{DELIMITER}"]
            if not flags2 & FL_STANDALONE:
                lines += ("START TRANSACTION", DELIMITER)
            yield "\n".join(lines)
        else:       # ANNOTATE_ROWS
            start = (fde.len_common_header or spec.LEN_EVENT_HEADER) + fde.post_header_len(code)
            lines = [comment]
            lines += script._statement_lines(ev.raw[start:len(ev.raw) - 4 if ev.checksum is not None else None],
                                           code)
            yield "\n".join(lines)
    if taken:
        yield from taken
        taken.clear()
    if block:
        script.block.extend(Item(b, e.file, e.pos, rewriter.out_fde, source=e) for e, b in block)
        block.clear()
    yield from rewriter.forward_end()


def _lane_flush(script: Base64Script, block: list[tuple[Event, bytes]], fde) -> Iterator[str]:
    """The lane's BINLOG block, as _flush writes it."""
    tz, checksum = script.options.tz, fde.len_checksum == 4
    comments: list[str] = []
    encoded = ["", "BINLOG '"]
    try:
        for ev, bare in block:
            header = ev.header
            comment, data = _event_text(bare, len(bare), ev.pos, checksum, _when(header.timestamp, tz), header.server_id,
                                        _one_line(event_text.summarize(ev)), True)
            comments.append(comment)
            encoded.append(data)
    except Exception:       # written by _flush: the lines before the fault, then the fault
        script.block.extend(Item(b, e.file, e.pos, fde, source=e) for e, b in block)
        try:
            script._flush()
        except Exception:
            yield from script._out
            script._out.clear()
            raise
        raise AssertionError("the lane's block failed where _flush did not") from None
    encoded.append(f"'{DELIMITER}")
    comments += encoded
    if sum(map(len, encoded)) < _JOINED:
        yield "\n".join(comments)
    else:           # a large block: lines() hands on lines, and its consumer batches them
        yield from comments


__all__ = ["lines_of"]
