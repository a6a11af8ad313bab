"""The planning of reads by byte ranges: `plan_splits` cuts a file larger than the split size at the
transaction boundaries its header pass found (stream.planning.scan): every split holds whole transactions.
`iter_split_events` reads one split (stream.planning.pieces), a resync range resolved first
(stream.planning.resync); `with_schema_states` gives each split the schema state at its start.
"""
from __future__ import annotations

import dataclasses
import pickle
from typing import Any, Callable, Iterator

from binlog_spec.binlog import spec
from binlog_spec.binlog.event import Event
from binlog_spec.binlog.replay import with_replay
from binlog_spec.options import DEFAULT_OPTIONS, ReadOptions
from binlog_spec.stream.planning.pieces import FileRef, Split, read_piece, starts_like_binlog
from binlog_spec.stream.planning.resync import iter_resync_events
from binlog_spec.stream.planning.scan import ScanResult


def plan_splits(file_index: int, ref: FileRef, scan: ScanResult | None, split_size: int) -> list[Split]:
    """Cut a file at transaction boundaries into pieces of at least `split_size` bytes."""
    if scan is None or scan.size is None or ref.size <= split_size or split_size <= 0:
        return [Split(file_index, ref, 0, None)]
    fault = scan.fault[0] if scan.fault else None
    cuts: list[int] = []
    last = 0
    for b in scan.boundaries:
        if fault is not None and b >= fault:
            break
        if b - last >= split_size and b < ref.size:
            cuts.append(b)
            last = b
    if not cuts:
        return [Split(file_index, ref, 0, None)]
    out = [Split(file_index, ref, 0, cuts[0])]
    fdes = scan.fdes
    for i, start in enumerate(cuts):
        end = cuts[i + 1] if i + 1 < len(cuts) else None
        fde_pos, fde_size = next((p, s) for p, s in reversed(fdes) if p < start)
        out.append(Split(file_index, ref, start, end, fde_pos, fde_size))
    return out


def iter_split_events(split: Split, options: ReadOptions = DEFAULT_OPTIONS, sink=None) -> Iterator[Event]:
    """The events of a split with the file's positions (`sink`: see BinlogReader and `pieces.read_piece`).

    A resync split is resolved first (`resync.iter_resync_events`). A piece after the first starts with the
    FDE put in front of it, at that FDE's real position (below `split.start`): decoders need it (checksums,
    MariaDB numbering); outputs of events leave out every event with ``pos < split.start`` (see
    `pieces.is_prefix`).
    """
    if split.if_binlog:
        if not starts_like_binlog(split.ref):
            return
        split = dataclasses.replace(split, if_binlog=False)
    if split.resync:
        yield from iter_resync_events(split, options, sink)
        return
    yield from read_piece(split, options, sink)


def snapshot(tracker) -> bytes:
    """A SchemaTracker's state (tables, charsets, default database, ...), pickled: cheap to ship and
    to copy."""
    return pickle.dumps(vars(tracker), protocol=pickle.HIGHEST_PROTOCOL)


def restore(state: bytes | None, tracker_cls):
    """A new tracker in the state `snapshot` saved (a fresh one for None)."""
    tracker = tracker_cls()
    if state is not None:
        vars(tracker).update(pickle.loads(state))
    return tracker


def with_schema_states(splits: list[Split], statements_of: Callable[[int], list[tuple]],
                       tracker_of: Callable[[int], Any], carries: Callable[[int], bool] = lambda i: True,
                       quiet: bool = False, start_of: Callable[[Split], int] | None = None) -> list[Split]:
    """Each split with the schema state at its start (`Split.schema_state`, a `snapshot`).

    The DDL statements of each file (`statements_of(file_index)`: (position, db, query), e.g.
    `ddl_statements` of its header pass) are replayed in order into the file's tracker
    (`tracker_of(file_index)`: one for a run, or one per binlog sequence) up to each split's start
    (a fourth item, the server's collation, is given to `observe_query` too: `statements_with_collation`);
    the statements after a file's last split start are replayed too when the next file continues
    the history (`carries(file_index)`). `quiet`: the trackers' notes (what a replay says: a table
    forgotten) are not kept in the snapshots, their reader heard them from the split before.
    `start_of(split)`: where the split's events start, when not `split.start` (a resync split's
    range start resolved to its transaction boundary: `resync.resolved_starts`)."""
    out: list[Split] = []
    by_file: dict[int, list[Split]] = {}
    for s in splits:
        by_file.setdefault(s.file_index, []).append(s)
    for i in sorted(by_file):
        tracker = tracker_of(i)
        statements = statements_of(i)
        k = 0
        for s in by_file[i]:
            start = s.start if start_of is None else start_of(s)
            while k < len(statements) and statements[k][0] < start:
                tracker.observe_query(*statements[k][1:])
                k += 1
            if quiet:
                tracker.notes.clear()
            out.append(dataclasses.replace(s, schema_state=snapshot(tracker)))
        if carries(i):
            for statement in statements[k:]:
                tracker.observe_query(*statement[1:])
    return out


def piece_events(split: Split, options: ReadOptions = DEFAULT_OPTIONS, sink=None) -> Iterator[Event]:
    """`iter_split_events` with the malformed bodies' errors (`Event.error`) at the file's offsets too.
    `sink`: a reader sink (a compiled lane) placed at the piece's range (`read_piece`), the events it hands
    back (its `replay`) yielded among the others as `read_events` yields them (binlog.replay.with_replay)."""
    prefix = 0 if split.start == 0 else spec.LEN_MAGIC + split.fde_size
    shift = split.start - prefix
    events = iter_split_events(split, options, sink)
    if getattr(sink, "replay", None) is not None:
        events = with_replay(events, sink)
    for ev in events:
        error = ev.error
        if prefix and error is not None and error.offset is not None and error.offset >= prefix:
            error.offset += shift
        yield ev
