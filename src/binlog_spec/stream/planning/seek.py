"""--start-position by seeking: the first file is read from the transaction the position falls in,
and before it only the stretches that the schema and the filters need.

`plan` walks the event headers (the reader's scan mode, through `scan.scan_file`'s machinery: sizes,
truncation and, where checks are on, every CRC32 are checked as reading does) and cuts the file
into *units*: the head (from the FDE to the first GTID event) and one unit per GTID event, up to
the next. A GTID event resets everything the stages after the reader carry from the events
before it (the transaction tracker; what --start-position holds), so a unit read alone is seen
exactly as it is in the whole file. The plan reads

* the magic and the head;
* every earlier unit that holds something the run needs: a control event (kept before the
  position, as mysqlbinlog does), a QUERY event that may be DDL (the schema replays it), the QUERY
  events after an FDE up to the first whose body parses (the server's collation, observe_schema),
  a compressed event or a TRANSACTION_PAYLOAD (their reading can fail past the framing, and a
  payload's inner events are seen as the schema sees them);
* the unit of the last GTID event at or before the position, and everything after it.

Every event is read at its real position (`pieces.Split.before`, `SplitReader`), so the schema,
the position filter (stream.filters) and the writers see what they see when every event is read,
and print the same. What is never read: the bodies of the events stepped over, so a malformed body
there is not reported (as mysqlbinlog, which seeks, does not).

The whole file is read instead (`plan` returns None) from standard input, a gzip file or anything
that is not a regular file, in --strict runs (every body is checked), when no GTID event lies at
or before the position (older servers), when a START_ENCRYPTION_EVENT is met, or when a
TRANSACTION_PAYLOAD lies before the position (MySQL's compressed transactions). Setting
BINLOG_SPEC_NO_SEEK=1 in the environment reads the whole file always (tests, benchmarks).
"""
from __future__ import annotations

import dataclasses
import os
from typing import Iterator

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import CONTROL_EVENTS
from binlog_spec.binlog.reader import GZIP_MAGIC, BinlogReader, display_name, read_events
from binlog_spec.binlog.replay import with_replay
from binlog_spec.errors import BinlogError
from binlog_spec.options import DEFAULT_OPTIONS, ReadOptions
from binlog_spec.rows.statement_text import NOT_DDL
from binlog_spec.stream.planning.pieces import FDE, GTID_CODES, QUERY_CODES, LocalFile, Split, read_piece
from binlog_spec.stream.planning.scan import query_prefix

ET = spec.EventType
START_ENCRYPTION = int(ET.start_encryption_event)
TRANSACTION_PAYLOAD = int(ET.transaction_payload_event)
CONTROL_CODES = frozenset(map(int, CONTROL_EVENTS))
#: Events whose reading can fail past the framing: decompression (MariaDB's compressed events).
COMPRESSED_CODES = frozenset(int(t) for t in ET if "compressed" in t.name)
#: The events the planning pass is told of (the others are stepped over, counted).
_REPORTED = GTID_CODES | CONTROL_CODES | frozenset(QUERY_CODES) | COMPRESSED_CODES | {TRANSACTION_PAYLOAD}
#: The planning pass's read size: large sequential reads, a small peak of memory.
CHUNK = 1 << 20
#: The environment variable that turns the seek off.
NO_SEEK = "BINLOG_SPEC_NO_SEEK"


@dataclasses.dataclass
class Plan:
    """What `plan` found: the split to read, and the figures of the header pass."""

    split: Split
    #: The position reading resumes at: the last GTID event at or before the start position.
    resume: int
    #: Events the header pass stepped over (headers only, and the CRC32 where checks are on).
    scanned: int


def seekable(path: str) -> bool:
    """A regular file that is not gzip: its byte ranges can be read directly."""
    if path == "-" or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as f:
            return f.read(2) != GZIP_MAGIC
    except OSError:
        return False


#: The last plan made, by what it was made of (the file as `os.stat` sees it): a run and its pre-pass plan once.
_last: list = [None, None]


def plan(path: str, start: int, options: ReadOptions = DEFAULT_OPTIONS) -> Plan | None:
    """The byte ranges to read for --start-position `start` in the file at `path` (see the module
    doc), or None: read the whole file."""
    if options.strict or not seekable(path):
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (os.path.abspath(path), start, options.verify_checksums, st.st_ino, st.st_size, st.st_mtime_ns)
    if _last[0] != key:
        _last[:] = [key, _plan(path, start, options)]
    return _last[1]


def _plan(path: str, start: int, options: ReadOptions) -> Plan | None:
    ref = LocalFile.of(path, display_name(path))
    reader = BinlogReader(ref.name, options, opener=lambda: (ref.open(), ref.size))
    wanted: list[tuple[int, int]] = []      # the needed units before `resume`
    unit, needed = spec.LEN_MAGIC, True     # the head is always read (the FDE, the control events)
    resume: int | None = None
    after_fde = False                       # an FDE's first QUERY that parses is not seen yet
    try:
        # of GTIDs with nothing else reported between them, the first closes a needed unit and the
        # last opens the next one: those in between are stepped over in the framing loop
        for pos, code, _size, ev in reader.scan(frozenset(QUERY_CODES), _REPORTED, CHUNK, GTID_CODES, start):
            if code == START_ENCRYPTION:
                return None                 # the reader's message names positions: read it as it is
            if pos > start:
                continue                    # on to the end: a START_ENCRYPTION_EVENT stops the seek
            if code in GTID_CODES:
                if needed:
                    _add(wanted, unit, pos)
                unit, needed, resume = pos, False, pos
            elif code in CONTROL_CODES:
                needed = True
                after_fde = after_fde or code == FDE
            elif code in QUERY_CODES:
                if after_fde:
                    needed = True
                    after_fde = not _parses(ev, reader.format_description)
                elif code != QUERY_CODES[0] or _may_be_ddl(ev, reader.format_description):
                    needed = True
            elif code == TRANSACTION_PAYLOAD:
                return None
            else:
                needed = True               # a compressed event
    except BinlogError:
        pass                                # the fault lies in what is read from `resume` on
    except OSError:
        return None                         # reading the whole file meets it as it did
    if resume is None:
        return None
    before = ((0, spec.LEN_MAGIC), *wanted)
    return Plan(Split(0, ref, resume, None, before=before), resume, reader.scanned)


def _boundary(path, resume: int, start: int) -> int:
    """The position of the first event at or after `start`, stepping over the headers from `resume` (an event's
    position); `start` where they do not read (the reader meets that as it did)."""
    pos = resume
    try:
        with open(path, "rb") as f:
            while pos < start:
                f.seek(pos)
                head = f.read(spec.LEN_EVENT_HEADER)
                if len(head) < spec.LEN_EVENT_HEADER:
                    return start
                size = spec.parse_header(head).len_event
                if size < spec.LEN_EVENT_HEADER:
                    return start
                pos += size
    except (OSError, spec.SpecError):
        return start
    return pos


def _add(ranges: list[tuple[int, int]], start: int, end: int) -> None:
    """Add [start, end) to the ranges, merged with the last one when they touch."""
    if ranges and sum(ranges[-1]) == start:
        ranges[-1] = (ranges[-1][0], end - ranges[-1][0])
    else:
        ranges.append((start, end - start))


def _may_be_ddl(ev: memoryview, fde: spec.FormatDescription) -> bool:
    prefix = query_prefix(ev, fde)
    return prefix is None or not prefix.startswith(NOT_DDL)


def _parses(ev: memoryview, fde: spec.FormatDescription) -> bool:
    """Whether reading gives the event a body (not a MalformedEventError): the reader's own parse."""
    try:
        spec.parse_event(bytes(ev), fde)
    except spec.SpecError:
        return False
    return True


def read_from_position(paths: list[str], options: ReadOptions = DEFAULT_OPTIONS,
                       faults: list[BinlogError] | None = None, start: int | None = None,
                       sink=None) -> Iterator[Event]:
    """reader.read_events, the first file read from --start-position `start` by `plan` when it can be:
    what the position filter then keeps is what it keeps of every event (see the module doc). `sink`: a
    compiled lane that may take the events after the position alone (the position filter, its only filter, keeps
    all of them): it takes nothing up to the first event at or after `start`, which the filter reads (it checks
    the position there, and finds the transaction the position falls in), nor of a file read whole. A sink that
    cannot be placed in a piece (`place`) is not given the events."""
    if not hasattr(sink, "place"):
        sink = None
    found = None
    if start is not None and paths and os.environ.get(NO_SEEK, "") in ("", "0"):
        found = plan(os.fspath(paths[0]), start, options)
    if found is None:
        yield from read_events(paths, options, faults)
        return
    events = read_piece(found.split, options, sink, None if sink is None else _boundary(paths[0], found.resume,
                                                                                           start) + 1)
    if getattr(sink, "replay", None) is not None:
        events = with_replay(events, sink)
    try:
        yield from events
    except BinlogError as exc:
        if faults is None:
            raise
        faults.append(exc)
    if sink is not None:
        sink.place(0, 0)
    yield from read_events(paths[1:], options, faults, sink)
