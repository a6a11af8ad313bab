"""The folder `binlog-spec download` writes: which logs it holds, where a download resumes, and the log
being written, in whole transactions.

A copy is written as the server wrote its file: each event's bytes as they are in the server's log (the
artificial events of the protocol are never given here). What is in the folder is always a prefix of the
server's log that ends at a transaction boundary, so every command can read the folder while it grows:

* a new log first appears whole up to its first boundary (magic, FORMAT_DESCRIPTION_EVENT and what follows
  it before the first transaction): written to a hidden `.NAME.part` file, then renamed;
* then each transaction is appended in one write when its last event arrives, and flushed: a crash of the
  downloader loses at most the transaction in flight (the events of a transaction not ended are held in
  memory, never written);
* the FORMAT_DESCRIPTION_EVENT is written with LOG_EVENT_BINLOG_IN_USE_F set, as the server's own file has
  it while the server writes the log (the dump sends it with the flag clear: MariaDB sql/sql_repl.cc,
  send_format_descriptor_event; MySQL sql/rpl_binlog_sender.cc, Binlog_sender::send_format_description_event);
* a log the server closed (its ROTATE_EVENT or STOP_EVENT written) gets its FORMAT_DESCRIPTION_EVENT's
  LOG_EVENT_BINLOG_IN_USE_F cleared, as the server clears it in its own file when it closes it
  (MYSQL_BIN_LOG::close, sql/log.cc; the CRC32 is computed with the flag clear: spec.event_crc32), and the
  file is fsynced. A log the server did not close (it crashed: the next log starts with no ROTATE_EVENT
  before) keeps the flag, as MariaDB leaves it in its file.

The events of a live log come whole from the dump: they are made Events straight from their bytes
(`_Framer`); a copy in the folder is read back with the reader (`whole_end`).

Where a transaction ends is the one tracker's (stream.transactions.Transactions).
"""
from __future__ import annotations

import fcntl
import os
import re
from pathlib import Path
from typing import Callable

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.fields import bodies
from binlog_spec.binlog.event_types import GTID_EVENTS, QUERY_EVENTS
from binlog_spec.binlog.reader import BinlogReader
from binlog_spec.errors import (BinlogError, ChecksumError, EventSizeError, MalformedEventError, NotABinlogError,
                                TruncatedEventError)
from binlog_spec.options import ReadOptions
from binlog_spec.stream.transactions import Transactions

ET = spec.EventType
#: A server's log name: BASE.NUMBER (mariadb-bin.000042; the number may grow past six digits).
LOG_NAME = re.compile(r"^(?P<base>[^.].*)\.(?P<number>\d+)$")
#: What a copy's events are read with: no payload expanded (one event per event of the file), no body
#: decompressed, and only the bodies the transaction tracker asks for parsed (GTID flags, statements).
TRACKING = ReadOptions(expand_payloads=False, decompress=False, buffer_size=1 << 16,
                       parse_bodies=frozenset(int(c) for c in GTID_EVENTS | QUERY_EVENTS))
#: The events after which the server closes a log.
CLOSING = frozenset({int(ET.rotate_event), int(ET.stop_event)})
#: Offset, in a file, of the FORMAT_DESCRIPTION_EVENT's flags (after the magic).
FDE_FLAGS_AT = spec.LEN_MAGIC + spec.OFS_FLAGS

def log_key(name: str) -> tuple[str, int]:
    """The order of a server's logs: by base name, then number (BASE.999999 comes before BASE.1000000)."""
    m = LOG_NAME.match(name)
    return (m["base"], int(m["number"])) if m else (name, -1)


def local_logs(folder: str | os.PathLike, base: str | None = None) -> list[str]:
    """The names of the logs in `folder` (BASE.NUMBER; of base `base` when given), in the server's order.
    Hidden files (a `.NAME.part` being created) are not logs."""
    names = [p.name for p in Path(folder).iterdir() if p.is_file() and LOG_NAME.match(p.name)]
    if base is not None:
        names = [n for n in names if LOG_NAME.match(n)["base"] == base]
    return sorted(names, key=log_key)


class Boundaries:
    """The transaction boundaries of one log's events, in the order they come: `step(event)` says
    whether the bytes before the event, and the bytes through it, end at a boundary."""

    def __init__(self):
        self.tx = Transactions()

    def step(self, ev: Event) -> tuple[bool, bool]:
        """(a boundary before `ev`, a boundary after it)."""
        starts, _ends = self.tx.step(ev)
        # (a TRANSACTION_PAYLOAD_EVENT holds its transaction whole: the tracker closes it at the next one)
        return starts, self.tx.mode is None or ev.type_code == ET.transaction_payload_event


def whole_end(path: str | os.PathLike,
              fault: Callable[[BinlogError], None] | None = None) -> tuple[int, bool]:
    """(the end of the last whole transaction of the copy at `path`, the log is closed there: its last
    event is a ROTATE_EVENT or STOP_EVENT). 0 when not even its FORMAT_DESCRIPTION_EVENT is whole: the
    log is downloaded again from its start. A file cut inside an event or a transaction ends at the
    boundary before; so does a copy damaged past some point (an impossible size, a CRC32 mismatch: the
    bytes of a crash of the machine), whose error is given to `fault`: the server has the bytes, the
    download fetches them again. A file that is no binlog raises NotABinlogError."""
    with open(path, "rb") as f:
        head = f.read(spec.LEN_MAGIC)
    if len(head) < spec.LEN_MAGIC and spec.MAGIC.startswith(head):
        return 0, False
    bounds = Boundaries()
    safe, closed = 0, False
    try:
        for ev in BinlogReader(path, TRACKING):
            before, after = bounds.step(ev)
            if before and ev.pos > safe and ev.pos > spec.LEN_MAGIC:
                safe, closed = ev.pos, False
            if after:
                safe, closed = ev.pos + ev.header.len_event, ev.type_code in CLOSING
    except TruncatedEventError:
        pass
    except (EventSizeError, ChecksumError) as exc:
        if fault is not None:
            fault(exc)
    return safe, closed


def clear_in_use(path: str | os.PathLike) -> None:
    """Clear LOG_EVENT_BINLOG_IN_USE_F in the FORMAT_DESCRIPTION_EVENT of the log at `path` (a closed log),
    as the server does in its file; fsync the file."""
    fd = os.open(path, os.O_RDWR)
    try:
        flags = os.pread(fd, 1, FDE_FLAGS_AT)
        if flags and flags[0] & spec.LOG_EVENT_BINLOG_IN_USE_F:
            os.pwrite(fd, bytes([flags[0] & ~spec.LOG_EVENT_BINLOG_IN_USE_F & 0xFF]), FDE_FLAGS_AT)
        os.fsync(fd)
    finally:
        os.close(fd)


def resume_point(folder: str | os.PathLike, name: str,
                 fault: Callable[[BinlogError], None] | None = None) -> tuple[int, bool]:
    """(where the download of the log `name` of `folder` goes on, the log is closed there). Its file is cut
    back to its last whole transaction (a log the downloader was writing when it stopped, or damaged past
    some point: whole_end, `fault`); when it has no whole FORMAT_DESCRIPTION_EVENT it is removed, to be
    written again from its start (4)."""
    path = Path(folder) / name
    end, closed = whole_end(path, fault)
    if end <= spec.LEN_MAGIC:
        path.unlink()
        return spec.LEN_MAGIC, False
    if path.stat().st_size != end:
        with open(path, "r+b") as f:
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())
    if closed:      # (the downloader may have stopped between the closing event and the flag)
        clear_in_use(path)
    return end, closed


#: The file a download holds locked while it writes the folder (fcntl.flock: released when it ends, or dies).
LOCK_NAME = ".binlog-spec-download.lock"


def lock(folder: str | os.PathLike):
    """Lock `folder` for one download (an open file to keep open while it writes). OSError (exit 4) when
    another download holds it: two would write the same logs."""
    path = Path(folder) / LOCK_NAME
    f = open(path, "a+b")
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        f.close()
        raise OSError(exc.errno, "another binlog-spec download is writing this folder", str(path)) from None
    return f


def remove_parts(folder: str | os.PathLike) -> None:
    """Remove the `.NAME.part` files a stopped download left (a log's start never renamed)."""
    for p in Path(folder).glob(".*.part"):
        p.unlink()


def _parse_late(ev: Event, fde: spec.FormatDescription) -> tuple:
    """(body, None, None), or (None, None, MalformedEventError): an event's body parsed when its fields are
    first asked for (Event's late parse, as the reader leaves the bodies it need not parse)."""
    try:
        return bodies.parse_event(ev.raw, fde), None, None
    except spec.SpecError as exc:
        return None, None, MalformedEventError(f"body does not match the {ev.type} layout: {exc}", file=ev.file,
                                               offset=ev.pos, event_type=ev.type)


class _Framer:
    """A log's events, given one at a time in order, as the Event objects the transaction tracker reads:
    the header parsed, the CRC32 checked when the FORMAT_DESCRIPTION_EVENT announces one, the body parsed
    only when its fields are asked for (the tracker asks for a GTID's and a statement's; a rows event's is
    never parsed). The events of a dump come whole: no framing of a byte stream is needed."""

    def __init__(self, name: str):
        self.name = name
        self.fde: spec.FormatDescription | None = None

    def event(self, data: bytes, pos: int) -> Event:
        header = spec.parse_header(data[:spec.LEN_EVENT_HEADER])
        code = header.type_code
        if code == ET.format_description_event:
            self.fde = spec.parse_fde(data[spec.LEN_EVENT_HEADER:])
            if self.fde.fde_checksum is not None:
                self._verify(data, pos, code, fde=True)
        elif self.fde is None:
            raise NotABinlogError(f"first event is {spec.event_type_name(code)}, not FORMAT_DESCRIPTION_EVENT",
                                  file=self.name, offset=pos)
        elif self.fde.len_checksum == 4:
            self._verify(data, pos, code)
        return Event(self.name, pos, header, data, None, late=(_parse_late, self.fde))

    def _verify(self, data: bytes, pos: int, code: int, fde: bool = False) -> None:
        stored, computed = int.from_bytes(data[-4:], "little"), spec.event_crc32(data, fde)
        if stored != computed:
            raise ChecksumError(f"CRC32 mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}",
                                file=self.name, offset=pos, event_type=spec.event_type_name(code))


class LogFile:
    """The copy of one log being written in `folder`, from `position` (4: a new file; otherwise the end of
    the file there, at a boundary). `add(data)` takes each event's bytes in order; they are written,
    whole transactions at a time (see the module's notes)."""

    def __init__(self, folder: str | os.PathLike, name: str, position: int):
        self.folder, self.name = Path(folder), name
        self.path = self.folder / name
        #: The bytes on disk (the copy's size).
        self.written = position
        self.pending = bytearray()
        self.closed = False
        self._f = None
        self._bounds = Boundaries()
        self._framer = _Framer(name)
        if position <= spec.LEN_MAGIC:
            self.written = 0
            self.pending += spec.MAGIC
        else:       # the events to come are read with the file's FDE
            self._f = open(self.path, "ab")
            with open(self.path, "rb") as f:
                head = f.read(spec.LEN_MAGIC + spec.LEN_EVENT_HEADER)[spec.LEN_MAGIC:]
                fde = head + f.read(spec.parse_header(head).len_event - spec.LEN_EVENT_HEADER)
            self._framer.event(fde, spec.LEN_MAGIC)

    @property
    def position(self) -> int:
        """Where the next event starts in the log."""
        return self.written + len(self.pending)

    def add(self, data: bytes) -> None:
        """The next event of the log (its bytes as in the server's file, but for the FDE's in-use flag:
        see the module's notes)."""
        ev = self._framer.event(data, self.position)
        if ev.type_code == ET.format_description_event and self.position == spec.LEN_MAGIC:
            data = bytearray(data)
            data[spec.OFS_FLAGS] |= spec.LOG_EVENT_BINLOG_IN_USE_F
        before, after = self._bounds.step(ev)
        if before and self.pending:
            self._write()
        self.pending += data
        if after:
            self._write()
            if ev.type_code in CLOSING:
                self.close(complete=True)

    def drop(self) -> int:
        """Forget the events of the transaction in flight (its end will never come: the connection is
        lost); the log goes on from `written`."""
        self.pending.clear()
        return self.written

    def _write(self) -> None:
        if self._f is None:     # the log's start: whole, under its name at once
            part = self.folder / f".{self.name}.part"
            with open(part, "wb") as f:
                f.write(self.pending)
                f.flush()
                os.fsync(f.fileno())
            os.replace(part, self.path)
            self._f = open(self.path, "ab")
        else:
            self._f.write(self.pending)
            self._f.flush()
        self.written += len(self.pending)
        self.pending.clear()

    def close(self, complete: bool = False) -> None:
        """Stop writing (what is pending is dropped); `complete`: the server closed the log (see the
        module's notes)."""
        self.pending.clear()
        if self._f is not None:
            self._f.close()
            self._f = None
            if complete:
                clear_in_use(self.path)
                self.closed = True


__all__ = ["LOG_NAME", "CLOSING", "log_key", "local_logs", "whole_end", "clear_in_use", "resume_point",
           "remove_parts", "lock", "LogFile", "Boundaries"]
