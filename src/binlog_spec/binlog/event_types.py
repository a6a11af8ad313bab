"""Event types and flags: the groups of event type codes every layer above sorts events by, and the
flag bits they test. Codes come from the spec (`spec.EventType`, the .ksy enum).

EVENT_TYPES is the one table of what each type is to the modules above: what the binlog writer does with
it, what the base64 script does with it, which consumers need its body parsed, and how `events`
summarises it, and the finishing touches its body's plain fields get. Adding an event type to the spec means adding its row here (a test checks every type of
the spec's enum has one)."""
from __future__ import annotations

from typing import Callable, NamedTuple

from binlog_spec.binlog import spec
from binlog_spec.binlog.fields import plain_fields

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
#: MariaDB GTID_EVENT flags2 bits (sql/log_event.h, Gtid_log_event; the spec's mariadb_gtid_flags2, whose
#: masks the compiled loops take from binlog/_cspec.pxd): the group is one statement with no BEGIN/COMMIT
#: (DDL); it was group-committed (commit_id follows); it is transactional; it may be applied in parallel;
#: it waited for a row lock; it holds DDL.
FL_STANDALONE, FL_GROUP_COMMIT_ID, FL_TRANSACTIONAL = 0x01, 0x02, 0x04
FL_ALLOW_PARALLEL, FL_WAITED, FL_DDL = 0x08, 0x10, 0x20
#: MariaDB GTID_EVENT flags2 bits of an XA transaction's groups: its prepare (XA START ... XA END, then
#: XA_PREPARE_LOG_EVENT), and its XA COMMIT / XA ROLLBACK.
FL_PREPARED_XA, FL_COMPLETED_XA = 0x40, 0x80


# -- the table of event types ----------------------------------------------------------------------------

#: What the binlog writer (writer.py, output/rewriter.py) does with an event: keeps it; keeps it from the
#: first file only (it describes a file, not a transaction); drops it (positions and files of the source).
KEEP, FIRST_FILE, DROP = "keep", "first_file", "drop"

#: What the base64 script (output/base64/script.py) writes for an event after its ``# at`` comment:
#: nothing more (COMMENT); or it goes into a BINLOG block ([ROWS_QUERY] TABLE_MAP... rows...); or COMMIT;
#: the MariaDB / MySQL GTID lines; the ``#Q>`` statement; the statement; the FDE's BINLOG line; notes that
#: the file has MySQL GTIDs; SET of INSERT_ID / LAST_INSERT_ID, of the RAND seeds, of a user variable; a
#: LOAD DATA that cannot be replayed; XA PREPARE / XA COMMIT ... ONE PHASE; a warning of lost events; a
#: warning of an unexpanded payload.
(COMMENT, BLOCK, COMMIT, MARIADB_GTID, STATEMENT_COMMENT, STATEMENT, FDE, MYSQL_GTID, PREVIOUS_GTIDS, INTVAR, RAND,
 USER_VAR, LOAD_DATA, XA_PREPARE, INCIDENT, PAYLOAD) = (
    "comment", "block", "commit", "mariadb_gtid", "statement_comment", "statement", "fde", "mysql_gtid",
    "previous_gtids", "intvar", "rand", "user_var", "load_data", "xa_prepare", "incident", "payload")

#: Which consumers need an event's body parsed as it is read (api's *_BODIES): rows, sql, analyze and the
#: filters (ROWS); sql only (SQL); none of them (None: events, base64 and binlog parse every body).
ROWS, SQL = "rows", "sql"


class EventClass(NamedTuple):
    """One row of EVENT_TYPES."""
    #: The binlog writer: KEEP, FIRST_FILE or DROP.
    rewrite: str = KEEP
    #: The base64 script: COMMENT, BLOCK, COMMIT ...
    script: str = COMMENT
    #: The consumers that need its body: ROWS, SQL or None.
    bodies: str | None = None
    #: Its `events` summary (output/event_text.py's name for it; None: its type and size).
    summary: str | None = None
    #: A rows event's label in its summary (Write_rows_v1 ...).
    label: str | None = None
    #: The finishing touches on its body's plain fields (statement text, UUIDs, GTID strings), applied by
    #: binlog/fields/bodies.py `body_fields` after spec.plain_body; None: the plain fields as they are.
    refine: Callable[[dict, spec.EventHeader], None] | None = None


def _rows(label: str) -> EventClass:
    return EventClass(script=BLOCK, bodies=ROWS, summary="rows", label=label)


#: Event type -> its class. Every type of the spec's event_type enum has a row.
EVENT_TYPES: dict[int, EventClass] = {
    ET.unknown_event: EventClass(),
    ET.start_event_v3: EventClass(),
    ET.query_event: EventClass(script=STATEMENT, bodies=ROWS, summary="query", refine=plain_fields.refine_query),
    ET.stop_event: EventClass(rewrite=DROP, summary="stop"),
    ET.rotate_event: EventClass(rewrite=DROP, summary="rotate"),
    ET.intvar_event: EventClass(script=INTVAR, bodies=SQL, summary="intvar"),
    ET.load_event: EventClass(),
    ET.slave_event: EventClass(),
    ET.create_file_event: EventClass(),
    ET.append_block_event: EventClass(summary="append_block"),
    ET.exec_load_event: EventClass(),
    ET.delete_file_event: EventClass(summary="delete_file"),
    ET.new_load_event: EventClass(),
    ET.rand_event: EventClass(script=RAND, bodies=SQL, summary="rand"),
    ET.user_var_event: EventClass(script=USER_VAR, bodies=SQL, summary="user_var"),
    ET.format_description_event: EventClass(script=FDE, summary="fde"),
    ET.xid_event: EventClass(script=COMMIT, bodies=ROWS, summary="xid"),
    ET.begin_load_query_event: EventClass(summary="begin_load_query"),
    ET.execute_load_query_event: EventClass(script=LOAD_DATA, bodies=ROWS, summary="query",
                                           refine=plain_fields.refine_query),
    ET.table_map_event: EventClass(script=BLOCK, bodies=ROWS, summary="table_map", refine=spec.refine_table_map),
    ET.pre_ga_write_rows_event: _rows("Write_rows_v0"),
    ET.pre_ga_update_rows_event: _rows("Update_rows_v0"),
    ET.pre_ga_delete_rows_event: _rows("Delete_rows_v0"),
    ET.write_rows_event_v1: _rows("Write_rows_v1"),
    ET.update_rows_event_v1: _rows("Update_rows_v1"),
    ET.delete_rows_event_v1: _rows("Delete_rows_v1"),
    ET.incident_event: EventClass(script=INCIDENT, summary="incident"),
    ET.heartbeat_log_event: EventClass(rewrite=DROP, summary="heartbeat"),
    ET.ignorable_log_event: EventClass(summary="ignorable"),
    ET.rows_query_log_event: EventClass(script=BLOCK, summary="rows_query", refine=plain_fields.refine_query),
    ET.write_rows_event: _rows("Write_rows"),
    ET.update_rows_event: _rows("Update_rows"),
    ET.delete_rows_event: _rows("Delete_rows"),
    ET.gtid_log_event: EventClass(script=MYSQL_GTID, bodies=ROWS, summary="gtid", refine=spec.refine_gtid),
    ET.anonymous_gtid_log_event: EventClass(script=MYSQL_GTID, bodies=ROWS, summary="gtid", refine=spec.refine_gtid),
    ET.previous_gtids_log_event: EventClass(rewrite=FIRST_FILE, script=PREVIOUS_GTIDS, summary="previous_gtids",
                                           refine=plain_fields.refine_previous_gtids),
    ET.transaction_context_event: EventClass(),
    ET.view_change_event: EventClass(),
    ET.xa_prepare_log_event: EventClass(script=XA_PREPARE, summary="xa_prepare"),
    ET.partial_update_rows_event: _rows("Update_rows_partial"),
    ET.transaction_payload_event: EventClass(script=PAYLOAD, summary="transaction_payload",
                                            refine=plain_fields.refine_payload),
    ET.heartbeat_log_event_v2: EventClass(rewrite=DROP),
    ET.gtid_tagged_log_event: EventClass(script=MYSQL_GTID, bodies=ROWS, summary="gtid_tagged",
                                        refine=plain_fields.refine_tagged_gtid),
    ET.large_transaction_header_event: EventClass(),
    ET.annotate_rows_event: EventClass(script=STATEMENT_COMMENT, summary="annotate_rows", refine=plain_fields.refine_query),
    ET.binlog_checkpoint_event: EventClass(rewrite=FIRST_FILE, summary="binlog_checkpoint"),
    ET.gtid_event: EventClass(script=MARIADB_GTID, bodies=ROWS, summary="mariadb_gtid",
                              refine=plain_fields.refine_mariadb_gtid),
    ET.gtid_list_event: EventClass(rewrite=FIRST_FILE, summary="gtid_list", refine=plain_fields.refine_gtid_list),
    ET.start_encryption_event: EventClass(rewrite=DROP, summary="start_encryption"),
    ET.query_compressed_event: EventClass(script=STATEMENT, bodies=ROWS, summary="query"),
    ET.write_rows_compressed_event_v1: _rows("Write_rows_compressed_v1"),
    ET.update_rows_compressed_event_v1: _rows("Update_rows_compressed_v1"),
    ET.delete_rows_compressed_event_v1: _rows("Delete_rows_compressed_v1"),
    ET.write_rows_compressed_event: _rows("Write_rows_compressed"),
    ET.update_rows_compressed_event: _rows("Update_rows_compressed"),
    ET.delete_rows_compressed_event: _rows("Delete_rows_compressed"),
}


def types_where(**wanted: object) -> frozenset[int]:
    """The event types (spec.EventType members) whose EVENT_TYPES row has these values,
    e.g. types_where(rewrite=DROP)."""
    return frozenset(code for code, row in EVENT_TYPES.items()
                     if all(getattr(row, name) == value for name, value in wanted.items()))
