"""A private MariaDB with a replication user, for the tests of reading from a server (shared by
tests/remote/ and the commands' tests: `from remote_server import replication_server, connect_options`).

    with replication_server() as srv:                 # fixtures/mariadb_server.MariaDBServer, started
        srv.sql("CREATE DATABASE d; ...")
        opts = connect_options(srv)                   # ConnectOptions for REPL_USER over TCP
        with api.connect(opts) as conn: ...
        server_logs(srv)                              # {name: bytes} of the server's own binlog files
"""
from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Iterable, Iterator

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402
from mariadb_server import MariaDBServer, ServerError  # noqa: E402,F401

from binlog_spec.options import ConnectOptions  # noqa: E402

REPL_USER = "repl"
REPL_PASSWORD = "repl-Secret-42"
#: What a reading user needs on MariaDB 10.5+: the dump (REPLICATION SLAVE) and SHOW BINARY LOGS (BINLOG MONITOR).
REPL_GRANTS = "REPLICATION SLAVE, BINLOG MONITOR"
MAGIC = b"\xfebin"


def available() -> bool:
    return mariadb_server.available()


def add_user(srv: MariaDBServer, user: str = REPL_USER, password: str = REPL_PASSWORD,
             grants: str | None = REPL_GRANTS, plugin: str | None = None) -> None:
    """A user reachable over TCP from 127.0.0.1 (`plugin`: e.g. "ed25519", with INSTALL SONAME first)."""
    how = f"IDENTIFIED VIA {plugin} USING PASSWORD('{password}')" if plugin else f"IDENTIFIED BY '{password}'"
    srv.sql(f"CREATE USER '{user}'@'%' {how};" + (f" GRANT {grants} ON *.* TO '{user}'@'%';" if grants else ""))


def connect_options(srv: MariaDBServer, user: str = REPL_USER, password: str | None = REPL_PASSWORD,
                    **kw) -> ConnectOptions:
    """ConnectOptions for `user` over TCP to the server (kw: any other field, e.g. heartbeat_s, ssl_mode)."""
    return ConnectOptions(host="127.0.0.1", port=srv.port, user=user, password=password, **kw)


@contextlib.contextmanager
def replication_server(extra_args: Iterable[str] = (), user: str = REPL_USER,
                       password: str = REPL_PASSWORD) -> Iterator[MariaDBServer]:
    """A started MariaDBServer (binlog on, ROW, FULL metadata) with a replication user; removed at exit."""
    with MariaDBServer(extra_args=list(extra_args)) as srv:
        add_user(srv, user, password)
        yield srv


def server_logs(srv: MariaDBServer) -> dict[str, bytes]:
    """The server's own binlog files, name -> bytes, in order."""
    return {p.name: p.read_bytes() for p in srv.binlogs()}


def dumped_logs(events) -> dict[str, bytes]:
    """What a dump's events make of each log: the magic then its non-artificial events' bytes, in order."""
    out: dict[str, bytearray] = {}
    for ev in events:
        if not ev.artificial:
            out.setdefault(ev.log, bytearray(MAGIC)).extend(ev.data)
    return {name: bytes(data) for name, data in out.items()}


#: The flags byte of a log's FORMAT_DESCRIPTION_EVENT (the magic, then 17 header bytes): the server sets
#: LOG_EVENT_BINLOG_IN_USE_F (0x1) in the file it writes and clears it in what it sends (and in the file
#: when it closes it); the FDE's CRC32 is computed without it.
FDE_FLAGS_AT = len(MAGIC) + 17


def closed(data: bytes) -> bytes:
    """A log's bytes with its FDE's in-use flag cleared: the file as it is once the server closes it."""
    return data[:FDE_FLAGS_AT] + bytes([data[FDE_FLAGS_AT] & ~1]) + data[FDE_FLAGS_AT + 1:]
