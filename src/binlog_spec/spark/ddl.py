"""``mode=ddl``: the statements of the input that may be DDL, one task per split, and `read_binlog`, which
runs that read, caches what it found (binlog_spec.stream.ddl) and gives the rows read its ``ddl`` option,
so that every split, wherever it starts, has the names, charsets and keys of the DDL before it."""
from __future__ import annotations

import json
import os
from typing import Iterator

import pyarrow as pa
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from binlog_spec.spark.options import CORRUPT_COLUMN, Config
from binlog_spec.stream import ddl as stream_ddl
from binlog_spec.stream import splits as stream_splits

#: The columns of ``mode=ddl`` (and ``_corrupt_record`` with ``onError=skip``).
DDL_FIELDS = [("file", StringType()), ("pos", LongType()), ("db", StringType()), ("statement", StringType()),
              ("collation", IntegerType())]


def output_schema(cfg: Config) -> StructType:
    fields = list(DDL_FIELDS) + ([(CORRUPT_COLUMN, StringType())] if cfg.on_error == "skip" else [])
    return StructType([StructField(n, t, True) for n, t in fields])


def read_split(cfg: Config, split: stream_splits.Split) -> Iterator[pa.RecordBatch]:
    """One split's statements (stream.ddl.split_statements) as one record batch. A fault of the stream
    ends the split: its BinlogError is raised, or with ``onError=skip`` it is one `_corrupt_record`
    row (file, offset, message) after the statements before it."""
    statements, fault = stream_ddl.split_statements(split, cfg.read)
    skip = cfg.on_error == "skip"
    if fault is not None and not skip:
        raise fault
    columns = [list(c) for c in zip(*statements)] if statements else [[] for _ in DDL_FIELDS]
    if skip:
        columns.append([None] * len(statements))
        if fault is not None:
            for col, value in zip(columns, (split.ref.name, fault.offset, None, None, None, str(fault))):
                col.append(value)
    schema = pa.schema([("file", pa.string()), ("pos", pa.int64()), ("db", pa.string()),
                        ("statement", pa.string()), ("collation", pa.int32())]
                       + ([(CORRUPT_COLUMN, pa.string())] if skip else []))
    if columns[0]:
        yield pa.RecordBatch.from_arrays([pa.array(c, type=f.type) for c, f in zip(columns, schema)], schema=schema)


def file_key(ref) -> stream_ddl.FileKey:
    """A file's cache key (`FileRef` of spark.files: local, or any pyarrow filesystem)."""
    if ref.local:
        st = os.stat(ref.fs_path)
        return stream_ddl.FileKey(ref.name, st.st_size, st.st_mtime_ns)
    from binlog_spec.spark.files import _filesystem
    fs, path = _filesystem(ref.uri)
    info = fs.get_file_info(path)
    return stream_ddl.FileKey(ref.name, info.size, info.mtime_ns or 0)


#: Options of a read that the ``mode=ddl`` read behind `read_binlog` takes too (how the files are cut and read).
DDL_READ_OPTIONS = ("splitSize", "verifyChecksums", "expandPayloads", "strict")


def read_binlog(spark, path, cache: str | os.PathLike | None = None, **options):
    """``spark.read.format("binlog")`` with the DDL of the input gathered first, by a distributed
    ``mode=ddl`` read, so that every split has the schema of the DDL before it (names, charsets, keys)
    without a pass of the driver over the data.

    `path`: what ``.load`` takes (a file, a folder, a glob, a URI), or a list of them. `options`: the
    read's options (``mode``, ``table``, ``splitSize``, filters, ...). The statements of each file are
    cached under its path, size and modification time in `cache` (default `stream.ddl.cache_dir()`:
    ``$BINLOG_SPEC_CACHE/ddl``, else ``~/.cache/binlog-spec/ddl``): only files new or changed since
    are read again. The DataFrame's read has ``.option("ddl", <the read's statements file>)``.
    """
    from binlog_spec.spark import register
    register(spark)
    paths = [str(p) for p in path] if isinstance(path, (list, tuple)) else [str(path)]
    opts = {k: str(v) for k, v in options.items()}
    cfg = Config.from_options({**opts, "paths": json.dumps(paths)})
    keys = [file_key(ref) for ref in cfg.files()]

    def read_missing(names: list[str]) -> Iterator[stream_ddl.Statement]:
        r = spark.read.format("binlog").option("mode", "ddl").option("onError", "skip")
        for k in DDL_READ_OPTIONS:
            if k in opts:
                r = r.option(k, opts[k])
        for row in r.option("paths", json.dumps(names)).load().collect():
            if row[CORRUPT_COLUMN] is None:   # a fault: the rows read reports it (or skips it) itself
                yield stream_ddl.Statement(row.file, row.pos, row.db, row.statement, row.collation)

    statements, _read = stream_ddl.gather(keys, read_missing, stream_ddl.DdlCache(cache) if cache else None)
    reader = spark.read.format("binlog")
    for k, v in opts.items():
        reader = reader.option(k, v)
    return reader.option("ddl", str(statements)).option("paths", json.dumps(paths)).load()
