"""`binlog-spec download`: a byte-exact copy of a server's binary logs into a folder (mysqlbinlog --raw).

Each log is written under its own name, its events' bytes as in the server's file; the events only the
protocol has (remote.dump: RemoteEvent.artificial) are never written. The folder is remote.folder's:
written in whole transactions, readable by every command while it grows.

Where it starts: where the folder ends (its last log of the server's base name, cut back to its last whole
transaction: folder.resume_point), else at FIRST_LOG, else at the server's oldest log. A FIRST_LOG after
the folder's last log starts there (the logs between are not fetched).

It checks each event's place: an event's end position (its header's log_pos, when the server wrote one)
must be the copy's size plus the event's: a server that would leave a gap or send an event twice stops
the download (RemoteError) rather than write it.

Without --stop-never the download ends at the server's last event (a non-blocking dump). With it, it
waits for new events for ever, and when the connection is lost (the server stopped, restarted or crashed,
the connection killed, the network cut: the errors that are RemoteError.retryable, ServerGoneError and
ServerUnreachableError) it drops the transaction in flight, waits (backoff: DownloadOptions.retry_initial_s,
doubled at each failure up to retry_max_s), connects again and goes on from the end of the copy: no gap,
no duplicate. Errors that another try cannot mend (access denied, a missing privilege, a purged log, a
binary log disabled, a misplaced event: not retryable) end it, and so does any error of the first
connection (a wrong host or port is said at once, not retried for ever).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from binlog_spec.binlog import spec
from binlog_spec.errors import DownloadGapError, LogPurgedError, RemoteError, ServerGoneError
from binlog_spec.options import ConnectOptions, DownloadOptions
from binlog_spec.remote.connection import Connection, connect
from binlog_spec.remote.dump import dump_events
from binlog_spec.remote.folder import (LogFile, clear_in_use, local_logs, lock, log_key,
                                      remove_parts, resume_point)

@dataclass
class Progress:
    """What a download did: per log, the bytes it wrote; where the copy ends; the reconnections."""

    written: dict[str, int] = field(default_factory=dict)
    log: str | None = None
    position: int = 0
    reconnects: int = 0


def start_point(conn: Connection, folder: Path, first_log: str | None,
                note: Callable[[str], None] = lambda _line: None) -> tuple[str, int]:
    """(log, position) the download starts at (see the module's notes). A log the server no longer has
    raises LogPurgedError naming the oldest it has; but a copy whose last log is whole (closed by its
    ROTATE_EVENT) goes on with the log after it, if the server has that one."""
    logs = conn.binary_logs()
    if not logs:
        raise RemoteError("the server has no binary log to download", server=conn.server)
    names = [name for name, _size in logs]
    have = local_logs(folder, log_key(names[-1])[0])
    if first_log and (not have or log_key(first_log) > log_key(have[-1])):
        return _kept(conn, names, first_log, spec.LEN_MAGIC)
    if not have:
        return names[0], spec.LEN_MAGIC
    position, closed = resume_point(folder, have[-1],
                                    lambda exc: note(f"{exc}: the copy is cut there and downloaded again"))
    if closed and have[-1] not in names:
        base, number = log_key(have[-1])
        after = [n for n in names if log_key(n) > (base, number)]
        if after and log_key(after[0]) == (base, number + 1):
            return after[0], spec.LEN_MAGIC
    return _kept(conn, names, have[-1], position)


def _kept(conn: Connection, names: list[str], log: str, position: int) -> tuple[str, int]:
    """(log, position), when the server has `log` (else LogPurgedError: a log older than its oldest was
    purged; another name is none of its logs)."""
    if log not in names:
        gone = log_key(log)[0] == log_key(names[0])[0] and log_key(log) < log_key(names[0])
        said = f"no longer has {log}" if gone else f"has no log {log} (its logs: {names[0]} to {names[-1]})"
        raise LogPurgedError(f"the server {said}; the oldest log it has is {names[0]}",
                             oldest=names[0], server=conn.server, log=log, position=position)
    return log, position


class _Copy:
    """The logs being written, from the dump's events."""

    def __init__(self, folder: Path, progress: Progress, server: str):
        self.folder, self.progress, self.server = folder, progress, server
        #: The server's flavor ("mariadb" | "mysql"), set at each connection.
        self.flavor = "mariadb"
        self.log: LogFile | None = None
        #: Where the next dump starts: (log, position), the end of what is written.
        self.resume: tuple[str, int] | None = None

    def add(self, log: str, data: bytes, log_pos: int) -> None:
        cur = self.log
        if cur is None or cur.name != log or cur.closed:
            cur = self._open(log, data, log_pos)
        elif log_pos and log_pos != cur.position + len(data):
            raise self._misplaced(log, log_pos - len(data), cur.position)
        cur.add(data)
        p = self.progress
        p.written[log] = p.written.get(log, 0) + len(data)
        self.resume = (log, max(cur.written, spec.LEN_MAGIC))
        p.log, p.position = self.resume

    def _open(self, log: str, data: bytes, log_pos: int) -> LogFile:
        start = log_pos - len(data) if log_pos else None
        if self.log is not None:
            self.log.close()
        resume = self.resume
        if start == spec.LEN_MAGIC:
            if resume is not None and resume[0] != log and self.flavor == "mysql":
                self._recovered(resume[0])
            self.log = LogFile(self.folder, log, spec.LEN_MAGIC)
        elif resume is not None and resume[0] == log and start in (None, resume[1]):
            self.log = LogFile(self.folder, log, resume[1])
        else:
            raise self._misplaced(log, start, resume[1] if resume and resume[0] == log else spec.LEN_MAGIC)
        return self.log

    def _recovered(self, log: str) -> None:
        """The log before a new one, which the server may have left without its ROTATE_EVENT (it crashed):
        MySQL's crash recovery clears its in-use flag (sql/binlog.cc, MYSQL_BIN_LOG::open_binlog:
        truncate_update_log_file), MariaDB's leaves it set (checked with MariaDB 10.11)."""
        path = self.folder / log
        if path.exists():
            clear_in_use(path)

    def _misplaced(self, log: str, got: int | None, want: int) -> DownloadGapError:
        return DownloadGapError(f"the server sent an event at position {got} where the copy ends at {want}: "
                                "nothing written past it (the copy would have a gap or a duplicate)",
                                server=self.server, log=log, position=want)

    def lost(self) -> None:
        """The connection is lost: the transaction in flight is dropped; the next dump starts after the
        last one written."""
        if self.log is not None:
            self.log.close()
            self.log = None

    def close(self) -> None:
        if self.log is not None:
            self.log.close()
            self.log = None


def download(opts: ConnectOptions, folder: str | os.PathLike, options: DownloadOptions,
             note: Callable[[str], None] | None = None, *, connector: Callable[[ConnectOptions], Connection] = connect,
             sleep: Callable[[float], None] = time.sleep) -> Progress:
    """Copy the server's logs into `folder` (created if need be); see the module's notes. `note` receives a line
    at each reconnection. Returns what was done; raises RemoteError's classes (and OSError for the
    folder). `connector`, `sleep`: for tests."""
    note = note or (lambda _line: None)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    held = lock(folder)
    remove_parts(folder)
    progress = Progress()
    copy = _Copy(folder, progress, opts.address())
    delay = options.retry_initial_s
    connected = False
    try:
        while True:
            conn = None
            try:
                conn = connector(opts)
                copy.flavor, connected = conn.flavor, True
                if copy.resume is None:
                    copy.resume = start_point(conn, folder, options.first_log, note)
                    progress.log, progress.position = copy.resume
                log, position = copy.resume
                for ev in dump_events(conn, log, position, blocking=options.stop_never):
                    if ev.artificial:
                        continue
                    copy.add(ev.log, ev.data, ev.log_pos)
                    delay = options.retry_initial_s     # (a connection that delivered: the backoff starts over)
                if not options.stop_never:
                    return progress
                # (a blocking dump the server ended: it is shutting down)
                raise ServerGoneError("the server ended the dump", server=opts.address(), log=copy.resume[0],
                                      position=copy.resume[1])
            except RemoteError as exc:
                copy.lost()
                if not options.stop_never or not connected or not exc.retryable:
                    raise
                progress.reconnects += 1
                where = f", to go on from {copy.resume[0]} position {copy.resume[1]}" if copy.resume and \
                    exc.log is None else ""
                note(f"{exc}; connecting again in {delay:g} s{where}")
                sleep(delay)
                delay = min(delay * 2, options.retry_max_s)
            finally:
                if conn is not None:
                    conn.close()
    finally:
        copy.close()
        held.close()


__all__ = ["download", "start_point", "Progress"]
