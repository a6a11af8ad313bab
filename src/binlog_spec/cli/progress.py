"""A progress bar on stderr for long runs: bytes read over all files, shown only on a terminal."""
from __future__ import annotations

import os
from typing import Iterable, Iterator, TextIO

from binlog_spec.binlog.event import Event
from binlog_spec.binlog.reader import GZIP_MAGIC


def _total_bytes(files: list[str]) -> int | None:
    """Bytes the events of the files add up to (file size minus the magic); None when a file is gzip."""
    total = 0
    for f in files:
        with open(f, "rb") as fh:
            if fh.read(2) == GZIP_MAGIC:
                return None
        total += max(os.path.getsize(f) - 4, 0)
    return total


def with_progress(events: Iterable[Event], files: list[str], stream: TextIO) -> Iterator[Event]:
    """The events, unchanged; a tqdm bar on `stream` when it is a terminal."""
    if not stream.isatty():
        yield from events
        return
    from tqdm import tqdm

    try:
        total = _total_bytes([str(f) for f in files])
    except OSError:
        total = None
    bar = tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, file=stream, desc="binlog-spec",
               leave=False, dynamic_ncols=True)
    # By position within a file: the bytes of events a sink took from the reader (analyze's compiled
    # loop, never yielded) count at the next event yielded.
    file, end = None, 0
    try:
        for ev in events:
            if not ev.is_inner:
                start = end if ev.file == file and end <= ev.pos else ev.pos
                file, end = ev.file, ev.pos + ev.size
                bar.update(end - start)
            yield ev
    finally:
        bar.close()
