"""Binlogs as Spark DataFrames: a Spark 4 Python data source named ``binlog``.

    from binlog_spec.spark import register
    register(spark)                                   # once per session
    df = spark.read.format("binlog").load("/data/binlogs/")              # row changes
    df = spark.read.format("binlog").option("mode", "events").load(p)   # events
    df = spark.read.format("binlog").option("mode", "transactions").load(p)
    df = spark.read.format("binlog").option("table", "shop.orders").load(p)  # typed columns

Built on ``pyspark.sql.datasource`` (DataSource / DataSourceReader): planning
lists the files, cuts files larger than ``splitSize`` at transaction
boundaries (see binlog_spec.stream.planning.splits), and every partition is read by the
library's own reader and row decoder in a Python worker, which yields
``pyarrow.RecordBatch``es. VARIANT columns are written directly (Arrow struct
``value``/``metadata``); ``.option("images", "json")`` writes JSON text instead
(faster), and `parse_images` turns it into VARIANT with Spark's ``parse_json``.

Every option, the schemas and the semantics are described in docs/spark.md.

The package: `options` (Config, parsed once), `planning` (files, splits, the typed view's table),
`pushdown` (the filters applied in the source), `records` (schemas; a split to Arrow batches),
`source` (the DataSource and its readers), `types`
(Spark types of columns), `variant` (VARIANT encoding); the header pass and split reading are
binlog_spec.stream.planning, shared with the CLI. This module registers the source, and `read_binlog` reads
with the DDL of the input gathered first (`ddl`).
"""
from __future__ import annotations

import importlib
import json
import os
from typing import Iterator, Sequence

from binlog_spec.errors import BinlogSparkError, ColumnTypeChangedError

#: The package's names, each imported from its module when first asked for (PEP 562): importing the
#: package needs neither pyspark nor pyarrow, so that binlog_spec.compiled can load spark/_cvariant
#: (and `binlog-spec --version` name it) where pyspark is not installed.
_LAZY = {"NAME": "options", "PUSHDOWN_CONF": "options", "Config": "options", "plan": "planning",
         "sequence_key": "planning", "output_schema": "records", "read_split": "records",
         "BinlogDataSource": "source", "BinlogPushdownReader": "source", "BinlogReader": "source",
         #: For a module named ``pyspark_binlog`` (Spark's automatic registration looks for ``DefaultSource``).
         "DefaultSource": "source"}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), "BinlogDataSource" if name == "DefaultSource"
                    else name)
    globals()[name] = value
    return value


def register(spark, pushdown: bool = False) -> None:
    """Register the ``binlog`` format in a SparkSession. `pushdown` also turns on Spark's Python
    data source filter pushdown (``spark.sql.python.filterPushdown.enabled``), which a read
    uses only with ``.option("pushFilters", "true")`` (see `_pushdown_allowed`)."""
    from binlog_spec.spark.options import PUSHDOWN_CONF
    from binlog_spec.spark.source import BinlogDataSource
    spark.dataSource.register(BinlogDataSource)
    if pushdown:
        spark.conf.set(PUSHDOWN_CONF, "true")


#: Options of a read that the ``mode=ddl`` read behind `read_binlog` takes too (how the files are cut and read).
DDL_READ_OPTIONS = ("splitSize", "verifyChecksums", "expandPayloads", "strict")


def read_binlog(spark, path, cache: str | os.PathLike | None = None, **options):
    """``spark.read.format("binlog")`` with the DDL of the input gathered first, by a distributed
    ``mode=ddl`` read, so that every split has the schema of the DDL before it (names, charsets, keys)
    without a pass of the driver over the data.

    `path`: what ``.load`` takes (a file, a folder, a glob, a URI), or a list of them. `options`: the
    read's options (``mode``, ``table``, ``splitSize``, filters, ...). The statements of each file are
    cached under its path, size and modification time in `cache` (default `stream.planning.ddl.cache_dir()`:
    ``$BINLOG_SPEC_CACHE/ddl``, else ``~/.cache/binlog-spec/ddl``): only files new or changed since
    are read again. The DataFrame's read has ``.option("ddl", <the read's statements file>)``.
    """
    from binlog_spec.spark.ddl import file_key
    from binlog_spec.spark.options import CORRUPT_COLUMN, Config
    from binlog_spec.stream.planning.ddl import DdlCache, Statement, gather
    register(spark)
    paths = [str(p) for p in path] if isinstance(path, (list, tuple)) else [str(path)]
    opts = {k: str(v) for k, v in options.items()}
    cfg = Config.from_options({**opts, "paths": json.dumps(paths)})
    keys = [file_key(ref) for ref in cfg.files()]

    def read_missing(names: list[str]) -> Iterator[Statement]:
        r = spark.read.format("binlog").option("mode", "ddl").option("onError", "skip")
        for k in DDL_READ_OPTIONS:
            if k in opts:
                r = r.option(k, opts[k])
        for row in r.option("paths", json.dumps(names)).load().collect():
            if row[CORRUPT_COLUMN] is None:   # a fault: the rows read reports it (or skips it) itself
                yield Statement(row.file, row.pos, row.db, row.statement, row.collation)

    statements, _read = gather(keys, read_missing, DdlCache(cache) if cache else None)
    reader = spark.read.format("binlog")
    for k, v in opts.items():
        reader = reader.option(k, v)
    return reader.option("ddl", str(statements)).option("paths", json.dumps(paths)).load()


def parse_images(df, columns: Sequence[str] = ("before", "after", "body")):
    """With ``.option("images", "json")``: turn the JSON text columns into VARIANT
    (Spark's ``parse_json``, in the JVM). Columns the DataFrame lacks are left alone."""
    from pyspark.sql import functions as F
    for c in columns:
        if c in df.columns:
            df = df.withColumn(c, F.parse_json(F.col(c)))
    return df


__all__ = ["BinlogDataSource", "DefaultSource", "register", "parse_images", "Config", "plan", "read_split",
           "BinlogSparkError", "ColumnTypeChangedError", "NAME", "output_schema", "sequence_key", "BinlogReader",
           "BinlogPushdownReader", "read_binlog"]
