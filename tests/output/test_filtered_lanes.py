"""The compiled lanes under the filters a compiled loop decides (output/_crow_filter.pxi: time bounds, server ids,
schema and table filters): `rows --format jsonl` and `sql --sql2` give, byte for byte, what the pure-Python core
gives (BINLOG_SPEC_PURE=1: every event read, the filters of stream/filters.py), with the same notes and exit
code, on a binlog the real MariaDB wrote: transactions whose events straddle a time bound (the first event
decides), transactions of several tables where a table filter drops some rows events, a server id of its own,
a table whose values the lane leaves (an invalid DATE: the rest of its transactions goes whole to the ordinary path), and
selections that keep nothing; and the lane writes most of the lines. What the filters hold at the end (the
table ids they exclude) and count (the Selection behind the notes) is what they hold and count reading every
event, and the transactions of dropped tables alone are skipped with no Event made."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from binlog_spec import compiled
from binlog_spec.output import lane_text

from conftest import ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = [pytest.mark.skipif(compiled.load("binlog_spec.output._crow_text") is None,
                                 reason="the compiled core is not built (make build)"),
              pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")]

T0 = 1_700_000_000


def _at(ts: int) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S")


def _workload() -> str:
    """Transactions at T0 + k*10 s: single-table, multi-table (a and b interleaved), one whose statements are
    stamped past its first event, some from server id 2, some of table c (an invalid DATE: left by the lane)."""
    sql = ["CREATE DATABASE d",
           "CREATE TABLE d.a (id INT PRIMARY KEY, name VARCHAR(40) CHARSET utf8mb4, price DECIMAL(10,2))",
           "CREATE TABLE d.b (id INT PRIMARY KEY, note VARCHAR(20) CHARSET utf8mb4, at DATETIME(3))",
           "CREATE TABLE d.c (id INT PRIMARY KEY, label VARCHAR(20) CHARSET latin1, day DATE)",
           "SET SESSION sql_mode = 'ALLOW_INVALID_DATES'"]
    for k in range(60):
        ts = T0 + 10 * k
        sql.append(f"SET TIMESTAMP={ts}")
        if k % 10 == 7:
            sql.append("SET SESSION server_id=2")
        if k % 3 == 0:
            sql.append(f"INSERT INTO d.a VALUES ({k}, 'ä{k}', {k}.25), ({k + 1000}, NULL, -{k})")
        elif k % 3 == 1:          # a and b in one transaction, a's rows events between b's
            sql += ["BEGIN", f"INSERT INTO d.b VALUES ({k}, 'n{k}', '2024-01-02 03:04:05.678')",
                    f"INSERT INTO d.a VALUES ({k}, 'x', 1)", f"UPDATE d.b SET note = 'u{k}' WHERE id = {k}",
                    f"SET TIMESTAMP={ts + 5}",       # (later statements, stamped inside the next window)
                    f"DELETE FROM d.a WHERE id = {k}", f"INSERT INTO d.b VALUES ({k + 1000}, 'm', NULL)", "COMMIT"]
        elif k % 6 == 2:          # c after a in one transaction: the lane cannot write c's value (stamped before
            sql += ["BEGIN", f"SET TIMESTAMP={ts + 5}", f"INSERT INTO d.a VALUES ({k}, 'y', 2)",   # a's, its first
                    f"SET TIMESTAMP={ts}", f"INSERT INTO d.c VALUES ({k}, 'Café', '2024-02-30')",   # event's)
                    f"SET TIMESTAMP={ts + 5}", "COMMIT"]
        else:
            sql.append(f"INSERT INTO d.b VALUES ({k}, 'b', NULL)")
        if k % 10 == 7:
            sql.append("SET SESSION server_id=1")
    sql.append(f"SET TIMESTAMP={T0 + 700}")
    sql.append("INSERT INTO d.a SELECT seq + 5000, REPEAT('n', 30), seq / 100 FROM d.seq_1_to_3000")
    return ";\n".join(sql) + ";\n"


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    with mariadb_server.MariaDBServer() as srv:
        srv.sql(_workload())
        path = tmp_path_factory.mktemp("filtered") / "mariadb-bin.000001"
        path.write_bytes(srv.binlogs()[-1].read_bytes())
    return str(path)


def _pure(args: list[str]) -> tuple[str, str, int]:
    """The command's (stdout, stderr, exit code) under the pure-Python core (the reference)."""
    env = {**os.environ, "BINLOG_SPEC_PURE": "1", "PYTHONPATH": str(ROOT / "src")}
    got = subprocess.run([sys.executable, "-m", "binlog_spec", *args], env=env, capture_output=True)
    return got.stdout.decode("utf-8", "surrogateescape"), got.stderr.decode(), got.returncode


def _with_lane(monkeypatch, args: list[str]) -> tuple[tuple[str, str, int], int]:
    """The command's output in process (the compiled core), and how many of its lines the lane wrote."""
    from binlog_spec.cli import main
    ordinary = [-1]       # (-1: no lane ran, the ordinary path wrote every line)
    lines_of = lane_text.with_lane

    def counted(lane, lines):
        ordinary[0] = 0

        def of_the_ordinary_path():
            for line in lines:
                ordinary[0] += 1
                yield line
        return lines_of(lane, of_the_ordinary_path())
    monkeypatch.setattr(lane_text, "with_lane", counted)
    out, err = io.StringIO(), io.StringIO()
    code = main(args, out, err)
    by_lane = out.getvalue().count("\n") - ordinary[0] if ordinary[0] >= 0 else 0
    return (out.getvalue(), err.getvalue(), code), by_lane


#: (filters, share of the lines the lane writes at least, of rows --format jsonl and of sql --sql2).
CASES = [
    (["--start-datetime", _at(T0 + 100), "--stop-datetime", _at(T0 + 400)], 0.7),
    (["--start-datetime", _at(T0 + 105)], 0.9),     # (the bound between a transaction's first event and its later)
    (["--table", "d.a"], 0.9),
    (["--exclude-table", "d.b", "--stop-datetime", _at(T0 + 300)], 0.7),
    (["--exclude-table", "d.c"], 0.9),
    # (a transaction of a then c whose first event is inside the window, c's statement stamped before it: the lane
    # writes a's rows and hands the rest on, the filters keep it whole)
    (["--exclude-table", "d.b", "--start-datetime", _at(T0 + 323)], 0.6),
    (["--database", "d", "--exclude-table", "d.a"], 0.7),
    (["--server-id", "2"], 0.7),
    (["--exclude-server-id", "2", "--stop-datetime", _at(T0 + 500)], 0.7),
    (["--table", "d.b", "--table", "d.c", "--start-datetime", _at(T0 + 300)], 0.7),
    (["--table", "d.c"], 0.0),                      # (c's values: its transactions are the reference's whole)
    (["--include-gtids", "0-1-20-40"], 0.5),        # (GTIDs: the skipping loop and the lanes decide by them too)
    (["--exclude-gtids", "0-1-10-30,0-2-1-100", "--exclude-table", "d.c"], 0.7),
    (["--start-position", "0-1-30", "--table", "d.a"], 0.7),
    (["--table", "d.nosuch"], 0.0),                 # kept nothing: the notes
    (["--start-datetime", _at(T0 + 10_000)], 0.0),
]


@pytest.mark.parametrize("command", [["rows", "--format", "jsonl"], ["sql", "--sql2"]], ids=["rows", "sql2"])
@pytest.mark.parametrize("filters, share", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_the_filtered_lane_gives_what_the_pure_core_gives(monkeypatch, log, command, filters, share):
    args = [*command, "--timezone", "UTC", *filters, log]
    got, by_lane = _with_lane(monkeypatch, args)
    assert got == _pure(args)
    lines = got[0].count("\n")
    assert by_lane >= share * lines
    if share:
        assert by_lane > 0


def test_the_lane_writes_the_kept_table_of_a_multi_table_transaction(monkeypatch, log):
    """--table d.a: the transactions of a and b are the lane's, b's rows events dropped inside them."""
    args = ["rows", "--format", "jsonl", "--table", "d.a", log]
    got, by_lane = _with_lane(monkeypatch, args)
    assert got == _pure(args) and got[2] == 0
    assert '"table":"b"' not in got[0] and got[0].count('"table":"a"') == got[0].count("\n") > 3000
    assert by_lane >= 0.98 * got[0].count("\n")


def test_a_selection_that_keeps_no_row_says_so_as_the_reference(monkeypatch, log):
    args = ["rows", "--format", "jsonl", "--table", "d.nosuch", log]
    got, _ = _with_lane(monkeypatch, args)
    assert got == _pure(args)
    assert got[0] == "" and "--table d.nosuch: no TABLE_MAP" in got[1] and "kept no rows event" in got[1]



def _pipeline(log: str, filters, lane: bool) -> tuple:
    """The rows JSON text (api), and the filters' state and tally at the end: the table ids they exclude
    (SkipGate.excluded_tables), the Selection's counts and names; with the lane, or every event read by the
    filters (the reference)."""
    from binlog_spec import api
    from binlog_spec.rows.ddl.schema import SchemaTracker
    gate, selection, schema = api.skip_gate(filters), api.Selection(), SchemaTracker()
    sink = api.skipping_sink(gate, filters, selection) if lane else None
    taker = api.row_lane("jsonl", schema, filters, (gate, selection, sink)) if lane else None
    assert (taker is not None) == lane
    events = api.read_events([log], api.ReadOptions(parse_bodies=api.ROWS_BODIES), sink=taker)
    kept = api.select_events(events, filters, [log], schema, gate=gate, selection=selection)
    text = "\n".join(x.decode() if type(x) is bytes else x
                     for x in api.lines_with_lane(taker, api.row_lines(api.read_rows(kept), "jsonl")))
    return text, set(gate.excluded_tables), (selection.kept, selection.rows, selection.tables, selection.schemas)


@pytest.mark.parametrize("filters", [
    dict(tables=("d.a",)), dict(exclude_tables=("d.b",), stop_datetime=T0 + 300), dict(exclude_tables=("d.c",)),
    dict(exclude_tables=("d.b",), start_datetime=T0 + 323),
    dict(databases=("d",), server_ids=frozenset({1}), start_datetime=T0 + 105), dict(tables=("d.nosuch",))],
    ids=["table", "exclude-window", "exclude-c", "exclude-window-handed-on", "database-server-window", "nothing"])
def test_the_filters_state_and_tally_after_the_lane_are_those_of_every_event_read(log, filters):
    from binlog_spec.stream.filters import FilterOptions
    filters = FilterOptions(**{k: datetime.fromtimestamp(v, tz=timezone.utc) if k.endswith("datetime") else v
                               for k, v in filters.items()})
    assert _pipeline(log, filters, lane=True) == _pipeline(log, filters, lane=False)


def test_the_transactions_of_dropped_tables_alone_are_skipped_unread(log):
    """--table d.a: the transactions of b alone are skipped by stream/_cskipping.pyx (no Event made for them),
    the table id of each of their rows events read from its layout."""
    from binlog_spec import api
    from binlog_spec.rows.ddl.schema import SchemaTracker
    from binlog_spec.stream.filters import FilterOptions
    every, starts = list(api.read_events([log])), {}
    for ev in every:                    # each transaction's first position and its tables
        if ev.type == "GTID_EVENT":
            tx = starts.setdefault(ev.pos, set())
        elif ev.type == "TABLE_MAP_EVENT":
            tx.add(ev.fields["table"])
    b_alone = {pos for pos, tables in starts.items() if tables == {"b"}}
    assert len(b_alone) >= 10
    filters = FilterOptions(tables=("d.a",))
    gate, selection = api.skip_gate(filters), api.Selection()
    sink = api.skipping_sink(gate, filters, selection)
    read = []

    def recorded(events):
        for ev in events:
            read.append(ev)
            yield ev
    events = api.read_events([log], api.ReadOptions(parse_bodies=api.ROWS_BODIES), sink=sink)
    list(api.select_events(recorded(events), filters, [log], SchemaTracker(), gate=gate, selection=selection))
    assert not b_alone & {ev.pos for ev in read} and {ev.pos for ev in read if ev.type == "GTID_EVENT"}


# -- the base64 script's lane under the filters (output/base64/_ctext_filter.pxi) -------------------------------

def _base64_with_lane(monkeypatch, args: list[str]) -> tuple[tuple[str, str, int], int]:
    """`sql` (base64) in process, and the bytes its compiled lane took (skipped or written) from the reader."""
    from binlog_spec.cli import main
    from binlog_spec.output.base64 import lane as base64_lane
    made = base64_lane.sink
    counted = []

    class Counting:
        def __init__(self, inner):
            self.inner, self.bytes = inner, 0
            self.hold, self.taken, self.remember = inner.hold, inner.taken, inner.remember

        @property
        def replay(self):
            return self.inner.replay

        @replay.setter
        def replay(self, value):
            self.inner.replay = value

        def __call__(self, *a):
            n = self.inner(*a)
            self.bytes += max(n, 0)
            return n

    def counting(*a, **k):
        inner = made(*a, **k)
        counted.append(Counting(inner) if inner is not None else None)
        return counted[-1]
    monkeypatch.setattr(base64_lane, "sink", counting)
    out, err = io.StringIO(), io.StringIO()
    code = main(args, out, err)
    return (out.getvalue(), err.getvalue(), code), sum(c.bytes for c in counted if c is not None)


@pytest.mark.parametrize("filters, share", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_the_filtered_base64_lane_gives_what_the_pure_core_gives(monkeypatch, log, filters, share):
    args = ["sql", "--timezone", "UTC", *filters, log]
    got, taken = _base64_with_lane(monkeypatch, args)
    assert got == _pure(args)
    if share:
        assert taken >= 0.5 * os.path.getsize(log), "the lane skips or writes most of the file"


def _base64_pipeline(log: str, filters, lane: bool, read: list | None = None) -> tuple:
    """The base64 script (api.Base64Writer), and the filters' state and tally at the end, with the lane or
    with every event read by the filters (the reference); `read`: the events the ordinary path reads."""
    from binlog_spec import api
    gate, selection = api.skip_gate(filters), api.Selection()
    sink = api.skipping_sink(gate, filters, selection) if lane else None
    with api.Base64Writer(api.Base64Options(tz=timezone.utc)) as writer:
        taker = writer.sink(filters, (gate, selection, sink)) if lane else None
        assert (taker is not None) == lane
        events = api.read_events([log], sink=taker or sink)
        if read is not None:
            events = _recorded(events, read)
        kept = api.select_events(events, filters, [log], gate=gate, selection=selection)
        text = "\n".join(writer.lines(kept, taker))
    return text, set(gate.excluded_tables), (selection.kept, selection.rows, selection.tables, selection.schemas)


@pytest.mark.parametrize("filters", [
    dict(tables=("d.a",)), dict(exclude_tables=("d.b",), stop_datetime=T0 + 300), dict(exclude_tables=("d.c",)),
    dict(exclude_tables=("d.b",), start_datetime=T0 + 323),
    dict(databases=("d",), server_ids=frozenset({1}), start_datetime=T0 + 105), dict(tables=("d.nosuch",)),
    dict(start_datetime=T0 + 100, stop_datetime=T0 + 400)],
    ids=["table", "exclude-window", "exclude-c", "exclude-window-handed-on", "database-server-window", "nothing",
         "window"])
def test_the_filters_state_and_tally_after_the_base64_lane_are_those_of_every_event_read(log, filters):
    from binlog_spec.stream.filters import FilterOptions
    filters = FilterOptions(**{k: datetime.fromtimestamp(v, tz=timezone.utc) if k.endswith("datetime") else v
                               for k, v in filters.items()})
    fast, reference = _base64_pipeline(log, filters, lane=True), _base64_pipeline(log, filters, lane=False)
    assert fast == reference
    assert fast[2][0] > 0 or filters.tables == ("d.nosuch",)


@pytest.mark.parametrize("lane_kind, buffer_size", [("rows", 4096), ("base64", 256)])
def test_a_transaction_past_the_window_is_asked_for_in_doubling_reads_not_one_event_at_a_time(log, lane_kind,
                                                                                              buffer_size):
    """A transaction that runs past the window (the rows lane: the 3000-row INSERT … SELECT past 4 KiB; the base64
    lane, which leaves a TABLE_MAP it has not seen to the ordinary path: the small ones past 256 bytes) is asked for
    in reads of at least twice the window (a transaction read again from its start costs twice its size at most),
    not one event more per call, which wrote a large transaction again once per rows event (3.7x the unfiltered
    run on a 1.6 MB UPDATE); and the output is the reference's."""
    from binlog_spec import api
    from binlog_spec.rows.ddl.schema import SchemaTracker
    from binlog_spec.stream.filters import FilterOptions
    filters = FilterOptions(exclude_tables=("d.c",))

    def run(lane: bool):
        gate, selection, schema = api.skip_gate(filters), api.Selection(), SchemaTracker()
        skipper = api.skipping_sink(gate, filters, selection) if lane else None
        wants = {}
        with api.Base64Writer(api.Base64Options(tz=timezone.utc)) as writer:
            taker = None
            if lane:
                taker = writer.sink(filters, (gate, selection, skipper)) if lane_kind == "base64" else \
                    api.row_lane("jsonl", schema, filters, (gate, selection, skipper))
            sink = taker

            if taker is not None:
                def sink(buf, off, pos, *args):
                    n = taker(buf, off, pos, *args)
                    if n < 0:
                        wants.setdefault(pos, []).append(-n)
                    return n
            options = api.ReadOptions(buffer_size=buffer_size, parse_bodies=api.ROWS_BODIES)
            kept = api.select_events(api.read_events([log], options, sink=sink), filters, [log],
                                     schema if lane_kind == "rows" else None, gate=gate, selection=selection)
            if lane_kind == "base64":
                text = "\n".join(writer.lines(kept, taker))
            else:
                text = "\n".join(x.decode() if type(x) is bytes else x
                                 for x in api.lines_with_lane(taker, api.row_lines(api.read_rows(kept), "jsonl")))
        return text, wants
    text, wants = run(True)
    assert text == run(False)[0]
    assert wants, "transactions run past the window"
    for pos, asked in wants.items():
        assert all(b >= min(2 * a, 16 << 20) - buffer_size for a, b in zip(asked, asked[1:])), (pos, asked)
        assert len(asked) <= 4 + max(0, max(asked).bit_length() - buffer_size.bit_length()), (pos, asked)
    if lane_kind == "rows":     # (a transaction the filters keep is written as the window moves on)
        assert max(max(a) for a in wants.values()) < 64 * 1024, "the INSERT … SELECT is not asked for whole"


def _recorded(events, read: list):
    for ev in events:
        read.append(ev)
        yield ev


@pytest.fixture(scope="module")
def large_log(tmp_path_factory):
    """A transaction of 90,000 rows of d.a between two of d.b, then 1,500 transactions of one row of d.a."""
    sql = ["CREATE DATABASE d", "CREATE TABLE d.a (id INT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2))",
           "CREATE TABLE d.b (id INT PRIMARY KEY)", "BEGIN", "INSERT INTO d.b VALUES (1)",
           "INSERT INTO d.a SELECT seq, REPEAT('n', 30), seq / 100 FROM d.seq_1_to_90000", "INSERT INTO d.b VALUES (2)",
           "COMMIT"] + [f"INSERT INTO d.a VALUES (-{k}, 'ü{k}', {k}.5)" for k in range(1, 1501)]
    with mariadb_server.MariaDBServer() as srv:
        srv.sql(";\n".join(sql) + ";\n")
        path = tmp_path_factory.mktemp("large") / "mariadb-bin.000001"
        path.write_bytes(srv.binlogs()[-1].read_bytes())
    return path


def test_a_large_transaction_the_filters_keep_is_written_by_the_lane_its_text_taken_as_it_goes(monkeypatch,
                                                                                              large_log):
    """A transaction of 90,000 rows (18 MB of lines) whose other table's rows are dropped: the lane writes its lines
    as the window moves (once it kept a rows event the filters keep all of it), and while its text waits past 8 MB
    for the consumer, the ordinary path reads one rows event and the lane goes on after it: the output is the pure
    core's, the lane writes nearly all of it, and the text it holds stays bounded. (It was left whole to the
    ordinary path past 16 MB of text: 1.64x the unfiltered run.)"""
    path = large_log
    held = [0]
    lines_of = lane_text.with_lane

    def watched(lane, lines):
        def measured():
            for line in lines:
                held[0] = max(held[0], sum(len(x) for x in lane.taken))
                yield line
        return lines_of(lane, measured())
    monkeypatch.setattr(lane_text, "with_lane", watched)
    for command in (["rows", "--format", "jsonl"], ["sql", "--sql2"]):
        args = [*command, "--exclude-table", "d.b", str(path)]
        got, by_lane = _with_lane(monkeypatch, args)
        assert got == _pure(args)
        lines = got[0].count("\n")
        assert lines > 90_000 and by_lane >= 0.95 * lines
        assert by_lane < lines, "the ordinary path read some of its rows events"
    assert 0 < held[0] < 12 << 20


def test_the_base64_lane_leaves_a_transactions_xid_not_the_next_transaction_while_its_text_waits(large_log):
    """The base64 lane under the filters (output/base64/_ctext_filter.pxi) stops when its text waits past HELD
    characters for the Python lane: it leaves the XID_EVENT of the transaction it is taking to the ordinary path
    (its GTID_EVENT handed back, for the filters, as a transaction they keep), not the whole next transaction, which
    the ordinary path read once per 256 KB of text. The script, the filters' state and tally are the reference's."""
    from binlog_spec.stream.filters import FilterOptions
    filters = FilterOptions(exclude_tables=("d.b",))
    read: list = []
    assert _base64_pipeline(str(large_log), filters, lane=True, read=read) == \
        _base64_pipeline(str(large_log), filters, lane=False)
    small = [ev for ev in read if ev.type == "GTID_EVENT" and ev.pos > 1_000_000]      # (past the large one)
    assert sum(ev.replayed for ev in small) >= 2, "the lane handed transactions on"
    assert sum(not ev.replayed for ev in small) <= 1, "the ordinary path read no small transaction whole"


@pytest.mark.parametrize("filters, share", [(dict(tables=("d.a",)), 0.8), (dict(exclude_tables=("d.c",)), 0.5),
                                            (dict(server_ids=frozenset({1}), tables=("d.b",)), 0.8),
                                            (dict(exclude_gtids="0-1-10-30,0-2-1-100"), 0.4)],
                         ids=["a", "not-c", "server-b", "gtids"])
def test_analyze_takes_what_table_and_server_filters_keep_whole_and_reports_as_the_reference(log, filters, share):
    """analyze's loop (analysis/_ccollector.pyx) after the skipping loop: the report and the filters' tally are the
    reference's, and rows events are counted or skipped by the loops, not read as Events: most of them where the
    filters keep transactions whole (not-c); fewer where they cut the workload's multi-table transactions, which
    go to the reference path whole."""
    from binlog_spec import api
    from binlog_spec.options import AnalyzeOptions
    from binlog_spec.rows.ddl.schema import SchemaTracker
    from binlog_spec.binlog.gtid import GtidSet
    from binlog_spec.stream.filters import FilterOptions
    filters = FilterOptions(**{k: GtidSet.parse(v) if k.endswith("gtids") else v for k, v in filters.items()})

    def run(loop: bool):
        options = AnalyzeOptions(filters=filters)
        analyzer, schema, selection = api.analyzer(options), SchemaTracker(), api.Selection()
        gate = api.skip_gate(filters) if loop else None
        sink = api.analyzer_sink(analyzer, schema, gate, selection) if loop else None
        assert (sink is not None) == loop
        yielded = []

        def seen(events):
            for ev in events:
                yielded.append(ev)
                yield ev
        read = api.read_events([log], api.ReadOptions(parse_bodies=api.ANALYZE_BODIES), sink=sink)
        report = api.analyze(api.select_events(seen(read), filters, [log], schema, gate=gate, selection=selection),
                             options, analyzer=analyzer)
        rows = [ev for ev in yielded if ev.type_code in (23, 24, 25)]
        return report, (selection.kept, selection.rows, selection.tables, selection.schemas), len(rows)
    fast, reference = run(True), run(False)
    assert fast[:2] == reference[:2]
    assert fast[2] < reference[2] * share, (fast[2], reference[2])


def _base64_counted(monkeypatch, log: str, filters, buffer_size: int) -> tuple[str, list, list]:
    """The base64 script with its lane under `filters` (reading through a window of buffer_size bytes): its text, the
    positions the skipping loop was called at, and the statements of the ANNOTATE_ROWS_EVENTs whose lines the lane
    made (kept or dropped)."""
    from binlog_spec import api
    from binlog_spec.output.base64 import lane as base64_lane
    annotated: list = []
    annotate = base64_lane._annotate

    def counted_annotate(query):
        annotated.append(query)
        return annotate(query)
    monkeypatch.setattr(base64_lane, "_annotate", counted_annotate)
    gate, selection = api.skip_gate(filters), api.Selection()
    skipper, asked = api.skipping_sink(gate, filters, selection), []

    def counted_skipper(buf, off, pos, *a):
        asked.append(pos)
        return skipper(buf, off, pos, *a)
    with api.Base64Writer(api.Base64Options(tz=timezone.utc)) as writer:
        taker = writer.sink(filters, (gate, selection, counted_skipper))
        options = api.ReadOptions(buffer_size=buffer_size)
        kept = api.select_events(api.read_events([log], options, sink=taker), filters, [log], gate=gate,
                                 selection=selection)
        text = "\n".join(writer.lines(kept, taker))
    return text, asked, annotated


def test_the_base64_lane_opens_a_transaction_of_a_kept_table_without_asking_the_skipping_loop(monkeypatch,
                                                                                            large_log):
    """A transaction whose first TABLE_MAP names a table the filters keep is one the skipping loop takes nothing of:
    the lane opens it with no call to the loop (which read its first events' CRC32 again, through a Python call):
    the 1,500 small transactions of d.a after the large one are written with few calls (one or more each before);
    the script is the reference's."""
    from binlog_spec.stream.filters import FilterOptions
    filters = FilterOptions(exclude_tables=("d.b",))
    text, asked, _ = _base64_counted(monkeypatch, str(large_log), filters, 1 << 20)
    assert text == _base64_pipeline(str(large_log), filters, lane=False)[0]
    from binlog_spec import api
    starts = [ev.pos for ev in api.read_events([str(large_log)]) if ev.type == "GTID_EVENT"]
    large = max(range(len(starts) - 1), key=lambda i: starts[i + 1] - starts[i])
    small = set(starts[large + 1:])         # (the transactions after the large one)
    assert len(small) >= 1500 and text.count("\nSTART TRANSACTION\n") > 1500
    assert len([pos for pos in asked if pos in small]) < 100


@pytest.mark.parametrize("buffer_size", [512, 2048])
def test_a_transaction_the_window_cuts_is_not_written_by_the_base64_lane_before_it_is_read_whole(monkeypatch, log,
                                                                                                buffer_size):
    """Through a small window, a transaction the window cuts is asked for whole before the lane writes any of it: each
    ANNOTATE_ROWS_EVENT's lines are made once, not once per read of its transaction (a bulk INSERT's statement
    made again and dropped cost the filtered script 1.2x the unfiltered one); the script is the reference's."""
    from binlog_spec.stream.filters import FilterOptions
    filters = FilterOptions(exclude_tables=("d.c",))
    text, _, annotated = _base64_counted(monkeypatch, log, filters, buffer_size)
    assert text == _base64_pipeline(log, filters, lane=False)[0]
    assert annotated and len(set(annotated)) == len(annotated), "a statement's lines made again"
