"""The notes of a run whose filters kept nothing (stream.selection says what they kept and what to
say): written at the end of the run, by the one process, or by the parent of a --jobs run from the
selections its pieces handed back (merged). They are notes: the exit code stays what it is (0 when
nothing else was wrong), for an empty selection is an answer."""
from __future__ import annotations

import argparse
import functools
from typing import Callable, TextIO

from binlog_spec.cli import jobs


def handing_back(run: Callable[[argparse.Namespace, TextIO, TextIO], int]):
    """The command, its filters' selection (`args.selection`, set where it reads: commands._events)
    handed back to the parent at the end of a --jobs piece."""
    @functools.wraps(run)
    def command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
        code = run(args, out, err)
        if getattr(args, "selection", None) is not None and jobs.hand_back(args, "selection", args.selection):
            args.selection = None
        return code
    return command


def report(args: argparse.Namespace, err: TextIO) -> None:
    """The notes of the run's selection, if its filters kept nothing. A command whose output is row
    changes (rows, sql --rollback) says so too when they kept statements only."""
    selection = getattr(args, "selection", None)
    if selection is None:
        return
    rows = args.command == "rows" or (args.command == "sql" and getattr(args, "rollback", False))
    for note in selection.notes(args.filters, rows):
        err.write(f"binlog-spec: note: {note}\n")


def report_rows_kept(args: argparse.Namespace, err: TextIO) -> None:
    """A row-filtered run that kept no row change says so, and how many it looked at."""
    rows = getattr(args, "rows", None)
    if rows is not None and not rows.kept:
        given = " ".join(f"{name} {value!r}" for name, value in rows.options.described())
        err.write(f"binlog-spec: note: {given}: no row change matched (of {rows.seen} looked at)\n")
