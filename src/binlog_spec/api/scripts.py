"""The scripts of events (binlog_spec.api re-exports them): the base64 script as mysqlbinlog writes it
(`Base64Writer`, `write_base64`: output.base64), and SQL statements forward or rollback (`write_sql`:
output.sql.script), with what they say of what they could not write."""
from __future__ import annotations

from typing import Iterable, Iterator

from binlog_spec.binlog.event import Event
from binlog_spec.options import Base64Options, ScriptOptions, WriteOptions


class Base64Writer:
    """The base64 script of events, as mysqlbinlog writes it (output.base64.script over an
    output.rewriter.Rewriter, which writes the events under the BINLOG blocks; a context manager: it
    closes the rewriter's spool). `part`: (first, last, mariadb) for a piece of a run cut in pieces
    (output.base64.parts: the header only in the first, the end only in the last), `continued`: the
    name of the file a later piece continues. `summary`: a rollback's, told what the undo restores before
    its first line (as write_sql's)."""

    def __init__(self, options: Base64Options = Base64Options(), write: WriteOptions | None = None,
                 part: tuple[bool, bool, bool] | None = None, continued: str | None = None, summary=None):
        from binlog_spec.output.base64 import parts
        from binlog_spec.output.base64.script import Base64Script
        from binlog_spec.output.rewriter import Rewriter
        self.part = parts.Part(*part) if part is not None else None
        self.rewriter = Rewriter(write if write is not None else WriteOptions(), continued)
        self.rewriter.summary = summary     # (a rollback's: told what the undo restores, as write_sql's `summary`)
        self.script = Base64Script(options, self.rewriter, self.part)

    def __enter__(self) -> "Base64Writer":
        self.rewriter.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.rewriter.__exit__(*exc)

    def sink(self, filters=None, skipping: tuple = (None, None, None)):
        """What takes the events straight from the reader (read_events' `sink`: the compiled lane), or
        None where it does not run (a rollback, -v, a rewritten database, no compiled module). Under
        `filters`, `skipping` is (gate, selection, sink) of the run's select_events (api.skip_gate, its
        Selection, api.skipping_sink): the lane skips what they drop and writes what they keep."""
        from binlog_spec.output.base64 import lane
        return lane.sink(self.script, self.rewriter, filters, skipping)

    def lines(self, events: Iterable[Event], sink=None) -> Iterator[str]:
        """The script's lines (with `sink`, the one read_events was given)."""
        from binlog_spec.output.base64 import lane
        return lane.lines_of(self.script, events, self.rewriter, sink)

    @property
    def row_errors(self) -> list:
        """-v: the rows events whose ### lines could not be written (their BINLOG block is)."""
        return self.script.row_errors

    def ending(self):
        """What the script says at its end (output.base64.parts.Ending: its `lines()` of warnings,
        `row_errors`), with, for a piece, the session state the next piece joins to."""
        from binlog_spec.output.base64 import parts
        return parts.Ending(self.script.state() if self.part else {}, self.script.warnings,
                                   self.script.row_errors)

    def not_undone(self):
        """A rollback: the statements it could not undo (a NotUndone, as write_sql counts them)."""
        return not_undone(self.rewriter)


def write_base64(events: Iterable[Event], options: Base64Options = Base64Options(),
                 write: WriteOptions | None = None) -> Iterator[str]:
    """The lines of the base64 script of the events (sql's default output; mysqlbinlog's): Base64Writer."""
    with Base64Writer(options, write) as writer:
        yield from writer.lines(events)


def base64_compiled() -> bool:
    """Whether the base64 script's compiled lane can run (Base64Writer.sink)."""
    from binlog_spec.output.base64 import lane
    return lane.compiled()


def base64_joiner(mariadb: bool):
    """What joins the base64 scripts of the pieces of a run (output.base64.parts.Joiner)."""
    from binlog_spec.output.base64.parts import Joiner
    return Joiner(mariadb)


def sql_header() -> list[str]:
    """The session settings every SQL script of write_sql starts with."""
    from binlog_spec.output.sql.script import HEADER
    return list(HEADER)


def not_undone(rewriter=None):
    """A new count of the statements a rollback could not undo (output.sql.script.NotUndone, what
    write_sql's `not_undone` takes); with a Rewriter (write_binlog's, Base64Writer's), filled from its notes."""
    from binlog_spec.output.sql.script import NotUndone
    summary = NotUndone()
    if rewriter is not None:
        for line in rewriter.skipped.lines():
            where, _, statement = line.partition(": ")
            summary.add(where, statement)
    return summary


def write_sql(events: Iterable[Event], options: ScriptOptions = ScriptOptions(), rollback: bool = False, not_undone=None, warn=None,
              refused=None, lane=None, skip=None, summary=None) -> Iterator[str]:
    """The lines of a SQL script of the events (--sql, --sql2): forward, or with `rollback` what undoes
    their row changes, last transaction first (the statements it cannot undo counted in `not_undone`).
    A row no statement can write exactly is left out, a comment in its place, and `refused(error)` is
    told. `options`: an output.sql.script.ScriptOptions. `lane`: rollback_lane's, the sink of the events'
    reader (a rollback's: what it spooled is in the script). `skip`: --skip-conflicts' conflict check
    (conflict_check(skip=True)): the rows it finds in conflict are left out of the undo. `summary`: a rollback's
    `summary(undo_summary)` is called once the input is read, before the script's first line is yielded, with
    what the undo restores (an UndoSummary: rows per table and kind of statement, the transactions undone;
    its `lines(tz)` say it)."""
    from binlog_spec.output.sql import script
    if rollback:
        return script.rollback(events, options, not_undone=not_undone, warn=warn, refused=refused,
                               spool=None if lane is None else lane.spool, skip=skip, summary=summary)
    return script.forward(events, options, warn=warn, refused=refused)
