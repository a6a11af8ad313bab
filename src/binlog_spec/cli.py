"""The `binlog-spec` command: a thin shell over the library API.

Exit codes:
    0  every event was read
    1  read to the end, but some event bodies did not match their layout, or some rows could not be
       counted (analyze), decoded (sql -v) or written exactly (sql --sql/--sql2): warnings on stderr
    2  bad command line (a message names the option), a --start-position that is no event boundary, or a
       --schema file with no CREATE TABLE
    3  a binlog is broken (not a binlog, truncated, bad checksum, impossible size); the events
       before the fault were printed
    4  a file could not be opened or read
   70  an internal error (a bug): `binlog-spec: internal error at FILE offset N: ...`, and how to
       report it; the traceback only with --debug
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import os
import sys
import tempfile
from typing import Callable, Iterable, Iterator, TextIO

import binlog_spec
from binlog_spec import jsonenc, rows, summary
from binlog_spec import timezones
from binlog_spec.errors import BinlogError, PositionError, SchemaFileError, UsageError
from binlog_spec.filters import FilterOptions, filter_events
from binlog_spec.gtidset import GtidPosition, GtidSet, GtidSetError
from binlog_spec.progress import with_progress
from binlog_spec.event import Event
from binlog_spec.options import ReadOptions, parse_size
from binlog_spec.reader import display_name

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


def _position(text: str) -> int | GtidPosition:
    """A byte offset (>= 0), or a MariaDB GTID position (domain-server-seq[,...]), as mariadb-binlog takes."""
    t = text.strip()
    if t.isdigit():
        return int(t)
    if t.startswith("-") and t[1:].isdigit():
        raise argparse.ArgumentTypeError(f"a position cannot be negative: {text}")
    try:
        return GtidPosition.parse(t)
    except GtidSetError:
        raise argparse.ArgumentTypeError(f"not a byte position or a MariaDB GTID (domain-server-seq): {text!r}") \
            from None


def _server_id(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a server id: {text!r}") from None
    if not 0 <= value <= 0xFFFFFFFF:
        raise argparse.ArgumentTypeError(f"a server id is 0 to 4294967295, not {value}")
    return value


def _size(text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _zone(text: str):
    try:
        return timezones.parse_zone(text)
    except timezones.ZoneError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _names(values: list[str]) -> tuple[str, ...]:
    """Repeated options and comma-separated lists, flattened."""
    return tuple(n.strip() for v in values for n in v.split(",") if n.strip())


def _gtid_set(text: str) -> GtidSet:
    try:
        return GtidSet.parse(text)
    except GtidSetError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_filter_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "filters",
        "Time, position, GTID and server-id filters keep or drop whole transactions, decided at the "
        "transaction's first event (its GTID event, or BEGIN); control events (FORMAT_DESCRIPTION, ROTATE, "
        "GTID_LIST, ...) take no part. Schema and table filters drop rows events and statements; a "
        "transaction they leave with nothing but its BEGIN/COMMIT is dropped. Names and globs may be "
        "repeated or comma separated.")
    g.add_argument("--database", "--databases", "-d", dest="databases", action="append", default=[],
                   metavar="GLOB", help="only these schemas: rows events by their TABLE_MAP's schema, statements "
                   "by their default database (as mysqlbinlog's -d)")
    g.add_argument("--exclude-database", dest="exclude_databases", action="append", default=[], metavar="GLOB",
                   help="not these schemas (as --database)")
    g.add_argument("--table", "--tables", "-t", dest="tables", action="append", default=[],
                   metavar="[DB.]TABLE",
                   help="only these tables (db.table, or table in any schema; globs): rows events by their "
                        "TABLE_MAP, statement-based INSERT/REPLACE/UPDATE/DELETE by the tables they write (a "
                        "statement that cannot be parsed is kept, with a warning); DDL is not table-filtered. "
                        "Not mariadb-binlog's -t (--to-last-log)")
    g.add_argument("--exclude-table", dest="exclude_tables", action="append", default=[], metavar="[DB.]TABLE",
                   help="not these tables (as --table)")
    g.add_argument("--include-gtids", type=_gtid_set, metavar="SET",
                   help="only transactions with these GTIDs: uuid[:tag]:1-5,... or MariaDB domain-server-seq[-last],...")
    g.add_argument("--exclude-gtids", type=_gtid_set, metavar="SET", help="not the transactions with these GTIDs")
    g.add_argument("--server-id", dest="server_ids", action="append", type=_server_id, default=[], metavar="ID",
                   help="only transactions whose first event has this server id (repeatable)")
    g.add_argument("--exclude-server-id", dest="exclude_server_ids", action="append", type=_server_id, default=[],
                   metavar="ID", help="not the transactions of this server id")
    g.add_argument("--start-datetime", metavar="TIME",
                   help="transactions whose first event is at or after TIME: 'YYYY-MM-DD HH:MM:SS[.ffffff]', "
                        "'YYYY-MM-DD', 'YYYYMMDDHHMMSS', in the local time zone (TZ, or --timezone) unless it "
                        "ends with Z or an offset (+08:00)")
    g.add_argument("--stop-datetime", metavar="TIME", help="transactions whose first event is before TIME (as "
                   "--start-datetime)")
    g.add_argument("--start-position", type=_position, metavar="POS",
                   help="from the event at byte POS of the first file (it must be an event's position; inside a "
                        "transaction, that transaction is kept whole), or after a MariaDB GTID position "
                        "(domain-server-seq,...)")
    g.add_argument("--stop-position", type=_position, metavar="POS",
                   help="only what lies wholly before byte POS of the last file (a transaction POS cuts, between "
                        "its events or inside one, is left out), or up to a MariaDB GTID position, inclusive")


def _filter_options(args: argparse.Namespace) -> FilterOptions:
    """The filters of the command line, validated; raises UsageError naming the option."""
    tz = args.tz
    times = {}
    for name in ("start_datetime", "stop_datetime"):
        text = getattr(args, name)
        try:
            times[name] = timezones.parse_datetime(text, tz) if text else None
        except ValueError as exc:
            raise UsageError(f"--{name.replace('_', '-')}: {exc}") from None
    if times["start_datetime"] and times["stop_datetime"] and times["stop_datetime"] < times["start_datetime"]:
        raise UsageError(f"--stop-datetime {args.stop_datetime} is before --start-datetime {args.start_datetime}")
    start, stop = args.start_position, args.stop_position
    if (isinstance(start, int) and isinstance(stop, int) and len(args.files) == 1 and stop < start):
        raise UsageError(f"--stop-position {stop} is before --start-position {start}")
    return FilterOptions(
        databases=_names(args.databases), exclude_databases=_names(args.exclude_databases),
        tables=_names(args.tables), exclude_tables=_names(args.exclude_tables),
        include_gtids=args.include_gtids, exclude_gtids=args.exclude_gtids,
        server_ids=frozenset(args.server_ids), exclude_server_ids=frozenset(args.exclude_server_ids),
        start_datetime=times["start_datetime"], stop_datetime=times["stop_datetime"],
        start_position=start if isinstance(start, int) else None,
        stop_position=stop if isinstance(stop, int) else None,
        start_gtid=start if isinstance(start, GtidPosition) else None,
        stop_gtid=stop if isinstance(stop, GtidPosition) else None)


def _events(args: argparse.Namespace, err: TextIO, warnings: list[int], faults: list[BinlogError] | None = None,
            schema=None):
    """The filtered events of the run's files; malformed bodies are counted and named on stderr. With
    `faults`, a broken file's error is appended to it and the next file is read (reader.read_events).
    With `schema` (a SchemaTracker), every event is seen by it before the filters (rows.observe_schema):
    the filters choose what is output, never what is learnt."""
    def read():
        for ev in with_progress(binlog_spec.read_events(args.files, _read_options(args), faults), args.files, err):
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
    events = read() if schema is None else rows.observe_schema(read(), schema, _warner(err))
    return filter_events(events, args.filters, [display_name(f) for f in args.files], notify)


def _schema(args: argparse.Namespace):
    """The schema the run starts with: --schema FILE (the tables at the start of the first file), or
    none; --default-charset for text columns no DDL gives a charset."""
    from binlog_spec.schema import SchemaTracker
    charset = getattr(args, "default_charset", None)
    database = getattr(args, "schema_database", "")
    if getattr(args, "schema", None):
        return SchemaTracker.from_file(args.schema, database, charset)
    return SchemaTracker(database, charset)


def _warner(err: TextIO) -> Callable[[str], None]:
    return lambda message: err.write(f"binlog-spec: warning: {message}\n")


def _charset(text: str) -> int:
    from binlog_spec.values import charset_collation
    collation = charset_collation(text)
    if collation is None:
        raise argparse.ArgumentTypeError(f"unknown character set or collation: {text!r}")
    return collation


def _add_schema_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--schema", metavar="FILE",
                   help="CREATE TABLE statements (mysqldump --no-data) of the tables as they were at the start of "
                        "the first file, for the column names, signs and charsets the binlog lacks")
    p.add_argument("--schema-database", metavar="DB", default="",
                   help="database of the unqualified tables in --schema")
    p.add_argument("--default-charset", type=_charset, metavar="NAME",
                   help="charset of the text columns that neither the binlog nor any DDL gives one "
                        "(default: guessed from the server's collation in the QUERY events)")


def _add_read_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE",
                   help="binlog files (plain or .gz), read in order; - reads standard input")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write to FILE instead of stdout (written whole or not at all: a temporary file renamed "
                        "at the end)")
    p.add_argument("--timezone", type=_zone, metavar="ZONE",
                   help="the zone of --start/--stop-datetime and of the times the text outputs print: UTC, "
                        "+08:00, Asia/Shanghai (default: the local zone, TZ)")
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
    _add_schema_arguments(rw)
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
    _add_schema_arguments(sq)
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
    an.add_argument("--big-trx-bytes", type=_size, default=1 << 20, metavar="BYTES",
                    help="flag transactions bigger than this: bytes, or with K, M, G, KiB, MiB, GiB (powers of "
                         "1024; default 1 MiB)")
    an.add_argument("--long-trx-seconds", type=float, default=10.0, metavar="S",
                    help="flag transactions longer than this (default 10 s)")
    an.add_argument("--bucket", type=int, default=60, metavar="SECONDS",
                    help="timeline interval in seconds (default 60)")
    _add_schema_arguments(an)
    an.set_defaults(run=run_analyze)
    return ap


class _Failed(Exception):
    """A run that ended with a failing exit code: its -o file is not kept."""

    def __init__(self, code: int):
        super().__init__(code)
        self.code = code


@contextlib.contextmanager
def _replacing(path: str, binary: bool = False) -> Iterator:
    """A temporary file next to `path`, renamed to it when the block ends without an exception, removed
    otherwise: a failed run never leaves a half-written file under the final name."""
    folder = os.path.dirname(os.path.abspath(path))
    kw = {} if binary else {"encoding": "utf-8", "errors": "surrogateescape", "newline": ""}
    try:
        tmp = tempfile.NamedTemporaryFile("wb" if binary else "w", dir=folder,
                                          prefix=f".{os.path.basename(path)}.", suffix=".tmp", delete=False, **kw)
    except OSError as exc:      # named as the user gave it, never by the temporary file's name
        raise OSError(exc.errno, exc.strerror, f"-o {path}") from None
    try:
        yield tmp
    except BaseException:
        tmp.close()
        os.unlink(tmp.name)
        raise
    tmp.close()
    try:
        os.replace(tmp.name, path)
    except OSError as exc:
        os.unlink(tmp.name)
        raise OSError(exc.errno, exc.strerror, f"-o {path}") from None


def _writes_text_output(args: argparse.Namespace) -> bool:
    """-o names the text output (sql --output-format binlog writes its own)."""
    return bool(args.output) and args.output != "-" and getattr(args, "output_format", "sql") != "binlog"


def _command(run: Callable[[argparse.Namespace, TextIO, TextIO], int]):
    """A command's shell: the zone and the filters validated first (exit 2 naming the option), -o written
    through a temporary file, a --start-position that is no event boundary reported (exit 2)."""
    @functools.wraps(run)
    def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        try:
            args.tz = args.timezone or timezones.local_zone()
            args.filters = _filter_options(args)
        except UsageError as exc:
            err.write(f"binlog-spec: error: {exc}\n")
            return EXIT_USAGE
        try:
            if not _writes_text_output(args):
                return run(args, out, err)
            with _replacing(args.output) as f:
                code = run(args, f, err)
                if code >= EXIT_USAGE:
                    raise _Failed(code)
            return code
        except _Failed as failed:
            return failed.code
        except PositionError as exc:
            out.flush()
            err.write(f"binlog-spec: error: {exc}\n")
            return EXIT_USAGE
    return command


def _times_header(args: argparse.Namespace) -> str:
    return f"times in {timezones.zone_name(args.tz)}"


def _headed(header: str, lines: Iterable[str]) -> Iterator[str]:
    """The lines, the header before the first (no header when there is no line)."""
    for line in lines:
        yield header
        yield line
        break
    yield from lines


def _write_lines(lines: Iterable[str], out: TextIO) -> None:
    for line in lines:
        out.write(line)
        out.write("\n")


@_command
def run_events(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    text = args.format == "text"
    render = functools.partial(summary.event_line, tz=args.tz) if text else EVENT_FORMATS[args.format]
    warnings = [0]
    lines: Iterable[str] = (render(ev) for ev in _events(args, err, warnings))
    if text:
        lines = _headed(f"# binlog-spec events: {_times_header(args)}", lines)
    _write_lines(lines, out)
    return EXIT_WARNINGS if warnings[0] else EXIT_OK


@_command
def run_rows(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    render = ROW_FORMATS[args.format]
    header = None
    if args.format == "text":
        render = functools.partial(rows.row_line, tz=args.tz)
        header = f"# binlog-spec rows: {_times_header(args)}"
    tracker = _schema(args)
    warnings = [0]
    changes = rows.read_rows(_events(args, err, warnings, schema=tracker), warn=_warner(err))
    lines: Iterable[str] = (render(rc) for rc in changes)
    _write_lines(_headed(header, lines) if header else lines, out)
    return EXIT_WARNINGS if warnings[0] else EXIT_OK


@_command
def run_analyze(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from binlog_spec import analyze, report, report_html

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
    options = analyze.AnalyzeOptions(top=args.top, sort=args.sort, bucket_s=args.bucket,
                                     big_trx_bytes=args.big_trx_bytes, long_trx_seconds=args.long_trx_seconds)
    warnings = [0]
    faults: list[BinlogError] = []
    try:
        result = analyze.analyze(_events(args, err, warnings, faults, schema=_schema(args)), options, faults)
        if html is not None:
            html.write(report_html.render(result))
    finally:
        if html is not None:
            html.close()
    if args.output_dir:
        report.write_csv_dir(result, args.output_dir)
    elif args.format in ("text", "markdown"):
        shown = report.in_zone(result, args.tz, timezones.zone_name(args.tz))
        _write_lines(report.FORMATS[args.format](shown), out)
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


@_command
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
    events = _events(args, err, warnings, schema=_schema(args) if args.verbose or args.schema else None)
    # A rollback is a new transaction: replaying it under the original GTIDs would be skipped (MySQL)
    # or reuse them (MariaDB), so its GTIDs are always left to the server.
    opts = base64script.Base64Options(verbose=args.verbose, skip_gtids=args.skip_gtids or args.rollback,
                                      tz=args.tz)
    options = dataclasses.replace(_write_options(args), renumber_gtids=False)  # no GTIDs are written
    with Rewriter(options) as rewriter:
        printer = base64script.Base64Script(opts, rewriter)
        _write_lines(printer.lines(rewriter.items(events)), _text_output(out))
        _report_not_undone(_not_undone_of(rewriter), err)
    for note in printer.warnings:
        err.write(f"binlog-spec: warning: {note}\n")
    for exc in printer.row_errors:      # -v: its BINLOG block is written, its ### lines are not
        err.write(f"binlog-spec: warning: {exc}\n")
    return EXIT_WARNINGS if warnings[0] or printer.row_errors else EXIT_OK


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
    with _replacing(args.output, binary=True) as f:     # a binlog cut short would look whole
        rewriter = binwriter.write_binlog(events, f, options)
    with rewriter:
        _report_not_undone(_not_undone_of(rewriter), err)
    return EXIT_WARNINGS if warnings[0] else EXIT_OK


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


def _not_undone_of(rewriter):
    """The binlog rewriter's notes ('FILE:POS: statement' lines) as a sqlscript.NotUndone."""
    from binlog_spec.sqlscript import NotUndone

    summary = NotUndone()
    for line in rewriter.skipped.lines():
        where, _, statement = line.partition(": ")
        summary.add(where, statement)
    return summary


def _run_statements(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from binlog_spec import sqlscript
    from binlog_spec.sqlgen import SqlOptions

    tracker = _schema(args)
    opts = sqlscript.ScriptOptions(
        sql=SqlOptions(complete_insert=args.complete_insert, replace=args.replace,
                       rewrite_db=dict(args.rewrite_db)),
        commented=args.commented, tz=args.tz)
    warnings = [0]
    events = _events(args, err, warnings, schema=tracker)

    def refused(exc: BinlogError) -> None:     # a row left out of the script (a comment in its place)
        warnings[0] += 1
        err.write(f"binlog-spec: warning: {exc}: row not written\n")
    if args.rollback:
        not_undone = sqlscript.NotUndone()
        _write_lines(sqlscript.rollback(events, opts, not_undone=not_undone, warn=_warner(err), refused=refused),
                     _text_output(out))
        _report_not_undone(not_undone, err)
    else:
        _write_lines(sqlscript.forward(events, opts, warn=_warner(err), refused=refused), _text_output(out))
    return EXIT_WARNINGS if warnings[0] else EXIT_OK


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    args = build_parser().parse_args(argv)
    try:
        return args.run(args, out, err)
    except SchemaFileError as exc:
        err.write(f"binlog-spec: error: --schema {exc}\n")
        return EXIT_USAGE
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
