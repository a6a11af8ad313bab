"""``mode=ddl``: the statements of the input that may be DDL, one task per split; `spark.read_binlog` runs
that read, caches what it found (binlog_spec.stream.planning.ddl, under `file_key`) and gives the rows read
its ``ddl`` option, so that every split, wherever it starts, has the names, charsets and keys of the DDL
before it."""
from __future__ import annotations

import os
from typing import Iterator

import pyarrow as pa
from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from binlog_spec.spark.options import CORRUPT_COLUMN, Config
from binlog_spec.stream.planning.ddl import FileKey, split_statements
from binlog_spec.stream.planning.pieces import Split

#: The columns of ``mode=ddl`` (and ``_corrupt_record`` with ``onError=skip``).
DDL_FIELDS = [("file", StringType()), ("pos", LongType()), ("db", StringType()), ("statement", StringType()),
              ("collation", IntegerType())]


def output_schema(cfg: Config) -> StructType:
    fields = list(DDL_FIELDS) + ([(CORRUPT_COLUMN, StringType())] if cfg.on_error == "skip" else [])
    return StructType([StructField(n, t, True) for n, t in fields])


def read_split(cfg: Config, split: Split) -> Iterator[pa.RecordBatch]:
    """One split's statements (stream.planning.ddl.split_statements) as one record batch. A fault of the stream
    ends the split: its BinlogError is raised, or with ``onError=skip`` it is one `_corrupt_record`
    row (file, offset, message) after the statements before it."""
    statements, fault = split_statements(split, cfg.read)
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


def file_key(ref) -> FileKey:
    """A file's cache key (`FileRef` of spark.files: local, or any pyarrow filesystem)."""
    if ref.local:
        st = os.stat(ref.fs_path)
        return FileKey(ref.name, st.st_size, st.st_mtime_ns)
    from binlog_spec.spark.files import _filesystem
    fs, path = _filesystem(ref.uri)
    info = fs.get_file_info(path)
    return FileKey(ref.name, info.size, info.mtime_ns or 0)
