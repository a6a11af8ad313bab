"""The server's logs and how each begins: log_heads gives SHOW BINARY LOGS with each log's first time and
first GTID, read from the log's first events by a short non-blocking dump of that log (never guessed from
the names). `logs -R` lists them; --start-datetime picks the log to start in by them."""
from __future__ import annotations

import io
from typing import NamedTuple

from binlog_spec.binlog.event_types import GTID_EVENTS
from binlog_spec.binlog.reader import BinlogReader
from binlog_spec.binlog.timezones import iso_utc
from binlog_spec.errors import BinlogError, LogPurgedError, RemoteError
from binlog_spec.options import ReadOptions
from binlog_spec.remote import protocol
from binlog_spec.remote.connection import Connection, connect
from binlog_spec.remote.dump import dump_events

#: A GTID event is looked for among a log's first events; past this many, the log is said to have none
#: (MySQL with GTIDs off, or a log of nothing but statements from before GTIDs).
MAX_HEAD_EVENTS = 1000


class LogHead(NamedTuple):
    """One log of SHOW BINARY LOGS: `first_time` the header timestamp (Unix seconds, UTC) of its first
    event (the FORMAT_DESCRIPTION_EVENT, written when the log was opened), `first_gtid` the GTID of its
    first transaction (MariaDB domain-server-seq, MySQL uuid[:tag]:gno; None if it has none yet, or
    "ANONYMOUS" when MySQL's GTIDs are off)."""

    name: str
    size: int
    first_time: int | None
    first_gtid: str | None

    def to_dict(self) -> dict:
        """As `binlog-spec logs` writes it: log, size, first_time (ISO 8601, UTC), first_gtid."""
        return {"log": self.name, "size": self.size,
                "first_time": None if self.first_time is None else iso_utc(self.first_time),
                "first_gtid": self.first_gtid}


def log_heads(conn: Connection, logs: list[str] | None = None) -> list[LogHead]:
    """The head of each log of the server (or of `logs`, names of SHOW BINARY LOGS), oldest first. Each log
    is read by its own connection (conn.options), which is closed once the head is known."""
    sizes = conn.binary_logs()
    wanted = [(name, size) for name, size in sizes if logs is None or name in logs]
    missing = sorted(set(logs or ()) - {name for name, _ in sizes})
    if missing:
        oldest = sizes[0][0] if sizes else None
        raise LogPurgedError(f"the server has no log {missing[0]}" + (f"; the oldest it has is {oldest}"
                                                                      if oldest else ""),
                             oldest=oldest, server=conn.server, log=missing[0])
    return [_head(conn, name, size) for name, size in wanted]


def _head(conn: Connection, name: str, size: int) -> LogHead:
    first_time = None
    data = bytearray(protocol.BINLOG_MAGIC)
    gtid_seen = False
    with connect(conn.options) as own:
        for count, ev in enumerate(dump_events(own, name, 4, blocking=False)):
            if ev.artificial:
                continue
            if ev.log != name or count > MAX_HEAD_EVENTS:
                break
            if first_time is None:
                first_time = protocol.event_header(ev.data)[0]
            data += ev.data
            if ev.type_code in GTID_EVENTS:
                gtid_seen = True
                break
            if ev.type_code == protocol.ROTATE_EVENT:
                break
    return LogHead(name, size, first_time, _first_gtid(bytes(data), name) if gtid_seen else None)


def _first_gtid(data: bytes, name: str) -> str | None:
    """The GTID of the first GTID event in a log's first bytes (the reader's fields: binlog.spec)."""
    reader = BinlogReader(name, ReadOptions(verify_checksums=True),
                          opener=lambda: (io.BufferedReader(io.BytesIO(data)), len(data)))
    try:
        for ev in reader:
            if ev.type_code in GTID_EVENTS:
                return ev.fields.get("gtid")
    except BinlogError as exc:
        raise RemoteError(f"the head of the log does not read: {exc}", log=name) from None
    finally:
        reader.close()
    return None


__all__ = ["LogHead", "log_heads", "MAX_HEAD_EVENTS"]
