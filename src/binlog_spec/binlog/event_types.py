"""Event types and flags: the groups of event type codes every layer above sorts events by, and the
flag bits they test. Codes come from the spec (`spec.EventType`, the .ksy enum)."""
from __future__ import annotations

from binlog_spec.binlog import spec

ET = spec.EventType

GTID_EVENTS = {ET.gtid_log_event, ET.anonymous_gtid_log_event, ET.gtid_tagged_log_event, ET.gtid_event}
ROWS_EVENTS = {ET.pre_ga_write_rows_event, ET.pre_ga_update_rows_event, ET.pre_ga_delete_rows_event,
               ET.write_rows_event_v1, ET.update_rows_event_v1, ET.delete_rows_event_v1,
               ET.write_rows_event, ET.update_rows_event, ET.delete_rows_event, ET.partial_update_rows_event,
               ET.write_rows_compressed_event_v1, ET.update_rows_compressed_event_v1,
               ET.delete_rows_compressed_event_v1, ET.write_rows_compressed_event,
               ET.update_rows_compressed_event, ET.delete_rows_compressed_event}
QUERY_EVENTS = {ET.query_event, ET.query_compressed_event, ET.execute_load_query_event}
#: Events that belong to whichever transaction is open (or start none).
CONTROL_EVENTS = {ET.format_description_event, ET.rotate_event, ET.stop_event, ET.previous_gtids_log_event,
                  ET.gtid_list_event, ET.binlog_checkpoint_event, ET.heartbeat_log_event,
                  ET.heartbeat_log_event_v2, ET.start_encryption_event}

INSERT, UPDATE, DELETE = "insert", "update", "delete"

#: Rows event code -> operation.
ROW_OPS: dict[int, str] = {
    ET.pre_ga_write_rows_event: INSERT, ET.write_rows_event_v1: INSERT, ET.write_rows_event: INSERT,
    ET.write_rows_compressed_event_v1: INSERT, ET.write_rows_compressed_event: INSERT,
    ET.pre_ga_update_rows_event: UPDATE, ET.update_rows_event_v1: UPDATE, ET.update_rows_event: UPDATE,
    ET.update_rows_compressed_event_v1: UPDATE, ET.update_rows_compressed_event: UPDATE,
    ET.partial_update_rows_event: UPDATE,
    ET.pre_ga_delete_rows_event: DELETE, ET.delete_rows_event_v1: DELETE, ET.delete_rows_event: DELETE,
    ET.delete_rows_compressed_event_v1: DELETE, ET.delete_rows_compressed_event: DELETE,
}

GTID_TYPES = (ET.gtid_log_event, ET.gtid_tagged_log_event, ET.gtid_event)
#: MariaDB's own event types start here (ANNOTATE_ROWS_EVENT); a MariaDB FDE array covers them.
MARIADB_FIRST_EVENT = ET.annotate_rows_event


def is_mariadb(num_post_header_lens: int) -> bool:
    """Whether a FORMAT_DESCRIPTION_EVENT with this many post-header lengths was written by MariaDB
    (its array covers MariaDB's own event types; told by the length, never the version string)."""
    return num_post_header_lens >= MARIADB_FIRST_EVENT

#: Rows event flags (Rows_event::enum_flag): the last rows event of a statement.
STMT_END_F = 0x1
#: MariaDB GTID_EVENT flags2 bit: the group is one statement with no BEGIN/COMMIT (DDL).
FL_STANDALONE = 0x01
#: MariaDB GTID_EVENT flags2 bits of an XA transaction's groups: its prepare (XA START ... XA END, then
#: XA_PREPARE_LOG_EVENT), and its XA COMMIT / XA ROLLBACK.
FL_PREPARED_XA, FL_COMPLETED_XA = 0x40, 0x80
