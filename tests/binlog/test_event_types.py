"""event_types.EVENT_TYPES is the one table of what each event type is to the writer, the base64
script, the consumers that parse bodies and `events`: every type of the spec has its row, and the
modules that sort events read it."""
from __future__ import annotations

from pathlib import Path

import yaml

from binlog_spec import api
from binlog_spec.binlog import event_types as types, spec, writer
from binlog_spec.output import event_text
from binlog_spec.output.base64 import script

ROOT = Path(__file__).resolve().parents[2]
ET = spec.EventType


def test_every_event_type_of_the_spec_has_a_row():
    enum = yaml.safe_load((ROOT / "formats" / "binlog.ksy").read_text(encoding="utf-8"))["enums"]["event_type"]
    assert sorted(int(code) for code in types.EVENT_TYPES) == sorted(enum)
    assert set(types.EVENT_TYPES) == set(ET)


def test_each_row_holds_only_known_values():
    scripts = {types.COMMENT, types.BLOCK, types.COMMIT, types.MARIADB_GTID, types.STATEMENT_COMMENT, types.STATEMENT,
               types.FDE, types.MYSQL_GTID, types.PREVIOUS_GTIDS, types.INTVAR, types.RAND, types.USER_VAR,
               types.LOAD_DATA, types.XA_PREPARE, types.INCIDENT, types.PAYLOAD}
    for code, row in types.EVENT_TYPES.items():
        assert row.rewrite in (types.KEEP, types.FIRST_FILE, types.DROP), code
        assert row.script in scripts, code
        assert row.bodies in (None, types.ROWS, types.SQL), code
        assert (row.label is not None) == (row.summary == "rows"), code


def test_the_groups_agree_with_the_table():
    for code in types.ROWS_EVENTS:
        row = types.EVENT_TYPES[code]
        assert (row.script, row.bodies, row.summary) == (types.BLOCK, types.ROWS, "rows"), code
    for code in types.GTID_EVENTS | types.QUERY_EVENTS:
        assert types.EVENT_TYPES[code].bodies == types.ROWS, code
    assert types.CONTROL_EVENTS >= types.types_where(rewrite=types.DROP)


def test_the_writer_the_script_the_consumers_and_events_read_the_table():
    assert writer.DROPPED_EVENTS == {ET.rotate_event, ET.stop_event, ET.heartbeat_log_event,
                                     ET.heartbeat_log_event_v2, ET.start_encryption_event}
    assert writer.FILE_HEADER_EVENTS == {ET.previous_gtids_log_event, ET.gtid_list_event, ET.binlog_checkpoint_event}
    assert script._BLOCK_EVENTS == types.ROWS_EVENTS | {ET.table_map_event, ET.rows_query_log_event}
    assert api.ROWS_BODIES == {int(c) for c in types.types_where(bodies=types.ROWS)}
    assert api.SQL_BODIES - api.ROWS_BODIES == {ET.intvar_event, ET.rand_event, ET.user_var_event}
    assert set(event_text.SUMMARIES) == {c for c, row in types.EVENT_TYPES.items() if row.summary is not None}
    assert event_text.SUMMARIES[ET.write_rows_event_v1]({"table_id": 7, "rows_flags": 1}) \
        == "Write_rows_v1: table id 7 flags: STMT_END_F"
