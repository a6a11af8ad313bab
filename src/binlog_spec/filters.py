"""Event filters: schema, table, GTID, server id, time and position.

Filters never read bytes: they look at event fields only. Time, position,
GTID and server-id filters keep or drop whole transactions, decided at the
transaction's first event (its GTID event, or BEGIN, or a lone statement).
Schema and table filters drop the TABLE_MAP and rows events (and statements
run in an excluded schema) inside a transaction, and what goes with what they
removed: the ANNOTATE_ROWS / ROWS_QUERY text of rows events all removed, the
INTVAR/RAND/USER_VAR context of a removed statement. A transaction left with
nothing but its framing (GTID, BEGIN, TABLE_MAP, XID/COMMIT) is dropped whole;
one that keeps something keeps its framing. Events outside transactions
(FORMAT_DESCRIPTION, ROTATE, PREVIOUS_GTIDS, ...) are always kept: output
needs them.
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterable, Iterator

from binlog_spec import spec
from binlog_spec.event import Event
from binlog_spec.gtidset import GtidSet

ET = spec.EventType

GTID_EVENTS = {ET.gtid_log_event, ET.anonymous_gtid_log_event, ET.gtid_tagged_log_event, ET.gtid_event}
ROWS_EVENTS = {ET.pre_ga_write_rows_event, ET.pre_ga_update_rows_event, ET.pre_ga_delete_rows_event,
               ET.write_rows_event_v1, ET.update_rows_event_v1, ET.delete_rows_event_v1,
               ET.write_rows_event, ET.update_rows_event, ET.delete_rows_event, ET.partial_update_rows_event,
               ET.write_rows_compressed_event_v1, ET.update_rows_compressed_event_v1,
               ET.delete_rows_compressed_event_v1, ET.write_rows_compressed_event,
               ET.update_rows_compressed_event, ET.delete_rows_compressed_event}
QUERY_EVENTS = {ET.query_event, ET.query_compressed_event, ET.execute_load_query_event}
#: Events that belong to whichever transaction is open (or start none).
CONTROL_EVENTS = {ET.format_description_event, ET.rotate_event, ET.stop_event, ET.previous_gtids_log_event,
                  ET.gtid_list_event, ET.binlog_checkpoint_event, ET.heartbeat_log_event,
                  ET.heartbeat_log_event_v2, ET.start_encryption_event}


#: How the statements that end a transaction start (upper-cased, first 9 bytes).
_COMMIT_WORDS = (b"COMMIT", b"ROLLBACK", b"XA COMMIT", b"XA ROLLBA")


def _query_word(ev: Event) -> bytes:
    """The statement's first 9 bytes, upper-cased (Event.statement_bytes: no fields are built)."""
    return ev.statement_bytes().lstrip()[:9].upper() if ev.error is None else b""


def is_begin(ev: Event) -> bool:
    return ev.type_code in QUERY_EVENTS and _query_word(ev).startswith(b"BEGIN")


def is_commit(ev: Event) -> bool:
    if ev.type_code in (ET.xid_event, ET.xa_prepare_log_event):
        return True
    return ev.type_code in QUERY_EVENTS and _query_word(ev).startswith(_COMMIT_WORDS)


#: Events that go with the statement after them (its text, its context): kept only with it.
ATTACHED_EVENTS = {ET.annotate_rows_event, ET.rows_query_log_event, ET.intvar_event, ET.rand_event,
                   ET.user_var_event}


#: MariaDB GTID_EVENT flags2 bit: the group is one statement with no BEGIN/COMMIT (DDL).
FL_STANDALONE = 0x01


def implies_begin(ev: Event) -> bool:
    """A MariaDB GTID_EVENT of a transaction stands for its BEGIN (no BEGIN query event follows)."""
    return ev.type_code == ET.gtid_event and ev.error is None and not ev.fields["flags2"] & FL_STANDALONE


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
    start_position: int | None = None
    stop_position: int | None = None

    @property
    def active(self) -> bool:
        return self != FilterOptions()

    # -- whole transactions ------------------------------------------------
    def keeps_transaction(self, first: Event, gtid: str | None, in_first_file: bool = True,
                          in_last_file: bool = True) -> bool:
        """Positions apply to the first file (start) and the last file (stop), as in mysqlbinlog."""
        if self.start_position is not None and in_first_file and first.pos < self.start_position:
            return False
        if self.stop_position is not None and in_last_file and first.pos >= self.stop_position:
            return False
        when = datetime.fromtimestamp(first.timestamp, tz=timezone.utc)
        if self.start_datetime is not None and when < self.start_datetime:
            return False
        if self.stop_datetime is not None and when >= self.stop_datetime:
            return False
        if self.server_ids and first.server_id not in self.server_ids:
            return False
        if first.server_id in self.exclude_server_ids:
            return False
        if self.include_gtids is not None and gtid not in self.include_gtids:
            return False
        if self.exclude_gtids is not None and gtid in self.exclude_gtids:
            return False
        return True

    # -- schema and table --------------------------------------------------
    def keeps_schema(self, schema: str) -> bool:
        if self.databases and not any(fnmatch.fnmatchcase(schema, g) for g in self.databases):
            return False
        return not any(fnmatch.fnmatchcase(schema, g) for g in self.exclude_databases)

    def keeps_table(self, schema: str, table: str) -> bool:
        if not self.keeps_schema(schema):
            return False
        name = f"{schema}.{table}"
        if self.tables and not any(fnmatch.fnmatchcase(name, g) for g in self.tables):
            return False
        return not any(fnmatch.fnmatchcase(name, g) for g in self.exclude_tables)


class Transactions:
    """Marks transaction boundaries in an event stream.

    A transaction is a GTID event (if any) and then: BEGIN ... XID/COMMIT, or a
    TRANSACTION_PAYLOAD (whose inner events hold BEGIN ... XID), or a single
    statement (DDL, or a statement with its INTVAR/RAND/USER_VAR context).
    """

    def __init__(self) -> None:
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


def _is_framing(ev: Event) -> bool:
    """GTID, BEGIN, TABLE_MAP, XID/COMMIT, TRANSACTION_PAYLOAD: what a transaction is framed by, not
    what it does (a TABLE_MAP the filters keep has rows that they keep)."""
    code = ev.type_code
    return (code in GTID_EVENTS or code in (ET.table_map_event, ET.transaction_payload_event)
            or is_begin(ev) or is_commit(ev))


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


def filter_events(events: Iterable[Event], options: FilterOptions,
                  files: list[str] | None = None) -> Iterator[Event]:
    """The events the filters keep, in order. `files`: the run's files, for the position filters."""
    if not options.active:
        yield from events
        return
    tx = Transactions()
    keep_tx = True
    excluded_tables: set[int] = set()
    held = _Held()
    for ev in events:
        starts, ends = tx.step(ev)
        code = ev.type_code
        if code in CONTROL_EVENTS:
            yield from held.release()
            yield ev
            continue
        if starts:
            yield from held.release()
            held = _Held()
            keep_tx = options.keeps_transaction(ev, tx.gtid, not files or ev.file == str(files[0]),
                                                not files or ev.file == str(files[-1]))
        if not keep_tx:
            continue
        if ev.error is None and code == ET.table_map_event:
            if not options.keeps_table(ev.fields["schema"], ev.fields["table"]):
                excluded_tables.add(ev.fields["table_id"])
                held.removed = True
                continue
            excluded_tables.discard(ev.fields["table_id"])
        elif ev.error is None and code in ROWS_EVENTS:
            if ev.fields["table_id"] in excluded_tables:
                held.removed, held.attached = True, []
                continue
        elif (ev.error is None and code in QUERY_EVENTS and not is_begin(ev) and not is_commit(ev)
              and (options.databases or options.exclude_databases)
              and not options.keeps_schema(ev.fields.get("db", ""))):
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
