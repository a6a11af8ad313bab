"""Row-shaped questions (binlog_spec.api re-exports these): whether --thread-id can be answered before a
script is begun (`check_thread_ids`), the statement and thread of each row change (`row_context`,
`statement_renderer`: rows --with-statement), and a row's history a line per change (`history_renderer`:
rows --format history)."""
from __future__ import annotations

from typing import Callable, Iterable

from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import GTID_EVENTS, QUERY_EVENTS
from binlog_spec.errors import BinlogError, PositionError
from binlog_spec.stream.filters import FilterOptions, filter_events


#: What check_thread_ids reads of the events (ReadOptions.parse_bodies): the GTIDs and statements.
THREAD_ID_BODIES = frozenset(int(c) for c in QUERY_EVENTS | GTID_EVENTS)


def check_thread_ids(events: Iterable[Event], filters: FilterOptions, files: list[str]) -> None:
    """Raises errors.ThreadIdError (naming the file and offset) when `filters`' --thread-id cannot be answered
    from the events (read_events' of the run's files, with THREAD_ID_BODIES; `files`: their names): a row
    transaction with no QUERY event (MariaDB's) among those the position filters keep. Writes nothing: a
    script's pre-pass. A broken file ends it quietly (the run reports it)."""
    if not filters.thread_ids:
        return
    only = FilterOptions(start_position=filters.start_position, stop_position=filters.stop_position,
                         thread_ids=filters.thread_ids)
    try:
        for _ in filter_events(events, only, files):
            pass
    except (BinlogError, OSError, PositionError):
        return


def row_context():
    """A stream.row_context.RowContext: `watch(events)` (before read_rows) keeps its `statement` and
    `thread_id` those of the row change read_rows gives."""
    from binlog_spec.stream.row_context import RowContext
    return RowContext()


def statement_renderer(context) -> Callable:
    """The JSON line of a row change with its statement and thread id (output.row_history.json_with_statement),
    read from `context` (row_context's, watching the events read_rows reads)."""
    from binlog_spec.output.row_history import json_with_statement
    return lambda rc: json_with_statement(rc, context.statement, context.thread_id)


def history_renderer(tz=None) -> Callable:
    """The `rows --format history` line of a row change (output.row_history.history_line), times in `tz`."""
    import functools
    from binlog_spec.output.row_history import history_line
    return history_line if tz is None else functools.partial(history_line, tz=tz)
