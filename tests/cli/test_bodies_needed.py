"""Each command reads only the bodies it declares (api.*_BODIES, ReadOptions.parse_bodies): no event of
another type has its body parsed late during a run, so every body a command reads is parsed, and its
malformed body reported, as the event is read."""
from __future__ import annotations

import io

import pytest

from binlog_spec import api, cli
from binlog_spec.binlog.event import Event

from conftest import CORPUS, FIXTURES

FILES = sorted(p for p in FIXTURES.glob("*/*-bin.0*") if p.is_file()) + [
    CORPUS / "MyFlash" / "haha.000005", CORPUS / "canal" / "mysql-bin.000003",
    CORPUS / "mbcj_osheroff" / "mysql-bin.checksum-crc32"]
COMMANDS = [
    ["rows", "--format", "jsonl"],
    ["rows"],
    ["sql", "--sql2"],
    ["sql", "--sql"],
    ["sql", "--sql2", "--rollback"],
    ["analyze", "--format", "json"],
    ["rows", "--format", "jsonl", "--database", "test"],
    ["sql", "--sql2", "--exclude-table", "test.t1"],
    ["analyze", "--format", "json", "--exclude-gtids", "0-1-1"],
]


@pytest.fixture
def late_parses(monkeypatch):
    seen: list[tuple[str, int, str]] = []
    parsed = Event._parsed

    def recording(ev):
        seen.append((ev.file, ev.pos, ev.type))
        parsed(ev)
    monkeypatch.setattr(Event, "_parsed", recording)
    return seen


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_a_command_parses_no_body_it_did_not_declare(argv, late_parses):
    for path in FILES:
        cli.main([*argv, str(path)], io.StringIO(), io.StringIO())
    assert late_parses == []


def test_the_declared_bodies_are_the_rows_ones_and_more_for_sql():
    from binlog_spec.binlog import spec
    ET = spec.EventType
    assert {ET.table_map_event, ET.write_rows_event, ET.gtid_event, ET.xid_event, ET.query_event} <= api.ROWS_BODIES
    assert api.SQL_BODIES - api.ROWS_BODIES == {ET.intvar_event, ET.rand_event, ET.user_var_event}
    assert ET.annotate_rows_event not in api.ROWS_BODIES
