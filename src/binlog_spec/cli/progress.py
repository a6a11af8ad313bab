"""A progress bar on stderr for long runs: bytes read over all files, shown only on a terminal."""
from __future__ import annotations

from typing import Iterable, Iterator, TextIO

from binlog_spec import api
from binlog_spec.api import Event


def with_progress(events: Iterable[Event], files: list[str], stream: TextIO) -> Iterator[Event]:
    """The events, unchanged; a tqdm bar on `stream` when it is a terminal."""
    if not stream.isatty() or getattr(files, "remote", False):     # (a server's logs: no sizes to show)
        yield from events
        return
    from tqdm import tqdm

    try:
        total = api.events_size([str(f) for f in files])
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
