"""The events a reader sink hands back (binlog.reader.Sink): a sink that takes events straight from the
window may owe its consumer what those events told (output/_crow_text.pyx's RowLane: the open transaction's
GTID event, the TABLE_MAP_EVENTs it took); it lists them in its `replay`, and `with_replay` yields them as
Events, made from their bytes, before the reader's next event."""
from __future__ import annotations

from typing import Any, Iterable, Iterator

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.fields import bodies


def with_replay(events: Iterable[Event], sink: Any) -> Iterator[Event]:
    """The events, each after the events a sink that hands some back (its `replay`, a list of (file,
    position, event bytes, FDE): what the reader's consumer must know of the events the sink took, e.g.
    output/_crow_text.pyx's RowLane) handed back before it; those of the end of the file, or before a
    fault, at the end."""
    events = iter(events)
    while True:
        try:
            ev = next(events)
        except StopIteration:
            break
        except Exception:
            yield from _replayed(sink)
            raise
        if sink.replay:
            yield from _replayed(sink)
        yield ev
    yield from _replayed(sink)


def _replayed(sink: Any) -> Iterator[Event]:
    handed, sink.replay = sink.replay, []
    for file, pos, raw, fde in handed:
        checksum = int.from_bytes(raw[-4:], "little") if fde.len_checksum == 4 else None
        ev = Event(file, pos, spec.parse_header(raw[:spec.LEN_EVENT_HEADER]), raw, bodies.parse_event(raw, fde),
                   checksum=checksum)
        ev.replayed = True
        yield ev
