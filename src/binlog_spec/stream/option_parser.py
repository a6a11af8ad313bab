"""The one parser of the option values the command line and the Spark data source share: text ->
the frozen FilterOptions (names, GTID sets, server ids, times, positions) and the SchemaTracker a
run starts with (--schema FILE / schema, --schema-database / schemaDatabase, --default-charset).

It lives in the stream layer, the lowest that owns the types it builds (FilterOptions here, the
SchemaTracker and charsets of rows, the GTIDs and zones of binlog); `binlog_spec.options` sits under
every layer and cannot import them. Each parser raises a ValueError (OptionValueError, GtidSetError,
ZoneError) whose message says what is wrong with the value; the shells name the option: the CLI as an argparse
type error or a UsageError (exit 2), Spark as a BinlogSparkError with its option key.
"""
from __future__ import annotations

from datetime import datetime, tzinfo
from typing import Any, Iterable

from binlog_spec.binlog import timezones
from binlog_spec.binlog.gtid import GtidPosition, GtidSet, GtidSetError
from binlog_spec.errors import OptionValueError
from binlog_spec.stream.filters import FilterOptions
from binlog_spec.stream.thread_filter import parse_ops, parse_thread_ids  # noqa: F401  (--op, --thread-id)

#: Re-exported: 'UTC', '+08:00', 'Asia/Shanghai' -> tzinfo (ZoneError).
parse_zone = timezones.parse_zone


def parse_names(values: Any) -> tuple[str, ...]:
    """Names and globs: repeated values (a list) and comma-separated lists, flattened, blanks dropped."""
    if not values:
        return ()
    if not isinstance(values, (list, tuple)):
        values = (values,)
    return tuple(n.strip() for v in values for n in str(v).split(",") if n.strip())


def parse_gtid_set(text: str) -> GtidSet:
    """uuid[:tag]:1-5,... or MariaDB domain-server-seq[-last],... (GtidSetError)."""
    return GtidSet.parse(text)


def parse_server_id(text: str) -> int:
    """A server id, 0 to 4294967295."""
    try:
        value = int(text)
    except ValueError:
        raise OptionValueError(f"not a server id: {text!r}") from None
    if not 0 <= value <= 0xFFFFFFFF:
        raise OptionValueError(f"a server id is 0 to 4294967295, not {value}")
    return value


def parse_position(text: object) -> int | GtidPosition:
    """A byte offset (>= 0), or a MariaDB GTID position (domain-server-seq[,...]), as mariadb-binlog takes."""
    t = str(text).strip()
    if t.isdigit():
        return int(t)
    if t.startswith("-") and t[1:].isdigit():
        raise OptionValueError(f"a position cannot be negative: {text}")
    try:
        return GtidPosition.parse(t)
    except GtidSetError:
        raise OptionValueError(f"not a byte position or a MariaDB GTID (domain-server-seq): {text!r}") from None


def parse_datetime(text: str | None, zone: tzinfo) -> datetime | None:
    """The date-time forms of timezones.parse_datetime, read in `zone` unless the text gives an
    offset; None for no text."""
    return timezones.parse_datetime(str(text), zone) if text else None


def parse_charset(text: str) -> int:
    """A character set or collation name -> its collation id."""
    from binlog_spec.rows.charsets import charset_collation
    collation = charset_collation(text)
    if collation is None:
        raise OptionValueError(f"unknown character set or collation: {text!r}")
    return collation


def filter_options(*, databases: tuple[str, ...] = (), exclude_databases: tuple[str, ...] = (),
                   tables: tuple[str, ...] = (), exclude_tables: tuple[str, ...] = (),
                   include_gtids: GtidSet | None = None, exclude_gtids: GtidSet | None = None,
                   server_ids: Iterable[int] = (), exclude_server_ids: Iterable[int] = (),
                   start_datetime: datetime | None = None, stop_datetime: datetime | None = None,
                   start_position: int | GtidPosition | None = None,
                   stop_position: int | GtidPosition | None = None, ops: Iterable[str] = (),
                   thread_ids: Iterable[int] = ()) -> FilterOptions:
    """The frozen FilterOptions of parsed values; a position is a byte offset or a MariaDB GTID
    position (parse_position), each put in its own field."""
    start, stop = start_position, stop_position
    return FilterOptions(
        databases=databases, exclude_databases=exclude_databases, tables=tables, exclude_tables=exclude_tables,
        include_gtids=include_gtids, exclude_gtids=exclude_gtids,
        server_ids=frozenset(server_ids), exclude_server_ids=frozenset(exclude_server_ids),
        start_datetime=start_datetime, stop_datetime=stop_datetime,
        start_position=start if isinstance(start, int) else None,
        stop_position=stop if isinstance(stop, int) else None,
        start_gtid=start if isinstance(start, GtidPosition) else None,
        stop_gtid=stop if isinstance(stop, GtidPosition) else None,
        ops=frozenset(ops), thread_ids=frozenset(thread_ids))


def schema_tracker(file: str | None = None, database: str = "", default_charset: int | None = None,
                   sql: str | None = None):
    """The schema a run starts with: the tables of a schema file (mysqldump --no-data) as they were at
    the start of the first file, or none. `database`: the database of the file's unqualified tables;
    `default_charset`: the charset of text columns no DDL gives one. `sql`: the file's text when the
    caller read it itself (a remote file): loaded as it is, without from_file's check that it holds
    a CREATE TABLE."""
    from binlog_spec.rows.ddl.schema import SchemaTracker     # (sqlglot, imported only when a schema is tracked)
    if sql is not None:
        tracker = SchemaTracker(database, default_charset)
        tracker.load_sql(sql)
        return tracker
    if file:
        return SchemaTracker.from_file(file, database, default_charset)
    return SchemaTracker(database, default_charset)
