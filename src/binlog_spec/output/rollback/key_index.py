"""The index of a rollback conflict check's undone keys (output.rollback.check.ConflictCheck): memory holds a
64-bit entry per key (HASH_BITS of its hash, REC_BITS of its record number in the check's spool of keys)
in sorted runs merged as they grow, a dict of the latest, and a bitmap of their hashes that answers most
lookups of keys never undone. A hash that matches is confirmed by the check against the spooled key."""
from __future__ import annotations

import heapq
from array import array
from bisect import bisect_left

#: Bits of an index entry: the key hash's low HASH_BITS, then the key's record number.
HASH_BITS, REC_BITS = 34, 30
_HASH_MASK = (1 << HASH_BITS) - 1
_REC_MASK = (1 << REC_BITS) - 1
#: Keys held in the dict of the latest before they become a sorted run.
RECENT = 1 << 16
#: Bits of the bitmap of undone key hashes (one byte per 8).
BITMAP_BITS = 1 << 25
#: Undone keys the index can number.
MAX_RECORDS = _REC_MASK + 1


class KeyIndex:
    """Entries (hash bits, record number) of the undone keys: a dict of the latest, sorted runs of
    the others (merged two by two as they grow), and a bitmap of their hashes."""

    def __init__(self) -> None:
        self.recent: dict[int, int | list[int]] = {}
        self.runs: list[array] = []
        self.bitmap = bytearray(BITMAP_BITS >> 3)

    def add(self, h: int, rec: int) -> None:
        p = h & _HASH_MASK
        b = (h >> HASH_BITS) & (BITMAP_BITS - 1)
        self.bitmap[b >> 3] |= 1 << (b & 7)
        old = self.recent.get(p)
        if old is None:
            self.recent[p] = rec
        elif type(old) is int:
            self.recent[p] = [old, rec]
        else:
            old.append(rec)
        if len(self.recent) >= RECENT:
            self._flush()

    def _flush(self) -> None:
        entries = []
        for p, recs in self.recent.items():
            if type(recs) is int:
                entries.append((p << REC_BITS) | recs)
            else:
                entries += [(p << REC_BITS) | r for r in recs]
        entries.sort()
        self.recent.clear()
        runs = self.runs
        runs.append(array("Q", entries))
        while len(runs) >= 2 and len(runs[-2]) <= 2 * len(runs[-1]):
            b, a = runs.pop(), runs.pop()
            runs.append(array("Q", heapq.merge(a, b)))

    def candidates(self, h: int) -> list[int]:
        """The record numbers of the keys whose hash bits are h's (none when the bitmap says so)."""
        b = (h >> HASH_BITS) & (BITMAP_BITS - 1)
        if not self.bitmap[b >> 3] & (1 << (b & 7)):
            return []
        p = h & _HASH_MASK
        found: list[int] = []
        recs = self.recent.get(p)
        if recs is not None:
            found += [recs] if type(recs) is int else recs
        low = p << REC_BITS
        for run in self.runs:
            i = bisect_left(run, low)
            while i < len(run) and run[i] >> REC_BITS == p:
                found.append(run[i] & _REC_MASK)
                i += 1
        return found
