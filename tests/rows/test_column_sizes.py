"""The one table of column sizes (rows/column_sizes.py): every decoder consumes exactly the bytes it says."""
from __future__ import annotations

import pytest

from binlog_spec.binlog import spec
from binlog_spec.rows import values
from binlog_spec.rows.column_sizes import LAYOUTS, layout, value_size
from binlog_spec.rows.column_types import Column

CT = spec.ColumnType


def test_every_column_type_the_decoders_know_has_a_size():
    assert set(values.COLUMN_TYPES) <= set(LAYOUTS)


# (column, stored bytes of one value) written by hand from the server's row format, followed by bytes
# that belong to the next value: the decoder and the size table must both stop at the same place.
CASES = [
    (Column(CT.tiny, {}), b"\x7f"),
    (Column(CT.short, {}), b"\x01\x80"),
    (Column(CT.int24, {}), b"\x01\x02\x83"),
    (Column(CT.long, {}), b"\xff\xff\xff\xff"),
    (Column(CT.longlong, {}), bytes(8)),
    (Column(CT.float, {}), b"\x00\x00\x80\x3f"),
    (Column(CT.double, {}), b"\x00" * 6 + b"\xf0\x3f"),
    (Column(CT.year, {}), b"\x7a"),
    (Column(CT.date, {}), b"\x21\xf2\x0f"),
    (Column(CT.newdecimal, {"precision": 10, "scale": 2}), b"\x80\x00\x00\x00\x01"),
    (Column(CT.timestamp2, {"fsp": 3}), b"\x5f\x00\x00\x00\x01\x02"),
    (Column(CT.datetime2, {"fsp": 0}), b"\x99\xb2\x3a\x00\x00"),
    (Column(CT.time2, {"fsp": 6}), b"\x80\x00\x00\x00\x00\x01"),
    (Column(CT.bit, {"bits": 3, "bytes": 1}), b"\x01\x05"),
    (Column(CT.varchar, {"max_length": 20}), b"\x03abc"),
    (Column(CT.varchar, {"max_length": 300}), b"\x03\x00abc"),
    (Column(CT.blob, {"pack_length": 2}), b"\x02\x00hi"),
    (Column(CT.blob, {"pack_length": 4}), b"\x01\x00\x00\x00z"),
    (Column(CT.string, {"real_type": CT.string, "max_length": 10}), b"\x02ab"),
    (Column(CT.string, {"real_type": CT.enum, "pack_length": 1}, enum_values=(b"a", b"b")), b"\x02"),
    (Column(CT.string, {"real_type": CT.set, "pack_length": 2}, set_values=(b"a", b"b")), b"\x03\x00"),
]


@pytest.mark.parametrize("col, stored", CASES, ids=lambda c: getattr(getattr(c, "type_code", None), "name", None))
def test_a_decoder_consumes_the_size_the_table_gives(col, stored):
    buf = b"\xee" + stored + b"\xee\xee"            # a byte before, two after
    _, end = values.decode_value(buf, 1, col)
    assert end == 1 + len(stored)
    assert value_size(buf, 1, col) == end


def test_a_fixed_size_type_needs_no_metadata_and_a_prefixed_one_says_its_prefix():
    assert layout(Column(CT.long, {})) == (4, 0)
    assert layout(Column(CT.varchar, {"max_length": 300})) == (0, 2)
