"""A dump over the replication protocol gives the server's binlog files byte for byte (its events after
the magic), across rotates, with what only the protocol has marked artificial: checked against the real
MariaDB's own files."""
from __future__ import annotations

import threading
import time

import pytest

from remote_server import (FDE_FLAGS_AT, MAGIC, available, closed, connect_options, dumped_logs,
                           replication_server, server_logs)

from binlog_spec import api

pytestmark = pytest.mark.skipif(not available(), reason="needs Debian's mariadb-server")

ROTATE, FDE, HEARTBEAT = 4, 15, 27

WORKLOAD = """
CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(200), b BLOB);
INSERT INTO d.t VALUES (1, 'one', REPEAT('x', 5000)), (2, 'two', NULL);
FLUSH BINARY LOGS;
BEGIN; UPDATE d.t SET v = 'uno' WHERE id = 1; DELETE FROM d.t WHERE id = 2; COMMIT;
ALTER TABLE d.t ADD COLUMN c INT;
FLUSH BINARY LOGS;
INSERT INTO d.t VALUES (3, 'three', NULL, 7);
"""


def positions(events) -> list[tuple[str, int, int]]:
    """(log, start, end) of each event that is in a log."""
    return [(e.log, e.log_pos - len(e.data), e.log_pos) for e in events if not e.artificial]


@pytest.mark.parametrize("checksum", ["CRC32", "NONE"])
def test_non_artificial_events_are_the_server_files_byte_for_byte(checksum):
    with replication_server([f"--binlog-checksum={checksum}"]) as srv:
        srv.sql(WORKLOAD)
        files = server_logs(srv)
        with api.connect(connect_options(srv)) as conn:
            assert conn.flavor == "mariadb"
            assert [name for name, _ in conn.binary_logs()] == list(files)
            events = list(api.dump_events(conn, next(iter(files)), 4, blocking=False))
    got = dumped_logs(events)
    assert list(got) == list(files) and len(files) == 3
    *done, last = files
    for name in done:
        assert got[name] == files[name], name
    # The log the server still writes has LOG_EVENT_BINLOG_IN_USE_F in its FDE; the server sends it cleared.
    assert files[last][FDE_FLAGS_AT] & 1 and not got[last][FDE_FLAGS_AT] & 1
    assert got[last] == closed(files[last])
    # Each event sits where the file has it: positions follow one another from 4 in every log.
    for name in files:
        spans = [(start, end) for log, start, end in positions(events) if log == name]
        assert spans[0][0] == len(MAGIC) and spans[-1][1] == len(files[name])
        assert all(a[1] == b[0] for a, b in zip(spans, spans[1:]))


def test_artificial_events_are_the_fake_rotates_only_from_the_start():
    with replication_server() as srv:
        srv.sql(WORKLOAD)
        names = list(server_logs(srv))
        with api.connect(connect_options(srv)) as conn:
            events = list(api.dump_events(conn, names[0], 4, blocking=False))
    fake = [e for e in events if e.artificial]
    assert [(e.type_code, e.log, e.log_pos, e.heartbeat) for e in fake] == [(ROTATE, n, 0, False) for n in names]
    assert events[0].artificial and events[0].log == names[0]
    # The real ROTATE ending a log is in that log; the fake one after it names the next.
    real_rotates = [(i, e) for i, e in enumerate(events) if e.type_code == ROTATE and not e.artificial]
    assert [e.log for _, e in real_rotates] == names[:-1]
    assert [events[i + 1].log for i, _ in real_rotates] == names[1:]
    assert all(events[i + 1].artificial for i, _ in real_rotates)


def test_a_dump_past_the_first_event_resends_the_fde_with_log_pos_0_then_the_file_from_there():
    with replication_server() as srv:
        srv.sql(WORKLOAD)
        files = server_logs(srv)
        first = next(iter(files))
        with api.connect(connect_options(srv)) as conn:
            whole = list(api.dump_events(conn, first, 4, blocking=False))
        start = positions(whole)[3][1]      # the fourth event of the first log
        with api.connect(connect_options(srv)) as conn:
            events = list(api.dump_events(conn, first, start, blocking=False))
    assert [(e.type_code, e.artificial, e.log_pos) for e in events[:2]] == [(ROTATE, True, 0), (FDE, True, 0)]
    got = dumped_logs(events)
    assert got[first] == MAGIC + files[first][start:]
    assert events[2].log_pos - len(events[2].data) == start


def test_a_blocking_dump_waits_for_new_events_and_sends_heartbeats_meanwhile():
    with replication_server() as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY)")
        name, before = list(server_logs(srv).items())[-1]
        seen = []
        with api.connect(connect_options(srv, heartbeat_s=0.2)) as conn:
            timer = threading.Timer(1.5, srv.sql, ["INSERT INTO d.t VALUES (42)"])
            started = time.monotonic()
            timer.start()
            try:
                for ev in api.dump_events(conn, name, 4, blocking=True):
                    seen.append(ev)
                    if ev.type_code == 16:          # XID_EVENT: the insert's commit
                        break
                    assert time.monotonic() - started < 30, "the insert never came"
            finally:
                timer.cancel()
        files = server_logs(srv)
    beats = [e for e in seen if e.heartbeat]
    assert len(beats) >= 3 and all(e.artificial and e.type_code == HEARTBEAT and e.log == name for e in beats)
    # Heartbeats came while the server had nothing to send: between what the log held and the insert.
    first_beat, last_beat = seen.index(beats[0]), seen.index(beats[-1])
    assert [e.log_pos for e in seen[:first_beat] if not e.artificial][-1] == len(before)
    assert all(e.log_pos > len(before) for e in seen[last_beat:] if not e.artificial)
    assert dumped_logs(seen)[name] == closed(files[name])


def test_a_mariadb_gtid_start_sends_the_transactions_after_it_each_where_the_file_has_it():
    with replication_server() as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY)")
        for i in range(1, 7):
            srv.sql(f"INSERT INTO d.t VALUES ({i})" + ("; FLUSH BINARY LOGS" if i in (2, 4) else ""))
        state = srv.sql("SELECT @@gtid_binlog_pos").strip()   # the user (2), the DDL (2), then six inserts
        files = server_logs(srv)
        with api.connect(connect_options(srv)) as conn:
            events = list(api.dump_events(conn, "", 4, blocking=False, gtid_start="0-1-7"))
    assert state == "0-1-10"
    gtids = [f"0-1-{int.from_bytes(e.data[19:27], 'little')}" for e in events if e.type_code == 162]
    assert gtids == ["0-1-8", "0-1-9", "0-1-10"]
    # What comes is the logs' own bytes, each event where its log has it (a jump to the first transaction
    # after the start, announced by an artificial GTID_LIST whose log_pos is where that transaction starts).
    for e in events:
        if not e.artificial:
            assert closed(files[e.log])[e.position:e.log_pos] == e.data
    fake_list = [e for e in events if e.artificial and e.type_code == 163]
    assert len(fake_list) == 1
    after = events[events.index(fake_list[0]) + 1]
    assert after.position == fake_list[0].log_pos


def test_an_event_past_16_mib_comes_whole_across_packets():
    """An event of more than 16 MiB - 1 bytes comes in several protocol packets (the first with the status
    byte): it is joined into one event, byte for byte."""
    with replication_server() as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, b LONGBLOB)")
        srv.sql("INSERT INTO d.t VALUES (1, REPEAT('x', 20 * 1024 * 1024))")
        name, data = list(server_logs(srv).items())[-1]
        with api.connect(connect_options(srv)) as conn:
            events = list(api.dump_events(conn, name, 4, blocking=False))
    assert max(len(e.data) for e in events) > 20 * 1024 * 1024
    assert dumped_logs(events)[name] == closed(data)
