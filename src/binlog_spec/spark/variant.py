"""Spark VARIANT values from decoded binlog values, without a JSON round trip.

`encode(value)` returns the ``(value, metadata)`` byte pair of a Spark VARIANT
holding exactly what ``parse_json`` makes of the JSON text the CLI prints for
that value (``jsonenc.dumps``): the JSON encoding of docs/output.md is the
contract, and the VARIANT is that document. So

* integers are INT1..INT8 by size, larger ones DECIMAL(≤38, 0) (BIGINT UNSIGNED
  18446744073709551615 stays exact), beyond 38 digits DOUBLE;
* a float is DECIMAL when its shortest text ``repr(f)`` has no exponent and fits
  DECIMAL(38), DOUBLE otherwise (as parse_json reads ``1.100000023841858``);
* DECIMAL column values, dates, times and timestamps are strings, bytes are
  ``{"hex": "..."}``, sets sorted lists, as in the CLI's JSON.

The byte layout is the one pyspark's own ``VariantBuilder.build(json_text)``
writes (dictionary in first-seen order, object fields sorted by name, data in
insertion order, smallest offset widths); ``tests/test_spark.py`` checks the
two are byte-identical over the corpus. This module is pure Python and needs
neither pyspark nor pyarrow; where the compiled core is built, `encode` is its twin
`binlog_spec.spark._cvariant.encode` (the same bytes; tests/spark/test_compiled_variant.py).
"""
from __future__ import annotations

import datetime as dt
import decimal
import itertools
import operator
import struct
from typing import Any

from binlog_spec import compiled
from binlog_spec.output import jsonenc

# Basic types and primitive type ids (org.apache.spark.types.variant.VariantUtil).
_PRIMITIVE, _SHORT_STR, _OBJECT, _ARRAY = 0, 1, 2, 3
_NULL, _TRUE, _FALSE, _INT1, _INT2, _INT4, _INT8, _DOUBLE = 0, 1, 2, 3, 4, 5, 6, 7
_DECIMAL4, _DECIMAL8, _DECIMAL16, _LONG_STR = 8, 9, 10, 16
_VERSION = 1
_MAX_SHORT_STR = 0x3F
_MAX_DECIMAL4, _MAX_DECIMAL8, _MAX_DECIMAL16 = 9, 18, 38

_B_NULL = bytes([_NULL << 2])
_B_TRUE = bytes([_TRUE << 2])
_B_FALSE = bytes([_FALSE << 2])
_H_INT1, _H_INT2, _H_INT4, _H_INT8 = (bytes([t << 2]) for t in (_INT1, _INT2, _INT4, _INT8))
_H_DOUBLE = bytes([_DOUBLE << 2])
_H_DEC4, _H_DEC8, _H_DEC16 = (bytes([t << 2]) for t in (_DECIMAL4, _DECIMAL8, _DECIMAL16))
_H_LONG_STR = bytes([_LONG_STR << 2])
_SHORT_STR_HEADERS = [bytes([n << 2 | _SHORT_STR]) for n in range(_MAX_SHORT_STR + 1)]
_DECIMAL_CHARS = frozenset("0123456789-.")


def _int_size(value: int) -> int:
    return 1 if value <= 0xFF else 2 if value <= 0xFFFF else 3


def _decimal(d: decimal.Decimal) -> bytes:
    sign, digits, exponent = d.as_tuple()
    precision, scale = len(digits), -exponent
    unscaled = int("".join(map(str, digits)))
    if d < 0:
        unscaled = -unscaled
    if scale <= _MAX_DECIMAL4 and precision <= _MAX_DECIMAL4:
        return _H_DEC4 + bytes([scale]) + unscaled.to_bytes(4, "little", signed=True)
    if scale <= _MAX_DECIMAL8 and precision <= _MAX_DECIMAL8:
        return _H_DEC8 + bytes([scale]) + unscaled.to_bytes(8, "little", signed=True)
    return _H_DEC16 + bytes([scale]) + unscaled.to_bytes(16, "little", signed=True)


def _number_text(text: str) -> bytes:
    """A JSON number with a fraction or exponent, as parse_json reads it."""
    if all(ch in _DECIMAL_CHARS for ch in text):
        d = decimal.Decimal(text)
        _sign, digits, exponent = d.as_tuple()
        if -exponent <= _MAX_DECIMAL16 and len(digits) <= _MAX_DECIMAL16:
            return _decimal(d)
    return _H_DOUBLE + struct.pack("<d", float(text))


def _int(i: int) -> bytes:
    if -0x80 <= i <= 0x7F:
        return _H_INT1 + i.to_bytes(1, "little", signed=True)
    if -0x8000 <= i <= 0x7FFF:
        return _H_INT2 + i.to_bytes(2, "little", signed=True)
    if -0x80000000 <= i <= 0x7FFFFFFF:
        return _H_INT4 + i.to_bytes(4, "little", signed=True)
    if -0x8000000000000000 <= i <= 0x7FFFFFFFFFFFFFFF:
        return _H_INT8 + i.to_bytes(8, "little", signed=True)
    return _number_text(str(i))


def _string(s: str) -> bytes:
    data = s.encode("utf-8", errors="surrogatepass")
    n = len(data)
    if n > _MAX_SHORT_STR:
        return _H_LONG_STR + n.to_bytes(4, "little") + data
    return _SHORT_STR_HEADERS[n] + data


class _Encoder:
    __slots__ = ("keys", "key_list")

    def __init__(self) -> None:
        self.keys: dict[str, int] = {}
        self.key_list: list[bytes] = []

    def key(self, k: str) -> int:
        i = self.keys.get(k)
        if i is None:
            i = self.keys[k] = len(self.key_list)
            self.key_list.append(k.encode("utf-8", errors="surrogatepass"))
        return i

    def value(self, v: Any) -> bytes:
        t = type(v)
        if t is str:
            return _string(v)
        if t is dict:
            return self.obj(v)
        if v is None:
            return _B_NULL
        if t is bool:
            return _B_TRUE if v else _B_FALSE
        if t is int:
            return _int(v)
        if t is float:
            if v != v or v in (float("inf"), float("-inf")):
                return _H_DOUBLE + struct.pack("<d", v)
            return _number_text(repr(v))
        if t is list or t is tuple:
            return self.array(v)
        if isinstance(v, bool):
            return _B_TRUE if v else _B_FALSE
        if isinstance(v, int):
            return _int(int(v))
        if isinstance(v, str):
            return _string(str(v))
        if isinstance(v, dict):
            return self.obj(v)
        if isinstance(v, (list, tuple)):
            return self.array(v)
        if isinstance(v, float):
            return self.value(float(v))
        # Everything else goes through the CLI's JSON encoding (bytes, Decimal, dates, sets, ...).
        return self.value(jsonenc.default(v))

    def obj(self, d: dict) -> bytes:
        fields = []
        parts = []
        offset = 0
        for k, v in d.items():
            k = k if type(k) is str else _json_key(k)
            kid = self.key(k)  # before the value: the dictionary is in first-seen order
            data = self.value(v)
            fields.append((k, kid, offset))
            parts.append(data)
            offset += len(data)
        fields.sort(key=lambda f: f[0])
        n = len(fields)
        large = n > 0xFF
        id_size = _int_size(max((f[1] for f in fields), default=0))
        off_size = _int_size(offset)
        header = bytes([(large << 6) | ((id_size - 1) << 4) | ((off_size - 1) << 2) | _OBJECT])
        out = [header, n.to_bytes(4 if large else 1, "little")]
        out.extend(f[1].to_bytes(id_size, "little") for f in fields)
        out.extend(f[2].to_bytes(off_size, "little") for f in fields)
        out.append(offset.to_bytes(off_size, "little"))
        out.extend(parts)
        return b"".join(out)

    def array(self, items) -> bytes:
        parts = [self.value(v) for v in items]
        offsets, offset = _offsets(parts)
        n = len(parts)
        large = n > 0xFF
        off_size = _int_size(offset)
        header = bytes([(large << 4) | ((off_size - 1) << 2) | _ARRAY])
        out = [header, n.to_bytes(4 if large else 1, "little")]
        out.extend(o.to_bytes(off_size, "little") for o in offsets)
        out.append(offset.to_bytes(off_size, "little"))
        out.extend(parts)
        return b"".join(out)

    def metadata(self) -> bytes:
        total = sum(len(k) for k in self.key_list)
        size = _int_size(max(total, len(self.key_list)))
        out = [bytes([_VERSION | ((size - 1) << 6)]), len(self.key_list).to_bytes(size, "little")]
        offset = 0
        for k in self.key_list:
            out.append(offset.to_bytes(size, "little"))
            offset += len(k)
        out.append(offset.to_bytes(size, "little"))
        out.extend(self.key_list)
        return b"".join(out)


def _json_key(k: Any) -> str:
    """json.dumps turns non-string keys into strings this way."""
    for const, text in ((True, "true"), (False, "false"), (None, "null")):
        if k is const:
            return text
    return repr(k) if isinstance(k, float) else str(k)


def _offsets(parts: list[bytes]) -> tuple[list[int], int]:
    """The offset of each part in their concatenation, and its length."""
    offsets, total = [], 0
    for p in parts:
        offsets.append(total)
        total += len(p)
    return offsets, total


def encode(value: Any) -> tuple[bytes, bytes]:
    """(value, metadata) of the VARIANT that parse_json makes of ``jsonenc.dumps(value)``."""
    if type(value) is dict:
        flat = _encode_flat(value)
        if flat is not None:
            return flat
    enc = _Encoder()
    data = enc.value(value)
    return data, enc.metadata()


# ------------------------------------------------------------------ fast path for row images
_TEXT_TYPES = (decimal.Decimal, dt.datetime, dt.date, dt.time, dt.timedelta)
#: keys, or (keys, the indexes of the bytes values) -> the layout every image of that shape shares.
_LAYOUTS: dict[tuple, tuple] = {}
_HEX_KEY = "hex"
#: INT1 values -128..127, encoded once.
_SMALL_INTS = [_H_INT1 + i.to_bytes(1, "little", signed=True) for i in range(-0x80, 0x80)]
#: n -> the packer of n little-endian 16-bit offsets.
_PACK16: dict[int, Any] = {}


def _layout(keys: tuple, hexed: tuple) -> tuple:
    """What every object of these keys shares (its values' bytes aside; `hexed`: the indexes of the
    values that are bytes, written {"hex": ...}): the offsets in key order as a getter of the list
    of offsets (the total last), the object's first bytes for each offset width (1, 2, 3), the
    metadata, and the header of a {"hex": ...} object."""
    enc = _Encoder()
    ids = []
    hex_id = None
    for i, k in enumerate(keys):
        ids.append(enc.key(k))
        if i in hexed and hex_id is None:
            hex_id = enc.key(_HEX_KEY)
    n = len(keys)
    order = sorted(range(n), key=lambda i: keys[i])
    large = n > 0xFF
    id_size = _int_size(max(ids, default=0))
    count = n.to_bytes(4 if large else 1, "little")
    id_list = b"".join(ids[i].to_bytes(id_size, "little") for i in order)
    flags = (large << 6) | ((id_size - 1) << 4) | _OBJECT
    prefixes = [b""] + [bytes([flags | ((size - 1) << 2)]) + count + id_list for size in (1, 2, 3)]
    hex_head = None
    if hex_id is not None:
        hid = _int_size(hex_id)
        hex_head = (((hid - 1) << 4) | _OBJECT, b"\x01" + hex_id.to_bytes(hid, "little"))
    return operator.itemgetter(*order, n), prefixes, enc.metadata(), hex_head


def _encode_flat(d: dict) -> tuple[bytes, bytes] | None:
    """An image whose values are scalars or bytes (no JSON document, list or set): its layout
    (dictionary, field order, id widths) is cached by shape, only the values are encoded."""
    parts = []
    append = parts.append
    hexed = None
    for v in d.values():
        t = type(v)
        if t is int:
            append(_SMALL_INTS[v + 0x80] if -0x80 <= v <= 0x7F else _int(v))
        elif t is str:
            append(_string(v))
        elif v is None:
            append(_B_NULL)
        elif t is bytes:
            hexed = (hexed or ()) + (len(parts),)
            append(_string(v.hex()))
        elif t is float:
            if v != v or v in (float("inf"), float("-inf")):
                append(_H_DOUBLE + struct.pack("<d", v))
            else:
                append(_number_text(repr(v)))
        elif t is bool:
            append(_B_TRUE if v else _B_FALSE)
        elif isinstance(v, _TEXT_TYPES):
            append(_string(jsonenc.default(v)))
        else:
            return None
    if not parts:
        return None
    keys = tuple(d)
    shape = keys if hexed is None else (keys, hexed)
    layout = _LAYOUTS.get(shape)
    if layout is None:
        if any(type(k) is not str for k in keys):
            return None
        if len(_LAYOUTS) > 4096:
            _LAYOUTS.clear()
        layout = _LAYOUTS[shape] = _layout(keys, hexed or ())
    ordered, prefixes, metadata, hex_head = layout
    if hexed is not None:
        hflags, hmid = hex_head
        for i in hexed:
            s = parts[i]
            size = _int_size(len(s))
            parts[i] = b"".join((bytes([hflags | ((size - 1) << 2)]), hmid, (0).to_bytes(size, "little"),
                                 len(s).to_bytes(size, "little"), s))
    offsets = ordered(list(itertools.accumulate(map(len, parts), initial=0)))
    total = offsets[-1]
    if total <= 0xFF:
        size, table = 1, bytes(offsets)
    elif total <= 0xFFFF:
        pack = _PACK16.get(len(offsets))
        if pack is None:
            pack = _PACK16[len(offsets)] = struct.Struct(f"<{len(offsets)}H").pack
        size, table = 2, pack(*offsets)
    else:
        size, table = 3, b"".join(o.to_bytes(3, "little") for o in offsets)
    return prefixes[size] + table + b"".join(parts), metadata


#: The pure-Python encoder: the reference, and what the compiled one hands what it does not take.
encode_pure = encode
#: The compiled twin (spark/_cvariant.pyx: the same bytes, `encode_column` for whole Arrow columns), or
#: None where it is not built or the pure core is requested (binlog_spec.compiled).
fast = compiled.load("binlog_spec.spark._cvariant")
if fast is not None:
    encode = fast.encode  # noqa: F811 - the compiled twin replaces the reference

__all__ = ["encode", "encode_pure", "fast"]
