"""Filter pushdown: whether Spark pushes filters to this source, and the filters it can apply itself
(compiled once per read into Predicates over the output columns)."""
from __future__ import annotations

import datetime as dt
import sys
from dataclasses import dataclass, field
from typing import Any, Callable
from pyspark.sql.datasource import (EqualNullSafe, EqualTo, Filter, GreaterThan, GreaterThanOrEqual, In, IsNotNull,
                                    IsNull, LessThan, LessThanOrEqual, Not, StringContains, StringEndsWith,
                                    StringStartsWith)
from pyspark.sql.types import DataType, IntegerType, LongType, StringType, TimestampType

from binlog_spec.errors import BinlogSparkError
from binlog_spec.spark.options import PUSHDOWN_CONF, _bool, _opt


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
