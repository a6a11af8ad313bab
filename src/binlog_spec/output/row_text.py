"""The lines of the `rows` command: the human line (one row change per line, its time in a zone, images as
JSON) and the JSON line, and the JSON lines' compiled lane.

`row_json` is the reference of the JSON line. `json_lane(schema)` is its compiled twin (output/_crow_text.pyx
`RowLane`), a reader sink that writes the lines of the common MariaDB and MySQL transactions straight from the
bytes;
output/lane_text.py puts its text in file order among the lines of what it leaves to `row_json`.
"""
from __future__ import annotations

import functools
from datetime import timezone, tzinfo
from typing import Any

from binlog_spec import compiled
from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import DELETE, INSERT, ROW_OPS, UPDATE, is_mariadb
from binlog_spec.binlog.fields import bodies
from binlog_spec.binlog.timezones import local_text
from binlog_spec.output import jsonenc
from binlog_spec.rows.decoder import RowChange, table_def
from binlog_spec.rows import image_plan
from binlog_spec.rows.image_plan import column_plan
from binlog_spec.rows.statement_text import quote_identifier
from binlog_spec.rows.walker import present_columns


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


_crow_text = compiled.load("binlog_spec.output._crow_text")


def json_lane(schema: Any, filtering: Any = None, rows: Any = None, counted: Any = None) -> Any:
    """The compiled lane of the JSON lines (output/_crow_text.pyx `RowLane`), a sink for the reader of the
    events whose row changes `row_json` writes, given in order (rows.observe_schema with `schema`, then the
    filters, then rows.read_rows): unfiltered, or under the filters `filtering` (lane_filter's) decides; with
    `rows` (a stream.row_filters.RowSelector of --key alone: `keys_lane`), only the lines of the rows it keeps
    (output/_crow_key.pxi), the rows it checked counted in it. None with the pure-Python core (the reference),
    or row filters the lane does not check. `counted`: a stream.selection.Selection that counts the events it takes
    unfiltered (the events after --start-position, which the position filter keeps)."""
    if _crow_text is None or (rows is not None and not keys_lane(rows)):
        return None
    ops = {code: f',"op":"{op}","before":'.encode() for code, op in ROW_OPS.items()}
    keys = None if rows is None else _crow_text.KeyCheck(rows, functools.partial(_key_plan, rows))
    return _crow_text.RowLane(_LaneTables(schema), ops, False, filt=filtering, keys=keys, counted=counted)


def keys_lane(rows: Any) -> bool:
    """Whether the lane checks these row filters (a RowSelector's): --key alone, with the compiled core."""
    return _crow_text is not None and image_plan.crows is not None and bool(rows.options.key) and \
        rows.options.where is None


def _key_plan(rows: Any, table: Any, code: int, layout: bytes) -> Any:
    """The lane's KeyPlan of a table's rows events whose column count and bitmaps are `layout`: its integer key
    read by rows.image_plan.key_plan's decoders, compared with the --key values as `rows` types them; None where
    the lane leaves the events to the reference (whose error, if any, is then raised there)."""
    n, size = layout[0], (layout[0] + 7) >> 3
    update = ROW_OPS[code] == UPDATE
    try:
        wanted = rows.key_values(table)
        got = image_plan.key_plan(table, n, layout[1:1 + size], layout[1 + size:1 + 2 * size] if update else None,
                                  keyless_after=True)
    except Exception:       # noqa: BLE001 - (RowFilterError, a layout that does not read: the reference says)
        return None
    if got is None or [i for i, *_ in wanted] != list(table.row_key) or \
            not all(type(value) is int for *_, value in wanted):
        return None
    decoder_b, decoder_a, key_b, key_a = got
    try:
        return _crow_text.KeyPlan(decoder_b, decoder_a, key_b, key_a, tuple(value for *_, value in wanted))
    except (ValueError, OverflowError):
        return None


def lane_filter(gate: Any, filters: Any, selection: Any, skipper: Any) -> Any:
    """What lets a lane (json_lane, sql.lane.sql_lane) run under filters a compiled loop decides
    (FilterOptions.skippable; output/_crow_filter.pxi `LaneFilter`): `gate` and `selection` those of
    select_events (api.skip_gate, api.Selection), `skipper` the loop that skips what the filters drop whole
    (api.skipping_sink); None where any is missing (the ordinary path then writes every line)."""
    from binlog_spec.stream import skipping
    if _crow_text is None or gate is None or selection is None or skipper is None:
        return None
    return _crow_text.LaneFilter(skipper, gate, selection, *skipping.decisions(filters, selection))


class _LaneTables:
    """What RowLane asks of the Python side, each once per TABLE_MAP body (per schema generation), per rows
    event layout, per image layout of a table."""

    def __init__(self, schema: Any, make: Any = None):
        self.schema = schema
        #: (TableDef, rows event type code, layout) -> the lane's images of that layout, or None.
        self.make = make if make is not None else _images
        self.made: dict = {}        # (table_def's, as observe_schema keeps its own)
        self._json: dict[str, bytes] = {}

    def json(self, text: str) -> bytes | None:
        """The JSON string of a name, UTF-8; None for one that holds undecoded bytes (surrogates), whose lines
        the ordinary path writes."""
        got = self._json.get(text, False)
        if got is False:
            try:
                got = jsonenc.dumps(text, floats=False).encode()
            except UnicodeEncodeError:
                got = None
            self._json[text] = got
        return got

    def generation(self) -> Any:
        return getattr(self.schema, "generation", None), getattr(self.schema, "server_collation", None)

    def table(self, raw: bytes, fde: spec.FormatDescription, file: str, pos: int) -> Any:
        """The TableText of a TABLE_MAP_EVENT's bytes, made as observe_schema makes its table; None where the
        lane leaves its rows to the ordinary path (a body that does not parse, a table with notes to tell)."""
        try:
            ev = Event(file, pos, spec.parse_header(raw[:spec.LEN_EVENT_HEADER]), raw, bodies.parse_event(raw, fde))
            table = table_def(ev, is_mariadb(len(fde.post_header_lens)), self.schema, self.made)
        except Exception:       # (the ordinary path meets it at this event)
            return None
        if table.extra.get("notes") or type(table.schema) is not str or type(table.table) is not str:
            return None
        schema, name = self.json(table.schema), self.json(table.table)
        if schema is None or name is None:
            return None
        head = b'"schema":' + schema + b',"table":' + name
        return _crow_text.TableText(table.table_id, len(table.columns), head, table, self.make)

    @staticmethod
    def extra_at(code: int, len_post_header: int) -> int:
        """Where a rows event's len_extra_data is (spec.rows_extra_at); -1 where it has none (before v2)."""
        at = spec.rows_extra_at(code, len_post_header)
        return -1 if at is None else at

    @staticmethod
    def reads(raw: bytes, fde: spec.FormatDescription) -> Any:
        """The body of an event's bytes as the reader parses it (bodies.parse_event), None where it reads
        with an error (the ordinary path then meets it)."""
        try:
            return bodies.parse_event(raw, fde)
        except Exception:
            return None

    def begins(self, raw: bytes, fde: spec.FormatDescription) -> bool:
        """Whether a QUERY_EVENT reads without error and its statement is BEGIN."""
        body = self.reads(raw, fde)
        return body is not None and bytes(body.query) == b"BEGIN"

    def gtid(self, raw: bytes, fde: spec.FormatDescription) -> bytes | None:
        """The JSON text of the GTID an event that reads without error gives (its fields' "gtid", as the
        RowDecoder takes it), None otherwise."""
        body = self.reads(raw, fde)
        if body is None:
            return None
        gtid = bodies.body_fields(body, spec.parse_header(raw[:spec.LEN_EVENT_HEADER])).get("gtid")
        return jsonenc.dumps(gtid, floats=False).encode()

    @staticmethod
    def shape(code: int, len_post_header: int, body: bytes) -> tuple | None:
        """A rows event's layout (spec.rows_offsets): (offset of its column count, length of the table id,
        column count, bitmap length, offsets of the bitmaps (-1: none) and of the rows), where the count is
        one byte; None otherwise."""
        try:
            o = spec.rows_offsets(code, len_post_header, body)
        except Exception:
            return None
        at = o.ofs_columns_before_image - 1
        if o.num_columns >= 251 or body[at] != o.num_columns or \
                int.from_bytes(body[:o.ofs_rows_flags], "little") != o.table_id:
            return None
        after = o.ofs_columns_after_image if o.ofs_columns_after_image is not None else -1
        return (at, o.ofs_rows_flags, o.num_columns, o.len_columns_bitmap, o.ofs_columns_before_image, after,
                o.ofs_rows)


def _images(table: Any, code: int, layout: bytes) -> tuple | None:
    """(before, after or None) TextImages of a table's rows events whose column count and bitmaps are
    `layout`; None where the lane leaves them (a column with no text form in the lane, ...)."""
    n, size = layout[0], (layout[0] + 7) >> 3
    bitmaps = [layout[1:1 + size]] + ([layout[1 + size:1 + 2 * size]] if ROW_OPS[code] == UPDATE else [])
    images = []
    for bitmap in bitmaps:
        present = present_columns(bitmap, n)
        plan = _plan(table, present) if present and len(bitmap) == size else None
        if plan is None:
            return None
        images.append(_crow_text.TextImage(plan))
    return images[0], (images[1] if len(images) > 1 else None)


def _plan(table: Any, present: list[int]) -> list[tuple] | None:
    """TextImage's plan of these present columns: their keys and rows.image_plan's column plans."""
    names = [table.names[i] for i in present]
    if not all(type(name) is str for name in names) or len(set(names)) != len(names):
        return None
    kinds = _crow_text.KINDS
    plan = []
    for k, i in enumerate(present):
        got = lane_column(table.columns[i])
        if got is None:
            return None
        kind, a, b, c, obj = got
        if kind in ("enum", "set") and obj is not None:
            texts = tuple(jsonenc.dumps(m, floats=False).encode() for m in obj)
            if kind == "set":
                try:        # (the members as the value's sorted list has them)
                    order = tuple(sorted(range(len(obj)), key=obj.__getitem__))
                except TypeError:
                    return None
                if len(set(obj)) != len(obj):
                    return None
                obj = (texts, order)
            else:
                obj = texts
        key = (b"{" if k == 0 else b",") + jsonenc.dumps(names[k], floats=False).encode() + b":"
        plan.append((key, kinds[kind], a, b, c, obj))
    return plan


def lane_column(col: Any) -> tuple | None:
    """rows.image_plan's column plan (kind name, a, b, c, obj) as the lanes' images take it (a text's codec
    as their code), or None for a column they have no text for (its rows go the ordinary way)."""
    kind, a, b, c, obj = column_plan(col)
    if kind == "text" and b == "codec" and obj == b"ascii":
        b = "ascii"         # (a byte past 0x7f leaves the image to the pure decoder, which says what it is)
    if kind not in _crow_text.KINDS or (kind == "text" and b not in _crow_text.CODECS):
        return None
    if kind == "text":
        b = _crow_text.CODECS[b]
    return kind, a, b, c, obj
