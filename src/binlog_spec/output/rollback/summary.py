"""What a SQL rollback's undo restores, counted from the undo itself (`UndoSpool`) and said before it is written
(`UndoSummary.lines`): per table, how many rows each kind of undo statement restores, and how many
transactions are undone, the first and the last.

The undo waits in a spool before it is written (output.rollback.spool). `UndoSpool` is that spool with the
tally of what each record holds: a statement of script.rollback's is one row of one table, its label
(schema as the statement names it, table, the operation it undoes) kept beside it (4 bytes a record); a record
of the compiled lane (output/_crow_undo.pxi: a BLOCK of whole transactions, or the lines of a transaction it
took in part) comes with its rows per label, counted per rows event where the lane writes them. Each
spool transaction with rows among the first and the last 64 keeps where its transaction of the input is
(GTID, file, position, time; a BLOCK's last one too): only those can be the first or the last undone. What the spool drops (the rows a ROLLBACK TO undid, a transaction that ends with
ROLLBACK, an XA transaction rolled back) is dropped from the tally with it, and a record --skip-conflicts
leaves out is not counted (`summary(left_out)`): the summary is what the script holds.
"""
from __future__ import annotations

import json
from array import array
from bisect import bisect_right
from collections import Counter, deque
from datetime import tzinfo
from typing import Callable, Iterator

from binlog_spec.binlog import timezones
from binlog_spec.binlog.event_types import DELETE, INSERT, UPDATE
from binlog_spec.output.rollback.conflict import Tx
from binlog_spec.output.rollback.report import _tx_text
from binlog_spec.output.rollback.spool import BLOCK, EventSpool, Spool
from binlog_spec.rows.statement_text import quote_table

#: A label: (schema, table, the operation of the input the undo statement undoes).
Label = tuple[str, str, str]
#: A record's label when it restores no row (a comment), and when its rows are in UndoSpool.tallies.
NO_ROW, TALLIED = -1, -2
#: The transactions with rows whose place in the input UndoSpool keeps: the first HEAD, the last RECENT.
HEAD, RECENT = 64, 64

#: The undo statement of each operation undone, and what it does (UndoSummary.lines), in the order written.
_WHAT = ((INSERT, "DELETE", "removes rows the window inserted"),
         (UPDATE, "UPDATE", "sets back rows the window updated"),
         (DELETE, "INSERT", "puts back rows the window deleted"))


class UndoSpool(Spool):
    """A rollback's spool (output.rollback.spool.Spool) with the tally of the rows its records restore. Whoever
    adds a record gives its label too: script.rollback appends it to `rec_label` itself (a statement's `label`,
    NO_ROW for a comment), the compiled lane's records come through `add_rows` and `add_block`, the binary
    rollback's through UndoEventSpool.add_item."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.labels: list[Label] = []
        self._label_ids: dict[Label, int] = {}
        self.rec_label = array("i")         # per record: its one row's label, NO_ROW, or TALLIED
        self.rec_rows = array("I")          # (UndoEventSpool: per record, the rows of its label)
        self.tallies: dict[int, dict[Label, int]] = {}   # record -> rows per label (the compiled lane's)
        self.tx_count: dict[int, int] = {}  # spool transaction -> transactions of the input in it, if not 1
        # where the transactions of the input are (GTID, file, position, time), for the spool transactions
        # with rows that may be the first or the last undone: the first HEAD and the last RECENT of them (the
        # others, in the middle, never are; XA ROLLBACK, which drops a transaction before, and --skip-conflicts,
        # which may leave any out, are the exceptions: `keep_all` then keeps them all)
        self.keep_all = False
        self._pending: tuple | None = None
        self._head: dict[int, tuple] = {}
        self._recent: deque = deque(maxlen=RECENT)
        self._begin = super().begin         # (the spool's own, called once a transaction: bound once)
        self.src_last: dict[int, Tx] = {}   # the last transaction of the input of a BLOCK's spool transaction

    def label(self, schema: str, table: str, op: str) -> int:
        key = (schema, table, op)
        got = self._label_ids.get(key)
        if got is None:
            got = self._label_ids[key] = len(self.labels)
            self.labels.append(key)
        return got

    def begin_at(self, gtid: str | None, file: str, pos: int, timestamp: int) -> None:
        """A new transaction, of the input's transaction at file:pos (with that GTID, None or ANONYMOUS for none:
        MySQL's anonymous GTID, as the compiled lane has it, and time). Where each transaction is is kept
        for those that may be the first or the last the undo restores (`keep_all`: for every one)."""
        self._candidate()
        self._begin()
        self._pending = (gtid, file, pos, timestamp)

    def _candidate(self) -> None:
        """The open transaction, with rows to undo, among the first HEAD or the last RECENT of them."""
        if self._pending is not None and (self.tx_rows[-1] or self.keep_all):
            if len(self._head) < HEAD or self.keep_all:
                self._head[len(self.tx_starts) - 1] = self._pending
            else:
                self._recent.append((len(self.tx_starts) - 1, self._pending))
        self._pending = None

    def begin(self, first=None, last=None) -> None:
        """A new transaction; `first`, `last`: where its first and last transaction of the input are (the
        compiled lane's (GTID JSON text, file, position, time); None: not known)."""
        first, last = _tx(first), _tx(last)
        if first is None:
            self.begin_at(None, "", -1, 0)
        else:
            self.begin_at(*first)
        if last is not None and last != first:
            self.src_last[len(self.tx_starts) - 1] = last

    def add_rows(self, data: bytes, tally: dict | None) -> None:
        """A record of the compiled lane, of the open transaction: its rows per label in `tally`."""
        self.add(data)
        self._tally(tally)

    def add_block(self, data: bytes, tally: dict | None = None, first=None, last=None, count: int = 1) -> None:
        """The compiled lane's `count` whole transactions (first and last where they are), one BLOCK record."""
        self.begin(first, last)
        self.add(data, BLOCK)
        self.tx_rows[-1] = 1
        self._tally(tally)
        if count != 1:
            self.tx_count[len(self.tx_starts) - 1] = count

    def _tally(self, tally: dict | None) -> None:
        self.rec_label.append(TALLIED if tally else NO_ROW)
        if tally:
            self.tallies[self.count - 1] = tally

    def mark_xa(self, xid: str) -> None:
        super().mark_xa(xid)
        self.keep_all = True        # (its XA ROLLBACK may drop any transaction from here on: Spool.xa_rolled_back)

    def rollback_to(self, name: str) -> bool:
        done = super().rollback_to(name)
        n = len(self.offsets)
        if len(self.rec_label) > n:
            del self.rec_label[n:]
            del self.rec_rows[n:]
            for i in [i for i in self.tallies if i >= n]:
                del self.tallies[i]
        return done

    def summary(self, left_out: Callable[[int], bool] | None = None) -> "UndoSummary":
        """What the undo restores: the records of the transactions written (Spool.last_first), less those
        `left_out` says are left out (--skip-conflicts)."""
        self._candidate()       # (the last transaction's place)
        if len(self.rec_label) != self.count:
            raise AssertionError(f"undo spool: {len(self.rec_label)} labels for {self.count} records")
        written = bytes(self.tx_rows)       # (per transaction: whether it is written, Spool.last_first)
        dropped = [k for k in range(len(written)) if not written[k]] if 0 in written else []
        counts = Counter(self.rec_label)
        for k in dropped:
            counts.subtract(self.rec_label[slice(*self._records(k))])
        if left_out is None and not counts[NO_ROW] and not self.rec_rows:   # (every transaction written restores rows)
            kept = [k for k in range(len(written)) if written[k]] if dropped else range(len(written))
            rows = {self.labels[at]: n for at, n in counts.items() if at >= 0 and n}
            for i, tally in self.tallies.items():
                if written[bisect_right(self.tx_starts, i) - 1]:
                    for label, n in tally.items():
                        rows[label] = rows.get(label, 0) + n
        else:
            rows, kept = self._walk(written, left_out)
        result = UndoSummary()
        for (schema, table, op), n in rows.items():
            result.tables.setdefault((schema, table), {})[op] = n
        if len(kept):
            tx_count = self.tx_count
            result.transactions = sum(tx_count.get(k, 1) for k in kept) if tx_count else len(kept)
            result.first = self._source(kept[0])
            result.last = self.src_last.get(kept[-1]) or self._source(kept[-1])
        return result

    def _records(self, k: int) -> tuple[int, int]:
        starts = self.tx_starts
        return starts[k], starts[k + 1] if k + 1 < len(starts) else self.count

    def _walk(self, written: bytes, left_out) -> tuple[dict, list[int]]:
        """summary's rows and transactions kept, record by record (records of no row, records left out)."""
        rows: dict[Label, int] = {}
        kept = []
        labels, rec_label, tallies, rec_rows = self.labels, self.rec_label, self.tallies, self.rec_rows
        for k in range(len(written)):
            if not written[k]:
                continue
            restored = False
            for i in range(*self._records(k)):
                at = rec_label[i]
                if at >= 0:
                    if left_out is not None and left_out(i):
                        continue
                    rows[labels[at]] = rows.get(labels[at], 0) + (rec_rows[i] if rec_rows else 1)
                    restored = True
                elif at == TALLIED:
                    for label, n in tallies[i].items():
                        rows[label] = rows.get(label, 0) + n
                    restored = True
            if restored:
                kept.append(k)
        return rows, kept

    def _source(self, k: int) -> Tx | None:
        got = self._head.get(k)
        if got is None:
            got = next((source for at, source in self._recent if at == k), None)
        if got is None or got[2] < 0:
            return None
        gtid, file, pos, timestamp = got
        return Tx(None if gtid == "ANONYMOUS" else gtid, file, pos, timestamp)


class UndoEventSpool(UndoSpool, EventSpool):
    """The binary and base64 rollback's EventSpool (output.rewriter), with the tally: a rows event's record
    restores its rows, of one label; the other records (GTID, TABLE_MAP, XID) none."""

    def add_item(self, kind: int, item, label: int = NO_ROW, rows: int = 0) -> None:
        super().add_item(kind, item)
        self.rec_label.append(label)
        self.rec_rows.append(rows)


def _tx(source) -> Tx | None:
    """A Tx of the compiled lane's (GTID JSON text, file, position, time)."""
    if source is None:
        return None
    gtid, file, pos, timestamp = source
    return Tx(json.loads(gtid) if isinstance(gtid, bytes) else gtid, file, pos, timestamp)


class UndoSummary:
    """What an undo restores: `tables` ((schema, table) -> operation undone -> rows), the `transactions` of
    the input undone (with a row restored), the `first` and `last` of them (Tx, None where not known)."""

    def __init__(self) -> None:
        self.tables: dict[tuple[str, str], dict[str, int]] = {}
        self.transactions = 0
        self.first: Tx | None = None
        self.last: Tx | None = None

    @property
    def rows(self) -> int:
        return sum(sum(ops.values()) for ops in self.tables.values())

    def merge(self, later: "UndoSummary") -> None:
        """Add the summary of a later part of the input (--jobs: the next piece's)."""
        for table, ops in later.tables.items():
            mine = self.tables.setdefault(table, {})
            for op, count in ops.items():
                mine[op] = mine.get(op, 0) + count
        if later.transactions:
            if not self.transactions:
                self.first = later.first
            self.last = later.last
        self.transactions += later.transactions

    def lines(self, tz: tzinfo = timezones.UTC, replace: bool = False) -> Iterator[str]:
        """The summary's lines (without the program's prefix): the transactions undone, then a line per table
        (in name order) with the rows each kind of statement restores. `replace`: the undo puts deleted rows
        back with REPLACE (--replace)."""
        if not self.transactions:
            yield "undo summary: no row to restore (the undo holds no statement)"
            return
        s = "" if self.transactions == 1 else "s"
        text = f"undo summary: {self.transactions} transaction{s} undone"
        if self.first is not None and self.last is not None and self.first == self.last:
            text += f": {_tx_text(self.first, tz)}"
        elif self.first is not None and self.last is not None:
            text += f", first {_tx_text(self.first, tz)}, last {_tx_text(self.last, tz)}"
        yield text + f"; times in {timezones.zone_name(tz)}"
        for (schema, table), ops in sorted(self.tables.items()):
            counts = []
            for op, verb, does in _WHAT:
                if ops.get(op):
                    verb = "REPLACE" if replace and verb == "INSERT" else verb
                    counts.append(f"{ops[op]} {verb} ({does})")
            yield f"undo summary: {quote_table(schema, table)}: " + ", ".join(counts)


__all__ = ["NO_ROW", "TALLIED", "UndoSpool", "UndoEventSpool", "UndoSummary"]
