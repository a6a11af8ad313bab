"""The human line of the `rows` command: one row change per line, its time in a zone, images as JSON."""
from __future__ import annotations

from datetime import timezone, tzinfo
from typing import Any

from binlog_spec.binlog.event_types import DELETE, INSERT
from binlog_spec.binlog.timezones import local_text
from binlog_spec.output import jsonenc
from binlog_spec.rows.statement_text import quote_identifier
from binlog_spec.rows.decoder import RowChange


def _fmt(values_: dict[str, Any] | None) -> str:
    return jsonenc.dumps(values_)


def row_line(rc: RowChange, tz: tzinfo = timezone.utc) -> str:
    """The human format of the `rows` command: one line per row change (its time in `tz`)."""
    when = local_text(rc.timestamp, tz)
    where = f"#at {rc.pos} [{rc.row_index}] {when}" + (f" gtid {rc.gtid}" if rc.gtid else "")
    target = f"{quote_identifier(rc.schema)}.{quote_identifier(rc.table)}"
    if rc.op == INSERT:
        return f"{where} INSERT {target} {_fmt(rc.after)}"
    if rc.op == DELETE:
        return f"{where} DELETE {target} {_fmt(rc.before)}"
    return f"{where} UPDATE {target} {_fmt(rc.before)} -> {_fmt(rc.after)}"
