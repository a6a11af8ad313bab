"""The commands on a server's logs themselves: `download` (a byte-exact copy into a folder, mysqlbinlog
--raw [--stop-never]) and `logs` (SHOW BINARY LOGS with each log's first time and first GTID). Thin shells
over api.download and api.log_heads; a server's errors are the top-level handler's (one line, exit 7)."""
from __future__ import annotations

import argparse
import json
import signal
from typing import TextIO

from binlog_spec import api
from binlog_spec.cli.exit_codes import EXIT_OK
from binlog_spec.options import DownloadOptions
from binlog_spec.cli.remote_arguments import add_connection_arguments, connect_options


def add_download_parser(sub) -> None:
    dl = sub.add_parser(
        "download", help="copy a server's binlogs into a folder, byte for byte (mysqlbinlog --raw)",
        description="Copy a server's binary logs into DIR, each under its own name and byte-identical to the "
                    "server's file. It resumes where DIR ends (a transaction cut by a stopped download is "
                    "trimmed first) and writes whole transactions only: every command can read DIR while it "
                    "grows. Without --stop-never it ends at the server's last event.")
    add_connection_arguments(dl)
    dl.add_argument("-o", "--output-dir", dest="output_dir", metavar="DIR", required=True,
                    help="the folder the logs are written to (created if need be)")
    dl.add_argument("first_log", nargs="?", metavar="FIRST_LOG",
                    help="the log to start at when DIR holds none of the server's logs (or only older ones); "
                         "default: the server's oldest log")
    dl.add_argument("--stop-never", action="store_true",
                    help="wait for the server's new events for ever; when the connection is lost (server "
                         "restarted, connection killed, network cut), connect again with backoff and go on "
                         "with no gap and no duplicate. Ends on SIGINT or SIGTERM")
    dl.add_argument("--to-last-log", action="store_true",
                    help="accepted for mysqlbinlog's spelling: download always reads through the newest log")
    dl.add_argument("--retry-max-wait", type=float, default=DownloadOptions.retry_max_s, metavar="S",
                    help="--stop-never: the longest wait between two connection attempts (default %(default)g s; "
                         "the first wait is 0.1 s, doubled at each failure)")
    dl.set_defaults(run=run_download)


def add_logs_parser(sub) -> None:
    lg = sub.add_parser(
        "logs", help="list a server's binlogs with their first time and first GTID",
        description="SHOW BINARY LOGS, with each log's first event time and first GTID read from its first "
                    "events (not from file names or dates).")
    add_connection_arguments(lg)
    lg.add_argument("--format", choices=["text", "jsonl"], default="text",
                    help="text: a tab-separated table with a header line; jsonl: one JSON object per log")
    lg.add_argument("logs", nargs="*", metavar="LOG", help="only these logs (default: every log)")
    lg.set_defaults(run=run_logs)


def run_download(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    opts = connect_options(args)
    options = DownloadOptions(first_log=args.first_log, stop_never=args.stop_never,
                                  retry_max_s=max(args.retry_max_wait, DownloadOptions.retry_initial_s))

    def note(line: str) -> None:
        err.write(f"binlog-spec: note: {line}\n")
        err.flush()
    previous = signal.signal(signal.SIGTERM, _interrupt) if args.stop_never else None
    try:
        progress = api.download(opts, args.output_dir, options, note)
    except KeyboardInterrupt:
        note(f"stopped: {args.output_dir} holds whole transactions only")
        return EXIT_OK
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if not progress.written:
        note(f"nothing new: {args.output_dir} already ends where the server's logs do "
             f"({progress.log} position {progress.position})")
    return EXIT_OK


def _interrupt(_signum, _frame) -> None:
    raise KeyboardInterrupt


def run_logs(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    with api.connect(connect_options(args)) as conn:
        heads = api.log_heads(conn, args.logs or None)
    if args.format == "jsonl":
        for h in heads:
            out.write(json.dumps(h.to_dict()) + "\n")
    else:
        out.write("log\tsize\tfirst_time\tfirst_gtid\n")
        for h in heads:
            d = h.to_dict()
            out.write(f"{d['log']}\t{d['size']}\t{d['first_time'] or ''}\t{d['first_gtid'] or ''}\n")
    if not heads:
        err.write("binlog-spec: note: the server lists no binary log\n")
    return EXIT_OK


__all__ = ["add_download_parser", "add_logs_parser", "run_download", "run_logs"]
