"""The project's own MariaDB binlogs read like the server's own mariadb-binlog reads them.

fixtures/*/mariadb-binlog.txt is `mariadb-binlog -vv` output saved by fixtures/generate.py.
"""
from __future__ import annotations

import re

import pytest

import binlog_spec

from conftest import FIXTURES

SETS = ["demo", "compressed", "types-full", "types-minimal", "types-noblob", "types-compressed", "charsets-nolog"]


def reference(name: str) -> dict:
    # raw bytes of latin1, gbk and binary columns: read byte for byte
    text = (FIXTURES / name / "mariadb-binlog.txt").read_text(encoding="latin-1")
    heads = re.findall(r"^#\d{6} [ \d]\d:\d\d:\d\d server id (\d+)  end_log_pos (\d+) CRC32 0x([0-9a-f]{8})\s+(.*)$",
                       text, re.M)
    return {
        "positions": [int(p) for p in re.findall(r"^# at (\d+)$", text, re.M)],
        "end_log_pos": [int(h[1]) for h in heads],
        "crc": [int(h[2], 16) for h in heads],
        "gtids": re.findall(r"\tGTID (\d+-\d+-\d+)", text),
        "table_maps": re.findall(r"\tTable_map: (`.*`\.`.*`) mapped to number (\d+)", text),
    }


def events(name: str) -> list[binlog_spec.Event]:
    return list(binlog_spec.read_events(sorted((FIXTURES / name).glob("mariadb-bin.0*"))))


@pytest.mark.parametrize("name", SETS)
def test_positions_sizes_and_checksums_match_mariadb_binlog(name):
    ref, evs = reference(name), events(name)
    assert [e.pos for e in evs] == ref["positions"]
    assert [e.end_log_pos for e in evs] == ref["end_log_pos"]
    assert [e.checksum for e in evs] == ref["crc"]
    assert all(e.error is None for e in evs)


@pytest.mark.parametrize("name", SETS)
def test_gtids_and_table_maps_match_mariadb_binlog(name):
    ref, evs = reference(name), events(name)
    assert [e.gtid for e in evs if e.type == "GTID_EVENT"] == ref["gtids"]
    ours = [(f"`{e.schema}`.`{e.table}`", str(e.table_id)) for e in evs if e.type == "TABLE_MAP_EVENT"]
    assert ours == ref["table_maps"]


def test_compressed_queries_and_rows_are_decompressed():
    evs = events("compressed")
    workload = (FIXTURES / "compressed" / "workload.sql").read_text(encoding="utf-8")
    compressed_queries = [e for e in evs if e.type == "QUERY_COMPRESSED_EVENT"]
    assert compressed_queries, "the fixture has compressed queries"
    for e in compressed_queries:
        assert e.compressed is True
        assert e.query.rstrip(";") in workload  # the statement text as it was run
    rows = [e for e in evs if e.type.endswith("_ROWS_COMPRESSED_EVENT_V1")]
    assert {e.type for e in rows} == {"WRITE_ROWS_COMPRESSED_EVENT_V1", "UPDATE_ROWS_COMPRESSED_EVENT_V1",
                                      "DELETE_ROWS_COMPRESSED_EVENT_V1"}
    first = rows[0]
    assert b"compressible text " * 10 in first.rows  # the uncompressed image
    assert len(first.rows) > first.size


def test_demo_fixture_has_the_workload_shape():
    evs = events("demo")
    types = [e.type for e in evs]
    assert types.count("WRITE_ROWS_EVENT_V1") == 2 and types.count("UPDATE_ROWS_EVENT_V1") == 3
    assert types.count("DELETE_ROWS_EVENT_V1") == 1 and types.count("XID_EVENT") == 4
    ddl = [e.query for e in evs if e.type == "QUERY_EVENT"]
    assert any(q.startswith("CREATE TABLE customers") for q in ddl)
    assert any(q.startswith("ALTER TABLE customers ADD COLUMN vip") for q in ddl)
    tm = next(e for e in evs if e.type == "TABLE_MAP_EVENT" and e.table == "customers")
    names = next(o["value"] for o in tm.optional_metadata if o["field_type"] == "COLUMN_NAME")
    assert names == ["id", "name", "email", "balance", "created"]
