"""The row decoder on real files: operations, images, names, GTIDs and its typed errors."""
from __future__ import annotations

import struct

import pytest

import binlog_spec
from binlog_spec import rows

from conftest import CORPUS, FIXTURES
from test_reader_errors import FDE, MAGIC, collect, event, write


def changes(*paths, **kw):
    return list(rows.read_rows(binlog_spec.read_events(list(paths)), **kw))


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
    decoder = rows.RowDecoder()
    partial = [r for ev in evs for r in decoder.feed(ev) if ev.type == "PARTIAL_UPDATE_ROWS_EVENT"]
    assert len(partial) == 6
    for r in partial:
        assert list(r.before) == ["@1"]
        (diff,) = r.after["@2"]["json_diff"]
        assert (diff["operation"], diff["path"]) == ("REPLACE", "$.age")
        assert diff["value"] == r.after["@4"]


def test_json_diffs_apply_to_a_document():
    from binlog_spec import json_path
    from binlog_spec.values import JsonDiff
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
        list(rows.read_rows(events))
    assert (exc.value.file, exc.value.offset, exc.value.event_type) == (str(p), 123, "WRITE_ROWS_EVENT")
    assert "table id 42" in str(exc.value)


def test_a_row_image_that_does_not_fit_its_table_is_a_typed_error(tmp_path):
    tm = (b"\x2a\x00\x00\x00\x00\x00" + b"\x00\x00" + b"\x01d\x00" + b"\x01t\x00" + b"\x01\x08\x00\x00")
    rows_body = (b"\x2a\x00\x00\x00\x00\x00" + b"\x01\x00" + b"\x02\x00" + b"\x01" + b"\x01"
                 + b"\x00" + b"\x07\x00\x00")  # a BIGINT needs 8 bytes
    p = write(tmp_path, MAGIC + FDE + event(19, tm) + event(30, rows_body))
    with pytest.raises(binlog_spec.MalformedEventError) as exc:
        list(rows.read_rows(binlog_spec.open(p)))
    assert exc.value.offset == 123 + 19 + len(tm) + 4 and exc.value.event_type == "WRITE_ROWS_EVENT"
    assert "@1" in str(exc.value)


def test_rows_inside_a_compressed_transaction_are_decoded():
    rcs = changes(CORPUS / "rust_mysql_common/transaction_compression.000001")
    assert len(rcs) == 1 and rcs[0].op == "insert"


def _rows_and_error(path, generic: bool, monkeypatch):
    """(row dicts, error text) of a file, decoded with the compiled fast paths or without them."""
    with monkeypatch.context() as m:
        if generic:
            m.setattr(rows.RowDecoder, "_compiled_rows", lambda self, tid, table, *a: (table.names, None))
        out, error = [], None
        try:
            for rc in rows.read_rows(binlog_spec.read_events([path])):
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
    compiled_before = next(rows._COMPILED_COUNT)
    total = 0
    for path in _row_files():
        fast = _rows_and_error(path, False, monkeypatch)
        slow = _rows_and_error(path, True, monkeypatch)
        assert fast == slow, path
        total += len(fast[0])
    assert total > 10_000
    assert next(rows._COMPILED_COUNT) - compiled_before > 50


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
