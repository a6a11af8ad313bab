"""Decompression of MySQL transaction payloads (zstd) and MariaDB compressed blocks (zlib): byte literals."""
from __future__ import annotations

import struct
import zlib

import pytest
import zstandard

import binlog_spec
from binlog_spec.binlog.fields import payload

from test_reader_errors import FDE, MAGIC, collect, event, write


def test_mariadb_block_with_one_length_byte():
    data = b"INSERT INTO t VALUES (1)"
    block = bytes([0x81, len(data)]) + zlib.compress(data)
    assert payload.mariadb_uncompress(block) == data


def test_mariadb_block_length_is_big_endian():
    data = b"x" * 70000
    block = bytes([0x83]) + len(data).to_bytes(3, "big") + zlib.compress(data)
    assert payload.mariadb_uncompress(block) == data


@pytest.mark.parametrize("block, message", [
    (b"", "empty"),
    (b"\x01\x05abc", "lacks the compressed flag"),
    (b"\x91\x05abc", "unknown algorithm 1"),
    (b"\x80", "bad length size"),
    (b"\x81\x05not zlib", "zlib"),
    (bytes([0x81, 9]) + zlib.compress(b"12345678"), "8 bytes, header says 9"),
])
def test_mariadb_block_errors(block, message):
    with pytest.raises(payload.PayloadError, match=message):
        payload.mariadb_uncompress(block)


def test_transaction_payload_checks_the_announced_size():
    raw = b"\x00" * 40
    frame = zstandard.ZstdCompressor().compress(raw)
    assert payload.transaction_payload(payload.ZSTD, frame, 40) == raw
    assert payload.transaction_payload(payload.NONE, raw, None) == raw
    with pytest.raises(payload.PayloadError, match="header says 41"):
        payload.transaction_payload(payload.ZSTD, frame, 41)
    with pytest.raises(payload.PayloadError, match="unknown compression type 7"):
        payload.transaction_payload(7, frame, 40)


def _packed(n: int) -> bytes:
    return bytes([n]) if n < 251 else b"\xfc" + struct.pack("<H", n)


def _field(code: int, value: int) -> bytes:
    v = _packed(value)
    return bytes([code]) + _packed(len(v)) + v


def _payload_event(compressed: bytes, ctype: int, usize: int) -> bytes:
    fields = _field(2, ctype) + _field(3, usize) + _field(1, len(compressed)) + b"\x00"
    return event(40, fields + compressed)


def test_a_corrupt_payload_is_a_decompression_error_at_the_payload(tmp_path):
    ev = _payload_event(b"\x28\xb5\x2f\xfd" + b"garbage!", 0, 50)
    events, err = collect(write(tmp_path, MAGIC + FDE + ev))
    assert len(events) == 2 and isinstance(err, binlog_spec.DecompressionError)
    assert (err.offset, err.event_type) == (123, "TRANSACTION_PAYLOAD_EVENT")


def test_an_uncompressed_payload_yields_its_inner_events(tmp_path):
    inner = event(16, struct.pack("<Q", 42), crc=False) + event(16, struct.pack("<Q", 43), crc=False)
    ev = _payload_event(inner, 255, len(inner))
    events, err = collect(write(tmp_path, MAGIC + FDE + ev))
    assert err is None
    assert [(e.type, e.is_inner) for e in events[1:]] == [("TRANSACTION_PAYLOAD_EVENT", False),
                                                         ("XID_EVENT", True), ("XID_EVENT", True)]
    assert [e.xid for e in events[2:]] == [42, 43]
    assert events[1].compression_type == "NONE"


def test_an_inner_event_running_past_the_payload_is_truncated(tmp_path):
    inner = event(16, struct.pack("<Q", 42), crc=False)[:-3]
    events, err = collect(write(tmp_path, MAGIC + FDE + _payload_event(inner, 255, len(inner))))
    assert isinstance(err, binlog_spec.TruncatedEventError) and err.offset == 123
    assert "payload offset 0" in err.message


def test_a_zlib_block_longer_than_its_header_says_stops_at_the_header_size():
    """A compressed event is uncompressed up to the size its header gives, not as far as its data goes
    (64 MiB of zeros in a 64 KiB block: a bomb for a header that says 1000 bytes)."""
    bomb = bytes([0x84]) + (1000).to_bytes(4, "big") + zlib.compress(bytes(64 << 20), 9)
    assert len(bomb) < 100_000
    with pytest.raises(payload.PayloadError, match="1001 bytes, header says 1000"):
        payload.mariadb_uncompress(bomb)
