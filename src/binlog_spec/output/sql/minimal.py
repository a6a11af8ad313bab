"""--minimal-update (SqlOptions.minimal_update): which columns of a row an UPDATE changed, the one judgement
the statements (output.sql.statements: an UPDATE sets only those, found by its key) and a rollback's conflict
check per column (output.rollback.columns) share.

A column changed when its after-image value is not the before image's as stored: the same Python type and
equal (a float also by its sign: -0.0 is not 0.0; a NaN always differs; text compared as logged, so 'a' ->
'A' is a change under a case-insensitive collation too). A column the before image lacks (binlog_row_image
MINIMAL logs only the key there) is not known: it counts as changed, and is set. A column the after image
lacks was not written (MINIMAL and NOBLOB log only the columns the statement set): it did not change. A JSON
column logged as a partial update (its diffs) changed.
"""
from __future__ import annotations

from typing import Any


def same(a: Any, b: Any) -> bool:
    """Whether two values of one column are the same as stored."""
    if type(a) is not type(b):
        return False
    if type(a) is float:
        return a == b and repr(a) == repr(b)
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


def changed_columns(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The names of `after`'s columns (in its order) whose value is not `before`'s (or not in it)."""
    missing = _MISSING
    return [n for n, v in after.items() if not same(before.get(n, missing), v)]


class _Missing:
    """A value no column holds (a column an image lacks)."""


_MISSING = _Missing()


__all__ = ["changed_columns", "same"]
