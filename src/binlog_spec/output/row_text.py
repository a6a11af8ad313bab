"""The lines of the `rows` command: the human line (one row change per line, its time in a zone, images as
JSON) and the JSON line."""
from __future__ import annotations

from datetime import timezone, tzinfo
from typing import Any

from binlog_spec.binlog.event_types import DELETE, INSERT
from binlog_spec.binlog.timezones import local_text
from binlog_spec.output import jsonenc
from binlog_spec.rows.column_types import DOUBLE, FLOAT, JSON, VECTOR
from binlog_spec.rows.statement_text import quote_identifier
from binlog_spec.rows.decoder import RowChange
from binlog_spec.rows.tablemap import TableDef

#: The column types whose values can hold a float (rows.values: FLOAT, DOUBLE, VECTOR, and JSON
#: documents' doubles): the rows of a table without one hold none (jsonenc.dumps's `floats`).
_FLOAT_TYPES = frozenset({FLOAT, DOUBLE, VECTOR, JSON})

#: id(table definition) -> (the definition, kept so that its id is not reused while it is here; whether
#: its rows can hold a float).
_FLOATS: dict[int, tuple[TableDef, bool]] = {}


def _floats(table: TableDef) -> bool:
    """Whether the rows of `table` can hold a float."""
    seen = _FLOATS.get(id(table))
    if seen is None or seen[0] is not table:
        if len(_FLOATS) >= 4096:
            _FLOATS.clear()
        seen = _FLOATS[id(table)] = (table, any(c.type_code in _FLOAT_TYPES for c in table.columns))
    return seen[1]


def row_json(rc: RowChange) -> str:
    """The JSON line of the `rows` command: `RowChange.to_dict` in the lossless JSON form."""
    seen = _FLOATS.get(id(rc.table_def))            # _floats, inlined for the common case
    if seen is not None and seen[0] is rc.table_def:
        return jsonenc.dumps(rc.to_dict(), floats=seen[1])
    return jsonenc.dumps(rc.to_dict(), floats=_floats(rc.table_def))


def _fmt(values_: dict[str, Any] | None, floats: bool) -> str:
    return jsonenc.dumps(values_, floats=floats)


def row_line(rc: RowChange, tz: tzinfo = timezone.utc) -> str:
    """The human format of the `rows` command: one line per row change (its time in `tz`)."""
    when = local_text(rc.timestamp, tz)
    where = f"#at {rc.pos} [{rc.row_index}] {when}" + (f" gtid {rc.gtid}" if rc.gtid else "")
    target = f"{quote_identifier(rc.schema)}.{quote_identifier(rc.table)}"
    floats = _floats(rc.table_def)
    if rc.op == INSERT:
        return f"{where} INSERT {target} {_fmt(rc.after, floats)}"
    if rc.op == DELETE:
        return f"{where} DELETE {target} {_fmt(rc.before, floats)}"
    return f"{where} UPDATE {target} {_fmt(rc.before, floats)} -> {_fmt(rc.after, floats)}"
