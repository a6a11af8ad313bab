"""Our decoding of the Rust crate `mysql_common`'s test binlogs equals what its own tests assert.

The oracle is the test code of `blackbeam/rust_mysql_common` (the binlogs in
`../shared/corpus/rust_mysql_common/` are its `test-data/binlogs/`): values written by the people
who made the files and checked by their own, independent decoder. Every expected value below is
transcribed by hand from those Rust tests (never from our output); each one cites the Rust file and
test function it comes from. The versions read were:

* `src/binlog/mod.rs` at commit 6050f295919e7b82e401591b21da69f0615ec459, `mod tests`:
  `binlog_event_roundtrip` (per-file blocks keyed on the file name), `gtid_tagged_log_event_from_binlog`
  and `untagged_previous_gtids_event_from_binlog`;
* `src/binlog/row.rs` (how rows name their columns: "`@<i>` where i is a column offset in a table",
  0-based) and `src/binlog/value.rs` (ENUM is read as its index, SET and BIT as their raw bytes);
* `src/binlog/jsonb.rs` (`JsonDom` -> `serde_json::Value`: opaque DECIMAL becomes a string, DATE
  'YYYY-MM-DD', DATETIME/TIMESTAMP 'YYYY-MM-DD hh:mm:ss.ffffff', TIME '[-]h:mm:ss.ffffff', other
  opaque values "base64:type<id>:<base64>");
* `src/collations.rs` (UNKNOWN_COLLATION_ID = 0, UTF8MB4_GENERAL_CI = 45, BINARY = 63,
  UTF8MB4_0900_AI_CI = 255).

`binlog_event_roundtrip` numbers events from 1 (the FORMAT_DESCRIPTION_EVENT is event 1) in the
file's own stream, so its event `i` is our top-level event `i - 1`.
"""
from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import json
import struct
from pathlib import Path

import pytest

import binlog_spec
from binlog_spec.rows.json import json_binary
from binlog_spec.rows.json import json_text
from binlog_spec.rows.decoder import DELETE, INSERT, RowDecoder, UPDATE, read_rows

from conftest import CORPUS

RUST = CORPUS / "rust_mysql_common"

# CollationId values (src/collations.rs).
UNKNOWN_COLLATION_ID, UTF8MB4_GENERAL_CI, BINARY, UTF8MB4_0900_AI_CI = 0, 45, 63, 255


# --------------------------------------------------------------------------
# Helpers


def top_level_events(path: Path) -> list:
    """The file's own event stream (what the Rust BinlogFile iterator yields), payloads unexpanded."""
    return list(binlog_spec.open(path, binlog_spec.ReadOptions(expand_payloads=False)))


def events_with_rows(path: Path, decoder: RowDecoder | None = None) -> list[tuple]:
    """(event, [RowChange of that event]) for each top-level event, in file order."""
    decoder = decoder or RowDecoder()
    return [(ev, list(decoder.feed(ev))) for ev in top_level_events(path)]


def rust_json(value: object) -> object:
    """A decoded JSON value as mysql_common's `serde_json::Value::from(JsonDom)` renders it
    (src/binlog/jsonb.rs): applied to our Python values, compared with the Rust expectation."""
    if isinstance(value, dict):
        return {k: rust_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [rust_json(v) for v in value]
    if isinstance(value, decimal.Decimal):                 # JsonNumber::Decimal -> string
        return format(value, "f")
    if isinstance(value, dt.datetime):                     # MysqlTime, "{:.6}"
        return value.strftime("%Y-%m-%d %H:%M:%S") + f".{value.microsecond:06d}"
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        sign = "-" if value < dt.timedelta(0) else ""
        value = abs(value)
        secs = value.days * 86400 + value.seconds
        return f"{sign}{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}.{value.microseconds:06d}"
    if isinstance(value, json_binary.JsonOpaque):               # JsonOpaque Display
        return f"base64:type{value.type_code}:{base64.b64encode(value.data).decode()}"
    return value


# --------------------------------------------------------------------------
# vector.binlog


# src/binlog/mod.rs, binlog_event_roundtrip, `"vector.binlog"` block: the Dimensionality optional
# metadata field of every TABLE_MAP_EVENT of table `foo` is [3], of table `bar` [2, 4].
VECTOR_DIMENSIONS = {"foo": [3], "bar": [2, 4]}


def test_vector_dimensionality_metadata():
    seen = set()
    for ev in top_level_events(RUST / "vector.binlog"):
        if ev.type != "TABLE_MAP_EVENT":
            continue
        assert ev.error is None, ev.error
        table = ev.fields["table"]
        if table not in VECTOR_DIMENSIONS:
            continue
        seen.add(table)
        dims = [o["value"] for o in ev.fields["optional_metadata"] if o["field_type"] == "VECTOR_DIMENSIONALITY"]
        assert dims == [VECTOR_DIMENSIONS[table]], f"TABLE_MAP at {ev.pos} ({table})"
    assert seen == set(VECTOR_DIMENSIONS)


# src/binlog/mod.rs, binlog_event_roundtrip, `"vector.binlog"` block, event i == 12 (a rows event):
# its first two rows, read as (id: u8, vector_column: Vec<u8>), are
#   (1, [205, 204, 140, 63, 205, 204, 12, 64, 51, 51, 83, 64])
#   (2, [0, 0, 128, 63, 0, 0, 128, 191, 0, 0, 0, 0])
# i.e. little-endian float32 bytes of the VECTOR column, both rows inserts (no before image).
VECTOR_EVENT_I = 12
VECTOR_ROWS = [
    (1, bytes([205, 204, 140, 63, 205, 204, 12, 64, 51, 51, 83, 64])),
    (2, bytes([0, 0, 128, 63, 0, 0, 128, 191, 0, 0, 0, 0])),
]


def test_vector_values():
    ev, changes = events_with_rows(RUST / "vector.binlog")[VECTOR_EVENT_I - 1]
    assert ev.type.endswith("ROWS_EVENT"), f"event {VECTOR_EVENT_I} is {ev.type} at {ev.pos}"
    assert len(changes) >= len(VECTOR_ROWS)
    for rc, (rust_id, rust_bytes) in zip(changes, VECTOR_ROWS):
        assert rc.op == INSERT and rc.before is None
        expected = list(struct.unpack(f"<{len(rust_bytes) // 4}f", rust_bytes))
        assert rc.after == {"id": rust_id, "vector_column": expected}, f"{ev.type} at {ev.pos}"
        # Its dimension is the Dimensionality metadata of table foo asserted above.
        assert len(rc.after["vector_column"]) == VECTOR_DIMENSIONS[rc.table][0]


# --------------------------------------------------------------------------
# json-opaque.binlog

# src/binlog/mod.rs, binlog_event_roundtrip, `"json-opaque.binlog"` block: for rows event i, the last
# column of the first row's after image, parsed to a JsonDom and converted to serde_json, equals:
JSON_OPAQUE = {
    10: {"a": "base64:type15:VQ=="},
    12: {"b": "2012-03-18"},
    14: {"c": "2012-03-18 11:30:45.000000"},
    16: {"c": "87:31:46.654321"},
    18: {"d": "123.456"},
    20: {"e": "9.00"},
    22: {"e": [0, 1, True, False]},
    24: {"e": None},
}
# ... and any other rows event panics ("no more events expected").


def _json_opaque_rows():
    return [(i + 1, ev, changes) for i, (ev, changes) in enumerate(events_with_rows(RUST / "json-opaque.binlog"))
            if ev.type in ("WRITE_ROWS_EVENT", "UPDATE_ROWS_EVENT", "DELETE_ROWS_EVENT",
                           "WRITE_ROWS_EVENT_V1", "UPDATE_ROWS_EVENT_V1", "DELETE_ROWS_EVENT_V1",
                           "PARTIAL_UPDATE_ROWS_EVENT")]


def test_json_opaque_rows_events_are_where_rust_expects_them():
    assert [i for i, _, _ in _json_opaque_rows()] == sorted(JSON_OPAQUE)


@pytest.mark.parametrize("i", sorted(JSON_OPAQUE))
def test_json_opaque_values(i):
    ev, changes = events_with_rows(RUST / "json-opaque.binlog")[i - 1]
    assert changes, f"event {i} ({ev.type} at {ev.pos}) has no rows"
    after = changes[0].after
    value = list(after.values())[-1]                      # Rust: after.pop() -> last column
    expected = JSON_OPAQUE[i]
    # The Python value, in mysql_common's serde_json rendering:
    assert rust_json(value) == expected, f"{ev.type} at {ev.pos}: {value!r}"
    # Our JSON text (as MySQL prints it) read back: numbers keep their digits via parse_float=str,
    # which is how mysql_common renders an opaque DECIMAL ("123.456", "9.00").
    assert json.loads(json_text.json_text(value), parse_float=str) == expected, json_text.json_text(value)


# --------------------------------------------------------------------------
# mysql-enum-string-set.000001

# src/binlog/mod.rs, binlog_event_roundtrip, `"mysql-enum-string-set.000001"` block. Table
# t(f1 CHAR(128), f2 VARCHAR(300), f3 ENUM, f4 SET, f5 TEXT); mysql_common reads ENUM as its index
# (Int) and SET as its raw bitmask bytes (src/binlog/value.rs).
S100 = "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
S_LONG = ("0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890123456789"
          "012345678901234567890123456780123456789012345678901234567890123456789012345678901234567890123456789"
          "012345678901234567890123456789012345678901234567890123456780123456789012345678901234567890123456789")
ROW_A = {"f1": S100, "f2": S_LONG, "f3": 1, "f4": bytes([0b00000101]), "f5": "0123456789"}
ROW_B = {"f1": "field1", "f2": "field_2", "f3": 2, "f4": bytes([0b00001010]), "f5": S_LONG}
ENUM_SET_EXPECTED = {
    INSERT: (None, ROW_A),      # WriteRowsEvent: before is None, after = ROW_A
    UPDATE: (ROW_A, ROW_B),     # UpdateRowsEvent: before = ROW_A, after = ROW_B
    DELETE: (ROW_B, None),      # DeleteRowsEvent: after is None, before = ROW_B
}
# The members, as the CREATE TABLE statement logged in the same file (QUERY_EVENT at 572) declares
# them: f3 ENUM('var1', 'variant2', 'foo'), f4 SET('one', 'two', 'three', 'four').
ENUM_MEMBERS = ("var1", "variant2", "foo")
SET_MEMBERS = ("one", "two", "three", "four")


def _as_member_strings(row: dict | None) -> dict | None:
    """Rust's raw ENUM index and SET bitmask, mapped to the member strings (1-based index; bit i =
    member i)."""
    if row is None:
        return None
    mask = int.from_bytes(row["f4"], "little")
    return {**row, "f3": ENUM_MEMBERS[row["f3"] - 1],
            "f4": frozenset(m for i, m in enumerate(SET_MEMBERS) if mask >> i & 1)}


def test_enum_string_set_values():
    seen = []
    for ev, changes in events_with_rows(RUST / "mysql-enum-string-set.000001"):
        for rc in changes:
            before, after = ENUM_SET_EXPECTED[rc.op]
            assert (rc.before, rc.after) == (_as_member_strings(before), _as_member_strings(after)), \
                f"{ev.type} at {ev.pos}"
            seen.append(rc.op)
    assert seen == [INSERT, UPDATE, DELETE]


def _strip_members(table):
    """The same table without ENUM/SET member lists: our decoder then returns the raw index and
    bitmask, which are what mysql_common asserts."""
    return dataclasses.replace(table, columns=tuple(dataclasses.replace(c, enum_values=None, set_values=None)
                                                    for c in table.columns))


def test_enum_set_raw_index_and_mask():
    decoder = RowDecoder()
    seen = []
    for ev in top_level_events(RUST / "mysql-enum-string-set.000001"):
        changes = list(decoder.feed(ev))
        if ev.type == "TABLE_MAP_EVENT":
            decoder.tables[ev.fields["table_id"]] = _strip_members(decoder.tables[ev.fields["table_id"]])
        for rc in changes:
            before, after = ENUM_SET_EXPECTED[rc.op]
            for ours, theirs in ((rc.before, before), (rc.after, after)):
                if theirs is None:
                    assert ours is None
                    continue
                assert ours["f3"] == theirs["f3"], f"ENUM index, {ev.type} at {ev.pos}"
                assert ours["f4"] == int.from_bytes(theirs["f4"], "little"), f"SET mask, {ev.type} at {ev.pos}"
            seen.append(rc.op)
    assert seen == [INSERT, UPDATE, DELETE]


# --------------------------------------------------------------------------
# mysql_type_bit.000001

# src/binlog/mod.rs, binlog_event_roundtrip, `"mysql_type_bit.000001"` block: every row of every
# rows event has no before image and the after image
#   [Bytes([0b100]), Bytes(b"foo"), Bytes([0b100000])]
# (table foo(a BIT(3), b TEXT, c BIT(8)); BIT values are their big-endian bytes).
BIT_AFTER = [bytes([0b100]), b"foo", bytes([0b100000])]


def test_bit_values():
    n = 0
    for ev, changes in events_with_rows(RUST / "mysql_type_bit.000001"):
        for rc in changes:
            assert rc.before is None
            a, b, c = rc.after.values()
            assert a == int.from_bytes(BIT_AFTER[0], "big"), f"BIT(3) at {ev.pos}"
            assert (b.encode() if isinstance(b, str) else b) == BIT_AFTER[1]
            assert c == int.from_bytes(BIT_AFTER[2], "big"), f"BIT(8) at {ev.pos}"
            n += 1
    assert n >= 1


# --------------------------------------------------------------------------
# time_issue.000001

# src/binlog/mod.rs, binlog_event_roundtrip, `"time_issue.000001"` block: every column of the first
# row's after image of every rows event is Value::Time(true, 21, 3, 48, 27, 0)
# (negative, 21 days, 03:48:27, 0 microseconds).
RUST_TIME = -dt.timedelta(days=21, hours=3, minutes=48, seconds=27, microseconds=0)


def test_time_value():
    n = 0
    for ev, changes in events_with_rows(RUST / "time_issue.000001"):
        if changes:
            for name, value in changes[0].after.items():
                assert value == RUST_TIME, f"{ev.type} at {ev.pos}, column {name}"
                n += 1
    assert n >= 1


# --------------------------------------------------------------------------
# minimal_row_metadata.000001

# src/binlog/mod.rs, binlog_event_roundtrip, `"minimal_row_metadata.000001"` block (issue #162): in
# the first row's after image, column "@2" has character set UTF8MB4_0900_AI_CI and column "@4" holds
# Value::Int(3230202323). mysql_common names columns "@<0-based column offset>" (src/binlog/row.rs);
# our names are 1-based, so its "@2" and "@4" are the columns at offsets 2 and 4.


def test_minimal_row_metadata():
    n = 0
    for ev, changes in events_with_rows(RUST / "minimal_row_metadata.000001"):
        if not changes:
            continue
        rc = changes[0]
        table = rc.table_def
        assert table.names[2] in rc.after and table.names[4] in rc.after, rc.after
        assert table.columns[2].charset == UTF8MB4_0900_AI_CI, f"column @2 (0-based) at {ev.pos}"
        assert rc.after[table.names[4]] == 3230202323, f"column @4 (0-based) at {ev.pos}"
        n += 1
    assert n >= 1


# --------------------------------------------------------------------------
# mariadb-bin.000001

# src/binlog/mod.rs, binlog_event_roundtrip, rows of `"mariadb-bin.000001"` (binlog_row_metadata=FULL):
# every column is of schema toddy_test and table outbox, the names are id, topic, event_type, event,
# created; the flags are PRI_KEY_FLAG for the first column and empty for the others (so no column is
# UNSIGNED); the character sets are UNKNOWN_COLLATION_ID, UTF8MB4_GENERAL_CI, UTF8MB4_GENERAL_CI,
# BINARY, UNKNOWN_COLLATION_ID.
MARIADB_NAMES = ["id", "topic", "event_type", "event", "created"]
MARIADB_CHARSETS = [UNKNOWN_COLLATION_ID, UTF8MB4_GENERAL_CI, UTF8MB4_GENERAL_CI, BINARY, UNKNOWN_COLLATION_ID]


def test_mariadb_full_row_metadata():
    n = 0
    for ev, changes in events_with_rows(RUST / "mariadb-bin.000001"):
        for rc in changes:
            table = rc.table_def
            assert (rc.schema, rc.table) == ("toddy_test", "outbox")
            assert list(rc.after) == MARIADB_NAMES, f"{ev.type} at {ev.pos}"
            assert table.primary_key == (0,)
            assert [c.unsigned for c in table.columns] == [False] * 5
            assert [c.charset if c.charset is not None else UNKNOWN_COLLATION_ID for c in table.columns] \
                == MARIADB_CHARSETS
            n += 1
    assert n >= 1


# --------------------------------------------------------------------------
# binlog-invisible-columns.000001

# src/binlog/mod.rs, binlog_event_roundtrip, `"binlog-invisible-columns.000001"` block: every
# optional-metadata field of every TABLE_MAP_EVENT parses (`meta.unwrap()`); the COLUMN_VISIBILITY
# field holds exactly one bit per column (table_map_event.rs rejects "bytes remaining on stream").
# mysql_common asserts no flag values. The flags checked in test_invisible_column_flags come instead
# from the CREATE TABLE statement logged in the same file (QUERY_EVENT at 570):
#   t1 (f1 INT UNSIGNED INVISIBLE, f2 INT UNSIGNED INVISIBLE, f3 INT, f4 TEXT, f5 BLOB,
#       f6 BIGINT UNSIGNED INVISIBLE)
INVISIBLE_DDL_NAMES = ["f1", "f2", "f3", "f4", "f5", "f6"]
INVISIBLE_DDL_VISIBLE = (False, False, True, True, True, False)


def test_invisible_columns_optional_metadata_parses():
    n = 0
    for ev in top_level_events(RUST / "binlog-invisible-columns.000001"):
        if ev.type != "TABLE_MAP_EVENT":
            continue
        assert ev.error is None, ev.error
        vis = [o["value"] for o in ev.fields["optional_metadata"] if o["field_type"] == "COLUMN_VISIBILITY"]
        assert len(vis) == 1 and len(vis[0]) == (ev.fields["num_columns"] + 7) // 8
        n += 1
    assert n >= 1


def test_invisible_column_flags():
    n = 0
    for ev, changes in events_with_rows(RUST / "binlog-invisible-columns.000001"):
        for rc in changes:
            assert rc.table_def.names == INVISIBLE_DDL_NAMES
            assert rc.table_def.visible == INVISIBLE_DDL_VISIBLE, f"{ev.type} at {ev.pos}"
            n += 1
    assert n >= 1


# --------------------------------------------------------------------------
# transaction_compression.000001

# src/binlog/mod.rs, binlog_event_roundtrip, `"transaction_compression.000001"` block: the
# decompressed payload of the TRANSACTION_PAYLOAD_EVENT holds, in order, QUERY_EVENT,
# TABLE_MAP_EVENT, WRITE_ROWS_EVENT, XID_EVENT and nothing more.


def test_transaction_payload_contents():
    events = list(binlog_spec.open(RUST / "transaction_compression.000001"))
    payloads = [ev for ev in events if ev.type == "TRANSACTION_PAYLOAD_EVENT"]
    assert payloads
    for payload in payloads:
        inner = [ev for ev in events if ev.payload_pos == payload.pos and ev is not payload]
        assert [ev.type for ev in inner] == ["QUERY_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT", "XID_EVENT"]
        assert all(ev.error is None for ev in inner)


# --------------------------------------------------------------------------
# GTID tags

# src/binlog/mod.rs, gtid_tagged_log_event_from_binlog, on binlog_transaction_with_GTID_TAG.000001:
# the PREVIOUS_GTIDS_EVENT has 2 entries, both of UUID 55778904-0299-11f1-b1b8-4ef0c4956feb: the
# first without tag and GNO interval [1, 14), the second with tag "mytag" and interval [1, 3); the
# GTID_TAGGED_LOG_EVENT is tagged "mytag", SID the same UUID, GNO 3. Both events must be found.
TAG_UUID = "55778904-0299-11f1-b1b8-4ef0c4956feb"


def _sids(ev) -> list[tuple[str, str | None, list[tuple[int, int]]]]:
    return [(s["sid"], s.get("tag") or None, [(iv["start"], iv["end"]) for iv in s["intervals"]])
            for s in ev.fields["sids"]]


def test_gtid_tagged_log_event():
    events = top_level_events(RUST / "binlog_transaction_with_GTID_TAG.000001")
    prev = [ev for ev in events if ev.type == "PREVIOUS_GTIDS_LOG_EVENT"]
    tagged = [ev for ev in events if ev.type == "GTID_TAGGED_LOG_EVENT"]
    assert prev and tagged
    for ev in prev:
        assert _sids(ev) == [(TAG_UUID, None, [(1, 14)]), (TAG_UUID, "mytag", [(1, 3)])]
    for ev in tagged:
        assert (ev.fields["tag"], ev.fields["sid"], ev.fields["gno"]) == ("mytag", TAG_UUID, 3)


# src/binlog/mod.rs, untagged_previous_gtids_event_from_binlog, on
# binlog_transaction_previous_GTID_no_tag.000001: one entry, UUID
# b9b88c66-0755-11f1-9899-4a9da94c4d71, no tag, interval [1, 3).


def test_untagged_previous_gtids():
    prev = [ev for ev in top_level_events(RUST / "binlog_transaction_previous_GTID_no_tag.000001")
            if ev.type == "PREVIOUS_GTIDS_LOG_EVENT"]
    assert prev
    for ev in prev:
        assert _sids(ev) == [("b9b88c66-0755-11f1-9899-4a9da94c4d71", None, [(1, 3)])]


# --------------------------------------------------------------------------
# Every file: what binlog_event_roundtrip requires of all of them

# src/binlog/mod.rs, binlog_event_roundtrip: for every binlog of test-data/binlogs, every event's body
# parses (`read_data()` is Ok) and every row of every rows event (V1, V2 and PARTIAL_UPDATE; the
# pre-GA rows events are kept as raw bytes, not decoded) decodes against the TABLE_MAP of its table
# id (`get_tme(...).unwrap()`, `row.unwrap()`). Two files end early by design:
#   ver_5_1-wl2325_r.001     stops at an XID_EVENT of size 0x26 that mysql_common cannot read;
#   corrupt-relay-bin.000624 stops at a QUERY_EVENT of size 171 that ends early (UnexpectedEof).
# mysql_common's iterator ends silently where an event header is cut off (UnexpectedEof), which is
# how it reads the two binlog_truncated_* files; our reader reports those as TruncatedEventError.
STOPS_AT = {"ver_5_1-wl2325_r.001": ("XID_EVENT", 0x26)}
FAILS_AT = {"corrupt-relay-bin.000624": ("QUERY_EVENT", 171)}
PRE_GA_ROWS = {"PRE_GA_WRITE_ROWS_EVENT", "PRE_GA_UPDATE_ROWS_EVENT", "PRE_GA_DELETE_ROWS_EVENT"}
ALL_FILES = sorted(p.name for p in RUST.iterdir() if p.is_file())


@pytest.mark.parametrize("name", ALL_FILES)
def test_every_event_and_row_decodes(name):
    events = []
    try:
        for ev in binlog_spec.open(RUST / name, binlog_spec.ReadOptions(expand_payloads=False)):
            events.append(ev)
    except binlog_spec.TruncatedEventError:
        assert name.startswith("binlog_truncated_"), f"{name}: only the truncated test files end early"
    if name in STOPS_AT:
        stop = next(i for i, ev in enumerate(events) if (ev.type, ev.size) == STOPS_AT[name])
        events = events[:stop]
    if name in FAILS_AT:
        first_bad = next(ev for ev in events if ev.error is not None)
        assert (first_bad.type, first_bad.size) == FAILS_AT[name], first_bad.error
        events = events[:events.index(first_bad)]
    bad = [(ev.pos, ev.type, str(ev.error)) for ev in events if ev.error is not None]
    assert not bad
    list(read_rows(ev for ev in events if ev.type not in PRE_GA_ROWS))


# json.binlog.000001 has no value assertions in mysql_common's tests; it is covered only by the
# generic requirement above (every row decodes, the PARTIAL_UPDATE_ROWS_EVENT included).
def test_json_binlog_rows_decode():
    changes = [rc for _, cs in events_with_rows(RUST / "json.binlog.000001") for rc in cs]
    assert changes
