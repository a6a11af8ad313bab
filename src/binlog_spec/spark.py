"""Binlogs as Spark DataFrames: a Spark 4 Python data source named ``binlog``.

    from binlog_spec.spark import register
    register(spark)                                   # once per session
    df = spark.read.format("binlog").load("/data/binlogs/")              # row changes
    df = spark.read.format("binlog").option("mode", "events").load(p)   # events
    df = spark.read.format("binlog").option("mode", "transactions").load(p)
    df = spark.read.format("binlog").option("table", "shop.orders").load(p)  # typed columns

Built on ``pyspark.sql.datasource`` (DataSource / DataSourceReader): planning
lists the files, cuts files larger than ``splitSize`` at transaction
boundaries (see binlog_spec.spark_scan), and every partition is read by the
library's own reader and row decoder in a Python worker, which yields
``pyarrow.RecordBatch``es. VARIANT columns are written directly (Arrow struct
``value``/``metadata``); ``.option("images", "json")`` writes JSON text instead
(faster), and `parse_images` turns it into VARIANT with Spark's ``parse_json``.

Every option, the schemas and the semantics are described in docs/spark.md.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import json
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import pyarrow as pa
from pyspark.sql.datasource import (DataSource, DataSourceReader, EqualNullSafe, EqualTo, Filter, GreaterThan,
                                    GreaterThanOrEqual, In, InputPartition, IsNotNull, IsNull, LessThan,
                                    LessThanOrEqual, Not, StringContains, StringEndsWith, StringStartsWith)
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import (ArrayType, BooleanType, DataType, DecimalType, DoubleType, IntegerType, LongType,
                               StringType, StructField, StructType, TimestampType, VariantType)

from binlog_spec import jsonenc, spark_scan, spark_types, spark_variant, spec, timezones
from binlog_spec.errors import BinlogError
from binlog_spec.filters import FilterOptions, Transactions, filter_events
from binlog_spec.gtidset import GtidPosition, GtidSet
from binlog_spec.options import ReadOptions, parse_size
from binlog_spec.rows import ROW_OPS, RowDecoder, observe_schema
from binlog_spec.schema import SchemaTracker
from binlog_spec.tablemap import TableDef
from binlog_spec.txsummary import Summarizer

ET = spec.EventType
UTC = dt.timezone.utc
NAME = "binlog"
MODES = ("rows", "events", "transactions", "table")
DEFAULT_SPLIT_SIZE = 128 << 20
CORRUPT_COLUMN = "_corrupt_record"
PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"

# ------------------------------------------------------------------------------ schemas
EVENT_FIELDS = [
    ("file", StringType()), ("pos", LongType()), ("end_log_pos", LongType()), ("type", StringType()),
    ("type_code", IntegerType()), ("timestamp", TimestampType()), ("server_id", LongType()),
    ("size", LongType()), ("flags", IntegerType()), ("checksum", LongType()), ("payload_pos", LongType()),
    ("payload_offset", LongType()), ("error", StringType()), ("body", VariantType()),
]
#: Keys of Event.to_dict() that are columns of the events mode; the rest is `body`.
EVENT_HEADER_KEYS = frozenset(name for name, _ in EVENT_FIELDS) - {"body"}
ROW_FIELDS = [
    ("file", StringType()), ("pos", LongType()), ("end_log_pos", LongType()), ("timestamp", TimestampType()),
    ("server_id", LongType()), ("gtid", StringType()), ("xid", DecimalType(20, 0)), ("schema", StringType()),
    ("table", StringType()), ("op", StringType()), ("before", VariantType()), ("after", VariantType()),
    ("row_index", IntegerType()),
]
TX_FIELDS = [
    ("file", StringType()), ("start_pos", LongType()), ("end_pos", LongType()), ("bytes", LongType()),
    ("begin_time", TimestampType()), ("commit_time", TimestampType()), ("commit_time_source", StringType()),
    ("original_commit_time", TimestampType()), ("duration_s", DoubleType()), ("server_id", LongType()),
    ("gtid", StringType()), ("xid", DecimalType(20, 0)), ("events", LongType()), ("rows", LongType()),
    ("inserts", LongType()), ("updates", LongType()), ("deletes", LongType()),
    ("tables", ArrayType(StringType())), ("complete", BooleanType()),
]
#: Columns the typed table view adds after the table's own.
TABLE_META_FIELDS = [
    ("_op", StringType()), ("_file", StringType()), ("_pos", LongType()), ("_end_log_pos", LongType()),
    ("_row_index", IntegerType()), ("_timestamp", TimestampType()), ("_server_id", LongType()),
    ("_gtid", StringType()),
]


class BinlogSparkError(ValueError):
    """Bad options for the binlog data source."""


class ColumnTypeChangedError(BinlogError):
    """A rows event of the typed view's table whose TABLE_MAP gives a column another Spark type than
    the DataFrame's schema has for it (an ALTER TABLE ... MODIFY in between): its values cannot be
    put in that column without loss."""


# ------------------------------------------------------------------------------ options
def _opt(options, *names: str, default: Any = None) -> Any:
    for n in names:
        if n in options and options[n] is not None and str(options[n]) != "":
            return options[n]
    return default


def _list(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    return tuple(p.strip() for p in str(value).split(",") if p.strip())


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
    """The CLI's date-time forms (timezones.parse_datetime); without an offset, in the `timeZone`
    option's zone, UTC by default (a Spark job has no TZ of a shell)."""
    if not text:
        return None
    try:
        return timezones.parse_datetime(str(text), zone)
    except ValueError as exc:
        raise BinlogSparkError(f"{key}: {exc}") from None


def _position(key: str, text: Any) -> int | GtidPosition | None:
    """A byte offset, or a MariaDB GTID position (domain-server-seq,...), as the CLI's."""
    if text is None:
        return None
    t = str(text).strip()
    if t.isdigit():
        return int(t)
    try:
        return GtidPosition.parse(t)
    except ValueError:
        raise BinlogSparkError(f"{key}: not a byte position (>= 0) or a MariaDB GTID position: {text!r}") from None


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
    read: ReadOptions = ReadOptions()
    images: str = "variant"
    before_image: bool = False
    batch_rows: int = 4096
    count_rows: bool = True

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
        ops = frozenset(o.lower() for o in _list(_opt(options, "op", "ops")))
        if ops - {"insert", "update", "delete"}:
            raise BinlogSparkError(f"op must be insert, update and/or delete, not {sorted(ops)}")

        def gtids(key: str) -> GtidSet | None:
            text = _opt(options, key)
            try:
                return GtidSet.parse(text) if text else None
            except ValueError as exc:
                raise BinlogSparkError(f"{key}: {exc}") from None

        def ints(*keys: str) -> frozenset[int]:
            return frozenset(int(x) for x in _list(_opt(options, *keys)))

        try:
            zone = timezones.parse_zone(str(_opt(options, "timeZone", default="UTC")))
        except ValueError as exc:
            raise BinlogSparkError(f"timeZone: {exc}") from None
        start_dt = _datetime("startDatetime", _opt(options, "startDatetime"), zone)
        stop_dt = _datetime("stopDatetime", _opt(options, "stopDatetime"), zone)
        if start_dt and stop_dt and stop_dt < start_dt:
            raise BinlogSparkError("stopDatetime is before startDatetime")
        start = _position("startPosition", _opt(options, "startPosition"))
        stop = _position("stopPosition", _opt(options, "stopPosition"))

        filters = FilterOptions(
            databases=_list(_opt(options, "database", "databases")),
            exclude_databases=_list(_opt(options, "excludeDatabase", "excludeDatabases")),
            tables=tables, exclude_tables=_list(_opt(options, "excludeTable", "excludeTables")),
            include_gtids=gtids("includeGtids"), exclude_gtids=gtids("excludeGtids"),
            server_ids=ints("serverId", "serverIds"), exclude_server_ids=ints("excludeServerId", "excludeServerIds"),
            start_datetime=start_dt, stop_datetime=stop_dt,
            start_position=start if isinstance(start, int) else None,
            stop_position=stop if isinstance(stop, int) else None,
            start_gtid=start if isinstance(start, GtidPosition) else None,
            stop_gtid=stop if isinstance(stop, GtidPosition) else None)
        on_error = str(_opt(options, "onError", default="fail")).lower()
        if on_error not in ("fail", "skip"):
            raise BinlogSparkError(f"onError must be fail or skip, not {on_error!r}")
        images = str(_opt(options, "images", default="variant")).lower()
        if images not in ("variant", "json"):
            raise BinlogSparkError(f"images must be variant or json, not {images!r}")
        replay = str(_opt(options, "replayDdl", default="auto")).lower()
        if replay not in ("auto", "always", "never"):
            raise BinlogSparkError(f"replayDdl must be auto, always or never, not {replay!r}")
        return cls(
            paths=tuple(str(p) for p in paths), mode=mode, table=typed, filters=filters, ops=ops,
            split_size=_size(_opt(options, "splitSize", default=DEFAULT_SPLIT_SIZE)), on_error=on_error,
            recursive=_bool(_opt(options, "recursiveFileLookup", "recursive"), False),
            path_glob=_opt(options, "pathGlobFilter"), schema_file=_opt(options, "schema"),
            schema_database=_opt(options, "schemaDatabase", default=""), replay_ddl=replay,
            read=ReadOptions(verify_checksums=_bool(_opt(options, "verifyChecksums"), True),
                             expand_payloads=_bool(_opt(options, "expandPayloads"), True),
                             strict=_bool(_opt(options, "strict"), False)),
            images=images, before_image=_bool(_opt(options, "beforeImage"), False),
            batch_rows=int(_opt(options, "batchRows", default=4096)),
            count_rows=_bool(_opt(options, "countRows"), True))

    def files(self) -> list[spark_scan.FileRef]:
        return spark_scan.list_files(list(self.paths), self.recursive, self.path_glob)

    def tracker(self) -> SchemaTracker:
        if not self.schema_file:
            return SchemaTracker()
        ref = spark_scan.list_files([self.schema_file])[0] if not _is_local(self.schema_file) else None
        if ref is None:
            return SchemaTracker.from_file(self.schema_file, self.schema_database)
        with ref.open() as f:
            tracker = SchemaTracker(self.schema_database)
            tracker.load_sql(f.read().decode("utf-8", errors="replace"))
            return tracker


def _is_local(path: str) -> bool:
    return not spark_scan._is_uri(path) or path.startswith("file://")


# -------------------------------------------------------------------------- the source
class BinlogDataSource(DataSource):
    """``spark.read.format("binlog")``: MySQL/MariaDB binlogs, read offline (see docs/spark.md)."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def _config(self) -> Config:
        cfg = self.__dict__.get("_cfg")
        if cfg is None:
            cfg = self.__dict__["_cfg"] = Config.from_options(self.options)
        return cfg

    def table_def(self) -> TableDef | None:
        """The typed view's table, from the first TABLE_MAP of it in the input (or the schema file)."""
        cfg = self._config()
        if cfg.mode != "table":
            return None
        if "_table" not in self.__dict__:
            self.__dict__["_table"] = find_table(cfg)
        return self.__dict__["_table"]

    def schema(self) -> StructType:
        return output_schema(self._config(), self.table_def())

    def reader(self, schema: StructType) -> DataSourceReader:
        cfg = self._config()
        cls = BinlogPushdownReader if _pushdown_allowed(self.options) else BinlogReader
        return cls(cfg, schema, self.table_def())


#: For a module named ``pyspark_binlog`` (Spark's automatic registration looks for ``DefaultSource``).
DefaultSource = BinlogDataSource


def register(spark, pushdown: bool = False) -> None:
    """Register the ``binlog`` format in a SparkSession. `pushdown` also turns on Spark's Python
    data source filter pushdown (``spark.sql.python.filterPushdown.enabled``), which a read
    uses only with ``.option("pushFilters", "true")`` (see `_pushdown_allowed`)."""
    spark.dataSource.register(BinlogDataSource)
    if pushdown:
        spark.conf.set(PUSHDOWN_CONF, "true")


def parse_images(df, columns: Sequence[str] = ("before", "after", "body")):
    """With ``.option("images", "json")``: turn the JSON text columns into VARIANT
    (Spark's ``parse_json``, in the JVM). Columns the DataFrame lacks are left alone."""
    from pyspark.sql import functions as F
    for c in columns:
        if c in df.columns:
            df = df.withColumn(c, F.parse_json(F.col(c)))
    return df


def _pushdown_allowed(options) -> bool:
    """Whether the reader implements pushFilters: only with ``.option("pushFilters", "true")``.

    Off by default because Spark 4.3 caches a Python source's planned read (partitions and
    reader, `PythonDataSourceV2.readInfo`) on the DataFrame's source object and replaces it only
    when a later query pushes filters again: a query with no pushable filter run on a DataFrame
    after one that pushed filters reuses the earlier reader, pushed filters included, and so
    loses rows. Without pushFilters the cached reader holds no filter and every query is right.

    With ``spark.sql.python.filterPushdown.enabled`` off (Spark's default), a reader that
    implements pushFilters is an error (DATA_SOURCE_PUSHDOWN_DISABLED). The planning worker
    that makes that check has the setting in a local variable of its caller frame,
    ``enable_pushdown``: when it is False the reader without pushFilters is handed out, so
    ``pushFilters=true`` degrades to no pushdown instead of failing. That variable is pyspark
    internals (4.3): where no frame has it, the read fails with a BinlogSparkError saying so
    rather than guess (tests/test_spark.py pins it on the installed pyspark).
    """
    if not _bool(_opt(options, "pushFilters"), False):
        return False
    enabled = _planning_pushdown_setting()
    if enabled is None:
        import pyspark
        raise BinlogSparkError(
            f"pushFilters=true: cannot tell whether {PUSHDOWN_CONF} is on: pyspark {pyspark.__version__}'s "
            "planning worker (pyspark/sql/worker/plan_data_source_read.py, _main) no longer has the local "
            "variable enable_pushdown this option reads (tested with pyspark 4.3.0); drop the option, "
            "Spark then filters after the read")
    return enabled


#: What `_planning_pushdown_setting` looks for: the frames above BinlogDataSource.reader.
_PUSHDOWN_LOCAL = "enable_pushdown"


#: The worker that hands a reader Spark's filters; Spark runs it only with pushdown on.
_PUSHDOWN_WORKER = "data_source_pushdown_filters.py"


def _planning_pushdown_setting() -> bool | None:
    """Whether the pyspark worker asking for a reader has filter pushdown on (pyspark internals,
    4.3): ``pyspark.sql.worker.plan_data_source_read._main`` has it in its local variable
    `enable_pushdown`; ``pyspark.sql.worker.data_source_pushdown_filters._main`` runs only when
    it is on. None when neither calls (another pyspark, or not called by Spark)."""
    frame = sys._getframe(1)
    for _ in range(6):
        if frame is None:
            return None
        if frame.f_code.co_name == "_main":
            if _PUSHDOWN_LOCAL in frame.f_locals:
                return bool(frame.f_locals[_PUSHDOWN_LOCAL])
            if frame.f_code.co_filename.endswith(_PUSHDOWN_WORKER):
                return True
        frame = frame.f_back
    return None


def output_schema(cfg: Config, table: TableDef | None = None) -> StructType:
    if cfg.mode == "events":
        fields = list(EVENT_FIELDS)
    elif cfg.mode == "rows":
        fields = list(ROW_FIELDS)
    elif cfg.mode == "transactions":
        fields = list(TX_FIELDS)
    else:
        fields = table_fields(table) + list(TABLE_META_FIELDS)
    if cfg.images == "json":
        fields = [(n, StringType() if isinstance(t, VariantType) and n in ("before", "after", "body") else t)
                  for n, t in fields]
    if cfg.on_error == "skip":
        fields.append((CORRUPT_COLUMN, StringType()))
    return StructType([StructField(n, t, True) for n, t in fields])


def table_fields(table: TableDef) -> list[tuple[str, DataType]]:
    return [(name, spark_types.column_type(col)) for name, col in zip(table.names, table.columns)]


# ---------------------------------------------------------------- typed view discovery
def _table_probe(db: str, name: str):
    needle_db, needle_t = db.encode("utf-8"), name.encode("utf-8")

    def probe(pos: int, ev: bytes, fde, res) -> TableDef | None:
        if needle_t not in ev or needle_db not in ev:
            return None
        try:
            fields = spec.body_fields(spec.parse_event(ev, fde), spec.parse_header(ev[:19]))
        except spec.SpecError:
            return None
        if fields.get("schema") != db or fields.get("table") != name:
            return None
        return TableDef.from_fields(fields, res.mariadb)
    return probe


def _replay(tracker: SchemaTracker, statements) -> None:
    for _pos, db, query in statements:
        tracker.observe_query(db, query)


def find_table(cfg: Config) -> TableDef:
    """The typed view's columns: the first TABLE_MAP of the table in the input, with names and
    signs completed by the schema file and the DDL before it; else the schema file alone."""
    db, _, name = cfg.table.partition(".")
    trackers: dict[tuple[str, str], SchemaTracker] = {}
    probe = _table_probe(db, name)
    for ref in cfg.files():
        key = sequence_key(ref.name)
        if key not in trackers:          # the schema file is parsed once a sequence, not once a file
            trackers[key] = cfg.tracker()
        tracker = trackers[key]
        res = spark_scan.scan_file(ref, ddl=cfg.replay_ddl != "never", verify_checksums=False, probe=probe)
        _replay(tracker, spark_scan.ddl_statements(res))  # up to that TABLE_MAP, when found
        found: TableDef | None = res.probe_result
        if found is not None:
            return tracker.complete(found)
    cols = cfg.tracker().columns(db, name)
    if cols is None:
        raise BinlogSparkError(f"table {cfg.table}: no TABLE_MAP_EVENT of it in the input and no CREATE TABLE "
                               "for it in the schema option's file")
    return _table_from_schema(db, name, cols)


def _table_from_schema(db: str, name: str, cols) -> TableDef:
    from binlog_spec.values import Column
    columns = tuple(Column(type_code=spark_types.SQL_ONLY, meta={"sql": c.data_type, "unsigned": c.unsigned},
                           name=c.name) for c in cols)
    return TableDef(table_id=-1, schema=db, table=name, columns=columns, nullable=tuple(True for _ in cols),
                    has_names=True, has_signedness=True)


# ------------------------------------------------------------------------- partitions
class BinlogPartition(InputPartition):
    """One split; `first_last`: the run's first and last file (for startPosition/stopPosition)."""

    def __init__(self, split: spark_scan.Split, first_last: tuple[str, ...] = ()):
        super().__init__(split.ref.name)
        self.split = split
        self.first_last = first_last

    def __repr__(self) -> str:
        s = self.split
        return f"BinlogPartition({s.ref.name}, {s.start}..{'end' if s.end is None else s.end})"


def plan(cfg: Config) -> list[spark_scan.Split]:
    """Every split of the read, in file order, with the schema state each needs.

    The planning passes (`spark_scan.scan_file`) run on up to `PLAN_THREADS` files at once
    (what they wait for is I/O: object stores answer one request at a time per stream).
    Full passes are made only where needed: over files cut into pieces, and, when the DDL
    must be replayed, over the files whose CREATE/ALTER TABLEs a later file of the same
    sequence needs (the last file of a sequence replays its own DDL while it is read).
    """
    refs = cfg.files()
    rows = cfg.mode in ("rows", "table")
    scans: dict[int, spark_scan.ScanResult] = {}

    def splittable(ref: spark_scan.FileRef) -> bool:
        return cfg.split_size > 0 and ref.size > cfg.split_size

    def first_pass(ref: spark_scan.FileRef) -> spark_scan.ScanResult:
        probe = _names_probe()
        return spark_scan.scan_file(ref, ddl=True, verify_checksums=cfg.read.verify_checksums,
                                    probe=probe if not splittable(ref) else _recording(probe))

    needs_ddl = rows and cfg.replay_ddl == "always"
    if rows and cfg.replay_ddl == "auto":
        for i, (ref, res) in enumerate(zip(refs, _map_files(first_pass, refs))):
            if splittable(ref) or res.probe_result is None:
                scans[i] = res  # a whole pass (split file, or a file with no TABLE_MAP)
            lacks = res.probe_result if res.probe_result is not None else getattr(res, "lacks_names", None)
            if lacks:
                needs_ddl = True
    keys = [sequence_key(ref.name) for ref in refs]
    last_of_sequence = {k: i for i, k in enumerate(keys)}
    todo = [i for i, ref in enumerate(refs) if i not in scans
            and (splittable(ref) or (needs_ddl and last_of_sequence[keys[i]] != i))]
    done = _map_files(lambda i: spark_scan.scan_file(refs[i], ddl=needs_ddl,
                                                     verify_checksums=cfg.read.verify_checksums), todo)
    scans.update(zip(todo, done))
    splits: list[spark_scan.Split] = []
    for i, ref in enumerate(refs):
        splits.extend(spark_scan.plan_splits(i, ref, scans.get(i), cfg.split_size))
    if rows and (needs_ddl or cfg.schema_file):
        # One schema history per binlog sequence: files of one folder and one base name
        # (mysql-bin.000001, mysql-bin.000002, ...) carry their CREATE/ALTER TABLEs to the next.
        trackers: dict[tuple[str, str], SchemaTracker] = {}
        by_file: dict[int, list[spark_scan.Split]] = {}
        for s in splits:
            by_file.setdefault(s.file_index, []).append(s)
        out = []
        for i, ref in enumerate(refs):
            tracker = trackers.get(keys[i])
            if tracker is None:
                tracker = trackers[keys[i]] = cfg.tracker()
            statements = spark_scan.ddl_statements(scans[i]) if needs_ddl and i in scans else []
            k = 0
            for s in by_file.get(i, []):
                while k < len(statements) and statements[k][0] < s.start:
                    tracker.observe_query(statements[k][1], statements[k][2])
                    k += 1
                out.append(dataclasses.replace(s, schema_state=spark_scan.snapshot(tracker)))
            if last_of_sequence[keys[i]] != i:  # the rest only matters to the next file of the sequence
                _replay(tracker, statements[k:])
        splits = out
    return splits


#: How many files the planning passes read at once.
PLAN_THREADS = 8


def _map_files(fn, items: list) -> list:
    """`fn` over `items` on a few threads, results in order (the first exception is raised)."""
    if len(items) < 2:
        return [fn(x) for x in items]
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=min(PLAN_THREADS, len(items)), thread_name_prefix="binlog-plan") as pool:
        return list(pool.map(fn, items))


def sequence_key(name: str) -> tuple[str, str]:
    """The binlog sequence a file belongs to: its folder and its name without the last extension."""
    folder, _, base = name.rpartition("/")
    return folder, base.rsplit(".", 1)[0] if "." in base else base


def _names_probe():
    """Probe for the first TABLE_MAP of a file: True when it lacks names or signedness (so the
    row decoder needs the CREATE TABLE statements), False when it has both."""
    def probe(pos: int, ev: bytes, fde, res):
        try:
            fields = spec.body_fields(spec.parse_event(ev, fde), spec.parse_header(ev[:19]))
            t = TableDef.from_fields(fields, res.mariadb)
        except (*spec.SpecError, KeyError):
            return None
        return not (t.has_names and t.has_signedness)
    return probe


def _recording(probe):
    """A probe that records its first answer on the result but lets the pass go on."""
    def rec(pos, ev, fde, res):
        if not hasattr(res, "lacks_names"):
            answer = probe(pos, ev, fde, res)
            if answer is not None:
                res.lacks_names = answer
        return None
    return rec


# ---------------------------------------------------------------------------- filters
_COMPARE = {EqualTo: lambda x, v: x == v, EqualNullSafe: lambda x, v: x == v, GreaterThan: lambda x, v: x > v,
            GreaterThanOrEqual: lambda x, v: x >= v, LessThan: lambda x, v: x < v,
            LessThanOrEqual: lambda x, v: x <= v}
_STRINGS = {StringStartsWith: str.startswith, StringEndsWith: str.endswith, StringContains: str.__contains__}


def _value_ok(t: DataType, v: Any) -> bool:
    if isinstance(t, StringType):
        return isinstance(v, str)
    if isinstance(t, (LongType, IntegerType)):
        return isinstance(v, int) and not isinstance(v, bool)
    if isinstance(t, TimestampType):
        return isinstance(v, dt.datetime) and v.tzinfo is not None
    return False


def compile_filter(f: Filter, columns: dict[str, DataType]) -> tuple[str, Callable[[Any], bool]] | None:
    """(column, predicate on that column's value) for a filter the source evaluates exactly,
    else None. SQL semantics: a NULL value never passes (except IS NULL)."""
    if isinstance(f, Not):
        inner = compile_filter(f.child, columns)
        if inner is None:
            return None
        col, p = inner
        if isinstance(f.child, IsNull):
            return col, lambda x: x is not None
        return col, lambda x: x is not None and not p(x)
    attr = getattr(f, "attribute", None)
    if not attr or len(attr) != 1 or attr[0] not in columns:
        return None
    col, t = attr[0], columns[attr[0]]
    if isinstance(f, IsNull):
        return col, lambda x: x is None
    if isinstance(f, IsNotNull):
        return col, lambda x: x is not None
    if isinstance(f, In):
        vals = tuple(f.value)
        if not vals or not all(_value_ok(t, v) for v in vals):
            return None
        s = frozenset(vals)
        return col, lambda x: x is not None and x in s
    if type(f) in _COMPARE:
        v = f.value
        if v is None or not _value_ok(t, v):
            return None
        cmp = _COMPARE[type(f)]
        return col, lambda x: x is not None and cmp(x, v)
    if type(f) in _STRINGS and isinstance(t, StringType) and isinstance(f.value, str):
        fn, v = _STRINGS[type(f)], f.value
        return col, lambda x: x is not None and fn(x, v)
    return None


#: Columns whose filters the source applies, per mode (all constant per event or per record).
PUSHABLE = {
    "events": {"file", "pos", "end_log_pos", "type", "type_code", "timestamp", "server_id", "size"},
    "rows": {"file", "pos", "end_log_pos", "timestamp", "server_id", "gtid", "schema", "table", "op"},
    "transactions": {"file", "start_pos", "end_pos", "bytes", "begin_time", "commit_time", "commit_time_source",
                     "server_id", "gtid", "events", "rows", "inserts", "updates", "deletes"},
    "table": {"_op", "_file", "_pos", "_end_log_pos", "_timestamp", "_server_id", "_gtid"},
}


@dataclass
class Predicates:
    """The pushed filters, grouped by column."""

    by_column: dict[str, list[Callable[[Any], bool]]] = field(default_factory=dict)

    def add(self, col: str, p: Callable[[Any], bool]) -> None:
        self.by_column.setdefault(col, []).append(p)

    def __bool__(self) -> bool:
        return bool(self.by_column)

    def wants(self, col: str) -> bool:
        return col in self.by_column

    def ok(self, col: str, value: Any) -> bool:
        return all(p(value) for p in self.by_column.get(col, ()))

    def ok_all(self, values: dict[str, Any]) -> bool:
        """Every pushed filter holds for a record (`values`: all its pushable columns)."""
        return all(p(values.get(c)) for c, ps in self.by_column.items() for p in ps)

    def ok_known(self, values: dict[str, Any]) -> bool:
        """The pushed filters on the columns `values` has hold (the others are checked later)."""
        return all(p(values[c]) for c, ps in self.by_column.items() if c in values for p in ps)


# ---------------------------------------------------------------------------- readers
class BinlogReader(DataSourceReader):
    """Reads the partitions planned by `plan`; yields Arrow record batches."""

    def __init__(self, cfg: Config, schema: StructType, table: TableDef | None = None):
        self.cfg = cfg
        self.schema = schema
        self.table = table
        self.preds = Predicates()

    def partitions(self) -> list[InputPartition]:
        splits = plan(self.cfg)
        names = (splits[0].ref.name, splits[-1].ref.name) if splits else ()
        return [BinlogPartition(s, names) for s in splits]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, BinlogPartition):  # no input file: Spark's one empty partition
            return iter(())
        p = partition
        file_col = "_file" if self.cfg.mode == "table" else "file"
        if self.preds.wants(file_col) and not self.preds.ok(file_col, p.split.ref.name):
            return iter(())
        return read_split(self.cfg, self.schema, p.split, self.table, self.preds, list(p.first_last))


class BinlogPushdownReader(BinlogReader):
    """The reader with filter pushdown: filters on the columns of `PUSHABLE` that the source can
    evaluate exactly are applied while reading (before decoding, where the column is known
    from the event header or TABLE_MAP); Spark applies the others."""

    def pushFilters(self, filters: list[Filter]):
        columns = {f.name: f.dataType for f in self.schema.fields if f.name in PUSHABLE[self.cfg.mode]}
        for f in filters:
            compiled = compile_filter(f, columns)
            if compiled is None:
                yield f
            else:
                self.preds.add(*compiled)


# ------------------------------------------------------------------------ arrow batches
class _Batcher:
    def __init__(self, schema: StructType, size: int):
        self.arrow = to_arrow_schema(schema, timezone="UTC")
        self.variant = [isinstance(f.dataType, VariantType) for f in schema.fields]
        self.rows: list[tuple] = []
        self.size = size

    def add(self, row: tuple) -> pa.RecordBatch | None:
        self.rows.append(row)
        return self.flush() if len(self.rows) >= self.size else None

    def flush(self) -> pa.RecordBatch | None:
        if not self.rows:
            return None
        rows, self.rows = self.rows, []
        arrays = []
        for i, column in enumerate(zip(*rows)):
            t = self.arrow.field(i).type
            arrays.append(_variant_array(column, t) if self.variant[i] else pa.array(column, type=t))
        return pa.RecordBatch.from_arrays(arrays, schema=self.arrow)


def _variant_array(items, typ: pa.StructType) -> pa.Array:
    mask = pa.array([x is None for x in items], type=pa.bool_())
    values = pa.array([b"" if x is None else x[0] for x in items], type=pa.binary())
    metas = pa.array([b"\x01\x00\x00" if x is None else x[1] for x in items], type=pa.binary())
    return pa.StructArray.from_arrays([values, metas], fields=[typ.field(0), typ.field(1)], mask=mask)


def _us(seconds: int) -> int:
    return seconds * 1_000_000


def _ts_us(value: dt.datetime | None) -> int | None:
    if value is None:
        return None
    return (value - dt.datetime(1970, 1, 1, tzinfo=UTC)) // dt.timedelta(microseconds=1)


def _dec(v: int | None) -> decimal.Decimal | None:
    return None if v is None else decimal.Decimal(v)


class Fault:
    """A decode fault of one event (its rows could not be decoded), yielded in order among the
    records: with ``onError=skip`` it becomes a `_corrupt_record` row and reading goes on with
    the next event; else its error is raised."""

    __slots__ = ("exc",)

    def __init__(self, exc: BinlogError):
        self.exc = exc


def read_split(cfg: Config, schema: StructType, split: spark_scan.Split, table: TableDef | None = None,
               preds: Predicates | None = None, run_files: list[str] | None = None) -> Iterator[pa.RecordBatch]:
    """One partition's record batches.

    Two kinds of fault (docs/spark.md, "Errors"):

    * a fault of the stream (framing, CRC32, truncation, not a binlog: what the reader raises)
      ends the file there. It raises the reader's BinlogError (file, offset, event type,
      message); with ``onError=skip`` the partition instead ends with one `_corrupt_record`
      row naming the file, the offset and the error, after every row before it.
    * a decode fault of one event (a rows event without its TABLE_MAP, a row image that does
      not decode) is a `Fault` of that event: raised, or with ``onError=skip`` one
      `_corrupt_record` row in its place, and the next event is read.

    The planning pass finds the stream faults, so no piece starts after one, and a decode fault
    is the same whichever piece holds its event: a file read whole or in pieces gives the same
    records.
    """
    preds = preds or Predicates()
    batcher = _Batcher(schema, cfg.batch_rows)
    records = {"events": _event_records, "rows": _row_records, "transactions": _tx_records,
               "table": _table_records}[cfg.mode]
    it = records(cfg, split, preds, table, run_files or [])
    skip = cfg.on_error == "skip"
    while True:
        try:
            row = next(it)
        except StopIteration:
            break
        except (BinlogError, OSError) as exc:
            if not skip:
                raise
            batcher.add(_corrupt_row(batcher, cfg, split, exc))
            break
        if type(row) is Fault:
            if not skip:
                raise row.exc
            batch = batcher.add(_corrupt_row(batcher, cfg, split, row.exc))
        else:
            batch = batcher.add(row + (None,) if skip else row)
        if batch is not None:
            yield batch
    batch = batcher.flush()
    if batch is not None:
        yield batch


def _corrupt_row(batcher: _Batcher, cfg: Config, split: spark_scan.Split, exc: Exception) -> tuple:
    """The `_corrupt_record` row of a fault: the file, the offset, the message; NULL elsewhere."""
    names = batcher.arrow.names
    row: list[Any] = [None] * len(names)
    row[names.index("_file" if cfg.mode == "table" else "file")] = split.ref.name
    row[names.index({"transactions": "start_pos", "table": "_pos"}.get(cfg.mode, "pos"))] = \
        getattr(exc, "offset", None)
    text = str(exc)
    row[-1] = text if isinstance(exc, BinlogError) and exc.file else f"{split.ref.name}: {text}"
    return tuple(row)


# ------------------------------------------------------------------------ records
def _events(cfg: Config, split: spark_scan.Split, run_files: list[str], schema: SchemaTracker | None = None):
    """The split's events the filters keep; with `schema`, every event is seen by it first
    (rows.observe_schema): the filters never hide DDL or a TABLE_MAP from it."""
    events = spark_scan.iter_split_events(split, cfg.read)
    if schema is not None:
        events = observe_schema(events, schema)
    return filter_events(events, cfg.filters, run_files) if cfg.filters.active else events


def _split_schema(split: spark_scan.Split) -> SchemaTracker:
    """The schema at the start of a split (its planned state), to be replayed on through it."""
    return spark_scan.restore(split.schema_state, SchemaTracker) if split.schema_state else SchemaTracker()


def _encode(cfg: Config, value: Any):
    if value is None:
        return None
    return jsonenc.dumps(value) if cfg.images == "json" else spark_variant.encode(value)


def _event_records(cfg, split, preds, table, run_files) -> Iterator[tuple]:
    for ev in _events(cfg, split, run_files):
        if spark_scan.is_prefix(split, ev):
            continue
        if preds and not preds.ok_all({
                "file": ev.file, "pos": ev.pos, "end_log_pos": ev.end_log_pos, "type": ev.type,
                "type_code": ev.type_code, "timestamp": dt.datetime.fromtimestamp(ev.timestamp, UTC),
                "server_id": ev.server_id, "size": ev.size}):
            continue
        d = ev.to_dict()
        body = {k: v for k, v in d.items() if k not in EVENT_HEADER_KEYS}
        yield (ev.file, ev.pos, ev.end_log_pos, ev.type, ev.type_code, _us(ev.timestamp), ev.server_id, ev.size,
               ev.flags, ev.checksum, ev.payload_pos, ev.payload_offset, d.get("error"), _encode(cfg, body))


def _row_changes(cfg: Config, split: spark_scan.Split, preds: Predicates, typed: bool,
                 run_files: list[str]) -> Iterator[tuple[Any, Any, Any]]:
    """(row change, its rows event, XID of its transaction) of a split, in order; a rows event
    that does not decode gives (Fault, event, XID) after the rows decoded before its fault.

    Rows wait for the end of their transaction (the XID comes last). Rows events that pushed
    filters rule out are not decoded. On a fault of the stream, the rows decoded before it
    come first, with no XID, then the error is raised.
    """
    decoder = RowDecoder()      # the TABLE_MAPs come completed (observe_schema, under the filters)
    tx = Transactions()
    pending: list = []
    xid = None
    prefix = "_" if typed else ""
    try:
        for ev in _events(cfg, split, run_files, _split_schema(split)):
            starts, ends = tx.step(ev)
            code = ev.type_code
            if starts and pending:
                yield from ((rc, e, None) for rc, e in pending)
                pending = []
            if code in ROW_OPS and ev.error is None:
                op = ROW_OPS[code]
                if cfg.ops and op not in cfg.ops:
                    continue
                if preds:
                    td = decoder.tables.get(ev.fields["table_id"])
                    ctx = {prefix + "file": ev.file, prefix + "pos": ev.pos, prefix + "end_log_pos": ev.end_log_pos,
                           prefix + "timestamp": dt.datetime.fromtimestamp(ev.timestamp, UTC),
                           prefix + "server_id": ev.server_id, prefix + "gtid": decoder.gtid}
                    if not typed:
                        ctx["op"] = op
                        if td is not None:
                            ctx["schema"], ctx["table"] = td.schema, td.table
                    if not preds.ok_known(ctx):
                        continue
                try:
                    for rc in decoder.feed(ev):
                        pending.append((rc, ev))
                except BinlogError as exc:
                    pending.append((Fault(exc), ev))
            else:
                try:
                    for _ in decoder.feed(ev):
                        pass
                except BinlogError as exc:
                    pending.append((Fault(exc), ev))
            if code == ET.xid_event and ev.error is None:
                xid = ev.fields.get("xid")
            if ends:
                yield from ((rc, e, xid) for rc, e in pending)
                pending, xid = [], None
    except BaseException:
        yield from ((rc, e, None) for rc, e in pending)
        raise
    yield from ((rc, e, None) for rc, e in pending)


def _row_records(cfg, split, preds, table, run_files) -> Iterator[tuple]:
    for rc, ev, xid in _row_changes(cfg, split, preds, False, run_files):
        if type(rc) is Fault:
            yield rc
            continue
        yield (rc.file, rc.pos, ev.end_log_pos, _us(rc.timestamp), rc.server_id, rc.gtid, _dec(xid), rc.schema,
               rc.table, rc.op, _encode(cfg, rc.before), _encode(cfg, rc.after), rc.row_index)


def _table_records(cfg, split, preds, table: TableDef, run_files) -> Iterator[tuple]:
    names = table.names
    types = [t for _, t in table_fields(table)]
    convs = [spark_types.converter(t) for t in types]
    if cfg.images == "json":
        convs = [jsonenc.dumps if isinstance(t, VariantType) else c for t, c in zip(types, convs)]
    db, _, name = cfg.table.partition(".")
    planned = dict(zip(names, types))
    last_def, changed = None, None          # the last TableDef seen, what in it differs from `planned`
    faulted = None                          # the rows event whose fault was given (one per event)
    for rc, ev, _xid in _row_changes(cfg, split, preds, True, run_files):
        if type(rc) is Fault:
            yield rc
            continue
        if rc.schema != db or rc.table != name:
            continue
        if rc.table_def is not last_def:    # a TABLE_MAP came (row changes come in order)
            last_def, changed = rc.table_def, _type_changes(planned, rc.table_def)
        if changed is not None:
            if faulted is not ev:
                faulted = ev
                yield Fault(ColumnTypeChangedError(
                    f"{cfg.table}: {changed}: the typed view's schema (from the table's first TABLE_MAP "
                    "or the schema option) cannot hold its values; read this table with mode=rows, or the "
                    "files before and after the change apart", file=ev.file, offset=ev.pos, event_type=ev.type))
            continue
        images = [(rc.op, rc.before if rc.op == "delete" else rc.after)]
        if cfg.before_image and rc.op == "update":
            images.insert(0, ("update_before", rc.before))
        for op, image in images:
            if preds.wants("_op") and not preds.ok("_op", op):
                continue
            image = image or {}
            values = tuple(None if (v := image.get(n)) is None else conv(v) for n, conv in zip(names, convs))
            yield values + (op, rc.file, rc.pos, ev.end_log_pos, rc.row_index, _us(rc.timestamp), rc.server_id,
                            rc.gtid)


def _type_changes(planned: dict[str, DataType], table: TableDef) -> str | None:
    """What in `table` (a TABLE_MAP of the typed view's table) has another Spark type than the
    DataFrame's columns: 'column v is decimal(12,2) here, decimal(5,2) in the DataFrame'; None when
    every column the DataFrame has is of its type (or not in `table`)."""
    diffs = [f"column {n} is {t.simpleString()} here, {planned[n].simpleString()} in the DataFrame"
             for n, t in table_fields(table) if n in planned and t != planned[n]]
    return "; ".join(diffs) or None


def _tx_records(cfg, split, preds, table, run_files) -> Iterator[tuple]:
    s = Summarizer(count_rows=cfg.count_rows)

    def summaries():
        for ev in _events(cfg, split, run_files, _split_schema(split) if cfg.count_rows else None):
            if spark_scan.is_prefix(split, ev):
                continue
            try:
                yield from s.feed(ev)
            except BinlogError as exc:  # its rows do not decode: the transaction goes on without them
                yield Fault(exc)
        yield from s.finish()

    for t in summaries():
        if type(t) is Fault:
            yield t
            continue
        if preds and not preds.ok_all({
                "file": t.file, "start_pos": t.start_pos, "end_pos": t.end_pos, "bytes": t.bytes,
                "begin_time": t.begin_time, "commit_time": t.commit_time,
                "commit_time_source": t.commit_time_source, "server_id": t.server_id, "gtid": t.gtid,
                "events": t.events, "rows": t.rows, "inserts": t.inserts, "updates": t.updates,
                "deletes": t.deletes}):
            continue
        yield (t.file, t.start_pos, t.end_pos, t.bytes, _ts_us(t.begin_time), _ts_us(t.commit_time),
               t.commit_time_source, _ts_us(t.original_commit_time), t.duration_s, t.server_id, t.gtid,
               _dec(t.xid), t.events, t.rows, t.inserts, t.updates, t.deletes, t.tables, t.complete)


__all__ = ["BinlogDataSource", "DefaultSource", "register", "parse_images", "Config", "plan", "read_split",
           "BinlogSparkError", "NAME", "output_schema"]
