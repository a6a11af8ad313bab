"""The options of a read, parsed once into a picklable Config (every option is described in docs/spark.md)."""
from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

from binlog_spec import api
from binlog_spec.spark.files import FileRef, _is_uri, list_files
from binlog_spec.errors import BinlogSparkError, OptionValueError, UsageError
from binlog_spec.stream import option_parser
from binlog_spec.stream.filters import FilterOptions
from binlog_spec.binlog.gtid import GtidPosition, GtidSet
from binlog_spec.options import ReadOptions, parse_size
from binlog_spec.rows.ddl.schema import SchemaTracker


UTC = dt.timezone.utc
NAME = "binlog"
MODES = ("rows", "events", "transactions", "table", "ddl")
#: How files larger than splitSize are cut: auto (resync where it can be trusted, else scan),
#: resync (byte ranges resolved by their readers, binlog_spec.stream.planning.resync), scan (the header pass).
PLANNINGS = ("auto", "resync", "scan")
DEFAULT_SPLIT_SIZE = 128 << 20
CORRUPT_COLUMN = "_corrupt_record"
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"


def _opt(options, *names: str, default: Any = None) -> Any:
    for n in names:
        if n in options and options[n] is not None and str(options[n]) != "":
            return options[n]
    return default


#: Comma-separated lists (paths, names, ops), as the CLI's repeated options.
_list = option_parser.parse_names


def _bool(value: Any, default: bool) -> bool:
    if value is None:
        return default
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    raise BinlogSparkError(f"not a boolean: {value!r}")


def _datetime(key: str, text: str | None, zone: dt.tzinfo) -> dt.datetime | None:
    """The CLI's date-time forms; without an offset, in the `timeZone` option's zone, UTC by default
    (a Spark job has no TZ of a shell)."""
    try:
        return option_parser.parse_datetime(text, zone)
    except ValueError as exc:
        raise BinlogSparkError(f"{key}: {exc}") from None


def _position(key: str, text: Any) -> int | GtidPosition | None:
    """A byte offset, or a MariaDB GTID position (domain-server-seq,...), as the CLI's."""
    if text is None:
        return None
    try:
        return option_parser.parse_position(text)
    except OptionValueError:
        raise BinlogSparkError(f"{key}: not a byte position (>= 0) or a MariaDB GTID position: {text!r}") from None


def _parsed(key: str, parse, text: Any) -> frozenset:
    """A set option (op, threadId) parsed as the CLI parses it; empty when not given."""
    if text is None:
        return frozenset()
    try:
        return parse(str(text))
    except OptionValueError as exc:
        raise BinlogSparkError(f"{key}: {exc}") from None


#: The CLI's spelling in the row filters' messages (api.row_filter_options, stream.row_filters) -> the source's.
_SPARK_SPELLING = {"--key": "key", "--where": "where", "--table DB.T": ".option('table', 'db.table')",
                   "--schema": "the schema option"}


def spark_spelling(message: str) -> str:
    """A row filter's message with the source's option names instead of the CLI's."""
    return re.sub(r"--table DB\.T|--key\b|--where\b|--schema\b", lambda m: _SPARK_SPELLING[m.group()], message)


def _row_filters(options, mode: str, tables: tuple[str, ...]) -> "api.RowFilterOptions":
    """The `key` and `where` options: the CLI's --key / --where, parsed by its parser (api.row_filter_options:
    `key` needs exactly one `table` db.table without wildcards). The row modes (rows, table) and the
    transactions mode (the CLI's analyze) take them; the events and ddl modes do not (the CLI's events
    command takes no row filter)."""
    key, where = _opt(options, "key"), _opt(options, "where")
    if key is None and where is None:
        return api.RowFilterOptions()
    if mode in ("events", "ddl"):
        raise BinlogSparkError(f"{'key' if key is not None else 'where'}: not with mode={mode}: the row filters "
                               "keep row changes (mode rows, table or transactions)")
    try:
        return api.row_filter_options(None if key is None else str(key), None if where is None else str(where),
                                      tables)
    except UsageError as exc:
        raise BinlogSparkError(spark_spelling(str(exc))) from None


def _size(text: Any) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise BinlogSparkError(str(exc)) from None


def _is_glob(name: str) -> bool:
    return any(ch in name for ch in "*?[,")


@dataclass(frozen=True)
class Config:
    """The options of one read, parsed once (picklable)."""

    paths: tuple[str, ...]
    mode: str = "rows"
    table: str | None = None            # the typed view's "db.table"
    filters: FilterOptions = FilterOptions()
    ops: frozenset[str] = frozenset()
    split_size: int = DEFAULT_SPLIT_SIZE
    on_error: str = "fail"
    recursive: bool = False
    path_glob: str | None = None
    schema_file: str | None = None
    schema_database: str = ""
    replay_ddl: str = "auto"
    #: The ``ddl`` option: a JSON-lines file (or folder) of the input's DDL (stream.planning.ddl), replayed before
    #: each split instead of the planning pass's.
    ddl_file: str | None = None
    planning: str = "auto"
    #: How a file cut by resync is cut: "cost" (pieces of equal estimated reading cost, the event
    #: density sampled in the driver: planning.cost_starts) or "bytes" (of splitSize, its head read only).
    split_by: str = "bytes"
    read: ReadOptions = ReadOptions()
    images: str = "variant"
    before_image: bool = False
    batch_rows: int = 4096
    count_rows: bool = True
    #: The `key` and `where` options (the CLI's --key, --where: stream.row_filters).
    rows: api.RowFilterOptions = api.RowFilterOptions()

    @classmethod
    def from_options(cls, options) -> "Config":
        raw = _opt(options, "paths")
        if raw:
            paths = tuple(json.loads(raw)) if str(raw).lstrip().startswith("[") else _list(raw)
        else:
            p = _opt(options, "path")
            paths = (p,) if p else ()
        if not paths:
            raise BinlogSparkError("no input: use .load(PATH) (a file, a folder, a glob or a URI)")
        table = _opt(options, "table", "tables")
        mode = str(_opt(options, "mode", default="")).lower()
        if not mode:
            mode = "table" if table and not _is_glob(table) else "rows"
        if mode not in MODES:
            raise BinlogSparkError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        typed = None
        tables = _list(table)
        if mode == "table":
            if not table or _is_glob(table) or "." not in table:
                raise BinlogSparkError("the typed view needs .option('table', 'db.table'): one table, no globs")
            typed = table.strip()
        ops = _parsed("op", option_parser.parse_ops, _opt(options, "op", "ops"))    # (the CLI's --op values)
        thread_ids = _parsed("threadId", option_parser.parse_thread_ids, _opt(options, "threadId", "threadIds"))

        def gtids(key: str) -> GtidSet | None:
            text = _opt(options, key)
            try:
                return option_parser.parse_gtid_set(text) if text else None
            except ValueError as exc:
                raise BinlogSparkError(f"{key}: {exc}") from None

        def ints(*keys: str) -> frozenset[int]:
            return frozenset(int(x) for x in _list(_opt(options, *keys)))

        try:
            zone = option_parser.parse_zone(str(_opt(options, "timeZone", default="UTC")))
        except ValueError as exc:
            raise BinlogSparkError(f"timeZone: {exc}") from None
        start_dt = _datetime("startDatetime", _opt(options, "startDatetime"), zone)
        stop_dt = _datetime("stopDatetime", _opt(options, "stopDatetime"), zone)
        if start_dt and stop_dt and stop_dt < start_dt:
            raise BinlogSparkError("stopDatetime is before startDatetime")
        start = _position("startPosition", _opt(options, "startPosition"))
        stop = _position("stopPosition", _opt(options, "stopPosition"))

        filters = option_parser.filter_options(
            databases=_list(_opt(options, "database", "databases")),
            exclude_databases=_list(_opt(options, "excludeDatabase", "excludeDatabases")),
            tables=tables, exclude_tables=_list(_opt(options, "excludeTable", "excludeTables")),
            include_gtids=gtids("includeGtids"), exclude_gtids=gtids("excludeGtids"),
            server_ids=ints("serverId", "serverIds"), exclude_server_ids=ints("excludeServerId", "excludeServerIds"),
            start_datetime=start_dt, stop_datetime=stop_dt, start_position=start, stop_position=stop,
            thread_ids=thread_ids)
        rows = _row_filters(options, mode, tables)
        on_error = str(_opt(options, "onError", default="fail")).lower()
        if on_error not in ("fail", "skip"):
            raise BinlogSparkError(f"onError must be fail or skip, not {on_error!r}")
        images = str(_opt(options, "images", default="variant")).lower()
        if images not in ("variant", "json"):
            raise BinlogSparkError(f"images must be variant or json, not {images!r}")
        replay = str(_opt(options, "replayDdl", default="auto")).lower()
        if replay not in ("auto", "always", "never"):
            raise BinlogSparkError(f"replayDdl must be auto, always or never, not {replay!r}")
        planning = str(_opt(options, "planning", default="auto")).lower()
        if planning not in PLANNINGS:
            raise BinlogSparkError(f"planning must be one of {', '.join(PLANNINGS)}, not {planning!r}")
        split_by = str(_opt(options, "splitBy", default="bytes")).lower()
        if split_by not in ("cost", "bytes"):
            raise BinlogSparkError(f"splitBy must be cost or bytes, not {split_by!r}")
        return cls(
            paths=tuple(str(p) for p in paths), mode=mode, table=typed, filters=filters, ops=ops,
            split_size=_size(_opt(options, "splitSize", default=DEFAULT_SPLIT_SIZE)), on_error=on_error,
            recursive=_bool(_opt(options, "recursiveFileLookup", "recursive"), False),
            path_glob=_opt(options, "pathGlobFilter"), schema_file=_opt(options, "schema"),
            schema_database=_opt(options, "schemaDatabase", default=""), replay_ddl=replay,
            ddl_file=_opt(options, "ddl"),
            planning=planning, split_by=split_by,
            read=ReadOptions(verify_checksums=_bool(_opt(options, "verifyChecksums"), True),
                             expand_payloads=_bool(_opt(options, "expandPayloads"), True),
                             strict=_bool(_opt(options, "strict"), False)),
            images=images, before_image=_bool(_opt(options, "beforeImage"), False),
            batch_rows=int(_opt(options, "batchRows", default=4096)),
            count_rows=_bool(_opt(options, "countRows"), True), rows=rows)

    def files(self) -> list[FileRef]:
        return list_files(list(self.paths), self.recursive, self.path_glob)

    def tracker(self) -> SchemaTracker:
        if not self.schema_file:
            return option_parser.schema_tracker()
        ref = list_files([self.schema_file])[0] if not _is_local(self.schema_file) else None
        if ref is None:
            return option_parser.schema_tracker(self.schema_file, self.schema_database)
        with ref.open() as f:
            return option_parser.schema_tracker(database=self.schema_database,
                                                sql=f.read().decode("utf-8", errors="replace"))


def _is_local(path: str) -> bool:
    return not _is_uri(path) or path.startswith("file://")
