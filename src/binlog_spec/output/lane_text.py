"""What a compiled lane wrote, put in file order among the lines of the ordinary path.

A lane (a reader sink: output/_crow_text.pyx's RowLane, output/_cevent_json.pyx's Lane) writes the text of the
events it takes into its `taken` list while the reader walks the window; the events it leaves are read the
ordinary way, and their lines come after whatever the lane wrote before them in the file. `with_lane` yields
that text before each line, and before a fault of the input, so nothing the lane wrote is lost.
"""
from __future__ import annotations

from typing import Any, Iterable, Iterator


def with_lane(lane: Any, lines: Iterable[Any]) -> Iterator[Any]:
    """The lines, each after the text the lane wrote before it; what it wrote before a fault, then the fault."""
    taken = lane.taken
    lines = iter(lines)
    while True:
        try:
            line = next(lines)
        except StopIteration:
            break
        except Exception:
            yield from taken
            taken.clear()
            raise
        if taken:
            yield from taken
            taken.clear()
        yield line
    yield from taken
    taken.clear()


__all__ = ["with_lane"]
