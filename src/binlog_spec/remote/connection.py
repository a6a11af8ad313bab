"""A connection to a server over PyMySQL: the handshake, authentication (mysql_native_password,
caching_sha2_password, sha256_password, and MariaDB's client_ed25519 when PyNaCl is installed), TLS by
ConnectOptions.ssl_mode, and its errors turned into errors.RemoteError's classes. The replication commands'
layouts are protocol.py's; this module sends them and reads the packets back.

    with connect(ConnectOptions(host="db1", user="repl", password=...)) as conn:
        conn.flavor            # "mariadb" | "mysql"
        conn.binary_logs()     # [("mariadb-bin.000001", 1234), ...] (SHOW BINARY LOGS)
"""
from __future__ import annotations

import re
import select
from typing import Any

import pymysql
from pymysql.constants import CR, ER

from binlog_spec.errors import (AccessDeniedError, BinlogDisabledError, LogPurgedError, PrivilegeError,
                                RemoteError, ServerGoneError, ServerUnreachableError)
from binlog_spec.options import SSL_MODES, ConnectOptions
from binlog_spec.remote import protocol

#: Client error codes of a connection that could not be made (include/errmsg.h: CR_CONNECTION_ERROR,
#: CR_CONN_HOST_ERROR, CR_UNKNOWN_HOST, CR_SSL_CONNECTION_ERROR).
_UNREACHABLE = {CR.CR_CONNECTION_ERROR, CR.CR_CONN_HOST_ERROR, CR.CR_UNKNOWN_HOST, CR.CR_SSL_CONNECTION_ERROR}
#: Codes of a connection lost: the client's (CR_SERVER_GONE_ERROR, CR_SERVER_LOST) and the server's
#: (ER_SERVER_SHUTDOWN, ER_QUERY_INTERRUPTED, MariaDB's ER_CONNECTION_KILLED 1927, ER_NET_READ_INTERRUPTED...).
_GONE = {CR.CR_SERVER_GONE_ERROR, CR.CR_SERVER_LOST, ER.SERVER_SHUTDOWN, ER.QUERY_INTERRUPTED, 1927,
         ER.NET_READ_INTERRUPTED, ER.NET_READ_ERROR, ER.NET_ERROR_ON_WRITE, ER.NET_WRITE_INTERRUPTED}
_ACCESS = {ER.ACCESS_DENIED_ERROR, ER.DBACCESS_DENIED_ERROR, 1698, 1251}   # ER_ACCESS_DENIED_NO_PASSWORD_ERROR, CR_AUTH
#: ER_SPECIFIC_ACCESS_DENIED_ERROR: "Access denied; you need (at least one of) the X privilege(s) ..."
_PRIVILEGE = re.compile(r"you need \(at least one of\) the (.+?) privilege", re.IGNORECASE)
ER_NO_BINARY_LOGGING = 1381
ER_MASTER_FATAL_ERROR_READING_BINLOG = 1236


def _ssl_arguments(opts: ConnectOptions) -> dict[str, Any]:
    """PyMySQL's TLS arguments for ssl_mode (None: VERIFY_CA with a CA, else PREFERRED)."""
    mode = (opts.ssl_mode or ("VERIFY_CA" if opts.ssl_ca else "PREFERRED")).upper()
    if mode not in SSL_MODES:
        raise ValueError(f"ssl_mode {opts.ssl_mode!r}: one of {', '.join(SSL_MODES)}")
    if mode == "DISABLED":
        return {"ssl_disabled": True}
    if mode == "PREFERRED" and not (opts.ssl_cert or opts.ssl_key):
        return {}       # PyMySQL's own default: TLS when the server offers it
    ssl: dict[str, Any] = {"check_hostname": mode == "VERIFY_IDENTITY",
                           "verify_mode": mode in ("VERIFY_CA", "VERIFY_IDENTITY")}
    if opts.ssl_ca:
        ssl["ca"] = opts.ssl_ca
    if opts.ssl_cert:
        ssl["cert"] = opts.ssl_cert
    if opts.ssl_key:
        ssl["key"] = opts.ssl_key
    return {"ssl": ssl}


def remote_error(exc: BaseException, server: str, *, log: str | None = None,
                 position: int | None = None) -> RemoteError:
    """PyMySQL's error (or an OSError) as the RemoteError class it is."""
    if isinstance(exc, RemoteError):
        return exc
    code = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
    message = str(exc.args[1]) if len(exc.args) > 1 else (str(exc) or type(exc).__name__)
    where = {"server": server, "log": log, "position": position, "code": code}
    if isinstance(exc, pymysql.err.InternalError) and code is None:   # a packet out of sequence
        return ServerGoneError(f"the connection broke: {message}", **where)
    if code in _UNREACHABLE or (code is None and isinstance(exc, OSError)):
        return ServerUnreachableError(f"cannot connect: {message}", **where)
    if code in _ACCESS:
        return AccessDeniedError(message, **where)
    if code == ER.SPECIFIC_ACCESS_DENIED_ERROR:
        m = _PRIVILEGE.search(message)
        return PrivilegeError(message, privilege=m.group(1) if m else None, **where)
    if code == ER_NO_BINARY_LOGGING:
        return BinlogDisabledError(f"the server writes no binary log ({message})", **where)
    if code in _GONE:
        return ServerGoneError(f"the server went away: {message}", **where)
    if code == ER_MASTER_FATAL_ERROR_READING_BINLOG and re.search(r"binary log is not open|binlog is not open",
                                                                  message, re.IGNORECASE):
        return BinlogDisabledError(f"the server writes no binary log ({message})", **where)
    return RemoteError(message, **where)


class Connection:
    """An open connection (connect()). `flavor`: "mariadb" or "mysql"; `server_version`: the handshake's."""

    def __init__(self, raw: pymysql.connections.Connection, opts: ConnectOptions):
        self._raw = raw
        self.options = opts
        self.server = opts.address()
        self.server_version: str = raw.get_server_info()
        self.flavor = "mariadb" if "mariadb" in self.server_version.lower() else "mysql"

    def __repr__(self) -> str:
        return f"<Connection {self.flavor} {self.server} {self.server_version}>"

    def __enter__(self) -> "Connection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def error(self, exc: BaseException, *, log: str | None = None, position: int | None = None) -> RemoteError:
        return remote_error(exc, self.server, log=log, position=position)

    def query(self, sql: str) -> list[tuple]:
        """The rows of a statement (none for a SET)."""
        try:
            with self._raw.cursor() as cur:
                cur.execute(sql)
                return list(cur.fetchall())
        except (pymysql.err.MySQLError, OSError) as exc:
            raise self.error(exc) from None

    def binary_logs(self) -> list[tuple[str, int]]:
        """SHOW BINARY LOGS: (name, size) of every log the server has, oldest first."""
        return [(str(row[0]), int(row[1])) for row in self.query("SHOW BINARY LOGS")]

    def set_read_timeout(self, seconds: float | None) -> None:
        """How long a read waits for the server (None: for ever)."""
        self._raw._read_timeout = seconds    # PyMySQL applies it before its next read (_read_packet)

    def idle(self) -> bool:
        """Whether the server has sent nothing that waits in the socket: a read may wait for it (what PyMySQL
        already buffered is not seen, so this may say True when a read would not wait; never the reverse)."""
        sock = getattr(self._raw, "_sock", None)
        if sock is None:
            return True
        if getattr(sock, "pending", None) is not None and sock.pending():     # (TLS: decrypted bytes held)
            return False
        try:
            return not select.select([sock], [], [], 0)[0]
        except (OSError, ValueError):
            return True

    # -- the replication commands (protocol.py's payloads, command byte first) -----------------------------
    def command(self, payload: bytes) -> None:
        """Send one command packet (its first byte the command)."""
        try:
            self._raw._execute_command(payload[0], payload[1:])
        except (pymysql.err.MySQLError, OSError) as exc:
            raise self.error(exc) from None

    def read_packet(self) -> bytes:
        """The next packet's payload; an ERR packet raises (PyMySQL's error, for the caller to place)."""
        return self._raw._read_packet()._data

    def ok(self) -> None:
        """Read the OK packet a command answers with (COM_REGISTER_SLAVE)."""
        try:
            self.read_packet()
        except (pymysql.err.MySQLError, OSError) as exc:
            raise self.error(exc) from None

    def close(self) -> None:
        try:
            self._raw.close()
        except Exception:   # noqa: BLE001 - already closed or broken: nothing to tell
            try:
                self._raw._force_close()
            except Exception:   # noqa: BLE001, S110
                pass


def _missing_dependency(message: str) -> str:
    """PyMySQL's message for an authentication plugin it cannot run, with how to get what it lacks."""
    lowered = message.lower()
    if "nacl" in lowered:
        return ("the server asks for MariaDB's ed25519 authentication, which needs PyNaCl: "
                "pip install 'binlog-spec[remote]'")
    if "cryptography" in lowered:
        return ("the server asks for sha256_password / caching_sha2_password over a connection without TLS, "
                "which needs cryptography (pip install 'binlog-spec[remote]'), or use --ssl-mode=REQUIRED")
    return message


def connect(opts: ConnectOptions) -> Connection:
    """Open a connection, authenticated (RemoteError's classes on failure; the password is in none)."""
    # (read_timeout: a server that falls silent in the handshake or a query fails too, not hangs;
    # a dump sets its own, conn.set_read_timeout)
    kwargs: dict[str, Any] = {"user": opts.user or "", "password": opts.password or "",
                              "connect_timeout": opts.connect_timeout_s, "read_timeout": opts.connect_timeout_s,
                              "autocommit": True,
                              "charset": "utf8mb4", "program_name": "binlog-spec"}
    if opts.socket:
        kwargs["unix_socket"] = opts.socket
    else:
        kwargs.update(host=opts.host, port=int(opts.port))
    kwargs.update(_ssl_arguments(opts))
    try:
        raw = pymysql.connect(**kwargs)
    except (pymysql.err.MySQLError, OSError) as exc:
        raise remote_error(exc, opts.address()) from None
    except RuntimeError as exc:      # an auth plugin whose optional dependency is missing
        raise AccessDeniedError(_missing_dependency(str(exc)), server=opts.address()) from None
    return Connection(raw, opts)


def purged_error(conn: Connection, exc: BaseException, log: str, position: int) -> RemoteError:
    """The error of a dump the server refused: a log it no longer has names the oldest it still has."""
    error = conn.error(exc, log=log, position=position)
    if type(error) is RemoteError and error.code == ER_MASTER_FATAL_ERROR_READING_BINLOG:
        if re.search(r"could not find first log file|could not open log file|log file .* not found"
                     r"|could not find gtid state|required binlog files have been purged",
                     error.message, re.IGNORECASE):
            try:        # (on a connection of its own: the dump's is out of step after the error)
                with connect(conn.options) as other:
                    logs = other.binary_logs()
            except RemoteError:
                logs = []
            oldest = logs[0][0] if logs else None
            tail = f"; the oldest log it has is {oldest}" if oldest else ""
            return LogPurgedError(f"the server no longer has this log (purged?){tail}", oldest=oldest,
                                  server=error.server, log=log, position=position, code=error.code)
    return error


__all__ = ["Connection", "connect", "remote_error", "purged_error", "protocol"]
