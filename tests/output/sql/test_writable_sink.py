"""The SQL script's exact pre-pass with its compiled loop (output/sql/_cwritable.pyx, api.unwritable_sink): the
events it takes straight from the reader's window (the ones no stage of the pass reads, TABLE_MAPs met before,
rows events whose verdict is known, MySQL's BEGIN) never reach the pass as Events, and the problems found, their
first event, file, offset and count, are those the pure-Python pass finds reading every event (the reference).

Binlogs with binlog_row_metadata=MINIMAL: made by the real MariaDB here (a table whose CREATE TABLE is in the
file, one whose CREATE TABLE is not, an ALTER between two shapes, a CREATE TABLE IF NOT EXISTS that names the
columns of a table the server already had), the fixture types-minimal, and the corpus's MySQL 5.7 ones
(MyFlash's haha.*: anonymous and tagged GTIDs, BEGIN queries, v2 rows events). The refusal's first offset and
count are checked against mariadb-binlog's own listing of the file."""
from __future__ import annotations

import io
import re
import subprocess
import sys

import pytest

from binlog_spec import api, compiled
from binlog_spec.cli import EXIT_UNWRITABLE, main
from binlog_spec.errors import BinlogError
from binlog_spec.output.sql.statements import SqlOptions
from binlog_spec.rows.ddl.schema import SchemaTracker

from conftest import CORPUS, FIXTURES, ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402
from test_writable_server import workload_binlogs  # noqa: E402

compiled_only = pytest.mark.skipif(compiled.load("binlog_spec.output.sql._cwritable") is None,
                                   reason="the pure-Python core has no compiled loop: every event is an Event")
needs_server = pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")

MODES = {"forward": SqlOptions(), "rollback": SqlOptions(rollback=True), "replace": SqlOptions(replace=True)}
MYFLASH = sorted(p for p in (CORPUS / "MyFlash").glob("haha.0*") if p.suffix != ".xxd")
TYPES_MINIMAL = FIXTURES / "types-minimal" / "mariadb-bin.000001"


def prepass(files: list, options: SqlOptions, compiled_loop: bool, buffer_size: int = 1 << 20,
            schema=None) -> tuple[list, int]:
    """The exact pass of sql_precheck over unfiltered files (with its loop or without; `schema`: a new
    SchemaTracker's by default): the problems found, (text, count) each, and how many Events reached the pass."""
    schema = api.schema_tracker() if schema is None else schema
    sink = api.unwritable_sink(schema) if compiled_loop else None
    assert (sink is not None) == compiled_loop
    seen = [0]

    def counted(events):
        try:
            for ev in events:
                seen[0] += 1
                yield ev
        except BinlogError:
            return
    read = api.ReadOptions(parse_bodies=api.UNWRITABLE_BODIES, buffer_size=buffer_size)
    events = api.read_events([str(f) for f in files], read, None, None, sink)
    selected = api.select_events(counted(events), api.FilterOptions(), [str(f) for f in files], schema)
    found = api.unwritable(selected, options, True, sink)
    return [(str(p), p.events) for p in found], seen[0]


def run(argv: list) -> tuple[str, str, int]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], out, err)
    return out.getvalue(), err.getvalue(), code


@compiled_only
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", MYFLASH + [TYPES_MINIMAL], ids=lambda p: p.name if p.parent.name == "MyFlash"
                         else p.parent.name)
def test_the_loop_finds_what_the_reference_finds_in_the_minimal_binlogs_of_the_corpus(path, mode):
    got, seen = prepass([path], MODES[mode], True)
    want, every = prepass([path], MODES[mode], False)
    assert got == want
    # (MyFlash's have no CREATE TABLE: refused; types-minimal has its CREATE TABLEs, and MINIMAL row images too)
    assert bool(got) == (path in MYFLASH or mode != "forward")


@compiled_only
def test_mysql_transactions_are_taken_from_the_window():
    """haha.000041: seven MySQL 5.7 transactions (GTID_LOG_EVENT, BEGIN, TABLE_MAP, WRITE_ROWS_EVENT, XID) of one
    table: after the first, only the reader's own events and the refusal's first rows event are Events."""
    path = CORPUS / "MyFlash" / "haha.000041"
    schemas = api.schema_tracker(), api.schema_tracker()
    got, seen = prepass([path], SqlOptions(), True, schema=schemas[0])
    want, every = prepass([path], SqlOptions(), False, schema=schemas[1])
    assert got == want and got[0][1] == 7
    assert every >= 5 * 7 and seen <= every - 4 * 6
    # the first BEGIN after the FORMAT_DESCRIPTION_EVENT is the schema's: it gives the server's collation
    assert schemas[0].server_collation == schemas[1].server_collation is not None


# -- made by the server ------------------------------------------------------------------------------------
START = """
CREATE DATABASE p CHARACTER SET utf8mb4;
USE p;
CREATE TABLE old (id INT PRIMARY KEY, v VARCHAR(20));
INSERT INTO old VALUES (1, 'one');
"""


MARKER = "CREATE TABLE marker (id INT PRIMARY KEY)"


def writable_workload() -> str:
    """Tables created in the file, single-row and bulk statements, an ALTER between two shapes of `t`."""
    sql = ["USE p;", "CREATE TABLE t (id INT PRIMARY KEY, a INT, b VARCHAR(30));",
           "CREATE TABLE u (id BIGINT PRIMARY KEY, d DECIMAL(10,2), s SET('x','y'));"]
    for i in range(1, 121):
        sql.append(f"INSERT INTO t VALUES ({i}, {i * 3}, 'b{i}');")
        sql.append(f"INSERT INTO u VALUES ({i}, {i}.25, 'x,y');")
        if i % 3 == 0:
            sql.append(f"UPDATE t SET a = a + 1 WHERE id = {i - 1};")
    sql.append("UPDATE u SET d = d * 2 WHERE id <= 60;")
    sql.append("ALTER TABLE t ADD COLUMN c DATETIME(3) NULL AFTER a;")
    for i in range(1, 61):
        sql.append(f"UPDATE t SET c = '2026-01-02 03:04:05.{i:03d}' WHERE id = {i};")
        sql.append(f"DELETE FROM u WHERE id = {i};")
    sql.append("DELETE FROM t WHERE id > 100;")
    return "\n".join(sql) + "\n"


def refused_workload() -> str:
    """Rows of `old` (its CREATE TABLE is not in the file: refused) among those of `t`, a DDL statement of
    another table, and more rows of `old`, of the same TABLE_MAP."""
    sql = ["USE p;"]
    for i in range(2, 42):
        sql.append(f"INSERT INTO old VALUES ({i}, 'v{i}');")
        sql.append(f"UPDATE t SET a = {i} WHERE id = {i};")
    sql.append("UPDATE old SET v = CONCAT(v, '!') WHERE id < 20;")
    sql.append(MARKER + ";")
    for i in range(42, 62):
        sql.append(f"INSERT INTO old VALUES ({i}, 'v{i}');")
        sql.append(f"DELETE FROM old WHERE id = {i - 40};")
    return "\n".join(sql) + "\n"


@pytest.fixture(scope="module")
def minimal(tmp_path_factory):
    """MINIMAL metadata: the binlogs of the writable workload, then of the refused one."""
    folder = tmp_path_factory.mktemp("prepass")
    with mariadb_server.MariaDBServer(extra_args=["--binlog-row-metadata=MINIMAL"]) as srv:
        srv.sql(START)
        writable = workload_binlogs(srv, writable_workload(), folder, "writable-")
        refused = workload_binlogs(srv, refused_workload(), folder, "refused-")
    return writable, refused


def rows_events_of(path, table: str, before: str | None) -> list[int]:
    """The offsets of the rows events of `table` (`schema`.`table`) that mariadb-binlog lists, up to the first
    statement that starts with `before`."""
    listing = subprocess.run(["mariadb-binlog", "--no-defaults", str(path)], capture_output=True, text=True,
                             check=True).stdout
    ids, found, at = set(), [], None
    for line in listing.splitlines():
        if line.startswith("# at "):
            at = int(line[5:])
        elif m := re.search(r"Table_map: (`[^`]+`\.`[^`]+`) mapped to number (\d+)", line):
            (ids.add if m.group(1) == table else ids.discard)(m.group(2))
        elif m := re.search(r"(?:Write|Update|Delete)_rows: table id (\d+)", line):
            if m.group(1) in ids:
                found.append(at)
        elif before is not None and line.startswith(before):
            break
    return found


@needs_server
@compiled_only
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("buffer_size", [1 << 20, 4096, 97])
def test_the_loop_finds_what_the_reference_finds_in_server_made_minimal_binlogs(minimal, mode, buffer_size):
    writable, refused = minimal
    for files in (writable, refused, writable + refused):
        got, seen = prepass(files, MODES[mode], True, buffer_size)
        want, every = prepass(files, MODES[mode], False)
        assert got == want, files
        assert seen < every // 2 if buffer_size > 97 else seen <= every


@needs_server
@compiled_only
def test_a_writable_minimal_binlog_is_passed_reading_few_events(minimal):
    """The CREATE TABLEs are in the file: no problem; the Events are the DDL, the first TABLE_MAP of each shape,
    the reader's own, and the few the loop meets the end of its window at."""
    writable, _ = minimal
    got, seen = prepass(writable, SqlOptions(), True)
    assert (got, prepass(writable, SqlOptions(), False)[0]) == ([], [])
    assert seen < 40


@needs_server
@compiled_only
@pytest.mark.parametrize("mode", [["--sql2"], ["--sql2", "--rollback"]], ids=["forward", "rollback"])
def test_the_refusal_names_the_first_rows_event_and_counts_those_mariadb_binlog_lists(minimal, mode, monkeypatch):
    """Both files: `t` is named by its CREATE TABLE in the first, `old` by none."""
    writable, refused = minimal
    [path] = refused
    out, err, code = run(["sql", *mode, *writable, path])
    offsets = rows_events_of(path, "`p`.`old`", None)
    assert (out, code) == ("", EXIT_UNWRITABLE)
    assert err.splitlines()[0].startswith(f"binlog-spec: error: {path}: offset {offsets[0]}: WRITE_ROWS_EVENT_V1: "
                                          f"`p`.`old` (and {len(offsets) - 1} more rows events of it): column names "
                                          "are unknown"), err
    assert len(offsets) == 81 and len(err.splitlines()) == 2
    monkeypatch.setattr(api, "unwritable_sink", lambda schema=None: None)     # the reference
    assert run(["sql", *mode, *writable, path]) == (out, err, code)


@needs_server
@compiled_only
@pytest.mark.parametrize("mode", MODES)
def test_a_rows_event_no_table_map_defines_ends_the_pass_where_the_reference_ends_it(minimal, mode, tmp_path):
    """The refused binlog less the first TABLE_MAP of `old`: the reference stops at the rows event after it
    (the run stops there, a broken binlog), before any problem; the loop hands that rows event back."""
    _, [path] = minimal
    data = path.read_bytes()
    from binlog_spec import read_events
    first = next(ev for ev in read_events([str(path)]) if ev.type == "TABLE_MAP_EVENT" and ev.fields["table"] == "old")
    cut = tmp_path / "cut.000001"
    cut.write_bytes(data[:first.pos] + data[first.pos + len(first.raw):])
    got, seen = prepass([cut], MODES[mode], True)
    assert got == prepass([cut], MODES[mode], False)[0] == []


class Teaching(SchemaTracker):
    """A SchemaTracker that, replaying MARKER, is given the CREATE TABLE of `old` too (as if the statement
    had named its columns): the TABLE_MAPs of `old` after it, the same bytes, are of another table."""

    def observe_query(self, db, query, server_collation=None):
        super().observe_query(db, query, server_collation)
        if query == MARKER:
            super().observe_query("p", "CREATE TABLE old (id INT PRIMARY KEY, v VARCHAR(20))")


@needs_server
@compiled_only
@pytest.mark.parametrize("mode", MODES)
def test_a_table_map_met_before_a_ddl_is_made_again_after_it(minimal, mode):
    """The loop maps a TABLE_MAP's bytes to the table made of them under the schema as it was: a DDL replayed
    between (the schema's generation) makes it hand the next one back, whose table now has its names."""
    writable, [path] = minimal
    got, seen = prepass([*writable, path], MODES[mode], True, schema=Teaching())
    assert got == prepass([*writable, path], MODES[mode], False, schema=Teaching())[0]
    before = rows_events_of(path, "`p`.`old`", MARKER)
    assert len(before) == 41 and len(rows_events_of(path, "`p`.`old`", None)) == 81
    assert got[0][0].startswith(f"{path}: offset {before[0]}: WRITE_ROWS_EVENT_V1: `p`.`old` (and 40 more rows "
                                "events of it): column names are unknown")
    assert got[0][1] == 41 and seen < 100


@needs_server
@compiled_only
def test_the_script_of_a_writable_minimal_binlog_is_the_one_the_reference_lets_through(minimal, monkeypatch):
    """`sql --sql2`'s pre-pass (cli/sql_precheck.py) runs the loop: few Events reach its exact pass."""
    writable, _ = minimal
    seen = []
    exact = api.unwritable

    def counted(events, options, exact_pass=True, sink=None):
        seen.append([0, sink is not None])

        def each():
            for ev in events:
                seen[-1][0] += 1
                yield ev
        return exact(each(), options, exact_pass, sink)
    monkeypatch.setattr(api, "unwritable", counted)
    got = run(["sql", "--sql2", *writable])
    assert got[2] == 0 and "ALTER TABLE t ADD COLUMN c" in got[0]
    monkeypatch.setattr(api, "unwritable_sink", lambda schema=None: None)     # the reference
    assert run(["sql", "--sql2", *writable]) == got
    [[few, loop], [every, reference]] = seen
    assert (loop, reference) == (True, False) and few < 40 < 1000 < every
