"""The replication commands byte for byte (remote/protocol.py), against the layouts the servers read them
with and bytes the servers wrote:

* COM_REGISTER_SLAVE: MySQL sql/rpl_source.cc, register_replica (server_id int<4>; host, user, password as
  int<1> length + bytes (get_object); port int<2>; 4 bytes of the old rpl_recovery_rank, skipped;
  master_id int<4>); MariaDB sql/repl_failsafe.cc, register_slave, reads the same.
* COM_BINLOG_DUMP: MySQL sql/rpl_source.cc, com_binlog_dump (READ_INT(pos, 4), READ_INT(flags, 2),
  READ_INT(server_id, 4), the name from packet + 10 to the end); the example packet of MariaDB's
  documentation (clientserver-protocol/replication-protocol/com_binlog_dump.md).
* COM_BINLOG_DUMP_GTID: MySQL sql/rpl_source.cc, com_binlog_dump_gtid (READ_INT(flags, 2),
  READ_INT(server_id, 4), READ_INT(name_size, 4), READ_STRING(name), READ_INT(pos, 8),
  READ_INT(data_size, 4), then Gtid_set::add_gtid_encoding of data_size bytes).
* The encoded GTID set: the bodies of PREVIOUS_GTIDS_LOG_EVENTs real MySQL servers wrote (5.7, 8.0.40, and
  9.6.0 with a tagged GTID), which are Gtid_set::encode's output (sql/rpl_gtid_set.cc; the tagged format:
  encode_nsids_format, libs/mysql/gtid/tsid.cpp Tsid::encode_tsid, tag.cpp Tag::encode_tag,
  libs/mysql/serialization/variable_length_integers.h write_varlen_bytes_unsigned).
"""
from __future__ import annotations

import struct

import pytest

from conftest import CORPUS

from binlog_spec.binlog.gtid import GtidSet
from binlog_spec.binlog.reader import BinlogReader
from binlog_spec.remote import protocol

PREVIOUS_GTIDS_LOG_EVENT = 35


def test_register_slave_is_server_id_three_counted_strings_port_rank_and_master_id():
    got = protocol.register_slave(0x01020304, host="h1", user="repl", password="", port=3307, master_id=9)
    assert got == (b"\x15" + bytes.fromhex("04030201") + b"\x02h1" + b"\x04repl" + b"\x00"
                   + bytes.fromhex("eb0c") + b"\x00\x00\x00\x00" + bytes.fromhex("09000000"))
    assert protocol.register_slave(7) == b"\x15\x07\x00\x00\x00" + b"\x00\x00\x00" + b"\x00" * 10


def test_binlog_dump_is_the_example_packet_of_mariadb_documentation():
    # 1b 00 00 00 | 12 34 06 00 00 02 00 75 27 00 00 mysql-bin.000034: position 0x634, flags
    # BINLOG_SEND_ANNOTATE_ROWS_EVENT, server id 10101; the 4 bytes before the payload are its length and
    # sequence number (PyMySQL writes them).
    example = bytes.fromhex("1b000000" "12340600000200752700006d7973716c2d62696e2e303030303334")
    got = protocol.binlog_dump("mysql-bin.000034", 0x634, 10101, non_block=False, annotate=True)
    assert struct.pack("<I", len(got)) + got == example


def test_binlog_dump_non_block_sets_flag_1_and_refuses_positions_past_4_gib():
    got = protocol.binlog_dump("b.000001", 4, 5, non_block=True)
    pos, flags, sid = struct.unpack_from("<IHI", got, 1)
    assert (got[0], pos, flags, sid, got[11:]) == (0x12, 4, protocol.BINLOG_DUMP_NON_BLOCK, 5, b"b.000001")
    with pytest.raises(ValueError):
        protocol.binlog_dump("b.000001", 1 << 32, 5, non_block=True)


def test_binlog_dump_gtid_is_laid_out_as_com_binlog_dump_gtid_reads_it():
    gtids = GtidSet.parse("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5")
    got = protocol.binlog_dump_gtid("binlog.000002", 1 << 33, 77, gtids, non_block=True)
    flags, sid, name_size = struct.unpack_from("<HII", got, 1)
    name = got[11:11 + name_size]
    pos, data_size = struct.unpack_from("<QI", got, 11 + name_size)
    data = got[11 + name_size + 12:]
    assert got[0] == 0x1E and (sid, name, pos) == (77, b"binlog.000002", 1 << 33)
    # BINLOG_DUMP_NON_BLOCK, USE_HEARTBEAT_EVENT_V2 (include/mysql.h, 1 << 1; Binlog_sender::send_heartbeat_event)
    assert flags == protocol.BINLOG_DUMP_NON_BLOCK | protocol.USE_HEARTBEAT_EVENT_V2 == 0x03
    assert data_size == len(data) == 8 + 16 + 8 + 16
    assert data == (struct.pack("<Q", 1) + bytes.fromhex("3e11fa4771ca11e19e33c80aa9429562")
                    + struct.pack("<QQQ", 1, 1, 6))
    # Blocking, without a log name (name_size 0), nothing to skip (n_sids 0).
    bare = protocol.binlog_dump_gtid("", 4, 77, GtidSet.parse(""), non_block=False)
    assert bare == struct.pack("<BHII", 0x1E, 0x02, 77, 0) + struct.pack("<QI", 4, 8) + struct.pack("<Q", 0)


def previous_gtids(name: str) -> tuple[str, bytes]:
    """(the set as text, the body's bytes) of the file's PREVIOUS_GTIDS_LOG_EVENT (its CRC32 left out)."""
    with BinlogReader(CORPUS / name) as reader:
        for ev in reader:
            if ev.type_code == PREVIOUS_GTIDS_LOG_EVENT:
                end = len(ev.raw) - (4 if ev.checksum is not None else 0)
                return ev.fields["gtid_set"], bytes(ev.raw[19:end])
    raise AssertionError(f"{name} has no PREVIOUS_GTIDS_LOG_EVENT")


@pytest.mark.parametrize("name", [
    "MyFlash/haha.000041",                                                   # 5.7.18
    "rust_mysql_common/binlog_transaction_previous_GTID_no_tag.000001",      # 8.0.40
    "rust_mysql_common/binlog_transaction_with_GTID_TAG.000001",             # 9.6.0, tagged
])
def test_the_encoded_gtid_set_is_what_the_mysql_server_wrote(name):
    text, body = previous_gtids(name)
    assert protocol.encode_gtid_set(GtidSet.parse(text)) == body


def test_a_tagged_set_uses_the_tagged_format_with_each_tsid_sorted_by_uuid_then_tag():
    sid = "55778904-0299-11f1-b1b8-4ef0c4956feb"
    got = protocol.encode_gtid_set(GtidSet.parse(f"{sid}:zz:4,{sid}:1-3:7,{sid}:AA:2"))
    uuid = bytes.fromhex(sid.replace("-", ""))
    # n_sids = 3: format 1 in the first and the last byte, the count between (encode_nsids_format).
    assert got[:8] == bytes.fromhex("0103000000000001")
    rest = got[8:]
    assert rest == (uuid + b"\x00" + struct.pack("<QQQQQ", 2, 1, 4, 7, 8)         # untagged: "" (varlen 0)
                    + uuid + b"\x04aa" + struct.pack("<QQQ", 1, 2, 3)              # tags are lower case
                    + uuid + b"\x04zz" + struct.pack("<QQQ", 1, 4, 5))


def test_varlen_uint_counts_its_bytes_in_the_first_byte_trailing_ones():
    assert protocol.varlen_uint(0) == b"\x00"
    assert protocol.varlen_uint(5) == b"\x0a"
    assert protocol.varlen_uint(127) == b"\xfe"
    assert protocol.varlen_uint(128) == bytes([0b00000001, 0x02])      # 128 << 2 | 0b01
    assert protocol.varlen_uint((1 << 56) - 1) == b"\x7f" + b"\xff" * 7
    assert protocol.varlen_uint(1 << 63) == b"\xff" + (1 << 63).to_bytes(8, "little")


def test_packets_are_told_by_their_status_byte():
    assert protocol.packet_kind(b"\x00\x01\x02") == protocol.PACKET_EVENT
    assert protocol.packet_kind(b"\xfe\x00\x00\x02\x00") == protocol.PACKET_EOF
    assert protocol.packet_kind(b"\xff\x36\x04#HY000x") == protocol.PACKET_ERR
    with pytest.raises(ValueError):
        protocol.packet_kind(b"\xfe" + b"\x00" * 9)       # 0xfe with 9 bytes or more is no EOF
    err = b"\xff\xd4\x04#HY000Could not find first log file name in binary log index file"
    assert protocol.parse_error(err) == (1236, "HY000", "Could not find first log file name in binary log index file")


def test_rotate_target_and_the_fde_checksum_come_from_the_events_bytes():
    with BinlogReader(CORPUS / "MyFlash/haha.000041") as reader:
        events = list(reader)
    fde = next(e for e in events if e.type_code == protocol.FORMAT_DESCRIPTION_EVENT)
    rotate = next(e for e in events if e.type_code == protocol.ROTATE_EVENT)
    assert protocol.fde_checksum_len(bytes(fde.raw)) == 4
    assert protocol.rotate_target(bytes(rotate.raw), 4) == (rotate.fields["next_file"], rotate.fields["position"])
