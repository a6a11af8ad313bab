"""One home of a column type's stored size in a row image: `LAYOUTS` maps each binlog column type code
(the keys of `values.COLUMN_TYPES`) to `layout(col) -> (fixed size, length-prefix size)`, from the
TABLE_MAP metadata alone. The walker steps over images with it, the inline decoders (codegen) advance by
it; the value decoders consume exactly these sizes (tests/rows/test_column_sizes.py checks each type).
"""
from __future__ import annotations

from typing import Callable

from binlog_spec.binlog import spec
from binlog_spec.errors import RowWalkError
from binlog_spec.rows import scalars
from binlog_spec.rows.column_types import DEFAULT_PACK_LENGTH, Column
from binlog_spec.rows.scalars import old_temporal_size

CT = spec.ColumnType


def _meta(col: Column, key: str, default=None):
    m = col.meta if isinstance(col.meta, dict) else {}
    v = m.get(key, default)
    if not isinstance(v, int):
        raise RowWalkError(f"column metadata has no {key!r} (got {col.meta!r})")
    return v


def _fixed(n: int) -> Callable[[Column], int]:
    return lambda col: n


def _bit_size(col: Column) -> int:
    return _meta(col, "bytes") + (1 if _meta(col, "bits") else 0)


def _decimal_size(col: Column) -> int:
    return scalars.decimal_binary_size(_meta(col, "precision"), _meta(col, "scale"))


def _old_decimal_size(col: Column) -> int:
    return _meta(col, "pack_length")


def _frac(base: int) -> Callable[[Column], int]:
    return lambda col: base + (_meta(col, "fsp") + 1) // 2


def _pack(col: Column) -> int:
    m = col.meta if isinstance(col.meta, dict) else {}
    size = m.get("pack_length", m.get("max_length", m.get("byte1")))
    if not isinstance(size, int):
        raise RowWalkError(f"ENUM/SET metadata has no pack length (got {col.meta!r})")
    return size


def _unsized(col: Column) -> int:
    raise RowWalkError(f"column type {col.type_code} has no row format")




def _varchar_prefix(col: Column) -> int:
    return 1 if _meta(col, "max_length") < 256 else 2


def _blob_prefix(col: Column) -> int:
    m = col.meta if isinstance(col.meta, dict) else {}
    p = m.get("pack_length", DEFAULT_PACK_LENGTH.get(col.type_code))
    if not isinstance(p, int) or not 1 <= p <= 4:
        raise RowWalkError(f"blob metadata has no pack length 1-4 (got {col.meta!r})")
    return p


def _string_layout(col: Column) -> tuple[int, int]:
    real = col.meta.get("real_type", CT.string) if isinstance(col.meta, dict) else CT.string
    if real in (CT.enum, CT.set):
        return _pack(col), 0
    return 0, _varchar_prefix(col)


#: type code -> layout(col) -> (fixed size, length-prefix size): exactly one is non-zero
#: (or both zero: a NULL-type column that takes no bytes).
LAYOUTS: dict[int, Callable[[Column], tuple[int, int]]] = {}


def _fixed_layout(f: Callable[[Column], int]) -> Callable[[Column], tuple[int, int]]:
    return lambda col: (f(col), 0)


def _prefix_layout(f: Callable[[Column], int]) -> Callable[[Column], tuple[int, int]]:
    return lambda col: (0, f(col))


for _code, _f in {
    CT.decimal: _old_decimal_size, CT.tiny: _fixed(1), CT.short: _fixed(2), CT.long: _fixed(4),
    CT.float: _fixed(4), CT.double: _fixed(8), CT.null: _fixed(0), CT.timestamp: old_temporal_size,
    CT.longlong: _fixed(8), CT.int24: _fixed(3), CT.date: _fixed(3), CT.time: old_temporal_size,
    CT.datetime: old_temporal_size, CT.year: _fixed(1), CT.newdate: _fixed(3), CT.bit: _bit_size,
    CT.timestamp2: _frac(4), CT.datetime2: _frac(5), CT.time2: _frac(3), CT.typed_array: _unsized,
    CT.invalid: _unsized, CT.bool: _unsized, CT.newdecimal: _decimal_size, CT.enum: _pack, CT.set: _pack,
}.items():
    LAYOUTS[_code] = _fixed_layout(_f)
for _code, _f in {
    CT.varchar: _varchar_prefix, CT.var_string: _varchar_prefix, CT.varchar_compressed: _varchar_prefix,
    CT.blob_compressed: _blob_prefix, CT.vector: _blob_prefix, CT.json: _blob_prefix,
    CT.tiny_blob: _blob_prefix, CT.medium_blob: _blob_prefix, CT.long_blob: _blob_prefix,
    CT.blob: _blob_prefix, CT.geometry: _blob_prefix,
}.items():
    LAYOUTS[_code] = _prefix_layout(_f)
LAYOUTS[CT.string] = _string_layout


def layout(col: Column) -> tuple[int, int]:
    f = LAYOUTS.get(col.type_code)
    if f is None:
        raise RowWalkError(f"unknown column type {col.type_code}")
    return f(col)


def value_size(buf: bytes, pos: int, col: Column) -> int:
    """Position after the stored value of `col` at `buf[pos]`."""
    fixed, prefix = layout(col)
    if prefix:
        return pos + prefix + int.from_bytes(buf[pos:pos + prefix], "little")
    return pos + fixed
