"""A real file over 4 GiB: positions keep growing past 2^32 while end_log_pos wraps.

Writes ~4.2 GB to a temporary folder (about half a minute); the events are
64 MiB QUERY_EVENTs with correct CRC32s, so the reader checks every byte.
"""
from __future__ import annotations

import shutil
import struct
import zlib

import binlog_spec

from test_spec_seeds import seed_fde_bytes

EVENT_SIZE = 64 << 20
FOUR_GIB = 1 << 32


def query_event(pos: int, text: bytes) -> bytes:
    post = struct.pack("<IIBHH", 1, 0, 0, 0, 0)  # thread, exec time, db len, error, status vars len
    body = post + b"\x00" + text
    size = 19 + len(body) + 4
    head = struct.pack("<IBIIIH", 1700000000, 2, 7, size, (pos + size) % FOUR_GIB, 0)
    raw = head + body
    return raw + struct.pack("<I", zlib.crc32(raw))


def test_a_binlog_over_4_gib_reads_to_the_end(tmp_path):
    if shutil.disk_usage(tmp_path).free < 6 * (1 << 30):
        raise AssertionError(f"need 6 GiB free in {tmp_path} for the >4 GiB file")
    fde = seed_fde_bytes()[4:]
    path = tmp_path / "big.000001"
    text_len = EVENT_SIZE - 19 - 14 - 4
    count = FOUR_GIB // EVENT_SIZE + 2
    with open(path, "wb") as f:
        f.write(b"\xfebin" + fde)
        pos = 4 + len(fde)
        for i in range(count):
            ev = query_event(pos, (b"%08d" % i) + b"-" * (text_len - 8))
            assert len(ev) == EVENT_SIZE
            f.write(ev)
            pos += EVENT_SIZE
    total = pos
    assert total > FOUR_GIB
    n, last = 0, None
    with binlog_spec.open(path) as reader:
        for ev in reader:
            if ev.type == "QUERY_EVENT":
                assert ev.end_log_pos == (ev.pos + ev.size) % FOUR_GIB
                if n in (0, count - 1):
                    assert ev.query.startswith(f"{n:08d}-")
                n += 1
                last = ev
    assert n == count
    assert last.pos == total - EVENT_SIZE and last.pos > FOUR_GIB
    assert last.end_log_pos == total % FOUR_GIB != total
