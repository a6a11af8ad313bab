"""The compiled lane of `sql --sql2` (forward): output/_crow_text.pyx's RowLane in its SQL mode writes the
BEGIN, the statements and the COMMIT of the common MariaDB transactions straight from the reader's window
(`SqlImage`, output/_crow_sql.pxi), where script.forward over the builders of statements.py is the
reference. The plans of its statements are made here, per table and row-image layout, with the builders'
own functions: the statement prefixes (`statements._target`, the INSERT's column list where the builders
write one), each column's `name`= piece (quote_identifier), the ENUM members' literals (text.literal) and
the SET members' text. A table or layout the lane would not write exactly as the builders do (names
unknown, an INSERT image that lacks a writable column, a row without a key, a kind it has no literal for)
is left to the reference.

`rollback_lane` is the same lane in its rollback mode (output/_crow_undo.pxi), where script.rollback is the
reference: the same plans with the images swapped, as statements.statement swaps them (a WRITE row's image
is a DELETE's, a DELETE row's an INSERT's, an UPDATE row's before image the SET, whole, and its after image
the WHERE), the undo spooled for script.rollback to read back.
"""
from __future__ import annotations

import functools
from typing import Any

from binlog_spec.binlog.event_types import DELETE, INSERT, ROW_OPS, UPDATE
from binlog_spec.options import ScriptOptions, SqlOptions
from binlog_spec.output import row_text
from binlog_spec.output.sql.statements import _target
from binlog_spec.output.sql.text import literal
from binlog_spec.rows.statement_text import quote_identifier
from binlog_spec.rows.walker import present_columns

#: SqlImage's roles of a column: one of INSERT's VALUES, one of UPDATE's SET.
_VALUE, _SET = 1, 2
#: SqlImage.write's statement of an operation.
_OPS = {INSERT: 0, DELETE: 1, UPDATE: 2}


def sql_lane(schema: Any, opts: ScriptOptions, filtering: Any = None, counted: Any = None) -> Any:
    """The lane (a reader sink, as row_text.json_lane's) of a forward executable script under `opts`, or None
    where the reference writes it all: the pure-Python core, --sql (commented), --replace, --minimal-update.
    `filtering`: the filters it runs under (row_text.lane_filter's), None for none; `counted`: json_lane's."""
    ctext = row_text._crow_text
    if ctext is None or opts.commented or opts.sql.replace or opts.sql.rollback or opts.sql.minimal_update:
        return None
    return ctext.RowLane(row_text._LaneTables(schema, functools.partial(_images, opts=opts.sql)), {}, True,
                         filt=filtering, counted=counted)


def rollback_lane(schema: Any, opts: ScriptOptions, spool: Any) -> Any:
    """The lane of a rollback's executable script under `opts`, which writes the undo of the transactions it
    takes to `spool` (script.rollback's, output.rollback.spool.Spool), or None where script.rollback writes it
    all: the pure-Python core, --sql (commented), --replace, --minimal-update."""
    ctext = row_text._crow_text
    if ctext is None or opts.commented or opts.sql.replace or opts.sql.minimal_update:
        return None
    images = functools.partial(_images, opts=opts.sql, rollback=True)
    return ctext.RowLane(row_text._LaneTables(schema, images), {}, True, spool)


def _images(table: Any, code: int, layout: bytes, opts: SqlOptions, rollback: bool = False) -> tuple | None:
    """(before, after or None) SqlImages of a table's rows events of this column count and bitmaps, or None.
    With `rollback`, the images of the undo: the first image's, then the second's, then the rows' label
    ((schema as the statements name it, table, operation undone): the undo summary counts by it)."""
    op = ROW_OPS.get(code)
    if op is None or not table.has_names:
        return None
    n, size = layout[0], (layout[0] + 7) >> 3
    bitmaps = [layout[1:1 + size]] + ([layout[1 + size:1 + 2 * size]] if op == UPDATE else [])
    if any(len(b) != size for b in bitmaps):
        return None
    key = tuple(table.row_key)
    target = _target(table, opts)
    writable = dict(table.writable_columns)
    images = []
    for k, bitmap in enumerate(bitmaps):
        present = present_columns(bitmap, n)
        if rollback:
            got = _undo_image(table, op, k, present, target, key, writable, opts)
            if got is None:
                return None
            images.append(got)
            continue
        if op == INSERT:
            role, keyed = _VALUE, False
            if not set(writable) <= set(present):
                return None         # (the builders name the columns the image has)
            if opts.complete_insert or any(table.generated) or any(table.invisible):
                names = ", ".join(quote_identifier(name) for _, name in table.writable_columns)
                prefix = f"INSERT INTO {target} ({names}) VALUES ("
            else:
                prefix = f"INSERT INTO {target} VALUES ("
        elif op == DELETE or k == 0:
            role, keyed = 0, True
            prefix = f"DELETE FROM {target} WHERE " if op == DELETE else ""
        else:
            role, keyed, prefix = _SET, False, f"UPDATE {target} SET "
        if keyed and (not key or not set(key) <= set(present)):
            return None             # (the builders match the whole image)
        try:
            plan = _plan(table, present, role, key if keyed else (), writable)
            if plan is None:
                return None
            images.append(row_text._crow_text.SqlImage(plan, prefix.encode("utf-8"), len(key) if keyed else 0))
        except UnicodeEncodeError:      # (a name holding undecoded bytes: the reference writes its rows)
            return None
    if rollback:        # (and the label of the rows the undo restores: output.rollback.summary.UndoSpool's)
        return images[0], (images[1] if len(images) > 1 else None), \
            (opts.rewrite_db.get(table.schema, table.schema), table.table, op)
    return images[0], (images[1] if len(images) > 1 else None)


def _undo_image(table: Any, op: str, k: int, present: list[int], target: str, key: tuple, writable: dict,
                opts: SqlOptions) -> Any:
    """The SqlImage of image `k` of a rows event of `op` in its undo (statements.statement's, images swapped):
    undoing an INSERT deletes its row by key, a DELETE inserts its row whole, an UPDATE sets its before image
    whole where its after image's key is; None where the lane leaves it."""
    if op == DELETE or (op == UPDATE and k == 0):
        if not set(writable) <= set(present):
            return None             # (the reference refuses an undo of a row not logged whole)
        if op == DELETE:
            role, keyed = _VALUE, False
            if opts.complete_insert or any(table.generated) or any(table.invisible):
                names = ", ".join(quote_identifier(name) for _, name in table.writable_columns)
                prefix = f"INSERT INTO {target} ({names}) VALUES ("
            else:
                prefix = f"INSERT INTO {target} VALUES ("
        else:
            role, keyed, prefix = _SET, False, f"UPDATE {target} SET "
    else:
        role, keyed = 0, True
        prefix = f"DELETE FROM {target} WHERE " if op == INSERT else ""
    if keyed and (not key or not set(key) <= set(present)):
        return None
    try:
        plan = _plan(table, present, role, key if keyed else (), writable)
        if plan is None or "\n" in prefix or any(b"\n" in step[7] for step in plan):
            return None             # (a name with a newline: the undo's lines are reversed by newlines)
        return row_text._crow_text.SqlImage(plan, prefix.encode("utf-8"), len(key) if keyed else 0)
    except UnicodeEncodeError:      # (a name holding undecoded bytes: the reference writes its rows)
        return None


def _plan(table: Any, present: list[int], role: int, key: tuple, writable: dict) -> list[tuple] | None:
    """SqlImage's plan of the present columns: rows.image_plan's column plan, the role, the key slot, the
    `name`= piece."""
    names = table.names
    if len({names[i] for i in present}) != len(present):
        return None
    kinds = row_text._crow_text.KINDS
    plan = []
    for i in present:
        col = table.columns[i]
        got = row_text.lane_column(col)
        if got is None:
            return None
        kind, a, b, c, obj = got
        if kind == "bit":         # its width, as text.literal takes it from the metadata
            a = col.meta.get("bytes", 0) * 8 + col.meta.get("bits", 0)
            if not 0 < a <= 64:
                return None
        elif kind == "enum" and obj is not None:
            obj = tuple(literal(m, col).encode("utf-8") for m in obj)
        elif kind == "set" and obj is not None:
            if not all(type(m) is str for m in obj) or len(set(obj)) != len(obj):
                return None
            obj = tuple(m.encode("utf-8") for m in obj)
        plan.append((kinds[kind], a, b, c, obj, role if i in writable else 0, key.index(i) if i in key else -1,
                     f"{quote_identifier(names[i])}=".encode("utf-8")))
    return plan
