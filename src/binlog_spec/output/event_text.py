"""One-line, mysqlbinlog-style summaries of events (the text after ``#`` in its output)."""
from __future__ import annotations

from datetime import tzinfo
from typing import Callable

from binlog_spec.binlog import spec

from binlog_spec.binlog.fields import plain_fields
from binlog_spec.binlog import timezones
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import EVENT_TYPES
from binlog_spec.rows.statement_text import quote_identifier

ET = spec.EventType
MAX_QUERY = 200

ROWS_FLAGS = {0x1: "STMT_END_F", 0x2: "NO_FOREIGN_KEY_CHECKS_F", 0x4: "RELAXED_UNIQUE_CHECKS_F",
              0x8: "COMPLETE_ROWS_F"}


def _clip(text: str, limit: int = MAX_QUERY) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def fde_summary(f: dict, timestamp: int, tz: tzinfo = timezones.UTC) -> str:
    """The summary of a FORMAT_DESCRIPTION_EVENT, as the tools print it (Start_log_event_v3::print of
    MariaDB's sql/log_event_client.cc, Format_description_event::print of MySQL's sql/log_event.cc):
    "created" and the event's own time (`timestamp`) in the zone of the other times (`tz`, by
    Log_event::print_timestamp's localtime), " at startup" when the body's create timestamp is set."""
    startup = " at startup" if f.get("create_timestamp") else ""
    alg = f.get("checksum_alg")
    return (f"Start: binlog v {f['binlog_version']}, server v {_clip(str(f['server_version']))} "
            f"created {timezones.tool_text(timestamp, tz)}{startup}"
            + (f", checksum {alg}" if alg is not None else ""))


def _query(f: dict) -> str:
    db = f" db={quote_identifier(f['db'])}" if f.get("db") else ""
    return (f"Query thread_id={f['thread_id']} exec_time={f['exec_time']} error_code={f['error_code']}{db}: "
            f"{_clip(f['query'])}")


def _rows(f: dict) -> str:
    return f"table id {f['table_id']} flags: {_flag_names(f['rows_flags'])}"


def _flag_names(flags: int) -> str:
    text = _FLAG_NAMES.get(flags)
    if text is None:
        text = _FLAG_NAMES[flags] = " ".join(name for bit, name in ROWS_FLAGS.items() if flags & bit) or "0"
    return text


_FLAG_NAMES: dict[int, str] = {}


def _rows_summary(label: str) -> Callable[[dict], str]:
    fn = lambda f: f"{label}: {_rows(f)}"  # noqa: E731
    fn.label = label    # summarize writes it from Event.rows_head when it can, without `fields`
    return fn


def _user_var(f: dict) -> str:
    if f.get("is_null"):
        return f"User_var: SET @{quote_identifier(f['name'])}:=NULL"
    return f"User_var: SET @{quote_identifier(f['name'])} ({f.get('value_type')}, {len(f.get('value', b''))} bytes)"


def _gtid(f: dict) -> str:
    extra = ""
    if "last_committed" in f:
        extra = f" last_committed={f['last_committed']} sequence_number={f['sequence_number']}"
    return f"GTID{extra} SET @@SESSION.GTID_NEXT= '{f['gtid']}'"


def _mariadb_gtid(f: dict) -> str:
    kind = "" if f["flags2"] & 1 else " trans"
    return f"GTID {f['gtid']}{kind}"


#: A summary (event_types.EVENT_TYPES' `summary`) -> the text of an event's fields.
_SUMMARY_OF: dict[str, Callable[[dict], str]] = {
    "fde": lambda f: fde_summary(f, 0),     # (summarize gives it the event's time)
    "query": _query,
    "stop": lambda f: "Stop",
    "rotate": lambda f: f"Rotate to {f['next_file']}  pos: {f.get('position', 4)}",
    "intvar": lambda f: f"Intvar: SET {str(f['var_type']).replace('_EVENT', '')}={f['value']}",
    "rand": lambda f: f"Rand: SET @@RAND_SEED1={f['seed1']}, @@RAND_SEED2={f['seed2']}",
    "user_var": _user_var,
    "xid": lambda f: xid_summary(f["xid"]),
    "begin_load_query": lambda f: f"Begin_load_query: file_id={f['file_id']} block_len={len(f['block'])}",
    "append_block": lambda f: f"Append_block: file_id={f['file_id']} block_len={len(f['block'])}",
    "delete_file": lambda f: f"Delete_file: file_id={f['file_id']}",
    "table_map": lambda f: (f"Table_map: {quote_identifier(f['schema'])}.{quote_identifier(f['table'])} "
                            f"mapped to number {f['table_id']}"),
    "incident": lambda f: f"Incident: {f['incident']} {f.get('message', '')}".rstrip(),
    "heartbeat": lambda f: f"Heartbeat: {f['log_ident']}",
    "ignorable": lambda f: f"Ignorable: {len(f['payload'])} bytes",
    "rows_query": lambda f: f"Rows_query: {_clip(f['query'])}",
    "gtid": _gtid,
    "gtid_tagged": lambda f: _gtid(f) if "gtid" in f else "GTID (tagged)",
    "previous_gtids": lambda f: f"Previous-GTIDs: {f['gtid_set'] or '(empty)'}",
    "xa_prepare": lambda f: f"XA PREPARE one_phase={f['one_phase']} format_id={f['format_id']}",
    "transaction_payload": lambda f: ("Transaction_Payload: "
                                      + " ".join(f"{k}={f[k]}" for k in ("compression_type", "payload_size",
                                                                        "uncompressed_size") if k in f)),
    "annotate_rows": lambda f: f"Annotate_rows: {_clip(f['query'])}",
    "binlog_checkpoint": lambda f: f"Binlog checkpoint {f['binlog_file']}",
    "mariadb_gtid": _mariadb_gtid,
    "gtid_list": lambda f: f"Gtid list [{f['gtid_list']}]",
    "start_encryption": lambda f: f"Start_encryption: scheme {f['crypto_scheme']} key {f['key_version']}",
}

#: Event code -> summary of its fields (the summary event_types.EVENT_TYPES names; a rows event's from its
#: label).
SUMMARIES: dict[int, Callable[[dict], str]] = {
    code: _rows_summary(row.label) if row.summary == "rows" else _SUMMARY_OF[row.summary]
    for code, row in EVENT_TYPES.items() if row.summary is not None}

#: Rows event code -> its label, for the summary written from Event.rows_head.
_ROWS_LABELS: dict[int, str] = {code: fn.label for code, fn in SUMMARIES.items() if hasattr(fn, "label")}


def xid_summary(xid: int) -> str:
    """The summary of an XID_EVENT (SUMMARIES'), from its xid (one line)."""
    return f"Xid = {xid}"


def mariadb_gtid_summary(domain_id: int, server_id: int, seq_no: int, flags2: int) -> str:
    """The summary of a MariaDB GTID_EVENT (SUMMARIES'), from its values (one line)."""
    return _mariadb_gtid({"flags2": flags2, "gtid": f"{domain_id}-{server_id}-{seq_no}"})


def _xid_head(event: Event) -> str:
    return xid_summary(event.body_values(_XID)[0])


def _mariadb_gtid_head(event: Event) -> str:
    domain_id, seq_no, flags2 = event.body_values(_MARIADB_GTID)
    return mariadb_gtid_summary(domain_id, event.header.server_id, seq_no, flags2)


def annotate_summary(query: bytes | str) -> str:
    """The summary of an ANNOTATE_ROWS_EVENT (SUMMARIES'), from its query (its bytes, or the text)."""
    return f"Annotate_rows: {_clip(plain_fields.text(query) if type(query) is bytes else query)}"


def _annotate_head(event: Event) -> str:
    return annotate_summary(event.body_values(_QUERY)[0])


def rows_summary(code: int, table_id: int, rows_flags: int) -> str:
    """The summary of a rows event (SUMMARIES') of type `code`, from its post-header's values."""
    return f"{_ROWS_LABELS[code]}: table id {table_id} flags: {_flag_names(rows_flags)}"


_XID, _MARIADB_GTID, _QUERY = ("xid",), ("domain_id", "seq_no", "flags2"), ("query",)
#: Event code -> its summary from Event.body_values (without building `fields`): the one of SUMMARIES.
_HEADS: dict[int, Callable[[Event], str]] = {
    ET.xid_event: _xid_head,
    ET.gtid_event: _mariadb_gtid_head,
    ET.annotate_rows_event: _annotate_head,
}


def summarize(event: Event, tz: tzinfo = timezones.UTC) -> str:
    """A one-line description of the event's body (its times in `tz`)."""
    if event.error is not None:
        return f"MALFORMED: {event.error.message}"
    code = event.type_code
    if code == ET.format_description_event:
        try:
            return fde_summary(event.fields, event.timestamp, tz)
        except KeyError as missing:
            return f"{event.type}: (no field {missing})"
    head = _HEADS.get(code)
    if head is not None:
        try:
            return head(event)
        except KeyError:
            pass            # what SUMMARIES says of it
        if event.error is not None:     # (a body parsed only now)
            return f"MALFORMED: {event.error.message}"
    fn = SUMMARIES.get(code)
    if fn is None:
        return f"{event.type}: {event.size} bytes"
    label = _ROWS_LABELS.get(event.type_code)
    if label is not None:
        head = event.rows_head()
        if head is not None:
            return rows_summary(code, *head)
    try:
        return fn(event.fields)
    except KeyError as missing:
        return f"{event.type}: (no field {missing})"


def event_line(event: Event, tz: tzinfo = timezones.UTC) -> str:
    """The `events` text line: position, time (in `tz`), server id, type, size, end_log_pos and summary."""
    when = timezones.local_text(event.timestamp, tz)
    pos = f"{event.pos}+{event.payload_offset}" if event.payload_pos is not None else str(event.pos)
    return (f"#at {pos:<12} {when}  server id {event.server_id:<10} {event.type:<28} size {event.size:<7} "
            f"end_log_pos {event.end_log_pos:<10} {summarize(event, tz)}")
