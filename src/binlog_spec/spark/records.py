"""The records of a read: the output schema of each mode, and a split read into Arrow record batches
(events, row changes, transactions, or the typed rows of one table), corrupt input as records or errors."""
from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any, Iterator
import pyarrow as pa
from pyspark.sql.types import (ArrayType, BooleanType, DataType, DecimalType, DoubleType, IntegerType, LongType,
                               StringType, StructField, StructType, TimestampType, VariantType)

from binlog_spec import api, compiled
from binlog_spec.output import jsonenc
from binlog_spec.stream.planning import resync
from binlog_spec.stream.planning.pieces import Split, is_prefix
from binlog_spec.stream.planning.splits import restore
from binlog_spec.spark.types import column_type, converter
from binlog_spec.spark import variant
from binlog_spec.spark.batches import Batcher, ChangeBatcher
from binlog_spec.binlog import spec
from binlog_spec.errors import BinlogError, ColumnTypeChangedError, RowFilterError
from binlog_spec.stream.row_transactions import RowTransactions
from binlog_spec.rows import image_plan
from binlog_spec.rows.decoder import RowDecoder
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.rows.tablemap import TableDef
from binlog_spec.stream.transactions import Summarizer
from binlog_spec.spark.options import CORRUPT_COLUMN, Config, spark_spelling
from binlog_spec.spark.pushdown import Predicates


ET = spec.EventType
UTC = dt.timezone.utc
#: The rows mode's compiled loop (spark/_crecords.pyx: common transactions straight from the reader's
#: window into the batcher's columns), or None: the reference path (`_row_changes`) reads every event.
_crecords = compiled.load("binlog_spec.spark._crecords")


EVENT_FIELDS = [
    ("file", StringType()), ("pos", LongType()), ("end_log_pos", LongType()), ("type", StringType()),
    ("type_code", IntegerType()), ("timestamp", TimestampType()), ("server_id", LongType()),
    ("size", LongType()), ("flags", IntegerType()), ("checksum", LongType()), ("payload_pos", LongType()),
    ("payload_offset", LongType()), ("error", StringType()), ("body", VariantType()),
]


#: Keys of Event.to_dict() that are columns of the events mode; the rest is `body`.
EVENT_HEADER_KEYS = frozenset(name for name, _ in EVENT_FIELDS) - {"body"}
ROW_FIELDS = [
    ("file", StringType()), ("pos", LongType()), ("end_log_pos", LongType()), ("timestamp", TimestampType()),
    ("server_id", LongType()), ("gtid", StringType()), ("xid", DecimalType(20, 0)), ("schema", StringType()),
    ("table", StringType()), ("op", StringType()), ("before", VariantType()), ("after", VariantType()),
    ("row_index", IntegerType()),
]


TX_FIELDS = [
    ("file", StringType()), ("start_pos", LongType()), ("end_pos", LongType()), ("bytes", LongType()),
    ("begin_time", TimestampType()), ("commit_time", TimestampType()), ("commit_time_source", StringType()),
    ("original_commit_time", TimestampType()), ("duration_s", DoubleType()), ("server_id", LongType()),
    ("gtid", StringType()), ("xid", DecimalType(20, 0)), ("events", LongType()), ("rows", LongType()),
    ("inserts", LongType()), ("updates", LongType()), ("deletes", LongType()),
    ("tables", ArrayType(StringType())), ("complete", BooleanType()),
]


#: Columns the typed table view adds after the table's own.
TABLE_META_FIELDS = [
    ("_op", StringType()), ("_file", StringType()), ("_pos", LongType()), ("_end_log_pos", LongType()),
    ("_row_index", IntegerType()), ("_timestamp", TimestampType()), ("_server_id", LongType()),
    ("_gtid", StringType()),
]


def output_schema(cfg: Config, table: TableDef | None = None) -> StructType:
    if cfg.mode == "events":
        fields = list(EVENT_FIELDS)
    elif cfg.mode == "rows":
        fields = list(ROW_FIELDS)
    elif cfg.mode == "transactions":
        fields = list(TX_FIELDS)
    else:
        fields = table_fields(table) + list(TABLE_META_FIELDS)
    if cfg.images == "json":
        fields = [(n, StringType() if isinstance(t, VariantType) and n in ("before", "after", "body") else t)
                  for n, t in fields]
    if cfg.on_error == "skip":
        fields.append((CORRUPT_COLUMN, StringType()))
    return StructType([StructField(n, t, True) for n, t in fields])


def table_fields(table: TableDef) -> list[tuple[str, DataType]]:
    return [(name, column_type(col)) for name, col in zip(table.names, table.columns)]


def _us(seconds: int) -> int:
    return seconds * 1_000_000


def _ts_us(value: dt.datetime | None) -> int | None:
    if value is None:
        return None
    return (value - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1)


class Fault:
    """A fault yielded in order among the records: a decode fault of one event (its rows could not
    be decoded: a BinlogError), or a corrupt stretch of the stream that reading stepped over (a
    `resync.Skipped`). With ``onError=skip`` it becomes a `_corrupt_record` row and reading goes
    on; else its error is raised."""

    __slots__ = ("exc",)

    def __init__(self, exc: BinlogError | resync.Skipped):
        self.exc = exc

    @property
    def error(self) -> BinlogError:
        """The error to raise (onError=fail): a Skipped's is the reader's."""
        exc = self.exc
        return exc.error if type(exc) is resync.Skipped else exc


class _Stream:
    """The events of a split read on past the faults of the stream (`resync.iter_resuming_events`),
    its `Skipped` markers set aside in `skipped` (the filters and the schema see events only): a
    consumer takes them (`take`) before each event it gets, and at the end."""

    def __init__(self, split: Split, options, sink=None):
        self.skipped: list[resync.Skipped] = []
        self._items = resync.iter_resuming_events(split, options, sink)

    def __iter__(self):
        skipped = self.skipped
        for x in self._items:
            if type(x) is resync.Skipped:
                skipped.append(x)
            else:
                yield x

    def take(self) -> list[Fault]:
        out = [Fault(x) for x in self.skipped]
        self.skipped.clear()
        return out


def read_split(cfg: Config, schema: StructType, split: Split, table: TableDef | None = None,
               preds: Predicates | None = None, run_files: list[str] | None = None) -> Iterator[pa.RecordBatch]:
    """One partition's record batches.

    Two kinds of fault (docs/spark.md, "Errors"):

    * a fault of the stream (a CRC32 mismatch, an impossible size, garbage bytes, truncation: what
      the reader raises) raises the reader's BinlogError (file, offset, event type, message). With
      ``onError=skip`` it is one `_corrupt_record` row naming the file, the fault's offset and the
      bytes skipped, [fault offset, resume offset), and reading goes on at the next verified
      transaction boundary (`resync.iter_resuming_events`), up to the split's own end. Where resync
      cannot be trusted (relay logs, files without CRC32, not a binlog: `resync.Head.reason`), the
      file ends there: the partition ends with that row, after every row before it.
    * a decode fault of one event (a rows event without its TABLE_MAP, a row image that does
      not decode) is a `Fault` of that event: raised, or with ``onError=skip`` one
      `_corrupt_record` row in its place, and the next event is read.

    Every reader of a piece resumes where a reader of the whole file does (the same boundary
    search), never past its piece's end, and a decode fault is the same whichever piece holds its
    event: a file read whole or in pieces gives the same records, none twice.
    """
    preds = preds or Predicates()
    skip = cfg.on_error == "skip"
    tail = (None,) if skip else ()
    sink = None
    if cfg.mode == "rows" and cfg.images != "json":       # row images encoded a column at a time
        batcher: Batcher = ChangeBatcher(schema, cfg.batch_rows)
        sink = _row_sink(cfg, split, preds, batcher, tail)
        it = _row_changes(cfg, split, preds, False, run_files or [], sink)
    else:
        batcher = Batcher(schema, cfg.batch_rows)
        records = {"events": _event_records, "rows": _row_records, "transactions": _tx_records,
                   "table": _table_records}[cfg.mode]
        it = records(cfg, split, preds, table, run_files or [])
    add = batcher.add
    ready = sink.ready if sink is not None else []
    try:
        if type(batcher) is ChangeBatcher:
            add_changes = batcher.add_changes
            for changes, ev, tx in it:      # as _row_records makes its rows, a rows event at a time
                if ready:                   # the batches the compiled loop filled, before any row after them
                    yield from ready
                    ready.clear()
                if type(changes) is Fault:
                    if not skip:
                        raise changes.error
                    batch = add(_corrupt_row(batcher, cfg, split, changes.exc))
                    if batch is not None:
                        yield batch
                elif changes:
                    yield from add_changes(changes, ev.end_log_pos, tx.xid, tail)
        else:
            for row in it:
                if type(row) is Fault:
                    if not skip:
                        raise row.error
                    batch = add(_corrupt_row(batcher, cfg, split, row.exc))
                else:
                    batch = add(row + tail if skip else row)
                if batch is not None:
                    yield batch
    except (BinlogError, OSError) as exc:   # a fault of the stream: the split ends there
        if not skip:
            raise
        yield from ready
        ready.clear()
        add(_corrupt_row(batcher, cfg, split, exc))
    yield from ready
    ready.clear()
    batch = batcher.flush()
    if batch is not None:
        yield batch


def _corrupt_row(batcher: Batcher, cfg: Config, split: Split,
                 exc: Exception | resync.Skipped) -> tuple:
    """The `_corrupt_record` row of a fault: the file, the offset, the message (a Skipped's names the
    bytes skipped too); NULL elsewhere."""
    names = batcher.arrow.names
    row: list[Any] = [None] * len(names)
    row[names.index("_file" if cfg.mode == "table" else "file")] = split.ref.name
    row[names.index({"transactions": "start_pos", "table": "_pos"}.get(cfg.mode, "pos"))] = \
        getattr(exc, "offset", None)
    text = str(exc)
    row[-1] = text if getattr(exc, "file", None) else f"{split.ref.name}: {text}"
    return tuple(row)


#: The event types whose bodies each mode reads (ReadOptions.parse_bodies, as the CLI's commands:
#: api.bodies_needed adds the filters'); None: every type (the events mode outputs every body).
MODE_BODIES = {"events": None, "rows": api.ROWS_BODIES, "table": api.ROWS_BODIES,
               "transactions": api.ANALYZE_BODIES}


def _events(cfg: Config, split: Split, run_files: list[str],
            schema: SchemaTracker | None = None, sink=None) -> tuple[_Stream, Any]:
    """The split's stream (its `Skipped` set aside: `_Stream`), and its events the filters keep;
    with `schema`, every event is seen by it first (rows.observe_schema): the filters never hide
    DDL or a TABLE_MAP from it. `sink`: the compiled loop the reader gives its window to (`_row_sink`)."""
    options = dataclasses.replace(cfg.read, parse_bodies=api.bodies_needed(MODE_BODIES[cfg.mode], cfg.filters))
    stream = _Stream(split, options, sink)
    return stream, api.select_events(stream, cfg.filters, run_files, schema)


def _split_schema(split: Split) -> SchemaTracker:
    """The schema at the start of a split (its planned state), to be replayed on through it."""
    return restore(split.schema_state, SchemaTracker) if split.schema_state else SchemaTracker()


def _encoder(cfg: Config):
    """Image or body -> its column value: JSON text (images=json) or the VARIANT's (value, metadata)."""
    encode = jsonenc.dumps if cfg.images == "json" else variant.encode
    return lambda value: None if value is None else encode(value)


def _event_records(cfg, split, preds, table, run_files) -> Iterator[tuple]:
    encode = _encoder(cfg)
    stream, events = _events(cfg, split, run_files)
    for ev in events:
        if stream.skipped:
            yield from stream.take()
        if is_prefix(split, ev):
            continue
        if preds and not preds.ok_all({
                "file": ev.file, "pos": ev.pos, "end_log_pos": ev.end_log_pos, "type": ev.type,
                "type_code": ev.type_code, "timestamp": dt.datetime.fromtimestamp(ev.timestamp, UTC),
                "server_id": ev.server_id, "size": ev.size}):
            continue
        d = ev.to_dict()
        body = {k: v for k, v in d.items() if k not in EVENT_HEADER_KEYS}
        yield (ev.file, ev.pos, ev.end_log_pos, ev.type, ev.type_code, _us(ev.timestamp), ev.server_id, ev.size,
               ev.flags, ev.checksum, ev.payload_pos, ev.payload_offset, d.get("error"), encode(body))
    yield from stream.take()


def _row_sink(cfg: Config, split: Split, preds: Predicates, batcher: ChangeBatcher, tail: tuple):
    """The compiled loop of the rows mode (spark/_crecords.pyx), which puts the row changes of the common
    MariaDB transactions into `batcher`'s columns itself, or None where it does not run: not built (or the
    pure core asked for), or a read with filters, row filters, pushed predicates or ops (the reference path
    applies them)."""
    if _crecords is None or image_plan.crows is None or cfg.filters.active or preds or cfg.ops or cfg.rows.active:
        return None
    sink = _crecords.Sink(batcher, None, None, None, tail)
    sink.limit = split.end
    return sink


def _row_changes(cfg: Config, split: Split, preds: Predicates, typed: bool,
                 run_files: list[str], sink=None) -> Iterator[tuple[Any, Any, Any]]:
    """(the row changes of a rows event, that event, its transaction: a TxIdentity) of a split, in order
    (stream.row_transactions.RowTransactions: rows wait for the end of their transaction, the XID comes
    last), only those the row filters keep (`key`, `where`: each as the full read has it); a rows event
    that does not decode gives (Fault, event, TxIdentity) after the rows decoded before its fault. Rows
    events that the ops or pushed filters rule out are not decoded. On a fault of the stream, the rows
    decoded before it come first, their transaction cut (no XID), then the error is raised, or, where
    reading resumes after it, (Fault of its `Skipped`, None, None) and the rows from the boundary it
    resumes at.

    With `sink` (`_row_sink`), the reader gives its window to the compiled loop first: the transactions it
    takes are in the batcher (or its `ready` batches) when the next event comes here, and it learns the
    TABLE_MAPs read here; it takes them only between transactions of the pairing's tracker (`sink.tx`).
    """
    decoder = RowDecoder()      # the TABLE_MAPs come completed (observe_schema, under the filters)
    keep = _keep_rows(decoder, cfg.ops, preds, "_" if typed else "", typed) if cfg.ops or preds else None
    on_map = None
    if sink is not None:
        learn = sink.learn
        on_map = lambda ev: learn(ev.body_bytes(), ev.table_def)      # noqa: E731
    pairing = RowTransactions(decoder, keep=keep, fault=Fault, on_table_map=on_map)
    schema = _split_schema(split)
    if sink is not None:
        sink.decoder, sink.schema, sink.tx = decoder, schema, pairing.tx
    stream, events = _events(cfg, split, run_files, schema, sink)
    if not cfg.rows.active:
        yield from pairing.pairs(events, stream.skipped)
        return
    keeps = api.RowSelector(cfg.rows).keeps     # (key, where: as the CLI's rows command filters its changes)
    for changes, ev, tx in pairing.pairs(events, stream.skipped):
        if changes and type(changes) is not Fault:
            try:
                changes = [rc for rc in changes if keeps(rc)]
            except RowFilterError as exc:
                raise _located(exc, ev) from None
        yield changes, ev, tx


def _located(exc: RowFilterError, ev) -> RowFilterError:
    """A row filter that cannot be applied to the table of the rows event `ev` (no key, a column it lacks, a
    literal that does not fit): the file, the offset, the event type, the source's option names. It fails the
    read whatever onError says (a usage error, not a fault of the input)."""
    where = f"{ev.file}: offset {ev.pos}: {ev.type}: " if ev is not None else ""
    return RowFilterError(where + spark_spelling(str(exc)))


def _rows_selected(events, selector) -> Iterator:
    """The transactions mode's row filters: the events reduced to the rows kept, a transaction left with none
    dropped (api.select_rows, after the filters, as the CLI's analyze has them); a filter that cannot be
    applied fails naming the rows event (`_located`)."""
    last = [None]

    def tracked():
        for ev in events:
            last[0] = ev
            yield ev
    try:
        yield from api.select_rows(tracked(), selector)
    except RowFilterError as exc:
        raise _located(exc, last[0]) from None


def _keep_rows(decoder: RowDecoder, ops, preds: Predicates, prefix: str, typed: bool):
    """RowTransactions' `keep`: a rows event of the ops asked for that the pushed filters do not rule out
    (they see its header, its op, its table and GTID as the decoder knows them)."""
    def keep(ev, op) -> bool:
        if ops and op not in ops:
            return False
        if preds:
            td = decoder.tables.get(ev.fields["table_id"])
            ctx = {prefix + "file": ev.file, prefix + "pos": ev.pos, prefix + "end_log_pos": ev.end_log_pos,
                   prefix + "timestamp": dt.datetime.fromtimestamp(ev.timestamp, UTC),
                   prefix + "server_id": ev.server_id, prefix + "gtid": decoder.gtid}
            if not typed:
                ctx["op"] = op
                if td is not None:
                    ctx["schema"], ctx["table"] = td.schema, td.table
            if not preds.ok_known(ctx):
                return False
        return True
    return keep


def _each_change(groups) -> Iterator[tuple[Any, Any, Any]]:
    """(row change, its rows event, its transaction) of each row change of `_row_changes`; a Fault as it comes."""
    for changes, ev, tx in groups:
        if type(changes) is Fault:
            yield changes, ev, tx
        else:
            for rc in changes:
                yield rc, ev, tx


def _row_records(cfg, split, preds, table, run_files) -> Iterator[tuple]:
    """The rows mode's records, a tuple per row change (read_split makes the same columns a rows event
    at a time: `ChangeBatcher`)."""
    encode = _encoder(cfg)
    for changes, ev, tx in _row_changes(cfg, split, preds, False, run_files):
        if type(changes) is Fault:
            yield changes
            continue
        end, xid = ev.end_log_pos, tx.xid
        for rc in changes:
            yield (rc.file, rc.pos, end, rc.timestamp * 1_000_000, rc.server_id, rc.gtid, xid, rc.schema,
                   rc.table, rc.op, encode(rc.before), encode(rc.after), rc.row_index)


def _table_records(cfg, split, preds, table: TableDef, run_files) -> Iterator[tuple]:
    names = table.names
    types = [t for _, t in table_fields(table)]
    convs = [converter(t) for t in types]
    if cfg.images == "json":
        convs = [jsonenc.dumps if isinstance(t, VariantType) else c for t, c in zip(types, convs)]
    db, _, name = cfg.table.partition(".")
    planned = dict(zip(names, types))
    last_def, changed = None, None          # the last TableDef seen, what in it differs from `planned`
    faulted = None                          # the rows event whose fault was given (one per event)
    for rc, ev, _tx in _each_change(_row_changes(cfg, split, preds, True, run_files)):
        if type(rc) is Fault:
            yield rc
            continue
        if rc.schema != db or rc.table != name:
            continue
        if rc.table_def is not last_def:    # a TABLE_MAP came (row changes come in order)
            last_def, changed = rc.table_def, _type_changes(planned, rc.table_def)
        if changed is not None:
            if faulted is not ev:
                faulted = ev
                yield Fault(ColumnTypeChangedError(
                    f"{cfg.table}: {changed}: the typed view's schema (from the table's first TABLE_MAP "
                    "or the schema option) cannot hold its values; read this table with mode=rows, or the "
                    "files before and after the change apart", file=ev.file, offset=ev.pos, event_type=ev.type))
            continue
        images = [(rc.op, rc.before if rc.op == "delete" else rc.after)]
        if cfg.before_image and rc.op == "update":
            images.insert(0, ("update_before", rc.before))
        for op, image in images:
            if preds.wants("_op") and not preds.ok("_op", op):
                continue
            image = image or {}
            values = tuple(None if (v := image.get(n)) is None else conv(v) for n, conv in zip(names, convs))
            yield values + (op, rc.file, rc.pos, ev.end_log_pos, rc.row_index, _us(rc.timestamp), rc.server_id,
                            rc.gtid)


def _type_changes(planned: dict[str, DataType], table: TableDef) -> str | None:
    """What in `table` (a TABLE_MAP of the typed view's table) has another Spark type than the
    DataFrame's columns: 'column v is decimal(12,2) here, decimal(5,2) in the DataFrame'; None when
    every column the DataFrame has is of its type (or not in `table`)."""
    diffs = [f"column {n} is {t.simpleString()} here, {planned[n].simpleString()} in the DataFrame"
             for n, t in table_fields(table) if n in planned and t != planned[n]]
    return "; ".join(diffs) or None


def _tx_records(cfg, split, preds, table, run_files) -> Iterator[tuple]:
    s = Summarizer(count_rows=cfg.count_rows)

    def summaries():
        rows = cfg.rows.active
        stream, events = _events(cfg, split, run_files, _split_schema(split) if cfg.count_rows or rows else None)
        if rows:
            events = _rows_selected(events, api.RowSelector(cfg.rows))
        for ev in events:
            if stream.skipped:          # a corrupt stretch skipped: the transaction it cut ends there
                yield from s.finish()
                yield from stream.take()
            if is_prefix(split, ev):
                continue
            try:
                yield from s.feed(ev)
            except BinlogError as exc:  # its rows do not decode: the transaction goes on without them
                yield Fault(exc)
        yield from s.finish()
        yield from stream.take()

    for t in summaries():
        if type(t) is Fault:
            yield t
            continue
        if preds and not preds.ok_all({
                "file": t.file, "start_pos": t.start_pos, "end_pos": t.end_pos, "bytes": t.bytes,
                "begin_time": t.begin_time, "commit_time": t.commit_time,
                "commit_time_source": t.commit_time_source, "server_id": t.server_id, "gtid": t.gtid,
                "events": t.events, "rows": t.rows, "inserts": t.inserts, "updates": t.updates,
                "deletes": t.deletes}):
            continue
        yield (t.file, t.start_pos, t.end_pos, t.bytes, _ts_us(t.begin_time), _ts_us(t.commit_time),
               t.commit_time_source, _ts_us(t.original_commit_time), t.duration_s, t.server_id, t.gtid,
               t.xid, t.events, t.rows, t.inserts, t.updates, t.deletes, t.tables, t.complete)
