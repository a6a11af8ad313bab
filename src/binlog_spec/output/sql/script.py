"""SQL scripts from events: executable or commented SQL, forward or rollback.

Forward, each transaction keeps its BEGIN/COMMIT framing and statements
(DDL) run in their schema. Rollback undoes the row changes last transaction
first, each transaction's statements in reverse; the statements are spooled
to a temporary file so memory stays bounded whatever the binlog size (output.rollback.spool, the spool
and reversal the binary rollback uses too). DDL
cannot be undone from a binlog: rollback hands each skipped statement to a
NotUndone (the CLI summarises them on stderr), so the script holds only the undo.
"""
from __future__ import annotations

from array import array
from datetime import tzinfo
from typing import Callable, Iterable, Iterator

from binlog_spec.rows.decoder import RowDecoder
from binlog_spec.binlog import spec
from binlog_spec.binlog import timezones
from binlog_spec.binlog.event import Event
from binlog_spec.rows.statement_text import (DML_STATEMENTS, TX_BEGIN, TX_END, TX_RELEASE, TX_ROLLBACK_TO, TX_SAVEPOINT,
                                             is_ddl, leading_tokens, savepoint_name)
from binlog_spec.binlog.event_types import FL_PREPARED_XA, QUERY_EVENTS, ROW_OPS
from binlog_spec.stream.transactions import Transactions, implies_begin, tx_control, xa_xid
from binlog_spec.errors import BinlogError, RowRefusedError
from binlog_spec.output.rollback.spool import BLOCK
from binlog_spec.output.rollback.summary import NO_ROW, UndoSpool
from binlog_spec.output.sql.statements import SqlOptions, leading_statements, statement
from binlog_spec.rows.statement_text import quote_identifier
from binlog_spec.options import ScriptOptions  # noqa: F401 - (its home: options)

ET = spec.EventType

#: The session the statements need: utf8mb4 literals, UTC timestamps, and no strict mode (the rows were
#: checked by the source server; zero dates and ENUM error values must go back as they were), with
#: NO_AUTO_VALUE_ON_ZERO so that a 0 in an AUTO_INCREMENT column stays 0, and backslash escapes on.
HEADER = ["SET NAMES utf8mb4;", "SET time_zone='+00:00';", "SET SESSION sql_mode='NO_AUTO_VALUE_ON_ZERO';"]
#: A rollback with the compiled lane hands on a record of more bytes than this as bytes (no str made of it).
BLOCK_TEXT = 1 << 16
#: Event header flag: the statement needs no default database (CREATE/DROP DATABASE).
LOG_EVENT_SUPPRESS_USE_F = 0x8



class NotUndone:
    """The statements a rollback could not undo (DDL, statement-based DML): a count per kind, and the
    first MAX_LISTED with where they are."""

    MAX_LISTED = 20

    def __init__(self) -> None:
        self.count = 0
        self.kinds: dict[str, int] = {}
        self.first: list[tuple[str, str]] = []

    def add(self, where: str, statement: str) -> None:
        tokens = leading_tokens(statement)
        word = tokens[0].text.upper() if tokens else ""
        kind = "statement-based DML" if word in DML_STATEMENTS else "DDL" if is_ddl(statement) else "other"
        self.count += 1
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if len(self.first) < self.MAX_LISTED:
            text = _one_line(statement)
            self.first.append((where, text if len(text) <= 200 else text[:197] + "..."))

    def merge(self, later: "NotUndone") -> None:
        """Add the statements of a later part of the input (--jobs: the next piece's)."""
        self.count += later.count
        for kind, n in later.kinds.items():
            self.kinds[kind] = self.kinds.get(kind, 0) + n
        self.first += later.first[:self.MAX_LISTED - len(self.first)]


def _where(ev: Event, gtid: str | None, tz: tzinfo = timezones.UTC) -> str:
    when = timezones.local_text(ev.timestamp, tz)
    return f"-- at {ev.file}:{ev.pos} {when} server id {ev.server_id}" + (f" gtid {gtid}" if gtid else "")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _refused(exc: BinlogError, refused: Callable[[BinlogError], None] | None) -> str:
    """The comment that stands for a row the script does not write (sqlgen.RowRefusedError); `refused`
    is told of it."""
    if refused is not None:
        refused(exc)
    return f"-- row not written: {_one_line(str(exc))}"


def forward(events: Iterable[Event], opts: ScriptOptions, schema_source=None, warn=None,
            refused: Callable[[BinlogError], None] | None = None) -> Iterator[str]:
    """The lines of a forward script. A row that cannot be written exactly is left out, a comment in its
    place, and `refused` is told (the rest goes on)."""
    yield from HEADER
    if opts.commented:
        yield f"-- times in {timezones.zone_name(opts.tz)}"
    decoder = RowDecoder(schema_source, warn)
    observe, rows_of, row_ops = decoder.observe, decoder._rows, ROW_OPS
    sql_opts, commented = opts.sql, opts.commented
    for ev in events:
        code = ev.type_code
        if ev.error is not None:
            yield f"-- skipped malformed {ev.type} at {ev.file}:{ev.pos}"
            continue
        if ev.replayed:     # written by the compiled lane (output/sql/lane.py): known, not written again
            observe(ev)
            continue
        op = row_ops.get(code)
        if op is None:       # what decoder.feed does, one generator less per event
            observe(ev)
            if code == ET.gtid_event and implies_begin(ev):
                # an XA transaction's prepare opens with its XA START, as mariadb-binlog writes it
                yield f"XA START {xa_xid(ev)};" if ev.fields["flags2"] & FL_PREPARED_XA else "BEGIN;"
            if code == ET.xid_event:
                yield "COMMIT;"
                continue
            if code == ET.xa_prepare_log_event:
                yield f"XA COMMIT {xa_xid(ev)} ONE PHASE;" if ev.fields["one_phase"] else f"XA PREPARE {xa_xid(ev)};"
                continue
            if code not in QUERY_EVENTS:
                continue
        else:
            changes = list(rows_of(ev, op))
            texts, done = leading_statements(changes, sql_opts)    # the compiled formatter's, if it runs
            if commented:
                for rc, text in zip(changes, texts):
                    yield _where(ev, rc.gtid, opts.tz)
                    yield f"-- {text}"
            else:
                yield from texts
            for rc in changes[done:] if done else changes:
                try:
                    text = statement(rc, sql_opts)
                except RowRefusedError as exc:
                    yield _refused(exc, refused)
                    continue
                if commented:
                    yield _where(ev, rc.gtid, opts.tz)
                    yield f"-- {text}"
                else:
                    yield text
            continue
        control = tx_control(ev)   # a QUERY_EVENT
        if control == TX_BEGIN:
            yield "BEGIN;" if ev.query.strip().upper() == "BEGIN" else ev.query.rstrip().rstrip(";") + ";"
        elif control == TX_END:
            yield "COMMIT;" if ev.query.strip().upper().startswith("COMMIT") else ev.query.rstrip().rstrip(";") + ";"
        else:
            db = sql_opts.rewrite_db.get(ev.fields.get("db", ""), ev.fields.get("db", ""))
            if commented:
                yield f"-- {_one_line(ev.query)}"
            else:
                if db and not ev.flags & LOG_EVENT_SUPPRESS_USE_F:
                    yield f"USE {quote_identifier(db)};"
                yield ev.query.rstrip().rstrip(";") + ";"


def _statement(ev: Event, spool: UndoSpool, not_undone: NotUndone | None) -> None:
    """A statement in a rollback's input: what the server undid itself is dropped from the undo (the
    rows since a SAVEPOINT that a ROLLBACK TO it undid, a transaction that ends with ROLLBACK, an XA
    transaction's prepare that XA ROLLBACK undid); other transaction control changes no row; any other
    statement cannot be undone."""
    control = tx_control(ev)
    if control in (TX_SAVEPOINT, TX_ROLLBACK_TO, TX_RELEASE):
        name = savepoint_name(ev.query)
        if name is None:
            return
        if control == TX_SAVEPOINT:
            spool.savepoint(name)
        elif control == TX_RELEASE:
            spool.release(name)
        elif not spool.rollback_to(name) and not_undone is not None:
            not_undone.add(f"{ev.file}:{ev.pos}", ev.query)      # its SAVEPOINT is not in the input
    elif control == TX_END:
        words = [w.upper() for w in ev.query.split()[:2]]
        if words[:1] == ["ROLLBACK"]:
            spool.rolled_back()
        elif words == ["XA", "ROLLBACK"] and xa_xid(ev) is not None:
            spool.xa_rolled_back(xa_xid(ev).lower())
    elif control is None and not_undone is not None:
        not_undone.add(f"{ev.file}:{ev.pos}", ev.query)


def rollback(events: Iterable[Event], opts: ScriptOptions, schema_source=None,
             not_undone: NotUndone | None = None, warn=None,
             refused: Callable[[BinlogError], None] | None = None, spool: UndoSpool | None = None,
             skip=None, summary: Callable | None = None) -> Iterator[str]:
    """The lines of a script undoing the row changes, last transaction first; the statements it cannot
    undo go to `not_undone`; a row whose undo cannot be written exactly is left out as in `forward`.
    `spool`: the one the compiled lane of the events' reader writes to (output/sql/lane.py), else a new one;
    with it, the lane's blocks of lines and any ASCII record over BLOCK_TEXT bytes come as UTF-8 bytes (lines joined
    by newlines, as a lane's text: cli.blocks.write_blocks writes them). `skip`: --skip-conflicts' conflict check
    (output.rollback.columns.ColumnConflictCheck, done when the input has been read): the undo of a row it
    found in conflict is left out. `summary`: told what the undo restores (an output.rollback.summary.UndoSummary)
    once the input is read, before the script's first line."""
    lane = spool is not None
    sql_opts = SqlOptions(**{**opts.sql.__dict__, "rollback": True})
    decoder = RowDecoder(schema_source, warn)
    observe, rows_of, row_ops = decoder.observe, decoder._rows, ROW_OPS
    tx = Transactions()
    spool = UndoSpool() if spool is None else spool
    label, rewrite, labelled = spool.label, sql_opts.rewrite_db, spool.rec_label.append   # (a label per record)
    labels: dict[tuple, int] = {}
    spool.keep_all = skip is not None      # (--skip-conflicts may leave out any transaction: where each is kept)
    identities = array("Q")     # skip: per spooled record, its row_identity (0s: no row's)
    if skip is not None:
        from binlog_spec.output.rollback.columns import IDENTITY, row_identity
    try:
        for ev in events:
            starts, _ends = tx.step(ev)
            if ev.replayed:     # taken by the compiled lane, its undo spooled by it: known, not undone again
                observe(ev)
                continue
            if starts:
                spool.begin_at(tx.gtid, ev.file, ev.pos, ev.timestamp)
            op = row_ops.get(ev.type_code) if ev.error is None else None
            if op is None:       # what decoder.feed does, one generator less per event
                observe(ev)
                if ev.error is None and ev.type_code in QUERY_EVENTS:
                    _statement(ev, spool, not_undone)
                elif ev.error is None and ev.type_code == ET.xa_prepare_log_event and not ev.fields["one_phase"]:
                    spool.mark_xa(xa_xid(ev).lower())
                continue
            changes = list(rows_of(ev, op))
            # (the compiled formatter's, if it runs; with `skip` the loop below writes them all, naming their rows)
            texts, done = leading_statements(changes, sql_opts) if skip is None else ([], 0)
            if changes:     # (a rows event's changes are of one table and one operation: one label)
                key = (changes[0].schema, changes[0].table, op)
                at_label = labels.get(key)
                if at_label is None:
                    at_label = labels[key] = label(rewrite.get(key[0], key[0]), key[1], op)
            for rc, text in zip(changes, texts):
                spool.add_text(f"-- {text}\t{_where(ev, rc.gtid, opts.tz)}" if opts.commented else text)
                labelled(at_label)
            for rc in changes[done:] if done else changes:
                try:
                    text = statement(rc, sql_opts)
                except RowRefusedError as exc:
                    spool.add_text(_refused(exc, refused))
                    labelled(NO_ROW)
                    continue
                spool.add_text(f"-- {text}\t{_where(ev, rc.gtid, opts.tz)}" if opts.commented else text)
                labelled(at_label)
                if skip is not None:        # (the record's row, as the check names its keys: IDENTITY digests)
                    at = (spool.count - 1) * IDENTITY
                    del identities[at:]
                    if at > len(identities):        # (records of no row: refused rows' comments)
                        identities.extend([0] * (at - len(identities)))
                    identities.extend(row_identity(rc))

        def left_out(i: int) -> bool:
            return skip.conflicts_with(identities[i * IDENTITY:(i + 1) * IDENTITY])
        if summary is not None:
            summary(spool.summary(left_out if skip is not None else None))
        yield from HEADER
        if opts.commented:
            yield f"-- times in {timezones.zone_name(opts.tz)}"
        kinds, starts, read = spool.kinds, spool.tx_starts, spool.read
        for k in spool.last_first():
            if kinds[starts[k]] == BLOCK:       # (the compiled lane's whole transactions, their framing in it)
                yield read(starts[k])
                continue
            yield "BEGIN;"
            for i, _ in spool.undo_order(k):
                if skip is not None and left_out(i):
                    continue
                data = read(i)
                big = lane and len(data) > BLOCK_TEXT and data.isascii()
                yield data if big else data.decode("utf-8", "surrogateescape")
            yield "COMMIT;"
    finally:
        spool.close()
