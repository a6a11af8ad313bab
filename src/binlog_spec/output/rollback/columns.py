"""A rollback's conflict check per column (--minimal-update), and the rows a rollback leaves out for their
conflicts (--skip-conflicts): `ColumnConflictCheck`, a ConflictCheck (output.rollback.check) that runs its
Python path (the reference) and, besides its report:

- with `per_column`, judges a later UPDATE of an undone row by the columns it changed (output.sql.minimal,
  the judgement the statements make): the undo of an UPDATE under --minimal-update sets only the columns
  that UPDATE changed, found by the row's key, so a later UPDATE that changed none of them and not the key
  destroys nothing, and is no conflict. A later change to an undone column or to the key, a later INSERT
  or DELETE of the row, a row an undone INSERT or DELETE wrote (its undo writes the row whole), a table
  without a key (the undo finds the row by its whole image), and every table-wide conflict (TRUNCATE, DDL,
  statement-based DML, rows that cannot be read) are conflicts as without it;
- remembers what conflicts (the keys as spooled, the tables of table-wide conflicts), so that the undo
  can leave out exactly those rows (`conflicts_with`, asked of each row change the rollback undoes).

Memory: the undone columns of each undone key go to a spool on disk, record for record with the check's
spool of keys; the conflicting keys are held (one per conflict, as the report is).
"""
from __future__ import annotations

import hashlib
import pickle

from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import UPDATE
from binlog_spec.errors import BinlogError
from binlog_spec.output.rollback.check import _KEY, _OP_NAMES, _OPS, KEY_WINDOW, ConflictCheck
from binlog_spec.output.rollback.compiled_keys import CompiledKeys
from binlog_spec.output.rollback.conflict import Tx
from binlog_spec.output.rollback.keys import exact, row_keys
from binlog_spec.output.rollback.spool import Spool
from binlog_spec.output.sql.minimal import changed_columns

#: The undone columns of a key whose undo writes the row whole (an INSERT's or DELETE's, a table's).
_WHOLE = b"*"


#: The names a row_identity holds: its table's, and its key's before and after the change.
IDENTITY = 3


def row_identity(rc) -> tuple[int, ...]:
    """The names of a row change as the check's keys and tables are remembered (`conflicts_with`): IDENTITY
    64-bit digests (never 0), of its table and of each key it writes or finds (keys.row_keys, as the check
    spools them; an UPDATE that leaves the key alone names it once, and 0 fills the rest). The undo holds
    them per row (8 bytes each); two names of one digest are 1 in 2**64."""
    t = rc.table_def
    where = (t.schema, t.table)
    cols = tuple(t.names[i] for i in t.row_key) if t.row_key and t.has_names else None
    ids = [_digest(repr(where).encode("utf-8", "backslashreplace"))]
    for _, _, _, key, _ in row_keys([rc], where, cols)[:IDENTITY - 1]:
        ids.append(_digest(exact(key)))
    return tuple(ids) + (0,) * (IDENTITY - len(ids))


def _digest(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little") | 1


class ColumnConflictCheck(ConflictCheck):
    """The conflict check of --minimal-update (`per_column`) and --skip-conflicts: see the module."""

    def __init__(self, schema_source=None, per_column: bool = True) -> None:
        super().__init__(schema_source)
        self.per_column = per_column
        self.quick.crows = None                 # (every rows event decoded: the reference path)
        self.compiled = CompiledKeys(None)
        self.columns = Spool(window=KEY_WINDOW)  # per undone key record: its undone columns (pickled)
        self._changed: list = []                 # the undone columns of the keys `_keys` found last
        #: The digests (row_identity) of the conflicting keys and tables.
        self.conflicting: set[int] = set()

    # -- what the undo leaves out --------------------------------------------------------------------
    def conflicts_with(self, identity) -> bool:
        """Whether the row change of this `row_identity` (its digests) touches a conflicting row or table."""
        hit = self.conflicting
        return any(i in hit for i in identity)

    # -- the check -----------------------------------------------------------------------------------
    def _keys(self, ev: Event, op: str, table, where: tuple[str, str]) -> list[tuple] | None:
        """keys.row_keys of the event's row changes, decoded; `_changed` then holds, key for key, the
        columns each row change changed (None: not an UPDATE)."""
        cols, _ = self._key_columns(table)
        try:
            changes = list(self.decoder.feed(ev))
        except BinlogError:
            self._changed = []
            return None
        found, changed = [], []
        for rc in changes:
            keys = row_keys([rc], where, cols)
            cols_changed = None
            if rc.op == UPDATE and rc.before is not None and rc.after is not None:
                cols_changed = frozenset(changed_columns(rc.before, rc.after))
            found += keys
            changed += [cols_changed] * len(keys)
        self._changed = changed
        return found

    def _undone(self, ev: Event, op: str, tx: Tx | None) -> None:
        first = self.keys.count
        self._changed = []
        super()._undone(ev, op, tx)
        added, changed = self.keys.count - first, self._changed
        for k in range(added):
            cols = changed[k] if added == len(changed) else None
            self.columns.add(_WHOLE if cols is None else pickle.dumps(sorted(cols)))

    def _undone_columns(self, rec: int) -> frozenset | None:
        data = self.columns.read(rec)
        return None if data == _WHOLE else frozenset(pickle.loads(data))

    def _later(self, ev: Event, op: str, tx: Tx | None) -> None:
        table = self._table(ev)
        if table is None:
            return
        where = (table.schema, table.table)
        if where not in self.touched:
            return
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
        key_set = frozenset(cols or ())
        read_key = self.keys.read
        for (row_op, names, vals, key, h), later in zip(found, self._changed):
            recs = self.index.candidates(h)
            if not recs:
                continue
            ex = self._exact(key)
            same = sorted(r for r in recs if read_key(r)[_KEY.size:] == ex)
            if not same:
                continue
            if self.per_column and later is not None and names == cols and not later & key_set \
                    and self._spares(same, later):
                continue                # a later UPDATE of other columns: the undo leaves them as they are
            if not any(self.reported[r] for r in same):
                self._row_conflict(same[0], recs, ex, where, tuple(zip(names, vals)), names is not cols, ev,
                                   row_op, tx)

    def _spares(self, recs: list[int], later: frozenset) -> bool:
        """Whether the undo of the undone changes `recs` of a row sets none of the `later` columns."""
        for rec in recs:
            if _OP_NAMES[self.keys.read(rec)[4:5]] != "UPDATE":
                return False
            undone = self._undone_columns(rec)
            if undone is None or undone & later:
                return False
        return True

    def _row_conflict(self, rec: int, recs: list[int], exact_key: bytes, *rest) -> None:
        self.conflicting.add(_digest(exact_key))
        super()._row_conflict(rec, recs, exact_key, *rest)

    def _table_conflict(self, kind: str, where, *rest, **kw) -> None:
        self.conflicting.add(_digest(repr((where[0], where[1])).encode("utf-8", "backslashreplace")))
        super()._table_conflict(kind, where, *rest, **kw)

    def close(self) -> None:
        self.columns.close()
        super().close()


__all__ = ["IDENTITY", "ColumnConflictCheck", "row_identity"]
