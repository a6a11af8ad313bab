"""The frozen options objects every layer shares: the reader's (ReadOptions) and the outputs' (SqlOptions and
ScriptOptions for the SQL script, Base64Options for the base64 script, WriteOptions for the binlog output,
AnalyzeOptions for the analysis), and how to reach a server (ConnectOptions: remote.connection). The CLI
builds them from its arguments (cli.arguments, cli.remote_arguments), the Spark source from its .option()
values (spark.options), a program directly; binlog_spec.api takes them. The filters'
options are stream.filters.FilterOptions, which api re-exports with the option values' parsers
(stream.option_parser): this module imports nothing of the package."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timezone, tzinfo
from typing import Any, Mapping


@dataclass(frozen=True)
class ReadOptions:
    #: Verify each event's CRC32 when the FDE announces one.
    verify_checksums: bool = True
    #: Yield the events inside TRANSACTION_PAYLOAD_EVENTs (after the payload event itself).
    expand_payloads: bool = True
    #: Decompress MariaDB compressed events (QUERY_COMPRESSED, *_ROWS_COMPRESSED) in place.
    decompress: bool = True
    #: Raise MalformedEventError when a body does not match its type's layout. When False (the
    #: default) such an event is still yielded, with `error` set and its body kept raw: the event
    #: framing (sizes, checksum) is intact, so the stream goes on.
    strict: bool = False
    #: Read buffer size in bytes.
    buffer_size: int = 1 << 20
    #: The event type codes whose bodies are parsed as the events are read (None: every type). The
    #: body of another type is parsed only if its fields are asked for: an event whose body nothing
    #: reads costs its header, its CRC32 check and a slice. Its malformed body is then never reported;
    #: one parsed late gives the error it would have given when read (strict: MalformedEventError
    #: raised where the fields are asked for; otherwise `error` set then). The FORMAT_DESCRIPTION_EVENT,
    #: and TRANSACTION_PAYLOAD_EVENT when payloads are expanded, are always parsed as read, and so are
    #: the events inside a payload.
    parse_bodies: frozenset[int] | None = None


DEFAULT_OPTIONS = ReadOptions()


@dataclass(frozen=True)
class SqlOptions:
    """How row changes become statements (output.sql.statements)."""

    #: INSERTs with a column list (--complete-insert).
    complete_insert: bool = False
    #: REPLACE for inserts and updates (--replace).
    replace: bool = False
    #: The statements of a rollback (which row images must be whole: output.sql.writable).
    rollback: bool = False
    #: old schema -> new schema
    rewrite_db: dict = field(default_factory=dict)
    #: Write JSON as CAST(... AS JSON) (MySQL); MariaDB's JSON is text.
    mysql_json: bool = True
    #: An UPDATE sets only the columns whose value changed, found by its key (--minimal-update:
    #: output.sql.minimal); a rollback's conflict check then works per column.
    minimal_update: bool = False


@dataclass(frozen=True)
class ScriptOptions:
    """The SQL script (sql --sql, --sql2: output.sql.script; api.write_sql)."""

    sql: SqlOptions = SqlOptions()
    #: Comment every statement out (for reading), with its position and GTID (--sql); else executable (--sql2).
    commented: bool = False
    #: The zone of the times in the comments.
    tz: tzinfo = timezone.utc


@dataclass(frozen=True)
class Base64Options:
    """The base64 script (sql's default output, as mysqlbinlog writes it: output.base64.script;
    api.write_base64)."""

    #: 1: the ``###`` pseudo-SQL of every row under its BINLOG block; 2: with column types.
    verbose: int = 0
    #: No GTIDs: ``SET @@SESSION.GTID_NEXT='AUTOMATIC'`` for MySQL, no gtid_seq_no for MariaDB.
    skip_gtids: bool = False
    #: The zone of the times in the ``#`` comments (the tools print the local zone, TZ).
    tz: tzinfo = timezone.utc


@dataclass(frozen=True)
class WriteOptions:
    """The events rewritten: the binlog output (output.rewriter; api.write_binlog), and the events under
    the base64 script's BINLOG blocks."""

    #: old schema -> new schema, for TABLE_MAP events and the default database of statements.
    rewrite_db: Mapping[str, str] = field(default_factory=dict)
    #: Invert the row events: transactions last first, rows events in reverse within each.
    rollback: bool = False
    #: Whether the reader expanded TRANSACTION_PAYLOAD_EVENTs (their inner events follow them):
    #: the payload event is then dropped and its inner events written as plain events.
    payloads_expanded: bool = True
    #: Leave the GTIDs out: MySQL GTID events are dropped, a MariaDB GTID event becomes a BEGIN
    #: statement (or nothing, for a standalone DDL), so that the server replaying the output gives
    #: the transactions GTIDs of its own.
    skip_gtids: bool = False
    #: Rollback: hand the MariaDB sequence numbers of the inverted transactions out again in
    #: ascending order (each domain's sequence must grow for mariadb-binlog and strict servers).
    renumber_gtids: bool = True


@dataclass(frozen=True)
class AnalyzeOptions:
    """The analysis report (analysis.collector; api.analyze)."""

    top: int = 20
    sort: str = "bytes"
    bucket_s: int = 60
    big_trx_bytes: int = 1 << 20
    long_trx_seconds: float = 10.0
    #: The filters the events were selected by (a stream.filters.FilterOptions; None: no filter): the
    #: report names them, and its times (first and last event, timeline) are then those of the kept
    #: transactions, not of the control events (FORMAT_DESCRIPTION, ROTATE, GTID_LIST, ...) every
    #: selection keeps whatever their time.
    filters: Any = None
    #: The row filters the rows events were reduced by (a stream.row_filters.RowFilterOptions: --key,
    #: --where; None: none): the report names them too.
    row_filters: Any = None


#: Size units, powers of 1024 ("1 MiB"): K, KB, KiB, M, ... (case-insensitive), B for bytes.
_SIZE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: object) -> int:
    """'1048576', '1M', '1MiB', '1 mb', '64m', '1.5G' -> bytes (powers of 1024). ValueError otherwise."""
    import re

    t = str(text).strip().lower().replace(" ", "")
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([kmgt]?)(i?b)?", t)
    if not m or (m.group(3) and not m.group(2) and m.group(3) != "b"):
        raise ValueError(f"not a size: {text!r} (bytes, or a number with K, M, G, KiB, MiB or GiB)")
    return int(float(m.group(1)) * _SIZE_UNITS[m.group(2)])


#: TLS modes of ConnectOptions.ssl_mode, as the mysql clients spell them (--ssl-mode).
SSL_MODES = ("DISABLED", "PREFERRED", "REQUIRED", "VERIFY_CA", "VERIFY_IDENTITY")


@dataclass(frozen=True)
class ConnectOptions:
    """How to reach a server's binary logs (remote.connection.connect): the CLI builds it from -R's options
    (cli.remote_arguments), a program directly. The password is never shown (no repr, no error text)."""

    host: str = "localhost"
    port: int = 3306
    #: A Unix socket path: used instead of host and port when set.
    socket: str | None = None
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    #: DISABLED, PREFERRED (TLS when the server offers it), REQUIRED, VERIFY_CA, VERIFY_IDENTITY (SSL_MODES);
    #: None: VERIFY_CA when ssl_ca is given, else PREFERRED.
    ssl_mode: str | None = None
    ssl_ca: str | None = None
    ssl_cert: str | None = None
    ssl_key: str | None = None
    #: The server id a dump registers with (--connection-server-id). None: a random one per dump, so that
    #: two dumps never take each other's place (a server ends the older dump of a server id it sees again).
    connection_server_id: int | None = None
    #: The option file whose [client] group was read (informative: the values above are already its own).
    defaults_file: str | None = None
    #: How often the server sends a heartbeat while it has nothing to send (blocking dumps).
    heartbeat_s: float = 1.0
    #: Seconds to wait for the TCP connection.
    connect_timeout_s: float = 10.0

    def address(self) -> str:
        """host:port, or the socket path: how errors name the server."""
        return self.socket if self.socket else f"{self.host}:{self.port}"


@dataclass(frozen=True)
class DownloadOptions:
    """What `binlog-spec download` copies and how it follows the server (remote.download)."""

    #: The log to start at when the folder holds none of the server's logs, or only older ones (None: the
    #: server's oldest).
    first_log: str | None = None
    #: Follow the server for ever, connecting again when the connection is lost (--stop-never).
    stop_never: bool = False
    #: The first wait before connecting again (--stop-never), doubled at each failure up to retry_max_s.
    retry_initial_s: float = 0.1
    retry_max_s: float = 10.0
