"""The replication protocol's byte layouts: the commands a client sends to read a server's binary logs, and
the leading status byte of every packet the server sends back. Their one home (remote.connection sends and
reads them, remote.dump drives them). Each layout cites the server source that reads or writes it, in
MySQL's spelling; tests/remote/test_protocol.py holds them to those sources byte for byte.

Integers are little-endian, as everywhere in the protocol (int<n> in the protocol documentation).
"""
from __future__ import annotations

import struct

from binlog_spec.binlog import spec

# -- command bytes (include/my_command.h, enum enum_server_command; MariaDB include/mysql_com.h) ----------
COM_BINLOG_DUMP = 0x12
COM_REGISTER_SLAVE = 0x15
COM_BINLOG_DUMP_GTID = 0x1E

# -- COM_BINLOG_DUMP / COM_BINLOG_DUMP_GTID flags ------------------------------------------------------
#: Send EOF after the last event instead of waiting for more (MySQL sql/rpl_constants.h BINLOG_DUMP_NON_BLOCK,
#: tested by Binlog_sender in sql/rpl_binlog_sender.cc; MariaDB sql/sql_priv.h BINLOG_DUMP_NON_BLOCK).
BINLOG_DUMP_NON_BLOCK = 0x01
#: MariaDB COM_BINLOG_DUMP: send ANNOTATE_ROWS_EVENTs too (sql/sql_priv.h BINLOG_SEND_ANNOTATE_ROWS_EVENT;
#: sql/sql_repl.cc, send_events skips them without it). (MySQL: USE_HEARTBEAT_EVENT_V2.)
BINLOG_SEND_ANNOTATE_ROWS_EVENT = 0x02
#: MySQL 8.0.26+ COM_BINLOG_DUMP / COM_BINLOG_DUMP_GTID: send heartbeats as HEARTBEAT_LOG_EVENT_V2 (include/mysql.h
#: USE_HEARTBEAT_EVENT_V2 = 1 << 1; sql/rpl_binlog_sender.cc, Binlog_sender::send_heartbeat_event tests
#: m_flag & USE_HEARTBEAT_EVENT_V2), as a replica asks (sql/rpl_replica.cc, request_dump). The same bit is
#: MariaDB's BINLOG_SEND_ANNOTATE_ROWS_EVENT: it is sent to each flavour with its own meaning.
USE_HEARTBEAT_EVENT_V2 = 0x02
#: Bits the old protocol documentation named for COM_BINLOG_DUMP_GTID (BINLOG_THROUGH_POSITION = 0x02,
#: BINLOG_THROUGH_GTID = 0x04) are not sent: the server reads the name, position and GTID set whatever
#: they say, and 0x02 now asks for HEARTBEAT_LOG_EVENT_V2.

# -- the leading status byte of each packet the server sends during a dump ------------------------------
#: An event follows (sql/rpl_binlog_sender.cc, Binlog_sender::reset_transmit_packet writes this byte
#: before each event; MariaDB sql/sql_repl.cc, reset_transmit_packet).
PACKET_EVENT = 0x00
#: EOF: the non-blocking dump has sent the last event (Binlog_sender::send_eof_packet; a packet shorter
#: than 9 bytes: a longer one starting with 0xfe is no EOF).
PACKET_EOF = 0xFE
#: ERR: int<2> error code, '#' and a 5-character SQL state, then the message (Binlog_sender::send_packet
#: on error, my_message -> net_send_error).
PACKET_ERR = 0xFF

# -- the event header (libbinlogevents/include/binlog_event.h, Log_event_header; v4 layout) ---------------
#: timestamp int<4>, type_code int<1>, server_id int<4>, event_size int<4>, log_pos int<4>, flags int<2>
#: (the spec's common header: binlog.spec LEN_EVENT_HEADER, OFS_FLAGS).
EVENT_HEADER = struct.Struct("<IBIIIH")
EVENT_HEADER_LEN = spec.LEN_EVENT_HEADER
assert EVENT_HEADER.size == EVENT_HEADER_LEN
LOG_EVENT_ARTIFICIAL_F = spec.LOG_EVENT_ARTIFICIAL_F
BINLOG_MAGIC = spec.MAGIC
#: Event type codes the dump treats itself (the spec's EventType).
ROTATE_EVENT = int(spec.EventType.rotate_event)
FORMAT_DESCRIPTION_EVENT = int(spec.EventType.format_description_event)
HEARTBEAT_LOG_EVENT = int(spec.EventType.heartbeat_log_event)
HEARTBEAT_LOG_EVENT_V2 = int(spec.EventType.heartbeat_log_event_v2)
GTID_LIST_EVENT = int(spec.EventType.gtid_list_event)           # MariaDB
#: ROTATE_EVENT's post-header: the position in the next log, int<8> (control_events.h, Rotate_event).
ROTATE_POST_HEADER_LEN = 8


def register_slave(server_id: int, *, host: str = "", user: str = "", password: str = "", port: int = 0,
                   master_id: int = 0) -> bytes:
    """COM_REGISTER_SLAVE's payload, command byte first (MySQL sql/rpl_source.cc, register_replica;
    MariaDB sql/repl_failsafe.cc, register_slave): server_id int<4>, then host, user and password each as
    int<1> length + bytes, port int<2>, replication_rank int<4> (ignored), master_id int<4>. The host,
    user and password are only what SHOW SLAVE HOSTS shows: the dump sends them empty."""
    out = bytearray([COM_REGISTER_SLAVE])
    out += struct.pack("<I", server_id)
    for text in (host, user, password):
        raw = text.encode("utf-8")[:255]
        out += bytes([len(raw)]) + raw
    out += struct.pack("<HII", port, 0, master_id)
    return bytes(out)


def binlog_dump(log: str, position: int, server_id: int, *, non_block: bool, annotate: bool = False) -> bytes:
    """COM_BINLOG_DUMP's payload, command byte first (MySQL sql/rpl_source.cc, com_binlog_dump; MariaDB
    sql/sql_parse.cc, dispatch_command case COM_BINLOG_DUMP): binlog_pos int<4>, flags int<2>,
    server_id int<4>, then the log name to the end of the packet (string<EOF>). The position has four
    bytes: a log past 4 GiB is read from its start, or with COM_BINLOG_DUMP_GTID (MySQL)."""
    if not 0 <= position <= 0xFFFFFFFF:
        raise ValueError(f"COM_BINLOG_DUMP takes a position below 4 GiB, not {position}")
    flags = (BINLOG_DUMP_NON_BLOCK if non_block else 0) | (BINLOG_SEND_ANNOTATE_ROWS_EVENT if annotate else 0)
    return struct.pack("<BIHI", COM_BINLOG_DUMP, position, flags, server_id) + log.encode("utf-8")


def packet_kind(packet: bytes) -> int:
    """PACKET_EVENT, PACKET_EOF or PACKET_ERR: the packet's leading status byte (an EOF is shorter than 9
    bytes: sql/protocol_classic.cc, Protocol_classic::send_eof / net_send_eof)."""
    if not packet:
        raise ValueError("an empty packet")
    lead = packet[0]
    if lead == PACKET_EOF and len(packet) < 9:
        return PACKET_EOF
    if lead == PACKET_ERR:
        return PACKET_ERR
    if lead == PACKET_EVENT:
        return PACKET_EVENT
    raise ValueError(f"a packet starting with 0x{lead:02x} (expected 0x00 event, 0xfe EOF or 0xff ERR)")


def parse_error(packet: bytes) -> tuple[int, str, str]:
    """An ERR packet: (error code, SQL state, message) (sql/protocol_classic.cc, net_send_error_packet:
    0xff, code int<2>, '#' + state string<5> (protocol 4.1), message string<EOF>)."""
    code = struct.unpack_from("<H", packet, 1)[0]
    rest = packet[3:]
    state = ""
    if rest[:1] == b"#":
        state, rest = rest[1:6].decode("ascii", "replace"), rest[6:]
    return code, state, rest.decode("utf-8", "replace")


def event_header(data: bytes) -> tuple[int, int, int, int, int, int]:
    """(timestamp, type_code, server_id, event_size, log_pos, flags) of an event's bytes."""
    return EVENT_HEADER.unpack_from(data, 0)


def rotate_target(data: bytes, checksum_len: int) -> tuple[str, int]:
    """A ROTATE_EVENT's next log and position (control_events.h, Rotate_event: the position int<8>, then
    the name to the end of the body; `checksum_len`: the CRC32's 4 bytes after it, or 0)."""
    (position,) = struct.unpack_from("<Q", data, EVENT_HEADER_LEN)
    end = len(data) - checksum_len
    name = data[EVENT_HEADER_LEN + ROTATE_POST_HEADER_LEN:end].decode("utf-8", "replace")
    return name, position


def fde_checksum_len(data: bytes) -> int:
    """4 when a FORMAT_DESCRIPTION_EVENT says its log's events end with a CRC32, else 0 (its body ends
    with the checksum algorithm, int<1>, then the FDE's own checksum, int<4>: control_events.h,
    Format_description_event; binlog_event.h, enum_binlog_checksum_alg BINLOG_CHECKSUM_ALG_CRC32 = 1)."""
    return 4 if len(data) >= 5 and data[-5] == 1 else 0


#: The GTID set encodings (libs/mysql/gtid/gtid_format.h, enum class Gtid_format): MySQL 8.4's tagged
#: GTIDs need the tagged one; a set without tags is written untagged, as the server writes it.
GTID_FORMAT_UNTAGGED, GTID_FORMAT_TAGGED = 0, 1


def varlen_uint(value: int) -> bytes:
    """MySQL's serialization library's variable-length unsigned integer (libs/mysql/serialization/
    variable_length_integers.h, write_varlen_bytes): n bytes, little-endian, holding the value shifted left
    by n with n-1 one bits below it (the first byte's trailing ones count the bytes after it); 9 bytes
    (0xff then the 8-byte value) past 2^56."""
    for n in range(1, 9):
        if value < 1 << (7 * n):
            return ((value << n) | ((1 << (n - 1)) - 1)).to_bytes(n, "little")
    return b"\xff" + value.to_bytes(8, "little")


def encode_gtid_set(gtids) -> bytes:
    """A MySQL GTID set (binlog.gtid.GtidSet's `mysql` part: (uuid, tag) -> closed intervals) as
    Gtid_set::encode writes it (sql/rpl_gtid_set.cc; what a PREVIOUS_GTIDS_LOG_EVENT's body holds too):
    n_sids int<8>, then for each TSID in ascending order (uuid, then tag: libs/mysql/gtid/tsid.cpp,
    Tsid::operator<) its UUID's 16 bytes, [the tag], n_intervals int<8> and each interval's start and end
    (exclusive) int<8>. With a tag anywhere, the tagged format (encode_nsids_format): the 8 bytes of
    n_sids are format | n_sids << 8 | format << 56, and each TSID's tag follows its UUID as a
    serialization-library string (Tag::encode_tag: varlen_uint length, then the bytes; "" for none)."""
    import uuid as _uuid

    tsids = sorted(((_uuid.UUID(sid).bytes, tag), _merged(list(spans))) for (sid, tag), spans in gtids.mysql.items()
                   if spans)
    fmt = GTID_FORMAT_TAGGED if any(tag for (_sid, tag), _spans in tsids) else GTID_FORMAT_UNTAGGED
    n = len(tsids)
    out = bytearray(struct.pack("<Q", (fmt << 56) | (n << 8) | fmt if fmt == GTID_FORMAT_TAGGED else n))
    for (sid, tag), spans in tsids:
        out += sid
        if fmt == GTID_FORMAT_TAGGED:
            raw = tag.encode("ascii")
            out += varlen_uint(len(raw)) + raw
        out += struct.pack("<Q", len(spans))
        for lo, hi in spans:
            out += struct.pack("<QQ", lo, hi + 1)
    return bytes(out)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Closed intervals sorted and joined where they touch or overlap (a Gtid_set keeps them so)."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def binlog_dump_gtid(log: str, position: int, server_id: int, gtids, *, non_block: bool) -> bytes:
    """COM_BINLOG_DUMP_GTID's payload, command byte first (MySQL sql/rpl_source.cc, com_binlog_dump_gtid):
    flags int<2>, server_id int<4>, binlog_name_info_size int<4>, the name (no terminator), binlog_pos
    int<8>, then data_size int<4> and the encoded GTID set (encode_gtid_set): the transactions the server
    skips. The server reads the name, position, data_size and set whatever the flags say; the flags are
    BINLOG_DUMP_NON_BLOCK and USE_HEARTBEAT_EVENT_V2, as a MySQL 8 replica sends them."""
    name = log.encode("utf-8")
    flags = (BINLOG_DUMP_NON_BLOCK if non_block else 0) | USE_HEARTBEAT_EVENT_V2
    encoded = encode_gtid_set(gtids)
    return (struct.pack("<BHII", COM_BINLOG_DUMP_GTID, flags, server_id, len(name)) + name
            + struct.pack("<QI", position, len(encoded)) + encoded)
