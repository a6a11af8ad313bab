"""`rows --format jsonl --table T --key V` in the compiled row lane (output/_crow_key.pxi): a row whose integer key
does not match is stepped over in the compiled loop, its key read straight from the image bytes. On a binlog the
real MariaDB wrote (INT, negative TINYINT, BIGINT UNSIGNED past 2**63 and composite (INT, INT) keys; single- and
multi-row events, UPDATEs that change the key, DELETEs, MINIMAL images whose after image lacks the key), the lines
equal the FULL `rows --format jsonl` output filtered by an independent predicate on the key, and equal, with the
notes and the exit code, what the pure-Python core gives (BINLOG_SPEC_PURE=1); the lane writes them. What the
RowSelector counts (the rows looked at and kept: the note of a run that kept none) is what the reference counts,
a transaction the lane rewinds included; keys the lane does not check (text, --where, a value that does not fit)
go the reference's way with its errors."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from binlog_spec import compiled
from binlog_spec.output import lane_text

from conftest import CORPUS, ROOT

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

pytestmark = [pytest.mark.skipif(compiled.load("binlog_spec.output._crow_text") is None,
                                 reason="the compiled core is not built (make build)"),
              pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")]

WORKLOAD = """
CREATE DATABASE k;
CREATE TABLE k.i (id INT PRIMARY KEY, v VARCHAR(20) CHARSET utf8mb4, d DECIMAL(10,2), t DATETIME(6));
CREATE TABLE k.t (id TINYINT PRIMARY KEY, v INT);
CREATE TABLE k.u (id BIGINT UNSIGNED PRIMARY KEY, v INT);
CREATE TABLE k.c (a INT NOT NULL, b INT NOT NULL, v INT, PRIMARY KEY (a, b));
CREATE TABLE k.s (id VARCHAR(10) PRIMARY KEY, v INT);
INSERT INTO k.i VALUES (1, 'one', 1.5, '2024-01-02 03:04:05.000006');
INSERT INTO k.i SELECT seq, CONCAT('n', seq), seq / 4, '2024-05-06 07:08:09' FROM k.seq_2_to_400;
INSERT INTO k.i VALUES (-7, 'minus', -2.25, NULL), (1000, NULL, NULL, NULL);
BEGIN; INSERT INTO k.t VALUES (-128, 1), (127, 2), (5, 3); INSERT INTO k.i VALUES (5000, 'x', 0, NULL); COMMIT;
INSERT INTO k.u VALUES (18446744073709551615, 1), (9223372036854775808, 2), (42, 3);
INSERT INTO k.c VALUES (1, 2, 0), (2, 1, 0), (1, 3, 0);
INSERT INTO k.s VALUES ('42', 1), ('a', 2);
UPDATE k.i SET v = CONCAT(v, '+') WHERE id BETWEEN 40 AND 60;
UPDATE k.i SET id = 4200 WHERE id = 42;
UPDATE k.i SET id = 42 WHERE id = 43;
UPDATE k.u SET id = 43 WHERE id = 42;
UPDATE k.c SET b = 9 WHERE a = 1 AND b = 2;
UPDATE k.t SET v = v + 1;
DELETE FROM k.i WHERE id BETWEEN 100 AND 120 OR id = 4200;
DELETE FROM k.u WHERE id = 9223372036854775808;
SET SESSION binlog_row_image = MINIMAL;
UPDATE k.i SET v = 'minimal' WHERE id IN (7, 42, 300);
UPDATE k.c SET v = 5 WHERE a = 2;
UPDATE k.i SET id = 7700 WHERE id = 300;
DELETE FROM k.i WHERE id = 7;
SET SESSION binlog_row_image = FULL;
SET SESSION sql_mode = '';
BEGIN; INSERT INTO k.i VALUES (9000, 'z', 0, '2024-01-01'); INSERT INTO k.i VALUES (9001, 'z', 0, '0000-00-00');
UPDATE k.i SET v = 'zz' WHERE id = 42; COMMIT;
"""

#: (table, --key, the independent predicate of an image, how many of the lines the lane leaves to the ordinary path,
#: None: all)
CASES = [
    ("k.i", "1", lambda i: i.get("id") == 1, 0),
    ("k.i", "42", lambda i: i.get("id") == 42, 1),    # (the last: 9001's transaction),
    ("k.i", "4200", lambda i: i.get("id") == 4200, 0),
    ("k.i", "300", lambda i: i.get("id") == 300, 0),
    ("k.i", "7700", lambda i: i.get("id") == 7700, 0),
    ("k.i", "7", lambda i: i.get("id") == 7, 0),
    ("k.i", "-7", lambda i: i.get("id") == -7, 0),
    ("k.i", "+0110", lambda i: i.get("id") == 110, 0),
    ("k.i", "9001", lambda i: i.get("id") == 9001, None),      # (its zero date: the reference's transaction)
    ("k.i", "123456", lambda i: False, None),                  # kept nothing: the note, of every row looked at
    ("k.t", "-128", lambda i: i.get("id") == -128, 0),
    ("k.t", "127", lambda i: i.get("id") == 127, 0),
    ("k.u", "18446744073709551615", lambda i: i.get("id") == 18446744073709551615, 0),
    ("k.u", "9223372036854775808", lambda i: i.get("id") == 9223372036854775808, 0),
    ("k.u", "42", lambda i: i.get("id") == 42, 0),
    ("k.u", "43", lambda i: i.get("id") == 43, 0),
    ("k.c", "1,2", lambda i: (i.get("a"), i.get("b")) == (1, 2), 0),
    ("k.c", "1,9", lambda i: (i.get("a"), i.get("b")) == (1, 9), 0),
    ("k.c", "2,1", lambda i: (i.get("a"), i.get("b")) == (2, 1), 0),
    ("k.s", "42", lambda i: i.get("id") == "42", None),        # (a text key: the reference)
]


@pytest.fixture(scope="module")
def log(tmp_path_factory):
    with mariadb_server.MariaDBServer() as srv:
        srv.sql(WORKLOAD)
        path = tmp_path_factory.mktemp("keys") / "mariadb-bin.000001"
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


@pytest.fixture(scope="module")
def full(log):
    """The full `rows --format jsonl` output of the reference, line by line."""
    out, err, code = _pure(["rows", "--format", "jsonl", log])
    assert code == 0 and not err
    return out.splitlines()


def _filtered(lines: list[str], table: str, matches) -> list[str]:
    """The lines of the table whose before or after image matches (a MINIMAL after image merged over its before
    image, as the server reads it)."""
    schema, name = table.split(".")
    kept = []
    for line in lines:
        d = json.loads(line)
        if (d["schema"], d["table"]) != (schema, name):
            continue
        before, after = d["before"], d["after"]
        if before is not None and after is not None:
            after = {**before, **after}
        if any(image is not None and matches(image) for image in (before, after)):
            kept.append(line)
    return kept


@pytest.mark.parametrize("table, key, matches, ordinary", CASES, ids=[f"{c[0]} {c[1]}" for c in CASES])
def test_key_in_the_lane_equals_filtering_the_full_output_and_the_pure_core(monkeypatch, log, full, table, key,
                                                                            matches, ordinary):
    args = ["rows", "--format", "jsonl", "--table", table, "--key", key, log]
    got, by_lane = _with_lane(monkeypatch, args)
    assert got == _pure(args)
    assert got[0].splitlines() == _filtered(full, table, matches)
    assert got[2] == 0
    if ordinary is None:
        assert by_lane == 0
    else:
        assert got[0] and by_lane == got[0].count("\n") - ordinary


def test_the_updates_that_change_the_key_and_the_minimal_images_are_kept_by_either_image(log, full):
    """(The workload holds what the cases are about.)"""
    rows = [json.loads(line) for line in _filtered(full, "k.i", lambda i: i.get("id") in (42, 300, 7700, 7))]
    ops = [(r["op"], (r["before"] or {}).get("id"), (r["after"] or {}).get("id"), len(r["after"] or {}))
           for r in rows]
    assert ("update", 42, 4200, 4) in ops and ("update", 43, 42, 4) in ops
    assert ("update", 42, None, 1) in ops       # a MINIMAL after image: the key from the before image
    assert ("update", 300, 7700, 1) in ops and ("delete", 7, None, 0) in ops


def _run(log: str, table: str, key: str, lane: bool) -> tuple:
    """The JSON text of `rows --table table --key key` by the api, and what the RowSelector and the event filters'
    Selection counted; with the lane, or every event read by the filters and the selector (the reference)."""
    from binlog_spec import api
    from binlog_spec.rows.ddl.schema import SchemaTracker
    from binlog_spec.stream.filters import FilterOptions
    filters = FilterOptions(tables=(table,))
    rows = api.RowSelector(api.row_filter_options(key=key, tables=(table,)))
    gate, selection, schema = api.skip_gate(filters), api.Selection(), SchemaTracker()
    sink = api.skipping_sink(gate, filters, selection) if lane else None
    taker = api.row_lane("jsonl", schema, filters, (gate, selection, sink), rows) if lane else None
    assert (taker is not None) == lane
    events = api.read_events([log], api.ReadOptions(parse_bodies=api.ROWS_BODIES), sink=taker)
    kept = api.select_events(events, filters, [log], schema, gate=gate, selection=selection)
    changes = filter(rows.keeps, api.read_rows(kept))
    text = "\n".join(x.decode() if type(x) is bytes else x
                     for x in api.lines_with_lane(taker, api.row_lines(changes, "jsonl")))
    return text, (rows.seen, rows.kept), (selection.kept, selection.rows, selection.tables)


@pytest.mark.parametrize("key", ["42", "9000", "9001", "5", "123456"])
def test_the_rows_looked_at_and_kept_are_counted_as_the_reference_counts_them(log, key):
    """9000 and 9001: a transaction the lane begins (9000's row checked) and leaves to the reference at 9001's zero
    date; the rows it checked are counted once."""
    got, want = _run(log, "k.i", key, lane=True), _run(log, "k.i", key, lane=False)
    assert got == want
    assert want[1][0] > 400


def test_a_key_the_lane_cannot_check_goes_the_reference_way_with_its_errors(monkeypatch, log):
    for argv in (["--table", "k.i", "--key", "abc"], ["--table", "k.i", "--key", "1,2"],
                 ["--table", "k.t", "--key", "128"], ["--table", "k.i", "--key", "42", "--where", "v IS NULL"]):
        args = ["rows", "--format", "jsonl", *argv, log]
        got, by_lane = _with_lane(monkeypatch, args)
        assert got == _pure(args) and by_lane == 0
        assert got[2] == (0 if "--where" in argv else 2), argv


def test_key_on_mysql_minimal_images_equals_the_pure_core(monkeypatch):
    """A MySQL 8.0 binlog of MINIMAL images (an INT key, a JSON column: the reference's rows)."""
    path = str(CORPUS / "rust_mysql_common" / "json.binlog.000001")
    if not os.path.exists(path):
        pytest.skip("the shared corpus is not there")
    full_out = _pure(["rows", "--format", "jsonl", path])[0].splitlines()
    for key in ("1", "2", "3"):
        args = ["rows", "--format", "jsonl", "--table", "mysql.t", "--key", key, path]
        got, _ = _with_lane(monkeypatch, args)
        assert got == _pure(args)
        assert got[0].splitlines() == _filtered(full_out, "mysql.t", lambda i, k=int(key): i.get("id") == k)
        assert got[0]


def _damaged(log: str, tmp_path, row_id: int, fraction: bytes) -> str:
    """The binlog with the DATETIME(6) fraction of k.i's row `row_id` (of the multi-row INSERT) replaced, its event's
    checksum made again: a value the pure decoder refuses (a fraction past 999999) in a row --key does not keep."""
    import zlib

    from binlog_spec import api
    data = bytearray(open(log, "rb").read())
    name = f"n{row_id}".encode()
    # (null bitmap), id INT, v VARCHAR (1-byte length), d DECIMAL(10,2) (5 bytes), t DATETIME(6) (5 + 3 bytes)
    at = data.index(row_id.to_bytes(4, "little") + bytes([len(name)]) + name)
    frac = at + 4 + 1 + len(name) + 5 + 5
    data[frac:frac + 3] = fraction
    for ev in api.read_events([log]):
        if ev.pos <= frac < ev.pos + ev.size:
            end = ev.pos + ev.size - 4
            data[end:end + 4] = zlib.crc32(bytes(data[ev.pos:end])).to_bytes(4, "little")
            break
    path = tmp_path / "damaged-bin.000001"
    path.write_bytes(bytes(data))
    return str(path)


def test_a_row_not_kept_whose_value_the_reference_refuses_leaves_the_event_to_it(monkeypatch, log, tmp_path):
    """Its key does not match, but the reference decodes it to drop it, and stops there with its error: so does
    the lane's run, which writes nothing of that event (the lines before it are the lane's)."""
    damaged = _damaged(log, tmp_path, 200, b"\x7f\xff\xff")
    args = ["rows", "--format", "jsonl", "--table", "k.i", "--key", "1", damaged]
    want = _pure(args)
    assert want[2] != 0 and "999999" in want[1]
    got, _ = _with_lane(monkeypatch, args)
    assert got == want
