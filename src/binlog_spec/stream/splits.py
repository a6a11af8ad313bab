"""Byte ranges of binlogs that read as binlogs of their own, and the header pass that finds where to cut:
the planning of the Spark data source and of the CLI's --start-position seek and --jobs. A file is
anything with a `name`, a `size` and an `open()` giving a seekable binary file: `LocalFile` here,
`binlog_spec.spark.files.FileRef` for Spark (local or pyarrow.fs).

* `scan_file` is the cheap planning pass, through the reader's scan mode
  (`BinlogReader.scan`): it reads the file in large sequential chunks and walks
  the event headers, stepping over bodies by their size. It parses only the
  FORMAT_DESCRIPTION_EVENTs, the QUERY events that may be DDL, and (when asked)
  the TABLE_MAPs of one table; the reader checks the framing and every CRC32.
  It returns transaction boundaries (the position of each GTID event, the
  position after each XID event) up to the first fault.
* `plan_splits` cuts a file larger than the split size at those boundaries:
  every split holds whole transactions.
* `SplitReader` reads one split as a binlog of its own: the magic and the FDE in
  force at the split's start, then the split's bytes, so each split is
  self-contained. Positions and error offsets are mapped back to the file's.

The reader (`binlog_spec.open`) takes a path; `SplitReader` subclasses it and
gives it an opener (BinlogReader's `opener` argument) that reads through a
`pyarrow.fs` file or a byte range.
"""
from __future__ import annotations

import bisect
import dataclasses
import io
import os
import pickle
import zlib
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Iterator, Protocol

from binlog_spec.binlog import payload
from binlog_spec.binlog import spec
from binlog_spec.errors import BinlogError
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import GTID_EVENTS, is_mariadb
from binlog_spec.options import DEFAULT_OPTIONS, ReadOptions
from binlog_spec.binlog.reader import GZIP_MAGIC, BinlogReader, GunzipStream
from binlog_spec.rows.statement_text import NOT_DDL

ET = spec.EventType
FDE = int(ET.format_description_event)
QUERY_CODES = (int(ET.query_event), int(ET.query_compressed_event))
XID = int(ET.xid_event)
TABLE_MAP = int(ET.table_map_event)
START_ENCRYPTION = int(ET.start_encryption_event)
#: Event codes that open a transaction (MySQL GTID, ANONYMOUS_GTID, GTID_TAGGED; MariaDB GTID).
GTID_CODES = frozenset(map(int, GTID_EVENTS))
DEFAULT_CHUNK = 8 << 20


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


# ----------------------------------------------------------------------- planning pass
@dataclass
class ScanResult:
    """What the planning pass learnt of one file."""

    size: int | None = None
    #: Positions where a transaction starts with the stream closed before it (candidate split points).
    boundaries: list[int] = field(default_factory=list)
    #: (position, FDE position, FDE size): the FDE in force from each FDE on.
    fdes: list[tuple[int, int]] = field(default_factory=list)
    #: QUERY events that may be DDL, unparsed: (position, event bytes, FDE in force).
    ddl: list[tuple[int, bytes, spec.FormatDescription]] = field(default_factory=list)
    #: The first fault the pass saw (the reader will raise there): (offset, message).
    fault: tuple[int, str] | None = None
    #: Whether the file is written by MariaDB (its FDE array covers MariaDB's event codes).
    mariadb: bool = False
    events: int = 0
    #: What the `probe` callback returned when it stopped the pass.
    probe_result: Any = None


def _query_prefix(ev: memoryview, fde: spec.FormatDescription) -> bytes | None:
    """The first bytes of a QUERY_EVENT's statement, at the spec's offset, or None."""
    try:
        start = fde.len_common_header + spec.query_offsets(ev, fde).ofs_query
    except (ValueError, IndexError):
        return None
    return bytes(ev[start:start + 24]).lstrip().upper()


def _query_fields(ev: bytes, fde: spec.FormatDescription) -> tuple[str, str] | None:
    try:
        body = spec.parse_event(ev, fde)
        fields = spec.body_fields(body, spec.parse_header(ev[:spec.LEN_EVENT_HEADER]))
        query = fields.get("query", "")
        if ev[4] == QUERY_CODES[1]:
            query = payload.mariadb_uncompress(spec.raw_field(body, "query")).decode("utf-8", errors="replace")
        return fields.get("db", ""), query
    except (*spec.SpecError, payload.PayloadError):
        return None


def ddl_statements(res: ScanResult) -> list[tuple[int, str, str]]:
    """The (position, db, query) of the QUERY events the pass kept (those that may be DDL)."""
    out = []
    for pos, ev, fde in res.ddl:
        q = _query_fields(ev, fde)
        if q is not None:
            out.append((pos, q[0], q[1]))
    return out


def scan_file(ref: FileRef, *, ddl: bool = False, verify_checksums: bool = True,
              probe: Callable[[int, bytes, spec.FormatDescription, ScanResult], Any] | None = None,
              chunk: int = DEFAULT_CHUNK) -> ScanResult:
    """The planning pass over one file (see the module doc): the reader's scan mode
    (`BinlogReader.scan`), which checks the framing as reading does. Never raises for a broken
    binlog: the first fault is returned in `fault`, and nothing after it is looked at.

    `probe(pos, event_bytes, fde, result)` is called for each TABLE_MAP_EVENT; a result other
    than None stops the pass and is kept in `probe_result`.
    """
    res = ScanResult()
    options = dataclasses.replace(DEFAULT_OPTIONS, verify_checksums=verify_checksums)

    def opener() -> tuple[BinaryIO, int | None]:
        stream, res.size = _open_ref(ref, options.buffer_size, buffered=False)
        return stream, res.size

    reader = BinlogReader(ref.name, options, opener=opener)
    try:
        _scan(reader, res, ddl, probe, chunk)
    except BinlogError as exc:
        res.fault = (exc.offset or 0, exc.message)
    except (OSError, EOFError, zlib.error) as exc:
        res.fault = (res.fault or (0, ""))[0], f"cannot read: {exc}"
    finally:
        reader.close()
    return res


def _scan(reader: BinlogReader, res: ScanResult, want_ddl: bool, probe, chunk: int) -> None:
    read = (QUERY_CODES if want_ddl else ()) + ((TABLE_MAP,) if probe else ())
    try:
        for pos, code, size, ev in reader.scan(frozenset(read), _BOUNDARY_CODES, chunk):
            if code in GTID_CODES:
                res.boundaries.append(pos)
            elif code == XID:
                res.boundaries.append(pos + size)
            elif code == FDE:
                res.fdes.append((pos, size))
                res.mariadb = is_mariadb(len(reader.format_description.post_header_lens))
            elif want_ddl and code in QUERY_CODES:
                fde = reader.format_description
                prefix = _query_prefix(ev, fde) if code == QUERY_CODES[0] else None
                if prefix is None or not prefix.startswith(NOT_DDL):
                    res.ddl.append((pos, bytes(ev), fde))
            elif probe is not None and code == TABLE_MAP:
                found = probe(pos, bytes(ev), reader.format_description, res)
                if found is not None:
                    res.probe_result = found
                    return
    finally:
        res.events = reader.scanned


#: The events whose positions make transaction boundaries.
_BOUNDARY_CODES = GTID_CODES | {XID}


def _open_ref(ref: FileRef, buffer_size: int, buffered: bool = True) -> tuple[BinaryIO, int | None]:
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
        stream, _ = _open_ref(ref, spec.LEN_MAGIC)
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
    #: seek (stream.seek) puts there the magic and every stretch of the file that the schema and
    #: the filters need before the position.
    before: tuple[tuple[int, int], ...] = ()
    #: A byte range of resync planning (stream.resync): `start` and `end` are the range's offsets,
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


def plan_splits(file_index: int, ref: FileRef, scan: ScanResult | None, split_size: int) -> list[Split]:
    """Cut a file at transaction boundaries into pieces of at least `split_size` bytes."""
    if scan is None or scan.size is None or ref.size <= split_size or split_size <= 0:
        return [Split(file_index, ref, 0, None)]
    fault = scan.fault[0] if scan.fault else None
    cuts: list[int] = []
    last = 0
    for b in scan.boundaries:
        if fault is not None and b >= fault:
            break
        if b - last >= split_size and b < ref.size:
            cuts.append(b)
            last = b
    if not cuts:
        return [Split(file_index, ref, 0, None)]
    out = [Split(file_index, ref, 0, cuts[0])]
    fdes = scan.fdes
    for i, start in enumerate(cuts):
        end = cuts[i + 1] if i + 1 < len(cuts) else None
        fde_pos, fde_size = next((p, s) for p, s in reversed(fdes) if p < start)
        out.append(Split(file_index, ref, start, end, fde_pos, fde_size))
    return out


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
            return _open_ref(s.ref, self.options.buffer_size)
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


def iter_split_events(split: Split, options: ReadOptions = DEFAULT_OPTIONS, sink=None) -> Iterator[Event]:
    """The events of a split with the file's positions (`sink`: see BinlogReader; told where the piece's
    own range starts, `place(position in the assembled stream, file position - that)`, and given no event
    before it).

    A resync split is resolved first (`resync.iter_resync_events`). A piece after the first starts with the FDE put in front of it, at that FDE's real position
    (below `split.start`): decoders need it (checksums, MariaDB numbering); outputs of events
    leave out every event with ``pos < split.start`` (see `is_prefix`).
    """
    if split.if_binlog:
        if not starts_like_binlog(split.ref):
            return
        split = dataclasses.replace(split, if_binlog=False)
    if split.resync:
        from binlog_spec.stream import resync
        yield from resync.iter_resync_events(split, options, sink)
        return
    reader = SplitReader(split, options, sink)
    starts = reader._starts
    if sink is not None:
        v_last, p_last = starts[-1] if starts else (0, 0)
        sink.place(v_last, p_last - v_last)
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


def snapshot(tracker) -> bytes:
    """A SchemaTracker's state (tables, charsets, default database, ...), pickled: cheap to ship and
    to copy."""
    return pickle.dumps(vars(tracker), protocol=pickle.HIGHEST_PROTOCOL)


def restore(state: bytes | None, tracker_cls):
    """A new tracker in the state `snapshot` saved (a fresh one for None)."""
    tracker = tracker_cls()
    if state is not None:
        vars(tracker).update(pickle.loads(state))
    return tracker


def with_schema_states(splits: list[Split], statements_of: Callable[[int], list[tuple]],
                       tracker_of: Callable[[int], Any], carries: Callable[[int], bool] = lambda i: True,
                       quiet: bool = False, start_of: Callable[[Split], int] | None = None) -> list[Split]:
    """Each split with the schema state at its start (`Split.schema_state`, a `snapshot`).

    The DDL statements of each file (`statements_of(file_index)`: (position, db, query), e.g.
    `ddl_statements` of its header pass) are replayed in order into the file's tracker
    (`tracker_of(file_index)`: one for a run, or one per binlog sequence) up to each split's start
    (a fourth item, the server's collation, is given to `observe_query` too: `statements_with_collation`);
    the statements after a file's last split start are replayed too when the next file continues
    the history (`carries(file_index)`). `quiet`: the trackers' notes (what a replay says: a table
    forgotten) are not kept in the snapshots, their reader heard them from the split before.
    `start_of(split)`: where the split's events start, when not `split.start` (a resync split's
    range start resolved to its transaction boundary: `resync.resolved_starts`)."""
    out: list[Split] = []
    by_file: dict[int, list[Split]] = {}
    for s in splits:
        by_file.setdefault(s.file_index, []).append(s)
    for i in sorted(by_file):
        tracker = tracker_of(i)
        statements = statements_of(i)
        k = 0
        for s in by_file[i]:
            start = s.start if start_of is None else start_of(s)
            while k < len(statements) and statements[k][0] < start:
                tracker.observe_query(*statements[k][1:])
                k += 1
            if quiet:
                tracker.notes.clear()
            out.append(dataclasses.replace(s, schema_state=snapshot(tracker)))
        if carries(i):
            for statement in statements[k:]:
                tracker.observe_query(*statement[1:])
    return out


def statements_with_collation(res: ScanResult) -> list[tuple[int, str, str, int | None]]:
    """`ddl_statements` with each one's server collation (Q_CHARSET_CODE), as the rows stage replays
    them (rows.decoder.observe_schema)."""
    from types import SimpleNamespace
    from binlog_spec.rows.decoder import server_collation
    out = []
    for pos, ev, fde in res.ddl:
        try:
            fields = spec.body_fields(spec.parse_event(ev, fde), spec.parse_header(ev[:spec.LEN_EVENT_HEADER]))
        except (*spec.SpecError, payload.PayloadError):
            fields = {}
        q = _query_fields(ev, fde)
        if q is not None:
            out.append((pos, q[0], q[1], server_collation(SimpleNamespace(fields=fields))))
    return out


def piece_events(split: Split, options: ReadOptions = DEFAULT_OPTIONS) -> Iterator[Event]:
    """`iter_split_events` with the malformed bodies' errors (`Event.error`) at the file's offsets too."""
    prefix = 0 if split.start == 0 else spec.LEN_MAGIC + split.fde_size
    shift = split.start - prefix
    for ev in iter_split_events(split, options):
        error = ev.error
        if prefix and error is not None and error.offset is not None and error.offset >= prefix:
            error.offset += shift
        yield ev
