"""binwriter: events back to bytes, checked byte by byte and by reading the output back.

Every written file is read back with binlog_spec.open (which verifies each CRC32) and with the
real `mariadb-binlog --verify-binlog-checksum`.
"""
from __future__ import annotations

import io
import subprocess
import zlib

import pytest

import binlog_spec
from binlog_spec import cli
from binlog_spec.binlog import writer
from binlog_spec.rows import decoder
from binlog_spec.binlog import spec
from binlog_spec.errors import MalformedEventError, RollbackError
from binlog_spec.output.rewriter import invert_rows, write_binlog
from binlog_spec.output.rewriter import WriteOptions

from conftest import CORPUS, FIXTURES

ET = spec.EventType
DEMO = FIXTURES / "demo" / "mariadb-bin.000001"
COMPRESSED = FIXTURES / "compressed" / "mariadb-bin.000001"
TYPES_FULL = FIXTURES / "types-full" / "mariadb-bin.000001"
TYPES_MINIMAL = FIXTURES / "types-minimal" / "mariadb-bin.000001"
MYSQL_PAYLOAD = CORPUS / "rust_mysql_common" / "transaction_compression.000001"
MYSQL_GTIDS = CORPUS / "rust_mysql_common" / "binlog_transaction_with_GTID.000001"
#: Fields that change when an event moves or is re-serialised.
PLACE = {"file", "pos", "end_log_pos", "checksum", "size", "payload_pos", "payload_offset", "compressed",
         "type_code", "type", "flags"}


def write(paths, tmp_path, name="out.bin", **options) -> tuple[bytes, str]:
    out = tmp_path / name
    with open(out, "wb") as f:
        rewriter = write_binlog(binlog_spec.read_events(list(paths)), f, WriteOptions(**options))
    rewriter.close()
    return out.read_bytes(), str(out)


def read_back(path) -> list[binlog_spec.Event]:
    return list(binlog_spec.open(path))  # raises on any CRC, size or layout fault


def fde_of(path) -> spec.FormatDescription:
    with binlog_spec.open(path) as reader:
        next(iter(reader))
        return reader.format_description


def first(path, type_code):
    return next(ev for ev in binlog_spec.open(path) if ev.type_code == type_code)


def mariadb_binlog(path, *options) -> str:
    r = subprocess.run(["mariadb-binlog", "--verify-binlog-checksum", "-vv", *options, str(path)],
                       capture_output=True, check=False)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert not r.stderr, r.stderr.decode(errors="replace")
    return r.stdout.decode("utf-8", "surrogateescape")


def plain(ev) -> dict:
    return {k: v for k, v in ev.to_dict().items() if k not in PLACE}


# --------------------------------------------------------------------------- framing


def test_frame_sets_size_end_log_pos_and_crc():
    ev = first(DEMO, ET.xid_event)
    bare = writer.bare_bytes(ev)
    assert len(bare) == ev.size - 4 and int.from_bytes(bare[9:13], "little") == len(bare)
    framed = writer.frame(bare, 1000, checksum=True)
    assert len(framed) == ev.size
    assert int.from_bytes(framed[9:13], "little") == ev.size
    assert int.from_bytes(framed[13:17], "little") == 1000 + ev.size
    assert int.from_bytes(framed[-4:], "little") == zlib.crc32(framed[:-4])
    assert writer.frame(bare, ev.pos, checksum=True) == ev.raw  # in place: the original bytes
    assert writer.frame(bare, 0, checksum=False)[-1] == bare[-1]


def test_forward_copy_recomputes_positions_and_checksums(tmp_path):
    data, path = write([DEMO], tmp_path)
    assert data[:4] == spec.MAGIC
    back = read_back(path)
    pos = 4
    for ev in back:
        assert ev.pos == pos and ev.end_log_pos == pos + ev.size
        assert ev.checksum == zlib.crc32(ev.raw[:-4])
        pos += ev.size
    assert pos == len(data)
    assert not back[0].flags & spec.LOG_EVENT_BINLOG_IN_USE_F
    original = [ev for ev in binlog_spec.open(DEMO) if ev.type_code != ET.rotate_event]
    assert [plain(e) for e in back] == [plain(e) for e in original]
    mariadb_binlog(path)


def test_events_of_several_files_follow_one_fde(tmp_path):
    _, path = write([DEMO, COMPRESSED], tmp_path)
    back = read_back(path)
    assert [ev.type for ev in back].count("FORMAT_DESCRIPTION_EVENT") == 1
    assert [ev.type for ev in back].count("GTID_LIST_EVENT") == 1  # file header events of the first file only
    assert sum(1 for ev in back if ev.type_code == ET.xid_event) == \
        sum(1 for p in (DEMO, COMPRESSED) for ev in binlog_spec.open(p) if ev.type_code == ET.xid_event)
    mariadb_binlog(path, "--skip-gtid-strict-mode")  # two servers' files: both count from 0-1-1


# --------------------------------------------------------------------------- TABLE_MAP rename


def test_table_map_rename_round_trips():
    ev = first(DEMO, ET.table_map_event)
    fde = fde_of(DEMO)
    bare = writer.bare_bytes(ev)
    longer = writer.rename_schema(bare, fde, {"shop": "a_much_longer_schema_name"})
    assert len(longer) == len(bare) + len("a_much_longer_schema_name") - len("shop")
    renamed = writer.parse_bare(longer, fde)
    assert renamed.error is None
    assert renamed.schema == "a_much_longer_schema_name"
    assert {k: v for k, v in renamed.fields.items() if k not in ("schema", "len_schema")} == \
        {k: v for k, v in ev.fields.items() if k not in ("schema", "len_schema")}
    assert writer.rename_schema(longer, fde, {"a_much_longer_schema_name": "shop"}) == bare
    assert writer.rename_schema(bare, fde, {"other": "x"}) is bare


def test_rewrite_db_in_a_written_binlog(tmp_path):
    _, path = write([DEMO], tmp_path, rewrite_db={"shop": "boutique"})
    back = read_back(path)
    assert {ev.schema for ev in back if ev.type_code == ET.table_map_event} == {"boutique"}
    assert {ev.db for ev in back if ev.type_code == ET.query_event} == {"boutique"}
    assert "`boutique`.`customers`" in mariadb_binlog(path)
    rows_before = [(rc.op, rc.before, rc.after) for rc in decoder.read_rows(binlog_spec.open(DEMO))]
    assert [(rc.op, rc.before, rc.after) for rc in decoder.read_rows(iter(back))] == rows_before


# --------------------------------------------------------------------------- inversion


def _changes(events):
    return [(rc.schema, rc.table, rc.op, rc.before, rc.after) for rc in decoder.read_rows(events)]


def _invert_one(path, type_code):
    fde = fde_of(path)
    row_decoder = decoder.RowDecoder()
    for ev in binlog_spec.open(path):
        list(row_decoder.feed(ev))
        if ev.type_code == type_code:
            table = row_decoder.tables[ev.table_id]
            inverted = invert_rows(writer.bare_bytes(ev), fde, table, ev.file, ev.pos)
            return ev, table, fde, inverted
    raise AssertionError(f"no event {type_code} in {path}")


def _decode(table, fde, bare):
    row_decoder = decoder.RowDecoder()
    row_decoder.tables[table.table_id] = table
    return [(rc.op, rc.before, rc.after) for rc in row_decoder.feed(writer.parse_bare(bare, fde))]


def test_an_inverted_write_is_a_delete_of_the_same_rows():
    ev, table, fde, inverted = _invert_one(DEMO, ET.write_rows_event_v1)
    assert inverted[4] == ET.delete_rows_event_v1
    written = _decode(table, fde, writer.bare_bytes(ev))
    deleted = _decode(table, fde, inverted)
    assert len(written) == 3
    assert deleted == [("delete", after, None) for _, _, after in reversed(written)]
    # inverting again gives the original bytes back
    assert invert_rows(inverted, fde, table) == writer.bare_bytes(ev)


def test_an_inverted_update_swaps_its_images():
    ev, table, fde, inverted = _invert_one(DEMO, ET.update_rows_event_v1)
    assert inverted[4] == ET.update_rows_event_v1
    updated = _decode(table, fde, writer.bare_bytes(ev))
    undone = _decode(table, fde, inverted)
    assert undone == [("update", after, before) for _, before, after in reversed(updated)]
    assert invert_rows(inverted, fde, table) == writer.bare_bytes(ev)


def test_an_inverted_update_swaps_the_columns_present_bitmaps():
    ev, table, fde, _ = _invert_one(DEMO, ET.update_rows_event_v1)
    bare = bytearray(writer.bare_bytes(ev))
    lay = writer.rows_layout(bytes(bare), fde)
    # Tell the two bitmaps apart with a padding bit (past the last column) in the after image's.
    assert lay.num_columns < 8
    bare[lay.ofs_after] |= 0x80
    inverted = invert_rows(bytes(bare), fde, table)
    assert inverted[lay.ofs_before] == bare[lay.ofs_after]
    assert inverted[lay.ofs_after] == bare[lay.ofs_before]


def test_a_row_image_cut_short_is_refused_naming_the_row_and_column():
    ev, table, fde, _ = _invert_one(DEMO, ET.write_rows_event_v1)
    bare = writer.bare_bytes(ev)
    cut = writer._with_len(bytearray(bare[:-3]))      # the last of the 3 rows loses its last bytes
    with pytest.raises(MalformedEventError) as caught:
        invert_rows(cut, fde, table, ev.file, ev.pos)
    assert caught.value.message.startswith("row 2: column ")
    assert caught.value.file == ev.file and caught.value.offset == ev.pos


def test_image_bounds_come_from_the_walker_not_the_value_decoder(monkeypatch):
    ev, table, fde, inverted = _invert_one(DEMO, ET.update_rows_event_v1)

    def no_decoding(*args, **kwargs):
        raise AssertionError("a value was decoded")
    monkeypatch.setattr("binlog_spec.output.rewriter.decode_image", no_decoding)
    assert invert_rows(writer.bare_bytes(ev), fde, table, ev.file, ev.pos) == inverted


def test_minimal_images_are_refused_with_file_and_offset():
    fde = fde_of(TYPES_MINIMAL)
    row_decoder = decoder.RowDecoder()
    for ev in binlog_spec.open(TYPES_MINIMAL):
        list(row_decoder.feed(ev))
        if ev.type_code == ET.update_rows_event_v1:
            with pytest.raises(RollbackError) as caught:
                invert_rows(writer.bare_bytes(ev), fde, row_decoder.tables[ev.table_id], ev.file, ev.pos)
            assert caught.value.file == ev.file and caught.value.offset == ev.pos
            assert "MINIMAL" in caught.value.message
            return
    raise AssertionError("no UPDATE in the MINIMAL fixture")


def test_a_rollback_of_minimal_images_fails_on_the_command_line(tmp_path):
    err = io.StringIO()
    code = cli.main(["sql", "--rollback", "--output-format", "binlog", "-o", str(tmp_path / "x.bin"),
                     str(TYPES_MINIMAL)], io.StringIO(), err)
    assert code == cli.EXIT_BAD_INPUT
    assert "MINIMAL" in err.getvalue() and "offset" in err.getvalue()
    assert not (tmp_path / "x.bin").exists()


def test_json_diffs_cannot_be_inverted():
    path = CORPUS / "rust_mysql_common" / "json.binlog.000001"
    with pytest.raises(RollbackError, match="PARTIAL_UPDATE_ROWS_EVENT"):
        write_binlog(binlog_spec.open(path), io.BytesIO(), WriteOptions(rollback=True))


# --------------------------------------------------------------------------- rollback files


def test_rollback_file_reverses_transactions_and_their_rows(tmp_path):
    _, path = write([DEMO], tmp_path, rollback=True)
    back = read_back(path)
    original = list(binlog_spec.open(DEMO))
    forward = _changes(iter(original))
    undo = _changes(iter(back))
    inverse = {"insert": "delete", "delete": "insert", "update": "update"}
    assert undo == [(s, t, inverse[op], after, before) for s, t, op, before, after in reversed(forward)]
    # framing: every transaction with rows keeps its GTID ... XID, DDL is left out
    kinds = [ev.type for ev in back if ev.type_code not in (ET.table_map_event,) and ev.type_code not in
             decoder.ROW_OPS]
    assert kinds[:3] == ["FORMAT_DESCRIPTION_EVENT", "GTID_LIST_EVENT", "BINLOG_CHECKPOINT_EVENT"]
    assert kinds[3:] == ["GTID_EVENT", "XID_EVENT"] * 4
    assert not any(ev.type_code == ET.query_event for ev in back)
    # the sequence numbers grow again (mariadb-binlog's gtid-strict-mode), the same set as the input
    seqs = [ev.seq_no for ev in back if ev.type_code == ET.gtid_event]
    assert seqs == sorted(seqs) == [4, 5, 6, 8]
    out = mariadb_binlog(path)
    assert out.index("### DELETE FROM `shop`.`customers`") > out.index("### DELETE FROM `shop`.`orders`")


def test_statement_ends_are_moved_to_the_last_inverted_event(tmp_path):
    """A statement written as several rows events (STMT_END_F on the last) is inverted as the same
    events in reverse, the flag moved to the new last one."""
    original = list(binlog_spec.open(COMPRESSED))
    flags = [ev.fields["rows_flags"] & 1 for ev in original if ev.type_code in decoder.ROW_OPS]
    assert flags[:2] == [0, 1]
    _, path = write([COMPRESSED], tmp_path, rollback=True)
    back = read_back(path)
    for ev in back:  # plain events: the compressed ones are written decompressed
        assert ev.type_code not in writer.PLAIN_OF_COMPRESSED
    groups, current = [], []
    for ev in back:
        if ev.type_code in decoder.ROW_OPS:
            current.append(ev.rows_flags & 1)
            if ev.rows_flags & 1:
                groups.append(current)
                current = []
        elif ev.type_code == ET.table_map_event:
            assert not current
    assert not current and [0, 1] in groups and all(g[-1] == 1 and not any(g[:-1]) for g in groups)
    forward = _changes(iter(original))
    assert len(_changes(iter(back))) == len(forward)
    mariadb_binlog(path)


def test_rollback_across_files_puts_the_last_file_first(tmp_path):
    _, path = write([DEMO, COMPRESSED], tmp_path, rollback=True)
    back = read_back(path)
    tables = [ev.table for ev in back if ev.type_code == ET.table_map_event]
    assert tables[0] == "docs" and tables[-1] == "customers"  # COMPRESSED's last, DEMO's first
    undo = _changes(iter(back))
    forward = _changes(binlog_spec.read_events([DEMO, COMPRESSED]))
    assert [c[:3] for c in undo] == [(s, t, {"insert": "delete", "delete": "insert", "update": "update"}[op])
                                     for s, t, op, _, _ in reversed(forward)]


def test_rollback_of_the_types_fixture_reads_back(tmp_path):
    _, path = write([TYPES_FULL], tmp_path, rollback=True)
    back = read_back(path)
    assert len(_changes(iter(back))) == len(_changes(binlog_spec.open(TYPES_FULL)))
    mariadb_binlog(path)


def test_skip_gtids_turns_mariadb_gtids_into_begin(tmp_path):
    _, path = write([DEMO], tmp_path, skip_gtids=True)
    back = read_back(path)
    assert not any(ev.type_code == ET.gtid_event for ev in back)
    begins = [ev for ev in back if ev.type_code == ET.query_event and ev.query == "BEGIN"]
    assert len(begins) == 4
    out = mariadb_binlog(path)
    assert "gtid_seq_no" not in out and "BEGIN" in out


# --------------------------------------------------------------------------- decompression, payloads


def test_mariadb_compressed_events_read_back_decompressed_and_equal(tmp_path):
    original = list(binlog_spec.open(COMPRESSED))
    assert any(ev.type_code in writer.PLAIN_OF_COMPRESSED for ev in original)
    _, path = write([COMPRESSED], tmp_path)
    back = read_back(path)
    kept = [ev for ev in original if ev.type_code != ET.rotate_event]
    assert len(back) == len(kept)
    for a, b in zip(kept, back):
        assert b.type_code == writer.PLAIN_OF_COMPRESSED.get(a.type_code, a.type_code)
        assert plain(a) == plain(b)
    mariadb_binlog(path)


def test_decompress_one_event():
    ev = first(COMPRESSED, ET.query_compressed_event)
    fde = fde_of(COMPRESSED)
    bare = writer.decompress(writer.bare_bytes(ev), fde)
    assert bare[4] == ET.query_event
    assert writer.query_parts(bare, fde)[1].decode() == ev.query
    assert writer.decompress(bare, fde) is bare


def test_transaction_payload_events_are_written_as_plain_events(tmp_path):
    original = list(binlog_spec.open(MYSQL_PAYLOAD))
    inner = [ev for ev in original if ev.is_inner]
    assert inner and any(ev.type_code == ET.transaction_payload_event for ev in original)
    _, path = write([MYSQL_PAYLOAD], tmp_path)
    back = read_back(path)
    assert not any(ev.type_code == ET.transaction_payload_event for ev in back)
    assert fde_of(path).len_checksum == 4 and all(ev.checksum is not None for ev in back)
    assert [plain(ev) for ev in back if ev.type_code in {e.type_code for e in inner}][-len(inner):] == \
        [plain(ev) for ev in inner]
    assert _changes(iter(back)) == _changes(iter(original))


def test_mysql_gtid_binlog_round_trips(tmp_path):
    original = [ev for ev in binlog_spec.open(MYSQL_GTIDS) if ev.type_code not in writer.DROPPED_EVENTS]
    _, path = write([MYSQL_GTIDS], tmp_path)
    assert [plain(ev) for ev in read_back(path)] == [plain(ev) for ev in original]


# --------------------------------------------------------------------------- command line


def test_binlog_output_needs_a_file_and_no_sql_mode(tmp_path):
    for argv in (["--output-format", "binlog"], ["--output-format", "binlog", "--sql2", "-o", str(tmp_path / "a")]):
        err = io.StringIO()
        assert cli.main(["sql", *argv, str(DEMO)], io.StringIO(), err) == cli.EXIT_USAGE
        assert "binlog-spec: error:" in err.getvalue()


def test_binlog_output_with_filters(tmp_path):
    out = tmp_path / "orders.bin"
    err = io.StringIO()
    code = cli.main(["sql", "--output-format", "binlog", "-o", str(out), "--table", "shop.orders", str(DEMO)],
                    io.StringIO(), err)
    assert code == 0, err.getvalue()
    back = read_back(out)
    assert {ev.table for ev in back if ev.type_code == ET.table_map_event} == {"orders"}
    mariadb_binlog(out)


def test_binlog_rollback_notes_the_statements_it_cannot_undo(tmp_path):
    err = io.StringIO()
    code = cli.main(["sql", "--rollback", "--output-format", "binlog", "-o", str(tmp_path / "u.bin"), str(DEMO)],
                    io.StringIO(), err)
    assert code == 0
    assert "not undone" in err.getvalue() and "ALTER TABLE customers" in err.getvalue()


@pytest.mark.parametrize("skip_gtids", [False, True], ids=["gtids", "skip-gtids"])
def test_mysql_rollback_keeps_each_transactions_framing(tmp_path, skip_gtids):
    path = CORPUS / "rust_mysql_common" / "mysql-enum-string-set.000001"
    _, out = write([path], tmp_path, rollback=True, skip_gtids=skip_gtids)
    back = read_back(out)
    frame = [ev.type for ev in back if ev.type_code not in (ET.format_description_event,
                                                            ET.previous_gtids_log_event)]
    gtid = [] if skip_gtids else ["GTID_LOG_EVENT"]
    assert frame == [*gtid, "QUERY_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT", "XID_EVENT",
                     *gtid, "QUERY_EVENT", "TABLE_MAP_EVENT", "UPDATE_ROWS_EVENT", "XID_EVENT",
                     *gtid, "QUERY_EVENT", "TABLE_MAP_EVENT", "DELETE_ROWS_EVENT", "XID_EVENT"]
    assert all(ev.query == "BEGIN" for ev in back if ev.type_code == ET.query_event)
    if not skip_gtids:  # MySQL GTIDs are kept (replay with mysqlbinlog --skip-gtids)
        gnos = [ev.gno for ev in back if ev.type_code == ET.gtid_log_event]
        assert gnos == sorted(gnos, reverse=True)
