"""Count the rows of a rows event without decoding a single value.

A row image is a null bitmap over the present columns, then the stored
bytes of each non-NULL present column. Every column type's stored length
follows from the TABLE_MAP metadata alone (a fixed size) or from a length
prefix in the image: `column_sizes.layout(col) -> (fixed size, length-prefix size)`
is that one table; `RowWalker` uses it to step from image to image and count rows.

For one table layout (its TABLE_MAP and the columns-present bitmap) the walker
precomputes a plan: the total of the fixed sizes of the present columns, and
the variable-length ones; an image whose null bitmap is all clear is then
skipped with one addition plus one prefix read per variable column.
"""
from __future__ import annotations

from typing import Callable

from binlog_spec.rows import codegen
from binlog_spec.binlog import spec
from binlog_spec.binlog.fields.packed import packed_int
from binlog_spec.rows import values
from binlog_spec.errors import RowsLayoutError
from binlog_spec.rows.column_types import Column
from binlog_spec.rows.column_sizes import layout
from binlog_spec.errors import RowWalkError

CT = spec.ColumnType


class _Plan:
    """How to skip one image of a table layout."""

    __slots__ = ("n_null", "fixed_total", "var", "tail", "layouts", "all_fixed")

    def __init__(self, columns: list[Column]):
        self.n_null = (len(columns) + 7) >> 3
        self.layouts = [layout(c) for c in columns]
        self.fixed_total = sum(f for f, _ in self.layouts)
        #: (fixed bytes before it since the previous prefixed column, prefix size) per prefixed column
        steps, run = [], 0
        for f, p in self.layouts:
            if p:
                steps.append((run, p))
                run = 0
            else:
                run += f
        self.var = steps
        self.tail = run
        self.all_fixed = not steps

    def source(self, skip_name: str) -> list[str]:
        """Statements that step `pos` over one image (the null-free case inline, else `skip_name`)."""
        lines = [f"n{j} = buf[pos + {j}]" if j else "n0 = buf[pos]" for j in range(self.n_null)]
        test = " or ".join(f"n{j}" for j in range(self.n_null)) or "False"
        lines += [f"if {test}:", f"    pos += {self.n_null}"]
        for k, (f, p) in enumerate(self.layouts):
            if not (f or p):
                continue
            lines.append(f"    if not n{k >> 3} & {1 << (k & 7)}:")
            if p == 1:
                lines.append("        pos += 1 + buf[pos]")
            elif p == 2:
                lines.append("        pos += 2 + buf[pos] + (buf[pos + 1] << 8)")
            elif p:
                lines.append(f"        pos += {p} + int.from_bytes(buf[pos:pos + {p}], 'little')")
            else:
                lines.append(f"        pos += {f}")
        lines.append("else:")
        first = self.n_null
        for run, p in self.var:      # the fixed bytes before a prefix folded into its read: one statement each
            k = first + run
            if p == 1:
                lines.append(f"    pos += {k + 1} + buf[pos + {k}]")
            elif p == 2:
                lines.append(f"    pos += {k + 2} + buf[pos + {k}] + (buf[pos + {k + 1}] << 8)")
            else:
                lines.append(f"    pos += {k + p} + int.from_bytes(buf[pos + {k}:pos + {k + p}], 'little')")
            first = 0
        if first + self.tail:
            lines.append(f"    pos += {first + self.tail}")
        lines.append("    pass")
        return lines

    def skip(self, buf: bytes, pos: int) -> int:
        n_null = self.n_null
        nulls = buf[pos:pos + n_null]
        pos += n_null
        if not any(nulls):
            if self.all_fixed:
                return pos + self.fixed_total
            for run, p in self.var:
                pos += run
                if p == 1:
                    pos += 1 + buf[pos]
                else:
                    pos += p + int.from_bytes(buf[pos:pos + p], "little")
            return pos + self.tail
        for k, (f, p) in enumerate(self.layouts):
            if nulls[k >> 3] >> (k & 7) & 1:
                continue
            if p:
                pos += p + int.from_bytes(buf[pos:pos + p], "little")
            else:
                pos += f
        return pos


def _compile_walk(b: _Plan, a: _Plan | None) -> Callable[[bytes, int], tuple[int, int]]:
    """`walk(buf, end) -> (rows, end position)`: the images stepped over by straight-line code."""
    # the row count is the loop's own (no `count += 1` per row); a row takes at least one byte when
    # any column is present, so end + 1 turns are enough, and more means images of no bytes
    lines = ["def walk(buf, end):", "    pos = 0", "    for count in range(end + 1):",
             "        if pos >= end:", "            return count, pos"]
    lines += codegen.indent(b.source("skip_b"), 2)
    if a is not None:
        lines += codegen.indent(a.source("skip_a"), 2)
    lines += ["    raise RowWalkError('the row images take no bytes')"]
    globs = {"skip_b": b.skip, "skip_a": a.skip if a is not None else None, "RowWalkError": RowWalkError}
    return codegen.compile_function(lines, globs, "walk", "<rowwalk>")


def check_rows(table, n: int, before: bytes, after: bytes | None, len_rows: int, *, file: str | None = None,
               offset: int | None = None, event_type: str | None = None) -> None:
    """The rule every walk over row images (RowWalker here, rows.RowDecoder, binwriter.invert_rows)
    checks before its loop: the column count and bitmaps fit the TABLE_MAP, and when there are rows
    each image has a column present. An image then takes at least its null bitmap's byte, so every
    turn of a loop over the rows advances; an image of no column would take no bytes and never end
    the rows. Raises RowsLayoutError at the event."""
    problem = None
    if n > len(table.columns):
        problem = f"rows event has {n} columns, its TABLE_MAP {len(table.columns)}"
    elif len(before) != (n + 7) >> 3 or (after is not None and len(after) != len(before)):
        problem = f"columns-present bitmap of {len(before)} bytes for {n} columns"
    elif len_rows:
        mask = (1 << n) - 1
        if not int.from_bytes(before, "little") & mask or \
                (after is not None and not int.from_bytes(after, "little") & mask):
            problem = f"a row image with no column present cannot hold {len_rows} bytes of rows"
    if problem is not None:
        raise RowsLayoutError(problem, file=file, offset=offset, event_type=event_type)


def present_columns(bitmap: bytes, count: int) -> list[int]:
    """Indexes of the columns whose bit is set in a columns-present bitmap (LSB first in each byte)."""
    return [i for i in range(count) if bitmap[i >> 3] >> (i & 7) & 1]


#: Rows a layout is walked by the generic code before its straight-line walker is compiled
#: (compiling costs about as much as walking a few hundred rows).
COMPILE_AFTER_ROWS = 64


class RowWalker:
    """Plans per (table, bitmaps), kept while the TABLE_MAP stays equal."""

    def __init__(self, compile_after_rows: int = COMPILE_AFTER_ROWS) -> None:
        self._plans: dict[tuple, list] = {}
        self.compile_after_rows = compile_after_rows

    def plans(self, table, n: int, before: bytes, after: bytes | None, update: bool):
        key = (table.table_id, n, before, after if update else None)
        entry = self._plans.get(key)
        if entry is not None and entry[0] is table:
            if entry[3] is None and entry[4] >= self.compile_after_rows:    # a layout worth compiling
                entry[3] = _compile_walk(entry[1], entry[2])
            return entry
        cols = table.columns
        b = _Plan([cols[i] for i in present_columns(before, n)])
        a = _Plan([cols[i] for i in present_columns(after, n)]) if update else None
        if len(self._plans) > 4096:
            self._plans.clear()
        entry = self._plans[key] = [table, b, a, None, 0]
        return entry

    def walk(self, table, n: int, before: bytes, after: bytes | None, buf: bytes, update: bool,
             partial: bool = False, ends: list[int] | None = None) -> tuple[int, int]:
        """(rows, end position) of the rows of one event; `ends` collects the position after
        each image (two per row for an update)."""
        check_rows(table, n, before, after if update else None, len(buf))
        entry = self.plans(table, n, before, after, update)
        _, b, a, fast, _ = entry
        end = len(buf)
        if fast is not None and ends is None and not partial:
            count, pos = fast(buf, end)
            if pos > end:
                raise RowWalkError(f"the last row image runs past the rows ({pos} > {end})")
            return count, pos
        pos = count = 0
        while pos < end:
            pos = b.skip(buf, pos)
            if ends is not None:
                ends.append(pos)
            if update:
                if partial:
                    pos = self._partial_after(table, a, buf, pos)
                else:
                    pos = a.skip(buf, pos)
                if ends is not None:
                    ends.append(pos)
            count += 1
            if pos > end:
                raise RowWalkError(f"row {count - 1} runs past the rows ({pos} > {end})")
        entry[4] += count
        return count, pos

    @staticmethod
    def _partial_after(table, a: "_Plan", buf: bytes, pos: int) -> int:
        """PARTIAL_UPDATE_ROWS after image: value_options (packed integer), with PARTIAL_JSON_UPDATES
        a bitmap over the JSON columns, then an image whose partial JSON columns hold diffs, which
        are length-prefixed like the document itself: the image is skipped the same way."""
        try:
            options, pos = packed_int(buf, pos)
        except values.ValueDecodeError as exc:
            raise RowWalkError(str(exc)) from None
        if options & 1:
            n_json = sum(1 for c in table.columns if c.type_code == CT.json)
            pos += (n_json + 7) >> 3
        return a.skip(buf, pos)


__all__ = ["RowWalker", "RowWalkError", "check_rows"]
