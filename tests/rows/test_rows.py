"""The row decoder on real files: operations, images, names, GTIDs and its typed errors."""
from __future__ import annotations

import struct
import zlib

import pytest

import binlog_spec
from binlog_spec.rows.decoder import RowDecoder, _COMPILED_COUNT, read_rows

from conftest import CORPUS, FIXTURES
from test_reader_errors import FDE, MAGIC, collect, event, write


def changes(*paths, **kw):
    return list(read_rows(binlog_spec.read_events(list(paths)), **kw))


def test_demo_fixture_rows_follow_the_workload():
    rcs = changes(FIXTURES / "demo" / "mariadb-bin.000001")
    assert [(r.table, r.op) for r in rcs] == [("customers", "insert")] * 3 + [("orders", "insert")] * 3 + [
        ("orders", "update"), ("customers", "update"), ("orders", "delete"), ("customers", "update")]
    ada = rcs[0].after
    assert ada == {"id": 1, "name": "Ada", "email": "ada@example.com", "balance": __import__("decimal").Decimal(
        "100.50"), "created": __import__("datetime").datetime(2026, 1, 1, 9, 0, 0, 125000)}
    upd = rcs[6]
    assert (upd.before["status"], upd.after["status"]) == ("paid", "shipped")
    assert rcs[8].before["note"] == "emoji 🎉" and rcs[8].after is None
    assert [r.gtid for r in rcs[:6]] == ["0-1-4"] * 6
    # the ALTER TABLE added `vip`: the last update's images have it
    assert rcs[-1].after["vip"] == 1 and "vip" not in rcs[0].after
    assert rcs[0].to_dict()["timestamp"] == "2026-01-01T00:01:00Z"


def test_columns_without_names_are_numbered():
    rcs = changes(CORPUS / "zalora_binlog-parser/mysql-bin.02")
    assert rcs and all(list(r.after or r.before)[0] == "@1" for r in rcs)


def test_partial_json_updates_carry_their_diffs_when_the_before_image_lacks_the_document():
    """json.binlog: MINIMAL images; column 4 is generated from json_col->'$.age' by the server."""
    evs = list(binlog_spec.open(CORPUS / "rust_mysql_common/json.binlog.000001"))
    decoder = RowDecoder()
    partial = [r for ev in evs for r in decoder.feed(ev) if ev.type == "PARTIAL_UPDATE_ROWS_EVENT"]
    assert len(partial) == 6
    for r in partial:
        assert list(r.before) == ["@1"]
        (diff,) = r.after["@2"]["json_diff"]
        assert (diff["operation"], diff["path"]) == ("REPLACE", "$.age")
        assert diff["value"] == r.after["@4"]


def test_json_diffs_apply_to_a_document():
    from binlog_spec.rows.json import json_path
    from binlog_spec.rows.json.json_binary import JsonDiff
    doc = {"a": [1, 2, {"b c": 3}], "d": True}
    diffs = [JsonDiff("REPLACE", '$.a[2]."b c"', 4), JsonDiff("INSERT", "$.a[1]", 9),
             JsonDiff("REMOVE", "$.d", None), JsonDiff("INSERT", "$.e", {"f": None})]
    assert json_path.apply_diffs(doc, diffs) == {"a": [1, 9, 2, {"b c": 4}], "e": {"f": None}}
    assert doc == {"a": [1, 2, {"b c": 3}], "d": True}  # the before value is untouched


def test_a_rows_event_without_its_table_map_is_a_typed_error(tmp_path):
    rows_body = (b"\x2a\x00\x00\x00\x00\x00" + b"\x01\x00" + b"\x02\x00" + b"\x01" + b"\x01"
                 + b"\x00" + struct.pack("<i", 7))
    p = write(tmp_path, MAGIC + FDE + event(30, rows_body))
    events, err = collect(p)
    assert err is None and events[1].type == "WRITE_ROWS_EVENT"
    with pytest.raises(binlog_spec.MissingTableMapError) as exc:
        list(read_rows(events))
    assert (exc.value.file, exc.value.offset, exc.value.event_type) == (str(p), 123, "WRITE_ROWS_EVENT")
    assert "table id 42" in str(exc.value)


def test_a_row_image_that_does_not_fit_its_table_is_a_typed_error(tmp_path):
    tm = (b"\x2a\x00\x00\x00\x00\x00" + b"\x00\x00" + b"\x01d\x00" + b"\x01t\x00" + b"\x01\x08\x00\x00")
    rows_body = (b"\x2a\x00\x00\x00\x00\x00" + b"\x01\x00" + b"\x02\x00" + b"\x01" + b"\x01"
                 + b"\x00" + b"\x07\x00\x00")  # a BIGINT needs 8 bytes
    p = write(tmp_path, MAGIC + FDE + event(19, tm) + event(30, rows_body))
    with pytest.raises(binlog_spec.MalformedEventError) as exc:
        list(read_rows(binlog_spec.open(p)))
    assert exc.value.offset == 123 + 19 + len(tm) + 4 and exc.value.event_type == "WRITE_ROWS_EVENT"
    assert "@1" in str(exc.value)


def test_rows_inside_a_compressed_transaction_are_decoded():
    rcs = changes(CORPUS / "rust_mysql_common/transaction_compression.000001")
    assert len(rcs) == 1 and rcs[0].op == "insert"


def _rows_and_error(path, generic: bool, monkeypatch):
    """(row dicts, error text) of a file, decoded with the compiled fast paths or without them."""
    with monkeypatch.context() as m:
        if generic:
            m.setattr(RowDecoder, "_compiled_rows", lambda self, tid, table, *a: (table.names, None))
        out, error = [], None
        try:
            for rc in read_rows(binlog_spec.read_events([path])):
                out.append(rc.to_dict())
        except binlog_spec.BinlogError as exc:
            error = str(exc)
    return out, error


def _row_files():
    files = sorted(p for p in FIXTURES.rglob("*-bin.0*") if p.is_file())
    files += sorted(CORPUS / row["file"] for row in __import__("conftest").manifest_rows())
    return files


def test_compiled_row_decoders_give_what_the_generic_decoder_gives(monkeypatch):
    """The per-layout compiled generators are a fast path only: over every fixture and corpus
    file, values, order, positions and errors equal the value-by-value decoder's, and the fast
    path does run (a layout is compiled the second time it is seen)."""
    compiled_before = next(_COMPILED_COUNT)
    total = 0
    for path in _row_files():
        fast = _rows_and_error(path, False, monkeypatch)
        slow = _rows_and_error(path, True, monkeypatch)
        assert fast == slow, path
        total += len(fast[0])
    assert total > 10_000
    assert next(_COMPILED_COUNT) - compiled_before > 50


def test_a_gtid_does_not_outlive_its_file_or_its_transaction():
    """Rows of a file written without GTIDs, read after a file with them, have no GTID; nor
    do rows after a transaction's XID that no new GTID event opens."""
    gtid_file = FIXTURES / "demo" / "mariadb-bin.000001"
    plain_file = CORPUS / "canal" / "dbsync__src__test__resources__binlog__mysql-bin.000001"
    plain = changes(plain_file)
    both = changes(gtid_file, plain_file)
    assert plain and both[-len(plain):] == plain
    assert {r.gtid for r in plain} == {None}
    assert both[len(both) - len(plain) - 1].gtid is not None


# --------------------------------------------------------------------------
# PARTIAL_UPDATE_ROWS_EVENT with the whole document in the before image, built byte by byte from
# the server's layout (libbinlogevents rows_event.h, sql/rpl_record.h: before image, the shared
# image value_options + one partial bit per JSON column, the after image holding the diffs;
# sql/json_binary.cc for the documents, sql/json_diff.cc for the diffs). No real file has one:
# MariaDB cannot write it, and the corpus' MySQL file logged MINIMAL images.

def _json_binary(v) -> bytes:
    """A small binary JSON document (json_binary.cc): type byte, then the value."""
    if isinstance(v, (dict, list)):
        return (b"\x00" if isinstance(v, dict) else b"\x02") + _json_container(v)
    if v is None or isinstance(v, bool):
        return b"\x04" + {None: b"\x00", True: b"\x01", False: b"\x02"}[v]
    if isinstance(v, int):
        return b"\x05" + struct.pack("<h", v)
    return b"\x0c" + bytes([len(v.encode())]) + v.encode()          # a string under 128 bytes


def _json_container(v) -> bytes:
    """count, size, key entries (offset, length), value entries (type, inlined value or offset),
    keys, values; offsets from the start of the container, 16-bit (a small container)."""
    items = sorted(v.items(), key=lambda kv: (len(kv[0]), kv[0])) if isinstance(v, dict) else list(enumerate(v))
    n = len(items)
    pos = 4 + (4 * n if isinstance(v, dict) else 0) + 3 * n
    key_entries, keys = b"", b""
    if isinstance(v, dict):
        for k, _ in items:
            key_entries += struct.pack("<HH", pos, len(k))
            keys += k.encode()
            pos += len(k)
    value_entries, values_ = b"", b""
    for _, x in items:
        if x is None or isinstance(x, bool) or (isinstance(x, int) and -32768 <= x < 32768):
            doc = _json_binary(x)
            value_entries += doc[:1] + doc[1:].ljust(2, b"\x00")      # inlined: literal, int16
        else:
            doc = _json_binary(x)
            value_entries += doc[:1] + struct.pack("<H", pos)
            values_ += doc[1:]
            pos += len(doc) - 1
    return struct.pack("<HH", n, pos) + key_entries + value_entries + keys + values_


def _json_diff_bytes(*diffs) -> bytes:
    """operation (0 REPLACE, 1 INSERT, 2 REMOVE), path length and path, value length and value."""
    out = b""
    for op, path, *value in diffs:
        out += bytes([op, len(path)]) + path.encode()
        if value:
            doc = _json_binary(value[0])
            out += bytes([len(doc)]) + doc
    return out


def partial_update_file(tmp_path):
    """A MySQL 8.0 binlog (the FDE of json.binlog.000001) with `d`.`t` (id INT NOT NULL, doc JSON)
    and one PARTIAL_UPDATE_ROWS_EVENT of two rows, both images FULL, and the documents the diffs
    give, worked out by hand."""
    source = (CORPUS / "rust_mysql_common/json.binlog.000001").read_bytes()
    fde_size = struct.unpack_from("<I", source, 4 + 9)[0]
    out = bytearray(source[:4 + fde_size])

    def add(type_code, body):
        size = 19 + len(body) + 4
        head = struct.pack("<IBIIIH", 1700000000, type_code, 1, size, len(out) + size, 0)
        out.extend(head + body + struct.pack("<I", zlib.crc32(head + body)))

    table_id = b"\x2a\x00\x00\x00\x00\x00"
    add(19, table_id + b"\x01\x00" + b"\x01d\x00" + b"\x01t\x00" + b"\x02" + b"\x03\xf5" + b"\x01\x04" + b"\x02")
    rows_ = [(1, {"a": 1, "b": [1, 2], "c": "x"},
              _json_diff_bytes((0, "$.a", 5), (1, "$.b[1]", 9), (2, "$.c"), (1, "$.d", "new")),
              {"a": 5, "b": [1, 9, 2], "d": "new"}),
             (2, [1, {"k": 2}],
              _json_diff_bytes((0, "$[1].k", [True, None]), (1, "$[5]", 3)),
              [1, {"k": [True, None]}, 3])]
    body = table_id + b"\x01\x00" + b"\x02\x00" + b"\x02" + b"\x03" + b"\x03"
    for ident, before, diff, _ in rows_:
        doc = _json_binary(before)
        body += b"\x00" + struct.pack("<iI", ident, len(doc)) + doc           # before image
        body += b"\x01" + b"\x01"                                              # PARTIAL_JSON_UPDATES, doc partial
        body += b"\x00" + struct.pack("<iI", ident, len(diff)) + diff          # after image: the diffs
    add(39, body)
    path = tmp_path / "partial.000001"
    path.write_bytes(bytes(out))
    return path, [(ident, before, after) for ident, before, _, after in rows_]


def test_partial_json_updates_with_the_document_in_the_before_image_give_the_whole_after_document(tmp_path):
    path, expected = partial_update_file(tmp_path)
    got = [r for r in changes(path) if r.op == "update"]
    assert [(r.before["@1"], r.before["@2"], r.after["@2"]) for r in got] == expected
    assert [r.after["@1"] for r in got] == [1, 2]
