"""A binlog file and the byte ranges of it that read as binlogs of their own: what the planning of reads
(the Spark data source, the CLI's --start-position seek and --jobs) cuts and what its readers read.

A file is anything with a `name`, a `size` and an `open()` giving a seekable binary file: `LocalFile` here,
`binlog_spec.spark.files.FileRef` for Spark (local or pyarrow.fs). A `Split` is a byte range of one file.
`SplitReader` reads one split as a binlog of its own: the magic and the FDE in force at the split's start,
then the split's bytes, so each split is self-contained; `read_piece` maps positions and error offsets
back to the file's.

The reader (`binlog_spec.open`) takes a path; `SplitReader` subclasses it and gives it an opener
(BinlogReader's `opener` argument) that reads through a `pyarrow.fs` file or a byte range.
"""
from __future__ import annotations

import bisect
import io
import os
import zlib
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterator, Protocol

from binlog_spec.binlog import spec
from binlog_spec.errors import BinlogError
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import GTID_EVENTS
from binlog_spec.options import DEFAULT_OPTIONS, ReadOptions
from binlog_spec.binlog.reader import GZIP_MAGIC, BinlogReader, GunzipStream

ET = spec.EventType
FDE = int(ET.format_description_event)
QUERY_CODES = (int(ET.query_event), int(ET.query_compressed_event))
XID = int(ET.xid_event)
TABLE_MAP = int(ET.table_map_event)
START_ENCRYPTION = int(ET.start_encryption_event)
#: Event codes that open a transaction (MySQL GTID, ANONYMOUS_GTID, GTID_TAGGED; MariaDB GTID).
GTID_CODES = frozenset(map(int, GTID_EVENTS))


#: The events whose positions make transaction boundaries.
BOUNDARY_CODES = GTID_CODES | {XID}



# ----------------------------------------------------------------------------- files
class FileRef(Protocol):
    """What the planning pass and SplitReader need of a file."""

    name: str
    size: int

    def open(self) -> BinaryIO: ...


@dataclass(frozen=True)
class LocalFile:
    """A file of the local filesystem; `name` is what its events and errors say."""

    name: str
    path: str
    size: int

    @classmethod
    def of(cls, path: str, name: str | None = None) -> "LocalFile":
        return cls(path if name is None else name, path, os.path.getsize(path))

    def open(self) -> BinaryIO:
        """An unbuffered, seekable binary file."""
        return io.open(self.path, "rb", buffering=0)


def open_ref(ref: FileRef, buffer_size: int, buffered: bool = True) -> tuple[BinaryIO, int | None]:
    """A whole file, plain (with its size; `buffered`: behind a buffer) or gzip (size unknown)."""
    raw = ref.open()
    head = raw.read(2)
    raw.seek(0)
    if head == GZIP_MAGIC:
        return io.BufferedReader(GunzipStream(raw), buffer_size), None
    return (io.BufferedReader(raw, buffer_size) if buffered else raw), ref.size


def starts_like_binlog(ref: FileRef) -> bool:
    """Whether a file starts like a binlog: the magic, plain or gzip."""
    try:
        stream, _ = open_ref(ref, spec.LEN_MAGIC)
        with stream:
            return stream.read(spec.LEN_MAGIC) == spec.MAGIC
    except (OSError, EOFError, zlib.error):
        return False


# ------------------------------------------------------------------------------ splits
@dataclass(frozen=True)
class Split:
    """A byte range of one file that reads as a binlog of its own."""

    file_index: int
    ref: FileRef
    start: int
    end: int | None               # None: to the end of the file
    fde_pos: int = 0              # the FDE put in front of the range when start > 0
    fde_size: int = 0
    #: SchemaTracker state (tables, default_db) at `start`, for the rows decoder; None: a fresh tracker.
    schema_state: Any = None
    #: The byte ranges (position, length), in file order, read in front of `start` when start > 0;
    #: () means the magic and the FDE at `fde_pos` (a piece of a split plan). The --start-position
    #: seek (stream.planning.seek) puts there the magic and every stretch of the file that the schema and
    #: the filters need before the position.
    before: tuple[tuple[int, int], ...] = ()
    #: A byte range of resync planning (stream.planning.resync): `start` and `end` are the range's offsets,
    #: resolved to transaction boundaries by its reader (`iter_split_events`), not by the planner.
    resync: bool = False
    #: Read only if the file starts like a binlog (`starts_like_binlog`), else no events: a file a
    #: folder gave under a name unlike a binlog's, not opened when it was listed.
    if_binlog: bool = False

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.end is None

    def ranges(self) -> list[tuple[int, int]]:
        """The (position, length) byte ranges of the file that make the split's stream, in order."""
        end = self.ref.size if self.end is None else self.end
        if self.start == 0:
            return [(0, end)]
        before = self.before or ((0, spec.LEN_MAGIC), (self.fde_pos, self.fde_size))
        return [*before, (self.start, end - self.start)]


class _Segments(io.RawIOBase):
    """A raw file presenting several byte ranges of one file, one after the other."""

    def __init__(self, f: BinaryIO, segments: list[tuple[int, int]]):
        self._f = f
        self._segments = segments
        self._i = 0
        self._left = segments[0][1] if segments else 0
        if segments:
            f.seek(segments[0][0])

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        while self._i < len(self._segments) and self._left == 0:
            self._i += 1
            if self._i < len(self._segments):
                start, self._left = self._segments[self._i]
                self._f.seek(start)
        if self._i >= len(self._segments):
            return 0
        n = min(len(b), self._left)
        data = self._f.read(n)
        got = len(data)
        b[:got] = data
        self._left -= got
        if got == 0:  # the file is shorter than planned: end here, the reader reports truncation
            self._i = len(self._segments)
        return got

    def close(self) -> None:
        if not self.closed:
            self._f.close()
        super().close()


class SplitReader(BinlogReader):
    """Reads one Split: whole files through `FileRef.open`, pieces as the byte ranges of
    `Split.ranges` one after the other (`_Segments`).

    `real` maps a position of the assembled stream back to the file's. Events at real positions
    below `split.start` are what is put in front of the piece (`is_prefix`).
    """

    def __init__(self, split: Split, options: ReadOptions = DEFAULT_OPTIONS, sink=None):
        super().__init__(split.ref.name, options, opener=self._open_split, sink=sink)
        self.split = split
        #: (position in the assembled stream, position in the file) where each range starts.
        self._starts: list[tuple[int, int]] = []
        if not split.whole:
            virtual = 0
            for pos, length in split.ranges():
                self._starts.append((virtual, pos))
                virtual += length

    def _open_split(self) -> tuple[BinaryIO, int | None]:
        """The split's bytes: the whole file (gzip or plain), or its byte ranges."""
        s = self.split
        if s.whole:
            return open_ref(s.ref, self.options.buffer_size)
        segments = s.ranges()
        return io.BufferedReader(_Segments(s.ref.open(), segments), self.options.buffer_size), \
            sum(n for _, n in segments)

    def real(self, virtual: int | None) -> int | None:
        """A position of the assembled stream -> the file's position."""
        if virtual is None or not self._starts:
            return virtual
        i = bisect.bisect_right(self._starts, (virtual, float("inf"))) - 1
        v0, p0 = self._starts[max(i, 0)]
        return p0 + virtual - v0


def read_piece(split: Split, options: ReadOptions = DEFAULT_OPTIONS, sink=None,
               sink_from: int | None = None) -> Iterator[Event]:
    """The events of a split that is no resync range, with the file's positions (`sink`: see BinlogReader;
    told where the piece's own range starts, `place(position in the assembled stream, file position -
    that)`, and given no event before it, nor before the file position `sink_from`). A piece after the first
    starts with the FDE put in front of it, at that FDE's real position (below `split.start`): see `is_prefix`."""
    reader = SplitReader(split, options, sink)
    starts = reader._starts
    if sink is not None:
        v_last, p_last = starts[-1] if starts else (0, 0)
        shift = p_last - v_last
        sink.place(v_last if sink_from is None else max(v_last, sink_from - shift), shift)
    try:
        if not starts:
            yield from reader
            return
        # positions come in order: the range of the last one is tried first (`real` for the others)
        k, (v0, p0) = 0, starts[0]
        nxt = starts[1][0] if len(starts) > 1 else None
        for ev in reader:
            pos = ev.pos
            if nxt is not None and pos >= nxt:
                k = bisect.bisect_right(starts, (pos, float("inf"))) - 1
                v0, p0 = starts[k]
                nxt = starts[k + 1][0] if k + 1 < len(starts) else None
            ev.pos = pos = p0 + pos - v0 if pos >= v0 else reader.real(pos)
            if ev.payload_pos is not None:
                ev.payload_pos = pos
            yield ev
    except BinlogError as exc:
        exc.offset = reader.real(exc.offset)
        raise
    finally:
        reader.close()


def is_prefix(split: Split, ev: Event) -> bool:
    """Whether an event of `iter_split_events(split)` is the FDE put in front of a piece."""
    return split.start > 0 and ev.pos < split.start
