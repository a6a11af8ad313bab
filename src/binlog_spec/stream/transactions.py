"""Transactions: the one tracker of their boundaries (`Transactions`, `is_begin`, `is_commit`,
`implies_begin`: what filters, SQL and binlog output and Spark delimit them with), and one summary
per transaction: where it is, when it began and committed, what it touched.

    from binlog_spec.stream import transactions as txsummary
    for tx in txsummary.summarize(binlog_spec.read_events(paths)):
        print(tx.gtid, tx.commit_time, tx.rows, tx.tables)

Transactions are delimited by `Transactions` (a GTID
event, then BEGIN ... XID/COMMIT, a TRANSACTION_PAYLOAD, or one statement).

Times:

* `begin_time`: the smallest header timestamp of the transaction's events
  (whole seconds: the server stamps each event with its statement's start).
* `commit_time`: MySQL 8.0.1+ writes the commit time in the GTID event, in
  microseconds: `immediate_commit_timestamp` (on the server that wrote this
  binlog) is used when present, and `commit_time_source` says
  ``"immediate_commit_timestamp"``; `original_commit_time` is the commit on the
  transaction's original source (equal to the immediate one unless the server
  is a replica). Otherwise (MariaDB, MySQL before 8.0.1) it is the header
  timestamp of the event that ends the transaction (XID or COMMIT), and
  `commit_time_source` is ``"commit_event"``.
* `duration_s`: commit_time - begin_time, in whole seconds. The begin time is
  an event timestamp (whole seconds) whatever the server, so a commit time in
  microseconds is cut to its second first: the duration is never finer than
  its coarser end (subtracting a whole-second begin from a microsecond commit
  would report the commit's sub-second part as if it were a duration).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Iterable, Iterator

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.timezones import iso_z
from binlog_spec.binlog.event_types import (CONTROL_EVENTS, FL_COMPLETED_XA, FL_PREPARED_XA, FL_STANDALONE,
                                           GTID_EVENTS, QUERY_EVENTS, ROWS_EVENTS)
from binlog_spec.rows.statement_text import TX_BEGIN, TX_END, transaction_control
from binlog_spec.binlog.event_types import DELETE, INSERT, ROW_OPS, UPDATE
from binlog_spec.rows.decoder import RowDecoder

ET = spec.EventType


def tx_control(ev: Event) -> str | None:
    """What a statement event does to its transaction (statement_text.transaction_control: TX_BEGIN,
    TX_END, TX_SAVEPOINT, TX_ROLLBACK_TO, TX_RELEASE, TX_XA_END), None for any other event or statement."""
    if ev.type_code not in QUERY_EVENTS or ev.error is not None:
        return None
    return transaction_control(ev.statement_bytes())


def is_begin(ev: Event) -> bool:
    """BEGIN, or XA START (MySQL logs an XA transaction's prepare group from `XA START xid`)."""
    return tx_control(ev) == TX_BEGIN


def is_commit(ev: Event) -> bool:
    """What ends a transaction: XID, XA_PREPARE_LOG_EVENT, COMMIT, ROLLBACK (not ROLLBACK TO a
    savepoint: the transaction goes on), XA COMMIT, XA ROLLBACK."""
    if ev.type_code in (ET.xid_event, ET.xa_prepare_log_event):
        return True
    return tx_control(ev) == TX_END


def xid_text(format_id: int, gtrid: bytes, bqual: bytes) -> str:
    """An XA transaction's XID as servers write it in XA statements (XID::serialize): X'gtrid',X'bqual',N."""
    return f"X'{bytes(gtrid).hex()}',X'{bytes(bqual).hex()}',{format_id}"


def xa_xid(ev: Event) -> str | None:
    """The XID (`xid_text`) of an XA transaction's event: a MariaDB GTID_EVENT of an XA group,
    an XA_PREPARE_LOG_EVENT, or an `XA START|END|COMMIT|ROLLBACK xid` statement; None for others."""
    if ev.error is not None:
        return None
    code = ev.type_code
    f = ev.fields
    if code == ET.gtid_event:
        if not f["flags2"] & (FL_PREPARED_XA | FL_COMPLETED_XA):
            return None
        data, n = bytes(f["xa_data"]), f["xa_len_gtrid"]
        return xid_text(f["xa_format_id"], data[:n], data[n:])
    if code == ET.xa_prepare_log_event:
        return xid_text(f["format_id"], f["gtrid"], f["bqual"])
    if code in QUERY_EVENTS and tx_control(ev) is not None:
        words = ev.statement_bytes().decode("utf-8", "replace").split(None, 2)
        if len(words) == 3 and words[0].upper() == "XA":
            xid = words[2].strip().rstrip(";").strip()
            for tail in (" ONE PHASE", " SUSPEND", " FOR MIGRATE"):
                if xid.upper().endswith(tail):
                    xid = xid[:-len(tail)].rstrip()
            return xid.replace(" ", "")
    return None


def implies_begin(ev: Event) -> bool:
    """A MariaDB GTID_EVENT of a transaction stands for its BEGIN (no BEGIN query event follows)."""
    return ev.type_code == ET.gtid_event and ev.error is None and not ev.fields["flags2"] & FL_STANDALONE


def handed_on(ev: Event) -> tuple[bool, bool]:
    """What an event a compiled lane hands back (Event.replayed, binlog.replay) tells of the transactions it took:
    (it opens one: its GTID event or BEGIN, handed back where a filtered lane hands the rest of a transaction the
    filters keep on to the ordinary path, output/_crow_filter.pxi; it ends one: the XID_EVENT of the last one
    the lane took)."""
    code = ev.type_code
    if code == ET.xid_event:
        return False, True
    return code in GTID_EVENTS or is_begin(ev), False


class Transactions:
    """Marks transaction boundaries in an event stream.

    A transaction is a GTID event (if any) and then: BEGIN ... XID/COMMIT, or a
    TRANSACTION_PAYLOAD (whose inner events hold BEGIN ... XID), or a single
    statement (DDL, or a statement with its INTVAR/RAND/USER_VAR context).
    Its ends are MySQL's (Query_log_event::starts_group / ends_group, sql/log_event.h):
    SAVEPOINT, ROLLBACK TO and RELEASE SAVEPOINT are inside it; XA START opens one
    as BEGIN does (MySQL; a MariaDB GTID_EVENT with FL_PREPARED_XA stands for it),
    XA_PREPARE_LOG_EVENT ends it, and the XA COMMIT / XA ROLLBACK that follow in a
    later group are a transaction of their own.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Between transactions, none open (after a stretch of the stream was skipped: what was open is cut)."""
        self.mode: str | None = None   # None (closed), "gtid", "begin", "statement"
        self.gtid: str | None = None

    def step(self, ev: Event) -> tuple[bool, bool]:
        """(this event starts a transaction, this event ends it)."""
        code = ev.type_code
        if code in CONTROL_EVENTS:
            return False, False
        if code in GTID_EVENTS:
            self.mode, self.gtid = "gtid", ev.fields.get("gtid") if ev.error is None else None
            if implies_begin(ev):
                self.mode = "begin"
            return True, False
        starts = self.mode is None
        if starts:
            self.gtid = None
            self.mode = "begin" if is_begin(ev) else "statement"
            if self.mode == "begin":
                return True, False
        elif self.mode == "gtid":
            if is_begin(ev) or code == ET.transaction_payload_event:
                self.mode = "begin"
                return False, False
            self.mode = "statement" if code not in ROWS_EVENTS and code != ET.table_map_event else "begin"
        if is_commit(ev) or (self.mode == "statement" and code in QUERY_EVENTS):
            self.mode = None
            return starts, True
        return starts, False


UTC = timezone.utc
#: What the row decoder reads besides rows events: TABLE_MAPs, and the statements its schema replays.
_DECODER_EVENTS = {ET.table_map_event, ET.query_event, ET.query_compressed_event}


@dataclass
class TxSummary:
    file: str
    start_pos: int
    #: Position after the transaction's last event (its XID/COMMIT, or payload).
    end_pos: int
    begin_time: datetime
    commit_time: datetime
    commit_time_source: str
    original_commit_time: datetime | None
    server_id: int
    gtid: str | None
    xid: int | None
    #: Bytes of its events on disk (end_pos - start_pos, unless a filter removed some of them).
    bytes: int = 0
    events: int = 0
    rows: int = 0
    inserts: int = 0
    updates: int = 0
    deletes: int = 0
    #: "schema.table" of every table the transaction's TABLE_MAPs name, in first-seen order.
    tables: list[str] = field(default_factory=list)
    #: True when the input ended before the transaction's commit.
    complete: bool = True

    @property
    def duration_s(self) -> float:
        """Whole seconds (see the module's notes): the commit time cut to its second, minus the begin time."""
        return float((self.commit_time.replace(microsecond=0) - self.begin_time).total_seconds() // 1)

    def to_dict(self) -> dict:
        return {
            "file": self.file, "start_pos": self.start_pos, "end_pos": self.end_pos, "bytes": self.bytes,
            "begin_time": iso_z(self.begin_time),
            "commit_time": iso_z(self.commit_time),
            "commit_time_source": self.commit_time_source,
            "original_commit_time": (iso_z(self.original_commit_time) if self.original_commit_time else None),
            "duration_s": self.duration_s, "server_id": self.server_id, "gtid": self.gtid, "xid": self.xid,
            "events": self.events, "rows": self.rows, "inserts": self.inserts, "updates": self.updates,
            "deletes": self.deletes, "tables": list(self.tables), "complete": self.complete,
        }


def _micros(us: int) -> datetime:
    return datetime.fromtimestamp(us // 1_000_000, tz=UTC).replace(microsecond=us % 1_000_000)


def gtid_commit_stamps(fields: dict) -> tuple[int, int] | None:
    """The commit times a MySQL 8.0.1+ GTID event carries, in microseconds: (immediate_commit_timestamp,
    original_commit_timestamp, the immediate one when the event has none); None when it carries none."""
    immediate = fields.get("immediate_commit_timestamp")
    if not immediate:
        return None
    return immediate, fields.get("original_commit_timestamp") or immediate


def commit_time(stamps: tuple[int, int] | None, end_timestamp: int) -> tuple[datetime, str, datetime | None]:
    """(commit_time, commit_time_source, original_commit_time) of a transaction (the module's notes): its
    GTID event's `stamps` (gtid_commit_stamps) when it has them, else `end_timestamp`, the header timestamp
    of the event that ends it (XID or COMMIT)."""
    if stamps is not None:
        return _micros(stamps[0]), "immediate_commit_timestamp", _micros(stamps[1])
    return datetime.fromtimestamp(end_timestamp, tz=UTC), "commit_event", None


class _Open:
    __slots__ = ("first", "begin", "end", "size", "commit_us", "original_us", "gtid", "xid", "events", "counts",
                 "tables", "last_ts")

    def __init__(self, ev: Event, gtid: str | None):
        self.first = ev
        self.begin = ev.timestamp
        self.end = ev.pos + ev.size
        self.size = 0
        self.commit_us: int | None = None
        self.original_us: int | None = None
        self.gtid = gtid
        self.xid: int | None = None
        self.events = 0
        self.counts = {INSERT: 0, UPDATE: 0, DELETE: 0}
        self.tables: dict[str, None] = {}
        self.last_ts = ev.timestamp

    def add(self, ev: Event) -> None:
        """Count an event of the transaction: its times, and its bytes unless it is inside a payload."""
        self.events += 1
        header = ev.header
        ts = header.timestamp
        if ts < self.begin:
            self.begin = ts
        self.last_ts = ts
        if ev.payload_pos is None:
            self.end = ev.pos + header.len_event
            self.size += header.len_event


class Summarizer:
    """Feed events in order; `feed` yields each transaction summary when it ends."""

    def __init__(self, count_rows: bool = True):
        self.tx = Transactions()
        # the CREATE TABLEs replayed, as the CLI's rows does: some rows have no size without them
        from binlog_spec.rows.ddl.schema import SchemaTracker     # (sqlglot, imported only when rows are counted)
        self.decoder = RowDecoder(SchemaTracker()) if count_rows else None
        self.open: _Open | None = None

    def feed(self, ev: Event, table_name: str | None = None) -> list[TxSummary]:
        """The transactions this event ends (none, or one; two when it starts one while another
        was never closed). `table_name`: the "schema.table" of a TABLE_MAP_EVENT, when the caller
        has it (else it is read from the event's fields)."""
        starts, ends = self.tx.step(ev)
        code = ev.type_code
        if self.decoder is not None and code == ET.format_description_event:
            list(self.decoder.feed(ev))
        if code in CONTROL_EVENTS:
            return []
        out = []
        if starts:
            if self.open is not None:  # a transaction never closed (cut input): report it as it is
                out.append(self._close(complete=False))
            self.open = _Open(ev, self.tx.gtid)
        t = self.open
        if t is None:
            return out
        t.add(ev)
        if code in GTID_EVENTS and ev.error is None:
            f = ev.fields
            t.gtid = self.tx.gtid
            stamps = gtid_commit_stamps(f)
            if stamps is not None:
                t.commit_us, t.original_us = stamps
        elif code == ET.table_map_event and ev.error is None:
            t.tables.setdefault(table_name or f"{ev.fields['schema']}.{ev.fields['table']}", None)
        elif code == ET.xid_event and ev.error is None:
            t.xid = ev.fields.get("xid")
        if self.decoder is not None and (code in _DECODER_EVENTS or code in ROW_OPS):
            for rc in self.decoder.feed(ev):
                t.counts[rc.op] += 1
        if ends:
            out.append(self._close(complete=True))
        return out

    def finish(self) -> Iterator[TxSummary]:
        """The transaction the input ended inside, if any."""
        if self.open is not None:
            yield self._close(complete=False)

    def _close(self, complete: bool) -> TxSummary:
        t = self.open
        self.open = None
        commit, source, original = commit_time(
            None if t.commit_us is None else (t.commit_us, t.original_us), t.last_ts)
        c = t.counts
        return TxSummary(
            file=t.first.file, start_pos=t.first.pos, end_pos=t.end,
            begin_time=datetime.fromtimestamp(t.begin, tz=UTC), commit_time=commit, commit_time_source=source,
            original_commit_time=original, server_id=t.first.server_id, gtid=t.gtid, xid=t.xid,
            bytes=t.size, events=t.events, rows=c[INSERT] + c[UPDATE] + c[DELETE], inserts=c[INSERT], updates=c[UPDATE],
            deletes=c[DELETE], tables=list(t.tables), complete=complete)


def summarize(events: Iterable[Event], count_rows: bool = True) -> Iterator[TxSummary]:
    """Transaction summaries of an event stream, in order."""
    s = Summarizer(count_rows)
    for ev in events:
        yield from s.feed(ev)
    yield from s.finish()


__all__ = ["TxSummary", "Summarizer", "summarize"]
