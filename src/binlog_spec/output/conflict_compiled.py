"""The compiled core's part in a rollback's conflict check (output.conflicts.ConflictCheck, whose Python
path stays the reference): output/_cconflicts.pyx's KeySet and loop, and what the check tells them.

The undone keys of a table keyed by one integer column go to the KeySet (12 bytes an entry, 5 a key, at
most _cconflicts.MAX_SLOTS entries: then the rest goes to the check's spool and index) instead of the
spool and index; the check's Python path looks there first. Past the window the loop (`sink`, given to
the reader) takes the common transactions straight from the reader's window, and leaves everything else
to the Python path: the TABLE_MAPs it has not met (`_learn` tells it those it may take again), the tables
with an undone key the KeySet lacks (`slow`), statements, damaged events. When the time bounds are the
only filters, it also takes, while they run, the whole transactions they exclude (ConflictCheck.watch
`kept_seconds`). The report, the undo and the
exit code are the same (tests/output/test_conflicts_compiled.py, tests/test_compiled_core.py).
"""
from __future__ import annotations

import pickle
from typing import TYPE_CHECKING

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import DELETE, INSERT, UPDATE
from binlog_spec.stream.transactions import Transactions

if TYPE_CHECKING:
    from binlog_spec.output.conflicts import Tx

TABLE_MAP = int(spec.EventType.table_map_event)
#: A change as the KeySet numbers it.
CHANGES = {INSERT: 0, UPDATE: 1, DELETE: 2}
CHANGE_NAMES = ("INSERT", "UPDATE", "DELETE")


class CompiledPart:
    """The compiled part of ConflictCheck (a base of it): `fast` (the KeySet, or None), its slots
    ((schema, table) and key column -> slot), the tables with an undone key it lacks, and the loop."""

    def _init_compiled(self, module) -> None:
        """`module`: output/_cconflicts.pyx, or None (no compiled core: the Python path alone)."""
        self._compiled = module
        self.fast = module.KeySet() if module is not None else None
        self._slots: dict[tuple, int] = {}
        self._slot_keys: list[tuple] = []
        self._slow: set[tuple[str, str]] = set()
        self._sink = None

    def sink(self):
        """The compiled loop of the check past the window, for the reader (`read_events(..., sink=)`),
        or None (no compiled core). It takes nothing before `watch` reads past the window."""
        if self._compiled is None:
            return None
        if self._sink is None:
            self._sink = self._compiled.Sink(self, self.fast)
        return self._sink

    def _arm(self, sink, tracker: Transactions) -> None:
        """The compiled loop takes the next events: between transactions, or inside one opened by a BEGIN
        (a GTID's or a statement's: `current`), not elsewhere; nor after a savepoint of the transaction
        (the Python path holds the changes after it: output.conflict_savepoints)."""
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

    def _learn(self, ev: Event) -> None:
        """A TABLE_MAP read past the window, told to the compiled loop: its table, and the slot of its
        key (-1: a table the rollback writes no rows of), when the loop can check its rows."""
        if ev.error is not None:
            return
        table = self.decoder.tables.get(ev.fields.get("table_id"))
        if table is None:
            return
        schema = self.decoder.schema_source
        generation = getattr(schema, "generation", None)
        if schema is not None and generation is None:
            return
        where = (table.schema, table.table)
        if where not in self.touched:
            slot = -1
        else:
            if where in self._slow:
                return
            slot = self._slots.get((where, self._key_columns(table)[0]))
            if slot is None:
                return
        maps, mapped = self._sink.maps, self._sink.mapped
        if len(maps) > 4096:
            maps.clear()
            mapped.clear()
        pair = mapped[table.table_id] = (table, slot)
        maps[ev.body_bytes()] = (table, generation, getattr(schema, "server_collation", None), pair)

    def _fast_slot(self, where: tuple[str, str], cols: tuple[str, ...]) -> int | None:
        slot = self._slots.get((where, cols))
        if slot is None and len(self._slot_keys) < 256:
            slot = self._slots[(where, cols)] = len(self._slot_keys)
            self._slot_keys.append((where, cols))
        return slot

    def _undone_fast(self, ev: Event, op: str, table, where: tuple[str, str], tx: Tx | None) -> bool:
        """The undone keys of a table keyed by one integer column, read from the images into the compiled
        KeySet (no spooled record, no index entry); False: the event goes the Python way (the table is
        then `slow`: the compiled loop leaves its later rows to the Python way)."""
        cols = self._key_columns(table)[0]
        if cols is None or len(cols) != 1:
            return False
        got = self.quick.values(ev, op, table, cols)
        if got is None:
            return False
        slot = self._fast_slot(where, cols)
        if slot is None:
            return False
        no = self._tx_number(tx)
        change = CHANGES[op]
        if not self.fast.add(slot, got, op == UPDATE, no, change):
            return False                # full: the keys it took stay, the event's go the Python way too
        if got and where not in self.touched:
            self.touched[where] = (no, change)
        return True

    def _fast_conflict(self, first: tuple[int, int], slot: int, value: int, ev: Event, op: str,
                       tx: Tx | None) -> None:
        """A conflict on a key of the KeySet, spooled as the compiled loop spools it (`conflicts` reads it)."""
        later = (None, ev.file, ev.pos, ev.timestamp) if tx is None else (tx.gtid, tx.file, tx.pos, tx.timestamp)
        self.found.add(pickle.dumps(("F", first[0], first[1], slot, value, op, *later, ev.file, ev.pos),
                                    pickle.HIGHEST_PROTOCOL))
        self.count += 1


__all__ = ["CHANGES", "CHANGE_NAMES", "CompiledPart", "TABLE_MAP"]
