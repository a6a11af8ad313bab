"""Where a compiled loop may skip the transactions the filters drop (stream.filters), without an Event.

A `SkipGate` stands between the schema stage and the filters (api.select_events' `gate`) when the filters
are time bounds, schema and table filters alone (FilterOptions.skippable). It tells a compiled loop that
reads ahead of it in the reader (analysis/_ccollector.pyx under time bounds alone, stream/_cskipping.pyx:
`sink`) two things:

* `between`: the events read so far ended a transaction, or had none: the filters, and whatever consumes
  what they keep, hold nothing and are between transactions too, so the loop may decide the next
  transaction from its first event, as FilterOptions.keeps_transaction would;
* `dropping`: the loop has skipped the start of a transaction the filters drop, and handed it back
  unfinished (an event it does not take, or the end of the reader's window): the gate drops that
  transaction's remaining events, as the filters would drop them, and the loop may go on skipping them.

The gate holds the filters' set of the table ids whose rows they drop (`excluded_tables`), which a loop
adds to as the filters would, for a transaction it skipped because its tables are all dropped.

Dropped events have been seen by the schema stage (rows.observe_schema) and the reader, as every event is;
only the filters, which would drop them, do not see them. Control events always pass (the filters keep them
whatever the transaction).
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator

from binlog_spec import compiled

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import CONTROL_EVENTS
from binlog_spec.binlog.fields import bodies
from binlog_spec.stream.selection import Selection
from binlog_spec.stream.transactions import Transactions, handed_on


class SkipGate:
    __slots__ = ("tx", "between", "dropping", "excluded_tables")

    def __init__(self) -> None:
        self.tx = Transactions()
        self.excluded_tables: set[int] = set()     # (filter_events' own)
        self.between = True        # the events passed so far leave no transaction open
        self.dropping = False      # inside a transaction whose start a compiled loop skipped

    def watch(self, events: Iterable[Event]) -> Iterator[Event]:
        """The events, less the rest of a transaction a compiled loop began to skip."""
        step, control = self.tx.step, CONTROL_EVENTS
        for ev in events:
            if ev.replayed:         # (what a filtered lane hands back of the transactions it took)
                opens, ends = handed_on(ev)
                if opens:           # (one it hands on: open)
                    step(ev)
                    self.between = False
                elif ends and not self.dropping:
                    self.tx.reset()
                    self.between = True
                yield ev
                continue
            starts, ends = step(ev)
            if self.dropping:
                if starts:              # (a transaction cut short: the next one is the filters' again)
                    self.dropping = False
                elif ev.type_code not in control:
                    if ends:
                        self.dropping = False
                        self.between = True
                    continue
            self.between = ends or not self.tx.mode
            yield ev

    def skip_open(self) -> None:
        """A compiled loop skipped the first events of a transaction the filters drop (its GTID event
        opened it as BEGIN does) and hands the rest back: the gate drops them."""
        self.tx.mode, self.tx.gtid = "begin", None
        self.dropping, self.between = True, False

    def skip_done(self) -> None:
        """The loop skipped the transaction it had begun to skip to its end."""
        self.tx.reset()
        self.dropping, self.between = False, True


_cskipping = compiled.load("binlog_spec.stream._cskipping")


def sink(gate: SkipGate | None, filters, selection=None) -> Any:
    """The compiled loop (stream/_cskipping.pyx) that skips, straight from the reader's window
    (`read_events(..., sink=)`), the MariaDB transactions of rows events the filters (a
    FilterOptions.skippable) drop whole: one whose first event is outside the time bounds or from a
    server id they drop, or whose TABLE_MAPs all name tables the schema and table filters drop; `gate`
    is the one select_events puts before the filters, `selection` their Selection (the names of the
    TABLE_MAPs skipped are learnt in it as the filters learn them). None with the pure-Python core (the reference: the filters read every
    event) or no gate."""
    if _cskipping is None or gate is None:
        return None
    return _cskipping.Skipper(gate, *decisions(filters, selection))


def decisions(filters, selection=None) -> tuple:
    """What a compiled loop decides the filters' choice by (the Skipper's, the filtered lanes' of
    output/_crow_filter.pxi): (lo, hi) of the time bounds (None: no bound), the server ids kept (None: any)
    and dropped, `keeps_table` (None: no schema or table filter), the set of the (schema, table) names the
    Selection's watcher learns (None: it learns none), `_table_names`, and the GTID filters' rule (None: none;
    _gtid_rule)."""
    watched = Selection().watcher(filters) is not None
    tables = selection.tables if selection is not None and watched else None
    lo, hi = filters.time_seconds()
    by_table = bool(filters.databases or filters.exclude_databases or filters.filters_tables)
    return (lo, hi, filters.server_ids or None, filters.exclude_server_ids, filters.keeps_table if by_table else None,
            tables, _table_names, _gtid_rule(filters))


def _gtid_rule(filters) -> tuple | None:
    """What binlog/_cbytes.pxd `gtid_kept` decides a transaction's GTID by: (FilterOptions.keeps_gtid, the MariaDB
    ranges of --include-gtids and of --exclude-gtids (None: not given), whether they decide a MariaDB GTID: no GTID
    position given); None without a GTID filter."""
    if not filters.by_gtid:
        return None
    ranges = [None if s is None else {key: tuple(spans) for key, spans in s.mariadb.items()}
              for s in (filters.include_gtids, filters.exclude_gtids)]
    return filters.keeps_gtid, ranges[0], ranges[1], filters.start_gtid is None and filters.stop_gtid is None


def _table_names(raw: bytes, fde) -> tuple[int, str, str] | None:
    """(table id, schema, table) of a TABLE_MAP_EVENT's bytes as the filters read its fields, or None when
    its body does not parse (the reference path then reads it)."""
    try:
        ev = Event("", 0, spec.parse_header(raw[:spec.LEN_EVENT_HEADER]), raw, bodies.parse_event(raw, fde))
        fields = ev.fields
        return fields["table_id"], fields["schema"], fields["table"]
    except Exception:       # (whatever it is, the reference path meets it at this event)
        return None
