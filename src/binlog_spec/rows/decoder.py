"""Row events -> row changes with typed values.

A RowDecoder follows a stream of events: it keeps the TABLE_MAP_EVENTs (by
table id) and the GTID of the current transaction, and turns each rows
event into RowChange objects: inserts, updates (before and after images)
and deletes. Values come from `values.decode_value`, column by column,
honouring the columns-present bitmaps (MINIMAL/NOBLOB images) and the null
bitmaps. For speed, each table layout seen more than once gets a compiled
generator that does the same with the value decoders inlined (see "Compiled
fast paths" below); it falls back to `decode_image` on anything unusual, so
values and errors are the same.
"""
from __future__ import annotations

import itertools
import struct
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from binlog_spec.rows import codegen
from binlog_spec.rows import image_plan
from binlog_spec.rows.json import json_binary
from binlog_spec.rows.json import json_path
from binlog_spec.rows.walker import check_rows
from binlog_spec.rows.walker import present_columns
from binlog_spec.binlog import spec
from binlog_spec.binlog.fields.packed import packed_int
from binlog_spec.binlog.timezones import iso_utc
from binlog_spec.rows import values
from binlog_spec.errors import MalformedEventError, MissingTableMapError, RowsLayoutError
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import DELETE, GTID_TYPES, INSERT, ROW_OPS, UPDATE, is_mariadb
from binlog_spec.rows.statement_text import NOT_DDL
from binlog_spec.rows.tablemap import TableDef

ET = spec.EventType

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
            "timestamp": iso_utc(self.timestamp),
            "server_id": self.server_id,
            "gtid": self.gtid,
            "schema": self.schema,
            "table": self.table,
            "op": self.op,
            "before": self.before,
            "after": self.after,
        }


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


# --------------------------------------------------------------------------
# Compiled fast paths
#
# decode_image calls values.decode_value once per value, with its checks and dispatch. For
# the common case, the row decoder compiles (once per table layout: TABLE_MAP, columns-present
# bitmaps and operation) a Python generator that decodes every row of a rows event with the
# value decoders inlined (codegen.inline_source) and makes the RowChange objects itself. The
# compiled code skips the checks, so it is a fast path only: an image on which it raises
# anything, or that it reads past the end of the rows, is decoded again by decode_image,
# which gives the value or the precise error. Values, dict order and errors are
# decode_image's. Where the compiled core runs (binlog_spec.compiled), the same generator comes
# from rows/_cdecoder.pyx instead, with the same contract (rows/image_plan.py plans its images).

def _image_source(columns: list[values.Column], tag: str, globs: dict[str, Any], text: bool) -> list[str]:
    """Statements that decode one image of these columns from `buf` at `pos` into the dict
    `{tag}_row`, advancing `pos` (the column names are the globals `_name_{tag}{k}`). When no
    present column is NULL (the null bitmap has none of their bits set) they run straight-line
    code in which consecutive fixed-size numbers are read by one struct call."""
    n_null = (len(columns) + 7) >> 3
    masks = [0] * n_null
    for k in range(len(columns)):
        masks[k >> 3] |= 1 << (k & 7)
    lines = [f"nulls{j} = buf[pos + {j}]" if j else "nulls0 = buf[pos]" for j in range(n_null)]
    lines.append(f"pos += {n_null}")
    if n_null:
        lines.append("if not (" + " or ".join(f"nulls{j} & {masks[j]}" for j in range(n_null)) + "):")
        k = 0
        while k < len(columns):
            run = []
            while k + len(run) < len(columns) and codegen.fixed_format(columns[k + len(run)]) is not None:
                run.append(codegen.fixed_format(columns[k + len(run)]))
            if len(run) > 1:
                fmt = "<" + "".join(f[1:] for f in run)
                globs[f"_unpack_{tag}_run{k}"] = struct.Struct(fmt).unpack_from
                lines.append("    " + ", ".join(f"{tag}{k + j}" for j in range(len(run)))
                             + f", = _unpack_{tag}_run{k}(buf, pos)")
                lines.append(f"    pos += {struct.calcsize(fmt)}")
                k += len(run)
            else:
                lines += codegen.indent(codegen.inline_source(columns[k], f"{tag}{k}", globs, text))
                k += 1
        lines.append("else:")
        for k, col in enumerate(columns):
            lines += [f"    if nulls{k >> 3} & {1 << (k & 7)}:", f"        {tag}{k} = None", "    else:"]
            lines += codegen.indent(codegen.inline_source(col, f"{tag}{k}", globs, text), 2)
    lines.append("if pos > end:")
    lines.append("    raise IndexError('row image runs past the rows')")
    lines.append(f"{tag}_row = {{" + ", ".join(f"_name_{tag}{k}: {tag}{k}" for k in range(len(columns))) + "}")
    return lines


_COMPILED_COUNT = itertools.count(1)


def _compile(lines: list[str], globs: dict[str, Any], name: str, table: TableDef, what: str = "") -> Callable:
    # A file name of its own for each function, so that profilers and tracebacks tell them apart.
    where = f"<{name}{what} of {table.schema}.{table.table} #{next(_COMPILED_COUNT)}>"
    return codegen.compile_function(lines, globs, name, where)


def compile_rows(table: TableDef, op: str, before: list[int], after: list[int] | None,
                 names: list[str]) -> Callable:
    """`rows(decoder, ev, buf, template)`: a generator of the RowChange objects of a rows event
    of this table whose images have these present columns (`after` for UPDATE only), as
    RowDecoder._rows_generic yields them. `template` holds the RowChange fields of the event
    (the dict the dataclass __init__ would fill, less gtid, images and row_index)."""
    images = [("b", before)] + ([("a", after)] if op == UPDATE else [])
    if image_plan.crows is not None:       # the same generator, compiled (rows/_cdecoder.pyx)
        return image_plan.rows_function(table, op, [present for _tag, present in images], names, decode_image,
                                        RowChange, _malformed_row, f"<compiled rows ({op}) of {table.schema}."
                                        f"{table.table} #{next(_COMPILED_COUNT)}>")
    globs: dict[str, Any] = {"_RowChange": RowChange, "_new": object.__new__, "_set_dict": object.__setattr__,
                             "_decode_image": decode_image, "_table": table, "_names": names,
                             "_ValueDecodeError": values.ValueDecodeError, "_malformed": _malformed_row}
    bodies = {}
    for tag, present in images:
        globs.update({f"_name_{tag}{k}": names[i] for k, i in enumerate(present)})
        globs[f"_present_{tag}"] = present
        bodies[tag] = _image_source([table.columns[i] for i in present], tag, globs, text=True)
    lines = ["def rows(decoder, ev, buf, template):",
             "    end = len(buf)",
             "    copy = template.copy"]
    if codegen.LATIN1_TEXT_TABLE in globs:
        lines.append("    text = buf.decode('latin-1')")
    lines += ["    row_pos = index = 0",
              "    try:",
              "        while row_pos < end:"]
    for tag, _present in images:
        lines += ["            try:",
                  "                pos = row_pos"]
        lines += codegen.indent(bodies[tag], 4)
        lines += ["            except Exception:",
                  f"                {tag}_row, pos = _decode_image(buf, row_pos, _table, _present_{tag}, _names)",
                  "            row_pos = pos"]
    lines.append("            d = copy()")
    if op == UPDATE:
        lines.append('            d["gtid"], d["before"], d["after"], d["row_index"] = decoder.gtid, b_row, a_row, index')
    else:
        key = "after" if op == INSERT else "before"
        lines.append(f'            d["gtid"], d["{key}"], d["row_index"] = decoder.gtid, b_row, index')
    lines += ["            rc = _new(_RowChange)",
              '            _set_dict(rc, "__dict__", d)',
              "            yield rc",
              "            index += 1",
              "    except _ValueDecodeError as exc:",
              "        raise _malformed(ev, index, exc) from None"]
    return _compile(lines, globs, "rows", table, f" ({op})")


#: Bound on the compiled generators kept (tables, and event shapes per table).
_MAX_COMPILED = 256


def _malformed_row(ev: Event, index: int, exc: Exception) -> MalformedEventError:
    return MalformedEventError(f"row {index}: {exc}", file=ev.file, offset=ev.pos, event_type=ev.type)


def _json_diff(buf: bytes, pos: int, col: values.Column) -> tuple[list, int]:
    n = col.meta.get("pack_length", 4)
    length = int.from_bytes(buf[pos:pos + n], "little")
    start = pos + n
    if start + length > len(buf):
        raise values.ValueDecodeError(f"JSON diff of {length} bytes runs past the row image")
    return json_binary.decode_json_diff(buf[start:start + length]), start + length


def _partial_columns(buf: bytes, pos: int, table: TableDef) -> tuple[frozenset[int], int]:
    """PARTIAL_UPDATE_ROWS after image prefix: value_options, then one bit per JSON column."""
    options, pos = packed_int(buf, pos)
    if not options & PARTIAL_JSON_UPDATES:
        return frozenset(), pos
    json_cols = [i for i, c in enumerate(table.columns) if c.type_code == spec.ColumnType.json]
    nbytes = (len(json_cols) + 7) >> 3
    bits = buf[pos:pos + nbytes]
    return frozenset(c for k, c in enumerate(json_cols) if bits[k >> 3] >> (k & 7) & 1), pos + nbytes


PARTIAL_JSON_UPDATES = 1


class RowDecoder:
    """Follows events; yields RowChange for every row of every rows event."""

    def __init__(self, schema_source: Any = None, warn: Callable[[str], None] | None = None):
        self.tables: dict[int, TableDef] = {}
        self.gtid: str | None = None
        #: Whether the current file uses MariaDB's event numbering (its FDE array reaches type 160+).
        self.mariadb = False
        #: Supplies names, signs and charsets where the binlog has none (see schema.py), from the
        #: events this decoder is fed. A TABLE_MAP_EVENT that observe_schema completed (its
        #: `table_def`) is taken as it is: give no schema_source then, the DDL is replayed once.
        self.schema_source = schema_source
        #: Told once per table and kind what the reader should know of a table whose rows are
        #: decoded (names unknown, charset guessed, TABLE_MAP contradicting the schema).
        self.warn = warn
        self._warned: set[tuple[str, str, str]] = set()
        #: table id -> (the TableDef they were made for, its names, {(op, count, bitmaps): compiled
        #: rows generator; None: seen once; False: cannot be compiled}).
        self._compiled: dict[int, tuple[TableDef, list[str], dict[tuple, Callable | bool | None]]] = {}
        #: The tables made of TABLE_MAP_EVENTs (see table_def).
        self._tables_made: dict[tuple, TableDef] = {}

    def _compiled_rows(self, table_id: int, table: TableDef, op: str, n: int, before_bitmap: bytes,
                       after_bitmap: bytes | None) -> tuple[list[str], Callable | None]:
        """The table's names and the compiled generator of this event shape (None when it cannot
        be compiled); kept while the table's TABLE_MAPs stay equal."""
        entry = self._compiled.get(table_id)
        if entry is None or (entry[0] is not table and entry[0] != table):
            if len(self._compiled) >= _MAX_COMPILED:
                self._compiled.clear()
            entry = self._compiled[table_id] = (table, table.names, {})
        elif entry[0] is not table:
            entry = self._compiled[table_id] = (table, entry[1], entry[2])
        names, cache = entry[1], entry[2]
        key = (op, n, before_bitmap, after_bitmap)
        rows = cache.get(key)
        if rows is None:       # first seen: decoded by _rows_generic; compiled when seen again
            if key not in cache:
                if len(cache) >= _MAX_COMPILED:
                    cache.clear()
                cache[key] = None
            else:
                try:
                    rows = compile_rows(table, op, present_columns(before_bitmap, n),
                                        present_columns(after_bitmap, n) if op == UPDATE else None, names)
                except Exception:  # a column the fast path cannot take: _rows_generic does it all
                    rows = False
                cache[key] = rows
        return names, rows or None

    def feed(self, ev: Event) -> Iterator[RowChange]:
        op = ROW_OPS.get(ev.type_code) if ev.error is None else None
        if op is not None:
            yield from self._rows(ev, op)
        else:
            self.observe(ev)

    def observe(self, ev: Event) -> None:
        """What an event other than a rows event tells the decoder (feed without the generator: the
        caller handles rows events with `_rows`)."""
        code = ev.type_code
        if ev.error is not None:
            return
        if code == ET.format_description_event:   # a new file: no transaction is open
            self.mariadb = is_mariadb(ev.fields["num_post_header_lens"])
            self.gtid = None
        elif code == ET.xid_event:                   # the transaction ends, and its GTID with it
            self.gtid = None
        elif code == ET.table_map_event:
            table = ev.table_def
            if table is None:
                table = table_def(ev, self.mariadb, self.schema_source, self._tables_made)
            self.tables[table.table_id] = table
        elif code in GTID_TYPES:
            self.gtid = ev.fields.get("gtid")
        elif code == ET.anonymous_gtid_log_event:
            self.gtid = None
        elif self.schema_source is not None and code in (ET.query_event, ET.query_compressed_event):
            self.schema_source.observe_query(ev.fields.get("db", ""), ev.fields["query"], server_collation(ev))
            _tell_schema_notes(self.schema_source, ev, self.warn)

    def _rows(self, ev: Event, op: str) -> Iterator[RowChange]:
        """The row changes of a rows event (called from generators only: its errors are raised
        when the row changes are asked for)."""
        table_id, n, before_bitmap, after_bitmap, buf = ev.rows_parts()
        table = self.tables.get(table_id)
        if table is None:
            raise MissingTableMapError(f"no TABLE_MAP_EVENT defines table id {table_id}",
                                       file=ev.file, offset=ev.pos, event_type=ev.type)
        if table.extra and self.warn is not None:
            self._tell(table)
        if op == UPDATE and after_bitmap is None:
            raise RowsLayoutError("update rows event without an after-image bitmap", file=ev.file, offset=ev.pos,
                                  event_type=ev.type)
        check_rows(table, n, before_bitmap, after_bitmap if op == UPDATE else None, len(buf),
                           file=ev.file, offset=ev.pos, event_type=ev.type)
        if ev.type_code != ET.partial_update_rows_event and type(buf) is bytes:
            names, rows = self._compiled_rows(table_id, table, op, n, before_bitmap, after_bitmap)
            if rows is not None:
                return rows(self, ev, buf, {
                    "file": ev.file, "pos": ev.pos, "timestamp": ev.timestamp, "server_id": ev.server_id,
                    "gtid": None, "schema": table.schema, "table": table.table, "op": op, "before": None,
                    "after": None, "row_index": 0, "table_def": table})
        before_cols = present_columns(before_bitmap, n)
        after_cols = present_columns(after_bitmap, n) if op == UPDATE else before_cols
        return self._rows_generic(ev, op, table, table.names, before_cols, after_cols, buf)

    def _tell(self, table: TableDef) -> None:
        for kind, message in table.extra.get("notes", ()):
            key = (table.schema, table.table, kind)
            if key not in self._warned:
                self._warned.add(key)
                keyed = getattr(self.warn, "keyed", None)   # (cli --jobs: told once per run, by key)
                keyed(key, message) if keyed is not None else self.warn(message)

    def _rows_generic(self, ev: Event, op: str, table: TableDef, names: list[str], before_cols: list[int],
                      after_cols: list[int], buf: bytes) -> Iterator[RowChange]:
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
                            after[names[i]] = json_binary.JsonDiffs(diffs)
                else:
                    before, pos = decode_image(buf, pos, table, before_cols, names)
                    after, pos = decode_image(buf, pos, table, after_cols, names)
                yield RowChange(ev.file, ev.pos, ev.timestamp, ev.server_id, self.gtid, table.schema, table.table,
                                op, before, after, index, table)
                index += 1
        except values.ValueDecodeError as exc:
            raise MalformedEventError(f"row {index}: {exc}", file=ev.file, offset=ev.pos,
                                      event_type=ev.type) from None


def server_collation(ev: Event) -> int | None:
    """The server's collation (collation_server of Q_CHARSET_CODE) of a QUERY_EVENT, if it has one."""
    for var in ev.fields.get("status_vars") or ():
        if var.get("code") == "Q_CHARSET_CODE" and isinstance(var.get("value"), dict):
            return var["value"].get("collation_server")
    return None


def _tell_schema_notes(schema_source: Any, ev: Event, warn: Callable[[str], None] | None) -> None:
    """What the schema has to say of the statement it just replayed (a table forgotten, and why),
    told as at the QUERY_EVENT: `FILE: offset N: ...`."""
    notes = getattr(schema_source, "notes", None)
    if notes:
        if warn is not None:
            for note in notes:
                warn(f"{ev.file}: offset {ev.pos}: {note}")
        notes.clear()


def table_def(ev: Event, mariadb: bool, schema_source: Any, made: dict[tuple, TableDef]) -> TableDef:
    """The table of a TABLE_MAP_EVENT, completed by `schema_source` when there is one: made once for
    the same body bytes under the same schema (`made` keeps them, keyed by the bytes and the
    SchemaTracker's generation and server collation; a source without a generation is asked every
    time). MalformedEventError as TableDef.from_event."""
    generation = getattr(schema_source, "generation", None)
    if schema_source is not None and generation is None:
        return schema_source.complete(TableDef.from_event(ev, mariadb), ev)
    key = (ev.body_bytes(), mariadb, generation, getattr(schema_source, "server_collation", None))
    table = made.get(key)
    if table is None:
        table = TableDef.from_event(ev, mariadb)
        if schema_source is not None:
            table = schema_source.complete(table, ev)
        if len(made) >= _MAX_COMPILED * 16:
            made.clear()
        made[key] = table
    return table


def observe_schema(events: Iterable[Event], schema_source: Any,
                   warn: Callable[[str], None] | None = None) -> Iterator[Event]:
    """The events, each seen by the schema before it goes on: put this stage under the filters.
    `warn` is told what the schema says of a statement it replays (SchemaTracker.notes: a table
    forgotten, and why), once per statement, with the QUERY_EVENT's file and offset.

    Every QUERY_EVENT's DDL is replayed into `schema_source` (a schema.SchemaTracker) and every
    TABLE_MAP_EVENT gets its `table_def`, completed with the schema as it is at that event. Filters
    then only choose what is output, and a RowDecoder (given no schema_source) decodes each rows
    event with the table as it was when the event was written, however long the filters held it."""
    mariadb, collation_wanted = False, True
    observe = schema_source.observe_query
    made: dict[tuple, TableDef] = {}    # the same TABLE_MAP body under the same schema: made once
    for ev in events:
        if ev.error is None:
            code = ev.type_code
            if code == ET.table_map_event:
                try:
                    ev.table_def = table_def(ev, mariadb, schema_source, made)
                except MalformedEventError:
                    ev.table_def = None     # its consumer meets the same error at this event (TableDef.from_event)
            elif code in (ET.query_event, ET.query_compressed_event):
                # BEGIN, COMMIT, DML: not parsed, but for the server's collation of a file's first
                if collation_wanted or not ev.statement_bytes().lstrip()[:9].upper().startswith(NOT_DDL):
                    observe(ev.fields.get("db", ""), ev.fields["query"], server_collation(ev))
                    _tell_schema_notes(schema_source, ev, warn)
                    collation_wanted = False
            elif code == ET.format_description_event:
                mariadb = is_mariadb(ev.fields["num_post_header_lens"])
                collation_wanted = True
        yield ev


def read_rows(events, schema_source: Any = None, warn: Callable[[str], None] | None = None) -> Iterator[RowChange]:
    """Row changes of an event stream (`warn`: see RowDecoder.warn)."""
    decoder = RowDecoder(schema_source, warn)
    feed, rows_of, row_ops = decoder.feed, decoder._rows, ROW_OPS
    for ev in events:
        op = row_ops.get(ev.type_code) if ev.error is None else None
        if op is not None:      # what feed() does for a rows event, one generator less per row
            yield from rows_of(ev, op)
        else:
            yield from feed(ev)
