"""Arrow record batches of the Spark records (spark/records.py): rows added as tuples, or a rows event's
row changes at once, and the VARIANT columns built by the compiled encoder where it runs."""
from __future__ import annotations

from typing import Iterator

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType, VariantType

from binlog_spec.spark import variant


class Batcher:
    """Rows (tuples in the schema's order) to Arrow record batches of `size` rows: no dict per row;
    each column is converted by pyarrow at once (a VARIANT column from its (value, metadata) pairs,
    a DECIMAL(20,0) from Python ints). With `raw_variants`, the rows hold the VARIANT columns' values
    themselves (row images, None: NULL), which `variant_column` encodes a column at a time."""

    def __init__(self, schema: StructType, size: int, raw_variants: bool = False):
        self.arrow = to_arrow_schema(schema, timezone="UTC")
        self.types = list(self.arrow.types)
        self.variants = [raw_variants and isinstance(f.dataType, VariantType) for f in schema.fields]
        self.rows: list[tuple] = []
        self.size = size

    def add(self, row: tuple) -> pa.RecordBatch | None:
        rows = self.rows
        rows.append(row)
        return self.flush() if len(rows) >= self.size else None

    def flush(self) -> pa.RecordBatch | None:
        if not self.rows:
            return None
        rows, self.rows = self.rows, []
        arrays = [variant_column(column, t) if raw else pa.array(column, type=t)
                  for column, t, raw in zip(zip(*rows), self.types, self.variants)]
        return pa.RecordBatch.from_arrays(arrays, schema=self.arrow)


class ChangeBatcher(Batcher):
    """The rows mode's batches (VARIANT images raw, `variant_column`) built a column at a time: the
    row changes of a rows event are added at once (`add_changes`), the columns that are the event's
    repeated, with no tuple per row; a row of its own (a fault's) is added value by value."""

    def __init__(self, schema: StructType, size: int):
        super().__init__(schema, size, True)
        self.cols: list[list] = [[] for _ in self.types]
        self.n = 0

    def add(self, row: tuple) -> pa.RecordBatch | None:
        for col, v in zip(self.cols, row):
            col.append(v)
        self.n += 1
        return self.flush() if self.n >= self.size else None

    def add_changes(self, changes: list, end_log_pos: int | None, xid, tail: tuple) -> Iterator[pa.RecordBatch]:
        """The row changes of one rows event (with the XID of its transaction; `tail`: the values of the
        columns after row_index, for every row)."""
        rc = changes[0]         # the event's: the same in each of its row changes
        same = (rc.file, rc.pos, end_log_pos, rc.timestamp * 1_000_000, rc.server_id, rc.gtid, xid, rc.schema,
                rc.table, rc.op)
        done, total = 0, len(changes)
        if total == 1:          # one row (an OLTP update or delete): a value per column, no slices
            cols = self.cols
            for col, v in zip(cols, (*same, rc.before, rc.after, rc.row_index, *tail)):
                col.append(v)
            self.n += 1
            if self.n >= self.size:
                yield self.flush()
            return
        while done < total:
            cols = self.cols            # new lists after each flush
            take = min(total - done, self.size - self.n)
            part = changes[done:done + take] if done or take < total else changes
            for col, v in zip(cols, same):
                col.extend([v] * take) if take > 1 else col.append(v)
            cols[10].extend([c.before for c in part])
            cols[11].extend([c.after for c in part])
            cols[12].extend([c.row_index for c in part])
            for col, v in zip(cols[13:], tail):
                col.extend([v] * take)
            done += take
            self.n += take
            if self.n >= self.size:
                yield self.flush()

    def flush(self) -> pa.RecordBatch | None:
        if not self.n:
            return None
        cols, self.cols, self.n = self.cols, [[] for _ in self.types], 0
        arrays = [variant_column(column, t) if raw else pa.array(column, type=t)
                  for column, t, raw in zip(cols, self.types, self.variants)]
        return pa.RecordBatch.from_arrays(arrays, schema=self.arrow)


def variant_column(images, arrow_type: pa.DataType, fast=variant.fast) -> pa.Array:
    """The VARIANT column (Arrow struct<value, metadata>) of `images` (values; None: NULL): by the
    compiled encoder (`fast`, spark/_cvariant.pyx) straight into the column's buffers, no Python object
    per value; without it, pyarrow's conversion of the pure encoder's pairs (the reference)."""
    if fast is None:
        encode = variant.encode
        return pa.array([None if i is None else encode(i) for i in images], type=arrow_type)
    if type(images) is not list:
        images = list(images)
    valid, voff, vdata, moff, mdata, nulls = fast.encode_column(images)
    n = len(images)
    value = pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(voff), pa.py_buffer(vdata)], null_count=0)
    meta = pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(moff), pa.py_buffer(mdata)], null_count=0)
    return pa.Array.from_buffers(arrow_type, n, [None if valid is None else pa.py_buffer(valid)], null_count=nulls,
                                 children=[value, meta])
