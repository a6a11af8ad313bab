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
#: documents' doubles); a row of a table without one needs no look for NaN (jsonenc.encode).
_FLOAT_TYPES = frozenset({FLOAT, DOUBLE, VECTOR, JSON})

#: id(table definition) -> (the definition, kept so that its id is not reused; whether its rows can hold a
#: float).
_FLOATS: dict[int, tuple[TableDef, bool]] = {}


def _floats_finite(rc: RowChange) -> bool:
    """Whether `rc`'s images hold no NaN or infinity: sure without a look for most tables."""
    seen = _FLOATS.get(id(rc.table_def))
    if seen is None or seen[0] is not rc.table_def:
        if len(_FLOATS) >= 4096:
            _FLOATS.clear()
        seen = _FLOATS[id(rc.table_def)] = (rc.table_def, any(c.type_code in _FLOAT_TYPES
                                                               for c in rc.table_def.columns))
    return not seen[1] or not (jsonenc.has_nonfinite(rc.before) or jsonenc.has_nonfinite(rc.after))


def row_json(rc: RowChange) -> str:
    """The JSON line of the `rows` command: `RowChange.to_dict` in the lossless JSON form."""
    return jsonenc.dumps(rc.to_dict(), floats_finite=_floats_finite(rc))


def _fmt(values_: dict[str, Any] | None, finite: bool) -> str:
    return jsonenc.dumps(values_, floats_finite=finite)


def row_line(rc: RowChange, tz: tzinfo = timezone.utc) -> str:
    """The human format of the `rows` command: one line per row change (its time in `tz`)."""
    when = local_text(rc.timestamp, tz)
    where = f"#at {rc.pos} [{rc.row_index}] {when}" + (f" gtid {rc.gtid}" if rc.gtid else "")
    target = f"{quote_identifier(rc.schema)}.{quote_identifier(rc.table)}"
    finite = _floats_finite(rc)
    if rc.op == INSERT:
        return f"{where} INSERT {target} {_fmt(rc.after, finite)}"
    if rc.op == DELETE:
        return f"{where} DELETE {target} {_fmt(rc.before, finite)}"
    return f"{where} UPDATE {target} {_fmt(rc.before, finite)} -> {_fmt(rc.after, finite)}"
