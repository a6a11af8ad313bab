"""The `binlog-spec` command: a thin shell over the library API.

Exit codes: binlog_spec.cli.exit_codes (their one home, with what each means).
"""
from __future__ import annotations

import argparse
import gc
import sys
from typing import TextIO

import binlog_spec
from binlog_spec import compiled
from binlog_spec.errors import BinlogError, RemoteError, SchemaFileError
from binlog_spec.cli.hints import Parser, errors_to
from binlog_spec.cli.arguments import (add_read_arguments, add_row_filter_arguments, add_schema_arguments,
                                      rewrite_arg, size_arg)
from binlog_spec.cli.server_logs import add_download_parser, add_logs_parser
from binlog_spec.cli.commands import EVENT_FORMATS, ROW_FORMATS, run_analyze, run_events, run_rows, run_sql
from binlog_spec.cli.exit_codes import (EXIT_BAD_INPUT, EXIT_CONFLICT, EXIT_INTERNAL, EXIT_IO, EXIT_OK,
                                        EXIT_SERVER, EXIT_UNWRITABLE, EXIT_USAGE, EXIT_WARNINGS)
from binlog_spec.cli.remote_arguments import password_argv


class _Version(argparse.Action):
    """`--version` on one line (argparse's own action wraps it at the terminal's width)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0,
                         help=help or "print the version and which core runs, then exit")

    def __call__(self, parser, namespace, values, option_string=None):
        sys.stdout.write(f"{parser.prog} {binlog_spec.__version__}, {compiled.describe()}\n")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    ap = Parser(prog="binlog-spec", description="Read MySQL/MariaDB binary logs offline.")
    ap.add_argument("--version", action=_Version)
    ap.add_argument("--debug", action="store_true", help="on an internal error, print the Python traceback")
    sub = ap.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("events", help="list every event", description="List every event, one per line.")
    add_read_arguments(ev)
    ev.add_argument("--format", choices=sorted(EVENT_FORMATS), default="text")
    ev.set_defaults(run=run_events)
    rw = sub.add_parser("rows", help="decode row events into row changes",
                        description="Decode every row event into inserts, updates and deletes with typed values.")
    add_read_arguments(rw)
    rw.add_argument("--format", choices=sorted(ROW_FORMATS), default="text",
                    help="text: a line per row change with its images; jsonl: a JSON object per row change; "
                         "history: a line per change with its time, GTID, operation, key and the changed "
                         "columns as old → new")
    rw.add_argument("--with-statement", action="store_true",
                    help="jsonl: each line also carries the statement text (ANNOTATE_ROWS / ROWS_QUERY) and the "
                         "thread id of the change, null where the binlog has none")
    add_schema_arguments(rw)
    add_row_filter_arguments(rw)
    rw.set_defaults(run=run_rows)

    sq = sub.add_parser("sql", help="write the events as a replayable script or binlog, or their undo",
                        description="Write the events as mysqlbinlog does (BINLOG base64 blocks, the default), "
                                    "as SQL statements (--sql, --sql2), or as a binlog file "
                                    "(--output-format binlog); with --rollback, what undoes their row changes.")
    add_read_arguments(sq)
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
                    help="undo the changes: last transaction first, images swapped. With a filter, the files "
                         "are read to their end, past it, and the rollback is checked first: when a later "
                         "transaction changed a row it undoes (by its primary or NOT NULL unique key, else its "
                         "whole image), or ran a TRUNCATE, DDL or statement-based DML on a table it writes, "
                         "each conflict is reported on stderr, nothing is written and the exit code is 5. "
                         "Only the files given are checked: changes in later binlogs are not seen")
    sq.add_argument("--force", action="store_true",
                    help="--rollback: write the undo even when it conflicts with later changes (they are "
                         "still reported; exit code 1)")
    sq.add_argument("--minimal-update", action="store_true",
                    help="--sql/--sql2: an UPDATE sets only the columns whose value changed, found by the row's key "
                         "(primary, else NOT NULL unique; without one, by its whole image and LIMIT 1). With "
                         "--rollback the check works per column: a later change to other columns of an undone "
                         "row is no conflict, and the undo leaves them as they are")
    sq.add_argument("--skip-conflicts", action="store_true",
                    help="--sql/--sql2 --rollback: leave the rows in conflict out of the undo (each named on "
                         "stderr) and write the undo of the others (exit code 1)")
    sq.add_argument("--rewrite-db", action="append", default=[], metavar="OLD->NEW", type=rewrite_arg,
                    help="rename a schema (repeatable)")
    sq.add_argument("-v", "--verbose", action="count", default=0,
                    help="base64 script: the rows as ### pseudo-SQL under each BINLOG block (-vv: with types)")
    sq.add_argument("--skip-gtids", action="store_true",
                    help="no GTIDs: GTID_NEXT='AUTOMATIC' (MySQL), no gtid_seq_no (MariaDB); in a binlog "
                         "output the GTID events are left out (a MariaDB one becomes BEGIN)")
    add_schema_arguments(sq)
    add_row_filter_arguments(sq)
    sq.set_defaults(run=run_sql)

    an = sub.add_parser("analyze", help="report on event types, tables, transactions, DDL and a timeline",
                        description="Analyze the files together: events and bytes per event type, rows and "
                                    "bytes per table and operation, the biggest and longest transactions, "
                                    "DDL statements and a timeline. Rows are counted without decoding values.")
    add_read_arguments(an)
    an.add_argument("--format", choices=["text", "markdown", "json", "csv"], default="text")
    an.add_argument("--output-dir", metavar="DIR", help="--format csv: one CSV file per section into DIR")
    an.add_argument("--html", metavar="FILE", help="also write a self-contained HTML report with charts")
    an.add_argument("--sort", choices=["bytes", "rows", "events", "name", "inserts", "updates", "deletes"],
                    default="bytes", help="order of the tables section (default: bytes)")
    an.add_argument("--top", type=int, default=20, metavar="N", help="top N transactions (default 20)")
    an.add_argument("--big-trx-bytes", type=size_arg, default=1 << 20, metavar="BYTES",
                    help="flag transactions bigger than this: bytes, or with K, M, G, KiB, MiB, GiB (powers of "
                         "1024; default 1 MiB)")
    an.add_argument("--long-trx-seconds", type=float, default=10.0, metavar="S",
                    help="flag transactions longer than this (default 10 s)")
    an.add_argument("--bucket", type=int, default=60, metavar="SECONDS",
                    help="timeline interval in seconds (default 60)")
    add_schema_arguments(an)
    add_row_filter_arguments(an)
    an.set_defaults(run=run_analyze)
    add_download_parser(sub)
    add_logs_parser(sub)
    return ap


def main(argv: list[str] | None = None, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    errors_to(parser, err)          # a bad command line's one line goes to `err`
    args = parser.parse_args(password_argv(sys.argv[1:] if argv is None else list(argv)))
    try:
        return args.run(args, out, err)
    except SchemaFileError as exc:
        err.write(f"binlog-spec: error: --schema {exc}\n")
        return EXIT_USAGE
    except BinlogError as exc:
        out.flush()
        err.write(f"binlog-spec: error: {exc}\n")
        return EXIT_BAD_INPUT
    except RemoteError as exc:
        out.flush()
        err.write(f"binlog-spec: error: {exc}\n")
        return EXIT_SERVER
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
    gc.freeze()     # the modules' objects are never garbage: the collector of a long run skips them
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    sys.exit(code)


__all__ = ["main", "entry", "build_parser", "EXIT_OK", "EXIT_WARNINGS", "EXIT_USAGE", "EXIT_BAD_INPUT", "EXIT_IO", "EXIT_CONFLICT",
           "EXIT_UNWRITABLE", "EXIT_SERVER", "EXIT_INTERNAL"]


if __name__ == "__main__":
    entry()
