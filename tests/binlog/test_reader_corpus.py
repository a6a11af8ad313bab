"""Every corpus binlog walks end to end, or fails exactly where its bytes are broken.

The per-type counts come from MANIFEST.tsv, made by an independent walk.
"""
from __future__ import annotations

import collections

import pytest

import binlog_spec

from conftest import CORPUS, expected_counts, manifest_rows, trailing_fault
from conftest import collect as walk

ROWS = manifest_rows()
HEADER_KEYS = {"file", "pos", "end_log_pos", "type", "type_code", "timestamp", "server_id", "size", "flags",
               "payload_pos", "payload_offset", "error", "checksum"}


@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_corpus_file_walks_with_the_manifest_counts(row):
    path = CORPUS / row["file"]
    events, error = walk(path)
    outer = collections.Counter(ev.type_code for ev in events if not ev.is_inner)
    assert dict(outer) == expected_counts(row)
    fault = trailing_fault(row)
    if "WALK:no magic" in row["notes"]:
        assert isinstance(error, binlog_spec.NotABinlogError) and error.offset == 0
    elif fault is not None:
        assert isinstance(error, binlog_spec.TruncatedEventError), error
        assert error.offset == fault
        assert error.file == str(path)
        last = events[-1] if events else None
        assert (last.pos + last.size if last else 4) == fault
    else:
        assert error is None, error
    for ev in events:
        d = ev.to_dict()  # every body decodes to plain values
        assert d["pos"] == ev.pos and d["type_code"] == ev.type_code
        assert not (set(ev.fields) & (HEADER_KEYS - {"error"})), "a body field hides a header field"


@pytest.mark.parametrize("row", [r for r in ROWS if not r["notes"].startswith("WALK")],
                         ids=lambda r: r["file"])
def test_event_sizes_tile_the_file(row):
    """Positions are consecutive and the sizes add up to the file size minus the magic."""
    events, error = walk(CORPUS / row["file"], expand_payloads=False)
    assert error is None, error
    pos = 4
    for ev in events:
        assert ev.pos == pos
        pos += ev.size
    import gzip
    path = CORPUS / row["file"]
    size = len(gzip.open(path).read()) if path.suffix == ".gz" else path.stat().st_size
    assert pos == size


def test_only_the_known_corrupt_bodies_are_malformed():
    """Bodies that do not fit their layout are kept raw and flagged, never silently dropped."""
    malformed = set()
    for row in ROWS:
        events, _ = walk(CORPUS / row["file"])
        malformed |= {(row["file"], ev.pos, ev.type) for ev in events if ev.error is not None}
    assert malformed == {
        # a relay log whose QUERY body at 91204 is overwritten with the middle of another statement
        ("rust_mysql_common/corrupt-relay-bin.000624", 91204, "QUERY_EVENT"),
        # a pre-GA development tree that numbered its row events differently (18 is a rows event there)
        ("rust_mysql_common/ver_5_1-wl2325_r.001", 549, "EXECUTE_LOAD_QUERY_EVENT"),
        ("rust_mysql_common/ver_5_1-wl2325_r.001", 650, "TABLE_MAP_EVENT"),
    }


def test_strict_mode_stops_at_a_malformed_body_after_the_earlier_events():
    path = CORPUS / "rust_mysql_common/corrupt-relay-bin.000624"
    events, error = walk(path, strict=True)
    assert isinstance(error, binlog_spec.MalformedEventError)
    assert (error.offset, error.event_type, error.file) == (91204, "QUERY_EVENT", str(path))
    assert events[-1].pos + events[-1].size == 91204


def test_transaction_payload_yields_its_inner_events_in_order():
    events, error = walk(CORPUS / "rust_mysql_common/transaction_compression.000001")
    assert error is None
    payload = next(ev for ev in events if ev.type == "TRANSACTION_PAYLOAD_EVENT")
    assert (payload.compression_type, payload.payload_size, payload.uncompressed_size) == ("ZSTD", 124, 179)
    inner = [ev for ev in events if ev.is_inner]
    assert [ev.type for ev in inner] == ["QUERY_EVENT", "TABLE_MAP_EVENT", "WRITE_ROWS_EVENT", "XID_EVENT"]
    assert [ev.size for ev in inner] == [71, 45, 36, 27]
    assert all(ev.payload_pos == payload.pos == ev.pos for ev in inner)
    assert [ev.payload_offset for ev in inner] == [0, 71, 116, 152]
    assert all(ev.end_log_pos == 0 for ev in inner)
    assert inner[0].query == "BEGIN"
    assert inner[2].table_id == inner[1].table_id
    # the inner events come right after the payload event, before the ROTATE
    i = events.index(payload)
    assert events[i + 1:i + 5] == inner and events[i + 5].type == "ROTATE_EVENT"
    assert inner[0].to_dict()["payload_pos"] == payload.pos


def test_payload_expansion_can_be_turned_off():
    events, _ = walk(CORPUS / "rust_mysql_common/transaction_compression.000001", expand_payloads=False)
    assert not any(ev.is_inner for ev in events)


def test_a_second_format_description_in_a_relay_log_replaces_the_first():
    events, error = walk(CORPUS / "rust_mysql_common/bug33029-slave-relay-bin.000001")
    assert error is None
    fdes = [ev for ev in events if ev.type == "FORMAT_DESCRIPTION_EVENT"]
    assert len(fdes) == 2 and fdes[1].pos > 4
    after = [ev for ev in events if ev.pos > fdes[1].pos and ev.type == "QUERY_EVENT"]
    assert after and all(ev.error is None for ev in after)


def test_gzip_binlog_reads_like_its_sibling():
    plain, _ = walk(CORPUS / "mbcj_osheroff/mysql-bin.sakila")
    gz, _ = walk(CORPUS / "mbcj_osheroff/mysql-bin.sakila.gz")
    assert len(plain) == len(gz) > 1000
    assert [e.to_dict() | {"file": None} for e in plain[:50]] == [e.to_dict() | {"file": None} for e in gz[:50]]
    assert [(e.pos, e.type_code, e.raw) for e in plain] == [(e.pos, e.type_code, e.raw) for e in gz]


def test_fde_with_in_use_flag_passes_its_checksum():
    """The FDE's CRC is computed with LOG_EVENT_BINLOG_IN_USE_F clear; the file still has it set."""
    events, error = walk(CORPUS / "MyFlash/haha.000008")
    assert error is None
    assert events[0].flags & 1 and events[0].checksum_alg == "CRC32"


def test_mysql_84_tagged_gtids_decode():
    events, error = walk(CORPUS / "rust_mysql_common/binlog_transaction_with_GTID_TAG.000001")
    assert error is None
    prev = next(ev for ev in events if ev.type == "PREVIOUS_GTIDS_LOG_EVENT")
    assert prev.gtid_format == 1
    assert prev.gtid_set == ("55778904-0299-11f1-b1b8-4ef0c4956feb:1-13,"
                             "55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:1-2")
    tagged = next(ev for ev in events if ev.type == "GTID_TAGGED_LOG_EVENT")
    assert tagged.gtid == "55778904-0299-11f1-b1b8-4ef0c4956feb:mytag:3"
    assert (tagged.last_committed, tagged.sequence_number) == (0, 1)
    assert tagged.immediate_commit_timestamp == 1770368687207196
    assert tagged.original_commit_timestamp == tagged.immediate_commit_timestamp
    assert tagged.immediate_server_version == 90600
    # transaction_length covers GTID, QUERY, TABLE_MAP, WRITE_ROWS and XID
    xid = next(ev for ev in events if ev.type == "XID_EVENT")
    assert tagged.transaction_length == xid.pos + xid.size - tagged.pos


def test_mysql_80_gtid_fields_decode():
    events, error = walk(CORPUS / "mysql-cdc-rs/binlog.000733")
    assert error is None
    gtids = [ev for ev in events if ev.type in ("GTID_LOG_EVENT", "ANONYMOUS_GTID_LOG_EVENT")]
    assert gtids
    for g in gtids:
        assert g.immediate_server_version == 80031
        assert abs(g.immediate_commit_timestamp // 1_000_000 - g.timestamp) <= 1
        # the transaction ends where the next GTID starts (or at the last XID/QUERY)
    for g, nxt in zip(gtids, gtids[1:]):
        assert g.transaction_length == nxt.pos - g.pos


def test_mariadb_events_decode():
    events, error = walk(CORPUS / "mariadb-poc/mariadb-repl-bin.000010")
    assert error is None
    assert [ev.type for ev in events[:4]] == ["FORMAT_DESCRIPTION_EVENT", "GTID_LIST_EVENT",
                                               "BINLOG_CHECKPOINT_EVENT", "GTID_EVENT"]
    assert events[1].gtid_list == "0-10-292196"
    assert events[2].binlog_file == "mariadb-repl-bin.000010"
    g = events[3]
    assert (g.gtid, g.flags2, g.flags_extra, g.thread_id) == ("0-10-292197", 0x29, 0x10, 5)
    q = events[4]
    assert q.query.startswith("ALTER USER 'repl'@'%'")
    codes = [sv["code"] for sv in q.status_vars]
    assert codes == ["Q_FLAGS2_CODE", "Q_SQL_MODE_CODE", "Q_CATALOG_NZ_CODE", "Q_CHARSET_CODE"]
    assert q.status_vars[3]["value"] == {"character_set_client": 2304, "collation_connection": 2304,
                                        "collation_server": 2304}
