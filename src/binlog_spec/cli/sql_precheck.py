"""The pre-pass of `sql --sql`/`--sql2` (forward and --rollback): before the first byte of the script,
whether every rows event it will write can be written (output.sql.writable); if not, nothing is written,
each table that stops it is named on stderr with what to do, and the exit code is EXIT_UNWRITABLE.

It parses only the TABLE_MAP bodies (and the QUERY ones the filters or the DDL need): a quick pass
without the DDL first, which finds every problem and, on most binlogs (binlog_row_metadata=FULL, whole
images), none; only when it finds some, the exact pass with the run's schema (--schema, the DDL in the
files) says which are real. The quick pass reads the whole input in the reader's scan mode (no Event;
but after a --start-position); where that finds some under filters, the exact pass over the whole input
(compiled, unfiltered: the schema stage sees every event whatever the filters keep) clears the run when it
finds none, and otherwise both passes read again the events the run's filters keep. The exact pass reads
what the run reads, with its filters and schema. It
runs once, in the parent of a --jobs run, before any piece. Standard input, which cannot be read
twice, is first copied to a temporary file (rereadable_stdin): the pre-pass reads it, then the run. A
server's logs (-R) are read again from the server, up to where they ended when the run began (the exact
passes: the quick one reads files), and not at all with --stop-never (no end: a row that cannot be
written is left out with a warning, a comment in its place)."""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import shutil
import sys
import tempfile
from typing import Iterable, Iterator, TextIO

from binlog_spec import api
from binlog_spec.cli.arguments import read_options, schema_tracker, sql_options
from binlog_spec.cli.exit_codes import EXIT_UNWRITABLE, EXIT_USAGE
from binlog_spec.errors import BinlogError, PositionError, ThreadIdError


def applies(args: argparse.Namespace) -> bool:
    """A SQL script run (--sql or --sql2, forward or --rollback), not a --jobs piece."""
    return (getattr(args, "command", None) == "sql" and getattr(args, "output_format", "sql") == "sql"
            and bool(args.commented or args.executable) and getattr(args, "piece", None) is None
            and not getattr(args, "stop_never", False))     # (-R --stop-never: an input with no end)


class _SpooledStdin:
    """What the reader takes for standard input (its `buffer`): the copy, rewound each time a reader
    opens it (the quick pass, the exact pass, the run: each reads it from its start)."""

    def __init__(self, spool):
        self._spool = spool

    @property
    def buffer(self):
        self._spool.seek(0)
        return self._spool


def _checks_thread_ids(args: argparse.Namespace) -> bool:
    """A `sql` run (any output) under --thread-id, not a --jobs piece nor an input with no end."""
    return (getattr(args, "command", None) == "sql" and bool(args.filters.thread_ids)
            and getattr(args, "piece", None) is None and not getattr(args, "stop_never", False))


def refuse_thread_ids(args: argparse.Namespace, err: TextIO) -> int | None:
    """EXIT_USAGE, before the first byte of a `sql` script, when its --thread-id cannot be answered from the
    files (a MariaDB row transaction has no thread id: api.check_thread_ids); None otherwise."""
    if not _checks_thread_ids(args):
        return None
    try:
        read = dataclasses.replace(read_options(args), parse_bodies=api.THREAD_ID_BODIES)
        f = args.filters
        api.check_thread_ids(api.read_events(args.files, read, [], f.start_position), f,
                             [api.display_name(p) for p in args.files])
    except ThreadIdError as exc:
        err.write(f"binlog-spec: error: {exc}\n")
        return EXIT_USAGE
    return None


@contextlib.contextmanager
def rereadable_stdin(args: argparse.Namespace) -> Iterator[None]:
    """Around a run the pre-pass applies to that reads standard input ('-'): the input copied to a
    temporary file (deleted at the end) and given to the reader as standard input, so that the pre-pass
    and then the run each read it from its start; the events and errors still name '(stdin)'."""
    if not ((applies(args) or _checks_thread_ids(args) or row_prepass_applies(args))
            and any(str(f) == api.STDIN for f in args.files)):
        yield
        return
    saved = sys.stdin
    with tempfile.TemporaryFile(prefix="binlog-spec-stdin-") as spool:
        shutil.copyfileobj(getattr(saved, "buffer", saved), spool, 1 << 20)
        sys.stdin = _SpooledStdin(spool)
        try:
            yield
        finally:
            sys.stdin = saved


def refuse(args: argparse.Namespace, err: TextIO) -> int | None:
    """EXIT_UNWRITABLE, the problems written on stderr, when the run's script cannot be written whole;
    None when it can (or the pre-pass does not apply): the run goes on."""
    if not applies(args):
        return None
    found = problems(args)
    if not found:
        return None
    err.write("".join(f"binlog-spec: error: {p}\n" for p in found))
    err.write(f"binlog-spec: error: nothing written: the {'rollback ' if args.rollback else ''}script cannot be "
              "written whole from these binlogs (the rows events above)\n")
    return EXIT_UNWRITABLE


def problems(args: argparse.Namespace) -> list:
    """The output.sql.writable problems of the run's script: the quick pass, then the exact one if needed."""
    options = sql_options(args, rollback=args.rollback)
    f = args.filters
    whole = f.start_position is None and f.active    # (a filtered run read from its start)
    quick = None
    if f.start_position is None:
        # the scan mode's pass: what the whole input holds, read from its start as the run reads it. A problem
        # is one rows event's (its table's names, its images): none in the whole input is none in what any
        # filter keeps of it (a --start-position run may begin past a fault that ends this pass: not here)
        quick = None if args.remote else api.may_be_unwritable(list(args.files), options, read_options(args))
        if quick and whole:
            quick = None    # (the problems may all be in what the filters drop: ask the filtered events)
    seek = f.seek_only and not args.remote      # (a server's logs are read from the position: no seek)
    if quick is None and seek:
        # read by a seek: the exact pass, whose compiled loop takes what follows the position, is the quick one
        return _pass(args, options, schema_tracker(args), api.UNWRITABLE_BODIES, exact=True)
    if quick is None and whole:
        # the exact pass over the whole input (its compiled loop runs unfiltered): the schema stage sees every
        # event whatever the filters keep, so none there is none in any selection either
        if not _pass(args, options, schema_tracker(args), api.UNWRITABLE_BODIES, True, api.FilterOptions()):
            return []
    if quick is None:
        quick = bool(_pass(args, options, None, api.UNWRITABLE_QUICK_BODIES, exact=False))
    if not quick:
        return []
    return _pass(args, options, schema_tracker(args), api.UNWRITABLE_BODIES, exact=True)


def _pass(args: argparse.Namespace, options, schema, bodies: frozenset[int], exact: bool, filters=None) -> list:
    f = args.filters if filters is None else filters     # (the run's, or those of a pass over the whole input)
    read = dataclasses.replace(read_options(args), parse_bodies=api.bodies_needed(bodies, f))
    # unfiltered, the exact pass's events the compiled loop needs no Event for are taken from the window
    sink = api.unwritable_sink(schema) if exact and (not f.active or f.seek_only and not args.remote) else None
    events = api.read_events(args.files, read, None, f.start_position, sink)
    selected = api.select_events(events, f, [api.display_name(p) for p in args.files], schema)
    return api.unwritable(_until_fault(selected), options, exact, sink)


def row_prepass_applies(args: argparse.Namespace) -> bool:
    """A `sql` run under row filters (--key, --where), of any output: its pre-pass names a table they cannot
    apply to before the first byte (not a --jobs piece, nor -R --stop-never)."""
    return (getattr(args, "rows", None) is not None and getattr(args, "command", None) == "sql"
            and getattr(args, "piece", None) is None and not getattr(args, "stop_never", False))


def row_filter_problem(args: argparse.Namespace):
    """The RowFilterError of the first table the run's row filters (--key, --where) cannot be applied to, read
    off the TABLE_MAPs the run's filters keep (with its schema), before the script's first byte; or None."""
    f = args.filters
    read = dataclasses.replace(read_options(args), parse_bodies=api.bodies_needed(api.UNWRITABLE_BODIES, f))
    # (the compiled loop skips the transactions the table and time filters drop, as in the run)
    gate = api.skip_gate(f) if f.start_position is None else None
    selection = api.Selection() if gate is not None else None
    sink = api.skipping_sink(gate, f, selection) if gate is not None else None
    gate = gate if sink is not None else None
    events = api.read_events(args.files, read, None, f.start_position, sink)
    selected = api.select_events(events, f, [api.display_name(p) for p in args.files], schema_tracker(args),
                                 selection=selection, gate=gate)
    return api.row_filter_problem(_until_fault(selected), args.rows)


def _until_fault(events: Iterable) -> Iterator:
    """The events up to a fault (a broken binlog, an unreadable file, a start position that is no
    boundary): what the run reports as it does without the pre-pass, after what it wrote before it."""
    try:
        yield from events
    except (BinlogError, OSError, PositionError):
        return
