"""The report of a rollback's conflict check (output.rollback.check): a line per conflict, then what was done.
Times are in the run's zone, named on the first line."""
from __future__ import annotations

from datetime import tzinfo
from typing import Iterator

from binlog_spec.binlog import timezones
from binlog_spec.output.rollback.check import ConflictCheck
from binlog_spec.output.rollback.conflict import Conflict, Tx
from binlog_spec.rows.statement_text import quote_table


def _tx_text(tx: Tx, tz: tzinfo) -> str:
    return (f"transaction {tx.gtid or '-'} at {tx.file}:{tx.pos} "
            f"({timezones.local_text(tx.timestamp, tz)})")


def conflict_line(c: Conflict, tz: tzinfo = timezones.UTC, cache: dict | None = None) -> str:
    """One conflict, one line (without the program's prefix). `cache`: the texts of the tables and
    transactions already written (a report of many conflicts names the same ones again and again)."""
    if cache is None:
        cache = {}
    where = (c.schema, c.table)
    table = cache.get(where)
    if table is None:
        table = cache[where] = quote_table(c.schema, c.table)
    undone = cache.get(c.undone)
    if undone is None:
        if len(cache) > 4096:
            cache.clear()
        undone = cache[c.undone] = _tx_text(c.undone, tz)
    if c.key is not None:
        cols, vals = c.key
        what = f"row {table} ({', '.join(cols)})=({', '.join(vals)})" + (" [no key: the whole row]" if c.whole else "")
    elif c.whole:
        what = f"rows of {table} [their keys could not be read]"
    else:
        what = f"table {table}"
    line = (f"{what}: undone {c.undone_op} of {undone}; later {c.later_op} at "
            f"{c.later_at[0]}:{c.later_at[1]} of {_tx_text(c.later, tz)}")
    if c.statement:
        line += f": {c.statement}"
    return line


def report_lines(check: ConflictCheck, tz: tzinfo, forced: bool, skipped: bool = False) -> Iterator[str]:
    """The report of a check that found conflicts: a line per conflict, then what was done (`skipped`: the
    rows in conflict were left out of the undo, --skip-conflicts)."""
    if not check.count:
        return
    yield f"conflict check: times in {timezones.zone_name(tz)}; only the files given were checked"
    cache: dict = {}
    for c in check.conflicts():
        yield "conflict: " + conflict_line(c, tz, cache)
    s = "" if check.count == 1 else "s"
    if skipped:
        yield (f"warning: {check.count} conflict{s}: the undo leaves out the rows above (every row of a table "
               "named whole) and undoes the others (--skip-conflicts; exit 1)")
    elif forced:
        yield (f"warning: {check.count} conflict{s}: the rollback overwrites the later change{s} above; "
               "written anyway (--force)")
    else:
        yield (f"error: {check.count} conflict{s}: the rollback would overwrite the later change{s} above; "
               "nothing written (exit 5; --force writes it anyway)")


__all__ = ["conflict_line", "report_lines"]
