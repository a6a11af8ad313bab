"""Analysis of binlog files: event types, tables, transactions, DDL and a timeline.

    from binlog_spec.analysis.collector import AnalyzeOptions, Analyzer
    a = Analyzer(AnalyzeOptions(top=10))
    for ev in binlog_spec.read_events(paths):
        a.feed(ev)
    report = a.report()          # a plain dict (see report.py for the renderers)

Nothing is decoded that the figures do not need: rows are counted by
`rowwalk.RowWalker`, which steps over the row images by their lengths and
null bitmaps without building a value. Transactions are delimited and timed
by `txsummary.Summarizer` (without its row decoder); only top-N heaps of them
are kept, so memory stays bounded whatever the size of the input.

Bytes: an event's bytes are its on-disk size (`len_event`). Events inside a
TRANSACTION_PAYLOAD_EVENT are counted under their own type too, but their
(uncompressed) bytes are reported apart (`inner_bytes`) and never added to the
total, so the total is the sum of the on-disk events (file size - 4 for a
whole, unfiltered file).
"""
from __future__ import annotations

import dataclasses
import heapq
import itertools
import warnings
from typing import Any, Iterable

from binlog_spec import compiled
from binlog_spec.binlog import spec
from binlog_spec.errors import BinlogError, MalformedEventError, MissingTableMapError, RowsLayoutError
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import DELETE, INSERT, ROW_OPS, UPDATE
from binlog_spec.rows.walker import RowWalker, RowWalkError
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.errors import SchemaWarning
from binlog_spec.rows.statement_text import TX_CONTROL, is_ddl
from binlog_spec.rows.tablemap import TableDef
from binlog_spec.binlog.event_types import CONTROL_EVENTS, QUERY_EVENTS
from binlog_spec.stream.filters import FilterOptions
from binlog_spec.stream.transactions import Summarizer, TxSummary, _Open
from binlog_spec.analysis import figures
from binlog_spec.analysis.figures import MAX_FLAGGED, MIN_BUCKET, OPS, _error_dict, _iso
from binlog_spec.options import AnalyzeOptions  # noqa: F401 - (its home: options)

ET = spec.EventType
SORT_KEYS = ("bytes", "rows", "events", "name", "inserts", "updates", "deletes")
#: How a comment before a statement starts (schema.statement_offset skips them).
_COMMENT_OPENINGS = (b"/*", b"--", b"#")
#: At most this many DDL statements are listed (the count goes on).
MAX_DDL = 10_000
#: At most this many rows events whose rows could not be counted are listed (the count goes on).
MAX_ROW_ERRORS = 1000



class _TableStat:
    __slots__ = ("events", "rows", "bytes")

    def __init__(self) -> None:
        self.events = {op: 0 for op in OPS}
        self.rows = {op: 0 for op in OPS}
        self.bytes = {op: 0 for op in OPS}


class _TxTracker(Summarizer):
    """txsummary.Summarizer: the same transactions, times and figures (tests/test_analyze.py checks
    it), but the TABLE_MAP names come from the analyzer's cache and rows events inside BEGIN ...
    COMMIT take a short path: building every event's fields costs more than the rest of the
    analysis. Rows are counted by the analyzer."""

    def __init__(self) -> None:
        super().__init__(count_rows=False)

    def feed(self, ev: Event, table_name: str | None = None) -> list[TxSummary] | tuple[()]:
        t = self.open
        if ev.type_code in ROW_OPS and self.tx.mode == "begin" and t is not None:
            # inside BEGIN ... COMMIT a rows event neither starts nor ends anything (Transactions.step):
            # the most common event, counted without the rest
            t.add(ev)
            return ()
        return super().feed(ev, table_name)


class Analyzer:
    def __init__(self, options: AnalyzeOptions = AnalyzeOptions()):
        if options.filters is None:     # (no filter: the report names none)
            options = dataclasses.replace(options, filters=FilterOptions())
        self.options = options
        self.files: dict[str, dict[str, int]] = {}
        self.types: dict[int, list[int]] = {}      # type code -> [events, bytes, inner events, inner bytes]
        self.tables: dict[str, _TableStat] = {}
        self.timeline: dict[int, list[int]] = {}   # bucket start -> [events, rows, bytes]
        self.untimed = [0, 0, 0]                    # events with timestamp 0: [events, rows, bytes]
        #: Filtered: the control events (kept whatever their time) are in no bucket: [events, rows, bytes].
        self.outside = [0, 0, 0]
        filtered = options.filters.active or (options.row_filters is not None and options.row_filters.active)
        self._outside_codes = frozenset(map(int, CONTROL_EVENTS)) if filtered else frozenset()
        self._bucket_ts, self._bucket = 0, self.untimed    # the last timestamp seen, and its bucket
        self.faults: list[dict[str, Any]] = []
        self.ddl: list[dict[str, Any]] = []
        self.ddl_count = 0
        self.total_bytes = 0
        self.total_events = 0
        self.total_rows = 0
        self.first_ts: int | None = None
        self.last_ts: int | None = None
        self._walker = RowWalker()
        self._maps: dict[int, tuple[TableDef, str]] = {}     # table id -> (table, "schema.table")
        self._map_cache: dict[tuple[bytes, bool, int], TableDef] = {}
        #: The CREATE/ALTER/... statements replayed, for what a TABLE_MAP lacks and a row's size needs
        #: (the precision of MariaDB 5.3 TIME(n)/DATETIME(n)/TIMESTAMP(n)); `_schema_gen` counts them.
        self._schema = SchemaTracker()
        self._schema_gen = 0
        #: DDL not replayed yet; None once the events come with their TABLE_MAPs completed
        #: (Event.table_def, rows.observe_schema under the filters): then nothing is replayed here.
        self._pending_ddl: list[tuple[str, str]] | None = []
        self._mariadb = False
        self._last_map: str | None = None
        self._summarizer = _TxTracker()
        self._tx_rows = 0
        self._tx_ops = {op: 0 for op in OPS}
        self._seq = itertools.count()
        self.tx_count = 0
        self.tx_sources: dict[str, int] = {}
        self.tx_bytes_total = 0
        self.tx_rows_total = 0
        self.tx_big = 0
        self.tx_long = 0
        self.tx_flagged = 0
        self.tx_hist: dict[int, int] = {}
        self.tx_max_duration = 0.0
        self._top_bytes: list = []
        self._top_duration: list = []
        self._flagged: list = []
        self.row_errors = 0
        self.row_error_list: list[BinlogError] = []
        #: With the compiled loop (`sink`): the TABLE_MAPs mapped with the schema stage's table
        #: (body bytes -> (table, name, schema generation, server collation)), and that schema.
        self._fast_maps: dict[bytes, tuple] | None = None
        self._fast_schema = None

    # ------------------------------------------------------------------
    def feed(self, ev: Event) -> None:
        header = ev.header
        code = header.type_code
        inner = ev.payload_pos is not None
        size = header.len_event
        ts = header.timestamp
        t = self.types.get(code)
        if t is None:
            t = self.types[code] = [0, 0, 0, 0]
        f = self.files.get(ev.file)
        if f is None:
            f = self.files[ev.file] = {"events": 0, "bytes": 0}
        rows = 0
        if inner:
            t[2] += 1
            t[3] += size
        else:
            t[0] += 1
            t[1] += size
            self.total_bytes += size
            f["bytes"] += size
        f["events"] += 1
        self.total_events += 1
        if code == ET.format_description_event:
            if ev.error is None:
                fde = ev.fields
                self._mariadb = fde["num_post_header_lens"] >= ET.annotate_rows_event
            self._maps.clear()
            if self._fast_maps:
                self._fast_maps.clear()
        elif code == ET.table_map_event:
            self._last_map = None
            if ev.error is None:
                self._table_map(ev)
        elif code in ROW_OPS:
            rows = self._rows(ev, ROW_OPS[code], size)
        elif code in QUERY_EVENTS:
            statement = ev.statement_bytes()
            head = statement[:40].lstrip().upper()
            if not head.startswith(TX_CONTROL):
                # is_ddl reads the first tokens: the start, unless comments put them further on
                start = statement if head.startswith(_COMMENT_OPENINGS) else statement[:256]
                if is_ddl(start.decode("utf-8", "replace")):
                    self._ddl(ev)
        if code in self._outside_codes:     # (filtered) outside the kept transactions' times
            b = self.outside
        elif ts == self._bucket_ts:         # most events: the same second as the one before
            b = self._bucket
        elif ts:
            if self.first_ts is None or ts < self.first_ts:
                self.first_ts = ts
            if self.last_ts is None or ts > self.last_ts:
                self.last_ts = ts
            bucket = ts - ts % self.options.bucket_s
            b = self.timeline.get(bucket)
            if b is None:
                b = self.timeline[bucket] = [0, 0, 0]
            self._bucket_ts, self._bucket = ts, b
        else:
            b = self.untimed
        b[0] += 1
        b[1] += rows
        if not inner:
            b[2] += size
        for tx in self._summarizer.feed(ev, self._last_map if code == ET.table_map_event else None):
            self._close(tx)

    def feed_all(self, events: Iterable[Event]) -> "Analyzer":
        for ev in events:
            self.feed(ev)
        return self

    def fault(self, exc: BinlogError) -> None:
        """A file could not be read past `exc.offset`: the report says so (what was read before counts)."""
        self.faults.append(_error_dict(exc))
        self.files.setdefault(exc.file, {"events": 0, "bytes": 0})   # a file with no readable event too

    # ------------------------------------------------------------------
    def _table_map(self, ev: Event) -> None:
        body = ev.body_bytes()
        if ev.table_def is not None:        # rows.observe_schema saw every event: no replay here
            self._pending_ddl = None
            table = ev.table_def
            self._last_map = name = f"{table.schema}.{table.table}"
            self._maps[table.table_id] = (table, name)
            if self._fast_maps is not None:     # the compiled loop maps the same bytes alike
                if len(self._fast_maps) > 4096:
                    self._fast_maps.clear()
                s = self._fast_schema
                self._fast_maps[body] = (table, name, s.generation, s.server_collation)
            return
        if self._pending_ddl:
            with warnings.catch_warnings():     # a statement sqlglot cannot parse: the table is forgotten
                warnings.simplefilter("ignore", SchemaWarning)
                for db, q in self._pending_ddl:
                    self._schema.observe_query(db, q)
            self._pending_ddl = []
        key = (body, self._mariadb, self._schema_gen)
        table = self._map_cache.get(key)
        if table is None:
            try:
                table = self._schema.complete(TableDef.from_event(ev, self._mariadb))
            except MalformedEventError as exc:     # its rows are then rows of an unknown table
                self._row_error(exc)
                return
            if len(self._map_cache) > 4096:
                self._map_cache.clear()
            self._map_cache[key] = table
        self._last_map = name = f"{table.schema}.{table.table}"
        self._maps[table.table_id] = (table, name)

    def _rows(self, ev: Event, op: str, size: int) -> int:
        if ev.error is not None:
            return 0
        table_id, n, before, after, buf = ev.rows_parts()
        mapped = self._maps.get(table_id)
        if mapped is None:
            self._row_error(MissingTableMapError(f"no TABLE_MAP_EVENT defines table id {table_id}: its rows "
                                                 "are not counted", file=ev.file, offset=ev.pos,
                                                 event_type=ev.type))
            name, count = f"<table id {table_id}>", 0
        else:
            table, name = mapped
            try:
                count, _ = self._walker.walk(table, n, before, after, buf, op == UPDATE,
                                             ev.type_code == ET.partial_update_rows_event)
            except (RowWalkError, RowsLayoutError, IndexError) as exc:
                self._row_error(MalformedEventError(f"rows of `{name}` not counted: {exc or type(exc).__name__}",
                                                    file=ev.file, offset=ev.pos, event_type=ev.type))
                count = 0
        st = self.tables.get(name)
        if st is None:
            st = self.tables[name] = _TableStat()
        st.events[op] += 1
        st.rows[op] += count
        st.bytes[op] += size
        self.total_rows += count
        self._tx_rows += count
        self._tx_ops[op] += count
        return count

    def _row_error(self, exc: BinlogError) -> None:
        self.row_errors += 1
        if len(self.row_error_list) < MAX_ROW_ERRORS:
            self.row_error_list.append(exc)

    def _ddl(self, ev: Event) -> None:
        q = ev.fields.get("query", "")
        q = q if isinstance(q, str) else str(q)
        db = ev.fields.get("db", "")
        self.ddl_count += 1
        if len(self.ddl) < MAX_DDL:
            self.ddl.append({"file": ev.file, "pos": ev.pos, "time": _iso(ev.header.timestamp),
                             "database": db, "statement": q})
        if self._pending_ddl is not None:   # replayed when a TABLE_MAP needs it (see _table_map)
            self._pending_ddl.append((db if isinstance(db, str) else "", q))
        self._schema_gen += 1

    def _close(self, tx: TxSummary) -> None:
        tx.rows = self._tx_rows
        tx.inserts, tx.updates, tx.deletes = self._tx_ops[INSERT], self._tx_ops[UPDATE], self._tx_ops[DELETE]
        self._tx_rows = 0
        self._tx_ops = {op: 0 for op in OPS}
        o = self.options
        self.tx_count += 1
        self.tx_sources[tx.commit_time_source] = self.tx_sources.get(tx.commit_time_source, 0) + 1
        size = tx.bytes
        duration = tx.duration_s
        self.tx_bytes_total += size
        self.tx_rows_total += tx.rows
        self.tx_max_duration = max(self.tx_max_duration, duration)
        bucket = max(MIN_BUCKET, max(size, 1).bit_length())
        self.tx_hist[bucket] = self.tx_hist.get(bucket, 0) + 1
        big, long_ = size > o.big_trx_bytes, duration > o.long_trx_seconds
        self.tx_big += big
        self.tx_long += long_
        seq = next(self._seq)
        d = None
        if o.top > 0:
            for heap, key in ((self._top_bytes, size), (self._top_duration, duration)):
                if len(heap) < o.top:
                    d = d or self._tx_dict(tx)
                    heapq.heappush(heap, (key, -seq, d))
                elif (key, -seq) > heap[0][:2]:
                    d = d or self._tx_dict(tx)
                    heapq.heapreplace(heap, (key, -seq, d))
        if big or long_:
            self.tx_flagged += 1
            if len(self._flagged) < MAX_FLAGGED:
                self._flagged.append(d or self._tx_dict(tx))

    def _tx_dict(self, tx: TxSummary) -> dict[str, Any]:
        o = self.options
        return {"file": tx.file, "start_pos": tx.start_pos, "end_pos": tx.end_pos,
                "begin_time": _iso(tx.begin_time), "commit_time": _iso(tx.commit_time),
                "duration_s": int(tx.duration_s), "time_source": tx.commit_time_source,
                "gtid": tx.gtid, "xid": tx.xid, "bytes": tx.bytes, "events": tx.events, "rows": tx.rows,
                "inserts": tx.inserts, "updates": tx.updates, "deletes": tx.deletes,
                "tables": list(tx.tables), "complete": tx.complete,
                "big": tx.bytes > o.big_trx_bytes, "long": tx.duration_s > o.long_trx_seconds}

    # ------------------------------------------------------------------
    # The compiled loop's way in (analysis/_ccollector.pyx, `sink`).
    _new_table_stat = _TableStat

    def _adopt_fast(self, file: str, start_pos: int, header: spec.EventHeader, gtid: str, begin: int,
                    last_ts: int, end: int, size: int, events: int, xid: int | None, tables: list[str],
                    ops: dict[str, int]) -> None:
        """The transaction the compiled loop opened (at a MariaDB GTID_EVENT) and counted so far, handed
        to the tracker as the reference path would have it after the same events."""
        first = Event(file, start_pos, header, b"", None)
        t = _Open(first, gtid)
        t.begin, t.last_ts, t.end, t.size, t.events, t.xid = begin, last_ts, end, size, events, xid
        t.tables = dict.fromkeys(tables)
        s = self._summarizer
        s.open, s.tx.mode, s.tx.gtid = t, "begin", gtid
        for op, count in ops.items():
            self._tx_ops[op] += count
            self._tx_rows += count

    def _skip_table(self, raw: bytes, fde: spec.FormatDescription, file: str, pos: int) -> TableDef | None:
        """The compiled loop's window mode: the table of a TABLE_MAP_EVENT (`raw`: its bytes) in a
        transaction the filters drop, as the schema stage makes it (rows.decoder.table_def), for the loop
        to step over its rows; None when its body does not parse or its fields do not fit (the reference
        path then reads it)."""
        from binlog_spec.binlog.fields import bodies
        from binlog_spec.rows.decoder import table_def
        try:
            ev = Event(file, pos, spec.parse_header(raw[:spec.LEN_EVENT_HEADER]), raw,
                       bodies.parse_event(raw, fde))
            return table_def(ev, self._mariadb, self._fast_schema, {})
        except Exception:       # (whatever it is, the reference path meets it at this event)
            return None

    def finish(self) -> None:
        for tx in self._summarizer.finish():
            self._close(tx)

    def report(self) -> dict[str, Any]:
        """The report: a plain dict (figures.report; report.py renders it)."""
        self.finish()
        return figures.report(self)


_ccollector = compiled.load("binlog_spec.analysis._ccollector")


def sink(analyzer: Analyzer, schema, gate=None, selection=None) -> Any:
    """The compiled loop (analysis/_ccollector.pyx) that counts most of a MariaDB binlog's transactions
    for `analyzer` straight from the reader's window (`read_events(..., sink=)`), or None with the
    pure-Python core: every event then goes through `Analyzer.feed`, the reference. `schema`: the
    SchemaTracker of the schema stage (rows.observe_schema) that completes the TABLE_MAPs the analyzer
    is fed; the events must reach the analyzer unfiltered and in order, or, with `gate` (a
    stream.skipping.SkipGate that select_events puts before the filters), filtered by time bounds alone
    (the analyzer's options.filters.kept_seconds()): the loop then takes the transactions those keep
    whole, counted in `selection` (the filters' Selection) too, and skips the ones they drop."""
    if _ccollector is None or getattr(schema, "generation", None) is None:
        return None
    row_filters = analyzer.options.row_filters
    if row_filters is not None and row_filters.active:      # (--key, --where: the rows events reduced after it)
        return None
    filters = analyzer.options.filters
    window = filters.kept_seconds() if gate is not None else None
    skipper = None
    if gate is not None and window is None:     # server ids, schema and table filters: after the skipping loop
        from binlog_spec.stream import skipping
        skipper = skipping.sink(gate, filters, selection) if filters.skippable() else None
        if skipper is None:
            return None
        lo, hi, server_ids, exclude_server_ids, _keeps, learnt, _names, keeps_gtid = skipping.decisions(filters,
                                                                                                    selection)
    loop = _ccollector.Sink(analyzer, schema)
    if window is not None:
        loop.window(*window, gate, selection)
    elif skipper is not None:
        loop.window(lo, hi, gate, selection, skipper, server_ids, exclude_server_ids, learnt, keeps_gtid)
    return loop


def analyze(events: Iterable[Event], options: AnalyzeOptions = AnalyzeOptions(),
            faults: list[BinlogError] | None = None, analyzer: Analyzer | None = None) -> dict[str, Any]:
    """The report of an event stream. `faults`: the list `read_events(..., faults=)` fills while the
    events are read; each becomes an entry of the report's "faults". `analyzer`: the one to feed (the
    one a `sink` counts for), else a new one with `options`."""
    a = analyzer if analyzer is not None else Analyzer(options)
    if faults is None:
        return a.feed_all(events).report()
    done = 0
    feed = a.feed
    for ev in events:
        while done < len(faults):     # a broken file's fault comes before the next file's first event
            a.fault(faults[done])
            done += 1
        feed(ev)
    for exc in faults[done:]:
        a.fault(exc)
    return a.report()


__all__ = ["AnalyzeOptions", "Analyzer", "analyze", "sink", "SORT_KEYS"]
