"""Rollback's one spool and one reversal, for the SQL script and the binary (and base64) output.

A rollback writes the last transaction first, so it reads the whole input before it writes anything.
What it will write waits in a `Spool`: the records (SQL statements, output events) go to a temporary
file, created on the first record and deleted on close; memory holds only each record's offset and
kind and each transaction's start, about ten bytes a record, whatever the size of the records, and
while reading back one window of the file (WINDOW bytes, or one record if bigger).

The reversal (`Spool.undo_order`) is the same for both outputs. A transaction is read back with its
framing kept and its statements last first:

* its HEAD records (GTID, BEGIN) in order;
* its statements last first; a statement is a run of MAP records (TABLE_MAPs) then a run of ROWS
  records closed by a ROWS_END one (the rows event with STMT_END_F): the maps stay in order before
  the rows, the rows go in reverse, the first of them now ends the statement;
* its TAIL records (XID, COMMIT) in order.

A SQL rollback spools each undo statement as one ROWS_END record, so its transactions come back as
their statements reversed. A transaction with no rows to undo is left out. The compiled lane of a SQL
rollback (output/_crow_undo.pxi) spools its statements reversed already: the open transaction's as
ROWS_END records of several lines, a run of whole transactions as one BLOCK record, a transaction of its
own that is written as it is, its framing in it (`add_block`).

What the server undid itself is in the binlog but must not be undone again: the rows logged between a
SAVEPOINT and a ROLLBACK TO it (MariaDB and MySQL write ROLLBACK TO, after those rows, when a
non-transactional table changed since the savepoint; the transactional rows were rolled back), and an XA
transaction's prepare whose XA ROLLBACK a later group logs, a transaction that ends with ROLLBACK
(`rollback_to`, `xa_rolled_back`, `rolled_back`).

`EventSpool` adds what the binary output needs: output events (`Item`s) as records, and MariaDB
GTIDs handed out again in ascending order per domain.
"""
from __future__ import annotations

import struct
import tempfile
from array import array
from typing import BinaryIO, Iterator

from binlog_spec.binlog import spec
from binlog_spec.binlog.writer import ET, Item, gtid_with_seq_no, set_stmt_end

#: Kinds of record: a transaction's framing at its start and end, a TABLE_MAP, a rows event that
#: does not end its statement and one that does (a SQL statement is one of these).
HEAD, MAP, ROWS, ROWS_END, TAIL = range(5)
#: A record written as it is, the only one of its transaction: undo text with its framing in it.
BLOCK = 5
#: Bytes read back from the spool at a time (at most, besides a bigger record).
WINDOW = 1 << 18


class Spool:
    """Records (bytes) on disk in input order, grouped into transactions; read back in input order
    (`records`) or undo order (`last_first`, `undo_order`)."""

    def __init__(self, window: int = WINDOW) -> None:
        #: Bytes read back at a time (WINDOW; smaller for records read back one here, one there).
        self.window = window
        self._file: BinaryIO | None = None
        self._end = 0                 # offset after the last record
        self._at_end = True           # whether the file position is _end (no read since)
        self._window = b""            # the file's bytes from _window_at, read back a window at a time
        self._window_at = 0
        self.offsets = array("q")     # start of every record
        self.kinds = array("b")
        self.tx_starts = array("q")   # index into offsets where each transaction starts
        self.tx_rows = array("b")     # whether each transaction has rows records (something to undo)
        self._savepoints: dict[str, int] = {}   # the open transaction's savepoints: the record count then
        self._xa: dict[str, int] = {}           # XA transactions prepared: their transaction's number

    @property
    def count(self) -> int:
        return len(self.offsets)

    def begin(self) -> None:
        """The records added from now on belong to a new transaction."""
        self.tx_starts.append(len(self.offsets))
        self.tx_rows.append(0)
        self._savepoints: dict[str, int] = {}

    # -- what the server undid itself: savepoints and XA ROLLBACK -----------------------------------
    def savepoint(self, name: str) -> None:
        """SAVEPOINT name in the open transaction: where a ROLLBACK TO it goes back to (the same name set
        again moves it, as on the server)."""
        if self.tx_starts:
            self._savepoints.pop(name, None)
            self._savepoints[name] = len(self.offsets)

    def rollback_to(self, name: str) -> bool:
        """ROLLBACK TO name: the server undid the rows logged since that SAVEPOINT (they are in the
        binlog, written before the rollback), so their undo records are dropped, and the savepoints set
        after it with them. False when the transaction set no such savepoint (nothing dropped)."""
        mark = self._savepoints.get(name) if self.tx_starts else None
        if mark is None:
            return False
        if mark < len(self.offsets):
            self._end = self.offsets[mark]
            del self.offsets[mark:]
            del self.kinds[mark:]
            self._at_end = False
            if self._window_at + len(self._window) > self._end:
                self._window, self._window_at = b"", 0
            first = self.tx_starts[-1]
            self.tx_rows[-1] = int(any(ROWS <= k <= ROWS_END for k in self.kinds[first:]))
        self._release_after(name)
        return True

    def rolled_back(self) -> None:
        """ROLLBACK ends the open transaction: the server undid its rows (it logs such a transaction when
        a non-transactional table changed in it, that table's rows in a group of their own before it),
        so nothing of it is undone."""
        if self.tx_starts:
            self._savepoints = {"": self.tx_starts[-1]}
            self.rollback_to("")

    def release(self, name: str) -> None:
        """RELEASE SAVEPOINT name: it, and the savepoints set after it, are gone."""
        if self.tx_starts and name in self._savepoints:
            self._release_after(name)
            del self._savepoints[name]

    def _release_after(self, name: str) -> None:
        names = list(self._savepoints)
        for later in names[names.index(name) + 1:]:
            del self._savepoints[later]

    def mark_xa(self, xid: str) -> None:
        """The open transaction is the prepare of XA transaction `xid` (its XA COMMIT or XA ROLLBACK is a
        later group of its own)."""
        if self.tx_starts:
            self._xa[xid] = len(self.tx_starts) - 1

    def xa_rolled_back(self, xid: str) -> bool:
        """XA ROLLBACK xid: the server undid that prepared transaction's rows; its undo is dropped. False
        when its prepare is not in the input."""
        k = self._xa.pop(xid, None)
        if k is None:
            return False
        self.tx_rows[k] = 0
        return True

    def _append_to(self) -> BinaryIO:
        if self._file is None:
            self._file = tempfile.TemporaryFile(mode="w+b")
            if not self.tx_starts:
                self.begin()
        elif not self._at_end:
            self._file.seek(self._end)
        self._at_end = True
        return self._file

    def add(self, data: bytes, kind: int = ROWS_END) -> None:
        f = self._file if self._at_end and self._file is not None else self._append_to()
        self.offsets.append(self._end)
        self.kinds.append(kind)
        if ROWS <= kind <= ROWS_END:
            self.tx_rows[-1] = 1
        f.write(data)
        self._end += len(data)

    def add_block(self, data: bytes) -> None:
        """A transaction of its own: one BLOCK record (`data`: UTF-8 lines, written as they are)."""
        self.begin()
        self.add(data, BLOCK)
        self.tx_rows[-1] = 1

    def add_text(self, text: str, kind: int = ROWS_END) -> None:
        self.add(text.encode("utf-8", "surrogateescape"), kind)

    def read(self, i: int, forward: bool = False) -> bytes:
        """Record `i`. Reads go to the file a window of up to `window` bytes at a time: the window
        ends with the record asked for (the undo reads records mostly last first), or with
        `forward` starts with it."""
        offsets = self.offsets
        start = offsets[i]
        stop = offsets[i + 1] if i + 1 < len(offsets) else self._end
        at = self._window_at
        if start >= at and stop <= at + len(self._window):
            return self._window[start - at:stop - at]
        assert self._file is not None
        window = self.window
        if stop - start >= window:
            at, upto = start, stop
        elif forward:
            at, upto = start, min(self._end, start + window)
        else:
            at, upto = max(0, stop - window), stop
        self._at_end = False
        self._file.seek(at)
        self._window = self._file.read(upto - at)
        self._window_at = at
        return self._window[start - at:stop - at]

    def text(self, i: int) -> str:
        return self.read(i).decode("utf-8", "surrogateescape")

    def records(self) -> Iterator[bytes]:
        """Every record, in the order added."""
        for i in range(len(self.offsets)):
            yield self.read(i, forward=True)

    def last_first(self) -> Iterator[int]:
        """The transactions (their numbers) with rows to undo, last first."""
        for k in range(len(self.tx_starts) - 1, -1, -1):
            if self.tx_rows[k]:
                yield k

    def undo_order(self, k: int) -> Iterator[tuple[int, bool]]:
        """(record, ends its statement) for the records of transaction `k`, in the order its undo
        is written (see the module's docstring); `ends` is True only for the rows record that now
        ends its statement."""
        first = self.tx_starts[k]
        last = self.tx_starts[k + 1] if k + 1 < len(self.tx_starts) else len(self.offsets)
        kinds, tx = self.kinds, range(first, last)
        for i in tx:
            if kinds[i] == HEAD:
                yield i, False
        i = last - 1
        while i >= first:
            if kinds[i] != ROWS and kinds[i] != ROWS_END:
                i -= 1
                continue
            j = i
            while j - 1 >= first and kinds[j - 1] == ROWS:
                j -= 1
            m = j
            while m - 1 >= first and kinds[m - 1] == MAP:
                m -= 1
            for t in range(m, j):
                yield t, False
            for r in range(i, j - 1, -1):
                yield r, r == j
            i = m - 1
        for i in tx:
            if kinds[i] == TAIL:
                yield i, False

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
            self._window = b""

    def __enter__(self) -> "Spool":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


#: Before each event of an EventSpool: its position and the index of its file's name.
_REC = struct.Struct("<qI")


class EventSpool(Spool):
    """Output events (`Item`s) spooled for a binary rollback, with each transaction's MariaDB GTID."""

    def __init__(self) -> None:
        super().__init__()
        self.tx_domain = array("q")   # MariaDB GTID domain of each transaction (-1: none)
        self.tx_seq = array("Q")      # and its sequence number (unsigned 64 bits)
        self.files: dict[str, int] = {}
        self.names: list[str] = []

    def begin(self) -> None:
        super().begin()
        self.tx_domain.append(-1)
        self.tx_seq.append(0)

    def set_gtid(self, domain: int, seq_no: int) -> None:
        self.tx_domain[-1] = domain
        self.tx_seq[-1] = seq_no

    def add_item(self, kind: int, item: Item) -> None:
        index = self.files.get(item.file)
        if index is None:
            index = self.files[item.file] = len(self.names)
            self.names.append(item.file)
        self.add(_REC.pack(item.pos, index) + item.bare, kind)

    def item(self, i: int, fde: spec.FormatDescription) -> Item:
        data = self.read(i)
        pos, index = _REC.unpack_from(data)
        return Item(data[_REC.size:], self.names[index], pos, fde)

    def _seq_pools(self) -> dict[int, Iterator[int]]:
        """Per MariaDB domain, the sequence numbers of the transactions written, ascending: handed
        out in output order, so that each domain's sequence still grows (as mariadb-binlog's
        gtid-strict-mode and a strict server require), with the same GTIDs as the input."""
        pools: dict[int, array] = {}
        for k in range(len(self.tx_starts)):
            if self.tx_rows[k] and self.tx_domain[k] >= 0:
                pools.setdefault(self.tx_domain[k], array("Q")).append(self.tx_seq[k])
        return {d: iter(sorted(p)) for d, p in pools.items()}

    def reversed_items(self, fde: spec.FormatDescription, renumber: bool = True) -> Iterator[Item]:
        """The events of the undo, in the FDE written: transactions last first, each in undo order,
        STMT_END_F on the rows event that now ends each statement."""
        pools = self._seq_pools() if renumber else {}
        for k in self.last_first():
            domain = self.tx_domain[k]
            for i, ends in self.undo_order(k):
                item = self.item(i, fde)
                kind = self.kinds[i]
                if kind == ROWS or kind == ROWS_END:
                    item.bare = set_stmt_end(item.bare, fde, ends, item.file, item.pos)
                elif kind == HEAD and item.type_code == ET.gtid_event and domain in pools:
                    item.bare = gtid_with_seq_no(item.bare, fde, next(pools[domain]))
                yield item


class LineSpool(Spool):
    """Lines of text on disk (the notes of a rollback), read back in order."""

    def add_line(self, line: str) -> None:
        self.add_text(line.replace("\n", " "))

    def lines(self) -> Iterator[str]:
        for data in self.records():
            yield data.decode("utf-8", "surrogateescape")


__all__ = ["HEAD", "MAP", "ROWS", "ROWS_END", "TAIL", "BLOCK", "Spool", "EventSpool", "LineSpool"]
