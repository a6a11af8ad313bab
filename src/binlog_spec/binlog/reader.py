"""Streaming binlog reader: one event at a time, bounded memory.

Events are sliced from a window of large reads (framing.Window): the header
first; its size says how many more bytes make the event. The CRC32 is checked
when the FORMAT_DESCRIPTION_EVENT in force announces one, the body is parsed
with that FDE's post-header lengths (of the types ReadOptions.parse_bodies
names; the others when their fields are first asked for, with the same error),
and compressed payloads are expanded. Any fault raises a BinlogError naming the file and the
offset, after every earlier event has been yielded.
"""
from __future__ import annotations

import dataclasses
import io
import os
import sys
from typing import BinaryIO, Callable, Collection, Iterator

from binlog_spec.binlog.fields import bodies, payload
from binlog_spec.binlog import framing
from binlog_spec.binlog.framing import SCAN_CHUNK, SKIP_BATCH, WALK_BATCH, GunzipStream, Unclosed, Window
from binlog_spec.binlog import spec
from binlog_spec.errors import (BinlogError, ChecksumError, DecompressionError, EncryptedBinlogError,
                                EventSizeError,
                                MalformedEventError, NotABinlogError, TruncatedEventError)
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.replay import with_replay
from binlog_spec.options import DEFAULT_OPTIONS, ReadOptions

ET = spec.EventType
GZIP_MAGIC = b"\x1f\x8b"
#: The path that means standard input, and the name its events and errors carry.
STDIN = "-"
STDIN_NAME = "(stdin)"


def display_name(path: str | os.PathLike) -> str:
    """The name a file's events and errors carry: the path, or '(stdin)' for '-'."""
    p = os.fspath(path)
    return STDIN_NAME if p == STDIN else p


def events_size(paths: list[str | os.PathLike]) -> int | None:
    """The bytes the events of files add up to (each file's size less its magic), or None when a file is
    gzip (its size is not theirs). OSError when a file cannot be read."""
    total = 0
    for path in paths:
        with io.open(path, "rb") as f:
            if f.read(2) == GZIP_MAGIC:
                return None
        total += max(os.path.getsize(path) - spec.LEN_MAGIC, 0)
    return total


def open(path: str | os.PathLike, options: ReadOptions = DEFAULT_OPTIONS) -> "BinlogReader":  # noqa: A001
    """Open a binlog (plain or gzip) for streaming: ``for ev in binlog_spec.open(p): ...``."""
    return BinlogReader(path, options)


class _State:
    """What the reader knows at a point of the stream."""

    __slots__ = ("fde", "encrypted_at")

    def __init__(self) -> None:
        self.fde: spec.FormatDescription | None = None
        #: Position of the START_ENCRYPTION_EVENT, once seen.
        self.encrypted_at: int | None = None


#: Where a reader's bytes come from: () -> (binary stream, its size or None when unknown).
Opener = Callable[[], "tuple[BinaryIO, int | None]"]
#: A consumer of whole events straight from the framing loop (analysis.collector.sink):
#: (window bytes, offset in them, file position, FDE, verify CRC32, file name) -> the bytes it took, whole
#: events it counted itself, with the checks of framing.walk_events; those events are never yielded; or
#: minus the bytes it wants from the file position in the window (read into it, then it is called again).
#: Called before each walk of the window; the events it leaves are read as always, one walk at a time.
Sink = Callable[[bytes, int, int, "spec.FormatDescription", bool, str], int]


class BinlogReader:
    """The events of one binlog. `opener`, when given, supplies the bytes instead of `path` (which
    then only names the events and errors): a byte range, a remote file (Spark's splits)."""

    def __init__(self, path: str | os.PathLike, options: ReadOptions = DEFAULT_OPTIONS,
                 opener: Opener | None = None, sink: Sink | None = None):
        #: '-' reads standard input (the events and errors then name '(stdin)').
        self.stdin = os.fspath(path) == STDIN and opener is None
        self.path = display_name(path)
        self.options = options
        self._opener = opener
        #: Takes whole events straight from the window before they are walked (see Sink).
        self.sink = sink
        self._stream: BinaryIO | None = None
        #: The FDE in force after the last event read (None before the first).
        self.format_description: spec.FormatDescription | None = None
        #: Bytes consumed so far (a file offset).
        self.position = 0
        #: Events stepped past by `scan`.
        self.scanned = 0
        #: Types parsed as read whatever options.parse_bodies says (the framing needs them).
        self._always_parsed = frozenset({int(ET.format_description_event)} | (
            {int(ET.transaction_payload_event)} if options.expand_payloads else set()))

    def __enter__(self) -> "BinlogReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def __iter__(self) -> Iterator[Event]:
        return self._events()

    # ------------------------------------------------------------------
    def _open_stream(self) -> tuple[BinaryIO, int | None]:
        if self._opener is not None:
            return self._opener()
        if self.stdin:
            return self._open_stdin()
        raw = io.open(self.path, "rb", buffering=0)
        head = raw.read(2)
        raw.seek(0)
        if head == GZIP_MAGIC:
            return io.BufferedReader(GunzipStream(raw), self.options.buffer_size), None
        return io.BufferedReader(raw, self.options.buffer_size), os.fstat(raw.fileno()).st_size

    def _open_stdin(self) -> tuple[BinaryIO, None]:
        """Standard input, not seekable: the gzip magic is peeked at; closing the stream leaves fd 0."""
        source = getattr(sys.stdin, "buffer", sys.stdin)
        try:
            raw: BinaryIO = io.open(os.dup(source.fileno()), "rb", buffering=0)
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            raw = Unclosed(source)
        stream = io.BufferedReader(raw, self.options.buffer_size)
        if stream.peek(2)[:2] == GZIP_MAGIC:
            return io.BufferedReader(GunzipStream(stream), self.options.buffer_size), None
        return stream, None

    def _err(self, cls: type[BinlogError], message: str, offset: int, event_type: str | None = None) -> BinlogError:
        return cls(message, file=self.path, offset=offset, event_type=event_type)

    def _stream_fault(self, stream: BinaryIO, event_pos: int) -> None:
        """After a short read: a gzip file that is cut or damaged (GunzipStream.fault) raises that
        fault as the BinlogError of the event being read (offsets in the uncompressed binlog)."""
        fault = getattr(getattr(stream, "raw", None), "fault", None)
        if isinstance(fault, EOFError):
            raise self._err(TruncatedEventError, f"the gzip file is cut ({fault}); offsets are in the uncompressed "
                            "binlog", event_pos)
        if fault is not None:
            raise self._err(DecompressionError, f"the gzip file is damaged ({fault}); offsets are in the "
                            "uncompressed binlog", event_pos)

    def _events(self) -> Iterator[Event]:
        stream, size = self._open_stream()
        self._stream = stream
        window = Window(stream, self.options.buffer_size, size)
        take, H = window.take, spec.LEN_EVENT_HEADER
        try:
            magic = take(0, spec.LEN_MAGIC)
            if len(magic) < spec.LEN_MAGIC:
                self._stream_fault(stream, 0)
            if magic != spec.MAGIC:
                raise self._not_a_binlog(magic)
            pos = spec.LEN_MAGIC
            self.position = pos
            state = _State()
            walk, verify, eager, always = framing.walk, self.options.verify_checksums, self.options.parse_bodies, \
                self._always_parsed
            TPE, path, late = int(ET.transaction_payload_event), self.path, self._parse_late
            sink, most = self.sink, WALK_BATCH if self.sink is None else 1
            while True:
                fde = state.fde
                if fde is not None and state.encrypted_at is None and fde.len_checksum in (0, 4) \
                        and pos >= window.base:
                    if sink is not None:
                        taken = sink(window.buf, pos - window.base, pos, fde, verify, path)
                        while taken < 0:    # it wants that many bytes from pos in the window
                            had = window.base + len(window.buf) - pos
                            got = len(window.take(pos, -taken))
                            if got < -taken and got <= had:
                                taken = 0   # (the stream ends first: no byte more to give)
                                break
                            taken = sink(window.buf, pos - window.base, pos, fde, verify, path)
                        if taken:
                            pos += taken
                            self.position = pos
                            continue
                    # The fast path: the whole events already in the window, CRC32 checked (framing.walk_events).
                    batch = walk(window.buf, pos - window.base, fde.len_checksum, verify, most)
                    if batch:
                        for header, buf, checksum in batch:
                            code = header.type_code
                            if code == TPE:     # what _dispatch does, without its generator for the others
                                yield from self._dispatch(buf, header, pos, state, spec.event_type_name(code), True)
                            elif eager is not None and code not in eager and code not in always:
                                yield Event(path, pos, header, buf, None, checksum=checksum, late=(late, fde))
                            else:
                                body, overrides, error = late(None, fde, buf, pos, spec.event_type_name(code), code)
                                yield Event(path, pos, header, buf, body, overrides=overrides, error=error,
                                            checksum=checksum)
                            pos += header.len_event
                            self.position = pos
                        continue
                head = take(pos, H)
                if len(head) < H:
                    self._stream_fault(stream, pos)
                    if not head:
                        return
                    raise self._short_header(len(head), pos)
                if state.encrypted_at is not None:
                    raise self._encrypted(state, pos)
                header = self._header(head, pos, state)
                name = spec.event_type_name(header.type_code)
                buf = take(pos, header.len_event)
                if len(buf) < header.len_event:
                    self._stream_fault(stream, pos)
                    raise self._past_end(header.len_event, len(buf), pos, name)
                yield from self._dispatch(buf, header, pos, state, name)
                pos += header.len_event
                self.position = pos
        finally:
            self.close()

    # The faults of the framing, raised alike by iteration and by `scan`.
    def _not_a_binlog(self, magic: bytes) -> BinlogError:
        return self._err(NotABinlogError, f"not a binlog: starts with {magic.hex() or 'nothing'}, "
                         f"expected {spec.MAGIC.hex()}", 0)

    def _short_header(self, got: int, pos: int) -> BinlogError:
        return self._err(TruncatedEventError, f"file ends with {got} bytes, "
                         f"less than a {spec.LEN_EVENT_HEADER}-byte event header", pos)

    def _encrypted(self, state: _State, pos: int) -> BinlogError:
        return self._err(EncryptedBinlogError, "the events after the START_ENCRYPTION_EVENT at "
                         f"{state.encrypted_at} are encrypted with a key only the server has", pos)

    def _past_end(self, len_event: int, remain: int, pos: int, name: str) -> BinlogError:
        return self._err(TruncatedEventError, f"event of {len_event} bytes runs past the end "
                         f"of the file ({remain} bytes remain)", pos, name)

    def _header(self, head: bytes, pos: int, state: _State) -> spec.EventHeader:
        try:
            header = spec.parse_header(head)
        except spec.SpecError as exc:
            raise self._err(EventSizeError, f"impossible event header: {exc}", pos) from None
        name = spec.event_type_name(header.type_code)
        if state.fde is None and header.type_code != ET.format_description_event:
            raise self._err(NotABinlogError, f"first event is {name}, not FORMAT_DESCRIPTION_EVENT", pos, name)
        minimum = spec.LEN_EVENT_HEADER + (state.fde.len_checksum if state.fde and
                                           header.type_code != ET.format_description_event else 0)
        if header.len_event < minimum:
            raise self._err(EventSizeError, f"impossible event size {header.len_event} "
                            f"(at least {minimum})", pos, name)
        return header

    def _dispatch(self, buf: bytes, header: spec.EventHeader, pos: int, state: _State,
                  name: str, verified: bool = False) -> Iterator[Event]:
        """The events of one event's bytes (its CRC32 already checked when `verified`)."""
        if header.type_code == ET.format_description_event:
            state.fde = self._format_description(buf, pos, name)
            self.format_description = state.fde
        elif state.fde.len_checksum and self.options.verify_checksums and not verified:
            self._verify_crc(buf, pos, name)
        has_crc = (state.fde.fde_checksum is not None if header.type_code == ET.format_description_event
                   else state.fde.len_checksum == 4)
        checksum = int.from_bytes(buf[-4:], "little") if has_crc else None
        eager = self.options.parse_bodies
        if eager is not None and header.type_code not in eager and header.type_code not in self._always_parsed:
            body = error = None
            yield Event(self.path, pos, header, buf, None, checksum=checksum, late=(self._parse_late, state.fde))
        else:
            body, overrides, error = self._parse_late(None, state.fde, buf, pos, name, header.type_code)
            yield Event(self.path, pos, header, buf, body, overrides=overrides, error=error, checksum=checksum)
        if header.type_code == ET.start_encryption_event:
            state.encrypted_at = pos
        if (header.type_code == ET.transaction_payload_event and error is None
                and self.options.expand_payloads):
            yield from self._payload_events(body, pos, state.fde, name)

    def _parse_late(self, ev: Event | None, fde: spec.FormatDescription, buf: bytes = b"", pos: int = 0,
                    name: str = "", code: int = 0) -> tuple:
        """(body, decompressed fields or None, MalformedEventError or None) of an event (`ev`, or the
        one of these bytes): the body parsed, then decompressed in place."""
        if ev is not None:
            buf, pos, name, code = ev.raw, ev.pos, ev.type, ev.type_code
        body, error = self._parse(buf, pos, name, fde)
        handler = _HANDLERS.get(code)
        overrides = None
        if handler is not None and error is None and self.options.decompress:
            overrides = handler(self, body, pos, name)
        return body, overrides, error

    def _format_description(self, buf: bytes, pos: int, name: str) -> spec.FormatDescription:
        try:
            fde = spec.parse_fde(buf[spec.LEN_EVENT_HEADER:])
        except spec.SpecError as exc:
            raise self._err(MalformedEventError, f"bad FORMAT_DESCRIPTION_EVENT: {exc}", pos, name) from None
        if fde.fde_checksum is not None and self.options.verify_checksums:
            self._verify_crc(buf, pos, name, fde=True)
        return fde

    def _verify_crc(self, buf: bytes, pos: int, name: str, fde: bool = False) -> None:
        stored = int.from_bytes(buf[-4:], "little")
        computed = spec.event_crc32(buf, fde)
        if stored != computed:
            raise self._err(ChecksumError, f"CRC32 mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}",
                            pos, name)

    def _parse(self, buf: bytes, pos: int, name: str, fde: spec.FormatDescription | None,
               where: str = ""):
        """(body, None), or (None, MalformedEventError) when lenient."""
        try:
            return bodies.parse_event(buf, fde), None
        except spec.SpecError as exc:
            err = self._err(MalformedEventError, f"{where}body does not match the {name} layout: {exc}",
                            pos, name)
            if self.options.strict:
                raise err from None
            return None, err

    # ---------------------------------------------------------- scan mode
    def scan(self, read: Collection[int] = (), report: Collection[int] | None = None,
             chunk: int = SCAN_CHUNK, runs: Collection[int] = (),
             runs_until: int = -1) -> Iterator[tuple[int, int, int, memoryview | None]]:
        """The planning mode: (position, type code, size, bytes or None) of every event (or of the
        FDEs and the types in `read` and `report`), bodies neither parsed nor expanded; `scanned`
        counts the events stepped past. Bytes (a view, valid until the next step) are read for the
        FDEs (`format_description` follows them), the CRC32 check (options.verify_checksums), the
        types in `read`, and all along a stream of unknown size (gzip); the rest is stepped over.
        Raises the BinlogError iteration raises, at the same offset, for the framing: magic, FDE
        first, sizes, truncation, CRC32, FDE layout, encryption (not for body layouts).
        Of a run of events of the `report` types in `runs` at positions up to `runs_until`, with no other
        reported event between them, only the first and the last may be given (framing.skip_events RUN)."""
        stream, size = self._open_stream()
        self._stream = stream
        w = Window(stream, chunk)
        H, FDE, START_ENCRYPTION = spec.LEN_EVENT_HEADER, int(ET.format_description_event), int(ET.start_encryption_event)
        unpack, crc32, verify = spec.HEADER_STRUCT.unpack_from, spec.event_crc32, self.options.verify_checksums
        shown = None if report is None else frozenset(report) | frozenset(read) | {FDE}
        state = _State()
        pos, count, min_len, read_all = spec.LEN_MAGIC, 0, 1 << 64, False   # min_len: no FDE yet, others fault
        try:
            if w.ensure(0, spec.LEN_MAGIC) < spec.LEN_MAGIC or bytes(w.view(0, spec.LEN_MAGIC)) != spec.MAGIC:
                self._stream_fault(stream, 0)
                raise self._not_a_binlog(bytes(w.view(0, spec.LEN_MAGIC)))
            buf, base = w.buf, w.base
            runs = frozenset(runs) - frozenset(read) - {FDE}
            marks, skip = None if shown is None else framing.skip_marks(shown, runs), framing.skip
            while True:
                fde = state.fde
                if marks is not None and fde is not None and state.encrypted_at is None and fde.len_checksum in (0, 4) \
                        and pos >= base:
                    # The fast path: step over the whole events (framing.skip_events), CRC32 checked; show some.
                    end = len(buf) if size is None else min(len(buf), size - base)
                    reached, k, steps = skip(buf, pos - base, end, fde.len_checksum, verify, marks, SKIP_BATCH,
                                             runs_until - base)
                    if k:
                        start = count
                        for off, code, len_event, i in steps:
                            pos, count = base + off, start + i
                            self.scanned, self.position = count, pos
                            yield pos, code, len_event, (memoryview(buf)[off:off + len_event]
                                                         if read_all or code in read else None)
                        pos, count = base + reached, start + k
                        continue
                if pos - base + H > len(buf):
                    got = w.ensure(pos, H)
                    buf, base = w.buf, w.base
                    if got < H:
                        self._stream_fault(stream, pos)
                        if got == 0:
                            return
                        raise self._short_header(got, pos)
                if state.encrypted_at is not None:
                    raise self._encrypted(state, pos)
                _ts, code, _sid, len_event, _end, _flags = unpack(buf, pos - base)
                if code == FDE or len_event < min_len:
                    self._header(bytes(w.view(pos, H)), pos, state)  # raises at a fault
                if size is not None and pos + len_event > size:
                    raise self._past_end(len_event, size - pos, pos, spec.event_type_name(code))
                ev = None
                if code == FDE or read_all or code in read:
                    if pos - base + len_event > len(buf):
                        got = w.ensure(pos, len_event)
                        buf, base = w.buf, w.base
                        if got < len_event:
                            self._stream_fault(stream, pos)
                            raise self._past_end(len_event, got, pos, spec.event_type_name(code))
                    ev = w.view(pos, len_event)
                    if code == FDE:
                        fde = state.fde = self.format_description = self._format_description(
                            bytes(ev), pos, spec.event_type_name(code))
                        min_len = H + fde.len_checksum
                        read_all = bool(verify and fde.len_checksum) or size is None
                    elif verify and min_len > H and crc32(ev) != int.from_bytes(ev[-4:], "little"):
                        self._verify_crc(ev, pos, spec.event_type_name(code))   # raises the ChecksumError
                if shown is None or code in shown:
                    self.scanned, self.position = count, pos
                    yield pos, code, len_event, ev
                if code == START_ENCRYPTION:
                    state.encrypted_at = pos
                pos += len_event
                count += 1
        finally:
            self.scanned, self.position = count, pos
            self.close()

    # ---------------------------------------------------------- payloads
    def _payload_events(self, body, pos: int, fde: spec.FormatDescription, name: str) -> Iterator[Event]:
        compression_type, compressed, uncompressed_size = spec.payload_parts(body)
        try:
            data = payload.transaction_payload(compression_type, compressed, uncompressed_size)
        except payload.PayloadError as exc:
            raise self._err(DecompressionError, str(exc), pos, name) from None
        # Events inside a payload carry no checksum of their own.
        inner_fde = dataclasses.replace(fde, len_checksum=0)
        offset = 0
        while offset < len(data):
            where = f"inner event at payload offset {offset}"
            if len(data) - offset < spec.LEN_EVENT_HEADER:
                raise self._err(TruncatedEventError, f"{where}: payload ends inside an event header", pos, name)
            head = data[offset:offset + spec.LEN_EVENT_HEADER]
            try:
                header = spec.parse_header(head)
            except spec.SpecError as exc:
                raise self._err(EventSizeError, f"{where}: impossible header: {exc}", pos, name) from None
            inner_name = spec.event_type_name(header.type_code)
            if offset + header.len_event > len(data):
                raise self._err(TruncatedEventError, f"{where}: {inner_name} of {header.len_event} bytes runs past "
                                f"the end of the payload", pos, name)
            buf = data[offset:offset + header.len_event]
            inner, error = self._parse(buf, pos, inner_name, inner_fde, f"{where}: ")
            handler = _HANDLERS.get(header.type_code)
            overrides = None
            if handler is not None and error is None and self.options.decompress:
                overrides = handler(self, inner, pos, inner_name)
            yield Event(self.path, pos, header, buf, inner, payload_pos=pos, payload_offset=offset,
                        overrides=overrides, error=error)
            offset += header.len_event

    def _uncompress(self, block: bytes, pos: int, name: str) -> bytes:
        try:
            return payload.mariadb_uncompress(block)
        except payload.PayloadError as exc:
            raise self._err(DecompressionError, str(exc), pos, name) from None

    def _query_compressed(self, body, pos: int, name: str) -> dict:
        return {"query": self._uncompress(spec.raw_field(body, "query"), pos, name).decode("utf-8", errors="replace"),
                "compressed": True}

    def _rows_compressed(self, body, pos: int, name: str) -> dict:
        return {"rows": self._uncompress(spec.raw_field(body, "rows"), pos, name), "compressed": True}


#: Event code -> handler run on the parsed body (decompression in place).
_HANDLERS: dict[int, Callable[[BinlogReader, object, int, str], dict]] = {
    ET.query_compressed_event: BinlogReader._query_compressed,
    ET.write_rows_compressed_event_v1: BinlogReader._rows_compressed,
    ET.update_rows_compressed_event_v1: BinlogReader._rows_compressed,
    ET.delete_rows_compressed_event_v1: BinlogReader._rows_compressed,
    ET.write_rows_compressed_event: BinlogReader._rows_compressed,
    ET.update_rows_compressed_event: BinlogReader._rows_compressed,
    ET.delete_rows_compressed_event: BinlogReader._rows_compressed,
}


def read_events(paths: list[str | os.PathLike], options: ReadOptions = DEFAULT_OPTIONS,
                faults: list[BinlogError] | None = None, sink: Sink | None = None) -> Iterator[Event]:
    """Events of several files, in order. A broken file raises its BinlogError after its last good
    event; with `faults` (a list) the error is appended to it instead and the next file is read.
    `sink`: see BinlogReader."""
    for p in paths:
        with BinlogReader(p, options, sink=sink) as reader:
            events = reader if getattr(sink, "replay", None) is None else with_replay(reader, sink)
            if faults is None:
                yield from events
                continue
            try:
                yield from events
            except BinlogError as exc:
                faults.append(exc)


__all__ = ["open", "read_events", "BinlogReader"]
