"""Packed (length-encoded) integers of the binlog: net_field_length, mysys/pack.cc."""
from __future__ import annotations

from binlog_spec.errors import ValueDecodeError


#: First byte of a packed integer -> bytes that follow it (below 0xfb: none, the byte is the value).
_PACKED_INT_SIZES = {0xFC: 2, 0xFD: 3, 0xFE: 8}


def packed_int(buf: bytes, pos: int) -> tuple[int, int]:
    """A packed integer (net_field_length, mysys/pack.cc): 1 byte below 251, else 0xfc + 2,
    0xfd + 3 or 0xfe + 8 bytes little-endian. Returns (value, position after it)."""
    if not 0 <= pos < len(buf):
        raise ValueDecodeError(f"packed integer at offset {pos} is past the end ({len(buf)} bytes)")
    first = buf[pos]
    if first < 0xFB:
        return first, pos + 1
    size = _PACKED_INT_SIZES.get(first)
    if size is None:
        raise ValueDecodeError(f"bad packed integer first byte {first:#04x} at offset {pos}")
    end = pos + 1 + size
    if end > len(buf):
        raise ValueDecodeError(f"packed integer at offset {pos} runs past the end ({len(buf)} bytes)")
    return int.from_bytes(buf[pos + 1:end], "little"), end
