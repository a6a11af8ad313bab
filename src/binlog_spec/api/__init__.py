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
* `event_lines`, `row_lines` - the `events` and `rows` outputs' lines (text or jsonl);
* `write_base64` - the base64 script, as mysqlbinlog writes it (sql's default output; output.base64.script),
  and `Base64Writer`, the same with its compiled lane, its pieces and its notes;
* `write_sql` - SQL statements, forward or rollback (output.sql.script);
* `unwritable` - whether write_sql can write its script whole (output.sql.writable; `unwritable_sink`, its
  compiled loop over the reader's window);
* `write_binlog` - a binlog file, forward or rollback (output.rewriter);
* `analyze` - the analysis report's figures (analysis.collector), and `report_lines`, `report_html`,
  `write_report_csv` - the report written;
* `check_rollback` - whether a rollback would overwrite later changes (output.rollback.check);
* `row_changes_by_transaction` - the row changes a transaction at a time (stream.row_transactions);
* the row filters (api.rows_filters): `row_filter_options`, `RowSelector` (select_events' `rows`: --key,
  --where), `row_filter_problem` (a script's pre-pass);
* a live server (remote/, imported when first used: remote.EXPORTS): `connect`, `dump_events`, `log_heads`,
  `remote_logs` (a server's logs as read_events reads them).

What the command line needs besides, re-exported from the layers below so that it calls only this module
and binlog_spec.options: the option values' parsers (stream.option_parser), the names and zones of a run
(`display_name`, `STDIN`, `events_size`; `local_zone`, `zone_name`), the filters' tally (`Selection`), and
the pieces of a --jobs run (stream.planning.parallel: `local_files`, `plan_pieces`, `piece_schema`;
`piece_events`, `is_prefix`).

Each output takes its frozen options object (binlog_spec.options: ReadOptions, ScriptOptions, Base64Options,
WriteOptions, AnalyzeOptions; stream.filters.FilterOptions), the same ones the CLI and the Spark source build.
"""
from __future__ import annotations

from typing import Callable, Iterable, Iterator

from binlog_spec.binlog import reader
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import ET, QUERY_EVENTS, ROWS, SQL, types_where
from binlog_spec.binlog.reader import STDIN, display_name, events_size
from binlog_spec.binlog.timezones import local_zone, zone_name
from binlog_spec import remote
from binlog_spec.options import (DEFAULT_OPTIONS, AnalyzeOptions, Base64Options, ReadOptions, ScriptOptions,
                                 WriteOptions)
from binlog_spec.rows.decoder import observe_schema, read_rows
from binlog_spec.stream.planning.seek import read_from_position
from binlog_spec.stream.filters import FilterOptions, filter_events
from binlog_spec.stream.option_parser import (filter_options, parse_charset, parse_datetime, parse_gtid_set,
                                              parse_names, parse_ops, parse_position, parse_server_id,
                                              parse_thread_ids, parse_zone, schema_tracker)
from binlog_spec.stream.planning.parallel import Plan, local_files, piece_schema, plan_pieces
from binlog_spec.stream.planning.pieces import Split, is_prefix
from binlog_spec.stream.planning.splits import piece_events
from binlog_spec.stream.selection import Selection
from binlog_spec.api.row_questions import (THREAD_ID_BODIES, check_thread_ids, history_renderer, row_context,
                                           statement_renderer)
from binlog_spec.api.rows_filters import (RowFilterError, RowFilterOptions, RowSelector,  # noqa: F401
                                          row_filter_options, row_filter_problem, select_rows)
from binlog_spec.api.scripts import (Base64Writer, base64_compiled, base64_joiner, not_undone, sql_header,
                                      write_base64, write_sql)

# The writers and the analysis are imported when called: a run that lists events does not load them.
#: The formats of event_lines and row_lines.
EVENT_FORMATS = ("jsonl", "text")
ROW_FORMATS = ("jsonl", "text", "history")

# The event types whose bodies each consumer reads (ReadOptions.parse_bodies: the reader parses these
# as it reads, the others only if something asks for their fields; event_types.EVENT_TYPES' `bodies`).
# None: every type (events lists them all; base64 and binlog outputs print or rewrite every kept event
# from its fields).
#: read_rows with observe_schema: TABLE_MAPs, rows events, the GTID and end of each transaction, and
#: the statements (DDL replayed, BEGIN/COMMIT).
ROWS_BODIES = frozenset(int(c) for c in types_where(bodies=ROWS))
#: write_sql (--sql, --sql2): the rows' and the statements', with the context of statement-based DML.
SQL_BODIES = ROWS_BODIES | {int(c) for c in types_where(bodies=SQL)}
#: analyze: the transactions, their tables and rows, the DDL.
ANALYZE_BODIES = ROWS_BODIES
#: The filters and their transaction tracker (stream.filters): GTIDs, BEGIN/COMMIT/XID, tables.
FILTER_BODIES = ROWS_BODIES
#: unwritable's quick pass: the TABLE_MAPs alone (the FDE's body always is parsed); its exact pass: the
#: statements too (the DDL the schema replays).
UNWRITABLE_QUICK_BODIES = frozenset({int(ET.table_map_event)})
UNWRITABLE_BODIES = UNWRITABLE_QUICK_BODIES | frozenset(int(c) for c in QUERY_EVENTS)


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
    what it keeps of every event, the events before the position are mostly never read. `sink`: a consumer
    that takes events straight from the framing loop (reader.BinlogReader; not with a seek). remote_logs'
    `paths` (a server's logs: remote.streams) are read as they come."""
    if getattr(paths, "remote", False):
        return paths.events(options, faults, sink)
    if start_position is None:
        return reader.read_events(paths, options, faults, sink)
    return read_from_position(paths, options, faults, start_position, sink)


def select_events(events: Iterable[Event], filters: FilterOptions, files: list[str], schema=None,
                  notify: Callable[[str, str], None] | None = None,
                  warn: Callable[[str], None] | None = None, check=None, selection=None,
                  gate=None, rows=None) -> Iterable[Event]:
    """The events the filters keep; with `schema` (a SchemaTracker), every event is seen by it first, so
    the filters choose what is output, never what is learnt. `files` are the names of the run's files
    (for --start-position / --stop-position), `notify(kind, message)` hears the filters' notes, `warn`
    what the schema says of a statement it replays (a table forgotten, and why). With `check` (a
    rollback's output.rollback.check.ConflictCheck), every event is seen by it too, the ones the filters
    keep as undone, and the input is read to its end (with no filter, every event is undone: nothing
    comes after them). `selection` (a stream.selection.Selection) counts what the filters keep and
    learns the names the files have, for the notes of a selection that kept nothing. `gate` (skip_gate's)
    stands between the schema stage and the filters, for a compiled loop that skips what they drop. `rows` (a
    RowSelector: --key, --where) keeps of the events the filters keep the row changes it selects (the rows
    events reduced to them, stream.row_filters.select_rows): a rollback undoes those alone."""
    if schema is not None:
        events = observe_schema(events, schema, warn)
    if rows is not None:        # (the skipping loop's `gate` drops only what the filters drop)
        if gate is not None:
            events = gate.watch(events)

        def select(kept):
            if filters.active:
                kept = filter_events(kept, filters, files, notify, selection,
                                     gate.excluded_tables if gate is not None else None)
            return select_rows(kept, rows)
        return select(events) if check is None else check.watch(events, select, None)
    if not filters.active:
        return events
    if gate is not None:
        events = gate.watch(events)
    if check is not None:
        return check.watch(events, lambda kept: filter_events(kept, filters, files, notify, selection),
                           filters.kept_seconds())
    return filter_events(events, filters, files, notify, selection,
                         gate.excluded_tables if gate is not None else None)


def skip_gate(filters: FilterOptions):
    """What lets a compiled loop in the reader skip the transactions `filters` drop (stream.skipping.SkipGate,
    for select_events' `gate`, analyzer_sink's and skipping_sink's), when they are time bounds, schema and
    table filters alone (FilterOptions.skippable); None otherwise. Not with a check (a rollback's)."""
    if not filters.skippable():
        return None
    from binlog_spec.stream.skipping import SkipGate
    return SkipGate()


def skipping_sink(gate, filters: FilterOptions, selection=None):
    """The compiled loop that skips, straight from the reader's window (read_events' `sink`), the MariaDB
    transactions of rows events `filters` drop whole, with select_events' `gate` and `selection` (the
    filters' tally); None with the pure-Python core or no gate (stream.skipping.sink)."""
    from binlog_spec.stream import skipping
    return skipping.sink(gate, filters, selection)


def conflict_check(schema=None, per_column: bool = False, skip: bool = False):
    """A new rollback conflict check (output.rollback.check.ConflictCheck) for check_rollback or select_events'
    `check`; `schema`: a SchemaTracker of its own, when the events it sees are not completed upstream.
    `per_column` (--minimal-update), `skip` (--skip-conflicts): output.rollback.columns' check."""
    if per_column or skip:
        from binlog_spec.output.rollback.columns import ColumnConflictCheck
        return ColumnConflictCheck(schema, per_column)
    from binlog_spec.output.rollback.check import ConflictCheck
    return ConflictCheck(schema)


def conflict_check_compiled() -> bool:
    """Whether the conflict check's compiled loop can run."""
    from binlog_spec import compiled
    return compiled.load("binlog_spec.output.rollback._ccheck") is not None


def conflict_lines(check, tz, force: bool, skipped: bool = False) -> Iterator[str]:
    """The report of a conflict check's conflicts (output.rollback.report), a line each; `skipped`: their
    rows were left out of the undo (--skip-conflicts)."""
    from binlog_spec.output.rollback.report import report_lines as lines
    return lines(check, tz, force, skipped)


def check_rollback(events: Iterable[Event], filters: FilterOptions, files: list[str], schema=None, check=None):
    """The conflict check of a rollback of the events the filters keep (output.rollback.check): whether
    rows it undoes were changed again later in `events`. Reads them all; returns the ConflictCheck
    (its `count`, `conflicts()`; close it). `schema`: a SchemaTracker for the keys the DDL gives.
    `check`: the ConflictCheck to run (a new one by default); where `events` are read with its
    `sink()`, its compiled loop takes the common transactions past the window."""
    if check is None:
        check = conflict_check()
    try:
        for _ in select_events(events, filters, files, schema, check=check):
            pass
    except BaseException:
        check.close()
        raise
    return check


def event_lines(events: Iterable[Event], fmt: str = "text", tz=None) -> Iterator[str]:
    """The `events` output: one line per event (output.event_text; `fmt` "jsonl": its fields as JSON).
    `tz`: the zone of the text's times (UTC by default). No header: the CLI writes its own."""
    return map(event_renderer(fmt, tz), events)


def event_renderer(fmt: str = "text", tz=None) -> Callable[[Event], str]:
    """The function event_lines renders each event with."""
    if fmt == "text":
        import functools
        from binlog_spec.output import event_text
        return event_text.event_line if tz is None else functools.partial(event_text.event_line, tz=tz)
    if fmt == "jsonl":
        from binlog_spec.output import event_json
        return event_json.render
    raise ValueError(f"not an events format: {fmt!r} (one of {', '.join(EVENT_FORMATS)})")


def event_json_sink(paths: Iterable = ()):
    """The compiled lane of the events' JSON lines (read_events' or piece_events' `sink`: output/_cevent_json.pyx),
    for a run that writes every event of the files `paths` (no filter), or None with the pure-Python core or
    where a file's name is not text (undecodable bytes: its lines are the reference's alone)."""
    from binlog_spec.output import event_json
    for p in paths:
        try:
            display_name(p).encode("utf-8")
        except UnicodeEncodeError:
            return None
    return event_json.sink()


def event_json_lines(events: Iterable[Event], sink) -> Iterator[str | bytes]:
    """The JSON lines of the events (event_lines(events, "jsonl")), with the lines the lane `sink` (the one
    read_events was given, or None) wrote straight from the reader, in the file's order: a str per line, and
    the lane's blocks of lines as UTF-8 bytes (lines joined by newlines)."""
    from binlog_spec.output import event_json
    return event_json.lines(events, sink)


def row_lines(changes: Iterable, fmt: str = "text", tz=None) -> Iterator[str]:
    """The `rows` output: one line per row change of read_rows (output.row_text)."""
    return map(row_renderer(fmt, tz), changes)


def row_renderer(fmt: str = "text", tz=None) -> Callable:
    """The function row_lines renders each row change with."""
    from binlog_spec.output import row_text
    if fmt == "text":
        import functools
        return row_text.row_line if tz is None else functools.partial(row_text.row_line, tz=tz)
    if fmt == "jsonl":
        return row_text.row_json
    if fmt == "history":
        return history_renderer(tz)
    raise ValueError(f"not a rows format: {fmt!r} (one of {', '.join(ROW_FORMATS)})")


def row_lane(fmt: str, schema, filters: FilterOptions, skipping: tuple = (None, None, None), rows=None):
    """The compiled lane of the `rows` lines (output.row_text.json_lane): a sink for read_events of the run's
    files (or piece_events of a --jobs piece: it writes the file's positions), whose lines
    `lines_with_lane(lane, lines)` puts among the others; None where the ordinary path writes every line (the
    text format, the pure-Python core, filters no compiled loop decides). Under filters, `skipping` is (gate,
    selection, sink) of the run's select_events (skip_gate, its Selection, skipping_sink): the lane skips what
    they drop, and writes what they keep of the common transactions (output/_crow_filter.pxi). With `rows` (the
    run's RowSelector), under filters, the lines of the rows it keeps: --key alone (output/_crow_key.pxi)."""
    if fmt != "jsonl":
        return None
    from binlog_spec.output import row_text
    if not filters.active and rows is None:
        return row_text.json_lane(schema)
    if filters.seek_only:       # (read_events gives it what follows the position; `skipping`: (None, selection, None))
        return row_text.json_lane(schema, counted=skipping[1]) if skipping[1] is not None and rows is None else None
    filtering = row_text.lane_filter(skipping[0], filters, skipping[1], skipping[2])
    return row_text.json_lane(schema, filtering, rows) if filtering is not None else None


def lines_with_lane(lane, lines: Iterable[str]) -> Iterable[str]:
    """The lines, with the text of `lane` (row_lane's or sql_lane's, or None) before each in file order
    (output.lane_text.with_lane)."""
    if lane is None:
        return lines
    from binlog_spec.output import lane_text
    return lane_text.with_lane(lane, lines)


def sql_lane(schema, options, filters: FilterOptions, skipping: tuple = (None, None, None)):
    """The compiled lane of a forward `sql --sql2` script (output.sql.lane.sql_lane): a sink for read_events
    of the run's files (or piece_events of a --jobs piece), whose text `lines_with_lane(lane, lines)` puts among
    write_sql's lines; None where write_sql writes every line (--sql, --replace, the pure-Python core, filters
    no compiled loop decides). `skipping`: as row_lane's."""
    from binlog_spec.output import row_text
    from binlog_spec.output.sql import lane
    if not filters.active:
        return lane.sql_lane(schema, options)
    if filters.seek_only:       # (as row_lane's)
        return lane.sql_lane(schema, options, counted=skipping[1]) if skipping[1] is not None else None
    filtering = row_text.lane_filter(skipping[0], filters, skipping[1], skipping[2])
    return lane.sql_lane(schema, options, filtering) if filtering is not None else None


def rollback_lane(schema, options, filters: FilterOptions, piece=None):
    """The compiled lane of a `sql --sql2 --rollback` script (output.sql.lane.rollback_lane): a sink for
    read_events of the run's files, which spools the undo of the transactions it takes; write_sql(...,
    rollback=True, lane=it) writes the script. None where write_sql writes it all (filters, a --jobs piece,
    --sql, --replace, the pure-Python core)."""
    if filters.active or piece is not None:
        return None
    from binlog_spec.output.rollback.summary import UndoSpool
    from binlog_spec.output.sql import lane
    return lane.rollback_lane(schema, options, UndoSpool())


def unwritable(events: Iterable[Event], options, exact: bool = True, sink=None) -> list:
    """What keeps a SQL script of the events (write_sql) from being written whole, known before its
    first byte: one output.sql.writable.Problem per table and cause (column names unknown, row images a
    rollback or --replace needs whole), read off the TABLE_MAPs and the rows events' bitmaps. `options`:
    an output.sql.statements.SqlOptions (its `rollback` says which script). `exact`: see writable.problems.
    `sink`: unwritable_sink's, the one the events were read with."""
    from binlog_spec.output.sql.writable import problems
    return problems(events, options, exact, sink)


def unwritable_sink(schema=None):
    """The compiled loop that takes, straight from the reader's window (read_events' `sink`), the events an
    exact unwritable pass of unfiltered events (select_events with `schema`, no filter) needs no Event for;
    None with the pure-Python core (output.sql.writable.sink). Give it to unwritable too."""
    from binlog_spec.output.sql import writable
    return writable.sink(schema)


def may_be_unwritable(paths: list, options, read: ReadOptions = DEFAULT_OPTIONS) -> bool | None:
    """The quick answer of unwritable over whole files, from their TABLE_MAPs alone (the reader's scan
    mode: output.sql.writable.may_have_problems): False when a script of them can be written whole, True
    when it may not (ask unwritable), None when this cannot tell. `options`: an SqlOptions."""
    from binlog_spec.output.sql import writable
    return writable.may_have_problems(paths, options, read)


def write_binlog(events: Iterable[Event], out, options: WriteOptions | None = None, summary=None):
    """The events, or their inversion, as one binlog file written to `out` (output.rewriter.write_binlog;
    `options`: a WriteOptions). Returns the Rewriter, whose notes name what a rollback could not undo.
    `summary`: a rollback's, told what the undo restores (as write_sql's) before the file is written."""
    from binlog_spec.output import rewriter
    return rewriter.write_binlog(events, out, options if options is not None else WriteOptions(), summary)


def analyze(events: Iterable[Event], options: AnalyzeOptions | None = None, faults=None, analyzer=None):
    """The figures of the analysis report (analysis.collector.analyze; `options`: an AnalyzeOptions;
    `analyzer`: the collector.Analyzer to feed, the one a collector.sink counts for)."""
    from binlog_spec.analysis import collector
    return collector.analyze(events, options if options is not None else AnalyzeOptions(), faults, analyzer)


def analyzer(options: AnalyzeOptions | None = None):
    """A collector.Analyzer for analyze's `analyzer` (what analyzer_sink counts for)."""
    from binlog_spec.analysis import collector
    return collector.Analyzer(options if options is not None else AnalyzeOptions())


def analyzer_sink(analyzer, schema, gate=None, selection=None):
    """The compiled loop that counts for `analyzer` straight from the reader (read_events' `sink`), or
    None; the events must reach it unfiltered, or through select_events with `gate` (skip_gate's) and
    `selection`; `schema`: the run's SchemaTracker (collector.sink)."""
    from binlog_spec.analysis import collector
    return collector.sink(analyzer, schema, gate, selection)


def report_lines(result: dict, fmt: str = "text", tz=None, zone_name: str | None = None) -> Iterator[str]:
    """The analysis report of analyze's figures: "text", "markdown", "json" or "csv" (analysis.report).
    `tz` (with its `zone_name`): the zone of the text and markdown reports' times (UTC by default)."""
    from binlog_spec.analysis import report
    if tz is not None and fmt in ("text", "markdown"):
        result = report.in_zone(result, tz, zone_name)
    return report.FORMATS[fmt](result)


def write_report_csv(result: dict, folder: str) -> list[str]:
    """The analysis report as one CSV file per section into `folder` (analysis.report)."""
    from binlog_spec.analysis import report
    return report.write_csv_dir(result, folder)


def report_html(result: dict) -> str:
    """The analysis report as a self-contained HTML page with charts (analysis.html)."""
    from binlog_spec.analysis import html
    return html.render(result)


__all__ = ["ROWS_BODIES", "SQL_BODIES", "ANALYZE_BODIES", "EVENT_FORMATS", "ROW_FORMATS", "bodies_needed",
           "read_events", "select_events", "read_rows", "event_lines", "event_renderer", "event_json_sink",
           "event_json_lines", "row_lines", "row_renderer",
           "Base64Writer", "write_base64", "base64_compiled", "base64_joiner", "write_sql", "sql_header", "not_undone",
           "unwritable", "unwritable_sink", "may_be_unwritable", "write_binlog", "analyze", "analyzer", "analyzer_sink", "report_lines", "write_report_csv", "report_html",
           "conflict_check", "conflict_check_compiled", "skip_gate", "skipping_sink", "conflict_lines", "check_rollback",
           "ReadOptions", "ScriptOptions", "Base64Options", "WriteOptions", "AnalyzeOptions", "FilterOptions"]
#: What the command line needs besides (see the module doc).
__all__ += ["Event", "UNWRITABLE_QUICK_BODIES", "UNWRITABLE_BODIES", "STDIN", "display_name", "events_size",
            "local_zone", "zone_name", "filter_options", "parse_charset", "parse_datetime", "parse_gtid_set",
            "parse_names", "parse_position", "parse_server_id", "parse_zone", "schema_tracker", "Selection",
            "parse_ops", "parse_thread_ids",
            "Plan", "Split", "local_files", "plan_pieces", "piece_schema", "piece_events", "is_prefix"]
__all__ += list(remote.EXPORTS)
__all__ += ["THREAD_ID_BODIES", "check_thread_ids", "row_context", "statement_renderer", "history_renderer"]
__getattr__ = remote.export     # (PEP 562: the names of remote.EXPORTS, imported when first asked for)


# -- Row changes by transaction (stream.row_transactions), what an output per transaction reads ----------

def row_changes_by_transaction(events: Iterable[Event], schema_source=None,
                               warn: Callable[[str], None] | None = None) -> Iterator:
    """The row changes of the events, a frozen `TransactionChanges` per transaction (stream.row_transactions:
    `.transaction`, a TxIdentity: file, start_pos, gtid, xid, complete, commit_time, commit_time_source,
    original_commit_time; `.changes`, its RowChanges in order), given when the transaction ends; one the
    input ends inside comes last, with `complete` False and no XID. A row that does not decode raises its
    BinlogError after the changes before it. `schema_source`, `warn`: as read_rows' (events that
    select_events completed with a schema need none)."""
    from binlog_spec.rows.decoder import RowDecoder
    from binlog_spec.stream.row_transactions import by_transaction
    return by_transaction(events, RowDecoder(schema_source, warn))


__all__ += ["row_changes_by_transaction"]
#: The row filters (api.rows_filters).
__all__ += ["RowFilterError", "RowFilterOptions", "RowSelector", "row_filter_options", "row_filter_problem",
            "select_rows"]
