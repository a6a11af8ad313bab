"""Corrupt input never hangs, never shows a traceback: the minimised reproducers of what fuzzing found
(tests/fuzz/), as byte-literal binlogs (the seed FDE, CRC32 events), each ending in a typed BinlogError
at the right event, and the CLI's one rule for everything else (exit 70, no traceback)."""
from __future__ import annotations

import io
import struct
import subprocess
import sys
import zlib

import pytest

import binlog_spec
from binlog_spec import cli
from binlog_spec import api
from binlog_spec.analysis import collector
from binlog_spec.output import rewriter
from binlog_spec.rows.decoder import RowDecoder, read_rows
from binlog_spec.output.sql.script import ScriptOptions, rollback
from binlog_spec.rows import values
from binlog_spec.errors import MalformedEventError, RowsLayoutError

from conftest import FIXTURES
from test_reader_errors import FDE, MAGIC, event, write

TABLE_ID = b"\x2a\x00\x00\x00\x00\x00"
#: TABLE_MAP of `d`.`t` (id 42): one BIGINT column, no metadata, nullable.
TM = TABLE_ID + b"\x00\x00" + b"\x01d\x00" + b"\x01t\x00" + b"\x01\x08\x00\x01"
TM_AT = 4 + len(FDE)
ROWS_AT = TM_AT + 19 + len(TM) + 4


def rows_body(num_columns: bytes, bitmap: bytes = b"", rows_: bytes = b"\x00" + struct.pack("<q", 7)) -> bytes:
    """WRITE_ROWS_EVENT (v2) body: table id, flags (STMT_END_F), extra-data length 2, the column
    count as given, the columns-present bitmap, the rows."""
    return TABLE_ID + b"\x01\x00" + b"\x02\x00" + num_columns + bitmap + rows_


def binlog(tmp_path, *events: bytes):
    return write(tmp_path, MAGIC + FDE + b"".join(events))


def run_cli(*args: str) -> subprocess.CompletedProcess:
    """The command in a process of its own, so that a hang fails the test instead of blocking it."""
    return subprocess.run([sys.executable, "-m", "binlog_spec", *args], capture_output=True, text=True, timeout=60)


# --------------------------------------------------------------------------
# A rows event of no columns: every image 0 bytes, so a loop over the rows never advanced


@pytest.mark.parametrize("count", [b"\x00", b"\xfb", b"\xff"], ids=["0x00", "0xFB", "0xFF"])
def test_a_rows_event_of_no_columns_stops_every_command_with_its_offset(tmp_path, count):
    """Every command that walks the rows; `sql -v` notes the rows it cannot decode under the event's
    BINLOG block, as it does any (and `sql` without -v copies the event's bytes as they are)."""
    p = binlog(tmp_path, event(19, TM), event(30, rows_body(count)))
    for command in (["rows"], ["sql", "--sql2"], ["sql", "--rollback"], ["sql", "--sql2", "--rollback"],
                    ["sql", "--rollback", "--output-format", "binlog", "-o", str(tmp_path / "o.bin")]):
        r = run_cli(*command, str(p))
        assert r.returncode == 3, (command, r.stderr)
        assert f"{p}: offset {ROWS_AT}: WRITE_ROWS_EVENT" in r.stderr, (command, r.stderr)
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    r = run_cli("analyze", "--format", "json", str(p))
    assert r.returncode == 1 and f"offset {ROWS_AT}" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("sql", "-v", str(p))
    # a count the writer cannot read (0xFB, 0xFF) stops it (exit 3, the offset named); a count of 0:
    # the BINLOG block is written, its rows are a comment, a warning and exit 1 (as analyze)
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr
    if count != b"\x00" and r.returncode == 3:
        assert f"{p}: offset {ROWS_AT}: WRITE_ROWS_EVENT" in r.stderr
        return
    assert r.returncode == 1, r.stderr
    assert f"# rows not decoded: {p}: offset {ROWS_AT}: WRITE_ROWS_EVENT" in r.stdout
    assert f"binlog-spec: warning: {p}: offset {ROWS_AT}: WRITE_ROWS_EVENT" in r.stderr
    assert "Traceback" not in r.stderr and "internal error" not in r.stderr


def test_sql_verbose_names_rows_it_cannot_decode_on_stderr_and_exits_1(tmp_path):
    """The reviewer's case: sakila with the WRITE_ROWS column count set to 0. The script keeps the
    event's BINLOG block (its bytes are the event's) and a comment under it; stderr names the event."""
    p = binlog(tmp_path, event(19, TM), event(30, rows_body(b"\x00")))
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(["sql", "-vv", str(p)], out, err)
    assert code == cli.EXIT_WARNINGS
    script = out.getvalue()
    assert "BINLOG '" in script and f"# at {ROWS_AT}" in script
    assert f"# rows not decoded: {p}: offset {ROWS_AT}: WRITE_ROWS_EVENT" in script
    assert f"binlog-spec: warning: {p}: offset {ROWS_AT}: WRITE_ROWS_EVENT" in err.getvalue()


def test_sql_verbose_lets_an_unexpected_exception_reach_the_internal_error_rule(tmp_path, monkeypatch):
    """Only typed decode errors (BinlogError) become a `# rows not decoded` comment: a bare
    ValueError/TypeError/KeyError in the decoder is a bug, exit 70."""
    p = binlog(tmp_path, event(19, TM), event(30, rows_body(b"\x01", b"\x01")))

    def broken(self, ev):
        raise KeyError("bug")
        yield  # pragma: no cover
    monkeypatch.setattr(RowDecoder, "feed", broken)
    out, err = io.StringIO(), io.StringIO()
    assert cli.main(["sql", "-v", str(p)], out, err) == cli.EXIT_INTERNAL
    assert "internal error" in err.getvalue() and "rows not decoded" not in out.getvalue()


def test_a_rows_event_of_no_columns_is_a_rows_layout_error_in_the_library(tmp_path):
    p = binlog(tmp_path, event(19, TM), event(30, rows_body(b"\x00")))
    with pytest.raises(RowsLayoutError) as exc:
        list(read_rows(binlog_spec.open(p)))
    assert (exc.value.file, exc.value.offset, exc.value.event_type) == (str(p), ROWS_AT, "WRITE_ROWS_EVENT")
    assert "no column present" in str(exc.value)
    result = collector.analyze(binlog_spec.open(p))
    assert result["summary"]["row_errors"] == 1 and result["row_errors"][0]["offset"] == ROWS_AT


def test_a_columns_present_bitmap_with_no_column_set_is_refused_like_no_columns(tmp_path):
    p = binlog(tmp_path, event(19, TM), event(30, rows_body(b"\x01", b"\x00")))
    with pytest.raises(RowsLayoutError):
        list(read_rows(binlog_spec.open(p)))
    with pytest.raises(RowsLayoutError):
        list(rollback(binlog_spec.open(p), ScriptOptions()))


def test_a_column_count_above_the_table_maps_is_a_rows_layout_error(tmp_path):
    p = binlog(tmp_path, event(19, TM), event(30, rows_body(b"\x09", b"\x01\x00")))
    with pytest.raises(RowsLayoutError, match="9 columns, its TABLE_MAP 1"):
        list(read_rows(binlog_spec.open(p)))
    with pytest.raises(RowsLayoutError):
        rewriter.write_binlog(binlog_spec.open(p), io.BytesIO(), rewriter.WriteOptions(rollback=True))


def test_an_unreadable_column_count_is_a_malformed_event_for_the_binlog_writer(tmp_path):
    """values.packed_int's ValueDecodeError escaped binwriter.has_stmt_end as a traceback."""
    p = binlog(tmp_path, event(19, TM), event(30, rows_body(b"\xff")))
    with pytest.raises(MalformedEventError) as exc:
        rewriter.write_binlog(binlog_spec.open(p), io.BytesIO())
    assert (exc.value.offset, exc.value.event_type) == (ROWS_AT, "WRITE_ROWS_EVENT")
    assert "packed integer" in str(exc.value)


# --------------------------------------------------------------------------
# Values and TABLE_MAPs that point back into themselves or past their table


def test_a_json_container_that_contains_itself_is_a_value_error_not_a_recursion():
    array_of_itself = b"\x02" + struct.pack("<HH", 1, 7) + b"\x02" + struct.pack("<H", 0)
    with pytest.raises(values.ValueDecodeError, match="nested deeper|more values than"):
        values.decode_json(array_of_itself)


def test_a_json_document_sharing_one_value_from_many_places_is_refused_quickly():
    inner = struct.pack("<HH", 0, 4)
    for _ in range(60):      # each level: two entries pointing to the same next level: 2**60 visits
        inner = struct.pack("<HH", 2, 10 + len(inner)) + (b"\x02" + struct.pack("<H", 10)) * 2 + inner
    with pytest.raises(values.ValueDecodeError, match="more values than"):
        values.decode_json(b"\x02" + inner)


def test_a_table_map_whose_primary_key_is_not_one_of_its_columns_is_malformed(tmp_path):
    """SIMPLE_PRIMARY_KEY naming column 5 of a 1-column table: an IndexError in sqlgen before."""
    tm = TM + b"\x08\x01\x05"
    delete = rows_body(b"\x01", b"\x01")
    p = binlog(tmp_path, event(19, tm), event(32, delete))
    with pytest.raises(MalformedEventError, match="primary key column 5") as exc:
        list(rollback(binlog_spec.open(p), ScriptOptions()))
    assert (exc.value.offset, exc.value.event_type) == (TM_AT, "TABLE_MAP_EVENT")
    r = run_cli("sql", "--sql2", "--rollback", str(p))
    assert r.returncode == 3 and f"offset {TM_AT}: TABLE_MAP_EVENT" in r.stderr


# --------------------------------------------------------------------------
# MariaDB GTID sequence numbers are unsigned 64-bit


def test_a_rollback_keeps_mariadb_sequence_numbers_of_64_bits(tmp_path):
    """seq_no >= 2**63 overflowed the rollback spool's array('q')."""
    data = bytearray((FIXTURES / "demo/mariadb-bin.000001").read_bytes())
    gtid = next(ev for ev in binlog_spec.open(FIXTURES / "demo/mariadb-bin.000001") if ev.type == "GTID_EVENT"
                and ev.pos > 1000)
    body = gtid.pos + 19
    data[body:body + 8] = (2**64 - 2).to_bytes(8, "little")
    end = gtid.pos + gtid.size - 4
    data[end:end + 4] = zlib.crc32(data[gtid.pos:end]).to_bytes(4, "little")
    p = write(tmp_path, bytes(data))
    out = io.BytesIO()
    rewriter.write_binlog(binlog_spec.open(p), out, rewriter.WriteOptions(rollback=True))
    back = write(tmp_path, out.getvalue(), "back.000001")
    seqs = [ev.fields["seq_no"] for ev in binlog_spec.open(back) if ev.type == "GTID_EVENT"]
    assert 2**64 - 2 in seqs


# --------------------------------------------------------------------------
# The CLI's one rule: BinlogError exit 3, anything else an internal error, exit 70


def test_an_unexpected_exception_is_an_internal_error_with_the_offset_and_no_traceback(monkeypatch):
    def broken(rc):
        raise RuntimeError("boom")
    monkeypatch.setattr(api, "row_renderer", lambda fmt, tz=None: broken)
    demo = str(FIXTURES / "demo/mariadb-bin.000001")
    err = io.StringIO()
    assert cli.main(["rows", "--format", "text", demo], io.StringIO(), err) == 70     # (no compiled lane for text)
    first = next(ev for ev in read_rows(binlog_spec.open(demo)))
    lines = err.getvalue().splitlines()
    assert lines[0] == f"binlog-spec: internal error at {demo} offset {first.pos}: RuntimeError: boom"
    assert "report" in lines[1] and "Traceback" not in err.getvalue()
    err = io.StringIO()
    assert cli.main(["--debug", "rows", "--format", "text", demo], io.StringIO(), err) == 70
    assert "Traceback" in err.getvalue() and "RuntimeError: boom" in err.getvalue()


def test_a_tagged_gtid_whose_uuid_field_is_not_bytes_is_a_malformed_event(tmp_path):
    """A field id flipped to SID's in a GTID_TAGGED_LOG_EVENT: a ValueError while its fields were built."""
    fde = bytes.fromhex(   # MySQL 9.6, CRC32 (the checksums of the next event are not verified below)
        "fe62696e9bae85690f010000007b0000007f00000000000400392e362e30000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000013000d0008000000000400040000006300041a080000"
        "00000000020000000a0a0a2a2a001234000a28000001c9b005aa")
    gtid = bytes.fromhex(
        "afae85692a0100000053000000480100000000027800000002aaee25020804650222c503c502e1029cc103110b5502dead03"
        "040c060a6d7974616708000a040c7f1cf3b814244a0610a10412430f0b7872ad08")
    p = write(tmp_path, fde + gtid)
    events, fault = [], None
    try:
        for ev in binlog_spec.open(p, binlog_spec.ReadOptions(verify_checksums=False)):
            ev.to_dict()
            events.append(ev)
    except MalformedEventError as exc:
        fault = exc
    assert [e.type for e in events] == ["FORMAT_DESCRIPTION_EVENT"]
    assert (fault.offset, fault.event_type) == (127, "GTID_TAGGED_LOG_EVENT")


def test_a_query_event_with_a_short_post_header_is_read_by_the_base64_script_as_by_the_reader(tmp_path):
    """Found by the atheris fuzzer: binwriter.query_layout's ValueError escaped base64script as a traceback.
    The FDE gives QUERY_EVENT a 0-byte post-header: the spec then reads the 11 fixed bytes and no
    status variables; the writer's offsets come from the spec, so the script prints the statement
    the reader decodes (before, its own layout found no NUL after the database name)."""
    fde = bytes.fromhex(   # MariaDB 10.11, CRC32 (not verified below)
        "fe62696ebf6a026b0f01000000fc000000000100000000040031302e31312e31392d4d6172696144422d302b646562313275"
        "312d6c6f670000000000000000000000000000000000000000bf6a026b13380004000004080d120404120000e400041a0800"
        "0000080808020000000a0a0a0000000000000a0a0a0000000000000000000000000000000000000000000000000000000000"
        "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "00000000000000000000000000000000000000000000000000000000000000000000000000000000041304000d0808080a0a"
        "0a016dc95df6")
    query = bytes.fromhex(
        "00b9556902010000006d000000e1010000080005000000bfb1ac010400001a00000000000101000020540000000006037374"
        "64042d002d00080073686f70004352454154452044415441424153452073686f702043484152414354455220534554207574"
        "66386d6234eae344b8")
    p = write(tmp_path, fde + query)
    r = run_cli("sql", "--no-verify-checksums", str(p))
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    statement = "\0\1\1\0\0 T\0\0\0\0\6\3std\4-\0-\0\10\0shop\0CREATE DATABASE shop CHARACTER SET utf8mb4"
    assert lines[lines.index(statement) + 1] == "/*!*/;"
    assert "db=`\x1a\0\0\0`: " + statement in r.stdout   # the reader's view, in the event's comment line
