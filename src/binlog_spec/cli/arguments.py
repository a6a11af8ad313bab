"""The command line's arguments: the options every command shares (reading, filters, --schema), their
types and checks (a bad value is a usage error naming the option), and what they become: ReadOptions,
FilterOptions, the schema tracker, and the outputs' options (binlog_spec.options)."""
from __future__ import annotations

import argparse
from typing import Callable, TextIO

from binlog_spec import api
from binlog_spec.api import FilterOptions
from binlog_spec.cli.remote_arguments import add_connection_arguments, connect_options
from binlog_spec.errors import GtidSetError, OptionValueError, UsageError, ZoneError
from binlog_spec.options import (AnalyzeOptions, Base64Options, ReadOptions, ScriptOptions, SqlOptions,
                                 WriteOptions, parse_size)


def read_options(args: argparse.Namespace) -> ReadOptions:
    return ReadOptions(verify_checksums=not args.no_verify_checksums,
                       expand_payloads=not args.no_expand_payloads,
                       strict=args.strict)


def _argument(name: str, parse: Callable, *errors: type[Exception]) -> Callable:
    """An argparse `type=` of an option value's parser (api.parse_*): its `errors` become the usage error
    argparse reports with the option's name (exit 2). (`name` is what argparse calls the type when
    anything else escapes: "invalid NAME value".)"""
    def convert(text: str):
        try:
            return parse(text)
        except errors as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    convert.__name__ = name
    return convert


_position = _argument("_position", api.parse_position, OptionValueError)
_server_id = _argument("_server_id", api.parse_server_id, OptionValueError)
size_arg = _argument("size_arg", parse_size, ValueError)
_zone = _argument("_zone", api.parse_zone, ZoneError)
_gtid_set = _argument("_gtid_set", api.parse_gtid_set, GtidSetError)
_charset = _argument("_charset", api.parse_charset, OptionValueError)
_ops = _argument("_ops", api.parse_ops, OptionValueError)
_thread_ids = _argument("_thread_ids", api.parse_thread_ids, OptionValueError)


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
    g.add_argument("--op", dest="ops", action="append", type=_ops, default=[], metavar="OP[,OP...]",
                   help="only the rows events (and statement-based DML) of these operations: insert, update, "
                        "delete (binlog2sql's --sql-type); a transaction left with none is dropped")
    g.add_argument("--thread-id", dest="thread_ids", action="append", type=_thread_ids, default=[],
                   metavar="N[,N...]",
                   help="only the transactions whose QUERY events (MySQL's BEGIN, statements) carry this thread "
                        "id. MariaDB row transactions carry none: such binlogs are refused (exit 2)")
    g.add_argument("--stop-position", type=_position, metavar="POS",
                   help="only what lies wholly before byte POS of the last file (a transaction POS cuts, between "
                        "its events or inside one, is left out), or up to a MariaDB GTID position, inclusive")


def filter_options(args: argparse.Namespace) -> FilterOptions:
    """The filters of the command line, validated; raises UsageError naming the option."""
    times = {}
    for name in ("start_datetime", "stop_datetime"):
        try:
            times[name] = api.parse_datetime(getattr(args, name), args.tz)
        except ValueError as exc:
            raise UsageError(f"--{name.replace('_', '-')}: {exc}") from None
    if times["start_datetime"] and times["stop_datetime"] and times["stop_datetime"] < times["start_datetime"]:
        raise UsageError(f"--stop-datetime {args.stop_datetime} is before --start-datetime {args.start_datetime}")
    start, stop = args.start_position, args.stop_position
    if (isinstance(start, int) and isinstance(stop, int) and len(args.files) == 1 and stop < start):
        raise UsageError(f"--stop-position {stop} is before --start-position {start}")
    return api.filter_options(
        databases=api.parse_names(args.databases),
        exclude_databases=api.parse_names(args.exclude_databases),
        tables=api.parse_names(args.tables), exclude_tables=api.parse_names(args.exclude_tables),
        include_gtids=args.include_gtids, exclude_gtids=args.exclude_gtids,
        server_ids=args.server_ids, exclude_server_ids=args.exclude_server_ids,
        start_datetime=times["start_datetime"], stop_datetime=times["stop_datetime"],
        start_position=start, stop_position=stop, ops=frozenset().union(*getattr(args, "ops", [])),
        thread_ids=frozenset().union(*getattr(args, "thread_ids", [])))


def add_row_filter_arguments(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "row filters",
        "Keep the row changes whose before or after image matches (a rows event is reduced to them; a "
        "transaction left with none is dropped). Values are typed as the columns are; text compares as the "
        "server's PAD SPACE, case-insensitive collations do. With --rollback, only the kept rows are undone "
        "and checked. Every sql output (base64, --sql, --sql2, binlog) writes rows events reduced to the kept "
        "rows; one process")
    g.add_argument("--key", metavar="V[,V...]",
                   help="with --table DB.T: the changes of the row whose key (primary key, else a NOT NULL unique "
                        "key; one value per key column, in key order; 'quoted' to hold a comma; 0x.. for binary) "
                        "is these values")
    g.add_argument("--where", metavar="EXPR",
                   help="a SQL condition over column names: =, <>, <, >, <=, >=, IN, BETWEEN, LIKE, IS [NOT] NULL, "
                        "AND, OR, NOT, parentheses; it applies to every kept table (a table without a column it "
                        "names is an error: narrow with --table)")


def row_filter_options(args: argparse.Namespace):
    """The row filters of the command line (api.RowFilterOptions); raises UsageError naming the option."""
    return api.row_filter_options(getattr(args, "key", None), getattr(args, "where", None),
                                  api.parse_names(args.tables) if getattr(args, "tables", None) else ())


def row_filters_apply(args: argparse.Namespace) -> None:
    """--key/--where: the run is one process (its pieces would each drop or keep transactions alone)."""
    args.jobs = 1


def schema_tracker(args: argparse.Namespace):
    """The schema the run starts with: --schema FILE (the tables at the start of the first file), or
    none; --default-charset for text columns no DDL gives a charset."""
    piece = getattr(args, "piece", None)
    if piece is not None and piece.schema_state is not None:     # --jobs: the state at the piece's start
        return api.piece_schema(piece, getattr(args, "piece_first_query", False))
    return api.schema_tracker(getattr(args, "schema", None), getattr(args, "schema_database", ""),
                              getattr(args, "default_charset", None))


def warner(err: TextIO) -> Callable[[str], None]:
    def warn(message: str) -> None:
        err.write(f"binlog-spec: warning: {message}\n")
    if getattr(err, "once", False):     # a --jobs piece's stderr: what is told once per run is marked
        def keyed(key, message: str) -> None:
            err.write(f"{MARK}{key!r}{MARK}binlog-spec: warning: {message}\n")
        warn.keyed = keyed
    return warn


#: --jobs: the mark of a stderr line given once per run (cli.jobs keeps the first of each key).
MARK = "\x00once\x00"


def _jobs(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes >= 1, got {text!r}")
    return n


def add_schema_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--schema", metavar="FILE",
                   help="CREATE TABLE statements (mysqldump --no-data) of the tables as they were at the start of "
                        "the first file, for the column names, signs and charsets the binlog lacks")
    p.add_argument("--schema-database", metavar="DB", default="",
                   help="database of the unqualified tables in --schema")
    p.add_argument("--default-charset", type=_charset, metavar="NAME",
                   help="charset of the text columns that neither the binlog nor any DDL gives one "
                        "(default: guessed from the server's collation in the QUERY events)")


def add_read_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="binlog files (plain or .gz), read in order; - reads standard input. With -R: the server's "
                        "logs by name (mysql-bin.000042), each read alone (with --to-last-log: the first and every "
                        "later one); none: from the oldest the server has (or the one --start-datetime falls in, or a MariaDB GTID "
                        "--start-position) through the newest")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write to FILE instead of stdout (written whole or not at all: a temporary file renamed "
                        "at the end; a new FILE gets mode 0666 less the umask, an existing one keeps its mode, "
                        "as a shell redirection leaves them)")
    p.add_argument("--timezone", type=_zone, metavar="ZONE",
                   help="the zone of --start/--stop-datetime and of the times the text outputs print: UTC, "
                        "+08:00, Asia/Shanghai (default: the local zone, TZ)")
    p.add_argument("--strict", action="store_true",
                   help="stop at an event whose body does not match its layout (default: warn and go on)")
    p.add_argument("--no-verify-checksums", action="store_true", help="do not check CRC32 checksums")
    p.add_argument("--no-expand-payloads", action="store_true",
                   help="do not list the events inside TRANSACTION_PAYLOAD_EVENTs")
    p.add_argument("-j", "--jobs", type=_jobs, metavar="N",
                   help="decode in N processes, the input cut at transaction boundaries, the output the same "
                        "as with one (default: the CPUs this process may use, up to 8). One process reads "
                        "standard input, .gz files, inputs under 32 MiB, --start/--stop-position, and runs "
                        "sql --output-format binlog, sql's base64 --rollback and analyze; a server's logs "
                         "(-R) are read in one process")
    _add_filter_arguments(p)
    _add_server_arguments(p)


def _add_server_arguments(p: argparse.ArgumentParser) -> None:
    add_connection_arguments(p)
    g = p.add_argument_group("reading a server (-R)", "What -R reads of the server's logs; the output is what "
                             "reading the same logs as files gives (each event names its log)")
    g.add_argument("--to-last-log", action="store_true",
                   help="-R: read on from the log named through the server's newest (up to where it ended when the "
                        "run began)")
    g.add_argument("--stop-never", action="store_true",
                   help="-R: keep reading as the server writes, each event printed as it comes (implies "
                        "--to-last-log; not with --rollback). SIGINT or SIGTERM ends the run as if the input ended "
                        "there: analyze then prints its report, sql --sql/--sql2 skip their pre-pass")


def remote_input(args: argparse.Namespace) -> None:
    """-R: the run's files become the server's logs (api.remote_logs: what the run reads, fixed when it
    begins); a bad combination of options raises UsageError naming them."""
    remote = getattr(args, "remote", False)
    if not remote:
        for flag, given in (("--stop-never", args.stop_never), ("--to-last-log", args.to_last_log)):
            if given:
                raise UsageError(f"{flag} reads from a server: give -R (--read-from-remote-server) and its options")
        if not args.files:
            raise UsageError("no FILE: give the binlog files to read (- reads standard input), or -R and the "
                             "server's log names")
        return
    if getattr(args, "rollback", False) and args.stop_never:
        raise UsageError("--stop-never does not go with --rollback: a rollback is written from its last transaction, "
                         "once the input has ended")
    if api.STDIN in args.files:
        raise UsageError("-R reads the logs of a server by name: '-' (standard input) is not one")
    if (args.to_last_log or args.stop_never) and len(args.files) > 1:
        raise UsageError("--to-last-log and --stop-never read from one log on: give one log name")
    gtid = args.filters.start_gtid      # (MariaDB: the server starts after it)
    args.files = api.remote_logs(connect_options(args), args.files, to_last_log=args.to_last_log,
                                 stop_never=args.stop_never, start_datetime=args.filters.start_datetime,
                                 gtid_start=gtid.text if gtid is not None else None,
                                 exclude_gtids=args.filters.exclude_gtids)


class Flushed:
    """--stop-never's output: the writers' line at a time (cli.commands._write_lines and cli.blocks, as on a
    terminal: `isatty`), held here and written out, flushed, before each wait for the server (`logs.on_wait`:
    remote.streams) and at the end (`run`), so that a line is out as soon as its event was read, and a burst
    of events goes out in large writes whatever the stream's own buffering (PYTHONUNBUFFERED)."""

    HOLD = 1 << 16

    def __init__(self, out: TextIO, logs):
        self._out, self._held, self._size = out, [], 0
        self.encoding = getattr(out, "encoding", None)
        logs.on_wait = self.flush

    def isatty(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._held.append(text)
        self._size += len(text)
        if self._size >= self.HOLD:
            self._write()
        return len(text)

    def _write(self) -> None:
        held, self._held, self._size = self._held, [], 0
        self._out.write("".join(held))

    def flush(self) -> None:
        if self._held:
            self._write()
        self._out.flush()

    @classmethod
    def running(cls, command, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        """The command, writing to `out` through a Flushed; what it wrote is all out when it ends."""
        flushed = cls(out, args.files)
        try:
            return command(args, flushed, err)
        finally:
            flushed.flush()


def rewrite_arg(text: str) -> tuple[str, str]:
    old, sep, new = text.partition("->")
    if not sep or not old or not new:
        raise argparse.ArgumentTypeError(f"expected 'old->new', got {text!r}")
    return old, new


def write_options(args: argparse.Namespace) -> WriteOptions:
    return WriteOptions(rewrite_db=dict(args.rewrite_db), rollback=args.rollback,
                        payloads_expanded=not args.no_expand_payloads)


def base64_options(args: argparse.Namespace) -> Base64Options:
    # A rollback is a new transaction: replaying it under the original GTIDs would be skipped (MySQL)
    # or reuse them (MariaDB), so its GTIDs are always left to the server.
    return Base64Options(verbose=args.verbose, skip_gtids=args.skip_gtids or args.rollback, tz=args.tz)


def sql_options(args: argparse.Namespace, rollback: bool = False) -> SqlOptions:
    return SqlOptions(complete_insert=args.complete_insert, replace=args.replace, rollback=rollback,
                      rewrite_db=dict(args.rewrite_db), minimal_update=getattr(args, "minimal_update", False))


def script_options(args: argparse.Namespace) -> ScriptOptions:
    return ScriptOptions(sql=sql_options(args), commented=args.commented, tz=args.tz)


def analyze_options(args: argparse.Namespace) -> AnalyzeOptions:
    return AnalyzeOptions(top=args.top, sort=args.sort, bucket_s=args.bucket, big_trx_bytes=args.big_trx_bytes,
                          long_trx_seconds=args.long_trx_seconds, filters=args.filters,
                          row_filters=args.rows.options if getattr(args, "rows", None) is not None else None)
