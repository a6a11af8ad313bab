"""The data source and its readers: what Spark calls (schema, partitions, read), each a thin shell over
options, planning, pushdown and records."""
from __future__ import annotations

import gc
import os
from typing import Iterator
import pyarrow as pa
from pyspark.sql.datasource import DataSource, DataSourceReader, Filter, InputPartition
from pyspark.sql.types import StructType

from binlog_spec import api
from binlog_spec.errors import BinlogSparkError
from binlog_spec.rows.tablemap import TableDef
from binlog_spec.spark.options import Config, NAME, spark_spelling
from binlog_spec.spark.pushdown import PUSHABLE, Predicates, _pushdown_allowed, compile_filter
from binlog_spec.spark import ddl
from binlog_spec.spark.records import output_schema, read_split
from binlog_spec.spark.planning import BinlogPartition, find_table, plan


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
            table = self.__dict__["_table"] = find_table(cfg)
            if cfg.rows.active and table.table_id != -1:    # (key, where: its first TABLE_MAP, before a task runs)
                try:
                    api.RowSelector(cfg.rows).check_table(table)
                except api.RowFilterError as exc:
                    raise BinlogSparkError(f"{cfg.table}: {spark_spelling(str(exc))}") from None
        return self.__dict__["_table"]

    def schema(self) -> StructType:
        cfg = self._config()
        if cfg.mode == "ddl":
            return ddl.output_schema(cfg)
        return output_schema(cfg, self.table_def())

    def reader(self, schema: StructType) -> DataSourceReader:
        cfg = self._config()
        cls = BinlogPushdownReader if _pushdown_allowed(self.options) and cfg.mode != "ddl" else BinlogReader
        return cls(cfg, schema, self.table_def())


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
        _freeze_imports()
        if not isinstance(partition, BinlogPartition):  # no input file: Spark's one empty partition
            return iter(())
        p = partition
        if self.cfg.mode == "ddl":
            return ddl.read_split(self.cfg, p.split)
        file_col = "_file" if self.cfg.mode == "table" else "file"
        if self.preds.wants(file_col) and not self.preds.ok(file_col, p.split.ref.name):
            return iter(())
        return read_split(self.cfg, self.schema, p.split, self.table, self.preds, list(p.first_last))


_FROZEN: set[int] = set()


def _freeze_imports() -> None:
    """Once per Python worker process: the objects alive when it first reads (pyspark's, pyarrow's, this
    package's modules, classes and functions) moved out of the cyclic garbage collector's sight
    (`gc.freeze`, after a full collection), so the collections that reading's garbage triggers do not
    walk them again and again. What a read allocates is collected as before."""
    if os.getpid() in _FROZEN:
        return
    _FROZEN.add(os.getpid())
    gc.collect()
    gc.freeze()


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
