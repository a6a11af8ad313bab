"""The library API as a program uses it: binlog_spec.api with the typed options of binlog_spec.options, one
test per output, each checked against what the real tools or server say of the demo binlog
(fixtures/demo: written by MariaDB from workload.sql; mariadb-binlog.txt is `mariadb-binlog -vv` of it):

* events: the events are those `mariadb-binlog` lists (`# at N`);
* rows: the row changes are the ### blocks of mariadb-binlog -vv, table by table and operation by operation;
* base64 (-vv): the ### blocks are those of mariadb-binlog -vv;
* binlog: the installed mariadb-binlog reads the file written and prints the reference's ### blocks;
* analyze: its rows per table and operation are the reference's;
* SQL, base64 and binlog replayed on a real MariaDB give the tables workload.sql gives; the SQL rollback
  replayed after the workload empties them.
"""
from __future__ import annotations

import dataclasses
import io
import json
import re
import subprocess
import sys
from collections import Counter

import pytest

from binlog_spec import api
from binlog_spec.options import AnalyzeOptions, Base64Options, ScriptOptions, SqlOptions, WriteOptions
from binlog_spec.rows.ddl.schema import SchemaTracker
from binlog_spec.stream.filters import FilterOptions
from conftest import FIXTURES, ROOT

sys.path.insert(0, str(ROOT / "tests" / "output"))
from mysqlbinlog_output import parse_verbose  # noqa: E402

DEMO = FIXTURES / "demo"
BINLOG = str(DEMO / "mariadb-bin.000001")
REFERENCE = (DEMO / "mariadb-binlog.txt").read_text(encoding="utf-8")
NO_FILTER = FilterOptions()


def _events():
    return api.read_events([BINLOG])


def _changes(filters: FilterOptions = NO_FILTER):
    return api.read_rows(api.select_events(_events(), filters, [BINLOG], schema=SchemaTracker()))


def _reference_ops() -> Counter:
    """(schema.table, op) -> rows, from the ### blocks of mariadb-binlog -vv."""
    ops = {"INSERT INTO": "insert", "UPDATE": "update", "DELETE FROM": "delete"}
    counts: Counter = Counter()
    for block in parse_verbose(REFERENCE):
        m = re.match(r"### (INSERT INTO|UPDATE|DELETE FROM) `([^`]*)`\.`([^`]*)`", block[0])
        counts[(f"{m.group(2)}.{m.group(3)}", ops[m.group(1)])] += 1
    return counts


def test_events_are_the_events_mariadb_binlog_lists():
    lines = list(api.event_lines(_events(), "jsonl"))
    positions = [json.loads(line)["pos"] for line in lines]
    assert positions == [int(p) for p in re.findall(r"^# at (\d+)$", REFERENCE, re.M)]
    text = list(api.event_lines(_events(), "text"))
    assert len(text) == len(lines) and all(str(p) in t for p, t in zip(positions, text))


def test_rows_are_the_rows_mariadb_binlog_prints():
    changes = list(_changes())
    assert Counter((f"{rc.schema}.{rc.table}", rc.op) for rc in changes) == _reference_ops()
    names = [rc.after["name"] for rc in changes if rc.table == "customers" and rc.op == "insert"]
    assert names == ["Ada", "Björn", "李雷"]          # workload.sql's first INSERT
    lines = [json.loads(line) for line in api.row_lines(_changes(), "jsonl")]
    assert [(d["table"], d["op"]) for d in lines] == [(rc.table, rc.op) for rc in changes]


def _reference_transactions() -> list[tuple[str, int | None, int]]:
    """(GTID, XID or None for a COMMIT, rows) of each transaction with rows, from mariadb-binlog -vv's
    `# at` blocks: a GTID line opens one, an Xid line or a COMMIT statement ends it."""
    out, gtid, rows = [], None, 0
    for block in re.split(r"^# at \d+\n", REFERENCE, flags=re.M)[1:]:
        rows += len(re.findall(r"^### (?:INSERT INTO|UPDATE|DELETE FROM) ", block, re.M))
        if m := re.search(r"\tGTID (\d+-\d+-\d+)", block):
            gtid, rows = m.group(1), 0
        elif (m := re.search(r"\tXid = (\d+)", block)) or (
                "\tQuery\t" in block and re.search(r"^COMMIT\s*/\*!\*/;", block, re.M)):
            if rows:
                out.append((gtid, int(m.group(1)) if m else None, rows))
            rows = 0
    return out


def test_row_changes_by_transaction_are_the_transactions_mariadb_binlog_prints():
    got = list(api.row_changes_by_transaction(api.select_events(_events(), NO_FILTER, [BINLOG],
                                                                schema=SchemaTracker())))
    expected = _reference_transactions()
    assert len(expected) > 1
    assert [(t.transaction.gtid, t.transaction.xid, len(t.changes)) for t in got] == expected
    assert all(t.transaction.complete and t.transaction.commit_time_source == "commit_event" for t in got)
    with pytest.raises(dataclasses.FrozenInstanceError):
        got[0].changes = ()


def test_rows_under_a_typed_filter_keep_the_table_asked_for():
    changes = list(_changes(FilterOptions(tables=("shop.orders",))))
    reference = {k: n for k, n in _reference_ops().items() if k[0] == "shop.orders"}
    assert Counter((f"{rc.schema}.{rc.table}", rc.op) for rc in changes) == reference


def test_base64_script_prints_the_rows_as_mariadb_binlog_does():
    script = "\n".join(api.write_base64(_events(), Base64Options(verbose=2)))
    assert script.count("BINLOG '") >= REFERENCE.count("BINLOG '")
    assert len(parse_verbose(REFERENCE)) == 10
    assert parse_verbose(script) == parse_verbose(REFERENCE)
    plain = "\n".join(api.write_base64(_events(), Base64Options()))
    assert "###" not in plain and plain.count("BINLOG '") == script.count("BINLOG '")


def test_binlog_output_is_read_by_mariadb_binlog(tmp_path):
    out = io.BytesIO()
    with api.write_binlog(_events(), out, WriteOptions()):
        pass
    path = tmp_path / "copy.000001"
    path.write_bytes(out.getvalue())
    run = subprocess.run(["mariadb-binlog", "-vv", str(path)], capture_output=True, check=False)
    assert run.returncode == 0, run.stderr.decode(errors="replace")
    assert parse_verbose(run.stdout.decode("utf-8", "surrogateescape")) == parse_verbose(REFERENCE)


def test_analyze_counts_the_rows_mariadb_binlog_prints():
    result = api.analyze(_events(), AnalyzeOptions(top=5))
    counted = Counter({(t["table"], op): t[f"{op}_rows"] for t in result["tables"]
                       for op in ("insert", "update", "delete") if t[f"{op}_rows"]})
    assert counted == _reference_ops()
    text = list(api.report_lines(result, "text"))
    assert any("shop.customers" in line for line in text)


def test_options_are_frozen():
    with pytest.raises(AttributeError):
        ScriptOptions().commented = True      # type: ignore[misc]
    with pytest.raises(AttributeError):
        Base64Options().verbose = 1           # type: ignore[misc]


# --------------------------------------------------------------------------
# Replayed on a real MariaDB

sys.path.insert(0, str(ROOT / "fixtures"))


@pytest.fixture(scope="module")
def server():
    from mariadb_server import MariaDBServer
    with MariaDBServer() as srv:
        yield srv


def _tables(srv) -> str:
    return srv.sql("SELECT * FROM shop.customers ORDER BY id; SELECT * FROM shop.orders ORDER BY id;")


@pytest.fixture(scope="module")
def workload_tables(server):
    server.sql("DROP DATABASE IF EXISTS shop;")
    server.sql("", input_bytes=(DEMO / "workload.sql").read_bytes())
    tables = _tables(server)
    assert "Ada" in tables
    return tables


def _replay(srv, lines) -> str:
    srv.sql("DROP DATABASE IF EXISTS shop;")
    srv.sql("", input_bytes="\n".join(lines).encode("utf-8", "surrogateescape") + b"\n")
    return _tables(srv)


def test_sql_script_replays_the_workload(server, workload_tables):
    lines = api.write_sql(api.select_events(_events(), NO_FILTER, [BINLOG], schema=SchemaTracker()),
                          ScriptOptions(sql=SqlOptions(complete_insert=True)))
    assert _replay(server, lines) == workload_tables


def test_sql_rollback_undoes_the_workload(server, workload_tables):
    not_undone = api.not_undone()
    lines = list(api.write_sql(api.select_events(_events(), NO_FILTER, [BINLOG], schema=SchemaTracker()),
                               ScriptOptions(), rollback=True, not_undone=not_undone))
    server.sql("DROP DATABASE IF EXISTS shop;")
    server.sql("", input_bytes=(DEMO / "workload.sql").read_bytes())
    assert _tables(server) == workload_tables
    server.sql("", input_bytes="\n".join(lines).encode("utf-8") + b"\n")
    assert _tables(server) == ""
    assert not_undone.count > 0          # the DDL is not undone


def test_base64_script_replays_the_workload(server, workload_tables):
    assert _replay(server, api.write_base64(_events(), Base64Options(skip_gtids=True))) == workload_tables


def test_binlog_output_replays_the_workload(server, workload_tables, tmp_path):
    path = tmp_path / "replay.000001"
    with open(path, "wb") as f, api.write_binlog(_events(), f, WriteOptions(skip_gtids=True)):
        pass
    run = subprocess.run(["mariadb-binlog", str(path)], capture_output=True, check=True)
    assert _replay(server, [run.stdout.decode("utf-8", "surrogateescape")]) == workload_tables
