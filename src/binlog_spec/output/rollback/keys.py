"""The keys of the rows a rollback's conflict check (output.rollback.check) compares: what each row change
of a rows event writes or finds, as compared, and its hash.

A row is named by its table's key (`TableDef.row_key`) when the image holds the key's columns, none
of them NULL, else by its whole image. A key as compared is (table, column names, values normalized:
text without trailing spaces and case folded, as a PAD SPACE, case-insensitive collation compares;
a float NaN equal to every other); its `hash` is the index's, its text (`exact`) what is spooled and
confirmed.

`KeyReader.keys(ev, op, table)` is the fast path: for a table whose key is integers, and whose columns
are all of a kind the compiled image decoder steps over without a call (rows/_cdecoder.pyx
`image_keys`), the key values are read straight from the images, the other columns never decoded.
Anything else (no compiled core, an image not as planned, a NULL key, a layout fault) gives None,
and the caller decodes the event (`row_keys` of its row changes): the reference, which the fast path
gives the same keys as (tests/output/rollback/test_conflict_keys.py).
"""
from __future__ import annotations

from binlog_spec.binlog import spec
from binlog_spec.binlog.event_types import UPDATE
from binlog_spec.errors import BinlogError
from binlog_spec.rows import image_plan
from binlog_spec.rows.charsets import compared_text

#: Layouts (per table) remembered by a KeyReader before it starts again.
MAX_PLANS = 4096


class _NaN:
    """A float NaN key value: equal to every other (as its text is), one hash."""

    def __repr__(self) -> str:
        return "nan"


_NAN = _NaN()


def _norm(value):
    """A key value as compared: text without trailing spaces, case folded (PAD SPACE, _ci)."""
    if type(value) is str:
        return compared_text(value)
    return _NAN if type(value) is float and value != value else value


def exact(key: tuple) -> bytes:
    """A key's text, what is spooled and confirmed."""
    return repr(key).encode("utf-8", "backslashreplace")


def row_keys(changes, where: tuple[str, str], cols: tuple[str, ...] | None) -> list[tuple]:
    """(op, column names, values, key as compared, its hash) of every key the row changes write or
    find: one per image (both of an UPDATE's unless the same), the key's columns (NOT NULL: a None is
    a column the image lacks) or, without a key, the whole image's; a value of no hash (a JSON
    document's dict) hashes the key's text."""
    out = []
    append = out.append
    for rc in changes:
        before, after = rc.before, rc.after
        if after is not None and before is not None and len(after) < len(before):
            after = {**before, **after}      # an image without the columns the update left alone
        first = None
        for image in (before, after):
            if image is None:
                continue
            names = cols
            if cols is not None:
                vals = tuple(map(image.get, cols))
                if None in vals:
                    names, vals = tuple(image), tuple(image.values())
            else:
                names, vals = tuple(image), tuple(image.values())
            if first is not None and first[0] == names and first[1] == vals:
                continue
            norm = vals
            for v in vals:
                if type(v) is str or type(v) is float:
                    norm = tuple(_norm(x) for x in vals)
                    break
            key = (where, names, norm)
            try:
                h = hash(key)
            except TypeError:
                h = hash(exact(key))
            first = (names, vals)
            append((rc.op, names, vals, key, h))
    return out


class KeyReader:
    """The fast path of `row_keys`: the keys of a rows event read straight from its images."""

    def __init__(self) -> None:
        self.crows = image_plan.crows
        #: id(table) -> (table, {(op, n, bitmaps): (image decoders, key places) or False})
        self._plans: dict[int, tuple] = {}

    def keys(self, ev, op: str, table, where: tuple[str, str], cols: tuple[str, ...] | None) -> list[tuple] | None:
        """What `row_keys` gives of the event's row changes (`table`: its TABLE_MAP's; `cols`: its
        key's names), or None: decode the event."""
        got = self.values(ev, op, table, cols)
        if got is None:
            return None
        out = []
        append = out.append
        if op == UPDATE:
            for i in range(0, len(got), 2):
                vals = got[i]
                key = (where, cols, vals)
                append((op, cols, vals, key, hash(key)))
                if got[i + 1] != vals:
                    vals = got[i + 1]
                    key = (where, cols, vals)
                    append((op, cols, vals, key, hash(key)))
        else:
            for vals in got:
                key = (where, cols, vals)
                append((op, cols, vals, key, hash(key)))
        return out

    def values(self, ev, op: str, table, cols: tuple[str, ...] | None) -> list[tuple] | None:
        """The key values of the event's images as rows/_cdecoder.pyx `image_keys` reads them (an UPDATE's
        before then after image, row by row), or None: decode the event."""
        if self.crows is None or cols is None or ev.type_code == spec.EventType.partial_update_rows_event:
            return None
        try:
            table_id, n, before_bitmap, after_bitmap, buf = ev.rows_parts()
        except (BinlogError, spec.SpecError, KeyError, TypeError, ValueError):
            return None
        if type(buf) is not bytes or (op == UPDATE and after_bitmap is None):
            return None
        plan = self._plan(table, op, n, before_bitmap, after_bitmap if op == UPDATE else None)
        if not plan:
            return None
        return self.crows.image_keys(buf, *plan)

    def _plan(self, table, op: str, n: int, before_bitmap: bytes, after_bitmap: bytes | None):
        entry = self._plans.get(id(table))
        if entry is None or entry[0] is not table:
            if len(self._plans) >= MAX_PLANS:
                self._plans.clear()
            entry = self._plans[id(table)] = (table, {})
        shape = (op, n, before_bitmap, after_bitmap)
        plan = entry[1].get(shape)
        if plan is None:
            try:
                plan = entry[1][shape] = self._make(table, n, before_bitmap, after_bitmap) or False
            except (BinlogError, IndexError, KeyError, TypeError, ValueError):
                plan = entry[1][shape] = False
        return plan

    def _make(self, table, n: int, before_bitmap: bytes, after_bitmap: bytes | None):
        """(before image decoder, after image decoder or None, key places in each), or None: the
        layout is not one the fast path takes (rows.image_plan.key_plan)."""
        if self.crows is None:
            return None
        return image_plan.key_plan(table, n, before_bitmap, after_bitmap)


__all__ = ["KeyReader", "exact", "row_keys"]
