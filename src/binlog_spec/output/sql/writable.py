"""Whether a SQL script (--sql, --sql2, forward or --rollback) can be written whole from its events,
known before its first byte: the pre-pass that keeps `sql --sql2 | mysql` from running half a script.

`problems(events, options)` follows the events a script would be written from (already through the
schema stage and the filters: api.select_events), keeps the tables of their TABLE_MAPs and, for each
rows event, asks of its table and of its columns-present bitmaps what `statements.statement` would
refuse of its rows (SqlGenerationError, the refusals that stop a script; a row refused by
RowRefusedError leaves a comment and the script goes on, and is not one of these):

* the column names are unknown (no binlog_row_metadata=FULL, no CREATE TABLE in --schema or the files);
* a rollback undoes a DELETE or an UPDATE with an INSERT or a SET of the whole old row: its before
  image must hold every column a statement writes (binlog_row_image MINIMAL or NOBLOB leave some out;
  a PARTIAL_UPDATE_ROWS_EVENT's JSON diffs then have no old document to undo them from);
* --replace writes an UPDATE of a table with a PRIMARY KEY as a REPLACE of the whole new row: its
  after image must hold every such column (but for JSON diffs, which stay an UPDATE).

No row value is decoded, but those of a PARTIAL_UPDATE_ROWS_EVENT whose bitmaps leave the answer to
its rows (--replace: whether a JSON diff stays one); those rows are decoded and written as the script
would. An INSERT whose after image lacks columns is written with the columns it has (as a replica
applies it): it is no problem. A problem is one table and one cause, with the first rows event that
meets it and how many do. A rows event the run cannot read (its layout contradicts its TABLE_MAP, or no
TABLE_MAP defines its table) ends the pass: the run stops there, as at any fault of a broken binlog.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterable

from binlog_spec import compiled
from binlog_spec.binlog import spec

from binlog_spec.binlog.fields import bodies
from binlog_spec.binlog.reader import BinlogReader
from binlog_spec.options import ReadOptions
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import DELETE, QUERY_EVENTS, ROW_OPS, UPDATE, is_mariadb
from binlog_spec.errors import BinlogError, RowRefusedError, SqlGenerationError
from binlog_spec.output.sql.statements import SqlOptions, statement, whole_images
from binlog_spec.rows.decoder import RowDecoder
from binlog_spec.rows.walker import check_rows, present_columns
from binlog_spec.rows.statement_text import quote_identifier, quote_table
from binlog_spec.rows.tablemap import TableDef

ET = spec.EventType
FDE, TABLE_MAP = int(ET.format_description_event), int(ET.table_map_event)
PAYLOAD = int(ET.transaction_payload_event)
QUERIES = frozenset({int(ET.query_event), int(ET.query_compressed_event)})    # (those the schema stage reads)
ET_JSON = int(spec.ColumnType.json)

#: Causes, and what to do about each.
NAMES = "names"
BEFORE_IMAGE = "before image"
AFTER_IMAGE = "after image"
JSON_DIFFS = "json diffs"

_ADVICE = {
    NAMES: "column names are unknown (the binlog has none, binlog_row_metadata=MINIMAL or older, and neither "
           "--schema nor a CREATE TABLE in the files gives them): give its CREATE TABLE with --schema FILE "
           "(mysqldump --no-data), or leave it out (--exclude-table {table})",
    BEFORE_IMAGE: "the before images of its DELETE and UPDATE rows lack columns (binlog_row_image MINIMAL or "
                  "NOBLOB): a rollback writes the old rows whole, and the binlog does not hold them; leave it out "
                  "(--exclude-table {table})",
    JSON_DIFFS: "{columns} logged as partial updates (binlog_row_value_options=PARTIAL_JSON) and its before "
                "images lack the old documents (binlog_row_image MINIMAL or NOBLOB): the old values are not in the "
                "binlog, so a rollback cannot undo them; leave it out (--exclude-table {table})",
    AFTER_IMAGE: "the after images of its UPDATE rows lack columns (binlog_row_image MINIMAL or NOBLOB): "
                 "--replace writes the new rows whole; drop --replace, or leave it out (--exclude-table {table})",
}


@dataclass
class Problem:
    """Rows events of one table that the script cannot write, for one cause."""

    file: str
    offset: int
    event_type: str
    schema: str
    table: str
    cause: str
    events: int = 1
    #: JSON_DIFFS: the JSON columns the before image lacks, named.
    columns: str = ""

    def __str__(self) -> str:
        where = quote_table(self.schema, self.table)
        more = f" (and {self.events - 1} more rows events of it)" if self.events > 1 else ""
        advice = _ADVICE[self.cause].format(table=f"{self.schema}.{self.table}", columns=self.columns)
        return f"{self.file}: offset {self.offset}: {self.event_type}: {where}{more}: {advice}"


class _Keyed:
    """What whole_images reads of a table, for a table taken as keyed."""

    primary_key = (0,)


_KEYED = _Keyed()


def _full(bitmap: bytes | None, count: int, table: TableDef) -> bool:
    """Whether an image of this bitmap holds every column a statement writes (TableDef.writable_columns)."""
    if bitmap is None:
        return False
    present = set(present_columns(bitmap, count))
    return all(i in present for i, _ in table.writable_columns)


def causes(table: TableDef, op: str, count: int, before: bytes, after: bytes | None,
           options: SqlOptions, keyed: bool = False) -> tuple[str, ...]:
    """What keeps the rows of one rows event from being written, from its bitmaps alone (the refusals of
    statements.statement that stop a script: names unknown, and the images statements.whole_images
    wants whole); () when nothing does. `keyed`: take the table as having a PRIMARY KEY whatever its
    TableDef says (a quick pass without the DDL)."""
    if not table.has_names:
        return (NAMES,)
    whole_before, whole_after = whole_images(op, options, _KEYED if keyed else table)
    if whole_before and not _full(before, count, table):
        return (BEFORE_IMAGE,)
    if whole_after and not _full(after, count, table):
        return (AFTER_IMAGE,)
    return ()


def _parts(ev: Event, fde: spec.FormatDescription | None) -> tuple[int, int, bytes, bytes | None, int]:
    """(table id, column count, before bitmap, after bitmap or None, length of the rows) of a rows event,
    read at the spec's offsets without parsing its body (spec.rows_offsets), else from its parsed fields."""
    code = ev.type_code
    if fde is not None and not ev.is_inner:
        try:
            body = ev.body_bytes()
            o = spec.rows_offsets(code, fde.post_header_len(code), body)
            after = None if o.ofs_columns_after_image is None else \
                body[o.ofs_columns_after_image:o.ofs_columns_after_image + o.len_columns_bitmap]
            return (o.table_id, o.num_columns, body[o.ofs_columns_before_image:o.ofs_columns_before_image
                                                    + o.len_columns_bitmap], after, len(body) - o.ofs_rows)
        except (*spec.SpecError, ValueError, IndexError):
            pass
    table_id, count, before, after, rows = ev.rows_parts()
    return table_id, count, before, after, len(rows)


def _decoded_causes(decoder: RowDecoder, ev: Event, op: str, options: SqlOptions) -> tuple[str, ...]:
    """The causes of a rows event whose rows decide (a PARTIAL_UPDATE_ROWS_EVENT's JSON diffs): each
    row written as the script writes it."""
    try:
        for rc in decoder._rows(ev, op):
            try:
                statement(rc, options)
            except RowRefusedError:
                continue
            except SqlGenerationError:
                return (AFTER_IMAGE if not options.rollback else BEFORE_IMAGE,)
    except BinlogError:
        return ()       # the run meets it, and reports it as a broken binlog
    return ()


def _met(table: TableDef, op: str, count: int, before: bytes, after: bytes | None, len_rows: int,
         options: SqlOptions, keyed: bool) -> tuple[str, ...] | None:
    """The causes of a rows event of `table` (see `causes`); None when its layout contradicts its TABLE_MAP
    (rows.walker.check_rows): the run stops there, as at any fault of a broken binlog."""
    try:
        check_rows(table, count, before, after if op == UPDATE else None, len_rows)
    except BinlogError:
        return None
    return causes(table, op, count, before, after, options, keyed)


def problems(events: Iterable[Event], options: SqlOptions, exact: bool = True, sink=None) -> list[Problem]:
    """The problems of the rows events in `events` (see the module doc), in the order first met.
    `exact`: rows events whose bitmaps leave the answer to their rows are decoded; when False, they
    count as problems, and --replace takes every table as keyed: the quick pass, without the DDL, of a
    caller that checks again exactly when it finds any (it finds every problem the exact pass finds), and
    it stops at the first it finds. `sink`: the `sink` the events are read with (an exact pass of unfiltered
    events), which takes, straight from the reader's window, the events this loop needs no Event for."""
    decoder = RowDecoder()      # its TABLE_MAPs: completed by the schema stage, else made of the event
    observe, row_ops = decoder.observe, ROW_OPS
    fde = None
    found: dict[tuple[str, str, str], Problem] = {}
    if sink is not None and exact:
        sink.bind(decoder.tables, found, _judge(options))
    else:
        sink = None
    for ev in events:
        code = ev.type_code
        op = row_ops.get(code) if ev.error is None else None
        if op is None:
            if code == FDE and ev.error is None:
                try:
                    fde = spec.parse_fde(ev.raw[spec.LEN_EVENT_HEADER:])
                except Exception:  # noqa: BLE001 - the run reports a broken FDE
                    fde = None
            if code == TABLE_MAP or code == FDE:     # (the decoder's other events are not needed here)
                try:
                    observe(ev)
                except BinlogError:
                    pass        # a TABLE_MAP that does not fit: the run stops there, as a broken binlog
                else:
                    if sink is not None and code == TABLE_MAP:
                        _learn(sink, ev, decoder.tables)
            if sink is not None:
                if code == FDE:
                    sink.reset()
                elif code in QUERIES and ev.error is None:
                    sink.query_seen = True
            continue
        try:
            table_id, count, before, after, len_rows = _parts(ev, fde)
        except (BinlogError, KeyError):
            break               # a rows event that cannot be read: the run stops there, a broken binlog
        table = decoder.tables.get(table_id)
        # (no TABLE_MAP defines it, or its layout contradicts its TABLE_MAP: the run stops there)
        met = None if table is None else _met(table, op, count, before, after, len_rows, options, not exact)
        if met is None:
            break
        if met == (AFTER_IMAGE,) and code == ET.partial_update_rows_event and exact:
            met = _decoded_causes(decoder, ev, op, options)
        columns = ""
        if met == (BEFORE_IMAGE,) and code == ET.partial_update_rows_event:
            missing = set(range(count)) - set(present_columns(before, count))
            json = [quote_identifier(n) for i, n in enumerate(table.names)
                    if i in missing and table.columns[i].type_code == ET_JSON]
            if json:
                met, columns = (JSON_DIFFS,), ("JSON column " if len(json) == 1 else "JSON columns ") + ", ".join(json)
        for cause in met:
            key = (table.schema, table.table, cause)
            if key in found:
                found[key].events += 1
            else:
                found[key] = Problem(ev.file, ev.pos, ev.type, table.schema, table.table, cause, columns=columns)
        if found and not exact:
            break
    return list(found.values())


#: The events a pass of `problems` reads, its schema stage's (rows.decoder.observe_schema) and the reader's
#: own (a transaction payload it expands): the sink passes over every other event.
READ = frozenset({FDE, TABLE_MAP, PAYLOAD, int(ET.start_encryption_event)} | {int(c) for c in QUERY_EVENTS}
                 | {int(c) for c in ROW_OPS})

_cwritable = compiled.load("binlog_spec.output.sql._cwritable")


def sink(schema=None):
    """The compiled loop (output/sql/_cwritable.pyx) that takes, straight from the reader's window
    (`read_events(..., sink=)`), the events an exact `problems` pass of unfiltered events, through the schema
    stage with `schema` (a SchemaTracker), needs no Event for: the events neither reads, the TABLE_MAPs met
    before, the rows events whose verdict is known; give it to `problems` too. None with the pure-Python core
    (the reference: `problems` reads every event)."""
    if _cwritable is None:
        return None
    return _cwritable.Prepass(schema, bytes(1 if code in READ else 0 for code in range(256)))


def _judge(options: SqlOptions):
    """The sink's verdict on a rows event of a v1/v2 type: the (schema, table, cause) keys of `problems`
    (`_met`, exact), or None where the pass ends."""
    def judge(table: TableDef, code: int, count: int, before: bytes, after: bytes | None,
              len_rows: int) -> tuple | None:
        met = _met(table, ROW_OPS[code], count, before, after, len_rows, options, False)
        return None if met is None else tuple((table.schema, table.table, cause) for cause in met)
    return judge


def _learn(sink, ev: Event, tables: dict) -> None:
    """A TABLE_MAP `problems` mapped: the table the schema stage made of it, for the sink to map again."""
    table = ev.table_def
    if ev.error is None and table is not None and tables.get(table.table_id) is table:
        sink.learn(ev.body_bytes(), table)


def may_have_problems(paths: list, options: SqlOptions, read: ReadOptions) -> bool | None:
    """The quick pass of an unfiltered run, in the reader's scan mode (BinlogReader.scan: the framing loop
    steps over the bodies, compiled where the compiled core runs): only the TABLE_MAPs are parsed (once per
    body), and the rows events whose bitmaps matter (a rollback's DELETEs and UPDATEs, --replace's
    UPDATEs) are read at the spec's offsets. False: the script can be written (no table lacks its names, no
    image its columns); True: there may be problems (the exact pass says which); None: this pass cannot
    tell (a transaction payload to expand, a rows event it cannot read): ask `problems`. A broken file
    ends the pass where it breaks (the run reports it)."""
    wanted = frozenset(code for code, op in ROW_OPS.items()
                       if (options.rollback and op in (DELETE, UPDATE)) or (options.replace and op == UPDATE))
    read = dataclasses.replace(read, verify_checksums=False)   # (the run checks them)
    made: dict[bytes, TableDef] = {}
    heads: dict[tuple, int] = {}    # (code, len_post_header, the column count's first byte) -> ofs_rows, of v1
    for path in paths:
        reader = BinlogReader(path, read)
        tables: dict[int, TableDef] = {}
        seen: set[tuple] = set()        # (code, the body up to its rows) of the rows events found sound
        try:
            for pos, code, size, ev in reader.scan(wanted | {TABLE_MAP, PAYLOAD}, frozenset(), SCAN_CHUNK):
                fde = reader.format_description
                if code == PAYLOAD or code == FDE or fde is None:
                    if code == FDE:
                        tables.clear()
                        seen.clear()
                        continue
                    return None
                if code != TABLE_MAP:       # a rows event with the head of one found sound: sound
                    h, lph = fde.len_common_header, fde.post_header_len(code)
                    shape = (code, lph, ev[h + lph]) if h + lph < size else None
                    n = heads.get(shape, 0)
                    if n and h + n <= size - fde.len_checksum and (code, bytes(ev[h:h + n])) in seen:
                        continue
                bare = bytes(ev[:size - fde.len_checksum])     # (no view of the window kept past this step)
                if code == TABLE_MAP:
                    body = bare[fde.len_common_header:]
                    table = made.get(body)
                    if table is None:
                        whole = bare + bytes(ev[size - fde.len_checksum:])
                        table = _quick_table(whole, fde, is_mariadb(len(fde.post_header_lens)))
                        if len(made) >= _MAX_MADE:
                            made.clear()
                        made[body] = table
                    if not table.has_names:
                        return True
                    if tables.get(table.table_id) is not table:
                        seen.clear()        # (what a table id names changes)
                    tables[table.table_id] = table
                    continue
                o = spec.rows_offsets(code, fde.post_header_len(code), bare[fde.len_common_header:])
                table = tables.get(o.table_id)
                if table is None:
                    return None
                body = bare[fde.len_common_header:]
                b = bytes(body[o.ofs_columns_before_image:o.ofs_columns_before_image + o.len_columns_bitmap])
                a = None if o.ofs_columns_after_image is None else \
                    bytes(body[o.ofs_columns_after_image:o.ofs_columns_after_image + o.len_columns_bitmap])
                if causes(table, ROW_OPS[code], o.num_columns, b, a, options, keyed=True):
                    return True
                if shape is not None and shape[2] < 251 and spec.rows_extra_at(code, shape[1]) is None:
                    heads[shape] = o.ofs_rows       # (a v1 head's length: its column count's first byte says)
                    if len(seen) > _MAX_MADE:
                        seen.clear()
                    seen.add((code, bytes(body[:o.ofs_rows])))
        except BinlogError:
            return True         # (the exact pass reads up to the fault)
        except (*spec.SpecError, ValueError, IndexError, KeyError, TypeError):
            return None
        finally:
            reader.close()
    return False


#: The quick pass's read size (the reader's scan mode reads the file in chunks of this size).
SCAN_CHUNK = 1 << 20
#: Bound on the TABLE_MAPs kept by the quick pass (emptied when reached).
_MAX_MADE = 1024


def _quick_table(event: bytes, fde: spec.FormatDescription, mariadb: bool) -> TableDef:
    """The table of a TABLE_MAP_EVENT's bytes, as TableDef.from_event makes it (no schema)."""
    header = spec.parse_header(event[:spec.LEN_EVENT_HEADER])
    return TableDef.from_fields(bodies.body_fields(bodies.parse_event(event, fde), header), mariadb)


__all__ = ["Problem", "problems", "sink", "may_have_problems", "causes", "NAMES", "BEFORE_IMAGE", "AFTER_IMAGE",
           "JSON_DIFFS"]
