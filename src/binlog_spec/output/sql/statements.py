"""Row changes to SQL statements; rollback reuses the same builders with the images swapped.

The builders below are the reference. Where the compiled core runs (binlog_spec.compiled), `statement`
first asks the table's compiled formatter (output/sql/_cstatements.pyx, made once per table and options by
`formatter`, its pieces precomputed here with these same functions) for the text of the common case, and
falls back to the builders for anything else; the text is the same.
"""
from __future__ import annotations

from typing import Any

from binlog_spec import compiled
from binlog_spec.rows.decoder import DELETE, INSERT, UPDATE
from binlog_spec.rows.decoder import RowChange
from binlog_spec.output.sql.minimal import changed_columns
from binlog_spec.output.sql.text import InexactMatch, json_diff_sql, literal, match, set_order
from binlog_spec.rows.statement_text import quote_identifier, quote_table
from binlog_spec.rows.tablemap import TableDef
from binlog_spec.rows.json.json_binary import JsonDiffs
from binlog_spec.errors import RowRefusedError, SqlGenerationError
from binlog_spec.binlog import spec
from binlog_spec.options import SqlOptions  # noqa: F401 - (its home: options)

#: The compiled formatter's module, or None (the builders alone run then). Tests set it to None to run
#: the pure path in the same process.
csql = compiled.load("binlog_spec.output.sql._cstatements")



_INVERSE = {INSERT: DELETE, DELETE: INSERT, UPDATE: UPDATE}


def _columns(t: TableDef) -> list[tuple[int, str]]:
    """(index, name) of the columns a statement writes (TableDef.writable_columns)."""
    return t.writable_columns


def _check(rc: RowChange, image: dict[str, Any], full: bool) -> None:
    t = rc.table_def
    if not t.has_names:
        raise SqlGenerationError(f"column names of {quote_table(t.schema, t.table)} are unknown: use a binlog "
                                 "written with binlog_row_metadata=FULL, or --schema", file=rc.file,
                                 offset=rc.pos)
    if full and any(n not in image for _, n in _columns(t)):
        raise SqlGenerationError(f"the row image of {quote_table(t.schema, t.table)} lacks columns (binlog_row_image "
                                 "MINIMAL or NOBLOB): it cannot be written back whole", file=rc.file, offset=rc.pos)


def _lit(t: TableDef, i: int, value: Any, opts: SqlOptions) -> str:
    return literal(value, t.columns[i], opts.mysql_json)


def _where(rc: RowChange, image: dict[str, Any], opts: SqlOptions) -> tuple[str, str]:
    """(WHERE clause, LIMIT clause) that find the row: its key (TableDef.row_key: the primary key
    from the metadata or DDL, else a NOT NULL unique key) when the image holds it; else every
    column of the image, each as a condition that matches its value exactly (sqltext.match),
    and LIMIT 1. A column no condition can match refuses the row."""
    t = rc.table_def
    names = t.names
    key = [(i, names[i]) for i in t.row_key]
    if key and all(image.get(n) is not None for _, n in key):
        return " AND ".join(f"{quote_identifier(n)}={_lit(t, i, image[n], opts)}" for i, n in key), ""
    parts = []
    for i, n in enumerate(names):
        if n not in image:
            continue
        try:
            parts.append(match(quote_identifier(n), image[n], t.columns[i], opts.mysql_json))
        except InexactMatch as exc:
            raise RowRefusedError(f"row {rc.row_index} of {quote_table(t.schema, t.table)}: column `{n}` cannot be "
                                     f"matched exactly in a WHERE clause ({exc}), and the table has no key "
                                     "known (binlog_row_metadata=FULL, its CREATE TABLE in the binlog, or "
                                     "--schema give it)", file=rc.file, offset=rc.pos) from None
    return " AND ".join(parts) or "1=1", " LIMIT 1"


def _target(t: TableDef, opts: SqlOptions) -> str:
    return quote_table(opts.rewrite_db.get(t.schema, t.schema), t.table)


def build_insert(rc: RowChange, image: dict[str, Any], opts: SqlOptions) -> str:
    t = rc.table_def
    verb = "REPLACE" if opts.replace else "INSERT"
    cols = [(i, n) for i, n in _columns(t) if n in image]
    values = ", ".join(_lit(t, i, image[n], opts) for i, n in cols)
    if opts.complete_insert or len(cols) != len(_columns(t)) or any(t.generated) or any(t.invisible):
        names = ", ".join(quote_identifier(n) for _, n in cols)
        return f"{verb} INTO {_target(t, opts)} ({names}) VALUES ({values});"
    return f"{verb} INTO {_target(t, opts)} VALUES ({values});"


def build_delete(rc: RowChange, image: dict[str, Any], opts: SqlOptions) -> str:
    where, limit = _where(rc, image, opts)
    return f"DELETE FROM {_target(rc.table_def, opts)} WHERE {where}{limit};"


def build_update(rc: RowChange, before: dict[str, Any], after: dict[str, Any], opts: SqlOptions) -> str:
    t = rc.table_def
    if opts.replace and t.primary_key and not _has_diffs(after):
        # REPLACE finds the row by its key: a row whose key changed must first leave its old key.
        pk = [t.names[i] for i in t.primary_key]
        if any(n in after and after[n] != before.get(n) for n in pk):
            return build_delete(rc, before, opts) + "\n" + build_insert(rc, after, opts)
        return build_insert(rc, after, opts)
    index = {n: i for i, n in _columns(t)}
    if opts.minimal_update:     # only the columns whose value changed (output.sql.minimal)
        names = [n for n in changed_columns(before, after) if n in index]
        sets = ", ".join(f"{quote_identifier(n)}={_set_value(t, index[n], n, after[n], opts)}" for n in names)
    else:
        sets = ", ".join(f"{quote_identifier(n)}={_set_value(t, index[n], n, v, opts)}"
                         for n, v in after.items() if n in index)
    where, limit = _where(rc, before, opts)
    if not sets:                # (--minimal-update: no column changed; nothing to set)
        return f"-- no column changed: UPDATE {_target(t, opts)} WHERE {where}{limit};"
    return f"UPDATE {_target(t, opts)} SET {sets} WHERE {where}{limit};"


def _has_diffs(image: dict[str, Any]) -> bool:
    return any(type(v) is JsonDiffs for v in image.values())


def _set_value(t: TableDef, i: int, name: str, value: Any, opts: SqlOptions) -> str:
    """What SET gives a column: its value, or the JSON functions that apply its diffs to it."""
    if type(value) is JsonDiffs:
        return json_diff_sql(quote_identifier(name), value.diffs)
    return _lit(t, i, value, opts)


def _refuse_diff_rollback(rc: RowChange) -> None:
    for name, value in (rc.after or {}).items():
        if type(value) is JsonDiffs:
            t = rc.table_def
            raise SqlGenerationError(
                f"row {rc.row_index} of {quote_table(t.schema, t.table)}: JSON column `{name}` was logged as a partial "
                "update (binlog_row_value_options=PARTIAL_JSON) and its old document is not in the before "
                "image (binlog_row_image MINIMAL or NOBLOB): the old values are not in the binlog, so it "
                "cannot be undone", file=rc.file, offset=rc.pos)


#: Columns whose every non-NULL value the compiled formatter hands to `_lit` (sql_text.literal writes
#: their ints and texts its own way).
_CALLED_TYPES = frozenset({spec.ColumnType.json})
#: (id(table), id(options)) -> (table, options, its compiled formatter or None); bounded.
_FORMATTERS: dict[tuple[int, int], tuple[TableDef, SqlOptions, Any]] = {}
_MAX_FORMATTERS = 1024


def formatter(t: TableDef, opts: SqlOptions):
    """The compiled formatter (_cstatements.RowFormatter) of this table's statements under these options, made
    once; None when the compiled core does not run, or the table's names are unknown or not ASCII."""
    if opts.minimal_update:     # (the builders write --minimal-update's statements)
        return None
    key = (id(t), id(opts))
    got = _FORMATTERS.get(key)
    if got is not None and got[0] is t and got[1] is opts:
        return got[2]
    made = _make_formatter(csql, t, opts) if csql is not None else None
    if len(_FORMATTERS) >= _MAX_FORMATTERS:
        _FORMATTERS.clear()
    _FORMATTERS[key] = (t, opts, made)
    return made


def _make_formatter(module: Any, t: TableDef, opts: SqlOptions):
    """The pieces of build_insert, build_delete and build_update that do not depend on the row, made by
    the same functions, and a kind per column (sql_text.literal's fast cases, or the callback)."""
    names, writable = t.names, _columns(t)
    if not t.has_names or not all(0 <= i < len(names) for i in t.row_key):
        return None
    verb, target = "REPLACE" if opts.replace else "INSERT", _target(t, opts)
    if opts.complete_insert or any(t.generated) or any(t.invisible):
        insert = f"{verb} INTO {target} ({', '.join(quote_identifier(n) for _, n in writable)}) VALUES ("
    else:
        insert = f"{verb} INTO {target} VALUES ("
    kinds, extras = [], []
    for c in t.columns:     # BIT: its width as sql_text.literal takes it; else a SET's member order
        if c.type_code == spec.ColumnType.bit:
            kinds.append(module.KINDS["bit"])
            extras.append(c.meta.get("bytes", 0) * 8 + c.meta.get("bits", 0))
        else:
            kinds.append(module.KINDS["call" if c.type_code in _CALLED_TYPES else "value"])
            extras.append(set_order(c) if c.set_values else None)
    try:
        return module.RowFormatter(
            kinds, insert, writable, f"DELETE FROM {target} WHERE ",
            [(i, names[i], f"{quote_identifier(names[i])}=") for i in t.row_key], f"UPDATE {target} SET ",
            {n: (i, f"{quote_identifier(n)}=") for i, n in writable},
            lambda i, value: _lit(t, i, value, opts), lambda i, name, value: _set_value(t, i, name, value, opts),
            extras)
    except ValueError:      # a name that is not ASCII: the builders write it
        return None


#: Operation -> the formatter's kind of statement (_cstatements.RowFormatter.texts).
_KINDS = {INSERT: 0, DELETE: 1, UPDATE: 2}


def leading_statements(changes: list[RowChange], opts: SqlOptions) -> tuple[list[str], int]:
    """The statements (`statement`'s texts) of the leading row changes of one rows event that the
    compiled formatter writes, and how many; `statement` writes the rest, from the first it does not
    (that one may raise). ([], 0) when the compiled core does not run."""
    if csql is None or not changes:
        return [], 0
    rc = changes[0]
    fast = formatter(rc.table_def, opts)
    if fast is None:
        return [], 0
    op = _INVERSE[rc.op] if opts.rollback else rc.op
    if op == UPDATE and opts.replace:
        return [], 0
    return fast.texts(changes, rc.table_def, rc.op, _KINDS[op], opts.rollback, opts.rollback, JsonDiffs)


def statement(rc: RowChange, opts: SqlOptions) -> str:
    """The SQL of one row change; with opts.rollback, the SQL that undoes it."""
    op, before, after = rc.op, rc.before, rc.after
    if opts.rollback:
        _refuse_diff_rollback(rc)
        op, before, after = _INVERSE[op], after, before
        if opts.minimal_update and op == UPDATE and before is not None and after is not None \
                and len(before) < len(after):
            before = {**after, **before}    # the row after the change: what its after image left out is as before
    if csql is not None:
        fast = formatter(rc.table_def, opts)
        if fast is not None:
            text = None
            if op == INSERT:
                if type(after) is dict:
                    text = fast.insert(after)
            elif op == DELETE:
                if type(before) is dict:
                    text = fast.delete(before)
            elif not opts.replace and type(before) is dict and type(after) is dict:
                text = fast.update(before, after, opts.rollback)
            if text is not None:
                return text
    whole_before, whole_after = whole_images(rc.op, opts, rc.table_def, rc.op == UPDATE and _has_diffs(rc.after))
    if opts.rollback:       # the images as logged, swapped above
        whole_before, whole_after = whole_after, whole_before
    if op == INSERT:
        _check(rc, after, full=whole_after)
        return build_insert(rc, after, opts)
    if op == DELETE:
        _check(rc, before, full=whole_before)
        return build_delete(rc, before, opts)
    _check(rc, after, full=whole_after)
    _check(rc, before, full=whole_before)
    return build_update(rc, before, after, opts)


def whole_images(op: str, opts: SqlOptions, table: TableDef, diffs: bool = False) -> tuple[bool, bool]:
    """Whether the before image and the after image of a row change of `op` (as logged) must hold every
    column a statement writes for `statement` to write it under `opts` (else SqlGenerationError; the
    pre-pass, output/sql/writable.py, asks the same of the columns-present bitmaps). A forward INSERT of a
    MINIMAL or NOBLOB image names the columns it has: the others take their defaults, as on a replica.
    A rollback writes the old row whole: undoing a DELETE inserts it, undoing an UPDATE sets it. --replace
    writes an UPDATE of a table with a PRIMARY KEY as a REPLACE of the new row whole, but where it holds
    JSON diffs (`diffs`), which stay an UPDATE."""
    if opts.rollback:
        return op != INSERT, False
    return False, op == UPDATE and opts.replace and bool(table.primary_key) and not diffs
