"""The row filters (--key, --where): which row changes of the kept events are kept, by their values.

* `RowFilterOptions` - the frozen options (shared by rows, sql and analyze): `--key V[,V...]` with the one
  table `--table DB.T` names, and `--where EXPR`;
* `RowSelector` - built from them: `keeps(change)` of a rows.decoder.RowChange, true when its before or its
  after image matches (the key's values, or the expression: stream.row_where). The key is the table's
  `row_key` (primary key, else a NOT NULL unique key: TABLE_MAP metadata, DDL, --schema), its values typed
  as its columns (stream.row_values). A table without a key, a column the table lacks, a literal that does
  not fit a column raise RowFilterError (exit 2) naming them, at the first rows event of that table
  (`check_table`: the same, asked of a TABLE_MAP's table, for a pre-pass);
* `select_rows(events, selector)` - the stage after the event filters: each rows event reduced to the rows
  kept (its bytes rewritten: a rows event that holds only them, so that every output after it, the
  statements, the undo and its conflict check, the analysis, reads it as it reads any), dropped when none
  is; a transaction whose rows events are all dropped is dropped whole.

--where applies to every table kept: a table that lacks a column the expression names is an error naming
the table and the column (narrow the run with --table or --database), not a silent miss.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import GTID_TYPES, ROW_OPS
from binlog_spec.binlog.writer import ROWS_COMPRESSED, _with_len, bare_bytes, decompress, parse_bare, rows_layout
from binlog_spec.errors import RowFilterError, UsageError
from binlog_spec.rows.decoder import RowChange, RowDecoder, _partial_columns, decode_image, present_columns
from binlog_spec.rows.walker import RowWalker
from binlog_spec.stream import row_where
from binlog_spec.stream.row_values import compared, typed
from binlog_spec.stream.transactions import is_begin, is_commit

ET = spec.EventType
_GLOB = frozenset("*?[")


@dataclass(frozen=True)
class RowFilterOptions:
    #: --key's table (schema, table), and its values as given (text, one per key column in key order).
    table: tuple[str, str] | None = None
    key: tuple[str, ...] = ()
    #: --where's expression, as given.
    where: str | None = None

    @property
    def active(self) -> bool:
        return bool(self.key) or self.where is not None

    def described(self) -> list[tuple[str, str]]:
        """(option, value) of each row filter, for the notes of a selection that kept nothing."""
        out = []
        if self.key:
            out.append(("--key", ",".join(self.key)))
        if self.where is not None:
            out.append(("--where", self.where))
        return out


def row_filter_options(key: str | None = None, where: str | None = None,
                       tables: tuple[str, ...] = ()) -> RowFilterOptions:
    """The RowFilterOptions of the options' text (UsageError naming the option): --key needs exactly one
    --table DB.T without wildcards; --where must parse (stream.row_where)."""
    table = None
    values: tuple[str, ...] = ()
    if key is not None:
        if len(tables) != 1 or "." not in tables[0] or _GLOB & set(tables[0]):
            raise UsageError("--key: give exactly one table, --table DB.T (no wildcards): the key is that table's")
        schema, _, name = tables[0].partition(".")
        table = (schema, name)
        values = tuple(_split_key(key))
        if not values:
            raise UsageError("--key: give the key's values, V[,V...]")
    if where is not None:
        if not where.strip():
            raise UsageError("--where: empty expression")
        try:
            row_where.parse(where)
        except row_where.WhereError as exc:
            raise UsageError(f"--where: {exc}") from None
    return RowFilterOptions(table, values, where)


def _split_key(text: str) -> list[str]:
    """The values of --key: separated by commas; a value may be quoted ('a,b' or "a,b", a doubled quote
    inside) to hold a comma or keep its spaces."""
    out, i, n = [], 0, len(text)
    while i <= n:
        if i < n and text[i] in "'\"":
            q, j, buf = text[i], i + 1, []
            while j < n:
                if text[j] == q:
                    if j + 1 < n and text[j + 1] == q:
                        buf.append(q)
                        j += 2
                        continue
                    break
                buf.append(text[j])
                j += 1
            if j >= n:
                raise UsageError(f"--key: unclosed quote in {text!r}")
            out.append("".join(buf))
            i = j + 1
            if i < n and text[i] != ",":
                raise UsageError(f"--key: a quoted value is followed by {text[i]!r}, not a comma")
            i += 1
        else:
            j = text.find(",", i)
            j = n if j < 0 else j
            out.append(text[i:j])
            i = j + 1
    return out


class RowSelector:
    """Which row changes the row filters keep (see the module doc)."""

    def __init__(self, options: RowFilterOptions):
        self.options = options
        self._tree = row_where.parse(options.where) if options.where is not None else None
        #: id(TableDef) -> (the TableDef, its image predicate)
        self._made: dict[int, tuple] = {}
        #: The row changes asked about, and kept (for the note of a run that kept none).
        self.seen = self.kept = 0

    def check_table(self, table) -> None:
        """RowFilterError when the filters cannot be applied to the table (rows.tablemap.TableDef)."""
        self._predicate(table)

    def keeps(self, change: RowChange) -> bool:
        self.seen += 1
        if self._keeps(change):
            self.kept += 1
            return True
        return False

    def _keeps(self, change: RowChange) -> bool:
        image = self._predicate(change.table_def)
        before, after = change.before, change.after
        if before is not None and image(before):
            return True
        if after is not None:
            if before is not None and len(after) < len(before):
                after = {**before, **after}     # (an after image without the columns left alone)
            return bool(image(after))
        return False

    def _predicate(self, table):
        got = self._made.get(id(table))
        if got is not None and got[0] is table:
            return got[1]
        if len(self._made) > 4096:
            self._made.clear()
        preds = []
        if self.options.key:
            preds.append(self._key_predicate(table))
        if self._tree is not None:
            try:
                where = row_where.compile_where(self._tree, table)
            except row_where.WhereError as exc:
                raise RowFilterError(f"--where: {exc}") from None
            preds.append(lambda img: where(img) is True)
        pred = preds[0] if len(preds) == 1 else (lambda img: all(p(img) for p in preds))
        self._made[id(table)] = (table, pred)
        return pred

    def key_values(self, table) -> list[tuple[int, str, object, object]]:
        """(column index, name, comparison function, value as compared) of each column of the table's key,
        in key order: the --key values typed as those columns (stream.row_values.typed); RowFilterError as
        `keeps` raises it. (What a compiled check of the key compares: output/_crow_key.pxi.)"""
        where = f"{table.schema}.{table.table}"
        key = table.row_key
        if not key:
            hint = "" if table.has_names else ": its TABLE_MAP has no column metadata (binlog_row_metadata=FULL, " \
                "or give its DDL with --schema)"
            raise RowFilterError(f"--key: table {where} has no primary key or NOT NULL unique key{hint}")
        names = [table.names[i] for i in key]
        if len(self.options.key) != len(key):
            raise RowFilterError(f"--key: the key of {where} is ({', '.join(names)}): give {len(key)} value"
                                 f"{'s' if len(key) > 1 else ''}, not {len(self.options.key)}")
        wanted = []
        for i, name, text in zip(key, names, self.options.key):
            col = table.columns[i]
            norm = compared(col)
            try:
                wanted.append((i, name, norm, norm(typed(col, _hex(text), f"{where}.{name}"))))
            except ValueError as exc:
                raise RowFilterError(f"--key: {exc}") from None
        return wanted

    def _key_predicate(self, table):
        wanted = [(name, norm, value) for _, name, norm, value in self.key_values(table)]

        def matches(img):
            for name, norm, value in wanted:
                v = img.get(name)
                if v is None or norm(v) != value:
                    return False
            return True
        return matches


def _hex(text: str):
    """A --key value: 0x... is bytes (a BINARY key), anything else text."""
    if len(text) > 2 and text[:2] in ("0x", "0X"):
        try:
            return bytes.fromhex(text[2:] if len(text) % 2 == 0 else "0" + text[2:])
        except ValueError:
            return text
    return text


# -- The stage ---------------------------------------------------------------------------------------------

def select_rows(events: Iterable[Event], selector: RowSelector) -> Iterator[Event]:
    """The events, each rows event reduced to the rows `selector` keeps (the Event itself rewritten, so that
    whoever holds it sees the reduced one) or left out when it keeps none; a transaction whose rows events
    are all left out is left out whole (its GTID, BEGIN, TABLE_MAPs, COMMIT), unless it holds a statement
    of its own; so are the TABLE_MAPs of a statement none of whose rows is kept. The events must be
    completed by the schema stage (their TABLE_MAPs' table_def). (A statement whose last rows event is left
    out ends at the last one kept: the writers set its STMT_END_F, as they do under the table filters,
    output.rewriter.Rewriter.forward_step.)"""
    decoder = RowDecoder()
    walker = RowWalker(1 << 62)
    held: list[Event] = []      # the open transaction's events, while nothing of it is written
    in_tx = dropped = written = False
    maps: list[Event] = []          # the TABLE_MAPs of the statement, given before its first kept rows event
    fde = None
    for ev in events:
        code = ev.type_code
        op = ROW_OPS.get(code) if ev.error is None else None
        if op is not None:
            changes = list(decoder._rows(ev, op))
            kept = [selector.keeps(rc) for rc in changes]
            if not any(kept):
                dropped = True
                continue
            if not all(kept):
                _reduce(ev, kept, decoder.tables[ev.rows_parts()[0]], fde, walker)
            if in_tx and not written:
                written = True
                yield from held
                held.clear()
            yield from maps
            maps.clear()
            yield ev
            continue
        if code == ET.format_description_event and ev.error is None:
            fde = spec.parse_fde(ev.raw[spec.LEN_EVENT_HEADER:])
        decoder.observe(ev)
        if code == ET.table_map_event:
            maps.append(ev)
            continue
        maps.clear()        # (a statement none of whose rows is kept: its TABLE_MAPs are left out)
        if code in GTID_TYPES or (not in_tx and is_begin(ev)):
            if held and not dropped:
                yield from held         # (a group that never ended: written as it is)
            held.clear()
            in_tx, dropped, written = True, False, False
            held.append(ev)
            continue
        if not in_tx:
            yield ev
            continue
        ends = is_commit(ev)
        if written:
            yield ev
        elif code in (ET.query_event, ET.query_compressed_event) and not ends and not is_begin(ev):
            written = True              # a statement of its own: the transaction is written
            yield from held
            held.clear()
            yield ev
        else:
            held.append(ev)
        if ends:
            if held and not dropped:
                yield from held
            held.clear()
            in_tx = False
    if held and not dropped:
        yield from held


def _plain(ev: Event, fde) -> bytes:
    """The bare bytes of a rows event, decompressed."""
    bare = bare_bytes(ev)
    return decompress(bare, fde, ev.file, ev.pos) if bare[4] in ROWS_COMPRESSED else bare


def _replace(ev: Event, bare: bytes, fde) -> None:
    """The Event made of other bare bytes, in place (its consumers read the new ones)."""
    new = parse_bare(bare, fde, ev.file, ev.pos, ev.payload_pos)
    ev.header, ev.raw, ev.checksum = new.header, new.raw, None
    ev._body, ev._fields, ev._overrides, ev._late, ev.error = new._body, None, None, None, new.error


def _reduce(ev: Event, kept: list[bool], table, fde, walker: RowWalker) -> None:
    """Rewrite the rows event `ev` in place to hold only its rows `kept` says (a plain event: a compressed
    one is written decompressed), parsed again for its consumers."""
    bare = _plain(ev, fde)
    lay = rows_layout(bare, fde, ev.file, ev.pos)
    n = lay.num_columns
    before = bare[lay.ofs_before:lay.ofs_before + lay.len_bitmap]
    after = bare[lay.ofs_after:lay.ofs_after + lay.len_bitmap] if lay.ofs_after is not None else None
    data = bare[lay.ofs_rows:]
    update = after is not None
    ends: list[int] = []
    try:
        walker.walk(table, n, before, after, data, update, ends=ends)
    except (ValueError, IndexError):
        ends = _decoded_ends(data, table, present_columns(before, n),
                             present_columns(after, n) if update else None,
                             bare[4] == ET.partial_update_rows_event)
    step = 2 if update else 1
    out, p = [], 0
    for k, keep in enumerate(kept):
        end = ends[k * step + step - 1]
        if keep:
            out.append(data[p:end])
        p = end
    _replace(ev, _with_len(bytearray(bare[:lay.ofs_rows]) + b"".join(out)), fde)


def _decoded_ends(data: bytes, table, before: list[int], after: list[int] | None, partial: bool) -> list[int]:
    """The image ends as the decoder finds them (rows.decoder's walk, MySQL's JSON diffs included)."""
    names, ends, p = table.names, [], 0
    while p < len(data):
        _, p = decode_image(data, p, table, before, names)
        ends.append(p)
        if after is not None:
            diffs = frozenset()
            if partial:
                diffs, p = _partial_columns(data, p, table)
            _, p = decode_image(data, p, table, after, names, diffs) if partial else \
                decode_image(data, p, table, after, names)
            ends.append(p)
    return ends


__all__ = ["RowFilterError", "RowFilterOptions", "RowSelector", "row_filter_options", "select_rows"]
