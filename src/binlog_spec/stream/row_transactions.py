"""Row changes paired with their transaction: each rows event's changes with the identity of the
transaction they are in (its GTID, XID, start position and commit time), what an output that is
per transaction needs (Spark's rows mode, `api.row_changes_by_transaction`).

    pairing = RowTransactions(RowDecoder(SchemaTracker()))
    for changes, ev, tx in pairing.pairs(events):
        print(tx.gtid, tx.xid, tx.start_pos, tx.commit_time, ev.pos, len(changes))

Rows wait for the end of their transaction: the XID comes last, so a rows event's changes are given
when the event that ends the transaction (`transactions.Transactions`: XID, COMMIT, a statement of
its own, XA PREPARE) has been read, all of that transaction's rows events in order. A SAVEPOINT or
ROLLBACK TO a savepoint is inside its transaction and does not split it.

What is given, in the events' order, is a tuple (changes, rows event, TxIdentity):

* the changes of a rows event: a list of `RowChange`;
* a decode fault (a rows event without its TABLE_MAP, a row image that does not decode, an event
  the decoder cannot take): `fault(error)` in place of the list, after the rows decoded before it,
  which are kept; the transaction goes on;
* a transaction that does not end (the input stops inside it, the next one starts, the reading
  raises, or the event source stepped over a corrupt stretch: `gaps`) gives its rows with a
  TxIdentity whose `complete` is False and `xid` None: they are not lost;
* each gap marker as (fault(marker), None, None), after the rows of the transaction it cut.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Iterable, Iterator, NamedTuple

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import GTID_EVENTS, ROW_OPS
from binlog_spec.errors import BinlogError
from binlog_spec.rows.decoder import RowChange, RowDecoder
from binlog_spec.stream.transactions import Transactions, commit_time, gtid_commit_stamps

ET = spec.EventType


class TxIdentity(NamedTuple):
    """The transaction a rows event is in, as far as it was read."""

    #: The file and position of its first event (its GTID event, BEGIN, or its one statement).
    file: str | None
    start_pos: int | None
    #: Its GTID (the GTID event's), None without one.
    gtid: str | None
    #: The XID of its XID_EVENT, None when it ends otherwise (COMMIT, a statement) or does not end.
    xid: int | None
    #: False when it was cut before its end (see the module's notes).
    complete: bool
    #: The commit times its GTID event carries (MySQL 8.0.1+, `transactions.gtid_commit_stamps`).
    commit_stamps: tuple[int, int] | None = None
    #: The header timestamp of the event that ends it (XID or COMMIT); None when it does not end.
    end_timestamp: int | None = None

    def _commit(self) -> tuple[datetime, str, datetime | None] | None:
        if self.commit_stamps is None and self.end_timestamp is None:
            return None
        return commit_time(self.commit_stamps, self.end_timestamp)

    @property
    def commit_time(self) -> datetime | None:
        """When it committed (stream.transactions' rule, as TxSummary.commit_time): its GTID event's
        immediate_commit_timestamp on MySQL 8.0.1+, else the header timestamp of its XID/COMMIT; None
        for a transaction cut before its end whose GTID event has no commit time."""
        c = self._commit()
        return None if c is None else c[0]

    @property
    def commit_time_source(self) -> str | None:
        """"immediate_commit_timestamp" or "commit_event" (TxSummary.commit_time_source); None with no commit time."""
        c = self._commit()
        return None if c is None else c[1]

    @property
    def original_commit_time(self) -> datetime | None:
        """The commit on the transaction's original source (MySQL 8.0.1+ GTID events), else None."""
        c = self._commit()
        return None if c is None else c[2]


def _same(x: Any) -> Any:
    return x


class RowTransactions:
    """Pairs the row changes of an event stream with their transaction (`pairs`).

    `decoder`: the RowDecoder that decodes the rows and follows the TABLE_MAPs (a new one with no schema
    by default: give events completed by rows.decoder.observe_schema, or a decoder with a schema source).
    Hooks for a reader that does more than decode:

    * `keep(ev, op)`: False to skip a rows event before it is decoded (its op, pushed predicates);
      `decoder.tables` and `decoder.gtid` say what it is;
    * `fault(exc)`: what a decode fault (a BinlogError) or a gap marker is given as (default: itself);
    * `on_table_map(ev)`: told every TABLE_MAP_EVENT read (that parsed), after the decoder.

    `tx` is the boundary tracker the pairing steps (`transactions.Transactions`): a consumer that takes
    whole transactions from the stream itself reads it (between transactions: `tx.mode is None`); it stays
    the same object when a gap resets it.
    """

    def __init__(self, decoder: RowDecoder | None = None, *, keep: Callable[[Event, str], bool] | None = None,
                 fault: Callable[[Any], Any] | None = None,
                 on_table_map: Callable[[Event], None] | None = None) -> None:
        self.decoder = decoder if decoder is not None else RowDecoder()
        self.tx = Transactions()
        self.keep = keep
        self.fault = fault if fault is not None else _same
        self.on_table_map = on_table_map

    def pairs(self, events: Iterable[Event], gaps: list | None = None) -> Iterator[tuple[Any, Event | None,
                                                                                        TxIdentity | None]]:
        """(changes, rows event, TxIdentity) of each rows event of `events`, in order (the module's notes).

        `gaps`: a list the event source appends a marker to when it steps over a corrupt stretch of the
        stream (stream.planning.resync's `Skipped`). Before the next event, the open transaction ends
        cut, each marker is given as (fault(marker), None, None) and the list emptied; the markers left
        at the end are given last. On an error raised by `events`, the rows decoded before it are given
        (their transaction cut), then the error is raised."""
        decoder, tx, keep, fault, on_map = self.decoder, self.tx, self.keep, self.fault, self.on_table_map
        # observe / _rows: feed without its generator per event (RowDecoder.observe's contract)
        observe, decode, step, row_ops = decoder.observe, decoder._rows, tx.step, ROW_OPS
        xid_code, table_map_code = int(ET.xid_event), int(ET.table_map_event)
        gtid_codes = frozenset(int(c) for c in GTID_EVENTS)
        if gaps is None:
            gaps = []
        pending: list = []
        append = pending.append
        xid = None
        #: the open transaction: its first event's file and position, its GTID, its GTID's commit times
        o_file = o_pos = o_gtid = stamps = None
        try:
            for ev in events:
                if gaps:                # a corrupt stretch skipped: its transaction ends unfinished
                    if pending:
                        cut = TxIdentity(o_file, o_pos, o_gtid, None, False, stamps)
                        yield from ((g, e, cut) for g, e in pending)
                        pending = []
                        append = pending.append
                    yield from ((fault(m), None, None) for m in gaps)
                    gaps.clear()
                    tx.reset()
                    xid = o_file = o_pos = o_gtid = stamps = None
                starts, ends = step(ev)
                code = ev.header.type_code
                if starts:
                    if pending:
                        cut = TxIdentity(o_file, o_pos, o_gtid, None, False, stamps)
                        yield from ((g, e, cut) for g, e in pending)
                        pending = []
                        append = pending.append
                    o_file, o_pos, o_gtid, stamps = ev.file, ev.pos, tx.gtid, None
                error = ev.error
                op = row_ops.get(code) if error is None else None
                if op is not None:
                    if keep is None or keep(ev, op):
                        changes: list = []
                        try:
                            changes.extend(decode(ev, op))  # one by one: the rows before a fault are kept
                        except BinlogError as exc:
                            append((changes, ev))
                            append((fault(exc), ev))
                        else:
                            append((changes, ev))
                else:
                    try:
                        observe(ev)
                    except BinlogError as exc:
                        append((fault(exc), ev))
                    if error is None:
                        if code == xid_code:
                            xid = ev.fields.get("xid")
                        elif code == table_map_code:
                            if on_map is not None:
                                on_map(ev)
                        elif code in gtid_codes:
                            stamps = gtid_commit_stamps(ev.fields)
                if ends:
                    if pending:
                        done = TxIdentity(o_file, o_pos, o_gtid, xid, True, stamps, ev.timestamp)
                        yield from ((g, e, done) for g, e in pending)
                        pending = []
                        append = pending.append
                    xid = None
        except GeneratorExit:       # the reader stopped asking (a limit, its own error): nothing to give
            raise
        except BaseException:
            if pending:
                cut = TxIdentity(o_file, o_pos, o_gtid, None, False, stamps)
                yield from ((g, e, cut) for g, e in pending)
            raise
        if pending:
            cut = TxIdentity(o_file, o_pos, o_gtid, None, False, stamps)
            yield from ((g, e, cut) for g, e in pending)
        yield from ((fault(m), None, None) for m in gaps)
        gaps.clear()


@dataclass(frozen=True)
class TransactionChanges:
    """The row changes of one transaction, in order, and the transaction (`by_transaction`)."""

    transaction: TxIdentity
    changes: tuple[RowChange, ...]


def by_transaction(events: Iterable[Event], decoder: RowDecoder | None = None) -> Iterator[TransactionChanges]:
    """One TransactionChanges per transaction with rows events, when it ends (or is cut: its
    `transaction.complete` is False). A decode fault raises its BinlogError, and an error of `events` is
    raised, after the changes of the transaction decoded before it (what `api.row_changes_by_transaction`
    gives)."""
    current: TxIdentity | None = None
    changes: list[RowChange] = []
    pairs = RowTransactions(decoder).pairs(events)
    while True:
        try:
            got, _ev, tx = next(pairs)
        except StopIteration:
            break
        except Exception:       # the events' error: the transaction it cut first
            if current is not None:
                yield TransactionChanges(current, tuple(changes))
            raise
        if tx is not current:
            if current is not None:
                yield TransactionChanges(current, tuple(changes))
            current, changes = tx, []
        if isinstance(got, BaseException):
            yield TransactionChanges(current, tuple(changes))
            raise got
        changes.extend(got)
    if current is not None:
        yield TransactionChanges(current, tuple(changes))


__all__ = ["RowTransactions", "TxIdentity", "TransactionChanges", "by_transaction"]
