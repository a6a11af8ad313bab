"""The `binlog-spec` command: a thin shell over the library API.

Exit codes:
    0  every event was read
    1  read to the end, but some event bodies did not match their layout (warnings on stderr)
    2  bad command line
    3  a binlog is broken (not a binlog, truncated, bad checksum, impossible size); the events
       before the fault were printed
    4  a file could not be opened or read
   70  an internal error (a bug): `binlog-spec: internal error at FILE offset N: ...`, and how to
       report it; the traceback only with --debug
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from datetime import datetime, timezone
from typing import Callable, Iterable, TextIO

import binlog_spec
from binlog_spec import jsonenc, rows, summary
from binlog_spec.errors import BinlogError
from binlog_spec.filters import FilterOptions, filter_events
from binlog_spec.gtidset import GtidSet, GtidSetError
from binlog_spec.progress import with_progress
from binlog_spec.event import Event
from binlog_spec.options import ReadOptions

EXIT_OK = 0
EXIT_WARNINGS = 1
EXIT_USAGE = 2
EXIT_BAD_INPUT = 3
EXIT_IO = 4
EXIT_INTERNAL = 70      # EX_SOFTWARE (sysexits.h)

#: --format name -> event renderer.
EVENT_FORMATS: dict[str, Callable[[Event], str]] = {
    "text": summary.event_line,
    "jsonl": lambda ev: jsonenc.dumps(ev.to_dict()),
}


#: --format name -> row change renderer.
ROW_FORMATS: dict[str, Callable[[rows.RowChange], str]] = {
    "text": rows.row_line,
    "jsonl": lambda rc: jsonenc.dumps(rc.to_dict()),
}


def _read_options(args: argparse.Namespace) -> ReadOptions:
    return ReadOptions(verify_checksums=not args.no_verify_checksums,
                       expand_payloads=not args.no_expand_payloads,
                       strict=args.strict)


def _datetime(text: str) -> datetime:
    """'YYYY-MM-DD[ HH:MM:SS]' in UTC (binlog timestamps are UTC), or ISO 8601 with an offset."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date and time: {text!r} (use 'YYYY-MM-DD HH:MM:SS')") from None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _gtid_set(text: str) -> GtidSet:
    try:
        return GtidSet.parse(text)
    except GtidSetError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_filter_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("filters", "time, position, GTID and server-id filters keep or drop whole "
                             "transactions; schema and table filters drop rows and statements, and a transaction "
                             "they leave with nothing but its BEGIN/COMMIT")
    g.add_argument("--database", "--databases", "-d", dest="databases", action="append", default=[],
                   metavar="GLOB", help="only these schemas (repeatable)")
    g.add_argument("--exclude-database", dest="exclude_databases", action="append", default=[], metavar="GLOB")
    g.add_argument("--table", "--tables", "-t", dest="tables", action="append", default=[],
                   metavar="DB.TABLE", help="only these tables, as db.table globs (repeatable)")
    g.add_argument("--exclude-table", dest="exclude_tables", action="append", default=[], metavar="DB.TABLE")
    g.add_argument("--include-gtids", type=_gtid_set, metavar="SET",
                   help="uuid[:tag]:1-5,... or MariaDB domain-server-seq[-last],...")
    g.add_argument("--exclude-gtids", type=_gtid_set, metavar="SET")
    g.add_argument("--server-id", dest="server_ids", action="append", type=int, default=[], metavar="ID")
    g.add_argument("--exclude-server-id", dest="exclude_server_ids", action="append", type=int, default=[],
                   metavar="ID")
    g.add_argument("--start-datetime", type=_datetime, metavar="TIME", help="UTC unless an offset is given")
    g.add_argument("--stop-datetime", type=_datetime, metavar="TIME")
    g.add_argument("--start-position", type=int, metavar="POS", help="in the first file")
    g.add_argument("--stop-position", type=int, metavar="POS", help="in the last file")


def _filter_options(args: argparse.Namespace) -> FilterOptions:
    return FilterOptions(
        databases=tuple(args.databases), exclude_databases=tuple(args.exclude_databases),
        tables=tuple(args.tables), exclude_tables=tuple(args.exclude_tables),
        include_gtids=args.include_gtids, exclude_gtids=args.exclude_gtids,
        server_ids=frozenset(args.server_ids), exclude_server_ids=frozenset(args.exclude_server_ids),
        start_datetime=args.start_datetime, stop_datetime=args.stop_datetime,
        start_position=args.start_position, stop_position=args.stop_position)


def _events(args: argparse.Namespace, err: TextIO, warnings: list[int], faults: list[BinlogError] | None = None):
    """The filtered events of the run's files; malformed bodies are counted and named on stderr. With
    `faults`, a broken file's error is appended to it and the next file is read (reader.read_events)."""
    def read():
        for ev in with_progress(binlog_spec.read_events(args.files, _read_options(args), faults), args.files, err):
            args.at = (ev.file, ev.pos)      # where an internal error is reported
            if ev.error is not None:
                warnings[0] += 1
                err.write(f"binlog-spec: warning: {ev.error}\n")
            yield ev
    return filter_events(read(), _filter_options(args), args.files)


def _add_read_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="binlog files (plain or .gz), read in order")
    p.add_argument("--strict", action="store_true",
                   help="stop at an event whose body does not match its layout (default: warn and go on)")
    p.add_argument("--no-verify-checksums", action="store_true", help="do not check CRC32 checksums")
    p.add_argument("--no-expand-payloads", action="store_true",
                   help="do not list the events inside TRANSACTION_PAYLOAD_EVENTs")
    _add_filter_arguments(p)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="binlog-spec", description="Read MySQL/MariaDB binary logs offline.")
    ap.add_argument("--version", action="version", version=f"%(prog)s {binlog_spec.__version__}")
    ap.add_argument("--debug", action="store_true", help="on an internal error, print the Python traceback")
    sub = ap.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("events", help="list every event", description="List every event, one per line.")
    _add_read_arguments(ev)
    ev.add_argument("--format", choices=sorted(EVENT_FORMATS), default="text")
    ev.set_defaults(run=run_events)
    rw = sub.add_parser("rows", help="decode row events into row changes",
                        description="Decode every row event into inserts, updates and deletes with typed values.")
    _add_read_arguments(rw)
    rw.add_argument("--format", choices=sorted(ROW_FORMATS), default="text")
    rw.add_argument("--schema", metavar="FILE",
                    help="CREATE TABLE statements (mysqldump --no-data) for column names and signs the binlog lacks")
    rw.add_argument("--schema-database", metavar="DB", default="",
                    help="database of the unqualified tables in --schema")
    rw.set_defaults(run=run_rows)

    sq = sub.add_parser("sql", help="write the events as a replayable script or binlog, or their undo",
                        description="Write the events as mysqlbinlog does (BINLOG base64 blocks, the default), "
                                    "as SQL statements (--sql, --sql2), or as a binlog file "
                                    "(--output-format binlog); with --rollback, what undoes their row changes.")
    _add_read_arguments(sq)
    mode = sq.add_mutually_exclusive_group()
    mode.add_argument("--sql", dest="commented", action="store_true",
                      help="every row change as a commented statement, for reading")
    mode.add_argument("--sql2", "--plain", dest="executable", action="store_true", help="executable SQL")
    sq.add_argument("--output-format", choices=["sql", "binlog"], default="sql",
                    help="sql: a script for the mysql client (default: BINLOG base64 blocks, as mysqlbinlog "
                         "writes); binlog: a binlog file (needs -o)")
    sq.add_argument("--complete-insert", action="store_true", help="INSERTs with a column list (--sql2)")
    sq.add_argument("--replace", action="store_true", help="REPLACE for inserts and updates (--sql2)")
    sq.add_argument("--rollback", action="store_true",
                    help="undo the changes: last transaction first, images swapped")
    sq.add_argument("--rewrite-db", action="append", default=[], metavar="OLD->NEW", type=_rewrite,
                    help="rename a schema (repeatable)")
    sq.add_argument("-v", "--verbose", action="count", default=0,
                    help="base64 script: the rows as ### pseudo-SQL under each BINLOG block (-vv: with types)")
    sq.add_argument("--skip-gtids", action="store_true",
                    help="no GTIDs: GTID_NEXT='AUTOMATIC' (MySQL), no gtid_seq_no (MariaDB); in a binlog "
                         "output the GTID events are left out (a MariaDB one becomes BEGIN)")
    sq.add_argument("--schema", metavar="FILE", help="CREATE TABLE statements for names the binlog lacks")
    sq.add_argument("--schema-database", metavar="DB", default="")
    sq.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    sq.set_defaults(run=run_sql)

    an = sub.add_parser("analyze", help="report on event types, tables, transactions, DDL and a timeline",
                        description="Analyze the files together: events and bytes per event type, rows and "
                                    "bytes per table and operation, the biggest and longest transactions, "
                                    "DDL statements and a timeline. Rows are counted without decoding values.")
    _add_read_arguments(an)
    an.add_argument("--format", choices=["text", "markdown", "json", "csv"], default="text")
    an.add_argument("--output-dir", metavar="DIR", help="--format csv: one CSV file per section into DIR")
    an.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report with charts")
    an.add_argument("--sort", choices=["bytes", "rows", "events", "name", "inserts", "updates", "deletes"],
                    default="bytes", help="order of the tables section (default: bytes)")
    an.add_argument("--top", type=int, default=20, metavar="N", help="top N transactions (default 20)")
    an.add_argument("--big-trx-bytes", type=int, default=1 << 20, metavar="BYTES",
                    help="flag transactions bigger than this (default 1 MiB)")
    an.add_argument("--long-trx-seconds", type=float, default=10.0, metavar="S",
                    help="flag transactions longer than this (default 10 s)")
    an.add_argument("--bucket", type=int, default=60, metavar="SECONDS",
                    help="timeline interval in seconds (default 60)")
    an.set_defaults(run=run_analyze)
    return ap


def _write_lines(lines: Iterable[str], out: TextIO) -> None:
    for line in lines:
        out.write(line)
        out.write("\n")


def run_events(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    render = EVENT_FORMATS[args.format]
    warnings = [0]
    _write_lines((render(ev) for ev in _events(args, err, warnings)), out)
    return EXIT_WARNINGS if warnings[0] else EXIT_OK


def run_rows(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from binlog_spec.schema import SchemaTracker

    render = ROW_FORMATS[args.format]
    tracker = SchemaTracker.from_file(args.schema, args.schema_database) if args.schema else SchemaTracker()
    warnings = [0]
    _write_lines((render(rc) for rc in rows.read_rows(_events(args, err, warnings), tracker)), out)
    return EXIT_WARNINGS if warnings[0] else EXIT_OK


def run_analyze(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from binlog_spec import analyze, report, report_html

    if args.bucket <= 0 or args.top < 0 or args.big_trx_bytes < 0 or args.long_trx_seconds < 0:
        err.write("binlog-spec: error: --bucket must be > 0, and --top, --big-trx-bytes and "
                  "--long-trx-seconds >= 0\n")
        return EXIT_USAGE
    if args.output_dir and args.format != "csv":
        err.write("binlog-spec: error: --output-dir goes with --format csv\n")
        return EXIT_USAGE
    html = None
    if args.html:       # opened first: a path that cannot be written fails before the files are read
        try:
            html = open(args.html, "w", encoding="utf-8")
        except OSError as exc:
            err.write(f"binlog-spec: error: cannot write {args.html}: {exc.strerror}\n")
            return EXIT_USAGE
    options = analyze.AnalyzeOptions(top=args.top, sort=args.sort, bucket_s=args.bucket,
                                     big_trx_bytes=args.big_trx_bytes, long_trx_seconds=args.long_trx_seconds)
    warnings = [0]
    faults: list[BinlogError] = []
    try:
        result = analyze.analyze(_events(args, err, warnings, faults), options, faults)
        if html is not None:
            html.write(report_html.render(result))
    finally:
        if html is not None:
            html.close()
    if args.output_dir:
        report.write_csv_dir(result, args.output_dir)
    else:
        _write_lines(report.FORMATS[args.format](result), out)
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


def _rewrite(text: str) -> tuple[str, str]:
    old, sep, new = text.partition("->")
    if not sep or not old or not new:
        raise argparse.ArgumentTypeError(f"expected 'old->new', got {text!r}")
    return old, new


def _text_output(out: TextIO) -> TextIO:
    """stdout writes the script's bytes as they are, whatever the locale: UTF-8 text, and the bytes of
    statements logged in another character set back as they were (surrogateescape)."""
    if out is sys.stdout and hasattr(out, "reconfigure"):
        try:
            out.reconfigure(encoding="utf-8", errors="surrogateescape")
        except (ValueError, OSError):
            pass
    return out


def run_sql(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.output_format == "binlog":
        return _run_binlog(args, err)
    if args.commented or args.executable:
        return _run_statements(args, out, err)
    return _run_base64(args, out, err)


def _write_options(args: argparse.Namespace):
    from binlog_spec.binwriter import WriteOptions
    return WriteOptions(rewrite_db=dict(args.rewrite_db), rollback=args.rollback,
                        payloads_expanded=not args.no_expand_payloads)


def _run_base64(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from binlog_spec import base64script
    from binlog_spec.binwriter import Rewriter

    warnings = [0]
    events = _events(args, err, warnings)
    # A rollback is a new transaction: replaying it under the original GTIDs would be skipped (MySQL)
    # or reuse them (MariaDB), so its GTIDs are always left to the server.
    opts = base64script.Base64Options(verbose=args.verbose, skip_gtids=args.skip_gtids or args.rollback)
    options = dataclasses.replace(_write_options(args), renumber_gtids=False)  # no GTIDs are written
    with Rewriter(options) as rewriter:
        printer = base64script.Base64Script(opts, rewriter)
        lines = printer.lines(rewriter.items(events))
        if args.output:
            with open(args.output, "w", encoding="utf-8", errors="surrogateescape") as f:
                _write_lines(lines, f)
        else:
            _write_lines(lines, _text_output(out))
    for note in printer.warnings:
        err.write(f"binlog-spec: warning: {note}\n")
    return EXIT_WARNINGS if warnings[0] else EXIT_OK


#: Statements a binlog rollback could not undo, named on stderr before a count of the rest.
_MAX_NOTES = 20


def _run_binlog(args: argparse.Namespace, err: TextIO) -> int:
    from binlog_spec import binwriter

    for flag, given in (("--sql", args.commented), ("--sql2", args.executable), ("--verbose", args.verbose),
                        ("--complete-insert", args.complete_insert), ("--replace", args.replace)):
        if given:
            err.write(f"binlog-spec: error: {flag} does not apply to --output-format binlog\n")
            return EXIT_USAGE
    if not args.output or args.output == "-":
        err.write("binlog-spec: error: --output-format binlog needs -o FILE\n")
        return EXIT_USAGE
    warnings = [0]
    events = _events(args, err, warnings)
    options = dataclasses.replace(_write_options(args), skip_gtids=args.skip_gtids)
    try:
        with open(args.output, "wb") as f:
            rewriter = binwriter.write_binlog(events, f, options)
    except BinlogError:
        os.unlink(args.output)  # a binlog cut short would look whole
        raise
    with rewriter:
        for k, line in enumerate(rewriter.skipped.lines()):
            if k == _MAX_NOTES:
                err.write(f"binlog-spec: note: ... and {rewriter.skipped.count - k} more statements not undone\n")
                break
            err.write(f"binlog-spec: note: not undone (a statement; only row events can be inverted): {line}\n")
    return EXIT_WARNINGS if warnings[0] else EXIT_OK


def _run_statements(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from binlog_spec import sqlscript
    from binlog_spec.schema import SchemaTracker
    from binlog_spec.sqlgen import SqlOptions

    tracker = SchemaTracker.from_file(args.schema, args.schema_database) if args.schema else SchemaTracker()
    opts = sqlscript.ScriptOptions(
        sql=SqlOptions(complete_insert=args.complete_insert, replace=args.replace,
                       rewrite_db=dict(args.rewrite_db)),
        commented=args.commented)
    warnings = [0]
    events = _events(args, err, warnings)
    script = (sqlscript.rollback if args.rollback else sqlscript.forward)(events, opts, tracker)
    if args.output:
        with open(args.output, "w", encoding="utf-8", errors="surrogateescape") as f:
            _write_lines(script, f)
    else:
        _write_lines(script, _text_output(out))
    return EXIT_WARNINGS if warnings[0] else EXIT_OK


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        return args.run(args, out, err)
    except BinlogError as exc:
        out.flush()
        err.write(f"binlog-spec: error: {exc}\n")
        return EXIT_BAD_INPUT
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            return EXIT_OK
        out.flush()
        err.write(f"binlog-spec: error: {exc.filename or ''}: {exc.strerror or exc}\n")
        return EXIT_IO
    except Exception as exc:     # noqa: BLE001 - anything else is a bug: one line, not a traceback
        try:
            out.flush()
        except Exception:  # noqa: BLE001, S110
            pass
        at = getattr(args, "at", None)
        where = f" at {at[0]} offset {at[1]}" if at else ""
        err.write(f"binlog-spec: internal error{where}: {type(exc).__name__}: {exc}\n")
        if args.debug:
            import traceback
            traceback.print_exception(exc, file=err)
        else:
            err.write("binlog-spec: this is a bug: please report it with the command line, this message and, "
                      "if you can, the file (or the event at that offset); --debug shows the traceback\n")
        return EXIT_INTERNAL


def entry() -> None:
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    sys.exit(code)


if __name__ == "__main__":
    entry()
