"""Two views of row changes for row-shaped questions ("who changed customer 42, and when?"):

* `history_line` - `rows --format history`: a row's history compactly, one line per change: its time, its
  GTID (``-`` without one), the operation, the table, the row's key, and what changed. An UPDATE shows the
  columns whose value changed as ``col: old → new`` (a column the before image lacks, binlog_row_image=MINIMAL,
  shows ``?`` as its old value); an INSERT or DELETE shows its key, or every column of a table with no
  known key. Values are written as the JSON lines write them.
* `json_with_statement` - `rows --format jsonl --with-statement`: the JSON line with the statement text and
  the thread id of the change (stream.row_context), null where the binlog has none.
"""
from __future__ import annotations

from datetime import timezone, tzinfo
from typing import Any

from binlog_spec.binlog.event_types import DELETE, INSERT
from binlog_spec.binlog.timezones import local_text
from binlog_spec.output import jsonenc
from binlog_spec.rows.decoder import RowChange
from binlog_spec.rows.statement_text import quote_identifier

#: Between a column's old and new value.
ARROW = "→"


def json_with_statement(rc: RowChange, statement: str | None, thread_id: int | None) -> str:
    """row_text.row_json's line with "statement" and "thread_id" after its fields."""
    line = rc.to_dict()
    line["statement"] = statement
    line["thread_id"] = thread_id
    return jsonenc.dumps(line, floats=rc.table_def.holds_floats, decoded=True)


def _value(value: Any, floats: bool) -> str:
    return jsonenc.dumps(value, floats=floats, decoded=True)


def _key_columns(rc: RowChange, image: dict[str, Any]) -> list[str] | None:
    """The names of the table's key (TableDef.row_key) when the image holds them all; None otherwise."""
    table = rc.table_def
    key = table.row_key
    names = table.names
    if not key or any(i >= len(names) for i in key):
        return None
    cols = [names[i] for i in key]
    return cols if all(c in image for c in cols) else None


def _pairs(image: dict[str, Any], cols, floats: bool) -> str:
    return " ".join(f"{quote_identifier(c)}={_value(image[c], floats)}" for c in cols)


def history_line(rc: RowChange, tz: tzinfo = timezone.utc) -> str:
    """The history line of a row change (its time in `tz`)."""
    floats = rc.table_def.holds_floats
    head = f"{local_text(rc.timestamp, tz)} {rc.gtid or '-'} {rc.op.upper()} " \
           f"{quote_identifier(rc.schema)}.{quote_identifier(rc.table)}"
    if rc.op in (INSERT, DELETE):
        image = (rc.after if rc.op == INSERT else rc.before) or {}
        cols = _key_columns(rc, image)
        return f"{head} {_pairs(image, image if cols is None else cols, floats)}".rstrip()
    before, after = rc.before or {}, rc.after or {}
    cols = _key_columns(rc, before)
    key = f" {_pairs(before, cols, floats)}" if cols else ""
    changes = [f"{quote_identifier(c)}: {_value(before[c], floats) if c in before else '?'} {ARROW} "
               f"{_value(v, floats)}" for c, v in after.items() if c not in before or not _same(before[c], v)]
    return f"{head}{key}: " + (", ".join(changes) if changes else "no column changed")


def _same(a: Any, b: Any) -> bool:
    """Equal values of one column (NaN equal to NaN: a FLOAT that stayed NaN did not change)."""
    return a == b or (a != a and b != b) if type(a) is type(b) else False
