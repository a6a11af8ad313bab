"""The `binlog-spec` command: a thin shell over the library API.

Exit codes:
    0  every event was read
    1  read to the end, but some event bodies did not match their layout (warnings on stderr)
    2  bad command line
    3  a binlog is broken (not a binlog, truncated, bad checksum, impossible size); the events
       before the fault were printed
    4  a file could not be opened or read
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable, Iterable, TextIO

import binlog_spec
from binlog_spec import jsonenc, rows, summary
from binlog_spec.errors import BinlogError
from binlog_spec.event import Event
from binlog_spec.options import ReadOptions

EXIT_OK = 0
EXIT_WARNINGS = 1
EXIT_USAGE = 2
EXIT_BAD_INPUT = 3
EXIT_IO = 4

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


def _add_read_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="binlog files (plain or .gz), read in order")
    p.add_argument("--strict", action="store_true",
                   help="stop at an event whose body does not match its layout (default: warn and go on)")
    p.add_argument("--no-verify-checksums", action="store_true", help="do not check CRC32 checksums")
    p.add_argument("--no-expand-payloads", action="store_true",
                   help="do not list the events inside TRANSACTION_PAYLOAD_EVENTs")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="binlog-spec", description="Read MySQL/MariaDB binary logs offline.")
    ap.add_argument("--version", action="version", version=f"%(prog)s {binlog_spec.__version__}")
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
    rw.add_argument("--database", metavar="DB", default="",
                    help="database of the unqualified tables in --schema")
    rw.set_defaults(run=run_rows)
    return ap


def _write_lines(lines: Iterable[str], out: TextIO) -> None:
    for line in lines:
        out.write(line)
        out.write("\n")


def run_events(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    render = EVENT_FORMATS[args.format]
    warnings = 0

    def lines() -> Iterable[str]:
        nonlocal warnings
        for ev in binlog_spec.read_events(args.files, _read_options(args)):
            if ev.error is not None:
                warnings += 1
                err.write(f"binlog-spec: warning: {ev.error}\n")
            yield render(ev)

    _write_lines(lines(), out)
    return EXIT_WARNINGS if warnings else EXIT_OK


def run_rows(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from binlog_spec.schema import SchemaTracker

    render = ROW_FORMATS[args.format]
    tracker = SchemaTracker.from_file(args.schema, args.database) if args.schema else SchemaTracker()
    warnings = 0

    def events():
        nonlocal warnings
        for ev in binlog_spec.read_events(args.files, _read_options(args)):
            if ev.error is not None:
                warnings += 1
                err.write(f"binlog-spec: warning: {ev.error}\n")
            yield ev

    _write_lines((render(rc) for rc in rows.read_rows(events(), tracker)), out)
    return EXIT_WARNINGS if warnings else EXIT_OK


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


def entry() -> None:
    code = main()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        pass
    sys.exit(code)


if __name__ == "__main__":
    entry()
