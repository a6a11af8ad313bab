"""What the differential test of the compiled core (tests/test_compiled_core.py) compares: a transcript
of everything the library and the CLI make of one binlog, hashed per file.

    python tests/differential.py FILE...        one line per file: path, sha256 of its transcript
    python tests/differential.py --show FILE    the transcript itself

The test runs this twice, with BINLOG_SPEC_PURE=1 (the pure-Python reference) and without it (every
compiled module of binlog_spec.compiled.MODULES that is built), over the same files, and requires the
same lines. The transcript holds every event's fields (checksums off and on), every decoded row change,
the warnings, the Spark rows-mode batches of SPARK_ROWS, the outputs of the commands of COMMANDS (stdout,
stderr, exit code), and every error: its class, message, file offset and event type, and the exception it
was raised from. A compiled module
added to the package is covered here without a change: the whole pipeline runs under both cores.
"""
from __future__ import annotations

import hashlib
import io
import os
import sys
import tempfile
import time
from typing import Callable, Iterable

#: CLI commands whose outputs are compared (run in-process, TZ=UTC).
COMMANDS: list[list[str]] = [
    ["events", "--format", "jsonl"],
    ["rows", "--format", "jsonl"],
    ["sql", "--sql2"],
    ["sql"],
    ["sql", "--sql2", "--rollback"],     # the statement formatter with the images swapped
    # (with the two above, the pre-pass's exact pass where the TABLE_MAPs lack names: its compiled loop,
    # output/sql/_cwritable.pyx, and its verdicts on the images --replace writes whole)
    ["sql", "--sql2", "--replace"],
    ["sql", "-vv"],
    ["sql", "--rollback"],
    ["sql", "--sql2", "--minimal-update"],      # the formatter and the lanes step aside for the builders
    ["sql", "--sql2", "--rollback", "--minimal-update"],
    ["analyze", "--format", "json"],
    # the compiled loop's own close of a transaction, and the reference's for one of the top lists or flagged
    ["analyze", "--format", "json", "--top", "1", "--big-trx-bytes", "400", "--bucket", "1"],
]
#: Commands whose stdout is also compared written to a UTF-8 stream with a binary buffer, as a pipe is (the compiled
#: lane of `events --format jsonl`, output/_cevent_json.pyx, writes its blocks of lines to the binary stream; so does
#: a rollback's, output/_crow_undo.pxi, the undo it spooled).
PIPED: list[list[str]] = [["events", "--format", "jsonl"], ["sql", "--sql2", "--rollback"]]
#: Checked rollbacks (output.rollback.check; the compiled loop past the window, output/rollback/_ccheck.pyx): the
#: window ends at this share of the file ("{stop}"); "{out}" is a temporary -o file, whose bytes are compared.
CHECKED: list[list[str]] = [
    ["sql", "--sql2", "--rollback", "--stop-position", "{stop:2}"],
    # the check per column (output/rollback/columns.py: the Python path under both cores), the rows in conflict
    # left out of the undo
    ["sql", "--sql2", "--rollback", "--minimal-update", "--stop-position", "{stop:2}"],
    ["sql", "--sql", "--rollback", "--skip-conflicts", "--stop-position", "{stop:3}"],
    ["sql", "--rollback", "--force", "--stop-position", "{stop:3}"],
    ["sql", "--output-format", "binlog", "-o", "{out}", "--rollback", "--force", "--stop-position", "{stop:2}"],
    # time windows: the filters run to the end of the file, the loop takes what they exclude meanwhile
    ["sql", "--sql2", "--rollback", "--stop-datetime", "{time}"],
    ["sql", "--rollback", "--force", "--start-datetime", "{time}"],
    ["sql", "--sql2", "--rollback", "--force", "--start-datetime", "{time:before}", "--stop-datetime", "{time}"],
    # a filtered analysis (the kept transactions' times, the window): the reference path under both cores
    ["analyze", "--format", "json", "--start-datetime", "{time:before}", "--stop-datetime", "{time}"],
    # the compiled loop under time bounds alone (api.skip_gate): kept transactions taken whole, the others
    # skipped; a bound alone, one cutting the file's transactions, the top lists, an empty window
    ["analyze", "--format", "json", "--start-datetime", "{time}"],
    ["analyze", "--format", "json", "--top", "1", "--big-trx-bytes", "400", "--stop-datetime", "{time}"],
    ["analyze", "--format", "json", "--start-datetime", "2100-01-01 00:00:00"],
    # the loop that skips what the filters drop (stream/_cskipping.pyx): time bounds, tables ("{table}": the
    # first TABLE_MAP's), schemas, and a selection that keeps nothing
    ["rows", "--format", "jsonl", "--start-datetime", "{time:before}", "--stop-datetime", "{time}"],
    ["sql", "--sql2", "--start-datetime", "{time}"],
    ["rows", "--format", "jsonl", "--table", "{table}"],
    ["sql", "--sql2", "--exclude-table", "{table}", "--stop-datetime", "{time}"],
    ["rows", "--format", "text", "--database", "no_such_schema"],
    ["sql", "--sql2", "--exclude-server-id", "2", "--start-datetime", "{time}"],
    # the lanes under those filters (output/_crow_filter.pxi): rows events of a dropped table inside the kept
    # transactions, a server id kept, a window's edge
    ["rows", "--format", "jsonl", "--exclude-table", "{table}", "--start-datetime", "{time:before}"],
    ["sql", "--sql2", "--table", "{table}", "--stop-datetime", "{time}"],
    ["rows", "--format", "jsonl", "--server-id", "1", "--stop-datetime", "{time}"],
    # the base64 script's lane under them (output/base64/_ctext_filter.pxi): kept transactions written whole
    ["sql", "--start-datetime", "{time:before}", "--stop-datetime", "{time}"],
    ["sql", "--exclude-table", "{table}", "--server-id", "1"],
    # the row lane's --key check (output/_crow_key.pxi): "{key}" the key of the first row change of {table}
    ["rows", "--format", "jsonl", "--table", "{table}", "--key", "{key}"],
    # analyze's loop under table and server-id filters, after the skipping loop
    ["analyze", "--format", "json", "--table", "{table}"],
    ["analyze", "--format", "json", "--exclude-table", "{table}", "--server-id", "1"],
    # GTID sets and positions ("{gtids}": the GTIDs of the file's first half, of the middle one's source): the
    # skipping loop and the lanes decide by the GTID too
    ["rows", "--format", "jsonl", "--include-gtids", "{gtids}"],
    ["sql", "--sql2", "--exclude-gtids", "{gtids}"],
    ["sql", "--include-gtids", "{gtids}"],
    ["analyze", "--format", "json", "--exclude-gtids", "{gtids}"],
]


def _times(path: str) -> dict[str, str]:
    """{time}: the middle one of the distinct event times of the file (as far as it reads), {time:before}:
    the one before it (the same when there is one); {table}: the first TABLE_MAP's schema.table; {gtids}: the
    GTID set of the first half of the file's GTIDs of the source of the middle one."""
    from datetime import datetime, timezone

    import binlog_spec
    stamps = set()
    try:
        for ev in binlog_spec.read_events([path], binlog_spec.ReadOptions(verify_checksums=False)):
            stamps.add(ev.timestamp)
    except Exception:  # noqa: BLE001 - the times read before the fault
        pass
    ordered = sorted(stamps) or [0]
    table, gtids = "no_such_schema.no_such_table", []
    try:
        for ev in binlog_spec.read_events([path], binlog_spec.ReadOptions(verify_checksums=False)):
            if ev.type == "TABLE_MAP_EVENT" and ev.error is None and table.startswith("no_such_schema"):
                table = f"{ev.fields['schema']}.{ev.fields['table']}"
            elif ev.type in ("GTID_EVENT", "GTID_LOG_EVENT") and ev.error is None and ev.fields.get("gtid"):
                gtids.append(ev.fields["gtid"])
    except Exception:  # noqa: BLE001 - none after the fault
        pass
    k = len(ordered) // 2
    shown = lambda ts: datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")  # noqa: E731
    return {"{time}": shown(ordered[k]), "{time:before}": shown(ordered[max(k - 1, 0)]), "{table}": table,
            "{gtids}": _first_half(gtids), "{key}": _first_key(path, table)}


def _first_half(gtids: list[str]) -> str:
    """The GTID set from the first to the middle GTID of the middle one's source (MariaDB d-s-lo-hi, MySQL
    sid:lo-hi); one that matches nothing when there are none."""
    if not gtids:
        return "0-1-999999999-999999999"
    middle = gtids[len(gtids) // 2]
    source, _, last = middle.rpartition(":" if ":" in middle else "-")
    sep = ":" if ":" in middle else "-"
    seqs = [int(g.rpartition(sep)[2]) for g in gtids if g.rpartition(sep)[0] == source]
    return f"{source}{sep}{min(seqs)}-{last}"


def _first_key(path: str, table: str) -> str:
    """--key's text of the first row change of `table` (its key's values, of its after image if it has one), "1"
    where there is none to read."""
    import binlog_spec
    from binlog_spec.rows.decoder import read_rows
    try:
        events = binlog_spec.read_events([path], binlog_spec.ReadOptions(verify_checksums=False))
        for rc in read_rows(events):
            if f"{rc.schema}.{rc.table}" == table and rc.table_def.row_key:
                image = rc.after if rc.after is not None else rc.before
                values = [image.get(rc.table_def.names[i]) for i in rc.table_def.row_key]
                if all(type(v) is int for v in values):
                    return ",".join(map(str, values))
                return "1"
    except Exception:  # noqa: BLE001 - none before the fault
        pass
    return "1"


def _error(exc: BaseException | None) -> str:
    """An error as the transcript records it: class, message, offset, event type, and its cause chain."""
    parts = []
    while exc is not None:
        parts.append(f"{type(exc).__module__}.{type(exc).__name__}: {exc} "
                     f"[offset={getattr(exc, 'offset', None)} event_type={getattr(exc, 'event_type', None)}]")
        exc = exc.__cause__ or exc.__context__
    return " <- ".join(parts) if parts else "ok"


def _drain(lines: list[str], items: Iterable, show: Callable[[object], str]) -> None:
    try:
        for item in items:
            lines.append(show(item))
        lines.append("end: ok")
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        lines.append("end: " + _error(exc))


#: Options of the Spark source's rows-mode reads compared (spark/records.read_split, every split in turn, in
#: process): whole and in resync pieces, faults raised or as rows (the compiled loop of spark/_crecords.pyx).
SPARK_ROWS: list[dict[str, str]] = [
    {"splitSize": "0"},
    {"splitSize": "0", "onError": "skip", "batchRows": "100"},
    {"splitSize": "20000", "planning": "resync", "onError": "skip", "batchRows": "33"},
]


def _spark_rows(path: str, options: dict[str, str]) -> list[str]:
    """The record batches of a Spark rows-mode read of `path` (their sizes and values), and each split's end."""
    import json
    from binlog_spec.spark import records
    from binlog_spec.spark.options import Config
    from binlog_spec.spark.planning import plan
    lines: list[str] = []
    try:
        cfg = Config.from_options({"paths": json.dumps([path]), "mode": "rows", **options})
        schema = records.output_schema(cfg)
        splits = plan(cfg)
    except Exception as exc:  # noqa: BLE001 - the error is what is compared
        return ["plan: " + _error(exc)]
    for split in splits:
        lines.append(f"split {split.start} {split.end}")
        _drain(lines, records.read_split(cfg, schema, split),
               lambda b: f"{b.num_rows} {[c.to_pylist() for c in b.columns]!r}")
    return lines


def canonical(obj):
    """`obj` with every set as a sorted, tagged list: a SET value is a frozenset, whose iteration order is
    its insertion order and the process's hash seed, not part of the value (the outputs sort it)."""
    if isinstance(obj, (set, frozenset)):
        return (type(obj).__name__, sorted(repr(canonical(v)) for v in obj))
    if isinstance(obj, dict):
        return {k: canonical(v) for k, v in obj.items()}
    if type(obj) in (list, tuple):
        return type(obj)(canonical(v) for v in obj)
    return obj


def transcript(path: str) -> list[str]:
    import binlog_spec
    from binlog_spec.cli import main
    from binlog_spec.rows.decoder import observe_schema, read_rows
    from binlog_spec.rows.ddl.schema import SchemaTracker

    lines: list[str] = []
    warn = lines.append
    for options in (binlog_spec.ReadOptions(verify_checksums=False), binlog_spec.ReadOptions()):
        lines.append(f"# events {options.verify_checksums}")
        _drain(lines, binlog_spec.read_events([path], options), lambda ev: repr(canonical(ev.to_dict())))
    lines.append("# rows")
    events = observe_schema(binlog_spec.read_events([path]), SchemaTracker(), warn=warn)
    _drain(lines, read_rows(events, warn=warn), lambda rc: repr(canonical(rc.to_dict())))
    for options in SPARK_ROWS:
        lines.append(f"# spark rows {options}")
        lines += _spark_rows(path, options)
    for argv in COMMANDS:
        out, err = io.StringIO(), io.StringIO()
        try:
            code = main([*argv, path], out, err)
        except BaseException as exc:  # noqa: BLE001 - compared like any output
            code = "raised " + _error(exc)
        lines += [f"# {' '.join(argv)}: exit {code}", out.getvalue(), err.getvalue()]
    for argv in PIPED:
        raw, err = io.BytesIO(), io.StringIO()
        out = io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape", newline="")
        try:
            code = main([*argv, path], out, err)
            out.flush()
        except BaseException as exc:  # noqa: BLE001 - compared like any output
            code = "raised " + _error(exc)
        lines += [f"# piped {' '.join(argv)}: exit {code}", raw.getvalue().decode("utf-8", "surrogateescape"),
                  err.getvalue()]
    size = os.path.getsize(path)
    with tempfile.TemporaryDirectory() as folder:
        target = os.path.join(folder, "undo.bin")
        times = _times(path)
        for argv in CHECKED:
            argv = [times.get(a, a).replace("{out}", target).replace("{stop:2}", str(size // 2))
                    .replace("{stop:3}", str(size // 3)) for a in argv]
            out, err = io.StringIO(), io.StringIO()
            try:
                code = main([*argv, path], out, err)
            except BaseException as exc:  # noqa: BLE001 - compared like any output
                code = "raised " + _error(exc)
            written = "-"
            if os.path.exists(target):
                with open(target, "rb") as f:
                    written = hashlib.sha256(f.read()).hexdigest()
                os.unlink(target)
            lines += [f"# {' '.join(argv).replace(target, '{out}')}: exit {code}, -o {written}",
                      out.getvalue(), err.getvalue().replace(target, "{out}")]
    return lines


def main(argv: list[str]) -> int:
    os.environ["TZ"] = "UTC"
    time.tzset()
    if argv[:1] == ["--show"]:
        sys.stdout.write("\n".join(transcript(argv[1])) + "\n")
        return 0
    from binlog_spec import compiled
    import binlog_spec.cli  # noqa: F401 - every module that asks for its compiled twin
    print(f"core\t{compiled.describe()}", flush=True)
    for path in argv:
        digest = hashlib.sha256("\n".join(transcript(path)).encode("utf-8", "surrogateescape")).hexdigest()
        print(f"{path}\t{digest}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
