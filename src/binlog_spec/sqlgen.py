"""Row changes to SQL statements; rollback reuses the same builders with the images swapped."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from binlog_spec import rows
from binlog_spec.errors import BinlogError
from binlog_spec.rows import RowChange
from binlog_spec.sqltext import literal, quote_identifier, quote_table
from binlog_spec.tablemap import TableDef


class SqlGenerationError(BinlogError):
    """A row change cannot be written as SQL that would run (names unknown, partial images)."""


@dataclass(frozen=True)
class SqlOptions:
    complete_insert: bool = False
    replace: bool = False
    rollback: bool = False
    #: old schema -> new schema
    rewrite_db: dict = field(default_factory=dict)
    #: Write JSON as CAST(... AS JSON) (MySQL); MariaDB's JSON is text.
    mysql_json: bool = True


_INVERSE = {rows.INSERT: rows.DELETE, rows.DELETE: rows.INSERT, rows.UPDATE: rows.UPDATE}


def _columns(t: TableDef) -> list[tuple[int, str]]:
    """(index, name) of the columns to write: invisible ones (COLUMN_VISIBILITY) are left out."""
    return [(i, n) for i, n in enumerate(t.names) if not t.visible or t.visible[i]]


def _check(rc: RowChange, image: dict[str, Any], full: bool) -> None:
    t = rc.table_def
    if not t.has_names:
        raise SqlGenerationError(f"column names of `{t.schema}`.`{t.table}` are unknown: use a binlog "
                                 "written with binlog_row_metadata=FULL, or --schema", file=rc.file,
                                 offset=rc.pos)
    if full and any(n not in image for _, n in _columns(t)):
        raise SqlGenerationError(f"the row image of `{t.schema}`.`{t.table}` lacks columns (binlog_row_image "
                                 "MINIMAL or NOBLOB): it cannot be written back whole", file=rc.file, offset=rc.pos)


def _lit(t: TableDef, i: int, value: Any, opts: SqlOptions) -> str:
    return literal(value, t.columns[i], opts.mysql_json)


def _where(t: TableDef, image: dict[str, Any], opts: SqlOptions) -> tuple[str, str]:
    """(WHERE clause, LIMIT clause): the primary key when the metadata gives one, else every column."""
    cols = _columns(t)
    pk = [(i, t.names[i]) for i in t.primary_key]
    use = pk if pk and all(n in image for _, n in pk) else [(i, n) for i, n in cols if n in image]
    parts = []
    for i, n in use:
        v = image[n]
        parts.append(f"{quote_identifier(n)} IS NULL" if v is None else f"{quote_identifier(n)}={_lit(t, i, v, opts)}")
    return " AND ".join(parts) or "1=1", "" if use is pk and pk else " LIMIT 1"


def _target(t: TableDef, opts: SqlOptions) -> str:
    return quote_table(opts.rewrite_db.get(t.schema, t.schema), t.table)


def build_insert(rc: RowChange, image: dict[str, Any], opts: SqlOptions) -> str:
    t = rc.table_def
    verb = "REPLACE" if opts.replace else "INSERT"
    cols = [(i, n) for i, n in _columns(t) if n in image]
    values = ", ".join(_lit(t, i, image[n], opts) for i, n in cols)
    if opts.complete_insert or len(cols) != len(_columns(t)):
        names = ", ".join(quote_identifier(n) for _, n in cols)
        return f"{verb} INTO {_target(t, opts)} ({names}) VALUES ({values});"
    return f"{verb} INTO {_target(t, opts)} VALUES ({values});"


def build_delete(rc: RowChange, image: dict[str, Any], opts: SqlOptions) -> str:
    where, limit = _where(rc.table_def, image, opts)
    return f"DELETE FROM {_target(rc.table_def, opts)} WHERE {where}{limit};"


def build_update(rc: RowChange, before: dict[str, Any], after: dict[str, Any], opts: SqlOptions) -> str:
    t = rc.table_def
    if opts.replace and t.primary_key:
        # REPLACE finds the row by its key: a row whose key changed must first leave its old key.
        pk = [t.names[i] for i in t.primary_key]
        if any(n in after and after[n] != before.get(n) for n in pk):
            return build_delete(rc, before, opts) + "\n" + build_insert(rc, after, opts)
        return build_insert(rc, after, opts)
    index = {n: i for i, n in _columns(t)}
    sets = ", ".join(f"{quote_identifier(n)}={_lit(t, index[n], v, opts)}" for n, v in after.items() if n in index)
    where, limit = _where(t, before, opts)
    return f"UPDATE {_target(t, opts)} SET {sets} WHERE {where}{limit};"


def statement(rc: RowChange, opts: SqlOptions) -> str:
    """The SQL of one row change; with opts.rollback, the SQL that undoes it."""
    op, before, after = rc.op, rc.before, rc.after
    if opts.rollback:
        op, before, after = _INVERSE[op], after, before
    if op == rows.INSERT:
        _check(rc, after, full=True)
        return build_insert(rc, after, opts)
    if op == rows.DELETE:
        _check(rc, before, full=False)
        return build_delete(rc, before, opts)
    _check(rc, after, full=opts.rollback or (opts.replace and bool(rc.table_def.primary_key)))
    _check(rc, before, full=False)
    return build_update(rc, before, after, opts)
