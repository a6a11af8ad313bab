"""Decompression of TRANSACTION_PAYLOAD_EVENT (zstd) and MariaDB compressed events (zlib)."""
from __future__ import annotations

import zlib

import zstandard

from binlog_spec.errors import PayloadError

#: TRANSACTION_PAYLOAD compression_type values (libbinlogevents/include/compression/base.h).
ZSTD = 0
NONE = 255


def transaction_payload(compression_type: int | None, data: bytes, uncompressed_size: int | None) -> bytes:
    """The serialized inner events of a TRANSACTION_PAYLOAD_EVENT."""
    if compression_type is None:
        raise PayloadError("the payload header has no compression type")
    if compression_type == NONE:
        return bytes(data)
    if compression_type != ZSTD:
        raise PayloadError(f"unknown compression type {compression_type}")
    try:
        dctx = zstandard.ZstdDecompressor()
        if uncompressed_size:
            out = dctx.decompress(data, max_output_size=uncompressed_size)
        else:
            out = dctx.decompressobj().decompress(data)
    except zstandard.ZstdError as exc:
        raise PayloadError(f"zstd: {exc}") from None
    except MemoryError:     # a size field or a frame (a bomb) asking for more than the process may have
        raise PayloadError(f"zstd payload of {len(data)} bytes does not fit in memory uncompressed "
                           f"(header says {uncompressed_size} bytes)") from None
    if uncompressed_size is not None and len(out) != uncompressed_size:
        raise PayloadError(f"zstd payload is {len(out)} bytes, header says {uncompressed_size}")
    return out


def mariadb_uncompress(block: bytes) -> bytes:
    """Undo MariaDB's binlog_buf_compress: a header byte, a big-endian length, then zlib data.

    Header byte: bit 7 set; bits 4-6 the algorithm (0 = zlib); bits 0-2 the
    number of length bytes that follow (sql/log_event.cc, binlog_buf_uncompress).
    """
    if not block:
        raise PayloadError("empty compressed block")
    head = block[0]
    if not head & 0x80:
        raise PayloadError(f"compressed block header 0x{head:02x} lacks the compressed flag")
    alg = (head >> 4) & 0x07
    if alg != 0:
        raise PayloadError(f"compressed block uses unknown algorithm {alg}")
    n = head & 0x07
    if not 1 <= n <= 4 or len(block) < 1 + n:
        raise PayloadError(f"compressed block header 0x{head:02x} has a bad length size")
    size = int.from_bytes(block[1:1 + n], "big")
    try:    # never more than the header's size (+1, to tell a longer block): no bomb past the header
        out = zlib.decompressobj().decompress(block[1 + n:], size + 1)
    except zlib.error as exc:
        raise PayloadError(f"zlib: {exc}") from None
    except MemoryError:
        raise PayloadError(f"zlib block of {len(block)} bytes does not fit in memory uncompressed "
                           f"(header says {size} bytes)") from None
    if len(out) != size:
        raise PayloadError(f"zlib block is {len(out)} bytes, header says {size}")
    return out
