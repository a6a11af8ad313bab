"""What a rollback's conflict check reports (output.rollback.check.ConflictCheck): where a transaction is
(`Tx`), and a later change the undo would destroy (`Conflict`). Its own home: the check, its compiled
part (compiled_keys) and the report all name them."""
from __future__ import annotations

from typing import NamedTuple


class Tx(NamedTuple):
    """Where a transaction is: its GTID (None: none), its first event's file, position and time."""

    gtid: str | None
    file: str
    pos: int
    timestamp: int


class Conflict(NamedTuple):
    """A later change the undo would destroy. `kind`: "row" (a row change), "TRUNCATE", "DDL",
    "statement" (statement-based DML) or "unreadable" (a later rows event of the table that cannot be
    decoded). `key`: the row's key columns and values as SQL text (None for the other kinds); `whole`:
    the table has no key known, the row is named by its whole image."""

    kind: str
    schema: str
    table: str
    key: tuple[tuple[str, ...], tuple[str, ...]] | None
    whole: bool
    undone: Tx
    undone_op: str
    later: Tx
    later_op: str
    later_at: tuple[str, int]
    statement: str | None = None


__all__ = ["Conflict", "Tx"]
