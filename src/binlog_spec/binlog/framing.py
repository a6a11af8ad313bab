"""The reader's access to bytes: a gzip file as a stream that keeps what it decompressed, standard
input left open, and a window of large reads that events are sliced from."""
from __future__ import annotations

import gzip
import io
import zlib
from typing import BinaryIO

from binlog_spec import compiled
from binlog_spec.binlog import spec

class GunzipStream(io.RawIOBase):
    """The uncompressed bytes of a gzip file, as a raw stream that never loses what it has
    decompressed: a cut or damaged gzip file ends the stream early, and the fault is kept in
    `fault` for the reader to raise with the offset it reached. (io.BufferedReader over
    gzip.GzipFile drops the data of a read that meets the fault, up to its buffer size.)"""

    def __init__(self, fileobj: BinaryIO):
        super().__init__()
        self._gz = gzip.GzipFile(fileobj=fileobj, mode="rb")
        self._fileobj = fileobj   # closed with this stream
        self.fault: Exception | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        if self.fault is not None:
            return 0
        try:
            data = self._gz.read1(len(b))    # one decompression step: data, or the fault and no data
        except (EOFError, zlib.error, OSError) as exc:
            self.fault = exc
            return 0
        b[:len(data)] = data
        return len(data)

    def close(self) -> None:
        self._gz.close()
        self._fileobj.close()
        super().close()


class Unclosed(io.RawIOBase):
    """A binary stream (a test's sys.stdin) read without closing it."""

    def __init__(self, source: BinaryIO):
        super().__init__()
        self._source = source

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        data = self._source.read(len(b))
        b[:len(data)] = data
        return len(data)


SCAN_CHUNK = 8 << 20

#: The types walk_events leaves to the reader's full path (an FDE changes the framing, encryption ends it).
_WALK_STOP = frozenset({int(spec.EventType.format_description_event), int(spec.EventType.start_encryption_event)})


#: The largest single read of Window.take (an event size read from damaged bytes may be huge).
MAX_READ = 16 << 20


class Window:
    """Sequential access to a stream through a window of large reads (forward only)."""

    def __init__(self, f: BinaryIO, chunk: int, limit: int | None = None):
        self.f, self.chunk, self.buf, self.base = f, chunk, b"", 0
        #: take() reads nothing at or past this offset (the file's size when it was opened).
        self.limit = limit
        try:
            self.seekable = f.seekable()
        except (AttributeError, OSError, ValueError):
            self.seekable = False

    def take(self, pos: int, n: int) -> bytes:
        """The bytes [pos, pos+n), fewer where the stream (or `limit`) ends first. Positions only go
        forward: pos is never before the previous call's."""
        buf, off = self.buf, pos - self.base
        if off + n <= len(buf):
            return buf[off:off + n]
        if self.limit is not None:
            n = max(min(n, self.limit - pos), 0)
        if 0 <= off < len(buf) and self.seekable:
            # the bytes left over read again with the next ones: one read, no join (a second copy of the file)
            self.f.seek(pos)
            buf, off = b"", 0
        parts = [buf[off:]] if off < len(buf) else []
        have = len(buf) - off if off < len(buf) else 0
        while have < n:
            want = max(self.chunk, min(n - have, MAX_READ))
            if self.limit is not None:
                want = min(want, self.limit - pos - have)
            data = self.f.read(want)
            if not data:
                break
            parts.append(data)
            have += len(data)
        self.buf, self.base = (parts[0] if len(parts) == 1 else b"".join(parts)), pos
        return self.buf[:n]

    def ensure(self, pos: int, n: int) -> int:
        """Make [pos, pos+n) available if the stream has it; return how many bytes are there."""
        end = self.base + len(self.buf)
        if self.base <= pos and pos + n <= end:
            return n
        if pos > end and self.f.seekable():
            self.f.seek(pos)
            self.buf, self.base = b"", pos
        elif pos > end:  # step over bytes never needed
            skip = pos - end
            while skip > 0:
                data = self.f.read(min(skip, self.chunk))
                if not data:
                    break
                skip -= len(data)
            self.buf, self.base = b"", pos - skip
            if skip:
                return 0
        elif self.f.seekable():     # the bytes from pos read again with the next ones: one read, no join
            self.f.seek(pos)
            self.buf, self.base = b"", pos
        else:
            self.buf, self.base = self.buf[pos - self.base:], pos
        parts = [self.buf] if self.buf else []
        have = len(self.buf)
        while have < n:
            data = self.f.read(max(self.chunk, n - have))
            if not data:
                break
            parts.append(data)
            have += len(data)
        self.buf = parts[0] if len(parts) == 1 else b"".join(parts)
        return min(n, len(self.buf))

    def view(self, pos: int, n: int) -> memoryview:
        return memoryview(self.buf)[pos - self.base: pos - self.base + n]


#: The most events one walk_events call returns (the reader's batch: bounded memory, early yields).
WALK_BATCH = 256
#: The most events one skip_events call steps over (the scan's position and count stay current).
SKIP_BATCH = 4096


def walk_events(buf: bytes, off: int, len_checksum: int, verify: bool,
                max_events: int = WALK_BATCH) -> list[tuple["spec.EventHeader", bytes, int | None]]:
    """The framing loop's fast part (the pure-Python reference of _cframing.walk_events): the whole
    events of `buf` from `off`, at most `max_events`, as (header, bytes, CRC32 trailer or None), for
    events after an FDE whose checksum trailer is `len_checksum` (0 or 4) bytes, the CRC32 checked
    when `verify`. Stops, without taking it, at the first event that needs the reader's full path: one
    not all in `buf` (or whose header is not), an FDE, a START_ENCRYPTION_EVENT, a size below
    header + checksum, a CRC32 mismatch. The reader raises the fault there, as it always has."""
    out: list[tuple[spec.EventHeader, bytes, int | None]] = []
    H, n, unpack, make = spec.LEN_EVENT_HEADER, len(buf), spec.HEADER_STRUCT.unpack_from, spec.EventHeader
    min_len = H + len_checksum
    while len(out) < max_events and off >= 0 and n - off >= H:
        fields = unpack(buf, off)
        code, len_event = fields[1], fields[3]
        if code in _WALK_STOP or len_event < min_len or len_event > n - off:
            break
        raw = buf[off:off + len_event]
        checksum = None
        if len_checksum == 4:
            checksum = int.from_bytes(raw[-4:], "little")
            if verify and zlib.crc32(memoryview(raw)[:-4]) != checksum:
                break
        out.append((make(*fields), raw, checksum))
        off += len_event
    return out


#: The marks of skip_events: step over (0), leave to the full path (STOP), step over and report (SHOW),
#: step over and report the first and the last of a run of them with no SHOW between (RUN).
STOP, SHOW, RUN = 1, 2, 3


def skip_events(buf: bytes, off: int, end: int, len_checksum: int, verify: bool, marks: bytes,
                max_events: int = SKIP_BATCH, run_end: int = -1) -> tuple[int, int, list[tuple[int, int, int, int]]]:
    """The scan mode's fast part (the pure-Python reference of _cframing.skip_events): steps over the
    whole events of buf[off:end], at most `max_events`, with the checks of walk_events (the CRC32 when
    `verify` and `len_checksum` is 4), up to one whose type code `marks` (256 bytes, one per code)
    marks STOP; returns (the offset reached, the events stepped over, and (offset, type code, size,
    index in the steps) of those whose type is marked SHOW). Stops where walk_events stops too.
    An event marked RUN at an offset up to `run_end` is reported only when it is the first or the last
    of a run of such events with no SHOW event between them (in this call); past `run_end`, as SHOW."""
    if len(marks) != 256:
        raise ValueError("marks must have 256 bytes")
    H, unpack, min_len, count = spec.LEN_EVENT_HEADER, spec.HEADER_STRUCT.unpack_from, spec.LEN_EVENT_HEADER + len_checksum, 0
    end = min(end, len(buf))
    view, shown = memoryview(buf), []
    in_run, last = False, None      # last: the run's latest event, not reported yet
    while count < max_events and off >= 0 and end - off >= H:
        _ts, code, _sid, len_event, _end, _flags = unpack(buf, off)
        m = marks[code]
        if m == STOP or len_event < min_len or len_event > end - off:
            break
        if verify and len_checksum == 4 and zlib.crc32(view[off:off + len_event - 4]) != int.from_bytes(
                view[off + len_event - 4:off + len_event], "little"):
            break
        if m == RUN and off <= run_end:
            if in_run:
                last = (off, code, len_event, count)
            else:
                shown.append((off, code, len_event, count))
                in_run = True
        elif m == SHOW or m == RUN:
            if last is not None:
                shown.append(last)
                last = None
            in_run = False
            shown.append((off, code, len_event, count))
        off += len_event
        count += 1
    if last is not None:
        shown.append(last)
    return off, count, shown


def skip_marks(show, runs=()) -> bytes:
    """The `marks` of skip_events: the types in `show` SHOW (those also in `runs`: RUN), the ones
    walk_events leaves to the full path STOP."""
    marks = bytearray(256)
    for code in show:
        marks[code] = RUN if code in runs else SHOW
    for code in _WALK_STOP:
        marks[code] = STOP
    return bytes(marks)


_cframing = compiled.load("binlog_spec.binlog._cframing")
#: walk_events as the reader calls it: the compiled one (binlog/_cframing.pyx) where it is built.
walk = _cframing.walk_events if _cframing is not None else walk_events
#: skip_events as the scan mode calls it, compiled where built.
skip = _cframing.skip_events if _cframing is not None else skip_events
