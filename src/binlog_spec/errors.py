"""Typed errors. Every error names the file and byte offset, and the event type where known (a server's
errors, RemoteError: the server, and the log and position where known)."""
from __future__ import annotations


class BinlogError(Exception):
    """A binlog could not be read past some point.

    Every event before `offset` has already been delivered when this is raised.
    """

    def __init__(self, message: str, *, file: str | None = None, offset: int | None = None,
                 event_type: str | None = None):
        super().__init__(message)
        self.message = message
        self.file = file
        self.offset = offset
        self.event_type = event_type

    def __str__(self) -> str:
        where = []
        if self.file is not None:
            where.append(str(self.file))
        if self.offset is not None:
            where.append(f"offset {self.offset}")
        if self.event_type is not None:
            where.append(self.event_type)
        return ": ".join(where + [self.message])

    def to_dict(self) -> dict:
        return {"error": type(self).__name__, "message": self.message, "file": self.file,
                "offset": self.offset, "event_type": self.event_type}


class NotABinlogError(BinlogError):
    """The file does not start with the binlog magic and a FORMAT_DESCRIPTION_EVENT."""


class TruncatedEventError(BinlogError):
    """The file ends inside an event (or inside an event header)."""


class EventSizeError(BinlogError):
    """An event header announces an impossible size."""


class ChecksumError(BinlogError):
    """An event's CRC32 does not match its bytes."""


class MalformedEventError(BinlogError):
    """An event body does not match the layout of its type."""


class DecompressionError(BinlogError):
    """A compressed payload could not be decompressed."""


class EncryptedBinlogError(BinlogError):
    """Events after a START_ENCRYPTION_EVENT are encrypted with a key only the server has."""


class ResyncError(BinlogError):
    """Resync planning (binlog_spec.stream.planning.resync) could not be trusted at a byte offset of a file:
    two neighbouring splits disagree on the transaction boundary between them, or a
    FORMAT_DESCRIPTION_EVENT appears past the file's head. Read the file with planning=scan."""


class MissingTableMapError(BinlogError):
    """A rows event refers to a table id no TABLE_MAP_EVENT has defined."""


class RowsLayoutError(MalformedEventError):
    """A rows event's column count, columns-present bitmaps or row images contradict its TABLE_MAP or
    the bytes it holds (a count above the TABLE_MAP's, images with no column present, a row past the end)."""


class PositionError(ValueError):
    """--start-position names no event boundary of the first file: a usage error, raised before
    anything after the position is delivered. `boundaries`: the event positions around it."""

    def __init__(self, message: str, *, file: str | None = None, position: int | None = None,
                 boundaries: tuple[int | None, int | None] = (None, None)):
        super().__init__(message)
        self.file = file
        self.position = position
        self.boundaries = boundaries


class UsageError(ValueError):
    """A command-line value that cannot be used; the message names the option (exit code 2)."""


class ThreadIdError(UsageError):
    """--thread-id over binlogs that cannot answer it: a row transaction with no QUERY event (MariaDB's), so
    no thread id (stream.thread_filter); the message names the file and offset (exit code 2)."""

    def __init__(self, message: str, *, file: str | None = None, offset: int | None = None):
        super().__init__(message)
        self.file = file
        self.offset = offset


class RowFilterError(UsageError):
    """A row filter (--key, --where) that cannot be applied to a table it meets: no key, a column the table
    lacks, a literal that does not fit the column's type (exit code 2)."""


class SchemaFileError(ValueError):
    """A schema file (--schema) that describes no table: it holds no CREATE TABLE that could be read."""

    def __init__(self, message: str, file: str):
        super().__init__(f"{file}: {message}")
        self.file = file


# --------------------------------------------------------------------------
# Errors below the event level (one value, one row image, one path, one payload): the layer that
# knows the event turns them into a BinlogError with its file and offset. Errors of an option (a
# GTID set, a zone) are usage errors of the CLI and Spark.

class ValueDecodeError(ValueError):
    """The bytes of a column value do not fit its type (or the type has no row format)."""


class RollbackError(BinlogError):
    """A rows event cannot be inverted (partial row images, JSON diffs, an unknown layout)."""


class RewriteError(BinlogError):
    """An event cannot be re-serialised as asked."""


class BinlogSparkError(ValueError):
    """Bad options for the binlog data source (a ValueError, as Spark reports bad options; no file or
    offset is involved)."""


class ColumnTypeChangedError(BinlogError):
    """A rows event of the typed view's table whose TABLE_MAP gives a column another Spark type than
    the DataFrame's schema has for it (an ALTER TABLE ... MODIFY in between): its values cannot be
    put in that column without loss."""


class RowWalkError(ValueError):
    """The rows do not fit the table map (a row image runs past the rows)."""


class SchemaWarning(UserWarning):
    """A DDL statement could not be replayed; the table's columns are forgotten. (Kept for callers
    that filter it; the tracker now says so in SchemaTracker.notes, see rows.decoder.observe_schema.)"""


class JsonPathError(ValueError):
    """A JSON path or JSON diff operation that cannot be read or applied."""


class InexactMatch(ValueError):
    """A value that no WHERE condition can find exactly."""


class SqlGenerationError(BinlogError):
    """A row change cannot be written as SQL that would run (names unknown, partial images)."""


class RowRefusedError(SqlGenerationError):
    """One row cannot be written exactly (a column of its WHERE clause no condition matches): the
    script leaves that row out, with a comment in its place, and goes on (output/sql/script.py)."""


class GtidSetError(ValueError):
    """A GTID, GTID set or GTID position in text that does not parse."""


class ZoneError(ValueError):
    """A time zone name or offset that is not known."""


class PayloadError(ValueError):
    """A TRANSACTION_PAYLOAD_EVENT whose payload cannot be expanded (unknown compression, bad size)."""


class OptionValueError(ValueError):
    """An option value that does not parse (stream.option_parser); the message says what is wrong with
    the value, the CLI or Spark names the option."""


# --------------------------------------------------------------------------
# A server read over the replication protocol (binlog_spec.remote): exit code 7 on the command line.

class RemoteError(Exception):
    """A server could not be reached or read. Names the server (host:port or socket), and the log and
    position when known; never the password. `code`: the server's or client's error number, if any.
    `retryable`: whether the same request may succeed later (a server restarting, a network cut), for a
    reader that reconnects; the others need a change (a password, a privilege, a log name)."""

    retryable = False

    def __init__(self, message: str, *, server: str | None = None, log: str | None = None,
                 position: int | None = None, code: int | None = None):
        super().__init__(message)
        self.message = message
        self.server = server
        self.log = log
        self.position = position
        self.code = code

    def __str__(self) -> str:
        where = [self.server] if self.server else []
        if self.log is not None:
            where.append(self.log if self.position is None else f"{self.log} position {self.position}")
        return ": ".join(where + [self.message])

    def to_dict(self) -> dict:
        return {"error": type(self).__name__, "message": self.message, "server": self.server, "log": self.log,
                "position": self.position, "code": self.code}


class ServerUnreachableError(RemoteError):
    """No connection could be made: an unknown host, nothing listening, a network cut, a TLS handshake
    refused or a certificate that does not verify."""

    retryable = True


class AccessDeniedError(RemoteError):
    """The server refused the user and password (or the authentication plugin)."""


class PrivilegeError(RemoteError):
    """The user lacks a privilege the command needs: `privilege` names it as the server does
    (REPLICATION SLAVE, BINLOG MONITOR, REPLICATION CLIENT)."""

    def __init__(self, message: str, *, privilege: str | None = None, **where):
        super().__init__(message, **where)
        self.privilege = privilege


class LogPurgedError(RemoteError):
    """The log asked for is no longer on the server (purged, or never was): `oldest` names the oldest log
    the server still has (None when it has none or would not say)."""

    def __init__(self, message: str, *, oldest: str | None = None, **where):
        super().__init__(message, **where)
        self.oldest = oldest


class BinlogDisabledError(RemoteError):
    """The server writes no binary log (started without --log-bin)."""


class ServerGoneError(RemoteError):
    """The connection was lost while reading: the server stopped or restarted, the connection was
    killed, or nothing came within the timeout."""

    retryable = True


class DownloadGapError(RemoteError):
    """binlog-spec download: the server sent an event that is not where the copy ends (writing it would
    leave a gap or a duplicate); nothing is written past the copy's end."""
