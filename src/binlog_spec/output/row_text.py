"""The lines of the `rows` command: the human line (one row change per line, its time in a zone, images as
JSON) and the JSON line."""
from __future__ import annotations

from datetime import timezone, tzinfo
from typing import Any

from binlog_spec.binlog.event_types import DELETE, INSERT
from binlog_spec.binlog.timezones import local_text
from binlog_spec.output import jsonenc
from binlog_spec.rows.statement_text import quote_identifier
from binlog_spec.rows.decoder import RowChange


def row_json(rc: RowChange) -> str:
    """The JSON line of the `rows` command: `RowChange.to_dict` in the lossless JSON form."""
    return jsonenc.dumps(rc.to_dict(), floats=rc.table_def.holds_floats, decoded=True)


def _fmt(values_: dict[str, Any] | None, floats: bool) -> str:
    return jsonenc.dumps(values_, floats=floats, decoded=True)


def row_line(rc: RowChange, tz: tzinfo = timezone.utc) -> str:
    """The human format of the `rows` command: one line per row change (its time in `tz`)."""
    when = local_text(rc.timestamp, tz)
    where = f"#at {rc.pos} [{rc.row_index}] {when}" + (f" gtid {rc.gtid}" if rc.gtid else "")
    target = f"{quote_identifier(rc.schema)}.{quote_identifier(rc.table)}"
    floats = rc.table_def.holds_floats
    if rc.op == INSERT:
        return f"{where} INSERT {target} {_fmt(rc.after, floats)}"
    if rc.op == DELETE:
        return f"{where} DELETE {target} {_fmt(rc.before, floats)}"
    return f"{where} UPDATE {target} {_fmt(rc.before, floats)} -> {_fmt(rc.after, floats)}"
