"""The operation and thread-id filters (--op, --thread-id): their values' parsers and the stage that keeps
the transactions of some client threads.

--op keeps the rows events of some operations (WRITE/UPDATE/DELETE rows events, every version: the one
classification, binlog.event_types.ROW_OPS) and the statement-based INSERT/REPLACE/UPDATE/DELETE of them;
stream.filters drops the others as the table filters drop a table's rows events.

--thread-id keeps whole transactions: those whose QUERY events carry one of the thread ids (the
QUERY_EVENT post-header's thread_id: libbinlogevents/include/statement_events.h, Query_event; MySQL's
and MariaDB's server write the session's thread id there). MySQL's BEGIN carries it, so do statements
(DDL, statement-based DML). A MariaDB row transaction (GTID_EVENT, ANNOTATE_ROWS, TABLE_MAP, rows, XID)
has no QUERY event and so no thread id: where one is read, the filter cannot answer, and the run stops
with a ThreadIdError (exit 2) naming the file and offset, rather than leave those transactions out
silently. The transaction is decided at its first QUERY event; its events before it (the GTID event) wait
for it.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import CONTROL_EVENTS, DELETE, INSERT, QUERY_EVENTS, ROWS_EVENTS, UPDATE
from binlog_spec.errors import OptionValueError, ThreadIdError
from binlog_spec.stream.transactions import Transactions

ET = spec.EventType

#: --op's values, as binlog2sql's --sql-type names them.
OPS = (INSERT, UPDATE, DELETE)

#: A statement-based DML statement's first word -> its operation.
STATEMENT_OPS = {"INSERT": INSERT, "REPLACE": INSERT, "UPDATE": UPDATE, "DELETE": DELETE}


def parse_ops(values) -> frozenset[str]:
    """insert, update, delete: comma separated or repeated, any case (OptionValueError otherwise)."""
    if not isinstance(values, (list, tuple)):
        values = (values,)
    ops = [o.strip().lower() for v in values for o in str(v).split(",") if o.strip()]
    bad = [o for o in ops if o not in OPS]
    if bad or not ops:
        raise OptionValueError(f"not an operation: {', '.join(bad) or repr('')} (insert, update, delete)")
    return frozenset(ops)


def parse_thread_ids(values) -> frozenset[int]:
    """Thread ids (0 to 4294967295, the post-header's u4): comma separated or repeated."""
    if not isinstance(values, (list, tuple)):
        values = (values,)
    ids = set()
    for text in (t.strip() for v in values for t in str(v).split(",") if t.strip()):
        if not text.isdigit() or int(text) > 0xFFFFFFFF:
            raise OptionValueError(f"not a thread id (0 to 4294967295): {text!r}")
        ids.add(int(text))
    if not ids:
        raise OptionValueError("no thread id given")
    return frozenset(ids)


def statement_op(ev: Event) -> str | None:
    """The operation of a statement-based INSERT/REPLACE/UPDATE/DELETE (its first word), None for others."""
    from binlog_spec.rows.statement_text import leading_tokens
    query = ev.fields.get("query")
    if not isinstance(query, str):
        return None
    tokens = leading_tokens(query)
    return STATEMENT_OPS.get(tokens[0].text.upper()) if tokens else None


def thread_id(ev: Event) -> int | None:
    """The thread id of a QUERY event that reads without error; None for any other event."""
    if ev.type_code not in QUERY_EVENTS or ev.error is not None:
        return None
    return ev.fields.get("thread_id")


#: What a row transaction holds before the QUERY event that decides it: none of these may come first.
_UNDECIDABLE = ROWS_EVENTS | {ET.table_map_event, ET.annotate_rows_event, ET.rows_query_log_event}


def by_thread(events: Iterable[Event], thread_ids: frozenset[int]) -> Iterator[Event]:
    """The transactions whose first QUERY event has one of `thread_ids`, and every control event. Raises
    ThreadIdError at a transaction whose rows come before any QUERY event (a MariaDB row transaction)."""
    tx = Transactions()
    held: list[Event] = []      # the open transaction's events before its first QUERY event
    keep: bool | None = None    # the open transaction's decision (None: not made yet)
    for ev in events:
        if ev.replayed:         # (what a compiled lane took, handed back between transactions)
            yield ev
            continue
        starts, ends = tx.step(ev)
        code = ev.type_code
        if code in CONTROL_EVENTS:
            if held:
                held.append(ev)
            else:
                yield ev
            continue
        if starts:
            yield from _controls(held)      # (an open transaction no QUERY event decided: left out)
            held, keep = [], None
        if keep is None:
            tid = thread_id(ev)
            if tid is not None:
                keep = tid in thread_ids
                yield from (held if keep else _controls(held))
                held = []
                if keep:
                    yield ev
            elif code in _UNDECIDABLE and ev.error is None:
                raise ThreadIdError(
                    f"--thread-id: {ev.file}: offset {ev.pos}: a row transaction with no QUERY event, so no "
                    "thread id (MariaDB logs a row transaction's GTID_EVENT, ANNOTATE_ROWS, TABLE_MAP, rows "
                    "events and XID with none): these binlogs cannot answer --thread-id",
                    file=str(ev.file), offset=ev.pos)
            else:
                held.append(ev)
        elif keep:
            yield ev
        if ends:
            yield from _controls(held)
            held, keep = [], None
    yield from _controls(held)


def _controls(held: list[Event]) -> list[Event]:
    return [h for h in held if h.type_code in CONTROL_EVENTS]
