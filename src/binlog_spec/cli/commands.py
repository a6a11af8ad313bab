"""The commands: events, rows, sql (base64 script, statements, binlog output, rollback) and analyze,
each a thin shell that reads with the library and writes its output; exit codes."""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import sys
from typing import Callable, Iterable, Iterator, TextIO

from binlog_spec import api
from binlog_spec.errors import BinlogError, PositionError, RowFilterError, ThreadIdError, UsageError
from binlog_spec.cli import blocks, jobs
from binlog_spec.cli.progress import with_progress
from binlog_spec.cli import selection_notes
from binlog_spec.cli.arguments import (Flushed, analyze_options, base64_options, filter_options, read_options,
                                      remote_input, row_filter_options, row_filters_apply, schema_tracker,
                                      script_options, warner, write_options)
from binlog_spec.cli import rollback_check, sql_precheck
from binlog_spec.cli.exit_codes import (EXIT_BAD_INPUT, EXIT_CONFLICT, EXIT_INTERNAL, EXIT_IO,  # noqa: F401
                                        EXIT_INTERRUPTED, EXIT_OK, EXIT_UNWRITABLE, EXIT_USAGE, EXIT_WARNINGS)




#: The --format names of events and rows (api.event_renderer, api.row_renderer).
EVENT_FORMATS = api.EVENT_FORMATS
ROW_FORMATS = api.ROW_FORMATS


def _events(args: argparse.Namespace, err: TextIO, warnings: list[int], faults: list[BinlogError] | None = None,
            schema=None, bodies: frozenset[int] | None = None, sink=None, check=None, gate=None, selection=None,
            row_stage: bool = True):
    """The filtered events of the run's files; malformed bodies are counted and named on stderr. With
    `faults`, a broken file's error is appended to it and the next file is read (reader.read_events).
    With `schema` (a SchemaTracker), every event is seen by it before the filters (rows.decoder.observe_schema):
    the filters choose what is output, never what is learnt. `bodies`: the event types whose bodies the
    run reads (ReadOptions.parse_bodies; None: all). `sink`: what takes events straight from the reader
    (reader.BinlogReader), never seen here. `check`: a rollback's conflict check
    (rollback_check.conflict_check), which sees every event and reads the files to their end. `gate`: the
    sink's api.skip_gate, `selection`: the filters' api.Selection it counts in too (a new one by default).
    `row_stage`: the row filters (--key, --where) reduce the rows events (else the caller filters the changes)."""
    options = dataclasses.replace(read_options(args), parse_bodies=api.bodies_needed(bodies, args.filters))
    if check is not None and sink is None:
        sink = check.sink()     # the check's compiled loop past the window (output/rollback/_ccheck.pyx), or None

    def read():
        for ev in with_progress(_read(args, faults, options, sink), args.files, err):
            args.at = (ev.file, ev.pos)      # where an internal error is reported
            if ev.error is not None:
                warnings[0] += 1
                err.write(f"binlog-spec: warning: {ev.error}\n")
            yield ev

    def notify(kind: str, message: str) -> None:
        err.write(f"binlog-spec: {kind}: {message}\n")
    if schema is not None:
        for note in schema.notes:       # what --schema FILE could not give
            err.write(f"binlog-spec: warning: --schema {getattr(args, 'schema', '')}: {note}\n")
        schema.notes.clear()
    if selection is None and args.filters.active:
        selection = api.Selection()
    args.selection = selection      # reported by _command at the end
    return api.select_events(read(), args.filters, [api.display_name(f) for f in args.files], schema, notify,
                             warn=warner(err), check=check, selection=args.selection, gate=gate,
                             rows=getattr(args, "rows", None) if row_stage else None)


def _skipping(args: argparse.Namespace, check=None) -> tuple:
    """(gate, selection, sink) of a run whose filters a compiled loop decides (api.skip_gate,
    api.skipping_sink: it skips the transactions they drop); (None, selection, None) of one read by a seek alone
    (FilterOptions.seek_only: the lanes count in `selection` what they take after the position); or (None, None,
    None)."""
    if check is not None or args.filters.start_position is not None or getattr(args, "piece", None) is not None:
        seek_only = check is None and getattr(args, "piece", None) is None and args.filters.seek_only \
            and not args.remote         # (a server's logs are read from the position: no seek)
        return (None, api.Selection(), None) if seek_only else (None, None, None)
    gate = api.skip_gate(args.filters)
    selection = api.Selection() if gate is not None else None
    sink = api.skipping_sink(gate, args.filters, selection)
    return (gate, selection, sink) if sink is not None else (None, None, None)


def _read(args: argparse.Namespace, faults, options, sink=None):
    """The events of the run's files (seeking to --start-position: api.read_events), or of its piece
    (--jobs: cli.jobs; `sink` placed at the piece's range, as its file's positions)."""
    piece = getattr(args, "piece", None)
    if piece is not None:
        return api.piece_events(piece, options, sink)
    return api.read_events(args.files, options, faults, args.filters.start_position, sink)


class _Failed(Exception):
    """A run that ended with a failing exit code: its -o file is not kept."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


def _writes_text_output(args: argparse.Namespace) -> bool:
    """-o names the text output (sql --output-format binlog writes its own)."""
    return bool(args.output) and args.output != "-" and getattr(args, "output_format", "sql") != "binlog"


def _command(run: Callable[[argparse.Namespace, TextIO, TextIO], int]):
    """A command's shell: the zone and the filters validated first (exit 2 naming the option), -o written
    through a temporary file, a --start-position that is no event boundary reported (exit 2)."""
    @functools.wraps(run)
    def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        try:
            args.tz = args.timezone or api.local_zone()
            args.filters = filter_options(args)
            row_filters = row_filter_options(args)
            args.rows = api.RowSelector(row_filters) if row_filters.active else None
            if args.rows is not None:
                row_filters_apply(args)
            remote_input(args)      # -R: the files are the server's logs
            rollback_check.check_options(args)      # --minimal-update, --skip-conflicts
        except UsageError as exc:
            err.write(f"binlog-spec: error: {exc}\n")
            return EXIT_USAGE
        go = functools.partial(jobs.run, selection_notes.handing_back(run),      # --jobs N
                               report=functools.partial(_report_merged, args), precheck=rollback_check.parent_check)
        if args.remote:     # (one process: a server's logs are no files to cut)
            go = functools.partial(Flushed.running, run) if args.stop_never else run
            out = _text_output(out) if args.stop_never and args.command == "sql" else out   # (as run_sql's)
        with sql_precheck.rereadable_stdin(args):
            refused = sql_precheck.refuse_thread_ids(args, err)     # (--thread-id the files cannot answer)
            if refused is None:
                refused = sql_precheck.refuse(args, err)    # a script that cannot be written whole is not begun
            if refused is not None:
                return refused
            if sql_precheck.row_prepass_applies(args):
                problem = sql_precheck.row_filter_problem(args)     # (a table without a key: before the script)
                if problem is not None:
                    err.write(f"binlog-spec: error: {problem}\n")
                    return EXIT_USAGE
            try:
                if not _writes_text_output(args):
                    code = go(args, out, err)
                else:
                    with blocks.replacing(args.output) as f:
                        code = go(args, f, err)
                        if code >= EXIT_USAGE:
                            raise _Failed(code)
                if code < EXIT_USAGE:       # (a run that failed says why instead)
                    selection_notes.report(args, err)
                    selection_notes.report_rows_kept(args, err)
                return code
            except _Failed as failed:
                return failed.code
            except (PositionError, ThreadIdError, RowFilterError) as exc:
                out.flush()
                err.write(f"binlog-spec: error: {exc}\n")
                return EXIT_USAGE
            except KeyboardInterrupt:       # (-R: a second SIGINT or SIGTERM, or one without --stop-never)
                if not args.remote:
                    raise
                with contextlib.suppress(OSError, ValueError):
                    out.flush()
                return EXIT_INTERRUPTED
    return command


def _times_header(args: argparse.Namespace) -> str:
    return f"times in {api.zone_name(args.tz)}"


def _headed(header: str, lines: Iterable[str]) -> Iterator[str]:
    """The lines, the header before the first (no header when there is no line)."""
    for line in lines:
        yield header
        yield line
        break
    yield from lines


#: Lines joined into one write (a write call per line was the largest own cost of the base64 script).
_WRITE_BATCH = 256
#: ... or fewer, of this many characters: a compiled lane hands on strings of many lines (output/base64/_ctext.pyx),
#: and 256 of them made one string of tens of MB a write, UCS-4 when one character needed it (its memory, faults).
_WRITE_CHARS = 1 << 20


def _write_lines(lines: Iterable[str], out: TextIO) -> None:
    """Each line and a newline. A terminal gets each line as it comes; a file or pipe (block-buffered
    anyway) gets them joined into fewer writes, and the lines before a fault are written before the
    fault goes on."""
    if out.isatty():
        for line in lines:
            out.write(line)
            out.write("\n")
        return
    batch: list[str] = []
    chars = 0
    try:
        for line in lines:
            batch.append(line)
            chars += len(line)
            if len(batch) >= _WRITE_BATCH or chars >= _WRITE_CHARS:
                batch.append("")
                out.write("\n".join(batch))
                batch = []
                chars = 0
    finally:
        if batch:
            batch.append("")
            out.write("\n".join(batch))


@_command
def run_events(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    text = args.format == "text"
    render = api.event_renderer(args.format, args.tz)
    warnings = [0]
    piece = getattr(args, "piece", None)
    # JSON lines of every event: the compiled lane writes the common ones straight from the reader
    # (to UTF-8 output only: elsewhere a character the encoding lacks fails where the reference fails)
    lane = api.event_json_sink(args.files) if args.format == "jsonl" and not args.filters.active \
        and blocks.utf8(out) else None
    # under filters, the skipping loop drops the transactions they drop whole, with no Event for them
    gate, selection, sink = _skipping(args) if args.filters.active else (None, None, None)
    events = _events(args, err, warnings, sink=lane or sink, gate=gate, selection=selection)
    if piece is not None:       # --jobs: the FDE put in front of the piece is not its event
        events = (ev for ev in events if not api.is_prefix(piece, ev))
    if lane is not None:
        blocks.write_blocks(api.event_json_lines(events, lane), out, _write_lines, _WRITE_BATCH)
        return EXIT_WARNINGS if warnings[0] else EXIT_OK
    lines: Iterable[str] = (render(ev) for ev in events)
    if text:
        lines = _headed(f"# binlog-spec events: {_times_header(args)}", lines)
    _write_lines(lines, out)
    return EXIT_WARNINGS if warnings[0] else EXIT_OK


@_command
def run_rows(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with_statement = getattr(args, "with_statement", False)
    if with_statement and args.format != "jsonl":
        err.write("binlog-spec: error: --with-statement goes with --format jsonl\n")
        return EXIT_USAGE
    render = api.row_renderer(args.format, args.tz)
    header = f"# binlog-spec rows: {_times_header(args)}" if args.format in ("text", "history") else None
    tracker = schema_tracker(args)
    warnings = [0]
    gate, selection, sink = _skipping(args)
    # the lane skips what the filters drop (the sink's loop) and writes what they keep of the common transactions
    # (not with --with-statement: the statement's events are read by the ordinary path; with --key alone, the lines
    # of the rows it keeps; not with --where)
    lane = None if with_statement else \
        api.row_lane(args.format, tracker, args.filters, (gate, selection, sink), args.rows)
    events = _events(args, err, warnings, schema=tracker, bodies=api.ROWS_BODIES, sink=lane or sink, gate=gate,
                     selection=selection, row_stage=False)
    if with_statement:
        context = api.row_context()
        events, render = context.watch(events), api.statement_renderer(context)
    changes = api.read_rows(events, warn=warner(err))
    if args.rows is not None:       # (--key, --where: each change as the full output has it, its row index too)
        changes = filter(args.rows.keeps, changes)
    lines: Iterable[str] = (render(rc) for rc in changes)
    if lane is not None:        # (the lane's text: blocks of UTF-8 lines)
        blocks.write_blocks(api.lines_with_lane(lane, lines), out, _write_lines, _WRITE_BATCH)
    else:
        _write_lines(_headed(header, lines) if header else lines, out)
    return EXIT_WARNINGS if warnings[0] else EXIT_OK


@_command
def run_analyze(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.bucket <= 0 or args.top < 0 or args.big_trx_bytes < 0 or args.long_trx_seconds < 0:
        err.write("binlog-spec: error: --bucket must be > 0, and --top, --big-trx-bytes and "
                  "--long-trx-seconds >= 0\n")
        return EXIT_USAGE
    if args.output_dir and args.format != "csv":
        err.write("binlog-spec: error: --output-dir goes with --format csv\n")
        return EXIT_USAGE
    if args.output_dir and args.output:
        err.write("binlog-spec: error: -o/--output and --output-dir: give one\n")
        return EXIT_USAGE
    html = None
    if args.html:       # opened first: a path that cannot be written fails before the files are read
        try:
            html = open(args.html, "w", encoding="utf-8")
        except OSError as exc:
            err.write(f"binlog-spec: error: cannot write {args.html}: {exc.strerror}\n")
            return EXIT_USAGE
    options = analyze_options(args)
    warnings = [0]
    faults: list[BinlogError] = []
    schema = schema_tracker(args)
    analyzer = api.analyzer(options)
    # The compiled loop takes the events no filter, seek or piece needs to see; with time bounds alone, it
    # takes the transactions they keep and skips the others (api.skip_gate).
    whole = args.filters.start_position is None and getattr(args, "piece", None) is None and args.rows is None
    gate = api.skip_gate(args.filters) if whole and args.filters.active else None
    selection = api.Selection() if gate is not None else None
    sink = api.analyzer_sink(analyzer, schema, gate, selection) if whole and (gate or not args.filters.active) \
        else None
    try:
        events = _events(args, err, warnings, faults, schema=schema, bodies=api.ANALYZE_BODIES, sink=sink,
                         gate=gate if sink is not None else None, selection=selection)
        result = api.analyze(events, options, faults, analyzer)
        if html is not None:
            html.write(api.report_html(result))
    finally:
        if html is not None:
            html.close()
    if args.output_dir:
        api.write_report_csv(result, args.output_dir)
    else:
        _write_lines(api.report_lines(result, args.format, args.tz, api.zone_name(args.tz)), out)
    out.flush()
    # The report lists both too, in its "row_errors" and "faults" sections.
    for e in result["row_errors"][:MAX_LISTED_ROW_ERRORS]:
        err.write(f"binlog-spec: warning: {e['file']}: offset {e['offset']}: {e['event_type']}: {e['message']}\n")
    if result["summary"]["row_errors"] > MAX_LISTED_ROW_ERRORS:
        err.write(f"binlog-spec: warning: {result['summary']['row_errors'] - MAX_LISTED_ROW_ERRORS} more rows events "
                  "whose rows are not counted (the report's row_errors section lists them)\n")
    for exc in faults:
        err.write(f"binlog-spec: error: {exc}\n")
    if faults:
        return EXIT_BAD_INPUT
    return EXIT_WARNINGS if warnings[0] or result["summary"]["row_errors"] else EXIT_OK


#: analyze: the rows events whose rows could not be counted that get a line on stderr.
MAX_LISTED_ROW_ERRORS = 20


def _text_output(out: TextIO) -> TextIO:
    """stdout writes the script's bytes as they are, whatever the locale: UTF-8 text, and the bytes of
    statements logged in another character set back as they were (surrogateescape)."""
    if out is sys.stdout and hasattr(out, "reconfigure"):
        try:
            out.reconfigure(encoding="utf-8", errors="surrogateescape")
        except (ValueError, OSError):
            pass
    return out


@_command
def run_sql(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.output_format == "binlog":
        return _run_binlog(args, err)
    if args.commented or args.executable:
        return _run_statements(args, out, err)
    return _run_base64(args, out, err)


def _run_base64(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    warnings = [0]
    schema = schema_tracker(args) if args.verbose or args.schema else None
    check = rollback_check.conflict_check(args, schema is not None)
    if check is not None:
        out = rollback_check.Gate(_text_output(out), check, args.force)
    options = dataclasses.replace(write_options(args), renumber_gtids=False)  # no GTIDs are written
    part, continued = None, None
    piece = getattr(args, "piece", None)
    if piece is not None:       # --jobs: the piece's part of the script (first, last, flavour)
        part = (args.piece_index == 0, args.piece_index == args.piece_count - 1, args.mariadb)
        continued = api.display_name(args.files[0]) if args.piece_index else None
    summary = functools.partial(rollback_check.undo_summary, args, check, err) if args.rollback else None
    with api.Base64Writer(base64_options(args), options, part, continued, summary) as writer:
        # The compiled lane writes the events no seek, schema, check or row filter needs to see; under filters,
        # the skipping loop drops the transactions they drop whole, with no Event for them, and the lane writes
        # those they keep whole (where the loop decides the filters).
        plain = args.filters.start_position is None and piece is None and schema is None and check is None \
            and args.rows is None
        gate, selection, sink = _skipping(args, check) if args.filters.active else (None, None, None)
        lane = writer.sink(args.filters, (gate, selection, sink)) if plain else None
        events = _events(args, err, warnings, schema=schema, check=check, sink=lane or sink, gate=gate,
                         selection=selection)
        _write_lines(writer.lines(events, lane), _text_output(out))
        _report_not_undone(writer.not_undone(), err)
    ending = writer.ending()
    if not jobs.hand_back(args, "base64", ending):
        _report_base64(ending, err)
    return rollback_check.finish_check(args, check, err, EXIT_WARNINGS if warnings[0] or writer.row_errors else EXIT_OK)


def _report_base64(ending, err: TextIO) -> None:
    for note in ending.lines():
        err.write(f"binlog-spec: warning: {note}\n")
    for exc in ending.row_errors:      # -v: its BINLOG block is written, its ### lines are not
        err.write(f"binlog-spec: warning: {exc}\n")


def _run_binlog(args: argparse.Namespace, err: TextIO) -> int:
    for flag, given in (("--sql", args.commented), ("--sql2", args.executable), ("--verbose", args.verbose),
                        ("--complete-insert", args.complete_insert), ("--replace", args.replace)):
        if given:
            err.write(f"binlog-spec: error: {flag} does not apply to --output-format binlog\n")
            return EXIT_USAGE
    if not args.output or args.output == "-":
        err.write("binlog-spec: error: --output-format binlog needs -o FILE\n")
        return EXIT_USAGE
    warnings = [0]
    check = rollback_check.conflict_check(args, False)
    events = _events(args, err, warnings, check=check)
    options = dataclasses.replace(write_options(args), skip_gtids=args.skip_gtids)
    try:
        with blocks.replacing(args.output, binary=True) as f:     # a binlog cut short would look whole
            rewriter = api.write_binlog(events, f if check is None else rollback_check.Gate(f, check, args.force), options,
                                        functools.partial(rollback_check.undo_summary, args, check, err)
                                        if args.rollback else None)
            if check is not None and not (args.force or not check.count):
                raise _Failed(EXIT_CONFLICT)                # no file: nothing of the undo is written
    except _Failed:
        pass
    with rewriter:
        _report_not_undone(api.not_undone(rewriter), err)
    return rollback_check.finish_check(args, check, err, EXIT_WARNINGS if warnings[0] else EXIT_OK)


def _report_not_undone(not_undone, err: TextIO) -> None:
    """A rollback's statements that could not be undone, on stderr (stdout holds only the undo): the
    count of each kind, then the first few with their positions."""
    if not not_undone.count:
        return
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(not_undone.kinds.items()))
    err.write(f"binlog-spec: note: {not_undone.count} statements not undone (only row events can be "
              f"inverted): {counts}\n")
    for where, statement in not_undone.first:
        err.write(f"binlog-spec: note: not undone: {where}: {statement}\n")
    if not_undone.count > len(not_undone.first):
        err.write(f"binlog-spec: note: ... and {not_undone.count - len(not_undone.first)} more\n")


def _report_merged(args: argparse.Namespace, key: str, value, err: TextIO) -> None:
    """--jobs: what the pieces handed back (cli.jobs.hand_back), merged, reported as one process does."""
    if key == "selection":
        args.selection = value          # (reported by _command at the end, with the exit code)
    elif key == "not_undone":
        _report_not_undone(value, err)
    elif key == rollback_check.SUMMARY:
        rollback_check.report_summary(args, value, err)
    elif key == "base64":
        _report_base64(value, err)


def _run_statements(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    tracker = schema_tracker(args)
    opts = script_options(args)
    warnings = [0]
    check = rollback_check.conflict_check(args, True) if args.rollback else None
    gate, selection, sink = _skipping(args, check)
    if args.rows is not None:       # (row filters: the Python path, the reference)
        lane = None
    elif args.rollback:
        lane = None if sink is not None or check is not None else \
            api.rollback_lane(tracker, opts, args.filters, getattr(args, "piece", None))
    else:       # (under filters, as run_rows's)
        lane = api.sql_lane(tracker, opts, args.filters, (gate, selection, sink))
    events = _events(args, err, warnings, schema=tracker, bodies=api.SQL_BODIES, check=check, sink=lane or sink,
                     gate=gate, selection=selection)

    def refused(exc: BinlogError) -> None:     # a row left out of the script (a comment in its place)
        warnings[0] += 1
        err.write(f"binlog-spec: warning: {exc}: row not written\n")
    if args.rollback:
        not_undone = api.not_undone()
        target = _text_output(out) if check is None else \
            rollback_check.Gate(_text_output(out), check, args.force or args.skip_conflicts)
        lines = api.write_sql(events, opts, rollback=True, not_undone=not_undone, warn=warner(err), refused=refused,
                              lane=lane, skip=check if args.skip_conflicts else None,
                              summary=functools.partial(rollback_check.undo_summary, args, check, err))
        if lane is not None:    # (its blocks: UTF-8 lines)
            blocks.write_blocks(lines, target, _write_lines, _WRITE_BATCH)
        else:
            _write_lines(lines, target)
        if not jobs.hand_back(args, "not_undone", not_undone):     # --jobs: the parent reports them all
            _report_not_undone(not_undone, err)
        return rollback_check.finish_check(args, check, err, EXIT_WARNINGS if warnings[0] else EXIT_OK)
    else:
        lines = api.write_sql(events, opts, warn=warner(err), refused=refused)
        if lane is not None:    # (the lane's text: blocks of UTF-8 lines)
            blocks.write_blocks(api.lines_with_lane(lane, lines), _text_output(out), _write_lines, _WRITE_BATCH)
        else:
            _write_lines(lines, _text_output(out))
    return EXIT_WARNINGS if warnings[0] else EXIT_OK
