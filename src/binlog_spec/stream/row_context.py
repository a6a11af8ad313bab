"""What a row change was part of, for `rows --with-statement`: the text of the statement that made it and
the thread id of its transaction, where the binlog has them.

The statement is the text of the ANNOTATE_ROWS_EVENT (MariaDB, binlog_annotate_row_events=ON) or
ROWS_QUERY_LOG_EVENT (MySQL, binlog_rows_query_log_events=ON) that precedes the statement's TABLE_MAPs and
rows events; it holds until the rows event that ends the statement (STMT_END_F), and no longer: a rows
event of a later statement that has none gets none. The thread id is that of the transaction's first
QUERY event (MySQL's BEGIN; a statement), as stream.thread_filter reads it; a MariaDB row transaction has
no QUERY event, so no thread id (None).

`RowContext.watch(events)` passes the events through and keeps `statement` and `thread_id` current: read
in step with rows.read_rows over the watched events, they are those of the row change it gives.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import CONTROL_EVENTS, ROWS_EVENTS, STMT_END_F
from binlog_spec.stream.thread_filter import thread_id
from binlog_spec.stream.transactions import Transactions

ET = spec.EventType

#: The events whose text is the statement of the rows events after them.
STATEMENT_EVENTS = frozenset({ET.annotate_rows_event, ET.rows_query_log_event})


class RowContext:
    """The statement and thread id of the row changes of the events `watch` has passed on last."""

    __slots__ = ("statement", "thread_id", "_ended", "_tx")

    def __init__(self) -> None:
        self.statement: str | None = None
        self.thread_id: int | None = None
        self._ended = False     # the last rows event ended its statement
        self._tx = Transactions()

    def watch(self, events: Iterable[Event]) -> Iterator[Event]:
        for ev in events:
            self.see(ev)
            yield ev

    def see(self, ev: Event) -> None:
        code = ev.type_code
        if code in CONTROL_EVENTS:
            return
        starts, _ = self._tx.step(ev)
        if starts:
            self.statement, self.thread_id, self._ended = None, None, False
        if ev.error is not None:
            return
        if code in STATEMENT_EVENTS:
            query = ev.fields.get("query")
            self.statement = query if isinstance(query, str) else None
            self._ended = False
            return
        tid = thread_id(ev)
        if tid is not None:
            if self.thread_id is None:
                self.thread_id = tid
            return
        if code == ET.table_map_event or code in ROWS_EVENTS:
            if self._ended:
                self.statement, self._ended = None, False
            if code in ROWS_EVENTS and ev.fields.get("rows_flags", 0) & STMT_END_F:
                self._ended = True
