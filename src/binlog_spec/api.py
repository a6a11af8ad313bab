"""The library's entry points: what the CLI and the Spark source call, and what a program calls.

    from binlog_spec import api
    events = api.select_events(api.read_events(paths), FilterOptions(databases=("shop",)), paths,
                               schema=SchemaTracker())
    for change in api.read_rows(events):
        ...

* `read_events` - the events of files, in order, checked (binlog.reader); with a --start-position,
  the first file read by seeking (stream.planning.seek);
* `select_events` - the schema stage then the filters: every event is seen by the schema tracker
  (DDL replayed, TABLE_MAPs completed) before the filters choose what is output (stream.filters);
* `read_rows` - row events to row changes (rows.decoder);
* `write_sql` - SQL statements, forward or rollback (output.sql.script);
* `unwritable` - whether write_sql can write its script whole (output.sql.writable);
* `write_binlog` - a binlog file, forward or rollback (output.rewriter);
* `analyze` - the analysis report's figures (analysis.collector);
* `check_rollback` - whether a rollback would overwrite later changes (output.rollback.check).
"""
from __future__ import annotations

from typing import Callable, Iterable, Iterator

from binlog_spec.binlog import reader, spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import GTID_EVENTS, QUERY_EVENTS, ROW_OPS
from binlog_spec.options import DEFAULT_OPTIONS, ReadOptions
from binlog_spec.rows.decoder import observe_schema, read_rows
from binlog_spec.stream.planning.seek import read_from_position
from binlog_spec.stream.filters import FilterOptions, filter_events

# The writers and the analysis are imported when called: a run that lists events does not load them.

ET = spec.EventType

# The event types whose bodies each consumer reads (ReadOptions.parse_bodies: the reader parses these
# as it reads, the others only if something asks for their fields). None: every type (events lists
# them all; base64 and binlog outputs print or rewrite every kept event from its fields).
#: read_rows with observe_schema: TABLE_MAPs, rows events, the GTID and end of each transaction, and
#: the statements (DDL replayed, BEGIN/COMMIT).
ROWS_BODIES = frozenset(int(c) for c in (*ROW_OPS, *GTID_EVENTS, *QUERY_EVENTS, ET.table_map_event, ET.xid_event))
#: write_sql (--sql, --sql2): the rows' and the statements', with the context of statement-based DML.
SQL_BODIES = ROWS_BODIES | {int(ET.intvar_event), int(ET.rand_event), int(ET.user_var_event)}
#: analyze: the transactions, their tables and rows, the DDL.
ANALYZE_BODIES = ROWS_BODIES
#: The filters and their transaction tracker (stream.filters): GTIDs, BEGIN/COMMIT/XID, tables.
FILTER_BODIES = ROWS_BODIES


def bodies_needed(consumer: frozenset[int] | None, filters: FilterOptions) -> frozenset[int] | None:
    """ReadOptions.parse_bodies of a run: what its consumer reads, and what the filters read when
    they are active."""
    if consumer is None:
        return None
    return consumer | FILTER_BODIES if filters.active else consumer


def read_events(paths: list, options: ReadOptions = DEFAULT_OPTIONS, faults: list | None = None,
                start_position: int | None = None, sink=None) -> Iterator[Event]:
    """The events of files, in order, checked (binlog.reader.read_events; `faults`: a broken file's
    error is kept there and the next file is read). With `start_position` (FilterOptions.start_position),
    the first file is read by seeking (stream.planning.seek): what select_events then keeps with that filter is
    what it keeps of every event, the events before the position are mostly never read. `sink`: a
    consumer that takes events straight from the framing loop (reader.BinlogReader; not with a seek)."""
    if start_position is None:
        return reader.read_events(paths, options, faults, sink)
    return read_from_position(paths, options, faults, start_position)


def select_events(events: Iterable[Event], filters: FilterOptions, files: list[str], schema=None,
                  notify: Callable[[str, str], None] | None = None,
                  warn: Callable[[str], None] | None = None, check=None, selection=None) -> Iterable[Event]:
    """The events the filters keep; with `schema` (a SchemaTracker), every event is seen by it first, so
    the filters choose what is output, never what is learnt. `files` are the names of the run's files
    (for --start-position / --stop-position), `notify(kind, message)` hears the filters' notes, `warn`
    what the schema says of a statement it replays (a table forgotten, and why). With `check` (a
    rollback's output.rollback.check.ConflictCheck), every event is seen by it too, the ones the filters
    keep as undone, and the input is read to its end (with no filter, every event is undone: nothing
    comes after them). `selection` (a stream.selection.Selection) counts what the filters keep and
    learns the names the files have, for the notes of a selection that kept nothing."""
    if schema is not None:
        events = observe_schema(events, schema, warn)
    if not filters.active:
        return events
    if check is not None:
        return check.watch(events, lambda kept: filter_events(kept, filters, files, notify, selection),
                           filters.kept_seconds())
    return filter_events(events, filters, files, notify, selection)


def check_rollback(events: Iterable[Event], filters: FilterOptions, files: list[str], schema=None, check=None):
    """The conflict check of a rollback of the events the filters keep (output.rollback.check): whether
    rows it undoes were changed again later in `events`. Reads them all; returns the ConflictCheck
    (its `count`, `conflicts()`; close it). `schema`: a SchemaTracker for the keys the DDL gives.
    `check`: the ConflictCheck to run (a new one by default); where `events` are read with its
    `sink()`, its compiled loop takes the common transactions past the window."""
    if check is None:
        from binlog_spec.output.rollback.check import ConflictCheck
        check = ConflictCheck()
    try:
        for _ in select_events(events, filters, files, schema, check=check):
            pass
    except BaseException:
        check.close()
        raise
    return check


def write_sql(events: Iterable[Event], options, rollback: bool = False, not_undone=None, warn=None,
              refused=None) -> Iterator[str]:
    """The lines of a SQL script of the events (--sql, --sql2): forward, or with `rollback` what undoes
    their row changes, last transaction first (the statements it cannot undo counted in `not_undone`).
    A row no statement can write exactly is left out, a comment in its place, and `refused(error)` is
    told. `options`: an output.sql.script.ScriptOptions."""
    from binlog_spec.output.sql import script
    if rollback:
        return script.rollback(events, options, not_undone=not_undone, warn=warn, refused=refused)
    return script.forward(events, options, warn=warn, refused=refused)


def unwritable(events: Iterable[Event], options, exact: bool = True) -> list:
    """What keeps a SQL script of the events (write_sql) from being written whole, known before its
    first byte: one output.sql.writable.Problem per table and cause (column names unknown, row images a
    rollback or --replace needs whole), read off the TABLE_MAPs and the rows events' bitmaps. `options`:
    an output.sql.statements.SqlOptions (its `rollback` says which script). `exact`: see writable.problems."""
    from binlog_spec.output.sql.writable import problems
    return problems(events, options, exact)


def write_binlog(events: Iterable[Event], out, options=None):
    """The events, or their inversion, as one binlog file written to `out` (output.rewriter.write_binlog;
    `options`: a WriteOptions). Returns the Rewriter, whose notes name what a rollback could not undo."""
    from binlog_spec.output import rewriter
    return rewriter.write_binlog(events, out, options if options is not None else rewriter.WriteOptions())


def analyze(events: Iterable[Event], options=None, faults=None, analyzer=None):
    """The figures of the analysis report (analysis.collector.analyze; `options`: an AnalyzeOptions;
    `analyzer`: the collector.Analyzer to feed, the one a collector.sink counts for)."""
    from binlog_spec.analysis import collector
    return collector.analyze(events, options if options is not None else collector.AnalyzeOptions(), faults,
                             analyzer)


__all__ = ["ROWS_BODIES", "SQL_BODIES", "ANALYZE_BODIES", "bodies_needed", "read_events", "select_events", "read_rows", "write_sql", "unwritable", "write_binlog", "analyze", "check_rollback"]
