"""Resync planning: cut a binlog into byte ranges without reading it, and let each reader find its own
first transaction at its range's start.

The driver reads a file's head only (`read_head`: the magic, the FDE, and the first events, to tell a
relay log), and cuts the file into ranges of the split size (`plan_ranges`). A reader of a range
resyncs at the range's start and at the next range's start (`boundary_at`): both give the first
transaction boundary at or after the offset, the same notion as the header pass's
(`pieces.BOUNDARY_CODES`: the start of a GTID event, the end of an XID event), so a range holds the
transactions whose boundary falls in it, and every transaction belongs to exactly one reader.

Finding an event start in the middle of a file (`first_event`): `end_log_pos` alone cannot be
trusted (MariaDB 11.4 and later write 0 inside transactions; relay logs hold the master's), so a
candidate position is verified by
* a type code the file's FDE knows, a size of at least a header and its checksum that stays inside
  the file;
* its `end_log_pos`, when not 0, equal to its position plus its size (the events that carry a real
  position: GTID, XID, ... anchor the chain);
* its CRC32 (resync is used only on files with checksums);
* a chain of `CHAIN` following headers that pass the same checks (or the chain reaching the end of
  the file exactly).
The search starts `BACK` bytes before the offset, so that the event in front of the first event at or
after the offset is known (an XID there makes a boundary right at it).

A reader checks its neighbour's resync deterministically (`iter_resync_events`): reading linearly up
to its end, the boundary it meets first at or past its range's end must be the one the resync at that
offset gave; a difference is a `ResyncError`, never a silent loss or duplicate.

Where resync cannot be trusted (`Head.reason`: relay logs, files without checksums, a second FDE or a
ROTATE at the head, encryption, files over 4 GiB whose positions wrap), the planner falls back to the
header pass (`scan.scan_file`).
"""
from __future__ import annotations

import dataclasses
import struct
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import MARIADB_FIRST_EVENT, is_mariadb
from binlog_spec.binlog.reader import GZIP_MAGIC
from binlog_spec.binlog.writer import OFS_LEN, OFS_TYPE
from binlog_spec.errors import BinlogError, ResyncError
from binlog_spec.options import DEFAULT_OPTIONS, ReadOptions
from binlog_spec.stream.planning.pieces import (BOUNDARY_CODES, FDE, GTID_CODES, START_ENCRYPTION, XID, FileRef,
                                                Split, read_piece, starts_like_binlog)

ET = spec.EventType
ROTATE = int(ET.rotate_event)
H = spec.LEN_EVENT_HEADER
#: How many bytes a read of the file asks for at once (the window grows for a larger event).
WINDOW = 256 << 10
#: How far before the offset the search for an event start begins (more than an XID event).
BACK = 4 << 10
#: How many following headers must add up behind a candidate event start.
CHAIN = 4
#: The largest event a candidate may announce (max_allowed_packet's ceiling, 1 GiB, and a header).
MAX_LEN_EVENT = (1 << 30) + (1 << 16)
#: Positions are 4 bytes in event headers: past this, end_log_pos wraps.
MAX_RESYNC_SIZE = 1 << 32

_HEADER = spec.HEADER_STRUCT
_U32 = struct.Struct("<I")


# ------------------------------------------------------------------------------- the head
@dataclass(frozen=True)
class Head:
    """What a file's head says: its FDE and whether resync can be trusted on it."""

    fde: spec.FormatDescription | None = None
    fde_pos: int = spec.LEN_MAGIC
    fde_size: int = 0
    #: Why resync cannot be trusted on this file (None: it can); the planner reads it whole or by
    #: the header pass instead.
    reason: str | None = None

    @property
    def end(self) -> int:
        """The position of the first event after the FDE."""
        return self.fde_pos + self.fde_size


def read_head(ref: FileRef, *, walk: bool = True, window: int = WINDOW) -> Head:
    """The magic and the FDE at the head of a file (one read of `window` bytes); `walk`: also the
    first events in that window, to tell a relay log (a second FDE, or a ROTATE that does not end
    the file) or an encrypted binlog."""
    with ref.open() as f:
        buf = _read_at(f, 0, min(ref.size, window) if walk else spec.LEN_MAGIC + H)
        if buf[:2] == GZIP_MAGIC:
            return Head(reason="gzip (read whole)")
        if buf[:spec.LEN_MAGIC] != spec.MAGIC or len(buf) < spec.LEN_MAGIC + H:
            return Head(reason="not a binlog (the reader says so)")
        pos = spec.LEN_MAGIC
        h = spec.parse_header(buf[pos:pos + H])
        if h.type_code != FDE or h.len_event > ref.size - pos:
            return Head(reason="no FORMAT_DESCRIPTION_EVENT at the head (the reader says so)")
        if len(buf) < pos + h.len_event:
            buf = buf[:pos] + _read_at(f, pos, h.len_event)
    try:
        fde = spec.parse_fde(bytes(buf[pos + H:pos + h.len_event]))
    except spec.SpecError:
        return Head(reason="the FORMAT_DESCRIPTION_EVENT does not parse (the reader says so)")
    head = Head(fde, pos, h.len_event)
    reason = _head_events(buf, head.end, ref.size) if walk else None
    if reason is not None:
        pass
    elif fde.len_common_header != H:
        reason = f"a {fde.len_common_header}-byte common header"
    elif fde.len_checksum != 4:
        reason = "no CRC32 checksums"
    elif ref.size > MAX_RESYNC_SIZE:
        reason = "over 4 GiB (positions wrap)"
    return dataclasses.replace(head, reason=reason)


def _head_events(buf: bytes, pos: int, size: int) -> str | None:
    """Why the first events of a file (those wholly in `buf`) rule resync out, or None."""
    while pos + H <= len(buf):
        code, len_event = buf[pos + OFS_TYPE], _U32.unpack_from(buf, pos + OFS_LEN)[0]
        if len_event < H:
            return None                     # broken: the reader will say so where it reads
        if code == FDE:
            return "a second FORMAT_DESCRIPTION_EVENT at the head (a relay log)"
        if code == ROTATE and pos + len_event != size:
            return "a ROTATE_EVENT at the head (a relay log)"
        if code == START_ENCRYPTION:
            return "encrypted"
        pos += len_event
    return None


def plan_ranges(file_index: int, ref: FileRef, head: Head, split_size: int,
                starts: list[int] | None = None) -> list[Split]:
    """The file cut into byte ranges of `split_size` (or starting at `starts`: 0 first, increasing), each
    resolved by its reader (`Split.resync`)."""
    starts = list(range(0, ref.size, split_size)) if starts is None else starts
    ends: list[int | None] = [*starts[1:], None]
    return [Split(file_index, ref, s, e, head.fde_pos, head.fde_size, resync=True) for s, e in zip(starts, ends)]


# ---------------------------------------------------------------------------- the search
def _read_at(f: BinaryIO, pos: int, n: int) -> bytes:
    f.seek(pos)
    out = bytearray()
    while len(out) < n:
        chunk = f.read(n - len(out))
        if not chunk:
            break
        out += chunk
    return bytes(out)


class _Window:
    """Bytes of a file read a window at a time."""

    def __init__(self, f: BinaryIO, size: int):
        self.f, self.size = f, size
        self.base, self.buf = 0, b""

    def get(self, pos: int, n: int) -> bytes:
        """The bytes [pos, pos + n) (fewer at the end of the file)."""
        if not (self.base <= pos and pos + n <= self.base + len(self.buf)):
            self.base, self.buf = pos, _read_at(self.f, pos, max(n, WINDOW))
        return self.buf[pos - self.base:pos - self.base + n]


def known_codes(fde: spec.FormatDescription) -> bytes:
    """A 256-byte table: 1 for each type code an event of this file may carry."""
    n = len(fde.post_header_lens)
    mariadb = is_mariadb(n)
    return bytes(1 if c in spec.EVENT_TYPE_NAMES and c > 0 and (c <= n or (mariadb and c >= MARIADB_FIRST_EVENT))
                 else 0 for c in range(256))


class _Resync:
    """Searches and walks of one file (see the module doc)."""

    def __init__(self, f: BinaryIO, ref: FileRef, head: Head):
        self.win = _Window(f, ref.size)
        self.size = ref.size
        self.head = head
        self.known = known_codes(head.fde)
        self.min_len = H + head.fde.len_checksum
        self.name = ref.name

    def sane(self, header: bytes, pos: int) -> bool:
        """The header checks of a candidate (without its CRC32)."""
        _ts, code, _sid, len_event, end_log_pos, _flags = _HEADER.unpack_from(header)
        return (self.known[code] == 1 and self.min_len <= len_event <= MAX_LEN_EVENT
                and pos + len_event <= self.size and (end_log_pos == 0 or end_log_pos == pos + len_event))

    def verified(self, pos: int) -> bool:
        """Whether an event starts at `pos`: sane header, CRC32, and a chain of CHAIN sane headers
        (or the end of the file) behind it."""
        header = self.win.get(pos, H)
        if len(header) < H or not self.sane(header, pos):
            return False
        q = pos + _U32.unpack_from(header, OFS_LEN)[0]
        for _ in range(CHAIN):
            if q == self.size:
                break
            nxt = self.win.get(q, H)
            if len(nxt) < H or not self.sane(nxt, q):
                return False
            q += _U32.unpack_from(nxt, OFS_LEN)[0]
        len_event = _U32.unpack_from(header, OFS_LEN)[0]
        event = self.win.get(pos, len_event)
        return spec.event_crc32(event) == _U32.unpack_from(event, len_event - 4)[0]

    def first_event(self, start: int) -> int | None:
        """The first verified event start at or after `start`, or None (none before the end)."""
        known, size = self.known, self.size
        pos = max(start, self.head.end)
        while pos + H <= size:
            buf = self.win.get(pos, WINDOW + H)
            base = pos
            last = min(len(buf) - H, size - H - base)
            for i in range(0, last + 1):
                if known[buf[i + OFS_TYPE]] and self.verified(base + i):
                    return base + i
                if self.win.base != base:          # verified() moved the window: take it back
                    self.win.base, self.win.buf = base, buf
            pos = base + last + 1
        return None

    def boundary_at(self, offset: int) -> int:
        """The first transaction boundary at or after `offset` (the file's size when none)."""
        if offset <= self.head.end:
            pos = self.head.end
        else:
            pos = self.first_event(offset - BACK)
        while pos is not None and pos < self.size:
            header = self.win.get(pos, H)
            if len(header) < H or not self.sane(header, pos):
                pos = self.first_event(pos + 1)      # a broken stretch: on from the next verified event
                continue
            code = header[OFS_TYPE]
            if code == FDE:
                raise ResyncError("a FORMAT_DESCRIPTION_EVENT past the head of the file: resync planning "
                                  "cannot read it; use .option('planning', 'scan')", file=self.name, offset=pos)
            end = pos + _U32.unpack_from(header, OFS_LEN)[0]
            if code in GTID_CODES and pos >= offset:
                return pos
            if code == XID and end >= offset:
                return end
            pos = end
        return self.size


def boundary_at(ref: FileRef, head: Head, offset: int) -> int:
    """The first transaction boundary at or after `offset` in a file with a trusted head (the
    file's size when there is none)."""
    with ref.open() as f:
        return _Resync(f, ref, head).boundary_at(offset)


def event_counts(ref: FileRef, head: Head, offsets: list[int], span: int) -> list[tuple[int, int]]:
    """A sample of the event density at each offset: (events, bytes) of the events that start in
    [p, p + span) from the first verified event p at or after the offset, their headers walked
    ((0, 0) where none is found). The file is opened once."""
    out = []
    with ref.open() as f:
        r = _Resync(f, ref, head)
        for offset in offsets:
            start = pos = r.first_event(offset)
            if start is None:
                out.append((0, 0))
                continue
            n, stop = 0, min(start + span, r.size)
            while pos < stop:
                header = r.win.get(pos, H)
                if len(header) < H or not r.sane(header, pos):
                    break
                pos += _U32.unpack_from(header, OFS_LEN)[0]
                n += 1
            out.append((n, pos - start))
    return out


def resolved_starts(ref: FileRef, head: Head, offsets: list[int]) -> list[int]:
    """`boundary_at` of each offset (0 stays 0), the file opened once: where the readers of ranges
    starting there start (for the schema state at a split's start, `splits.with_schema_states`)."""
    with ref.open() as f:
        r = _Resync(f, ref, head)
        return [0 if offset == 0 else r.boundary_at(offset) for offset in offsets]


assert BOUNDARY_CODES == GTID_CODES | {XID}, "boundary_at follows the header pass's boundaries"


# ----------------------------------------------------------------------------- reading
def resolve(split: Split, head: Head | None = None) -> tuple[Split | None, Head]:
    """A resync split (`Split.resync`) with its start and end resolved to transaction boundaries
    (None: no transaction starts in its range), and the head of its file."""
    head = head or read_head(split.ref, walk=False)
    if head.fde is None:     # no longer a plain binlog: the first range reads it whole, for its reader to say so
        return (dataclasses.replace(split, end=None, resync=False) if split.start == 0 else None), head
    with split.ref.open() as f:
        r = _Resync(f, split.ref, head)
        start = 0 if split.start == 0 else r.boundary_at(split.start)
        end = None if split.end is None else r.boundary_at(split.end)
    if end is not None and end >= split.ref.size:
        end = None
    if start >= split.ref.size or (end is not None and start >= end):
        return None, head
    return dataclasses.replace(split, start=start, end=end, resync=False), head


def iter_resync_events(split: Split, options: ReadOptions = DEFAULT_OPTIONS, sink=None) -> Iterator[Event]:
    """The events of a resync split (`iter_split_events` of the resolved split), checked against the
    neighbour's resync: a FORMAT_DESCRIPTION_EVENT past the head, a boundary met past the range's end
    before the resolved end, or a resolved end that is no boundary to linear reading, is a
    `ResyncError`."""
    resolved, head = resolve(split)
    if resolved is None:
        return
    if head.fde is None:                # not a plain binlog: the reader says what it is
        yield from read_piece(resolved, options, sink)
        return
    yield from _checked_events(split, resolved, head, options, sink=sink)


def _checked_events(split: Split, piece: Split, head: Head, options: ReadOptions,
                    keep_prefix: bool = True, sink=None) -> Iterator[Event]:
    """The events of `piece` (a resolved resync split, or its part from a resume point on), checked
    against the neighbour's resync (`iter_resync_events`); `keep_prefix`: the FDE put in front of the
    piece is yielded too (else left out: a resumed piece's). A `sink` (see BinlogReader) must take no
    event of a transaction that ends at or past the range's end (its `limit`): those are checked here."""
    last = None                                    # the last outer event
    start, fde_pos = piece.start, head.fde_pos
    # a boundary met at or past the range's end must be the resolved end (none when the piece ends the file)
    past = split.end if split.end is not None and piece.end is not None else None
    for ev in read_piece(piece, options, sink):
        pos = ev.pos
        if ev.is_inner or pos < start:
            if keep_prefix or ev.is_inner:
                yield ev
            continue
        code = ev.type_code
        if code == FDE and pos != fde_pos:
            raise ResyncError("a FORMAT_DESCRIPTION_EVENT past the head of the file: resync planning cannot "
                              "read it; use .option('planning', 'scan')", file=split.ref.name, offset=pos)
        if past is not None:
            met = pos if code in GTID_CODES else pos + ev.size if code == XID else None
            if met is not None and past <= met < piece.end:
                raise ResyncError(f"linear reading meets a transaction boundary at {met}, past the range's end "
                                  f"{split.end}, before the boundary the next split resyncs to, {piece.end}",
                                  file=split.ref.name, offset=met)
        last = ev
        yield ev
    if piece.end is None:
        return
    ok = last is not None and last.pos + last.size == piece.end
    if ok and last.type_code != XID:
        with split.ref.open() as f:
            header = _read_at(f, piece.end, H)
        ok = len(header) == H and header[OFS_TYPE] in GTID_CODES
    if not ok:
        raise ResyncError(f"the next split resyncs to {piece.end}, which linear reading does not meet as a "
                          "transaction boundary", file=split.ref.name, offset=piece.end)


# ------------------------------------------------------------------------ resuming after a fault
@dataclass(frozen=True)
class Skipped:
    """A corrupt stretch of a file that reading stepped over (`iter_resuming_events`): the fault the
    reader raised at `offset` (`error`, a BinlogError naming the file and the offset), and the bytes
    [offset, resume) left unread; reading goes on at `resume`, the next verified transaction boundary
    (`boundary_at`), or stops there when `resume` is the end of the split."""

    error: BinlogError
    offset: int
    resume: int

    @property
    def file(self) -> str | None:
        return self.error.file

    def __str__(self) -> str:
        return f"{self.error}; bytes [{self.offset}, {self.resume}) skipped, up to the next verified transaction boundary"


def resume_at(ref: FileRef, exc: BinlogError) -> int | None:
    """Where reading can go on after a fault of the stream: the first verified transaction boundary
    after the fault's offset (`boundary_at`); None where resync cannot be trusted (`Head.reason`:
    relay logs, no CRC32, ...), the file's head is broken, or the fault has no offset: the file ends
    at the fault."""
    if exc.offset is None or isinstance(exc, ResyncError):
        return None
    try:
        head = read_head(ref)
        if head.fde is None or head.reason is not None or exc.offset < head.end:
            return None
        return boundary_at(ref, head, exc.offset + 1)
    except (ResyncError, OSError):
        return None


def _as_whole(split: Split, exc: BinlogError, options: ReadOptions) -> BinlogError:
    """The error a reader of the whole file raises at the fault a reader of a piece of it met (the
    same fault; its message may differ: an event running past the end of the piece runs past the end
    of the file at another count of bytes): the event at the fault read again with the rest of the
    file behind it."""
    head = read_head(split.ref, walk=False)
    at = dataclasses.replace(split, start=exc.offset, end=None, fde_pos=head.fde_pos, fde_size=head.fde_size,
                             before=(), resync=False, schema_state=None)
    try:
        for ev in read_piece(at, options):
            if not ev.is_inner and ev.pos >= exc.offset:
                break
    except BinlogError as again:
        if again.offset == exc.offset and type(again) is type(exc):
            return again
    return exc


def iter_resuming_events(split: Split, options: ReadOptions = DEFAULT_OPTIONS,
                         sink=None) -> Iterator[Event | Skipped]:
    """The events of a split (`iter_split_events`), going on past the faults of the stream: where the
    reader raises a BinlogError (a CRC32 mismatch, an impossible size, garbage bytes), a `Skipped` is
    yielded instead, naming the fault and the bytes skipped, and reading resumes at the next verified
    transaction boundary after the fault (`resume_at`), up to the split's own (resolved) end: a split
    never reads past it, the next split resyncs on its own, and both resyncs agree, so a file read
    whole or in pieces gives the same events and the same `Skipped`. Where resync cannot be trusted
    (`resume_at` is None), or where no verified boundary follows the fault (a file cut inside its last
    event), the error is raised: the file ends there. A `ResyncError` is always raised.
    `sink`: see BinlogReader (and `_checked_events`)."""
    if split.if_binlog:
        if not starts_like_binlog(split.ref):
            return
        split = dataclasses.replace(split, if_binlog=False)
    head: Head | None = None
    if split.resync:
        piece, head = resolve(split)
        if piece is None:
            return
        if head.fde is None:
            yield from read_piece(piece, options, sink)
            return
        events = _checked_events(split, piece, head, options, sink=sink)
    else:
        piece = split
        events = read_piece(split, options, sink)
    stop = split.ref.size if piece.end is None else piece.end
    while True:
        try:
            yield from events
            return
        except ResyncError:
            raise
        except BinlogError as exc:
            resume = resume_at(split.ref, exc)
            if resume is None or resume >= split.ref.size:    # nothing verified after it: the file ends there
                raise
            resume = min(resume, stop)
            if not split.whole:
                exc = _as_whole(split, exc, options)
            yield Skipped(exc, exc.offset, resume)
            if resume >= stop:
                return
        head = head or read_head(split.ref, walk=False)
        rest = dataclasses.replace(piece, start=resume, fde_pos=head.fde_pos, fde_size=head.fde_size, before=(),
                                   resync=False, schema_state=None)
        if split.resync:
            events = _checked_events(split, rest, head, options, keep_prefix=False, sink=sink)
        else:
            events = (ev for ev in read_piece(rest, options, sink) if ev.is_inner or ev.pos >= resume)
