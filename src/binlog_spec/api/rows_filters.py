"""The row filters of the API (stream.row_filters): `--key` and `--where` as a program gives them.

    rows = api.RowSelector(api.row_filter_options(key="42", tables=("crm.customers",)))
    events = api.select_events(api.read_events(paths), filters, paths, schema=SchemaTracker(), rows=rows)

* `row_filter_options` - the frozen RowFilterOptions of the options' text (UsageError naming the option);
* `RowSelector` - what select_events' `rows` takes: it keeps a row change when its before or its after image
  matches, and raises errors.RowFilterError (a UsageError: exit 2) naming the table and column it cannot be
  applied to;
* `row_filter_problem` - the pre-pass of a script (sql --sql/--sql2): the first table of the kept events the
  row filters cannot be applied to, before a byte is written.
"""
from __future__ import annotations

from typing import Iterable

from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import ET
from binlog_spec.errors import RowFilterError
from binlog_spec.stream.row_filters import RowFilterOptions, RowSelector, row_filter_options, select_rows


def row_filter_problem(events: Iterable[Event], selector: RowSelector) -> RowFilterError | None:
    """The RowFilterError of the first TABLE_MAP in `events` (select_events' output, completed by a schema)
    whose table the row filters cannot be applied to; None when there is none."""
    code = int(ET.table_map_event)
    for ev in events:
        if ev.type_code == code and ev.error is None and ev.table_def is not None:
            try:
                selector.check_table(ev.table_def)
            except RowFilterError as exc:
                return exc
    return None


__all__ = ["RowFilterError", "RowFilterOptions", "RowSelector", "row_filter_options", "row_filter_problem",
           "select_rows"]
