"""A server's events over the replication protocol: dump_events asks the server for what it should send,
registers, sends COM_BINLOG_DUMP (or MySQL's COM_BINLOG_DUMP_GTID) and yields every event, as RemoteEvent,
those only the protocol has (artificial) included: the consumers drop them.

What only the protocol has (MySQL sql/rpl_binlog_sender.cc, Binlog_sender; MariaDB sql/sql_repl.cc,
mysql_binlog_send / send_one_binlog_file):
* the fake ROTATE_EVENT first, naming the log the dump starts in, and after each real ROTATE (both with
  LOG_EVENT_ARTIFICIAL_F and log_pos 0: Binlog_sender::fake_rotate_event; MariaDB fake_rotate_event);
* a FORMAT_DESCRIPTION_EVENT resent with log_pos 0 when the dump starts past the log's first event
  (Binlog_sender::send_format_description_event; MariaDB send_format_descriptor_event);
* HEARTBEAT_LOG_EVENT (MySQL 8.0.26+: HEARTBEAT_LOG_EVENT_V2) while the server has nothing to send;
* MariaDB's fake GTID_LIST_EVENT when the dump starts from a GTID position (artificial flag).
"""
from __future__ import annotations

import random
import re
from typing import Iterator

import pymysql

from binlog_spec.binlog.gtid import GtidSet
from binlog_spec.errors import AccessDeniedError, GtidSetError, PrivilegeError, RemoteError, ServerGoneError
from binlog_spec.remote import protocol
from binlog_spec.remote.connection import Connection, purged_error

#: MariaDB's replica capability the dump announces (sql/log_event.h, MARIA_SLAVE_CAPABILITY_GTID = 4): the
#: server then sends GTID, ANNOTATE_ROWS, BINLOG_CHECKPOINT and GTID_LIST events as they are in the log,
#: not replaced by dummy events for older replicas.
MARIA_SLAVE_CAPABILITY_GTID = 4


class RemoteEvent:
    """One event as the server sent it.

    log         the log the event is in (an artificial ROTATE: the log it announces)
    data        the event's bytes exactly as in the log file: header, body, CRC32 when the log has one
    type_code   the header's event type code
    log_pos     the header's end position (0 for the fake ROTATE and a resent FORMAT_DESCRIPTION, and for the
                events inside a transaction that MariaDB 11.4+ writes with binlog_legacy_event_pos off)
    position    where the event starts in its log: log_pos less its size, or where the event before it ended
                when log_pos is 0 (meaningless when artificial)
    artificial  True for what only the protocol has (not in the log file): consumers drop these
    heartbeat   True for HEARTBEAT_LOG_EVENT / HEARTBEAT_LOG_EVENT_V2 (also artificial)
    """

    __slots__ = ("log", "data", "type_code", "log_pos", "artificial", "heartbeat", "position")

    def __init__(self, log: str, data: bytes, type_code: int, log_pos: int, artificial: bool, heartbeat: bool,
                 position: int | None = None):
        self.log = log
        self.data = data
        self.type_code = type_code
        self.log_pos = log_pos
        self.artificial = artificial
        self.heartbeat = heartbeat
        self.position = log_pos - len(data) if position is None else position

    def __repr__(self) -> str:
        flags = (" artificial" if self.artificial else "") + (" heartbeat" if self.heartbeat else "")
        return f"<RemoteEvent {self.log} type {self.type_code} log_pos {self.log_pos} {len(self.data)} bytes{flags}>"


def prepare(conn: Connection, *, heartbeat_s: float, gtid_start: str | None) -> int:
    """The session variables that tell the server what to send; returns the checksum's length (4 or 0).

    @master_binlog_checksum: the events keep their CRC32 as in the files (a replica that does not set
    it gets them without: MySQL sql/rpl_binlog_sender.cc, Binlog_sender::check_start_file /
    get_binlog_checksum_value_at_connect; MariaDB sql/sql_repl.cc, is_slave_checksum_aware).
    @master_heartbeat_period, in nanoseconds (Binlog_sender::get_heartbeat_period; MariaDB
    get_heartbeat_period). MariaDB: @mariadb_slave_capability and, to start at a GTID position,
    @slave_connect_state and @slave_gtid_strict_mode (sql_repl.cc, mysql_binlog_send: get_slave_connect_state)."""
    conn.query("SET @master_binlog_checksum = @@global.binlog_checksum")
    checksum = conn.query("SELECT @master_binlog_checksum")[0][0]
    if heartbeat_s and heartbeat_s > 0:
        conn.query(f"SET @master_heartbeat_period = {int(heartbeat_s * 1e9)}")
    if conn.flavor == "mariadb":
        conn.query(f"SET @mariadb_slave_capability = {MARIA_SLAVE_CAPABILITY_GTID}")
        if gtid_start is not None:
            conn.query(f"SET @slave_connect_state = '{_gtid_text(gtid_start)}'")
            conn.query("SET @slave_gtid_strict_mode = 0")
            conn.query("SET @slave_gtid_ignore_duplicates = 0")
    if isinstance(checksum, (bytes, bytearray)):     # (a user variable may come back as binary)
        checksum = checksum.decode("ascii", "replace")
    return 4 if str(checksum or "NONE").upper() not in ("NONE", "0", "OFF") else 0


def silence_timeout(heartbeat_s: float) -> float | None:
    """How long a dump waits for the next byte before it says the server went away: four heartbeats, and at
    least 10 s (None, for ever, without heartbeats)."""
    return max(4 * heartbeat_s, 10.0) if heartbeat_s and heartbeat_s > 0 else None


def random_server_id() -> int:
    """A server id for a dump none gave: random in the upper half of the ids, where replicas rarely are (a
    server ends a dump when another registers with its id: MySQL sql/rpl_source.cc kill_zombie_dump_threads,
    MariaDB sql/sql_repl.cc kill_zombie_dump_threads)."""
    return random.randrange(1 << 31, 1 << 32)


def _gtid_text(text: str) -> str:
    """A MariaDB GTID position (domain-server-seq[,...]) checked to hold nothing else (it is quoted into SQL)."""
    cleaned = text.replace(" ", "")
    if not re.fullmatch(r"(\d+-\d+-\d+)(,\d+-\d+-\d+)*", cleaned):
        raise GtidSetError(f"not a MariaDB GTID position (domain-server-seq[,...]): {text!r}")
    return cleaned


def dump_events(conn: Connection, log: str, position: int = 4, *, blocking: bool, server_id: int | None = None,
                gtid_start: str | None = None, exclude_gtids: GtidSet | str | None = None,
                heartbeat_s: float | None = None) -> Iterator[RemoteEvent]:
    """The events of `log` from `position` on (then of the logs after it), as the server sends them.

    blocking=False: the server sends EOF after its last event and the iterator ends (BINLOG_DUMP_NON_BLOCK).
    blocking=True (--stop-never): it waits for the server's new events and never ends by itself; a
    heartbeat arrives every heartbeat_s while nothing happens. A server silent for longer than
    silence_timeout(heartbeat_s) (a network cut, a frozen server) raises ServerGoneError, in either mode.

    gtid_start (MariaDB): start after this GTID position (log and position are then not sent).
    exclude_gtids (MySQL): COM_BINLOG_DUMP_GTID with the set the server skips (MariaDB has no such
    command: ignored there, a reader filters the GTIDs itself). Errors raise RemoteError's classes (a
    purged log: LogPurgedError naming the oldest log kept); the server is asked when the first event is."""
    heartbeat = conn.options.heartbeat_s if heartbeat_s is None else heartbeat_s
    sid = server_id or conn.options.connection_server_id or random_server_id()
    checksum_len = prepare(conn, heartbeat_s=heartbeat, gtid_start=gtid_start)
    conn.command(protocol.register_slave(sid))
    try:
        conn.ok()
    except AccessDeniedError as exc:    # authenticated, so a privilege: MariaDB's check_access says no more
        raise PrivilegeError(f"the server refused to register the reader ({exc.message}): the user needs the "
                             "REPLICATION SLAVE privilege", privilege="REPLICATION SLAVE", server=exc.server,
                             log=log, position=position, code=exc.code) from None
    if exclude_gtids is not None and conn.flavor == "mysql":
        gtids = GtidSet.parse(exclude_gtids) if isinstance(exclude_gtids, str) else exclude_gtids
        conn.command(protocol.binlog_dump_gtid(log, position, sid, gtids, non_block=not blocking))
    else:
        conn.command(protocol.binlog_dump(log if gtid_start is None else "", position if gtid_start is None else 4,
                                   sid, non_block=not blocking, annotate=conn.flavor == "mariadb"))
    conn.set_read_timeout(silence_timeout(heartbeat))
    current = log
    at = position
    while True:
        try:
            packet = conn.read_packet()
            kind = protocol.packet_kind(packet)
        except (pymysql.err.MySQLError, OSError) as exc:
            raise purged_error(conn, exc, current, at) from None
        except ValueError as exc:       # a packet that is no event, EOF or error
            raise RemoteError(f"the server sent what is not a replication packet: {exc}", server=conn.server,
                              log=current, position=at) from None
        if kind == protocol.PACKET_EOF:
            if blocking:    # a blocking dump has no end: the server ends it when it shuts down
                raise ServerGoneError("the server ended the dump (shutting down?)", server=conn.server,
                                      log=current, position=at)
            return
        data = packet[1:]
        if len(data) < protocol.EVENT_HEADER_LEN:
            raise RemoteError(f"the server sent an event of {len(data)} bytes, shorter than its header",
                              server=conn.server, log=current, position=at)
        _ts, type_code, _sid, _size, log_pos, flags = protocol.event_header(data)
        is_heartbeat = type_code in (protocol.HEARTBEAT_LOG_EVENT, protocol.HEARTBEAT_LOG_EVENT_V2)
        # (a log_pos of 0 marks the fake ROTATE and a FORMAT_DESCRIPTION sent again; inside a transaction,
        # MariaDB 11.4+ writes it on real events: binlog_legacy_event_pos, sql/log_event_server.cc)
        artificial = bool(flags & protocol.LOG_EVENT_ARTIFICIAL_F) or is_heartbeat or (
            log_pos == 0 and type_code in (protocol.ROTATE_EVENT, protocol.FORMAT_DESCRIPTION_EVENT))
        if type_code == protocol.FORMAT_DESCRIPTION_EVENT:
            checksum_len = protocol.fde_checksum_len(data)
        elif type_code == protocol.ROTATE_EVENT:
            name, next_pos = protocol.rotate_target(data, checksum_len)
            if artificial:      # the log the dump goes on in, and where
                current, at = name, next_pos
                yield RemoteEvent(current, data, type_code, log_pos, True, False)
            else:               # the last event of its log
                yield RemoteEvent(current, data, type_code, log_pos, False, False)
                current, at = name, next_pos
            continue
        if artificial:
            if type_code == protocol.GTID_LIST_EVENT and log_pos:
                at = log_pos        # (MariaDB's jump to the first transaction after a GTID start)
            yield RemoteEvent(current, data, type_code, log_pos, True, is_heartbeat)
            continue
        start = log_pos - len(data) if log_pos else at
        at = start + len(data)
        yield RemoteEvent(current, data, type_code, log_pos, False, is_heartbeat, start)


__all__ = ["RemoteEvent", "dump_events", "prepare", "silence_timeout", "random_server_id"]
