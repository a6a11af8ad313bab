#!/usr/bin/env python3
"""Make a big, valid binlog out of a real one, for benchmarks.

    python benchmarks/make_big_binlog.py OUT [--size-mb 1024] [--source FILE]

The output is the source's magic and FORMAT_DESCRIPTION_EVENT, followed by the
source's transactions (each GTID/ANONYMOUS_GTID event and everything up to the
next one, so GTID..XID stays whole) repeated in order until OUT holds at least
``--size-mb`` MiB. FORMAT_DESCRIPTION, ROTATE, STOP and PREVIOUS_GTIDS events are
not repeated. Each copied event gets a new end_log_pos (header bytes 13..16,
little-endian u32 = (new position + size) mod 2**32) and, when the FDE announces
CRC32, a recomputed checksum (the last 4 bytes = zlib.crc32 of all bytes before
them). Nothing else changes, so every event still parses like the original.

The output is written as a stream (one event at a time, buffered): memory stays
small whatever the size. This script does not use binlog_spec, so the reader it
benchmarks is not also the one that builds its input.
"""
from __future__ import annotations

import argparse
import os
import struct
import sys
import time
import zlib
from typing import NoReturn
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = Path(os.environ.get("BINLOG_CORPUS", ROOT.parent / "shared" / "corpus"))
DEFAULT_SOURCE = DEFAULT_CORPUS / "mysql-cdc-rs" / "binlog.000693"

MAGIC = b"\xfebin"
LEN_HEADER = 19
OFS_TYPE, OFS_SIZE, OFS_END_LOG_POS, OFS_FLAGS = 4, 9, 13, 17
LOG_EVENT_BINLOG_IN_USE_F = 0x1

STOP_EVENT, ROTATE_EVENT, FORMAT_DESCRIPTION_EVENT = 3, 4, 15
PREVIOUS_GTIDS_LOG_EVENT = 35
#: Event types that open a transaction (MySQL GTID, ANONYMOUS_GTID, GTID_TAGGED; MariaDB GTID).
GTID_EVENTS = {33, 34, 42, 162}
#: Event types that belong to the file, not to a transaction: never repeated.
#: (MariaDB GTID_LIST 163 and BINLOG_CHECKPOINT 161 are file-level too.)
NOT_REPEATED = {STOP_EVENT, ROTATE_EVENT, FORMAT_DESCRIPTION_EVENT, PREVIOUS_GTIDS_LOG_EVENT, 161, 163}


def fail(msg: str) -> NoReturn:
    sys.exit(f"make_big_binlog: {msg}")


def read_events(path: Path) -> tuple[bytes, list[bytes]]:
    """The FDE and the other whole events of a plain (not gzip) binlog."""
    data = path.read_bytes()
    if data[:4] != MAGIC:
        fail(f"{path}: not a binlog (starts with {data[:4].hex()})")
    pos, events = 4, []
    while pos + LEN_HEADER <= len(data):
        size = struct.unpack_from("<I", data, pos + OFS_SIZE)[0]
        if size < LEN_HEADER or pos + size > len(data):
            break  # a truncated tail: ignore it
        events.append(data[pos:pos + size])
        pos += size
    if not events or events[0][OFS_TYPE] != FORMAT_DESCRIPTION_EVENT:
        fail(f"{path}: the first event is not a FORMAT_DESCRIPTION_EVENT")
    return events[0], events[1:]


def fde_has_crc32(fde: bytes) -> bool:
    """Whether the FDE announces CRC32: its algorithm byte (5th byte from the end) is 1
    and the FDE's own last 4 bytes are the CRC32 of the rest (with the in-use flag clear)."""
    if len(fde) < LEN_HEADER + 5 or fde[-5] != 1:
        return False
    clean = bytearray(fde)
    clean[OFS_FLAGS] &= ~LOG_EVENT_BINLOG_IN_USE_F
    return zlib.crc32(clean[:-4]) == struct.unpack_from("<I", fde, len(fde) - 4)[0]


def transactions(events: list[bytes], crc: bool) -> list[list[bytes]]:
    """The events grouped by transaction: each group starts at a GTID event."""
    groups: list[list[bytes]] = []
    for ev in events:
        if crc and zlib.crc32(ev[:-4]) != struct.unpack_from("<I", ev, len(ev) - 4)[0]:
            fail("a source event has a bad CRC32; pick another source")
        code = ev[OFS_TYPE]
        if code in NOT_REPEATED:
            continue
        if code in GTID_EVENTS:
            groups.append([ev])
        elif groups:
            groups[-1].append(ev)
        # events before the first GTID (none in a GTID-era file) are dropped
    if not groups:
        fail("the source has no GTID/ANONYMOUS_GTID events to repeat")
    return groups


def make(out: Path, size_bytes: int, source: Path) -> tuple[int, int]:
    """Write OUT; returns (bytes written, events written)."""
    fde, events = read_events(source)
    crc = fde_has_crc32(fde)
    groups = transactions(events, crc)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    n_events = 1
    with open(tmp, "wb", buffering=8 << 20) as f:
        f.write(MAGIC)
        f.write(fde)  # same position (4) as in the source: unchanged
        pos = len(MAGIC) + len(fde)
        while pos < size_bytes:
            for group in groups:
                for ev in group:
                    buf = bytearray(ev)
                    size = len(buf)
                    struct.pack_into("<I", buf, OFS_END_LOG_POS, (pos + size) & 0xFFFFFFFF)
                    if crc:
                        struct.pack_into("<I", buf, size - 4, zlib.crc32(memoryview(buf)[:-4]))
                    f.write(buf)
                    pos += size
                    n_events += 1
                if pos >= size_bytes:
                    break
    os.replace(tmp, out)
    return pos, n_events


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="the binlog to write (e.g. benchmarks/data/big-1024mb.binlog)")
    ap.add_argument("--size-mb", type=float, default=1024, help="target size in MiB (default 1024)")
    ap.add_argument("--source", type=Path, default=DEFAULT_SOURCE,
                    help=f"a real plain binlog to repeat (default {DEFAULT_SOURCE})")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    nbytes, nev = make(args.out, int(args.size_mb * (1 << 20)), args.source)
    print(f"wrote {args.out}: {nbytes} bytes, {nev} events, from {args.source} "
          f"in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
