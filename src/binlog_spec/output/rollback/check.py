"""A rollback's conflict check: which rows it undoes were changed again after it, in the files given.

A rollback writes the before images of the rows it undoes. When a transaction it does not undo
changed one of those rows later, the undo would silently destroy that later change. `ConflictCheck`
watches every event of the files, in order, while the filters choose the rollback's window
(`watch`): the rows of the events the filters keep are undone; every other row change, TRUNCATE,
DDL and statement-based DML that comes after a change the rollback undoes is *later*. The files
are read to their end, past the stop filters.

The rows the undo writes are found by their key: the table's primary key, else a NOT NULL unique key
(`TableDef.row_key`: the TABLE_MAP's metadata, the DDL the schema tracker replays, --schema); a table
with neither by its whole image. An undone INSERT writes its after image's key (the undo deletes it),
a DELETE its before image's (the undo puts it back), an UPDATE both. A later row change conflicts
when its before or after image's key is one of them (one conflict per row: the first later change).
A later TRUNCATE, DDL or statement-based DML on a table the rollback writes rows of cannot be checked
row by row: it is a conflict of its own kind. The keys are output.rollback.keys' (text compared without
trailing spaces and case: a conflict more, never one less; integer keys read straight from the images).

Memory stays bounded as the rollback spool's does: every undone key goes to a `Spool` on disk (its
exact value and its transaction); memory holds a 64-bit entry per key (34 bits of its hash, 30 of its
record number) in sorted runs merged as they grow, a small dict of the latest keys, and a bitmap that
answers most lookups of keys never undone (output.rollback.key_index). A hash that matches is confirmed
against the spooled key.
Later events on tables the rollback writes no rows of are passed over by their table id, their rows
never decoded. The conflicts themselves go to a spool too; output.rollback.report renders them. The
compiled core takes part (output.rollback.compiled_keys, a component of the check).
"""
from __future__ import annotations

import pickle
import struct
from collections import deque
from typing import Callable, Iterable, Iterator

from binlog_spec import compiled
from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import DELETE, INSERT, QUERY_EVENTS, ROW_OPS, UPDATE
from binlog_spec.errors import BinlogError
from binlog_spec.output.rollback.compiled_keys import CHANGE_NAMES, CompiledKeys
from binlog_spec.output.rollback.conflict import Conflict, Tx
from binlog_spec.output.rollback.key_index import MAX_RECORDS, KeyIndex
from binlog_spec.output.rollback.keys import KeyReader, exact, row_keys
from binlog_spec.output.rollback.savepoints import SavepointHold
from binlog_spec.output.rollback.statements import statement_kind, statement_targets as _statement_targets
from binlog_spec.output.rollback.spool import Spool
from binlog_spec.rows.decoder import RowDecoder
from binlog_spec.rows.statement_text import quote_identifier
from binlog_spec.stream.transactions import Transactions, is_begin, is_commit

ET = spec.EventType

#: Undone transactions held once read back for a report (the conflicts of one share it).
TX_CACHE = 1024
#: Bytes read back from the spool of keys at a time (a key is confirmed by reading it alone).
KEY_WINDOW = 4096
#: The events the check reads (the others only mark where transactions are).
_READ = frozenset(int(c) for c in (*ROW_OPS, *QUERY_EVENTS, ET.table_map_event, ET.format_description_event))
_TABLE_MAP = int(ET.table_map_event)
#: The compiled part's module (output/rollback/_ccheck.pyx, run by compiled_keys.CompiledKeys), or None.
_ccheck = compiled.load("binlog_spec.output.rollback._ccheck")
#: The events that change nothing of the transaction they are in (Transactions.step: in a BEGIN).
_INSIDE = frozenset(int(c) for c in (*ROW_OPS, ET.table_map_event))
#: A spooled undone key: its transaction's number, the change (I, U, D), then its exact value.
_KEY = struct.Struct("<Ic")
_OPS = {INSERT: "INSERT", UPDATE: "UPDATE", DELETE: "DELETE"}
_OP_CODES = {INSERT: b"I", UPDATE: b"U", DELETE: b"D"}
_OP_NAMES = {b"I": "INSERT", b"U": "UPDATE", b"D": "DELETE"}


def _shown(value) -> str:
    """A key value as SQL text (a long one cut: the report names the row, it does not restore it)."""
    if type(value) is int:
        return str(value)       # (sql_text.literal's text of an integer with no column type)
    from binlog_spec.output.sql.text import literal
    try:
        text = literal(value)
    except Exception:  # noqa: BLE001 - a value only the column's type can write (JSON): its Python form
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class ConflictCheck:
    """Watches the events of a rollback's files (`watch`); then `count` conflicts, `conflicts()`.

    `schema_source`: a SchemaTracker replaying the DDL of the files for the keys, when the events
    are not completed by one upstream (rows.decoder.observe_schema gives TABLE_MAPs their table_def)."""

    def __init__(self, schema_source=None) -> None:
        self.decoder = RowDecoder(schema_source)
        self.tx = Transactions()
        self.current: Tx | None = None          # the transaction of the last event read
        self._numbered: tuple[Tx, int] | None = None    # the last undone transaction and its number
        self.txs = Spool()                      # the undone transactions (pickled Tx)
        self.keys = Spool(window=KEY_WINDOW)    # the undone keys (_KEY + exact value), read back one by one
        self.index = KeyIndex()
        self.reported = bytearray()             # per undone key: a conflict was reported for it
        #: (schema, table) -> (the undone key record that first touched it, its columns for the report)
        self.touched: dict[tuple[str, str], int] = {}
        self.found = Spool()
        self.count = 0
        #: The input has been read to its end (`count` is final).
        self.done = False
        self._keycols: dict[int, tuple] = {}
        self._tx_cache: dict[int, Tx] = {}      # undone transactions read back (at most TX_CACHE)
        self.quick = KeyReader()                # the keys of rows events read straight from their images
        self._tracker = Transactions()          # the transactions of the events watched
        self._held = SavepointHold()            # the row changes after a savepoint (rollback/savepoints.py)
        #: The compiled part: the KeySet of the undone integer keys and the loop past the window.
        self.compiled = CompiledKeys(_ccheck if self.quick.crows is not None else None)

    # -- the stream ------------------------------------------------------------------------------
    def watch(self, events: Iterable[Event], select: Callable[[Iterable[Event]], Iterable[Event]],
              kept_seconds: tuple[int | None, int | None] | None = None) -> Iterator[Event]:
        """The events `select` keeps of `events` (the rollback's window), every event of `events`
        seen by the check in order: what `select` yields is undone, the rest is not. After `select`
        ends, `events` is read to its end. `select` must keep events in their order (the filters
        do), and decide a transaction's events by the time it asks for the event after its end
        (then what it has not kept of it is out: the check holds one transaction at most).

        `kept_seconds`: `select` keeps a transaction exactly when its first event's timestamp is in
        [lo, hi) (FilterOptions.kept_seconds: the time bounds are its only filters), and keeps nothing
        outside transactions but what it always keeps. Then the compiled loop takes, while `select`
        runs, whole transactions outside those bounds (`select` never sees them, nor anyone else: no
        one prints an excluded transaction), armed only when the check, `select` and this stream are
        all between transactions (nothing pending, nothing held)."""
        pending: deque = deque()            # [event, kept: None (undecided) / True / False, its Tx]
        where: dict[int, list] = {}         # id(event) -> its pending entry
        closed = [True]                     # the last event read closed its transaction (or had none)
        tracker = self._tracker
        window = self.compiled.loop if kept_seconds is not None else None
        if window is not None:
            window.window(*kept_seconds)
            learned = [None]                # what the loop learnt its tables under: (touched, slow, statements)
            statements = [0]

        def settle(flush: bool = False) -> None:
            while pending:
                entry = pending[0]
                if entry[1] is None:
                    if not flush:
                        return
                    entry[1] = False
                pending.popleft()
                del where[id(entry[0])]
                self._see(entry[0], entry[1], entry[2])
                if window is not None and not entry[1] and entry[0].type_code == _TABLE_MAP:
                    # (the loop takes the TABLE_MAPs of excluded transactions)
                    self.compiled.learn(entry[0], self.decoder, self.touched, self._key_columns)

        def arm_window() -> None:
            """The loop takes the excluded transactions that come next: `select` has asked for the
            event after the last one read, which ended a transaction or had none, so it holds nothing
            and has decided all it read; the check sees those now."""
            if pending:
                settle(flush=True)
            self._held.check(self)
            state = (len(self.touched), len(self.compiled.slow), statements[0])
            if state != learned[0]:         # a slot or a table the loop learnt may be stale: learnt again
                window.forget()
                learned[0] = state
            window.armed = True

        source = iter(events)

        def read() -> Iterator[Event]:
            step, wanted = tracker.step, _READ
            for ev in source:
                if closed[0] and pending:    # the filters have decided the transaction before
                    settle(flush=True)
                starts, ends = step(ev)
                if starts:
                    self.current = Tx(tracker.gtid, ev.file, ev.pos, ev.timestamp)
                if ev.type_code in wanted:
                    entry = [ev, None, self.current]
                    pending.append(entry)
                    where[id(ev)] = entry
                closed[0] = ends or not tracker.mode
                yield ev

        def read_window() -> Iterator[Event]:
            """read(), the compiled loop armed while `select` asks for the next event between transactions."""
            step, wanted, queries = tracker.step, _READ, QUERY_EVENTS
            armed = False
            for ev in source:
                starts, ends = step(ev)
                if starts:
                    self.current = Tx(tracker.gtid, ev.file, ev.pos, ev.timestamp)
                code = ev.type_code
                if code in wanted:
                    entry = [ev, None, self.current]
                    pending.append(entry)
                    where[id(ev)] = entry
                    if code in queries and not is_begin(ev) and not is_commit(ev):
                        statements[0] += 1      # (a statement the schema replays may change a table)
                yield ev
                if ends or not tracker.mode:
                    arm_window()
                    armed = True
                elif armed:
                    window.armed = armed = False

        raw = read() if window is None else read_window()
        for ev in select(raw):
            entry = where.get(id(ev))
            if entry is not None and entry[0] is ev:
                entry[1] = True
                for other in pending:       # the filters keep events in order: those before are out
                    if other is entry:
                        break
                    if other[1] is None:
                        other[1] = False
                settle()
            yield ev
        settle(flush=True)
        if window is not None:
            window.armed = window.whole = False
            window.forget()
        step, wanted, see, inside = tracker.step, _READ, self._see, _INSIDE
        sink = self.compiled.loop if self.touched else None
        if sink is not None:                # the compiled loop takes what it can of the rest (_ccheck.Sink)
            self._arm(sink, tracker)
        for ev in source:                    # past the window: read to the end, nothing undone
            code = ev.type_code
            # (a rows event or TABLE_MAP inside a BEGIN neither starts nor ends it: Transactions.step)
            if not (code in inside and tracker.mode == "begin") and step(ev)[0]:
                self.current = Tx(tracker.gtid, ev.file, ev.pos, ev.timestamp)
            if code in wanted:
                see(ev, False, self.current)
                if sink is not None and code == _TABLE_MAP:
                    self.compiled.learn(ev, self.decoder, self.touched, self._key_columns)
            if sink is not None:
                self._arm(sink, tracker)
        self._held.check(self)
        self.done = True

    def sink(self):
        """The compiled loop of the check past the window, for the reader (`read_events(..., sink=)`),
        or None (no compiled core). It takes nothing before `watch` reads past the window."""
        return self.compiled.sink(self)

    def _arm(self, sink, tracker: Transactions) -> None:
        """The compiled loop takes the next events: between transactions, or inside one opened by a BEGIN
        (a GTID's or a statement's: `current`), not elsewhere; nor after a savepoint of the transaction
        (the Python path holds the changes after it: output.rollback.savepoints)."""
        mode = tracker.mode
        if self._held.tx is not None:
            if mode is not None and self._held.tx is self.current:
                sink.armed = False
                return
            self._held.check(self)
        if mode is None:
            sink.armed = True
        elif mode == "begin" and self.current is not None:
            sink.resume(self.current)
        else:
            sink.armed = False

    def _adopt(self, gtid: str, file: str, pos: int, timestamp: int) -> None:
        """The transaction the compiled loop hands over open: the one of the events that follow."""
        self.current = Tx(gtid, file, pos, timestamp)

    # -- one event, in order ------------------------------------------------------------------------
    def _see(self, ev: Event, kept: bool, tx: Tx | None) -> None:
        if self._held.tx is not None:
            self._held.check(self, tx)
        code = ev.type_code
        op = ROW_OPS.get(code) if ev.error is None else None
        if op is None:
            if code in QUERY_EVENTS and ev.error is None and self._held.control(ev, tx):
                self.decoder.observe(ev)
                return
            if kept or not self.touched or code not in QUERY_EVENTS or ev.error is not None:
                self.decoder.observe(ev)
                return
            if not is_begin(ev) and not is_commit(ev):
                self._statement(ev, tx)
            self.decoder.observe(ev)            # (the DDL replayed after it is checked)
            return
        if self._held.hold(ev, kept, op, tx):
            return
        if kept:
            self._undone(ev, op, tx)
        elif self.touched:
            self._later(ev, op, tx)

    def _table(self, ev: Event):
        table_id = ev.rows_head()
        table_id = table_id[0] if table_id is not None else ev.fields.get("table_id")
        return self.decoder.tables.get(table_id)

    def _key_columns(self, table) -> tuple[tuple[str, ...] | None, tuple]:
        """(the key's column names, or None: the whole image; the table's quoted names for them)."""
        got = self._keycols.get(id(table))
        if got is None or got[0] is not table:
            if len(self._keycols) > 4096:
                self._keycols.clear()
            key = table.row_key
            names = table.names
            got = (table, tuple(names[i] for i in key) if key else None)
            self._keycols[id(table)] = got
        return got[1], got[0]

    _exact = staticmethod(exact)

    def _tx_number(self, tx: Tx | None) -> int:
        if tx is None:
            tx = Tx(None, "", 0, 0)
        if self._numbered is None or self._numbered[0] is not tx:
            self.txs.add(pickle.dumps(tx))
            self._numbered = (tx, self.txs.count - 1)
        return self._numbered[1]

    def _keys(self, ev: Event, op: str, table, where: tuple[str, str]) -> list[tuple] | None:
        """keys.row_keys of the event's row changes (read straight from the images when the
        fast path takes them); None: its rows cannot be decoded."""
        cols, _ = self._key_columns(table)
        found = self.quick.keys(ev, op, table, where, cols)
        if found is not None:
            return found
        try:
            return row_keys(list(self.decoder.feed(ev)), where, cols)
        except BinlogError:
            return None

    def _undone(self, ev: Event, op: str, tx: Tx | None) -> None:
        table = self._table(ev)
        if table is None:
            try:
                for _ in self.decoder.feed(ev):     # (what the decoder learns of it)
                    pass
            except BinlogError:
                pass
            return                      # the rollback meets the same fault
        where = (table.schema, table.table)
        part = self.compiled
        if part.fast is not None and where not in part.slow and part.undone(
                ev, op, table, where, self._key_columns(table)[0], self.quick, lambda: self._tx_number(tx),
                self.touched):
            return
        found = self._keys(ev, op, table, where)
        no = self._tx_number(tx)
        code = _OP_CODES[op]
        keys, index = self.keys, self.index
        first = keys.count
        if found is None:               # its rows cannot be read: every later change of the table conflicts
            self.compiled.slow.add(where)
            self._whole_table(where, no, code)
            return
        self.compiled.slow.add(where)   # (its later rows: the Python way, which looks in `fast` too)
        head = _KEY.pack(no, code)
        if first + len(found) > MAX_RECORDS:
            raise BinlogError("the conflict check holds at most 2**30 undone rows", file=ev.file,
                              offset=ev.pos, event_type=ev.type)
        add, index_add, rec = keys.add, index.add, first
        for _, _, _, key, h in found:
            add(head + repr(key).encode("utf-8", "backslashreplace"))
            index_add(h, rec)
            rec += 1
        self.reported.extend(bytes(keys.count - first))
        if where not in self.touched and keys.count > first:
            self.touched[where] = first

    def _whole_table(self, where: tuple[str, str], no: int, code: bytes) -> None:
        rec = self.keys.count
        self.keys.add(_KEY.pack(no, code) + b"*")
        self.reported.append(0)
        self.touched.setdefault(where, rec)
        self.touched[where + ("*",)] = rec

    def _undone_of(self, rec) -> tuple[Tx, str, bytes]:
        """The transaction, change and key text of an undone key record (a tuple: (transaction number,
        change) of a key in the compiled KeySet, whose text is not kept)."""
        if type(rec) is tuple:
            return self._undone_tx(rec[0]), CHANGE_NAMES[rec[1]], b""
        data = self.keys.read(rec)
        no, code = _KEY.unpack_from(data)
        return self._undone_tx(no), _OP_NAMES[code], data[_KEY.size:]

    def _undone_tx(self, no: int) -> Tx:
        tx = self._tx_cache.get(no)
        if tx is None:
            if len(self._tx_cache) >= TX_CACHE:
                self._tx_cache.clear()
            tx = self._tx_cache[no] = pickle.loads(self.txs.read(no))
        return tx

    def _later(self, ev: Event, op: str, tx: Tx | None) -> None:
        table = self._table(ev)
        if table is None:
            return
        where = (table.schema, table.table)
        if where not in self.touched:
            return                       # a table the rollback writes no rows of: its rows are not read
        whole = self.touched.get(where + ("*",))
        found = self._keys(ev, op, table, where)
        if found is None:
            self._table_conflict("unreadable", where, ev, tx, None)
            return
        if whole is not None:
            if not self.reported[whole]:
                self.reported[whole] = 1
                self._table_conflict("row", where, ev, tx, None, rec=whole, later_op=_OPS[op])
            return
        cols, _ = self._key_columns(table)
        candidates, read_key = self.index.candidates, self.keys.read
        slots, fast = self.compiled.slots, self.compiled.fast
        slot = slots.get((where, cols)) if slots else None
        for row_op, names, vals, key, h in found:
            if slot is not None and names == cols and type(vals[0]) is int:
                first = fast.first(slot, vals[0])      # the KeySet's keys come before the index's
                if first is not None:
                    if first:
                        self.found.add(self.compiled.conflict(first, slot, vals[0], ev, row_op, tx))
                        self.count += 1
                    continue
            recs = candidates(h)
            if not recs:
                continue
            exact = self._exact(key)
            if len(recs) > 1:
                recs.sort()
            for rec in recs:
                if read_key(rec)[_KEY.size:] == exact:
                    if not self.reported[rec]:
                        self._row_conflict(rec, recs, exact, where, tuple(zip(names, vals)), names is not cols,
                                           ev, row_op, tx)
                    break

    def _row_conflict(self, rec: int, recs: list[int], exact: bytes, where, shown, whole: bool, ev: Event,
                      op: str, tx: Tx | None) -> None:
        # every spooled record of the same key (among `recs`, its hash's) is marked: one conflict per row
        self.reported[rec] = 1
        for other in recs:
            if other != rec and self.keys.read(other)[_KEY.size:] == exact:
                self.reported[other] = 1
        undone, undone_op, _ = self._undone_of(rec)
        key = (tuple(quote_identifier(c) for c, _ in shown), tuple(_shown(v) for _, v in shown))
        self._add("row", where, key, whole, undone, undone_op, tx, ev, _OPS[op], None)

    def _table_conflict(self, kind: str, where, ev: Event, tx: Tx | None, statement: str | None,
                        rec: int | None = None, later_op: str | None = None) -> None:
        undone, undone_op, _ = self._undone_of(self.touched[where] if rec is None else rec)
        self._add(kind, where, None, rec is not None, undone, undone_op, tx, ev, later_op or kind, statement)

    def _add(self, kind: str, where, key, whole: bool, undone: Tx, undone_op: str, tx: Tx | None, ev: Event,
             later_op: str, statement: str | None) -> None:
        """A Conflict spooled as the tuple of its fields (`conflicts` makes it again)."""
        later = (None, ev.file, ev.pos, ev.timestamp) if tx is None else (tx.gtid, tx.file, tx.pos, tx.timestamp)
        self.found.add(pickle.dumps((kind, where[0], where[1], key, whole,
                                     (undone.gtid, undone.file, undone.pos, undone.timestamp), undone_op, later,
                                     later_op, (ev.file, ev.pos), statement), pickle.HIGHEST_PROTOCOL))
        self.count += 1

    def _statement(self, ev: Event, tx: Tx | None) -> None:
        """A later statement: TRUNCATE, DDL or statement-based DML on a touched table conflicts."""
        query = ev.fields.get("query")
        found = statement_kind(query) if isinstance(query, str) else None
        if found is None:
            return
        kind, word = found
        db = ev.fields.get("db", "") or ""
        for where in _statement_targets(query, db, word, self.touched):
            if len(where) == 2:
                self._table_conflict(kind, where, ev, tx, " ".join(query.split())[:200])

    # -- the result --------------------------------------------------------------------------------
    def conflicts(self) -> Iterator[Conflict]:
        quoted: dict[int, tuple] = {}
        slot_keys, undone_tx, names_of, ops = self.compiled.slot_keys, self._undone_tx, CHANGE_NAMES, _OPS
        for data in self.found.records():
            f = pickle.loads(data)
            kind = f[0]
            if kind == "F" or kind == "B":  # keys of the KeySet: (F, undone tx, change, slot, value, op, later tx, at)
                for _, no, change, slot, value, op, gtid, file, pos, ts, at_file, at in (f,) if kind == "F" else f[1]:
                    names = quoted.get(slot)    # ("B": those the compiled loop found in one call)
                    if names is None:
                        names = quoted[slot] = tuple(quote_identifier(c) for c in slot_keys[slot][1])
                    where = slot_keys[slot][0]
                    yield Conflict("row", where[0], where[1], (names, (_shown(value),)), False, undone_tx(no),
                                   names_of[change], Tx(gtid, file, pos, ts), ops[op], (at_file, at), None)
            else:
                yield Conflict(f[0], f[1], f[2], f[3], f[4], Tx(*f[5]), f[6], Tx(*f[7]), f[8], f[9], f[10])

    def close(self) -> None:
        for spool in (self.txs, self.keys, self.found):
            spool.close()

    def __enter__(self) -> "ConflictCheck":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["ConflictCheck"]
