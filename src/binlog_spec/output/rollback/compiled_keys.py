"""The compiled core's part in a rollback's conflict check (`CompiledKeys`, a component of
output.rollback.check.ConflictCheck, whose Python path stays the reference): output/rollback/_ccheck.pyx's
KeySet and loop, and what the check tells them (each method is handed what it needs of the check).

The undone keys of a table keyed by one integer column go to the KeySet (12 bytes an entry, 5 a key, at
most _ccheck.MAX_SLOTS entries: then the rest goes to the check's spool and index) instead of the
spool and index; the check's Python path looks there first. Past the window the loop (`sink`, given to
the reader) takes the common transactions straight from the reader's window, and leaves everything else
to the Python path: the TABLE_MAPs it has not met (`learn` tells it those it may take again), the tables
with an undone key the KeySet lacks (`slow`), statements, damaged events. When the time bounds are the
only filters, it also takes, while they run, the whole transactions they exclude (ConflictCheck.watch
`kept_seconds`). The report, the undo and the
exit code are the same (tests/output/rollback/test_conflicts_compiled.py, tests/test_compiled_core.py).
"""
from __future__ import annotations

import pickle
from typing import Callable

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.event_types import DELETE, INSERT, UPDATE
from binlog_spec.output.rollback.conflict import Tx

TABLE_MAP = int(spec.EventType.table_map_event)
#: A change as the KeySet numbers it.
CHANGES = {INSERT: 0, UPDATE: 1, DELETE: 2}
CHANGE_NAMES = ("INSERT", "UPDATE", "DELETE")


class CompiledKeys:
    """The compiled part of a ConflictCheck: `fast` (the KeySet, or None), its slots ((schema, table) and
    key column -> slot), the tables with an undone key it lacks (`slow`), and the loop (`sink`)."""

    def __init__(self, module) -> None:
        """`module`: output/rollback/_ccheck.pyx, or None (no compiled core: the Python path alone)."""
        self.module = module
        self.fast = module.KeySet() if module is not None else None
        self.slots: dict[tuple, int] = {}
        self.slot_keys: list[tuple] = []
        self.slow: set[tuple[str, str]] = set()
        self.loop = None

    def sink(self, check):
        """The compiled loop of `check` past the window, for the reader (`read_events(..., sink=)`), or
        None (no compiled core). It takes nothing before `watch` reads past the window."""
        if self.module is None:
            return None
        if self.loop is None:
            self.loop = self.module.Sink(check, self.fast)
        return self.loop

    def learn(self, ev: Event, decoder, touched: dict, key_columns: Callable) -> None:
        """A TABLE_MAP read past the window, told to the compiled loop: its table, and the slot of its
        key (-1: a table the rollback writes no rows of), when the loop can check its rows. `decoder`,
        `touched` and `key_columns` are the check's."""
        if ev.error is not None:
            return
        table = decoder.tables.get(ev.fields.get("table_id"))
        if table is None:
            return
        schema = decoder.schema_source
        generation = getattr(schema, "generation", None)
        if schema is not None and generation is None:
            return
        where = (table.schema, table.table)
        if where not in touched:
            slot = -1
        else:
            if where in self.slow:
                return
            slot = self.slots.get((where, key_columns(table)[0]))
            if slot is None:
                return
        maps, mapped = self.loop.maps, self.loop.mapped
        if len(maps) > 4096:
            maps.clear()
            mapped.clear()
        pair = mapped[table.table_id] = (table, slot)
        maps[ev.body_bytes()] = (table, generation, getattr(schema, "server_collation", None), pair)

    def _slot(self, where: tuple[str, str], cols: tuple[str, ...]) -> int | None:
        slot = self.slots.get((where, cols))
        if slot is None and len(self.slot_keys) < 256:
            slot = self.slots[(where, cols)] = len(self.slot_keys)
            self.slot_keys.append((where, cols))
        return slot

    def undone(self, ev: Event, op: str, table, where: tuple[str, str], cols: tuple[str, ...] | None, quick,
               number: Callable[[], int], touched: dict) -> bool:
        """The undone keys of a table keyed by one integer column (`cols`), read from the images (the
        check's KeyReader `quick`) into the KeySet (no spooled record, no index entry), under the
        transaction number `number()`; False: the event goes the Python way (the table is then `slow`:
        the compiled loop leaves its later rows to the Python way)."""
        if cols is None or len(cols) != 1:
            return False
        got = quick.values(ev, op, table, cols)
        if got is None:
            return False
        slot = self._slot(where, cols)
        if slot is None:
            return False
        no = number()
        change = CHANGES[op]
        if not self.fast.add(slot, got, op == UPDATE, no, change):
            return False                # full: the keys it took stay, the event's go the Python way too
        if got and where not in touched:
            touched[where] = (no, change)
        return True

    @staticmethod
    def conflict(first: tuple[int, int], slot: int, value: int, ev: Event, op: str, tx: Tx | None) -> bytes:
        """A conflict on a key of the KeySet, as the compiled loop spools it (`ConflictCheck.conflicts`
        reads it)."""
        later = (None, ev.file, ev.pos, ev.timestamp) if tx is None else (tx.gtid, tx.file, tx.pos, tx.timestamp)
        return pickle.dumps(("F", first[0], first[1], slot, value, op, *later, ev.file, ev.pos),
                            pickle.HIGHEST_PROTOCOL)


__all__ = ["CHANGES", "CHANGE_NAMES", "CompiledKeys", "TABLE_MAP"]
