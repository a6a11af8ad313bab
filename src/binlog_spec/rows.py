"""Row events -> row changes with typed values.

A RowDecoder follows a stream of events: it keeps the TABLE_MAP_EVENTs (by
table id) and the GTID of the current transaction, and turns each rows
event into RowChange objects: inserts, updates (before and after images)
and deletes. Values come from `values.decode_value`, column by column,
honouring the columns-present bitmaps (MINIMAL/NOBLOB images) and the null
bitmaps.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterator

from binlog_spec import json_path, spec, values
from binlog_spec.errors import MalformedEventError, MissingTableMapError
from binlog_spec.event import Event
from binlog_spec.tablemap import TableDef

ET = spec.EventType

INSERT, UPDATE, DELETE = "insert", "update", "delete"

#: Rows event code -> operation.
ROW_OPS: dict[int, str] = {
    ET.pre_ga_write_rows_event: INSERT, ET.write_rows_event_v1: INSERT, ET.write_rows_event: INSERT,
    ET.write_rows_compressed_event_v1: INSERT, ET.write_rows_compressed_event: INSERT,
    ET.pre_ga_update_rows_event: UPDATE, ET.update_rows_event_v1: UPDATE, ET.update_rows_event: UPDATE,
    ET.update_rows_compressed_event_v1: UPDATE, ET.update_rows_compressed_event: UPDATE,
    ET.partial_update_rows_event: UPDATE,
    ET.pre_ga_delete_rows_event: DELETE, ET.delete_rows_event_v1: DELETE, ET.delete_rows_event: DELETE,
    ET.delete_rows_compressed_event_v1: DELETE, ET.delete_rows_compressed_event: DELETE,
}

GTID_TYPES = (ET.gtid_log_event, ET.gtid_tagged_log_event, ET.gtid_event)
#: MariaDB's own event types start here (ANNOTATE_ROWS_EVENT); a MariaDB FDE array covers them.
MARIADB_FIRST_EVENT = ET.annotate_rows_event


@dataclass(frozen=True)
class RowChange:
    file: str
    pos: int
    timestamp: int
    server_id: int
    gtid: str | None
    schema: str
    table: str
    op: str
    before: dict[str, Any] | None
    after: dict[str, Any] | None
    row_index: int
    table_def: TableDef

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "pos": self.pos,
            "timestamp": datetime.fromtimestamp(self.timestamp, tz=timezone.utc).isoformat().replace("+00:00", "Z"),
            "server_id": self.server_id,
            "gtid": self.gtid,
            "schema": self.schema,
            "table": self.table,
            "op": self.op,
            "before": self.before,
            "after": self.after,
        }


def present_columns(bitmap: bytes, count: int) -> list[int]:
    """Indexes of the columns whose bit is set (LSB first in each byte)."""
    return [i for i in range(count) if bitmap[i >> 3] >> (i & 7) & 1]


def decode_image(buf: bytes, pos: int, table: TableDef, present: list[int],
                 names: list[str], partial: frozenset[int] = frozenset()) -> tuple[dict[str, Any], int]:
    """One row image: a null bitmap over the present columns, then their non-NULL values.

    Columns in `partial` (JSON columns of a PARTIAL_UPDATE_ROWS_EVENT after image) hold a
    list of JsonDiff operations instead of a document.
    """
    n_null = (len(present) + 7) >> 3
    nulls = buf[pos:pos + n_null]
    if len(nulls) < n_null:
        raise values.ValueDecodeError(f"row image ends inside its null bitmap at offset {pos}")
    pos += n_null
    row: dict[str, Any] = {}
    for k, i in enumerate(present):
        if nulls[k >> 3] >> (k & 7) & 1:
            row[names[i]] = None
            continue
        try:
            if i in partial:
                row[names[i]], pos = _json_diff(buf, pos, table.columns[i])
                continue
            row[names[i]], pos = values.decode_value(buf, pos, table.columns[i])
        except (values.ValueDecodeError, IndexError, ValueError) as exc:
            raise values.ValueDecodeError(f"column {names[i]} ({spec.COLUMN_TYPE_NAMES.get(table.columns[i].type_code)})"
                                          f" at row offset {pos}: {exc}") from None
    return row, pos


def _json_diff(buf: bytes, pos: int, col: values.Column) -> tuple[list, int]:
    n = col.meta.get("pack_length", 4)
    length = int.from_bytes(buf[pos:pos + n], "little")
    start = pos + n
    if start + length > len(buf):
        raise values.ValueDecodeError(f"JSON diff of {length} bytes runs past the row image")
    return values.decode_json_diff(buf[start:start + length]), start + length


def _packed(buf: bytes, pos: int) -> tuple[int, int]:
    first = buf[pos]
    if first < 0xFB:
        return first, pos + 1
    size = {0xFC: 2, 0xFD: 3, 0xFE: 8}.get(first)
    if size is None:
        raise values.ValueDecodeError(f"bad packed integer 0x{first:02x}")
    return int.from_bytes(buf[pos + 1:pos + 1 + size], "little"), pos + 1 + size


def _partial_columns(buf: bytes, pos: int, table: TableDef) -> tuple[frozenset[int], int]:
    """PARTIAL_UPDATE_ROWS after image prefix: value_options, then one bit per JSON column."""
    options, pos = _packed(buf, pos)
    if not options & PARTIAL_JSON_UPDATES:
        return frozenset(), pos
    json_cols = [i for i, c in enumerate(table.columns) if c.type_code == spec.ColumnType.json]
    nbytes = (len(json_cols) + 7) >> 3
    bits = buf[pos:pos + nbytes]
    return frozenset(c for k, c in enumerate(json_cols) if bits[k >> 3] >> (k & 7) & 1), pos + nbytes


PARTIAL_JSON_UPDATES = 1


class RowDecoder:
    """Follows events; yields RowChange for every row of every rows event."""

    def __init__(self, schema_source: Any = None):
        self.tables: dict[int, TableDef] = {}
        self.gtid: str | None = None
        #: Whether the current file uses MariaDB's event numbering (its FDE array reaches type 160+).
        self.mariadb = False
        #: Supplies names and signs where the binlog has none (see schema.py).
        self.schema_source = schema_source

    def feed(self, ev: Event) -> Iterator[RowChange]:
        code = ev.type_code
        if ev.error is not None:
            return
        if code == ET.format_description_event:
            self.mariadb = ev.fields["num_post_header_lens"] >= MARIADB_FIRST_EVENT
        elif code == ET.table_map_event:
            table = TableDef.from_fields(ev.fields, self.mariadb)
            if self.schema_source is not None:
                table = self.schema_source.complete(table)
            self.tables[table.table_id] = table
        elif code in GTID_TYPES:
            self.gtid = ev.fields.get("gtid")
        elif code == ET.anonymous_gtid_log_event:
            self.gtid = None
        elif code in ROW_OPS:
            yield from self._rows(ev, ROW_OPS[code])
        elif self.schema_source is not None and code in (ET.query_event, ET.query_compressed_event):
            self.schema_source.observe_query(ev.fields.get("db", ""), ev.fields["query"])

    def _rows(self, ev: Event, op: str) -> Iterator[RowChange]:
        f = ev.fields
        table = self.tables.get(f["table_id"])
        if table is None:
            raise MissingTableMapError(f"no TABLE_MAP_EVENT defines table id {f['table_id']}",
                                       file=ev.file, offset=ev.pos, event_type=ev.type)
        n = f["num_columns"]
        if n > len(table.columns):
            raise MalformedEventError(f"rows event has {n} columns, its TABLE_MAP {len(table.columns)}",
                                      file=ev.file, offset=ev.pos, event_type=ev.type)
        names = table.names
        before_cols = present_columns(f["columns_before_image"], n)
        after_cols = present_columns(f["columns_after_image"], n) if op == UPDATE else before_cols
        buf: bytes = f["rows"]
        pos, index = 0, 0
        try:
            while pos < len(buf):
                before = after = None
                if op == INSERT:
                    after, pos = decode_image(buf, pos, table, before_cols, names)
                elif op == DELETE:
                    before, pos = decode_image(buf, pos, table, before_cols, names)
                elif ev.type_code == ET.partial_update_rows_event:
                    before, pos = decode_image(buf, pos, table, before_cols, names)
                    partial, pos = _partial_columns(buf, pos, table)
                    after, pos = decode_image(buf, pos, table, after_cols, names, partial)
                    for i in partial:
                        diffs = after[names[i]]
                        if names[i] in before and before[names[i]] is not None:
                            after[names[i]] = json_path.apply_diffs(before[names[i]], diffs)
                        else:
                            after[names[i]] = {"json_diff": [d._asdict() for d in diffs]}
                else:
                    before, pos = decode_image(buf, pos, table, before_cols, names)
                    after, pos = decode_image(buf, pos, table, after_cols, names)
                yield RowChange(ev.file, ev.pos, ev.timestamp, ev.server_id, self.gtid, table.schema, table.table,
                                op, before, after, index, table)
                index += 1
        except values.ValueDecodeError as exc:
            raise MalformedEventError(f"row {index}: {exc}", file=ev.file, offset=ev.pos,
                                      event_type=ev.type) from None


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _fmt(values_: dict[str, Any] | None) -> str:
    from binlog_spec import jsonenc
    return jsonenc.dumps(values_)


def row_line(rc: RowChange) -> str:
    """The human format of the `rows` command: one line per row change."""
    when = datetime.fromtimestamp(rc.timestamp, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
    where = f"#at {rc.pos} [{rc.row_index}] {when}" + (f" gtid {rc.gtid}" if rc.gtid else "")
    target = f"{_quote(rc.schema)}.{_quote(rc.table)}"
    if rc.op == INSERT:
        return f"{where} INSERT {target} {_fmt(rc.after)}"
    if rc.op == DELETE:
        return f"{where} DELETE {target} {_fmt(rc.before)}"
    return f"{where} UPDATE {target} {_fmt(rc.before)} -> {_fmt(rc.after)}"


def read_rows(events, schema_source: Any = None) -> Iterator[RowChange]:
    """Row changes of an event stream."""
    decoder = RowDecoder(schema_source)
    for ev in events:
        yield from decoder.feed(ev)
