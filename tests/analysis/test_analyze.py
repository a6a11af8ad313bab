"""binlog-spec analyze: exact figures, and the row walker checked against the row decoder."""
from __future__ import annotations

import collections
import csv
import gzip
import io
import json
import re
import sys
from datetime import datetime, timezone

import pytest

import binlog_spec
from binlog_spec import cli
from binlog_spec.analysis import collector
from binlog_spec.analysis import report
from binlog_spec.rows.decoder import decode_image, present_columns, read_rows
from binlog_spec.rows.walker import RowWalker
from binlog_spec.rows import values
from binlog_spec.binlog.event_types import ROW_OPS, UPDATE
from binlog_spec.rows.decoder import RowDecoder
from binlog_spec.rows import statement_text
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.binlog.spec import EventType as ET

from conftest import CORPUS, FIXTURES, ROOT, manifest_rows

sys.path.insert(0, str(ROOT / "fixtures"))
from mariadb_server import MariaDBServer  # noqa: E402

ROWS = manifest_rows()
CLEAN = [r for r in ROWS if not r["notes"].startswith("WALK")]
FIXTURE_FILES = sorted(FIXTURES.glob("*/mariadb-bin.000001"))
TYPE_FIXTURES = sorted(FIXTURES.glob("types-*/expected.jsonl"))


def run(paths, **kw):
    return collector.analyze(binlog_spec.read_events([str(p) for p in paths]), collector.AnalyzeOptions(**kw))


def cli_json(argv):
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["analyze", "--format", "json", *argv], out, err)
    assert code in (0, 1), err.getvalue()
    return json.loads(out.getvalue())


def table_rows(r):
    return {(t["table"], op): t[f"{op}_rows"] for t in r["tables"] for op in ("insert", "update", "delete")
            if t[f"{op}_rows"] or t[f"{op}_events"]}


def file_size(path):
    return len(gzip.open(path).read()) if path.suffix == ".gz" else path.stat().st_size


# ---------------------------------------------------------------- the row walker

def _cross_check(path):
    """For every rows event that read_rows decodes: the walker's row count equals the decoder's, and
    the position after each image equals rows.decoder.decode_image's. Returns the number of events checked."""
    # with the CREATE TABLEs replayed, as the analysis and the CLI's rows do (MariaDB 5.3 TIME(n) sizes)
    decoder, walker = RowDecoder(SchemaTracker()), RowWalker(compile_after_rows=0)  # compiled 2nd walk
    checked = 0
    try:
        for ev in binlog_spec.open(path):
            op = ROW_OPS.get(ev.type_code)
            if op is None or ev.error is not None:
                list(decoder.feed(ev))
                continue
            try:
                decoded = list(decoder.feed(ev))     # what read_rows does for this event
            except binlog_spec.BinlogError:
                continue
            table_id, n, before, after, buf = ev.rows_parts()
            table = decoder.tables[table_id]
            ends: list[int] = []
            count, end = walker.walk(table, n, before, after, buf, op == UPDATE,
                                     ev.type_code == ET.partial_update_rows_event, ends)
            assert count == len(decoded), (path, ev.pos)
            assert walker.walk(table, n, before, after, buf, op == UPDATE,
                               ev.type_code == ET.partial_update_rows_event) == (count, end)  # compiled path
            assert end == len(buf), (path, ev.pos)
            if ev.type_code != ET.partial_update_rows_event:
                # the same positions, image by image, as the decoder's own decode_image
                pos, expected = 0, []
                bcols = present_columns(before, n)
                acols = present_columns(after, n) if op == UPDATE else None
                while pos < len(buf):
                    _, pos = decode_image(buf, pos, table, bcols, table.names)
                    expected.append(pos)
                    if acols is not None:
                        _, pos = decode_image(buf, pos, table, acols, table.names)
                        expected.append(pos)
                assert ends == expected, (path, ev.pos)
            checked += 1
    except binlog_spec.BinlogError:
        pass
    return checked


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.parent.name)
def test_walker_matches_the_decoder_on_the_fixtures(path):
    assert _cross_check(path) > 0


def test_walker_matches_the_decoder_on_the_corpus():
    total = sum(_cross_check(CORPUS / r["file"]) for r in ROWS)
    assert total > 100


def test_walker_and_read_rows_agree_per_file():
    """read_rows over a whole stream gives as many row changes as the analysis counts."""
    for path in FIXTURE_FILES:
        r = run([path])
        assert r["summary"]["rows"] == sum(1 for _ in read_rows(binlog_spec.open(path), SchemaTracker()))
        assert r["summary"]["row_errors"] == 0


# ---------------------------------------------------------------- exact figures
@pytest.mark.parametrize("row", CLEAN, ids=lambda r: r["file"])
def test_event_bytes_add_up_to_the_file_size(row):
    path = CORPUS / row["file"]
    r = run([path])
    assert sum(t["bytes"] for t in r["event_types"]) == file_size(path) - 4
    assert r["summary"]["bytes"] == file_size(path) - 4
    assert sum(t["events"] for t in r["event_types"]) == sum(
        int(n) for n in re.findall(r"x(\d+)", row["event_type_counts"]))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.parent.name)
def test_fixture_bytes_add_up(path):
    r = run([path])
    assert r["summary"]["bytes"] == path.stat().st_size - 4
    assert abs(sum(t["share"] for t in r["event_types"]) - 1) < 1e-3


@pytest.mark.parametrize("expected", TYPE_FIXTURES, ids=lambda p: p.parent.name)
def test_rows_per_table_and_operation_equal_the_workload(expected):
    want = collections.Counter()
    for line in expected.read_text(encoding="utf-8").splitlines():
        d = json.loads(line)
        op = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}[d["sql"].split()[0].upper()]
        want[(d["table"], op)] += d["row_count"]
    r = run([expected.parent / "mariadb-bin.000001"])
    got = {k: v for k, v in table_rows(r).items() if v}
    assert got == {k: v for k, v in want.items() if v}
    assert r["summary"]["row_errors"] == 0


def test_demo_rows_per_table_and_operation():
    r = run([FIXTURES / "demo" / "mariadb-bin.000001"])
    # workload.sql: 3 customers and 3 orders inserted; one order shipped; Ada's balance, then the
    # customers with a positive balance (Ada only) updated; the one new order of customer 2 deleted.
    assert table_rows(r) == {("shop.customers", "insert"): 3, ("shop.customers", "update"): 2,
                             ("shop.orders", "insert"): 3, ("shop.orders", "update"): 1,
                             ("shop.orders", "delete"): 1}
    top = r["transactions"]["top_by_bytes"][0]
    assert top["rows"] == 6 and sorted(top["tables"]) == ["shop.customers", "shop.orders"]
    assert [d["statement"].split()[0].upper() for d in r["ddl"]] == ["CREATE"] * 3 + ["ALTER"]


def test_the_biggest_transaction_is_the_workloads_biggest():
    expected = FIXTURES / "types-full" / "expected.jsonl"
    stmts = [json.loads(line) for line in expected.read_text(encoding="utf-8").splitlines()]
    biggest = max(stmts, key=lambda d: len(d["sql"].encode()))
    r = run([expected.parent / "mariadb-bin.000001"], top=5)
    top = r["transactions"]["top_by_bytes"]
    assert len(top) == 5
    assert top[0]["tables"] == [biggest["table"]]
    assert top[0]["rows"] == biggest["row_count"]
    assert top[0]["bytes"] == top[0]["end_pos"] - top[0]["start_pos"]
    assert top[0]["bytes"] > len(biggest["sql"]) // 2
    assert [t["bytes"] for t in top] == sorted((t["bytes"] for t in top), reverse=True)
    assert r["transactions"]["time_source"] == {"commit_event": r["transactions"]["count"]}


def _additive(r):
    return ({t["type"]: (t["events"], t["bytes"], t["inner_events"]) for t in r["event_types"]},
            {t["table"]: tuple(t[k] for k in sorted(t) if k != "table") for t in r["tables"]},
            r["summary"]["rows"], r["summary"]["bytes"], r["transactions"]["count"], len(r["ddl"]))


def _add(a, b):
    types = dict(a[0])
    for k, v in b[0].items():
        types[k] = tuple(x + y for x, y in zip(types.get(k, (0, 0, 0)), v))
    tables = dict(a[1])
    for k, v in b[1].items():
        tables[k] = tuple(x + y for x, y in zip(tables.get(k, (0,) * len(v)), v))
    return (types, tables) + tuple(x + y for x, y in zip(a[2:], b[2:]))


def test_multi_file_run_equals_the_sum_of_single_runs():
    paths = [CORPUS / r["file"] for r in CLEAN if not r["file"].endswith(".gz")][:12] + FIXTURE_FILES
    total = None
    for p in paths:
        single = _additive(run([p]))
        total = single if total is None else _add(total, single)
    together = run(paths)
    assert _additive(together) == total
    assert [f["file"] for f in together["files"]] == [str(p) for p in paths]
    # tables sorted by bytes, descending, by default
    assert [t["bytes"] for t in together["tables"]] == sorted((t["bytes"] for t in together["tables"]),
                                                               reverse=True)


def _comparable(r):
    """An analysis, less what a binlog written by `sql --output-format binlog` cannot keep: the source's
    ROTATE event (binwriter drops it: it names the source's next file and position) and the positions
    (the written file's are its own)."""
    rotate = next((t for t in r["event_types"] if t["type"] == "ROTATE_EVENT"), {"events": 0, "bytes": 0})
    summary = dict(r["summary"], events=r["summary"]["events"] - rotate["events"],
                   bytes=r["summary"]["bytes"] - rotate["bytes"])
    del summary["first_event"], summary["last_event"]   # the ROTATE's time may be the last
    summary.pop("filters", None)                        # the filtered run names its filters
    tx = r["transactions"]
    keys = ("bytes", "events", "rows", "inserts", "updates", "deletes", "tables", "gtid", "xid", "begin_time",
            "commit_time", "duration_s")
    return {
        "summary": summary,
        "event_types": {t["type"]: (t["events"], t["bytes"], t["inner_events"]) for t in r["event_types"]
                        if t["type"] != "ROTATE_EVENT"},
        "tables": r["tables"],
        "transactions": {k: tx[k] for k in ("count", "bytes", "rows", "time_source", "big", "long",
                                            "size_histogram")},
        "top": [{k: t[k] for k in keys} for t in tx["top_by_bytes"]],
        "ddl": [(d["time"], d["database"], d["statement"]) for d in r["ddl"]],
    }


@pytest.mark.parametrize("filters", [["--table", "coltypes.blobs", "--table", "coltypes.ints"],
                                     ["--exclude-table", "coltypes.geoms"],
                                     ["--start-position", "19984", "--stop-position", "80000"],
                                     ["--database", "nosuchdb"], ["--database", "coltypes"]],
                         ids=["tables", "exclude", "positions", "nosuchdb", "database"])
def test_filtered_analysis_equals_the_analysis_of_the_filtered_binlog(tmp_path, filters):
    src = str(FIXTURES / "types-full" / "mariadb-bin.000001")
    out = tmp_path / "filtered.bin"
    err = io.StringIO()
    assert cli.main(["sql", "--output-format", "binlog", "-o", str(out), src, *filters], io.StringIO(), err) == 0, \
        err.getvalue()
    filtered = cli_json([src, *filters, "--top", "1000"])
    of_output = cli_json([str(out), "--top", "1000"])
    assert _comparable(filtered) == _comparable(of_output)
    assert filtered["summary"]["rows"] <= run([src])["summary"]["rows"]


def test_filters_leave_no_empty_transaction():
    """--database nosuchdb keeps no transaction, no row and no ANNOTATE_ROWS: only the file's own
    FORMAT_DESCRIPTION, BINLOG_CHECKPOINT and ROTATE events are left."""
    src = FIXTURES / "types-full" / "mariadb-bin.000001"
    r = cli_json([str(src), "--database", "nosuchdb"])
    assert r["summary"]["transactions"] == r["summary"]["rows"] == r["summary"]["ddl"] == 0
    header = [ev for ev in binlog_spec.open(src) if ev.type in ("FORMAT_DESCRIPTION_EVENT", "ROTATE_EVENT",
                                                                 "BINLOG_CHECKPOINT_EVENT", "GTID_LIST_EVENT")]
    assert {t["type"]: t["events"] for t in r["event_types"]} == dict(collections.Counter(ev.type for ev in header))
    assert r["summary"]["bytes"] == sum(ev.size for ev in header)
    # only coltypes.ints: its ANNOTATE_ROWS are those of the statements on it in the workload
    ints = cli_json([str(src), "--table", "coltypes.ints"])
    stmts = [json.loads(line) for line in (src.parent / "expected.jsonl").read_text(encoding="utf-8").splitlines()]
    annotate = next(t for t in ints["event_types"] if t["type"] == "ANNOTATE_ROWS_EVENT")
    assert annotate["events"] == sum(1 for d in stmts if d["table"] == "coltypes.ints")


def test_filters_remove_events_from_every_statistic():
    src = str(FIXTURES / "types-full" / "mariadb-bin.000001")
    r = cli_json([src, "--table", "coltypes.ints"])
    assert [t["table"] for t in r["tables"]] == ["coltypes.ints"]
    full = run([src])
    assert r["summary"]["events"] < full["summary"]["events"]
    # every kept event has a (non-zero) timestamp in this fixture: each one is in the timeline, but the
    # control events a filter keeps whatever their time (FORMAT_DESCRIPTION, ROTATE...), counted apart
    assert sum(t["events"] for t in r["timeline"]) + r["timeline_outside"]["events"] == r["summary"]["events"]
    assert r["timeline_outside"]["events"] == sum(t["events"] for t in r["event_types"] if t["type"] in (
        "FORMAT_DESCRIPTION_EVENT", "ROTATE_EVENT", "BINLOG_CHECKPOINT_EVENT", "GTID_LIST_EVENT")) > 0
    assert sum(t["rows"] for t in r["timeline"]) == r["summary"]["rows"]


# ---------------------------------------------------------------- options and formats
def test_sort_and_top_options():
    src = str(FIXTURES / "types-full" / "mariadb-bin.000001")
    by_name = cli_json([src, "--sort", "name", "--top", "3"])
    names = [t["table"] for t in by_name["tables"]]
    assert names == sorted(names)
    assert len(by_name["transactions"]["top_by_bytes"]) == 3
    assert len(by_name["transactions"]["top_by_duration"]) == 3
    by_rows = cli_json([src, "--sort", "rows"])
    assert [t["rows"] for t in by_rows["tables"]] == sorted((t["rows"] for t in by_rows["tables"]), reverse=True)


def test_big_and_long_flags():
    src = str(FIXTURES / "types-full" / "mariadb-bin.000001")
    r = cli_json([src, "--big-trx-bytes", "5000", "--long-trx-seconds", "0"])
    tx = r["transactions"]
    assert tx["big"] == sum(1 for t in tx["flagged"] if t["big"]) > 0
    assert all(t["bytes"] > 5000 for t in tx["flagged"] if t["big"])
    assert tx["long"] == 0      # whole-second event times: every transaction here takes 0 s


def test_timeline_bucket():
    src = str(FIXTURES / "demo" / "mariadb-bin.000001")
    a = cli_json([src, "--bucket", "60"])
    b = cli_json([src, "--bucket", "3600"])
    assert sum(t["bytes"] for t in a["timeline"]) == sum(t["bytes"] for t in b["timeline"])
    assert len(b["timeline"]) < len(a["timeline"])
    assert all(t["start"].endswith(":00:00Z") for t in b["timeline"])


def test_text_markdown_and_csv_formats(tmp_path):
    src = str(FIXTURES / "demo" / "mariadb-bin.000001")
    for fmt in ("text", "markdown", "csv"):
        out = io.StringIO()
        assert cli.main(["analyze", "--format", fmt, src], out, io.StringIO()) == 0
        text = out.getvalue()
        assert "shop.customers" in text and "WRITE_ROWS_EVENT_V1" in text
    out = io.StringIO()
    cli.main(["analyze", "--format", "csv", src], out, io.StringIO())
    names = [line[2:] for line in out.getvalue().splitlines() if line.startswith("# ")]
    assert names == [s[0] for s in report.sections(run([src]))]
    d = tmp_path / "csv"
    assert cli.main(["analyze", "--format", "csv", "--output-dir", str(d), src], io.StringIO(), io.StringIO()) == 0
    with open(d / "tables.csv", encoding="utf-8") as f:
        tables = list(csv.DictReader(f))
    assert {t["table"]: int(t["insert_rows"]) for t in tables} == {"shop.customers": 3, "shop.orders": 3}
    assert (d / "event_types.csv").exists() and (d / "timeline.csv").exists() and (d / "ddl.csv").exists()


def test_mysql8_commit_timestamps_are_used_and_durations_are_whole_seconds():
    """MySQL 8.0.31: each transaction's commit time is its GTID event's immediate_commit_timestamp;
    its duration is that time cut to the second minus its first event's (whole-second) timestamp."""
    path = CORPUS / "mysql-cdc-rs" / "binlog.000694"
    want, open_tx = {}, None
    for ev in binlog_spec.open(path):
        if ev.type == "ANONYMOUS_GTID_LOG_EVENT":
            us = ev.immediate_commit_timestamp
            open_tx = want[ev.pos] = {"commit_us": us, "begin": ev.timestamp}
        elif open_tx is not None and ev.type not in ("STOP_EVENT", "ROTATE_EVENT"):
            open_tx["begin"] = min(open_tx["begin"], ev.timestamp)
    r = run([path], top=1000)
    tx = r["transactions"]
    assert tx["time_source"] == {"immediate_commit_timestamp": 418} and len(want) == 418
    assert "durations are whole seconds" in tx["time_source_note"]
    got = {t["start_pos"]: t for t in tx["top_by_bytes"]}
    assert sorted(got) == sorted(want)
    for pos, w in want.items():
        t = got[pos]
        commit = datetime.fromtimestamp(w["commit_us"] // 10 ** 6, tz=timezone.utc).replace(
            microsecond=w["commit_us"] % 10 ** 6)
        assert t["commit_time"] == commit.isoformat().replace("+00:00", "Z"), pos
        assert t["duration_s"] == w["commit_us"] // 10 ** 6 - w["begin"], pos
    durations = collections.Counter(t["duration_s"] for t in got.values())
    assert durations == {0: 415, 1: 3}     # not the sub-second part of every commit time


def test_long_transactions_are_flagged():
    """zalora mysql-bin.07 (MariaDB 10.0): the transaction at 627 writes its first row at 03:45:19 and
    commits (XID) at 03:45:31, 12 s; the CREATE TABLE at 326 takes 0 s."""
    src = str(CORPUS / "zalora_binlog-parser" / "mysql-bin.07")
    r = cli_json([src, "--long-trx-seconds", "11"])
    tx = r["transactions"]
    assert tx["long"] == 1 and tx["big"] == 0
    assert [(t["start_pos"], t["duration_s"], t["long"]) for t in tx["flagged"]] == [(627, 12, True)]
    assert tx["top_by_duration"][0]["start_pos"] == 627
    assert cli_json([src, "--long-trx-seconds", "12"])["transactions"]["flagged"] == []


def test_flagged_transactions_do_not_depend_on_top():
    src = str(FIXTURES / "types-full" / "mariadb-bin.000001")
    with_top = cli_json([src, "--big-trx-bytes", "5000"])["transactions"]
    no_top = cli_json([src, "--big-trx-bytes", "5000", "--top", "0"])["transactions"]
    assert no_top["top_by_bytes"] == [] and no_top["top_by_duration"] == []
    assert no_top["flagged"] == with_top["flagged"] and no_top["flagged_count"] == with_top["big"] > 0
    assert no_top["flagged_note"] == f"flagged: {with_top['big']}, showing {with_top['big']}"
    text = io.StringIO()
    cli.main(["analyze", src, "--big-trx-bytes", "5000", "--top", "0"], text, io.StringIO())
    assert f"flagged: {with_top['big']}, showing {with_top['big']}" in text.getvalue()


def test_untimed_events_are_counted_apart():
    """Events with timestamp 0 (a ROTATE or FORMAT_DESCRIPTION the server writes without a time)
    are in no timeline bucket: the buckets plus the untimed line add up to the totals."""
    # the relay logs' ROTATE at 98 / 155 has timestamp 0; the demo has none
    for name, pos in (("bug33029-slave-relay-bin.000001", 98), ("corrupt-relay-bin.000624", 98),
                      ("rpl_unfiltered_hidden_gcol.000001", 155), (None, None)):
        path = CORPUS / "rust_mysql_common" / name if name else FIXTURES / "demo" / "mariadb-bin.000001"
        zero = [ev for ev in binlog_spec.open(path) if ev.timestamp == 0]
        assert [(ev.type, ev.pos) for ev in zero] == ([("ROTATE_EVENT", pos)] if name else [])
        r = run([path])
        u = r["timeline_untimed"]
        assert (u["events"], u["bytes"], u["rows"]) == (len(zero), sum(ev.size for ev in zero), 0)
        for key in ("events", "rows", "bytes"):
            assert sum(t[key] for t in r["timeline"]) + u[key] == r["summary"][key], (name, key)
        assert ("1 events with timestamp 0" in r["timeline_note"]) == bool(name)
        text = io.StringIO()
        cli.main(["analyze", str(path)], text, io.StringIO())
        assert (report.UNTIMED in text.getvalue()) == bool(name)


def test_ddl_after_a_comment_is_found():
    for stmt in ("/* migration 42 */ ALTER TABLE t ADD c INT", "-- note\nDROP TABLE t",
                 "/*!40101 CREATE TABLE t (a INT) */", "  create index i on t (a)", "SET PASSWORD FOR x = 'y'",
                 "/* a */ /* b */ TRUNCATE TABLE t", "FLUSH PRIVILEGES", "OPTIMIZE TABLE t",
                 # a quote inside the comment, a comment longer than the prefix read, `#` comments,
                 # MariaDB's executable comment, and mysqldump's view (executable comments in a row)
                 "/* don't */ ALTER TABLE t ADD c INT", "-- it's\nDROP TABLE t", "# it's\nDROP TABLE t",
                 "/* " + "x" * 300 + " */ ALTER TABLE t ADD c INT", "/*M!100100 CREATE TABLE t (a INT) */",
                 "/*!50001 CREATE ALGORITHM=UNDEFINED */ /*!50013 DEFINER=`root`@`%` SQL SECURITY DEFINER */"
                 " /*!50001 VIEW `v` AS select 1 */"):
        assert statement_text.is_ddl(stmt), stmt
    for stmt in ("INSERT INTO t VALUES ('CREATE')", "/* ALTER */ UPDATE t SET a = 1", "SET @a = 1",
                 "BEGIN", "SELECT 'DROP TABLE t'", "", "/* it's only a comment */", "/* unterminated ALTER",
                 "UPDATE t SET a = 1 -- DROP TABLE t", "/*!40101 SET NAMES utf8 */"):
        assert not statement_text.is_ddl(stmt), stmt


@pytest.mark.parametrize("comment", [b"/* deploy 7 */ ", b"/* don't " + b"x" * 300 + b" */\n"],
                         ids=["short", "long-with-quote"])
def test_ddl_after_a_comment_in_a_binlog(tmp_path, comment):
    """The demo binlog with a comment put before its ALTER TABLE's text (sizes, positions and
    CRCs redone): the DDL section lists it with the others, also when the comment holds a quote and
    is longer than the start of a statement the analysis reads first."""
    from binlog_spec.binlog.writer import bare_bytes, frame
    from binlog_spec.binlog import spec
    src = FIXTURES / "demo" / "mariadb-bin.000001"
    data = bytearray(spec.MAGIC)
    for ev in binlog_spec.open(src):
        bare = bare_bytes(ev)
        if ev.type == "QUERY_EVENT" and ev.query.startswith("ALTER TABLE"):
            at = bare.index(b"ALTER TABLE")
            bare = bare[:at] + comment + bare[at:]
        data += frame(bare, len(data), ev.checksum is not None)
    out = tmp_path / "commented.bin"
    out.write_bytes(bytes(data))
    ddl = [d["statement"] for d in run([out])["ddl"]]
    assert [d.split()[0] for d in ddl] == ["CREATE", "CREATE", "CREATE", "/*"]
    assert ddl[3].startswith(comment.decode() + "ALTER TABLE customers ADD COLUMN vip")


def test_memory_is_bounded_by_top():
    a = collector.Analyzer(collector.AnalyzeOptions(top=2))
    for path in FIXTURE_FILES:
        a.feed_all(binlog_spec.open(path))
    r = a.report()
    assert r["transactions"]["count"] > 50
    assert len(a._top_bytes) == 2 and len(a._top_duration) == 2


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.parent.name)
def test_transactions_equal_txsummary(path):
    """The analyzer's transactions are txsummary's (which decodes the rows to count them)."""
    from binlog_spec.stream.transactions import summarize
    want = [t.to_dict() for t in summarize(binlog_spec.open(path))]
    r = run([path], top=1000)
    got = sorted(r["transactions"]["top_by_bytes"], key=lambda t: (t["start_pos"], t["end_pos"]))
    assert len(got) == len(want) == r["transactions"]["count"]
    for g, w in zip(got, want):
        for k in ("file", "start_pos", "end_pos", "begin_time", "commit_time", "gtid", "xid", "bytes", "rows",
                  "inserts", "updates", "deletes", "tables", "complete", "events"):
            assert g[k] == w[k], (k, g, w)
        assert g["time_source"] == w["commit_time_source"]


def test_transactions_equal_txsummary_on_the_corpus():
    """Same check over the corpus (MySQL 5.7/8.0 with payloads and commit timestamps, MariaDB)."""
    from binlog_spec.stream.transactions import summarize
    keys = ("file", "start_pos", "end_pos", "begin_time", "commit_time", "gtid", "xid", "bytes", "tables",
            "complete", "events", "rows")
    compared = 0
    for row in ROWS:
        path = CORPUS / row["file"]
        try:
            want = [t.to_dict() for t in summarize(binlog_spec.open(path))]
        except binlog_spec.BinlogError:
            continue    # the row decoder (or the reader) stops on this file
        r = run([path], top=100_000)
        if r["summary"]["row_errors"]:
            continue
        got = sorted(r["transactions"]["top_by_bytes"], key=lambda t: (t["start_pos"], t["end_pos"]))
        assert [{k: t[k] for k in keys} | {"src": t["time_source"]} for t in got] == \
            [{k: t[k] for k in keys} | {"src": t["commit_time_source"]} for t in want], row["file"]
        compared += 1
    assert compared > 30


def test_a_broken_file_is_reported_with_everything_read_before_it(tmp_path):
    """MyFlash haha.000005 ends with one stray byte at 3283 (MANIFEST): analyze reports the events
    before it and the good files after it, names the fault on stderr and in the report, exits 3."""
    broken = CORPUS / "MyFlash" / "haha.000005"
    good = FIXTURES / "demo" / "mariadb-bin.000001"
    before = []
    try:
        for ev in binlog_spec.open(broken):
            before.append(ev)
    except binlog_spec.TruncatedEventError as exc:
        assert exc.offset == 3283
    for fmt in ("json", "text", "markdown", "csv"):
        out, err = io.StringIO(), io.StringIO()
        html = tmp_path / f"{fmt}.html"
        code = cli.main(["analyze", "--format", fmt, "--html", str(html), str(broken), str(good)], out, err)
        assert code == cli.EXIT_BAD_INPUT
        assert err.getvalue() == (f"binlog-spec: error: {broken}: offset 3283: file ends with 1 bytes, less than "
                                  "a 19-byte event header\n")
        assert "TruncatedEventError" in out.getvalue() and "3283" in out.getvalue()
        assert "offset 3283" in html.read_text(encoding="utf-8")
    r = json.loads(cli_json_any([str(broken), str(good)]))
    assert r["faults"] == [{"file": str(broken), "offset": 3283, "event_type": None, "error": "TruncatedEventError",
                            "message": "file ends with 1 bytes, less than a 19-byte event header"}]
    assert r["summary"]["faults"] == 1
    files = {f["file"]: f for f in r["files"]}
    assert files[str(broken)] == {"file": str(broken), "events": len(before), "bytes": 3283 - 4}
    assert files[str(good)]["bytes"] == good.stat().st_size - 4
    # the events before the fault and the good file are all counted: the sum of the two single runs
    alone = run([good])
    assert r["summary"]["rows"] == alone["summary"]["rows"] + sum(1 for _ in read_rows(before)) > 10
    assert r["summary"]["events"] == len(before) + alone["summary"]["events"]


def cli_json_any(argv):
    out = io.StringIO()
    cli.main(["analyze", "--format", "json", *argv], out, io.StringIO())
    return out.getvalue()


WORKLOAD = """
CREATE DATABASE w;
USE w;
CREATE TABLE t (id INT PRIMARY KEY, pad VARCHAR(2000));
SET TIMESTAMP=1767225600;
BEGIN; INSERT INTO t VALUES (1, REPEAT('a', 100)); COMMIT;
SELECT @@last_gtid;
SET TIMESTAMP=1767225610;
BEGIN; INSERT INTO t SELECT seq + 10, REPEAT('b', 1500) FROM seq_1_to_400; COMMIT;
SELECT @@last_gtid;
SET TIMESTAMP=1767225700;
BEGIN; INSERT INTO t VALUES (2, 'x');
SET TIMESTAMP=1767225790;
UPDATE t SET pad = 'y' WHERE id = 2; COMMIT;
SELECT @@last_gtid;
SET TIMESTAMP=1767225800;
BEGIN; UPDATE t SET pad = 'z' WHERE id = 1; DELETE FROM t WHERE id = 11; COMMIT;
SET TIMESTAMP=1767225805;
INSERT INTO t VALUES (3, REPEAT('c', 1000));
"""


def test_the_biggest_and_the_longest_transactions_are_the_workloads(tmp_path):
    """On a private MariaDB server: one transaction made much bigger (400 rows of 1.5 KB, ~600 KB) and
    one made longer (90 s between its two statements, by SET TIMESTAMP) than the others: analyze
    puts each first in its list, and the thresholds between them and the rest flag exactly them."""
    srv = MariaDBServer().start()
    try:
        srv.sql("FLUSH BINARY LOGS;")
        first = srv.binlogs()[-1]
        small, big, long_ = srv.sql(WORKLOAD).split()
        srv.sql("FLUSH BINARY LOGS;")
        logs = [p for p in srv.binlogs() if p.name >= first.name][:-1]
        copies = []
        for p in logs:
            copies.append(tmp_path / p.name)
            copies[-1].write_bytes(p.read_bytes())
    finally:
        srv.cleanup()
    r = cli_json([*map(str, copies), "--big-trx-bytes", "100000", "--long-trx-seconds", "60"])
    tx = r["transactions"]
    assert tx["top_by_bytes"][0]["gtid"] == big and tx["top_by_bytes"][0]["rows"] == 400
    assert tx["top_by_bytes"][0]["bytes"] > 400 * 1500
    assert tx["top_by_duration"][0]["gtid"] == long_ and tx["top_by_duration"][0]["duration_s"] == 90
    assert (tx["big"], tx["long"]) == (1, 1)
    assert sorted((t["gtid"], t["big"], t["long"]) for t in tx["flagged"]) == \
        sorted([(big, True, False), (long_, False, True)])
    assert small not in {t["gtid"] for t in tx["flagged"]}


def test_rows_events_without_their_table_map_are_listed_with_file_and_offset():
    """MySQL 5.1's ver_5_1-wl2325_s.001 has rows events whose TABLE_MAP is not in the file: their rows
    are not counted, and each is named (file, offset, type) in the report and on stderr, exit 1."""
    path = CORPUS / "rust_mysql_common" / "ver_5_1-wl2325_s.001"
    mapped, unmapped = set(), []
    for ev in binlog_spec.open(path):
        if ev.type_code == ET.table_map_event:
            mapped.add(ev.table_id)
        elif ev.type_code in ROW_OPS and ev.error is None and ev.table_id not in mapped:
            unmapped.append((ev.pos, ev.type))
    assert unmapped
    with pytest.raises(binlog_spec.MissingTableMapError) as exc:   # what the row decoder says of the first
        list(read_rows(binlog_spec.open(path)))
    assert exc.value.offset == unmapped[0][0]
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["analyze", "--format", "json", str(path)], out, err) == cli.EXIT_WARNINGS
    r = json.loads(out.getvalue())
    assert r["summary"]["row_errors"] == len(unmapped)
    assert [(e["offset"], e["event_type"], e["error"]) for e in r["row_errors"]] == \
        [(pos, name, "MissingTableMapError") for pos, name in unmapped]
    assert {e["file"] for e in r["row_errors"]} == {str(path)}
    for pos, name in unmapped:
        assert f"{path}: offset {pos}: {name}: no TABLE_MAP_EVENT defines table id" in err.getvalue()
    assert f"== Rows events whose rows are not counted ({len(unmapped)}) ==" in list(report.text_lines(r))


def test_an_html_path_that_cannot_be_written_fails_before_reading(tmp_path):
    err = io.StringIO()
    bad = tmp_path / "missing-dir" / "report.html"
    assert cli.main(["analyze", "--html", str(bad), str(tmp_path / "no-such-binlog")], io.StringIO(), err) \
        == cli.EXIT_USAGE
    assert f"cannot write {bad}" in err.getvalue()


@pytest.mark.parametrize("option", ["--long-trx-seconds=-0.5", "--top=-1", "--bucket=0"])
def test_negative_thresholds_are_refused(option):
    err = io.StringIO()
    assert cli.main(["analyze", option, str(FIXTURES / "demo" / "mariadb-bin.000001")], io.StringIO(), err) \
        == cli.EXIT_USAGE
    assert "must be" in err.getvalue()


def test_a_file_with_no_readable_event_is_listed_in_its_place():
    """rust_mysql_common binlog_truncated_event.000001 ends 10 bytes after its magic (MANIFEST: "trailing 10 bytes at 4"):
    it is a row of the files section, with nothing counted, in the order the files were given."""
    broken = CORPUS / "rust_mysql_common" / "binlog_truncated_event.000001"
    demo = FIXTURES / "demo" / "mariadb-bin.000001"
    faults = []
    r = collector.analyze(binlog_spec.read_events([str(broken), str(demo)], faults=faults), faults=faults)
    assert [(f["file"], f["events"], f["bytes"]) for f in r["files"]] == \
        [(str(broken), 0, 0), (str(demo), r["summary"]["events"], file_size(demo) - 4)]
    assert [(f["file"], f["offset"], f["error"]) for f in r["faults"]] == [(str(broken), 4, "TruncatedEventError")]


def test_analyze_counts_the_rows_of_pre_10_1_temporal_tables_created_before_the_first_file_with_schema(tmp_path):
    """types-legacy-temporal (MariaDB, mysql56_temporal_format=OFF) without its CREATE TABLE, as if the table
    was created before the file: TIME(n)/DATETIME(n)/TIMESTAMP(n) rows cannot be delimited without the
    precision, so they are row errors (exit 1); --schema (the dump of the fixture server) gives it, and the
    counts equal those of the whole file, whose CREATE TABLE is replayed."""
    src = FIXTURES / "types-legacy-temporal"
    cut = tmp_path / "cut.000001"
    assert cli.main(["sql", "--output-format", "binlog", "--start-position", "924", "-o", str(cut),
                     str(src / "mariadb-bin.000001")], io.StringIO(), io.StringIO()) == 0

    def analysis(*argv):
        out, err = io.StringIO(), io.StringIO()
        code = cli.main(["analyze", "--format", "json", *map(str, argv)], out, err)
        return code, json.loads(out.getvalue()), err.getvalue()
    code, without, err = analysis(cut)
    assert code == cli.EXIT_WARNINGS and without["summary"]["row_errors"] > 0 and "not counted" in err
    code, with_schema, err = analysis("--schema", src / "schema.sql", "--default-charset", "utf8mb4", cut)
    assert code == cli.EXIT_OK and with_schema["summary"]["row_errors"] == 0 and err == ""
    _, whole, _ = analysis(src / "mariadb-bin.000001")
    assert with_schema["tables"] == whole["tables"] and whole["tables"][0]["rows"] > 0


def test_a_transaction_with_a_savepoint_and_rollback_to_counts_once():
    """The MySQL test suite's std_data/binlog_savepoint.000001: BEGIN, SavePoint mixed_cases, ROLLBACK TO
    mixed_cases, XID: one transaction (Query_log_event::ends_group: ROLLBACK TO ends none)."""
    r = cli_json([str(CORPUS / "rust_mysql_common/binlog_savepoint.000001")])
    assert r["transactions"]["count"] == 1
    assert r["transactions"]["time_source"] == {"commit_event": 1}
