"""The compiled lane of the `rows` JSON lines (output/_crow_text.pyx) against its reference, `row_json` over
the pure decoder: each column kind's text is the JSON of the pure value (byte literals and seeded random
bytes); what the lane cannot write exactly (an invalid date, text that is not UTF-8, a kind it has no text
for) is left to the reference; and on binlogs written by the real MariaDB (a transaction that mixes tables
the lane writes and one it leaves, a transaction of several MB, a DDL between two shapes of a table), the
output is byte for byte the reference's, most of it written by the lane. On every MySQL binlog of the corpus
too (anonymous, plain and tagged GTIDs, BEGIN with no GTID, ROWS_QUERY_LOG_EVENTs, v2 rows events, MINIMAL
metadata), and on copies of them recomposed where what the lane learns of the ordinary path matters (a file's
first BEGIN, a GTID left open by a COMMIT, v2 extra data)."""
from __future__ import annotations

import io
import json
import random
import struct
import sys
from types import SimpleNamespace

import pytest

from binlog_spec.output import jsonenc, lane_text, row_text
from binlog_spec.rows.column_types import (BIT, DATE, DATETIME2, DOUBLE, ENUM, FLOAT, GEOMETRY, INT24, LONG, LONGLONG,
                                           NEWDECIMAL, SET, SHORT, STRING, TIME2, TIMESTAMP2, TINY, VARCHAR, YEAR)
from binlog_spec.rows.decoder import decode_image

from conftest import CORPUS, ROOT, manifest_rows
from test_compiled_rows import NATIVE, UTF8, LATIN1, BINARY, col  # noqa: F401

sys.path.insert(0, str(ROOT / "fixtures"))
import mariadb_server  # noqa: E402

ctext = row_text._crow_text
pytestmark = pytest.mark.skipif(ctext is None, reason="the compiled core is not built (make build)")


def lane_json(cols, buf):
    """The lane's (JSON text, end) of the image buf (null bitmap first), None where it leaves it; or
    "no plan" where it leaves these columns altogether."""
    names = [f"c{k}" for k in range(len(cols))]
    plan = row_text._plan(SimpleNamespace(columns=cols, names=names), list(range(len(cols))))
    if plan is None:
        return "no plan"
    return ctext.TextImage(plan).encode(buf, 0)


def reference_text(cols, buf):
    """row_json's text of the same image (jsonenc over the pure decoder), and its end; None on its error."""
    names = [f"c{k}" for k in range(len(cols))]
    try:
        row, end = decode_image(buf, 0, SimpleNamespace(columns=cols), list(range(len(cols))), names)
    except Exception:  # noqa: BLE001 - the lane must leave such an image
        return None
    return jsonenc.dumps(row, decoded=True), end


#: The kinds the lane writes itself (the NATIVE cases of rows/test_compiled_rows.py of these types).
WRITTEN = {TINY, SHORT, INT24, LONG, LONGLONG, YEAR, FLOAT, DOUBLE, DATE, DATETIME2, TIMESTAMP2, NEWDECIMAL, TIME2,
           VARCHAR, STRING}


@pytest.mark.parametrize("column, data, value", NATIVE, ids=[f"{i}-{c.type_code}" for i, (c, _, _) in enumerate(NATIVE)])
def test_each_kind_is_the_json_of_the_pure_value_or_left(column, data, value):
    buf = b"\x00" + data
    got = lane_json([column], buf)
    if got not in ("no plan", None):      # (what the lane writes: the next test)
        assert got == reference_text([column], buf)


def test_the_common_kinds_are_written_by_the_lane_not_left():
    written = [c.type_code for c, data, _ in NATIVE if lane_json([c], b"\x00" + data) not in ("no plan", None)]
    assert WRITTEN - {STRING} <= set(written)


def test_json_strings_escape_as_the_reference_and_invalid_utf8_is_left():
    column = col(VARCHAR, {"max_length": 400}, charset=UTF8)
    texts = [bytes([c]) for c in range(128)] + ["é€😀\u2028\x7f".encode(), b'"\\/', b"a" * 300]
    for text in texts:
        buf = b"\x00" + struct.pack("<H", len(text)) + text
        assert lane_json([column], buf) == reference_text([column], buf), text
    for bad in (b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"a\x80"):
        assert lane_json([column], b"\x00" + bytes([len(bad), 0]) + bad) is None, bad


def test_latin1_text_is_each_byte_as_mysql_reads_it_and_ascii_text_past_0x7f_is_left():
    # (MySQL's latin1 is cp1252 with its five undefined bytes as C1 controls: each of the 256 bytes, alone and
    # in a run, against the pure decoder's text)
    latin1 = col(VARCHAR, {"max_length": 400}, charset=LATIN1)
    for text in [bytes([c]) for c in range(256)] + [bytes(range(256)), "Björn €".encode("cp1252")]:
        buf = b"\x00" + struct.pack("<H", len(text)) + text
        got = lane_json([latin1], buf)
        assert got is not None and got == reference_text([latin1], buf), text
    ascii_ = col(VARCHAR, {"max_length": 40}, charset=11)
    assert lane_json([ascii_], b"\x00\x02\x00ok") == reference_text([ascii_], b"\x00\x02\x00ok")
    assert lane_json([ascii_], b"\x00\x02\x00\xe9!") is None


def test_a_geometry_is_its_srid_and_wkb_bytes():
    column = col(GEOMETRY, {"pack_length": 4})
    buf = b"\x00" + struct.pack("<I", 9) + struct.pack("<I", 4326) + b"\x01\x02\xff\x00\x10"
    assert lane_json([column], buf) == reference_text([column], buf) == \
        ('{"c0":{"srid":4326,"wkb":{"hex":"0102ff0010"}}}', len(buf))
    assert lane_json([column], b"\x00" + struct.pack("<I", 3) + b"abc") is None     # no SRID: the reference's error


def test_random_bytes_of_every_kind_are_written_as_the_reference_writes_them_or_left():
    rng = random.Random(29)
    columns = [
        (col(NEWDECIMAL, {"precision": 30, "scale": 10}), 14), (col(NEWDECIMAL, {"precision": 65, "scale": 30}), 30),
        (col(NEWDECIMAL, {"precision": 5, "scale": 0}), 3),
        *[(col(TIME2, {"fsp": f}), 3 + (f + 1) // 2) for f in range(7)],
        *[(col(DATETIME2, {"fsp": f}), 5 + (f + 1) // 2) for f in range(7)],
        *[(col(TIMESTAMP2, {"fsp": f}), 4 + (f + 1) // 2) for f in range(7)],
        (col(DATE), 3), (col(YEAR), 1), (col(FLOAT), 4), (col(DOUBLE), 8), (col(BIT, {"bits": 3, "bytes": 2}), 3),
        (col(LONGLONG, unsigned=True), 8), (col(INT24), 3), (col(GEOMETRY, {"pack_length": 1}), 6),
        (col(STRING, {"max_length": 1, "real_type": ENUM}, charset=UTF8, enum_values=(b"x", b"y\"z")), 1),
        (col(STRING, {"max_length": 1, "real_type": SET}, charset=UTF8, set_values=(b"b", b"a", b"\xc3\xa9")), 1),
    ]
    written = 0
    for column, size in columns:
        for _ in range(300):
            data = bytes(rng.getrandbits(8) for _ in range(size))
            if rng.random() < 0.3:      # near the valid values: the high bits of a packed value set as the server sets them
                data = bytes([0x80 | data[0] & 0x0F]) + data[1:]
            buf = b"\x00" + data
            got = lane_json([column], buf)
            assert got != "no plan", column
            if got is not None:
                assert got == reference_text([column], buf), (column, data.hex())
                written += 1
            for cut in (0, size - 1):   # an image cut short: left (the reference says why)
                assert lane_json([column], buf[:1 + cut]) is None
    assert written > 3000


def _rows_output(log: str, lane: bool, *options: str) -> tuple[str, str, int]:
    from binlog_spec.cli import main
    saved = row_text._crow_text
    if not lane:
        row_text._crow_text = None
    try:
        out, err = io.StringIO(), io.StringIO()
        code = main(["rows", "--format", "jsonl", *options, log], out, err)
    finally:
        row_text._crow_text = saved
    return out.getvalue(), err.getvalue(), code


@pytest.mark.skipif(not mariadb_server.available(), reason="needs Debian's mariadb-server")
def test_server_binlog_lines_are_the_reference_lines_most_written_by_the_lane(monkeypatch):
    with mariadb_server.MariaDBServer() as srv:
        srv.sql("CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, name VARCHAR(40) CHARSET utf8mb4, "
                "price DECIMAL(10,2), at DATETIME(3), day DATE, kind ENUM('a','b'), tags SET('x','y','z')); "
                "CREATE TABLE d.g (id INT PRIMARY KEY, spot POINT)")
        srv.sql("INSERT INTO d.t VALUES (1, 'tab\\there \"q\"', -1.05, '2024-01-02 03:04:05.678', '2024-02-29', "
                "'b', 'x,z'), (2, NULL, 0, NULL, '0000-00-00', 'a', ''); "
                "BEGIN; INSERT INTO d.t VALUES (3, 'ä', 3, NULL, NULL, NULL, NULL); "
                "INSERT INTO d.g VALUES (1, POINT(1, 2)); UPDATE d.t SET price = price + 1; COMMIT")
        srv.sql("INSERT INTO d.t SELECT seq + 10, REPEAT('n', 30), seq / 100, NOW(3), CURDATE(), 'a', 'y' "
                "FROM d.seq_1_to_40000")
        srv.sql("ALTER TABLE d.t ADD COLUMN extra INT FIRST; UPDATE d.t SET extra = id WHERE id < 20; "
                "DELETE FROM d.t WHERE id > 30000")
        log = str(srv.binlogs()[-1])
        by_lane = []
        lines_of = lane_text.with_lane

        def counted(lane, lines):       # the lane's text: blocks of UTF-8 lines (bytes)
            for line in lines_of(lane, lines):
                by_lane.append(line.count(b"\n") + 1 if type(line) is bytes else 0)
                yield line
        monkeypatch.setattr(lane_text, "with_lane", counted)
        reference = _rows_output(log, lane=False)
        out, err, code = _rows_output(log, lane=True)
    assert (out, err, code) == reference
    assert out.count("\n") > 50000 and code == 0
    assert sum(by_lane) > 0.9 * out.count("\n")
    assert '"spot":{"srid":0' in out and '"day":"0000-00-00"' in out and '"extra":11' in out


#: The MySQL binlogs of the corpus (every server but MariaDB).
MYSQL = [row["file"] for row in manifest_rows() if "MariaDB" not in row["server_version"]]


def _lane_share(monkeypatch, log: str, *options: str) -> tuple[tuple[str, str, int], int]:
    """The rows output with the lane (stdout, stderr, exit), and how many of its lines the lane wrote (those
    the ordinary path did not)."""
    ordinary = [0]
    lines_of = lane_text.with_lane

    def counted(lane, lines):
        def of_the_ordinary_path():
            for line in lines:
                ordinary[0] += 1
                yield line
        return lines_of(lane, of_the_ordinary_path())
    monkeypatch.setattr(lane_text, "with_lane", counted)
    got = _rows_output(log, True, *options)
    return got, got[0].count("\n") - ordinary[0]


@pytest.mark.parametrize("name", MYSQL)
def test_mysql_binlog_lines_are_the_reference_lines(name):
    log = str(CORPUS / name)
    assert _rows_output(log, lane=True) == _rows_output(log, lane=False)


#: MySQL binlogs whose columns the lane writes, and the share of their lines it writes: ANONYMOUS_GTID_LOG_EVENTs
#: and MINIMAL metadata, its names from the DDL of the file (8.0.31, 5.7.20 with no checksum), GTID_LOG_EVENTs
#: (5.7.32, 8.0.28), v2 rows events of each kind (8.2.0), BEGIN with no GTID (5.1; its old TIMESTAMPs are left).
#: What is left: each file's transactions until its first QUERY_EVENT was read by the ordinary path.
WRITTEN_BY_LANE = {"mysql-cdc-rs/binlog.000693": 0.95, "mysql-cdc-rs/binlog.000694": 0.95,
                   "mbcj_osheroff/mysql-bin.checksum-none": 0.95,
                   "zalora_binlog-parser/data__gtid-fixtures__mysql-bin.01": 0.9,
                   "rust_mysql_common/mysql-enum-string-set.000001": 1.0,
                   "mysql-cdc-rs/tests__events__8.0__32_delete_rows_v2__binlog.000001": 1.0,
                   "canal/dbsync__src__test__resources__binlog__mysql-bin.000001": 0.3}


@pytest.mark.parametrize("name", sorted(WRITTEN_BY_LANE))
def test_mysql_transactions_are_written_by_the_lane(monkeypatch, name):
    got, by_lane = _lane_share(monkeypatch, str(CORPUS / name))
    assert got == _rows_output(str(CORPUS / name), lane=False)
    assert by_lane >= WRITTEN_BY_LANE[name] * got[0].count("\n") > 0


def _repeated(tmp_path, name: str, start: int, end: int) -> str:
    """A copy of a corpus binlog with its transaction at [start, end) twice (the lane leaves a transaction
    whose BEGIN is the file's first QUERY_EVENT to the ordinary path)."""
    raw = (CORPUS / name).read_bytes()
    out = tmp_path / (name.replace("/", "_") + ".twice")
    out.write_bytes(raw[:end] + raw[start:end] + raw[end:])
    return str(out)


def test_a_tagged_gtid_is_the_gtid_the_ordinary_path_writes(monkeypatch, tmp_path):
    """MySQL 9.6: GTID_TAGGED_LOG_EVENT (sid:tag:gno), BEGIN, TABLE_MAP, WRITE_ROWS_EVENT, XID; the names from a
    schema file (the binlog has MINIMAL metadata)."""
    log = _repeated(tmp_path, "rust_mysql_common/binlog_transaction_with_GTID_TAG.000001", 245, 541)
    schema = tmp_path / "schema.sql"
    schema.write_text("CREATE TABLE test.orders (id INT, qty INT, price DECIMAL(10,2));\n")
    got, by_lane = _lane_share(monkeypatch, log, "--schema", str(schema))
    assert got == _rows_output(log, False, "--schema", str(schema))
    assert by_lane == 1 and got[0].count('"gtid":"55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:3"') == 2


def test_rows_query_events_are_taken_in_a_mysql_transaction(monkeypatch, tmp_path):
    """MySQL 5.7.30 with binlog_rows_query_log_events: GTID, BEGIN, ROWS_QUERY_LOG_EVENT, TABLE_MAP,
    WRITE_ROWS_EVENT, XID."""
    log = _repeated(tmp_path, "mysql-cdc-rs/tests__events__5.7__29_row_query__log.bin", 662, 1023)
    got, by_lane = _lane_share(monkeypatch, log)
    assert got == _rows_output(log, lane=False)
    assert by_lane == 2 and got[0].count('"gtid":"80549ecc-d2f2-11ea-b790-0242ac130002:3"') == 2


def _with_extra_data(tmp_path, name: str, code: int, extra: bytes, len_extra: int) -> str:
    """A copy of a corpus binlog whose rows events of type `code` carry `extra` as their v2 extra data, its
    len_extra_data set to `len_extra`; every event framed again (binlog.writer.frame) at its new position."""
    from binlog_spec.binlog import spec, writer
    from binlog_spec.binlog.reader import read_events
    out, fde = bytearray(spec.MAGIC), None
    for ev in read_events([str(CORPUS / name)]):
        bare = writer.bare_bytes(ev)
        if ev.type_code == 15:
            fde = spec.parse_fde(bare[spec.LEN_EVENT_HEADER:])
        elif ev.type_code == code:
            at = spec.LEN_EVENT_HEADER + spec.rows_extra_at(code, fde.post_header_len(code))
            bare = bare[:at] + len_extra.to_bytes(2, "little") + extra + bare[at + 2:]
        out += writer.frame(bare, len(out), ev.checksum is not None)
    log = tmp_path / (name.replace("/", "_") + ".extra")
    log.write_bytes(bytes(out))
    return str(log)


@pytest.mark.parametrize("extra, len_extra", [(b"\xfe\x07", 4), (b"", 1)], ids=["an item", "too short to read"])
def test_rows_events_with_extra_data_are_left_to_the_ordinary_path(monkeypatch, tmp_path, extra, len_extra):
    """MySQL 8.0.28, a GTID_LOG_EVENT transaction each of WRITE, UPDATE and DELETE_ROWS_EVENT: the UPDATE's
    extra data, a v2 extra item (read as its raw bytes) or a len_extra_data below its own 2 bytes (the
    reference's warning, and exit code), is left to the ordinary path; the other two are the lane's."""
    log = _with_extra_data(tmp_path, "rust_mysql_common/mysql-enum-string-set.000001", 31, extra, len_extra)
    got, by_lane = _lane_share(monkeypatch, log)
    assert got == _rows_output(log, lane=False)
    assert by_lane == 2 and got[0].count("\n") == (3 if len_extra >= 2 else 2)
    assert ("layout" in got[1]) == (len_extra < 2)


def test_the_mysql_reads_agree_with_the_generated_parser():
    assert ctext.mysql_layouts_agree()


def _recomposed(tmp_path, name: str, order: list) -> str:
    """A binlog of a corpus binlog's events (after its FORMAT_DESCRIPTION_EVENT) in `order`: each an event's
    position, or (position, bytes, replacement) for that event with those bytes of its body replaced; every
    event framed again (binlog.writer.frame) at its new position."""
    from binlog_spec.binlog import spec, writer
    from binlog_spec.binlog.reader import read_events
    events = {ev.pos: ev for ev in read_events([str(CORPUS / name)])}
    out = bytearray(spec.MAGIC)
    for item in [4, *order]:
        at, old, new = item if isinstance(item, tuple) else (item, b"", b"")
        bare = writer.bare_bytes(events[at])
        if old:
            assert bare.endswith(old)
            bare = bare[:-len(old)] + new
        out += writer.frame(bare, len(out), events[at].checksum is not None)
    log = tmp_path / (name.replace("/", "_") + ".recomposed")
    log.write_bytes(bytes(out))
    return str(log)


def test_a_begin_with_no_gtid_after_a_commit_keeps_the_open_gtid(monkeypatch, tmp_path):
    """MySQL 8.0.28: a GTID_LOG_EVENT transaction ended by a COMMIT query (a non-transactional table's), then
    a BEGIN with no GTID event: the RowDecoder's GTID is still the first one (only an XID_EVENT, a new GTID or
    FORMAT_DESCRIPTION_EVENT ends it), so the lane leaves that transaction; the first's row and the next
    transaction's, with its own GTID, are the lane's."""
    name = "rust_mysql_common/mysql-enum-string-set.000001"
    log = _recomposed(tmp_path, name, [126, 157, 236, 493, 572, 791, 870, 946, 1077, (870, b"BEGIN", b"COMMIT"),
                                       1639, 1724, 1855, 2628, 2659, 2738, 2814, 2945, 3300])
    got, by_lane = _lane_share(monkeypatch, log)
    assert got == _rows_output(log, lane=False)
    lines = [json.loads(line) for line in got[0].splitlines()]
    assert [line["op"] for line in lines] == ["insert", "update", "delete"]
    assert lines[0]["gtid"] == lines[1]["gtid"] != lines[2]["gtid"] and by_lane == 2


def test_the_first_begin_of_a_file_gives_the_server_collation_to_the_schema(tmp_path):
    """MySQL 5.7.21, ANONYMOUS_GTID_LOG_EVENTs: the file's first QUERY_EVENT is a BEGIN, and the text columns of
    the table the schema file gives have no charset: rows.observe_schema takes the server's collation
    (Q_CHARSET_CODE) of that BEGIN for them (and says so), so the lane leaves that BEGIN to it."""
    log = str(CORPUS / "mbcj_osheroff/mysql-bin.checksum-crc32")
    schema = tmp_path / "schema.sql"
    schema.write_text("CREATE TABLE simu_file_dev.folder (id INT, name VARCHAR(255), path VARCHAR(255), owner BIGINT, "
                      "created TIMESTAMP, a BIGINT, b BIGINT, c TINYINT, d TINYINT, updated TIMESTAMP, e BIGINT, "
                      "f BIGINT);\n")
    got = _rows_output(log, True, "--schema", str(schema))
    assert got == _rows_output(log, False, "--schema", str(schema))
    assert '"name":"test2","path":"/"' in got[0] and "guessed latin1, the server's (Q_CHARSET_CODE)" in got[1]


def test_a_file_name_of_undecodable_bytes_is_left_to_the_ordinary_path(tmp_path):
    """Its JSON text is no UTF-8 (a surrogate): the lane takes nothing of that file, and the lines are the
    reference's (the sink used to raise on it)."""
    log = tmp_path / "b\udcff.000001"      # (the bytes b"b\xff.000001" as Python names them)
    log.write_bytes((ROOT / "fixtures/demo/mariadb-bin.000001").read_bytes())
    assert _rows_output(str(log), True) == _rows_output(str(log), False)
    assert _rows_output(str(log), True)[0].count("\n") > 0
