"""The pieces of a run over local files that processes read side by side (the CLI's --jobs): which inputs
can be cut (`local_files`), the cuts and what each piece starts with (`plan_pieces`: the header pass of
scan, the cuts of splits, the schema state of the DDL before each cut), and the schema a piece's reader
starts from (`piece_schema`). How many processes run, how big a piece is and how their outputs are joined
is the command line's (cli/jobs.py)."""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from binlog_spec.binlog import spec
from binlog_spec.binlog.reader import GZIP_MAGIC, STDIN, display_name, read_events
from binlog_spec.binlog.writer import H, events_have_checksum, fde_has_checksum
from binlog_spec.options import ReadOptions
from binlog_spec.stream.planning.pieces import QUERY_CODES, LocalFile, Split
from binlog_spec.stream.planning.scan import ScanResult, scan_file, statements_with_collation
from binlog_spec.stream.planning.splits import plan_splits, restore, with_schema_states


def local_files(paths: Sequence) -> list[LocalFile] | None:
    """The run's files as LocalFiles named as their events name them, or None when one cannot be cut:
    standard input, not a regular file, a gzip file (no positions to cut at), a file that cannot be
    opened (the run reports it, in order)."""
    refs = []
    for path in paths:
        p = os.fspath(path)
        if p == STDIN or not os.path.isfile(p):
            return None
        try:
            with open(p, "rb") as fh:
                if fh.read(2) == GZIP_MAGIC:
                    return None
        except OSError:
            return None
        refs.append(LocalFile.of(p, display_name(p)))
    return refs


@dataclass(frozen=True)
class Plan:
    """The pieces of a run, in order, and what their readers need besides."""

    pieces: list[Split]
    #: The pieces that hold their file's first QUERY_EVENT (they take its server collation as one
    #: process does: piece_schema's `first_query`).
    first_query_pieces: frozenset[int] = frozenset()
    #: The first file's flavour, when the plan checked that every file has one format (`one_format`).
    mariadb: bool | None = None


def plan_pieces(refs: list[LocalFile], piece_size: int, *, ddl: bool, one_format: bool, read: ReadOptions,
                tracker: Callable[[], Any]) -> Plan | None:
    """The files cut at transaction boundaries into pieces of at least `piece_size` bytes, or None when
    the run cannot be cut exactly (fewer than two pieces; `one_format`: files of more than one FDE or
    format; `ddl`: a file whose statements before its cuts are not known). The header pass checks only
    the framing: the pieces check the CRC32s as they read (a fault ends the run where it ends one
    process). `ddl`: each piece gets the schema state at its start, replayed into `tracker()` (the run's
    starting schema, asked for once), the first piece none (the run's own tracker, its notes)."""
    scans, pieces = [], []
    for i, ref in enumerate(refs):
        scan = scan_file(ref, ddl=ddl, verify_checksums=False)
        scans.append(scan)
        pieces += plan_splits(i, ref, scan, piece_size)
    if len(pieces) < 2:
        return None
    mariadb = None
    if one_format:
        mariadb = _one_format(refs, scans)
        if mariadb is None:
            return None
    if not ddl:
        return Plan(pieces, mariadb=mariadb)
    statements, first_query = [], set()
    for i, scan in enumerate(scans):
        found = _statements(refs[i], scan, read)
        if found is None:
            return None
        statements.append(found[0])
        if found[1] is not None:    # the piece whose first QUERY_EVENT is the file's first
            first_query |= {k for k, p in enumerate(pieces) if p.file_index == i and p.start <= found[1]
                            and (p.end is None or found[1] < p.end)}
    start = tracker()
    pieces = with_schema_states(pieces, statements.__getitem__, lambda i: start, quiet=True)
    pieces[0] = dataclasses.replace(pieces[0], schema_state=None)
    return Plan(pieces, frozenset(first_query), mariadb)


def _one_format(refs: list[LocalFile], scans: list[ScanResult]) -> bool | None:
    """Whether the first file is MariaDB's, when every file has one FDE, all of one format (what the base64
    script's framing and flavour follow: one process prints a later file's FDE of another format); else None."""
    formats = set()
    first = None
    for ref, scan in zip(refs, scans):
        if len(scan.fdes) != 1 or scan.fault is not None and scan.fault[0] <= scan.fdes[0][0]:
            return None
        pos, size = scan.fdes[0]
        with ref.open() as f:
            f.seek(pos)
            data = f.read(size)
        try:
            fde = spec.parse_fde(data[H:])
        except Exception:  # noqa: BLE001 - one process reports it
            return None
        mariadb = "mariadb" in fde.server_version.lower()
        formats.add((tuple(fde.post_header_lens), fde.binlog_version, fde_has_checksum(fde),
                     events_have_checksum(fde), mariadb))
        if first is None:
            first = mariadb
    return first if len(formats) == 1 else None


def _statements(ref: LocalFile, scan: ScanResult, read: ReadOptions) -> tuple[list[tuple], int | None] | None:
    """What the rows stage replays into the schema before each cut of a file: its DDL, and the server's
    collation of its first QUERY_EVENT (rows.decoder.observe_schema), with that event's position;
    None when that is not known (more than one FDE, a fault before it): one process reads it."""
    statements = statements_with_collation(scan)
    if len(scan.fdes) != 1:       # (a file not cut too: the collation it leaves goes on to the next file)
        return None
    from binlog_spec.rows.decoder import server_collation
    events = read_events([ref.path], read)
    try:
        for ev in events:
            if ev.error is None and ev.type_code in QUERY_CODES:
                if all(pos != ev.pos for pos, *_ in statements):
                    statements.append((ev.pos, ev.fields.get("db", ""), ev.fields["query"], server_collation(ev)))
                    statements.sort(key=lambda st: st[0])
                return statements, ev.pos
    except Exception:  # noqa: BLE001 - a broken file: one process reports it
        return None
    finally:
        events.close()
    return statements, None


def piece_schema(piece: Split, first_query: bool):
    """The SchemaTracker a piece's reader starts with: the state at its start (`Split.schema_state`).
    The FDE put in front of a piece (start > 0) makes the rows stage take the server's collation of the
    piece's first QUERY_EVENT, which one process takes only after a file's own FDE (or from DDL): from a
    statement that is no DDL, it is left as the state has it, unless the piece holds its file's first
    QUERY_EVENT (`first_query`: Plan.first_query_pieces)."""
    from binlog_spec.rows.ddl.schema import SchemaTracker     # (sqlglot, imported only when a schema is tracked)
    tracker = restore(piece.schema_state, SchemaTracker)
    if first_query or piece.start == 0:
        return tracker
    from binlog_spec.rows.statement_text import NOT_DDL
    observe = tracker.observe_query
    first = [True]

    def observe_query(db: str, query: str, server_collation: int | None = None) -> None:
        if first[0]:
            first[0] = False
            if query.lstrip()[:9].upper().encode("utf-8", "surrogateescape").startswith(NOT_DDL):
                server_collation = None
        observe(db, query, server_collation)
    tracker.observe_query = observe_query
    return tracker
