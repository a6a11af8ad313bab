"""dump_events over scripted packets: MySQL's flavour (which no server here can serve) with the events of
real MySQL binlog files as a MySQL server sends them, the commands it is sent, and packets that are no
replication packets, each one RemoteError line."""
from __future__ import annotations

import struct
import zlib

import pytest

from conftest import CORPUS

from binlog_spec.binlog.gtid import GtidSet
from binlog_spec.errors import GtidSetError, RemoteError
from binlog_spec.options import ConnectOptions
from binlog_spec.remote import protocol
from binlog_spec.remote.dump import dump_events


class ScriptedConnection:
    """What dump_events uses of a Connection, answering with `packets` (payloads, status byte first)."""

    def __init__(self, packets, flavor="mysql", checksum=b"CRC32"):
        self.flavor = flavor
        self.checksum = checksum
        self.server = "scripted:3306"
        self.options = ConnectOptions(heartbeat_s=1.0)
        self.packets = list(packets)
        self.queries, self.commands = [], []

    def query(self, sql):
        self.queries.append(sql)
        return [(self.checksum,)] if sql.startswith("SELECT @master_binlog_checksum") else []

    def command(self, payload):
        self.commands.append(payload)

    def ok(self):
        pass

    def set_read_timeout(self, seconds):
        self.timeout = seconds

    def read_packet(self):
        return self.packets.pop(0)


def events_of(path) -> list[bytes]:
    """The events of a binlog file, each its bytes (the file's framing: event_size at offset 9)."""
    data = path.read_bytes()
    out, pos = [], 4
    while pos + 19 <= len(data):
        size = struct.unpack_from("<I", data, pos + 9)[0]
        out.append(data[pos:pos + size])
        pos += size
    return out


def fake_rotate(name: str, position: int = 4) -> bytes:
    """A fake ROTATE_EVENT as Binlog_sender::fake_rotate_event builds it (log_pos 0, LOG_EVENT_ARTIFICIAL_F,
    CRC32 when checksums are on)."""
    body = struct.pack("<Q", position) + name.encode()
    header = protocol.EVENT_HEADER.pack(0, protocol.ROTATE_EVENT, 1, 19 + len(body) + 4, 0,
                                        protocol.LOG_EVENT_ARTIFICIAL_F)
    event = header + body
    return event + struct.pack("<I", zlib.crc32(event))


MYSQL_FILE = "rust_mysql_common/binlog_transaction_with_GTID_TAG.000001"     # MySQL 9.6.0, CRC32


def test_a_mysql_dump_gives_the_file_back_and_asks_with_com_binlog_dump_gtid():
    path = CORPUS / MYSQL_FILE
    name = path.name
    packets = [b"\x00" + fake_rotate(name)] + [b"\x00" + e for e in events_of(path)] + [b"\xfe\x00\x00\x02\x00"]
    conn = ScriptedConnection(packets)
    sid = "55778904-0299-11f1-b1b8-4ef0c4956feb"
    got = list(dump_events(conn, name, 4, blocking=False, server_id=99, exclude_gtids=f"{sid}:mytag:1-2"))
    assert b"\xfebin" + b"".join(e.data for e in got if not e.artificial) == path.read_bytes()
    assert [e.log for e in got] == [name] * len(got) and got[0].artificial and not any(e.artificial for e in got[1:])
    assert conn.queries[0] == "SET @master_binlog_checksum = @@global.binlog_checksum"
    assert "SET @master_heartbeat_period = 1000000000" in conn.queries
    assert not [q for q in conn.queries if "mariadb" in q or "slave_connect_state" in q]
    register, dump = conn.commands
    assert register == protocol.register_slave(99)
    assert dump == protocol.binlog_dump_gtid(name, 4, 99, GtidSet.parse(f"{sid}:mytag:1-2"), non_block=True)
    assert conn.timeout == 10.0


def test_heartbeats_of_both_versions_are_artificial_heartbeats():
    beat1 = protocol.EVENT_HEADER.pack(0, protocol.HEARTBEAT_LOG_EVENT, 1, 19 + 8, 1234, 0) + b"b.000001"
    beat2 = protocol.EVENT_HEADER.pack(0, protocol.HEARTBEAT_LOG_EVENT_V2, 1, 19 + 12, 1234, 0) + b"\x01" * 12
    conn = ScriptedConnection([b"\x00" + fake_rotate("b.000001"), b"\x00" + beat1, b"\x00" + beat2,
                               b"\xfe\x00\x00\x02\x00"])
    got = list(dump_events(conn, "b.000001", 4, blocking=False))
    assert [(e.heartbeat, e.artificial) for e in got] == [(False, True), (True, True), (True, True)]


@pytest.mark.parametrize("packet, says", [
    (b"\x01abc", "not a replication packet"),
    (b"\x00" + b"\x00" * 10, "shorter than its header"),
])
def test_a_packet_that_is_no_event_is_one_remote_error(packet, says):
    conn = ScriptedConnection([b"\x00" + fake_rotate("b.000001"), packet])
    with pytest.raises(RemoteError) as caught:
        list(dump_events(conn, "b.000001", 4, blocking=False))
    assert says in str(caught.value) and str(caught.value).startswith("scripted:3306: b.000001 position 4: ")


def test_a_mariadb_gtid_start_is_checked_before_it_is_quoted_into_sql():
    conn = ScriptedConnection([], flavor="mariadb")
    with pytest.raises(GtidSetError):
        next(dump_events(conn, "", 4, blocking=False, gtid_start="0-1-5'; DROP TABLE t; --"))
    assert not conn.commands and not [q for q in conn.queries if "slave_connect_state" in q]


def test_without_checksums_the_fake_rotate_names_its_log_whole():
    """The fake ROTATE comes before any FORMAT_DESCRIPTION: whether it ends with a CRC32 is what the server
    said of @master_binlog_checksum (here NONE, as binary: a user variable's type)."""
    body = struct.pack("<Q", 4) + b"b.000007"
    rotate = protocol.EVENT_HEADER.pack(0, protocol.ROTATE_EVENT, 1, 19 + len(body), 0,
                                        protocol.LOG_EVENT_ARTIFICIAL_F) + body
    conn = ScriptedConnection([b"\x00" + rotate, b"\xfe\x00\x00\x02\x00"], checksum=b"NONE")
    assert [e.log for e in dump_events(conn, "b.000007", 4, blocking=False)] == ["b.000007"]


MARIADB_114_FILE = "mariadb-mysql-cdc/mysql-bin.000001"     # MariaDB 11.4.12: log_pos 0 inside transactions


def test_events_a_mariadb_11_4_server_writes_with_log_pos_0_are_real_and_placed_after_the_one_before():
    """MariaDB 11.4+ (binlog_legacy_event_pos off) writes end_log_pos 0 on the events inside a transaction:
    they are the log's events, not the protocol's, each starting where the one before it ends."""
    path = CORPUS / MARIADB_114_FILE
    events = events_of(path)
    assert any(struct.unpack_from("<I", e, 13)[0] == 0 for e in events[1:])     # (what this file is chosen for)
    packets = [b"\x00" + fake_rotate(path.name)] + [b"\x00" + e for e in events] + [b"\xfe\x00\x00\x02\x00"]
    got = list(dump_events(ScriptedConnection(packets, flavor="mariadb"), path.name, 4, blocking=False))
    real = [e for e in got if not e.artificial]
    assert b"\xfebin" + b"".join(e.data for e in real) == path.read_bytes()
    starts = [4]
    for e in events[:-1]:
        starts.append(starts[-1] + len(e))
    assert [e.position for e in real] == starts
