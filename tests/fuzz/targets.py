"""What the fuzzers run on one input file: every layer of the library API over it.

`run(path)` reads the file with the reader, decodes its rows, writes the forward and rollback
SQL scripts (commented and executable), the base64 scripts, the forward and rollback binlogs,
and the analysis. Each pipeline may end with a BinlogError (the contract for bad input); any
other exception propagates: it is a bug. The events the reader delivered are returned (as
dicts) for the truncation check.
"""
from __future__ import annotations

import io
from typing import Callable

import binlog_spec
from binlog_spec.analysis import collector
from binlog_spec.output.base64.script import Base64Options, Base64Script
from binlog_spec.output import row_text
from binlog_spec.output.rewriter import Rewriter, WriteOptions, write_binlog
from binlog_spec.rows.decoder import observe_schema, read_rows
from binlog_spec.output.sql.script import ScriptOptions, forward, rollback as sql_rollback
from binlog_spec.errors import BinlogError
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.output.sql.statements import SqlOptions

#: Checksums off: a mutated byte then reaches the body decoders instead of stopping at the CRC.
NO_CRC = binlog_spec.ReadOptions(verify_checksums=False)


def events(path: str, options: binlog_spec.ReadOptions = NO_CRC) -> tuple[list[dict], BinlogError | None]:
    """The events' dicts delivered before the fault, and the fault (or None)."""
    out: list[dict] = []
    try:
        for ev in binlog_spec.open(path, options):
            out.append(ev.to_dict())
    except BinlogError as exc:
        return out, exc
    return out, None


def _drain(lines) -> None:
    for _ in lines:
        pass


def _observed(path: str):
    """The events as the CLI reads them: every event seen by the schema (DDL replay, completed
    TABLE_MAPs) before anything else (rows.decoder.observe_schema)."""
    return observe_schema(binlog_spec.read_events([path], NO_CRC), SchemaTracker())


def _rows(path: str) -> None:
    for rc in read_rows(_observed(path), warn=lambda message: None):
        row_text.row_line(rc)
        rc.to_dict()


def _rows_tracked(path: str) -> None:
    """The library's other way: the decoder itself replays the DDL it is given."""
    for rc in read_rows(binlog_spec.read_events([path], NO_CRC), SchemaTracker()):
        rc.to_dict()


def _sql(path: str, rollback: bool, commented: bool) -> None:
    opts = ScriptOptions(sql=SqlOptions(replace=rollback), commented=commented)
    script = (sql_rollback if rollback else forward)
    _drain(script(_observed(path), opts, warn=lambda message: None))


def _base64(path: str, rollback: bool) -> None:
    options = WriteOptions(rollback=rollback, renumber_gtids=False)
    with Rewriter(options) as rewriter:
        printer = Base64Script(Base64Options(verbose=2, skip_gtids=rollback), rewriter)
        _drain(printer.lines(rewriter.items(_observed(path))))


def _binlog(path: str, rollback: bool) -> None:
    rewriter = write_binlog(binlog_spec.read_events([path], NO_CRC), io.BytesIO(),
                          WriteOptions(rollback=rollback))
    with rewriter:
        list(rewriter.skipped.lines())


def _analyze(path: str) -> None:
    faults: list[BinlogError] = []
    events = observe_schema(binlog_spec.read_events([path], NO_CRC, faults), SchemaTracker())
    collector.analyze(events, collector.AnalyzeOptions(), faults)


#: name -> pipeline(path); each raises BinlogError or nothing, on any input.
PIPELINES: dict[str, Callable[[str], None]] = {
    "rows": _rows,
    "rows-tracked": _rows_tracked,
    "sql": lambda p: _sql(p, False, False),
    "sql-commented": lambda p: _sql(p, False, True),
    "sql-rollback": lambda p: _sql(p, True, False),
    "base64": lambda p: _base64(p, False),
    "base64-rollback": lambda p: _base64(p, True),
    "binlog": lambda p: _binlog(p, False),
    "binlog-rollback": lambda p: _binlog(p, True),
    "analyze": _analyze,
}


def run(path: str) -> tuple[list[dict], dict[str, str]]:
    """(events delivered, {pipeline: "ok" or the BinlogError's class name}); a bug raises."""
    delivered, fault = events(path)
    outcomes = {"events": type(fault).__name__ if fault else "ok"}
    events(path, binlog_spec.ReadOptions())     # with checksums verified too
    for name, pipeline in PIPELINES.items():
        try:
            pipeline(path)
            outcomes[name] = "ok"
        except BinlogError as exc:
            outcomes[name] = type(exc).__name__
    return delivered, outcomes
