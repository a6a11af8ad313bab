"""A server's binlogs as the reader's input: what `events -R`, `rows -R`, `sql -R` and `analyze -R` read.

One dump (remote.dump.dump_events) runs over the logs of a run; each log is read by a
BinlogReader(log name, opener=...) whose stream (`LogStream`) is the log's bytes as in its file: the magic,
then the events the dump sends, the artificial ones dropped (the fake ROTATE and GTID_LIST, heartbeats, the
FORMAT_DESCRIPTION the server sends again). A read of the stream returns as soon as one event is there: the
reader's window never waits for a buffer to fill from the socket (the latency of --stop-never).

Where the dump starts past the head of a log (a MariaDB GTID start: the server picks the log and position),
the log's stream is its magic, the FORMAT_DESCRIPTION the server sent in front (its log_pos set to 0 by the
server), then the events from the position: events and errors keep the file's positions (`_placed`).
A --start-position in bytes and a --start-datetime start the dump at the head of the log they fall in (the
datetime's log found by remote.logs.log_heads): the filters then keep what they keep of the files, and the
schema sees the DDL before the position in that log, as reading the file does (stream.planning.seek).

What a run reads is fixed when it starts (`RemoteLogs`, from SHOW BINARY LOGS): the logs and the end of the
last one, so that the passes that read the input twice (sql's pre-pass, a rollback's conflict check) read
the server again and get the same bytes. With --stop-never the last log has no end: the dump blocks and
follows the server until SIGINT or SIGTERM, after which the run ends at the next event or heartbeat, as if
the input ended there (a second signal stops it at once: KeyboardInterrupt).
"""
from __future__ import annotations

import bisect
import contextlib
import io
import signal
import threading
from datetime import datetime
from typing import Iterator

from binlog_spec.binlog import spec
from binlog_spec.binlog.reader import BinlogReader
from binlog_spec.binlog.replay import with_replay
from binlog_spec.errors import BinlogError
from binlog_spec.options import DEFAULT_OPTIONS, ConnectOptions, ReadOptions
from binlog_spec.remote import connection, dump, logs

FDE = int(spec.EventType.format_description_event)


class RemoteLogs(list):
    """The logs a run reads from a server, by name (a list of str: what the filters and the messages call
    the run's files), with what reads them (`events`). `ends`: each log's size when the run began (SHOW
    BINARY LOGS): the last log is read up to it (none with --stop-never). `ranges`: (first log, start
    position, gtid_start, through the last): one dump each."""

    remote = True
    #: Called before a read that may wait for the server (_Feed): the CLI flushes --stop-never's output there.
    on_wait = None

    def __init__(self, names, opts: ConnectOptions, ranges: list, ends: dict[str, int], stop_never: bool = False,
                 exclude_gtids=None):
        super().__init__(names)
        self.opts, self.ranges, self.ends, self.stop_never = opts, ranges, ends, stop_never
        #: The GTIDs a MySQL server is asked to skip (remote_logs).
        self.exclude_gtids = exclude_gtids

    def events(self, options: ReadOptions = DEFAULT_OPTIONS, faults: list | None = None, sink=None) -> Iterator:
        """The events of the logs, as reader.read_events gives those of their files (`faults`, `sink`: its).
        With --stop-never no sink is used (a compiled lane writes what it takes in blocks: a row printed late)."""
        if self.stop_never:
            sink = None
        with _stopping(self.stop_never) as stop:
            for first, position, gtid, through in self.ranges:
                yield from _read_range(self, first, position, gtid, through, options, faults, sink, stop)
                if stop.is_set():
                    return


def remote_logs(opts: ConnectOptions, names=(), *, to_last_log: bool = False, stop_never: bool = False,
                start_datetime: datetime | None = None, gtid_start: str | None = None,
                exclude_gtids=None) -> RemoteLogs:
    """What a run reads from the server (see the module doc): the logs `names` (each alone), or, with
    `to_last_log` (implied by `stop_never`, `gtid_start` and no name), the first of them and every later one.
    No name: from the server's oldest log, or the one `start_datetime` falls in (the last begun before it).
    `exclude_gtids` (a GtidSet): a MySQL server is asked to skip them (COM_BINLOG_DUMP_GTID; the filters drop
    them too, so the output is the same either way)."""
    names = list(names)
    conn = connection.connect(opts)
    try:
        listed = conn.binary_logs()
        heads = logs.log_heads(conn) if start_datetime is not None and not names and not gtid_start else None
    finally:
        conn.close()
    order = [name for name, _size in listed]
    ends = {name: size for name, size in listed}
    if stop_never and order:
        ends.pop(order[-1], None)       # the newest log is followed, not read to an end
    through = to_last_log or stop_never or bool(gtid_start) or not names

    def run(names, ranges) -> RemoteLogs:
        return RemoteLogs(names, opts, ranges, ends, stop_never, exclude_gtids)
    if gtid_start:
        return run(order, [(names[0] if names else "", 4, gtid_start, True)])
    if not names:
        first = order[0] if order else ""
        if heads:
            stamp = start_datetime.timestamp()
            # the last log begun before that second: one begun in it may follow events of it in the log before
            before = [h.name for h in heads if h.first_time is not None and _seconds(h.first_time) < stamp]
            first = before[-1] if before else heads[0].name
        names = [first]
    if through:
        return run(order[order.index(names[0]):] if names[0] in order else names[:1], [(names[0], 4, None, True)])
    return run(names, [(name, 4, None, False) for name in names])


def _seconds(value) -> float:
    return value.timestamp() if isinstance(value, datetime) else float(value)


# ------------------------------------------------------------------------------------------------ the stop
class _Stop:
    """--stop-never's end: set by the first SIGINT or SIGTERM (the next event or heartbeat ends the run)."""

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def is_set(self) -> bool:
        return self._set


@contextlib.contextmanager
def _stopping(active: bool) -> Iterator[_Stop]:
    """A _Stop that SIGINT and SIGTERM set while the block runs (with `active`, in the main thread); a
    second signal raises KeyboardInterrupt. The handlers before are put back at the end."""
    stop = _Stop()
    if not active or threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
    saved = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stop
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)


# ------------------------------------------------------------------------------------------------ the feed
class _Feed:
    """The dump's events, one at a time, with one put back (the first of the next log). `on_wait()` is called
    before a read that may wait for the server (`conn.idle()`): --stop-never's output flushed there, so that
    what was printed is out before the wait, and a burst of events is written in large writes."""

    def __init__(self, events: Iterator, stop: _Stop, conn=None, on_wait=None):
        self._events, self._stop, self._back = events, stop, None
        self._conn, self._on_wait = conn, on_wait
        self.ended = False

    def next(self):
        """The next event that is no heartbeat, or None when the dump ended or the run was stopped."""
        if self._back is not None:
            ev, self._back = self._back, None
            return ev
        while not self.ended:
            if self._stop.is_set():
                self.ended = True
                break
            if self._on_wait is not None and self._conn.idle():
                self._on_wait()
            ev = next(self._events, None)
            if ev is None:
                self.ended = True
            elif not ev.heartbeat:
                return ev
        return None

    def put_back(self, ev) -> None:
        self._back = ev


class LogStream(io.RawIOBase):
    """One log's bytes as its file holds them (the reader's stream): the magic, then each event of the dump
    that lies in the log, given as it comes (a read returns the bytes of one event at most, the ones held).
    Ends at the first event of another log, at `end` (the log's size when the run began), or with the dump.
    `gaps`: where the events resume past events the server did not send (its start past the head of the log)."""

    def __init__(self, feed: _Feed, log: str, end: int | None):
        super().__init__()
        self.feed, self.log, self.end = feed, log, end
        self._held, self._given = spec.MAGIC, 0
        #: The bytes pulled from the dump so far, the magic included.
        self._pulled = spec.LEN_MAGIC
        self._fde: bytes | None = None      # the FORMAT_DESCRIPTION the server sent in front of a start past 4
        #: (position in the stream, file position) where the events resume past events the server stepped over.
        self.gaps: list[tuple[int, int]] = []
        self.reached_end = False            # the log's end was reached (not another log's first event)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def read(self, n: int = -1) -> bytes:
        """The bytes held (an event's), up to `n`; when none are held, those of the next event of the log
        (blocking until it comes); b"" at the log's end."""
        while not self._held and not self.reached_end:
            self._held = self._pull()
            if self._held is None:
                self._held = b""
                break
        held = self._held
        if 0 <= n < len(held):
            data, self._held = held[:n], held[n:]
        else:
            data, self._held = held, b""
        self._given += len(data)
        return data

    def readinto(self, b) -> int:
        data = self.read(len(b))
        b[:len(data)] = data
        return len(data)

    def close(self) -> None:        # (the dump goes on for the next log)
        super().close()

    def _pull(self) -> bytes | None:
        """The bytes of the next event of this log (b"" for an artificial one), None at the log's end."""
        ev = self.feed.next()
        if ev is None:
            return None
        if ev.log != self.log:
            self.feed.put_back(ev)
            return None
        if ev.artificial:
            if ev.type_code == FDE and self._pulled == spec.LEN_MAGIC and self._fde is None:
                self._fde = ev.data         # the log's FDE, sent again in front of a start past 4
            return b""
        data, pos = ev.data, ev.position
        if self._fde is not None and ev.type_code != FDE:
            data, self._fde = self._fde + data, None
        virtual = self._pulled + len(data) - len(ev.data)      # where the event lies in the stream
        if pos != self.real(virtual):   # the server stepped over events (a start past them)
            self.gaps.append((virtual, pos))
        self._pulled += len(data)
        if self.end is not None and ev.position + len(ev.data) >= self.end:
            self.reached_end = True
        return data

    def real(self, virtual: int | None) -> int | None:
        """A position of the stream -> the file's."""
        if virtual is None or not self.gaps or virtual < self.gaps[0][0]:
            return virtual
        v0, p0 = self.gaps[bisect.bisect_right(self.gaps, (virtual, float("inf"))) - 1]
        return p0 + virtual - v0


def _placed(events, stream: LogStream) -> Iterator:
    """The reader's events at their file positions (past the events the server stepped over)."""
    for ev in events:
        if stream.gaps and ev.pos >= stream.gaps[0][0]:
            ev.pos = stream.real(ev.pos)
            if ev.payload_pos is not None:
                ev.payload_pos = ev.pos
        yield ev


def _read_range(run: RemoteLogs, first: str, position: int, gtid: str | None, through: bool,
                options: ReadOptions, faults: list | None, sink, stop: _Stop) -> Iterator:
    """The events of one dump: from `first` at `position` (or after the GTID position `gtid`), the log
    `first` alone or, with `through`, every later one up to the end of the last (none: --stop-never)."""
    if gtid is not None:
        sink = None     # (the server picks where it starts: a sink would write the stream's positions)
    conn = connection.connect(run.opts)
    events = dump.dump_events(conn, first, position, blocking=run.stop_never, gtid_start=gtid,
                              exclude_gtids=run.exclude_gtids if conn.flavor == "mysql" else None)
    feed = _Feed(events, stop, conn, run.on_wait)
    try:
        while True:
            head = feed.next()
            if head is None or (not through and head.log != first):
                return
            feed.put_back(head)
            stream = LogStream(feed, head.log, run.ends.get(head.log))
            reader = BinlogReader(head.log, options, opener=lambda s=stream: (s, None), sink=sink)
            events_of = reader if getattr(sink, "replay", None) is None else with_replay(reader, sink)
            try:
                yield from _placed(events_of, stream)
            except BinlogError as exc:
                exc.offset = stream.real(exc.offset)
                if faults is None:
                    raise
                faults.append(exc)
                while stream.readinto(bytearray(1 << 16)):     # on to the next log
                    pass
            finally:
                reader.close()
            if not through or (stream.reached_end and head.log == _last(run)):
                return
    finally:
        events.close()
        conn.close()


def _last(run: RemoteLogs) -> str | None:
    return run[-1] if len(run) else None


__all__ = ["RemoteLogs", "remote_logs", "LogStream"]
