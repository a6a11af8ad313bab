"""A rollback's conflict check and savepoints: the row changes logged after a SAVEPOINT are held until the
transaction goes on past them. A ROLLBACK TO that savepoint drops them: the server undid them (MariaDB
and MySQL log them, then ROLLBACK TO, when a non-transactional table changed since the savepoint), so
the undo writes none of them back (output.rollback.spool.Spool.rollback_to) and a later transaction's change of
them is no change at all. Otherwise they are checked as any other, in their order, when the next
transaction starts or the input ends."""
from __future__ import annotations

from binlog_spec.binlog.event import Event
from binlog_spec.rows.statement_text import TX_RELEASE, TX_ROLLBACK_TO, TX_SAVEPOINT, savepoint_name
from binlog_spec.stream.transactions import tx_control


class SavepointHold:
    """The row changes of the open transaction since its first live savepoint: (event, kept, op, tx)."""

    __slots__ = ("tx", "rows", "marks")

    def __init__(self) -> None:
        self.tx = None                      # the transaction (Tx) the savepoints belong to
        self.rows: list[tuple] = []
        self.marks: dict[str, int] = {}     # savepoint name -> len(rows) when it was set

    def drain(self, tx) -> list[tuple]:
        """The held changes, to check now, when `tx` is another transaction than the held one (None:
        the input ended)."""
        if self.tx is None or tx is self.tx:
            return []
        rows, self.tx, self.rows, self.marks = self.rows, None, [], {}
        return rows

    def check(self, check, tx=None) -> None:
        """The held changes checked now by `check` (the ConflictCheck), when `tx` is another transaction
        than the held one (None: the input ended, or the check is between transactions)."""
        for ev, kept, op, held_tx in self.drain(tx):
            if kept:
                check._undone(ev, op, held_tx)
            elif check.touched:
                check._later(ev, op, held_tx)

    def control(self, ev: Event, tx) -> bool:
        """Whether `ev` is a SAVEPOINT, ROLLBACK TO or RELEASE SAVEPOINT (taken into account)."""
        kind = tx_control(ev)
        if kind not in (TX_SAVEPOINT, TX_ROLLBACK_TO, TX_RELEASE) or tx is None:
            return False
        name = savepoint_name(ev.fields.get("query", ""))
        if name is None:
            return True
        if kind == TX_SAVEPOINT:
            self.tx = tx
            self.marks.pop(name, None)
            self.marks[name] = len(self.rows)
        elif name in self.marks:
            names = list(self.marks)
            for later in names[names.index(name) + 1:]:
                del self.marks[later]
            if kind == TX_ROLLBACK_TO:
                del self.rows[self.marks[name]:]
            else:
                del self.marks[name]
        return True

    def hold(self, ev: Event, kept: bool, op: str, tx) -> bool:
        """Whether the row change is held (a savepoint of its transaction is live)."""
        if not self.marks or tx is not self.tx:
            return False
        self.rows.append((ev, kept, op, tx))
        return True
