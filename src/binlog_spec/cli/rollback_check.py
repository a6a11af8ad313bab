"""A rollback's conflict check in the command line (output.rollback.check does the check): the check of a
run in one process, the gate its output waits behind, the report and exit code at its end, and the
check --jobs runs in the parent before the pieces."""
from __future__ import annotations

import argparse
import dataclasses
from typing import TextIO

from binlog_spec import api
from binlog_spec.cli import jobs
from binlog_spec.cli.arguments import read_options, schema_tracker
from binlog_spec.cli.exit_codes import EXIT_CONFLICT, EXIT_WARNINGS
from binlog_spec.errors import BinlogError, UsageError


def conflict_check(args: argparse.Namespace, upstream_schema: bool):
    """The conflict check of a rollback run in this process (output.rollback.check), or None: no rollback,
    no filter (every event is undone: nothing comes after them), or a --jobs piece (the parent checks
    the whole input: parent_check). `upstream_schema`: the run replays the DDL itself (its TABLE_MAPs
    come completed); otherwise the check replays it, into a tracker of its own."""
    if not getattr(args, "rollback", False) or getattr(args, "piece", None) is not None or not (
            args.filters.active or getattr(args, "rows", None) is not None):    # (row filters: a window too)
        return None
    return api.conflict_check(None if upstream_schema else schema_tracker(args), *_check_kind(args))


def _check_kind(args: argparse.Namespace) -> tuple[bool, bool]:
    """(per column: --minimal-update, skip: --skip-conflicts) of a run's conflict check."""
    return getattr(args, "minimal_update", False), getattr(args, "skip_conflicts", False)


def check_options(args: argparse.Namespace) -> None:
    """--minimal-update and --skip-conflicts where they apply (UsageError otherwise): statements (--sql,
    --sql2) of UPDATEs; the undo's (--rollback) for --skip-conflicts, which is not --force."""
    minimal, skip = _check_kind(args)
    if not (minimal or skip):
        return
    statements = getattr(args, "output_format", "sql") == "sql" and (args.commented or args.executable)
    for flag, given in (("--minimal-update", minimal), ("--skip-conflicts", skip)):
        if given and not statements:
            raise UsageError(f"{flag} applies to the statements of --sql or --sql2 (not to the base64 script "
                             "or --output-format binlog)")
    if minimal and args.replace:
        raise UsageError("--minimal-update does not go with --replace (a REPLACE writes the whole row)")
    if skip and not args.rollback:
        raise UsageError("--skip-conflicts applies to --rollback (it leaves the rows in conflict out of the undo)")
    if skip and args.force:
        raise UsageError("--skip-conflicts does not go with --force (--force writes the undo of every row, "
                         "--skip-conflicts leaves the rows in conflict out)")


class Gate:
    """The output of a checked rollback: what is written before the check has read the whole input
    is held; then it goes out, or nowhere when the check found a conflict (and no --force)."""

    def __init__(self, out, check, force: bool):
        self.out, self.check, self.force = out, check, force
        self.held: list | None = []

    def _open(self) -> bool:
        if self.held is not None and self.check.done:
            held, self.held = self.held, None
            if self.passes:
                for data in held:
                    self.out.write(data)
        return self.held is None

    @property
    def passes(self) -> bool:
        return self.force or not self.check.count

    def write(self, data) -> int:
        if not self._open():
            self.held.append(data)
        elif self.passes:
            self.out.write(data)
        return len(data)

    def flush(self) -> None:
        if self._open() and self.passes:
            self.out.flush()

    def isatty(self) -> bool:
        return False


#: What a --jobs piece hands back of its undo (cli.jobs.hand_back): its summary, said before the undo.
SUMMARY = jobs.BEFORE_OUTPUT + "undo_summary"


def undo_summary(args: argparse.Namespace, check, err: TextIO, summary) -> None:
    """What the undo restores (api.write_sql's `summary`, called before the script's first line): on stderr,
    unless nothing of the undo is written (a conflict, no --force nor --skip-conflicts); a --jobs piece hands it
    back (the parent says it before the pieces' undo)."""
    if check is not None and check.count and not (args.force or getattr(args, "skip_conflicts", False)):
        return
    if not jobs.hand_back(args, SUMMARY, summary):
        report_summary(args, summary, err)


def report_summary(args: argparse.Namespace, summary, err: TextIO) -> None:
    if getattr(args, "undo_withheld", False):      # (--jobs: the parent's check found a conflict)
        return
    err.write("".join(f"binlog-spec: note: {line}\n" for line in summary.lines(args.tz, getattr(args, "replace", False))))


#: Report lines joined into one write to stderr.
REPORT_CHUNK = 512


def finish_check(args: argparse.Namespace, check, err: TextIO, code: int) -> int:
    """A rollback's conflicts reported on stderr (after everything else); the exit code: EXIT_CONFLICT
    when there are some and no --force (nothing was written), else at least EXIT_WARNINGS."""
    if check is None:
        return code
    try:
        if not check.count:
            return code
        chunk: list[str] = []         # written a chunk at a time: stderr flushes every line it is given
        skipped = getattr(args, "skip_conflicts", False) and getattr(args, "command", None) == "sql"
        for line in api.conflict_lines(check, args.tz, args.force, skipped):
            chunk.append(f"binlog-spec: {line}\n")
            if len(chunk) >= REPORT_CHUNK:
                err.write("".join(chunk))
                chunk.clear()
        err.write("".join(chunk))
        return max(code, EXIT_WARNINGS) if args.force or skipped else EXIT_CONFLICT
    finally:
        check.close()


def parent_check(args: argparse.Namespace, err: TextIO):
    """--jobs: a SQL rollback's conflict check, over the whole input in the parent before the pieces run
    (they undo their own transactions only). Returns (whether the pieces' stdout is kept, what ends the
    run: code -> code), or None when the run is no checked rollback."""
    if getattr(args, "command", None) != "sql" or not getattr(args, "rollback", False) or not args.filters.active:
        return None
    options = dataclasses.replace(read_options(args), parse_bodies=api.bodies_needed(api.SQL_BODIES, args.filters))
    check = api.conflict_check(None, *_check_kind(args))
    try:                     # the compiled loop past the window where it runs (check.sink()), as in one process
        check = api.check_rollback(api.read_events(args.files, options, sink=check.sink()), args.filters,
                                   [api.display_name(f) for f in args.files], schema_tracker(args), check)
    except (BinlogError, OSError):      # (check_rollback closed the check)
        return None          # the pieces meet the same fault, and report it as one process does
    args.undo_withheld = not (args.force or not check.count)     # (nor is its summary said: report_summary)
    return (args.force or not check.count), lambda code: finish_check(args, check, err, code)
