"""Event filters: schema, table, GTID, server id, time and position.

Filters never read bytes: they look at event fields only. Time, position,
GTID and server-id filters keep or drop whole transactions, decided at the
transaction's first event (its GTID event, or BEGIN, or a lone statement).

The time rule is stated at the transaction level: a transaction is kept when
the timestamp of its first event is at or after the start and before the
stop. Control events (FORMAT_DESCRIPTION, ROTATE, STOP, PREVIOUS_GTIDS,
GTID_LIST, BINLOG_CHECKPOINT) take no part. (mysqlbinlog starts at the first
*event* at or after the start and stops at the first event at or after the
stop, so a control event stamped later than the data can make it print
everything, or nothing.)

Byte positions: --start-position must be an event boundary of the first file
(PositionError otherwise); a start inside a transaction keeps that transaction
from its first event. --stop-position N keeps nothing that starts at or after
N in the last file, control events included, and leaves out a transaction N
cuts. A MariaDB GTID position (``0-1-5``) starts after / stops at that GTID in
its domain, as mariadb-binlog's.
--op drops the rows events (and the statement-based DML) of the other operations as the table filters
drop a table's; --thread-id keeps whole transactions by their QUERY events' thread id (stream.thread_filter).
Schema and table filters drop the TABLE_MAP and rows events (and statements
run in an excluded schema) inside a transaction, and what goes with what they
removed: the ANNOTATE_ROWS / ROWS_QUERY text of rows events all removed, the
INTVAR/RAND/USER_VAR context of a removed statement. A transaction left with
nothing but its framing (GTID, BEGIN, TABLE_MAP, XID/COMMIT, and SAVEPOINT,
ROLLBACK TO, RELEASE SAVEPOINT, XA END) is dropped whole; one that keeps
something keeps its framing. Transaction control is never dropped by the
database it names (mysqlbinlog keeps it too). Events outside transactions
(FORMAT_DESCRIPTION, ROTATE, PREVIOUS_GTIDS, ...) are always kept: output
needs them.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterable, Iterator

from binlog_spec.binlog import spec
from binlog_spec.errors import PositionError
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import CONTROL_EVENTS, GTID_EVENTS, QUERY_EVENTS, ROW_OPS, ROWS_EVENTS
from binlog_spec.binlog.gtid import GtidPosition, GtidSet
from binlog_spec.binlog.timezones import iso_z
from binlog_spec.stream import thread_filter
from binlog_spec.stream.transactions import Transactions, handed_on, tx_control

ET = spec.EventType
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


#: Events that go with the statement after them (its text, its context): kept only with it.
ATTACHED_EVENTS = {ET.annotate_rows_event, ET.rows_query_log_event, ET.intvar_event, ET.rand_event,
                   ET.user_var_event}


@dataclass(frozen=True)
class FilterOptions:
    """The one options object of the filters (pymysqlbinlog / mysqlbinlog names in the CLI)."""

    databases: tuple[str, ...] = ()
    exclude_databases: tuple[str, ...] = ()
    tables: tuple[str, ...] = ()          # "db.table" globs
    exclude_tables: tuple[str, ...] = ()
    include_gtids: GtidSet | None = None
    exclude_gtids: GtidSet | None = None
    server_ids: frozenset[int] = frozenset()
    exclude_server_ids: frozenset[int] = frozenset()
    start_datetime: datetime | None = None
    stop_datetime: datetime | None = None
    start_position: int | None = None       # a byte offset in the first file
    stop_position: int | None = None        # a byte offset in the last file
    start_gtid: GtidPosition | None = None  # MariaDB: the transactions after this GTID state
    stop_gtid: GtidPosition | None = None   # MariaDB: the transactions up to this GTID state
    ops: frozenset[str] = frozenset()       # --op: the rows events (and statement DML) of these operations
    thread_ids: frozenset[int] = frozenset()    # --thread-id: the transactions of these threads (thread_filter)

    @property
    def active(self) -> bool:
        return self != FilterOptions()

    def described(self) -> list[tuple[str, str]]:
        """The active filters as (option, value) pairs, named as the command line names them (times in
        ISO 8601 UTC), for a report to say what it covers."""
        out = [(name, v) for name, values in (("--database", self.databases), ("--exclude-database",
               self.exclude_databases), ("--table", self.tables), ("--exclude-table", self.exclude_tables))
               for v in values]
        out += [(name, str(v)) for name, v in (("--include-gtids", self.include_gtids),
                                                ("--exclude-gtids", self.exclude_gtids)) if v is not None]
        out += [(name, str(i)) for name, ids in (("--server-id", self.server_ids),
                                                  ("--exclude-server-id", self.exclude_server_ids)) for i in sorted(ids)]
        out += [(name, iso_z(v.astimezone(timezone.utc)) if v.tzinfo else v.isoformat())
                for name, v in (("--start-datetime", self.start_datetime), ("--stop-datetime", self.stop_datetime))
                if v is not None]
        out += [(name, str(v)) for name, v in (("--start-position", self.start_position), ("--start-position",
                self.start_gtid), ("--stop-position", self.stop_position), ("--stop-position", self.stop_gtid))
                if v is not None]
        out += [("--op", op) for op in sorted(self.ops)] + [("--thread-id", str(t)) for t in sorted(self.thread_ids)]
        return out

    # -- whole transactions ------------------------------------------------
    def keeps_transaction(self, first: Event, gtid: str | None) -> bool:
        """Time, GTID and server id, decided on the transaction's first event. (Byte positions are
        applied around transactions by filter_events.)"""
        if self.start_datetime is not None or self.stop_datetime is not None:
            when = datetime.fromtimestamp(first.timestamp, tz=timezone.utc)
            if self.start_datetime is not None and when < self.start_datetime:
                return False
            if self.stop_datetime is not None and when >= self.stop_datetime:
                return False
        if self.server_ids and first.server_id not in self.server_ids:
            return False
        if first.server_id in self.exclude_server_ids:
            return False
        return self.keeps_gtid(gtid)

    @property
    def by_gtid(self) -> bool:      # (a GTID set or position)
        return (self.include_gtids, self.exclude_gtids, self.start_gtid, self.stop_gtid) != (None,) * 4

    def keeps_gtid(self, gtid: str | None) -> bool:
        """keeps_transaction's GTID sets and MariaDB GTID positions, on the transaction's GTID."""
        if self.include_gtids is not None and gtid not in self.include_gtids:
            return False
        if self.exclude_gtids is not None and gtid in self.exclude_gtids:
            return False
        if self.start_gtid is not None and not self.start_gtid.after(gtid):
            return False
        if self.stop_gtid is not None and not self.stop_gtid.reached_by(gtid):
            return False
        return True

    def kept_seconds(self) -> tuple[int | None, int | None] | None:
        """When the time bounds are the only active filters: (lo, hi), whole seconds such that
        keeps_transaction keeps a transaction exactly when lo <= its first event's timestamp < hi
        (None: no bound on that side); None when any other filter is active."""
        if not self.active or self != FilterOptions(start_datetime=self.start_datetime,
                                                    stop_datetime=self.stop_datetime):
            return None
        return self.time_seconds()

    def time_seconds(self) -> tuple[int | None, int | None] | None:
        """(lo, hi) of kept_seconds for the time bounds whatever the other filters; None when a bound
        has no zone."""
        if any(b is not None and b.tzinfo is None for b in (self.start_datetime, self.stop_datetime)):
            return None

        def ceiling(bound: datetime | None) -> int | None:       # ts < bound  <=>  ts < ceiling (ts whole)
            if bound is None:
                return None
            micros = (bound - _EPOCH) // timedelta(microseconds=1)
            return -(-micros // 1_000_000)
        return ceiling(self.start_datetime), ceiling(self.stop_datetime)

    # -- schema and table --------------------------------------------------
    def keeps_schema(self, schema: str) -> bool:
        if self.databases and not any(fnmatch.fnmatchcase(schema, g) for g in self.databases):
            return False
        return not any(fnmatch.fnmatchcase(schema, g) for g in self.exclude_databases)

    def keeps_table(self, schema: str, table: str) -> bool:
        if not self.keeps_schema(schema):
            return False
        if self.tables and not any(_table_matches(schema, table, g) for g in self.tables):
            return False
        return not any(_table_matches(schema, table, g) for g in self.exclude_tables)

    @property
    def filters_tables(self) -> bool:
        return bool(self.tables or self.exclude_tables)

    def skippable(self) -> bool:
        """Whether the active filters are time bounds (with a zone), server ids, GTID sets and positions, schema
        and table filters alone: those whose choice of a MariaDB transaction of rows events a compiled loop can
        make from its events' headers, GTID event and TABLE_MAPs (stream.skipping)."""
        return self.active and self.time_seconds() is not None and self == FilterOptions(
            databases=self.databases, exclude_databases=self.exclude_databases, tables=self.tables,
            exclude_tables=self.exclude_tables, start_datetime=self.start_datetime, stop_datetime=self.stop_datetime,
            server_ids=self.server_ids, exclude_server_ids=self.exclude_server_ids, include_gtids=self.include_gtids,
            exclude_gtids=self.exclude_gtids, start_gtid=self.start_gtid, stop_gtid=self.stop_gtid)


    @property
    def seek_only(self) -> bool:
        """--start-position alone: the first file is read by a seek (api.read_events), and the position filter
        keeps every event after the position (a compiled lane may take those)."""
        return self.start_position is not None and self == FilterOptions(start_position=self.start_position)


def _table_matches(schema: str, table: str, glob: str) -> bool:
    """'db.table' globs; a glob with no schema ('orders', 'ord*') matches the table in any schema."""
    if "." not in glob:
        return fnmatch.fnmatchcase(table, glob)
    return fnmatch.fnmatchcase(f"{schema}.{table}", glob)


#: Statement-based DML whose target tables the table filters look at (first token, upper case).
_DML_WORDS = {"INSERT", "REPLACE", "UPDATE", "DELETE"}


def statement_tables(query: str, default_db: str) -> list[tuple[str, str]] | None:
    """The (schema, table) pairs a statement-based INSERT / REPLACE / UPDATE / DELETE writes, found
    with sqlglot; [] for any other statement; None when a DML statement cannot be parsed."""
    from binlog_spec.rows.statement_text import leading_tokens, statement_offset

    tokens = leading_tokens(query)
    word = tokens[0].text.upper() if tokens else ""
    if word not in _DML_WORDS:
        return []
    import logging

    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    text = query[statement_offset(query):]
    if word == "REPLACE":            # the same targets as INSERT; sqlglot's MySQL grammar lacks REPLACE
        text = "INSERT" + text[len("REPLACE"):]
    log = logging.getLogger("sqlglot")
    level = log.level
    log.setLevel(logging.CRITICAL)
    try:
        tree = sqlglot.parse_one(text, read="mysql")
    except (SqlglotError, ValueError, RecursionError):
        return None
    finally:
        log.setLevel(level)
    if isinstance(tree, exp.Insert):
        targets = list(tree.this.find_all(exp.Table)) if tree.this is not None else []
    elif isinstance(tree, exp.Update):
        targets = list(tree.this.find_all(exp.Table)) if tree.this is not None else []
    elif isinstance(tree, exp.Delete):
        targets = list(tree.args.get("tables") or []) or ([tree.this] if tree.this is not None else [])
    else:
        return None
    if not targets:
        return None
    return [(t.db or default_db, t.name) for t in targets]


def _is_framing(ev: Event) -> bool:
    """GTID, BEGIN, TABLE_MAP, XID/COMMIT, TRANSACTION_PAYLOAD, and the transaction control inside
    (SAVEPOINT, ROLLBACK TO, RELEASE SAVEPOINT, XA END: tx_control): what a transaction is framed by,
    not what it does (a TABLE_MAP the filters keep has rows that they keep)."""
    code = ev.type_code
    return (code in GTID_EVENTS or code in (ET.table_map_event, ET.transaction_payload_event, ET.xid_event,
                                             ET.xa_prepare_log_event) or tx_control(ev) is not None)


class _Held:
    """The kept events of the open transaction that wait for something it does to be kept: its
    framing (until then), and the events attached to the next statement (until it is kept)."""

    __slots__ = ("framing", "attached", "content", "removed")

    def __init__(self) -> None:
        self.framing: list[Event] = []
        self.attached: list[Event] = []
        self.content = False      # something besides framing was kept: the framing goes out as it comes
        self.removed = False      # the schema/table filters removed something from the transaction

    def release(self) -> list[Event]:
        """The transaction ends (or the input moves on): its framing, unless the filters emptied it."""
        out = [] if self.removed and not self.content else self.framing
        self.framing, self.attached = [], []
        return out


#: Receives the filters' notes and warnings: (kind, message), kind "note" or "warning".
Notify = Callable[[str, str], None]


def filter_events(events: Iterable[Event], options: FilterOptions,
                  files: list[str] | None = None, notify: Notify | None = None, selection=None,
                  excluded_tables: set[int] | None = None) -> Iterator[Event]:
    """The events the filters keep, in order. `files`: the names of the run's files (as the events
    name them), for the position filters; `notify`: where notes and warnings go (none when None);
    `selection`: a stream.selection.Selection that counts what they keep and learns the names read;
    `excluded_tables`: the set of the table ids whose rows the table filters drop (a new one by
    default; stream.skipping.SkipGate's, which a compiled loop adds to)."""
    kept = _filter_events(events, options, files, notify, selection, excluded_tables)
    return kept if selection is None or not options.active else selection.count(kept)


def _filter_events(events: Iterable[Event], options: FilterOptions, files: list[str] | None,
                   notify: Notify | None, selection, excluded: set[int] | None = None) -> Iterator[Event]:
    if not options.active:
        yield from events
        return
    notify = notify or (lambda kind, message: None)
    first = str(files[0]) if files else None
    last = str(files[-1]) if files else None
    if options.start_position is not None:
        events = _from_start_position(events, options.start_position, first, notify)
    if options.stop_position is not None:
        events = _to_stop_position(events, options.stop_position, last, notify)
    if options.thread_ids:
        events = thread_filter.by_thread(events, options.thread_ids)
    if options == FilterOptions(start_position=options.start_position, stop_position=options.stop_position,
                                thread_ids=options.thread_ids):
        yield from events
        return
    tx = Transactions()
    keep_tx = True
    unparsed_warned = False
    excluded_tables: set[int] = set() if excluded is None else excluded
    held = _Held()
    see = selection.watcher(options) if selection is not None else None
    for ev in events:
        if ev.replayed:     # what a compiled lane took, handed back (stream.skipping)
            opens, ends = handed_on(ev)
            if opens:       # a transaction it hands on: one the filters keep, its framing written
                tx.step(ev)
                held, keep_tx = _Held(), True
                held.content = True
            elif ends:
                tx.reset()
                held = _Held()
            yield ev
            continue
        starts, ends = tx.step(ev)
        code = ev.type_code
        if see is not None and (code == ET.table_map_event or code in QUERY_EVENTS):
            see(ev, code)
        if code in CONTROL_EVENTS:
            yield from held.release()
            yield ev
            continue
        if starts:
            yield from held.release()
            held = _Held()
            keep_tx = options.keeps_transaction(ev, tx.gtid)
        if not keep_tx:
            continue
        if ev.error is None and code == ET.table_map_event:
            if not options.keeps_table(ev.fields["schema"], ev.fields["table"]):
                excluded_tables.add(ev.fields["table_id"])
                held.removed = True
                continue
            excluded_tables.discard(ev.fields["table_id"])
        elif ev.error is None and code in ROWS_EVENTS:
            if ev.fields["table_id"] in excluded_tables or (options.ops and ROW_OPS[code] not in options.ops):
                held.removed, held.attached = True, []
                continue
        elif (ev.error is None and code in QUERY_EVENTS and tx_control(ev) is None
              and (options.databases or options.exclude_databases or options.filters_tables or options.ops)):
            # (transaction control is kept whatever database it names, as mysqlbinlog keeps it:
            # client/mysqlbinlog.cc skips a QUERY by its database only when !is_trans_keyword())
            keep, unparsed = _keeps_statement(ev, options)
            if unparsed and not unparsed_warned:
                unparsed_warned = True
                notify("warning", f"{ev.file}: offset {ev.pos}: a statement --table/--exclude-table cannot "
                       "parse is kept (this warning is given once)")
            if not keep:
                held.removed, held.attached = True, []
                if ends:
                    yield from held.release()
                continue
        if code in ATTACHED_EVENTS:
            held.attached.append(ev)
            continue
        if _is_framing(ev):
            if ends:
                held.attached = []
            if held.content:
                if code == ET.table_map_event:
                    yield from held.attached
                    held.attached = []
                yield ev
            else:
                if code == ET.table_map_event:
                    held.framing += held.attached
                    held.attached = []
                held.framing.append(ev)
        else:
            if not held.content:
                held.content = True
                yield from held.framing
                held.framing = []
            yield from held.attached
            held.attached = []
            yield ev
        if ends:
            yield from held.release()
    yield from held.release()


def _keeps_statement(ev: Event, options: FilterOptions) -> tuple[bool, bool]:
    """(keep the statement, it could not be parsed). --database goes by the statement's default
    database; --table by the tables a statement-based INSERT/REPLACE/UPDATE/DELETE writes (any of
    them kept keeps it); other statements (DDL) are not table-filtered."""
    db = ev.fields.get("db", "") or ""
    if options.ops and thread_filter.statement_op(ev) not in (None, *options.ops):
        return False, False
    if (options.databases or options.exclude_databases) and not options.keeps_schema(db):
        return False, False
    if not options.filters_tables:
        return True, False
    query = ev.fields.get("query")
    if not isinstance(query, str):
        return True, False
    targets = statement_tables(query, db)
    if targets is None:
        return True, True
    if not targets:
        return True, False
    return any(options.keeps_table(schema, table) for schema, table in targets), False


def _from_start_position(events: Iterable[Event], start: int, first: str | None,
                         notify: Notify) -> Iterator[Event]:
    """The events from --start-position on in the first file (all of the other files). Before it
    only control events pass, held until the start is found (so that nothing is delivered before a
    PositionError). The start must be an event boundary; inside a transaction, that transaction is
    kept from its first event (held until then: one transaction at most)."""
    tx = Transactions()
    control: list[Event] = []       # the control events before the start
    held: list[Event] = []          # the open transaction's events before the start
    reached = False
    from_file_start = False         # the first file is read from its first event (not a split)
    previous: int | None = None     # the last boundary before the start
    in_first = False
    for ev in events:
        starts, ends = tx.step(ev)
        if reached:
            yield ev
            continue
        in_first = first is None or ev.file == first
        if not in_first:                       # the first file ended before the start
            reached = True
            if from_file_start:
                notify("warning", f"--start-position {start} is past the end of {first} (its last event "
                       f"starts at {previous}): nothing of it is kept")
            yield from control
            control = []
            yield ev
            continue
        if ev.pos == spec.LEN_MAGIC:
            from_file_start = True
        if ev.is_inner or ev.pos < start:
            if ev.type_code in CONTROL_EVENTS and not tx.mode:
                control.append(ev)
            elif starts:
                held = [ev]
            elif tx.mode or ends:
                held.append(ev)
            if ends:
                held = []
            if not ev.is_inner:
                previous = ev.pos
            continue
        reached = True
        if ev.pos > start and from_file_start:
            nearest = " and ".join(str(b) for b in (previous, ev.pos) if b is not None)
            raise PositionError(f"--start-position {start} is not the position of an event in {first}: the "
                                f"nearest boundaries are {nearest}", file=first, position=start,
                                boundaries=(previous, ev.pos))
        yield from control
        control = []
        if held and not starts:
            notify("note", f"--start-position {start} is inside the transaction that starts at {held[0].pos} "
                   f"in {first}: it is kept from its start")
            yield from held
        held = []
        yield ev
    yield from control
    if not reached and from_file_start and in_first:
        notify("warning", f"--start-position {start} is past the end of {first} (its last event starts at "
               f"{previous}): nothing of it is kept")


def _to_stop_position(events: Iterable[Event], stop: int, last: str | None, notify: Notify) -> Iterator[Event]:
    """The events of the last file whose bytes all lie before --stop-position, without a transaction
    that the position cuts (each transaction of the last file is held until it ends: one at most).
    An event that starts before the position and ends after it is cut by it: output stops before it,
    and its transaction is left out whole (mariadb-binlog stops at the first event that starts at or
    after the position, so it prints that event)."""
    tx = Transactions()
    held: list[Event] = []
    for ev in events:
        starts, ends = tx.step(ev)
        if last is not None and ev.file != last:
            yield ev
            continue
        if ev.pos >= stop or ev.pos + ev.size > stop:
            cut = held or (ev.pos < stop and (starts or tx.mode))
            if cut:
                notify("note", f"--stop-position {stop} is inside the transaction that starts at "
                       f"{held[0].pos if held else ev.pos} in {last}: it is left out")
            return
        if starts or held or (tx.mode and not ends):
            held.append(ev)
            if ends or not tx.mode:
                yield from held
                held = []
            continue
        yield ev
    yield from held
