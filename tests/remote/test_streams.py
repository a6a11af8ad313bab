"""remote.streams turns a dump's events into each log's bytes for the reader. Fed here by a dump made of a real
binlog's events, sent as a server sends them (the fake ROTATE first, the FORMAT_DESCRIPTION sent again with
log_pos 0 in front of a start past the head of the log, heartbeats): the reader gives each event as soon as
the dump has sent it (it never asks for the next one first), and a start past the head keeps the file's
positions."""
from __future__ import annotations

import struct

from conftest import CORPUS

import binlog_spec
from binlog_spec.binlog import spec
from binlog_spec.remote import streams
from binlog_spec.remote.dump import RemoteEvent

LOG = CORPUS / "mariadb-mysql-cdc" / "mysql-bin.000001"
ROTATE, FDE, HEARTBEAT = 4, 15, 27
ARTIFICIAL_F = 0x20


def file_events(path=LOG):
    with binlog_spec.open(path) as reader:
        return [(ev.pos, ev.raw) for ev in reader]


def header(code: int, size: int, log_pos: int, flags: int) -> bytes:
    return struct.pack("<IBIIIH", 0, code, 1, size, log_pos, flags)


def fake_rotate(log: str) -> RemoteEvent:
    body = struct.pack("<Q", 4) + log.encode()
    data = header(ROTATE, 19 + len(body), 0, ARTIFICIAL_F) + body
    return RemoteEvent(log, data, ROTATE, 0, True, False)


def heartbeat(log: str) -> RemoteEvent:
    return RemoteEvent(log, header(HEARTBEAT, 19, 0, 0), HEARTBEAT, 0, True, True)


def dump_of(events, log: str, start: int = 4, pulled: list | None = None):
    """A server's dump of `events` (position, bytes) from `start`: what it sends, counted in `pulled`."""
    yield fake_rotate(log)
    fde = events[0][1]
    if start > 4:   # sent again with log_pos 0, its CRC32 made again (as the server does)
        resent = fde[:13] + b"\0\0\0\0" + fde[17:]
        resent = resent[:-4] + spec.event_crc32(resent, True).to_bytes(4, "little")
        yield RemoteEvent(log, resent, FDE, 0, True, False)
    for pos, raw in events:
        if pos < start and pos != 4 or (start > 4 and pos == 4):
            continue
        if pulled is not None:
            pulled.append(pos)
        yield heartbeat(log)
        yield RemoteEvent(log, raw, raw[4], pos + len(raw), False, False)


def read(dump, options=binlog_spec.ReadOptions()):
    feed = streams._Feed(iter(dump), streams._Stop())
    head = feed.next()
    feed.put_back(head)
    stream = streams.LogStream(feed, head.log, None)
    reader = binlog_spec.binlog.reader.BinlogReader(head.log, options, opener=lambda: (stream, None))
    return streams._placed(reader, stream)


def test_each_event_is_given_before_the_next_is_asked_of_the_server():
    events = file_events()
    pulled: list[int] = []
    seen = []
    for ev in read(dump_of(events, "mysql-bin.000001", pulled=pulled)):
        if ev.is_inner:
            continue
        seen.append(ev.pos)
        assert pulled[-1] == ev.pos     # the reader gave it without waiting for one more from the server
    assert seen == [pos for pos, _ in events]


def test_a_read_of_the_stream_returns_one_event_not_a_full_buffer():
    events = file_events()
    feed = streams._Feed(iter(dump_of(events, "mysql-bin.000001")), streams._Stop())
    stream = streams.LogStream(feed, "mysql-bin.000001", None)
    assert stream.read(1 << 20) == spec.MAGIC
    assert stream.read(1 << 20) == events[0][1]
    assert stream.read(1 << 20) == events[1][1]


def test_a_start_past_the_head_of_the_log_keeps_the_files_positions():
    events = file_events()
    start = events[len(events) // 2][0]
    got = [(ev.pos, ev.raw) for ev in read(dump_of(events, "mysql-bin.000001", start)) if not ev.is_inner]
    want = [(pos, raw) for pos, raw in events if pos >= start]
    assert got[1:] == want and got[0][0] == 4 and got[0][1][4] == FDE


def test_the_log_ends_where_the_run_found_it_ended():
    events = file_events()
    end = events[5][0] + len(events[5][1])
    feed = streams._Feed(iter(dump_of(events, "mysql-bin.000001")), streams._Stop())
    stream = streams.LogStream(feed, "mysql-bin.000001", end)
    reader = binlog_spec.binlog.reader.BinlogReader("mysql-bin.000001", opener=lambda: (stream, None))
    assert [ev.pos for ev in reader if not ev.is_inner] == [pos for pos, _ in events[:6]]
    assert stream.reached_end


class _Conn:
    """A connection to a server of `flavor` that lists one log (what remote_logs and a dump ask of it)."""

    def __init__(self, flavor: str):
        self.flavor = flavor

    def binary_logs(self):
        return [("mysql-bin.000001", LOG.stat().st_size)]

    def idle(self) -> bool:
        return True

    def close(self) -> None:
        pass


def test_a_mysql_server_is_asked_to_skip_the_excluded_gtids_and_a_mariadb_one_is_not(monkeypatch):
    from binlog_spec.binlog.gtid import GtidSet
    excluded = GtidSet.parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5")
    asked = []

    def dump_events(conn, log, position, *, blocking, gtid_start=None, exclude_gtids=None):
        asked.append((conn.flavor, log, position, blocking, exclude_gtids))
        return iter(dump_of(file_events(), log))
    for flavor in ("mysql", "mariadb"):
        monkeypatch.setattr(streams.connection, "connect", lambda opts, f=flavor: _Conn(f))
        monkeypatch.setattr(streams.dump, "dump_events", dump_events)
        run = streams.remote_logs(None, ["mysql-bin.000001"], exclude_gtids=excluded)
        assert [ev.pos for ev in run.events() if not ev.is_inner] == [pos for pos, _ in file_events()]
    assert asked == [("mysql", "mysql-bin.000001", 4, False, excluded), ("mariadb", "mysql-bin.000001", 4, False, None)]
